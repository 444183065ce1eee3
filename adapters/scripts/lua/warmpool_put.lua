-- warmpool_put.lua -- puts a resource the primary created into idle, fenced
-- by the primary's token.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: id, token, owner, idle TTL ms, min remaining ms, claim ms.
-- Returns: 1 put (or it was already) | 0 its reservation is gone (abandoned
--   past its deadline) | -1 the token is stale | -2 idle is at its target. On
--   0, -1 and -2 the creator destroys the resource (claimed by it).
--#include warmpool_int
wp_keys()
local id = ARGV[1]
-- A repeat of a put that ran (its answer was lost) answers the same.
if redis.call('ZSCORE', IDLE, id) then
  return 1
end
local now = now_ms()
local reserved = redis.call('ZREM', MK, id) == 1
redis.call('HDEL', MKT, id)
if not is_primary(ARGV[2], ARGV[3]) then
  claim(id, now + tonumber(ARGV[6]))
  return -1
end
if not reserved then
  claim(id, now + tonumber(ARGV[6]))
  return 0
end
if live(now, tonumber(ARGV[5])) >= target() then
  claim(id, now + tonumber(ARGV[6]))
  return -2
end
local exp = fmt(now + tonumber(ARGV[4]))
redis.call('ZADD', IDLE, exp, id)
redis.call('HSET', META, 'fails', 0)
redis.call('HSET', META, 'backoff', 0)
return 1
