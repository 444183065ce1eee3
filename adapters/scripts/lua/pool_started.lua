-- pool_started.lua -- the owners of jobs report their starts' results,
-- presenting their tokens; the dispatchers are told. One call carries the
-- reports a node made in one loop turn (the starts of one event read), in
-- the order they were made: each is handled as if alone, but the reads,
-- deletions and writes of all of them go in one command per hash, and the
-- results for one dispatcher in one RPUSH.
-- KEYS[1]: the pool's hash tag. Parts: jobs, pay, disp, next,
--          wj:<worker>, rq, life, ev:<dispatcher>; with a take, id:<node>
--          and ev:<node>.
-- ARGV: four per report: job key, worker id, token, the start's status,
--       "0" for success or a negative fleet error; a failed start removes
--       the job. Either ends the job's count of requeues in a row (rq,
--       pool_requeue). Then, optionally, three more: the reporting node's
--       id, its instance nonce and the token of a start it handled from
--       its wake-up message (src/pool/pool_events.c): that start is taken
--       from the head of the node's event list (ev:<node>), as the node's
--       read would take it, so that the node need not read.
-- Returns: one integer per report, in order: 1, or 0 when the token is
--   stale (nothing changed for that report); with the three, two more: 1
--   when the start was taken (0: it was not at the head, a read took it),
--   and 1 when events are left in the node's list, else 0; or 0, -1 when
--   another live instance holds the node's id (nothing taken).
--#include pool_int
local n = math.floor(#ARGV / 4)
local take = #ARGV == 4 * n + 3
if n == 0 or (#ARGV ~= 4 * n and not take) then
  error({err = 'FLEET_EPROTO pool_started takes four arguments per report'})
end
local keys = {}
for i = 1, n do
  keys[i] = ARGV[4 * i - 3]
end
-- The records as they stand, then as each report leaves them (a key may
-- come twice, from two assignments): false once deleted.
local rec, disp = {}, {}
local recs = redis.call('HMGET', T .. ':jobs', unpack(keys))
local disps = redis.call('HMGET', T .. ':disp', unpack(keys))
for i = 1, n do
  if rec[keys[i]] == nil then
    rec[keys[i]] = recs[i]
    disp[keys[i]] = disps[i]
  end
end
local out, gone, set, dels, events, order = {}, {}, {}, {}, {}, {}
for i = 1, n do
  local key, worker, token, status = keys[i], ARGV[4 * i - 2],
                                     ARGV[4 * i - 1], ARGV[4 * i]
  local t, s, w
  if rec[key] then
    t, s, w = string.match(rec[key], '^(%d+):(%a):(.*)$')
    if not t then
      error({err = 'FLEET_EPROTO pool job record is malformed'})
    end
  end
  if not t or t ~= token or w ~= worker then
    out[i] = 0
  else
    out[i] = 1
    local from = disp[key]
    disp[key] = false
    dels[#dels + 1] = key
    if status ~= '0' then
      rec[key] = false
      gone[#gone + 1] = key
      redis.call('SREM', T .. ':wj:' .. w, key)
    elseif s == 's' then
      rec[key] = t .. ':r:' .. w
      set[key] = true
    end
    if from and from ~= '' then
      ev_add(events, order, from, 'r', key, w, t, status, '')
    end
  end
end
if #dels > 0 then
  redis.call('HDEL', T .. ':disp', unpack(dels))
  redis.call('HDEL', T .. ':rq', unpack(dels))
end
local hset = {'', HASH_MARK} -- (lib/pool_int.lua)
for key in pairs(set) do
  if rec[key] then
    hset[#hset + 1] = key
    hset[#hset + 1] = rec[key]
  end
end
if #hset > 2 then
  redis.call('HSET', T .. ':jobs', unpack(hset))
end
if #gone > 0 then
  redis.call('HDEL', T .. ':jobs', unpack(gone))
  redis.call('HDEL', T .. ':pay', unpack(gone))
  redis.call('HDEL', T .. ':next', unpack(gone))
end
-- (The take goes first: a result for this node then finds its list
-- empty, and wakes it with the result.)
if take then
  -- The node's id lease and T:life in one read.
  local idv = pool_read({':id:' .. ARGV[4 * n + 1]})[1]
  out[n + 1], out[n + 2] = take_head(ARGV[4 * n + 1], ARGV[4 * n + 2], 's',
                                     ARGV[4 * n + 3], idv)
end
for _, from in ipairs(order) do
  push_many(from, events[from])
end
return out
