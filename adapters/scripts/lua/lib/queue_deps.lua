-- queue_deps.lua -- included by the scripts that end jobs (complete, fail,
-- recover through lib/queue_freed.lua; cancel; --#include queue_deps):
-- deps_ended(ids, how, results), what a job's end does to the flows it
-- takes part in (docs/queue.md, "Flows"; queue_add_flow.lua creates
-- them). Expects `call`, `tag` and dec (queue_int) defined before it.
--
-- The keys, each in the queue of the job it describes:
--   T:parent   hash, child id -> "<parent tag>\0<parent id>\0<index>": a
--              child's link to its parent (in the child's queue).
--   T:deps     hash, parent id -> the children not ended yet; 0 once the
--              parent was released to pending, until the parent ends.
--   T:kids:<parent id>  hash: "" -> "f" (a child's death kills the
--              parent) or "i" (it counts as done); "<index>" (1..n) ->
--              "<state>\0<child tag>\0<child id>\0<result>", state "w"
--              waiting, "c" completed, "d" dead.
--   T:stats    field "waiting": the parents waiting for children (of
--              T:deps, those not at 0), what fleet_queue_counts() tells.
--   T:limits   field "deps" while T:parent or T:deps holds something: the
--              gate. Scripts read T:limits anyway when claims end
--              (flow_ended), so a queue without flows pays nothing.
--#include time

-- The parent `pid` of queue `ptag` dies with the reason `why`: its flow's
-- state goes (children still running end unseen).
local function deps_parent_dead(ptag, pid, why)
  call('HDEL', ptag .. ':deps', pid)
  call('DEL', ptag .. ':kids:' .. pid)
  call('HSET', ptag .. ':info', pid, dec(now_ms()) .. '\0\0dead\0' .. why)
  call('RPUSH', ptag .. ':dead', pid)
  call('HINCRBY', ptag .. ':stats', 'dead', 1)
  call('HINCRBY', ptag .. ':stats', 'waiting', -1)
end

-- The parent `pid` of queue `ptag`, whose children all ended, becomes
-- pending at its priority (T:opts), and wakes the workers when the
-- pending set was empty.
local function deps_release(ptag, pid)
  call('HINCRBY', ptag .. ':stats', 'waiting', -1)
  local o = call('HGET', ptag .. ':opts', pid)
  local p = o and tonumber(string.match(o, '^(%-?%d+)')) or 0
  local l, z = ptag .. ':pending', ptag .. ':pending:prio'
  local was_empty = call('EXISTS', l, z) == 0
  if p == 0 then
    call('RPUSH', l, pid)
  else
    local seq = call('INCR', ptag .. ':seq')
    call('ZADD', z, dec((1000 - p) * 4398046511104 + seq), pid)
  end
  if was_empty then
    -- The jobs without a group join the rotation when groups are in it.
    if call('EXISTS', ptag .. ':groups') == 1 and
        call('HSETNX', ptag .. ':grot', '', '1') == 1 then
      call('RPUSH', ptag .. ':groups', '')
    end
    publish_wake(ptag .. ':jobs:wake', 'wake')
  end
end

-- Children of this queue that ended as `how` ("c" or "d"), all of one
-- parent: g = {ptag, pid, ix (their indexes in the parent's T:kids), ids,
-- res (their results, '' for none)}. Each is counted once: its entry in
-- the parent's T:kids must still be waiting (a parent that ended has
-- none).
local function deps_children(g, how)
  local kids = g.ptag .. ':kids:' .. g.pid
  local r = call('HMGET', kids, '', unpack(g.ix))
  local w, k, died = {}, 0, nil
  for i, ix in ipairs(g.ix) do
    local v = r[i + 1]
    if v and string.sub(v, 1, 1) == 'w' then
      w[#w + 1] = ix
      w[#w + 1] = how .. string.sub(v, 2) .. g.res[i]
      k = k + 1
      died = died or (how == 'd' and g.ids[i])
    end
  end
  if k == 0 then return end
  if died and r[1] == 'f' then
    deps_parent_dead(g.ptag, g.pid, 'child ' .. died .. ' died')
    return
  end
  call('HSET', kids, unpack(w))
  if call('HINCRBY', g.ptag .. ':deps', g.pid, dec(-k)) == 0 then
    deps_release(g.ptag, g.pid)
  end
end

-- Jobs `ids` of this queue ended for good: completed (how "c", with
-- results[i] or nil) or dead (how "d"), or were cancelled ("d"). As
-- children, they count for their parent (grouped by parent: a few
-- commands per parent, not per child); as parents, their flow's state
-- goes. Call it only when T:limits has "deps".
local function deps_ended(ids, how, results)
  if #ids == 0 then return end
  local links = call('HMGET', tag .. ':parent', unpack(ids))
  local linked, others, byp, order = {}, {}, {}, {}
  for x, l in ipairs(links) do
    local p = l and string.find(l, '\0', 1, true)
    local q = p and string.find(l, '\0', p + 1, true)
    if q then
      linked[#linked + 1] = ids[x]
      local key = string.sub(l, 1, q - 1)
      local g = byp[key]
      if not g then
        g = {ptag = string.sub(l, 1, p - 1), pid = string.sub(l, p + 1, q - 1),
             ix = {}, ids = {}, res = {}}
        byp[key] = g
        order[#order + 1] = key
      end
      g.ix[#g.ix + 1] = string.sub(l, q + 1)
      g.ids[#g.ids + 1] = ids[x]
      g.res[#g.res + 1] = results and results[x] or ''
    elseif l then
      linked[#linked + 1] = ids[x] -- a link fleet cannot read: dropped
    else
      others[#others + 1] = ids[x]
    end
  end
  -- (A flow's parent is never a child: only the others may be parents.)
  local parents, waiting = {}, 0
  if #others > 0 then
    local left = call('HMGET', tag .. ':deps', unpack(others))
    for x, v in ipairs(left) do
      if v then
        parents[#parents + 1] = others[x]
        -- A parent still waiting (cancelled) leaves the count.
        if v ~= '0' then waiting = waiting + 1 end
      end
    end
  end
  if waiting > 0 then
    call('HINCRBY', tag .. ':stats', 'waiting', dec(-waiting))
  end
  if #parents > 0 then
    call('HDEL', tag .. ':deps', unpack(parents))
    local kk = {}
    for x, id in ipairs(parents) do kk[x] = tag .. ':kids:' .. id end
    call('DEL', unpack(kk))
  end
  if #linked > 0 then
    call('HDEL', tag .. ':parent', unpack(linked))
    for _, key in ipairs(order) do deps_children(byp[key], how) end
  end
  if (#parents > 0 or #linked > 0) and
      call('EXISTS', tag .. ':parent', tag .. ':deps') == 0 then
    call('HDEL', tag .. ':limits', 'deps')
  end
end

-- Jobs moved aside (move_aside, lib/queue_rec.lua: `bad` holds {id, ...}
-- per job) are dead: as children they count as dead for their parents,
-- as parents their flow's state goes. The HEXISTS is made only when
-- something was moved aside, which is rare, and deps_ended() only when
-- the queue takes part in flows.
local function deps_aside(bad)
  if #bad == 0 or call('HEXISTS', tag .. ':limits', 'deps') == 0 then
    return
  end
  local ids = {}
  for x, b in ipairs(bad) do ids[x] = b[1] end
  deps_ended(ids, 'd')
end
