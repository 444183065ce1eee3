-- store_del.lua -- deletes a store record, its events and its index entries.
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>",
--          ":ev:<id>", ":idx:<index>:<value>".
-- ARGV: id.
-- Returns: 1, or 0 when there was no record.
--#include store_record
local old = redis.call('HGETALL', rec)
if #old == 0 then
  return 0
end
local idx = record_indexes(old)
if not idx then
  return redis.error_reply(wrongtype)
end
for i = 1, #idx do
  redis.call('ZREM', idx[i], id)
end
redis.call('DEL', rec, ev)
return 1
