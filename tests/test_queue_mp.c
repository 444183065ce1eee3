/* test_queue_mp.c -- the queue across processes, on Redis: worker processes
 * racing over 20 000 jobs (none claimed twice, none lost), a worker killed
 * mid-job (its jobs complete exactly once within the claim TTL and a
 * second), a parked worker stopped with a delivery on its socket (its jobs
 * are recovered at the delivery TTL), and Redis restarted mid-run with
 * appendonly on (no job lost).
 *
 * Each worker is a forked child with its own loop and client. It appends
 * "<pid> <id> <token>" per claim to a claims file and "<id>" per completion
 * Redis accepted to a ledger, both opened with O_APPEND and shared by all
 * children; it stops gracefully on SIGTERM and _exit()s. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_queue_util.h"

/* What a child worker does. */
typedef struct {
  const char *url;
  uint32_t concurrency;
  uint32_t claim_ttl_ms;
  uint32_t heartbeat_ms;
  uint64_t work_ms;     /* UINT64_MAX: never finish */
  uint64_t start_after; /* ms before the worker starts */
  char ledger[512];
  char claims[512];
} mp_spec_t;

typedef struct {
  mp_spec_t spec;
  uv_loop_t loop;
  fleet_client_t client;
  fleet_worker_t w;
  uv_signal_t sigterm;
  uv_timer_t start_timer;
  int ledger_fd, claims_fd;
  int failed;
} mp_child_t;

typedef struct {
  uv_timer_t timer;
  fleet_job_t *job;
} mp_work_t;

static void mp_write(int fd, const char *line) {
  size_t len = strlen(line);
  /* One write per line: O_APPEND keeps lines of several processes
   * whole. */
  if (write(fd, line, len) != (ssize_t)len)
    abort();
}

static void mp_on_work_closed(uv_handle_t *h) {
  free(h->data);
}

static void mp_on_work(uv_timer_t *t) {
  mp_work_t *work = t->data;
  if (fleet_job_complete(work->job) != 0)
    abort();
  uv_close((uv_handle_t *)t, mp_on_work_closed);
}

static void mp_handler(fleet_worker_t *w, fleet_job_t *job) {
  mp_child_t *c = w->data;
  char line[FLEET_JOB_ID_MAX + 64];
  mp_work_t *work;

  snprintf(line, sizeof(line), "%d %s %" PRIu64 "\n", (int)getpid(), job->id,
           job->token);
  mp_write(c->claims_fd, line);
  if (c->spec.work_ms == UINT64_MAX)
    return;
  if (c->spec.work_ms == 0) {
    if (fleet_job_complete(job) != 0)
      abort();
    return;
  }
  work = malloc(sizeof(*work));
  if (work == NULL)
    abort();
  work->job = job;
  work->timer.data = work;
  uv_timer_init(&c->loop, &work->timer);
  uv_timer_start(&work->timer, mp_on_work, c->spec.work_ms, 0);
}

static void mp_done(fleet_worker_t *w, fleet_job_t *job,
                    fleet_job_action_t action, int status) {
  mp_child_t *c = w->data;
  char line[FLEET_JOB_ID_MAX + 2];

  if (action == FLEET_JOB_COMPLETE &&
      (status == 0 || status == FLEET_EALREADY)) {
    snprintf(line, sizeof(line), "%s\n", job->id);
    mp_write(c->ledger_fd, line);
  } else if (status != FLEET_ECANCELED) {
    fprintf(stderr, "child %d: job %s: %s\n", (int)getpid(), job->id,
            fleet_err_name(status));
    c->failed = 1;
  }
}

static void mp_on_client_closed(fleet_client_t *client) {}

static void mp_on_worker_closed(fleet_handle_t *w) {
  mp_child_t *c = w->data;
  fleet_client_close(&c->client, mp_on_client_closed);
}

static void mp_on_stopped(fleet_handle_t *w_h, int status, void *user_data) {
  fleet_worker_t *w = (fleet_worker_t *)w_h;
  mp_child_t *c = w->data;
  fleet_worker_close(&c->w, mp_on_worker_closed);
}

static void mp_on_sigterm(uv_signal_t *s, int signum) {
  mp_child_t *c = s->data;
  uv_close((uv_handle_t *)s, NULL);
  uv_close((uv_handle_t *)&c->start_timer, NULL);
  if (fleet_worker_stop(&c->w, 5000, mp_on_stopped, NULL) != 0)
    fleet_worker_close(&c->w, mp_on_worker_closed);
}

static void mp_on_start(uv_timer_t *t) {
  mp_child_t *c = t->data;
  if (fleet_worker_start(&c->w, mp_handler) != 0)
    abort();
}

/* The child's whole life; never returns. */
static _Noreturn void mp_child_main(const mp_spec_t *spec) {
  static mp_child_t c;
  fleet_client_options_t co;
  fleet_worker_options_t wo;

  prctl(PR_SET_PDEATHSIG, SIGKILL);
  memset(&c, 0, sizeof(c));
  c.spec = *spec;
  c.ledger_fd = open(spec->ledger, O_WRONLY | O_CREAT | O_APPEND, 0600);
  c.claims_fd = open(spec->claims, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (c.ledger_fd < 0 || c.claims_fd < 0 || uv_loop_init(&c.loop) != 0)
    _exit(10);
  fleet_client_options_init(&co);
  co.prefix = "mp";
  co.reconnect_initial_ms = 20;
  co.reconnect_max_ms = 200;
  if (fleet_client_init(&c.loop, &c.client, spec->url, &co) != 0)
    _exit(11);
  fleet_worker_options_init(&wo);
  wo.concurrency = spec->concurrency;
  wo.claim_ttl_ms = spec->claim_ttl_ms;
  wo.heartbeat_ms = spec->heartbeat_ms;
  wo.done_cb = mp_done;
  c.w.data = &c;
  if (fleet_worker_init(&c.client, &c.w, "work", &wo) != 0)
    _exit(12);
  uv_signal_init(&c.loop, &c.sigterm);
  c.sigterm.data = &c;
  uv_signal_start(&c.sigterm, mp_on_sigterm, SIGTERM);
  uv_timer_init(&c.loop, &c.start_timer);
  c.start_timer.data = &c;
  uv_timer_start(&c.start_timer, mp_on_start, spec->start_after, 0);
  uv_run(&c.loop, UV_RUN_DEFAULT);
  _exit(c.failed ? 13 : 0);
}

static pid_t mp_spawn(const mp_spec_t *spec) {
  pid_t pid;

  fflush(stdout);
  fflush(stderr);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0)
    mp_child_main(spec);
  return pid;
}

/* Sends SIGTERM to each child and checks it exits with 0. */
static void mp_stop_all(const pid_t *pids, int n) {
  int i, st;

  for (i = 0; i < n; i++)
    if (pids[i] > 0)
      ASSERT_OK(kill(pids[i], SIGTERM));
  for (i = 0; i < n; i++) {
    if (pids[i] <= 0)
      continue;
    ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      fleet_test__fail(__FILE__, __LINE__, "child %d ended with status %#x",
                       (int)pids[i], st);
  }
}

static void mp_paths(mp_spec_t *spec, const char *tag) {
  const char *tmp = getenv("TMPDIR");
  if (tmp == NULL || tmp[0] == '\0')
    tmp = "/tmp";
  snprintf(spec->ledger, sizeof(spec->ledger), "%s/%s-%d.ledger", tmp, tag,
           (int)getpid());
  snprintf(spec->claims, sizeof(spec->claims), "%s/%s-%d.claims", tmp, tag,
           (int)getpid());
  unlink(spec->ledger);
  unlink(spec->claims);
}

/* Reads a file of lines; calls `line` for each. */
static void mp_read_lines(const char *path, void (*line)(char *s, void *arg),
                          void *arg) {
  char buf[1024];
  FILE *f = fopen(path, "r");

  ASSERT_NOT_NULL(f);
  while (fgets(buf, sizeof(buf), f) != NULL) {
    buf[strcspn(buf, "\n")] = '\0';
    line(buf, arg);
  }
  fclose(f);
}

/* Per job id 1..n: how many times it appears. */
typedef struct {
  int *count;
  int n;
  pid_t pid;   /* claims: only this process's lines, if > 0 */
  int *by_pid; /* claims of `pid`, per id */
} mp_tally_t;

static void mp_tally_ledger(char *s, void *arg) {
  mp_tally_t *t = arg;
  long id = strtol(s, NULL, 10);
  ASSERT_GE(id, 1);
  ASSERT_LE(id, t->n);
  t->count[id]++;
}

static void mp_tally_claims(char *s, void *arg) {
  mp_tally_t *t = arg;
  long pid, id;
  char *end;

  pid = strtol(s, &end, 10);
  id = strtol(end, NULL, 10);
  ASSERT_GE(id, 1);
  ASSERT_LE(id, t->n);
  t->count[id]++;
  if (t->by_pid != NULL && pid == t->pid)
    t->by_pid[id]++;
}

/* Enqueues n jobs ("1".."n" on a fresh server) in batches of 1000. */
static void mp_enqueue(qt_t *t, int n) {
  fleet_job_spec_t specs[1000];
  int i, done = 0, k;

  for (i = 0; i < 1000; i++)
    fleet_job_spec_init(&specs[i], "mp", "payload", 7);
  while (done < n) {
    k = n - done < 1000 ? n - done : 1000;
    ASSERT_OK(qt_enqueue(t, specs, (size_t)k, NULL, NULL));
    done += k;
  }
}

/* The queue finished all `n` jobs: completed, none pending, running or
 * dead. */
static void mp_check_drained(fleet_test_redis_t *r, qt_t *t, uint64_t n) {
  redisReply *keys;

  ASSERT_OK(qt_counts(t));
  ASSERT_UEQ(n, t->counts.completed);
  ASSERT_UEQ(0, t->counts.pending + t->counts.running + t->counts.dead);
  /* Completed jobs are not kept: every chunk of records went with its
   * last job, whatever crashed or was recovered on the way, but the one
   * enqueues write, which holds its mark only. */
  keys = fleet_test_redis_cmd(r, "KEYS {mp:work}:recs:*");
  ASSERT_NOT_NULL(keys);
  ASSERT_EQ(REDIS_REPLY_ARRAY, keys->type);
  if (keys->elements > 1)
    fleet_test__fail(__FILE__, __LINE__, "%zu chunks left, the first %s",
                     keys->elements, keys->element[0]->str);
  if (keys->elements == 1) {
    redisReply *len = fleet_test_redis_cmd(r, "HLEN %s", keys->element[0]->str);
    ASSERT_NOT_NULL(len);
    ASSERT_EQ(1, len->integer);
    freeReplyObject(len);
  }
  freeReplyObject(keys);
}

/* Polls the counts until `completed` reaches n (or `ms`, scaled, pass);
 * returns the loop time when it did. */
static uint64_t mp_wait_completed(qt_t *t, uint64_t n, uint64_t ms) {
  uint64_t t0 = uv_now(&t->c.loop);

  ms = fleet_test_ms(ms);
  for (;;) {
    int rc = qt_counts(t);
    if (rc == 0 && t->counts.completed >= n)
      return uv_now(&t->c.loop);
    if (uv_now(&t->c.loop) - t0 > ms)
      fleet_test__fail(__FILE__, __LINE__,
                       "%" PRIu64 " of %" PRIu64 " completed after %" PRIu64
                       " ms (last status %s)",
                       t->counts.completed, n, ms, fleet_err_name(rc));
    qt_sleep(t, 20);
  }
}

TEST_IMPL(queue_mp_race) {
  enum { N = 20000, KIDS = 4 };
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  static int ledger[N + 1], claims[N + 1];
  mp_tally_t tl = {ledger, N, 0, NULL}, tc = {claims, N, 0, NULL};
  pid_t pids[KIDS];
  mp_spec_t spec;
  qt_t t;
  int i;

  memset(&spec, 0, sizeof(spec));
  spec.url = fleet_test_redis_url(r);
  spec.concurrency = 25;
  spec.claim_ttl_ms = 30000;
  spec.heartbeat_ms = 5000;
  mp_paths(&spec, "race");
  for (i = 0; i < KIDS; i++)
    pids[i] = mp_spawn(&spec);

  qt_open_prefix(&t, spec.url, "mp", "work", NULL);
  mp_enqueue(&t, N);
  mp_wait_completed(&t, N, 60000);
  mp_stop_all(pids, KIDS);
  mp_check_drained(r, &t, N);
  qt_close(&t);

  /* Every job claimed once (no claim ever expired, so twice would mean
   * twice at once) and completed once. */
  mp_read_lines(spec.ledger, mp_tally_ledger, &tl);
  mp_read_lines(spec.claims, mp_tally_claims, &tc);
  for (i = 1; i <= N; i++) {
    if (ledger[i] != 1 || claims[i] != 1)
      fleet_test__fail(__FILE__, __LINE__, "job %d: %d completions, %d claims",
                       i, ledger[i], claims[i]);
  }
  fleet_test_redis_free(r);
  return 0;
}

/* A worker killed mid-job: another worker completes its jobs, each once,
 * within the claim TTL (plus the recovery period and a second) of the
 * kill. */
TEST_IMPL(queue_mp_kill) {
  enum { N = 40 };
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  static int ledger[N + 1], claims[N + 1], by_victim[N + 1];
  mp_tally_t tl = {ledger, N, 0, NULL}, tc = {claims, N, 0, by_victim};
  mp_spec_t victim, rescuer;
  uint64_t killed_at, done_at;
  pid_t pids[2];
  int i, st, taken = 0;
  qt_t t;

  memset(&victim, 0, sizeof(victim));
  victim.url = fleet_test_redis_url(r);
  victim.concurrency = 10;
  /* Scaled, so that the victim's heartbeats keep its claims until the
   * kill even on a loaded machine. */
  victim.claim_ttl_ms = (uint32_t)fleet_test_ms(1000);
  victim.heartbeat_ms = (uint32_t)fleet_test_ms(300);
  victim.work_ms = UINT64_MAX;
  mp_paths(&victim, "kill");
  rescuer = victim;
  rescuer.work_ms = 5;
  rescuer.start_after = 500; /* the victim claims first */
  pids[0] = mp_spawn(&victim);
  pids[1] = mp_spawn(&rescuer);

  qt_open_prefix(&t, victim.url, "mp", "work", NULL);
  mp_enqueue(&t, N);
  /* Wait until the victim holds its ten jobs, and a heartbeat or two. */
  killed_at = uv_now(&t.c.loop);
  do {
    ASSERT_ULT(uv_now(&t.c.loop) - killed_at,
               fleet_test_ms(FLEET_TEST_WAIT_MS));
    qt_sleep(&t, 20);
    ASSERT_OK(qt_counts(&t));
  } while (t.counts.running < 10);
  qt_sleep(&t, victim.heartbeat_ms * 7 / 3);
  ASSERT_OK(kill(pids[0], SIGKILL));
  killed_at = uv_now(&t.c.loop);
  ASSERT_EQ(pids[0], waitpid(pids[0], &st, 0));
  pids[0] = 0;
  done_at = mp_wait_completed(&t, N, 20000);
  ASSERT_ULE(done_at - killed_at, victim.claim_ttl_ms + fleet_test_ms(2000));
  mp_stop_all(pids, 2);
  qt_close(&t);

  tc.pid = 0;
  mp_read_lines(victim.ledger, mp_tally_ledger, &tl);
  mp_read_lines(victim.claims, mp_tally_claims, &tc);
  for (i = 1; i <= N; i++) {
    if (ledger[i] != 1)
      fleet_test__fail(__FILE__, __LINE__, "job %d: %d completions", i,
                       ledger[i]);
    /* A job the victim held was claimed again by the rescuer. */
    if (claims[i] == 2)
      taken++;
    ASSERT_LE(claims[i], 2);
  }
  ASSERT_EQ(10, taken);
  fleet_test_redis_free(r);
  return 0;
}

/* A parked worker that stops reading (SIGSTOP: its connections stay open,
 * so the delivery reaches its socket): the jobs an enqueue delivered to it
 * are recovered at the delivery TTL (three heartbeats here, 3 s), not the
 * claim TTL (30 s), and another worker completes each once. */
TEST_IMPL(queue_mp_delivery_stopped) {
  enum { N = 10 };
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  static int ledger[N + 1], claims[N + 1];
  mp_tally_t tl = {ledger, N, 0, NULL}, tc = {claims, N, 0, NULL};
  mp_spec_t spec;
  uint64_t enqueued_at, done_at;
  pid_t pids[2];
  int i, st;
  qt_t t;

  memset(&spec, 0, sizeof(spec));
  spec.url = fleet_test_redis_url(r);
  spec.concurrency = N;
  spec.claim_ttl_ms = 30000;
  spec.heartbeat_ms = 1000; /* delivery TTL: 3 heartbeats */
  spec.work_ms = 5;
  mp_paths(&spec, "dstop");
  qt_open_prefix(&t, spec.url, "mp", "work", NULL);
  /* The victim parks first (its first claim finds nothing), then stops. */
  pids[0] = mp_spawn(&spec);
  qt_sleep(&t, fleet_test_ms(1500));
  ASSERT_OK(kill(pids[0], SIGSTOP));
  pids[1] = mp_spawn(&spec);
  qt_sleep(&t, fleet_test_ms(1000));
  enqueued_at = uv_now(&t.c.loop);
  mp_enqueue(&t, N);
  done_at = mp_wait_completed(&t, N, 20000);
  /* Held for the stopped victim until the delivery deadline... */
  ASSERT_UGE(done_at - enqueued_at, 3000 - 20);
  /* ...then recovered (recover_ms 1 s) and run, long before the claim
   * TTL. */
  ASSERT_ULT(done_at - enqueued_at, 3000 + 1000 + fleet_test_ms(3000));
  ASSERT_OK(kill(pids[0], SIGKILL));
  ASSERT_EQ(pids[0], waitpid(pids[0], &st, 0));
  pids[0] = 0;
  mp_stop_all(pids, 2);
  mp_check_drained(r, &t, N);
  qt_close(&t);
  mp_read_lines(spec.ledger, mp_tally_ledger, &tl);
  mp_read_lines(spec.claims, mp_tally_claims, &tc);
  for (i = 1; i <= N; i++)
    if (ledger[i] != 1 || claims[i] != 1)
      fleet_test__fail(__FILE__, __LINE__, "job %d: %d completions, %d claims",
                       i, ledger[i], claims[i]);
  fleet_test_redis_free(r);
  return 0;
}

/* Redis restarted mid-run (appendonly on): workers ride it out and no job
 * is lost or completed twice. */
TEST_IMPL(queue_mp_restart) {
  enum { N = 3000, KIDS = 2 };
  static const char *const aof[] = {"--appendonly", "yes", NULL};
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(aof);
  static int ledger[N + 1];
  mp_tally_t tl = {ledger, N, 0, NULL};
  pid_t pids[KIDS];
  mp_spec_t spec;
  int i;
  qt_t t;

  memset(&spec, 0, sizeof(spec));
  spec.url = fleet_test_redis_url(r);
  spec.concurrency = 10;
  /* A claim whose reply the restart cut off is recovered after its TTL:
   * keep it short. */
  spec.claim_ttl_ms = 2000;
  spec.heartbeat_ms = 500;
  spec.work_ms = 1;
  mp_paths(&spec, "restart");
  for (i = 0; i < KIDS; i++)
    pids[i] = mp_spawn(&spec);
  qt_open_prefix(&t, spec.url, "mp", "work", NULL);
  mp_enqueue(&t, N);
  mp_wait_completed(&t, N / 4, 20000);
  ASSERT_OK(fleet_test_redis_restart(r));
  mp_wait_completed(&t, N, 30000);
  mp_stop_all(pids, KIDS);
  mp_check_drained(r, &t, N);
  qt_close(&t);
  mp_read_lines(spec.ledger, mp_tally_ledger, &tl);
  for (i = 1; i <= N; i++)
    if (ledger[i] != 1)
      fleet_test__fail(__FILE__, __LINE__, "job %d: %d completions", i,
                       ledger[i]);
  fleet_test_redis_free(r);
  return 0;
}
