-- store_exists.lua -- whether a store record exists.
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>".
-- ARGV: id.
-- Returns: 1 or 0.
local t = redis.call('TYPE', KEYS[1] .. ':rec:' .. ARGV[1])['ok']
if t == 'none' then
  return 0
end
if t ~= 'hash' then
  return redis.error_reply('FLEET_EWRONGTYPE a store key holds another type')
end
return 1
