-- time.lua -- now_ms(): the server's clock (TIME) in ms since the Unix
-- epoch, the one every fleet deadline and "now" is computed from, never a
-- client's. Included (--#include time) by the scripts that read the clock
-- and by lib/cron_int.lua, lib/pool_int.lua and lib/warmpool_int.lua.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
