-- queue_groups.lua -- a page of a queue's groups in name order, with what
-- flow control holds of each (docs/queue.md, "Flow control"): the groups
-- with pending jobs (in the rotation), running jobs (in the claims), a
-- weight or a hold that has not ended. It reads every claim and every
-- group: it is meant for tools, not hot paths.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: groups, gp:<g>,
--   gz:<g>, claims, gweight, ghold, grl:<g>, limits.
-- ARGV[1]: after (the page starts after this name; "" for the first);
--   ARGV[2]: limit.
-- Returns: {total, then per group: name, pending, running, rate_used,
--   weight, held_until_ms (0: none)}.
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
--#include queue_int
--#include queue_freed

local info, names = {}, {}
local function get(g)
  local v = info[g]
  if not v then
    v = {pending = 0, running = 0, weight = 1, hold = 0}
    info[g] = v
    names[#names + 1] = g
  end
  return v
end
for _, g in ipairs(call('LRANGE', tag .. ':groups', 0, -1)) do
  if g ~= '' then
    -- (A set the rotation holds may have emptied: listed if it holds
    -- jobs, or for what follows.)
    local n = call('LLEN', tag .. ':gp:' .. g) +
                call('ZCARD', tag .. ':gz:' .. g)
    if n > 0 then get(g).pending = n end
  end
end
local claims = call('HGETALL', tag .. ':claims')
for x = 1, #claims, 2 do
  if claims[x] ~= '' then
    local g = claim_group(claims[x + 1])
    if g ~= '' then
      local v = get(g)
      v.running = v.running + 1
    end
  end
end
local w = call('HGETALL', tag .. ':gweight')
for x = 1, #w, 2 do get(w[x]).weight = tonumber(w[x + 1]) or 1 end
local h = call('HGETALL', tag .. ':ghold')
for x = 1, #h, 2 do
  local t = tonumber(h[x + 1]) or 0
  if t > now then get(h[x]).hold = t end
end
table.sort(names)
local L = call('HMGET', tag .. ':limits', 'grate_max', 'grate_ms')
local gms = L[1] and tonumber(L[2])
local after, limit = ARGV[1], tonumber(ARGV[2])
local out = {#names}
for _, g in ipairs(names) do
  if (after == '' or g > after) and (#out - 1) / 6 < limit then
    local v = info[g]
    local used = 0
    if gms then
      for _, e in ipairs(call('LRANGE', tag .. ':grl:' .. g, 0, -1)) do
        local t, k = string.match(e, '^(%d+):(%d+)$')
        if t and tonumber(t) > now - gms then used = used + tonumber(k) end
      end
    end
    out[#out + 1] = g
    out[#out + 1] = v.pending
    out[#out + 1] = v.running
    out[#out + 1] = used
    out[#out + 1] = v.weight
    out[#out + 1] = v.hold
  end
end
return out
