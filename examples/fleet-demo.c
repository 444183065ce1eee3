/* fleet-demo.c -- the async demo worker: a libuv program that embeds fleet
 * and runs a durable job queue on it.
 *
 *   fleet-demo [--url URL] [--prefix P] COMMAND [flags]
 *
 *   run      --jobs N --concurrency C --work-ms MS [--queue Q]
 *   worker   --queue Q --concurrency C --work-ms MS [--fail-every K]
 *            [--ledger FILE] [--ledger-times FILE] [--claim-ttl-ms MS]
 *            [--heartbeat-ms MS] [--ledger-flows FILE] [--progress-steps K]
 *            [--result] [--ledger-cancel FILE] [--ignore-cancel]
 *   enqueue  --queue Q --count N [--size BYTES] [--type T] [--delay-ms MS]
 *            [--priority P] [--max-attempts A] [--group G]
 *            [--unique-key K [--unique-until-done] [--unique-ttl-ms MS]]
 *            [--timeout-ms MS]
 *   stats    --queue Q
 *   flow     --queue Q --children N [--child-queue Q2] [--max-attempts A]
 *            [--priority P] [--ignore-child-death] (examples/demo_flow.c)
 *   ping     [--count N]
 *   pool     node|dispatch|notify|stop-job|status|shutdown|ticker|
 *            schedule ...
 *            (examples/demo_pool.c)
 *   cron     next --expr E [--tz Z] [--from ISO8601] [--count N]
 *            (examples/demo_cron.c); the scheduler verbs
 *            (examples/demo_cron_sched.c)
 *   warmpool node|acquire|resize|drain|snapshot ...
 *            (examples/demo_warmpool.c)
 *
 * Global options: --url (default $FLEET_URL, else $REDIS_URL, else
 * memory://; a --url shows in `ps` with its password, the environment
 * does not) and --prefix (default fleet).
 * Exits non-zero with a one-line error on stderr for a bad URL, a backend
 * that cannot be reached within the connect timeout, or bad flags. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"

/* ------------------------------------------------------------------------ */
/* Shared helpers                                                           */

/* The client this process opened (one at most), for demo_fail(). */
static demo_client_t *demo_open_client;

/* Whether `err` says that no connection could be made. */
static int demo_connection_error(int err) {
  return err == FLEET_EAUTH || err == FLEET_EUNAVAILABLE ||
         err == FLEET_ECONNREFUSED || err == FLEET_ECONNLOST ||
         err == FLEET_ETIMEDOUT || err == FLEET_ERESOLVE || err == FLEET_ETLS ||
         err == FLEET_ENOPERM || err == FLEET_EBADDB;
}

int demo_unreachable(int err, const char *detail) {
  demo_client_t *c = demo_open_client;

  if (c == NULL || c->ready || !demo_connection_error(err))
    return 0;
  if (!c->failed) {
    c->failed = 1;
    fleet_escape_print(
        stderr, "fleet-demo: cannot reach the backend at %s: %s (%s)%s%s",
        c->url_shown, fleet_strerror(err), fleet_err_name(err),
        detail[0] != '\0' ? ": " : "", detail);
  }
  return 1;
}

void demo_fail(const char *what, int err) {
  if (demo_unreachable(err,
                       demo_open_client != NULL
                           ? fleet_client_last_error(&demo_open_client->client)
                           : ""))
    return;
  fleet_escape_print(stderr, "fleet-demo: %s: %s (%s)", what,
                     fleet_strerror(err), fleet_err_name(err));
}

void demo_fail_on(const fleet_client_t *client, const char *what, int err) {
  const char *detail = fleet_client_last_error(client);

  if (demo_unreachable(err, detail))
    return;
  if (detail[0] == '\0') {
    demo_fail(what, err);
    return;
  }
  fleet_escape_print(stderr, "fleet-demo: %s: %s (%s): %s", what,
                     fleet_strerror(err), fleet_err_name(err), detail);
}

int demo_int(const char *flag, const char *value, int64_t min, int64_t max,
             int64_t *out) {
  char *end;
  long long v = strtoll(value, &end, 10);

  if (*value == '\0' || *end != '\0' || v < min || v > max) {
    fleet_escape_print(
        stderr, "fleet-demo: %s wants an integer from %lld to %lld, not '%s'",
        flag, (long long)min, (long long)max, value);
    return 0;
  }
  *out = v;
  return 1;
}

int demo_flag(const demo_args_t *a, int *i, const char *flag) {
  if (strcmp(a->argv[*i], flag) != 0 || *i + 1 >= a->argc)
    return 0;
  (*i)++;
  return 1;
}

int demo_bad_flag(const char *cmd, const char *arg) {
  fleet_escape_print(stderr, "fleet-demo: %s: bad flag '%s'", cmd, arg);
  return 2;
}

/* A connection attempt failed before the client was ever ready: the
 * backend cannot be reached, so say why and stop. */
static void demo_on_state(fleet_client_t *client, fleet_client_state_t state,
                          int status) {
  demo_client_t *c = client->data;

  if (state == FLEET_CLIENT_READY && !c->ready) {
    c->ready = 1;
    if (c->on_ready != NULL)
      c->on_ready(c->arg);
  }
  if (state == FLEET_CLIENT_RECONNECTING && !c->ready && !c->gave_up) {
    c->gave_up = 1;
    if (!c->failed) {
      c->failed = 1;
      fleet_escape_print(
          stderr, "fleet-demo: cannot reach the backend at %s: %s (%s)%s%s",
          c->url_shown, fleet_strerror(status), fleet_err_name(status),
          fleet_client_last_error(client)[0] != '\0' ? ": " : "",
          fleet_client_last_error(client));
    }
    if (c->on_unreachable != NULL)
      c->on_unreachable(c->arg);
    /* Closing the client cancels the calls that wait for a connection, so
     * the handles closing above finish now instead of after the command
     * timeout. */
    demo_client_close(c);
  }
}

/* The client's log while it opens (a tls_verify=0 warning), one line
 * each; later messages are not printed, as the commands report what
 * fails. */
static int demo_opening;

static void demo_on_log(fleet_log_level_t level, const char *msg, void *data) {
  (void)data;
  if (demo_opening && level <= FLEET_LOG_WARN)
    fleet_escape_print(stderr, "fleet-demo: %s: %s",
                       fleet_log_level_name(level), msg);
}

int demo_client_open(demo_client_t *c, const demo_args_t *a) {
  fleet_client_options_t opts;
  int err;

  c->loop = uv_default_loop();
  c->ready = c->failed = c->gave_up = 0;
  c->on_ready = NULL;
  c->live = NULL;
  fleet_redact_url(a->url, c->url_shown, sizeof(c->url_shown));
  fleet_client_options_init(&opts);
  opts.prefix = a->prefix;
  opts.state_cb = demo_on_state;
  opts.log_cb = demo_on_log;
  c->client.data = c;
  demo_opening = 1;
  err = fleet_client_init(c->loop, &c->client, a->url, &opts);
  demo_opening = 0;
  if (err != 0) {
    char why[256] = "";

    fleet_client_url_check(a->url, why, sizeof(why));
    fleet_escape_print(stderr, "fleet-demo: %s: %s (%s)%s%s", c->url_shown,
                       fleet_strerror(err), fleet_err_name(err),
                       why[0] ? ": " : "", why);
    return 1;
  }
  demo_open_client = c;
  return 0;
}

void demo_client_close(demo_client_t *c) {
  if (c->live != NULL)
    demo_live_close(c->live);
  if (fleet_client_state(&c->client) != FLEET_CLIENT_CLOSED)
    fleet_client_close(&c->client, NULL);
}

/* ------------------------------------------------------------------------ */
/* ping                                                                     */

typedef struct {
  demo_client_t c;
  int status;
  long count, sent, done;
  uint64_t started_ns;
  uint64_t server_us;
} demo_ping_t;

static void demo_ping_finish(demo_ping_t *d, int status) {
  if (d->status == 0)
    d->status = status;
  demo_client_close(&d->c);
}

static void demo_on_ping(fleet_client_t *client, int status, void *arg) {
  demo_ping_t *d = arg;

  if (status == FLEET_ECANCELED)
    return;
  if (status != 0) {
    demo_fail_on(client, "ping", status);
    demo_ping_finish(d, 1);
    return;
  }
  if (++d->done == d->count) {
    double secs = (double)(uv_hrtime() - d->started_ns) / 1e9;
    printf("%ld pings in %.3f s (%.0f/s); backend clock %llu.%06llu\n", d->done,
           secs, (double)d->done / secs,
           (unsigned long long)(d->server_us / 1000000),
           (unsigned long long)(d->server_us % 1000000));
    demo_ping_finish(d, 0);
    return;
  }
  if (d->sent < d->count && fleet_client_ping(client, demo_on_ping, d) == 0)
    d->sent++;
}

static void demo_on_time(fleet_client_t *client, int status, uint64_t unix_us,
                         void *arg) {
  demo_ping_t *d = arg;
  long i;

  if (status == FLEET_ECANCELED)
    return;
  if (status != 0) {
    demo_fail_on(client, "time", status);
    demo_ping_finish(d, 1);
    return;
  }
  d->server_us = unix_us;
  d->started_ns = uv_hrtime();
  /* Keep up to 64 pings in flight. */
  for (i = 0; i < 64 && d->sent < d->count; i++) {
    int err = fleet_client_ping(client, demo_on_ping, d);
    if (err != 0) {
      demo_fail("ping", err);
      demo_ping_finish(d, 1);
      return;
    }
    d->sent++;
  }
}

static int demo_ping(const demo_args_t *a) {
  demo_ping_t d;
  int64_t v;
  int i, err;

  memset(&d, 0, sizeof(d));
  d.count = 1000;
  for (i = 0; i < a->argc; i++) {
    if (demo_flag(a, &i, "--count")) {
      if (!demo_int("--count", a->argv[i], 1, 100000000, &v))
        return 2;
      d.count = (long)v;
    } else {
      return demo_bad_flag("ping", a->argv[i]);
    }
  }
  if (demo_client_open(&d.c, a) != 0)
    return 1;
  err = fleet_client_time(&d.c.client, demo_on_time, &d);
  if (err != 0) {
    demo_fail("time", err);
    demo_ping_finish(&d, 1);
  }
  uv_run(d.c.loop, UV_RUN_DEFAULT);
  uv_loop_close(d.c.loop);
  return d.c.failed ? 1 : d.status;
}

/* ------------------------------------------------------------------------ */
/* main                                                                     */

static const struct {
  const char *name;
  int (*run)(const demo_args_t *a);
  const char *usage;
} demo_commands[] = {
    {"run", demo_run,
     "run --jobs N --concurrency C --work-ms MS [--queue Q]\n"
     "      produce N jobs and process them in this process (run and worker\n"
     "      keep the last 1000 completed jobs for the CLI and dashboard)"},
    {"worker", demo_worker,
     "worker --queue Q --concurrency C --work-ms MS [--fail-every K]\n"
     "      [--ledger FILE] [--ledger-times FILE] [--claim-ttl-ms MS]\n"
     "      [--heartbeat-ms MS] [--ledger-flows FILE] [--progress-steps K]\n"
     "      [--result] [--ledger-cancel FILE] [--ignore-cancel]\n"
     "      process jobs until SIGINT or SIGTERM; K progress reports per job\n"
     "      (\"<k>/<K>\" at k*100/K percent), and the result \"done:<id>\";\n"
     "      a job cancelled or at its run deadline is finished at once\n"
     "      (unless --ignore-cancel)"},
    {"enqueue", demo_enqueue,
     "enqueue --queue Q --count N [--size BYTES] [--type T] [--delay-ms MS]\n"
     "      [--priority P] [--max-attempts A] [--group G]\n"
     "      [--unique-key K [--unique-until-done] [--unique-ttl-ms MS]]\n"
     "      [--timeout-ms MS]\n"
     "      a job whose unique key is held is refused: one line naming\n"
     "      the key and its holder, exit 1 (--count defaults to 1 with a "
     "key);\n"
     "      --timeout-ms: each job's maximum run time, 1 ms or more"},
    {"stats", demo_stats, "stats --queue Q      job counts as JSON"},
    {"flow", demo_flow,
     "flow --queue Q --children N [--child-queue Q2] [--max-attempts A]\n"
     "      [--priority P] [--ignore-child-death]\n"
     "      enqueue one parent that runs after its N children; prints the\n"
     "      parent's id, then the children's"},
    {"ping", demo_ping, "ping [--count N]     round trips to the backend"},
    {"pool", demo_pool,
     "pool node --pool P --workers N [--node-id ID] [--ledger FILE]\n"
     "      [--work-ms MS] [--worker-ttl-ms MS] [--ack-grace-ms MS]\n"
     "      [--requeue-starts N] [--requeue-backoff-ms MS] [--max-requeues N]\n"
     "  pool dispatch --pool P --key K [--payload S]\n"
     "  pool notify --pool P --key K --payload S\n"
     "  pool stop-job --pool P --key K\n"
     "  pool status --pool P    workers and jobs as JSON\n"
     "  pool shutdown --pool P\n"
     "  pool ticker --pool P --name T --period-ms MS [--ledger FILE]\n"
     "  pool schedule --pool P --name S --interval-ms MS [--ledger FILE]\n"
     "      [--workers N] [--node-id ID]"},
    {"cron", demo_cron,
     "cron next --expr E [--tz Z] [--from ISO8601] [--count N]\n"
     "      the next N fire times after --from (default now), UTC\n"
     "  cron define|remove|enable|disable|list|history|run ...\n"
     "      the scheduler (examples/demo_cron_sched.c)"},
    {"warmpool", demo_warmpool,
     "warmpool node --pool P --root DIR --target N [--idle-ttl-ms MS]\n"
     "      [--warmup-ms MS] [--reconcile-ms MS] [--primary-ttl-ms MS]\n"
     "      [--warmup-timeout-ms MS] [--borrow-lease-ms MS] [--ledger FILE]\n"
     "      [--fingerprint S] [--node-id ID]\n"
     "  warmpool acquire --pool P --root DIR [--hold-ms MS] [--ledger FILE]\n"
     "  warmpool resize --pool P --target N\n"
     "  warmpool drain --pool P --root DIR\n"
     "  warmpool snapshot --pool P    state and counts as JSON"},
};

static int demo_usage(void) {
  size_t i;
  fprintf(stderr,
          "usage: fleet-demo [--url URL] [--prefix P] COMMAND ...\n"
          "  (URL default $FLEET_URL, else $REDIS_URL, else memory://;"
          "\n   --url shows in `ps`: prefer FLEET_URL for a password)\n");
  for (i = 0; i < sizeof(demo_commands) / sizeof(demo_commands[0]); i++)
    fprintf(stderr, "  %s\n", demo_commands[i].usage);
  fprintf(stderr,
          "  worker, pool node, warmpool node and cron run say on stderr\n"
          "  \"fleet-demo CMD: connected to URL, serving ...\" once serving,\n"
          "  then \"N done, N failed since start\" every 5 s: "
          "[--progress-ms MS]\n"
          "  (0: no progress lines) [--quiet] (neither)\n");
  return 2;
}

int main(int argc, char **argv) {
  demo_args_t a = {"memory://", "fleet", 0, NULL};
  size_t j;
  int i;

  /* Without --url: FLEET_URL, then REDIS_URL, then memory://. */
  if (fleet_url_from_env() != NULL)
    a.url = fleet_url_from_env();
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--url") == 0 && i + 1 < argc)
      a.url = argv[++i];
    else if (strcmp(argv[i], "--prefix") == 0 && i + 1 < argc)
      a.prefix = argv[++i];
    else
      break;
  }
  if (i >= argc)
    return demo_usage();
  for (j = 0; j < sizeof(demo_commands) / sizeof(demo_commands[0]); j++) {
    if (strcmp(argv[i], demo_commands[j].name) == 0) {
      a.argc = argc - i - 1;
      a.argv = argv + i + 1;
      return demo_commands[j].run(&a);
    }
  }
  fleet_escape_print(stderr, "fleet-demo: unknown command '%s'", argv[i]);
  return demo_usage();
}
