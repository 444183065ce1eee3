/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/lock.h -- leases: locks with fencing tokens, auto-renewal and a
 * lease-lost callback. */
#ifndef FLEET_LOCK_H
#define FLEET_LOCK_H

#include "fleet/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fleet_lock_s fleet_lock_t;

/* The shortest TTL a lock accepts, in ms. */
#define FLEET_LOCK_TTL_MIN_MS 10

/* The longest owner id, in bytes. */
#define FLEET_LOCK_OWNER_MAX 256

/* A `wait_ms` for fleet_lock_acquire(): wait until the lease is free,
 * however long that takes. */
#define FLEET_LOCK_WAIT_FOREVER UINT64_MAX

/* Completion of fleet_lock_acquire(). `status` is 0 and `token` the fencing
 * token of the new lease, strictly greater than every token issued before
 * for this name:
 *   - on one Redis and the memory backend, within one history of the data
 *     (a Redis restart that loses the counter, as without appendonly and
 *     appendfsync always, may hand out a token again);
 *   - behind Sentinel and on a Redis Cluster, also across a failover,
 *     even to a replica that missed the last grants: tokens then start at
 *     epoch * 2^32, the epoch being the new master's Sentinel config-epoch
 *     or Cluster config epoch, which a failover raises (tokens are exact
 *     below 2^53; an epoch of 2^21 or more fails with FLEET_E2BIG).
 * The lease itself may be granted twice across such a failover (the new
 * master lacks the old holder's key): the newer holder's token is then
 * the greater, so a resource that checks tokens refuses the older holder,
 * who is told at its next renewal (the lost callback). With the client's
 * wait_replicas option the grant also waits for that many replicas, and
 * fails with FLEET_ETIMEDOUT when fewer acknowledge it in time (the lease
 * then stays on the master until its TTL runs out; see docs/deploy.md,
 * "What survives which failure"). Otherwise `status` is:
 *   FLEET_EBUSY         try-once (wait_ms 0) and another lease holds it;
 *   FLEET_ETIMEDOUT     it was still held when wait_ms ran out, or the
 *                       grant arrived after its own validity had run out
 *                       (then it is released again; a waiting acquire
 *                       retries instead while wait_ms allows);
 *   FLEET_ECANCELED     the lock handle was closed;
 *   FLEET_EUNAVAILABLE, FLEET_ECONNLOST, ...  try-once could not reach the
 *                       backend (a waiting acquire retries these until its
 *                       deadline); after FLEET_ECONNLOST the attempt may
 *                       have taken a lease that then expires unused;
 *   FLEET_EWRONGTYPE, FLEET_EPROTO  the lock's keys hold data fleet did
 *                       not write (another type; a fence that is not an
 *                       integer). */
typedef void (*fleet_lock_acquire_cb)(fleet_lock_t *lock, int status,
                                      uint64_t token, void *user_data);

/* The lease-lost callback: the lease with `token` is no longer held. It runs
 * once per lost lease, before another owner can have taken the lease
 * (given the safety margin) as long as the backend keeps its data; after
 * a failover to a replica that missed the grant or the last renewals (or a
 * restart that lost them) another owner may hold the lease, with a greater
 * token, before this runs: it runs at the holder's next renewal, which
 * finds the lease gone or taken (FLEET_ESTALE), or when renewals fail past
 * the local validity (FLEET_ETIMEDOUT). It runs with:
 *   FLEET_ETIMEDOUT   no renewal was confirmed before the local validity
 *                     (sent + ttl - safety margin, on the monotonic clock)
 *                     ran out: the backend was unreachable or slow, or the
 *                     process was paused;
 *   FLEET_ESTALE      a renewal was refused: the lease expired or another
 *                     owner holds it;
 *   FLEET_EWRONGTYPE  the lease key was overwritten with another type.
 * It does not run for a lease given up with fleet_lock_release() or
 * fleet_lock_close(). */
typedef void (*fleet_lock_lost_cb)(fleet_lock_t *lock, int status,
                                   uint64_t token);

typedef struct {
  /* How often a held lease is renewed, in ms. Default ttl / 3. Must be
   * shorter than ttl - safety margin. */
  uint32_t renew_interval_ms;
  /* How long before the end of its TTL a lease counts as lost locally, in
   * ms: it covers the delay of the request to the server and the drift
   * between the local and the server clock. Default max(ttl / 10, 5) +
   * ttl / 100 + 1. Must be shorter than the TTL. */
  uint32_t safety_margin_ms;
  /* While waiting in fleet_lock_acquire(), the longest time between two
   * attempts when no release is heard, in ms. Default 1000. Attempts also
   * happen on every release and when the holder's TTL runs out. */
  uint32_t retry_max_ms;
  /* 1: no automatic renewal; the lease lasts its TTL unless
   * fleet_lock_renew() extends it. Default 0. */
  int manual_renew;
  /* Optional: called when a held lease is lost. */
  fleet_lock_lost_cb lost_cb;
  /* Optional: hears each failure of the work the handle does by itself: a
   * renewal that failed (retried while the lease is valid), a waiting
   * acquire that could not reach the backend (retried), a background
   * release that failed (the lease then ends with its TTL). */
  fleet_error_cb error_cb;
} fleet_lock_options_t;

/* A lock handle; a fleet_handle_t (see fleet/common.h). */
struct fleet_lock_s {
  FLEET_HANDLE_FIELDS
};

/* What fleet_lock_query() found. */
typedef struct {
  /* 1 when a lease is held (by any owner), else 0 and the fields below
   * except `fence` are zero. */
  int held;
  /* The holder's owner id, NUL-terminated; valid until the callback
   * returns. NULL when not held. */
  const char *owner;
  size_t owner_len;
  /* The holder's fencing token. */
  uint64_t token;
  /* The lease's remaining time to live on the server (PTTL), in ms; -1 if
   * the key has no expiry (not written by fleet). */
  int64_t ttl_ms;
  /* The last token issued for this name, held or not (0 if none yet). */
  uint64_t fence;
} fleet_lock_info_t;

/* Completion of fleet_lock_query() on `client`: `status` 0 and `info`, or
 * an error and NULL (FLEET_EWRONGTYPE or FLEET_EPROTO for keys fleet did
 * not write). */
typedef void (*fleet_lock_query_cb)(fleet_client_t *client, int status,
                                    const fleet_lock_info_t *info,
                                    void *user_data);

/* Fills `options` with the defaults (all zero: see the fields). */
FLEET_EXTERN void fleet_lock_options_init(fleet_lock_options_t *options);

/* Initializes `lock`, a handle on the lease `name` of `client`, held as
 * `owner` for `ttl_ms` at a time, and registers it with the client (which
 * refuses to close while the lock is open). `name` (1 to 512 bytes) and
 * `owner` (1 to
 * FLEET_LOCK_OWNER_MAX bytes) are NUL-terminated and copied; `options` may
 * be NULL for the defaults and is copied. Nothing is sent yet.
 *
 * Returns 0; FLEET_EINVAL (NULL or empty argument, ttl_ms below
 * FLEET_LOCK_TTL_MIN_MS, a safety margin not shorter than the TTL, a
 * renewal interval not shorter than ttl - margin); FLEET_E2BIG (name or
 * owner too long); FLEET_ECLOSING (the client is closing); FLEET_ENOMEM. On
 * error nothing is left on the loop. The handle must be closed before its
 * client. */
FLEET_EXTERN int fleet_lock_init(fleet_client_t *client, fleet_lock_t *lock,
                                 const char *name, const char *owner,
                                 uint32_t ttl_ms,
                                 const fleet_lock_options_t *options);

/* Takes the lease. With `wait_ms` 0 it tries once; otherwise, while the
 * lease is held by another, it waits up to `wait_ms` (or
 * FLEET_LOCK_WAIT_FOREVER) for it: it wakes when the holder releases
 * (pub/sub) or when the holder's TTL runs out, and retries at least every
 * retry_max_ms. `cb` runs once (see fleet_lock_acquire_cb). Once the lease
 * is held it is renewed every renew_interval_ms until released, closed or
 * lost.
 *
 * Returns 0; FLEET_EINVAL (NULL argument); FLEET_EALREADY (an acquire or a
 * release is in progress, or the lease is held); FLEET_ECLOSING (the handle
 * or the client is closing); FLEET_ENOMEM. On error `cb` never runs. */
FLEET_EXTERN int fleet_lock_acquire(fleet_lock_t *lock, uint64_t wait_ms,
                                    fleet_lock_acquire_cb cb, void *user_data);

/* Gives up the lease: deletes it on the server only if it still holds this
 * handle's token (compare-and-delete), and wakes the owners waiting for it.
 * The handle stops counting the lease as held at once. It also works after
 * the lease-lost callback (the server then usually answers FLEET_ESTALE).
 * `cb` runs once with 0, FLEET_ESTALE (the lease is not held with this
 * handle's token: it expired or another owner holds it now; nothing was
 * changed), FLEET_ECANCELED (the handle was closed) or a backend error;
 * on an error other than
 * FLEET_ESTALE the lease may still exist on the server until its TTL ends,
 * and release may be called again.
 *
 * Returns 0; FLEET_EINVAL (NULL argument); FLEET_ESTALE (the handle has no
 * lease to release: never acquired, or released already); FLEET_EALREADY
 * (an acquire or a release is in progress); FLEET_ECLOSING; FLEET_ENOMEM.
 * On error `cb` never runs. */
FLEET_EXTERN int fleet_lock_release(fleet_lock_t *lock, fleet_status_cb cb,
                                    void *user_data);

/* Extends the held lease to a full TTL from now if it still holds this
 * handle's token (compare-and-extend); for manual_renew handles, or to
 * renew early. A refused renewal (FLEET_ESTALE, FLEET_EWRONGTYPE) also runs
 * the lease-lost callback, before `cb`.
 *
 * Returns 0; FLEET_EINVAL; FLEET_ESTALE (no lease held: never acquired,
 * released, or lost already); FLEET_EALREADY (a renew from this function is
 * in progress, or a release); FLEET_ECLOSING; FLEET_ENOMEM. On error `cb`
 * never runs. */
FLEET_EXTERN int fleet_lock_renew(fleet_lock_t *lock, fleet_status_cb cb,
                                  void *user_data);

/* Whether the handle holds a lease that is valid now by the local
 * monotonic clock (sent + ttl - safety margin has not passed). Check it
 * right before acting on the lease: it turns 0 at the local deadline even
 * if the lease-lost callback has not run yet. 0 for NULL. */
FLEET_EXTERN int fleet_lock_held(const fleet_lock_t *lock);

/* The fencing token of the handle's current or last lease (0 if none).
 * Present it to the systems the lease protects. */
FLEET_EXTERN uint64_t fleet_lock_token(const fleet_lock_t *lock);

/* The local validity left on the held lease, in ms (0 when not held). */
FLEET_EXTERN uint64_t fleet_lock_remaining_ms(const fleet_lock_t *lock);

/* Closes `lock`: a pending acquire, release or renew completes with
 * FLEET_ECANCELED; a lease still held, or granted by an attempt in flight,
 * is released (compare-and-delete) in the background; the lease-lost
 * callback does not run any more. `close_cb` (may be NULL) runs once that
 * release has been answered (at most the client's command timeout) and
 * everything is freed, never inside this call. May be called from any
 * fleet callback.
 *
 * Returns 0, FLEET_EINVAL or FLEET_ECLOSING (already closing). */
FLEET_EXTERN int fleet_lock_close(fleet_lock_t *lock, fleet_close_cb close_cb);

/* Reads the state of the lease `name` on `client`, whoever holds it: holder,
 * token, TTL and last token issued. `cb` runs once, never inside this call.
 *
 * Returns 0; FLEET_EINVAL (NULL argument, empty name); FLEET_E2BIG;
 * FLEET_ECLOSING; FLEET_ENOMEM. On error `cb` never runs. */
FLEET_EXTERN int fleet_lock_query(fleet_client_t *client, const char *name,
                                  fleet_lock_query_cb cb, void *user_data);

/* ---- with_lock: acquire, run, release ---- */

/* One run of fleet_with_lock(): the lease held for one piece of work.
 * Owned by fleet; valid from the run callback until the done callback has
 * returned. */
typedef struct fleet_with_lock_s fleet_with_lock_t;

/* The work: runs once the lease is held, with its fencing token (present
 * it to what the lease protects). The work may be asynchronous; it ends
 * with fleet_with_lock_done(), from this callback or later. */
typedef void (*fleet_with_lock_run_cb)(fleet_with_lock_t *run, uint64_t token,
                                       void *user_data);

/* The lease was lost while the work ran (`status` as for
 * fleet_lock_lost_cb: FLEET_ETIMEDOUT, FLEET_ESTALE, FLEET_EWRONGTYPE). It
 * runs at most once per run, before the done callback, and only between
 * the run callback and fleet_with_lock_done(); the work should stop (it
 * still calls fleet_with_lock_done()). */
typedef void (*fleet_with_lock_lost_cb)(fleet_with_lock_t *run, int status,
                                        void *user_data);

/* The end of a run: exactly once per fleet_with_lock() that returned 0,
 * never inside a fleet call, once the lease is given up and its handle
 * closed. `status` is the first error of the run, reported here only:
 * the acquire's (FLEET_EBUSY, FLEET_ETIMEDOUT, ...: the run callback did
 * not run), else the error the work passed to fleet_with_lock_done(), else
 * the loss of the lease (the lost callback's status: the work ran, the
 * lease did not last), else the release's (a backend error: the lease
 * then ends with its TTL), else 0. */
typedef void (*fleet_with_lock_done_cb)(fleet_client_t *client, int status,
                                        void *user_data);

typedef struct {
  /* How long to wait for the lease (fleet_lock_acquire()'s wait_ms; 0:
   * try once). */
  uint64_t wait_ms;
  /* The lock's options (renewal, safety margin, error_cb); NULL for the
   * defaults. Their lost_cb is not used: see lost_cb below. */
  const fleet_lock_options_t *lock_options;
  /* Optional: hears the loss of the lease while the work runs. */
  fleet_with_lock_lost_cb lost_cb;
} fleet_with_lock_options_t;

/* Fills `options` with the defaults (all zero). */
FLEET_EXTERN void
fleet_with_lock_options_init(fleet_with_lock_options_t *options);

/* Takes the lease `name` as `owner` for `ttl_ms` at a time (renewed while
 * the work runs, as fleet_lock_acquire()), runs `run` with its token,
 * and once the work calls fleet_with_lock_done() releases it and runs
 * `done`. The lease's lost callback is wired: fleet_with_lock_lost() turns
 * non-zero, and `options->lost_cb` runs, when the lease is lost. Arguments
 * are checked as fleet_lock_init(); `options` may be NULL and is copied,
 * `name` and `owner` are copied. The run holds a lock handle on `client`
 * until `done` runs (the client refuses to close before).
 *
 * Returns 0 (then `done` runs exactly once, never inside this call);
 * FLEET_EINVAL (NULL `client`, `run` or `done`, or a bad argument for
 * the lock); FLEET_E2BIG; FLEET_ECLOSING; FLEET_ENOMEM. On error no
 * callback runs. */
FLEET_EXTERN int fleet_with_lock(fleet_client_t *client, const char *name,
                                 const char *owner, uint32_t ttl_ms,
                                 const fleet_with_lock_options_t *options,
                                 fleet_with_lock_run_cb run,
                                 fleet_with_lock_done_cb done, void *user_data);

/* Ends the work of `run`: `result` 0 for success, or a fleet error (a
 * negative FLEET_E* code) the done callback reports. The lease is released
 * (compare-and-delete) and its handle closed; then the done callback runs,
 * never inside this call. `run` is invalid once the done callback has
 * returned. Returns 0, FLEET_EINVAL (NULL, a positive result) or
 * FLEET_EALREADY (called twice). */
FLEET_EXTERN int fleet_with_lock_done(fleet_with_lock_t *run, int result);

/* 0 while the lease of `run` is held and valid by the local clock;
 * otherwise the reason it is not: the lost callback's status, or
 * FLEET_ETIMEDOUT when the local validity ran out before that callback
 * ran, or FLEET_ECANCELED once fleet_with_lock_done() was called. Poll it
 * before each step that relies on the lease. FLEET_EINVAL for NULL. */
FLEET_EXTERN int fleet_with_lock_lost(const fleet_with_lock_t *run);

/* The fencing token of `run`'s lease (0 for NULL). */
FLEET_EXTERN uint64_t fleet_with_lock_token(const fleet_with_lock_t *run);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_LOCK_H */
