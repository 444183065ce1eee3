-- store_touch.lua -- sets the expiry of a store record, its events and its
-- index entries to now + TTL, and stores a non-zero ttl_ms as the record's
-- TTL.
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>",
--          ":ev:<id>", ":idx:<index>:<value>".
-- ARGV: id, ttl_ms (0: the record's own TTL, its field "t").
-- Returns: 1, or 0 when there is no record; FLEET_EPROTO for ttl_ms 0 and
--   a record without a valid TTL.
--#include store_record
local ttl = tonumber(ARGV[2])
local old = redis.call('HGETALL', rec)
if #old == 0 then
  return 0
end
local idx, stored = record_indexes(old)
if not idx then
  return redis.error_reply(wrongtype)
end
if ttl == 0 then
  ttl = stored_ttl(stored)
  if not ttl then
    return redis.error_reply('FLEET_EPROTO a store record has a bad TTL')
  end
else
  redis.call('HSET', rec, 't', ARGV[2])
end
expire_all(idx, ttl)
return 1
