-- queue_claim.lua -- moves due delayed jobs to pending, then claims up to n
-- pending jobs: highest priority first, oldest first within a priority.
-- Each claim gets a new fencing token and the deadline now + claim_ttl;
-- the claim lives in the claims hash (id -> "<token>:<attempt>") and the
-- running zset (id by deadline), and the job leaves its type's set.
-- KEYS[1]: the queue's hash tag "{prefix:queue}".
-- ARGV[1]: n (0..1000; 0 only promotes due delayed jobs).
-- ARGV[2]: claim_ttl_ms.
-- Returns: {now_ms, deadline_ms, next_run_at_ms (-1: none), pending_left,
--   then id, type, payload, attempt, max_attempts, token per job}.
local call = redis.call
local tag = KEYS[1]
local jp = tag .. ':job:'
local n = tonumber(ARGV[1])
local t = call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local pending = tag .. ':jobs:pending'
local delayed = tag .. ':jobs:delayed'
local fmt = string.format
--#include queue_int

-- Redis keeps what a script wrote before an error: every job is read and
-- checked before anything is written, so that a record fleet cannot read
-- stays where it is and the call answers FLEET_EPROTO. A job id whose
-- record is gone (cancelled meanwhile) is only a stale reference.
local function unreadable(what, id)
  return redis.error_reply('FLEET_EPROTO ' .. what .. ': ' .. id)
end

local due = call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, 1000)
local was_empty = true
local promoted = 0
if #due > 0 then
  local orders = {}
  for i, id in ipairs(due) do
    local order = call('HGET', jp .. id, 'order')
    if order then
      orders[i] = int(order)
    elseif call('EXISTS', jp .. id) == 1 then
      return unreadable('delayed job without order', id)
    end
  end
  was_empty = call('ZCARD', pending) == 0
  for i, id in ipairs(due) do
    if orders[i] then
      call('ZADD', pending, orders[i], id)
      call('HSET', jp .. id, 'state', 'pending')
      promoted = promoted + 1
    end
  end
  call('ZREM', delayed, unpack(due))
end

local deadline = now + tonumber(ARGV[2])
local out = {now, deadline, -1, 0}
if n > 0 then
  -- The first n by rank, then removed: as ZPOPMIN, without formatting
  -- their scores into the reply.
  local popped = call('ZRANGE', pending, 0, n - 1)
  local k = #popped
  if k > 0 then
    local fields = {}
    for i, id in ipairs(popped) do
      local f = call('HMGET', jp .. id, 'type', 'payload', 'attempts',
                     'max_attempts')
      if f[1] then
        local ok, err = pcall(function()
          f[3] = int(f[3])
          f[4] = int(f[4])
        end)
        if not ok then
          return redis.error_reply(
            (type(err) == 'table' and err.err or 'FLEET_EPROTO bad job') ..
            ': ' .. id)
        end
      elseif call('EXISTS', jp .. id) == 1 then
        return unreadable('pending job without type', id)
      end
      fields[i] = f
    end
    call('ZREMRANGEBYRANK', pending, 0, k - 1)
    local token = call('INCRBY', tag .. ':fence', k) - k
    local dl = fmt('%d', deadline)
    local claims, running, by_type = {}, {}, {}
    local o, c = 4, 0
    for i, id in ipairs(popped) do
      local f = fields[i]
      local typ = f[1]
      if typ then
        token = token + 1
        local attempt = f[3] + 1
        claims[c + 1] = id
        claims[c + 2] = fmt('%d:%d', token, attempt)
        running[c + 1] = dl
        running[c + 2] = id
        c = c + 2
        local ids = by_type[typ]
        if ids == nil then
          by_type[typ] = {id}
        else
          ids[#ids + 1] = id
        end
        out[o + 1] = id
        out[o + 2] = typ
        out[o + 3] = f[2] or ''
        out[o + 4] = attempt
        out[o + 5] = f[4]
        out[o + 6] = token
        o = o + 6
      end
    end
    if c > 0 then
      call('HSET', tag .. ':jobs:claims', unpack(claims))
      call('ZADD', tag .. ':jobs:running', unpack(running))
      for typ, ids in pairs(by_type) do
        call('SREM', tag .. ':jobs:by_type:' .. typ, unpack(ids))
      end
    end
  end
end
local left = call('ZCARD', pending)
out[4] = left
local first = call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
if first[2] then out[3] = tonumber(first[2]) end
if promoted > 0 and was_empty and left > 0 then
  call('PUBLISH', tag .. ':jobs:wake', 'wake')
end
return out
