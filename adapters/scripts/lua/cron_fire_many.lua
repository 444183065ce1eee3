-- cron_fire_many.lua -- claims occurrences of many callback definitions
-- (no queue, no pool target) of one namespace in one call, by the server
-- clock: for each definition, what cron_fire.lua does for one
-- (lib/cron_claim.lua), so that the definitions that come due together on
-- a node share one call, one server reading and one round trip. Of all
-- the nodes that send the same occurrence, exactly one gets it. A fenced
-- op (adapters/backend.h): its last ARGV is the failover epoch.
-- KEYS: S:occ (lib/cron_occ.lua) of each definition in turn, S =
--   "T:cron:<ns>:<key>" under the occurrences' tag T (on a Redis Cluster,
--   all in one slot): the one key a losing node touches, sent whole so
--   that the script builds no key for it.
-- ARGV: node, keep_count, keep_age_ms, ahead_ms (an occurrence up to this
--   long after the server's time is due: the node claims ahead and hands
--   it out at its time; at most 60000), then 2 per definition: its
--   occurrences, in increasing fire time, each "<fire_ms><act>" (act 'f'
--   to fire, 'm' to log as missed), joined by ','; and its bounds, either
--   "<min_token>" alone (no fire limit, no start, no end: the usual) or
--   "<min_token>:<max_fires>:<gen>:<start_ms>:<end_ms>" (max_fires 0: no
--   limit; gen, the definition's creation ms; start_ms, end_ms 0: none);
--   last, the failover epoch, which the adapter appends (lib/fence.lua).
-- Returns: {now_ms, then per definition its answer}: for one occurrence
--   without a fire limit, one integer: its token (> 0) when it fired, else
--   0, -1, -2 or -3 for the statuses 0, -1, 2 and 3; otherwise {the fires
--   counted, then status, token per occurrence}. The statuses are
--   cron_fire.lua's (-1: later than now_ms + ahead_ms). (An integer
--   costs the server's reply far less than a table of three.) A fire
--   claimed ahead is logged as dispatched at its fire time. A key that
--   does not end in ":occ", or bounds of another form, is FLEET_EPROTO:
--   the call stops at that definition, before its first write (those
--   before it are settled).
--#include cron_int
--#include cron_occ
--#include fence
--#include cron_claim
local node = ARGV[1]
local keep, age = tonumber(ARGV[2]), tonumber(ARGV[3])
local now = now_ms()
local now_s = string.format('%d', now)
local ahead = math.min(math.max(tonumber(ARGV[4]) or 0, 0), 60000)
-- The latest fire time due (as a decimal: a losing node compares with it).
local due_s = ahead > 0 and string.format('%d', now + ahead) or now_s
local res = {now}
-- The answer for a definition whose occurrence another node logged.
local LOST = 0
local find, byte, sub = string.find, string.byte, string.sub
for d = 1, #KEYS do
  local occ, bounds = ARGV[3 + 2 * d], ARGV[4 + 2 * d]
  -- The common case first: one occurrence to fire, no limit, no start or
  -- end, due: the ZADD NX that logs it tells a losing node that another
  -- has (its one command); the winner goes on with it logged. (Compared
  -- as decimals: a losing node converts no number. One occurrence is told
  -- by its last byte and the lack of a comma, not by a pattern, which Lua
  -- matches a character class at a time.)
  local occ_key = KEYS[d]
  local c1, c2, c3, c4 = byte(occ_key, -4, -1)
  if c1 ~= 58 or c2 ~= 111 or c3 ~= 99 or c4 ~= 99 then
    error({err = 'FLEET_EPROTO cron_fire_many: a key that is not S:occ'})
  end
  local plain = not find(bounds, ':', 1, true)
  local one = plain and #occ > 1 and byte(occ, -1) == 102 and
              not find(occ, ',', 1, true) and sub(occ, 1, -2)
  local added
  if one and dec_ge(due_s, one) then
    added = redis.call('ZADD', occ_key, 'NX', one, one) == 1 and one
  end
  if one and added == false then
    res[d + 1] = LOST
  else
    local mintok, max, gen, st, stop = bounds, '0', '', '0', '0'
    if not plain then
      mintok, max, gen, st, stop = string.match(bounds,
        '^(%d+):(%d+):(%d+):(%d+):(%d+)$')
      if not mintok then
        error({err = 'FLEET_EPROTO cron_fire_many: bounds of another form'})
      end
    end
    local times, acts
    if one then
      times, acts = {one}, {'f'} -- (no pattern for the one occurrence)
    else
      times, acts = {}, {}
      for t, act in string.gmatch(occ, '(%d+)([fm])') do
        times[#times + 1], acts[#acts + 1] = t, act
      end
    end
    local out = {0}
    out[1] = cron_claim({S = sub(occ_key, 1, -5), node = node, keep = keep,
                         age = age, mintok = dec_num(mintok), target = '',
                         max = dec_num(max), gen = gen,
                         start = dec_num(st), stop = dec_num(stop),
                         now = now, now_s = now_s, ahead = ahead,
                         times = times, acts = acts, added = added,
                         occ = occ_key}, out)
    if #out == 3 and max == '0' then
      -- One occurrence, no limit: one integer.
      local code = out[2]
      res[d + 1] = code == 1 and out[3] or (code == -1 and -1 or -code)
    else
      res[d + 1] = out
    end
  end
end
return res
