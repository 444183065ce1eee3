-- fence.lua -- fencing tokens that never repeat or go back across a
-- failover, included (--#include fence) by every script that grants them:
-- lock_acquire, the queue's claims (lib/queue_claim.lua, lib/queue_add.lua),
-- the pool's assignments (lib/pool_int.lua) and the cron occurrences
-- (cron_fire.lua). A counter key holds the last token granted.
--
-- The failover epoch is the op's last ARGV, which the adapter appends when
-- it writes the command to the server (adapters/backend.h, "Fenced ops"):
-- "0" on one Redis and in the memory backend; behind Sentinel, the
-- master's config-epoch that Sentinel gave with the address the
-- connection went to; on a Redis Cluster "c", and the epoch is then this
-- node's config epoch (cluster_my_epoch of CLUSTER INFO), read once per
-- call on its first grant. A replica promoted by either has an epoch
-- greater than its old master's.
--
-- fence_next(key, n, floor) takes n tokens and returns the first of them:
--   INCR key (n = 1) or INCRBY key n, as always; then, when the counter was
--   below max(fence_base(), floor), fence_base() being epoch * 2^32, it is
--   raised to that plus n (INCRBY by the difference). Epoch 0 without a
--   floor, and any epoch after its first grant, cost one command. A
--   promoted replica whose counter missed its old master's last grants
--   thus starts above all of them (as long as an epoch grants fewer than
--   2^32 tokens), and an older epoch never lowers the counter. Tokens stay
--   exact integers below 2^53: an epoch of 2^21 or more, or a token past
--   2^53, is refused (FLEET_E2BIG) and the counter is left as it was. A
--   counter that holds another type or no integer raises INCR's error
--   (WRONGTYPE, "ERR value is not an integer ..."), so that a caller under
--   pcall tells them apart as before.
-- fence_epoch() is the call's epoch; a malformed epoch argument raises
--   FLEET_EPROTO.
local fence_e
local function fence_epoch()
  if fence_e then return fence_e end
  local a, d = ARGV[#ARGV], nil
  if a == 'c' then
    d = string.match(redis.call('CLUSTER', 'INFO'),
                     'cluster_my_epoch:(%d+)')
    if not d then
      error({err = 'FLEET_EPROTO CLUSTER INFO has no cluster_my_epoch'})
    end
  elseif type(a) == 'string' then
    d = string.match(a, '^%d+$')
  end
  if not d then
    error({err = 'FLEET_EPROTO the fencing epoch argument is missing or ' ..
             'not a decimal'})
  end
  if #d > 7 or tonumber(d) >= 2097152 then
    error({err = 'FLEET_E2BIG fencing epoch ' .. string.sub(d, 1, 20) ..
             ' is out of range (tokens would pass 2^53): at most 2097151'})
  end
  fence_e = tonumber(d)
  return fence_e
end

local function fence_base()
  return fence_epoch() * 4294967296
end

local function fence_next(key, n, floor)
  local base = fence_base()
  if floor and floor > base then base = floor end
  local v
  if n == 1 then
    v = redis.call('INCR', key)
  else
    v = redis.call('INCRBY', key, string.format('%d', n))
  end
  if v - n >= base then
    if v >= 9007199254740992 then
      redis.call('INCRBY', key, string.format('%d', -n))
      error({err = 'FLEET_E2BIG fencing token past 2^53 at ' .. key})
    end
    return v - n + 1
  end
  -- The counter is below this epoch's base (the first grant since a
  -- failover, or a floor above it): raise it to base + n.
  if base + n >= 9007199254740992 then
    redis.call('INCRBY', key, string.format('%d', -n))
    error({err = 'FLEET_E2BIG fencing token past 2^53 at ' .. key})
  end
  redis.call('INCRBY', key, string.format('%d', base + n - v))
  return base + 1
end
