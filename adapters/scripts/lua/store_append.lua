-- store_append.lua -- appends events to a store record's events list, keeps
-- the newest `cap`, and refreshes the expiry of all its keys as
-- store_touch.lua with ttl_ms 0 does (a record without index entries needs
-- no clock: its keys expire its TTL from now, PEXPIRE).
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
--#include time
local old = redis.call('HGETALL', rec)
if #old == 0 then
  return redis.error_reply('FLEET_ENOTFOUND no such store record')
end
-- The first index key is checked by its ZADD below.
local idx, stored = record_indexes(old, ipre, true)
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
local pushed = #ARGV - 2
local n = redis.call('RPUSH', ev, unpack(ARGV, 3))
-- (The expiry goes to the commands as a decimal string, made once: Redis
-- 7.0 formats a number argument with snprintf "%.17g".)
local exp
if #idx > 0 then
  exp = string.format('%d', now_ms() + ttl)
  if not zadd_first(idx[1], exp, id) then
    -- The first index key holds another type: the push is taken back.
    if n == pushed then
      redis.call('DEL', ev)
    else
      redis.call('LTRIM', ev, 0, n - pushed - 1)
    end
    return redis.error_reply(wrongtype)
  end
end
if cap > 0 and n > cap then
  redis.call('LTRIM', ev, -cap, -1)
  n = cap
end
if exp then
  redis.call('PEXPIREAT', rec, exp)
  redis.call('PEXPIREAT', ev, exp)
else
  redis.call('PEXPIRE', rec, stored)
  redis.call('PEXPIRE', ev, stored)
end
for i = 1, #idx do
  if i > 1 then
    redis.call('ZADD', idx[i], exp, id)
  end
  if redis.call('PTTL', idx[i]) < ttl then
    redis.call('PEXPIREAT', idx[i], exp)
  end
end
return n
