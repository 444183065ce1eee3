-- registry_list.lua -- the live entries of the process registry
-- (docs/registry.md), those whose expiry has not passed by the server
-- clock, soonest to expire first; removes up to 1000 entries whose expiry
-- passed.
-- KEYS[1]: the registry's hash tag "{prefix:}" (the tag of an empty
--   name, which no object has); parts: workers, workers:info
--   (registry_beat.lua).
-- ARGV[1]: the most entries to return (1..100000).
-- Returns: {now_ms, expiry_1, info_1, ...}: each live entry's expiry (unix
--   ms) and its info "<started ms>\0<ttl ms>\0<details>" (registry_beat.lua);
--   an entry without info is left out.
local call = redis.call
--#include time
local now = now_ms()
local set, info = KEYS[1] .. ':workers', KEYS[1] .. ':workers:info'
local gone = call('ZRANGEBYSCORE', set, '-inf', now - 1, 'LIMIT', 0, 1000)
if #gone > 0 then
  call('ZREM', set, unpack(gone))
  call('HDEL', info, unpack(gone))
end
local limit = tonumber(ARGV[1])
if not limit or limit < 1 or limit > 100000 then
  return redis.error_reply('FLEET_EINVAL bad registry limit')
end
local live = call('ZRANGEBYSCORE', set, now, '+inf', 'WITHSCORES', 'LIMIT',
                  0, limit)
local r = {now}
if #live == 0 then return r end
local names = {}
for i = 1, #live, 2 do names[#names + 1] = live[i] end
local got = call('HMGET', info, unpack(names))
for i = 1, #names do
  if got[i] then
    r[#r + 1] = tonumber(live[2 * i])
    r[#r + 1] = got[i]
  end
end
return r
