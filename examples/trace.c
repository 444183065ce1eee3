/* trace.c -- a W3C trace context carried from a producer to the handler
 * of its job, with job headers and the worker's hooks, and no tracing
 * library (docs/queue.md, "Headers and tracing"). The producer starts a
 * trace per job and puts its `traceparent` ("00-<trace id>-<span id>-01")
 * in the job's headers; the worker's before hook reads it, opens a child
 * span (a new span id, the producer's as its parent) and the after hook
 * ends it with the job's outcome and the handler's run time. Where this
 * prints a line, a program with OpenTelemetry starts and ends its spans.
 *
 *   trace [URL [JOBS]]
 *
 * URL defaults to $FLEET_URL, $REDIS_URL, then memory://; JOBS to 3. It
 * prints, per job:
 *
 *   produce trace=<32 hex> span=<16 hex> job=<id>
 *   span start trace=<32 hex> parent=<16 hex> span=<16 hex> job=<id>
 *   span end trace=<32 hex> span=<16 hex> outcome=<outcome> duration_us=<n>
 *
 * and exits 0 once every job's span ended, 1 on an error. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "fleet.h"

#define TRACE_QUEUE "trace-example"

/* A span: its trace, its parent's span id ("" for a root) and its own. */
typedef struct {
  char trace[33];
  char parent[17];
  char span[17];
} trace_span_t;

typedef struct {
  uv_loop_t loop;
  fleet_client_t client;
  fleet_queue_t queue;
  fleet_worker_t worker;
  int jobs;    /* to produce */
  int ended;   /* spans ended */
  int handles; /* open handles */
  int status;  /* the exit status */
} trace_app_t;

/* Writes `n` random bytes as 2 * n lowercase hex digits and a NUL to
 * `out`; W3C ids are never all zeros. */
static void trace_id(char *out, size_t n) {
  unsigned char b[16];
  size_t i;
  int zero = 1;

  if (uv_random(NULL, NULL, b, n, 0, NULL) != 0)
    memset(b, 0, n);
  for (i = 0; i < n; i++)
    zero &= b[i] == 0;
  if (zero)
    b[n - 1] = 1;
  for (i = 0; i < n; i++)
    snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* Whether s[0..n) are lowercase hex digits. */
static int trace_hex(const char *s, size_t n) {
  size_t i;

  for (i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return 0;
  return 1;
}

/* Reads a traceparent of version 00, "00-<32 hex>-<16 hex>-<2 hex>", into
 * the trace id and the parent span id of `s`. Returns 0, or -1 when it is
 * not one. */
static int trace_parse(const char *tp, trace_span_t *s) {
  if (tp == NULL || strlen(tp) != 55 || strncmp(tp, "00-", 3) != 0 ||
      tp[35] != '-' || tp[52] != '-' || !trace_hex(tp + 3, 32) ||
      !trace_hex(tp + 36, 16) || !trace_hex(tp + 53, 2))
    return -1;
  memcpy(s->trace, tp + 3, 32);
  s->trace[32] = '\0';
  memcpy(s->parent, tp + 36, 16);
  s->parent[16] = '\0';
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Closing                                                                  */

static void trace_on_client_closed(fleet_client_t *client) {
  (void)client;
}

static void trace_on_closed(fleet_handle_t *h) {
  trace_app_t *app = h->data;

  if (--app->handles == 0)
    fleet_client_close(&app->client, trace_on_client_closed);
}

static void trace_close(trace_app_t *app, int status) {
  if (status != 0)
    app->status = status;
  if (fleet_worker_close(&app->worker, trace_on_closed) == 0)
    app->handles++;
  if (fleet_queue_close(&app->queue, trace_on_closed) == 0)
    app->handles++;
}

/* ------------------------------------------------------------------------ */
/* The worker: hooks and handler                                            */

/* Before the handler: a child span of the job's traceparent (a root span
 * when it has none, or one fleet cannot read). */
static void trace_before(fleet_worker_t *w, fleet_job_t *job, void *arg) {
  trace_span_t *s = calloc(1, sizeof(*s));

  (void)w;
  (void)arg;
  if (s == NULL)
    return;
  if (trace_parse(fleet_job_header(job, "traceparent"), s) != 0)
    trace_id(s->trace, 16);
  trace_id(s->span, 8);
  printf("span start trace=%s parent=%s span=%s job=%s\n", s->trace,
         s->parent[0] != '\0' ? s->parent : "none", s->span, job->id);
  job->hook_data = s;
}

/* Once the job's outcome is settled: the span ends. */
static void trace_after(fleet_worker_t *w, fleet_job_t *job,
                        fleet_job_outcome_t outcome, int status,
                        uint64_t duration_ns, void *arg) {
  trace_app_t *app = arg;
  trace_span_t *s = job->hook_data;

  (void)w;
  if (s != NULL) {
    printf("span end trace=%s span=%s outcome=%s duration_us=%" PRIu64 "\n",
           s->trace, s->span, fleet_job_outcome_name(outcome),
           duration_ns / 1000);
    free(s);
  }
  if (status != 0 && status != FLEET_EALREADY)
    app->status = 1;
  fflush(stdout);
  if (++app->ended == app->jobs)
    trace_close(app, 0);
}

static void trace_on_timer_closed(uv_handle_t *h) {
  free(h);
}

static void trace_on_work(uv_timer_t *timer) {
  fleet_job_t *job = timer->data;

  if (fleet_job_complete(job) != 0)
    fleet_job_fail(job, "complete refused", 16);
  uv_close((uv_handle_t *)timer, trace_on_timer_closed);
}

/* The job's work: 5 ms on the loop. */
static void trace_handler(fleet_worker_t *w, fleet_job_t *job) {
  uv_timer_t *timer = malloc(sizeof(*timer));

  (void)w;
  if (timer == NULL || uv_timer_init(&((trace_app_t *)w->data)->loop, timer)) {
    free(timer);
    fleet_job_fail(job, "out of memory", 13);
    return;
  }
  timer->data = job;
  uv_timer_start(timer, trace_on_work, 5, 0);
}

static void trace_on_error(fleet_handle_t *h, int status, const char *detail) {
  (void)h;
  fprintf(stderr, "trace: %s: %s\n", fleet_err_name(status), detail);
}

/* ------------------------------------------------------------------------ */
/* The producer                                                             */

static void trace_on_enqueued(fleet_queue_t *q, int status,
                              const fleet_enqueue_result_t *results, size_t n,
                              void *ud) {
  trace_span_t *s = ud;

  if (status != 0 || n != 1 || results[0].status != 0) {
    fprintf(stderr, "trace: enqueue: %s\n",
            fleet_err_name(status != 0 ? status : results[0].status));
    trace_close(q->data, 1);
  } else {
    printf("produce trace=%s span=%s job=%s\n", s->trace, s->span,
           results[0].id);
    fflush(stdout);
  }
  free(s);
}

/* Starts a trace and enqueues a job with its traceparent. */
static int trace_produce(trace_app_t *app) {
  char tp[56];
  fleet_header_t h = {"traceparent", tp};
  fleet_job_spec_t spec;
  trace_span_t *s = calloc(1, sizeof(*s));
  int err;

  if (s == NULL)
    return FLEET_ENOMEM;
  trace_id(s->trace, 16);
  trace_id(s->span, 8);
  snprintf(tp, sizeof(tp), "00-%s-%s-01", s->trace, s->span);
  fleet_job_spec_init(&spec, "traced", "work", 4);
  spec.headers = &h;
  spec.nheaders = 1;
  err = fleet_queue_enqueue(&app->queue, &spec, 1, trace_on_enqueued, s);
  if (err != 0)
    free(s);
  return err;
}

int main(int argc, char **argv) {
  static trace_app_t app;
  fleet_worker_options_t o;
  const char *url = argc > 1 ? argv[1] : fleet_url_from_env();
  int i, err;

  app.jobs = argc > 2 ? atoi(argv[2]) : 3;
  if (app.jobs < 1 || app.jobs > 1000) {
    fprintf(stderr, "usage: trace [URL [JOBS (1..1000)]]\n");
    return 2;
  }
  uv_loop_init(&app.loop);
  err = fleet_client_init(&app.loop, &app.client,
                          url != NULL ? url : "memory://", NULL);
  if (err != 0) {
    fprintf(stderr, "trace: %s\n", fleet_strerror(err));
    return 1;
  }
  fleet_worker_options_init(&o);
  o.before = trace_before;
  o.after = trace_after;
  o.hook_arg = &app;
  o.error_cb = trace_on_error;
  if ((err = fleet_queue_init(&app.client, &app.queue, TRACE_QUEUE, NULL)) !=
          0 ||
      (err = fleet_worker_init(&app.client, &app.worker, TRACE_QUEUE, &o)) !=
          0) {
    fprintf(stderr, "trace: %s\n", fleet_strerror(err));
    return 1;
  }
  app.queue.data = &app;
  app.worker.data = &app;
  if ((err = fleet_worker_start(&app.worker, trace_handler)) != 0) {
    fprintf(stderr, "trace: %s\n", fleet_strerror(err));
    trace_close(&app, 1);
    app.jobs = 0;
  }
  for (i = 0; i < app.jobs; i++)
    if ((err = trace_produce(&app)) != 0) {
      fprintf(stderr, "trace: enqueue: %s\n", fleet_strerror(err));
      trace_close(&app, 1);
      break;
    }
  uv_run(&app.loop, UV_RUN_DEFAULT);
  uv_loop_close(&app.loop);
  return app.status;
}
