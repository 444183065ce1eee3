/* test_queue_util.h -- a queue handle on a client of its own loop, and one
 * blocking helper per queue call (it runs the loop until the callback),
 * shared by the queue and worker tests. */
#ifndef FLEET_TEST_QUEUE_UTIL_H
#define FLEET_TEST_QUEUE_UTIL_H

#include "client_ctx.h"

/* A claimed job, copied out of its callback. */
typedef struct {
  char id[FLEET_JOB_ID_MAX + 1];
  char type[FLEET_JOB_TYPE_MAX + 1];
  char payload[256];
  size_t payload_len;
  uint32_t attempts;
  uint32_t max_attempts;
  uint64_t token;
  uint64_t deadline_ms;
  /* The job's group, "" when it has none. */
  char group[FLEET_JOB_GROUP_MAX + 1];
  /* Its run deadline, 0 when it has no timeout. */
  uint64_t run_deadline_ms;
  /* Its packed headers (fleet_job_t.headers), headers_len 0: none. */
  char headers[FLEET_JOB_HEADERS_BYTES_MAX];
  size_t headers_len;
} qt_job_t;

/* A client on its own loop and a queue handle on it. */
typedef struct {
  client_ctx_t c;
  fleet_queue_t q;
  int closed;
  /* What the last call's callback saw. */
  int status;
  int done;
  fleet_claim_info_t claim_info;
  fleet_recover_info_t recover_info;
  fleet_queue_counts_t counts;
  int dead;
  uint64_t retry_at;
  uint64_t removed;
  fleet_cancel_result_t cancel_result;
  /* The group of the job qt_get() read (its info's group points here). */
  char get_group[FLEET_JOB_GROUP_MAX + 1];
  /* Copies of the result and progress bytes qt_get() read (its info's
   * result and progress_data point here). */
  char get_result[1024];
  char get_progress[FLEET_JOB_PROGRESS_MAX + 1];
  /* A copy of the packed headers qt_get() read (its info's point here). */
  char get_headers[FLEET_JOB_HEADERS_BYTES_MAX];
  /* A copy of the attempt history qt_get() read (its info's errors point
   * here): at most 8 KiB of entries, and the newest one's error of up to
   * FLEET_JOB_ERROR_KEPT_MAX bytes beside them. */
  char get_errors[8192 + FLEET_JOB_ERROR_KEPT_MAX + 64];
} qt_t;

/* Opens the client (on `url`, prefix "qt") and the queue `name` with
 * `opts` (NULL for the defaults). */
void qt_open(qt_t *t, const char *url, const char *name,
             const fleet_queue_options_t *opts);

/* The command timeout of the clients qt_open() makes from now on (0: the
 * default). */
void qt_set_command_timeout(uint32_t ms);

/* The same with another key prefix. */
void qt_open_prefix(qt_t *t, const char *url, const char *prefix,
                    const char *name, const fleet_queue_options_t *opts);

/* Closes the queue, then the client, and checks the loop closes. */
void qt_close(qt_t *t);

/* Runs the loop until the pending call's callback ran; fails the test when
 * it does not run within FLEET_TEST_WAIT_MS (scaled). */
void qt_wait(qt_t *t);

/* Enqueues `n` specs; `status[i]` and `ids[i]` (each at least
 * FLEET_JOB_ID_MAX + 1 bytes, or NULL) get each job's result. Returns the
 * callback's status. */
int qt_enqueue(qt_t *t, const fleet_job_spec_t *specs, size_t n, int *status,
               char (*ids)[FLEET_JOB_ID_MAX + 1]);

/* Enqueues one job of `type` with `payload` (a string) and the defaults
 * otherwise, asserts it was added, and writes its id to `id`. */
void qt_add(qt_t *t, const char *type, const char *payload, char *id);

/* Claims up to `n` jobs into `jobs`; returns how many, or a negative
 * callback status. `t->claim_info` gets the info. */
int qt_claim(qt_t *t, size_t n, uint32_t ttl_ms, qt_job_t *jobs);

/* The batch calls: `results` (n entries, or NULL) gets the per-claim
 * results; returns the callback's status. */
int qt_refresh(qt_t *t, const fleet_claim_t *claims, size_t n, uint32_t ttl,
               int *results);
int qt_complete(qt_t *t, const fleet_claim_t *claims, size_t n, int *results);
int qt_release(qt_t *t, const fleet_claim_t *claims, size_t n, int *results);
/* fleet_queue_complete_results(); `out` as `results` above. */
int qt_complete_results(qt_t *t, const fleet_claim_t *claims,
                        const fleet_bytes_t *res, size_t n, int *out);
/* fleet_queue_progress(). */
int qt_progress(qt_t *t, const fleet_claim_t *claim, uint32_t pct,
                const void *data, size_t len);

/* One claim of `job`, as fleet_claim_t. */
fleet_claim_t qt_claim_of(const qt_job_t *job);

/* Fails one claim; `t->dead` and `t->retry_at` get the outcome. */
int qt_fail(qt_t *t, const fleet_claim_t *claim, const char *error);

int qt_recover(qt_t *t);
int qt_get(qt_t *t, const char *id, fleet_job_info_t *info, char *payload_out,
           size_t payload_cap, char *error_out, size_t error_cap);
int qt_cancel(qt_t *t, const char *id);
/* fleet_queue_cancel_job(); `t->cancel_result` gets the result. */
int qt_cancel_job(qt_t *t, const char *id, uint32_t grace_ms);
int qt_counts(qt_t *t);
/* Lists up to `limit` ids of `type` into `ids`; `*total` gets the total. */
int qt_list(qt_t *t, const char *type, size_t limit,
            char (*ids)[FLEET_JOB_ID_MAX + 1], size_t *n, uint64_t *total);
int qt_purge(qt_t *t, fleet_job_state_t which);
/* fleet_queue_retry() of dead job `id` (NULL: all); `t->removed` gets how
 * many went back. */
int qt_retry(qt_t *t, const char *id);
/* fleet_queue_set_limits(); `limits` NULL clears them. */
int qt_set_limits(qt_t *t, const fleet_queue_limits_t *limits);

/* Sleeps on the loop for `ms` (not scaled), running whatever else is
 * due. */
void qt_sleep(qt_t *t, uint64_t ms);

/* The backend clock, in ms. */
uint64_t qt_now_ms(qt_t *t);

#endif /* FLEET_TEST_QUEUE_UTIL_H */
