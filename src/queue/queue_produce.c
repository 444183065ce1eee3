/* queue_produce.c -- the producer side of the queue: enqueue (one or many
 * jobs per round trip), get, cancel, counts, list and purge, with the
 * checks of their input and of their replies. */
#include <string.h>

#include "queue_int.h"

/* Times beyond this (about 35 000 years of ms) are refused, so that every
 * sum the scripts make stays exact in a Lua number. */
#define QUEUE_TIME_MAX (1ULL << 50)

/* ------------------------------------------------------------------------ */
/* Cancel hooks: the user callback of each kind with an error alone         */

static fleet_queue_t *queue_pub(fleet__req_t *base) {
  return (fleet_queue_t *)base->handle->pub;
}

static void queue_enqueue_cancel(fleet__req_t *base, int status) {
  ((fleet__qreq_t *)base)
      ->cb.enqueue(queue_pub(base), status, NULL, 0, base->user_data);
}

static void queue_get_cancel(fleet__req_t *base, int status) {
  ((fleet__qreq_t *)base)
      ->cb.get(queue_pub(base), status, NULL, base->user_data);
}

static void queue_status_cancel(fleet__req_t *base, int status) {
  ((fleet__qreq_t *)base)
      ->cb.status(base->handle->pub, status, base->user_data);
}

static void queue_counts_cancel(fleet__req_t *base, int status) {
  ((fleet__qreq_t *)base)
      ->cb.counts(queue_pub(base), status, NULL, base->user_data);
}

static void queue_list_cancel(fleet__req_t *base, int status) {
  ((fleet__qreq_t *)base)
      ->cb.list(queue_pub(base), status, NULL, 0, 0, base->user_data);
}

/* A purge tells how many records it removed before the error. */
static void queue_purge_cancel(fleet__req_t *base, int status) {
  fleet__qreq_t *req = (fleet__qreq_t *)base;

  req->cb.purge(queue_pub(base), status, req->purged, base->user_data);
}

/* ------------------------------------------------------------------------ */
/* Enqueue                                                                  */

/* Checks one job spec. Returns 0, FLEET_EINVAL or FLEET_E2BIG. */
static int queue_spec_ok(const fleet_job_spec_t *s) {
  size_t len, i;
  int err;

  if ((err = fleet__str_check(s->type, FLEET_JOB_TYPE_MAX, NULL)) != 0)
    return err;
  if (s->payload.base == NULL && s->payload.len > 0)
    return FLEET_EINVAL;
  if (s->payload.len > FLEET_JOB_PAYLOAD_MAX)
    return FLEET_E2BIG;
  if (s->id != NULL) {
    if ((err = fleet__str_check(s->id, FLEET_JOB_ID_MAX, &len)) != 0)
      return err;
    /* Ids made of digits only are the ones fleet generates. */
    for (i = 0; i < len && s->id[i] >= '0' && s->id[i] <= '9'; i++)
      ;
    if (i == len)
      return FLEET_EINVAL;
  }
  if (s->priority < FLEET_JOB_PRIORITY_MIN ||
      s->priority > FLEET_JOB_PRIORITY_MAX || s->max_attempts == 0 ||
      s->delay_ms > QUEUE_TIME_MAX || s->run_at_ms > QUEUE_TIME_MAX ||
      (s->backoff != FLEET_BACKOFF_FIXED &&
       s->backoff != FLEET_BACKOFF_EXPONENTIAL) ||
      s->backoff_jitter_pct > 100)
    return FLEET_EINVAL;
  if (s->unique_key != NULL) {
    if ((err = fleet__str_check(s->unique_key, FLEET_JOB_UNIQUE_MAX, NULL)) !=
        0)
      return err;
    if (s->unique_ttl_ms == 0 || s->unique_ttl_ms > QUEUE_TIME_MAX)
      return FLEET_EINVAL;
  }
  return 0;
}

/* Copies one argument of an enqueue to the arguments waiting for the end
 * of the phase (room reserved). */
static void queue_enq_put(struct fleet__queue_s *q, const void *p, size_t len) {
  if (len > 0)
    memcpy(q->enq_buf + q->enq_buf_len, p, len);
  q->enq_buf_len += len;
  q->enq_lens[q->enq_nargs++] = len;
}

/* Formats and copies a number argument. */
static void queue_enq_num(struct fleet__queue_s *q, long long v) {
  char num[24];
  size_t len;

  if (v < 0) {
    num[0] = '-';
    len = 1 + fleet__queue_dec(num + 1, (uint64_t)0 - (uint64_t)v);
  } else {
    len = fleet__queue_dec(num, (uint64_t)v);
  }
  queue_enq_put(q, num, len);
}

/* The bytes one job's arguments take at most: its strings, six numbers
 * and the backoff "<kind>:<base>:<max>:<jitter>" (at most 39 bytes). */
static size_t queue_spec_bytes(const fleet_job_spec_t *s) {
  return (s->id != NULL ? strlen(s->id) : 0) + strlen(s->type) +
         s->payload.len + (s->unique_key != NULL ? strlen(s->unique_key) : 0) +
         6 * 24 + 40;
}

/* Copies the arguments of one job. */
static void queue_enq_spec(struct fleet__queue_s *q,
                           const fleet_job_spec_t *s) {
  char backoff[40];
  size_t len;

  queue_enq_put(q, s->id != NULL ? s->id : "",
                s->id != NULL ? strlen(s->id) : 0);
  queue_enq_put(q, s->type, strlen(s->type));
  queue_enq_put(q, s->payload.base, s->payload.len);
  queue_enq_num(q, s->priority);
  queue_enq_num(q, (long long)s->run_at_ms);
  queue_enq_num(q, (long long)s->delay_ms);
  queue_enq_num(q, (long long)s->max_attempts);
  if (s->backoff != FLEET_BACKOFF_FIXED && s->backoff_ms == 1000 &&
      s->backoff_max_ms == 3600000 && s->backoff_jitter_pct == 20) {
    /* The default, which the script stores as nothing. */
    queue_enq_put(q, "exp:1000:3600000:20", 19);
  } else {
    len = (size_t)snprintf(backoff, sizeof(backoff), "%s:%u:%u:%u",
                           s->backoff == FLEET_BACKOFF_FIXED ? "fixed" : "exp",
                           (unsigned)s->backoff_ms, (unsigned)s->backoff_max_ms,
                           (unsigned)s->backoff_jitter_pct);
    queue_enq_put(q, backoff, len);
  }
  queue_enq_put(q, s->unique_key != NULL ? s->unique_key : "",
                s->unique_key != NULL ? strlen(s->unique_key) : 0);
  queue_enq_num(q, (long long)(s->unique_key != NULL ? s->unique_ttl_ms : 0));
  q->enq_jobs++;
}

void fleet__queue_on_enq_flush(fleet__phase_end_t *pe, int in_prepare) {
  (void)in_prepare;
  fleet__queue_enqueue_flush(
      FLEET__CONTAINER_OF(pe, struct fleet__queue_s, enq_flush));
}

/* The enqueues of a loop phase share one call: the jobs are checked and
 * their arguments copied now, and the call goes out at the end of the
 * phase (or at once when the jobs waiting would pass the limit of one
 * call). A failure to send reaches every callback of the call. */
int fleet_queue_enqueue(fleet_queue_t *pub, const fleet_job_spec_t *specs,
                        size_t n, fleet_queue_enqueue_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  fleet__qreq_t *req;
  size_t i, bytes = 0;
  int err;

  if ((q = fleet__queue_usable(pub, &err)) == NULL)
    return err;
  if (specs == NULL || cb == NULL || n == 0 || n > FLEET_QUEUE_BATCH_MAX)
    return FLEET_EINVAL;
  for (i = 0; i < n; i++) {
    if ((err = queue_spec_ok(&specs[i])) != 0)
      return err;
    bytes += queue_spec_bytes(&specs[i]);
  }
  if (q->enq_jobs + n > FLEET_QUEUE_BATCH_MAX)
    fleet__queue_enqueue_flush(q);
  if (fleet__grow((void **)&q->enq_buf, &q->enq_buf_cap, q->enq_buf_len + bytes,
                  1) != 0 ||
      fleet__grow((void **)&q->enq_lens, &q->enq_lens_cap,
                  (q->enq_jobs + n) * 10, sizeof(*q->enq_lens)) != 0)
    return FLEET_ENOMEM;
  req =
      fleet__qreq_new(q, FLEET__QREQ_ENQUEUE, queue_enqueue_cancel, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->cb.enqueue = cb;
  req->n = n;
  for (i = 0; i < n; i++)
    queue_enq_spec(q, &specs[i]);
  if (q->enq_first == NULL) {
    q->enq_first = req;
    fleet__phase_end_arm(&q->enq_flush);
  } else {
    q->enq_last->enq_next = req;
  }
  q->enq_last = req;
  return 0;
}

void fleet__queue_enqueue_flush(struct fleet__queue_s *q) {
  fleet__backend_t *be = fleet__handle_backend(&q->base);
  fleet__qreq_t *first = q->enq_first;
  fleet_bytes_t key = fleet__key_bytes(&q->tag);
  size_t i, off = 0;
  int err;

  fleet__phase_end_disarm(&q->enq_flush);
  if (first == NULL)
    return;
  err = fleet__args_begin(&q->args, 1 + 10 * q->enq_jobs, 1);
  if (err == 0) {
    fleet__args_u64(&q->args, q->enq_jobs);
    for (i = 0; i < q->enq_nargs; i++) {
      fleet__args_bytes(&q->args, q->enq_buf + off, q->enq_lens[i]);
      off += q->enq_lens[i];
    }
    err = fleet__req_send(&first->base, FLEET__OP_QUEUE_ENQUEUE, &key, 1,
                          q->args.argv, q->args.argc);
  }
  q->enq_first = q->enq_last = NULL;
  q->enq_jobs = q->enq_nargs = 0;
  q->enq_buf_len = 0;
  if (err != 0) {
    fleet__queue_deliver_error(first, err);
    return;
  }
  if (be->vt->flush != NULL && !q->base.client->closing)
    be->vt->flush(be);
}

/* {status, id} per job of every enqueue of the call, in order: each
 * callback gets its own jobs' results. */
static void queue_enqueue_reply(fleet__qreq_t *first,
                                const fleet__reply_t *reply) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)first->base.handle;
  fleet__qreq_t *req, *next;
  size_t total = 0, at = 0, i, n, bytes;
  fleet_bytes_t id;

  for (req = first; req != NULL; req = req->enq_next)
    total += req->n;
  if (reply->type != FLEET__REPLY_ARRAY || reply->nelem != 2 * total) {
    fleet__queue_deliver_error(first, FLEET_EPROTO);
    return;
  }
  for (i = 0; i < total; i++) {
    const fleet__reply_t *st = &reply->elem[2 * i];
    if (st->type != FLEET__REPLY_INT ||
        (st->integer != 0 && st->integer != 1) ||
        fleet__reply_bytes(&reply->elem[2 * i + 1], &id) != 0) {
      fleet__queue_deliver_error(first, FLEET_EPROTO);
      return;
    }
  }
  for (req = first; req != NULL; req = next, at += n) {
    fleet_queue_enqueue_cb cb = req->cb.enqueue;
    void *ud = req->base.user_data;
    const fleet__reply_t *e = &reply->elem[2 * at];

    next = req->enq_next;
    req->enq_next = NULL;
    n = req->n;
    bytes = 0;
    for (i = 0; i < n; i++) {
      fleet__reply_bytes(&e[2 * i + 1], &id);
      bytes += id.len + 1;
    }
    q->strs_len = 0;
    if (fleet__grow((void **)&q->enq, &q->enq_cap, n, sizeof(*q->enq)) != 0 ||
        fleet__queue_strs_reserve(q, bytes) != 0) {
      req->enq_next = next;
      fleet__queue_deliver_error(req, FLEET_ENOMEM);
      return;
    }
    for (i = 0; i < n; i++) {
      fleet__reply_bytes(&e[2 * i + 1], &id);
      q->enq[i].status = e[2 * i].integer == 1 ? 0 : FLEET_EEXIST;
      if (q->enq[i].status == 0) /* metrics */
        fleet__metrics_add(q->base.metrics, FLEET_METRIC_JOBS_ENQUEUED, 1);
      q->enq[i].id = fleet__queue_strs_add(q, id);
      q->enq[i].id_len = id.len;
    }
    fleet__req_done(&req->base);
    cb((fleet_queue_t *)q->base.pub, 0, q->enq, n, ud);
  }
}

/* ------------------------------------------------------------------------ */
/* Get, cancel                                                              */

/* Sends an op whose only argument is a job id. */
static int queue_id_call(fleet_queue_t *pub, const char *id, fleet__op_t op,
                         fleet__qreq_kind_t kind, fleet__req_cancel_fn cancel,
                         fleet__qreq_t **out, void *user_data) {
  struct fleet__queue_s *q;
  fleet__qreq_t *req;
  size_t len;
  int err;

  if ((q = fleet__queue_usable(pub, &err)) == NULL)
    return err;
  if ((err = fleet__str_check(id, FLEET_JOB_ID_MAX, &len)) != 0)
    return err;
  if (fleet__args_begin(&q->args, 1, 0) != 0 ||
      (req = fleet__qreq_new(q, kind, cancel, user_data)) == NULL)
    return FLEET_ENOMEM;
  fleet__args_bytes(&q->args, id, len);
  *out = req;
  return fleet__queue_send(q, op, req);
}

int fleet_queue_get(fleet_queue_t *q, const char *id, fleet_queue_get_cb cb,
                    void *user_data) {
  fleet__qreq_t *req = NULL;
  int err;

  if (cb == NULL)
    return FLEET_EINVAL;
  err = queue_id_call(q, id, FLEET__OP_QUEUE_GET, FLEET__QREQ_GET,
                      queue_get_cancel, &req, user_data);
  if (err == 0)
    req->cb.get = cb;
  return err;
}

int fleet_queue_cancel(fleet_queue_t *q, const char *id, fleet_status_cb cb,
                       void *user_data) {
  fleet__qreq_t *req = NULL;
  int err;

  if (cb == NULL)
    return FLEET_EINVAL;
  err = queue_id_call(q, id, FLEET__OP_QUEUE_CANCEL, FLEET__QREQ_CANCEL,
                      queue_status_cancel, &req, user_data);
  if (err == 0)
    req->cb.status = cb;
  return err;
}

/* The state name the scripts write, as an enum. Returns 0 or
 * FLEET_EPROTO. */
static int queue_parse_state(fleet_bytes_t b, fleet_job_state_t *out) {
  size_t i;

  for (i = 0; i <= FLEET_JOB_DEAD; i++) {
    const char *name = fleet_job_state_name((fleet_job_state_t)i);
    if (b.len == strlen(name) && memcmp(b.base, name, b.len) == 0) {
      *out = (fleet_job_state_t)i;
      return 0;
    }
  }
  return FLEET_EPROTO;
}

/* {state, attempts, max_attempts, priority, type, payload, last_error,
 * created_ms, run_at_ms, finished_ms, token}. */
static void queue_get_reply(fleet__qreq_t *req, const fleet__reply_t *r) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)req->base.handle;
  fleet_queue_get_cb cb = req->cb.get;
  void *ud = req->base.user_data;
  fleet_job_info_t info;
  fleet_bytes_t state, type, err = {NULL, 0};
  uint64_t v[3];
  const fleet__reply_t *e;
  int rc = FLEET_EPROTO;

  memset(&info, 0, sizeof(info));
  if (r->type == FLEET__REPLY_ARRAY && r->nelem == 11) {
    e = r->elem;
    rc = fleet__reply_bytes(&e[0], &state);
    if (rc == 0)
      rc = queue_parse_state(state, &info.state);
    if (rc == 0 && (fleet__reply_u64(&e[1], &v[0]) != 0 ||
                    fleet__reply_u64(&e[2], &v[1]) != 0 || v[0] > UINT32_MAX ||
                    v[1] > UINT32_MAX || e[3].type != FLEET__REPLY_INT ||
                    e[3].integer < FLEET_JOB_PRIORITY_MIN ||
                    e[3].integer > FLEET_JOB_PRIORITY_MAX ||
                    fleet__reply_bytes(&e[4], &type) != 0 ||
                    fleet__reply_bytes(&e[5], &info.payload) != 0 ||
                    (e[6].type != FLEET__REPLY_NIL &&
                     fleet__reply_bytes(&e[6], &err) != 0) ||
                    fleet__reply_u64(&e[7], &info.created_ms) != 0 ||
                    fleet__reply_u64(&e[8], &info.run_at_ms) != 0 ||
                    fleet__reply_u64(&e[9], &info.finished_ms) != 0 ||
                    fleet__reply_u64(&e[10], &v[2]) != 0))
      rc = FLEET_EPROTO;
  }
  q->strs_len = 0;
  if (rc == 0 && fleet__queue_strs_reserve(q, type.len + err.len + 2) != 0)
    rc = FLEET_ENOMEM;
  if (rc != 0) {
    fleet__queue_deliver_error(req, rc);
    return;
  }
  info.attempts = (uint32_t)v[0];
  info.max_attempts = (uint32_t)v[1];
  info.priority = (int)r->elem[3].integer;
  info.type = fleet__queue_strs_add(q, type);
  if (err.base != NULL) {
    info.last_error = fleet__queue_strs_add(q, err);
    info.last_error_len = err.len;
  }
  info.token = v[2];
  fleet__req_done(&req->base);
  cb((fleet_queue_t *)q->base.pub, 0, &info, ud);
}

static void queue_cancel_reply(fleet__qreq_t *req, const fleet__reply_t *r) {
  fleet_status_cb cb = req->cb.status;
  fleet_queue_t *pub = (fleet_queue_t *)req->base.handle->pub;
  void *ud = req->base.user_data;

  if (r->type != FLEET__REPLY_INT || r->integer != 1) {
    fleet__queue_deliver_error(req, FLEET_EPROTO);
    return;
  }
  fleet__req_done(&req->base);
  cb((fleet_handle_t *)pub, 0, ud);
}

/* ------------------------------------------------------------------------ */
/* Counts, list, purge                                                      */

int fleet_queue_counts(fleet_queue_t *pub, fleet_queue_counts_cb cb,
                       void *user_data) {
  struct fleet__queue_s *q;
  fleet__qreq_t *req;
  int err;

  if ((q = fleet__queue_usable(pub, &err)) == NULL)
    return err;
  if (cb == NULL)
    return FLEET_EINVAL;
  if (fleet__args_begin(&q->args, 0, 0) != 0 ||
      (req = fleet__qreq_new(q, FLEET__QREQ_COUNTS, queue_counts_cancel,
                             user_data)) == NULL)
    return FLEET_ENOMEM;
  req->cb.counts = cb;
  return fleet__queue_send(q, FLEET__OP_QUEUE_COUNTS, req);
}

static void queue_counts_reply(fleet__qreq_t *req, const fleet__reply_t *r) {
  fleet_queue_counts_cb cb = req->cb.counts;
  fleet_queue_t *pub = (fleet_queue_t *)req->base.handle->pub;
  void *ud = req->base.user_data;
  fleet_queue_counts_t c;
  uint64_t *v[7];
  size_t i;

  v[0] = &c.pending;
  v[1] = &c.delayed;
  v[2] = &c.running;
  v[3] = &c.completed;
  v[4] = &c.dead;
  v[5] = &c.completed_kept;
  v[6] = &c.dead_kept;
  if (r->type != FLEET__REPLY_ARRAY || r->nelem != 7) {
    fleet__queue_deliver_error(req, FLEET_EPROTO);
    return;
  }
  for (i = 0; i < 7; i++) {
    if (fleet__reply_u64(&r->elem[i], v[i]) != 0) {
      fleet__queue_deliver_error(req, FLEET_EPROTO);
      return;
    }
  }
  fleet__req_done(&req->base);
  cb(pub, 0, &c, ud);
}

int fleet_queue_list(fleet_queue_t *pub, const char *type, size_t limit,
                     fleet_queue_list_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  fleet__qreq_t *req;
  size_t len;
  int err;

  if ((q = fleet__queue_usable(pub, &err)) == NULL)
    return err;
  if (cb == NULL || limit == 0 || limit > FLEET_QUEUE_BATCH_MAX)
    return FLEET_EINVAL;
  if ((err = fleet__str_check(type, FLEET_JOB_TYPE_MAX, &len)) != 0)
    return err;
  if (fleet__args_begin(&q->args, 2, 1) != 0 ||
      (req = fleet__qreq_new(q, FLEET__QREQ_LIST, queue_list_cancel,
                             user_data)) == NULL)
    return FLEET_ENOMEM;
  fleet__args_bytes(&q->args, type, len);
  fleet__args_u64(&q->args, limit);
  req->cb.list = cb;
  req->n = limit;
  return fleet__queue_send(q, FLEET__OP_QUEUE_LIST, req);
}

static void queue_list_reply(fleet__qreq_t *req, const fleet__reply_t *r) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)req->base.handle;
  fleet_queue_list_cb cb = req->cb.list;
  void *ud = req->base.user_data;
  uint64_t total;
  fleet_bytes_t id;
  size_t i, n, bytes = 0;

  if (!fleet__reply_is_array(r, 1) || r->nelem - 1 > req->n ||
      fleet__reply_u64(&r->elem[0], &total) != 0 || total < r->nelem - 1) {
    fleet__queue_deliver_error(req, FLEET_EPROTO);
    return;
  }
  n = r->nelem - 1;
  for (i = 0; i < n; i++) {
    if (fleet__reply_bytes(&r->elem[1 + i], &id) != 0) {
      fleet__queue_deliver_error(req, FLEET_EPROTO);
      return;
    }
    bytes += id.len + 1;
  }
  q->strs_len = 0;
  if (fleet__grow((void **)&q->ids, &q->ids_cap, n + 1, sizeof(*q->ids)) != 0 ||
      fleet__queue_strs_reserve(q, bytes) != 0) {
    fleet__queue_deliver_error(req, FLEET_ENOMEM);
    return;
  }
  for (i = 0; i < n; i++) {
    fleet__reply_bytes(&r->elem[1 + i], &id);
    q->ids[i] = fleet__queue_strs_add(q, id);
  }
  fleet__req_done(&req->base);
  cb((fleet_queue_t *)q->base.pub, 0, q->ids, n, total, ud);
}

/* Sends one purge round trip for `req`; on error `req` is given back. */
static int queue_purge_send(struct fleet__queue_s *q, fleet__qreq_t *req) {
  if (fleet__args_begin(&q->args, 2, 1) != 0) {
    fleet__req_free(&req->base);
    return FLEET_ENOMEM;
  }
  fleet__args_str(&q->args, req->purge_which);
  fleet__args_u64(&q->args, FLEET__QUEUE_PURGE_LIMIT);
  return fleet__queue_send(q, FLEET__OP_QUEUE_PURGE, req);
}

int fleet_queue_purge(fleet_queue_t *pub, fleet_job_state_t which,
                      fleet_queue_purge_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  fleet__qreq_t *req;
  int err;

  if ((q = fleet__queue_usable(pub, &err)) == NULL)
    return err;
  if (cb == NULL || (which != FLEET_JOB_COMPLETED && which != FLEET_JOB_DEAD))
    return FLEET_EINVAL;
  req = fleet__qreq_new(q, FLEET__QREQ_PURGE, queue_purge_cancel, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->cb.purge = cb;
  req->purge_which = fleet_job_state_name(which);
  return queue_purge_send(q, req);
}

/* {removed, left}: goes on while records are left and each round removes
 * some, so that it ends even if another process keeps finishing jobs. */
static void queue_purge_reply(fleet__qreq_t *req, const fleet__reply_t *r) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)req->base.handle;
  fleet_queue_purge_cb cb = req->cb.purge;
  void *ud = req->base.user_data;
  uint64_t removed, left;
  int err;

  if (r->type != FLEET__REPLY_ARRAY || r->nelem != 2 ||
      fleet__reply_u64(&r->elem[0], &removed) != 0 ||
      fleet__reply_u64(&r->elem[1], &left) != 0) {
    fleet__queue_deliver_error(req, FLEET_EPROTO);
    return;
  }
  req->purged += removed;
  if (left > 0 && removed == FLEET__QUEUE_PURGE_LIMIT && !q->base.closing) {
    removed = req->purged;
    /* On error the request went back to the pool. */
    err = queue_purge_send(q, req);
    if (err != 0)
      cb((fleet_queue_t *)q->base.pub, err, removed, ud);
    return;
  }
  removed = req->purged;
  fleet__req_done(&req->base);
  cb((fleet_queue_t *)q->base.pub, 0, removed, ud);
}

void fleet__queue_produce_reply(fleet__qreq_t *req,
                                const fleet__reply_t *reply) {
  switch (req->kind) {
    case FLEET__QREQ_ENQUEUE:
      queue_enqueue_reply(req, reply);
      break;
    case FLEET__QREQ_GET:
      queue_get_reply(req, reply);
      break;
    case FLEET__QREQ_CANCEL:
      queue_cancel_reply(req, reply);
      break;
    case FLEET__QREQ_COUNTS:
      queue_counts_reply(req, reply);
      break;
    case FLEET__QREQ_LIST:
      queue_list_reply(req, reply);
      break;
    case FLEET__QREQ_PURGE:
      queue_purge_reply(req, reply);
      break;
    default:
      fleet__queue_deliver_error(req, FLEET_EPROTO);
      break;
  }
}
