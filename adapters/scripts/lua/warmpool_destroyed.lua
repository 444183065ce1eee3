-- warmpool_destroyed.lua -- resources are gone: forget them everywhere.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: ids.
-- Returns: how many were in the destroy set.
--#include warmpool_int
wp_keys()
local n = 0
for _, id in ipairs(ARGV) do
  n = n + redis.call('ZREM', DEAD, id)
  redis.call('HDEL', EXP, id)
  redis.call('ZREM', MK, id)
  redis.call('HDEL', MKT, id)
  redis.call('ZREM', BOR, id)
  redis.call('HDEL', WHO, id)
  redis.call('ZREM', DMK, id)
end
return n
