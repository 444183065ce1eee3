/* test_queue_history.c -- a queue's history (fleet_queue_history(),
 * fleet_queue_sample()) on both adapters: completions and failures are
 * counted per minute and per day by the scripts that end jobs, the
 * readers' sample records the depth and the oldest pending age once per
 * minute, and bad input is refused. */
#include "test_queue_util.h"

/* What the last history or sample call returned. */
typedef struct {
  qt_t *t;
  fleet_hist_point_t pts[FLEET_HIST_MINUTES_MAX];
  size_t n;
  fleet_queue_sample_t s;
} hist_out_t;

static hist_out_t hist_out;

static void hist_on_history(fleet_queue_t *q, int status,
                            const fleet_hist_point_t *pts, size_t n, void *ud) {
  qt_t *t = q->data;

  (void)ud;
  ASSERT_EQ(0, t->done);
  t->done = 1;
  t->status = status;
  hist_out.n = n;
  if (n > 0)
    memcpy(hist_out.pts, pts, n * sizeof(*pts));
}

static void hist_on_sample(fleet_queue_t *q, int status,
                           const fleet_queue_sample_t *s, void *ud) {
  qt_t *t = q->data;

  (void)ud;
  ASSERT_EQ(0, t->done);
  t->done = 1;
  t->status = status;
  if (status == 0)
    hist_out.s = *s;
}

static int hist_read(qt_t *t, fleet_hist_res_t res, int64_t from, int64_t to) {
  int rc;

  t->done = 0;
  hist_out.n = 0;
  if ((rc = fleet_queue_history(&t->q, res, from, to, hist_on_history, t)) != 0)
    return rc;
  qt_wait(t);
  return t->status;
}

static int hist_sample(qt_t *t, uint64_t depth) {
  int rc;

  t->done = 0;
  if ((rc = fleet_queue_sample(&t->q, depth, hist_on_sample, t)) != 0)
    return rc;
  qt_wait(t);
  return t->status;
}

/* The sums of the points read last; checks that they follow each other
 * by `step` ms. */
static void hist_sums(int64_t step, uint64_t *processed, uint64_t *failed) {
  size_t i;

  *processed = *failed = 0;
  for (i = 0; i < hist_out.n; i++) {
    ASSERT_EQ(0, hist_out.pts[i].t_ms % step);
    if (i > 0)
      ASSERT_EQ(hist_out.pts[i - 1].t_ms + step, hist_out.pts[i].t_ms);
    ASSERT_UGE(hist_out.pts[i].processed, hist_out.pts[i].failed);
    *processed += hist_out.pts[i].processed;
    *failed += hist_out.pts[i].failed;
  }
}

CONFORMANCE_IMPL(queue_history) {
  fleet_claim_t claims[5];
  fleet_job_spec_t spec;
  qt_job_t jobs[5];
  uint64_t p, f, now;
  int res[5], i, found, st;
  size_t k;
  qt_t t;

  qt_open(&t, b->url, "hist", NULL);
  hist_out.t = &t;

  /* Bad input is refused before anything is sent. */
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_history(&t.q, (fleet_hist_res_t)7, 0, 0,
                                               hist_on_history, &t));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_history(&t.q, FLEET_HIST_MINUTE, 2000,
                                               1000, hist_on_history, &t));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_history(&t.q, FLEET_HIST_MINUTE, 0, -1,
                                               hist_on_history, &t));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_history(&t.q, FLEET_HIST_MINUTE, 0, 0, NULL, &t));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_sample(&t.q, 1ULL << 60, hist_on_sample, &t));

  /* An empty queue: no history, nothing pending. */
  ASSERT_OK(hist_read(&t, FLEET_HIST_MINUTE, -600000, 0));
  ASSERT_UGE(hist_out.n, 10);
  ASSERT_ULE(hist_out.n, 11);
  hist_sums(60000, &p, &f);
  ASSERT_UEQ(0, p);
  for (k = 0; k < hist_out.n; k++) {
    ASSERT_EQ(-1, hist_out.pts[k].depth);
    ASSERT_EQ(-1, hist_out.pts[k].wait_ms);
  }
  ASSERT_OK(hist_sample(&t, FLEET_HIST_NO_SAMPLE));
  ASSERT_EQ(-1, hist_out.s.oldest_ms);
  ASSERT_EQ(0, hist_out.s.recorded);

  /* Five jobs: three complete in one call, two fail (and retry). */
  for (i = 0; i < 5; i++)
    qt_add(&t, "t", "x", NULL);
  ASSERT_EQ(5, qt_claim(&t, 5, 60000, jobs));
  for (i = 0; i < 5; i++)
    claims[i] = qt_claim_of(&jobs[i]);
  ASSERT_OK(qt_complete(&t, claims, 3, res));
  ASSERT_OK(qt_fail(&t, &claims[3], "boom"));
  ASSERT_OK(qt_fail(&t, &claims[4], "boom"));
  ASSERT_EQ(0, t.dead);

  ASSERT_OK(hist_read(&t, FLEET_HIST_MINUTE, -600000, 0));
  hist_sums(60000, &p, &f);
  ASSERT_UEQ(5, p);
  ASSERT_UEQ(2, f);
  ASSERT_OK(hist_read(&t, FLEET_HIST_DAY, 0, 0));
  ASSERT_UGE(hist_out.n, 32);
  ASSERT_ULE(hist_out.n, 33);
  hist_sums(86400000, &p, &f);
  ASSERT_UEQ(5, p);
  ASSERT_UEQ(2, f);
  ASSERT_EQ(-1, hist_out.pts[hist_out.n - 1].depth);
  /* A range that ends before the jobs holds none of them. */
  ASSERT_OK(hist_read(&t, FLEET_HIST_DAY, 86400000, 3 * 86400000));
  ASSERT_UEQ(3, hist_out.n);
  ASSERT_EQ(86400000, hist_out.pts[0].t_ms);
  hist_sums(86400000, &p, &f);
  ASSERT_UEQ(0, p);

  /* Two pending jobs: the sample finds the oldest and records the depth
   * given once per minute. */
  qt_add(&t, "t", "x", NULL);
  qt_sleep(&t, 20);
  qt_add(&t, "t", "x", NULL);
  ASSERT_OK(hist_sample(&t, 4));
  ASSERT_GE(hist_out.s.oldest_ms, 20);
  ASSERT_LT(hist_out.s.oldest_ms, fleet_test_ms(60000));
  now = hist_out.s.now_ms;
  ASSERT_EQ(1, hist_out.s.recorded);
  ASSERT_OK(hist_sample(&t, 9));
  if (hist_out.s.now_ms / 60000 == now / 60000)
    ASSERT_EQ(0, hist_out.s.recorded);
  ASSERT_OK(hist_read(&t, FLEET_HIST_MINUTE, -600000, 0));
  for (k = 0, found = 0; k < hist_out.n; k++) {
    if (hist_out.pts[k].t_ms == (int64_t)(now - now % 60000)) {
      found = 1;
      ASSERT_EQ(4, hist_out.pts[k].depth);
      ASSERT_GE(hist_out.pts[k].wait_ms, 20);
    }
  }
  ASSERT_EQ(1, found);
  qt_close(&t);

  /* A queue whose only pending job has a priority (in the priority set,
   * not the list): its age is found too. */
  qt_open(&t, b->url, "hist-prio", NULL);
  fleet_job_spec_init(&spec, "t", "x", 1);
  spec.priority = 5;
  ASSERT_OK(qt_enqueue(&t, &spec, 1, &st, NULL));
  qt_sleep(&t, 20);
  ASSERT_OK(hist_sample(&t, FLEET_HIST_NO_SAMPLE));
  ASSERT_GE(hist_out.s.oldest_ms, 20);
  ASSERT_EQ(0, hist_out.s.recorded);
  qt_close(&t);
}
