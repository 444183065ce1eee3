/* fleet-bench.c -- every fleet benchmark, one subcommand per primitive:
 *
 *   fleet-bench SUBCOMMAND [--url URL] [--prefix P] [--seconds S] ...
 *
 * against a backend the caller started. Results go to stdout as JSON
 * lines only; progress and errors to stderr. Every loop is bounded by a
 * count and by --seconds, so a run stops by itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static const struct {
  const char *name;
  int (*run)(const bench_opts_t *o);
  const char *what;
} bench_commands[] = {
    {"ping", bench_ping, "round trips with 1 and 50 in flight"},
    {"queue", bench_queue,
     "bulk enqueue, memory per job, process (unlimited, limited, 1000 "
     "groups), e2e latency, a rate limit held [--pending N] [--keep K] "
     "[--held-seconds S] [--life: results and events only] [--flow: flow "
     "control only] [--partitions P: plain vs P partitions]"},
    {"lock", bench_lock,
     "acquire + release, 1 and 50 in flight [--ttl MS] [--inflight N]"},
    {"store", bench_store, "put, get and event append, 50 in flight"},
    {"pool", bench_pool,
     "dispatch + start, 1 and 50 in flight; rebalance [--jobs N]"},
    {"cron", bench_cron,
     "N definitions due at once on 3 schedulers [--defs N] [--every D] "
     "[--claim-ahead MS]"},
    {"warmpool", bench_warmpool,
     "acquire + release, 1 and 50 in flight, pre-warmed [--idle N]"},
};

static int bench_usage(void) {
  size_t i;

  fprintf(stderr, "usage: fleet-bench SUBCOMMAND [--url URL] [--prefix P] "
                  "[--seconds S] [options]\n");
  for (i = 0; i < sizeof(bench_commands) / sizeof(bench_commands[0]); i++)
    fprintf(stderr, "  %-8s %s\n", bench_commands[i].name,
            bench_commands[i].what);
  return 2;
}

int main(int argc, char **argv) {
  static char prefix[64];
  bench_opts_t o;
  char **rest;
  size_t j;
  int i, n = 0;

  if (argc < 2)
    return bench_usage();
  snprintf(prefix, sizeof(prefix), "fleet-bench-%d", (int)getpid());
  o.url = "memory://";
  o.prefix = prefix;
  o.seconds = 2;
  rest = calloc((size_t)argc, sizeof(*rest));
  if (rest == NULL)
    return 1;
  for (i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--url") == 0 && i + 1 < argc)
      o.url = argv[++i];
    else if (strcmp(argv[i], "--prefix") == 0 && i + 1 < argc)
      o.prefix = argv[++i];
    else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc &&
             (o.seconds = atof(argv[++i])) > 0 && o.seconds <= 60)
      continue;
    else if (strcmp(argv[i], "--seconds") == 0) {
      fprintf(stderr, "fleet-bench: --seconds wants 0 < S <= 60\n");
      return 2;
    } else
      rest[n++] = argv[i];
  }
  o.argc = n;
  o.argv = rest;
  for (j = 0; j < sizeof(bench_commands) / sizeof(bench_commands[0]); j++) {
    if (strcmp(argv[1], bench_commands[j].name) == 0) {
      int rc = bench_commands[j].run(&o);
      free(rest);
      return rc;
    }
  }
  free(rest);
  fprintf(stderr, "fleet-bench: unknown subcommand '%s'\n", argv[1]);
  return bench_usage();
}
