-- lock_release.lua -- deletes a lease only if it still holds the caller's
-- token (compare-and-delete), and wakes its waiters (adapters/ops/lock.h).
-- KEYS[1]: the lock's hash tag "{prefix:name}". Parts: ":lock", the lease;
--          ":released", the channel its waiters listen on.
-- ARGV[1]: "<token>:<owner>", the value the caller acquired.
-- Returns: 1 when the lease was marked as waited for and a wake-up was
-- published, else 0; FLEET_ESTALE when it holds another value or none.
local lease = KEYS[1] .. ':lock'
local cur = redis.call('GET', lease)
if cur == ARGV[1] then
  redis.call('DEL', lease)
  return 0
end
if cur == '*' .. ARGV[1] then
  redis.call('DEL', lease)
  redis.call('PUBLISH', KEYS[1] .. ':released', ARGV[1])
  return 1
end
return redis.error_reply('FLEET_ESTALE the lease is not held with this token')
