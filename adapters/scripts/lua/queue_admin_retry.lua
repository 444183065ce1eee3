-- queue_admin_retry.lua -- runs dead jobs again: each goes back to pending
-- (at the end of its priority's order) with its attempts reset to 0, so it
-- gets max_attempts new attempts; its last error stays readable
-- (queue_get.lua) until its next claim ends. The dead counter of
-- queue_counts.lua keeps counting it (it counts every job that ever died).
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: recs:<c>, jobs,
--   opts, info, dead, pending, pending:prio, seq, jobs:wake, groups,
--   gp:<g>, gz:<g>, limits, events ("retried" events: lib/queue_life.lua).
-- ARGV[1]: id, or "" for the oldest kept dead jobs; ARGV[2]: limit (jobs
--   per call when ARGV[1] is "").
-- Returns: {retried, dead jobs left in the kept list}.
-- Errors: FLEET_ENOTFOUND (no such job), FLEET_EBUSY (the job is not dead:
--   pending, delayed, running or completed), FLEET_EPROTO.
local call = redis.call
local tag = KEYS[1]
--#include queue_int
--#include queue_rec
--#include queue_pend
--#include queue_life

local info, dead = tag .. ':info', tag .. ':dead'

-- Whether an info record "<finished>\0<token>\0<state>\0<error>" says dead;
-- also returns the position of its error.
local function is_dead(v)
  if not v then return false end
  local i = find(v, '\0', 1, true)
  local j = i and find(v, '\0', i + 1, true)
  local k = j and find(v, '\0', j + 1, true)
  return k ~= nil and sub(v, j + 1, k - 1) == 'dead', k
end

local ids
if ARGV[1] ~= '' then
  local id = ARGV[1]
  if call('HEXISTS', rec_key(tag, id), id) == 0 then
    return redis.error_reply('FLEET_ENOTFOUND no job ' .. id)
  end
  if not is_dead(call('HGET', info, id)) then
    return redis.error_reply('FLEET_EBUSY job ' .. id .. ' is not dead')
  end
  ids = {id}
else
  ids = call('LRANGE', dead, 0, tonumber(ARGV[2]) - 1)
end

-- Read and check everything before writing anything.
local recs = #ids > 0 and recs_get(tag, ids) or {}
local infos = #ids > 0 and call('HMGET', info, unpack(ids)) or {}
local opts = #ids > 0 and call('HMGET', tag .. ':opts', unpack(ids)) or {}
local todo = {}
for n, id in ipairs(ids) do
  local ok, k = is_dead(infos[n])
  if recs[n] and ok then
    local _, _, i = rec_read(recs[n], id)
    local p, _, _, g = opts_read(opts[n], id)
    todo[#todo + 1] = {id, recs[n], i, p, k, infos[n], g}
  end
end

local was_empty = false
local seq = #todo > 0 and call('INCRBY', tag .. ':seq', #todo) - #todo or 0
for n, t in ipairs(todo) do
  local id, rec, i, p, k = t[1], t[2], t[3], t[4], t[5]
  call('HSET', rec_key(tag, id), id, '0' .. sub(rec, i))
  -- Keeps the last error; the state and token are cleared.
  call('HSET', info, id, '\0\0\0' .. sub(t[6], k + 1))
  local added
  if p == 0 then
    added = pend_add(t[7], {id}, {})
  else
    added = pend_add(t[7], {}, {(1000 - p) * PRIO_UNIT + seq + n, id})
  end
  if added then was_empty = true end
end
-- The list of kept dead jobs: those of the batch go from its head; a single
-- id wherever it is.
if ARGV[1] == '' then
  if #ids > 0 then call('LTRIM', dead, #ids, -1) end
else
  call('LREM', dead, 1, ARGV[1])
end
if #todo > 0 and was_empty then
  publish_wake(tag .. ':jobs:wake', 'wake')
end
local evs = {}
for n, t in ipairs(todo) do evs[n] = {'retried', t[1], 0} end
ev_publish(evs)
return {#todo, call('LLEN', dead)}
