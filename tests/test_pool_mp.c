/* test_pool_mp.c -- the worker pool across processes on Redis, run as a
 * user runs it: fleet-demo pool nodes with ledgers of monotonic times.
 * Three nodes of four workers take 1000 keys; one is killed with SIGKILL
 * (its jobs start elsewhere within worker TTL + ack grace); a node joins
 * (only the keys whose owner changed are stopped and started again);
 * one is stopped with SIGSTOP past its TTL (its jobs move; after SIGCONT
 * it reports each lost and runs none of them); shutdown stops every job,
 * and an old key can be dispatched again. Throughout, the merged ledgers
 * show no key running on two workers at once. Also: FLUSHDB under three
 * running nodes (they recover without a restart, and re-assert the jobs
 * they run), and a schedule planned
 * from three processes (each interval once, each key started once). */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pool/pool_int.h"
#include "test_lock_env.h"

#ifndef FLEET_DEMO_PATH
#define FLEET_DEMO_PATH "/nonexistent"
#endif

#define MP_KEYS 1000
#define MP_NODES 6
#define MP_TTL_MS 1000
#define MP_GRACE_MS 1000
#define MP_EVENTS 20000

typedef struct {
  uint64_t ns;
  char kind; /* s(tart), x (stop), l(ost), n(otify) */
  int node;
  int key;
  uint64_t token;
} mp_ev_t;

typedef struct {
  lock_env_t e;
  fleet_pool_node_t node;
  char url[256];
  char dir[256];
  pid_t pid[MP_NODES];
  /* Owners as the last jobs query saw them: node * 16 + worker, or -1. */
  int owner[MP_KEYS];
  int njobs;
  int answered;
  int status;
  int inflight, next, ok;
  mp_ev_t *ev;
  int nev;
} mp_t;

static mp_t mp;

static void mp_ledger_path(int k, char *out, size_t len) {
  snprintf(out, len, "%s/ledger-%d", mp.dir, k);
}

/* Spawns the node n<k> with 4 workers, and the flags `extra` (NULL
 * ended; NULL for none) after the usual ones. */
static pid_t mp_spawn_with(int k, char *const *extra) {
  char id[8], ledger[300];
  char *argv[32] = {"fleet-demo", "--url",          mp.url, "--prefix",
                    "locktest",   "pool",           "node", "--pool",
                    "mp",         "--workers",      "4",    "--node-id",
                    id,           "--ledger",       ledger, "--worker-ttl-ms",
                    "1000",       "--ack-grace-ms", "1000", NULL};
  pid_t pid;
  int i = 19;

  while (extra != NULL && *extra != NULL && i < 31)
    argv[i++] = *extra++;
  argv[i] = NULL;
  snprintf(id, sizeof(id), "n%d", k);
  mp_ledger_path(k, ledger, sizeof(ledger));
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

static pid_t mp_spawn(int k) {
  return mp_spawn_with(k, NULL);
}

/* Reads every ledger into mp.ev, sorted by time. */
static int mp_ev_cmp(const void *a, const void *b) {
  const mp_ev_t *x = a, *y = b;
  return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static void mp_read_ledgers(void) {
  char path[300], event[16], key[64], worker[64];
  unsigned long long ns, token;
  int k;

  mp.nev = 0;
  for (k = 0; k < MP_NODES; k++) {
    FILE *f;
    mp_ledger_path(k, path, sizeof(path));
    if ((f = fopen(path, "r")) == NULL)
      continue;
    while (fscanf(f, "%llu %15s %63s %63s %llu", &ns, event, key, worker,
                  &token) == 5) {
      mp_ev_t *e;
      ASSERT_LT(mp.nev, MP_EVENTS);
      e = &mp.ev[mp.nev++];
      e->ns = ns;
      e->kind = strcmp(event, "lost") == 0           ? 'l'
                : event[0] == 's' && event[2] == 'o' ? 'x'
                                                     : event[0];
      e->node = k;
      e->key = atoi(key + 1);
      e->token = token;
      ASSERT_EQ(k, worker[1] - '0');
    }
    fclose(f);
  }
  qsort(mp.ev, (size_t)mp.nev, sizeof(mp_ev_t), mp_ev_cmp);
}

/* No key starts on a node while it runs on another: a node's runs end at
 * its stop or lost line, or, for the runs it began before `dead_ns` (per
 * node; 0 for none), at that time: it was killed, or stopped by SIGSTOP
 * (a stopped process runs nothing). */
static void mp_check_overlap(const uint64_t *dead_ns) {
  static int active[MP_KEYS];
  static uint64_t token[MP_KEYS], since[MP_KEYS];
  int i;

  for (i = 0; i < MP_KEYS; i++)
    active[i] = -1;
  for (i = 0; i < mp.nev; i++) {
    const mp_ev_t *e = &mp.ev[i];
    int a = active[e->key];

    if (e->kind == 's') {
      if (a >= 0 && a != e->node &&
          !(dead_ns[a] && since[e->key] < dead_ns[a] && e->ns > dead_ns[a]))
        fleet_test__fail(__FILE__, __LINE__,
                         "key k%d started on n%d at %llu while on n%d", e->key,
                         e->node, (unsigned long long)e->ns, a);
      if (a >= 0 && a != e->node)
        ASSERT_UGT(e->token, token[e->key]);
      active[e->key] = e->node;
      token[e->key] = e->token;
      since[e->key] = e->ns;
    } else if ((e->kind == 'x' || e->kind == 'l') && a == e->node &&
               e->token >= token[e->key]) {
      /* (A larger token: the run was re-asserted after a data loss, which
       * gave it a new token without a start.) */
      active[e->key] = -1;
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Queries from this process                                                */

static void mp_on_jobs(fleet_pool_node_t *node, int status,
                       const fleet_pool_job_info_t *jobs, size_t n, void *arg) {
  size_t i;

  mp.answered++;
  mp.status = status;
  mp.njobs = (int)n;
  for (i = 0; i < MP_KEYS; i++)
    mp.owner[i] = -1;
  for (i = 0; i < n; i++) {
    char key[16];
    int k;
    snprintf(key, sizeof(key), "%.*s", (int)jobs[i].key.len,
             (const char *)jobs[i].key.base);
    k = atoi(key + 1);
    /* "n<node>/<worker>": node * 16 + worker. */
    if (k >= 0 && k < MP_KEYS && jobs[i].worker_id[0] == 'n')
      mp.owner[k] =
          (jobs[i].worker_id[1] - '0') * 16 + atoi(jobs[i].worker_id + 3);
  }
}

static void mp_query_jobs(void) {
  int want = mp.answered + 1;

  ASSERT_OK(fleet_pool_jobs(&mp.node, mp_on_jobs, NULL));
  ASSERT(lock_env_wait(&mp.e, &mp.answered, want, FLEET_TEST_WAIT_MS));
  ASSERT_OK(mp.status);
}

/* Waits until `pred` holds for the jobs, querying them every 50 ms, for
 * up to `ms` (scaled). Returns the time it took in ms. */
#define mp_wait_jobs(pred, ms) mp_wait_jobs_at(pred, ms, __LINE__)
static uint64_t mp_wait_jobs_at(int (*pred)(void), uint64_t ms, int line) {
  uint64_t t0 = lock_env_now(), end = t0 + fleet_test_ms(ms);

  for (;;) {
    mp_query_jobs();
    if (pred())
      return lock_env_now() - t0;
    if (lock_env_now() >= end) {
      int i, unplaced = 0;
      for (i = 0; i < MP_KEYS; i++)
        unplaced += mp.owner[i] < 0;
      fleet_test__fail(__FILE__, line, "%d jobs, %d without owner", mp.njobs,
                       unplaced);
    }
    lock_env_sleep(&mp.e, 50);
  }
}

static int mp_excluded = -1, mp_excluded2 = -1;

/* Every key runs, none on an excluded node. */
static int mp_all_placed(void) {
  int i;

  if (mp.njobs != MP_KEYS)
    return 0;
  for (i = 0; i < MP_KEYS; i++)
    if (mp.owner[i] < 0 || mp.owner[i] / 16 == mp_excluded ||
        mp.owner[i] / 16 == mp_excluded2)
      return 0;
  return 1;
}

static void mp_on_workers(fleet_pool_node_t *node, int status,
                          const fleet_pool_worker_info_t *w, size_t n,
                          void *arg) {
  *(size_t *)arg = status == 0 ? n : 0;
  mp.answered++;
}

static void mp_wait_workers(size_t want) {
  uint64_t end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
  size_t n = 0;

  for (;;) {
    int a = mp.answered + 1;
    ASSERT_OK(fleet_pool_workers(&mp.node, mp_on_workers, &n));
    ASSERT(lock_env_wait(&mp.e, &mp.answered, a, FLEET_TEST_WAIT_MS));
    if (n == want)
      return;
    if (lock_env_now() >= end)
      fleet_test__fail(__FILE__, __LINE__, "%zu workers, not %zu", n, want);
    lock_env_sleep(&mp.e, 20);
  }
}

/* Every job's owner is the one routing names under the membership read
 * last (mp_wait_workers reads it). */
static int mp_all_routed(void) {
  fleet__pool_t *p = fleet__pool_of(&mp.node);
  char key[16];
  int i;

  if (!mp_all_placed())
    return 0;
  for (i = 0; i < MP_KEYS; i++) {
    const char *w;
    snprintf(key, sizeof(key), "k%d", i);
    w = fleet__pool_route(p, key, strlen(key));
    if (w == NULL || (w[1] - '0') * 16 + atoi(w + 3) != mp.owner[i])
      return 0;
  }
  return 1;
}

static void mp_dispatch_next(void);

static void mp_on_dispatch(fleet_handle_t *h, int status, void *arg) {
  ASSERT_OK(status);
  mp.ok++;
  mp.inflight--;
  mp_dispatch_next();
}

/* Keeps up to 50 dispatches in flight. */
static void mp_dispatch_next(void) {
  char key[16];

  while (mp.inflight < 50 && mp.next < MP_KEYS) {
    snprintf(key, sizeof(key), "k%d", mp.next++);
    ASSERT_OK(fleet_pool_dispatch(&mp.node, key, (fleet_bytes_t){key, 3},
                                  mp_on_dispatch, NULL));
    mp.inflight++;
  }
}

static void mp_on_shutdown(fleet_handle_t *h, int status, void *arg) {
  ASSERT_OK(status);
  *(int *)arg = 1;
}

static void mp_on_reset(fleet_client_t *c, int status, void *arg) {
  (void)c;
  *(int *)arg = status == 0 ? 1 : status;
}

static int mp_none(void) {
  return mp.njobs == 0;
}

static void mp_end(int k) {
  int status;

  if (mp.pid[k] <= 0)
    return;
  kill(mp.pid[k], SIGCONT);
  kill(mp.pid[k], SIGTERM);
  ASSERT_EQ(mp.pid[k], waitpid(mp.pid[k], &status, 0));
  mp.pid[k] = 0;
}

static void mp_setup(fleet_test_redis_t *r, const char *dirname);

TEST_IMPL(pool_mp_chaos) {
  fleet_test_redis_t *r;
  uint64_t dead_ns[MP_NODES] = {0}, t, join_ns, stop_ns, cont_ns;
  int before[MP_KEYS], i, k, moved, stops, starts, lost, on_n1;

  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("fleet-demo was not built");
  r = fleet_test_redis_start_or_skip(NULL);
  mp_setup(r, "fleet-pool-mp");

  /* Three nodes, 1000 keys. */
  for (k = 0; k < 3; k++)
    mp.pid[k] = mp_spawn(k);
  mp_wait_workers(12);
  mp_dispatch_next();
  ASSERT(lock_env_wait(&mp.e, &mp.ok, MP_KEYS, 60000));
  mp_wait_jobs(mp_all_placed, FLEET_TEST_WAIT_MS);

  /* SIGKILL n2: its jobs start on n0 and n1 within TTL + grace. */
  for (i = 0; i < MP_KEYS; i++)
    before[i] = mp.owner[i];
  dead_ns[2] = uv_hrtime();
  kill(mp.pid[2], SIGKILL);
  ASSERT_EQ(mp.pid[2], waitpid(mp.pid[2], &k, 0));
  mp.pid[2] = 0;
  mp_excluded = 2;
  mp_wait_jobs(mp_all_placed, 10000);
  /* The ledgers say when each job of n2 started again: the last of them
   * within TTL + grace of the kill. */
  lock_env_sleep(&mp.e, 200);
  mp_read_ledgers();
  for (t = 0, i = 0; i < MP_KEYS; i++)
    if (before[i] / 16 == 2) {
      uint64_t first = 0;
      int j;
      for (j = 0; j < mp.nev && first == 0; j++)
        if (mp.ev[j].key == i && mp.ev[j].kind == 's' &&
            mp.ev[j].ns > dead_ns[2] && mp.ev[j].node != 2)
          first = mp.ev[j].ns;
      ASSERT_UGT(first, 0);
      if (first - dead_ns[2] > t)
        t = first - dead_ns[2];
    }
  ASSERT_ULE(t / 1000000, fleet_test_ms(MP_TTL_MS + MP_GRACE_MS));

  /* n3 joins: only the keys whose owner changed move. */
  mp_wait_workers(8);
  mp_wait_jobs(mp_all_routed, FLEET_TEST_WAIT_MS);
  for (i = 0; i < MP_KEYS; i++)
    before[i] = mp.owner[i];
  join_ns = uv_hrtime();
  mp.pid[3] = mp_spawn(3);
  mp_wait_workers(12);
  mp_wait_jobs(mp_all_routed, FLEET_TEST_WAIT_MS);
  lock_env_sleep(&mp.e, 200);
  mp_read_ledgers();
  for (moved = i = 0; i < MP_KEYS; i++)
    moved += before[i] != mp.owner[i];
  ASSERT_GT(moved, MP_KEYS / 5);
  ASSERT_LT(moved, MP_KEYS / 2);
  for (stops = starts = i = 0; i < mp.nev; i++) {
    if (mp.ev[i].ns < join_ns)
      continue;
    if (mp.ev[i].kind == 'x') {
      ASSERT_NE(before[mp.ev[i].key], mp.owner[mp.ev[i].key]);
      stops++;
    } else if (mp.ev[i].kind == 's') {
      ASSERT_NE(before[mp.ev[i].key], mp.owner[mp.ev[i].key]);
      starts++;
    }
  }
  ASSERT_EQ(moved, stops);
  ASSERT_EQ(moved, starts);

  /* SIGSTOP n1 past its TTL: its jobs move; after SIGCONT it reports
   * each of them lost and runs none of them. */
  for (on_n1 = i = 0; i < MP_KEYS; i++)
    on_n1 += mp.owner[i] / 16 == 1;
  ASSERT_GT(on_n1, 0);
  stop_ns = uv_hrtime();
  kill(mp.pid[1], SIGSTOP);
  mp_excluded2 = 1;
  mp_wait_jobs(mp_all_placed, 10000);
  cont_ns = uv_hrtime();
  kill(mp.pid[1], SIGCONT);
  lock_env_sleep(&mp.e, (uint64_t)fleet_test_ms(500));
  mp_read_ledgers();
  for (lost = i = 0; i < mp.nev; i++)
    if (mp.ev[i].node == 1 && mp.ev[i].ns > cont_ns && mp.ev[i].kind != 's') {
      /* Only its old jobs, each told lost; new starts (it joined again)
       * carry new tokens. */
      ASSERT_EQ('l', mp.ev[i].kind);
      lost++;
    }
  ASSERT_EQ(on_n1, lost);
  dead_ns[1] = stop_ns;
  mp_check_overlap(dead_ns);
  mp_excluded2 = -1;

  /* Shutdown: every job stops everywhere; once the pool is reset, an old
   * key can be dispatched again, to a new node. */
  mp_wait_jobs(mp_all_placed, FLEET_TEST_WAIT_MS);
  {
    int done = 0;
    ASSERT_OK(fleet_pool_shutdown(&mp.node, mp_on_shutdown, &done));
    ASSERT(lock_env_wait(&mp.e, &done, 1, FLEET_TEST_WAIT_MS));
  }
  mp_wait_jobs(mp_none, FLEET_TEST_WAIT_MS);
  lock_env_sleep(&mp.e, (uint64_t)fleet_test_ms(300));
  mp_read_ledgers();
  mp_check_overlap(dead_ns);
  {
    static int last[MP_KEYS];
    for (i = 0; i < MP_KEYS; i++)
      last[i] = 0;
    for (i = 0; i < mp.nev; i++)
      if (mp.ev[i].node != 2)
        last[mp.ev[i].key] = mp.ev[i].kind;
    for (i = 0; i < MP_KEYS; i++)
      ASSERT(last[i] == 'x' || last[i] == 'l');
  }
  {
    int done = 0;
    ASSERT_OK(fleet_pool_reset(&mp.e.c1, "mp", mp_on_reset, &done));
    ASSERT(lock_env_wait(&mp.e, &done, 1, FLEET_TEST_WAIT_MS));
    ASSERT_EQ(1, done);
  }
  mp.pid[4] = mp_spawn(4);
  mp_wait_workers(4);
  mp.next = MP_KEYS; /* dispatch nothing more from the callback */
  mp.ok = 0;
  ASSERT_OK(fleet_pool_dispatch(&mp.node, "k0", (fleet_bytes_t){"k0", 2},
                                mp_on_dispatch, NULL));
  ASSERT(lock_env_wait(&mp.e, &mp.ok, 1, FLEET_TEST_WAIT_MS));

  mp_excluded = mp_excluded2 = -1;
  lock_env_sleep(&mp.e, 10);
  for (k = 0; k < MP_NODES; k++)
    mp_end(k);
  fleet_pool_node_close(&mp.node, NULL);
  lock_env_close(&mp.e);
  for (k = 0; k < MP_NODES; k++) {
    char path[300];
    mp_ledger_path(k, path, sizeof(path));
    unlink(path);
  }
  rmdir(mp.dir);
  free(mp.ev);
  fleet_test_redis_free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* A ticker over three processes, one killed                                */

static pid_t mp_spawn_ticker(int k) {
  char id[8], ledger[300], ttl[24];
  char *argv[] = {"fleet-demo", "--url",    mp.url,
                  "--prefix",   "locktest", "pool",
                  "ticker",     "--pool",   "mp",
                  "--name",     "t",        "--period-ms",
                  "20",         "--ledger", ledger,
                  "--node-id",  id,         "--worker-ttl-ms",
                  ttl,          NULL};
  pid_t pid;

  snprintf(id, sizeof(id), "n%d", k);
  snprintf(ttl, sizeof(ttl), "%llu", (unsigned long long)fleet_test_ms(500));
  mp_ledger_path(k, ledger, sizeof(ledger));
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  return pid;
}

/* The sequence numbers the ledgers hold: per seq, how many first
 * deliveries (`seen`) and redeliveries (`again`) there were; returns the
 * highest. */
static uint64_t mp_ticks(int *seen, int *again, size_t max) {
  char path[300], line[256], name[16], node[16], ev[16], flag[16];
  unsigned long long ns, seq;
  uint64_t top = 0;
  int k, n;

  memset(seen, 0, max * sizeof(int));
  memset(again, 0, max * sizeof(int));
  for (k = 0; k < 3; k++) {
    FILE *f;
    mp_ledger_path(k, path, sizeof(path));
    if ((f = fopen(path, "r")) == NULL)
      continue;
    while (fgets(line, sizeof(line), f) != NULL) {
      if (strchr(line, '\n') == NULL)
        break; /* a line being written */
      n = sscanf(line, "%llu %15s %15s %llu %15s %15s", &ns, ev, name, &seq,
                 node, flag);
      ASSERT(n == 5 || n == 6);
      ASSERT_STR_EQ("tick", ev);
      ASSERT_ULT(seq, max);
      if (n == 6) {
        ASSERT_STR_EQ("redelivered", flag);
        again[seq]++;
      } else {
        seen[seq]++;
      }
      if (seq > top)
        top = seq;
    }
    fclose(f);
  }
  return top;
}

/* Three ticker processes, one killed with SIGKILL: every sequence number
 * up to the last is in the ledgers, each delivered once, except that one
 * the killed process claimed and did not acknowledge may come a second
 * time, to a survivor, marked as a redelivery (once its lease, 500 ms
 * times the slack, lapsed); none is missing. A tick claimed by a process
 * as it closes comes again the same way. */
TEST_IMPL(pool_mp_ticker) {
  static int seen[4096], again[4096];
  fleet_test_redis_t *r;
  const char *tmp = getenv("TMPDIR");
  uint64_t top, end, s, killed_at;
  int k, status, redelivered = 0;

  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("fleet-demo was not built");
  r = fleet_test_redis_start_or_skip(NULL);
  memset(&mp, 0, sizeof(mp));
  snprintf(mp.url, sizeof(mp.url), "%s", fleet_test_redis_url(r));
  snprintf(mp.dir, sizeof(mp.dir), "%s/fleet-pool-tick-XXXXXX",
           tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
  ASSERT_NOT_NULL(mkdtemp(mp.dir));
  lock_env_init(&mp.e, mp.url);
  for (k = 0; k < 3; k++)
    mp.pid[k] = mp_spawn_ticker(k);
  end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
  while (mp_ticks(seen, again, 4096) < 40) {
    ASSERT_ULT(lock_env_now(), end);
    lock_env_sleep(&mp.e, 20);
  }
  kill(mp.pid[1], SIGKILL);
  ASSERT_EQ(mp.pid[1], waitpid(mp.pid[1], &status, 0));
  mp.pid[1] = 0;
  killed_at = lock_env_now();
  /* 100 ticks, and long enough for a lease the dead one held to lapse
   * and its tick to be claimed again (a survivor claims every period). */
  end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
  while (mp_ticks(seen, again, 4096) < 100 ||
         lock_env_now() < killed_at + 3 * fleet_test_ms(500)) {
    ASSERT_ULT(lock_env_now(), end);
    lock_env_sleep(&mp.e, 20);
  }
  /* The survivors close; a claim whose reply was in flight then is
   * never delivered by its closing claimer, and its lease lapses. A
   * fresh ticker, in the dead one's place, delivers such ticks again
   * (flagged) once their leases lapsed; the check covers the ticks up to
   * the last one delivered before the close. */
  top = mp_ticks(seen, again, 4096);
  for (k = 0; k < 3; k++)
    mp_end(k);
  mp.pid[1] = mp_spawn_ticker(1);
  lock_env_sleep(&mp.e, 3 * fleet_test_ms(500));
  mp_end(1);
  mp_ticks(seen, again, 4096);
  ASSERT_UGE(top, 100);
  for (s = 1; s <= top; s++) {
    ASSERT_LE(seen[s], 1);
    ASSERT_LE(again[s], 1);
    ASSERT_GE(seen[s] + again[s], 1);
    redelivered += again[s];
  }
  /* Only a claim a process held as it died or closed can need a
   * redelivery: at most one per process. */
  ASSERT_LE(redelivered, 3);
  lock_env_close(&mp.e);
  for (k = 0; k < 3; k++) {
    char path[300];
    mp_ledger_path(k, path, sizeof(path));
    unlink(path);
  }
  rmdir(mp.dir);
  fleet_test_redis_free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* FLUSHDB under three running nodes                                        */

/* The workers `pool status` shows: their count, and a bit per node. */
static int mp_status(unsigned *nodes) {
  char cmd[600], line[65536], *p;
  FILE *f;
  int n = 0;

  snprintf(cmd, sizeof(cmd),
           "'%s' --url '%s' --prefix locktest pool status --pool mp",
           FLEET_DEMO_PATH, mp.url);
  *nodes = 0;
  f = popen(cmd, "r");
  ASSERT_NOT_NULL(f);
  if (fgets(line, sizeof(line), f) == NULL)
    line[0] = '\0';
  pclose(f);
  for (p = line; (p = strstr(p, "\"node\":\"n")) != NULL; p++) {
    *nodes |= 1u << (p[9] - '0');
    n++;
  }
  return n;
}

static int mp_njobs_want;

static int mp_njobs_are(void) {
  return mp.njobs == mp_njobs_want;
}

static void mp_setup(fleet_test_redis_t *r, const char *dirname) {
  fleet_pool_node_options_t o;
  const char *tmp = getenv("TMPDIR");

  memset(&mp, 0, sizeof(mp));
  mp.ev = calloc(MP_EVENTS, sizeof(mp_ev_t));
  ASSERT_NOT_NULL(mp.ev);
  snprintf(mp.url, sizeof(mp.url), "%s", fleet_test_redis_url(r));
  snprintf(mp.dir, sizeof(mp.dir), "%s/%s-XXXXXX",
           tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", dirname);
  ASSERT_NOT_NULL(mkdtemp(mp.dir));
  lock_env_init(&mp.e, mp.url);
  fleet_pool_node_options_init(&o);
  o.client_only = 1;
  o.max_queued_jobs = FLEET_POOL_UNLIMITED;
  o.worker_ttl_ms = MP_TTL_MS;
  o.ack_grace_ms = MP_GRACE_MS;
  ASSERT_OK(fleet_pool_node_init(&mp.e.c1, &mp.node, "mp", "t", &o));
}

static void mp_teardown(fleet_test_redis_t *r) {
  int k;

  for (k = 0; k < MP_NODES; k++)
    mp_end(k);
  fleet_pool_node_close(&mp.node, NULL);
  lock_env_close(&mp.e);
  for (k = 0; k < MP_NODES; k++) {
    char path[300];
    mp_ledger_path(k, path, sizeof(path));
    unlink(path);
    snprintf(path, sizeof(path), "%s/plan-%d", mp.dir, k);
    unlink(path);
  }
  rmdir(mp.dir);
  free(mp.ev);
  fleet_test_redis_free(r);
}

static int mp_exists;

static void mp_on_exists(fleet_handle_t *h, int status, void *arg) {
  ASSERT_ERR(FLEET_EEXIST, status);
  mp_exists++;
}

/* The 30 jobs run again, each on a node (mp.owner from the last query). */
static int mp_flushed_placed(void) {
  int i;

  if (mp.njobs != 30)
    return 0;
  for (i = MP_KEYS - 30; i < MP_KEYS; i++)
    if (mp.owner[i] < 0)
      return 0;
  return 1;
}

/* Three nodes run 30 jobs; FLUSHDB wipes the pool. Without a restart,
 * `pool status` shows the three nodes' twelve workers again, and the
 * nodes re-assert the jobs they run: the pool lists all 30 again within
 * worker TTL + ack grace, each with an owner, so a dispatch of an old key
 * gets FLEET_EEXIST while a new key starts. The ledgers show no key on
 * two nodes at once, and each of the 30 keys runs at the end on the
 * owner the pool names (the jobs that moved when the membership was
 * rebuilt were stopped, then started, on their new owner). */
TEST_IMPL(pool_mp_flushdb) {
  static const uint64_t none[MP_NODES];
  fleet_test_redis_t *r;
  uint64_t end;
  unsigned nodes;
  int i, j, k, n;

  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("fleet-demo was not built");
  r = fleet_test_redis_start_or_skip(NULL);
  mp_setup(r, "fleet-pool-flush");

  for (k = 0; k < 3; k++)
    mp.pid[k] = mp_spawn(k);
  mp_wait_workers(12);
  mp.next = MP_KEYS - 30;
  mp_dispatch_next();
  ASSERT(lock_env_wait(&mp.e, &mp.ok, 30, FLEET_TEST_WAIT_MS));
  mp_njobs_want = 30;
  mp_wait_jobs(mp_njobs_are, FLEET_TEST_WAIT_MS);

  fleet_test_redis_ok(r, "FLUSHDB");
  end = lock_env_now() + fleet_test_ms(MP_TTL_MS + MP_GRACE_MS);
  while ((n = mp_status(&nodes)) != 12 || nodes != 7u) {
    if (lock_env_now() >= end)
      fleet_test__fail(__FILE__, __LINE__,
                       "%d workers, nodes 0x%x, after FLUSHDB", n, nodes);
    lock_env_sleep(&mp.e, 20);
  }
  mp_wait_jobs(mp_flushed_placed, MP_TTL_MS + MP_GRACE_MS);

  /* Old keys are in the pool again; a new key starts. */
  mp.ok = 0;
  mp_exists = 0;
  for (i = MP_KEYS - 30; i < MP_KEYS; i += 10) {
    char key[16];
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_OK(fleet_pool_dispatch(&mp.node, key, (fleet_bytes_t){"x", 1},
                                  mp_on_exists, NULL));
  }
  ASSERT_OK(fleet_pool_dispatch(&mp.node, "k1", (fleet_bytes_t){"k1", 2},
                                mp_on_dispatch, NULL));
  ASSERT(lock_env_wait(&mp.e, &mp.ok, 1, FLEET_TEST_WAIT_MS));
  ASSERT(lock_env_wait(&mp.e, &mp_exists, 3, FLEET_TEST_WAIT_MS));
  mp_njobs_want = 31;
  mp_wait_jobs(mp_njobs_are, FLEET_TEST_WAIT_MS);
  lock_env_sleep(&mp.e, (uint64_t)fleet_test_ms(200));
  mp_query_jobs();
  ASSERT_EQ(31, mp.njobs);
  mp_read_ledgers();
  mp_check_overlap(none);
  for (i = MP_KEYS - 30; i <= MP_KEYS; i++) {
    int key = i == MP_KEYS ? 1 : i, last = -1;
    for (j = 0; j < mp.nev; j++)
      if (mp.ev[j].key == key)
        last = j;
    ASSERT_GE(last, 0);
    ASSERT_EQ('s', mp.ev[last].kind);
    ASSERT_EQ(mp.owner[key] / 16, mp.ev[last].node);
  }
  mp_teardown(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* A schedule planned from three processes                                  */

#define MP_PLANS 4096

static pid_t mp_spawn_schedule(int k) {
  char id[8], ledger[300];
  char *argv[] = {"fleet-demo", "--url",    mp.url,     "--prefix",
                  "locktest",   "pool",     "schedule", "--pool",
                  "mp",         "--name",   "q",        "--interval-ms",
                  "100",        "--ledger", ledger,     "--node-id",
                  id,           NULL};
  pid_t pid;

  snprintf(id, sizeof(id), "p%d", k);
  snprintf(ledger, sizeof(ledger), "%s/plan-%d", mp.dir, k);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  return pid;
}

/* Counts the plans per interval (from the planners' ledgers) and the
 * starts of each planned key "q-<seq>" (from the nodes'); returns the
 * highest interval planned. */
static uint64_t mp_plans(int *planned, int *started) {
  char path[300], a[64], b[64], c[64], d[64];
  unsigned long long ns, x;
  uint64_t top = 0;
  int k;

  memset(planned, 0, MP_PLANS * sizeof(int));
  memset(started, 0, MP_PLANS * sizeof(int));
  for (k = 0; k < 6; k++) {
    FILE *f;
    if (k < 3)
      mp_ledger_path(k, path, sizeof(path));
    else
      snprintf(path, sizeof(path), "%s/plan-%d", mp.dir, k - 3);
    if ((f = fopen(path, "r")) == NULL)
      continue;
    while (fscanf(f, "%llu %63s %63s %63s %63s", &ns, a, b, c, d) == 5) {
      if (k >= 3) {
        ASSERT_STR_EQ("plan", a);
        ASSERT_STR_EQ("q", b);
        x = strtoull(c, NULL, 10);
        ASSERT_ULT(x, MP_PLANS);
        planned[x]++;
        if (x > top)
          top = x;
      } else if (strcmp(a, "start") == 0) {
        ASSERT(strncmp(b, "q-", 2) == 0);
        x = strtoull(b + 2, NULL, 10);
        ASSERT_ULT(x, MP_PLANS);
        started[x]++;
      }
    }
    fclose(f);
  }
  return top;
}

/* Three nodes of two workers, three client-only planners of schedule "q"
 * (100 ms). Each interval is planned by one planner, or by none (an
 * interval that comes while its planner still applies the last plan is
 * skipped); each planned key starts exactly once. */
TEST_IMPL(pool_mp_schedule) {
  static int planned[MP_PLANS], started[MP_PLANS];
  fleet_test_redis_t *r;
  uint64_t top, top0, end, s;
  int k, nplans, skipped, abandoned;

  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("fleet-demo was not built");
  r = fleet_test_redis_start_or_skip(NULL);
  mp_setup(r, "fleet-pool-sched");
  for (k = 0; k < 3; k++)
    mp.pid[k] = mp_spawn(k);
  mp_wait_workers(12);
  for (k = 0; k < 3; k++)
    mp.pid[3 + k] = mp_spawn_schedule(k);
  end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
  while (mp_plans(planned, started) < 30) {
    ASSERT_ULT(lock_env_now(), end);
    lock_env_sleep(&mp.e, 20);
  }
  /* A planner ended (SIGTERM: it closes) between logging its plan and
   * the plan's dispatch reaching Redis leaves that key unstarted: the
   * close cancels it. Only the last intervals before the end can have
   * one, at most one per planner; every earlier planned key starts. */
  top0 = mp_plans(planned, started);
  for (k = 3; k < 6; k++)
    mp_end(k);
  /* Every planned key starts, once. */
  end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
  for (;;) {
    int pending = 0;
    top = mp_plans(planned, started);
    for (s = 1; s + 3 <= top0; s++)
      pending += planned[s] == 1 && started[s] == 0;
    if (pending == 0)
      break;
    ASSERT_ULT(lock_env_now(), end);
    lock_env_sleep(&mp.e, 20);
  }
  lock_env_sleep(&mp.e, (uint64_t)fleet_test_ms(200));
  top = mp_plans(planned, started);
  for (nplans = skipped = abandoned = 0, s = 1; s < MP_PLANS; s++) {
    ASSERT_LE(planned[s], 1);
    ASSERT_LE(started[s], planned[s]);
    if (s + 3 <= top0)
      ASSERT_EQ(planned[s], started[s]);
    else
      abandoned += planned[s] - started[s];
    nplans += planned[s];
    skipped += s <= top && planned[s] == 0;
  }
  ASSERT_LE(abandoned, 3);
  ASSERT_GE(nplans, 30 - skipped);
  ASSERT_LE(skipped, (int)top / 4);
  mp_teardown(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* A start handler's requeue, picked up by another node                     */

#define MP_RQ_KEYS 20

static int mp_rq_answered, mp_rq_ok;

static void mp_rq_on_dispatch(fleet_handle_t *h, int status, void *arg) {
  (void)h;
  (void)arg;
  mp_rq_answered++;
  mp_rq_ok += status == 0;
}

/* The ledger lines of node `node` of `kind` for key `key`, in time order,
 * into `out` (at most `max`). Returns how many. */
static int mp_rq_lines(int node, char kind, int key, const mp_ev_t **out,
                       int max) {
  int i, n = 0;

  for (i = 0; i < mp.nev && n < max; i++)
    if (mp.ev[i].node == node && mp.ev[i].kind == kind && mp.ev[i].key == key)
      out[n++] = &mp.ev[i];
  return n;
}

static int mp_rq_requeued;

static void mp_rq_on_states(fleet_client_t *c, int status,
                            const fleet_pool_job_status_t *jobs, size_t n,
                            void *arg) {
  size_t i;

  (void)c;
  ASSERT_OK(status);
  mp_rq_requeued = 0;
  for (i = 0; i < n; i++)
    mp_rq_requeued += jobs[i].state == FLEET_POOL_JOB_REQUEUED &&
                      jobs[i].worker_id[0] == '\0';
  (*(int *)arg)++;
}

/* Every job runs on node n1, each with one owner. */
static int mp_rq_on_n1(void) {
  int i;

  if (mp.njobs != MP_RQ_KEYS)
    return 0;
  for (i = 0; i < MP_RQ_KEYS; i++)
    if (mp.owner[i] < 0 || mp.owner[i] / 16 != 1)
      return 0;
  return 1;
}

/* Node n0's start handler hands every job back (fleet_pool_job_requeue,
 * fleet-demo --requeue-starts) and n0 leaves while they wait out their
 * backoff; node n1, which joins after, picks them up. From the ledgers
 * (monotonic times of one machine) and the pool: every job n0 was given
 * was requeued and never reported started there; while nobody owns them
 * the pool shows them requeued; n1 starts each exactly once, with a newer
 * token, no sooner than the backoff (doubled per requeue in a row, server
 * clock) after n0's last requeue of it; every dispatch hears n1's start. */
TEST_IMPL(pool_mp_requeue) {
  char backoff_str[16];
  char *requeue[] = {"--requeue-starts",
                     "1000000",
                     "--requeue-backoff-ms",
                     backoff_str,
                     "--max-requeues",
                     "8",
                     NULL};
  uint64_t backoff = (uint64_t)fleet_test_ms(500);
  fleet_pool_node_options_t o;
  fleet_pool_node_t disp;
  fleet_test_redis_t *r;
  uint64_t end;
  int i, n, done = 0;

  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("fleet-demo was not built");
  r = fleet_test_redis_start_or_skip(NULL);
  mp_setup(r, "fleet-pool-requeue");
  snprintf(backoff_str, sizeof(backoff_str), "%llu",
           (unsigned long long)backoff);
  /* The dispatches wait for the start after the backoff. */
  fleet_pool_node_options_init(&o);
  o.client_only = 1;
  o.ack_grace_ms = (uint32_t)(backoff + (uint64_t)fleet_test_ms(2000));
  ASSERT_OK(fleet_pool_node_init(&mp.e.c2, &disp, "mp", "d", &o));

  mp.pid[0] = mp_spawn_with(0, requeue);
  mp_wait_workers(4);
  for (i = 0; i < MP_RQ_KEYS; i++) {
    char key[16];
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_OK(fleet_pool_dispatch(&disp, key, (fleet_bytes_t){key, 2},
                                  mp_rq_on_dispatch, NULL));
  }
  /* Every job requeued once by n0; then n0 leaves. */
  end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
  for (n = 0; n < MP_RQ_KEYS;) {
    ASSERT_LT(lock_env_now(), end);
    lock_env_sleep(&mp.e, 10);
    mp_read_ledgers();
    for (i = n = 0; i < mp.nev; i++)
      n += mp.ev[i].kind == 'r';
  }
  mp_end(0);
  ASSERT_OK(fleet_pool_query_jobs(&mp.e.c1, "mp", mp_rq_on_states, &done));
  ASSERT(lock_env_wait(&mp.e, &done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(MP_RQ_KEYS, mp_rq_requeued);

  mp.pid[1] = mp_spawn(1);
  mp_wait_jobs(mp_rq_on_n1, FLEET_TEST_WAIT_MS);
  ASSERT(lock_env_wait(&mp.e, &mp_rq_answered, MP_RQ_KEYS, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(MP_RQ_KEYS, mp_rq_ok);
  mp_read_ledgers();
  for (i = 0; i < MP_RQ_KEYS; i++) {
    const mp_ev_t *s0[16], *q0[16], *s1[4];
    int ns0 = mp_rq_lines(0, 's', i, s0, 16),
        nq0 = mp_rq_lines(0, 'r', i, q0, 16);
    int j;

    /* n0 handed back every start it got, each with its own token. */
    ASSERT_GE(nq0, 1);
    ASSERT_EQ(ns0, nq0);
    for (j = 0; j < nq0; j++) {
      ASSERT_EQ(s0[j]->token, q0[j]->token);
      ASSERT_GE(q0[j]->ns, s0[j]->ns);
    }
    ASSERT_EQ(0,
              mp_rq_lines(0, 'x', i, s0, 16) + mp_rq_lines(0, 'l', i, s0, 16));
    /* n1 started it once, later than the backoff of n0's last requeue
     * (a ms between the clocks allowed), with a newer token. */
    ASSERT_EQ(1, mp_rq_lines(1, 's', i, s1, 4));
    ASSERT_GT(s1[0]->token, q0[nq0 - 1]->token);
    ASSERT_GE(s1[0]->ns + 1000000,
              q0[nq0 - 1]->ns + (backoff << (nq0 - 1)) * 1000000);
  }
  fleet_pool_node_close(&disp, NULL);
  mp_teardown(r);
  return 0;
}
