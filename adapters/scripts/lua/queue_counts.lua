-- queue_counts.lua -- how many jobs are in each state. completed and dead
-- count every job that ever got there, whatever is still kept of them; a
-- delayed job whose run-at time has come counts as pending. Flow parents
-- waiting for their children are counted apart (waiting_children: the
-- field "waiting" of T:stats, kept by queue_add_flow.lua and
-- lib/queue_deps.lua), read with the counters: no command more.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: pending,
--   pending:prio, delayed, claims, stats (its field "waiting" too),
--   completed, dead, groups, gp:<g>, gz:<g>.
-- ARGV: none.
-- Returns: {pending, delayed, running, completed, dead, completed_kept,
--   dead_kept, waiting_children}.
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
--#include queue_int
-- A counter of the stats hash: 0 when absent; a sign is refused.
local function count(v)
  if v == false then return 0 end
  return int(v, 'counter', '^(%d+)$')
end

local delayed = tag .. ':delayed'
local due = call('ZCOUNT', delayed, '-inf', now)
-- The jobs of groups wait in their own sets (lib/queue_flow.lua).
local grouped = 0
for _, g in ipairs(call('LRANGE', tag .. ':groups', 0, -1)) do
  if g ~= '' then
    grouped = grouped + call('LLEN', tag .. ':gp:' .. g) +
                call('ZCARD', tag .. ':gz:' .. g)
  end
end
local stats = call('HMGET', tag .. ':stats', 'completed', 'dead', 'waiting')
-- (A count below 0, which only a foreign write could leave, reads as 0.)
local waiting = math.max(tonumber(stats[3] or '0') or 0, 0)
return {call('LLEN', tag .. ':pending') + call('ZCARD', tag .. ':pending:prio')
          + due + grouped,
        call('ZCARD', delayed) - due,
        -- Less the field "" that keeps the hash a hash table (queue_claim).
        call('HLEN', tag .. ':claims') - call('HEXISTS', tag .. ':claims', ''),
        count(stats[1]), count(stats[2]),
        call('LLEN', tag .. ':completed'),
        call('LLEN', tag .. ':dead'),
        waiting}
