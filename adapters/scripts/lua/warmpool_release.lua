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
-- and the end of a destroy claim, each read or made once, by the first release
-- that needs it; an entry put back counts from then on. (Decimal
-- arguments are converted by the arithmetic: Lua 5.1's tonumber()
-- converts a string twice.)
local now, minrem, tgt, idle, dead_until
-- The borrower records of the call's ids in one read; the writes of all
-- its releases, one command each (an id met twice is refused the second
-- time, as if its first release had run alone).
local ids = {}
for i = 1, n do ids[i] = ARGV[4 + 2 * i] end
local vs = redis.call('HMGET', WHO, unpack(ids))
local out, seen, gone, back, dead = {}, {}, {}, {}, {}
for i = 1, n do
  local id, v, code = ids[i], vs[i], 0
  local exp, who
  if v and not seen[id] then exp, who = who_parse(v, id) end
  if who == me then
    seen[id] = true
    gone[#gone + 1] = id
    now = now or now_ms()
    code = 2
    if ARGV[5 + 2 * i] ~= '1' then
      if not tgt then
        minrem = ARGV[2] + 0
        tgt = tonumber(got[2] or '') or target()
        idle = live(now, minrem)
      end
      if exp > now + minrem and idle < tgt then
        back[#back + 1] = fmt(exp)
        back[#back + 1] = id
        idle = idle + 1
        code = 1
      end
    end
    if code == 2 then
      -- Claimed for the caller to destroy (claim(), lib/warmpool_int.lua).
      dead_until = dead_until or fmt(now + ARGV[3])
      dead[#dead + 1] = dead_until
      dead[#dead + 1] = id
    end
  end
  out[i] = code
end
if #gone > 0 then
  if bor then redis.call('ZREM', BOR, unpack(gone)) end
  redis.call('HDEL', WHO, unpack(gone))
end
if #back > 0 then redis.call('ZADD', IDLE, unpack(back)) end
if #dead > 0 then redis.call('ZADD', DEAD, unpack(dead)) end
if #dead > 0 and got[3] then
  publish_wake(WAKE, 'r')
end
return out
