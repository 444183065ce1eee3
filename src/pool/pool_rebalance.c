/* pool_rebalance.c -- rebalancing: after any membership change, or when
 * jobs lost their owner, a node reads the membership and every job,
 * computes the owners it wants over the membership (pool_route.c) and asks
 * POOL_MOVE to apply the changes. Every node does it, and the tokens make
 * the concurrent moves of two nodes harmless; a move computed over a stale
 * membership is refused by the script, and the node rebalances again. One
 * rebalance is in flight at a time, and one more follows when one was
 * asked for meanwhile.
 *
 * A requeued job (fleet_pool_job_requeue()) is placed like an orphan once
 * its due time passed by the server clock; POOL_MOVE says how long until
 * the first one it skipped is due, and the node rebalances again then
 * (the requeue timer). The node that requeued the job arms it from the
 * requeue's reply; every node that rebalances meanwhile (a membership
 * change: the requeuing node may have died) arms its own. */
#include <string.h>

#include "pool_int.h"

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
  p->bal.inflight = 0;
  if (status != 0)
    fleet__handle_error(&p->base, status);
  if (p->bal.again && !p->base.closing)
    fleet__pool_rebalance(p);
}

void fleet__pool_rebalance(fleet__pool_t *p) {
  int err;

  if (p->base.closing || p->state != FLEET__POOL_ACTIVE || p->lapsed ||
      p->nworkers == 0)
    return;
  if (!fleet__pool_once_begin(&p->bal))
    return;
  err = fleet__args_begin(&p->args, 0, 0);
  if (err == 0)
    err = fleet__pool_call(p, &pool_bal_members_call, NULL, NULL);
  fleet__pool_once_sent(p, &p->bal, err);
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
    if (state != 'o' && state != 'q' &&
        ((state != 's' && state != 'r') ||
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
  int64_t n, wait;

  fleet__req_done(r);
  if (p->base.closing)
    return;
  if (status == 0 && (!fleet__reply_is_array(reply, 2) ||
                      fleet__reply_i64(&reply->elem[0], &n) != 0 ||
                      fleet__reply_i64(&reply->elem[1], &wait) != 0))
    status = FLEET_EPROTO;
  if (status == 0 && n < 0)
    p->bal.again = 1; /* the membership changed meanwhile */
  else if (status == 0 && wait > 0)
    fleet__pool_requeue_wait(p, (uint64_t)wait);
  pool_bal_end(p, status);
}

static void pool_on_requeue_timer(uv_timer_t *t) {
  fleet__pool_t *p = FLEET__CONTAINER_OF(t, fleet__pool_t, requeue_timer);

  p->requeue_at = 0;
  fleet__pool_rebalance(p);
}

void fleet__pool_requeue_wait(fleet__pool_t *p, uint64_t ms) {
  uint64_t at = uv_now(p->base.loop) + ms;

  if (p->base.closing || !p->timers_open || p->state == FLEET__POOL_SHUTDOWN)
    return;
  if (p->requeue_at != 0 && p->requeue_at <= at &&
      uv_is_active((uv_handle_t *)&p->requeue_timer))
    return;
  p->requeue_at = at;
  uv_timer_start(&p->requeue_timer, pool_on_requeue_timer, ms, 0);
}
