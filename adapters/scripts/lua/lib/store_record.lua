-- store_record.lua -- included by store scripts (--#include store_record):
-- record_indexes(old, ipre) reads a record's HGETALL reply `old`: the keys
-- of its index entries (each 'i:<index>:<value>' field names
-- <ipre><index>:<value>), each checked to hold a zset or nothing, and its
-- stored TTL (the 't' field, or nil). Returns idx, stored; or nil when an
-- index key holds another type, so that the caller can refuse with
-- FLEET_EWRONGTYPE before its first write.
local function record_indexes(old, ipre)
  local idx, stored = {}, nil
  for i = 1, #old, 2 do
    if old[i] == 't' then
      stored = old[i + 1]
    elseif string.sub(old[i], 1, 2) == 'i:' then
      local k = ipre .. string.sub(old[i], 3)
      local t = redis.call('TYPE', k)['ok']
      if t ~= 'none' and t ~= 'zset' then
        return nil
      end
      idx[#idx + 1] = k
    end
  end
  return idx, stored
end
