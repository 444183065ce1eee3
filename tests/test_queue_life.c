/* test_queue_life.c -- a job's results, progress and events on both
 * adapters: a result kept with the completed job (also without
 * completed-job history) for the queue's or the job's retention; progress
 * reports checked against the claim; the events a subscriber hears, in
 * order, from the calls and from a worker; bad input refused with nothing
 * written. */
#include "redis_fixture.h"
#include "test_queue_util.h"

/* ------------------------------------------------------------------------ */
/* Results                                                                  */

/* Enqueues one job (`result_ttl_ms` its own retention) and claims it. */
static void life_claim_one(qt_t *t, uint64_t result_ttl_ms, qt_job_t *job) {
  fleet_job_spec_t spec;
  int st[1];
  char ids[1][FLEET_JOB_ID_MAX + 1];

  fleet_job_spec_init(&spec, "t", "x", 1);
  spec.result_ttl_ms = result_ttl_ms;
  ASSERT_OK(qt_enqueue(t, &spec, 1, st, ids));
  ASSERT_OK(st[0]);
  ASSERT_EQ(1, qt_claim(t, 1, 60000, job));
  ASSERT_STR_EQ(ids[0], job->id);
}

CONFORMANCE_IMPL(queue_result) {
  static const char bin[] = {'o', 'k', '\0', 'z'};
  fleet_job_info_t info;
  fleet_claim_t c[2];
  fleet_bytes_t res[2];
  qt_job_t a, b2, big;
  fleet_job_spec_t spec;
  char *huge;
  int out[2];

  qt_t t;

  /* No completed-job history (the default). */
  memset(&t, 0, sizeof(t));
  qt_open(&t, b->url, "qlr", NULL);

  life_claim_one(&t, 0, &a);
  life_claim_one(&t, 0, &b2);
  c[0] = qt_claim_of(&a);
  c[1] = qt_claim_of(&b2);
  /* Bad input: nothing is sent, both jobs still run. */
  res[0].base = NULL;
  res[0].len = 3;
  res[1].base = NULL;
  res[1].len = 0;
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_complete_results(&t.q, c, res, 2, NULL, NULL));
  huge = calloc(1, FLEET_JOB_RESULT_MAX + 1);
  ASSERT_NOT_NULL(huge);
  res[0].base = huge;
  res[0].len = FLEET_JOB_RESULT_MAX + 1;
  ASSERT_ERR(FLEET_E2BIG, qt_complete_results(&t, c, res, 2, out));
  ASSERT_OK(qt_get(&t, a.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_RUNNING, info.state);
  ASSERT_EQ(0, info.has_result);
  ASSERT_EQ(-1, info.progress);

  /* One with a binary result, one without. */
  res[0].base = bin;
  res[0].len = sizeof(bin);
  ASSERT_OK(qt_complete_results(&t, c, res, 2, out));
  ASSERT_OK(out[0]);
  ASSERT_OK(out[1]);
  ASSERT_OK(qt_get(&t, a.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_COMPLETED, info.state);
  ASSERT_EQ(1, info.has_result);
  ASSERT_UEQ(sizeof(bin), info.result.len);
  ASSERT_EQ(0, memcmp(info.result.base, bin, sizeof(bin)));
  ASSERT(info.finished_ms > 0);
  /* Without history, a job completed without a result is gone. */
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, b2.id, &info, NULL, 0, NULL, 0));
  /* A repeated completion is refused as before, and changes nothing. */
  ASSERT_OK(qt_complete_results(&t, c, res, 1, out));
  ASSERT_ERR(FLEET_ENOTFOUND, out[0]);

  /* An empty result is a result; the largest one is taken. */
  life_claim_one(&t, 0, &a);
  life_claim_one(&t, 0, &big);
  c[0] = qt_claim_of(&a);
  c[1] = qt_claim_of(&big);
  res[0].base = "";
  res[0].len = 0;
  res[1].base = huge;
  res[1].len = FLEET_JOB_RESULT_MAX;
  ASSERT_OK(qt_complete_results(&t, c, res, 2, out));
  ASSERT_OK(out[0]);
  ASSERT_OK(out[1]);
  ASSERT_OK(qt_get(&t, a.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(1, info.has_result);
  ASSERT_UEQ(0, info.result.len);
  free(huge);

  /* A job's own retention runs out before the queue's. */
  life_claim_one(&t, 200, &a);
  c[0] = qt_claim_of(&a);
  res[0].base = "soon";
  res[0].len = 4;
  ASSERT_OK(qt_complete_results(&t, c, res, 1, out));
  ASSERT_OK(out[0]);
  ASSERT_OK(qt_get(&t, a.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(1, info.has_result);
  qt_sleep(&t, 400);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, a.id, &info, NULL, 0, NULL, 0));

  /* A retention over the limit is refused at the enqueue. */
  fleet_job_spec_init(&spec, "t", "x", 1);
  spec.result_ttl_ms = FLEET_JOB_RESULT_TTL_MAX_MS + 1;
  ASSERT_ERR(FLEET_EINVAL, qt_enqueue(&t, &spec, 1, out, NULL));
  qt_close(&t);
}

/* With completed-job history, the kept job shows its result with the
 * rest of its record. */
CONFORMANCE_IMPL(queue_result_kept) {
  fleet_queue_options_t o;
  fleet_job_info_t info;
  fleet_claim_t c;
  fleet_bytes_t res;
  qt_job_t a;
  qt_t t;
  int out[1];

  fleet_queue_options_init(&o);
  o.keep_completed = 100;
  memset(&t, 0, sizeof(t));
  qt_open(&t, b->url, "qlk", &o);
  life_claim_one(&t, 0, &a);
  c = qt_claim_of(&a);
  res.base = "done";
  res.len = 4;
  ASSERT_OK(qt_complete_results(&t, &c, &res, 1, out));
  ASSERT_OK(out[0]);
  ASSERT_OK(qt_get(&t, a.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_COMPLETED, info.state);
  ASSERT_UEQ(1, info.attempts);
  ASSERT_UEQ(a.token, info.token);
  ASSERT_EQ(1, info.has_result);
  ASSERT_EQ(0, memcmp(info.result.base, "done", 4));
  /* A repeated completion is recognised, and keeps the first result. */
  res.base = "again";
  res.len = 5;
  ASSERT_OK(qt_complete_results(&t, &c, &res, 1, out));
  ASSERT_ERR(FLEET_EALREADY, out[0]);
  ASSERT_OK(qt_get(&t, a.id, &info, NULL, 0, NULL, 0));
  ASSERT_UEQ(4, info.result.len);
  qt_close(&t);
}

/* The queue's retention (keep_result_s) runs out; a job's own retention,
 * kept apart, outlives it; a later completion (which drops the expired
 * results) keeps the new result and the own one. */
CONFORMANCE_IMPL(queue_result_expire) {
  fleet_queue_options_t o;
  fleet_job_info_t info;
  fleet_claim_t c[2];
  fleet_bytes_t res[2];
  qt_job_t a, own, late;
  qt_t t;
  int out[2];

  fleet_queue_options_init(&o);
  o.keep_result_s = 1;
  memset(&t, 0, sizeof(t));
  qt_open(&t, b->url, "qle", &o);
  life_claim_one(&t, 0, &a);
  life_claim_one(&t, 60000, &own);
  c[0] = qt_claim_of(&a);
  c[1] = qt_claim_of(&own);
  res[0].base = "queue";
  res[0].len = 5;
  res[1].base = "own";
  res[1].len = 3;
  ASSERT_OK(qt_complete_results(&t, c, res, 2, out));
  ASSERT_OK(out[0]);
  ASSERT_OK(out[1]);
  ASSERT_OK(qt_get(&t, a.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(1, info.has_result);
  ASSERT_MEM_EQ(info.result.base, "queue", 5);
  qt_sleep(&t, 1300);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, a.id, &info, NULL, 0, NULL, 0));
  life_claim_one(&t, 0, &late);
  c[0] = qt_claim_of(&late);
  res[0].base = "late";
  res[0].len = 4;
  ASSERT_OK(qt_complete_results(&t, c, res, 1, out));
  ASSERT_OK(out[0]);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, a.id, &info, NULL, 0, NULL, 0));
  ASSERT_OK(qt_get(&t, late.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(1, info.has_result);
  ASSERT_MEM_EQ(info.result.base, "late", 4);
  ASSERT_OK(qt_get(&t, own.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_COMPLETED, info.state);
  ASSERT_EQ(1, info.has_result);
  ASSERT_MEM_EQ(info.result.base, "own", 3);
  qt_close(&t);
}

/* Enqueues job `id` (`result_ttl_ms` its own retention, `max_attempts`
 * attempts) and claims it. */
static void life_claim_given(qt_t *t, const char *id, uint64_t result_ttl_ms,
                             uint32_t max_attempts, qt_job_t *job) {
  fleet_job_spec_t spec;
  int st[1];

  fleet_job_spec_init(&spec, "t", "x", 1);
  spec.id = id;
  spec.result_ttl_ms = result_ttl_ms;
  spec.max_attempts = max_attempts;
  ASSERT_OK(qt_enqueue(t, &spec, 1, st, NULL));
  ASSERT_OK(st[0]);
  ASSERT_EQ(1, qt_claim(t, 1, 60000, job));
  ASSERT_STR_EQ(id, job->id);
}

/* Completes `job` with the result `r` (NULL: none). */
static void life_complete(qt_t *t, const qt_job_t *job, const char *r) {
  fleet_claim_t c = qt_claim_of(job);
  fleet_bytes_t res;
  int out[1];

  res.base = r;
  res.len = r != NULL ? strlen(r) : 0;
  ASSERT_OK(qt_complete_results(t, &c, &res, 1, out));
  ASSERT_OK(out[0]);
}

/* Asserts that job `id` is in `state` with result `r` (NULL: none). */
static void life_expect(qt_t *t, const char *id, fleet_job_state_t state,
                        const char *r) {
  fleet_job_info_t info;

  ASSERT_OK(qt_get(t, id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(state, info.state);
  ASSERT_EQ(r != NULL, info.has_result);
  if (r != NULL)
    ASSERT_MEM_EQ(info.result.base, r, strlen(r));
}

/* A job of a given id never reads the result (or the progress) an earlier
 * job of that id left (its own retention or the queue's): not once it
 * completed without a result (with and without completed-job history),
 * nor once it died and its dead record was trimmed or purged; and the
 * earlier one's retention does not cut the later one's result short. */
CONFORMANCE_IMPL(queue_result_given_id) {
  fleet_queue_options_t o;
  fleet_job_info_t info;
  qt_job_t a;
  qt_t t;

  /* No completed-job history (the default); one dead job kept. */
  fleet_queue_options_init(&o);
  o.keep_dead = 1;
  memset(&t, 0, sizeof(t));
  qt_open(&t, b->url, "qlg", &o);
  life_claim_given(&t, "x", 0, 3, &a);
  {
    fleet_claim_t c = qt_claim_of(&a);

    ASSERT_OK(qt_progress(&t, &c, 50, "half", 4));
  }
  life_complete(&t, &a, "first");
  life_expect(&t, "x", FLEET_JOB_COMPLETED, "first");
  /* The id again: the new job shows no result while it runs, nor the
   * earlier one's progress, nor a result once it completed without one. */
  qt_sleep(&t, 5);
  life_claim_given(&t, "x", 0, 3, &a);
  life_expect(&t, "x", FLEET_JOB_RUNNING, NULL);
  ASSERT_OK(qt_get(&t, "x", &info, NULL, 0, NULL, 0));
  ASSERT_EQ(-1, info.progress);
  life_complete(&t, &a, NULL);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, "x", &info, NULL, 0, NULL, 0));
  /* The same with a retention of the earlier job's own. */
  life_claim_given(&t, "x", 60000, 3, &a);
  life_complete(&t, &a, "own");
  life_expect(&t, "x", FLEET_JOB_COMPLETED, "own");
  life_claim_given(&t, "x", 0, 3, &a);
  life_complete(&t, &a, NULL);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, "x", &info, NULL, 0, NULL, 0));
  /* A later job's result replaces an earlier one's. */
  life_claim_given(&t, "x", 0, 3, &a);
  life_complete(&t, &a, "second");
  life_expect(&t, "x", FLEET_JOB_COMPLETED, "second");
  /* A job of the id that dies shows no result, nor after its dead record
   * was trimmed (another dead job, one kept). */
  life_claim_given(&t, "x", 0, 1, &a);
  {
    fleet_claim_t c = qt_claim_of(&a);

    ASSERT_OK(qt_fail(&t, &c, "boom"));
  }
  life_expect(&t, "x", FLEET_JOB_DEAD, NULL);
  life_claim_given(&t, "y", 0, 1, &a);
  {
    fleet_claim_t c = qt_claim_of(&a);

    ASSERT_OK(qt_fail(&t, &c, "boom"));
  }
  life_expect(&t, "y", FLEET_JOB_DEAD, NULL);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, "x", &info, NULL, 0, NULL, 0));
  /* Nor after its dead record was purged. */
  life_claim_given(&t, "x", 0, 3, &a);
  life_complete(&t, &a, "third");
  life_claim_given(&t, "x", 0, 1, &a);
  {
    fleet_claim_t c = qt_claim_of(&a);

    ASSERT_OK(qt_fail(&t, &c, "boom"));
  }
  ASSERT_OK(qt_purge(&t, FLEET_JOB_DEAD));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, "x", &info, NULL, 0, NULL, 0));
  /* A later job's result, kept for the queue's retention, outlives the
   * shorter retention of the earlier one's own (whose expiry a later
   * completion with a retention of its own handles). */
  life_claim_given(&t, "x", 300, 3, &a);
  life_complete(&t, &a, "own");
  life_claim_given(&t, "x", 0, 3, &a);
  life_complete(&t, &a, "queue");
  qt_sleep(&t, 500);
  life_claim_given(&t, "z", 60000, 3, &a);
  life_complete(&t, &a, "z");
  life_expect(&t, "x", FLEET_JOB_COMPLETED, "queue");
  qt_close(&t);

  /* No dead history: a running job of the id cancelled, its end as
   * cancelled when its holder fails it (dead, at once gone) leaves
   * nothing to read. */
  fleet_queue_options_init(&o);
  o.keep_dead = FLEET_QUEUE_KEEP_NONE;
  memset(&t, 0, sizeof(t));
  qt_open(&t, b->url, "qlgc", &o);
  life_claim_given(&t, "x", 0, 3, &a);
  life_complete(&t, &a, "first");
  life_claim_given(&t, "x", 0, 3, &a);
  ASSERT_OK(qt_cancel_job(&t, "x", 60000));
  {
    fleet_claim_t c = qt_claim_of(&a);

    ASSERT_OK(qt_fail(&t, &c, "stopped"));
  }
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, "x", &info, NULL, 0, NULL, 0));
  qt_close(&t);

  /* With history: the earlier job's record purged, the later one kept
   * completed without a result. */
  fleet_queue_options_init(&o);
  o.keep_completed = 100;
  memset(&t, 0, sizeof(t));
  qt_open(&t, b->url, "qlgk", &o);
  life_claim_given(&t, "x", 0, 3, &a);
  life_complete(&t, &a, "first");
  ASSERT_OK(qt_purge(&t, FLEET_JOB_COMPLETED));
  life_expect(&t, "x", FLEET_JOB_COMPLETED, "first");
  life_claim_given(&t, "x", 0, 3, &a);
  life_complete(&t, &a, NULL);
  life_expect(&t, "x", FLEET_JOB_COMPLETED, NULL);
  qt_close(&t);
}

/* Enqueues 10 jobs of given ids (`round` tells the ids apart), claims and
 * completes them without a result; returns the commands Redis ran. */
static uint64_t life_cost_round(fleet_test_redis_t *r, qt_t *t, int round) {
  fleet_job_spec_t specs[10];
  fleet_claim_t claims[10];
  qt_job_t jobs[10];
  char ids[10][32];
  int st[10];
  size_t i;

  for (i = 0; i < 10; i++) {
    snprintf(ids[i], sizeof(ids[i]), "job-%d-%zu", round, i);
    fleet_job_spec_init(&specs[i], "t", "p", 1);
    specs[i].id = ids[i];
  }
  fleet_test_redis_ok(r, "CONFIG RESETSTAT");
  ASSERT_OK(qt_enqueue(t, specs, 10, st, NULL));
  ASSERT_EQ(10, qt_claim(t, 10, 60000, jobs));
  for (i = 0; i < 10; i++)
    claims[i] = qt_claim_of(&jobs[i]);
  ASSERT_OK(qt_complete(t, claims, 10, st));
  return fleet_test_redis_calls(r);
}

/* Jobs of given ids on a queue that keeps no result of a given id cost no
 * command for the check above; while one is kept, their completions drop
 * what is kept under their ids, and once none is left they cost what they
 * did. */
TEST_IMPL(queue_redis_result_given_cost) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  uint64_t plain, kept, after;
  qt_job_t a;
  qt_t t;

  memset(&t, 0, sizeof(t));
  qt_open(&t, fleet_test_redis_url(r), "cost", NULL);
  life_cost_round(r, &t, 0); /* (the scripts loaded) */
  plain = life_cost_round(r, &t, 1);
  ASSERT_UEQ(plain, life_cost_round(r, &t, 2));
  /* A result kept under a given id: the next round drops job-3-0's. */
  life_claim_given(&t, "job-3-0", 0, 3, &a);
  life_complete(&t, &a, "r");
  kept = life_cost_round(r, &t, 3);
  ASSERT_UGT(kept, plain);
  after = life_cost_round(r, &t, 4);
  ASSERT_UEQ(plain, after);
  qt_close(&t);
  fleet_test_redis_stop(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Progress                                                                 */

CONFORMANCE_IMPL(queue_progress) {
  fleet_job_info_t info;
  fleet_claim_t c, stale;
  char big[FLEET_JOB_PROGRESS_MAX + 1];
  qt_job_t a;
  qt_t t;

  memset(&t, 0, sizeof(t));
  qt_open(&t, b->url, "qlp", NULL);
  life_claim_one(&t, 0, &a);
  c = qt_claim_of(&a);
  ASSERT_OK(qt_progress(&t, &c, 40, "half", 4));
  ASSERT_OK(qt_get(&t, a.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_RUNNING, info.state);
  ASSERT_EQ(40, info.progress);
  ASSERT_UEQ(4, info.progress_data.len);
  ASSERT_MEM_EQ(info.progress_data.base, "half", 4);

  /* Bad input, refused before anything is written. */
  memset(big, 'b', sizeof(big));
  ASSERT_ERR(FLEET_EINVAL, qt_progress(&t, &c, 101, NULL, 0));
  ASSERT_ERR(FLEET_EINVAL, qt_progress(&t, &c, 50, NULL, 2));
  ASSERT_ERR(FLEET_E2BIG, qt_progress(&t, &c, 50, big, sizeof(big)));
  stale = c;
  stale.token = 0;
  ASSERT_ERR(FLEET_EINVAL, qt_progress(&t, &stale, 50, NULL, 0));
  /* A token the job is not held with: stale, nothing written. */
  stale.token = c.token + 1000;
  ASSERT_ERR(FLEET_ESTALE, qt_progress(&t, &stale, 60, "no", 2));
  stale.id = "no-such-job";
  ASSERT_ERR(FLEET_ENOTFOUND, qt_progress(&t, &stale, 60, "no", 2));
  ASSERT_OK(qt_get(&t, a.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(40, info.progress);
  ASSERT_MEM_EQ(info.progress_data.base, "half", 4);

  /* The largest report is taken, and replaces the last. */
  ASSERT_OK(qt_progress(&t, &c, 100, big, FLEET_JOB_PROGRESS_MAX));
  ASSERT_OK(qt_get(&t, a.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(100, info.progress);
  ASSERT_UEQ(FLEET_JOB_PROGRESS_MAX, info.progress_data.len);
  /* Once the claim ended, a report is refused. */
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_progress(&t, &c, 10, NULL, 0));
  qt_close(&t);
}

/* ------------------------------------------------------------------------ */
/* Events                                                                   */

/* One event heard, copied. */
typedef struct {
  fleet_event_type_t type;
  char id[64];
  uint64_t time_ms;
  uint32_t value;
  char data[64];
  size_t len;
} life_ev_t;

typedef struct {
  int live; /* notices that the subscription is live */
  int n;
  life_ev_t ev[64];
} life_evs_t;

static void life_on_event(fleet_queue_t *q, int status,
                          const fleet_queue_event_t *e, void *ud) {
  life_evs_t *s = ud;
  life_ev_t *x;

  if (e == NULL) {
    ASSERT_ERR(FLEET_ECONNLOST, status);
    s->live++;
    return;
  }
  ASSERT_OK(status);
  ASSERT_LT(s->n, 64);
  x = &s->ev[s->n++];
  x->type = e->type;
  ASSERT_LT(e->id_len, sizeof(x->id));
  ASSERT_UEQ(strlen(e->id), e->id_len);
  memcpy(x->id, e->id, e->id_len + 1);
  x->time_ms = e->time_ms;
  x->value = e->value;
  ASSERT_LT(e->data.len, sizeof(x->data));
  memcpy(x->data, e->data.base, e->data.len);
  x->data[e->data.len] = '\0';
  x->len = e->data.len;
}

/* Checks event `i` of `s`. */
static void life_ev_check(const life_evs_t *s, int i, fleet_event_type_t type,
                          const char *id, uint32_t value, const char *data) {
  ASSERT_LT(i, s->n);
  ASSERT_STR_EQ(fleet_event_type_name(type),
                fleet_event_type_name(s->ev[i].type));
  ASSERT_STR_EQ(id, s->ev[i].id);
  ASSERT_UEQ(value, s->ev[i].value);
  ASSERT_STR_EQ(data, s->ev[i].data);
  if (i > 0)
    ASSERT(s->ev[i].time_ms >= s->ev[i - 1].time_ms);
}

/* Enqueues one job of id `id` (`max` attempts, retried 1 ms after a
 * failure) and claims it with `ttl_ms` (0: leaves it pending). */
static void life_add_claim(qt_t *t, const char *id, uint32_t max,
                           uint32_t ttl_ms, qt_job_t *job) {
  fleet_job_spec_t spec;
  int st[1];

  fleet_job_spec_init(&spec, "t", "x", 1);
  spec.id = id;
  spec.max_attempts = max;
  spec.backoff = FLEET_BACKOFF_FIXED;
  spec.backoff_ms = 0;
  ASSERT_OK(qt_enqueue(t, &spec, 1, st, NULL));
  ASSERT_OK(st[0]);
  if (ttl_ms > 0)
    ASSERT_EQ(1, qt_claim(t, 1, ttl_ms, job));
}

static void life_on_retry(fleet_queue_t *q, int status, uint64_t retried,
                          void *ud) {
  ASSERT_OK(status);
  ASSERT_UEQ(1, retried);
  (*(int *)ud)++;
}

CONFORMANCE_IMPL(queue_events) {
  fleet_queue_t eq, jq;
  life_evs_t all, one;
  fleet_claim_t c;
  fleet_bytes_t res;
  qt_job_t a, bj, d;
  qt_t t;
  int retried = 0, closed = 0;

  memset(&t, 0, sizeof(t));
  memset(&all, 0, sizeof(all));
  memset(&one, 0, sizeof(one));
  qt_open(&t, b->url, "qle", NULL);
  ASSERT_OK(fleet_queue_init(&t.c.client, &eq, "qle", NULL));
  ASSERT_OK(fleet_queue_init(&t.c.client, &jq, "qle", NULL));
  eq.data = jq.data = &closed;
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_events_start(&eq, NULL, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_events_start(&eq, "", life_on_event, &all));
  ASSERT_OK(fleet_queue_events_start(&eq, NULL, life_on_event, &all));
  ASSERT_ERR(FLEET_EALREADY,
             fleet_queue_events_start(&eq, NULL, life_on_event, &all));
  ASSERT_OK(fleet_queue_events_start(&jq, "a", life_on_event, &one));
  ASSERT(fleet_test_wait_count(&t.c.loop, &all.live, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT(fleet_test_wait_count(&t.c.loop, &one.live, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));

  /* a: two progress reports, then completed with its result. */
  life_add_claim(&t, "a", 2, 60000, &a);
  c = qt_claim_of(&a);
  ASSERT_OK(qt_progress(&t, &c, 10, "p1", 2));
  ASSERT_OK(qt_progress(&t, &c, 90, NULL, 0));
  res.base = "r1";
  res.len = 2;
  ASSERT_OK(qt_complete_results(&t, &c, &res, 1, NULL));
  /* b: fails, will retry; fails again and is dead; retried. */
  life_add_claim(&t, "b", 2, 60000, &bj);
  c = qt_claim_of(&bj);
  ASSERT_OK(qt_fail(&t, &c, "e1"));
  ASSERT_EQ(0, t.dead);
  qt_sleep(&t, 5);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &bj));
  c = qt_claim_of(&bj);
  ASSERT_OK(qt_fail(&t, &c, "e2"));
  ASSERT_EQ(1, t.dead);
  ASSERT_OK(fleet_queue_retry(&t.q, "b", life_on_retry, &retried));
  ASSERT(fleet_test_wait_count(&t.c.loop, &retried, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  /* c: cancelled while pending. */
  life_add_claim(&t, "c", 2, 0, NULL);
  ASSERT_OK(qt_cancel(&t, "c"));
  /* b again (the retry made it pending) and d: their claims run out. */
  ASSERT_EQ(1, qt_claim(&t, 1, 30, &d));
  ASSERT_STR_EQ("b", d.id);
  life_add_claim(&t, "d", 1, 30, &d);
  qt_sleep(&t, 60);
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.requeued);
  ASSERT_UEQ(1, t.recover_info.dead);

  ASSERT(fleet_test_wait_count(&t.c.loop, &all.n, 11,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  qt_sleep(&t, 50);
  ASSERT_EQ(11, all.n);
  life_ev_check(&all, 0, FLEET_EVENT_PROGRESS, "a", 10, "p1");
  life_ev_check(&all, 1, FLEET_EVENT_PROGRESS, "a", 90, "");
  life_ev_check(&all, 2, FLEET_EVENT_COMPLETED, "a", 1, "r1");
  life_ev_check(&all, 3, FLEET_EVENT_FAILED, "b", 1, "e1");
  life_ev_check(&all, 4, FLEET_EVENT_FAILED, "b", 0, "e2");
  life_ev_check(&all, 5, FLEET_EVENT_DEAD, "b", 0, "e2");
  life_ev_check(&all, 6, FLEET_EVENT_RETRIED, "b", 0, "");
  life_ev_check(&all, 7, FLEET_EVENT_CANCELLED, "c", 0, "");
  /* One recovery, its jobs in id order: b requeued (the retry gave it
   * new attempts), d at its last attempt dead. */
  life_ev_check(&all, 8, FLEET_EVENT_STALLED, "b", 1, "");
  life_ev_check(&all, 9, FLEET_EVENT_STALLED, "d", 0, "");
  life_ev_check(&all, 10, FLEET_EVENT_DEAD, "d", 0, "claim expired");
  /* The one job's subscriber heard a's events only. */
  ASSERT_EQ(3, one.n);
  life_ev_check(&one, 0, FLEET_EVENT_PROGRESS, "a", 10, "p1");
  life_ev_check(&one, 2, FLEET_EVENT_COMPLETED, "a", 1, "r1");

  ASSERT_OK(fleet_queue_events_stop(&eq));
  ASSERT_ERR(FLEET_EALREADY, fleet_queue_events_stop(&eq));
  ASSERT_OK(fleet_queue_close(&eq, NULL));
  ASSERT_OK(fleet_queue_close(&jq, NULL));
  qt_close(&t);
}

/* ------------------------------------------------------------------------ */
/* A worker's progress and results                                         */

typedef struct {
  int done, bad;
} life_worker_t;

/* Reports progress 1, 2, 3 of each job, then completes it with the result
 * "done:<id>"; checks the bad input of both calls first. */
static void life_handler(fleet_worker_t *w, fleet_job_t *job) {
  char result[FLEET_JOB_ID_MAX + 8];
  char *big = calloc(1, FLEET_JOB_RESULT_MAX + 1);
  int len;

  ASSERT_NOT_NULL(big);
  ASSERT_ERR(FLEET_EINVAL, fleet_job_progress(job, 101, NULL, 0));
  ASSERT_ERR(FLEET_E2BIG,
             fleet_job_progress(job, 1, big, FLEET_JOB_PROGRESS_MAX + 1));
  ASSERT_ERR(FLEET_EINVAL, fleet_job_complete_result(job, NULL, 1));
  ASSERT_ERR(FLEET_E2BIG,
             fleet_job_complete_result(job, big, FLEET_JOB_RESULT_MAX + 1));
  free(big);
  for (uint32_t k = 1; k <= 3; k++)
    ASSERT_OK(fleet_job_progress(job, k, "s", 1));
  len = snprintf(result, sizeof(result), "done:%s", job->id);
  ASSERT_OK(fleet_job_complete_result(job, result, (size_t)len));
  /* Finished: neither call takes the job any more. */
  ASSERT_ERR(FLEET_EINVAL, fleet_job_progress(job, 4, NULL, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_job_complete_result(job, "x", 1));
}

static void life_done(fleet_worker_t *w, fleet_job_t *job,
                      fleet_job_action_t action, int status) {
  life_worker_t *lw = w->data;

  if (action == FLEET_JOB_COMPLETE && status == 0)
    lw->done++;
  else
    lw->bad++;
}

static void life_worker_error(fleet_handle_t *h, int status,
                              const char *detail) {
  life_worker_t *lw = h->data;
  fprintf(stderr, "# worker error %s: %s\n", fleet_err_name(status),
          detail != NULL ? detail : "");
  lw->bad++;
}

CONFORMANCE_IMPL(worker_progress_result) {
  fleet_worker_options_t o;
  fleet_worker_t w;
  fleet_queue_t eq;
  fleet_job_info_t info;
  life_worker_t lw;
  life_evs_t all;
  char ids[2][FLEET_JOB_ID_MAX + 1], want[FLEET_JOB_ID_MAX + 8];
  qt_t t;
  int i, j, at[2] = {0, 0};

  memset(&t, 0, sizeof(t));
  memset(&lw, 0, sizeof(lw));
  memset(&all, 0, sizeof(all));
  qt_open(&t, b->url, "qlw", NULL);
  ASSERT_OK(fleet_queue_init(&t.c.client, &eq, "qlw", NULL));
  ASSERT_OK(fleet_queue_events_start(&eq, NULL, life_on_event, &all));
  ASSERT(fleet_test_wait_count(&t.c.loop, &all.live, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  fleet_worker_options_init(&o);
  o.done_cb = life_done;
  o.error_cb = life_worker_error;
  w.data = &lw;
  ASSERT_OK(fleet_worker_init(&t.c.client, &w, "qlw", &o));
  qt_add(&t, "t", "x", ids[0]);
  qt_add(&t, "t", "y", ids[1]);
  ASSERT_OK(fleet_worker_start(&w, life_handler));
  ASSERT(fleet_test_wait_count(&t.c.loop, &lw.done, 2,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT(fleet_test_wait_count(&t.c.loop, &all.n, 8,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(0, lw.bad);
  /* Each job's events in order: three steps, then its result. */
  for (i = 0; i < all.n; i++) {
    j = strcmp(all.ev[i].id, ids[0]) == 0 ? 0 : 1;
    ASSERT_STR_EQ(ids[j], all.ev[i].id);
    if (at[j] < 3) {
      ASSERT_EQ(FLEET_EVENT_PROGRESS, all.ev[i].type);
      ASSERT_UEQ(at[j] + 1, all.ev[i].value);
    } else {
      snprintf(want, sizeof(want), "done:%s", ids[j]);
      ASSERT_EQ(FLEET_EVENT_COMPLETED, all.ev[i].type);
      ASSERT_STR_EQ(want, all.ev[i].data);
    }
    at[j]++;
  }
  ASSERT_EQ(4, at[0]);
  ASSERT_EQ(4, at[1]);
  /* The result is read back; the job's last progress too. */
  ASSERT_OK(qt_get(&t, ids[1], &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_COMPLETED, info.state);
  snprintf(want, sizeof(want), "done:%s", ids[1]);
  ASSERT_UEQ(strlen(want), info.result.len);
  ASSERT_MEM_EQ(info.result.base, want, strlen(want));
  ASSERT_OK(fleet_worker_close(&w, NULL));
  ASSERT_OK(fleet_queue_close(&eq, NULL));
  qt_close(&t);
}
