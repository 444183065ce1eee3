/* test_lock_mp.c -- locks across processes on Redis: four processes taking
 * one lock 500 times each with a shared log of their holds (no overlap,
 * tokens strictly increasing), and a holder stopped with SIGSTOP past its
 * TTL (taken over; after SIGCONT it learns it lost the lease and its
 * release is refused). */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_lock_env.h"

/* ------------------------------------------------------------------------ */
/* Contention                                                               */

#define CONTEND_PROCS 4
#define CONTEND_ROUNDS 500

/* One hold, as a holder appends it to the shared log. */
typedef struct {
  uint64_t token;
  uint64_t start_ns; /* CLOCK_MONOTONIC: comparable across processes */
  uint64_t end_ns;
  int32_t proc;
  int32_t pad;
} hold_t;

typedef struct {
  const char *url;
  const char *log;
  int proc;
  /* Child state. */
  int fd;
  int rounds;
  uint64_t last;
  uv_loop_t loop;
  fleet_client_t client;
  fleet_lock_t lock;
} contender_t;

static void contender_on_acquire(fleet_lock_t *lock, int status, uint64_t token,
                                 void *arg);

/* A lock's close callback whose `data` is its client: the client closes
 * once its last handle has. */
static void close_client_after(fleet_handle_t *lock) {
  ASSERT_OK(fleet_client_close(lock->data, NULL));
}

static void contender_on_release(fleet_handle_t *lock_h, int status,
                                 void *arg) {
  fleet_lock_t *lock = (fleet_lock_t *)lock_h;
  contender_t *c = arg;

  ASSERT_OK(status);
  if (++c->rounds == CONTEND_ROUNDS) {
    lock->data = &c->client;
    ASSERT_OK(fleet_lock_close(lock, close_client_after));
    return;
  }
  ASSERT_OK(
      fleet_lock_acquire(lock, fleet_test_ms(30000), contender_on_acquire, c));
}

/* A hold: while the lease is believed held (checked at both ends), record
 * it, with a short stretch of work so that holds have a width. */
static void contender_on_acquire(fleet_lock_t *lock, int status, uint64_t token,
                                 void *arg) {
  contender_t *c = arg;
  hold_t h;

  ASSERT_OK(status);
  ASSERT_UGT(token, c->last);
  c->last = token;
  memset(&h, 0, sizeof(h));
  h.token = token;
  h.proc = c->proc;
  ASSERT(fleet_lock_held(lock));
  h.start_ns = uv_hrtime();
  while (uv_hrtime() - h.start_ns < 20000)
    ;
  h.end_ns = uv_hrtime();
  ASSERT(fleet_lock_held(lock));
  ASSERT_EQ((ssize_t)sizeof(h), write(c->fd, &h, sizeof(h)));
  ASSERT_OK(fleet_lock_release(lock, contender_on_release, c));
}

static void contender_main(void *arg) {
  contender_t *c = arg;
  fleet_client_options_t o;
  char owner[32];

  c->fd = open(c->log, O_WRONLY | O_APPEND);
  ASSERT_GE(c->fd, 0);
  ASSERT_OK(uv_loop_init(&c->loop));
  fleet_client_options_init(&o);
  o.prefix = "locktest";
  ASSERT_OK(fleet_client_init(&c->loop, &c->client, c->url, &o));
  snprintf(owner, sizeof(owner), "proc-%d", c->proc);
  /* Scaled, so that a holder descheduled on a loaded machine still holds
   * at the end of its stretch of work. */
  ASSERT_OK(fleet_lock_init(&c->client, &c->lock, "contended", owner,
                            (uint32_t)fleet_test_ms(500), NULL));
  ASSERT_OK(fleet_lock_acquire(&c->lock, fleet_test_ms(30000),
                               contender_on_acquire, c));
  fleet_test_loop_close(&c->loop);
  ASSERT_EQ(CONTEND_ROUNDS, c->rounds);
  close(c->fd);
}

static int hold_cmp(const void *a, const void *b) {
  const hold_t *x = a, *y = b;
  return x->token < y->token ? -1 : x->token > y->token;
}

TEST_IMPL(lock_mp_contention) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  contender_t procs[CONTEND_PROCS];
  int per_proc[CONTEND_PROCS] = {0};
  pid_t pids[CONTEND_PROCS];
  const char *tmp = getenv("TMPDIR");
  char log[256];
  hold_t *holds;
  struct stat st;
  size_t n, i;
  int fd, k;

  snprintf(log, sizeof(log), "%s/fleet-lock-log-XXXXXX",
           tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
  fd = mkstemp(log);
  ASSERT_GE(fd, 0);
  for (k = 0; k < CONTEND_PROCS; k++) {
    memset(&procs[k], 0, sizeof(procs[k]));
    procs[k].url = fleet_test_redis_url(r);
    procs[k].log = log;
    procs[k].proc = k;
    pids[k] = lock_mp_fork(contender_main, &procs[k]);
  }
  for (k = 0; k < CONTEND_PROCS; k++)
    lock_mp_assert_exit0(lock_mp_wait(pids[k], 60000));

  ASSERT_OK(fstat(fd, &st));
  n = (size_t)st.st_size / sizeof(hold_t);
  ASSERT_EQ((size_t)st.st_size, n * sizeof(hold_t));
  ASSERT_EQ(CONTEND_PROCS * CONTEND_ROUNDS, n);
  holds = malloc(n * sizeof(*holds));
  ASSERT_NOT_NULL(holds);
  ASSERT_EQ((ssize_t)(n * sizeof(*holds)),
            pread(fd, holds, n * sizeof(*holds), 0));
  close(fd);
  unlink(log);
  qsort(holds, n, sizeof(*holds), hold_cmp);
  for (i = 0; i < n; i++) {
    ASSERT(holds[i].proc >= 0 && holds[i].proc < CONTEND_PROCS);
    per_proc[holds[i].proc]++;
    ASSERT_ULT(holds[i].start_ns, holds[i].end_ns);
    if (i == 0)
      continue;
    /* Tokens strictly increase in the order of the holds, and no hold
     * begins before the one with the previous token ended. */
    ASSERT_UGT(holds[i].token, holds[i - 1].token);
    ASSERT_ULE(holds[i - 1].end_ns, holds[i].start_ns);
  }
  for (k = 0; k < CONTEND_PROCS; k++)
    ASSERT_EQ(CONTEND_ROUNDS, per_proc[k]);
  free(holds);
  fleet_test_redis_free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* A holder stopped past its TTL                                            */

typedef struct {
  const char *url;
  int report; /* pipe to the parent */
  uv_loop_t loop;
  fleet_client_t client;
  fleet_lock_t lock;
  uv_timer_t check;
  uint64_t last_held_ns; /* the last check that saw the lease held */
  int lost_status;
} stopped_t;

static void stopped_on_release(fleet_handle_t *lock_h, int status, void *arg) {
  fleet_lock_t *lock = (fleet_lock_t *)lock_h;
  stopped_t *s = arg;
  char line[128];

  snprintf(line, sizeof(line), "L %d R %d H %" PRIu64 "\n", s->lost_status,
           status, s->last_held_ns);
  lock_mp_write(s->report, line);
  uv_close((uv_handle_t *)&s->check, NULL);
  lock->data = &s->client;
  ASSERT_OK(fleet_lock_close(lock, close_client_after));
}

/* After SIGCONT: the lease is reported lost; then the holder tries to
 * release it anyway, which the server must refuse. */
static void stopped_on_lost(fleet_lock_t *lock, int status, uint64_t token) {
  stopped_t *s = lock->data;

  s->lost_status = status;
  ASSERT(!fleet_lock_held(lock));
  ASSERT_OK(fleet_lock_release(lock, stopped_on_release, s));
}

/* Every few ms, notes whether the holder believes it holds the lease. */
static void stopped_on_check(uv_timer_t *timer) {
  stopped_t *s = timer->data;

  if (fleet_lock_held(&s->lock))
    s->last_held_ns = uv_hrtime();
}

static void stopped_on_acquire(fleet_lock_t *lock, int status, uint64_t token,
                               void *arg) {
  stopped_t *s = arg;
  char line[64];

  ASSERT_OK(status);
  snprintf(line, sizeof(line), "A %" PRIu64 "\n", token);
  lock_mp_write(s->report, line);
}

static void stopped_main(void *arg) {
  stopped_t *s = arg;
  fleet_client_options_t o;
  fleet_lock_options_t lo;

  ASSERT_OK(uv_loop_init(&s->loop));
  fleet_client_options_init(&o);
  o.prefix = "locktest";
  ASSERT_OK(fleet_client_init(&s->loop, &s->client, s->url, &o));
  fleet_lock_options_init(&lo);
  lo.lost_cb = stopped_on_lost;
  s->lock.data = s;
  ASSERT_OK(
      fleet_lock_init(&s->client, &s->lock, "stopped", "sleeper", 400, &lo));
  ASSERT_OK(uv_timer_init(&s->loop, &s->check));
  s->check.data = s;
  ASSERT_OK(uv_timer_start(&s->check, stopped_on_check, 2, 2));
  ASSERT_OK(fleet_lock_acquire(&s->lock, 0, stopped_on_acquire, s));
  fleet_test_loop_close(&s->loop);
}

typedef struct {
  uint64_t granted_ns;
} taker_t;

static void taker_on_acquire(fleet_lock_t *lock, int status, uint64_t token,
                             void *arg) {
  taker_t *t = arg;

  t->granted_ns = uv_hrtime();
  lock_rec_on_acquire(lock, status, token, NULL);
}

TEST_IMPL(lock_mp_sigstop) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  int fds[2], status, lost, rel;
  uint64_t held_token, last_held;
  char line[128];
  lock_info_t info;
  lock_env_t e;
  lock_rec_t w;
  stopped_t s;
  taker_t t;
  pid_t pid;

  ASSERT_OK(pipe(fds));
  memset(&s, 0, sizeof(s));
  s.url = fleet_test_redis_url(r);
  s.report = fds[1];
  pid = lock_mp_fork(stopped_main, &s);
  close(fds[1]);
  ASSERT_EQ(1, lock_mp_read_line(fds[0], line, sizeof(line), 10000));
  ASSERT_EQ(1, sscanf(line, "A %" SCNu64, &held_token));

  /* Let it hold for a while, then stop it: it can neither renew nor
   * notice anything. */
  usleep(100000);
  ASSERT_OK(kill(pid, SIGSTOP));
  ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
  ASSERT(WIFSTOPPED(status));

  /* Another process (this one) takes the lease once its TTL runs out. */
  lock_env_init(&e, fleet_test_redis_url(r));
  ASSERT_OK(lock_rec_init(&w, &e.c1, "stopped", "taker", 400, NULL));
  memset(&t, 0, sizeof(t));
  ASSERT_OK(fleet_lock_acquire(&w.lock, 10000, taker_on_acquire, &t));
  ASSERT(lock_env_wait(&e, &w.acquired, 1, 10000));
  ASSERT_OK(w.acq_status);
  ASSERT_UGT(w.token, held_token);

  /* Resume the holder: it reports the loss, and its release is
   * refused. */
  ASSERT_OK(kill(pid, SIGCONT));
  ASSERT_EQ(1, lock_mp_read_line(fds[0], line, sizeof(line), 10000));
  ASSERT_EQ(3, sscanf(line, "L %d R %d H %" SCNu64, &lost, &rel, &last_held));
  ASSERT(lost == FLEET_ETIMEDOUT || lost == FLEET_ESTALE);
  ASSERT_ERR(FLEET_ESTALE, rel);
  /* The stopped holder never believed it held the lease once the taker
   * had it. */
  ASSERT_UGT(last_held, 0);
  ASSERT_ULT(last_held, t.granted_ns);
  lock_mp_assert_exit0(lock_mp_wait(pid, 10000));
  close(fds[0]);

  /* The refused release changed nothing: the taker still holds. */
  info = lock_env_query(&e, &e.c1, "stopped");
  ASSERT_STR_EQ("taker", info.owner);
  ASSERT_UEQ(w.token, info.token);
  ASSERT(fleet_lock_held(&w.lock));
  ASSERT_EQ(0, w.lost);
  ASSERT_OK(lock_rec_release(&e, &w));
  lock_rec_close(&e, &w);
  lock_env_close(&e);
  fleet_test_redis_free(r);
  return 0;
}
