/* pool_calls.c -- the calls a user makes on a pool node: dispatch (admit,
 * assign, then wait for the owner's start result), notify, stop and
 * shutdown; the queries are in pool_inspect.c. Each is one static call (a
 * fleet__call_t: its op, its reply reader, the fail hook of its callback's
 * shape) on the request base.
 *
 * A dispatch is a request in three phases: read the membership when the
 * node has none (or its revision was refused), send POOL_DISPATCH with
 * the owner routed over it, then wait for the start result, which comes
 * back as an event on this node's list, up to 2 x ack grace. Waiting
 * dispatches are kept in deadline order (they all wait as long), under
 * one timer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_int.h"

/* How many times a dispatch reads the membership again after its revision
 * was refused, before it gives up with FLEET_EUNAVAILABLE. */
#define POOL_DISPATCH_TRIES 16

/* ------------------------------------------------------------------------ */
/* Fail hooks, one per callback shape                                       */

/* Gives back what a dispatch owns: its copies, its place among the
 * waiting dispatches. Nothing for the other calls. */
static void pool_req_release(fleet__pool_req_t *req) {
  fleet__pool_t *p = (fleet__pool_t *)req->base.handle;

  if (req->unsent) {
    req->unsent = 0;
    /* A start result left for the next dispatch call to take: no call
     * goes now, so the node reads its list. */
    if (--p->dispatch_queued == 0 && p->take_result != 0) {
      p->take_result = 0;
      (void)fleet__pool_took(p, NULL);
    }
  }
  if (req->take != 0) {
    /* Its call, which took a start result, is forgotten: read instead. */
    req->take = 0;
    (void)fleet__pool_took(p, NULL);
  }
  if (req->batched) {
    fleet__batch_remove(req->base.handle->client, &req->item);
    req->batched = 0;
    fleet__handle_unhold(req->base.handle);
  }
  free(req->owner);
  req->owner = NULL;
  if (req->waiting) {
    fleet__list_remove(&req->wnode);
    req->waiting = 0;
  }
  free(req->key);
  free(req->payload);
  req->key = req->payload = NULL;
}

static void pool_fail_status(fleet__req_t *r, int status) {
  pool_req_release((fleet__pool_req_t *)r);
  fleet__call_fail_status(r, status);
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                 */

static void pool_dispatch_read(fleet__req_t *r, int status,
                               const fleet__reply_t *reply);

static const fleet__call_t pool_dispatch_call = {
    "pool.dispatch", FLEET__OP_POOL_DISPATCH, pool_dispatch_read,
    pool_fail_status};

/* The admissions of one client's dispatches made in one loop phase go in
 * one POOL_DISPATCH call per pool node (the batcher), six arguments and
 * two reply elements each. The call starts with the node's id, nonce and
 * the token of a start result it takes from the node's list ("0": none;
 * pool_events.c, "Events in the wake-up"), and its reply with whether it
 * took it and whether events are left. */
static void pool_dispatch_fill_group(fleet__batch_item_t *it,
                                     fleet_bytes_t *keys, fleet_bytes_t *args) {
  fleet__pool_req_t *req = FLEET__CONTAINER_OF(it, fleet__pool_req_t, item);
  fleet__pool_t *p = (fleet__pool_t *)req->base.handle;

  keys[0] = fleet__key_bytes(&p->tag);
  req->take = p->take_result;
  p->take_result = 0;
  snprintf(req->take_s, sizeof(req->take_s), "%llu",
           (unsigned long long)req->take);
  args[0] = (fleet_bytes_t){p->node_id, p->node_id_len};
  args[1] = (fleet_bytes_t){p->nonce, strlen(p->nonce)};
  args[2] = (fleet_bytes_t){req->take_s, strlen(req->take_s)};
}

static void pool_dispatch_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                               fleet_bytes_t *args) {
  fleet__pool_req_t *req = FLEET__CONTAINER_OF(it, fleet__pool_req_t, item);
  fleet__pool_t *p = (fleet__pool_t *)req->base.handle;

  (void)keys;
  if (req->unsent) {
    req->unsent = 0;
    p->dispatch_queued--;
  }
  args[0] = (fleet_bytes_t){req->key, req->key_len};
  args[1] = (fleet_bytes_t){req->payload, req->payload_len};
  args[2] = (fleet_bytes_t){req->rev_s, strlen(req->rev_s)};
  args[3] = (fleet_bytes_t){req->owner, strlen(req->owner)};
  args[4] = (fleet_bytes_t){p->node_id, p->node_id_len};
  args[5] = (fleet_bytes_t){req->max_s, strlen(req->max_s)};
}

static void pool_dispatch_done(fleet__batch_item_t *it, int status,
                               const fleet__reply_t *head,
                               const fleet__reply_t *elem, uint64_t sent);

static const fleet__batch_kind_t pool_dispatch_kind = {
    .op = FLEET__OP_POOL_DISPATCH,
    .group_keys = 1,
    .group_args = 3,
    .item_args = 6,
    .reply_head = 2,
    .item_reply = 2,
    .max_items = 128,
    .fill_group = pool_dispatch_fill_group,
    .fill = pool_dispatch_fill,
    .done = pool_dispatch_done,
};

/* Sends the backend call of the dispatch `req` for its phase: the
 * membership first when the node has none (or none with a worker), then
 * the admission, on the batcher. */
static int pool_dispatch_send(fleet__pool_t *p, fleet__pool_req_t *req) {
  fleet_bytes_t tag = fleet__key_bytes(&p->tag);
  const char *owner = NULL;
  int err;

  if (p->rev >= 0) {
    owner = fleet__pool_route(p, req->key, req->key_len);
    if (owner == NULL && req->members)
      return FLEET_ENOTFOUND;
    if (owner == NULL)
      p->rev = -1; /* no worker as far as the node knows: read again */
  }
  req->members = owner == NULL;
  if (owner == NULL) {
    err = fleet__args_begin(&p->args, 0, 0);
    return err != 0 ? err
                    : fleet__req_send(&req->base, FLEET__OP_POOL_MEMBERS, &tag,
                                      1, p->args.argv, p->args.argc);
  }
  if (p->base.client->closing)
    return FLEET_ECLOSING;
  free(req->owner);
  if ((req->owner = fleet__strdup(owner)) == NULL)
    return FLEET_ENOMEM;
  snprintf(req->rev_s, sizeof(req->rev_s), "%lld", (long long)p->rev);
  snprintf(req->max_s, sizeof(req->max_s), "%llu",
           (unsigned long long)(p->opts.max_queued_jobs == FLEET_POOL_UNLIMITED
                                    ? 0
                                    : p->opts.max_queued_jobs));
  err = fleet__batch_now(p->base.client, &req->item, &pool_dispatch_kind, p);
  if (err == 0) {
    req->batched = 1;
    if (!req->unsent) {
      req->unsent = 1;
      p->dispatch_queued++;
    }
    fleet__handle_hold(&p->base);
  }
  return err;
}

/* The answer of POOL_DISPATCH for one dispatch, its two elements: admitted
 * (the dispatch waits for its start result), or why not. Returns 0 or the
 * dispatch's error. */
static int pool_dispatch_admitted(fleet__pool_t *p, fleet__pool_req_t *req,
                                  const fleet__reply_t *elem) {
  int64_t code;
  uint64_t token;

  if (fleet__reply_i64(&elem[0], &code) != 0 ||
      fleet__reply_u64(&elem[1], &token) != 0)
    return FLEET_EPROTO;
  switch (code) {
    case 1:
      fleet__metrics_add(p->base.metrics, FLEET_METRIC_POOL_DISPATCHES, 1);
      req->token = token;
      req->deadline = uv_now(p->base.loop) + 2 * (uint64_t)p->opts.ack_grace_ms;
      req->waiting = 1;
      fleet__list_insert_tail(&p->waiting, &req->wnode);
      fleet__pool_wait_check(p);
      return 0;
    case 0:
      return FLEET_EEXIST;
    case -2:
      return FLEET_EBUSY;
    case -1:
      if (++req->tries >= POOL_DISPATCH_TRIES)
        return FLEET_EUNAVAILABLE;
      p->rev = -1;
      return pool_dispatch_send(p, req);
    default:
      return FLEET_EPROTO;
  }
}

static void pool_dispatch_read(fleet__req_t *r, int status,
                               const fleet__reply_t *reply) {
  fleet__pool_req_t *req = (fleet__pool_req_t *)r;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;

  /* Only the membership is read with a call of the dispatch's own. */
  if (status == 0)
    status = fleet__pool_set_members(p, reply);
  if (status == 0)
    status = pool_dispatch_send(p, req);
  if (status != 0)
    fleet__call_finish(r, status);
}

static void pool_dispatch_done(fleet__batch_item_t *it, int status,
                               const fleet__reply_t *head,
                               const fleet__reply_t *elem, uint64_t sent) {
  fleet__pool_req_t *req = FLEET__CONTAINER_OF(it, fleet__pool_req_t, item);
  fleet__pool_t *p = (fleet__pool_t *)req->base.handle;

  (void)sent;
  req->batched = 0;
  if (req->take != 0) {
    /* Its call took a start result from the node's list. */
    req->take = 0;
    (void)fleet__pool_took(p, status == 0 ? head : NULL);
  }
  /* A closing node's base cancels the dispatch: it tells the user. */
  if (!p->base.closing) {
    if (status == 0)
      status = pool_dispatch_admitted(p, req, elem);
    if (status != 0)
      fleet__call_finish(&req->base, status);
  }
  fleet__handle_unhold(&p->base);
}

/* ------------------------------------------------------------------------ */
/* Timeouts of the dispatches waiting for their start result                */

static void pool_on_wait_timer(uv_timer_t *t) {
  fleet__pool_wait_check(FLEET__CONTAINER_OF(t, fleet__pool_t, wait_timer));
}

void fleet__pool_wait_check(fleet__pool_t *p) {
  uint64_t now = uv_now(p->base.loop);
  fleet__pool_req_t *req;

  while ((req = fleet__pool_first_waiting(p)) != NULL && req->deadline <= now &&
         !p->base.closing)
    fleet__call_finish(&req->base, FLEET_ETIMEDOUT);
  if (req != NULL && p->timers_open)
    uv_timer_start(&p->wait_timer, pool_on_wait_timer, req->deadline - now, 0);
}

/* ------------------------------------------------------------------------ */
/* Notify, stop, shutdown                                                   */

/* Notify and stop: 1 done, 0 no such job, else the job is between
 * owners. */
static void pool_count_read(fleet__req_t *r, int status,
                            const fleet__reply_t *reply) {
  int64_t n = 0;

  if (status == 0 && fleet__reply_i64(reply, &n) != 0)
    status = FLEET_EPROTO;
  else if (status == 0)
    status = n == 1 ? 0 : n == 0 ? FLEET_ENOTFOUND : FLEET_EBUSY;
  fleet__call_finish(r, status);
}

static void pool_shutdown_read(fleet__req_t *r, int status,
                               const fleet__reply_t *reply) {
  if (status == 0 && reply->type != FLEET__REPLY_INT)
    status = FLEET_EPROTO;
  fleet__call_finish(r, status);
}

static const fleet__call_t pool_notify_call = {
    "pool.notify", FLEET__OP_POOL_NOTIFY, pool_count_read, pool_fail_status};
static const fleet__call_t pool_stop_call = {
    "pool.stop_job", FLEET__OP_POOL_STOP, pool_count_read, pool_fail_status};
static const fleet__call_t pool_shutdown_call = {
    "pool.shutdown", FLEET__OP_POOL_SHUTDOWN, pool_shutdown_read,
    pool_fail_status};
/* ------------------------------------------------------------------------ */
/* The calls                                                                */

/* The entry of a call on `node`: checks the node, the callback, the key
 * (when `need_key`: the name rule, its length in `*key_len`) and the
 * payload (when not NULL), then that the node takes calls. Returns the
 * node, or NULL and the error in `*err`; nothing is sent. */
static fleet__pool_t *pool_enter(fleet_pool_node_t *node, int has_cb,
                                 int need_key, const char *key, size_t *key_len,
                                 const fleet_bytes_t *payload, int *err) {
  fleet__pool_t *p = fleet__pool_of(node);

  *err = 0;
  if (p == NULL || !has_cb)
    *err = FLEET_EINVAL;
  else if (need_key)
    *err = fleet__str_check(key, FLEET_POOL_KEY_MAX, key_len);
  if (*err == 0 && payload != NULL) {
    if (payload->len > 0 && payload->base == NULL)
      *err = FLEET_EINVAL;
    else if (payload->len > FLEET_POOL_PAYLOAD_MAX)
      *err = FLEET_E2BIG;
  }
  if (*err == 0)
    *err = fleet__pool_usable(p);
  return *err == 0 ? p : NULL;
}

int fleet__pool_key_call(fleet_pool_node_t *node, const fleet__call_t *call,
                         const char *key, const fleet_bytes_t *payload,
                         fleet__fn_t cb, void *user_data) {
  size_t len = 0;
  int err;
  fleet__pool_t *p = pool_enter(node, cb != NULL, 1, key, &len, payload, &err);

  if (p == NULL ||
      (err = fleet__args_begin(&p->args, payload != NULL ? 2 : 1, 0)) != 0)
    return err;
  fleet__args_bytes(&p->args, key, len);
  if (payload != NULL)
    fleet__args_bytes(&p->args, payload->base, payload->len);
  return fleet__pool_call(p, call, cb, user_data);
}

int fleet__pool_plain_call(fleet_pool_node_t *node, const fleet__call_t *call,
                           fleet__fn_t cb, void *user_data) {
  int err;
  fleet__pool_t *p = pool_enter(node, cb != NULL, 0, NULL, NULL, NULL, &err);

  if (p == NULL || (err = fleet__args_begin(&p->args, 0, 0)) != 0)
    return err;
  return fleet__pool_call(p, call, cb, user_data);
}

int fleet_pool_dispatch(fleet_pool_node_t *node, const char *key,
                        fleet_bytes_t payload, fleet_status_cb cb,
                        void *user_data) {
  fleet__pool_req_t *req;
  size_t len = 0;
  int err;
  fleet__pool_t *p = pool_enter(node, cb != NULL, 1, key, &len, &payload, &err);

  if (p == NULL)
    return err;
  req = (fleet__pool_req_t *)fleet__call_new(&p->base, &pool_dispatch_call,
                                             (fleet__fn_t)cb, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->key = fleet__memdup(key, len);
  req->key_len = len;
  req->payload = fleet__memdup(payload.base, payload.len);
  req->payload_len = payload.len;
  err = req->key == NULL || req->payload == NULL ? FLEET_ENOMEM
                                                 : pool_dispatch_send(p, req);
  if (err != 0) {
    pool_req_release(req);
    fleet__req_free(&req->base);
  }
  return err;
}

int fleet_pool_notify(fleet_pool_node_t *node, const char *key,
                      fleet_bytes_t payload, fleet_status_cb cb,
                      void *user_data) {
  return fleet__pool_key_call(node, &pool_notify_call, key, &payload,
                              (fleet__fn_t)cb, user_data);
}

int fleet_pool_stop_job(fleet_pool_node_t *node, const char *key,
                        fleet_status_cb cb, void *user_data) {
  return fleet__pool_key_call(node, &pool_stop_call, key, NULL, (fleet__fn_t)cb,
                              user_data);
}

int fleet_pool_shutdown(fleet_pool_node_t *node, fleet_status_cb cb,
                        void *user_data) {
  return fleet__pool_plain_call(node, &pool_shutdown_call, (fleet__fn_t)cb,
                                user_data);
}
