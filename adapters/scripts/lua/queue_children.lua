-- queue_children.lua -- reads a flow's parent's children
-- (lib/queue_deps.lua, docs/queue.md "Flows"): each child's queue tag, id,
-- state and result, in the order the flow gave them. Kept from the flow's
-- creation until the parent ends (completed, dead or cancelled).
-- KEYS[1]: the parent queue's hash tag "{prefix:queue}"; parts: kids:<id>,
--   deps.
-- ARGV[1]: the parent's id.
-- Returns: {waiting (the children not ended yet), fail ('1': a child's
--   death kills the parent), then child tag, child id, state ('waiting',
--   'completed' or 'dead'), result per child}.
-- Errors: FLEET_ENOTFOUND (no flow parent with this id, or it ended),
--   FLEET_EPROTO.
local call = redis.call
local tag = KEYS[1]
local id = ARGV[1]
local all = call('HGETALL', tag .. ':kids:' .. id)
if #all == 0 then
  return redis.error_reply('FLEET_ENOTFOUND no flow parent ' .. id)
end
local STATES = {w = 'waiting', c = 'completed', d = 'dead'}
local by, n, flags = {}, 0, nil
for x = 1, #all, 2 do
  local f, v = all[x], all[x + 1]
  if f == '' then
    flags = v
  else
    local i = tonumber(f)
    local p = string.find(v, '\0', 1, true)
    local q = p and string.find(v, '\0', p + 1, true)
    local r = q and string.find(v, '\0', q + 1, true)
    local st = STATES[string.sub(v, 1, 1)]
    if not i or not r or p ~= 2 or not st then
      return redis.error_reply('FLEET_EPROTO bad flow child ' .. f ..
                               ' of ' .. id)
    end
    by[i] = {string.sub(v, p + 1, q - 1), string.sub(v, q + 1, r - 1), st,
             string.sub(v, r + 1)}
    n = n + 1
  end
end
local out = {call('HGET', tag .. ':deps', id) or '0',
             flags == 'f' and '1' or '0'}
for i = 1, n do
  local c = by[i]
  if not c then
    return redis.error_reply('FLEET_EPROTO flow ' .. id .. ' lacks child ' ..
                             i)
  end
  for _, v in ipairs(c) do out[#out + 1] = v end
end
return out
