/* test_queue_flow_mp.c -- flow control across processes, on Redis: four
 * `fleet-demo worker` processes on one queue, each writing
 * --ledger-times (one line per completed job: "<id> <group or -> <start_ms>
 * <end_ms>", unix ms, one O_APPEND file shared by all), and the limits
 * checked from the merged ledger:
 *
 * - a rate limit of 50 jobs per 1000 ms: no 1000 ms of start times holds
 *   more than 50 jobs, beyond the bound QF_MP_RATE_SLACK below;
 * - a concurrency limit of 3: never more than 3 jobs running at once,
 *   beyond the bound QF_MP_ACK_MS below;
 * - fairness: a small group enqueued behind a large group's backlog
 *   finishes before a quarter of the large group has.
 *
 * The test process enqueues and sets the limits with the library, as a
 * producer would, under the demo's key prefix. */
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_queue_util.h"

/* tests/CMakeLists.txt passes the demo's path when examples are built. */
#ifdef FLEET_DEMO_PATH
#define QF_MP_DEMO_REQUIRED()
#else
#define FLEET_DEMO_PATH "/nonexistent"
#define QF_MP_DEMO_REQUIRED() fleet_test_skip("examples are not built")
#endif

#define QF_MP_WORKERS 4
#define QF_MP_JOBS_MAX 400
#define QF_MP_PREFIX "fmp"

/* The bounds of what a ledger of client clocks can show of a limit held
 * on the server clock:
 *
 * - A start is the claim's server time (in whole ms) plus the
 *   claim-to-handler latency, which varies by claim. The claims of one
 *   window come again exactly one window later at the earliest, and one
 *   whose handler ran sooner after its claim than its forerunner's can
 *   fall in the same 1000 ms of start times: the jobs started in the
 *   first D ms of a 1000 ms window may have been claimed in the window
 *   before (D bounding the latency, plus 1 ms for the whole ms). So no
 *   1000 - D ms of start times holds more than the limit. D is
 *   QF_MP_LATENCY_MS, scaled.
 * - An end is when the worker heard its completion accepted, which is
 *   after the server freed the slot: another worker's job may start in
 *   between. QF_MP_ACK_MS (scaled) is taken off each end. */
#define QF_MP_LATENCY_MS 5
#define QF_MP_ACK_MS 10

/* One line of the ledger. */
typedef struct {
  char id[64];
  char group[FLEET_JOB_GROUP_MAX + 1];
  uint64_t start, end;
} qf_mp_entry_t;

typedef struct {
  fleet_test_redis_t *redis;
  qt_t t;
  char url[128];
  char ledger[512];
  char err[QF_MP_WORKERS][512];
  pid_t pids[QF_MP_WORKERS];
  qf_mp_entry_t e[QF_MP_JOBS_MAX];
  int n;
} qf_mp_t;

static void qf_mp_open(qf_mp_t *m, const char *queue) {
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";

  memset(m, 0, sizeof(*m));
  m->redis = fleet_test_redis_start_or_skip(NULL);
  snprintf(m->url, sizeof(m->url), "%s", fleet_test_redis_url(m->redis));
  snprintf(m->ledger, sizeof(m->ledger), "%s/flow-mp-%s-%d.times", tmp, queue,
           (int)getpid());
  unlink(m->ledger);
  qt_open_prefix(&m->t, m->url, QF_MP_PREFIX, queue, NULL);
}

/* Starts worker `i` of `queue`: fleet-demo worker, its stderr to a file
 * (kept when the test fails). */
static void qf_mp_spawn(qf_mp_t *m, int i, const char *queue,
                        const char *concurrency, const char *work_ms) {
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char *argv[] = {"fleet-demo",        "--url",       m->url,
                  "--prefix",          QF_MP_PREFIX,  "worker",
                  "--queue",           (char *)queue, "--concurrency",
                  (char *)concurrency, "--work-ms",   (char *)work_ms,
                  "--ledger-times",    m->ledger,     NULL};
  pid_t pid;

  snprintf(m->err[i], sizeof(m->err[i]), "%s/flow-mp-%s-%d-%d.err", tmp, queue,
           (int)getpid(), i);
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

/* Waits until the queue completed `n` jobs, polling its counts; fails the
 * test past `ms` (scaled). */
static void qf_mp_wait(qf_mp_t *m, uint64_t n, uint64_t ms) {
  uint64_t t0 = uv_now(&m->t.c.loop);

  for (;;) {
    ASSERT_OK(qt_counts(&m->t));
    if (m->t.counts.completed >= n)
      break;
    if (uv_now(&m->t.c.loop) - t0 > fleet_test_ms(ms))
      fleet_test__fail(__FILE__, __LINE__,
                       "%" PRIu64 " of %" PRIu64 " jobs completed in %" PRIu64
                       " ms",
                       m->t.counts.completed, n, fleet_test_ms(ms));
    qt_sleep(&m->t, 50);
  }
  ASSERT_UEQ(n, m->t.counts.completed);
  ASSERT_UEQ(0, m->t.counts.pending + m->t.counts.running + m->t.counts.dead);
}

/* Stops every worker with SIGTERM (each exits 0), then reads the ledger:
 * each of the `n` jobs exactly once. */
static void qf_mp_stop_read(qf_mp_t *m, int n) {
  char buf[512];
  FILE *f;
  int i, j, st;

  for (i = 0; i < QF_MP_WORKERS; i++)
    if (m->pids[i] > 0)
      ASSERT_OK(kill(m->pids[i], SIGTERM));
  for (i = 0; i < QF_MP_WORKERS; i++) {
    if (m->pids[i] <= 0)
      continue;
    ASSERT_EQ(m->pids[i], waitpid(m->pids[i], &st, 0));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      fleet_test__fail(__FILE__, __LINE__,
                       "worker %d ended with status %#x (see %s)", i, st,
                       m->err[i]);
    unlink(m->err[i]);
  }
  f = fopen(m->ledger, "r");
  ASSERT_NOT_NULL(f);
  while (fgets(buf, sizeof(buf), f) != NULL) {
    qf_mp_entry_t *e;
    unsigned long long s, en;
    ASSERT_LT(m->n, QF_MP_JOBS_MAX);
    e = &m->e[m->n++];
    ASSERT_EQ(4, sscanf(buf, "%63s %128s %llu %llu", e->id, e->group, &s, &en));
    e->start = s;
    e->end = en;
    ASSERT_LE(e->start, e->end);
  }
  fclose(f);
  unlink(m->ledger);
  ASSERT_EQ(n, m->n);
  for (i = 0; i < m->n; i++)
    for (j = i + 1; j < m->n; j++)
      ASSERT_STR_NE(m->e[i].id, m->e[j].id);
}

static void qf_mp_close(qf_mp_t *m) {
  qt_close(&m->t);
  fleet_test_redis_free(m->redis);
}

/* Enqueues `n` jobs with ids "<stem>-<i>" (i from 0), of `group` (NULL:
 * none). */
static void qf_mp_enqueue(qf_mp_t *m, const char *stem, const char *group,
                          int n) {
  static fleet_job_spec_t specs[QF_MP_JOBS_MAX];
  static char ids[QF_MP_JOBS_MAX][64];
  int i;

  ASSERT_LE(n, QF_MP_JOBS_MAX);
  for (i = 0; i < n; i++) {
    snprintf(ids[i], sizeof(ids[i]), "%s-%d", stem, i);
    fleet_job_spec_init(&specs[i], "mp", "x", 1);
    specs[i].id = ids[i];
    specs[i].group = group;
  }
  ASSERT_OK(qt_enqueue(&m->t, specs, (size_t)n, NULL, NULL));
}

static int qf_mp_cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The most start times in a window of `ms` (from a sorted array). */
static int qf_mp_most_in(const uint64_t *starts, int n, uint64_t ms,
                         uint64_t *at) {
  int i, j = 0, most = 0;

  for (i = 0; i < n; i++) {
    while (j < n && starts[j] < starts[i] + ms)
      j++;
    if (j - i > most) {
      most = j - i;
      *at = starts[i];
    }
  }
  return most;
}

/* 200 jobs at 50 per 1000 ms on 4 workers of concurrency 8: from the start
 * times, no 1000 - D ms holds more than 50 jobs (D: QF_MP_LATENCY_MS,
 * scaled), nor from the end times with D the latency and QF_MP_ACK_MS,
 * and the run took three windows. */
TEST_IMPL(queue_flow_mp_rate) {
  fleet_queue_limits_t l;
  uint64_t starts[QF_MP_JOBS_MAX], ends[QF_MP_JOBS_MAX], at = 0;
  uint64_t d = fleet_test_ms(QF_MP_LATENCY_MS);
  qf_mp_t *m = calloc(1, sizeof(*m));
  int i, most;

  QF_MP_DEMO_REQUIRED();
  ASSERT_NOT_NULL(m);
  qf_mp_open(m, "rate");
  memset(&l, 0, sizeof(l));
  l.rate_max = 50;
  l.rate_ms = 1000;
  ASSERT_OK(qt_set_limits(&m->t, &l));
  qf_mp_enqueue(m, "r", NULL, 200);
  for (i = 0; i < QF_MP_WORKERS; i++)
    qf_mp_spawn(m, i, "rate", "8", "5");
  qf_mp_wait(m, 200, 15000);
  qf_mp_stop_read(m, 200);
  for (i = 0; i < m->n; i++)
    starts[i] = m->e[i].start;
  qsort(starts, (size_t)m->n, sizeof(starts[0]), qf_mp_cmp_u64);
  /* What the ledger shows over whole windows, for the log: starts, and
   * ends (completions). */
  for (i = 0; i < m->n; i++)
    ends[i] = m->e[i].end;
  qsort(ends, (size_t)m->n, sizeof(ends[0]), qf_mp_cmp_u64);
  most = qf_mp_most_in(starts, m->n, 1000, &at);
  fprintf(stderr,
          "# rate: at most %d jobs started and %d completed in 1000 ms\n", most,
          qf_mp_most_in(ends, m->n, 1000, &at));
  most = qf_mp_most_in(starts, m->n, 1000 - d, &at);
  if (most > 50)
    fleet_test__fail(__FILE__, __LINE__,
                     "%d jobs started in the %" PRIu64 " ms from %" PRIu64
                     ", limit 50",
                     most, 1000 - d, at);
  /* Completions: their latency adds the work's timer and the
   * completion's round trip. */
  most = qf_mp_most_in(
      ends, m->n, 1000 - fleet_test_ms(QF_MP_LATENCY_MS + QF_MP_ACK_MS), &at);
  if (most > 50)
    fleet_test__fail(
        __FILE__, __LINE__,
        "%d jobs completed in the %" PRIu64 " ms from %" PRIu64 ", limit 50",
        most, 1000 - fleet_test_ms(QF_MP_LATENCY_MS + QF_MP_ACK_MS), at);
  /* 200 jobs at 50 a window: the last was claimed 3 windows after the
   * first. */
  ASSERT_UGE(starts[m->n - 1] + d, starts[0] + 3000);
  qf_mp_close(m);
  free(m);
  return 0;
}

/* 60 jobs of 40 ms under a concurrency limit of 3 on 4 workers of
 * concurrency 4: from the start and end times, never more than 3 running
 * at once (an end taken as QF_MP_ACK_MS, scaled, earlier), and 3 did run
 * at once. */
TEST_IMPL(queue_flow_mp_concurrency) {
  fleet_queue_limits_t l;
  qf_mp_t *m = calloc(1, sizeof(*m));
  uint64_t ack = fleet_test_ms(QF_MP_ACK_MS);
  int i, j, most = 0, most_raw = 0;

  QF_MP_DEMO_REQUIRED();
  ASSERT_NOT_NULL(m);
  qf_mp_open(m, "conc");
  memset(&l, 0, sizeof(l));
  l.concurrency = 3;
  ASSERT_OK(qt_set_limits(&m->t, &l));
  qf_mp_enqueue(m, "c", NULL, 60);
  for (i = 0; i < QF_MP_WORKERS; i++)
    qf_mp_spawn(m, i, "conc", "4", "40");
  qf_mp_wait(m, 60, 15000);
  qf_mp_stop_read(m, 60);
  for (i = 0; i < m->n; i++) {
    int running = 0, raw = 0;
    for (j = 0; j < m->n; j++) {
      if (m->e[j].start > m->e[i].start)
        continue;
      raw += m->e[j].end > m->e[i].start;
      running += m->e[j].end > m->e[i].start + ack;
    }
    if (running > most)
      most = running;
    if (raw > most_raw)
      most_raw = raw;
  }
  fprintf(stderr,
          "# concurrency: at most %d at once (%d counting ends "
          "as logged)\n",
          most, most_raw);
  ASSERT_LE(most, 3);
  ASSERT_GE(most_raw, 3);
  qf_mp_close(m);
  free(m);
  return 0;
}

/* 300 jobs of group "big", then 5 of "small", on 4 workers of concurrency
 * 2: claims rotate between the groups, so every small job has finished
 * before a quarter of the big ones have. */
TEST_IMPL(queue_flow_mp_fair) {
  qf_mp_t *m = calloc(1, sizeof(*m));
  uint64_t big_ends[QF_MP_JOBS_MAX], small_last = 0;
  int i, nbig = 0, nsmall = 0;

  QF_MP_DEMO_REQUIRED();
  ASSERT_NOT_NULL(m);
  qf_mp_open(m, "fair");
  qf_mp_enqueue(m, "big", "big", 300);
  qf_mp_enqueue(m, "small", "small", 5);
  for (i = 0; i < QF_MP_WORKERS; i++)
    qf_mp_spawn(m, i, "fair", "2", "5");
  qf_mp_wait(m, 305, 20000);
  qf_mp_stop_read(m, 305);
  for (i = 0; i < m->n; i++) {
    int small = strncmp(m->e[i].id, "small-", 6) == 0;
    /* The group column: "-" from a demo that does not write groups. */
    if (strcmp(m->e[i].group, "-") != 0)
      ASSERT_STR_EQ(small ? "small" : "big", m->e[i].group);
    if (small) {
      nsmall++;
      if (m->e[i].end > small_last)
        small_last = m->e[i].end;
    } else {
      ASSERT_EQ(0, strncmp(m->e[i].id, "big-", 4));
      big_ends[nbig++] = m->e[i].end;
    }
  }
  ASSERT_EQ(5, nsmall);
  ASSERT_EQ(300, nbig);
  qsort(big_ends, (size_t)nbig, sizeof(big_ends[0]), qf_mp_cmp_u64);
  for (i = 0; i < nbig && big_ends[i] <= small_last; i++)
    ;
  fprintf(stderr, "# fair: the small group done after %d of %d big jobs\n", i,
          nbig);
  ASSERT_ULE(small_last, big_ends[nbig / 4 - 1]);
  qf_mp_close(m);
  free(m);
  return 0;
}
