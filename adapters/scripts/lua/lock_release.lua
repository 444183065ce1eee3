-- lock_release.lua -- deletes each of n leases only if it still holds its
-- caller's token (compare-and-delete; marked as waited for or not), and, when
-- it was marked, publishes its value on its released channel to wake its
-- waiters. The locks are independent: one lock's result never changes
-- another's.
-- KEYS[i]: the hash tag "{prefix:name}" of the i-th lock (n >= 1, any
--          names). Parts: ":lock", the lease; ":released", the channel its
--          waiters listen on.
-- ARGV[i]: its "<token>:<owner>", the value the caller acquired.
-- Returns: one integer per lock: 2 released, and a wake-up was published
--   (the lease was marked as waited for); 1 released; 0 not held with that
--   value (nothing changed); -1 the lease holds another type. Any other
--   error is the error of the whole call.
--#include wake
--#include lock_lease
local call = redis.call
local r = {}
for i = 1, #KEYS do
  local lease, value = KEYS[i] .. ':lock', ARGV[i]
  local cur = redis.pcall('GET', lease)
  local m = lease_match(cur, value)
  if m == -1 and string.sub(cur.err, 1, 9) ~= 'WRONGTYPE' then
    return cur
  end
  if m > 0 then
    call('DEL', lease)
  end
  if m == 2 then
    publish_wake(KEYS[i] .. ':released', value)
  end
  r[i] = m
end
return r
