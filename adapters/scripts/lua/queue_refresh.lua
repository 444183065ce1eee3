-- queue_refresh.lua -- the heartbeat: moves the deadline of every claim still
-- held (its token in the claims hash) to now + claim_ttl_ms.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: claims.
--   Also cancel, rundl: a claim whose end was asked for (lib/queue_stop.lua)
--   is not moved past its run deadline, nor at all once cancelled.
-- ARGV[1]: claim_ttl_ms; then id, token per claim.
-- Returns: {now_ms, deadline_ms, then 1 (refreshed), 2 (held, but its job
--   was cancelled: the deadline stays, the grace the cancel gave) or 0
--   (stale) per claim}.
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
local find, sub, byte = string.find, string.sub, string.byte
local deadline = now + tonumber(ARGV[1])
local dl = string.format('%d', deadline)
--#include queue_stop
local out = {now, deadline}
local ids = {}
for i = 2, #ARGV - 1, 2 do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return out end
local claims = tag .. ':claims'
local held = call('HMGET', claims, unpack(ids))
local w, at, marked = {}, {}, false
for i, id in ipairs(ids) do
  local v, tok = held[i], ARGV[2 * i + 1]
  -- "<token>\0<attempt>\0<deadline>": the deadline follows the second \0.
  local p = v and sub(v, 1, #tok) == tok and byte(v, #tok + 1) == 0 and
                find(v, '\0', #tok + 2, true)
  if p then
    w[#w + 1] = id
    -- (A group's claim keeps its fourth field; a marked one, its deadline
    -- starting with "0", is rewritten by stop_refresh.)
    local q = find(v, '\0', p + 1, true)
    out[#out + 1] = 1
    if byte(v, p + 1) == 48 then
      marked = true
      w[#w + 1] = v
      at[#w / 2] = #out
    else
      w[#w + 1] = q and sub(v, 1, p) .. dl .. sub(v, q) or sub(v, 1, p) .. dl
    end
  else
    out[#out + 1] = 0
  end
end
if marked then w = stop_refresh(w, at, deadline, out) end
if #w > 0 then call('HSET', claims, unpack(w)) end
return out
