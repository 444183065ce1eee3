/* bench_queue.c -- fleet-bench queue: bulk enqueue, the Redis memory a
 * pending job takes, processing with one worker at a concurrency on no-op
 * jobs, and end-to-end latency (enqueue call to accepted completion) at a
 * fixed rate, with the CPU per job of this process and of redis-server.
 *
 *   fleet-bench queue [--url URL] [--seconds S] [--concurrency C]
 *                     [--rate R] [--jobs N] [--pending N] [--keep K]
 *                     [--held-seconds S] [--life] [--flow]
 *                     [--partitions P]
 *
 * Metrics: enqueue_bulk_* (N jobs with an empty payload, default 100000),
 * pending_bytes_per_job (the server's used_memory delta over those N
 * pending jobs, over N), process_c<C>_* (processing them), e2e_<R>_*
 * (rates, and p50/p99 from the enqueue call to the accepted completion),
 * pickup_<R>_* (p50/p99 from the enqueue call to the handler).
 *
 * Flow control (docs/queue.md, "Flow control"), side by side with the
 * unlimited processing above and on the same number of jobs:
 * process_c<C>_limit_* (a rate limit of FLEET_LIMIT_RATE_MAX per second and
 * a concurrency limit of as many, both far above the rate reached) and
 * process_c<C>_groups1000_* (the jobs spread over 1000 groups, round-robin),
 * each with *_ops_ratio and *_server_cpu_ratio against the unlimited run
 * (the medians of BQ_ROUNDS rounds of the three, in turn: bq_flow);
 * pending_grouped_bytes_per_job (used_memory over the N grouped jobs, per
 * job) and pending_grouped_extra_bytes_per_job (that less the ungrouped
 * figure); and rate_held_* (a limit of 1000 jobs per second, 4 workers on
 * their own connections, for --held-seconds, default 10: the jobs per
 * second achieved, as a percentage of the limit, and the most claimed in
 * any 1000 ms of the backend clock and handled in any 1000 ms of this
 * process's).
 *
 * Flows (docs/queue.md, "Flows"): deps10_server_cpu_ratio, the server CPU
 * of BQ_DEPS_FLOWS flows of 10 children each (added one call per flow,
 * each child and parent processed) over that of 10 times as many plain
 * jobs (enqueued in batches, processed), enqueue included in both; the
 * median of BQ_ROUNDS rounds of the two, in turn; deps10_plain_* and
 * deps10_flows_* give the rates of the first round (per job processed).
 *
 * With --pending N, only one measurement instead: N jobs are queued first,
 * then the worker processes for S seconds while the producer tops the
 * queue up in batches, so about N jobs stay pending throughout. Metrics:
 * process_c<C>_pending<N>_* (processed jobs; the CPU includes the
 * top-ups).
 *
 * Results and events (docs/queue.md, "Results", "Progress and events"),
 * side by side with the default processing, on the same number of jobs:
 * process_c<C>_result_events_* completes each job with a 100-byte result
 * while one event subscriber listens (on a queue of its own, so that the
 * default runs stay without subscriber), with *_ops_ratio and
 * *_server_cpu_ratio against the default run (medians of BQ_ROUNDS rounds
 * of the two in turn) and *_events_per_job (the completed events heard,
 * per job: 1 when none was missed). With --life, only these runs; with
 * --flow, only the bulk enqueue, the default processing and the flow
 * control runs.
 *
 * The worker keeps no record of completed jobs (the default,
 * FLEET_QUEUE_KEEP_NONE). With --keep K it keeps the last K for an hour
 * (keep_completed = K), which measures what keeping them costs: the
 * process, e2e and pickup labels get "_keep". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BQ_BATCH 1000
/* Top-up batches in flight with --pending. */
#define BQ_TOPUP_INFLIGHT 4
/* The bound on queueing the jobs of --jobs or --pending, whatever --seconds
 * says: a million jobs take about 15 s. */
#define BQ_FILL_SECONDS 120
/* The groups of the groups run, and the rate-held run's limit and
 * workers. */
#define BQ_GROUPS 1000
/* Rounds of the flow runs (bq_flow): the ratios are their medians. */
#define BQ_ROUNDS 5
#define BQ_HELD_RATE 1000
/* The flows of the flows' run, and their children each, and flow calls
 * in flight. */
#define BQ_DEPS_FLOWS 2000
#define BQ_DEPS_KIDS 10
#define BQ_DEPS_INFLIGHT 64
/* The result of each job of the result and events runs, in bytes. */
#define BQ_RESULT_LEN 100
#define BQ_HELD_WORKERS 4

typedef struct {
  uv_loop_t loop;
  fleet_client_t producer; /* enqueues, as a producer process would */
  fleet_client_t consumer; /* the worker's own connection */
  fleet_queue_t q;
  fleet_worker_t w;
  fleet_job_spec_t specs[BQ_BATCH];
  uint64_t enqueued;
  uint64_t completed;
  uint64_t fill;    /* jobs the bulk enqueue adds in all */
  uint64_t pending; /* --pending: the depth the top-ups keep, or 0 */
  uint32_t topup_batch;
  int topups; /* top-up batches in flight */
  int error;
  /* Latency run. */
  uv_timer_t pacer;
  uint64_t t0_ns, sent, rate, total;
  bench_lat_t lat;    /* enqueue call to accepted completion */
  bench_lat_t pickup; /* enqueue call to the handler */
  int worker_closed, queue_closed;
  int shared;         /* the worker uses the producer's client */
  const char *suffix; /* of the process, e2e, pickup labels: "" or "_keep" */
  uint32_t keep;      /* --keep: keep_completed, or 0 for the default */
  int stopped;        /* the worker's stop callback ran */
  int quiet;          /* bq_process emits nothing (the flow's rounds) */
  int limits_set;     /* the set-limits callback ran (its status + 1) */
  const char *name;   /* the queue's name: "bench" unless set */
  int result;         /* complete with a BQ_RESULT_LEN-byte result */
  /* The result and events runs: the subscriber's queue handle, and what
   * it heard. */
  fleet_queue_t evq;
  int ev_live, evq_closed;
  uint64_t ev_completed;
  char groups[BQ_GROUPS][8];
  /* The flows' run: flows added, their calls in flight. */
  uint64_t flows_added;
  int flows_inflight;
  /* --partitions: the queue's partitions (0: a plain queue). */
  uint32_t parts;
  int flow_only; /* --flow */
  int base_done; /* the default processing was emitted (not with --life) */
} bq_t;

/* What one processing run measured. */
typedef struct {
  double ops_per_s;
  double server_us_per_op; /* -1: unknown */
} bq_result_t;

/* ------------------------------------------------------------------------ */
/* Bulk enqueue                                                             */

static void bq_on_bulk(fleet_queue_t *q, int status,
                       const fleet_enqueue_result_t *r, size_t n, void *arg) {
  bq_t *b = q->data;
  if (status == 0)
    b->enqueued += n;
  bench_slot_done(arg, status);
}

/* Enqueues the next batch; the last one holds what is left of b->fill. */
static int bq_bulk_start(bench_slot_t *slot) {
  bq_t *b = slot->driver->ctx;
  uint64_t before = (slot->driver->started - 1) * BQ_BATCH;
  size_t n =
      b->fill - before < BQ_BATCH ? (size_t)(b->fill - before) : BQ_BATCH;

  return fleet_queue_enqueue(&b->q, b->specs, n, bq_on_bulk, slot);
}

/* Enqueues b->fill jobs in batches of BQ_BATCH, four in flight. Returns 0
 * or the first error. */
static int bq_fill(bq_t *b) {
  bench_driver_t d = {0};
  int err;

  d.loop = &b->loop;
  d.inflight = 4;
  d.max_ops = (b->fill + BQ_BATCH - 1) / BQ_BATCH;
  d.seconds = BQ_FILL_SECONDS;
  d.start = bq_bulk_start;
  d.ctx = b;
  err = bench_drive(&d);
  bench_lat_free(&d.lat);
  if (err == 0 && b->enqueued < b->fill)
    err = FLEET_ETIMEDOUT;
  if (err != 0)
    fprintf(stderr, "fleet-bench queue: enqueue: %s after %llu jobs\n",
            fleet_strerror(err), (unsigned long long)b->enqueued);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Processing                                                               */

/* A no-op job; in the latency run it records when it was picked up. */
static void bq_handler(fleet_worker_t *w, fleet_job_t *job) {
  bq_t *b = w->data;
  uint64_t sent_ns;

  if (b->rate > 0 && job->payload.len == sizeof(sent_ns)) {
    memcpy(&sent_ns, job->payload.base, sizeof(sent_ns));
    bench_lat_add(&b->pickup, uv_hrtime() - sent_ns);
  }
  if (b->result) {
    static const char result[BQ_RESULT_LEN];
    fleet_job_complete_result(job, result, sizeof(result));
  } else {
    fleet_job_complete(job);
  }
}

static void bq_top_up(bq_t *b);

static void bq_on_topup(fleet_queue_t *q, int status,
                        const fleet_enqueue_result_t *r, size_t n, void *arg) {
  bq_t *b = q->data;

  b->topups--;
  if (status != 0) {
    if (b->error == 0)
      b->error = status;
    return;
  }
  b->enqueued += n;
  bq_top_up(b);
}

/* With --pending, enqueues batches while the jobs queued or on their way
 * stay at most b->pending. */
static void bq_top_up(bq_t *b) {
  uint64_t queued;
  int err;

  while (b->pending > 0 && b->error == 0 && b->topups < BQ_TOPUP_INFLIGHT) {
    queued = b->enqueued - b->completed + (uint64_t)b->topups * b->topup_batch;
    if (queued + b->topup_batch > b->pending)
      return;
    err =
        fleet_queue_enqueue(&b->q, b->specs, b->topup_batch, bq_on_topup, NULL);
    if (err != 0) {
      b->error = err;
      return;
    }
    b->topups++;
  }
}

static void bq_done(fleet_worker_t *w, fleet_job_t *job,
                    fleet_job_action_t action, int status) {
  bq_t *b = w->data;
  uint64_t sent_ns;

  if (status != 0 && b->error == 0)
    b->error = status;
  b->completed++;
  if (b->rate > 0 && job->payload.len == sizeof(sent_ns)) {
    memcpy(&sent_ns, job->payload.base, sizeof(sent_ns));
    bench_lat_add(&b->lat, uv_hrtime() - sent_ns);
  }
  bq_top_up(b);
}

static void bq_on_worker_closed(fleet_handle_t *w) {
  bq_t *b = w->data;
  b->worker_closed = 1;
}

static void bq_on_stopped(fleet_handle_t *w_h, int status, void *user_data) {
  fleet_worker_t *w = (fleet_worker_t *)w_h;
  fleet_worker_close(w, bq_on_worker_closed);
}

/* Runs the loop until `b->completed` reaches `target`, an error, or
 * `seconds` pass. */
static void bq_run_until(bq_t *b, uint64_t target, double seconds) {
  uint64_t deadline = uv_hrtime() + (uint64_t)(seconds * 1e9);

  while (b->completed < target && b->error == 0 && uv_hrtime() < deadline)
    uv_run(&b->loop, UV_RUN_ONCE);
}

/* ------------------------------------------------------------------------ */
/* Latency at a fixed rate                                                  */

static void bq_on_single(fleet_queue_t *q, int status,
                         const fleet_enqueue_result_t *r, size_t n, void *arg) {
  bq_t *b = q->data;
  if (status != 0 && b->error == 0)
    b->error = status;
}

/* Every millisecond: enqueue, one call per job, the jobs due by now at
 * the rate; each carries its send time. */
static void bq_on_pace(uv_timer_t *t) {
  bq_t *b = t->data;
  uint64_t now = uv_hrtime();
  uint64_t due = (now - b->t0_ns) * b->rate / 1000000000u;
  fleet_job_spec_t spec;

  if (due > b->total)
    due = b->total;
  while (b->sent < due) {
    uint64_t stamp = uv_hrtime();
    fleet_job_spec_init(&spec, "bench", &stamp, sizeof(stamp));
    if (fleet_queue_enqueue(&b->q, &spec, 1, bq_on_single, NULL) != 0) {
      b->error = FLEET_ENOMEM;
      break;
    }
    b->sent++;
  }
  if (b->sent >= b->total)
    uv_timer_stop(t);
}

/* ------------------------------------------------------------------------ */
/* The subcommand                                                           */

static int bq_open(bq_t *b, const bench_opts_t *o, uint32_t concurrency) {
  fleet_queue_options_t qo;
  fleet_worker_options_t wo;
  int err;

  if (bench_client_open(&b->loop, &b->producer, o) != 0)
    return 1;
  /* A memory:// client has a store of its own: the worker shares the
   * producer's client there. */
  b->shared = strncmp(o->url, "memory:", 7) == 0;
  if (!b->shared && bench_client_open(&b->loop, &b->consumer, o) != 0) {
    bench_client_close(&b->loop, &b->producer);
    return 1;
  }
  b->q.data = b;
  fleet_worker_options_init(&wo);
  wo.concurrency = concurrency;
  if (b->keep != 0)
    wo.queue.keep_completed = b->keep;
  wo.done_cb = bq_done;
  b->w.data = b;
  if (b->name == NULL)
    b->name = "bench";
  fleet_queue_options_init(&qo);
  qo.partitions = b->parts;
  wo.queue.partitions = b->parts;
  err = fleet_queue_init(&b->producer, &b->q, b->name, &qo);
  if (err == 0)
    err = fleet_worker_init(b->shared ? &b->producer : &b->consumer, &b->w,
                            b->name, &wo);
  if (err != 0) {
    fprintf(stderr, "fleet-bench queue: %s\n", fleet_strerror(err));
    return 1;
  }
  return 0;
}

static void bq_on_queue_closed(fleet_handle_t *q) {
  bq_t *b = q->data;
  b->queue_closed = 1;
}

/* Stops and closes the worker, the queue handle and both clients. */
static void bq_close(bq_t *b) {
  if (fleet_worker_stop(&b->w, 5000, bq_on_stopped, NULL) != 0)
    fleet_worker_close(&b->w, bq_on_worker_closed);
  fleet_queue_close(&b->q, bq_on_queue_closed);
  uv_close((uv_handle_t *)&b->pacer, NULL);
  while (!b->worker_closed || !b->queue_closed)
    uv_run(&b->loop, UV_RUN_ONCE);
  fleet_client_close(&b->producer, NULL);
  if (!b->shared)
    fleet_client_close(&b->consumer, NULL);
  uv_run(&b->loop, UV_RUN_DEFAULT);
}

/* --pending: queues `pending` jobs, then processes for --seconds while
 * the top-ups keep about that many queued. */
static int bq_pending(bq_t *b, const bench_opts_t *o, long concurrency,
                      int pid) {
  bench_cpu_t c0, c1;
  char label[48];
  int err;

  b->fill = b->pending;
  err = bq_fill(b);
  if (err != 0)
    return err;
  b->topup_batch =
      b->pending / 4 < BQ_BATCH ? (uint32_t)(b->pending / 4) : BQ_BATCH;
  if (b->topup_batch == 0)
    b->topup_batch = 1;
  bench_cpu_sample(&c0, pid);
  err = fleet_worker_start(&b->w, bq_handler);
  if (err != 0) {
    fprintf(stderr, "fleet-bench queue: start: %s\n", fleet_strerror(err));
    return err;
  }
  bq_run_until(b, UINT64_MAX, o->seconds);
  bench_cpu_sample(&c1, pid);
  b->pending = 0;
  if (b->error != 0) {
    fprintf(stderr, "fleet-bench queue: process: %s\n",
            fleet_strerror(b->error));
    return b->error;
  }
  snprintf(label, sizeof(label), "process_c%ld_pending%llu%s", concurrency,
           (unsigned long long)b->fill, b->suffix);
  bench_emit_rates("queue", label, b->completed, &c0, &c1);
  return 0;
}

static void bq_on_stop_done(fleet_handle_t *w, int status, void *arg) {
  bq_t *b = arg;
  b->stopped = 1;
}

/* Starts the worker, runs until it processed what was enqueued, stops it,
 * and emits the rates under `label`; `res` gets them. */
static int bq_process(bq_t *b, const bench_opts_t *o, const char *label,
                      int pid, bq_result_t *res) {
  bench_cpu_t c0, c1;
  double secs;
  int err;

  b->completed = 0;
  bench_cpu_sample(&c0, pid);
  err = fleet_worker_start(&b->w, bq_handler);
  if (err != 0) {
    fprintf(stderr, "fleet-bench queue: start: %s\n", fleet_strerror(err));
    return err;
  }
  bq_run_until(b, b->enqueued, o->seconds * 5);
  bench_cpu_sample(&c1, pid);
  b->stopped = 0;
  if (fleet_worker_stop(&b->w, 5000, bq_on_stop_done, b) == 0)
    while (!b->stopped)
      uv_run(&b->loop, UV_RUN_ONCE);
  if (b->error != 0) {
    fprintf(stderr, "fleet-bench queue: %s: %s\n", label,
            fleet_strerror(b->error));
    return b->error;
  }
  if (!b->quiet)
    bench_emit_rates("queue", label, b->completed, &c0, &c1);
  secs = (double)(c1.wall_ns - c0.wall_ns) / 1e9;
  res->ops_per_s = secs > 0 ? (double)b->completed / secs : 0;
  res->server_us_per_op =
      c0.server_us >= 0 && c1.server_us >= 0 && b->completed > 0
          ? (double)(c1.server_us - c0.server_us) / (double)b->completed
          : -1;
  return 0;
}

static void bq_on_limits(fleet_handle_t *q, int status, void *arg) {
  bq_t *b = arg;
  b->limits_set = status + 1;
}

/* Sets the limits of queue `q` (NULL: clears them) and waits for it. */
static int bq_set_limits(bq_t *b, fleet_queue_t *q,
                         const fleet_queue_limits_t *l) {
  int err;

  b->limits_set = 0;
  err = fleet_queue_set_limits(q, l, bq_on_limits, b);
  if (err == 0) {
    while (b->limits_set == 0)
      uv_run(&b->loop, UV_RUN_ONCE);
    err = b->limits_set - 1;
  }
  if (err != 0)
    fprintf(stderr, "fleet-bench queue: set limits: %s\n", fleet_strerror(err));
  return err;
}

/* The median of n values (n <= BQ_ROUNDS). */
static double bq_median(double *v, int n) {
  int i, j;

  for (i = 1; i < n; i++)
    for (j = i; j > 0 && v[j] < v[j - 1]; j--) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One flow run: the limits `l` (NULL: none), the jobs in groups or not,
 * `label` for its rates (emitted in the first round only). */
static int bq_flow_run(bq_t *b, const bench_opts_t *o, int pid,
                       const fleet_queue_limits_t *l, int grouped,
                       uint64_t jobs, const char *label, double *per_job_bytes,
                       bq_result_t *r) {
  int64_t m0, m1;
  int err, i;

  if (l != NULL && (err = bq_set_limits(b, &b->q, l)) != 0)
    return err;
  for (i = 0; i < BQ_BATCH; i++)
    b->specs[i].group = grouped ? b->groups[i % BQ_GROUPS] : NULL;
  b->enqueued = 0;
  b->fill = jobs;
  m0 = bench_server_memory(pid);
  err = bq_fill(b);
  m1 = bench_server_memory(pid);
  for (i = 0; i < BQ_BATCH; i++)
    b->specs[i].group = NULL;
  if (err != 0)
    return err;
  if (per_job_bytes != NULL)
    *per_job_bytes = m0 >= 0 && m1 >= 0 && b->enqueued > 0
                         ? (double)(m1 - m0) / (double)b->enqueued
                         : -1;
  if ((err = bq_process(b, o, label, pid, r)) != 0)
    return err;
  if (l != NULL && (err = bq_set_limits(b, &b->q, NULL)) != 0)
    return err;
  return 0;
}

/* The flow-control runs, after the unlimited one (`base`, on `jobs` jobs
 * that used `plain_bytes` of server memory each, or -1): a queue-wide
 * rate and concurrency limit far above the rate reached, then the jobs
 * spread over BQ_GROUPS groups. The server's CPU per job drifts between
 * runs by more than the differences measured (on a shared machine, by a
 * quarter), so the three are run BQ_ROUNDS times in turn, unlimited,
 * limited, grouped, and each ratio is the median of the rounds' ratios
 * to the unlimited run of the same round. The rates of the first round
 * are emitted as measured. */
static int bq_flow(bq_t *b, const bench_opts_t *o, long concurrency, int pid,
                   uint64_t jobs, double plain_bytes, const bq_result_t *base) {
  double lim_cpu[BQ_ROUNDS], lim_ops[BQ_ROUNDS], grp_cpu[BQ_ROUNDS],
      grp_ops[BQ_ROUNDS], bytes = -1;
  fleet_queue_limits_t l;
  bq_result_t r0, rl, rg;
  char llabel[64], glabel[64], metric[96];
  int err, k, n = 0;

  memset(&l, 0, sizeof(l));
  l.rate_max = FLEET_LIMIT_RATE_MAX;
  l.rate_ms = 1000;
  l.concurrency = FLEET_LIMIT_RATE_MAX;
  snprintf(llabel, sizeof(llabel), "process_c%ld_limit%s", concurrency,
           b->suffix);
  snprintf(glabel, sizeof(glabel), "process_c%ld_groups%d%s", concurrency,
           BQ_GROUPS, b->suffix);
  r0 = *base;
  for (k = 0; k < BQ_ROUNDS; k++) {
    if (k > 0) {
      b->quiet = 1;
      if ((err = bq_flow_run(b, o, pid, NULL, 0, jobs, "", NULL, &r0)) != 0)
        break;
    }
    if ((err = bq_flow_run(b, o, pid, &l, 0, jobs, llabel, NULL, &rl)) != 0 ||
        (err = bq_flow_run(b, o, pid, NULL, 1, jobs, glabel,
                           k == 0 ? &bytes : NULL, &rg)) != 0)
      break;
    b->quiet = 1;
    if (r0.ops_per_s <= 0 || r0.server_us_per_op <= 0 ||
        rl.server_us_per_op < 0 || rg.server_us_per_op < 0)
      continue;
    lim_ops[n] = rl.ops_per_s / r0.ops_per_s;
    lim_cpu[n] = rl.server_us_per_op / r0.server_us_per_op;
    grp_ops[n] = rg.ops_per_s / r0.ops_per_s;
    grp_cpu[n] = rg.server_us_per_op / r0.server_us_per_op;
    n++;
  }
  b->quiet = 0;
  if (err != 0)
    return err;
  if (bytes >= 0) {
    bench_emit("queue", "pending_grouped_bytes_per_job", bytes, "B/job");
    if (plain_bytes >= 0)
      bench_emit("queue", "pending_grouped_extra_bytes_per_job",
                 bytes - plain_bytes, "B/job");
  }
  if (n == 0)
    return 0;
  snprintf(metric, sizeof(metric), "%s_ops_ratio", llabel);
  bench_emit("queue", metric, bq_median(lim_ops, n), "x");
  snprintf(metric, sizeof(metric), "%s_server_cpu_ratio", llabel);
  bench_emit("queue", metric, bq_median(lim_cpu, n), "x");
  snprintf(metric, sizeof(metric), "%s_ops_ratio", glabel);
  bench_emit("queue", metric, bq_median(grp_ops, n), "x");
  snprintf(metric, sizeof(metric), "%s_server_cpu_ratio", glabel);
  bench_emit("queue", metric, bq_median(grp_cpu, n), "x");
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Flows                                                                    */

static void bq_on_flow(fleet_queue_t *q, int status,
                       const fleet_flow_result_t *r, void *arg) {
  bq_t *b = q->data;

  b->flows_inflight--;
  if (status != 0 && b->error == 0)
    b->error = status;
  else if (status == 0)
    b->flows_added++;
}

/* Adds `flows` flows of BQ_DEPS_KIDS children, BQ_DEPS_INFLIGHT calls at
 * a time. Returns 0 or the first error. */
static int bq_deps_add(bq_t *b, uint64_t flows) {
  fleet_flow_child_t kids[BQ_DEPS_KIDS];
  fleet_flow_spec_t f;
  uint64_t sent = 0;
  int i, err;

  fleet_flow_spec_init(&f, "bench-parent", NULL, 0);
  for (i = 0; i < BQ_DEPS_KIDS; i++) {
    memset(&kids[i], 0, sizeof(kids[i]));
    fleet_job_spec_init(&kids[i].spec, "bench", NULL, 0);
  }
  f.children = kids;
  f.n_children = BQ_DEPS_KIDS;
  b->flows_added = 0;
  while (b->error == 0 && b->flows_added < flows) {
    while (sent < flows && b->flows_inflight < BQ_DEPS_INFLIGHT) {
      if ((err = fleet_queue_add_flow(&b->q, &f, bq_on_flow, NULL)) != 0) {
        b->error = err;
        break;
      }
      sent++;
      b->flows_inflight++;
    }
    uv_run(&b->loop, UV_RUN_ONCE);
  }
  while (b->flows_inflight > 0)
    uv_run(&b->loop, UV_RUN_ONCE);
  return b->error;
}

/* One side of the flows' run: BQ_DEPS_FLOWS flows (`flows` 1) or 10
 * times as many plain jobs, added then processed; `server_us` gets the
 * server's CPU for both (-1: unknown), `label` the rates (when not
 * quiet). */
static int bq_deps_run(bq_t *b, const bench_opts_t *o, int pid, int flows,
                       const char *label, double *server_us) {
  bench_cpu_t c0, c1;
  bq_result_t r;
  int err;

  bench_cpu_sample(&c0, pid);
  if (flows) {
    err = bq_deps_add(b, BQ_DEPS_FLOWS);
    b->enqueued = BQ_DEPS_FLOWS * (BQ_DEPS_KIDS + 1);
  } else {
    b->enqueued = 0;
    b->fill = BQ_DEPS_FLOWS * BQ_DEPS_KIDS;
    err = bq_fill(b);
  }
  if (err != 0) {
    fprintf(stderr, "fleet-bench queue: %s: %s\n", label, fleet_strerror(err));
    return err;
  }
  if ((err = bq_process(b, o, label, pid, &r)) != 0)
    return err;
  bench_cpu_sample(&c1, pid);
  *server_us = c0.server_us >= 0 && c1.server_us >= 0
                   ? (double)(c1.server_us - c0.server_us)
                   : -1;
  return 0;
}

/* The flows' run: plain jobs and flows in turn, BQ_ROUNDS rounds; the
 * ratio of their server CPU, the median of the rounds'. */
static int bq_deps(bq_t *b, const bench_opts_t *o, int pid) {
  double ratio[BQ_ROUNDS], plain, flows;
  uint64_t fill = b->fill;
  int err = 0, k, n = 0;

  for (k = 0; k < BQ_ROUNDS; k++) {
    b->quiet = k > 0;
    if ((err = bq_deps_run(b, o, pid, 0, "deps10_plain", &plain)) != 0 ||
        (err = bq_deps_run(b, o, pid, 1, "deps10_flows", &flows)) != 0)
      break;
    if (plain > 0 && flows >= 0)
      ratio[n++] = flows / plain;
  }
  b->quiet = 0;
  b->fill = fill;
  if (err == 0 && n > 0)
    bench_emit("queue", "deps10_server_cpu_ratio", bq_median(ratio, n), "x");
  return err;
}

/* ------------------------------------------------------------------------ */
/* Results and events                                                       */

static void bq_on_event(fleet_queue_t *q, int status,
                        const fleet_queue_event_t *ev, void *arg) {
  bq_t *b = arg;

  if (ev == NULL)
    b->ev_live++;
  else if (ev->type == FLEET_EVENT_COMPLETED && ev->data.len == BQ_RESULT_LEN)
    b->ev_completed++;
}

static void bq_on_evq_closed(fleet_handle_t *q) {
  bq_t *b = q->data;
  b->evq_closed = 1;
}

/* The result and events runs, side by side with the default processing
 * of `b` on `jobs` jobs: a second worker on a queue of its own completes
 * each job with a BQ_RESULT_LEN-byte result while a subscriber (a queue
 * handle of the producer's client) listens to that queue's events. As in
 * bq_flow, BQ_ROUNDS rounds of the two in turn, and the medians of the
 * ratios. */
static int bq_life(bq_t *b, const bench_opts_t *o, long concurrency, int pid,
                   uint64_t jobs) {
  double cpu[BQ_ROUNDS], ops[BQ_ROUNDS];
  bq_result_t r0, r1;
  char label[64], blabel[48], metric[96];
  bq_t *lb = calloc(1, sizeof(*lb));
  int err = 0, k, n = 0, i;

  if (lb == NULL)
    return FLEET_ENOMEM;
  uv_loop_init(&lb->loop);
  uv_timer_init(&lb->loop, &lb->pacer);
  lb->pacer.data = lb;
  lb->name = "bench_life";
  lb->result = 1;
  lb->suffix = b->suffix;
  lb->keep = b->keep;
  if (bq_open(lb, o, (uint32_t)concurrency) != 0) {
    free(lb);
    return 1;
  }
  for (i = 0; i < BQ_BATCH; i++)
    fleet_job_spec_init(&lb->specs[i], "bench", NULL, 0);
  lb->evq.data = lb;
  err = fleet_queue_init(&lb->producer, &lb->evq, lb->name, NULL);
  if (err == 0)
    err = fleet_queue_events_start(&lb->evq, NULL, bq_on_event, lb);
  while (err == 0 && lb->ev_live == 0)
    uv_run(&lb->loop, UV_RUN_ONCE);
  snprintf(label, sizeof(label), "process_c%ld_result_events%s", concurrency,
           b->suffix);
  snprintf(blabel, sizeof(blabel), "process_c%ld%s", concurrency, b->suffix);
  for (k = 0; err == 0 && k < BQ_ROUNDS; k++) {
    /* (With --life alone, the first default run is emitted too.) */
    b->quiet = k > 0 || b->base_done;
    lb->quiet = k > 0;
    if ((err = bq_flow_run(b, o, pid, NULL, 0, jobs, blabel, NULL, &r0)) != 0 ||
        (err = bq_flow_run(lb, o, pid, NULL, 0, jobs, label, NULL, &r1)) != 0)
      break;
    if (r0.ops_per_s <= 0 || r0.server_us_per_op <= 0 ||
        r1.server_us_per_op < 0)
      continue;
    ops[n] = r1.ops_per_s / r0.ops_per_s;
    cpu[n] = r1.server_us_per_op / r0.server_us_per_op;
    n++;
  }
  b->quiet = 0;
  if (err == 0 && n > 0) {
    snprintf(metric, sizeof(metric), "%s_ops_ratio", label);
    bench_emit("queue", metric, bq_median(ops, n), "x");
    snprintf(metric, sizeof(metric), "%s_server_cpu_ratio", label);
    bench_emit("queue", metric, bq_median(cpu, n), "x");
    snprintf(metric, sizeof(metric), "%s_events_per_job", label);
    bench_emit("queue", metric,
               (double)lb->ev_completed / (double)(jobs * BQ_ROUNDS), "x");
  }
  if (fleet_queue_close(&lb->evq, bq_on_evq_closed) == 0)
    while (!lb->evq_closed)
      uv_run(&lb->loop, UV_RUN_ONCE);
  bq_close(lb);
  uv_loop_close(&lb->loop);
  free(lb);
  return err;
}

/* ------------------------------------------------------------------------ */
/* A rate limit held                                                        */

/* The rate-held run: BQ_HELD_WORKERS workers, each on a connection of its
 * own (on memory://, the producer's), under a limit of BQ_HELD_RATE jobs
 * per 1000 ms, with a backlog that outlasts the run. */
typedef struct {
  fleet_client_t clients[BQ_HELD_WORKERS];
  fleet_worker_t w[BQ_HELD_WORKERS];
  fleet_queue_t q;
  uint64_t *at;      /* handler times, uv_hrtime() */
  uint64_t *claimed; /* the claims' backend times, in ms */
  uint32_t claim_ttl_ms;
  size_t n, cap;
  uint64_t t0, t1; /* the run: handler times counted in [t0, t1) */
  int closed;
} bq_held_t;

static void bq_held_handler(fleet_worker_t *w, fleet_job_t *job) {
  bq_held_t *h = w->data;
  uint64_t now = uv_hrtime();

  if (now >= h->t0 && now < h->t1 && h->n < h->cap) {
    /* (A claim's deadline is its backend time plus the claim TTL.) */
    h->claimed[h->n] = job->deadline_ms - h->claim_ttl_ms;
    h->at[h->n++] = now;
  }
  fleet_job_complete(job);
}

static void bq_held_closed(fleet_handle_t *x) {
  bq_held_t *h = x->data;
  h->closed++;
}

static void bq_held_client_closed(fleet_client_t *c) {
  bq_held_t *h = c->data;
  h->closed++;
}

/* The most entries of the sorted `at` in any `ns`. */
static size_t bq_most_in(const uint64_t *at, size_t n, uint64_t ns) {
  size_t i, j = 0, most = 0;

  for (i = 0; i < n; i++) {
    while (j < n && at[j] < at[i] + ns)
      j++;
    if (j - i > most)
      most = j - i;
  }
  return most;
}

static void bq_held_on_enqueued(fleet_queue_t *q, int status,
                                const fleet_enqueue_result_t *r, size_t n,
                                void *arg) {
  bq_t *b = arg;
  b->limits_set = status + 1;
}

static int bq_cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Enqueues `n` jobs of empty payloads to `q`, one batch at a time. */
static int bq_held_fill(bq_t *b, fleet_queue_t *q, uint64_t n) {
  uint64_t done = 0;
  size_t k;
  int err = 0;

  while (done < n && err == 0) {
    k = n - done < BQ_BATCH ? (size_t)(n - done) : BQ_BATCH;
    b->limits_set = 0;
    err = fleet_queue_enqueue(q, b->specs, k, bq_held_on_enqueued, b);
    while (err == 0 && b->limits_set == 0)
      uv_run(&b->loop, UV_RUN_ONCE);
    if (err == 0)
      err = b->limits_set - 1;
    done += k;
  }
  return err;
}

static int bq_rate_held(bq_t *b, const bench_opts_t *o, double seconds) {
  static bq_held_t h;
  fleet_worker_options_t wo;
  fleet_queue_limits_t l;
  int i, err, opened = 0, handles = 0;

  memset(&h, 0, sizeof(h));
  h.cap = (size_t)(seconds * BQ_HELD_RATE * 1.5) + BQ_HELD_RATE;
  h.at = calloc(h.cap, sizeof(*h.at));
  h.claimed = calloc(h.cap, sizeof(*h.claimed));
  if (h.at == NULL || h.claimed == NULL) {
    free(h.at);
    free(h.claimed);
    return FLEET_ENOMEM;
  }
  h.q.data = &h;
  err = fleet_queue_init(&b->producer, &h.q, "bench-held", NULL);
  if (err == 0)
    handles++;
  memset(&l, 0, sizeof(l));
  l.rate_max = BQ_HELD_RATE;
  l.rate_ms = 1000;
  if (err == 0)
    err = bq_set_limits(b, &h.q, &l);
  /* The backlog: what the run can take, and a second more. */
  if (err == 0)
    err = bq_held_fill(b, &h.q, (uint64_t)((seconds + 1) * BQ_HELD_RATE));
  for (; err == 0 && !b->shared && opened < BQ_HELD_WORKERS; opened++)
    if (bench_client_open(&b->loop, &h.clients[opened], o) != 0)
      err = FLEET_EUNAVAILABLE;
  for (i = 0; err == 0 && i < BQ_HELD_WORKERS; i++) {
    fleet_worker_options_init(&wo);
    wo.concurrency = 50;
    h.claim_ttl_ms = wo.claim_ttl_ms;
    h.w[i].data = &h;
    err = fleet_worker_init(b->shared ? &b->producer : &h.clients[i], &h.w[i],
                            "bench-held", &wo);
    if (err == 0)
      handles++;
  }
  h.t0 = uv_hrtime();
  h.t1 = h.t0 + (uint64_t)(seconds * 1e9);
  for (i = 0; err == 0 && i < BQ_HELD_WORKERS; i++)
    err = fleet_worker_start(&h.w[i], bq_held_handler);
  while (err == 0 && uv_hrtime() < h.t1)
    uv_run(&b->loop, UV_RUN_ONCE);
  if (err == 0 && h.n > 0) {
    bench_emit("queue", "rate_held_1000_jobs_per_s", (double)h.n / seconds,
               "jobs/s");
    bench_emit("queue", "rate_held_1000_pct",
               100.0 * (double)h.n / seconds / BQ_HELD_RATE, "%");
    /* The most in any 1000 ms: of the claims on the backend clock (what
     * the limit holds), and of the handler calls on this process's (the
     * first window's include the start's latency, the script loads). */
    qsort(h.claimed, h.n, sizeof(*h.claimed), bq_cmp_u64);
    bench_emit("queue", "rate_held_1000_max_claimed_per_1s",
               (double)bq_most_in(h.claimed, h.n, 1000), "jobs");
    qsort(h.at, h.n, sizeof(*h.at), bq_cmp_u64);
    bench_emit("queue", "rate_held_1000_max_handled_per_1s",
               (double)bq_most_in(h.at, h.n, 1000000000u), "jobs");
  }
  if (err != 0)
    fprintf(stderr, "fleet-bench queue: rate held: %s\n", fleet_strerror(err));
  /* The workers (those initialized), then the queue handle. */
  for (i = 0; i < handles - 1; i++)
    fleet_worker_close(&h.w[i], bq_held_closed);
  if (handles > 0)
    fleet_queue_close(&h.q, bq_held_closed);
  while (h.closed < handles)
    uv_run(&b->loop, UV_RUN_ONCE);
  /* (bench_client_close() runs the loop to its end: not while the
   * producer's client is open.) */
  h.closed = 0;
  for (i = 0; i < opened; i++) {
    h.clients[i].data = &h;
    fleet_client_close(&h.clients[i], bq_held_client_closed);
  }
  while (h.closed < opened)
    uv_run(&b->loop, UV_RUN_ONCE);
  free(h.at);
  free(h.claimed);
  return err;
}

/* The default run: bulk enqueue and its memory, processing, latency. */
static int bq_default(bq_t *b, const bench_opts_t *o, long concurrency,
                      long rate, int pid) {
  bench_cpu_t c0, c1;
  bq_result_t base;
  int64_t m0, m1;
  char label[48];
  int err;

  m0 = bench_server_memory(pid);
  bench_cpu_sample(&c0, pid);
  err = bq_fill(b);
  bench_cpu_sample(&c1, pid);
  m1 = bench_server_memory(pid);
  if (err != 0)
    return err;
  bench_emit_rates("queue", "enqueue_bulk", b->enqueued, &c0, &c1);
  if (m0 >= 0 && m1 >= 0)
    bench_emit("queue", "pending_bytes_per_job",
               (double)(m1 - m0) / (double)b->enqueued, "B/job");

  /* Processing: one worker on what was enqueued; then, with no --keep,
   * the same under flow control. */
  snprintf(label, sizeof(label), "process_c%ld%s", concurrency, b->suffix);
  if ((err = bq_process(b, o, label, pid, &base)) != 0)
    return err;
  b->base_done = 1;
  if (b->keep == 0 &&
      (err = bq_flow(b, o, concurrency, pid, b->fill,
                     m0 >= 0 && m1 >= 0 ? (double)(m1 - m0) / (double)b->fill
                                        : -1,
                     &base)) != 0)
    return err;
  if (b->flow_only)
    return 0;
  if (b->keep == 0 && (err = bq_deps(b, o, pid)) != 0)
    return err;
  if ((err = bq_life(b, o, concurrency, pid, b->fill)) != 0)
    return err;
  err = fleet_worker_start(&b->w, bq_handler);
  if (err != 0) {
    fprintf(stderr, "fleet-bench queue: start: %s\n", fleet_strerror(err));
    return err;
  }

  /* End-to-end latency at a fixed rate, for --seconds. */
  b->completed = 0;
  b->rate = (uint64_t)rate;
  b->total = (uint64_t)(o->seconds * (double)rate);
  b->sent = 0;
  b->t0_ns = uv_hrtime();
  uv_timer_start(&b->pacer, bq_on_pace, 1, 1);
  bench_cpu_sample(&c0, pid);
  bq_run_until(b, b->total, o->seconds + 10);
  bench_cpu_sample(&c1, pid);
  uv_timer_stop(&b->pacer);
  if (b->error != 0 || b->completed < b->total) {
    err = b->error != 0 ? b->error : FLEET_ETIMEDOUT;
    fprintf(stderr, "fleet-bench queue: latency: %s\n", fleet_strerror(err));
    return err;
  }
  snprintf(label, sizeof(label), "e2e_%ld%s", rate, b->suffix);
  bench_emit_rates("queue", label, b->completed, &c0, &c1);
  bench_lat_emit("queue", label, &b->lat);
  snprintf(label, sizeof(label), "pickup_%ld%s", rate, b->suffix);
  bench_lat_emit("queue", label, &b->pickup);
  return 0;
}

/* --partitions P: the processing of the same jobs by one worker on a
 * plain queue and on a queue of P partitions, BQ_ROUNDS rounds of the two
 * in turn (docs/queue.md, "Partitioned queues"). Metrics:
 * process_c<C>_plain_* and process_c<C>_p<P>_* (the first round), and
 * process_c<C>_p<P>_ops_ratio and _server_cpu_ratio, the medians of the
 * partitioned run over the plain one: on one server, what partitioning
 * itself costs. (The scaling over the shards of a cluster:
 * tests/bench/partitions.sh.) */
static int bq_parts(bq_t *plain, const bench_opts_t *o, long concurrency,
                    int pid, uint32_t parts) {
  static bq_t pb;
  double ops[BQ_ROUNDS], cpu[BQ_ROUNDS];
  bq_result_t rp, rq;
  char label[64], name[48];
  int r, err = 0, ncpu = 0;

  snprintf(name, sizeof(name), "bench-p%u", (unsigned)parts);
  pb.name = name;
  pb.parts = parts;
  pb.suffix = "";
  uv_loop_init(&pb.loop);
  uv_timer_init(&pb.loop, &pb.pacer);
  pb.pacer.data = &pb;
  for (r = 0; r < BQ_BATCH; r++)
    fleet_job_spec_init(&pb.specs[r], "bench", NULL, 0);
  if (bq_open(&pb, o, (uint32_t)concurrency) != 0)
    return 1;
  pb.fill = plain->fill;
  for (r = 0; r < BQ_ROUNDS && err == 0; r++) {
    plain->enqueued = pb.enqueued = 0;
    plain->quiet = pb.quiet = r > 0;
    snprintf(label, sizeof(label), "process_c%ld_plain", concurrency);
    if ((err = bq_fill(plain)) != 0 ||
        (err = bq_process(plain, o, label, pid, &rp)) != 0)
      break;
    snprintf(label, sizeof(label), "process_c%ld_p%u", concurrency,
             (unsigned)parts);
    if ((err = bq_fill(&pb)) != 0 ||
        (err = bq_process(&pb, o, label, pid, &rq)) != 0)
      break;
    ops[r] = rp.ops_per_s > 0 ? rq.ops_per_s / rp.ops_per_s : 0;
    if (rp.server_us_per_op > 0 && rq.server_us_per_op > 0)
      cpu[ncpu++] = rq.server_us_per_op / rp.server_us_per_op;
  }
  if (err == 0) {
    snprintf(label, sizeof(label), "process_c%ld_p%u_ops_ratio", concurrency,
             (unsigned)parts);
    bench_emit("queue", label, bq_median(ops, BQ_ROUNDS), "ratio");
    if (ncpu > 0) {
      snprintf(label, sizeof(label), "process_c%ld_p%u_server_cpu_ratio",
               concurrency, (unsigned)parts);
      bench_emit("queue", label, bq_median(cpu, ncpu), "ratio");
    }
  }
  bq_close(&pb);
  uv_loop_close(&pb.loop);
  return err;
}

int bench_queue(const bench_opts_t *o) {
  static bq_t b;
  long concurrency = 50, rate = 2000, jobs = 100000, pending = 0, keep = 0;
  long held = 10, parts = 0;
  int i, pid, err, life = 0;

  for (i = 0; i < o->argc; i++) {
    if (strcmp(o->argv[i], "--concurrency") == 0 && i + 1 < o->argc)
      concurrency = bench_parse_long("--concurrency", o->argv[++i]);
    else if (strcmp(o->argv[i], "--rate") == 0 && i + 1 < o->argc)
      rate = bench_parse_long("--rate", o->argv[++i]);
    else if (strcmp(o->argv[i], "--jobs") == 0 && i + 1 < o->argc)
      jobs = bench_parse_long("--jobs", o->argv[++i]);
    else if (strcmp(o->argv[i], "--pending") == 0 && i + 1 < o->argc)
      pending = bench_parse_long("--pending", o->argv[++i]);
    else if (strcmp(o->argv[i], "--keep") == 0 && i + 1 < o->argc)
      keep = bench_parse_long("--keep", o->argv[++i]);
    else if (strcmp(o->argv[i], "--held-seconds") == 0 && i + 1 < o->argc)
      held = bench_parse_long("--held-seconds", o->argv[++i]);
    else if (strcmp(o->argv[i], "--life") == 0)
      life = 1;
    else if (strcmp(o->argv[i], "--flow") == 0)
      b.flow_only = 1;
    else if (strcmp(o->argv[i], "--partitions") == 0 && i + 1 < o->argc)
      parts = bench_parse_long("--partitions", o->argv[++i]);
    else {
      fprintf(stderr, "fleet-bench queue: unknown flag '%s'\n", o->argv[i]);
      return 2;
    }
  }
  if (concurrency > 10000 || rate > 1000000 || jobs > 10000000 ||
      pending > 10000000 || keep > 10000000 || held > 60 || parts < 0 ||
      parts == 1 || parts > FLEET_QUEUE_PARTITIONS_MAX) {
    fprintf(stderr, "fleet-bench queue: --concurrency <= 10000, "
                    "--rate <= 1000000, --jobs, --pending and --keep <= "
                    "10000000, --held-seconds <= 60, --partitions 2 to "
                    "256\n");
    return 2;
  }
  b.keep = (uint32_t)keep;
  b.suffix = keep > 0 ? "_keep" : "";
  uv_loop_init(&b.loop);
  uv_timer_init(&b.loop, &b.pacer);
  b.pacer.data = &b;
  if (bq_open(&b, o, (uint32_t)concurrency) != 0)
    return 1;
  pid = bench_server_pid(o->url);
  for (i = 0; i < BQ_BATCH; i++)
    fleet_job_spec_init(&b.specs[i], "bench", NULL, 0);
  for (i = 0; i < BQ_GROUPS; i++)
    snprintf(b.groups[i], sizeof(b.groups[i]), "g%d", i);
  b.fill = (uint64_t)jobs;
  b.pending = (uint64_t)pending;
  if (parts > 0)
    err = bq_parts(&b, o, concurrency, pid, (uint32_t)parts);
  else if (life)
    err = bq_life(&b, o, concurrency, pid, b.fill);
  else
    err = pending > 0 ? bq_pending(&b, o, concurrency, pid)
                      : bq_default(&b, o, concurrency, rate, pid);
  if (err == 0 && pending == 0 && keep == 0 && !life && parts == 0 &&
      !b.flow_only)
    err = bq_rate_held(&b, o, (double)held);
  bench_lat_free(&b.lat);
  bench_lat_free(&b.pickup);
  bq_close(&b);
  uv_loop_close(&b.loop);
  return err != 0;
}
