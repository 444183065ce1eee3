/* queue.c -- the queue handle: init and close, pooled requests, the
 * argument builder, the reply dispatcher and the helpers the queue's calls
 * share. The calls themselves are in queue_produce.c and queue_claim.c. */
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"

static const char *const queue_state_names[] = {
#define XX(name, str) str,
    FLEET_JOB_STATE_MAP(XX)
#undef XX
};

const char *fleet_job_state_name(fleet_job_state_t state) {
  if ((size_t)state >= FLEET__ARRAY_SIZE(queue_state_names))
    return "unknown";
  return queue_state_names[state];
}

void fleet_job_spec_init(fleet_job_spec_t *spec, const char *type,
                         const void *payload, size_t len) {
  memset(spec, 0, sizeof(*spec));
  spec->type = type;
  spec->payload.base = payload;
  spec->payload.len = len;
  spec->max_attempts = 3;
  spec->backoff = FLEET_BACKOFF_EXPONENTIAL;
  spec->backoff_ms = 1000;
  spec->backoff_max_ms = 3600000;
  spec->backoff_jitter_pct = 20;
}

void fleet_queue_options_init(fleet_queue_options_t *o) {
  memset(o, 0, sizeof(*o));
  o->keep_completed = 1000;
  o->keep_completed_s = 3600;
  o->keep_dead = 10000;
  o->keep_dead_s = 7 * 24 * 3600;
}

/* ------------------------------------------------------------------------ */
/* Validation and scratch helpers                                           */

int fleet__queue_str_ok(const char *s, size_t max, size_t *len) {
  size_t n;

  if (s == NULL)
    return 0;
  n = strnlen(s, max + 1);
  if (n == 0 || n > max)
    return 0;
  *len = n;
  return 1;
}

int fleet__queue_claims_ok(const fleet_claim_t *claims, size_t n) {
  size_t i, len;

  if (claims == NULL || n == 0 || n > FLEET_QUEUE_BATCH_MAX)
    return FLEET_EINVAL;
  for (i = 0; i < n; i++)
    if (!fleet__queue_str_ok(claims[i].id, FLEET_JOB_ID_MAX, &len) ||
        claims[i].token == 0)
      return FLEET_EINVAL;
  return 0;
}

int fleet__queue_grow(void **arr, size_t *cap, size_t n, size_t size) {
  size_t want = *cap > 0 ? *cap : 16;
  void *p;

  if (n <= *cap)
    return 0;
  while (want < n)
    want *= 2;
  p = realloc(*arr, want * size);
  if (p == NULL)
    return FLEET_ENOMEM;
  *arr = p;
  *cap = want;
  return 0;
}

int fleet__queue_strs_reserve(struct fleet__queue_s *q, size_t len) {
  size_t cap = q->strs_cap;
  int err = fleet__queue_grow((void **)&q->strs, &cap, q->strs_len + len, 1);
  q->strs_cap = cap;
  return err;
}

const char *fleet__queue_strs_add(struct fleet__queue_s *q, fleet_bytes_t b) {
  char *p = q->strs + q->strs_len;

  if (b.len > 0)
    memcpy(p, b.base, b.len);
  p[b.len] = '\0';
  q->strs_len += b.len + 1;
  return p;
}

int fleet__queue_batch_code(const fleet__reply_t *r) {
  if (r->type != FLEET__REPLY_INT)
    return FLEET_EPROTO;
  switch (r->integer) {
    case 1:
      return 0;
    case 2:
      return FLEET_EALREADY;
    case 0:
      return FLEET_ESTALE;
    case -1:
      return FLEET_ENOTFOUND;
    default:
      return FLEET_EPROTO;
  }
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                */

int fleet__qargs_begin(struct fleet__queue_s *q, size_t nargs, size_t nbytes) {
  if (fleet__queue_grow((void **)&q->argv, &q->argv_cap, nargs,
                        sizeof(*q->argv)) != 0 ||
      fleet__queue_grow((void **)&q->nums, &q->nums_cap, nbytes, 1) != 0)
    return FLEET_ENOMEM;
  q->argc = 0;
  q->nums_len = 0;
  return 0;
}

void fleet__qargs_bytes(struct fleet__queue_s *q, const void *p, size_t len) {
  q->argv[q->argc].base = p;
  q->argv[q->argc].len = len;
  q->argc++;
}

void fleet__qargs_str(struct fleet__queue_s *q, const char *s) {
  fleet__qargs_bytes(q, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

void fleet__qargs_u64(struct fleet__queue_s *q, uint64_t v) {
  char tmp[24], *p = tmp + sizeof(tmp), *out = q->nums + q->nums_len;
  size_t len;

  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0);
  len = (size_t)(tmp + sizeof(tmp) - p);
  memcpy(out, p, len);
  q->nums_len += len;
  fleet__qargs_bytes(q, out, len);
}

void fleet__qargs_i64(struct fleet__queue_s *q, int64_t v) {
  if (v >= 0) {
    fleet__qargs_u64(q, (uint64_t)v);
    return;
  }
  /* A negative number: format the magnitude after a '-' in one argument. */
  q->nums[q->nums_len++] = '-';
  fleet__qargs_u64(q, (uint64_t)0 - (uint64_t)v);
  q->argv[q->argc - 1].base = (const char *)q->argv[q->argc - 1].base - 1;
  q->argv[q->argc - 1].len++;
}

/* ------------------------------------------------------------------------ */
/* Requests                                                                 */

fleet__qreq_t *fleet__qreq_get(struct fleet__queue_s *q,
                               fleet__qreq_kind_t kind, void *user_data) {
  fleet__qreq_t *req = q->free_reqs;

  if (req != NULL)
    q->free_reqs = req->next;
  else if ((req = malloc(sizeof(*req))) == NULL)
    return NULL;
  memset(req, 0, sizeof(*req));
  req->q = q;
  req->kind = kind;
  req->user_data = user_data;
  return req;
}

void fleet__qreq_put(fleet__qreq_t *req) {
  struct fleet__queue_s *q = req->q;
  req->next = q->free_reqs;
  q->free_reqs = req;
}

static void queue_live_unlink(fleet__qreq_t *req) {
  struct fleet__queue_s *q = req->q;

  if (req->prev != NULL)
    req->prev->next = req->next;
  else
    q->live = req->next;
  if (req->next != NULL)
    req->next->prev = req->prev;
  req->next = req->prev = NULL;
}

static void queue_on_reply(void *arg, int status, const fleet__reply_t *reply);

int fleet__queue_send(struct fleet__queue_s *q, fleet__op_t op,
                      fleet__qreq_t *req) {
  fleet_bytes_t key = fleet__key_bytes(&q->tag);
  int err;

  err = fleet__backend_call(fleet__client_backend(q->client), op, &key, 1,
                            q->argv, q->argc, queue_on_reply, req);
  if (err != 0) {
    fleet__qreq_put(req);
    return err;
  }
  req->prev = NULL;
  req->next = q->live;
  if (q->live != NULL)
    q->live->prev = req;
  q->live = req;
  q->outstanding++;
  return 0;
}

/* Runs a callback of `kind` with an error status and nothing else. */
static void queue_answer_error(fleet_queue_t *pub, fleet__qreq_kind_t kind,
                               fleet__qreq_cb_t cb, void *ud, uint64_t purged,
                               int status) {
  switch (kind) {
    case FLEET__QREQ_ENQUEUE:
      cb.enqueue(pub, status, NULL, 0, ud);
      break;
    case FLEET__QREQ_CLAIM:
      cb.claim(pub, status, NULL, 0, NULL, ud);
      break;
    case FLEET__QREQ_REFRESH:
    case FLEET__QREQ_COMPLETE:
    case FLEET__QREQ_RELEASE:
      cb.batch(pub, status, NULL, 0, ud);
      break;
    case FLEET__QREQ_FAIL:
      cb.fail(pub, status, 0, 0, ud);
      break;
    case FLEET__QREQ_RECOVER:
      cb.recover(pub, status, NULL, ud);
      break;
    case FLEET__QREQ_GET:
      cb.get(pub, status, NULL, ud);
      break;
    case FLEET__QREQ_CANCEL:
      cb.status(pub, status, ud);
      break;
    case FLEET__QREQ_COUNTS:
      cb.counts(pub, status, NULL, ud);
      break;
    case FLEET__QREQ_LIST:
      cb.list(pub, status, NULL, 0, 0, ud);
      break;
    case FLEET__QREQ_PURGE:
      cb.purge(pub, status, purged, ud);
      break;
  }
}

void fleet__queue_deliver_error(fleet__qreq_t *req, int status) {
  fleet_queue_t *pub = req->q->pub;
  fleet__qreq_kind_t kind = req->kind;
  fleet__qreq_cb_t cb = req->cb;
  void *ud = req->user_data;
  uint64_t purged = req->purged;

  fleet__qreq_put(req);
  queue_answer_error(pub, kind, cb, ud, purged, status);
}

/* ------------------------------------------------------------------------ */
/* Replies and closing                                                      */

static void queue_on_closed(uv_handle_t *handle);

/* Finishes closing once the cancellation pass ran and no reply is due. */
static void queue_maybe_closed(struct fleet__queue_s *q) {
  if (q->closing && q->cancel_done && q->outstanding == 0 &&
      !uv_is_closing((uv_handle_t *)&q->timer))
    uv_close((uv_handle_t *)&q->timer, queue_on_closed);
}

static void queue_on_reply(void *arg, int status, const fleet__reply_t *reply) {
  fleet__qreq_t *req = arg;
  struct fleet__queue_s *q = req->q;

  q->outstanding--;
  if (req->canceled) {
    fleet__qreq_put(req);
  } else {
    queue_live_unlink(req);
    if (status != 0) {
      fleet__queue_deliver_error(req, status);
    } else {
      switch (req->kind) {
        case FLEET__QREQ_CLAIM:
        case FLEET__QREQ_REFRESH:
        case FLEET__QREQ_COMPLETE:
        case FLEET__QREQ_RELEASE:
        case FLEET__QREQ_FAIL:
        case FLEET__QREQ_RECOVER:
          fleet__queue_claims_reply(req, reply);
          break;
        default:
          fleet__queue_produce_reply(req, reply);
          break;
      }
    }
  }
  queue_maybe_closed(q);
}

/* The close's deferred step: every request the user still waits for is
 * answered with FLEET_ECANCELED; their replies are dropped when they
 * come. */
static void queue_on_timer(uv_timer_t *timer) {
  struct fleet__queue_s *q =
      FLEET__CONTAINER_OF(timer, struct fleet__queue_s, timer);
  fleet__qreq_t *req;

  while ((req = q->live) != NULL) {
    queue_live_unlink(req);
    req->canceled = 1;
    /* The request stays with the backend until its reply comes. */
    queue_answer_error(q->pub, req->kind, req->cb, req->user_data, req->purged,
                       FLEET_ECANCELED);
  }
  q->cancel_done = 1;
  queue_maybe_closed(q);
}

static void queue_free(struct fleet__queue_s *q) {
  fleet__qreq_t *req;

  while ((req = q->free_reqs) != NULL) {
    q->free_reqs = req->next;
    free(req);
  }
  fleet__key_free(&q->tag);
  free(q->name);
  free(q->argv);
  free(q->nums);
  free(q->results);
  free(q->jobs);
  free(q->enq);
  free(q->ids);
  free(q->strs);
  free(q);
}

static void queue_on_closed(uv_handle_t *handle) {
  struct fleet__queue_s *q =
      FLEET__CONTAINER_OF((uv_timer_t *)handle, struct fleet__queue_s, timer);
  fleet_queue_t *pub = q->pub;
  fleet_queue_close_cb cb = q->close_cb;

  pub->internal_ = NULL;
  queue_free(q);
  if (cb != NULL)
    cb(pub);
}

/* ------------------------------------------------------------------------ */
/* Init and close                                                           */

int fleet__queue_usable(fleet_queue_t *q) {
  if (q == NULL || q->internal_ == NULL)
    return FLEET_EINVAL;
  if (q->internal_->closing || !fleet__client_usable(q->internal_->client))
    return FLEET_ECLOSING;
  return 0;
}

int fleet_queue_init(fleet_client_t *client, fleet_queue_t *q, const char *name,
                     const fleet_queue_options_t *options) {
  struct fleet__queue_s *iq;
  size_t len;

  if (q == NULL)
    return FLEET_EINVAL;
  q->internal_ = NULL;
  if (client == NULL || client->internal_ == NULL ||
      !fleet__queue_str_ok(name, FLEET__NAME_MAX, &len))
    return FLEET_EINVAL;
  if (!fleet__client_usable(client))
    return FLEET_ECLOSING;
  iq = calloc(1, sizeof(*iq));
  if (iq == NULL)
    return FLEET_ENOMEM;
  iq->name = fleet__memdup(name, len);
  if (iq->name == NULL ||
      fleet__key_build(&iq->tag, client->internal_->prefix,
                       client->internal_->prefix_len, name, len, NULL) != 0) {
    queue_free(iq);
    return FLEET_ENOMEM;
  }
  iq->pub = q;
  iq->client = client;
  if (options != NULL)
    iq->opts = *options;
  else
    fleet_queue_options_init(&iq->opts);
  fleet__rng_seed(&iq->rng, uv_hrtime() ^ (uint64_t)(uintptr_t)iq);
  uv_timer_init(fleet_client_loop(client), &iq->timer);
  q->internal_ = iq;
  return 0;
}

int fleet_queue_close(fleet_queue_t *q, fleet_queue_close_cb close_cb) {
  struct fleet__queue_s *iq;

  if (q == NULL || q->internal_ == NULL)
    return FLEET_EINVAL;
  iq = q->internal_;
  if (iq->closing)
    return FLEET_ECLOSING;
  iq->closing = 1;
  iq->close_cb = close_cb;
  uv_timer_start(&iq->timer, queue_on_timer, 0, 0);
  return 0;
}

const char *fleet_queue_name(const fleet_queue_t *q) {
  return q != NULL && q->internal_ != NULL ? q->internal_->name : NULL;
}
