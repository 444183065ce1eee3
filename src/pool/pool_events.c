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
 * shuts the node down. A start or a dispatch result may also come in its
 * wake-up message, and is then handled from it, a read sooner ("Events in
 * the wake-up", below).
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
/* Start results: the dispatches waiting for them                           */

/* Reads the status a start reported ("0", "-12"). */
static int pool_parse_status(const fleet__reply_t *r, int *out) {
  size_t i = 0;
  int neg = 0, v = 0;

  if (r->len > 0 && r->str[0] == '-')
    neg = i = 1;
  if (i >= r->len || r->len - i > 6)
    return -1;
  for (; i < r->len; i++) {
    if (r->str[i] < '0' || r->str[i] > '9')
      return -1;
    v = v * 10 + (r->str[i] - '0');
  }
  *out = neg ? -v : v;
  return 0;
}

void fleet__pool_dispatch_result(fleet__pool_t *p, const fleet__reply_t *ev) {
  fleet__pool_req_t *req;
  uint64_t token;
  int status;

  if (fleet__reply_u64_str(&ev[3], &token) != 0 ||
      pool_parse_status(&ev[4], &status) != 0)
    return;
  /* A job that moved before its start reported is answered by its next
   * owner, with a larger token than the dispatch's. */
  FLEET__LIST_FOREACH_DATA (req, &p->waiting, fleet__pool_req_t, wnode)
    if (req->token <= token && req->key_len == ev[1].len &&
        memcmp(req->key, ev[1].str, ev[1].len) == 0) {
      fleet__call_finish(&req->base, status);
      return;
    }
}

void fleet__pool_wait_fail(fleet__pool_t *p, int status) {
  fleet__pool_req_t *req;

  while ((req = fleet__pool_first_waiting(p)) != NULL && !p->base.closing)
    fleet__call_finish(&req->base, status);
}

/* ------------------------------------------------------------------------ */
/* Events in the wake-up                                                    */
/*
 * A push to an empty list publishes the event itself when it is one start or
 * one dispatch result (lib/pool_int.lua, wake_msg): the node handles it from
 * the message, a read sooner, and then reads the list as after any wake-up;
 * or, when the start's handler reported at once, the report takes the start
 * from the list and the node reads only if events wait behind it
 * (pool_on_started_take), and when the node has a dispatch to send, its
 * call takes a result so (pool_calls.c). The list stays the record: an
 * event not handled here (another kind, a start the node cannot take now,
 * a result whose dispatch has not had its reply yet) is handled when a
 * read takes it, as before, and no event is handled twice:
 * - a dispatch result ends the waiting dispatch it answers; its copy in the
 *   list finds none (a later dispatch of the key has a larger token);
 * - a start is handled here only when its token is above every start token
 *   seen so far either way (start_max), so never after a read took it; its
 *   token is kept (fast_tokens) until the read that takes it from the list,
 *   which skips it (a start its handler failed at once would start again
 *   otherwise), or the report that takes it. A token nothing took (the
 *   list expired: the node was thought dead) goes after twice the list's
 *   life; while FLEET__POOL_FAST_MAX are kept, starts wait for the read. */

/* How long a start's token is kept for the read (loop ms): twice the life
 * of the node's event list, and a minute. */
static uint64_t pool_fast_keep_ms(const fleet__pool_t *p) {
  return 2 * ((uint64_t)p->opts.worker_ttl_ms * 4 + p->opts.ack_grace_ms) +
         60000;
}

/* Forgets the kept token at index i. */
static void pool_fast_drop(fleet__pool_t *p, size_t i) {
  p->nfast--;
  p->fast_tokens[i] = p->fast_tokens[p->nfast];
  p->fast_at[i] = p->fast_at[p->nfast];
}

/* Forgets the kept token `token`: returns whether it was kept. */
static int pool_fast_forget(fleet__pool_t *p, uint64_t token) {
  size_t i;

  for (i = 0; i < p->nfast; i++)
    if (p->fast_tokens[i] == token) {
      pool_fast_drop(p, i);
      return 1;
    }
  return 0;
}

/* For a start that a read took from the list: whether it was handled from
 * its wake-up (its token is forgotten then). The start tokens seen grow. */
static int pool_fast_read(fleet__pool_t *p, const fleet__reply_t *ev) {
  uint64_t token;

  if (fleet__reply_u64_str(&ev[3], &token) != 0)
    return 0;
  if (token > p->start_max)
    p->start_max = token;
  return p->nfast > 0 && pool_fast_forget(p, token);
}

/* Splits a wake-up message that carries an event, "<kind>\0<token>\0
 * <worker>\0<from>\0<key>\0<data>", into the six fields of a read's event
 * (kind, key, worker, token, data, from); -1 when it carries none (the
 * kind alone: a wake-up only). */
static int pool_fast_split(const char *s, size_t len, fleet__reply_t *ev) {
  static const int order[5] = {0, 3, 2, 5, 1};
  const char *end = s + len, *z;
  int i;

  memset(ev, 0, 6 * sizeof(*ev));
  for (i = 0; i < 5; i++) {
    if ((z = memchr(s, '\0', (size_t)(end - s))) == NULL)
      return -1;
    ev[order[i]].type = FLEET__REPLY_STR;
    ev[order[i]].str = s;
    ev[order[i]].len = (size_t)(z - s);
    s = z + 1;
  }
  ev[4].type = FLEET__REPLY_STR;
  ev[4].str = s;
  ev[4].len = (size_t)(end - s);
  return ev[0].len == 1 ? 0 : -1;
}

int fleet__pool_took(fleet__pool_t *p, const fleet__reply_t *pair) {
  int64_t took = 0, left = 1;

  if (pair == NULL || fleet__reply_i64(&pair[0], &took) != 0 ||
      fleet__reply_i64(&pair[1], &left) != 0) {
    took = 0;
    left = 1;
  }
  if (left != 0 && !p->base.closing)
    fleet__pool_read_events(p);
  return took == 1;
}

/* The reply of a start report call that also took the start it reports
 * from the head of the node's list (pool_started.lua): the reports, then
 * the two elements of the take (fleet__pool_took). */
static void pool_on_started_take(fleet__req_t *r, int status,
                                 const fleet__reply_t *reply) {
  fleet__pool_req_t *req = (fleet__pool_req_t *)r;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  size_t n = req->nreports;
  uint64_t token = req->take;

  req->take = 0;
  if (fleet__pool_took(p, status == 0 && fleet__reply_is_array(reply, n + 2)
                              ? &reply->elem[n]
                              : NULL))
    (void)pool_fast_forget(p, token);
  fleet__pool_started_read(r, status, reply, 2);
}

static const fleet__call_t pool_started_take_call = {
    "pool.started", FLEET__OP_POOL_STARTED, pool_on_started_take, NULL};

/* Handles the event a wake-up message carries, when it may be. Returns
 * whether the node's read of its list is left to a call that takes the
 * event from it: the start's report (pool_on_started_take), or the next
 * dispatch call (pool_calls.c); else the caller reads. */
static int pool_fast_event(fleet__pool_t *p, const char *msg, size_t len) {
  fleet__reply_t ev[6];
  uint64_t token, now, keep;
  size_t i;

  if (msg == NULL || pool_fast_split(msg, len, ev) != 0 ||
      fleet__reply_u64_str(&ev[3], &token) != 0 || p->base.closing ||
      p->state == FLEET__POOL_SHUTDOWN || p->state == FLEET__POOL_REFUSED)
    return 0;
  if (ev[0].str[0] == 'r') {
    fleet__pool_dispatch_result(p, ev);
    /* A dispatch made meanwhile (its callback's, often) goes at the end of
     * this loop phase: its call takes the result from the list instead of
     * a read (pool_calls.c). */
    if (p->dispatch_queued == 0 || p->take_result != 0 || p->base.closing)
      return 0;
    p->take_result = token;
    return 1;
  }
  /* A start, as a read hands it out (pool_on_events). */
  if (ev[0].str[0] != 's' || p->state != FLEET__POOL_ACTIVE || p->lapsed ||
      token <= p->start_max || p->reporting)
    return 0;
  now = uv_now(p->base.loop);
  keep = pool_fast_keep_ms(p);
  for (i = 0; i < p->nfast;)
    if (now - p->fast_at[i] > keep)
      pool_fast_drop(p, i);
    else
      i++;
  if (p->nfast == FLEET__POOL_FAST_MAX)
    return 0;
  p->fast_tokens[p->nfast] = token;
  p->fast_at[p->nfast++] = now;
  p->start_max = token;
  fleet__pool_reports_begin(p);
  fleet__pool_job_event(p, ev);
  /* The report of this start (when its handler made it) also takes it
   * from the list: no read then, unless events are left. */
  return fleet__pool_reports_end_take(p, token, &pool_started_take_call);
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
        if (pool_fast_read(p, ev))
          break; /* handled from its wake-up */
        /* fall through */
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
  if (status != 0 || !pool_fast_event(arg, payload, len))
    fleet__pool_read_events(arg);
}
