-- pool_worker_jobs.lua -- the jobs one worker of the pool owns (pulse's
-- Worker.Jobs), with their owner records, read from the worker's set.
-- KEYS[1]: the pool's hash tag. Parts: wj:<worker>, jobs.
-- ARGV[1]: worker id.
-- Returns: {key_1, "<token>:<state>:<worker>", key_2, ...}, empty when the
--   worker owns no job or is not in the pool.
local T = KEYS[1]
local keys = redis.call('SMEMBERS', T .. ':wj:' .. ARGV[1])
local r = {}
for i = 1, #keys do
  local v = redis.call('HGET', T .. ':jobs', keys[i])
  if v and string.match(v, '^%d+:%a:(.*)$') == ARGV[1] then
    r[#r + 1] = keys[i]
    r[#r + 1] = v
  end
end
return r
