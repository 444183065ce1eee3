-- warmpool_release.lua -- gives a borrowed resource back: to idle when it has
-- more than the minimum remaining TTL and idle is under target, else to the
-- destroy set, claimed by the caller.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: id, borrower, min remaining ms, "1" to destroy it anyway, claim ms,
--   the borrower's instance nonce, the pool's borrow lease ms ("0": no
--   borrow is in T:wp:bor; absent: as if not "0").
-- Returns: 1 back to idle | 2 the caller destroys it | 0 not borrowed by this
--   borrower instance (its lease ran out: the primary destroys it; or another
--   instance borrowed it). Error FLEET_ECONFLICT when another live instance
--   holds the borrower id (nothing changed).
--#include warmpool_int
local id, owner, nonce = ARGV[1], ARGV[2], ARGV[6]
local got = redis.call('MGET', own_key(owner), TGT, T .. ':lock')
owner_refuse(owner, nonce, got[1])
local v = redis.call('HGET', WHO, id)
if not v then
  return 0
end
local exp, who = who_parse(v, id)
if who ~= borrower(owner, nonce) then
  return 0
end
if ARGV[7] ~= '0' then
  redis.call('ZREM', BOR, id)
end
redis.call('HDEL', WHO, id)
if ARGV[4] ~= '1' then
  -- (Decimal arguments converted by the arithmetic, once each: Lua 5.1's
  -- tonumber() converts a string twice.)
  local now, minrem = now_ms(), ARGV[3] + 0
  local tgt = tonumber(got[2] or '') or target()
  if exp > now + minrem and live(now, minrem) < tgt then
    redis.call('ZADD', IDLE, fmt(exp), id)
    return 1
  end
  claim(id, now + ARGV[5])
else
  claim(id, now_ms() + ARGV[5])
end
if got[3] then
  publish_wake(WAKE, 'r')
end
return 2
