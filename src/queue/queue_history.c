/* queue_history.c -- a queue's history (docs/metrics.md, "Queue
 * history"): the read of its points (queue_history.lua) and the readers'
 * sample of the oldest pending job's age, which also records the minute's
 * depth and wait (queue_sample.lua), on one plain queue (a partitioned
 * handle's go to each partition, queue_parts.c). The counts themselves are
 * written by the completion and failure scripts (lib/queue_hist.lua). */
#include <stdlib.h>

#include "queue_int.h"

/* ------------------------------------------------------------------------ */
/* History                                                                  */

#define HIST_FIELDS 4

static void hist_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_history_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                    NULL, 0, req->user_data);
}

/* {now_ms, first point's start, step, then completed, failed, depth,
 * wait per point}. */
static void hist_reply(fleet__req_t *base, int status,
                       const fleet__reply_t *r) {
  fleet_hist_point_t *pts = NULL;
  int64_t t0, step, v[HIST_FIELDS];
  size_t n = 0, i, k;
  int rc = 0;

  if (fleet__call_failed(base, status))
    return;
  if (!fleet__reply_is_array(r, 3) || (r->nelem - 3) % HIST_FIELDS != 0 ||
      fleet__reply_i64(&r->elem[1], &t0) != 0 ||
      fleet__reply_i64(&r->elem[2], &step) != 0 || step <= 0)
    rc = FLEET_EPROTO;
  if (rc == 0) {
    n = (r->nelem - 3) / HIST_FIELDS;
    if (n > 0 && (pts = calloc(n, sizeof(*pts))) == NULL)
      rc = FLEET_ENOMEM;
  }
  for (i = 0; rc == 0 && i < n; i++) {
    for (k = 0; rc == 0 && k < HIST_FIELDS; k++)
      if (fleet__reply_i64(&r->elem[3 + i * HIST_FIELDS + k], &v[k]) != 0 ||
          v[k] < (k < 2 ? 0 : -1))
        rc = FLEET_EPROTO;
    if (rc != 0)
      break;
    pts[i].t_ms = t0 + (int64_t)i * step;
    pts[i].processed = (uint64_t)v[0] + (uint64_t)v[1];
    pts[i].failed = (uint64_t)v[1];
    pts[i].depth = v[2];
    pts[i].wait_ms = v[3];
  }
  if (!fleet__call_done(base, rc)) {
    free(pts);
    return;
  }
  ((fleet_queue_history_cb)base->cb)((fleet_queue_t *)base->handle->pub, 0, pts,
                                     n, base->user_data);
  free(pts);
}

static const fleet__call_t hist_call = {
    "queue.history", FLEET__OP_QUEUE_HISTORY, hist_reply, hist_cb_fail};

int fleet__queue_history(fleet_queue_t *pub, fleet_hist_res_t res,
                         int64_t from_ms, int64_t to_ms,
                         fleet_queue_history_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  int err;

  if ((res != FLEET_HIST_MINUTE && res != FLEET_HIST_DAY) || to_ms < 0 ||
      (from_ms > 0 && to_ms > 0 && from_ms > to_ms))
    return FLEET_EINVAL;
  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (fleet__args_begin(&q->args, 3, 2) != 0)
    return FLEET_ENOMEM;
  fleet__args_str(&q->args, res == FLEET_HIST_MINUTE ? "m" : "d");
  fleet__args_i64(&q->args, from_ms);
  fleet__args_i64(&q->args, to_ms);
  return fleet__queue_call(q, &hist_call, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* The readers' sample                                                      */

static void sample_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_sample_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                   NULL, req->user_data);
}

/* {now_ms, oldest age or -1, recorded}. */
static void sample_reply(fleet__req_t *base, int status,
                         const fleet__reply_t *r) {
  fleet_queue_sample_t s;
  int64_t rec;

  if (fleet__call_failed(base, status))
    return;
  if (!fleet__reply_is_array(r, 3) || r->nelem != 3 ||
      fleet__reply_u64(&r->elem[0], &s.now_ms) != 0 ||
      fleet__reply_i64(&r->elem[1], &s.oldest_ms) != 0 || s.oldest_ms < -1 ||
      fleet__reply_i64(&r->elem[2], &rec) != 0 || rec < 0 || rec > 1)
    status = FLEET_EPROTO;
  if (!fleet__call_done(base, status))
    return;
  s.recorded = (int)rec;
  ((fleet_queue_sample_cb)base->cb)((fleet_queue_t *)base->handle->pub, 0, &s,
                                    base->user_data);
}

static const fleet__call_t sample_call = {
    "queue.sample", FLEET__OP_QUEUE_SAMPLE, sample_reply, sample_cb_fail};

int fleet__queue_sample(fleet_queue_t *pub, uint64_t depth,
                        fleet_queue_sample_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  int err;

  if (depth != FLEET_HIST_NO_SAMPLE && depth > (1ULL << 50))
    return FLEET_EINVAL;
  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (fleet__args_begin(&q->args, 1, 1) != 0)
    return FLEET_ENOMEM;
  if (depth == FLEET_HIST_NO_SAMPLE)
    fleet__args_str(&q->args, "");
  else
    fleet__args_u64(&q->args, depth);
  return fleet__queue_call(q, &sample_call, (fleet__fn_t)cb, user_data);
}
