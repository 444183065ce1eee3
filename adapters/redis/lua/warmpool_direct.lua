-- warmpool_direct.lua -- reserves a resource id for a creation on demand
-- by an acquiring node, when the pool had no idle entry
-- (adapters/ops/warmpool.h).
-- KEYS[1]: the pool's tag. ARGV: owner, deadline ms.
-- Returns: the new id.
--#include warmpool_int
local id = new_id(ARGV[1])
redis.call('ZADD', DMK, fmt(now_ms() + tonumber(ARGV[2])), id)
return id
