-- cron_history.lua -- reads a definition's dispatch log, newest first.
-- KEYS[1]: T, the occurrences' tag (cron_occ.lua).
-- ARGV: ns, key, limit (1..1000).
-- Returns: {top (the latest fire ms fired, -1: none), then per entry:
--   fire_ms, token, node, dispatched_ms, finished_ms (0: not yet), outcome}.
--#include cron_int
--#include cron_occ
local lim = tonumber(ARGV[3])
local ids = redis.call('ZRANGE', OCC, -lim, -1)
-- The latest fire: S:ent's "top", or the string S:top an older fleet
-- wrote (lib/cron_claim.lua).
local top = redis.call('HGET', ENT, 'top') or redis.call('GET', S .. ':top')
local out = {tonumber(top or '-1')}
for i = #ids, 1, -1 do
  local v = redis.call('HGET', ENT, ids[i])
  local tok, node, disp, fin, outcome
  if v then tok, node, disp, fin, outcome = entry_read(v) end
  if not tok then
    error({err = 'FLEET_EPROTO bad cron log entry: ' .. ids[i]})
  end
  out[#out + 1] = tonumber(ids[i])
  out[#out + 1] = tok
  out[#out + 1] = node
  out[#out + 1] = disp
  out[#out + 1] = fin
  out[#out + 1] = outcome
end
return out
