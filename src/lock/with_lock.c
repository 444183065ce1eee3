/* with_lock.c -- fleet_with_lock(): acquire a lease, run one piece of work
 * with its token and a "lost" signal, release it when the work says done,
 * and report the run's first error once (include/fleet/lock.h,
 * docs/lock.md "with_lock").
 *
 * Built on the public lock API alone: a run owns one fleet_lock_t whose
 * lost callback is wired to the run. Its states, each entered through
 * wl_enter():
 *
 *   ACQUIRING --granted--> RUNNING --fleet_with_lock_done()--> RELEASING
 *       |                                                          |
 *       +--refused-------------------> CLOSING <--answered---------+
 *
 * In CLOSING the lock handle closes; its close callback runs the user's
 * done callback with the first error (acquire, work, loss, release) and
 * frees the run. */
#include <stddef.h>
#include <stdlib.h>

#include "fleet.h"

typedef enum { WL_ACQUIRING, WL_RUNNING, WL_RELEASING, WL_CLOSING } wl_state_t;

struct fleet_with_lock_s {
  fleet_lock_t lock;
  fleet_client_t *client;
  wl_state_t state;
  fleet_with_lock_options_t opts;
  fleet_with_lock_run_cb run;
  fleet_with_lock_done_cb done;
  void *user_data;
  uint64_t token;
  int acquire_status; /* the acquire's error, else 0 */
  int result;         /* what the work passed to fleet_with_lock_done() */
  int lost;           /* the lost callback's status, else 0 */
  int release_status; /* the release's error, else 0 */
};

static fleet_with_lock_t *wl_of(fleet_lock_t *lock) {
  return (fleet_with_lock_t *)(void *)((char *)lock -
                                       offsetof(fleet_with_lock_t, lock));
}

static void wl_on_closed(fleet_handle_t *h);
static void wl_on_released(fleet_handle_t *h, int status, void *user_data);

/* The first error of the run, in the order the header states. */
static int wl_status(const fleet_with_lock_t *w) {
  if (w->acquire_status != 0)
    return w->acquire_status;
  if (w->result != 0)
    return w->result;
  if (w->lost != 0)
    return w->lost;
  return w->release_status;
}

/* The one transition function: enters `to` and starts its work. */
static void wl_enter(fleet_with_lock_t *w, wl_state_t to) {
  int err;

  w->state = to;
  switch (to) {
    case WL_RELEASING:
      err = fleet_lock_release(&w->lock, wl_on_released, w);
      if (err == 0)
        return;
      /* Nothing to release (the lease was lost, or ran out): the loss,
       * if it was heard, is the run's error; else this one is. */
      if (!(err == FLEET_ESTALE && w->lost != 0))
        w->release_status = err;
      wl_enter(w, WL_CLOSING);
      return;
    case WL_CLOSING:
      /* The handle is open and not closing: this cannot fail. */
      (void)fleet_lock_close(&w->lock, wl_on_closed);
      return;
    case WL_ACQUIRING:
    case WL_RUNNING:
      return;
  }
}

/* The handle of a run that never started closed: no user callback. */
static void wl_on_closed_quiet(fleet_handle_t *h) {
  free(wl_of((fleet_lock_t *)h));
}

static void wl_on_closed(fleet_handle_t *h) {
  fleet_with_lock_t *w = wl_of((fleet_lock_t *)h);

  w->done(w->client, wl_status(w), w->user_data);
  free(w);
}

static void wl_on_released(fleet_handle_t *h, int status, void *user_data) {
  fleet_with_lock_t *w = user_data;

  (void)h;
  if (status != 0 && !(status == FLEET_ESTALE && w->lost != 0))
    w->release_status = status;
  wl_enter(w, WL_CLOSING);
}

static void wl_on_acquired(fleet_lock_t *lock, int status, uint64_t token,
                           void *user_data) {
  fleet_with_lock_t *w = user_data;

  (void)lock;
  if (status != 0) {
    w->acquire_status = status;
    wl_enter(w, WL_CLOSING);
    return;
  }
  w->token = token;
  wl_enter(w, WL_RUNNING);
  w->run(w, token, w->user_data);
}

static void wl_on_lost(fleet_lock_t *lock, int status, uint64_t token) {
  fleet_with_lock_t *w = wl_of(lock);

  (void)token;
  if (w->lost != 0 || w->state != WL_RUNNING)
    return;
  w->lost = status != 0 ? status : FLEET_ESTALE;
  if (w->opts.lost_cb != NULL)
    w->opts.lost_cb(w, w->lost, w->user_data);
}

void fleet_with_lock_options_init(fleet_with_lock_options_t *options) {
  if (options != NULL) {
    options->wait_ms = 0;
    options->lock_options = NULL;
    options->lost_cb = NULL;
  }
}

int fleet_with_lock(fleet_client_t *client, const char *name, const char *owner,
                    uint32_t ttl_ms, const fleet_with_lock_options_t *options,
                    fleet_with_lock_run_cb run, fleet_with_lock_done_cb done,
                    void *user_data) {
  fleet_lock_options_t lo;
  fleet_with_lock_t *w;
  int err;

  if (client == NULL || run == NULL || done == NULL)
    return FLEET_EINVAL;
  if ((w = calloc(1, sizeof(*w))) == NULL)
    return FLEET_ENOMEM;
  fleet_with_lock_options_init(&w->opts);
  if (options != NULL)
    w->opts = *options;
  if (w->opts.lock_options != NULL)
    lo = *w->opts.lock_options;
  else
    fleet_lock_options_init(&lo);
  w->opts.lock_options = NULL; /* copied into the lock; not kept */
  lo.lost_cb = wl_on_lost;
  w->client = client;
  w->run = run;
  w->done = done;
  w->user_data = user_data;
  w->state = WL_ACQUIRING;
  if ((err = fleet_lock_init(client, &w->lock, name, owner, ttl_ms, &lo)) !=
      0) {
    free(w);
    return err;
  }
  if ((err = fleet_lock_acquire(&w->lock, w->opts.wait_ms, wl_on_acquired,
                                w)) != 0) {
    /* No callback of the user runs: the handle closes and is freed. */
    (void)fleet_lock_close(&w->lock, wl_on_closed_quiet);
    return err;
  }
  return 0;
}

int fleet_with_lock_done(fleet_with_lock_t *run, int result) {
  if (run == NULL || result > 0)
    return FLEET_EINVAL;
  if (run->state != WL_RUNNING)
    return FLEET_EALREADY;
  run->result = result;
  wl_enter(run, WL_RELEASING);
  return 0;
}

int fleet_with_lock_lost(const fleet_with_lock_t *run) {
  if (run == NULL)
    return FLEET_EINVAL;
  if (run->lost != 0)
    return run->lost;
  if (run->state != WL_RUNNING)
    return FLEET_ECANCELED;
  return fleet_lock_held(&run->lock) ? 0 : FLEET_ETIMEDOUT;
}

uint64_t fleet_with_lock_token(const fleet_with_lock_t *run) {
  return run != NULL ? run->token : 0;
}
