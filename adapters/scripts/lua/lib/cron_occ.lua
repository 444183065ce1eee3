-- cron_occ.lua -- included by the occurrence scripts (--#include cron_occ),
-- after cron_int: the keys of one definition's occurrences and its log
-- entries. The occurrences of definition <key> of namespace <ns> live under
-- the tag T given in KEYS[1] (the target queue's tag for a queue-targeted
-- definition, else the definition's own), as S = T:cron:<ns>:<key>:
--   S:occ    zset   fire ms -> fire ms: the logged occurrences
--   S:ent    hash   fire ms -> "<token>\0<node>\0<dispatched_ms>\0
--                   <finished_ms>\0<outcome>"; and the fields "top" (the
--                   latest fire ms fired, never lowered) and "floor" (the
--                   latest fire ms trimmed from the log, never lowered),
--                   written with each fire (lib/cron_claim.lua)
--   S:fence  string the last fencing token given
--   S:top, S:floor  strings: "top" and "floor" as an older fleet wrote
--                   them, read when S:ent has no "top"
--   S:fired  string "<gen>:<count>": the fires of the definition created at
--                   gen (ms), for its fire limit
--   S:pend   zset   fire ms -> claim ms: a pool definition's occurrences
--                   claimed but not yet recorded as dispatched to the pool
local S = T .. ':cron:' .. ARGV[1] .. ':' .. ARGV[2]
local OCC, ENT = S .. ':occ', S .. ':ent'

-- A log entry from its fields, the numbers given as decimal strings.
local function entry_s(token, node, dispatched, finished, outcome)
  return token .. '\0' .. node .. '\0' .. dispatched .. '\0' .. finished ..
         '\0' .. outcome
end

-- A log entry from its fields, the numbers given as numbers.
local function entry(token, node, dispatched, finished, outcome)
  return entry_s(fmt('%d', token), node, fmt('%d', dispatched),
                 fmt('%d', finished), outcome)
end

-- Splits an entry into its fields as they are written, the numbers as
-- decimal strings; nil for one fleet did not write.
local function entry_fields(v)
  return string.match(v, '^(%d+)%z(%Z*)%z(%d+)%z(%d+)%z(.*)$')
end

-- Splits an entry, the numbers as numbers; nil for one fleet did not write.
local function entry_read(v)
  local tok, node, disp, fin, outcome = entry_fields(v)
  if not tok then return nil end
  return tonumber(tok), node, tonumber(disp), tonumber(fin), outcome
end
