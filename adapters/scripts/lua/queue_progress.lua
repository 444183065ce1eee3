-- queue_progress.lua -- records the progress of a running job, a claim
-- still held: its percent and bytes replace the last ones (T:progress,
-- kept keep_ms after this call, lib/queue_life.lua), and a "progress"
-- event is published when events are subscribed.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: claims, recs:<c>,
--   info, done, limits, progress, progx, events.
-- ARGV[1]: id; ARGV[2]: token; ARGV[3]: percent (0..100); ARGV[4]: bytes;
--   ARGV[5]: keep_ms (how long the progress stays readable).
-- Returns: 1.
-- Errors: FLEET_ENOTFOUND, FLEET_ESTALE (not held with this token),
--   FLEET_EALREADY (that claim already ended).
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
--#include queue_int
--#include queue_rec
--#include queue_ended
--#include queue_life

local id, tok = ARGV[1], ARGV[2]
if not has_token(call('HGET', tag .. ':claims', id), tok) then
  local e = ended(id, tok)
  if e == -1 then
    return redis.error_reply('FLEET_ENOTFOUND no job ' .. id)
  elseif e == 2 then
    return redis.error_reply('FLEET_EALREADY claim ' .. tok .. ' ended')
  end
  return redis.error_reply('FLEET_ESTALE token ' .. tok .. ' is stale')
end
life.t = now
call('HSET', tag .. ':progress', id,
     dec(now) .. '\0' .. ARGV[3] .. '\0' .. ARGV[4])
call('ZADD', tag .. ':progx', dec(now + tonumber(ARGV[5])), id)
life_expire(tag .. ':progx', tag .. ':progress')
ev1('progress', id, tonumber(ARGV[3]), ARGV[4])
return 1
