-- pool_dispatch.lua -- admits a job and assigns it to the worker the caller
-- chose by consistent hashing over the membership it read, in one step: of
-- two dispatches of one key, exactly one passes. A fenced op
-- (adapters/backend.h): its last ARGV is the failover epoch.
-- KEYS[1]: the pool's hash tag. Parts: jobs, pay, disp, wj:<worker>,
--          fence, wnode, id:<node>, nodes, rev, ev:<node> (and those of
--          pool_int's reap).
-- ARGV[1]: job key. ARGV[2]: payload. ARGV[3]: the membership revision the
--          choice was made on. ARGV[4]: the chosen worker. ARGV[5]: the
--          dispatching node, which gets the start's result. ARGV[6]: the
--          most jobs the pool holds (0: no limit).
-- ARGV[#ARGV]: the failover epoch, which the adapter appends (lib/fence.lua).
-- Returns: {1, token} admitted; {0, 0} the key is in the pool already; {-1,
--   0} the membership changed, or the chosen worker's node is gone (read it
--   again and retry: a key already in the pool is told then); {-2, 0} the
--   pool holds its most jobs.
--#include pool_int
local key, worker = ARGV[1], ARGV[4]
if rev() ~= tonumber(ARGV[3]) then
  return {-1, 0}
end
local max = tonumber(ARGV[6])
if max > 0 and redis.call('HLEN', T .. ':jobs') >= max then
  return {redis.call('HEXISTS', T .. ':jobs', key) == 1 and 0 or -2, 0}
end
-- The worker's node must be live by the server clock: its expiry in
-- T:nodes is in the future. The join and every keep-alive set that expiry
-- and the node's id lease (T:id:<node>) to the same time, and the server
-- expires the lease by its clock, so a lease that is there tells a live
-- node in one command (without TIME and ZSCORE); without it, the expiry
-- decides as before (and a lapsed node is removed).
local node = redis.call('HGET', T .. ':wnode', worker)
if not node then
  reap(now_ms())
  return {-1, 0}
end
if redis.call('EXISTS', T .. ':id:' .. node) == 0 then
  local now = now_ms()
  local exp = redis.call('ZSCORE', T .. ':nodes', node)
  if not exp or tonumber(exp) <= now then
    reap(now)
    return {-1, 0}
  end
end
-- The job's record is written only when the key is not in the pool (the
-- write is the check); a token taken for a key already there is skipped,
-- which fencing allows (tokens only grow).
local t = next_token()
if redis.call('HSETNX', T .. ':jobs', key, t .. ':s:' .. worker) == 0 then
  return {0, 0}
end
redis.call('HSET', T .. ':pay', key, ARGV[2])
redis.call('HSET', T .. ':disp', key, ARGV[5])
redis.call('SADD', T .. ':wj:' .. worker, key)
push(node, 's', key, worker, t, ARGV[2], ARGV[5])
return {1, t}
