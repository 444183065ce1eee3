-- cron_fire_many.lua -- claims occurrences of many callback definitions
-- (no queue, no pool target) of one namespace in one call, by the server
-- clock: for each definition, what cron_fire.lua does for one
-- (lib/cron_claim.lua), so that the definitions that come due together on
-- a node share one call, one server reading and one round trip. Of all
-- the nodes that send the same occurrence, exactly one gets it. A fenced
-- op (adapters/backend.h): its last ARGV is the failover epoch.
-- KEYS: T, the occurrences' tag (cron_occ.lua), of each definition in
--   turn (on a Redis Cluster, all in one slot).
-- ARGV: ns, node, keep_count, keep_age_ms, ahead_ms (an occurrence up to
--   this long after the server's time is due: the node claims ahead and
--   hands it out at its time; at most 60000), then 7 per definition: key,
--   min_token, max_fires (0: no limit), gen (the definition's creation
--   ms), start_ms, end_ms (0: none), and its occurrences, in increasing
--   fire time, each "<fire_ms><act>" (act 'f' to fire, 'm' to log as
--   missed), joined by ','; last, the failover epoch, which the adapter
--   appends (lib/fence.lua).
-- Returns: {now_ms, then per definition {the fires counted (0 without a
--   limit), then status, token per occurrence}}, the statuses of
--   cron_fire.lua (-1: later than now_ms + ahead_ms). A fire claimed
--   ahead is logged as dispatched at its fire time.
--#include cron_int
--#include cron_occ
--#include fence
--#include cron_claim
local ns, node = ARGV[1], ARGV[2]
local keep, age = tonumber(ARGV[3]), tonumber(ARGV[4])
local now = now_ms()
local now_s = string.format('%d', now)
local ahead = math.min(math.max(tonumber(ARGV[5]) or 0, 0), 60000)
-- The latest fire time due (as a decimal: a losing node compares with it).
local due_s = ahead > 0 and string.format('%d', now + ahead) or now_s
local res = {now}
-- The answer for a definition whose occurrence another node logged (one
-- table for all of them).
local LOST = {0, 0, 0}
for d = 1, #KEYS do
  local a = 5 + 7 * (d - 1)
  local key, occ = ARGV[a + 1], ARGV[a + 7]
  local max, st = dec_num(ARGV[a + 3]), ARGV[a + 5]
  -- The common case first: one occurrence to fire, no limit, due and not
  -- before start: the ZADD NX that logs it tells a losing node that
  -- another has (its one command); the winner goes on with it logged.
  -- (Compared as decimals: a losing node converts no number. One
  -- occurrence is told by its last byte and the lack of a comma, not by
  -- a pattern, which Lua matches a character class at a time.)
  local one = max == 0 and #occ > 1 and string.byte(occ, -1) == 102 and
              not string.find(occ, ',', 1, true) and string.sub(occ, 1, -2)
  local added, occ_key
  if one and dec_ge(due_s, one) and (st == '0' or dec_ge(one, st)) then
    -- (S:occ in one string: a losing node makes no other.)
    occ_key = KEYS[d] .. ':cron:' .. ns .. ':' .. key .. ':occ'
    added = redis.call('ZADD', occ_key, 'NX', one, one) == 1 and one
  end
  if one and added == false then
    res[d + 1] = LOST
  else
    local S = KEYS[d] .. ':cron:' .. ns .. ':' .. key
    local times, acts = {}, {}
    for t, act in string.gmatch(occ, '(%d+)([fm])') do
      times[#times + 1], acts[#acts + 1] = t, act
    end
    local out = {0}
    out[1] = cron_claim({S = S, node = node, keep = keep, age = age,
                         mintok = dec_num(ARGV[a + 2]), target = '',
                         max = max, gen = ARGV[a + 4],
                         start = dec_num(st), stop = dec_num(ARGV[a + 6]),
                         now = now, now_s = now_s, ahead = ahead,
                         times = times, acts = acts, added = added,
                         occ = occ_key}, out)
    res[d + 1] = out
  end
end
return res
