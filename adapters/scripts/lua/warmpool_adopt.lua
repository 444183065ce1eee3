-- warmpool_adopt.lua -- a creation on demand is ready: it becomes borrowed by
-- its creator.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: id, borrower, lease ms (0: none), idle TTL ms, claim ms, the
--   borrower's instance nonce.
-- Returns: 1 borrowed | 0 its reservation is gone (the creator destroys it,
--   claimed by it). Error FLEET_ECONFLICT when another live instance holds
--   the borrower id (nothing changed).
--#include warmpool_int
wp_keys()
owner_check(ARGV[2], ARGV[6])
local id, now = ARGV[1], now_ms()
if redis.call('ZREM', DMK, id) == 0 then
  claim(id, now + tonumber(ARGV[5]))
  return 0
end
local lease = tonumber(ARGV[3])
if lease > 0 then
  redis.call('ZADD', BOR, fmt(now + lease), id)
end
redis.call('HSET', WHO, '', HASH_MARK, id,
           who_value(now + tonumber(ARGV[4]), ARGV[2], ARGV[6]))
return 1
