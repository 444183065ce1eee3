/* queue.c -- the queue handle on the handle base: init and close, and the
 * helpers the queue's calls share (sending with the tag, the copies of
 * reply strings). Each call, with its descriptor, its reply reader and
 * its fail hook, is in queue_produce.c, queue_claim.c or queue_admin.c;
 * this file calls none of them. */
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"

static const char *const queue_state_names[] = {
#define XX(name, str) str,
    FLEET_JOB_STATE_MAP(XX)
#undef XX
};

const char *fleet_job_state_name(fleet_job_state_t state) {
  return FLEET__NAME_AT(queue_state_names, state);
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
  /* No completion history by default: a completion only drops the claim
   * and the record and counts it (see docs/queue.md). */
  o->keep_completed = FLEET_QUEUE_KEEP_NONE;
  o->keep_completed_s = 3600;
  o->keep_dead = 10000;
  o->keep_dead_s = 7 * 24 * 3600;
  o->keep_result_s = 3600;
}

/* One retention field as the scripts take it: 0 takes the default, and
 * `none` (FLEET_QUEUE_KEEP_NONE or FLEET_QUEUE_NO_AGE_LIMIT, given or
 * default) is the scripts' 0. */
static uint32_t queue_option(uint32_t given, uint32_t dflt) {
  uint32_t v = given != 0 ? given : dflt;

  return v == UINT32_MAX ? 0 : v;
}

/* The options as the scripts take them, from `given` (NULL: defaults). */
static void queue_options_resolve(fleet_queue_options_t *o,
                                  const fleet_queue_options_t *given) {
  fleet_queue_options_t d, none;

  fleet_queue_options_init(&d);
  if (given == NULL) {
    memset(&none, 0, sizeof(none));
    given = &none;
  }
  o->keep_completed = queue_option(given->keep_completed, d.keep_completed);
  o->keep_completed_s =
      queue_option(given->keep_completed_s, d.keep_completed_s);
  o->keep_dead = queue_option(given->keep_dead, d.keep_dead);
  o->keep_dead_s = queue_option(given->keep_dead_s, d.keep_dead_s);
  o->error_cb = given->error_cb;
  o->keep_result_s =
      given->keep_result_s != 0 ? given->keep_result_s : d.keep_result_s;
}

/* ------------------------------------------------------------------------ */
/* Calls and replies                                                        */

int fleet__queue_send_next(struct fleet__queue_s *q, fleet__qreq_t *req) {
  fleet_bytes_t key = fleet__key_bytes(&q->tag);

  return fleet__req_send(&req->base, req->base.call->op, &key, 1, q->args.argv,
                         q->args.argc);
}

int fleet__queue_send(struct fleet__queue_s *q, fleet__qreq_t *req) {
  fleet_bytes_t key = fleet__key_bytes(&q->tag);

  return fleet__call_send(&req->base, &key, 1, q->args.argv, q->args.argc);
}

int fleet__queue_call(struct fleet__queue_s *q, const fleet__call_t *call,
                      fleet__fn_t cb, void *user_data) {
  fleet__qreq_t *req = fleet__queue_new(q, call, cb, user_data);

  return req != NULL ? fleet__queue_send(q, req) : FLEET_ENOMEM;
}

int fleet__queue_call_args(fleet_queue_t *pub, const fleet__call_t *call,
                           fleet__fn_t cb, void *user_data, const char *str,
                           const uint64_t *nums, size_t n) {
  struct fleet__queue_s *q;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (fleet__args_begin(&q->args, 1 + n, n) != 0)
    return FLEET_ENOMEM;
  if (str != NULL)
    fleet__args_str(&q->args, str);
  for (size_t i = 0; i < n; i++)
    fleet__args_u64(&q->args, nums[i]);
  return fleet__queue_call(q, call, cb, user_data);
}

void fleet__queue_status_reply(fleet__req_t *base, int status,
                               const fleet__reply_t *r) {
  if (fleet__call_failed(base, status) ||
      fleet__call_failed(base, r->type != FLEET__REPLY_INT || r->integer != 1
                                   ? FLEET_EPROTO
                                   : 0))
    return;
  fleet__req_done(base);
  ((fleet_status_cb)base->cb)(base->handle->pub, 0, base->user_data);
}

int fleet__queue_read_pair(const fleet__reply_t *r, uint64_t *a, uint64_t *b) {
  if (r->type != FLEET__REPLY_ARRAY || r->nelem != 2 ||
      fleet__reply_u64(&r->elem[0], a) != 0 ||
      fleet__reply_u64(&r->elem[1], b) != 0)
    return FLEET_EPROTO;
  return 0;
}

int fleet__queue_strs_reserve(struct fleet__queue_s *q, size_t len) {
  return fleet__grow((void **)&q->strs, &q->strs_cap, q->strs_len + len, 1);
}

const char *fleet__queue_strs_add(struct fleet__queue_s *q, fleet_bytes_t b) {
  char *p = q->strs + q->strs_len;

  if (b.len > 0)
    memcpy(p, b.base, b.len);
  p[b.len] = '\0';
  q->strs_len += b.len + 1;
  return p;
}

int fleet__queue_reply_ids(struct fleet__queue_s *q, const fleet__reply_t *r,
                           size_t first, size_t n) {
  fleet_bytes_t b;
  size_t i, bytes = 0;

  for (i = 0; i < n; i++) {
    if (fleet__reply_bytes(&r->elem[first + i], &b) != 0)
      return FLEET_EPROTO;
    bytes += b.len + 1;
  }
  q->strs_len = 0;
  if (fleet__grow((void **)&q->ids, &q->ids_cap, n + 1, sizeof(*q->ids)) != 0 ||
      fleet__queue_strs_reserve(q, bytes) != 0)
    return FLEET_ENOMEM;
  for (i = 0; i < n; i++) {
    fleet__reply_bytes(&r->elem[first + i], &b);
    q->ids[i] = fleet__queue_strs_add(q, b);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Init and close                                                           */

static void queue_free(fleet__handle_t *h) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)h;

  fleet__key_free(&q->tag);
  fleet__args_free(&q->args);
  free(q->name);
  free(q->results);
  free(q->jobs);
  free(q->dl);
  free(q->enq);
  free(q->ids);
  free(q->strs);
  free(q->enq_buf);
  free(q->enq_lens);
  free(q->rbuf);
  fleet__key_free(&q->ev_channel);
  free(q->ev_job);
  free(q->parts);
  free(q);
}

static void queue_part_closed(fleet_handle_t *h) {
  free(h);
}

/* The enqueues not sent yet stay on the live list, where the base cancels
 * them; the phase-end handles close, if the first enqueue made them. */
static void queue_close(fleet__handle_t *h) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)h;

  q->enq_first = q->enq_last = NULL;
  q->enq_jobs = q->enq_nargs = 0;
  q->enq_buf_len = 0;
  if (q->enq_flush.run != NULL)
    fleet__handle_phase_end_close(h, &q->enq_flush);
  /* The events' lease timer, if they were started (queue_events.c); the
   * base ends their subscription. */
  if (q->ev_timer_on) {
    q->ev_timer_on = 0;
    fleet__handle_uv_close(h, (uv_handle_t *)&q->ev_timer);
  }
  /* A partitioned queue's children (queue_parts.c), each freed by its
   * close callback. */
  for (uint32_t p = 0; p < q->nparts; p++)
    fleet_queue_close(q->parts[p], queue_part_closed);
}

static const fleet__handle_vt_t queue_vt = {
    .type = FLEET_HANDLE_QUEUE,
    .req_size = sizeof(fleet__qreq_t),
    .close = queue_close,
    .free = queue_free,
};

fleet_bytes_t fleet__queue_tag(const fleet_queue_t *pub) {
  const struct fleet__queue_s *q =
      (const struct fleet__queue_s *)fleet__handle_of(pub, FLEET_HANDLE_QUEUE);

  return fleet__key_bytes(&q->tag);
}

int fleet__queue_init(fleet_client_t *client, fleet_queue_t *pub,
                      const char *name, const fleet_queue_options_t *options) {
  struct fleet__queue_s *q;
  size_t len;
  int err;

  if (pub == NULL)
    return FLEET_EINVAL;
  pub->internal_ = NULL;
  if ((err = fleet__str_check(name, FLEET__NAME_MAX, &len)) != 0)
    return err;
  if ((q = calloc(1, sizeof(*q))) == NULL)
    return FLEET_ENOMEM;
  if ((err = fleet__handle_init(&q->base, &queue_vt, client,
                                (fleet_handle_t *)pub)) != 0) {
    free(q);
    return err;
  }
  q->name = fleet__memdup(name, len);
  if (q->name == NULL ||
      fleet__key_build(&q->tag, q->base.client->prefix,
                       q->base.client->prefix_len, name, len, NULL) != 0) {
    fleet__handle_abort(&q->base);
    queue_free(&q->base);
    return FLEET_ENOMEM;
  }
  q->base.mblock.name = q->name; /* metrics */
  q->base.mblock.name_len = len;
  queue_options_resolve(&q->opts, options);
  q->base.error_cb = q->opts.error_cb;
  fleet__rng_seed(&q->rng, uv_hrtime() ^ (uint64_t)(uintptr_t)q);
  if (options != NULL)
    q->given = *options;
  return 0;
}

void fleet__queue_abort(fleet_queue_t *pub) {
  fleet__handle_t *h = pub->internal_;

  fleet__handle_abort(h);
  queue_free(h);
}

int fleet_queue_close(fleet_queue_t *pub, fleet_close_cb close_cb) {
  return fleet__handle_close_of(pub, FLEET_HANDLE_QUEUE, close_cb);
}

const char *fleet_queue_name(const fleet_queue_t *pub) {
  const struct fleet__queue_s *q =
      (const struct fleet__queue_s *)fleet__handle_of(pub, FLEET_HANDLE_QUEUE);

  return q != NULL ? q->name : NULL;
}
