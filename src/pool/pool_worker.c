/* pool_worker.c -- removing one worker from its pool (pulse's
 * RemoveWorker), in two steps of POOL_WORKER_REMOVE:
 *
 *   drain   the worker leaves the membership (the revision changes, every
 *           node rebalances): each of its jobs is moved the usual way,
 *           stopped here (FLEET_POOL_STOP_MOVED) and, once the stop is
 *           confirmed, started on its new owner. The worker takes no new
 *           job meanwhile: a start that reaches it is handed back.
 *   forget  once the worker runs no job here, or the node's worker
 *           shutdown TTL passed (then the jobs left are stopped here
 *           first): the jobs the pool still gives it lose their owner and
 *           are placed again; the worker is gone.
 *
 * The node's remove timer checks the workers being removed every
 * POOL_REMOVE_POLL_MS. A job never runs on two workers: a job is handed
 * on only after its stop here was confirmed, or, at the forget, after it
 * was stopped here. */
#include <stdlib.h>
#include <string.h>

#include "pool_int.h"

#define POOL_REMOVE_POLL_MS 20

static void pool_remove_check(fleet__pool_t *p);

static void pool_on_remove_timer(uv_timer_t *t) {
  pool_remove_check(FLEET__CONTAINER_OF(t, fleet__pool_t, remove_timer));
}

static void pool_remove_arm(fleet__pool_t *p) {
  if (p->timers_open && !uv_is_active((uv_handle_t *)&p->remove_timer))
    uv_timer_start(&p->remove_timer, pool_on_remove_timer, 0, 0);
}

static void pool_on_remove(fleet__req_t *r, int status,
                           const fleet__reply_t *reply);

/* Sends the step `mode` ("d" or "f") of the removal of `w`. */
static int pool_remove_send(fleet__pool_worker_t *w, const char *mode) {
  fleet__pool_t *p = w->pool;
  fleet_bytes_t key = fleet__key_bytes(&p->tag);
  int err = fleet__args_begin(&p->args, 4, 0);

  if (err != 0)
    return err;
  fleet__args_bytes(&p->args, p->node_id, p->node_id_len);
  fleet__args_str(&p->args, w->id);
  fleet__args_str(&p->args, mode);
  fleet__args_str(&p->args, p->nonce);
  return fleet__req_send(&w->remove_req->base, w->remove_req->base.call->op,
                         &key, 1, p->args.argv, p->args.argc);
}

/* The worker is gone: out of the node's list, its memory the user's. */
static void pool_remove_done(fleet__pool_worker_t *w, int status) {
  fleet__pool_t *p = w->pool;
  fleet__pool_req_t *req = w->remove_req;
  fleet_pool_worker_cb cb = (fleet_pool_worker_cb)req->base.cb;
  fleet_pool_worker_t *pub = w->pub;
  struct fleet_pool_job_s *job;

  fleet__list_remove(&w->node);
  p->nworkers--;
  while ((job = fleet__pool_first_job(w)) != NULL)
    fleet__pool_job_free(job);
  pub->internal_ = NULL;
  free(w->id);
  free(w);
  fleet__req_done(&req->base);
  cb(pub, status);
}

/* The forget step: the jobs still here stop (user callbacks), then the
 * pool hears it. */
static void pool_remove_forget(fleet__pool_worker_t *w) {
  fleet__pool_t *p = w->pool;
  struct fleet_pool_job_s *job;
  int err;

  while ((job = fleet__pool_first_job(w)) != NULL) {
    fleet__pool_stop_job(job, FLEET_POOL_STOP_MOVED);
    if (p->base.closing)
      return;
  }
  w->removing = FLEET__POOL_WORKER_FORGET;
  if ((err = pool_remove_send(w, "f")) != 0) {
    w->removing = FLEET__POOL_WORKER_RETRY;
    fleet__handle_error(&p->base, err);
  }
}

/* Moves the removals of workers on: called by the remove timer. May run
 * user callbacks. */
static void pool_remove_check(fleet__pool_t *p) {
  uint64_t now = uv_now(p->base.loop);
  fleet__pool_worker_t *w;
  int pending = 0;

  if (p->base.closing)
    return;
  FLEET__LIST_FOREACH_DATA (w, &p->workers, fleet__pool_worker_t, node) {
    if (p->base.closing)
      break;
    if (w->removing == FLEET__POOL_WORKER_RETRY ||
        (w->removing == FLEET__POOL_WORKER_WAITING &&
         (fleet__list_empty(&w->jobs) || now >= w->remove_deadline)))
      pool_remove_forget(w);
    pending += w->removing != FLEET__POOL_WORKER_LIVE;
  }
  if (pending > 0 && !p->base.closing && p->timers_open)
    uv_timer_start(&p->remove_timer, pool_on_remove_timer, POOL_REMOVE_POLL_MS,
                   0);
}

static void pool_on_remove(fleet__req_t *r, int status,
                           const fleet__reply_t *reply) {
  fleet__pool_req_t *req = (fleet__pool_req_t *)r;
  fleet__pool_worker_t *w = req->worker;
  fleet__pool_t *p = w->pool;
  int64_t n;

  if (status == 0 && fleet__reply_i64(reply, &n) != 0)
    status = FLEET_EPROTO;
  if (w->removing == FLEET__POOL_WORKER_DRAINING) {
    /* A failed drain only loses the graceful moves: the forget at the
     * deadline hands the jobs over. */
    if (status != 0)
      fleet__handle_error(&p->base, status);
    w->removing = FLEET__POOL_WORKER_WAITING;
    pool_remove_arm(p);
    return;
  }
  if (status != 0) {
    w->removing = FLEET__POOL_WORKER_RETRY;
    fleet__handle_error(&p->base, status);
    pool_remove_arm(p);
    return;
  }
  pool_remove_done(w, 0);
}

/* The fail hook of a call whose callback is a fleet_pool_worker_cb: the
 * removal of the worker in `user_data` ends with `status`. */
static void pool_fail_worker(fleet__req_t *r, int status) {
  fleet_pool_worker_t *worker = r->user_data;

  worker->internal_->remove_req = NULL;
  ((fleet_pool_worker_cb)r->cb)(worker, status);
}

static const fleet__call_t pool_remove_call = {
    "pool.worker_remove", FLEET__OP_POOL_WORKER_REMOVE, pool_on_remove,
    pool_fail_worker};

int fleet_pool_worker_remove(fleet_pool_worker_t *worker,
                             fleet_pool_worker_cb cb) {
  fleet__pool_worker_t *w;
  fleet__pool_req_t *req;
  fleet__pool_t *p;
  int err;

  if (worker == NULL || worker->internal_ == NULL || cb == NULL)
    return FLEET_EINVAL;
  w = worker->internal_;
  p = w->pool;
  if ((err = fleet__pool_usable(p)) != 0)
    return err;
  if (w->removing)
    return FLEET_EALREADY;
  req = (fleet__pool_req_t *)fleet__call_new(&p->base, &pool_remove_call,
                                             (fleet__fn_t)cb, worker);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->worker = w;
  w->remove_req = req;
  w->removing = FLEET__POOL_WORKER_DRAINING;
  w->remove_deadline = uv_now(p->base.loop) + p->opts.worker_shutdown_ttl_ms;
  if ((err = pool_remove_send(w, "d")) != 0) {
    w->removing = FLEET__POOL_WORKER_LIVE;
    w->remove_req = NULL;
    fleet__req_free(&req->base);
    return err;
  }
  return 0;
}
