-- pool_worker_remove.lua -- removes one worker from its pool, in two steps.
-- "d" (drain): the worker leaves the membership, so that every node's
-- rebalance moves its jobs away through the usual stop-then-start; it stays
-- known (wnode, wj) so that its stop confirmations still move them. "f"
-- (forget): the worker is gone; the jobs it still holds (their move did not
-- finish in the shutdown TTL) lose their owner and the nodes place them
-- again; one it was asked to stop leaves the pool.
-- KEYS[1]: the pool's hash tag. Parts: id:<node>, workers, wnode, nw:<node>,
--          wj:<worker>, jobs, next, rev, nodes, ev:<node>.
-- ARGV[1]: node id. ARGV[2]: worker id. ARGV[3]: "d" or "f". ARGV[4]: the
--          node's instance nonce.
-- Returns: "d": 1, or 0 when the worker was not a member; "f": the number of
--   jobs orphaned. 0, with nothing changed, when another live instance holds
--   the node's id (the worker ids are that instance's now).
--#include pool_int
local node, worker = ARGV[1], ARGV[2]
if id_state(node, ARGV[4]) == 'other' or
    redis.call('HGET', T .. ':wnode', worker) ~= node then
  return 0
end
if ARGV[3] == 'd' then
  if redis.call('ZREM', T .. ':workers', worker) == 0 then
    return 0
  end
  redis.call('INCR', T .. ':rev')
  broadcast()
  return 1
end
local wj = T .. ':wj:' .. worker
local keys = redis.call('SMEMBERS', wj)
local n = 0
for i = 1, #keys do
  local key = keys[i]
  local t, s, w = job(key)
  if t and w == worker and s == 'x' then
    -- A job being stopped on request leaves the pool, as its stop
    -- confirmation would have made it; a waiting dispatcher hears
    -- FLEET_ECANCELED (-5).
    local from = redis.call('HGET', T .. ':disp', key)
    if from and from ~= '' then
      push(from, 'r', key, w, t, '-5', '')
    end
    redis.call('HDEL', T .. ':jobs', key)
    redis.call('HDEL', T .. ':pay', key)
    redis.call('HDEL', T .. ':disp', key)
    redis.call('HDEL', T .. ':next', key)
    redis.call('HDEL', T .. ':rq', key)
  elseif t and w == worker then
    set_job(key, t, 'o', '')
    redis.call('HDEL', T .. ':next', key)
    n = n + 1
  end
end
redis.call('DEL', wj)
redis.call('ZREM', T .. ':workers', worker)
redis.call('HDEL', T .. ':wnode', worker)
redis.call('SREM', T .. ':nw:' .. node, worker)
broadcast()
return n
