-- store_get.lua -- reads a store record.
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>".
-- ARGV: id.
-- Returns: nil when there is no record, else {value, pttl}; FLEET_EPROTO
--   for a record without a value.
local rec = KEYS[1] .. ':rec:' .. ARGV[1]
local v = redis.call('HGET', rec, 'v')
if not v then
  if redis.call('EXISTS', rec) == 1 then
    return redis.error_reply('FLEET_EPROTO a store record has no value')
  end
  return false
end
return {v, redis.call('PTTL', rec)}
