-- pool_payload.lua -- a job's payload.
-- KEYS[1]: the pool's hash tag. Parts: pay.
-- ARGV[1]: job key.
-- Returns: the payload, or nil when there is no such job.
return redis.call('HGET', KEYS[1] .. ':pay', ARGV[1])
