-- pool_tick.lua -- claims the next tick of a pool's ticker, if it is due
-- by the server clock: of all the nodes that try, exactly one gets each
-- tick (adapters/ops/pool.h).
--#include pool_int
-- KEYS[1]: the pool's hash tag. Parts: tk:<name>, a hash with "period"
--          (ms), "next" (server ms of the next tick), "seq" (the last tick
--          given), or "stopped" once the ticker was stopped.
-- ARGV[1]: ticker name. ARGV[2]: period in ms, used when the ticker does
--          not exist yet (else the stored one rules).
-- Returns: {1, seq, scheduled ms, missed, ms to the next tick} when this
-- caller gets a tick; {0, 0, 0, 0, ms to the next tick} when none is due;
-- {-1, 0, 0, 0, 0} when the ticker was stopped.
local tk = T .. ':tk:' .. ARGV[1]
local now = now_ms()
local v = redis.call('HMGET', tk, 'period', 'next', 'seq', 'stopped')
if v[4] then
  return {-1, 0, 0, 0, 0}
end
local period, nxt, seq = tonumber(v[1]), tonumber(v[2]), tonumber(v[3])
if not period or not nxt or not seq then
  if v[1] or v[2] or v[3] then
    error({err = 'FLEET_EPROTO pool ticker record is malformed'})
  end
  period, nxt, seq = tonumber(ARGV[2]), now, 0
  redis.call('HSET', tk, 'period', period)
end
if now < nxt then
  return {0, 0, 0, 0, nxt - now}
end
-- Ticks nobody claimed in time are coalesced into this one and counted.
local missed = math.floor((now - nxt) / period)
local at = nxt + missed * period
seq = seq + 1
redis.call('HSET', tk, 'next', string.format('%d', at + period), 'seq',
           string.format('%d', seq))
return {1, seq, at, missed, at + period - now}
