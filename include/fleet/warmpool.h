/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/warmpool.h -- the warm resource pool: nodes of many processes share
 * one buffer of ready, idle resources (sandboxes, scratch directories,
 * connections) through the backend. The pool keeps an idle target; a
 * primary, elected with fleet's leader election and fenced by its token,
 * reaps idle entries whose TTL ran out, shrinks the buffer when it is above
 * the target and starts creations when it is below; any node acquires an
 * idle resource atomically and releases it. docs/warmpool.md has the
 * guarantees, the key schema and how to size the primary lease. */
#ifndef FLEET_WARMPOOL_H
#define FLEET_WARMPOOL_H

#include "fleet/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A node of a warm pool: a handle. */
typedef struct fleet_warmpool_s {
  FLEET_HANDLE_FIELDS
} fleet_warmpool_t;

/* One piece of work fleet asks the user's handlers to do on a resource:
 * create it, destroy it, or check it before it is handed out. Owned by fleet,
 * valid until fleet_warmpool_work_done() is called on it (exactly once, inside
 * the callback or later, also after the pool started closing: a pool does
 * not finish closing while a work is pending). */
typedef struct fleet_warmpool_work_s fleet_warmpool_work_t;

/* The longest pool name and owner id (the name rule), and the longest
 * resource id, in bytes. */
#define FLEET_WARMPOOL_OWNER_MAX 200
#define FLEET_WARMPOOL_ID_MAX 256

/* The id of the resource a work is about (NUL-terminated): for a creation,
 * the id fleet chose for the new resource ("<owner>-<n>"), which the
 * created resource must be findable by (its destroy gets the same id). */
FLEET_EXTERN const char *fleet_warmpool_work_id(const fleet_warmpool_work_t *w);

/* Reports the end of a work: `status` 0 when it succeeded (created,
 * destroyed, healthy), else a negative error (any fleet code, or
 * FLEET_EBACKEND for a failure of the user's own), with `detail` (may be
 * NULL) describing it; a failed creation's detail is kept as the pool's
 * last error. Returns 0 or FLEET_EINVAL (NULL, or reported already). */
FLEET_EXTERN int fleet_warmpool_work_done(fleet_warmpool_work_t *w, int status,
                                          const char *detail);

/* A handler: does `work` (create, destroy or check the resource named
 * fleet_warmpool_work_id()) and reports it with fleet_warmpool_work_done(),
 * now or later. */
typedef void (*fleet_warmpool_work_cb)(fleet_warmpool_t *pool,
                                       fleet_warmpool_work_t *work);

/* The handlers of a node, given at fleet_warmpool_start() (copied).
 *
 *   create_cb   required: make the resource named fleet_warmpool_work_id().
 *   destroy_cb  required: remove the resource of that id. It must succeed
 *               on a resource that is gone or was never made (a creation
 *               abandoned by a dead node is destroyed by id).
 *   check_cb    optional: a health check of an idle resource before it is
 *               handed out; a failure destroys it and takes another. */
typedef struct {
  fleet_warmpool_work_cb create_cb;
  fleet_warmpool_work_cb destroy_cb;
  fleet_warmpool_work_cb check_cb;
} fleet_warmpool_handlers_t;

/* An event callback (an option): what the put of a resource this node
 * created came to: 0 it is idle,
 * FLEET_ESTALE refused because the token it was created under is no longer
 * the primary's, FLEET_ETIMEDOUT refused because its warm-up outlived its
 * deadline, FLEET_EALREADY refused because idle is at its target. A
 * refused resource is destroyed at once (destroy_cb runs). */
typedef void (*fleet_warmpool_put_cb)(fleet_warmpool_t *pool, const char *id,
                                      uint64_t token, int status);

/* An event callback (an option): this node became the primary (`token` its
 * fencing token) or stopped being it (`token` 0). */
typedef void (*fleet_warmpool_primary_cb)(fleet_warmpool_t *pool,
                                          uint64_t token);

/* What acquire does when no idle resource is ready. */
typedef enum {
  /* Create one on this node (create_cb runs here) and hand it
   * out when it is ready. */
  FLEET_WARMPOOL_DIRECT_CREATE = 0,
  /* Fail at once with FLEET_ENOTFOUND. */
  FLEET_WARMPOOL_FAIL_FAST = 1
} fleet_warmpool_policy_t;

/* Options; zero means the default. The fields marked (fp) enter the
 * pool's definition fingerprint with `definition`: every node of a pool
 * must agree on them. */
typedef struct {
  /* The idle target written when the pool is first started by a node
   * that campaigns (not client_only; later ones keep the stored target;
   * change it with fleet_warmpool_resize()). Default 0. */
  uint32_t target_idle;
  /* (fp) How long a resource lives from its put, by the server's clock;
   * it is not handed out once less than min_remaining_ms is left, and is
   * reaped. Default 24 h. */
  uint32_t idle_ttl_ms;
  /* (fp) Default min(60 s, idle_ttl_ms / 2); must be below idle_ttl_ms. */
  uint32_t min_remaining_ms;
  /* Creations the primary runs at once (a rolling window: each is put as
   * soon as it is ready). Default 4. */
  uint32_t warmup_concurrency;
  /* (fp) The deadline of a creation: one not put by then is abandoned
   * and its id destroyed. Default 60 s. */
  uint32_t warmup_timeout_ms;
  /* (fp) The primary's lease TTL: a dead primary is replaced within it.
   * Default 10 s; at least 100 ms. */
  uint32_t primary_ttl_ms;
  /* The primary's reconcile interval (it also reconciles at once on a
   * resize, an acquire and after each put). Default 1000 ms. */
  uint32_t reconcile_ms;
  /* (fp) A borrowed resource's lease, renewed every third of it while
   * this node holds it; the primary destroys a resource whose borrower's
   * lease ran out. Default 0: no lease (a borrower that dies leaks). */
  uint32_t borrow_lease_ms;
  /* Backoff after failed creations: base * 2^(failures - 1), at most max;
   * kept in the backend, shared by whoever is primary. Defaults 500 ms
   * and 30 s. */
  uint32_t backoff_base_ms;
  uint32_t backoff_max_ms;
  fleet_warmpool_policy_t policy;
  /* Never campaigns for primary: acquires, releases and queries only. */
  int client_only;
  /* (fp) The pool's definition (what a resource is), any bytes; copied. */
  fleet_bytes_t definition;
  /* Optional event callbacks: see fleet_warmpool_put_cb and
   * fleet_warmpool_primary_cb above; error_cb hears the failures of the
   * background work (reconciles, lease renewals). */
  fleet_warmpool_put_cb put_cb;
  fleet_warmpool_primary_cb primary_cb;
  fleet_error_cb error_cb;
} fleet_warmpool_options_t;

/* Fills `options` with the defaults (no callbacks). */
FLEET_EXTERN void fleet_warmpool_options_init(fleet_warmpool_options_t *o);

/* Initializes `pool`, a node of the warm pool `name` of `client` under the
 * id `owner` (1 to FLEET_WARMPOOL_OWNER_MAX bytes, no '/'; NULL or "" to
 * let fleet make a unique one, "<host>-<pid>-<8 random hex digits>", read
 * it with fleet_warmpool_owner()). The pool's primary election is the
 * leader `name` (its lease is the lock `name`). Nothing is sent until
 * fleet_warmpool_start().
 *
 * An owner id is a lease in the pool, held by one live node at a time:
 * fleet_warmpool_start() claims it under a random nonce of this node's,
 * it is renewed every third of primary_ttl_ms while the node is started,
 * and the close gives it up; a node killed without closing holds it until
 * primary_ttl_ms ran out. While another live node holds the id, the start
 * fails with FLEET_ECONFLICT (fleet_client_last_error() names the id), and
 * so do the node's acquires, releases and creations on demand, whether
 * its start succeeded or not. A resource is borrowed by the node instance
 * that acquired it: no other node, even under the same owner id, releases
 * it or renews its lease. A started node that finds its id taken by
 * another node (its lease ran out while it was stopped, and the other
 * started) is refused for good: its error_cb hears FLEET_ECONFLICT once,
 * it stops campaigning (a primary gives its lease up and its primary_cb
 * hears 0), its borrow leases stop being renewed, and acquire, release and
 * start return FLEET_ECONFLICT; it should be closed. A lease that ran out
 * with nobody taking it is taken again at the next renewal, and the
 * error_cb hears FLEET_ESTALE.
 *
 * `options` (NULL for the defaults) is copied. A node that is never
 * started may take snapshots and resize the pool; acquire, release and
 * drain run the handlers, which fleet_warmpool_start() gives.
 *
 * Returns 0; FLEET_EINVAL (NULL or empty argument, bad options);
 * FLEET_E2BIG; FLEET_ECLOSING; FLEET_ENOMEM. */
FLEET_EXTERN int fleet_warmpool_init(fleet_client_t *client,
                                     fleet_warmpool_t *pool, const char *name,
                                     const char *owner,
                                     const fleet_warmpool_options_t *options);

/* Starts the node with `handlers` (copied; create_cb and destroy_cb
 * required): checks its definition fingerprint against the pool's (stored
 * by the first node that starts; the first that campaigns also stores its
 * target_idle), then, unless client_only, campaigns for primary. `cb` runs
 * with 0, or FLEET_ECONFLICT when the fingerprints differ
 * (fleet_client_last_error() names both; the node does not campaign) or
 * when another live node holds the owner id (the detail names it), or the
 * backend's error.
 *
 * The handlers are the node's from the moment this returns 0, also while
 * the start is answered and after a start that failed: a client-only node
 * may acquire, release and drain right after it. After an error the node
 * may be started again, and each start gives the handlers again; the works
 * asked for from then on go to the new ones.
 *
 * Returns 0; FLEET_EINVAL (NULL, or a required handler missing: nothing
 * changes); FLEET_EALREADY (started); FLEET_ECONFLICT (the node was
 * refused: see fleet_warmpool_init()); FLEET_ECLOSING; FLEET_ENOMEM. */
FLEET_EXTERN int fleet_warmpool_start(fleet_warmpool_t *pool,
                                      const fleet_warmpool_handlers_t *handlers,
                                      fleet_status_cb cb, void *user_data);

/* The node's owner id (NUL-terminated, valid until the node has closed):
 * the one given to fleet_warmpool_init(), or the one fleet made. NULL when
 * `pool` is NULL or not initialized. */
FLEET_EXTERN const char *fleet_warmpool_owner(const fleet_warmpool_t *pool);

/* This node's definition fingerprint (16 hex digits). */
FLEET_EXTERN const char *
fleet_warmpool_fingerprint(const fleet_warmpool_t *pool);

/* Whether this node is the primary now (holds the lease, locally valid). */
FLEET_EXTERN int fleet_warmpool_is_primary(const fleet_warmpool_t *pool);

/* The result of an acquire: 0 and the id (valid until the callback
 * returns), or an error and NULL. */
typedef void (*fleet_warmpool_acquire_cb)(fleet_warmpool_t *pool, int status,
                                          const char *id, void *user_data);

/* Takes an idle resource with at least min_remaining_ms left, atomically
 * (no resource is handed out twice), and checks it if the node has a
 * check_cb. When none is ready: the policy (create here, or
 * FLEET_ENOTFOUND). With a borrow lease the node renews it until the
 * resource is released or the pool closes. Needs the handlers of a start
 * (its answer need not have come, nor been 0). `cb` gets FLEET_ECONFLICT
 * when another live node holds the owner id.
 *
 * Returns 0; FLEET_EINVAL (also: never started, so no handlers);
 * FLEET_ECONFLICT (the node was refused);
 * FLEET_ECLOSING; FLEET_ENOMEM. */
FLEET_EXTERN int fleet_warmpool_acquire(fleet_warmpool_t *pool,
                                        fleet_warmpool_acquire_cb cb,
                                        void *user_data);

/* Release flags. */
#define FLEET_WARMPOOL_RELEASE_DESTROY 1 /* destroy it, do not reuse */

/* Gives a resource this node borrowed back: to idle if it has at least
 * min_remaining_ms left and idle is under its target, else it is destroyed
 * here (destroy_cb runs). `cb` runs with 0, FLEET_ESTALE when it
 * was not borrowed by this node any more (its lease ran out: the primary
 * destroys it; or another node borrowed it, also one under the same owner
 * id), or FLEET_ECONFLICT when another live node holds the owner id; in
 * both cases nothing changed. Needs the handlers of a start, as acquire.
 *
 * Returns 0; FLEET_EINVAL (also: never started); FLEET_E2BIG; FLEET_ECONFLICT
 * (the node was refused); FLEET_ECLOSING; FLEET_ENOMEM. */
FLEET_EXTERN int fleet_warmpool_release(fleet_warmpool_t *pool, const char *id,
                                        int flags, fleet_status_cb cb,
                                        void *user_data);

/* Writes the idle target; `cb` runs once it is written. The primary
 * applies it at once (it is notified), creating or destroying idle
 * resources. Works from any node, started or not. */
FLEET_EXTERN int fleet_warmpool_resize(fleet_warmpool_t *pool, uint32_t target,
                                       fleet_status_cb cb, void *user_data);

typedef void (*fleet_warmpool_drain_cb)(fleet_warmpool_t *pool, int status,
                                        size_t drained, void *user_data);

/* Takes every idle resource visible now out of the pool (atomically per
 * call) and destroys them here; `cb` runs when they are destroyed, with
 * their number. A primary may put new ones meanwhile unless the target was
 * lowered first: resize(0), then drain, empties the pool. Needs the
 * handlers of a start, as acquire (FLEET_EINVAL before one). */
FLEET_EXTERN int fleet_warmpool_drain(fleet_warmpool_t *pool,
                                      fleet_warmpool_drain_cb cb,
                                      void *user_data);

#define FLEET_WARMPOOL_STATE_MAP(XX)                                           \
  XX(HEALTHY, "healthy")   /* a primary reconciles, creations succeed */       \
  XX(DEGRADED, "degraded") /* 3 or more creations failed in a row */           \
  XX(DRAINING, "draining") /* target 0, resources still idle or warming */     \
  XX(STOPPED, "stopped")   /* no primary holds the lease */

typedef enum {
#define FLEET__WARMPOOL_STATE_ENUM(name, str) FLEET_WARMPOOL_##name,
  FLEET_WARMPOOL_STATE_MAP(FLEET__WARMPOOL_STATE_ENUM)
#undef FLEET__WARMPOOL_STATE_ENUM
} fleet_warmpool_state_t;

/* The name of a state ("healthy"); "unknown" when out of range. */
FLEET_EXTERN const char *fleet_warmpool_state_name(int state);

/* The pool's shared state. Strings are valid until the callback returns. */
typedef struct {
  fleet_warmpool_state_t state;
  int64_t target;    /* -1: never started */
  uint64_t idle;     /* live idle entries (may be handed out) */
  uint64_t borrowed; /* handed out, not released */
  uint64_t creating; /* creations in flight, on any node */
  uint64_t destroying;
  uint64_t failures;   /* creations failed in a row */
  uint64_t backoff_ms; /* left before creations start again */
  const char *last_error;
  const char *primary; /* its owner id, "" when none */
  uint64_t primary_token;
  int64_t primary_ttl_ms; /* left on its lease */
  const char *fingerprint;
} fleet_warmpool_snapshot_t;

typedef void (*fleet_warmpool_snapshot_cb)(
    fleet_warmpool_t *pool, int status, const fleet_warmpool_snapshot_t *snap,
    void *user_data);

/* Reads the pool's state and counts. */
FLEET_EXTERN int fleet_warmpool_snapshot(fleet_warmpool_t *pool,
                                         fleet_warmpool_snapshot_cb cb,
                                         void *user_data);

/* Closes the node: pending calls complete with FLEET_ECANCELED; it stops
 * reconciling and gives up the primary lease (another node takes over at
 * once); borrow leases stop being renewed; creations still running are
 * destroyed when they complete, not put. `close_cb` runs when every work
 * has been reported done. */
FLEET_EXTERN int fleet_warmpool_close(fleet_warmpool_t *pool,
                                      fleet_close_cb close_cb);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_WARMPOOL_H */
