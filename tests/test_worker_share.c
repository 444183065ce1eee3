/* test_worker_share.c -- several queues, one budget: workers of two queues
 * sharing a fleet_worker_share_t, weighted and strict, on both adapters.
 * Each start is recorded (queue, jobs running of each queue at that
 * moment, jobs of each queue started so far) and the guarantees are
 * checked from those records. */
#include "test_queue_util.h"

#define WS_JOBS 40

typedef struct ws_s ws_t;

/* One worker of the share, on queue `name`. */
typedef struct {
  ws_t *ws;
  int idx; /* 0: hi, 1: lo */
  fleet_worker_t w;
  fleet_queue_t q; /* its producer, on the same client */
  int closed;
} ws_member_t;

/* One start, as the handler saw it. */
typedef struct {
  int idx;
  int running[2];
  int started[2];
  int total;
} ws_start_t;

struct ws_s {
  qt_t t;
  ws_member_t m[2];
  fleet_worker_share_t *share;
  int running[2], started[2], completed;
  int enqueued;
  ws_start_t log[2 * WS_JOBS];
  int nlog;
  uint64_t work_ms;
};

typedef struct {
  uv_timer_t timer;
  fleet_job_t *job;
  ws_member_t *m;
} ws_work_t;

static void ws_work_closed(uv_handle_t *h) {
  free(h->data);
}

static void ws_on_work(uv_timer_t *timer) {
  ws_work_t *work = timer->data;
  ws_member_t *m = work->m;

  m->ws->running[m->idx]--;
  ASSERT_OK(fleet_job_complete(work->job));
  uv_close((uv_handle_t *)timer, ws_work_closed);
}

static void ws_handler(fleet_worker_t *w, fleet_job_t *job) {
  ws_member_t *m = w->data;
  ws_t *ws = m->ws;
  ws_work_t *work = calloc(1, sizeof(*work));
  ws_start_t *s;

  ASSERT_NOT_NULL(work);
  ws->running[m->idx]++;
  ws->started[m->idx]++;
  ASSERT(ws->nlog < 2 * WS_JOBS);
  s = &ws->log[ws->nlog++];
  s->idx = m->idx;
  s->running[0] = ws->running[0];
  s->running[1] = ws->running[1];
  s->started[0] = ws->started[0];
  s->started[1] = ws->started[1];
  s->total = ws->running[0] + ws->running[1];
  work->job = job;
  work->m = m;
  work->timer.data = work;
  ASSERT_OK(uv_timer_init(&ws->t.c.loop, &work->timer));
  ASSERT_OK(uv_timer_start(&work->timer, ws_on_work, ws->work_ms, 0));
}

static void ws_done(fleet_worker_t *w, fleet_job_t *job,
                    fleet_job_action_t action, int status) {
  ws_member_t *m = w->data;
  (void)job;
  ASSERT_EQ(FLEET_JOB_COMPLETE, action);
  ASSERT_OK(status);
  m->ws->completed++;
}

static void ws_on_enqueued(fleet_queue_t *q, int status,
                           const fleet_enqueue_result_t *r, size_t n,
                           void *ud) {
  ws_t *ws = ud;
  (void)q;
  (void)r;
  ASSERT_OK(status);
  ws->enqueued += (int)n;
}

static void ws_on_closed(fleet_handle_t *h) {
  ws_member_t *m = h->data;
  m->closed++;
}

/* Opens the share and its two workers (weights `whi`, `wlo`), enqueues
 * WS_JOBS jobs on each queue, then starts both. */
static void ws_open(ws_t *ws, fleet_test_backend_t *b, const char *name,
                    fleet_share_mode_t mode, uint32_t whi, uint32_t wlo) {
  static const char *const names[2] = {"hi", "lo"};
  fleet_job_spec_t specs[WS_JOBS];
  fleet_worker_options_t o;
  char qname[64];
  int i;

  memset(ws, 0, sizeof(*ws));
  ws->work_ms = 10;
  qt_open(&ws->t, b->url, name, NULL);
  ASSERT_OK(fleet_worker_share_new(4, mode, &ws->share));
  for (i = 0; i < WS_JOBS; i++)
    fleet_job_spec_init(&specs[i], "t", "x", 1);
  for (i = 0; i < 2; i++) {
    ws_member_t *m = &ws->m[i];
    m->ws = ws;
    m->idx = i;
    snprintf(qname, sizeof(qname), "%s-%s", name, names[i]);
    fleet_worker_options_init(&o);
    o.concurrency = 0; /* the share's */
    o.poll_ms = 60000; /* the test must not depend on polling */
    o.done_cb = ws_done;
    o.share = ws->share;
    o.weight = i == 0 ? whi : wlo;
    m->w.data = m;
    ASSERT_OK(fleet_worker_init(&ws->t.c.client, &m->w, qname, &o));
    ASSERT_OK(fleet_queue_init(&ws->t.c.client, &m->q, qname, NULL));
    ASSERT_OK(fleet_queue_enqueue(&m->q, specs, WS_JOBS, ws_on_enqueued, ws));
  }
  ASSERT(fleet_test_wait_count(&ws->t.c.loop, &ws->enqueued, 2 * WS_JOBS,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  /* A share with a worker is in use. */
  ASSERT_ERR(FLEET_EBUSY, fleet_worker_share_free(ws->share));
  for (i = 0; i < 2; i++)
    ASSERT_OK(fleet_worker_start(&ws->m[i].w, ws_handler));
  ASSERT(fleet_test_wait_count(&ws->t.c.loop, &ws->completed, 2 * WS_JOBS,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

static void ws_close(ws_t *ws) {
  int i;

  for (i = 0; i < 2; i++) {
    ws->m[i].q.data = &ws->m[i];
    ASSERT_OK(fleet_worker_close(&ws->m[i].w, ws_on_closed));
    ASSERT_OK(fleet_queue_close(&ws->m[i].q, NULL));
    ASSERT(fleet_test_wait_count(&ws->t.c.loop, &ws->m[i].closed, 1,
                                 fleet_test_ms(FLEET_TEST_WAIT_MS)));
  }
  /* Closed, the workers left the share. */
  ASSERT_OK(fleet_worker_share_free(ws->share));
  qt_close(&ws->t);
}

/* Weighted 3:1 with a budget of 4: never more than 4 running; while both
 * queues have a backlog, hi runs at most 3 and lo at most 1, and the
 * starts go about 3:1. */
CONFORMANCE_IMPL(worker_share_weighted) {
  ws_t ws;
  int i, both = 0, hi_both = 0;

  ws_open(&ws, b, "share-w", FLEET_SHARE_WEIGHTED, 3, 1);
  ASSERT_EQ(2 * WS_JOBS, ws.nlog);
  for (i = 0; i < ws.nlog; i++) {
    const ws_start_t *s = &ws.log[i];
    ASSERT_LE(s->total, 4);
    /* Both queues still have jobs to claim beyond the budget. */
    if (s->started[0] < WS_JOBS - 4 && s->started[1] < WS_JOBS - 4) {
      ASSERT_LE(s->running[0], 3);
      ASSERT_LE(s->running[1], 1);
      both++;
      hi_both += s->idx == 0;
    }
  }
  /* 3:1 while both have a backlog: between 2:1 and 5:1. */
  ASSERT_GT(both, 8);
  ASSERT_GE(hi_both * 3, both * 2);
  ASSERT_LE(hi_both * 6, both * 5);
  ws_close(&ws);
}

/* Strict: lo starts nothing while hi has jobs to claim. */
CONFORMANCE_IMPL(worker_share_strict) {
  ws_t ws;
  int i;

  ws_open(&ws, b, "share-s", FLEET_SHARE_STRICT, 2, 1);
  for (i = 0; i < ws.nlog; i++) {
    ASSERT_LE(ws.log[i].total, 4);
    if (ws.log[i].idx == 1)
      ASSERT_EQ(WS_JOBS, ws.log[i].started[0]);
  }
  ws_close(&ws);
}

/* Bad input, refused before anything starts. */
CONFORMANCE_IMPL(worker_share_bad_input) {
  fleet_worker_share_t *s = NULL;
  fleet_worker_options_t o;
  fleet_worker_t w;
  qt_t t;

  ASSERT_ERR(FLEET_EINVAL, fleet_worker_share_new(0, FLEET_SHARE_WEIGHTED, &s));
  ASSERT_NULL(s);
  ASSERT_ERR(FLEET_EINVAL,
             fleet_worker_share_new(10001, FLEET_SHARE_WEIGHTED, &s));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_worker_share_new(4, (fleet_share_mode_t)7, &s));
  ASSERT_ERR(FLEET_EINVAL, fleet_worker_share_new(4, FLEET_SHARE_STRICT, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_worker_share_free(NULL));
  ASSERT_OK(fleet_worker_share_new(4, FLEET_SHARE_STRICT, &s));
  qt_open(&t, b->url, "share-bad", NULL);
  fleet_worker_options_init(&o);
  o.share = s;
  o.weight = FLEET_GROUP_WEIGHT_MAX + 1;
  ASSERT_ERR(FLEET_EINVAL, fleet_worker_init(&t.c.client, &w, "q", &o));
  /* Refused, it did not join. */
  ASSERT_OK(fleet_worker_share_free(s));
  qt_close(&t);
}
