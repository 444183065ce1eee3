/* demo.h -- what the files of fleet-demo share: global options, the
 * client every subcommand opens, flag parsing and error lines. */
#ifndef FLEET_DEMO_H
#define FLEET_DEMO_H

#include <stdint.h>
#include <stdio.h>

#include "fleet.h"

/* The global options and the subcommand's arguments. */
typedef struct {
  const char *url;
  const char *prefix;
  int argc;
  char **argv;
} demo_args_t;

/* A client on the default loop that knows whether it was ever ready. */
typedef struct {
  uv_loop_t *loop;
  fleet_client_t client;
  int ready;   /* the client was ready at least once */
  int failed;  /* it could not reach the backend before that (said once) */
  int gave_up; /* ... and the client was closed for it */
  char url_shown[512]; /* the URL, redacted (fleet_redact_url()) */
  /* Called once if the backend cannot be reached at first; NULL to just
   * close the client. */
  void (*on_unreachable)(void *arg);
  void *arg;
  /* Called once, when the client is first ready; NULL for nothing. */
  void (*on_ready)(void *arg);
  /* The command's ready and progress lines, closed with the client; NULL
   * for a command that has none. */
  struct demo_live_s *live;
} demo_client_t;

/* Prints "fleet-demo: <what>: <message> (<name>)" on stderr. While the
 * backend has never been reached, an error that says so is printed
 * instead as the one line "fleet-demo: cannot reach the backend at <URL>:
 * ...", once, however many calls fail with it. */
void demo_fail(const char *what, int err);

/* While the backend has never been reached, reports `err` (if it says
 * so: refused, wrong password, no answer, ...) as the one line "cannot
 * reach the backend at <URL>", once; returns 1 when that is what `err`
 * is, and the caller prints nothing of its own. */
int demo_unreachable(int err, const char *detail);

/* As demo_fail(), for an error `client` reported: appends the backend's
 * own words (fleet_client_last_error()) when it has some. */
void demo_fail_on(const fleet_client_t *client, const char *what, int err);

/* Opens the client for `a` on the default loop. Returns 0, or prints why
 * and returns 1. */
int demo_client_open(demo_client_t *c, const demo_args_t *a);

/* Closes the client (no-op when closed already). */
void demo_client_close(demo_client_t *c);

/* Parses the value of `flag` as an integer in [min, max]; prints an error
 * and returns 0 when it is not one. */
int demo_int(const char *flag, const char *value, int64_t min, int64_t max,
             int64_t *out);

/* Whether argv[*i] is `flag` with a value after it: then advances *i to
 * the value. */
int demo_flag(const demo_args_t *a, int *i, const char *flag);

/* Prints "fleet-demo: <cmd>: bad flag '<arg>'" and returns 2. */
int demo_bad_flag(const char *cmd, const char *arg);

/* The ready and progress lines of the long-running commands
 * (demo_live.c), on stderr: "fleet-demo <cmd>: connected to <URL>,
 * <what>" once the command is connected and serving, then every
 * `every_ms` "fleet-demo <cmd>: <n> done, <n> failed in <s> s", counted
 * since the start. --quiet prints neither; --progress-ms 0 no progress. */
#define DEMO_LIVE_EVERY_MS 5000
typedef struct demo_live_s {
  const char *cmd; /* "worker", "pool node", ... */
  int64_t every_ms;
  int quiet;
  int said;   /* the ready line was said (or would have been, --quiet) */
  int closed; /* the command is ending: no ready line any more */
  int timer_open;
  uv_timer_t timer;
  uint64_t t0;
  void (*counts)(void *arg, uint64_t *done, uint64_t *failed);
  void *arg;
} demo_live_t;

/* Fills `s` for the command `cmd`: progress every DEMO_LIVE_EVERY_MS. */
void demo_live_init(demo_live_t *s, const char *cmd);

/* Parses --quiet and --progress-ms MS at argv[*i]: 1 when it was one of
 * them (*i advanced past a value), 0 when not, -1 after printing why the
 * value is bad. */
int demo_live_flag(const demo_args_t *a, int *i, demo_live_t *s);

/* Says the ready line once (a no-op afterwards, and once the status is
 * closed) and starts the progress lines, whose counts `counts` gives. */
void demo_live_ready(demo_live_t *s, demo_client_t *c,
                     void (*counts)(void *arg, uint64_t *done,
                                    uint64_t *failed),
                     void *arg, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Stops the progress lines; the timer closes with the loop's handles. */
void demo_live_close(demo_live_t *s);

/* The subcommands of demo_queue.c. */
int demo_run(const demo_args_t *a);
int demo_worker(const demo_args_t *a);
int demo_enqueue(const demo_args_t *a);
int demo_stats(const demo_args_t *a);

/* fleet-demo flow (demo_flow.c): one flow, a parent and its children. */
int demo_flow(const demo_args_t *a);

/* The pool commands of demo_pool.c: argv[0] names the subcommand. */
int demo_pool(const demo_args_t *a);

/* fleet-demo cron: `next` in demo_cron.c; every other verb (argv[0]) goes
 * to demo_cron_scheduler() in demo_cron_sched.c, with --url and --prefix
 * in `a`. */
int demo_cron(const demo_args_t *a);
int demo_cron_scheduler(const demo_args_t *a);
/* The warm pool commands of demo_warmpool.c: argv[0] names the
 * subcommand. */
int demo_warmpool(const demo_args_t *a);

#endif /* FLEET_DEMO_H */
