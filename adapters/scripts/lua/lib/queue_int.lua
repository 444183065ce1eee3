-- queue_int.lua -- included by queue scripts (--#include queue_int): int(v)
-- reads an integer field of a record fleet wrote, and refuses anything
-- else with FLEET_EPROTO rather than computing with garbage; HASH_MARK,
-- dec(n), presized(n) and claims_put() below.
--#include wake
-- int(v [, what, pat]): the integer the string v holds, when its digits
-- (the capture of `pat`: by default an optional sign, then the digits) are
-- 1 to 18; else the error "FLEET_EPROTO <what> is not an integer" (what:
-- "job field" by default).
local function int(v, what, pat)
  local d = type(v) == 'string' and string.match(v, pat or '^%-?(%d+)$')
  if not d or #d > 18 then
    error({err = 'FLEET_EPROTO ' .. (what or 'job field') ..
                 ' is not an integer'})
  end
  return tonumber(v)
end

-- The hashes written per job (jobs, claims, done) hold the field "" with
-- HASH_MARK (lib/hash_mark.lua); the writes that add jobs to them
-- (enqueue, claim, a kept completion) write it too.
--#include hash_mark
-- A number given to redis.call() as a string: Redis 7.0 spells a Lua
-- number argument with "%.17g", a floating-point formatting that costs
-- several times an integer's, so the scripts' calls pass dec(n).
local function dec(n) return string.format('%d', n) end

-- A table with room for at least n elements in its array part, all nil
-- until set. A table filled one element at a time grows at 1, 2, 4, 8,
-- ... elements, a resize and a copy each; a constructor of k nils sizes
-- it once, for about what setting k elements costs. Filled from 1 on
-- without a gap, # and ipairs see it as they see a table made with {}.
local function presized(n)
  if n <= 2 then
    return {}
  elseif n <= 8 then
    return {nil, nil, nil, nil, nil, nil, nil, nil}
  elseif n <= 32 then
    return {nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil}
  elseif n <= 64 then
    return {nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
  elseif n <= 128 then
    return {nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
            nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
  end
  return {}
end

-- Writes claims (`claims`: the mark, then id, value pairs) to T:claims of
-- the queue `tag`, and lowers T:recover_at to `deadline`, the earliest
-- deadline among them, when it is later: recovery reads T:claims only once
-- recover_at has passed.
local function claims_put(tag, claims, deadline)
  redis.call('HSET', tag .. ':claims', unpack(claims))
  local ra = redis.call('GET', tag .. ':recover_at')
  if not ra or deadline < tonumber(ra) then
    redis.call('SET', tag .. ':recover_at', dec(deadline))
  end
end

-- Where a job's record is (docs/queue.md, "Keys"): a job whose id fleet
-- generated (digits only, which a given id never is) has its record in
-- the chunk T:recs:<its id without the last three digits> ("0" below
-- 1000), a hash of up to 1000 consecutive ids; a given id's record is in
-- T:jobs. With one hash for every record, each lookup went to a random
-- place in a table as big as the queue: at a million pending jobs they
-- missed the CPU's caches, and the queue processed 22% fewer jobs/s than
-- at a thousand. Enqueues write the newest chunk and claims read the
-- oldest, whatever the length of the queue.
-- rec_chunk(id): the chunk's number as a string, or false for T:jobs.
local function rec_chunk(id)
  if string.find(id, '%D') then return false end
  local c = string.sub(id, 1, -4)
  return c == '' and '0' or c
end

local function rec_hash(tag, chunk)
  return chunk and tag .. ':recs:' .. chunk or tag .. ':jobs'
end

local function rec_key(tag, id) return rec_hash(tag, rec_chunk(id)) end

-- The number of the chunk of generated id (sequence number) seq.
local function seq_chunk(seq) return (seq - seq % 1000) / 1000 end

-- Calls fn(hash, i, j) for each run ids[i..j] of ids whose records are in
-- the same hash.
local function rec_runs(tag, ids, fn)
  local i, n = 1, #ids
  while i <= n do
    local c = rec_chunk(ids[i])
    local j = i
    while j < n and rec_chunk(ids[j + 1]) == c do j = j + 1 end
    fn(rec_hash(tag, c), i, j)
    i = j + 1
  end
end

-- The positions in ids (from `from` on) of the ids of each chunk: returns
-- by (chunk or '' for T:jobs -> positions) and the chunks in the order
-- first met (false: T:jobs). When every id is a number (one find over
-- them all tells), an id's chunk is its digits but the last three, and
-- an id in the chunk of the one before it is placed without a lookup: the
-- ids of a batch come in runs of one chunk (a group's come from its
-- block, lib/queue_add.lua).
local function recs_by_chunk(ids, from)
  local by, cs = {}, {}
  local digits = not string.find(table.concat(ids, '', from), '%D')
  local sub = string.sub
  local prev, pb -- the chunk of the id before, and its positions
  for i = from, #ids do
    local c
    if digits then
      c = sub(ids[i], 1, -4)
      if c == '' then c = '0' end
    else
      c = rec_chunk(ids[i])
    end
    if c == prev and pb then
      pb[#pb + 1] = i
    else
      local key = c or ''
      local b = by[key]
      if not b then
        b = {}
        by[key] = b
        cs[#cs + 1] = c
      end
      b[#b + 1] = i
      prev, pb = c, b
    end
  end
  return by, cs
end

-- The ids at positions b (ascending), unpacked: those of one run without
-- a copy.
local function recs_unpack(ids, b)
  local n = #b
  if b[n] - b[1] + 1 == n then return unpack(ids, b[1], b[n]) end
  local w = {}
  for x = 1, n do w[x] = ids[b[x]] end
  return unpack(w)
end

-- The records of ids (false or nil where there is none), in their order.
-- One HMGET of the first id's hash reads a batch in one chunk; only the ids
-- it does not find are placed one by one (the batch holds given ids, or
-- names jobs that are gone). A batch whose last id is in another chunk
-- than its first (it crossed into the next chunk, or holds the jobs of
-- several groups: lib/queue_add.lua) is read by chunk at once, one HMGET
-- each. A hash of another type (written by hand) holds no record fleet can
-- read: its ids read as missing, and a claim moves them aside
-- (lib/queue_claim.lua).
local function recs_get(tag, ids)
  local n = #ids
  if n == 0 then return {} end
  local c1 = rec_chunk(ids[1])
  local r, from = {}, 1
  if n == 1 or rec_chunk(ids[n]) == c1 then
    r = redis.pcall('HMGET', rec_hash(tag, c1), unpack(ids))
    if r.err then r = {} end
    local all = true
    for i = 2, n do
      if not r[i] then
        all = false
        break
      end
    end
    if all then return r end
    from = 2
  end
  -- The others by the hash that holds them: one HMGET each.
  local by, cs = recs_by_chunk(ids, from)
  for _, c in ipairs(cs) do
    if from == 1 or c ~= c1 then
      local b = by[c or '']
      local got = redis.pcall('HMGET', rec_hash(tag, c),
                              recs_unpack(ids, b))
      if not got.err then
        for x = 1, #b do r[b[x]] = got[x] end
      end
    end
  end
  return r
end

-- Writes records: kv holds id, record pairs. The mark goes with every
-- write (HASH_MARK).
local function recs_set(tag, kv)
  local ids = {}
  for k = 1, #kv, 2 do ids[#ids + 1] = kv[k] end
  rec_runs(tag, ids, function(h, i, j)
    local w = {'', HASH_MARK}
    for k = 2 * i - 1, 2 * j do w[#w + 1] = kv[k] end
    redis.call('HSET', h, unpack(w))
  end)
end

-- Deletes chunk h when it holds no record (its mark only). A hash
-- without the mark, or a key of another type (written by hand), is never
-- deleted here.
local function rec_drop_empty(h)
  if redis.pcall('HLEN', h) == 1 and redis.call('HEXISTS', h, '') == 1 then
    redis.call('DEL', h)
  end
end

-- Deletes the records of ids, and a chunk left with no record once the
-- sequence has moved past it. The chunk enqueues write (the one of T:seq)
-- stays, even empty: a queue drained at each job at low rates would
-- otherwise delete and create it at every job; the enqueue that starts
-- the next chunk deletes it if it is still empty (queue_add). As
-- recs_get, one HDEL for a batch in one chunk (it deleted as many fields
-- as there are ids); a batch that is not all in its first id's chunk is
-- deleted from its last id's too (a batch across two chunks), and what is
-- left by chunk, one HDEL each. A key of another type holds none of them: it is
-- left as it is, so that a script deleting records never fails after it
-- wrote.
local function recs_del(tag, ids)
  local n = #ids
  if n == 0 then return end
  local top -- the chunk of T:seq, read once
  -- Deletes the ids from the chunk c (false: T:jobs); returns how many.
  local function del_from(c, del)
    local h = rec_hash(tag, c)
    local k = redis.pcall('HDEL', h, unpack(del))
    if type(k) ~= 'number' then return 0 end
    if c then
      top = top or
              seq_chunk(tonumber(redis.call('GET', tag .. ':seq') or '0') or 0)
      if tonumber(c) < top then rec_drop_empty(h) end
    end
    return k
  end
  local c = rec_chunk(ids[1])
  local k = del_from(c, ids)
  if k == n then return end
  -- A batch across two chunks: the last id's holds the rest (the jobs of a
  -- few groups come from blocks side by side, lib/queue_add.lua).
  local cl = rec_chunk(ids[n])
  if cl ~= c then
    k = k + del_from(cl, ids)
    if k == n then return end
  end
  -- The others by the chunk that holds them: one HDEL each.
  local by, cs = recs_by_chunk(ids, 2)
  for _, ci in ipairs(cs) do
    if ci ~= c and ci ~= cl then
      local b, del = by[ci or ''], {}
      for x = 1, #b do del[x] = ids[b[x]] end
      del_from(ci, del)
    end
  end
end
