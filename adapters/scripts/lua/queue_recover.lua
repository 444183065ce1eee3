-- queue_recover.lua -- re-queues jobs whose claim deadline passed without
-- completion (at the front of their priority), or makes them dead past
-- max_attempts (the expired attempt counts); clears their token so that the
-- former holder's calls are stale. Reads the claims hash only when recover_at
-- (a lower bound of the earliest deadline) has passed. Safe to run from many
-- processes at once: each expired claim is handled by one call.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: claims,
--   recover_at, recs:<c>, jobs, opts, info, errs, pending, pending:prio, dead,
--   stats, jobs:wake, groups, gp:<g>, gz:<g>, grun, limits, uniq,
--   unique:<key>, rttl, events ("stalled" and "dead" events:
--   lib/queue_life.lua); with flows (lib/queue_deps.lua): parent, deps,
--   kids:<id>, and the parent's queue's; and cancel, rundl, timeout,
--   delayed (lib/queue_stop.lua): an expired claim whose job was
--   cancelled ends as cancelled (dead), one past its run deadline fails
--   with the timeout's error (retried after its backoff, or dead).
--   Also results, resx: a trimmed dead job's id drops an earlier job's
--   result (lib/queue_life.lua, life_res_forget).
-- ARGV[1]: limit (claims per call); ARGV[2]: keep_count, ARGV[3]: keep_s
--   for dead jobs.
-- Returns: {now_ms, requeued, dead, next_deadline_ms (-1: none running),
--   then id, reason, 0 per job moved aside: one whose claim, record or
--   options fleet cannot read (docs/queue.md, "Jobs fleet cannot read")}.
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
local claims = tag .. ':claims'
local ra_key = tag .. ':recover_at'
--#include queue_int
--#include queue_rec
--#include queue_trim
--#include queue_pend
--#include queue_flow
--#include queue_stop
--#include queue_errs

-- "<digits>" of at most 18 digits, else nil.
local function num(s)
  return #s <= 18 and find(s, '^%d+$') and tonumber(s) or nil
end

-- (A recover_at fleet cannot read is no bound: the claims are read.)
local ra = call('GET', ra_key)
ra = ra and num(ra)
if ra and ra > now then return {now, 0, 0, ra} end

-- Redis keeps what a script wrote before an error: every claim and job is
-- read and checked first. A claim, record or options fleet cannot read
-- does not stop the recovery: its job is moved aside (move_aside,
-- lib/queue_rec.lua: dead, with the reason), and the reply names it.
local all = call('HGETALL', claims)
local limit = tonumber(ARGV[1])
local ids, attempts, nxt, bad, vals = {}, {}, nil, {}, {}
for x = 1, #all, 2 do
  local id, v = all[x], all[x + 1]
  local p = id ~= '' and find(v, '\0', 1, true)
  local q = p and find(v, '\0', p + 1, true)
  -- (A group's claim has a fourth field.)
  local r = q and find(v, '\0', q + 1, true)
  local dl = q and num(sub(v, q + 1, r and r - 1 or -1))
  local att = q and num(sub(v, p + 1, q - 1))
  if id == '' then
    -- HASH_MARK (queue_int), not a claim.
  elseif not dl or not att then
    if #bad < limit then
      bad[#bad + 1] = {id, 'malformed claim: not <token>\0<attempt>\0' ..
                         '<deadline_ms> with numbers', nil, false}
    end
  elseif dl <= now and #ids < limit then
    ids[#ids + 1] = id
    attempts[#ids] = att
    vals[#ids] = v
  elseif nxt == nil or dl < nxt then
    -- The earliest deadline left (past already when the limit cut).
    nxt = dl
  end
end
local requeued, dead = 0, 0
-- Claims whose run ended (lib/queue_stop.lua) end as that says.
local stops, ldead = stop_claims(ids, vals, false, tonumber(ARGV[2]),
                                tonumber(ARGV[3]))
if stops then
  local k = 0
  dead = ldead
  for x, id in ipairs(ids) do
    if not stops[id] then
      k = k + 1
      ids[k], attempts[k], vals[k] = id, attempts[x], vals[x]
    end
  end
  for x = #ids, k + 1, -1 do ids[x], attempts[x], vals[x] = nil, nil, nil end
end
if #bad > 0 then
  local gone = {}
  for x, b in ipairs(bad) do gone[x] = b[1] end
  call('HDEL', claims, unpack(gone))
end
if #ids > 0 then
  -- The claims hash has no order: sorted, every backend does the same.
  local order, ov = {}, {}
  for x, id in ipairs(ids) do order[id], ov[id] = attempts[x], vals[x] end
  table.sort(ids)
  for x, id in ipairs(ids) do attempts[x], vals[x] = order[id], ov[id] end
  local recs = recs_get(tag, ids)
  local o = call('HMGET', tag .. ':opts', unpack(ids))
  local cuts, prios, grps = {}, {}, {}
  for x, id in ipairs(ids) do
    local rec = recs[x]
    local ok, max, i = rec, nil, nil
    if rec then ok, max, i = rec_split(rec) end
    if not rec then
      local why, raw = rec_missing(tag, id)
      bad[#bad + 1] = {id, why, raw, true}
    elseif not ok then
      bad[#bad + 1] = {id, max, rec, true}
    else
      local p, why = opts_split(o[x])
      if p then
        cuts[x] = i
        prios[x] = p
        -- The group is the claim's (the options may not hold it).
        grps[x] = claim_group(vals[x])
        if attempts[x] >= max then prios[x] = nil end
      else
        bad[#bad + 1] = {id, why, nil, false}
      end
    end
  end
  local was_empty = false
  local now_s = string.format('%d', now)
  local recw, info, gone = {}, {}, {}
  local sets, gorder = {}, {} -- by group: {list, zp}
  for x, id in ipairs(ids) do
    if cuts[x] then
      errs_add(id, attempts[x], now, 'claim expired')
      recw[#recw + 1] = id
      recw[#recw + 1] = attempts[x] .. sub(recs[x], cuts[x])
      info[#info + 1] = id
      if prios[x] == nil then
        info[#info + 1] = now_s .. '\0\0dead\0claim expired'
        gone[#gone + 1] = id
        -- A dead job of a group keeps it, for a retry.
        opts_group(id, o[x], grps[x])
      else
        info[#info + 1] = '\0\0\0claim expired'
        local st = sets[grps[x]]
        if not st then
          st = {{}, {}}
          sets[grps[x]] = st
          gorder[#gorder + 1] = grps[x]
        end
        local list, zp = st[1], st[2]
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
  for _, g in ipairs(gorder) do
    if pend_add(g, sets[g][1], sets[g][2], true) then was_empty = true end
  end
  local fl = flow_ended(vals)
  life_recovered(ids, cuts, prios)
  -- (The claims stop_claims ended above counted their dead already.)
  dead = dead + #gone
  if #gone > 0 then
    call('RPUSH', tag .. ':dead', unpack(gone))
    call('HINCRBY', tag .. ':stats', 'dead', #gone)
    trim(tag .. ':dead', tag .. ':info', tonumber(ARGV[2]), tonumber(ARGV[3]))
    if fl.deps then deps_ended(gone, 'd') end
    if fl.uniq then unique_ended(tag, gone) end
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
local out = {now, requeued, dead, nxt or -1}
deps_aside(bad)
for _, v in ipairs(move_aside(tag, now, bad)) do out[#out + 1] = v end
return out
