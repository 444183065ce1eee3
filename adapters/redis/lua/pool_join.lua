-- pool_join.lua -- a node joins its pool, or refreshes its workers there
-- (adapters/ops/pool.h).
--#include pool_int
-- KEYS[1]: the pool's hash tag. Parts: nodes, workers, wnode, nw:<node>,
--          wseq, rev, life, ev:<node> (and those of pool_int's reap).
-- ARGV[1]: node id. ARGV[2]: worker TTL in ms. ARGV[3]: how long an unread
--          event list lives, in ms. ARGV[4..]: the node's worker ids.
-- Returns: the membership revision after the join.
local node = ARGV[1]
local now = now_ms()
reap(now)
redis.call('SET', T .. ':life', ARGV[3])
redis.call('ZADD', T .. ':nodes', now + tonumber(ARGV[2]), node)
local added = false
for i = 4, #ARGV do
  local w = ARGV[i]
  if not redis.call('ZSCORE', T .. ':workers', w) then
    redis.call('ZADD', T .. ':workers', redis.call('INCR', T .. ':wseq'), w)
    redis.call('HSET', T .. ':wnode', w, node)
    redis.call('SADD', T .. ':nw:' .. node, w)
    added = true
  end
end
if added then
  redis.call('INCR', T .. ':rev')
  broadcast()
end
return rev()
