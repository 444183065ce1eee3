-- queue_add.lua -- included, after queue_int, by scripts that add jobs to a queue (--#include
-- queue_add): queue_enqueue.lua, and the cron scheduler's fire script, which
-- enqueues the job of a queue-targeted definition in the same call that
-- claims the occurrence (docs/cron_scheduler.md). One copy of the enqueue
-- rules (docs/queue.md, adapters/ops/queue.h: QUEUE_ENQUEUE).
-- queue_add(tag, now, n, A, base): adds the n jobs whose 12 fields each
--   (id, type, payload, priority, run_at_ms, delay_ms, max_attempts, backoff,
--   unique key, unique_ttl_ms, group, ext) start at A[base], to the queue of
--   hash tag `tag`, `now` being the server time in ms. Returns {status, id}
--   per job, flattened, as QUEUE_ENQUEUE does. A job of a group goes to
--   its group's pending set (lib/queue_flow.lua, which the script includes
--   with `tag` the queue's). `ext` holds the job's other options, '' when
--   it has none: items "<key>=<value>" separated by "\n" (ext_get below).
--   With `held` true the jobs are written (records, options, what their
--   ext asks) but go to no pending or delayed set and wake no one: a
--   flow's parent (queue_add_flow.lua), released by its last child.
--   Expects queue_int, fence and queue_flow. Item "u=1" of ext: the job
--   holds its unique key until it ends (lib/queue_unique.lua), its
--   unique_ttl_ms then a safety bound, 0 for none. Item "h=<headers>":
--   the job's headers, kept in its record (lib/queue_hdr.lua).
--#include queue_unique
-- queue_deliver(tag, now, list, lrec): claims jobs of `list` (ids whose
--   records are lrec[i], each new, pending at the default priority, added
--   to an empty queue) for the parked workers (lib/queue_claim.lua:
--   parking), first parked first, each up to its room, and publishes each
--   worker's jobs on its channel "<tag>:jobs:w:<wid>" as one message:
--   "<now>\0<deadline>\0", then per job "<#id>\0<id><#record>\0<record>
--   <token>\0" (docs/queue.md). A job is claimed only when its message
--   reached the worker (PUBLISH counted a subscriber): else it stays for
--   pending. Every parked worker it meets is unparked: one delivery per
--   park. Returns the index in `list` of the first job not delivered.
local function queue_deliver(tag, now, list, lrec)
  local call = redis.call
  local parked = call('HGETALL', tag .. ':parked')
  if #parked == 0 then return 1 end
  -- Every entry is read first. One fleet cannot read (a worker writes
  -- "<room>:<ttl_ms>") gets no job and goes with the others met: its
  -- worker parks itself again with its next claim. (An error here would
  -- come after the enqueue wrote T:seq.)
  local rooms, ttls = {}, {}
  for x = 1, #parked, 2 do
    local v = parked[x + 1]
    local room, ttl = string.match(v, '^(%d+):(%d+)$')
    if room and #room <= 9 and #ttl <= 9 then
      rooms[x], ttls[x] = tonumber(room), tonumber(ttl)
    else
      rooms[x], ttls[x] = 0, 0
    end
  end
  local n, given = #list, 0
  -- fence_next: lib/fence.lua, which the script includes.
  local token = fence_next(tag .. ':fence', n) - 1
  local claims, gone, first_deadline = {'', HASH_MARK}, {}, nil
  for x = 1, #parked, 2 do
    if given == n then break end
    gone[#gone + 1] = parked[x]
    local take = rooms[x]
    if take > n - given then take = n - given end
    local deadline = now + ttls[x]
    local tail = '\0' .. '1' .. '\0' .. dec(deadline)
    local msg = {dec(now), '\0', dec(deadline), '\0'}
    local toks = {}
    for i = given + 1, given + take do
      local rec = lrec[i]
      token = token + 1
      toks[i] = dec(token)
      msg[#msg + 1] = #list[i] .. '\0' .. list[i] .. #rec .. '\0' .. rec ..
                        toks[i] .. '\0'
    end
    if take > 0 and
        publish_wake(tag .. ':jobs:w:' .. parked[x], table.concat(msg)) > 0 then
      for i = given + 1, given + take do
        claims[#claims + 1] = list[i]
        claims[#claims + 1] = toks[i] .. tail
      end
      given = given + take
      if not first_deadline or deadline < first_deadline then
        first_deadline = deadline
      end
    end
  end
  call('HDEL', tag .. ':parked', unpack(gone))
  if given > 0 then claims_put(tag, claims, first_deadline) end
  return given + 1
end

-- The value of item `key` of a job's ext field (queue_add), nil when the
-- field has none.
local function ext_get(ext, key)
  if ext == '' then return nil end
  return string.match('\n' .. ext, '\n' .. key .. '=([^\n]*)')
end
--#include queue_hdr

local function queue_add(tag, now, n, A, base, held)
  local call = redis.call
  local pending = tag .. ':pending'
  local prio = tag .. ':pending:prio'
  local delayed = tag .. ':delayed'
  local PRIO_UNIT = 4398046511104 -- 2^42
  local fmt = string.format
  -- Ext item t: the job's maximum run time in ms (lib/queue_stop.lua),
  -- checked before anything is written.
  local tmo, tw = nil, {}
  -- Ext item h: the job's headers, in its record (lib/queue_hdr.lua).
  local hdr, now_s = nil, fmt('%d', now)
  for i = 0, n - 1 do
    local e = A[base + i * 12 + 11] or ''
    local hc = e ~= '' and hdr_created(ext_get(e, 'h'), now_s)
    if hc then
      hdr = hdr or {}
      hdr[i] = hc
    end
    local t = e ~= '' and ext_get(e, 't')
    if t then
      if not string.find(t, '^[1-9]%d?%d?%d?%d?%d?%d?%d?%d?%d?$') then
        error({err = 'FLEET_EINVAL ext item t (timeout_ms) is not a ' ..
                   'number from 1 to 9999999999'})
      end
      tmo = tmo or {}
      tmo[i] = t
    end
  end

  -- The generated ids of a group's jobs come from blocks of GROUP_BLOCK
  -- consecutive ids it holds (T:gids: group -> "<next>:<end>"), so that a
  -- group's jobs, claimed a turn at a time, have their records in one or
  -- two chunks (queue_int: rec_key) rather than one chunk each when many
  -- groups' jobs interleave: a claim reads, and a completion deletes, the
  -- records of a chunk with one command. The blocks come from T:seq, with
  -- the batch's own numbers, in one INCRBY.
  local GROUP_BLOCK = 100
  local need, gl = {}, {}
  for i = 0, n - 1 do
    local a = base + i * 12
    local g = A[a + 10]
    if A[a] == '' and g ~= '' then
      if not need[g] then
        need[g] = 0
        gl[#gl + 1] = g
      end
      need[g] = need[g] + 1
    end
  end
  local blocks, extra = {}, 0
  if #gl > 0 then
    local cur = call('HMGET', tag .. ':gids', unpack(gl))
    for x, g in ipairs(gl) do
      local nx, en = string.match(cur[x] or '', '^(%d+):(%d+)$')
      nx, en = tonumber(nx), tonumber(en)
      if nx and en and en - nx >= need[g] then
        blocks[g] = {nx, en}
      else
        -- A new run of whole blocks, after the batch's numbers.
        local k = math.ceil(need[g] / GROUP_BLOCK) * GROUP_BLOCK
        blocks[g] = {-(extra + 1), k} -- (placed below)
        extra = extra + k
      end
    end
  end
  local seq = call('INCRBY', tag .. ':seq', n + extra) - n - extra
  if #gl > 0 then
    local w = {}
    for _, g in ipairs(gl) do
      local bk = blocks[g]
      if bk[1] < 0 then
        local first = seq + n - bk[1] -- seq + n + offset + 1
        bk[1], bk[2] = first, first + bk[2]
      end
      w[#w + 1] = g
      w[#w + 1] = fmt('%d', bk[1] + need[g]) .. ':' .. fmt('%d', bk[2])
    end
    call('HSET', tag .. ':gids', unpack(w))
  end
  -- The "\0<created_ms>\0" middle of every record of this call.
  local created = '\0' .. now_s .. '\0'
  local opts, list, zp, zd = {}, {}, {}, {}
  -- The records by the hash that holds them (queue_int: rec_key), each
  -- list starting with HASH_MARK: a generated id's chunk follows from seq
  -- (chunk_h, until seq reaches chunk_end), a given id's is looked up.
  local hashes, by_hash = {}, {}
  local chunk_h, chunk_end = nil, -1
  local lrec = {} -- the record of each job of list
  local seen = {}
  local earliest, wake, main_empty
  local out = {}
  local sets, order = {}, {} -- by group: {list, zp}
  local until_done = {} -- id, key per job holding its key until it ends
  local rttl = {} -- id, result retention (ms) of the jobs with one
  for i = 0, n - 1 do
    local a = base + i * 12
    local id = A[a]
    seq = seq + 1
    local status, h = 1, nil
    local gb = id == '' and blocks[A[a + 10]]
    if gb then
      -- A group's generated id, from its block.
      id = fmt('%d', gb[1])
      gb[1] = gb[1] + 1
      h = rec_key(tag, id)
    elseif id == '' then
      -- Generated ids are digits, which given ids never are: always new.
      id = fmt('%d', seq)
      if seq >= chunk_end then
        local c = seq_chunk(seq)
        chunk_end = (c + 1) * 1000
        chunk_h = rec_hash(tag, fmt('%d', c))
        -- The first id of a chunk: the chunk before is no longer written,
        -- and goes if its jobs are all gone (recs_del kept it).
        if seq % 1000 == 0 then
          rec_drop_empty(rec_hash(tag, fmt('%d', c - 1)))
        end
      end
      h = chunk_h
    elseif seen[id] or call('HEXISTS', rec_key(tag, id), id) == 1 then
      status = 0
    end
    local unique = A[a + 8]
    if status == 1 and unique ~= '' then
      local ukey = tag .. ':unique:' .. unique
      local ttl = A[a + 9]
      local held
      if ttl == '0' then
        held = call('SET', ukey, id, 'NX')
      else
        held = call('SET', ukey, id, 'NX', 'PX', ttl)
      end
      if not held then
        status = 0
        id = call('GET', ukey) or id
      elseif A[a + 11] ~= '' and ext_get(A[a + 11], 'u') == '1' then
        until_done[#until_done + 1] = id
        until_done[#until_done + 1] = unique
      end
    end
    if status == 1 then
      seen[id] = true
      local max = A[a + 6]
      if max == '3' then max = '' end
      local rec = '\0' .. max .. (hdr and hdr[i] or created) .. A[a + 1] ..
                    '\0' .. A[a + 2]
      h = h or rec_key(tag, id)
      local kv = by_hash[h]
      if not kv then
        kv = {'', HASH_MARK}
        by_hash[h] = kv
        hashes[#hashes + 1] = h
      end
      kv[#kv + 1] = id
      kv[#kv + 1] = rec
      local p, backoff, g = A[a + 3], A[a + 7], A[a + 10]
      if p == '0' then p = '' end
      if backoff == 'exp:1000:3600000:20' then backoff = '' end
      local run_at = tonumber(A[a + 4])
      local due = now + tonumber(A[a + 5])
      if due > run_at then run_at = due end
      -- A pending job's group is the set it waits in: the options keep it
      -- only for a job that has options anyway, or is delayed (its
      -- promotion needs it). (lib/queue_flow.lua: what each job costs.)
      local other = p ~= '' or backoff ~= '' or unique ~= ''
      -- A result retention of its own (ext "r", lib/queue_life.lua).
      local rt = ext_get(A[a + 11], 'r')
      if rt then
        rttl[#rttl + 1] = id
        rttl[#rttl + 1] = rt
      end
      if g ~= '' and (other or run_at > now) then
        opts[#opts + 1] = id
        opts[#opts + 1] = p .. '\0' .. backoff .. '\0' .. unique .. '\0' .. g
      elseif other then
        opts[#opts + 1] = id
        opts[#opts + 1] = p .. '\0' .. backoff .. '\0' .. unique
      end
      if run_at > now then
        zd[#zd + 1] = run_at
        zd[#zd + 1] = id
        if earliest == nil or run_at < earliest then earliest = run_at end
      elseif g ~= '' then
        local st = sets[g]
        if not st then
          st = {{}, {}}
          sets[g] = st
          order[#order + 1] = g
        end
        if p == '' then
          st[1][#st[1] + 1] = id
        else
          st[2][#st[2] + 1] = (1000 - tonumber(p)) * PRIO_UNIT + seq
          st[2][#st[2] + 1] = id
        end
      elseif p == '' then
        list[#list + 1] = id
        lrec[#list] = rec
      else
        zp[#zp + 1] = (1000 - tonumber(p)) * PRIO_UNIT + seq
        zp[#zp + 1] = id
      end
    end
    if status == 1 and tmo and tmo[i] then
      tw[#tw + 1] = id
      tw[#tw + 1] = tmo[i]
    end
    out[#out + 1] = status
    out[#out + 1] = id
  end
  if #tw > 0 then
    -- (Before the delivery's check: jobs with a timeout go to claims,
    -- which set their run deadlines.)
    call('HSET', tag .. ':timeout', unpack(tw))
    call('HSET', tag .. ':limits', 'tmo', '1')
  end
  if held then list, zp, zd, order, earliest = {}, {}, {}, {}, nil end
  if #hashes == 0 then return out end
  unique_hold(tag, until_done)
  -- Wake the workers when jobs may be claimable that were not: the pending
  -- jobs were none, or a delayed job is now the earliest.
  if #list > 0 or #zp > 0 then
    -- (A list or zset exists only while it holds something.)
    wake = call('EXISTS', pending, prio) == 0
    main_empty = wake
  end
  if earliest and not wake then
    local first = call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
    wake = not first[2] or earliest < tonumber(first[2])
  end
  -- Onto an empty queue, jobs of the default priority go first to the
  -- parked workers, claimed for them (queue_deliver): those no worker
  -- takes are pending, and wake the workers.
  local first = 1
  if wake and #list > 0 and #zp == 0 and
      call('EXISTS', tag .. ':limits', tag .. ':groups') == 0 then
    -- (Not under flow control: the claim script applies the limits.)
    first = queue_deliver(tag, now, list, lrec)
    if first > #list then
      -- All delivered: a wake-up only for a delayed job now the earliest.
      wake = false
      if earliest then
        local f = call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
        wake = not f[2] or earliest < tonumber(f[2])
      end
    end
  end
  for _, hh in ipairs(hashes) do call('HSET', hh, unpack(by_hash[hh])) end
  if #opts > 0 then call('HSET', tag .. ':opts', unpack(opts)) end
  if #rttl > 0 then
    call('HSET', tag .. ':rttl', unpack(rttl))
    call('HSET', tag .. ':limits', 'rttl', '1')
  end
  if first <= #list then
    call('RPUSH', pending, unpack(list, first))
  end
  if #zp > 0 then call('ZADD', prio, unpack(zp)) end
  -- The jobs without a group join the rotation when groups are in it.
  if main_empty and (first <= #list or #zp > 0) and
      call('EXISTS', tag .. ':groups') == 1 and
      call('HSETNX', tag .. ':grot', '', '1') == 1 then
    call('RPUSH', tag .. ':groups', '')
  end
  for _, g in ipairs(order) do
    if pend_add(g, sets[g][1], sets[g][2]) then wake = true end
  end
  if #zd > 0 then call('ZADD', delayed, unpack(zd)) end
  if wake then publish_wake(tag .. ':jobs:wake', 'wake') end
  return out
end
