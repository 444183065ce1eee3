-- lock_acquire.lua -- takes the lease of each of n lock names with a new
-- fencing token where it is free (SET NX PX). Each lock takes a new token
-- (fence_next()), also when its lease is busy. The locks are independent: one
-- lock's result never changes another's, and the reply has a fixed number of
-- elements per lock, so that the client's batcher carries the acquires of
-- many handles in one call. A fenced op (adapters/backend.h): its last ARGV
-- is the failover epoch.
-- KEYS[i]: the hash tag "{prefix:name}" of the i-th lock (n >= 1, any
--          names). Parts: ":lock", the lease, "<token>:<owner>" with a
--          TTL, "*" in front while some owner waits for it; ":fence", the
--          last token issued, which never expires, so tokens grow across
--          expiry and restarts (lib/fence.lua: and across a failover).
-- ARGV[3i-2]: its owner id.
-- ARGV[3i-1]: its TTL in ms, a positive integer (the server expires the
--          lease on its own clock).
-- ARGV[3i]: "1" to mark a busy lease as waited for, so that its release
--          publishes a wake-up; else "0".
--          When every lock has the same three, ARGV may hold them once
--          (ARGV[1..3] for each i), as the client's batcher sends them.
-- ARGV[last] (3n+1, or 4 in the short form): the failover epoch, which the
--          adapter appends (lib/fence.lua: tokens never repeat or go back
--          across a failover).
-- Returns: two integers per lock, {r, pttl}: r the token when the lease
--   was taken (pttl 0); r 0 when it is busy, pttl that of the holder's
--   lease; r -1 when the lease or the fence holds another type, r -2 when
--   the fence is not an integer (pttl 0; nothing written). Any other error
--   (FLEET_EOOM, FLEET_EREADONLY, FLEET_E2BIG for an epoch out of range,
--   ...) is the error of the whole call, possibly after earlier locks were
--   taken. An ARGV of another length is FLEET_EINVAL, nothing written.
--#include fence
local lpcall = pcall -- Lua's, which catches the errors fence raises
local call, pcall, format = redis.call, redis.pcall, string.format
-- The epoch's base, read once per call: a malformed or too large epoch is
-- the error of the whole call, before anything is written.
local ok, base = lpcall(fence_base)
if not ok then
  return type(base) == 'table' and base or {err = tostring(base)}
end
-- Each lock's owner, TTL and mark start after ARGV[a * (i - 1)]: a = 3,
-- or 0 when the call holds them once.
local a = 3
if #ARGV == 4 then
  a = 0
elseif #ARGV ~= 3 * #KEYS + 1 then
  return {err = 'FLEET_EINVAL lock_acquire takes 3 arguments per lock, ' ..
              'or 3 for all, then the epoch'}
end
local r = {}
for i = 1, #KEYS do
  local lease, fence = KEYS[i] .. ':lock', KEYS[i] .. ':fence'
  local o = a * (i - 1)
  -- fence_next(fence, 1) in one command as long as the counter is past
  -- this epoch's base and below 2^53 (its own first test); else the INCR
  -- is given back and fence_next takes the token, raising the counter to
  -- the base or refusing (FLEET_E2BIG).
  local token = pcall('INCR', fence)
  if type(token) == 'number' and (token <= base or
                                  token >= 9007199254740992) then
    call('INCRBY', fence, '-1')
    ok, token = lpcall(fence_next, fence, 1)
    -- (Redis's pcall gives the error's text, the memory backend's the
    -- error table.)
    if not ok and type(token) ~= 'table' then
      token = {err = tostring(token)}
    end
  end
  local res, pttl = token, 0
  if type(token) == 'table' then
    if string.sub(token.err, 1, 9) == 'WRONGTYPE' then
      res = -1
    elseif string.find(token.err, 'not an integer', 1, true) then
      res = -2
    else
      return token
    end
  elseif not call('SET', lease, format('%d', token) .. ':' .. ARGV[o + 1],
                  'NX', 'PX', ARGV[o + 2]) then
    local cur = pcall('GET', lease)
    if type(cur) == 'table' then
      if string.sub(cur.err, 1, 9) ~= 'WRONGTYPE' then
        return cur
      end
      res = -1
    else
      if ARGV[o + 3] == '1' and string.byte(cur, 1) ~= 42 then
        call('SET', lease, '*' .. cur, 'KEEPTTL')
      end
      res, pttl = 0, call('PTTL', lease)
    end
  end
  r[2 * i - 1] = res
  r[2 * i] = pttl
end
return r
