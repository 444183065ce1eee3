-- store_read.lua -- reads a page of a store record's events.
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>",
--          ":ev:<id>".
-- ARGV: id, offset, limit.
-- Returns: the events from index `offset`, at most `limit`, oldest first;
--   error FLEET_ENOTFOUND when there is no record.
--#include store_record
local err = record_hash()
if err then
  return err
end
local offset = tonumber(ARGV[2])
return redis.call('LRANGE', ev, offset, offset + tonumber(ARGV[3]) - 1)
