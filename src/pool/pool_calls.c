/* pool_calls.c -- the calls a user makes on a pool node: dispatch (admit,
 * assign, then wait for the owner's start result), notify, stop, the
 * queries and shutdown.
 *
 * A dispatch is a request in three phases: read the membership when the
 * node has none (or its revision was refused), send POOL_DISPATCH with
 * the owner routed over it, then wait for the start result, which comes
 * back as an event on this node's list, up to 2 x ack grace. Waiting
 * dispatches are kept in deadline order (they all wait as long), under
 * one timer. */
#include <stdlib.h>
#include <string.h>

#include "pool_int.h"

/* How many times a dispatch reads the membership again after its revision
 * was refused, before it gives up with FLEET_EUNAVAILABLE. */
#define POOL_DISPATCH_TRIES 16

enum {
  POOL_CALL_MEMBERS, /* a dispatch reading the membership */
  POOL_CALL_DISPATCH,
  POOL_CALL_NOTIFY,
  POOL_CALL_STOP,
  POOL_CALL_KEYS,
  POOL_CALL_PAYLOAD,
  POOL_CALL_WORKERS,
  POOL_CALL_SHUTDOWN,
  POOL_CALL_JOBS
};

static void pool_on_reply(fleet__req_t *r, int status,
                          const fleet__reply_t *reply);

/* ------------------------------------------------------------------------ */
/* Finishing                                                                */

static void pool_waiting_unlink(fleet__pool_req_t *req) {
  if (!req->waiting)
    return;
  fleet__list_remove(&req->wnode);
  req->waiting = 0;
}

/* Runs the callback of a finished request with `status` and no results
 * (the request is done already). */
static void pool_call_back(fleet__pool_t *p, fleet__pool_req_t *req,
                           int status) {
  fleet_pool_node_t *node = p->pub;
  void *data = req->base.user_data;
  fleet_bytes_t none = {NULL, 0};

  switch (req->kind) {
    case POOL_CALL_KEYS:
      req->cb.keys(node, status, NULL, 0, data);
      break;
    case POOL_CALL_PAYLOAD:
      req->cb.payload(node, status, none, data);
      break;
    case POOL_CALL_WORKERS:
      req->cb.workers(node, status, NULL, 0, data);
      break;
    case POOL_CALL_JOBS:
      req->cb.jobs(node, status, NULL, 0, data);
      break;
    default:
      req->cb.status((fleet_handle_t *)node, status, data);
      break;
  }
}

static void pool_req_release(fleet__pool_t *p, fleet__pool_req_t *req) {
  pool_waiting_unlink(req);
  free(req->key);
  free(req->payload);
  req->key = req->payload = NULL;
}

static void pool_finish(fleet__pool_t *p, fleet__pool_req_t *req, int status) {
  pool_req_release(p, req);
  fleet__req_done(&req->base);
  pool_call_back(p, req, status);
}

static void pool_cancel(fleet__req_t *r, int status) {
  fleet__pool_req_t *req = (fleet__pool_req_t *)r;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;

  pool_req_release(p, req);
  pool_call_back(p, req, status);
}

/* ------------------------------------------------------------------------ */
/* Sending                                                                  */

/* Sends the call of `req` for its kind, with the args in p->args. */
static int pool_send(fleet__pool_t *p, fleet__pool_req_t *req) {
  static const fleet__op_t ops[] = {
      FLEET__OP_POOL_MEMBERS, FLEET__OP_POOL_DISPATCH, FLEET__OP_POOL_NOTIFY,
      FLEET__OP_POOL_STOP,    FLEET__OP_POOL_JOBS,     FLEET__OP_POOL_PAYLOAD,
      FLEET__OP_POOL_MEMBERS, FLEET__OP_POOL_SHUTDOWN, FLEET__OP_POOL_JOBS};
  fleet_bytes_t tag = fleet__key_bytes(&p->tag);

  return fleet__req_send(&req->base, ops[req->kind], &tag, 1, p->args.argv,
                         p->args.argc);
}

/* Builds the call of the dispatch `req` for its phase and sends it. */
static int pool_dispatch_send(fleet__pool_t *p, fleet__pool_req_t *req) {
  const char *owner;
  int err;

  if (p->rev < 0) {
    req->kind = POOL_CALL_MEMBERS;
    err = fleet__args_begin(&p->args, 0, 0);
    return err != 0 ? err : pool_send(p, req);
  }
  owner = fleet__pool_route(p, req->key, req->key_len);
  if (owner == NULL && req->kind != POOL_CALL_MEMBERS) {
    /* No worker as far as the node knows: read the membership first. */
    p->rev = -1;
    return pool_dispatch_send(p, req);
  }
  if (owner == NULL)
    return FLEET_ENOTFOUND;
  req->kind = POOL_CALL_DISPATCH;
  if ((err = fleet__args_begin(&p->args, 6, 2)) != 0)
    return err;
  fleet__args_bytes(&p->args, req->key, req->key_len);
  fleet__args_bytes(&p->args, req->payload, req->payload_len);
  fleet__args_i64(&p->args, p->rev);
  fleet__args_str(&p->args, owner);
  fleet__args_bytes(&p->args, p->node_id, p->node_id_len);
  fleet__args_u64(&p->args, p->opts.max_queued_jobs == FLEET_POOL_UNLIMITED
                                ? 0
                                : p->opts.max_queued_jobs);
  return pool_send(p, req);
}

/* Checks a node for a call and makes its request; `key` (may be NULL) and
 * `payload` are copied. Returns 0 and the request, or an error. */
static int pool_req_make(fleet_pool_node_t *node, int kind, const char *key,
                         const fleet_bytes_t *payload, int has_cb,
                         void *user_data, fleet__pool_req_t **out) {
  fleet__pool_t *p = fleet__pool_of(node);
  fleet__pool_req_t *req;
  size_t key_len = 0;
  int err;

  if (p == NULL || !has_cb)
    return FLEET_EINVAL;
  if (key != NULL || kind == POOL_CALL_DISPATCH || kind == POOL_CALL_NOTIFY ||
      kind == POOL_CALL_STOP || kind == POOL_CALL_PAYLOAD)
    if ((err = fleet__str_check(key, FLEET_POOL_KEY_MAX, &key_len)) != 0)
      return err;
  if (payload != NULL) {
    if (payload->len > 0 && payload->base == NULL)
      return FLEET_EINVAL;
    if (payload->len > FLEET_POOL_PAYLOAD_MAX)
      return FLEET_E2BIG;
  }
  if ((err = fleet__handle_usable(&p->base)) != 0)
    return err;
  if (p->state == FLEET__POOL_SHUTDOWN)
    return FLEET_ECLOSING;
  if (p->state == FLEET__POOL_REFUSED)
    return FLEET_ECONFLICT;
  req = (fleet__pool_req_t *)fleet__req_new(&p->base, pool_on_reply,
                                            pool_cancel, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->kind = kind;
  if (key != NULL) {
    req->key = fleet__memdup(key, key_len);
    req->key_len = key_len;
  }
  if (payload != NULL) {
    req->payload = fleet__memdup(payload->base, payload->len);
    req->payload_len = payload->len;
  }
  if ((key != NULL && req->key == NULL) ||
      (payload != NULL && req->payload == NULL)) {
    pool_req_release(p, req);
    fleet__req_free(&req->base);
    return FLEET_ENOMEM;
  }
  *out = req;
  return 0;
}

/* Sends the first call of a request made by pool_req_make(), or gives the
 * request back. */
static int pool_req_start(fleet__pool_t *p, fleet__pool_req_t *req) {
  int err;

  if (req->kind == POOL_CALL_DISPATCH) {
    err = pool_dispatch_send(p, req);
  } else {
    err = fleet__args_begin(&p->args, req->key != NULL ? 2 : 0, 0);
    if (err == 0 && req->key != NULL) {
      fleet__args_bytes(&p->args, req->key, req->key_len);
      if (req->kind == POOL_CALL_NOTIFY)
        fleet__args_bytes(&p->args, req->payload, req->payload_len);
    }
    if (err == 0)
      err = pool_send(p, req);
  }
  if (err != 0) {
    pool_req_release(p, req);
    fleet__req_free(&req->base);
  }
  return err;
}

/* ------------------------------------------------------------------------ */
/* Replies                                                                  */

static int pool_reply_dispatch(fleet__pool_t *p, fleet__pool_req_t *req,
                               const fleet__reply_t *reply) {
  int64_t code;
  uint64_t token;

  if (!fleet__reply_is_array(reply, 2) ||
      fleet__reply_i64(&reply->elem[0], &code) != 0 ||
      fleet__reply_u64(&reply->elem[1], &token) != 0)
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

static void pool_reply_keys(fleet__pool_t *p, fleet__pool_req_t *req,
                            const fleet__reply_t *reply) {
  fleet_pool_keys_cb cb = req->cb.keys;
  void *data = req->base.user_data;
  fleet_bytes_t *keys;
  size_t i, n;

  if (reply->type != FLEET__REPLY_ARRAY || reply->nelem % 2 != 0) {
    pool_finish(p, req, FLEET_EPROTO);
    return;
  }
  n = reply->nelem / 2;
  keys = malloc((n > 0 ? n : 1) * sizeof(*keys));
  if (keys == NULL) {
    pool_finish(p, req, FLEET_ENOMEM);
    return;
  }
  for (i = 0; i < n; i++) {
    keys[i].base = reply->elem[2 * i].str;
    keys[i].len = reply->elem[2 * i].len;
  }
  pool_req_release(p, req);
  fleet__req_done(&req->base);
  cb(p->pub, 0, keys, n, data);
  free(keys);
}

static void pool_reply_workers(fleet__pool_t *p, fleet__pool_req_t *req,
                               const fleet__reply_t *reply) {
  fleet_pool_workers_cb cb = req->cb.workers;
  void *data = req->base.user_data;
  fleet_pool_worker_info_t *info;
  size_t i, n;
  int err = fleet__pool_set_members(p, reply);

  if (err != 0) {
    pool_finish(p, req, err);
    return;
  }
  n = p->nmembers;
  if ((info = malloc((n > 0 ? n : 1) * sizeof(*info))) == NULL) {
    pool_finish(p, req, FLEET_ENOMEM);
    return;
  }
  for (i = 0; i < n; i++) {
    info[i].id = p->member_ids[i];
    info[i].node_id = p->member_nodes[i];
    info[i].created = p->member_created[i];
    info[i].local = strcmp(p->member_nodes[i], p->node_id) == 0;
  }
  pool_req_release(p, req);
  fleet__req_done(&req->base);
  cb(p->pub, 0, info, n, data);
  free(info);
}

/* Reads a token from its decimal digits. Returns 0 or -1. */
static int pool_token(fleet_bytes_t b, uint64_t *out) {
  const char *s = b.base;
  uint64_t v = 0;
  size_t i;

  if (b.len == 0 || b.len > 19)
    return -1;
  for (i = 0; i < b.len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  *out = v;
  return 0;
}

static void pool_reply_jobs(fleet__pool_t *p, fleet__pool_req_t *req,
                            const fleet__reply_t *reply) {
  fleet_pool_jobs_cb cb = req->cb.jobs;
  void *data = req->base.user_data;
  fleet_pool_job_info_t *jobs;
  size_t i, n, room = 0, used = 0;
  char *ids;

  if (reply->type != FLEET__REPLY_ARRAY || reply->nelem % 2 != 0) {
    pool_finish(p, req, FLEET_EPROTO);
    return;
  }
  n = reply->nelem / 2;
  for (i = 0; i < n; i++)
    room += reply->elem[2 * i + 1].len + 1;
  jobs = malloc((n > 0 ? n : 1) * sizeof(*jobs));
  ids = malloc(room > 0 ? room : 1);
  for (i = 0; jobs != NULL && ids != NULL && i < n; i++) {
    const fleet__reply_t *k = &reply->elem[2 * i],
                         *rec = &reply->elem[2 * i + 1];
    fleet_bytes_t token, worker;
    char state;

    if (k->type != FLEET__REPLY_STR || rec->type != FLEET__REPLY_STR ||
        fleet__pool_parse_owner(rec, &token, &state, &worker) != 0 ||
        pool_token(token, &jobs[i].token) != 0)
      break;
    jobs[i].key.base = k->str;
    jobs[i].key.len = k->len;
    memcpy(ids + used, worker.base, worker.len);
    ids[used + worker.len] = '\0';
    jobs[i].worker_id = ids + used;
    used += worker.len + 1;
  }
  if (jobs == NULL || ids == NULL || i < n) {
    free(jobs);
    free(ids);
    pool_finish(p, req,
                jobs == NULL || ids == NULL ? FLEET_ENOMEM : FLEET_EPROTO);
    return;
  }
  pool_req_release(p, req);
  fleet__req_done(&req->base);
  cb(p->pub, 0, jobs, n, data);
  free(jobs);
  free(ids);
}

static void pool_on_reply(fleet__req_t *r, int status,
                          const fleet__reply_t *reply) {
  fleet__pool_req_t *req = (fleet__pool_req_t *)r;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  int64_t n = 0;

  if (status != 0) {
    pool_finish(p, req, status);
    return;
  }
  switch (req->kind) {
    case POOL_CALL_MEMBERS:
      status = fleet__pool_set_members(p, reply);
      if (status == 0)
        status = pool_dispatch_send(p, req);
      break;
    case POOL_CALL_DISPATCH:
      status = pool_reply_dispatch(p, req, reply);
      break;
    case POOL_CALL_NOTIFY:
    case POOL_CALL_STOP:
      if (fleet__reply_i64(reply, &n) != 0)
        status = FLEET_EPROTO;
      else
        status = n == 1 ? 0 : n == 0 ? FLEET_ENOTFOUND : FLEET_EBUSY;
      pool_finish(p, req, status);
      return;
    case POOL_CALL_KEYS:
      pool_reply_keys(p, req, reply);
      return;
    case POOL_CALL_PAYLOAD:
      if (reply->type == FLEET__REPLY_NIL) {
        pool_finish(p, req, FLEET_ENOTFOUND);
      } else if (reply->type != FLEET__REPLY_STR) {
        pool_finish(p, req, FLEET_EPROTO);
      } else {
        fleet_pool_payload_cb cb = req->cb.payload;
        fleet_bytes_t b = {reply->str, reply->len};
        void *data = req->base.user_data;

        pool_req_release(p, req);
        fleet__req_done(r);
        cb(p->pub, 0, b, data);
      }
      return;
    case POOL_CALL_WORKERS:
      pool_reply_workers(p, req, reply);
      return;
    case POOL_CALL_JOBS:
      pool_reply_jobs(p, req, reply);
      return;
    default:
      pool_finish(p, req, reply->type == FLEET__REPLY_INT ? 0 : FLEET_EPROTO);
      return;
  }
  if (status != 0)
    pool_finish(p, req, status);
}

/* ------------------------------------------------------------------------ */
/* Start results and timeouts                                               */

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
      pool_finish(p, req, status);
      return;
    }
}

static void pool_on_wait_timer(uv_timer_t *t) {
  fleet__pool_wait_check(FLEET__CONTAINER_OF(t, fleet__pool_t, wait_timer));
}

void fleet__pool_wait_check(fleet__pool_t *p) {
  uint64_t now = uv_now(p->base.loop);
  fleet__pool_req_t *req;

  while ((req = fleet__pool_first_waiting(p)) != NULL && req->deadline <= now &&
         !p->base.closing)
    pool_finish(p, req, FLEET_ETIMEDOUT);
  if (req != NULL && p->timers_open)
    uv_timer_start(&p->wait_timer, pool_on_wait_timer, req->deadline - now, 0);
}

void fleet__pool_wait_fail(fleet__pool_t *p, int status) {
  fleet__pool_req_t *req;

  while ((req = fleet__pool_first_waiting(p)) != NULL && !p->base.closing)
    pool_finish(p, req, status);
}

/* ------------------------------------------------------------------------ */
/* The calls                                                                */

int fleet_pool_dispatch(fleet_pool_node_t *node, const char *key,
                        fleet_bytes_t payload, fleet_status_cb cb,
                        void *user_data) {
  fleet__pool_req_t *req;
  int err = pool_req_make(node, POOL_CALL_DISPATCH, key, &payload, cb != NULL,
                          user_data, &req);

  if (err == 0)
    req->cb.status = cb;
  return err != 0 ? err : pool_req_start(fleet__pool_of(node), req);
}

int fleet_pool_notify(fleet_pool_node_t *node, const char *key,
                      fleet_bytes_t payload, fleet_status_cb cb,
                      void *user_data) {
  fleet__pool_req_t *req;
  int err = pool_req_make(node, POOL_CALL_NOTIFY, key, &payload, cb != NULL,
                          user_data, &req);

  if (err == 0)
    req->cb.status = cb;
  return err != 0 ? err : pool_req_start(fleet__pool_of(node), req);
}

int fleet_pool_stop_job(fleet_pool_node_t *node, const char *key,
                        fleet_status_cb cb, void *user_data) {
  fleet__pool_req_t *req;
  int err = pool_req_make(node, POOL_CALL_STOP, key, NULL, cb != NULL,
                          user_data, &req);

  if (err == 0)
    req->cb.status = cb;
  return err != 0 ? err : pool_req_start(fleet__pool_of(node), req);
}

int fleet_pool_job_keys(fleet_pool_node_t *node, fleet_pool_keys_cb cb,
                        void *user_data) {
  fleet__pool_req_t *req;
  int err = pool_req_make(node, POOL_CALL_KEYS, NULL, NULL, cb != NULL,
                          user_data, &req);

  if (err == 0)
    req->cb.keys = cb;
  return err != 0 ? err : pool_req_start(fleet__pool_of(node), req);
}

int fleet_pool_get_payload(fleet_pool_node_t *node, const char *key,
                           fleet_pool_payload_cb cb, void *user_data) {
  fleet__pool_req_t *req;
  int err = pool_req_make(node, POOL_CALL_PAYLOAD, key, NULL, cb != NULL,
                          user_data, &req);

  if (err == 0)
    req->cb.payload = cb;
  return err != 0 ? err : pool_req_start(fleet__pool_of(node), req);
}

int fleet_pool_workers(fleet_pool_node_t *node, fleet_pool_workers_cb cb,
                       void *user_data) {
  fleet__pool_req_t *req;
  int err = pool_req_make(node, POOL_CALL_WORKERS, NULL, NULL, cb != NULL,
                          user_data, &req);

  if (err == 0)
    req->cb.workers = cb;
  return err != 0 ? err : pool_req_start(fleet__pool_of(node), req);
}

int fleet_pool_jobs(fleet_pool_node_t *node, fleet_pool_jobs_cb cb,
                    void *user_data) {
  fleet__pool_req_t *req;
  int err = pool_req_make(node, POOL_CALL_JOBS, NULL, NULL, cb != NULL,
                          user_data, &req);

  if (err == 0)
    req->cb.jobs = cb;
  return err != 0 ? err : pool_req_start(fleet__pool_of(node), req);
}

int fleet_pool_shutdown(fleet_pool_node_t *node, fleet_status_cb cb,
                        void *user_data) {
  fleet__pool_req_t *req;
  int err = pool_req_make(node, POOL_CALL_SHUTDOWN, NULL, NULL, cb != NULL,
                          user_data, &req);

  if (err == 0)
    req->cb.status = cb;
  return err != 0 ? err : pool_req_start(fleet__pool_of(node), req);
}
