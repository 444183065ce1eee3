/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/queue.h -- the durable job queue: producing jobs, claiming them with
 * fencing tokens, heartbeats, completion, retries and stale-claim recovery.
 * (fleet/worker.h builds a worker on top of it.) */
#ifndef FLEET_QUEUE_H
#define FLEET_QUEUE_H

#include "fleet/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fleet_queue_s fleet_queue_t;
typedef struct fleet_worker_s fleet_worker_t;

/* Limits, checked at the API boundary (FLEET_EINVAL or FLEET_E2BIG, and
 * nothing is written). Ids, types and unique keys are NUL-terminated
 * strings of 1 to their maximum bytes. */
#define FLEET_JOB_ID_MAX 256
#define FLEET_JOB_TYPE_MAX 128
#define FLEET_JOB_UNIQUE_MAX 256
#define FLEET_JOB_PAYLOAD_MAX (64u * 1024 * 1024)
#define FLEET_JOB_ERROR_MAX (64u * 1024)
#define FLEET_JOB_PRIORITY_MIN (-1000)
#define FLEET_JOB_PRIORITY_MAX 1000
/* A job's group (fleet_job_spec_t.group): 1 to this many bytes. */
#define FLEET_JOB_GROUP_MAX 128
/* A group's weight in the claims' rotation (fleet_queue_set_group_weight). */
#define FLEET_GROUP_WEIGHT_MAX 1000
/* Jobs per enqueue call, claims per claim, refresh, complete or release
 * call. */
#define FLEET_QUEUE_BATCH_MAX 1000
/* A job's result (fleet_queue_complete_results(), fleet_job_complete_result()
 * in fleet/worker.h): 0 to this many bytes. */
#define FLEET_JOB_RESULT_MAX (512u * 1024)
/* The bytes of a progress report (fleet_queue_progress()): 0 to this many. */
#define FLEET_JOB_PROGRESS_MAX 4096u
/* A job's own result retention (fleet_job_spec_t.result_ttl_ms), at most
 * (366 days). */
#define FLEET_JOB_RESULT_TTL_MAX_MS (366ull * 24 * 3600 * 1000)

/* The states of a job: XX(name, string). The string is what the job's
 * "state" field holds in the backend. */
#define FLEET_JOB_STATE_MAP(XX)                                                \
  XX(PENDING, "pending")                                                       \
  XX(DELAYED, "delayed")                                                       \
  XX(RUNNING, "running")                                                       \
  XX(COMPLETED, "completed")                                                   \
  XX(DEAD, "dead")                                                             \
  XX(WAITING_CHILDREN, "waiting-children")

typedef enum {
#define FLEET__JOB_STATE_ENUM(name, str) FLEET_JOB_##name,
  FLEET_JOB_STATE_MAP(FLEET__JOB_STATE_ENUM)
#undef FLEET__JOB_STATE_ENUM
} fleet_job_state_t;

/* The name of a state ("pending"); never NULL ("unknown" when out of
 * range). */
FLEET_EXTERN const char *fleet_job_state_name(fleet_job_state_t state);

/* A job's headers (fleet_job_spec_t.headers; docs/queue.md, "Headers and
 * tracing"): at most this many, each key 1 to FLEET_JOB_HEADER_KEY_MAX
 * bytes of [A-Za-z0-9._-], each value 0 to FLEET_JOB_HEADER_VALUE_MAX
 * bytes without a control character (a byte below 0x20, or 0x7f), and all
 * of them together at most FLEET_JOB_HEADERS_BYTES_MAX bytes, counting
 * each key and value and 2 bytes per header. */
#define FLEET_JOB_HEADERS_MAX 16
#define FLEET_JOB_HEADER_KEY_MAX 64
#define FLEET_JOB_HEADER_VALUE_MAX 512
#define FLEET_JOB_HEADERS_BYTES_MAX 4096

/* One header of a job: a key and its value, NUL-terminated strings. */
typedef struct {
  const char *key;
  const char *value;
} fleet_header_t;

/* How a failed job waits before its next attempt. */
typedef enum {
  /* backoff_ms every time. */
  FLEET_BACKOFF_FIXED,
  /* backoff_ms, then twice as long after each failure, up to
   * backoff_max_ms. */
  FLEET_BACKOFF_EXPONENTIAL
} fleet_backoff_t;

/* One job to enqueue. Fill with fleet_job_spec_init(), then change what
 * differs. fleet does not take ownership of anything it points to; it is
 * only read during the enqueue call. */
typedef struct {
  /* The job type, required: 1 to FLEET_JOB_TYPE_MAX bytes. */
  const char *type;
  /* Binary-safe, up to FLEET_JOB_PAYLOAD_MAX bytes; may be empty. */
  fleet_bytes_t payload;
  /* NULL for an id fleet generates (a decimal number), or one of your own:
   * 1 to FLEET_JOB_ID_MAX bytes, not made of digits only (those are
   * fleet's). A job with the same id that still exists makes the enqueue
   * of this one fail with FLEET_EEXIST. */
  const char *id;
  /* FLEET_JOB_PRIORITY_MIN..MAX, default 0: higher runs first; jobs of one
   * priority run oldest first. */
  int priority;
  /* The job becomes pending at max(run_at_ms, now + delay_ms), on the
   * backend clock (unix ms); until then it is delayed. Both 0 by
   * default: pending at once. */
  uint64_t delay_ms;
  uint64_t run_at_ms;
  /* Attempts before the job is dead: 1 or more, default 3. */
  uint32_t max_attempts;
  /* Retry backoff: default FLEET_BACKOFF_EXPONENTIAL from 1000 ms up to
   * 3600000 ms, with up to 20 % jitter taken off each delay (0..100). A
   * delay of 0 retries after 1 ms. */
  fleet_backoff_t backoff;
  uint32_t backoff_ms;
  uint32_t backoff_max_ms;
  uint32_t backoff_jitter_pct;
  /* NULL, or a uniqueness key of 1 to FLEET_JOB_UNIQUE_MAX bytes: while a
   * key is held (unique_ttl_ms from the enqueue, or until the job is
   * cancelled; with unique_until_done, until the job ends), another job
   * with it is refused with FLEET_EEXIST. unique_ttl_ms must then be at
   * least 1, unless unique_until_done is set. */
  const char *unique_key;
  uint64_t unique_ttl_ms;
  /* NULL, or the job's group (a tenant, a customer, an account): 1 to
   * FLEET_JOB_GROUP_MAX bytes. Claims rotate between the groups that have
   * pending jobs, so that one group's backlog does not hold back another's
   * jobs, and the group limits of fleet_queue_limits_t bind each group
   * (docs/queue.md, "Flow control"). Priorities order the jobs of one
   * group. */
  const char *group;
  /* 0 (the default), or 1: the job holds its unique_key (required) until
   * it ends: until it completes, dies (its last attempt failed or
   * expired, or fleet moved it aside as unreadable) or is cancelled. Its
   * unique_ttl_ms is then optional: 0, no time bound; else a safety
   * bound, the key going at that TTL even while the job still runs. A
   * dead job that fleet_queue_retry() runs again does not take its key
   * again (docs/queue.md, "Unique jobs"). */
  int unique_until_done;
  /* How long the job's result (fleet_queue_complete_results()) is kept
   * after it completed, in ms: 1 to FLEET_JOB_RESULT_TTL_MAX_MS, or 0
   * (the default) for the `keep_result_s` of the options of the queue
   * handle that completes it. */
  uint64_t result_ttl_ms;
  /* The job's maximum run time in ms, 0 for none (the default): an attempt
   * still running this long after its claim (on the backend clock) fails
   * with the error "timed out after <timeout_ms> ms" and is retried by its
   * backoff, or is dead past max_attempts; a worker's handler is told
   * first (fleet_job_on_cancel(), FLEET_JOB_CANCEL_TIMEOUT). Up to
   * FLEET_JOB_TIMEOUT_MAX_MS (docs/queue.md, "Maximum run time"). */
  uint32_t timeout_ms;
  /* Optional headers: small key/value metadata that travels with the job,
   * such as a W3C `traceparent` (docs/queue.md, "Headers and tracing"):
   * `nheaders` (0, the default, to FLEET_JOB_HEADERS_MAX) headers at
   * `headers` (NULL when none), within the limits of FLEET_JOB_HEADERS_MAX
   * and each key given once (keys are case-sensitive). They are stored
   * with the job, handed to the worker with each claim of it, retries
   * included (fleet_job_header()), read by fleet_queue_get(), and go with
   * the job's record. A job without headers costs nothing more. */
  const fleet_header_t *headers;
  size_t nheaders;
} fleet_job_spec_t;

/* fleet_job_spec_t.timeout_ms at most (about 49 days). */
#define FLEET_JOB_TIMEOUT_MAX_MS UINT32_MAX

/* The value of header `key` in packed headers (`headers`, `len` bytes:
 * fleet_job_t.headers, fleet_job_info_t.headers), NULL when there is no
 * such header (or `key` or `headers` is NULL). The value lives as long as
 * `headers` does. */
FLEET_EXTERN const char *fleet_headers_get(const char *headers, size_t len,
                                           const char *key);

/* Iterates over packed headers: `*cursor` 0 starts; each call that
 * returns 1 sets `*key` and `*value` to the next header (in the order the
 * enqueue gave them) and moves `*cursor` on; 0 means no more. */
FLEET_EXTERN int fleet_headers_next(const char *headers, size_t len,
                                    size_t *cursor, const char **key,
                                    const char **value);

/* Fills `spec` with the defaults above and the given type and payload
 * (neither is copied). */
FLEET_EXTERN void fleet_job_spec_init(fleet_job_spec_t *spec, const char *type,
                                      const void *payload, size_t len);

/* How long finished job records are kept. The counters of
 * fleet_queue_counts() count every job ever finished, whatever is kept.
 * A field left 0 takes its default, so a zeroed struct is the defaults. */
typedef struct {
  /* Completed job records kept at most (default FLEET_QUEUE_KEEP_NONE:
   * each one is deleted as it completes, the cheapest completion; set a
   * count such as 1000 to keep recent completions for fleet_queue_get()
   * and the tools), and their largest age in seconds (default 3600, which
   * matters only with a keep_completed count; FLEET_QUEUE_NO_AGE_LIMIT:
   * no age bound). */
  uint32_t keep_completed;
  uint32_t keep_completed_s;
  /* The same for dead jobs: default 10000 and 604800 (7 days). */
  uint32_t keep_dead;
  uint32_t keep_dead_s;
  /* Optional: hears each job that a claim or a recovery through this
   * handle moved to dead because fleet could not read it (a pending,
   * due or running job without a record, or whose record, options or
   * claim is malformed; docs/queue.md, "Jobs fleet cannot read"), with
   * FLEET_EPROTO and the detail "job <id> moved to dead: <reason>". It
   * runs after the callback of the call that moved it, once per job; the
   * handle passed is the queue. A worker ignores the one of its `queue`
   * options and reports such jobs through its own error_cb. */
  fleet_error_cb error_cb;
  /* How long a completed job's result is kept, in seconds (default 3600),
   * also with no completed-job history (FLEET_QUEUE_KEEP_NONE): jobs
   * enqueued with a result_ttl_ms of their own keep theirs that long. It
   * is also how long a job's last progress stays readable after its
   * report (docs/queue.md, "Results"). FLEET_QUEUE_NO_AGE_LIMIT keeps them
   * for about 136 years. */
  uint32_t keep_result_s;
  /* The queue's partitions (docs/queue.md, "Partitioned queues"): 0 or 1
   * (the default), a plain queue of one slot; 2 to FLEET_QUEUE_PARTITIONS_MAX,
   * a handle of that many partitions, each a one-slot queue of its own
   * hash tag, which every call of the handle treats as one queue. The
   * count must be the one recorded for the queue
   * (fleet_queue_partitions()): fleet_queue_open() checks it, and learns
   * it when this is 0. */
  uint32_t partitions;
} fleet_queue_options_t;

/* fleet_queue_options_t.partitions, at most. */
#define FLEET_QUEUE_PARTITIONS_MAX 256

/* keep_completed / keep_dead: keep no record. */
#define FLEET_QUEUE_KEEP_NONE UINT32_MAX
/* keep_completed_s / keep_dead_s: keep records whatever their age. */
#define FLEET_QUEUE_NO_AGE_LIMIT UINT32_MAX

/* Fills `options` with the defaults (the values a 0 field takes). */
FLEET_EXTERN void fleet_queue_options_init(fleet_queue_options_t *options);

/* A queue handle: a fleet_handle_t (see fleet/common.h). */
struct fleet_queue_s {
  FLEET_HANDLE_FIELDS
};

/* A claimed job. Every pointer is valid until the callback that hands it
 * out returns (a worker's job: until it is finished, see fleet/worker.h);
 * copy what you keep. Strings are NUL-terminated. */
typedef struct fleet_job_s {
  /* For the user; fleet never reads or writes it. */
  void *data;
  const char *id;
  size_t id_len;
  const char *type;
  size_t type_len;
  fleet_bytes_t payload;
  /* This attempt (1 for the first) and the most the job gets. */
  uint32_t attempts;
  uint32_t max_attempts;
  /* The fencing token of this claim: greater than every token the queue
   * issued before. Refresh, complete, fail and release must present it. */
  uint64_t token;
  /* The claim deadline on the backend clock (unix ms), as of the claim. */
  uint64_t deadline_ms;
  /* The job's group, NULL when it has none. */
  const char *group;
  size_t group_len;
  /* Private (see fleet_job_worker()). */
  struct fleet__wjob_s *internal_;
  /* The run deadline of a job enqueued with a timeout_ms (its claim time
   * plus the timeout, unix ms on the backend clock), 0 for none. */
  uint64_t run_deadline_ms;
  /* The job's headers (fleet_job_spec_t.headers), packed: "<key>\0<value>\0"
   * per header, in the order given, `headers_len` bytes in all (NULL and
   * 0 for none). Read them with fleet_job_header() and
   * fleet_job_header_next(). */
  const char *headers;
  size_t headers_len;
  /* For a worker's before and after hooks (fleet/worker.h): NULL when the
   * job is handed out; fleet never reads it. */
  void *hook_data;
  /* When the job was enqueued (unix ms on the backend clock), 0 when its
   * record does not say. */
  uint64_t created_ms;
} fleet_job_t;

/* fleet_headers_get() and fleet_headers_next() on a claimed job's headers:
 * the value of header `key` of `job` (NULL when it has none such), valid
 * as long as `job` is; and the iteration over them. */
FLEET_EXTERN const char *fleet_job_header(const fleet_job_t *job,
                                          const char *key);
FLEET_EXTERN int fleet_job_header_next(const fleet_job_t *job, size_t *cursor,
                                       const char **key, const char **value);

/* A claim to refresh, complete, fail or release: a job id and the token
 * its claim returned. */
typedef struct {
  const char *id;
  uint64_t token;
} fleet_claim_t;

/* What a claim call learned besides the jobs. */
typedef struct {
  /* The backend clock when the claim ran (unix ms). */
  uint64_t now_ms;
  /* The deadline of the claims it made (unix ms). */
  uint64_t deadline_ms;
  /* When the earliest delayed job becomes due (unix ms), or 0 when no job
   * is delayed. */
  uint64_t next_run_at_ms;
  /* Pending jobs left after the claim. With groups, the jobs of the
   * default set plus one per group that may still hold some: 0 only when
   * none is pending. */
  uint64_t pending;
  /* 0, or the claim was held back by a flow limit (fleet_queue_limits_t,
   * fleet_queue_hold()) while jobs were pending: a claim gets jobs again
   * at this time (unix ms, backend clock), or, when it is
   * FLEET_CLAIM_WAIT_SLOT, once a running job of the queue finishes (a
   * concurrency limit: the finish publishes a wake-up). */
  uint64_t retry_at_ms;
} fleet_claim_info_t;

/* fleet_claim_info_t.retry_at_ms: wait for a running job to finish. */
#define FLEET_CLAIM_WAIT_SLOT UINT64_MAX

/* The result of one job of an enqueue call. */
typedef struct {
  /* 0 (added) or FLEET_EEXIST (a job with this id exists, or the unique
   * key is held; `id` is then the id of the job that holds it). */
  int status;
  const char *id;
  size_t id_len;
} fleet_enqueue_result_t;

/* What fleet_queue_get() reads. Pointers are valid until the callback
 * returns. */
typedef struct {
  fleet_job_state_t state;
  uint32_t attempts;
  uint32_t max_attempts;
  int priority;
  const char *type;
  fleet_bytes_t payload;
  /* The error of the last failed attempt (or "claim expired" when a claim
   * ran out), NULL when none. */
  const char *last_error;
  size_t last_error_len;
  /* Unix ms on the backend clock; 0 when never set. run_at_ms is when the
   * job was (last) due to run after a delay or a retry backoff. */
  uint64_t created_ms;
  uint64_t run_at_ms;
  uint64_t finished_ms;
  /* The token of the current or last claim; 0 when none is valid. */
  uint64_t token;
  /* The job's group, NULL when it has none. */
  const char *group;
  /* A completed job's result (docs/queue.md, "Results"): `has_result` 1
   * and the bytes, while it is kept; else 0 and empty. A job completed
   * without completed-job history (FLEET_QUEUE_KEEP_NONE) whose result
   * is kept reads as FLEET_JOB_COMPLETED with its finished_ms and result,
   * and every other field 0 or NULL. */
  int has_result;
  fleet_bytes_t result;
  /* The job's last progress report (fleet_queue_progress()), while kept:
   * its percent (0..100) and bytes; `progress` is -1 when there is
   * none. */
  int progress;
  fleet_bytes_t progress_data;
  /* The job's headers, packed as fleet_job_t.headers is (NULL and 0 for
   * none): read them with fleet_headers_get() and fleet_headers_next(). */
  const char *headers;
  size_t headers_len;
  /* The job's attempt history (docs/queue.md, "Attempt history"): its
   * last failed attempts, at most FLEET_JOB_ERRORS_KEPT, oldest first,
   * each with its attempt number, time and error (an error cut to
   * FLEET_JOB_ERROR_KEPT_MAX bytes; `last_error` holds the last one
   * whole). `nerrors` entries in the stored form at `errors` (NULL and 0
   * when there are none, or when fleet cannot read what is stored): read
   * them with fleet_job_info_error_next(). */
  const char *errors;
  size_t errors_len;
  size_t nerrors;
} fleet_job_info_t;

/* The attempt history keeps at most this many failed attempts of a job,
 * and of each error at most FLEET_JOB_ERROR_KEPT_MAX bytes (8 KiB in all:
 * the oldest entries go first). */
#define FLEET_JOB_ERRORS_KEPT 10
#define FLEET_JOB_ERROR_KEPT_MAX 1024

/* Iterates over the attempt history of `info` (fleet_queue_get()),
 * oldest first: `*cursor` 0 starts; each call that returns 1 sets
 * `*attempt` (the attempt's number: 1 for the first; it starts again at
 * 1 after a retry of a dead job), `*time_ms` (when it failed, unix ms on
 * the backend clock), and `*err` and `*err_len` to its error (bytes that
 * may hold a NUL or a newline, not NUL-terminated), and moves `*cursor`
 * on; 0 means no more. Any output pointer may be NULL. The error lives
 * as long as `info` does: until the get's callback returns. */
FLEET_EXTERN int fleet_job_info_error_next(const fleet_job_info_t *info,
                                           size_t *cursor, uint32_t *attempt,
                                           uint64_t *time_ms, const char **err,
                                           size_t *err_len);

/* Job counts. `completed` and `dead` count every job that ever got there;
 * the *_kept ones count the records still kept. A delayed job whose time
 * has come counts as pending. `waiting_children` counts the flow parents
 * waiting for their children (FLEET_JOB_WAITING_CHILDREN; docs/queue.md,
 * "Flows"); once released a parent counts as pending, then running. */
typedef struct {
  uint64_t pending;
  uint64_t delayed;
  uint64_t running;
  uint64_t completed;
  uint64_t dead;
  uint64_t completed_kept;
  uint64_t dead_kept;
  uint64_t waiting_children;
} fleet_queue_counts_t;

/* What fleet_queue_recover() did. */
typedef struct {
  uint64_t now_ms;
  uint64_t requeued; /* back in pending */
  uint64_t dead;     /* past max_attempts */
  /* The earliest claim deadline still running (unix ms), 0 when none. */
  uint64_t next_deadline_ms;
} fleet_recover_info_t;

/* Callbacks. Each runs once, after the call that issued it returned, with
 * `status` 0 or a negative error; on error the other arguments are empty
 * (NULL, 0). FLEET_ECANCELED means the queue handle was closed first.
 * Backend errors: FLEET_EUNAVAILABLE, FLEET_ETIMEDOUT, FLEET_ECONNLOST (the
 * call may have run), FLEET_EWRONGTYPE / FLEET_EPROTO (the queue's keys
 * hold data fleet did not write), FLEET_EBACKEND. */
typedef void (*fleet_queue_enqueue_cb)(fleet_queue_t *q, int status,
                                       const fleet_enqueue_result_t *results,
                                       size_t n, void *user_data);
typedef void (*fleet_queue_claim_cb)(fleet_queue_t *q, int status,
                                     fleet_job_t *jobs, size_t n,
                                     const fleet_claim_info_t *info,
                                     void *user_data);
/* For batches of claims: `results[i]` is the outcome of claims[i]. */
typedef void (*fleet_queue_batch_cb)(fleet_queue_t *q, int status,
                                     const int *results, size_t n,
                                     void *user_data);
/* `dead` is 1 when the job is dead, else it runs again at `retry_at_ms`
 * (backend clock). */
typedef void (*fleet_queue_fail_cb)(fleet_queue_t *q, int status, int dead,
                                    uint64_t retry_at_ms, void *user_data);
typedef void (*fleet_queue_get_cb)(fleet_queue_t *q, int status,
                                   const fleet_job_info_t *info,
                                   void *user_data);
typedef void (*fleet_queue_counts_cb)(fleet_queue_t *q, int status,
                                      const fleet_queue_counts_t *counts,
                                      void *user_data);
/* `ids` holds up to the limit asked for; `total` counts them all. */
typedef void (*fleet_queue_list_cb)(fleet_queue_t *q, int status,
                                    const char *const *ids, size_t n,
                                    uint64_t total, void *user_data);
typedef void (*fleet_queue_purge_cb)(fleet_queue_t *q, int status,
                                     uint64_t removed, void *user_data);
typedef void (*fleet_queue_recover_cb)(fleet_queue_t *q, int status,
                                       const fleet_recover_info_t *info,
                                       void *user_data);
/* ------------------------------------------------------------------------ */
/* The handle                                                               */

/* Initializes `q` for the queue `name` (1 to 512 bytes, NUL-terminated) on
 * `client` and registers it with the client, which refuses to close
 * (FLEET_EBUSY) while `q` is open. `options` may be NULL for the
 * defaults; it is copied. Every
 * call below returns 0 and later runs its callback exactly once, or
 * returns an error and never runs it; every call may be made from inside a
 * fleet callback.
 *
 * Returns 0, FLEET_EINVAL (NULL argument, empty name), FLEET_E2BIG (name
 * too long), FLEET_ECLOSING (the client is closing) or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_init(fleet_client_t *client, fleet_queue_t *q,
                                  const char *name,
                                  const fleet_queue_options_t *options);

/* What fleet_queue_partitions() and fleet_queue_open() report: the
 * partition count recorded for the queue (1 when none is). */
typedef void (*fleet_queue_partitions_cb)(fleet_queue_t *q, int status,
                                          uint32_t partitions, void *user_data);

/* Records the partition count of the queue of `q` (`partitions` 1 to
 * FLEET_QUEUE_PARTITIONS_MAX), or reads it (`partitions` 0), in one round
 * trip. The count is recorded once and never changes (docs/queue.md,
 * "Partitioned queues": to change it, drain into a new queue). `q` may be
 * a plain handle or a partitioned one. The callback gets 0 and the
 * recorded count (1 when none is recorded), FLEET_ECONFLICT (another
 * count is recorded: nothing is written, and `partitions` is 0) or a
 * backend error. Returns 0, FLEET_EINVAL (a count over
 * FLEET_QUEUE_PARTITIONS_MAX, no callback), FLEET_ECLOSING or
 * FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_partitions(fleet_queue_t *q, uint32_t partitions,
                                        fleet_queue_partitions_cb cb,
                                        void *user_data);

/* Opens a queue whose partition count is read from the backend: inits `q`
 * as fleet_queue_init() does with options->partitions 1, reads the
 * recorded count (one round trip), and then makes `q` a handle of all the
 * partitions. The callback runs once: with 0 and the count, `q` ready; or
 * with FLEET_ECONFLICT (options->partitions is set, 2 or more, and differs
 * from the recorded count, or no count was recorded for it), or a backend
 * error, `q` then a handle of the plain queue (partition 0) only. Make no
 * other call on `q` before the callback; close `q` in either case.
 * Returns 0, or what fleet_queue_init() returns (then no callback runs). */
FLEET_EXTERN int fleet_queue_open(fleet_client_t *client, fleet_queue_t *q,
                                  const char *name,
                                  const fleet_queue_options_t *options,
                                  fleet_queue_partitions_cb cb,
                                  void *user_data);

/* Closes `q`: the callback of every call still pending runs once with
 * FLEET_ECANCELED (after this returns; a call may still have taken effect
 * in the backend), then `close_cb` (may be NULL) runs once the replies
 * still on their way have arrived. Close every queue handle before its
 * client. The same as fleet_close((fleet_handle_t *)q, close_cb).
 * Returns 0, FLEET_EINVAL or FLEET_ECLOSING (already closing). */
FLEET_EXTERN int fleet_queue_close(fleet_queue_t *q, fleet_close_cb close_cb);

/* The queue's name; valid until the close callback. */
FLEET_EXTERN const char *fleet_queue_name(const fleet_queue_t *q);

/* ------------------------------------------------------------------------ */
/* Producing and inspecting                                                 */

/* Enqueues `n` jobs (1..FLEET_QUEUE_BATCH_MAX) in one round trip, in order.
 * The callback gets one result per job: a job whose id exists already or
 * whose unique key is held is refused alone (FLEET_EEXIST); the others are
 * added. A job added to an empty pending set, or delayed earlier than
 * every other, wakes the workers of the queue. The jobs are copied before
 * this returns; the enqueues made on `q` during one loop phase go out in
 * one call at its end, in the order they were made, and a failure to
 * send it reaches each of their callbacks.
 *
 * Returns 0, FLEET_EINVAL (NULL argument, n out of range, a spec with a bad
 * type, id, priority, max_attempts, backoff or unique key), FLEET_E2BIG (a
 * type, id or unique key over its limit, a payload over
 * FLEET_JOB_PAYLOAD_MAX), FLEET_ECLOSING or FLEET_ENOMEM; on
 * error no job is enqueued. */
FLEET_EXTERN int fleet_queue_enqueue(fleet_queue_t *q,
                                     const fleet_job_spec_t *specs, size_t n,
                                     fleet_queue_enqueue_cb cb,
                                     void *user_data);

/* Reads job `id`. The callback gets FLEET_ENOTFOUND for a job that does
 * not exist (never did, was cancelled, or its finished record was not
 * kept). Returns 0, FLEET_EINVAL, FLEET_E2BIG (id too long),
 * FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_get(fleet_queue_t *q, const char *id,
                                 fleet_queue_get_cb cb, void *user_data);

/* What fleet_queue_cancel_job() did. */
typedef enum {
  /* The job was pending or delayed: it is deleted. */
  FLEET_CANCEL_DELETED = 1,
  /* The job is running: its worker is told (fleet_job_on_cancel()) and the
   * job ends as dead with the error "cancelled" once its handler finishes
   * it, or when the grace period passes (docs/queue.md, "Cancelling a
   * running job"). */
  FLEET_CANCEL_REQUESTED = 2
} fleet_cancel_result_t;

/* The grace a running job gets to stop when cancelled, by default (ms). */
#define FLEET_QUEUE_CANCEL_GRACE_MS 30000u
/* The largest grace fleet_queue_cancel_job() takes (ms). */
#define FLEET_QUEUE_CANCEL_GRACE_MAX_MS 86400000u

/* `result` is what was done (0 on error). */
typedef void (*fleet_queue_cancel_cb)(fleet_queue_t *q, int status,
                                      fleet_cancel_result_t result,
                                      void *user_data);

/* Cancels job `id`: deletes it if it is pending or delayed
 * (FLEET_CANCEL_DELETED); if it is running, asks it to stop
 * (FLEET_CANCEL_REQUESTED): the worker holding it hears it at once (a
 * message on the queue's wake channel; its next heartbeat tells it too,
 * should the message be missed), its handler is told through the job
 * (fleet_job_on_cancel()), and the job ends as dead with the error
 * "cancelled" when the handler finishes it (complete, fail or release,
 * whose done callback then gets FLEET_ECANCELED or, for a fail, 0), or
 * `grace_ms` ms after the cancel (backend clock) if it has not: its
 * claim's deadline is capped there and recovery ends it. A zombie's late
 * finish is refused with FLEET_ESTALE. `grace_ms` 0 takes
 * FLEET_QUEUE_CANCEL_GRACE_MS; at most FLEET_QUEUE_CANCEL_GRACE_MAX_MS.
 * Cancelling a running job again changes nothing. The callback gets 0,
 * FLEET_ENOTFOUND or FLEET_EALREADY (it completed or is dead). Same return
 * codes as fleet_queue_get(), and FLEET_EINVAL for a grace out of
 * range. */
FLEET_EXTERN int fleet_queue_cancel_job(fleet_queue_t *q, const char *id,
                                        uint32_t grace_ms,
                                        fleet_queue_cancel_cb cb,
                                        void *user_data);

/* fleet_queue_cancel_job() with the default grace, whose callback gets 0
 * whether the job was deleted or its cancel requested. */
FLEET_EXTERN int fleet_queue_cancel(fleet_queue_t *q, const char *id,
                                    fleet_status_cb cb, void *user_data);

/* Counts the jobs in each state. Returns 0, FLEET_EINVAL, FLEET_ECLOSING or
 * FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_counts(fleet_queue_t *q, fleet_queue_counts_cb cb,
                                    void *user_data);

/* ------------------------------------------------------------------------ */
/* History (docs/metrics.md, "Queue history")                               */

/* The resolution of a history: minutes (kept 25 hours) or days (kept 32
 * days), UTC. */
typedef enum { FLEET_HIST_MINUTE, FLEET_HIST_DAY } fleet_hist_res_t;

/* One point of a history: the minute or day starting at `t_ms` (unix ms),
 * the job attempts that ended in it (`processed`: completed plus failed),
 * those that failed (each failed attempt, retried or dead), and for
 * minutes the depth (pending + delayed + running) and the oldest pending
 * job's age in ms that a reader sampled in it (fleet_queue_sample()): -1
 * when none did, and always -1 for days. */
typedef struct {
  int64_t t_ms;
  uint64_t processed;
  uint64_t failed;
  int64_t depth;
  int64_t wait_ms;
} fleet_hist_point_t;

/* `points` (oldest first, one per minute or day of the range, an empty one
 * zero) is valid until the callback returns. */
typedef void (*fleet_queue_history_cb)(fleet_queue_t *q, int status,
                                       const fleet_hist_point_t *points,
                                       size_t n, void *user_data);

/* What fleet_queue_sample() found: the backend's time, the age in ms of
 * the oldest pending job (-1: nothing pending), and whether this call
 * recorded the minute's sample (1) or one was already there (0). */
typedef struct {
  uint64_t now_ms;
  int64_t oldest_ms;
  int recorded;
} fleet_queue_sample_t;

typedef void (*fleet_queue_sample_cb)(fleet_queue_t *q, int status,
                                      const fleet_queue_sample_t *sample,
                                      void *user_data);

/* The largest number of points one history call returns. */
#define FLEET_HIST_MINUTES_MAX 1500
#define FLEET_HIST_DAYS_MAX 400

/* Reads the history of `q` at resolution `res` from `from_ms` to `to_ms`
 * (unix ms, backend clock), oldest first: `to_ms` 0 means now; `from_ms`
 * 0 means the whole retention (25 hours of minutes, 32 days), and a
 * negative `from_ms` that many ms before `to_ms`. At most
 * FLEET_HIST_MINUTES_MAX or FLEET_HIST_DAYS_MAX points come, the newest.
 * The counts are written as jobs complete and fail, two commands per
 * completion or failure call whatever its number of jobs; the depth and
 * wait by readers through fleet_queue_sample(). On a partitioned handle
 * the partitions' histories are read in one loop iteration and added up
 * point by point: processed, failed and the sampled depths summed (-1
 * where no partition was sampled), the longest wait. Returns 0,
 * FLEET_EINVAL (NULL argument, bad `res`, `from_ms` after `to_ms`),
 * FLEET_ECLOSING or FLEET_ENOMEM. The callback gets 0 or a backend
 * error. */
FLEET_EXTERN int fleet_queue_history(fleet_queue_t *q, fleet_hist_res_t res,
                                     int64_t from_ms, int64_t to_ms,
                                     fleet_queue_history_cb cb,
                                     void *user_data);

/* Reads the age of the oldest pending job of `q` (the next one a claim
 * takes from the pending list or the priority set, or the earliest due
 * delayed one; jobs of groups are not looked at) and records, once per
 * minute, the minute's history sample: `depth` (pass the pending +
 * delayed + running of fleet_queue_counts()) and that age. A `depth` of
 * FLEET_HIST_NO_SAMPLE records nothing (a reader that must not write).
 * On a partitioned handle every partition is sampled: the oldest age is
 * the largest of theirs, `recorded` says whether any recorded, and each
 * records its own depth, read with its counts in the same call (any
 * `depth` but FLEET_HIST_NO_SAMPLE only says to record), so that the
 * history's sum is the queue's depth. Returns 0, FLEET_EINVAL,
 * FLEET_ECLOSING or FLEET_ENOMEM. The callback gets 0 or a backend
 * error. */
#define FLEET_HIST_NO_SAMPLE UINT64_MAX
FLEET_EXTERN int fleet_queue_sample(fleet_queue_t *q, uint64_t depth,
                                    fleet_queue_sample_cb cb, void *user_data);

/* Lists up to `limit` (1..FLEET_QUEUE_BATCH_MAX) ids of the queued
 * (pending or delayed) jobs of `type`, pending ones first; the callback's
 * `total` counts them all. No per-type index is kept: the call reads
 * every queued job's record in one script, which holds the server for
 * about a microsecond per queued job (docs/queue.md, "Listing by type"):
 * for tools, not hot paths. Returns 0, FLEET_EINVAL, FLEET_E2BIG (type too
 * long), FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_list(fleet_queue_t *q, const char *type,
                                  size_t limit, fleet_queue_list_cb cb,
                                  void *user_data);

/* Deletes every kept record of completed (`which` FLEET_JOB_COMPLETED) or
 * dead (FLEET_JOB_DEAD) jobs, 1000 per round trip; the counters stay. The
 * callback gets how many were removed. Returns 0, FLEET_EINVAL (another
 * state), FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_purge(fleet_queue_t *q, fleet_job_state_t which,
                                   fleet_queue_purge_cb cb, void *user_data);

/* ------------------------------------------------------------------------ */
/* Claims                                                                   */

/* Moves due delayed jobs to pending, then claims up to `max_jobs`
 * (0..FLEET_QUEUE_BATCH_MAX; 0 only moves delayed jobs) pending jobs in
 * priority order, oldest first within a priority: each claim gets one more
 * attempt, a new fencing token and the deadline now + claim_ttl_ms on the
 * backend clock. A claim not refreshed before its deadline is recovered
 * (fleet_queue_recover()). The callback gets the jobs (maybe none) and
 * what the backend told besides; after FLEET_ECONNLOST, jobs may have been
 * claimed that nobody will see: they are recovered after their deadline.
 * A pending or due job fleet cannot read is moved to dead instead of
 * claimed (docs/queue.md, "Jobs fleet cannot read"), and reported to the
 * `error_cb` of the queue's options after the callback.
 *
 * Returns 0, FLEET_EINVAL (NULL argument, max_jobs too large, claim_ttl_ms
 * 0), FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_claim(fleet_queue_t *q, size_t max_jobs,
                                   uint32_t claim_ttl_ms,
                                   fleet_queue_claim_cb cb, void *user_data);

/* The heartbeat: moves the deadline of each of `n` claims
 * (1..FLEET_QUEUE_BATCH_MAX) to now + claim_ttl_ms, in one round trip
 * (never past the job's run deadline, fleet_job_t.run_deadline_ms).
 * results[i] is 0, FLEET_ESTALE when claims[i] is no longer held (it
 * expired and was recovered, or finished), or FLEET_ECANCELED when it is
 * held but its job was cancelled (fleet_queue_cancel_job(): its deadline
 * stays where the cancel's grace put it); nothing changes for a stale or
 * cancelled claim. Returns 0, FLEET_EINVAL (NULL argument, an empty id, a token
 * 0, n out of range, claim_ttl_ms 0), FLEET_E2BIG (an id too long),
 * FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_refresh(fleet_queue_t *q,
                                     const fleet_claim_t *claims, size_t n,
                                     uint32_t claim_ttl_ms,
                                     fleet_queue_batch_cb cb, void *user_data);

/* Completes `n` claims in one round trip. results[i] is 0 (completed);
 * FLEET_EALREADY (this claim already ended: a repeated call, for instance
 * after FLEET_ECONNLOST, for a completion that did happen; recognised as
 * long as the job's record is kept); FLEET_ESTALE (the claim is no longer
 * held: nothing changed); FLEET_ENOTFOUND (no such job); FLEET_ECANCELED
 * (its job was cancelled while it ran: it ended as dead, "cancelled",
 * instead); FLEET_ETIMEDOUT (it ran past its run deadline: it failed with
 * the timeout's error instead). Same return codes as
 * fleet_queue_refresh(). */
FLEET_EXTERN int fleet_queue_complete(fleet_queue_t *q,
                                      const fleet_claim_t *claims, size_t n,
                                      fleet_queue_batch_cb cb, void *user_data);

/* fleet_queue_complete() with results: `results[i]` is the result of
 * claims[i] (up to FLEET_JOB_RESULT_MAX bytes, binary-safe; an empty one
 * is a result), or has a NULL `base` for none; `results` NULL is none at
 * all. A result is kept with the completed job for the job's
 * result_ttl_ms or else the `keep_result_s` of this handle's options,
 * whatever the completed-job history keeps, and read back with
 * fleet_queue_get(); it goes out in the "completed" event (docs/queue.md,
 * "Results"). The results are copied before this returns. Returns what
 * fleet_queue_complete() returns, and FLEET_EINVAL for a result whose
 * `base` is NULL with a length, FLEET_E2BIG for a result over the limit:
 * then nothing is sent. */
FLEET_EXTERN int fleet_queue_complete_results(fleet_queue_t *q,
                                              const fleet_claim_t *claims,
                                              const fleet_bytes_t *results,
                                              size_t n, fleet_queue_batch_cb cb,
                                              void *user_data);

/* Reports the progress of a running job, a claim still held: `pct` (0 to
 * 100) and `data` (`len` bytes, up to FLEET_JOB_PROGRESS_MAX, may be
 * empty) replace its last report, which fleet_queue_get() reads for
 * `keep_result_s` after it, and a "progress" event goes to the queue's
 * subscribers (fleet_queue_events_start()). The callback gets 0,
 * FLEET_ESTALE (the claim is not held: recovered, or another holds the
 * job), FLEET_EALREADY (that claim ended) or FLEET_ENOTFOUND. Returns 0,
 * FLEET_EINVAL (NULL argument, a bad claim, pct over 100, `data` NULL
 * with a length), FLEET_E2BIG (data or id too long), FLEET_ECLOSING or
 * FLEET_ENOMEM; on error nothing is written. A worker's handler uses
 * fleet_job_progress(). */
FLEET_EXTERN int fleet_queue_progress(fleet_queue_t *q,
                                      const fleet_claim_t *claim, uint32_t pct,
                                      const void *data, size_t len,
                                      fleet_status_cb cb, void *user_data);

/* Hands `n` claims back: each job goes back to pending at its place, and
 * the attempt does not count. results[i] as for fleet_queue_complete().
 * Same return codes as fleet_queue_refresh(). */
FLEET_EXTERN int fleet_queue_release(fleet_queue_t *q,
                                     const fleet_claim_t *claims, size_t n,
                                     fleet_queue_batch_cb cb, void *user_data);

/* Fails a claim with `error` (up to FLEET_JOB_ERROR_MAX bytes, kept as the
 * job's last error): the job runs again after its backoff, or is dead
 * once it has had max_attempts attempts. A job cancelled while it ran is
 * dead with the error "cancelled" instead (`dead` 1); one past its run
 * deadline keeps the timeout's error rather than `error`. The callback gets 0,
 * FLEET_ESTALE, FLEET_EALREADY or FLEET_ENOTFOUND as for
 * fleet_queue_complete(). Returns 0, FLEET_EINVAL, FLEET_E2BIG,
 * FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_fail(fleet_queue_t *q, const fleet_claim_t *claim,
                                  const void *error, size_t error_len,
                                  fleet_queue_fail_cb cb, void *user_data);

/* Re-queues up to 1000 jobs whose claim deadline has passed (dead past
 * max_attempts), clearing their token so that the former holder's calls
 * are stale. Safe to run from many processes at once: workers run it on a
 * timer. A claimed job whose claim, record or options fleet cannot read
 * is moved to dead (not counted in `dead`) and reported to the `error_cb`
 * of the queue's options after the callback. Returns 0, FLEET_EINVAL,
 * FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_recover(fleet_queue_t *q,
                                     fleet_queue_recover_cb cb,
                                     void *user_data);

/* ------------------------------------------------------------------------ */
/* Events (docs/queue.md, "Progress and events")                            */

/* What happened to a job: XX(name, string), the string being the kind
 * of the event's message. */
#define FLEET_EVENT_TYPE_MAP(XX)                                               \
  XX(PROGRESS, "progress")                                                     \
  XX(COMPLETED, "completed")                                                   \
  XX(FAILED, "failed")                                                         \
  XX(DEAD, "dead")                                                             \
  XX(STALLED, "stalled")                                                       \
  XX(RETRIED, "retried")                                                       \
  XX(CANCELLED, "cancelled")

typedef enum {
#define FLEET__EVENT_TYPE_ENUM(name, str) FLEET_EVENT_##name,
  FLEET_EVENT_TYPE_MAP(FLEET__EVENT_TYPE_ENUM)
#undef FLEET__EVENT_TYPE_ENUM
} fleet_event_type_t;

/* The name of an event type ("progress"); never NULL ("unknown" when out
 * of range). */
FLEET_EXTERN const char *fleet_event_type_name(fleet_event_type_t type);

/* One event. Pointers are valid until the callback returns. */
typedef struct {
  fleet_event_type_t type;
  /* The job (NUL-terminated). */
  const char *id;
  size_t id_len;
  /* When it happened, unix ms on the backend clock. */
  uint64_t time_ms;
  /* By type: PROGRESS, the percent; COMPLETED, 1 with a result, else 0;
   * FAILED, 1 when the job will be retried, 0 when it is dead (a DEAD
   * event follows); STALLED, 1 when the job went back to pending, 0 when
   * it is dead (a DEAD event follows); otherwise 0. */
  uint32_t value;
  /* By type: PROGRESS, the report's bytes; COMPLETED, the result;
   * FAILED and DEAD, the error; otherwise empty. */
  fleet_bytes_t data;
} fleet_queue_event_t;

/* An event (`status` 0), or, with FLEET_ECONNLOST and `event` NULL, the
 * notice that the subscription is live: at the start and after each
 * reconnection. Events of the time it was not are lost: read the state
 * of the jobs you follow with fleet_queue_get(). */
typedef void (*fleet_queue_event_cb)(fleet_queue_t *q, int status,
                                     const fleet_queue_event_t *event,
                                     void *user_data);

/* Subscribes `q` to the events of its queue, or of one job (`job_id`,
 * copied; NULL for all): progress, completed (with the result), failed
 * (with the error and whether it will retry), dead, stalled (a claim ran
 * out and was recovered), retried (fleet_queue_retry()) and cancelled,
 * published by the scripts that make them happen, in the order they
 * happen, from every process. While `q` is subscribed it keeps a lease in
 * the queue's limits hash, renewed every few seconds, without which the
 * scripts publish nothing (docs/queue.md, "Progress and events"). `cb`
 * runs for each event until fleet_queue_events_stop() or the close of
 * `q`. Returns 0, FLEET_EINVAL (NULL queue or callback, an empty id),
 * FLEET_E2BIG (id too long), FLEET_EALREADY (subscribed already),
 * FLEET_ECLOSING or the backend's error. */
FLEET_EXTERN int fleet_queue_events_start(fleet_queue_t *q, const char *job_id,
                                          fleet_queue_event_cb cb,
                                          void *user_data);

/* Ends the subscription: `cb` never runs after this returns. The lease
 * runs out by itself. Returns 0, FLEET_EINVAL or FLEET_EALREADY (not
 * subscribed). */
FLEET_EXTERN int fleet_queue_events_stop(fleet_queue_t *q);

/* ------------------------------------------------------------------------ */
/* Administration (the fleet CLI and dashboard use these)                   */

/* One job of a fleet_queue_jobs() page. Pointers are valid until the
 * callback returns; strings are NUL-terminated. */
typedef struct {
  const char *id;
  const char *type;
  uint32_t attempts;
  uint32_t max_attempts;
  uint64_t created_ms;
  /* By state: delayed, when it is due; running, its claim deadline;
   * completed and dead, when it finished; pending, 0 (unix ms). */
  uint64_t time_ms;
  /* The payload, cut to the `payload_max` of the call. */
  fleet_bytes_t payload;
  /* The error of the last failed attempt ("" when none). */
  const char *last_error;
  size_t last_error_len;
  /* The job's group, NULL when it has none. */
  const char *group;
} fleet_job_summary_t;

typedef void (*fleet_queue_jobs_cb)(fleet_queue_t *q, int status,
                                    const fleet_job_summary_t *jobs, size_t n,
                                    uint64_t total, uint64_t next_cursor,
                                    void *user_data);
typedef void (*fleet_queue_retry_cb)(fleet_queue_t *q, int status,
                                     uint64_t retried, void *user_data);
typedef void (*fleet_queue_paused_cb)(fleet_queue_t *q, int status, int paused,
                                      void *user_data);

/* A page of up to `limit` (1..FLEET_QUEUE_BATCH_MAX) jobs in `state`,
 * starting at `cursor` (0 for the first page; then the `next_cursor` the
 * callback got, which is 0 after the last page). Pending jobs come in
 * claim order, delayed ones by due time, running ones by id, completed
 * and dead ones newest first, flow parents waiting for their children
 * (FLEET_JOB_WAITING_CHILDREN) by id (`time_ms` 0). `total` is how many
 * jobs are in that state now (pages of a queue that changes may skip or
 * repeat jobs). Payloads are cut to `payload_max` bytes. On a
 * partitioned handle a page holds jobs of one partition, and the pages
 * walk the partitions in turn (docs/queue.md, "Partitioned queues"): a
 * page may be short, or empty, where a partition ends; `next_cursor`
 * skips the partitions that have no job in `state`, and `total` is the
 * sum of every partition's.
 * Returns 0, FLEET_EINVAL, FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_jobs(fleet_queue_t *q, fleet_job_state_t state,
                                  uint64_t cursor, size_t limit,
                                  size_t payload_max, fleet_queue_jobs_cb cb,
                                  void *user_data);

/* fleet_queue_jobs() of the pending jobs of one group (1 to
 * FLEET_JOB_GROUP_MAX bytes), in its claim order; `total` counts the
 * group's. Returns 0, FLEET_EINVAL, FLEET_E2BIG (group too long),
 * FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_group_jobs(fleet_queue_t *q, const char *group,
                                        uint64_t cursor, size_t limit,
                                        size_t payload_max,
                                        fleet_queue_jobs_cb cb,
                                        void *user_data);

/* Runs a dead job again (`id`), or every kept dead job (`id` NULL, 1000
 * per round trip): each goes back to pending with its attempts reset, so
 * it gets max_attempts new attempts; its last error stays readable until
 * its next attempt ends. The dead counter of fleet_queue_counts() keeps
 * counting it. The callback gets how many went back, or FLEET_ENOTFOUND
 * (no such job) or FLEET_EBUSY (the job is not dead). Returns 0,
 * FLEET_EINVAL, FLEET_E2BIG (id too long), FLEET_ECLOSING or
 * FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_retry(fleet_queue_t *q, const char *id,
                                   fleet_queue_retry_cb cb, void *user_data);

/* Pauses the queue: until it is resumed, no claim (a worker's or
 * fleet_queue_claim()) gets a job, and delayed jobs stay delayed; enqueues,
 * cancels, retries and the claims already running go on as usual.
 * Resuming wakes idle workers. fleet_queue_paused() only reads. The
 * callback gets whether the queue is paused after the call. Returns 0,
 * FLEET_EINVAL, FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_pause(fleet_queue_t *q, fleet_queue_paused_cb cb,
                                   void *user_data);
FLEET_EXTERN int fleet_queue_resume(fleet_queue_t *q, fleet_queue_paused_cb cb,
                                    void *user_data);
FLEET_EXTERN int fleet_queue_paused(fleet_queue_t *q, fleet_queue_paused_cb cb,
                                    void *user_data);

/* ------------------------------------------------------------------------ */
/* Flow control (docs/queue.md, "Flow control")                             */

/* The flow limits of a queue. They live in the backend with the queue, bind
 * every claim of every process (workers, fleet_queue_claim()) and are
 * checked inside the claim script on the backend clock. A field 0 is no
 * limit.
 *
 * - Rate: at most rate_max claims in any window of rate_ms ms (a sliding
 *   window: exact on the backend clock, whatever the bursts), and at most
 *   group_rate_max claims of each group in any window of group_rate_ms.
 *   Both fields of a pair are set, or neither.
 * - Concurrency: at most `concurrency` jobs of the queue claimed at once
 *   (running), and at most `group_concurrency` of each group; counted by
 *   claims, so a crashed worker's slots come back when its claims are
 *   recovered. */
typedef struct {
  uint32_t rate_max;
  uint32_t rate_ms;
  uint32_t group_rate_max;
  uint32_t group_rate_ms;
  uint32_t concurrency;
  uint32_t group_concurrency;
  /* Not a limit: the jobs a group gives per turn of the rotation, times
   * its weight (docs/queue.md, "Groups and fairness"); 0 is the default,
   * FLEET_GROUP_TURN_DEFAULT. 1 makes turns job by job, the finest
   * fairness; each turn costs the claim one command. */
  uint32_t group_turn;
} fleet_queue_limits_t;

/* fleet_queue_limits_t.group_turn when it is 0. */
#define FLEET_GROUP_TURN_DEFAULT 10

/* Limits on a window, at most (and on concurrency and a group's turn). */
#define FLEET_LIMIT_RATE_MAX 1000000u
#define FLEET_LIMIT_WINDOW_MAX_MS (24u * 3600 * 1000)

/* What flow control holds now, as fleet_queue_limits() reads it. */
typedef struct {
  /* Claims in the current rate window (0 without a rate limit). */
  uint64_t rate_used;
  /* Jobs running (claimed). */
  uint64_t running;
  /* Groups with pending jobs (in the claims' rotation). */
  uint64_t groups;
  /* Claims of the queue are held until this time (fleet_queue_hold();
   * unix ms, backend clock), 0 when they are not. */
  uint64_t held_until_ms;
} fleet_queue_flow_t;

/* One group, as fleet_queue_groups() lists it. */
typedef struct {
  const char *name;
  uint64_t pending;
  uint64_t running;
  /* Claims of the group's rate window (0 without a group rate limit). */
  uint64_t rate_used;
  /* 1 to FLEET_GROUP_WEIGHT_MAX (1 unless set). */
  uint32_t weight;
  /* Claims of the group are held until then (unix ms), 0 when not. */
  uint64_t held_until_ms;
} fleet_queue_group_t;

typedef void (*fleet_queue_limits_cb)(fleet_queue_t *q, int status,
                                      const fleet_queue_limits_t *limits,
                                      const fleet_queue_flow_t *flow,
                                      void *user_data);
/* `groups` in name order, starting after the `after` of the call. */
typedef void (*fleet_queue_groups_cb)(fleet_queue_t *q, int status,
                                      const fleet_queue_group_t *groups,
                                      size_t n, uint64_t total,
                                      void *user_data);

/* Sets the queue's limits to `*limits` (every field: a 0 clears that
 * limit), or clears them all with `limits` NULL. Claims held back by a
 * limit that went away are woken. Returns 0, FLEET_EINVAL (a rate with a
 * max but no window or a window but no max, a max or window out of
 * range), FLEET_ECLOSING or FLEET_ENOMEM; on error nothing is written. */
FLEET_EXTERN int fleet_queue_set_limits(fleet_queue_t *q,
                                        const fleet_queue_limits_t *limits,
                                        fleet_status_cb cb, void *user_data);

/* Reads the limits and what flow control holds now. */
FLEET_EXTERN int fleet_queue_limits(fleet_queue_t *q, fleet_queue_limits_cb cb,
                                    void *user_data);

/* Holds the claims of the queue (`group` NULL), or of one group, for
 * `wait_ms` ms from now on the backend clock (1 to
 * FLEET_LIMIT_WINDOW_MAX_MS; a later hold extends it, an earlier one does
 * not shorten it): what to do when an upstream says "wait N ms". A
 * worker's handler uses fleet_job_rate_limit(). Returns 0, FLEET_EINVAL,
 * FLEET_E2BIG (group too long), FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_hold(fleet_queue_t *q, const char *group,
                                  uint32_t wait_ms, fleet_status_cb cb,
                                  void *user_data);

/* Sets the weight of `group` in the claims' rotation: each turn of the
 * rotation claims up to `weight` of its jobs (1, the default, is plain
 * round-robin). Returns 0, FLEET_EINVAL (weight 0 or over
 * FLEET_GROUP_WEIGHT_MAX, empty group), FLEET_E2BIG, FLEET_ECLOSING or
 * FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_set_group_weight(fleet_queue_t *q,
                                              const char *group,
                                              uint32_t weight,
                                              fleet_status_cb cb,
                                              void *user_data);

/* Lists up to `limit` (1..FLEET_QUEUE_BATCH_MAX) groups in name order,
 * after `after` (NULL or "" for the first page): those with pending or
 * running jobs, a weight or a hold. `total` counts them all. Returns 0,
 * FLEET_EINVAL, FLEET_E2BIG, FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_groups(fleet_queue_t *q, const char *after,
                                    size_t limit, fleet_queue_groups_cb cb,
                                    void *user_data);

/* ------------------------------------------------------------------------ */
/* Flows (docs/queue.md, "Flows")                                           */

/* Children per flow, at most. */
#define FLEET_FLOW_CHILDREN_MAX 1000

/* One child of a flow: a job enqueued at once, in `queue` (NULL: the
 * parent's queue; else the name of a queue of the same client, whose keys
 * the flow's call must reach: any queue on one Redis, Sentinel or the
 * memory backend, one whose name hashes to the parent queue's slot on a
 * Redis Cluster). */
typedef struct {
  const char *queue;
  fleet_job_spec_t spec;
} fleet_flow_child_t;

/* A flow: a parent job that runs once all its children ended, and the
 * children. Fill with fleet_flow_spec_init(). fleet does not take
 * ownership of anything it points to; it is only read during the call. */
typedef struct {
  /* The parent. It waits in the state FLEET_JOB_WAITING_CHILDREN (no
   * claim sees it) until its children ended, then is pending at its
   * priority. It may not be delayed (delay_ms, run_at_ms 0) nor have a
   * unique key or a group. */
  fleet_job_spec_t parent;
  /* 1 to FLEET_FLOW_CHILDREN_MAX children. Their specs follow the rules of
   * fleet_queue_enqueue(), without a unique key. Given ids must differ
   * from each other and from the parent's within one queue. */
  const fleet_flow_child_t *children;
  size_t n_children;
  /* 0 (default): a child that dies (dead after its attempts, or
   * cancelled) makes the parent dead at once, with the error "child <id>
   * died". 1: a dead child counts as ended, and the parent runs once the
   * others ended too (fleet_queue_children() tells which died). */
  int ignore_child_death;
} fleet_flow_spec_t;

/* Fills `flow` with the defaults: a parent spec of fleet_job_spec_init()
 * with the given type and payload (neither is copied), no children, a
 * child's death fails the parent. */
FLEET_EXTERN void fleet_flow_spec_init(fleet_flow_spec_t *flow,
                                       const char *type, const void *payload,
                                       size_t len);

/* What fleet_queue_add_flow() made. Pointers are valid until the callback
 * returns. */
typedef struct {
  /* The parent's id. */
  const char *parent_id;
  /* The children's ids, in the order of the spec's children. */
  const char *const *child_ids;
  size_t n_children;
  /* With FLEET_EEXIST: the given id of a job that exists already. */
  const char *existing_id;
} fleet_flow_result_t;

/* One child as fleet_queue_children() reads it. Pointers are valid until
 * the callback returns. */
typedef struct {
  /* The child's queue's name, and its id. */
  const char *queue;
  const char *id;
  /* FLEET_JOB_PENDING while it has not ended (pending, delayed or
   * running: fleet_queue_get() on its queue tells which),
   * FLEET_JOB_COMPLETED or FLEET_JOB_DEAD (dead or cancelled). */
  fleet_job_state_t state;
  /* The result its completion handed over (empty when none). */
  fleet_bytes_t result;
} fleet_flow_child_info_t;

/* `result` is NULL unless status is 0 or FLEET_EEXIST. */
typedef void (*fleet_queue_flow_cb)(fleet_queue_t *q, int status,
                                    const fleet_flow_result_t *result,
                                    void *user_data);
/* `waiting`: the children not ended yet; `fail_on_death`: 1 unless the
 * flow ignores its children's deaths. */
typedef void (*fleet_queue_children_cb)(fleet_queue_t *q, int status,
                                        const fleet_flow_child_info_t *kids,
                                        size_t n, size_t waiting,
                                        int fail_on_death, void *user_data);

/* Adds a flow in one round trip, atomically: the parent (in `q`) and all
 * its children, or nothing. Each child is enqueued as
 * fleet_queue_enqueue() enqueues a job (it wakes its queue's workers) and
 * linked to the parent; when a child completes, its result (none yet: an
 * empty one) is kept for the parent, and when the last one ended the
 * parent becomes pending and wakes the workers of `q`. The parent's
 * handler reads its children's results with fleet_queue_children().
 *
 * Returns 0, FLEET_EINVAL (NULL argument, no children or more than
 * FLEET_FLOW_CHILDREN_MAX, a bad spec, a parent delayed or with a unique
 * key or group, a child with a unique key, a bad queue name, a given id
 * repeated in one queue: a flow has no cycle), FLEET_E2BIG, FLEET_ECROSSSLOT
 * (on a Redis Cluster, a child's queue in another slot than `q`'s: see
 * docs/queue.md, "Flows"), FLEET_ECLOSING or FLEET_ENOMEM; then nothing is
 * written. The callback gets 0, FLEET_EEXIST (a given id exists already in
 * its queue: `result->existing_id`; nothing was written) or a backend
 * error. */
FLEET_EXTERN int fleet_queue_add_flow(fleet_queue_t *q,
                                      const fleet_flow_spec_t *flow,
                                      fleet_queue_flow_cb cb, void *user_data);

/* Reads the children of the flow whose parent is job `id` of `q`: their
 * queues, ids, states and results, in the order the flow gave them. They
 * are kept until the parent ends (completed, dead or cancelled). The
 * callback gets 0, FLEET_ENOTFOUND (no such parent, or it ended) or a
 * backend error. Returns 0, FLEET_EINVAL, FLEET_E2BIG, FLEET_ECLOSING or
 * FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_children(fleet_queue_t *q, const char *id,
                                      fleet_queue_children_cb cb,
                                      void *user_data);

/* ------------------------------------------------------------------------ */
/* One job's verbs, removing a queue                                        */

/* Completion of fleet_queue_delete_job(), fleet_queue_run_job() and
 * fleet_queue_kill_job(): `was` is the state the job was in before the
 * call (meaningful when `status` is 0). */
typedef void (*fleet_queue_job_verb_cb)(fleet_queue_t *q, int status,
                                        fleet_job_state_t was, void *user_data);

/* Deletes job `id` in any state but running, atomically: pending, delayed,
 * waiting for its children (a flow's parent), completed or dead, with
 * every record fleet keeps of it (its data, options, last error, timeout,
 * unique key when it still holds it, result and progress). A job deleted
 * before it ran goes as fleet_queue_cancel_job() deletes one (a
 * "cancelled" event; a flow's child counts as dead for its parent, a
 * parent's flow state goes, its children left as they are); a completed
 * or dead one leaves the kept list (`completed_kept`, `dead_kept`), and
 * the lifetime counters `completed` and `dead` stay, as with
 * fleet_queue_purge(). The callback gets 0 and the state it was in,
 * FLEET_ENOTFOUND (no such job), FLEET_EBUSY (it is running: cancel it
 * with fleet_queue_cancel_job(); nothing was written) or a backend error.
 * Returns 0, FLEET_EINVAL (NULL argument, empty id), FLEET_E2BIG (id too
 * long), FLEET_ECLOSING or FLEET_ENOMEM; then the callback never runs. */
FLEET_EXTERN int fleet_queue_delete_job(fleet_queue_t *q, const char *id,
                                        fleet_queue_job_verb_cb cb,
                                        void *user_data);

/* Runs job `id` now: a delayed job goes to pending at once (at the end of
 * its priority's order, in its group), a dead one as fleet_queue_retry()
 * runs one job again (attempts reset, last error kept, a "retried"
 * event); either wakes idle workers. A pending job is left as it is: the
 * callback gets 0 and FLEET_JOB_PENDING. The callback gets 0 and the
 * state it was in, FLEET_ENOTFOUND, FLEET_EBUSY (running, or a flow's
 * parent waiting for its children), FLEET_EALREADY (it completed) or a
 * backend error. Same return codes as fleet_queue_delete_job(). */
FLEET_EXTERN int fleet_queue_run_job(fleet_queue_t *q, const char *id,
                                     fleet_queue_job_verb_cb cb,
                                     void *user_data);

/* Moves job `id`, pending, delayed or waiting for its children, to dead
 * with the error "killed", as a job whose last attempt failed: the dead
 * counter and kept list get it, a unique key held until it ends is
 * released, a flow's child counts as dead for its parent, and a "dead"
 * event is published. It can be run again (fleet_queue_run_job(),
 * fleet_queue_retry()). The callback gets 0 and the state it was in,
 * FLEET_ENOTFOUND, FLEET_EBUSY (it is running: cancel it instead; a
 * cancelled job ends dead too), FLEET_EALREADY (it completed or is dead)
 * or a backend error. Same return codes as fleet_queue_delete_job(). */
FLEET_EXTERN int fleet_queue_kill_job(fleet_queue_t *q, const char *id,
                                      fleet_queue_job_verb_cb cb,
                                      void *user_data);

/* Completion of fleet_queue_remove(): `keys` deleted, and the `jobs`
 * pending, delayed, running or waiting for children that went with them
 * (0 unless forced). */
typedef void (*fleet_queue_remove_cb)(fleet_queue_t *q, int status,
                                      uint64_t keys, uint64_t jobs,
                                      void *user_data);

/* Removes the queue of `q` from the backend, atomically: every key of its
 * key schema (docs/queue.md, "Removing a queue") but its fencing
 * counter, which stays so that claim tokens never repeat should the name
 * be used again; it no longer appears in fleet_client_scan_names(). It
 * is refused while jobs are pending, delayed, running or waiting for
 * their children, unless `force` is 1. With force, children of flows
 * whose parents are in another queue count as dead for them, and the
 * workers still holding claims of the queue find them gone: heartbeats
 * answer stale (the worker reports the claim lost), and a completion,
 * failure or release answers that the job does not exist. The handle
 * stays open and usable: an enqueue makes the queue again. The script
 * reads every job id the queue holds: it holds the server in proportion
 * to them.
 *
 * A partitioned handle removes the whole partitioned queue, one script
 * per partition (so not atomically as a whole), in up to three round
 * trips, each to every partition at once: without force, every
 * partition's counts first, and FLEET_EBUSY if any has jobs pending,
 * delayed, running or waiting (nothing was written); then each
 * partition's queue is removed as above; then, last, the partition
 * count's record (fleet_queue_partitions()), after which the queue is
 * no longer listed. A job enqueued between the check and the removal
 * (without force) makes its partition's removal refuse: the callback
 * gets FLEET_EBUSY, the partitions removed before stay removed, and
 * that job's partition and the record stay, so the queue is still
 * listed and the call can be made again. Any failure part-way likewise
 * leaves the record, and the queue listed. The callback gets the keys
 * and jobs of every partition added up (the record counts as a key).
 *
 * The callback gets 0, FLEET_ENOTFOUND (no such queue: for a
 * partitioned handle, no partition and no record), FLEET_EBUSY (jobs
 * left and no force; nothing was written, but see above for a partition
 * that got a job since the check) or a backend error. Returns 0,
 * FLEET_EINVAL (NULL argument, `force` other than 0 or 1),
 * FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_queue_remove(fleet_queue_t *q, int force,
                                    fleet_queue_remove_cb cb, void *user_data);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_QUEUE_H */
