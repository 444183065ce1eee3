-- warmpool_acquire.lua -- takes one idle entry with more than the minimum
-- remaining TTL, atomically; entries below it are moved to the destroy set on
-- the way, never handed out. The lowest-scored entry is popped (ZPOPMIN):
-- only when it has too little left are the entries below the minimum swept.
-- The primary is woken only while one holds the lease.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: min remaining ms, borrow lease ms (0: none), borrower id, its
--   instance nonce.
-- Returns: {1, id, expiry ms} | {0, "", 0} no idle entry. Error
--   FLEET_ECONFLICT when another live instance holds the borrower id.
--#include warmpool_int
local owner, nonce = ARGV[3], ARGV[4]
local got = redis.call('MGET', own_key(owner), T .. ':lock')
owner_refuse(owner, nonce, got[1])
-- (Decimal strings are converted by the arithmetic, once each: Lua 5.1's
-- tonumber() converts a string twice.)
local now = now_ms()
local upto = now + ARGV[1]
local id, exp
local e = redis.call('ZPOPMIN', IDLE)
local top = #e > 0 and e[2] + 0
if top and top > upto then
  id, exp = e[1], top
elseif #e > 0 then
  -- The lowest has too little left: it and the others below the minimum
  -- go to the destroy set, and the lowest live entry is taken.
  redis.call('ZADD', DEAD, 0, e[1])
  to_dead(IDLE, upto, 99)
  local ids = redis.call('ZRANGEBYSCORE', IDLE, '(' .. fmt(upto), '+inf',
                         'WITHSCORES', 'LIMIT', 0, 1)
  if #ids > 0 then
    id, exp = ids[1], ids[2] + 0
    redis.call('ZREM', IDLE, id)
  end
end
if not id then
  if #e > 0 and got[2] then
    publish_wake(WAKE, 'a')
  end
  return {0, '', 0}
end
local lease = ARGV[2] + 0
if lease > 0 then
  redis.call('ZADD', BOR, fmt(now + lease), id)
end
redis.call('HSET', WHO, '', HASH_MARK, id, who_value(exp, owner, nonce))
-- The primary, if any, refills at once, not at its next interval.
if got[2] then
  publish_wake(WAKE, 'a')
end
return {1, id, exp}
