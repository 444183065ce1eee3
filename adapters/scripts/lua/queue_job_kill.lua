-- queue_job_kill.lua -- moves one pending, delayed or waiting job to dead
-- with the error "killed" (docs/queue.md, "Deleting, running and killing
-- one job"), as a job whose last attempt failed: the dead list and
-- counter get it, its unique key held until it ends is released, as a
-- flow's child it counts as dead for its parent (a parent's flow's state
-- goes), and a "dead" event is published. It keeps its record, options
-- (a job of a group gets its group in them, for a retry) and timeout, and
-- fleet_queue_retry() or queue_job_run.lua runs it again. The kept dead
-- jobs are not trimmed here.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: recs:<c>, jobs,
--   opts, info, claims, done, delayed, pending, pending:prio, groups,
--   gp:<g>, gz:<g>, deps, dead, stats, uniq, unique:<key>, limits,
--   res:<c>, results, progress, progx, events; with flows
--   (lib/queue_deps.lua): parent, kids:<id>, and the parent's queue's.
-- ARGV[1]: id.
-- Returns: the state the job was in: "pending", "delayed" or
--   "waiting-children".
-- Errors: FLEET_ENOTFOUND (no such job), FLEET_EBUSY (it is running:
--   cancel it instead), FLEET_EALREADY (it completed or is dead),
--   FLEET_EPROTO.
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
elseif st == 'completed' or st == 'dead' then
  return redis.error_reply('FLEET_EALREADY job ' .. id .. ' is ' .. st)
end
verb_unqueue(job)
local o = verb_opts_group(job)
if o ~= job.opts then call('HSET', tag .. ':opts', id, o) end
call('HSET', tag .. ':info', id, dec(life_now()) .. '\0\0dead\0killed')
call('RPUSH', tag .. ':dead', id)
call('HINCRBY', tag .. ':stats', 'dead', 1)
if call('EXISTS', tag .. ':uniq') == 1 then unique_ended(tag, {id}) end
if call('HEXISTS', tag .. ':limits', 'deps') == 1 then deps_ended({id}, 'd') end
ev1('dead', id, 0, 'killed')
return st
