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
local call = redis.call
local r = {}
for i = 1, #KEYS do
  local lease, value = KEYS[i] .. ':lock', ARGV[i]
  local cur = redis.pcall('GET', lease)
  if cur == value then
    call('DEL', lease)
    r[i] = 1
  elseif cur == '*' .. value then
    call('DEL', lease)
    publish_wake(KEYS[i] .. ':released', value)
    r[i] = 2
  elseif type(cur) == 'table' then
    if string.sub(cur.err, 1, 9) ~= 'WRONGTYPE' then
      return cur
    end
    r[i] = -1
  else
    r[i] = 0
  end
end
return r
