/* test_queue_perf.c -- what the queue's fast paths must keep exact on
 * Redis: the claim script spells each token's decimal digit by digit
 * (across every carry), returns the stored record for the client to
 * split, and keeps the per-job hashes hash tables with a mark that no
 * reader may count. */
#include <stdlib.h>
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
  reply = fleet_test_redis_cmd(r, "HSET {qt:dg}:recs:0 30 %b", rec,
                               sizeof(rec) - 1);
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
  reply = perf_cmd(r, "OBJECT ENCODING {qt:dg}:recs:0", NULL, NULL, 0);
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

/* The integer reply of `cmd` (one %s argument). */
static long long perf_int(fleet_test_redis_t *r, const char *cmd,
                          const char *a) {
  redisReply *reply = perf_cmd(r, cmd, a, NULL, 0);
  long long v;
  ASSERT_EQ(REDIS_REPLY_INTEGER, reply->type);
  v = reply->integer;
  freeReplyObject(reply);
  return v;
}

/* Records of generated ids live in chunks of 1000 consecutive ids
 * (T:recs:<id / 1000>), a given id's in T:jobs; a claim across two chunks
 * reads both. A chunk goes with its last job once the sequence has left
 * it, or when the sequence leaves it empty. A generated id
 * whose record is still in T:jobs (queued by a fleet before the chunks)
 * is refused, not dropped. */
TEST_IMPL(queue_redis_record_chunks) {
  static const char good[] = "\0\0001\0t\0x";
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_job_spec_t given;
  fleet_claim_t claims[21];
  fleet_job_info_t info;
  char payload[32], err[256], id[FLEET_JOB_ID_MAX + 1];
  qt_job_t jobs[25];
  int res[21], i, in0 = 0;
  qt_t t;

  qt_open(&t, fleet_test_redis_url(r), "ck", NULL);
  freeReplyObject(perf_cmd(r, "SET {qt:ck}:seq %s", "990", NULL, 0));
  for (i = 0; i < 20; i++) {
    snprintf(payload, sizeof(payload), "p%d", 991 + i);
    qt_add(&t, "t", payload, id);
    ASSERT_EQ(991 + i, atoi(id));
  }
  fleet_job_spec_init(&given, "g", "given", 5);
  given.id = "job-a";
  ASSERT_OK(qt_enqueue(&t, &given, 1, NULL, NULL));
  /* 991..999 and the mark; 1000..1010 and the mark; job-a and the mark. */
  ASSERT_EQ(10, perf_int(r, "HLEN %s", "{qt:ck}:recs:0"));
  ASSERT_EQ(12, perf_int(r, "HLEN %s", "{qt:ck}:recs:1"));
  ASSERT_EQ(1, perf_int(r, "HEXISTS {qt:ck}:jobs %s", "job-a"));
  ASSERT_EQ(0, perf_int(r, "HEXISTS {qt:ck}:jobs %s", "1005"));
  ASSERT_OK(qt_get(&t, "1005", &info, payload, sizeof(payload), NULL, 0));
  ASSERT_EQ(0, memcmp("p1005", payload, 5));

  ASSERT_EQ(21, qt_claim(&t, 25, 60000, jobs));
  for (i = 0; i < 21; i++) {
    if (strcmp(jobs[i].id, "job-a") == 0) {
      ASSERT_STR_EQ("g", jobs[i].type);
    } else {
      /* "p<id>" */
      ASSERT_UEQ(1 + strlen(jobs[i].id), jobs[i].payload_len);
      ASSERT_EQ('p', jobs[i].payload[0]);
      ASSERT_EQ(
          0, memcmp(jobs[i].id, jobs[i].payload + 1, jobs[i].payload_len - 1));
    }
    if (atoi(jobs[i].id) >= 991 && atoi(jobs[i].id) <= 999)
      claims[in0++] = qt_claim_of(&jobs[i]);
  }
  ASSERT_EQ(9, in0);
  /* Chunk 0's jobs done: it goes (the sequence is in chunk 1). */
  ASSERT_OK(qt_complete(&t, claims, 9, res));
  for (i = 0; i < 9; i++)
    ASSERT_OK(res[i]);
  ASSERT_EQ(0, perf_int(r, "EXISTS %s", "{qt:ck}:recs:0"));
  ASSERT_EQ(12, perf_int(r, "HLEN %s", "{qt:ck}:recs:1"));
  for (i = 0, in0 = 0; i < 21; i++)
    if (atoi(jobs[i].id) < 991 || atoi(jobs[i].id) > 999)
      claims[in0++] = qt_claim_of(&jobs[i]);
  ASSERT_OK(qt_complete(&t, claims, 12, res));
  for (i = 0; i < 12; i++)
    ASSERT_OK(res[i]);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(21, t.counts.completed);
  /* Chunk 1, the one enqueues write, stays with its mark only. */
  ASSERT_EQ(1, perf_int(r, "HLEN %s", "{qt:ck}:recs:1"));
  ASSERT_EQ(0, perf_int(r, "HEXISTS {qt:ck}:jobs %s", "job-a"));
  qt_add(&t, "t", "c", id);
  ASSERT_STR_EQ("1012", id); /* (job-a took 1011 of the sequence) */
  ASSERT_OK(qt_cancel(&t, id));
  ASSERT_EQ(1, perf_int(r, "HLEN %s", "{qt:ck}:recs:1"));

  /* A job still running in chunk 1 when the sequence enters chunk 2:
   * chunk 1 goes with it. */
  qt_add(&t, "t", "a", id);
  ASSERT_STR_EQ("1013", id);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  freeReplyObject(perf_cmd(r, "SET {qt:ck}:seq %s", "1999", NULL, 0));
  qt_add(&t, "t", "b", id);
  ASSERT_STR_EQ("2000", id);
  ASSERT_EQ(2, perf_int(r, "HLEN %s", "{qt:ck}:recs:1"));
  claims[0] = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, claims, 1, res));
  ASSERT_OK(res[0]);
  ASSERT_EQ(0, perf_int(r, "EXISTS %s", "{qt:ck}:recs:1"));
  /* An empty chunk 2 goes when the sequence enters chunk 3. */
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  claims[0] = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, claims, 1, res));
  ASSERT_OK(res[0]);
  ASSERT_EQ(1, perf_int(r, "HLEN %s", "{qt:ck}:recs:2"));
  freeReplyObject(perf_cmd(r, "SET {qt:ck}:seq %s", "2999", NULL, 0));
  qt_add(&t, "t", "c", id);
  ASSERT_STR_EQ("3000", id);
  ASSERT_EQ(0, perf_int(r, "EXISTS %s", "{qt:ck}:recs:2"));
  ASSERT_EQ(2, perf_int(r, "HLEN %s", "{qt:ck}:recs:3"));
  ASSERT_OK(qt_cancel(&t, id));

  /* A pending generated id with its record in T:jobs, where an older
   * fleet kept it: moved aside (dead, with the reason), its record the
   * payload of the one it gets in its chunk. */
  freeReplyObject(
      perf_cmd(r, "HSET {qt:ck}:jobs %s %b", "5", good, sizeof(good) - 1));
  freeReplyObject(perf_cmd(r, "RPUSH {qt:ck}:pending %s", "5", NULL, 0));
  ASSERT_EQ(0, qt_claim(&t, 5, 60000, jobs));
  ASSERT_EQ(0, perf_int(r, "LLEN %s", "{qt:ck}:pending"));
  ASSERT_OK(qt_get(&t, "5", &info, payload, sizeof(payload), err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_NOT_NULL(strstr(err, "{qt:ck}:jobs, where fleet before the chunks"));
  ASSERT_EQ(sizeof(good) - 1, info.payload.len);
  ASSERT_MEM_EQ(good, payload, sizeof(good) - 1);
  qt_close(&t);
  fleet_test_redis_free(r);
  return 0;
}
