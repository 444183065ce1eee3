-- store_append.lua -- appends events to a store record's events list, keeps
-- the newest `cap`, and refreshes the expiry of all its keys as
-- store_touch.lua with ttl_ms 0 does.
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>",
--          ":ev:<id>", ":idx:<index>:<value>".
-- ARGV: id, cap (0: no cap), event_1 .. event_n.
-- Returns: the new length of the events list; error FLEET_ENOTFOUND when
--   there is no record, FLEET_EPROTO when it has no valid TTL.
local id, cap = ARGV[1], tonumber(ARGV[2])
local rec, ev = KEYS[1] .. ':rec:' .. id, KEYS[1] .. ':ev:' .. id
local ipre = KEYS[1] .. ':idx:'
local wrongtype = 'FLEET_EWRONGTYPE a store key holds another type'
--#include store_record
local old = redis.call('HGETALL', rec)
if #old == 0 then
  return redis.error_reply('FLEET_ENOTFOUND no such store record')
end
local idx, stored = record_indexes(old, ipre)
if not idx then
  return redis.error_reply(wrongtype)
end
-- A TTL is 1 to 12 decimal digits, at most ten years.
if not stored or not string.match(stored, '^[1-9][0-9]*$') or
    #stored > 12 or tonumber(stored) > 315360000000 then
  return redis.error_reply('FLEET_EPROTO a store record has a bad TTL')
end
local ttl = tonumber(stored)

-- The first write: RPUSH fails on an events key of another type.
local n = redis.call('RPUSH', ev, unpack(ARGV, 3))
if cap > 0 and n > cap then
  redis.call('LTRIM', ev, -cap, -1)
  n = cap
end
--#include time
local exp = now_ms() + ttl
redis.call('PEXPIREAT', rec, exp)
redis.call('PEXPIREAT', ev, exp)
for i = 1, #idx do
  redis.call('ZADD', idx[i], exp, id)
  if redis.call('PTTL', idx[i]) < ttl then
    redis.call('PEXPIREAT', idx[i], exp)
  end
end
return n
