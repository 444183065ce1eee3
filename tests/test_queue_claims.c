/* test_queue_claims.c -- claims on both adapters: fencing tokens, stale and
 * repeated completions, heartbeats, release, failure with fixed and
 * exponential backoff, dead jobs and the recovery of expired claims (never
 * a live one with them; tokens grow across it). */
#include "test_queue_util.h"

CONFORMANCE_IMPL(queue_claim_tokens) {
  fleet_queue_options_t o;
  fleet_claim_t claims[3], stale;
  fleet_job_info_t info;
  qt_job_t jobs[3], again[1];
  uint64_t t0;
  int res[3];
  qt_t t;

  /* A repeated completion is recognised (FLEET_EALREADY) by the kept
   * record: keep completed jobs (none are by default). */
  fleet_queue_options_init(&o);
  o.keep_completed = 1000;
  qt_open(&t, b->url, "tok", &o);
  qt_add(&t, "t", "a", NULL);
  qt_add(&t, "t", "b", NULL);
  qt_add(&t, "t", "c", NULL);
  t0 = qt_now_ms(&t);
  ASSERT_EQ(3, qt_claim(&t, 3, 5000, jobs));
  ASSERT_UGE(t.claim_info.deadline_ms, t0 + 5000);
  ASSERT_ULE(t.claim_info.deadline_ms, t0 + 5000 + 1000);
  /* Every claim has its own, increasing token and one attempt. */
  ASSERT_UGT(jobs[1].token, jobs[0].token);
  ASSERT_UGT(jobs[2].token, jobs[1].token);
  ASSERT_EQ(1, jobs[0].attempts);
  ASSERT_STR_EQ("a", jobs[0].payload);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(3, t.counts.running);
  ASSERT_UEQ(0, t.counts.pending);

  /* A stale token changes nothing. */
  stale = qt_claim_of(&jobs[0]);
  stale.token = jobs[0].token + 100;
  ASSERT_OK(qt_complete(&t, &stale, 1, res));
  ASSERT_ERR(FLEET_ESTALE, res[0]);
  ASSERT_OK(qt_refresh(&t, &stale, 1, 5000, res));
  ASSERT_ERR(FLEET_ESTALE, res[0]);
  ASSERT_OK(qt_release(&t, &stale, 1, res));
  ASSERT_ERR(FLEET_ESTALE, res[0]);
  ASSERT_ERR(FLEET_ESTALE, qt_fail(&t, &stale, "boom"));
  ASSERT_OK(qt_get(&t, jobs[0].id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_RUNNING, info.state);
  ASSERT_UEQ(jobs[0].token, info.token);

  /* The heartbeat moves the deadline of every claim in one call. */
  claims[0] = qt_claim_of(&jobs[0]);
  claims[1] = qt_claim_of(&jobs[1]);
  claims[2] = qt_claim_of(&jobs[2]);
  ASSERT_OK(qt_refresh(&t, claims, 3, 60000, res));
  ASSERT_OK(res[0]);
  ASSERT_OK(res[1]);
  ASSERT_OK(res[2]);

  /* Completing twice: done, then "already done"; the other two in the
   * same batch complete. */
  ASSERT_OK(qt_complete(&t, claims, 1, res));
  ASSERT_OK(res[0]);
  ASSERT_OK(qt_complete(&t, claims, 1, res));
  ASSERT_ERR(FLEET_EALREADY, res[0]);
  ASSERT_OK(qt_refresh(&t, claims, 1, 5000, res));
  ASSERT_ERR(FLEET_ESTALE, res[0]);

  /* Release hands a job back without counting the attempt; the old token
   * is then stale for a new claim's holder and "already done" for a
   * repeated release. */
  ASSERT_OK(qt_release(&t, &claims[1], 1, res));
  ASSERT_OK(res[0]);
  ASSERT_OK(qt_release(&t, &claims[1], 1, res));
  ASSERT_ERR(FLEET_EALREADY, res[0]);
  ASSERT_OK(qt_get(&t, jobs[1].id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  ASSERT_EQ(0, info.attempts);
  ASSERT_EQ(1, qt_claim(&t, 3, 5000, again));
  ASSERT_STR_EQ(jobs[1].id, again[0].id);
  ASSERT_EQ(1, again[0].attempts);
  ASSERT_UGT(again[0].token, jobs[2].token);
  ASSERT_OK(qt_complete(&t, &claims[1], 1, res));
  ASSERT_ERR(FLEET_ESTALE, res[0]);

  /* A batch with a missing job, and one claim twice. */
  claims[0] = qt_claim_of(&again[0]);
  claims[1].id = "missing";
  ASSERT_OK(qt_complete(&t, claims, 3, res));
  ASSERT_OK(res[0]);
  ASSERT_ERR(FLEET_ENOTFOUND, res[1]);
  ASSERT_OK(res[2]);
  claims[1] = claims[0];
  ASSERT_OK(qt_complete(&t, claims, 2, res));
  ASSERT_ERR(FLEET_EALREADY, res[0]);
  ASSERT_ERR(FLEET_EALREADY, res[1]);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.running);
  ASSERT_UEQ(3, t.counts.completed);
  qt_close(&t);
}

/* One claim given more than once in a completion batch, with no history
 * kept: the first completes with its result, a repeat with the same token
 * is "already done" and its result is not kept, its id with a token it
 * does not hold is stale; the other claim of the batch completes, and the
 * queue counts two completions. */
CONFORMANCE_IMPL(queue_complete_repeat) {
  fleet_job_info_t info;
  fleet_claim_t c[5];
  fleet_bytes_t res[5];
  qt_job_t jobs[2];
  int out[5];
  qt_t t;

  qt_open(&t, b->url, "rep", NULL);
  qt_add(&t, "t", "a", NULL);
  qt_add(&t, "t", "b", NULL);
  ASSERT_EQ(2, qt_claim(&t, 2, 60000, jobs));
  c[0] = qt_claim_of(&jobs[0]);
  c[1] = c[0];
  c[2] = qt_claim_of(&jobs[1]);
  c[3] = c[0];
  c[3].token += 100;
  c[4] = c[2];
  res[0] = (fleet_bytes_t){"first", 5};
  res[1] = (fleet_bytes_t){"second", 6};
  res[2] = (fleet_bytes_t){"other", 5};
  res[3] = (fleet_bytes_t){"stale", 5};
  res[4] = (fleet_bytes_t){"again", 5};
  ASSERT_OK(qt_complete_results(&t, c, res, 5, out));
  ASSERT_OK(out[0]);
  ASSERT_ERR(FLEET_EALREADY, out[1]);
  ASSERT_OK(out[2]);
  ASSERT_ERR(FLEET_ESTALE, out[3]);
  ASSERT_ERR(FLEET_EALREADY, out[4]);
  ASSERT_OK(qt_get(&t, jobs[0].id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_COMPLETED, info.state);
  ASSERT_EQ(1, info.has_result);
  ASSERT_UEQ(5, info.result.len);
  ASSERT_EQ(0, memcmp(info.result.base, "first", 5));
  ASSERT_OK(qt_get(&t, jobs[1].id, &info, NULL, 0, NULL, 0));
  ASSERT_UEQ(5, info.result.len);
  ASSERT_EQ(0, memcmp(info.result.base, "other", 5));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.running);
  ASSERT_UEQ(0, t.counts.pending);
  ASSERT_UEQ(2, t.counts.completed);

  /* Without results, in a batch of the repeats alone. */
  qt_add(&t, "t", "c", NULL);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  c[0] = qt_claim_of(&jobs[0]);
  c[1] = c[0];
  c[2] = c[0];
  ASSERT_OK(qt_complete(&t, c, 3, out));
  ASSERT_OK(out[0]);
  ASSERT_ERR(FLEET_EALREADY, out[1]);
  ASSERT_ERR(FLEET_EALREADY, out[2]);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, jobs[0].id, &info, NULL, 0, NULL, 0));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.running);
  ASSERT_UEQ(3, t.counts.completed);
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_fail_backoff) {
  char ids[2][FLEET_JOB_ID_MAX + 1], err[64];
  fleet_job_spec_t specs[2];
  fleet_job_info_t info;
  fleet_claim_t c;
  qt_job_t jobs[2];
  uint64_t now;
  qt_t t;

  qt_open(&t, b->url, "fail", NULL);
  /* Fixed 150 ms, no jitter, two attempts. */
  fleet_job_spec_init(&specs[0], "t", "f", 1);
  specs[0].backoff = FLEET_BACKOFF_FIXED;
  specs[0].backoff_ms = 150;
  specs[0].backoff_jitter_pct = 0;
  specs[0].max_attempts = 2;
  ASSERT_OK(qt_enqueue(&t, specs, 1, NULL, ids));
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  c = qt_claim_of(&jobs[0]);
  now = t.claim_info.now_ms;
  ASSERT_OK(qt_fail(&t, &c, "first error"));
  ASSERT_EQ(0, t.dead);
  ASSERT_UGE(t.retry_at, now + 150);
  ASSERT_ULE(t.retry_at, now + 150 + 1000);
  ASSERT_OK(qt_get(&t, ids[0], &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_DELAYED, info.state);
  ASSERT_STR_EQ("first error", err);
  ASSERT_UEQ(t.retry_at, info.run_at_ms);
  ASSERT_ERR(FLEET_EALREADY, qt_fail(&t, &c, "again"));
  /* Not before its time. */
  ASSERT_EQ(0, qt_claim(&t, 1, 60000, jobs));
  ASSERT_UEQ(info.run_at_ms, t.claim_info.next_run_at_ms);
  qt_sleep(&t, info.run_at_ms - t.claim_info.now_ms + 10);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  ASSERT_EQ(2, jobs[0].attempts);
  ASSERT_UGE(t.claim_info.now_ms, info.run_at_ms);
  /* The last attempt fails: dead, with its error, counted. */
  c = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_fail(&t, &c, "second error"));
  ASSERT_EQ(1, t.dead);
  ASSERT_OK(qt_get(&t, ids[0], &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_STR_EQ("second error", err);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.dead);
  ASSERT_UEQ(1, t.counts.dead_kept);
  ASSERT_UEQ(0, t.counts.delayed + t.counts.pending + t.counts.running);

  /* Exponential from 40 ms: 40, 80, 160 ms, without jitter. */
  fleet_job_spec_init(&specs[1], "t", "e", 1);
  specs[1].backoff_ms = 40;
  specs[1].backoff_max_ms = 10000;
  specs[1].backoff_jitter_pct = 0;
  specs[1].max_attempts = 4;
  ASSERT_OK(qt_enqueue(&t, &specs[1], 1, NULL, ids));
  for (uint64_t want = 40; want <= 160; want *= 2) {
    while (qt_claim(&t, 1, 60000, jobs) == 0)
      qt_sleep(&t, 5);
    c = qt_claim_of(&jobs[0]);
    ASSERT_OK(qt_fail(&t, &c, "again"));
    /* The fail ran between the claim and now. */
    ASSERT_UGE(t.retry_at, t.claim_info.now_ms + want);
    ASSERT_ULE(t.retry_at, qt_now_ms(&t) + want);
  }
  qt_close(&t);
}

/* Jitter takes up to the given share off each delay: 50 % of 1000 ms
 * gives delays in [500, 1000]. */
CONFORMANCE_IMPL(queue_fail_jitter) {
  fleet_job_spec_t s;
  fleet_claim_t c;
  qt_job_t jobs[1];
  uint64_t d, lo = UINT64_MAX, hi = 0;
  int i;
  qt_t t;

  qt_open(&t, b->url, "jit", NULL);
  for (i = 0; i < 20; i++) {
    fleet_job_spec_init(&s, "t", "j", 1);
    s.backoff = FLEET_BACKOFF_FIXED;
    s.backoff_ms = 1000;
    s.backoff_jitter_pct = 50;
    ASSERT_OK(qt_enqueue(&t, &s, 1, NULL, NULL));
  }
  for (i = 0; i < 20; i++) {
    ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
    c = qt_claim_of(&jobs[0]);
    ASSERT_OK(qt_fail(&t, &c, "x"));
    /* The fail ran between the claim and now, with a delay in
     * [500, 1000]. */
    ASSERT_UGE(t.retry_at, t.claim_info.now_ms + 500);
    ASSERT_ULE(t.retry_at, qt_now_ms(&t) + 1000);
    d = t.retry_at - t.claim_info.now_ms;
    lo = d < lo ? d : lo;
    hi = d > hi ? d : hi;
  }
  /* Twenty delays spread over the jitter, not one value. */
  ASSERT_UGT(hi - lo, 100);
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_recover) {
  char ids[2][FLEET_JOB_ID_MAX + 1], err[64];
  fleet_job_spec_t specs[2];
  fleet_job_info_t info;
  fleet_claim_t c;
  qt_job_t jobs[2], again[2];
  int res[1];
  qt_t t;

  qt_open(&t, b->url, "rec", NULL);
  fleet_job_spec_init(&specs[0], "t", "r", 1);
  specs[1] = specs[0];
  specs[1].max_attempts = 1;
  ASSERT_OK(qt_enqueue(&t, specs, 2, NULL, ids));
  ASSERT_EQ(2, qt_claim(&t, 2, 150, jobs));
  /* Nothing expired yet; the recovery says when the first claim ends. */
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(0, t.recover_info.requeued);
  ASSERT_UEQ(jobs[0].deadline_ms, t.recover_info.next_deadline_ms);
  qt_sleep(&t, t.recover_info.next_deadline_ms - t.recover_info.now_ms + 20);
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.requeued);
  ASSERT_UEQ(1, t.recover_info.dead);
  ASSERT_UEQ(0, t.recover_info.next_deadline_ms);
  /* Recovering again finds nothing: each claim is handled once. */
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(0, t.recover_info.requeued + t.recover_info.dead);

  ASSERT_OK(qt_get(&t, ids[0], &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  ASSERT_STR_EQ("claim expired", err);
  ASSERT_UEQ(0, info.token);
  ASSERT_OK(qt_get(&t, ids[1], &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_STR_EQ("claim expired", err);

  /* The zombie's calls are stale; the new holder completes. */
  c = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &c, 1, res));
  ASSERT_ERR(FLEET_ESTALE, res[0]);
  ASSERT_ERR(FLEET_ESTALE, qt_fail(&t, &c, "zombie"));
  c = qt_claim_of(&jobs[1]);
  ASSERT_OK(qt_complete(&t, &c, 1, res));
  ASSERT_ERR(FLEET_ESTALE, res[0]);
  ASSERT_EQ(1, qt_claim(&t, 2, 60000, again));
  ASSERT_STR_EQ(ids[0], again[0].id);
  ASSERT_EQ(2, again[0].attempts);
  c = qt_claim_of(&again[0]);
  ASSERT_OK(qt_complete(&t, &c, 1, res));
  ASSERT_OK(res[0]);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.completed);
  ASSERT_UEQ(1, t.counts.dead);
  qt_close(&t);
}

/* Recovery never mixes an expired claim with a live one: A claimed for
 * 100 ms and B for 60 s, 150 ms later (both scaled) the recovery requeues
 * A alone, and B is still running with its claim, which completes. */
CONFORMANCE_IMPL(queue_recover_mixed) {
  char ids[2][FLEET_JOB_ID_MAX + 1];
  fleet_job_info_t info;
  fleet_claim_t c;
  qt_job_t a, bj, again;
  int res[1];
  qt_t t;

  qt_open(&t, b->url, "mix", NULL);
  qt_add(&t, "t", "a", ids[0]);
  qt_add(&t, "t", "b", ids[1]);
  ASSERT_EQ(1, qt_claim(&t, 1, (uint32_t)fleet_test_ms(100), &a));
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &bj));
  ASSERT_STR_EQ(ids[0], a.id);
  ASSERT_STR_EQ(ids[1], bj.id);
  qt_sleep(&t, fleet_test_ms(150));
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.requeued);
  ASSERT_UEQ(0, t.recover_info.dead);
  ASSERT_UEQ(bj.deadline_ms, t.recover_info.next_deadline_ms);
  ASSERT_OK(qt_get(&t, ids[0], &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  ASSERT_OK(qt_get(&t, ids[1], &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_RUNNING, info.state);
  ASSERT_UEQ(bj.token, info.token);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.pending);
  ASSERT_UEQ(1, t.counts.running);
  /* B's claim is intact: it refreshes and completes; A runs again. */
  c = qt_claim_of(&bj);
  ASSERT_OK(qt_refresh(&t, &c, 1, 60000, res));
  ASSERT_OK(res[0]);
  ASSERT_OK(qt_complete(&t, &c, 1, res));
  ASSERT_OK(res[0]);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &again));
  ASSERT_STR_EQ(ids[0], again.id);
  qt_close(&t);
}

/* Tokens grow across a recovery: a claim that expired and was recovered,
 * then claimed again, has a greater token, and the old one is stale on
 * complete and on fail (nothing changes: the new claim completes). */
CONFORMANCE_IMPL(queue_token_after_recover) {
  char id[FLEET_JOB_ID_MAX + 1];
  fleet_job_info_t info;
  fleet_claim_t old, cur;
  qt_job_t first, second;
  int res[1];
  qt_t t;

  qt_open(&t, b->url, "mono", NULL);
  qt_add(&t, "t", "x", id);
  ASSERT_EQ(1, qt_claim(&t, 1, (uint32_t)fleet_test_ms(50), &first));
  qt_sleep(&t, fleet_test_ms(100));
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.requeued);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &second));
  ASSERT_STR_EQ(id, second.id);
  ASSERT_UGT(second.token, first.token);
  old = qt_claim_of(&first);
  ASSERT_OK(qt_complete(&t, &old, 1, res));
  ASSERT_ERR(FLEET_ESTALE, res[0]);
  ASSERT_ERR(FLEET_ESTALE, qt_fail(&t, &old, "zombie"));
  ASSERT_OK(qt_get(&t, id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_RUNNING, info.state);
  ASSERT_UEQ(second.token, info.token);
  ASSERT_EQ(2, info.attempts);
  cur = qt_claim_of(&second);
  ASSERT_OK(qt_complete(&t, &cur, 1, res));
  ASSERT_OK(res[0]);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.completed);
  ASSERT_UEQ(0, t.counts.dead);
  qt_close(&t);
}
