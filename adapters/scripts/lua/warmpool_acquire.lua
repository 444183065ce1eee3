-- warmpool_acquire.lua -- takes one idle entry with more than the minimum
-- remaining TTL, atomically; entries below it are moved to the destroy set on
-- the way, never handed out.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: min remaining ms, borrow lease ms (0: none), borrower id, its
--   instance nonce.
-- Returns: {1, id, expiry ms} | {0, "", 0} no idle entry. Error
--   FLEET_ECONFLICT when another live instance holds the borrower id.
--#include warmpool_int
owner_check(ARGV[3], ARGV[4])
local now, minrem = now_ms(), tonumber(ARGV[1])
local reaped = to_dead(IDLE, now + minrem, 100)
local ids = redis.call('ZRANGEBYSCORE', IDLE, '(' .. fmt(now + minrem), '+inf',
                       'LIMIT', 0, 1)
if #ids == 0 then
  if reaped > 0 then
    publish_wake(WAKE, 'a')
  end
  return {0, '', 0}
end
local id = ids[1]
local exp = redis.call('ZSCORE', IDLE, id)
redis.call('ZREM', IDLE, id)
local lease = tonumber(ARGV[2])
redis.call('ZADD', BOR, lease > 0 and fmt(now + lease) or fmt(NEVER), id)
redis.call('HSET', WHO, id, borrower(ARGV[3], ARGV[4]))
-- The primary refills at once, not at its next interval.
publish_wake(WAKE, 'a')
return {1, id, tonumber(exp)}
