/* bench_warmpool.c -- fleet-bench warmpool: acquire + release of a warm
 * pool's resources.
 *   c1, c50   acquire then release (back to idle) with 1 and 50 in flight,
 *             from a client-only node, on a pool pre-warmed to --idle
 *             entries by a primary that was then closed: the cost of the
 *             hand-out path alone.
 *   c50_primary  the same with the primary running: each acquire wakes it,
 *             it refills, and releases over the target are destroyed (the
 *             churn a live pool has).
 * The resources are names only (create and destroy complete at once).
 * Flags: --idle N (default 200). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct {
  fleet_warmpool_t wp;
  int closed;
  int done, status;
  uint64_t idle;
} wp_side_t;

static void wpb_create(fleet_warmpool_t *pool, fleet_warmpool_work_t *w) {
  (void)pool;
  fleet_warmpool_work_done(w, 0, NULL);
}

static void wpb_destroy(fleet_warmpool_t *pool, fleet_warmpool_work_t *w) {
  (void)pool;
  fleet_warmpool_work_done(w, 0, NULL);
}

static void wpb_closed(fleet_handle_t *h) {
  ((wp_side_t *)h->data)->closed++;
}

static int wpb_open(fleet_client_t *c, wp_side_t *s, const char *owner,
                    int client_only, uint32_t idle) {
  fleet_warmpool_options_t o;

  memset(s, 0, sizeof(*s));
  fleet_warmpool_options_init(&o);
  o.target_idle = idle;
  o.client_only = client_only;
  o.warmup_concurrency = 64;
  o.idle_ttl_ms = 3600000;
  o.reconcile_ms = 200;
  s->wp.data = s;
  return fleet_warmpool_init(c, &s->wp, "bench", owner, &o);
}

static void wpb_close(uv_loop_t *loop, wp_side_t *s) {
  fleet_warmpool_close(&s->wp, wpb_closed);
  while (s->closed == 0)
    uv_run(loop, UV_RUN_ONCE);
}

static void wpb_status(fleet_handle_t *h, int status, void *arg) {
  wp_side_t *s = arg;

  (void)h;
  s->status = status;
  s->done++;
}

static void wpb_snap(fleet_warmpool_t *pool, int status,
                     const fleet_warmpool_snapshot_t *snap, void *arg) {
  wp_side_t *s = arg;

  (void)pool;
  s->status = status;
  s->idle = status == 0 ? snap->idle : 0;
  s->done++;
}

/* Runs the loop until the side's call answered; returns its status. */
static int wpb_wait(uv_loop_t *loop, wp_side_t *s) {
  while (s->done == 0)
    uv_run(loop, UV_RUN_ONCE);
  s->done = 0;
  return s->status;
}

/* Starts `s` with the handlers (its fingerprint check and, unless client
 * only, its campaign) and waits for the answer. */
static int wpb_start(uv_loop_t *loop, wp_side_t *s) {
  static const fleet_warmpool_handlers_t handlers = {wpb_create, wpb_destroy,
                                                     NULL};
  int err = fleet_warmpool_start(&s->wp, &handlers, wpb_status, s);

  return err != 0 ? err : wpb_wait(loop, s);
}

/* Starts `s` and waits until the pool has `idle` idle entries. */
static int wpb_prewarm(uv_loop_t *loop, wp_side_t *s, uint64_t idle) {
  int err;

  if ((err = wpb_start(loop, s)) != 0)
    return err;
  do {
    if ((err = fleet_warmpool_snapshot(&s->wp, wpb_snap, s)) != 0 ||
        (err = wpb_wait(loop, s)) != 0)
      return err;
    uv_run(loop, UV_RUN_NOWAIT);
  } while (s->idle < idle);
  return 0;
}

static void wpb_released(fleet_handle_t *h, int status, void *arg) {
  (void)h;
  bench_slot_done(arg, status);
}

static void wpb_acquired(fleet_warmpool_t *pool, int status, const char *id,
                         void *arg) {
  int err;

  if (status != 0) {
    bench_slot_done(arg, status);
    return;
  }
  err = fleet_warmpool_release(pool, id, 0, wpb_released, arg);
  if (err != 0)
    bench_slot_done(arg, err);
}

static int wpb_op(bench_slot_t *slot) {
  wp_side_t *s = slot->driver->ctx;
  return fleet_warmpool_acquire(&s->wp, wpb_acquired, slot);
}

static int wpb_run(uv_loop_t *loop, wp_side_t *client, int n, const char *label,
                   int pid, const bench_opts_t *o) {
  bench_driver_t d;
  bench_cpu_t a, z;
  int err;

  memset(&d, 0, sizeof(d));
  d.loop = loop;
  d.inflight = n;
  d.max_ops = 10000000;
  d.seconds = o->seconds;
  d.start = wpb_op;
  d.ctx = client;
  bench_cpu_sample(&a, pid);
  err = bench_drive(&d);
  bench_cpu_sample(&z, pid);
  if (err == 0) {
    bench_emit_rates("warmpool", label, d.done, &a, &z);
    bench_lat_emit("warmpool", label, &d.lat);
  }
  bench_lat_free(&d.lat);
  return err;
}

int bench_warmpool(const bench_opts_t *o) {
  fleet_client_t client;
  uv_loop_t loop;
  wp_side_t primary = {0}, user = {0};
  long idle = 200;
  int pid, err = 0, j;

  for (j = 0; j < o->argc; j++) {
    if (strcmp(o->argv[j], "--idle") == 0 && j + 1 < o->argc) {
      idle = bench_parse_long("--idle", o->argv[++j]);
    } else {
      fprintf(stderr, "fleet-bench warmpool: unknown flag '%s'\n", o->argv[j]);
      return 2;
    }
  }
  uv_loop_init(&loop);
  if (bench_client_open(&loop, &client, o) != 0)
    return 1;
  pid = bench_server_pid(o->url);
  if ((err = wpb_open(&client, &primary, "primary", 0, (uint32_t)idle)) == 0 &&
      (err = wpb_open(&client, &user, "user", 1, (uint32_t)idle)) == 0 &&
      (err = wpb_prewarm(&loop, &primary, (uint64_t)idle)) == 0 &&
      (err = wpb_start(&loop, &user)) == 0) {
    /* The hand-out path alone: the primary closes (its idle stays). */
    wpb_close(&loop, &primary);
    err = wpb_run(&loop, &user, 1, "c1", pid, o);
    if (err == 0)
      err = wpb_run(&loop, &user, 50, "c50", pid, o);
    /* With a live primary. */
    if (err == 0 &&
        (err = wpb_open(&client, &primary, "primary2", 0, (uint32_t)idle)) ==
            0 &&
        (err = wpb_prewarm(&loop, &primary, (uint64_t)idle)) == 0)
      err = wpb_run(&loop, &user, 50, "c50_primary", pid, o);
  }
  if (err != 0)
    fprintf(stderr, "fleet-bench warmpool: %s\n", fleet_strerror(err));
  if (primary.wp.internal_ != NULL)
    wpb_close(&loop, &primary);
  if (user.wp.internal_ != NULL)
    wpb_close(&loop, &user);
  bench_client_close(&loop, &client);
  uv_loop_close(&loop);
  return err != 0;
}
