-- store_record.lua -- included by store scripts (--#include store_record)
-- on the record ARGV[1] (`id`) of the collection KEYS[1]: its keys `rec`
-- and `ev`, the prefix `ipre` of its index keys, and:
-- record_indexes(old) reads the record's HGETALL reply `old`: the keys of
-- its index entries (each 'i:<index>:<value>' field names
-- <ipre><index>:<value>), each checked to hold a zset or nothing, and its
-- stored TTL (the 't' field, or nil). Returns idx, stored; or nil when an
-- index key holds another type, so that the caller can refuse with
-- `wrongtype` (FLEET_EWRONGTYPE) before its first write.
-- stored_ttl(stored): that stored TTL as a number, or nil when it is not
-- a valid one.
-- expire_all(idx, ttl): sets the expiry of the record, its events and its
-- index entries `idx` to now + ttl ms (an index set never to less than it
-- had).
-- record_hash(): nil when the record is a hash; else the error reply, for
-- a missing record (`notfound`) or one of another type.
--#include time
local id = ARGV[1]
local rec, ev = KEYS[1] .. ':rec:' .. id, KEYS[1] .. ':ev:' .. id
local ipre = KEYS[1] .. ':idx:'
local wrongtype = 'FLEET_EWRONGTYPE a store key holds another type'
local notfound = 'FLEET_ENOTFOUND no such store record'

local function record_indexes(old)
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

-- A TTL is 1 to 12 decimal digits, at most ten years.
local function stored_ttl(stored)
  if stored and string.match(stored, '^[1-9][0-9]*$') and #stored <= 12 and
      tonumber(stored) <= 315360000000 then
    return tonumber(stored)
  end
end

local function expire_all(idx, ttl)
  local exp = now_ms() + ttl
  redis.call('PEXPIREAT', rec, exp)
  redis.call('PEXPIREAT', ev, exp)
  for i = 1, #idx do
    redis.call('ZADD', idx[i], exp, id)
    if redis.call('PTTL', idx[i]) < ttl then
      redis.call('PEXPIREAT', idx[i], exp)
    end
  end
end

local function record_hash()
  local t = redis.call('TYPE', rec)['ok']
  if t == 'none' then
    return redis.error_reply(notfound)
  end
  if t ~= 'hash' then
    return redis.error_reply(wrongtype)
  end
end
