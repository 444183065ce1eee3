-- lock_release.lua -- deletes a lease only if it still holds the caller's
-- token (compare-and-delete), and wakes its waiters (adapters/ops/lock.h).
-- KEYS[1]: the lease "{prefix:name}:lock".
-- ARGV[1]: "<token>:<owner>", the value the caller acquired.
-- ARGV[2]: the released channel "{prefix:name}:released".
-- Returns: 1 when the lease was marked as waited for and a wake-up was
-- published, else 0; FLEET_ESTALE when it holds another value or none.
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 0
end
if cur == '*' .. ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], ARGV[1])
  return 1
end
return redis.error_reply('FLEET_ESTALE the lease is not held with this token')
