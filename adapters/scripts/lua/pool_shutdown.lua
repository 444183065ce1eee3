-- pool_shutdown.lua -- shuts the whole pool down: every node is told to stop
-- all its jobs, and every key of the pool that holds a job, a payload or a
-- member is removed. The counters (fence, rev, wseq) stay, so tokens and
-- revisions keep growing. The pool stays shut: "down" holds the server ms
-- of the shutdown, and every join is refused (pool_join) until a reset
-- (pool_reset) removes it.
-- KEYS[1]: the pool's hash tag. Parts: every part of the pool, and down.
-- ARGV: none.
-- Returns: the number of nodes told.
--#include pool_int
local nodes = redis.call('ZRANGE', T .. ':nodes', 0, -1)
local workers = redis.call('ZRANGE', T .. ':workers', 0, -1)
for i = 1, #workers do
  redis.call('DEL', T .. ':wj:' .. workers[i])
end
for i = 1, #nodes do
  redis.call('DEL', T .. ':nw:' .. nodes[i], T .. ':ev:' .. nodes[i])
end
redis.call('DEL', T .. ':jobs', T .. ':pay', T .. ':disp', T .. ':next',
           T .. ':workers', T .. ':wnode', T .. ':nodes', T .. ':life',
           T .. ':rq', T .. ':rqd')
redis.call('SET', T .. ':down', string.format('%d', now_ms()))
redis.call('INCR', T .. ':rev')
for i = 1, #nodes do
  push(nodes[i], 'S', '', '', '', '', '')
end
return #nodes
