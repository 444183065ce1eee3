-- cron_int.lua -- included by the cron scheduler's scripts (--#include
-- cron_int): the server clock (lib/time.lua), the registry's keys and the
-- change signal (adapters/ops/cron.h, docs/cron_scheduler.md).
-- KEYS[1] is the registry's tag "{<prefix>:<namespace>}" for the registry
-- ops, or the tag of a definition's occurrences for the occurrence ops.
--#include time
--#include wake
local T = KEYS[1]
local fmt = string.format

-- Counts a change of the registry and tells the running schedulers.
local function changed()
  local rev = redis.call('INCR', T .. ':cron:rev')
  publish_wake(T .. ':cron:changed', rev)
  return rev
end
