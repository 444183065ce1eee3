/* demo_pool.c -- fleet-demo's worker pool commands:
 *
 *   pool node --pool P --workers N [--node-id ID] [--ledger FILE]
 *             [--work-ms MS] [--worker-ttl-ms MS] [--ack-grace-ms MS]
 *             [--requeue-starts N] [--requeue-backoff-ms MS]
 *             [--max-requeues N]
 *   pool dispatch --pool P --key K [--payload S]
 *   pool notify --pool P --key K --payload S
 *   pool stop-job --pool P --key K
 *   pool status --pool P
 *   pool shutdown --pool P
 *   pool ticker --pool P --name T --period-ms MS [--ledger FILE]
 *               [--worker-ttl-ms MS] (the delivery lease of a tick)
 *   pool schedule --pool P --name S --interval-ms MS [--ledger FILE]
 *                 [--workers N] [--node-id ID]
 *
 * A node runs until SIGINT or SIGTERM, then closes (its jobs move to the
 * other nodes). Without --node-id, fleet makes a unique id. A node whose
 * id another live node holds exits 1 with one line on stderr naming the
 * id; so does a node that loses its id to another node later, and a node
 * refused by a pool that was shut down (and not reset). With
 * --requeue-starts N, the node's first N starts hand their job back
 * (fleet_pool_job_requeue) instead of starting it. Its ledger gets
 * one line per event, each one write with O_APPEND: "<monotonic_ns> <event>
 * <key> <worker_id> <token>" for start, stop, notify, lost and requeue
 * (logged after the start line of the start it ends); a ticker's:
 * "<monotonic_ns> tick <name> <seq> <node_id>", with " redelivered" appended
 * when the tick is a redelivery (its first claimer never acknowledged it); a
 * schedule's, per interval it plans: "<monotonic_ns> plan <name> <seq>
 * <node_id>" (the plan starts the key
 * "<name>-<seq>"). The one-shot commands exit 0 on success, or 1 with one line
 * on stderr. */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"

/* The demo's defaults: short, so that a failover shows within seconds. */
#define DEMO_POOL_TTL_MS 2000
#define DEMO_POOL_GRACE_MS 1000
#define DEMO_POOL_WORKERS_MAX 256

typedef struct demo_pool_s {
  demo_client_t c;
  const char *pool, *key, *payload, *name, *ledger, *node_id;
  int64_t workers, work_ms, ttl_ms, grace_ms, period_ms, interval_ms;
  int64_t requeue_starts, requeue_backoff_ms, max_requeues;
  int ledger_fd;
  fleet_pool_node_t node;
  fleet_pool_worker_t w[DEMO_POOL_WORKERS_MAX];
  fleet_pool_ticker_t ticker;
  fleet_pool_schedule_t schedule;
  uv_signal_t sigint, sigterm;
  int signals_open;
  int status;
  struct demo_job_s *starting; /* starts waiting for --work-ms */
  demo_live_t live;            /* node: the ready and progress lines */
  uint64_t starts, lost;       /* node: jobs started, and lost */
} demo_pool_t;

/* A job whose start completes after --work-ms. */
typedef struct demo_job_s {
  uv_timer_t timer;
  fleet_pool_job_t *job;
  struct demo_job_s *prev, *next;
  struct demo_pool_s *d;
} demo_job_t;

static void demo_pool_ledger(demo_pool_t *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends one line to the ledger, in one write. */
static void demo_pool_ledger(demo_pool_t *d, const char *fmt, ...) {
  char line[1200];
  int len;
  va_list ap;

  if (d->ledger_fd < 0)
    return;
  len = snprintf(line, sizeof(line), "%" PRIu64 " ", uv_hrtime());
  va_start(ap, fmt);
  len += vsnprintf(line + len, sizeof(line) - (size_t)len - 1, fmt, ap);
  va_end(ap);
  if (len > (int)sizeof(line) - 2)
    len = (int)sizeof(line) - 2;
  line[len++] = '\n';
  if (write(d->ledger_fd, line, (size_t)len) != len) {
    demo_fail("ledger write", FLEET_EBACKEND);
    d->status = 1;
  }
}

static void demo_pool_event(fleet_pool_worker_t *w, fleet_pool_job_t *job,
                            const char *event) {
  demo_pool_ledger(w->data, "%s %s %s %" PRIu64, event,
                   fleet_pool_job_key_str(job), fleet_pool_worker_id(w),
                   fleet_pool_job_token(job));
}

static void demo_job_closed(uv_handle_t *h) {
  free(h->data);
}

/* Takes `j` off the list of starts and closes its timer. */
static void demo_job_end(demo_job_t *j) {
  if (j->prev != NULL)
    j->prev->next = j->next;
  else
    j->d->starting = j->next;
  if (j->next != NULL)
    j->next->prev = j->prev;
  uv_close((uv_handle_t *)&j->timer, demo_job_closed);
}

static void demo_job_ready(uv_timer_t *t) {
  demo_job_t *j = t->data;

  fleet_pool_job_started(j->job, 0);
  demo_job_end(j);
}

static void demo_pool_start(fleet_pool_worker_t *w, fleet_pool_job_t *job) {
  demo_pool_t *d = w->data;
  demo_job_t *j;

  demo_pool_event(w, job, "start");
  if (d->requeue_starts > 0) {
    d->requeue_starts--;
    demo_pool_event(w, job, "requeue");
    fleet_pool_job_requeue(job);
    return;
  }
  d->starts++;
  if (d->work_ms == 0 || (j = calloc(1, sizeof(*j))) == NULL) {
    fleet_pool_job_started(job, 0);
    return;
  }
  j->job = job;
  j->d = d;
  j->timer.data = j;
  j->next = d->starting;
  if (d->starting != NULL)
    d->starting->prev = j;
  d->starting = j;
  uv_timer_init(d->c.loop, &j->timer);
  uv_timer_start(&j->timer, demo_job_ready, (uint64_t)d->work_ms, 0);
}

static void demo_pool_stop(fleet_pool_worker_t *w, fleet_pool_job_t *job,
                           fleet_pool_stop_reason_t reason) {
  demo_pool_t *d = w->data;
  demo_job_t *j;

  demo_pool_event(w, job, reason == FLEET_POOL_STOP_LOST ? "lost" : "stop");
  d->lost += reason == FLEET_POOL_STOP_LOST;
  for (j = d->starting; j != NULL; j = j->next)
    if (j->job == job) {
      demo_job_end(j);
      break;
    }
}

static void demo_pool_notify(fleet_pool_worker_t *w, fleet_pool_job_t *job,
                             fleet_bytes_t payload) {
  (void)payload;
  demo_pool_event(w, job, "notify");
}

static const fleet_pool_handler_t demo_pool_handler = {
    .start_cb = demo_pool_start,
    .stop_cb = demo_pool_stop,
    .notify_cb = demo_pool_notify};

/* ------------------------------------------------------------------------ */
/* Flags, setup, teardown                                                   */

static int demo_pool_flags(demo_pool_t *d, const demo_args_t *a,
                           const char *cmd) {
  int i, st;

  for (i = 1; i < a->argc; i++) {
    if (strcmp(cmd, "node") == 0 &&
        (st = demo_live_flag(a, &i, &d->live)) != 0) {
      if (st < 0)
        return 2;
    } else if (demo_flag(a, &i, "--pool"))
      d->pool = a->argv[i];
    else if (demo_flag(a, &i, "--key"))
      d->key = a->argv[i];
    else if (demo_flag(a, &i, "--payload"))
      d->payload = a->argv[i];
    else if (demo_flag(a, &i, "--name"))
      d->name = a->argv[i];
    else if (demo_flag(a, &i, "--ledger"))
      d->ledger = a->argv[i];
    else if (demo_flag(a, &i, "--node-id"))
      d->node_id = a->argv[i];
    else if (demo_flag(a, &i, "--workers")) {
      if (!demo_int("--workers", a->argv[i], 0, DEMO_POOL_WORKERS_MAX,
                    &d->workers))
        return 2;
    } else if (demo_flag(a, &i, "--work-ms")) {
      if (!demo_int("--work-ms", a->argv[i], 0, 3600000, &d->work_ms))
        return 2;
    } else if (demo_flag(a, &i, "--worker-ttl-ms")) {
      if (!demo_int("--worker-ttl-ms", a->argv[i], 100, 3600000, &d->ttl_ms))
        return 2;
    } else if (demo_flag(a, &i, "--requeue-starts")) {
      if (!demo_int("--requeue-starts", a->argv[i], 0, 1000000,
                    &d->requeue_starts))
        return 1;
    } else if (demo_flag(a, &i, "--requeue-backoff-ms")) {
      if (!demo_int("--requeue-backoff-ms", a->argv[i], 1, 3600000,
                    &d->requeue_backoff_ms))
        return 1;
    } else if (demo_flag(a, &i, "--max-requeues")) {
      if (!demo_int("--max-requeues", a->argv[i], 1, 1000000, &d->max_requeues))
        return 1;
    } else if (demo_flag(a, &i, "--ack-grace-ms")) {
      if (!demo_int("--ack-grace-ms", a->argv[i], 1, 3600000, &d->grace_ms))
        return 2;
    } else if (demo_flag(a, &i, "--period-ms")) {
      if (!demo_int("--period-ms", a->argv[i], FLEET_POOL_TICK_MIN_MS, 3600000,
                    &d->period_ms))
        return 2;
    } else if (demo_flag(a, &i, "--interval-ms")) {
      if (!demo_int("--interval-ms", a->argv[i], FLEET_POOL_TICK_MIN_MS,
                    3600000, &d->interval_ms))
        return 2;
    } else {
      return demo_bad_flag(cmd, a->argv[i]);
    }
  }
  if (d->pool == NULL) {
    fprintf(stderr, "fleet-demo: pool %s: --pool is required\n", cmd);
    return 2;
  }
  return 0;
}

static void demo_pool_node_error(fleet_handle_t *h, int status,
                                 const char *detail);

/* Opens the client, the ledger and a node (client-only without workers).
 * Returns 0, or prints why and returns 1. */
static int demo_pool_open(demo_pool_t *d, const demo_args_t *a) {
  fleet_pool_node_options_t o;
  int err;

  if (d->ledger != NULL &&
      (d->ledger_fd = open(d->ledger, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                           0644)) < 0) {
    perror("fleet-demo: pool: --ledger");
    return 1;
  }
  if (demo_client_open(&d->c, a) != 0)
    return 1;
  fleet_pool_node_options_init(&o);
  o.worker_ttl_ms = (uint32_t)d->ttl_ms;
  o.ack_grace_ms = (uint32_t)d->grace_ms;
  o.requeue_backoff_ms = (uint32_t)d->requeue_backoff_ms; /* 0: default */
  o.max_requeues = (uint32_t)d->max_requeues;
  o.client_only = d->workers == 0;
  o.error_cb = demo_pool_node_error;
  d->node.data = d;
  /* Without --node-id, fleet makes one. */
  err = fleet_pool_node_init(&d->c.client, &d->node, d->pool, d->node_id, &o);
  if (err != 0) {
    demo_fail("pool node", err);
    demo_client_close(&d->c);
    return 1;
  }
  d->node_id = fleet_pool_node_id(&d->node);
  return 0;
}

static void demo_pool_node_closed(fleet_handle_t *h) {
  demo_pool_t *d = h->data;

  if (d->signals_open) {
    uv_close((uv_handle_t *)&d->sigint, NULL);
    uv_close((uv_handle_t *)&d->sigterm, NULL);
    d->signals_open = 0;
  }
  demo_client_close(&d->c);
}

/* Closes the ticker and the schedule (if any), the node, then the
 * client. */
static void demo_pool_finish(demo_pool_t *d, int status) {
  if (status != 0)
    d->status = status;
  if (d->ticker.internal_ != NULL &&
      !fleet_is_closing((fleet_handle_t *)&d->ticker))
    fleet_close((fleet_handle_t *)&d->ticker, NULL);
  if (d->schedule.internal_ != NULL &&
      !fleet_is_closing((fleet_handle_t *)&d->schedule))
    fleet_close((fleet_handle_t *)&d->schedule, NULL);
  if (!fleet_is_closing((fleet_handle_t *)&d->node))
    fleet_close((fleet_handle_t *)&d->node, demo_pool_node_closed);
}

static void demo_pool_on_signal(uv_signal_t *s, int signum) {
  (void)signum;
  demo_pool_finish(s->data, 0);
}

static void demo_pool_on_error(fleet_handle_t *h, int status,
                               const char *detail) {
  (void)h;
  if (demo_unreachable(status, detail))
    return; /* the one line about it is printed */
  fleet_escape_print(stderr, "fleet-demo: pool: %s (%s)",
                     fleet_err_name(status), detail);
}

/* The node's background errors; another live node holding its id, or a
 * pool shut down, ends the program, with one line. */
static void demo_pool_node_error(fleet_handle_t *h, int status,
                                 const char *detail) {
  demo_pool_t *d = h->data;

  if (status == FLEET_ESHUTDOWN) {
    fleet_escape_print(stderr,
                       "fleet-demo: pool \"%s\" was shut down and not reset "
                       "(fleet pool reset %s)",
                       d->pool, d->pool);
    demo_pool_finish(d, 1);
    return;
  }
  if (status != FLEET_ECONFLICT) {
    demo_pool_on_error(h, status, detail);
    return;
  }
  fleet_escape_print(
      stderr,
      "fleet-demo: pool node id \"%s\" is already in use by a live node",
      d->node_id);
  demo_pool_finish(d, 1);
}

/* Runs the loop to the end; returns the exit code. */
static int demo_pool_loop(demo_pool_t *d) {
  uv_run(d->c.loop, UV_RUN_DEFAULT);
  uv_loop_close(d->c.loop);
  if (d->ledger_fd >= 0)
    close(d->ledger_fd);
  return d->c.failed ? 1 : d->status;
}

static void demo_pool_signals(demo_pool_t *d) {
  uv_signal_init(d->c.loop, &d->sigint);
  uv_signal_init(d->c.loop, &d->sigterm);
  d->sigint.data = d->sigterm.data = d;
  uv_signal_start(&d->sigint, demo_pool_on_signal, SIGINT);
  uv_signal_start(&d->sigterm, demo_pool_on_signal, SIGTERM);
  d->signals_open = 1;
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                 */

/* The node's counts for its progress lines: jobs started, and jobs lost
 * (their lease ran out here). */
static void demo_pool_counts(void *arg, uint64_t *done, uint64_t *failed) {
  demo_pool_t *d = arg;

  *done = d->starts;
  *failed = d->lost;
}

/* The pool's workers, read after the node joined (the join went first on
 * the same connection): a node refused its id has heard FLEET_ECONFLICT
 * and is closing by now, and says no ready line. */
static void demo_pool_joined(fleet_pool_node_t *node, int status,
                             const fleet_pool_worker_info_t *w, size_t n,
                             void *arg) {
  demo_pool_t *d = arg;
  (void)w;
  (void)n;

  if (status == 0 && !fleet_is_closing((fleet_handle_t *)node))
    demo_live_ready(&d->live, &d->c, demo_pool_counts, d,
                    "serving pool %s as node %s (%" PRId64 " workers)", d->pool,
                    d->node_id, d->workers);
}

static void demo_pool_ready(void *arg) {
  demo_pool_t *d = arg;

  if (!fleet_is_closing((fleet_handle_t *)&d->node))
    fleet_pool_workers(&d->node, demo_pool_joined, d);
}

static int demo_pool_node(demo_pool_t *d) {
  int64_t i;
  int err;

  d->c.on_ready = demo_pool_ready;
  d->c.live = &d->live;
  demo_pool_signals(d);
  for (i = 0; i < d->workers; i++) {
    d->w[i].data = d;
    err = fleet_pool_worker_add(&d->node, &d->w[i], &demo_pool_handler);
    if (err != 0) {
      demo_fail("pool worker", err);
      demo_pool_finish(d, 1);
      break;
    }
  }
  return demo_pool_loop(d);
}

static void demo_pool_on_tick(fleet_pool_ticker_t *t, int status,
                              const fleet_pool_tick_t *tick) {
  demo_pool_t *d = t->data;

  if (status != 0) {
    demo_pool_finish(d, 0);
    return;
  }
  demo_pool_ledger(d, "tick %s %" PRIu64 " %s%s", d->name, tick->seq,
                   d->node_id, tick->redelivered ? " redelivered" : "");
}

static int demo_pool_ticker(demo_pool_t *d) {
  fleet_pool_ticker_options_t o;
  int err;

  demo_pool_signals(d);
  d->ticker.data = d;
  fleet_pool_ticker_options_init(&o);
  o.error_cb = demo_pool_on_error;
  err = fleet_pool_ticker_init(&d->node, &d->ticker, d->name,
                               (uint32_t)d->period_ms, &o);
  if (err == 0)
    err = fleet_pool_ticker_start(&d->ticker, demo_pool_on_tick);
  if (err != 0) {
    demo_fail("pool ticker", err);
    demo_pool_finish(d, 1);
  }
  return demo_pool_loop(d);
}

/* Each interval this node plans: one line, and one key to start. */
static int demo_pool_plan(fleet_pool_schedule_t *s, fleet_pool_plan_t *plan,
                          const fleet_pool_tick_t *tick) {
  demo_pool_t *d = s->data;
  char key[300];

  demo_pool_ledger(d, "plan %s %" PRIu64 " %s", d->name, tick->seq, d->node_id);
  snprintf(key, sizeof(key), "%s-%" PRIu64, d->name, tick->seq);
  return fleet_pool_plan_start(plan, key, (fleet_bytes_t){NULL, 0});
}

/* A node with --workers workers (none by default) that takes part in the
 * schedule --name. */
static int demo_pool_schedule(demo_pool_t *d) {
  fleet_pool_schedule_options_t o;
  int err;

  d->schedule.data = d;
  fleet_pool_schedule_options_init(&o);
  o.error_cb = demo_pool_on_error;
  err = fleet_pool_schedule_init(&d->node, &d->schedule, d->name,
                                 (uint32_t)d->interval_ms, &o);
  if (err == 0)
    err = fleet_pool_schedule_start(&d->schedule, demo_pool_plan);
  if (err != 0) {
    demo_fail("pool schedule", err);
    demo_pool_finish(d, 1);
    return demo_pool_loop(d);
  }
  return demo_pool_node(d);
}

/* The answer of a one-shot call: one line on failure. */
static void demo_pool_on_done(fleet_handle_t *h, int status, void *arg) {
  demo_pool_t *d = arg;

  (void)h;
  if (status == FLEET_EEXIST)
    fprintf(stderr, "fleet-demo: pool: exists\n");
  else if (status == FLEET_ETIMEDOUT)
    fprintf(stderr, "fleet-demo: pool: timeout\n");
  else if (status == FLEET_ENOTFOUND)
    fprintf(stderr, "fleet-demo: pool: not found\n");
  else if (status == FLEET_EUNAVAILABLE || status == FLEET_ECONNREFUSED ||
           status == FLEET_ECONNLOST)
    fprintf(stderr, "fleet-demo: pool: unreachable (%s)\n",
            fleet_err_name(status));
  else if (status != 0)
    fprintf(stderr, "fleet-demo: pool: start failed: %s (%s)\n",
            fleet_strerror(status), fleet_err_name(status));
  demo_pool_finish(d, status != 0);
}

static void demo_pool_unreachable(void *arg) {
  demo_pool_finish(arg, 1);
}

static int demo_pool_call(demo_pool_t *d, const char *cmd) {
  fleet_bytes_t payload = {d->payload, d->payload ? strlen(d->payload) : 0};
  int err;

  if (d->key == NULL || (strcmp(cmd, "notify") == 0 && d->payload == NULL)) {
    fprintf(stderr, "fleet-demo: pool %s: --key%s required\n", cmd,
            strcmp(cmd, "notify") == 0 ? " and --payload are" : " is");
    demo_pool_finish(d, 2);
    demo_pool_loop(d);
    return 2;
  }
  if (strcmp(cmd, "dispatch") == 0)
    err = fleet_pool_dispatch(&d->node, d->key, payload, demo_pool_on_done, d);
  else if (strcmp(cmd, "notify") == 0)
    err = fleet_pool_notify(&d->node, d->key, payload, demo_pool_on_done, d);
  else
    err = fleet_pool_stop_job(&d->node, d->key, demo_pool_on_done, d);
  if (err != 0) {
    demo_fail(cmd, err);
    demo_pool_finish(d, 1);
  }
  return demo_pool_loop(d);
}

static int demo_pool_shutdown(demo_pool_t *d) {
  int err = fleet_pool_shutdown(&d->node, demo_pool_on_done, d);

  if (err != 0) {
    demo_fail("shutdown", err);
    demo_pool_finish(d, 1);
  }
  return demo_pool_loop(d);
}

/* Prints `len` bytes as a JSON string. */
static void demo_json_str(const char *s, size_t len) {
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

/* status: the workers first, then the jobs, printed together. */
typedef struct {
  demo_pool_t *d;
  fleet_pool_worker_info_t *w;
  char **strs;
  size_t n;
} demo_status_t;

static void demo_status_jobs(fleet_pool_node_t *node, int status,
                             const fleet_pool_job_info_t *jobs, size_t n,
                             void *arg) {
  demo_status_t *st = arg;
  size_t i, j, count;

  (void)node;
  if (status == 0) {
    printf("{\"workers\":[");
    for (i = 0; i < st->n; i++) {
      for (count = j = 0; j < n; j++)
        count += strcmp(jobs[j].worker_id, st->w[i].id) == 0;
      printf("%s{\"id\":", i ? "," : "");
      demo_json_str(st->w[i].id, strlen(st->w[i].id));
      printf(",\"node\":");
      demo_json_str(st->w[i].node_id, strlen(st->w[i].node_id));
      printf(",\"created\":%" PRIu64 ",\"jobs\":%zu}", st->w[i].created, count);
    }
    printf("],\"jobs\":[");
    for (j = 0; j < n; j++) {
      printf("%s{\"key\":", j ? "," : "");
      demo_json_str(jobs[j].key.base, jobs[j].key.len);
      printf(",\"worker\":");
      demo_json_str(jobs[j].worker_id, strlen(jobs[j].worker_id));
      printf("}");
    }
    printf("]}\n");
  } else {
    demo_fail_on(&st->d->c.client, "status", status);
  }
  for (i = 0; i < 2 * st->n; i++)
    free(st->strs[i]);
  free(st->strs);
  free(st->w);
  demo_pool_finish(st->d, status != 0);
}

static void demo_status_workers(fleet_pool_node_t *node, int status,
                                const fleet_pool_worker_info_t *w, size_t n,
                                void *arg) {
  demo_status_t *st = arg;
  size_t i;
  int err;

  if (status != 0) {
    demo_fail_on(&st->d->c.client, "status", status);
    demo_pool_finish(st->d, 1);
    return;
  }
  st->w = calloc(n + 1, sizeof(*st->w));
  st->strs = calloc(2 * n + 1, sizeof(char *));
  if (st->w == NULL || st->strs == NULL) {
    demo_fail("status", FLEET_ENOMEM);
    demo_pool_finish(st->d, 1);
    return;
  }
  for (i = 0; i < n; i++) {
    st->w[i] = w[i];
    st->w[i].id = st->strs[2 * i] = strdup(w[i].id);
    st->w[i].node_id = st->strs[2 * i + 1] = strdup(w[i].node_id);
    st->n = i + 1;
  }
  err = fleet_pool_jobs(node, demo_status_jobs, st);
  if (err != 0)
    demo_status_jobs(node, err, NULL, 0, st);
}

static int demo_pool_status(demo_pool_t *d) {
  demo_status_t st = {d, NULL, NULL, 0};
  int err = fleet_pool_workers(&d->node, demo_status_workers, &st);

  if (err != 0) {
    demo_fail("status", err);
    demo_pool_finish(d, 1);
  }
  return demo_pool_loop(d);
}

int demo_pool(const demo_args_t *a) {
  static demo_pool_t d;
  const char *cmd = a->argc > 0 ? a->argv[0] : "";
  int is_node = strcmp(cmd, "node") == 0, rc;
  int is_schedule = strcmp(cmd, "schedule") == 0;

  memset(&d, 0, sizeof(d));
  demo_live_init(&d.live, "pool node");
  d.ledger_fd = -1;
  d.ttl_ms = DEMO_POOL_TTL_MS;
  d.grace_ms = DEMO_POOL_GRACE_MS;
  d.period_ms = 1000;
  d.interval_ms = 1000;
  if (strcmp(cmd, "node") != 0 && strcmp(cmd, "dispatch") != 0 &&
      strcmp(cmd, "notify") != 0 && strcmp(cmd, "stop-job") != 0 &&
      strcmp(cmd, "status") != 0 && strcmp(cmd, "shutdown") != 0 &&
      strcmp(cmd, "ticker") != 0 && !is_schedule) {
    fleet_escape_print(stderr, "fleet-demo: pool: unknown command '%s'", cmd);
    return 2;
  }
  if ((rc = demo_pool_flags(&d, a, cmd)) != 0)
    return rc;
  if (is_node && d.workers < 1) {
    fprintf(stderr, "fleet-demo: pool node: --workers N (1 or more)\n");
    return 2;
  }
  if ((strcmp(cmd, "ticker") == 0 || is_schedule) && d.name == NULL) {
    fprintf(stderr, "fleet-demo: pool %s: --name is required\n", cmd);
    return 2;
  }
  if (!is_node && !is_schedule)
    d.workers = 0;
  d.c.on_unreachable = demo_pool_unreachable;
  d.c.arg = &d;
  if (demo_pool_open(&d, a) != 0)
    return 1;
  if (is_node)
    return demo_pool_node(&d);
  if (strcmp(cmd, "ticker") == 0)
    return demo_pool_ticker(&d);
  if (is_schedule)
    return demo_pool_schedule(&d);
  if (strcmp(cmd, "status") == 0)
    return demo_pool_status(&d);
  if (strcmp(cmd, "shutdown") == 0)
    return demo_pool_shutdown(&d);
  return demo_pool_call(&d, cmd);
}
