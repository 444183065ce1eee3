/* test_cli_queue_admin.c -- the queue's administration calls the fleet CLI
 * and dashboard are built on (src/queue/queue_admin.c): pages of jobs by state,
 * retrying dead jobs, pausing and resuming. On both backends. */
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "test_queue_util.h"

/* What the last admin call's callback saw. */
typedef struct {
  qt_t *t;
  int status;
  int done;
  size_t n;
  uint64_t total, next, count;
  int paused;
  char ids[16][FLEET_JOB_ID_MAX + 1];
  char types[16][FLEET_JOB_TYPE_MAX + 1];
  char payloads[16][64];
  char errors[16][64];
  uint32_t attempts[16];
  uint64_t times[16];
} adm_t;

static void adm_on_jobs(fleet_queue_t *q, int status,
                        const fleet_job_summary_t *jobs, size_t n,
                        uint64_t total, uint64_t next, void *ud) {
  adm_t *a = ud;
  size_t i;

  a->status = status;
  a->n = n;
  a->total = total;
  a->next = next;
  ASSERT(n <= 16);
  for (i = 0; i < n; i++) {
    ASSERT_EQ(strlen(jobs[i].last_error), jobs[i].last_error_len);
    snprintf(a->ids[i], sizeof(a->ids[i]), "%s", jobs[i].id);
    snprintf(a->types[i], sizeof(a->types[i]), "%s", jobs[i].type);
    snprintf(a->payloads[i], sizeof(a->payloads[i]), "%.*s",
             (int)jobs[i].payload.len, (const char *)jobs[i].payload.base);
    snprintf(a->errors[i], sizeof(a->errors[i]), "%s", jobs[i].last_error);
    a->attempts[i] = jobs[i].attempts;
    a->times[i] = jobs[i].time_ms;
  }
  a->t->done = 1;
}

static void adm_on_retry(fleet_queue_t *q, int status, uint64_t n, void *ud) {
  adm_t *a = ud;

  a->status = status;
  a->count = n;
  a->t->done = 1;
}

static void adm_on_paused(fleet_queue_t *q, int status, int paused, void *ud) {
  adm_t *a = ud;

  a->status = status;
  a->paused = paused;
  a->t->done = 1;
}

static int adm_finish(adm_t *a, int rc) {
  if (rc != 0)
    return rc;
  qt_wait(a->t);
  return a->status;
}

static int adm_jobs(adm_t *a, fleet_job_state_t state, uint64_t cursor,
                    size_t limit) {
  a->t->done = 0;
  a->n = 0;
  return adm_finish(
      a, fleet_queue_jobs(&a->t->q, state, cursor, limit, 4, adm_on_jobs, a));
}

static int adm_retry(adm_t *a, const char *id) {
  a->t->done = 0;
  return adm_finish(a, fleet_queue_retry(&a->t->q, id, adm_on_retry, a));
}

typedef int (*adm_pause_fn)(fleet_queue_t *, fleet_queue_paused_cb, void *);

static int adm_pause(adm_t *a, adm_pause_fn fn) {
  a->t->done = 0;
  return adm_finish(a, fn(&a->t->q, adm_on_paused, a));
}

/* Fails a fresh claim of one pending job until it is dead (max_attempts
 * 1). Returns the job's id in `id`. */
static void adm_make_dead(qt_t *t, const char *type, const char *err,
                          char *id) {
  fleet_job_spec_t s;
  fleet_claim_t c;
  qt_job_t job;
  int status;
  char ids[1][FLEET_JOB_ID_MAX + 1];

  fleet_job_spec_init(&s, type, "dead-payload", 12);
  s.max_attempts = 1;
  ASSERT_OK(qt_enqueue(t, &s, 1, &status, ids));
  ASSERT_OK(status);
  ASSERT_EQ(1, qt_claim(t, 1, 60000, &job));
  ASSERT_STR_EQ(ids[0], job.id);
  c = qt_claim_of(&job);
  ASSERT_OK(qt_fail(t, &c, err));
  ASSERT_EQ(1, t->dead);
  strcpy(id, job.id);
}

CONFORMANCE_IMPL(queue_admin_jobs) {
  char id[6][FLEET_JOB_ID_MAX + 1], dead[FLEET_JOB_ID_MAX + 1];
  fleet_queue_options_t o;
  fleet_job_spec_t s;
  fleet_claim_t c;
  qt_job_t job;
  adm_t a;
  qt_t t;
  int st;

  memset(&a, 0, sizeof(a));
  a.t = &t;
  /* Completed jobs kept (none are by default), to be listed below. */
  fleet_queue_options_init(&o);
  o.keep_completed = 1000;
  qt_open(&t, b->url, "admin-jobs", &o);
  /* Five pending jobs, one of priority 5 (listed first). */
  qt_add(&t, "a", "p0-long-payload", id[0]);
  qt_add(&t, "a", "p1", id[1]);
  qt_add(&t, "b", "p2", id[2]);
  qt_add(&t, "b", "p3", id[3]);
  fleet_job_spec_init(&s, "hi", "p4", 2);
  s.priority = 5;
  ASSERT_OK(qt_enqueue(&t, &s, 1, &st, &id[4]));
  ASSERT_OK(adm_jobs(&a, FLEET_JOB_PENDING, 0, 3));
  ASSERT_UEQ(5, a.total);
  ASSERT_EQ(3, a.n);
  ASSERT_UEQ(3, a.next);
  ASSERT_STR_EQ(id[4], a.ids[0]);
  ASSERT_STR_EQ("hi", a.types[0]);
  ASSERT_STR_EQ(id[0], a.ids[1]);
  ASSERT_STR_EQ("p0-l", a.payloads[1]); /* cut to 4 bytes */
  ASSERT_STR_EQ(id[1], a.ids[2]);
  ASSERT_OK(adm_jobs(&a, FLEET_JOB_PENDING, a.next, 3));
  ASSERT_EQ(2, a.n);
  ASSERT_UEQ(0, a.next);
  ASSERT_STR_EQ(id[2], a.ids[0]);
  ASSERT_STR_EQ(id[3], a.ids[1]);

  /* Delayed, with its due time. */
  fleet_job_spec_init(&s, "later", "d", 1);
  s.delay_ms = 3600000;
  ASSERT_OK(qt_enqueue(&t, &s, 1, &st, &id[5]));
  ASSERT_OK(adm_jobs(&a, FLEET_JOB_DELAYED, 0, 10));
  ASSERT_EQ(1, a.n);
  ASSERT_STR_EQ(id[5], a.ids[0]);
  ASSERT(a.times[0] > qt_now_ms(&t) + 3000000);

  /* Running: the claimed job, with its deadline; completed newest first. */
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  ASSERT_OK(adm_jobs(&a, FLEET_JOB_RUNNING, 0, 10));
  ASSERT_EQ(1, a.n);
  ASSERT_STR_EQ(job.id, a.ids[0]);
  ASSERT_UEQ(job.deadline_ms, a.times[0]);
  ASSERT_EQ(1, a.attempts[0]);
  c = qt_claim_of(&job);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  c = qt_claim_of(&job);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  ASSERT_OK(adm_jobs(&a, FLEET_JOB_COMPLETED, 0, 10));
  ASSERT_EQ(2, a.n);
  ASSERT_STR_EQ(id[0], a.ids[0]);
  ASSERT_STR_EQ(id[4], a.ids[1]);
  /* A completed job's attempts: the one that completed it, as
   * fleet_queue_get() says (not the failed ones of its record, 0). */
  ASSERT_EQ(1, a.attempts[0]);
  ASSERT_EQ(1, a.attempts[1]);
  {
    fleet_job_info_t info;

    ASSERT_OK(qt_get(&t, id[0], &info, NULL, 0, NULL, 0));
    ASSERT_EQ(FLEET_JOB_COMPLETED, info.state);
    ASSERT_EQ(info.attempts, a.attempts[0]);
  }
  ASSERT_OK(adm_jobs(&a, FLEET_JOB_RUNNING, 0, 10));
  ASSERT_EQ(0, a.n);
  ASSERT_UEQ(0, a.total);

  ASSERT_OK(adm_jobs(&a, FLEET_JOB_DEAD, 0, 10));
  ASSERT_EQ(0, a.n);
  qt_close(&t);

  /* Dead, with the last error (on a queue with nothing else pending). */
  qt_open(&t, b->url, "admin-jobs-dead", NULL);
  adm_make_dead(&t, "x", "it broke", dead);
  ASSERT_OK(adm_jobs(&a, FLEET_JOB_DEAD, 0, 10));
  ASSERT_EQ(1, a.n);
  ASSERT_STR_EQ(dead, a.ids[0]);
  ASSERT_STR_EQ("it broke", a.errors[0]);
  ASSERT(a.times[0] > 0);

  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_jobs(&t.q, FLEET_JOB_DEAD, 0, 0, 4, adm_on_jobs, &a));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_jobs(&t.q, (fleet_job_state_t)9, 0, 1, 4,
                                            adm_on_jobs, &a));
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_admin_retry) {
  char d1[FLEET_JOB_ID_MAX + 1], d2[FLEET_JOB_ID_MAX + 1];
  char d3[FLEET_JOB_ID_MAX + 1], p[FLEET_JOB_ID_MAX + 1];
  char err[64];
  fleet_job_info_t info;
  qt_job_t job;
  adm_t a;
  qt_t t;

  memset(&a, 0, sizeof(a));
  a.t = &t;
  qt_open(&t, b->url, "admin-retry", NULL);
  adm_make_dead(&t, "x", "boom 1", d1);
  adm_make_dead(&t, "x", "boom 2", d2);
  adm_make_dead(&t, "x", "boom 3", d3);
  qt_add(&t, "y", "pending", p);

  /* Not dead, or not there. */
  ASSERT_ERR(FLEET_EBUSY, adm_retry(&a, p));
  ASSERT_ERR(FLEET_ENOTFOUND, adm_retry(&a, "nope"));

  /* One: back to pending, attempts reset, the error kept. */
  ASSERT_OK(adm_retry(&a, d2));
  ASSERT_UEQ(1, a.count);
  ASSERT_OK(qt_get(&t, d2, &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  ASSERT_EQ(0, info.attempts);
  ASSERT_STR_EQ("boom 2", err);
  ASSERT_ERR(FLEET_EBUSY, adm_retry(&a, d2));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(2, t.counts.pending);
  ASSERT_UEQ(2, t.counts.dead_kept);
  ASSERT_UEQ(3, t.counts.dead); /* counts every job that ever died */

  /* All the others. */
  ASSERT_OK(adm_retry(&a, NULL));
  ASSERT_UEQ(2, a.count);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(4, t.counts.pending);
  ASSERT_UEQ(0, t.counts.dead_kept);
  ASSERT_OK(adm_jobs(&a, FLEET_JOB_DEAD, 0, 10));
  ASSERT_EQ(0, a.n);
  ASSERT_OK(adm_retry(&a, NULL));
  ASSERT_UEQ(0, a.count);

  /* Retried jobs run again: the pending job first, then in retry order. */
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  ASSERT_STR_EQ(p, job.id);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  ASSERT_STR_EQ(d2, job.id);
  ASSERT_EQ(1, job.attempts);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  ASSERT_STR_EQ(d1, job.id);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  ASSERT_STR_EQ(d3, job.id);
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_admin_pause) {
  char id[2][FLEET_JOB_ID_MAX + 1];
  fleet_job_spec_t s;
  qt_job_t jobs[2];
  adm_t a;
  qt_t t;
  int st;

  memset(&a, 0, sizeof(a));
  a.t = &t;
  qt_open(&t, b->url, "admin-pause", NULL);
  ASSERT_OK(adm_pause(&a, fleet_queue_paused));
  ASSERT_EQ(0, a.paused);
  qt_add(&t, "a", "1", id[0]);
  fleet_job_spec_init(&s, "a", "2", 1);
  s.delay_ms = 1;
  ASSERT_OK(qt_enqueue(&t, &s, 1, &st, &id[1]));
  ASSERT_OK(adm_pause(&a, fleet_queue_pause));
  ASSERT_EQ(1, a.paused);
  ASSERT_OK(adm_pause(&a, fleet_queue_pause)); /* again: still paused */
  ASSERT_EQ(1, a.paused);
  ASSERT_OK(adm_pause(&a, fleet_queue_paused));
  ASSERT_EQ(1, a.paused);
  qt_sleep(&t, 20);

  /* Paused: nothing is claimed, nothing said to be pending or delayed. */
  ASSERT_EQ(0, qt_claim(&t, 2, 60000, jobs));
  ASSERT_UEQ(0, t.claim_info.pending);
  ASSERT_UEQ(0, t.claim_info.next_run_at_ms);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(2, t.counts.pending); /* the due delayed job counts */
  ASSERT_UEQ(0, t.counts.running);

  /* Resumed: both are claimed. */
  ASSERT_OK(adm_pause(&a, fleet_queue_resume));
  ASSERT_EQ(0, a.paused);
  ASSERT_OK(adm_pause(&a, fleet_queue_paused));
  ASSERT_EQ(0, a.paused);
  ASSERT_EQ(2, qt_claim(&t, 2, 60000, jobs));
  ASSERT_STR_EQ(id[0], jobs[0].id);
  ASSERT_STR_EQ(id[1], jobs[1].id);
  qt_close(&t);
}

/* A worker on a paused queue: it claims nothing (its claims come back
 * empty), and resuming wakes it at once (its poll is a minute: only the
 * resume's wake-up can make it claim within the wait). */
typedef struct {
  int handled;
  int closed;
} pw_t;

static void pw_handler(fleet_worker_t *w, fleet_job_t *job) {
  pw_t *p = w->data;

  p->handled++;
  fleet_job_complete(job);
}

static void pw_closed(fleet_handle_t *h) {
  ((pw_t *)h->data)->closed = 1;
}

CONFORMANCE_IMPL(queue_admin_pause_worker) {
  char id[FLEET_JOB_ID_MAX + 1];
  fleet_worker_options_t o;
  fleet_worker_stats_t st;
  fleet_worker_t w;
  pw_t p = {0, 0};
  adm_t a;
  qt_t t;

  memset(&a, 0, sizeof(a));
  a.t = &t;
  qt_open(&t, b->url, "admin-pause-worker", NULL);
  ASSERT_OK(adm_pause(&a, fleet_queue_pause));
  fleet_worker_options_init(&o);
  o.poll_ms = 60000;
  ASSERT_OK(fleet_worker_init(&t.c.client, &w, "admin-pause-worker", &o));
  w.data = &p;
  ASSERT_OK(fleet_worker_start(&w, pw_handler));
  qt_add(&t, "a", "1", id);
  qt_sleep(&t, 300);
  ASSERT_EQ(0, p.handled);
  fleet_worker_stats(&w, &st);
  ASSERT_UEQ(0, st.claimed);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.pending);

  ASSERT_OK(adm_pause(&a, fleet_queue_resume));
  ASSERT(fleet_test_run_until(&t.c.loop, fleet_test_flag_set, &p.handled,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(1, p.handled);
  ASSERT_OK(fleet_worker_close(&w, pw_closed));
  ASSERT(fleet_test_run_until(&t.c.loop, fleet_test_flag_set, &p.closed,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  qt_close(&t);
}
