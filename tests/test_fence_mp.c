/* test_fence_mp.c -- fencing tokens across a failover with replication
 * lag, in processes with ledgers (fence_mp_run(), test_fence_mp.h): the
 * replica's link is cut before a lock grant and a job claim, the master
 * is killed and the lagging replica promoted, and the next grants must
 * carry strictly greater tokens while the first holder is told it lost
 * its lease. Run here on a 3-master / 3-replica Redis Cluster; the
 * Sentinel variant is in test_sentinel.c. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_fixture.h"
#include "test_fence_mp.h"
#include "test_lock_env.h"

/* ------------------------------------------------------------------------ */
/* The processes                                                            */

enum { FENCE_ENQUEUE, FENCE_FIRST, FENCE_SECOND };

typedef struct {
  const fence_mp_env_t *env;
  int role;
  int fd; /* the ledger: a pipe to the parent */
  uv_loop_t loop;
  fleet_client_t client;
  fleet_lock_t lock;
  fleet_queue_t queue;
  uv_timer_t timer; /* retries, and the bound on the wait for the loss */
  uint64_t deadline;
  int open;    /* handles not yet closed */
  int closing; /* fence_child_end() ran */
  int tries;   /* transient failures, for the log */
} fence_child_t;

static uint64_t fence_now_ns(void) {
  return uv_hrtime();
}

static void fence_log(fence_child_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fence_log(fence_child_t *c, const char *fmt, ...) {
  char line[256];
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
  va_end(ap);
  ASSERT_GT(n, 0);
  strcat(line, "\n");
  lock_mp_write(c->fd, line);
}

static void fence_on_closed(fleet_handle_t *h) {
  fence_child_t *c = h->data;

  if (--c->open == 0)
    ASSERT_OK(fleet_client_close(&c->client, NULL));
}

/* Closes the handles, then the client. */
static void fence_child_end(fence_child_t *c) {
  if (c->closing)
    return;
  c->closing = 1;
  uv_close((uv_handle_t *)&c->timer, NULL);
  ASSERT_OK(fleet_lock_close(&c->lock, fence_on_closed));
  ASSERT_OK(fleet_queue_close(&c->queue, fence_on_closed));
}

static void fence_on_lost(fleet_lock_t *lock, int status, uint64_t token) {
  fence_child_t *c = lock->data;

  fence_log(c, "L %d %" PRIu64 " %" PRIu64, status, token, fence_now_ns());
  fence_child_end(c);
}

static void fence_step(fence_child_t *c);

static void fence_on_timer(uv_timer_t *t) {
  fence_child_t *c = t->data;

  if (c->role == FENCE_FIRST) {
    /* The loss was never reported: the parent sees no "L" line. */
    fence_child_end(c);
    return;
  }
  fence_step(c);
}

/* A transient failure around the failover: try again shortly, within the
 * deadline. */
static void fence_retry(fence_child_t *c, const char *what, int status) {
  if (c->tries++ % 20 == 0)
    fprintf(stderr, "# process %d: %s: %s (%s)\n", c->role, what,
            status == 0 ? "nothing to claim" : fleet_err_name(status),
            fleet_client_last_error(&c->client));
  if (uv_now(&c->loop) >= c->deadline)
    fleet_test__fail(__FILE__, __LINE__, "%s kept failing: %s", what,
                     fleet_err_name(status));
  ASSERT_OK(uv_timer_start(&c->timer, fence_on_timer, 100, 0));
}

static void fence_on_claim(fleet_queue_t *q, int status, fleet_job_t *jobs,
                           size_t n, const fleet_claim_info_t *info,
                           void *arg) {
  fence_child_t *c = arg;

  (void)q;
  (void)info;
  if (status != 0 || n == 0) {
    fence_retry(c, "the claim", status);
    return;
  }
  fence_log(c, "Q %" PRIu64 " %" PRIu64, jobs[0].token, fence_now_ns());
  if (c->role == FENCE_SECOND) {
    fence_child_end(c);
    return;
  }
  /* The first holder keeps its lease renewed until told it is lost. */
  c->deadline = 0;
  ASSERT_OK(uv_timer_start(&c->timer, fence_on_timer, fleet_test_ms(60000), 0));
}

static void fence_claim(fence_child_t *c) {
  ASSERT_OK(fleet_queue_claim(&c->queue, 1, 600000, fence_on_claim, c));
}

static void fence_on_acquire(fleet_lock_t *lock, int status, uint64_t token,
                             void *arg) {
  fence_child_t *c = arg;

  (void)lock;
  if (status != 0) {
    fence_retry(c, "the lock acquire", status);
    return;
  }
  fence_log(c, "A %" PRIu64 " %" PRIu64, token, fence_now_ns());
  fence_claim(c);
}

static void fence_on_enqueue(fleet_queue_t *q, int status,
                             const fleet_enqueue_result_t *results, size_t n,
                             void *arg) {
  fence_child_t *c = arg;

  (void)q;
  ASSERT_OK(status);
  ASSERT_UEQ(1, n);
  ASSERT_OK(results[0].status);
  fence_log(c, "E");
  fence_child_end(c);
}

/* The next thing the process does (again, after a transient failure). */
static void fence_step(fence_child_t *c) {
  fleet_job_spec_t spec;

  if (c->role == FENCE_ENQUEUE) {
    fleet_job_spec_init(&spec, "t", "x", 1);
    spec.id = "job1";
    ASSERT_OK(fleet_queue_enqueue(&c->queue, &spec, 1, fence_on_enqueue, c));
  } else if (!fleet_lock_held(&c->lock)) {
    ASSERT_OK(fleet_lock_acquire(&c->lock, (uint32_t)fleet_test_ms(20000),
                                 fence_on_acquire, c));
  } else {
    fence_claim(c);
  }
}

static void fence_child_main(void *arg) {
  fence_child_t *c = arg;
  fleet_client_options_t o;
  fleet_lock_options_t lo;

  ASSERT_OK(uv_loop_init(&c->loop));
  fleet_client_options_init(&o);
  o.prefix = FENCE_MP_PREFIX;
  ASSERT_OK(fleet_client_init(&c->loop, &c->client, c->env->url, &o));
  fleet_lock_options_init(&lo);
  lo.lost_cb = fence_on_lost;
  ASSERT_OK(fleet_lock_init(&c->client, &c->lock, FENCE_MP_LOCK,
                            c->role == FENCE_FIRST ? "first" : "second",
                            (uint32_t)fleet_test_ms(3000), &lo));
  c->lock.data = c;
  ASSERT_OK(fleet_queue_init(&c->client, &c->queue, c->env->queue, NULL));
  c->queue.data = c;
  c->open = 2;
  ASSERT_OK(uv_timer_init(&c->loop, &c->timer));
  c->timer.data = c;
  c->deadline = uv_now(&c->loop) + fleet_test_ms(30000);
  fence_step(c);
  fleet_test_loop_close(&c->loop);
}

/* ------------------------------------------------------------------------ */
/* The check                                                                */

typedef struct {
  int fd;
  pid_t pid;
} fence_proc_t;

static fence_proc_t fence_spawn(const fence_mp_env_t *env, int role) {
  fence_child_t c;
  fence_proc_t p;
  int fds[2];

  ASSERT_OK(pipe(fds));
  memset(&c, 0, sizeof(c));
  c.env = env;
  c.role = role;
  c.fd = fds[1];
  p.pid = lock_mp_fork(fence_child_main, &c);
  close(fds[1]);
  p.fd = fds[0];
  return p;
}

/* Reads the next ledger line of `p`, which must start with `kind`. */
static void fence_read(fence_proc_t *p, char kind, char *line, size_t cap) {
  ASSERT_EQ(1, lock_mp_read_line(p->fd, line, cap, 60000));
  if (line[0] != kind)
    fleet_test__fail(__FILE__, __LINE__, "expected a '%c' line, got \"%s\"",
                     kind, line);
}

/* The integer value of `key` on `r` (0 when missing); a replica of a
 * cluster is asked with READONLY. */
static uint64_t fence_counter(fleet_test_redis_t *r, const char *key) {
  redisReply *rep = fleet_test_redis_cmd(r, "READONLY");
  uint64_t v = 0;

  if (rep != NULL)
    freeReplyObject(rep);
  rep = fleet_test_redis_cmd(r, "GET %s", key);
  ASSERT_NOT_NULL(rep);
  if (rep->type != REDIS_REPLY_STRING && rep->type != REDIS_REPLY_NIL)
    fleet_test__fail(__FILE__, __LINE__, "GET %s: %s", key,
                     rep->type == REDIS_REPLY_ERROR ? rep->str : "?");
  if (rep->type == REDIS_REPLY_STRING)
    v = strtoull(rep->str, NULL, 10);
  freeReplyObject(rep);
  return v;
}

/* The length of list `key` on `r` (a cluster replica is asked with
 * READONLY); -1 when it cannot tell. */
static long long fence_llen(fleet_test_redis_t *r, const char *key) {
  redisReply *rep = fleet_test_redis_cmd(r, "READONLY");
  long long n = -1;

  if (rep != NULL)
    freeReplyObject(rep);
  rep = fleet_test_redis_cmd(r, "LLEN %s", key);
  if (rep != NULL && rep->type == REDIS_REPLY_INTEGER)
    n = rep->integer;
  if (rep != NULL)
    freeReplyObject(rep);
  return n;
}

void fence_mp_run(const fence_mp_env_t *env) {
  uint64_t lock1, claim1, lock2, claim2, t1, t2, lost_token, lost_ns, kill_ns;
  char line[256], lock_fence[128], queue_fence[128], pending[128];
  fence_proc_t p0, p1, p2;
  uint64_t deadline;
  int lost_status;

  snprintf(lock_fence, sizeof(lock_fence), "{%s:%s}:fence", FENCE_MP_PREFIX,
           FENCE_MP_LOCK);
  snprintf(queue_fence, sizeof(queue_fence), "{%s:%s}:fence", FENCE_MP_PREFIX,
           env->queue);

  /* 1. The job, on the master and the replica. */
  p0 = fence_spawn(env, FENCE_ENQUEUE);
  fence_read(&p0, 'E', line, sizeof(line));
  lock_mp_assert_exit0(lock_mp_wait(p0.pid, 30000));
  close(p0.fd);
  /* (Not WAIT from here: it waits only for this connection's writes.) */
  snprintf(pending, sizeof(pending), "{%s:%s}:pending", FENCE_MP_PREFIX,
           env->queue);
  deadline = uv_hrtime() + fleet_test_ms(10000) * 1000000;
  while (fence_llen(env->replica, pending) < 1) {
    ASSERT_ULT(uv_hrtime(), deadline);
    usleep(20000);
  }

  /* 2. The replica falls behind from here on. */
  fleet_test_redis_cut_replicas(env->master);

  /* 3. Process 1 takes the lock and claims the job. */
  p1 = fence_spawn(env, FENCE_FIRST);
  fence_read(&p1, 'A', line, sizeof(line));
  ASSERT_EQ(2, sscanf(line, "A %" SCNu64 " %" SCNu64, &lock1, &t1));
  fence_read(&p1, 'Q', line, sizeof(line));
  ASSERT_EQ(2, sscanf(line, "Q %" SCNu64 " %" SCNu64, &claim1, &t1));
  /* The grants are on the master only: the replica lags behind them. */
  ASSERT_UEQ(lock1, fence_counter(env->master, lock_fence));
  ASSERT_UEQ(claim1, fence_counter(env->master, queue_fence));
  ASSERT_ULT(fence_counter(env->replica, lock_fence), lock1);
  ASSERT_ULT(fence_counter(env->replica, queue_fence), claim1);

  /* 4. The master dies; the lagging replica takes over. */
  kill_ns = uv_hrtime();
  env->kill(env->arg);

  /* 5. Process 2 takes the same lock and claims the same job. */
  p2 = fence_spawn(env, FENCE_SECOND);
  fence_read(&p2, 'A', line, sizeof(line));
  ASSERT_EQ(2, sscanf(line, "A %" SCNu64 " %" SCNu64, &lock2, &t2));
  fence_read(&p2, 'Q', line, sizeof(line));
  ASSERT_EQ(2, sscanf(line, "Q %" SCNu64 " %" SCNu64, &claim2, &t2));
  lock_mp_assert_exit0(lock_mp_wait(p2.pid, 30000));
  close(p2.fd);

  /* Process 1 was told its lease is lost, after the failover. */
  fence_read(&p1, 'L', line, sizeof(line));
  ASSERT_EQ(3, sscanf(line, "L %d %" SCNu64 " %" SCNu64, &lost_status,
                      &lost_token, &lost_ns));
  ASSERT(lost_status == FLEET_ESTALE || lost_status == FLEET_ETIMEDOUT);
  ASSERT_UEQ(lock1, lost_token);
  ASSERT_UGT(lost_ns, kill_ns);
  lock_mp_assert_exit0(lock_mp_wait(p1.pid, 60000));
  close(p1.fd);

  printf("# lock tokens %" PRIu64 " -> %" PRIu64 ", claim tokens %" PRIu64
         " -> %" PRIu64 ", first holder told %s\n",
         lock1, lock2, claim1, claim2, fleet_err_name(lost_status));
  /* The guarantee: the grants after the failover carry greater tokens
   * than every grant before it, also those the new master never saw. */
  ASSERT_UGT(lock2, lock1);
  ASSERT_UGT(claim2, claim1);
}

/* ------------------------------------------------------------------------ */
/* Redis Cluster                                                            */

typedef struct {
  fleet_test_cluster_t *cl;
  int master;
} fence_cluster_t;

static void fence_cluster_kill(void *arg) {
  fence_cluster_t *f = arg;

  ASSERT_GE(
      fleet_test_cluster_kill_master(f->cl, f->master, fleet_test_ms(30000)),
      0);
}

TEST_IMPL(fence_failover_cluster_mp) {
  fleet_test_cluster_t *cl = fleet_test_cluster_start_or_skip();
  char tag[64], queue[32];
  fence_mp_env_t env;
  fence_cluster_t f;
  int i;

  snprintf(tag, sizeof(tag), "{%s:%s}", FENCE_MP_PREFIX, FENCE_MP_LOCK);
  f.cl = cl;
  f.master =
      fleet_test_cluster_owner(cl, 0, fleet_test_cluster_keyslot(cl, tag));
  ASSERT(f.master >= 0 && f.master < 3);
  /* A queue whose slot is on the same master. */
  for (i = 0;; i++) {
    ASSERT_LT(i, 1000);
    snprintf(queue, sizeof(queue), "fq%d", i);
    snprintf(tag, sizeof(tag), "{%s:%s}", FENCE_MP_PREFIX, queue);
    if (fleet_test_cluster_owner(cl, 0, fleet_test_cluster_keyslot(cl, tag)) ==
        f.master)
      break;
  }
  memset(&env, 0, sizeof(env));
  env.url = fleet_test_cluster_url(cl);
  env.master = fleet_test_cluster_node(cl, f.master);
  env.replica = fleet_test_cluster_node(cl, f.master + 3);
  env.kill = fence_cluster_kill;
  env.arg = &f;
  env.queue = queue;
  fence_mp_run(&env);
  fleet_test_cluster_free(cl);
  return 0;
}
