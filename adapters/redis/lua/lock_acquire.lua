-- lock_acquire.lua -- takes the lease of a lock name with a new fencing
-- token if it is free (adapters/ops/lock.h).
-- KEYS[1]: the lock's hash tag "{prefix:name}". Parts: ":lock", the lease,
--          "<token>:<owner>" with a TTL, "*" in front while some owner
--          waits for it; ":fence", the last token issued, which never
--          expires, so tokens grow across expiry and restarts.
-- ARGV[1]: the owner id.
-- ARGV[2]: the TTL in ms, a positive integer (the server expires the lease
--          on its own clock).
-- ARGV[3]: "1" to mark a busy lease as waited for, so that its release
--          publishes a wake-up; else "0".
-- Returns: the token when the lease was taken; else {lease, pttl}.
local lease = KEYS[1] .. ':lock'
local token = redis.call('INCR', KEYS[1] .. ':fence')
if redis.call('SET', lease, string.format('%d', token) .. ':' .. ARGV[1],
              'NX', 'PX', ARGV[2]) then
  return token
end
local cur = redis.call('GET', lease)
if ARGV[3] == '1' and string.byte(cur, 1) ~= 42 then
  cur = '*' .. cur
  redis.call('SET', lease, cur, 'KEEPTTL')
end
return {cur, redis.call('PTTL', lease)}
