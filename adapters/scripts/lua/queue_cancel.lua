-- queue_cancel.lua -- deletes a job that is pending or delayed, with its
-- unique key if it still holds it; or asks a running job to stop
-- (docs/queue.md, "Cancelling a running job"): T:cancel gets the claim's
-- token, the claim's deadline is capped at now + grace_ms and marked
-- (lib/queue_stop.lua), and the message "cancel\0<id>\0<token>" on the
-- wake channel tells the worker that holds it. The job then ends as
-- cancelled (dead, reason "cancelled") when its holder finishes it, or when
-- recovery finds the capped claim expired.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: recs:<c>, jobs,
--   opts, info, errs, claims, done, pending, pending:prio, delayed,
--   unique:<key>, uniq, limits, groups, gp:<g>, gz:<g>, rttl, events (a
--   "cancelled" event: lib/queue_life.lua), cancel, timeout, recover_at,
--   jobs:wake;
--   with flows (lib/queue_deps.lua): parent, deps, kids:<id>, stats, and
--   the parent's queue's.
-- ARGV[1]: id; ARGV[2] (optional): grace_ms for a running job (default
--   30000).
-- Returns: 1 (deleted), 2 (running: cancel requested).
-- Errors: FLEET_ENOTFOUND, FLEET_EALREADY (completed or dead),
--   FLEET_EPROTO.
local call = redis.call
local tag = KEYS[1]
local id = ARGV[1]
--#include queue_int
--#include queue_rec
--#include queue_pend
--#include queue_deps
--#include queue_life
--#include time
local now = now_ms()
--#include queue_stop
--#include queue_errs

if call('HEXISTS', rec_key(tag, id), id) == 0 then
  return redis.error_reply('FLEET_ENOTFOUND no job ' .. id)
end
local v = call('HGET', tag .. ':claims', id)
if v then return stop_cancel(id, v, tonumber(ARGV[2] or '30000')) end
local info = call('HGET', tag .. ':info', id)
local p = info and find(info, '\0', 1, true)
-- A dead job's info has its finish time before the first separator.
if call('HEXISTS', tag .. ':done', id) == 1 or (p and p > 1) then
  return redis.error_reply('FLEET_EALREADY job ' .. id .. ' is finished')
end
local _, _, unique, g = opts_read(call('HGET', tag .. ':opts', id), id)
if call('ZREM', tag .. ':delayed', id) == 0 then
  local l, z = pend_keys(g)
  if call('ZREM', z, id) == 0 and call('LREM', l, 1, id) == 0 and g == '' then
    -- A pending job of a group whose options do not name it: the sets of
    -- the rotation are searched.
    for _, rg in ipairs(call('LRANGE', tag .. ':groups', 0, -1)) do
      l, z = pend_keys(rg)
      if rg ~= '' and
          (call('ZREM', z, id) == 1 or call('LREM', l, 1, id) == 1) then
        g = rg
        break
      end
    end
  end
  -- (An emptied set stays in the rotation until a claim's turn finds it
  -- empty: lib/queue_claim.lua.)
end
if unique then
  local ukey = tag .. ':unique:' .. unique
  if call('GET', ukey) == id then call('DEL', ukey) end
  unique_ended(tag, {id})
end
recs_del(tag, {id})
call('HDEL', tag .. ':opts', id)
errs_del({id}, call('HDEL', tag .. ':info', id))
call('HDEL', tag .. ':timeout', id)
-- A cancelled child counts as dead for its parent (docs/queue.md, "Flows").
if call('HEXISTS', tag .. ':limits', 'deps') == 1 then deps_ended({id}, 'd') end
life_cancelled(id)
return 1
