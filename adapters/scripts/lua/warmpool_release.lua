-- warmpool_release.lua -- gives a borrowed resource back: to idle when it has
-- more than the minimum remaining TTL and idle is under target, else to the
-- destroy set, claimed by the caller.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: id, borrower, min remaining ms, "1" to destroy it anyway, claim ms,
--   the borrower's instance nonce.
-- Returns: 1 back to idle | 2 the caller destroys it | 0 not borrowed by this
--   borrower instance (its lease ran out: the primary destroys it; or another
--   instance borrowed it). Error FLEET_ECONFLICT when another live instance
--   holds the borrower id (nothing changed).
--#include warmpool_int
local id = ARGV[1]
owner_check(ARGV[2], ARGV[6])
if redis.call('HGET', WHO, id) ~= borrower(ARGV[2], ARGV[6]) then
  return 0
end
redis.call('ZREM', BOR, id)
redis.call('HDEL', WHO, id)
local now, minrem = now_ms(), tonumber(ARGV[3])
local exp = tonumber(redis.call('HGET', EXP, id) or '0') or 0
if ARGV[4] ~= '1' and exp > now + minrem and live(now, minrem) < target() then
  redis.call('ZADD', IDLE, fmt(exp), id)
  return 1
end
claim(id, now + tonumber(ARGV[5]))
publish_wake(WAKE, 'r')
return 2
