-- queue_add_flow.lua -- adds a flow: a parent job that waits, out of the
-- pending sets, until its children ended, and its children, enqueued as
-- queue_enqueue.lua enqueues jobs, each linked to the parent
-- (lib/queue_deps.lua tells the keys; docs/queue.md, "Flows"). All or
-- nothing: a given id that exists already refuses the whole flow, with
-- nothing written. The children may be in the parent's queue or in others
-- whose keys this call may touch (one Redis, the memory backend, queues
-- of one Redis Cluster slot). Sets "deps" in T:limits of every queue it
-- touches, so children are never delivered to parked workers: they wake
-- them.
-- KEYS[1]: the parent queue's hash tag "{prefix:queue}"; KEYS[2..]: the
--   children's other queues' tags; parts: those of QUEUE_ENQUEUE, and
--   deps, kids:<id>, parent, stats.
-- ARGV[1]: 'f' (a child's death kills the parent) or 'i' (it counts as
--   done); ARGV[2..13]: the parent's 12 fields as QUEUE_ENQUEUE takes them
--   (run_at_ms, delay_ms, unique key and group empty or 0; its ext applies
--   as an enqueue's); then per
--   child, 13: the index in KEYS of its queue's tag (1: the parent's),
--   then its 12 fields.
-- Returns: {1, parent id, then each child's id in the order given}, or
--   {0, id} when a job with given id `id` exists already (nothing
--   written).
local call = redis.call
local tag = KEYS[1]
--#include queue_int
--#include fence
--#include queue_pend
--#include queue_add
--#include time
local now = now_ms()

local ptag, pid = KEYS[1], ARGV[2]
local nkids = (#ARGV - 13) / 13
-- Every given id is checked before anything is written.
if pid ~= '' and call('HEXISTS', rec_key(ptag, pid), pid) == 1 then
  return {0, pid}
end
-- The children by queue, in KEYS order: their fields copied into one
-- array per queue, as queue_add takes them, and their places in the
-- reply.
local groups, order = {}, {}
for c = 1, nkids do
  local a = 14 + 13 * (c - 1)
  local k = tonumber(ARGV[a])
  local ctag = KEYS[k]
  local cid = ARGV[a + 1]
  if cid ~= '' and call('HEXISTS', rec_key(ctag, cid), cid) == 1 then
    return {0, cid}
  end
  local g = groups[k]
  if not g then
    g = {fields = {}, at = {}}
    groups[k] = g
    order[#order + 1] = k
  end
  for f = 1, 12 do g.fields[#g.fields + 1] = ARGV[a + f] end
  g.at[#g.at + 1] = c
end

-- The parent: written by queue_add as any job is (its record, its
-- options, and whatever its ext asks), held out of the pending sets.
local pr = queue_add(ptag, now, 1, ARGV, 2, true)
if pr[1] ~= 1 then return {0, pr[2]} end
pid = pr[2]
call('HSET', ptag .. ':limits', 'deps', '1')
call('HSET', ptag .. ':deps', pid, dec(nkids))
call('HINCRBY', ptag .. ':stats', 'waiting', 1)

-- The children, queue by queue: queue_add with `tag` the child's queue
-- (the libs it calls read `tag`), then their links.
local out, kids = {1, pid}, {'', ARGV[1]}
for _, k in ipairs(order) do
  local ctag, g = KEYS[k], groups[k]
  call('HSET', ctag .. ':limits', 'deps', '1')
  tag = ctag
  local r = queue_add(ctag, now, #g.at, g.fields, 1)
  tag = ptag
  local links = {}
  for x, c in ipairs(g.at) do
    local cid, ix = r[2 * x], dec(c)
    out[2 + c] = cid
    links[#links + 1] = cid
    links[#links + 1] = ptag .. '\0' .. pid .. '\0' .. ix
    kids[#kids + 1] = ix
    kids[#kids + 1] = 'w\0' .. ctag .. '\0' .. cid .. '\0'
  end
  call('HSET', ctag .. ':parent', unpack(links))
end
call('HSET', ptag .. ':kids:' .. pid, unpack(kids))
return out
