/* queue_produce.c -- the producer side of the queue: enqueue (one or many
 * jobs per round trip), get, cancel, counts and list, each with its
 * descriptor, reply reader and fail hook, and the checks of their input
 * and of their replies. */
#include <string.h>

#include "queue_int.h"

/* Times beyond this (about 35 000 years of ms) are refused, so that every
 * sum the scripts make stays exact in a Lua number. */
#define QUEUE_TIME_MAX (1ULL << 50)

/* ------------------------------------------------------------------------ */
/* Enqueue                                                                  */

int fleet__queue_spec_ok(const fleet_job_spec_t *s) {
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
  if (s->unique_until_done != 0 &&
      (s->unique_until_done != 1 || s->unique_key == NULL))
    return FLEET_EINVAL;
  if (s->unique_key != NULL) {
    if ((err = fleet__str_check(s->unique_key, FLEET_JOB_UNIQUE_MAX, NULL)) !=
        0)
      return err;
    if ((s->unique_ttl_ms == 0 && !s->unique_until_done) ||
        s->unique_ttl_ms > QUEUE_TIME_MAX)
      return FLEET_EINVAL;
  }
  if (s->group != NULL &&
      (err = fleet__str_check(s->group, FLEET_JOB_GROUP_MAX, NULL)) != 0)
    return err;
  if (s->result_ttl_ms > FLEET_JOB_RESULT_TTL_MAX_MS)
    return FLEET_EINVAL;
  return fleet__queue_headers_ok(s->headers, s->nheaders, &len);
}

/* The arguments of one job in QUEUE_ENQUEUE (queue_enqueue.lua). */
#define QUEUE_ENQ_ARGS 12

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

/* The most bytes of a job's ext argument (queue_enq_spec), but the
 * headers' wire form. */
#define QUEUE_EXT_MAX 64

/* The bytes one job's arguments take at most: its strings, six numbers,
 * the backoff "<kind>:<base>:<max>:<jitter>" (at most 39 bytes) and ext,
 * whose item "h" (the headers' wire form) comes on top of QUEUE_EXT_MAX. */
static size_t queue_spec_bytes(const fleet_job_spec_t *s) {
  size_t i, hdr = 0;

  for (i = 0; i < s->nheaders; i++)
    hdr += strlen(s->headers[i].key) + strlen(s->headers[i].value) + 2;
  return (s->id != NULL ? strlen(s->id) : 0) + strlen(s->type) +
         s->payload.len + (s->unique_key != NULL ? strlen(s->unique_key) : 0) +
         (s->group != NULL ? strlen(s->group) : 0) + 6 * 24 + 40 +
         QUEUE_EXT_MAX + hdr;
}

/* Appends item "<key>=<value>" `item` to a job's ext argument `ext` of
 * `*len` bytes (room for QUEUE_EXT_MAX), after a "\n" when it has one. */
static void queue_ext_add(char *ext, size_t *len, const char *item) {
  size_t n = strlen(item);

  if (*len > 0)
    ext[(*len)++] = '\n';
  memcpy(ext + *len, item, n);
  *len += n;
}

/* Copies the arguments of one job. */
static void queue_enq_spec(struct fleet__queue_s *q,
                           const fleet_job_spec_t *s) {
  char backoff[40], ext[QUEUE_EXT_MAX];
  size_t len, ext_len = 0;

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
  queue_enq_put(q, s->group != NULL ? s->group : "",
                s->group != NULL ? strlen(s->group) : 0);
  /* ext: the job's other options, "<key>=<value>" items separated by
   * "\n" (lib/queue_add.lua): "u=1", the unique key held until the job
   * ends (lib/queue_unique.lua); "r=<ms>", the result retention
   * (lib/queue_life.lua); "t=<ms>", the timeout (lib/queue_stop.lua);
   * "h=<headers>", the headers (lib/queue_hdr.lua), last. */
  if (s->unique_until_done)
    queue_ext_add(ext, &ext_len, "u=1");
  if (s->result_ttl_ms > 0) {
    char item[24];

    memcpy(item, "r=", 2);
    item[2 + fleet__queue_dec(item + 2, s->result_ttl_ms)] = '\0';
    queue_ext_add(ext, &ext_len, item);
  }
  if (s->timeout_ms != 0) {
    char item[24];

    memcpy(item, "t=", 2);
    item[2 + fleet__queue_dec(item + 2, s->timeout_ms)] = '\0';
    queue_ext_add(ext, &ext_len, item);
  }
  if (s->nheaders > 0) {
    /* "h=<headers>", the last item: their wire form (lib/queue_hdr.lua),
     * written in place after the other items. */
    char *at = q->enq_buf + q->enq_buf_len;

    queue_ext_add(ext, &ext_len, "h=");
    memcpy(at, ext, ext_len);
    len = ext_len +
          fleet__queue_headers_wire(s->headers, s->nheaders, at + ext_len);
    q->enq_buf_len += len;
    q->enq_lens[q->enq_nargs++] = len;
  } else {
    queue_enq_put(q, ext, ext_len);
  }
  q->enq_jobs++;
}

/* The fail hook of a fleet_queue_enqueue_cb. */
static void queue_enqueue_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_enqueue_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                    NULL, 0, req->user_data);
}

/* Finishes `req` and every enqueue after it in its call with `status`. */
static void queue_enqueue_fail(fleet__qreq_t *req, int status) {
  fleet__qreq_t *next;

  for (; req != NULL; req = next) {
    next = req->enq_next;
    req->enq_next = NULL;
    fleet__call_finish(&req->base, status);
  }
}

/* {status, id} per job of every enqueue of the call, in order: each
 * callback gets its own jobs' results. */
static void queue_enqueue_reply(fleet__req_t *base, int status,
                                const fleet__reply_t *reply) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)base->handle;
  fleet__qreq_t *first = (fleet__qreq_t *)base, *req, *next;
  size_t total = 0, at = 0, i, n, bytes;
  fleet_bytes_t id;

  for (req = first; req != NULL; req = req->enq_next)
    total += req->n;
  if (status == 0 &&
      (reply->type != FLEET__REPLY_ARRAY || reply->nelem != 2 * total))
    status = FLEET_EPROTO;
  for (i = 0; status == 0 && i < total; i++) {
    const fleet__reply_t *st = &reply->elem[2 * i];
    if (st->type != FLEET__REPLY_INT ||
        (st->integer != 0 && st->integer != 1) ||
        fleet__reply_bytes(&reply->elem[2 * i + 1], &id) != 0)
      status = FLEET_EPROTO;
  }
  if (status != 0) {
    queue_enqueue_fail(first, status);
    return;
  }
  for (req = first; req != NULL; req = next, at += n) {
    fleet_queue_enqueue_cb cb = (fleet_queue_enqueue_cb)req->base.cb;
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
      queue_enqueue_fail(req, FLEET_ENOMEM);
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

static const fleet__call_t queue_enqueue_call = {
    "queue.enqueue", FLEET__OP_QUEUE_ENQUEUE, queue_enqueue_reply,
    queue_enqueue_cb_fail};

/* Sends the enqueues made during this loop phase, as one call: the
 * request of the first carries it. */
static void queue_enqueue_flush(struct fleet__queue_s *q) {
  fleet__backend_t *be = fleet__handle_backend(&q->base);
  fleet__qreq_t *first = q->enq_first;
  size_t i, off = 0;
  int err;

  fleet__phase_end_disarm(&q->enq_flush);
  if (first == NULL)
    return;
  err = fleet__args_begin(&q->args, 1 + QUEUE_ENQ_ARGS * q->enq_jobs, 1);
  if (err == 0) {
    fleet__args_u64(&q->args, q->enq_jobs);
    for (i = 0; i < q->enq_nargs; i++) {
      fleet__args_bytes(&q->args, q->enq_buf + off, q->enq_lens[i]);
      off += q->enq_lens[i];
    }
    err = fleet__queue_send_next(q, first);
  }
  q->enq_first = q->enq_last = NULL;
  q->enq_jobs = q->enq_nargs = 0;
  q->enq_buf_len = 0;
  if (err != 0) {
    queue_enqueue_fail(first, err);
    return;
  }
  if (be->vt->flush != NULL && !q->base.client->closing)
    be->vt->flush(be);
}

static void queue_on_enq_flush(fleet__phase_end_t *pe, int in_prepare) {
  (void)in_prepare;
  queue_enqueue_flush(
      FLEET__CONTAINER_OF(pe, struct fleet__queue_s, enq_flush));
}

/* The enqueues of a loop phase share one call: the jobs are checked and
 * their arguments copied now, and the call goes out at the end of the
 * phase (or at once when the jobs waiting would pass the limit of one
 * call). A failure to send reaches every callback of the call. */
int fleet__queue_enqueue(fleet_queue_t *pub, const fleet_job_spec_t *specs,
                         size_t n, fleet_queue_enqueue_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  fleet__qreq_t *req;
  size_t i, bytes = 0;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (specs == NULL || n == 0 || n > FLEET_QUEUE_BATCH_MAX)
    return FLEET_EINVAL;
  for (i = 0; i < n; i++) {
    if ((err = fleet__queue_spec_ok(&specs[i])) != 0)
      return err;
    bytes += queue_spec_bytes(&specs[i]);
  }
  if (q->enq_jobs + n > FLEET_QUEUE_BATCH_MAX)
    queue_enqueue_flush(q);
  if (fleet__grow((void **)&q->enq_buf, &q->enq_buf_cap, q->enq_buf_len + bytes,
                  1) != 0 ||
      fleet__grow((void **)&q->enq_lens, &q->enq_lens_cap,
                  (q->enq_jobs + n) * QUEUE_ENQ_ARGS,
                  sizeof(*q->enq_lens)) != 0)
    return FLEET_ENOMEM;
  req = fleet__queue_new(q, &queue_enqueue_call, (fleet__fn_t)cb, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->n = n;
  for (i = 0; i < n; i++)
    queue_enq_spec(q, &specs[i]);
  if (q->enq_flush.run == NULL) /* the queue's first enqueue */
    fleet__phase_end_init(&q->enq_flush, q->base.loop, queue_on_enq_flush);
  if (q->enq_first == NULL) {
    q->enq_first = req;
    fleet__phase_end_arm(&q->enq_flush);
  } else {
    q->enq_last->enq_next = req;
  }
  q->enq_last = req;
  return 0;
}

int fleet__queue_specs_encode(struct fleet__queue_s *q,
                              const fleet_job_spec_t *const *specs, size_t n) {
  size_t i, bytes = 0;

  queue_enqueue_flush(q);
  for (i = 0; i < n; i++)
    bytes += queue_spec_bytes(specs[i]);
  if (fleet__grow((void **)&q->enq_buf, &q->enq_buf_cap, bytes, 1) != 0 ||
      fleet__grow((void **)&q->enq_lens, &q->enq_lens_cap, n * QUEUE_ENQ_ARGS,
                  sizeof(*q->enq_lens)) != 0)
    return FLEET_ENOMEM;
  for (i = 0; i < n; i++)
    queue_enq_spec(q, specs[i]);
  return 0;
}

void fleet__queue_specs_reset(struct fleet__queue_s *q) {
  q->enq_jobs = q->enq_nargs = 0;
  q->enq_buf_len = 0;
}

/* ------------------------------------------------------------------------ */
/* Get, cancel                                                              */

int fleet__queue_id_call(fleet_queue_t *pub, const char *id,
                         const fleet__call_t *call, fleet__fn_t cb,
                         void *user_data) {
  struct fleet__queue_s *q;
  size_t len;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if ((err = fleet__str_check(id, FLEET_JOB_ID_MAX, &len)) != 0)
    return err;
  if (fleet__args_begin(&q->args, 1, 0) != 0)
    return FLEET_ENOMEM;
  fleet__args_bytes(&q->args, id, len);
  return fleet__queue_call(q, call, cb, user_data);
}

int fleet__queue_parse_state(fleet_bytes_t b, fleet_job_state_t *out) {
  size_t i;

  for (i = 0; i <= FLEET_JOB_WAITING_CHILDREN; i++) {
    const char *name = fleet_job_state_name((fleet_job_state_t)i);
    if (b.len == strlen(name) && memcmp(b.base, name, b.len) == 0) {
      *out = (fleet_job_state_t)i;
      return 0;
    }
  }
  return FLEET_EPROTO;
}

/* The fail hook of a fleet_queue_get_cb. */
static void queue_get_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_get_cb)req->cb)((fleet_queue_t *)req->handle->pub, status, NULL,
                                req->user_data);
}

/* {state, attempts, max_attempts, priority, type, payload, last_error,
 * created_ms, run_at_ms, finished_ms, token, group, result, progress_pct,
 * progress bytes, headers (their stored form, '' for none), attempt
 * history ('' for none)}. Elements past the 16th are read when they are
 * there (the history: a server whose scripts predate it has none) and
 * any further ones ignored. */
static void queue_get_reply(fleet__req_t *base, int status,
                            const fleet__reply_t *r) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)base->handle;
  fleet_job_info_t info;
  fleet_bytes_t state, type, err = {NULL, 0}, group = {NULL, 0};
  fleet_bytes_t hdr = {NULL, 0}, errs = {NULL, 0};
  uint64_t v[3];
  const fleet__reply_t *e;
  int rc = FLEET_EPROTO;

  if (fleet__call_failed(base, status))
    return;
  memset(&info, 0, sizeof(info));
  if (r->type == FLEET__REPLY_ARRAY && r->nelem >= 16) {
    e = r->elem;
    rc = fleet__reply_bytes(&e[0], &state);
    if (rc == 0)
      rc = fleet__queue_parse_state(state, &info.state);
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
                    fleet__reply_u64(&e[10], &v[2]) != 0 ||
                    fleet__reply_bytes(&e[11], &group) != 0))
      rc = FLEET_EPROTO;
    /* The result (nil: none), the progress (-1: none) and its bytes. */
    info.has_result = e[12].type != FLEET__REPLY_NIL;
    if (rc == 0 &&
        ((info.has_result && fleet__reply_bytes(&e[12], &info.result) != 0) ||
         e[13].type != FLEET__REPLY_INT || e[13].integer < -1 ||
         e[13].integer > 100 ||
         (e[14].type != FLEET__REPLY_NIL &&
          fleet__reply_bytes(&e[14], &info.progress_data) != 0)))
      rc = FLEET_EPROTO;
    if (rc == 0 && fleet__reply_bytes(&e[15], &hdr) != 0)
      rc = FLEET_EPROTO;
    /* A history fleet cannot read is none, never a failed get. */
    if (rc == 0 && r->nelem > 16 && fleet__reply_bytes(&e[16], &errs) == 0) {
      info.nerrors = fleet__queue_errs_count(errs.base, errs.len);
      if (info.nerrors > 0) {
        info.errors = errs.base;
        info.errors_len = errs.len;
      }
    }
    if (rc == 0)
      info.progress = (int)e[13].integer;
  }
  q->strs_len = 0;
  if (rc == 0 && fleet__queue_strs_reserve(q, type.len + err.len + group.len +
                                                  3 + 2 * hdr.len + 2) != 0)
    rc = FLEET_ENOMEM;
  if (fleet__call_failed(base, rc))
    return;
  info.attempts = (uint32_t)v[0];
  info.max_attempts = (uint32_t)v[1];
  info.priority = (int)r->elem[3].integer;
  info.type = fleet__queue_strs_add(q, type);
  if (err.base != NULL) {
    info.last_error = fleet__queue_strs_add(q, err);
    info.last_error_len = err.len;
  }
  info.token = v[2];
  if (group.len > 0)
    info.group = fleet__queue_strs_add(q, group);
  if (hdr.len > 0) {
    info.headers = q->strs + q->strs_len;
    info.headers_len =
        fleet__queue_headers_unpack(hdr.base, hdr.len, q->strs + q->strs_len);
    q->strs_len += info.headers_len;
    if (info.headers_len == 0)
      info.headers = NULL;
  }
  fleet__req_done(base);
  ((fleet_queue_get_cb)base->cb)((fleet_queue_t *)q->base.pub, 0, &info,
                                 base->user_data);
}

static const fleet__call_t queue_get_call = {
    "queue.get", FLEET__OP_QUEUE_GET, queue_get_reply, queue_get_cb_fail};

int fleet__queue_get(fleet_queue_t *q, const char *id, fleet_queue_get_cb cb,
                     void *user_data) {
  return fleet__queue_id_call(q, id, &queue_get_call, (fleet__fn_t)cb,
                              user_data);
}

/* A cancel's reply: 1 (deleted) or 2 (running: cancel requested), as a
 * fleet_cancel_result_t; 0 for anything else. */
static fleet_cancel_result_t queue_cancel_result(const fleet__reply_t *r) {
  if (r->type == FLEET__REPLY_INT && (r->integer == 1 || r->integer == 2))
    return (fleet_cancel_result_t)r->integer;
  return (fleet_cancel_result_t)0;
}

static void queue_cancel_reply(fleet__req_t *base, int status,
                               const fleet__reply_t *r) {
  if (fleet__call_failed(base, status) ||
      fleet__call_failed(base, queue_cancel_result(r) == 0 ? FLEET_EPROTO : 0))
    return;
  fleet__req_done(base);
  ((fleet_status_cb)base->cb)(base->handle->pub, 0, base->user_data);
}

/* The fail hook of a fleet_queue_cancel_cb. */
static void queue_cancel_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_cancel_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                   (fleet_cancel_result_t)0, req->user_data);
}

static void queue_cancel_job_reply(fleet__req_t *base, int status,
                                   const fleet__reply_t *r) {
  fleet_cancel_result_t result;

  if (fleet__call_failed(base, status))
    return;
  result = queue_cancel_result(r);
  if (fleet__call_failed(base, result == 0 ? FLEET_EPROTO : 0))
    return;
  fleet__req_done(base);
  ((fleet_queue_cancel_cb)base->cb)((fleet_queue_t *)base->handle->pub, 0,
                                    result, base->user_data);
}

static const fleet__call_t queue_cancel_call = {
    "queue.cancel", FLEET__OP_QUEUE_CANCEL, queue_cancel_reply,
    fleet__call_fail_status};

static const fleet__call_t queue_cancel_job_call = {
    "queue.cancel", FLEET__OP_QUEUE_CANCEL, queue_cancel_job_reply,
    queue_cancel_cb_fail};

/* Sends a cancel of job `id` with a grace of `grace_ms` (0: the default). */
static int queue_cancel_send(fleet_queue_t *pub, const char *id,
                             uint32_t grace_ms, const fleet__call_t *call,
                             fleet__fn_t cb, void *user_data) {
  struct fleet__queue_s *q;
  size_t len;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if ((err = fleet__str_check(id, FLEET_JOB_ID_MAX, &len)) != 0)
    return err;
  if (grace_ms > FLEET_QUEUE_CANCEL_GRACE_MAX_MS)
    return FLEET_EINVAL;
  if (fleet__args_begin(&q->args, 2, 1) != 0)
    return FLEET_ENOMEM;
  fleet__args_bytes(&q->args, id, len);
  fleet__args_u64(&q->args,
                  grace_ms != 0 ? grace_ms : FLEET_QUEUE_CANCEL_GRACE_MS);
  return fleet__queue_call(q, call, cb, user_data);
}

int fleet__queue_cancel(fleet_queue_t *q, const char *id, fleet_status_cb cb,
                        void *user_data) {
  return queue_cancel_send(q, id, 0, &queue_cancel_call, (fleet__fn_t)cb,
                           user_data);
}

int fleet__queue_cancel_job(fleet_queue_t *q, const char *id, uint32_t grace_ms,
                            fleet_queue_cancel_cb cb, void *user_data) {
  return queue_cancel_send(q, id, grace_ms, &queue_cancel_job_call,
                           (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Counts, list                                                             */

/* The fail hook of a fleet_queue_counts_cb. */
static void queue_counts_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_counts_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                   NULL, req->user_data);
}

/* {pending, delayed, running, completed, dead, completed_kept,
 * dead_kept, waiting_children}. */
static void queue_counts_reply(fleet__req_t *base, int status,
                               const fleet__reply_t *r) {
  fleet_queue_counts_t c;
  uint64_t *v[8];
  size_t i;

  if (fleet__call_failed(base, status))
    return;
  v[0] = &c.pending;
  v[1] = &c.delayed;
  v[2] = &c.running;
  v[3] = &c.completed;
  v[4] = &c.dead;
  v[5] = &c.completed_kept;
  v[6] = &c.dead_kept;
  v[7] = &c.waiting_children;
  if (r->type != FLEET__REPLY_ARRAY || r->nelem != 8)
    status = FLEET_EPROTO;
  for (i = 0; status == 0 && i < 8; i++)
    if (fleet__reply_u64(&r->elem[i], v[i]) != 0)
      status = FLEET_EPROTO;
  if (fleet__call_failed(base, status))
    return;
  fleet__req_done(base);
  ((fleet_queue_counts_cb)base->cb)((fleet_queue_t *)base->handle->pub, 0, &c,
                                    base->user_data);
}

static const fleet__call_t queue_counts_call = {
    "queue.counts", FLEET__OP_QUEUE_COUNTS, queue_counts_reply,
    queue_counts_cb_fail};

int fleet__queue_counts(fleet_queue_t *q, fleet_queue_counts_cb cb,
                        void *user_data) {
  return fleet__queue_call_args(q, &queue_counts_call, (fleet__fn_t)cb,
                                user_data, NULL, NULL, 0);
}

/* The fail hook of a fleet_queue_list_cb. */
static void queue_list_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_list_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                 NULL, 0, 0, req->user_data);
}

/* {total, then one id per job, at most the limit}. */
static void queue_list_reply(fleet__req_t *base, int status,
                             const fleet__reply_t *r) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)base->handle;
  uint64_t total;
  size_t n = 0;

  if (fleet__call_failed(base, status))
    return;
  if (!fleet__reply_is_array(r, 1) ||
      r->nelem - 1 > ((fleet__qreq_t *)base)->n ||
      fleet__reply_u64(&r->elem[0], &total) != 0 || total < r->nelem - 1)
    status = FLEET_EPROTO;
  else
    n = r->nelem - 1;
  if (status == 0)
    status = fleet__queue_reply_ids(q, r, 1, n);
  if (fleet__call_failed(base, status))
    return;
  fleet__req_done(base);
  ((fleet_queue_list_cb)base->cb)((fleet_queue_t *)q->base.pub, 0, q->ids, n,
                                  total, base->user_data);
}

static const fleet__call_t queue_list_call = {
    "queue.list", FLEET__OP_QUEUE_LIST, queue_list_reply, queue_list_cb_fail};

int fleet__queue_list(fleet_queue_t *pub, const char *type, size_t limit,
                      fleet_queue_list_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  fleet__qreq_t *req;
  size_t len;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (limit == 0 || limit > FLEET_QUEUE_BATCH_MAX)
    return FLEET_EINVAL;
  if ((err = fleet__str_check(type, FLEET_JOB_TYPE_MAX, &len)) != 0)
    return err;
  if (fleet__args_begin(&q->args, 2, 1) != 0 ||
      (req = fleet__queue_new(q, &queue_list_call, (fleet__fn_t)cb,
                              user_data)) == NULL)
    return FLEET_ENOMEM;
  fleet__args_bytes(&q->args, type, len);
  fleet__args_u64(&q->args, limit);
  req->n = limit;
  return fleet__queue_send(q, req);
}
