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
--   T:res:<c>  id -> "<finished_ms>\0<expires_ms>\0<result>", the results
--              kept for the queue's retention of the jobs whose id fleet
--              generated, by chunk as their records (rec_chunk, lib/
--              queue_int.lua: the id without its last three digits). One
--              hash for every result took a write to a random place in a
--              table of all the results kept (an hour's worth by
--              default): it cost a result a third of its completion.
--   T:resc     zset of the chunks of T:res:<c>, by the latest expiry of
--              a result written to it (ms; ZADD GT): a chunk goes whole
--              once its last result expired.
--   T:results  id -> "<finished_ms>\0<expires_ms>\0<result>", the other
--              results (given ids, a job's own retention), kept until
--              it expires, whatever happens to the job's records.
--   T:resl     list of the results of T:results kept for the queue's
--              retention, one element per completion call, oldest first:
--              "<expires_ms>\0<id>\0<id>...". A list element per call,
--              not a zset member per job: a zset's insert cost a result
--              as much as the rest of its completion.
--   T:resx     zset of the ids of the results kept for a retention of
--              their job's own (T:rttl), by expiry time (ms).
--   T:progress id -> "<time_ms>\0<pct>\0<bytes>", the last progress.
--   T:progx    zset of the ids of T:progress by expiry time (ms).
--   T:rttl     id -> result retention in ms, for the jobs enqueued with
--              one (ext item "r"), until they complete or are cancelled.
--   T:limits   field `res` while T:results may hold a given id's result
--              (set by the completion that writes one; read by flow_ended
--              with the rest): a job of that id that ends without a result
--              of its own drops it (life_res_forget), so that a later job
--              of the same id never reads an earlier one's result.
--   T:events   the channel events are published on.
--#include time

-- What this script run learned of T:limits: ev (events are subscribed),
-- rttl (jobs with a retention of their own exist) and res (given ids'
-- results may be kept); nil: not read.
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

-- Deletes the results kept under `ids` whose expiry (the second field of
-- "<finished_ms>\0<expires_ms>\0<result>") is not after `t`, leaving
-- those written again since with a later expiry.
local function results_drop(ids, t)
  local v, gone = call('HMGET', tag .. ':results', unpack(ids)), {}
  for i, id in ipairs(ids) do
    local x = v[i] and string.find(v[i], '\0', 1, true)
    local y = x and string.find(v[i], '\0', x + 1, true)
    if v[i] and not (y and (tonumber(string.sub(v[i], x + 1, y - 1)) or 0) >
        t) then
      gone[#gone + 1] = id
    end
  end
  if #gone > 0 then call('HDEL', tag .. ':results', unpack(gone)) end
end

-- Deletes the results of T:resl's oldest elements that expired (up to 4
-- elements), but those written again since with a later expiry.
local function resl_expire()
  local l, t = tag .. ':resl', life_now()
  local heads, ids, n = call('LRANGE', l, '0', '3'), {}, 0
  for _, e in ipairs(heads) do
    local z = string.find(e, '\0', 1, true)
    if not z or (tonumber(string.sub(e, 1, z - 1)) or 0) > t then break end
    n = n + 1
    for id in string.gmatch(string.sub(e, z + 1), '[^%z]+') do
      ids[#ids + 1] = id
    end
  end
  if n == 0 then return end
  call('LTRIM', l, dec(n), '-1')
  if #ids == 0 then return end
  results_drop(ids, t)
end

-- A completion's token argument: "<token>" alone, or with a result,
-- "<token>\0<ttl_ms>\0<result>" (the queue's retention; a job's own,
-- T:rttl, comes first). Returns the token, and the ttl and the result
-- (nil: none). Raises FLEET_EPROTO (before anything is written) when
-- malformed.
local res_ttls = {} -- the ttl strings met, converted
local function res_split(tok)
  local z = string.find(tok, '\0', 1, true)
  if not z then return tok, nil end
  local y = string.find(tok, '\0', z + 1, true)
  local ttl = y and y - z < 17 and string.sub(tok, z + 1, y - 1)
  if ttl then
    local n = res_ttls[ttl]
    if not n then
      n = tonumber(ttl)
      res_ttls[ttl] = n or false
    end
    ttl = n
  end
  if not ttl then error({err = 'FLEET_EPROTO malformed result argument'}) end
  return string.sub(tok, 1, z - 1), ttl, string.sub(tok, y + 1)
end

-- Drops the results kept in T:results under the given ids (generated
-- ids never repeat) of `ids`, jobs that ended without a result of their
-- own: what is there is an earlier job's of the same id. Only while
-- T:limits has `res` (life.res, read here when the script has not read
-- it), which goes with the last such result.
local function life_res_forget(ids)
  if life.res == nil then
    life.res = call('HEXISTS', tag .. ':limits', 'res') == 1
  end
  if not life.res then return end
  local given = {}
  for _, id in ipairs(ids) do
    if not rec_chunk(id) then given[#given + 1] = id end
  end
  if #given == 0 then return end
  call('HDEL', tag .. ':results', unpack(given))
  call('ZREM', tag .. ':resx', unpack(given))
  if call('EXISTS', tag .. ':results') == 0 then
    call('HDEL', tag .. ':limits', 'res')
    life.res = false
  end
end

-- Deletes up to LIFE_TRIM results of T:results whose own retention
-- (T:resx) passed, but those written again since with a later expiry (a
-- later job of the same given id, kept for the queue's retention: its
-- result is not the earlier one's to delete).
local function resx_expire()
  local z, t = tag .. ':resx', life_now()
  local old = call('ZRANGEBYSCORE', z, '-inf', dec(t), 'LIMIT', '0',
                   dec(LIFE_TRIM))
  if #old == 0 then return end
  call('ZREM', z, unpack(old))
  results_drop(old, t)
end

-- Drops the chunks of T:res:<c> whose last result expired (up to 4).
local function resc_expire()
  local z = tag .. ':resc'
  local old = call('ZRANGEBYSCORE', z, '-inf', dec(life_now()), 'LIMIT', '0',
                   '4')
  if #old == 0 then return end
  local keys = {}
  for i, c in ipairs(old) do keys[i] = tag .. ':res:' .. c end
  call('DEL', unpack(keys))
  call('ZREM', z, unpack(old))
end

-- The decimal strings of the results' lengths met by this script run (a
-- number's conversion costs more than the rest of a job's event).
local life_lens = {}

-- After the claims of `done` (ids) completed, `res` holding the results
-- of some (res[x] = the result of done[x], `ttl` the queue's retention in
-- ms; nil: none): forgets their own retentions, keeps the results, and
-- publishes "completed" for each. Call it after flow_ended.
local function life_done(done, res, ttl)
  local own = {}
  if life.rttl then
    local key = tag .. ':rttl'
    if res then
      local v = call('HMGET', key, unpack(done))
      for i, id in ipairs(done) do
        if v[i] then own[id] = tonumber(v[i]) end
      end
    end
    call('HDEL', key, unpack(done))
    if call('EXISTS', key) == 0 then call('HDEL', tag .. ':limits', 'rttl') end
  end
  if res then
    local t, h, batch, z = life_now(), {}, {}, {}
    local fin = dec(t) .. '\0'
    local exp = dec(t + ttl)
    local head = fin .. exp .. '\0'
    -- The ids by chunk (recs_by_chunk, lib/queue_int.lua: the digits of
    -- all of them checked at once, an id in its predecessor's chunk placed
    -- without a lookup); a Lua string op per job costs as much as the
    -- rest of its result (Redis's Lua hashes every byte of every string).
    local by, cs = recs_by_chunk(done, 1)
    local zc = {'GT'}
    for _, c in ipairs(cs) do
      local kv = {}
      for _, x in ipairs(by[c or '']) do
        local r = res[x]
        if r then
          local id = done[x]
          if own[id] then
            local e = dec(t + own[id])
            h[#h + 1] = id
            h[#h + 1] = fin .. e .. '\0' .. r
            z[#z + 1] = e
            z[#z + 1] = id
          elseif c then
            kv[#kv + 1] = id
            kv[#kv + 1] = head .. r
          else
            h[#h + 1] = id
            h[#h + 1] = head .. r
            batch[#batch + 1] = id
          end
        end
      end
      if #kv > 0 then
        call('HSET', tag .. ':res:' .. c, unpack(kv))
        zc[#zc + 1] = exp
        zc[#zc + 1] = c
      end
    end
    if #zc > 1 then
      call('ZADD', tag .. ':resc', unpack(zc))
      resc_expire()
    end
    if #h > 0 then call('HSET', tag .. ':results', unpack(h)) end
    for x = 1, #h, 2 do
      if not life.res and not rec_chunk(h[x]) then
        call('HSET', tag .. ':limits', 'res', '1')
        life.res = true
      end
    end
    if #batch > 0 then
      call('RPUSH', tag .. ':resl', exp .. '\0' .. table.concat(batch, '\0'))
      resl_expire()
    end
    if #z > 0 then
      call('ZADD', tag .. ':resx', unpack(z))
      resx_expire()
    end
  end
  if life.res then
    local bare = {}
    for x, id in ipairs(done) do
      if not (res and res[x]) then bare[#bare + 1] = id end
    end
    life_res_forget(bare)
  end
  if life.ev then
    -- (ev_publish's format, built here in one pass: a completion call
    -- publishes an event per job. The pieces go to one table.concat: a
    -- Lua string costs its every byte when it is made, as it is hashed.)
    local mid, parts, k = '\0' .. dec(life_now()) .. '\0', {}, 0
    for x, id in ipairs(done) do
      local r = res and res[x]
      parts[k + 1] = 'completed\0'
      parts[k + 2] = id
      parts[k + 3] = mid
      if r then
        local n = #r
        local ls = life_lens[n]
        if not ls then
          ls = '1\0' .. dec(n) .. '\0'
          life_lens[n] = ls
        end
        parts[k + 4] = ls
        parts[k + 5] = r
        k = k + 5
      else
        parts[k + 4] = '0\0000\0' -- "0", NUL, "0", NUL: no result
        k = k + 4
      end
    end
    publish_wake(tag .. ':events', table.concat(parts))
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
  local p = call('HGET', tag .. ':progress', id)
  local res, fin, pct, pb = nil, 0, -1, nil
  local t = life_now()
  -- (A generated id's result is in its chunk, or, kept for a retention of
  -- its own, in T:results: the later one, if both.)
  local c = rec_chunk(id)
  for _, key in ipairs({c and tag .. ':res:' .. c, tag .. ':results'}) do
    local v = key and call('HGET', key, id)
    local z = v and string.find(v, '\0', 1, true)
    local y = z and string.find(v, '\0', z + 1, true)
    if y and (tonumber(string.sub(v, z + 1, y - 1)) or 0) > t then
      local f = tonumber(string.sub(v, 1, z - 1)) or 0
      if not res or f > fin then res, fin = string.sub(v, y + 1), f end
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
