-- cron_mark.lua -- the registry's "last fired" bookkeeping of definitions,
-- sent after their fires (those a node learns of in one loop phase share
-- one call): a hint (for queries, and for the next fencing token when a
-- definition's occurrences move to another slot), never what decides
-- whether an occurrence fires (the dispatch log and its count do). Keeps
-- the record of the latest fire time only, and the highest count of fires;
-- with done '1' (the fire call answered that the fire limit is reached) the
-- definition is marked done (field "done", the time it was seen). A
-- definition without a count or done costs no command of its own: the
-- definitions' existence and their records are read for all at once, and
-- the new records written in one HSET.
-- KEYS[1]: the registry's tag. Parts: cron:defs, cron:def:<key>, cron:last.
-- ARGV: node, then 5 per definition: key, fire_ms ('' when nothing fired),
--   token, fired (the fires counted), done ('1' or '').
-- Returns: per definition, 1 when its last-fired record was written, 0
--   when the registry knew a later fire, nothing fired, or the key is not
--   defined.
--#include cron_int
local node = ARGV[1]
local n = (#ARGV - 1) / 5
local keys = {}
for i = 1, n do keys[i] = ARGV[2 + 5 * (i - 1)] end
local defined = redis.call('HMGET', T .. ':cron:defs', unpack(keys))
local last = redis.call('HMGET', T .. ':cron:last', unpack(keys))
local res, set, known = {}, {}, {}
for i = 1, n do
  local a = 1 + 5 * (i - 1)
  local key, fire, token = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local fired, done = dec_num(ARGV[a + 4]), ARGV[a + 5]
  res[i] = 0
  if defined[i] then
    if fired > 0 or done == '1' then
      local def = T .. ':cron:def:' .. key
      local cur = redis.call('HMGET', def, 'fired', 'done')
      if fired > tonumber(cur[1] or '0') then
        redis.call('HSET', def, 'fired', fmt('%d', fired))
      end
      if done == '1' and not cur[2] then
        redis.call('HSET', def, 'done', fmt('%d', now_ms()))
      end
    end
    -- A key given twice in one call: its first entry's record counts as
    -- read for the second.
    local cur = known[key] or last[i]
    local f = cur and string.match(cur, '^(%d+):')
    if fire ~= '' and not (f and dec_ge(f, fire)) then
      known[key] = fire .. ':' .. token .. ':' .. node
      set[#set + 1] = key
      set[#set + 1] = known[key]
      res[i] = 1
    end
  end
end
if #set > 0 then redis.call('HSET', T .. ':cron:last', unpack(set)) end
return res
