/* bench_cron.c -- fleet-bench cron: N definitions due at the same instant
 * on 3 schedulers of one namespace (3 clients on one loop, as 3 nodes'
 * worth of connections; each scheduler sends every occurrence and one
 * gets it). The shape is 10 000 definitions due every minute; a
 * minute per round is too slow for a bench run, so each definition is
 * "@every <period>" (default 5s, --every to change it: "@every 1m" is the
 * issue's). After one warm-up round, --rounds rounds (default 3) are
 * measured: fires per second, client and server CPU per occurrence (the
 * client's covers the 3 schedulers: every node's claim attempts, the
 * registry copy, the timers), and lateness p50/p99 (the wall clock at the
 * fire callback minus the scheduled time; this machine's clock is the
 * server's). Flags: --defs N (default 10000), --every D, --rounds R,
 * --claim-ahead MS (the schedulers' claim_ahead_ms; default theirs, 1000;
 * 0 claims each occurrence when it is due). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "bench.h"

#define CRON_NODES 3

typedef struct {
  uv_loop_t *loop;
  fleet_client_t c[CRON_NODES];
  fleet_cron_scheduler_t s[CRON_NODES];
  int defined, define_errors, first_error;
  uint64_t fired;
  int measuring;
  bench_lat_t lat;
  int closed;
} cron_bench_t;

static int64_t wall_us(void) {
  struct timeval tv;

  gettimeofday(&tv, NULL);
  return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

static void on_defined(fleet_handle_t *h, int status, void *arg) {
  cron_bench_t *b = arg;

  (void)h;
  b->defined++;
  if (status != 0) {
    b->define_errors++;
    if (b->first_error == 0)
      b->first_error = status;
  }
}

static void on_fire(fleet_cron_scheduler_t *s, fleet_cron_fire_t *fire) {
  cron_bench_t *b = s->data;
  int64_t late = wall_us() - fire->fire_ms * 1000;

  b->fired++;
  if (b->measuring)
    bench_lat_add(&b->lat, late > 0 ? (uint64_t)late * 1000 : 0);
  fleet_cron_complete(fire, NULL);
}

static void on_error(fleet_handle_t *h, int status, const char *detail) {
  (void)h;
  fprintf(stderr, "fleet-bench cron: %s (%s)\n", fleet_err_name(status),
          detail);
}

static void on_closed(fleet_handle_t *h) {
  ((cron_bench_t *)h->data)->closed++;
}

static void on_state(fleet_client_t *c, fleet_client_state_t state,
                     int status) {
  (void)status;
  if (state == FLEET_CLIENT_READY)
    *(int *)c->data = 1;
}

/* Opens node k's client: on memory://, sharing the first one's store. */
static int open_client(cron_bench_t *b, int k, const bench_opts_t *o) {
  fleet_client_options_t opts;
  int ready = 0, err;

  if (k == 0 || strncmp(o->url, "memory:", 7) != 0)
    return bench_client_open(b->loop, &b->c[k], o);
  fleet_client_options_init(&opts);
  opts.prefix = o->prefix;
  opts.state_cb = on_state;
  opts.memory_peer = &b->c[0];
  b->c[k].data = &ready;
  if ((err = fleet_client_init(b->loop, &b->c[k], o->url, &opts)) != 0)
    return err;
  while (!ready)
    uv_run(b->loop, UV_RUN_ONCE);
  b->c[k].data = NULL;
  return 0;
}

static void on_stop_timer(uv_timer_t *t) {
  uv_stop(t->loop);
}

/* Runs the loop for `ms`, idle in between (the client CPU measured is
 * fleet's, not a polling loop's). */
static void run_for(uv_loop_t *loop, uint64_t ms) {
  uv_timer_t t;

  uv_timer_init(loop, &t);
  uv_timer_start(&t, on_stop_timer, ms, 0);
  uv_run(loop, UV_RUN_DEFAULT);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(loop, UV_RUN_NOWAIT);
}

/* Runs the loop until the wall clock passes the next multiple of
 * `period_ms` plus `extra_ms`. */
static void run_to_boundary(uv_loop_t *loop, int64_t period_ms,
                            int64_t extra_ms) {
  int64_t now = wall_us() / 1000;
  int64_t next = (now / period_ms + 1) * period_ms + extra_ms;

  run_for(loop, (uint64_t)(next - now));
}

/* The period of "@every <d>" in ms, for the simple forms (Ns, Nm). */
static int64_t every_ms(const char *d) {
  char *end;
  long v = strtol(d, &end, 10);

  if (v <= 0)
    return -1;
  if (strcmp(end, "s") == 0)
    return v * 1000;
  if (strcmp(end, "m") == 0)
    return v * 60000;
  return -1;
}

int bench_cron(const bench_opts_t *o) {
  static cron_bench_t b;
  fleet_cron_scheduler_options_t so;
  const char *every = "5s";
  long ndefs = 10000, rounds = 3, ahead = -1, i;
  int64_t period;
  char expr[64], key[32];
  bench_cpu_t t0, t1;
  int pid, k, err;
  uint64_t fired0;

  for (i = 0; i < o->argc; i++) {
    if (strcmp(o->argv[i], "--defs") == 0 && i + 1 < o->argc)
      ndefs = bench_parse_long("--defs", o->argv[++i]);
    else if (strcmp(o->argv[i], "--every") == 0 && i + 1 < o->argc)
      every = o->argv[++i];
    else if (strcmp(o->argv[i], "--rounds") == 0 && i + 1 < o->argc)
      rounds = bench_parse_long("--rounds", o->argv[++i]);
    else if (strcmp(o->argv[i], "--claim-ahead") == 0 && i + 1 < o->argc)
      ahead = strcmp(o->argv[++i], "0") == 0
                  ? 0
                  : bench_parse_long("--claim-ahead", o->argv[i]);
    else {
      fprintf(stderr, "fleet-bench cron: bad flag '%s'\n", o->argv[i]);
      return 2;
    }
  }
  if ((period = every_ms(every)) < 0 || ndefs > 1000000 || rounds > 100 ||
      ahead > 60000) {
    fprintf(stderr, "fleet-bench cron: --every wants <N>s or <N>m; --defs at "
                    "most 1000000; --rounds at most 100; --claim-ahead at "
                    "most 60000\n");
    return 2;
  }
  snprintf(expr, sizeof(expr), "@every %s", every);
  memset(&b, 0, sizeof(b));
  b.loop = uv_default_loop();
  pid = bench_server_pid(o->url);
  fleet_cron_scheduler_options_init(&so);
  so.error_cb = on_error;
  so.keep_count = 10;
  /* A loaded machine may stall a round for seconds: that must show as
   * lateness here, not as occurrences skipped by the catch-up policy. */
  so.grace_ms = 60000;
  if (ahead >= 0)
    so.claim_ahead_ms = (uint32_t)ahead;
  for (k = 0; k < CRON_NODES; k++) {
    char node[16];

    if ((err = open_client(&b, k, o)) != 0)
      return 1;
    snprintf(node, sizeof(node), "node%d", k);
    b.s[k].data = &b;
    if ((err = fleet_cron_scheduler_init(&b.c[k], &b.s[k], "bench", node,
                                         &so)) != 0) {
      fprintf(stderr, "fleet-bench cron: init: %s\n", fleet_strerror(err));
      return 1;
    }
  }
  /* Define them all, 500 in flight at most. */
  for (i = 0; i < ndefs; i++) {
    fleet_cron_def_t d;

    fleet_cron_def_init(&d);
    snprintf(key, sizeof(key), "d%ld", i);
    d.key = key;
    d.expr = expr;
    d.payload.base = "x";
    d.payload.len = 1;
    err = fleet_cron_define(&b.s[0], &d, FLEET_CRON_UPSERT, NULL, 0, on_defined,
                            &b);
    if (err != 0) {
      fprintf(stderr, "fleet-bench cron: define: %s\n", fleet_strerror(err));
      return 1;
    }
    while (i + 1 - b.defined >= 500)
      uv_run(b.loop, UV_RUN_ONCE);
  }
  while (b.defined < ndefs)
    uv_run(b.loop, UV_RUN_ONCE);
  if (b.define_errors > 0) {
    fprintf(stderr, "fleet-bench cron: %d defines failed: %s\n",
            b.define_errors, fleet_strerror(b.first_error));
    return 1;
  }
  for (k = 0; k < CRON_NODES; k++)
    fleet_cron_scheduler_start(&b.s[k], on_fire);
  /* Warm-up: the registry loads, one round fires. */
  run_to_boundary(b.loop, period, period / 2);
  bench_cpu_sample(&t0, pid);
  fired0 = b.fired;
  b.measuring = 1;
  for (i = 0; i < rounds; i++)
    run_to_boundary(b.loop, period, period / 2);
  b.measuring = 0;
  bench_cpu_sample(&t1, pid);
  printf("# %ld definitions \"%s\" on %d schedulers, %ld rounds, claimed "
         "up to %u ms ahead: %" PRIu64 " fires (expected %ld)\n",
         ndefs, expr, CRON_NODES, rounds, (unsigned)so.claim_ahead_ms,
         b.fired - fired0, ndefs * rounds);
  bench_emit_rates("cron", "fire", b.fired - fired0, &t0, &t1);
  bench_lat_emit("cron", "lateness", &b.lat);
  bench_lat_free(&b.lat);
  for (k = 0; k < CRON_NODES; k++)
    fleet_cron_scheduler_close(&b.s[k], on_closed);
  while (b.closed < CRON_NODES)
    uv_run(b.loop, UV_RUN_ONCE);
  /* The peers first: the first client holds the memory store. */
  for (k = CRON_NODES - 1; k >= 0; k--)
    fleet_client_close(&b.c[k], NULL);
  uv_run(b.loop, UV_RUN_DEFAULT);
  return 0;
}
