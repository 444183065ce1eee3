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

#include "core/client.h"
#include "core/handle.h"
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

static const char *const leader_state_names[] = FLEET__NAMES(LEADER_STATE_MAP);

typedef struct fleet__leader_s {
  fleet__handle_t base;
  fleet_leader_t *pub;
  leader_state_t state;
  fleet_leader_elected_cb elected_cb;
  fleet_leader_demoted_cb demoted_cb;
  char *name;
  char *owner;
  uint32_t ttl_ms;
  uint32_t retry_ms;
  fleet_lock_options_t lock_options;
  fleet_lock_t lock;
  int lock_open; /* `lock` is initialized and not closing */
  uint64_t token;
  int was_leader;       /* RESIGNING: it led when resign was called */
  fleet__req_t *resign; /* the resign in progress */
  uv_timer_t timer;     /* CAMPAIGNING: the retry after a failed attempt */
} leader_t;

static leader_t *leader_of(const fleet_leader_t *leader) {
  return (leader_t *)fleet__handle_of(leader, FLEET_HANDLE_LEADER);
}

const char *fleet__leader_state_name(const fleet_leader_t *leader) {
  const leader_t *ld = leader_of(leader);

  return ld != NULL ? FLEET__NAME_AT(leader_state_names, ld->state) : "closed";
}

static void leader_on_acquired(fleet_lock_t *lock, int status, uint64_t token,
                               void *user_data);
static void leader_on_lost(fleet_lock_t *lock, int status, uint64_t token);
static void leader_on_timer(uv_timer_t *timer);

/* The one place a candidate changes state. Leaving CAMPAIGNING stops the
 * retry timer. */
static void leader_set_state(leader_t *ld, leader_state_t state) {
  if (ld->state == LEADER_CAMPAIGNING && state != LEADER_CAMPAIGNING &&
      !uv_is_closing((uv_handle_t *)&ld->timer))
    uv_timer_stop(&ld->timer);
  ld->state = state;
}

/* Makes the lock handle if there is none. Returns 0 or its init error. */
static int leader_open_lock(leader_t *ld) {
  int err;

  if (ld->lock_open)
    return 0;
  err = fleet_lock_init(ld->base.client->pub, &ld->lock, ld->name, ld->owner,
                        ld->ttl_ms, &ld->lock_options);
  if (err == 0) {
    /* The candidate's own: closed with it, never shown by a walk. */
    fleet__handle_adopt(&ld->base, ld->lock.internal_);
    ld->lock.internal_->metrics = &ld->base.mblock; /* counts as the leader */
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
  fleet__handle_error(&ld->base, err);
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
    ld->elected_cb(ld->pub, token);
    return;
  }
  uv_timer_start(&ld->timer, leader_on_timer, ld->retry_ms, 0);
  fleet__handle_error(&ld->base, status);
}

/* The lock's background failures are the candidate's. */
static void leader_on_lock_error(fleet_handle_t *lock, int status,
                                 const char *detail) {
  leader_t *ld = ((fleet_lock_t *)lock)->data;

  fleet__handle_error(&ld->base, status);
}

/* The lease was lost: demoted, then campaign again unless the callback
 * resigned or closed. */
static void leader_on_lost(fleet_lock_t *lock, int status, uint64_t token) {
  leader_t *ld = lock->data;

  if (ld->state != LEADER_LEADER)
    return;
  leader_set_state(ld, LEADER_CAMPAIGNING);
  ld->demoted_cb(ld->pub, status);
  if (ld->state == LEADER_CAMPAIGNING)
    leader_try(ld);
}

/* ------------------------------------------------------------------------ */
/* Init, campaign, resign                                                   */

static void leader_free(fleet__handle_t *h) {
  leader_t *ld = (leader_t *)h;

  free(ld->name);
  free(ld->owner);
  free(ld);
}

static void leader_on_lock_closed(fleet_handle_t *lock);

/* Closes the lock handle if it is open; the candidate, its parent, stays
 * open until it has closed (fleet__handle_adopt()). */
static void leader_close_lock(leader_t *ld) {
  if (!ld->lock_open)
    return;
  ld->lock_open = 0;
  fleet_lock_close(&ld->lock, leader_on_lock_closed);
}

/* The close, at once: stop campaigning, give up a lease held (without
 * `demoted_cb`). A pending resign is cancelled by the base. */
static void leader_close(fleet__handle_t *h) {
  leader_t *ld = (leader_t *)h;

  leader_set_state(ld, LEADER_CLOSING);
  ld->resign = NULL; /* the base cancels it */
  leader_close_lock(ld);
  fleet__handle_uv_close(h, (uv_handle_t *)&ld->timer);
}

void fleet_leader_options_init(fleet_leader_options_t *options) {
  memset(options, 0, sizeof(*options));
}

static const fleet__handle_vt_t leader_vt = {
    FLEET_HANDLE_LEADER, sizeof(fleet__req_t), leader_close, NULL, leader_free};

/* A resign: the user waits until the lock handle has closed, which gives
 * the lease back (LOCK_RELEASE) or ends the wait; it sends no call of its
 * own. */
static const fleet__call_t leader_resign_call = {
    "leader.resign", FLEET__OP_LOCK_RELEASE, NULL, fleet__call_fail_status};

/* The bit of `state` in a set of states. */
#define LEADER_IN(state) (1u << LEADER_##state)

/* The entry of a public call on `leader`, which it takes in the states
 * `states` (LEADER_IN bits): `ok` 0 refuses it with FLEET_EINVAL (a
 * callback missing), another state with FLEET_EALREADY. */
static leader_t *leader_enter(fleet_leader_t *leader, int ok, unsigned states,
                              int *err) {
  leader_t *ld =
      (leader_t *)fleet__call_enter(leader, FLEET_HANDLE_LEADER, ok, err);

  if (ld != NULL && (states & (1u << ld->state)) == 0) {
    *err = FLEET_EALREADY;
    return NULL;
  }
  return ld;
}

int fleet_leader_init(fleet_client_t *client, fleet_leader_t *leader,
                      const char *name, const char *owner, uint32_t ttl_ms,
                      const fleet_leader_options_t *options) {
  leader_t *ld;
  int err;

  if ((err = fleet__handle_init_begin(leader, client)) != 0)
    return err;
  if (options == NULL || options->elected_cb == NULL ||
      options->demoted_cb == NULL)
    return FLEET_EINVAL;
  ld = calloc(1, sizeof(*ld));
  if (ld == NULL)
    return FLEET_ENOMEM;
  ld->elected_cb = options->elected_cb;
  ld->demoted_cb = options->demoted_cb;
  ld->ttl_ms = ttl_ms;
  ld->lock_options.renew_interval_ms = options->renew_interval_ms;
  ld->lock_options.safety_margin_ms = options->safety_margin_ms;
  ld->lock_options.retry_max_ms = options->retry_max_ms;
  ld->lock_options.lost_cb = leader_on_lost;
  ld->lock_options.error_cb = leader_on_lock_error;
  ld->retry_ms =
      ld->lock_options.retry_max_ms != 0 ? ld->lock_options.retry_max_ms : 1000;
  ld->state = LEADER_IDLE;
  ld->name = fleet__strdup(name);
  ld->owner = fleet__strdup(owner);
  if ((name != NULL && ld->name == NULL) ||
      (owner != NULL && ld->owner == NULL)) {
    leader_free(&ld->base);
    return FLEET_ENOMEM;
  }
  err = fleet__handle_init(&ld->base, &leader_vt, client,
                           (fleet_handle_t *)leader);
  if (err != 0) {
    leader_free(&ld->base);
    return err;
  }
  ld->pub = leader;
  ld->base.error_cb = options->error_cb;
  ld->base.mblock.name = ld->name; /* metrics */
  ld->base.mblock.name_len = ld->name != NULL ? strlen(ld->name) : 0;
  /* The lock handle checks the name, the owner and the timing. */
  err = leader_open_lock(ld);
  if (err != 0) {
    fleet__handle_abort(&ld->base);
    leader_free(&ld->base);
    return err;
  }
  fleet__handle_timer_init(&ld->base, &ld->timer);
  return 0;
}

int fleet_leader_campaign(fleet_leader_t *leader) {
  leader_t *ld;
  int err;

  if ((ld = leader_enter(leader, 1, LEADER_IN(IDLE), &err)) == NULL)
    return err;
  err = leader_open_lock(ld);
  if (err == 0)
    err = fleet_lock_acquire(&ld->lock, FLEET_LOCK_WAIT_FOREVER,
                             leader_on_acquired, NULL);
  if (err == 0)
    leader_set_state(ld, LEADER_CAMPAIGNING);
  return err;
}

/* The lock handle closed: the end of a resign (demoted if it led, then
 * the resign callback), or a step of closing. */
static void leader_on_lock_closed(fleet_handle_t *lock) {
  leader_t *ld = lock->data;
  fleet__req_t *req = ld->resign;

  if (ld->state == LEADER_RESIGNING) {
    leader_set_state(ld, LEADER_IDLE);
    ld->resign = NULL;
    if (ld->was_leader)
      ld->demoted_cb(ld->pub, 0);
    /* The demoted callback may have closed the handle: then the close
     * completes the resign with FLEET_ECANCELED. */
    if (ld->state != LEADER_CLOSING)
      fleet__call_finish(req, 0);
  }
}

int fleet_leader_resign(fleet_leader_t *leader, fleet_status_cb cb,
                        void *user_data) {
  unsigned states = LEADER_IN(CAMPAIGNING) | LEADER_IN(LEADER);
  leader_t *ld;
  int err;

  if ((ld = leader_enter(leader, cb != NULL, states, &err)) == NULL)
    return err;
  ld->resign = fleet__call_new(&ld->base, &leader_resign_call, (fleet__fn_t)cb,
                               user_data);
  if (ld->resign == NULL)
    return FLEET_ENOMEM;
  ld->was_leader = ld->state == LEADER_LEADER;
  leader_set_state(ld, LEADER_RESIGNING);
  leader_close_lock(ld);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Queries and close                                                        */

int fleet_leader_is_leader(const fleet_leader_t *leader) {
  const leader_t *ld = leader_of(leader);

  return ld != NULL && ld->state == LEADER_LEADER && fleet_lock_held(&ld->lock);
}

uint64_t fleet_leader_token(const fleet_leader_t *leader) {
  const leader_t *ld = leader_of(leader);
  return ld != NULL ? ld->token : 0;
}

int fleet_leader_query(fleet_leader_t *leader, fleet_lock_query_cb cb,
                       void *user_data) {
  leader_t *ld;
  int err;

  /* Any state; fleet_lock_query() checks the callback. */
  if ((ld = leader_enter(leader, 1, ~0u, &err)) == NULL)
    return err;
  return fleet_lock_query(ld->base.client->pub, ld->name, cb, user_data);
}

int fleet_leader_close(fleet_leader_t *leader, fleet_close_cb close_cb) {
  return fleet__handle_close_of(leader, FLEET_HANDLE_LEADER, close_cb);
}
