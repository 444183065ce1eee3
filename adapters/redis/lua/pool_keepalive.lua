-- pool_keepalive.lua -- keeps nodes and their workers alive for another
-- worker TTL, by the server clock, and removes the nodes whose keep-alive
-- lapsed (adapters/ops/pool.h). The client's batcher sends the
-- keep-alives of several nodes in one call; each is independent.
--#include pool_int
-- KEYS[i]: the hash tag of the i-th node's pool. Parts: nodes, rev (and
--          those of reap).
-- ARGV[3i-2]: its node id. ARGV[3i-1]: its worker TTL in ms. ARGV[3i]:
--          "1" when the node found its own keep-alive lapsed on its clock:
--          it leaves (its jobs are orphaned) and must join again.
-- Returns: one {status, revision} per node: status 1 when kept alive, -1
-- when the node is not in the pool (lapsed, removed, or the data was
-- lost): it must join again, and every job it ran was moved or lost.
local r = {}
local now = now_ms()
for i = 1, #KEYS do
  T = KEYS[i]
  local node = ARGV[3 * i - 2]
  if ARGV[3 * i] == '1' then
    if redis.call('ZSCORE', T .. ':nodes', node) then
      drop_node(node)
      broadcast()
    end
    r[i] = {-1, rev()}
  else
    reap(now)
    if redis.call('ZSCORE', T .. ':nodes', node) then
      redis.call('ZADD', T .. ':nodes', now + tonumber(ARGV[3 * i - 1]), node)
      r[i] = {1, rev()}
    else
      r[i] = {-1, rev()}
    end
  end
end
return r
