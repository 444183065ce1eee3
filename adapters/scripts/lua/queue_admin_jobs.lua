-- queue_admin_jobs.lua -- a page of the jobs in one state, with what a tool
-- shows of each (the CLI's and the dashboard's job lists). Order: pending in
-- claim order (higher priorities, the default priority's list, lower
-- priorities); delayed by run-at time (a due one still in the delayed set is
-- listed here); running by id; completed and dead newest first; flow
-- parents waiting for their children by id.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: recs:<c>, jobs,
--   info, done, claims, pending, pending:prio, delayed, completed, dead,
--   opts, groups, gp:<g>, gz:<g>, deps.
-- ARGV[1]: state: "pending", "delayed", "running", "completed", "dead" or
--   "waiting-children";
--   ARGV[2]: cursor (the offset of the page: "0" first); ARGV[3]: limit
--   (1..1000); ARGV[4]: the most payload bytes returned per job; ARGV[5]
--   (optional; pending only): a group, to list only its pending jobs.
-- Returns: {total in that state (of the group), next cursor ("0": no
--   more), then 9 per job: id, type, attempts (a running job's: this
--   attempt; a completed one's: the attempt that completed it, as
--   queue_get.lua says), max_attempts, created_ms, time (delayed: run at; running:
--   claim deadline; completed and dead: finished; pending and
--   waiting-children: 0), payload (cut to ARGV[4] bytes), last error (""
--   when none), group ("": none)}. An id whose record is gone is skipped,
--   but for a dead job moved aside (docs/queue.md, "Jobs fleet cannot
--   read"); a record fleet cannot read is listed with an empty type, its
--   raw value as the payload and what is wrong as the error.
local call = redis.call
local tag = KEYS[1]
--#include queue_int
--#include queue_rec
--#include queue_hdr

local state, from = ARGV[1], tonumber(ARGV[2])
local limit, cut = tonumber(ARGV[3]), tonumber(ARGV[4])
local prio = tag .. ':pending:prio'
local HI = '(4398046511104000' -- priorities above 0 score below 1000 * 2^42

-- segs: a list of {count, fetch(a, b)} read one after the other; returns
-- the ids at offsets from .. from + limit - 1 and the total.
local function page(segs)
  local total, ids, off = 0, {}, from
  for _, s in ipairs(segs) do total = total + s[1] end
  for _, s in ipairs(segs) do
    local want = limit - #ids
    if want <= 0 then break end
    if off < s[1] then
      local got = s[2](off, math.min(s[1], off + want) - 1)
      for _, id in ipairs(got) do ids[#ids + 1] = id end
      off = 0
    else
      off = off - s[1]
    end
  end
  return ids, total
end

-- A list read newest first.
local function newest(key)
  local n = call('LLEN', key)
  return {n, function(a, b)
    local got = call('LRANGE', key, n - 1 - b, n - 1 - a)
    local out = {}
    for i = #got, 1, -1 do out[#out + 1] = got[i] end
    return out
  end}
end

local ids, total, times, tries, grp = {}, 0, {}, {}, {}
local only = ARGV[5] or ''
if state == 'pending' then
  local parts = {}
  -- The segments of set g: higher priorities, the list, lower ones; each
  -- id read is marked with its group.
  local function segs(g)
    local z, l = tag .. ':pending:prio', tag .. ':pending'
    if g ~= '' then z, l = tag .. ':gz:' .. g, tag .. ':gp:' .. g end
    local function mark(got)
      for _, id in ipairs(got) do grp[id] = g end
      return got
    end
    local hi = call('ZCOUNT', z, '-inf', HI)
    local all = call('ZCARD', z)
    parts[#parts + 1] = {hi, function(a, b)
      return mark(call('ZRANGE', z, a, b))
    end}
    parts[#parts + 1] = {call('LLEN', l), function(a, b)
      return mark(call('LRANGE', l, a, b))
    end}
    parts[#parts + 1] = {all - hi, function(a, b)
      return mark(call('ZRANGE', z, hi + a, hi + b))
    end}
  end
  if only ~= '' then
    segs(only)
  else
    segs('')
    -- Then the jobs of each group (lib/queue_flow.lua), in the
    -- rotation's order, each in its claim order.
    for _, g in ipairs(call('LRANGE', tag .. ':groups', 0, -1)) do
      if g ~= '' then segs(g) end
    end
  end
  ids, total = page(parts)
elseif state == 'delayed' then
  local d = tag .. ':delayed'
  ids, total = page({{call('ZCARD', d), function(a, b)
    local got = call('ZRANGE', d, a, b, 'WITHSCORES')
    local out = {}
    for i = 1, #got, 2 do
      out[#out + 1] = got[i]
      times[got[i]] = tonumber(got[i + 1])
    end
    return out
  end}})
elseif state == 'running' then
  local all = call('HGETALL', tag .. ':claims')
  local sorted = {}
  for i = 1, #all, 2 do
    -- (The field "" is the hash-table mark, HASH_MARK: not a job.)
    if all[i] ~= '' then
      sorted[#sorted + 1] = all[i]
      -- "<token>\0<attempt>\0<deadline_ms>[\0<group>]"
      local v = all[i + 1]
      local p = find(v, '\0', 1, true)
      local q = p and find(v, '\0', p + 1, true)
      local r = q and find(v, '\0', q + 1, true)
      times[all[i]] = q and tonumber(sub(v, q + 1, r and r - 1 or -1)) or 0
      tries[all[i]] = q and tonumber(sub(v, p + 1, q - 1))
      grp[all[i]] = r and sub(v, r + 1) or ''
    end
  end
  table.sort(sorted)
  ids, total = page({{#sorted, function(a, b)
    local out = {}
    for i = a + 1, b + 1 do out[#out + 1] = sorted[i] end
    return out
  end}})
elseif state == 'completed' then
  ids, total = page({newest(tag .. ':completed')})
elseif state == 'dead' then
  ids, total = page({newest(tag .. ':dead')})
elseif state == 'waiting-children' then
  -- T:deps: parent -> its children not ended yet, 0 once released
  -- (lib/queue_deps.lua).
  local all = call('HGETALL', tag .. ':deps')
  local sorted = {}
  for i = 1, #all, 2 do
    if all[i + 1] ~= '0' then sorted[#sorted + 1] = all[i] end
  end
  table.sort(sorted)
  ids, total = page({{#sorted, function(a, b)
    local out = {}
    for i = a + 1, b + 1 do out[#out + 1] = sorted[i] end
    return out
  end}})
else
  return redis.error_reply('FLEET_EINVAL unknown state ' .. tostring(state))
end

local next_cursor = '0'
if from + #ids < total and #ids > 0 then
  next_cursor = string.format('%d', from + #ids)
end
local out = {total, next_cursor}
if #ids == 0 then return out end
local recs = recs_get(tag, ids)
local infos = call('HMGET', tag .. ':info', unpack(ids))
local dones = {}
if state == 'completed' then dones = call('HMGET', tag .. ':done', unpack(ids)) end
-- The groups not known yet: a completed job's claim (its done record's
-- fifth field), else its options (a delayed or dead job's).
local opts = {}
if state == 'delayed' or state == 'dead' or state == 'completed' then
  opts = call('HMGET', tag .. ':opts', unpack(ids))
end
local function group_of(n, id)
  if grp[id] then return grp[id] end
  local d = dones[n]
  if d then
    local p = 0
    for _ = 1, 4 do
      p = p and find(d, '\0', p + 1, true)
    end
    if p then return sub(d, p + 1) end
  end
  local o = opts[n]
  if o then
    local _, _, _, g = opts_split(o)
    return g or ''
  end
  return ''
end

-- The last error of an info record "<finished>\0<token>\0<state>\0<error>".
local function last_error(v)
  local i = v and find(v, '\0', 1, true)
  local j = i and find(v, '\0', i + 1, true)
  local k = j and find(v, '\0', j + 1, true)
  return k and sub(v, k + 1) or ''
end

for n, id in ipairs(ids) do
  local rec = recs[n]
  local attempts, max, _, j, k, l
  if rec then attempts, max, _, j, k, l = rec_split(rec) end
  if rec and not attempts then
    -- A record fleet cannot read (docs/queue.md, "Jobs fleet cannot
    -- read"), not yet moved aside: its raw value as the payload, and
    -- what is wrong as the error.
    out[#out + 1] = id
    out[#out + 1] = ''
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = times[id] or 0
    out[#out + 1] = #rec > cut and sub(rec, 1, cut) or rec
    out[#out + 1] = max
    out[#out + 1] = group_of(n, id)
  elseif not rec and state == 'dead' and infos[n] then
    -- A job moved aside whose record is in a key of another type: no
    -- record, the reason in its info.
    local p = find(infos[n], '\0', 1, true)
    out[#out + 1] = id
    out[#out + 1] = ''
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = p and tonumber(sub(infos[n], 1, p - 1)) or 0
    out[#out + 1] = ''
    out[#out + 1] = last_error(infos[n])
    out[#out + 1] = group_of(n, id)
  elseif rec then
    local created = hdr_split(sub(rec, j + 1, k - 1))
    local inf = infos[n]
    local err = last_error(inf)
    local t = times[id] or 0
    if state == 'completed' then
      local d = dones[n]
      local p = d and find(d, '\0', 1, true)
      t = p and tonumber(sub(d, 1, p - 1)) or 0
      -- The attempt that completed it, as queue_get.lua reads it: the
      -- record counts the failed ones only.
      local q = p and find(d, '\0', p + 1, true)
      local r = q and find(d, '\0', q + 1, true)
      tries[id] = q and tonumber(sub(d, q + 1, r and r - 1 or -1))
    elseif state == 'dead' and inf then
      local p = find(inf, '\0', 1, true)
      t = p and tonumber(sub(inf, 1, p - 1)) or 0
    end
    local payload = sub(rec, l + 1)
    if #payload > cut then payload = sub(payload, 1, cut) end
    out[#out + 1] = id
    out[#out + 1] = sub(rec, k + 1, l - 1)
    out[#out + 1] = tries[id] or attempts -- a running job's: its claim's
    out[#out + 1] = max
    out[#out + 1] = tonumber(created) or 0
    out[#out + 1] = t or 0
    out[#out + 1] = payload
    out[#out + 1] = err
    out[#out + 1] = group_of(n, id)
  end
end
return out
