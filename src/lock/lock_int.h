/* lock_int.h -- the lock handle's internals, shared by the lock state
 * machine (lock.c) and the queries by name (lock_query.c). */
#ifndef FLEET_SRC_LOCK_INT_H
#define FLEET_SRC_LOCK_INT_H

#include "core/batcher.h"
#include "core/client.h"
#include "core/handle.h"
#include "core/keys.h"

/* The states of a lock handle:
 *   IDLE       no lease (never acquired, released, or an acquire failed);
 *   ACQUIRING  an acquire attempt is queued on the client's batcher or in
 *              flight;
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

/* The longest "<token>:<owner>" lease value, NUL included. */
#define FLEET__LOCK_VALUE_MAX (20 + 1 + FLEET_LOCK_OWNER_MAX + 1)

/* A call of a lock handle that the user waits on: an acquire (which lives
 * until it is granted or fails, over any number of attempts), a release,
 * or a manual renew (lock.c describes each). */
typedef struct {
  fleet__req_t base;
  uint64_t sent;  /* renew: loop ms the call was issued */
  uint64_t token; /* renew: the lease it was sent for */
} fleet__lock_req_t;

/* A release on its way through the client's batcher (lock.c): the user's
 * (fleet_lock_release()) or a quiet one that nobody waits for. It keeps
 * the value it releases, since the handle's may change before the call
 * goes out. Pooled per handle: taken when queued, given back when its
 * result is in. */
typedef struct fleet__lock_release_s {
  fleet__batch_item_t item;
  struct fleet__lock_release_s *next_free;
  struct fleet__lock_s *lk;
  int user; /* the user waits for it as lk->release */
  size_t value_len;
  char value[FLEET__LOCK_VALUE_MAX];
} fleet__lock_release_t;

struct fleet__lock_s {
  fleet__handle_t base;
  fleet_lock_t *pub;
  uv_loop_t *loop;
  fleet__lock_state_t state;

  /* The hash tag its ops get, the channel it waits on and fixed
   * arguments, built once at init. */
  fleet__key_t tag;     /* "{prefix:name}" */
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

  /* The acquire in progress: the request the user waits on (never sent
   * itself: each attempt is an item of the client's batcher). */
  fleet__lock_req_t *acquire;
  fleet__batch_item_t attempt;
  uint64_t attempt_sent; /* loop ms the call of the last attempt went out */
  uint64_t wait_until;   /* loop ms; UINT64_MAX: forever */
  int waiting;           /* wait_ms was not 0 */
  int kick;              /* a wake-up came while an attempt was out */
  int expired;           /* wait_until passed while an attempt was out */
  uint32_t failures;     /* transient errors in a row while waiting */
  fleet__sub_t *sub;     /* the released channel, while waiting */
  fleet__rng_t rng;

  /* The user's release and manual renew in progress. */
  fleet__lock_req_t *release;
  fleet__lock_req_t *renew;

  /* Automatic renewal, through the client's batcher. */
  fleet__batch_item_t renewal;

  uv_timer_t timer; /* HELD: the deadline; WAITING: retry or wait end */
  /* Release items to reuse. */
  struct fleet__lock_release_s *free_rels;
};

typedef struct fleet__lock_s fleet__lock_t;

#endif /* FLEET_SRC_LOCK_INT_H */
