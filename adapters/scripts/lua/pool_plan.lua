-- pool_plan.lua -- the bookkeeping of one plan of a pool's schedule: which of
-- its start keys are not in the pool yet (to dispatch; a key in the pool
-- already counts as started), and which keys to stop.
-- KEYS[1]: the pool's hash tag. Parts: jobs; sk:<name>, the set of the
--          keys the schedule started.
-- ARGV[1]: schedule name. ARGV[2]: "a" to stop every key the schedule
--          started that is not in this plan's start list, "r" to forget
--          the schedule's keys (it stopped), else "". ARGV[3]: n, the
--          number of start keys. ARGV[4 .. 3+n]: start keys. ARGV[4+n ..]:
--          keys to stop.
-- Returns: {{indexes (1-based, into the start keys) to dispatch}, {keys to
--   stop}}.
local T = KEYS[1]
local sk = T .. ':sk:' .. ARGV[1]
if ARGV[2] == 'r' then
  redis.call('DEL', sk)
  return {{}, {}}
end
local n = tonumber(ARGV[3])
local start, starting, stop = {}, {}, {}
for i = 1, n do
  local k = ARGV[3 + i]
  starting[k] = true
  redis.call('SADD', sk, k)
  if redis.call('HEXISTS', T .. ':jobs', k) == 0 then
    start[#start + 1] = i
  end
end
for i = 4 + n, #ARGV do
  if not starting[ARGV[i]] then
    stop[#stop + 1] = ARGV[i]
    redis.call('SREM', sk, ARGV[i])
  end
end
if ARGV[2] == 'a' then
  local mine = redis.call('SMEMBERS', sk)
  for i = 1, #mine do
    if not starting[mine[i]] then
      stop[#stop + 1] = mine[i]
      redis.call('SREM', sk, mine[i])
    end
  end
end
return {start, stop}
