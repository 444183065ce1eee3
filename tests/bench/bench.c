/* bench.c -- what every fleet-bench subcommand shares. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <hiredis/hiredis.h>

#include "bench.h"
#include "core/internal.h"

void bench_emit(const char *bench, const char *metric, double value,
                const char *unit) {
  printf("{\"bench\":\"fleet-%s\",\"metric\":\"%s\",\"value\":%.3f,"
         "\"unit\":\"%s\"}\n",
         bench, metric, value, unit);
  fflush(stdout);
}

typedef struct {
  int done;
  int status;
} bench_wait_t;

static void bench_on_state(fleet_client_t *c, fleet_client_state_t state,
                           int status) {
  bench_wait_t *w = c->data;
  if (w == NULL || w->done)
    return;
  if (state == FLEET_CLIENT_READY || state == FLEET_CLIENT_RECONNECTING) {
    w->done = 1;
    w->status = state == FLEET_CLIENT_READY ? 0 : status;
  }
}

int bench_client_open(uv_loop_t *loop, fleet_client_t *client,
                      const bench_opts_t *o) {
  fleet_client_options_t opts;
  bench_wait_t w = {0, 0};
  int err;

  fleet_client_options_init(&opts);
  opts.prefix = o->prefix;
  opts.state_cb = bench_on_state;
  opts.command_timeout_ms = 30000;
  client->data = &w;
  err = fleet_client_init(loop, client, o->url, &opts);
  if (err != 0) {
    fprintf(stderr, "fleet-bench: %s: %s\n", o->url, fleet_strerror(err));
    return err;
  }
  while (!w.done)
    uv_run(loop, UV_RUN_ONCE);
  client->data = NULL;
  if (w.status != 0) {
    fprintf(stderr, "fleet-bench: cannot reach %s: %s\n", o->url,
            fleet_strerror(w.status));
    bench_client_close(loop, client);
  }
  return w.status;
}

void bench_client_close(uv_loop_t *loop, fleet_client_t *client) {
  fleet_client_close(client, NULL);
  uv_run(loop, UV_RUN_DEFAULT);
}

/* The connection INFO goes over, kept for the life of the process so that
 * sampling costs the server one command and no connection setup. */
static redisContext *bench_info_conn;

static void bench_info_disconnect(void) {
  redisFree(bench_info_conn);
  bench_info_conn = NULL;
}

/* The value of `field` in the INFO `section`, or -1 when there is no
 * connection or no such field. Every field of an INFO reply follows a
 * newline, so "\n<field>:" never matches a longer name. */
static double bench_info_field(const char *section, const char *field) {
  char key[64];
  redisReply *r;
  const char *p;
  double v = -1;

  if (bench_info_conn == NULL)
    return -1;
  r = redisCommand(bench_info_conn, "INFO %s", section);
  snprintf(key, sizeof(key), "\n%s:", field);
  if (r != NULL && r->type == REDIS_REPLY_STRING &&
      (p = strstr(r->str, key)) != NULL)
    v = atof(p + strlen(key));
  if (r != NULL)
    freeReplyObject(r);
  return v;
}

/* Opens bench_info_conn to the server behind `url`; leaves it NULL on
 * memory:// or when the server cannot be reached. */
static void bench_info_connect(const char *url) {
  fleet__url_t u;
  redisContext *c;
  redisReply *r;

  if (fleet__url_parse(url, &u) != 0 || u.scheme == FLEET__URL_MEMORY)
    goto out;
  c = u.scheme == FLEET__URL_UNIX ? redisConnectUnix(u.path)
                                  : redisConnect(u.host, u.port);
  if (c == NULL || c->err) {
    redisFree(c);
    goto out;
  }
  if (u.password != NULL) {
    r = u.user != NULL ? redisCommand(c, "AUTH %s %s", u.user, u.password)
                       : redisCommand(c, "AUTH %s", u.password);
    if (r != NULL)
      freeReplyObject(r);
  }
  bench_info_conn = c;
  atexit(bench_info_disconnect);
out:
  fleet__url_free(&u);
}

int bench_server_pid(const char *url) {
  double pid;

  if (bench_info_conn == NULL)
    bench_info_connect(url);
  pid = bench_info_field("server", "process_id");
  return pid > 0 ? (int)pid : 0;
}

/* Sums the calls of INFO commandstats into `scripts` (fcall, evalsha, eval) and
 * `commands` (the rest, but info and config); both -1 when unknown. Each
 * line reads "cmdstat_<name>:calls=<n>,...". */
static void bench_commandstats(int64_t *scripts, int64_t *commands,
                               char **stats) {
  redisReply *r;
  const char *p;
  int64_t calls;

  *scripts = *commands = -1;
  if (bench_info_conn == NULL)
    return;
  r = redisCommand(bench_info_conn, "INFO commandstats");
  if (r != NULL && r->type == REDIS_REPLY_STRING) {
    *scripts = *commands = 0;
    if (stats != NULL && getenv("FLEET_BENCH_CMDSTATS") != NULL)
      *stats = strdup(r->str);
    for (p = strstr(r->str, "cmdstat_"); p != NULL;
         p = strstr(p + 1, "cmdstat_")) {
      const char *name = p + 8, *c = strstr(name, ":calls=");
      if (c == NULL)
        break;
      calls = atoll(c + 7);
      if (strncmp(name, "evalsha:", 8) == 0 || strncmp(name, "eval:", 5) == 0 ||
          strncmp(name, "fcall:", 6) == 0)
        *scripts += calls;
      else if (strncmp(name, "info:", 5) != 0 &&
               strncmp(name, "config|", 7) != 0)
        *commands += calls;
    }
  }
  if (r != NULL)
    freeReplyObject(r);
}

/* FLEET_BENCH_HOOK (tests/bench/instr.sh): a command run, and waited for,
 * at every sample ("<hook> sample") and at every emitted measurement
 * ("<hook> emit <label> <ops>"), before the sample's own reading. */
static void bench_hook(const char *what, const char *label, uint64_t ops) {
  const char *hook = getenv("FLEET_BENCH_HOOK");
  char cmd[512];

  if (hook == NULL || *hook == '\0')
    return;
  if (label == NULL)
    snprintf(cmd, sizeof(cmd), "%s %s", hook, what);
  else
    snprintf(cmd, sizeof(cmd), "%s %s %s %" PRIu64, hook, what, label, ops);
  if (system(cmd) != 0)
    fprintf(stderr, "fleet-bench: FLEET_BENCH_HOOK failed: %s\n", cmd);
}

void bench_cpu_sample(bench_cpu_t *s, int server_pid) {
  struct rusage ru;
  double sys, user;

  if (server_pid > 0)
    bench_hook("sample", NULL, 0);
  getrusage(RUSAGE_SELF, &ru);
  s->stats = NULL;
  s->self_us = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
               (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
  s->server_us = -1;
  if (server_pid > 0) {
    sys = bench_info_field("cpu", "used_cpu_sys");
    user = bench_info_field("cpu", "used_cpu_user");
    if (sys >= 0 && user >= 0)
      s->server_us = (int64_t)((sys + user) * 1e6 + 0.5);
    bench_commandstats(&s->scripts, &s->commands, &s->stats);
  } else {
    s->scripts = s->commands = -1;
  }
  s->wall_ns = uv_hrtime();
}

/* The calls and usec of command `name` ("cmdstat_<name>:calls=..,usec=..")
 * in INFO commandstats text `t`; 0 when absent. */
static void bench_cmdstat(const char *t, const char *name, size_t len,
                          double *calls, double *usec) {
  const char *p = t;

  *calls = *usec = 0;
  while ((p = strstr(p, "cmdstat_")) != NULL) {
    p += 8;
    if (strncmp(p, name, len) == 0 && p[len] == ':') {
      const char *c = strstr(p, "calls="), *u = strstr(p, "usec=");
      if (c != NULL)
        *calls = atof(c + 6);
      if (u != NULL)
        *usec = atof(u + 5);
      return;
    }
  }
}

/* FLEET_BENCH_CMDSTATS: each command's calls and usec per op between two
 * samples, on stderr. */
static void bench_cmdstats_diff(const char *label, uint64_t ops, const char *a,
                                const char *b) {
  const char *p = b;

  while ((p = strstr(p, "cmdstat_")) != NULL) {
    const char *name = p + 8, *colon = strchr(name, ':');
    double c0, u0, c1, u1;
    size_t len;

    if (colon == NULL)
      break;
    len = (size_t)(colon - name);
    bench_cmdstat(a, name, len, &c0, &u0);
    bench_cmdstat(b, name, len, &c1, &u1);
    if (c1 > c0)
      fprintf(stderr, "cmdstats %s %.*s calls/op %.4f usec/op %.4f\n", label,
              (int)len, name, (c1 - c0) / (double)ops, (u1 - u0) / (double)ops);
    p = colon;
  }
}

int64_t bench_server_memory(int server_pid) {
  return server_pid > 0 ? (int64_t)bench_info_field("memory", "used_memory")
                        : -1;
}

void bench_emit_rates(const char *bench, const char *label, uint64_t ops,
                      const bench_cpu_t *a, const bench_cpu_t *b) {
  char metric[128];
  double secs = (double)(b->wall_ns - a->wall_ns) / 1e9;

  if (ops == 0 || secs <= 0)
    return;
  snprintf(metric, sizeof(metric), "%s_ops_per_s", label);
  bench_emit(bench, metric, (double)ops / secs, "ops/s");
  snprintf(metric, sizeof(metric), "%s_client_cpu_us_per_op", label);
  bench_emit(bench, metric, (double)(b->self_us - a->self_us) / (double)ops,
             "us/op");
  if (a->server_us >= 0 && b->server_us >= 0) {
    snprintf(metric, sizeof(metric), "%s_server_cpu_us_per_op", label);
    bench_emit(bench, metric,
               (double)(b->server_us - a->server_us) / (double)ops, "us/op");
  }
  if (a->stats != NULL && b->stats != NULL)
    bench_cmdstats_diff(label, ops, a->stats, b->stats);
  if (a->server_us >= 0 && b->server_us >= 0)
    bench_hook("emit", label, ops);
  if (a->scripts >= 0 && b->scripts >= a->scripts) {
    snprintf(metric, sizeof(metric), "%s_scripts_per_op", label);
    bench_emit(bench, metric, (double)(b->scripts - a->scripts) / (double)ops,
               "calls/op");
    snprintf(metric, sizeof(metric), "%s_commands_per_op", label);
    bench_emit(bench, metric, (double)(b->commands - a->commands) / (double)ops,
               "calls/op");
  }
}

void bench_lat_add(bench_lat_t *l, uint64_t ns) {
  if (l->n == l->cap) {
    size_t cap = l->cap > 0 ? l->cap * 2 : 4096;
    uint64_t *p = realloc(l->ns, cap * sizeof(*p));
    if (p == NULL)
      return; /* a sample lost under memory pressure skews nothing much */
    l->ns = p;
    l->cap = cap;
  }
  l->ns[l->n++] = ns;
}

static int bench_cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

double bench_lat_pct_us(bench_lat_t *l, double p) {
  size_t i;

  if (l->n == 0)
    return 0;
  qsort(l->ns, l->n, sizeof(*l->ns), bench_cmp_u64);
  i = (size_t)(p / 100.0 * (double)l->n);
  if (i >= l->n)
    i = l->n - 1;
  return (double)l->ns[i] / 1000.0;
}

void bench_lat_emit(const char *bench, const char *label, bench_lat_t *l) {
  char metric[128];

  snprintf(metric, sizeof(metric), "%s_p50_us", label);
  bench_emit(bench, metric, bench_lat_pct_us(l, 50), "us");
  snprintf(metric, sizeof(metric), "%s_p99_us", label);
  bench_emit(bench, metric, bench_lat_pct_us(l, 99), "us");
  l->n = 0;
}

void bench_lat_free(bench_lat_t *l) {
  free(l->ns);
  l->ns = NULL;
  l->n = l->cap = 0;
}

long bench_parse_long(const char *flag, const char *value) {
  char *end;
  long v = value != NULL ? strtol(value, &end, 10) : 0;

  if (value == NULL || *value == '\0' || *end != '\0' || v <= 0) {
    fprintf(stderr, "fleet-bench: %s wants a positive integer\n", flag);
    exit(2);
  }
  return v;
}

/* Starts the next operation in `slot` if the budget allows. */
static void bench_slot_next(bench_slot_t *slot) {
  bench_driver_t *d = slot->driver;
  int err;

  if (d->first_error != 0 || d->started >= d->max_ops ||
      uv_hrtime() >= d->deadline_ns)
    return;
  d->started++;
  slot->t0 = uv_hrtime();
  err = d->start(slot);
  if (err != 0) {
    d->started--;
    if (d->first_error == 0)
      d->first_error = err;
  }
}

void bench_slot_done(bench_slot_t *slot, int status) {
  bench_driver_t *d = slot->driver;

  bench_lat_add(&d->lat, uv_hrtime() - slot->t0);
  d->done++;
  if (status != 0) {
    d->failed++;
    if (d->first_error == 0)
      d->first_error = status;
  }
  bench_slot_next(slot);
}

int bench_drive(bench_driver_t *d) {
  int i;

  d->slots = calloc((size_t)d->inflight, sizeof(*d->slots));
  if (d->slots == NULL)
    return FLEET_ENOMEM;
  d->started = d->done = d->failed = 0;
  d->first_error = 0;
  d->deadline_ns = uv_hrtime() + (uint64_t)(d->seconds * 1e9);
  for (i = 0; i < d->inflight; i++) {
    d->slots[i].driver = d;
    d->slots[i].index = i;
    bench_slot_next(&d->slots[i]);
  }
  while (d->done < d->started)
    uv_run(d->loop, UV_RUN_ONCE);
  free(d->slots);
  d->slots = NULL;
  return d->first_error;
}
