-- queue_history.lua -- reads the queue's history (lib/queue_hist.lua):
-- per minute or per day from `from` to `to`, oldest first, each point the
-- jobs completed and the attempts failed in it, and for minutes the depth
-- and oldest pending age sampled in it (queue_sample.lua). Bounded: at
-- most 1500 minutes or 400 days, the newest ones when more are asked. A
-- value fleet did not write reads as none.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: hist:m:<minute>,
--   hist:d:<day>.
-- ARGV[1]: 'm' (minutes) or 'd' (days); ARGV[2]: from_ms, ARGV[3]: to_ms
--   (unix ms; to_ms 0: now; from_ms 0: the whole retention, 25 hours of
--   minutes or 32 days; a from_ms of "-N": N ms before to_ms).
-- Returns: {now_ms, the first point's start (ms), the step (ms), then
--   per point: completed, failed, depth or -1, oldest age ms or -1}.
-- Errors: FLEET_EINVAL (a resolution or a time that is not one).
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
--#include queue_int
--#include queue_hist

local res, from, to = ARGV[1], ARGV[2], ARGV[3]
if (res ~= 'm' and res ~= 'd') or not string.find(from, '^%-?%d+$') or
    not string.find(to, '^%d+$') then
  return redis.error_reply('FLEET_EINVAL bad resolution or time')
end
local step = res == 'm' and HIST_MIN_MS or HIST_DAY_MS
local max = res == 'm' and 1500 or 400
from, to = tonumber(from), tonumber(to)
if to == 0 then to = now end
if from == 0 then
  from = to - tonumber(res == 'm' and HIST_MIN_KEEP or HIST_DAY_KEEP)
elseif from < 0 then
  from = to + from
end
if from > to then
  return redis.error_reply('FLEET_EINVAL from_ms is after to_ms')
end
local first, last = (from - from % step) / step, (to - to % step) / step
if last - first >= max then first = last - max + 1 end
local out = {now, first * step, step}
local h = tag .. ':hist:' .. res .. ':'
-- A field's count: `none` unless it is digits.
local function hist_num(x, none)
  if x and string.find(x, '^%d+$') then return tonumber(x) end
  return none
end
-- (A key of another type, a foreign write, reads as an empty point.)
for i = first, last do
  local v = redis.pcall('HMGET', h .. dec(i), 'c', 'f', 'd', 'w')
  if v.err then v = {} end
  out[#out + 1] = hist_num(v[1], 0)
  out[#out + 1] = hist_num(v[2], 0)
  out[#out + 1] = hist_num(v[3], -1)
  out[#out + 1] = hist_num(v[4], -1)
end
return out
