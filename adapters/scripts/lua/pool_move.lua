-- pool_move.lua -- applies a rebalance computed by a node over the membership
-- revision it read: an orphaned job, or a requeued one whose backoff ended
-- by the server clock (pool_requeue), starts on its new owner; a job whose
-- owner changed is asked to stop, and starts on the new owner once the old
-- one confirms (pool_stopped). A fenced op (adapters/backend.h): its last
-- ARGV is the failover epoch.
-- KEYS[1]: the pool's hash tag. Parts: jobs, pay, next, wnode, workers,
--          wj:<worker>, fence, rev, rqd, ev:<node>.
-- ARGV[1]: the membership revision. ARGV[2..]: triples of job key, the
--          token the node saw, the new owner.
-- ARGV[#ARGV]: the failover epoch, which the adapter appends (lib/fence.lua).
-- Returns: {the number of jobs moved, the ms until the first requeued job
--   of the triples that is not due yet will be (0: none)}, or {-1, 0} when
--   the membership changed (nothing changed).
--#include pool_int
if rev() ~= tonumber(ARGV[1]) then
  return {-1, 0}
end
local n, wait, now = 0, 0, now_ms()
for i = 2, #ARGV - 1, 3 do
  local key, tok, nw = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local t, s, w = job(key)
  local node = redis.call('HGET', T .. ':wnode', nw)
  local due = 0
  if s == 'q' then
    due = tonumber(redis.call('ZSCORE', T .. ':rqd', key) or '0') - now
    if due > 0 and (wait == 0 or due < wait) then
      wait = due
    end
  end
  if t and t == tok and w ~= nw and node then
    if s == 'o' or (s == 'q' and due <= 0) then
      if s == 'q' then
        redis.call('ZREM', T .. ':rqd', key)
      end
      local nt = next_token()
      set_job(key, nt, 's', nw)
      redis.call('SADD', T .. ':wj:' .. nw, key)
      push(node, 's', key, nw, nt, redis.call('HGET', T .. ':pay', key) or '',
           '')
      n = n + 1
    elseif s == 's' or s == 'r' then
      set_job(key, t, 'm', w)
      redis.call('HSET', T .. ':next', key, nw)
      push(redis.call('HGET', T .. ':wnode', w), 'x', key, w, t, 'move', '')
      n = n + 1
    end
  end
end
return {n, wait}
