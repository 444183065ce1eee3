/* ops/queue.h -- the backend ops of the queue primitive, XX(ID, name, command)
 * as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV and reply.
 *
 * Every queue op takes one key, KEYS[1], the queue's hash tag
 * "{<prefix>:<queue>}"; each key it touches is that tag followed by a
 * suffix (docs/queue.md lists the schema), so one script touches one
 * cluster slot. Times are ms on the backend clock (TIME). Integers travel
 * as decimal strings. An id, a type and a token are strings; a token is
 * the decimal fencing token the claim returned.
 *
 * QUEUE_ENQUEUE (which claims jobs for parked workers), QUEUE_CLAIM and
 * QUEUE_COMPLETE_CLAIM are fenced ops: each takes one ARGV more than
 * listed here, last, the failover epoch, which the adapter appends when it
 * writes the command (adapters/backend.h, "Fenced ops"); claim tokens come
 * from T:fence through lib/fence.lua, so that they never repeat or go back
 * across a failover.
 *
 * Per-claim result codes of the batch ops: 1 done, 2 that claim already
 * ended (completed, failed or released with this token), 0 stale (the job
 * is not held with this token: recovered, re-claimed, or never claimed),
 * -1 no such job.
 *
 * Job data that fleet did not write (a field that is not an integer, a
 * malformed backoff) gives the error FLEET_EPROTO; a key of the wrong type
 * gives WRONGTYPE, as Redis does; either way the script wrote nothing.
 * QUEUE_CLAIM and QUEUE_RECOVER do not refuse for one job they cannot
 * read: they move it to dead (docs/queue.md, "Jobs fleet cannot read")
 * and end their reply with id, reason, 0 for it.
 *
 *   QUEUE_ENQUEUE  ARGV: n, then 10 per job: id ("" to generate one), type,
 *         payload, priority (-1000..1000), run_at_ms (0: none), delay_ms,
 *         max_attempts, backoff ("fixed|exp:<base_ms>:<max_ms>:<jitter>"),
 *         unique key ("" for none), unique_ttl_ms. A job runs at
 *         max(run_at_ms, now + delay_ms): delayed when that is in the
 *         future, else pending. Reply: {status, id} per job, flattened:
 *         status 1 added; 0 the id exists already, or the unique key is held
 *         (id is then the id it holds). Onto an empty queue, the new jobs
 *         of priority 0 that are due go first to the parked workers
 *         (T:parked, see QUEUE_CLAIM), claimed for them and published on
 *         their channels (docs/queue.md: delivery to idle workers).
 *         Publishes on the wake channel when it adds jobs nobody took to an
 *         empty pending set, or adds the earliest delayed job.
 *   QUEUE_CLAIM  ARGV: n (0..1000), claim_ttl_ms, and optionally a
 *         worker id and its delivery TTL in ms: the worker is parked (T:parked
 *         gets id -> "<n - claimed>:<ttl>") when fewer than n jobs were
 *         pending, else unparked. Moves up to 1000 due
 *         delayed jobs to pending, then claims up to n pending jobs (highest
 *         priority, then oldest first): each gets a new fencing token, one
 *         more attempt and the deadline now + claim_ttl_ms (the claims hash
 *         gets "<token>\0<attempt>\0<deadline>"). Reply: {now_ms,
 *         deadline_ms, next_run_at_ms (-1: no delayed job), pending_left,
 *         then id, record, token per job}: the job record as stored,
 *         "<attempts>\0<max_attempts>\0<created_ms>\0<type>\0<payload>"
 *         (empty numbers: 0 and 3), which the client splits; the claim's
 *         attempt is the record's attempts + 1; then id, reason, 0 per
 *         pending or due job moved to dead (a token is never 0).
 *   QUEUE_REFRESH  ARGV: claim_ttl_ms, then id, token per claim. Moves the
 *         deadline of each claim still held to now + claim_ttl_ms. Reply:
 *         {now_ms, deadline_ms, then 1 (refreshed) or 0 (stale) per claim}.
 *   QUEUE_COMPLETE  ARGV: keep_count, keep_s, then id, token per claim.
 *         Completes each claim still held: drops it and counts
 *         it; with keep_count 0 the job's records go, else the done hash
 *         gets "<now>\0<claim>" and the completed list the id; keeps
 *         at most keep_count completed job records, none older than keep_s
 *         seconds (0: no age bound), deleting up to 1000 older ones per
 *         call. Reply: {now_ms, then a result code per claim}.
 *   QUEUE_COMPLETE_CLAIM  ARGV: n, claim_ttl_ms, keep_count, keep_s,
 *         worker id ("" for none) and delivery TTL (as for QUEUE_CLAIM),
 *         then id, token per claim. A worker's round trip: QUEUE_CLAIM of n
 *         jobs, then QUEUE_COMPLETE of the claims, by the same code. The
 *         claim goes first and raises only before it writes: an error it
 *         raises leaves the claims not completed. Reply: {the QUEUE_CLAIM
 *         reply, the QUEUE_COMPLETE reply}.
 *   QUEUE_RELEASE  ARGV: id, token per claim. Puts each job still held back
 *         in pending at its place, without counting the attempt. Reply:
 *         {now_ms, then a result code per claim}.
 *   QUEUE_FAIL  ARGV: id, token, error, rnd (0..2^32-1, for the jitter),
 *         keep_count, keep_s (for dead jobs, as for QUEUE_COMPLETE). Records
 *         the error; the job is retried after its backoff (delayed) or,
 *         past max_attempts, dead. Reply: {1, run_at_ms} for a retry, {0, 0}
 *         when dead. Errors: FLEET_ENOTFOUND, FLEET_ESTALE, FLEET_EALREADY.
 *   QUEUE_RECOVER  ARGV: limit, keep_count, keep_s (dead jobs). Re-queues
 *         up to `limit` jobs whose claim deadline passed (dead past
 *         max_attempts), clearing their token. Reply: {now_ms, requeued,
 *         dead, next_deadline_ms (-1: nothing running), then id, reason, 0
 *         per claimed job moved to dead}.
 *   QUEUE_GET  ARGV: id. Reply: {state, attempts, max_attempts, priority,
 *         type, payload, last_error (nil: none), created_ms, run_at_ms,
 *         finished_ms, token} (0 for a time or token never set); a delayed
 *         job that is due reads as "pending". Error: FLEET_ENOTFOUND.
 *   QUEUE_CANCEL  ARGV: id. Deletes a pending or delayed job (and its
 *         unique key). Reply: 1. Errors: FLEET_ENOTFOUND, FLEET_EBUSY
 *         (running), FLEET_EALREADY (completed or dead).
 *   QUEUE_COUNTS  ARGV: none. Reply: {pending, delayed, running, completed,
 *         dead, completed_kept, dead_kept}: completed and dead count every
 *         job ever; due delayed jobs count as pending.
 *   QUEUE_LIST  ARGV: type, limit. Reply: {total, then up to `limit` ids}
 *         of the queued (pending or delayed) jobs of that type: pending
 *         first. Reads every queued job (no per-type index).
 *   QUEUE_PURGE  ARGV: "completed" or "dead", limit. Deletes up to `limit`
 *         of those job records, oldest first. Reply: {removed, left}.
 *
 * Admin ops (tools: the fleet CLI, the dashboard):
 *
 *   QUEUE_ADMIN_JOBS  ARGV: state ("pending", "delayed", "running",
 *         "completed", "dead"), cursor ("0" first), limit (1..1000), most
 *         payload bytes per job. Reply: {total in the state, next cursor
 *         ("0": no more), then id, type, attempts, max_attempts,
 *         created_ms, time (delayed: run at; running: deadline; completed,
 *         dead: finished; pending: 0), payload, last error ("": none) per
 *         job}. Pending in claim order; completed and dead newest first.
 *   QUEUE_ADMIN_RETRY  ARGV: id ("" for the oldest kept dead jobs), limit.
 *         Puts dead jobs back in pending with their attempts reset to 0,
 *         keeping their last error. Reply: {retried, dead kept left}.
 *         Errors: FLEET_ENOTFOUND, FLEET_EBUSY (the job is not dead).
 *   QUEUE_ADMIN_PAUSE  ARGV: "pause", "resume" or "status". While the key
 *         T:paused exists QUEUE_CLAIM and QUEUE_COMPLETE_CLAIM claim and
 *         promote nothing and answer pending_left 0 and no delayed job
 *         (and park no worker: pausing unparks them all);
 *         resuming publishes on the wake channel. Reply: {paused (1 or
 *         0), changed (1 or 0)}.
 */
#ifndef FLEET_OPS_QUEUE_H
#define FLEET_OPS_QUEUE_H

#define FLEET__OPS_QUEUE(XX)                                                   \
  XX(QUEUE_ENQUEUE, "queue_enqueue", NULL)                                     \
  XX(QUEUE_CLAIM, "queue_claim", NULL)                                         \
  XX(QUEUE_REFRESH, "queue_refresh", NULL)                                     \
  XX(QUEUE_COMPLETE, "queue_complete", NULL)                                   \
  XX(QUEUE_COMPLETE_CLAIM, "queue_complete_claim", NULL)                       \
  XX(QUEUE_RELEASE, "queue_release", NULL)                                     \
  XX(QUEUE_FAIL, "queue_fail", NULL)                                           \
  XX(QUEUE_RECOVER, "queue_recover", NULL)                                     \
  XX(QUEUE_GET, "queue_get", NULL)                                             \
  XX(QUEUE_CANCEL, "queue_cancel", NULL)                                       \
  XX(QUEUE_COUNTS, "queue_counts", NULL)                                       \
  XX(QUEUE_LIST, "queue_list", NULL)                                           \
  XX(QUEUE_PURGE, "queue_purge", NULL)                                         \
  XX(QUEUE_ADMIN_JOBS, "queue_admin_jobs", NULL)                               \
  XX(QUEUE_ADMIN_RETRY, "queue_admin_retry", NULL)                             \
  XX(QUEUE_ADMIN_PAUSE, "queue_admin_pause", NULL)

#endif /* FLEET_OPS_QUEUE_H */
