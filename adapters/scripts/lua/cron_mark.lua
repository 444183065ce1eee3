-- cron_mark.lua -- the registry's "last fired" bookkeeping of a definition,
-- sent after a fire: a hint (for queries, and for the next fencing token when
-- the definition's occurrences move to another slot), never what decides
-- whether an occurrence fires (the dispatch log does). Keeps the record of
-- the latest fire time only.
-- KEYS[1]: the registry's tag. Parts: cron:def:<key>, cron:last.
-- ARGV: key, fire_ms, token, node.
-- Returns: 1 when it was written, 0 when the registry knew a later fire or
--   the key is not defined.
--#include cron_int
local key = ARGV[1]
if redis.call('EXISTS', T .. ':cron:def:' .. key) == 0 then return 0 end
local cur = redis.call('HGET', T .. ':cron:last', key)
if cur then
  local f = tonumber(string.match(cur, '^(%d+):'))
  if f and f >= tonumber(ARGV[2]) then return 0 end
end
redis.call('HSET', T .. ':cron:last', key,
           ARGV[2] .. ':' .. ARGV[3] .. ':' .. ARGV[4])
return 1
