-- queue_purge.lua -- deletes kept completed or dead jobs, oldest first (the
-- counters of queue_counts stay).
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: completed, dead,
--   recs:<c>, jobs, opts, info, errs, done, timeout and rttl (dead ones),
--   limits.
--   Also results, resx (dead ones): a dead job's id drops an earlier
--   job's result (lib/queue_life.lua, life_res_forget).
-- ARGV[1]: 'completed' or 'dead'; ARGV[2]: limit (jobs per call).
-- Returns: {removed, left}.
local call = redis.call
local tag = KEYS[1]
--#include queue_int
--#include queue_errs
--#include queue_life
if ARGV[1] ~= 'completed' and ARGV[1] ~= 'dead' then
  return redis.error_reply('FLEET_EINVAL cannot purge ' .. ARGV[1])
end
local l = tag .. ':' .. ARGV[1]
local ids = call('LRANGE', l, 0, tonumber(ARGV[2]) - 1)
if #ids > 0 then
  recs_del(tag, ids)
  call('HDEL', tag .. ':opts', unpack(ids))
  errs_del(ids, call('HDEL', tag .. ':info', unpack(ids)))
  call('HDEL', tag .. ':done', unpack(ids))
  -- (A dead job keeps its timeout, for a retry: lib/queue_stop.lua; and
  -- its result retention, as trimming drops it: lib/queue_trim.lua.)
  if ARGV[1] == 'dead' then
    call('HDEL', tag .. ':timeout', unpack(ids))
    call('HDEL', tag .. ':rttl', unpack(ids))
    -- (A dead job has no result: one kept under its id is an earlier
    -- job's, lib/queue_life.lua.)
    life_res_forget(ids)
    if call('EXISTS', tag .. ':rttl') == 0 then
      call('HDEL', tag .. ':limits', 'rttl')
    end
  end
  call('LTRIM', l, #ids, -1)
end
return {#ids, call('LLEN', l)}
