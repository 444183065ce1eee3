-- store_append.lua -- appends events to a store record's events list, keeps
-- the newest `cap`, and refreshes the expiry of all its keys as
-- store_touch.lua with ttl_ms 0 does.
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>",
--          ":ev:<id>", ":idx:<index>:<value>".
-- ARGV: id, cap (0: no cap), event_1 .. event_n.
-- Returns: the new length of the events list; error FLEET_ENOTFOUND when
--   there is no record, FLEET_EPROTO when it has no valid TTL.
--#include store_record
local cap = tonumber(ARGV[2])
local old = redis.call('HGETALL', rec)
if #old == 0 then
  return redis.error_reply(notfound)
end
local idx, stored = record_indexes(old)
if not idx then
  return redis.error_reply(wrongtype)
end
local ttl = stored_ttl(stored)
if not ttl then
  return redis.error_reply('FLEET_EPROTO a store record has a bad TTL')
end

-- The first write: RPUSH fails on an events key of another type.
local n = redis.call('RPUSH', ev, unpack(ARGV, 3))
if cap > 0 and n > cap then
  redis.call('LTRIM', ev, -cap, -1)
  n = cap
end
expire_all(idx, ttl)
return n
