/* pool_calls.c -- the calls a user makes on a pool node: dispatch (admit,
 * assign, then wait for the owner's start result), notify, stop, the
 * queries and shutdown. Each is one static call (a fleet__call_t: its op,
 * its reply reader, the fail hook of its callback's shape) on the request
 * base.
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

/* ------------------------------------------------------------------------ */
/* Fail hooks, one per callback shape                                       */

/* Gives back what a dispatch owns: its copies, its place among the
 * waiting dispatches. Nothing for the other calls. */
static void pool_req_release(fleet__pool_req_t *req) {
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

static void pool_fail_keys(fleet__req_t *r, int status) {
  fleet_pool_keys_cb cb = (fleet_pool_keys_cb)r->cb;

  cb((fleet_pool_node_t *)r->handle->pub, status, NULL, 0, r->user_data);
}

static void pool_fail_payload(fleet__req_t *r, int status) {
  fleet_pool_payload_cb cb = (fleet_pool_payload_cb)r->cb;
  fleet_bytes_t none = {NULL, 0};

  cb((fleet_pool_node_t *)r->handle->pub, status, none, r->user_data);
}

static void pool_fail_workers(fleet__req_t *r, int status) {
  fleet_pool_workers_cb cb = (fleet_pool_workers_cb)r->cb;

  cb((fleet_pool_node_t *)r->handle->pub, status, NULL, 0, r->user_data);
}

static void pool_fail_jobs(fleet__req_t *r, int status) {
  fleet_pool_jobs_cb cb = (fleet_pool_jobs_cb)r->cb;

  cb((fleet_pool_node_t *)r->handle->pub, status, NULL, 0, r->user_data);
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                 */

static void pool_dispatch_read(fleet__req_t *r, int status,
                               const fleet__reply_t *reply);

static const fleet__call_t pool_dispatch_call = {
    "pool.dispatch", FLEET__OP_POOL_DISPATCH, pool_dispatch_read,
    pool_fail_status};

/* Sends the backend call of the dispatch `req` for its phase: the
 * membership first when the node has none (or none with a worker). */
static int pool_dispatch_send(fleet__pool_t *p, fleet__pool_req_t *req) {
  fleet_bytes_t tag = fleet__key_bytes(&p->tag);
  fleet__op_t op = FLEET__OP_POOL_MEMBERS;
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
  } else if ((err = fleet__args_begin(&p->args, 6, 2)) == 0) {
    op = req->base.call->op;
    fleet__args_bytes(&p->args, req->key, req->key_len);
    fleet__args_bytes(&p->args, req->payload, req->payload_len);
    fleet__args_i64(&p->args, p->rev);
    fleet__args_str(&p->args, owner);
    fleet__args_bytes(&p->args, p->node_id, p->node_id_len);
    fleet__args_u64(&p->args, p->opts.max_queued_jobs == FLEET_POOL_UNLIMITED
                                  ? 0
                                  : p->opts.max_queued_jobs);
  }
  return err != 0 ? err
                  : fleet__req_send(&req->base, op, &tag, 1, p->args.argv,
                                    p->args.argc);
}

/* The reply of POOL_DISPATCH: admitted (the dispatch waits for its start
 * result), or why not. Returns 0 or the dispatch's error. */
static int pool_dispatch_admitted(fleet__pool_t *p, fleet__pool_req_t *req,
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

static void pool_dispatch_read(fleet__req_t *r, int status,
                               const fleet__reply_t *reply) {
  fleet__pool_req_t *req = (fleet__pool_req_t *)r;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;

  if (status == 0 && req->members) {
    status = fleet__pool_set_members(p, reply);
    if (status == 0)
      status = pool_dispatch_send(p, req);
  } else if (status == 0) {
    status = pool_dispatch_admitted(p, req, reply);
  }
  if (status != 0)
    fleet__call_finish(r, status);
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
      fleet__call_finish(&req->base, status);
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
    fleet__call_finish(&req->base, FLEET_ETIMEDOUT);
  if (req != NULL && p->timers_open)
    uv_timer_start(&p->wait_timer, pool_on_wait_timer, req->deadline - now, 0);
}

void fleet__pool_wait_fail(fleet__pool_t *p, int status) {
  fleet__pool_req_t *req;

  while ((req = fleet__pool_first_waiting(p)) != NULL && !p->base.closing)
    fleet__call_finish(&req->base, status);
}

/* ------------------------------------------------------------------------ */
/* Replies of the other calls                                               */

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

static void pool_keys_read(fleet__req_t *r, int status,
                           const fleet__reply_t *reply) {
  fleet_pool_keys_cb cb = (fleet_pool_keys_cb)r->cb;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  void *data = r->user_data;
  fleet_bytes_t *keys = NULL;
  size_t i, n = 0;

  if (status == 0 && (reply->type != FLEET__REPLY_ARRAY || reply->nelem % 2))
    status = FLEET_EPROTO;
  if (status == 0) {
    n = reply->nelem / 2;
    if ((keys = malloc((n > 0 ? n : 1) * sizeof(*keys))) == NULL)
      status = FLEET_ENOMEM;
  }
  if (status != 0) {
    fleet__call_finish(r, status);
    return;
  }
  for (i = 0; i < n; i++) {
    keys[i].base = reply->elem[2 * i].str;
    keys[i].len = reply->elem[2 * i].len;
  }
  fleet__req_done(r);
  cb(p->pub, 0, keys, n, data);
  free(keys);
}

static void pool_payload_read(fleet__req_t *r, int status,
                              const fleet__reply_t *reply) {
  fleet_pool_payload_cb cb = (fleet_pool_payload_cb)r->cb;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  void *data = r->user_data;

  if (status == 0 && reply->type == FLEET__REPLY_NIL)
    status = FLEET_ENOTFOUND;
  else if (status == 0 && reply->type != FLEET__REPLY_STR)
    status = FLEET_EPROTO;
  if (status != 0) {
    fleet__call_finish(r, status);
    return;
  }
  fleet__req_done(r);
  cb(p->pub, 0, (fleet_bytes_t){reply->str, reply->len}, data);
}

static void pool_workers_read(fleet__req_t *r, int status,
                              const fleet__reply_t *reply) {
  fleet_pool_workers_cb cb = (fleet_pool_workers_cb)r->cb;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  void *data = r->user_data;
  fleet_pool_worker_info_t *info = NULL;
  size_t i, n = 0;

  if (status == 0)
    status = fleet__pool_set_members(p, reply);
  if (status == 0) {
    n = p->nmembers;
    if ((info = malloc((n > 0 ? n : 1) * sizeof(*info))) == NULL)
      status = FLEET_ENOMEM;
  }
  if (status != 0) {
    fleet__call_finish(r, status);
    return;
  }
  for (i = 0; i < n; i++) {
    info[i].id = p->member_ids[i];
    info[i].node_id = p->member_nodes[i];
    info[i].created = p->member_created[i];
    info[i].local = strcmp(p->member_nodes[i], p->node_id) == 0;
  }
  fleet__req_done(r);
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

static void pool_jobs_read(fleet__req_t *r, int status,
                           const fleet__reply_t *reply) {
  fleet_pool_jobs_cb cb = (fleet_pool_jobs_cb)r->cb;
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  void *data = r->user_data;
  fleet_pool_job_info_t *jobs = NULL;
  size_t i = 0, n = 0, room = 0, used = 0;
  char *ids = NULL;

  if (status == 0 && (reply->type != FLEET__REPLY_ARRAY || reply->nelem % 2))
    status = FLEET_EPROTO;
  if (status == 0) {
    n = reply->nelem / 2;
    for (i = 0; i < n; i++)
      room += reply->elem[2 * i + 1].len + 1;
    jobs = malloc((n > 0 ? n : 1) * sizeof(*jobs));
    ids = malloc(room > 0 ? room : 1);
    if (jobs == NULL || ids == NULL)
      status = FLEET_ENOMEM;
  }
  for (i = 0; status == 0 && i < n; i++) {
    const fleet__reply_t *k = &reply->elem[2 * i],
                         *rec = &reply->elem[2 * i + 1];
    fleet_bytes_t token, worker;
    char state;

    if (k->type != FLEET__REPLY_STR || rec->type != FLEET__REPLY_STR ||
        fleet__pool_parse_owner(rec, &token, &state, &worker) != 0 ||
        pool_token(token, &jobs[i].token) != 0) {
      status = FLEET_EPROTO;
      break;
    }
    jobs[i].key.base = k->str;
    jobs[i].key.len = k->len;
    memcpy(ids + used, worker.base, worker.len);
    ids[used + worker.len] = '\0';
    jobs[i].worker_id = ids + used;
    used += worker.len + 1;
  }
  if (status != 0) {
    fleet__call_finish(r, status);
  } else {
    fleet__req_done(r);
    cb(p->pub, 0, jobs, n, data);
  }
  free(jobs);
  free(ids);
}

static const fleet__call_t pool_notify_call = {
    "pool.notify", FLEET__OP_POOL_NOTIFY, pool_count_read, pool_fail_status};
static const fleet__call_t pool_stop_call = {
    "pool.stop_job", FLEET__OP_POOL_STOP, pool_count_read, pool_fail_status};
static const fleet__call_t pool_shutdown_call = {
    "pool.shutdown", FLEET__OP_POOL_SHUTDOWN, pool_shutdown_read,
    pool_fail_status};
static const fleet__call_t pool_keys_call = {
    "pool.job_keys", FLEET__OP_POOL_JOBS, pool_keys_read, pool_fail_keys};
static const fleet__call_t pool_payload_call = {
    "pool.get_payload", FLEET__OP_POOL_PAYLOAD, pool_payload_read,
    pool_fail_payload};
static const fleet__call_t pool_workers_call = {
    "pool.workers", FLEET__OP_POOL_MEMBERS, pool_workers_read,
    pool_fail_workers};
static const fleet__call_t pool_jobs_call = {"pool.jobs", FLEET__OP_POOL_JOBS,
                                             pool_jobs_read, pool_fail_jobs};

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

/* A call whose args are the job key `key`, then `payload` if not NULL. */
static int pool_key_call(fleet_pool_node_t *node, const fleet__call_t *call,
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

/* A call without args. */
static int pool_plain_call(fleet_pool_node_t *node, const fleet__call_t *call,
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
  return pool_key_call(node, &pool_notify_call, key, &payload, (fleet__fn_t)cb,
                       user_data);
}

int fleet_pool_stop_job(fleet_pool_node_t *node, const char *key,
                        fleet_status_cb cb, void *user_data) {
  return pool_key_call(node, &pool_stop_call, key, NULL, (fleet__fn_t)cb,
                       user_data);
}

int fleet_pool_get_payload(fleet_pool_node_t *node, const char *key,
                           fleet_pool_payload_cb cb, void *user_data) {
  return pool_key_call(node, &pool_payload_call, key, NULL, (fleet__fn_t)cb,
                       user_data);
}

int fleet_pool_job_keys(fleet_pool_node_t *node, fleet_pool_keys_cb cb,
                        void *user_data) {
  return pool_plain_call(node, &pool_keys_call, (fleet__fn_t)cb, user_data);
}

int fleet_pool_workers(fleet_pool_node_t *node, fleet_pool_workers_cb cb,
                       void *user_data) {
  return pool_plain_call(node, &pool_workers_call, (fleet__fn_t)cb, user_data);
}

int fleet_pool_jobs(fleet_pool_node_t *node, fleet_pool_jobs_cb cb,
                    void *user_data) {
  return pool_plain_call(node, &pool_jobs_call, (fleet__fn_t)cb, user_data);
}

int fleet_pool_shutdown(fleet_pool_node_t *node, fleet_status_cb cb,
                        void *user_data) {
  return pool_plain_call(node, &pool_shutdown_call, (fleet__fn_t)cb, user_data);
}
