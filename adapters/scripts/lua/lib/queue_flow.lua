-- queue_flow.lua -- included by queue scripts (--#include queue_flow), after
-- queue_int: the pending sets of groups, their rotation and the flow
-- limits (docs/queue.md, "Flow control"). Expects `call` and `tag`.
--
-- Pending sets: the jobs without a group wait in T:pending (a list, the
-- default priority) and T:pending:prio (a zset, the others); the jobs of
-- group g in T:gp:<g> and T:gz:<g>, the same way. T:groups, the rotation,
-- is a list that holds each group whose set is not empty once, and "" for
-- the jobs without a group while it holds a group: a claim takes from the
-- sets at its head and moves them to its tail (lib/queue_claim.lua).
-- A set leaves the rotation when a claim, a cancel or a purge empties it.
--
-- Limits and flow state: the hash T:limits holds the limits (rate_max,
-- rate_ms, grate_max, grate_ms, conc, gconc), the hold of the whole queue
-- (hold: unix ms), "weighted" while a group has a weight (T:gweight:
-- group -> weight), "slotwait" while a claim waits for a running job to
-- finish, and rl_n, the claims in T:rl, the rate window: a list of
-- "<ms>:<claims>", one per claim call that got jobs, newest first, <ms>
-- being the end of the ms the claim ran in (so that claims rate_ms apart
-- in whole ms are at least rate_ms apart on the finer clock). A
-- group's window is T:grl:<g> and its count in T:grn (group -> n);
-- T:ghold holds groups' holds (group -> unix ms) and T:grun, while a
-- group concurrency limit is set, each group's running jobs.

-- The pending list and zset of group g ('' for the jobs without a group).
local function pend_keys(g)
  if g == '' then return tag .. ':pending', tag .. ':pending:prio' end
  return tag .. ':gp:' .. g, tag .. ':gz:' .. g
end

-- Adds jobs to the pending set of group g: `list` to its list (at its head
-- in the order given when `front`; LPUSH reverses, so pass them
-- reversed), `zp` (score, id pairs) to its zset. A set that was empty
-- joins the rotation: a group's always, the set without a group while a
-- group is in it (with the first group, a set without a group that holds
-- jobs joins too). Returns whether the set was empty.
local function pend_add(g, list, zp, front)
  local l, z = pend_keys(g)
  local was_empty = call('EXISTS', l, z) == 0
  if #list > 0 then call(front and 'LPUSH' or 'RPUSH', l, unpack(list)) end
  if #zp > 0 then call('ZADD', z, unpack(zp)) end
  if was_empty and (#list > 0 or #zp > 0) then
    local rot = tag .. ':groups'
    if g ~= '' then
      if call('EXISTS', rot) == 0 and
          call('EXISTS', tag .. ':pending', tag .. ':pending:prio') > 0 then
        call('RPUSH', rot, '', g)
      else
        call('RPUSH', rot, g)
      end
    elseif call('EXISTS', rot) == 1 then
      call('RPUSH', rot, '')
    end
  end
  return was_empty
end

-- After jobs left group g's set other than by a claim (a cancel, a
-- purge): takes the set out of the rotation when it is empty.
local function pend_left(g)
  local l, z = pend_keys(g)
  if call('EXISTS', l, z) == 0 then call('LREM', tag .. ':groups', 1, g) end
end

-- The claims a rate window holds at `now`: drops from window `key` (a
-- list of "<ms>:<n>", newest first) the entries older than `ms`, given
-- `count`, what it held. Returns what it holds now and the time of its
-- oldest entry left (nil: none).
local function window_trim(key, count, ms, now)
  local cut = now - ms
  while count > 0 do
    local tail = call('LRANGE', key, -8, -1)
    if #tail == 0 then return 0, nil end
    local drop = 0
    for x = #tail, 1, -1 do
      local t, k = string.match(tail[x], '^(%d+):(%d+)$')
      t = tonumber(t)
      if t and t > cut then
        if drop > 0 then call('LTRIM', key, 0, -drop - 1) end
        return count, t
      end
      drop = drop + 1
      count = count - (tonumber(k) or 0)
    end
    call('LTRIM', key, 0, -drop - 1)
    if count < 0 then count = 0 end
  end
  call('DEL', key)
  return 0, nil
end

-- Holds the claims of group g ('': the queue) until `until_ms`, unless a
-- later hold is set.
local function flow_hold(g, until_ms)
  local h, f = tag .. ':ghold', g
  if g == '' then h, f = tag .. ':limits', 'hold' end
  local cur = tonumber(call('HGET', h, f))
  if not cur or cur < until_ms then
    call('HSET', h, f, string.format('%d', until_ms))
  end
end

-- The group of a claim value "<token>\0<attempt>\0<deadline>[\0<group>]",
-- '' for none.
local function claim_group(v)
  local p = string.find(v, '\0', 1, true)
  p = p and string.find(v, '\0', p + 1, true)
  p = p and string.find(v, '\0', p + 1, true)
  return p and string.sub(v, p + 1) or ''
end

-- Claims of groups that ended (claim values `vals`, a list): counts them
-- down in T:grun while it is kept (a group concurrency limit), and wakes
-- the workers when a claim waits for a slot. Call it after the claims went.
local function flow_ended(vals)
  if #vals == 0 then return end
  if call('EXISTS', tag .. ':grun') == 1 then
    local by = {}
    for _, v in ipairs(vals) do
      local g = claim_group(v)
      if g ~= '' then by[g] = (by[g] or 0) + 1 end
    end
    for g, k in pairs(by) do
      if call('HINCRBY', tag .. ':grun', g, -k) <= 0 then
        call('HDEL', tag .. ':grun', g)
      end
    end
  end
  if call('HDEL', tag .. ':limits', 'slotwait') == 1 then
    publish_wake(tag .. ':jobs:wake', 'wake')
  end
end
