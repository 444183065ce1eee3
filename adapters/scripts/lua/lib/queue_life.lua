-- queue_life.lua -- included by queue scripts (--#include queue_life;
-- lib/queue_freed.lua includes it, so every script that ends claims has
-- it): a job's results, progress and events (docs/queue.md, "Results"
-- and "Progress and events"). Expects `call` and `tag`, and dec()
-- (queue_int) and publish_wake (lib/wake.lua) defined before it.
--
-- The default path costs nothing here: whether events are subscribed and
-- whether jobs carry their own result retention are the fields `events`
-- and `rttl` of T:limits, which flow_ended (lib/queue_freed.lua) reads in
-- the HMGET it makes anyway and hands to life_limits(); a completion
-- carries a result only inside its token argument (res_split).
--
-- Keys (the queue's tag T):
--   T:results  id -> "<finished_ms>\0<result>", kept until its time in
--              T:resx, whatever happens to the job's records.
--   T:resx     zset of the ids of T:results by expiry time (ms).
--   T:progress id -> "<time_ms>\0<pct>\0<bytes>", the last progress.
--   T:progx    zset of the ids of T:progress by expiry time (ms).
--   T:rttl     id -> result retention in ms, for the jobs enqueued with
--              one (ext item "r"), until they complete or are cancelled.
--   T:events   the channel events are published on.
--#include time

-- What this script run learned of T:limits: ev (events are subscribed)
-- and rttl (jobs with a retention of their own exist); nil: not read.
local life = {}

-- Expired entries deleted per write, at most: a write deletes about as
-- many as it adds in the steady state.
local LIFE_TRIM = 64

-- The server time, read once per script run.
local function life_now()
  if not life.t then life.t = now_ms() end
  return life.t
end

-- Takes the fields `events` and `rttl` of T:limits (false when unset).
-- An events lease that ran out is deleted, so that T:limits goes when
-- nothing else is in it (the enqueue's delivery to parked workers runs
-- only without it, lib/queue_add.lua).
local function life_limits(ev, rttl)
  life.rttl = rttl and true or false
  life.ev = false
  if ev then
    local u = tonumber(ev)
    if u and u > life_now() then
      life.ev = true
    else
      call('HDEL', tag .. ':limits', 'events')
    end
  end
end

-- Whether events are subscribed: from flow_ended's read, else one HMGET.
local function ev_on()
  if life.ev == nil then
    local f = call('HMGET', tag .. ':limits', 'events', 'rttl')
    life_limits(f[1], f[2])
  end
  return life.ev
end

-- Publishes the events of `list` ({kind, id, num, data} each) in one
-- message on T:events, when a subscriber holds the lease: per event
-- "<kind>\0<id>\0<time_ms>\0<num>\0<#data>\0<data>" (docs/queue.md,
-- "Progress and events"). kind: progress (num: percent, data: bytes),
-- completed (num: 1 with a result, data: it), failed (num: 1 when it
-- will retry, data: the error), dead (data: the error), stalled (num: 1
-- requeued, 0 dead), retried, cancelled (num 0, data ''). Part B's
-- cancel of running jobs calls it too.
local function ev_publish(list)
  if #list == 0 or not ev_on() then return end
  local t, parts = dec(life_now()), {}
  for _, e in ipairs(list) do
    local data = e[4] or ''
    parts[#parts + 1] = e[1] .. '\0' .. e[2] .. '\0' .. t .. '\0' ..
                        dec(e[3] or 0) .. '\0' .. dec(#data) .. '\0' .. data
  end
  publish_wake(tag .. ':events', table.concat(parts))
end

-- One event.
local function ev1(kind, id, num, data)
  ev_publish({{kind, id, num, data}})
end

-- Deletes up to LIFE_TRIM entries of hash `h` whose time in zset `z` has
-- passed.
local function life_expire(z, h)
  local old = call('ZRANGEBYSCORE', z, '-inf', dec(life_now()), 'LIMIT', '0',
                   dec(LIFE_TRIM))
  if #old > 0 then
    call('HDEL', h, unpack(old))
    call('ZREM', z, unpack(old))
  end
end

-- A completion's token argument: "<token>" alone, or with a result,
-- "<token>\0<ttl_ms>\0<result>" (the queue's retention; a job's own,
-- T:rttl, comes first). Returns the token and {ttl_ms, result} or nil.
-- Raises FLEET_EPROTO (before anything is written) when malformed.
local function res_split(tok)
  local z = string.find(tok, '\0', 1, true)
  if not z then return tok, nil end
  local y = string.find(tok, '\0', z + 1, true)
  local ttl = y and string.match(string.sub(tok, z + 1, y - 1), '^%d+$')
  if not ttl or #ttl > 15 then
    error({err = 'FLEET_EPROTO malformed result argument'})
  end
  return string.sub(tok, 1, z - 1), {tonumber(ttl), string.sub(tok, y + 1)}
end

-- After the claims of `done` (ids) completed, `res` ({id, {ttl, result}}
-- each) holding the results of some: forgets their own retentions, keeps
-- the results, and publishes "completed" for each. Call it after
-- flow_ended.
local function life_done(done, res)
  local own = {}
  if life.rttl then
    local key = tag .. ':rttl'
    if #res > 0 then
      local v = call('HMGET', key, unpack(done))
      for i, id in ipairs(done) do
        if v[i] then own[id] = tonumber(v[i]) end
      end
    end
    call('HDEL', key, unpack(done))
    if call('EXISTS', key) == 0 then call('HDEL', tag .. ':limits', 'rttl') end
  end
  if #res > 0 then
    local now_ms_, h, z = life_now(), {}, {}
    local fin = dec(now_ms_) .. '\0'
    for _, x in ipairs(res) do
      local id = x[1]
      h[#h + 1] = id
      h[#h + 1] = fin .. x[2][2]
      z[#z + 1] = dec(now_ms_ + (own[id] or x[2][1]))
      z[#z + 1] = id
    end
    call('HSET', tag .. ':results', unpack(h))
    call('ZADD', tag .. ':resx', unpack(z))
    life_expire(tag .. ':resx', tag .. ':results')
  end
  if life.ev then
    local by, list = {}, {}
    for _, x in ipairs(res) do by[x[1]] = x[2][2] end
    for i, id in ipairs(done) do
      local r = by[id]
      list[i] = {'completed', id, r and 1 or 0, r}
    end
    ev_publish(list)
  end
end

-- After a recovery: `ids` the expired claims' jobs, those with cuts[x]
-- handled, requeued unless prios[x] is nil (dead). Call it after
-- flow_ended.
local function life_recovered(ids, cuts, prios)
  if not life.ev then return end
  local list = {}
  for x, id in ipairs(ids) do
    if cuts[x] then
      list[#list + 1] = {'stalled', id, prios[x] ~= nil and 1 or 0}
      if prios[x] == nil then
        list[#list + 1] = {'dead', id, 0, 'claim expired'}
      end
    end
  end
  ev_publish(list)
end

-- A job deleted before it ran (cancelled): forgets its retention and
-- publishes "cancelled".
local function life_cancelled(id)
  ev_on()
  if life.rttl then call('HDEL', tag .. ':rttl', id) end
  ev1('cancelled', id, 0)
end

-- The result and last progress of job `id`: result (nil: none),
-- finished_ms, pct (-1: none) and progress bytes (nil: none). Expired
-- ones read as none.
local function life_read(id)
  local v = call('HMGET', tag .. ':results', id)[1]
  local p = call('HMGET', tag .. ':progress', id)[1]
  local res, fin, pct, pb = nil, 0, -1, nil
  local t = life_now()
  if v then
    local e = tonumber(call('ZSCORE', tag .. ':resx', id) or 0)
    local z = string.find(v, '\0', 1, true)
    if z and e > t then
      res, fin = string.sub(v, z + 1), tonumber(string.sub(v, 1, z - 1)) or 0
    end
  end
  if p then
    local e = tonumber(call('ZSCORE', tag .. ':progx', id) or 0)
    local z = string.find(p, '\0', 1, true)
    local y = z and string.find(p, '\0', z + 1, true)
    if y and e > t then
      pct, pb = tonumber(string.sub(p, z + 1, y - 1)) or -1,
                string.sub(p, y + 1)
    end
  end
  return res, fin, pct, pb
end
