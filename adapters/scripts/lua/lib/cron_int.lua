-- cron_int.lua -- included by the cron scheduler's scripts (--#include
-- cron_int): the server clock (lib/time.lua), the registry's keys and the
-- change signal (adapters/ops/cron.h, docs/cron_scheduler.md).
-- KEYS[1] is the registry's tag "{<prefix>:<namespace>}" for the registry
-- ops, or the tag of a definition's occurrences for the occurrence ops.
--#include time
--#include wake
local T = KEYS[1]
local fmt = string.format

-- Whether decimal x (digits without a leading zero, as fleet writes fire
-- times) is at least decimal y, compared as strings: tonumber() of a
-- string runs strtod, which cost a fire more than any other of its Lua
-- steps.
local function dec_ge(x, y)
  if #x ~= #y then return #x > #y end
  return x >= y
end

-- A decimal argument as a number, "0" (the usual limit, start, end and
-- minimum token) without a conversion (tonumber() runs strtod), another
-- with one: the arithmetic's (Lua 5.1's tonumber() converts twice).
local function dec_num(v)
  if v == '0' then return 0 end
  return v + 0
end

-- Counts a change of the registry and tells the running schedulers.
local function changed()
  local rev = redis.call('INCR', T .. ':cron:rev')
  publish_wake(T .. ':cron:changed', rev)
  return rev
end
