-- cron_set.lua -- enables or disables a definition. Enabling moves "from" to
-- now: the occurrences while it was disabled are neither fired nor caught up.
-- KEYS[1]: the registry's tag (parts as in cron_define.lua).
-- ARGV: key, enabled ('1' or '0').
-- Returns: {1 changed or 0 it was so already, the revision}. Error:
--   FLEET_ENOTFOUND.
--#include cron_int
local key = ARGV[1]
local def = T .. ':cron:def:' .. key
local cur = redis.call('HGET', def, 'enabled')
if not cur then
  error({err = 'FLEET_ENOTFOUND no cron definition: ' .. key})
end
if cur == ARGV[2] then
  return {0, tonumber(redis.call('GET', T .. ':cron:rev') or '0')}
end
local now = fmt('%d', now_ms())
if ARGV[2] == '1' then
  redis.call('HSET', def, 'enabled', '1', 'updated', now, 'from', now)
else
  redis.call('HSET', def, 'enabled', '0', 'updated', now)
end
return {1, changed()}
