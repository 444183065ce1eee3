-- store_put.lua -- creates or replaces a store record with its index entries,
-- and sets the expiry of all its keys. Writes the fields v, t and
-- i:<index>:<value> for each entry, removes the old version's "i:" fields
-- that the new one lacks and <id> from their index sets, deletes the events
-- list of a new record, sets every expiry to now + ttl_ms and adds <id> to
-- each entry's index set with that score, removing the entries that expired
-- there when <id> is new to it. A record without index entries needs no
-- clock (its keys expire ttl_ms from now, PEXPIRE).
-- KEYS[1]: the collection's hash tag "{prefix:collection}" (the record
--          layout: adapters/ops/store.h). Parts: ":rec:<id>",
--          ":ev:<id>", ":idx:<index>:<value>".
-- ARGV: id, ttl_ms, value, then index_1, value_1 .. index_n, value_n (the
--       new version's index entries).
-- Returns: 1 when the record was created, 0 when it was replaced.
local id, ttl = ARGV[1], tonumber(ARGV[2])
local rec, ev = KEYS[1] .. ':rec:' .. id, KEYS[1] .. ':ev:' .. id
local ipre = KEYS[1] .. ':idx:'
local wrongtype = 'FLEET_EWRONGTYPE a store key holds another type'
--#include store_record
--#include time

-- Every check comes before the first write. HGETALL itself fails on a
-- record key of another type; the first index key is checked by the first
-- write, its ZADD.
local old = redis.call('HGETALL', rec)
local idx, keep = {}, {}
local fields = {'v', ARGV[3], 't', ARGV[2]}
for i = 4, #ARGV, 2 do
  local entry = ARGV[i] .. ':' .. ARGV[i + 1]
  local k = ipre .. entry
  if #idx > 0 and not is_zset(k) then
    return redis.error_reply(wrongtype)
  end
  idx[#idx + 1] = k
  keep[entry] = true
  fields[#fields + 1] = 'i:' .. entry
  fields[#fields + 1] = ''
end
-- The old version's index entries that the new one lacks.
local drop, dropf = {}, {}
for i = 1, #old, 2 do
  if string.sub(old[i], 1, 2) == 'i:' then
    local entry = string.sub(old[i], 3)
    if not keep[entry] then
      local k = ipre .. entry
      if not is_zset(k) then
        return redis.error_reply(wrongtype)
      end
      drop[#drop + 1] = k
      dropf[#dropf + 1] = old[i]
    end
  end
end

-- (The clock's numbers go to the commands as decimal strings, made once:
-- Redis 7.0 formats a number argument with snprintf "%.17g".)
local now_s, exp, added
if #idx > 0 then
  local now = now_ms()
  now_s, exp = string.format('%d', now), string.format('%d', now + ttl)
  added = zadd_first(idx[1], exp, id)
  if not added then
    return redis.error_reply(wrongtype)
  end
end
-- The expiry of the record's keys: at exp with index entries, else ttl
-- from now.
local expire_cmd, expire_at = 'PEXPIRE', ARGV[2]
if exp then expire_cmd, expire_at = 'PEXPIREAT', exp end
for i = 1, #drop do
  redis.call('ZREM', drop[i], id)
end
if #dropf > 0 then
  redis.call('HDEL', rec, unpack(dropf))
end
redis.call('HSET', rec, unpack(fields))
redis.call(expire_cmd, rec, expire_at)
-- A new record starts with no events; an old one keeps its own.
if #old == 0 then
  redis.call('DEL', ev)
else
  redis.call(expire_cmd, ev, expire_at)
end
for i = 1, #idx do
  if i > 1 then
    added = redis.call('ZADD', idx[i], exp, id)
  end
  -- Entries that expired go when one is added: the set stays bounded.
  if added == 1 then
    redis.call('ZREMRANGEBYSCORE', idx[i], '-inf', '(' .. now_s)
  end
  if redis.call('PTTL', idx[i]) < ttl then
    redis.call('PEXPIREAT', idx[i], exp)
  end
end
if #old == 0 then
  return 1
end
return 0
