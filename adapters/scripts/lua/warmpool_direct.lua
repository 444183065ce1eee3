-- warmpool_direct.lua -- reserves a resource id for a creation on demand by
-- an acquiring node, when the pool had no idle entry.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: owner, deadline ms, its instance nonce.
-- Returns: the new id. Error FLEET_ECONFLICT when another live instance holds
--   the owner id (nothing changed).
--#include warmpool_int
wp_keys()
owner_check(ARGV[1], ARGV[3])
local id = new_id(ARGV[1])
redis.call('ZADD', DMK, fmt(now_ms() + tonumber(ARGV[2])), id)
return id
