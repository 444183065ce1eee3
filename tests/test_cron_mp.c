/* test_cron_mp.c -- the cron scheduler across processes on Redis, run as a
 * user runs it: `fleet-demo cron run` nodes appending "<key> <fire_ms>
 * <node_id> <token> <wall_ms>" to one ledger (O_APPEND), checked against
 * each other and against the dispatch log in Redis. Every test checks
 * that no line's fire callback ran before its fire time by this machine's
 * clock (the server's: Redis runs here).
 *
 *   cron_mp_once         3 nodes, a 1-second definition for ~6 s; kill -9
 *                        of the node that fired last, ~5 s more; then the
 *                        definition changed to every 2 s by another
 *                        process, ~5 s more. Every occurrence fired
 *                        exactly once, none missing, tokens increasing,
 *                        the change followed by both nodes left. (The
 *                        issue says 30 s; ~16 s proves the same and keeps
 *                        the suite short.)
 *   cron_mp_aof_restart  3 nodes; Redis (appendonly yes, appendfsync
 *                        always) killed with SIGKILL and restarted mid-run:
 *                        nothing fired twice.
 *   cron_mp_catch_up     the three policies after no node ran for ~4 s.
 *   cron_mp_limit        a fire limit (exactly N fires in all the ledgers)
 *                        and an end (none after it), across 3 nodes.
 *   cron_mp_pool         a cron that dispatches keyed pool jobs (with a
 *                        fire limit) from 2 nodes into a pool node: each
 *                        fire one job "<key>@<fire_ms>", started once.
 *   cron_mp_burst        30 definitions due every second on 3 nodes, two
 *                        claiming ahead, one (claim_ahead_ms 0) not: every
 *                        occurrence once across the ledgers, matching the
 *                        log's token, none missing while all ran.
 *   cron_mp_demo_input   bad input refused with a clear error and exit 2. */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#ifndef FLEET_DEMO_PATH
#define FLEET_DEMO_PATH "/nonexistent"
#endif

#define MP_NODES 3
#define MP_LINES 4096

typedef struct {
  char key[32];
  int64_t fire_ms;
  char node[16];
  uint64_t token;
  int64_t wall_ms; /* when its fire callback ran */
} line_t;

typedef struct {
  fleet_test_redis_t *r;
  char dir[256];
  char ledger[300];
  pid_t pid[MP_NODES];
  line_t l[MP_LINES];
  int n;
} mp_t;

static mp_t mp;

static int64_t wall_ms(void) {
  struct timeval tv;

  gettimeofday(&tv, NULL);
  return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void sleep_ms(uint64_t ms) {
  usleep((useconds_t)(ms * 1000));
}

static void mp_setup(const char *const *redis_args, const char *name) {
  memset(&mp, 0, sizeof(mp));
  mp.r = fleet_test_redis_start_or_skip(redis_args);
  snprintf(mp.dir, sizeof(mp.dir), "/tmp/%s-XXXXXX", name);
  ASSERT_NOT_NULL(mkdtemp(mp.dir));
  snprintf(mp.ledger, sizeof(mp.ledger), "%s/ledger", mp.dir);
}

static void mp_teardown(void) {
  fleet_test_rmtree(mp.dir);
  fleet_test_redis_free(mp.r);
}

/* Runs fleet-demo with `args` (NULL-terminated, after the global flags)
 * to the end, its stdout and stderr in files of the test directory.
 * Returns its exit code. */
static int demo(const char *out_name, const char *const *args) {
  char *argv[32];
  char out[320], err[320];
  int i = 0, st;
  pid_t pid;

  argv[i++] = "fleet-demo";
  argv[i++] = "--url";
  argv[i++] = (char *)fleet_test_redis_url(mp.r);
  argv[i++] = "--prefix";
  argv[i++] = "mpc";
  argv[i++] = "cron";
  while (*args != NULL && i < 31)
    argv[i++] = (char *)*args++;
  argv[i] = NULL;
  snprintf(out, sizeof(out), "%s/%s.out", mp.dir, out_name);
  snprintf(err, sizeof(err), "%s/%s.err", mp.dir, out_name);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o >= 0)
      dup2(o, 1);
    if (e >= 0)
      dup2(e, 2);
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  ASSERT(WIFEXITED(st));
  return WEXITSTATUS(st);
}

/* The contents of an output file of demo() ("" when missing). */
static const char *demo_text(const char *name, const char *ext) {
  static char buf[8192];
  char path[320];
  FILE *f;
  size_t n = 0;

  snprintf(path, sizeof(path), "%s/%s.%s", mp.dir, name, ext);
  buf[0] = '\0';
  if ((f = fopen(path, "r")) != NULL) {
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
  }
  buf[n] = '\0';
  return buf;
}

/* Starts node "n<k>" (`cron run`) with `grace_ms` and, unless NULL,
 * `--claim-ahead-ms ahead_ms`. */
static pid_t spawn_run_ahead(int k, const char *grace_ms,
                             const char *ahead_ms) {
  char id[8];
  char *argv[] = {"fleet-demo",
                  "--url",
                  (char *)fleet_test_redis_url(mp.r),
                  "--prefix",
                  "mpc",
                  "cron",
                  "run",
                  "--node-id",
                  id,
                  "--ledger",
                  mp.ledger,
                  "--grace-ms",
                  (char *)grace_ms,
                  ahead_ms != NULL ? "--claim-ahead-ms" : NULL,
                  (char *)ahead_ms,
                  NULL};
  pid_t pid;

  snprintf(id, sizeof(id), "n%d", k);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
      dup2(null, 1);
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  return pid;
}

static pid_t spawn_run(int k, const char *grace_ms) {
  return spawn_run_ahead(k, grace_ms, NULL);
}

static void stop_node(int k) {
  int st;

  if (mp.pid[k] <= 0)
    return;
  ASSERT_OK(kill(mp.pid[k], SIGTERM));
  ASSERT_EQ(mp.pid[k], waitpid(mp.pid[k], &st, 0));
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(0, WEXITSTATUS(st));
  mp.pid[k] = 0;
}

/* Reads the ledger into mp.l; fails on a line that is not five fields,
 * or whose fire callback ran before its fire time. */
static void read_ledger(void) {
  FILE *f = fopen(mp.ledger, "r");
  char buf[256], key[32], node[16];
  long long fire, wall;
  unsigned long long tok;

  mp.n = 0;
  if (f == NULL)
    return;
  while (fgets(buf, sizeof(buf), f) != NULL) {
    line_t *l;
    if (sscanf(buf, "%31s %lld %15s %llu %lld", key, &fire, node, &tok,
               &wall) != 5)
      fleet_test__fail(__FILE__, __LINE__, "ledger line: %s", buf);
    if (wall < fire)
      fleet_test__fail(__FILE__, __LINE__, "%s@%lld handed out at %lld", key,
                       fire, wall);
    ASSERT_LT(mp.n, MP_LINES);
    l = &mp.l[mp.n++];
    snprintf(l->key, sizeof(l->key), "%s", key);
    l->fire_ms = fire;
    snprintf(l->node, sizeof(l->node), "%s", node);
    l->token = tok;
    l->wall_ms = wall;
  }
  fclose(f);
}

/* No occurrence of `key` twice in the ledger, and tokens increase with
 * the fire time. Returns how many lines `key` has. */
static int check_no_twice(const char *key) {
  int i, j, n = 0;

  for (i = 0; i < mp.n; i++) {
    if (strcmp(mp.l[i].key, key) != 0)
      continue;
    n++;
    for (j = 0; j < mp.n; j++) {
      if (j == i || strcmp(mp.l[j].key, key) != 0)
        continue;
      if (mp.l[j].fire_ms == mp.l[i].fire_ms)
        fleet_test__fail(__FILE__, __LINE__, "%s@%lld fired by %s and %s", key,
                         (long long)mp.l[i].fire_ms, mp.l[i].node,
                         mp.l[j].node);
      if (mp.l[j].fire_ms > mp.l[i].fire_ms)
        ASSERT_UGT(mp.l[j].token, mp.l[i].token);
    }
  }
  return n;
}

/* Whether the dispatch log of callback definition `key` (namespace
 * "cron", prefix "mpc") holds `fire_ms` as fired (token > 0); -1 when it
 * has no entry. */
static int64_t log_token(const char *key, int64_t fire_ms) {
  redisReply *r =
      fleet_test_redis_cmd(mp.r, "HGET {mpc:cron:%s}:cron:cron:%s:ent %lld",
                           key, key, (long long)fire_ms);
  int64_t tok = -1;

  ASSERT_NOT_NULL(r);
  if (r->type == REDIS_REPLY_STRING)
    tok = atoll(r->str);
  freeReplyObject(r);
  return tok;
}

static int has_line(const char *key, int64_t fire_ms) {
  int i;

  for (i = 0; i < mp.n; i++)
    if (strcmp(mp.l[i].key, key) == 0 && mp.l[i].fire_ms == fire_ms)
      return 1;
  return 0;
}

/* ------------------------------------------------------------------------ */

TEST_IMPL(cron_mp_once) {
  static const char *const def1[] = {"define", "--key",       "tick",
                                     "--expr", "* * * * * *", NULL};
  static const char *const def2[] = {"define", "--key",         "tick",
                                     "--expr", "*/2 * * * * *", NULL};
  int64_t first = -1, last = -1, t, killed_at, changed_at;
  int i, k, victim = -1, lines_before_kill, after_kill = 0;

  mp_setup(NULL, "fleet-cron-mp");
  ASSERT_EQ(0, demo("def1", def1));
  for (k = 0; k < MP_NODES; k++)
    mp.pid[k] = spawn_run(k, "5000");
  sleep_ms(fleet_test_ms(1500) + 4500);
  /* kill -9 the node that fired last. */
  read_ledger();
  ASSERT_GE(mp.n, 3);
  victim = mp.l[mp.n - 1].node[1] - '0';
  ASSERT(victim >= 0 && victim < MP_NODES);
  kill(mp.pid[victim], SIGKILL);
  ASSERT_EQ(mp.pid[victim], waitpid(mp.pid[victim], &i, 0));
  mp.pid[victim] = 0;
  killed_at = wall_ms();
  lines_before_kill = mp.n;
  sleep_ms(5000);
  /* Changed by another process: every node left follows. */
  ASSERT_EQ(0, demo("def2", def2));
  changed_at = wall_ms();
  sleep_ms(fleet_test_ms(1000) + 4000);
  for (k = 0; k < MP_NODES; k++)
    stop_node(k);

  read_ledger();
  ASSERT_GT(mp.n, lines_before_kill);
  check_no_twice("tick");
  for (i = 0; i < mp.n; i++) {
    const line_t *l = &mp.l[i];

    ASSERT_STR_EQ("tick", l->key);
    ASSERT_EQ(0, l->fire_ms % 1000);
    /* Each line is the log's fire, with the log's token. */
    ASSERT_EQ((int64_t)l->token, log_token("tick", l->fire_ms));
    if (first < 0 || l->fire_ms < first)
      first = l->fire_ms;
    if (l->fire_ms > last)
      last = l->fire_ms;
    if (l->fire_ms > killed_at + 1000 && l->fire_ms < changed_at) {
      ASSERT_NE(victim, l->node[1] - '0');
      after_kill++;
    }
    /* A second after the change was published, only even seconds. */
    if (l->fire_ms > changed_at + 1000)
      ASSERT_EQ(0, l->fire_ms % 2000);
  }
  ASSERT_GE(after_kill, 3);
  /* Before the change, every second fired: once in the log (a fire the
   * killed node claimed but could not write down is in the log only). */
  for (t = first; t < changed_at - 1000; t += 1000) {
    int64_t tok = log_token("tick", t);
    if (tok <= 0)
      fleet_test__fail(__FILE__, __LINE__, "tick@%lld not fired", (long long)t);
    if (!has_line("tick", t))
      ASSERT(t >= killed_at - 2000 && t <= killed_at + 1000);
  }
  /* After the change, every even second up to the end fired. */
  for (t = (changed_at / 2000 + 2) * 2000; t <= last; t += 2000)
    ASSERT(has_line("tick", t));
  mp_teardown();
  return 0;
}

#define BURST_DEFS 30

TEST_IMPL(cron_mp_burst) {
  char key[16];
  const char *def[] = {"define", "--key", key, "--expr", "* * * * * *", NULL};
  int64_t from, to, t;
  int i, k;

  mp_setup(NULL, "fleet-cron-burst");
  for (i = 0; i < BURST_DEFS; i++) {
    snprintf(key, sizeof(key), "b%02d", i);
    ASSERT_EQ(0, demo("def", def));
  }
  mp.pid[0] = spawn_run_ahead(0, "5000", NULL);
  mp.pid[1] = spawn_run_ahead(1, "5000", NULL);
  mp.pid[2] = spawn_run_ahead(2, "5000", "0");
  /* Every second from when all three run to a second before they stop
   * (a node that stops drops what it holds). */
  from = (wall_ms() + fleet_test_ms(1500)) / 1000 * 1000 + 1000;
  sleep_ms(fleet_test_ms(1500) + 4000);
  to = wall_ms() / 1000 * 1000 - 1000;
  for (k = 0; k < MP_NODES; k++)
    stop_node(k);
  read_ledger();
  ASSERT_GE(to - from, 2000);
  for (i = 0; i < BURST_DEFS; i++) {
    snprintf(key, sizeof(key), "b%02d", i);
    check_no_twice(key);
    for (t = from; t <= to; t += 1000)
      if (!has_line(key, t))
        fleet_test__fail(__FILE__, __LINE__, "%s@%lld not fired", key,
                         (long long)t);
  }
  for (i = 0; i < mp.n; i++)
    ASSERT_EQ((int64_t)mp.l[i].token, log_token(mp.l[i].key, mp.l[i].fire_ms));
  mp_teardown();
  return 0;
}

TEST_IMPL(cron_mp_aof_restart) {
  static const char *const aof[] = {"--appendonly", "yes", "--appendfsync",
                                    "always", NULL};
  static const char *const def[] = {"define", "--key",       "t",
                                    "--expr", "* * * * * *", NULL};
  int k, before;

  mp_setup(aof, "fleet-cron-aof");
  ASSERT_EQ(0, demo("def", def));
  for (k = 0; k < MP_NODES; k++)
    mp.pid[k] = spawn_run(k, "5000");
  sleep_ms(fleet_test_ms(1000) + 3000);
  read_ledger();
  before = mp.n;
  ASSERT_GE(before, 2);
  ASSERT_OK(fleet_test_redis_kill(mp.r));
  sleep_ms(1200);
  ASSERT_OK(fleet_test_redis_restart(mp.r));
  /* The nodes reconnect with backoff (100 ms doubling): a few seconds. */
  sleep_ms(fleet_test_ms(2000) + 5000);
  for (k = 0; k < MP_NODES; k++)
    stop_node(k);
  read_ledger();
  /* It went on after the restart, and nothing fired twice. */
  ASSERT_GE(mp.n, before + 3);
  check_no_twice("t");
  mp_teardown();
  return 0;
}

TEST_IMPL(cron_mp_catch_up) {
  static const char *const d_skip[] = {"define", "--key",       "skip",
                                       "--expr", "* * * * * *", "--catch-up",
                                       "skip",   NULL};
  static const char *const d_latest[] = {"define", "--key",       "latest",
                                         "--expr", "* * * * * *", "--catch-up",
                                         "latest", NULL};
  static const char *const d_all[] = {"define", "--key",       "all",
                                      "--expr", "* * * * * *", "--catch-up",
                                      "all",    NULL};
  int64_t defined, started, t;
  int i, late_latest = 0;

  mp_setup(NULL, "fleet-cron-catch");
  ASSERT_EQ(0, demo("d1", d_skip));
  ASSERT_EQ(0, demo("d2", d_latest));
  ASSERT_EQ(0, demo("d3", d_all));
  defined = wall_ms();
  /* No node runs for ~4 occurrences. */
  sleep_ms(4300);
  started = wall_ms();
  mp.pid[0] = spawn_run(0, "500");
  sleep_ms(fleet_test_ms(1000) + 2000);
  stop_node(0);
  read_ledger();
  check_no_twice("skip");
  check_no_twice("latest");
  check_no_twice("all");
  for (i = 0; i < mp.n; i++) {
    /* skip: nothing more than the grace before the start. */
    if (strcmp(mp.l[i].key, "skip") == 0)
      ASSERT_GE(mp.l[i].fire_ms, started - 1500);
    if (strcmp(mp.l[i].key, "latest") == 0 && mp.l[i].fire_ms < started - 1500)
      late_latest++;
  }
  /* latest: at most the latest of the missed ones. */
  ASSERT_LE(late_latest, 1);
  /* skip logged the missed ones as such. */
  ASSERT_EQ(0, log_token("skip", (started / 1000 - 3) * 1000));
  /* all: every second since the definition fired. */
  for (t = (defined / 1000 + 1) * 1000; t < started; t += 1000)
    ASSERT(has_line("all", t));
  mp_teardown();
  return 0;
}

/* A fire limit and an end across 3 nodes: "cap" (every second, at most 4
 * fires) fired exactly 4 times in all the ledgers, each once; "stop"
 * (every second, until an end ~3 s after the definition) fired, and never
 * after its end; the listing shows cap finished with its 4 fires. */
TEST_IMPL(cron_mp_limit) {
  static const char *const d_cap[] = {"define", "--key",       "cap",
                                      "--expr", "* * * * * *", "--max-fires",
                                      "4",      NULL};
  static const char *const list[] = {"list", NULL};
  const char *d_stop[] = {"define",      "--key", "stop", "--expr",
                          "* * * * * *", "--end", NULL,   NULL};
  char end_iso[64];
  int64_t end;
  time_t et;
  struct tm tm;
  int k, i, stops = 0;
  const char *s;

  mp_setup(NULL, "fleet-cron-limit");
  end = (wall_ms() / 1000 + 3) * 1000 + 500;
  et = (time_t)(end / 1000);
  gmtime_r(&et, &tm);
  snprintf(end_iso, sizeof(end_iso), "%04d-%02d-%02dT%02d:%02d:%02d.500Z",
           tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
           tm.tm_sec);
  d_stop[6] = end_iso;
  ASSERT_EQ(0, demo("cap", d_cap));
  ASSERT_EQ(0, demo("stop", d_stop));
  for (k = 0; k < MP_NODES; k++)
    mp.pid[k] = spawn_run(k, "5000");
  sleep_ms(fleet_test_ms(1500) + 6000);
  for (k = 0; k < MP_NODES; k++)
    stop_node(k);
  read_ledger();
  ASSERT_EQ(4, check_no_twice("cap"));
  check_no_twice("stop");
  for (i = 0; i < mp.n; i++) {
    if (strcmp(mp.l[i].key, "cap") == 0)
      ASSERT_EQ((int64_t)mp.l[i].token, log_token("cap", mp.l[i].fire_ms));
    if (strcmp(mp.l[i].key, "stop") != 0)
      continue;
    stops++;
    if (mp.l[i].fire_ms > end)
      fleet_test__fail(__FILE__, __LINE__, "stop@%lld fired after its end %lld",
                       (long long)mp.l[i].fire_ms, (long long)end);
  }
  ASSERT_GE(stops, 1);
  ASSERT_EQ(0, demo("list", list));
  s = demo_text("list", "out");
  s = strstr(s, "{\"key\":\"cap\"");
  ASSERT_NOT_NULL(s);
  ASSERT_NOT_NULL(strstr(s, "\"max_fires\":4,\"fires\":4,\"finished\":true,"
                            "\"not_started\":false}"));
  ASSERT_NOT_NULL(strstr(demo_text("list", "out"),
                         "\"finished\":true,\"not_started\":false}]"));
  mp_teardown();
  return 0;
}

/* Spawns `fleet-demo <argv...>` (after the global flags) in the
 * background, its stdout to /dev/null. */
static pid_t spawn_demo(const char *const *args) {
  char *argv[32];
  int i = 0;
  pid_t pid;

  argv[i++] = "fleet-demo";
  argv[i++] = "--url";
  argv[i++] = (char *)fleet_test_redis_url(mp.r);
  argv[i++] = "--prefix";
  argv[i++] = "mpc";
  while (*args != NULL && i < 31)
    argv[i++] = (char *)*args++;
  argv[i] = NULL;
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
      dup2(null, 1);
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  return pid;
}

static void stop_pid(pid_t pid) {
  int st;

  ASSERT_OK(kill(pid, SIGTERM));
  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(0, WEXITSTATUS(st));
}

/* A cron that dispatches keyed pool jobs, with a fire limit, across
 * processes: a pool node with 2 workers, 2 scheduler nodes that dispatch
 * through client-only nodes of the pool. Each fire of the ledger is one
 * job "pj@<fire_ms>" started once in the pool's ledger, 3 in all, and the
 * dispatch log says "completed" for each. */
TEST_IMPL(cron_mp_pool) {
  static const char *const def[] = {
      "cron",   "define", "--key",       "pj", "--expr", "* * * * * *",
      "--pool", "P",      "--max-fires", "3",  NULL};
  static const char *const hist[] = {"history", "--key", "pj", NULL};
  char pool_ledger[320], key[64], ev[16], worker[64], id[8];
  const char *poolargs[] = {"pool", "node",     "--pool", "P", "--workers",
                            "2",    "--ledger", NULL,     NULL};
  const char *runargs[] = {"cron", "run",    "--node-id", NULL, "--ledger",
                           NULL,   "--pool", "P",         NULL};
  pid_t pool, runs[2];
  unsigned long long ns, tok;
  int k, i, starts = 0, match;
  FILE *f;
  const char *s;

  mp_setup(NULL, "fleet-cron-pool");
  snprintf(pool_ledger, sizeof(pool_ledger), "%s/pool-ledger", mp.dir);
  poolargs[7] = pool_ledger;
  pool = spawn_demo(poolargs);
  ASSERT_EQ(0, demo("def", def + 1));
  runargs[5] = mp.ledger;
  for (k = 0; k < 2; k++) {
    snprintf(id, sizeof(id), "n%d", k);
    runargs[3] = id;
    runs[k] = spawn_demo(runargs);
    sleep_ms(10);
  }
  sleep_ms(fleet_test_ms(1500) + 5500);
  for (k = 0; k < 2; k++)
    stop_pid(runs[k]);
  stop_pid(pool);

  read_ledger();
  ASSERT_EQ(3, check_no_twice("pj"));
  f = fopen(pool_ledger, "r");
  ASSERT_NOT_NULL(f);
  while (fscanf(f, "%llu %15s %63s %63s %llu", &ns, ev, key, worker, &tok) ==
         5) {
    if (strcmp(ev, "start") != 0)
      continue;
    starts++;
    match = 0;
    for (i = 0; i < mp.n; i++) {
      char want[64];

      snprintf(want, sizeof(want), "pj@%lld", (long long)mp.l[i].fire_ms);
      match += strcmp(want, key) == 0;
    }
    if (match != 1)
      fleet_test__fail(__FILE__, __LINE__, "pool started %s (%d fires)", key,
                       match);
  }
  fclose(f);
  ASSERT_EQ(3, starts);
  ASSERT_EQ(0, demo("hist", hist));
  s = demo_text("hist", "out");
  for (i = 0; i < 3; i++) {
    s = strstr(s, "\"outcome\":\"completed\"");
    ASSERT_NOT_NULL(s);
    s++;
  }
  ASSERT_NULL(strstr(demo_text("hist", "out"), "pending"));
  mp_teardown();
  return 0;
}

TEST_IMPL(cron_mp_demo_input) {
  static const char *const bad_expr[] = {"define", "--key",      "x",
                                         "--expr", "61 * * * *", NULL};
  static const char *const bad_tz[] = {"define",       "--key",     "x",
                                       "--expr",       "* * * * *", "--tz",
                                       "Mars/Olympus", NULL};
  static const char *const bad_policy[] = {"define", "--key",     "x",
                                           "--expr", "* * * * *", "--catch-up",
                                           "some",   NULL};
  static const char *const no_key[] = {"define", "--expr", "* * * * *", NULL};
  static const char *const rm_missing[] = {"remove", "--key", "nope", NULL};
  static const char *const bad_end[] = {
      "define", "--key", "x", "--expr", "* * * * *", "--end", "tomorrow", NULL};
  static const char *const end_first[] = {"define",
                                          "--key",
                                          "x",
                                          "--expr",
                                          "* * * * *",
                                          "--start",
                                          "2030-01-02T00:00:00Z",
                                          "--end",
                                          "2030-01-01T00:00:00Z",
                                          NULL};
  static const char *const zero_fires[] = {
      "define", "--key", "x", "--expr", "* * * * *", "--max-fires", "0", NULL};
  static const char *const good[] = {
      "define", "--key",         "x",         "--expr", "0 12 * * MON#2",
      "--tz",   "Europe/Berlin", "--payload", "p\"q",   NULL};
  static const char *const list[] = {"list", NULL};
  static const char *const hist[] = {"history", "--key", "x", NULL};
  static const char *const dis[] = {"disable", "--key", "x", NULL};
  const char *s;

  mp_setup(NULL, "fleet-cron-input");
  ASSERT_EQ(2, demo("e1", bad_expr));
  s = demo_text("e1", "err");
  ASSERT(strstr(s, "minute") != NULL);
  ASSERT_EQ(2, demo("e2", bad_tz));
  ASSERT(strstr(demo_text("e2", "err"), "Mars/Olympus") != NULL);
  ASSERT_EQ(2, demo("e3", bad_policy));
  ASSERT(strstr(demo_text("e3", "err"), "--catch-up") != NULL);
  ASSERT_EQ(2, demo("e4", no_key));
  ASSERT(strstr(demo_text("e4", "err"), "--key") != NULL);
  ASSERT_EQ(2, demo("e5", rm_missing));
  ASSERT(strstr(demo_text("e5", "err"), "not found") != NULL);
  ASSERT_EQ(2, demo("e6", bad_end));
  ASSERT(strstr(demo_text("e6", "err"), "--end must be an ISO 8601") != NULL);
  ASSERT_EQ(2, demo("e7", end_first));
  ASSERT(strstr(demo_text("e7", "err"), "end before start") != NULL);
  ASSERT_EQ(2, demo("e8", zero_fires));
  ASSERT(strstr(demo_text("e8", "err"), "--max-fires") != NULL);
  /* Nothing of the refused ones was written. */
  ASSERT_EQ(0, demo("l0", list));
  ASSERT_STR_EQ("[]\n", demo_text("l0", "out"));
  ASSERT_EQ(0, demo("ok", good));
  ASSERT_EQ(0, demo("dis", dis));
  ASSERT_EQ(0, demo("l1", list));
  s = demo_text("l1", "out");
  ASSERT(strncmp(s, "[{\"key\":\"x\",\"expr\":\"0 12 * * MON#2\"", 35) == 0);
  ASSERT(strstr(s, "\"tz\":\"Europe/Berlin\"") != NULL);
  ASSERT(strstr(s, "\"payload\":\"p\\\"q\"") != NULL);
  ASSERT(strstr(s, "\"enabled\":false") != NULL);
  ASSERT_EQ(0, demo("h", hist));
  ASSERT_STR_EQ("[]\n", demo_text("h", "out"));
  mp_teardown();
  return 0;
}
