-- pool_leave.lua -- a node leaves its pool and gives its id up: its workers
-- go, their jobs are orphaned and the other nodes place them again. A node
-- whose id another live instance holds now touches nothing: the id and the
-- membership are that instance's.
-- KEYS[1]: the pool's hash tag. Parts: id:<node>, nodes, workers, wnode,
--          nw:<node>, wj:<worker>, jobs, next, rev, ev:<node>.
-- ARGV[1]: node id. ARGV[2]: its instance nonce.
-- Returns: 1, 0 when the node was not in the pool, or -1 when another
--   instance holds the id (nothing changed).
--#include pool_int
local node, nonce = ARGV[1], ARGV[2]
local id = id_state(node, nonce)
if id == 'other' then
  return -1
end
if id == 'mine' then
  redis.call('DEL', T .. ':id:' .. node)
end
redis.call('DEL', T .. ':ev:' .. node)
if not redis.call('ZSCORE', T .. ':nodes', node) then
  return 0
end
-- A node without workers changes nobody's placement.
local had = redis.call('EXISTS', T .. ':nw:' .. node) == 1
drop_node(node)
if had then
  broadcast()
end
return 1
