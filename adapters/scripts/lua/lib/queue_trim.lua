-- queue_trim.lua -- included by queue scripts (--#include queue_trim):
-- retention of finished jobs. Expects `call` (redis.call), `now` (server
-- ms), `tag` and `dec` (queue_int) defined before it. The list `l`
-- holds the ids of the kept jobs, oldest first; `times` is the hash whose
-- value for an id starts with "<finished_ms>\0". Deletes the oldest: those
-- beyond `keep`, then those finished more than keep_s seconds ago (when
-- keep_s > 0); at most 1000 per call, so that a call stays short. Their
-- records go with them (jobs, opts, info, and their entries in `times`).
-- `len`, when given, is the list's length (an RPUSH's reply).
--
-- In the steady state a completion of k jobs deletes k: one LRANGE reads
-- them and the few after them whose age is checked, so a call costs the
-- same few commands whatever the count.
--#include queue_life
--#include queue_errs
local function trim(l, times, keep, keep_s, len)
  local n = (len or call('LLEN', l)) - keep
  if n < 0 then n = 0 end
  if n > 1000 then n = 1000 end
  local cutoff, step = now - keep_s * 1000, 4
  local ids = {}
  if n > 0 or keep_s > 0 then
    ids = call('LRANGE', l, '0', dec(n + (keep_s > 0 and step or 0) - 1))
  end
  -- Past the count, the oldest kept jobs are looked at a few at a time
  -- and the walk stops at the first one young enough: in the steady
  -- state that is the first.
  local at = n -- ids[at + 1 ..] are the ones to look at
  while keep_s > 0 and n < 1000 and at < #ids do
    local look = {}
    for i = at + 1, #ids do look[#look + 1] = ids[i] end
    local v = call('HMGET', times, unpack(look))
    local young = false
    for i = 1, #look do
      -- (A time fleet cannot read counts as old: trim runs after its
      -- caller wrote, and must not fail.)
      local e = v[i]
      local p = e and string.find(e, '\0', 1, true)
      local fin = p and p < 20 and string.match(e, '^%d+', 1)
      if fin and #fin == p - 1 and tonumber(fin) > cutoff then
        young = true
        break
      end
      n = n + 1
    end
    if young or #ids < at + step or n >= 1000 then break end
    at = #ids
    if step < 256 then step = step * 4 end
    local more = call('LRANGE', l, dec(at), dec(at + step - 1))
    for _, id in ipairs(more) do ids[#ids + 1] = id end
  end
  if n > 1000 then n = 1000 end
  if n <= 0 then return end
  for i = #ids, n + 1, -1 do ids[i] = nil end
  recs_del(tag, ids)
  if call('EXISTS', tag .. ':opts', tag .. ':info') > 0 then
    call('HDEL', tag .. ':opts', unpack(ids))
    errs_del(ids, call('HDEL', tag .. ':info', unpack(ids)))
  end
  if times ~= tag .. ':info' then
    call('HDEL', times, unpack(ids))
  else
    -- Dead jobs (their times are in T:info) keep their timeouts, for a
    -- retry (lib/queue_stop.lua); they go with them.
    call('HDEL', tag .. ':timeout', unpack(ids))
    -- (A dead job has no result: one kept under its id is an earlier
    -- job's, lib/queue_life.lua.)
    life_res_forget(ids)
  end
  -- (Dead jobs with a result retention of their own: lib/queue_life.lua.)
  if life.rttl then call('HDEL', tag .. ':rttl', unpack(ids)) end
  call('LTRIM', l, dec(n), '-1')
end
