-- queue_cancel.lua -- deletes a job that is pending or delayed, with its
-- unique key if it still holds it.
-- KEYS[1]: the queue's hash tag "{prefix:queue}".
-- ARGV[1]: id.
-- Returns: 1.
-- Errors: FLEET_ENOTFOUND, FLEET_EBUSY (claimed), FLEET_EALREADY (completed
--   or dead).
local call = redis.call
local tag = KEYS[1]
local id = ARGV[1]
local key = tag .. ':job:' .. id
local f = call('HMGET', key, 'state', 'unique', 'type')
if not f[1] then
  return redis.error_reply('FLEET_ENOTFOUND no job ' .. id)
elseif call('HEXISTS', tag .. ':jobs:claims', id) == 1 then
  return redis.error_reply('FLEET_EBUSY job ' .. id .. ' is running')
elseif call('HEXISTS', tag .. ':jobs:done', id) == 1 or f[1] == 'dead' then
  return redis.error_reply('FLEET_EALREADY job ' .. id .. ' is finished')
end
call('ZREM', tag .. ':jobs:pending', id)
call('ZREM', tag .. ':jobs:delayed', id)
call('SREM', tag .. ':jobs:by_type:' .. (f[3] or ''), id)
if f[2] then
  local ukey = tag .. ':unique:' .. f[2]
  if call('GET', ukey) == id then call('DEL', ukey) end
end
call('DEL', key)
return 1
