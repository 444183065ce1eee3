-- warmpool_drain.lua -- takes every idle entry visible now (up to a bound)
-- out of idle, claimed for destruction by the caller, atomically.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: claim ms, max entries.
-- Returns: the ids taken.
--#include warmpool_int
local ids = redis.call('ZRANGE', IDLE, 0, tonumber(ARGV[2]) - 1)
local until_ms = now_ms() + tonumber(ARGV[1])
for _, id in ipairs(ids) do
  redis.call('ZREM', IDLE, id)
  claim(id, until_ms)
end
return ids
