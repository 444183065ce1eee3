-- queue_fail.lua -- fails a claim still held: records the error, then
-- schedules a retry after the job's backoff, or past max_attempts makes the
-- job dead (and trims the kept dead jobs).
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: claims, recs:<c>,
--   jobs, opts, info, errs (lib/queue_errs.lua), done, delayed, dead,
--   stats, jobs:wake, grun, limits, uniq, unique:<key>, rttl,
--   hist:m:<minute>, hist:d:<day> (lib/queue_hist.lua), events
--   ("failed", and "dead", events: lib/queue_life.lua); with flows
--   (lib/queue_deps.lua): parent, deps, kids:<id>, and the parent's
--   queue's.
--   Also results, resx: a trimmed dead job's id drops an earlier job's
--   result (lib/queue_life.lua, life_res_forget).
-- ARGV[1]: id; ARGV[2]: token; ARGV[3]: error; ARGV[4]: rnd (0..2^32-1,
--   chooses the jitter); ARGV[5]: keep_count, ARGV[6]: keep_s for dead jobs.
--   Also cancel, rundl, timeout (lib/queue_stop.lua): a claim whose job
--   was cancelled ends as cancelled (dead); one past its run deadline
--   fails with the timeout's error.
-- Returns: {1, run_at_ms} for a retry, {0, 0} when the job is dead
--   (cancelled included).
-- Errors: FLEET_ENOTFOUND, FLEET_ESTALE (not held with this token),
--   FLEET_EALREADY (that claim already ended), FLEET_EPROTO.
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
--#include queue_int
--#include queue_rec
--#include queue_trim
--#include queue_ended
--#include queue_flow
--#include queue_stop
--#include queue_hist
--#include queue_errs

local id, tok = ARGV[1], ARGV[2]
local v = call('HGET', tag .. ':claims', id)
local rec = call('HGET', rec_key(tag, id), id)
if not has_token(v, tok) then
  local e = not v and ended(id, tok) or 0
  if e == -1 then
    return redis.error_reply('FLEET_ENOTFOUND no job ' .. id)
  elseif e == 2 then
    return redis.error_reply('FLEET_EALREADY claim ' .. tok .. ' ended')
  end
  return redis.error_reply('FLEET_ESTALE token ' .. tok .. ' is stale')
elseif not rec then
  return redis.error_reply('FLEET_ENOTFOUND no job ' .. id)
end
local p = find(v, '\0', #tok + 2, true)
if not p then return redis.error_reply('FLEET_EPROTO bad claim: ' .. id) end
local attempt = int(sub(v, #tok + 2, p - 1))
local _, max, i = rec_read(rec, id)
local o = call('HGET', tag .. ':opts', id)
local _, backoff, unique = opts_read(o, id)
local now_s = string.format('%d', now)
local info = '\0' .. tok .. '\0'

-- The backoff (lib/queue_stop.lua), read before anything is written.
local delay = backoff_delay(backoff, attempt, tonumber(ARGV[4]))
if not delay then
  return redis.error_reply('FLEET_EPROTO bad backoff: ' .. id)
end
local err = stop_fail(id, v, ARGV[3], tonumber(ARGV[5]), tonumber(ARGV[6]))
if not err then return {0, 0} end

call('HDEL', tag .. ':claims', id)
hist_add('f', 1)
local fl = flow_ended({v})
-- Delayed for its retry or dead, the job keeps its group in its options.
opts_group(id, o, claim_group(v))
call('HSET', rec_key(tag, id), id, attempt .. sub(rec, i))
errs_add(id, attempt, now, err)
if attempt >= max then
  call('HSET', tag .. ':info', id, now_s .. info .. 'dead\0' .. err)
  call('RPUSH', tag .. ':dead', id)
  call('HINCRBY', tag .. ':stats', 'dead', 1)
  trim(tag .. ':dead', tag .. ':info', tonumber(ARGV[5]), tonumber(ARGV[6]))
  if fl.deps then deps_ended({id}, 'd') end
  if fl.uniq and unique then unique_ended(tag, {id}) end
  ev_publish({{'failed', id, 0, ARGV[3]}, {'dead', id, 0, ARGV[3]}})
  return {0, 0}
end

local run_at = now + delay
local delayed = tag .. ':delayed'
local first = call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
call('HSET', tag .. ':info', id, info .. '\0' .. err)
call('ZADD', delayed, run_at, id)
if not first[2] or run_at < tonumber(first[2]) then
  publish_wake(tag .. ':jobs:wake', 'wake')
end
ev1('failed', id, 1, ARGV[3])
return {1, run_at}
