-- warmpool_start.lua -- the definition check of a node that starts: stores
-- the pool's fingerprint and first target when there are none, else
-- compares (adapters/ops/warmpool.h).
-- KEYS[1]: the pool's tag. ARGV: fingerprint, first target.
-- Returns: {1, fingerprint} agreed | {0, stored fingerprint} differs.
--#include warmpool_int
local fp = redis.call('HGET', META, 'fp')
if fp and fp ~= ARGV[1] then
  return {0, fp}
end
if not fp then
  redis.call('HSET', META, 'fp', ARGV[1])
end
if not redis.call('HGET', META, 'target') then
  redis.call('HSET', META, 'target', ARGV[2])
end
return {1, ARGV[1]}
