/* test_queue_errs.c -- a job's attempt history (lib/queue_errs.lua,
 * src/queue/queue_errs.c; docs/queue.md, "Attempt history"), on both
 * backends: what fleet_queue_get() reads of it after failures, timeouts,
 * cancels and expired claims, its bounds, and, where the test has a Redis
 * of its own, that every path that deletes a job's info deletes its
 * history too and that a history fleet cannot read fails nothing. */
#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "test.h"
#include "test_queue_util.h"

/* One entry of a history, copied out. */
typedef struct {
  uint32_t attempt;
  uint64_t time_ms;
  char err[FLEET_JOB_ERROR_KEPT_MAX + 1];
  size_t len;
} ee_entry_t;

/* Reads job `id` into `info` and its history into `out` (room for
 * `cap`); returns the number of entries, which nerrors must match. */
static size_t ee_get(qt_t *t, const char *id, fleet_job_info_t *info,
                     ee_entry_t *out, size_t cap) {
  size_t cursor = 0, n = 0, len;
  const char *err;

  ASSERT_OK(qt_get(t, id, info, NULL, 0, NULL, 0));
  while (n < cap && fleet_job_info_error_next(info, &cursor, &out[n].attempt,
                                              &out[n].time_ms, &err, &len)) {
    ASSERT_LE(len, FLEET_JOB_ERROR_KEPT_MAX);
    memcpy(out[n].err, err, len);
    out[n].err[len] = '\0';
    out[n].len = len;
    n++;
  }
  ASSERT_EQ(0,
            fleet_job_info_error_next(info, &cursor, NULL, NULL, NULL, NULL));
  ASSERT_UEQ(n, info->nerrors);
  return n;
}

static void ee_on_fail(fleet_queue_t *q, int status, int dead,
                       uint64_t retry_at_ms, void *ud) {
  qt_t *t = q->data;

  (void)ud;
  (void)retry_at_ms;
  t->status = status;
  t->dead = dead;
  t->done = 1;
}

/* Fails `claim` with the `len` bytes of `err` (binary). */
static void ee_fail(qt_t *t, const fleet_claim_t *claim, const char *err,
                    size_t len) {
  t->done = 0;
  ASSERT_OK(fleet_queue_fail(&t->q, claim, err, len, ee_on_fail, NULL));
  qt_wait(t);
  ASSERT_OK(t->status);
}

static void ee_on_verb(fleet_queue_t *q, int status, fleet_job_state_t was,
                       void *ud) {
  qt_t *t = q->data;

  (void)ud;
  (void)was;
  t->status = status;
  t->done = 1;
}

/* Enqueues a job of `max` attempts retried 1 ms after a failure. */
static void ee_add(qt_t *t, uint32_t max, char *id) {
  fleet_job_spec_t s;
  char ids[1][FLEET_JOB_ID_MAX + 1];
  int st;

  fleet_job_spec_init(&s, "e", "x", 1);
  s.max_attempts = max;
  s.backoff = FLEET_BACKOFF_FIXED;
  s.backoff_ms = 1;
  s.backoff_jitter_pct = 0;
  ASSERT_OK(qt_enqueue(t, &s, 1, &st, ids));
  ASSERT_OK(st);
  strcpy(id, ids[0]);
}

/* Claims job `id` (its retry due within a few ms). */
static fleet_claim_t ee_claim(qt_t *t, const char *id, uint32_t ttl_ms,
                              qt_job_t *job) {
  int i, n = 0;

  for (i = 0; i < 200 && n == 0; i++) {
    n = qt_claim(t, 1, ttl_ms, job);
    ASSERT(n >= 0);
    if (n == 0)
      qt_sleep(t, 5);
  }
  ASSERT_EQ(1, n);
  ASSERT_STR_EQ(id, job->id);
  return qt_claim_of(job);
}

/* With a Redis of the test's own: asserts that job `id` of queue `name`
 * (prefix "qt") has an info and a history (`kept` 1), or neither. */
static void ee_kept(fleet_test_backend_t *b, const char *name, const char *id,
                    int kept) {
  redisReply *r;

  if (b->redis == NULL)
    return;
  r = fleet_test_redis_cmd(b->redis, "HEXISTS {qt:%s}:errs %s", name, id);
  ASSERT_EQ(kept, (int)r->integer);
  freeReplyObject(r);
  r = fleet_test_redis_cmd(b->redis, "HEXISTS {qt:%s}:info %s", name, id);
  ASSERT_EQ(kept, (int)r->integer);
  freeReplyObject(r);
}

/* Fails job `id` (`max` attempts) `n` times with "e<attempt>". */
static void ee_fail_n(qt_t *t, const char *id, int n) {
  fleet_claim_t c;
  qt_job_t job;
  char err[32];
  int i;

  for (i = 1; i <= n; i++) {
    c = ee_claim(t, id, 60000, &job);
    snprintf(err, sizeof(err), "e%d", i);
    ee_fail(t, &c, err, strlen(err));
  }
}

/* Three failures of a job of three attempts: three entries, attempts 1 to
 * 3, each with its error byte for byte (a newline, a NUL); the last one is
 * also last_error. Twelve failures keep the last ten; long errors are cut
 * and the oldest entries go past 8 KiB. A retried dead job keeps its
 * history and goes on from attempt 1. */
CONFORMANCE_IMPL(queue_errs_history) {
  static const char e2[] = "line one\nline two";
  static const char e3[] = "nul\0byte: \"x\"";
  char a[FLEET_JOB_ID_MAX + 1], id[FLEET_JOB_ID_MAX + 1];
  static ee_entry_t h[FLEET_JOB_ERRORS_KEPT + 2];
  static char big[2000];
  fleet_job_info_t info;
  fleet_claim_t c;
  uint64_t before;
  qt_job_t job;
  size_t n, i;
  qt_t t;

  qt_open(&t, b->url, "errs-history", NULL);
  ee_add(&t, 3, a);
  ASSERT_UEQ(0, ee_get(&t, a, &info, h, 3));
  ASSERT_NULL(info.errors);
  before = qt_now_ms(&t);

  c = ee_claim(&t, a, 60000, &job);
  ee_fail(&t, &c, "first", 5);
  ASSERT_EQ(0, t.dead);
  ASSERT_UEQ(1, ee_get(&t, a, &info, h, 3));
  ASSERT_UEQ(1, h[0].attempt);
  ASSERT_STR_EQ("first", h[0].err);
  c = ee_claim(&t, a, 60000, &job);
  ee_fail(&t, &c, e2, sizeof(e2) - 1);
  c = ee_claim(&t, a, 60000, &job);
  ee_fail(&t, &c, e3, sizeof(e3) - 1);
  ASSERT_EQ(1, t.dead);

  n = ee_get(&t, a, &info, h, 4);
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_UEQ(3, n);
  for (i = 0; i < 3; i++) {
    ASSERT_UEQ(i + 1, h[i].attempt);
    ASSERT(h[i].time_ms >= before);
    ASSERT(h[i].time_ms <= qt_now_ms(&t));
    if (i > 0)
      ASSERT(h[i].time_ms >= h[i - 1].time_ms);
  }
  ASSERT_UEQ(5, h[0].len);
  ASSERT_UEQ(sizeof(e2) - 1, h[1].len);
  ASSERT_EQ(0, memcmp(e2, h[1].err, sizeof(e2) - 1));
  ASSERT_UEQ(sizeof(e3) - 1, h[2].len);
  ASSERT_EQ(0, memcmp(e3, h[2].err, sizeof(e3) - 1));
  ASSERT_UEQ(sizeof(e3) - 1, info.last_error_len);
  ee_kept(b, "errs-history", a, 1);

  /* Run again: the history stays, and the next failure is attempt 1. */
  ASSERT_OK(qt_retry(&t, a));
  ASSERT_UEQ(1, t.removed);
  ASSERT_UEQ(3, ee_get(&t, a, &info, h, 4));
  c = ee_claim(&t, a, 60000, &job);
  ee_fail(&t, &c, "again", 5);
  ASSERT_UEQ(4, ee_get(&t, a, &info, h, 5));
  ASSERT_UEQ(3, h[2].attempt);
  ASSERT_UEQ(1, h[3].attempt);
  ASSERT_STR_EQ("again", h[3].err);

  /* A history fleet cannot read (only a foreign write leaves one) is
   * none, and the next failure starts it again; a T:errs of another type
   * fails neither the failure nor the get. */
  if (b->redis != NULL) {
    static const char *const bad[] = {"garbage", "1:5:10:abc",
                                      "1:5:3:abc:", "x:5:3:abc"};
    redisReply *r;

    for (i = 0; i < 4; i++) {
      r = fleet_test_redis_cmd(b->redis, "HSET {qt:errs-history}:errs %s %s", a,
                               bad[i]);
      freeReplyObject(r);
      ASSERT_UEQ(0, ee_get(&t, a, &info, h, 4));
      ASSERT_NULL(info.errors);
      ASSERT_UEQ(0, info.errors_len);
    }
    c = ee_claim(&t, a, 60000, &job);
    ee_fail(&t, &c, "fresh", 5);
    ASSERT_UEQ(1, ee_get(&t, a, &info, h, 4));
    ASSERT_UEQ(2, h[0].attempt);
    ASSERT_STR_EQ("fresh", h[0].err);
    freeReplyObject(
        fleet_test_redis_cmd(b->redis, "DEL {qt:errs-history}:errs"));
    freeReplyObject(
        fleet_test_redis_cmd(b->redis, "SET {qt:errs-history}:errs x"));
    c = ee_claim(&t, a, 60000, &job);
    ee_fail(&t, &c, "last", 4);
    ASSERT_EQ(1, t.dead);
    ASSERT_UEQ(0, ee_get(&t, a, &info, h, 4));
    ASSERT_EQ(FLEET_JOB_DEAD, info.state);
    ASSERT_UEQ(4, info.last_error_len);
    freeReplyObject(
        fleet_test_redis_cmd(b->redis, "DEL {qt:errs-history}:errs"));
  }

  qt_close(&t);

  /* Twelve failures: the last ten, attempts 3 to 12. */
  qt_open(&t, b->url, "errs-bounds", NULL);
  ee_add(&t, 12, id);
  ee_fail_n(&t, id, 12);
  ASSERT_EQ(1, t.dead);
  n = ee_get(&t, id, &info, h, FLEET_JOB_ERRORS_KEPT + 2);
  ASSERT_UEQ(FLEET_JOB_ERRORS_KEPT, n);
  for (i = 0; i < n; i++) {
    char want[32];

    snprintf(want, sizeof(want), "e%u", (unsigned)(i + 3));
    ASSERT_UEQ(i + 3, h[i].attempt);
    ASSERT_STR_EQ(want, h[i].err);
  }

  /* Long errors: each cut to FLEET_JOB_ERROR_KEPT_MAX bytes (last_error
   * keeps it whole), and no more than 8 KiB of entries: fewer than ten,
   * the newest ones. */
  memset(big, 'x', sizeof(big));
  ee_add(&t, 10, id);
  for (i = 1; i <= 10; i++) {
    c = ee_claim(&t, id, 60000, &job);
    big[0] = (char)('0' + i % 10);
    ee_fail(&t, &c, big, sizeof(big));
  }
  n = ee_get(&t, id, &info, h, FLEET_JOB_ERRORS_KEPT + 2);
  ASSERT_UEQ(sizeof(big), info.last_error_len);
  ASSERT(info.errors_len <= 8192);
  ASSERT(n >= 5 && n < 10);
  for (i = 0; i < n; i++) {
    ASSERT_UEQ(10 - n + 1 + i, h[i].attempt);
    ASSERT_UEQ(FLEET_JOB_ERROR_KEPT_MAX, h[i].len);
    ASSERT_EQ('0' + (int)h[i].attempt % 10, h[i].err[0]);
  }
  qt_close(&t);
}

/* The other failures: a claim that expired ("claim expired", from
 * recovery), a run past its timeout ("timed out after <ms> ms"), a
 * running job cancelled ("cancelled"). */
CONFORMANCE_IMPL(queue_errs_paths) {
  static ee_entry_t h[4];
  char a[FLEET_JOB_ID_MAX + 1], want[64];
  fleet_job_info_t info;
  fleet_job_spec_t s;
  fleet_claim_t c;
  qt_job_t job;
  char ids[1][FLEET_JOB_ID_MAX + 1];
  int st, res[1];
  qt_t t;

  qt_open(&t, b->url, "errs-paths", NULL);
  /* Expired, then expired on its last attempt: dead. */
  ee_add(&t, 2, a);
  ee_claim(&t, a, 50, &job);
  qt_sleep(&t, 80);
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.requeued);
  ee_claim(&t, a, 50, &job);
  qt_sleep(&t, 80);
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.dead);
  ASSERT_UEQ(2, ee_get(&t, a, &info, h, 4));
  ASSERT_UEQ(1, h[0].attempt);
  ASSERT_STR_EQ("claim expired", h[0].err);
  ASSERT_UEQ(2, h[1].attempt);
  ASSERT_STR_EQ("claim expired", h[1].err);

  /* Past its timeout: the completion fails it (retried), then its failure
   * is the timeout's too. */
  fleet_job_spec_init(&s, "e", "x", 1);
  s.timeout_ms = (uint32_t)fleet_test_ms(30);
  s.backoff = FLEET_BACKOFF_FIXED;
  s.backoff_ms = 1;
  s.backoff_jitter_pct = 0;
  ASSERT_OK(qt_enqueue(&t, &s, 1, &st, ids));
  c = ee_claim(&t, ids[0], 60000, &job);
  qt_sleep(&t, fleet_test_ms(30) + 20);
  ASSERT_OK(qt_complete(&t, &c, 1, res));
  ASSERT_ERR(FLEET_ETIMEDOUT, res[0]);
  c = ee_claim(&t, ids[0], 60000, &job);
  qt_sleep(&t, fleet_test_ms(30) + 20);
  ee_fail(&t, &c, "late", 4);
  snprintf(want, sizeof(want), "timed out after %u ms", s.timeout_ms);
  ASSERT_UEQ(2, ee_get(&t, ids[0], &info, h, 4));
  ASSERT_UEQ(1, h[0].attempt);
  ASSERT_STR_EQ(want, h[0].err);
  ASSERT_UEQ(2, h[1].attempt);
  ASSERT_STR_EQ(want, h[1].err);

  /* Cancelled while it ran: its end is the attempt's "cancelled". */
  ee_add(&t, 3, a);
  c = ee_claim(&t, a, 60000, &job);
  ASSERT_OK(qt_cancel_job(&t, a, 60000));
  ASSERT_EQ(FLEET_CANCEL_REQUESTED, t.cancel_result);
  ASSERT_OK(qt_complete(&t, &c, 1, res));
  ASSERT_ERR(FLEET_ECANCELED, res[0]);
  ASSERT_UEQ(1, ee_get(&t, a, &info, h, 4));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_UEQ(1, h[0].attempt);
  ASSERT_STR_EQ("cancelled", h[0].err);
  qt_close(&t);
}

/* Where a job's info goes, its history goes: a completion without
 * completed-job history, the trim of kept completed and dead jobs, purge,
 * delete and cancel. A queue whose jobs never failed has no history at
 * all. */
CONFORMANCE_IMPL(queue_errs_gone) {
  static const char q[] = "errs-gone";
  static ee_entry_t h[4];
  char a[FLEET_JOB_ID_MAX + 1], d[FLEET_JOB_ID_MAX + 1];
  char x[FLEET_JOB_ID_MAX + 1];
  fleet_queue_options_t o;
  fleet_job_info_t info;
  fleet_job_spec_t s;
  fleet_claim_t c;
  qt_job_t job;
  int i, st;
  qt_t t, k;

  qt_open(&t, b->url, q, NULL);
  /* Plain jobs: no history written. */
  for (i = 0; i < 3; i++) {
    qt_add(&t, "p", "x", x);
    c = ee_claim(&t, x, 60000, &job);
    ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  }
  if (b->redis != NULL) {
    redisReply *r = fleet_test_redis_cmd(b->redis, "EXISTS {qt:%s}:errs", q);
    ASSERT_EQ(0, (int)r->integer);
    freeReplyObject(r);
  }
  /* Failed once, then completed (none kept): nothing left. */
  ee_add(&t, 3, a);
  ee_fail_n(&t, a, 1);
  ee_kept(b, q, a, 1);
  c = ee_claim(&t, a, 60000, &job);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, a, &info, NULL, 0, NULL, 0));
  ee_kept(b, q, a, 0);

  /* Dead, purged. */
  ee_add(&t, 1, d);
  ee_fail_n(&t, d, 1);
  ee_kept(b, q, d, 1);
  ASSERT_OK(qt_purge(&t, FLEET_JOB_DEAD));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, d, &info, NULL, 0, NULL, 0));
  ee_kept(b, q, d, 0);

  /* Failed once, waiting for its retry an hour away: cancelled. */
  fleet_job_spec_init(&s, "e", "x", 1);
  s.backoff = FLEET_BACKOFF_FIXED;
  s.backoff_ms = 3600000;
  s.backoff_jitter_pct = 0;
  {
    char ids[1][FLEET_JOB_ID_MAX + 1];

    ASSERT_OK(qt_enqueue(&t, &s, 1, &st, ids));
    strcpy(x, ids[0]);
  }
  c = ee_claim(&t, x, 60000, &job);
  ee_fail(&t, &c, "later", 5);
  ASSERT_UEQ(1, ee_get(&t, x, &info, h, 4));
  ASSERT_EQ(FLEET_JOB_DELAYED, info.state);
  ASSERT_OK(qt_cancel(&t, x));
  ee_kept(b, q, x, 0);

  /* Dead, deleted. */
  ee_add(&t, 1, d);
  ee_fail_n(&t, d, 1);
  ee_kept(b, q, d, 1);
  t.done = 0;
  ASSERT_OK(fleet_queue_delete_job(&t.q, d, ee_on_verb, NULL));
  qt_wait(&t);
  ASSERT_OK(t.status);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, d, &info, NULL, 0, NULL, 0));
  ee_kept(b, q, d, 0);
  qt_close(&t);

  /* Kept: one completed and one dead job; the older ones trimmed, their
   * histories with them; a kept completed job shows its failures. */
  fleet_queue_options_init(&o);
  o.keep_completed = 1;
  o.keep_dead = 1;
  qt_open(&k, b->url, "errs-trim", &o);
  ee_add(&k, 3, a);
  ee_fail_n(&k, a, 1);
  c = ee_claim(&k, a, 60000, &job);
  ASSERT_OK(qt_complete(&k, &c, 1, NULL));
  ASSERT_UEQ(1, ee_get(&k, a, &info, h, 4));
  ASSERT_EQ(FLEET_JOB_COMPLETED, info.state);
  ASSERT_STR_EQ("e1", h[0].err);
  ee_add(&k, 3, x);
  ee_fail_n(&k, x, 1);
  c = ee_claim(&k, x, 60000, &job);
  ASSERT_OK(qt_complete(&k, &c, 1, NULL));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&k, a, &info, NULL, 0, NULL, 0));
  ee_kept(b, "errs-trim", a, 0);
  ee_kept(b, "errs-trim", x, 1);
  ee_add(&k, 1, a);
  ee_fail_n(&k, a, 1);
  ee_add(&k, 1, d);
  ee_fail_n(&k, d, 1);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&k, a, &info, NULL, 0, NULL, 0));
  ee_kept(b, "errs-trim", a, 0);
  ee_kept(b, "errs-trim", d, 1);
  qt_close(&k);
}
