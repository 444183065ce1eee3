-- warmpool_start.lua -- the start of a node: claims its owner id's lease and
-- checks its definition: stores the pool's fingerprint and first target when
-- there are none (a client-only node's start gives no target and writes
-- none), else compares; refreshes the target's copy T:wp:tgt.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: fingerprint, first target ('' for none), owner id, instance nonce,
--   owner lease ms.
-- Returns: {1, fingerprint} agreed (the lease is the caller's) | {0, stored
--   fingerprint} differs (no lease taken). Error FLEET_ECONFLICT, naming the
--   owner id, when another live instance holds it (nothing written).
--#include warmpool_int
wp_keys()
owner_check(ARGV[3], ARGV[4])
local fp = redis.call('HGET', META, 'fp')
if fp and fp ~= ARGV[1] then
  return {0, fp}
end
redis.call('SET', T .. ':wp:own:' .. ARGV[3], ARGV[4], 'PX', ARGV[5])
if not fp then
  redis.call('HSET', META, 'fp', ARGV[1])
end
local tgt = redis.call('HGET', META, 'target')
if ARGV[2] ~= '' and not tgt then
  set_target(ARGV[2])
elseif tgt then
  -- The copy may be missing (a pool of an older fleet) or stale.
  redis.call('SET', TGT, tgt)
end
return {1, ARGV[1]}
