/* bench_lock.c -- fleet-bench lock: acquire + release pairs on distinct
 * names (one lock handle per slot, so nothing contends). One operation is
 * one acquire plus one release. Runs:
 *   c1     1 pair in flight on one client;
 *   c50    50 pairs in flight on one client (one connection, like ping);
 *   c50x2  50 pairs in flight over two clients of the same loop (25 each),
 *          as two processes' worth of connections would be.
 * Flags: --ttl MS (default 10000), the TTL of every lease; --inflight N,
 * one run "c<N>" of N pairs in flight on one client instead of the three
 * above. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct lock_bench_s lock_bench_t;

/* One slot's lock and its driver slot. */
typedef struct {
  fleet_lock_t lock;
  bench_slot_t *slot;
  lock_bench_t *bench;
} lock_slot_t;

struct lock_bench_s {
  lock_slot_t *slots;
  int closed;
};

static void lock_released(fleet_handle_t *lock_h, int status, void *arg) {
  fleet_lock_t *lock = (fleet_lock_t *)lock_h;
  lock_slot_t *s = lock->data;
  bench_slot_done(s->slot, status);
}

static void lock_acquired(fleet_lock_t *lock, int status, uint64_t token,
                          void *arg) {
  lock_slot_t *s = lock->data;
  int err;

  if (status != 0) {
    bench_slot_done(s->slot, status);
    return;
  }
  err = fleet_lock_release(lock, lock_released, NULL);
  if (err != 0)
    bench_slot_done(s->slot, err);
}

static int lock_start(bench_slot_t *slot) {
  lock_bench_t *b = slot->driver->ctx;
  lock_slot_t *s = &b->slots[slot->index];

  s->slot = slot;
  return fleet_lock_acquire(&s->lock, 0, lock_acquired, NULL);
}

static void lock_on_close(fleet_handle_t *lock) {
  lock_slot_t *s = lock->data;
  s->bench->closed++;
}

/* One measurement: `n` pairs in flight over `nclients` clients. Returns 0
 * or the first error. */
static int lock_run(uv_loop_t *loop, fleet_client_t *clients, int nclients,
                    int n, const char *label, long ttl_ms, int pid,
                    const bench_opts_t *o) {
  bench_driver_t d = {0};
  bench_cpu_t a, z;
  lock_bench_t b;
  char name[48];
  int j, inited, err = 0;

  memset(&b, 0, sizeof(b));
  b.slots = calloc((size_t)n, sizeof(*b.slots));
  if (b.slots == NULL)
    return FLEET_ENOMEM;
  for (inited = 0; inited < n; inited++) {
    snprintf(name, sizeof(name), "bench-%s-%d", label, inited);
    b.slots[inited].lock.data = &b.slots[inited];
    b.slots[inited].bench = &b;
    err = fleet_lock_init(&clients[inited % nclients], &b.slots[inited].lock,
                          name, "fleet-bench", (uint32_t)ttl_ms, NULL);
    if (err != 0)
      break;
  }
  if (err == 0) {
    d.loop = loop;
    d.inflight = n;
    d.max_ops = 10000000;
    d.seconds = o->seconds;
    d.start = lock_start;
    d.ctx = &b;
    bench_cpu_sample(&a, pid);
    err = bench_drive(&d);
    bench_cpu_sample(&z, pid);
    if (err == 0) {
      bench_emit_rates("lock", label, d.done, &a, &z);
      bench_lat_emit("lock", label, &d.lat);
    }
    bench_lat_free(&d.lat);
  }
  for (j = 0; j < inited; j++)
    fleet_lock_close(&b.slots[j].lock, lock_on_close);
  while (b.closed < inited)
    uv_run(loop, UV_RUN_ONCE);
  free(b.slots);
  return err;
}

int bench_lock(const bench_opts_t *o) {
  struct {
    const char *label;
    int inflight;
    int clients;
  } runs[] = {{"c1", 1, 1}, {"c50", 50, 1}, {"c50x2", 50, 2}};
  fleet_client_t clients[2];
  uv_loop_t loop;
  long ttl_ms = 10000, inflight = 0;
  char label[32];
  size_t i, nruns = sizeof(runs) / sizeof(runs[0]);
  int pid, err = 0, j;

  for (j = 0; j < o->argc; j++) {
    if (strcmp(o->argv[j], "--ttl") == 0 && j + 1 < o->argc) {
      ttl_ms = bench_parse_long("--ttl", o->argv[++j]);
    } else if (strcmp(o->argv[j], "--inflight") == 0 && j + 1 < o->argc) {
      inflight = bench_parse_long("--inflight", o->argv[++j]);
      if (inflight > 100000) {
        fprintf(stderr, "fleet-bench lock: --inflight is at most 100000\n");
        return 2;
      }
      snprintf(label, sizeof(label), "c%ld", inflight);
      runs[0].label = label;
      runs[0].inflight = (int)inflight;
      nruns = 1;
    } else {
      fprintf(stderr, "fleet-bench lock: unknown flag '%s'\n", o->argv[j]);
      return 2;
    }
  }
  uv_loop_init(&loop);
  if (bench_client_open(&loop, &clients[0], o) != 0)
    return 1;
  if (bench_client_open(&loop, &clients[1], o) != 0) {
    bench_client_close(&loop, &clients[0]);
    return 1;
  }
  pid = bench_server_pid(o->url);
  for (i = 0; i < nruns && err == 0; i++) {
    err = lock_run(&loop, clients, runs[i].clients, runs[i].inflight,
                   runs[i].label, ttl_ms, pid, o);
    if (err != 0)
      fprintf(stderr, "fleet-bench lock: %s\n", fleet_strerror(err));
  }
  fleet_client_close(&clients[1], NULL);
  bench_client_close(&loop, &clients[0]);
  uv_loop_close(&loop);
  return err != 0;
}
