/* test_demo.c -- the demo program, run as a user runs it: exit codes,
 * one-line errors, run on memory, enqueue/stats/worker on Redis, and a
 * pool node and a warm-pool node refused when their id is in use. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

/* tests/CMakeLists.txt passes the demo's path when examples are built. */
#ifdef FLEET_DEMO_PATH
#define DEMO_REQUIRED()
#else
#define FLEET_DEMO_PATH "/nonexistent"
#define DEMO_REQUIRED() fleet_test_skip("examples are not built")
#endif

/* What one run of the demo printed, and how it ended. */
typedef struct {
  int status; /* exit code, or 128 + signal */
  char out[4096];
  char err[4096];
  uint64_t ms;
} demo_run_t;

static void read_file(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : -1;

  buf[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close(fd);
}

/* Starts the demo with `argv` (argv[0] is ignored), its output going to
 * files in $TMPDIR. Returns its pid. */
static pid_t demo_spawn(char *const argv[], const char *tag) {
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char out[512], err[512];
  pid_t pid;

  snprintf(out, sizeof(out), "%s/demo-%s.out", tmp, tag);
  snprintf(err, sizeof(err), "%s/demo-%s.err", tmp, tag);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
      _exit(127);
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  return pid;
}

static void demo_reap(pid_t pid, const char *tag, demo_run_t *r) {
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char path[512];
  int st;

  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  snprintf(path, sizeof(path), "%s/demo-%s.out", tmp, tag);
  read_file(path, r->out, sizeof(r->out));
  snprintf(path, sizeof(path), "%s/demo-%s.err", tmp, tag);
  read_file(path, r->err, sizeof(r->err));
}

/* Runs the demo to its end. */
static void demo_run(demo_run_t *r, char *const argv[]) {
  uint64_t t0 = uv_hrtime();
  demo_reap(demo_spawn(argv, "run"), "run", r);
  r->ms = (uv_hrtime() - t0) / 1000000;
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s != '\0'; s++)
    n += *s == '\n';
  return n;
}

/* The JSON field `name` of a stats line, as an integer. */
static long stats_field(const char *json, const char *name) {
  char key[64];
  const char *p;

  snprintf(key, sizeof(key), "\"%s\":", name);
  p = strstr(json, key);
  ASSERT_NOT_NULL(p);
  return strtol(p + strlen(key), NULL, 10);
}

/* Bad URLs, bad flags and an unreachable backend: a non-zero exit and
 * exactly one line on stderr, at once. */
TEST_IMPL(demo_errors) {
  char *bad_url[] = {"d", "--url", "redis//x", "stats", "--queue", "q", NULL};
  char *bad_flag[] = {"d", "run", "--jobs", "abc", NULL};
  char *unknown[] = {"d", "frobnicate", NULL};
  char *no_queue[] = {"d", "stats", NULL};
  char url[64];
  char *refused[] = {"d", "--url",         url, "worker",    "--queue",
                     "q", "--concurrency", "2", "--work-ms", "1",
                     NULL};
  demo_run_t r;

  DEMO_REQUIRED();
  demo_run(&r, bad_url);
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, count_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "FLEET_EBADURL"));
  demo_run(&r, bad_flag);
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, count_lines(r.err));
  demo_run(&r, no_queue);
  ASSERT_EQ(2, r.status);
  demo_run(&r, unknown);
  ASSERT_NE(0, r.status);

  /* Port 1 on loopback: nothing listens, the connection is refused. */
  snprintf(url, sizeof(url), "redis://127.0.0.1:1");
  demo_run(&r, refused);
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, count_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "FLEET_ECONNREFUSED"));
  /* Well within the 5 s connect timeout. */
  ASSERT_LT(r.ms, 2500);
  return 0;
}

/* run on memory: produces and processes every job, then a summary. */
TEST_IMPL(demo_run_memory) {
  char *argv[] = {"d",  "run",       "--jobs", "500", "--concurrency",
                  "10", "--work-ms", "1",      NULL};
  demo_run_t r;

  DEMO_REQUIRED();
  demo_run(&r, argv);
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "500 jobs completed"));
  ASSERT_NOT_NULL(strstr(r.out, " 0 errors"));
  return 0;
}

/* The wall clock in ms since the Unix epoch, as --ledger-times writes it. */
static uint64_t demo_test_unix_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* enqueue, stats, and a worker with both ledgers and --fail-every on
 * Redis: every job completes once, the worker stops on SIGTERM with exit
 * 0, and --ledger-times has one line per job, "<id> - <start> <end>", its
 * times within the test's and in order. */
TEST_IMPL(demo_worker_redis) {
  fleet_test_redis_t *redis;
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char url[128], ledger[512], times[512], seen[64];
  /* Enough attempts that a retried job never runs out of them: jobs 1 to
   * 40 in group "a b" (a space, which the ledger escapes), 41 to 60 in
   * none. */
  char *enq_group[] = {"d",       "--url",   url,  "enqueue",        "--queue",
                       "jobs",    "--count", "40", "--max-attempts", "10",
                       "--group", "a b",     NULL};
  char *enq[] = {"d",    "--url",   url,  "enqueue",        "--queue",
                 "jobs", "--count", "20", "--max-attempts", "10",
                 NULL};
  char *bad_group[] = {"d",       "--url", url,       "enqueue",
                       "--queue", "jobs",  "--count", "1",
                       "--group", "",      NULL};
  char *stats[] = {"d", "--url", url, "stats", "--queue", "jobs", NULL};
  char *worker[] = {"d",
                    "--url",
                    url,
                    "worker",
                    "--queue",
                    "jobs",
                    "--concurrency",
                    "8",
                    "--work-ms",
                    "2",
                    "--fail-every",
                    "7",
                    "--ledger",
                    ledger,
                    "--ledger-times",
                    times,
                    NULL};
  char buf[4096], *line;
  demo_run_t r;
  pid_t pid;
  long completed = 0, ids[60];
  int i, n = 0, ungrouped = 0;
  uint64_t t0, t1;

  DEMO_REQUIRED();
  redis = fleet_test_redis_start_or_skip(NULL);
  snprintf(url, sizeof(url), "%s", fleet_test_redis_url(redis));
  snprintf(ledger, sizeof(ledger), "%s/ledger", tmp);
  snprintf(times, sizeof(times), "%s/ledger-times.%d", tmp, (int)getpid());
  unlink(times);
  t0 = demo_test_unix_ms();
  demo_run(&r, bad_group);
  ASSERT_EQ(2, r.status);
  ASSERT_NOT_NULL(strstr(r.err, "--group: 1 to 128 bytes"));
  demo_run(&r, enq_group);
  ASSERT_EQ(0, r.status);
  ASSERT_STR_EQ("40\n", r.out);
  demo_run(&r, enq);
  ASSERT_EQ(0, r.status);
  ASSERT_STR_EQ("20\n", r.out);
  demo_run(&r, stats);
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(60, stats_field(r.out, "pending"));
  ASSERT_EQ(0, stats_field(r.out, "completed"));

  pid = demo_spawn(worker, "worker");
  /* Bounded by the runner's timeout; each poll is a fresh process. */
  while (completed < 60) {
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    demo_run(&r, stats);
    ASSERT_EQ(0, r.status);
    completed = stats_field(r.out, "completed");
  }
  ASSERT_EQ(0, stats_field(r.out, "pending"));
  ASSERT_EQ(0, stats_field(r.out, "running"));
  ASSERT_EQ(0, stats_field(r.out, "dead"));
  /* The demo's worker keeps completed jobs (the library keeps none by
   * default). */
  ASSERT_EQ(60, stats_field(r.out, "completed_kept"));
  ASSERT_OK(kill(pid, SIGTERM));
  demo_reap(pid, "worker", &r);
  ASSERT_EQ(0, r.status);

  /* The ledger holds each job exactly once, though some attempts failed
   * and were retried. */
  read_file(ledger, buf, sizeof(buf));
  memset(seen, 0, sizeof(seen));
  /* (Generated ids: the group's come from its block of ids, the others
   * from the sequence; lib/queue_add.lua.) */
  for (line = strtok(buf, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    long id = strtol(line, NULL, 10);
    ASSERT_GE(id, 1);
    ASSERT_LT(n, 60);
    for (i = 0; i < n; i++)
      ASSERT(ids[i] != id);
    ids[n++] = id;
  }
  ASSERT_EQ(60, n);

  /* --ledger-times: the same jobs once each, with their group and
   * times. */
  t1 = demo_test_unix_ms();
  read_file(times, buf, sizeof(buf));
  unlink(times);
  memset(seen, 0, sizeof(seen));
  n = 0;
  for (line = strtok(buf, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    unsigned long long start, end;
    long id;
    char group[16];

    ASSERT_EQ(4, sscanf(line, "%ld %15s %llu %llu", &id, group, &start, &end));
    /* One of the jobs of the first ledger, once. */
    for (i = 0; i < 60 && ids[i] != id; i++)
      ;
    ASSERT_LT(i, 60);
    ASSERT_EQ(0, seen[i]);
    seen[i] = 1;
    if (strcmp(group, "-") == 0) {
      ungrouped++;
    } else {
      ASSERT_STR_EQ("a\\x20b", group);
    }
    ASSERT_LE(t0, start);
    ASSERT_LE(start, end);
    ASSERT_LE(end, t1);
    n++;
  }
  ASSERT_EQ(60, n);
  ASSERT_EQ(20, ungrouped);
  fleet_test_redis_free(redis);
  return 0;
}

/* One enqueue process of demo_unique_mp: its round, times (unix ms) and
 * how it ended. */
typedef struct {
  int round;
  uint64_t start, end;
  demo_run_t r;
} uq_racer_t;

/* One job of the worker's --ledger-times. */
typedef struct {
  char id[32];
  uint64_t start, end;
} uq_job_t;

#define UQ_RACERS 4
#define UQ_ROUNDS 3

/* Starts UQ_RACERS enqueue processes of `argv` at once and reaps them,
 * each one's times and outcome into `out`. */
static void uq_race(char *const argv[], int round, uq_racer_t *out) {
  char tag[32];
  pid_t pids[UQ_RACERS];
  int i;

  for (i = 0; i < UQ_RACERS; i++) {
    snprintf(tag, sizeof(tag), "uq-%d", i);
    out[i].round = round;
    out[i].start = demo_test_unix_ms();
    pids[i] = demo_spawn(argv, tag);
  }
  for (i = 0; i < UQ_RACERS; i++) {
    snprintf(tag, sizeof(tag), "uq-%d", i);
    demo_reap(pids[i], tag, &out[i].r);
    out[i].end = demo_test_unix_ms();
  }
}

/* Polls the queue's stats until `n` jobs completed (bounded by the
 * runner's timeout). */
static void uq_wait_completed(char *const stats[], long n) {
  demo_run_t r;

  for (;;) {
    struct timespec ts = {0, 30 * 1000 * 1000};
    demo_run(&r, stats);
    ASSERT_EQ(0, r.status);
    if (stats_field(r.out, "completed") >= n)
      return;
    nanosleep(&ts, NULL);
  }
}

/* Processes racing to enqueue a job with one unique key held until the
 * job ends, while a worker process (concurrency 4) runs the jobs, each for
 * W ms: round 1 on a free key, round 2 at once after (while the job of
 * round 1 runs), round 3 after every accepted job completed. Every
 * enqueue records its times and outcome, the worker each job's times.
 * Checked from the records: the jobs the worker ran are the accepted
 * ones, and never two at once; the k-th accepted enqueue ended after the
 * job before it could have finished (its start + W); every refused one
 * exited 1 with one line naming the key and a holder the worker ran,
 * which had not finished when the refusal began; a round that ended
 * before its holder finished accepted exactly one (round 1 and 3) or none
 * (round 2); round 3, on a free key, accepted at least one. */
TEST_IMPL(demo_unique_mp) {
  fleet_test_redis_t *redis;
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char url[128], times[512], work[32], buf[4096], *line, *save = NULL;
  char *enq[] = {"d",
                 "--url",
                 url,
                 "enqueue",
                 "--queue",
                 "uq",
                 "--unique-key",
                 "K",
                 "--unique-until-done",
                 NULL};
  char *stats[] = {"d", "--url", url, "stats", "--queue", "uq", NULL};
  char *worker[] = {"d",
                    "--url",
                    url,
                    "worker",
                    "--queue",
                    "uq",
                    "--concurrency",
                    "4",
                    "--work-ms",
                    work,
                    "--ledger-times",
                    times,
                    NULL};
  uq_racer_t racers[UQ_ROUNDS * UQ_RACERS], *acc[UQ_ROUNDS * UQ_RACERS];
  uq_job_t jobs[UQ_ROUNDS * UQ_RACERS];
  int accepted[UQ_ROUNDS + 1] = {0}, nacc = 0, njobs = 0, i, k;
  uint64_t w = fleet_test_ms(300), round_end[UQ_ROUNDS + 1] = {0};
  demo_run_t r;
  pid_t pid;

  DEMO_REQUIRED();
  redis = fleet_test_redis_start_or_skip(NULL);
  snprintf(url, sizeof(url), "%s", fleet_test_redis_url(redis));
  snprintf(times, sizeof(times), "%s/uq-times.%d", tmp, (int)getpid());
  snprintf(work, sizeof(work), "%llu", (unsigned long long)w);
  unlink(times);
  pid = demo_spawn(worker, "uq-worker");
  uq_race(enq, 1, racers);
  uq_race(enq, 2, racers + UQ_RACERS);
  for (i = 0; i < 2 * UQ_RACERS; i++)
    nacc += racers[i].r.status == 0;
  uq_wait_completed(stats, nacc);
  uq_race(enq, 3, racers + 2 * UQ_RACERS);
  for (i = 2 * UQ_RACERS; i < 3 * UQ_RACERS; i++)
    nacc += racers[i].r.status == 0;
  uq_wait_completed(stats, nacc);
  ASSERT_OK(kill(pid, SIGTERM));
  demo_reap(pid, "uq-worker", &r);
  ASSERT_EQ(0, r.status);

  /* The worker's jobs, in the order they started. */
  read_file(times, buf, sizeof(buf));
  unlink(times);
  for (line = strtok_r(buf, "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save)) {
    unsigned long long s, e;
    char group[16];
    ASSERT_LT(njobs, UQ_ROUNDS * UQ_RACERS);
    ASSERT_EQ(
        4, sscanf(line, "%31s %15s %llu %llu", jobs[njobs].id, group, &s, &e));
    jobs[njobs].start = s;
    jobs[njobs].end = e;
    for (i = njobs; i > 0 && jobs[i - 1].start > jobs[i].start; i--) {
      uq_job_t x = jobs[i];
      jobs[i] = jobs[i - 1];
      jobs[i - 1] = x;
    }
    njobs++;
  }
  /* The accepted enqueues, in the order they ended. */
  nacc = 0;
  for (i = 0; i < UQ_ROUNDS * UQ_RACERS; i++) {
    uq_racer_t *x = &racers[i];
    if (x->end > round_end[x->round])
      round_end[x->round] = x->end;
    if (x->r.status == 0) {
      ASSERT_STR_EQ("1\n", x->r.out);
      accepted[x->round]++;
      for (k = nacc; k > 0 && acc[k - 1]->end > x->end; k--)
        acc[k] = acc[k - 1];
      acc[k] = x;
      nacc++;
    }
  }
  ASSERT_EQ(nacc, njobs);
  ASSERT_GE(accepted[1], 1);
  ASSERT_GE(accepted[3], 1);
  for (k = 1; k < njobs; k++) {
    ASSERT_STR_NE(jobs[k - 1].id, jobs[k].id);
    /* Never two at once, and each accepted only once the one before
     * could have ended. */
    ASSERT_LE(jobs[k - 1].end, jobs[k].start);
    ASSERT_GE(acc[k]->end, jobs[k - 1].start + w);
  }
  for (i = 0; i < UQ_ROUNDS * UQ_RACERS; i++) {
    uq_racer_t *x = &racers[i];
    char holder[32];
    if (x->r.status == 0)
      continue;
    ASSERT_EQ(1, x->r.status);
    ASSERT_EQ(1, count_lines(x->r.err));
    ASSERT_EQ(1,
              sscanf(x->r.err, "fleet-demo: unique key K is held by job %31s",
                     holder));
    for (k = 0; k < njobs && strcmp(jobs[k].id, holder) != 0; k++)
      ;
    ASSERT_LT(k, njobs);
    ASSERT_LE(x->start, jobs[k].end);
  }
  /* The rounds that ended while their holder still ran. */
  if (njobs >= 1 && round_end[1] < jobs[0].start + w)
    ASSERT_EQ(1, accepted[1]);
  if (njobs >= 1 && accepted[1] == 1 && round_end[2] < jobs[0].start + w)
    ASSERT_EQ(0, accepted[2]);
  if (round_end[3] < jobs[njobs - 1].start + w)
    ASSERT_EQ(1, accepted[3]);
  fleet_test_redis_free(redis);
  return 0;
}

/* Runs `argv` (a one-shot command) until its output holds `want`, a fresh
 * process per try; bounded by the runner's timeout. */
static void demo_wait_output(char *const argv[], const char *want) {
  demo_run_t r;

  for (;;) {
    struct timespec ts = {0, 50 * 1000 * 1000};
    demo_run(&r, argv);
    if (r.status == 0 && strstr(r.out, want) != NULL)
      return;
    nanosleep(&ts, NULL);
  }
}

/* A pool node and a warm-pool node started twice under one id on one
 * Redis: the second exits 1 with one line on stderr naming the id in use;
 * the first keeps running (the pool node still gets and runs a job) and
 * stops on SIGTERM with exit 0. */
TEST_IMPL(demo_ident_redis) {
  fleet_test_redis_t *redis;
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char url[128], ledger[512], root[512], buf[4096];
  char *node[] = {"d",      "--url",    url,         "pool", "node",
                  "--pool", "P",        "--workers", "1",    "--node-id",
                  "X",      "--ledger", ledger,      NULL};
  char *status[] = {"d", "--url", url, "pool", "status", "--pool", "P", NULL};
  char *dispatch[] = {"d",      "--url", url,     "pool", "dispatch",
                      "--pool", "P",     "--key", "k1",   NULL};
  char *wnode[] = {"d",      "--url",     url,      "warmpool", "node",
                   "--pool", "W",         "--root", root,       "--target",
                   "0",      "--node-id", "Y",      NULL};
  char *snapshot[] = {"d",        "--url",  url, "warmpool",
                      "snapshot", "--pool", "W", NULL};
  demo_run_t r;
  pid_t pid;

  DEMO_REQUIRED();
  redis = fleet_test_redis_start_or_skip(NULL);
  snprintf(url, sizeof(url), "%s", fleet_test_redis_url(redis));
  snprintf(ledger, sizeof(ledger), "%s/ident-ledger-%ld", tmp, (long)getpid());
  snprintf(root, sizeof(root), "%s/ident-root-%ld", tmp, (long)getpid());
  unlink(ledger);
  ASSERT(mkdir(root, 0755) == 0 || errno == EEXIST);

  pid = demo_spawn(node, "ident-first");
  demo_wait_output(status, "\"X/1\"");
  demo_run(&r, node);
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, count_lines(r.err));
  ASSERT_NOT_NULL(
      strstr(r.err, "pool node id \"X\" is already in use by a live node"));
  ASSERT_EQ(0, waitpid(pid, NULL, WNOHANG));
  demo_run(&r, dispatch);
  ASSERT_EQ(0, r.status);
  read_file(ledger, buf, sizeof(buf));
  ASSERT_NOT_NULL(strstr(buf, " start k1 X/1 "));
  ASSERT_OK(kill(pid, SIGTERM));
  demo_reap(pid, "ident-first", &r);
  ASSERT_EQ(0, r.status);

  pid = demo_spawn(wnode, "ident-wfirst");
  demo_wait_output(snapshot, "\"primary\":\"Y\"");
  demo_run(&r, wnode);
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, count_lines(r.err));
  ASSERT_NOT_NULL(
      strstr(r.err, "owner id \"Y\" is already in use by a live node"));
  ASSERT_EQ(0, waitpid(pid, NULL, WNOHANG));
  demo_run(&r, snapshot);
  ASSERT_NOT_NULL(strstr(r.out, "\"primary\":\"Y\""));
  ASSERT_OK(kill(pid, SIGTERM));
  demo_reap(pid, "ident-wfirst", &r);
  ASSERT_EQ(0, r.status);
  unlink(ledger);
  rmdir(root);
  fleet_test_redis_free(redis);
  return 0;
}

/* The stderr file of a demo spawned with `tag`, read whole (up to 64 KiB). */
static const char *demo_err_text(const char *tag) {
  static char buf[65536];
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char path[512];

  snprintf(path, sizeof(path), "%s/demo-%s.err", tmp, tag);
  read_file(path, buf, sizeof(buf));
  return buf;
}

/* Waits until the stderr of the demo spawned with `tag` holds `want`;
 * fails after `ms` (scaled). */
static void demo_wait_err(const char *tag, const char *want, uint64_t ms) {
  uint64_t deadline = uv_hrtime() / 1000000 + fleet_test_ms(ms);

  while (strstr(demo_err_text(tag), want) == NULL) {
    struct timespec ts = {0, 20 * 1000 * 1000};
    if (uv_hrtime() / 1000000 > deadline)
      fleet_test__fail(__FILE__, __LINE__, "no \"%s\" in demo %s's stderr:\n%s",
                       want, tag, demo_err_text(tag));
    nanosleep(&ts, NULL);
  }
}

/* The daemons' ready and progress lines (stderr), on a Redis with a
 * password: a worker says once "connected to <URL redacted>, serving queue
 * Q (concurrency C)", then "<n> done, <n> failed since start (<s> s)" with
 * counts that only grow and reach the jobs it ran; --quiet says nothing;
 * --progress-ms 0 only the ready line (a pool node, a cron scheduler);
 * a bad --progress-ms is one line and exit 2. */
TEST_IMPL(demo_ready_lines_redis) {
  static const char *const redis_args[] = {"--requirepass", "s3cretpw", NULL};
  fleet_test_redis_t *redis;
  char url[128], shown[128], want[256], text[65536], *line, *save;
  char *worker[] = {"d",
                    "--url",
                    url,
                    "worker",
                    "--queue",
                    "rl",
                    "--concurrency",
                    "2",
                    "--work-ms",
                    "0",
                    "--fail-every",
                    "3",
                    "--progress-ms",
                    "100",
                    NULL};
  char *quiet[] = {
      "d", "--url",     url, "worker",  "--queue", "rq", "--concurrency",
      "1", "--work-ms", "0", "--quiet", NULL};
  char *enq[] = {"d",  "--url",   url, "enqueue",        "--queue",
                 "rl", "--count", "6", "--max-attempts", "10",
                 NULL};
  char *enq_q[] = {"d",  "--url",   url, "enqueue", "--queue",
                   "rq", "--count", "1", NULL};
  char *stats_q[] = {"d", "--url", url, "stats", "--queue", "rq", NULL};
  char *node[] = {"d",  "--url",     url, "pool",      "node", "--pool",
                  "RP", "--workers", "2", "--node-id", "N1",   "--progress-ms",
                  "0",  NULL};
  char *cron[] = {"d", "--url", url, "cron", "run", "--node-id", "c1", NULL};
  char *bad[] = {
      "d", "--url",     url, "worker",        "--queue", "rl", "--concurrency",
      "1", "--work-ms", "0", "--progress-ms", "soon",    NULL};
  demo_run_t r;
  pid_t pid;
  unsigned long done, failed, last_done = 0;
  int lines = 0;

  DEMO_REQUIRED();
  redis = fleet_test_redis_start_or_skip(redis_args);
  snprintf(url, sizeof(url), "redis://:s3cretpw@127.0.0.1:%d",
           fleet_test_redis_port(redis));
  snprintf(shown, sizeof(shown), "redis://:***@127.0.0.1:%d",
           fleet_test_redis_port(redis));

  demo_run(&r, bad);
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, count_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "--progress-ms"));

  /* The worker: ready, then progress up to the 6 jobs. */
  pid = demo_spawn(worker, "ready-w");
  snprintf(want, sizeof(want),
           "fleet-demo worker: connected to %s, serving queue rl "
           "(concurrency 2)\n",
           shown);
  demo_wait_err("ready-w", want, 10000);
  demo_run(&r, enq);
  ASSERT_EQ(0, r.status);
  demo_wait_err("ready-w", "fleet-demo worker: 6 done, ", 10000);
  ASSERT_OK(kill(pid, SIGTERM));
  demo_reap(pid, "ready-w", &r);
  ASSERT_EQ(0, r.status);
  snprintf(text, sizeof(text), "%s", demo_err_text("ready-w"));
  ASSERT_NULL(strstr(text, "s3cretpw"));
  ASSERT_EQ(0, strncmp(text, want, strlen(want)));
  for (line = strtok_r(text + strlen(want), "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save), lines++) {
    ASSERT_EQ(2, sscanf(line,
                        "fleet-demo worker: %lu done, %lu failed since start",
                        &done, &failed));
    ASSERT_GE(done, last_done);
    ASSERT_LE(done, 6);
    last_done = done;
  }
  ASSERT_GE(lines, 1);
  ASSERT_EQ(6, last_done);
  /* Every third attempt fails: 6 completions took 2 failed attempts or
   * more. */
  ASSERT_GE(failed, 2);

  /* --quiet: a job done, nothing said. */
  pid = demo_spawn(quiet, "ready-q");
  demo_run(&r, enq_q);
  ASSERT_EQ(0, r.status);
  for (;;) {
    struct timespec ts = {0, 50 * 1000 * 1000};
    demo_run(&r, stats_q);
    ASSERT_EQ(0, r.status);
    if (stats_field(r.out, "completed") == 1)
      break;
    nanosleep(&ts, NULL);
  }
  ASSERT_OK(kill(pid, SIGTERM));
  demo_reap(pid, "ready-q", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_STR_EQ("", r.err);

  /* A pool node and a cron scheduler: the ready line, once. */
  pid = demo_spawn(node, "ready-p");
  snprintf(want, sizeof(want),
           "fleet-demo pool node: connected to %s, serving pool RP as node "
           "N1 (2 workers)\n",
           shown);
  demo_wait_err("ready-p", want, 10000);
  ASSERT_OK(kill(pid, SIGTERM));
  demo_reap(pid, "ready-p", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_STR_EQ(want, r.err);
  pid = demo_spawn(cron, "ready-c");
  snprintf(want, sizeof(want),
           "fleet-demo cron run: connected to %s, serving cron namespace "
           "cron as node c1\n",
           shown);
  demo_wait_err("ready-c", want, 10000);
  ASSERT_OK(kill(pid, SIGTERM));
  demo_reap(pid, "ready-c", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(0, strncmp(r.err, want, strlen(want)));
  fleet_test_redis_free(redis);
  return 0;
}

/* The server time (unix ms) at which job `id` of queue `queue` (prefix
 * "fleet", the demo's) completed, read with the library. */
static uint64_t demo_finished_ms(const char *url, const char *queue,
                                 const char *id);

/* A flow across processes (docs/queue.md, "Flows"): `fleet-demo flow`
 * makes a parent in queue "fp" and 6 children in "fc"; worker A takes 3
 * children and is killed (SIGKILL) mid-job; worker B takes the others and,
 * once A's claims expired, A's; worker P runs the parent. From the
 * ledgers: every child completed once (in B's), the parent ran once,
 * after every child's completion (its start is not before any child's
 * finish on the server clock, the same machine's), and it read its 6
 * children, all completed. */
TEST_IMPL(demo_flow_mp_redis) {
  fleet_test_redis_t *redis;
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char url[128], ta[512], tb[512], tp[512], fp[512];
  char *flow[] = {"d",  "--url",      url, "flow",          "--queue",
                  "fp", "--children", "6", "--child-queue", "fc",
                  NULL};
  char *bad[] = {"d",  "--url",      url, "flow", "--queue",
                 "fp", "--children", "0", NULL};
  char *stats_c[] = {"d", "--url", url, "stats", "--queue", "fc", NULL};
  char *stats_p[] = {"d", "--url", url, "stats", "--queue", "fp", NULL};
  char *wa[] = {"d",
                "--url",
                url,
                "worker",
                "--queue",
                "fc",
                "--concurrency",
                "3",
                "--work-ms",
                "60000",
                "--claim-ttl-ms",
                "1000",
                "--heartbeat-ms",
                "200",
                "--ledger-times",
                ta,
                NULL};
  char *wb[] = {"d",
                "--url",
                url,
                "worker",
                "--queue",
                "fc",
                "--concurrency",
                "3",
                "--work-ms",
                "100",
                "--claim-ttl-ms",
                "1000",
                "--heartbeat-ms",
                "200",
                "--ledger-times",
                tb,
                NULL};
  char *wp[] = {"d",
                "--url",
                url,
                "worker",
                "--queue",
                "fp",
                "--concurrency",
                "2",
                "--work-ms",
                "1",
                "--ledger-times",
                tp,
                "--ledger-flows",
                fp,
                NULL};
  char buf[4096], kids[6][32], parent[32], *line, *save;
  demo_run_t r;
  pid_t pa, pb, pp;
  unsigned long long start, end, pstart = 0;
  uint64_t fin;
  int i, n, seen[6];

  DEMO_REQUIRED();
  redis = fleet_test_redis_start_or_skip(NULL);
  snprintf(url, sizeof(url), "%s", fleet_test_redis_url(redis));
  snprintf(ta, sizeof(ta), "%s/flow-a.%d", tmp, (int)getpid());
  snprintf(tb, sizeof(tb), "%s/flow-b.%d", tmp, (int)getpid());
  snprintf(tp, sizeof(tp), "%s/flow-p.%d", tmp, (int)getpid());
  snprintf(fp, sizeof(fp), "%s/flow-f.%d", tmp, (int)getpid());
  unlink(ta), unlink(tb), unlink(tp), unlink(fp);

  demo_run(&r, bad);
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, count_lines(r.err));
  pa = demo_spawn(wa, "flow-a");
  pp = demo_spawn(wp, "flow-p");
  demo_run(&r, flow);
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(7, count_lines(r.out));
  line = strtok_r(r.out, "\n", &save);
  snprintf(parent, sizeof(parent), "%s", line);
  for (i = 0; i < 6; i++)
    snprintf(kids[i], sizeof(kids[i]), "%s", strtok_r(NULL, "\n", &save));

  /* A holds 3 children (its work never ends), then dies mid-job. */
  do {
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    demo_run(&r, stats_c);
    ASSERT_EQ(0, r.status);
  } while (stats_field(r.out, "running") < 3);
  /* The parent waits, counted as such in its queue. */
  demo_run(&r, stats_p);
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(1, stats_field(r.out, "waiting_children"));
  ASSERT_EQ(0, stats_field(r.out, "pending") + stats_field(r.out, "running"));
  pb = demo_spawn(wb, "flow-b");
  ASSERT_OK(kill(pa, SIGKILL));
  demo_reap(pa, "flow-a", &r);
  ASSERT_EQ(128 + SIGKILL, r.status);
  /* Bounded by the runner's timeout. */
  do {
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    demo_run(&r, stats_p);
    ASSERT_EQ(0, r.status);
  } while (stats_field(r.out, "completed") < 1);
  ASSERT_EQ(0, stats_field(r.out, "waiting_children"));
  ASSERT_OK(kill(pb, SIGTERM));
  ASSERT_OK(kill(pp, SIGTERM));
  demo_reap(pb, "flow-b", &r);
  ASSERT_EQ(0, r.status);
  demo_reap(pp, "flow-p", &r);
  ASSERT_EQ(0, r.status);

  /* A completed nothing. */
  read_file(ta, buf, sizeof(buf));
  ASSERT_STR_EQ("", buf);
  /* The parent ran once. */
  read_file(tp, buf, sizeof(buf));
  ASSERT_EQ(1, count_lines(buf));
  ASSERT_EQ(2, sscanf(buf, "%*s %*s %llu %llu", &pstart, &end));
  ASSERT_EQ(0, strncmp(buf, parent, strlen(parent)));
  /* Each child completed once, in B's ledger, before the parent
   * started. */
  memset(seen, 0, sizeof(seen));
  read_file(tb, buf, sizeof(buf));
  n = 0;
  for (line = strtok_r(buf, "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save)) {
    char id[32];
    ASSERT_EQ(3, sscanf(line, "%31s %*s %llu %llu", id, &start, &end));
    for (i = 0; i < 6 && strcmp(kids[i], id) != 0; i++)
      ;
    ASSERT_LT(i, 6);
    ASSERT_EQ(0, seen[i]);
    seen[i] = 1;
    fin = demo_finished_ms(url, "fc", id);
    ASSERT_UGT(fin, 0);
    ASSERT_ULE(fin, pstart);
    ASSERT_ULE(start, pstart);
    n++;
  }
  ASSERT_EQ(6, n);
  /* The parent read its children: none waiting, all 6 completed. */
  read_file(fp, buf, sizeof(buf));
  ASSERT_EQ(1, count_lines(buf));
  {
    char want[256];
    snprintf(want, sizeof(want), "%s %llu 0 ", parent, pstart);
    ASSERT_EQ(0, strncmp(buf, want, strlen(want)));
  }
  for (i = 0; i < 6; i++) {
    char want[256];
    snprintf(want, sizeof(want), " fc/%s:completed:", kids[i]);
    ASSERT_NOT_NULL(strstr(buf, want));
  }
  unlink(ta), unlink(tb), unlink(tp), unlink(fp);
  fleet_test_redis_free(redis);
  return 0;
}

/* demo_finished_ms()'s state: a client on a loop of its own. */
typedef struct {
  int done, status;
  uint64_t finished_ms;
  fleet_job_state_t state;
} demo_get_t;

static void demo_on_get(fleet_queue_t *q, int status,
                        const fleet_job_info_t *info, void *ud) {
  demo_get_t *g = ud;

  g->done = 1;
  g->status = status;
  if (status == 0) {
    g->finished_ms = info->finished_ms;
    g->state = info->state;
  }
}

static void demo_on_closed(fleet_handle_t *h) {
  *(int *)h->data = 1;
}

static void demo_on_client_closed(fleet_client_t *c) {
  *(int *)c->data = 1;
}

static uint64_t demo_finished_ms(const char *url, const char *queue,
                                 const char *id) {
  fleet_client_options_t o;
  fleet_client_t c;
  fleet_queue_t q;
  demo_get_t g;
  uv_loop_t loop;
  int closed = 0, cclosed = 0;

  memset(&g, 0, sizeof(g));
  ASSERT_OK(uv_loop_init(&loop));
  fleet_client_options_init(&o);
  o.prefix = "fleet";
  ASSERT_OK(fleet_client_init(&loop, &c, url, &o));
  c.data = &cclosed;
  q.data = &closed;
  ASSERT_OK(fleet_queue_init(&c, &q, queue, NULL));
  ASSERT_OK(fleet_queue_get(&q, id, demo_on_get, &g));
  ASSERT(fleet_test_run_until(&loop, fleet_test_flag_set, &g.done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(g.status);
  ASSERT_EQ(FLEET_JOB_COMPLETED, g.state);
  ASSERT_OK(fleet_queue_close(&q, demo_on_closed));
  ASSERT(fleet_test_run_until(&loop, fleet_test_flag_set, &closed,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(fleet_client_close(&c, demo_on_client_closed));
  ASSERT(fleet_test_run_until(&loop, fleet_test_flag_set, &cclosed,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  fleet_test_loop_close(&loop);
  return g.finished_ms;
}

/* fleet-demo pool node --requeue-starts: the node's first start hands the
 * job back; the dispatch is answered by the start after the backoff, and
 * the ledger shows start, requeue, start. After `pool shutdown`, a new
 * node is refused: exit 1, one line. */
TEST_IMPL(demo_pool_requeue_redis) {
  fleet_test_redis_t *redis;
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char url[128], ledger[512], buf[4096];
  char *node[] = {"d",    "--url",
                  url,    "pool",
                  "node", "--pool",
                  "P",    "--workers",
                  "1",    "--node-id",
                  "R",    "--ledger",
                  ledger, "--requeue-starts",
                  "1",    "--requeue-backoff-ms",
                  "200",  NULL};
  char *late[] = {"d",      "--url", url,         "pool", "node",
                  "--pool", "P",     "--workers", "1",    NULL};
  char *status[] = {"d", "--url", url, "pool", "status", "--pool", "P", NULL};
  char *dispatch[] = {"d",      "--url", url,     "pool", "dispatch",
                      "--pool", "P",     "--key", "k1",   NULL};
  char *shutdown[] = {"d",        "--url",  url, "pool",
                      "shutdown", "--pool", "P", NULL};
  const char *s1, *q, *s2;
  demo_run_t r;
  pid_t pid;

  DEMO_REQUIRED();
  redis = fleet_test_redis_start_or_skip(NULL);
  snprintf(url, sizeof(url), "%s", fleet_test_redis_url(redis));
  snprintf(ledger, sizeof(ledger), "%s/requeue-ledger-%ld", tmp,
           (long)getpid());
  unlink(ledger);

  pid = demo_spawn(node, "requeue-node");
  demo_wait_output(status, "\"R/1\"");
  demo_run(&r, dispatch);
  ASSERT_EQ(0, r.status);
  read_file(ledger, buf, sizeof(buf));
  ASSERT_NOT_NULL(s1 = strstr(buf, " start k1 R/1 "));
  ASSERT_NOT_NULL(q = strstr(s1, " requeue k1 R/1 "));
  ASSERT_NOT_NULL(s2 = strstr(q, " start k1 R/1 "));

  demo_run(&r, shutdown);
  ASSERT_EQ(0, r.status);
  demo_run(&r, late);
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, count_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "pool \"P\" was shut down and not reset"));
  ASSERT_OK(kill(pid, SIGTERM));
  demo_reap(pid, "requeue-node", &r);
  ASSERT_EQ(0, r.status);
  unlink(ledger);
  fleet_test_redis_free(redis);
  return 0;
}
