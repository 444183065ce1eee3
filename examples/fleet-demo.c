/* fleet-demo.c -- the demo program: a libuv process that embeds fleet.
 *
 *   fleet-demo [--url URL] [--prefix P] ping [--count N]
 *
 * Global options: --url (default memory://) and --prefix (default fleet).
 * Exits non-zero with a one-line error on stderr for a bad URL, a backend
 * that cannot be reached within the connect timeout, or bad flags. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"

typedef struct {
  const char *url;
  const char *prefix;
  int argc;
  char **argv;
} demo_args_t;

typedef struct {
  uv_loop_t *loop;
  fleet_client_t client;
  int status; /* exit status */
  long count, sent, done;
  int ready; /* the client was ready at least once */
  uint64_t started_ns;
  uint64_t server_us;
} demo_ping_t;

static void demo_fail(const char *what, int err) {
  fprintf(stderr, "fleet-demo: %s: %s (%s)\n", what, fleet_strerror(err),
          fleet_err_name(err));
}

/* Parses a positive count; returns -1 when it is not one. */
static long demo_count(const char *s) {
  char *end;
  long v = strtol(s, &end, 10);
  return (*s != '\0' && *end == '\0' && v > 0) ? v : -1;
}

static void demo_on_close(fleet_client_t *client) {}

static void demo_finish(demo_ping_t *d, int status) {
  if (d->status == 0)
    d->status = status;
  if (fleet_client_state(&d->client) != FLEET_CLIENT_CLOSED)
    fleet_client_close(&d->client, demo_on_close);
}

/* A connection attempt failed before the client was ever ready: the
 * backend is unreachable, so say why and stop. */
static void demo_on_state(fleet_client_t *client, fleet_client_state_t state,
                          int status) {
  demo_ping_t *d = client->data;
  if (state == FLEET_CLIENT_READY)
    d->ready = 1;
  if (state == FLEET_CLIENT_RECONNECTING && !d->ready) {
    demo_fail("cannot reach the backend", status);
    demo_finish(d, 1);
  }
}

static void demo_on_ping(fleet_client_t *client, int status, void *arg) {
  demo_ping_t *d = client->data;

  if (status == FLEET_ECANCELED)
    return;
  if (status != 0) {
    demo_fail("ping", status);
    demo_finish(d, 1);
    return;
  }
  if (++d->done == d->count) {
    double secs = (double)(uv_hrtime() - d->started_ns) / 1e9;
    printf("%ld pings in %.3f s (%.0f/s); backend clock %llu.%06llu\n", d->done,
           secs, (double)d->done / secs,
           (unsigned long long)(d->server_us / 1000000),
           (unsigned long long)(d->server_us % 1000000));
    demo_finish(d, 0);
    return;
  }
  if (d->sent < d->count && fleet_client_ping(client, demo_on_ping, NULL) == 0)
    d->sent++;
}

static void demo_on_time(fleet_client_t *client, int status, uint64_t unix_us,
                         void *arg) {
  demo_ping_t *d = client->data;
  long i;

  if (status == FLEET_ECANCELED)
    return;
  if (status != 0) {
    demo_fail("time", status);
    demo_finish(d, 1);
    return;
  }
  d->server_us = unix_us;
  d->started_ns = uv_hrtime();
  /* Keep up to 64 pings in flight. */
  for (i = 0; i < 64 && d->sent < d->count; i++) {
    int err = fleet_client_ping(client, demo_on_ping, NULL);
    if (err != 0) {
      demo_fail("ping", err);
      demo_finish(d, 1);
      return;
    }
    d->sent++;
  }
}

static int demo_ping(const demo_args_t *a) {
  fleet_client_options_t opts;
  demo_ping_t d;
  int i, err;

  memset(&d, 0, sizeof(d));
  d.count = 1000;
  for (i = 0; i < a->argc; i++) {
    if (strcmp(a->argv[i], "--count") == 0 && i + 1 < a->argc &&
        (d.count = demo_count(a->argv[++i])) > 0)
      continue;
    fprintf(stderr, "fleet-demo: ping: bad flag '%s'\n", a->argv[i]);
    return 2;
  }
  d.loop = uv_default_loop();
  fleet_client_options_init(&opts);
  opts.prefix = a->prefix;
  opts.state_cb = demo_on_state;
  d.client.data = &d;
  err = fleet_client_init(d.loop, &d.client, a->url, &opts);
  if (err != 0) {
    demo_fail(a->url, err);
    return 1;
  }
  err = fleet_client_time(&d.client, demo_on_time, NULL);
  if (err != 0) {
    demo_fail("time", err);
    demo_finish(&d, 1);
  }
  uv_run(d.loop, UV_RUN_DEFAULT);
  uv_loop_close(d.loop);
  return d.status;
}

static const struct {
  const char *name;
  int (*run)(const demo_args_t *a);
  const char *usage;
} demo_commands[] = {
    {"ping", demo_ping, "ping [--count N]   round trips to the backend"},
};

static int demo_usage(void) {
  size_t i;
  fprintf(stderr, "usage: fleet-demo [--url URL] [--prefix P] COMMAND ...\n");
  for (i = 0; i < sizeof(demo_commands) / sizeof(demo_commands[0]); i++)
    fprintf(stderr, "  %s\n", demo_commands[i].usage);
  return 2;
}

int main(int argc, char **argv) {
  demo_args_t a = {"memory://", "fleet", 0, NULL};
  size_t j;
  int i;

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
  fprintf(stderr, "fleet-demo: unknown command '%s'\n", argv[i]);
  return demo_usage();
}
