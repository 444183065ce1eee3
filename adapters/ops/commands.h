/* ops/commands.h -- the ops that are a plain Redis command, not a script:
 * XX(ID, name, command) as in FLEET__OP_MAP (adapters/backend.h), with
 * KEYS, ARGV and reply. The script ops are listed by the build from the
 * scripts of adapters/scripts/lua (cmake/embed_lua.cmake), and each
 * script's header states its contract. A command op takes its keys as its
 * Redis command does, KEYS then ARGV following the command's name.
 *
 *   PING  KEYS: none. ARGV: none. Reply: status "PONG".
 *   PUBLISH  KEYS: none. ARGV: channel, payload. Reply: integer, the number
 *         of clients with a subscriber of the channel (each client counts
 *         once, however many subscribers it has there).
 *   STORE_SCAN  The command SCAN. KEYS: none. ARGV: cursor, "MATCH",
 *         pattern, "COUNT", count (the pattern is the exception that
 *         backend.h allows). Reply: {cursor, {key_1, ...}}, the cursor a
 *         string ("0" when the scan is complete).
 *   STORE_UNLINK  The command UNLINK. KEYS: the keys (at least one). ARGV:
 *         none. Reply: the number of keys deleted. */
#ifndef FLEET_OPS_COMMANDS_H
#define FLEET_OPS_COMMANDS_H

#define FLEET__OPS_COMMANDS(XX)                                                \
  XX(PING, "ping", "PING")                                                     \
  XX(PUBLISH, "publish", "PUBLISH")                                            \
  XX(STORE_SCAN, "store_scan", "SCAN")                                         \
  XX(STORE_UNLINK, "store_unlink", "UNLINK")

#endif /* FLEET_OPS_COMMANDS_H */
