-- queue_add.lua -- included, after queue_int, by scripts that add jobs to a queue (--#include
-- queue_add): queue_enqueue.lua, and the cron scheduler's fire script, which
-- enqueues the job of a queue-targeted definition in the same call that
-- claims the occurrence (docs/cron_scheduler.md). One copy of the enqueue
-- rules (docs/queue.md, adapters/ops/queue.h: QUEUE_ENQUEUE).
-- queue_add(tag, now, n, A, base): adds the n jobs whose 10 fields each
--   (id, type, payload, priority, run_at_ms, delay_ms, max_attempts, backoff,
--   unique key, unique_ttl_ms) start at A[base], to the queue of hash tag
--   `tag`, `now` being the server time in ms. Returns {status, id} per job,
--   flattened, as QUEUE_ENQUEUE does.
local function queue_add(tag, now, n, A, base)
  local call = redis.call
  local jobs = tag .. ':jobs'
  local pending = tag .. ':pending'
  local prio = tag .. ':pending:prio'
  local delayed = tag .. ':delayed'
  local PRIO_UNIT = 4398046511104 -- 2^42
  local fmt = string.format

  local seq = call('INCRBY', tag .. ':seq', n) - n
  -- The "\0<created_ms>\0" middle of every record of this call.
  local created = '\0' .. fmt('%d', now) .. '\0'
  -- recs starts with HASH_MARK (queue_int, which the script includes
  -- before this file).
  local recs, opts, list, zp, zd = {'', HASH_MARK}, {}, {}, {}, {}
  local seen = {}
  local earliest, wake
  local out = {}
  for i = 0, n - 1 do
    local a = base + i * 10
    local id = A[a]
    seq = seq + 1
    local status = 1
    if id == '' then
      -- Generated ids are digits, which given ids never are: always new.
      id = fmt('%d', seq)
    elseif seen[id] or call('HEXISTS', jobs, id) == 1 then
      status = 0
    end
    local unique = A[a + 8]
    if status == 1 and unique ~= '' then
      local ukey = tag .. ':unique:' .. unique
      if not call('SET', ukey, id, 'NX', 'PX', A[a + 9]) then
        status = 0
        id = call('GET', ukey) or id
      end
    end
    if status == 1 then
      seen[id] = true
      local max = A[a + 6]
      if max == '3' then max = '' end
      recs[#recs + 1] = id
      recs[#recs + 1] = '\0' .. max .. created .. A[a + 1] .. '\0' .. A[a + 2]
      local p, backoff = A[a + 3], A[a + 7]
      if p == '0' then p = '' end
      if backoff == 'exp:1000:3600000:20' then backoff = '' end
      if p ~= '' or backoff ~= '' or unique ~= '' then
        opts[#opts + 1] = id
        opts[#opts + 1] = p .. '\0' .. backoff .. '\0' .. unique
      end
      local run_at = tonumber(A[a + 4])
      local due = now + tonumber(A[a + 5])
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
  if #recs == 2 then return out end
  -- Wake the workers when jobs may be claimable that were not: the pending
  -- jobs were none, or a delayed job is now the earliest.
  if #list > 0 or #zp > 0 then
    -- (A list or zset exists only while it holds something.)
    wake = call('EXISTS', pending, prio) == 0
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
end
