/* test_queue_perf.c -- what the queue's fast paths must keep exact on
 * Redis: the claim script spells each token's decimal digit by digit
 * (across every carry), returns the stored record for the client to
 * split, and keeps the per-job hashes hash tables with a mark that no
 * reader may count. */
#include <string.h>

#include "test_queue_util.h"

/* Runs a Redis command and returns its reply, which must not be an
 * error; the caller frees it. */
static redisReply *perf_cmd(fleet_test_redis_t *r, const char *fmt,
                            const char *a, const char *b, size_t blen) {
  redisReply *reply = fleet_test_redis_cmd(r, fmt, a, b, blen);
  ASSERT_NOT_NULL(reply);
  ASSERT_NE(REDIS_REPLY_ERROR, reply->type);
  return reply;
}

/* Claims 6 jobs with the fence at `start`: the tokens follow it one by
 * one, the claims hash holds each token's decimal exactly, and every
 * completion presenting the token is accepted. */
static void perf_tokens_from(fleet_test_redis_t *r, qt_t *t, uint64_t start) {
  char num[32];
  fleet_claim_t claims[6];
  qt_job_t jobs[6];
  redisReply *reply;
  int res[6], i;

  snprintf(num, sizeof(num), "%llu", (unsigned long long)start);
  freeReplyObject(perf_cmd(r, "SET {qt:dg}:fence %s", num, NULL, 0));
  for (i = 0; i < 6; i++)
    qt_add(t, "t", "p", NULL);
  ASSERT_EQ(6, qt_claim(t, 6, 60000, jobs));
  for (i = 0; i < 6; i++) {
    ASSERT_UEQ(start + 1 + (uint64_t)i, jobs[i].token);
    reply = perf_cmd(r, "HGET {qt:dg}:claims %s", jobs[i].id, NULL, 0);
    ASSERT_EQ(REDIS_REPLY_STRING, reply->type);
    snprintf(num, sizeof(num), "%llu", (unsigned long long)jobs[i].token);
    /* "<token>\0<attempt>\0<deadline>" */
    ASSERT(reply->len > strlen(num) + 3);
    ASSERT_EQ(0, memcmp(reply->str, num, strlen(num)));
    ASSERT_EQ('\0', reply->str[strlen(num)]);
    ASSERT_EQ('1', reply->str[strlen(num) + 1]);
    freeReplyObject(reply);
    claims[i] = qt_claim_of(&jobs[i]);
  }
  ASSERT_OK(qt_complete(t, claims, 6, res));
  for (i = 0; i < 6; i++)
    ASSERT_OK(res[i]);
}

TEST_IMPL(queue_redis_claim_fast_paths) {
  static const char rec[] = "2\0007\0001\0typ\0a\0b";
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_claim_t claim;
  redisReply *reply;
  qt_job_t jobs[2];
  int res[1];
  qt_t t;

  qt_open(&t, fleet_test_redis_url(r), "dg", NULL);
  /* Below 1000 (formatted whole), across 999 -> 1000, and across the
   * carry of every digit: 99999 -> 100000. */
  perf_tokens_from(r, &t, 0);
  perf_tokens_from(r, &t, 996);
  perf_tokens_from(r, &t, 99997);
  perf_tokens_from(r, &t, 123456789012ull);

  /* A record with attempts, max_attempts and a payload holding a NUL:
   * the client splits it, the claim's attempt is one more. */
  qt_add(&t, "t", "p", NULL);
  reply =
      fleet_test_redis_cmd(r, "HSET {qt:dg}:jobs 30 %b", rec, sizeof(rec) - 1);
  ASSERT_NOT_NULL(reply);
  ASSERT_NE(REDIS_REPLY_ERROR, reply->type);
  freeReplyObject(reply);
  reply = perf_cmd(r, "LSET {qt:dg}:pending 0 %s", "30", NULL, 0);
  freeReplyObject(reply);
  ASSERT_EQ(1, qt_claim(&t, 2, 60000, jobs));
  ASSERT_STR_EQ("30", jobs[0].id);
  ASSERT_STR_EQ("typ", jobs[0].type);
  ASSERT_UEQ(3, jobs[0].payload_len);
  ASSERT_EQ(0, memcmp("a\0b", jobs[0].payload, 3));
  ASSERT_EQ(3, jobs[0].attempts);
  ASSERT_EQ(7, jobs[0].max_attempts);
  ASSERT_UEQ(0, t.claim_info.pending);

  /* The hashes are hash tables, and the mark is no claim: one job runs,
   * and recovery finds nothing to do. */
  reply = perf_cmd(r, "OBJECT ENCODING {qt:dg}:claims", NULL, NULL, 0);
  ASSERT_STR_EQ("hashtable", reply->str);
  freeReplyObject(reply);
  reply = perf_cmd(r, "OBJECT ENCODING {qt:dg}:jobs", NULL, NULL, 0);
  ASSERT_STR_EQ("hashtable", reply->str);
  freeReplyObject(reply);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.running);
  ASSERT_UEQ(24, t.counts.completed);
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(0, t.recover_info.requeued);
  ASSERT_UEQ(0, t.recover_info.dead);
  claim = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &claim, 1, res));
  ASSERT_OK(res[0]);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.running);
  qt_close(&t);
  fleet_test_redis_free(r);
  return 0;
}
