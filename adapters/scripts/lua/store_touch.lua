-- store_touch.lua -- sets the expiry of a store record, its events and its
-- index entries to now + TTL, and stores a non-zero ttl_ms as the record's
-- TTL.
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>",
--          ":ev:<id>", ":idx:<index>:<value>".
-- ARGV: id, ttl_ms (0: the record's own TTL, its field "t").
-- Returns: 1, or 0 when there is no record; FLEET_EPROTO for ttl_ms 0 and
--   a record without a valid TTL.
local id, ttl = ARGV[1], tonumber(ARGV[2])
local rec, ev = KEYS[1] .. ':rec:' .. id, KEYS[1] .. ':ev:' .. id
local ipre = KEYS[1] .. ':idx:'
local wrongtype = 'FLEET_EWRONGTYPE a store key holds another type'
--#include store_record
local old = redis.call('HGETALL', rec)
if #old == 0 then
  return 0
end
local idx, stored = record_indexes(old, ipre)
if not idx then
  return redis.error_reply(wrongtype)
end
if ttl == 0 then
  -- A TTL is 1 to 12 decimal digits, at most ten years.
  if not stored or not string.match(stored, '^[1-9][0-9]*$') or
      #stored > 12 or tonumber(stored) > 315360000000 then
    return redis.error_reply('FLEET_EPROTO a store record has a bad TTL')
  end
  ttl = tonumber(stored)
else
  redis.call('HSET', rec, 't', ARGV[2])
end

--#include time
-- (A decimal string, made once: Redis 7.0 formats a number argument with
-- snprintf "%.17g".)
local exp = string.format('%d', now_ms() + ttl)
redis.call('PEXPIREAT', rec, exp)
redis.call('PEXPIREAT', ev, exp)
for i = 1, #idx do
  redis.call('ZADD', idx[i], exp, id)
  if redis.call('PTTL', idx[i]) < ttl then
    redis.call('PEXPIREAT', idx[i], exp)
  end
end
return 1
