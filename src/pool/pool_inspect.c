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
    FLEET_POOL_JOB_STATE_MAP(FLEET__NAME_XX)};

/* The state letters of the owner records, in the order of the enum. */
static const char pool_job_state_codes[] = "srmxoq";

const char *fleet_pool_job_state_name(int state) {
  return FLEET__NAME_AT(pool_job_state_names, state);
}

/* A client's query in flight: how its reply is read and told (`answer`),
 * the caller's callback (of the query's type, cast back by `answer`) and
 * its data. */
typedef struct pool_query_s pool_query_t;
struct pool_query_s {
  void (*answer)(const pool_query_t *q, int status,
                 const fleet__reply_t *reply);
  fleet_client_t *client;
  fleet__fn_t cb;
  void *data;
};

static void pool_on_query(void *arg, int status, const fleet__reply_t *reply) {
  pool_query_t q = *(pool_query_t *)arg;

  free(arg);
  q.answer(&q, status, reply);
}

/* Sends `op` with the `nargs` args `args` on the tag of `pool` from
 * `client`, with a query for `cb` whose reply `answer` reads. Returns 0 or
 * the call's error (nothing sent, `cb` never runs). */
static int pool_query_send(fleet_client_t *client, const char *pool,
                           fleet__op_t op, const fleet_bytes_t *args,
                           size_t nargs, const pool_query_t *query) {
  pool_query_t *q;
  int err;

  if (query->cb == NULL)
    return FLEET_EINVAL;
  if ((q = malloc(sizeof(*q))) == NULL)
    return FLEET_ENOMEM;
  *q = *query;
  if ((err = fleet__client_tag_call_args(client, pool, op, args, nargs,
                                         pool_on_query, q)) != 0)
    free(q);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Reading the replies                                                      */

/* Makes room, in one block, for what a reply is read into: `n` + 1 zeroed
 * items of `size`, then (`*buf`) a NUL-terminated copy of each string of
 * the reply from element `from` on. Returns the block (one free() frees
 * it all), or NULL and `*err`: FLEET_EPROTO (an element that is no
 * string) or FLEET_ENOMEM. */
static void *pool_room(const fleet__reply_t *r, size_t from, size_t n,
                       size_t size, char **buf, int *err) {
  size_t i, room = 1;
  char *items;

  for (i = from; i < r->nelem; i++) {
    if (r->elem[i].type != FLEET__REPLY_STR) {
      *err = FLEET_EPROTO;
      return NULL;
    }
    room += r->elem[i].len + 1;
  }
  if ((items = calloc(1, (n + 1) * size + room)) == NULL) {
    *err = FLEET_ENOMEM;
    return NULL;
  }
  *buf = items + (n + 1) * size;
  return items;
}

/* Copies the string `e` into `buf` at `*used`, NUL-terminated. Returns the
 * copy. */
static char *pool_copy(char *buf, size_t *used, const fleet__reply_t *e) {
  char *d = buf + *used;

  memcpy(d, e->str, e->len);
  d[e->len] = '\0';
  *used += e->len + 1;
  return d;
}

/* Reads {revision, worker, node, created, ...} into `*out`, one block
 * with its strings. Returns 0, FLEET_EPROTO or FLEET_ENOMEM; on error
 * nothing is set. */
static int pool_read_members(const fleet__reply_t *r, uint64_t *rev,
                             fleet_pool_worker_info_t **out, size_t *n) {
  fleet_pool_worker_info_t *w;
  size_t i, used = 0, count = r->nelem / 3;
  int64_t v;
  char *s;
  int err;

  if (!fleet__reply_is_array(r, 1) || r->nelem % 3 != 1 ||
      fleet__reply_i64(&r->elem[0], &v) != 0 || v < 0)
    return FLEET_EPROTO;
  if ((w = pool_room(r, 1, count, sizeof(*w), &s, &err)) == NULL)
    return err;
  for (i = 0; i < count; i++) {
    if (fleet__reply_u64_str(&r->elem[3 + 3 * i], &w[i].created) != 0) {
      free(w);
      return FLEET_EPROTO;
    }
    w[i].id = pool_copy(s, &used, &r->elem[1 + 3 * i]);
    w[i].node_id = pool_copy(s, &used, &r->elem[2 + 3 * i]);
  }
  *rev = (uint64_t)v;
  *out = w;
  *n = count;
  return 0;
}

/* Reads {key, "<token>:<state>:<worker>", ...} into `*out`, one block
 * with NUL-terminated copies of the keys and worker ids. Returns 0,
 * FLEET_EPROTO or FLEET_ENOMEM; on error nothing is set. */
static int pool_read_jobs(const fleet__reply_t *r,
                          fleet_pool_job_status_t **out, size_t *n) {
  fleet_pool_job_status_t *jobs;
  size_t i, used = 0, count = r->nelem / 2;
  char *s;
  int err;

  if (!fleet__reply_is_array(r, 0) || r->nelem % 2 != 0)
    return FLEET_EPROTO;
  if ((jobs = pool_room(r, 0, count, sizeof(*jobs), &s, &err)) == NULL)
    return err;
  for (i = 0; i < count; i++) {
    fleet__reply_t token_str = {0}, worker_str = {0};
    fleet_bytes_t token, worker;
    const char *code;
    char state;

    if (fleet__pool_parse_owner(&r->elem[2 * i + 1], &token, &state, &worker) !=
        0)
      break;
    token_str.type = worker_str.type = FLEET__REPLY_STR;
    token_str.str = token.base;
    token_str.len = token.len;
    worker_str.str = worker.base;
    worker_str.len = worker.len;
    code = state != '\0' ? strchr(pool_job_state_codes, state) : NULL;
    if (code == NULL || fleet__reply_u64_str(&token_str, &jobs[i].token) != 0)
      break;
    jobs[i].key.base = pool_copy(s, &used, &r->elem[2 * i]);
    jobs[i].key.len = r->elem[2 * i].len;
    jobs[i].state = (fleet_pool_job_state_t)(code - pool_job_state_codes);
    jobs[i].worker_id = pool_copy(s, &used, &worker_str);
  }
  if (i < count) {
    free(jobs);
    return FLEET_EPROTO;
  }
  *out = jobs;
  *n = count;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The queries of a client                                                  */

static void pool_answer_workers(const pool_query_t *q, int status,
                                const fleet__reply_t *reply) {
  fleet_pool_worker_info_t *w = NULL;
  uint64_t rev = 0;
  size_t n = 0;

  if (status == 0)
    status = pool_read_members(reply, &rev, &w, &n);
  ((fleet_pool_query_workers_cb)q->cb)(q->client, status, rev, w, n, q->data);
  free(w);
}

int fleet_pool_query_workers(fleet_client_t *client, const char *pool,
                             fleet_pool_query_workers_cb cb, void *user_data) {
  pool_query_t q = {pool_answer_workers, client, (fleet__fn_t)cb, user_data};

  return pool_query_send(client, pool, FLEET__OP_POOL_MEMBERS, NULL, 0, &q);
}

static void pool_answer_jobs(const pool_query_t *q, int status,
                             const fleet__reply_t *reply) {
  fleet_pool_job_status_t *jobs = NULL;
  size_t n = 0;

  if (status == 0)
    status = pool_read_jobs(reply, &jobs, &n);
  ((fleet_pool_query_jobs_cb)q->cb)(q->client, status, jobs, n, q->data);
  free(jobs);
}

int fleet_pool_query_jobs(fleet_client_t *client, const char *pool,
                          fleet_pool_query_jobs_cb cb, void *user_data) {
  pool_query_t q = {pool_answer_jobs, client, (fleet__fn_t)cb, user_data};

  return pool_query_send(client, pool, FLEET__OP_POOL_JOBS, NULL, 0, &q);
}

int fleet_pool_query_worker_jobs(fleet_client_t *client, const char *pool,
                                 const char *worker_id,
                                 fleet_pool_query_jobs_cb cb, void *user_data) {
  pool_query_t q = {pool_answer_jobs, client, (fleet__fn_t)cb, user_data};
  fleet_bytes_t arg;
  int err;

  if ((err = fleet__str_check(worker_id, FLEET__NAME_MAX, &arg.len)) != 0)
    return err;
  arg.base = worker_id;
  return pool_query_send(client, pool, FLEET__OP_POOL_WORKER_JOBS, &arg, 1, &q);
}

static void pool_answer_reset(const pool_query_t *q, int status,
                              const fleet__reply_t *reply) {
  int64_t n = 0;

  if (status == 0 && fleet__reply_i64(reply, &n) != 0)
    status = FLEET_EPROTO;
  if (status == 0 && n == 0)
    status = FLEET_EALREADY;
  ((fleet_pool_reset_cb)q->cb)(q->client, status, q->data);
}

int fleet_pool_reset(fleet_client_t *client, const char *pool,
                     fleet_pool_reset_cb cb, void *user_data) {
  pool_query_t q = {pool_answer_reset, client, (fleet__fn_t)cb, user_data};

  return pool_query_send(client, pool, FLEET__OP_POOL_RESET, NULL, 0, &q);
}

/* ------------------------------------------------------------------------ */
/* The queries of a node                                                    */

/* The node a query was made on. The readers run the user callback with
 * what they read from the request after fleet__call_done(): the request
 * is not reused before the callback runs. */
static fleet_pool_node_t *pool_node(const fleet__req_t *r) {
  return (fleet_pool_node_t *)r->handle->pub;
}

/* The fail hooks, one per callback shape. */
static void pool_fail_keys(fleet__req_t *r, int status) {
  ((fleet_pool_keys_cb)r->cb)(pool_node(r), status, NULL, 0, r->user_data);
}

static void pool_fail_payload(fleet__req_t *r, int status) {
  fleet_bytes_t none = {NULL, 0};

  ((fleet_pool_payload_cb)r->cb)(pool_node(r), status, none, r->user_data);
}

static void pool_fail_workers(fleet__req_t *r, int status) {
  ((fleet_pool_workers_cb)r->cb)(pool_node(r), status, NULL, 0, r->user_data);
}

static void pool_fail_jobs(fleet__req_t *r, int status) {
  ((fleet_pool_jobs_cb)r->cb)(pool_node(r), status, NULL, 0, r->user_data);
}

/* The keys of POOL_JOBS's {key, owner record, ...}, NUL-terminated. */
static void pool_keys_read(fleet__req_t *r, int status,
                           const fleet__reply_t *reply) {
  fleet_bytes_t *keys = NULL;
  size_t i, used = 0, n = 0;
  char *buf;

  if (status == 0 && (reply->type != FLEET__REPLY_ARRAY || reply->nelem % 2))
    status = FLEET_EPROTO;
  if (status == 0) {
    n = reply->nelem / 2;
    keys = pool_room(reply, 0, n, sizeof(*keys), &buf, &status);
  }
  for (i = 0; status == 0 && i < n; i++) {
    keys[i].base = pool_copy(buf, &used, &reply->elem[2 * i]);
    keys[i].len = reply->elem[2 * i].len;
  }
  if (fleet__call_done(r, status))
    ((fleet_pool_keys_cb)r->cb)(pool_node(r), 0, keys, n, r->user_data);
  free(keys);
}

static void pool_payload_read(fleet__req_t *r, int status,
                              const fleet__reply_t *reply) {

  if (status == 0 && reply->type == FLEET__REPLY_NIL)
    status = FLEET_ENOTFOUND;
  else if (status == 0 && reply->type != FLEET__REPLY_STR)
    status = FLEET_EPROTO;
  if (fleet__call_done(r, status))
    ((fleet_pool_payload_cb)r->cb)(
        pool_node(r), 0, (fleet_bytes_t){reply->str, reply->len}, r->user_data);
}

static void pool_workers_read(fleet__req_t *r, int status,
                              const fleet__reply_t *reply) {
  fleet__pool_t *p = (fleet__pool_t *)r->handle;
  fleet_pool_worker_info_t *info = NULL;
  size_t i, n = 0;

  if (status == 0)
    status = fleet__pool_set_members(p, reply);
  if (status == 0 &&
      (info = calloc((n = p->nmembers) + 1, sizeof(*info))) == NULL)
    status = FLEET_ENOMEM;
  for (i = 0; status == 0 && i < n; i++) {
    info[i].id = p->member_ids[i];
    info[i].node_id = p->member_nodes[i];
    info[i].created = p->member_created[i];
    info[i].local = strcmp(p->member_nodes[i], p->node_id) == 0;
  }
  if (fleet__call_done(r, status))
    ((fleet_pool_workers_cb)r->cb)(pool_node(r), 0, info, n, r->user_data);
  free(info);
}

static void pool_jobs_read(fleet__req_t *r, int status,
                           const fleet__reply_t *reply) {
  fleet_pool_job_status_t *jobs = NULL;
  fleet_pool_job_info_t *info = NULL;
  size_t i, n = 0;

  if (status == 0)
    status = pool_read_jobs(reply, &jobs, &n);
  if (status == 0 && (info = calloc(n + 1, sizeof(*info))) == NULL)
    status = FLEET_ENOMEM;
  for (i = 0; status == 0 && i < n; i++) {
    info[i].key = jobs[i].key;
    info[i].worker_id = jobs[i].worker_id;
    info[i].token = jobs[i].token;
  }
  if (fleet__call_done(r, status))
    ((fleet_pool_jobs_cb)r->cb)(pool_node(r), 0, info, n, r->user_data);
  free(info);
  free(jobs);
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
static const fleet__call_t pool_worker_jobs_call = {
    "pool.worker_jobs", FLEET__OP_POOL_WORKER_JOBS, pool_jobs_read,
    pool_fail_jobs};

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

int fleet_pool_worker_jobs(fleet_pool_node_t *node, const char *worker_id,
                           fleet_pool_jobs_cb cb, void *user_data) {
  return fleet__pool_key_call(node, &pool_worker_jobs_call, worker_id, NULL,
                              (fleet__fn_t)cb, user_data);
}
