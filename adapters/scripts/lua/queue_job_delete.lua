-- queue_job_delete.lua -- deletes one job in any state but running
-- (docs/queue.md, "Deleting, running and killing one job"): pending,
-- delayed, waiting for its children, completed or dead, with every record
-- of it (lib/queue_verbs.lua: its record, options, info, timeout, unique
-- key, result retention, result and progress). A pending, delayed or
-- waiting job goes as a cancel deletes it (a "cancelled" event; as a
-- flow's child it counts as dead for its parent, as a parent its flow's
-- state goes); a completed or dead one leaves the kept list, and the
-- lifetime counters stay, as queue_purge.lua leaves them.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: recs:<c>, jobs,
--   opts, info, errs, claims, done, completed, dead, delayed, pending,
--   pending:prio, groups, gp:<g>, gz:<g>, deps, timeout, unique:<key>,
--   uniq, limits, rttl, res:<c>, results, resx, progress, progx, events;
--   with flows (lib/queue_deps.lua): parent, kids:<id>, stats, and the
--   parent's queue's.
-- ARGV[1]: id.
-- Returns: the state the job was in: "pending", "delayed",
--   "waiting-children", "completed" or "dead".
-- Errors: FLEET_ENOTFOUND (no such job), FLEET_EBUSY (it is running:
--   cancel it instead), FLEET_EPROTO.
local call = redis.call
local tag = KEYS[1]
local id = ARGV[1]
--#include queue_verbs

local job = verb_find(id)
if not job then return redis.error_reply('FLEET_ENOTFOUND no job ' .. id) end
local st = job.state
if st == 'running' then
  return redis.error_reply('FLEET_EBUSY job ' .. id ..
                             ' is running: cancel it instead')
end
if st == 'completed' then
  call('LREM', tag .. ':completed', 0, id)
  call('HDEL', tag .. ':done', id)
elseif st == 'dead' then
  call('LREM', tag .. ':dead', 0, id)
else
  verb_unqueue(job)
end
verb_forget(job)
if st ~= 'completed' and st ~= 'dead' then
  if call('HEXISTS', tag .. ':limits', 'deps') == 1 then
    deps_ended({id}, 'd')
  end
  life_cancelled(id)
end
return st
