-- lock_query.lua -- reads a lease and its fence.
-- KEYS[1]: the lock's hash tag "{prefix:name}". Parts: ":lock", the lease;
--          ":fence", the last token issued.
-- ARGV: none.
-- Returns: {lease value or "" when free, pttl of the lease, the fence as a
--   string ("0" before the first token)}.
local lease = KEYS[1] .. ':lock'
local cur = redis.call('GET', lease) or ''
local fence = redis.call('GET', KEYS[1] .. ':fence') or '0'
return {cur, redis.call('PTTL', lease), fence}
