/* queue_admin.c -- the queue's administration calls, for tools: a page of
 * the jobs in one state, retrying dead jobs, pausing and resuming (ops
 * QUEUE_ADMIN_* in adapters/ops/queue.h). Their requests are the queue's
 * (fleet__qreq_t), with their own reply reader; the user callback is kept
 * in req->cb.status, cast back to its type by the kind in req->n. */
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"

/* Which call a request is (req->n). */
enum { ADMIN_JOBS = 1, ADMIN_RETRY, ADMIN_PAUSE };

/* Casts a callback to another callback type, through the generic function
 * pointer type (it is always cast back to its own type before a call). */
#define ADMIN_CB(type, f) ((type)(void (*)(void))(f))

/* Dead jobs a retry of all puts back per round trip. */
#define ADMIN_RETRY_LIMIT 1000

static fleet_queue_t *admin_pub(fleet__req_t *base) {
  return (fleet_queue_t *)base->handle->pub;
}

/* Runs the user callback of `req` (done already) with `status` and
 * nothing else. */
static void admin_cancel(fleet__req_t *base, int status) {
  fleet__qreq_t *req = (fleet__qreq_t *)base;
  fleet_queue_t *q = admin_pub(base);

  switch (req->n) {
    case ADMIN_JOBS:
      ADMIN_CB(fleet_queue_jobs_cb, req->cb.status)
      (q, status, NULL, 0, 0, 0, base->user_data);
      break;
    case ADMIN_RETRY:
      ADMIN_CB(fleet_queue_retry_cb, req->cb.status)
      (q, status, req->purged, base->user_data);
      break;
    default:
      ADMIN_CB(fleet_queue_paused_cb, req->cb.status)
      (q, status, 0, base->user_data);
      break;
  }
}

static void admin_fail(fleet__qreq_t *req, int status) {
  fleet__req_done(&req->base);
  admin_cancel(&req->base, status);
}

/* Sends `op` for `req`; on error the request is given back. */
static int admin_send(struct fleet__queue_s *q, fleet__qreq_t *req,
                      fleet__op_t op) {
  fleet_bytes_t key = fleet__key_bytes(&q->tag);
  int err =
      fleet__req_send(&req->base, op, &key, 1, q->args.argv, q->args.argc);

  if (err != 0)
    fleet__req_free(&req->base);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Jobs                                                                     */

#define ADMIN_JOB_FIELDS 8

/* {total, next cursor, then 8 per job}: copies the strings into one
 * buffer so that each is NUL-terminated, then runs the callback. */
static void admin_jobs_reply(fleet__qreq_t *req, const fleet__reply_t *r) {
  fleet_queue_jobs_cb cb = ADMIN_CB(fleet_queue_jobs_cb, req->cb.status);
  void *ud = req->base.user_data;
  fleet_job_summary_t *jobs = NULL;
  uint64_t total, next, v;
  size_t n, i, k, bytes = 0;
  char *buf = NULL, *p;
  const fleet__reply_t *e;
  int err = 0;

  if (r->type != FLEET__REPLY_ARRAY || r->nelem < 2 ||
      (r->nelem - 2) % ADMIN_JOB_FIELDS != 0 ||
      fleet__reply_u64(&r->elem[0], &total) != 0 ||
      fleet__reply_u64_str(&r->elem[1], &next) != 0) {
    admin_fail(req, FLEET_EPROTO);
    return;
  }
  n = (r->nelem - 2) / ADMIN_JOB_FIELDS;
  for (i = 0; i < n && err == 0; i++) {
    e = &r->elem[2 + i * ADMIN_JOB_FIELDS];
    for (k = 0; k < ADMIN_JOB_FIELDS; k++) {
      if (k == 0 || k == 1 || k == 6 || k == 7) {
        if (e[k].type != FLEET__REPLY_STR)
          err = FLEET_EPROTO;
        else
          bytes += e[k].len + 1;
      } else if (fleet__reply_u64(&e[k], &v) != 0) {
        err = FLEET_EPROTO;
      }
    }
  }
  if (err == 0 && n > 0) {
    jobs = calloc(n, sizeof(*jobs));
    buf = malloc(bytes);
    if (jobs == NULL || buf == NULL)
      err = FLEET_ENOMEM;
  }
  if (err != 0) {
    free(jobs);
    free(buf);
    admin_fail(req, err);
    return;
  }
  p = buf;
  for (i = 0; i < n; i++) {
    const char **strs[4];
    size_t idx[4] = {0, 1, 6, 7};

    e = &r->elem[2 + i * ADMIN_JOB_FIELDS];
    strs[0] = &jobs[i].id;
    strs[1] = &jobs[i].type;
    strs[2] = (const char **)&jobs[i].payload.base;
    strs[3] = &jobs[i].last_error;
    for (k = 0; k < 4; k++) {
      memcpy(p, e[idx[k]].str, e[idx[k]].len);
      p[e[idx[k]].len] = '\0';
      *strs[k] = p;
      p += e[idx[k]].len + 1;
    }
    jobs[i].payload.len = e[6].len;
    jobs[i].last_error_len = e[7].len;
    fleet__reply_u64(&e[2], &v);
    jobs[i].attempts = (uint32_t)v;
    fleet__reply_u64(&e[3], &v);
    jobs[i].max_attempts = (uint32_t)v;
    fleet__reply_u64(&e[4], &jobs[i].created_ms);
    fleet__reply_u64(&e[5], &jobs[i].time_ms);
  }
  fleet__req_done(&req->base);
  cb(admin_pub(&req->base), 0, jobs, n, total, next, ud);
  free(jobs);
  free(buf);
}

/* A request of kind `kind` for the user callback `cb`, its arguments
 * begun (`nargs`, `nnums` as fleet__args_begin()); NULL when out of
 * memory. */
static void admin_on_reply(fleet__req_t *base, int status,
                           const fleet__reply_t *reply);

static fleet__qreq_t *admin_new(struct fleet__queue_s *q, int kind,
                                fleet_status_cb cb, void *user_data,
                                size_t nargs, size_t nnums) {
  fleet__qreq_t *req = (fleet__qreq_t *)fleet__req_new(&q->base, admin_on_reply,
                                                       admin_cancel, user_data);

  if (req == NULL)
    return NULL;
  req->n = (size_t)kind;
  req->cb.status = cb;
  if (fleet__args_begin(&q->args, nargs, nnums) != 0) {
    fleet__req_free(&req->base);
    return NULL;
  }
  return req;
}

int fleet_queue_jobs(fleet_queue_t *pub, fleet_job_state_t state,
                     uint64_t cursor, size_t limit, size_t payload_max,
                     fleet_queue_jobs_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  fleet__qreq_t *req;
  int err;

  if ((q = fleet__queue_usable(pub, &err)) == NULL)
    return err;
  if (cb == NULL || limit == 0 || limit > FLEET_QUEUE_BATCH_MAX ||
      (int)state < 0 || state > FLEET_JOB_DEAD)
    return FLEET_EINVAL;
  if (payload_max > FLEET_JOB_PAYLOAD_MAX)
    payload_max = FLEET_JOB_PAYLOAD_MAX;
  req =
      admin_new(q, ADMIN_JOBS, ADMIN_CB(fleet_status_cb, cb), user_data, 4, 3);
  if (req == NULL)
    return FLEET_ENOMEM;
  fleet__args_str(&q->args, fleet_job_state_name(state));
  fleet__args_u64(&q->args, cursor);
  fleet__args_u64(&q->args, limit);
  fleet__args_u64(&q->args, payload_max);
  return admin_send(q, req, FLEET__OP_QUEUE_ADMIN_JOBS);
}

/* ------------------------------------------------------------------------ */
/* Retry                                                                    */

/* Sends the retry of `id` ("" for all kept dead jobs). */
static int admin_retry_send(struct fleet__queue_s *q, fleet__qreq_t *req,
                            const char *id) {
  if (fleet__args_begin(&q->args, 2, 1) != 0) {
    fleet__req_free(&req->base);
    return FLEET_ENOMEM;
  }
  fleet__args_str(&q->args, id);
  fleet__args_u64(&q->args, ADMIN_RETRY_LIMIT);
  return admin_send(q, req, FLEET__OP_QUEUE_ADMIN_RETRY);
}

/* {retried, dead left}: a retry of all goes on while dead jobs are left
 * and each round retries a full batch, so that it ends even if other
 * processes keep failing jobs. */
static void admin_retry_reply(fleet__qreq_t *req, const fleet__reply_t *r) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)req->base.handle;
  fleet_queue_retry_cb cb = ADMIN_CB(fleet_queue_retry_cb, req->cb.status);
  void *ud = req->base.user_data;
  uint64_t retried, left;
  int err;

  if (r->type != FLEET__REPLY_ARRAY || r->nelem != 2 ||
      fleet__reply_u64(&r->elem[0], &retried) != 0 ||
      fleet__reply_u64(&r->elem[1], &left) != 0) {
    admin_fail(req, FLEET_EPROTO);
    return;
  }
  req->purged += retried;
  if (req->max_jobs && left > 0 && retried == ADMIN_RETRY_LIMIT) {
    retried = req->purged;
    err = admin_retry_send(q, req, "");
    if (err != 0)
      cb(admin_pub(&req->base), err, retried, ud);
    return;
  }
  retried = req->purged;
  fleet__req_done(&req->base);
  cb(admin_pub(&req->base), 0, retried, ud);
}

int fleet_queue_retry(fleet_queue_t *pub, const char *id,
                      fleet_queue_retry_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  fleet__qreq_t *req;
  size_t len;
  int err;

  if ((q = fleet__queue_usable(pub, &err)) == NULL)
    return err;
  if (cb == NULL)
    return FLEET_EINVAL;
  if (id != NULL && (err = fleet__str_check(id, FLEET_JOB_ID_MAX, &len)) != 0)
    return err;
  req = (fleet__qreq_t *)fleet__req_new(&q->base, admin_on_reply, admin_cancel,
                                        user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->n = ADMIN_RETRY;
  req->cb.status = ADMIN_CB(fleet_status_cb, cb);
  req->max_jobs = id == NULL; /* a retry of all */
  return admin_retry_send(q, req, id != NULL ? id : "");
}

/* ------------------------------------------------------------------------ */
/* Pause                                                                    */

static void admin_pause_reply(fleet__qreq_t *req, const fleet__reply_t *r) {
  fleet_queue_paused_cb cb = ADMIN_CB(fleet_queue_paused_cb, req->cb.status);
  void *ud = req->base.user_data;
  uint64_t paused, changed;

  if (r->type != FLEET__REPLY_ARRAY || r->nelem != 2 ||
      fleet__reply_u64(&r->elem[0], &paused) != 0 ||
      fleet__reply_u64(&r->elem[1], &changed) != 0 || paused > 1) {
    admin_fail(req, FLEET_EPROTO);
    return;
  }
  fleet__req_done(&req->base);
  cb(admin_pub(&req->base), 0, (int)paused, ud);
}

static int admin_pause(fleet_queue_t *pub, const char *action,
                       fleet_queue_paused_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  fleet__qreq_t *req;
  int err;

  if ((q = fleet__queue_usable(pub, &err)) == NULL)
    return err;
  if (cb == NULL)
    return FLEET_EINVAL;
  req =
      admin_new(q, ADMIN_PAUSE, ADMIN_CB(fleet_status_cb, cb), user_data, 1, 0);
  if (req == NULL)
    return FLEET_ENOMEM;
  fleet__args_str(&q->args, action);
  return admin_send(q, req, FLEET__OP_QUEUE_ADMIN_PAUSE);
}

int fleet_queue_pause(fleet_queue_t *q, fleet_queue_paused_cb cb,
                      void *user_data) {
  return admin_pause(q, "pause", cb, user_data);
}

int fleet_queue_resume(fleet_queue_t *q, fleet_queue_paused_cb cb,
                       void *user_data) {
  return admin_pause(q, "resume", cb, user_data);
}

int fleet_queue_paused(fleet_queue_t *q, fleet_queue_paused_cb cb,
                       void *user_data) {
  return admin_pause(q, "status", cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Replies                                                                  */

/* As the queue's own reader: errors, and a reply that comes once the close
 * was asked for, go to the cancel hook. */
static void admin_on_reply(fleet__req_t *base, int status,
                           const fleet__reply_t *reply) {
  fleet__qreq_t *req = (fleet__qreq_t *)base;

  if (base->handle->closing)
    status = FLEET_ECANCELED;
  if (status != 0) {
    admin_fail(req, status);
    return;
  }
  switch (req->n) {
    case ADMIN_JOBS:
      admin_jobs_reply(req, reply);
      break;
    case ADMIN_RETRY:
      admin_retry_reply(req, reply);
      break;
    default:
      admin_pause_reply(req, reply);
      break;
  }
}
