/* lock_renew.c -- the per-client lease renewal batcher: one timer per
 * client, and one LOCK_RENEW script call per tick for every lease of the
 * client that is due.
 *
 * Every HELD lease with automatic renewal is on the renewer's list with the
 * loop time its next renewal is due (renew_at). The timer is armed for the
 * earliest one. When it fires, every lease due within a quarter of its own
 * renewal interval is renewed by the same call, so that leases taken at
 * about the same time stay in step and share their calls. A lease has at
 * most one renewal in flight; the batch remembers which lease each reply
 * element belongs to, and a lease released or closed meanwhile is simply
 * forgotten by the batch.
 *
 * The renewer lives while some lock handle of the client uses it or a
 * batch is in flight; then it detaches from the client and frees itself
 * once its timer has closed. */
#include <stdlib.h>
#include <string.h>

#include "lock_int.h"

/* The most leases one call renews; more due at once take several calls. */
#define RENEW_BATCH_MAX 512

struct fleet__lock_batch_s {
  fleet__lock_batch_t *next; /* in the pool */
  fleet__lock_renewer_t *rn;
  uint64_t sent; /* loop ms the call was issued */
  size_t n;
  fleet__lock_t *locks[RENEW_BATCH_MAX]; /* NULL: forgotten */
};

struct fleet__lock_renewer_s {
  struct fleet__client_s *client;
  uv_timer_t timer;
  uint64_t due;        /* loop ms the timer is armed for; 0 when stopped */
  fleet__lock_t *head; /* the leases to renew */
  size_t users;        /* lock handles using the renewer */
  size_t inflight;     /* batches in flight */
  int closing;
  fleet__lock_batch_t *pool;
  /* Call arguments, reused: the backend copies them. */
  fleet_bytes_t keys[RENEW_BATCH_MAX];
  fleet_bytes_t args[2 * RENEW_BATCH_MAX];
  uint64_t batches; /* statistics, for tests */
  uint64_t leases;
};

static void renewer_on_timer(uv_timer_t *timer);

/* ------------------------------------------------------------------------ */
/* Lifecycle                                                                */

int fleet__lock_renewer_ref(fleet_client_t *client,
                            fleet__lock_renewer_t **out) {
  struct fleet__client_s *c = client->internal_;
  fleet__lock_renewer_t *rn = c->lock_renewer;

  if (rn == NULL) {
    rn = calloc(1, sizeof(*rn));
    if (rn == NULL)
      return FLEET_ENOMEM;
    rn->client = c;
    uv_timer_init(c->loop, &rn->timer);
    c->lock_renewer = rn;
  }
  rn->users++;
  *out = rn;
  return 0;
}

static void renewer_on_closed(uv_handle_t *handle) {
  fleet__lock_renewer_t *rn =
      FLEET__CONTAINER_OF((uv_timer_t *)handle, fleet__lock_renewer_t, timer);

  while (rn->pool != NULL) {
    fleet__lock_batch_t *b = rn->pool;
    rn->pool = b->next;
    free(b);
  }
  free(rn);
}

/* Detaches the renewer from its client and frees it once it has no users
 * and nothing in flight. A lock handle made after this gets a new one. */
static void renewer_maybe_free(fleet__lock_renewer_t *rn) {
  if (rn->users > 0 || rn->inflight > 0 || rn->closing)
    return;
  rn->closing = 1;
  if (rn->client->lock_renewer == rn)
    rn->client->lock_renewer = NULL;
  uv_close((uv_handle_t *)&rn->timer, renewer_on_closed);
}

void fleet__lock_renewer_unref(fleet__lock_renewer_t *rn) {
  rn->users--;
  renewer_maybe_free(rn);
}

void fleet__lock_renewer_stats(fleet_client_t *client, uint64_t *batches,
                               uint64_t *leases) {
  fleet__lock_renewer_t *rn = client->internal_->lock_renewer;

  *batches = rn != NULL ? rn->batches : 0;
  *leases = rn != NULL ? rn->leases : 0;
}

/* ------------------------------------------------------------------------ */
/* The schedule                                                             */

/* Arms the timer for `at` (loop ms), or stops it for 0. A time already
 * past waits 1 ms, so that the timer never runs again in the same pass
 * of the loop's timers (a lease skipped because its validity ran out
 * leaves the list when its own deadline timer runs). */
static void renewer_arm_at(fleet__lock_renewer_t *rn, uint64_t at) {
  uint64_t now = uv_now(rn->client->loop);

  if (rn->closing)
    return;
  rn->due = at;
  if (at == 0) {
    uv_timer_stop(&rn->timer);
    return;
  }
  uv_timer_start(&rn->timer, renewer_on_timer, at > now ? at - now : 1, 0);
}

/* Arms the timer for the earliest lease due that has no renewal in flight.
 * O(leases): it runs once per tick and per batch reply, not per lease. */
static void renewer_arm(fleet__lock_renewer_t *rn) {
  fleet__lock_t *lk;
  uint64_t at = 0;

  for (lk = rn->head; lk != NULL; lk = lk->rn_next)
    if (lk->rn_batch == NULL && (at == 0 || lk->renew_at < at))
      at = lk->renew_at;
  renewer_arm_at(rn, at);
}

void fleet__lock_renewer_add(fleet__lock_renewer_t *rn, fleet__lock_t *lk) {
  if (!lk->rn_linked) {
    lk->rn_prev = NULL;
    lk->rn_next = rn->head;
    if (rn->head != NULL)
      rn->head->rn_prev = lk;
    rn->head = lk;
    lk->rn_linked = 1;
  }
  /* The timer stays armed for an earlier lease; a later one is found when
   * it fires. */
  if (rn->due == 0 || lk->renew_at < rn->due)
    renewer_arm_at(rn, lk->renew_at);
}

void fleet__lock_renewer_remove(fleet__lock_renewer_t *rn, fleet__lock_t *lk) {
  if (lk->rn_batch != NULL) {
    lk->rn_batch->locks[lk->rn_slot] = NULL;
    lk->rn_batch = NULL;
  }
  if (!lk->rn_linked)
    return;
  if (lk->rn_prev != NULL)
    lk->rn_prev->rn_next = lk->rn_next;
  else
    rn->head = lk->rn_next;
  if (lk->rn_next != NULL)
    lk->rn_next->rn_prev = lk->rn_prev;
  lk->rn_prev = lk->rn_next = NULL;
  lk->rn_linked = 0;
  /* A timer left armed for this lease finds nothing due and re-arms. */
}

/* ------------------------------------------------------------------------ */
/* Batches                                                                  */

static fleet__lock_batch_t *renewer_batch_get(fleet__lock_renewer_t *rn) {
  fleet__lock_batch_t *b = rn->pool;

  if (b != NULL)
    rn->pool = b->next;
  else if ((b = malloc(sizeof(*b))) == NULL)
    return NULL;
  b->rn = rn;
  b->n = 0;
  return b;
}

static void renewer_batch_put(fleet__lock_renewer_t *rn,
                              fleet__lock_batch_t *b) {
  b->next = rn->pool;
  rn->pool = b;
}

/* The reply to one batch: each lease still in it hears its result, which
 * may run user callbacks (a lost lease); those may release or close other
 * leases of the same batch, which then read as NULL here. A reply that is
 * not one integer in -1..1 per lease fails the batch with FLEET_EPROTO. */
static void renewer_on_reply(void *arg, int status,
                             const fleet__reply_t *reply) {
  fleet__lock_batch_t *b = arg;
  fleet__lock_renewer_t *rn = b->rn;
  size_t i;

  if (status == 0 &&
      (reply->type != FLEET__REPLY_ARRAY || reply->nelem != b->n))
    status = FLEET_EPROTO;
  for (i = 0; status == 0 && i < b->n; i++) {
    const fleet__reply_t *e = &reply->elem[i];
    if (e->type != FLEET__REPLY_INT || e->integer < -1 || e->integer > 1)
      status = FLEET_EPROTO;
  }
  for (i = 0; i < b->n; i++) {
    fleet__lock_t *lk = b->locks[i];
    if (lk == NULL)
      continue;
    b->locks[i] = NULL;
    lk->rn_batch = NULL;
    fleet__lock_on_renewed(
        lk, status, status == 0 ? (int)reply->elem[i].integer : 0, b->sent);
  }
  renewer_batch_put(rn, b);
  rn->inflight--;
  if (rn->users == 0)
    renewer_maybe_free(rn);
  else
    renewer_arm(rn);
}

/* Sends one call for the leases of `b`. On a synchronous error the leases
 * hear it as a failed batch (they are retried soon). */
static void renewer_send(fleet__lock_renewer_t *rn, fleet__lock_batch_t *b) {
  fleet__backend_t *be = rn->client->be;
  size_t i;
  int err;

  for (i = 0; i < b->n; i++) {
    fleet__lock_t *lk = b->locks[i];
    rn->keys[i] = fleet__key_bytes(&lk->key);
    rn->args[2 * i].base = lk->value;
    rn->args[2 * i].len = lk->value_len;
    rn->args[2 * i + 1].base = lk->ttl_str;
    rn->args[2 * i + 1].len = lk->ttl_len;
  }
  err = rn->client->closing
            ? FLEET_ECLOSING
            : fleet__backend_call(be, FLEET__OP_LOCK_RENEW, rn->keys, b->n,
                                  rn->args, 2 * b->n, renewer_on_reply, b);
  if (err == 0) {
    rn->inflight++;
    rn->batches++;
    rn->leases += b->n;
    return;
  }
  for (i = 0; i < b->n; i++) {
    fleet__lock_t *lk = b->locks[i];
    lk->rn_batch = NULL;
    /* Runs no user callback: a failed batch only reschedules. */
    fleet__lock_on_renewed(lk, err, 0, b->sent);
  }
  renewer_batch_put(rn, b);
}

/* The tick: renews every lease due (or due within a quarter of its
 * interval), skipping those whose local validity has run out already (their
 * own timer reports them lost), then re-arms. */
static void renewer_on_timer(uv_timer_t *timer) {
  fleet__lock_renewer_t *rn =
      FLEET__CONTAINER_OF(timer, fleet__lock_renewer_t, timer);
  uint64_t now = uv_now(timer->loop);
  fleet__lock_batch_t *b = NULL;
  fleet__lock_t *lk;

  rn->due = 0;
  for (lk = rn->head; lk != NULL; lk = lk->rn_next) {
    if (lk->rn_batch != NULL || lk->renew_at > now + lk->interval_ms / 4 ||
        now >= lk->deadline)
      continue;
    if (b == NULL && (b = renewer_batch_get(rn)) == NULL) {
      /* Out of memory: try the rest again a little later. */
      renewer_arm_at(rn, now + 10);
      return;
    }
    b->sent = now;
    lk->rn_batch = b;
    lk->rn_slot = b->n;
    b->locks[b->n++] = lk;
    if (b->n == RENEW_BATCH_MAX) {
      renewer_send(rn, b);
      b = NULL;
    }
  }
  if (b != NULL)
    renewer_send(rn, b);
  renewer_arm(rn);
}
