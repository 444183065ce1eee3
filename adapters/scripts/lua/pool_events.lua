-- pool_events.lua -- takes the oldest events from a node's event list. Only
-- the instance that holds the node's id, or one whose id lease is not taken,
-- takes them.
-- KEYS[1]: the pool's hash tag. Parts: id:<node>, ev:<node>.
-- ARGV[1]: node id. ARGV[2]: the most events to take. ARGV[3]: the
--          node's instance nonce.
-- Returns: six strings per event: kind, key, worker, token, data, from.
--   Error FLEET_ECONFLICT, naming the id, when another live instance holds
--   the node's id (nothing taken).
--#include pool_int
if id_state(ARGV[1], ARGV[3]) == 'other' then
  id_conflict(ARGV[1])
end
local ev = T .. ':ev:' .. ARGV[1]
local n = 6 * tonumber(ARGV[2])
local r = redis.call('LPOP', ev, n) or {}
-- A full batch may leave events behind, which keep the list's expiry from
-- their push (lib/pool_int.lua's push sets it on an empty list only):
-- restart it, since the node reads.
if #r == n then
  ev_expire(ev)
end
return r
