-- queue_pend.lua -- included by queue scripts (--#include queue_pend):
-- the pending sets of a queue's groups and their rotation
-- (lib/queue_flow.lua tells the keys; docs/queue.md, "Flow control"):
-- pend_keys(g) and pend_add(g, list, zp, front). Expects `call` and `tag`.
-- (Each function of a lib is a new closure on every run of a script that
-- includes it: the flow-control helpers are split by who needs them.)

-- The pending list and zset of group g ('' for the jobs without a group).
local function pend_keys(g)
  if g == '' then return tag .. ':pending', tag .. ':pending:prio' end
  return tag .. ':gp:' .. g, tag .. ':gz:' .. g
end

-- Adds jobs to the pending set of group g: `list` to its list (at its head
-- in the order given when `front`; LPUSH reverses, so pass them
-- reversed), `zp` (score, id pairs) to its zset. A set that was empty
-- joins the rotation unless it is in it still (T:grot, the rotation's
-- members): a group's always, the set without a group while a group is
-- in it (with the first group, a set without a group that holds jobs
-- joins too). A group's zset sets T:limits gprio, which makes claims look
-- for the zsets of groups (lib/queue_claim.lua). Returns whether the set
-- was empty.
local function pend_add(g, list, zp, front)
  local l, z = pend_keys(g)
  local was_empty = call('EXISTS', l, z) == 0
  if #list > 0 then call(front and 'LPUSH' or 'RPUSH', l, unpack(list)) end
  if #zp > 0 then
    call('ZADD', z, unpack(zp))
    if g ~= '' then call('HSET', tag .. ':limits', 'gprio', '1') end
  end
  if was_empty and (#list > 0 or #zp > 0) then
    local rot, mem = tag .. ':groups', tag .. ':grot'
    if g ~= '' then
      if call('EXISTS', rot) == 0 and
          call('EXISTS', tag .. ':pending', tag .. ':pending:prio') > 0 and
          call('HSETNX', mem, '', '1') == 1 then
        call('RPUSH', rot, '')
      end
      if call('HSETNX', mem, g, '1') == 1 then call('RPUSH', rot, g) end
    elseif call('EXISTS', rot) == 1 and call('HSETNX', mem, '', '1') == 1 then
      call('RPUSH', rot, '')
    end
  end
  return was_empty
end
