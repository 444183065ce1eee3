-- queue_get.lua -- reads a job: its state, attempts and data. A job with a
-- claim is running, with the claim's attempt and token; one in the done hash
-- is completed; one whose info says so is dead; one in the delayed zset is
-- delayed until its run-at time, then reads as pending; a flow's parent
-- whose children have not all ended is waiting-children. A completed job's
-- result and any job's last progress come at the end (lib/queue_life.lua);
-- a job whose records went at its completion (no completed-job history)
-- reads as completed while its result is kept, with only its finish time.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: recs:<c>, jobs, opts,
--   info, errs, claims, done, delayed, groups, gp:<g>, gz:<g>, deps,
--   res:<c>, results, progress, progx.
-- ARGV[1]: id.
-- Returns: {state, attempts, max_attempts, priority, type, payload,
--   last_error (nil: none), created_ms, run_at_ms, finished_ms, token,
--   group ('': none), result (nil: none), progress_pct (-1: none),
--   progress bytes (nil: none), headers ('': none; "<key>=<value>" items
--   separated by "\t", lib/queue_hdr.lua), attempt history ('': none;
--   the failed attempts, oldest first, as lib/queue_errs.lua keeps them:
--   "<attempt>:<time_ms>:<len>:<error bytes>" each)}, with 0 for a time
--   or token never set.
-- Errors: FLEET_ENOTFOUND, FLEET_EPROTO.
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
local id = ARGV[1]
--#include queue_int
--#include queue_rec
--#include queue_life
--#include queue_hdr

local function num(v)
  if v == '' then return 0 end
  return int(v)
end

-- The fields of "<a>\0<b>\0<c>\0<rest>" (info, done and claims values).
local function fields(v)
  local p = find(v, '\0', 1, true)
  local q = p and find(v, '\0', p + 1, true)
  local r = q and find(v, '\0', q + 1, true)
  if not q then error({err = 'FLEET_EPROTO bad record: ' .. id}) end
  if not r then return sub(v, 1, p - 1), sub(v, p + 1, q - 1), sub(v, q + 1) end
  return sub(v, 1, p - 1), sub(v, p + 1, q - 1), sub(v, q + 1, r - 1),
         sub(v, r + 1)
end

-- The result and last progress (lib/queue_life.lua), at the reply's end.
local res, res_fin, pct, pbytes = life_read(id)
-- The attempt history (lib/queue_errs.lua), last: '' for none.
local errs = redis.pcall('HGET', tag .. ':errs', id)
local tail = {res or false, pct, pbytes or false, '',
              type(errs) == 'string' and errs or ''}
local function reply(t)
  for _, v in ipairs(tail) do t[#t + 1] = v end
  return t
end

local rec = redis.pcall('HGET', rec_key(tag, id), id)
if type(rec) ~= 'string' then
  -- A job moved aside whose record is in a key of another type
  -- (docs/queue.md, "Jobs fleet cannot read") reads as dead, with its
  -- reason and no data.
  local info = call('HGET', tag .. ':info', id)
  local fin, tok, st, err
  if info then fin, tok, st, err = fields(info) end
  if st == 'dead' then
    tail[1] = false
    return reply({'dead', 0, 0, 0, '', '', err ~= '' and err or false, 0, 0,
                  num(fin), num(tok), ''})
  elseif rec then
    return rec -- the server's error
  elseif res then
    -- A completed job whose records went (no completed-job history):
    -- its result is kept for its own retention, and tells it completed.
    return reply({'completed', 0, 0, 0, '', '', false, 0, 0, res_fin, 0, ''})
  end
  return redis.error_reply('FLEET_ENOTFOUND no job ' .. id)
end
local attempts, max, _, j, k, l = rec_read(rec, id)
local created
created, tail[4] = hdr_split(sub(rec, j + 1, k - 1))
created = num(created)
-- (A progress reported before this job was created is an earlier job's
-- of the same given id, kept for its time: lib/queue_life.lua.)
if pct >= 0 then
  local p = call('HGET', tag .. ':progress', id)
  local z = p and find(p, '\0', 1, true)
  if z and (tonumber(sub(p, 1, z - 1)) or 0) < created then
    tail[2], tail[3] = -1, false
  end
end
local prio, _, _, group = opts_read(call('HGET', tag .. ':opts', id), id)
local state, finished, token, last_error = 'pending', 0, 0, false
local info = call('HGET', tag .. ':info', id)
if info then
  local fin, tok, st, err = fields(info)
  finished, token = num(fin), num(tok)
  if st == 'dead' then state = 'dead' end
  if err and err ~= '' then last_error = err end
end
local run_at = call('ZSCORE', tag .. ':delayed', id)
run_at = run_at and tonumber(run_at) or 0
if state ~= 'dead' and run_at > now then state = 'delayed' end
local claim = call('HGET', tag .. ':claims', id)
local done = not claim and call('HGET', tag .. ':done', id)
if claim then
  local tok, attempt, _, g = fields(claim)
  state, attempts, token = 'running', num(attempt), num(tok)
  -- (A running job of a group: its claim's fourth field.)
  if g and group == '' then group = g end
elseif done then
  local fin, tok, attempt, rest = fields(done)
  -- (The kept claim: "<deadline>[\0<group>]" after the attempt.)
  local p = rest and find(rest, '\0', 1, true)
  if p and group == '' then group = sub(rest, p + 1) end
  state, attempts, token, finished = 'completed', num(attempt), num(tok),
                                     num(fin)
end
-- A flow's parent waits for its children (lib/queue_deps.lua).
local left = state == 'pending' and call('HGET', tag .. ':deps', id)
if left and left ~= '0' then state = 'waiting-children' end
if state == 'pending' and group == '' then
  -- A pending job of a group is known by the set it waits in (its
  -- options hold the group only when it has other options): the sets of
  -- the rotation are searched (lib/queue_flow.lua).
  for _, g in ipairs(call('LRANGE', tag .. ':groups', 0, -1)) do
    if g ~= '' and (call('LPOS', tag .. ':gp:' .. g, id) or
        call('ZSCORE', tag .. ':gz:' .. g, id)) then
      group = g
      break
    end
  end
end
-- (A result of an earlier job of the same id is not this one's.)
if state ~= 'completed' then tail[1] = false end
return reply({state, attempts, max, prio, sub(rec, k + 1, l - 1),
              sub(rec, l + 1), last_error, created, run_at, finished, token,
              group})
