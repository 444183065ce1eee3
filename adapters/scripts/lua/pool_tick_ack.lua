-- pool_tick_ack.lua -- a node acknowledges the ticks it delivered: their
-- delivery leases end.
-- KEYS[1]: the pool's hash tag. Parts: tk:<name> (pool_tick.lua).
-- ARGV[1]: ticker name. ARGV[2]: claimer. ARGV[3..]: sequence numbers.
-- Returns: how many leases it ended (a lease another claimer holds now, after
--   a redelivery, stays).
local tk = KEYS[1] .. ':tk:' .. ARGV[1]
local n = 0
for i = 3, #ARGV do
  local f = 'c' .. ARGV[i]
  local p = redis.call('HGET', tk, f)
  if p and string.match(p, '^%d+:%d+:(.*)$') == ARGV[2] then
    redis.call('HDEL', tk, f)
    n = n + 1
  end
end
return n
