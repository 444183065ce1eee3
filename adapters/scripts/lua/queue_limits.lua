-- queue_limits.lua -- sets, clears or reads a queue's flow limits, holds its
-- claims, or sets a group's weight (docs/queue.md, "Flow control";
-- lib/queue_flow.lua has the keys). The claim scripts read the limits
-- (lib/queue_claim.lua). A change publishes on the wake channel, so that
-- the workers held back claim again under the new limits.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: limits, rl,
--   grl:<g>, grn, grun, ghold, gweight, groups, claims, jobs:wake.
-- ARGV[1]: "set", then rate_max, rate_ms, grate_max, grate_ms, conc,
--   gconc (each "0": no such limit), gturn (the jobs a group gives per turn
--   of the rotation, "0": 10); "clear"; "get"; "hold", then wait_ms
--   and the group ("": the queue); "weight", then the group and its
--   weight (1..1000; 1: the default, no entry).
-- Returns: "get": {rate_max, rate_ms, grate_max, grate_ms, conc, gconc,
--   gturn, rate_used, running, groups, held_until_ms} (0: none or the
--   default); the others: 1.
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
--#include queue_int
--#include queue_flow

local limits = tag .. ':limits'
local FIELDS = {'rate_max', 'rate_ms', 'grate_max', 'grate_ms', 'conc',
                'gconc', 'gturn'}

-- The claims of window `key` ("<ms>:<n>", newest first) newer than ms,
-- read without trimming it.
local function window_used(key, ms)
  local used = 0
  for _, e in ipairs(call('LRANGE', key, 0, -1)) do
    local t, k = string.match(e, '^(%d+):(%d+)$')
    if t and tonumber(t) > now - ms then used = used + tonumber(k) end
  end
  return used
end

-- Drops every group's rate window.
local function drop_group_windows()
  local all = call('HGETALL', tag .. ':grn')
  for x = 1, #all, 2 do call('DEL', tag .. ':grl:' .. all[x]) end
  call('DEL', tag .. ':grn')
end

local what = ARGV[1]
if what == 'get' then
  local L = call('HMGET', limits, 'rate_max', 'rate_ms', 'grate_max',
                 'grate_ms', 'conc', 'gconc', 'gturn', 'hold')
  local out = {}
  for x = 1, 7 do out[x] = tonumber(L[x]) or 0 end
  out[8] = out[1] > 0 and window_used(tag .. ':rl', out[2]) or 0
  local h = call('HLEN', tag .. ':claims')
  out[9] = h > 0 and h - 1 or 0
  local groups = 0
  for _, g in ipairs(call('LRANGE', tag .. ':groups', 0, -1)) do
    if g ~= '' then groups = groups + 1 end
  end
  out[10] = groups
  local hold = tonumber(L[8]) or 0
  out[11] = hold > now and hold or 0
  return out
elseif what == 'set' or what == 'clear' then
  local old = call('HMGET', limits, unpack(FIELDS))
  local new = {}
  for x = 1, 7 do new[x] = what == 'set' and tonumber(ARGV[x + 1]) or 0 end
  for x = 1, 7 do
    if new[x] > 0 then
      call('HSET', limits, FIELDS[x], dec(new[x]))
    else
      call('HDEL', limits, FIELDS[x])
    end
  end
  if new[1] == 0 then
    call('DEL', tag .. ':rl')
    call('HDEL', limits, 'rl_n')
  end
  if new[3] == 0 then drop_group_windows() end
  -- The running count per group is kept only under a group concurrency
  -- limit: set, it is counted from the claims.
  if new[6] == 0 then
    call('DEL', tag .. ':grun')
  elseif not old[6] then
    call('DEL', tag .. ':grun')
    local all = call('HGETALL', tag .. ':claims')
    for x = 1, #all, 2 do
      if all[x] ~= '' then
        local g = claim_group(all[x + 1])
        if g ~= '' then call('HINCRBY', tag .. ':grun', g, 1) end
      end
    end
  end
  call('HDEL', limits, 'slotwait')
  publish_wake(tag .. ':jobs:wake', 'wake')
  return 1
elseif what == 'hold' then
  flow_hold(ARGV[3], now + tonumber(ARGV[2]))
  return 1
elseif what == 'weight' then
  local w = tonumber(ARGV[3])
  if w == 1 then
    call('HDEL', tag .. ':gweight', ARGV[2])
  else
    call('HSET', tag .. ':gweight', ARGV[2], dec(w))
  end
  if call('EXISTS', tag .. ':gweight') == 1 then
    call('HSET', limits, 'weighted', '1')
  else
    call('HDEL', limits, 'weighted')
  end
  return 1
end
return redis.error_reply('FLEET_EINVAL unknown action ' .. tostring(what))
