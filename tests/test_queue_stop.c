/* test_queue_stop.c -- cancelling a running job and the maximum run time
 * (docs/queue.md, "Cancelling a running job", "Maximum run time"), through
 * the queue's calls and through a worker, on both backends: a cancelled
 * claim is told at its heartbeat and ends as dead ("cancelled") when its
 * holder completes, fails or releases it, or at the grace's end by
 * recovery, and a zombie's late call is stale; a job with a timeout gets a
 * run deadline its claim cannot outlive, fails with the timeout's error
 * (retried by its backoff, then dead), and a worker's handler hears both. */
#include "test_queue_util.h"

/* Reads job `id` and checks it is dead with the error `error`. */
static void life_check_dead(qt_t *t, const char *id, const char *error) {
  fleet_job_info_t info;
  char err[128];

  ASSERT_OK(qt_get(t, id, &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_STR_EQ(error, err);
  ASSERT_UGT(info.finished_ms, 0);
}

/* On Redis, checks that field `cxl` of the queue's T:limits is there or
 * not (`want`): completions and releases look for marked claims while it
 * is (with `tmo`); it goes with the last cancel of a running job. */
static void life_check_cxl(fleet_test_backend_t *b, int want) {
  redisReply *r;

  if (b->redis == NULL)
    return;
  r = fleet_test_redis_cmd(b->redis, "HEXISTS {qt:cancel}:limits cxl");
  ASSERT_EQ(want, r->integer);
  freeReplyObject(r);
}

/* Enqueues one job with `timeout_ms` (0: none), one attempt more after a
 * failure at most `max` in all, 1 ms apart; `id` gets its id. */
static void life_add(qt_t *t, uint32_t timeout_ms, uint32_t max, char *id) {
  fleet_job_spec_t spec;
  char ids[1][FLEET_JOB_ID_MAX + 1];
  int st[1];

  fleet_job_spec_init(&spec, "life", "x", 1);
  spec.timeout_ms = timeout_ms;
  spec.max_attempts = max;
  spec.backoff = FLEET_BACKOFF_FIXED;
  spec.backoff_ms = 1;
  spec.backoff_jitter_pct = 0;
  ASSERT_OK(qt_enqueue(t, &spec, 1, st, ids));
  ASSERT_OK(st[0]);
  snprintf(id, FLEET_JOB_ID_MAX + 1, "%s", ids[0]);
}

CONFORMANCE_IMPL(queue_cancel_running) {
  fleet_job_spec_t spec;
  fleet_claim_t claims[3];
  fleet_job_info_t info;
  qt_job_t jobs[3];
  char id[4][FLEET_JOB_ID_MAX + 1];
  int res[3], st[1];
  qt_t t;

  qt_open(&t, b->url, "cancel", NULL);
  /* The first holds a unique key, which its cancel frees. */
  fleet_job_spec_init(&spec, "life", "x", 1);
  spec.unique_key = "k";
  spec.unique_ttl_ms = 600000;
  ASSERT_OK(qt_enqueue(&t, &spec, 1, st, id));
  ASSERT_OK(st[0]);
  qt_add(&t, "life", "y", id[1]);
  qt_add(&t, "life", "z", id[2]);
  ASSERT_EQ(3, qt_claim(&t, 3, 60000, jobs));
  for (int i = 0; i < 3; i++) {
    claims[i] = qt_claim_of(&jobs[i]);
    ASSERT_UEQ(0, jobs[i].run_deadline_ms);
  }

  /* Out of range: refused, nothing asked. */
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_cancel_job(&t.q, jobs[0].id,
                                    FLEET_QUEUE_CANCEL_GRACE_MAX_MS + 1, NULL,
                                    NULL));
  ASSERT_OK(qt_refresh(&t, claims, 3, 60000, res));
  ASSERT_OK(res[0]);

  /* A running job: its cancel is requested, again as often as asked. */
  life_check_cxl(b, 0);
  ASSERT_OK(qt_cancel_job(&t, jobs[0].id, 60000));
  ASSERT_EQ(FLEET_CANCEL_REQUESTED, t.cancel_result);
  life_check_cxl(b, 1);
  ASSERT_OK(qt_cancel_job(&t, jobs[0].id, 60000));
  ASSERT_EQ(FLEET_CANCEL_REQUESTED, t.cancel_result);
  ASSERT_OK(qt_get(&t, jobs[0].id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_RUNNING, info.state);
  /* The heartbeat tells the holder; the others are refreshed. */
  ASSERT_OK(qt_refresh(&t, claims, 3, 60000, res));
  ASSERT_ERR(FLEET_ECANCELED, res[0]);
  ASSERT_OK(res[1]);
  ASSERT_OK(res[2]);
  /* Its completion ends it as cancelled; a late one is stale. */
  ASSERT_OK(qt_complete(&t, claims, 1, res));
  ASSERT_ERR(FLEET_ECANCELED, res[0]);
  life_check_dead(&t, jobs[0].id, "cancelled");
  ASSERT_OK(qt_complete(&t, claims, 1, res));
  ASSERT_ERR(FLEET_ESTALE, res[0]);
  ASSERT_ERR(FLEET_EALREADY, qt_cancel_job(&t, jobs[0].id, 0));
  /* Its unique key went with it. */
  ASSERT_OK(qt_enqueue(&t, &spec, 1, st, NULL));
  ASSERT_OK(st[0]);

  /* A failure of a cancelled job: dead, cancelled, not retried. */
  ASSERT_OK(qt_cancel(&t, jobs[1].id));
  ASSERT_OK(qt_fail(&t, &claims[1], "boom"));
  ASSERT_EQ(1, t.dead);
  life_check_dead(&t, jobs[1].id, "cancelled");
  ASSERT_ERR(FLEET_ESTALE, qt_fail(&t, &claims[1], "late"));

  /* A release too. */
  ASSERT_OK(qt_cancel_job(&t, jobs[2].id, 0));
  ASSERT_EQ(FLEET_CANCEL_REQUESTED, t.cancel_result);
  ASSERT_OK(qt_release(&t, &claims[2], 1, res));
  ASSERT_ERR(FLEET_ECANCELED, res[0]);
  life_check_dead(&t, jobs[2].id, "cancelled");
  /* No cancel is left: completions no longer look for marks. */
  life_check_cxl(b, 0);

  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(3, t.counts.dead);
  ASSERT_UEQ(0, t.counts.running);
  ASSERT_UEQ(1, t.counts.pending);
  /* A pending job is deleted, as before. */
  qt_add(&t, "life", "p", id[3]);
  ASSERT_OK(qt_cancel_job(&t, id[3], 0));
  ASSERT_EQ(FLEET_CANCEL_DELETED, t.cancel_result);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, id[3], &info, NULL, 0, NULL, 0));
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_cancel_grace) {
  fleet_claim_t claim;
  qt_job_t job;
  char id[FLEET_JOB_ID_MAX + 1];
  uint64_t at, grace = fleet_test_ms(200);
  int res[1];
  qt_t t;

  qt_open(&t, b->url, "grace", NULL);
  qt_add(&t, "life", "x", id);
  ASSERT_EQ(1, qt_claim(&t, 1, 600000, &job));
  claim = qt_claim_of(&job);
  at = qt_now_ms(&t);
  ASSERT_OK(qt_cancel_job(&t, id, (uint32_t)grace));
  /* The holder never finishes: until the grace passes, recovery leaves
   * it; then it ends it as cancelled. */
  ASSERT_OK(qt_recover(&t));
  if (qt_now_ms(&t) < at + grace)
    ASSERT_UEQ(0, t.recover_info.dead);
  /* A heartbeat does not move a cancelled claim's deadline. */
  ASSERT_OK(qt_refresh(&t, &claim, 1, 600000, res));
  ASSERT_ERR(FLEET_ECANCELED, res[0]);
  qt_sleep(&t, grace + 20);
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.dead);
  ASSERT_UEQ(0, t.recover_info.requeued);
  life_check_dead(&t, id, "cancelled");
  /* The zombie's late completion is refused. */
  ASSERT_OK(qt_complete(&t, &claim, 1, res));
  ASSERT_ERR(FLEET_ESTALE, res[0]);
  ASSERT_OK(qt_refresh(&t, &claim, 1, 600000, res));
  ASSERT_ERR(FLEET_ESTALE, res[0]);
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_timeout) {
  fleet_job_info_t info;
  fleet_claim_t claim, c2[2];
  qt_job_t jobs[2];
  char id[3][FLEET_JOB_ID_MAX + 1], err[128];
  uint64_t tmo = fleet_test_ms(150);
  int res[2];
  qt_t t;

  qt_open(&t, b->url, "timeout", NULL);
  /* A job with a timeout and one without. */
  life_add(&t, (uint32_t)tmo, 2, id[0]);
  life_add(&t, 0, 2, id[1]);
  ASSERT_EQ(2, qt_claim(&t, 2, 600000, jobs));
  ASSERT_STR_EQ(id[0], jobs[0].id);
  ASSERT_UEQ(t.claim_info.now_ms + tmo, jobs[0].run_deadline_ms);
  ASSERT_UEQ(0, jobs[1].run_deadline_ms);
  ASSERT_STR_EQ("", jobs[0].group);
  c2[0] = qt_claim_of(&jobs[0]);
  c2[1] = qt_claim_of(&jobs[1]);
  /* Heartbeats: both held, the first no further than its run deadline. */
  ASSERT_OK(qt_refresh(&t, c2, 2, 600000, res));
  ASSERT_OK(res[0]);
  ASSERT_OK(res[1]);
  qt_sleep(&t, tmo + 20);
  /* Past its run deadline, a completion fails it with the timeout's
   * error; the other completes. */
  ASSERT_OK(qt_complete(&t, c2, 2, res));
  ASSERT_ERR(FLEET_ETIMEDOUT, res[0]);
  ASSERT_OK(res[1]);
  ASSERT_OK(qt_get(&t, id[0], &info, NULL, 0, err, sizeof(err)));
  ASSERT(info.state == FLEET_JOB_DELAYED || info.state == FLEET_JOB_PENDING);
  ASSERT_UEQ(1, info.attempts);
  {
    char want[64];
    snprintf(want, sizeof(want), "timed out after %llu ms",
             (unsigned long long)tmo);
    ASSERT_STR_EQ(want, err);
    ASSERT_OK(qt_complete(&t, c2, 1, res));
    ASSERT_ERR(FLEET_ESTALE, res[0]);

    /* Its retry has a new run deadline; nobody finishes it: recovery
     * fails it past that, and it is dead after its 2 attempts. */
    qt_sleep(&t, 5);
    ASSERT_EQ(1, qt_claim(&t, 1, 600000, jobs));
    ASSERT_STR_EQ(id[0], jobs[0].id);
    ASSERT_EQ(2, jobs[0].attempts);
    ASSERT_UEQ(t.claim_info.now_ms + tmo, jobs[0].run_deadline_ms);
    claim = qt_claim_of(&jobs[0]);
    /* (Recovery waits a grace of 1 s past the run deadline for the
     * holder's finish, lib/queue_stop.lua.) */
    qt_sleep(&t, tmo + 1100);
    ASSERT_OK(qt_recover(&t));
    ASSERT_UEQ(1, t.recover_info.dead);
    life_check_dead(&t, id[0], want);
    ASSERT_OK(qt_complete(&t, &claim, 1, res));
    ASSERT_ERR(FLEET_ESTALE, res[0]);
  }

  /* Within its run time a job with a timeout completes as any. */
  life_add(&t, 600000, 1, id[2]);
  ASSERT_EQ(1, qt_claim(&t, 1, 600000, jobs));
  claim = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &claim, 1, res));
  ASSERT_OK(res[0]);

  /* A failure past the run deadline records the timeout's error. */
  life_add(&t, (uint32_t)tmo, 1, id[2]);
  ASSERT_EQ(1, qt_claim(&t, 1, 600000, jobs));
  claim = qt_claim_of(&jobs[0]);
  qt_sleep(&t, tmo + 20);
  ASSERT_OK(qt_fail(&t, &claim, "mine"));
  ASSERT_EQ(1, t.dead);
  ASSERT_OK(qt_get(&t, id[2], &info, NULL, 0, err, sizeof(err)));
  ASSERT(strncmp(err, "timed out after ", 16) == 0);
  /* A recovery of a claim that expired before its run deadline (its
   * worker died) re-queues it as before. */
  life_add(&t, 600000, 3, id[2]);
  ASSERT_EQ(1, qt_claim(&t, 1, (uint32_t)fleet_test_ms(50), jobs));
  qt_sleep(&t, fleet_test_ms(50) + 20);
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.requeued);
  ASSERT_OK(qt_get(&t, id[2], &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  ASSERT_STR_EQ("claim expired", err);
  qt_close(&t);
}

/* ------------------------------------------------------------------------ */
/* A worker's handler hears it                                              */

typedef struct {
  qt_t t;     /* the worker's client */
  qt_t other; /* another client: the canceller */
  fleet_worker_t w;
  fleet_job_cancel_t why;
  int handled, told, done, done_status, closed;
  fleet_job_action_t action;
  char id[FLEET_JOB_ID_MAX + 1];
} life_w_t;

static void life_on_cancel(fleet_job_t *job, fleet_job_cancel_t why,
                           void *arg) {
  life_w_t *lw = arg;

  lw->told++;
  lw->why = why;
  ASSERT_EQ(why, fleet_job_cancelled(job));
  /* The handler finishes it now: a cancel as a complete, a timeout as a
   * failure. */
  if (why == FLEET_JOB_CANCEL_REQUESTED)
    ASSERT_OK(fleet_job_complete(job));
  else
    ASSERT_OK(fleet_job_fail(job, "stopped", 7));
  /* Finished: no callback may be asked for any more. */
  ASSERT_ERR(FLEET_EINVAL, fleet_job_on_cancel(job, life_on_cancel, arg));
}

static void life_handler(fleet_worker_t *w, fleet_job_t *job) {
  life_w_t *lw = w->data;

  snprintf(lw->id, sizeof(lw->id), "%s", job->id);
  lw->handled++;
  ASSERT_EQ(FLEET_JOB_CANCEL_NONE, fleet_job_cancelled(job));
  ASSERT_ERR(FLEET_EINVAL, fleet_job_on_cancel(NULL, life_on_cancel, lw));
  ASSERT_EQ(FLEET_JOB_CANCEL_NONE, fleet_job_cancelled(NULL));
  ASSERT_OK(fleet_job_on_cancel(job, life_on_cancel, lw));
}

static void life_done(fleet_worker_t *w, fleet_job_t *job,
                      fleet_job_action_t action, int status) {
  life_w_t *lw = w->data;

  lw->done++;
  lw->action = action;
  lw->done_status = status;
}

static void life_on_closed(fleet_handle_t *h) {
  ((life_w_t *)h->data)->closed++;
}

CONFORMANCE_IMPL(worker_cancel_timeout) {
  fleet_worker_options_t o;
  life_w_t lw;
  char id[FLEET_JOB_ID_MAX + 1], want[64];
  uint64_t tmo = fleet_test_ms(150);

  memset(&lw, 0, sizeof(lw));
  qt_open(&lw.t, b->url, "wlife", NULL);
  fleet_worker_options_init(&o);
  o.done_cb = life_done;
  o.poll_ms = 60000;
  /* No heartbeat before the test ends: the message alone tells. */
  o.claim_ttl_ms = 600000;
  lw.w.data = &lw;
  ASSERT_OK(fleet_worker_init(&lw.t.c.client, &lw.w, "wlife", &o));
  ASSERT_OK(fleet_worker_start(&lw.w, life_handler));

  /* A cancel reaches the handler, whose completion
   * ends the job as cancelled. */
  qt_add(&lw.t, "life", "x", id);
  ASSERT(fleet_test_wait_count(&lw.t.c.loop, &lw.handled, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_STR_EQ(id, lw.id);
  ASSERT_OK(qt_cancel_job(&lw.t, id, 60000));
  ASSERT_EQ(FLEET_CANCEL_REQUESTED, lw.t.cancel_result);
  ASSERT(fleet_test_wait_count(&lw.t.c.loop, &lw.done, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(1, lw.told);
  ASSERT_EQ(FLEET_JOB_CANCEL_REQUESTED, lw.why);
  ASSERT_EQ(FLEET_JOB_COMPLETE, lw.action);
  ASSERT_ERR(FLEET_ECANCELED, lw.done_status);
  life_check_dead(&lw.t, id, "cancelled");

  /* A job with a timeout: the handler is told at its run deadline and
   * fails it; the job keeps the timeout's error. */
  life_add(&lw.t, (uint32_t)tmo, 1, id);
  ASSERT(fleet_test_wait_count(&lw.t.c.loop, &lw.done, 2,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_STR_EQ(id, lw.id);
  ASSERT_EQ(2, lw.told);
  ASSERT_EQ(FLEET_JOB_CANCEL_TIMEOUT, lw.why);
  ASSERT_EQ(FLEET_JOB_FAIL, lw.action);
  ASSERT_OK(lw.done_status);
  snprintf(want, sizeof(want), "timed out after %llu ms",
           (unsigned long long)tmo);
  life_check_dead(&lw.t, id, want);

  ASSERT_OK(fleet_worker_close(&lw.w, life_on_closed));
  ASSERT(fleet_test_wait_count(&lw.t.c.loop, &lw.closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  qt_close(&lw.t);
}
