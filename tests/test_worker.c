/* test_worker.c -- the worker on both adapters: processing with a
 * concurrency, asynchronous handlers, wake-up without polling, delayed jobs
 * on time, retries, heartbeats, lost claims, graceful stop, close from a
 * handler and bad input. */
#include "test_queue_util.h"

/* What a test's worker saw. */
typedef struct {
  qt_t t; /* the client, and a producer queue on it */
  fleet_worker_t w;
  int handled, handled_again, completed, done_other, lost, stopped, closed;
  int last_done_status, last_lost_status, stop_status;
  int max_active;
  /* Handler behaviour. */
  uint64_t work_ms; /* finish after this (a timer); 0: at once */
  int hold;         /* keep jobs until the test finishes them */
  int fail_first;   /* fail the first attempt of each job */
  int close_in_handler;
  int complete_in_lost;
  /* Check at the finish each job's group against its payload (see
   * worker_job_group), counted in groups_checked. */
  int check_group;
  int groups_checked;
  fleet_job_t *held[16];
  int nheld;
  int active;
} wt_t;

/* A job's work: a timer, then complete (or fail). */
typedef struct {
  uv_timer_t timer;
  fleet_job_t *job;
  wt_t *wt;
} wt_work_t;

static void wt_on_work_closed(uv_handle_t *h) {
  free(h->data);
}

/* A job of worker_job_group: payload "-" has no group, payload K is in
 * group "grp-K". */
static void wt_check_group(wt_t *wt, const fleet_job_t *job) {
  char want[32];

  snprintf(want, sizeof(want), "grp-%.*s", (int)job->payload.len,
           (const char *)job->payload.base);
  if (strcmp(want, "grp--") == 0) {
    ASSERT_NULL(job->group);
    ASSERT_EQ(0, job->group_len);
  } else {
    ASSERT_NOT_NULL(job->group);
    ASSERT_STR_EQ(want, job->group);
    ASSERT_EQ(strlen(want), job->group_len);
  }
  wt->groups_checked++;
}

static void wt_finish(wt_t *wt, fleet_job_t *job) {
  wt->active--;
  if (wt->check_group)
    wt_check_group(wt, job);
  if (wt->fail_first && job->attempts == 1)
    ASSERT_OK(fleet_job_fail(job, "first attempt fails", 19));
  else
    ASSERT_OK(fleet_job_complete(job));
  /* Finished once: a second finish is refused. */
  ASSERT_ERR(FLEET_EINVAL, fleet_job_complete(job));
}

static void wt_on_work(uv_timer_t *timer) {
  wt_work_t *work = timer->data;
  wt_finish(work->wt, work->job);
  uv_close((uv_handle_t *)timer, wt_on_work_closed);
}

static void wt_on_stop(fleet_handle_t *w_h, int status, void *user_data);

static void wt_handler(fleet_worker_t *w, fleet_job_t *job) {
  wt_t *wt = w->data;
  wt_work_t *work;

  ASSERT_PTR_EQ(w, fleet_job_worker(job));
  ASSERT_NOT_NULL(job->id);
  wt->handled++;
  if (++wt->active > wt->max_active)
    wt->max_active = wt->active;
  if (wt->close_in_handler) {
    ASSERT_OK(fleet_worker_close(w, NULL));
    ASSERT_ERR(FLEET_ECLOSING, fleet_worker_close(w, NULL));
    ASSERT_ERR(FLEET_ECLOSING, fleet_worker_start(w, wt_handler));
    ASSERT_ERR(FLEET_ECLOSING, fleet_worker_stop(w, 10, wt_on_stop, NULL));
    return;
  }
  if (wt->hold) {
    ASSERT_LT(wt->nheld, 16);
    wt->held[wt->nheld++] = job;
    return;
  }
  if (wt->work_ms == 0) {
    wt_finish(wt, job);
    return;
  }
  work = malloc(sizeof(*work));
  ASSERT_NOT_NULL(work);
  work->job = job;
  work->wt = wt;
  work->timer.data = work;
  ASSERT_OK(uv_timer_init(&wt->t.c.loop, &work->timer));
  ASSERT_OK(uv_timer_start(&work->timer, wt_on_work, wt->work_ms, 0));
}

/* The handler a second start gives: counts, then works as wt_handler. */
static void wt_handler_again(fleet_worker_t *w, fleet_job_t *job) {
  wt_t *wt = w->data;

  wt->handled_again++;
  wt_handler(w, job);
}

static void wt_done(fleet_worker_t *w, fleet_job_t *job,
                    fleet_job_action_t action, int status) {
  wt_t *wt = w->data;

  wt->last_done_status = status;
  /* FLEET_EALREADY: a completion sent again after a failed send whose
   * first send had arrived; the worker counts it as accepted. */
  if (action == FLEET_JOB_COMPLETE && (status == 0 || status == FLEET_EALREADY))
    wt->completed++;
  else
    wt->done_other++;
}

static void wt_lost(fleet_worker_t *w, fleet_job_t *job, int status) {
  wt_t *wt = w->data;
  int i;

  wt->lost++;
  wt->last_lost_status = status;
  if (wt->complete_in_lost) {
    for (i = 0; i < wt->nheld; i++)
      if (wt->held[i] == job)
        wt->held[i] = NULL;
    wt->active--;
    ASSERT_OK(fleet_job_complete(job));
  }
}

static void wt_on_stop(fleet_handle_t *w_h, int status, void *user_data) {
  fleet_worker_t *w = (fleet_worker_t *)w_h;
  wt_t *wt = w->data;
  wt->stopped++;
  wt->stop_status = status;
}

static void wt_on_close(fleet_handle_t *w) {
  wt_t *wt = w->data;
  wt->closed++;
}

static void wt_options(fleet_worker_options_t *o) {
  fleet_worker_options_init(o);
  o->done_cb = wt_done;
  o->lost_cb = wt_lost;
  o->poll_ms = 60000; /* the tests must not depend on polling */
}

static void wt_open(wt_t *wt, fleet_test_backend_t *b, const char *name,
                    const fleet_worker_options_t *o) {
  memset(wt, 0, sizeof(*wt));
  qt_open(&wt->t, b->url, name, NULL);
  wt->w.data = wt;
  ASSERT_OK(fleet_worker_init(&wt->t.c.client, &wt->w, name, o));
}

/* Runs the loop until `*counter` reaches `want`. */
static void wt_until(wt_t *wt, const int *counter, int want) {
  ASSERT(fleet_test_wait_count(&wt->t.c.loop, counter, want,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

/* Whether the worker's handles are all closed. */
static int wt_handles_gone(void *arg) {
  wt_t *wt = arg;
  return wt->w.internal_ == NULL;
}

static void wt_close(wt_t *wt) {
  if (wt->closed == 0) {
    ASSERT_OK(fleet_worker_close(&wt->w, wt_on_close));
    wt_until(wt, &wt->closed, 1);
  }
  ASSERT_EQ(1, wt->closed);
  qt_close(&wt->t);
}

CONFORMANCE_IMPL(worker_basic) {
  fleet_worker_options_t o;
  fleet_worker_stats_t st;
  fleet_job_spec_t specs[200];
  wt_t wt;
  int i;

  wt_options(&o);
  o.concurrency = 8;
  wt_open(&wt, b, "basic", &o);
  wt.work_ms = 2;
  for (i = 0; i < 200; i++)
    fleet_job_spec_init(&specs[i], "t", "x", 1);
  ASSERT_OK(qt_enqueue(&wt.t, specs, 200, NULL, NULL));
  ASSERT_OK(fleet_worker_start(&wt.w, wt_handler));
  ASSERT_ERR(FLEET_EALREADY, fleet_worker_start(&wt.w, wt_handler));
  wt_until(&wt, &wt.completed, 200);
  ASSERT_LE(wt.max_active, 8);
  ASSERT_GT(wt.max_active, 1);
  ASSERT_EQ(200, wt.handled);
  ASSERT_EQ(0, wt.done_other);
  fleet_worker_stats(&wt.w, &st);
  ASSERT_UEQ(200, st.claimed);
  ASSERT_UEQ(200, st.completed);
  ASSERT_EQ(0, st.active);
  ASSERT_EQ(1, st.online);
  ASSERT_STR_EQ("running", st.state);
  ASSERT_OK(fleet_worker_stop(&wt.w, 1000, wt_on_stop, NULL));
  ASSERT_ERR(FLEET_EALREADY, fleet_worker_stop(&wt.w, 1000, wt_on_stop, NULL));
  ASSERT_EQ(0, wt.stopped);
  wt_until(&wt, &wt.stopped, 1);
  ASSERT_OK(wt.stop_status);
  fleet_worker_stats(&wt.w, &st);
  ASSERT_STR_EQ("stopped", st.state);
  ASSERT_OK(qt_counts(&wt.t));
  ASSERT_UEQ(200, wt.t.counts.completed);
  ASSERT_UEQ(0, wt.t.counts.running + wt.t.counts.pending);
  /* A stopped worker starts again, with the handler this start gives. */
  ASSERT_ERR(FLEET_EINVAL, fleet_worker_start(&wt.w, NULL));
  fleet_worker_stats(&wt.w, &st);
  ASSERT_STR_EQ("stopped", st.state);
  ASSERT_OK(fleet_worker_start(&wt.w, wt_handler_again));
  qt_add(&wt.t, "t", "y", NULL);
  wt_until(&wt, &wt.completed, 201);
  ASSERT_EQ(1, wt.handled_again);
  ASSERT_EQ(201, wt.handled);
  wt_close(&wt);
}

/* A job's group stays readable until the job is finished, while other
 * claims come and go (the worker copies it with the job). */
CONFORMANCE_IMPL(worker_job_group) {
  static const char *const payloads[] = {"0", "1", "2", "3", "4",
                                         "5", "6", "7", "8", "-"};
  static const char *const groups[] = {"grp-0", "grp-1", "grp-2", "grp-3",
                                       "grp-4", "grp-5", "grp-6", "grp-7",
                                       "grp-8", NULL};
  fleet_worker_options_t o;
  fleet_job_spec_t specs[50];
  wt_t wt;
  int i;

  wt_options(&o);
  o.concurrency = 8;
  wt_open(&wt, b, "job-group", &o);
  wt.work_ms = 2;
  wt.check_group = 1;
  for (i = 0; i < 50; i++) {
    fleet_job_spec_init(&specs[i], "t", payloads[i % 10], 1);
    specs[i].group = groups[i % 10];
  }
  ASSERT_OK(qt_enqueue(&wt.t, specs, 50, NULL, NULL));
  ASSERT_OK(fleet_worker_start(&wt.w, wt_handler));
  wt_until(&wt, &wt.completed, 50);
  ASSERT_EQ(50, wt.groups_checked);
  ASSERT_GT(wt.max_active, 1);
  wt_close(&wt);
}

/* An idle worker hears a new job at once, not at its (long) poll. */
CONFORMANCE_IMPL(worker_wakeup) {
  fleet_worker_options_t o;
  uint64_t t0;
  wt_t wt;

  wt_options(&o);
  wt_open(&wt, b, "wake", &o);
  ASSERT_OK(fleet_worker_start(&wt.w, wt_handler));
  qt_sleep(&wt.t, 100);
  t0 = uv_now(&wt.t.c.loop);
  qt_add(&wt.t, "t", "x", NULL);
  wt_until(&wt, &wt.completed, 1);
  ASSERT_ULT(uv_now(&wt.t.c.loop) - t0, fleet_test_ms(2000));
  qt_sleep(&wt.t, 50);
  qt_add(&wt.t, "t", "y", NULL);
  wt_until(&wt, &wt.completed, 2);
  ASSERT_ULT(uv_now(&wt.t.c.loop) - t0, fleet_test_ms(4000));
  wt_close(&wt);
}

/* A delayed job is claimed when it is due, without polling; a failed
 * attempt comes back after its backoff. */
static uint64_t delayed_claimed_at;

static void delayed_handler(fleet_worker_t *w, fleet_job_t *job) {
  wt_t *wt = w->data;
  /* The claim's backend time: its deadline minus the claim TTL. */
  delayed_claimed_at = job->deadline_ms - 60000;
  wt->handled++;
  ASSERT_OK(fleet_job_complete(job));
}

CONFORMANCE_IMPL(worker_delayed_on_time) {
  fleet_worker_options_t o;
  fleet_job_spec_t s;
  fleet_job_info_t info;
  char id[2][FLEET_JOB_ID_MAX + 1];
  wt_t wt;

  wt_options(&o);
  o.claim_ttl_ms = 60000;
  o.heartbeat_ms = 20000;
  wt_open(&wt, b, "delay", &o);
  ASSERT_OK(fleet_worker_start(&wt.w, delayed_handler));
  qt_sleep(&wt.t, 50);
  fleet_job_spec_init(&s, "t", "x", 1);
  s.delay_ms = 400;
  ASSERT_OK(qt_enqueue(&wt.t, &s, 1, NULL, id));
  ASSERT_OK(qt_get(&wt.t, id[0], &info, NULL, 0, NULL, 0));
  wt_until(&wt, &wt.completed, 1);
  /* On time: not before, and well within a poll period after. */
  ASSERT_UGE(delayed_claimed_at, info.run_at_ms);
  ASSERT_ULE(delayed_claimed_at, info.run_at_ms + 250);
  wt_close(&wt);
}

CONFORMANCE_IMPL(worker_fail_retry) {
  fleet_worker_options_t o;
  fleet_job_spec_t s;
  fleet_job_info_t info;
  char id[1][FLEET_JOB_ID_MAX + 1], err[64];
  wt_t wt;

  wt_options(&o);
  o.queue.keep_completed = 1000; /* the completed job is read below */
  wt_open(&wt, b, "retry", &o);
  wt.fail_first = 1;
  fleet_job_spec_init(&s, "t", "x", 1);
  s.backoff = FLEET_BACKOFF_FIXED;
  s.backoff_ms = 200;
  ASSERT_OK(qt_enqueue(&wt.t, &s, 1, NULL, id));
  ASSERT_OK(fleet_worker_start(&wt.w, wt_handler));
  wt_until(&wt, &wt.completed, 1);
  ASSERT_EQ(2, wt.handled);
  ASSERT_EQ(1, wt.done_other); /* the accepted failure */
  ASSERT_OK(qt_get(&wt.t, id[0], &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_COMPLETED, info.state);
  ASSERT_EQ(2, info.attempts);
  ASSERT_STR_EQ("first attempt fails", err);
  ASSERT_UGE(info.finished_ms, info.run_at_ms);
  wt_close(&wt);
}

/* Heartbeats keep a claim alive past its TTL; nothing recovers it. */
CONFORMANCE_IMPL(worker_heartbeat) {
  fleet_worker_options_t o;
  fleet_job_info_t info;
  char id[FLEET_JOB_ID_MAX + 1];
  wt_t wt;

  wt_options(&o);
  o.claim_ttl_ms = 300;
  o.heartbeat_ms = 100;
  o.recover_ms = 50;
  o.queue.keep_completed = 1000; /* the completed job is read below */
  wt_open(&wt, b, "hb", &o);
  wt.work_ms = 1200;
  qt_add(&wt.t, "t", "x", id);
  ASSERT_OK(fleet_worker_start(&wt.w, wt_handler));
  wt_until(&wt, &wt.completed, 1);
  ASSERT_EQ(0, wt.lost);
  ASSERT_EQ(1, wt.handled);
  ASSERT_OK(qt_get(&wt.t, id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(1, info.attempts);
  wt_close(&wt);
}

/* A claim taken away (here released with its token by someone else) is
 * reported lost at the next heartbeat; finishing it then changes
 * nothing. */
CONFORMANCE_IMPL(worker_lost_stale) {
  fleet_worker_options_t o;
  fleet_claim_t c;
  int res[1];
  wt_t wt;

  wt_options(&o);
  o.concurrency = 1;
  o.claim_ttl_ms = 2000;
  o.heartbeat_ms = 100;
  wt_open(&wt, b, "stale", &o);
  wt.hold = 1;
  qt_add(&wt.t, "t", "x", NULL);
  ASSERT_OK(fleet_worker_start(&wt.w, wt_handler));
  wt_until(&wt, &wt.handled, 1);
  c.id = wt.held[0]->id;
  c.token = wt.held[0]->token;
  ASSERT_OK(qt_release(&wt.t, &c, 1, res));
  ASSERT_OK(res[0]);
  wt_until(&wt, &wt.lost, 1);
  ASSERT_ERR(FLEET_ESTALE, wt.last_lost_status);
  ASSERT_OK(fleet_job_complete(wt.held[0]));
  wt_until(&wt, &wt.done_other, 1);
  ASSERT_ERR(FLEET_ESTALE, wt.last_done_status);
  /* The released job is claimed again, as a new claim. */
  wt_until(&wt, &wt.handled, 2);
  ASSERT_UGT(wt.held[1]->token, c.token);
  ASSERT_OK(fleet_job_complete(wt.held[1]));
  wt_until(&wt, &wt.completed, 1);
  wt_close(&wt);
}

/* Stop waits for jobs up to its deadline, then hands the rest back. */
CONFORMANCE_IMPL(worker_stop_graceful) {
  fleet_worker_options_t o;
  fleet_job_info_t info;
  int i;
  wt_t wt;

  wt_options(&o);
  o.concurrency = 3;
  wt_open(&wt, b, "stop", &o);
  wt.hold = 1;
  for (i = 0; i < 3; i++)
    qt_add(&wt.t, "t", "x", NULL);
  ASSERT_OK(fleet_worker_start(&wt.w, wt_handler));
  wt_until(&wt, &wt.handled, 3);
  ASSERT_OK(fleet_worker_stop(&wt.w, 300, wt_on_stop, NULL));
  /* One finishes in time. */
  ASSERT_OK(fleet_job_complete(wt.held[0]));
  wt_until(&wt, &wt.completed, 1);
  ASSERT_EQ(0, wt.stopped);
  wt_until(&wt, &wt.stopped, 1);
  ASSERT_ERR(FLEET_ETIMEDOUT, wt.stop_status);
  ASSERT_EQ(2, wt.lost);
  ASSERT_ERR(FLEET_ECANCELED, wt.last_lost_status);
  /* They are pending again, their attempt not counted. */
  ASSERT_OK(qt_counts(&wt.t));
  ASSERT_UEQ(2, wt.t.counts.pending);
  ASSERT_UEQ(0, wt.t.counts.running);
  ASSERT_OK(qt_get(&wt.t, wt.held[1]->id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(0, info.attempts);
  /* The handlers finish them later: nothing is sent. */
  ASSERT_OK(fleet_job_complete(wt.held[1]));
  ASSERT_OK(fleet_job_fail(wt.held[2], "late", 4));
  wt_until(&wt, &wt.done_other, 2);
  ASSERT_ERR(FLEET_ECANCELED, wt.last_done_status);
  ASSERT_OK(qt_counts(&wt.t));
  ASSERT_UEQ(2, wt.t.counts.pending);
  wt_close(&wt);
}

/* Closing from inside the handler hands the job back; the handler hears
 * it and finishes the job; then the worker closes. */
CONFORMANCE_IMPL(worker_close_in_handler) {
  fleet_worker_options_t o;
  wt_t wt;

  wt_options(&o);
  o.concurrency = 1;
  wt_open(&wt, b, "closeh", &o);
  wt.close_in_handler = 1;
  wt.complete_in_lost = 1;
  qt_add(&wt.t, "t", "x", NULL);
  ASSERT_OK(fleet_worker_start(&wt.w, wt_handler));
  wt_until(&wt, &wt.handled, 1);
  /* The close callback was given NULL: wait for the lost callback and the
   * handles. */
  wt_until(&wt, &wt.done_other, 1);
  ASSERT_ERR(FLEET_ECANCELED, wt.last_done_status);
  ASSERT_EQ(1, wt.lost);
  ASSERT(fleet_test_run_until(&wt.t.c.loop, wt_handles_gone, &wt,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  wt.closed = 1;
  ASSERT_OK(qt_counts(&wt.t));
  ASSERT_UEQ(1, wt.t.counts.pending);
  wt_close(&wt);
}

CONFORMANCE_IMPL(worker_bad_input) {
  fleet_worker_options_t o;
  fleet_worker_stats_t st;
  char big_name[600];
  fleet_worker_t w2;
  wt_t wt;

  wt_options(&o);
  wt_open(&wt, b, "badw", &o);
  wt_options(&o);
  ASSERT_ERR(FLEET_EINVAL, fleet_worker_init(&wt.t.c.client, &w2, "q", NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_worker_init(&wt.t.c.client, &w2, "", &o));
  ASSERT_ERR(FLEET_EINVAL, fleet_worker_init(NULL, &w2, "q", &o));
  o.concurrency = 10001;
  ASSERT_ERR(FLEET_EINVAL, fleet_worker_init(&wt.t.c.client, &w2, "q", &o));
  memset(big_name, 'n', sizeof(big_name) - 1);
  big_name[sizeof(big_name) - 1] = '\0';
  wt_options(&o);
  ASSERT_ERR(FLEET_E2BIG, fleet_worker_init(&wt.t.c.client, &w2, big_name, &o));
  /* Zeroed options are the defaults: the handler is given at start. */
  memset(&o, 0, sizeof(o));
  ASSERT_OK(fleet_worker_init(&wt.t.c.client, &w2, "q", &o));
  ASSERT_OK(fleet_worker_close(&w2, NULL));
  wt_options(&o);
  o.heartbeat_ms = o.claim_ttl_ms;
  ASSERT_ERR(FLEET_EINVAL, fleet_worker_init(&wt.t.c.client, &w2, "q", &o));
  wt_options(&o);
  o.claim_batch = FLEET_QUEUE_BATCH_MAX + 1;
  ASSERT_ERR(FLEET_EINVAL, fleet_worker_init(&wt.t.c.client, &w2, "q", &o));
  ASSERT_ERR(FLEET_EINVAL, fleet_job_complete(NULL));
  /* A call in the wrong state. */
  ASSERT_ERR(FLEET_EALREADY, fleet_worker_stop(&wt.w, 10, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_worker_start(NULL, wt_handler));
  /* A start without a handler is refused and starts nothing. */
  ASSERT_ERR(FLEET_EINVAL, fleet_worker_start(&wt.w, NULL));
  fleet_worker_stats(&wt.w, &st);
  ASSERT_STR_EQ("idle", st.state);
  ASSERT_ERR(FLEET_EALREADY, fleet_worker_stop(&wt.w, 10, NULL, NULL));
  /* Closing an idle worker. */
  wt_close(&wt);
}

/* Redis goes away mid-run and comes back (appendonly on): the worker stops
 * claiming, keeps its jobs, retries their completions and resumes; every
 * job completes, none with an error. */
TEST_IMPL(worker_redis_outage) {
  static const char *const aof[] = {"--appendonly", "yes", NULL};
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(aof);
  fleet_test_backend_t b;
  fleet_worker_options_t o;
  fleet_worker_stats_t st;
  fleet_job_spec_t specs[30];
  int i, saw_offline = 0;
  wt_t wt;

  memset(&b, 0, sizeof(b));
  snprintf(b.url, sizeof(b.url), "%s", fleet_test_redis_url(r));
  b.redis = r;
  wt_options(&o);
  o.concurrency = 5;
  o.claim_ttl_ms = 5000;
  o.heartbeat_ms = 300;
  /* Calls waiting for a connection fail after 500 ms. */
  qt_set_command_timeout(500);
  wt_open(&wt, &b, "outage", &o);
  wt.work_ms = 100;
  for (i = 0; i < 30; i++)
    fleet_job_spec_init(&specs[i], "t", "x", 1);
  ASSERT_OK(qt_enqueue(&wt.t, specs, 30, NULL, NULL));
  ASSERT_OK(fleet_worker_start(&wt.w, wt_handler));
  wt_until(&wt, &wt.completed, 5);
  ASSERT_OK(fleet_test_redis_stop(r));
  /* Jobs finish meanwhile; their completions cannot be sent. */
  for (i = 0; i < (int)fleet_test_ms(40) && !saw_offline; i++) {
    qt_sleep(&wt.t, 100);
    fleet_worker_stats(&wt.w, &st);
    saw_offline = !st.online;
  }
  ASSERT(saw_offline);
  ASSERT_NE(0, st.last_error);
  ASSERT_OK(fleet_test_redis_restart(r));
  wt_until(&wt, &wt.completed, 30);
  ASSERT_EQ(0, wt.done_other);
  fleet_worker_stats(&wt.w, &st);
  ASSERT_UEQ(30, st.completed);
  ASSERT_EQ(1, st.online);
  while (qt_counts(&wt.t) != 0)
    qt_sleep(&wt.t, 50);
  ASSERT_UEQ(30, wt.t.counts.completed);
  ASSERT_UEQ(0, wt.t.counts.pending + wt.t.counts.running);
  wt_close(&wt);
  fleet_test_redis_free(r);
  return 0;
}

/* Redis stops answering while a job is held: the handler hears that its
 * claim is lost (no heartbeat confirmed before the local deadline) before
 * the claim can expire on the server; once Redis answers again the job
 * completes exactly once. */
TEST_IMPL(worker_redis_lease_timeout) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_test_backend_t b;
  fleet_worker_options_t o;
  uint64_t paused_at;
  wt_t wt;

  memset(&b, 0, sizeof(b));
  snprintf(b.url, sizeof(b.url), "%s", fleet_test_redis_url(r));
  b.redis = r;
  wt_options(&o);
  o.concurrency = 1;
  /* Scaled, so that a heartbeat delayed by load still renews in time. */
  o.claim_ttl_ms = (uint32_t)fleet_test_ms(600);
  o.heartbeat_ms = (uint32_t)fleet_test_ms(150);
  wt_open(&wt, &b, "lease", &o);
  wt.hold = 1;
  qt_add(&wt.t, "t", "x", NULL);
  ASSERT_OK(fleet_worker_start(&wt.w, wt_handler));
  wt_until(&wt, &wt.handled, 1);
  ASSERT_OK(fleet_test_redis_pause(r));
  paused_at = uv_now(&wt.t.c.loop);
  wt_until(&wt, &wt.lost, 1);
  ASSERT_ERR(FLEET_ETIMEDOUT, wt.last_lost_status);
  /* Before the server-side deadline (claimed or refreshed at most a TTL
   * before the pause). */
  ASSERT_ULT(uv_now(&wt.t.c.loop) - paused_at, o.claim_ttl_ms);
  ASSERT_OK(fleet_test_redis_resume(r));
  wt.hold = 0;
  ASSERT_OK(fleet_job_complete(wt.held[0]));
  /* Accepted, or refused if the claim expired meanwhile: then the job ran
   * again and completed. */
  wt_until(&wt, &wt.completed, 1);
  while (qt_counts(&wt.t) != 0 || wt.t.counts.completed != 1)
    qt_sleep(&wt.t, 50);
  ASSERT_UEQ(0, wt.t.counts.pending + wt.t.counts.running);
  wt_close(&wt);
  fleet_test_redis_free(r);
  return 0;
}
