/* pool.c -- the pool node: joining with its workers, keep-alives, the
 * node's event list, rebalancing, shutdown and close. Jobs on local
 * workers are in pool_jobs.c; the calls a user makes on a node are in
 * pool_calls.c; docs/pool.md states the guarantees.
 *
 * Everything the pool tells a node goes through the node's event list in
 * the backend (T:ev:<node>), written by the same script that makes the
 * change; a publish on the node's channel only wakes it. The node reads
 * the list whenever it is woken, whenever its subscription becomes live
 * (messages may have been missed), after each join and after each
 * keep-alive, so an event is never lost to a missed message.
 *
 * Liveness is judged on the server's clock: a node's keep-alive sets its
 * deadline to the server's now + worker TTL, and any script that runs
 * after the deadline removes the node and orphans its jobs. On the node's
 * side, a keep-alive sent at loop time `sent` keeps it valid locally until
 * sent + ttl - margin, so the node gives its jobs up (stop with LOST)
 * before the pool can give them to anyone else. A node that finds itself
 * lapsed or removed leaves for good and joins again with fresh workers.
 *
 * Identity: a node id is a lease, T:id:<node>, holding the random nonce of
 * the instance that claimed it, with the worker TTL. Every node claims it
 * with its first join, sent on the loop iteration after the init (client-
 * only nodes too: the id names the event list their dispatch results come
 * through), renews it with each keep-alive and gives it up when it closes.
 * The join, the keep-alive, the event read and the leave present the
 * nonce; while another live instance holds the id, the join and the event
 * read are refused with FLEET_ECONFLICT and the keep-alive and the leave
 * touch nothing. A node refused so (at its join, or later, when another
 * instance took the id after this one's lease ran out) enters REFUSED: its
 * jobs stop (LOST), its waiting dispatches fail, its error callback hears
 * FLEET_ECONFLICT once, and it takes no more calls. A lease that merely ran
 * out (a node stopped past its TTL) is a lapse as above: the node joins
 * again and claims its id anew.
 *
 * Routing is computed here, not in Lua (Lua 5.1 has no 64-bit integers):
 * over the membership the node read last, which carries a revision; the
 * scripts that assign jobs refuse a stale revision, and the node reads the
 * membership again and retries. Rebalancing (after any membership change,
 * or when jobs lost their owner) reads every job, computes the owners it
 * wants and asks POOL_MOVE to apply the changes; every node does it, and
 * the tokens make the concurrent moves of two nodes harmless. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_int.h"

/* The most events one read takes. */
#define POOL_EVENTS_MAX 128
/* The smallest worker TTL, in ms. */
#define POOL_TTL_MIN_MS 100
/* The delay before a keep-alive that failed is sent again, in ms. */
#define POOL_RETRY_MS 100

static const char *const pool_state_names[] = {
#define XX(name, str) str,
    FLEET__POOL_STATE_MAP(XX)
#undef XX
};

const char *fleet__pool_state_name(fleet__pool_state_t state) {
  if ((size_t)state >= FLEET__ARRAY_SIZE(pool_state_names))
    return "unknown";
  return pool_state_names[state];
}

static const char *const pool_stop_names[] = {
#define XX(name, str) str,
    FLEET_POOL_STOP_REASON_MAP(XX)
#undef XX
};

const char *fleet_pool_stop_reason_name(int reason) {
  if (reason < 0 || (size_t)reason >= FLEET__ARRAY_SIZE(pool_stop_names))
    return "unknown";
  return pool_stop_names[reason];
}

static fleet__backend_t *pool_backend(const fleet__pool_t *p) {
  return fleet__handle_backend(&p->base);
}

static uint64_t pool_margin(const fleet__pool_t *p) {
  return p->opts.worker_ttl_ms / 10 + 5;
}

static void pool_keepalive_schedule(fleet__pool_t *p, uint64_t delay);
static void pool_rebalance(fleet__pool_t *p);

/* Takes the keep-alive off the batcher; its hold goes with it. */
static void pool_keepalive_stop(fleet__pool_t *p) {
  int had = p->keepalive.linked || p->keepalive.call != NULL;

  fleet__batch_remove(p->base.client, &p->keepalive);
  if (had)
    fleet__handle_unhold(&p->base);
}

/* ------------------------------------------------------------------------ */
/* The state machine                                                        */

/* The one place a node changes state. Leaving ACTIVE stops the keep-alive
 * and the lapse timer; entering ACTIVE schedules them from `sent`, the
 * loop time the join was sent. */
static void pool_set_state(fleet__pool_t *p, fleet__pool_state_t state,
                           uint64_t sent) {
  if (p->state == FLEET__POOL_ACTIVE && state != FLEET__POOL_ACTIVE) {
    pool_keepalive_stop(p);
    if (p->timers_open)
      uv_timer_stop(&p->lapse_timer);
  }
  p->state = state;
  if (state == FLEET__POOL_ACTIVE) {
    p->lapsed = 0;
    p->valid_until = sent + p->opts.worker_ttl_ms - pool_margin(p);
    pool_keepalive_schedule(p, p->opts.worker_ttl_ms / 3);
  }
}

/* Another live instance holds this node's id: the node stops acting under
 * it for good (see the top of the file). */
static void pool_refuse(fleet__pool_t *p) {
  if (p->base.closing || p->state == FLEET__POOL_REFUSED)
    return;
  pool_set_state(p, FLEET__POOL_REFUSED, 0);
  fleet__backend_set_detail(pool_backend(p),
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
/* Joining and keep-alives                                                  */

static void pool_on_join(fleet__req_t *r, int status,
                         const fleet__reply_t *reply);

static void pool_claims_drop(fleet__pool_claim_t *claims, size_t n) {
  size_t i;

  for (i = 0; i < n; i++)
    free(claims[i].key);
  free(claims);
}

/* When the join re-asserts the local jobs: lists them in `*out` (the keys
 * are copies; the payloads are the jobs', used only to build the call). */
static int pool_join_claims(fleet__pool_t *p, fleet__pool_claim_t **out,
                            size_t *nout) {
  fleet__pool_claim_t *claims;
  fleet__pool_worker_t *w;
  size_t n = 0;

  *out = NULL;
  *nout = 0;
  if (!p->reassert)
    return 0;
  for (w = p->workers; w != NULL; w = w->next)
    FLEET__LIST_FOREACH (jn, jnext, &w->jobs) {
      n++;
    }
  if (n == 0)
    return 0;
  if ((*out = claims = calloc(n, sizeof(*claims))) == NULL)
    return FLEET_ENOMEM;
  for (w = p->workers; w != NULL; w = w->next)
    FLEET__LIST_FOREACH (jn, jnext, &w->jobs) {
      struct fleet_pool_job_s *j =
          FLEET__LIST_DATA(jn, struct fleet_pool_job_s, node);
      fleet__pool_claim_t *c = &claims[(*nout)++];
      c->worker = w;
      c->token = j->token;
      c->key_len = j->key_len;
      c->payload = j->payload;
      c->payload_len = j->payload_len;
      if ((c->key = fleet__memdup(j->key, j->key_len)) == NULL)
        return FLEET_ENOMEM;
    }
  return 0;
}

static const fleet__call_t pool_join_call = {"pool.join", FLEET__OP_POOL_JOIN,
                                             pool_on_join, NULL};

/* Sends the join with every local worker (and, after the pool forgot the
 * node, its jobs); a join asked for while one is in flight follows it. */
static void pool_send_join(fleet__pool_t *p) {
  fleet__pool_worker_t *w;
  fleet__pool_claim_t *claims;
  uint32_t live = 0;
  fleet__pool_req_t *req;
  size_t i, nclaims;
  int err;

  if (p->join_inflight) {
    p->join_again = 1;
    return;
  }
  err = pool_join_claims(p, &claims, &nclaims);
  for (w = p->workers; w != NULL; w = w->next)
    live += !w->removing;
  if (err == 0)
    err = fleet__args_begin(&p->args, 6 + live + 3 * nclaims, 1);
  if (err == 0) {
    fleet__args_bytes(&p->args, p->node_id, p->node_id_len);
    fleet__args_str(&p->args, p->nonce);
    fleet__args_str(&p->args, p->ttl_str);
    fleet__args_str(&p->args, p->life_str);
    /* A node that was in the pool must not come back after a shutdown it
     * has not read yet: the script checks its event list. */
    fleet__args_str(&p->args, p->state == FLEET__POOL_ACTIVE ? "1" : "0");
    fleet__args_u64(&p->args, live);
    /* A worker being removed is not registered again. */
    for (w = p->workers; w != NULL; w = w->next)
      if (!w->removing)
        fleet__args_str(&p->args, w->id);
    for (i = 0; i < nclaims; i++) {
      fleet__args_bytes(&p->args, claims[i].key, claims[i].key_len);
      fleet__args_str(&p->args, claims[i].worker->id);
      fleet__args_bytes(&p->args, claims[i].payload, claims[i].payload_len);
    }
    req = (fleet__pool_req_t *)fleet__call_new(&p->base, &pool_join_call, NULL,
                                               NULL);
    if (req == NULL) {
      err = FLEET_ENOMEM;
    } else {
      fleet_bytes_t tag = fleet__key_bytes(&p->tag);

      req->claims = claims;
      req->nclaims = nclaims;
      req->deadline = uv_now(p->base.loop);
      req->live = live;
      err = fleet__call_send(&req->base, &tag, 1, p->args.argv, p->args.argc);
    }
  }
  if (err != 0) {
    pool_claims_drop(claims, nclaims);
    fleet__handle_error(&p->base, err);
    return;
  }
  p->reassert = 0;
  p->claimed = 1;
  p->join_inflight = 1;
  if (p->state == FLEET__POOL_IDLE)
    pool_set_state(p, FLEET__POOL_JOINING, 0);
}

static void pool_on_join_timer(uv_timer_t *t) {
  fleet__pool_t *p = FLEET__CONTAINER_OF(t, fleet__pool_t, join_timer);

  if (!p->base.closing &&
      (p->state == FLEET__POOL_IDLE || p->state == FLEET__POOL_JOINING ||
       p->state == FLEET__POOL_ACTIVE))
    pool_send_join(p);
}

/* Joins on the next loop iteration, so that the workers a program adds
 * together join together: each join changes the membership, and jobs
 * would move once per worker instead of once. */
void fleet__pool_join(fleet__pool_t *p) {
  if (p->timers_open && !uv_is_active((uv_handle_t *)&p->join_timer))
    uv_timer_start(&p->join_timer, pool_on_join_timer, 0, 0);
}

static void pool_on_join(fleet__req_t *r, int status,
                         const fleet__reply_t *reply) {
  fleet__pool_req_t *req = (fleet__pool_req_t *)r;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  uint64_t sent = req->deadline;
  uint32_t live = req->live;
  fleet__pool_claim_t *claims = req->claims;
  size_t i, nclaims = req->nclaims;
  int64_t rev;

  req->claims = NULL;
  req->nclaims = 0;
  fleet__req_done(r);
  p->join_inflight = 0;
  if (p->base.closing || p->state == FLEET__POOL_SHUTDOWN ||
      p->state == FLEET__POOL_REFUSED) {
    pool_claims_drop(claims, nclaims);
    return;
  }
  if (status == FLEET_ECONFLICT) {
    /* Another live instance holds the id: nothing joined. */
    pool_claims_drop(claims, nclaims);
    pool_refuse(p);
    return;
  }
  if (status == 0 && fleet__reply_is_array(reply, 1) &&
      fleet__reply_i64(&reply->elem[0], &rev) == 0 && rev < 0) {
    /* The pool shut down: the event read delivers it. Nothing joined. */
    pool_claims_drop(claims, nclaims);
    fleet__pool_read_events(p);
    return;
  }
  if (status == 0 && (!fleet__reply_is_array(reply, 1 + nclaims) ||
                      reply->nelem != 1 + nclaims ||
                      fleet__reply_i64(&reply->elem[0], &rev) != 0))
    status = FLEET_EPROTO;
  if (status == 0) {
    /* The jobs re-asserted keep running here with their new tokens, or,
     * held by another owner, are given up. */
    for (i = 0; i < nclaims; i++) {
      uint64_t token;

      if (p->base.closing)
        break;
      if (fleet__reply_u64(&reply->elem[1 + i], &token) == 0)
        fleet__pool_reasserted(p, &claims[i], token);
    }
    pool_claims_drop(claims, nclaims);
    if (p->base.closing || p->state == FLEET__POOL_SHUTDOWN)
      return;
  } else {
    pool_claims_drop(claims, nclaims);
  }
  if (status != 0 && nclaims > 0 && !p->lapsed &&
      p->state == FLEET__POOL_ACTIVE) {
    /* The re-assertion failed: the keep-alive tries it again; the lapse
     * timer still gives the jobs up when the node's validity ends. */
    p->reassert = 1;
    pool_keepalive_schedule(p, POOL_RETRY_MS);
    fleet__handle_error(&p->base, status);
    return;
  }
  if (status != 0) {
    /* Not in the pool: the keep-alive schedule retries the join (a lapsed
     * keep-alive is refused, and the refusal joins again). */
    if (p->state != FLEET__POOL_ACTIVE)
      pool_set_state(p, FLEET__POOL_ACTIVE, sent);
    p->lapsed = 1;
    uv_timer_stop(&p->lapse_timer);
    fleet__handle_error(&p->base, status);
    return;
  }
  p->member = live > 0;
  pool_set_state(p, FLEET__POOL_ACTIVE, sent);
  if (p->join_again) {
    p->join_again = 0;
    pool_send_join(p);
  }
  fleet__pool_read_events(p);
  pool_rebalance(p);
}

/* The node has lost its place (lapsed on its own clock, or removed by the
 * pool): every local job is given up, and the node joins again. */
static void pool_lose_all(fleet__pool_t *p) {
  fleet__pool_stop_all(p, FLEET_POOL_STOP_LOST);
}

static void pool_on_lapse(uv_timer_t *t) {
  fleet__pool_t *p = FLEET__CONTAINER_OF(t, fleet__pool_t, lapse_timer);

  if (p->state != FLEET__POOL_ACTIVE || p->lapsed)
    return;
  p->lapsed = 1;
  pool_lose_all(p);
  /* Its id lease may run out too: the error callback hears it; the node
   * claims the id again when it joins again, unless another node took it
   * (then it is refused). */
  if (!p->base.closing && p->state == FLEET__POOL_ACTIVE) {
    fleet__backend_set_detail(pool_backend(p),
                              "pool node %s: its keep-alive lapsed; its jobs "
                              "stopped and it joins again",
                              p->node_id);
    fleet__handle_error(&p->base, FLEET_ESTALE);
  }
}

static void pool_keepalive_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                                fleet_bytes_t *args) {
  fleet__pool_t *p = FLEET__CONTAINER_OF(it, fleet__pool_t, keepalive);

  keys[0] = fleet__key_bytes(&p->tag);
  args[0] = (fleet_bytes_t){p->node_id, p->node_id_len};
  args[1] = (fleet_bytes_t){p->nonce, FLEET__NONCE_LEN};
  args[2] = (fleet_bytes_t){p->ttl_str, strlen(p->ttl_str)};
  args[3] = (fleet_bytes_t){p->lapsed ? "1" : "0", 1};
  args[4] = (fleet_bytes_t){p->member ? "1" : "0", 1};
}

static void pool_keepalive_done(fleet__batch_item_t *it, int status,
                                const fleet__reply_t *head,
                                const fleet__reply_t *elem, uint64_t sent) {
  fleet__pool_t *p = FLEET__CONTAINER_OF(it, fleet__pool_t, keepalive);
  int64_t alive = 0;

  (void)head;
  fleet__handle_unhold(&p->base);
  if (p->base.closing || p->state != FLEET__POOL_ACTIVE)
    return;
  if (status == 0 && (!fleet__reply_is_array(elem, 2) ||
                      fleet__reply_i64(&elem->elem[0], &alive) != 0))
    status = FLEET_EPROTO;
  if (status != 0) {
    pool_keepalive_schedule(p, POOL_RETRY_MS);
    fleet__handle_error(&p->base, status);
    return;
  }
  if (alive == -2) {
    pool_refuse(p);
    return;
  }
  if (alive != 1 && !p->lapsed) {
    /* The pool forgot this node while it is valid by its own clock: the
     * pool's data was lost (FLUSHDB, a failover that lost writes), or,
     * rarely, the server's clock ran ahead. Join again, re-asserting the
     * local jobs: each is admitted only when its key is absent, and
     * given up when another owner holds it. */
    p->reassert = 1;
    pool_send_join(p);
    return;
  }
  if (alive != 1 || p->lapsed) {
    /* Removed from the pool (lapsed): its jobs are elsewhere or gone.
     * Join again. */
    if (!p->lapsed) {
      p->lapsed = 1;
      pool_lose_all(p);
      if (p->base.closing || p->state != FLEET__POOL_ACTIVE)
        return;
    }
    pool_send_join(p);
    return;
  }
  p->valid_until = sent + p->opts.worker_ttl_ms - pool_margin(p);
  uv_timer_start(&p->lapse_timer, pool_on_lapse,
                 p->valid_until > uv_now(p->base.loop)
                     ? p->valid_until - uv_now(p->base.loop)
                     : 0,
                 0);
  pool_keepalive_schedule(p, p->opts.worker_ttl_ms / 3);
  fleet__pool_read_events(p);
}

static const fleet__batch_kind_t pool_keepalive_kind = {
    .op = FLEET__OP_POOL_KEEPALIVE,
    .item_keys = 1,
    .item_args = 5,
    .max_items = FLEET__BATCH_MAX,
    .fill = pool_keepalive_fill,
    .done = pool_keepalive_done,
};

/* Schedules the next keep-alive `delay` ms from now; the lapse timer
 * watches the local validity meanwhile. */
static void pool_keepalive_schedule(fleet__pool_t *p, uint64_t delay) {
  uint64_t now = uv_now(p->base.loop);

  if (!p->keepalive.linked && p->keepalive.call == NULL &&
      fleet__batch_add(p->base.client, &p->keepalive, &pool_keepalive_kind,
                       NULL, now + delay, delay / 4) == 0)
    fleet__handle_hold(&p->base);
  if (!p->lapsed)
    uv_timer_start(&p->lapse_timer, pool_on_lapse,
                   p->valid_until > now ? p->valid_until - now : 0, 0);
}

/* ------------------------------------------------------------------------ */
/* Events                                                                   */

static void pool_on_events(fleet__req_t *r, int status,
                           const fleet__reply_t *reply);

static const fleet__call_t pool_events_call = {
    "pool.events", FLEET__OP_POOL_EVENTS, pool_on_events, NULL};

void fleet__pool_read_events(fleet__pool_t *p) {
  int err;

  if (p->base.closing || p->state == FLEET__POOL_SHUTDOWN ||
      p->state == FLEET__POOL_REFUSED)
    return;
  if (p->ev_inflight) {
    p->ev_again = 1;
    return;
  }
  err = fleet__args_begin(&p->args, 3, 1);
  if (err == 0) {
    fleet__args_bytes(&p->args, p->node_id, p->node_id_len);
    fleet__args_u64(&p->args, POOL_EVENTS_MAX);
    fleet__args_str(&p->args, p->nonce);
    err = fleet__pool_call(p, &pool_events_call, NULL, NULL);
  }
  if (err != 0) {
    fleet__handle_error(&p->base, err);
    return;
  }
  p->ev_inflight = 1;
  p->ev_again = 0;
}

/* The pool shut down: every local job stops, and the node takes no more
 * calls. */
static void pool_on_shutdown(fleet__pool_t *p) {
  pool_set_state(p, FLEET__POOL_SHUTDOWN, 0);
  fleet__pool_stop_all(p, FLEET_POOL_STOP_SHUTDOWN);
}

static void pool_on_events(fleet__req_t *r, int status,
                           const fleet__reply_t *reply) {
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  size_t i, n;

  fleet__req_done(r);
  p->ev_inflight = 0;
  if (p->base.closing)
    return;
  if (status == FLEET_ECONFLICT) {
    pool_refuse(p);
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
  for (i = 0; i < n; i++) {
    const fleet__reply_t *ev = &reply->elem[6 * i];

    if (p->base.closing || p->state == FLEET__POOL_SHUTDOWN)
      return;
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
        pool_rebalance(p);
        break;
      case 'S':
        pool_on_shutdown(p);
        break;
      default:
        break;
    }
  }
  if (n == POOL_EVENTS_MAX || p->ev_again)
    fleet__pool_read_events(p);
}

static void pool_on_message(void *arg, int status, const char *payload,
                            size_t len) {
  (void)status;
  (void)payload;
  (void)len;
  fleet__pool_read_events(arg);
}

/* ------------------------------------------------------------------------ */
/* Rebalancing                                                              */

static void pool_on_bal_members(fleet__req_t *r, int status,
                                const fleet__reply_t *reply);
static void pool_on_bal_jobs(fleet__req_t *r, int status,
                             const fleet__reply_t *reply);
static void pool_on_bal_move(fleet__req_t *r, int status,
                             const fleet__reply_t *reply);

static const fleet__call_t pool_bal_members_call = {"pool.rebalance.members",
                                                    FLEET__OP_POOL_MEMBERS,
                                                    pool_on_bal_members, NULL};
static const fleet__call_t pool_bal_jobs_call = {
    "pool.rebalance.jobs", FLEET__OP_POOL_JOBS, pool_on_bal_jobs, NULL};
static const fleet__call_t pool_bal_move_call = {
    "pool.rebalance.move", FLEET__OP_POOL_MOVE, pool_on_bal_move, NULL};

/* Ends a rebalance step: with an error, the error callback hears it; a
 * rebalance asked for meanwhile starts now. */
static void pool_bal_end(fleet__pool_t *p, int status) {
  p->bal_inflight = 0;
  if (status != 0)
    fleet__handle_error(&p->base, status);
  if (p->bal_again && !p->base.closing)
    pool_rebalance(p);
}

static void pool_rebalance(fleet__pool_t *p) {
  int err;

  if (p->base.closing || p->state != FLEET__POOL_ACTIVE || p->lapsed ||
      p->nworkers == 0)
    return;
  if (p->bal_inflight) {
    p->bal_again = 1;
    return;
  }
  p->bal_again = 0;
  err = fleet__args_begin(&p->args, 0, 0);
  if (err == 0)
    err = fleet__pool_call(p, &pool_bal_members_call, NULL, NULL);
  if (err != 0) {
    fleet__handle_error(&p->base, err);
    return;
  }
  p->bal_inflight = 1;
}

static void pool_on_bal_members(fleet__req_t *r, int status,
                                const fleet__reply_t *reply) {
  fleet__pool_t *p = (fleet__pool_t *)r->handle;

  fleet__req_done(r);
  if (p->base.closing)
    return;
  if (status == 0)
    status = fleet__pool_set_members(p, reply);
  if (status == 0)
    status = fleet__args_begin(&p->args, 0, 0);
  if (status == 0)
    status = fleet__pool_call(p, &pool_bal_jobs_call, NULL, NULL);
  if (status != 0)
    pool_bal_end(p, status);
}

static void pool_on_bal_jobs(fleet__req_t *r, int status,
                             const fleet__reply_t *reply) {
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  size_t i, moves = 0;

  fleet__req_done(r);
  if (p->base.closing)
    return;
  if (status == 0 && (reply->type != FLEET__REPLY_ARRAY || reply->nelem % 2))
    status = FLEET_EPROTO;
  if (status == 0)
    status = fleet__args_begin(&p->args, 1 + reply->nelem / 2 * 3, 1);
  if (status != 0 || p->nmembers == 0) {
    pool_bal_end(p, status);
    return;
  }
  fleet__args_i64(&p->args, p->rev);
  for (i = 0; i + 1 < reply->nelem; i += 2) {
    const fleet__reply_t *k = &reply->elem[i], *rec = &reply->elem[i + 1];
    fleet_bytes_t token, worker;
    const char *want;
    char state;

    if (k->type != FLEET__REPLY_STR || rec->type != FLEET__REPLY_STR ||
        fleet__pool_parse_owner(rec, &token, &state, &worker) != 0) {
      status = FLEET_EPROTO;
      continue;
    }
    want = fleet__pool_route(p, k->str, k->len);
    if (state != 'o' && ((state != 's' && state != 'r') ||
                         (worker.len == strlen(want) &&
                          memcmp(worker.base, want, worker.len) == 0)))
      continue;
    fleet__args_bytes(&p->args, k->str, k->len);
    fleet__args_bytes(&p->args, token.base, token.len);
    fleet__args_str(&p->args, want);
    moves++;
  }
  if (moves > 0) {
    int err = fleet__pool_call(p, &pool_bal_move_call, NULL, NULL);
    if (err == 0) {
      if (status != 0)
        fleet__handle_error(&p->base, status);
      return;
    }
    status = err;
  }
  pool_bal_end(p, status);
}

static void pool_on_bal_move(fleet__req_t *r, int status,
                             const fleet__reply_t *reply) {
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  int64_t n;

  fleet__req_done(r);
  if (p->base.closing)
    return;
  if (status == 0 && fleet__reply_i64(reply, &n) != 0)
    status = FLEET_EPROTO;
  if (status == 0 && n < 0)
    p->bal_again = 1; /* the membership changed meanwhile */
  pool_bal_end(p, status);
}

/* ------------------------------------------------------------------------ */
/* Init, workers, close                                                     */

static void pool_close(fleet__handle_t *h);
static void pool_closing(fleet__handle_t *h);
static void pool_free(fleet__handle_t *h);

static const fleet__handle_vt_t pool_vt = {
    .type = FLEET_HANDLE_POOL_NODE,
    .req_size = sizeof(fleet__pool_req_t),
    .close = pool_close,
    .closing = pool_closing,
    .free = pool_free,
};

void fleet_pool_node_options_init(fleet_pool_node_options_t *o) {
  if (o == NULL)
    return;
  memset(o, 0, sizeof(*o));
  o->worker_ttl_ms = 30000;
  o->ack_grace_ms = 20000;
  o->max_queued_jobs = 1000;
  o->worker_shutdown_ttl_ms = 120000;
}

static int pool_options(const fleet_pool_node_options_t *in,
                        fleet_pool_node_options_t *out) {
  fleet_pool_node_options_t d;

  fleet_pool_node_options_init(&d);
  *out = in != NULL ? *in : d;
  if (out->worker_ttl_ms == 0)
    out->worker_ttl_ms = d.worker_ttl_ms;
  if (out->ack_grace_ms == 0)
    out->ack_grace_ms = d.ack_grace_ms;
  if (out->max_queued_jobs == 0)
    out->max_queued_jobs = d.max_queued_jobs;
  if (out->worker_shutdown_ttl_ms == 0)
    out->worker_shutdown_ttl_ms = d.worker_shutdown_ttl_ms;
  if (out->worker_ttl_ms < POOL_TTL_MIN_MS ||
      out->worker_ttl_ms > UINT32_MAX / 8 || out->ack_grace_ms > UINT32_MAX / 4)
    return FLEET_EINVAL;
  return 0;
}

int fleet_pool_node_init(fleet_client_t *client, fleet_pool_node_t *node,
                         const char *pool, const char *node_id,
                         const fleet_pool_node_options_t *options) {
  struct fleet__client_s *c;
  fleet_pool_node_options_t opts;
  fleet__pool_t *p = NULL;
  size_t pool_len, id_len;
  char part[FLEET_POOL_NODE_ID_MAX + 8];
  char *made = NULL;
  int err;

  if (node == NULL)
    return FLEET_EINVAL;
  node->internal_ = NULL;
  if (client == NULL || client->internal_ == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__str_check(pool, FLEET__NAME_MAX, &pool_len)) != 0)
    return err;
  if (node_id == NULL || node_id[0] == '\0') {
    /* Left to fleet: a unique id. */
    if ((made = fleet__ident_make()) == NULL)
      return FLEET_ENOMEM;
    node_id = made;
  }
  err = fleet__str_check(node_id, FLEET_POOL_NODE_ID_MAX, &id_len);
  if (err == 0 &&
      (strchr(node_id, '/') != NULL || pool_options(options, &opts) != 0))
    err = FLEET_EINVAL;
  if (err == 0 && (p = calloc(1, sizeof(*p))) == NULL)
    err = FLEET_ENOMEM;
  if (err == 0)
    fleet__list_init(&p->waiting);
  if (err == 0 && (err = fleet__handle_init(&p->base, &pool_vt, client,
                                            (fleet_handle_t *)node)) != 0)
    free(p);
  if (err != 0) {
    free(made);
    return err;
  }
  c = p->base.client;
  p->pub = node;
  p->opts = opts;
  p->base.error_cb = opts.error_cb;
  p->rev = -1;
  p->workers_tail = &p->workers;
  p->node_id_len = id_len;
  snprintf(p->ttl_str, sizeof(p->ttl_str), "%" PRIu32, opts.worker_ttl_ms);
  snprintf(p->life_str, sizeof(p->life_str), "%" PRIu64,
           (uint64_t)opts.worker_ttl_ms * 4 + opts.ack_grace_ms);
  snprintf(part, sizeof(part), "wake:%s", node_id);
  fleet__ident_nonce(p->nonce);
  p->node_id = made != NULL ? made : fleet__strdup(node_id);
  if (p->node_id == NULL ||
      fleet__key_build(&p->tag, c->prefix, c->prefix_len, pool, pool_len,
                       NULL) != 0 ||
      fleet__key_build(&p->wake, c->prefix, c->prefix_len, pool, pool_len,
                       part) != 0) {
    fleet__handle_abort(&p->base);
    pool_free(&p->base);
    node->internal_ = NULL;
    return FLEET_ENOMEM;
  }
  fleet__metrics_name_from_tag(&p->base.mblock, p->tag.base, p->tag.len,
                               c->prefix_len);
  fleet__handle_timer_init(&p->base, &p->lapse_timer);
  fleet__handle_timer_init(&p->base, &p->wait_timer);
  fleet__handle_timer_init(&p->base, &p->join_timer);
  fleet__handle_timer_init(&p->base, &p->remove_timer);
  p->timers_open = 1;
  /* Results of dispatches come through the event list: every node,
   * client-only too, listens. The wake-up on subscription reads it. */
  err = pool_backend(p)->vt->subscribe(
      pool_backend(p), p->wake.base, p->wake.len, pool_on_message, p, &p->sub);
  if (err != 0) {
    p->sub = NULL;
    fleet__handle_error(&p->base, err);
  }
  /* Claims the id (and joins) on the next loop iteration, with the
   * workers added meanwhile. */
  fleet__pool_join(p);
  return 0;
}

const char *fleet_pool_node_id(const fleet_pool_node_t *node) {
  const fleet__pool_t *p = fleet__pool_of(node);

  return p != NULL ? p->node_id : NULL;
}

int fleet_pool_worker_add(fleet_pool_node_t *node, fleet_pool_worker_t *worker,
                          const fleet_pool_handler_t *handler) {
  fleet__pool_t *p = fleet__pool_of(node);
  fleet__pool_worker_t *w;
  char id[FLEET_POOL_NODE_ID_MAX + 16];
  int err;

  if (worker != NULL)
    worker->internal_ = NULL;
  if (p == NULL || worker == NULL || handler == NULL ||
      handler->start == NULL || handler->stop == NULL || p->opts.client_only)
    return FLEET_EINVAL;
  if ((err = fleet__pool_usable(p)) != 0)
    return err;
  if ((w = calloc(1, sizeof(*w))) == NULL)
    return FLEET_ENOMEM;
  fleet__list_init(&w->jobs);
  snprintf(id, sizeof(id), "%s/%" PRIu32, p->node_id, p->worker_seq + 1);
  if ((w->id = fleet__strdup(id)) == NULL) {
    free(w);
    return FLEET_ENOMEM;
  }
  w->pool = p;
  w->pub = worker;
  w->handler = *handler;
  worker->internal_ = w;
  *p->workers_tail = w;
  p->workers_tail = &w->next;
  p->nworkers++;
  p->worker_seq++;
  fleet__pool_join(p);
  return 0;
}

const char *fleet_pool_worker_id(const fleet_pool_worker_t *w) {
  return w != NULL && w->internal_ != NULL ? w->internal_->id : NULL;
}

/* The close hook: no user callback here. Background work stops; the
 * workers' jobs stop in pool_closing. */
static void pool_close(fleet__handle_t *h) {
  fleet__pool_t *p = (fleet__pool_t *)h;

  pool_keepalive_stop(p);
  if (p->sub != NULL) {
    pool_backend(p)->vt->unsubscribe(pool_backend(p), p->sub);
    p->sub = NULL;
  }
  if (p->timers_open) {
    fleet__handle_uv_close(&p->base, (uv_handle_t *)&p->join_timer);
    fleet__handle_uv_close(&p->base, (uv_handle_t *)&p->remove_timer);
    fleet__handle_uv_close(&p->base, (uv_handle_t *)&p->lapse_timer);
    fleet__handle_uv_close(&p->base, (uv_handle_t *)&p->wait_timer);
    p->timers_open = 0;
  }
}

static void pool_on_leave(fleet__req_t *r, int status,
                          const fleet__reply_t *reply) {
  (void)status;
  (void)reply;
  fleet__req_done(r);
}

static const fleet__call_t pool_leave_call = {
    "pool.leave", FLEET__OP_POOL_LEAVE, pool_on_leave, NULL};

/* The loop iteration after the close: every local job stops (CLOSE), then
 * the node leaves the pool so that the others start its jobs. */
static void pool_closing(fleet__handle_t *h) {
  fleet__pool_t *p = (fleet__pool_t *)h;
  fleet__pool_state_t was = p->state;

  pool_set_state(p, FLEET__POOL_CLOSING, 0);
  fleet__pool_stop_all(p, FLEET_POOL_STOP_CLOSE);
  /* A node that may hold its id gives it up (the script checks the
   * nonce); a refused one has nothing to give up. */
  if (!p->claimed || was == FLEET__POOL_REFUSED ||
      fleet__args_begin(&p->args, 2, 0) != 0)
    return;
  fleet__args_bytes(&p->args, p->node_id, p->node_id_len);
  fleet__args_str(&p->args, p->nonce);
  (void)fleet__pool_call(p, &pool_leave_call, NULL, NULL);
}

static void pool_free(fleet__handle_t *h) {
  fleet__pool_t *p = (fleet__pool_t *)h;
  fleet__pool_worker_t *w, *next;
  struct fleet_pool_job_s *job;

  for (w = p->workers; w != NULL; w = next) {
    next = w->next;
    while ((job = fleet__pool_first_job(w)) != NULL)
      fleet__pool_job_free(job);
    w->pub->internal_ = NULL;
    free(w->id);
    free(w);
  }
  fleet__pool_members_clear(p);
  free(p->member_ids);
  free(p->member_nodes);
  free(p->member_created);
  fleet__args_free(&p->args);
  fleet__key_free(&p->tag);
  fleet__key_free(&p->wake);
  free(p->node_id);
  free(p);
}

int fleet_pool_node_close(fleet_pool_node_t *node, fleet_close_cb cb) {
  fleet__pool_t *p = fleet__pool_of(node);

  if (p == NULL)
    return FLEET_EINVAL;
  return fleet__handle_close(&p->base, cb);
}
