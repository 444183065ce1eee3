-- pool_started.lua -- the owner of a job reports its start's result,
-- presenting its token; the dispatcher is told.
-- KEYS[1]: the pool's hash tag. Parts: jobs, pay, disp, next,
--          wj:<worker>, rq, ev:<dispatcher>.
-- ARGV[1]: job key. ARGV[2]: worker id. ARGV[3]: token. ARGV[4]: the
--          start's status, "0" for success or a negative fleet error;
--          a failed start removes the job. Either ends the job's count of
--          requeues in a row (rq, pool_requeue).
-- Returns: 1, or 0 when the token is stale (nothing changed).
--#include pool_int
local key, worker, token = ARGV[1], ARGV[2], ARGV[3]
local t, s, w = job(key)
if not t or t ~= token or w ~= worker then
  return 0
end
local from = redis.call('HGET', T .. ':disp', key)
redis.call('HDEL', T .. ':disp', key)
redis.call('HDEL', T .. ':rq', key)
if ARGV[4] ~= '0' then
  redis.call('HDEL', T .. ':jobs', key)
  redis.call('HDEL', T .. ':pay', key)
  redis.call('HDEL', T .. ':next', key)
  redis.call('SREM', T .. ':wj:' .. w, key)
elseif s == 's' then
  set_job(key, t, 'r', w)
end
if from and from ~= '' then
  push(from, 'r', key, w, t, ARGV[4], '')
end
return 1
