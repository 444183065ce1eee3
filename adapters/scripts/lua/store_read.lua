-- store_read.lua -- reads a page of a store record's events.
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>",
--          ":ev:<id>".
-- ARGV: id, offset, limit.
-- Returns: the events from index `offset`, at most `limit`, oldest first;
--   error FLEET_ENOTFOUND when there is no record.
local t = redis.call('TYPE', KEYS[1] .. ':rec:' .. ARGV[1])['ok']
if t == 'none' then
  return redis.error_reply('FLEET_ENOTFOUND no such store record')
end
if t ~= 'hash' then
  return redis.error_reply('FLEET_EWRONGTYPE a store key holds another type')
end
local offset = tonumber(ARGV[2])
return redis.call('LRANGE', KEYS[1] .. ':ev:' .. ARGV[1], offset,
                  offset + tonumber(ARGV[3]) - 1)
