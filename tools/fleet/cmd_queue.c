/* cmd_queue.c -- `fleet queue ...`: the queue queries (a queue handle per
 * query, closed before the query ends) and the verbs. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "map.h"

/* Jobs a page shows by default, and payload bytes per job. */
#define QUEUE_JOBS_LIMIT 20
#define QUEUE_PAYLOAD_MAX 200
/* Queues `queue ls` lists at most. */
#define QUEUE_LS_MAX 10000

static const char queue_usage[] =
    "usage: fleet queue <verb>\n"
    "  ls                              every queue with its counts\n"
    "  stats Q                         the counts of Q, whether it is "
    "paused,\n"
    "                                  its flow limits and state, and its "
    "groups\n"
    "  jobs Q --state S [--limit N] [--cursor C] [--group G]\n"
    "                                  a page of the jobs in state S "
    "(pending,\n"
    "                                  delayed, running, completed, dead,\n"
    "                                  waiting-children: flow parents;\n"
    "                                  completed ones only if the workers "
    "set\n"
    "                                  keep_completed: none are kept by "
    "default);\n"
    "                                  --group G: the pending jobs of G\n"
    "  list Q --type T [--limit N]     the ids of the queued (pending or\n"
    "                                  delayed) jobs of type T (default 20);\n"
    "                                  reads every queued job\n"
    "  get Q ID                        one job: state, attempts, data, last "
    "error,\n"
    "                                  result, last progress, a flow parent's\n"
    "                                  children\n"
    "  events Q [--job ID] [--count N] the events of Q (or of one job) as "
    "they\n"
    "                                  happen, one line each: time_ms type "
    "id\n"
    "                                  value data; stops after N\n"
    "  history Q [--days N | --minutes N]\n"
    "                                  jobs processed (completed + failed\n"
    "                                  attempts) and failed per UTC day (the\n"
    "                                  last 7 by default, 32 kept) or minute\n"
    "                                  (1500 kept; with the depth and wait\n"
    "                                  that fleet metrics and dash sampled)\n"
    "  retry Q ID | retry Q --all-dead run dead jobs again\n"
    "  cancel Q ID [--grace-ms MS]     delete a pending or delayed job, or\n"
    "                                  stop a running one: its worker is "
    "told,\n"
    "                                  and it ends as dead (\"cancelled\") "
    "when\n"
    "                                  its handler finishes, or after the "
    "grace\n"
    "                                  (default 30000 ms)\n"
    "  purge Q --state completed|dead  delete the kept finished records\n"
    "  delete Q ID                     delete one job that is not running\n"
    "                                  (pending, delayed, waiting, completed,\n"
    "                                  dead) with all its records\n"
    "  run Q ID                        run a delayed or dead job now\n"
    "  kill Q ID                       move a pending or delayed job to dead\n"
    "                                  (error \"killed\")\n"
    "  remove Q [--force]              delete the whole queue; --force: even\n"
    "                                  with jobs pending, delayed or running\n"
    "  pause Q [--create] | resume Q   stop / restart claims (workers idle);\n"
    "                                  --create: pause a queue that does not\n"
    "                                  exist yet (else refused)\n"
    "  create Q --partitions P         record Q's partition count (1 to "
    "256):\n"
    "                                  P one-slot queues that producers and\n"
    "                                  workers use as one; never changes\n"
    "  add Q PAYLOAD [--type T]        enqueue one job (type default "
    "\"cli\");\n"
    "        [--header K=V ...]        with headers; prints its id\n"
    "  limit Q [--rate MAX/DUR] [--group-rate MAX/DUR] [--concurrency N]\n"
    "          [--group-concurrency N]\n"
    "                                  set the flow limits (an option left "
    "out:\n"
    "                                  no such limit); DUR like 500ms, 1s, "
    "2m, 1h\n"
    "  limit Q --clear | limit Q       clear them | show them\n"
    "  hold Q --for DUR [--group G]    hold the claims of Q or of a group\n"
    "  weight Q G N                    the weight of group G in the "
    "rotation\n"
    "                                  (1 to 1000; 1: plain round-robin)\n"
    "Every verb but ls, add and events refuses a queue that does not exist\n"
    "(exit 1). Options go anywhere, as --opt V or --opt=V; -- ends them.\n";

/* ------------------------------------------------------------------------ */
/* A query on a queue handle                                                */

cli_qctx_t *cli_qctx_open(cli_t *cli, size_t size, const char *name,
                          const char *key, const char *val, cli_done_fn done,
                          void *arg, int *err) {
  /* A partitioned queue: cmd_queue_create.c. */
  return cli_qctx_open_parts(cli, size, name, cli_queue_parts(cli, name), key,
                             val, done, arg, err);
}

cli_qctx_t *cli_qctx_open_parts(cli_t *cli, size_t size, const char *name,
                                uint32_t parts, const char *key,
                                const char *val, cli_done_fn done, void *arg,
                                int *err) {
  cli_qctx_t *c = cli_query_new(size, cli, done, arg);
  fleet_queue_options_t o;

  fleet_queue_options_init(&o);
  o.partitions = parts;
  *err = c == NULL
             ? FLEET_ENOMEM
             : cli_query_open(&c->base, (fleet_handle_t *)&c->q,
                              fleet_queue_init(&cli->client, &c->q, name, &o),
                              "queue", name);
  if (*err != 0)
    return NULL;
  if (key != NULL)
    cli_jadd(c->base.res, key, val != NULL ? cli_jstr(val) : cli_jnull());
  return c;
}

typedef cli_qctx_t qctx_t;

static qctx_t *qctx_open(cli_t *cli, const char *name, const char *key,
                         const char *val, cli_done_fn done, void *arg,
                         int *err) {
  return cli_qctx_open(cli, sizeof(qctx_t), name, key, val, done, arg, err);
}

static qctx_t *qctx_of(fleet_queue_t *q) {
  return (qctx_t *)q->data;
}

/* ------------------------------------------------------------------------ */
/* Stats (and ls)                                                           */

static void on_sample(fleet_queue_t *q, int status,
                      const fleet_queue_sample_t *s, void *ud) {
  qctx_t *c = qctx_of(q);

  cli_json_t *v = cli_jget(c->base.res, "oldest_pending_ms");

  (void)ud;
  /* (The member waits, null, where the counts put it.) */
  if (status == 0 && v != NULL && s->oldest_ms >= 0) {
    v->type = CLI_JINT;
    v->num = s->oldest_ms;
  }
  cli_query_answered(&c->base, status, NULL);
}

void cli_q_on_counts(fleet_queue_t *q, int status,
                     const fleet_queue_counts_t *n, void *ud) {
  qctx_t *c = qctx_of(q);

  (void)ud;
  if (status == 0) {
    cli_jadd(c->base.res, "pending", cli_jint((int64_t)n->pending));
    cli_jadd(c->base.res, "delayed", cli_jint((int64_t)n->delayed));
    cli_jadd(c->base.res, "running", cli_jint((int64_t)n->running));
    cli_jadd(c->base.res, "completed", cli_jint((int64_t)n->completed));
    cli_jadd(c->base.res, "dead", cli_jint((int64_t)n->dead));
    cli_jadd(c->base.res, "completed_kept",
             cli_jint((int64_t)n->completed_kept));
    cli_jadd(c->base.res, "dead_kept", cli_jint((int64_t)n->dead_kept));
    cli_jadd(c->base.res, "waiting_children",
             cli_jint((int64_t)n->waiting_children));
    if (c->base.cli->sample_history) {
      cli_jadd(c->base.res, "oldest_pending_ms", cli_jnull());
      cli_query_sent(&c->base,
                     fleet_queue_sample(q, n->pending + n->delayed + n->running,
                                        on_sample, NULL));
    }
    /* Explicit names: what is in the state now (the kept records), and
     * every job that ever got there (the counters above). */
    cli_jadd(c->base.res, "completed_now",
             cli_jint((int64_t)n->completed_kept));
    cli_jadd(c->base.res, "dead_now", cli_jint((int64_t)n->dead_kept));
    cli_jadd(c->base.res, "completed_ever", cli_jint((int64_t)n->completed));
    cli_jadd(c->base.res, "dead_ever", cli_jint((int64_t)n->dead));
  }
  cli_query_answered(&c->base, status, NULL);
}

void cli_q_on_paused(fleet_queue_t *q, int status, int paused, void *ud) {
  qctx_t *c = qctx_of(q);

  (void)ud;
  if (status == 0)
    cli_jadd(c->base.res, "paused", cli_jbool(paused));
  cli_query_answered(&c->base, status, NULL);
}

/* The stats of a handle of `parts` partitions of `queue`. */
static int queue_stats(cli_t *cli, const char *queue, uint32_t parts,
                       cli_done_fn done, void *arg) {
  int err;
  qctx_t *c = cli_qctx_open_parts(cli, sizeof(qctx_t), queue, parts, NULL, NULL,
                                  done, arg, &err);

  if (c == NULL)
    return err;
  /* Counts first, then the paused flag: the reply order keeps the
   * members in this order. */
  err = fleet_queue_counts(&c->q, cli_q_on_counts, NULL);
  if (err == 0) {
    cli_query_sent(&c->base, 0);
    err = fleet_queue_paused(&c->q, cli_q_on_paused, NULL);
  }
  return cli_query_sent(&c->base, err);
}

int cli_q_queue_stats(cli_t *cli, const char *queue, cli_done_fn done,
                      void *arg) {
  return queue_stats(cli, queue, cli_queue_parts(cli, queue), done, arg);
}

/* A partitioned queue is one row of `queue ls`: the rows of its
 * partitions' queues ("<name>~<i>", docs/queue.md, "Partitioned queues")
 * are added into the row of <name> (a partition that never held a job
 * has no keys, and no row): the counts are summed, the oldest age is the
 * largest, paused says whether any partition is. Each row is read on a
 * plain handle of its name (ls_stats()), whatever partition count is
 * known of it (the dashboard's), so that each partition is counted once
 * and samples its own depth. */
typedef struct {
  cli_done_fn done;
  void *arg;
} ls_fold_t;

/* The row of queue `name` (len bytes) in `rows`, or NULL. */
static cli_json_t *ls_row(cli_json_t *rows, const char *name, size_t len) {
  cli_json_t *r, *q;

  for (r = rows->first; r != NULL; r = r->next)
    if ((q = cli_jget(r, "queue")) != NULL && q->len == len &&
        memcmp(q->str, name, len) == 0)
      return r;
  return NULL;
}

static void ls_add_into(cli_json_t *base, const cli_json_t *part) {
  cli_json_t *f, *b;

  for (f = part->first; f != NULL; f = f->next) {
    if (f->key == NULL || (b = cli_jget(base, f->key)) == NULL)
      continue;
    if (strcmp(f->key, "oldest_pending_ms") == 0) {
      if (f->type == CLI_JINT && (b->type != CLI_JINT || f->num > b->num)) {
        b->type = CLI_JINT;
        b->num = f->num;
      }
    } else if (f->type == CLI_JINT && b->type == CLI_JINT) {
      b->num += f->num;
    } else if (f->type == CLI_JBOOL && b->type == CLI_JBOOL) {
      b->num = b->num || f->num;
    }
  }
}

static void ls_fold(cli_json_t *rows) {
  cli_json_t *r, *next, *prev = NULL, *base, *q;
  const char *t;

  for (r = rows->first; r != NULL; r = next) {
    next = r->next;
    q = cli_jget(r, "queue");
    t = q != NULL && q->type == CLI_JSTR ? strrchr(q->str, '~') : NULL;
    base = t != NULL && t[1] != '\0' &&
                   strspn(t + 1, "0123456789") == strlen(t + 1)
               ? ls_row(rows, q->str, (size_t)(t - q->str))
               : NULL;
    if (base == NULL) {
      prev = r;
      continue;
    }
    ls_add_into(base, r);
    if (prev != NULL)
      prev->next = next;
    else
      rows->first = next;
    if (rows->last == r)
      rows->last = prev;
    rows->n--;
    r->next = NULL;
    cli_jfree(r);
  }
}

static int ls_stats(cli_t *cli, const char *queue, cli_done_fn done,
                    void *arg) {
  return queue_stats(cli, queue, 1, done, arg);
}

static void ls_fold_done(cli_t *cli, int status, const char *detail,
                         cli_json_t *result, void *arg) {
  ls_fold_t f = *(ls_fold_t *)arg;

  free(arg);
  if (status == 0 && result != NULL && result->type == CLI_JARR)
    ls_fold(result);
  f.done(cli, status, detail, result, f.arg);
}

int cli_q_queue_ls(cli_t *cli, cli_done_fn done, void *arg) {
  ls_fold_t *f = malloc(sizeof(*f));
  int err;

  if (f == NULL)
    return FLEET_ENOMEM;
  f->done = done;
  f->arg = arg;
  err = cli_scan_map(cli, FLEET_OBJECT_QUEUE, "*", QUEUE_LS_MAX, ls_stats,
                     ls_fold_done, f);
  if (err != 0)
    free(f);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Jobs, get                                                                */

/* A page of jobs: pending ones get their age. */
typedef struct {
  cli_qctx_t qc;
  int pending;
} jobs_ctx_t;

static void on_jobs(fleet_queue_t *q, int status,
                    const fleet_job_summary_t *jobs, size_t n, uint64_t total,
                    uint64_t next, void *ud) {
  jobs_ctx_t *c = q->data;
  int64_t now = cli_now_ms();
  cli_json_t *arr, *o;
  size_t i;

  (void)ud;
  if (status == 0) {
    cli_jadd(c->qc.base.res, "total", cli_jint((int64_t)total));
    cli_jadd(c->qc.base.res, "next_cursor", cli_jint((int64_t)next));
    arr = cli_jadd(c->qc.base.res, "jobs", cli_jarr());
    for (i = 0; i < n; i++) {
      o = cli_jadd(arr, NULL, cli_jobj());
      cli_jadd(o, "id", cli_jstr(jobs[i].id));
      cli_jadd(o, "type", cli_jstr(jobs[i].type));
      cli_jadd(o, "attempts", cli_jint(jobs[i].attempts));
      cli_jadd(o, "max_attempts", cli_jint(jobs[i].max_attempts));
      cli_jadd_time(o, "created_ms", (int64_t)jobs[i].created_ms);
      cli_jadd_time(o, "time_ms", (int64_t)jobs[i].time_ms);
      if (c->pending)
        cli_jadd(o, "age_ms",
                 cli_jint(now > (int64_t)jobs[i].created_ms
                              ? now - (int64_t)jobs[i].created_ms
                              : 0));
      cli_jadd(o, "payload",
               cli_jbytes(jobs[i].payload.base, jobs[i].payload.len));
      cli_jadd(o, "last_error",
               cli_jbytes(jobs[i].last_error, jobs[i].last_error_len));
      cli_jadd(o, "group",
               jobs[i].group != NULL ? cli_jstr(jobs[i].group) : cli_jnull());
    }
  }
  cli_query_answered(&c->qc.base, status, NULL);
}

int cli_q_queue_jobs(cli_t *cli, const char *queue, fleet_job_state_t state,
                     const char *group, uint64_t cursor, size_t limit,
                     cli_done_fn done, void *arg) {
  int err;
  jobs_ctx_t *c =
      (jobs_ctx_t *)cli_qctx_open(cli, sizeof(jobs_ctx_t), queue, "state",
                                  fleet_job_state_name(state), done, arg, &err);

  if (c == NULL)
    return err;
  if (group != NULL)
    cli_jadd(c->qc.base.res, "group", cli_jstr(group));
  c->pending = state == FLEET_JOB_PENDING;
  return cli_query_sent(
      &c->qc.base,
      group != NULL ? fleet_queue_group_jobs(&c->qc.q, group, cursor, limit,
                                             QUEUE_PAYLOAD_MAX, on_jobs, NULL)
                    : fleet_queue_jobs(&c->qc.q, state, cursor, limit,
                                       QUEUE_PAYLOAD_MAX, on_jobs, NULL));
}

static void on_list(fleet_queue_t *q, int status, const char *const *ids,
                    size_t n, uint64_t total, void *ud) {
  qctx_t *c = qctx_of(q);
  cli_json_t *arr;
  size_t i;

  (void)ud;
  if (status == 0) {
    cli_jadd(c->base.res, "total", cli_jint((int64_t)total));
    arr = cli_jadd(c->base.res, "ids", cli_jarr());
    for (i = 0; i < n; i++)
      cli_jadd(arr, NULL, cli_jstr(ids[i]));
  }
  cli_query_answered(&c->base, status, NULL);
}

int cli_q_queue_list(cli_t *cli, const char *queue, const char *type,
                     size_t limit, cli_done_fn done, void *arg) {
  int err;
  qctx_t *c = qctx_open(cli, queue, "type", type, done, arg, &err);

  if (c != NULL)
    err = cli_query_sent(&c->base,
                         fleet_queue_list(&c->q, type, limit, on_list, NULL));
  return err;
}

static void on_get(fleet_queue_t *q, int status, const fleet_job_info_t *i,
                   void *ud) {
  qctx_t *c = qctx_of(q);

  (void)ud;
  if (status == 0) {
    cli_jadd(c->base.res, "state", cli_jstr(fleet_job_state_name(i->state)));
    cli_jadd(c->base.res, "type", cli_jstr(i->type));
    cli_jadd(c->base.res, "attempts", cli_jint(i->attempts));
    cli_jadd(c->base.res, "max_attempts", cli_jint(i->max_attempts));
    cli_jadd(c->base.res, "priority", cli_jint(i->priority));
    cli_jadd(c->base.res, "payload",
             cli_jbytes(i->payload.base, i->payload.len));
    cli_jadd(c->base.res, "last_error",
             i->last_error != NULL
                 ? cli_jbytes(i->last_error, i->last_error_len)
                 : cli_jnull());
    cli_jadd_time(c->base.res, "created_ms", (int64_t)i->created_ms);
    cli_jadd_time(c->base.res, "run_at_ms", (int64_t)i->run_at_ms);
    cli_jadd_time(c->base.res, "finished_ms", (int64_t)i->finished_ms);
    cli_jadd(c->base.res, "token", cli_jint((int64_t)i->token));
    cli_jadd(c->base.res, "group",
             i->group != NULL ? cli_jstr(i->group) : cli_jnull());
    cli_jadd(c->base.res, "result",
             i->has_result ? cli_jbytes(i->result.base, i->result.len)
                           : cli_jnull());
    cli_jadd(c->base.res, "progress",
             i->progress >= 0 ? cli_jint(i->progress) : cli_jnull());
    cli_jadd(c->base.res, "progress_data",
             i->progress >= 0
                 ? cli_jbytes(i->progress_data.base, i->progress_data.len)
                 : cli_jnull());
    cli_headers_json(c->base.res, i->headers, i->headers_len);
    cli_errors_json(c->base.res, i);
  }
  cli_query_answered(&c->base, status, NULL);
}

/* A flow parent's children (docs/queue.md, "Flows"): "children", an
 * array of {queue, id, state, result}, "children_waiting" and
 * "fail_on_child_death"; nothing for a job that is no flow parent (or
 * whose flow ended with it). */
static void on_children(fleet_queue_t *q, int status,
                        const fleet_flow_child_info_t *kids, size_t n,
                        size_t waiting, int fail_on_death, void *ud) {
  qctx_t *c = qctx_of(q);
  cli_json_t *arr, *o;
  size_t i;

  (void)ud;
  if (status == FLEET_ENOTFOUND) {
    status = 0;
  } else if (status == 0) {
    arr = cli_jadd(c->base.res, "children", cli_jarr());
    for (i = 0; i < n; i++) {
      o = cli_jadd(arr, NULL, cli_jobj());
      cli_jadd(o, "queue", cli_jstr(kids[i].queue));
      cli_jadd(o, "id", cli_jstr(kids[i].id));
      cli_jadd(o, "state",
               cli_jstr(kids[i].state == FLEET_JOB_PENDING
                            ? "waiting"
                            : fleet_job_state_name(kids[i].state)));
      cli_jadd(o, "result",
               cli_jbytes(kids[i].result.base, kids[i].result.len));
    }
    cli_jadd(c->base.res, "children_waiting", cli_jint((int64_t)waiting));
    cli_jadd(c->base.res, "fail_on_child_death", cli_jbool(fail_on_death));
  }
  cli_query_answered(&c->base, status, NULL);
}

int cli_q_queue_get(cli_t *cli, const char *queue, const char *id,
                    cli_done_fn done, void *arg) {
  int err;
  qctx_t *c = qctx_open(cli, queue, "id", id, done, arg, &err);

  if (c == NULL)
    return err;
  /* The job, then its children when it is a flow's parent: the reply
   * order keeps the members in this order. */
  err = fleet_queue_get(&c->q, id, on_get, NULL);
  if (err == 0) {
    cli_query_sent(&c->base, 0);
    err = fleet_queue_children(&c->q, id, on_children, NULL);
  }
  return cli_query_sent(&c->base, err);
}

/* ------------------------------------------------------------------------ */
/* Changes                                                                  */

/* A count of jobs changed (retried, removed): the member `name` (the
 * call's user data) of the result. */
static void on_count(fleet_queue_t *q, int status, uint64_t n, void *name) {
  qctx_t *c = qctx_of(q);

  if (status == 0)
    cli_jadd(c->base.res, name, cli_jint((int64_t)n));
  cli_query_answered(&c->base, status, NULL);
}

static void on_enqueued(fleet_queue_t *q, int status,
                        const fleet_enqueue_result_t *r, size_t n, void *ud) {
  qctx_t *c = qctx_of(q);

  (void)ud;
  if (status == 0 && n == 1 && r[0].status != 0)
    status = r[0].status;
  if (status == 0 && n == 1)
    cli_jadd(c->base.res, "id", cli_jbytes(r[0].id, r[0].id_len));
  cli_query_answered(&c->base, status, NULL);
}

int cli_q_queue_add(cli_t *cli, const char *queue, const char *type,
                    const char *payload, const fleet_header_t *h, size_t nh,
                    cli_done_fn done, void *arg) {
  fleet_job_spec_t spec;
  int err;
  qctx_t *c = qctx_open(cli, queue, NULL, NULL, done, arg, &err);

  fleet_job_spec_init(&spec, type, payload, strlen(payload));
  spec.headers = h;
  spec.nheaders = nh;
  if (c != NULL)
    err = cli_query_sent(
        &c->base, fleet_queue_enqueue(&c->q, &spec, 1, on_enqueued, NULL));
  return err;
}

int cli_q_queue_retry(cli_t *cli, const char *queue, const char *id,
                      cli_done_fn done, void *arg) {
  int err;
  qctx_t *c = qctx_open(cli, queue, "id", id, done, arg, &err);

  if (c != NULL)
    err = cli_query_sent(&c->base,
                         fleet_queue_retry(&c->q, id, on_count, "retried"));
  return err;
}

/* A cancel's answer: "cancelled" true, and "result": "deleted" (it was
 * pending or delayed) or "cancel requested" (it is running: it ends as
 * dead, "cancelled", when its handler finishes or the grace passes). */
static void on_cancel(fleet_queue_t *q, int status,
                      fleet_cancel_result_t result, void *ud) {
  qctx_t *c = qctx_of(q);

  (void)ud;
  if (status == 0) {
    cli_jadd(c->base.res, "cancelled", cli_jbool(1));
    cli_jadd(c->base.res, "result",
             cli_jstr(result == FLEET_CANCEL_REQUESTED ? "cancel requested"
                                                       : "deleted"));
  }
  cli_query_answered(&c->base, status, NULL);
}

int cli_q_queue_cancel_job(cli_t *cli, const char *queue, const char *id,
                           uint32_t grace_ms, cli_done_fn done, void *arg) {
  int err;
  qctx_t *c = qctx_open(cli, queue, "id", id, done, arg, &err);

  if (c != NULL)
    err = cli_query_sent(
        &c->base, fleet_queue_cancel_job(&c->q, id, grace_ms, on_cancel, NULL));
  return err;
}

int cli_q_queue_cancel(cli_t *cli, const char *queue, const char *id,
                       cli_done_fn done, void *arg) {
  return cli_q_queue_cancel_job(cli, queue, id, 0, done, arg);
}

int cli_q_queue_purge(cli_t *cli, const char *queue, fleet_job_state_t state,
                      cli_done_fn done, void *arg) {
  int err;
  qctx_t *c = qctx_open(cli, queue, "state", fleet_job_state_name(state), done,
                        arg, &err);

  if (c != NULL)
    err = cli_query_sent(&c->base,
                         fleet_queue_purge(&c->q, state, on_count, "removed"));
  return err;
}

int cli_q_queue_pause(cli_t *cli, const char *queue, const char *action,
                      cli_done_fn done, void *arg) {
  int err;
  qctx_t *c = qctx_open(cli, queue, NULL, NULL, done, arg, &err);

  if (c != NULL)
    err = cli_query_sent(
        &c->base, strcmp(action, "pause") == 0
                      ? fleet_queue_pause(&c->q, cli_q_on_paused, NULL)
                      : fleet_queue_resume(&c->q, cli_q_on_paused, NULL));
  return err;
}

/* ------------------------------------------------------------------------ */
/* Whether a queue exists                                                   */

/* Whether the counts and paused flag of `res` (cli_q_queue_stats()) show
 * a queue that `queue ls` lists: the keys it finds a queue by (a job in a
 * state, a finished one counted or kept, the pause, the partition count
 * of a partitioned queue, which cli_queue_parts() knows) hold something. */
static int queue_exists(const cli_t *cli, const cli_json_t *res) {
  static const char *const keys[] = {
      "pending",        "delayed",   "running",          "completed", "dead",
      "completed_kept", "dead_kept", "waiting_children", "paused",    NULL};
  const cli_json_t *v = cli_jget(res, "queue");
  size_t i;

  if (v != NULL && v->type == CLI_JSTR && cli_queue_parts(cli, v->str) >= 2)
    return 1;
  for (i = 0; keys[i] != NULL; i++)
    if ((v = cli_jget(res, keys[i])) != NULL && v->num != 0)
      return 1;
  return 0;
}

static void known_done(cli_t *cli, int status, const char *detail,
                       cli_json_t *res, void *arg) {
  char **argv;
  int rc;

  (void)arg;
  if (status != 0) {
    cli_finish(cli, status, detail, NULL, NULL);
    return;
  }
  if (!queue_exists(cli, res)) {
    fleet_escape_print(stderr, "fleet: %s: no such queue: %s", cli->what,
                       cli_jget(res, "queue")->str);
    cli_jfree(res);
    cli->exit_code = 1;
    cli_close_client(cli);
    return;
  }
  cli_jfree(res);
  /* The command again, on a copy of its words (its options parser takes
   * them out of the array it gets). */
  argv = malloc(((size_t)cli->noun_argc + 1) * sizeof(*argv));
  if (argv == NULL) {
    cli_finish(cli, FLEET_ENOMEM, NULL, NULL, NULL);
    return;
  }
  memcpy(argv, cli->noun_argv, ((size_t)cli->noun_argc + 1) * sizeof(*argv));
  cli->queue_known = 1;
  rc = cli->noun_fn(cli, cli->noun_argc, argv);
  free(argv);
  if (rc != 0) {
    cli->exit_code = rc == CLI_DONE ? 0 : rc;
    cli_close_client(cli);
  }
}

int cli_queue_known(cli_t *cli, const char *queue, int create) {
  int err;

  if (create || cli->queue_known)
    return 1;
  err = cli_q_queue_stats(cli, queue, known_done, NULL);
  if (err != 0) {
    cli_error(cli, "queue", err, NULL);
    cli->exit_code = 1;
    cli_close_client(cli);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The verbs                                                                */

/* `queue ls`: what is in each state now, then the lifetime counters. */
static const char *const ls_cols[] = {
    "queue", "pending",          "delayed", "running",        "completed",
    "dead",  "waiting_children", "paused",  "completed-ever", "dead-ever",
    NULL};

/* The rows `queue ls` prints: "completed" and "dead" are the jobs in
 * those states now (the JSON's completed_now, dead_now), and the
 * lifetime counters are labelled as such. */
static void print_ls(const cli_json_t *res) {
  static const char *const same[] = {"queue",   "pending",          "delayed",
                                     "running", "waiting_children", "paused",
                                     NULL};
  static const char *const from[][2] = {{"completed", "completed_now"},
                                        {"dead", "dead_now"},
                                        {"completed-ever", "completed_ever"},
                                        {"dead-ever", "dead_ever"}};
  cli_json_t *rows = cli_jarr(), *row;
  const cli_json_t *q, *v;
  size_t i;

  for (q = res->first; q != NULL; q = q->next) {
    row = cli_jadd(rows, NULL, cli_jobj());
    for (i = 0; same[i] != NULL; i++)
      if ((v = cli_jget(q, same[i])) != NULL)
        cli_jadd(row, same[i], cli_jcopy(v));
    for (i = 0; i < sizeof(from) / sizeof(from[0]); i++)
      if ((v = cli_jget(q, from[i][1])) != NULL)
        cli_jadd(row, from[i][0], cli_jcopy(v));
  }
  if (rows == NULL || rows->num == -1)
    fprintf(stderr, "fleet: out of memory\n");
  else
    cli_table(stdout, rows, ls_cols);
  cli_jfree(rows);
}

/* The columns of a page of jobs: the time each state has ("age" of a
 * pending job, when a delayed one runs, when a running claim expires,
 * when a finished one ended). */
static const char *jobs_time_col(const char *state) {
  if (strcmp(state, "pending") == 0)
    return "age";
  if (strcmp(state, "delayed") == 0)
    return "run_at";
  if (strcmp(state, "running") == 0)
    return "deadline";
  if (strcmp(state, "completed") == 0 || strcmp(state, "dead") == 0)
    return "finished";
  return NULL;
}

/* Prints a page of jobs: a table, then the total and the next cursor. */
static void print_jobs(const cli_json_t *res) {
  cli_json_t *next = cli_jget(res, "next_cursor");
  const char *state = cli_jget(res, "state")->str;
  const char *tcol = jobs_time_col(state);
  const char *cols[] = {"id", "type", "group", "attempts", "created",
                        tcol, NULL,   NULL,    NULL};
  cli_json_t *rows = cli_jcopy(cli_jget(res, "jobs")), *row, *t;
  char more[64] = "", buf[32];

  cols[tcol != NULL ? 6 : 5] = "payload";
  cols[tcol != NULL ? 7 : 6] = "last_error";
  for (row = rows != NULL ? rows->first : NULL; tcol != NULL && row != NULL;
       row = row->next) {
    if (strcmp(tcol, "age") == 0)
      cli_jadd(row, tcol,
               cli_jstr(cli_duration(cli_jget(row, "age_ms")->num, buf,
                                     sizeof(buf))));
    else if ((t = cli_jget(row, "time")) != NULL)
      cli_jadd(row, tcol, cli_jcopy(t));
  }
  if (rows == NULL || rows->num == -1) {
    fprintf(stderr, "fleet: out of memory\n");
    cli_jfree(rows);
    return;
  }
  cli_table(stdout, rows, cols);
  cli_jfree(rows);
  if (next != NULL && next->num != 0)
    snprintf(more, sizeof(more), "; next page: --cursor %lld",
             (long long)next->num);
  fleet_escape_print(
      stdout, "%lld %s job(s) in %s%s%s",
      (long long)cli_jget(res, "total")->num, state,
      cli_jget(res, "queue")->str, more,
      cli_jget(res, "total")->num == 0 && strcmp(state, "completed") == 0
          ? " (completion history is off unless keep_completed is set)"
          : "");
}

/* Prints the ids of a listing by type, one a line, then the total. */
static void print_list(const cli_json_t *res) {
  const cli_json_t *id;

  for (id = cli_jget(res, "ids")->first; id != NULL; id = id->next)
    fleet_escape_print(stdout, "%s", id->str);
  fleet_escape_print(stdout, "%lld queued job(s) of type %s in %s",
                     (long long)cli_jget(res, "total")->num,
                     cli_jget(res, "type")->str, cli_jget(res, "queue")->str);
}

static const cli_view_t ls_view = {NULL, print_ls};
static const cli_view_t list_view = {NULL, print_list};
static const cli_view_t jobs_view = {NULL, print_jobs};

static int usage_error(const char *fmt, const char *arg) {
  return cli_usage_error("queue", fmt, arg);
}

int cli_cmd_queue(cli_t *cli, int argc, char **argv) {
  const char *verb = argc > 1 ? argv[1] : NULL;
  const char *state_s = NULL, *limit_s = NULL, *cursor_s = NULL;
  const char *group = NULL, *grace_s = NULL, *type = NULL;
  int all_dead = 0, create = 0, err;
  /* Every option of every verb here; each verb refuses the ones it does
   * not take below (an unknown word is refused by cli_opts()). */
  const cli_optdef_t jobs_opts[] = {
      CLI_OPT("--state", &state_s), CLI_OPT("--limit", &limit_s),
      CLI_OPT("--cursor", &cursor_s), CLI_OPT("--group", &group), CLI_OPT_END};
  const cli_optdef_t list_opts[] = {CLI_OPT("--type", &type),
                                    CLI_OPT("--limit", &limit_s), CLI_OPT_END};
  const cli_optdef_t cancel_opts[] = {CLI_OPT("--grace-ms", &grace_s),
                                      CLI_OPT_END};
  const cli_optdef_t retry_opts[] = {CLI_FLAG("--all-dead", &all_dead),
                                     CLI_OPT_END};
  const cli_optdef_t purge_opts[] = {CLI_OPT("--state", &state_s), CLI_OPT_END};
  const cli_optdef_t add_opts[] = {CLI_OPT("--type", &type), CLI_OPT_END};
  const cli_optdef_t pause_opts[] = {CLI_FLAG("--create", &create),
                                     CLI_OPT_END};
  fleet_job_state_t state = FLEET_JOB_PENDING;
  uint64_t limit = QUEUE_JOBS_LIMIT, cursor = 0, grace = 0;

  if ((err = cli_noun_help(argc, argv, queue_usage)) != 0)
    return err;
  argc--, argv++; /* argv[0] is now the verb */
  if (argc > 1 && strcmp(verb, "ls") != 0 && strcmp(verb, "create") != 0)
    cli_queue_learn(cli, argv[1]); /* a partitioned queue: cmd_queue_create.c */
  if (strcmp(verb, "create") == 0)
    return cli_cmd_queue_create(cli, argc, argv);
  if (strcmp(verb, "stats") == 0 || strcmp(verb, "limit") == 0 ||
      strcmp(verb, "hold") == 0 || strcmp(verb, "weight") == 0)
    return cli_cmd_queue_flow(cli, argc, argv);
  if (strcmp(verb, "events") == 0)
    return cli_cmd_queue_events(cli, argc, argv);
  if (strcmp(verb, "delete") == 0 || strcmp(verb, "run") == 0 ||
      strcmp(verb, "kill") == 0 || strcmp(verb, "remove") == 0)
    return cli_cmd_queue_verbs(cli, argc, argv);
  if (strcmp(verb, "history") == 0)
    return cli_cmd_queue_history(cli, argc, argv);
  if (strcmp(verb, "ls") == 0) {
    if ((err = cli_opts("queue", &argc, argv, NULL)) != 0)
      return err;
    if (argc != 1)
      return usage_error("ls takes no argument: %s", argv[1]);
    return cli_started(cli, verb,
                       cli_q_queue_ls(cli, cli_finish, (void *)&ls_view));
  }
  if (strcmp(verb, "jobs") == 0) {
    if ((err = cli_opts("queue", &argc, argv, jobs_opts)) != 0)
      return err;
    if (argc != 2)
      return usage_error("%s takes a queue name and --state", verb);
    if (group != NULL && state_s == NULL)
      state_s = "pending";
    if (cli_job_state(state_s, &state) != 0)
      return usage_error("--state: one of pending, delayed, running, "
                         "completed, dead, waiting-children (got %s)",
                         state_s != NULL ? state_s : "none");
    if (limit_s != NULL && cli_parse_u64(limit_s, 1, 1000, &limit) != 0)
      return usage_error("--limit: 1 to 1000 (got %s)", limit_s);
    if (cursor_s != NULL &&
        cli_parse_u64(cursor_s, 0, CLI_CURSOR_MAX, &cursor) != 0)
      return usage_error("--cursor: a number (got %s)", cursor_s);
    if (group != NULL && state != FLEET_JOB_PENDING)
      return usage_error("--group lists pending jobs only (got --state %s)",
                         state_s);
    if (group != NULL &&
        (group[0] == '\0' || strlen(group) > FLEET_JOB_GROUP_MAX))
      return usage_error("--group: a name of 1 to 128 bytes (got \"%s\")",
                         group);
  } else if (strcmp(verb, "list") == 0) {
    if ((err = cli_opts("queue", &argc, argv, list_opts)) != 0)
      return err;
    if (argc != 2 || type == NULL)
      return usage_error("%s takes a queue name and --type", verb);
    if (type[0] == '\0' || strlen(type) > FLEET_JOB_TYPE_MAX)
      return usage_error("--type: a type of 1 to 128 bytes (got \"%s\")", type);
    if (limit_s != NULL && cli_parse_u64(limit_s, 1, 1000, &limit) != 0)
      return usage_error("--limit: 1 to 1000 (got %s)", limit_s);
  } else if (strcmp(verb, "get") == 0) {
    if ((err = cli_opts("queue", &argc, argv, NULL)) != 0)
      return err;
    if (argc != 3)
      return usage_error("%s takes a queue name and a job id", verb);
  } else if (strcmp(verb, "cancel") == 0) {
    if ((err = cli_opts("queue", &argc, argv, cancel_opts)) != 0)
      return err;
    if (argc != 3)
      return usage_error("%s takes a queue name and a job id", verb);
    if (grace_s != NULL &&
        cli_parse_u64(grace_s, 1, FLEET_QUEUE_CANCEL_GRACE_MAX_MS, &grace) != 0)
      return usage_error("--grace-ms: 1 to 86400000 ms (got %s)", grace_s);
  } else if (strcmp(verb, "retry") == 0) {
    if ((err = cli_opts("queue", &argc, argv, retry_opts)) != 0)
      return err;
    if (argc != (all_dead ? 2 : 3))
      return usage_error("%s takes a queue name and a job id, or --all-dead",
                         verb);
  } else if (strcmp(verb, "purge") == 0) {
    if ((err = cli_opts("queue", &argc, argv, purge_opts)) != 0)
      return err;
    if (argc != 2)
      return usage_error("%s takes a queue name and --state", verb);
    if (cli_job_state(state_s, &state) != 0 ||
        (state != FLEET_JOB_COMPLETED && state != FLEET_JOB_DEAD))
      return usage_error("--state: completed or dead (got %s)",
                         state_s != NULL ? state_s : "none");
  } else if (strcmp(verb, "add") == 0) {
    const char *bad;
    fleet_header_t h[FLEET_JOB_HEADERS_MAX];
    char hbuf[FLEET_JOB_HEADERS_BYTES_MAX];
    size_t nh;

    /* The repeated --header first (cli_opts() takes each option once). */
    if ((bad = cli_header_opts(&argc, argv, h, &nh, hbuf, sizeof(hbuf))))
      return usage_error(
          "--header: KEY=VALUE, at most 16, 4096 bytes in all (got \"%s\")",
          bad);
    if ((err = cli_opts("queue", &argc, argv, add_opts)) != 0)
      return err;
    if (argc != 3)
      return usage_error("%s takes a queue name and a payload", verb);
    return cli_started(cli, verb,
                       cli_q_queue_add(cli, argv[1],
                                       type != NULL ? type : "cli", argv[2], h,
                                       nh, cli_finish, NULL));
  } else if (strcmp(verb, "pause") == 0 || strcmp(verb, "resume") == 0) {
    if ((err = cli_opts("queue", &argc, argv,
                        strcmp(verb, "pause") == 0 ? pause_opts : NULL)) != 0)
      return err;
    if (argc != 2)
      return usage_error("%s takes a queue name", verb);
  } else {
    return usage_error("unknown verb %s", verb);
  }
  /* The verbs on a queue that must exist (pause --create excepted). */
  if (!cli_queue_known(cli, argv[1], create))
    return 0;
  if (strcmp(verb, "jobs") == 0)
    err = cli_q_queue_jobs(cli, argv[1], state, group, cursor, (size_t)limit,
                           cli_finish, (void *)&jobs_view);
  else if (strcmp(verb, "list") == 0)
    err = cli_q_queue_list(cli, argv[1], type, (size_t)limit, cli_finish,
                           (void *)&list_view);
  else if (strcmp(verb, "get") == 0)
    err = cli_q_queue_get(cli, argv[1], argv[2], cli_finish,
                          (void *)&cli_get_view);
  else if (strcmp(verb, "cancel") == 0)
    err = cli_q_queue_cancel_job(cli, argv[1], argv[2], (uint32_t)grace,
                                 cli_finish, NULL);
  else if (strcmp(verb, "retry") == 0)
    err = cli_q_queue_retry(cli, argv[1], all_dead ? NULL : argv[2], cli_finish,
                            NULL);
  else if (strcmp(verb, "purge") == 0)
    err = cli_q_queue_purge(cli, argv[1], state, cli_finish, NULL);
  else
    err = cli_q_queue_pause(cli, argv[1], verb, cli_finish, NULL);
  return cli_started(cli, verb, err);
}
