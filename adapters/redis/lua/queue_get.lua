-- queue_get.lua -- reads a job: its state, attempts and data. A job with a
-- claim (in the claims hash) is running, with the claim's attempt and
-- token; one in the done hash is completed; a delayed job whose run-at time
-- has come reads as pending.
-- KEYS[1]: the queue's hash tag "{prefix:queue}".
-- ARGV[1]: id.
-- Returns: {state, attempts, max_attempts, priority, type, payload,
--   last_error (nil: none), created_ms, run_at_ms, finished_ms, token},
--   with 0 for a time or token never set.
-- Errors: FLEET_ENOTFOUND, FLEET_EPROTO.
local call = redis.call
local tag = KEYS[1]
local t = call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function int(v)
  if v == false or v == '' then return 0 end
  local d = type(v) == 'string' and string.match(v, '^%-?(%d+)$')
  if not d or #d > 18 then
    error({err = 'FLEET_EPROTO job field is not an integer'})
  end
  return tonumber(v)
end

local f = call('HMGET', tag .. ':job:' .. ARGV[1], 'state', 'attempts',
               'max_attempts', 'priority', 'type', 'payload', 'last_error',
               'created_ms', 'run_at_ms', 'finished_ms', 'token')
if not f[1] then
  return redis.error_reply('FLEET_ENOTFOUND no job ' .. ARGV[1])
end
local state = f[1]
local run_at = int(f[9])
local attempts, token = int(f[2]), int(f[11])
local finished = int(f[10])
local claim = call('HGET', tag .. ':jobs:claims', ARGV[1])
local done = not claim and call('HGET', tag .. ':jobs:done', ARGV[1])
if claim then
  local tok, attempt = string.match(claim, '^(%d+):(%d+)$')
  if not tok then
    return redis.error_reply('FLEET_EPROTO bad claim')
  end
  state, attempts, token = 'running', int(attempt), int(tok)
elseif done then
  local ms, tok, attempt = string.match(done, '^(%d+):(%d+):(%d+)$')
  if not ms then
    return redis.error_reply('FLEET_EPROTO bad completion')
  end
  state, attempts, token = 'completed', int(attempt), int(tok)
  finished = int(ms)
elseif state == 'delayed' and run_at <= now then
  state = 'pending'
end
return {state, attempts, int(f[3]), int(f[4]), f[5] or '', f[6] or '', f[7],
        int(f[8]), run_at, finished, token}
