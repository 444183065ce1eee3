/* lock_int.h -- the lock handle's internals, shared by the lock state
 * machine (lock.c) and the per-client renewal batcher (lock_renew.c). */
#ifndef FLEET_SRC_LOCK_INT_H
#define FLEET_SRC_LOCK_INT_H

#include "client.h"
#include "keys.h"

/* The states of a lock handle:
 *   IDLE       no lease (never acquired, released, or an acquire failed);
 *   ACQUIRING  an acquire attempt is in flight;
 *   WAITING    the lease is busy; waiting for a release, the holder's TTL
 *              or the retry timer, then ACQUIRING again;
 *   HELD       the lease is held and valid until `deadline`;
 *   RELEASING  a release (compare-and-delete) is in flight;
 *   LOST       the lease was lost (or its release failed): the token is
 *              kept so that release can still be tried;
 *   CLOSING    fleet_lock_close() was called. */
#define FLEET__LOCK_STATE_MAP(XX)                                              \
  XX(IDLE, "idle")                                                             \
  XX(ACQUIRING, "acquiring")                                                   \
  XX(WAITING, "waiting")                                                       \
  XX(HELD, "held")                                                             \
  XX(RELEASING, "releasing")                                                   \
  XX(LOST, "lost")                                                             \
  XX(CLOSING, "closing")

typedef enum {
#define FLEET__LOCK_STATE_ENUM(name, str) FLEET__LOCK_##name,
  FLEET__LOCK_STATE_MAP(FLEET__LOCK_STATE_ENUM)
#undef FLEET__LOCK_STATE_ENUM
} fleet__lock_state_t;

/* The name of a state ("held"); never NULL. */
const char *fleet__lock_state_name(fleet__lock_state_t state);

typedef struct fleet__lock_renewer_s fleet__lock_renewer_t;
typedef struct fleet__lock_batch_s fleet__lock_batch_t;

/* The longest "<token>:<owner>" lease value, NUL included. */
#define FLEET__LOCK_VALUE_MAX (20 + 1 + FLEET_LOCK_OWNER_MAX + 1)

struct fleet__lock_s {
  fleet_lock_t *pub;
  fleet_client_t *client;
  uv_loop_t *loop;
  fleet__lock_renewer_t *renewer; /* NULL once closing */
  fleet__lock_state_t state;

  /* Keys and fixed arguments, built once at init. */
  fleet__key_t key;     /* "{prefix:name}:lock" */
  fleet__key_t fence;   /* "{prefix:name}:fence" */
  fleet__key_t channel; /* "{prefix:name}:released" */
  char *owner;
  size_t owner_len;
  char ttl_str[16];
  size_t ttl_len;

  /* Options. */
  uint32_t ttl_ms;
  uint32_t interval_ms;
  uint32_t margin_ms;
  uint32_t retry_max_ms;
  int manual_renew;
  fleet_lock_lost_cb lost_cb;

  /* The current or last lease. */
  uint64_t token;
  char value[FLEET__LOCK_VALUE_MAX]; /* "<token>:<owner>" */
  size_t value_len;
  uint64_t deadline; /* loop ms at which a HELD lease counts as lost */

  /* The acquire in progress. */
  fleet_lock_acquire_cb acquire_cb;
  void *acquire_data;
  uint64_t attempt_sent; /* loop ms the last attempt was issued */
  uint64_t wait_until;   /* loop ms; UINT64_MAX: forever */
  int waiting;           /* wait_ms was not 0 */
  int kick;              /* a wake-up came while an attempt was in flight */
  int expired;           /* wait_until passed while an attempt was out */
  int mark_sent;         /* the attempt in flight marks the lease */
  uint32_t failures;     /* transient errors in a row while waiting */
  fleet__sub_t *sub;     /* the released channel, while waiting */
  fleet__rng_t rng;

  /* Release and manual renew. */
  fleet_lock_done_cb release_cb;
  void *release_data;
  fleet_lock_done_cb renew_cb;
  void *renew_data;
  uint64_t renew_sent;
  uint64_t renew_token;

  /* The renewer's list of leases to renew, and the batch in flight. */
  struct fleet__lock_s *rn_prev;
  struct fleet__lock_s *rn_next;
  int rn_linked;
  uint64_t renew_at; /* loop ms the next renewal is due */
  fleet__lock_batch_t *rn_batch;
  size_t rn_slot;

  /* Lifecycle. */
  uv_timer_t timer; /* HELD: the deadline; WAITING: retry or wait end */
  unsigned ops;     /* backend ops in flight */
  int timer_closed;
  fleet_lock_close_cb close_cb;
};

typedef struct fleet__lock_s fleet__lock_t;

/* Checks a name or an owner id: 1 to `max` bytes before the NUL. Returns 0
 * (and the length in `*len`), FLEET_EINVAL (NULL or empty) or
 * FLEET_E2BIG. */
int fleet__lock_check_str(const char *s, size_t max, size_t *len);

/* The renewer of `client`, made on first use, with one more user (a lock
 * handle). Returns 0 or FLEET_ENOMEM. */
int fleet__lock_renewer_ref(fleet_client_t *client,
                            fleet__lock_renewer_t **out);

/* Drops a user; the renewer frees itself once it has no users and no
 * batch in flight. */
void fleet__lock_renewer_unref(fleet__lock_renewer_t *rn);

/* Schedules the HELD lease `lk` for renewal at lk->renew_at. */
void fleet__lock_renewer_add(fleet__lock_renewer_t *rn, fleet__lock_t *lk);

/* Stops renewing `lk`; a batch in flight forgets it. */
void fleet__lock_renewer_remove(fleet__lock_renewer_t *rn, fleet__lock_t *lk);

/* What the renewer reports for one lease of a batch sent at `sent` (loop
 * ms): `status` 0 and `result` as the script returns it (1 renewed, 0
 * refused: stale token, -1 the key holds another type), or `status` < 0
 * when the batch failed (the lease is retried soon). Implemented in
 * lock.c; may run user callbacks. */
void fleet__lock_on_renewed(fleet__lock_t *lk, int status, int result,
                            uint64_t sent);

/* Statistics of the renewer of `client`, for tests: batches sent and leases
 * renewed through them, since the renewer was made. Both 0 when the
 * client has no renewer. */
void fleet__lock_renewer_stats(fleet_client_t *client, uint64_t *batches,
                               uint64_t *leases);

#endif /* FLEET_SRC_LOCK_INT_H */
