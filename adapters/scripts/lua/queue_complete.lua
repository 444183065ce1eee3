-- queue_complete.lua -- completes claims still held (lib/queue_complete.lua
-- does it, shared with queue_complete_claim.lua): each claim is dropped and
-- counted; with keep_count 0 the job's records go too, else the done hash
-- gets "<now>\0<claim>" and the completed list the id, and the kept ones are
-- trimmed to keep_count and keep_s, up to 1000 older ones per call. A
-- completion with a result keeps it (lib/queue_life.lua), and "completed"
-- events are published while a subscriber holds the lease.
-- KEYS[1]: the queue's hash tag "{prefix:queue}"; parts: claims, recs:<c>,
--   jobs, opts, info, errs, done, completed, stats, limits, grun, uniq,
--   unique:<key>, rttl, res:<c>, resc, results, resl, resx, events,
--   hist:m:<minute>, hist:d:<day> (lib/queue_hist.lua); with flows
--   (lib/queue_deps.lua): parent, deps, kids:<id>, and the parent's queue's.
-- ARGV[1]: keep_count; ARGV[2]: keep_s (0: no age bound); then id, token
--   per claim: the token alone, or with a result "<token>\0<ttl_ms>\0<result>"
--   (ttl_ms: the queue's retention, a job's own in rttl first).
-- Returns: {now_ms, codes}: codes holds a character per claim, in order:
--   1 completed, 2 that claim already ended, 0 stale, - no such job, 3
--   cancelled and 4 timed out (lib/queue_stop.lua). (One string, not a
--   number per claim: a reply element costs Redis about as much as a
--   claim's completion writes.)
local call = redis.call
local tag = KEYS[1]
--#include time
local now = now_ms()
--#include queue_int
--#include queue_trim
--#include queue_ended
--#include queue_freed
--#include queue_stop
--#include queue_complete

return complete(tonumber(ARGV[1]), tonumber(ARGV[2]), 3)
