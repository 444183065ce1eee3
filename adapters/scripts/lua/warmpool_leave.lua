-- warmpool_leave.lua -- a closing node gives its owner id's lease up, if its
-- instance still holds it.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: owner id, instance nonce.
-- Returns: 1 given up | 0 not held by this instance (nothing changed).
--#include warmpool_int
if owner_state(ARGV[1], ARGV[2]) ~= 'mine' then
  return 0
end
redis.call('DEL', T .. ':wp:own:' .. ARGV[1])
return 1
