-- store_count.lua -- the number of events of a store record.
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>",
--          ":ev:<id>".
-- ARGV: id.
-- Returns: the length of the events list; error FLEET_ENOTFOUND when
--   there is no record.
local t = redis.call('TYPE', KEYS[1] .. ':rec:' .. ARGV[1])['ok']
if t == 'none' then
  return redis.error_reply('FLEET_ENOTFOUND no such store record')
end
if t ~= 'hash' then
  return redis.error_reply('FLEET_EWRONGTYPE a store key holds another type')
end
return redis.call('LLEN', KEYS[1] .. ':ev:' .. ARGV[1])
