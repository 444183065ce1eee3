-- time.lua -- the server clock, the one every fleet deadline is computed
-- from.
-- KEYS: none.
-- ARGV: none.
-- Returns: {seconds, microseconds} as integers.
local t = redis.call('TIME')
return {tonumber(t[1]), tonumber(t[2])}
