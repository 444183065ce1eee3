-- warmpool_resize.lua -- writes the idle target and wakes the primary
-- (adapters/ops/warmpool.h).
-- KEYS[1]: the pool's tag. ARGV: target.
-- Returns: the previous target (-1 when there was none).
--#include warmpool_int
local old = redis.call('HGET', META, 'target')
redis.call('HSET', META, 'target', ARGV[1])
publish_wake(WAKE, 't')
return tonumber(old or '-1')
