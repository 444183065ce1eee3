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
end

-- The parent `pid` of queue `ptag`, whose children all ended, becomes
-- pending at its priority (T:opts), and wakes the workers when the
-- pending set was empty.
local function deps_release(ptag, pid)
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

-- Child `cid` of this queue, linked by `link`, ended as `how` ("c" or
-- "d") with `result` (nil: none). Counted once: its entry in the parent's
-- T:kids must still be waiting (a parent that ended has none).
local function deps_child(link, cid, how, result)
  local p = string.find(link, '\0', 1, true)
  local q = p and string.find(link, '\0', p + 1, true)
  if not q then return end
  local ptag, pid = string.sub(link, 1, p - 1), string.sub(link, p + 1, q - 1)
  local kids, ix = ptag .. ':kids:' .. pid, string.sub(link, q + 1)
  local r = call('HMGET', kids, '', ix)
  local v = r[2]
  if not v or string.sub(v, 1, 1) ~= 'w' then return end
  call('HSET', kids, ix, how .. string.sub(v, 2) .. (result or ''))
  if how == 'd' and r[1] == 'f' then
    deps_parent_dead(ptag, pid, 'child ' .. cid .. ' died')
  elseif call('HINCRBY', ptag .. ':deps', pid, -1) == 0 then
    deps_release(ptag, pid)
  end
end

-- Jobs `ids` of this queue ended for good: completed (how "c", with
-- results[i] or nil) or dead (how "d"), or were cancelled ("d"). As
-- parents, their flow's state goes; as children, they count for their
-- parent. Call it only when T:limits has "deps".
local function deps_ended(ids, how, results)
  if #ids == 0 then return end
  local links = call('HMGET', tag .. ':parent', unpack(ids))
  call('HDEL', tag .. ':deps', unpack(ids))
  local kk = {}
  for x, id in ipairs(ids) do kk[x] = tag .. ':kids:' .. id end
  call('DEL', unpack(kk))
  local linked = {}
  for x, l in ipairs(links) do
    if l then linked[#linked + 1] = ids[x] end
  end
  if #linked > 0 then
    call('HDEL', tag .. ':parent', unpack(linked))
    for x, l in ipairs(links) do
      if l then deps_child(l, ids[x], how, results and results[x]) end
    end
  end
  if call('EXISTS', tag .. ':parent', tag .. ':deps') == 0 then
    call('HDEL', tag .. ':limits', 'deps')
  end
end
