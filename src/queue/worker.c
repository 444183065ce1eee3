/* worker.c -- the worker's lifecycle on the handle base: options, the
 * state machine (idle, running, stopping, stopped, closing), its timers,
 * the wake-up and delivery subscriptions (the base's, which ends them at
 * close) and the flush that sends what an iteration produced. Jobs and
 * calls are in worker_jobs.c, their pooled slots and batches in
 * worker_slots.c, the poll, retry and delay timers and online/offline
 * tracking in worker_poll.c. The files below call this one back only
 * through the check_done hook (worker_int.h).
 *
 * Close: the base's `close` hook moves to CLOSING (timers stop and start
 * closing, the claims of the handler's jobs are handed back by the next
 * flush); its `closing` hook answers a stop the close overtook. Once the
 * last finishes are sent the internal queue closes, which cancels what is
 * in flight; once the handler has finished every job the flush closes.
 * The worker holds its base for the queue and for each libuv handle until
 * their close callbacks. */
#include <stdlib.h>
#include <string.h>

#include "core/keys.h"
#include "queue_int.h"
#include "worker_int.h"
#include "core/log.h"

/* The offline retry backoff, in ms. */

/* The longest a job delivered to a parked worker is claimed for before
 * its first heartbeat, in ms (the claim TTL, or three heartbeat periods,
 * if shorter): a delivery lost in transit (the worker's process died, its
 * subscription broke) is recovered this soon, rather than after a whole
 * claim TTL. */
#define FLEET__WORKER_DELIVERY_TTL_MS 10000

/* How long after a known claim deadline recovery runs, in ms. */
#define WORKER_RECOVER_SLACK_MS 10

static const char *const worker_state_names[] = {
#define XX(name, str) str,
    FLEET__WORKER_STATE_MAP(XX)
#undef XX
};

static void worker_set_state(struct fleet__worker_s *w,
                             fleet__worker_state_t state);

void fleet_worker_options_init(fleet_worker_options_t *o) {
  memset(o, 0, sizeof(*o));
  o->concurrency = 10;
  o->claim_ttl_ms = 300000;
  o->heartbeat_ms = 60000;
  o->recover_ms = 1000;
  o->poll_ms = 5000;
  fleet_queue_options_init(&o->queue);
}

/* Fills the fields left 0 with their defaults. */
static void worker_options_defaults(fleet_worker_options_t *o) {
  fleet_worker_options_t d;

  fleet_worker_options_init(&d);
  if (o->concurrency == 0)
    o->concurrency = d.concurrency;
  if (o->claim_ttl_ms == 0)
    o->claim_ttl_ms = d.claim_ttl_ms;
  if (o->heartbeat_ms == 0)
    o->heartbeat_ms = o->claim_ttl_ms / 5;
  if (o->recover_ms == 0)
    o->recover_ms = d.recover_ms;
  if (o->poll_ms == 0)
    o->poll_ms = d.poll_ms;
}

/* ------------------------------------------------------------------------ */
/* The flush                                                                */

/* The flush: everything finished, handed back or claimed during one loop
 * phase goes out together, at its end (the check phase after I/O
 * callbacks, the prepare phase before the loop blocks), and the backend
 * writes it at once rather than on the next iteration. */
static void worker_flush(struct fleet__worker_s *w) {
  fleet__backend_t *be = w->base.client->be;

  fleet__phase_end_disarm(&w->flush);
  if (w->handback_pending) {
    w->handback_pending = 0;
    fleet__worker_hand_back(w);
  }
  if (!fleet__list_empty(&w->settleq))
    w->cb_in_prepare |= w->in_prepare;
  fleet__worker_settle_local(w);
  fleet__worker_send(w,
                     w->online || w->probe ||
                         w->state == FLEET__WORKER_CLOSING || w->stop_expired,
                     w->state == FLEET__WORKER_RUNNING &&
                         (w->online || w->probe));
  w->probe = 0;
  if (be->vt->flush != NULL && !w->base.client->closing)
    be->vt->flush(be);
  fleet__worker_check_done(w);
}

static void worker_on_poke(uv_timer_t *t) {
  (void)t;
}

/* The flush at the end of a phase. One before the poll (in the prepare
 * phase) that ran a user callback (a settled job, a completed stop)
 * starts a 0 ms timer that keeps libuv's coming poll from blocking: the
 * callback may be what a UV_RUN_ONCE caller waits for, and it may have
 * started work that needs another turn of the loop. */
static void worker_on_flush(fleet__phase_end_t *pe, int in_prepare) {
  struct fleet__worker_s *w =
      FLEET__CONTAINER_OF(pe, struct fleet__worker_s, flush);

  if (!in_prepare) {
    worker_flush(w);
    return;
  }
  w->in_prepare = 1;
  worker_flush(w);
  w->in_prepare = 0;
  if (w->cb_in_prepare) {
    w->cb_in_prepare = 0;
    if (!uv_is_closing((uv_handle_t *)&w->poke_timer))
      uv_timer_start(&w->poke_timer, worker_on_poke, 0, 0);
  }
}

/* ------------------------------------------------------------------------ */
/* Timers                                                                   */

static void worker_on_recover_timer(uv_timer_t *t);

/* Recovery ran: run it again after recover_ms, or just after the earliest
 * claim deadline it saw if that comes sooner. */
static void worker_on_recovered(fleet_queue_t *q, int status,
                                const fleet_recover_info_t *info,
                                void *user_data) {
  struct fleet__worker_s *w = user_data;
  uint64_t d = w->o.recover_ms;

  w->recovering = 0;
  if (status == FLEET_ECANCELED) {
    fleet__worker_check_done(w);
    return;
  }
  if (status != 0)
    fleet__handle_error(&w->base, status);
  if (status == 0 && info->requeued + info->dead > 0) { /* metrics, log */
    fleet__metrics_add(w->base.metrics, FLEET_METRIC_JOBS_RECOVERED,
                       info->requeued + info->dead);
    fleet__log(w->base.client, FLEET_LOG_WARN,
               "queue %.*s: recovered %llu stale claims (%llu requeued, "
               "%llu dead)",
               (int)w->base.mblock.name_len, w->base.mblock.name,
               (unsigned long long)(info->requeued + info->dead),
               (unsigned long long)info->requeued,
               (unsigned long long)info->dead);
  }
  if (status == 0 && info->next_deadline_ms > 0) {
    uint64_t until = info->next_deadline_ms > info->now_ms
                         ? info->next_deadline_ms - info->now_ms
                         : 0;
    if (until + WORKER_RECOVER_SLACK_MS < d)
      d = until + WORKER_RECOVER_SLACK_MS;
  }
  if (w->state == FLEET__WORKER_RUNNING)
    uv_timer_start(&w->recover_timer, worker_on_recover_timer, d, 0);
  fleet__worker_check_done(w);
}

static void worker_on_recover_timer(uv_timer_t *t) {
  struct fleet__worker_s *w =
      FLEET__CONTAINER_OF(t, struct fleet__worker_s, recover_timer);

  if (w->recovering || w->state != FLEET__WORKER_RUNNING)
    return;
  int err = fleet_queue_recover(&w->queue, worker_on_recovered, w);

  if (err == 0) {
    w->recovering = 1;
    return;
  }
  fleet__handle_error(&w->base, err);
  uv_timer_start(&w->recover_timer, worker_on_recover_timer, w->o.recover_ms,
                 0);
}

static void worker_on_stop_timer(uv_timer_t *t) {
  struct fleet__worker_s *w =
      FLEET__CONTAINER_OF(t, struct fleet__worker_s, stop_timer);

  /* Past the deadline: hand back what the handler still has, send what
   * waits one last time, and retry nothing more. */
  w->stop_expired = 1;
  w->stop_status = FLEET_ETIMEDOUT;
  w->handback_pending = 1;
  fleet__worker_kick(w);
}

/* ------------------------------------------------------------------------ */
/* Wake-ups                                                                 */

/* A message on the wake channel, or the notice that the subscription is
 * live (after subscribing or a reconnect: messages may have been missed,
 * and the backend is reachable again). Either way a claim may find jobs,
 * unless the message is a cancel (fleet__worker_message()). */
static void worker_on_wake(void *arg, int status, const char *payload,
                           size_t len) {
  struct fleet__worker_s *w = arg;

  if (payload != NULL && fleet__worker_message(w, payload, len))
    return;
  w->wake_gen++;
  if (status == FLEET_ECONNLOST && !w->online)
    w->probe = 1;
  fleet__worker_wake(w);
}

/* A message on the worker's own channel: a delivery; or the notice that
 * the subscription is live, from when an enqueue can deliver to the worker,
 * so its claims may park it (docs/queue.md, "Delivery to idle workers"). */
static void worker_on_delivery(void *arg, int status, const char *payload,
                               size_t len) {
  struct fleet__worker_s *w = arg;
  struct fleet__queue_s *q = (struct fleet__queue_s *)w->queue.internal_;

  if (payload != NULL) {
    fleet__worker_delivered(w, payload, len);
    return;
  }
  /* A worker of a share is not parked: a delivery fills a parked
   * worker's room, whatever the other members of the share hold, so that
   * several parked members would take more than the share's budget. It
   * claims when woken, its room narrowed by the share. */
  if (w->o.share == NULL)
    q->park_len = strlen(q->park_id);
  worker_on_wake(arg, status, payload, len);
}

static void worker_on_unparked(fleet_queue_t *q, int status, fleet_job_t *jobs,
                               size_t n, const fleet_claim_info_t *info,
                               void *user_data) {
  struct fleet__worker_s *w = user_data;

  w->calls_in_flight--;
  if (status != 0 && status != FLEET_ECANCELED)
    fleet__handle_error(&w->base, status);
  fleet__worker_check_done(w);
}

/* A stopping worker takes no more deliveries: a claim of no job that names
 * it unparks it, and its claims park it no more. A delivery that raced the
 * unpark is handed back (fleet__worker_delivered). */
static void worker_unpark(struct fleet__worker_s *w) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)w->queue.internal_;

  if (q->park_len == 0)
    return;
  if (fleet_queue_claim(&w->queue, 0, w->o.claim_ttl_ms, worker_on_unparked,
                        w) == 0)
    w->calls_in_flight++;
  q->park_len = 0;
}

static void worker_unsubscribe(struct fleet__worker_s *w) {
  /* Claims park the worker no more; an enqueue that still finds it parked
   * finds no subscriber, and unparks it. */
  ((struct fleet__queue_s *)w->queue.internal_)->park_len = 0;
  fleet__handle_unsubscribe(&w->base, &w->dsub);
  fleet__handle_unsubscribe(&w->base, &w->sub);
}

/* ------------------------------------------------------------------------ */
/* States                                                                   */

/* The internal queue has closed: every call of the worker is answered. */
static void worker_on_queue_closed(fleet_handle_t *q) {
  struct fleet__worker_s *w = q->data;

  w->queue_open = -1;
  fleet__worker_check_done(w);
  fleet__handle_unhold(&w->base);
}

/* The worker's check_done hook (fleet__worker_check_done()). */
static void worker_check_done(struct fleet__worker_s *w) {
  int quiet = w->claims_in_flight == 0 && w->calls_in_flight == 0 &&
              fleet__list_empty(&w->sendq) && fleet__list_empty(&w->settleq);

  if (w->state == FLEET__WORKER_STOPPING && quiet &&
      (w->active == 0 || w->stop_expired) && !w->handback_pending) {
    worker_set_state(w, FLEET__WORKER_STOPPED);
    return;
  }
  if (w->state != FLEET__WORKER_CLOSING || w->handback_pending ||
      w->stop_cb != NULL)
    return;
  if (w->queue_open == 1) {
    /* The last finishes and hand-backs are sent: cancel what is in
     * flight. */
    w->queue_open = 0;
    fleet_queue_close(&w->queue, worker_on_queue_closed);
    return;
  }
  /* The flush goes last: the handler may still finish jobs. */
  if (w->queue_open == -1 && w->active == 0 && fleet__list_empty(&w->settleq) &&
      !fleet__phase_end_closing(&w->flush)) {
    fleet__handle_phase_end_close(&w->base, &w->flush);
    fleet__handle_unhold(&w->base); /* the close's hold, now the flush's */
  }
}

/* The registry's jobs hook: the jobs the worker holds. */
static void worker_reg_jobs(fleet__reg_t *r) {
  struct fleet__worker_s *w =
      FLEET__CONTAINER_OF(r, struct fleet__worker_s, reg);
  fleet__wjob_t *job;

  FLEET__LIST_FOREACH_DATA (job, &w->held, fleet__wjob_t, node)
    if (job->claim == FLEET__WJOB_HELD)
      fleet__reg_job(r, job->pub.id, job->pub.id_len);
}

/* A running worker is an entry of the process registry, beating at its
 * heartbeat period (held to the registry's bounds). */
static void worker_register(struct fleet__worker_s *w) {
  fleet__reg_start(&w->reg, &w->base, "queue", w->ident, strlen(w->ident),
                   w->base.mblock.name, w->base.mblock.name_len,
                   w->o.heartbeat_ms, worker_reg_jobs);
}

/* The one place the worker changes state. */
static void worker_set_state(struct fleet__worker_s *w,
                             fleet__worker_state_t state) {
  fleet_status_cb stop_cb;

  w->state = state;
  switch (state) {
    case FLEET__WORKER_RUNNING:
      worker_register(w);
      w->stop_expired = 0;
      w->stop_status = 0;
      w->maybe_pending = 1;
      fleet__worker_arm_poll(w);
      uv_timer_start(&w->recover_timer, worker_on_recover_timer, 0, 0);
      fleet__worker_kick(w);
      break;
    case FLEET__WORKER_STOPPING:
      uv_timer_stop(&w->delay_timer);
      uv_timer_stop(&w->recover_timer);
      worker_unpark(w);
      fleet__worker_arm_poll(w);
      fleet__worker_kick(w);
      break;
    case FLEET__WORKER_STOPPED:
    case FLEET__WORKER_CLOSING:
      uv_timer_stop(&w->poll_timer);
      uv_timer_stop(&w->delay_timer);
      uv_timer_stop(&w->recover_timer);
      uv_timer_stop(&w->lease_timer);
      uv_timer_stop(&w->stop_timer);
      worker_unsubscribe(w);
      fleet__worker_heartbeats_stop(w);
      fleet__reg_stop(&w->reg);
      if (state == FLEET__WORKER_CLOSING) {
        w->handback_pending = 1;
        fleet__worker_kick(w);
      } else if ((stop_cb = w->stop_cb) != NULL) {
        w->stop_cb = NULL;
        w->cb_in_prepare |= w->in_prepare;
        stop_cb(w->base.pub, w->stop_status, w->stop_data);
      }
      break;
    case FLEET__WORKER_IDLE:
      break;
  }
}

/* ------------------------------------------------------------------------ */
/* Public calls                                                             */

/* Checks and completes the options (0 fields take their defaults).
 * Returns 0 or FLEET_EINVAL. */
static int worker_check_options(fleet_worker_options_t *o, uint32_t *margin) {
  worker_options_defaults(o);
  if (o->concurrency > 10000 || o->claim_ttl_ms < 10 ||
      o->claim_batch > FLEET_QUEUE_BATCH_MAX)
    return FLEET_EINVAL;
  *margin = o->claim_ttl_ms / 10 + 1;
  if (o->heartbeat_ms >= o->claim_ttl_ms - *margin)
    return FLEET_EINVAL;
  if (o->claim_batch == 0) {
    o->claim_batch = (o->concurrency + 1) / 2;
    if (o->claim_batch > FLEET_QUEUE_BATCH_MAX)
      o->claim_batch = FLEET_QUEUE_BATCH_MAX;
  }
  return 0;
}

static void worker_sub_closed(fleet_handle_t *h) {
  free(h);
}

/* The base's close hook: no user callback runs here. The timers close at
 * once; the flush stays open to hand claims back and send finishes. */
static void worker_on_close(fleet__handle_t *h) {
  struct fleet__worker_s *w = (struct fleet__worker_s *)h;

  worker_set_state(w, FLEET__WORKER_CLOSING);
  fleet__share_leave(w);
  /* A partitioned queue's sub-workers (worker_parts.c), each freed by its
   * close callback. */
  for (uint32_t i = 0; i < w->nsubs; i++)
    fleet_worker_close(w->subs[i], worker_sub_closed);
  fleet__handle_uv_close(&w->base, (uv_handle_t *)&w->poll_timer);
  fleet__handle_uv_close(&w->base, (uv_handle_t *)&w->delay_timer);
  fleet__handle_uv_close(&w->base, (uv_handle_t *)&w->recover_timer);
  fleet__handle_uv_close(&w->base, (uv_handle_t *)&w->lease_timer);
  fleet__handle_uv_close(&w->base, (uv_handle_t *)&w->stop_timer);
  fleet__handle_uv_close(&w->base, (uv_handle_t *)&w->poke_timer);
  fleet__handle_hold(h); /* the flush, released once it is closing */
}

/* The base's closing hook: a stop the close overtook hears it. */
static void worker_on_closing(fleet__handle_t *h) {
  struct fleet__worker_s *w = (struct fleet__worker_s *)h;
  fleet_status_cb cb = w->stop_cb;

  if (cb == NULL)
    return;
  w->stop_cb = NULL;
  cb(w->base.pub, FLEET_ECANCELED, w->stop_data);
  fleet__worker_check_done(w);
}

static void worker_free(fleet__handle_t *h) {
  struct fleet__worker_s *w = (struct fleet__worker_s *)h;

  fleet__worker_free_jobs(w);
  free(w->subs);
  if (w->own_share != NULL)
    fleet_worker_share_free(w->own_share);
  fleet__key_free(&w->channel);
  fleet__key_free(&w->dchannel);
  free(w->ident);
  free(w);
}

static const fleet__handle_vt_t worker_vt = {
    .type = FLEET_HANDLE_WORKER,
    .req_size = sizeof(fleet__req_t),
    .close = worker_on_close,
    .closing = worker_on_closing,
    .free = worker_free,
};

/* The worker of `pub`, or NULL. */
static struct fleet__worker_s *worker_of(const fleet_worker_t *pub) {
  return (struct fleet__worker_s *)fleet__handle_of(pub, FLEET_HANDLE_WORKER);
}

/* The error callback of the worker's queue, which reports the jobs its
 * claims and recoveries moved aside (docs/queue.md, "Jobs fleet cannot
 * read"): the worker's error, the handle passed being the worker. */
static void worker_queue_error(fleet_handle_t *h, int status,
                               const char *detail) {
  struct fleet__worker_s *w = h->data;

  if (w->o.error_cb != NULL && !w->base.closing)
    w->o.error_cb((fleet_handle_t *)fleet__worker_pub(w), status, detail);
}

int fleet__worker_init(fleet_client_t *client, fleet_worker_t *pub,
                       const char *name,
                       const fleet_worker_options_t *options) {
  struct fleet__worker_s *w;
  struct fleet__queue_s *iq;
  char dsuffix[24];
  uint64_t wid;
  size_t len;
  int err, i;

  if (pub == NULL)
    return FLEET_EINVAL;
  pub->internal_ = NULL;
  if (options == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__str_check(name, FLEET__NAME_MAX, &len)) != 0)
    return err;
  if ((w = calloc(1, sizeof(*w))) == NULL)
    return FLEET_ENOMEM;
  if ((w->ident = fleet__ident_make()) == NULL) {
    free(w);
    return FLEET_ENOMEM;
  }
  w->check_done = worker_check_done;
  fleet__list_init(&w->held);
  fleet__list_init(&w->free_jobs);
  fleet__list_init(&w->sendq);
  fleet__list_init(&w->settleq);
  fleet__list_init(&w->free_batches);
  w->o = *options;
  fleet__list_init(&w->share_node);
  if (w->o.share != NULL) {
    /* A worker of a share: its budget by default, weight 1. */
    if (w->o.concurrency == 0)
      w->o.concurrency = fleet__share_concurrency(w->o.share);
    if (w->o.weight == 0)
      w->o.weight = 1;
  }
  if (w->o.weight > FLEET_GROUP_WEIGHT_MAX) {
    free(w->ident);
    free(w);
    return FLEET_EINVAL;
  }
  if ((err = worker_check_options(&w->o, &w->margin_ms)) != 0 ||
      (err = fleet__handle_init(&w->base, &worker_vt, client,
                                (fleet_handle_t *)pub)) != 0) {
    free(w->ident);
    free(w);
    return err;
  }
  /* The worker's id, which names its delivery channel: 16 random hex
   * digits. */
  fleet__rng_seed(&w->rng, uv_hrtime() ^ (uint64_t)(uintptr_t)w);
  wid = (uint64_t)fleet__rng_next(&w->rng) << 32;
  wid |= fleet__rng_next(&w->rng);
  memcpy(dsuffix, "jobs:w:", 7);
  for (i = 0; i < 16; i++)
    dsuffix[7 + i] = "0123456789abcdef"[(wid >> (60 - 4 * i)) & 15];
  dsuffix[23] = '\0';
  if (fleet__key_build(&w->channel, w->base.client->prefix,
                       w->base.client->prefix_len, name, len,
                       "jobs:wake") != 0 ||
      fleet__key_build(&w->dchannel, w->base.client->prefix,
                       w->base.client->prefix_len, name, len, dsuffix) != 0)
    err = FLEET_ENOMEM;
  else
    err = fleet_queue_init(client, &w->queue, name, &w->o.queue);
  if (err != 0) {
    fleet__key_free(&w->channel);
    fleet__key_free(&w->dchannel);
    fleet__handle_abort(&w->base);
    free(w->ident);
    free(w);
    return err;
  }
  iq = (struct fleet__queue_s *)w->queue.internal_;
  memcpy(iq->park_id, dsuffix + 7, 17);
  iq->park_ttl_ms = FLEET__WORKER_DELIVERY_TTL_MS;
  if (iq->park_ttl_ms > w->o.claim_ttl_ms)
    iq->park_ttl_ms = w->o.claim_ttl_ms;
  if (iq->park_ttl_ms / 3 > w->o.heartbeat_ms)
    iq->park_ttl_ms = 3 * w->o.heartbeat_ms;
  fleet__handle_adopt(&w->base, w->queue.internal_);
  w->base.mblock.name = w->queue.internal_->mblock.name; /* metrics */
  w->base.mblock.name_len = w->queue.internal_->mblock.name_len;
  fleet__handle_hold(&w->base); /* until the queue's close callback */
  w->base.error_cb = w->o.error_cb;
  w->queue.internal_->error_cb = worker_queue_error;
  w->queue.data = w;
  w->queue_open = 1;
  if (w->o.share != NULL)
    fleet__share_join(w);
  w->ttl_len = (size_t)snprintf(w->ttl, sizeof(w->ttl), "%u",
                                (unsigned)w->o.claim_ttl_ms);
  w->online = 1;
  w->stats.online = 1;
  w->state = FLEET__WORKER_IDLE;
  fleet__phase_end_init(&w->flush, w->base.loop, worker_on_flush);
  fleet__handle_timer_init(&w->base, &w->poll_timer);
  fleet__handle_timer_init(&w->base, &w->delay_timer);
  fleet__handle_timer_init(&w->base, &w->recover_timer);
  fleet__handle_timer_init(&w->base, &w->lease_timer);
  fleet__handle_timer_init(&w->base, &w->stop_timer);
  fleet__handle_timer_init(&w->base, &w->poke_timer);
  return 0;
}

/* The worker of `pub` if it can take a call; else NULL and `*err` is
 * FLEET_EINVAL or FLEET_ECLOSING. */
static struct fleet__worker_s *worker_enter(fleet_worker_t *pub, int *err) {
  return (struct fleet__worker_s *)fleet__call_enter(pub, FLEET_HANDLE_WORKER,
                                                     1, err);
}

int fleet__worker_start(fleet_worker_t *pub, fleet_worker_handler_cb handler) {
  struct fleet__worker_s *w;
  int err;

  if ((w = worker_enter(pub, &err)) == NULL)
    return err;
  if (handler == NULL)
    return FLEET_EINVAL;
  if (w->state != FLEET__WORKER_IDLE && w->state != FLEET__WORKER_STOPPED)
    return FLEET_EALREADY;
  err = fleet__handle_subscribe(&w->base, w->channel.base, w->channel.len,
                                worker_on_wake, w, &w->sub);
  if (err == 0) {
    err = fleet__handle_subscribe(&w->base, w->dchannel.base, w->dchannel.len,
                                  worker_on_delivery, w, &w->dsub);
    if (err != 0)
      worker_unsubscribe(w);
  }
  if (err != 0)
    return err;
  w->handler = handler;
  worker_set_state(w, FLEET__WORKER_RUNNING);
  return 0;
}

int fleet__worker_stop(fleet_worker_t *pub, uint32_t timeout_ms,
                       fleet_status_cb cb, void *user_data) {
  struct fleet__worker_s *w;
  int err;

  if ((w = worker_enter(pub, &err)) == NULL)
    return err;
  if (w->state != FLEET__WORKER_RUNNING)
    return FLEET_EALREADY;
  w->stop_cb = cb;
  w->stop_data = user_data;
  uv_timer_start(&w->stop_timer, worker_on_stop_timer, timeout_ms, 0);
  worker_set_state(w, FLEET__WORKER_STOPPING);
  return 0;
}

int fleet_worker_close(fleet_worker_t *pub, fleet_close_cb close_cb) {
  return fleet__handle_close_of(pub, FLEET_HANDLE_WORKER, close_cb);
}

void fleet__worker_stats(const fleet_worker_t *pub, fleet_worker_stats_t *out) {
  const struct fleet__worker_s *w = worker_of(pub);

  memset(out, 0, sizeof(*out));
  if (w == NULL)
    return;
  *out = w->stats;
  out->active = w->active;
  out->held = w->held_count;
  out->online = w->online;
  out->state = fleet__worker_state_name(w->state);
}

const char *fleet_worker_id(const fleet_worker_t *pub) {
  const struct fleet__worker_s *w = worker_of(pub);

  return w != NULL ? w->ident : NULL;
}

const char *fleet__worker_state_name(fleet__worker_state_t state) {
  return FLEET__NAME_AT(worker_state_names, state);
}
