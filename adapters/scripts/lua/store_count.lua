-- store_count.lua -- the number of events of a store record.
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>",
--          ":ev:<id>".
-- ARGV: id.
-- Returns: the length of the events list; error FLEET_ENOTFOUND when
--   there is no record.
--#include store_record
local err = record_hash()
if err then
  return err
end
return redis.call('LLEN', ev)
