-- queue_events.lua -- the lease of the queue's event subscribers: while
-- it runs (the field `events` of T:limits, a time in ms), the scripts
-- publish the queue's events on T:events (lib/queue_life.lua); a
-- subscriber renews it on a timer. A lease is only ever extended.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: limits.
-- ARGV[1]: lease_ms.
-- Returns: the lease's end (ms, server clock).
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
local limits = tag .. ':limits'
local u = now + tonumber(ARGV[1])
local cur = tonumber(call('HGET', limits, 'events') or 0) or 0
if cur < u then
  call('HSET', limits, 'events', string.format('%d', u))
  return u
end
return cur
