-- queue_claim.lua -- moves due delayed jobs to pending, then claims up to n
-- pending jobs: highest priority first, oldest first within a priority
-- (lib/queue_claim.lua does it, shared with queue_complete_claim.lua). Moves
-- up to 1000 due delayed jobs; each claimed job gets a new fencing token, one
-- more attempt and the deadline now + claim_ttl_ms (the claims hash gets
-- "<token>\0<attempt>\0<deadline>"). While the queue is paused
-- (queue_admin_pause.lua) it claims and promotes nothing. A fenced op
-- (adapters/backend.h): its last ARGV is the failover epoch.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: recs:<c>, jobs, opts,
--   pending, pending:prio, delayed, claims, recover_at, seq, fence,
--   parked, jobs:wake, limits, rl, groups, gp:<g>, gz:<g>, gweight, ghold,
--   grun, grl:<g>, grn, grot, uniq, unique:<key>; with flows, for
--   a job moved aside (lib/queue_deps.lua): parent, deps, kids:<id>, info,
--   dead, stats, and the parent's queue's.
-- ARGV[1]: n (0..1000; 0 only promotes due delayed jobs).
-- ARGV[2]: claim_ttl_ms.
-- ARGV[3], ARGV[4] (optional): the worker id to park when fewer than n
--   jobs are pending ('' or absent: none), and the ms a job delivered to
--   it is claimed for (lib/queue_claim.lua: parking): parked gets
--   id -> "<n - claimed>:<ttl>"; with n jobs claimed it is unparked.
-- ARGV[#ARGV]: the failover epoch, which the adapter appends (lib/fence.lua).
-- Returns: {now_ms, deadline_ms, next_run_at_ms (-1: none), pending_left,
--   retry_at (0: none; -1: when a running job finishes; else unix ms: a
--   flow limit held the claim back, lib/queue_claim.lua), token0, count,
--   stride, runs, then per job claimed (count of them) its id and record,
--   and with stride 3 its group element ('': none; a run deadline follows
--   the group after a NUL, lib/queue_stop.lua)}: the k-th job's fencing
--   token is token0 + k; with stride 2, runs gives the jobs' groups,
--   "<n>\0<group>" per run of n jobs in order, joined by NULs ('': no
--   group); the job record as it is stored,
--   "<attempts>\0<max_attempts>\0<created_ms>\0<type>\0<payload>" (empty
--   numbers: 0 and 3; docs/queue.md), which the client splits; the attempt
--   the claim makes is the record's attempts + 1; then id, reason, 0 per
--   pending or due job moved to dead. (Stride 3 only when a job of the
--   claim may have a run deadline: a reply element costs Redis about as
--   much as a job's record read.)
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
--#include queue_int
--#include fence
--#include queue_rec
--#include queue_pend
--#include queue_stop
--#include queue_claim

local wid, dttl
if #ARGV >= 5 then wid, dttl = ARGV[3], ARGV[4] end
return claim(tonumber(ARGV[1]), tonumber(ARGV[2]), wid, dttl)
