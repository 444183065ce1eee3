-- queue_release.lua -- hands claims back: each job still held goes back to
-- the front of its priority's pending jobs (in its group's set), and its
-- attempt does not count. With a hold ("the upstream said wait"), the
-- claims of the queue, or of each released job's group, are held that
-- long (lib/queue_flow.lua: flow_hold).
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: claims, recs:<c>,
--   jobs, opts, info, done, pending, pending:prio, jobs:wake, groups,
--   gp:<g>, gz:<g>, grun, limits.
-- ARGV[1]: hold_ms (0: none); ARGV[2]: 0 to hold the queue, 1 each
--   released job's group (the queue for a job without one); then id,
--   token per claim.
--   Also cancel, rundl, timeout, delayed, dead, stats, errs
--   (lib/queue_stop.lua): a claim whose job was cancelled, or that ran
--   past its run deadline, ends as that says instead.
-- Returns: {now_ms, then per claim 1 released, 2 that claim already ended,
--   0 stale, -1 no such job, 3 ended as cancelled, 4 failed: timed out}.
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
--#include queue_int
--#include queue_rec
--#include queue_ended
--#include queue_pend
--#include queue_flow
--#include queue_stop

local out = {now}
local ids = {}
for i = 3, #ARGV - 1, 2 do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return out end
local held = call('HMGET', tag .. ':claims', unpack(ids))
local recs = recs_get(tag, ids)
local o = call('HMGET', tag .. ':opts', unpack(ids))
local infos = call('HMGET', tag .. ':info', unpack(ids))
local stops = stop_calls(ids, held, 3, false)
-- Read and checked first; written below.
-- The jobs go back to their groups' sets: sets[g] = {list, zp}.
local released, info, seen, vals = {}, {}, {}, {}
local sets, order = {}, {}
for i, id in ipairs(ids) do
  local tok = ARGV[2 * i + 2]
  local v = held[i]
  if stops and stops[id] and not seen[id] and has_token(v, tok) then
    seen[id] = ''
    out[i + 1] = stops[id]
  elseif seen[id] then
    -- Released a moment ago by this batch.
    out[i + 1] = seen[id] == tok and 2 or 0
  elseif not recs[i] then
    out[i + 1] = -1
  elseif has_token(v, tok) then
    seen[id] = tok
    rec_read(recs[i], id)
    local p = opts_read(o[i], id)
    -- The group is the claim's (the options may not hold it).
    local g = claim_group(v)
    local st = sets[g]
    if not st then
      st = {{}, {}}
      sets[g] = st
      order[#order + 1] = g
    end
    local list, zp = st[1], st[2]
    vals[#vals + 1] = v
    -- The last error stays: it follows the third separator of the info.
    local err = ''
    local e = infos[i]
    local a = e and find(e, '\0', 1, true)
    local b = a and find(e, '\0', a + 1, true)
    local c = b and find(e, '\0', b + 1, true)
    if c then err = sub(e, c + 1) end
    released[#released + 1] = id
    info[#info + 1] = id
    info[#info + 1] = '\0' .. tok .. '\0\0' .. err
    if p == 0 then
      table.insert(list, 1, id)
    else
      zp[#zp + 1] = (1000 - p) * PRIO_UNIT
      zp[#zp + 1] = id
    end
    out[i + 1] = 1
  elseif v then
    out[i + 1] = 0 -- held by another claim
  else
    out[i + 1] = ended(id, tok)
  end
end
if #released > 0 then
  local was_empty = false
  call('HDEL', tag .. ':claims', unpack(released))
  call('HSET', tag .. ':info', unpack(info))
  -- LPUSH puts each in turn at the head: the lists were reversed above.
  for _, g in ipairs(order) do
    if pend_add(g, sets[g][1], sets[g][2], true) then was_empty = true end
  end
  local hold = tonumber(ARGV[1])
  if hold > 0 then
    if ARGV[2] == '1' then
      for _, g in ipairs(order) do flow_hold(g, now + hold) end
    else
      flow_hold('', now + hold)
    end
  end
  flow_ended(vals)
  if was_empty then publish_wake(tag .. ':jobs:wake', 'wake') end
end
return out
