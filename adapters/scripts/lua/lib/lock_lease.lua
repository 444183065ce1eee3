-- lock_lease.lua -- included by the lock scripts that end or extend a
-- lease (--#include lock_lease): lease_match(cur, value) tells whether the
-- lease value `cur` (GET's reply through redis.pcall) is the caller's
-- "<token>:<owner>" `value`: 1 when it is, 2 when it is with the "*" in
-- front that marks it as waited for, 0 when the lease is free or another
-- holder's, -1 when `cur` is an error (the lease holds another type: a
-- caller may pass other errors on).
local function lease_match(cur, value)
  if cur == value then
    return 1
  elseif cur == '*' .. value then
    return 2
  elseif type(cur) == 'table' then
    return -1
  end
  return 0
end
