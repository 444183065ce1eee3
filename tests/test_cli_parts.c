/* test_cli_parts.c -- `fleet queue create Q --partitions P`, and the queue
 * verbs on a partitioned queue (docs/queue.md, "Partitioned queues"):
 * they read the count first and treat the partitions as one queue, up to
 * `fleet queue remove`. */
#include <string.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

TEST_IMPL(cli_queue_parts) {
  char ids[40][FLEET_JOB_ID_MAX + 1];
  fleet_test_redis_t *redis;
  fleet_queue_options_t o;
  fleet_job_spec_t s[40];
  const char *url, *gen = NULL;
  int st[40];
  cli_run_t r;
  qt_t t;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);

  /* Recorded once; another count is refused, saying the one recorded. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "create", "pq", "--partitions", "4"));
  ASSERT_NOT_NULL(strstr(r.out, "partitions: 4"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "create", "pq", "--partitions", "4"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "queue", "create", "pq",
                   "--partitions", "8"));
  ASSERT_EQ(1, r.status);
  ASSERT_NOT_NULL(strstr(r.err, "FLEET_ECONFLICT"));
  ASSERT_NOT_NULL(strstr(r.err, "4 partitions"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "queue", "create", "pq",
                   "--partitions", "0"));
  ASSERT_EQ(2, r.status);
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "queue", "create", "pq"));
  ASSERT_EQ(2, r.status);

  /* 40 jobs, round-robin: 10 in each partition. */
  fleet_queue_options_init(&o);
  o.partitions = 4;
  qt_open(&t, url, "pq", &o);
  for (int i = 0; i < 40; i++)
    fleet_job_spec_init(&s[i], "t", "p", 1);
  ASSERT_OK(qt_enqueue(&t, s, 40, st, ids));
  for (int i = 0; i < 40 && gen == NULL; i++)
    if (strchr(ids[i], '~') != NULL)
      gen = ids[i];
  ASSERT_NOT_NULL(gen);

  /* stats: the partitions added up; one partition's own queue: its
   * part. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", "pq"));
  ASSERT_NOT_NULL(strstr(r.out, "pending:          40\n"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", "pq~2"));
  ASSERT_NOT_NULL(strstr(r.out, "pending:          10\n"));
  /* watch: the same counts. */
  cli_run_ok(&r, url, "qt", ARGS("watch", "queue", "pq", "--count", "1"));
  ASSERT_NOT_NULL(strstr(r.out, "  pending    40\n"));
  /* ls: one row, the partitions added up. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "ls", "--json"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"queue\":\"pq\",\"pending\":40,"));
  ASSERT_NULL(strstr(r.out, "\"pq~"));
  /* jobs: the total of every partition, the cursor walks them. */
  cli_run_ok(&r, url, "qt",
             ARGS("queue", "jobs", "pq", "--state", "pending", "--limit", "5"));
  ASSERT(strstr(r.out, "40 pending job(s) in pq") != NULL ||
         strstr(r.err, "40 pending job(s) in pq") != NULL);
  /* get: a generated id says its partition. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "get", "pq", gen));
  ASSERT_NOT_NULL(strstr(r.out, "pending"));
  /* pause: every partition. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "pause", "pq"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", "pq~3"));
  ASSERT_NOT_NULL(strstr(r.out, "paused:           true"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "resume", "pq"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", "pq~3"));
  ASSERT_NOT_NULL(strstr(r.out, "paused:           false"));
  qt_close(&t);

  /* A partitioned queue whose partition 0 holds no job (2 jobs in
   * partition 3, through its own queue's plain handle), and one with no
   * job at all: each is found by its count, one row of ls, one queue of
   * the exporter, and a queue the verbs know. */
  cli_run_ok(&r, url, "qt",
             ARGS("queue", "create", "solo", "--partitions", "4"));
  cli_run_ok(&r, url, "qt",
             ARGS("queue", "create", "empty", "--partitions", "4"));
  qt_open(&t, url, "solo~3", NULL);
  ASSERT_OK(qt_enqueue(&t, s, 2, st, ids));
  qt_close(&t);
  cli_run_ok(&r, url, "qt", ARGS("queue", "ls", "--json"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"queue\":\"solo\",\"pending\":2,"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"queue\":\"empty\",\"pending\":0,"));
  ASSERT_NULL(strstr(r.out, "\"solo~"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", "solo"));
  ASSERT_NOT_NULL(strstr(r.out, "pending:          2\n"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", "empty"));
  ASSERT_NOT_NULL(strstr(r.out, "pending:          0\n"));
  cli_run_ok(&r, url, "qt", ARGS("metrics", "--once"));
  ASSERT_NOT_NULL(
      strstr(r.out, "fleet_queue_jobs{name=\"solo\",state=\"pending\"} 2\n"));
  ASSERT_NOT_NULL(
      strstr(r.out, "fleet_queue_jobs{name=\"pq\",state=\"pending\"} 40\n"));
  ASSERT_NOT_NULL(
      strstr(r.out, "fleet_queue_jobs{name=\"empty\",state=\"pending\"} 0\n"));
  ASSERT_NULL(strstr(r.out, "name=\"solo~"));
  ASSERT_NULL(strstr(r.out, "name=\"pq~"));

  /* remove: the whole partitioned queue. Refused with jobs in any
   * partition (solo's are all in partition 3), nothing removed; forced,
   * every partition and the count go, and ls no longer lists it; an
   * empty one goes without force. */
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "queue", "remove", "solo"));
  ASSERT_EQ(1, r.status);
  ASSERT_NOT_NULL(strstr(r.err, "--force"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "queue", "remove", "pq"));
  ASSERT_EQ(1, r.status);
  cli_run_ok(&r, url, "qt", ARGS("queue", "ls", "--json"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"queue\":\"solo\",\"pending\":2,"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"queue\":\"pq\",\"pending\":40,"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", "pq~2"));
  ASSERT_NOT_NULL(strstr(r.out, "pending:          10\n"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "remove", "pq", "--force"));
  ASSERT_NOT_NULL(strstr(r.out, "removed queue pq:"));
  ASSERT_NOT_NULL(strstr(r.out, "40 unfinished job(s)"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "remove", "solo", "--force"));
  ASSERT_NOT_NULL(strstr(r.out, "2 unfinished job(s)"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "remove", "empty"));
  ASSERT_NOT_NULL(strstr(r.out, "removed queue empty: 1 keys, 0 unfinished"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "ls", "--json"));
  ASSERT_NULL(strstr(r.out, "\"pq"));
  ASSERT_NULL(strstr(r.out, "\"solo"));
  ASSERT_NULL(strstr(r.out, "\"empty"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "queue", "stats", "pq~2"));
  ASSERT_EQ(1, r.status);
  ASSERT_NOT_NULL(strstr(r.err, "no such queue: pq~2"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "queue", "remove", "pq"));
  ASSERT_EQ(1, r.status);
  ASSERT_NOT_NULL(strstr(r.err, "no queue pq"));
  /* The count is gone too: the name takes another one. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "create", "pq", "--partitions", "8"));
  ASSERT_NOT_NULL(strstr(r.out, "partitions: 8"));
  fleet_test_redis_free(redis);
  return 0;
}
