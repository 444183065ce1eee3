-- pool_tick.lua -- claims the next tick of a pool's ticker, if it is due by
-- the server clock: of all the nodes that try, exactly one gets each tick. A
-- claimed tick carries a delivery lease (claimer, deadline by the server
-- clock) until its claimer acknowledges it; a claim found unacknowledged past
-- its deadline is given again, as a redelivery, to the next claimer, or
-- counted as missed when it is older than the redelivery horizon.
-- KEYS[1]: the pool's hash tag. Parts: tk:<name>, a hash with "period"
--          (ms), "next" (server ms of the next tick), "seq" (the last tick
--          given), "lost" (ticks given up since the last claim), one field
--          "c<seq>" = "<deadline ms>:<scheduled ms>:<claimer>" per claimed
--          tick not acknowledged yet; or "stopped", once stopped.
-- ARGV[1]: ticker name. ARGV[2]: period in ms, used when the ticker does
--          not exist yet (else the stored one rules). ARGV[3]: claimer.
--          ARGV[4]: lease ms. ARGV[5]: horizon ms (an unacknowledged tick
--          scheduled longer ago than this is missed, not redelivered).
--          ARGV[6]: a seq this claimer acknowledges, or "0".
-- Returns: {1, seq, scheduled ms, missed, ms to the next tick, redelivered
--   0|1} when this caller gets a tick; {0, 0, 0, 0, ms to the next tick, 0}
--   when none is due; {-1, 0, 0, 0, 0, 0} when the ticker was stopped.
--#include pool_int
local tk = T .. ':tk:' .. ARGV[1]
local me = ARGV[3]
local now = now_ms()
local v = redis.call('HMGET', tk, 'period', 'next', 'seq', 'stopped', 'lost')
if v[4] then
  return {-1, 0, 0, 0, 0, 0}
end
local period, nxt, seq = tonumber(v[1]), tonumber(v[2]), tonumber(v[3])
local lost = tonumber(v[5] or '0') or 0
if not period or not nxt or not seq then
  if v[1] or v[2] or v[3] then
    error({err = 'FLEET_EPROTO pool ticker record is malformed'})
  end
  period, nxt, seq = tonumber(ARGV[2]), now, 0
  redis.call('HSET', tk, 'period', period)
end
if ARGV[6] ~= '0' then
  local p = redis.call('HGET', tk, 'c' .. ARGV[6])
  if p and string.match(p, '^%d+:%d+:(.*)$') == me then
    redis.call('HDEL', tk, 'c' .. ARGV[6])
  end
end
-- The oldest claim whose lease lapsed: redelivered, or missed if too old.
local all = redis.call('HGETALL', tk)
local old, old_at
for i = 1, #all, 2 do
  local f = all[i]
  if string.byte(f, 1) == 99 then -- 'c'
    local dl, at = string.match(all[i + 1], '^(%d+):(%d+):')
    dl, at = tonumber(dl), tonumber(at)
    if not dl then
      error({err = 'FLEET_EPROTO pool ticker claim is malformed'})
    end
    if dl <= now then
      if at + tonumber(ARGV[5]) < now then
        redis.call('HDEL', tk, f)
        lost = lost + 1
      elseif not old or at < old_at then
        old, old_at = f, at
      end
    end
  end
end
if old then
  redis.call('HSET', tk, old, string.format('%d:%d:%s', now + ARGV[4],
                                            old_at, me), 'lost',
             string.format('%d', lost))
  return {1, tonumber(string.sub(old, 2)), old_at, 0, 0, 1}
end
if now < nxt then
  if lost > 0 then
    redis.call('HSET', tk, 'lost', string.format('%d', lost))
  end
  return {0, 0, 0, 0, nxt - now, 0}
end
-- Ticks nobody claimed in time are coalesced into this one and counted,
-- with the claims given up above.
local missed = math.floor((now - nxt) / period)
local at = nxt + missed * period
seq = seq + 1
redis.call('HSET', tk, 'next', string.format('%d', at + period), 'seq',
           string.format('%d', seq), 'lost', '0', 'c' .. string.format('%d', seq),
           string.format('%d:%d:%s', now + ARGV[4], at, me))
return {1, seq, at, missed + lost, at + period - now, 0}
