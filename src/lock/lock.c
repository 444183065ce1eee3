/* lock.c -- the lock handle: validation, the lease state machine (acquire,
 * wait, hold, renew, release, lose), and close. Acquire attempts and
 * releases go through the client's batcher (batcher.c) as items due now,
 * so that those a program issues in one loop iteration share one call;
 * automatic renewals go through it on their schedule. Queries by name are
 * in lock_query.c.
 *
 * Validity is tracked on the loop's monotonic clock from the moment a
 * request was issued, never from when its reply arrived: a lease granted
 * or renewed by a call issued at `sent` (the loop time of the batcher's
 * tick that sent it, never later than the real send) is valid locally
 * until sent + ttl - margin. The server's expiry of the same lease is at
 * least sent + ttl on its own clock (it runs the call after it was sent),
 * so the local deadline passes first, by the safety margin, which also
 * covers clock drift. The deadline timer reports the lease lost when it passes
 * without a confirmed renewal; fleet_lock_held() compares with the precise
 * clock, so a holder that checks it before acting never acts late even
 * before the timer has run. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock_int.h"
#include "core/log.h"

/* The first delay after a transient error while waiting, in ms. */
#define LOCK_BACKOFF_MIN_MS 20

static const char *const lock_state_names[] =
    FLEET__NAMES(FLEET__LOCK_STATE_MAP);

const char *fleet__lock_state_name(fleet__lock_state_t state) {
  return FLEET__NAME_AT(lock_state_names, state);
}

static void lock_on_timer(uv_timer_t *timer);
static void lock_on_message(void *arg, int status, const char *payload,
                            size_t len);
static void lock_schedule_renewal(fleet__lock_t *lk);

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

static uint64_t lock_now(const fleet__lock_t *lk) {
  return uv_now(lk->loop);
}

/* The precise monotonic clock in loop milliseconds: the loop's clock
 * (uv_now) is the same clock read coarsely, and never ahead of this. */
static uint64_t lock_precise_now(void) {
  return uv_hrtime() / 1000000;
}

/* Arms the handle's timer for loop time `at`. */
static void lock_timer_at(fleet__lock_t *lk, uint64_t at) {
  uint64_t now = lock_now(lk);
  uv_timer_start(&lk->timer, lock_on_timer, at > now ? at - now : 0, 0);
}

static fleet__lock_t *lock_of(const fleet_lock_t *lock) {
  return (fleet__lock_t *)fleet__handle_of(lock, FLEET_HANDLE_LOCK);
}

/* The calls the user waits on. An acquire lives until it is granted or
 * fails, over any number of attempts, each an item of the client's batcher
 * (LOCK_ACQUIRE); a release is an item too (LOCK_RELEASE): neither sends
 * a call of its own, so neither has a reader. A manual renew is one
 * LOCK_RENEW call. */
static void lock_fail_acquire(fleet__req_t *req, int status);
static void lock_on_renew_reply(fleet__req_t *req, int status,
                                const fleet__reply_t *reply);

static const fleet__call_t lock_acquire_call = {
    "lock.acquire", FLEET__OP_LOCK_ACQUIRE, NULL, lock_fail_acquire};
static const fleet__call_t lock_release_call = {
    "lock.release", FLEET__OP_LOCK_RELEASE, NULL, fleet__call_fail_status};
static const fleet__call_t lock_renew_call = {
    "lock.renew", FLEET__OP_LOCK_RENEW, lock_on_renew_reply,
    fleet__call_fail_status};

/* The `fail` of an acquire: its callback with `status` and no token. */
static void lock_fail_acquire(fleet__req_t *req, int status) {
  fleet_lock_acquire_cb cb = (fleet_lock_acquire_cb)req->cb;

  cb((fleet_lock_t *)req->handle->pub, status, 0, req->user_data);
}

/* Runs the user callback of a granted acquire. */
static void lock_answer_granted(fleet__lock_t *lk, fleet__lock_req_t *req) {
  fleet_lock_acquire_cb cb = (fleet_lock_acquire_cb)req->base.cb;
  void *data = req->base.user_data;

  fleet__req_done(&req->base);
  cb(lk->pub, 0, lk->token, data);
}

/* Puts `it` on the client's batcher for the end of this loop phase, to
 * share one call with every item of its kind made due by then. The handle
 * stays open until the item's result is in: its `done` unholds it. Returns
 * 0, FLEET_ECLOSING (the client is closing: nothing goes out any more) or
 * FLEET_ENOMEM. */
static int lock_batch_now(fleet__lock_t *lk, fleet__batch_item_t *it,
                          const fleet__batch_kind_t *kind) {
  struct fleet__client_s *c = lk->base.client;
  int err;

  if (c->closing)
    return FLEET_ECLOSING;
  err = fleet__batch_now(c, it, kind, NULL);
  if (err == 0)
    fleet__handle_hold(&lk->base);
  return err;
}

/* ------------------------------------------------------------------------ */
/* The state machine                                                        */

/* The one place a handle changes state. Leaving a state undoes what it
 * set up (the renewal schedule, the subscription, the timer); entering
 * one sets up what it needs: HELD arms the deadline and schedules the
 * renewal, WAITING arms the timer for `at` (the next attempt, or the end
 * of the wait if sooner), ACQUIRING arms it for the end of the wait. */
static void lock_set_state(fleet__lock_t *lk, fleet__lock_state_t state,
                           uint64_t at) {
  fleet__lock_state_t old = lk->state;
  int waiting = state == FLEET__LOCK_ACQUIRING || state == FLEET__LOCK_WAITING;

  if (old == FLEET__LOCK_HELD)
    fleet__batch_remove(lk->base.client, &lk->renewal);
  if (!waiting && lk->sub != NULL)
    fleet__handle_unsubscribe(&lk->base, &lk->sub);
  if (!uv_is_closing((uv_handle_t *)&lk->timer))
    uv_timer_stop(&lk->timer);
  lk->state = state;
  switch (state) {
    case FLEET__LOCK_ACQUIRING:
      if (lk->waiting && lk->wait_until != UINT64_MAX)
        lock_timer_at(lk, lk->wait_until);
      break;
    case FLEET__LOCK_HELD:
      lock_timer_at(lk, lk->deadline);
      if (!lk->manual_renew)
        lock_schedule_renewal(lk);
      break;
    case FLEET__LOCK_WAITING:
      lock_timer_at(lk, at < lk->wait_until ? at : lk->wait_until);
      break;
    default:
      break;
  }
}

/* Queues one acquire attempt. Returns 0, FLEET_ECLOSING or FLEET_ENOMEM. */
static int lock_send_attempt(fleet__lock_t *lk);

/* Ends the acquire in progress with `status` (not a grant): back to IDLE,
 * then the callback. */
static void lock_acquire_fail(fleet__lock_t *lk, int status) {
  fleet__lock_req_t *req = lk->acquire;

  lk->acquire = NULL;
  lock_set_state(lk, FLEET__LOCK_IDLE, 0);
  fleet__call_finish(&req->base, status);
}

/* A waiting acquire failed to reach the backend: WAITING again, for a
 * backoff that grows with each failure in a row up to retry_max_ms. The
 * error callback hears the failure. */
static void lock_backoff(fleet__lock_t *lk, int status) {
  uint64_t delay =
      fleet__backoff_delay(LOCK_BACKOFF_MIN_MS, lk->retry_max_ms, 20,
                           lk->failures, fleet__rng_next(&lk->rng));
  lk->failures++;
  lock_set_state(lk, FLEET__LOCK_WAITING, lock_now(lk) + delay);
  fleet__handle_error(&lk->base, status);
}

/* Starts the next attempt of a waiting acquire now. */
static void lock_retry(fleet__lock_t *lk) {
  int err = lock_send_attempt(lk);

  if (err == 0)
    lock_set_state(lk, FLEET__LOCK_ACQUIRING, 0);
  else if (fleet__status_transient(err) || err == FLEET_ENOMEM)
    lock_backoff(lk, err);
  else
    lock_acquire_fail(lk, err);
}

/* The held lease is lost: LOST, then the lease-lost callback. */
static void lock_lose(fleet__lock_t *lk, int status) {
  lock_set_state(lk, FLEET__LOCK_LOST, 0);
  fleet__metrics_add(lk->base.metrics, FLEET_METRIC_LOCK_LOSSES, 1);
  fleet__log(lk->base.client, FLEET_LOG_WARN,
             "%s %.*s: lease lost (token %" PRIu64 "): %s",
             lk->base.metrics != &lk->base.mblock ? "leader" : "lock",
             (int)lk->base.metrics->name_len, lk->base.metrics->name, lk->token,
             fleet_strerror(status));
  if (lk->lost_cb != NULL)
    lk->lost_cb(lk->pub, status, lk->token);
}

/* A renewal issued at `sent` was confirmed: the lease is valid until
 * sent + ttl - margin (never shortened by an older confirmation). */
static void lock_extend(fleet__lock_t *lk, uint64_t sent) {
  uint64_t deadline = sent + lk->ttl_ms - lk->margin_ms;

  if (deadline <= lk->deadline)
    return;
  lk->deadline = deadline;
  if (deadline <= lock_now(lk)) {
    lock_lose(lk, FLEET_ETIMEDOUT);
    return;
  }
  lock_timer_at(lk, deadline);
}

static void lock_renew_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                            fleet_bytes_t *args);
static void lock_renew_done(fleet__batch_item_t *it, int status,
                            const fleet__reply_t *head,
                            const fleet__reply_t *elem, uint64_t sent);

/* Automatic renewals: one LOCK_RENEW call for every lease of the client
 * that is due (KEYS: the locks' tags; ARGV: value and TTL of each). */
static const fleet__batch_kind_t lock_renew_kind = {
    .op = FLEET__OP_LOCK_RENEW,
    .item_keys = 1,
    .item_args = 2,
    .max_items = FLEET__BATCH_MAX,
    .fill = lock_renew_fill,
    .done = lock_renew_done,
};

/* Schedules the next automatic renewal of a HELD lease `at` loop ms; a
 * lease due within a quarter of its interval of another joins its call.
 * Out of memory, the deadline timer reports the loss in time. */
static void lock_renew_at(fleet__lock_t *lk, uint64_t at) {
  if (fleet__batch_add(lk->base.client, &lk->renewal, &lock_renew_kind, NULL,
                       at, lk->interval_ms / 4) != 0)
    fleet__handle_error(&lk->base, FLEET_ENOMEM);
}

/* What the batcher sends for a lease: its tag, "<token>:<owner>" and the
 * TTL; and what comes back: 1 renewed, 0 refused (stale token), -1 the
 * key holds another type. */
static void lock_renew_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                            fleet_bytes_t *args) {
  fleet__lock_t *lk = FLEET__CONTAINER_OF(it, fleet__lock_t, renewal);

  keys[0] = fleet__key_bytes(&lk->tag);
  args[0].base = lk->value;
  args[0].len = lk->value_len;
  args[1].base = lk->ttl_str;
  args[1].len = lk->ttl_len;
}

static void lock_renew_done(fleet__batch_item_t *it, int status,
                            const fleet__reply_t *head,
                            const fleet__reply_t *elem, uint64_t sent) {
  fleet__lock_t *lk = FLEET__CONTAINER_OF(it, fleet__lock_t, renewal);
  uint64_t retry;

  if (status == 0 && (elem->type != FLEET__REPLY_INT || elem->integer < -1 ||
                      elem->integer > 1))
    status = FLEET_EPROTO;
  if (lk->state != FLEET__LOCK_HELD)
    return;
  if (status < 0) {
    /* Retry soon, while the deadline allows; its timer reports the loss if
     * no renewal gets through. */
    retry = lk->interval_ms / 4 > 10 ? lk->interval_ms / 4 : 10;
    lock_renew_at(lk, lock_now(lk) + retry);
    fleet__handle_error(&lk->base, status);
    return;
  }
  if (elem->integer == 1) {
    fleet__metrics_add(lk->base.metrics, FLEET_METRIC_LOCK_RENEWALS, 1);
    lock_renew_at(lk, sent + lk->interval_ms);
    lock_extend(lk, sent);
    return;
  }
  lock_lose(lk, elem->integer == 0 ? FLEET_ESTALE : FLEET_EWRONGTYPE);
}

static void lock_schedule_renewal(fleet__lock_t *lk) {
  lock_renew_at(lk, lk->attempt_sent + lk->interval_ms);
}

/* ------------------------------------------------------------------------ */
/* Acquire                                                                  */

static void lock_attempt_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                              fleet_bytes_t *args);
static void lock_attempt_done(fleet__batch_item_t *it, int status,
                              const fleet__reply_t *head,
                              const fleet__reply_t *elem, uint64_t sent);

/* Attempts: one LOCK_ACQUIRE call for every attempt of the client queued
 * in one loop phase, with two reply elements each. Handles of one owner
 * and TTL (a process's usual case) send their owner, TTL and mark once per
 * call. */
static const fleet__batch_kind_t lock_acquire_kind = {
    .op = FLEET__OP_LOCK_ACQUIRE,
    .item_keys = 1,
    .item_args = 3,
    .item_reply = 2,
    .max_items = FLEET__BATCH_MAX,
    .args_once = 1,
    .fill = lock_attempt_fill,
    .done = lock_attempt_done,
};

static void lock_release_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                              fleet_bytes_t *args);
static void lock_release_done(fleet__batch_item_t *it, int status,
                              const fleet__reply_t *head,
                              const fleet__reply_t *elem, uint64_t sent);

/* Releases, the user's and quiet ones alike: one LOCK_RELEASE call for
 * every release of the client queued in one loop phase. */
static const fleet__batch_kind_t lock_release_kind = {
    .op = FLEET__OP_LOCK_RELEASE,
    .item_keys = 1,
    .item_args = 1,
    .max_items = FLEET__BATCH_MAX,
    .fill = lock_release_fill,
    .done = lock_release_done,
};

static int lock_send_attempt(fleet__lock_t *lk) {
  int err = lock_batch_now(lk, &lk->attempt, &lock_acquire_kind);

  if (err == 0)
    lk->kick = 0;
  return err;
}

/* What the batcher sends for an attempt: the tag, the owner, the TTL and
 * whether to mark a busy lease. */
static void lock_attempt_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                              fleet_bytes_t *args) {
  fleet__lock_t *lk = FLEET__CONTAINER_OF(it, fleet__lock_t, attempt);

  keys[0] = fleet__key_bytes(&lk->tag);
  args[0].base = lk->owner;
  args[0].len = lk->owner_len;
  args[1].base = lk->ttl_str;
  args[1].len = lk->ttl_len;
  /* Only an owner that will wait marks the lease, so that an uncontended
   * release publishes nothing. */
  args[2].base = lk->waiting ? "1" : "0";
  args[2].len = 1;
}

/* Queues the release of the handle's current lease value; `user`: it is
 * the user's release (lk->release). Returns 0, FLEET_ECLOSING or
 * FLEET_ENOMEM. */
static int lock_send_release(fleet__lock_t *lk, int user) {
  fleet__lock_release_t *rel = lk->free_rels;
  int err;

  if (rel != NULL)
    lk->free_rels = rel->next_free;
  else if ((rel = malloc(sizeof(*rel))) == NULL)
    return FLEET_ENOMEM;
  memset(&rel->item, 0, sizeof(rel->item));
  rel->lk = lk;
  rel->user = user;
  rel->value_len = lk->value_len;
  memcpy(rel->value, lk->value, lk->value_len);
  err = lock_batch_now(lk, &rel->item, &lock_release_kind);
  if (err != 0) {
    rel->next_free = lk->free_rels;
    lk->free_rels = rel;
  }
  return err;
}

static void lock_release_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                              fleet_bytes_t *args) {
  fleet__lock_release_t *rel =
      FLEET__CONTAINER_OF(it, fleet__lock_release_t, item);

  keys[0] = fleet__key_bytes(&rel->lk->tag);
  args[0].base = rel->value;
  args[0].len = rel->value_len;
}

/* Releases a lease this handle will not use, without a user callback: one
 * held at close, or granted to an attempt after close or too late to be
 * used. Best effort: if it fails, the lease expires by itself, and the
 * error callback hears why. */
static void lock_release_quietly(fleet__lock_t *lk) {
  int err = lock_send_release(lk, 0);

  if (err != 0 && err != FLEET_ECLOSING)
    fleet__handle_error(&lk->base, err);
}

/* Records the lease granted with `token`: its value and deadline. */
static void lock_granted(fleet__lock_t *lk, uint64_t token) {
  int n = snprintf(lk->value, sizeof(lk->value), "%" PRIu64 ":", token);

  memcpy(lk->value + n, lk->owner, lk->owner_len + 1);
  lk->value_len = (size_t)n + lk->owner_len;
  lk->token = token;
  lk->deadline = lk->attempt_sent + lk->ttl_ms - lk->margin_ms;
}

/* Subscribes a waiting acquire to the released channel. The subscription
 * tells when it is live (FLEET_ECONNLOST), which triggers an attempt, so
 * a release published before that is not missed. A failure is left to
 * the retry timer. */
static void lock_subscribe(fleet__lock_t *lk) {
  if (lk->sub == NULL)
    (void)fleet__handle_subscribe(&lk->base, lk->channel.base, lk->channel.len,
                                  lock_on_message, lk, &lk->sub);
}

/* The lease is busy and the acquire waits: the next attempt comes on a
 * release message, when the holder's TTL (`pttl`) runs out, or after
 * retry_max_ms, whichever is first; a small jitter spreads waiters. */
static void lock_wait(fleet__lock_t *lk, int64_t pttl) {
  uint64_t delay = lk->retry_max_ms;

  lk->failures = 0;
  lock_subscribe(lk);
  if (lk->kick) {
    lock_retry(lk);
    return;
  }
  if (pttl >= 0 && (uint64_t)pttl < delay)
    delay = (uint64_t)pttl;
  delay += 1 + fleet__rng_next(&lk->rng) % (delay / 16 + 2);
  lock_set_state(lk, FLEET__LOCK_WAITING, lock_now(lk) + delay);
}

/* The result of an attempt sent at `sent`: {token, 0} (granted), {0, pttl}
 * (busy), {-1 or -2, 0} (data fleet did not write), or an error. */
static void lock_on_attempt(fleet__lock_t *lk, int status,
                            const fleet__reply_t *elem, uint64_t sent) {
  fleet__lock_req_t *acq;
  int64_t pttl = -1;
  int granted = 0;

  lk->attempt_sent = sent;
  if (status == 0) {
    if (elem[0].type != FLEET__REPLY_INT || elem[1].type != FLEET__REPLY_INT ||
        elem[0].integer < -2)
      status = FLEET_EPROTO;
    else if (elem[0].integer < 0)
      status = elem[0].integer == -1 ? FLEET_EWRONGTYPE : FLEET_EPROTO;
    else if (elem[0].integer == 0)
      pttl = elem[1].integer;
    else
      granted = 1;
    if (granted)
      lock_granted(lk, (uint64_t)elem[0].integer);
  }
  if (lk->state != FLEET__LOCK_ACQUIRING) {
    /* Closing: nobody wants the lease any more. */
    if (granted)
      lock_release_quietly(lk);
    return;
  }
  if (granted) {
    if (lock_precise_now() >= lk->deadline) {
      /* The grant came too late to be used safely (the attempt waited for
       * a connection, say): give it back, and try again if still waiting.
       * Should the new attempt run before the release, it finds the lease
       * still ours, marks it, and the release wakes it. */
      lock_release_quietly(lk);
      if (lk->waiting && !lk->expired && lock_now(lk) < lk->wait_until)
        lock_retry(lk);
      else
        lock_acquire_fail(lk, FLEET_ETIMEDOUT);
      return;
    }
    acq = lk->acquire;
    lk->acquire = NULL;
    lock_set_state(lk, FLEET__LOCK_HELD, 0);
    fleet__metrics_add(lk->base.metrics, FLEET_METRIC_LOCK_ACQUISITIONS, 1);
    lock_answer_granted(lk, acq);
    return;
  }
  if (!lk->waiting) {
    lock_acquire_fail(lk, status == 0 ? FLEET_EBUSY : status);
    return;
  }
  if (lk->expired || lock_now(lk) >= lk->wait_until) {
    lock_acquire_fail(lk, status == 0 || fleet__status_transient(status)
                              ? FLEET_ETIMEDOUT
                              : status);
    return;
  }
  if (status == 0) {
    lock_wait(lk, pttl);
    return;
  }
  if (fleet__status_transient(status))
    lock_backoff(lk, status);
  else
    lock_acquire_fail(lk, status);
}

static void lock_attempt_done(fleet__batch_item_t *it, int status,
                              const fleet__reply_t *head,
                              const fleet__reply_t *elem, uint64_t sent) {
  fleet__lock_t *lk = FLEET__CONTAINER_OF(it, fleet__lock_t, attempt);

  lock_on_attempt(lk, status, elem, sent);
  fleet__handle_unhold(&lk->base);
}

/* A release was published, or the subscription became live: try now. */
static void lock_on_message(void *arg, int status, const char *payload,
                            size_t len) {
  fleet__lock_t *lk = arg;

  if (lk->state == FLEET__LOCK_ACQUIRING)
    lk->kick = 1;
  else if (lk->state == FLEET__LOCK_WAITING)
    lock_retry(lk);
}

/* HELD: the local deadline passed without a confirmed renewal. WAITING:
 * time for the next attempt, or the wait is over. ACQUIRING: the wait is
 * over; the attempt in flight decides. */
static void lock_on_timer(uv_timer_t *timer) {
  fleet__lock_t *lk = FLEET__CONTAINER_OF(timer, fleet__lock_t, timer);
  uint64_t now = lock_now(lk);

  switch (lk->state) {
    case FLEET__LOCK_HELD:
      if (now >= lk->deadline)
        lock_lose(lk, FLEET_ETIMEDOUT);
      else
        lock_timer_at(lk, lk->deadline);
      break;
    case FLEET__LOCK_WAITING:
      if (now >= lk->wait_until)
        lock_acquire_fail(lk, FLEET_ETIMEDOUT);
      else
        lock_retry(lk);
      break;
    case FLEET__LOCK_ACQUIRING:
      lk->expired = 1;
      break;
    default:
      break;
  }
}

/* The entry of a public call on `lock` with the callback `cb`: the
 * handle, or NULL with `*err` set. */
static fleet__lock_t *lock_enter(fleet_lock_t *lock, const void *cb, int *err) {
  return (fleet__lock_t *)fleet__call_enter(lock, FLEET_HANDLE_LOCK, cb != NULL,
                                            err);
}

/* A request of `call` for the user's callback `cb`; NULL when out of
 * memory. */
static fleet__lock_req_t *lock_req_new(fleet__lock_t *lk,
                                       const fleet__call_t *call,
                                       fleet__fn_t cb, void *user_data) {
  return (fleet__lock_req_t *)fleet__call_new(&lk->base, call, cb, user_data);
}

/* The end of starting an acquire or a release, whose item was queued on
 * the batcher with the result `err`: on success the handle waits in
 * `state` with `req` in `*slot`; on error the request is given back.
 * Returns `err`. */
static int lock_started(fleet__lock_t *lk, fleet__lock_req_t *req, int err,
                        fleet__lock_req_t **slot, fleet__lock_state_t state) {
  if (err != 0) {
    fleet__req_free(&req->base);
    return err;
  }
  *slot = req;
  lock_set_state(lk, state, 0);
  return 0;
}

int fleet_lock_acquire(fleet_lock_t *lock, uint64_t wait_ms,
                       fleet_lock_acquire_cb cb, void *user_data) {
  fleet__lock_req_t *req;
  fleet__lock_t *lk;
  uint64_t now;
  int err;

  if ((lk = lock_enter(lock, (const void *)cb, &err)) == NULL)
    return err;
  if (lk->state != FLEET__LOCK_IDLE && lk->state != FLEET__LOCK_LOST)
    return FLEET_EALREADY;
  req = lock_req_new(lk, &lock_acquire_call, (fleet__fn_t)cb, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  now = lock_now(lk);
  lk->waiting = wait_ms != 0;
  lk->wait_until = wait_ms > UINT64_MAX - now ? UINT64_MAX : now + wait_ms;
  lk->expired = 0;
  lk->failures = 0;
  return lock_started(lk, req, lock_send_attempt(lk), &lk->acquire,
                      FLEET__LOCK_ACQUIRING);
}

/* ------------------------------------------------------------------------ */
/* Release and renew                                                        */

/* The result of a release: 2 or 1 released, 0 not held with this value
 * (FLEET_ESTALE), -1 another type (FLEET_EWRONGTYPE), or an error. The
 * user's release answers the user, unless the handle is closing (then the
 * close answers FLEET_ECANCELED); a quiet one only tells its failure. */
static void lock_release_done(fleet__batch_item_t *it, int status,
                              const fleet__reply_t *head,
                              const fleet__reply_t *elem, uint64_t sent) {
  fleet__lock_release_t *rel =
      FLEET__CONTAINER_OF(it, fleet__lock_release_t, item);
  fleet__lock_t *lk = rel->lk;
  fleet__lock_req_t *req;

  if (status == 0) {
    if (elem->type != FLEET__REPLY_INT || elem->integer < -1 ||
        elem->integer > 2)
      status = FLEET_EPROTO;
    else if (elem->integer <= 0)
      status = elem->integer == 0 ? FLEET_ESTALE : FLEET_EWRONGTYPE;
  }
  if (rel->user && lk->state == FLEET__LOCK_RELEASING) {
    /* After any other error the lease may still be there: LOST keeps the
     * token so that release can be tried again. */
    req = lk->release;
    lk->release = NULL;
    lock_set_state(lk,
                   status == 0 || status == FLEET_ESTALE ? FLEET__LOCK_IDLE
                                                         : FLEET__LOCK_LOST,
                   0);
    fleet__call_finish(&req->base, status);
  } else if (!rel->user && status != 0 && status != FLEET_ESTALE &&
             status != FLEET_ECANCELED) {
    fleet__handle_error(&lk->base, status);
  }
  rel->next_free = lk->free_rels;
  lk->free_rels = rel;
  fleet__handle_unhold(&lk->base);
}

int fleet_lock_release(fleet_lock_t *lock, fleet_status_cb cb,
                       void *user_data) {
  fleet__lock_req_t *req;
  fleet__lock_t *lk;
  int err;

  if ((lk = lock_enter(lock, (const void *)cb, &err)) == NULL)
    return err;
  if (lk->state == FLEET__LOCK_IDLE)
    return FLEET_ESTALE;
  if (lk->state != FLEET__LOCK_HELD && lk->state != FLEET__LOCK_LOST)
    return FLEET_EALREADY;
  req = lock_req_new(lk, &lock_release_call, (fleet__fn_t)cb, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  return lock_started(lk, req, lock_send_release(lk, 1), &lk->release,
                      FLEET__LOCK_RELEASING);
}

/* The reply to fleet_lock_renew(): one result, as for a batch. */
static void lock_on_renew_reply(fleet__req_t *rq, int status,
                                const fleet__reply_t *reply) {
  fleet__lock_t *lk = (fleet__lock_t *)rq->handle;
  fleet__lock_req_t *req = (fleet__lock_req_t *)rq;
  int64_t r = 0;

  /* Closing: the close answers the user with FLEET_ECANCELED. */
  if (lk->state == FLEET__LOCK_CLOSING)
    return;
  if (status == 0) {
    if (reply->type == FLEET__REPLY_ARRAY && reply->nelem == 1 &&
        reply->elem[0].type == FLEET__REPLY_INT &&
        reply->elem[0].integer >= -1 && reply->elem[0].integer <= 1)
      r = reply->elem[0].integer;
    else
      status = FLEET_EPROTO;
  }
  if (status == 0 && r != 1)
    status = r == 0 ? FLEET_ESTALE : FLEET_EWRONGTYPE;
  lk->renew = NULL;
  /* The result counts only for the lease it was sent for. */
  if (lk->state == FLEET__LOCK_HELD && lk->token == req->token) {
    if (status == 0) {
      fleet__metrics_add(lk->base.metrics, FLEET_METRIC_LOCK_RENEWALS, 1);
      lock_extend(lk, req->sent);
    } else if (status == FLEET_ESTALE || status == FLEET_EWRONGTYPE)
      lock_lose(lk, status);
  }
  fleet__call_finish(&req->base, status);
}

int fleet_lock_renew(fleet_lock_t *lock, fleet_status_cb cb, void *user_data) {
  fleet_bytes_t tag, args[2];
  fleet__lock_req_t *req;
  fleet__lock_t *lk;
  int err;

  if ((lk = lock_enter(lock, (const void *)cb, &err)) == NULL)
    return err;
  if (lk->renew != NULL || lk->state == FLEET__LOCK_RELEASING)
    return FLEET_EALREADY;
  if (lk->state != FLEET__LOCK_HELD)
    return FLEET_ESTALE;
  tag = fleet__key_bytes(&lk->tag);
  args[0].base = lk->value;
  args[0].len = lk->value_len;
  args[1].base = lk->ttl_str;
  args[1].len = lk->ttl_len;
  req = lock_req_new(lk, &lock_renew_call, (fleet__fn_t)cb, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->sent = lock_now(lk);
  req->token = lk->token;
  if ((err = fleet__call_send(&req->base, &tag, 1, args, 2)) != 0)
    return err;
  lk->renew = req;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Local queries                                                            */

int fleet_lock_held(const fleet_lock_t *lock) {
  const fleet__lock_t *lk = lock_of(lock);

  return lk != NULL && lk->state == FLEET__LOCK_HELD &&
         lock_precise_now() < lk->deadline;
}

uint64_t fleet_lock_token(const fleet_lock_t *lock) {
  const fleet__lock_t *lk = lock_of(lock);
  return lk != NULL ? lk->token : 0;
}

uint64_t fleet_lock_remaining_ms(const fleet_lock_t *lock) {
  uint64_t now = lock_precise_now();

  if (!fleet_lock_held(lock))
    return 0;
  return lock_of(lock)->deadline - now;
}

/* ------------------------------------------------------------------------ */
/* Init and close                                                           */

void fleet_lock_options_init(fleet_lock_options_t *options) {
  memset(options, 0, sizeof(*options));
}

static void lock_free(fleet__handle_t *h) {
  fleet__lock_t *lk = (fleet__lock_t *)h;
  fleet__lock_release_t *rel;

  while ((rel = lk->free_rels) != NULL) {
    lk->free_rels = rel->next_free;
    free(rel);
  }
  fleet__key_free(&lk->tag);
  fleet__key_free(&lk->channel);
  free(lk->owner);
  free(lk);
}

/* Fills in the options' defaults and checks them against the TTL. */
static int lock_setup_options(fleet__lock_t *lk, uint32_t ttl_ms,
                              const fleet_lock_options_t *o) {
  uint32_t margin;

  if (ttl_ms < FLEET_LOCK_TTL_MIN_MS)
    return FLEET_EINVAL;
  margin = ttl_ms / 10 > 5 ? ttl_ms / 10 : 5;
  margin += ttl_ms / 100 + 1;
  lk->ttl_ms = ttl_ms;
  lk->margin_ms =
      o != NULL && o->safety_margin_ms != 0 ? o->safety_margin_ms : margin;
  lk->interval_ms = o != NULL && o->renew_interval_ms != 0
                        ? o->renew_interval_ms
                        : ttl_ms / 3;
  lk->retry_max_ms = o != NULL && o->retry_max_ms != 0 ? o->retry_max_ms : 1000;
  lk->manual_renew = o != NULL && o->manual_renew;
  lk->lost_cb = o != NULL ? o->lost_cb : NULL;
  if (lk->margin_ms >= ttl_ms || lk->interval_ms == 0 ||
      lk->interval_ms >= ttl_ms - lk->margin_ms)
    return FLEET_EINVAL;
  lk->ttl_len =
      (size_t)snprintf(lk->ttl_str, sizeof(lk->ttl_str), "%" PRIu32, ttl_ms);
  return 0;
}

/* The close, at once: no more renewals, waits or retries. A lease held or
 * lost may still be ours on the server: give it back so that others need
 * not wait for its TTL. An attempt in flight does the same when it turns
 * out granted; one still queued never goes out. A release queued or in
 * flight goes on. The requests the user waits for are cancelled by the
 * base on the next loop iteration. */
static void lock_close(fleet__handle_t *h) {
  fleet__lock_t *lk = (fleet__lock_t *)h;
  fleet__lock_state_t old = lk->state;

  lock_set_state(lk, FLEET__LOCK_CLOSING, 0);
  /* The base cancels the calls the user waits on: their fail hooks tell
   * the user. */
  lk->acquire = lk->release = lk->renew = NULL;
  if (old == FLEET__LOCK_ACQUIRING && lk->attempt.call == NULL) {
    fleet__batch_remove(lk->base.client, &lk->attempt);
    fleet__handle_unhold(h);
  }
  if (old == FLEET__LOCK_HELD || old == FLEET__LOCK_LOST)
    lock_release_quietly(lk);
  fleet__handle_uv_close(h, (uv_handle_t *)&lk->timer);
}

static const fleet__handle_vt_t lock_vt = {
    FLEET_HANDLE_LOCK, sizeof(fleet__lock_req_t), lock_close, NULL, lock_free};

int fleet_lock_init(fleet_client_t *client, fleet_lock_t *lock,
                    const char *name, const char *owner, uint32_t ttl_ms,
                    const fleet_lock_options_t *options) {
  struct fleet__client_s *c;
  size_t name_len, owner_len;
  fleet__lock_t *lk;
  int err;

  if ((err = fleet__handle_init_begin(lock, client)) != 0)
    return err;
  c = client->internal_;
  if ((err = fleet__str_check(name, FLEET__NAME_MAX, &name_len)) != 0 ||
      (err = fleet__str_check(owner, FLEET_LOCK_OWNER_MAX, &owner_len)) != 0)
    return err;
  if (c->closing)
    return FLEET_ECLOSING;
  lk = calloc(1, sizeof(*lk));
  if (lk == NULL)
    return FLEET_ENOMEM;
  err = lock_setup_options(lk, ttl_ms, options);
  if (err != 0) {
    free(lk);
    return err;
  }
  lk->owner = fleet__memdup(owner, owner_len);
  lk->owner_len = owner_len;
  if (lk->owner == NULL ||
      fleet__key_build(&lk->tag, c->prefix, c->prefix_len, name, name_len,
                       NULL) != 0 ||
      fleet__key_build(&lk->channel, c->prefix, c->prefix_len, name, name_len,
                       "released") != 0) {
    lock_free(&lk->base);
    return FLEET_ENOMEM;
  }
  err = fleet__handle_init(&lk->base, &lock_vt, client, (fleet_handle_t *)lock);
  if (err != 0) {
    lock_free(&lk->base);
    return err;
  }
  fleet__metrics_name_from_tag(&lk->base.mblock, lk->tag.base, lk->tag.len,
                               c->prefix_len);
  lk->pub = lock;
  lk->base.error_cb = options != NULL ? options->error_cb : NULL;
  lk->loop = c->loop;
  lk->state = FLEET__LOCK_IDLE;
  fleet__rng_seed(&lk->rng, uv_hrtime() ^ (uint64_t)(uintptr_t)lk);
  fleet__handle_timer_init(&lk->base, &lk->timer);
  return 0;
}

int fleet_lock_close(fleet_lock_t *lock, fleet_close_cb close_cb) {
  return fleet__handle_close_of(lock, FLEET_HANDLE_LOCK, close_cb);
}
