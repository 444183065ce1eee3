-- lock_query.lua -- reads a lease and its fence (adapters/ops/lock.h).
-- KEYS[1]: the lease "{prefix:name}:lock".
-- KEYS[2]: the fence "{prefix:name}:fence".
-- ARGV: none.
-- Returns: {lease or "" when free, pttl of the lease, fence or "0"}.
local cur = redis.call('GET', KEYS[1]) or ''
local fence = redis.call('GET', KEYS[2]) or '0'
return {cur, redis.call('PTTL', KEYS[1]), fence}
