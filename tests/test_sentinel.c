/* test_sentinel.c -- redis+sentinel:// against 1 master, 1 replica and 3
 * sentinels, all on loopback and started here: the client finds the
 * master, and a SENTINEL FAILOVER in the middle of queue processing moves
 * the worker to the new master with every job completed; a sentinel URL
 * naming an unknown master, or only dead sentinels, says so. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_fence_mp.h"
#include "test_queue_util.h"
#include "test_tls_util.h"

#define SEN_COUNT 3
#define SEN_JOBS 2000
#define SEN_MASTER "fleetmaster"

typedef struct {
  pid_t pid;
  int port;
  int tls_port; /* TLS environment only */
} sen_proc_t;

typedef struct {
  fleet_test_redis_t *master, *replica;
  fleet_test_redis_t *replica2; /* NULL unless asked for */
  sen_proc_t sen[SEN_COUNT];
  char dir[PATH_MAX];
  char url[PATH_MAX + 256];
  /* TLS environment: the master's TLS port, which the sentinels monitor
   * (0 otherwise). */
  int master_tls_port;
} sen_env_t;

static uint64_t sen_now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sen_sleep_ms(unsigned ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* The server binary the fixture uses: $FLEET_REDIS_SERVER or redis-server
 * (in sentinel mode with --sentinel). */
static const char *sen_server(void) {
  const char *env = getenv("FLEET_REDIS_SERVER");
  return env != NULL && env[0] != '\0' ? env : "redis-server";
}

/* A synchronous command to a sentinel; NULL when unreachable. */
static redisReply *sen_cmd(const sen_proc_t *p, const char *fmt, ...) {
  struct timeval tv = {2, 0};
  redisContext *c = redisConnectWithTimeout("127.0.0.1", p->port, tv);
  redisReply *reply = NULL;
  va_list ap;

  if (c == NULL)
    return NULL;
  if (c->err == 0 && redisSetTimeout(c, tv) == REDIS_OK) {
    va_start(ap, fmt);
    reply = redisvCommand(c, fmt, ap);
    va_end(ap);
  }
  redisFree(c);
  return reply;
}

/* Starts sentinel `i` monitoring the master; waits until it answers. */
static void sen_spawn(sen_env_t *e, int i) {
  char conf[PATH_MAX + 32], log[PATH_MAX + 32];
  sen_proc_t *p = &e->sen[i];
  uint64_t deadline;
  pid_t parent = getpid();
  FILE *f;

  p->port = fleet_test_free_port();
  ASSERT_GT(p->port, 0);
  snprintf(conf, sizeof(conf), "%s/sentinel-%d.conf", e->dir, i);
  snprintf(log, sizeof(log), "%s/sentinel-%d.log", e->dir, i);
  f = fopen(conf, "w");
  ASSERT_NOT_NULL(f);
  fprintf(f,
          "port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n"
          "sentinel monitor " SEN_MASTER " 127.0.0.1 %d 2\n"
          "sentinel down-after-milliseconds " SEN_MASTER " 1000\n"
          "sentinel failover-timeout " SEN_MASTER " 10000\n",
          p->port, e->dir, log,
          e->master_tls_port != 0 ? e->master_tls_port
                                  : fleet_test_redis_port(e->master));
  if (e->master_tls_port != 0) {
    /* TLS to clients (also the plain port, for the test's own checks)
     * and to the monitored nodes. */
    p->tls_port = fleet_test_free_port();
    ASSERT_GT(p->tls_port, 0);
    fprintf(f,
            "tls-port %d\ntls-cert-file %s/server.crt\n"
            "tls-key-file %s/server.key\ntls-ca-cert-file %s/ca.crt\n"
            "tls-replication yes\ntls-auth-clients no\n",
            p->tls_port, e->dir, e->dir, e->dir);
  }
  fclose(f);
  fflush(stdout);
  fflush(stderr);
  p->pid = fork();
  ASSERT_GE(p->pid, 0);
  if (p->pid == 0) {
    int fd;
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(127);
    fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
      dup2(fd, 0);
      dup2(fd, 1);
    }
    close_range(3, ~0U, 0);
    execlp(sen_server(), sen_server(), conf, "--sentinel", (char *)NULL);
    _exit(127);
  }
  deadline = sen_now_ms() + fleet_test_ms(5000);
  for (;;) {
    redisReply *r = sen_cmd(p, "PING");
    int ok = r != NULL && r->type == REDIS_REPLY_STATUS;
    if (r != NULL)
      freeReplyObject(r);
    if (ok)
      return;
    ASSERT_LT(sen_now_ms(), deadline);
    sen_sleep_ms(20);
  }
}

/* How many healthy replicas of the master sentinel `p` knows. */
static int sen_sees_replicas(const sen_proc_t *p) {
  redisReply *r = sen_cmd(p, "SENTINEL REPLICAS " SEN_MASTER);
  int ok = 0;
  size_t i, j;

  for (i = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && i < r->elements;
       i++) {
    const redisReply *fields = r->element[i];
    for (j = 0; fields->type == REDIS_REPLY_ARRAY && j + 1 < fields->elements;
         j += 2)
      if (strcmp(fields->element[j]->str, "flags") == 0 &&
          strcmp(fields->element[j + 1]->str, "slave") == 0)
        ok++;
  }
  if (r != NULL)
    freeReplyObject(r);
  return ok;
}

/* The master's port as sentinel `p` names it, or -1. */
static int sen_master_port(const sen_proc_t *p) {
  redisReply *r = sen_cmd(p, "SENTINEL GET-MASTER-ADDR-BY-NAME " SEN_MASTER);
  int port = -1;

  if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
      r->element[1]->type == REDIS_REPLY_STRING)
    port = atoi(r->element[1]->str);
  if (r != NULL)
    freeReplyObject(r);
  return port;
}

/* An integer field of INFO replication. */
static long long sen_info_int(fleet_test_redis_t *r, const char *field) {
  redisReply *reply = fleet_test_redis_cmd(r, "INFO replication");
  char want[64];
  const char *p;
  long long v = -1;

  if (reply == NULL)
    return -2;
  snprintf(want, sizeof(want), "\n%s:", field);
  if (reply->type == REDIS_REPLY_STRING &&
      (p = strstr(reply->str, want)) != NULL)
    v = strtoll(p + strlen(want), NULL, 10);
  freeReplyObject(reply);
  return v;
}

/* Waits until `replica` has synced with its master. */
static void sen_wait_link_up(fleet_test_redis_t *replica) {
  uint64_t deadline = sen_now_ms() + fleet_test_ms(10000);

  for (;;) {
    redisReply *r = fleet_test_redis_cmd(replica, "INFO replication");
    int up = r != NULL && r->type == REDIS_REPLY_STRING &&
             strstr(r->str, "master_link_status:up") != NULL;
    if (r != NULL)
      freeReplyObject(r);
    if (up)
      return;
    ASSERT_LT(sen_now_ms(), deadline);
    sen_sleep_ms(20);
  }
}

/* Master, one or two replicas (in sync), three sentinels that know them.
 * Full syncs start at once (no diskless delay), so that a node turned
 * into a replica after a failover catches up quickly. Replication goes
 * through the "repl" user (FLEET_TEST_REPL_USER_ARGS), so that a test can
 * cut a replica off (fleet_test_redis_cut_replicas()). */
static void sen_env_init(sen_env_t *e, int replicas) {
  const char *tmp = getenv("TMPDIR");
  const char *master_args[] = {"--repl-diskless-sync-delay", "0",
                               FLEET_TEST_REPL_USER_ARGS, NULL};
  const char *replica_args[] = {"--repl-diskless-sync-delay",
                                "0",
                                FLEET_TEST_REPL_USER_ARGS,
                                "--replicaof",
                                "127.0.0.1",
                                NULL,
                                NULL};
  char port[16];
  uint64_t deadline;
  int i;

  memset(e, 0, sizeof(*e));
  e->master = fleet_test_redis_start_or_skip(master_args);
  snprintf(port, sizeof(port), "%d", fleet_test_redis_port(e->master));
  replica_args[(sizeof(replica_args) / sizeof(replica_args[0])) - 2] = port;
  e->replica = fleet_test_redis_start_or_skip(replica_args);
  if (replicas > 1)
    e->replica2 = fleet_test_redis_start_or_skip(replica_args);
  snprintf(e->dir, sizeof(e->dir), "%s/fleet-sentinel-XXXXXX",
           tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
  ASSERT_NOT_NULL(mkdtemp(e->dir));
  sen_wait_link_up(e->replica);
  if (e->replica2 != NULL)
    sen_wait_link_up(e->replica2);
  for (i = 0; i < SEN_COUNT; i++)
    sen_spawn(e, i);
  for (i = 0; i < SEN_COUNT; i++) {
    deadline = sen_now_ms() + fleet_test_ms(15000);
    while (sen_sees_replicas(&e->sen[i]) < replicas) {
      ASSERT_LT(sen_now_ms(), deadline);
      sen_sleep_ms(50);
    }
  }
  snprintf(
      e->url, sizeof(e->url),
      "redis+sentinel://127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d/" SEN_MASTER,
      e->sen[0].port, e->sen[1].port, e->sen[2].port);
}

/* The same as sen_env_init(e, 1) with TLS everywhere: master and replica
 * listen with TLS and replicate over it, the sentinels take TLS clients
 * and reach the nodes with TLS. Plain ports stay open for the test's own
 * synchronous checks only. */
static void sen_env_init_tls(sen_env_t *e) {
  const char *tmp = getenv("TMPDIR");
  char a[16][PATH_MAX + 32];
  const char *argv[17];
  int n, i, k, replica_tls;
  uint64_t deadline;

  memset(e, 0, sizeof(*e));
  signal(SIGPIPE, SIG_IGN);
  snprintf(e->dir, sizeof(e->dir), "%s/fleet-sentinel-XXXXXX",
           tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
  ASSERT_NOT_NULL(mkdtemp(e->dir));
  fleet_test_tls_certs(e->dir);
  e->master_tls_port = fleet_test_free_port();
  replica_tls = fleet_test_free_port();
  ASSERT_GT(e->master_tls_port, 0);
  ASSERT_GT(replica_tls, 0);
  for (i = 0; i < 2; i++) {
    n = 0;
    snprintf(a[n++], sizeof(a[0]), "--tls-port");
    snprintf(a[n++], sizeof(a[0]), "%d",
             i == 0 ? e->master_tls_port : replica_tls);
    snprintf(a[n++], sizeof(a[0]), "--tls-cert-file");
    snprintf(a[n++], sizeof(a[0]), "%s/server.crt", e->dir);
    snprintf(a[n++], sizeof(a[0]), "--tls-key-file");
    snprintf(a[n++], sizeof(a[0]), "%s/server.key", e->dir);
    snprintf(a[n++], sizeof(a[0]), "--tls-ca-cert-file");
    snprintf(a[n++], sizeof(a[0]), "%s/ca.crt", e->dir);
    snprintf(a[n++], sizeof(a[0]), "--tls-replication");
    snprintf(a[n++], sizeof(a[0]), "yes");
    snprintf(a[n++], sizeof(a[0]), "--tls-auth-clients");
    snprintf(a[n++], sizeof(a[0]), "no");
    if (i == 1) {
      snprintf(a[n++], sizeof(a[0]), "--replicaof");
      snprintf(a[n++], sizeof(a[0]), "127.0.0.1");
      snprintf(a[n++], sizeof(a[0]), "%d", e->master_tls_port);
    }
    for (k = 0; k < n; k++)
      argv[k] = a[k];
    argv[n] = NULL;
    if (i == 0)
      e->master = fleet_test_redis_start_or_skip(argv);
    else
      e->replica = fleet_test_redis_start_or_skip(argv);
  }
  sen_wait_link_up(e->replica);
  for (i = 0; i < SEN_COUNT; i++)
    sen_spawn(e, i);
  for (i = 0; i < SEN_COUNT; i++) {
    deadline = sen_now_ms() + fleet_test_ms(15000);
    while (sen_sees_replicas(&e->sen[i]) < 1) {
      ASSERT_LT(sen_now_ms(), deadline);
      sen_sleep_ms(50);
    }
  }
  snprintf(
      e->url, sizeof(e->url),
      "rediss+sentinel://127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d/" SEN_MASTER
      "?tls_ca_file=%s/ca.crt",
      e->sen[0].tls_port, e->sen[1].tls_port, e->sen[2].tls_port, e->dir);
}

static void sen_env_free(sen_env_t *e) {
  int i, status;

  for (i = 0; i < SEN_COUNT; i++) {
    if (e->sen[i].pid > 0) {
      kill(e->sen[i].pid, SIGKILL);
      while (waitpid(e->sen[i].pid, &status, 0) < 0 && errno == EINTR)
        ;
    }
  }
  fleet_test_redis_free(e->replica2);
  fleet_test_redis_free(e->replica);
  fleet_test_redis_free(e->master);
  fleet_test_rmtree(e->dir);
}

/* Waits until the replica has every write the master acknowledged. */
static void sen_wait_replicated(sen_env_t *e) {
  uint64_t deadline = sen_now_ms() + fleet_test_ms(10000);

  for (;;) {
    long long m = sen_info_int(e->master, "master_repl_offset");
    long long r = sen_info_int(e->replica, "slave_repl_offset");
    long long r2 = e->replica2 != NULL
                       ? sen_info_int(e->replica2, "slave_repl_offset")
                       : m;
    if (m > 0 && r >= m && r2 >= m)
      return;
    ASSERT_LT(sen_now_ms(), deadline);
    sen_sleep_ms(20);
  }
}

/* ------------------------------------------------------------------------ */
/* The worker                                                               */

typedef struct {
  uv_timer_t timer;
  fleet_job_t *job;
} sen_work_t;

typedef struct {
  int handled[SEN_JOBS];   /* handler calls per job */
  int completed[SEN_JOBS]; /* accepted completions per job */
  int distinct;            /* jobs with an accepted completion */
  int completions, refused, lost;
  int errors[40]; /* background errors by -code */
} sen_seen_t;

static sen_seen_t sen_seen;

static void sen_on_work_closed(uv_handle_t *h) {
  free(h->data);
}

static void sen_on_work_timer(uv_timer_t *t) {
  sen_work_t *wk = t->data;

  /* A finish fleet refuses (the claim was lost) is told to done_cb. */
  fleet_job_complete(wk->job);
  uv_close((uv_handle_t *)t, sen_on_work_closed);
}

static int sen_index(const fleet_job_t *job) {
  char buf[16];
  size_t len = job->payload.len < sizeof(buf) - 1 ? job->payload.len : 0;
  int i;

  memcpy(buf, job->payload.base, len);
  buf[len] = '\0';
  i = atoi(buf);
  ASSERT(i >= 0 && i < SEN_JOBS);
  return i;
}

/* Each job takes 20 ms (8 at a time: about 5 s for all), so that the
 * failover falls amid the work. */
static void sen_handler(fleet_worker_t *w, fleet_job_t *job) {
  sen_work_t *wk = calloc(1, sizeof(*wk));

  ASSERT_NOT_NULL(wk);
  sen_seen.handled[sen_index(job)]++;
  wk->job = job;
  ASSERT_OK(uv_timer_init(w->data, &wk->timer));
  wk->timer.data = wk;
  ASSERT_OK(uv_timer_start(&wk->timer, sen_on_work_timer, 20, 0));
}

static void sen_done(fleet_worker_t *w, fleet_job_t *job,
                     fleet_job_action_t action, int status) {
  int i = sen_index(job);

  ASSERT_EQ(FLEET_JOB_COMPLETE, action);
  if (status == 0 || status == FLEET_EALREADY) {
    if (sen_seen.completed[i]++ == 0)
      sen_seen.distinct++;
    sen_seen.completions++;
  } else {
    sen_seen.refused++;
  }
}

static void sen_lost(fleet_worker_t *w, fleet_job_t *job, int status) {
  sen_seen.lost++;
}

static void sen_error(fleet_handle_t *h, int status, const char *detail) {
  if (-status >= 0 && -status < 40)
    sen_seen.errors[-status]++;
}

static int sen_stopped, sen_closed;

static void sen_on_worker_stopped(fleet_handle_t *h, int status, void *arg) {
  sen_stopped++;
}

static void sen_on_worker_closed(fleet_handle_t *h) {
  sen_closed++;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */

/* SENTINEL FAILOVER while a worker is busy with 2000 jobs (enqueued and
 * replicated before): the worker carries on against the promoted replica
 * and every job ends completed there. Completions acknowledged by the old
 * master in the moment of the switch may be lost (replication is
 * asynchronous): such jobs run again when their claim expires, so a job
 * may be handled twice, never dropped. */
/* qt_open() with the durability option. */
static void sen_open(qt_t *t, const char *url, uint32_t wait_replicas) {
  fleet_client_options_t o;

  memset(t, 0, sizeof(*t));
  fleet_client_options_init(&o);
  o.prefix = "sen";
  o.reconnect_initial_ms = 20;
  o.reconnect_max_ms = 200;
  o.wait_replicas = wait_replicas;
  o.wait_timeout_ms = (uint32_t)fleet_test_ms(1000);
  ctx_init(&t->c, url, &o);
  t->q.data = t;
  ASSERT_OK(fleet_queue_init(&t->c.client, &t->q, "jobs", NULL));
}

static void sen_failover(int replicas, uint32_t wait_replicas) {
  sen_env_t e;
  qt_t t;
  fleet_worker_t w;
  fleet_worker_options_t o;
  fleet_job_spec_t specs[500];
  char payloads[500][16];
  redisReply *r;
  uint64_t deadline, start, next_check, next_switch_check = 0;
  int switched = -1;
  int i, b, old_port, twice = 0, failed_over = 0;
  uv_loop_t *loop;

  sen_env_init(&e, replicas);
  memset(&sen_seen, 0, sizeof(sen_seen));
  old_port = fleet_test_redis_port(e.master);
  sen_open(&t, e.url, wait_replicas);
  loop = &t.c.loop;
  for (b = 0; b < SEN_JOBS; b += 500) {
    for (i = 0; i < 500; i++) {
      snprintf(payloads[i], sizeof(payloads[i]), "%d", b + i);
      fleet_job_spec_init(&specs[i], "t", payloads[i], strlen(payloads[i]));
      /* A claim whose WAIT fails still counts an attempt on the master:
       * the jobs must outlive the claims of the failover window. */
      specs[i].max_attempts = 1000;
    }
    ASSERT_OK(qt_enqueue(&t, specs, 500, NULL, NULL));
  }
  sen_wait_replicated(&e);

  fleet_worker_options_init(&o);
  o.concurrency = 8;
  o.claim_ttl_ms = 3000;
  o.heartbeat_ms = 500;
  o.recover_ms = 500;
  o.poll_ms = 500;
  o.done_cb = sen_done;
  o.lost_cb = sen_lost;
  o.error_cb = sen_error;
  w.data = loop;
  ASSERT_OK(fleet_worker_init(&t.c.client, &w, "jobs", &o));
  ASSERT_OK(fleet_worker_start(&w, sen_handler));

  start = sen_now_ms();
  deadline = start + fleet_test_ms(30000);
  /* Until the queue on the (new) master has every job completed: a
   * completion the old master acknowledged after the promotion is lost,
   * and its job comes back when its claim expires. */
  next_check = 0;
  for (;;) {
    uv_run(loop, UV_RUN_ONCE);
    if (failed_over && switched < 0 && sen_now_ms() >= next_switch_check) {
      /* When the sentinels name the new master, from the test's side. */
      if (sen_master_port(&e.sen[1]) != old_port)
        switched = sen_seen.completions;
      next_switch_check = sen_now_ms() + 100;
    }
    if (switched >= 0 && sen_seen.distinct == SEN_JOBS &&
        sen_now_ms() >= next_check) {
      ASSERT_OK(qt_counts(&t));
      if (t.counts.completed == SEN_JOBS && t.counts.pending == 0 &&
          t.counts.running == 0)
        break;
      next_check = sen_now_ms() + 200;
    }
    if (!failed_over && sen_seen.completions >= SEN_JOBS / 5) {
      r = sen_cmd(&e.sen[0], "SENTINEL FAILOVER " SEN_MASTER);
      ASSERT_NOT_NULL(r);
      fprintf(stderr, "SENTINEL FAILOVER after %d completions: %s\n",
              sen_seen.completions,
              r->type == REDIS_REPLY_STATUS ? r->str : "(error)");
      ASSERT_EQ(REDIS_REPLY_STATUS, r->type);
      freeReplyObject(r);
      failed_over = 1;
    }
    if (sen_now_ms() >= deadline) {
      fleet_worker_stats_t ws;
      fleet_worker_stats(&w, &ws);
      if (qt_counts(&t) == 0)
        fprintf(stderr,
                "counts: pending %llu delayed %llu running %llu completed "
                "%llu dead %llu\n",
                (unsigned long long)t.counts.pending,
                (unsigned long long)t.counts.delayed,
                (unsigned long long)t.counts.running,
                (unsigned long long)t.counts.completed,
                (unsigned long long)t.counts.dead);
      fprintf(stderr,
              "worker: claimed %llu completed %llu held %u active %u online "
              "%d last_error %s state %s; client %s: %s\n",
              (unsigned long long)ws.claimed, (unsigned long long)ws.completed,
              ws.held, ws.active, ws.online, fleet_err_name(ws.last_error),
              ws.state,
              fleet_client_state_name(fleet_client_state(&t.c.client)),
              fleet_client_last_error(&t.c.client));
      fprintf(stderr,
              "stuck: %d distinct, %d accepted, %d refused; errors ECONNLOST "
              "%d EUNAVAILABLE %d EREADONLY %d ETIMEDOUT %d; master "
              "role:%lld slaves %lld, replica slaves %lld\n",
              sen_seen.distinct, sen_seen.completions, sen_seen.refused,
              sen_seen.errors[-FLEET_ECONNLOST],
              sen_seen.errors[-FLEET_EUNAVAILABLE],
              sen_seen.errors[-FLEET_EREADONLY],
              sen_seen.errors[-FLEET_ETIMEDOUT],
              sen_info_int(e.master, "master_repl_offset"),
              sen_info_int(e.master, "connected_slaves"),
              sen_info_int(e.replica, "connected_slaves"));
      ASSERT(0 && "the queue did not drain in time");
    }
  }
  fprintf(stderr,
          "%d jobs in %llu ms: %d completions accepted, %d refused, %d "
          "lost claims; ECONNLOST %d, EUNAVAILABLE %d, EREADONLY %d, "
          "ETIMEDOUT %d\n",
          SEN_JOBS, (unsigned long long)(sen_now_ms() - start),
          sen_seen.completions, sen_seen.refused, sen_seen.lost,
          sen_seen.errors[-FLEET_ECONNLOST],
          sen_seen.errors[-FLEET_EUNAVAILABLE],
          sen_seen.errors[-FLEET_EREADONLY], sen_seen.errors[-FLEET_ETIMEDOUT]);
  for (i = 0; i < SEN_JOBS; i++) {
    ASSERT_GE(sen_seen.handled[i], 1);
    ASSERT_GE(sen_seen.completed[i], 1);
    if (sen_seen.handled[i] > 1)
      twice++;
  }
  fprintf(stderr,
          "jobs handled more than once: %d; completions after the "
          "sentinels named the new master: %d\n",
          twice, sen_seen.completions - switched);
  /* The worker went on working after the switch. */
  ASSERT_GT(sen_seen.completions - switched, 0);
  if (wait_replicas > 0) {
    /* No acknowledged completion was lost: none was accepted twice. */
    for (i = 0; i < SEN_JOBS; i++)
      ASSERT_EQ(1, sen_seen.completed[i]);
    ASSERT_EQ(SEN_JOBS, sen_seen.completions);
  }

  /* The promoted replica is the master now, and holds the whole story. */
  r = sen_cmd(&e.sen[1], "SENTINEL GET-MASTER-ADDR-BY-NAME " SEN_MASTER);
  ASSERT_NOT_NULL(r);
  ASSERT_EQ(REDIS_REPLY_ARRAY, r->type);
  ASSERT_EQ(2, r->elements);
  ASSERT(fleet_test_redis_port(e.replica) == atoi(r->element[1]->str) ||
         (e.replica2 != NULL &&
          fleet_test_redis_port(e.replica2) == atoi(r->element[1]->str)));
  ASSERT_NE(old_port, atoi(r->element[1]->str));
  freeReplyObject(r);
  /* Jobs run a second time may still be in the handler: stop waits. */
  ASSERT_OK(fleet_worker_stop(&w, (uint32_t)fleet_test_ms(5000),
                              sen_on_worker_stopped, NULL));
  ASSERT(fleet_test_wait_count(loop, &sen_stopped, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(fleet_worker_close(&w, sen_on_worker_closed));
  ASSERT(fleet_test_wait_count(loop, &sen_closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(qt_counts(&t));
  fprintf(stderr,
          "counts on the new master: pending %llu running %llu "
          "completed %llu dead %llu\n",
          (unsigned long long)t.counts.pending,
          (unsigned long long)t.counts.running,
          (unsigned long long)t.counts.completed,
          (unsigned long long)t.counts.dead);
  ASSERT_EQ(0, t.counts.pending);
  ASSERT_EQ(0, t.counts.running);
  ASSERT_EQ(0, t.counts.dead);
  ASSERT_EQ(SEN_JOBS, t.counts.completed);
  qt_close(&t);
  sen_env_free(&e);
}

TEST_IMPL(sentinel_failover_queue) {
  sen_failover(1, 0);
  return 0;
}

/* The same with two replicas and wait_replicas 1: every completion the
 * worker was told of survives the failover, so none is accepted twice.
 * Calls fail with FLEET_ETIMEDOUT while the new master has no replica in
 * sync (until the sentinels point the other replica at it), and the
 * worker retries them. */
TEST_IMPL(sentinel_failover_durable) {
  sen_failover(2, 2);
  return 0;
}

/* Fencing across a Sentinel failover with replication lag
 * (test_fence_mp.h): the replica's link is cut, then a lock grant and a
 * job claim reach the master alone, the master is killed and the lagging
 * replica promoted: the grants after it carry greater tokens (the epoch
 * is Sentinel's config-epoch of the new master), and the first holder is
 * told it lost its lease. */
typedef struct {
  sen_env_t *e;
} sen_fence_t;

static void sen_fence_kill(void *arg) {
  sen_fence_t *f = arg;
  int replica_port = fleet_test_redis_port(f->e->replica);
  uint64_t deadline = sen_now_ms() + fleet_test_ms(30000);
  int i, named;

  ASSERT_OK(fleet_test_redis_kill(f->e->master));
  /* Every sentinel names the replica as the master, and it is one. */
  for (;;) {
    redisReply *r = fleet_test_redis_cmd(f->e->replica, "ROLE");
    named = r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
            strcmp(r->element[0]->str, "master") == 0;
    if (r != NULL)
      freeReplyObject(r);
    for (i = 0; i < SEN_COUNT && named; i++)
      named = sen_master_port(&f->e->sen[i]) == replica_port;
    if (named)
      return;
    ASSERT_LT(sen_now_ms(), deadline);
    sen_sleep_ms(50);
  }
}

TEST_IMPL(sentinel_fence_failover_mp) {
  fence_mp_env_t env;
  sen_fence_t f;
  sen_env_t e;

  sen_env_init(&e, 1);
  f.e = &e;
  memset(&env, 0, sizeof(env));
  env.url = e.url;
  env.master = e.master;
  env.replica = e.replica;
  env.kill = sen_fence_kill;
  env.arg = &f;
  env.queue = "fq";
  fence_mp_run(&env);
  sen_env_free(&e);
  return 0;
}

/* A master no sentinel knows, and sentinels that are all down: requests
 * fail when their deadline passes, saying why. */
TEST_IMPL(sentinel_unknown_master) {
  sen_env_t e;
  client_ctx_t t;
  fleet_client_options_t o;
  char url[256];
  int port = fleet_test_free_port();

  sen_env_init(&e, 1);
  fleet_client_options_init(&o);
  o.command_timeout_ms = (uint32_t)fleet_test_ms(1000);
  snprintf(url, sizeof(url), "redis+sentinel://127.0.0.1:%d/nosuchmaster",
           e.sen[0].port);
  ctx_init(&t, url, &o);
  ASSERT_ERR(FLEET_EUNAVAILABLE, ctx_ping(&t));
  fprintf(stderr, "%s\n", fleet_client_last_error(&t.client));
  ASSERT_NOT_NULL(
      strstr(fleet_client_last_error(&t.client), "\"nosuchmaster\""));
  ctx_close(&t);

  /* A dead sentinel first, a live one second: the second answers. */
  snprintf(url, sizeof(url),
           "redis+sentinel://127.0.0.1:%d,127.0.0.1:%d/" SEN_MASTER, port,
           e.sen[2].port);
  ctx_init(&t, url, NULL);
  ASSERT_OK(ctx_ping(&t));
  ctx_close(&t);

  snprintf(url, sizeof(url), "redis+sentinel://127.0.0.1:%d/" SEN_MASTER, port);
  ctx_init(&t, url, &o);
  ASSERT_ERR(FLEET_EUNAVAILABLE, ctx_ping(&t));
  fprintf(stderr, "%s\n", fleet_client_last_error(&t.client));
  ASSERT_NOT_NULL(strstr(fleet_client_last_error(&t.client), "refused"));
  ctx_close(&t);
  sen_env_free(&e);
  return 0;
}

/* rediss+sentinel://: the sentinels and the nodes speak TLS only to fleet;
 * the client finds the master through a sentinel's TLS port, and after
 * SENTINEL FAILOVER reconnects, over TLS, to the promoted replica. */
TEST_IMPL(sentinel_tls) {
  sen_env_t e;
  client_ctx_t t;
  fleet_client_options_t o;
  redisReply *r;
  uint64_t deadline;
  int ready;

  sen_env_init_tls(&e);
  fleet_client_options_init(&o);
  o.reconnect_initial_ms = 20;
  o.reconnect_max_ms = 200;
  ctx_init(&t, e.url, &o);
  ASSERT_OK(ctx_ping(&t));
  ASSERT_EQ(1, t.states[FLEET_CLIENT_READY]);
  ready = t.states[FLEET_CLIENT_READY];

  r = sen_cmd(&e.sen[0], "SENTINEL FAILOVER " SEN_MASTER);
  ASSERT_NOT_NULL(r);
  ASSERT_EQ(REDIS_REPLY_STATUS, r->type);
  freeReplyObject(r);
  /* The client hears the switch and connects to the new master. */
  deadline = sen_now_ms() + fleet_test_ms(30000);
  while (t.states[FLEET_CLIENT_READY] == ready ||
         sen_master_port(&e.sen[2]) == e.master_tls_port) {
    fleet_test_sleep(&t.loop, 50);
    ASSERT_LT(sen_now_ms(), deadline);
  }
  ASSERT_GT(sen_master_port(&e.sen[2]), 0);
  ASSERT_OK(ctx_ping(&t));
  ctx_close(&t);
  sen_env_free(&e);
  return 0;
}
