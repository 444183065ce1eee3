/* test_queue_stop_mp.c -- a running job cancelled from another process,
 * and a job over its timeout, on Redis: `fleet-demo worker` processes
 * write --ledger-cancel (one line per notification their handler heard,
 * "<id> told cancel|timeout <unix_ms>", and per job settled, "<id>
 * complete|fail|release ok|<error name> <unix_ms>", one O_APPEND file),
 * the test process is the canceller and records the times of its calls,
 * and the guarantees are checked from the records:
 *
 * - a worker that stops when told: it hears the cancel after the call was
 *   made, its completion comes after that and is turned into the
 *   cancelled end (FLEET_ECANCELED), and the job is dead, "cancelled";
 * - a worker that works on (--ignore-cancel): the job ends as cancelled
 *   once the grace has passed (recovery, in the worker process), and the
 *   zombie's late completion is refused (FLEET_ESTALE);
 * - a job enqueued by `fleet-demo enqueue --timeout-ms`: its handler is
 *   told "timeout" no sooner than the timeout after it started, and the
 *   job is dead with "timed out after <ms> ms". */
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_queue_util.h"

#ifdef FLEET_DEMO_PATH
#define LM_DEMO_REQUIRED()
#else
#define FLEET_DEMO_PATH "/nonexistent"
#define LM_DEMO_REQUIRED() fleet_test_skip("examples are not built")
#endif

#define LM_PREFIX "lmp"
#define LM_WORKERS 2
#define LM_LINES 16

/* One line of a --ledger-cancel file. */
typedef struct {
  char id[64], what[16], detail[32];
  uint64_t ms;
} lm_line_t;

typedef struct {
  fleet_test_redis_t *redis;
  qt_t t;
  char url[128];
  char ledger[LM_WORKERS][512];
  char err[LM_WORKERS][512];
  pid_t pids[LM_WORKERS];
  lm_line_t l[LM_LINES];
  int n;
} lm_t;

/* The wall clock in ms, as the demo's ledgers write it. */
static uint64_t lm_unix_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Runs `argv` (fleet-demo) to its end; returns its exit status. */
static int lm_run(char **argv) {
  pid_t pid;
  int st;

  fflush(stdout);
  fflush(stderr);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int o = open("/dev/null", O_WRONLY);
    if (o < 0 || dup2(o, 1) < 0)
      _exit(127);
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Starts worker `i` on `queue` working `work_ms` per job, with its
 * ledger; `ignore`: --ignore-cancel. */
static void lm_spawn(lm_t *m, int i, const char *queue, const char *work_ms,
                     int ignore) {
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char *argv[] = {"fleet-demo",
                  "--url",
                  m->url,
                  "--prefix",
                  LM_PREFIX,
                  "worker",
                  "--queue",
                  (char *)queue,
                  "--concurrency",
                  "2",
                  "--work-ms",
                  (char *)work_ms,
                  "--ledger-cancel",
                  m->ledger[i],
                  ignore ? "--ignore-cancel" : NULL,
                  NULL};
  pid_t pid;

  snprintf(m->ledger[i], sizeof(m->ledger[i]), "%s/life-mp-%d-%d.ledger", tmp,
           (int)getpid(), i);
  snprintf(m->err[i], sizeof(m->err[i]), "%s/life-mp-%d-%d.err", tmp,
           (int)getpid(), i);
  unlink(m->ledger[i]);
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int o = open("/dev/null", O_WRONLY);
    int e = open(m->err[i], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
      _exit(127);
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  m->pids[i] = pid;
}

/* Reads worker `i`'s ledger into m->l. */
static void lm_read(lm_t *m, int i) {
  char buf[256];
  FILE *f = fopen(m->ledger[i], "r");

  m->n = 0;
  if (f == NULL)
    return;
  while (fgets(buf, sizeof(buf), f) != NULL && m->n < LM_LINES) {
    lm_line_t *l = &m->l[m->n++];
    unsigned long long ms;
    ASSERT_EQ(
        4, sscanf(buf, "%63s %15s %31s %llu", l->id, l->what, l->detail, &ms));
    l->ms = ms;
  }
  fclose(f);
}

/* The line of job `id` whose second word is `what`, NULL when none. */
static const lm_line_t *lm_find(const lm_t *m, const char *id,
                                const char *what) {
  for (int i = 0; i < m->n; i++)
    if (strcmp(m->l[i].id, id) == 0 && strcmp(m->l[i].what, what) == 0)
      return &m->l[i];
  return NULL;
}

/* Polls worker `i`'s ledger until job `id` has a `what` line, for up to
 * `ms` (scaled); fails the test otherwise. */
static const lm_line_t *lm_wait_line(lm_t *m, int i, const char *id,
                                     const char *what, uint64_t ms) {
  uint64_t t0 = uv_now(&m->t.c.loop);
  const lm_line_t *l;

  for (;;) {
    lm_read(m, i);
    if ((l = lm_find(m, id, what)) != NULL)
      return l;
    if (uv_now(&m->t.c.loop) - t0 > fleet_test_ms(ms))
      fleet_test__fail(__FILE__, __LINE__, "no \"%s %s\" line in %s", id, what,
                       m->ledger[i]);
    qt_sleep(&m->t, 20);
  }
}

/* Polls job `id` of `t`'s queue until it is in `state`, for up to `ms`
 * (scaled). */
static void lm_wait_state(qt_t *t, const char *id, fleet_job_state_t state,
                          uint64_t ms) {
  uint64_t t0 = uv_now(&t->c.loop);
  fleet_job_info_t info;

  for (;;) {
    if (qt_get(t, id, &info, NULL, 0, NULL, 0) == 0 && info.state == state)
      return;
    if (uv_now(&t->c.loop) - t0 > fleet_test_ms(ms))
      fleet_test__fail(__FILE__, __LINE__, "job %s never %s", id,
                       fleet_job_state_name(state));
    qt_sleep(t, 20);
  }
}

/* Checks job `id` of `t`'s queue is dead with the error `want`; returns
 * when it finished (backend clock). */
static uint64_t lm_dead(qt_t *t, const char *id, const char *want) {
  fleet_job_info_t info;
  char err[128];

  ASSERT_OK(qt_get(t, id, &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_STR_EQ(want, err);
  return info.finished_ms;
}

/* Enqueues job `id` on `t`'s queue (one attempt). */
static void lm_add(qt_t *t, const char *id) {
  fleet_job_spec_t spec;
  int st[1];

  fleet_job_spec_init(&spec, "mp", "x", 1);
  spec.id = id;
  spec.max_attempts = 1;
  ASSERT_OK(qt_enqueue(t, &spec, 1, st, NULL));
  ASSERT_OK(st[0]);
}

TEST_IMPL(queue_stop_mp_cancel) {
  lm_t m;
  qt_t g;
  const lm_line_t *told, *end;
  uint64_t call_at, finished, grace = fleet_test_ms(300), work = grace + 2500;
  char work_s[24], tmo_s[24], want[64];
  char *enq[] = {
      "fleet-demo",     "--url",   m.url,          "--prefix", LM_PREFIX,
      "enqueue",        "--queue", "lc",           "--count",  "1",
      "--max-attempts", "1",       "--timeout-ms", tmo_s,      NULL};
  char *enq0[] = {"fleet-demo",   "--url",   m.url, "--prefix", LM_PREFIX,
                  "enqueue",      "--queue", "lc",  "--count",  "1",
                  "--timeout-ms", "0",       NULL};
  int i, st;

  LM_DEMO_REQUIRED();
  memset(&m, 0, sizeof(m));
  m.redis = fleet_test_redis_start_or_skip(NULL);
  snprintf(m.url, sizeof(m.url), "%s", fleet_test_redis_url(m.redis));
  qt_open_prefix(&m.t, m.url, LM_PREFIX, "lc", NULL);
  qt_open_prefix(&g, m.url, LM_PREFIX, "lg", NULL);
  snprintf(work_s, sizeof(work_s), "%llu", (unsigned long long)work);
  /* Worker 0 stops its jobs when told; worker 1 works on. */
  lm_spawn(&m, 0, "lc", "600000", 0);
  lm_spawn(&m, 1, "lg", work_s, 1);

  /* A cancel from this process reaches worker 0's handler, after the
   * call; its completion then ends the job as cancelled. */
  lm_add(&m.t, "a");
  lm_wait_state(&m.t, "a", FLEET_JOB_RUNNING, FLEET_TEST_WAIT_MS);
  call_at = lm_unix_ms();
  ASSERT_OK(qt_cancel_job(&m.t, "a", 60000));
  ASSERT_EQ(FLEET_CANCEL_REQUESTED, m.t.cancel_result);
  told = lm_wait_line(&m, 0, "a", "told", FLEET_TEST_WAIT_MS);
  ASSERT_STR_EQ("cancel", told->detail);
  ASSERT_GE(told->ms, call_at);
  end = lm_wait_line(&m, 0, "a", "complete", FLEET_TEST_WAIT_MS);
  ASSERT_STR_EQ("FLEET_ECANCELED", end->detail);
  ASSERT_GE(end->ms, told->ms);
  lm_dead(&m.t, "a", "cancelled");

  /* Worker 1 ignores it: the job ends as cancelled (by recovery) once the
   * grace has passed and before the late completion, which is refused. */
  lm_add(&g, "b");
  lm_wait_state(&g, "b", FLEET_JOB_RUNNING, FLEET_TEST_WAIT_MS);
  call_at = lm_unix_ms();
  ASSERT_OK(qt_cancel_job(&g, "b", (uint32_t)grace));
  told = lm_wait_line(&m, 1, "b", "told", FLEET_TEST_WAIT_MS);
  ASSERT_GE(told->ms, call_at);
  end = lm_wait_line(&m, 1, "b", "complete", work + FLEET_TEST_WAIT_MS);
  ASSERT_STR_EQ("FLEET_ESTALE", end->detail);
  ASSERT_GE(end->ms, call_at + grace);
  finished = lm_dead(&g, "b", "cancelled");
  /* (The backend's clock and the ledgers' are this machine's.) */
  ASSERT_GE(finished + 2, call_at + grace);
  ASSERT_LE(finished, end->ms + 2);

  /* fleet-demo enqueue --timeout-ms: 0 is refused; a job over its
   * timeout is told, then dead with the timeout's error. */
  ASSERT_EQ(2, lm_run(enq0));
  snprintf(tmo_s, sizeof(tmo_s), "%llu", (unsigned long long)grace);
  call_at = lm_unix_ms();
  ASSERT_EQ(0, lm_run(enq));
  {
    /* The demo's job has a generated id: the one line told "timeout". */
    uint64_t t0 = uv_now(&m.t.c.loop);
    told = NULL;
    while (told == NULL) {
      lm_read(&m, 0);
      for (i = 0; i < m.n; i++)
        if (strcmp(m.l[i].what, "told") == 0 &&
            strcmp(m.l[i].detail, "timeout") == 0)
          told = &m.l[i];
      ASSERT_LT(uv_now(&m.t.c.loop) - t0, fleet_test_ms(FLEET_TEST_WAIT_MS));
      if (told == NULL)
        qt_sleep(&m.t, 20);
    }
    ASSERT_GE(told->ms + 2, call_at + grace);
    snprintf(want, sizeof(want), "timed out after %s ms", tmo_s);
    lm_wait_state(&m.t, told->id, FLEET_JOB_DEAD, FLEET_TEST_WAIT_MS);
    lm_dead(&m.t, told->id, want);
    end = lm_wait_line(&m, 0, told->id, "fail", FLEET_TEST_WAIT_MS);
    ASSERT_STR_EQ("ok", end->detail);
  }

  for (i = 0; i < LM_WORKERS; i++)
    ASSERT_OK(kill(m.pids[i], SIGTERM));
  for (i = 0; i < LM_WORKERS; i++) {
    ASSERT_EQ(m.pids[i], waitpid(m.pids[i], &st, 0));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      fleet_test__fail(__FILE__, __LINE__,
                       "worker %d ended with status %#x (see %s)", i, st,
                       m.err[i]);
    unlink(m.err[i]);
    unlink(m.ledger[i]);
  }
  qt_close(&g);
  qt_close(&m.t);
  fleet_test_redis_free(m.redis);
  return 0;
}
