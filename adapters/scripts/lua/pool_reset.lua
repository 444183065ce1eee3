-- pool_reset.lua -- opens a pool that was shut down (pool_shutdown) to new
-- nodes and workers again.
-- KEYS[1]: the pool's hash tag. Parts: down.
-- ARGV: none.
-- Returns: 1 when the pool was shut down (it is open now), 0 when it was
--   not (nothing changed).
return redis.call('DEL', KEYS[1] .. ':down')
