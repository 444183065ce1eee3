/* ops/store.h -- the backend ops of the store primitive, XX(ID, name, command)
 * as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV and reply.
 *
 * Keys of one collection share the hash tag "{<prefix>:<collection>}"; call
 * "{<prefix>:<collection>}:" the collection's base. A record is the hash
 * <base>rec:<id> with the fields "v" (the value), "t" (its TTL in ms, in
 * decimal) and one field "i:<index>:<value>" (empty) per index entry; its
 * events are the list <base>ev:<id>; an index entry is the member <id> of
 * the sorted set <base>idx:<index>:<value>, scored by the record's expiry
 * time (ms since the Unix epoch). The record, its events and its index
 * entries always carry the same expiry, computed from the server clock;
 * an index set expires no earlier than its latest entry. The scripts
 * derive the index keys of an existing record from its "i:" fields and
 * the base (same hash tag, so same slot). Before its first write, a
 * script reads or checks the type of every key whose content it reads or
 * changes, so that such a key holding another type fails the op
 * (FLEET_EWRONGTYPE) with nothing changed; a key whose expiry alone it
 * moves (an events list on put and touch) is not looked into. A record
 * without a value (get), or without a valid TTL where its own TTL is
 * needed (touch with ttl_ms 0, append), gives FLEET_EPROTO.
 *
 *   STORE_PUT  KEYS: rec, ev, idx_1 .. idx_n (the new version's index
 *         keys, each <base>idx:<index>:<value>). ARGV: base, id, ttl_ms,
 *         value. Writes the fields v, t and i:<index>:<value> for each idx
 *         key, removes the old version's "i:" fields that the new one lacks
 *         and <id> from their index sets, deletes the events list of a new
 *         record, sets every expiry to now + ttl_ms and adds <id> to each
 *         idx key with that score, after removing entries that expired
 *         there. Reply: 1 when the record was created, 0 when replaced.
 *   STORE_GET  KEYS: rec. ARGV: none. Reply: nil when there is no record,
 *         else {value, pttl}.
 *   STORE_DEL  KEYS: rec, ev. ARGV: base, id. Removes the record, its
 *         events and its index entries. Reply: 1, or 0 when there was no
 *         record.
 *   STORE_EXISTS  KEYS: rec. ARGV: none. Reply: 1 or 0.
 *   STORE_TOUCH  KEYS: rec, ev. ARGV: base, id, ttl_ms (0: the record's
 *         own). Sets the record's expiry, its events' and its index
 *         entries' to now + TTL, and stores a non-zero ttl_ms as the
 *         record's TTL. Reply: 1, or 0 when there is no record.
 *   STORE_APPEND  KEYS: rec, ev. ARGV: base, id, cap (0: none), event_1 ..
 *         event_n. Appends the events, keeps the newest `cap`, and
 *         refreshes the expiries as STORE_TOUCH with ttl_ms 0. Reply: the
 *         new length; error FLEET_ENOTFOUND when there is no record.
 *   STORE_READ  KEYS: rec, ev. ARGV: offset, limit. Reply: the events from
 *         index `offset`, at most `limit`; error FLEET_ENOTFOUND when there
 *         is no record.
 *   STORE_COUNT  KEYS: rec, ev. ARGV: none. Reply: the length of the events
 *         list; error FLEET_ENOTFOUND when there is no record.
 *   STORE_LIST  KEYS: idx. ARGV: base, limit, cursor score ("" for the first
 *         page), cursor id. Removes the entries that expired (score < now),
 *         then skips every entry that sorts (by score, then member bytes)
 *         at or before (cursor score, cursor id), takes the next `limit`
 *         entries, and removes those whose record has no value (the record
 *         is gone). Reply: {next score, next id, {id_1, value_1, ...}}: the
 *         score and id of the last entry taken when more entries follow,
 *         else -1 and "".
 *   STORE_SCAN  The command SCAN. KEYS: none. ARGV: cursor, "MATCH",
 *         pattern, "COUNT", count. Reply: {cursor, {key_1, ...}}, the
 *         cursor a string ("0" when the scan is complete).
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
