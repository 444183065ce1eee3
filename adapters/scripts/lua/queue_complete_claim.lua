-- queue_complete_claim.lua -- a worker's round trip: claims up to n jobs as
-- queue_claim.lua does, then completes claims as queue_complete.lua does,
-- sharing their code (lib/queue_claim.lua, lib/queue_complete.lua). The claim
-- goes first: it raises only before it writes, so a job fleet cannot read
-- (FLEET_EPROTO) leaves nothing written, the completions included, and they
-- can be sent again alone. A fenced op (adapters/backend.h): its last ARGV is
-- the failover epoch.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: those of both.
-- ARGV[1]: n (0..1000); ARGV[2]: claim_ttl_ms; ARGV[3]: keep_count;
--   ARGV[4]: keep_s (0: no age bound); ARGV[5], ARGV[6]: the worker id to
--   park ('' for none) and the ms a job delivered to it is claimed for, as
--   for queue_claim.lua; then id, token per claim to complete (a token
--   may carry a result, as for queue_complete.lua); last,
--   the failover epoch, which the adapter appends (lib/fence.lua).
-- Returns: {the reply of queue_claim.lua, the reply of queue_complete.lua}.
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
--#include queue_int
--#include fence
--#include queue_rec
--#include queue_pend
--#include queue_freed
--#include queue_trim
--#include queue_ended
--#include queue_stop
--#include queue_claim
--#include queue_complete

local claimed = claim(tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[5], ARGV[6],
                      7)
return {claimed, complete(tonumber(ARGV[3]), tonumber(ARGV[4]), 7)}
