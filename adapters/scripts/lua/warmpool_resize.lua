-- warmpool_resize.lua -- writes the idle target and wakes the primary.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: target.
-- Returns: the previous target (-1 when there was none).
--#include warmpool_int
wp_keys()
local old = redis.call('HGET', META, 'target')
set_target(ARGV[1])
publish_wake(WAKE, 't')
return tonumber(old or '-1')
