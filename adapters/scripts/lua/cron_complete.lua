-- cron_complete.lua -- records the outcomes of fired occurrences in their
-- log entries, each fenced by its token: the completions a node makes in
-- one loop phase share one call (per slot, on a Redis Cluster). A pool
-- definition's "pending" entry becomes "dispatched" (the pool accepted the
-- job) or gets its outcome, and leaves S:pend.
-- KEYS: T, the occurrences' tag (cron_occ.lua), of each occurrence in turn.
-- ARGV: ns, then 4 per occurrence: key, fire_ms, token, outcome
--   ('completed', 'failed: <why>', or 'dispatched' for a pending entry).
-- Returns: per occurrence, 1 recorded; 2 an outcome was recorded already; 0
--   stale (the entry holds another token); -1 no such entry (never fired,
--   or trimmed); -2 the entry is not one fleet wrote (nothing written).
--#include cron_int
--#include cron_occ
local ns = ARGV[1]
local now
local res = {}
for i = 1, #KEYS do
  local a = 1 + 4 * (i - 1)
  local key, t, token, outcome = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3],
                                 ARGV[a + 4]
  local s = KEYS[i] .. ':cron:' .. ns .. ':' .. key
  local ent = s .. ':ent'
  local v = redis.call('HGET', ent, t)
  -- (The fields as strings: the token is compared as written, and the
  -- entry written again from them, with no number converted either way.)
  local tok, node, disp, prev
  if v then
    local fin0
    tok, node, disp, fin0, prev = entry_fields(v)
  end
  if not v then
    res[i] = -1
  elseif not tok then
    res[i] = -2
  elseif tok ~= token then
    res[i] = 0
  elseif prev ~= 'pending' and
         (prev ~= 'dispatched' or outcome == 'dispatched') then
    res[i] = 2
  else
    if prev == 'pending' then redis.call('ZREM', s .. ':pend', t) end
    local fin = '0'
    if outcome ~= 'dispatched' then
      now = now or fmt('%d', now_ms())
      fin = now
    end
    redis.call('HSET', ent, t, entry_s(tok, node, disp, fin, outcome))
    res[i] = 1
  end
end
return res
