-- pool_notify.lua -- sends a notification to the current owner of a job.
-- KEYS[1]: the pool's hash tag. Parts: jobs, wnode, ev:<node>.
-- ARGV[1]: job key. ARGV[2]: payload.
-- Returns: 1 sent; 0 no such job; -1 the job has no owner right now.
--#include pool_int
local t, s, w = job(ARGV[1])
if not t then
  return 0
end
local node = w ~= '' and redis.call('HGET', T .. ':wnode', w)
if not node then
  return -1
end
push(node, 'n', ARGV[1], w, t, ARGV[2], '')
return 1
