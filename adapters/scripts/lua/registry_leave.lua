-- registry_leave.lua -- removes entries of the process registry
-- (docs/registry.md): a handle closed cleanly.
-- KEYS[1]: the registry's hash tag "{prefix:}" (the tag of an empty
--   name, which no object has); parts: workers, workers:info
--   (registry_beat.lua).
-- ARGV: the entries, "<kind>\0<name>\0<id>\0<nonce>" each.
-- Returns: the number of entries removed.
local call = redis.call
local n = call('ZREM', KEYS[1] .. ':workers', unpack(ARGV))
call('HDEL', KEYS[1] .. ':workers:info', unpack(ARGV))
return n
