/* test_cli_workers.c -- `fleet worker ls` and the dashboard's GET
 * /api/workers, run as a user runs them against a real redis-server with
 * two `fleet-demo worker` processes: both are listed with their pid and
 * the jobs they hold; one killed with SIGKILL is listed until its TTL runs
 * out and then no more; one stopped with SIGTERM (a clean close) is gone
 * at once. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"

#ifndef FLEET_DEMO_PATH
#define FLEET_DEMO_PATH "/nonexistent"
#endif

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

/* The workers beat every 2 s (a heartbeat of 1 s, held to the registry's
 * 2 s floor): their TTL is 6 s. */
#define WORKERS_TTL_MS 6000

static uint64_t now_ms(void) {
  return uv_hrtime() / 1000000;
}

/* How many entries of `fleet --json worker ls` have "pid":`pid`. */
static int listed(const char *url, pid_t pid, cli_run_t *r) {
  char key[48];
  const char *p;
  int n = 0;

  cli_run_ok(r, url, "fleet", ARGS("--json", "worker", "ls"));
  snprintf(key, sizeof(key), "\"pid\":%ld,", (long)pid);
  for (p = r->out; (p = strstr(p, key)) != NULL; p += strlen(key))
    n++;
  return n;
}

/* The jobs_held of the entry with "pid":`pid` in `json`, or -1. */
static long held_of(const char *json, pid_t pid) {
  char key[48];
  const char *p;

  snprintf(key, sizeof(key), "\"pid\":%ld,", (long)pid);
  if ((p = strstr(json, key)) == NULL ||
      (p = strstr(p, "\"jobs_held\":")) == NULL)
    return -1;
  return strtol(p + strlen("\"jobs_held\":"), NULL, 10);
}

/* A worker of `queue` whose jobs take a minute. */
static pid_t spawn_worker(const char *url, const char *queue, const char *tag) {
  return cli_spawn_prog(FLEET_DEMO_PATH,
                        ARGS("fleet-demo", "--url", url, "worker", "--queue",
                             queue, "--concurrency", "2", "--work-ms", "60000",
                             "--heartbeat-ms", "1000", "--claim-ttl-ms",
                             "30000"),
                        NULL, NULL, tag);
}

TEST_IMPL(cli_worker_ls) {
  fleet_test_redis_t *redis = fleet_test_redis_start_or_skip(NULL);
  const char *url = fleet_test_redis_url(redis);
  cli_run_t r;
  pid_t w1, w2, dash, enq;
  uint64_t t0, killed;
  char out[4096], *p;
  int port;

  cli_required();
  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("examples are not built");

  /* Nothing runs yet: a table with its header alone. */
  cli_run_ok(&r, url, "fleet", ARGS("worker", "ls"));
  ASSERT_EQ(1, cli_lines(r.out));
  ASSERT(strncmp(r.out, "ID  KIND  NAME  HOST  PID  STARTED  SEEN  JOBS",
                 strlen("ID  KIND  NAME")) == 0);

  /* Two workers, and two jobs that the first holds for a minute (the
   * second's queue has none). */
  w1 = spawn_worker(url, "wq", "wls-1");
  w2 = spawn_worker(url, "idle", "wls-2");
  enq = cli_spawn_prog(FLEET_DEMO_PATH,
                       ARGS("fleet-demo", "--url", url, "enqueue", "--queue",
                            "wq", "--count", "2"),
                       NULL, NULL, "wls-enq");
  cli_reap(enq, "wls-enq", &r);
  ASSERT_EQ(0, r.status);

  /* Both are listed, with the jobs they hold (2 in all), by their beats. */
  t0 = now_ms();
  for (;;) {
    if (listed(url, w1, &r) == 1 && listed(url, w2, &r) == 1 &&
        held_of(r.out, w1) == 2 && held_of(r.out, w2) == 0)
      break;
    ASSERT(now_ms() - t0 < fleet_test_ms(10000));
    usleep(100000);
  }
  ASSERT(strstr(r.out, "\"kind\":\"queue\",\"name\":\"wq\"") != NULL);
  ASSERT(strstr(r.out, "\"started\":\"20") != NULL);
  p = strstr(r.out, "\"seen\":\"");
  ASSERT_NOT_NULL(p);
  ASSERT_EQ('Z', p[strlen("\"seen\":\"") + 24 - 1]);

  /* The table: a header and one row each, the jobs counted. */
  cli_run_ok(&r, url, "fleet", ARGS("worker", "ls", "--kind", "queue"));
  ASSERT_EQ(3, cli_lines(r.out));
  snprintf(out, sizeof(out), "  %ld  ", (long)w1);
  ASSERT(strstr(r.out, out) != NULL);
  snprintf(out, sizeof(out), "  %ld  ", (long)w2);
  ASSERT(strstr(r.out, out) != NULL);
  cli_run_ok(&r, url, "fleet", ARGS("worker", "ls", "--kind", "pool"));
  ASSERT_EQ(1, cli_lines(r.out));
  cli_run(&r, ARGS("--url", url, "worker", "ls", "--kind", "bus"));
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, cli_lines(r.err));

  /* The dashboard serves the same listing. */
  dash = cli_spawn(ARGS("--url", url, "dash", "--listen", "127.0.0.1:0"),
                   "wls-dash");
  t0 = now_ms();
  do {
    usleep(20000);
    cli_read_out("wls-dash", out, sizeof(out));
  } while (strchr(out, '\n') == NULL && now_ms() - t0 < fleet_test_ms(5000));
  p = strstr(out, "fleet dash: http://127.0.0.1:");
  ASSERT_NOT_NULL(p);
  port = atoi(p + strlen("fleet dash: http://127.0.0.1:"));
  ASSERT_EQ(200,
            cli_http(port, "GET", "/api/workers", NULL, r.out, sizeof(r.out)));
  p = strstr(r.out, "\r\n\r\n{\"workers\":[{\"id\":\"");
  ASSERT_NOT_NULL(p);
  snprintf(out, sizeof(out), "\"pid\":%ld,", (long)w1);
  ASSERT(strstr(p, out) != NULL);
  snprintf(out, sizeof(out), "\"pid\":%ld,", (long)w2);
  ASSERT(strstr(p, out) != NULL);
  ASSERT(strstr(p, "\"jobs\":[") != NULL);
  ASSERT_OK(kill(dash, SIGINT));
  cli_reap(dash, "wls-dash", &r);
  ASSERT_EQ(0, r.status);

  /* SIGKILL: no goodbye. The entry stays until its TTL runs out (its
   * last beat was at most one period before the kill), then goes. */
  ASSERT_OK(kill(w1, SIGKILL));
  killed = now_ms();
  ASSERT_EQ(w1, waitpid(w1, NULL, 0));
  if (now_ms() - killed < WORKERS_TTL_MS / 3)
    ASSERT_EQ(1, listed(url, w1, &r));
  while (listed(url, w1, &r) != 0) {
    ASSERT(now_ms() - killed < fleet_test_ms(WORKERS_TTL_MS + 2000));
    usleep(100000);
  }
  ASSERT_GE(now_ms() - killed, WORKERS_TTL_MS - 2000);
  ASSERT_EQ(1, listed(url, w2, &r));

  /* SIGTERM: the worker stops and closes, and its entry goes with it. */
  ASSERT_OK(kill(w2, SIGTERM));
  cli_reap_within(w2, "wls-2", &r, fleet_test_ms(20000));
  ASSERT_EQ(0, listed(url, w2, &r));
  cli_run_ok(&r, url, "fleet", ARGS("worker", "ls"));
  ASSERT_EQ(1, cli_lines(r.out));

  fleet_test_redis_free(redis);
  return 0;
}
