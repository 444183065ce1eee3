-- queue_recover.lua -- re-queues jobs whose claim deadline passed without
-- completion (at the front of their priority), or makes them dead past
-- max_attempts (the expired attempt counts); clears their token so that
-- the former holder's calls are stale. Reads the claims hash only when
-- recover_at (a lower bound of the earliest deadline) has passed. Safe to
-- run from many processes at once: each expired claim is handled by one
-- call.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: claims,
--   recover_at, recs:<c>, jobs, opts, info, pending, pending:prio, dead,
--   stats, jobs:wake.
-- ARGV[1]: limit (claims per call); ARGV[2]: keep_count, ARGV[3]: keep_s
--   for dead jobs.
-- Returns: {now_ms, requeued, dead, next_deadline_ms (-1: none running)}.
local call = redis.call
local tag = KEYS[1]
local t = call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local claims = tag .. ':claims'
local ra_key = tag .. ':recover_at'
local pending = tag .. ':pending'
local prio = tag .. ':pending:prio'
--#include queue_int
--#include queue_rec
--#include queue_trim

local ra = call('GET', ra_key)
if ra and int(ra) > now then return {now, 0, 0, int(ra)} end

-- Redis keeps what a script wrote before an error: every claim and job is
-- read and checked first, so that one fleet cannot read stays running and
-- the call answers FLEET_EPROTO.
local all = call('HGETALL', claims)
local limit = tonumber(ARGV[1])
local ids, attempts, nxt = {}, {}, nil
for x = 1, #all, 2 do
  local id, v = all[x], all[x + 1]
  local p = id ~= '' and find(v, '\0', 1, true)
  local q = p and find(v, '\0', p + 1, true)
  if id == '' then
    -- CLAIMS_MARK (queue_rec), not a claim.
  elseif not q then
    return redis.error_reply('FLEET_EPROTO bad claim: ' .. id)
  else
    local dl = int(sub(v, q + 1))
    if dl <= now and #ids < limit then
      ids[#ids + 1] = id
      attempts[#ids] = int(sub(v, p + 1, q - 1))
    elseif nxt == nil or dl < nxt then
      -- The earliest deadline left (past already when the limit cut).
      nxt = dl
    end
  end
end
local requeued, dead = 0, 0
if #ids > 0 then
  -- The claims hash has no order: sorted, every backend does the same.
  local order = {}
  for x, id in ipairs(ids) do order[id] = attempts[x] end
  table.sort(ids)
  for x, id in ipairs(ids) do attempts[x] = order[id] end
  local recs = recs_get(tag, ids)
  local o = call('HMGET', tag .. ':opts', unpack(ids))
  local cuts, prios = {}, {}
  for x, id in ipairs(ids) do
    if recs[x] then
      local _, max, i = rec_read(recs[x], id)
      cuts[x] = i
      prios[x] = opts_read(o[x], id)
      if attempts[x] >= max then prios[x] = nil end
    end
  end
  local was_empty = call('LLEN', pending) == 0 and call('ZCARD', prio) == 0
  local now_s = string.format('%d', now)
  local recw, info, list, zp, gone = {}, {}, {}, {}, {}
  for x, id in ipairs(ids) do
    if cuts[x] then
      recw[#recw + 1] = id
      recw[#recw + 1] = attempts[x] .. sub(recs[x], cuts[x])
      info[#info + 1] = id
      if prios[x] == nil then
        info[#info + 1] = now_s .. '\0\0dead\0claim expired'
        gone[#gone + 1] = id
      else
        info[#info + 1] = '\0\0\0claim expired'
        if prios[x] == 0 then
          table.insert(list, 1, id)
        else
          zp[#zp + 1] = (1000 - prios[x]) * PRIO_UNIT
          zp[#zp + 1] = id
        end
        requeued = requeued + 1
      end
    end
  end
  call('HDEL', claims, unpack(ids))
  if #recw > 0 then
    recs_set(tag, recw)
    call('HSET', tag .. ':info', unpack(info))
  end
  if #list > 0 then call('LPUSH', pending, unpack(list)) end
  if #zp > 0 then call('ZADD', prio, unpack(zp)) end
  dead = #gone
  if dead > 0 then
    call('RPUSH', tag .. ':dead', unpack(gone))
    call('HINCRBY', tag .. ':stats', 'dead', dead)
    trim(tag .. ':dead', tag .. ':info', tonumber(ARGV[2]), tonumber(ARGV[3]))
  end
  if requeued > 0 and was_empty then
    publish_wake(tag .. ':jobs:wake', 'wake')
  end
end
if nxt then
  call('SET', ra_key, nxt)
else
  call('DEL', ra_key)
end
return {now, requeued, dead, nxt or -1}
