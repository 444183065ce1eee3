-- warmpool_release.lua -- gives borrowed resources back, the releases a node
-- made in one loop phase in one call (src/warmpool/warmpool_calls.c), each
-- as if alone, in order: to idle when it has more than the minimum
-- remaining TTL and idle is under target, else to the destroy set, claimed
-- by the caller.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: the borrower, min remaining ms, claim ms, the borrower's instance
--   nonce, the pool's borrow lease ms ("0": no borrow is in T:wp:bor), then
--   two per release: the id, and "1" to destroy it anyway (else "0").
-- Returns: one code per release, in order: 1 back to idle | 2 the caller
--   destroys it | 0 not borrowed by this borrower instance (its lease ran
--   out: the primary destroys it; or another instance borrowed it). Error
--   FLEET_ECONFLICT when another live instance holds the borrower id, and
--   FLEET_EPROTO for a malformed call (nothing changed).
--#include warmpool_int
local n = (#ARGV - 5) / 2
if n < 1 or #ARGV % 2 == 0 then
  error({err = 'FLEET_EPROTO warmpool_release takes two arguments per ' ..
    'release'})
end
local owner, nonce = ARGV[1], ARGV[4]
local got = redis.call('MGET', own_key(owner), TGT, T .. ':lock')
owner_refuse(owner, nonce, got[1])
local me, bor = borrower(owner, nonce), ARGV[5] ~= '0'
-- The clock, the minimum remaining ms, the target, the live idle entries
-- and the claim ms, each read or converted once, by the first release
-- that needs it; an entry put back counts from then on. (Decimal
-- arguments are converted by the arithmetic: Lua 5.1's tonumber()
-- converts a string twice.)
local now, minrem, tgt, idle, claim_ms
local out, dead = {}, false
for i = 1, n do
  local id, code = ARGV[4 + 2 * i], 0
  local v = redis.call('HGET', WHO, id)
  local exp, who
  if v then exp, who = who_parse(v, id) end
  if who == me then
    if bor then redis.call('ZREM', BOR, id) end
    redis.call('HDEL', WHO, id)
    now = now or now_ms()
    code = 2
    if ARGV[5 + 2 * i] ~= '1' then
      if not tgt then
        minrem = ARGV[2] + 0
        tgt = tonumber(got[2] or '') or target()
        idle = live(now, minrem)
      end
      if exp > now + minrem and idle < tgt then
        redis.call('ZADD', IDLE, fmt(exp), id)
        idle = idle + 1
        code = 1
      end
    end
    if code == 2 then
      claim_ms = claim_ms or ARGV[3] + 0
      claim(id, now + claim_ms)
      dead = true
    end
  end
  out[i] = code
end
if dead and got[3] then
  publish_wake(WAKE, 'r')
end
return out
