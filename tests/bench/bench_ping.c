/* bench_ping.c -- fleet-bench ping: bare round trips through the client,
 * the baseline the other subcommands compare against. */
#include <stdio.h>

#include "bench.h"

static void ping_done(fleet_client_t *client, int status, void *arg) {
  bench_slot_done(arg, status);
}

static int ping_start(bench_slot_t *slot) {
  return fleet_client_ping(slot->driver->ctx, ping_done, slot);
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
  bench_client_close(&loop, &client);
  uv_loop_close(&loop);
  return err != 0;
}
