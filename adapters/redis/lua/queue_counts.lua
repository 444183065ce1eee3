-- queue_counts.lua -- how many jobs are in each state. completed and dead
-- count every job that ever got there, whatever is still kept of them; a
-- delayed job whose run-at time has come counts as pending.
-- KEYS[1]: the queue's hash tag "{prefix:queue}".
-- ARGV: none.
-- Returns: {pending, delayed, running, completed, dead, completed_kept,
--   dead_kept}.
local tag = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function int(v)
  if v == false then return 0 end
  local d = string.match(v, '^(%d+)$')
  if not d or #d > 18 then
    error({err = 'FLEET_EPROTO counter is not an integer'})
  end
  return tonumber(v)
end

local delayed = tag .. ':jobs:delayed'
local due = redis.call('ZCOUNT', delayed, '-inf', now)
local stats = redis.call('HMGET', tag .. ':stats', 'completed', 'dead')
return {redis.call('ZCARD', tag .. ':jobs:pending') + due,
        redis.call('ZCARD', delayed) - due,
        redis.call('ZCARD', tag .. ':jobs:running'),
        int(stats[1]), int(stats[2]),
        redis.call('LLEN', tag .. ':jobs:completed'),
        redis.call('LLEN', tag .. ':jobs:dead')}
