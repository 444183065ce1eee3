/* leader.c -- leader election: a candidate campaigns by waiting for a lease
 * (a lock handle with an unbounded wait), leads while it holds it, and
 * campaigns again when it loses it.
 *
 * The lock handle does the work: waiting wakes on releases and when the
 * leader's TTL runs out, renewal and loss detection are the lock's. The
 * candidate keeps its lock handle from init to resign; resigning closes it
 * (which gives the lease up, or cancels the wait), and campaigning again
 * makes a new one. */
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "leader_int.h"

/* The states of a candidate. */
#define LEADER_STATE_MAP(XX)                                                   \
  XX(IDLE, "idle")                                                             \
  XX(CAMPAIGNING, "campaigning")                                               \
  XX(LEADER, "leader")                                                         \
  XX(RESIGNING, "resigning")                                                   \
  XX(CLOSING, "closing")

typedef enum {
#define XX(name, str) LEADER_##name,
  LEADER_STATE_MAP(XX)
#undef XX
} leader_state_t;

static const char *const leader_state_names[] = {
#define XX(name, str) str,
    LEADER_STATE_MAP(XX)
#undef XX
};

typedef struct fleet__leader_s {
  fleet_leader_t *pub;
  fleet_client_t *client;
  leader_state_t state;
  fleet_leader_callbacks_t cbs;
  char *name;
  char *owner;
  uint32_t ttl_ms;
  uint32_t retry_ms;
  fleet_lock_options_t lock_options;
  fleet_lock_t lock;
  int lock_open;    /* `lock` is initialized and not closing */
  int lock_closing; /* its close callback is due */
  uint64_t token;
  int was_leader; /* RESIGNING: it led when resign was called */
  fleet_leader_done_cb resign_cb;
  void *resign_data;
  uv_timer_t timer; /* CAMPAIGNING: the retry after a failed attempt */
  int timer_closed;
  fleet_leader_close_cb close_cb;
} leader_t;

const char *fleet__leader_state_name(const fleet_leader_t *leader) {
  const leader_t *ld = leader != NULL ? leader->internal_ : NULL;

  if (ld == NULL)
    return "closed";
  return (size_t)ld->state < FLEET__ARRAY_SIZE(leader_state_names)
             ? leader_state_names[ld->state]
             : "unknown";
}

static void leader_on_acquired(fleet_lock_t *lock, int status, uint64_t token,
                               void *user_data);
static void leader_on_lost(fleet_lock_t *lock, int status, uint64_t token);
static void leader_on_timer(uv_timer_t *timer);

/* The one place a candidate changes state. Leaving CAMPAIGNING stops the
 * retry timer. */
static void leader_set_state(leader_t *ld, leader_state_t state) {
  if (ld->state == LEADER_CAMPAIGNING && state != LEADER_CAMPAIGNING &&
      !ld->timer_closed)
    uv_timer_stop(&ld->timer);
  ld->state = state;
}

/* Makes the lock handle if there is none. Returns 0 or its init error. */
static int leader_open_lock(leader_t *ld) {
  int err;

  if (ld->lock_open)
    return 0;
  err = fleet_lock_init(ld->client, &ld->lock, ld->name, ld->owner, ld->ttl_ms,
                        &ld->lock_options);
  if (err == 0) {
    ld->lock.data = ld;
    ld->lock_open = 1;
  }
  return err;
}

/* One campaign attempt: wait for the lease without a deadline. On an
 * immediate failure, the error callback hears it and the retry timer tries
 * again. */
static void leader_try(leader_t *ld) {
  int err = fleet_lock_acquire(&ld->lock, FLEET_LOCK_WAIT_FOREVER,
                               leader_on_acquired, NULL);
  if (err == 0)
    return;
  uv_timer_start(&ld->timer, leader_on_timer, ld->retry_ms, 0);
  if (ld->cbs.error != NULL)
    ld->cbs.error(ld->pub, err);
}

static void leader_on_timer(uv_timer_t *timer) {
  leader_t *ld = FLEET__CONTAINER_OF(timer, leader_t, timer);

  if (ld->state == LEADER_CAMPAIGNING)
    leader_try(ld);
}

static void leader_on_acquired(fleet_lock_t *lock, int status, uint64_t token,
                               void *user_data) {
  leader_t *ld = lock->data;

  if (ld->state != LEADER_CAMPAIGNING || status == FLEET_ECANCELED)
    return;
  if (status == 0) {
    ld->token = token;
    leader_set_state(ld, LEADER_LEADER);
    ld->cbs.elected(ld->pub, token);
    return;
  }
  uv_timer_start(&ld->timer, leader_on_timer, ld->retry_ms, 0);
  if (ld->cbs.error != NULL)
    ld->cbs.error(ld->pub, status);
}

/* The lease was lost: demoted, then campaign again unless the callback
 * resigned or closed. */
static void leader_on_lost(fleet_lock_t *lock, int status, uint64_t token) {
  leader_t *ld = lock->data;

  if (ld->state != LEADER_LEADER)
    return;
  leader_set_state(ld, LEADER_CAMPAIGNING);
  ld->cbs.demoted(ld->pub, status);
  if (ld->state == LEADER_CAMPAIGNING)
    leader_try(ld);
}

/* ------------------------------------------------------------------------ */
/* Init, campaign, resign                                                   */

static void leader_free(leader_t *ld) {
  free(ld->name);
  free(ld->owner);
  free(ld);
}

int fleet_leader_init(fleet_client_t *client, fleet_leader_t *leader,
                      const char *name, const char *owner, uint32_t ttl_ms,
                      const fleet_leader_callbacks_t *callbacks,
                      const fleet_lock_options_t *options) {
  leader_t *ld;
  int err;

  if (leader == NULL)
    return FLEET_EINVAL;
  leader->internal_ = NULL;
  if (client == NULL || client->internal_ == NULL || name == NULL ||
      owner == NULL || callbacks == NULL || callbacks->elected == NULL ||
      callbacks->demoted == NULL)
    return FLEET_EINVAL;
  if (options != NULL && (options->manual_renew || options->lost_cb != NULL))
    return FLEET_EINVAL;
  ld = calloc(1, sizeof(*ld));
  if (ld == NULL)
    return FLEET_ENOMEM;
  ld->pub = leader;
  ld->client = client;
  ld->cbs = *callbacks;
  ld->ttl_ms = ttl_ms;
  if (options != NULL)
    ld->lock_options = *options;
  ld->lock_options.lost_cb = leader_on_lost;
  ld->retry_ms =
      ld->lock_options.retry_max_ms != 0 ? ld->lock_options.retry_max_ms : 1000;
  ld->state = LEADER_IDLE;
  ld->name = fleet__strdup(name);
  ld->owner = fleet__strdup(owner);
  if (ld->name == NULL || ld->owner == NULL) {
    leader_free(ld);
    return FLEET_ENOMEM;
  }
  /* The lock handle checks the name, the owner and the timing. */
  err = leader_open_lock(ld);
  if (err != 0) {
    leader_free(ld);
    return err;
  }
  uv_timer_init(fleet_client_loop(client), &ld->timer);
  leader->internal_ = ld;
  return 0;
}

int fleet_leader_campaign(fleet_leader_t *leader) {
  leader_t *ld;
  int err;

  if (leader == NULL || leader->internal_ == NULL)
    return FLEET_EINVAL;
  ld = leader->internal_;
  if (ld->state == LEADER_CLOSING || !fleet__client_usable(ld->client))
    return FLEET_ECLOSING;
  if (ld->state != LEADER_IDLE)
    return FLEET_EALREADY;
  err = leader_open_lock(ld);
  if (err == 0)
    err = fleet_lock_acquire(&ld->lock, FLEET_LOCK_WAIT_FOREVER,
                             leader_on_acquired, NULL);
  if (err == 0)
    leader_set_state(ld, LEADER_CAMPAIGNING);
  return err;
}

/* Frees the candidate once its lock handle and its timer have closed. */
static void leader_maybe_finish(leader_t *ld) {
  fleet_leader_t *pub = ld->pub;
  fleet_leader_close_cb cb = ld->close_cb;

  if (ld->state != LEADER_CLOSING || !ld->timer_closed || ld->lock_closing)
    return;
  pub->internal_ = NULL;
  leader_free(ld);
  if (cb != NULL)
    cb(pub);
}

/* The lock handle closed: the end of a resign (demoted if it led, then
 * the resign callback), or a step of closing. */
static void leader_on_lock_closed(fleet_lock_t *lock) {
  leader_t *ld = lock->data;
  fleet_leader_done_cb cb;

  ld->lock_closing = 0;
  if (ld->state != LEADER_RESIGNING) {
    leader_maybe_finish(ld);
    return;
  }
  leader_set_state(ld, LEADER_IDLE);
  cb = ld->resign_cb;
  ld->resign_cb = NULL;
  if (ld->was_leader)
    ld->cbs.demoted(ld->pub, 0);
  /* The demoted callback may have closed the handle: then closing
   * completes the resign with FLEET_ECANCELED. */
  if (ld->state != LEADER_CLOSING)
    cb(ld->pub, 0, ld->resign_data);
  else
    ld->resign_cb = cb;
}

/* Closes the lock handle if it is open. */
static void leader_close_lock(leader_t *ld) {
  if (!ld->lock_open)
    return;
  ld->lock_open = 0;
  ld->lock_closing = 1;
  fleet_lock_close(&ld->lock, leader_on_lock_closed);
}

int fleet_leader_resign(fleet_leader_t *leader, fleet_leader_done_cb cb,
                        void *user_data) {
  leader_t *ld;

  if (leader == NULL || leader->internal_ == NULL || cb == NULL)
    return FLEET_EINVAL;
  ld = leader->internal_;
  if (ld->state == LEADER_CLOSING)
    return FLEET_ECLOSING;
  if (ld->state != LEADER_CAMPAIGNING && ld->state != LEADER_LEADER)
    return FLEET_EALREADY;
  ld->was_leader = ld->state == LEADER_LEADER;
  ld->resign_cb = cb;
  ld->resign_data = user_data;
  leader_set_state(ld, LEADER_RESIGNING);
  leader_close_lock(ld);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Queries and close                                                        */

int fleet_leader_is_leader(const fleet_leader_t *leader) {
  const leader_t *ld = leader != NULL ? leader->internal_ : NULL;

  return ld != NULL && ld->state == LEADER_LEADER && fleet_lock_held(&ld->lock);
}

uint64_t fleet_leader_token(const fleet_leader_t *leader) {
  const leader_t *ld = leader != NULL ? leader->internal_ : NULL;
  return ld != NULL ? ld->token : 0;
}

int fleet_leader_query(fleet_leader_t *leader, fleet_lock_query_cb cb,
                       void *user_data) {
  leader_t *ld;

  if (leader == NULL || leader->internal_ == NULL)
    return FLEET_EINVAL;
  ld = leader->internal_;
  if (ld->state == LEADER_CLOSING)
    return FLEET_ECLOSING;
  return fleet_lock_query(ld->client, ld->name, cb, user_data);
}

/* Completes a pending resign with FLEET_ECANCELED, after
 * fleet_leader_close() returned. */
static void leader_on_timer_closed(uv_handle_t *handle) {
  leader_t *ld = FLEET__CONTAINER_OF((uv_timer_t *)handle, leader_t, timer);
  fleet_leader_done_cb cb = ld->resign_cb;

  ld->timer_closed = 1;
  ld->resign_cb = NULL;
  if (cb != NULL)
    cb(ld->pub, FLEET_ECANCELED, ld->resign_data);
  leader_maybe_finish(ld);
}

int fleet_leader_close(fleet_leader_t *leader, fleet_leader_close_cb close_cb) {
  leader_t *ld;

  if (leader == NULL || leader->internal_ == NULL)
    return FLEET_EINVAL;
  ld = leader->internal_;
  if (ld->state == LEADER_CLOSING)
    return FLEET_ECLOSING;
  ld->close_cb = close_cb;
  leader_set_state(ld, LEADER_CLOSING);
  leader_close_lock(ld);
  uv_close((uv_handle_t *)&ld->timer, leader_on_timer_closed);
  return 0;
}
