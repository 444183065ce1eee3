-- store_del.lua -- deletes a store record, its events and its index entries.
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>",
--          ":ev:<id>", ":idx:<index>:<value>".
-- ARGV: id.
-- Returns: 1, or 0 when there was no record.
local id = ARGV[1]
local rec, ev = KEYS[1] .. ':rec:' .. id, KEYS[1] .. ':ev:' .. id
local ipre = KEYS[1] .. ':idx:'
local wrongtype = 'FLEET_EWRONGTYPE a store key holds another type'
--#include store_record
local old = redis.call('HGETALL', rec)
if #old == 0 then
  return 0
end
local idx = record_indexes(old, ipre)
if not idx then
  return redis.error_reply(wrongtype)
end
for i = 1, #idx do
  redis.call('ZREM', idx[i], id)
end
redis.call('DEL', rec, ev)
return 1
