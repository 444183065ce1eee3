-- queue_remove.lua -- removes a whole queue (docs/queue.md, "Removing a
-- queue"): every key of its tag in the key schema, found from what the
-- queue holds (its fixed parts; the record chunks of every id it names
-- and of its sequence, all of them while the sequence is below
-- REMOVE_ALL_CHUNKS chunks; its groups' sets and windows, its parents'
-- children, its results' chunks, the unique keys its jobs name, its
-- history's hashes of the minutes and days it keeps), but
-- T:fence: the fencing counter stays, so that a claim of a queue made
-- again under the same name never gets a token of a claim made before;
-- T:partitions goes only when it records one partition.
-- Without force it refuses while jobs are pending, delayed, running or
-- waiting for their children. With force, the queue's flow children whose
-- parents are in another queue count as dead for them (lib/queue_deps.lua)
-- before they go; the workers holding claims of the queue find them gone
-- (their heartbeats stale, their completions answered "no such job").
-- It reads every job id the queue holds, in one script: it holds the
-- server in proportion to the queue's jobs.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: every one of
--   docs/queue.md's key schema but fence; with flows, the parents'
--   queues' parts of lib/queue_deps.lua.
-- ARGV[1]: force ("1") or not ("0").
-- Returns: {keys deleted, jobs pending, delayed, running or waiting that
--   went with it}.
-- Errors: FLEET_ENOTFOUND (no such queue: none of the keys a queue always
--   has exists, nor a partition count of 1), FLEET_EBUSY (jobs are pending, delayed, running or
--   waiting, and ARGV[1] is not "1"), FLEET_EINVAL (ARGV[1] is neither).
local call = redis.call
local tag = KEYS[1]
--#include queue_int
--#include queue_rec
--#include queue_deps

-- Chunks of records deleted one by one when the sequence is below this
-- many; above, only those of the ids the queue names.
local REMOVE_ALL_CHUNKS = 10000
-- Items per command (unpack's limit is well above it).
local BATCH = 1000

local force = ARGV[1]
if force ~= '0' and force ~= '1' then
  return redis.error_reply('FLEET_EINVAL force is "0" or "1"')
end
local function k(part) return tag .. ':' .. part end
-- The fields (v 0) or values (v 1) of hash h (HGETALL: the memory
-- backend has no HKEYS).
local function hpart(h, v)
  local all, out = call('HGETALL', k(h)), {}
  for i = 1 + v, #all, 2 do out[#out + 1] = all[i] end
  return out
end

-- A partition count recorded as 1 (fleet queue create --partitions 1) is
-- this queue's own, and goes with it; a larger one belongs to the
-- partitioned queue whose partition 0 this is, and stays (that queue is
-- removed by fleet_queue_remove() of its partitioned handle).
local one = call('GET', k('partitions')) == '1'
-- The parts a queue always has one of (fleet_client_scan_names() finds a
-- queue by them), and its groups.
if call('EXISTS', k('pending'), k('pending:prio'), k('delayed'), k('claims'),
        k('stats'), k('completed'), k('dead'), k('paused'), k('groups'),
        k('seq')) == 0 then
  if one then return {call('UNLINK', k('partitions')), 0} end
  return redis.error_reply('FLEET_ENOTFOUND no queue ' .. tag)
end

local groups = {}
local function group(g) if g ~= '' then groups[g] = true end end
for _, g in ipairs(call('LRANGE', k('groups'), 0, -1)) do group(g) end
for _, h in ipairs({'grot', 'grn', 'grun', 'ghold', 'gweight', 'gids'}) do
  for _, g in ipairs(hpart(h, 0)) do group(g) end
end
local grouped = 0
for g in pairs(groups) do
  grouped = grouped + call('LLEN', k('gp:' .. g)) + call('ZCARD', k('gz:' .. g))
end
local waiting = tonumber(call('HGET', k('stats'), 'waiting') or '0') or 0
local jobs = call('LLEN', k('pending')) + call('ZCARD', k('pending:prio')) +
               grouped + call('ZCARD', k('delayed')) + call('HLEN', k('claims')) -
               call('HEXISTS', k('claims'), '') + math.max(waiting, 0)
if jobs > 0 and force ~= '1' then
  return redis.error_reply('FLEET_EBUSY queue has ' .. dec(jobs) ..
                             ' jobs pending, delayed, running or waiting')
end

-- Runs fn over `list` in slices of BATCH.
local function each(list, fn)
  for i = 1, #list, BATCH do
    fn({unpack(list, i, math.min(i + BATCH - 1, #list))})
  end
end

-- Children whose parents are in other queues count as dead for them.
if call('HEXISTS', k('limits'), 'deps') == 1 then
  local kids, all = {}, call('HGETALL', k('parent'))
  for i = 1, #all, 2 do
    if string.sub(all[i + 1], 1, #tag + 1) ~= tag .. '\0' then
      kids[#kids + 1] = all[i]
    end
  end
  each(kids, function(ids) deps_ended(ids, 'd') end)
end

local keys, seen = {}, {}
local function add(key)
  if not seen[key] then
    seen[key] = true
    keys[#keys + 1] = key
  end
end
for _, p in ipairs({'jobs', 'opts', 'info', 'errs', 'pending', 'pending:prio',
                    'delayed', 'claims', 'cancel', 'timeout', 'rundl',
                    'recover_at', 'done', 'completed', 'dead', 'stats', 'seq',
                    'gids', 'uniq', 'paused', 'parked', 'groups', 'grot',
                    'limits', 'rl', 'grn', 'grun', 'ghold', 'gweight', 'parent',
                    'deps', 'resc', 'results', 'resl', 'resx', 'rttl',
                    'progress', 'progx'}) do
  add(k(p))
end
for g in pairs(groups) do
  add(k('gp:' .. g))
  add(k('gz:' .. g))
  add(k('grl:' .. g))
end
if one then add(k('partitions')) end
for _, c in ipairs(call('ZRANGE', k('resc'), 0, -1)) do add(k('res:' .. c)) end
for _, id in ipairs(hpart('deps', 0)) do add(k('kids:' .. id)) end
for _, u in ipairs(hpart('uniq', 1)) do add(k('unique:' .. u)) end
for _, o in ipairs(hpart('opts', 1)) do
  local p, _, u = opts_split(o)
  if p and u then add(k('unique:' .. u)) end
end
-- The record chunks: of every id the queue names, and of the sequence.
local function ids_of(list)
  for _, id in ipairs(list) do
    local c = rec_chunk(id)
    if c then add(k('recs:' .. c)) end
  end
end
ids_of(call('LRANGE', k('pending'), 0, -1))
ids_of(call('LRANGE', k('completed'), 0, -1))
ids_of(call('LRANGE', k('dead'), 0, -1))
for _, z in ipairs({'pending:prio', 'delayed'}) do
  ids_of(call('ZRANGE', k(z), 0, -1))
end
for _, h in ipairs({'claims', 'done', 'opts', 'info', 'deps', 'parent',
                    'timeout'}) do
  ids_of(hpart(h, 0))
end
for g in pairs(groups) do
  ids_of(call('LRANGE', k('gp:' .. g), 0, -1))
  ids_of(call('ZRANGE', k('gz:' .. g), 0, -1))
end
-- The history's hashes (lib/queue_hist.lua) of every minute and day it
-- keeps, back from now: 1500 minutes (25 hours) and 33 days.
do
  local t = call('TIME')
  local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local m, d = math.floor(now_ms / 60000), math.floor(now_ms / 86400000)
  for i = 0, 1500 do add(k(string.format('hist:m:%d', m - i))) end
  for i = 0, 33 do add(k(string.format('hist:d:%d', d - i))) end
end
local top = seq_chunk(tonumber(call('GET', k('seq')) or '0') or 0)
if top < REMOVE_ALL_CHUNKS then
  for c = 0, top do add(k('recs:' .. dec(c))) end
else
  add(k('recs:' .. dec(top)))
end

local deleted = 0
each(keys, function(ks) deleted = deleted + call('UNLINK', unpack(ks)) end)
return {deleted, jobs}
