-- pool_join.lua -- a node claims its id and joins its pool (once it has
-- workers), or refreshes its workers there, and may re-assert the jobs its
-- workers run (after the pool's data was lost: FLUSHDB, a failover to a
-- replica that missed them): each is admitted with a new token, state r, only
-- when its key is absent. A node with no worker (and not a member) holds the
-- id only. A fenced op (adapters/backend.h): its last ARGV is the failover
-- epoch.
-- KEYS[1]: the pool's hash tag. Parts: id:<node>, nodes, workers, wnode,
--          nw:<node>, wseq, rev, life, jobs, pay, wj:<worker>, fence,
--          ev:<node>, down (and those of pool_int's reap).
-- ARGV[1]: node id. ARGV[2]: the node's instance nonce. ARGV[3]: worker
--          TTL in ms. ARGV[4]: how long an unread event list lives, in ms.
--          ARGV[5]: "1" when the node was in the pool before (it joins
--          again), else "0". ARGV[6]: n, the number of worker ids that
--          follow. ARGV[7..6+n]: the node's worker ids. Then triples: job
--          key, the local worker running it, its payload.
-- ARGV[#ARGV]: the failover epoch, which the adapter appends (lib/fence.lua).
-- Returns: {revision after the join, then per job the new token it was
--   admitted with, or 0 when the key is in the pool already (another owner
--   holds it: the node must give it up)}; or {-1} when the node joins again
--   but a shutdown it has not read yet waits in its event list (the pool
--   shut down: it must not come back; nothing changed). Error
--   FLEET_ECONFLICT, naming the id, when another live instance holds the
--   node's id (nothing changed); error FLEET_ESHUTDOWN when the pool was
--   shut down and not reset since (pool_reset; nothing changed).
--#include pool_int
local node, nonce = ARGV[1], ARGV[2]
if id_state(node, nonce) == 'other' then
  id_conflict(node)
end
if ARGV[5] == '1' then
  local ev = redis.call('LRANGE', T .. ':ev:' .. node, 0, -1)
  for i = 1, #ev, 6 do
    if ev[i] == 'S' then
      return {-1}
    end
  end
end
if redis.call('EXISTS', T .. ':down') == 1 then
  error({err = 'FLEET_ESHUTDOWN pool was shut down: it takes no node ' ..
    'until it is reset (fleet_pool_reset, fleet pool reset)'})
end
local now = now_ms()
local n = tonumber(ARGV[6])
reap(now)
redis.call('SET', T .. ':id:' .. node, nonce, 'PX', ARGV[3])
redis.call('SET', T .. ':life', ARGV[4])
-- A node without workers (client-only, or none added yet) holds its id
-- only; it becomes a member with its first worker.
if n > 0 or redis.call('ZSCORE', T .. ':nodes', node) then
  redis.call('ZADD', T .. ':nodes', now + tonumber(ARGV[3]), node)
end
local added = false
for i = 7, 6 + n do
  local w = ARGV[i]
  if not redis.call('ZSCORE', T .. ':workers', w) then
    redis.call('ZADD', T .. ':workers', redis.call('INCR', T .. ':wseq'), w)
    redis.call('HSET', T .. ':wnode', w, node)
    redis.call('SADD', T .. ':nw:' .. node, w)
    added = true
  end
end
local r = {0}
for i = 7 + n, #ARGV - 1, 3 do
  local key, w = ARGV[i], ARGV[i + 1]
  if redis.call('HEXISTS', T .. ':jobs', key) == 1 or
      redis.call('HGET', T .. ':wnode', w) ~= node then
    r[#r + 1] = 0
  else
    local t = next_token()
    set_job(key, t, 'r', w)
    redis.call('HSET', T .. ':pay', key, ARGV[i + 2])
    redis.call('SADD', T .. ':wj:' .. w, key)
    r[#r + 1] = t
  end
end
if added then
  redis.call('INCR', T .. ':rev')
  broadcast()
end
r[1] = rev()
return r
