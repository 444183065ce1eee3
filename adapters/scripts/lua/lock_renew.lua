-- lock_renew.lua -- extends every lease that still holds its caller's token
-- to a full TTL (compare-and-extend, PEXPIRE), for any number of lock names.
-- KEYS[i]: the hash tag "{prefix:name}" of the i-th lock (n >= 1, any
--          names). Part: ":lock", its lease.
-- ARGV[2i-1]: its "<token>:<owner>"; ARGV[2i]: its TTL in ms.
-- Returns: one integer per lock: 1 extended, 0 not held with that value,
--   -1 the lease holds another type.
local r = {}
for i = 1, #KEYS do
  local lease = KEYS[i] .. ':lock'
  local cur = redis.pcall('GET', lease)
  local value = ARGV[2 * i - 1]
  if cur == value or cur == '*' .. value then
    redis.call('PEXPIRE', lease, ARGV[2 * i])
    r[i] = 1
  elseif type(cur) == 'table' then
    r[i] = -1
  else
    r[i] = 0
  end
end
return r
