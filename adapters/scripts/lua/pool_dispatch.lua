-- pool_dispatch.lua -- admits jobs and assigns each to the worker the caller
-- chose by consistent hashing over the membership it read, in one step: of
-- two dispatches of one key, exactly one passes. One call carries the
-- dispatches a client made in one loop phase, each handled as if alone, in
-- order; the writes of all of them go in one command per hash, per worker
-- and per receiving node. A fenced op (adapters/backend.h): its last ARGV
-- is the failover epoch.
-- KEYS[1]: the pool's hash tag. Parts: jobs, pay, disp, wj:<worker>,
--          fence, wnode, id:<node>, nodes, rev, life, ev:<node> (and those
--          of pool_int's reap).
-- ARGV[1..3]: the dispatching node's id, its instance nonce, and the token
--       of a start result it handled from its wake-up message ("0":
--       none; src/pool/pool_events.c): that result is taken from the head
--       of the node's event list (ev:<node>), as the node's read would
--       take it, so that the node need not read.
-- ARGV[4..]: six per job: job key, payload, the membership revision the
--       choice was made on, the chosen worker, the dispatching node
--       (which gets the start's result), the most jobs the pool holds (0:
--       no limit).
-- ARGV[#ARGV]: the failover epoch, which the adapter appends (lib/fence.lua).
-- Returns: two integers, then two per job, in order. First: 1 when the
--   start result was taken (else 0: none asked, or not at the head: a
--   read took it), and 1 when events are left in the node's list, else
--   0; or 0, -1 when another live instance holds the node's id (nothing
--   taken). Per job: {1, token} admitted; {0, 0} the key is in the pool
--   already; {-1, 0} the membership changed, or the chosen worker's node
--   is gone (read it again and retry: a key already in the pool is told
--   then); {-2, 0} the pool holds its most jobs.
--#include pool_int
local n = math.floor((#ARGV - 4) / 6)
if n < 1 or #ARGV ~= 6 * n + 4 then
  error({err = 'FLEET_EPROTO pool_dispatch takes six arguments per job'})
end
-- What the jobs of the call share, read once: the revision, the jobs held
-- (when there is a limit), each worker's node and whether it is live. A
-- removal of lapsed nodes (reap) changes them all: read again after one.
local cur, held, wn, live
local function forget()
  cur, held, wn, live = nil, nil, {}, {}
end
forget()
-- The writes of the jobs admitted so far, done at the end or before a
-- removal of lapsed nodes (which must find every job of their workers).
local pay, disp, wj, wjo, evs, evo
local function flush()
  if pay ~= nil and #pay > 0 then
    redis.call('HSET', T .. ':pay', unpack(pay))
    redis.call('HSET', T .. ':disp', unpack(disp))
    for _, w in ipairs(wjo) do
      redis.call('SADD', T .. ':wj:' .. w, unpack(wj[w]))
    end
    for _, node in ipairs(evo) do
      push_many(node, evs[node])
    end
  end
  pay, disp, wj, wjo, evs, evo = {}, {}, {}, {}, {}, {}
end
flush()

local function reaped(now)
  flush()
  reap(now)
  forget()
end

-- The worker's node must be live by the server clock: its expiry in
-- T:nodes is in the future. The join and every keep-alive set that expiry
-- and the node's id lease (T:id:<node>) to the same time, and the server
-- expires the lease by its clock, so a lease that is there tells a live
-- node in one command (without TIME and ZSCORE); without it, the expiry
-- decides as before (and a lapsed node is removed). Returns the node, or
-- nil after removing the lapsed ones.
local function owner_node(worker)
  local node = wn[worker]
  if node == nil then
    node = redis.call('HGET', T .. ':wnode', worker)
    wn[worker] = node
  end
  if not node then
    reaped(now_ms())
    return nil
  end
  if live[node] == nil then
    live[node] = redis.call('EXISTS', T .. ':id:' .. node) == 1
    if not live[node] then
      local now = now_ms()
      local exp = redis.call('ZSCORE', T .. ':nodes', node)
      if not exp or tonumber(exp) <= now then
        reaped(now)
        return nil
      end
      live[node] = true
    end
  end
  return node
end

local function admit(j)
  local key, payload, worker, from = ARGV[j + 1], ARGV[j + 2], ARGV[j + 4],
                                     ARGV[j + 5]
  if cur == nil then
    cur = rev()
  end
  if cur ~= tonumber(ARGV[j + 3]) then
    return -1, 0
  end
  local max = tonumber(ARGV[j + 6])
  if max > 0 then
    if held == nil then
      held = redis.call('HLEN', T .. ':jobs')
    end
    if held >= max then
      return redis.call('HEXISTS', T .. ':jobs', key) == 1 and 0 or -2, 0
    end
  end
  local node = owner_node(worker)
  if not node then
    return -1, 0
  end
  -- The job's record is written only when the key is not in the pool (the
  -- write is the check); a token taken for a key already there is skipped,
  -- which fencing allows (tokens only grow).
  -- (The token as a decimal string, made once for its four uses: a number
  -- would be formatted with "%.17g" each time.)
  local t = next_token()
  local ts = string.format('%d', t)
  if redis.call('HSETNX', T .. ':jobs', key, ts .. ':s:' .. worker) == 0 then
    return 0, 0
  end
  if held ~= nil then
    held = held + 1
  end
  pay[#pay + 1], pay[#pay + 2] = key, payload
  disp[#disp + 1], disp[#disp + 2] = key, from
  if not wj[worker] then
    wj[worker] = {}
    wjo[#wjo + 1] = worker
  end
  wj[worker][#wj[worker] + 1] = key
  if not evs[node] then
    evs[node] = {}
    evo[#evo + 1] = node
  end
  local e, m = evs[node], #evs[node]
  e[m + 1], e[m + 2], e[m + 3], e[m + 4], e[m + 5], e[m + 6] =
    's', key, worker, ts, payload, from
  return 1, t
end

-- The start result the dispatching node asks to take, first: a start of
-- the node's own worker admitted below then finds its list empty.
local out, take = {0, 0}, ARGV[3] ~= '0'
-- The revision, T:life and, with a take, the node's id lease in one read.
local pre = pool_read(take and {':rev', ':id:' .. ARGV[1]} or {':rev'})
cur = tonumber(pre[1] or '0')
if take then
  out[1], out[2] = take_head(ARGV[1], ARGV[2], 'r', ARGV[3], pre[2])
end
for i = 1, n do
  local c, t = admit(3 + 6 * (i - 1))
  out[2 * i + 1], out[2 * i + 2] = c, t
end
flush()
return out
