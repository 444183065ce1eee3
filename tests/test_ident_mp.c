/* test_ident_mp.c -- node ids across processes on Redis: a fleet-demo pool
 * node, or warm-pool node, holds an id and is killed with SIGKILL; this
 * process then tries the id again and again, each try a fresh node, and
 * records when each try was sent and what it got. From the records: every
 * try sent before the dead holder's lease could have run out (its last
 * renewal + TTL <= kill + TTL) was refused with FLEET_ECONFLICT naming the
 * id, no try sent after kill + TTL was refused, and the id was taken only
 * after at least two thirds of the TTL (the lease is renewed every third:
 * it was not freed early). */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pool/pool_int.h"
#include "test_lock_env.h"

#ifndef FLEET_DEMO_PATH
#define FLEET_DEMO_PATH "/nonexistent"
#endif

/* The tries of one test, at most. */
#define IDENT_TRIES 4096
/* The holder's lease TTL, unscaled. */
#define IDENT_TTL_MS 1500

/* One try: when it was sent and answered (monotonic ms), and its result
 * (0 accepted, or the error). */
typedef struct {
  uint64_t sent, answered;
  int status;
} ident_try_t;

typedef struct {
  lock_env_t e;
  char url[256];
  char dir[256];
  pid_t holder;
  ident_try_t tries[IDENT_TRIES];
  int ntries;
  /* The try in flight. */
  int done, status, errors;
  char detail[256];
} ident_t;

static ident_t ident;

static pid_t ident_spawn(char *const argv[]) {
  pid_t pid = fork();

  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  return pid;
}

static void ident_setup(fleet_test_redis_t *r) {
  const char *tmp = getenv("TMPDIR");

  memset(&ident, 0, sizeof(ident));
  snprintf(ident.url, sizeof(ident.url), "%s", fleet_test_redis_url(r));
  snprintf(ident.dir, sizeof(ident.dir), "%s/fleet-ident-XXXXXX",
           tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
  ASSERT_NOT_NULL(mkdtemp(ident.dir));
  lock_env_init(&ident.e, ident.url);
}

/* Kills the holder with SIGKILL and returns when (monotonic ms). */
static uint64_t ident_kill(void) {
  uint64_t t = lock_env_now();

  ASSERT_OK(kill(ident.holder, SIGKILL));
  ASSERT_EQ(ident.holder, waitpid(ident.holder, NULL, 0));
  return t;
}

/* Checks the records against the kill time and the TTL (both ms). */
static void ident_check(uint64_t killed, uint64_t ttl, const char *want) {
  /* The server's and this process's clocks, and the lease's ms
   * precision: a few ms, scaled. */
  uint64_t eps = fleet_test_ms(20);
  int i, refused = 0, accepted = 0;

  for (i = 0; i < ident.ntries; i++) {
    const ident_try_t *t = &ident.tries[i];

    if (t->status == FLEET_ECONFLICT) {
      refused++;
      /* Refused only while the dead holder's lease could still run. */
      ASSERT_ULT(t->sent, killed + ttl + eps);
      ASSERT_EQ(0, accepted);
    } else {
      ASSERT_OK(t->status);
      accepted++;
      /* Not before the lease ran out: its last renewal was at most a
       * third of the TTL before the kill. */
      ASSERT_UGE(t->answered + eps, killed + ttl * 2 / 3);
    }
  }
  ASSERT_GT(refused, 0);
  ASSERT_EQ(1, accepted);
  ASSERT_EQ(ident.ntries - 1, refused);
  ASSERT_NOT_NULL(strstr(ident.detail, want));
}

/* ------------------------------------------------------------------------ */
/* Pool                                                                     */

static void ident_pool_error(fleet_handle_t *h, int status,
                             const char *detail) {
  (void)h;
  ident.errors++;
  ident.status = status;
  snprintf(ident.detail, sizeof(ident.detail), "%s", detail);
}

static void ident_pool_workers(fleet_pool_node_t *node, int status,
                               const fleet_pool_worker_info_t *w, size_t n,
                               void *arg) {
  size_t i;

  (void)node;
  *(int *)arg = 0;
  for (i = 0; status == 0 && i < n; i++)
    if (strcmp(w[i].id, "X/1") == 0)
      *(int *)arg = 1;
  ident.done++;
}

/* 1 when the pool lists the worker X/1. */
static int ident_pool_listed(fleet_pool_node_t *node) {
  int listed = 0, want = ident.done + 1;

  ASSERT_OK(fleet_pool_workers(node, ident_pool_workers, &listed));
  ASSERT(lock_env_wait(&ident.e, &ident.done, want, FLEET_TEST_WAIT_MS));
  return listed;
}

static void ident_closed(fleet_handle_t *h) {
  (void)h;
  ident.done++;
}

static void ident_start(fleet_pool_worker_t *w, fleet_pool_job_t *job) {
  (void)w;
  fleet_pool_job_started(job, 0);
}

static void ident_stop(fleet_pool_worker_t *w, fleet_pool_job_t *job,
                       fleet_pool_stop_reason_t reason) {
  (void)w;
  (void)job;
  (void)reason;
}

/* One try: a node "X" with a worker, until it is refused or its join with
 * the worker went in. Returns its result; an accepted node is left open in
 * `node`. */
static int ident_pool_try(fleet_pool_node_t *node, fleet_pool_worker_t *w,
                          uint32_t ttl) {
  static const fleet_pool_handler_t h = {.start_cb = ident_start,
                                         .stop_cb = ident_stop};
  fleet_pool_node_options_t o;
  ident_try_t *t;
  uint64_t end;

  ASSERT_LT(ident.ntries, IDENT_TRIES);
  t = &ident.tries[ident.ntries++];
  fleet_pool_node_options_init(&o);
  o.worker_ttl_ms = ttl;
  o.error_cb = ident_pool_error;
  ident.errors = 0;
  t->sent = lock_env_now();
  ASSERT_OK(fleet_pool_node_init(&ident.e.c2, node, "P", "X", &o));
  ASSERT_OK(fleet_pool_worker_add(node, w, &h));
  end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
  for (;;) {
    if (ident.errors > 0) {
      t->status = ident.status;
      break;
    }
    if (fleet__pool_of(node)->state == FLEET__POOL_ACTIVE &&
        fleet__pool_of(node)->member) {
      t->status = 0;
      break;
    }
    ASSERT_ULT(lock_env_now(), end);
    lock_env_sleep(&ident.e, 5);
  }
  t->answered = lock_env_now();
  if (t->status != 0) {
    int want = ident.done + 1;
    ASSERT_OK(fleet_pool_node_close(node, ident_closed));
    ASSERT(lock_env_wait(&ident.e, &ident.done, want, FLEET_TEST_WAIT_MS));
  }
  return t->status;
}

TEST_IMPL(pool_mp_ident_crash) {
  fleet_test_redis_t *r;
  fleet_pool_node_options_t o;
  fleet_pool_node_t obs, node;
  fleet_pool_worker_t w;
  char ttl[16];
  char *argv[] = {"fleet-demo", "--prefix",
                  "locktest",   "--url",
                  NULL,         "pool",
                  "node",       "--pool",
                  "P",          "--workers",
                  "1",          "--node-id",
                  "X",          "--worker-ttl-ms",
                  ttl,          NULL};
  uint32_t ttl_ms = (uint32_t)fleet_test_ms(IDENT_TTL_MS);
  uint64_t killed, end;
  int want;

  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("fleet-demo was not built");
  r = fleet_test_redis_start_or_skip(NULL);
  ident_setup(r);
  argv[4] = ident.url;
  snprintf(ttl, sizeof(ttl), "%" PRIu32, ttl_ms);
  ident.holder = ident_spawn(argv);
  fleet_pool_node_options_init(&o);
  o.client_only = 1;
  ASSERT_OK(fleet_pool_node_init(&ident.e.c1, &obs, "P", NULL, &o));
  end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
  while (ident_pool_listed(&obs) != 1) {
    ASSERT_ULT(lock_env_now(), end);
    lock_env_sleep(&ident.e, 10);
  }

  killed = ident_kill();
  while (ident_pool_try(&node, &w, ttl_ms) != 0)
    lock_env_sleep(&ident.e, 10);
  ident_check(killed, ttl_ms, "pool node id \"X\" is already in use");

  want = ident.done + 2;
  ASSERT_OK(fleet_pool_node_close(&node, ident_closed));
  ASSERT_OK(fleet_pool_node_close(&obs, ident_closed));
  ASSERT(lock_env_wait(&ident.e, &ident.done, want, FLEET_TEST_WAIT_MS));
  lock_env_close(&ident.e);
  rmdir(ident.dir);
  fleet_test_redis_free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Warm pool                                                                */

static void ident_wp_work(fleet_warmpool_t *pool, fleet_warmpool_work_t *w) {
  (void)pool;
  fleet_warmpool_work_done(w, 0, NULL);
}

static void ident_wp_started(fleet_handle_t *h, int status, void *arg) {
  (void)h;
  (void)arg;
  ident.status = status;
  ident.done++;
}

static void ident_wp_snapshot(fleet_warmpool_t *pool, int status,
                              const fleet_warmpool_snapshot_t *s, void *arg) {
  (void)pool;
  *(int *)arg = status == 0 && strcmp(s->primary, "Y") == 0;
  ident.done++;
}

static fleet_warmpool_options_t ident_wp_opts(uint32_t ttl) {
  fleet_warmpool_options_t o;

  /* The fleet-demo node's options (its definition fingerprint). */
  fleet_warmpool_options_init(&o);
  o.idle_ttl_ms = 60000;
  o.min_remaining_ms = 15000;
  o.warmup_timeout_ms = 10000;
  o.primary_ttl_ms = ttl;
  o.client_only = 1;
  return o;
}

/* One try: a start under the owner id "Y". Returns its result; an
 * accepted node is left open in `wp`. */
static int ident_wp_try(fleet_warmpool_t *wp, uint32_t ttl) {
  static const fleet_warmpool_handlers_t handlers = {ident_wp_work,
                                                     ident_wp_work, NULL};
  fleet_warmpool_options_t o = ident_wp_opts(ttl);
  ident_try_t *t;
  int want;

  ASSERT_LT(ident.ntries, IDENT_TRIES);
  t = &ident.tries[ident.ntries++];
  ASSERT_OK(fleet_warmpool_init(&ident.e.c2, wp, "W", "Y", &o));
  want = ident.done + 1;
  t->sent = lock_env_now();
  ASSERT_OK(fleet_warmpool_start(wp, &handlers, ident_wp_started, NULL));
  ASSERT(lock_env_wait(&ident.e, &ident.done, want, FLEET_TEST_WAIT_MS));
  t->answered = lock_env_now();
  t->status = ident.status;
  if (t->status != 0) {
    snprintf(ident.detail, sizeof(ident.detail), "%s",
             fleet_client_last_error(&ident.e.c2));
    want = ident.done + 1;
    ASSERT_OK(fleet_warmpool_close(wp, ident_closed));
    ASSERT(lock_env_wait(&ident.e, &ident.done, want, FLEET_TEST_WAIT_MS));
  }
  return t->status;
}

TEST_IMPL(warmpool_mp_ident_crash) {
  fleet_test_redis_t *r;
  fleet_warmpool_options_t o;
  fleet_warmpool_t obs, wp;
  char ttl[16], root[300];
  char *argv[] = {"fleet-demo", "--prefix",  "locktest", "--url",
                  NULL,         "warmpool",  "node",     "--pool",
                  "W",          "--root",    root,       "--target",
                  "0",          "--node-id", "Y",        "--primary-ttl-ms",
                  ttl,          NULL};
  uint32_t ttl_ms = (uint32_t)fleet_test_ms(IDENT_TTL_MS);
  uint64_t killed, end;
  int primary = 0, want;

  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("fleet-demo was not built");
  r = fleet_test_redis_start_or_skip(NULL);
  ident_setup(r);
  argv[4] = ident.url;
  snprintf(ttl, sizeof(ttl), "%" PRIu32, ttl_ms);
  snprintf(root, sizeof(root), "%s", ident.dir);
  ident.holder = ident_spawn(argv);
  /* An observer that never starts: its snapshot shows the primary. */
  o = ident_wp_opts(ttl_ms);
  o.client_only = 0;
  ASSERT_OK(fleet_warmpool_init(&ident.e.c1, &obs, "W", NULL, &o));
  end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
  while (!primary) {
    want = ident.done + 1;
    ASSERT_OK(fleet_warmpool_snapshot(&obs, ident_wp_snapshot, &primary));
    ASSERT(lock_env_wait(&ident.e, &ident.done, want, FLEET_TEST_WAIT_MS));
    ASSERT_ULT(lock_env_now(), end);
    lock_env_sleep(&ident.e, 10);
  }

  killed = ident_kill();
  while (ident_wp_try(&wp, ttl_ms) != 0)
    lock_env_sleep(&ident.e, 10);
  ident_check(killed, ttl_ms, "owner id \"Y\" is already in use");

  want = ident.done + 2;
  ASSERT_OK(fleet_warmpool_close(&wp, ident_closed));
  ASSERT_OK(fleet_warmpool_close(&obs, ident_closed));
  ASSERT(lock_env_wait(&ident.e, &ident.done, want, FLEET_TEST_WAIT_MS));
  lock_env_close(&ident.e);
  rmdir(ident.dir);
  fleet_test_redis_free(r);
  return 0;
}
