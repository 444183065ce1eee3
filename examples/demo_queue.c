/* demo_queue.c -- fleet-demo's queue subcommands: run (produce and process
 * in one process), worker (process until a signal), enqueue and stats. A
 * job's work is a timer on the loop, never a sleep. The worker keeps the
 * last 1000 completed jobs for an hour (keep_completed; the library keeps
 * none by default), so that `fleet queue jobs Q --state completed` and the
 * dashboard show recent completions. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "demo.h"

/* Jobs per enqueue call, and enqueue calls in flight at once. */
#define DEMO_BATCH 1000
#define DEMO_BATCHES_IN_FLIGHT 4

/* How long a stopping worker waits for its jobs, in ms. */
#define DEMO_STOP_MS 10000

/* Background failures are printed at most this often, in ms. */
#define DEMO_ERROR_EVERY_MS 1000

/* One job's work: a timer that finishes the job. One per unit of
 * concurrency, reused. */
typedef struct demo_work_s {
  uv_timer_t timer;
  fleet_job_t *job;
  int fail;
  int64_t step; /* progress steps reported (--progress-steps) */
  struct demo_work_s *next;
} demo_work_t;

/* A worker process: run and worker share it. */
typedef struct {
  demo_client_t c;
  const char *cmd;
  const char *queue;
  int64_t jobs; /* run: how many to produce */
  int64_t concurrency;
  int64_t work_ms;
  int64_t fail_every; /* 0: never */
  int64_t claim_ttl_ms;
  int64_t heartbeat_ms;
  /* --progress-steps K: K progress reports per job, spread over its
   * work; --result: each job completes with the result "done:<id>". */
  int64_t progress_steps;
  int result;
  const char *ledger;
  int ledger_fd;
  /* --ledger-times: one line per completed job, with its times. */
  const char *ledger_times;
  int ledger_times_fd;
  /* --ledger-flows: one line per flow parent started, with its children
   * (demo_flow.c makes flows). */
  const char *ledger_flows;
  int ledger_flows_fd;
  /* --ledger-cancel: one line per cancel or timeout a handler heard and
   * per job settled, with its time; --ignore-cancel: work on when told. */
  const char *ledger_cancel;
  int ledger_cancel_fd;
  int ignore_cancel;

  fleet_worker_t w;
  int worker_open;
  fleet_queue_t q; /* run: the producer */
  int queue_open;
  demo_work_t *works;
  demo_work_t *free_works;
  uv_signal_t sigint, sigterm;
  uv_timer_t progress;
  int tty;

  int64_t produced, producing;
  uint64_t handled, completed, failed, lost, errors;
  uint64_t t0;
  /* Background failures: when the last was printed, and how many came
   * since without being printed. */
  uint64_t error_printed_ms;
  uint64_t errors_unprinted;
  int stopping;
  int status;
  demo_live_t live; /* worker: the ready and progress lines */
} demo_worker_t;

/* ------------------------------------------------------------------------ */
/* Shutdown                                                                 */

static void demo_on_handle_closed(uv_handle_t *h) {}

/* The last step: every handle of ours is closed, then the client. */
static void demo_worker_finish(demo_worker_t *d) {
  int64_t i;

  if (!uv_is_closing((uv_handle_t *)&d->sigint)) {
    uv_close((uv_handle_t *)&d->sigint, demo_on_handle_closed);
    uv_close((uv_handle_t *)&d->sigterm, demo_on_handle_closed);
    uv_close((uv_handle_t *)&d->progress, demo_on_handle_closed);
    for (i = 0; i < d->concurrency; i++)
      uv_close((uv_handle_t *)&d->works[i].timer, demo_on_handle_closed);
  }
  demo_client_close(&d->c);
}

static void demo_on_queue_closed(fleet_handle_t *q) {
  demo_worker_t *d = q->data;
  d->queue_open = 0;
  if (!d->worker_open)
    demo_worker_finish(d);
}

static void demo_on_worker_closed(fleet_handle_t *w) {
  demo_worker_t *d = w->data;
  d->worker_open = 0;
  if (d->queue_open)
    fleet_queue_close(&d->q, demo_on_queue_closed);
  else
    demo_worker_finish(d);
}

static void demo_on_stopped(fleet_handle_t *w_h, int status, void *user_data) {
  fleet_worker_t *w = (fleet_worker_t *)w_h;
  if (status != 0 && status != FLEET_ECANCELED)
    demo_fail("stop", status);
  fleet_worker_close(w, demo_on_worker_closed);
}

/* Stops gracefully (or, a second time, at once). */
static void demo_shutdown(demo_worker_t *d, int status) {
  if (d->status == 0)
    d->status = status;
  if (!d->worker_open) {
    demo_on_worker_closed((fleet_handle_t *)&d->w);
    return;
  }
  if (d->stopping++ == 0 &&
      fleet_worker_stop(&d->w, DEMO_STOP_MS, demo_on_stopped, NULL) == 0)
    return;
  fleet_worker_close(&d->w, demo_on_worker_closed);
}

static void demo_on_signal(uv_signal_t *s, int signum) {
  demo_shutdown(s->data, 0);
}

/* The backend was never reached: close at once rather than wait for the
 * calls in flight to time out. Once the worker and the queue are closing,
 * the client may close too: that cancels their calls, and their close
 * callbacks still run first. */
static void demo_on_unreachable(void *arg) {
  demo_worker_t *d = arg;
  d->stopping++;
  demo_shutdown(d, 1);
  if (d->queue_open && !fleet_is_closing((fleet_handle_t *)&d->q))
    fleet_queue_close(&d->q, demo_on_queue_closed);
  demo_client_close(&d->c);
}

/* ------------------------------------------------------------------------ */
/* Handling jobs                                                            */

static void demo_on_work(uv_timer_t *t) {
  demo_work_t *work = t->data;
  demo_worker_t *d = t->loop->data;
  fleet_job_t *job = work->job;
  char text[FLEET_JOB_ID_MAX + 32];
  int err, n;

  if (work->step < d->progress_steps) {
    /* Step k of K: "<k>/<K>" at k * 100 / K percent. The completion of
     * the last step goes after its report, on the same connection. */
    work->step++;
    n = snprintf(text, sizeof(text), "%" PRId64 "/%" PRId64, work->step,
                 d->progress_steps);
    err = fleet_job_progress(
        job, (uint32_t)(work->step * 100 / d->progress_steps), text, (size_t)n);
    if (err != 0)
      demo_fail("progress", err);
    if (work->step < d->progress_steps) {
      uv_timer_start(&work->timer, demo_on_work,
                     (uint64_t)(d->work_ms / d->progress_steps), 0);
      return;
    }
  }
  work->next = d->free_works;
  d->free_works = work;
  if (work->fail) {
    char msg[64];
    n = snprintf(msg, sizeof(msg), "fail-every %" PRId64 " (attempt %u)",
                 d->fail_every, (unsigned)job->attempts);
    err = fleet_job_fail(job, msg, (size_t)n);
  } else if (d->result) {
    n = snprintf(text, sizeof(text), "done:%.*s", (int)job->id_len, job->id);
    err = fleet_job_complete_result(job, text, (size_t)n);
  } else {
    err = fleet_job_complete(job);
  }
  if (err != 0)
    demo_fail("finish", err);
}

/* The wall clock, in ms since the Unix epoch: the times of
 * --ledger-times, comparable across the processes of one machine. */
static uint64_t demo_unix_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void demo_ledger_append(demo_worker_t *d, int fd, const char *line,
                               size_t len);

/* Starts the work of `work`: its first progress step, or all of it. */
static void demo_work_start(demo_worker_t *d, demo_work_t *work) {
  work->step = 0;
  uv_timer_start(&work->timer, demo_on_work,
                 (uint64_t)(d->progress_steps > 0
                                ? d->work_ms / d->progress_steps
                                : d->work_ms),
                 0);
}

/* The children of a flow parent that starts (--ledger-flows): the line
 * "<parent id> <start_unix_ms> <waiting> <queue>/<id>:<state>:<result>
 * ..." (the result escaped as fleet_escape_text() does, spaces too), then
 * the job's work. */
static void demo_on_children(fleet_queue_t *q, int status,
                             const fleet_flow_child_info_t *kids, size_t n,
                             size_t waiting, int fail, void *arg) {
  demo_work_t *work = arg;
  fleet_job_t *job = work->job;
  demo_worker_t *d = fleet_job_worker(job)->data;
  char *line, esc[4 * 256 + 1];
  size_t cap = 128 + FLEET_JOB_ID_MAX, len, i, k;

  if (status == FLEET_ECANCELED)
    return;
  for (i = 0; i < n; i++)
    cap += strlen(kids[i].queue) + strlen(kids[i].id) + sizeof(esc) + 32;
  if ((line = malloc(cap)) != NULL) {
    len =
        (size_t)snprintf(line, cap, "%.*s %" PRIu64 " %s%zu", (int)job->id_len,
                         job->id, (uint64_t)(uintptr_t)job->data,
                         status != 0 ? fleet_err_name(status) : "", waiting);
    for (i = 0; i < n; i++) {
      fleet_escape_text(kids[i].result.base,
                        kids[i].result.len > 256 ? 256 : kids[i].result.len,
                        esc, sizeof(esc));
      for (k = 0; esc[k] != '\0'; k++)
        if (esc[k] == ' ')
          esc[k] = '_';
      len += (size_t)snprintf(line + len, cap - len, " %s/%s:%s:%s",
                              kids[i].queue, kids[i].id,
                              fleet_job_state_name(kids[i].state), esc);
    }
    line[len++] = '\n';
    demo_ledger_append(d, d->ledger_flows_fd, line, len);
    free(line);
  }
  (void)fail;
  demo_work_start(d, work);
}

/* A line of --ledger-cancel: "<id> <what> <detail> <unix_ms>". */
static void demo_ledger_cancel(demo_worker_t *d, const fleet_job_t *job,
                               const char *what, const char *detail) {
  char line[FLEET_JOB_ID_MAX + 128];
  int n;

  if (d->ledger_cancel_fd < 0)
    return;
  n = snprintf(line, sizeof(line), "%.*s %s %s %" PRIu64 "\n", (int)job->id_len,
               job->id, what, detail, demo_unix_ms());
  demo_ledger_append(d, d->ledger_cancel_fd, line, (size_t)n);
}

/* The job is asked to stop (cancelled, or at its run deadline): the work
 * stops and the job is finished at once (unless --ignore-cancel), a
 * complete for a cancel, a failure for a timeout; the backend turns
 * either into the job's cancelled or timed-out end. */
static void demo_on_cancel(fleet_job_t *job, fleet_job_cancel_t why,
                           void *arg) {
  demo_work_t *work = arg;
  demo_worker_t *d = work->timer.loop->data;
  int err;

  demo_ledger_cancel(d, job, "told",
                     why == FLEET_JOB_CANCEL_TIMEOUT ? "timeout" : "cancel");
  if (d->ignore_cancel)
    return;
  uv_timer_stop(&work->timer);
  work->next = d->free_works;
  d->free_works = work;
  if (why == FLEET_JOB_CANCEL_TIMEOUT)
    err = fleet_job_fail(job, "stopped at its run deadline", 27);
  else
    err = fleet_job_complete(job);
  if (err != 0)
    demo_fail("finish", err);
}

static void demo_handler(fleet_worker_t *w, fleet_job_t *job) {
  demo_worker_t *d = w->data;
  demo_work_t *work = d->free_works;

  /* The start of the job, kept in the job's user field until it is
   * settled (demo_done()). */
  if (d->ledger_times_fd >= 0 || d->ledger_flows_fd >= 0)
    job->data = (void *)(uintptr_t)demo_unix_ms();

  d->handled++;
  d->free_works = work->next;
  work->job = job;
  work->fail = d->fail_every > 0 && d->handled % (uint64_t)d->fail_every == 0;
  if (fleet_job_on_cancel(job, demo_on_cancel, work) != 0)
    demo_fail("on_cancel", FLEET_EINVAL);
  /* A flow's parent reads its children first (they stay readable until
   * it ends). */
  if (d->ledger_flows_fd >= 0 && job->type_len == 11 &&
      memcmp(job->type, "flow-parent", 11) == 0 &&
      fleet_job_children(job, demo_on_children, work) == 0)
    return;
  demo_work_start(d, work);
}

static void demo_lost(fleet_worker_t *w, fleet_job_t *job, int status) {
  demo_worker_t *d = w->data;
  d->lost++;
}

/* The worker's background failures (claims, heartbeats, recovery,
 * finishes), one line each on stderr, at most one a second: a worker that
 * cannot claim (permissions, a moved slot) retries and says so, without
 * flooding. */
static void demo_worker_error(fleet_handle_t *w, int status,
                              const char *detail) {
  demo_worker_t *d = w->data;
  uint64_t now = uv_now(d->c.loop);

  if (demo_unreachable(status, detail))
    return; /* the one line about it is printed */
  if (d->error_printed_ms != 0 &&
      now - d->error_printed_ms < DEMO_ERROR_EVERY_MS) {
    d->errors_unprinted++;
    return;
  }
  {
    char more[80] = "";

    if (d->errors_unprinted > 0)
      snprintf(more, sizeof(more),
               " (and %" PRIu64 " more failures since the last line)",
               d->errors_unprinted);
    fleet_escape_print(stderr, "fleet-demo: worker: %s%s%s%s",
                       fleet_err_name(status), detail[0] != '\0' ? ": " : "",
                       detail, more);
  }
  d->error_printed_ms = now;
  d->errors_unprinted = 0;
}

/* Appends `len` bytes of `line` to `fd` in one write: with O_APPEND,
 * lines of several processes stay whole. */
static void demo_ledger_append(demo_worker_t *d, int fd, const char *line,
                               size_t len) {
  if (write(fd, line, len) != (ssize_t)len) {
    demo_fail("ledger write", FLEET_EBACKEND);
    d->status = 1;
  }
}

/* The group of `job` as one word of a --ledger-times line, into `out`
 * (4 * FLEET_JOB_GROUP_MAX + 1 bytes hold any: a byte of the name takes
 * at most 4): "-" when the job has none;
 * else the name with every space, control byte and byte that is not
 * UTF-8 as \xNN (fleet_escape_text(), and spaces too), and a group named
 * "-" as "\x2d", so that the line splits on spaces and "-" means no
 * group. */
static void demo_ledger_group(const fleet_job_t *job, char *out, size_t cap) {
  char esc[4 * FLEET_JOB_GROUP_MAX + 1];
  size_t i, o = 0;

  if (job->group == NULL) {
    snprintf(out, cap, "-");
    return;
  }
  if (job->group_len == 1 && job->group[0] == '-') {
    snprintf(out, cap, "\\x2d");
    return;
  }
  fleet_escape_text(job->group, job->group_len, esc, sizeof(esc));
  for (i = 0; esc[i] != '\0' && o + 5 < cap; i++) {
    if (esc[i] == ' ') {
      memcpy(out + o, "\\x20", 4);
      o += 4;
    } else {
      out[o++] = esc[i];
    }
  }
  out[o] = '\0';
}

/* The ledgers of a completed job: "<id>" in --ledger's, and "<id> <group>
 * <start_unix_ms> <end_unix_ms>" in --ledger-times' (the group as
 * demo_ledger_group() writes it), the end being when the completion was
 * accepted. */
static void demo_ledger_write(demo_worker_t *d, const fleet_job_t *job) {
  char line[FLEET_JOB_ID_MAX + 4 * FLEET_JOB_GROUP_MAX + 64];
  char group[4 * FLEET_JOB_GROUP_MAX + 1];
  int n;

  if (d->ledger_fd >= 0) {
    memcpy(line, job->id, job->id_len);
    line[job->id_len] = '\n';
    demo_ledger_append(d, d->ledger_fd, line, job->id_len + 1);
  }
  if (d->ledger_times_fd >= 0) {
    demo_ledger_group(job, group, sizeof(group));
    n = snprintf(line, sizeof(line), "%.*s %s %" PRIu64 " %" PRIu64 "\n",
                 (int)job->id_len, job->id, group,
                 (uint64_t)(uintptr_t)job->data, demo_unix_ms());
    demo_ledger_append(d, d->ledger_times_fd, line, (size_t)n);
  }
}

static void demo_done(fleet_worker_t *w, fleet_job_t *job,
                      fleet_job_action_t action, int status) {
  demo_worker_t *d = w->data;
  int accepted = status == 0 || status == FLEET_EALREADY;

  demo_ledger_cancel(d, job,
                     action == FLEET_JOB_COMPLETE ? "complete"
                     : action == FLEET_JOB_FAIL   ? "fail"
                                                  : "release",
                     status == 0 ? "ok" : fleet_err_name(status));
  if (action == FLEET_JOB_COMPLETE && accepted) {
    d->completed++;
    demo_ledger_write(d, job);
  } else if (action == FLEET_JOB_FAIL && accepted) {
    d->failed++;
  } else if (status == FLEET_ETIMEDOUT) {
    d->failed++; /* (finished after its run deadline: a timeout) */
  } else if (status != FLEET_ECANCELED) {
    d->errors++;
  }
  if (d->jobs > 0 && d->completed + d->errors >= (uint64_t)d->jobs &&
      d->produced == d->jobs && !d->stopping)
    demo_shutdown(d, 0);
}

/* ------------------------------------------------------------------------ */
/* Producing (run)                                                          */

static void demo_produce(demo_worker_t *d);

static void demo_on_enqueued(fleet_queue_t *q, int status,
                             const fleet_enqueue_result_t *r, size_t n,
                             void *arg) {
  demo_worker_t *d = q->data;
  int64_t batch = (int64_t)(intptr_t)arg;

  d->producing--;
  if (status == FLEET_ECANCELED)
    return;
  if (status != 0) {
    demo_fail("enqueue", status);
    demo_shutdown(d, 1);
    return;
  }
  d->produced += batch;
  demo_produce(d);
}

static void demo_produce(demo_worker_t *d) {
  static const char payload[] = "demo job";
  fleet_job_spec_t specs[DEMO_BATCH];
  int64_t i, n;
  int err;

  for (i = 0; i < DEMO_BATCH; i++)
    fleet_job_spec_init(&specs[i], "demo", payload, sizeof(payload) - 1);
  while (d->producing < DEMO_BATCHES_IN_FLIGHT && !d->stopping) {
    n = d->jobs - d->produced - d->producing * DEMO_BATCH;
    if (n <= 0)
      return;
    if (n > DEMO_BATCH)
      n = DEMO_BATCH;
    /* Batches in flight are full ones but the last: `producing` counts
     * calls, and the last one is the only short one. */
    err = fleet_queue_enqueue(&d->q, specs, (size_t)n, demo_on_enqueued,
                              (void *)(intptr_t)n);
    if (err != 0) {
      demo_fail("enqueue", err);
      demo_shutdown(d, 1);
      return;
    }
    d->producing++;
  }
}

/* ------------------------------------------------------------------------ */
/* Progress and summary                                                     */

static double demo_elapsed(const demo_worker_t *d) {
  return (double)(uv_hrtime() - d->t0) / 1e9;
}

static void demo_on_progress(uv_timer_t *t) {
  demo_worker_t *d = t->data;
  double secs = demo_elapsed(d);

  fprintf(stderr,
          "\r%s: produced %" PRId64 ", completed %" PRIu64 " (%.0f jobs/s)   ",
          d->cmd, d->produced, d->completed,
          secs > 0 ? (double)d->completed / secs : 0.0);
}

static void demo_summary(const demo_worker_t *d) {
  double secs = demo_elapsed(d);

  if (d->tty)
    fprintf(stderr, "\r%*s\r", 70, "");
  printf("%s: %" PRIu64 " jobs completed in %.2f s (%.0f jobs/s), "
         "concurrency %" PRId64 ", work %" PRId64 " ms; %" PRIu64
         " failed attempts, %" PRIu64 " lost claims, %" PRIu64 " errors\n",
         d->cmd, d->completed, secs, secs > 0 ? (double)d->completed / secs : 0,
         d->concurrency, d->work_ms, d->failed, d->lost, d->errors);
}

/* ------------------------------------------------------------------------ */
/* run and worker                                                           */

/* Parses the flags of run (`run` 1) or worker. Returns 0 or 2. */
static int demo_worker_flags(demo_worker_t *d, const demo_args_t *a, int run) {
  int i, st, have_c = 0, have_w = 0, have_n = !run, have_q = run;

  for (i = 0; i < a->argc; i++) {
    const char *f = a->argv[i];
    if (run && demo_flag(a, &i, "--jobs")) {
      if (!demo_int(f, a->argv[i], 1, 100000000, &d->jobs))
        return 2;
      have_n = 1;
    } else if (demo_flag(a, &i, "--concurrency")) {
      if (!demo_int(f, a->argv[i], 1, 10000, &d->concurrency))
        return 2;
      have_c = 1;
    } else if (demo_flag(a, &i, "--work-ms")) {
      if (!demo_int(f, a->argv[i], 0, 3600000, &d->work_ms))
        return 2;
      have_w = 1;
    } else if (demo_flag(a, &i, "--queue")) {
      d->queue = a->argv[i];
      have_q = 1;
    } else if (!run && demo_flag(a, &i, "--fail-every")) {
      if (!demo_int(f, a->argv[i], 1, INT32_MAX, &d->fail_every))
        return 2;
    } else if (!run && demo_flag(a, &i, "--progress-steps")) {
      if (!demo_int(f, a->argv[i], 1, 100, &d->progress_steps))
        return 2;
    } else if (!run && strcmp(f, "--result") == 0) {
      d->result = 1;
    } else if (!run && demo_flag(a, &i, "--ledger")) {
      d->ledger = a->argv[i];
    } else if (!run && demo_flag(a, &i, "--ledger-times")) {
      d->ledger_times = a->argv[i];
    } else if (!run && demo_flag(a, &i, "--ledger-flows")) {
      d->ledger_flows = a->argv[i];
    } else if (!run && demo_flag(a, &i, "--ledger-cancel")) {
      d->ledger_cancel = a->argv[i];
    } else if (!run && strcmp(f, "--ignore-cancel") == 0) {
      d->ignore_cancel = 1;
    } else if (!run && demo_flag(a, &i, "--claim-ttl-ms")) {
      if (!demo_int(f, a->argv[i], 10, UINT32_MAX, &d->claim_ttl_ms))
        return 2;
    } else if (!run && demo_flag(a, &i, "--heartbeat-ms")) {
      if (!demo_int(f, a->argv[i], 1, UINT32_MAX, &d->heartbeat_ms))
        return 2;
    } else if (!run && (st = demo_live_flag(a, &i, &d->live)) != 0) {
      if (st < 0)
        return 2;
    } else {
      return demo_bad_flag(d->cmd, f);
    }
  }
  if (!have_n || !have_c || !have_w || !have_q) {
    fprintf(stderr, "fleet-demo: %s: %s are required\n", d->cmd,
            run ? "--jobs, --concurrency and --work-ms"
                : "--queue, --concurrency and --work-ms");
    return 2;
  }
  return 0;
}

/* Closes the worker's ledger files that are open. */
static void demo_ledgers_close(demo_worker_t *d) {
  int *fds[] = {&d->ledger_fd, &d->ledger_times_fd, &d->ledger_flows_fd,
                &d->ledger_cancel_fd};
  size_t i;

  for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
    if (*fds[i] >= 0) {
      close(*fds[i]);
      *fds[i] = -1;
    }
}

/* Opens the ledger files given (--ledger, --ledger-times, --ledger-flows,
 * --ledger-cancel) for appending. On a failure: one line naming the flag,
 * the ones opened closed again, and 1. */
static int demo_ledgers_open(demo_worker_t *d) {
  const struct {
    const char *path;
    int *fd;
    const char *flag;
  } l[] = {{d->ledger, &d->ledger_fd, "--ledger"},
           {d->ledger_times, &d->ledger_times_fd, "--ledger-times"},
           {d->ledger_flows, &d->ledger_flows_fd, "--ledger-flows"},
           {d->ledger_cancel, &d->ledger_cancel_fd, "--ledger-cancel"}};
  size_t i;

  for (i = 0; i < sizeof(l) / sizeof(l[0]); i++)
    if (l[i].path != NULL &&
        (*l[i].fd = open(l[i].path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                         0644)) < 0) {
      fprintf(stderr, "fleet-demo: worker: %s: %s\n", l[i].flag,
              strerror(errno));
      demo_ledgers_close(d);
      return 1;
    }
  return 0;
}

/* The worker's counts for its progress lines: jobs completed, and
 * attempts failed. */
static void demo_worker_counts(void *arg, uint64_t *done, uint64_t *failed) {
  demo_worker_t *d = arg;

  *done = d->completed;
  *failed = d->failed;
}

/* The worker is serving once its client is ready: it was started before
 * the loop ran. */
static void demo_worker_ready(void *arg) {
  demo_worker_t *d = arg;

  if (!d->stopping)
    demo_live_ready(&d->live, &d->c, demo_worker_counts, d,
                    "serving queue %s (concurrency %" PRId64 ")", d->queue,
                    d->concurrency);
}

/* The partition count recorded for `queue` (docs/queue.md, "Partitioned
 * queues"), read before the command's loop runs (the loop runs here until
 * the read answers); 0 (a plain queue) when none is recorded or the read
 * fails, for the command's own calls to fail on. */
typedef struct {
  int done, status;
  uint32_t n;
} demo_parts_t;

static void demo_on_parts(fleet_queue_t *q, int status, uint32_t n, void *ud) {
  demo_parts_t *r = ud;

  (void)q;
  r->status = status;
  r->n = n;
  r->done = 1;
}

static void demo_on_parts_closed(fleet_handle_t *h) {
  ((demo_parts_t *)h->data)->done = 1;
}

static void demo_parts_unreachable(void *arg) {
  *(int *)arg = 1;
}

static uint32_t demo_queue_parts(demo_client_t *c, const char *queue,
                                 int *unreachable) {
  void (*was)(void *) = c->on_unreachable, (*was_ready)(void *) = c->on_ready;
  void *was_arg = c->arg;
  int was_ready_once = c->ready;
  demo_parts_t r = {0, 0, 0};
  fleet_queue_t q;
  uint32_t n;

  /* The backend never reached: the caller says so and ends. The client's
   * first ready state, which comes during this read, is told below with
   * the command's own argument (c->arg is `unreachable` meanwhile). */
  *unreachable = 0;
  c->on_unreachable = demo_parts_unreachable;
  c->on_ready = NULL;
  c->arg = unreachable;
  if (fleet_queue_init(&c->client, &q, queue, NULL) != 0) {
    c->on_unreachable = was;
    c->on_ready = was_ready;
    c->arg = was_arg;
    return 0;
  }
  if (fleet_queue_partitions(&q, 0, demo_on_parts, &r) == 0)
    while (!r.done && !*unreachable && uv_run(c->loop, UV_RUN_ONCE) != 0)
      ;
  n = r.done && r.status == 0 && r.n >= 2 ? r.n : 0;
  r.done = 0;
  q.data = &r;
  if (fleet_queue_close(&q, demo_on_parts_closed) == 0)
    while (!r.done && uv_run(c->loop, UV_RUN_ONCE) != 0)
      ;
  c->on_unreachable = was;
  c->on_ready = was_ready;
  c->arg = was_arg;
  if (c->ready && !was_ready_once && was_ready != NULL)
    was_ready(was_arg);
  return n;
}

static int demo_worker_main(const demo_args_t *a, int run) {
  fleet_worker_options_t o;
  int unreachable;
  demo_worker_t d;
  uv_loop_t *loop;
  int64_t i;
  int err;

  memset(&d, 0, sizeof(d));
  d.cmd = run ? "run" : "worker";
  d.queue = "demo";
  d.ledger_fd = -1;
  d.ledger_times_fd = -1;
  d.ledger_flows_fd = -1;
  d.ledger_cancel_fd = -1;
  demo_live_init(&d.live, "worker");
  fleet_worker_options_init(&o);
  d.claim_ttl_ms = o.claim_ttl_ms;
  d.heartbeat_ms = o.heartbeat_ms;
  if ((err = demo_worker_flags(&d, a, run)) != 0)
    return err;
  o.concurrency = (uint32_t)d.concurrency;
  o.claim_ttl_ms = (uint32_t)d.claim_ttl_ms;
  o.heartbeat_ms = (uint32_t)d.heartbeat_ms;
  o.done_cb = demo_done;
  o.lost_cb = demo_lost;
  o.error_cb = demo_worker_error;
  o.queue.keep_completed = 1000; /* for the CLI and dashboard (see top) */
  if (o.heartbeat_ms >= o.claim_ttl_ms - o.claim_ttl_ms / 10 - 1) {
    fprintf(stderr, "fleet-demo: worker: --heartbeat-ms must be below 90 %% "
                    "of --claim-ttl-ms\n");
    return 2;
  }
  if (demo_ledgers_open(&d) != 0)
    return 1;
  d.works = calloc((size_t)d.concurrency, sizeof(*d.works));
  if (d.works == NULL || demo_client_open(&d.c, a) != 0) {
    free(d.works);
    return 1;
  }
  d.c.on_unreachable = demo_on_unreachable;
  d.c.arg = &d;
  if (!run) {
    d.c.on_ready = demo_worker_ready;
    d.c.live = &d.live;
  }
  loop = d.c.loop;
  loop->data = &d;
  for (i = 0; i < d.concurrency; i++) {
    uv_timer_init(loop, &d.works[i].timer);
    d.works[i].timer.data = &d.works[i];
    d.works[i].next = d.free_works;
    d.free_works = &d.works[i];
  }
  uv_signal_init(loop, &d.sigint);
  uv_signal_init(loop, &d.sigterm);
  d.sigint.data = d.sigterm.data = &d;
  uv_signal_start(&d.sigint, demo_on_signal, SIGINT);
  uv_signal_start(&d.sigterm, demo_on_signal, SIGTERM);
  uv_timer_init(loop, &d.progress);
  d.progress.data = &d;
  d.tty = run && isatty(STDERR_FILENO);
  if (d.tty)
    uv_timer_start(&d.progress, demo_on_progress, 100, 100);
  d.w.data = &d;
  d.q.data = &d;
  /* A partitioned queue: its count is read from the backend. */
  o.queue.partitions = demo_queue_parts(&d.c, d.queue, &unreachable);
  err = unreachable ? FLEET_ECONNREFUSED
                    : fleet_worker_init(&d.c.client, &d.w, d.queue, &o);
  if (err == 0) {
    d.worker_open = 1;
    err = fleet_worker_start(&d.w, demo_handler);
  }
  if (err == 0 && run) {
    err = fleet_queue_init(&d.c.client, &d.q, d.queue, &o.queue);
    d.queue_open = err == 0;
  }
  d.t0 = uv_hrtime();
  if (err != 0) {
    demo_fail(d.cmd, err);
    demo_shutdown(&d, 1);
  } else if (run) {
    demo_produce(&d);
  }
  uv_run(loop, UV_RUN_DEFAULT);
  if (d.c.failed)
    d.status = 1;
  else
    demo_summary(&d);
  uv_loop_close(loop);
  free(d.works);
  demo_ledgers_close(&d);
  return d.status;
}

int demo_run(const demo_args_t *a) {
  return demo_worker_main(a, 1);
}

int demo_worker(const demo_args_t *a) {
  return demo_worker_main(a, 0);
}

/* ------------------------------------------------------------------------ */
/* enqueue and stats                                                        */

typedef struct {
  demo_client_t c;
  fleet_queue_t q;
  int queue_open;
  fleet_job_spec_t spec;
  int64_t count, sent, added;
  char *payload;
  int status;
  /* Jobs refused because their unique key was held. */
  int64_t refused;
} demo_producer_t;

static void demo_producer_closed(fleet_handle_t *q) {
  demo_producer_t *p = q->data;
  demo_client_close(&p->c);
}

static void demo_producer_finish(demo_producer_t *p, int status) {
  if (p->status == 0)
    p->status = status;
  if (p->queue_open) {
    p->queue_open = 0;
    fleet_queue_close(&p->q, demo_producer_closed);
  }
}

/* As for the worker: close the queue, then the client at once. */
static void demo_producer_unreachable(void *arg) {
  demo_producer_t *p = arg;

  demo_producer_finish(p, 1);
  demo_client_close(&p->c);
}

static void demo_enqueue_next(demo_producer_t *p);

static void demo_on_added(fleet_queue_t *q, int status,
                          const fleet_enqueue_result_t *r, size_t n,
                          void *arg) {
  demo_producer_t *p = q->data;
  size_t i;

  if (status == FLEET_ECANCELED)
    return;
  if (status != 0) {
    demo_fail("enqueue", status);
    demo_producer_finish(p, 1);
    return;
  }
  for (i = 0; i < n; i++) {
    p->added += r[i].status == 0;
    if (r[i].status == FLEET_EEXIST && p->spec.unique_key != NULL) {
      /* One line per refused job, naming the key and its holder. */
      fleet_escape_print(stderr,
                         "fleet-demo: unique key %s is held by job %.*s",
                         p->spec.unique_key, (int)r[i].id_len, r[i].id);
      p->refused++;
    }
  }
  demo_enqueue_next(p);
}

static void demo_enqueue_next(demo_producer_t *p) {
  fleet_job_spec_t specs[DEMO_BATCH];
  int64_t n = p->count - p->sent, i;
  int err;

  if (n <= 0) {
    printf("%" PRId64 "\n", p->added);
    demo_producer_finish(p, p->refused > 0 ? 1 : 0);
    return;
  }
  if (n > DEMO_BATCH)
    n = DEMO_BATCH;
  for (i = 0; i < n; i++)
    specs[i] = p->spec;
  err = fleet_queue_enqueue(&p->q, specs, (size_t)n, demo_on_added, NULL);
  if (err != 0) {
    demo_fail("enqueue", err);
    demo_producer_finish(p, err == FLEET_EINVAL ? 2 : 1);
    return;
  }
  p->sent += n;
}

/* Opens the client and the queue of a producer command. */
static int demo_producer_open(demo_producer_t *p, const demo_args_t *a,
                              const char *queue) {
  fleet_queue_options_t qo;
  int err, unreachable;

  if (demo_client_open(&p->c, a) != 0)
    return 1;
  p->c.on_unreachable = demo_producer_unreachable;
  p->c.arg = p;
  p->q.data = p;
  fleet_queue_options_init(&qo);
  qo.partitions = demo_queue_parts(&p->c, queue, &unreachable);
  if (unreachable) {
    demo_client_close(&p->c);
    uv_run(p->c.loop, UV_RUN_DEFAULT);
    return 1;
  }
  err = fleet_queue_init(&p->c.client, &p->q, queue, &qo);
  if (err != 0) {
    demo_fail(queue, err);
    demo_client_close(&p->c);
    uv_run(p->c.loop, UV_RUN_DEFAULT);
    return 1;
  }
  p->queue_open = 1;
  return 0;
}

int demo_enqueue(const demo_args_t *a) {
  demo_producer_t p;
  const char *queue = NULL, *type = "demo";
  int64_t size = 16, v;
  int i, until_done = 0;

  memset(&p, 0, sizeof(p));
  fleet_job_spec_init(&p.spec, type, NULL, 0);
  for (i = 0; i < a->argc; i++) {
    const char *f = a->argv[i];
    if (demo_flag(a, &i, "--queue"))
      queue = a->argv[i];
    else if (demo_flag(a, &i, "--count")) {
      if (!demo_int(f, a->argv[i], 1, 100000000, &p.count))
        return 2;
    } else if (demo_flag(a, &i, "--size")) {
      if (!demo_int(f, a->argv[i], 0, FLEET_JOB_PAYLOAD_MAX, &size))
        return 2;
    } else if (demo_flag(a, &i, "--type"))
      type = a->argv[i];
    else if (demo_flag(a, &i, "--delay-ms")) {
      if (!demo_int(f, a->argv[i], 0, INT64_C(1) << 40, &v))
        return 2;
      p.spec.delay_ms = (uint64_t)v;
    } else if (demo_flag(a, &i, "--priority")) {
      if (!demo_int(f, a->argv[i], FLEET_JOB_PRIORITY_MIN,
                    FLEET_JOB_PRIORITY_MAX, &v))
        return 2;
      p.spec.priority = (int)v;
    } else if (demo_flag(a, &i, "--max-attempts")) {
      if (!demo_int(f, a->argv[i], 1, UINT32_MAX, &v))
        return 2;
      p.spec.max_attempts = (uint32_t)v;
    } else if (demo_flag(a, &i, "--timeout-ms")) {
      /* (0 means none in the spec: on the command line it is refused,
       * leaving the flag out is how to say none.) */
      if (strcmp(a->argv[i], "0") == 0) {
        fprintf(stderr, "fleet-demo: enqueue: --timeout-ms: 0 is not a "
                        "timeout (leave the flag out for none)\n");
        return 2;
      }
      if (!demo_int(f, a->argv[i], 1, FLEET_JOB_TIMEOUT_MAX_MS, &v))
        return 2;
      p.spec.timeout_ms = (uint32_t)v;
    } else if (demo_flag(a, &i, "--group")) {
      p.spec.group = a->argv[i];
      if (p.spec.group[0] == '\0' ||
          strlen(p.spec.group) > FLEET_JOB_GROUP_MAX) {
        fprintf(stderr,
                "fleet-demo: enqueue: --group: 1 to %d bytes (got %zu)\n",
                FLEET_JOB_GROUP_MAX, strlen(p.spec.group));
        return 2;
      }
    } else if (demo_flag(a, &i, "--unique-key")) {
      p.spec.unique_key = a->argv[i];
      if (p.spec.unique_key[0] == '\0' ||
          strlen(p.spec.unique_key) > FLEET_JOB_UNIQUE_MAX) {
        fprintf(stderr,
                "fleet-demo: enqueue: --unique-key: 1 to %d bytes (got %zu)\n",
                FLEET_JOB_UNIQUE_MAX, strlen(p.spec.unique_key));
        return 2;
      }
    } else if (demo_flag(a, &i, "--unique-ttl-ms")) {
      if (!demo_int(f, a->argv[i], 1, INT64_C(1) << 40, &v))
        return 2;
      p.spec.unique_ttl_ms = (uint64_t)v;
    } else if (strcmp(f, "--unique-until-done") == 0)
      until_done = 1;
    else
      return demo_bad_flag("enqueue", f);
  }
  /* With a unique key, one job unless --count says otherwise. */
  if (p.spec.unique_key != NULL && p.count == 0)
    p.count = 1;
  if (queue == NULL || p.count == 0) {
    fprintf(stderr, "fleet-demo: enqueue: --queue and --count are required\n");
    return 2;
  }
  if (p.spec.unique_key == NULL && (until_done || p.spec.unique_ttl_ms > 0)) {
    fprintf(stderr, "fleet-demo: enqueue: --unique-until-done and "
                    "--unique-ttl-ms need --unique-key\n");
    return 2;
  }
  if (p.spec.unique_key != NULL && !until_done && p.spec.unique_ttl_ms == 0) {
    fprintf(stderr, "fleet-demo: enqueue: --unique-key needs "
                    "--unique-until-done or --unique-ttl-ms\n");
    return 2;
  }
  p.spec.unique_until_done = until_done;
  p.spec.type = type;
  p.payload = malloc((size_t)size + 1);
  if (p.payload == NULL)
    return 1;
  memset(p.payload, 'x', (size_t)size);
  p.spec.payload.base = p.payload;
  p.spec.payload.len = (size_t)size;
  if (demo_producer_open(&p, a, queue) != 0) {
    free(p.payload);
    return 1;
  }
  demo_enqueue_next(&p);
  uv_run(p.c.loop, UV_RUN_DEFAULT);
  uv_loop_close(p.c.loop);
  free(p.payload);
  return p.c.failed ? 1 : p.status;
}

static void demo_on_counts(fleet_queue_t *q, int status,
                           const fleet_queue_counts_t *c, void *arg) {
  demo_producer_t *p = q->data;

  if (status == FLEET_ECANCELED)
    return;
  if (status != 0) {
    demo_fail("stats", status);
    demo_producer_finish(p, 1);
    return;
  }
  printf("{\"queue\":\"%s\",\"pending\":%" PRIu64 ",\"delayed\":%" PRIu64
         ",\"running\":%" PRIu64 ",\"completed\":%" PRIu64 ",\"dead\":%" PRIu64
         ",\"completed_kept\":%" PRIu64 ",\"dead_kept\":%" PRIu64
         ",\"waiting_children\":%" PRIu64 "}\n",
         fleet_queue_name(q), c->pending, c->delayed, c->running, c->completed,
         c->dead, c->completed_kept, c->dead_kept, c->waiting_children);
  demo_producer_finish(p, 0);
}

int demo_stats(const demo_args_t *a) {
  demo_producer_t p;
  const char *queue = NULL;
  int i, err;

  memset(&p, 0, sizeof(p));
  for (i = 0; i < a->argc; i++) {
    if (demo_flag(a, &i, "--queue"))
      queue = a->argv[i];
    else
      return demo_bad_flag("stats", a->argv[i]);
  }
  if (queue == NULL) {
    fprintf(stderr, "fleet-demo: stats: --queue is required\n");
    return 2;
  }
  for (i = 0; queue[i] != '\0'; i++) {
    if (queue[i] == '"' || queue[i] == '\\' || (unsigned char)queue[i] < 32) {
      fprintf(stderr, "fleet-demo: stats: the queue name is not JSON-safe\n");
      return 2;
    }
  }
  if (demo_producer_open(&p, a, queue) != 0)
    return 1;
  err = fleet_queue_counts(&p.q, demo_on_counts, NULL);
  if (err != 0) {
    demo_fail("stats", err);
    demo_producer_finish(&p, 1);
  }
  uv_run(p.c.loop, UV_RUN_DEFAULT);
  uv_loop_close(p.c.loop);
  return p.c.failed ? 1 : p.status;
}
