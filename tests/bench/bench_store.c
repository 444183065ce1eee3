/* bench_store.c -- fleet-bench store: record puts (replacing, with one index
 * entry), gets and event appends through a store, 50 in flight; then puts
 * and appends of records without index entries (put_plain_c50,
 * append_plain_c50, in a second collection); then a clear of everything
 * written. Compare with fleet-bench ping in the same run. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

/* Records the benchmark cycles through, the bytes of each value and
 * event, and the cap on each events list (so that lists stay small). */
#define BENCH_STORE_IDS 10000
#define BENCH_STORE_VALUE 128
#define BENCH_STORE_EVENT 64
#define BENCH_STORE_MAX_EVENTS 100
#define BENCH_STORE_INFLIGHT 50

typedef struct {
  fleet_store_t store;
  uint64_t next; /* the next id to use, modulo BENCH_STORE_IDS */
  char ids[BENCH_STORE_IDS][8];
  char value[BENCH_STORE_VALUE];
  char event[BENCH_STORE_EVENT];
  fleet_store_index_t ix;
  fleet_store_put_options_t po;
  fleet_store_put_options_t po_plain; /* no index entry */
  const char *coll;                   /* the collection of the phase */
  const fleet_store_put_options_t *cur_po;
  int cleared;
  int clear_status;
  uint64_t clear_n;
  int closed;
} bench_store_t;

static fleet_bytes_t bench_store_id(bench_store_t *bs) {
  const char *id = bs->ids[bs->next++ % BENCH_STORE_IDS];
  fleet_bytes_t b = {id, strlen(id)};
  return b;
}

static const char bench_store_coll[] = "runs";
static const char bench_store_plain[] = "plain";

/* The store has closed: the client may close now. */
static void bench_store_on_closed(fleet_handle_t *store) {
  ((bench_store_t *)store->data)->closed = 1;
}

static void bench_store_done(fleet_handle_t *store, int status, void *arg) {
  bench_slot_done(arg, status);
}

static void bench_store_got(fleet_store_t *store, int status,
                            fleet_bytes_t value, uint64_t ttl, void *arg) {
  bench_slot_done(arg, status);
}

static void bench_store_counted(fleet_store_t *store, int status, uint64_t n,
                                void *arg) {
  bench_slot_done(arg, status);
}

static int bench_store_put(bench_slot_t *slot) {
  bench_store_t *bs = slot->driver->ctx;
  fleet_bytes_t v = {bs->value, sizeof(bs->value)};
  return fleet_store_put(&bs->store, bs->coll, bench_store_id(bs), v,
                         bs->cur_po, bench_store_done, slot);
}

static int bench_store_get(bench_slot_t *slot) {
  bench_store_t *bs = slot->driver->ctx;
  return fleet_store_get(&bs->store, bench_store_coll, bench_store_id(bs),
                         bench_store_got, slot);
}

static int bench_store_append(bench_slot_t *slot) {
  bench_store_t *bs = slot->driver->ctx;
  fleet_bytes_t ev = {bs->event, sizeof(bs->event)};
  return fleet_store_events_append(&bs->store, bs->coll, bench_store_id(bs),
                                   &ev, 1, bench_store_counted, slot);
}

static void bench_store_on_clear(fleet_store_t *store, int status, uint64_t n,
                                 void *arg) {
  bench_store_t *bs = arg;
  bs->cleared = 1;
  bs->clear_status = status;
  bs->clear_n = n;
}

/* Runs one phase: `start` with 50 in flight for the time budget (at most
 * `max_ops` operations). When `label` is not NULL, emits its rates and
 * latencies. Returns 0 or the first error. */
static int bench_store_phase(uv_loop_t *loop, bench_store_t *bs,
                             int (*start)(bench_slot_t *), const char *label,
                             uint64_t max_ops, double seconds, int pid) {
  bench_driver_t d;
  bench_cpu_t a, b;
  int err;

  memset(&d, 0, sizeof(d));
  d.loop = loop;
  d.inflight = BENCH_STORE_INFLIGHT;
  d.max_ops = max_ops;
  d.seconds = seconds;
  d.start = start;
  d.ctx = bs;
  bs->next = 0;
  bench_cpu_sample(&a, pid);
  err = bench_drive(&d);
  bench_cpu_sample(&b, pid);
  if (err == 0 && label != NULL) {
    bench_emit_rates("store", label, d.done, &a, &b);
    bench_lat_emit("store", label, &d.lat);
  }
  bench_lat_free(&d.lat);
  return err;
}

int bench_store(const bench_opts_t *o) {
  static bench_store_t bs;
  static const struct {
    int (*start)(bench_slot_t *);
    const char *label;
    int plain;
  } phases[] = {{bench_store_put, "put_c50", 0},
                {bench_store_get, "get_c50", 0},
                {bench_store_append, "append_c50", 0},
                {bench_store_put, NULL, 1},
                {bench_store_put, "put_plain_c50", 1},
                {bench_store_append, "append_plain_c50", 1}};
  fleet_store_options_t so;
  fleet_client_t client;
  uint64_t t0;
  uv_loop_t loop;
  size_t i;
  int pid, err;

  if (o->argc > 0) {
    fprintf(stderr, "fleet-bench store: unknown flag '%s'\n", o->argv[0]);
    return 2;
  }
  memset(&bs, 0, sizeof(bs));
  for (i = 0; i < BENCH_STORE_IDS; i++)
    snprintf(bs.ids[i], sizeof(bs.ids[i]), "r%zu", i);
  memset(bs.value, 'v', sizeof(bs.value));
  memset(bs.event, 'e', sizeof(bs.event));
  bs.ix.name = "agent";
  bs.ix.value = (fleet_bytes_t){"bench", 5};
  bs.po.indexes = &bs.ix;
  bs.po.nindexes = 1;

  uv_loop_init(&loop);
  if (bench_client_open(&loop, &client, o) != 0)
    return 1;
  fleet_store_options_init(&so);
  so.max_events = BENCH_STORE_MAX_EVENTS;
  err = fleet_store_init(&client, &bs.store, &so);
  if (err != 0) {
    fprintf(stderr, "fleet-bench store: %s\n", fleet_strerror(err));
    bench_client_close(&loop, &client);
    return 1;
  }
  pid = bench_server_pid(o->url);

  /* Every record exists before the measured phases (not measured); the
   * unlabelled phase does the same for the records without index entries. */
  bs.coll = bench_store_coll;
  bs.cur_po = &bs.po;
  err = bench_store_phase(&loop, &bs, bench_store_put, NULL, BENCH_STORE_IDS,
                          60, pid);
  for (i = 0; err == 0 && i < sizeof(phases) / sizeof(phases[0]); i++) {
    bs.coll = phases[i].plain ? bench_store_plain : bench_store_coll;
    bs.cur_po = phases[i].plain ? &bs.po_plain : &bs.po;
    err =
        bench_store_phase(&loop, &bs, phases[i].start, phases[i].label,
                          phases[i].label != NULL ? 10000000 : BENCH_STORE_IDS,
                          phases[i].label != NULL ? o->seconds : 60, pid);
  }
  if (err != 0)
    fprintf(stderr, "fleet-bench store: %s\n", fleet_strerror(err));

  /* Removes everything the run wrote, timed. */
  t0 = uv_hrtime();
  if (fleet_store_clear(&bs.store, bench_store_on_clear, &bs) == 0) {
    while (!bs.cleared)
      uv_run(&loop, UV_RUN_ONCE);
    if (bs.clear_status == 0)
      bench_emit("store", "clear_keys_per_s",
                 (double)bs.clear_n * 1e9 / (double)(uv_hrtime() - t0 + 1),
                 "keys/s");
    else
      fprintf(stderr, "fleet-bench store: clear: %s\n",
              fleet_strerror(bs.clear_status));
  }
  bs.store.data = &bs;
  fleet_store_close(&bs.store, bench_store_on_closed);
  while (!bs.closed)
    uv_run(&loop, UV_RUN_ONCE);
  bench_client_close(&loop, &client);
  uv_loop_close(&loop);
  return err != 0;
}
