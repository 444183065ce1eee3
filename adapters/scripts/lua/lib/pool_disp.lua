-- pool_disp.lua -- included by pool_dispatch.lua (--#include pool_disp),
-- after pool_int: the dispatch's steps and its state. In a lib, the
-- functions are made once, when the Redis 7 function library loads
-- (cmake/embed_lua.cmake), rather than at every call as closures of the
-- script's body; the state is set to nil at the start of each call, and
-- disp_start() makes its tables. Expects `T`, `ARGV` and pool_int's
-- helpers.

-- What the jobs of the call share, read once: the revision, the jobs held
-- (when there is a limit), each worker's node and whether it is live. A
-- removal of lapsed nodes (reap) changes them all: read again after one.
local cur, held, wn, live
local function forget()
  cur, held, wn, live = nil, nil, {}, {}
end
-- The writes of the jobs admitted so far, done at the end or before a
-- removal of lapsed nodes (which must find every job of their workers).
local pay, disp, wj, wjo, evs, evo
-- Writes what the jobs admitted so far hold, unless `last`, ready for more.
local function flush(last)
  if pay ~= nil and #pay > 2 then
    redis.call('HSET', T .. ':pay', unpack(pay))
    redis.call('HSET', T .. ':disp', unpack(disp))
    for _, w in ipairs(wjo) do
      redis.call('SADD', T .. ':wj:' .. w, unpack(wj[w]))
    end
    for _, node in ipairs(evo) do
      push_many(node, evs[node])
    end
  end
  -- (Each write starts with the mark: HASH_MARK, lib/pool_int.lua.)
  if not last then
    pay, disp = {'', HASH_MARK}, {'', HASH_MARK}
    wj, wjo, evs, evo = {}, {}, {}, {}
  end
end

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
      -- (The mark is no job: HASH_MARK, lib/pool_int.lua.)
      held = redis.call('HLEN', T .. ':jobs') -
               redis.call('HEXISTS', T .. ':jobs', '')
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
  ev_add(evs, evo, node, 's', key, worker, ts, payload, from)
  return 1, t
end

-- The state of a call, at its start.
local function disp_start()
  forget()
  flush()
end
