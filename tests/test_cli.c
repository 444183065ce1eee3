/* test_cli.c -- the `fleet` CLI, run as a user runs it against a real
 * redis-server whose contents the test writes (through the library, or as
 * raw keys where the schema is documented): each verb's output, its
 * effect, exit codes, --help, one-line errors, redacted passwords. */
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

static void redis_ok(fleet_test_redis_t *redis, const char *cmd) {
  redisReply *r = fleet_test_redis_cmd(redis, cmd);

  ASSERT_NOT_NULL(r);
  ASSERT_NE(REDIS_REPLY_ERROR, r->type);
  freeReplyObject(r);
}

/* A job of `t`'s queue that is dead (one attempt, failed with `err`). */
static void make_dead(qt_t *t, const char *err, char *id) {
  fleet_job_spec_t s;
  fleet_claim_t c;
  qt_job_t job;
  int st;
  char ids[1][FLEET_JOB_ID_MAX + 1];

  fleet_job_spec_init(&s, "send", "to-bob", 6);
  s.max_attempts = 1;
  s.priority = 10; /* claimed before the others */
  ASSERT_OK(qt_enqueue(t, &s, 1, &st, ids));
  ASSERT_EQ(1, qt_claim(t, 1, 60000, &job));
  ASSERT_STR_EQ(ids[0], job.id);
  c = qt_claim_of(&job);
  ASSERT_OK(qt_fail(t, &c, err));
  ASSERT_EQ(1, t->dead);
  strcpy(id, job.id);
}

TEST_IMPL(cli_queue) {
  fleet_test_redis_t *redis;
  char a[FLEET_JOB_ID_MAX + 1], b[FLEET_JOB_ID_MAX + 1];
  char dead[FLEET_JOB_ID_MAX + 1];
  char pat[1024];
  fleet_queue_options_t o;
  fleet_job_info_t info;
  fleet_job_spec_t s;
  qt_job_t jobs[4];
  cli_run_t r;
  const char *url;
  qt_t t, later;
  int st;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  /* Completed jobs kept (none are by default), for purge below. */
  fleet_queue_options_init(&o);
  o.keep_completed = 1000;
  qt_open(&t, url, "mail", &o);
  qt_add(&t, "send", "to-alice", a);
  qt_add(&t, "send", "to-carol", b);
  make_dead(&t, "smtp said no", dead);
  qt_open(&later, url, "later", NULL);
  fleet_job_spec_init(&s, "report", "q3", 2);
  s.delay_ms = 3600000;
  ASSERT_OK(qt_enqueue(&later, &s, 1, &st, NULL));

  /* ls: both queues, with their counts (JSON and table). */
  cli_run_ok(&r, url, "qt", ARGS("--json", "queue", "ls"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"queue\":\"later\",\"pending\":0,"
                                "\"delayed\":1,"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"queue\":\"mail\",\"pending\":2,"
                                "\"delayed\":0,\"running\":0,\"completed\":0,"
                                "\"dead\":1,"));
  ASSERT_EQ(1, cli_lines(r.out));
  cli_run_ok(&r, url, "qt", ARGS("queue", "ls"));
  ASSERT_EQ(3, cli_lines(r.out));
  ASSERT_EQ(0, strncmp(r.out, "QUEUE", 5));
  ASSERT_NOT_NULL(strstr(r.out, "\nmail "));
  /* Another prefix sees none of them. */
  cli_run_ok(&r, url, "other", ARGS("--json", "queue", "ls"));
  ASSERT_STR_EQ("[]\n", r.out);

  /* JSON of binary data: UTF-8 kept, other bytes as \u00XX. */
  {
    static const char bin[] = "caf\xc3\xa9 \xff\x01\"<";
    char bid[FLEET_JOB_ID_MAX + 1];
    qt_t bq;

    qt_open(&bq, url, "binary", NULL);
    fleet_job_spec_init(&s, "bin", bin, sizeof(bin) - 1);
    ASSERT_OK(qt_enqueue(&bq, &s, 1, &st, &bid));
    cli_run_ok(&r, url, "qt", ARGS("--json", "queue", "get", "binary", bid));
    ASSERT_NOT_NULL(strstr(r.out, "\"payload\":\"caf\xc3\xa9 \\u00ff\\u0001"
                                  "\\\"\\u003c\""));
    qt_close(&bq);
  }

  /* stats, jobs, get. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", "mail"));
  ASSERT_NOT_NULL(strstr(r.out, "pending:          2\n"));
  ASSERT_NOT_NULL(strstr(r.out, "paused:           false\n"));
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "queue", "jobs", "mail", "--state", "dead"));
  snprintf(pat, sizeof(pat), "\"id\":\"%s\",\"type\":\"send\",\"attempts\":1",
           dead);
  ASSERT_NOT_NULL(strstr(r.out, pat));
  ASSERT_NOT_NULL(strstr(r.out, "\"last_error\":\"smtp said no\""));
  cli_run_ok(
      &r, url, "qt",
      ARGS("queue", "jobs", "mail", "--state", "pending", "--limit", "1"));
  ASSERT_NOT_NULL(strstr(r.out, "to-alice"));
  ASSERT_NULL(strstr(r.out, "to-carol"));
  ASSERT_NOT_NULL(strstr(r.out, "2 pending job(s) in mail; next page: "
                                "--cursor 1"));
  cli_run_ok(
      &r, url, "qt",
      ARGS("queue", "jobs", "mail", "--state", "pending", "--cursor", "1"));
  ASSERT_NOT_NULL(strstr(r.out, "to-carol"));
  ASSERT_NULL(strstr(r.out, "to-alice"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "get", "mail", dead));
  ASSERT_NOT_NULL(strstr(r.out, "state:         dead\n"));
  ASSERT_NOT_NULL(strstr(r.out, "last_error:    smtp said no\n"));
  /* The attempt history: a line per failed attempt (text), an array of
   * them (JSON). */
  {
    const char *p = strstr(r.out, "\nattempt 1 at 20");

    ASSERT_NOT_NULL(p);
    p += strlen("\nattempt 1 at ");
    /* (The time: "2026-11-27T10:00:00.000Z", 24 characters.) */
    ASSERT_EQ(0, strncmp(p + 23, "Z: smtp said no\n", 16));
    ASSERT_EQ('T', p[10]);
    ASSERT_NULL(strstr(r.out, "errors:"));
    cli_run_ok(&r, url, "qt", ARGS("--json", "queue", "get", "mail", dead));
    ASSERT_NOT_NULL(strstr(r.out, "\"errors\":[{\"attempt\":1,\"time_ms\":"));
    p = strstr(r.out, "\"time\":\"20");
    ASSERT_NOT_NULL(p);
    ASSERT_NOT_NULL(strstr(p, "Z\",\"error\":\"smtp said no\"}]"));
    cli_run_ok(&r, url, "qt", ARGS("--json", "queue", "get", "mail", a));
    ASSERT_NOT_NULL(strstr(r.out, "\"errors\":[]"));
  }

  /* list: the queued jobs of a type (pending and delayed; not the dead
   * one), a line each then the total; --limit cuts the ids, not the
   * total. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "list", "mail", "--type", "send"));
  snprintf(pat, sizeof(pat), "%s\n%s\n2 queued job(s) of type send in mail\n",
           a, b);
  ASSERT_STR_EQ(pat, r.out);
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "queue", "list", "mail", "--type", "send",
                  "--limit", "1"));
  snprintf(pat, sizeof(pat),
           "{\"queue\":\"mail\",\"type\":\"send\",\"total\":2,"
           "\"ids\":[\"%s\"]}\n",
           a);
  ASSERT_STR_EQ(pat, r.out);
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "queue", "list", "later", "--type", "report"));
  ASSERT_NOT_NULL(strstr(r.out, "\"total\":1,"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "list", "mail", "--type", "none"));
  ASSERT_STR_EQ("0 queued job(s) of type none in mail\n", r.out);

  /* retry one, then all dead. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "retry", "mail", dead));
  ASSERT_OK(qt_get(&t, dead, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  cli_run(&r,
          ARGS("--url", url, "--prefix", "qt", "queue", "retry", "mail", dead));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "FLEET_EBUSY"));
  /* The retried job (priority 10) is claimed first: dead again. */
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  ASSERT_STR_EQ(dead, jobs[0].id);
  {
    fleet_claim_t c = qt_claim_of(&jobs[0]);

    ASSERT_OK(qt_fail(&t, &c, "again"));
    ASSERT_EQ(1, t.dead);
  }
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "queue", "retry", "mail", "--all-dead"));
  ASSERT_NOT_NULL(strstr(r.out, "\"retried\":1"));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(3, t.counts.pending);
  ASSERT_UEQ(0, t.counts.dead_kept);

  /* cancel. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "cancel", "mail", b));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, b, &info, NULL, 0, NULL, 0));
  cli_run(&r,
          ARGS("--url", url, "--prefix", "qt", "queue", "cancel", "mail", b));
  ASSERT_EQ(1, r.status);
  ASSERT_NOT_NULL(strstr(r.err, "FLEET_ENOTFOUND"));
  /* A running job: its cancel is requested; --grace-ms out of range is a
   * usage error. */
  {
    qt_job_t job;
    fleet_claim_t c;
    int res[1];
    /* (One more job: the steps below still find 2 pending.) */
    qt_add(&t, "send", "extra", NULL);
    ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
    cli_run(&r, ARGS("--url", url, "--prefix", "qt", "queue", "cancel", "mail",
                     job.id, "--grace-ms", "0"));
    ASSERT_EQ(2, r.status);
    ASSERT_NOT_NULL(strstr(r.err, "--grace-ms: 1 to 86400000 ms (got 0)"));
    cli_run_ok(&r, url, "qt",
               ARGS("queue", "cancel", "mail", job.id, "--grace-ms", "5000"));
    ASSERT_NOT_NULL(strstr(r.out, "result:"));
    ASSERT_NOT_NULL(strstr(r.out, "cancel requested"));
    c = qt_claim_of(&job);
    ASSERT_OK(qt_complete(&t, &c, 1, res));
    ASSERT_ERR(FLEET_ECANCELED, res[0]);
    ASSERT_OK(qt_get(&t, job.id, &info, NULL, 0, NULL, 0));
    ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  }

  /* pause: workers claim nothing; resume: they do. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "pause", "mail"));
  ASSERT_NOT_NULL(strstr(r.out, "paused: true"));
  ASSERT_EQ(0, qt_claim(&t, 4, 60000, jobs));
  cli_run_ok(&r, url, "qt", ARGS("--json", "queue", "stats", "mail"));
  ASSERT_NOT_NULL(strstr(r.out, "\"paused\":true"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "resume", "mail"));
  ASSERT_EQ(2, qt_claim(&t, 4, 60000, jobs));

  /* purge the completed ones. */
  {
    fleet_claim_t c[2] = {qt_claim_of(&jobs[0]), qt_claim_of(&jobs[1])};

    ASSERT_OK(qt_complete(&t, c, 2, NULL));
  }
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "queue", "purge", "mail", "--state", "completed"));
  ASSERT_NOT_NULL(strstr(r.out, "\"removed\":2"));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.completed_kept);
  ASSERT_UEQ(2, t.counts.completed);
  /* An empty completed page says why it may be empty. */
  cli_run_ok(&r, url, "qt",
             ARGS("queue", "jobs", "mail", "--state", "completed"));
  ASSERT_NOT_NULL(strstr(r.out, "0 completed job(s) in mail (completion "
                                "history is off unless keep_completed is "
                                "set)\n"));

  /* Usage errors: exit 2, one line. */
  cli_run(&r, ARGS("--url", url, "queue", "jobs", "mail", "--state", "x"));
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  cli_run(&r,
          ARGS("--url", url, "queue", "purge", "mail", "--state", "pending"));
  ASSERT_EQ(2, r.status);
  cli_run(&r, ARGS("--url", url, "queue", "frob"));
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  cli_run(&r, ARGS("--url", url, "queue", "list", "mail"));
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  cli_run(&r, ARGS("--url", url, "queue", "list", "mail", "--type", "send",
                   "--limit", "0"));
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, cli_lines(r.err));

  qt_close(&later);
  qt_close(&t);
  fleet_test_redis_stop(redis);
  return 0;
}

TEST_IMPL(cli_lock_leader) {
  fleet_test_redis_t *redis;
  cli_run_t r;
  const char *url;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  /* Leases as docs/lock.md documents them: "<token>:<owner>" with a TTL. */
  redis_ok(redis, "SET {qt:jobs-lock}:lock 7:worker-a PX 60000");
  redis_ok(redis, "SET {qt:jobs-lock}:fence 7");
  redis_ok(redis, "SET {qt:jobs-free}:fence 3");
  redis_ok(redis, "SET {qt:other}:lock *12:worker-b PX 60000");
  redis_ok(redis, "SET {qt:other}:fence 12");
  redis_ok(redis, "SET {qt:scheduler}:lock 4:node-1 PX 60000");
  redis_ok(redis, "SET {qt:scheduler}:fence 4");

  cli_run_ok(&r, url, "qt", ARGS("lock", "get", "jobs-lock"));
  ASSERT_NOT_NULL(strstr(r.out, "held:   true\n"));
  ASSERT_NOT_NULL(strstr(r.out, "owner:  worker-a\n"));
  ASSERT_NOT_NULL(strstr(r.out, "token:  7\n"));
  cli_run_ok(&r, url, "qt", ARGS("--json", "lock", "get", "jobs-free"));
  ASSERT_NOT_NULL(strstr(r.out, "\"held\":false,\"owner\":null"));
  ASSERT_NOT_NULL(strstr(r.out, "\"fence\":3"));

  /* ls: SCAN of the leases, filtered by the glob. */
  cli_run_ok(&r, url, "qt", ARGS("--json", "lock", "ls"));
  ASSERT_NOT_NULL(strstr(r.out, "\"name\":\"jobs-lock\""));
  ASSERT_NOT_NULL(strstr(r.out, "\"name\":\"other\",\"held\":true,"
                                "\"owner\":\"worker-b\",\"token\":12"));
  ASSERT_NOT_NULL(strstr(r.out, "\"name\":\"scheduler\""));
  cli_run_ok(&r, url, "qt", ARGS("lock", "ls", "--match", "jobs-*"));
  ASSERT_EQ(2, cli_lines(r.out)); /* the header and jobs-lock */
  ASSERT_NOT_NULL(strstr(r.out, "jobs-lock"));
  ASSERT_NULL(strstr(r.out, "other"));

  /* leader get: the election is the lock of its name. */
  cli_run_ok(&r, url, "qt", ARGS("leader", "get", "scheduler"));
  ASSERT_NOT_NULL(strstr(r.out, "leader:   node-1\n"));
  cli_run_ok(&r, url, "qt", ARGS("--json", "leader", "get", "nobody"));
  ASSERT_NOT_NULL(strstr(r.out, "\"leader\":null"));

  cli_run(&r, ARGS("--url", url, "lock", "--help"));
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "usage: fleet lock"));
  cli_run(&r, ARGS("--url", url, "leader", "--help"));
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "usage: fleet leader"));
  fleet_test_redis_stop(redis);
  return 0;
}

/* Store: a record put through the library's store. */
typedef struct {
  qt_t *t;
  int status;
} store_put_t;

static void on_put(fleet_handle_t *h, int status, void *ud) {
  store_put_t *p = ud;

  (void)h;
  p->status = status;
  p->t->done = 1;
}

static void store_put(qt_t *t, fleet_store_t *store, const char *id,
                      const char *value, const char *team) {
  fleet_store_index_t idx = {"team", {team, strlen(team)}};
  fleet_store_put_options_t o = {&idx, 1, 0};
  fleet_bytes_t bid = {id, strlen(id)}, bv = {value, strlen(value)};
  store_put_t p = {t, 1};

  t->done = 0;
  ASSERT_OK(fleet_store_put(store, "users", bid, bv, &o, on_put, &p));
  qt_wait(t);
  ASSERT_OK(p.status);
}

static void on_store_closed(fleet_handle_t *h) {
  (void)h;
}

TEST_IMPL(cli_pool_store) {
  fleet_test_redis_t *redis;
  fleet_store_t store;
  cli_run_t r;
  const char *url;
  qt_t t;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);

  /* A pool as ops/pool.h documents its keys: two workers on two nodes,
   * two jobs. */
  redis_ok(redis, "ZADD {qt:render}:nodes 99999999999999 n1 "
                  "99999999999999 n2");
  redis_ok(redis, "ZADD {qt:render}:workers 1 n1/1 2 n2/1");
  redis_ok(redis, "HSET {qt:render}:wnode n1/1 n1 n2/1 n2");
  redis_ok(redis, "SET {qt:render}:rev 5");
  redis_ok(redis, "HSET {qt:render}:jobs frame-1 3:r:n1/1 frame-2 4:s:n1/1");

  cli_run_ok(&r, url, "qt", ARGS("pool", "status", "render"));
  ASSERT_NOT_NULL(strstr(r.out, "pool render, revision 5: 2 worker(s), "
                                "2 job(s)\n"));
  ASSERT_NOT_NULL(strstr(r.out, "n1/1    n1    2"));
  ASSERT_NOT_NULL(strstr(r.out, "n2/1    n2    0"));
  cli_run_ok(&r, url, "qt", ARGS("--json", "pool", "status", "render"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"key\":\"frame-1\",\"token\":\"3\","
                                "\"state\":\"running\",\"worker\":\"n1/1\"}"));
  ASSERT_NOT_NULL(strstr(r.out, "\"state\":\"starting\""));
  cli_run_ok(&r, url, "qt", ARGS("--json", "pool", "ls"));
  ASSERT_NOT_NULL(strstr(r.out, "[{\"pool\":\"render\",\"revision\":5,"));
  ASSERT_NOT_NULL(strstr(r.out, "\"worker_count\":2,\"job_count\":2"));

  /* One worker's jobs, read from its set (T:wj:<worker>), and a requeued
   * job without owner in the whole list. */
  redis_ok(redis, "SADD {qt:render}:wj:n1/1 frame-1 frame-2");
  redis_ok(redis, "HSET {qt:render}:jobs frame-3 5:q:");
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "pool", "jobs", "render", "--worker", "n1/1"));
  ASSERT_NOT_NULL(strstr(r.out, "\"key\":\"frame-1\""));
  ASSERT_NOT_NULL(strstr(r.out, "\"key\":\"frame-2\""));
  ASSERT_NULL(strstr(r.out, "frame-3"));
  cli_run_ok(&r, url, "qt", ARGS("pool", "jobs", "render", "--worker", "n2/1"));
  ASSERT_NULL(strstr(r.out, "frame-"));
  cli_run_ok(&r, url, "qt", ARGS("pool", "jobs", "render"));
  ASSERT_NOT_NULL(strstr(r.out, "frame-3  requeued"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "pool", "jobs", "render",
                   "extra"));
  ASSERT_EQ(2, r.status);

  /* A shut-down pool stays shut until a reset; a reset of an open pool
   * says so and changes nothing. */
  redis_ok(redis, "SET {qt:render}:down 1");
  cli_run_ok(&r, url, "qt", ARGS("--json", "pool", "reset", "render"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"pool\":\"render\",\"reset\":true}"));
  {
    redisReply *x = fleet_test_redis_cmd(redis, "EXISTS {qt:render}:down");
    ASSERT_NOT_NULL(x);
    ASSERT_EQ(0, x->integer);
    freeReplyObject(x);
  }
  cli_run_ok(&r, url, "qt", ARGS("pool", "reset", "render"));
  ASSERT_NOT_NULL(strstr(r.out, "reset: false"));

  /* Store records, through the library. */
  qt_open(&t, url, "unused", NULL);
  ASSERT_OK(fleet_store_init(&t.c.client, &store, NULL));
  store_put(&t, &store, "u1", "{\"name\":\"ann\"}", "red");
  store_put(&t, &store, "u2", "{\"name\":\"bo\"}", "red");
  store_put(&t, &store, "u3", "{\"name\":\"cy\"}", "blue");
  cli_run_ok(&r, url, "qt", ARGS("--json", "store", "get", "users", "u2"));
  ASSERT_NOT_NULL(strstr(r.out, "\"value\":\"{\\\"name\\\":\\\"bo\\\"}\""));
  cli_run_ok(&r, url, "qt", ARGS("store", "ls", "users", "team", "red"));
  ASSERT_EQ(3, cli_lines(r.out));
  ASSERT_NOT_NULL(strstr(r.out, "u1"));
  ASSERT_NOT_NULL(strstr(r.out, "u2"));
  ASSERT_NULL(strstr(r.out, "u3"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "store", "get", "users",
                   "nobody"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "FLEET_ENOTFOUND"));

  fleet_store_close(&store, on_store_closed);
  qt_close(&t);
  fleet_test_redis_stop(redis);
  return 0;
}

TEST_IMPL(cli_watch) {
  fleet_test_redis_t *redis;
  char id[FLEET_JOB_ID_MAX + 1];
  const char *url;
  cli_run_t r;
  pid_t pid;
  qt_t t;
  char out[4096];
  uint64_t t0;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  qt_open(&t, url, "mail", NULL);
  qt_add(&t, "send", "x", id);

  /* --count: that many views, then exit 0. */
  cli_run_ok(
      &r, url, "qt",
      ARGS("watch", "queue", "mail", "--count", "3", "--interval-ms", "50"));
  {
    int views = 0;
    const char *p = r.out;

    while ((p = strstr(p, "queue mail")) != NULL)
      views++, p++;
    ASSERT_EQ(3, views);
  }
  ASSERT_NOT_NULL(strstr(r.out, "  pending    1\n"));
  ASSERT_NOT_NULL(strstr(r.out, "completed/s 0.0"));

  /* Without --count: runs until SIGINT, then exits 0. */
  pid = cli_spawn(ARGS("--url", url, "--prefix", "qt", "watch", "queue", "mail",
                       "--interval-ms", "50"),
                  "watch");
  t0 = uv_hrtime();
  do {
    usleep(20000);
    cli_read_out("watch", out, sizeof(out));
  } while (strstr(out, "queue mail") == NULL &&
           uv_hrtime() - t0 < fleet_test_ms(5000) * 1000000ULL);
  ASSERT_NOT_NULL(strstr(out, "queue mail"));
  ASSERT_OK(kill(pid, SIGINT));
  cli_reap(pid, "watch", &r);
  ASSERT_EQ(0, r.status);

  /* On a terminal: redrawn in place, and q quits. */
  {
    char buf[8192] = "";
    size_t got = 0;
    int master, status;
    ssize_t n;

    pid = forkpty(&master, NULL, NULL, NULL);
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      unsetenv("FLEET_URL");
      execl(FLEET_CLI_PATH, "fleet", "--url", url, "--prefix", "qt", "watch",
            "queue", "mail", "--interval-ms", "50", (char *)NULL);
      _exit(127);
    }
    t0 = uv_hrtime();
    while (strstr(buf, "(q or Ctrl-C to quit)") == NULL &&
           uv_hrtime() - t0 < fleet_test_ms(5000) * 1000000ULL) {
      struct pollfd pfd = {master, POLLIN, 0};

      buf[got] = '\0';
      if (poll(&pfd, 1, 100) == 1 && got + 1 < sizeof(buf) &&
          (n = read(master, buf + got, sizeof(buf) - 1 - got)) > 0)
        got += (size_t)n;
      buf[got] = '\0';
    }
    ASSERT_NOT_NULL(strstr(buf, "queue mail"));
    ASSERT_NOT_NULL(strstr(buf, "\033[H\033[2J")); /* cleared, redrawn */
    ASSERT_NOT_NULL(strstr(buf, "(q or Ctrl-C to quit)"));
    ASSERT_EQ(1, write(master, "q", 1));
    t0 = uv_hrtime();
    while (waitpid(pid, &status, WNOHANG) == 0) {
      char sink[4096];
      struct pollfd pfd = {master, POLLIN, 0};

      ASSERT(uv_hrtime() - t0 < fleet_test_ms(5000) * 1000000ULL);
      if (poll(&pfd, 1, 20) == 1 && read(master, sink, sizeof(sink)) < 0)
        usleep(10000);
    }
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(0, WEXITSTATUS(status));
    close(master);
  }

  cli_run(&r, ARGS("watch", "--help"));
  ASSERT_EQ(0, r.status);
  cli_run(&r, ARGS("watch", "lock", "x"));
  ASSERT_EQ(2, r.status);
  qt_close(&t);
  fleet_test_redis_stop(redis);
  return 0;
}

TEST_IMPL(cli_errors) {
  cli_run_t r;

  cli_required();
  /* --help at every level. */
  cli_run(&r, ARGS("--help"));
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "usage: fleet"));
  cli_run(&r, ARGS("queue", "--help"));
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "usage: fleet queue"));
  cli_run(&r, ARGS("queue", "jobs", "--help"));
  ASSERT_EQ(0, r.status);
  cli_run(&r, ARGS("pool", "--help"));
  ASSERT_EQ(0, r.status);
  cli_run(&r, ARGS("store", "--help"));
  ASSERT_EQ(0, r.status);
  cli_run(&r, ARGS("dash", "--help"));
  ASSERT_EQ(0, r.status);

  /* Bad usage: exit 2 and one line. */
  cli_run(&r, ARGS("frobnicate"));
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  cli_run(&r, ARGS("--bogus", "queue", "ls"));
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, cli_lines(r.err));

  /* A bad URL and an unreachable server: exit 1, one line, the password
   * never printed. */
  cli_run(&r, ARGS("--url", "redis//x", "queue", "ls"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  cli_run(&r, ARGS("--url", "redis://admin:hunter2@127.0.0.1:1", "--timeout-ms",
                   "300", "queue", "ls"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "fleet: queue ls: "));
  ASSERT_NULL(strstr(r.err, "hunter2"));
  return 0;
}

/* fleet cron ls|history and fleet warmpool snapshot, on crons defined and
 * fired through the library and a warm pool run by a library node. */
TEST_IMPL(cli_cron_warmpool) {
  fleet_test_redis_t *redis;
  cli_wp_t *wp;
  cli_run_t r;
  const char *url, *row;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  cli_fixture_crons(url, "qt", 3);

  /* The definitions of the default namespace, "cron": a table. */
  cli_run_ok(&r, url, "qt", ARGS("cron", "ls"));
  ASSERT_NOT_NULL(strstr(r.out, "namespace cron: 2 definition(s)\n"));
  ASSERT_NOT_NULL(strstr(r.out, "KEY"));
  ASSERT_NOT_NULL(strstr(r.out, "NEXT_DUE"));
  ASSERT_NOT_NULL(strstr(r.out, "LAST_FIRED"));
  row = strstr(r.out, "\nnightly ");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "30 2 * * *"));
  ASSERT_NOT_NULL(strstr(row, "Europe/Berlin"));
  ASSERT_NOT_NULL(strstr(row, "false"));
  row = strstr(r.out, "\ntick ");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "* * * * * *  UTC"));
  ASSERT_NOT_NULL(strstr(row, "true"));
  ASSERT_NULL(strstr(r.out, "hourly"));
  ASSERT_EQ(4, cli_lines(r.out));

  /* --json: the disabled one has no next due and was never fired; tick was
   * fired 3 times (tokens 1..3) and is due again. */
  cli_run_ok(&r, url, "qt", ARGS("--json", "cron", "ls"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"namespace\":\"cron\",\"definitions\":["));
  ASSERT_NOT_NULL(strstr(
      r.out, "{\"key\":\"nightly\",\"expr\":\"30 2 * * *\",\"tz\":"
             "\"Europe/Berlin\",\"enabled\":false,\"queue\":\"jobs\","
             "\"pool\":null,\"catch_up\":\"skip\",\"next_due\":null,\"next_due_"
             "ms\":-1,"
             "\"last_fired\":null,\"last_fire_ms\":-1,\"last_token\":0,"));
  row = strstr(r.out, "{\"key\":\"tick\",\"expr\":\"* * * * * *\",\"tz\":"
                      "\"UTC\",\"enabled\":true,\"queue\":null,");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "\"next_due\":\"20"));
  ASSERT_NOT_NULL(strstr(row, "\"last_fired\":\"20"));
  ASSERT_NOT_NULL(strstr(row, "\"last_token\":3,"));
  ASSERT_NOT_NULL(strstr(r.out, "\"count\":2}"));
  cli_run_ok(&r, url, "qt", ARGS("--json", "cron", "ls", "--ns", "other"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"namespace\":\"other\",\"definitions\":[{"
                                "\"key\":\"hourly\",\"expr\":\"@hourly\","));
  ASSERT_NOT_NULL(strstr(r.out, "\"count\":1}"));
  /* The bounds: start, end, the fire limit, the fires, finished. */
  cli_run_ok(&r, url, "qt", ARGS("--json", "cron", "ls", "--ns", "timed"));
  row = strstr(r.out, "{\"key\":\"capped\",");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "\"next_due\":\"2030-01-01T00:00:00.000Z\","));
  ASSERT_NOT_NULL(
      strstr(row, "\"start\":\"2030-01-01T00:00:00.000Z\",\"end\":"
                  "\"2031-06-01T00:00:00.000Z\",\"max_fires\":3,\"fires\":0,"
                  "\"finished\":false,"));
  row = strstr(r.out, "{\"key\":\"ended\",");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "\"next_due\":null,"));
  ASSERT_NOT_NULL(strstr(row,
                         "\"start\":null,\"end\":\"2000-01-01T00:00:00.000Z\","
                         "\"max_fires\":null,\"fires\":0,\"finished\":true,"));
  cli_run_ok(&r, url, "qt", ARGS("cron", "ls", "--ns", "timed"));
  ASSERT_NOT_NULL(strstr(r.out, "MAX_FIRES"));
  ASSERT_NOT_NULL(strstr(r.out, "START"));
  ASSERT_NOT_NULL(strstr(r.out, "STATE"));
  row = strstr(r.out, "\ncapped ");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "2030-01-01T00:00:00.000Z  2031-06-01T00:00:00"
                              ".000Z  not started\n"));
  row = strstr(r.out, "\nended ");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "2000-01-01T00:00:00.000Z  finished\n"));
  /* One definition: a field a line, or JSON. */
  cli_run_ok(&r, url, "qt", ARGS("cron", "get", "capped", "--ns", "timed"));
  ASSERT_NOT_NULL(strstr(r.out, "namespace: "));
  ASSERT_NOT_NULL(strstr(r.out, "\nstart:        2030-01-01T00:00:00.000Z\n"
                                "end:          2031-06-01T00:00:00.000Z\n"
                                "max_fires:    3\nfires:        0\n"));
  ASSERT_NOT_NULL(strstr(r.out, "\nstate:        not started\n"));
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "cron", "get", "ended", "--ns", "timed"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"namespace\":\"timed\",\"key\":\"ended\","));
  ASSERT_NOT_NULL(strstr(r.out, "\"end\":\"2000-01-01T00:00:00.000Z\","
                                "\"max_fires\":null,\"fires\":0,\"finished\":"
                                "true,\"not_started\":false,\"state\":"
                                "\"finished\","));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "cron", "get", "nope"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "fleet: cron get: FLEET_ENOTFOUND"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "cron", "get"));
  ASSERT_EQ(2, r.status);
  cli_run_ok(&r, url, "qt", ARGS("cron", "ls", "--ns", "empty"));
  ASSERT_NOT_NULL(strstr(r.out, "namespace empty: 0 definition(s)\n"));
  ASSERT_EQ(1, cli_lines(r.out));

  /* History: newest first; the first fire failed. */
  cli_run_ok(&r, url, "qt", ARGS("cron", "history", "tick"));
  ASSERT_NOT_NULL(strstr(r.out, "cron tick in namespace cron: 3 entries\n"));
  ASSERT_NOT_NULL(strstr(r.out, "FIRE_TIME"));
  ASSERT_NOT_NULL(strstr(r.out, "OUTCOME"));
  ASSERT_EQ(5, cli_lines(r.out));
  row = strstr(r.out, "cli-node  3 ");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "completed\n"));
  row = strstr(r.out, "cli-node  1 ");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "failed: boom\n"));
  ASSERT(strstr(r.out, "cli-node  3 ") < strstr(r.out, "cli-node  2 "));
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "cron", "history", "tick", "--limit", "2"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"namespace\":\"cron\",\"key\":\"tick\","
                                "\"entries\":[{\"fire_time\":\"20"));
  ASSERT_NOT_NULL(strstr(r.out, "\"node\":\"cli-node\",\"token\":3,"));
  ASSERT_NOT_NULL(strstr(r.out, "\"node\":\"cli-node\",\"token\":2,"));
  ASSERT_NULL(strstr(r.out, "\"token\":1,"));
  ASSERT_NOT_NULL(strstr(r.out, "\"outcome\":\"completed\"}"));
  cli_run_ok(&r, url, "qt", ARGS("--json", "cron", "history", "nightly"));
  ASSERT_NOT_NULL(strstr(r.out, "\"key\":\"nightly\",\"entries\":[]}"));

  /* Errors: a missing definition, a bad limit, a bad namespace. */
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "cron", "history", "nope"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "fleet: cron history: FLEET_ENOTFOUND"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "cron", "history", "tick",
                   "--limit", "0"));
  ASSERT_EQ(2, r.status);
  cli_run(&r,
          ARGS("--url", url, "--prefix", "qt", "cron", "ls", "--ns", "a:b"));
  ASSERT_EQ(1, r.status);
  ASSERT_NOT_NULL(strstr(r.err, "FLEET_EINVAL"));
  cli_run(&r, ARGS("cron", "--help"));
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "usage: fleet cron"));

  /* A warm pool with its primary alive, then without. */
  wp = cli_fixture_warmpool(url, "qt", "sandboxes", 2);
  cli_run_ok(&r, url, "qt", ARGS("warmpool", "snapshot", "sandboxes"));
  ASSERT_NOT_NULL(strstr(r.out, "pool:           sandboxes\n"));
  ASSERT_NOT_NULL(strstr(r.out, "state:          healthy\n"));
  ASSERT_NOT_NULL(strstr(r.out, "idle:           2\n"));
  ASSERT_NOT_NULL(strstr(r.out, "target:         2\n"));
  ASSERT_NOT_NULL(strstr(r.out, "primary:        wp-node\n"));
  ASSERT_NOT_NULL(strstr(r.out, "primary_token:  1\n"));
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "warmpool", "snapshot", "sandboxes"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"pool\":\"sandboxes\",\"state\":\"healthy\","
                                "\"idle\":2,\"target\":2,\"borrowed\":0,"
                                "\"creating\":0,\"destroying\":0,\"primary\":"
                                "\"wp-node\",\"primary_token\":1,"));
  ASSERT_NOT_NULL(strstr(r.out, "\"failures\":0,\"backoff_ms\":0,"
                                "\"last_error\":null,\"fingerprint\":\""));
  cli_fixture_warmpool_close(wp);
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "warmpool", "snapshot", "sandboxes"));
  ASSERT_NOT_NULL(strstr(r.out, "\"state\":\"stopped\","));
  ASSERT_NOT_NULL(strstr(r.out, "\"primary\":null,"));
  /* A pool nobody started: no target, no fingerprint. */
  cli_run_ok(&r, url, "qt", ARGS("--json", "warmpool", "snapshot", "none"));
  ASSERT_NOT_NULL(strstr(r.out, "\"target\":null,"));
  ASSERT_NOT_NULL(strstr(r.out, "\"fingerprint\":null}"));
  cli_run(&r, ARGS("--url", url, "warmpool", "snapshot"));
  ASSERT_EQ(2, r.status);
  fleet_test_redis_stop(redis);
  return 0;
}
