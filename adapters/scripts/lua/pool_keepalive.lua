-- pool_keepalive.lua -- keeps nodes, their ids and their workers alive for
-- another worker TTL, by the server clock, and removes the nodes whose
-- keep-alive lapsed. The client's batcher sends the keep-alives of several
-- nodes in one call; each is independent.
-- KEYS[i]: the hash tag of the i-th node's pool. Parts: id:<node>, nodes,
--          rev (and those of reap).
-- ARGV[5i-4]: its node id. ARGV[5i-3]: its instance nonce. ARGV[5i-2]:
--          its worker TTL in ms. ARGV[5i-1]: "1" when the node found its
--          own keep-alive lapsed on its clock: it leaves (its jobs are
--          orphaned) and must join again. ARGV[5i]: "1" when the node
--          joined with workers (it must be a member), "0" when it holds
--          its id only (client-only, or no worker yet).
-- Returns: one {status, revision} per node: status 1 when kept alive, -1 when
--   the node is not in the pool or its id lease lapsed (lapsed, removed, or
--   the data was lost): it must join again, and every job it ran was moved or
--   lost; -2 when another live instance holds the node's id: nothing was
--   touched, and the node must stop acting under it.
--#include pool_int
local r = {}
local now = now_ms()
for i = 1, #KEYS do
  T = KEYS[i]
  local node, nonce = ARGV[5 * i - 4], ARGV[5 * i - 3]
  local ttl = tonumber(ARGV[5 * i - 2])
  local id = id_state(node, nonce)
  if id == 'other' then
    r[i] = {-2, rev()}
  elseif ARGV[5 * i - 1] == '1' then
    if redis.call('ZSCORE', T .. ':nodes', node) then
      drop_node(node)
      broadcast()
    end
    r[i] = {-1, rev()}
  else
    reap(now)
    local member = redis.call('ZSCORE', T .. ':nodes', node)
    if id == 'mine' and (member or ARGV[5 * i] ~= '1') then
      if member then
        redis.call('ZADD', T .. ':nodes', now + ttl, node)
      end
      redis.call('PEXPIRE', T .. ':id:' .. node, ttl)
      r[i] = {1, rev()}
    else
      r[i] = {-1, rev()}
    end
  end
end
return r
