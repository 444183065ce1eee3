-- cron_mark.lua -- the registry's "last fired" bookkeeping of a definition,
-- sent after a fire: a hint (for queries, and for the next fencing token when
-- the definition's occurrences move to another slot), never what decides
-- whether an occurrence fires (the dispatch log and its count do). Keeps the
-- record of the latest fire time only, and the highest count of fires; with
-- done '1' (the fire call answered that the fire limit is reached) the
-- definition is marked done (field "done", the time it was seen).
-- KEYS[1]: the registry's tag. Parts: cron:def:<key>, cron:last.
-- ARGV: key, fire_ms ('' when nothing fired), token, node, fired (the fires
--   counted), done ('1' or '').
-- Returns: 1 when the last-fired record was written, 0 when the registry
--   knew a later fire, nothing fired, or the key is not defined.
--#include cron_int
local key = ARGV[1]
local def = T .. ':cron:def:' .. key
local cur = redis.call('HMGET', def, 'created', 'fired', 'done')
if not cur[1] then return 0 end
if tonumber(ARGV[5]) > tonumber(cur[2] or '0') then
  redis.call('HSET', def, 'fired', ARGV[5])
end
if ARGV[6] == '1' and not cur[3] then
  redis.call('HSET', def, 'done', fmt('%d', now_ms()))
end
if ARGV[2] == '' then return 0 end
local last = redis.call('HGET', T .. ':cron:last', key)
if last then
  local f = tonumber(string.match(last, '^(%d+):'))
  if f and f >= tonumber(ARGV[2]) then return 0 end
end
redis.call('HSET', T .. ':cron:last', key,
           ARGV[2] .. ':' .. ARGV[3] .. ':' .. ARGV[4])
return 1
