/* pool_jobs.c -- the jobs a node's workers run: start, stop and notify
 * events from the node's event list, the start's report, and the
 * confirmations the node sends back with the job's token.
 *
 * A local job is known by (worker, key) and carries the token of its
 * assignment. An event names the token it is about: a start whose token
 * the worker runs already is a redelivery and changes nothing; a start
 * with a newer token means the old assignment was lost (the worker is
 * told LOST first); a stop or a notification with an older token is
 * ignored. Every confirmation presents the token, and the scripts refuse
 * a token that is no longer the job's: an owner that lost its job can
 * never change it again. */
#include <stdlib.h>
#include <string.h>

#include "pool_int.h"

static fleet__pool_worker_t *pool_worker_find(fleet__pool_t *p,
                                              const fleet__reply_t *id) {
  fleet__pool_worker_t *w;

  FLEET__LIST_FOREACH_DATA (w, &p->workers, fleet__pool_worker_t, node)
    if (strlen(w->id) == id->len && memcmp(w->id, id->str, id->len) == 0)
      return w;
  return NULL;
}

static struct fleet_pool_job_s *pool_job_find(fleet__pool_worker_t *w,
                                              const char *key, size_t len) {
  FLEET__LIST_FOREACH (n, next, &w->jobs) {
    struct fleet_pool_job_s *j =
        FLEET__LIST_DATA(n, struct fleet_pool_job_s, node);
    if (j->key_len == len && memcmp(j->key, key, len) == 0)
      return j;
  }
  return NULL;
}

void fleet__pool_job_free(struct fleet_pool_job_s *job) {
  fleet__list_remove(&job->node);
  free(job->key);
  free(job->payload);
  free(job);
}

/* Tells the worker to stop `job`, then forgets it. With `requeueable`,
 * the stop callback may hand the job back (fleet_pool_job_requeue()).
 * Returns whether it did. */
static int pool_stop(struct fleet_pool_job_s *job,
                     fleet_pool_stop_reason_t reason, int requeueable) {
  fleet__pool_worker_t *w = job->worker;
  int requeued;

  /* Unlinked first: the callback may close the node or start other
   * work, and must find this job gone. */
  fleet__list_remove(&job->node);
  job->stopping = requeueable ? 2 : 1;
  w->handler.stop_cb(w->pub, job, reason);
  requeued = job->requeued;
  free(job->key);
  free(job->payload);
  free(job);
  return requeued;
}

void fleet__pool_stop_job(struct fleet_pool_job_s *job,
                          fleet_pool_stop_reason_t reason) {
  (void)pool_stop(job, reason, 0);
}

void fleet__pool_stop_all(fleet__pool_t *p, fleet_pool_stop_reason_t reason) {
  fleet__pool_worker_t *w;
  struct fleet_pool_job_s *job;

  FLEET__LIST_FOREACH_DATA (w, &p->workers, fleet__pool_worker_t, node)
    while ((job = fleet__pool_first_job(w)) != NULL)
      fleet__pool_stop_job(job, reason);
}

/* ------------------------------------------------------------------------ */
/* Confirmations                                                            */

/* Reads the reply of a requeue: {1, requeues, delay}: the job is due in
 * `delay` ms, when this node rebalances; {2, requeues, 0}: it was dropped,
 * which the error callback hears (FLEET_EATTEMPTS, naming the key); {0,
 * 0, 0}: stale, nothing changed. */
static void pool_on_requeued(fleet__req_t *r, int status,
                             const fleet__reply_t *reply) {
  fleet__pool_req_t *req = (fleet__pool_req_t *)r;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  char *key = req->key;
  int64_t code = 0, n = 0, delay = 0;

  fleet__req_done(r);
  if (status == 0 && (!fleet__reply_is_array(reply, 3) ||
                      fleet__reply_i64(&reply->elem[0], &code) != 0 ||
                      fleet__reply_i64(&reply->elem[1], &n) != 0 ||
                      fleet__reply_i64(&reply->elem[2], &delay) != 0))
    status = FLEET_EPROTO;
  if (p->base.closing) {
    /* Nothing to tell. */
  } else if (status != 0) {
    fleet__handle_error(&p->base, status);
  } else if (code == 1 && delay >= 0) {
    fleet__pool_requeue_wait(p, (uint64_t)delay);
  } else if (code == 2) {
    fleet__backend_set_detail(fleet__handle_backend(&p->base),
                              "pool job \"%s\" dropped after %lld requeues "
                              "in a row",
                              key, (long long)n);
    fleet__handle_error(&p->base, FLEET_EATTEMPTS);
  }
  free(key);
}

/* Reads the reply of a confirmation: reported to the error callback if
 * it failed. Returns the stale job the confirmation named (a start report
 * refused: the job was given to another owner meanwhile) when `stale` and
 * the worker still runs it, else NULL. */
static struct fleet_pool_job_s *pool_confirmed(fleet__req_t *r, int status,
                                               const fleet__reply_t *reply,
                                               int stale) {
  fleet__pool_req_t *req = (fleet__pool_req_t *)r;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  fleet__pool_worker_t *w = req->worker;
  char *key = req->key;
  size_t key_len = req->key_len;
  uint64_t token = req->token;
  struct fleet_pool_job_s *job = NULL;
  int64_t ok = 1;

  fleet__req_done(r);
  if (status == 0 && fleet__reply_i64(reply, &ok) != 0)
    status = FLEET_EPROTO;
  if (!p->base.closing && status != 0)
    fleet__handle_error(&p->base, status);
  if (stale && !p->base.closing && status == 0 && ok == 0 &&
      (job = pool_job_find(w, key, key_len)) != NULL && job->token != token)
    job = NULL;
  free(key);
  return job;
}

static void pool_reports_release(fleet__pool_report_t *reports, size_t n) {
  size_t i;

  for (i = 0; i < n; i++)
    free(reports[i].key);
  free(reports);
}

/* Reads the reply of a call of start reports: one integer per report, 0
 * when the report was refused (the job was given to another owner
 * meanwhile): a worker that still runs that job is told LOST. `extra`:
 * the elements that follow them (a take's, pool_events.c). */
void fleet__pool_started_read(fleet__req_t *r, int status,
                              const fleet__reply_t *reply, size_t extra) {
  fleet__pool_req_t *req = (fleet__pool_req_t *)r;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  fleet__pool_report_t *reports = req->reports;
  size_t i, n = req->nreports;

  fleet__req_done(r);
  if (status == 0 &&
      (!fleet__reply_is_array(reply, n + extra) || reply->nelem != n + extra))
    status = FLEET_EPROTO;
  for (i = 0; status == 0 && i < n; i++) {
    int64_t ok;

    if (fleet__reply_i64(&reply->elem[i], &ok) != 0)
      status = FLEET_EPROTO;
  }
  if (!p->base.closing && status != 0)
    fleet__handle_error(&p->base, status);
  for (i = 0; status == 0 && i < n && !p->base.closing; i++) {
    fleet__pool_report_t *rp = &reports[i];
    struct fleet_pool_job_s *job;
    int64_t ok = 1;

    (void)fleet__reply_i64(&reply->elem[i], &ok);
    if (ok == 0 &&
        (job = pool_job_find(rp->worker, rp->key, rp->key_len)) != NULL &&
        job->token == rp->token)
      fleet__pool_stop_job(job, FLEET_POOL_STOP_LOST);
  }
  pool_reports_release(reports, n);
}

static void pool_on_started(fleet__req_t *r, int status,
                            const fleet__reply_t *reply) {
  fleet__pool_started_read(r, status, reply, 0);
}

static void pool_on_stopped(fleet__req_t *r, int status,
                            const fleet__reply_t *reply) {
  (void)pool_confirmed(r, status, reply, 0);
}

static const fleet__call_t pool_started_call = {
    "pool.started", FLEET__OP_POOL_STARTED, pool_on_started, NULL};
static const fleet__call_t pool_stopped_call = {
    "pool.stopped", FLEET__OP_POOL_STOPPED, pool_on_stopped, NULL};
static const fleet__call_t pool_requeue_call = {
    "pool.requeue", FLEET__OP_POOL_REQUEUE, pool_on_requeued, NULL};

/* The most start reports one call carries. */
#define POOL_REPORTS_MAX 128

void fleet__pool_reports_begin(fleet__pool_t *p) {
  p->reporting = 1;
}

/* Sends the collected start reports as one call, `call` reading its
 * reply; with `take` (a token; 0: none), the call also takes that start
 * from the head of the node's event list (pool_started.lua). Returns
 * whether a call was sent. */
static int pool_reports_send(fleet__pool_t *p, uint64_t take,
                             const fleet__call_t *call) {
  fleet_bytes_t tag = fleet__key_bytes(&p->tag);
  fleet__pool_report_t *reports = p->reports;
  size_t i, n = p->nreports;
  fleet__pool_req_t *req = NULL;
  int err;

  p->reports = NULL;
  p->nreports = p->reports_cap = 0;
  if (n == 0)
    return 0;
  if (p->base.closing) {
    pool_reports_release(reports, n);
    return 0;
  }
  err = fleet__args_begin(&p->args, 4 * n + (take ? 3 : 0), 2 * n + 1);
  for (i = 0; err == 0 && i < n; i++) {
    fleet__args_bytes(&p->args, reports[i].key, reports[i].key_len);
    fleet__args_str(&p->args, reports[i].worker->id);
    fleet__args_u64(&p->args, reports[i].token);
    fleet__args_i64(&p->args, reports[i].status);
  }
  if (err == 0 && take != 0) {
    fleet__args_bytes(&p->args, p->node_id, p->node_id_len);
    fleet__args_str(&p->args, p->nonce);
    fleet__args_u64(&p->args, take);
  }
  if (err == 0) {
    req = (fleet__pool_req_t *)fleet__call_new(&p->base, call, NULL, NULL);
    err = req == NULL ? FLEET_ENOMEM : 0;
  }
  if (err == 0) {
    req->reports = reports;
    req->nreports = n;
    req->take = take;
    err = fleet__call_send(&req->base, &tag, 1, p->args.argv, p->args.argc);
  }
  if (err != 0) {
    pool_reports_release(reports, n);
    fleet__handle_error(&p->base, err);
    return 0;
  }
  return 1;
}

void fleet__pool_reports_end(fleet__pool_t *p) {
  p->reporting = 0;
  (void)pool_reports_send(p, 0, &pool_started_call);
}

int fleet__pool_reports_end_take(fleet__pool_t *p, uint64_t take,
                                 const fleet__call_t *call) {
  p->reporting = 0;
  return pool_reports_send(p, take, call);
}

void fleet__pool_reports_free(fleet__pool_t *p) {
  pool_reports_release(p->reports, p->nreports);
  p->reports = NULL;
  p->nreports = p->reports_cap = 0;
}

/* Reports the start of (worker, key, token) with `status`: now, or with
 * the other reports of the event read being handled. */
static void pool_report(fleet__pool_t *p, fleet__pool_worker_t *w,
                        const char *key, size_t key_len, uint64_t token,
                        int status) {
  fleet__pool_report_t *rp;
  char *copy;

  if (fleet__grow((void **)&p->reports, &p->reports_cap, p->nreports + 1,
                  sizeof(*p->reports)) != 0 ||
      (copy = fleet__memdup(key, key_len)) == NULL) {
    fleet__handle_error(&p->base, FLEET_ENOMEM);
    return;
  }
  rp = &p->reports[p->nreports++];
  rp->worker = w;
  rp->key = copy;
  rp->key_len = key_len;
  rp->token = token;
  rp->status = status;
  if (!p->reporting || p->nreports >= POOL_REPORTS_MAX)
    (void)pool_reports_send(p, 0, &pool_started_call);
}

/* Sends `call` (POOL_STOPPED or POOL_REQUEUE) for (worker, key, token)
 * with `code`: the status, or for a requeue 's' (from the start) or 'x'
 * (from a stop), with the node's bound and backoff. Start reports
 * collected before it go first, so that the pool sees a job's
 * confirmations in the order they were made. */
static void pool_confirm(fleet__pool_t *p, const fleet__call_t *call,
                         fleet__pool_worker_t *w, const char *key,
                         size_t key_len, uint64_t token, int code) {
  fleet_bytes_t tag = fleet__key_bytes(&p->tag);
  char *copy;
  fleet__pool_req_t *req = NULL;
  int requeue = call == &pool_requeue_call;
  int err;

  (void)pool_reports_send(p, 0, &pool_started_call);
  copy = fleet__memdup(key, key_len);
  err = copy == NULL ? FLEET_ENOMEM
                     : fleet__args_begin(&p->args, requeue ? 6 : 4, 2);

  if (err == 0) {
    fleet__args_bytes(&p->args, key, key_len);
    fleet__args_str(&p->args, w->id);
    fleet__args_u64(&p->args, token);
    if (requeue) {
      fleet__args_str(&p->args, code == 's' ? "s" : "x");
      fleet__args_u64(&p->args, p->opts.max_requeues);
      fleet__args_u64(&p->args, p->opts.requeue_backoff_ms);
    } else {
      fleet__args_i64(&p->args, code);
    }
    req = (fleet__pool_req_t *)fleet__call_new(&p->base, call, NULL, NULL);
    err = req == NULL ? FLEET_ENOMEM : 0;
  }
  if (err == 0) {
    req->worker = w;
    req->token = token;
    req->key = copy;
    req->key_len = key_len;
    err = fleet__call_send(&req->base, &tag, 1, p->args.argv, p->args.argc);
  }
  if (err != 0) {
    free(copy);
    fleet__handle_error(&p->base, err);
  }
}

void fleet__pool_reasserted(fleet__pool_t *p, const fleet__pool_claim_t *c,
                            uint64_t token) {
  struct fleet_pool_job_s *job = pool_job_find(c->worker, c->key, c->key_len);

  if (job != NULL && job->token != c->token)
    job = NULL; /* a newer start of the key: not the job re-asserted */
  if (token == 0) {
    if (job != NULL)
      fleet__pool_stop_job(job, FLEET_POOL_STOP_LOST);
  } else if (job != NULL) {
    job->token = token;
  } else {
    /* It stopped here meanwhile: the pool places it again (orphaned). */
    pool_confirm(p, &pool_stopped_call, c->worker, c->key, c->key_len, token,
                 FLEET_ECANCELED);
  }
}

int fleet_pool_job_started(fleet_pool_job_t *job, int status) {
  fleet__pool_worker_t *w;
  fleet__pool_t *p;

  if (job == NULL || status > 0)
    return FLEET_EINVAL;
  if (job->reported)
    return FLEET_EALREADY;
  job->reported = 1;
  w = job->worker;
  p = w->pool;
  if (p->base.closing)
    return 0;
  pool_report(p, w, job->key, job->key_len, job->token, status);
  if (status != 0)
    fleet__pool_job_free(job);
  return 0;
}

int fleet_pool_job_requeue(fleet_pool_job_t *job) {
  fleet__pool_worker_t *w;
  fleet__pool_t *p;

  if (job == NULL)
    return FLEET_EINVAL;
  if (job->requeued)
    return FLEET_EALREADY;
  if (job->stopping != 0) {
    /* In the stop callback: the job goes back once it returns. */
    if (job->stopping != 2)
      return FLEET_EINVAL;
    job->requeued = 1;
    return 0;
  }
  if (job->reported)
    return FLEET_EALREADY;
  job->reported = job->requeued = 1;
  w = job->worker;
  p = w->pool;
  if (p->base.closing)
    return 0;
  pool_confirm(p, &pool_requeue_call, w, job->key, job->key_len, job->token,
               's');
  fleet__pool_job_free(job);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Events                                                                   */

static int pool_ev_token(const fleet__reply_t *ev, uint64_t *token) {
  return fleet__reply_u64_str(&ev[3], token);
}

/* A start: a new local job, then the worker's start callback. */
static void pool_ev_start(fleet__pool_t *p, fleet__pool_worker_t *w,
                          const fleet__reply_t *ev, uint64_t token) {
  struct fleet_pool_job_s *job = pool_job_find(w, ev[1].str, ev[1].len);

  if (w->removing && (job == NULL || job->token < token)) {
    /* The worker is being removed: it takes no new job. Handed back, the
     * job loses its owner and the pool places it again. */
    if (job != NULL)
      fleet__pool_stop_job(job, FLEET_POOL_STOP_LOST);
    if (!p->base.closing)
      pool_confirm(p, &pool_stopped_call, w, ev[1].str, ev[1].len, token,
                   FLEET_ECANCELED);
    return;
  }

  if (job != NULL) {
    if (job->token >= token)
      return; /* a redelivery, or an older start: nothing changes */
    fleet__pool_stop_job(job, FLEET_POOL_STOP_LOST);
    if (p->base.closing || p->state != FLEET__POOL_ACTIVE)
      return;
  }
  job = calloc(1, sizeof(*job));
  if (job == NULL || (job->key = fleet__memdup(ev[1].str, ev[1].len)) == NULL ||
      (job->payload = fleet__memdup(ev[4].str, ev[4].len)) == NULL) {
    if (job != NULL) {
      free(job->key);
      free(job);
    }
    /* The job cannot run here: report the failure so it leaves the pool
     * and its dispatcher hears it. */
    pool_report(p, w, ev[1].str, ev[1].len, token, FLEET_ENOMEM);
    return;
  }
  job->worker = w;
  job->key_len = ev[1].len;
  job->payload_len = ev[4].len;
  job->token = token;
  fleet__list_insert_head(&w->jobs, &job->node);
  w->handler.start_cb(w->pub, job);
}

void fleet__pool_job_event(fleet__pool_t *p, const fleet__reply_t *ev) {
  fleet__pool_worker_t *w = pool_worker_find(p, &ev[2]);
  struct fleet_pool_job_s *job;
  uint64_t token;

  if (w == NULL || pool_ev_token(ev, &token) != 0)
    return;
  job = pool_job_find(w, ev[1].str, ev[1].len);
  switch (ev[0].str[0]) {
    case 's':
      pool_ev_start(p, w, ev, token);
      break;
    case 'x': {
      /* An older local job than the stop names is stale: it goes too. A
       * stop of the job's own assignment may be handed back instead of
       * confirmed (fleet_pool_job_requeue()). */
      int confirm = job == NULL || job->token <= token, requeued = 0;

      if (job != NULL && job->token < token)
        fleet__pool_stop_job(job, FLEET_POOL_STOP_LOST);
      else if (job != NULL && job->token == token)
        requeued = pool_stop(job,
                             ev[4].len == 4 && memcmp(ev[4].str, "move", 4) == 0
                                 ? FLEET_POOL_STOP_MOVED
                                 : FLEET_POOL_STOP_REQUESTED,
                             1);
      if (confirm)
        pool_confirm(p, requeued ? &pool_requeue_call : &pool_stopped_call, w,
                     ev[1].str, ev[1].len, token,
                     requeued ? 'x' : FLEET_ECANCELED);
      break;
    }
    case 'n':
      if (job != NULL && job->token == token && w->handler.notify_cb != NULL) {
        fleet_bytes_t payload = {ev[4].str, ev[4].len};
        w->handler.notify_cb(w->pub, job, payload);
      }
      break;
    default:
      break;
  }
}

/* ------------------------------------------------------------------------ */
/* Accessors                                                                */

fleet_bytes_t fleet_pool_job_key(const fleet_pool_job_t *job) {
  return job != NULL ? (fleet_bytes_t){job->key, job->key_len}
                     : (fleet_bytes_t){NULL, 0};
}

const char *fleet_pool_job_key_str(const fleet_pool_job_t *job) {
  return job != NULL ? job->key : NULL;
}

fleet_bytes_t fleet_pool_job_payload(const fleet_pool_job_t *job) {
  return job != NULL ? (fleet_bytes_t){job->payload, job->payload_len}
                     : (fleet_bytes_t){NULL, 0};
}

uint64_t fleet_pool_job_token(const fleet_pool_job_t *job) {
  return job != NULL ? job->token : 0;
}
