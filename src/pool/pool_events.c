/* pool_events.c -- the node's event list and its state machine.
 *
 * Everything the pool tells a node goes through the node's event list in
 * the backend (T:ev:<node>), written by the same script that makes the
 * change; a publish on the node's channel only wakes it. The node reads
 * the list whenever it is woken, whenever its subscription becomes live
 * (messages may have been missed), after each join and after each
 * keep-alive, so an event is never lost to a missed message. An event
 * starts, stops or notifies a local job (pool_jobs.c), answers a waiting
 * dispatch (pool_calls.c), asks for a rebalance (pool_rebalance.c) or
 * shuts the node down.
 *
 * The state changes here, in one function, for the callers above it: the
 * join and keep-alive (pool_member.c) and the close (pool.c). A node
 * refused its id (another live instance holds it, see pool_member.c)
 * enters REFUSED: its jobs stop (LOST), its waiting dispatches fail, its
 * error callback hears FLEET_ECONFLICT once, and it takes no more calls. */
#include <string.h>

#include "pool_int.h"

/* The most events one read takes. */
#define POOL_EVENTS_MAX 128

/* ------------------------------------------------------------------------ */
/* The state machine                                                        */

/* Takes the keep-alive off the batcher; its hold goes with it. */
void fleet__pool_keepalive_stop(fleet__pool_t *p) {
  int had = p->keepalive.linked || p->keepalive.call != NULL;

  fleet__batch_remove(p->base.client, &p->keepalive);
  if (had)
    fleet__handle_unhold(&p->base);
}

void fleet__pool_set_state(fleet__pool_t *p, fleet__pool_state_t state) {
  if (p->state == FLEET__POOL_ACTIVE && state != FLEET__POOL_ACTIVE) {
    fleet__pool_keepalive_stop(p);
    if (p->timers_open)
      uv_timer_stop(&p->lapse_timer);
  }
  p->state = state;
}

void fleet__pool_refuse(fleet__pool_t *p) {
  if (p->base.closing || p->state == FLEET__POOL_REFUSED)
    return;
  fleet__pool_set_state(p, FLEET__POOL_REFUSED);
  fleet__reg_stop(&p->reg);
  fleet__backend_set_detail(fleet__handle_backend(&p->base),
                            "pool node id \"%s\" is already in use by a "
                            "live node",
                            p->node_id);
  fleet__handle_error(&p->base, FLEET_ECONFLICT);
  if (!p->base.closing)
    fleet__pool_wait_fail(p, FLEET_ECONFLICT);
  if (!p->base.closing)
    fleet__pool_stop_all(p, FLEET_POOL_STOP_LOST);
}

/* ------------------------------------------------------------------------ */
/* Reading the list                                                         */

static void pool_on_events(fleet__req_t *r, int status,
                           const fleet__reply_t *reply);

static const fleet__call_t pool_events_call = {
    "pool.events", FLEET__OP_POOL_EVENTS, pool_on_events, NULL};

void fleet__pool_read_events(fleet__pool_t *p) {
  int err;

  if (p->base.closing || p->state == FLEET__POOL_SHUTDOWN ||
      p->state == FLEET__POOL_REFUSED)
    return;
  if (!fleet__pool_once_begin(&p->ev))
    return;
  err = fleet__args_begin(&p->args, 3, 1);
  if (err == 0) {
    fleet__args_bytes(&p->args, p->node_id, p->node_id_len);
    fleet__args_u64(&p->args, POOL_EVENTS_MAX);
    fleet__args_str(&p->args, p->nonce);
    err = fleet__pool_call(p, &pool_events_call, NULL, NULL);
  }
  fleet__pool_once_sent(p, &p->ev, err);
}

void fleet__pool_shut(fleet__pool_t *p) {
  if (p->base.closing || p->state == FLEET__POOL_SHUTDOWN)
    return;
  fleet__pool_set_state(p, FLEET__POOL_SHUTDOWN);
  fleet__reg_stop(&p->reg);
  if (p->timers_open)
    uv_timer_stop(&p->requeue_timer);
  fleet__pool_wait_fail(p, FLEET_ESHUTDOWN);
  if (!p->base.closing)
    fleet__pool_stop_all(p, FLEET_POOL_STOP_SHUTDOWN);
}

static void pool_on_events(fleet__req_t *r, int status,
                           const fleet__reply_t *reply) {
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  size_t i, n;

  fleet__req_done(r);
  p->ev.inflight = 0;
  if (p->base.closing)
    return;
  if (status == FLEET_ECONFLICT) {
    fleet__pool_refuse(p);
    return;
  }
  if (status == 0 && (reply->type != FLEET__REPLY_ARRAY || reply->nelem % 6))
    status = FLEET_EPROTO;
  for (i = 0; status == 0 && i < reply->nelem; i++)
    if (reply->elem[i].type != FLEET__REPLY_STR)
      status = FLEET_EPROTO;
  if (status != 0) {
    fleet__handle_error(&p->base, status);
    return;
  }
  n = reply->nelem / 6;
  /* The starts of this read report in one call, sent when it is handled. */
  fleet__pool_reports_begin(p);
  for (i = 0; i < n; i++) {
    const fleet__reply_t *ev = &reply->elem[6 * i];

    if (p->base.closing || p->state == FLEET__POOL_SHUTDOWN)
      break;
    if (ev[0].len != 1)
      continue;
    switch (ev[0].str[0]) {
      case 's':
      case 'x':
      case 'n':
        /* A lapsed node runs nothing: its jobs may be elsewhere. */
        if (p->state == FLEET__POOL_ACTIVE && !p->lapsed)
          fleet__pool_job_event(p, ev);
        break;
      case 'r':
        fleet__pool_dispatch_result(p, ev);
        break;
      case 'm':
        fleet__pool_rebalance(p);
        break;
      case 'S':
        fleet__pool_shut(p);
        break;
      default:
        break;
    }
  }
  fleet__pool_reports_end(p);
  if (p->base.closing || p->state == FLEET__POOL_SHUTDOWN)
    return;
  if (n == POOL_EVENTS_MAX || p->ev.again)
    fleet__pool_read_events(p);
}

void fleet__pool_on_wake(void *arg, int status, const char *payload,
                         size_t len) {
  (void)status;
  (void)payload;
  (void)len;
  fleet__pool_read_events(arg);
}
