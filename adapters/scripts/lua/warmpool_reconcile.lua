-- warmpool_reconcile.lua -- one step of the primary, fenced by its lease:
-- reaps, shrinks to the target, claims what is to be destroyed and reserves
-- the creations to start.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: token, owner, min remaining ms, claim ms, max entries moved per kind,
--   creations wanted (free warm-up slots), warm-up deadline ms.
-- Returns: {-1} the lease does not hold this token | {1, nd, nc, backoff ms
--   left, live idle, target, nd ids to destroy, nc ids to create}.
--#include warmpool_int
wp_keys()
if not is_primary(ARGV[1], ARGV[2]) then
  return {-1}
end
local now, minrem, max = now_ms(), tonumber(ARGV[3]), tonumber(ARGV[5])
-- Idle entries that may no longer be handed out, borrowers whose lease ran
-- out, creations abandoned past their deadline: all are destroyed.
to_dead(IDLE, now + minrem, max)
to_dead(BOR, now, max)
to_dead(MK, now, max)
to_dead(DMK, now, max)
-- Creations reserved under another token can never be put (the put is
-- fenced): they are destroyed by id at once instead of being waited for.
for _, id in ipairs(redis.call('ZRANGE', MK, 0, -1)) do
  if redis.call('HGET', MKT, id) ~= ARGV[1] then
    redis.call('ZREM', MK, id)
    redis.call('HDEL', MKT, id)
    redis.call('ZADD', DEAD, 0, id)
  end
end
-- Shrink: the surplus that expires first goes.
local tgt = target()
-- The copy a release reads follows the target (an older fleet's resize
-- writes the hash only).
if redis.call('GET', TGT) ~= tostring(tgt) then
  redis.call('SET', TGT, tgt)
end
local n = live(now, minrem)
if n > tgt then
  local ids = redis.call('ZRANGE', IDLE, 0, math.min(n - tgt, max) - 1)
  for _, id in ipairs(ids) do
    redis.call('ZREM', IDLE, id)
    redis.call('ZADD', DEAD, 0, id)
  end
  n = n - #ids
end
-- Claim what is due for destruction (unclaimed, or its claim ran out).
local dead = redis.call('ZRANGEBYSCORE', DEAD, '-inf', fmt(now), 'LIMIT', 0, max)
for _, id in ipairs(dead) do
  claim(id, now + tonumber(ARGV[4]))
end
-- Creations: the gap to the target, less those in flight under this token.
local backoff = tonumber(redis.call('HGET', META, 'backoff') or '0') or 0
local wait = backoff > now and backoff - now or 0
local new = {}
if wait == 0 then
  local need = tgt - n - redis.call('ZCARD', MK)
  local want = math.min(need, tonumber(ARGV[6]))
  for i = 1, want do
    local id = new_id(ARGV[2])
    redis.call('ZADD', MK, fmt(now + tonumber(ARGV[7])), id)
    redis.call('HSET', MKT, id, ARGV[1])
    new[i] = id
  end
end
local r = {1, #dead, #new, wait, n, tgt}
for _, id in ipairs(dead) do
  r[#r + 1] = id
end
for _, id in ipairs(new) do
  r[#r + 1] = id
end
return r
