-- cron_complete.lua -- records the outcome of a fired occurrence in its log
-- entry, fenced by its token. A pool definition's "pending" entry becomes
-- "dispatched" (the pool accepted the job) or gets its outcome, and leaves
-- S:pend.
-- KEYS[1]: T, the occurrences' tag (cron_occ.lua).
-- ARGV: ns, key, fire_ms, token, outcome ('completed', 'failed: <why>', or
--   'dispatched' for a pending entry).
-- Returns: 1 recorded; 2 an outcome was recorded already; 0 stale (the entry
--   holds another token); -1 no such entry (never fired, or trimmed).
--#include cron_int
--#include cron_occ
local v = redis.call('HGET', ENT, ARGV[3])
if not v then return -1 end
local tok, node, disp, _, outcome = entry_read(v)
if not tok then
  error({err = 'FLEET_EPROTO bad cron log entry: ' .. ARGV[3]})
end
if fmt('%d', tok) ~= ARGV[4] then return 0 end
if outcome == 'pending' then
  redis.call('ZREM', S .. ':pend', ARGV[3])
elseif outcome ~= 'dispatched' or ARGV[5] == 'dispatched' then
  return 2
end
local fin = now_ms()
if ARGV[5] == 'dispatched' then fin = 0 end
redis.call('HSET', ENT, ARGV[3], entry(tok, node, disp, fin, ARGV[5]))
return 1
