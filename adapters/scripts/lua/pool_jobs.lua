-- pool_jobs.lua -- every job of the pool with its owner record.
-- KEYS[1]: the pool's hash tag. Parts: jobs.
-- ARGV: none.
-- Returns: {key_1, "<token>:<state>:<worker>", key_2, ...}.
return redis.call('HGETALL', KEYS[1] .. ':jobs')
