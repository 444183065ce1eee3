/* worker_poll.c -- the worker's poll, retry and delay timers and whether
 * it takes the backend as reachable (online). The bottom of the worker:
 * it only wakes the flush (worker_int.h), and both worker.c (on a state
 * change) and worker_jobs.c (on each call's outcome) call it. */
#include "worker_int.h"

/* The backoff of an offline worker's retries. */
#define WORKER_RETRY_MIN_MS 50
#define WORKER_RETRY_MAX_MS 2000

static void worker_on_poll(uv_timer_t *t) {
  fleet__worker_wake(
      FLEET__CONTAINER_OF(t, struct fleet__worker_s, poll_timer));
}

static void worker_on_retry(uv_timer_t *t) {
  struct fleet__worker_s *w =
      FLEET__CONTAINER_OF(t, struct fleet__worker_s, poll_timer);
  w->probe = 1;
  fleet__worker_wake(w);
}

void fleet__worker_arm_poll(struct fleet__worker_s *w) {
  uint64_t d;

  if (w->state == FLEET__WORKER_CLOSING || w->state == FLEET__WORKER_STOPPED ||
      w->state == FLEET__WORKER_IDLE) {
    uv_timer_stop(&w->poll_timer);
    return;
  }
  if (w->online) {
    if (w->state == FLEET__WORKER_RUNNING)
      uv_timer_start(&w->poll_timer, worker_on_poll, w->o.poll_ms,
                     w->o.poll_ms);
    else
      uv_timer_stop(&w->poll_timer);
    return;
  }
  d = fleet__backoff_delay(WORKER_RETRY_MIN_MS, WORKER_RETRY_MAX_MS, 20,
                           w->retry_attempt, fleet__rng_next(&w->rng));
  uv_timer_start(&w->poll_timer, worker_on_retry, d, 0);
}

void fleet__worker_offline(struct fleet__worker_s *w, int status) {
  w->stats.last_error = status;
  if (w->online) {
    w->online = 0;
    w->retry_attempt = 0;
    fleet__worker_arm_poll(w);
  } else if (!uv_is_active((uv_handle_t *)&w->poll_timer)) {
    w->retry_attempt++;
    fleet__worker_arm_poll(w);
  }
}

void fleet__worker_online(struct fleet__worker_s *w) {
  if (w->online)
    return;
  w->online = 1;
  w->retry_attempt = 0;
  w->maybe_pending = 1;
  fleet__worker_arm_poll(w);
  fleet__worker_kick(w);
}

static void worker_on_delay(uv_timer_t *t) {
  struct fleet__worker_s *w =
      FLEET__CONTAINER_OF(t, struct fleet__worker_s, delay_timer);
  /* A delayed job came due, or a flow limit's hold ended: claim. */
  w->promote_due = 1;
  w->maybe_pending = 1;
  fleet__worker_wake(w);
}

void fleet__worker_arm_delay(struct fleet__worker_s *w, uint64_t now_ms,
                             uint64_t at_ms) {
  uint64_t d = (at_ms > now_ms ? at_ms - now_ms : 0) + 1;

  if (w->state != FLEET__WORKER_RUNNING)
    return;
  if (uv_is_active((uv_handle_t *)&w->delay_timer) &&
      uv_timer_get_due_in(&w->delay_timer) <= d)
    return;
  uv_timer_start(&w->delay_timer, worker_on_delay, d, 0);
}
