-- warmpool_snapshot.lua -- the pool's shared state and counts.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: min remaining ms.
-- Returns: {target (-1: none), live idle, idle entries, borrowed, creating,
--   to destroy, failures, backoff ms left, last error, primary lease value
--   ("" when none), its pttl, fingerprint}.
--#include warmpool_int
wp_keys()
local now = now_ms()
local m = redis.call('HMGET', META, 'target', 'fails', 'backoff', 'err', 'fp')
local backoff = tonumber(m[3] or '0') or 0
local lease = redis.call('GET', T .. ':lock') or ''
if string.byte(lease, 1) == 42 then
  lease = string.sub(lease, 2)
end
return {tonumber(m[1] or '-1'), live(now, tonumber(ARGV[1])),
        redis.call('ZCARD', IDLE),
        redis.call('HLEN', WHO) - redis.call('HEXISTS', WHO, ''),
        redis.call('ZCARD', MK) + redis.call('ZCARD', DMK),
        redis.call('ZCARD', DEAD), tonumber(m[2] or '0'),
        backoff > now and backoff - now or 0, m[4] or '',
        lease, redis.call('PTTL', T .. ':lock'), m[5] or ''}
