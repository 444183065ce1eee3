/* worker.c -- the worker's lifecycle: options, the state machine (idle,
 * running, stopping, stopped, closing), its timers, the wake-up
 * subscription, the flush that sends what an iteration produced, and
 * online/offline tracking. Jobs and calls are in worker_jobs.c. */
#include <stdlib.h>
#include <string.h>

#include "keys.h"
#include "worker_int.h"

/* The offline retry backoff, in ms. */
#define WORKER_RETRY_MIN_MS 50
#define WORKER_RETRY_MAX_MS 2000

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

/* ------------------------------------------------------------------------ */
/* Flush, online, offline                                                   */

static void worker_on_flush(uv_idle_t *handle);

void fleet__worker_kick(struct fleet__worker_s *w) {
  if (!uv_is_closing((uv_handle_t *)&w->flush))
    uv_idle_start(&w->flush, worker_on_flush);
}

int fleet__worker_may_retry(const struct fleet__worker_s *w) {
  return w->state != FLEET__WORKER_CLOSING && !w->stop_expired;
}

static void worker_on_poll(uv_timer_t *t) {
  struct fleet__worker_s *w =
      FLEET__CONTAINER_OF(t, struct fleet__worker_s, poll_timer);
  w->maybe_pending = 1;
  fleet__worker_kick(w);
}

static void worker_on_retry(uv_timer_t *t) {
  struct fleet__worker_s *w =
      FLEET__CONTAINER_OF(t, struct fleet__worker_s, poll_timer);
  w->probe = 1;
  w->maybe_pending = 1;
  fleet__worker_kick(w);
}

/* Arms the poll timer as the fallback poll (online) or the retry of an
 * offline worker. */
static void worker_arm_poll(struct fleet__worker_s *w) {
  uint64_t d;

  if (w->state == FLEET__WORKER_CLOSING || w->state == FLEET__WORKER_STOPPED ||
      w->state == FLEET__WORKER_IDLE) {
    uv_timer_stop(&w->poll_timer);
    return;
  }
  if (w->online) {
    if (w->state == FLEET__WORKER_RUNNING)
      uv_timer_start(&w->poll_timer, worker_on_poll, w->o.poll_ms,
                     w->o.poll_ms);
    else
      uv_timer_stop(&w->poll_timer);
    return;
  }
  d = fleet__backoff_delay(WORKER_RETRY_MIN_MS, WORKER_RETRY_MAX_MS, 20,
                           w->retry_attempt, fleet__rng_next(&w->rng));
  uv_timer_start(&w->poll_timer, worker_on_retry, d, 0);
}

void fleet__worker_offline(struct fleet__worker_s *w, int status) {
  w->stats.last_error = status;
  if (w->online) {
    w->online = 0;
    w->retry_attempt = 0;
    worker_arm_poll(w);
  } else if (!uv_is_active((uv_handle_t *)&w->poll_timer)) {
    w->retry_attempt++;
    worker_arm_poll(w);
  }
}

void fleet__worker_online(struct fleet__worker_s *w) {
  if (w->online)
    return;
  w->online = 1;
  w->retry_attempt = 0;
  w->maybe_pending = 1;
  worker_arm_poll(w);
  fleet__worker_kick(w);
}

/* The flush: everything finished, handed back or claimed during one loop
 * iteration goes out together. */
static void worker_on_flush(uv_idle_t *handle) {
  struct fleet__worker_s *w =
      FLEET__CONTAINER_OF(handle, struct fleet__worker_s, flush);

  uv_idle_stop(handle);
  if (w->state == FLEET__WORKER_CLOSING && w->stop_cb != NULL) {
    /* A stop that the close overtook. */
    fleet_worker_stop_cb cb = w->stop_cb;
    w->stop_cb = NULL;
    cb(w->pub, FLEET_ECANCELED);
  }
  if (w->handback_pending) {
    w->handback_pending = 0;
    fleet__worker_hand_back(w);
  }
  fleet__worker_settle_local(w);
  if (w->online || w->probe || w->state == FLEET__WORKER_CLOSING ||
      w->stop_expired)
    fleet__worker_send_finishes(w);
  if (w->state == FLEET__WORKER_RUNNING && (w->online || w->probe))
    fleet__worker_send_claims(w);
  w->probe = 0;
  fleet__worker_check_done(w);
}

/* ------------------------------------------------------------------------ */
/* Timers                                                                   */

static void worker_on_delay(uv_timer_t *t) {
  struct fleet__worker_s *w =
      FLEET__CONTAINER_OF(t, struct fleet__worker_s, delay_timer);
  w->promote_due = 1;
  w->maybe_pending = 1;
  fleet__worker_kick(w);
}

void fleet__worker_arm_delay(struct fleet__worker_s *w, uint64_t now_ms,
                             uint64_t at_ms) {
  uint64_t d = (at_ms > now_ms ? at_ms - now_ms : 0) + 1;

  if (w->state != FLEET__WORKER_RUNNING)
    return;
  if (uv_is_active((uv_handle_t *)&w->delay_timer) &&
      uv_timer_get_due_in(&w->delay_timer) <= d)
    return;
  uv_timer_start(&w->delay_timer, worker_on_delay, d, 0);
}

static void worker_on_heartbeat(uv_timer_t *t) {
  fleet__worker_heartbeat(
      FLEET__CONTAINER_OF(t, struct fleet__worker_s, hb_timer));
}

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
  if (fleet_queue_recover(&w->queue, worker_on_recovered, w) == 0)
    w->recovering = 1;
  else
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
 * and the backend is reachable again). Either way a claim may find jobs. */
static void worker_on_wake(void *arg, int status, const char *payload,
                           size_t len) {
  struct fleet__worker_s *w = arg;

  w->wake_gen++;
  w->maybe_pending = 1;
  if (status == FLEET_ECONNLOST && !w->online)
    w->probe = 1;
  fleet__worker_kick(w);
}

static void worker_unsubscribe(struct fleet__worker_s *w) {
  fleet__backend_t *be;

  if (w->sub == NULL)
    return;
  be = fleet__client_backend(w->client);
  be->vt->unsubscribe(be, w->sub);
  w->sub = NULL;
}

/* ------------------------------------------------------------------------ */
/* States                                                                   */

static void worker_on_handle_closed(uv_handle_t *h) {
  struct fleet__worker_s *w = h->data;
  fleet_worker_t *pub = w->pub;
  fleet_worker_close_cb cb = w->close_cb;

  if (--w->handles_open > 0)
    return;
  fleet__worker_free_jobs(w);
  free(w->channel);
  free(w);
  pub->internal_ = NULL;
  if (cb != NULL)
    cb(pub);
}

static void worker_on_queue_closed(fleet_queue_t *q) {
  struct fleet__worker_s *w = q->data;
  w->queue_open = -1; /* closed */
  fleet__worker_check_done(w);
}

static void worker_close_handles(struct fleet__worker_s *w) {
  uv_handle_t *hs[7];
  size_t i;

  hs[0] = (uv_handle_t *)&w->flush;
  hs[1] = (uv_handle_t *)&w->poll_timer;
  hs[2] = (uv_handle_t *)&w->delay_timer;
  hs[3] = (uv_handle_t *)&w->hb_timer;
  hs[4] = (uv_handle_t *)&w->recover_timer;
  hs[5] = (uv_handle_t *)&w->lease_timer;
  hs[6] = (uv_handle_t *)&w->stop_timer;
  for (i = 0; i < 7; i++) {
    hs[i]->data = w;
    uv_close(hs[i], worker_on_handle_closed);
  }
}

void fleet__worker_check_done(struct fleet__worker_s *w) {
  int quiet = w->claims_in_flight == 0 && w->calls_in_flight == 0 &&
              w->sendq == NULL && w->settleq == NULL;

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
  if (w->queue_open == -1 && w->active == 0 && w->settleq == NULL &&
      w->handles_open == 7 && !uv_is_closing((uv_handle_t *)&w->flush))
    worker_close_handles(w);
}

/* The one place the worker changes state. */
static void worker_set_state(struct fleet__worker_s *w,
                             fleet__worker_state_t state) {
  fleet_worker_stop_cb stop_cb;

  w->state = state;
  switch (state) {
    case FLEET__WORKER_RUNNING:
      w->stop_expired = 0;
      w->stop_status = 0;
      w->maybe_pending = 1;
      worker_arm_poll(w);
      uv_timer_start(&w->hb_timer, worker_on_heartbeat, w->o.heartbeat_ms,
                     w->o.heartbeat_ms);
      uv_timer_start(&w->recover_timer, worker_on_recover_timer, 0, 0);
      fleet__worker_kick(w);
      break;
    case FLEET__WORKER_STOPPING:
      uv_timer_stop(&w->delay_timer);
      uv_timer_stop(&w->recover_timer);
      worker_arm_poll(w);
      fleet__worker_kick(w);
      break;
    case FLEET__WORKER_STOPPED:
    case FLEET__WORKER_CLOSING:
      uv_timer_stop(&w->poll_timer);
      uv_timer_stop(&w->delay_timer);
      uv_timer_stop(&w->hb_timer);
      uv_timer_stop(&w->recover_timer);
      uv_timer_stop(&w->lease_timer);
      uv_timer_stop(&w->stop_timer);
      worker_unsubscribe(w);
      if (state == FLEET__WORKER_CLOSING) {
        w->handback_pending = 1;
        fleet__worker_kick(w);
      } else if ((stop_cb = w->stop_cb) != NULL) {
        w->stop_cb = NULL;
        stop_cb(w->pub, w->stop_status);
      }
      break;
    case FLEET__WORKER_IDLE:
      break;
  }
}

/* ------------------------------------------------------------------------ */
/* Public calls                                                             */

/* Checks and completes the options. Returns 0 or FLEET_EINVAL. */
static int worker_check_options(fleet_worker_options_t *o, uint32_t *margin) {
  if (o->handler == NULL || o->concurrency == 0 || o->concurrency > 10000 ||
      o->claim_ttl_ms < 10 || o->heartbeat_ms == 0 || o->recover_ms == 0 ||
      o->poll_ms == 0 || o->claim_batch > FLEET_QUEUE_BATCH_MAX)
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

int fleet_worker_init(fleet_client_t *client, fleet_worker_t *pub,
                      const char *name, const fleet_worker_options_t *options) {
  struct fleet__worker_s *w;
  fleet__key_t chan = {NULL, 0, 0};
  uv_loop_t *loop;
  int err;

  if (pub == NULL)
    return FLEET_EINVAL;
  pub->internal_ = NULL;
  if (client == NULL || client->internal_ == NULL || options == NULL ||
      fleet__str_check(name, FLEET__NAME_MAX, NULL) != 0)
    return FLEET_EINVAL;
  if (!fleet__client_usable(client))
    return FLEET_ECLOSING;
  w = calloc(1, sizeof(*w));
  if (w == NULL)
    return FLEET_ENOMEM;
  w->o = *options;
  err = worker_check_options(&w->o, &w->margin_ms);
  if (err == 0)
    err = fleet_queue_init(client, &w->queue, name, &w->o.queue);
  if (err != 0) {
    free(w);
    return err;
  }
  if (fleet__key_build(&chan, client->internal_->prefix,
                       client->internal_->prefix_len, name, strlen(name),
                       "jobs:wake") != 0) {
    fleet_queue_close(&w->queue, NULL);
    free(w);
    return FLEET_ENOMEM;
  }
  w->channel = chan.base;
  w->channel_len = chan.len;
  w->queue.data = w;
  w->queue_open = 1;
  w->pub = pub;
  w->client = client;
  w->loop = loop = fleet_client_loop(client);
  w->online = 1;
  w->stats.online = 1;
  w->state = FLEET__WORKER_IDLE;
  fleet__rng_seed(&w->rng, uv_hrtime() ^ (uint64_t)(uintptr_t)w);
  uv_idle_init(loop, &w->flush);
  uv_timer_init(loop, &w->poll_timer);
  uv_timer_init(loop, &w->delay_timer);
  uv_timer_init(loop, &w->hb_timer);
  uv_timer_init(loop, &w->recover_timer);
  uv_timer_init(loop, &w->lease_timer);
  uv_timer_init(loop, &w->stop_timer);
  w->handles_open = 7;
  pub->internal_ = w;
  return 0;
}

int fleet_worker_start(fleet_worker_t *pub) {
  struct fleet__worker_s *w;
  fleet__backend_t *be;
  int err;

  if (pub == NULL || (w = pub->internal_) == NULL)
    return FLEET_EINVAL;
  if (w->state == FLEET__WORKER_CLOSING || !fleet__client_usable(w->client))
    return FLEET_ECLOSING;
  if (w->state != FLEET__WORKER_IDLE && w->state != FLEET__WORKER_STOPPED)
    return FLEET_EINVAL;
  be = fleet__client_backend(w->client);
  err = be->vt->subscribe(be, w->channel, w->channel_len, worker_on_wake, w,
                          &w->sub);
  if (err != 0)
    return err;
  worker_set_state(w, FLEET__WORKER_RUNNING);
  return 0;
}

int fleet_worker_stop(fleet_worker_t *pub, uint32_t timeout_ms,
                      fleet_worker_stop_cb cb) {
  struct fleet__worker_s *w;

  if (pub == NULL || (w = pub->internal_) == NULL)
    return FLEET_EINVAL;
  if (w->state == FLEET__WORKER_CLOSING)
    return FLEET_ECLOSING;
  if (w->state != FLEET__WORKER_RUNNING)
    return FLEET_EINVAL;
  w->stop_cb = cb;
  uv_timer_start(&w->stop_timer, worker_on_stop_timer, timeout_ms, 0);
  worker_set_state(w, FLEET__WORKER_STOPPING);
  return 0;
}

int fleet_worker_close(fleet_worker_t *pub, fleet_worker_close_cb close_cb) {
  struct fleet__worker_s *w;

  if (pub == NULL || (w = pub->internal_) == NULL)
    return FLEET_EINVAL;
  if (w->state == FLEET__WORKER_CLOSING)
    return FLEET_ECLOSING;
  w->close_cb = close_cb;
  worker_set_state(w, FLEET__WORKER_CLOSING);
  return 0;
}

void fleet_worker_stats(const fleet_worker_t *pub, fleet_worker_stats_t *out) {
  const struct fleet__worker_s *w = pub != NULL ? pub->internal_ : NULL;

  memset(out, 0, sizeof(*out));
  if (w == NULL)
    return;
  *out = w->stats;
  out->active = w->active;
  out->held = w->held_count;
  out->online = w->online;
  out->state = fleet__worker_state_name(w->state);
}

const char *fleet__worker_state_name(fleet__worker_state_t state) {
  if ((size_t)state >= FLEET__ARRAY_SIZE(worker_state_names))
    return "unknown";
  return worker_state_names[state];
}
