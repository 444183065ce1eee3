-- store_get.lua -- reads a store record (adapters/ops/store.h).
-- KEYS: rec.
-- ARGV: none.
-- Returns: nil when there is no record, else {value, pttl}.
local v = redis.call('HGET', KEYS[1], 'v')
if not v then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    return redis.error_reply('FLEET_EPROTO a store record has no value')
  end
  return false
end
return {v, redis.call('PTTL', KEYS[1])}
