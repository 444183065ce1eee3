/* test_queue_flow.c -- flow control on both adapters (docs/queue.md, "Flow
 * control"): the queue's rate limit (a sliding window on the backend
 * clock), its concurrency limit (counted by claims, freed by a completion
 * or a recovery), groups claimed in rotation with priorities inside each
 * and a grouped job's life (delayed, released, retried), group limits and
 * weights, holds of the queue and of a group, a handler's
 * fleet_job_rate_limit(), a worker under both limits, a worker woken when
 * the limits are cleared, heartbeats under a group concurrency limit, and
 * bad input.
 *
 * Every limit is checked from what the claims returned (their backend
 * time, their jobs and retry_at_ms) or from a worker's ledger of start and
 * end times, never from how long the test took. */
#include <time.h>

#include "test_queue_util.h"

/* ------------------------------------------------------------------------ */
/* Blocking helpers over the flow calls                                     */

/* One group as fleet_queue_groups() listed it, copied out. */
typedef struct {
  char name[FLEET_JOB_GROUP_MAX + 1];
  uint64_t pending;
  uint64_t running;
  uint64_t rate_used;
  uint32_t weight;
  uint64_t held_until_ms;
} qf_group_t;

/* Where the callbacks of the current call copy what they get. */
static int qf_in_call;
static fleet_queue_limits_t *qf_out_limits;
static fleet_queue_flow_t *qf_out_flow;
static qf_group_t *qf_out_groups;
static size_t qf_out_cap, *qf_out_n;
static uint64_t *qf_out_total;

/* Every callback starts here: not inside the call, once per call. */
static qt_t *qf_enter(void *ud, int status) {
  qt_t *t = ud;

  ASSERT_EQ(0, qf_in_call);
  ASSERT_EQ(0, t->done);
  t->done = 1;
  t->status = status;
  return t;
}

static void qf_begin(qt_t *t) {
  t->done = 0;
  t->status = 1;
  qf_in_call = 1;
}

/* Waits for the callback of a call that returned `rc`; returns the
 * callback's status, or the call's error (its callback must never run). */
static int qf_finish(qt_t *t, int rc) {
  qf_in_call = 0;
  if (rc != 0) {
    qt_sleep(t, 1);
    ASSERT_EQ(0, t->done);
    return rc;
  }
  qt_wait(t);
  return t->status;
}

static void qf_on_status(fleet_handle_t *h, int status, void *ud) {
  qf_enter(ud, status);
}

static int qf_hold(qt_t *t, const char *group, uint32_t ms) {
  qf_begin(t);
  return qf_finish(t, fleet_queue_hold(&t->q, group, ms, qf_on_status, t));
}

static int qf_weight(qt_t *t, const char *group, uint32_t weight) {
  qf_begin(t);
  return qf_finish(
      t, fleet_queue_set_group_weight(&t->q, group, weight, qf_on_status, t));
}

static void qf_on_limits(fleet_queue_t *q, int status,
                         const fleet_queue_limits_t *limits,
                         const fleet_queue_flow_t *flow, void *ud) {
  qf_enter(ud, status);
  if (status != 0) {
    ASSERT_NULL(limits);
    ASSERT_NULL(flow);
    return;
  }
  *qf_out_limits = *limits;
  *qf_out_flow = *flow;
}

static int qf_limits(qt_t *t, fleet_queue_limits_t *l, fleet_queue_flow_t *f) {
  qf_out_limits = l;
  qf_out_flow = f;
  qf_begin(t);
  return qf_finish(t, fleet_queue_limits(&t->q, qf_on_limits, t));
}

static void qf_on_groups(fleet_queue_t *q, int status,
                         const fleet_queue_group_t *groups, size_t n,
                         uint64_t total, void *ud) {
  size_t i;

  qf_enter(ud, status);
  ASSERT_LE(n, qf_out_cap);
  *qf_out_n = n;
  *qf_out_total = total;
  for (i = 0; i < n; i++) {
    qf_group_t *g = &qf_out_groups[i];
    ASSERT_LE(strlen(groups[i].name), FLEET_JOB_GROUP_MAX);
    snprintf(g->name, sizeof(g->name), "%s", groups[i].name);
    g->pending = groups[i].pending;
    g->running = groups[i].running;
    g->rate_used = groups[i].rate_used;
    g->weight = groups[i].weight;
    g->held_until_ms = groups[i].held_until_ms;
  }
}

static int qf_groups(qt_t *t, const char *after, size_t limit, qf_group_t *out,
                     size_t cap, size_t *n, uint64_t *total) {
  qf_out_groups = out;
  qf_out_cap = cap;
  qf_out_n = n;
  qf_out_total = total;
  qf_begin(t);
  return qf_finish(t, fleet_queue_groups(&t->q, after, limit, qf_on_groups, t));
}

/* The group `name` of a listing, or NULL. */
static const qf_group_t *qf_group_find(const qf_group_t *g, size_t n,
                                       const char *name) {
  size_t i;

  for (i = 0; i < n; i++)
    if (strcmp(g[i].name, name) == 0)
      return &g[i];
  return NULL;
}

/* Enqueues `n` (at most 200) jobs of `group` (NULL: none) with
 * `priority`; `ids` (or NULL) gets their ids. */
static void qf_add(qt_t *t, const char *group, size_t n, int priority,
                   char (*ids)[FLEET_JOB_ID_MAX + 1]) {
  static fleet_job_spec_t specs[200];
  int status[200];
  size_t i;

  ASSERT_LE(n, 200);
  for (i = 0; i < n; i++) {
    fleet_job_spec_init(&specs[i], "t", "x", 1);
    specs[i].group = group;
    specs[i].priority = priority;
  }
  ASSERT_OK(qt_enqueue(t, specs, n, status, ids));
  for (i = 0; i < n; i++)
    ASSERT_OK(status[i]);
}

/* Sleeps on the loop until the backend clock has passed `at_ms`. */
static void qf_sleep_until(qt_t *t, uint64_t at_ms) {
  uint64_t now;
  int i;

  for (i = 0; i < 100 && (now = qt_now_ms(t)) <= at_ms; i++)
    qt_sleep(t, at_ms - now + 1);
  ASSERT_UGT(qt_now_ms(t), at_ms);
}

/* The wall clock in microseconds since the Unix epoch: the ledgers'
 * times, comparable with the backend clock of this machine. */
static uint64_t qf_unix_us(void) {
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Claims of a test: each call's backend time and the jobs it got. */
typedef struct {
  uint64_t at[64];
  int got[64];
  int n;
} qf_claims_t;

static void qf_claims_add(qf_claims_t *c, uint64_t at, int got) {
  ASSERT_LT(c->n, 64);
  c->at[c->n] = at;
  c->got[c->n] = got;
  c->n++;
}

/* Asserts that no window of `ms` on the backend clock holds more than
 * `max` claimed jobs. The claims' times are whole ms and the clock is
 * finer: claims in ms t - ms and in ms t may be less than `ms` apart, so
 * the window checked is [t - ms, t], ms + 1 whole ms. */
static void qf_claims_check(const qf_claims_t *c, uint64_t ms, int max) {
  int i, j, sum;

  for (i = 0; i < c->n; i++) {
    sum = 0;
    for (j = 0; j < c->n; j++)
      if (c->at[j] <= c->at[i] && c->at[j] + ms >= c->at[i])
        sum += c->got[j];
    if (sum > max)
      fleet_test__fail(__FILE__, __LINE__,
                       "%d jobs claimed in the %" PRIu64 " ms up to %" PRIu64
                       ", limit %d",
                       sum, ms, c->at[i], max);
  }
}

/* ------------------------------------------------------------------------ */
/* Rate limit                                                               */

/* 5 claims per 2000 ms: the first claim gets 5 of 20, the next none and
 * the time the window frees (the end of the oldest claim's ms + 2000 ms:
 * the backend clock is finer than the ms); claiming at that
 * time gets the next 5, and no 2000 ms of the backend clock holds more
 * than 5 claimed jobs. */
CONFORMANCE_IMPL(queue_flow_rate) {
  fleet_queue_limits_t l, rl;
  fleet_queue_flow_t f;
  qf_claims_t c;
  qt_job_t jobs[10];
  qt_t t;
  int n, claimed = 0, tries;

  memset(&c, 0, sizeof(c));
  qt_open(&t, b->url, "rate", NULL);
  memset(&l, 0, sizeof(l));
  l.rate_max = 5;
  l.rate_ms = 2000;
  ASSERT_OK(qt_set_limits(&t, &l));
  qf_add(&t, NULL, 20, 0, NULL);

  n = qt_claim(&t, 10, 60000, jobs);
  ASSERT_EQ(5, n);
  ASSERT_UEQ(15, t.claim_info.pending);
  qf_claims_add(&c, t.claim_info.now_ms, n);
  claimed += n;
  ASSERT_OK(qf_limits(&t, &rl, &f));
  ASSERT_EQ(5, rl.rate_max);
  ASSERT_EQ(2000, rl.rate_ms);
  ASSERT_EQ(0, rl.concurrency);
  ASSERT_UEQ(5, f.rate_used);
  ASSERT_UEQ(5, f.running);

  /* Held back: nothing, and when to come back. */
  n = qt_claim(&t, 10, 60000, jobs);
  ASSERT_EQ(0, n);
  ASSERT_UGT(t.claim_info.pending, 0);
  ASSERT_UGT(t.claim_info.retry_at_ms, t.claim_info.now_ms);
  ASSERT_ULE(t.claim_info.retry_at_ms, t.claim_info.now_ms + 2001);
  ASSERT_UEQ(c.at[0] + 1 + 2000, t.claim_info.retry_at_ms);

  /* Two more windows, each claimed when the last one said. */
  for (tries = 0; claimed < 15 && tries < 20; tries++) {
    uint64_t retry = t.claim_info.retry_at_ms;
    if (retry != 0) {
      ASSERT_UNE(FLEET_CLAIM_WAIT_SLOT, retry);
      qf_sleep_until(&t, retry);
    }
    n = qt_claim(&t, 10, 60000, jobs);
    ASSERT_GE(n, 0);
    if (n == 0) {
      /* (The claim came a little early for the backend clock.) */
      ASSERT_UGT(t.claim_info.retry_at_ms, t.claim_info.now_ms);
      ASSERT_ULE(t.claim_info.retry_at_ms, t.claim_info.now_ms + 2001);
      continue;
    }
    ASSERT_EQ(5, n);
    ASSERT_UGE(t.claim_info.now_ms, retry);
    qf_claims_add(&c, t.claim_info.now_ms, n);
    claimed += n;
  }
  ASSERT_EQ(15, claimed);
  qf_claims_check(&c, 2000, 5);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(5, t.counts.pending);
  ASSERT_UEQ(15, t.counts.running);
  qt_close(&t);
}

/* ------------------------------------------------------------------------ */
/* Concurrency                                                              */

/* Concurrency 3: at most 3 claimed at once; a full queue says "wait for a
 * slot"; a completion frees one, and so does a recovered claim. */
CONFORMANCE_IMPL(queue_flow_concurrency) {
  fleet_queue_limits_t l, rl;
  fleet_queue_flow_t f;
  qt_job_t jobs[10], more[10], short_job[10];
  fleet_claim_t cl;
  qt_t t;
  int n;

  qt_open(&t, b->url, "conc", NULL);
  memset(&l, 0, sizeof(l));
  l.concurrency = 3;
  ASSERT_OK(qt_set_limits(&t, &l));
  qf_add(&t, NULL, 10, 0, NULL);

  ASSERT_EQ(2, qt_claim(&t, 2, 60000, jobs));
  /* One slot left: a claim of 10 gets 1, here with a short claim. */
  ASSERT_EQ(1, qt_claim(&t, 10, 200, short_job));
  ASSERT_UEQ(0, t.claim_info.retry_at_ms);
  n = qt_claim(&t, 10, 60000, more);
  ASSERT_EQ(0, n);
  ASSERT_UEQ(FLEET_CLAIM_WAIT_SLOT, t.claim_info.retry_at_ms);
  ASSERT_UEQ(7, t.claim_info.pending);
  ASSERT_OK(qf_limits(&t, &rl, &f));
  ASSERT_EQ(3, rl.concurrency);
  ASSERT_UEQ(3, f.running);

  /* A completion frees one slot, and only one. */
  cl = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &cl, 1, NULL));
  ASSERT_EQ(1, qt_claim(&t, 10, 60000, more));
  ASSERT_EQ(0, qt_claim(&t, 10, 60000, more + 1));
  ASSERT_UEQ(FLEET_CLAIM_WAIT_SLOT, t.claim_info.retry_at_ms);

  /* The short claim runs out; its recovery frees its slot. */
  qf_sleep_until(&t, short_job[0].deadline_ms);
  ASSERT_EQ(0, qt_claim(&t, 10, 60000, more + 1));
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.requeued);
  ASSERT_EQ(1, qt_claim(&t, 10, 60000, more + 1));
  ASSERT_EQ(0, qt_claim(&t, 10, 60000, more + 2));
  ASSERT_UEQ(FLEET_CLAIM_WAIT_SLOT, t.claim_info.retry_at_ms);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(3, t.counts.running);
  ASSERT_UEQ(6, t.counts.pending);

  /* Cleared, the limit binds no more. */
  ASSERT_OK(qt_set_limits(&t, NULL));
  ASSERT_EQ(6, qt_claim(&t, 10, 60000, more + 2));
  ASSERT_UEQ(0, t.claim_info.retry_at_ms);
  qt_close(&t);
}

/* ------------------------------------------------------------------------ */
/* Groups and fairness                                                      */

/* 200 jobs of "big", then 3 of "small" with three priorities: claimed one
 * at a time, the groups alternate, so every small job is claimed within
 * the first 6 claims, highest priority first. Counts, get, cancel and the
 * list of groups see the groups. */
CONFORMANCE_IMPL(queue_flow_groups) {
  static char big[200][FLEET_JOB_ID_MAX + 1];
  fleet_queue_limits_t l;
  char small[3][FLEET_JOB_ID_MAX + 1], solo[1][FLEET_JOB_ID_MAX + 1];
  fleet_job_info_t info;
  qf_group_t g[8];
  const qf_group_t *gb, *gs;
  qt_job_t job[1];
  size_t ng;
  uint64_t total;
  qt_t t;
  int i, nsmall = 0, nbig = 0, order[3];

  qt_open(&t, b->url, "groups", NULL);
  /* Turns of one job: the claims alternate job by job. */
  memset(&l, 0, sizeof(l));
  l.group_turn = 1;
  ASSERT_OK(qt_set_limits(&t, &l));
  qf_add(&t, "big", 200, 0, big);
  qf_add(&t, "small", 1, 0, &small[0]);
  qf_add(&t, "small", 1, 5, &small[1]);
  qf_add(&t, "small", 1, -5, &small[2]);
  qf_add(&t, "solo", 1, 0, solo);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(204, t.counts.pending);

  ASSERT_OK(qt_get(&t, small[1], &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  ASSERT_STR_EQ("small", info.group);
  ASSERT_EQ(5, info.priority);

  /* A group whose last pending job is cancelled leaves the rotation. */
  ASSERT_OK(qt_cancel(&t, solo[0]));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, solo[0], &info, NULL, 0, NULL, 0));
  /* A grouped job cancelled from the middle of its group. */
  ASSERT_OK(qt_cancel(&t, big[100]));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, big[100], &info, NULL, 0, NULL, 0));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(202, t.counts.pending);

  for (i = 0; i < 6; i++) {
    ASSERT_EQ(1, qt_claim(&t, 1, 60000, job));
    ASSERT_UEQ(0, t.claim_info.retry_at_ms);
    ASSERT_STR_NE("solo", job[0].group);
    if (strcmp(job[0].group, "small") == 0) {
      int k;
      for (k = 0; k < 3 && strcmp(small[k], job[0].id) != 0; k++)
        ;
      ASSERT_LT(k, 3);
      order[nsmall++] = k;
    } else {
      ASSERT_STR_EQ("big", job[0].group);
      /* Oldest first inside the group. */
      ASSERT_STR_EQ(big[nbig], job[0].id);
      nbig++;
    }
  }
  ASSERT_EQ(3, nsmall);
  ASSERT_EQ(3, nbig);
  /* Priorities order the jobs of the group. */
  ASSERT_EQ(1, order[0]);
  ASSERT_EQ(0, order[1]);
  ASSERT_EQ(2, order[2]);

  ASSERT_OK(qt_get(&t, small[0], &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_RUNNING, info.state);
  ASSERT_STR_EQ("small", info.group);

  ASSERT_OK(qf_groups(&t, NULL, 10, g, 8, &ng, &total));
  ASSERT_EQ(2, ng);
  ASSERT_UEQ(2, total);
  /* In name order. */
  ASSERT_STR_EQ("big", g[0].name);
  ASSERT_STR_EQ("small", g[1].name);
  gb = qf_group_find(g, ng, "big");
  gs = qf_group_find(g, ng, "small");
  ASSERT_NOT_NULL(gb);
  ASSERT_NOT_NULL(gs);
  ASSERT_UEQ(196, gb->pending);
  ASSERT_UEQ(3, gb->running);
  ASSERT_EQ(1, gb->weight);
  ASSERT_UEQ(0, gb->held_until_ms);
  ASSERT_UEQ(0, gs->pending);
  ASSERT_UEQ(3, gs->running);
  /* Pages: after "big" comes "small". */
  ASSERT_OK(qf_groups(&t, "big", 10, g, 8, &ng, &total));
  ASSERT_EQ(1, ng);
  ASSERT_UEQ(2, total);
  ASSERT_STR_EQ("small", g[0].name);
  ASSERT_OK(qf_groups(&t, NULL, 1, g, 8, &ng, &total));
  ASSERT_EQ(1, ng);
  ASSERT_STR_EQ("big", g[0].name);

  /* Jobs without a group take their turn in the rotation too. */
  qf_add(&t, NULL, 2, 0, NULL);
  nbig = 0;
  for (i = 0; i < 4; i++) {
    ASSERT_EQ(1, qt_claim(&t, 1, 60000, job));
    nbig += strcmp(job[0].group, "big") == 0;
  }
  ASSERT_EQ(2, nbig);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(194, t.counts.pending);
  ASSERT_UEQ(10, t.counts.running);
  qt_close(&t);

  /* A backlog without a group, then a group: the group's jobs come
   * within the first claims too. */
  qt_open(&t, b->url, "groups2", NULL);
  ASSERT_OK(qt_set_limits(&t, &l));
  qf_add(&t, NULL, 200, 0, NULL);
  qf_add(&t, "small", 3, 0, NULL);
  nsmall = 0;
  for (i = 0; i < 6; i++) {
    ASSERT_EQ(1, qt_claim(&t, 1, 60000, job));
    nsmall += strcmp(job[0].group, "small") == 0;
  }
  ASSERT_EQ(3, nsmall);
  qt_close(&t);
}

/* Where fleet_queue_jobs() copies its page. */
static char (*qf_out_ids)[FLEET_JOB_ID_MAX + 1];

static void qf_on_jobs(fleet_queue_t *q, int status,
                       const fleet_job_summary_t *jobs, size_t n,
                       uint64_t total, uint64_t next_cursor, void *ud) {
  size_t i;

  qf_enter(ud, status);
  ASSERT_LE(n, qf_out_cap);
  *qf_out_n = n;
  *qf_out_total = total;
  for (i = 0; i < n; i++)
    snprintf(qf_out_ids[i], sizeof(qf_out_ids[i]), "%s", jobs[i].id);
}

/* A page of up to `cap` jobs in `state`, from the first. */
static int qf_jobs(qt_t *t, fleet_job_state_t state,
                   char (*ids)[FLEET_JOB_ID_MAX + 1], size_t cap, size_t *n,
                   uint64_t *total) {
  qf_out_ids = ids;
  qf_out_cap = cap;
  qf_out_n = n;
  qf_out_total = total;
  qf_begin(t);
  return qf_finish(t,
                   fleet_queue_jobs(&t->q, state, 0, cap, 64, qf_on_jobs, t));
}

static void qf_on_retry(fleet_queue_t *q, int status, uint64_t retried,
                        void *ud) {
  qf_enter(ud, status);
  ((qt_t *)ud)->removed = retried;
}

/* fleet_queue_retry(); `t->removed` gets how many went back. */
static int qf_retry(qt_t *t, const char *id) {
  qf_begin(t);
  return qf_finish(t, fleet_queue_retry(&t->q, id, qf_on_retry, t));
}

/* A grouped job keeps its group through its life: delayed, then due; a
 * release and a failed attempt put it back in its group; dead, a retry
 * puts it back there too. Listings and counts see grouped jobs. */
CONFORMANCE_IMPL(queue_flow_group_lifecycle) {
  char ids[8][FLEET_JOB_ID_MAX + 1], ida[1][FLEET_JOB_ID_MAX + 1];
  fleet_job_spec_t s;
  fleet_job_info_t info;
  fleet_claim_t cl;
  qf_group_t g[4];
  qt_job_t job[4];
  size_t n, ng;
  uint64_t total;
  qt_t t;

  qt_open(&t, b->url, "glife", NULL);
  fleet_job_spec_init(&s, "t", "x", 1);
  s.group = "a";
  s.delay_ms = 300;
  s.max_attempts = 2;
  s.backoff = FLEET_BACKOFF_FIXED;
  s.backoff_ms = 100;
  s.backoff_jitter_pct = 0;
  ASSERT_OK(qt_enqueue(&t, &s, 1, NULL, ida));
  qf_add(&t, "b", 1, 0, NULL);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.delayed);
  ASSERT_UEQ(1, t.counts.pending);
  ASSERT_OK(qf_jobs(&t, FLEET_JOB_DELAYED, ids, 8, &n, &total));
  ASSERT_EQ(1, n);
  ASSERT_STR_EQ(ida[0], ids[0]);

  /* Delayed, then due: claimed in its group. */
  ASSERT_EQ(1, qt_claim(&t, 10, 60000, job));
  ASSERT_STR_EQ("b", job[0].group);
  ASSERT_UGT(t.claim_info.next_run_at_ms, 0);
  qf_sleep_until(&t, t.claim_info.next_run_at_ms);
  ASSERT_EQ(1, qt_claim(&t, 10, 60000, job));
  ASSERT_STR_EQ(ida[0], job[0].id);
  ASSERT_STR_EQ("a", job[0].group);
  ASSERT_EQ(1, job[0].attempts);

  /* Released: back in its group, the attempt not counted. */
  cl = qt_claim_of(&job[0]);
  ASSERT_OK(qt_release(&t, &cl, 1, NULL));
  ASSERT_OK(qf_groups(&t, NULL, 4, g, 4, &ng, &total));
  ASSERT_NOT_NULL(qf_group_find(g, ng, "a"));
  ASSERT_UEQ(1, qf_group_find(g, ng, "a")->pending);
  ASSERT_OK(qf_jobs(&t, FLEET_JOB_PENDING, ids, 8, &n, &total));
  ASSERT_EQ(1, n);
  ASSERT_STR_EQ(ida[0], ids[0]);
  ASSERT_EQ(1, qt_claim(&t, 10, 60000, job));
  ASSERT_STR_EQ("a", job[0].group);
  ASSERT_EQ(1, job[0].attempts);

  /* A failed attempt: retried in its group after the backoff. */
  cl = qt_claim_of(&job[0]);
  ASSERT_OK(qt_fail(&t, &cl, "boom"));
  ASSERT_EQ(0, t.dead);
  qf_sleep_until(&t, t.retry_at);
  ASSERT_EQ(1, qt_claim(&t, 10, 60000, job));
  ASSERT_STR_EQ("a", job[0].group);
  ASSERT_EQ(2, job[0].attempts);

  /* Dead, then retried by hand: pending in its group again. */
  cl = qt_claim_of(&job[0]);
  ASSERT_OK(qt_fail(&t, &cl, "boom"));
  ASSERT_EQ(1, t.dead);
  ASSERT_OK(qf_retry(&t, ida[0]));
  ASSERT_UEQ(1, t.removed);
  ASSERT_OK(qt_get(&t, ida[0], &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  ASSERT_STR_EQ("a", info.group);
  ASSERT_EQ(1, qt_claim(&t, 10, 60000, job));
  ASSERT_STR_EQ(ida[0], job[0].id);
  ASSERT_STR_EQ("a", job[0].group);
  ASSERT_EQ(1, job[0].attempts);

  /* fleet_queue_list() and the pending page see grouped jobs. */
  qf_add(&t, "c", 3, 0, NULL);
  qf_add(&t, NULL, 1, 0, NULL);
  ASSERT_OK(qt_list(&t, "t", 8, ids, &n, &total));
  ASSERT_EQ(4, n);
  ASSERT_UEQ(4, total);
  ASSERT_OK(qf_jobs(&t, FLEET_JOB_PENDING, ids, 8, &n, &total));
  ASSERT_EQ(4, n);
  ASSERT_UEQ(4, total);
  qt_close(&t);
}

/* ------------------------------------------------------------------------ */
/* Group limits and weights                                                 */

/* The group of each claimed job, counted. */
static int qf_count_group(const qt_job_t *jobs, int n, const char *group) {
  int i, k = 0;

  for (i = 0; i < n; i++)
    k += strcmp(jobs[i].group, group) == 0;
  return k;
}

/* Group concurrency 1: one running job per group (jobs without a group
 * are not bound by it); a completion frees its group's slot. A group rate
 * of 2 per 1000 ms: the third claim of a group waits for its window.
 * Weight 3: each turn takes 3 turns' worth of that group's jobs; by
 * default a turn is 10 jobs. */
CONFORMANCE_IMPL(queue_flow_group_limits) {
  fleet_queue_limits_t l, rl;
  fleet_queue_flow_t f;
  qf_group_t g[8];
  qf_claims_t ca, cb;
  qt_job_t jobs[10], more[10];
  fleet_claim_t cl;
  size_t ng;
  uint64_t total, first;
  qt_t t;
  int n, i, tries, got_a = 0, got_b = 0;

  /* Group concurrency. (Turns of one job: one claim, one turn each.) */
  qt_open(&t, b->url, "gconc", NULL);
  memset(&l, 0, sizeof(l));
  l.group_concurrency = 1;
  l.group_turn = 1;
  ASSERT_OK(qt_set_limits(&t, &l));
  qf_add(&t, "a", 5, 0, NULL);
  qf_add(&t, "b", 5, 0, NULL);
  n = qt_claim(&t, 10, 60000, jobs);
  ASSERT_EQ(2, n);
  ASSERT_EQ(1, qf_count_group(jobs, n, "a"));
  ASSERT_EQ(1, qf_count_group(jobs, n, "b"));
  ASSERT_EQ(0, qt_claim(&t, 10, 60000, more));
  ASSERT_UEQ(FLEET_CLAIM_WAIT_SLOT, t.claim_info.retry_at_ms);
  cl = qt_claim_of(strcmp(jobs[0].group, "a") == 0 ? &jobs[0] : &jobs[1]);
  ASSERT_OK(qt_complete(&t, &cl, 1, NULL));
  /* (A short claim: its recovery frees the group's slot too.) */
  ASSERT_EQ(1, qt_claim(&t, 10, 200, more));
  ASSERT_STR_EQ("a", more[0].group);
  ASSERT_EQ(0, qt_claim(&t, 10, 60000, more + 1));
  ASSERT_UEQ(FLEET_CLAIM_WAIT_SLOT, t.claim_info.retry_at_ms);
  qf_sleep_until(&t, more[0].deadline_ms);
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.requeued);
  ASSERT_EQ(1, qt_claim(&t, 10, 60000, more));
  ASSERT_STR_EQ("a", more[0].group);
  ASSERT_EQ(0, qt_claim(&t, 10, 60000, more + 1));
  ASSERT_UEQ(FLEET_CLAIM_WAIT_SLOT, t.claim_info.retry_at_ms);
  /* (Jobs without a group take one turn of the rotation per claim, as a
   * group does.) */
  qf_add(&t, NULL, 2, 0, NULL);
  for (i = 1; i < 3; i++) {
    ASSERT_EQ(1, qt_claim(&t, 10, 60000, more + i));
    ASSERT_STR_EQ("", more[i].group);
  }
  ASSERT_OK(qf_groups(&t, NULL, 10, g, 8, &ng, &total));
  ASSERT_EQ(2, ng);
  ASSERT_UEQ(1, qf_group_find(g, ng, "a")->running);
  ASSERT_UEQ(3, qf_group_find(g, ng, "a")->pending);
  ASSERT_UEQ(1, qf_group_find(g, ng, "b")->running);
  ASSERT_UEQ(4, qf_group_find(g, ng, "b")->pending);
  ASSERT_OK(qf_limits(&t, &rl, &f));
  ASSERT_EQ(1, rl.group_concurrency);
  ASSERT_UEQ(4, f.running);
  ASSERT_UEQ(2, f.groups);
  qt_close(&t);

  /* Set while jobs run: the group's running jobs are counted from the
   * claims. */
  qt_open(&t, b->url, "gconc2", NULL);
  qf_add(&t, "a", 4, 0, NULL);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs + 1));
  memset(&l, 0, sizeof(l));
  l.group_concurrency = 2;
  ASSERT_OK(qt_set_limits(&t, &l));
  ASSERT_EQ(0, qt_claim(&t, 10, 60000, more));
  ASSERT_UEQ(FLEET_CLAIM_WAIT_SLOT, t.claim_info.retry_at_ms);
  cl = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &cl, 1, NULL));
  ASSERT_EQ(1, qt_claim(&t, 10, 60000, more));
  ASSERT_EQ(0, qt_claim(&t, 10, 60000, more + 1));
  qt_close(&t);

  /* Group rate. */
  memset(&ca, 0, sizeof(ca));
  memset(&cb, 0, sizeof(cb));
  qt_open(&t, b->url, "grate", NULL);
  memset(&l, 0, sizeof(l));
  l.group_rate_max = 2;
  l.group_rate_ms = 1000;
  l.group_turn = 1;
  ASSERT_OK(qt_set_limits(&t, &l));
  qf_add(&t, "a", 5, 0, NULL);
  qf_add(&t, "b", 5, 0, NULL);
  first = 0;
  for (tries = 0; got_a + got_b < 8 && tries < 30; tries++) {
    uint64_t retry = t.claim_info.retry_at_ms;
    if (retry != 0) {
      ASSERT_UNE(FLEET_CLAIM_WAIT_SLOT, retry);
      qf_sleep_until(&t, retry);
    }
    n = qt_claim(&t, 10, 60000, jobs);
    ASSERT_GE(n, 0);
    if (first == 0)
      first = t.claim_info.now_ms;
    if (n == 0) {
      ASSERT_UGT(t.claim_info.pending, 0);
      ASSERT_UGT(t.claim_info.retry_at_ms, t.claim_info.now_ms);
      ASSERT_ULE(t.claim_info.retry_at_ms, t.claim_info.now_ms + 1001);
      continue;
    }
    /* One turn: at most one job per group and claim. */
    ASSERT_LE(qf_count_group(jobs, n, "a"), 1);
    ASSERT_LE(qf_count_group(jobs, n, "b"), 1);
    got_a += qf_count_group(jobs, n, "a");
    got_b += qf_count_group(jobs, n, "b");
    qf_claims_add(&ca, t.claim_info.now_ms, qf_count_group(jobs, n, "a"));
    qf_claims_add(&cb, t.claim_info.now_ms, qf_count_group(jobs, n, "b"));
    t.claim_info.retry_at_ms = 0;
  }
  ASSERT_EQ(4, got_a);
  ASSERT_EQ(4, got_b);
  qf_claims_check(&ca, 1000, 2);
  qf_claims_check(&cb, 1000, 2);
  /* Four per group took two windows. */
  ASSERT_UGE(ca.at[ca.n - 1], first + 1000);
  ASSERT_OK(qf_groups(&t, NULL, 10, g, 8, &ng, &total));
  ASSERT_EQ(2, ng);
  ASSERT_UGE(qf_group_find(g, ng, "a")->rate_used, 1);
  ASSERT_ULE(qf_group_find(g, ng, "a")->rate_used, 2);
  qt_close(&t);

  /* Weights: turns of one job times the weight. */
  qt_open(&t, b->url, "weight", NULL);
  memset(&l, 0, sizeof(l));
  l.group_turn = 1;
  ASSERT_OK(qt_set_limits(&t, &l));
  qf_add(&t, "heavy", 20, 0, NULL);
  qf_add(&t, "light", 20, 0, NULL);
  ASSERT_OK(qf_weight(&t, "heavy", 3));
  for (i = 0; i < 3; i++) {
    n = qt_claim(&t, 10, 60000, jobs);
    ASSERT_EQ(4, n);
    ASSERT_EQ(3, qf_count_group(jobs, n, "heavy"));
    ASSERT_EQ(1, qf_count_group(jobs, n, "light"));
  }
  ASSERT_OK(qf_groups(&t, NULL, 10, g, 8, &ng, &total));
  ASSERT_EQ(2, ng);
  ASSERT_EQ(3, qf_group_find(g, ng, "heavy")->weight);
  ASSERT_EQ(1, qf_group_find(g, ng, "light")->weight);
  ASSERT_UEQ(11, qf_group_find(g, ng, "heavy")->pending);
  ASSERT_UEQ(17, qf_group_find(g, ng, "light")->pending);
  /* Back to 1: plain round-robin. */
  ASSERT_OK(qf_weight(&t, "heavy", 1));
  n = qt_claim(&t, 10, 60000, jobs);
  ASSERT_EQ(2, n);
  ASSERT_EQ(1, qf_count_group(jobs, n, "heavy"));
  qt_close(&t);

  /* The default turn: 10 jobs of a group, then the next group's. */
  qt_open(&t, b->url, "turn", NULL);
  qf_add(&t, "x", 25, 0, NULL);
  qf_add(&t, "y", 25, 0, NULL);
  for (i = 0; i < 4; i++) {
    n = qt_claim(&t, 10, 60000, jobs);
    ASSERT_EQ(10, n);
    ASSERT_EQ(10, qf_count_group(jobs, n, i % 2 == 0 ? "x" : "y"));
  }
  /* A claim of 12: the last 5 of x's, then y's. */
  n = qt_claim(&t, 12, 60000, jobs);
  ASSERT_EQ(10, n);
  ASSERT_EQ(5, qf_count_group(jobs, n, "x"));
  ASSERT_EQ(5, qf_count_group(jobs, n, "y"));
  qt_close(&t);

  /* Claims smaller than a turn: the turn goes on across them. */
  qt_open(&t, b->url, "turn2", NULL);
  qf_add(&t, "x", 15, 0, NULL);
  qf_add(&t, "y", 15, 0, NULL);
  {
    static const int want_x[] = {4, 4, 2, 0, 0, 4};
    for (i = 0; i < 6; i++) {
      n = qt_claim(&t, 4, 60000, jobs);
      ASSERT_EQ(4, n);
      ASSERT_EQ(want_x[i], qf_count_group(jobs, n, "x"));
    }
  }
  qt_close(&t);
}

/* ------------------------------------------------------------------------ */
/* Holds                                                                    */

/* Enqueues `n` (at most 200) jobs of `group` (NULL: none), the payload
 * of the k-th "<tag><first + k>", with the id `id` when not NULL (n is 1
 * then); their ids go to ids[first..] and their payloads to pl[first..]. */
static void qf_add_named(qt_t *t, const char *group, size_t n, size_t first,
                         char tag, const char *id,
                         char (*ids)[FLEET_JOB_ID_MAX + 1], char (*pl)[16]) {
  static fleet_job_spec_t specs[200];
  int status[200];
  size_t i;

  ASSERT_LE(n, 200);
  for (i = 0; i < n; i++) {
    snprintf(pl[first + i], sizeof(pl[0]), "%c%zu", tag, first + i);
    fleet_job_spec_init(&specs[i], "t", pl[first + i], strlen(pl[first + i]));
    specs[i].group = group;
    specs[i].id = id;
  }
  ASSERT_OK(qt_enqueue(t, specs, n, status, ids + first));
  for (i = 0; i < n; i++)
    ASSERT_OK(status[i]);
}

/* A claim of several groups reads each job's record, wherever it is: the
 * jobs of a group's turn come from its block of ids, here across a
 * chunk's end (ids 961..1040: chunks 0 and 1), and a given id's record is
 * in T:jobs; one completion of them all deletes every record. */
CONFORMANCE_IMPL(queue_flow_group_chunks) {
  static char ids[1021][FLEET_JOB_ID_MAX + 1];
  static char pl[1021][16];
  static qt_job_t job[300];
  static fleet_claim_t cl[300];
  static int res[300];
  fleet_queue_limits_t l;
  fleet_job_info_t info;
  size_t k;
  int n, i, x, across = 0;
  qt_t t;

  qt_open(&t, b->url, "gchunks", NULL);
  memset(&l, 0, sizeof(l));
  l.group_turn = 100;
  ASSERT_OK(qt_set_limits(&t, &l));
  /* 940 jobs without a group (ids 1..940), then group a's: a block of
   * 100 ids from 961, 20 jobs, then 60 more from the same block. */
  for (k = 0; k < 940; k += 200)
    qf_add_named(&t, NULL, 940 - k < 200 ? 940 - k : 200, k, 'n', NULL, ids,
                 pl);
  qf_add_named(&t, "a", 20, 940, 'a', NULL, ids, pl);
  qf_add_named(&t, "a", 60, 960, 'a', NULL, ids, pl);
  qf_add_named(&t, "b", 1, 1020, 'b', "b-given", ids, pl);
  ASSERT_STR_EQ("961", ids[940]);
  ASSERT_STR_EQ("1040", ids[1019]);
  ASSERT_STR_EQ("b-given", ids[1020]);

  /* One turn of each: 100 without a group, a's 80, b's one. */
  n = qt_claim(&t, 300, 60000, job);
  ASSERT_EQ(181, n);
  for (i = 0; i < n; i++) {
    for (x = 0; x < 1021 && strcmp(ids[x], job[i].id) != 0; x++)
      ;
    ASSERT_LT(x, 1021);
    ASSERT_UEQ(strlen(pl[x]), job[i].payload_len);
    ASSERT_EQ(0, memcmp(pl[x], job[i].payload, job[i].payload_len));
    ASSERT_STR_EQ(x < 940 ? "" : x < 1020 ? "a" : "b", job[i].group);
    across += x >= 979 && x < 1020; /* (ids 1000..1040) */
    cl[i].id = job[i].id;
    cl[i].token = job[i].token;
  }
  ASSERT_EQ(41, across);
  ASSERT_OK(qt_complete(&t, cl, (size_t)n, res));
  for (i = 0; i < n; i++)
    ASSERT_OK(res[i]);
  for (i = 0; i < n; i++)
    ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, job[i].id, &info, NULL, 0, NULL, 0));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(840, t.counts.pending);
  ASSERT_UEQ(0, t.counts.running);
  qt_close(&t);
}

/* On Redis, the length of the queue's rotation (T:groups); -1 on the
 * memory backend. */
static long long qf_rotation_len(fleet_test_backend_t *b, const char *tag) {
  redisReply *r;
  long long n;

  if (b->redis == NULL)
    return -1;
  r = fleet_test_redis_cmd(b->redis, "LLEN %s:groups", tag);
  ASSERT_EQ(REDIS_REPLY_INTEGER, r->type);
  n = r->integer;
  freeReplyObject(r);
  return n;
}

/* Turns of one job over 40 groups of one job each: one claim takes them
 * all, and each group stays in the rotation (a turn that took a group's
 * last job cannot tell). A job of a 41st group then comes after 40 empty
 * groups: the next claim gets it, and the empty groups leave the
 * rotation by windows asked at once whether they hold a job (on Redis:
 * far fewer LPOPs than groups), not by a visit each. */
CONFORMANCE_IMPL(queue_flow_groups_drain) {
  fleet_queue_limits_t l;
  qt_job_t job[41];
  char name[8], late[1][FLEET_JOB_ID_MAX + 1];
  uint64_t lpops = 0;
  qt_t t;
  int i;

  qt_open(&t, b->url, "gdrain", NULL);
  memset(&l, 0, sizeof(l));
  l.group_turn = 1;
  ASSERT_OK(qt_set_limits(&t, &l));
  for (i = 0; i < 40; i++) {
    snprintf(name, sizeof(name), "g%02d", i);
    qf_add(&t, name, 1, 0, NULL);
  }
  ASSERT_EQ(40, qt_claim(&t, 41, 60000, job));
  for (i = 0; i < 40; i++) {
    snprintf(name, sizeof(name), "g%02d", i);
    ASSERT_STR_EQ(name, job[i].group);
  }
  if (b->redis != NULL)
    ASSERT_EQ(40, qf_rotation_len(b, "{qt:gdrain}"));
  qf_add(&t, "late", 1, 0, late);
  if (b->redis != NULL)
    lpops = fleet_test_redis_command_calls(b->redis, "lpop");
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, job));
  ASSERT_STR_EQ(late[0], job[0].id);
  ASSERT_STR_EQ("late", job[0].group);
  ASSERT_UEQ(0, t.claim_info.retry_at_ms);
  if (b->redis != NULL) {
    ASSERT_ULT(fleet_test_redis_command_calls(b->redis, "lpop") - lpops, 20);
    /* (Only the group whose last job the turn took may stay.) */
    ASSERT_LE(qf_rotation_len(b, "{qt:gdrain}"), 1);
  }
  ASSERT_EQ(0, qt_claim(&t, 1, 60000, job));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.pending);
  ASSERT_UEQ(41, t.counts.running);
  qt_close(&t);
}

/* A hold of the queue: claims get nothing and the hold's end, a later
 * hold extends it, an earlier one does not shorten it; at its end claims
 * go on. A hold of one group holds only that group. */
CONFORMANCE_IMPL(queue_flow_hold) {
  fleet_queue_limits_t l, rl;
  fleet_queue_flow_t f;
  qf_group_t g[8];
  qt_job_t jobs[10];
  size_t ng;
  uint64_t total, held;
  qt_t t;
  int n;

  qt_open(&t, b->url, "hold", NULL);
  qf_add(&t, NULL, 3, 0, NULL);
  ASSERT_OK(qf_hold(&t, NULL, 1000));
  ASSERT_OK(qf_limits(&t, &rl, &f));
  held = f.held_until_ms;
  ASSERT_UGT(held, 0);
  ASSERT_EQ(0, qt_claim(&t, 10, 60000, jobs));
  ASSERT_UEQ(held, t.claim_info.retry_at_ms);
  ASSERT_UGT(held, t.claim_info.now_ms);
  ASSERT_ULE(held, t.claim_info.now_ms + 1000);
  ASSERT_UEQ(3, t.claim_info.pending);
  /* Longer: extended. */
  ASSERT_OK(qf_hold(&t, NULL, 1500));
  ASSERT_OK(qf_limits(&t, &rl, &f));
  ASSERT_UGT(f.held_until_ms, held);
  held = f.held_until_ms;
  /* Shorter: not shortened. */
  ASSERT_OK(qf_hold(&t, NULL, 10));
  ASSERT_OK(qf_limits(&t, &rl, &f));
  ASSERT_UEQ(held, f.held_until_ms);
  ASSERT_EQ(0, qt_claim(&t, 10, 60000, jobs));
  ASSERT_UEQ(held, t.claim_info.retry_at_ms);
  qf_sleep_until(&t, held);
  n = qt_claim(&t, 10, 60000, jobs);
  ASSERT_EQ(3, n);
  ASSERT_UGE(t.claim_info.now_ms, held);
  ASSERT_OK(qf_limits(&t, &rl, &f));
  ASSERT_UEQ(0, f.held_until_ms);
  qt_close(&t);

  qt_open(&t, b->url, "ghold", NULL);
  memset(&l, 0, sizeof(l));
  l.group_turn = 1;
  ASSERT_OK(qt_set_limits(&t, &l));
  qf_add(&t, "a", 2, 0, NULL);
  qf_add(&t, "b", 2, 0, NULL);
  ASSERT_OK(qf_hold(&t, "a", 1000));
  ASSERT_OK(qf_groups(&t, NULL, 10, g, 8, &ng, &total));
  ASSERT_EQ(2, ng);
  held = qf_group_find(g, ng, "a")->held_until_ms;
  ASSERT_UGT(held, 0);
  ASSERT_UEQ(0, qf_group_find(g, ng, "b")->held_until_ms);
  n = qt_claim(&t, 10, 60000, jobs);
  ASSERT_EQ(1, n);
  ASSERT_STR_EQ("b", jobs[0].group);
  ASSERT_EQ(1, qt_claim(&t, 10, 60000, jobs));
  ASSERT_STR_EQ("b", jobs[0].group);
  /* Only the held group is left: its hold's end. */
  ASSERT_EQ(0, qt_claim(&t, 10, 60000, jobs));
  ASSERT_UEQ(held, t.claim_info.retry_at_ms);
  ASSERT_UGT(held, t.claim_info.now_ms);
  /* The queue is not held. */
  ASSERT_OK(qf_limits(&t, &rl, &f));
  ASSERT_UEQ(0, f.held_until_ms);
  qf_sleep_until(&t, held);
  ASSERT_EQ(1, qt_claim(&t, 10, 60000, jobs));
  ASSERT_STR_EQ("a", jobs[0].group);
  ASSERT_UGE(t.claim_info.now_ms, held);
  qt_close(&t);
}

/* ------------------------------------------------------------------------ */
/* A worker under flow control                                              */

/* One handled job: when the handler got it and when it finished it (unix
 * us), its attempt and its claim's backend time. */
typedef struct {
  char id[FLEET_JOB_ID_MAX + 1];
  char group[FLEET_JOB_GROUP_MAX + 1];
  uint32_t attempts;
  uint64_t start_us, end_us;
  uint64_t claimed_ms;
} qf_entry_t;

#define QF_LEDGER_MAX 64

typedef struct {
  qt_t t; /* the client, and a producer queue on it */
  fleet_worker_t w;
  uint32_t claim_ttl_ms;
  uint64_t work_ms;
  /* fleet_job_rate_limit() the first job handled for this long (0: no). */
  uint32_t rate_limit_ms;
  unsigned rate_limit_flags;
  qf_entry_t led[QF_LEDGER_MAX];
  int n;
  int completed, released, other, closed;
  /* What fleet_queue_limits() read right after the release. */
  int flow_read;
  fleet_queue_flow_t flow;
} qf_worker_t;

typedef struct {
  uv_timer_t timer;
  fleet_job_t *job;
  qf_worker_t *qw;
} qf_work_t;

static void qf_on_work_closed(uv_handle_t *h) {
  free(h->data);
}

static void qf_on_work(uv_timer_t *timer) {
  qf_work_t *work = timer->data;
  qf_entry_t *e = &work->qw->led[(intptr_t)work->job->data];

  e->end_us = qf_unix_us();
  ASSERT_OK(fleet_job_complete(work->job));
  uv_close((uv_handle_t *)timer, qf_on_work_closed);
}

static void qf_handler(fleet_worker_t *w, fleet_job_t *job) {
  qf_worker_t *qw = w->data;
  qf_entry_t *e;
  qf_work_t *work;

  ASSERT_LT(qw->n, QF_LEDGER_MAX);
  e = &qw->led[qw->n];
  job->data = (void *)(intptr_t)qw->n++;
  e->start_us = qf_unix_us();
  snprintf(e->id, sizeof(e->id), "%s", job->id);
  snprintf(e->group, sizeof(e->group), "%s",
           job->group != NULL ? job->group : "");
  e->attempts = job->attempts;
  e->claimed_ms = job->deadline_ms - qw->claim_ttl_ms;
  if (qw->rate_limit_ms > 0 && qw->n == 1) {
    e->end_us = e->start_us;
    ASSERT_OK(
        fleet_job_rate_limit(job, qw->rate_limit_ms, qw->rate_limit_flags));
    return;
  }
  work = malloc(sizeof(*work));
  ASSERT_NOT_NULL(work);
  work->job = job;
  work->qw = qw;
  work->timer.data = work;
  ASSERT_OK(uv_timer_init(&qw->t.c.loop, &work->timer));
  ASSERT_OK(uv_timer_start(&work->timer, qf_on_work, qw->work_ms, 0));
}

static void qf_on_flow(fleet_queue_t *q, int status,
                       const fleet_queue_limits_t *limits,
                       const fleet_queue_flow_t *flow, void *ud) {
  qf_worker_t *qw = ud;

  ASSERT_OK(status);
  qw->flow = *flow;
  qw->flow_read = 1;
}

/* The same for a group's hold: the group of the first job handled. */
static void qf_on_flow_groups(fleet_queue_t *q, int status,
                              const fleet_queue_group_t *groups, size_t n,
                              uint64_t total, void *ud) {
  qf_worker_t *qw = ud;
  size_t i;

  ASSERT_OK(status);
  memset(&qw->flow, 0, sizeof(qw->flow));
  for (i = 0; i < n; i++)
    if (strcmp(groups[i].name, qw->led[0].group) == 0)
      qw->flow.held_until_ms = groups[i].held_until_ms;
  qw->flow_read = 1;
}

static void qf_done(fleet_worker_t *w, fleet_job_t *job,
                    fleet_job_action_t action, int status) {
  qf_worker_t *qw = w->data;

  if (action == FLEET_JOB_COMPLETE && (status == 0 || status == FLEET_EALREADY))
    qw->completed++;
  else if (action == FLEET_JOB_RELEASE && status == 0) {
    qw->released++;
    /* What the release held, read at once. */
    if (qw->rate_limit_flags & FLEET_RATE_LIMIT_GROUP)
      ASSERT_OK(fleet_queue_groups(&qw->t.q, NULL, 10, qf_on_flow_groups, qw));
    else
      ASSERT_OK(fleet_queue_limits(&qw->t.q, qf_on_flow, qw));
  } else
    qw->other++;
}

static void qf_on_worker_closed(fleet_handle_t *w) {
  qf_worker_t *qw = w->data;
  qw->closed++;
}

/* Opens a worker of `concurrency` on queue `name`, with a claim TTL of
 * `claim_ttl_ms` and heartbeats every `heartbeat_ms` (0, 0: the
 * defaults). */
static void qf_worker_open_ttl(qf_worker_t *qw, fleet_test_backend_t *b,
                               const char *name, uint32_t concurrency,
                               uint32_t claim_ttl_ms, uint32_t heartbeat_ms) {
  fleet_worker_options_t o;

  memset(qw, 0, sizeof(*qw));
  fleet_worker_options_init(&o);
  o.concurrency = concurrency;
  if (claim_ttl_ms != 0) {
    o.claim_ttl_ms = claim_ttl_ms;
    o.heartbeat_ms = heartbeat_ms;
  }
  o.done_cb = qf_done;
  o.poll_ms = 60000; /* the tests must not depend on polling */
  qw->claim_ttl_ms = o.claim_ttl_ms;
  qt_open(&qw->t, b->url, name, NULL);
  qw->w.data = qw;
  ASSERT_OK(fleet_worker_init(&qw->t.c.client, &qw->w, name, &o));
}

static void qf_worker_open(qf_worker_t *qw, fleet_test_backend_t *b,
                           const char *name, uint32_t concurrency) {
  qf_worker_open_ttl(qw, b, name, concurrency, 0, 0);
}

static void qf_worker_close(qf_worker_t *qw) {
  ASSERT_OK(fleet_worker_close(&qw->w, qf_on_worker_closed));
  ASSERT(fleet_test_wait_count(&qw->t.c.loop, &qw->closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  qt_close(&qw->t);
}

/* A handler's fleet_job_rate_limit(): the job goes back without losing
 * its attempt, and the queue's claims wait the time asked, on every
 * worker: no job starts before the hold's end, which the ledger shows. */
CONFORMANCE_IMPL(queue_flow_rate_limit_job) {
  qf_worker_t qw;
  fleet_queue_limits_t rl;
  fleet_queue_flow_t f;
  uint32_t wait_ms = (uint32_t)fleet_test_ms(500);
  int i, again = -1;

  qf_worker_open(&qw, b, "ratelimit", 1);
  qw.work_ms = 1;
  qw.rate_limit_ms = wait_ms;
  qf_add(&qw.t, NULL, 3, 0, NULL);
  ASSERT_OK(fleet_worker_start(&qw.w, qf_handler));
  ASSERT(fleet_test_wait_count(&qw.t.c.loop, &qw.completed, 3,
                               fleet_test_ms(FLEET_TEST_WAIT_MS) + wait_ms));
  ASSERT_EQ(1, qw.released);
  ASSERT_EQ(0, qw.other);
  ASSERT_EQ(4, qw.n);
  ASSERT(fleet_test_run_until(&qw.t.c.loop, fleet_test_flag_set, &qw.flow_read,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  /* The release held the queue for the time asked, from the claim of
   * the job on (all on the backend clock). */
  ASSERT_UGE(qw.flow.held_until_ms, qw.led[0].claimed_ms + wait_ms);
  /* The claims after it came at the hold's end. */
  for (i = 1; i < qw.n; i++) {
    ASSERT_UGE(qw.led[i].claimed_ms, qw.flow.held_until_ms);
    ASSERT_UGT(qw.led[i].start_us, qw.led[0].start_us);
    if (strcmp(qw.led[i].id, qw.led[0].id) == 0)
      again = i;
  }
  /* The job came back with the same attempt. */
  ASSERT_GE(again, 1);
  ASSERT_EQ(1, qw.led[0].attempts);
  ASSERT_EQ(1, qw.led[again].attempts);
  ASSERT_OK(qf_limits(&qw.t, &rl, &f));
  ASSERT_UEQ(0, f.running);
  ASSERT_OK(qt_counts(&qw.t));
  ASSERT_UEQ(3, qw.t.counts.completed);
  ASSERT_UEQ(0, qw.t.counts.pending);
  qf_worker_close(&qw);

  /* With FLEET_RATE_LIMIT_GROUP, only the job's group waits: the other
   * group's jobs are claimed during the hold, the held group's after. */
  qf_worker_open(&qw, b, "ratelimitg", 1);
  qw.work_ms = 1;
  qw.rate_limit_ms = wait_ms;
  qw.rate_limit_flags = FLEET_RATE_LIMIT_GROUP;
  qf_add(&qw.t, "a", 2, 0, NULL);
  qf_add(&qw.t, "b", 2, 0, NULL);
  ASSERT_OK(fleet_worker_start(&qw.w, qf_handler));
  ASSERT(fleet_test_wait_count(&qw.t.c.loop, &qw.completed, 4,
                               fleet_test_ms(FLEET_TEST_WAIT_MS) + wait_ms));
  ASSERT(fleet_test_run_until(&qw.t.c.loop, fleet_test_flag_set, &qw.flow_read,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(1, qw.released);
  ASSERT_EQ(5, qw.n);
  ASSERT_STR_EQ("a", qw.led[0].group);
  ASSERT_UGE(qw.flow.held_until_ms, qw.led[0].claimed_ms + wait_ms);
  for (i = 1; i < qw.n; i++) {
    if (strcmp(qw.led[i].group, "a") == 0)
      ASSERT_UGE(qw.led[i].claimed_ms, qw.flow.held_until_ms);
    else
      ASSERT_ULT(qw.led[i].claimed_ms, qw.flow.held_until_ms);
  }
  ASSERT_OK(qf_limits(&qw.t, &rl, &f));
  ASSERT_UEQ(0, f.held_until_ms);
  qf_worker_close(&qw);
}

/* A worker of concurrency 10 on a queue limited to 2 running and 8 claims
 * per 400 ms: from its ledger, never more than 2 jobs ran at once and no
 * 400 ms of the backend clock held more than 8 claims; every job completed
 * without polling (the worker waits for the window's timer or a slot's
 * wake-up). */
CONFORMANCE_IMPL(queue_flow_worker) {
  fleet_queue_limits_t l;
  qf_worker_t qw;
  qf_claims_t c;
  int i, j, running, max_running = 0;

  memset(&c, 0, sizeof(c));
  qf_worker_open(&qw, b, "fw", 10);
  qw.work_ms = 20;
  memset(&l, 0, sizeof(l));
  l.concurrency = 2;
  l.rate_max = 8;
  l.rate_ms = 400;
  ASSERT_OK(qt_set_limits(&qw.t, &l));
  qf_add(&qw.t, NULL, 30, 0, NULL);
  ASSERT_OK(fleet_worker_start(&qw.w, qf_handler));
  ASSERT(fleet_test_wait_count(&qw.t.c.loop, &qw.completed, 30,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(30, qw.n);
  ASSERT_EQ(0, qw.other);
  for (i = 0; i < qw.n; i++) {
    ASSERT_UGT(qw.led[i].end_us, qw.led[i].start_us);
    running = 0;
    for (j = 0; j < qw.n; j++)
      if (qw.led[j].start_us <= qw.led[i].start_us &&
          qw.led[j].end_us > qw.led[i].start_us)
        running++;
    if (running > max_running)
      max_running = running;
    qf_claims_add(&c, qw.led[i].claimed_ms, 1);
  }
  ASSERT_LE(max_running, 2);
  /* The limit was reached (else the check above says little). */
  ASSERT_EQ(2, max_running);
  qf_claims_check(&c, 400, 8);
  ASSERT_OK(qt_counts(&qw.t));
  ASSERT_UEQ(30, qw.t.counts.completed);
  qf_worker_close(&qw);
}

/* A worker held back by a long rate window wakes when the limits are
 * cleared (the change publishes a wake-up), long before the window's
 * end, and takes the rest. */
CONFORMANCE_IMPL(queue_flow_clear_wakes) {
  fleet_queue_limits_t l;
  qf_worker_t qw;

  qf_worker_open(&qw, b, "clearwake", 5);
  qw.work_ms = 1;
  memset(&l, 0, sizeof(l));
  l.rate_max = 1;
  l.rate_ms = 600000;
  ASSERT_OK(qt_set_limits(&qw.t, &l));
  qf_add(&qw.t, NULL, 5, 0, NULL);
  ASSERT_OK(fleet_worker_start(&qw.w, qf_handler));
  ASSERT(fleet_test_wait_count(&qw.t.c.loop, &qw.completed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  qt_sleep(&qw.t, 200);
  ASSERT_EQ(1, qw.completed);
  ASSERT_EQ(1, qw.n);
  ASSERT_OK(qt_set_limits(&qw.t, NULL));
  ASSERT(fleet_test_wait_count(&qw.t.c.loop, &qw.completed, 5,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(5, qw.n);
  qf_worker_close(&qw);
}

/* Heartbeats keep a grouped claim's group: under a group concurrency of
 * 1, jobs that outlive their claim TTL on heartbeats run one at a time,
 * and each completion frees the group's slot for the next (a claim that
 * lost its group would hold the slot for ever). */
CONFORMANCE_IMPL(queue_flow_group_heartbeat) {
  fleet_queue_limits_t l;
  qf_worker_t qw;
  int i, j, running, most = 0;

  qf_worker_open_ttl(&qw, b, "ghb", 3, (uint32_t)fleet_test_ms(300),
                     (uint32_t)fleet_test_ms(100));
  qw.work_ms = fleet_test_ms(500);
  memset(&l, 0, sizeof(l));
  l.group_concurrency = 1;
  ASSERT_OK(qt_set_limits(&qw.t, &l));
  qf_add(&qw.t, "a", 3, 0, NULL);
  ASSERT_OK(fleet_worker_start(&qw.w, qf_handler));
  ASSERT(fleet_test_wait_count(&qw.t.c.loop, &qw.completed, 3,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(3, qw.n);
  ASSERT_EQ(0, qw.other);
  for (i = 0; i < qw.n; i++) {
    ASSERT_EQ(1, qw.led[i].attempts);
    running = 0;
    for (j = 0; j < qw.n; j++)
      running += qw.led[j].start_us <= qw.led[i].start_us &&
                 qw.led[j].end_us > qw.led[i].start_us;
    if (running > most)
      most = running;
  }
  ASSERT_EQ(1, most);
  qf_worker_close(&qw);
}

/* ------------------------------------------------------------------------ */
/* Bad input                                                                */

/* Each bad call is refused at once, its callback never runs, and nothing
 * is written: the limits read back are those set before. */
CONFORMANCE_IMPL(queue_flow_bad_input) {
  char big[FLEET_JOB_GROUP_MAX + 2];
  fleet_queue_limits_t l, bad, rl;
  fleet_queue_flow_t f;
  fleet_job_spec_t s;
  qf_group_t g[4];
  size_t ng;
  uint64_t total;
  qt_t t;

  memset(big, 'g', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  qt_open(&t, b->url, "badflow", NULL);
  memset(&l, 0, sizeof(l));
  l.rate_max = 10;
  l.rate_ms = 1000;
  l.concurrency = 4;
  ASSERT_OK(qt_set_limits(&t, &l));

  bad = l;
  bad.rate_ms = 0; /* a max without a window */
  ASSERT_ERR(FLEET_EINVAL, qt_set_limits(&t, &bad));
  bad = l;
  bad.rate_max = 0; /* a window without a max */
  ASSERT_ERR(FLEET_EINVAL, qt_set_limits(&t, &bad));
  bad = l;
  bad.rate_max = FLEET_LIMIT_RATE_MAX + 1;
  ASSERT_ERR(FLEET_EINVAL, qt_set_limits(&t, &bad));
  bad = l;
  bad.rate_ms = FLEET_LIMIT_WINDOW_MAX_MS + 1;
  ASSERT_ERR(FLEET_EINVAL, qt_set_limits(&t, &bad));
  bad = l;
  bad.group_rate_max = 3;
  ASSERT_ERR(FLEET_EINVAL, qt_set_limits(&t, &bad));
  bad = l;
  bad.group_rate_ms = 100;
  ASSERT_ERR(FLEET_EINVAL, qt_set_limits(&t, &bad));
  bad = l;
  bad.concurrency = FLEET_LIMIT_RATE_MAX + 1;
  ASSERT_ERR(FLEET_EINVAL, qt_set_limits(&t, &bad));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_set_limits(&t.q, &l, NULL, NULL));

  /* The largest values are taken. */
  bad = l;
  bad.group_rate_max = FLEET_LIMIT_RATE_MAX;
  bad.group_rate_ms = FLEET_LIMIT_WINDOW_MAX_MS;
  ASSERT_OK(qt_set_limits(&t, &bad));
  ASSERT_OK(qf_limits(&t, &rl, &f));
  ASSERT_EQ(FLEET_LIMIT_RATE_MAX, rl.group_rate_max);
  ASSERT_EQ(FLEET_LIMIT_WINDOW_MAX_MS, rl.group_rate_ms);
  ASSERT_OK(qt_set_limits(&t, &l));

  /* Groups: too long, empty; weights; holds. */
  ASSERT_ERR(FLEET_E2BIG, qf_hold(&t, big, 1000));
  ASSERT_ERR(FLEET_EINVAL, qf_hold(&t, "", 1000));
  ASSERT_ERR(FLEET_EINVAL, qf_hold(&t, NULL, 0));
  ASSERT_ERR(FLEET_EINVAL, qf_hold(&t, "a", 0));
  ASSERT_ERR(FLEET_EINVAL, qf_hold(&t, NULL, FLEET_LIMIT_WINDOW_MAX_MS + 1));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_hold(&t.q, NULL, 1000, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, qf_weight(&t, "a", 0));
  ASSERT_ERR(FLEET_EINVAL, qf_weight(&t, "a", FLEET_GROUP_WEIGHT_MAX + 1));
  ASSERT_ERR(FLEET_E2BIG, qf_weight(&t, big, 2));
  ASSERT_ERR(FLEET_EINVAL, qf_weight(&t, "", 2));
  ASSERT_ERR(FLEET_EINVAL, qf_weight(&t, NULL, 2));
  ASSERT_ERR(FLEET_EINVAL, qf_groups(&t, NULL, 0, g, 4, &ng, &total));
  ASSERT_ERR(FLEET_EINVAL,
             qf_groups(&t, NULL, FLEET_QUEUE_BATCH_MAX + 1, g, 4, &ng, &total));
  ASSERT_ERR(FLEET_E2BIG, qf_groups(&t, big, 10, g, 4, &ng, &total));
  fleet_job_spec_init(&s, "t", "x", 1);
  s.group = big;
  ASSERT_ERR(FLEET_E2BIG, qt_enqueue(&t, &s, 1, NULL, NULL));
  s.group = "";
  ASSERT_ERR(FLEET_EINVAL, qt_enqueue(&t, &s, 1, NULL, NULL));

  /* Nothing was written. */
  ASSERT_OK(qf_limits(&t, &rl, &f));
  ASSERT_EQ(10, rl.rate_max);
  ASSERT_EQ(1000, rl.rate_ms);
  ASSERT_EQ(0, rl.group_rate_max);
  ASSERT_EQ(0, rl.group_rate_ms);
  ASSERT_EQ(4, rl.concurrency);
  ASSERT_EQ(0, rl.group_concurrency);
  ASSERT_UEQ(0, f.held_until_ms);
  ASSERT_UEQ(0, f.groups);
  ASSERT_OK(qf_groups(&t, NULL, 10, g, 4, &ng, &total));
  ASSERT_EQ(0, ng);
  ASSERT_UEQ(0, total);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.pending);

  /* NULL clears every limit. */
  ASSERT_OK(qt_set_limits(&t, NULL));
  ASSERT_OK(qf_limits(&t, &rl, &f));
  ASSERT_EQ(0, rl.rate_max);
  ASSERT_EQ(0, rl.rate_ms);
  ASSERT_EQ(0, rl.concurrency);
  qt_close(&t);
}
