-- warmpool_renew.lua -- extends the borrow leases of n borrowed resources,
-- each in its own pool, and the owner id leases of started nodes.
-- KEYS[i]: the tag of the i-th item's pool.
-- ARGV[4i-3]: the resource id, or "" for the owner id's lease itself;
--   ARGV[4i-2]: the borrower (owner) id; ARGV[4i-1]: the lease ms; ARGV[4i]:
--   the instance nonce.
-- Returns: one integer per item: 1 extended | 0 not borrowed by that instance
--   any more | 2 (owner lease) it had run out and was free: taken again | -1
--   another live instance holds the owner id (nothing changed).
--#include time
-- Whether the T:wp:who value `v` ("<expiry>:<owner>/<nonce>", or an older
-- fleet's "<owner>/<nonce>") names the borrower `who`.
local function borrowed_by(v, who)
  return v ~= false and (v == who or string.match(v, '^%d+:(.*)$') == who)
end
local now = now_ms()
local r = {}
for i = 1, #KEYS do
  local id, owner = ARGV[4 * i - 3], ARGV[4 * i - 2]
  local lease, nonce = ARGV[4 * i - 1], ARGV[4 * i]
  local own = KEYS[i] .. ':wp:own:' .. owner
  local held = redis.call('GET', own)
  if held and held ~= nonce then
    r[i] = -1
  elseif id == '' then
    if held then
      redis.call('PEXPIRE', own, lease)
      r[i] = 1
    else
      redis.call('SET', own, nonce, 'PX', lease)
      r[i] = 2
    end
  elseif borrowed_by(redis.call('HGET', KEYS[i] .. ':wp:who', id),
                     owner .. '/' .. nonce) then
    redis.call('ZADD', KEYS[i] .. ':wp:bor',
               string.format('%d', now + tonumber(lease)), id)
    r[i] = 1
  else
    r[i] = 0
  end
end
return r
