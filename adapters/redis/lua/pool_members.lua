-- pool_members.lua -- the pool's workers in creation order, with the
-- membership revision (adapters/ops/pool.h).
--#include pool_int
-- KEYS[1]: the pool's hash tag. Parts: workers, wnode, rev.
-- ARGV: none.
-- Returns: {revision, worker_1, node_1, worker_2, node_2, ...}.
local r = {rev()}
local workers = redis.call('ZRANGE', T .. ':workers', 0, -1)
for i = 1, #workers do
  r[2 * i] = workers[i]
  r[2 * i + 1] = redis.call('HGET', T .. ':wnode', workers[i]) or ''
end
return r
