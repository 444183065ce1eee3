/* demo_cron.c -- fleet-demo cron: the `next` verb, which needs no backend,
 * and the dispatcher that hands every other verb to the scheduler's part
 * (demo_cron_sched.c).
 *
 *   cron next --expr E [--tz Z] [--from ISO8601] [--count N]
 *
 * prints the next N fire times (default 1) strictly after --from (default
 * now), one ISO 8601 UTC time per line; exits 2 with the parse error on
 * stderr for a bad expression, zone or flag. */
#include <stdio.h>
#include <string.h>

#include "demo.h"

static int demo_cron_next(const demo_args_t *a) {
  const char *expr = NULL, *tz = NULL, *from = NULL;
  fleet_cron_t *cron;
  int64_t count = 1, at, k;
  char err[512], line[32];
  uv_timeval64_t now;
  int i, rc;

  for (i = 1; i < a->argc; i++) {
    if (demo_flag(a, &i, "--expr"))
      expr = a->argv[i];
    else if (demo_flag(a, &i, "--tz"))
      tz = a->argv[i];
    else if (demo_flag(a, &i, "--from"))
      from = a->argv[i];
    else if (demo_flag(a, &i, "--count")) {
      if (!demo_int("--count", a->argv[i], 1, 100000, &count))
        return 2;
    } else
      return demo_bad_flag("cron next", a->argv[i]);
  }
  if (expr == NULL) {
    fprintf(stderr, "fleet-demo: cron next: --expr is required\n");
    return 2;
  }
  if (from != NULL) {
    if (fleet_cron_parse_time(from, &at) != 0) {
      fprintf(stderr,
              "fleet-demo: cron next: --from wants an ISO 8601 time with a "
              "zone (2026-03-29T01:00:00Z), not '%s'\n",
              from);
      return 2;
    }
  } else {
    if (uv_gettimeofday(&now) != 0) {
      fprintf(stderr, "fleet-demo: cron next: cannot read the clock\n");
      return 1;
    }
    at = now.tv_sec * 1000 + now.tv_usec / 1000;
  }
  rc = fleet_cron_parse(expr, tz, &cron, err, sizeof(err));
  if (rc != 0) {
    fprintf(stderr, "fleet-demo: cron next: %s\n",
            rc == FLEET_EINVAL ? err : fleet_strerror(rc));
    return 2;
  }
  for (k = 0; k < count; k++) {
    rc = fleet_cron_next(cron, at, &at);
    if (rc != 0 || fleet_cron_format_time(at, line, sizeof(line)) < 0)
      break;
    printf("%s\n", line);
  }
  fleet_cron_free(cron);
  return 0;
}

int demo_cron(const demo_args_t *a) {
  if (a->argc > 0 && strcmp(a->argv[0], "next") == 0)
    return demo_cron_next(a);
  return demo_cron_scheduler(a);
}
