/* ops/store.h -- what the store's scripts share (the scripts
 * adapters/scripts/lua/store_*.lua: each one's header states its KEYS,
 * ARGV and reply; the plain-command ops STORE_SCAN and STORE_UNLINK are in
 * ops/commands.h).
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
 * own TTL is needed (touch with ttl_ms 0, append), gives FLEET_EPROTO. */
