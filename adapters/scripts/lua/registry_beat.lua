-- registry_beat.lua -- refreshes entries of the process registry
-- (docs/registry.md): each entry's expiry becomes now + its TTL by the
-- server clock and its details are written; a new entry's start time is
-- the server's now. Removes up to 100 entries whose expiry passed, and
-- keeps both keys alive for at least the longest TTL given. The client's
-- batcher sends the beats of every registered handle of a client in one
-- call.
-- KEYS[1]: the registry's hash tag "{prefix:}" (the tag of an empty
--   name, which no object has); parts: workers (a sorted
--   set: entry -> expiry, unix ms), workers:info (a hash: entry ->
--   "<started ms>\0<ttl ms>\0<details>").
-- ARGV[4i-3]: the i-th entry, "<kind>\0<name>\0<id>\0<nonce>" (the nonce
--   of the handle's instance). ARGV[4i-2]: its TTL in ms (1000..3600000).
--   ARGV[4i-1]: its start time in unix ms, '' for now (a first beat).
--   ARGV[4i]: its details,
--   "<kind>\0<id>\0<name>\0<host>\0<pid>\0<jobs held>" then "\0<job id>"
--   for each job id listed.
-- Returns: {now_ms, started_1, ..., started_n}: each entry's start time as
--   stored.
local call = redis.call
--#include time
local now = now_ms()
local set, info = KEYS[1] .. ':workers', KEYS[1] .. ':workers:info'
local gone = call('ZRANGEBYSCORE', set, '-inf', now - 1, 'LIMIT', 0, 100)
if #gone > 0 then
  call('ZREM', set, unpack(gone))
  call('HDEL', info, unpack(gone))
end
local r, keep = {now}, 0
for i = 1, #ARGV / 4 do
  local ttl = tonumber(ARGV[4 * i - 2])
  if not ttl or ttl < 1000 or ttl > 3600000 then
    return redis.error_reply('FLEET_EINVAL bad registry TTL')
  end
  local started = tonumber(ARGV[4 * i - 1]) or now
  call('ZADD', set, now + ttl, ARGV[4 * i - 3])
  call('HSET', info, ARGV[4 * i - 3],
       started .. '\0' .. ttl .. '\0' .. ARGV[4 * i])
  if ttl > keep then keep = ttl end
  r[#r + 1] = started
end
if keep > 0 then
  for _, k in ipairs({set, info}) do
    if call('PTTL', k) < keep then call('PEXPIRE', k, keep) end
  end
end
return r
