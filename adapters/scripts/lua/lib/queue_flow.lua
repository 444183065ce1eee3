-- queue_flow.lua -- included by queue scripts (--#include queue_flow), after
-- queue_int: flow_hold() and opts_group(), and the keys of flow control
-- (docs/queue.md, "Flow control"): what lib/queue_pend.lua (the pending
-- sets), lib/queue_freed.lua (claims that end) and lib/queue_claim.lua
-- (the checks, the rotation) share. Expects `call` and `tag`.
--
-- Pending sets: the jobs without a group wait in T:pending (a list, the
-- default priority) and T:pending:prio (a zset, the others); the jobs of
-- group g in T:gp:<g> and T:gz:<g>, the same way. T:groups, the rotation,
-- is a list that holds each group whose set is not empty once, and "" for
-- the jobs without a group while it holds a group: a claim takes from the
-- sets at its head and moves them to its tail (lib/queue_claim.lua).
-- T:grot (set -> 1) tells the rotation's members, so that a set joins it
-- once. A set leaves it when a claim's turn finds it empty: a claim that
-- takes a group's last job with one LPOP cannot tell (lib/queue_claim.lua),
-- nor can a cancel, so an emptied set may stay until its next turn. A
-- pending
-- job's group is the set it waits in: no record per job names it (a
-- pending job of a group costs what one without does, one list element
-- more in its group's list rather than T:pending). T:opts names it
-- ("<prio>\0<backoff>\0<unique>\0<group>") only for a job that has
-- options anyway, is delayed (its promotion needs the group) or went
-- back to wait for a retry or died (opts_group): a claim's value names
-- it while it runs.
--
-- Limits and flow state: the hash T:limits holds the limits (rate_max,
-- rate_ms, grate_max, grate_ms, conc, gconc), the hold of the whole queue
-- (hold: unix ms), "gprio" once a group had jobs of a priority (claims
-- then look for groups' zsets), "weighted" while a group has a weight
-- (T:gweight:
-- group -> weight), "slotwait" while a claim waits for a running job to
-- finish, and rl_n, the claims in T:rl, the rate window: a list of
-- "<ms>:<claims>", one per claim call that got jobs, newest first, <ms>
-- being the end of the ms the claim ran in (so that claims rate_ms apart
-- in whole ms are at least rate_ms apart on the finer clock). A
-- group's window is T:grl:<g> and its count in T:grn (group -> n);
-- T:ghold holds groups' holds (group -> unix ms; T:limits "ghold" is set
-- with the first, and goes when a claim finds T:ghold empty: claims read
-- T:ghold only then) and T:grun, while a group concurrency limit is set,
-- each group's running jobs; T:limits "gleft", "<jobs>:<group>", the jobs
-- left of the turn a full claim cut (the group stays at the rotation's
-- head for the next claim, which reads it with the limits).

--#include queue_freed

-- Holds the claims of group g ('': the queue) until `until_ms`, unless a
-- later hold is set.
local function flow_hold(g, until_ms)
  local h, f = tag .. ':ghold', g
  if g == '' then h, f = tag .. ':limits', 'hold' end
  local cur = tonumber(call('HGET', h, f))
  if not cur or cur < until_ms then
    call('HSET', h, f, string.format('%d', until_ms))
    -- (Claims read T:ghold only while T:limits says it may hold one.)
    if g ~= '' then call('HSET', tag .. ':limits', 'ghold', '1') end
  end
end

-- Writes group g ('': none, nothing to do) into the options of job `id`,
-- whose options record is `o` (nil: none), unless they hold it: a job
-- leaving its group's pending set other than by a claim (delayed for a
-- retry, dead) keeps its group there.
local function opts_group(id, o, g)
  if g == '' then return end
  if not o then
    call('HSET', tag .. ':opts', id, '\0\0\0' .. g)
    return
  end
  local i = string.find(o, '\0', 1, true)
  local j = i and string.find(o, '\0', i + 1, true)
  if j and not string.find(o, '\0', j + 1, true) then
    call('HSET', tag .. ':opts', id, o .. '\0' .. g)
  end
end
