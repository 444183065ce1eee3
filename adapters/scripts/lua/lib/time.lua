-- time.lua -- now_ms(): the server's clock (TIME) in ms since the Unix
-- epoch, the one every fleet deadline and "now" is computed from, never a
-- client's. Included (--#include time) by the scripts that read the clock
-- and by lib/cron_int.lua, lib/pool_int.lua and lib/warmpool_int.lua.
-- (The strings are converted by the arithmetic itself: Lua 5.1's
-- tonumber() converts a string twice, each a strtod.)
local function now_ms()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000)
end
