-- queue_purge.lua -- deletes kept completed or dead job records, oldest
-- first (the counters of queue_counts stay).
-- KEYS[1]: the queue's hash tag "{prefix:queue}".
-- ARGV[1]: 'completed' or 'dead'; ARGV[2]: limit (records per call).
-- Returns: {removed, left}.
local call = redis.call
local tag = KEYS[1]
if ARGV[1] ~= 'completed' and ARGV[1] ~= 'dead' then
  return redis.error_reply('FLEET_EINVAL cannot purge ' .. ARGV[1])
end
local l = tag .. ':jobs:' .. ARGV[1]
local entries = call('LRANGE', l, 0, tonumber(ARGV[2]) - 1)
if #entries > 0 then
  local keys, ids = {}, {}
  for _, e in ipairs(entries) do
    local id = string.match(e, '^%d+:(.*)$')
    if id then
      keys[#keys + 1] = tag .. ':job:' .. id
      ids[#ids + 1] = id
    end
  end
  if #keys > 0 then
    call('DEL', unpack(keys))
    if ARGV[1] == 'completed' then
      call('HDEL', tag .. ':jobs:done', unpack(ids))
    end
  end
  call('LTRIM', l, #entries, -1)
end
return {#entries, call('LLEN', l)}
