/* pool_member.c -- a node's place in its pool: the join with its workers,
 * the keep-alives and the lapse.
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
 * instance took the id after this one's lease ran out) is refused for good
 * (fleet__pool_refuse). A lease that merely ran out (a node stopped past
 * its TTL) is a lapse as above: the node joins again and claims its id
 * anew. */
#include <stdlib.h>
#include <string.h>

#include "pool_int.h"

/* The delay before a keep-alive that failed is sent again, in ms. */
#define POOL_RETRY_MS 100

static uint64_t pool_margin(const fleet__pool_t *p) {
  return p->opts.worker_ttl_ms / 10 + 5;
}

static void pool_keepalive_schedule(fleet__pool_t *p, uint64_t delay);

/* Enters ACTIVE (or stays there) from `sent`, the loop time the join was
 * sent: the node is valid until sent + ttl - margin, and the keep-alive
 * and the lapse timer run. */
static void pool_activate(fleet__pool_t *p, uint64_t sent) {
  fleet__pool_set_state(p, FLEET__POOL_ACTIVE);
  p->lapsed = 0;
  p->valid_until = sent + p->opts.worker_ttl_ms - pool_margin(p);
  pool_keepalive_schedule(p, p->opts.worker_ttl_ms / 3);
}

/* The registry's jobs hook: the keys of the jobs the node's workers
 * run. */
static void pool_reg_jobs(fleet__reg_t *r) {
  fleet__pool_t *p = FLEET__CONTAINER_OF(r, fleet__pool_t, reg);
  fleet__pool_worker_t *w;
  struct fleet_pool_job_s *job;

  FLEET__LIST_FOREACH_DATA (w, &p->workers, fleet__pool_worker_t, node)
    FLEET__LIST_FOREACH_DATA (job, &w->jobs, struct fleet_pool_job_s, node)
      fleet__reg_job(r, job->key, job->key_len);
}

/* ------------------------------------------------------------------------ */
/* Joining                                                                  */

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
  FLEET__LIST_FOREACH_DATA (w, &p->workers, fleet__pool_worker_t, node)
    FLEET__LIST_FOREACH (jn, jnext, &w->jobs) {
      n++;
    }
  if (n == 0)
    return 0;
  if ((*out = claims = calloc(n, sizeof(*claims))) == NULL)
    return FLEET_ENOMEM;
  FLEET__LIST_FOREACH_DATA (w, &p->workers, fleet__pool_worker_t, node)
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

  if (!fleet__pool_once_begin(&p->join))
    return;
  err = pool_join_claims(p, &claims, &nclaims);
  FLEET__LIST_FOREACH_DATA (w, &p->workers, fleet__pool_worker_t, node)
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
    FLEET__LIST_FOREACH_DATA (w, &p->workers, fleet__pool_worker_t, node)
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
  p->join.inflight = 1;
  if (p->state == FLEET__POOL_IDLE)
    fleet__pool_set_state(p, FLEET__POOL_JOINING);
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
  p->join.inflight = 0;
  if (p->base.closing || p->state == FLEET__POOL_SHUTDOWN ||
      p->state == FLEET__POOL_REFUSED) {
    pool_claims_drop(claims, nclaims);
    return;
  }
  if (status == FLEET_ECONFLICT) {
    /* Another live instance holds the id: nothing joined. */
    pool_claims_drop(claims, nclaims);
    fleet__pool_refuse(p);
    return;
  }
  if (status == FLEET_ESHUTDOWN) {
    /* The pool was shut down and not reset: it takes no node. */
    pool_claims_drop(claims, nclaims);
    fleet__backend_set_detail(fleet__handle_backend(&p->base),
                              "pool node \"%s\" refused: the pool was shut "
                              "down and not reset since (fleet_pool_reset)",
                              p->node_id);
    fleet__handle_error(&p->base, FLEET_ESHUTDOWN);
    fleet__pool_shut(p);
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
      pool_activate(p, sent);
    p->lapsed = 1;
    uv_timer_stop(&p->lapse_timer);
    fleet__handle_error(&p->base, status);
    return;
  }
  p->member = live > 0;
  if (p->member)
    fleet__reg_start(&p->reg, &p->base, "pool", p->node_id, p->node_id_len,
                     p->base.mblock.name, p->base.mblock.name_len,
                     p->opts.worker_ttl_ms / 3, pool_reg_jobs);
  else
    fleet__reg_stop(&p->reg);
  pool_activate(p, sent);
  if (p->join.again) {
    p->join.again = 0;
    pool_send_join(p);
  }
  fleet__pool_read_events(p);
  fleet__pool_rebalance(p);
}

/* ------------------------------------------------------------------------ */
/* Keep-alives                                                              */

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
    fleet__backend_set_detail(fleet__handle_backend(&p->base),
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
    fleet__pool_refuse(p);
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
