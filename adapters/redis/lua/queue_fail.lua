-- queue_fail.lua -- fails a claim still held: records the error, then
-- schedules a retry after the job's backoff, or past max_attempts makes
-- the job dead (and trims the kept dead job records).
-- KEYS[1]: the queue's hash tag "{prefix:queue}".
-- ARGV[1]: id; ARGV[2]: token; ARGV[3]: error; ARGV[4]: rnd (0..2^32-1,
--   chooses the jitter); ARGV[5]: keep_count, ARGV[6]: keep_s for dead jobs.
-- Returns: {1, run_at_ms} for a retry, {0, 0} when the job is dead.
-- Errors: FLEET_ENOTFOUND, FLEET_ESTALE (not held with this token),
--   FLEET_EALREADY (that claim already ended), FLEET_EPROTO.
local call = redis.call
local tag = KEYS[1]
local jp = tag .. ':job:'
local t = call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fmt = string.format
--#include queue_int
--#include queue_trim

local id, tok = ARGV[1], ARGV[2]
local key = jp .. id
local claims = tag .. ':jobs:claims'
local v = call('HGET', claims, id)
local f = call('HMGET', key, 'max_attempts', 'backoff', 'type', 'token')
local tv, attempt
if v then tv, attempt = string.match(v, '^(%d+):(%d+)$') end
if not f[3] then
  return redis.error_reply('FLEET_ENOTFOUND no job ' .. id)
elseif tv ~= tok then
  if not v then
    local d = call('HGET', tag .. ':jobs:done', id)
    if f[4] == tok or (d and string.match(d, '^%d+:(%d+):') == tok) then
      return redis.error_reply('FLEET_EALREADY claim ' .. tok .. ' ended')
    end
  end
  return redis.error_reply('FLEET_ESTALE token ' .. tok .. ' is stale')
end
local max_attempts = int(f[1])
call('HDEL', claims, id)
call('ZREM', tag .. ':jobs:running', id)
if tonumber(attempt) >= max_attempts then
  call('HSET', key, 'state', 'dead', 'attempts', attempt, 'token', tok,
       'last_error', ARGV[3], 'finished_ms', fmt('%d', now))
  call('RPUSH', tag .. ':jobs:dead', fmt('%d', now) .. ':' .. id)
  call('HINCRBY', tag .. ':stats', 'dead', 1)
  trim(tag .. ':jobs:dead', tonumber(ARGV[5]), tonumber(ARGV[6]), nil)
  return {0, 0}
end

-- The backoff: base * 2^(attempt - 1) for 'exp' (at most max), base for
-- 'fixed', minus a jitter of up to jitter percent chosen by rnd; at least
-- 1 ms. The same formula as fleet__backoff_delay() in C.
local kind, base, cap, jitter = string.match(f[2] or '',
                                             '^(%a+):(%d+):(%d+):(%d+)$')
if (kind ~= 'fixed' and kind ~= 'exp') or #base > 18 or #cap > 18 or
    #jitter > 18 then
  return redis.error_reply('FLEET_EPROTO bad backoff')
end
local delay = tonumber(base)
if delay < 1 then delay = 1 end
cap = tonumber(cap)
if kind == 'fixed' or cap < delay then cap = delay end
local doublings = kind == 'exp' and tonumber(attempt) - 1 or 0
while doublings > 0 and delay < cap do
  delay = delay * 2
  doublings = doublings - 1
end
if delay > cap then delay = cap end
jitter = tonumber(jitter)
if jitter > 100 then jitter = 100 end
jitter = math.floor(delay * jitter / 100)
if jitter > 0 then delay = delay - tonumber(ARGV[4]) % (jitter + 1) end
if delay < 1 then delay = 1 end

local run_at = now + delay
local delayed = tag .. ':jobs:delayed'
local first = call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
call('HSET', key, 'state', 'delayed', 'attempts', attempt, 'token', tok,
     'last_error', ARGV[3], 'run_at_ms', fmt('%d', run_at))
call('ZADD', delayed, run_at, id)
call('SADD', tag .. ':jobs:by_type:' .. f[3], id)
if not first[2] or run_at < tonumber(first[2]) then
  call('PUBLISH', tag .. ':jobs:wake', 'wake')
end
return {1, run_at}
