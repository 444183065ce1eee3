/* test_cli_flow.c -- flow control in the `fleet` CLI, run as a user runs
 * it against a real redis-server: `queue limit` sets, shows and clears
 * the limits (checked through the library's fleet_queue_limits()), bad
 * input exits 2 and changes nothing, `queue stats` shows the limits, the
 * flow state and each group's counts (groups made through the library,
 * names escaped; more groups than one page), `queue hold` and `queue
 * weight` take effect. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

/* What fleet_queue_limits() read. */
typedef struct {
  qt_t *t;
  int status;
  fleet_queue_limits_t l;
  fleet_queue_flow_t f;
} lim_t;

static void on_lim(fleet_queue_t *q, int status, const fleet_queue_limits_t *l,
                   const fleet_queue_flow_t *f, void *ud) {
  lim_t *r = ud;

  (void)q;
  r->status = status;
  if (status == 0) {
    r->l = *l;
    r->f = *f;
  }
  r->t->done = 1;
}

/* Reads the limits of `t`'s queue through the library. */
static void lim_read(qt_t *t, lim_t *r) {
  memset(r, 0, sizeof(*r));
  r->t = t;
  t->done = 0;
  ASSERT_OK(fleet_queue_limits(&t->q, on_lim, r));
  qt_wait(t);
  ASSERT_OK(r->status);
}

/* Enqueues `n` jobs of `group` (NULL: none). */
static void add_group(qt_t *t, const char *group, int n) {
  fleet_job_spec_t s;
  int i, st;

  for (i = 0; i < n; i++) {
    fleet_job_spec_init(&s, "t", "x", 1);
    s.group = group;
    ASSERT_OK(qt_enqueue(t, &s, 1, &st, NULL));
    ASSERT_OK(st);
  }
}

/* The numbers of the table row of `group` in `out` ("GROUP PENDING
 * RUNNING RATE_USED WEIGHT ..."): 0, or -1 when there is none. */
static int group_row(const char *out, const char *group, long *pending,
                     long *running, long *weight) {
  char pat[256];
  const char *p;
  long used;

  snprintf(pat, sizeof(pat), "\n%s ", group);
  p = strstr(out, pat);
  if (p == NULL)
    return -1;
  p += strlen(pat);
  return sscanf(p, "%ld %ld %ld %ld", pending, running, &used, weight) == 4
             ? 0
             : -1;
}

TEST_IMPL(cli_queue_flow) {
  static const char *const bad[][4] = {
      {"--rate", "0/1s"},
      {"--rate", "10/0s"},
      {"--rate", "-1/1s"},
      {"--rate", "ten/1s"},
      {"--rate", "100"},
      {"--rate", "10/1"},
      {"--rate", "1000001/1s"},
      {"--group-rate", "5/25h"},
      {"--group-rate", "5/1.5s"},
      {"--concurrency", "0"},
      {"--group-concurrency", "-1"},
      {"--group-turn", "0"},
      {"--group-turn", "1001"},
      {"--frob", "1"},
      {"--clear", "--rate", "1/1s"},
      {"--rate", "1/1s", "--rate", "2/1s"},
      {"extra"},
  };
  fleet_test_redis_t *redis;
  char group[FLEET_JOB_GROUP_MAX + 2];
  const char *url;
  fleet_job_spec_t specs[1000];
  char names[1001][8];
  qt_job_t job;
  cli_run_t r;
  lim_t lim;
  long pending, running, weight;
  size_t i;
  int st[1000];
  qt_t t, many;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  qt_open(&t, url, "tenants", NULL);
  add_group(&t, "acme", 3);
  add_group(&t, "<b>\"&", 1);
  add_group(&t, "esc\x1b[2J", 1);
  add_group(&t, NULL, 2);

  /* No limit yet: shown as none. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "limit", "tenants"));
  ASSERT_NOT_NULL(strstr(r.out, "rate:              none\n"));
  ASSERT_NOT_NULL(strstr(r.out, "concurrency:       none (0 running)\n"));
  ASSERT_NOT_NULL(strstr(r.out, "groups:            3 with pending jobs\n"));

  /* Set: printed as read back, and the library reads the same. */
  cli_run_ok(&r, url, "qt",
             ARGS("queue", "limit", "tenants", "--rate", "100/1s",
                  "--group-rate", "10/500ms", "--concurrency", "5",
                  "--group-concurrency", "1"));
  ASSERT_NOT_NULL(strstr(r.out, "rate:              100/1s (0 in the "
                                "window)\n"));
  ASSERT_NOT_NULL(strstr(r.out, "group rate:        10/500ms per group\n"));
  ASSERT_NOT_NULL(strstr(r.out, "concurrency:       5 (0 running)\n"));
  ASSERT_NOT_NULL(strstr(r.out, "group concurrency: 1 per group\n"));
  lim_read(&t, &lim);
  ASSERT_EQ(100, lim.l.rate_max);
  ASSERT_EQ(1000, lim.l.rate_ms);
  ASSERT_EQ(10, lim.l.group_rate_max);
  ASSERT_EQ(500, lim.l.group_rate_ms);
  ASSERT_EQ(5, lim.l.concurrency);
  ASSERT_EQ(1, lim.l.group_concurrency);
  ASSERT_EQ(0, lim.l.group_turn); /* the default */
  cli_run_ok(&r, url, "qt", ARGS("--json", "queue", "limit", "tenants"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"queue\":\"tenants\",\"limits\":{"
                                "\"rate_max\":100,\"rate_ms\":1000,"
                                "\"group_rate_max\":10,\"group_rate_ms\":500,"
                                "\"concurrency\":5,\"group_concurrency\":1,"
                                "\"group_turn\":10},"
                                "\"flow\":{\"rate_used\":0,\"running\":0,"
                                "\"groups\":3,\"held_until_ms\":0,"
                                "\"held_until\":null}}"));
  /* Other units; an option left out is no limit. */
  /* A group's turn. */
  cli_run_ok(&r, url, "qt",
             ARGS("queue", "limit", "tenants", "--group-turn", "3"));
  ASSERT_NOT_NULL(strstr(r.out, "group turn:        3 jobs per group\n"));
  lim_read(&t, &lim);
  ASSERT_EQ(3, lim.l.group_turn);
  ASSERT_EQ(0, lim.l.rate_max);
  cli_run_ok(&r, url, "qt",
             ARGS("queue", "limit", "tenants", "--rate", "7/2m",
                  "--concurrency", "5"));
  lim_read(&t, &lim);
  ASSERT_EQ(7, lim.l.rate_max);
  ASSERT_EQ(120000, lim.l.rate_ms);
  ASSERT_EQ(0, lim.l.group_rate_max);
  ASSERT_EQ(0, lim.l.group_rate_ms);
  ASSERT_EQ(5, lim.l.concurrency);
  ASSERT_EQ(0, lim.l.group_concurrency);
  ASSERT_NOT_NULL(strstr(r.out, "rate:              7/2m (0 in the "
                                "window)\n"));
  ASSERT_NOT_NULL(strstr(r.out, "group rate:        none\n"));

  /* Bad input: exit 2, one line on stderr, the limits unchanged. */
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    const char *argv[16] = {"--url", url,     "--prefix", "qt",
                            "queue", "limit", "tenants"};
    size_t n = 7, k;

    for (k = 0; k < 4 && bad[i][k] != NULL; k++)
      argv[n++] = bad[i][k];
    cli_run(&r, argv);
    if (r.status != 2)
      fprintf(stderr, "# %s: exit %d: %s\n", bad[i][0], r.status, r.err);
    ASSERT_EQ(2, r.status);
    ASSERT_EQ(1, cli_lines(r.err));
    ASSERT_NOT_NULL(strstr(r.err, "fleet queue: "));
    ASSERT_STR_EQ("", r.out);
  }
  lim_read(&t, &lim);
  ASSERT_EQ(7, lim.l.rate_max);
  ASSERT_EQ(120000, lim.l.rate_ms);
  ASSERT_EQ(5, lim.l.concurrency);
  ASSERT_EQ(0, lim.l.group_rate_max);
  ASSERT_EQ(0, lim.l.group_concurrency);
  cli_run(&r,
          ARGS("--url", url, "queue", "limit", "tenants", "--rate", "0/1s"));
  ASSERT_NOT_NULL(strstr(r.err, "--rate: the max is a whole number from 1 to "
                                "1000000 (got 0/1s)"));
  cli_run(&r,
          ARGS("--url", url, "queue", "limit", "tenants", "--rate", "10/0s"));
  ASSERT_NOT_NULL(strstr(r.err, "a duration from 1ms to 24h"));

  /* One claim: the rate window and the running count show it. */
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", "tenants"));
  ASSERT_NOT_NULL(strstr(r.out, "pending:          6\n"));
  ASSERT_NOT_NULL(strstr(r.out, "rate:              7/2m (1 in the "
                                "window)\n"));
  ASSERT_NOT_NULL(strstr(r.out, "concurrency:       5 (1 running)\n"));
  ASSERT_NOT_NULL(strstr(r.out, "\nGROUP       PENDING  RUNNING  "
                                "RATE_USED  WEIGHT  HELD_UNTIL\n"));
  /* Names escaped on the terminal. */
  ASSERT_NULL(strstr(r.out, "\x1b"));
  ASSERT_NOT_NULL(strstr(r.out, "\nesc\\x1b[2J "));
  ASSERT_NOT_NULL(strstr(r.out, "\n3 group(s)\n"));
  /* Each group's pending and running jobs: the claimed job's group has
   * one pending less and one running. */
  {
    static const char *const gs[] = {"acme", "<b>\"&", "esc\\x1b[2J"};
    static const long want[] = {3, 1, 1};
    long left = 0, run = 0;

    for (i = 0; i < 3; i++) {
      ASSERT_OK(group_row(r.out, gs[i], &pending, &running, &weight));
      ASSERT_EQ(want[i], pending + running);
      ASSERT_EQ(1, weight);
      left += pending;
      run += running;
    }
    /* Claims rotate: the first one took a grouped job or a plain one. */
    ASSERT_EQ(5 - (run == 1 ? 1 : 0), left);
  }
  /* One group's pending jobs; every page tells each job's group. */
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "queue", "jobs", "tenants", "--group", "acme"));
  ASSERT_NOT_NULL(strstr(r.out, "\"group\":\"acme\""));
  ASSERT_NULL(strstr(r.out, "\"group\":null"));
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "queue", "jobs", "tenants", "--state", "pending"));
  ASSERT_NOT_NULL(strstr(r.out, "\"group\":\"acme\""));
  ASSERT_NOT_NULL(strstr(r.out, "\"group\":null"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "queue", "jobs", "tenants",
                   "--group", "acme", "--state", "running"));
  ASSERT_EQ(2, r.status);
  ASSERT_NOT_NULL(strstr(r.err, "--group lists pending jobs only"));
  cli_run_ok(&r, url, "qt", ARGS("--json", "queue", "stats", "tenants"));
  ASSERT_NOT_NULL(strstr(r.out, "\"paused\":false,\"limits\":{\"rate_max\":"
                                "7,\"rate_ms\":120000,"));
  ASSERT_NOT_NULL(strstr(r.out, "\"flow\":{\"rate_used\":1,\"running\":1,"));
  ASSERT_NOT_NULL(strstr(r.out, "\"groups_total\":3,\"groups_read\":3,"
                                "\"groups\":[{\"group\":\"\\u003cb>\\\"&\","));
  ASSERT_NOT_NULL(strstr(r.out, "{\"group\":\"esc\\u001b[2J\","));

  /* hold and weight. */
  cli_run_ok(
      &r, url, "qt",
      ARGS("queue", "hold", "tenants", "--for", "1h", "--group", "acme"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "weight", "tenants", "acme", "4"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", "tenants"));
  ASSERT_OK(group_row(r.out, "acme", &pending, &running, &weight));
  ASSERT_EQ(4, weight);
  ASSERT_NOT_NULL(strstr(strstr(r.out, "\nacme "), "  20"));
  ASSERT_NOT_NULL(strstr(r.out, "held until:        not held\n"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "hold", "tenants", "--for", "1h"));
  lim_read(&t, &lim);
  ASSERT(lim.f.held_until_ms > qt_now_ms(&t) + 3000000);
  cli_run_ok(&r, url, "qt", ARGS("queue", "limit", "tenants"));
  ASSERT_NOT_NULL(strstr(r.out, "held until:        20"));
  memset(group, 'g', FLEET_JOB_GROUP_MAX + 1);
  group[FLEET_JOB_GROUP_MAX + 1] = '\0';
  cli_run(&r, ARGS("--url", url, "queue", "weight", "tenants", group, "2"));
  ASSERT_EQ(2, r.status);
  cli_run(&r, ARGS("--url", url, "queue", "weight", "tenants", "acme", "0"));
  ASSERT_EQ(2, r.status);
  cli_run(&r, ARGS("--url", url, "queue", "hold", "tenants", "--for", "0s"));
  ASSERT_EQ(2, r.status);
  cli_run(&r, ARGS("--url", url, "queue", "hold", "tenants"));
  ASSERT_EQ(2, r.status);

  /* Clear. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "limit", "tenants", "--clear"));
  ASSERT_NOT_NULL(strstr(r.out, "rate:              none\n"));
  lim_read(&t, &lim);
  ASSERT_EQ(0, lim.l.rate_max);
  ASSERT_EQ(0, lim.l.rate_ms);
  ASSERT_EQ(0, lim.l.concurrency);

  /* More groups than one page (1000): every one is listed. */
  qt_open(&many, url, "many", NULL);
  for (i = 0; i < 1001; i++) {
    snprintf(names[i], sizeof(names[i]), "g%04u", (unsigned)i);
    fleet_job_spec_init(&specs[i % 1000], "t", "x", 1);
    specs[i % 1000].group = names[i];
    if (i == 999)
      ASSERT_OK(qt_enqueue(&many, specs, 1000, st, NULL));
  }
  ASSERT_OK(qt_enqueue(&many, specs, 1, st, NULL));
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", "many"));
  ASSERT_OK(group_row(r.out, "g0000", &pending, &running, &weight));
  ASSERT_EQ(1, pending);
  ASSERT_OK(group_row(r.out, "g0999", &pending, &running, &weight));
  ASSERT_OK(group_row(r.out, "g1000", &pending, &running, &weight));
  ASSERT_EQ(1, pending);
  ASSERT_NOT_NULL(strstr(r.out, "\n1001 group(s)\n"));
  ASSERT_EQ(10 + 1 + 7 + 1 + 1 + 1001 + 1, cli_lines(r.out));

  qt_close(&many);
  qt_close(&t);
  fleet_test_redis_stop(redis);
  return 0;
}
