/* pool.c -- the pool node's life: init with its options, its workers,
 * close. The node's place in the pool (join, keep-alives) is in
 * pool_member.c, its event list and state in pool_events.c, rebalancing
 * in pool_rebalance.c over the routing of pool_route.c, the jobs on local
 * workers in pool_jobs.c, a worker's removal in pool_worker.c and the
 * calls a user makes on a node in pool_calls.c; docs/pool.md states the
 * guarantees. Calls run one way between them: this file, pool_member.c,
 * pool_events.c, then the others. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_int.h"

/* The smallest worker TTL, in ms. */
#define POOL_TTL_MIN_MS 100
/* The longest first requeue backoff, in ms. */
#define POOL_REQUEUE_BACKOFF_MAX_MS 3600000

static const char *const pool_state_names[] = {
    FLEET__POOL_STATE_MAP(FLEET__NAME_XX)};
static const char *const pool_stop_names[] = {
    FLEET_POOL_STOP_REASON_MAP(FLEET__NAME_XX)};

const char *fleet__pool_state_name(fleet__pool_state_t state) {
  return FLEET__NAME_AT(pool_state_names, state);
}

const char *fleet_pool_stop_reason_name(int reason) {
  return FLEET__NAME_AT(pool_stop_names, reason);
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
  o->max_requeues = 5;
  o->requeue_backoff_ms = 1000;
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
  if (out->max_requeues == 0)
    out->max_requeues = d.max_requeues;
  if (out->requeue_backoff_ms == 0)
    out->requeue_backoff_ms = d.requeue_backoff_ms;
  if (out->worker_ttl_ms < POOL_TTL_MIN_MS ||
      out->worker_ttl_ms > UINT32_MAX / 8 ||
      out->ack_grace_ms > UINT32_MAX / 4 ||
      out->requeue_backoff_ms > POOL_REQUEUE_BACKOFF_MAX_MS)
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

  if ((err = fleet__handle_init_begin(node, client)) != 0 ||
      (err = fleet__str_check(pool, FLEET__NAME_MAX, &pool_len)) != 0)
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
  if (err == 0 && (err = fleet__handle_init(&p->base, &pool_vt, client,
                                            (fleet_handle_t *)node)) != 0)
    free(p);
  if (err != 0) {
    free(made);
    return err;
  }
  fleet__list_init(&p->waiting);
  fleet__list_init(&p->workers);
  c = p->base.client;
  p->pub = node;
  p->opts = opts;
  p->base.error_cb = opts.error_cb;
  p->rev = -1;
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
  fleet__handle_timer_init(&p->base, &p->requeue_timer);
  p->timers_open = 1;
  /* Results of dispatches come through the event list: every node,
   * client-only too, listens. The wake-up on subscription reads it. */
  err = fleet__handle_subscribe(&p->base, p->wake.base, p->wake.len,
                                fleet__pool_on_wake, p, &p->sub);
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
      handler->start_cb == NULL || handler->stop_cb == NULL ||
      p->opts.client_only)
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
  fleet__list_insert_tail(&p->workers, &w->node);
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

  fleet__pool_keepalive_stop(p);
  fleet__reg_stop(&p->reg);
  if (p->timers_open) {
    fleet__handle_uv_close(&p->base, (uv_handle_t *)&p->join_timer);
    fleet__handle_uv_close(&p->base, (uv_handle_t *)&p->remove_timer);
    fleet__handle_uv_close(&p->base, (uv_handle_t *)&p->lapse_timer);
    fleet__handle_uv_close(&p->base, (uv_handle_t *)&p->wait_timer);
    fleet__handle_uv_close(&p->base, (uv_handle_t *)&p->requeue_timer);
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

  fleet__pool_set_state(p, FLEET__POOL_CLOSING);
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
  fleet__pool_worker_t *w;
  struct fleet_pool_job_s *job;

  FLEET__LIST_FOREACH_DATA (w, &p->workers, fleet__pool_worker_t, node) {
    while ((job = fleet__pool_first_job(w)) != NULL)
      fleet__pool_job_free(job);
    w->pub->internal_ = NULL;
    free(w->id);
    free(w);
  }
  fleet__pool_reports_free(p);
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
  return fleet__handle_close_of(node, FLEET_HANDLE_POOL_NODE, cb);
}

/* ------------------------------------------------------------------------ */
/* The handles made on a node                                               */

int fleet__pool_child_init(fleet_pool_node_t *node, fleet_handle_t *pub,
                           const fleet__handle_vt_t *vt, size_t size,
                           const char *name, size_t max, uint32_t ms,
                           fleet_error_cb error_cb, fleet__pool_child_t **out) {
  fleet__pool_t *p = fleet__pool_of(node);
  fleet__pool_child_t *c;
  size_t len;
  int err;

  if ((err = fleet__handle_init_begin(pub, p != NULL ? p->base.client->pub
                                                     : NULL)) != 0)
    return err;
  if (ms < FLEET_POOL_TICK_MIN_MS)
    return FLEET_EINVAL;
  if ((err = fleet__str_check(name, max, &len)) != 0 ||
      (err = fleet__handle_usable(&p->base)) != 0)
    return err;
  if ((c = calloc(1, size)) == NULL)
    return FLEET_ENOMEM;
  if ((err = fleet__handle_init(&c->base, vt, p->base.client->pub, pub)) != 0) {
    free(c);
    return err;
  }
  c->base.error_cb = error_cb;
  c->name_len = len;
  c->name = fleet__memdup(name, len);
  c->tag.base = fleet__memdup(p->tag.base, p->tag.len);
  if (c->name == NULL || c->tag.base == NULL) {
    fleet__pool_child_abort(c);
    return FLEET_ENOMEM;
  }
  c->tag.len = c->tag.cap = p->tag.len;
  *out = c;
  return 0;
}

void fleet__pool_child_abort(fleet__pool_child_t *c) {
  fleet__handle_abort(&c->base);
  c->base.vt->free(&c->base);
}

void fleet__pool_child_free(fleet__pool_child_t *c) {
  fleet__key_free(&c->tag);
  fleet__args_free(&c->args);
  free(c->name);
  free(c);
}
