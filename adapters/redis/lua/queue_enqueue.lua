-- queue_enqueue.lua -- adds jobs to a queue: pending, or delayed until a
-- run-at time. Job ids and pending order come from one counter. A job
-- with the default options is one field of the jobs hash and one element
-- of the pending list; its other options go to the options hash.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: jobs, opts,
--   pending, pending:prio, delayed, seq, unique:<key>, jobs:wake.
-- ARGV[1]: n, the number of jobs; then 10 per job: id ('' for a generated
--   one), type, payload, priority (-1000..1000), run_at_ms (0: none),
--   delay_ms, max_attempts, backoff ('fixed|exp:<base>:<max>:<jitter>'),
--   unique key ('' for none), unique_ttl_ms.
-- Returns: {status, id} per job, flattened: status 1 when added, 0 when the
--   id exists already or the unique key is held (id: the holder).
--#include wake
local call = redis.call
local tag = KEYS[1]
local n = tonumber(ARGV[1])
local t = call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local jobs = tag .. ':jobs'
local pending = tag .. ':pending'
local prio = tag .. ':pending:prio'
local delayed = tag .. ':delayed'
local PRIO_UNIT = 4398046511104 -- 2^42
local fmt = string.format

local seq = call('INCRBY', tag .. ':seq', n) - n
-- The "\0<created_ms>\0" middle of every record of this call.
local created = '\0' .. fmt('%d', now) .. '\0'
local recs, opts, list, zp, zd = {}, {}, {}, {}, {}
local seen = {}
local earliest, wake
local out = {}
for i = 0, n - 1 do
  local a = 2 + i * 10
  local id = ARGV[a]
  seq = seq + 1
  local status = 1
  if id == '' then
    -- Generated ids are digits, which given ids never are: always new.
    id = fmt('%d', seq)
  elseif seen[id] or call('HEXISTS', jobs, id) == 1 then
    status = 0
  end
  local unique = ARGV[a + 8]
  if status == 1 and unique ~= '' then
    local ukey = tag .. ':unique:' .. unique
    if not call('SET', ukey, id, 'NX', 'PX', ARGV[a + 9]) then
      status = 0
      id = call('GET', ukey) or id
    end
  end
  if status == 1 then
    seen[id] = true
    local max = ARGV[a + 6]
    if max == '3' then max = '' end
    recs[#recs + 1] = id
    recs[#recs + 1] = '\0' .. max .. created .. ARGV[a + 1] .. '\0' .. ARGV[a + 2]
    local p, backoff = ARGV[a + 3], ARGV[a + 7]
    if p == '0' then p = '' end
    if backoff == 'exp:1000:3600000:20' then backoff = '' end
    if p ~= '' or backoff ~= '' or unique ~= '' then
      opts[#opts + 1] = id
      opts[#opts + 1] = p .. '\0' .. backoff .. '\0' .. unique
    end
    local run_at = tonumber(ARGV[a + 4])
    local due = now + tonumber(ARGV[a + 5])
    if due > run_at then run_at = due end
    if run_at > now then
      zd[#zd + 1] = run_at
      zd[#zd + 1] = id
      if earliest == nil or run_at < earliest then earliest = run_at end
    elseif p == '' then
      list[#list + 1] = id
    else
      zp[#zp + 1] = (1000 - tonumber(p)) * PRIO_UNIT + seq
      zp[#zp + 1] = id
    end
  end
  out[#out + 1] = status
  out[#out + 1] = id
end
if #recs == 0 then return out end
-- Wake the workers when jobs may be claimable that were not: the pending
-- jobs were none, or a delayed job is now the earliest.
if #list > 0 or #zp > 0 then
  wake = call('LLEN', pending) == 0 and call('ZCARD', prio) == 0
end
if earliest and not wake then
  local first = call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
  wake = not first[2] or earliest < tonumber(first[2])
end
call('HSET', jobs, unpack(recs))
if #opts > 0 then call('HSET', tag .. ':opts', unpack(opts)) end
if #list > 0 then call('RPUSH', pending, unpack(list)) end
if #zp > 0 then call('ZADD', prio, unpack(zp)) end
if #zd > 0 then call('ZADD', delayed, unpack(zd)) end
if wake then publish_wake(tag .. ':jobs:wake', 'wake') end
return out
