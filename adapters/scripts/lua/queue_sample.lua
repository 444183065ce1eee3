-- queue_sample.lua -- the age of the oldest pending job, and this
-- minute's sample of the queue's history (lib/queue_hist.lua), which the
-- readers write (the exporter of `fleet metrics`, the dashboard): the
-- first call of a minute records the depth it is given (field d) and the
-- age it finds (field w, absent when nothing is pending) with HSETNX, and
-- the later calls of that minute write nothing. The age is that of the
-- job a claim takes next from the pending list and the priority set (now
-- less its enqueue time), or of the earliest due delayed job (now less
-- its run-at time), whichever is older; the jobs of groups are left out.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: pending,
--   pending:prio, delayed, recs:<c>, jobs, hist:m:<minute>.
-- ARGV[1]: the depth to record (pending + delayed + running), or '' to
--   record nothing.
-- Returns: {now_ms, the oldest age in ms or -1 when nothing is pending,
--   1 when this call recorded the minute's sample, else 0}.
-- Errors: FLEET_EINVAL (a depth that is not a number).
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
--#include queue_int
--#include queue_rec
--#include queue_hist

local depth = ARGV[1]
if depth ~= '' and not string.find(depth, '^%d+$') then
  return redis.error_reply('FLEET_EINVAL depth is not a number')
end
local age = -1
-- The enqueue time of job `id`, from its record; nil when unreadable.
local function created(id)
  local rec = id and call('HGET', rec_key(tag, id), id)
  if not rec then return nil end
  local ok, _, _, j, k = rec_split(rec)
  if not ok then return nil end
  return tonumber(string.sub(rec, j + 1, k - 1))
end
local heads = {call('LRANGE', tag .. ':pending', 0, 0)[1] or false,
               call('ZRANGE', tag .. ':pending:prio', 0, 0)[1] or false}
for i = 1, 2 do
  local t = heads[i] and created(heads[i])
  if t and now - t > age then age = now - t end
end
local due = call('ZRANGE', tag .. ':delayed', 0, 0, 'WITHSCORES')
if due[2] and tonumber(due[2]) <= now and now - tonumber(due[2]) > age then
  age = now - tonumber(due[2])
end
if age < 0 then age = -1 end
local rec = 0
if depth ~= '' then
  local m = hist_keys(now)
  -- (A key of another type, a foreign write, takes no sample.)
  if redis.pcall('HSETNX', m, 'd', depth) == 1 then
    rec = 1
    if age >= 0 then call('HSET', m, 'w', dec(age)) end
    call('PEXPIRE', m, HIST_MIN_KEEP)
  end
end
return {now, age, rec}
