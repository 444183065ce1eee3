-- pool_dispatch.lua -- admits jobs and assigns each to the worker the caller
-- chose by consistent hashing over the membership it read, in one step: of
-- two dispatches of one key, exactly one passes. One call carries the
-- dispatches a client made in one loop phase, each handled as if alone, in
-- order; the writes of all of them go in one command per hash, per worker
-- and per receiving node. A fenced op (adapters/backend.h): its last ARGV
-- is the failover epoch.
-- KEYS[1]: the pool's hash tag. Parts: jobs, pay, disp, wj:<worker>,
--          fence, wnode, id:<node>, nodes, rev, life, ev:<node> (and those
--          of pool_int's reap).
-- ARGV[1..3]: the dispatching node's id, its instance nonce, and the token
--       of a start result it handled from its wake-up message ("0":
--       none; src/pool/pool_events.c): that result is taken from the head
--       of the node's event list (ev:<node>), as the node's read would
--       take it, so that the node need not read.
-- ARGV[4..]: six per job: job key, payload, the membership revision the
--       choice was made on, the chosen worker, the dispatching node
--       (which gets the start's result), the most jobs the pool holds (0:
--       no limit).
-- ARGV[#ARGV]: the failover epoch, which the adapter appends (lib/fence.lua).
-- Returns: two integers, then two per job, in order. First: 1 when the
--   start result was taken (else 0: none asked, or not at the head: a
--   read took it), and 1 when events are left in the node's list, else
--   0; or 0, -1 when another live instance holds the node's id (nothing
--   taken). Per job: {1, token} admitted; {0, 0} the key is in the pool
--   already; {-1, 0} the membership changed, or the chosen worker's node
--   is gone (read it again and retry: a key already in the pool is told
--   then); {-2, 0} the pool holds its most jobs.
--#include pool_int
--#include pool_disp
local n = math.floor((#ARGV - 4) / 6)
if n < 1 or #ARGV ~= 6 * n + 4 then
  error({err = 'FLEET_EPROTO pool_dispatch takes six arguments per job'})
end
disp_start()
-- The start result the dispatching node asks to take, first: a start of
-- the node's own worker admitted below then finds its list empty.
local out, take = {0, 0}, ARGV[3] ~= '0'
-- The revision, T:life and, with a take, the node's id lease in one read.
local pre = pool_read(take and {':rev', ':id:' .. ARGV[1]} or {':rev'})
cur = tonumber(pre[1] or '0')
if take then
  out[1], out[2] = take_head(ARGV[1], ARGV[2], 'r', ARGV[3], pre[2])
end
for i = 1, n do
  local c, t = admit(3 + 6 * (i - 1))
  out[2 * i + 1], out[2 * i + 2] = c, t
end
flush(true)
return out
