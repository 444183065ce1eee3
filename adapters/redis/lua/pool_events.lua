-- pool_events.lua -- takes the oldest events from a node's event list
-- (adapters/ops/pool.h).
-- KEYS[1]: the pool's hash tag. Parts: ev:<node>.
-- ARGV[1]: node id. ARGV[2]: the most events to take.
-- Returns: six strings per event: kind, key, worker, token, data, from.
local ev = KEYS[1] .. ':ev:' .. ARGV[1]
local n = 6 * tonumber(ARGV[2])
local r = redis.call('LRANGE', ev, 0, n - 1)
if #r > 0 then
  redis.call('LTRIM', ev, n, -1)
end
return r
