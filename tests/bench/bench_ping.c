/* bench_ping.c -- fleet-bench ping: bare round trips through the client,
 * the baseline the other subcommands compare against: back to back with 1
 * and 50 in flight, and paced at 2000 per second (a timer every ms sends
 * the pings due), the floor of what one round trip costs the server and
 * the client at the rate of the queue's e2e phase (bench_queue.c). */
#include <stdio.h>

#include "bench.h"

static void ping_done(fleet_client_t *client, int status, void *arg) {
  bench_slot_done(arg, status);
}

static int ping_start(bench_slot_t *slot) {
  return fleet_client_ping(slot->driver->ctx, ping_done, slot);
}

/* The paced phase. */
typedef struct {
  fleet_client_t *client;
  uint64_t t0_ns, sent, done, total;
  int error;
} ping_pace_t;

static void ping_paced_done(fleet_client_t *client, int status, void *arg) {
  ping_pace_t *p = arg;

  p->done++;
  if (status != 0 && p->error == 0)
    p->error = status;
}

static void ping_on_pace(uv_timer_t *t) {
  ping_pace_t *p = t->data;
  uint64_t due = (uv_hrtime() - p->t0_ns) * 2000 / 1000000000u;

  if (due > p->total)
    due = p->total;
  while (p->sent < due) {
    if (fleet_client_ping(p->client, ping_paced_done, p) != 0) {
      p->error = FLEET_ENOMEM;
      p->total = p->sent;
      break;
    }
    p->sent++;
  }
  if (p->sent >= p->total)
    uv_timer_stop(t);
}

/* 2000 pings a second for `seconds` (bounded by seconds + 10 s). */
static int ping_paced(uv_loop_t *loop, fleet_client_t *client, double seconds,
                      int pid) {
  ping_pace_t p = {0};
  uv_timer_t pacer;
  bench_cpu_t a, b;
  uint64_t end;

  p.client = client;
  p.total = (uint64_t)(seconds * 2000);
  uv_timer_init(loop, &pacer);
  pacer.data = &p;
  p.t0_ns = uv_hrtime();
  end = p.t0_ns + (uint64_t)((seconds + 10) * 1e9);
  uv_timer_start(&pacer, ping_on_pace, 1, 1);
  bench_cpu_sample(&a, pid);
  while ((p.done < p.total || p.sent < p.total) && p.error == 0 &&
         uv_hrtime() < end)
    uv_run(loop, UV_RUN_ONCE);
  bench_cpu_sample(&b, pid);
  uv_timer_stop(&pacer);
  uv_close((uv_handle_t *)&pacer, NULL);
  while (p.done < p.sent && uv_hrtime() < end)
    uv_run(loop, UV_RUN_ONCE);
  uv_run(loop, UV_RUN_NOWAIT);
  if (p.error != 0 || p.done < p.total) {
    fprintf(stderr, "fleet-bench ping: paced: %s\n",
            fleet_strerror(p.error != 0 ? p.error : FLEET_ETIMEDOUT));
    return 1;
  }
  bench_emit_rates("ping", "paced_2000", p.done, &a, &b);
  return 0;
}

int bench_ping(const bench_opts_t *o) {
  static const int inflight[] = {1, 50};
  fleet_client_t client;
  uv_loop_t loop;
  size_t i;
  int pid, err;

  if (o->argc > 0) {
    fprintf(stderr, "fleet-bench ping: unknown flag '%s'\n", o->argv[0]);
    return 2;
  }
  uv_loop_init(&loop);
  err = bench_client_open(&loop, &client, o);
  if (err != 0)
    return 1;
  pid = bench_server_pid(o->url);
  for (i = 0; i < sizeof(inflight) / sizeof(inflight[0]); i++) {
    bench_driver_t d = {0};
    bench_cpu_t a, b;
    char label[16];

    d.loop = &loop;
    d.inflight = inflight[i];
    d.max_ops = 10000000;
    d.seconds = o->seconds;
    d.start = ping_start;
    d.ctx = &client;
    snprintf(label, sizeof(label), "c%d", inflight[i]);
    bench_cpu_sample(&a, pid);
    err = bench_drive(&d);
    bench_cpu_sample(&b, pid);
    if (err != 0) {
      fprintf(stderr, "fleet-bench ping: %s\n", fleet_strerror(err));
      bench_lat_free(&d.lat);
      break;
    }
    bench_emit_rates("ping", label, d.done, &a, &b);
    bench_lat_emit("ping", label, &d.lat);
    bench_lat_free(&d.lat);
  }
  if (err == 0)
    err = ping_paced(&loop, &client, o->seconds, pid);
  bench_client_close(&loop, &client);
  uv_loop_close(&loop);
  return err != 0;
}
