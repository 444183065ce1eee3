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
-- across a failover. The log is trimmed to keep_count entries, none older
-- than keep_age_ms (0: no age bound), in batches, and a losing node pays
-- one command per occurrence (lib/cron_claim.lua). The fires
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
--   (fire_ms, 'f' to fire, 'm' to log as missed, or 't' to fire a trigger,
--   fleet_cron_trigger(): once, whatever the latest fire, which it leaves
--   as it was), in increasing fire time; last, the failover epoch, which the
--   adapter appends (lib/fence.lua).
-- Returns: {now_ms, the fires counted (0 without a limit), then status, token
--   per occurrence,
--   then, for a pool definition, fire_ms, token of each pending occurrence
--   handed out again to this node (at most 8)}.
--   Per occurrence: at or before S:floor, or in the log, or before start:
--   nothing (status 0); after now: nothing (-1, not due by the server
--   clock); after end, or 'f' or 't' with max_fires fired already:
--   nothing, the definition is finished (3); 'f' after S:top, or 't':
--   fired (1, its token); else logged as missed (2).
--#include cron_int
--#include cron_occ
--#include queue_int
--#include fence
--#include cron_claim
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
local times, acts = {}, {}
for i = 0, n - 1 do
  times[i + 1], acts[i + 1] = ARGV[15 + 2 * i], ARGV[16 + 2 * i]
end
local out = {now, 0}
out[2] = cron_claim({S = S, node = node, keep = keep, age = age,
                     mintok = mintok, target = queue, max = max, gen = gen,
                     start = start, stop = stop, now = now, times = times,
                     acts = acts, enqueue = function(t, at)
  queue_add(T, at, 1, {ARGV[2] .. '@' .. t, ARGV[2], payload, '0', '0', '0',
                       '3', 'exp:1000:3600000:20', '', '0', '', ''}, 1)
end}, out)
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
return out
