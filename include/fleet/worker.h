/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/worker.h -- a worker: claims jobs of one queue up to a concurrency,
 * hands each to a handler that finishes it later, keeps the claims alive
 * with heartbeats, recovers expired claims and wakes up on new jobs
 * without polling. */
#ifndef FLEET_WORKER_H
#define FLEET_WORKER_H

#include "fleet/common.h"
#include "fleet/queue.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a job was finished, as its done callback reports. */
typedef enum {
  FLEET_JOB_COMPLETE,
  FLEET_JOB_FAIL,
  FLEET_JOB_RELEASE
} fleet_job_action_t;

/* The handler, given at fleet_worker_start(): `job` is claimed for you. Finish
 * it exactly once, now or later (after your own asynchronous work on the loop),
 * with fleet_job_complete(), fleet_job_fail() or fleet_job_release(). `job` and
 * what it points to stay valid until its done callback returns (or, with
 * no done callback, until it is finished); `job->data` is yours. */
typedef void (*fleet_worker_handler_cb)(fleet_worker_t *w, fleet_job_t *job);

/* The claim of `job` is lost while the handler still has it: stop the work
 * if you can, since another worker may run the job. `status` is:
 *   FLEET_ETIMEDOUT  no heartbeat was confirmed before the claim's local
 *                    deadline (sent + claim_ttl - margin, on the monotonic
 *                    clock): the backend was unreachable or slow;
 *   FLEET_ESTALE     a heartbeat was refused: the claim expired and was
 *                    recovered;
 *   FLEET_ECANCELED  the worker was stopped past its deadline or closed,
 *                    and handed the claim back.
 * The job must still be finished; its done callback then reports the
 * outcome (after FLEET_ETIMEDOUT the backend may still accept it). */
typedef void (*fleet_worker_lost_cb)(fleet_worker_t *w, fleet_job_t *job,
                                     int status);

/* A finished job has settled: `status` is 0 (the backend accepted it),
 * FLEET_EALREADY (it had accepted it before: a retry after a lost reply),
 * FLEET_ESTALE (the claim was lost; nothing changed), FLEET_ENOTFOUND,
 * FLEET_ECANCELED (the worker closed first, or had handed the claim back;
 * or, for a complete or a release, the job was cancelled while it ran and
 * ended as dead, "cancelled", instead: fleet_job_cancelled() tells),
 * FLEET_ETIMEDOUT (a complete or a release after the job's run deadline:
 * it failed with the timeout's error instead), or another backend error
 * once retrying was given up. After it returns
 * the job's memory is reused. */
typedef void (*fleet_worker_done_cb)(fleet_worker_t *w, fleet_job_t *job,
                                     fleet_job_action_t action, int status);

/* How a job given to the handler ended, as the after hook reports it
 * (fleet_worker_options_t.after): XX(name, string). */
#define FLEET_JOB_OUTCOME_MAP(XX)                                              \
  XX(COMPLETED, "completed")                                                   \
  XX(FAILED, "failed")                                                         \
  XX(RELEASED, "released")                                                     \
  XX(CANCELLED, "cancelled")                                                   \
  XX(TIMED_OUT, "timed out")                                                   \
  XX(LOST, "lost")

/* COMPLETED, FAILED, RELEASED: the backend accepted the handler's finish
 * (a failed job is retried after its backoff or is dead). CANCELLED: the
 * job was cancelled while it ran (fleet_queue_cancel_job()) and ended as
 * dead, "cancelled". TIMED_OUT: it ran past its run deadline
 * (fleet_job_spec_t.timeout_ms) and failed with the timeout's error.
 * LOST: the finish changed nothing: the claim was lost (FLEET_ESTALE),
 * handed back at a stop's deadline or a close (FLEET_ECANCELED), or the
 * backend refused it (the hook's `status` tells which). */
typedef enum {
#define FLEET__JOB_OUTCOME_ENUM(name, str) FLEET_JOB_OUTCOME_##name,
  FLEET_JOB_OUTCOME_MAP(FLEET__JOB_OUTCOME_ENUM)
#undef FLEET__JOB_OUTCOME_ENUM
} fleet_job_outcome_t;

/* The name of an outcome ("completed"); never NULL ("unknown" when out of
 * range). */
FLEET_EXTERN const char *fleet_job_outcome_name(fleet_job_outcome_t outcome);

/* The hooks around a handler run (fleet_worker_options_t.before and
 * .after; docs/queue.md, "Headers and tracing"), for tracing spans,
 * logs or metrics of your own. `arg` is the options' hook_arg. The job's
 * `hook_data` is the hooks' own (the before hook may store a span there
 * for the after hook); `data` stays the handler's.
 *
 * before: runs right before the handler gets `job`, on the loop, once
 * per job given to the handler. */
typedef void (*fleet_worker_before_cb)(fleet_worker_t *w, fleet_job_t *job,
                                       void *arg);

/* after: runs once per job given to the handler (with either hook set),
 * after the before hook if there is one, when the job's outcome is
 * settled: the backend answered its finish (complete, fail, release), or
 * it settled without a call (its claim was lost or handed back), right
 * before the done callback, with the same `status` (0 or as
 * fleet_worker_done_cb says) and the outcome it means. `duration_ns` is
 * the handler's run time: from right before the handler was called to
 * the finish call (fleet_job_complete() and the others), on the
 * monotonic clock. It runs on stop and close too (every job given to the
 * handler is finished and settles); `job` is valid until it returns. */
typedef void (*fleet_worker_after_cb)(fleet_worker_t *w, fleet_job_t *job,
                                      fleet_job_outcome_t outcome, int status,
                                      uint64_t duration_ns, void *arg);

/* A concurrency budget shared by the workers of several queues: one
 * worker per queue, each given the share in its options with a weight,
 * as asynq's Queues{"critical": 6, "default": 3, "low": 1}
 * (docs/queue.md, "Several queues, one budget"). Made by
 * fleet_worker_share_new(). */
typedef struct fleet_worker_share_s fleet_worker_share_t;

/* How a share divides its slots between the workers whose queues have
 * jobs pending. */
typedef enum {
  /* Each gets a part of the budget in proportion to its weight (a worker
   * whose queue has nothing pending leaves its part to the others). */
  FLEET_SHARE_WEIGHTED,
  /* The highest weight first: a worker claims only while no worker of a
   * higher weight has jobs pending. */
  FLEET_SHARE_STRICT
} fleet_share_mode_t;

/* A field left 0 takes its default, so a zeroed struct is a valid
 * configuration. The handler is not an option: fleet_worker_start() takes
 * it. */
typedef struct {
  /* Jobs with the handler at once, up to 10000. Default 10. */
  uint32_t concurrency;
  /* The claim TTL (at least 10) and the heartbeat period, in ms. Defaults
   * 300000 (5 minutes) and claim_ttl_ms / 5. The heartbeat must come
   * before the claim's local deadline:
   * heartbeat_ms < claim_ttl_ms - claim_ttl_ms / 10 - 1. Heartbeats of
   * the claims due about together (within a quarter period) go out in
   * one round trip per client. */
  uint32_t claim_ttl_ms;
  uint32_t heartbeat_ms;
  /* How often expired claims of any worker are recovered, in ms; also
   * done when the earliest known claim deadline passes. Default 1000. */
  uint32_t recover_ms;
  /* The fallback poll while no wake-up comes, in ms. Default 5000. */
  uint32_t poll_ms;
  /* Jobs per claim call, at most; two claims may be in flight. Default
   * (concurrency + 1) / 2, at most 1000. */
  uint32_t claim_batch;
  /* Optional event callbacks (see their types above). */
  fleet_worker_lost_cb lost_cb;
  fleet_worker_done_cb done_cb;
  /* Optional: hears every failed background call (a claim, a heartbeat, a
   * recovery, a finish) with its code and the backend's text, and each
   * job its claims and recoveries moved to dead because fleet could not
   * read it (FLEET_EPROTO, "job <id> moved to dead: <reason>";
   * docs/queue.md, "Jobs fleet cannot read"); the handle passed is the
   * worker. The worker goes on: it retries claims with
   * backoff whatever the error (a refused claim, say for want of
   * permissions, may be fixed while it runs), and finishes while the
   * error is transient (FLEET_ECONNLOST, FLEET_EUNAVAILABLE,
   * FLEET_ETIMEDOUT). */
  fleet_error_cb error_cb;
  /* Retention of finished jobs, as for a queue handle. */
  fleet_queue_options_t queue;
  /* Optional: the share whose budget this worker's jobs count against
   * (the worker's `concurrency` still bounds it; 0 there means the
   * share's), and the worker's weight in it, 1 to FLEET_GROUP_WEIGHT_MAX
   * (default 1). The share must outlive the worker. */
  fleet_worker_share_t *share;
  uint32_t weight;
  /* Optional hooks around each handler run (see fleet_worker_before_cb
   * and fleet_worker_after_cb), and the argument they get. Unset, they
   * cost nothing. */
  fleet_worker_before_cb before;
  fleet_worker_after_cb after;
  void *hook_arg;
} fleet_worker_options_t;

/* What a worker has done so far (see fleet_worker_stats()). */
typedef struct {
  uint64_t claimed;
  uint64_t completed; /* accepted completions (0 or FLEET_EALREADY) */
  uint64_t failed;    /* accepted failures */
  uint64_t released;  /* accepted releases */
  uint64_t lost;      /* lost callbacks */
  uint32_t active;    /* jobs with the handler */
  uint32_t held;      /* jobs claimed and not yet settled */
  int online;         /* the last backend call succeeded */
  int last_error;     /* the error of the last failed call, or 0 */
  /* "idle", "running", "stopping", "stopped" or "closing". */
  const char *state;
} fleet_worker_stats_t;

/* A worker handle: a fleet_handle_t (see fleet/common.h). */
struct fleet_worker_s {
  FLEET_HANDLE_FIELDS
};

/* Fills `options` with the defaults (no callbacks). */
FLEET_EXTERN void fleet_worker_options_init(fleet_worker_options_t *options);

/* Makes a share of `concurrency` jobs at once (1 to 10000) divided as
 * `mode` says, in `*out`. Returns 0, FLEET_EINVAL or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_worker_share_new(uint32_t concurrency,
                                        fleet_share_mode_t mode,
                                        fleet_worker_share_t **out);

/* Frees a share no open worker uses (close them first: a worker leaves
 * its share when it is closed). Returns 0, FLEET_EINVAL (NULL) or
 * FLEET_EBUSY (a worker still uses it; nothing is freed). */
FLEET_EXTERN int fleet_worker_share_free(fleet_worker_share_t *share);

/* Initializes `w` for the queue `name` (1 to 512 bytes) on `client` and
 * registers it with the client, which refuses to close (FLEET_EBUSY)
 * while `w` is open; `options` is copied. Nothing happens before
 * fleet_worker_start().
 *
 * Returns 0, FLEET_EINVAL (NULL argument, empty name, options out of
 * range), FLEET_E2BIG (name too long), FLEET_ECLOSING (the client
 * is closing) or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_worker_init(fleet_client_t *client, fleet_worker_t *w,
                                   const char *name,
                                   const fleet_worker_options_t *options);

/* What fleet_worker_open() reports: the partition count of the queue. */
typedef void (*fleet_worker_open_cb)(fleet_worker_t *w, int status,
                                     uint32_t partitions, void *user_data);

/* Initializes `w` as fleet_worker_init() does, then reads the partition
 * count recorded for the queue (fleet_queue_partitions(); one round trip)
 * and makes `w` a worker of every partition (docs/queue.md, "Partitioned
 * queues"). The callback runs once, with 0 and the count: start `w` from
 * there; or with FLEET_ECONFLICT (options->queue.partitions is 2 or more
 * and differs from the recorded count) or a backend error: `w` is then a
 * worker of partition 0 only, to close. Returns 0 or what
 * fleet_worker_init() returns (then no callback runs).
 *
 * A worker of P partitions (this, or fleet_worker_init() with
 * options->queue.partitions P) claims from every partition, its
 * `concurrency` shared between them as a share would (no `share` option
 * may be given then); its handler and callbacks get `w`, and the ids of
 * its jobs say their partition; its error_cb hears the failures of
 * every partition's calls, with `w`. */
FLEET_EXTERN int fleet_worker_open(fleet_client_t *client, fleet_worker_t *w,
                                   const char *name,
                                   const fleet_worker_options_t *options,
                                   fleet_worker_open_cb cb, void *user_data);

/* Starts claiming and gives each job claimed to `handler` (required):
 * at once, then whenever jobs may be pending (a wake-up published by an
 * enqueue, a delayed job coming due, a job finishing, the fallback poll).
 * While the backend is unreachable it stops claiming, keeps its jobs,
 * retries their completions with backoff and resumes when the backend
 * answers again.
 *
 * Each start gives the handler: a worker started again after
 * fleet_worker_stop() takes it again (it may be another one), and the jobs
 * claimed from then on go to that one. Jobs given to a handler before
 * stay with it until they are finished.
 *
 * Returns 0, FLEET_EINVAL (not initialized, or `handler` NULL),
 * FLEET_EALREADY (running or stopping), FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_worker_start(fleet_worker_t *w,
                                    fleet_worker_handler_cb handler);

/* Stops gracefully: claims nothing more, waits up to `timeout_ms` for the
 * jobs with the handler to be finished and their completions accepted,
 * then hands the claims of the rest back (lost callback with
 * FLEET_ECANCELED). `cb` (may be NULL) runs once everything sent has been
 * answered, with 0 when every job finished in time, FLEET_ETIMEDOUT when
 * some were handed back at the deadline, or FLEET_ECANCELED if the worker
 * is closed first; the worker may then be started again or closed.
 * Returns 0, FLEET_EINVAL (not initialized), FLEET_EALREADY (not running)
 * or FLEET_ECLOSING. */
FLEET_EXTERN int fleet_worker_stop(fleet_worker_t *w, uint32_t timeout_ms,
                                   fleet_status_cb cb, void *user_data);

/* Closes the worker at once: completions not yet sent are sent, the claims
 * of jobs with the handler are handed back (lost callback with
 * FLEET_ECANCELED), calls in flight are answered with FLEET_ECANCELED.
 * `close_cb` (may be NULL) runs once every job given to the handler has
 * been finished and settled. Close a worker before its client. The same
 * as fleet_close((fleet_handle_t *)w, close_cb). May be called from any
 * fleet callback, the handler included. Returns 0, FLEET_EINVAL or
 * FLEET_ECLOSING. */
FLEET_EXTERN int fleet_worker_close(fleet_worker_t *w, fleet_close_cb close_cb);

/* Fills `stats` with the worker's counters since its init (claimed, and
 * the finishes the backend accepted, by action; lost callbacks), the jobs
 * with the handler (`active`) and held, whether the last backend call
 * succeeded (`online`), the last error of a call (`last_error`, kept
 * after it recovers) and the state's name (a static string). Cheap: no
 * backend call. A `w` not initialized or closed gives zeros and a NULL
 * state. */
FLEET_EXTERN void fleet_worker_stats(const fleet_worker_t *w,
                                     fleet_worker_stats_t *stats);

/* The worker whose handler holds `job`, or NULL for a job that is not a
 * worker's (fleet_queue_claim() hands those out). */
FLEET_EXTERN fleet_worker_t *fleet_job_worker(const fleet_job_t *job);

/* Finishes a job given to the handler: completes it, fails it with
 * `error` (up to FLEET_JOB_ERROR_MAX bytes; it is retried after its
 * backoff or is dead), or hands it back to pending without counting the
 * attempt. The backend's answer comes in the done callback, after this
 * returns; completions made in the same loop iteration go in one round
 * trip. Returns 0, FLEET_EINVAL (NULL, not a job of a handler, or finished
 * already) or FLEET_E2BIG. */
FLEET_EXTERN int fleet_job_complete(fleet_job_t *job);
FLEET_EXTERN int fleet_job_fail(fleet_job_t *job, const void *error,
                                size_t error_len);
FLEET_EXTERN int fleet_job_release(fleet_job_t *job);

/* Completes a job given to the handler, as fleet_job_complete(), with a
 * result: `len` bytes at `result` (copied; up to FLEET_JOB_RESULT_MAX,
 * may be empty), kept and told as fleet_queue_complete_results() says.
 * Returns 0, FLEET_EINVAL (as fleet_job_complete(), or `result` NULL with
 * a length), FLEET_E2BIG (over the limit: the job is not finished) or
 * FLEET_ENOMEM. */
FLEET_EXTERN int fleet_job_complete_result(fleet_job_t *job, const void *result,
                                           size_t len);

/* Reports the progress of a job the handler has (fleet_queue_progress()):
 * `pct` 0 to 100 and `len` bytes of `data` (copied, up to
 * FLEET_JOB_PROGRESS_MAX). The backend's answer is not awaited: a refusal
 * (FLEET_ESTALE when the claim was lost) or a failed call reaches the
 * worker's error_cb. Returns 0, FLEET_EINVAL (not a job the handler has,
 * pct over 100, `data` NULL with a length), FLEET_E2BIG, FLEET_ECLOSING
 * or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_job_progress(fleet_job_t *job, uint32_t pct,
                                    const void *data, size_t len);
/* Why a running job is asked to stop (fleet_job_cancelled()). */
typedef enum {
  /* It is not. */
  FLEET_JOB_CANCEL_NONE = 0,
  /* It was cancelled (fleet_queue_cancel_job()): whatever the handler
   * does now, the job ends as dead with the error "cancelled"; finish it
   * before the cancel's grace passes. */
  FLEET_JOB_CANCEL_REQUESTED,
  /* It reached its run deadline (fleet_job_spec_t.timeout_ms): it fails
   * with the error "timed out after <ms> ms" and is retried by its
   * backoff, whatever the handler does now. */
  FLEET_JOB_CANCEL_TIMEOUT
} fleet_job_cancel_t;

/* The handler of a job is asked to stop: `why` is FLEET_JOB_CANCEL_REQUESTED
 * or FLEET_JOB_CANCEL_TIMEOUT. */
typedef void (*fleet_job_cancel_cb)(fleet_job_t *job, fleet_job_cancel_t why,
                                    void *arg);

/* Asks for `cb` to run, once, when job `job` (given to the handler and not
 * finished) is asked to stop (docs/queue.md, "Cancelling a running job",
 * "Maximum run time"): cancelled, as the worker hears it (a message on the
 * queue's wake channel, else its next heartbeat), or at its run deadline
 * (fleet_job_t.run_deadline_ms, timed on the worker from the backend
 * clock the claim read). It runs on the loop, never inside this call; a
 * second call replaces `cb` and `arg`. Finish the job as usual (complete,
 * fail or release): the backend turns that into the cancelled or timed-out
 * end. A job asked to stop before this call does not run `cb`: check
 * fleet_job_cancelled() first. `cb` never runs after the job is finished.
 * Returns 0 or FLEET_EINVAL (NULL job, not a job of a handler, or finished
 * already). */
FLEET_EXTERN int fleet_job_on_cancel(fleet_job_t *job, fleet_job_cancel_cb cb,
                                     void *arg);

/* Whether job `job`, given to a handler, was asked to stop, and why;
 * FLEET_JOB_CANCEL_NONE for NULL or a job that is not a handler's. */
FLEET_EXTERN fleet_job_cancel_t fleet_job_cancelled(const fleet_job_t *job);

/* fleet_job_rate_limit() flags: hold the job's group only (the queue when
 * the job has no group). */
#define FLEET_RATE_LIMIT_GROUP 1u

/* Finishes a job given to the handler because the upstream said "wait":
 * hands it back to pending without counting the attempt (as
 * fleet_job_release()) and, in the same call, holds the claims of the
 * queue, or with FLEET_RATE_LIMIT_GROUP of the job's group, for `wait_ms`
 * ms (1 to FLEET_LIMIT_WINDOW_MAX_MS) on the backend clock. Every worker
 * of every process waits, and claims again when the hold ends. The done
 * callback reports FLEET_JOB_RELEASE. Returns 0, FLEET_EINVAL (as
 * fleet_job_release(), a wait out of range or an unknown flag). */
FLEET_EXTERN int fleet_job_rate_limit(fleet_job_t *job, uint32_t wait_ms,
                                      unsigned flags);

/* For a flow's parent given to the handler (docs/queue.md, "Flows"):
 * reads its children, their states and results, as
 * fleet_queue_children() does on the worker's queue (the callback's `q`
 * is the worker's internal queue handle: use `user_data`). Call it while
 * the job is held (before it is finished). Returns 0, FLEET_EINVAL (NULL,
 * or not a job of a handler), FLEET_ECLOSING or FLEET_ENOMEM; the callback
 * gets FLEET_ENOTFOUND for a job that is no flow's parent. */
FLEET_EXTERN int fleet_job_children(fleet_job_t *job,
                                    fleet_queue_children_cb cb,
                                    void *user_data);

/* The worker's id, "<host>-<pid>-<8 random hex digits>", made at init:
 * its entry in the process registry (fleet_workers_list(), fleet/client.h)
 * while it runs. NUL-terminated, valid until the worker has closed; NULL
 * for a `w` that is not an initialized worker. */
FLEET_EXTERN const char *fleet_worker_id(const fleet_worker_t *w);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_WORKER_H */
