/* test_queue_groups.c -- a job's group in every state, on both adapters:
 * what fleet_queue_get() and the job pages (fleet_queue_jobs(),
 * fleet_queue_group_jobs()) tell of it, and a cancel of a pending job of a
 * group, whose group no record names (lib/queue_flow.lua: the set it waits
 * in tells it). */
#include "test_queue_util.h"

/* What a get or a page saw. */
typedef struct {
  int done, status;
  char group[FLEET_JOB_GROUP_MAX + 1];
  int has_group;
  fleet_job_state_t state;
  char ids[16][16];
  char groups[16][16];
  size_t n;
  uint64_t total;
} gq_t;

static void gq_on_get(fleet_queue_t *q, int status,
                      const fleet_job_info_t *info, void *ud) {
  gq_t *r = ud;
  (void)q;
  r->done = 1;
  r->status = status;
  r->has_group = status == 0 && info->group != NULL;
  r->group[0] = '\0';
  if (r->has_group)
    snprintf(r->group, sizeof(r->group), "%s", info->group);
  if (status == 0)
    r->state = info->state;
}

static void gq_on_jobs(fleet_queue_t *q, int status,
                       const fleet_job_summary_t *jobs, size_t n,
                       uint64_t total, uint64_t next, void *ud) {
  gq_t *r = ud;
  size_t i;
  (void)q;
  (void)next;
  r->done = 1;
  r->status = status;
  r->n = n;
  r->total = total;
  ASSERT_LE(n, 16);
  for (i = 0; i < n; i++) {
    snprintf(r->ids[i], sizeof(r->ids[i]), "%s", jobs[i].id);
    snprintf(r->groups[i], sizeof(r->groups[i]), "%s",
             jobs[i].group != NULL ? jobs[i].group : "-");
  }
}

static void gq_on_retry(fleet_queue_t *q, int status, uint64_t retried,
                        void *ud) {
  gq_t *r = ud;
  (void)q;
  r->done = 1;
  r->status = status;
  r->total = retried;
}

static void gq_wait(qt_t *t, gq_t *r) {
  ASSERT(fleet_test_run_until(&t->c.loop, fleet_test_flag_set, &r->done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(r->status);
}

/* The group fleet_queue_get() tells of `id` ("-": none), and its state. */
static const char *gq_get(qt_t *t, gq_t *r, const char *id) {
  memset(r, 0, sizeof(*r));
  ASSERT_OK(fleet_queue_get(&t->q, id, gq_on_get, r));
  gq_wait(t, r);
  return r->has_group ? r->group : "-";
}

/* The group the page of `state` tells of `id` ("-": none). */
static const char *gq_page_group(qt_t *t, gq_t *r, fleet_job_state_t state,
                                 const char *id) {
  size_t i;

  memset(r, 0, sizeof(*r));
  ASSERT_OK(fleet_queue_jobs(&t->q, state, 0, 16, 10, gq_on_jobs, r));
  gq_wait(t, r);
  for (i = 0; i < r->n; i++)
    if (strcmp(r->ids[i], id) == 0)
      return r->groups[i];
  return "(not listed)";
}

/* Enqueues one job of `group` (NULL: none), delayed by `delay_ms`, with
 * `max_attempts`; its id in `id`. */
static void gq_add(qt_t *t, const char *group, uint64_t delay_ms,
                   uint32_t max_attempts, char *id) {
  fleet_job_spec_t s;
  char ids[1][FLEET_JOB_ID_MAX + 1];

  fleet_job_spec_init(&s, "t", "x", 1);
  s.group = group;
  s.delay_ms = delay_ms;
  s.max_attempts = max_attempts;
  ASSERT_OK(qt_enqueue(t, &s, 1, NULL, ids));
  strcpy(id, ids[0]);
}

/* The group of every state: a pending job's from its set (no record names
 * it), a delayed one's and a dead one's from their options, a running
 * one's from its claim, a completed one's from the claim it kept. */
CONFORMANCE_IMPL(queue_group_states) {
  fleet_queue_options_t o;
  char plain[32], a1[32], a2[32], b1[32], late[32], dies[32];
  qt_job_t jobs[8];
  fleet_claim_t c;
  qt_t t;
  gq_t r;
  int i, n, ia1 = -1, idies = -1;

  fleet_queue_options_init(&o);
  o.keep_completed = 100;
  qt_open(&t, b->url, "gstates", &o);
  gq_add(&t, NULL, 0, 3, plain);
  gq_add(&t, "alpha", 0, 3, a1);
  gq_add(&t, "alpha", 0, 3, a2);
  gq_add(&t, "beta", 0, 3, b1);
  gq_add(&t, "beta", 600000, 3, late);
  gq_add(&t, "alpha", 0, 1, dies);

  /* Pending and delayed. */
  ASSERT_STR_EQ("alpha", gq_get(&t, &r, a1));
  ASSERT_EQ(FLEET_JOB_PENDING, r.state);
  ASSERT_STR_EQ("-", gq_get(&t, &r, plain));
  ASSERT_STR_EQ("beta", gq_get(&t, &r, b1));
  ASSERT_STR_EQ("beta", gq_get(&t, &r, late));
  ASSERT_EQ(FLEET_JOB_DELAYED, r.state);
  ASSERT_STR_EQ("alpha", gq_page_group(&t, &r, FLEET_JOB_PENDING, a1));
  ASSERT_STR_EQ("-", gq_page_group(&t, &r, FLEET_JOB_PENDING, plain));
  ASSERT_STR_EQ("beta", gq_page_group(&t, &r, FLEET_JOB_PENDING, b1));
  ASSERT_UEQ(5, r.total);
  ASSERT_STR_EQ("beta", gq_page_group(&t, &r, FLEET_JOB_DELAYED, late));

  /* One group's pending jobs, in claim order. */
  memset(&r, 0, sizeof(r));
  ASSERT_OK(fleet_queue_group_jobs(&t.q, "alpha", 0, 16, 10, gq_on_jobs, &r));
  gq_wait(&t, &r);
  ASSERT_UEQ(3, r.total);
  ASSERT_EQ(3, (int)r.n);
  ASSERT_STR_EQ(a1, r.ids[0]);
  ASSERT_STR_EQ(a2, r.ids[1]);
  ASSERT_STR_EQ(dies, r.ids[2]);
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_group_jobs(&t.q, "", 0, 16, 10, gq_on_jobs, &r));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_group_jobs(&t.q, NULL, 0, 16, 10, gq_on_jobs, &r));

  /* A cancel finds the set of a pending job of a group. */
  ASSERT_OK(qt_cancel(&t, a2));
  memset(&r, 0, sizeof(r));
  ASSERT_OK(fleet_queue_group_jobs(&t.q, "alpha", 0, 16, 10, gq_on_jobs, &r));
  gq_wait(&t, &r);
  ASSERT_UEQ(2, r.total);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(4, t.counts.pending);

  /* Running: the claim's group. */
  n = qt_claim(&t, 8, 60000, jobs);
  ASSERT_EQ(4, n);
  for (i = 0; i < n; i++) {
    if (strcmp(jobs[i].id, a1) == 0)
      ia1 = i;
    if (strcmp(jobs[i].id, dies) == 0)
      idies = i;
  }
  ASSERT(ia1 >= 0 && idies >= 0);
  ASSERT_STR_EQ("alpha", gq_page_group(&t, &r, FLEET_JOB_RUNNING, a1));
  ASSERT_STR_EQ("alpha", gq_get(&t, &r, a1));
  ASSERT_EQ(FLEET_JOB_RUNNING, r.state);

  /* Dead: its options keep it; completed: its kept claim. */
  c = qt_claim_of(&jobs[idies]);
  ASSERT_OK(qt_fail(&t, &c, "no"));
  ASSERT_EQ(1, t.dead);
  ASSERT_STR_EQ("alpha", gq_get(&t, &r, dies));
  ASSERT_EQ(FLEET_JOB_DEAD, r.state);
  ASSERT_STR_EQ("alpha", gq_page_group(&t, &r, FLEET_JOB_DEAD, dies));
  c = qt_claim_of(&jobs[ia1]);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  ASSERT_STR_EQ("alpha", gq_page_group(&t, &r, FLEET_JOB_COMPLETED, a1));

  /* Retried from dead, it waits in its group's set again. */
  memset(&r, 0, sizeof(r));
  ASSERT_OK(fleet_queue_group_jobs(&t.q, "alpha", 0, 16, 10, gq_on_jobs, &r));
  gq_wait(&t, &r);
  ASSERT_UEQ(0, r.total);
  memset(&r, 0, sizeof(r));
  ASSERT_OK(fleet_queue_retry(&t.q, dies, gq_on_retry, &r));
  gq_wait(&t, &r);
  ASSERT_UEQ(1, r.total);
  memset(&r, 0, sizeof(r));
  ASSERT_OK(fleet_queue_group_jobs(&t.q, "alpha", 0, 16, 10, gq_on_jobs, &r));
  gq_wait(&t, &r);
  ASSERT_UEQ(1, r.total);
  ASSERT_STR_EQ(dies, r.ids[0]);
  ASSERT_STR_EQ("alpha", r.groups[0]);
  qt_close(&t);
}
