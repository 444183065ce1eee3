-- queue_release.lua -- hands claims back: each job still held goes back to
-- pending at its place (priority and age), and its attempt does not count.
-- KEYS[1]: the queue's hash tag "{prefix:queue}".
-- ARGV: id, token per claim.
-- Returns: {now_ms, then per claim 1 released, 2 that claim already ended,
--   0 stale, -1 no such job}.
local call = redis.call
local tag = KEYS[1]
local jp = tag .. ':job:'
local t = call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local pending = tag .. ':jobs:pending'
local claims = tag .. ':jobs:claims'
--#include queue_int

local out = {now}
local ids = {}
for i = 1, #ARGV - 1, 2 do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return out end
local was_empty = call('ZCARD', pending) == 0
local held = call('HMGET', claims, unpack(ids))
local released, seen = {}, {}
for i, id in ipairs(ids) do
  local tok = ARGV[2 * i]
  local v = held[i]
  local f = call('HMGET', jp .. id, 'order', 'type', 'token')
  if seen[id] then
    -- Released a moment ago by this batch.
    out[#out + 1] = seen[id] == tok and 2 or 0
  elseif not f[2] then
    out[#out + 1] = -1
  elseif v and string.match(v, '^(%d+):') == tok then
    seen[id] = tok
    call('HSET', jp .. id, 'state', 'pending', 'token', tok)
    call('ZADD', pending, int(f[1]), id)
    call('SADD', tag .. ':jobs:by_type:' .. f[2], id)
    released[#released + 1] = id
    out[#out + 1] = 1
  elseif v then
    out[#out + 1] = 0 -- held by another claim
  else
    local d = call('HGET', tag .. ':jobs:done', id)
    if f[3] == tok or (d and string.match(d, '^%d+:(%d+):') == tok) then
      out[#out + 1] = 2
    else
      out[#out + 1] = 0
    end
  end
end
if #released > 0 then
  call('HDEL', claims, unpack(released))
  call('ZREM', tag .. ':jobs:running', unpack(released))
  if was_empty then call('PUBLISH', tag .. ':jobs:wake', 'wake') end
end
return out
