-- queue_refresh.lua -- the heartbeat: moves the deadline of every claim
-- still held (its token in the claims hash) to now + claim_ttl_ms.
-- KEYS[1]: the queue's hash tag "{prefix:queue}".
-- ARGV[1]: claim_ttl_ms; then id, token per claim.
-- Returns: {now_ms, deadline_ms, then 1 (refreshed) or 0 (stale) per claim}.
local call = redis.call
local tag = KEYS[1]
local t = call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = now + tonumber(ARGV[1])
local out = {now, deadline}
local ids = {}
for i = 2, #ARGV - 1, 2 do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return out end
local held = call('HMGET', tag .. ':jobs:claims', unpack(ids))
local z = {}
for i, id in ipairs(ids) do
  local v = held[i]
  if v and string.match(v, '^(%d+):') == ARGV[2 * i + 1] then
    z[#z + 1] = deadline
    z[#z + 1] = id
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if #z > 0 then call('ZADD', tag .. ':jobs:running', unpack(z)) end
return out
