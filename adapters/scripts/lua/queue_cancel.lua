-- queue_cancel.lua -- deletes a job that is pending or delayed, with its
-- unique key if it still holds it.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: recs:<c>, jobs,
--   opts, info, claims, done, pending, pending:prio, delayed, unique:<key>,
--   groups, gp:<g>, gz:<g>, limits; with flows (lib/queue_deps.lua):
--   parent, deps, kids:<id>, stats, and the parent's queue's.
-- ARGV[1]: id.
-- Returns: 1.
-- Errors: FLEET_ENOTFOUND, FLEET_EBUSY (claimed), FLEET_EALREADY (completed
--   or dead), FLEET_EPROTO.
local call = redis.call
local tag = KEYS[1]
local id = ARGV[1]
--#include queue_int
--#include queue_rec
--#include queue_pend
--#include queue_deps

if call('HEXISTS', rec_key(tag, id), id) == 0 then
  return redis.error_reply('FLEET_ENOTFOUND no job ' .. id)
elseif call('HEXISTS', tag .. ':claims', id) == 1 then
  return redis.error_reply('FLEET_EBUSY job ' .. id .. ' is running')
end
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
end
recs_del(tag, {id})
call('HDEL', tag .. ':opts', id)
call('HDEL', tag .. ':info', id)
-- A cancelled child counts as dead for its parent (docs/queue.md, "Flows").
if call('HEXISTS', tag .. ':limits', 'deps') == 1 then deps_ended({id}, 'd') end
return 1
