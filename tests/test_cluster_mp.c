/* test_cluster_mp.c -- queue workers in several processes on a Redis
 * Cluster while it changes under them: the master of the queue's slot
 * killed and its replica promoted, and the queue's slot migrated to
 * another master (SETSLOT MIGRATING/IMPORTING + MIGRATE).
 *
 * Each worker is a forked child with its own loop and client. It appends
 * "<id>" per completion the cluster accepted to a ledger and "<pid> <id>"
 * per claim to a claims file (both O_APPEND, shared by the children) and
 * counts every other outcome its done callback or error callback hears;
 * on SIGTERM it stops gracefully and exits with 0 only if it heard no
 * error at all. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster_fixture.h"
#include "test_queue_util.h"

typedef struct {
  const char *url;
  uint32_t concurrency;
  uint32_t claim_ttl_ms;
  uint32_t heartbeat_ms;
  int errors_allowed;     /* the error callback may hear transient errors */
  uint32_t wait_replicas; /* the durability option */
  char ledger[512];
  char claims[512];
  char stale[512]; /* "<id>" per completion refused as stale or gone */
  /* A partitioned queue: the worker learns its count
   * (fleet_worker_open()) and works on queue `queue` (NULL: "work"). */
  int open_parts;
  const char *queue;
} cmp_spec_t;

typedef struct {
  cmp_spec_t spec;
  uv_loop_t loop;
  fleet_client_t client;
  fleet_worker_t w;
  uv_signal_t sigterm;
  int ledger_fd, claims_fd, stale_fd;
  int failed;
  /* Transient errors heard, and the last one printed: a failover brings
   * one per call in flight, so each is printed once in a row, and the
   * count at the end (a failure's own message stays in view). */
  unsigned transient;
  int last_status;
} cmp_child_t;

static void cmp_write(int fd, const char *line) {
  size_t len = strlen(line);
  if (write(fd, line, len) != (ssize_t)len)
    abort();
}

static void cmp_handler(fleet_worker_t *w, fleet_job_t *job) {
  cmp_child_t *c = w->data;
  char line[FLEET_JOB_ID_MAX + 32];
  int err;

  snprintf(line, sizeof(line), "%d %s\n", (int)getpid(), job->id);
  cmp_write(c->claims_fd, line);
  if ((err = fleet_job_complete(job)) != 0) {
    fprintf(stderr, "child %d: complete %s: %s\n", (int)getpid(), job->id,
            fleet_err_name(err));
    abort();
  }
}

static void cmp_done(fleet_worker_t *w, fleet_job_t *job,
                     fleet_job_action_t action, int status) {
  cmp_child_t *c = w->data;
  char line[FLEET_JOB_ID_MAX + 2];

  if (action == FLEET_JOB_COMPLETE &&
      (status == 0 || status == FLEET_EALREADY)) {
    snprintf(line, sizeof(line), "%s\n", job->id);
    cmp_write(c->ledger_fd, line);
  } else if ((status == FLEET_ESTALE || status == FLEET_ENOTFOUND) &&
             c->spec.errors_allowed) {
    /* ESTALE: the claim expired while the master was down and another
     * worker took the job over. ENOTFOUND: a completion whose reply the
     * kill cut off was sent again, but the first one had run and the
     * completed job was already trimmed by the queue's retention. Both
     * are the documented at-least-once outcomes of a lost connection. */
    snprintf(line, sizeof(line), "%s\n", job->id);
    cmp_write(c->stale_fd, line);
  } else if (status != FLEET_ECANCELED) {
    fprintf(stderr, "child %d: job %s: %s\n", (int)getpid(), job->id,
            fleet_err_name(status));
    c->failed = 1;
  }
}

/* The codes a failover may bring, which the worker rides out. */
static int cmp_transient(int status) {
  return status == FLEET_ECONNLOST || status == FLEET_ETIMEDOUT ||
         status == FLEET_EUNAVAILABLE || status == FLEET_ECONNREFUSED ||
         status == FLEET_EREADONLY || status == FLEET_EREDIRECT;
}

static void cmp_on_error(fleet_handle_t *h, int status, const char *detail) {
  cmp_child_t *c = h->data;
  int allowed = c->spec.errors_allowed && cmp_transient(status);

  if (allowed)
    c->transient++;
  if (!allowed || status != c->last_status)
    fprintf(stderr, "child %d: worker error %s: %s\n", (int)getpid(),
            fleet_err_name(status), detail);
  c->last_status = status;
  if (!allowed)
    c->failed = 1;
}

static void cmp_on_client_closed(fleet_client_t *client) {}

static void cmp_on_worker_closed(fleet_handle_t *w) {
  cmp_child_t *c = w->data;
  fleet_client_close(&c->client, cmp_on_client_closed);
}

static void cmp_on_stopped(fleet_handle_t *w, int status, void *arg) {
  cmp_child_t *c = w->data;
  fleet_worker_close(&c->w, cmp_on_worker_closed);
}

static void cmp_on_open(fleet_worker_t *w, int status, uint32_t n, void *ud) {
  cmp_child_t *c = w->data;

  (void)ud;
  if (status != 0 || n < 2 || fleet_worker_start(&c->w, cmp_handler) != 0) {
    fprintf(stderr, "child %d: open: %s, %u partitions\n", (int)getpid(),
            fleet_err_name(status), (unsigned)n);
    _exit(15);
  }
}

static void cmp_on_sigterm(uv_signal_t *s, int signum) {
  cmp_child_t *c = s->data;
  uv_close((uv_handle_t *)s, NULL);
  if (fleet_worker_stop(&c->w, 5000, cmp_on_stopped, NULL) != 0)
    fleet_worker_close(&c->w, cmp_on_worker_closed);
}

static _Noreturn void cmp_child_main(const cmp_spec_t *spec) {
  static cmp_child_t c;
  fleet_client_options_t co;
  fleet_worker_options_t wo;

  prctl(PR_SET_PDEATHSIG, SIGKILL);
  memset(&c, 0, sizeof(c));
  c.spec = *spec;
  c.ledger_fd = open(spec->ledger, O_WRONLY | O_CREAT | O_APPEND, 0600);
  c.claims_fd = open(spec->claims, O_WRONLY | O_CREAT | O_APPEND, 0600);
  c.stale_fd = open(spec->stale, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (c.ledger_fd < 0 || c.claims_fd < 0 || c.stale_fd < 0 ||
      uv_loop_init(&c.loop) != 0)
    _exit(10);
  fleet_client_options_init(&co);
  co.prefix = "cmp";
  co.reconnect_initial_ms = 20;
  co.reconnect_max_ms = 200;
  co.wait_replicas = spec->wait_replicas;
  co.wait_timeout_ms = (uint32_t)fleet_test_ms(1000);
  if (fleet_client_init(&c.loop, &c.client, spec->url, &co) != 0)
    _exit(11);
  fleet_worker_options_init(&wo);
  wo.concurrency = spec->concurrency;
  wo.claim_ttl_ms = spec->claim_ttl_ms;
  wo.heartbeat_ms = spec->heartbeat_ms;
  wo.done_cb = cmp_done;
  wo.error_cb = cmp_on_error;
  c.w.data = &c;
  if (spec->open_parts) {
    if (fleet_worker_open(&c.client, &c.w, spec->queue, &wo, cmp_on_open,
                          NULL) != 0)
      _exit(12);
  } else if (fleet_worker_init(&c.client, &c.w,
                               spec->queue != NULL ? spec->queue : "work",
                               &wo) != 0) {
    _exit(12);
  }
  uv_signal_init(&c.loop, &c.sigterm);
  c.sigterm.data = &c;
  uv_signal_start(&c.sigterm, cmp_on_sigterm, SIGTERM);
  if (!spec->open_parts && fleet_worker_start(&c.w, cmp_handler) != 0)
    _exit(14);
  uv_run(&c.loop, UV_RUN_DEFAULT);
  if (c.transient > 0)
    fprintf(stderr, "child %d: %u transient errors\n", (int)getpid(),
            c.transient);
  if (c.failed)
    fprintf(stderr, "child %d: exits with errors\n", (int)getpid());
  _exit(c.failed ? 13 : 0);
}

static pid_t cmp_spawn(const cmp_spec_t *spec) {
  pid_t pid;

  fflush(stdout);
  fflush(stderr);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0)
    cmp_child_main(spec);
  return pid;
}

static void cmp_stop_all(const pid_t *pids, int n) {
  int i, st;

  for (i = 0; i < n; i++)
    ASSERT_OK(kill(pids[i], SIGTERM));
  for (i = 0; i < n; i++) {
    ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      fleet_test__fail(__FILE__, __LINE__, "child %d ended with status %#x",
                       (int)pids[i], st);
  }
}

static void cmp_paths(cmp_spec_t *spec, const char *tag) {
  const char *tmp = getenv("TMPDIR");
  if (tmp == NULL || tmp[0] == '\0')
    tmp = "/tmp";
  snprintf(spec->ledger, sizeof(spec->ledger), "%s/%s-%d.ledger", tmp, tag,
           (int)getpid());
  snprintf(spec->claims, sizeof(spec->claims), "%s/%s-%d.claims", tmp, tag,
           (int)getpid());
  snprintf(spec->stale, sizeof(spec->stale), "%s/%s-%d.stale", tmp, tag,
           (int)getpid());
  unlink(spec->ledger);
  unlink(spec->claims);
  unlink(spec->stale);
}

/* Counts, per job id 1..n, the lines of `path` naming it (the id is the
 * last field of a line). */
static void cmp_tally(const char *path, int *count, int n) {
  char buf[256];
  FILE *f = fopen(path, "r");

  ASSERT_NOT_NULL(f);
  while (fgets(buf, sizeof(buf), f) != NULL) {
    char *sp = strrchr(buf, ' ');
    long id = strtol(sp != NULL ? sp + 1 : buf, NULL, 10);
    ASSERT_GE(id, 1);
    ASSERT_LE(id, n);
    count[id]++;
  }
  fclose(f);
}

/* The number of lines of `path` (0 when it does not exist). */
static int cmp_lines(const char *path) {
  FILE *f = fopen(path, "r");
  int n = 0, ch;

  if (f == NULL)
    return 0;
  while ((ch = fgetc(f)) != EOF)
    n += ch == '\n';
  fclose(f);
  return n;
}

static void cmp_enqueue(qt_t *t, int n) {
  static fleet_job_spec_t specs[1000];
  int i, done = 0, k;

  for (i = 0; i < 1000; i++)
    fleet_job_spec_init(&specs[i], "cmp", "payload", 7);
  while (done < n) {
    k = n - done < 1000 ? n - done : 1000;
    ASSERT_OK(qt_enqueue(t, specs, (size_t)k, NULL, NULL));
    done += k;
  }
}

/* Polls the counts until `completed` reaches n; transient errors while
 * the cluster changes are expected and polled through. */
static void cmp_wait_completed(qt_t *t, uint64_t n, uint64_t ms) {
  uint64_t t0 = uv_now(&t->c.loop);
  int rc = 0;

  ms = fleet_test_ms(ms);
  for (;;) {
    rc = qt_counts(t);
    if (rc == 0 && t->counts.completed >= n)
      return;
    if (uv_now(&t->c.loop) - t0 > ms)
      fleet_test__fail(__FILE__, __LINE__,
                       "%" PRIu64 " of %" PRIu64 " completed after %" PRIu64
                       " ms (last status %s)",
                       t->counts.completed, n, ms, fleet_err_name(rc));
    qt_sleep(t, 20);
  }
}

/* The master of the queue's slot is killed while 4 worker processes work
 * through the jobs, and its replica takes over; then the killed node
 * comes back, as the new master's replica. Every job completes, and the
 * cluster's final counts say so.
 *
 * Without the durability option (replication is asynchronous) the new
 * master may have missed the last writes the old one acknowledged: a job
 * whose completion was lost runs again, so a job may run twice; the run
 * prints how many did and the test bounds it (see docs/deploy.md).
 * With wait_replicas 1, an acknowledged claim or completion is on the
 * replica that takes over: every job runs exactly once. (Until the killed
 * node is back the new master has no replica, and job-state calls answer
 * FLEET_ETIMEDOUT; the workers retry them.) Enqueues happen before the
 * kill, and none may be lost. */
static void cmp_failover(int durable) {
  enum { N = 20000, KIDS = 4 };
  fleet_test_cluster_t *cl = fleet_test_cluster_start_or_skip();
  static int ledger[N + 1], claims[N + 1], stale[N + 1];
  unsigned slot = fleet_test_cluster_keyslot(cl, "{cmp:work}");
  int owner = fleet_test_cluster_owner(cl, 0, slot), promoted;
  int i, ran_twice = 0, never = 0, ledger_twice = 0, first_twice = 0;
  uint64_t at_kill, t_kill, failover_ms;
  pid_t pids[KIDS];
  cmp_spec_t spec;
  qt_t t;

  ASSERT_GE(owner, 0);
  memset(ledger, 0, sizeof(ledger));
  memset(claims, 0, sizeof(claims));
  memset(stale, 0, sizeof(stale));
  memset(&spec, 0, sizeof(spec));
  spec.url = fleet_test_cluster_url(cl);
  spec.concurrency = 16;
  /* A claim whose reply the kill cut off is recovered after its TTL; a
   * claim held through the failover outlives it if the TTL is longer than
   * the failover (about 2-3 s with a node timeout of 1 s), else another
   * worker takes it over and the first completion is refused as stale.
   * The durable run's check (no job runs twice) holds only while every
   * claim outlives the failover, so its TTL is far above a failover on a
   * loaded machine (CI runs chromium beside it); a failure says how long
   * the failover took. */
  spec.claim_ttl_ms = (uint32_t)fleet_test_ms(durable ? 15000 : 3000);
  spec.heartbeat_ms = 1000;
  spec.errors_allowed = 1;
  spec.wait_replicas = durable ? 1 : 0;
  cmp_paths(&spec, durable ? "cfailover-dur" : "cfailover");
  qt_open_prefix(&t, spec.url, "cmp", "work", NULL);
  cmp_enqueue(&t, N);
  for (i = 0; i < KIDS; i++)
    pids[i] = cmp_spawn(&spec);
  cmp_wait_completed(&t, N / 4, 60000);
  at_kill = t.counts.completed;
  t_kill = uv_hrtime();
  promoted = fleet_test_cluster_kill_master(cl, owner, fleet_test_ms(30000));
  failover_ms = (uv_hrtime() - t_kill) / 1000000u;
  ASSERT_GE(promoted, 0);
  /* The kill came mid-run, not after it. */
  ASSERT_ULT(at_kill, N);
  ASSERT_EQ(promoted, fleet_test_cluster_owner(cl, promoted, slot));
  /* The workers' wake-up subscriptions moved to the new master. */
  ASSERT_EQ(KIDS, fleet_test_cluster_wait_shard_subs(
                      cl, promoted, "{cmp:work}:jobs:wake", KIDS,
                      fleet_test_ms(10000)));
  ASSERT_OK(fleet_test_cluster_restart_node(cl, owner, fleet_test_ms(30000)));
  cmp_wait_completed(&t, N, 120000);
  cmp_stop_all(pids, KIDS);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(N, t.counts.completed);
  ASSERT_UEQ(0, t.counts.pending + t.counts.running + t.counts.dead);
  qt_close(&t);
  cmp_tally(spec.ledger, ledger, N);
  cmp_tally(spec.claims, claims, N);
  if (cmp_lines(spec.stale) > 0)
    cmp_tally(spec.stale, stale, N);
  for (i = 1; i <= N; i++) {
    /* Every job ran, and its completion was accepted, or refused only
     * because it had been accepted already (the final counts above say
     * all N completed). */
    ASSERT_GE(claims[i], 1);
    never += ledger[i] == 0 && stale[i] == 0;
    ran_twice += claims[i] > 1;
    if (claims[i] > 1 && first_twice == 0)
      first_twice = i;
    ledger_twice += ledger[i] > 1;
  }
  printf("# failover%s: killed at %" PRIu64 " of %d completed; replica "
         "promoted after %" PRIu64 " ms; %d jobs ran more than once; %d "
         "completions accepted twice; %d refused as stale or gone\n",
         durable ? " (wait_replicas 1)" : "", at_kill, N, failover_ms,
         ran_twice, ledger_twice, cmp_lines(spec.stale));
  ASSERT_EQ(0, never);
  if (durable && ran_twice > 0)
    fleet_test__fail(__FILE__, __LINE__,
                     "%d jobs ran twice (the first: job %d, claims in %s); "
                     "the failover took %" PRIu64 " ms, the claim TTL is %u "
                     "ms",
                     ran_twice, first_twice, spec.claims, failover_ms,
                     (unsigned)spec.claim_ttl_ms);
  if (!durable)
    /* The documented bound: only what was claimed or completed in the
     * moments before the kill can run again. */
    ASSERT_LE(ran_twice, N / 20);
  fleet_test_cluster_free(cl);
}

TEST_IMPL(cluster_failover_mp) {
  cmp_failover(0);
  return 0;
}

TEST_IMPL(cluster_failover_durable_mp) {
  cmp_failover(1);
  return 0;
}

/* The queue's slot is migrated to another master, 100 keys per MIGRATE,
 * while 2 worker processes work: clients see ASK and then MOVED, and no
 * error reaches a worker's done or error callback. Every job completes
 * exactly once (no failover: nothing acknowledged is lost). */
TEST_IMPL(cluster_reshard_workers) {
  enum { N = 3000, KIDS = 2 };
  fleet_test_cluster_t *cl = fleet_test_cluster_start_or_skip();
  static int ledger[N + 1];
  unsigned slot = fleet_test_cluster_keyslot(cl, "{cmp:work}");
  int owner = fleet_test_cluster_owner(cl, 0, slot), to, moved, i;
  uint64_t before;
  pid_t pids[KIDS];
  cmp_spec_t spec;
  redisReply *r;
  qt_t t;

  ASSERT_GE(owner, 0);
  to = (owner + 1) % 3;
  memset(&spec, 0, sizeof(spec));
  spec.url = fleet_test_cluster_url(cl);
  spec.concurrency = 8;
  spec.claim_ttl_ms = 10000;
  spec.heartbeat_ms = 2000;
  spec.errors_allowed = 0;
  cmp_paths(&spec, "creshard");
  qt_open_prefix(&t, spec.url, "cmp", "work", NULL);
  cmp_enqueue(&t, N);
  for (i = 0; i < KIDS; i++)
    pids[i] = cmp_spawn(&spec);
  cmp_wait_completed(&t, N / 4, 60000);
  before = t.counts.completed;
  moved = fleet_test_cluster_move_slot(cl, slot, to, 100, 5);
  ASSERT_GT(moved, 0);
  ASSERT_ULT(before, N);
  printf("# reshard: moved %d keys, started at %" PRIu64 " of %d completed\n",
         moved, before, N);
  ASSERT_EQ(to, fleet_test_cluster_owner(cl, to, slot));
  /* The old owner dropped the workers' shard subscriptions with the slot;
   * they subscribed again on the new one. */
  ASSERT_EQ(KIDS,
            fleet_test_cluster_wait_shard_subs(cl, to, "{cmp:work}:jobs:wake",
                                               KIDS, fleet_test_ms(10000)));
  cmp_wait_completed(&t, N, 60000);
  cmp_stop_all(pids, KIDS);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(N, t.counts.completed);
  ASSERT_UEQ(0, t.counts.pending + t.counts.running + t.counts.dead);
  qt_close(&t);
  /* The data lives on the new owner only. */
  r = fleet_test_redis_cmd(fleet_test_cluster_node(cl, owner),
                           "CLUSTER COUNTKEYSINSLOT %u", slot);
  ASSERT_NOT_NULL(r);
  ASSERT_EQ(0, r->integer);
  freeReplyObject(r);
  r = fleet_test_redis_cmd(fleet_test_cluster_node(cl, to),
                           "CLUSTER COUNTKEYSINSLOT %u", slot);
  ASSERT_NOT_NULL(r);
  ASSERT_GT(r->integer, 0);
  freeReplyObject(r);
  cmp_tally(spec.ledger, ledger, N);
  for (i = 1; i <= N; i++)
    if (ledger[i] != 1)
      fleet_test__fail(__FILE__, __LINE__, "job %d: %d completions", i,
                       ledger[i]);
  fleet_test_cluster_free(cl);
  return 0;
}

/* CLUSTER FAILOVER on the replica of the queue's master while 2 worker
 * processes work: the master pauses its clients until the replica has
 * caught up, then the replica takes over and the old master answers
 * MOVED. Nothing is lost, so every job completes exactly once, and no
 * error reaches a worker's done or error callback. */
TEST_IMPL(cluster_manual_failover_mp) {
  enum { N = 4000, KIDS = 2 };
  fleet_test_cluster_t *cl = fleet_test_cluster_start_or_skip();
  static int ledger[N + 1];
  unsigned slot = fleet_test_cluster_keyslot(cl, "{cmp:work}");
  int owner = fleet_test_cluster_owner(cl, 0, slot), replica, i;
  uint64_t before;
  pid_t pids[KIDS];
  cmp_spec_t spec;
  qt_t t;

  ASSERT_GE(owner, 0);
  ASSERT_LT(owner, 3);
  replica = owner + 3;
  memset(&spec, 0, sizeof(spec));
  spec.url = fleet_test_cluster_url(cl);
  spec.concurrency = 8;
  spec.claim_ttl_ms = (uint32_t)fleet_test_ms(10000);
  spec.heartbeat_ms = 1000;
  spec.errors_allowed = 0;
  cmp_paths(&spec, "cmanual");
  qt_open_prefix(&t, spec.url, "cmp", "work", NULL);
  cmp_enqueue(&t, N);
  for (i = 0; i < KIDS; i++)
    pids[i] = cmp_spawn(&spec);
  cmp_wait_completed(&t, N / 4, 60000);
  before = t.counts.completed;
  ASSERT_OK(
      fleet_test_cluster_manual_failover(cl, replica, fleet_test_ms(30000)));
  ASSERT_ULT(before, N);
  ASSERT_EQ(replica, fleet_test_cluster_owner(cl, replica, slot));
  ASSERT_EQ(KIDS, fleet_test_cluster_wait_shard_subs(
                      cl, replica, "{cmp:work}:jobs:wake", KIDS,
                      fleet_test_ms(10000)));
  cmp_wait_completed(&t, N, 60000);
  cmp_stop_all(pids, KIDS);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(N, t.counts.completed);
  ASSERT_UEQ(0, t.counts.pending + t.counts.running + t.counts.dead);
  qt_close(&t);
  cmp_tally(spec.ledger, ledger, N);
  for (i = 1; i <= N; i++)
    if (ledger[i] != 1)
      fleet_test__fail(__FILE__, __LINE__, "job %d: %d completions", i,
                       ledger[i]);
  fleet_test_cluster_free(cl);
  return 0;
}

static void cparts_on_count(fleet_queue_t *q, int status, uint32_t n,
                            void *ud) {
  (void)q;
  *(int *)ud = status == 0 && n == 6 ? 1 : 2;
}

static void cparts_on_closed(fleet_handle_t *h) {
  *(int *)h->data = 1;
}

/* A partitioned queue (docs/queue.md, "Partitioned queues") of 6
 * partitions whose slots cover all three masters, worked by 3 processes
 * that learn the count from Redis: a master that holds some of its
 * partitions is killed (its replica takes over; wait_replicas 1, so
 * nothing acknowledged is lost), then the slot of one partition is
 * migrated to another master, while the jobs run. From the ledgers: every
 * job ran, and none ran twice. */
TEST_IMPL(cluster_parts_mp) {
  enum { N = 6000, KIDS = 3, P = 6 };
  fleet_test_cluster_t *cl = fleet_test_cluster_start_or_skip();
  static int ledger[N + 1], claims[N + 1];
  static fleet_job_spec_t specs[1000];
  static char ids[1000][16];
  int owners[P], seen[3] = {0, 0, 0}, i, k, promoted, victim = -1, moved;
  int ran_twice = 0, never = 0, to, mpart = -1;
  unsigned slots[P];
  fleet_queue_options_t qo;
  pid_t pids[KIDS];
  cmp_spec_t spec;
  char tag[64];
  qt_t t;

  /* Where each partition lives: every master holds one at least. */
  for (i = 0; i < P; i++) {
    if (i == 0)
      snprintf(tag, sizeof(tag), "{cmp:pwork}");
    else
      snprintf(tag, sizeof(tag), "{cmp:pwork~%d}", i);
    slots[i] = fleet_test_cluster_keyslot(cl, tag);
    owners[i] = fleet_test_cluster_owner(cl, 0, slots[i]);
    ASSERT_GE(owners[i], 0);
    ASSERT_LT(owners[i], 3);
    seen[owners[i]]++;
  }
  for (i = 0; i < 3; i++)
    ASSERT_GT(seen[i], 0);
  memset(ledger, 0, sizeof(ledger));
  memset(claims, 0, sizeof(claims));
  memset(&spec, 0, sizeof(spec));
  spec.url = fleet_test_cluster_url(cl);
  spec.concurrency = 16;
  spec.claim_ttl_ms = (uint32_t)fleet_test_ms(5000);
  spec.heartbeat_ms = 1000;
  spec.errors_allowed = 1;
  spec.wait_replicas = 1;
  spec.open_parts = 1;
  spec.queue = "pwork";
  cmp_paths(&spec, "cparts");
  fleet_queue_options_init(&qo);
  qo.partitions = P;
  qt_open_prefix(&t, spec.url, "cmp", "pwork", &qo);
  /* The count, recorded (the workers read it). */
  {
    fleet_queue_t rq;
    int done = 0;
    ASSERT_OK(fleet_queue_init(&t.c.client, &rq, "pwork", NULL));
    rq.data = &done;
    ASSERT_OK(fleet_queue_partitions(&rq, P, cparts_on_count, &done));
    ASSERT(fleet_test_run_until(&t.c.loop, fleet_test_flag_set, &done,
                                fleet_test_ms(FLEET_TEST_WAIT_MS)));
    ASSERT_EQ(1, done);
    done = 0;
    ASSERT_OK(fleet_queue_close(&rq, cparts_on_closed));
    ASSERT(fleet_test_run_until(&t.c.loop, fleet_test_flag_set, &done,
                                fleet_test_ms(FLEET_TEST_WAIT_MS)));
  }
  /* Jobs "<n>j", placed by the hash of their ids over every partition. */
  for (k = 0; k < N; k += 1000) {
    for (i = 0; i < 1000; i++) {
      fleet_job_spec_init(&specs[i], "cmp", "payload", 7);
      snprintf(ids[i], sizeof(ids[i]), "%dj", k + i + 1);
      specs[i].id = ids[i];
    }
    ASSERT_OK(qt_enqueue(&t, specs, 1000, NULL, NULL));
  }
  for (i = 0; i < KIDS; i++)
    pids[i] = cmp_spawn(&spec);
  cmp_wait_completed(&t, N / 4, 60000);
  /* Kill the master of partition 0. */
  victim = owners[0];
  promoted = fleet_test_cluster_kill_master(cl, victim, fleet_test_ms(30000));
  ASSERT_GE(promoted, 0);
  ASSERT_ULT(t.counts.completed, N);
  ASSERT_OK(fleet_test_cluster_restart_node(cl, victim, fleet_test_ms(30000)));
  cmp_wait_completed(&t, N / 2, 120000);
  /* Move the slot of a partition on another master, live. */
  for (i = 1; i < P && mpart < 0; i++)
    if (owners[i] != victim)
      mpart = i;
  ASSERT_GE(mpart, 0);
  to = fleet_test_cluster_owner(cl, promoted, slots[mpart]) == promoted
           ? (owners[mpart] + 1) % 3
           : promoted;
  if (to == victim)
    to = promoted;
  moved = fleet_test_cluster_move_slot(cl, slots[mpart], to, 50, 5);
  ASSERT_GE(moved, 0);
  printf("# partitions: killed master %d (partition 0 on it), moved the "
         "slot of partition %d (%d keys) to node %d; %" PRIu64
         " of %d completed then\n",
         victim, mpart, moved, to, t.counts.completed, N);
  cmp_wait_completed(&t, N, 120000);
  cmp_stop_all(pids, KIDS);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(N, t.counts.completed);
  ASSERT_UEQ(0, t.counts.pending + t.counts.running + t.counts.dead);
  qt_close(&t);
  cmp_tally(spec.ledger, ledger, N);
  cmp_tally(spec.claims, claims, N);
  for (i = 1; i <= N; i++) {
    never += ledger[i] == 0;
    ran_twice += claims[i] > 1;
  }
  printf("# partitions: %d jobs never completed, %d ran more than once, %d "
         "completions refused as stale or gone\n",
         never, ran_twice, cmp_lines(spec.stale));
  ASSERT_EQ(0, never);
  ASSERT_EQ(0, ran_twice);
  fleet_test_cluster_free(cl);
  return 0;
}
