-- cron_int.lua -- included by the cron scheduler's scripts (--#include
-- cron_int): the server clock, the registry's keys and the change signal
-- (adapters/ops/cron.h, docs/cron_scheduler.md).
-- KEYS[1] is the registry's tag "{<prefix>:<namespace>}" for the registry
-- ops, or the tag of a definition's occurrences for the occurrence ops.
--#include wake
local T = KEYS[1]
local fmt = string.format

-- The server's clock in ms: every "now" of the scheduler is this one.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Counts a change of the registry and tells the running schedulers.
local function changed()
  local rev = redis.call('INCR', T .. ':cron:rev')
  publish_wake(T .. ':cron:changed', rev)
  return rev
end
