/* test_queue_headers.c -- a job's headers and a worker's hooks on both
 * adapters (docs/queue.md, "Headers and tracing"): headers stored with the
 * job, handed out with each claim (retries and recovered claims
 * included), read by fleet_queue_get() and by the admin listing's times;
 * bad headers refused with nothing written; the before and after hooks
 * called once per handler run with the outcome and a duration at least
 * the handler's own, on every path a job can end by (complete, fail,
 * release, cancel, run deadline, close). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

#ifndef FLEET_TRACE_EXAMPLE_PATH
#define FLEET_TRACE_EXAMPLE_PATH "/nonexistent"
#endif

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

/* Enqueues one job of `type` with `n` headers; asserts it was added and
 * writes its id to `id`. */
static void hdr_add(qt_t *t, const char *type, const fleet_header_t *h,
                    size_t n, char *id) {
  fleet_job_spec_t spec;
  int st[1];
  char ids[1][FLEET_JOB_ID_MAX + 1];

  fleet_job_spec_init(&spec, type, "p", 1);
  spec.headers = h;
  spec.nheaders = n;
  spec.backoff = FLEET_BACKOFF_FIXED;
  spec.backoff_ms = 0;
  ASSERT_OK(qt_enqueue(t, &spec, 1, st, ids));
  ASSERT_OK(st[0]);
  snprintf(id, FLEET_JOB_ID_MAX + 1, "%s", ids[0]);
}

/* Asserts that the packed headers `p` (`len` bytes) are exactly the `n`
 * of `h`, in order, by both the lookup and the iteration. */
static void hdr_check(const char *p, size_t len, const fleet_header_t *h,
                      size_t n) {
  const char *k, *v;
  size_t cursor = 0, i = 0;

  while (fleet_headers_next(p, len, &cursor, &k, &v)) {
    ASSERT_LT(i, n);
    ASSERT_STR_EQ(h[i].key, k);
    ASSERT_STR_EQ(h[i].value, v);
    i++;
  }
  ASSERT_UEQ(n, i);
  for (i = 0; i < n; i++) {
    v = fleet_headers_get(p, len, h[i].key);
    ASSERT_NOT_NULL(v);
    ASSERT_STR_EQ(h[i].value, v);
  }
  ASSERT_NULL(fleet_headers_get(p, len, "nosuch"));
}

/* The pending count now. */
static uint64_t hdr_pending(qt_t *t) {
  ASSERT_OK(qt_counts(t));
  return t->counts.pending;
}

/* The callback of an enqueue refused: it never runs. */
static void hdr_never(fleet_queue_t *q, int status,
                      const fleet_enqueue_result_t *results, size_t n,
                      void *ud) {
  (void)q;
  (void)status;
  (void)results;
  (void)n;
  (void)ud;
  ASSERT(0);
}

static uint64_t hdr_created;

static void hdr_on_jobs(fleet_queue_t *q, int status,
                        const fleet_job_summary_t *jobs, size_t n,
                        uint64_t total, uint64_t next_cursor, void *ud) {
  int *done = ud;

  (void)q;
  (void)total;
  (void)next_cursor;
  ASSERT_OK(status);
  ASSERT_UEQ(1, n);
  hdr_created = jobs[0].created_ms;
  *done = 1;
}

static void hdr_on_flow(fleet_queue_t *q, int status,
                        const fleet_flow_result_t *result, void *ud) {
  int *done = ud;

  (void)q;
  (void)result;
  ASSERT_OK(status);
  *done = 1;
}

/* A flow's parent and children keep their own headers. */
static void hdr_flow(qt_t *t) {
  static const fleet_header_t ph[] = {{"who", "parent"}};
  static const fleet_header_t ch[] = {{"who", "child"}};
  fleet_flow_spec_t f;
  fleet_flow_child_t kid;
  fleet_claim_t claim;
  qt_job_t job;
  int res[1], done = 0;

  fleet_flow_spec_init(&f, "parent", "p", 1);
  f.parent.headers = ph;
  f.parent.nheaders = 1;
  memset(&kid, 0, sizeof(kid));
  fleet_job_spec_init(&kid.spec, "child", "c", 1);
  kid.spec.headers = ch;
  kid.spec.nheaders = 1;
  f.children = &kid;
  f.n_children = 1;
  ASSERT_OK(fleet_queue_add_flow(&t->q, &f, hdr_on_flow, &done));
  ASSERT(fleet_test_run_until(&t->c.loop, fleet_test_flag_set, &done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(1, qt_claim(t, 1, 60000, &job));
  ASSERT_STR_EQ("child", job.type);
  hdr_check(job.headers, job.headers_len, ch, 1);
  claim = qt_claim_of(&job);
  ASSERT_OK(qt_complete(t, &claim, 1, res));
  ASSERT_OK(res[0]);
  ASSERT_EQ(1, qt_claim(t, 1, 60000, &job));
  ASSERT_STR_EQ("parent", job.type);
  hdr_check(job.headers, job.headers_len, ph, 1);
  claim = qt_claim_of(&job);
  ASSERT_OK(qt_complete(t, &claim, 1, res));
}

/* A record whose headers fleet did not write (an item without "=", an
 * empty item) is claimed, its headers read as well as they can be, never
 * refused: on Redis, written by hand. */
static void hdr_foreign(fleet_test_backend_t *b, qt_t *t) {
  static const char rec[] = "\0\0"
                            "1700000000000\tnoeq\t\tk=v=w\0t\0p";
  static const fleet_header_t want[] = {{"noeq", ""}, {"k", "v=w"}};
  const char *argv[4];
  size_t lens[4];
  redisReply *r;
  qt_job_t job;

  if (b->redis == NULL)
    return;
  argv[0] = "HSET";
  argv[1] = "{qt:qhdr}:jobs";
  argv[2] = "foreign";
  argv[3] = rec;
  for (int i = 0; i < 3; i++)
    lens[i] = strlen(argv[i]);
  lens[3] = sizeof(rec) - 1;
  r = fleet_test_redis_cmd_argv(b->redis, 4, argv, lens);
  ASSERT_NOT_NULL(r);
  ASSERT_EQ(REDIS_REPLY_INTEGER, r->type);
  freeReplyObject(r);
  fleet_test_redis_ok(b->redis, "RPUSH {qt:qhdr}:pending foreign");
  ASSERT_EQ(1, qt_claim(t, 1, 60000, &job));
  ASSERT_STR_EQ("foreign", job.id);
  ASSERT_STR_EQ("t", job.type);
  ASSERT_STR_EQ("p", job.payload);
  hdr_check(job.headers, job.headers_len, want, 2);
}

CONFORMANCE_IMPL(queue_headers) {
  static const fleet_header_t h2[] = {
      {"traceparent",
       "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
      {"tenant.id_x-1", ""}};
  fleet_header_t big[FLEET_JOB_HEADERS_MAX + 1], bad[2];
  char keys[FLEET_JOB_HEADERS_MAX + 1][FLEET_JOB_HEADER_KEY_MAX + 2];
  char val[FLEET_JOB_HEADER_VALUE_MAX + 2];
  fleet_queue_options_t o;
  fleet_job_spec_t specs[2];
  fleet_job_info_t info;
  fleet_claim_t claim;
  qt_job_t jobs[2];
  char id[FLEET_JOB_ID_MAX + 1], id0[FLEET_JOB_ID_MAX + 1], err[64];
  int res[2], done;
  size_t i;
  qt_t t;

  fleet_queue_options_init(&o);
  o.keep_completed = 100;
  memset(&t, 0, sizeof(t));
  qt_open(&t, b->url, "qhdr", &o);

  /* A job with headers and one without: each claim hands out its own. */
  hdr_add(&t, "h", h2, 2, id);
  hdr_add(&t, "n", NULL, 0, id0);
  ASSERT_EQ(2, qt_claim(&t, 2, 60000, jobs));
  ASSERT_STR_EQ(id, jobs[0].id);
  ASSERT_STR_EQ("h", jobs[0].type);
  ASSERT_STR_EQ("p", jobs[0].payload);
  hdr_check(jobs[0].headers, jobs[0].headers_len, h2, 2);
  ASSERT_UEQ(0, jobs[1].headers_len);
  ASSERT_STR_EQ("p", jobs[1].payload);

  /* fleet_queue_get() reads them, and the created time beside them. */
  ASSERT_OK(qt_get(&t, id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_RUNNING, info.state);
  ASSERT(info.created_ms > 0);
  ASSERT(info.created_ms <= t.claim_info.now_ms);
  hdr_check(info.headers, info.headers_len, h2, 2);
  ASSERT_OK(qt_get(&t, id0, &info, NULL, 0, NULL, 0));
  ASSERT_NULL(info.headers);
  ASSERT_UEQ(0, info.headers_len);

  /* Kept across a failure's retry and a recovered claim. */
  claim = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_fail(&t, &claim, "again"));
  ASSERT_EQ(0, t.dead);
  qt_sleep(&t, 20);
  ASSERT_EQ(1, qt_claim(&t, 1, (uint32_t)fleet_test_ms(50), jobs));
  ASSERT_STR_EQ(id, jobs[0].id);
  ASSERT_EQ(2, jobs[0].attempts);
  hdr_check(jobs[0].headers, jobs[0].headers_len, h2, 2);
  qt_sleep(&t, fleet_test_ms(50) + 20);
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.requeued);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  ASSERT_STR_EQ(id, jobs[0].id);
  ASSERT_EQ(3, jobs[0].attempts);
  hdr_check(jobs[0].headers, jobs[0].headers_len, h2, 2);
  claim = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &claim, 1, res));
  ASSERT_OK(res[0]);
  ASSERT_OK(qt_get(&t, id, &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_COMPLETED, info.state);
  hdr_check(info.headers, info.headers_len, h2, 2);

  hdr_flow(&t);
  hdr_foreign(b, &t);

  /* The admin listing reads the created time of a job with headers. */
  hdr_add(&t, "h", h2, 2, id);
  done = 0;
  ASSERT_OK(
      fleet_queue_jobs(&t.q, FLEET_JOB_PENDING, 0, 10, 16, hdr_on_jobs, &done));
  ASSERT(fleet_test_run_until(&t.c.loop, fleet_test_flag_set, &done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT(hdr_created > 0);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  claim = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &claim, 1, res));

  /* The most a job takes: 16 headers of 4096 bytes in all. */
  memset(val, 'v', sizeof(val));
  for (i = 0; i <= FLEET_JOB_HEADERS_MAX; i++) {
    snprintf(keys[i], sizeof(keys[i]), "%0*zu", FLEET_JOB_HEADER_KEY_MAX, i);
    big[i].key = keys[i];
    big[i].value = val + sizeof(val) - 1 - 190;
  }
  val[sizeof(val) - 1] = '\0';
  hdr_add(&t, "big", big, FLEET_JOB_HEADERS_MAX, id);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  ASSERT_UEQ(FLEET_JOB_HEADERS_BYTES_MAX, jobs[0].headers_len);
  hdr_check(jobs[0].headers, jobs[0].headers_len, big, FLEET_JOB_HEADERS_MAX);
  claim = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &claim, 1, res));

  /* Refused, with nothing written (the whole batch): too many, too long
   * in all, a key too long, empty or with another character, a value too
   * long or with a control character, a key twice, NULLs. */
  ASSERT_UEQ(0, hdr_pending(&t));
  fleet_job_spec_init(&specs[0], "ok", "p", 1);
  fleet_job_spec_init(&specs[1], "bad", "p", 1);
  specs[1].headers = big;
  specs[1].nheaders = FLEET_JOB_HEADERS_MAX + 1;
  ASSERT_ERR(FLEET_E2BIG, fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  big[0].value = val + sizeof(val) - 1 - 191; /* one byte over in all */
  specs[1].nheaders = FLEET_JOB_HEADERS_MAX;
  ASSERT_ERR(FLEET_E2BIG, fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  specs[1].headers = bad;
  specs[1].nheaders = 1;
  bad[0].value = "v";
  keys[0][FLEET_JOB_HEADER_KEY_MAX] = 'k';
  keys[0][FLEET_JOB_HEADER_KEY_MAX + 1] = '\0';
  bad[0].key = keys[0];
  ASSERT_ERR(FLEET_E2BIG, fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  bad[0].key = "";
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  bad[0].key = "a b";
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  bad[0].key = "a=b";
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  bad[0].key = NULL;
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  bad[0].key = "k";
  bad[0].value = val; /* FLEET_JOB_HEADER_VALUE_MAX + 1 bytes */
  ASSERT_ERR(FLEET_E2BIG, fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  bad[0].value = "a\tb";
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  bad[0].value = "a\nb";
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  bad[0].value = "a\x7f";
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  bad[0].value = NULL;
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  bad[0].value = "1";
  bad[1].key = "k";
  bad[1].value = "2";
  specs[1].nheaders = 2;
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  specs[1].headers = NULL;
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_enqueue(&t.q, specs, 2, hdr_never, NULL));
  qt_sleep(&t, 10);
  ASSERT_UEQ(0, hdr_pending(&t));
  /* A value may hold any other byte, UTF-8 included. */
  bad[1].key = "K";
  bad[1].value = "caf\xc3\xa9 = \"x\";";
  specs[1].headers = bad;
  ASSERT_OK(qt_enqueue(&t, specs, 2, res, NULL));
  ASSERT_EQ(2, qt_claim(&t, 2, 60000, jobs));
  ASSERT_UEQ(0, jobs[0].headers_len);
  hdr_check(jobs[1].headers, jobs[1].headers_len, bad, 2);

  /* The lookups take no NULL, and find nothing in no headers. */
  ASSERT_NULL(fleet_headers_get(NULL, 0, "k"));
  ASSERT_NULL(fleet_headers_get(jobs[1].headers, jobs[1].headers_len, NULL));
  ASSERT_NULL(fleet_job_header(NULL, "k"));
  ASSERT_EQ(0, fleet_job_header_next(NULL, NULL, NULL, NULL));
  qt_close(&t);
}

/* ------------------------------------------------------------------------ */
/* Worker hooks                                                             */

/* What each handler run did, in the order the hooks ran. */
typedef struct {
  char id[FLEET_JOB_ID_MAX + 1];
  char trace[64];
  int after; /* the after hook ran */
  fleet_job_outcome_t outcome;
  int status;
  uint64_t duration_ns;
  uint64_t handler_ns; /* the handler's own run time, as it measured */
} hook_run_t;

typedef struct {
  qt_t t;
  fleet_worker_t w;
  hook_run_t runs[16];
  int nruns, afters, dones, closed, released_once;
  uint64_t sleep_ms;
} hook_t;

/* A handler run: its timer, and when it started. */
typedef struct {
  uv_timer_t timer;
  fleet_job_t *job;
  hook_t *h;
  uint64_t t0;
} hook_sleep_t;

static hook_run_t *hook_run_of(hook_t *h, fleet_job_t *job) {
  ASSERT_NOT_NULL(job->hook_data);
  return &h->runs[(size_t)(uintptr_t)job->hook_data - 1];
}

static void hook_before(fleet_worker_t *w, fleet_job_t *job, void *arg) {
  hook_t *h = arg;
  hook_run_t *r;
  const char *tp = fleet_job_header(job, "traceparent");

  ASSERT_PTR_EQ(&h->w, w);
  ASSERT_NULL(job->hook_data);
  ASSERT_NULL(job->data);
  ASSERT_LT(h->nruns, 16);
  r = &h->runs[h->nruns++];
  snprintf(r->id, sizeof(r->id), "%s", job->id);
  snprintf(r->trace, sizeof(r->trace), "%s", tp != NULL ? tp : "");
  job->hook_data = (void *)(uintptr_t)h->nruns;
}

static void hook_after(fleet_worker_t *w, fleet_job_t *job,
                       fleet_job_outcome_t outcome, int status,
                       uint64_t duration_ns, void *arg) {
  hook_t *h = arg;
  hook_run_t *r = hook_run_of(h, job);

  ASSERT_PTR_EQ(&h->w, w);
  ASSERT_STR_EQ(r->id, job->id);
  ASSERT_EQ(0, r->after); /* once */
  r->after = 1;
  r->outcome = outcome;
  r->status = status;
  r->duration_ns = duration_ns;
  h->afters++;
}

static void hook_finish(hook_sleep_t *s) {
  fleet_job_t *job = s->job;
  hook_t *h = s->h;
  hook_run_t *r = hook_run_of(h, job);
  const char *what = job->payload.base;

  r->handler_ns = uv_hrtime() - s->t0;
  if (strncmp(what, "fail", job->payload.len) == 0) {
    ASSERT_OK(fleet_job_fail(job, "no", 2));
  } else if (strncmp(what, "release", job->payload.len) == 0 &&
             !h->released_once) {
    h->released_once = 1;
    ASSERT_OK(fleet_job_release(job));
  } else {
    ASSERT_OK(fleet_job_complete(job));
  }
}

static void hook_on_closed_timer(uv_handle_t *t) {
  free(t->data);
}

static void hook_on_timer(uv_timer_t *timer) {
  hook_sleep_t *s = timer->data;

  hook_finish(s);
  timer->data = s;
  uv_close((uv_handle_t *)timer, hook_on_closed_timer);
}

/* Asked to stop (a cancel, a run deadline): finishes at once, a cancel
 * with a completion, a timeout with a failure. */
static void hook_on_cancel(fleet_job_t *job, fleet_job_cancel_t why,
                           void *arg) {
  hook_t *h = arg;

  hook_run_of(h, job)->handler_ns = 0;
  if (why == FLEET_JOB_CANCEL_REQUESTED)
    ASSERT_OK(fleet_job_complete(job));
  else
    ASSERT_OK(fleet_job_fail(job, "stopped", 7));
}

/* Sleeps sleep_ms on the loop then finishes as the payload says; "wait"
 * waits to be told to stop, "hold" until the worker hands it back. */
static void hook_handler(fleet_worker_t *w, fleet_job_t *job) {
  hook_t *h = w->data;
  hook_sleep_t *s;

  if (job->payload.len == 4 && memcmp(job->payload.base, "wait", 4) == 0) {
    ASSERT_OK(fleet_job_on_cancel(job, hook_on_cancel, h));
    return;
  }
  if (job->payload.len == 4 && memcmp(job->payload.base, "hold", 4) == 0)
    return;
  s = calloc(1, sizeof(*s));
  ASSERT_NOT_NULL(s);
  s->job = job;
  s->h = h;
  s->t0 = uv_hrtime();
  /* (The loop's time now, so that the timer waits sleep_ms from here.) */
  uv_update_time(&h->t.c.loop);
  ASSERT_OK(uv_timer_init(&h->t.c.loop, &s->timer));
  s->timer.data = s;
  ASSERT_OK(uv_timer_start(&s->timer, hook_on_timer, h->sleep_ms, 0));
}

/* A job handed back at the close: the handler finishes it. */
static void hook_lost(fleet_worker_t *w, fleet_job_t *job, int status) {
  ASSERT_ERR(FLEET_ECANCELED, status);
  ASSERT_OK(fleet_job_complete(job));
}

static void hook_done(fleet_worker_t *w, fleet_job_t *job,
                      fleet_job_action_t action, int status) {
  hook_t *h = w->data;

  (void)action;
  (void)status;
  /* The after hook ran first. */
  ASSERT_EQ(1, hook_run_of(h, job)->after);
  h->dones++;
}

static void hook_on_closed(fleet_handle_t *hd) {
  ((hook_t *)hd->data)->closed++;
}

/* Enqueues one job with `payload`, a traceparent and `timeout_ms`. */
static void hook_add(hook_t *h, const char *payload, const char *trace,
                     uint32_t timeout_ms, char *id) {
  fleet_header_t hd = {"traceparent", trace};
  fleet_job_spec_t spec;
  int st[1];
  char ids[1][FLEET_JOB_ID_MAX + 1];

  fleet_job_spec_init(&spec, "hook", payload, strlen(payload));
  spec.headers = &hd;
  spec.nheaders = 1;
  spec.max_attempts = 1;
  spec.timeout_ms = timeout_ms;
  ASSERT_OK(qt_enqueue(&h->t, &spec, 1, st, ids));
  ASSERT_OK(st[0]);
  snprintf(id, FLEET_JOB_ID_MAX + 1, "%s", ids[0]);
}

/* Checks run `i`: job `id`, the trace it read, its outcome and status. */
static void hook_check(hook_t *h, int i, const char *id, const char *trace,
                       fleet_job_outcome_t outcome, int status) {
  hook_run_t *r = &h->runs[i];

  ASSERT_STR_EQ(id, r->id);
  ASSERT_STR_EQ(trace, r->trace);
  ASSERT_EQ(1, r->after);
  ASSERT_STR_EQ(fleet_job_outcome_name(outcome),
                fleet_job_outcome_name(r->outcome));
  ASSERT_ERR(status, r->status);
  /* The handler's run time, as the hook measured it, holds the handler's
   * own (taken inside it) and, for a sleep, the sleep but the loop
   * clock's millisecond. */
  ASSERT(r->duration_ns >= r->handler_ns);
  if (r->handler_ns > 0)
    ASSERT(r->duration_ns + 1000000 >= h->sleep_ms * 1000000);
}

CONFORMANCE_IMPL(worker_hooks) {
  fleet_worker_options_t o;
  hook_t h;
  char id[8][FLEET_JOB_ID_MAX + 1];
  int i;

  memset(&h, 0, sizeof(h));
  h.sleep_ms = 30;
  qt_open(&h.t, b->url, "whook", NULL);
  fleet_worker_options_init(&o);
  o.before = hook_before;
  o.after = hook_after;
  o.hook_arg = &h;
  o.done_cb = hook_done;
  o.lost_cb = hook_lost;
  o.concurrency = 1;
  o.poll_ms = 60000;
  h.w.data = &h;
  ASSERT_OK(fleet_worker_init(&h.t.c.client, &h.w, "whook", &o));
  ASSERT_OK(fleet_worker_start(&h.w, hook_handler));
  /* (Idle: the first job is delivered to the parked worker.) */
  qt_sleep(&h.t, 50);

  hook_add(&h, "complete", "00-a1-01", 0, id[0]);
  ASSERT(fleet_test_wait_count(&h.t.c.loop, &h.afters, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  hook_check(&h, 0, id[0], "00-a1-01", FLEET_JOB_OUTCOME_COMPLETED, 0);
  ASSERT(h.runs[0].handler_ns >= (h.sleep_ms - 1) * 1000000);

  hook_add(&h, "fail", "00-a2-01", 0, id[1]);
  ASSERT(fleet_test_wait_count(&h.t.c.loop, &h.afters, 2,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  hook_check(&h, 1, id[1], "00-a2-01", FLEET_JOB_OUTCOME_FAILED, 0);

  /* A release runs the job again: two runs, two pairs of hooks. */
  hook_add(&h, "release", "00-a3-01", 0, id[2]);
  ASSERT(fleet_test_wait_count(&h.t.c.loop, &h.afters, 4,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  hook_check(&h, 2, id[2], "00-a3-01", FLEET_JOB_OUTCOME_RELEASED, 0);
  hook_check(&h, 3, id[2], "00-a3-01", FLEET_JOB_OUTCOME_COMPLETED, 0);

  /* Cancelled while it runs: the handler's completion ends it as
   * cancelled. */
  hook_add(&h, "wait", "00-a4-01", 0, id[3]);
  ASSERT(fleet_test_wait_count(&h.t.c.loop, &h.nruns, 5,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(qt_cancel_job(&h.t, id[3], 60000));
  ASSERT(fleet_test_wait_count(&h.t.c.loop, &h.afters, 5,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  hook_check(&h, 4, id[3], "00-a4-01", FLEET_JOB_OUTCOME_CANCELLED,
             FLEET_ECANCELED);

  /* Past its run deadline: the handler's failure ends it as timed out. */
  hook_add(&h, "wait", "00-a5-01", (uint32_t)fleet_test_ms(100), id[4]);
  ASSERT(fleet_test_wait_count(&h.t.c.loop, &h.afters, 6,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  hook_check(&h, 5, id[4], "00-a5-01", FLEET_JOB_OUTCOME_TIMED_OUT, 0);

  /* Held at the close: handed back, then finished: lost. */
  hook_add(&h, "hold", "00-a6-01", 0, id[5]);
  ASSERT(fleet_test_wait_count(&h.t.c.loop, &h.nruns, 7,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(6, h.afters);
  ASSERT_OK(fleet_worker_close(&h.w, hook_on_closed));
  ASSERT(fleet_test_wait_count(&h.t.c.loop, &h.closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  hook_check(&h, 6, id[5], "00-a6-01", FLEET_JOB_OUTCOME_LOST, FLEET_ECANCELED);

  /* Each run had its pair of hooks, once, and its done callback after. */
  ASSERT_EQ(7, h.nruns);
  ASSERT_EQ(7, h.afters);
  ASSERT_EQ(7, h.dones);
  for (i = 0; i < 7; i++)
    ASSERT_EQ(1, h.runs[i].after);
  ASSERT_STR_EQ("timed out",
                fleet_job_outcome_name(FLEET_JOB_OUTCOME_TIMED_OUT));
  ASSERT_STR_EQ("unknown", fleet_job_outcome_name((fleet_job_outcome_t)99));
  qt_close(&h.t);
}

/* ------------------------------------------------------------------------ */
/* The CLI                                                                  */

/* `fleet queue add --header` sets them, `fleet queue get` shows them;
 * a --header without "=" or a bad key is refused, with nothing added. */
TEST_IMPL(cli_queue_headers) {
  fleet_test_redis_t *redis;
  fleet_job_info_t info;
  qt_job_t job;
  cli_run_t r;
  char id[FLEET_JOB_ID_MAX + 1];
  const char *url, *p, *nl;
  qt_t t;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  cli_run_ok(&r, url, "qt",
             ARGS("queue", "add", "--header", "traceparent=00-ab-cd-01", "hq",
                  "hello", "--header=tenant=a=b"));
  /* ("queue: hq", then "id:    <id>".) */
  p = strstr(r.out, "\nid:");
  ASSERT_NOT_NULL(p);
  p += strspn(p + 4, " ") + 4;
  nl = strchr(p, '\n');
  ASSERT_NOT_NULL(nl);
  ASSERT_LT((size_t)(nl - p), sizeof(id));
  memcpy(id, p, (size_t)(nl - p));
  id[nl - p] = '\0';
  cli_run_ok(&r, url, "qt", ARGS("--json", "queue", "get", "hq", id));
  ASSERT_NOT_NULL(strstr(r.out, "\"headers\":{\"traceparent\":\"00-ab-cd-01\","
                                "\"tenant\":\"a=b\"}"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "get", "hq", id));
  ASSERT_NOT_NULL(strstr(r.out, "00-ab-cd-01"));

  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "queue", "add", "hq", "x",
                   "--header", "novalue"));
  ASSERT_NE(0, r.status);
  ASSERT_NOT_NULL(strstr(r.err, "novalue"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "queue", "add", "hq", "x",
                   "--header", "bad key=1"));
  ASSERT_NE(0, r.status);

  /* The library sees the one job, with its headers. */
  qt_open_prefix(&t, url, "qt", "hq", NULL);
  ASSERT_EQ(1, qt_claim(&t, 10, 60000, &job));
  ASSERT_STR_EQ(id, job.id);
  ASSERT_STR_EQ("a=b",
                fleet_headers_get(job.headers, job.headers_len, "tenant"));
  ASSERT_OK(qt_get(&t, id, &info, NULL, 0, NULL, 0));
  ASSERT_STR_EQ("00-ab-cd-01", fleet_headers_get(info.headers, info.headers_len,
                                                 "traceparent"));
  qt_close(&t);
  fleet_test_redis_stop(redis);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* examples/trace.c                                                         */

/* Runs the example on `url` with `jobs` jobs and checks its lines: each
 * job's span starts in the producer's trace, with the producer's span as
 * its parent and a span id of its own, and ends completed in the same
 * trace and span. */
static void trace_example_run(const char *url, int jobs) {
  char trace[64], span[64], job[64], pat[256], n[16];
  const char *line;
  cli_run_t *r = calloc(1, sizeof(*r));
  pid_t pid;
  int seen = 0;

  ASSERT_NOT_NULL(r);
  snprintf(n, sizeof(n), "%d", jobs);
  pid = cli_spawn_prog(FLEET_TRACE_EXAMPLE_PATH,
                       ARGS(FLEET_TRACE_EXAMPLE_PATH, url, n), NULL, NULL,
                       "trace");
  cli_reap_within(pid, "trace", r, fleet_test_ms(FLEET_TEST_WAIT_MS));
  if (r->status != 0)
    fprintf(stderr, "%s%s", r->out, r->err);
  ASSERT_EQ(0, r->status);
  ASSERT_EQ(3 * jobs, cli_lines(r->out));
  for (line = r->out; (line = strstr(line, "produce trace=")) != NULL; line++) {
    ASSERT_EQ(3, sscanf(line, "produce trace=%63s span=%63s job=%63s", trace,
                        span, job));
    ASSERT_UEQ(32, strlen(trace));
    ASSERT_UEQ(16, strlen(span));
    /* The handler's span: a child of the producer's, in its trace. */
    snprintf(pat, sizeof(pat), "span start trace=%s parent=%s span=", trace,
             span);
    ASSERT_NOT_NULL(strstr(r->out, pat));
    ASSERT_EQ(1, sscanf(strstr(r->out, pat) + strlen(pat), "%63s", span));
    snprintf(pat, sizeof(pat), "span start trace=%s parent=", trace);
    ASSERT_NULL(strstr(strstr(r->out, pat) + 1, pat)); /* one each */
    ASSERT_UEQ(16, strlen(span));
    snprintf(pat, sizeof(pat),
             "span end trace=%s span=%s outcome=completed duration_us=", trace,
             span);
    ASSERT_NOT_NULL(strstr(r->out, pat));
    seen++;
  }
  ASSERT_EQ(jobs, seen);
  free(r);
}

TEST_IMPL(example_trace) {
  fleet_test_redis_t *redis;

  if (access(FLEET_TRACE_EXAMPLE_PATH, X_OK) != 0)
    fleet_test_skip("examples/trace.c is not built");
  trace_example_run("memory://", 3);
  redis = fleet_test_redis_start_or_skip(NULL);
  trace_example_run(fleet_test_redis_url(redis), 20);
  fleet_test_redis_stop(redis);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* What headers cost                                                        */

/* Enqueues 10 jobs (with `h`, `nh` headers), claims and completes them;
 * returns the commands Redis ran for it. */
static uint64_t cost_round(fleet_test_redis_t *r, qt_t *t,
                           const fleet_header_t *h, size_t nh) {
  fleet_job_spec_t specs[10];
  fleet_claim_t claims[10];
  qt_job_t jobs[10];
  int st[10];
  size_t i;

  for (i = 0; i < 10; i++) {
    fleet_job_spec_init(&specs[i], "t", "p", 1);
    specs[i].headers = h;
    specs[i].nheaders = nh;
  }
  fleet_test_redis_ok(r, "CONFIG RESETSTAT");
  ASSERT_OK(qt_enqueue(t, specs, 10, st, NULL));
  ASSERT_EQ(10, qt_claim(t, 10, 60000, jobs));
  for (i = 0; i < 10; i++) {
    ASSERT_UEQ(nh > 0, jobs[i].headers_len > 0);
    claims[i] = qt_claim_of(&jobs[i]);
  }
  ASSERT_OK(qt_complete(t, claims, 10, st));
  return fleet_test_redis_calls(r);
}

/* A job with headers costs no command more than one without, at the
 * enqueue, the claim and the completion: the headers ride in its
 * record. */
TEST_IMPL(queue_redis_headers_cost) {
  static const fleet_header_t h[] = {
      {"traceparent",
       "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
      {"tenant", "acme"}};
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  uint64_t plain, with;
  qt_t t;

  memset(&t, 0, sizeof(t));
  qt_open(&t, fleet_test_redis_url(r), "cost", NULL);
  cost_round(r, &t, NULL, 0); /* (the scripts loaded) */
  plain = cost_round(r, &t, NULL, 0);
  with = cost_round(r, &t, h, 2);
  ASSERT(plain > 3);
  ASSERT_UEQ(plain, with);
  qt_close(&t);
  fleet_test_redis_stop(r);
  return 0;
}
