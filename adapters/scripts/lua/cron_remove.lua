-- cron_remove.lua -- removes a definition from the registry. Its dispatch log
-- stays until it ages out (or the definition is defined again, which then
-- never fires an occurrence the log holds).
-- KEYS[1]: the registry's tag (parts as in cron_define.lua, and
--   cron:last).
-- ARGV: key.
-- Returns: the new revision. Error: FLEET_ENOTFOUND.
--#include cron_int
local key = ARGV[1]
if redis.call('DEL', T .. ':cron:def:' .. key) == 0 then
  error({err = 'FLEET_ENOTFOUND no cron definition: ' .. key})
end
redis.call('HDEL', T .. ':cron:defs', key)
redis.call('HDEL', T .. ':cron:last', key)
return changed()
