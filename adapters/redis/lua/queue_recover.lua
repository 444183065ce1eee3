-- queue_recover.lua -- re-queues jobs whose claim deadline passed without
-- completion, or makes them dead past max_attempts (the expired attempt
-- counts); clears their token so that the former holder's calls are
-- stale. Safe to run from many processes at once: each expired claim is
-- handled by one call.
-- KEYS[1]: the queue's hash tag "{prefix:queue}".
-- ARGV[1]: limit (claims per call); ARGV[2]: keep_count, ARGV[3]: keep_s
--   for dead jobs.
-- Returns: {now_ms, requeued, dead, next_deadline_ms (-1: none running)}.
local call = redis.call
local tag = KEYS[1]
local jp = tag .. ':job:'
local t = call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local pending = tag .. ':jobs:pending'
local running = tag .. ':jobs:running'
local claims = tag .. ':jobs:claims'
local fmt = string.format
--#include queue_int
--#include queue_trim

local expired = call('ZRANGEBYSCORE', running, '-inf', now, 'LIMIT', 0,
                     tonumber(ARGV[1]))
local requeued, dead = 0, 0
if #expired > 0 then
  local held = call('HMGET', claims, unpack(expired))
  -- Redis keeps what a script wrote before an error: every job is read
  -- and checked first, so that one fleet cannot read stays running and
  -- the call answers FLEET_EPROTO. A job whose record is gone is only a
  -- stale reference, dropped below.
  local jobs = {}
  for i, id in ipairs(expired) do
    local f = call('HMGET', jp .. id, 'max_attempts', 'order', 'type')
    if f[3] then
      local attempt = held[i] and string.match(held[i], '^%d+:(%d+)$')
      if not attempt then
        return redis.error_reply('FLEET_EPROTO running job without a claim: '
                                 .. id)
      end
      local j = {attempt = attempt, type = f[3]}
      j.dead = tonumber(attempt) >= int(f[1])
      if not j.dead then j.order = int(f[2]) end
      jobs[i] = j
    elseif call('EXISTS', jp .. id) == 1 then
      return redis.error_reply('FLEET_EPROTO running job without type: ' .. id)
    end
  end
  local was_empty = call('ZCARD', pending) == 0
  for i, id in ipairs(expired) do
    local j = jobs[i]
    if j and j.dead then
      call('HSET', jp .. id, 'state', 'dead', 'attempts', j.attempt, 'token',
           '', 'last_error', 'claim expired', 'finished_ms', fmt('%d', now))
      call('RPUSH', tag .. ':jobs:dead', fmt('%d', now) .. ':' .. id)
      dead = dead + 1
    elseif j then
      call('HSET', jp .. id, 'state', 'pending', 'attempts', j.attempt,
           'token', '', 'last_error', 'claim expired')
      call('ZADD', pending, j.order, id)
      call('SADD', tag .. ':jobs:by_type:' .. j.type, id)
      requeued = requeued + 1
    end
  end
  call('HDEL', claims, unpack(expired))
  call('ZREM', running, unpack(expired))
  if dead > 0 then
    call('HINCRBY', tag .. ':stats', 'dead', dead)
    trim(tag .. ':jobs:dead', tonumber(ARGV[2]), tonumber(ARGV[3]), nil)
  end
  if requeued > 0 and was_empty then
    call('PUBLISH', tag .. ':jobs:wake', 'wake')
  end
end
local first = call('ZRANGE', running, 0, 0, 'WITHSCORES')
return {now, requeued, dead, first[2] and tonumber(first[2]) or -1}
