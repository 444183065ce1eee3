-- store_put.lua -- creates or replaces a store record with its index
-- entries, and sets the expiry of all its keys (adapters/ops/store.h).
-- KEYS: rec, ev, idx_1 .. idx_n (the new version's index keys, each
--       <base>idx:<index>:<value>).
-- ARGV: base, id, ttl_ms, value.
-- Returns: 1 when the record was created, 0 when it was replaced.
local rec, ev = KEYS[1], KEYS[2]
local base, id, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ipre = base .. 'idx:'
local wrongtype = 'FLEET_EWRONGTYPE a store key holds another type'

local function is_zset(key)
  local t = redis.call('TYPE', key)['ok']
  return t == 'none' or t == 'zset'
end

-- Every check comes before the first write. HGETALL itself fails on a
-- record key of another type.
local old = redis.call('HGETALL', rec)
local keep = {}
local fields = {'v', ARGV[4], 't', ARGV[3]}
for i = 3, #KEYS do
  if not is_zset(KEYS[i]) then
    return redis.error_reply(wrongtype)
  end
  keep[KEYS[i]] = true
  fields[#fields + 1] = 'i:' .. string.sub(KEYS[i], #ipre + 1)
  fields[#fields + 1] = ''
end
-- The old version's index entries that the new one lacks.
local drop, dropf = {}, {}
for i = 1, #old, 2 do
  if string.sub(old[i], 1, 2) == 'i:' then
    local k = ipre .. string.sub(old[i], 3)
    if not keep[k] then
      if not is_zset(k) then
        return redis.error_reply(wrongtype)
      end
      drop[#drop + 1] = k
      dropf[#dropf + 1] = old[i]
    end
  end
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local exp = now + ttl
for i = 1, #drop do
  redis.call('ZREM', drop[i], id)
end
if #dropf > 0 then
  redis.call('HDEL', rec, unpack(dropf))
end
redis.call('HSET', rec, unpack(fields))
redis.call('PEXPIREAT', rec, exp)
-- A new record starts with no events; an old one keeps its own.
if #old == 0 then
  redis.call('DEL', ev)
else
  redis.call('PEXPIREAT', ev, exp)
end
for i = 3, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', '(' .. now)
  redis.call('ZADD', KEYS[i], exp, id)
  if redis.call('PTTL', KEYS[i]) < ttl then
    redis.call('PEXPIREAT', KEYS[i], exp)
  end
end
if #old == 0 then
  return 1
end
return 0
