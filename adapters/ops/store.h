/* ops/store.h -- the backend ops of the store primitive, XX(ID, name, command)
 * as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV and reply.
 *
 * Each script op gets the collection's hash tag "{<prefix>:<collection>}"
 * as its KEYS[1] and builds its keys from it and from the ids and index
 * entries in its ARGV, as backend.h says. A record is the hash
 * <tag>:rec:<id> with the fields "v" (the value), "t" (its TTL in ms, in
 * decimal) and one field "i:<index>:<value>" (empty) per index entry; its
 * events are the list <tag>:ev:<id>; an index entry is the member <id> of
 * the sorted set <tag>:idx:<index>:<value>, scored by the record's expiry
 * time (ms since the Unix epoch). The record, its events and its index
 * entries always carry the same expiry, computed from the server clock;
 * an index set expires no earlier than its latest entry. The scripts
 * derive the index keys of an existing record from its "i:" fields.
 * Before its first write, a script reads or checks the type of every key
 * whose content it reads or changes, so that such a key holding another
 * type fails the op (FLEET_EWRONGTYPE) with nothing changed; a key whose
 * expiry alone it moves (an events list on put and touch) is not looked
 * into. A record without a value (get), or without a valid TTL where its
 * own TTL is needed (touch with ttl_ms 0, append), gives FLEET_EPROTO.
 *
 *   STORE_PUT  KEYS: tag. ARGV: id, ttl_ms, value, then index_1, value_1
 *         .. index_n, value_n (the new version's index entries). Writes
 *         the fields v, t and i:<index>:<value> for each entry, removes
 *         the old version's "i:" fields that the new one lacks and <id>
 *         from their index sets, deletes the events list of a new record,
 *         sets every expiry to now + ttl_ms and adds <id> to each entry's
 *         index set with that score, after removing entries that expired
 *         there. Reply: 1 when the record was created, 0 when replaced.
 *   STORE_GET  KEYS: tag. ARGV: id. Reply: nil when there is no record,
 *         else {value, pttl}.
 *   STORE_DEL  KEYS: tag. ARGV: id. Removes the record, its events and
 *         its index entries. Reply: 1, or 0 when there was no record.
 *   STORE_EXISTS  KEYS: tag. ARGV: id. Reply: 1 or 0.
 *   STORE_TOUCH  KEYS: tag. ARGV: id, ttl_ms (0: the record's own). Sets
 *         the record's expiry, its events' and its index entries' to now +
 *         TTL, and stores a non-zero ttl_ms as the record's TTL. Reply: 1,
 *         or 0 when there is no record.
 *   STORE_APPEND  KEYS: tag. ARGV: id, cap (0: none), event_1 .. event_n.
 *         Appends the events, keeps the newest `cap`, and refreshes the
 *         expiries as STORE_TOUCH with ttl_ms 0. Reply: the new length;
 *         error FLEET_ENOTFOUND when there is no record.
 *   STORE_READ  KEYS: tag. ARGV: id, offset, limit. Reply: the events from
 *         index `offset`, at most `limit`; error FLEET_ENOTFOUND when there
 *         is no record.
 *   STORE_COUNT  KEYS: tag. ARGV: id. Reply: the length of the events
 *         list; error FLEET_ENOTFOUND when there is no record.
 *   STORE_LIST  KEYS: tag. ARGV: index, value, limit, cursor score (""
 *         for the first page), cursor id. In the index set of (index,
 *         value), removes the entries that expired (score < now), then
 *         skips every entry that sorts (by score, then member bytes) at or
 *         before (cursor score, cursor id), takes the next `limit`
 *         entries, and removes those whose record has no value (the record
 *         is gone). Reply: {next score, next id, {id_1, value_1, ...}}: the
 *         score and id of the last entry taken when more entries follow,
 *         else -1 and "".
 *   STORE_SCAN  The command SCAN. KEYS: none. ARGV: cursor, "MATCH",
 *         pattern, "COUNT", count (the pattern is the exception that
 *         backend.h allows). Reply: {cursor, {key_1, ...}}, the cursor a
 *         string ("0" when the scan is complete).
 *   STORE_UNLINK  The command UNLINK. KEYS: the keys (at least one). ARGV:
 *         none. Reply: the number of keys deleted.
 */
#ifndef FLEET_OPS_STORE_H
#define FLEET_OPS_STORE_H

#define FLEET__OPS_STORE(XX)                                                   \
  XX(STORE_PUT, "store_put", NULL)                                             \
  XX(STORE_GET, "store_get", NULL)                                             \
  XX(STORE_DEL, "store_del", NULL)                                             \
  XX(STORE_EXISTS, "store_exists", NULL)                                       \
  XX(STORE_TOUCH, "store_touch", NULL)                                         \
  XX(STORE_APPEND, "store_append", NULL)                                       \
  XX(STORE_READ, "store_read", NULL)                                           \
  XX(STORE_COUNT, "store_count", NULL)                                         \
  XX(STORE_LIST, "store_list", NULL)                                           \
  XX(STORE_SCAN, "store_scan", "SCAN")                                         \
  XX(STORE_UNLINK, "store_unlink", "UNLINK")

#endif /* FLEET_OPS_STORE_H */
