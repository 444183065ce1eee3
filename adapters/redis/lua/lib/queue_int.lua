-- queue_int.lua -- included by queue scripts (--#include queue_int): int(v)
-- reads an integer field of a record fleet wrote, and refuses anything
-- else with FLEET_EPROTO rather than computing with garbage.
--#include wake
local function int(v)
  local d = type(v) == 'string' and string.match(v, '^%-?(%d+)$')
  if not d or #d > 18 then
    error({err = 'FLEET_EPROTO job field is not an integer'})
  end
  return tonumber(v)
end
