-- queue_rec.lua -- included by queue scripts (--#include queue_rec): the
-- records of schema v2 (docs/queue.md), read with plain finds, never with
-- patterns. Expects `int` (queue_int) defined before it. A job record is
-- "<attempts>\0<max_attempts>\0<created_ms>\0<type>\0<payload>", an empty
-- number taking its default (0 attempts, 3 attempts at most); an options
-- record is "<priority>\0<backoff>\0<unique>", empty meaning the default.
local find, sub = string.find, string.sub
local DEFAULT_BACKOFF = 'exp:1000:3600000:20'
local PRIO_UNIT = 4398046511104 -- 2^42: the pending order of a priority
-- The decimal digits, by value + 1: numbers spelled without formatting.
local DIGITS = {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9'}

-- Splits a job record: returns attempts, max_attempts and the positions of
-- its four separators (max_attempts, created_ms, type and payload follow
-- them). A record fleet cannot read raises FLEET_EPROTO naming the job.
local function rec_read(rec, id)
  local i = find(rec, '\0', 1, true)
  local j = i and find(rec, '\0', i + 1, true)
  local k = j and find(rec, '\0', j + 1, true)
  local l = k and find(rec, '\0', k + 1, true)
  if not l or l == k + 1 then
    error({err = 'FLEET_EPROTO bad job record: ' .. id})
  end
  local attempts, max = 0, 3
  if i > 1 then attempts = int(sub(rec, 1, i - 1)) end
  if j > i + 1 then max = int(sub(rec, i + 1, j - 1)) end
  return attempts, max, i, j, k, l
end

-- The priority, backoff and unique key of an options record (nil: none).
local function opts_read(v, id)
  if not v then return 0, DEFAULT_BACKOFF, nil end
  local i = find(v, '\0', 1, true)
  local j = i and find(v, '\0', i + 1, true)
  if not j then error({err = 'FLEET_EPROTO bad job options: ' .. id}) end
  local prio, backoff, unique = 0, DEFAULT_BACKOFF, nil
  if i > 1 then prio = int(sub(v, 1, i - 1)) end
  if j > i + 1 then backoff = sub(v, i + 1, j - 1) end
  if j < #v then unique = sub(v, j + 1) end
  return prio, backoff, unique
end
