-- queue_verbs.lua -- included by the scripts of the job verbs
-- (queue_job_delete, queue_job_run, queue_job_kill; --#include
-- queue_verbs): where one job is and taking it out of there
-- (docs/queue.md, "Deleting, running and killing one job"). Expects
-- `call` and `tag` defined before it; includes what it uses. Defines
-- verb_find(id), verb_unqueue(job), verb_forget(job) and
-- verb_opts_group(job).
--#include queue_int
--#include queue_rec
--#include queue_pend
--#include queue_deps
--#include queue_life

-- Where job `id` is, read in queue_get.lua's order, as a table: state
-- ('running', 'completed', 'dead', 'delayed', 'waiting-children' or
-- 'pending'), rec (its record; nil for a dead job moved aside whose record
-- is unreadable, or a completed one of which only the result is left),
-- opts (its options record or nil), prio, unique, g (its group, '' for
-- none; a pending job's is looked for in the rotation's sets), info (its
-- T:info value or nil). Returns nil when there is no such job. Raises
-- FLEET_EPROTO for options fleet cannot read.
local function verb_find(id)
  local job = {id = id, g = ''}
  local rec = redis.pcall('HGET', rec_key(tag, id), id)
  if type(rec) == 'string' then job.rec = rec end
  job.info = call('HGET', tag .. ':info', id)
  if call('HEXISTS', tag .. ':claims', id) == 1 then
    job.state = 'running'
  elseif call('HEXISTS', tag .. ':done', id) == 1 then
    job.state = 'completed'
  else
    local p = job.info and find(job.info, '\0', 1, true)
    local q = p and find(job.info, '\0', p + 1, true)
    local r = q and find(job.info, '\0', q + 1, true)
    if r and sub(job.info, q + 1, r - 1) == 'dead' then
      job.state = 'dead'
    end
  end
  if not job.rec and job.state ~= 'dead' and job.state ~= 'running' then
    -- A completed job whose records went (no completed-job history) is
    -- known by its result alone, as queue_get.lua tells.
    local res = life_read(id)
    if not res then return nil end
    job.state = 'completed'
    return job
  end
  job.opts = call('HGET', tag .. ':opts', id)
  local prio, _, unique, g = opts_read(job.opts, id)
  job.prio, job.unique, job.g = prio, unique, g
  if not job.state then
    local at = call('ZSCORE', tag .. ':delayed', id)
    local left = call('HGET', tag .. ':deps', id)
    if at then
      job.state = 'delayed'
    elseif left and left ~= '0' then
      job.state = 'waiting-children'
    else
      job.state = 'pending'
    end
  end
  return job
end

-- Takes a pending, delayed or waiting job out of the set it waits in
-- (a waiting parent is in none); fills job.g for a pending job of a
-- group whose options do not name it.
local function verb_unqueue(job)
  local id = job.id
  if call('ZREM', tag .. ':delayed', id) == 1 then return end
  local l, z = pend_keys(job.g)
  if call('ZREM', z, id) == 1 or call('LREM', l, 1, id) == 1 or
      job.g ~= '' then
    return
  end
  -- (An emptied set stays in the rotation until a claim's turn finds it
  -- empty: lib/queue_claim.lua.)
  for _, rg in ipairs(call('LRANGE', tag .. ':groups', 0, -1)) do
    if rg ~= '' then
      l, z = pend_keys(rg)
      if call('ZREM', z, id) == 1 or call('LREM', l, 1, id) == 1 then
        job.g = rg
        return
      end
    end
  end
end

-- The options record of `job` with its group as the fourth field, which
-- a delayed or dead job of a group must carry (docs/queue.md, "The key
-- schema v2"); nil when it needs none.
local function verb_opts_group(job)
  if job.g == '' then return job.opts end
  local o = job.opts or '\0\0'
  local i = find(o, '\0', 1, true)
  local j = i and find(o, '\0', i + 1, true)
  local k = j and find(o, '\0', j + 1, true)
  if k then return o end
  return o .. '\0' .. job.g
end

-- Deletes every record of `job` that is not in a state's set: its record,
-- options, info, timeout, unique key (when it still names it), result
-- retention, result and progress.
local function verb_forget(job)
  local id = job.id
  if job.unique then
    local ukey = tag .. ':unique:' .. job.unique
    if redis.pcall('GET', ukey) == id then call('DEL', ukey) end
  end
  if call('EXISTS', tag .. ':uniq') == 1 then unique_ended(tag, {id}) end
  recs_del(tag, {id})
  for _, h in ipairs({'opts', 'info', 'errs', 'timeout', 'rttl', 'results',
                      'progress'}) do
    call('HDEL', tag .. ':' .. h, id)
  end
  if call('EXISTS', tag .. ':rttl') == 0 then
    call('HDEL', tag .. ':limits', 'rttl')
  end
  local c = rec_chunk(id)
  if c then call('HDEL', tag .. ':res:' .. c, id) end
  call('ZREM', tag .. ':resx', id)
  call('ZREM', tag .. ':progx', id)
end
