-- cron_fire.lua -- claims occurrences of one definition, by the server clock:
-- for each one not logged yet, writes its dispatch-log entry with a new
-- fencing token and, for a queue-targeted definition, enqueues its job
-- "<key>@<fire_ms>" in the same call (the queue is the tag T); for a
-- pool-targeted definition the entry is "pending" (and in S:pend) until the
-- node that claimed it has dispatched the pool job and recorded it with
-- cron_complete, and pending entries older than redispatch_ms are handed out
-- again (the pool refuses a duplicate key, so a dispatch that did happen is
-- not repeated). Of all the
-- nodes that send the same occurrence, exactly one gets it. The tokens come
-- from S:fence through lib/fence.lua, so that they never repeat or go back
-- across a failover. The log keeps at most keep_count entries, none older
-- than keep_age_ms (0: no age bound), trimming up to 1000 per call. The fires
-- of a definition with a fire limit are counted in S:fired ("<gen>:<count>",
-- gen the definition's creation time: a definition defined again counts from
-- 0; without a limit nothing is counted, so that the default path costs no
-- command more); no occurrence fires beyond the limit, and none before start or after end, so that
-- the bounds hold across every node whatever their copies of the registry
-- say. A fenced op (adapters/backend.h): its last ARGV is the failover epoch.
-- KEYS[1]: T, the occurrences' tag (cron_occ.lua), which for a queue
--   definition is the queue's tag (queue parts as in queue_enqueue.lua).
-- ARGV: ns, key, node, keep_count, keep_age_ms, min_token, target ('1' to
--   enqueue, 'p' for a pool job, '' for none), payload, max_fires (0: no
--   limit), gen (the definition's creation ms), start_ms, end_ms (0: none),
--   redispatch_ms (a pool definition's pending age to hand out again), n,
--   then n pairs
--   (fire_ms, 'f' to fire or 'm' to log as missed), in increasing fire
--   time; last, the failover epoch, which the adapter appends
--   (lib/fence.lua).
-- Returns: {now_ms, the fires counted (0 without a limit), then status, token
--   per occurrence,
--   then, for a pool definition, fire_ms, token of each pending occurrence
--   handed out again to this node (at most 8)}.
--   Per occurrence: at or before S:floor, or in the log, or before start:
--   nothing (status 0); after now: nothing (-1, not due by the server
--   clock); after end, or 'f' with max_fires fired already: nothing, the
--   definition is finished (3); 'f' after S:top: fired (1, its token); else
--   logged as missed (2).
--#include cron_int
--#include cron_occ
--#include queue_int
--#include fence
local call = redis.call
local tag = T
--#include queue_pend
--#include queue_add
local node, keep, age = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local mintok, queue, payload = tonumber(ARGV[6]), ARGV[7], ARGV[8]
local max, gen = tonumber(ARGV[9]), ARGV[10]
local start, stop = tonumber(ARGV[11]), tonumber(ARGV[12])
local redispatch = tonumber(ARGV[13])
local n = tonumber(ARGV[14])
local now = now_ms()
local floor = tonumber(redis.call('GET', S .. ':floor') or '-1')
local top = tonumber(redis.call('GET', S .. ':top') or '-1')
local fired = 0
if max > 0 then
  local cnt = redis.call('GET', S .. ':fired')
  if cnt then
    local g, c = string.match(cnt, '^(%d+):(%d+)$')
    if g == gen then fired = tonumber(c) end
  end
end
local out = {now, 0}
local logged, counted = false, fired
for i = 0, n - 1 do
  local t, act = ARGV[15 + 2 * i], ARGV[16 + 2 * i]
  local tn = tonumber(t)
  if tn > now then
    out[#out + 1] = -1
    out[#out + 1] = 0
  elseif tn <= floor or tn < start or redis.call('ZSCORE', OCC, t) then
    out[#out + 1] = 0
    out[#out + 1] = 0
  elseif (stop > 0 and tn > stop) or
         (act == 'f' and max > 0 and fired >= max) then
    out[#out + 1] = 3
    out[#out + 1] = 0
  elseif act == 'f' and tn > top then
    local f = fence_next(S .. ':fence', 1, mintok)
    redis.call('SET', S .. ':top', t)
    top = tn
    if queue == 'p' then
      redis.call('HSET', ENT, t, entry(f, node, now, 0, 'pending'))
      redis.call('ZADD', S .. ':pend', now, t)
    else
      redis.call('HSET', ENT, t, entry(f, node, now, 0, 'dispatched'))
    end
    redis.call('ZADD', OCC, t, t)
    if queue == '1' then
      queue_add(T, now, 1, {ARGV[2] .. '@' .. t, ARGV[2], payload, '0', '0',
                            '0', '3', 'exp:1000:3600000:20', '', '0', '', ''},
                1)
    end
    fired = fired + 1
    logged = true
    out[#out + 1] = 1
    out[#out + 1] = f
  else
    redis.call('HSET', ENT, t, entry(0, node, now, now, 'missed'))
    redis.call('ZADD', OCC, t, t)
    logged = true
    out[#out + 1] = 2
    out[#out + 1] = 0
  end
end
out[2] = fired
if queue == 'p' and redispatch > 0 then
  local old = redis.call('ZRANGEBYSCORE', S .. ':pend', '-inf',
                         fmt('%d', now - redispatch), 'LIMIT', 0, 8)
  for _, t in ipairs(old) do
    local v = redis.call('HGET', ENT, t)
    local tok, _, _, _, outcome
    if v then tok, _, _, _, outcome = entry_read(v) end
    if tok and outcome == 'pending' then
      redis.call('HSET', ENT, t, entry(tok, node, now, 0, 'pending'))
      redis.call('ZADD', S .. ':pend', now, t)
      out[#out + 1] = tonumber(t)
      out[#out + 1] = tok
    else
      redis.call('ZREM', S .. ':pend', t)
    end
  end
end
if max > 0 and fired ~= counted then
  redis.call('SET', S .. ':fired', gen .. ':' .. fired)
end
if logged then
  -- Trims the oldest entries beyond the bounds; S:floor remembers the
  -- latest one trimmed, so that a trimmed occurrence is never fired again.
  local old = {}
  local c = redis.call('ZCARD', OCC)
  if c > keep then
    local m = c - keep
    if m > 1000 then m = 1000 end
    old = redis.call('ZRANGE', OCC, 0, m - 1)
  end
  if age > 0 and #old < 1000 then
    local more = redis.call('ZRANGEBYSCORE', OCC, '-inf', fmt('%d', now - age),
                            'LIMIT', #old, 1000 - #old)
    for _, v in ipairs(more) do old[#old + 1] = v end
  end
  if #old > 0 then
    redis.call('ZREM', OCC, unpack(old))
    redis.call('HDEL', ENT, unpack(old))
    local last = tonumber(old[#old])
    if last > floor then redis.call('SET', S .. ':floor', old[#old]) end
  end
end
return out
