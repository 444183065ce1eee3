/* pool_inspect.c -- reading a pool: the queries of a node (its pool's job
 * keys, jobs, workers, a job's payload), each one static call on the
 * node, and fleet_pool_query_workers() and fleet_pool_query_jobs(): a
 * pool read from a client without joining it (POOL_MEMBERS, POOL_JOBS),
 * for tools and dashboards. Like fleet_lock_query(): one op on the pool's
 * tag, a reply reader, the callback once; a query in flight when the
 * client closes is answered FLEET_ECANCELED by the backend. */
#include <stdlib.h>
#include <string.h>

#include "pool_int.h"

static const char *const pool_job_state_names[] = {
#define XX(name, str) str,
    FLEET_POOL_JOB_STATE_MAP(XX)
#undef XX
};

/* The state letters of the owner records, in the order of the enum. */
static const char pool_job_state_codes[] = "srmxo";

const char *fleet_pool_job_state_name(int state) {
  if (state < 0 || (size_t)state >= FLEET__ARRAY_SIZE(pool_job_state_names))
    return "unknown";
  return pool_job_state_names[state];
}

/* A query in flight: the caller's callback (of the query's type, cast
 * back by its reader) and its data. */
typedef struct {
  fleet_client_t *client;
  fleet__fn_t cb;
  void *data;
} pool_query_t;

/* Checks the arguments, then sends `op` on the tag of `pool`, with a
 * query that `on_reply` answers. Returns 0 or the call's error (nothing
 * sent). */
static int pool_query_send(fleet_client_t *client, const char *pool,
                           int have_cb, fleet__op_t op,
                           fleet__reply_cb on_reply, pool_query_t **out) {
  struct fleet__client_s *c;
  fleet__key_t tag = {0};
  fleet_bytes_t tag_bytes;
  pool_query_t *q;
  size_t len;
  int err;

  if (client == NULL || client->internal_ == NULL || !have_cb)
    return FLEET_EINVAL;
  c = client->internal_;
  err = fleet__str_check(pool, FLEET__NAME_MAX, &len);
  if (err != 0)
    return err;
  if (c->closing)
    return FLEET_ECLOSING;
  q = calloc(1, sizeof(*q));
  if (q == NULL ||
      fleet__key_build(&tag, c->prefix, c->prefix_len, pool, len, NULL) != 0) {
    err = FLEET_ENOMEM;
  } else {
    q->client = client;
    tag_bytes = fleet__key_bytes(&tag);
    err = fleet__backend_call(c->be, op, &tag_bytes, 1, NULL, 0, on_reply, q);
  }
  fleet__key_free(&tag);
  if (err != 0) {
    free(q);
    return err;
  }
  *out = q;
  return 0;
}

/* Reads {revision, worker, node, created, ...} into `w` (strings copied
 * into `ids`). Returns 0, FLEET_EPROTO or FLEET_ENOMEM. */
static int pool_read_members(const fleet__reply_t *r, uint64_t *rev,
                             fleet_pool_worker_info_t **out, char **ids,
                             size_t *n) {
  fleet_pool_worker_info_t *w;
  size_t i, size = 0, used = 0, count;
  int64_t v;
  char *s;

  if (!fleet__reply_is_array(r, 1) || r->nelem % 3 != 1 ||
      fleet__reply_i64(&r->elem[0], &v) != 0 || v < 0)
    return FLEET_EPROTO;
  for (i = 1; i < r->nelem; i++) {
    if (r->elem[i].type != FLEET__REPLY_STR)
      return FLEET_EPROTO;
    size += r->elem[i].len + 1;
  }
  count = r->nelem / 3;
  w = calloc(count + 1, sizeof(*w));
  s = malloc(size + 1);
  if (w == NULL || s == NULL) {
    free(w);
    free(s);
    return FLEET_ENOMEM;
  }
  for (i = 0; i < count; i++) {
    const fleet__reply_t *id = &r->elem[1 + 3 * i], *node = &r->elem[2 + 3 * i];

    if (fleet__reply_u64_str(&r->elem[3 + 3 * i], &w[i].created) != 0) {
      free(w);
      free(s);
      return FLEET_EPROTO;
    }
    memcpy(s + used, id->str, id->len);
    s[used + id->len] = '\0';
    w[i].id = s + used;
    used += id->len + 1;
    memcpy(s + used, node->str, node->len);
    s[used + node->len] = '\0';
    w[i].node_id = s + used;
    used += node->len + 1;
  }
  *rev = (uint64_t)v;
  *out = w;
  *ids = s;
  *n = count;
  return 0;
}

static void pool_on_query_workers(void *arg, int status,
                                  const fleet__reply_t *reply) {
  pool_query_t *q = arg;
  fleet_client_t *client = q->client;
  fleet_pool_query_workers_cb cb = (fleet_pool_query_workers_cb)q->cb;
  void *data = q->data;
  fleet_pool_worker_info_t *w = NULL;
  char *ids = NULL;
  uint64_t rev = 0;
  size_t n = 0;

  free(q);
  if (status == 0)
    status = pool_read_members(reply, &rev, &w, &ids, &n);
  if (status != 0)
    cb(client, status, 0, NULL, 0, data);
  else
    cb(client, 0, rev, w, n, data);
  free(w);
  free(ids);
}

int fleet_pool_query_workers(fleet_client_t *client, const char *pool,
                             fleet_pool_query_workers_cb cb, void *user_data) {
  pool_query_t *q;
  int err;

  err = pool_query_send(client, pool, cb != NULL, FLEET__OP_POOL_MEMBERS,
                        pool_on_query_workers, &q);
  if (err == 0) {
    q->cb = (fleet__fn_t)cb;
    q->data = user_data;
  }
  return err;
}

/* Reads {key, "<token>:<state>:<worker>", ...} into `out` (the worker ids
 * copied into `ids`; the keys point into the reply). Returns 0,
 * FLEET_EPROTO or FLEET_ENOMEM. */
static int pool_read_jobs(const fleet__reply_t *r,
                          fleet_pool_job_status_t **out, char **ids,
                          size_t *n) {
  fleet_pool_job_status_t *jobs;
  size_t i, size = 0, used = 0, count;
  char *s;

  if (!fleet__reply_is_array(r, 0) || r->nelem % 2 != 0)
    return FLEET_EPROTO;
  for (i = 0; i < r->nelem; i++) {
    if (r->elem[i].type != FLEET__REPLY_STR)
      return FLEET_EPROTO;
    size += r->elem[i].len + 1;
  }
  count = r->nelem / 2;
  jobs = calloc(count + 1, sizeof(*jobs));
  s = malloc(size + 1);
  if (jobs == NULL || s == NULL) {
    free(jobs);
    free(s);
    return FLEET_ENOMEM;
  }
  for (i = 0; i < count; i++) {
    const fleet__reply_t *k = &r->elem[2 * i], *rec = &r->elem[2 * i + 1];
    fleet__reply_t token_str = {0};
    fleet_bytes_t token, worker;
    const char *code;
    char state;

    if (fleet__pool_parse_owner(rec, &token, &state, &worker) != 0)
      break;
    token_str.type = FLEET__REPLY_STR;
    token_str.str = token.base;
    token_str.len = token.len;
    code = state != '\0' ? strchr(pool_job_state_codes, state) : NULL;
    if (code == NULL || fleet__reply_u64_str(&token_str, &jobs[i].token) != 0)
      break;
    jobs[i].key.base = k->str;
    jobs[i].key.len = k->len;
    jobs[i].state = (fleet_pool_job_state_t)(code - pool_job_state_codes);
    memcpy(s + used, worker.base, worker.len);
    s[used + worker.len] = '\0';
    jobs[i].worker_id = s + used;
    used += worker.len + 1;
  }
  if (i < count) {
    free(jobs);
    free(s);
    return FLEET_EPROTO;
  }
  *out = jobs;
  *ids = s;
  *n = count;
  return 0;
}

static void pool_on_query_jobs(void *arg, int status,
                               const fleet__reply_t *reply) {
  pool_query_t *q = arg;
  fleet_client_t *client = q->client;
  fleet_pool_query_jobs_cb cb = (fleet_pool_query_jobs_cb)q->cb;
  void *data = q->data;
  fleet_pool_job_status_t *jobs = NULL;
  char *ids = NULL;
  size_t n = 0;

  free(q);
  if (status == 0)
    status = pool_read_jobs(reply, &jobs, &ids, &n);
  if (status != 0)
    cb(client, status, NULL, 0, data);
  else
    cb(client, 0, jobs, n, data);
  free(jobs);
  free(ids);
}

int fleet_pool_query_jobs(fleet_client_t *client, const char *pool,
                          fleet_pool_query_jobs_cb cb, void *user_data) {
  pool_query_t *q;
  int err;

  err = pool_query_send(client, pool, cb != NULL, FLEET__OP_POOL_JOBS,
                        pool_on_query_jobs, &q);
  if (err == 0) {
    q->cb = (fleet__fn_t)cb;
    q->data = user_data;
  }
  return err;
}

/* ------------------------------------------------------------------------ */
/* The queries of a node                                                    */

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

int fleet_pool_get_payload(fleet_pool_node_t *node, const char *key,
                           fleet_pool_payload_cb cb, void *user_data) {
  return fleet__pool_key_call(node, &pool_payload_call, key, NULL,
                              (fleet__fn_t)cb, user_data);
}

int fleet_pool_job_keys(fleet_pool_node_t *node, fleet_pool_keys_cb cb,
                        void *user_data) {
  return fleet__pool_plain_call(node, &pool_keys_call, (fleet__fn_t)cb,
                                user_data);
}

int fleet_pool_workers(fleet_pool_node_t *node, fleet_pool_workers_cb cb,
                       void *user_data) {
  return fleet__pool_plain_call(node, &pool_workers_call, (fleet__fn_t)cb,
                                user_data);
}

int fleet_pool_jobs(fleet_pool_node_t *node, fleet_pool_jobs_cb cb,
                    void *user_data) {
  return fleet__pool_plain_call(node, &pool_jobs_call, (fleet__fn_t)cb,
                                user_data);
}
