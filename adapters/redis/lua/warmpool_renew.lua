-- warmpool_renew.lua -- extends the borrow leases of n borrowed resources,
-- each in its own pool (adapters/ops/warmpool.h).
-- KEYS[i]: the tag of the i-th resource's pool.
-- ARGV[3i-2]: its id; ARGV[3i-1]: its borrower; ARGV[3i]: the lease ms.
-- Returns: one integer per resource: 1 extended | 0 not borrowed by that
-- borrower any more.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local r = {}
for i = 1, #KEYS do
  local id = ARGV[3 * i - 2]
  if redis.call('HGET', KEYS[i] .. ':wp:who', id) == ARGV[3 * i - 1] then
    redis.call('ZADD', KEYS[i] .. ':wp:bor',
               string.format('%d', now + tonumber(ARGV[3 * i])), id)
    r[i] = 1
  else
    r[i] = 0
  end
end
return r
