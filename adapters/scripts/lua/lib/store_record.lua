-- store_record.lua -- included by store scripts (--#include store_record):
-- record_indexes(old, ipre) reads a record's HGETALL reply `old`: the keys
-- of its index entries (each 'i:<index>:<value>' field names
-- <ipre><index>:<value>), each checked to hold a zset or nothing, and its
-- stored TTL (the 't' field, or nil). Returns idx, stored; or nil when an
-- index key holds another type, so that the caller can refuse with
-- FLEET_EWRONGTYPE before its first write. With `first_unchecked`, the
-- first index key is not checked: the caller's first write is a ZADD to
-- it, made with zadd_first(). is_zset(key): whether key holds a zset or
-- nothing.
local function is_zset(key)
  local t = redis.call('TYPE', key)['ok']
  return t == 'none' or t == 'zset'
end

local function record_indexes(old, ipre, first_unchecked)
  local idx, stored = {}, nil
  for i = 1, #old, 2 do
    if old[i] == 't' then
      stored = old[i + 1]
    elseif string.sub(old[i], 1, 2) == 'i:' then
      local k = ipre .. string.sub(old[i], 3)
      if (#idx > 0 or not first_unchecked) and not is_zset(k) then
        return nil
      end
      idx[#idx + 1] = k
    end
  end
  return idx, stored
end

-- ZADD key score member, made where it is the script's first write: the
-- check of the key's type and the write in one call. Returns the ZADD's
-- reply, or nil, nothing written, when the key holds another type; raises
-- any other error.
local function zadd_first(key, score, member)
  local r = redis.pcall('ZADD', key, score, member)
  if type(r) == 'table' and r.err then
    if string.find(r.err, 'WRONGTYPE', 1, true) then
      return nil
    end
    error(r)
  end
  return r
end
