-- pool_stopped.lua -- the owner of a job confirms it stopped it, presenting
-- its token. A job being stopped leaves the pool; a job being moved starts on
-- its next owner; any other job is orphaned for the pool to place again. A
-- fenced op (adapters/backend.h): its last ARGV is the failover epoch.
-- KEYS[1]: the pool's hash tag. Parts: jobs, pay, disp, next, wnode,
--          workers, wj:<worker>, fence, nodes, rq, ev:<node>.
-- ARGV[1]: job key. ARGV[2]: worker id. ARGV[3]: token. ARGV[4]: the
--          status a dispatcher still waiting for the start gets when the
--          job leaves the pool.
-- ARGV[#ARGV]: the failover epoch, which the adapter appends (lib/fence.lua).
-- Returns: 1, or 0 when the token is stale (nothing changed).
--#include pool_int
local key, worker, token = ARGV[1], ARGV[2], ARGV[3]
local t, s, w = job(key)
if not t or t ~= token or w ~= worker then
  return 0
end
redis.call('SREM', T .. ':wj:' .. w, key)
if s == 'x' then
  -- The job leaves the pool; a dispatcher still waiting hears ARGV[4].
  local from = redis.call('HGET', T .. ':disp', key)
  if from and from ~= '' then
    push(from, 'r', key, w, t, ARGV[4], '')
  end
  redis.call('HDEL', T .. ':disp', key)
  redis.call('HDEL', T .. ':jobs', key)
  redis.call('HDEL', T .. ':pay', key)
  redis.call('HDEL', T .. ':rq', key)
  return 1
end
-- A moved or orphaned job keeps its dispatcher: the next owner's start
-- answers it.
local nw = s == 'm' and redis.call('HGET', T .. ':next', key)
redis.call('HDEL', T .. ':next', key)
local node = nw and redis.call('HGET', T .. ':wnode', nw)
if node then
  local nt = next_token()
  set_job(key, nt, 's', nw)
  redis.call('SADD', T .. ':wj:' .. nw, key)
  push(node, 's', key, nw, nt, redis.call('HGET', T .. ':pay', key) or '', '')
else
  set_job(key, t, 'o', '')
  broadcast()
end
return 1
