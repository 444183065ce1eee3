/* test_cli_life.c -- `fleet queue get` with a job's result and progress,
 * and `fleet queue events`, run as a user runs them against a real
 * redis-server whose jobs the test makes through the library. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

/* Waits until `n` clients subscribe to the events of queue `q` (prefix
 * "qt"). */
static void life_wait_subscribers(fleet_test_redis_t *redis, const char *q,
                                  long long n) {
  uint64_t deadline = uv_hrtime() / 1000000 + fleet_test_ms(FLEET_TEST_WAIT_MS);
  redisReply *r;
  long long got;

  for (;;) {
    r = fleet_test_redis_cmd(redis, "PUBSUB NUMSUB {qt:%s}:events", q);
    ASSERT_NOT_NULL(r);
    ASSERT_EQ(REDIS_REPLY_ARRAY, r->type);
    ASSERT_EQ(2, r->elements);
    got = r->element[1]->integer;
    freeReplyObject(r);
    if (got >= n)
      return;
    ASSERT(uv_hrtime() / 1000000 < deadline);
    usleep(10000);
  }
}

/* Waits until the events lease of queue `q` (prefix "qt") is held: the
 * subscriber listens. */
static void life_wait_lease(fleet_test_redis_t *redis, const char *q) {
  uint64_t deadline = uv_hrtime() / 1000000 + fleet_test_ms(FLEET_TEST_WAIT_MS);
  redisReply *r;

  for (;;) {
    r = fleet_test_redis_cmd(redis, "HGET {qt:%s}:limits events", q);
    ASSERT_NOT_NULL(r);
    if (r->type == REDIS_REPLY_STRING) {
      freeReplyObject(r);
      return;
    }
    freeReplyObject(r);
    ASSERT(uv_hrtime() / 1000000 < deadline);
    usleep(10000);
  }
}

TEST_IMPL(cli_queue_life) {
  fleet_test_redis_t *redis;
  fleet_claim_t c[2];
  fleet_bytes_t res;
  qt_job_t a, b;
  cli_run_t *r = calloc(1, sizeof(*r));
  const char *url;
  pid_t all, one;
  qt_t t;
  int out[1];

  ASSERT_NOT_NULL(r);
  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  qt_open(&t, url, "life", NULL);

  /* Two subscribers: the queue's (two events), and job b's (one). */
  all = cli_spawn(ARGS("--url", url, "--prefix", "qt", "queue", "events",
                       "life", "--count", "3"),
                  "life-all");
  one = cli_spawn(ARGS("--url", url, "--prefix", "qt", "--json", "queue",
                       "events", "life", "--job", "", "--count", "1"),
                  "life-bad");
  cli_reap_within(one, "life-bad", r, 10000);
  ASSERT_EQ(2, r->status);
  ASSERT_NOT_NULL(strstr(r->err, "--job"));
  life_wait_lease(redis, "life");

  qt_add(&t, "t", "x", NULL);
  qt_add(&t, "t", "y", NULL);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &a));
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &b));
  one = cli_spawn(ARGS("--url", url, "--prefix", "qt", "--json", "queue",
                       "events", "life", "--job", b.id, "--count", "1"),
                  "life-one");
  c[0] = qt_claim_of(&a);
  c[1] = qt_claim_of(&b);
  ASSERT_OK(qt_progress(&t, &c[0], 50, "half", 4));
  life_wait_subscribers(redis, "life", 2);
  res.base = "done:a";
  res.len = 6;
  ASSERT_OK(qt_complete_results(&t, &c[0], &res, 1, out));
  ASSERT_OK(out[0]);
  res.base = "r\xc3\xa9sultat";
  res.len = strlen(res.base);
  ASSERT_OK(qt_complete_results(&t, &c[1], &res, 1, out));
  ASSERT_OK(out[0]);

  /* The queue's events, one line each: time, type, id, value, data. */
  cli_reap_within(all, "life-all", r, 10000);
  ASSERT_EQ(0, r->status);
  ASSERT_EQ(3, cli_lines(r->out));
  {
    char want[FLEET_JOB_ID_MAX + 32];

    snprintf(want, sizeof(want), " progress %s 50 half\n", a.id);
    ASSERT_NOT_NULL(strstr(r->out, want));
    snprintf(want, sizeof(want), " completed %s 1 done:a\n", a.id);
    ASSERT_NOT_NULL(strstr(r->out, want));
    ASSERT(strstr(r->out, " progress ") < strstr(r->out, " completed "));
  }
  ASSERT_NOT_NULL(strstr(r->err, "listening to the events of queue life"));
  /* Each line begins with its time, UTC ISO-8601. */
  ASSERT_EQ(0, strncmp(r->out, "20", 2));
  ASSERT_EQ('T', r->out[10]);
  ASSERT_EQ(0, strncmp(r->out + 23, "Z progress ", 11));
  /* One job's, as JSON. */
  cli_reap_within(one, "life-one", r, 10000);
  ASSERT_EQ(0, r->status);
  ASSERT_EQ(1, cli_lines(r->out));
  ASSERT_NOT_NULL(strstr(r->out, "{\"type\":\"completed\",\"id\":\""));
  ASSERT_NOT_NULL(strstr(r->out, "\"time\":\"20"));
  ASSERT_NOT_NULL(strstr(r->out, "\"value\":1,\"data\":\"r\xc3\xa9sultat\"}"));

  /* get: the result of a job completed without history, and the last
   * progress. */
  cli_run_ok(r, url, "qt", ARGS("--json", "queue", "get", "life", a.id));
  ASSERT_NOT_NULL(strstr(r->out, "\"state\":\"completed\""));
  ASSERT_NOT_NULL(strstr(r->out, "\"result\":\"done:a\""));
  ASSERT_NOT_NULL(strstr(r->out, "\"progress\":50,\"progress_data\":\"half\""));
  cli_run_ok(r, url, "qt", ARGS("queue", "get", "life", b.id));
  ASSERT_NOT_NULL(strstr(r->out, "result:"));
  ASSERT_NOT_NULL(strstr(r->out, "r\xc3\xa9sultat"));
  ASSERT_NOT_NULL(strstr(r->out, "progress:      null"));

  qt_close(&t);
  fleet_test_redis_free(redis);
  free(r);
  return 0;
}
