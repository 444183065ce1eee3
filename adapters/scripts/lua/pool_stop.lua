-- pool_stop.lua -- asks the owner of a job to stop it; the job leaves the
-- pool when the owner confirms (pool_stopped), or at once when it has no
-- owner (orphaned, or requeued): then a dispatcher still waiting for its
-- start hears FLEET_ECANCELED (-5).
-- KEYS[1]: the pool's hash tag. Parts: jobs, pay, disp, next, wnode, rq,
--          rqd, ev:<node>.
-- ARGV[1]: job key.
-- Returns: 1, or 0 when there is no such job.
--#include pool_int
local key = ARGV[1]
local t, s, w = job(key)
if not t then
  return 0
end
redis.call('HDEL', T .. ':next', key)
local node = w ~= '' and redis.call('HGET', T .. ':wnode', w)
if not node then
  local from = redis.call('HGET', T .. ':disp', key)
  if from and from ~= '' then
    push(from, 'r', key, w, t, '-5', '')
  end
  redis.call('HDEL', T .. ':jobs', key)
  redis.call('HDEL', T .. ':pay', key)
  redis.call('HDEL', T .. ':disp', key)
  redis.call('HDEL', T .. ':rq', key)
  redis.call('ZREM', T .. ':rqd', key)
  return 1
end
if s ~= 'x' then
  set_job(key, t, 'x', w)
  push(node, 'x', key, w, t, 'stop', '')
end
return 1
