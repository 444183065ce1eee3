-- queue_hist.lua -- included by queue scripts (--#include queue_hist):
-- the queue's history (docs/metrics.md, "Queue history"), kept in one
-- small hash per minute, T:hist:m:<minute>, and one per day,
-- T:hist:d:<day> (whole minutes and days since the Unix epoch, UTC), each
-- expiring on its own:
-- fields c (jobs completed), f (attempts failed), and in a minute's, d
-- (the depth: pending + delayed + running) and w (the oldest pending
-- job's age in ms) sampled by the readers (queue_sample.lua).
-- hist_add(field, n) adds n to `field` of this minute's and this day's
-- hash: two commands per call of the script, whatever the number of jobs;
-- a hash gets its expiry when this call created the field (HINCRBY
-- answered n), so at most once a minute and once a day per field.
-- Expects `call`, `tag` and `now` defined before its include line.
local HIST_MIN_MS, HIST_DAY_MS = 60000, 86400000
-- Kept: minutes 25 hours, days 32 days (after their first write).
local HIST_MIN_KEEP, HIST_DAY_KEEP = '90000000', '2764800000'

-- The keys of the minute and the day of time t (ms).
local function hist_keys(t)
  local h = tag .. ':hist:'
  return h .. string.format('m:%d', (t - t % HIST_MIN_MS) / HIST_MIN_MS),
         h .. string.format('d:%d', (t - t % HIST_DAY_MS) / HIST_DAY_MS)
end

-- (With redis.pcall: the history comes after the job's own writes, and
-- a hash of another type or a field that is not a number, which only a
-- foreign write leaves, must not stop them half way; that count is lost.)
local function hist_add(field, n)
  if n <= 0 then return end
  local m, d = hist_keys(now)
  local s = string.format('%d', n)
  if redis.pcall('HINCRBY', m, field, s) == n then
    call('PEXPIRE', m, HIST_MIN_KEEP)
  end
  if redis.pcall('HINCRBY', d, field, s) == n then
    call('PEXPIRE', d, HIST_DAY_KEEP)
  end
end
