-- queue_complete.lua -- completes claims still held: each claim is
-- dropped and counted; with keep_count 0 the job's records go too, else
-- the job is kept as completed (the done hash gets its finish time and
-- claim, the completed list its id) and the kept ones are trimmed to a
-- count and an age.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: claims, jobs,
--   opts, info, done, completed, stats.
-- ARGV[1]: keep_count; ARGV[2]: keep_s (0: no age bound); then id, token
--   per claim.
-- Returns: {now_ms, then per claim 1 completed, 2 that claim already ended,
--   0 stale, -1 no such job}.
local call = redis.call
local tag = KEYS[1]
local t = call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
--#include queue_int
--#include queue_trim
--#include queue_ended

local out = {now}
local ids = {}
for i = 3, #ARGV - 1, 2 do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return out end
local keep = tonumber(ARGV[1])
local claims = tag .. ':claims'
local held = call('HMGET', claims, unpack(ids))
local done, marks, seen = {}, {}, {}
local prefix = string.format('%d', now) .. '\0'
for i, id in ipairs(ids) do
  local tok = ARGV[2 * i + 2]
  local v = held[i]
  if seen[id] then
    -- Completed a moment ago by this batch.
    out[i + 1] = seen[id] == tok and 2 or 0
  elseif v and sub(v, 1, #tok) == tok and byte(v, #tok + 1) == 0 then
    seen[id] = tok
    done[#done + 1] = id
    marks[#marks + 1] = id
    marks[#marks + 1] = prefix .. v
    out[i + 1] = 1
  elseif v then
    out[i + 1] = 0 -- held by another claim
  else
    out[i + 1] = ended(id, tok)
  end
end
if #done > 0 then
  call('HDEL', claims, unpack(done))
  call('HINCRBY', tag .. ':stats', 'completed', #done)
  if keep > 0 then
    call('HSET', tag .. ':done', unpack(marks))
    call('RPUSH', tag .. ':completed', unpack(done))
    trim(tag .. ':completed', tag .. ':done', keep, tonumber(ARGV[2]))
  else
    call('HDEL', tag .. ':jobs', unpack(done))
    if call('EXISTS', tag .. ':opts') == 1 then
      call('HDEL', tag .. ':opts', unpack(done))
    end
    if call('EXISTS', tag .. ':info') == 1 then
      call('HDEL', tag .. ':info', unpack(done))
    end
  end
end
return out
