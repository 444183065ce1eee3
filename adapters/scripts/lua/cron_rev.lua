-- cron_rev.lua -- the registry's revision and the server clock: a running
-- scheduler's periodic check (the fallback of the change channel).
--#include cron_int
-- KEYS[1]: the registry's tag. ARGV: none.
-- Returns {revision, now_ms}.
return {tonumber(redis.call('GET', T .. ':cron:rev') or '0'), now_ms()}
