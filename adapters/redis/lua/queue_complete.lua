-- queue_complete.lua -- completes claims still held: each is marked done in
-- the done hash (id -> "<finished_ms>:<token>:<attempt>") and listed in the
-- completed list; then the kept completed jobs are trimmed to a count and
-- an age.
-- KEYS[1]: the queue's hash tag "{prefix:queue}".
-- ARGV[1]: keep_count; ARGV[2]: keep_s (0: no age bound); then id, token
--   per claim.
-- Returns: {now_ms, then per claim 1 completed, 2 that claim already ended,
--   0 stale, -1 no such job}.
local call = redis.call
local tag = KEYS[1]
local jp = tag .. ':job:'
local t = call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fmt = string.format
--#include queue_trim

local out = {now}
local ids = {}
for i = 3, #ARGV - 1, 2 do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return out end
local claims = tag .. ':jobs:claims'
local donekey = tag .. ':jobs:done'
local held = call('HMGET', claims, unpack(ids))
local done, marks, list, seen = {}, {}, {}, {}
local nd = 0
local now_s = fmt('%d', now)
local prefix = now_s .. ':'
for i, id in ipairs(ids) do
  local tok = ARGV[2 * i + 2]
  local v = held[i]
  local tv, attempt
  if v then tv, attempt = string.match(v, '^(%d+):(%d+)$') end
  if seen[id] then
    -- Completed a moment ago by this batch.
    out[i + 1] = seen[id] == tok and 2 or 0
  elseif tv == tok then
    seen[id] = tok
    nd = nd + 1
    done[nd] = id
    marks[2 * nd - 1] = id
    marks[2 * nd] = prefix .. tok .. ':' .. attempt
    list[nd] = prefix .. id
    out[i + 1] = 1
  elseif v then
    out[i + 1] = 0 -- held by another claim
  else
    -- Not held: has the claim with this token ended, or is it stale?
    local f = call('HMGET', jp .. id, 'state', 'token')
    local d = call('HGET', donekey, id)
    if not f[1] then
      out[i + 1] = -1
    elseif f[2] == tok or (d and string.match(d, '^%d+:(%d+):') == tok) then
      out[i + 1] = 2
    else
      out[i + 1] = 0
    end
  end
end
if nd > 0 then
  call('HSET', donekey, unpack(marks))
  call('HDEL', claims, unpack(done))
  call('ZREM', tag .. ':jobs:running', unpack(done))
  call('RPUSH', tag .. ':jobs:completed', unpack(list))
  call('HINCRBY', tag .. ':stats', 'completed', nd)
  trim(tag .. ':jobs:completed', tonumber(ARGV[1]), tonumber(ARGV[2]),
       donekey)
end
return out
