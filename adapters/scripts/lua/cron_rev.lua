-- cron_rev.lua -- the registry's revision and the server clock: a running
-- scheduler's periodic check (the fallback of the change channel).
-- KEYS[1]: the registry's tag. Part: cron:rev.
-- ARGV: none.
-- Returns: {revision, now_ms}.
--#include cron_int
return {tonumber(redis.call('GET', T .. ':cron:rev') or '0'), now_ms()}
