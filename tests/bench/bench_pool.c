/* bench_pool.c -- fleet-bench pool: the worker pool's dispatch, and the
 * cost of a rebalance.
 *   c1, c50   dispatch + start round trips (the callback runs once the
 *             owning worker's start reported) with 1 and 50 in flight, from
 *             a client-only node to a node of 8 workers on another client;
 *             every key is new, so the pool grows during the run.
 *   rebalance 10 000 jobs on a node of 4 workers; a second node of 4 joins:
 *             the time until every job that moved has started on it, and
 *             the CPU that took (emitted as rebalance_ms and
 *             rebalance_{client,server}_cpu_us_per_job).
 * Flags: --jobs N (default 10000), the jobs of the rebalance. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct {
  fleet_pool_node_t node;
  fleet_client_t *client;
  fleet_pool_worker_t w[8];
  int started;      /* starts seen */
  uint64_t last_ns; /* when the last one came */
  int closed;
} pool_side_t;

typedef struct {
  pool_side_t host, client;
  uint64_t next_key;
  int label;
} pool_bench_t;

static void pool_start(fleet_pool_worker_t *w, fleet_pool_job_t *job) {
  pool_side_t *s = w->data;

  s->started++;
  s->last_ns = uv_hrtime();
  fleet_pool_job_started(job, 0);
}

static void pool_stop(fleet_pool_worker_t *w, fleet_pool_job_t *job,
                      fleet_pool_stop_reason_t reason) {
  (void)w;
  (void)job;
  (void)reason;
}

static const fleet_pool_handler_t pool_handler = {.start_cb = pool_start,
                                                  .stop_cb = pool_stop};

static void pool_dispatched(fleet_handle_t *h, int status, void *arg) {
  (void)h;
  bench_slot_done(arg, status);
}

static int pool_op(bench_slot_t *slot) {
  pool_bench_t *b = slot->driver->ctx;
  char key[32];

  snprintf(key, sizeof(key), "r%d-%llu", b->label,
           (unsigned long long)b->next_key++);
  return fleet_pool_dispatch(&b->client.node, key, (fleet_bytes_t){"p", 1},
                             pool_dispatched, slot);
}

static void pool_closed(fleet_handle_t *h) {
  ((pool_side_t *)h->data)->closed++;
}

/* Opens a node of `workers` workers (0: client-only) and waits until the
 * pool lists `want` workers. */
static int pool_open(uv_loop_t *loop, fleet_client_t *c, pool_side_t *s,
                     const char *id, int workers) {
  fleet_pool_node_options_t o;
  int i, err;

  memset(s, 0, sizeof(*s));
  s->client = c;
  fleet_pool_node_options_init(&o);
  o.client_only = workers == 0;
  o.max_queued_jobs = FLEET_POOL_UNLIMITED;
  s->node.data = s;
  if ((err = fleet_pool_node_init(c, &s->node, "bench", id, &o)) != 0)
    return err;
  for (i = 0; i < workers && err == 0; i++) {
    s->w[i].data = s;
    err = fleet_pool_worker_add(&s->node, &s->w[i], &pool_handler);
  }
  /* Two loop turns: the join goes out on the next one. */
  uv_run(loop, UV_RUN_NOWAIT);
  uv_run(loop, UV_RUN_NOWAIT);
  return err;
}

static void pool_close(uv_loop_t *loop, pool_side_t *s) {
  fleet_pool_node_close(&s->node, pool_closed);
  while (s->closed == 0)
    uv_run(loop, UV_RUN_ONCE);
}

static void pool_shut(fleet_handle_t *h, int status, void *arg) {
  (void)h;
  *(int *)arg = status == 0 ? 1 : status;
}

static void pool_reset_done(fleet_client_t *c, int status, void *arg) {
  (void)c;
  *(int *)arg = status == 0 ? 1 : status;
}

/* Opens the pool again after a shutdown (FLEET_EALREADY: it was open). */
static void pool_reopen(uv_loop_t *loop, fleet_client_t *c) {
  int done = 0;

  if (fleet_pool_reset(c, "bench", pool_reset_done, &done) != 0)
    return;
  while (done == 0)
    uv_run(loop, UV_RUN_ONCE);
}

/* Shuts the pool down and opens it again, so that the next run starts
 * empty. */
static void pool_clear(uv_loop_t *loop, pool_side_t *s) {
  int done = 0;

  if (fleet_pool_shutdown(&s->node, pool_shut, &done) != 0)
    return;
  while (done == 0)
    uv_run(loop, UV_RUN_ONCE);
  pool_reopen(loop, s->client);
}

/* Dispatches one job until one passes: the pool's membership is in
 * place (before, dispatches find no worker). */
static int pool_warm(uv_loop_t *loop, pool_bench_t *b) {
  bench_driver_t d;
  int err;

  do {
    memset(&d, 0, sizeof(d));
    d.loop = loop;
    d.inflight = 1;
    d.max_ops = 1;
    d.seconds = 10;
    d.start = pool_op;
    d.ctx = b;
    err = bench_drive(&d);
    bench_lat_free(&d.lat);
  } while (err == FLEET_ENOTFOUND);
  return err;
}

static int pool_dispatch_run(uv_loop_t *loop, fleet_client_t **c, int n,
                             const char *label, int pid,
                             const bench_opts_t *o) {
  bench_driver_t d = {0};
  bench_cpu_t a, z;
  pool_bench_t b;
  int err;

  memset(&b, 0, sizeof(b));
  b.label = n;
  if ((err = pool_open(loop, c[0], &b.host, "host", 8)) != 0 ||
      (err = pool_open(loop, c[1], &b.client, "client", 0)) != 0 ||
      (err = pool_warm(loop, &b)) != 0)
    return err;
  d.loop = loop;
  d.inflight = n;
  d.max_ops = 10000000;
  d.seconds = o->seconds;
  d.start = pool_op;
  d.ctx = &b;
  bench_cpu_sample(&a, pid);
  err = bench_drive(&d);
  bench_cpu_sample(&z, pid);
  if (err == 0) {
    bench_emit_rates("pool", label, d.done, &a, &z);
    bench_lat_emit("pool", label, &d.lat);
  }
  bench_lat_free(&d.lat);
  pool_clear(loop, &b.client);
  pool_close(loop, &b.client);
  pool_close(loop, &b.host);
  return err;
}

static void pool_rebalance_dispatched(fleet_handle_t *h, int status,
                                      void *arg) {
  int *left = arg;

  (void)h;
  if (status != 0)
    fprintf(stderr, "fleet-bench pool: %s\n", fleet_strerror(status));
  (*left)--;
}

static void pool_quiet(uv_timer_t *t) {
  *(int *)t->data = 1;
}

static int pool_rebalance_run(uv_loop_t *loop, fleet_client_t **c, int jobs,
                              int pid) {
  pool_side_t a, b, cl;
  uv_timer_t quiet;
  bench_cpu_t s0, s1;
  char key[32];
  int i, err, left = jobs, inflight = 0, sent = 0;
  double ms;

  if ((err = pool_open(loop, c[0], &a, "a", 4)) != 0 ||
      (err = pool_open(loop, c[1], &cl, "c", 0)) != 0)
    return err;
  while (left > 0) {
    while (sent < jobs && inflight < 100) {
      snprintf(key, sizeof(key), "job-%d", sent++);
      err = fleet_pool_dispatch(&cl.node, key, (fleet_bytes_t){"p", 1},
                                pool_rebalance_dispatched, &left);
      if (err != 0)
        return err;
      inflight++;
    }
    uv_run(loop, UV_RUN_ONCE);
    inflight = sent - (jobs - left);
  }
  bench_cpu_sample(&s0, pid);
  if ((err = pool_open(loop, c[1], &b, "b", 4)) != 0)
    return err;
  /* About 4/8 of the jobs move to b: wait until the starts on b stop
   * coming for 200 ms. */
  uv_timer_init(loop, &quiet);
  for (i = -1; i != b.started;) {
    int fired = 0;
    i = b.started;
    quiet.data = &fired;
    uv_timer_start(&quiet, pool_quiet, 200, 0);
    while (!fired)
      uv_run(loop, UV_RUN_ONCE);
  }
  uv_close((uv_handle_t *)&quiet, NULL);
  bench_cpu_sample(&s1, pid);
  ms = (double)(b.last_ns - s0.wall_ns) / 1e6;
  bench_emit("pool", "rebalance_moved_jobs", b.started, "jobs");
  bench_emit("pool", "rebalance_ms", ms, "ms");
  if (b.started > 0) {
    bench_emit("pool", "rebalance_client_cpu_us_per_job",
               (double)(s1.self_us - s0.self_us) / b.started, "us");
    if (s0.server_us >= 0)
      bench_emit("pool", "rebalance_server_cpu_us_per_job",
                 (double)(s1.server_us - s0.server_us) / b.started, "us");
  }
  pool_clear(loop, &cl);
  pool_close(loop, &cl);
  pool_close(loop, &b);
  pool_close(loop, &a);
  return 0;
}

int bench_pool(const bench_opts_t *o) {
  fleet_client_t clients[2], *c[2];
  uv_loop_t loop;
  long jobs = 10000;
  int memory = strncmp(o->url, "memory:", 7) == 0, pid, err = 0, j;

  for (j = 0; j < o->argc; j++) {
    if (strcmp(o->argv[j], "--jobs") == 0 && j + 1 < o->argc) {
      jobs = bench_parse_long("--jobs", o->argv[++j]);
    } else {
      fprintf(stderr, "fleet-bench pool: unknown flag '%s'\n", o->argv[j]);
      return 2;
    }
  }
  uv_loop_init(&loop);
  if (bench_client_open(&loop, &clients[0], o) != 0)
    return 1;
  if (!memory && bench_client_open(&loop, &clients[1], o) != 0) {
    bench_client_close(&loop, &clients[0]);
    return 1;
  }
  pid = bench_server_pid(o->url);
  /* Two memory clients have two stores: on memory://, one client. */
  c[0] = &clients[0];
  c[1] = memory ? &clients[0] : &clients[1];
  /* A run cut short may have left the pool shut down. */
  pool_reopen(&loop, c[0]);
  err = pool_dispatch_run(&loop, c, 1, "c1", pid, o);
  if (err == 0)
    err = pool_dispatch_run(&loop, c, 50, "c50", pid, o);
  if (err == 0)
    err = pool_rebalance_run(&loop, c, (int)jobs, pid);
  if (err != 0)
    fprintf(stderr, "fleet-bench pool: %s\n", fleet_strerror(err));
  if (!memory)
    fleet_client_close(&clients[1], NULL);
  bench_client_close(&loop, &clients[0]);
  uv_loop_close(&loop);
  return err != 0;
}
