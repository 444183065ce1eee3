-- pool_requeue.lua -- the owner of a job hands it back to the pool to be
-- started again after a backoff (pulse's ErrRequeue), presenting its token:
-- from its start, in place of the start's report, or from a stop the pool
-- asked for (stop or move). The job waits in state q, without an owner,
-- until its due time by the server clock; then the next rebalance places it
-- like an orphan (pool_move). The requeues of a job are counted until a
-- start reports success; one past the most allowed drops the job instead.
-- KEYS[1]: the pool's hash tag. Parts: jobs, pay, disp, next, wj:<worker>,
--          rq (job key -> requeues in a row), rqd (job key -> due server
--          ms), ev:<dispatcher>.
-- ARGV[1]: job key. ARGV[2]: worker id. ARGV[3]: token. ARGV[4]: "s" from
--          a start, "x" from a stop. ARGV[5]: the most requeues in a row.
--          ARGV[6]: the backoff of the first requeue in ms, doubled for each
--          one after it, at most 60000 (or ARGV[6] when larger).
-- Returns: {1, requeues in a row, delay ms} requeued; {2, requeues in a
--   row, 0} dropped: the job had been requeued ARGV[5] times in a row, it
--   left the pool and a dispatcher still waiting hears FLEET_EATTEMPTS
--   (-32); {0, 0, 0} when the token is stale or the job is not being
--   started (from a start) or stopped (from a stop): nothing changed.
--#include pool_int
local key, worker, token = ARGV[1], ARGV[2], ARGV[3]
local t, s, w = job(key)
if not t or t ~= token or w ~= worker or
    (s ~= 'm' and s ~= (ARGV[4] == 's' and 's' or 'x')) then
  return {0, 0, 0}
end
redis.call('SREM', T .. ':wj:' .. w, key)
redis.call('HDEL', T .. ':next', key)
local n = redis.call('HINCRBY', T .. ':rq', key, 1)
if n > tonumber(ARGV[5]) then
  local from = redis.call('HGET', T .. ':disp', key)
  if from and from ~= '' then
    push(from, 'r', key, w, t, '-32', '')
  end
  redis.call('HDEL', T .. ':jobs', key)
  redis.call('HDEL', T .. ':pay', key)
  redis.call('HDEL', T .. ':disp', key)
  redis.call('HDEL', T .. ':rq', key)
  return {2, n - 1, 0}
end
local base = tonumber(ARGV[6])
local delay = base
for _ = 2, math.min(n, 32) do
  delay = delay * 2
end
delay = math.min(delay, math.max(base, 60000))
set_job(key, t, 'q', '')
redis.call('ZADD', T .. ':rqd', now_ms() + delay, key)
return {1, n, delay}
