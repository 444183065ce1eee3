/* test_warmpool_mp.c -- the warm pool across processes on Redis, run as a
 * user runs it: fleet-demo warmpool nodes whose resources are directories
 * under one root, with ledgers of monotonic times ("<ns> <event> <id>
 * <node> <token>").
 *
 *   converge/failover: 3 nodes converge to 10 idle; the primary is killed
 *     with SIGKILL mid-warm-up and a new primary leads within the lease
 *     TTL; the next primary is paused (SIGSTOP) mid-warm-up past its TTL,
 *     and after SIGCONT its late puts are refused and destroyed; resize 10
 *     -> 3 -> 0 converges; a node with another definition is refused; at
 *     the end no directory is left and every id any ledger created was
 *     destroyed.
 *   acquire: 3 processes x 100 concurrent acquires from a pool of 3 nodes:
 *     no id handed out twice, each one a directory when handed out.
 *   borrower: a borrower killed with SIGKILL while it holds a resource
 *     under a lease: the primary destroys the resource.
 *   idle TTL: the entries of nodes with a short idle TTL are reaped
 *     (their directories removed) and replaced.
 *   redis down: acquire and resize fail with FLEET_EUNAVAILABLE and create
 *     nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_lock_env.h"
#include "warmpool/warmpool_int.h"

#ifndef FLEET_DEMO_PATH
#define FLEET_DEMO_PATH "/nonexistent"
#endif

#define WM_NODES 4
#define WM_PRIMARY_TTL_MS 1500
#define WM_IDS 4096

typedef struct {
  lock_env_t e;
  fleet_warmpool_t wp; /* client-only: snapshots, resizes, drains */
  char url[256];
  char dir[256];
  char root[300];
  pid_t pid[WM_NODES];
  int done, status;
  fleet_warmpool_snapshot_t s;
  char primary[64];
} wm_t;

static wm_t wm;

/* --idle-ttl-ms for the nodes spawned next (NULL: the demo's default). */
static const char *wm_idle_ttl;

static void wm_path(const char *id, char *out, size_t cap) {
  snprintf(out, cap, "%s/%s", wm.root, id);
}

/* The test's own create and destroy: the demo's directories. */
static void wm_create(fleet_warmpool_t *pool, fleet_warmpool_work_t *w) {
  char path[600];

  (void)pool;
  wm_path(fleet_warmpool_work_id(w), path, sizeof(path));
  fleet_warmpool_work_done(w, mkdir(path, 0755) == 0 ? 0 : FLEET_EBACKEND,
                           NULL);
}

static void wm_destroy(fleet_warmpool_t *pool, fleet_warmpool_work_t *w) {
  char path[600], file[700];

  (void)pool;
  wm_path(fleet_warmpool_work_id(w), path, sizeof(path));
  snprintf(file, sizeof(file), "%s/creator", path);
  unlink(file);
  rmdir(path);
  fleet_warmpool_work_done(w, 0, NULL);
}

static int wm_count_dirs(void) {
  DIR *d = opendir(wm.root);
  struct dirent *de;
  int n = 0;

  ASSERT_NOT_NULL(d);
  while ((de = readdir(d)) != NULL)
    n += de->d_name[0] != '.';
  closedir(d);
  return n;
}

static void wm_rm_tree(void) {
  DIR *d = opendir(wm.root);
  struct dirent *de;
  char path[600], file[700];
  int k;

  if (d != NULL) {
    while ((de = readdir(d)) != NULL) {
      if (de->d_name[0] == '.')
        continue;
      wm_path(de->d_name, path, sizeof(path));
      snprintf(file, sizeof(file), "%s/creator", path);
      unlink(file);
      rmdir(path);
    }
    closedir(d);
  }
  rmdir(wm.root);
  for (k = 0; k < WM_NODES + 4; k++) {
    snprintf(path, sizeof(path), "%s/ledger-%d", wm.dir, k);
    unlink(path);
    snprintf(path, sizeof(path), "%s/err-%d", wm.dir, k);
    unlink(path);
  }
  rmdir(wm.dir);
}

/* The answer of a start (wm_start()). */
typedef struct {
  int done, status;
} wm_started_t;

static void wm_on_start(fleet_handle_t *h, int status, void *arg) {
  wm_started_t *st = arg;

  (void)h;
  st->status = status;
  st->done++;
}

/* Starts `wp` with the test's handlers and returns the start's answer: a
 * node acquires and releases with the handlers its start gives. */
static int wm_start(lock_env_t *e, fleet_warmpool_t *wp) {
  static const fleet_warmpool_handlers_t handlers = {wm_create, wm_destroy,
                                                     NULL};
  wm_started_t st = {0, 0};

  ASSERT_OK(fleet_warmpool_start(wp, &handlers, wm_on_start, &st));
  ASSERT(lock_env_wait(e, &st.done, 1, FLEET_TEST_WAIT_MS));
  return st.status;
}

static void wm_setup(fleet_test_redis_t *r, const char *name,
                     uint32_t lease_ms) {
  fleet_warmpool_options_t o;
  const char *tmp = getenv("TMPDIR");

  memset(&wm, 0, sizeof(wm));
  wm_idle_ttl = NULL;
  snprintf(wm.url, sizeof(wm.url), "%s", fleet_test_redis_url(r));
  snprintf(wm.dir, sizeof(wm.dir), "%s/%s-XXXXXX",
           tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", name);
  ASSERT_NOT_NULL(mkdtemp(wm.dir));
  snprintf(wm.root, sizeof(wm.root), "%s/root", wm.dir);
  ASSERT_OK(mkdir(wm.root, 0755));
  lock_env_init(&wm.e, wm.url);
  fleet_warmpool_options_init(&o);
  o.client_only = 1;
  o.borrow_lease_ms = lease_ms;
  /* As the demo's nodes (their defaults), so that live idle counts agree. */
  o.idle_ttl_ms = 60000;
  o.min_remaining_ms = 15000;
  ASSERT_OK(fleet_warmpool_init(&wm.e.c1, &wm.wp, "wm", "t", &o));
}

static void wm_teardown(fleet_test_redis_t *r) {
  int k, st;

  for (k = 0; k < WM_NODES; k++)
    if (wm.pid[k] > 0) {
      kill(wm.pid[k], SIGCONT);
      kill(wm.pid[k], SIGKILL);
      waitpid(wm.pid[k], &st, 0);
    }
  fleet_warmpool_close(&wm.wp, NULL);
  lock_env_close(&wm.e);
  wm_rm_tree();
  fleet_test_redis_free(r);
}

/* Starts `fleet-demo warmpool node` number k with extra flags. */
static pid_t wm_spawn_node(int k, const char *target, const char *warmup_ms,
                           const char *fingerprint, const char *lease_ms) {
  char id[8], ledger[300], ttl[16];
  char *argv[40];
  int n = 0;
  pid_t pid;

  snprintf(id, sizeof(id), "n%d", k);
  snprintf(ledger, sizeof(ledger), "%s/ledger-%d", wm.dir, k);
  snprintf(ttl, sizeof(ttl), "%d", WM_PRIMARY_TTL_MS);
  argv[n++] = "fleet-demo";
  argv[n++] = "--url";
  argv[n++] = wm.url;
  argv[n++] = "--prefix";
  argv[n++] = "locktest";
  argv[n++] = "warmpool";
  argv[n++] = "node";
  argv[n++] = "--pool";
  argv[n++] = "wm";
  argv[n++] = "--root";
  argv[n++] = wm.root;
  argv[n++] = "--target";
  argv[n++] = (char *)target;
  argv[n++] = "--warmup-ms";
  argv[n++] = (char *)warmup_ms;
  argv[n++] = "--reconcile-ms";
  argv[n++] = "100";
  argv[n++] = "--primary-ttl-ms";
  argv[n++] = ttl;
  argv[n++] = "--node-id";
  argv[n++] = id;
  argv[n++] = "--ledger";
  argv[n++] = ledger;
  if (fingerprint != NULL) {
    argv[n++] = "--fingerprint";
    argv[n++] = (char *)fingerprint;
  }
  if (wm_idle_ttl != NULL) {
    argv[n++] = "--idle-ttl-ms";
    argv[n++] = (char *)wm_idle_ttl;
  }
  if (lease_ms != NULL) {
    argv[n++] = "--borrow-lease-ms";
    argv[n++] = (char *)lease_ms;
  }
  argv[n] = NULL;
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    /* Its stderr (elections, background errors) is kept for a failure. */
    char err[300];
    int null = open("/dev/null", O_WRONLY), fd;
    snprintf(err, sizeof(err), "%s/err-%d", wm.dir, k);
    fd = open(err, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (null >= 0)
      dup2(null, 1);
    if (fd >= 0)
      dup2(fd, 2);
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  return pid;
}

static void wm_on_snapshot(fleet_warmpool_t *pool, int status,
                           const fleet_warmpool_snapshot_t *s, void *arg) {
  (void)pool;
  (void)arg;
  wm.status = status;
  if (status == 0) {
    wm.s = *s;
    snprintf(wm.primary, sizeof(wm.primary), "%s", s->primary);
    wm.s.primary = wm.primary;
    wm.s.last_error = wm.s.fingerprint = "";
  }
  wm.done++;
}

static void wm_snap(void) {
  wm.done = 0;
  ASSERT_OK(fleet_warmpool_snapshot(&wm.wp, wm_on_snapshot, NULL));
  ASSERT(lock_env_wait(&wm.e, &wm.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(wm.status);
}

static void wm_on_status(fleet_handle_t *h, int status, void *arg) {
  (void)h;
  (void)arg;
  wm.status = status;
  wm.done++;
}

static int wm_resize(uint32_t target) {
  wm.done = 0;
  ASSERT_OK(fleet_warmpool_resize(&wm.wp, target, wm_on_status, NULL));
  ASSERT(lock_env_wait(&wm.e, &wm.done, 1, FLEET_TEST_WAIT_MS));
  return wm.status;
}

/* Waits until the pool has `idle` live idle entries, nothing creating or
 * to destroy, and `dirs` directories under the root. */
static int wm_wait_steady(uint64_t idle, int dirs, uint64_t ms) {
  uint64_t end = lock_env_now() + fleet_test_ms(ms);

  do {
    wm_snap();
    if (wm.s.idle == idle && wm.s.creating == 0 && wm.s.destroying == 0 &&
        wm_count_dirs() == dirs)
      return 1;
    lock_env_sleep(&wm.e, 50);
  } while (lock_env_now() < end);
  fprintf(stderr, "# idle %llu creating %llu destroying %llu dirs %d\n",
          (unsigned long long)wm.s.idle, (unsigned long long)wm.s.creating,
          (unsigned long long)wm.s.destroying, wm_count_dirs());
  return 0;
}

/* Waits until some creation is in flight. */
static int wm_wait_creating(uint64_t ms) {
  uint64_t end = lock_env_now() + fleet_test_ms(ms);

  do {
    wm_snap();
    if (wm.s.creating > 0)
      return 1;
    lock_env_sleep(&wm.e, 5);
  } while (lock_env_now() < end);
  return 0;
}

/* The node index of the current primary ("n<k>"), waiting for one. */
static int wm_primary(int not, uint64_t ms) {
  uint64_t end = lock_env_now() + fleet_test_ms(ms);

  do {
    wm_snap();
    if (wm.primary[0] == 'n' && wm.primary[1] - '0' != not )
      return wm.primary[1] - '0';
    lock_env_sleep(&wm.e, 10);
  } while (lock_env_now() < end);
  return -1;
}

/* Ledger lines, all nodes. */
typedef struct {
  char id[64];
  int created, destroyed, put, refused, acquired;
  char creator[16];
} wm_id_t;

static wm_id_t *wm_ids;
static int wm_nids;

static wm_id_t *wm_id(const char *id) {
  int i;

  for (i = 0; i < wm_nids; i++)
    if (strcmp(wm_ids[i].id, id) == 0)
      return &wm_ids[i];
  ASSERT_LT(wm_nids, WM_IDS);
  memset(&wm_ids[wm_nids], 0, sizeof(wm_ids[0]));
  snprintf(wm_ids[wm_nids].id, sizeof(wm_ids[0].id), "%s", id);
  return &wm_ids[wm_nids++];
}

/* Reads every ledger; counts the refusals node `k` logged after `after_ns`
 * with a token other than `token` (any token when 0). */
/* What node k's ledger shows after `after_ns`: puts refused (the return
 * value), resources k made and destroyed without a put
 * (wm_late_destroys), and, after `wm_cont_ns`, puts accepted
 * (wm_late_puts). */
static int wm_late_puts, wm_late_destroys;
static uint64_t wm_cont_ns;

static int wm_read_ledgers(int k, uint64_t after_ns) {
  char path[300], event[16], id[64], node[16];
  unsigned long long ns, token;
  int j, late = 0;

  wm_late_puts = wm_late_destroys = 0;

  wm_nids = 0;
  for (j = 0; j < WM_NODES + 4; j++) {
    FILE *f;
    snprintf(path, sizeof(path), "%s/ledger-%d", wm.dir, j);
    if ((f = fopen(path, "r")) == NULL)
      continue;
    while (fscanf(f, "%llu %15s %63s %15s %llu", &ns, event, id, node,
                  &token) == 5) {
      wm_id_t *r = wm_id(id);
      if (strcmp(event, "create") == 0) {
        r->created++;
        snprintf(r->creator, sizeof(r->creator), "%s", node);
      } else if (strcmp(event, "destroy") == 0) {
        r->destroyed++;
        if (j == k && ns > after_ns && r->put == 0 &&
            strcmp(r->creator, node) == 0)
          wm_late_destroys++;
      } else if (strcmp(event, "put") == 0) {
        r->put++;
        if (j == k && wm_cont_ns != 0 && ns > wm_cont_ns)
          wm_late_puts++;
      } else if (strcmp(event, "refused") == 0) {
        r->refused++;
        if (j == k && ns > after_ns)
          late++;
      } else if (strcmp(event, "acquire") == 0) {
        r->acquired++;
      }
    }
    fclose(f);
  }
  return late;
}

static void wm_end(int k) {
  int st;

  if (wm.pid[k] <= 0)
    return;
  kill(wm.pid[k], SIGCONT);
  kill(wm.pid[k], SIGTERM);
  ASSERT_EQ(wm.pid[k], waitpid(wm.pid[k], &st, 0));
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(0, WEXITSTATUS(st));
  wm.pid[k] = 0;
}

TEST_IMPL(warmpool_mp_failover) {
  fleet_test_redis_t *r;
  uint64_t t0, stop_ns;
  int k, p, q, st, late, i;

  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("fleet-demo was not built");
  r = fleet_test_redis_start_or_skip(NULL);
  wm_setup(r, "fleet-warmpool-mp", 0);
  wm_ids = calloc(WM_IDS, sizeof(*wm_ids));
  ASSERT_NOT_NULL(wm_ids);

  /* Three nodes converge to 10. */
  for (k = 0; k < 3; k++)
    wm.pid[k] = wm_spawn_node(k, "10", "600", NULL, NULL);
  ASSERT(wm_wait_steady(10, 10, 15000));
  ASSERT_EQ(10, wm.s.target);
  ASSERT_EQ(FLEET_WARMPOOL_HEALTHY, wm.s.state);

  /* Another definition is refused: the node exits 1. */
  wm.pid[3] = wm_spawn_node(3, "10", "300", "other", NULL);
  ASSERT_EQ(wm.pid[3], waitpid(wm.pid[3], &st, 0));
  wm.pid[3] = 0;
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(1, WEXITSTATUS(st));

  /* SIGKILL the primary mid-warm-up: a new primary within the TTL. */
  p = wm_primary(-1, 5000);
  ASSERT_GE(p, 0);
  ASSERT_OK(wm_resize(16));
  ASSERT(wm_wait_creating(3000));
  t0 = lock_env_now();
  kill(wm.pid[p], SIGKILL);
  ASSERT_EQ(wm.pid[p], waitpid(wm.pid[p], &st, 0));
  wm.pid[p] = 0;
  q = wm_primary(p, 5000);
  ASSERT_GE(q, 0);
  ASSERT_LE(lock_env_now() - t0, fleet_test_ms(WM_PRIMARY_TTL_MS + 300));
  ASSERT(wm_wait_steady(16, 16, 15000));

  /* SIGSTOP the new primary mid-warm-up past its TTL: the other node
   * leads; after SIGCONT the paused one's puts are refused. */
  ASSERT_OK(wm_resize(20));
  ASSERT(wm_wait_creating(3000));
  ASSERT_STR_EQ(wm.primary, q == 0 ? "n0" : q == 1 ? "n1" : "n2");
  stop_ns = uv_hrtime();
  kill(wm.pid[q], SIGSTOP);
  ASSERT_GE(wm_primary(q, 5000), 0);
  lock_env_sleep(&wm.e, 700); /* the paused warm-ups are due */
  wm_cont_ns = uv_hrtime();
  kill(wm.pid[q], SIGCONT);
  ASSERT(wm_wait_steady(20, 20, 15000));
  lock_env_sleep(&wm.e, 300);
  late = wm_read_ledgers(q, stop_ns);
  /* The paused node's warm-ups finish after it lost the lease. What
   * happens to them depends on the order of its timers after SIGCONT and
   * on the new primary: a put is refused by the token check; a node that
   * noticed the lost lease first destroys what it made without a put; the
   * new primary destroys the reservations of the old token by id. The
   * guarantee, whatever the order: none of its puts is accepted (and, at
   * the end, nothing leaked). How it went is printed for the record. */
  fprintf(stderr,
          "# n%d after the pause: %d puts refused, %d unput destroyed\n", q,
          late, wm_late_destroys);
  ASSERT_EQ(0, wm_late_puts);
  wm_cont_ns = 0;

  /* Resize 10 -> 3 -> 0. */
  ASSERT_OK(wm_resize(10));
  ASSERT(wm_wait_steady(10, 10, 15000));
  ASSERT_OK(wm_resize(3));
  ASSERT(wm_wait_steady(3, 3, 15000));
  ASSERT_OK(wm_resize(0));
  ASSERT(wm_wait_steady(0, 0, 15000));
  wm_snap();
  ASSERT_EQ(0, wm.s.borrowed);
  for (k = 0; k < WM_NODES; k++)
    wm_end(k);

  /* No leak: nothing under the root, and every id a ledger created was
   * destroyed; every put was an id created once, and no refused id was
   * ever put. */
  ASSERT_EQ(0, wm_count_dirs());
  wm_read_ledgers(-1, 0);
  for (i = 0; i < wm_nids; i++) {
    wm_id_t *x = &wm_ids[i];
    ASSERT_LE(x->created, 1);
    if (x->created)
      ASSERT_GE(x->destroyed, 1);
    if (x->put)
      ASSERT_EQ(1, x->created);
    ASSERT(!(x->put && x->refused));
  }
  free(wm_ids);
  wm_teardown(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Concurrent acquires from 3 processes                                     */

#define WM_ACQ 100

typedef struct {
  fleet_warmpool_t wp;
  int got, missing, failed;
  int fd;
} wm_acq_t;

static void wm_acq_done(fleet_warmpool_t *pool, int status, const char *id,
                        void *arg) {
  wm_acq_t *a = pool->data;
  char path[600], line[128];
  struct stat sb;
  int n;

  (void)arg;
  if (status != 0) {
    a->failed++;
    return;
  }
  wm_path(id, path, sizeof(path));
  if (stat(path, &sb) != 0)
    a->missing++;
  n = snprintf(line, sizeof(line), "%s\n", id);
  ASSERT_EQ(n, write(a->fd, line, (size_t)n));
  a->got++;
}

static void wm_acq_child(int k) {
  fleet_warmpool_options_t o;
  char path[300], owner[16];
  lock_env_t e;
  wm_acq_t a;
  int i;

  memset(&a, 0, sizeof(a));
  snprintf(path, sizeof(path), "%s/ledger-%d", wm.dir, 4 + k);
  a.fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  ASSERT_GE(a.fd, 0);
  lock_env_init(&e, wm.url);
  fleet_warmpool_options_init(&o);
  o.client_only = 1;
  /* The demo nodes' definition: the start agrees with it. */
  o.idle_ttl_ms = 60000;
  o.min_remaining_ms = 15000;
  o.warmup_timeout_ms = 10000;
  o.primary_ttl_ms = WM_PRIMARY_TTL_MS;
  snprintf(owner, sizeof(owner), "c%d", k);
  a.wp.data = &a;
  ASSERT_OK(fleet_warmpool_init(&e.c1, &a.wp, "wm", owner, &o));
  ASSERT_OK(wm_start(&e, &a.wp));
  for (i = 0; i < WM_ACQ; i++)
    ASSERT_OK(fleet_warmpool_acquire(&a.wp, wm_acq_done, NULL));
  ASSERT(lock_env_wait(&e, &a.got, WM_ACQ, 30000));
  ASSERT_EQ(0, a.missing);
  ASSERT_EQ(0, a.failed);
  fleet_warmpool_close(&a.wp, NULL);
  lock_env_close(&e);
  close(a.fd);
  _exit(0);
}

TEST_IMPL(warmpool_mp_acquire) {
  fleet_test_redis_t *r;
  static char ids[3 * WM_ACQ][64];
  pid_t kids[3];
  int k, n = 0, i, j, st, from_pool = 0;

  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("fleet-demo was not built");
  r = fleet_test_redis_start_or_skip(NULL);
  wm_setup(r, "fleet-warmpool-acq", 0);
  for (k = 0; k < 3; k++)
    wm.pid[k] = wm_spawn_node(k, "60", "0", NULL, NULL);
  ASSERT(wm_wait_steady(60, 60, 15000));
  for (k = 0; k < 3; k++) {
    kids[k] = fork();
    ASSERT_GE(kids[k], 0);
    if (kids[k] == 0)
      wm_acq_child(k);
  }
  for (k = 0; k < 3; k++) {
    ASSERT_EQ(kids[k], waitpid(kids[k], &st, 0));
    ASSERT(WIFEXITED(st));
    ASSERT_EQ(0, WEXITSTATUS(st));
  }
  for (k = 0; k < 3; k++) {
    char path[300];
    FILE *f;
    snprintf(path, sizeof(path), "%s/ledger-%d", wm.dir, 4 + k);
    f = fopen(path, "r");
    ASSERT_NOT_NULL(f);
    while (n < 3 * WM_ACQ && fscanf(f, "%63s", ids[n]) == 1)
      n++;
    fclose(f);
  }
  ASSERT_EQ(3 * WM_ACQ, n);
  for (i = 0; i < n; i++) {
    from_pool += ids[i][0] == 'n';
    for (j = i + 1; j < n; j++)
      if (strcmp(ids[i], ids[j]) == 0)
        fleet_test__fail(__FILE__, __LINE__, "%s handed out twice", ids[i]);
  }
  /* The 60 pre-warmed ones went out, the rest were made on demand. */
  ASSERT_GE(from_pool, 60);
  wm_snap();
  ASSERT_EQ(3 * WM_ACQ, wm.s.borrowed);
  for (k = 0; k < 3; k++)
    wm_end(k);
  wm_teardown(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* A borrower killed with a lease                                           */

TEST_IMPL(warmpool_mp_borrower_killed) {
  fleet_test_redis_t *r;
  char id[64] = "", path[600], ledger[300];
  int fds[2], st;
  pid_t pid;
  uint64_t end;
  ssize_t got;

  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("fleet-demo was not built");
  r = fleet_test_redis_start_or_skip(NULL);
  wm_setup(r, "fleet-warmpool-borrow", 600);
  wm.pid[0] = wm_spawn_node(0, "2", "0", NULL, "600");
  ASSERT(wm_wait_steady(2, 2, 15000));
  ASSERT_OK(pipe(fds));
  snprintf(ledger, sizeof(ledger), "%s/ledger-5", wm.dir);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    char *argv[] = {"fleet-demo", "--url",
                    wm.url,       "--prefix",
                    "locktest",   "warmpool",
                    "acquire",    "--pool",
                    "wm",         "--root",
                    wm.root,      "--hold-ms",
                    "600000",     "--borrow-lease-ms",
                    "600",        "--ledger",
                    ledger,       NULL};
    dup2(fds[1], 1);
    close(fds[0]);
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  close(fds[1]);
  ASSERT(lock_mp_read_line(fds[0], id, sizeof(id), 10000));
  close(fds[0]);
  wm_path(id, path, sizeof(path));
  /* Held past several leases: renewed, so still there. */
  lock_env_sleep(&wm.e, fleet_test_ms(1500));
  ASSERT_OK(access(path, F_OK));
  wm_snap();
  ASSERT_EQ(1, wm.s.borrowed);
  kill(pid, SIGKILL);
  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  end = lock_env_now() + fleet_test_ms(5000);
  while (access(path, F_OK) == 0 && lock_env_now() < end)
    lock_env_sleep(&wm.e, 50);
  ASSERT_ERR(-1, access(path, F_OK));
  ASSERT(wm_wait_steady(2, 2, 5000));
  ASSERT_EQ(0, wm.s.borrowed);
  (void)got;
  wm_end(0);
  wm_teardown(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Redis down                                                               */

static void wm_on_acquire(fleet_warmpool_t *pool, int status, const char *id,
                          void *arg) {
  (void)pool;
  (void)id;
  (void)arg;
  wm.status = status;
  wm.done++;
}

TEST_IMPL(warmpool_mp_redis_down) {
  fleet_test_redis_t *r;

  r = fleet_test_redis_start_or_skip(NULL);
  wm_setup(r, "fleet-warmpool-down", 0);
  ASSERT_OK(wm_start(&wm.e, &wm.wp));
  ASSERT_OK(wm_resize(1));
  ASSERT_OK(fleet_test_redis_stop(r));
  /* Once the client knows the server is gone (a call in flight at the
   * moment of the loss would get FLEET_ECONNLOST: it may have run). */
  {
    uint64_t end = lock_env_now() + fleet_test_ms(5000);
    while (fleet_client_state(&wm.e.c1) == FLEET_CLIENT_READY &&
           lock_env_now() < end)
      lock_env_sleep(&wm.e, 10);
    ASSERT_NE(FLEET_CLIENT_READY, fleet_client_state(&wm.e.c1));
  }
  wm.done = 0;
  ASSERT_OK(fleet_warmpool_acquire(&wm.wp, wm_on_acquire, NULL));
  ASSERT(lock_env_wait(&wm.e, &wm.done, 1, 30000));
  ASSERT_ERR(FLEET_EUNAVAILABLE, wm.status);
  wm.done = 0;
  ASSERT_OK(fleet_warmpool_resize(&wm.wp, 5, wm_on_status, NULL));
  ASSERT(lock_env_wait(&wm.e, &wm.done, 1, 30000));
  ASSERT_ERR(FLEET_EUNAVAILABLE, wm.status);
  /* Nothing was created on the side. */
  ASSERT_EQ(0, wm_count_dirs());
  /* Back (empty: the server keeps no data): calls work again. */
  ASSERT_OK(fleet_test_redis_restart(r));
  ASSERT_OK(wm_resize(2));
  wm_snap();
  ASSERT_EQ(2, wm.s.target);
  wm_teardown(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Idle TTL                                                                 */

static int wm_dir_exists(const char *id) {
  char path[600];

  wm_path(id, path, sizeof(path));
  return access(path, F_OK) == 0;
}

TEST_IMPL(warmpool_mp_idle_ttl) {
  fleet_test_redis_t *r;
  char first[2][256];
  DIR *d;
  struct dirent *de;
  uint64_t end;
  int k, n = 0;

  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("fleet-demo was not built");
  r = fleet_test_redis_start_or_skip(NULL);
  wm_setup(r, "fleet-warmpool-ttl", 0);
  /* A 1 s life, of which the last 250 ms are not handed out. */
  wm_idle_ttl = "1000";
  for (k = 0; k < 2; k++)
    wm.pid[k] = wm_spawn_node(k, "2", "0", NULL, NULL);
  end = lock_env_now() + fleet_test_ms(5000);
  while (wm_count_dirs() < 2 && lock_env_now() < end)
    lock_env_sleep(&wm.e, 20);
  d = opendir(wm.root);
  ASSERT_NOT_NULL(d);
  while ((de = readdir(d)) != NULL && n < 2)
    if (de->d_name[0] != '.')
      snprintf(first[n++], sizeof(first[0]), "%s", de->d_name);
  closedir(d);
  ASSERT_EQ(2, n);
  /* Both are reaped within their life plus a few reconciles, and two new
   * ones take their place. */
  end = lock_env_now() + fleet_test_ms(5000);
  while ((wm_dir_exists(first[0]) || wm_dir_exists(first[1]) ||
          wm_count_dirs() != 2) &&
         lock_env_now() < end)
    lock_env_sleep(&wm.e, 20);
  ASSERT(!wm_dir_exists(first[0]));
  ASSERT(!wm_dir_exists(first[1]));
  ASSERT_EQ(2, wm_count_dirs());
  for (k = 0; k < 2; k++)
    wm_end(k);
  wm_teardown(r);
  return 0;
}
