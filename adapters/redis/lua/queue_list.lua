-- queue_list.lua -- the ids of the queued (pending or delayed) jobs of one
-- type, in no particular order.
-- KEYS[1]: the queue's hash tag "{prefix:queue}".
-- ARGV[1]: type; ARGV[2]: limit.
-- Returns: {total, then up to limit ids}.
local ids = redis.call('SMEMBERS', KEYS[1] .. ':jobs:by_type:' .. ARGV[1])
local limit = tonumber(ARGV[2])
local out = {#ids}
for i = 1, math.min(#ids, limit) do out[i + 1] = ids[i] end
return out
