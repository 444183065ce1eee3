/* test_queue.c -- the queue's producer side on both adapters: enqueue (one
 * and bulk), ids, get, priorities, delayed jobs, uniqueness, cancel, list,
 * counts, purge, retention, bad input, foreign data and close. */
#include "test_queue_util.h"

static fleet_job_spec_t spec(const char *type, const char *payload) {
  fleet_job_spec_t s;
  fleet_job_spec_init(&s, type, payload, strlen(payload));
  return s;
}

CONFORMANCE_IMPL(queue_enqueue_get) {
  static const char bin[] = {'a', '\0', 'b', '\xff'};
  char ids[5][FLEET_JOB_ID_MAX + 1], payload[64];
  fleet_job_spec_t specs[5];
  fleet_job_info_t info;
  uint64_t t0;
  int st[5], i;
  qt_t t;

  qt_open(&t, b->url, "jobs", NULL);
  t0 = qt_now_ms(&t);
  /* One job, binary payload, defaults. */
  fleet_job_spec_init(&specs[0], "email", bin, sizeof(bin));
  ASSERT_OK(qt_enqueue(&t, specs, 1, st, ids));
  ASSERT_OK(st[0]);
  ASSERT_STR_EQ("1", ids[0]);
  ASSERT_OK(qt_get(&t, ids[0], &info, payload, sizeof(payload), NULL, 0));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  ASSERT_EQ(0, info.attempts);
  ASSERT_EQ(3, info.max_attempts);
  ASSERT_EQ(0, info.priority);
  ASSERT_EQ(sizeof(bin), info.payload.len);
  ASSERT_MEM_EQ(bin, payload, sizeof(bin));
  ASSERT_NULL(info.last_error);
  ASSERT_UGE(info.created_ms, t0);
  ASSERT_UEQ(0, info.token);
  ASSERT_UEQ(0, info.finished_ms);

  /* Bulk: five in one call, one with its own id used twice in the batch,
   * one with an id that exists already. */
  for (i = 0; i < 5; i++)
    specs[i] = spec("sms", "x");
  specs[1].id = "order-7";
  specs[3].id = "order-7";
  specs[4].max_attempts = 9;
  specs[4].priority = 12;
  ASSERT_OK(qt_enqueue(&t, specs, 5, st, ids));
  ASSERT_OK(st[0]);
  ASSERT_OK(st[1]);
  ASSERT_OK(st[2]);
  ASSERT_ERR(FLEET_EEXIST, st[3]);
  ASSERT_OK(st[4]);
  ASSERT_STR_EQ("order-7", ids[1]);
  ASSERT_STR_EQ("order-7", ids[3]);
  ASSERT_STR_NE(ids[0], ids[2]);
  ASSERT_STR_NE(ids[2], ids[4]);
  ASSERT_OK(qt_get(&t, ids[4], &info, NULL, 0, NULL, 0));
  ASSERT_EQ(9, info.max_attempts);
  ASSERT_EQ(12, info.priority);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(5, t.counts.pending);
  ASSERT_ERR(FLEET_EEXIST, (qt_enqueue(&t, &specs[1], 1, st, NULL), st[0]));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, "nope", &info, NULL, 0, NULL, 0));
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_bad_input) {
  char big_id[FLEET_JOB_ID_MAX + 2], big_type[FLEET_JOB_TYPE_MAX + 2];
  char big_name[600];
  fleet_job_spec_t s, many[2];
  fleet_claim_t claim = {"1", 1};
  fleet_queue_t q2;
  qt_t t;

  memset(big_id, 'a', sizeof(big_id) - 1);
  big_id[sizeof(big_id) - 1] = '\0';
  memset(big_type, 't', sizeof(big_type) - 1);
  big_type[sizeof(big_type) - 1] = '\0';
  qt_open(&t, b->url, "bad", NULL);

  ASSERT_ERR(FLEET_EINVAL, fleet_queue_init(&t.c.client, &q2, "", NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_init(&t.c.client, &q2, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_init(NULL, &q2, "x", NULL));
  /* Too long is FLEET_E2BIG, as for every name. */
  memset(big_name, 'n', sizeof(big_name) - 1);
  big_name[sizeof(big_name) - 1] = '\0';
  ASSERT_ERR(FLEET_E2BIG, fleet_queue_init(&t.c.client, &q2, big_name, NULL));

#define BAD(code, field, value)                                                \
  do {                                                                         \
    s = spec("t", "p");                                                        \
    s.field = value;                                                           \
    ASSERT_ERR(code, qt_enqueue(&t, &s, 1, NULL, NULL));                       \
  } while (0)
  BAD(FLEET_EINVAL, type, NULL);
  BAD(FLEET_EINVAL, type, "");
  BAD(FLEET_E2BIG, type, big_type);
  BAD(FLEET_EINVAL, id, "");
  BAD(FLEET_EINVAL, id, "123");
  BAD(FLEET_E2BIG, id, big_id);
  BAD(FLEET_EINVAL, priority, 1001);
  BAD(FLEET_EINVAL, priority, -1001);
  BAD(FLEET_EINVAL, max_attempts, 0);
  BAD(FLEET_EINVAL, backoff_jitter_pct, 101);
  BAD(FLEET_EINVAL, backoff, (fleet_backoff_t)7);
  BAD(FLEET_EINVAL, delay_ms, UINT64_MAX);
  BAD(FLEET_EINVAL, unique_key, "");
  BAD(FLEET_EINVAL, unique_key, "u"); /* without a TTL */
  BAD(FLEET_E2BIG, payload.len, FLEET_JOB_PAYLOAD_MAX + 1);
  BAD(FLEET_EINVAL, payload.base, NULL);
#undef BAD
  /* One bad spec refuses the whole batch. */
  many[0] = spec("t", "ok");
  many[1] = spec("t", "ok");
  many[1].priority = 5000;
  ASSERT_ERR(FLEET_EINVAL, qt_enqueue(&t, many, 2, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, qt_enqueue(&t, many, 0, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             qt_enqueue(&t, many, FLEET_QUEUE_BATCH_MAX + 1, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, qt_claim(&t, FLEET_QUEUE_BATCH_MAX + 1, 1000, NULL));
  ASSERT_ERR(FLEET_EINVAL, qt_claim(&t, 1, 0, NULL));
  ASSERT_ERR(FLEET_EINVAL, qt_refresh(&t, &claim, 1, 0, NULL));
  ASSERT_ERR(FLEET_EINVAL, qt_complete(&t, &claim, 0, NULL));
  ASSERT_ERR(FLEET_EINVAL, qt_complete(&t, NULL, 1, NULL));
  claim.token = 0;
  ASSERT_ERR(FLEET_EINVAL, qt_release(&t, &claim, 1, NULL));
  claim.token = 1;
  claim.id = "";
  ASSERT_ERR(FLEET_EINVAL, qt_fail(&t, &claim, "x"));
  claim.id = "1";
  ASSERT_ERR(FLEET_EINVAL, qt_get(&t, "", NULL, NULL, 0, NULL, 0));
  ASSERT_ERR(FLEET_E2BIG, qt_cancel(&t, big_id));
  claim.id = big_id;
  ASSERT_ERR(FLEET_E2BIG, qt_complete(&t, &claim, 1, NULL));
  claim.id = "1";
  ASSERT_ERR(FLEET_EINVAL, qt_list(&t, "", 10, NULL, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, qt_list(&t, "t", 0, NULL, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, qt_purge(&t, FLEET_JOB_PENDING));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_counts(&t.q, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_counts(NULL, NULL, NULL));
  /* Nothing was written. */
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.pending + t.counts.delayed + t.counts.running);
  qt_close(&t);
  ASSERT_ERR(FLEET_EINVAL, qt_counts(&t));
}

CONFORMANCE_IMPL(queue_priority_fifo) {
  static const int prio[] = {0, 5, -3, 5, 0, 1000, -1000};
  static const int want[] = {5, 1, 3, 0, 4, 2, 6};
  char ids[7][FLEET_JOB_ID_MAX + 1];
  fleet_job_spec_t specs[7];
  qt_job_t jobs[7];
  int i;
  qt_t t;

  qt_open(&t, b->url, "prio", NULL);
  for (i = 0; i < 7; i++) {
    specs[i] = spec("t", "");
    specs[i].priority = prio[i];
  }
  ASSERT_OK(qt_enqueue(&t, specs, 7, NULL, ids));
  /* Highest priority first, then oldest first. Claimed two at a time. */
  ASSERT_EQ(2, qt_claim(&t, 2, 60000, jobs));
  ASSERT_EQ(2, qt_claim(&t, 2, 60000, jobs + 2));
  ASSERT_EQ(3, qt_claim(&t, 5, 60000, jobs + 4));
  ASSERT_UEQ(0, t.claim_info.pending);
  for (i = 0; i < 7; i++)
    ASSERT_STR_EQ(ids[want[i]], jobs[i].id);
  ASSERT_EQ(0, qt_claim(&t, 5, 60000, jobs));
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_delayed) {
  char ids[2][FLEET_JOB_ID_MAX + 1];
  fleet_job_spec_t specs[2];
  fleet_job_info_t info;
  qt_job_t jobs[2];
  uint64_t t0, b_at;
  qt_t t;

  qt_open(&t, b->url, "later", NULL);
  t0 = qt_now_ms(&t);
  specs[0] = spec("t", "a");
  specs[0].delay_ms = 300;
  ASSERT_OK(qt_enqueue(&t, specs, 1, NULL, ids));
  ASSERT_OK(qt_get(&t, ids[0], &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_DELAYED, info.state);
  ASSERT_UGE(info.run_at_ms, t0 + 300);
  ASSERT_ULE(info.run_at_ms, t0 + 300 + 1000);
  /* The second is due well after the first, by the first's own time (a
   * time from this client's clock could fall before it when the enqueue
   * is slow: CI under load). */
  b_at = info.run_at_ms + fleet_test_ms(600);
  specs[1] = spec("t", "b");
  specs[1].run_at_ms = b_at;
  ASSERT_OK(qt_enqueue(&t, specs + 1, 1, NULL, ids + 1));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.pending);
  ASSERT_UEQ(2, t.counts.delayed);
  /* Nothing to claim yet; the claim says when the first one is due. */
  ASSERT_EQ(0, qt_claim(&t, 5, 60000, jobs));
  ASSERT_UEQ(info.run_at_ms, t.claim_info.next_run_at_ms);
  qt_sleep(&t, info.run_at_ms - t.claim_info.now_ms + 20);
  /* Due: it reads as pending even before a claim moves it. */
  ASSERT_OK(qt_get(&t, ids[0], &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.pending);
  ASSERT_UEQ(1, t.counts.delayed);
  ASSERT_EQ(1, qt_claim(&t, 5, 60000, jobs));
  ASSERT_STR_EQ(ids[0], jobs[0].id);
  ASSERT_UGE(t.claim_info.now_ms, info.run_at_ms);
  ASSERT_UEQ(b_at, t.claim_info.next_run_at_ms);
  qt_sleep(&t, t.claim_info.next_run_at_ms - t.claim_info.now_ms + 20);
  ASSERT_EQ(1, qt_claim(&t, 5, 60000, jobs));
  ASSERT_STR_EQ(ids[1], jobs[0].id);
  ASSERT_UEQ(0, t.claim_info.next_run_at_ms);
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_unique) {
  char ids[3][FLEET_JOB_ID_MAX + 1];
  fleet_job_spec_t specs[3];
  int st[3];
  qt_t t;

  qt_open(&t, b->url, "uniq", NULL);
  specs[0] = spec("t", "a");
  specs[0].unique_key = "user:1";
  specs[0].unique_ttl_ms = 400;
  specs[1] = specs[0];
  specs[2] = spec("t", "c");
  specs[2].unique_key = "user:2";
  specs[2].unique_ttl_ms = 60000;
  ASSERT_OK(qt_enqueue(&t, specs, 3, st, ids));
  ASSERT_OK(st[0]);
  ASSERT_ERR(FLEET_EEXIST, st[1]);
  ASSERT_STR_EQ(ids[0], ids[1]); /* the holder's id */
  ASSERT_OK(st[2]);
  /* Held until its TTL runs out. */
  ASSERT_OK(qt_enqueue(&t, specs, 1, st, ids));
  ASSERT_ERR(FLEET_EEXIST, st[0]);
  qt_sleep(&t, 450);
  ASSERT_OK(qt_enqueue(&t, specs, 1, st, ids));
  ASSERT_OK(st[0]);
  /* Cancelling the holder frees its key at once. */
  ASSERT_OK(qt_cancel(&t, ids[2]));
  ASSERT_OK(qt_enqueue(&t, &specs[2], 1, st, NULL));
  ASSERT_OK(st[0]);
  qt_close(&t);
}

/* Enqueues one job with unique key `key` held until it ends (`ttl_ms`: its
 * safety bound, 0 none) and `max_attempts`; returns its status, and its id
 * (or the holder's) in `id`. */
static int uq_add(qt_t *t, const char *key, uint64_t ttl_ms,
                  uint32_t max_attempts, char *id) {
  char ids[1][FLEET_JOB_ID_MAX + 1];
  fleet_job_spec_t s = spec("u", key);
  int st;

  s.unique_key = key;
  s.unique_ttl_ms = ttl_ms;
  s.unique_until_done = 1;
  s.max_attempts = max_attempts;
  ASSERT_OK(qt_enqueue(t, &s, 1, &st, ids));
  strcpy(id, ids[0]);
  return st;
}

/* Claims the one pending job, which must be `id`. */
static fleet_claim_t uq_claim(qt_t *t, qt_job_t *job, uint32_t ttl_ms,
                              const char *id) {
  ASSERT_EQ(1, qt_claim(t, 1, ttl_ms, job));
  ASSERT_STR_EQ(id, job->id);
  return qt_claim_of(job);
}

/* A unique key held until its job ends: refused while the job is pending
 * or running, taken again once it completed (with and without a kept
 * history), died (failed or expired) or was cancelled; a safety TTL ends
 * it sooner, and the late end of the first holder leaves the next one's
 * key alone; a dead job run again does not take its key back. */
CONFORMANCE_IMPL(queue_unique_until_done) {
  char id[FLEET_JOB_ID_MAX + 1], other[FLEET_JOB_ID_MAX + 1];
  char held[FLEET_JOB_ID_MAX + 1];
  fleet_queue_options_t o;
  fleet_job_spec_t s;
  fleet_claim_t c;
  qt_job_t job;
  int st;
  qt_t t, k;

  qt_open(&t, b->url, "uq", NULL);
  /* Bad input: the flag without a key, or not 0 or 1. A key held until
   * done needs no TTL. */
  s = spec("u", "p");
  s.unique_until_done = 1;
  ASSERT_ERR(FLEET_EINVAL, qt_enqueue(&t, &s, 1, NULL, NULL));
  s.unique_key = "k";
  s.unique_until_done = 2;
  ASSERT_ERR(FLEET_EINVAL, qt_enqueue(&t, &s, 1, NULL, NULL));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.pending);

  /* Pending, then running: refused, naming the holder. Completed (no
   * history kept): taken again. */
  ASSERT_OK(uq_add(&t, "a", 0, 3, id));
  ASSERT_ERR(FLEET_EEXIST, uq_add(&t, "a", 0, 3, held));
  ASSERT_STR_EQ(id, held);
  c = uq_claim(&t, &job, 60000, id);
  ASSERT_ERR(FLEET_EEXIST, uq_add(&t, "a", 0, 3, held));
  ASSERT_STR_EQ(id, held);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  ASSERT_OK(uq_add(&t, "a", 0, 3, id));
  c = uq_claim(&t, &job, 60000, id);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  /* A job without the flag, with a TTL key, in the same queue: its key
   * outlives its completion, as before. */
  s = spec("u", "ttl");
  s.unique_key = "ttl";
  s.unique_ttl_ms = 60000;
  ASSERT_OK(qt_enqueue(&t, &s, 1, NULL, NULL));
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  ASSERT_STR_EQ("ttl", job.payload);
  c = qt_claim_of(&job);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  ASSERT_OK(qt_enqueue(&t, &s, 1, &st, NULL));
  ASSERT_ERR(FLEET_EEXIST, st);

  /* Failed until dead: taken again; a failure that retries keeps it. */
  ASSERT_OK(uq_add(&t, "a", 0, 2, id));
  c = uq_claim(&t, &job, 60000, id);
  ASSERT_OK(qt_fail(&t, &c, "once"));
  ASSERT_EQ(0, t.dead);
  ASSERT_ERR(FLEET_EEXIST, uq_add(&t, "a", 0, 3, held));
  ASSERT_STR_EQ(id, held);
  qt_sleep(&t, t.retry_at - qt_now_ms(&t) + 20);
  c = uq_claim(&t, &job, 60000, id);
  ASSERT_OK(qt_fail(&t, &c, "twice"));
  ASSERT_EQ(1, t.dead);
  ASSERT_OK(uq_add(&t, "a", 0, 3, other));
  /* Run again, the dead job does not take the key back, and its end
   * leaves the new holder's key alone. */
  ASSERT_OK(qt_retry(&t, id));
  ASSERT_UEQ(1, t.removed);
  ASSERT_ERR(FLEET_EEXIST, uq_add(&t, "a", 0, 3, held));
  ASSERT_STR_EQ(other, held);
  c = uq_claim(&t, &job, 60000, other);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  c = uq_claim(&t, &job, 60000, id);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  ASSERT_OK(uq_add(&t, "a", 0, 3, id));

  /* Cancelled while pending: taken again. */
  ASSERT_OK(qt_cancel(&t, id));
  ASSERT_OK(uq_add(&t, "a", 0, 1, id));

  /* Its claim expired on its last attempt: recovered to dead, taken
   * again. */
  c = uq_claim(&t, &job, 50, id);
  qt_sleep(&t, 80);
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.dead);
  ASSERT_OK(uq_add(&t, "a", 0, 3, id));

  /* A safety TTL: the key goes at it while the job still waits; the
   * holder that came after keeps it when the first one ends. */
  ASSERT_OK(uq_add(&t, "b", 100, 3, other));
  qt_sleep(&t, 150);
  ASSERT_OK(uq_add(&t, "b", 0, 3, held));
  c = uq_claim(&t, &job, 60000, id);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  c = uq_claim(&t, &job, 60000, other);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  ASSERT_ERR(FLEET_EEXIST, uq_add(&t, "b", 0, 3, id));
  ASSERT_STR_EQ(held, id);
  qt_close(&t);

  /* With a kept history, a completion releases it as well. */
  fleet_queue_options_init(&o);
  o.keep_completed = 100;
  qt_open(&k, b->url, "uqk", &o);
  ASSERT_OK(uq_add(&k, "a", 0, 3, id));
  c = uq_claim(&k, &job, 60000, id);
  ASSERT_OK(qt_complete(&k, &c, 1, NULL));
  ASSERT_OK(uq_add(&k, "a", 0, 3, id));
  qt_close(&k);
}

CONFORMANCE_IMPL(queue_cancel_list_purge) {
  char id[4][FLEET_JOB_ID_MAX + 1], listed[8][FLEET_JOB_ID_MAX + 1];
  fleet_queue_options_t o;
  fleet_claim_t claims[2];
  fleet_job_info_t info;
  qt_job_t jobs[2];
  uint64_t total;
  size_t n;
  qt_t t;

  /* Completed jobs kept (none are by default), for cancel and purge to
   * find. */
  fleet_queue_options_init(&o);
  o.keep_completed = 1000;
  qt_open(&t, b->url, "misc", &o);
  qt_add(&t, "a", "1", id[0]);
  qt_add(&t, "a", "2", id[1]);
  qt_add(&t, "a", "3", id[2]);
  qt_add(&t, "b", "4", id[3]);
  ASSERT_OK(qt_list(&t, "a", 8, listed, &n, &total));
  ASSERT_EQ(3, n);
  ASSERT_UEQ(3, total);
  ASSERT_OK(qt_list(&t, "a", 2, listed, &n, &total));
  ASSERT_EQ(2, n);
  ASSERT_UEQ(3, total);
  ASSERT_OK(qt_list(&t, "none", 8, listed, &n, &total));
  ASSERT_EQ(0, n);

  /* Pending: cancelled and gone. */
  ASSERT_OK(qt_cancel(&t, id[2]));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, id[2], &info, NULL, 0, NULL, 0));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_cancel(&t, id[2]));
  /* Completed: already done (a running job's cancel:
   * test_queue_stop.c). */
  ASSERT_EQ(2, qt_claim(&t, 2, 60000, jobs));
  claims[0] = qt_claim_of(&jobs[0]);
  claims[1] = qt_claim_of(&jobs[1]);
  ASSERT_OK(qt_complete(&t, claims, 2, NULL));
  ASSERT_ERR(FLEET_EALREADY, qt_cancel(&t, jobs[0].id));
  /* Claimed jobs leave the type's list. */
  ASSERT_OK(qt_list(&t, "a", 8, listed, &n, &total));
  ASSERT_UEQ(0, total);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.pending);
  ASSERT_UEQ(2, t.counts.completed);
  ASSERT_UEQ(2, t.counts.completed_kept);
  /* Purge drops the records but not the counters. */
  ASSERT_OK(qt_purge(&t, FLEET_JOB_COMPLETED));
  ASSERT_UEQ(2, t.removed);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, jobs[0].id, &info, NULL, 0, NULL, 0));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(2, t.counts.completed);
  ASSERT_UEQ(0, t.counts.completed_kept);
  ASSERT_OK(qt_purge(&t, FLEET_JOB_DEAD));
  ASSERT_UEQ(0, t.removed);
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_retention) {
  fleet_queue_options_t o;
  fleet_claim_t claims[10];
  fleet_job_info_t info;
  qt_job_t jobs[10];
  int i, kept, res[10];
  qt_t t;

  fleet_queue_options_init(&o);
  o.keep_completed = 3;
  qt_open(&t, b->url, "keep", &o);
  for (i = 0; i < 10; i++)
    qt_add(&t, "t", "x", NULL);
  ASSERT_EQ(10, qt_claim(&t, 10, 60000, jobs));
  for (i = 0; i < 10; i++)
    claims[i] = qt_claim_of(&jobs[i]);
  ASSERT_OK(qt_complete(&t, claims, 10, res));
  for (i = 0; i < 10; i++)
    ASSERT_OK(res[i]);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(10, t.counts.completed);
  ASSERT_UEQ(3, t.counts.completed_kept);
  /* Three are kept (the newest; ties within a millisecond go by id), with
   * their token: a repeated completion is recognised. The others are
   * gone. */
  ASSERT_OK(qt_complete(&t, claims, 10, res));
  for (i = 0, kept = 0; i < 10; i++) {
    if (res[i] == FLEET_EALREADY) {
      kept++;
      ASSERT_OK(qt_get(&t, jobs[i].id, &info, NULL, 0, NULL, 0));
      ASSERT_EQ(FLEET_JOB_COMPLETED, info.state);
      ASSERT_UGT(info.finished_ms, 0);
    } else {
      ASSERT_ERR(FLEET_ENOTFOUND, res[i]);
    }
  }
  ASSERT_EQ(3, kept);
  qt_close(&t);

  /* Keep none: the record goes with the completion. */
  o.keep_completed = FLEET_QUEUE_KEEP_NONE;
  qt_open(&t, b->url, "keep0", &o);
  qt_add(&t, "t", "x", NULL);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  claims[0] = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, claims, 1, res));
  ASSERT_OK(res[0]);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, jobs[0].id, &info, NULL, 0, NULL, 0));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.completed);
  ASSERT_UEQ(0, t.counts.completed_kept);
  qt_close(&t);

  /* A zeroed struct is the defaults: no completed record is kept (see
   * test_queue_keep.c). */
  memset(&o, 0, sizeof(o));
  qt_open(&t, b->url, "keep00", &o);
  qt_add(&t, "t", "x", NULL);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  claims[0] = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, claims, 1, res));
  ASSERT_OK(res[0]);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, jobs[0].id, &info, NULL, 0, NULL, 0));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.completed);
  ASSERT_UEQ(0, t.counts.completed_kept);
  qt_close(&t);
}

/* Closing a handle answers what is pending with FLEET_ECANCELED, and
 * refuses new calls. */
static int close_seen;

static void on_close_counts(fleet_queue_t *q, int status,
                            const fleet_queue_counts_t *c, void *ud) {
  ASSERT_ERR(FLEET_ECANCELED, status);
  ASSERT_NULL(c);
  /* Calls from inside a callback of a closing handle are refused. */
  ASSERT_ERR(FLEET_ECLOSING, fleet_queue_counts(q, on_close_counts, ud));
  close_seen++;
}

static void on_queue_closed(fleet_handle_t *q) {
  ASSERT_EQ(2, close_seen);
  close_seen = 100;
}

CONFORMANCE_IMPL(queue_close_cancels) {
  client_ctx_t c;
  fleet_queue_t q;

  ctx_init(&c, b->url, NULL);
  ASSERT_OK(fleet_queue_init(&c.client, &q, "x", NULL));
  ASSERT_STR_EQ("x", fleet_queue_name(&q));
  ASSERT_OK(fleet_queue_counts(&q, on_close_counts, NULL));
  ASSERT_OK(fleet_queue_counts(&q, on_close_counts, NULL));
  ASSERT_OK(fleet_queue_close(&q, on_queue_closed));
  ASSERT_EQ(0, close_seen);
  ASSERT_ERR(FLEET_ECLOSING, fleet_queue_counts(&q, on_close_counts, NULL));
  ASSERT(fleet_test_wait_count(&c.loop, &close_seen, 100,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(100, close_seen);
  ASSERT_NULL(fleet_queue_name(&q));
  /* A queue of a closing client is refused. */
  ASSERT_OK(fleet_client_close(&c.client, ctx_on_close));
  ASSERT_ERR(FLEET_ECLOSING, fleet_queue_init(&c.client, &q, "x", NULL));
  fleet_test_loop_close(&c.loop);
}

/* Runs a Redis command that must succeed. */
static void redis_do(fleet_test_redis_t *redis, const char *cmd) {
  redisReply *r = fleet_test_redis_cmd(redis, cmd);
  ASSERT_NOT_NULL(r);
  ASSERT_NE(REDIS_REPLY_ERROR, r->type);
  freeReplyObject(r);
}

/* Keys that hold what fleet did not write give an error, not a crash: a
 * unique key of queue "a" can name the pending list of queue
 * "a}:unique:x", since both are "{qt:a}:unique:x}:pending". */
CONFORMANCE_IMPL(queue_foreign_data) {
  fleet_job_spec_t s = spec("t", "p");
  struct fleet__handle_s *mine;
  fleet_queue_t other;
  qt_job_t jobs[5];
  qt_t t;

  qt_open(&t, b->url, "a", NULL);
  s.unique_key = "x}:pending";
  s.unique_ttl_ms = 60000;
  ASSERT_OK(qt_enqueue(&t, &s, 1, NULL, NULL));
  s.unique_key = NULL;
  ASSERT_OK(fleet_queue_init(&t.c.client, &other, "a}:unique:x", NULL));
  /* The helpers use t.q: point it at the other queue for a while. */
  other.data = &t;
  mine = t.q.internal_;
  t.q.internal_ = other.internal_;
  ASSERT_ERR(FLEET_EWRONGTYPE, qt_counts(&t));
  ASSERT_ERR(FLEET_EWRONGTYPE, qt_claim(&t, 1, 1000, jobs));
  ASSERT_ERR(FLEET_EWRONGTYPE, qt_enqueue(&t, &s, 1, NULL, NULL));
  t.q.internal_ = mine;
  ASSERT_OK(fleet_queue_close(&other, NULL));
  if (b->redis != NULL) {
    /* A negative counter. (Jobs fleet cannot read are moved aside:
     * test_queue_poison.c.) */
    redisReply *r;
    r = fleet_test_redis_cmd(b->redis, "HSET {qt:a}:stats completed -1");
    ASSERT_NOT_NULL(r);
    freeReplyObject(r);
    ASSERT_ERR(FLEET_EPROTO, qt_counts(&t));
  }
  qt_close(&t);
}

/* What each enqueue of queue_redis_enqueue_phase heard. */
static int phase_heard;
static int phase_status[4][2];
static char phase_ids[4][2][FLEET_JOB_ID_MAX + 1];

static void on_phase_enqueue(fleet_queue_t *q, int status,
                             const fleet_enqueue_result_t *r, size_t n,
                             void *ud) {
  int call = (int)(intptr_t)ud;
  size_t i;

  ASSERT_OK(status);
  ASSERT_EQ(call == 0 ? 2 : 1, n);
  for (i = 0; i < n; i++) {
    phase_status[call][i] = r[i].status;
    snprintf(phase_ids[call][i], sizeof(phase_ids[call][i]), "%s", r[i].id);
  }
  phase_heard++;
}

/* The enqueues of one loop phase go out as one script call, and each
 * callback gets its own results: an id that exists, a unique key taken
 * by an earlier enqueue of the same call. */
TEST_IMPL(queue_redis_enqueue_phase) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_job_spec_t a[2], b1, c[2];
  redisReply *info;
  qt_t t;

  qt_open(&t, fleet_test_redis_url(r), "ph", NULL);
  a[0] = spec("t", "p");
  a[0].id = "own-1";
  ASSERT_OK(qt_enqueue(&t, a, 1, NULL, NULL));
  redis_do(r, "CONFIG RESETSTAT");
  a[1] = spec("t", "p");
  b1 = spec("t", "p");
  b1.unique_key = "u";
  b1.unique_ttl_ms = 60000;
  c[0] = b1;
  c[1] = spec("t", "p");
  c[1].id = "own-2";
  ASSERT_OK(fleet_queue_enqueue(&t.q, &a[1], 1, on_phase_enqueue,
                                (void *)(intptr_t)3));
  ASSERT_OK(fleet_queue_enqueue(&t.q, &a[0], 1, on_phase_enqueue,
                                (void *)(intptr_t)1));
  ASSERT_OK(
      fleet_queue_enqueue(&t.q, &b1, 1, on_phase_enqueue, (void *)(intptr_t)2));
  ASSERT_OK(
      fleet_queue_enqueue(&t.q, c, 2, on_phase_enqueue, (void *)(intptr_t)0));
  ASSERT(fleet_test_wait_count(&t.c.loop, &phase_heard, 4,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_ERR(FLEET_EEXIST, phase_status[0][0]);
  ASSERT_OK(phase_status[0][1]);
  ASSERT_STR_EQ(phase_ids[2][0], phase_ids[0][0]);
  ASSERT_STR_EQ("own-2", phase_ids[0][1]);
  ASSERT_ERR(FLEET_EEXIST, phase_status[1][0]);
  ASSERT_STR_EQ("own-1", phase_ids[1][0]);
  ASSERT_OK(phase_status[2][0]);
  ASSERT_OK(phase_status[3][0]);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(4, t.counts.pending);
  info = fleet_test_redis_cmd(r, "INFO commandstats");
  ASSERT_NOT_NULL(info);
  /* One call for the four enqueues, one for the counts (both FCALL, the
   * scripts' functions being loaded). */
  ASSERT_NOT_NULL(strstr(info->str, "cmdstat_fcall:calls=2,"));
  freeReplyObject(info);
  qt_close(&t);
  fleet_test_redis_free(r);
  return 0;
}
