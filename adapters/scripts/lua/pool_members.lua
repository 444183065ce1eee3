-- pool_members.lua -- the pool's workers in creation order, with the
-- membership revision.
-- KEYS[1]: the pool's hash tag. Parts: workers, wnode, rev.
-- ARGV: none.
-- Returns: {revision, worker_1, node_1, created_1, worker_2, ...}, where
--   created is the worker's creation sequence number.
--#include pool_int
local r = {rev()}
local workers = redis.call('ZRANGE', T .. ':workers', 0, -1, 'WITHSCORES')
for i = 1, #workers, 2 do
  r[#r + 1] = workers[i]
  r[#r + 1] = redis.call('HGET', T .. ':wnode', workers[i]) or ''
  r[#r + 1] = workers[i + 1]
end
return r
