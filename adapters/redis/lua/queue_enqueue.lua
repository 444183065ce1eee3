-- queue_enqueue.lua -- adds jobs to a queue: pending, or delayed until a
-- run-at time. Job ids and pending order come from one counter.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; every key is KEYS[1]
--   followed by a suffix.
-- ARGV[1]: n, the number of jobs; then 10 per job: id ('' for a generated
--   one), type, payload, priority (-1000..1000), run_at_ms (0: none),
--   delay_ms, max_attempts, backoff ('fixed|exp:<base>:<max>:<jitter>'),
--   unique key ('' for none), unique_ttl_ms.
-- Returns: {status, id} per job, flattened: status 1 when added, 0 when the
--   id exists already or the unique key is held (id: the holder).
local tag = KEYS[1]
local n = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local pending = tag .. ':jobs:pending'
local delayed = tag .. ':jobs:delayed'
local function istr(v) return string.format('%d', v) end

local seq = redis.call('INCRBY', tag .. ':seq', n) - n
local was_empty = redis.call('ZCARD', pending) == 0
local first = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
local earliest = first[2] and tonumber(first[2]) or nil
local wake = false
local out = {}
for i = 0, n - 1 do
  local a = 2 + i * 10
  local id = ARGV[a]
  seq = seq + 1
  if id == '' then id = istr(seq) end
  local key = tag .. ':job:' .. id
  local status = 1
  if redis.call('EXISTS', key) == 1 then
    status = 0
  elseif ARGV[a + 8] ~= '' then
    local ukey = tag .. ':unique:' .. ARGV[a + 8]
    if not redis.call('SET', ukey, id, 'NX', 'PX', ARGV[a + 9]) then
      status = 0
      id = redis.call('GET', ukey) or id
    end
  end
  if status == 1 then
    local order = (1000 - tonumber(ARGV[a + 3])) * 4398046511104 + seq
    local run_at = tonumber(ARGV[a + 4])
    local due = now + tonumber(ARGV[a + 5])
    if due > run_at then run_at = due end
    local f = {'type', ARGV[a + 1], 'payload', ARGV[a + 2], 'attempts', '0',
               'max_attempts', ARGV[a + 6], 'priority', ARGV[a + 3],
               'backoff', ARGV[a + 7], 'order', istr(order),
               'created_ms', istr(now)}
    if run_at > now then
      f[#f + 1] = 'state'; f[#f + 1] = 'delayed'
      f[#f + 1] = 'run_at_ms'; f[#f + 1] = istr(run_at)
      redis.call('ZADD', delayed, run_at, id)
      if earliest == nil or run_at < earliest then
        earliest = run_at
        wake = true
      end
    else
      f[#f + 1] = 'state'; f[#f + 1] = 'pending'
      redis.call('ZADD', pending, order, id)
      if was_empty then wake = true end
    end
    if ARGV[a + 8] ~= '' then
      f[#f + 1] = 'unique'; f[#f + 1] = ARGV[a + 8]
    end
    redis.call('HSET', key, unpack(f))
    redis.call('SADD', tag .. ':jobs:by_type:' .. ARGV[a + 1], id)
  end
  out[#out + 1] = status
  out[#out + 1] = id
end
if wake then redis.call('PUBLISH', tag .. ':jobs:wake', 'wake') end
return out
