-- warmpool_fail.lua -- a creation failed: its reservation ends and the pool's
-- shared failure count and backoff grow.
-- KEYS[1]: the pool's tag T "{prefix:pool}" (parts: adapters/ops/warmpool.h).
-- ARGV: id, error text, backoff base ms, backoff max ms.
-- Returns: {failures in a row, backoff ms}.
--#include warmpool_int
wp_keys()
redis.call('ZREM', MK, ARGV[1])
redis.call('HDEL', MKT, ARGV[1])
redis.call('ZREM', DMK, ARGV[1])
local fails = redis.call('HINCRBY', META, 'fails', 1)
local b = tonumber(ARGV[3]) * 2 ^ math.min(fails - 1, 30)
b = math.min(b, tonumber(ARGV[4]))
redis.call('HSET', META, 'backoff', fmt(now_ms() + b))
redis.call('HSET', META, 'err', ARGV[2])
return {fails, b}
