/* demo_cron_sched.c -- fleet-demo cron's scheduler verbs:
 *
 *   cron define --key K --expr E [--tz Z] [--payload S] [--queue Q]
 *               [--catch-up skip|latest|all] [--catch-up-max N]
 *               [--catch-up-window-ms MS] [--disabled] [--create|--update]
 *               [--start ISO] [--end ISO] [--max-fires N] [--pool P]
 *   cron remove --key K
 *   cron enable --key K
 *   cron disable --key K
 *   cron list                      (a JSON array)
 *   cron history --key K [--limit N]  (a JSON array, newest first)
 *   cron run [--ledger FILE] [--node-id ID] [--grace-ms MS] [--keep N]
 *            [--claim-ahead-ms MS] [--fail] [--pool P]
 *
 * each with [--ns NS] (default "cron"), and the global --url and --prefix.
 * `run` is a scheduler node until SIGINT or SIGTERM: for each occurrence
 * it fires it appends "<key> <fire_ms> <node_id> <token> <wall_ms>" to the
 * ledger (wall_ms: this machine's clock when the fire callback ran; one
 * write, O_APPEND) and completes the fire (as failed with --fail).
 * With --pool P it also fires the definitions that target the worker pool
 * P, dispatching their jobs through a client-only node of P (its fires are
 * written to the ledger once the pool accepted the job).
 * Exit codes: 0 done, 1 a backend error, 2 bad input (a bad expression or
 * zone prints the parser's message). */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "demo.h"

typedef struct {
  demo_client_t c;
  const char *cmd, *ns, *key, *expr, *tz, *payload, *queue, *ledger, *node_id;
  const char *pool;
  fleet_pool_node_t pool_node;
  int pool_open;
  int catch_up, disabled, fail;
  fleet_cron_mode_t mode;
  int64_t limit, grace_ms, keep, cu_max, cu_window, ahead_ms;
  int64_t start_ms, end_ms, max_fires;
  int ledger_fd;
  char id[64];
  fleet_cron_scheduler_t sched;
  uv_signal_t sigint, sigterm;
  int signals_open;
  int status;
  demo_live_t live;       /* run: the ready and progress lines */
  uint64_t fired, failed; /* run: fires completed here, as done or failed */
} demo_cron_t;

static void dc_pool_closed(fleet_handle_t *h) {
  demo_cron_t *d = h->data;

  demo_client_close(&d->c);
}

static void dc_closed(fleet_handle_t *h) {
  demo_cron_t *d = h->data;

  if (d->signals_open) {
    uv_close((uv_handle_t *)&d->sigint, NULL);
    uv_close((uv_handle_t *)&d->sigterm, NULL);
    d->signals_open = 0;
  }
  /* The pool node outlives the scheduler that dispatches through it. */
  if (d->pool_open) {
    d->pool_open = 0;
    d->pool_node.data = d;
    fleet_close((fleet_handle_t *)&d->pool_node, dc_pool_closed);
    return;
  }
  demo_client_close(&d->c);
}

static void dc_finish(demo_cron_t *d, int status) {
  if (status != 0 && d->status == 0)
    d->status = status;
  if (d->sched.internal_ != NULL &&
      !fleet_is_closing((fleet_handle_t *)&d->sched))
    fleet_close((fleet_handle_t *)&d->sched, dc_closed);
}

/* Prints a JSON string. */
static void json_str(const char *s, size_t len) {
  size_t i;

  putchar('"');
  for (i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)s[i];

    if (ch == '"' || ch == '\\')
      printf("\\%c", ch);
    else if (ch < 0x20)
      printf("\\u%04x", ch);
    else
      putchar(ch);
  }
  putchar('"');
}

static void dc_on_status(fleet_handle_t *h, int status, void *arg) {
  demo_cron_t *d = arg;

  (void)h;
  if (status != 0) {
    demo_fail_on(&d->c.client, d->cmd, status);
    dc_finish(d, status == FLEET_ENOTFOUND || status == FLEET_EEXIST ? 2 : 1);
    return;
  }
  dc_finish(d, 0);
}

static void dc_on_list(fleet_cron_scheduler_t *s, int status,
                       const fleet_cron_def_t *defs, size_t n, void *arg) {
  demo_cron_t *d = arg;
  size_t i;

  (void)s;
  if (status != 0) {
    demo_fail_on(&d->c.client, "list", status);
    dc_finish(d, 1);
    return;
  }
  printf("[");
  for (i = 0; i < n; i++) {
    const fleet_cron_def_t *x = &defs[i];

    printf("%s{\"key\":", i ? "," : "");
    json_str(x->key, strlen(x->key));
    printf(",\"expr\":");
    json_str(x->expr, strlen(x->expr));
    printf(",\"tz\":");
    json_str(x->tz, strlen(x->tz));
    printf(",\"payload\":");
    json_str(x->payload.base, x->payload.len);
    printf(",\"queue\":");
    if (x->queue != NULL)
      json_str(x->queue, strlen(x->queue));
    else
      printf("null");
    printf(",\"pool\":");
    if (x->pool != NULL)
      json_str(x->pool, strlen(x->pool));
    else
      printf("null");
    printf(",\"catch_up\":\"%s\",\"catch_up_max\":%u,"
           "\"catch_up_window_ms\":%" PRIu64 ",\"enabled\":%s,"
           "\"created_ms\":%" PRId64 ",\"updated_ms\":%" PRId64
           ",\"last_fire_ms\":%" PRId64 ",\"last_token\":%" PRIu64
           ",\"next_due_ms\":%" PRId64 ",\"start_ms\":%" PRId64
           ",\"end_ms\":%" PRId64 ",\"max_fires\":%" PRIu64
           ",\"fires\":%" PRIu64 ",\"finished\":%s,\"not_started\":%s}",
           fleet_cron_catch_up_name((int)x->catch_up), x->catch_up_max,
           x->catch_up_window_ms, x->disabled ? "false" : "true", x->created_ms,
           x->updated_ms, x->last_fire_ms, x->last_token, x->next_due_ms,
           x->start_ms, x->end_ms, x->max_fires, x->fires,
           x->finished ? "true" : "false", x->not_started ? "true" : "false");
  }
  printf("]\n");
  dc_finish(d, 0);
}

static void dc_on_history(fleet_cron_scheduler_t *s, int status,
                          const fleet_cron_entry_t *e, size_t n, void *arg) {
  demo_cron_t *d = arg;
  size_t i;

  (void)s;
  if (status != 0) {
    demo_fail_on(&d->c.client, "history", status);
    dc_finish(d, status == FLEET_ENOTFOUND ? 2 : 1);
    return;
  }
  printf("[");
  for (i = 0; i < n; i++) {
    printf("%s{\"fire_ms\":%" PRId64 ",\"token\":%" PRIu64 ",\"node\":",
           i ? "," : "", e[i].fire_ms, e[i].token);
    json_str(e[i].node, strlen(e[i].node));
    printf(",\"dispatched_ms\":%" PRId64 ",\"finished_ms\":%" PRId64
           ",\"outcome\":",
           e[i].dispatched_ms, e[i].finished_ms);
    json_str(e[i].outcome, strlen(e[i].outcome));
    printf("}");
  }
  printf("]\n");
  dc_finish(d, 0);
}

/* ------------------------------------------------------------------------ */
/* run                                                                      */

static void dc_on_fire(fleet_cron_scheduler_t *s, fleet_cron_fire_t *fire) {
  demo_cron_t *d = s->data;
  char line[600];
  struct timeval tv;
  int len;

  if (d->ledger_fd >= 0) {
    gettimeofday(&tv, NULL);
    len = snprintf(line, sizeof(line),
                   "%s %" PRId64 " %s %" PRIu64 " %" PRId64 "\n", fire->key,
                   fire->fire_ms, d->node_id, fire->token,
                   (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000);
    if (len > (int)sizeof(line) - 1)
      len = (int)sizeof(line) - 1;
    if (write(d->ledger_fd, line, (size_t)len) != len) {
      demo_fail("ledger write", FLEET_EBACKEND);
      d->status = 1;
    }
  }
  if (fleet_cron_complete(fire, d->fail ? "demo failure" : NULL) == 0) {
    d->fired += !d->fail;
    d->failed += d->fail;
  }
}

/* The node's counts for its progress lines. */
static void dc_counts(void *arg, uint64_t *done, uint64_t *failed) {
  demo_cron_t *d = arg;

  *done = d->fired;
  *failed = d->failed;
}

/* The scheduler is serving once its client is ready: it was started
 * before the loop ran. */
static void dc_ready(void *arg) {
  demo_cron_t *d = arg;

  if (!fleet_is_closing((fleet_handle_t *)&d->sched))
    demo_live_ready(&d->live, &d->c, dc_counts, d,
                    "serving cron namespace %s as node %s%s%s", d->ns,
                    d->node_id, d->pool != NULL ? ", pool " : "",
                    d->pool != NULL ? d->pool : "");
}

static void dc_on_signal(uv_signal_t *s, int signum) {
  (void)signum;
  dc_finish(s->data, 0);
}

/* The backend was never reached: the scheduler closes, then the client,
 * and the command exits 1. */
static void dc_unreachable(void *arg) {
  dc_finish(arg, 1);
}

static void dc_on_error(fleet_handle_t *h, int status, const char *detail) {
  (void)h;
  if (demo_unreachable(status, detail))
    return; /* the one line about it is printed; the client gives up */
  fleet_escape_print(stderr, "fleet-demo: cron run: %s (%s)",
                     fleet_err_name(status), detail);
}

/* ------------------------------------------------------------------------ */
/* Flags and dispatch                                                       */

static int dc_flags(demo_cron_t *d, const demo_args_t *a) {
  int i, st;

  for (i = 1; i < a->argc; i++) {
    if (strcmp(d->cmd, "run") == 0 &&
        (st = demo_live_flag(a, &i, &d->live)) != 0) {
      if (st < 0)
        return 2;
    } else if (demo_flag(a, &i, "--ns"))
      d->ns = a->argv[i];
    else if (demo_flag(a, &i, "--key"))
      d->key = a->argv[i];
    else if (demo_flag(a, &i, "--expr"))
      d->expr = a->argv[i];
    else if (demo_flag(a, &i, "--tz"))
      d->tz = a->argv[i];
    else if (demo_flag(a, &i, "--payload"))
      d->payload = a->argv[i];
    else if (demo_flag(a, &i, "--queue"))
      d->queue = a->argv[i];
    else if (demo_flag(a, &i, "--pool"))
      d->pool = a->argv[i];
    else if (demo_flag(a, &i, "--ledger"))
      d->ledger = a->argv[i];
    else if (demo_flag(a, &i, "--node-id"))
      d->node_id = a->argv[i];
    else if (demo_flag(a, &i, "--catch-up")) {
      d->catch_up = fleet_cron_catch_up_parse(a->argv[i]);
      if (d->catch_up < 0) {
        fprintf(stderr,
                "fleet-demo: cron %s: --catch-up must be skip, latest or "
                "all, not '%s'\n",
                d->cmd, a->argv[i]);
        return 2;
      }
    } else if (demo_flag(a, &i, "--limit")) {
      if (!demo_int("--limit", a->argv[i], 1, 1000, &d->limit))
        return 2;
    } else if (demo_flag(a, &i, "--grace-ms")) {
      if (!demo_int("--grace-ms", a->argv[i], 0, 3600000, &d->grace_ms))
        return 2;
    } else if (demo_flag(a, &i, "--claim-ahead-ms")) {
      if (!demo_int("--claim-ahead-ms", a->argv[i], 0, 60000, &d->ahead_ms))
        return 2;
    } else if (demo_flag(a, &i, "--keep")) {
      if (!demo_int("--keep", a->argv[i], 1, 1000000, &d->keep))
        return 2;
    } else if (demo_flag(a, &i, "--start") || demo_flag(a, &i, "--end")) {
      int64_t *dst =
          strcmp(a->argv[i - 1], "--start") == 0 ? &d->start_ms : &d->end_ms;
      if (fleet_cron_parse_time(a->argv[i], dst) != 0 || *dst <= 0) {
        fprintf(stderr,
                "fleet-demo: cron %s: %s must be an ISO 8601 time with a "
                "zone (2026-01-02T03:04:05Z), not '%s'\n",
                d->cmd, a->argv[i - 1], a->argv[i]);
        return 2;
      }
    } else if (demo_flag(a, &i, "--max-fires")) {
      if (!demo_int("--max-fires", a->argv[i], 1, INT64_MAX / 2, &d->max_fires))
        return 2;
    } else if (demo_flag(a, &i, "--catch-up-max")) {
      if (!demo_int("--catch-up-max", a->argv[i], 1, 1000, &d->cu_max))
        return 2;
    } else if (demo_flag(a, &i, "--catch-up-window-ms")) {
      if (!demo_int("--catch-up-window-ms", a->argv[i], 1, INT64_MAX / 2,
                    &d->cu_window))
        return 2;
    } else if (strcmp(a->argv[i], "--disabled") == 0) {
      d->disabled = 1;
    } else if (strcmp(a->argv[i], "--create") == 0) {
      d->mode = FLEET_CRON_CREATE;
    } else if (strcmp(a->argv[i], "--update") == 0) {
      d->mode = FLEET_CRON_UPDATE;
    } else if (strcmp(a->argv[i], "--fail") == 0) {
      d->fail = 1;
    } else {
      return demo_bad_flag(d->cmd, a->argv[i]);
    }
  }
  return 0;
}

static int dc_need(demo_cron_t *d, const char *flag, const char *v) {
  if (v != NULL)
    return 0;
  fprintf(stderr, "fleet-demo: cron %s: %s is required\n", d->cmd, flag);
  return 2;
}

static int dc_call(demo_cron_t *d) {
  fleet_cron_def_t def;
  char err[256];
  int rc;

  if (strcmp(d->cmd, "define") == 0) {
    fleet_cron_def_init(&def);
    def.key = d->key;
    def.expr = d->expr;
    def.tz = d->tz;
    def.queue = d->queue;
    def.pool = d->pool;
    if (d->payload != NULL) {
      def.payload.base = d->payload;
      def.payload.len = strlen(d->payload);
    }
    def.catch_up = (fleet_cron_catch_up_t)d->catch_up;
    def.catch_up_max = (uint32_t)d->cu_max;
    def.catch_up_window_ms = (uint64_t)d->cu_window;
    def.disabled = d->disabled;
    def.start_ms = d->start_ms;
    def.end_ms = d->end_ms;
    def.max_fires = (uint64_t)d->max_fires;
    rc = fleet_cron_define(&d->sched, &def, d->mode, err, sizeof(err),
                           dc_on_status, d);
    if (rc == FLEET_EINVAL && err[0] != '\0') {
      /* The parser's message, or "end before start". */
      fleet_escape_print(stderr, "fleet-demo: cron define: %s", err);
      d->status = 2;
      return rc;
    }
  } else if (strcmp(d->cmd, "remove") == 0) {
    rc = fleet_cron_remove(&d->sched, d->key, dc_on_status, d);
  } else if (strcmp(d->cmd, "enable") == 0) {
    rc = fleet_cron_enable(&d->sched, d->key, 1, dc_on_status, d);
  } else if (strcmp(d->cmd, "disable") == 0) {
    rc = fleet_cron_enable(&d->sched, d->key, 0, dc_on_status, d);
  } else if (strcmp(d->cmd, "list") == 0) {
    rc = fleet_cron_list(&d->sched, NULL, dc_on_list, d);
  } else if (strcmp(d->cmd, "history") == 0) {
    rc = fleet_cron_history(&d->sched, d->key, (uint32_t)d->limit,
                            dc_on_history, d);
  } else {
    if (d->ledger != NULL &&
        (d->ledger_fd = open(
             d->ledger, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
      perror("fleet-demo: cron run: --ledger");
      d->status = 1;
      return FLEET_EINVAL;
    }
    uv_signal_init(d->c.loop, &d->sigint);
    uv_signal_init(d->c.loop, &d->sigterm);
    d->sigint.data = d->sigterm.data = d;
    uv_signal_start(&d->sigint, dc_on_signal, SIGINT);
    uv_signal_start(&d->sigterm, dc_on_signal, SIGTERM);
    d->signals_open = 1;
    rc = 0;
    if (d->pool != NULL) {
      fleet_pool_node_options_t po;

      fleet_pool_node_options_init(&po);
      po.client_only = 1;
      rc =
          fleet_pool_node_init(&d->c.client, &d->pool_node, d->pool, NULL, &po);
      d->pool_open = rc == 0;
      if (rc == 0)
        rc = fleet_cron_scheduler_add_pool(&d->sched, d->pool, &d->pool_node);
    }
    if (rc == 0)
      rc = fleet_cron_scheduler_start(&d->sched, dc_on_fire);
  }
  if (rc != 0) {
    demo_fail(d->cmd, rc);
    d->status = rc == FLEET_EINVAL || rc == FLEET_E2BIG ? 2 : 1;
  }
  return rc;
}

int demo_cron_scheduler(const demo_args_t *a) {
  static const char *const verbs[] = {"define", "remove",  "enable", "disable",
                                      "list",   "history", "run"};
  fleet_cron_scheduler_options_t o;
  demo_cron_t d;
  size_t i;
  int rc;

  memset(&d, 0, sizeof(d));
  demo_live_init(&d.live, "cron run");
  d.ledger_fd = -1;
  d.ns = "cron";
  d.limit = 20;
  d.grace_ms = -1;
  d.ahead_ms = -1;
  d.cmd = a->argc > 0 ? a->argv[0] : "";
  for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
    if (strcmp(d.cmd, verbs[i]) == 0)
      break;
  if (i == sizeof(verbs) / sizeof(verbs[0])) {
    fprintf(stderr, "fleet-demo: cron: unknown verb '%s'\n", d.cmd);
    return 2;
  }
  if ((rc = dc_flags(&d, a)) != 0)
    return rc;
  if (strcmp(d.cmd, "list") != 0 && strcmp(d.cmd, "run") != 0 &&
      dc_need(&d, "--key", d.key) != 0)
    return 2;
  if (strcmp(d.cmd, "define") == 0 && dc_need(&d, "--expr", d.expr) != 0)
    return 2;
  if (d.node_id == NULL) {
    snprintf(d.id, sizeof(d.id), "n%ld", (long)getpid());
    d.node_id = d.id;
  }
  if (demo_client_open(&d.c, a) != 0)
    return 1;
  d.c.on_unreachable = dc_unreachable;
  d.c.arg = &d;
  if (strcmp(d.cmd, "run") == 0) {
    d.c.on_ready = dc_ready;
    d.c.live = &d.live;
  }
  fleet_cron_scheduler_options_init(&o);
  if (d.grace_ms >= 0)
    o.grace_ms = (uint32_t)d.grace_ms;
  if (d.keep > 0)
    o.keep_count = (uint32_t)d.keep;
  if (d.ahead_ms >= 0)
    o.claim_ahead_ms = (uint32_t)d.ahead_ms;
  o.error_cb = dc_on_error;
  d.sched.data = &d;
  rc = fleet_cron_scheduler_init(&d.c.client, &d.sched, d.ns, d.node_id, &o);
  if (rc != 0) {
    demo_fail("cron scheduler", rc);
    demo_client_close(&d.c);
    d.status = rc == FLEET_EINVAL || rc == FLEET_E2BIG ? 2 : 1;
  } else if (dc_call(&d) != 0) {
    dc_finish(&d, d.status);
  }
  uv_run(d.c.loop, UV_RUN_DEFAULT);
  uv_loop_close(d.c.loop);
  if (d.ledger_fd >= 0)
    close(d.ledger_fd);
  return d.c.failed ? 1 : d.status;
}
