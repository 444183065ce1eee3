-- queue_rec.lua -- included by queue scripts (--#include queue_rec): the
-- records of schema v2 (docs/queue.md), read with plain finds, never with
-- patterns (a number fleet did not write is matched). Expects `int`
-- (queue_int) defined before it. A job record is
-- "<attempts>\0<max_attempts>\0<created_ms>\0<type>\0<payload>", an empty
-- number taking its default (0 attempts, 3 attempts at most); an options
-- record is "<priority>\0<backoff>\0<unique>", empty meaning the default.
--#include queue_unique
local find, sub = string.find, string.sub
local DEFAULT_BACKOFF = 'exp:1000:3600000:20'
local PRIO_UNIT = 4398046511104 -- 2^42: the pending order of a priority
-- The decimal digits, by value + 1: numbers spelled without formatting.
local DIGITS = {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9'}

-- The decimal number rec[a..b] when it is one from 0 to `max`, else nil:
-- the client reads a record's numbers as 32-bit ones.
local function rec_uint(rec, a, b, max)
  if b - a > 9 then return nil end
  local s = sub(rec, a, b)
  if not find(s, '^%d+$') then return nil end
  local v = tonumber(s)
  if v > max then return nil end
  return v
end

-- Splits a job record: returns attempts, max_attempts and the positions of
-- its four separators (max_attempts, created_ms, type and payload follow
-- them); or nil and what is wrong when fleet cannot read it (a claim moves
-- such a job to dead with that reason, lib/queue_claim.lua). Checked: the
-- four separators, a type, attempts below 2^32 - 1 and max_attempts below
-- 2^32, what the client needs to hand the job out.
local function rec_split(rec)
  local i = find(rec, '\0', 1, true)
  local j = i and find(rec, '\0', i + 1, true)
  local k = j and find(rec, '\0', j + 1, true)
  local l = k and find(rec, '\0', k + 1, true)
  if not l then
    return nil, 'malformed record: not the 5 fields <attempts>, ' ..
             '<max_attempts>, <created_ms>, <type>, <payload> separated ' ..
             'by NUL bytes'
  elseif l == k + 1 then
    return nil, 'malformed record: field type is empty'
  end
  local attempts, max = 0, 3
  if i > 1 then
    attempts = rec_uint(rec, 1, i - 1, 4294967294)
    if not attempts then
      return nil, 'malformed record: field attempts is not a number ' ..
               'from 0 to 4294967294'
    end
  end
  if j > i + 1 then
    max = rec_uint(rec, i + 1, j - 1, 4294967295)
    if not max then
      return nil, 'malformed record: field max_attempts is not a ' ..
               'number from 0 to 4294967295'
    end
  end
  return attempts, max, i, j, k, l
end

-- rec_split(rec), raising FLEET_EPROTO naming the job and what is wrong
-- when fleet cannot read it.
local function rec_read(rec, id)
  local attempts, max, i, j, k, l = rec_split(rec)
  if not attempts then
    error({err = 'FLEET_EPROTO bad job record ' .. id .. ': ' .. max})
  end
  return attempts, max, i, j, k, l
end

-- Splits an options record (nil: none): returns the priority, backoff,
-- unique key (nil: none) and group ('': none); or nil and what is wrong
-- when fleet cannot read it. The group is a fourth field, "\0<group>",
-- only in the options of a job that has one.
local function opts_split(v)
  if not v then return 0, DEFAULT_BACKOFF, nil, '' end
  local i = find(v, '\0', 1, true)
  local j = i and find(v, '\0', i + 1, true)
  if not j then
    return nil, 'malformed options: not the 3 fields <priority>, ' ..
             '<backoff>, <unique> separated by NUL bytes'
  end
  local k = find(v, '\0', j + 1, true)
  local prio, backoff, unique = 0, DEFAULT_BACKOFF, nil
  if i > 1 then
    local s = sub(v, 1, i - 1)
    prio = find(s, '^%-?%d%d?%d?%d?$') and tonumber(s)
    if not prio or prio < -1000 or prio > 1000 then
      return nil, 'malformed options: field priority is not a number ' ..
               'from -1000 to 1000'
    end
  end
  if j > i + 1 then backoff = sub(v, i + 1, j - 1) end
  local e = k and k - 1 or #v
  if j < e then unique = sub(v, j + 1, e) end
  return prio, backoff, unique, k and sub(v, k + 1) or ''
end

-- opts_split(v), raising FLEET_EPROTO naming the job when fleet cannot
-- read it.
local function opts_read(v, id)
  local prio, backoff, unique, group = opts_split(v)
  if not prio then
    error({err = 'FLEET_EPROTO bad job options ' .. id .. ': ' .. backoff})
  end
  return prio, backoff, unique, group
end

-- ---------------------------------------------------------------------
-- Jobs fleet cannot read (docs/queue.md, "Jobs fleet cannot read"): a
-- script that meets one moves it aside instead of refusing, so that the
-- jobs behind it go on.

-- The type of the record a job moved aside gets.
local MALFORMED_TYPE = 'fleet:malformed'

-- Why job `id`, which recs_get() did not find, has no record fleet can
-- read, and the raw value to keep of it (nil: none).
local function rec_missing(tag, id)
  local h = rec_key(tag, id)
  local ty = redis.call('TYPE', h)
  ty = type(ty) == 'table' and ty.ok or ty
  if ty ~= 'hash' and ty ~= 'none' then
    return 'malformed record: ' .. h .. ' is a ' .. ty .. ', not a hash', nil
  end
  if rec_chunk(id) then
    local old = redis.pcall('HGET', tag .. ':jobs', id)
    if type(old) == 'string' then
      return 'record in ' .. tag .. ':jobs, where fleet before the ' ..
               'chunks kept it (docs/queue.md, "Migration")', old
    end
  end
  return 'no record for id', nil
end

-- Moves jobs aside: `bad` holds {id, reason, raw, rewrite} for jobs the
-- script has taken off pending, delayed or the claims. Each becomes dead
-- (T:info "<now>\0\0dead\0<reason>", T:dead, the dead counter) and loses
-- its options; with `rewrite`, its record is replaced by one fleet can
-- read, of type MALFORMED_TYPE, whose payload is the raw value it had
-- (`raw`, nil: none, an empty payload), so that the tools list it and
-- fleet_queue_get() reads it. A record in a key of another type stays
-- as it is (the HSET fails alone). Returns {id, reason, 0} per job, the
-- triples the claim and recovery replies end with.
local function move_aside(tag, now, bad)
  local out = {}
  if #bad == 0 then return out end
  local now_s = string.format('%d', now)
  local info, ids = {}, {}
  for x, b in ipairs(bad) do
    local id, why = b[1], b[2]
    ids[x] = id
    info[#info + 1] = id
    info[#info + 1] = now_s .. '\0\0dead\0' .. why
    if b[4] then
      redis.pcall('HSET', rec_key(tag, id), id, '\0\0' .. now_s .. '\0' ..
                    MALFORMED_TYPE .. '\0' .. (b[3] or ''))
    end
    out[#out + 1] = id
    out[#out + 1] = why
    out[#out + 1] = 0
  end
  redis.pcall('HDEL', tag .. ':opts', unpack(ids))
  -- A unique key held until the job ends goes (lib/queue_unique.lua).
  if redis.call('EXISTS', tag .. ':uniq') == 1 then unique_ended(tag, ids) end
  redis.call('HSET', tag .. ':info', unpack(info))
  redis.call('RPUSH', tag .. ':dead', unpack(ids))
  redis.call('HINCRBY', tag .. ':stats', 'dead', #ids)
  return out
end
