/* demo_live.c -- what the long-running commands of fleet-demo (worker,
 * pool node, warmpool node, cron run) say while they run: one ready line
 * once they are connected and serving, then a progress line every few
 * seconds with what they did since they started. Both go to stderr, as
 * every other diagnostic line of the demo; stdout keeps the results. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "demo.h"

void demo_live_init(demo_live_t *s, const char *cmd) {
  memset(s, 0, sizeof(*s));
  s->cmd = cmd;
  s->every_ms = DEMO_LIVE_EVERY_MS;
}

int demo_live_flag(const demo_args_t *a, int *i, demo_live_t *s) {
  const char *f = a->argv[*i];

  if (strcmp(f, "--quiet") == 0) {
    s->quiet = 1;
    return 1;
  }
  if (demo_flag(a, i, "--progress-ms"))
    return demo_int(f, a->argv[*i], 0, 86400000, &s->every_ms) ? 1 : -1;
  return 0;
}

static void demo_live_on_timer(uv_timer_t *t) {
  demo_live_t *s = t->data;
  uint64_t done = 0, failed = 0;
  double secs = (double)(uv_hrtime() - s->t0) / 1e9;

  s->counts(s->arg, &done, &failed);
  fprintf(stderr,
          "fleet-demo %s: %" PRIu64 " done, %" PRIu64
          " failed since start (%.0f s)\n",
          s->cmd, done, failed, secs);
  fflush(stderr);
}

void demo_live_ready(demo_live_t *s, demo_client_t *c,
                     void (*counts)(void *arg, uint64_t *done,
                                    uint64_t *failed),
                     void *arg, const char *fmt, ...) {
  char what[512];
  va_list ap;

  if (s->said || s->closed)
    return;
  s->said = 1;
  s->counts = counts;
  s->arg = arg;
  s->t0 = uv_hrtime();
  if (s->quiet)
    return;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  fleet_escape_print(stderr, "fleet-demo %s: connected to %s, %s", s->cmd,
                     c->url_shown, what);
  fflush(stderr);
  if (s->every_ms == 0)
    return;
  uv_timer_init(c->loop, &s->timer);
  s->timer.data = s;
  s->timer_open = 1;
  uv_timer_start(&s->timer, demo_live_on_timer, (uint64_t)s->every_ms,
                 (uint64_t)s->every_ms);
}

void demo_live_close(demo_live_t *s) {
  s->closed = 1;
  if (s->timer_open) {
    s->timer_open = 0;
    uv_close((uv_handle_t *)&s->timer, NULL);
  }
}
