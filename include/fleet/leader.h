/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/leader.h -- leader election on top of a lease (fleet/lock.h). */
#ifndef FLEET_LEADER_H
#define FLEET_LEADER_H

#include "fleet/common.h"
#include "fleet/lock.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fleet_leader_s fleet_leader_t;

/* This candidate became the leader; `token` is the fencing token of its
 * lease, to present to whatever the leader drives. */
typedef void (*fleet_leader_elected_cb)(fleet_leader_t *leader, uint64_t token);

/* This candidate is no longer the leader: `status` is 0 after
 * fleet_leader_resign(), else why its lease was lost (FLEET_ETIMEDOUT,
 * FLEET_ESTALE, FLEET_EWRONGTYPE, as for fleet_lock_lost_cb). After a loss
 * the candidate campaigns again by itself. */
typedef void (*fleet_leader_demoted_cb)(fleet_leader_t *leader, int status);

/* The options of a candidate: its lease timing, as for a lock (see
 * fleet_lock_options_t; zero means the default), and its callbacks. Fill
 * it with fleet_leader_options_init(), then set the two required
 * callbacks. */
typedef struct {
  uint32_t renew_interval_ms;
  uint32_t safety_margin_ms;
  uint32_t retry_max_ms;
  /* Required: this candidate became the leader. */
  fleet_leader_elected_cb elected_cb;
  /* Required: this candidate is no longer the leader. */
  fleet_leader_demoted_cb demoted_cb;
  /* Optional: hears each failure of the campaign (an attempt that failed
   * and is retried after retry_max_ms, a renewal that failed, data fleet
   * did not write under the election's keys). The campaign goes on. */
  fleet_error_cb error_cb;
} fleet_leader_options_t;

/* Fills `options` with the defaults: the lock's lease timing (see
 * fleet_lock_options_t) and no callbacks. */
FLEET_EXTERN void fleet_leader_options_init(fleet_leader_options_t *options);

/* A candidate; a fleet_handle_t (see fleet/common.h). */
struct fleet_leader_s {
  FLEET_HANDLE_FIELDS
};

/* Initializes `leader`, a candidate for the leadership `name` of `client`
 * under the id `owner`, whose lease lasts `ttl_ms` and is renewed as a
 * lock's (the election is the lock `name`: fleet_lock_query() on it, or
 * fleet_leader_query(), tells who leads). `options` is required, since
 * it carries the required `elected_cb` and `demoted_cb`; it is copied. The
 * handle registers with the client. Nothing is sent until
 * fleet_leader_campaign().
 *
 * A leader that dies without resigning is replaced once its lease expires,
 * ttl_ms after its last renewal: the waiting candidates retry exactly then,
 * so a new leader is elected within ttl_ms (plus a round trip) of the
 * death, inside the bound of ttl_ms + one renewal interval.
 *
 * Returns 0; FLEET_EINVAL (NULL or empty argument, NULL `options`, a
 * NULL `elected_cb` or `demoted_cb`, bad timing as for fleet_lock_init());
 * FLEET_E2BIG; FLEET_ECLOSING; FLEET_ENOMEM. The handle must be closed
 * before its client. */
FLEET_EXTERN int fleet_leader_init(fleet_client_t *client,
                                   fleet_leader_t *leader, const char *name,
                                   const char *owner, uint32_t ttl_ms,
                                   const fleet_leader_options_t *options);

/* Starts campaigning: waits for the lease (woken by releases, and when the
 * current leader's TTL runs out), then calls `elected_cb`. After a loss
 * it calls `demoted_cb` and campaigns again, until fleet_leader_resign() or
 * fleet_leader_close().
 *
 * Returns 0; FLEET_EINVAL; FLEET_EALREADY (campaigning, leading or
 * resigning); FLEET_ECLOSING; FLEET_ENOMEM. */
FLEET_EXTERN int fleet_leader_campaign(fleet_leader_t *leader);

/* Stops campaigning. A leader gives its lease up (compare-and-delete, which
 * wakes the other candidates at once), then `demoted_cb` runs with 0; then
 * `cb` runs once, with 0 (or FLEET_ECANCELED when the handle was closed
 * first). fleet_leader_campaign() may be called again from `cb` on.
 *
 * Returns 0; FLEET_EINVAL; FLEET_EALREADY (not campaigning, or resigning
 * already); FLEET_ECLOSING. On error `cb` never runs. */
FLEET_EXTERN int fleet_leader_resign(fleet_leader_t *leader, fleet_status_cb cb,
                                     void *user_data);

/* Whether this candidate leads now: it holds the lease and its local
 * validity has not run out (see fleet_lock_held()). Check it right before
 * acting as the leader. 0 for NULL. */
FLEET_EXTERN int fleet_leader_is_leader(const fleet_leader_t *leader);

/* The fencing token of the current or last lease of this candidate. */
FLEET_EXTERN uint64_t fleet_leader_token(const fleet_leader_t *leader);

/* Reads who leads `leader`'s election now, whoever that is: as
 * fleet_lock_query() on its name (info->held 0 when nobody leads). */
FLEET_EXTERN int fleet_leader_query(fleet_leader_t *leader,
                                    fleet_lock_query_cb cb, void *user_data);

/* Closes `leader`: stops campaigning, gives up a lease it holds (without
 * calling `demoted_cb`), completes a pending resign with FLEET_ECANCELED, then
 * runs `close_cb` (may be NULL), never inside this call. May be called from
 * any fleet callback.
 *
 * Returns 0, FLEET_EINVAL or FLEET_ECLOSING. */
FLEET_EXTERN int fleet_leader_close(fleet_leader_t *leader,
                                    fleet_close_cb close_cb);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_LEADER_H */
