/* test_queue_keep.c -- completed-job history is off by default on both
 * adapters: with the default options (NULL, a zeroed struct or
 * fleet_queue_options_init(), on a queue handle or a worker) a completed
 * job's record goes with its completion and the completed counter still
 * counts it; with keep_completed set the record stays. */
#include "test_queue_util.h"

/* Enqueues one job on `t`, claims and completes it, and checks the
 * completion was accepted; `job` gets the claimed job. */
static void keep_complete_one(qt_t *t, qt_job_t *job) {
  fleet_claim_t claim;
  int res[1];

  qt_add(t, "t", "x", NULL);
  ASSERT_EQ(1, qt_claim(t, 1, 60000, job));
  claim = qt_claim_of(job);
  ASSERT_OK(qt_complete(t, &claim, 1, res));
  ASSERT_OK(res[0]);
}

/* Checks that `job` left no record, and that the queue counted `n`
 * completions and keeps none. */
static void keep_check_gone(qt_t *t, const qt_job_t *job, uint64_t n) {
  fleet_job_info_t info;
  fleet_claim_t claim = qt_claim_of(job);
  int res[1];

  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(t, job->id, &info, NULL, 0, NULL, 0));
  ASSERT_OK(qt_counts(t));
  ASSERT_UEQ(n, t->counts.completed);
  ASSERT_UEQ(0, t->counts.completed_kept);
  ASSERT_UEQ(0, t->counts.pending + t->counts.running);
  /* Nothing is left to recognise a repeated completion by. */
  ASSERT_OK(qt_complete(t, &claim, 1, res));
  ASSERT_ERR(FLEET_ENOTFOUND, res[0]);
}

/* A worker on `t`'s client that completes every job at once. */
typedef struct {
  qt_t t;
  fleet_worker_t w;
  int completed, other, closed;
} keep_worker_t;

static void keep_handler(fleet_worker_t *w, fleet_job_t *job) {
  ASSERT_OK(fleet_job_complete(job));
}

static void keep_done(fleet_worker_t *w, fleet_job_t *job,
                      fleet_job_action_t action, int status) {
  keep_worker_t *kw = w->data;

  if (action == FLEET_JOB_COMPLETE && status == 0)
    kw->completed++;
  else
    kw->other++;
}

static void keep_on_worker_closed(fleet_handle_t *w) {
  keep_worker_t *kw = w->data;
  kw->closed++;
}

/* Runs a worker with options `o` (its handler and callbacks are set here)
 * over one job of a fresh queue `name`, until the job's completion is
 * accepted; leaves the queue open in `kw->t` with the job's id in `id`. */
static void keep_worker_run(keep_worker_t *kw, fleet_test_backend_t *b,
                            const char *name, fleet_worker_options_t *o,
                            char *id) {
  memset(kw, 0, sizeof(*kw));
  o->done_cb = keep_done;
  o->poll_ms = 60000; /* woken by the enqueue, not by polling */
  qt_open(&kw->t, b->url, name, NULL);
  kw->w.data = kw;
  ASSERT_OK(fleet_worker_init(&kw->t.c.client, &kw->w, name, o));
  qt_add(&kw->t, "t", "x", id);
  ASSERT_OK(fleet_worker_start(&kw->w, keep_handler));
  ASSERT(fleet_test_wait_count(&kw->t.c.loop, &kw->completed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(0, kw->other);
  ASSERT_OK(fleet_worker_close(&kw->w, keep_on_worker_closed));
  ASSERT(fleet_test_wait_count(&kw->t.c.loop, &kw->closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

CONFORMANCE_IMPL(queue_keep_default) {
  fleet_queue_options_t o;
  fleet_worker_options_t wo;
  fleet_job_info_t info;
  fleet_claim_t claims[7];
  keep_worker_t kw;
  qt_job_t jobs[7];
  char id[FLEET_JOB_ID_MAX + 1];
  int i, res[7];
  qt_t t;

  /* The defaults: no completed history (its age bound stays, for when a
   * count is set); dead jobs are kept as before. */
  fleet_queue_options_init(&o);
  ASSERT_UEQ(FLEET_QUEUE_KEEP_NONE, o.keep_completed);
  ASSERT_UEQ(3600, o.keep_completed_s);
  ASSERT_UEQ(10000, o.keep_dead);
  ASSERT_UEQ(7 * 24 * 3600, o.keep_dead_s);
  fleet_worker_options_init(&wo);
  ASSERT_UEQ(FLEET_QUEUE_KEEP_NONE, wo.queue.keep_completed);

  /* NULL options: the record goes, the counter counts it. */
  qt_open(&t, b->url, "knull", NULL);
  keep_complete_one(&t, &jobs[0]);
  keep_check_gone(&t, &jobs[0], 1);
  qt_close(&t);

  /* A zeroed struct is the same defaults. */
  memset(&o, 0, sizeof(o));
  qt_open(&t, b->url, "kzero", &o);
  keep_complete_one(&t, &jobs[0]);
  keep_complete_one(&t, &jobs[1]);
  keep_check_gone(&t, &jobs[0], 2);
  keep_check_gone(&t, &jobs[1], 2);
  qt_close(&t);

  /* fleet_queue_options_init(): the same. */
  fleet_queue_options_init(&o);
  qt_open(&t, b->url, "kinit", &o);
  keep_complete_one(&t, &jobs[0]);
  keep_check_gone(&t, &jobs[0], 1);
  qt_close(&t);

  /* keep_completed = 5 (its age left 0: the default hour): records stay,
   * a repeated completion is recognised, and the newest 5 are kept. */
  memset(&o, 0, sizeof(o));
  o.keep_completed = 5;
  qt_open(&t, b->url, "kfive", &o);
  keep_complete_one(&t, &jobs[0]);
  ASSERT_OK(qt_get(&t, jobs[0].id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_COMPLETED, info.state);
  ASSERT_UGT(info.finished_ms, 0);
  claims[0] = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, claims, 1, res));
  ASSERT_ERR(FLEET_EALREADY, res[0]);
  for (i = 1; i < 7; i++)
    qt_add(&t, "t", "x", NULL);
  ASSERT_EQ(6, qt_claim(&t, 6, 60000, &jobs[1]));
  for (i = 1; i < 7; i++)
    claims[i] = qt_claim_of(&jobs[i]);
  ASSERT_OK(qt_complete(&t, &claims[1], 6, res));
  for (i = 0; i < 6; i++)
    ASSERT_OK(res[i]);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(7, t.counts.completed);
  ASSERT_UEQ(5, t.counts.completed_kept);
  qt_close(&t);

  /* A worker with its default options completes without history ... */
  fleet_worker_options_init(&wo);
  keep_worker_run(&kw, b, "kwork", &wo, id);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&kw.t, id, &info, NULL, 0, NULL, 0));
  ASSERT_OK(qt_counts(&kw.t));
  ASSERT_UEQ(1, kw.t.counts.completed);
  ASSERT_UEQ(0, kw.t.counts.completed_kept);
  qt_close(&kw.t);

  /* ... and keeps it when its queue options say so. */
  fleet_worker_options_init(&wo);
  wo.queue.keep_completed = 5;
  keep_worker_run(&kw, b, "kworkkeep", &wo, id);
  ASSERT_OK(qt_get(&kw.t, id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_COMPLETED, info.state);
  ASSERT_OK(qt_counts(&kw.t));
  ASSERT_UEQ(1, kw.t.counts.completed);
  ASSERT_UEQ(1, kw.t.counts.completed_kept);
  qt_close(&kw.t);
}
