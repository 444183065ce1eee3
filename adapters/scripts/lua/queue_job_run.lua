-- queue_job_run.lua -- runs one delayed or dead job now (docs/queue.md,
-- "Deleting, running and killing one job"): a delayed job goes to pending
-- at once, at the end of its priority's order (in its group's set); a dead
-- one as queue_admin_retry.lua runs one again: its attempts reset to 0,
-- its last error kept, a "retried" event. Publishes on the wake channel
-- when the pending set was empty. A pending job is left as it is.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: recs:<c>, jobs,
--   opts, info, claims, done, delayed, dead, deps, seq, pending,
--   pending:prio, groups, grot, gp:<g>, gz:<g>, limits, res:<c>, results,
--   progress, progx, jobs:wake, events.
-- ARGV[1]: id.
-- Returns: the state the job was in: "delayed" or "dead" (it is pending
--   now), or "pending" (nothing was done).
-- Errors: FLEET_ENOTFOUND (no such job), FLEET_EBUSY (it is running, or
--   a flow's parent waiting for its children), FLEET_EALREADY (it
--   completed), FLEET_EPROTO (a record fleet cannot read).
local call = redis.call
local tag = KEYS[1]
local id = ARGV[1]
--#include queue_verbs

local job = verb_find(id)
if not job then return redis.error_reply('FLEET_ENOTFOUND no job ' .. id) end
local st = job.state
if st == 'running' or st == 'waiting-children' then
  return redis.error_reply('FLEET_EBUSY job ' .. id .. ' is ' .. st)
elseif st == 'completed' then
  return redis.error_reply('FLEET_EALREADY job ' .. id .. ' completed')
elseif st == 'pending' then
  return st
end
-- Read and check everything before writing anything.
local rec_i, info_k
if st == 'dead' then
  if not job.rec then
    return redis.error_reply('FLEET_EPROTO job ' .. id ..
                               ' has no record fleet can read')
  end
  local _, _, i = rec_read(job.rec, id)
  rec_i = i
  local v = job.info
  local a = find(v, '\0', 1, true)
  local b = find(v, '\0', a + 1, true)
  info_k = find(v, '\0', b + 1, true)
end
local was_empty
if st == 'delayed' then
  call('ZREM', tag .. ':delayed', id)
else
  call('HSET', rec_key(tag, id), id, '0' .. sub(job.rec, rec_i))
  -- Keeps the last error; the state and token are cleared.
  call('HSET', tag .. ':info', id, '\0\0\0' .. sub(job.info, info_k + 1))
  call('LREM', tag .. ':dead', 0, id)
end
if job.prio == 0 then
  was_empty = pend_add(job.g, {id}, {})
else
  local seq = call('INCR', tag .. ':seq')
  was_empty = pend_add(job.g, {}, {dec((1000 - job.prio) * PRIO_UNIT + seq), id})
end
if was_empty then publish_wake(tag .. ':jobs:wake', 'wake') end
if st == 'dead' then ev1('retried', id, 0) end
return st
