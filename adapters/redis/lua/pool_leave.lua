-- pool_leave.lua -- a node leaves its pool: its workers go, their jobs are
-- orphaned and the other nodes place them again (adapters/ops/pool.h).
--#include pool_int
-- KEYS[1]: the pool's hash tag. Parts: nodes, workers, wnode, nw:<node>,
--          wj:<worker>, jobs, next, rev, ev:<node>.
-- ARGV[1]: node id.
-- Returns: 1, or 0 when the node was not in the pool.
local node = ARGV[1]
redis.call('DEL', T .. ':ev:' .. node)
if not redis.call('ZSCORE', T .. ':nodes', node) then
  return 0
end
drop_node(node)
broadcast()
return 1
