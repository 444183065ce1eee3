-- pool_tick_stop.lua -- stops a pool's ticker for every node: each finds it
-- stopped at its next claim.
-- KEYS[1]: the pool's hash tag. Parts: tk:<name>.
-- ARGV[1]: ticker name. ARGV[2]: how long the stop marker stays, in ms
--          (a ticker of that name made meanwhile finds itself stopped).
-- Returns: 1, or 0 when the ticker had never ticked or was stopped.
local tk = KEYS[1] .. ':tk:' .. ARGV[1]
local live = redis.call('EXISTS', tk) == 1 and
                 not redis.call('HGET', tk, 'stopped')
redis.call('DEL', tk)
redis.call('HSET', tk, 'stopped', '1')
redis.call('PEXPIRE', tk, ARGV[2])
return live and 1 or 0
