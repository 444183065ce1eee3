-- instance.lua -- included by lib/pool_int.lua and lib/warmpool_int.lua
-- (--#include instance): instance_state(key, nonce) reads the lease of an
-- id that one live node instance at a time may hold, the key `key`
-- holding the random nonce of the instance that holds it. Returns 'mine'
-- when `nonce` holds it, 'free' when nobody does, 'other' when another
-- live instance does.
local function instance_state(key, nonce)
  local v = redis.call('GET', key)
  if not v then
    return 'free'
  end
  return v == nonce and 'mine' or 'other'
end
