/* test_pool.c -- the worker pool on both adapters: bad input, dispatch and
 * its answers (started, exists, the start's error, timeout), notify, stop,
 * the queries, one admission among concurrent dispatches, client-only
 * nodes, a join that moves only the keys whose owner changed, close that
 * moves a node's jobs, shutdown, and calls from inside callbacks. */
#include "pool/pool_int.h"
#include "test_lock_env.h"

#define NODE_WORKERS_MAX 8
#define LOG_MAX 4096

/* One event a worker saw. */
typedef struct {
  char kind; /* s(tart), x (stop), n(otify) */
  char key[64];
  const struct node_rec_s *node;
  int worker;
  int reason;
  uint64_t token;
  uint64_t at; /* lock_env_now() */
} ev_t;

/* A node with workers that record what they see. */
typedef struct node_rec_s {
  fleet_pool_node_t node;
  fleet_pool_worker_t w[NODE_WORKERS_MAX];
  int nworkers;
  int start_status; /* what starts report */
  int async;        /* keep starts pending in `pending` */
  fleet_pool_job_t *pending[64];
  int npending;
  int running; /* jobs started and not stopped */
  int closed;
  int close_in_start;
  int requeue_left;    /* starts that requeue the job */
  int requeue_in_stop; /* stops that requeue the job (when allowed) */
  ev_t *log;           /* shared between the nodes of a test */
  int *nlog;
  int errors;    /* error callbacks (with rec_on_error) */
  int conflicts; /* of them FLEET_ECONFLICT */
  int last_error;
  char detail[256];
  char payload[2048]; /* the last start's payload */
  size_t payload_len;
} node_rec_t;

static ev_t test_log[LOG_MAX];
static int test_nlog;

static void rec_log(node_rec_t *n, fleet_pool_worker_t *w, char kind,
                    fleet_pool_job_t *job, int reason) {
  ev_t *e;
  fleet_bytes_t key = fleet_pool_job_key(job);

  /* The key comes out as the C string it went in as. */
  ASSERT_PTR_EQ(fleet_pool_job_key_str(job), key.base);
  ASSERT_EQ(key.len, strlen(fleet_pool_job_key_str(job)));
  ASSERT_LT(*n->nlog, LOG_MAX);
  e = &n->log[(*n->nlog)++];
  e->kind = kind;
  e->node = n;
  snprintf(e->key, sizeof(e->key), "%.*s", (int)key.len,
           (const char *)key.base);
  e->worker = (int)(w - n->w);
  e->reason = reason;
  e->token = fleet_pool_job_token(job);
  e->at = lock_env_now();
}

static void rec_start(fleet_pool_worker_t *w, fleet_pool_job_t *job) {
  node_rec_t *n = w->data;
  fleet_bytes_t p = fleet_pool_job_payload(job);

  rec_log(n, w, 's', job, 0);
  ASSERT_ULE(p.len, sizeof(n->payload));
  if (p.len > 0)
    memcpy(n->payload, p.base, p.len);
  n->payload_len = p.len;
  if (n->close_in_start) {
    ASSERT_OK(fleet_pool_node_close(&n->node, NULL));
    return;
  }
  if (n->requeue_left > 0) {
    n->requeue_left--;
    rec_log(n, w, 'q', job, 0);
    ASSERT_OK(fleet_pool_job_requeue(job));
    return;
  }
  if (n->async) {
    ASSERT_LT(n->npending, 64);
    n->pending[n->npending++] = job;
    return;
  }
  if (n->start_status == 0)
    n->running++;
  ASSERT_OK(fleet_pool_job_started(job, n->start_status));
}

static void rec_stop(fleet_pool_worker_t *w, fleet_pool_job_t *job,
                     fleet_pool_stop_reason_t reason) {
  node_rec_t *n = w->data;
  int i;

  rec_log(n, w, 'x', job, reason);
  if (n->requeue_in_stop > 0) {
    if (reason == FLEET_POOL_STOP_REQUESTED ||
        reason == FLEET_POOL_STOP_MOVED) {
      n->requeue_in_stop--;
      ASSERT_OK(fleet_pool_job_requeue(job));
      ASSERT_ERR(FLEET_EALREADY, fleet_pool_job_requeue(job));
    } else {
      /* Not the node's to hand back. */
      ASSERT_ERR(FLEET_EINVAL, fleet_pool_job_requeue(job));
    }
  }
  for (i = 0; i < n->npending; i++)
    if (n->pending[i] == job) {
      n->pending[i] = n->pending[--n->npending];
      return;
    }
  n->running--;
}

static void rec_notify(fleet_pool_worker_t *w, fleet_pool_job_t *job,
                       fleet_bytes_t payload) {
  node_rec_t *n = w->data;

  ASSERT_EQ(4, payload.len);
  ASSERT_MEM_EQ("ping", payload.base, 4);
  rec_log(n, w, 'n', job, 0);
}

static const fleet_pool_handler_t rec_handler = {
    .start_cb = rec_start, .stop_cb = rec_stop, .notify_cb = rec_notify};

static void rec_on_error(fleet_handle_t *h, int status, const char *detail) {
  node_rec_t *n = h->data;

  n->errors++;
  n->conflicts += status == FLEET_ECONFLICT;
  n->last_error = status;
  snprintf(n->detail, sizeof(n->detail), "%s", detail != NULL ? detail : "");
}

static void rec_on_close(fleet_handle_t *h) {
  node_rec_t *n = h->data;
  n->closed++;
}

static fleet_pool_node_options_t test_opts(void) {
  fleet_pool_node_options_t o;

  fleet_pool_node_options_init(&o);
  o.worker_ttl_ms = (uint32_t)fleet_test_ms(600);
  o.ack_grace_ms = (uint32_t)fleet_test_ms(300);
  return o;
}

/* Makes a node with `workers` workers (0: client-only). */
static void rec_init(node_rec_t *n, fleet_client_t *c, const char *pool,
                     const char *id, int workers,
                     fleet_pool_node_options_t *o) {
  fleet_pool_node_options_t d = test_opts();
  int i;

  memset(n, 0, sizeof(*n));
  n->log = test_log;
  n->nlog = &test_nlog;
  if (o == NULL)
    o = &d;
  o->client_only = workers == 0;
  n->node.data = n;
  ASSERT_OK(fleet_pool_node_init(c, &n->node, pool, id, o));
  for (i = 0; i < workers; i++) {
    n->w[i].data = n;
    ASSERT_OK(fleet_pool_worker_add(&n->node, &n->w[i], &rec_handler));
  }
  n->nworkers = workers;
}

static void rec_close(lock_env_t *e, node_rec_t *n) {
  ASSERT_OK(fleet_pool_node_close(&n->node, rec_on_close));
  ASSERT(lock_env_wait(e, &n->closed, 1, FLEET_TEST_WAIT_MS));
}

/* The answer of one call. */
typedef struct {
  int done;
  int status;
  size_t n;
  char text[256];
} answer_t;

static void on_status(fleet_handle_t *h, int status, void *arg) {
  answer_t *a = arg;
  a->done++;
  a->status = status;
}

static void on_keys(fleet_pool_node_t *node, int status,
                    const fleet_bytes_t *keys, size_t n, void *arg) {
  answer_t *a = arg;
  a->done++;
  a->status = status;
  a->n = n;
}

static void on_payload(fleet_pool_node_t *node, int status,
                       fleet_bytes_t payload, void *arg) {
  answer_t *a = arg;
  a->done++;
  a->status = status;
  snprintf(a->text, sizeof(a->text), "%.*s", (int)payload.len,
           (const char *)payload.base);
}

static void on_workers(fleet_pool_node_t *node, int status,
                       const fleet_pool_worker_info_t *w, size_t n, void *arg) {
  answer_t *a = arg;
  size_t i;

  a->done++;
  a->status = status;
  a->n = n;
  a->text[0] = '\0';
  for (i = 0; i < n; i++)
    snprintf(a->text + strlen(a->text), sizeof(a->text) - strlen(a->text),
             "%s%s@%s%s", i ? " " : "", w[i].id, w[i].node_id,
             w[i].local ? "*" : "");
}

static void on_jobs(fleet_pool_node_t *node, int status,
                    const fleet_pool_job_info_t *j, size_t n, void *arg) {
  answer_t *a = arg;
  size_t i;

  a->done++;
  a->status = status;
  a->n = n;
  a->text[0] = '\0';
  for (i = 0; i < n; i++)
    snprintf(a->text + strlen(a->text), sizeof(a->text) - strlen(a->text),
             "%s%.*s@%s#%" PRIu64, i ? " " : "", (int)j[i].key.len,
             (const char *)j[i].key.base, j[i].worker_id, j[i].token);
}

/* Dispatches `key` with `len` bytes of `payload` and waits for the answer. */
static int dispatch_bytes(lock_env_t *e, node_rec_t *n, const char *key,
                          const char *payload, size_t len) {
  answer_t a = {0};

  ASSERT_OK(fleet_pool_dispatch(&n->node, key, (fleet_bytes_t){payload, len},
                                on_status, &a));
  ASSERT(lock_env_wait(e, &a.done, 1, FLEET_TEST_WAIT_MS));
  return a.status;
}

static int dispatch(lock_env_t *e, node_rec_t *n, const char *key,
                    const char *payload) {
  return dispatch_bytes(e, n, key, payload, strlen(payload));
}

static answer_t query(lock_env_t *e, node_rec_t *n, int what, const char *key) {
  answer_t a = {0};

  if (what == 'k')
    ASSERT_OK(fleet_pool_job_keys(&n->node, on_keys, &a));
  else if (what == 'p')
    ASSERT_OK(fleet_pool_get_payload(&n->node, key, on_payload, &a));
  else if (what == 'w')
    ASSERT_OK(fleet_pool_workers(&n->node, on_workers, &a));
  else if (what == 'j')
    ASSERT_OK(fleet_pool_jobs(&n->node, on_jobs, &a));
  else if (what == 'x')
    ASSERT_OK(fleet_pool_stop_job(&n->node, key, on_status, &a));
  else
    ASSERT_OK(fleet_pool_notify(&n->node, key, (fleet_bytes_t){"ping", 4},
                                on_status, &a));
  ASSERT(lock_env_wait(e, &a.done, 1, FLEET_TEST_WAIT_MS));
  return a;
}

/* How many log entries of `kind` for `key` (any key when NULL). */
static int log_count(char kind, const char *key) {
  int i, c = 0;

  for (i = 0; i < test_nlog; i++)
    if (test_log[i].kind == kind &&
        (key == NULL || !strcmp(key, test_log[i].key)))
      c++;
  return c;
}

/* Waits until the pool's membership lists `want` workers. */
static void wait_workers(lock_env_t *e, node_rec_t *n, size_t want) {
  uint64_t end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
  answer_t a;

  do {
    a = query(e, n, 'w', NULL);
    ASSERT_OK(a.status);
    if (a.n == want)
      return;
    lock_env_sleep(e, 10);
  } while (lock_env_now() < end);
  ASSERT_EQ(want, a.n);
}

/* ------------------------------------------------------------------------ */

static void never_status(fleet_handle_t *h, int status, void *arg) {
  fleet_test__fail(__FILE__, __LINE__, "a refused call called back");
}

CONFORMANCE_IMPL(pool_bad_input) {
  char big[FLEET_POOL_KEY_MAX + 2];
  fleet_pool_node_options_t o;
  fleet_pool_node_t n;
  fleet_pool_worker_t w;
  fleet_pool_handler_t h = {0};
  node_rec_t cn, wn;
  lock_env_t e;
  answer_t a;

  lock_env_init(&e, b->url);
  memset(big, 'k', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_node_init(NULL, &n, "p", "a", NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_node_init(&e.c1, NULL, "p", "a", NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_node_init(&e.c1, &n, "", "a", NULL));
  /* A NULL or empty node id is made by fleet (pool_ident_generated). */
  ASSERT_NULL(fleet_pool_node_id(NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_node_init(&e.c1, &n, "p", "a/b", NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_pool_node_init(&e.c1, &n, big, "a", NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_pool_node_init(&e.c1, &n, "p", big, NULL));
  fleet_pool_node_options_init(&o);
  o.worker_ttl_ms = 99;
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_node_init(&e.c1, &n, "p", "a", &o));
  ASSERT_NULL(n.internal_);

  rec_init(&cn, &e.c1, "p", "c", 0, NULL);
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_worker_add(&cn.node, &w, &rec_handler));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_worker_add(&cn.node, &w, &h));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_dispatch(&cn.node, "k",
                                               (fleet_bytes_t){0}, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_dispatch(&cn.node, "", (fleet_bytes_t){0},
                                               never_status, NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_pool_dispatch(&cn.node, big, (fleet_bytes_t){0},
                                              never_status, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_pool_dispatch(&cn.node, "k", (fleet_bytes_t){NULL, 3},
                                 never_status, NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_pool_dispatch(
                              &cn.node, "k",
                              (fleet_bytes_t){big, FLEET_POOL_PAYLOAD_MAX + 1},
                              never_status, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_pool_stop_job(&cn.node, NULL, never_status, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_job_started(NULL, 0));
  ASSERT_NULL(fleet_pool_worker_id(&w));
  ASSERT_STR_EQ("moved", fleet_pool_stop_reason_name(FLEET_POOL_STOP_MOVED));
  ASSERT_STR_EQ("unknown", fleet_pool_stop_reason_name(99));

  /* No worker in the pool. */
  ASSERT_ERR(FLEET_ENOTFOUND, dispatch(&e, &cn, "k", ""));
  a = query(&e, &cn, 'p', "k");
  ASSERT_ERR(FLEET_ENOTFOUND, a.status);
  a = query(&e, &cn, 'x', "k");
  ASSERT_ERR(FLEET_ENOTFOUND, a.status);
  a = query(&e, &cn, 'n', "k");
  ASSERT_ERR(FLEET_ENOTFOUND, a.status);

  /* A node that hosts workers refuses a worker without its required
   * handlers (start_cb, stop_cb); notify_cb is optional. */
  rec_init(&wn, &e.c1, "p", "w", 1, NULL);
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_worker_add(&wn.node, &w, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_worker_add(&wn.node, &w, &h));
  h.start_cb = rec_start;
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_worker_add(&wn.node, &w, &h));
  ASSERT_NULL(w.internal_);
  h.start_cb = NULL;
  h.stop_cb = rec_stop;
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_worker_add(&wn.node, &w, &h));
  ASSERT_NULL(w.internal_);
  h.start_cb = rec_start;
  w.data = &wn;
  ASSERT_OK(fleet_pool_worker_add(&wn.node, &w, &h));
  ASSERT_STR_EQ("w/2", fleet_pool_worker_id(&w));
  rec_close(&e, &wn);
  rec_close(&e, &cn);
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_node_close(&cn.node, NULL));
  lock_env_close(&e);
}

CONFORMANCE_IMPL(pool_dispatch_basic) {
  node_rec_t a, c;
  lock_env_t e;
  answer_t q;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  rec_init(&a, &e.c1, "p", "a", 2, NULL);
  rec_init(&c, &e.c2, "p", "c", 0, NULL);
  ASSERT_STR_EQ("a/1", fleet_pool_worker_id(&a.w[0]));
  ASSERT_STR_EQ("a/2", fleet_pool_worker_id(&a.w[1]));
  wait_workers(&e, &c, 2);
  q = query(&e, &c, 'w', NULL);
  ASSERT_STR_EQ("a/1@a a/2@a", q.text);
  q = query(&e, &a, 'w', NULL);
  ASSERT_STR_EQ("a/1@a* a/2@a*", q.text);

  ASSERT_OK(dispatch(&e, &c, "k1", "pay1"));
  ASSERT_EQ(1, log_count('s', "k1"));
  ASSERT_EQ(1, a.running);
  /* The owner is the one jump hashing names. */
  ASSERT_STR_EQ(fleet__pool_route(fleet__pool_of(&c.node), "k1", 2),
                fleet_pool_worker_id(&a.w[test_log[0].worker]));
  ASSERT_ERR(FLEET_EEXIST, dispatch(&e, &c, "k1", "other"));
  ASSERT_ERR(FLEET_EEXIST, dispatch(&e, &a, "k1", "other"));
  ASSERT_EQ(1, log_count('s', "k1"));

  q = query(&e, &c, 'p', "k1");
  ASSERT_OK(q.status);
  ASSERT_STR_EQ("pay1", q.text);
  q = query(&e, &c, 'k', NULL);
  ASSERT_OK(q.status);
  ASSERT_EQ(1, q.n);
  q = query(&e, &c, 'j', NULL);
  ASSERT_OK(q.status);
  {
    char want[64];
    snprintf(want, sizeof(want), "k1@%s#%" PRIu64,
             fleet_pool_worker_id(&a.w[test_log[0].worker]), test_log[0].token);
    ASSERT_STR_EQ(want, q.text);
  }
  q = query(&e, &c, 'n', "k1");
  ASSERT_OK(q.status);
  ASSERT(lock_env_wait(&e, &test_nlog, 2, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(1, log_count('n', "k1"));

  q = query(&e, &c, 'x', "k1");
  ASSERT_OK(q.status);
  ASSERT(lock_env_wait(&e, &test_nlog, 3, FLEET_TEST_WAIT_MS));
  ASSERT_EQ('x', test_log[2].kind);
  ASSERT_EQ(FLEET_POOL_STOP_REQUESTED, test_log[2].reason);
  ASSERT_EQ(0, a.running);
  /* Gone once the owner confirmed: payload and all. */
  for (;;) {
    q = query(&e, &c, 'k', NULL);
    if (q.n == 0)
      break;
    lock_env_sleep(&e, 5);
  }
  q = query(&e, &c, 'p', "k1");
  ASSERT_ERR(FLEET_ENOTFOUND, q.status);
  /* A new dispatch of the key gets a larger token. */
  ASSERT_OK(dispatch(&e, &c, "k1", "pay2"));
  ASSERT_UGT(test_log[3].token, test_log[0].token);

  /* Each start's own error, and the key leaves the pool. */
  a.start_status = FLEET_EBACKEND;
  ASSERT_ERR(FLEET_EBACKEND, dispatch(&e, &c, "k2", ""));
  q = query(&e, &c, 'p', "k2");
  ASSERT_ERR(FLEET_ENOTFOUND, q.status);
  a.start_status = 0;
  ASSERT_OK(dispatch(&e, &c, "k2", ""));

  /* Metrics: every admitted dispatch counts on the node that made it (the
   * one whose start failed too); refused ones (FLEET_EEXIST) do not. */
  {
    fleet_metrics_t m;
    ASSERT_OK(fleet_metrics_read((fleet_handle_t *)&c.node, &m));
    ASSERT_UEQ(4, m.counters[FLEET_METRIC_POOL_DISPATCHES]);
    ASSERT_MEM_EQ("p", m.name, m.name_len);
    ASSERT_OK(fleet_metrics_read((fleet_handle_t *)&a.node, &m));
    ASSERT_UEQ(0, m.counters[FLEET_METRIC_POOL_DISPATCHES]);
  }

  rec_close(&e, &c);
  rec_close(&e, &a);
  ASSERT_EQ(0, a.running);
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Keys in and out                                                          */

/* What a keys callback did: each key it was given went back in as it is
 * (fleet_pool_stop_job() of the first one). */
typedef struct {
  int done;
  int status;
  size_t n;
  answer_t stop;
} keys_back_t;

static void on_keys_back(fleet_pool_node_t *node, int status,
                         const fleet_bytes_t *keys, size_t n, void *arg) {
  keys_back_t *k = arg;

  k->done++;
  k->status = status;
  k->n = n;
  if (status != 0 || n == 0)
    return;
  ASSERT_EQ(keys[0].len, strlen(keys[0].base));
  ASSERT_OK(fleet_pool_stop_job(node, keys[0].base, on_status, &k->stop));
}

/* Records an answer whose first key is `key` (none when `n` is 0), and
 * checks that the key is a C string of its length. */
static void answer_key(answer_t *a, int status, size_t n,
                       const fleet_bytes_t *key) {
  a->done++;
  a->status = status;
  a->n = n;
  if (n > 0) {
    ASSERT_EQ(key->len, strlen(key->base));
    snprintf(a->text, sizeof(a->text), "%s", (const char *)key->base);
  }
}

static void on_jobs_cstr(fleet_pool_node_t *node, int status,
                         const fleet_pool_job_info_t *j, size_t n, void *arg) {
  answer_key(arg, status, n, n > 0 ? &j[0].key : NULL);
}

static void on_query_jobs_cstr(fleet_client_t *c, int status,
                               const fleet_pool_job_status_t *j, size_t n,
                               void *arg) {
  answer_key(arg, status, n, n > 0 ? &j[0].key : NULL);
}

/* A key goes in as a C string and comes out as the same C string: from the
 * job (fleet_pool_job_key_str(), and fleet_pool_job_key()'s base, checked
 * by rec_log), from the node's keys and jobs, from a client's query; and
 * a key given back goes in again as it is. */
CONFORMANCE_IMPL(pool_key_types) {
  static const char key[] = "job:\xc3\xa9t\xc3\xa9/42";
  keys_back_t k;
  answer_t q, qc;
  node_rec_t a;
  lock_env_t e;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  ASSERT_NULL(fleet_pool_job_key_str(NULL));
  rec_init(&a, &e.c1, "p", "a", 1, NULL);
  wait_workers(&e, &a, 1);
  ASSERT_OK(dispatch(&e, &a, key, "pay"));
  ASSERT_EQ(1, log_count('s', key));

  memset(&q, 0, sizeof(q));
  ASSERT_OK(fleet_pool_jobs(&a.node, on_jobs_cstr, &q));
  ASSERT(lock_env_wait(&e, &q.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(q.status);
  ASSERT_EQ(1, q.n);
  ASSERT_STR_EQ(key, q.text);
  memset(&qc, 0, sizeof(qc));
  ASSERT_OK(fleet_pool_query_jobs(&e.c2, "p", on_query_jobs_cstr, &qc));
  ASSERT(lock_env_wait(&e, &qc.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(qc.status);
  ASSERT_EQ(1, qc.n);
  ASSERT_STR_EQ(key, qc.text);

  memset(&k, 0, sizeof(k));
  ASSERT_OK(fleet_pool_job_keys(&a.node, on_keys_back, &k));
  ASSERT(lock_env_wait(&e, &k.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(k.status);
  ASSERT_EQ(1, k.n);
  ASSERT(lock_env_wait(&e, &k.stop.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(k.stop.status);
  ASSERT(lock_env_wait(&e, &test_nlog, 2, FLEET_TEST_WAIT_MS));
  ASSERT_EQ('x', test_log[1].kind);
  ASSERT_EQ(FLEET_POOL_STOP_REQUESTED, test_log[1].reason);
  ASSERT_STR_EQ(key, test_log[1].key);

  rec_close(&e, &a);
  lock_env_close(&e);
}

/* Two nodes dispatch the same keys in the same loop iteration: each key
 * is admitted once. */
CONFORMANCE_IMPL(pool_dispatch_race) {
  answer_t r1[20], r2[20];
  node_rec_t a, c;
  lock_env_t e;
  int i, ok = 0, exist = 0, done = 0;
  char key[16];

  test_nlog = 0;
  lock_env_init(&e, b->url);
  rec_init(&a, &e.c1, "p", "a", 3, NULL);
  rec_init(&c, &e.c2, "p", "c", 0, NULL);
  wait_workers(&e, &c, 3);
  memset(r1, 0, sizeof(r1));
  memset(r2, 0, sizeof(r2));
  for (i = 0; i < 20; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_OK(fleet_pool_dispatch(&a.node, key, (fleet_bytes_t){"x", 1},
                                  on_status, &r1[i]));
    ASSERT_OK(fleet_pool_dispatch(&c.node, key, (fleet_bytes_t){"y", 1},
                                  on_status, &r2[i]));
  }
  for (i = 0; i < 20; i++) {
    ASSERT(lock_env_wait(&e, &r1[i].done, 1, FLEET_TEST_WAIT_MS));
    ASSERT(lock_env_wait(&e, &r2[i].done, 1, FLEET_TEST_WAIT_MS));
    ok += (r1[i].status == 0) + (r2[i].status == 0);
    exist += (r1[i].status == FLEET_EEXIST) + (r2[i].status == FLEET_EEXIST);
    done += r1[i].done + r2[i].done;
  }
  ASSERT_EQ(20, ok);
  ASSERT_EQ(20, exist);
  ASSERT_EQ(40, done);
  ASSERT_EQ(20, log_count('s', NULL));
  ASSERT_EQ(20, a.running);
  rec_close(&e, &c);
  rec_close(&e, &a);
  lock_env_close(&e);
}

/* Dispatches made in one loop phase are admitted in one call, each as if
 * alone and in order: against the dispatching node's limit of 6 jobs (one
 * is in the pool already), the first five new keys pass and the rest find
 * the pool full; a key given twice in the call passes once, and its second
 * dispatch hears FLEET_EEXIST even with the pool full. Each admitted job
 * starts once. */
CONFORMANCE_IMPL(pool_dispatch_batch) {
  fleet_pool_node_options_t o = test_opts();
  answer_t r[11];
  node_rec_t a, c;
  lock_env_t e;
  uint64_t calls0, items0, calls, items;
  char key[16];
  int i;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  rec_init(&a, &e.c1, "p", "a", 2, NULL);
  o.max_queued_jobs = 6;
  rec_init(&c, &e.c2, "p", "c", 0, &o);
  wait_workers(&e, &c, 2);
  ASSERT_OK(dispatch(&e, &c, "warm", "w"));
  memset(r, 0, sizeof(r));
  fleet__batch_stats(e.c2.internal_, &calls0, &items0);
  for (i = 0; i < 10; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_OK(fleet_pool_dispatch(&c.node, key, (fleet_bytes_t){key, 2},
                                  on_status, &r[i]));
  }
  ASSERT_OK(fleet_pool_dispatch(&c.node, "k3", (fleet_bytes_t){"dup", 3},
                                on_status, &r[10]));
  for (i = 0; i < 11; i++)
    ASSERT(lock_env_wait(&e, &r[i].done, 1, FLEET_TEST_WAIT_MS));
  fleet__batch_stats(e.c2.internal_, &calls, &items);
  for (i = 0; i < 5; i++)
    ASSERT_OK(r[i].status);
  for (i = 5; i < 10; i++)
    ASSERT_ERR(FLEET_EBUSY, r[i].status);
  ASSERT_ERR(FLEET_EEXIST, r[10].status);
  /* The 11 admissions shared a call (a keep-alive may have gone out too,
   * in a call of its own). */
  ASSERT_UGE(items - items0, 11);
  ASSERT_ULE(calls - calls0, 2);
  for (i = 0; i < 10; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_EQ(i < 5 ? 1 : 0, log_count('s', key));
  }
  ASSERT_EQ(6, log_count('s', NULL));
  ASSERT_EQ(6, a.running);
  ASSERT_STR_EQ("k3", query(&e, &c, 'p', "k3").text);
  /* The jobs' list and count leave out the field "" that keeps the
   * pool's per-job hashes hash tables, on Redis: not listpacks that
   * every lookup walks (docs/pool.md, "Demo and benchmark"). */
  ASSERT_EQ(6, query(&e, &c, 'k', NULL).n);
  ASSERT_EQ(6, query(&e, &c, 'j', NULL).n);
  if (b->redis != NULL) {
    static const char *const hashes[] = {"jobs", "pay", "disp"};
    for (i = 0; i < 3; i++) {
      redisReply *x = fleet_test_redis_cmd(
          b->redis, "OBJECT ENCODING {locktest:p}:%s", hashes[i]);

      ASSERT_STR_EQ("hashtable", x->str);
      freeReplyObject(x);
    }
  }
  rec_close(&e, &c);
  rec_close(&e, &a);
  lock_env_close(&e);
}

/* A start that never reports: the dispatch times out after 2 x ack grace;
 * the job stays admitted. Then the node closes with the start pending. */
CONFORMANCE_IMPL(pool_dispatch_timeout) {
  fleet_pool_node_options_t o = test_opts();
  node_rec_t a;
  lock_env_t e;
  uint64_t t0;
  answer_t q;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  o.ack_grace_ms = 100;
  rec_init(&a, &e.c1, "p", "a", 1, &o);
  wait_workers(&e, &a, 1);
  a.async = 1;
  t0 = lock_env_now();
  ASSERT_ERR(FLEET_ETIMEDOUT, dispatch(&e, &a, "k", ""));
  ASSERT_UGE(lock_env_now() - t0, 200);
  ASSERT_EQ(1, a.npending);
  ASSERT_ERR(FLEET_EEXIST, dispatch(&e, &a, "k", ""));
  /* A late report still counts. */
  ASSERT_OK(fleet_pool_job_started(a.pending[0], 0));
  ASSERT_ERR(FLEET_EALREADY, fleet_pool_job_started(a.pending[0], 0));
  q = query(&e, &a, 'k', NULL);
  ASSERT_EQ(1, q.n);
  rec_close(&e, &a);
  ASSERT_EQ(0, a.npending);
  ASSERT_EQ(FLEET_POOL_STOP_CLOSE, test_log[test_nlog - 1].reason);
  lock_env_close(&e);
}

/* Node b joins a pool whose jobs run on a: only the keys whose owner
 * changed move (stopped on a, then started on b), each exactly once; then
 * b closes and its jobs come back to a. */
CONFORMANCE_IMPL(pool_rebalance) {
  fleet_pool_node_options_t o = test_opts();
  node_rec_t a, nb;
  lock_env_t e;
  char key[16];
  int i, moved = 0, want_moved = 0;
  const char *before[60];
  char *owners[60];

  test_nlog = 0;
  lock_env_init(&e, b->url);
  o.max_queued_jobs = FLEET_POOL_UNLIMITED;
  rec_init(&a, &e.c1, "p", "a", 2, &o);
  wait_workers(&e, &a, 2);
  for (i = 0; i < 60; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_OK(dispatch(&e, &a, key, key));
    before[i] = fleet__pool_route(fleet__pool_of(&a.node), key, strlen(key));
    owners[i] = strdup(before[i]);
  }
  ASSERT_EQ(60, a.running);
  rec_init(&nb, &e.c2, "p", "b", 2, &o);
  wait_workers(&e, &a, 4);
  for (i = 0; i < 60; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    if (strcmp(owners[i], fleet__pool_route(fleet__pool_of(&a.node), key,
                                            strlen(key))) != 0)
      want_moved++;
  }
  ASSERT_GT(want_moved, 10);
  ASSERT(lock_env_wait(&e, &nb.running, want_moved, FLEET_TEST_WAIT_MS));
  lock_env_sleep(&e, 50);
  ASSERT_EQ(want_moved, nb.running);
  ASSERT_EQ(60 - want_moved, a.running);
  for (i = 0; i < test_nlog; i++)
    if (test_log[i].kind == 'x') {
      ASSERT_EQ(FLEET_POOL_STOP_MOVED, test_log[i].reason);
      moved++;
    }
  ASSERT_EQ(want_moved, moved);
  ASSERT_EQ(60 + want_moved, log_count('s', NULL));
  /* Each moved key stopped on a before it started on b. */
  for (i = 0; i < test_nlog; i++)
    if (test_log[i].kind == 'x') {
      int j, seen = 0;
      for (j = 0; j < i; j++)
        seen |= test_log[j].kind == 's' &&
                !strcmp(test_log[j].key, test_log[i].key);
      ASSERT(seen);
      ASSERT_EQ(2, log_count('s', test_log[i].key));
    }

  /* b closes: its jobs come back to a. */
  rec_close(&e, &nb);
  ASSERT_EQ(0, nb.running);
  ASSERT(lock_env_wait(&e, &a.running, 60, FLEET_TEST_WAIT_MS));
  for (i = 0; i < 60; i++)
    free(owners[i]);
  rec_close(&e, &a);
  lock_env_close(&e);
}

/* A job moves before its start reported: the old owner is told MOVED, and
 * the dispatch is answered by the new owner's start. */
CONFORMANCE_IMPL(pool_move_before_start) {
  node_rec_t a, nb, c;
  lock_env_t e;
  answer_t r = {0};
  char key[16];
  int i;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  /* A key that leaves bucket 0 (a's worker) when 3 workers join. */
  for (i = 0;; i++) {
    snprintf(key, sizeof(key), "m%d", i);
    if (fleet__jump_hash(fleet__key_hash(key, strlen(key)), 4) != 0)
      break;
  }
  rec_init(&a, &e.c1, "p", "a", 1, NULL);
  rec_init(&c, &e.c2, "p", "c", 0, NULL);
  wait_workers(&e, &c, 1);
  a.async = 1;
  ASSERT_OK(fleet_pool_dispatch(&c.node, key, (fleet_bytes_t){"x", 1},
                                on_status, &r));
  ASSERT(lock_env_wait(&e, &a.npending, 1, FLEET_TEST_WAIT_MS));
  rec_init(&nb, &e.c2, "p", "b", 3, NULL);
  ASSERT(lock_env_wait(&e, &r.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(r.status);
  ASSERT_EQ(3, test_nlog);
  ASSERT_EQ('x', test_log[1].kind);
  ASSERT_EQ(FLEET_POOL_STOP_MOVED, test_log[1].reason);
  ASSERT_EQ('s', test_log[2].kind);
  ASSERT_UGT(test_log[2].token, test_log[0].token);
  ASSERT_EQ(0, a.npending);
  ASSERT_EQ(1, nb.running);
  rec_close(&e, &c);
  rec_close(&e, &nb);
  rec_close(&e, &a);
  lock_env_close(&e);
}

/* Node b stops sending keep-alives (as if frozen): it gives its jobs up
 * (LOST) before the pool may move them, and a starts each of them within
 * worker TTL + ack grace; no key ever runs on two workers at once. */
CONFORMANCE_IMPL(pool_failover) {
  fleet_pool_node_options_t o = test_opts();
  node_rec_t a, nb;
  fleet__pool_t *pb;
  lock_env_t e;
  uint64_t t0, limit;
  char key[16];
  int i, on_b, lost = 0, lost_b = 0;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  o.worker_ttl_ms = 300;
  o.ack_grace_ms = 300;
  o.error_cb = rec_on_error; /* (hears a node's lapse) */
  rec_init(&a, &e.c1, "p", "a", 2, &o);
  rec_init(&nb, &e.c2, "p", "b", 2, &o);
  wait_workers(&e, &a, 4);
  for (i = 0; i < 30; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_OK(dispatch(&e, &a, key, key));
  }
  on_b = nb.running;
  ASSERT_GT(on_b, 0);
  ASSERT_EQ(30, a.running + nb.running);

  /* Freeze b's keep-alive, as a paused process would. */
  pb = fleet__pool_of(&nb.node);
  fleet__batch_remove(pb->base.client, &pb->keepalive);
  fleet__handle_unhold(&pb->base);
  t0 = lock_env_now();
  limit = fleet_test_ms(o.worker_ttl_ms + o.ack_grace_ms);
  ASSERT(lock_env_wait(&e, &a.running, 30, limit));
  ASSERT_ULE(lock_env_now() - t0, limit);
  ASSERT_EQ(0, nb.running);
  /* Every job of b was given up on b before a started it. Jobs of a may
   * move between a's workers too: b's workers may sit between them in
   * creation order. */
  for (i = 0; i < test_nlog; i++) {
    int j;
    if (test_log[i].kind != 'x')
      continue;
    if (test_log[i].reason == FLEET_POOL_STOP_LOST) {
      lost++;
      lost_b += test_log[i].node == &nb;
    } else
      ASSERT_EQ(FLEET_POOL_STOP_MOVED, test_log[i].reason);
    for (j = i + 1; j < test_nlog; j++)
      if (test_log[j].kind == 's' && !strcmp(test_log[j].key, test_log[i].key))
        break;
    ASSERT_LT(j, test_nlog);
    ASSERT_UGT(test_log[j].token, test_log[i].token);
  }
  /* Only b's jobs were given up, unless a lapsed too: the suite runs
   * tests side by side on 2 cores, and a stall of the process past a's
   * 300 ms TTL makes a give its jobs up as well, which its error callback
   * hears (FLEET_ESTALE); the checks above hold either way. */
  if (a.errors == 0) {
    ASSERT_EQ(on_b, lost);
    ASSERT_EQ(on_b, lost_b);
  } else {
    ASSERT_EQ(FLEET_ESTALE, a.last_error);
    ASSERT_NOT_NULL(strstr(a.detail, "lapsed"));
    ASSERT_GE(lost_b, on_b);
  }
  rec_close(&e, &nb);
  rec_close(&e, &a);
  lock_env_close(&e);
}

static void on_reset(fleet_client_t *c, int status, void *arg) {
  answer_t *a = arg;

  (void)c;
  a->done++;
  a->status = status;
}

/* Resets the pool "p" from `c`. Returns the status. */
static int reset(lock_env_t *e, fleet_client_t *c) {
  answer_t a = {0};

  ASSERT_OK(fleet_pool_reset(c, "p", on_reset, &a));
  ASSERT_EQ(0, a.done); /* never inside the call */
  ASSERT(lock_env_wait(e, &a.done, 1, FLEET_TEST_WAIT_MS));
  return a.status;
}

static void on_query_workers(fleet_client_t *c, int status, uint64_t rev,
                             const fleet_pool_worker_info_t *w, size_t n,
                             void *arg) {
  answer_t *a = arg;

  (void)c;
  (void)rev;
  (void)w;
  a->done++;
  a->status = status;
  a->n = n;
}

/* Shutdown from a client-only node: every job stops on every node, the
 * pool's keys are gone, and the pool stays shut (pulse forbids reuse): a
 * node that joins later is refused with FLEET_ESHUTDOWN, its error
 * callback told once, and takes no call, until fleet_pool_reset() opens
 * the pool; then the old keys can be dispatched again to a new node. */
CONFORMANCE_IMPL(pool_shutdown) {
  node_rec_t a, nb, c, d, late;
  fleet_pool_node_options_t o = test_opts();
  fleet_pool_worker_t extra;
  lock_env_t e;
  answer_t q = {0};
  char key[16];
  int i;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  rec_init(&a, &e.c1, "p", "a", 2, NULL);
  rec_init(&nb, &e.c2, "p", "b", 2, NULL);
  rec_init(&c, &e.c2, "p", "c", 0, NULL);
  wait_workers(&e, &c, 4);
  for (i = 0; i < 20; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_OK(dispatch(&e, &c, key, "payload"));
  }
  ASSERT_EQ(20, a.running + nb.running);
  ASSERT_OK(fleet_pool_shutdown(&c.node, on_status, &q));
  ASSERT(lock_env_wait(&e, &q.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(q.status);
  ASSERT(lock_env_wait(&e, &test_nlog, 40, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(0, a.running + nb.running);
  for (i = 0; i < test_nlog; i++)
    if (test_log[i].kind == 'x')
      ASSERT_EQ(FLEET_POOL_STOP_SHUTDOWN, test_log[i].reason);
  ASSERT_ERR(FLEET_ESHUTDOWN,
             fleet_pool_dispatch(&a.node, "k0", (fleet_bytes_t){0},
                                 never_status, NULL));
  ASSERT_ERR(FLEET_ESHUTDOWN,
             fleet_pool_worker_add(&a.node, &extra, &rec_handler));
  q = query(&e, &c, 'k', NULL);
  ASSERT_EQ(0, q.n);
  q = query(&e, &c, 'p', "k0");
  ASSERT_ERR(FLEET_ENOTFOUND, q.status);
  rec_close(&e, &a);
  rec_close(&e, &nb);

  /* A new node is refused: it never becomes a member. */
  o.error_cb = rec_on_error;
  rec_init(&late, &e.c1, "p", "late", 1, &o);
  ASSERT(lock_env_wait(&e, &late.errors, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(FLEET_ESHUTDOWN, late.last_error);
  ASSERT_NOT_NULL(strstr(late.detail, "shut down"));
  ASSERT_ERR(FLEET_ESHUTDOWN,
             fleet_pool_worker_add(&late.node, &extra, &rec_handler));
  ASSERT_ERR(FLEET_ESHUTDOWN,
             fleet_pool_dispatch(&late.node, "k0", (fleet_bytes_t){0},
                                 never_status, NULL));
  memset(&q, 0, sizeof(q));
  ASSERT_OK(fleet_pool_query_workers(&e.c2, "p", on_query_workers, &q));
  ASSERT(lock_env_wait(&e, &q.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(q.status);
  ASSERT_UEQ(0, q.n);
  lock_env_sleep(&e, 50);
  ASSERT_EQ(1, late.errors); /* told once */
  rec_close(&e, &late);

  /* Reset opens it again; a second reset finds it open. */
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_reset(&e.c1, "p", NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_reset(&e.c1, "", on_reset, &q));
  ASSERT_OK(reset(&e, &e.c1));
  ASSERT_ERR(FLEET_EALREADY, reset(&e, &e.c2));
  rec_init(&d, &e.c1, "p", "d", 1, NULL);
  ASSERT_OK(dispatch(&e, &c, "k0", "again"));
  ASSERT_EQ(1, d.running);
  rec_close(&e, &d);
  rec_close(&e, &c);
  lock_env_close(&e);
}

/* Close from inside a dispatch callback, and from inside a start
 * callback (the dispatch waiting for that start is cancelled by its own
 * node's close). */
static void close_in_cb(fleet_handle_t *h, int status, void *arg) {
  answer_t *a = arg;

  a->done++;
  a->status = status;
  ASSERT_OK(fleet_close(h, NULL));
  ASSERT_ERR(FLEET_ECLOSING, fleet_close(h, NULL));
}

CONFORMANCE_IMPL(pool_close_in_callback) {
  node_rec_t a, c, d;
  lock_env_t e;
  answer_t r = {0};

  test_nlog = 0;
  lock_env_init(&e, b->url);
  rec_init(&a, &e.c1, "p", "a", 1, NULL);
  rec_init(&c, &e.c2, "p", "c", 0, NULL);
  wait_workers(&e, &c, 1);
  ASSERT_OK(
      fleet_pool_dispatch(&c.node, "k1", (fleet_bytes_t){0}, close_in_cb, &r));
  ASSERT(lock_env_wait(&e, &r.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(r.status);

  memset(&r, 0, sizeof(r));
  rec_init(&d, &e.c2, "p", "d", 0, NULL);
  a.close_in_start = 1;
  ASSERT_OK(
      fleet_pool_dispatch(&d.node, "k2", (fleet_bytes_t){0}, on_status, &r));
  ASSERT(lock_env_wait(&e, &test_nlog, 2, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(0, r.done);
  rec_close(&e, &d);
  ASSERT_EQ(1, r.done);
  ASSERT_ERR(FLEET_ECANCELED, r.status);
  lock_env_close(&e);
}

/* A schedule planned from three nodes: each interval planned once; a
 * running key is not dispatched again; stop and stop-all apply; a stop
 * answer ends it on every node. */
typedef struct {
  fleet_pool_schedule_t s[3];
  int plans[16]; /* plan calls per interval */
  int total;
  int errors;
  int last_error;
  int closed;
} sched_rec_t;

static void sched_error(fleet_handle_t *h, int status, const char *detail) {
  sched_rec_t *r = h->data;

  r->errors++;
  r->last_error = status;
}

static void sched_closed(fleet_handle_t *h) {
  ((sched_rec_t *)h->data)->closed++;
}

static int sched_plan(fleet_pool_schedule_t *s, fleet_pool_plan_t *plan,
                      const fleet_pool_tick_t *tick) {
  sched_rec_t *r = s->data;
  fleet_bytes_t none = {NULL, 0};

  ASSERT_ULT(tick->seq, 16);
  r->plans[tick->seq]++;
  r->total++;
  switch (tick->seq) {
    case 1:
    case 2:
      ASSERT_OK(fleet_pool_plan_start(plan, "k1", none));
      ASSERT_OK(fleet_pool_plan_start(plan, "k2", none));
      ASSERT_OK(fleet_pool_plan_start(plan, "k3", none));
      return 0;
    case 3:
      ASSERT_OK(fleet_pool_plan_start(plan, "k1", none));
      ASSERT_OK(fleet_pool_plan_start(plan, "k3", none));
      ASSERT_OK(fleet_pool_plan_stop(plan, "k2"));
      return 0;
    case 4:
      ASSERT_OK(fleet_pool_plan_start(plan, "k4", none));
      ASSERT_OK(fleet_pool_plan_stop_all(plan));
      return 0;
    default:
      return FLEET_POOL_PLAN_STOP;
  }
}

CONFORMANCE_IMPL(pool_schedule) {
  fleet_pool_schedule_options_t so;
  node_rec_t a, c, d;
  node_rec_t *nodes[3] = {&a, &c, &d};
  sched_rec_t r;
  lock_env_t e;
  int i, stopped;

  test_nlog = 0;
  memset(&r, 0, sizeof(r));
  lock_env_init(&e, b->url);
  fleet_pool_schedule_options_init(&so);
  ASSERT_NULL(so.error_cb);
  so.error_cb = sched_error;
  rec_init(&a, &e.c1, "p", "a", 2, NULL);
  rec_init(&c, &e.c2, "p", "c", 0, NULL);
  rec_init(&d, &e.c1, "p", "d", 0, NULL);
  wait_workers(&e, &c, 2);
  for (i = 0; i < 3; i++) {
    r.s[i].data = &r;
    ASSERT_OK(
        fleet_pool_schedule_init(&nodes[i]->node, &r.s[i], "plan", 60, &so));
  }
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_schedule_start(&r.s[0], NULL));
  for (i = 0; i < 3; i++)
    ASSERT_OK(fleet_pool_schedule_start(&r.s[i], sched_plan));
  ASSERT_ERR(FLEET_EALREADY, fleet_pool_schedule_start(&r.s[0], sched_plan));
  ASSERT(lock_env_wait(&e, &r.total, 5, FLEET_TEST_WAIT_MS));
  /* Every node learns the schedule stopped. */
  for (stopped = 0; stopped < 3;) {
    lock_env_sleep(&e, 10);
    for (stopped = i = 0; i < 3; i++)
      stopped += !strcmp("stopped", fleet__pool_schedule_state_name(&r.s[i]));
  }
  lock_env_sleep(&e, 150);
  ASSERT_EQ(5, r.total);
  for (i = 1; i <= 5; i++)
    ASSERT_EQ(1, r.plans[i]);
  /* Let the last stops land. */
  ASSERT(lock_env_wait(&e, &test_nlog, 7, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(1, log_count('s', "k1"));
  ASSERT_EQ(1, log_count('s', "k2"));
  ASSERT_EQ(1, log_count('s', "k3"));
  ASSERT_EQ(1, log_count('s', "k4"));
  ASSERT_EQ(1, log_count('x', "k2"));
  ASSERT_EQ(1, log_count('x', "k1"));
  ASSERT_EQ(1, log_count('x', "k3"));
  ASSERT_EQ(0, log_count('x', "k4"));
  ASSERT_EQ(1, a.running);
  ASSERT_EQ(0, r.errors);
  for (i = 0; i < 3; i++)
    ASSERT_OK(fleet_pool_schedule_close(&r.s[i], sched_closed));
  ASSERT(lock_env_wait(&e, &r.closed, 3, FLEET_TEST_WAIT_MS));
  rec_close(&e, &d);
  rec_close(&e, &c);
  rec_close(&e, &a);
  lock_env_close(&e);
}

static int sched_first_plan(fleet_pool_schedule_t *s, fleet_pool_plan_t *plan,
                            const fleet_pool_tick_t *tick) {
  sched_rec_t *r = s->data;

  ASSERT_ULT(tick->seq, 16);
  r->plans[tick->seq]++;
  r->total++;
  ASSERT_OK(fleet_pool_plan_start(plan, "first", (fleet_bytes_t){"p", 1}));
  return 0;
}

/* A schedule plans once right after it starts, on the node that wins the
 * first interval, not only one interval later (here an hour); a node
 * that starts it later plans nothing until the next interval is due. */
CONFORMANCE_IMPL(pool_schedule_first) {
  fleet_pool_schedule_options_t so;
  node_rec_t a, c;
  sched_rec_t r;
  lock_env_t e;

  test_nlog = 0;
  memset(&r, 0, sizeof(r));
  lock_env_init(&e, b->url);
  rec_init(&a, &e.c1, "p", "a", 1, NULL);
  rec_init(&c, &e.c2, "p", "c", 0, NULL);
  wait_workers(&e, &c, 1);
  r.s[0].data = r.s[1].data = &r;
  fleet_pool_schedule_options_init(&so);
  so.error_cb = sched_error;
  ASSERT_OK(fleet_pool_schedule_init(&c.node, &r.s[0], "hourly", 3600000, &so));
  ASSERT_OK(fleet_pool_schedule_init(&a.node, &r.s[1], "hourly", 3600000, &so));
  ASSERT_OK(fleet_pool_schedule_start(&r.s[0], sched_first_plan));
  ASSERT_EQ(0, r.total); /* never inside the call */
  /* Within the wait (at most 10 s x slack), far less than the interval. */
  ASSERT(lock_env_wait(&e, &r.total, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(1, r.plans[1]);
  /* Its plan is applied: the job starts. */
  ASSERT(lock_env_wait(&e, &test_nlog, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(1, log_count('s', "first"));

  /* The second node: the interval is not due, it plans nothing. */
  ASSERT_OK(fleet_pool_schedule_start(&r.s[1], sched_first_plan));
  lock_env_sleep(&e, 300);
  ASSERT_EQ(1, r.total);
  ASSERT_EQ(0, r.errors);
  ASSERT_OK(fleet_pool_schedule_close(&r.s[0], sched_closed));
  ASSERT_OK(fleet_pool_schedule_close(&r.s[1], sched_closed));
  ASSERT(lock_env_wait(&e, &r.closed, 2, FLEET_TEST_WAIT_MS));
  rec_close(&e, &c);
  rec_close(&e, &a);
  lock_env_close(&e);
}

static int sched_busy_plan(fleet_pool_schedule_t *s, fleet_pool_plan_t *plan,
                           const fleet_pool_tick_t *tick) {
  sched_rec_t *r = s->data;
  fleet_bytes_t none = {NULL, 0};

  ASSERT_ULT(tick->seq, 16);
  r->plans[tick->seq]++;
  r->total++;
  if (tick->seq > 1)
    return FLEET_POOL_PLAN_STOP;
  ASSERT_OK(fleet_pool_plan_start(plan, "b1", none));
  ASSERT_OK(fleet_pool_plan_start(plan, "b2", none));
  return 0;
}

/* The error callback given in a schedule's options hears a dispatch of
 * its plan that failed: the planning node admits one job at most, so the
 * plan's second start is refused with FLEET_EBUSY. A schedule without
 * options (NULL) takes the defaults. */
CONFORMANCE_IMPL(pool_schedule_error) {
  fleet_pool_node_options_t no = test_opts();
  fleet_pool_schedule_options_t so;
  node_rec_t a, c;
  sched_rec_t r;
  lock_env_t e;

  test_nlog = 0;
  memset(&r, 0, sizeof(r));
  lock_env_init(&e, b->url);
  rec_init(&a, &e.c1, "p", "a", 1, NULL);
  no.max_queued_jobs = 1;
  rec_init(&c, &e.c2, "p", "c", 0, &no);
  wait_workers(&e, &c, 1);
  r.s[0].data = r.s[1].data = &r;
  fleet_pool_schedule_options_init(&so);
  so.error_cb = sched_error;
  ASSERT_OK(fleet_pool_schedule_init(&c.node, &r.s[0], "busy", 60, &so));
  ASSERT_OK(fleet_pool_schedule_init(&a.node, &r.s[1], "idle", 60, NULL));
  ASSERT_OK(fleet_pool_schedule_start(&r.s[0], sched_busy_plan));
  ASSERT(lock_env_wait(&e, &r.errors, 1, FLEET_TEST_WAIT_MS));
  ASSERT_ERR(FLEET_EBUSY, r.last_error);
  ASSERT_EQ(1, r.plans[1]);
  /* One of the two starts ran; the other was refused. */
  ASSERT(lock_env_wait(&e, &test_nlog, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(1, log_count('s', "b1") + log_count('s', "b2"));
  ASSERT_OK(fleet_pool_schedule_close(&r.s[0], sched_closed));
  ASSERT_OK(fleet_pool_schedule_close(&r.s[1], sched_closed));
  ASSERT(lock_env_wait(&e, &r.closed, 2, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(1, r.errors);
  rec_close(&e, &c);
  rec_close(&e, &a);
  lock_env_close(&e);
}

/* One raw op's reply: an integer, or an array's size and its first three
 * integers. */
typedef struct {
  int done;
  int status;
  size_t nelem;
  int64_t first, second, third;
} raw_t;

static void on_raw(void *arg, int status, const fleet__reply_t *reply) {
  raw_t *r = arg;

  r->status = status;
  r->first = r->second = r->third = INT64_MIN;
  if (status == 0 && reply->type == FLEET__REPLY_ARRAY) {
    r->nelem = reply->nelem;
    if (reply->nelem > 0)
      ASSERT_OK(fleet__reply_i64(&reply->elem[0], &r->first));
    if (reply->nelem > 1)
      ASSERT_OK(fleet__reply_i64(&reply->elem[1], &r->second));
    if (reply->nelem > 2)
      ASSERT_OK(fleet__reply_i64(&reply->elem[2], &r->third));
  } else if (status == 0) {
    ASSERT_OK(fleet__reply_i64(reply, &r->first));
  }
  r->done = 1;
}

static raw_t raw_op(lock_env_t *e, node_rec_t *n, fleet__op_t op,
                    const char *const *argv, size_t argc) {
  fleet__pool_t *p = fleet__pool_of(&n->node);
  fleet_bytes_t key = {p->tag.base, p->tag.len}, args[16];
  raw_t r;
  size_t i;

  memset(&r, 0, sizeof(r));
  for (i = 0; i < argc; i++)
    args[i] = (fleet_bytes_t){argv[i], strlen(argv[i])};
  ASSERT_OK(fleet__backend_call(fleet__client_backend(&e->c1), op, &key, 1,
                                args, argc, on_raw, &r));
  ASSERT(fleet_test_run_until(&e->loop, fleet_test_flag_set, &r.done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(r.status);
  return r;
}

/* A node that finds itself gone from the pool joins again, re-asserting
 * its jobs, unless the pool shut down and the node has not read that yet:
 * then POOL_JOIN changes nothing and answers {-1}, and no job or member
 * comes back (no payload left behind by a shutdown, pulse #52). A fresh
 * join re-asserts a job only where its key is absent. */
CONFORMANCE_IMPL(pool_rejoin_after_shutdown) {
  static const char *const join[] = {"x",  "i1",  "60000", "60000", "0",
                                     "1",  "x/1", "j1",    "x/1",   "p1",
                                     "j2", "x/1", "p2"};
  static const char *const rejoin[] = {"x", "i1",  "60000", "60000", "1",
                                       "1", "x/1", "j1",    "x/1",   "p1"};
  const char *dispatch_args[9] = {"c", "-",   "0", "j2", "p",
                                  "0", "x/1", "x", "0"};
  node_rec_t c;
  lock_env_t e;
  raw_t r;
  char rev[24];

  lock_env_init(&e, b->url);
  rec_init(&c, &e.c1, "p", "c", 0, NULL);
  /* A first join that re-asserts j1 and j2: both absent, both admitted. */
  r = raw_op(&e, &c, FLEET__OP_POOL_JOIN, join, 13);
  ASSERT_UEQ(3, r.nelem);
  ASSERT_GT(r.second, 0);
  snprintf(rev, sizeof(rev), "%" PRId64, r.first);
  ASSERT_UEQ(2, query(&e, &c, 'k', NULL).n);
  /* Another re-assertion of j1 is refused: the key is held. */
  r = raw_op(&e, &c, FLEET__OP_POOL_JOIN, join, 10);
  ASSERT_UEQ(2, r.nelem);
  ASSERT_EQ(0, r.second);
  dispatch_args[5] = rev;
  r = raw_op(&e, &c, FLEET__OP_POOL_DISPATCH, dispatch_args, 9);
  ASSERT_UEQ(4, r.nelem);
  ASSERT_EQ(0, r.first); /* no start result asked to take */
  ASSERT_EQ(0, r.third); /* j2 exists */

  r = raw_op(&e, &c, FLEET__OP_POOL_SHUTDOWN, NULL, 0);
  ASSERT_EQ(1, r.first); /* told x */
  r = raw_op(&e, &c, FLEET__OP_POOL_JOIN, rejoin, 10);
  ASSERT_UEQ(1, r.nelem);
  ASSERT_EQ(-1, r.first);
  ASSERT_UEQ(0, query(&e, &c, 'k', NULL).n);
  ASSERT_UEQ(0, query(&e, &c, 'w', NULL).n);
  rec_close(&e, &c);
  lock_env_close(&e);
}

/* POOL_WORKER_REMOVE on the keys: the drain takes the worker out of the
 * membership only; the forget orphans the jobs it still holds, except one
 * it was asked to stop, which leaves the pool. A node that leaves (or is
 * reaped) treats its jobs the same way. */
CONFORMANCE_IMPL(pool_worker_forget) {
  static const char *const join[] = {"x",  "i1",  "60000", "60000", "0",
                                     "2",  "x/1", "x/2",   "j1",    "x/1",
                                     "p1", "j2",  "x/1",   "p2"};
  const char *drain[4] = {"x", "x/1", "d", "i1"},
             *forget[4] = {"x", "x/1", "f", "i1"};
  const char *stop[1] = {"j2"};
  node_rec_t c;
  lock_env_t e;
  answer_t q;
  raw_t r;

  lock_env_init(&e, b->url);
  rec_init(&c, &e.c1, "p", "c", 0, NULL);
  r = raw_op(&e, &c, FLEET__OP_POOL_JOIN, join, 14);
  ASSERT_UEQ(3, r.nelem);
  ASSERT_EQ(1, raw_op(&e, &c, FLEET__OP_POOL_STOP, stop, 1).first);
  ASSERT_EQ(1, raw_op(&e, &c, FLEET__OP_POOL_WORKER_REMOVE, drain, 4).first);
  ASSERT_EQ(0, raw_op(&e, &c, FLEET__OP_POOL_WORKER_REMOVE, drain, 4).first);
  q = query(&e, &c, 'w', NULL);
  ASSERT_STR_EQ("x/2@x", q.text);
  q = query(&e, &c, 'j', NULL);
  ASSERT_UEQ(2, q.n); /* still its jobs */
  ASSERT_NOT_NULL(strstr(q.text, "j1@x/1#"));
  /* The forget: j1 orphaned (no owner), j2 (being stopped) gone. */
  ASSERT_EQ(1, raw_op(&e, &c, FLEET__OP_POOL_WORKER_REMOVE, forget, 4).first);
  q = query(&e, &c, 'j', NULL);
  ASSERT_UEQ(1, q.n);
  ASSERT(strncmp(q.text, "j1@#", 4) == 0);
  ASSERT_ERR(FLEET_ENOTFOUND, query(&e, &c, 'p', "j2").status);
  ASSERT_EQ(0, raw_op(&e, &c, FLEET__OP_POOL_WORKER_REMOVE, forget, 4).first);

  /* The same when the node leaves (or dies): j1 stays, orphaned; j3,
   * being stopped, leaves the pool. */
  {
    static const char *const join_y[] = {"y",  "i1",  "60000", "60000", "0",
                                         "1",  "y/1", "j3",    "y/1",   "p3",
                                         "j4", "y/1", "p4"};
    const char *stop3[1] = {"j3"}, *leave[2] = {"y", "i1"};

    r = raw_op(&e, &c, FLEET__OP_POOL_JOIN, join_y, 13);
    ASSERT_UEQ(3, r.nelem);
    ASSERT_EQ(1, raw_op(&e, &c, FLEET__OP_POOL_STOP, stop3, 1).first);
    ASSERT_EQ(1, raw_op(&e, &c, FLEET__OP_POOL_LEAVE, leave, 2).first);
    q = query(&e, &c, 'k', NULL);
    ASSERT_UEQ(2, q.n); /* j1 and j4 */
    ASSERT_ERR(FLEET_ENOTFOUND, query(&e, &c, 'p', "j3").status);
    ASSERT_OK(query(&e, &c, 'p', "j4").status);
  }
  rec_close(&e, &c);
  lock_env_close(&e);
}

/* The routing hash: in range, balanced, and growing from n to n + 1
 * buckets moves about 1/(n + 1) of the keys, each to the new bucket. */
TEST_IMPL(pool_jump_hash) {
  uint32_t n, i, count[11];
  char key[32];

  ASSERT_EQ(0, fleet__jump_hash(0, 1));
  ASSERT_EQ(0, fleet__jump_hash(12345, 1));
  ASSERT_UNE(fleet__key_hash("k1", 2), fleet__key_hash("k2", 2));
  for (n = 1; n < 10; n++) {
    uint32_t moved = 0;
    memset(count, 0, sizeof(count));
    for (i = 0; i < 10000; i++) {
      uint64_t h;
      uint32_t a, b;
      snprintf(key, sizeof(key), "job-%u", i);
      h = fleet__key_hash(key, strlen(key));
      a = fleet__jump_hash(h, n);
      b = fleet__jump_hash(h, n + 1);
      ASSERT_ULT(a, n);
      ASSERT_ULT(b, n + 1);
      if (a != b) {
        ASSERT_UEQ(n, b);
        moved++;
      }
      count[b]++;
    }
    /* Within 20% of the ideal share. */
    ASSERT_UGT(moved, 10000 / (n + 1) * 8 / 10);
    ASSERT_ULT(moved, 10000 / (n + 1) * 12 / 10);
    for (i = 0; i <= n; i++)
      ASSERT_UGT(count[i], 10000 / (n + 1) * 8 / 10);
  }
  return 0;
}

/* FLUSHDB under a running pool: the node finds itself gone at its next
 * keep-alive, joins again and re-asserts the jobs it runs, each only when
 * its key is absent. Here the flush leaves one key, k4, held by the pool
 * (orphaned, as after another owner's loss): that one the node gives up
 * (LOST), and the pool places it again; the others run on, with new
 * tokens, and the pool's job list is whole again: a dispatch of any old
 * key gets FLEET_EEXIST. No restart. */
TEST_IMPL(pool_flushdb_redis) {
  static const char flush[] =
      "redis.call('FLUSHDB') "
      "redis.call('HSET', '{locktest:p}:jobs', 'k4', '1:o:') return 1";
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_pool_node_options_t o = test_opts();
  uint64_t before[5];
  node_rec_t a, c;
  redisReply *reply;
  answer_t q;
  lock_env_t e;
  char key[16], want[64];
  int i, n0;

  test_nlog = 0;
  lock_env_init(&e, fleet_test_redis_url(r));
  o.worker_ttl_ms = 300;
  rec_init(&a, &e.c1, "p", "a", 2, &o);
  rec_init(&c, &e.c2, "p", "c", 0, &o);
  wait_workers(&e, &c, 2);
  for (i = 0; i < 5; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_OK(dispatch(&e, &c, key, key));
    ASSERT_EQ('s', test_log[i].kind);
    before[i] = test_log[i].token;
  }
  n0 = test_nlog;
  reply = fleet_test_redis_cmd(r, "EVAL %s 0", flush);
  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(REDIS_REPLY_INTEGER, reply->type);
  freeReplyObject(reply);

  /* k4 is given up, then started again by the pool (its hash owner is
   * one of a's two workers, the only ones). */
  ASSERT(lock_env_wait(&e, &test_nlog, n0 + 2, FLEET_TEST_WAIT_MS));
  ASSERT_EQ('x', test_log[n0].kind);
  ASSERT_STR_EQ("k4", test_log[n0].key);
  ASSERT_EQ(FLEET_POOL_STOP_LOST, test_log[n0].reason);
  ASSERT_EQ('s', test_log[n0 + 1].kind);
  ASSERT_STR_EQ("k4", test_log[n0 + 1].key);
  ASSERT_UGT(test_log[n0 + 1].token, before[4]);
  lock_env_sleep(&e, 3 * 300);
  for (i = n0 + 2; i < test_nlog; i++)
    ASSERT(test_log[i].kind != 'x'); /* the others were never stopped */
  ASSERT_EQ(5, a.running);

  /* The pool's job list is whole, the re-asserted jobs with new tokens,
   * and every old key is in the pool. */
  q = query(&e, &c, 'j', NULL);
  ASSERT_OK(q.status);
  ASSERT_UEQ(5, q.n);
  for (i = 0; i < 4; i++) {
    const char *at;
    snprintf(want, sizeof(want), "k%d@", i);
    ASSERT_NOT_NULL(at = strstr(q.text, want));
    at = strchr(at, '#');
    ASSERT_NOT_NULL(at);
    ASSERT_UGT(strtoull(at + 1, NULL, 10), before[i]);
  }
  for (i = 0; i < 5; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_ERR(FLEET_EEXIST, dispatch(&e, &c, key, key));
    if (i == 4)
      continue; /* its payload was lost with the flush */
    q = query(&e, &c, 'p', key);
    ASSERT_OK(q.status);
    ASSERT_STR_EQ(key, q.text);
  }
  wait_workers(&e, &c, 2);
  ASSERT_EQ(5, a.running);
  rec_close(&e, &c);
  rec_close(&e, &a);
  lock_env_close(&e);
  fleet_test_redis_free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Removing a worker                                                        */

static int removed_n, removed_status;
static fleet_pool_worker_t *removed_w;

static void on_removed(fleet_pool_worker_t *w, int status) {
  removed_n++;
  removed_status = status;
  removed_w = w;
}

/* Checks the log from `from` on: every job that ran on worker `wi` of
 * `n` was stopped there (MOVED) and then started on another worker, and
 * none started there after its removal began. Returns how many moved. */
static int check_moved_off(const node_rec_t *n, int wi, int from,
                           const int *ran, int nkeys) {
  int i, j, k, moved = 0;
  char key[16];

  for (k = 0; k < nkeys; k++) {
    int stop_at = -1, start_at = -1;
    snprintf(key, sizeof(key), "k%d", k);
    for (i = from; i < test_nlog; i++) {
      const ev_t *e = &test_log[i];
      if (strcmp(e->key, key) != 0)
        continue;
      if (e->node == n && e->worker == wi) {
        ASSERT_EQ('x', e->kind); /* nothing starts there */
        ASSERT_EQ(FLEET_POOL_STOP_MOVED, e->reason);
        stop_at = i;
      } else if (e->kind == 's' && start_at < 0) {
        start_at = i;
      }
    }
    if (ran[k]) {
      ASSERT_GE(stop_at, 0);
      ASSERT_GT(start_at, stop_at);
      moved++;
    } else {
      ASSERT_EQ(-1, stop_at);
    }
    /* No key was started twice without a stop between. */
    for (i = from, j = 0; i < test_nlog; i++)
      if (!strcmp(test_log[i].key, key))
        j += test_log[i].kind == 's' ? 1 : test_log[i].kind == 'x' ? -1 : 0;
    ASSERT_LE(j, 1);
  }
  return moved;
}

/* Waits (bounded) until every key k<i> with ran[i] of the first `nkeys`
 * started again in the log from `from` on. */
static void wait_started(lock_env_t *e, int from, const int *ran, int nkeys) {
  uint64_t end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
  char key[16];
  int i, j;

  for (;;) {
    int placed = 1;
    for (i = 0; i < nkeys; i++) {
      int started = 0;
      if (!ran[i])
        continue;
      snprintf(key, sizeof(key), "k%d", i);
      for (j = from; j < test_nlog; j++)
        started |= test_log[j].kind == 's' && !strcmp(test_log[j].key, key);
      placed &= started;
    }
    if (placed)
      return;
    ASSERT_ULT(lock_env_now(), end);
    lock_env_sleep(e, 10);
  }
}

/* fleet_pool_worker_remove: the worker's jobs stop there (MOVED) and
 * start on the other workers, the worker leaves the membership, later
 * dispatches never reach it; with a short worker shutdown TTL the jobs
 * are handed over at once, with the same guarantees. */
CONFORMANCE_IMPL(pool_worker_remove) {
  fleet_pool_node_options_t o = test_opts(), q = test_opts();
  node_rec_t a, nb, c;
  lock_env_t e;
  answer_t ans;
  char key[16];
  int ran[40], i, from, on_w0;

  test_nlog = 0;
  removed_n = 0;
  lock_env_init(&e, b->url);
  rec_init(&a, &e.c1, "p", "a", 2, &o);
  q.worker_shutdown_ttl_ms = 1; /* hands the jobs over at once */
  rec_init(&nb, &e.c2, "p", "b", 2, &q);
  rec_init(&c, &e.c2, "p", "c", 0, NULL);
  wait_workers(&e, &c, 4);

  ASSERT_ERR(FLEET_EINVAL, fleet_pool_worker_remove(NULL, on_removed));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_worker_remove(&a.w[0], NULL));
  for (i = 0; i < 20; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_OK(dispatch(&e, &c, key, key));
  }
  memset(ran, 0, sizeof(ran));
  for (i = 0; i < test_nlog; i++)
    if (test_log[i].node == &a && test_log[i].worker == 0)
      ran[atoi(test_log[i].key + 1)] = 1;
  for (on_w0 = i = 0; i < 20; i++)
    on_w0 += ran[i];
  ASSERT_GT(on_w0, 0);

  /* Graceful: a/1's jobs move through stop-then-start. */
  from = test_nlog;
  ASSERT_OK(fleet_pool_worker_remove(&a.w[0], on_removed));
  ASSERT_ERR(FLEET_EALREADY, fleet_pool_worker_remove(&a.w[0], on_removed));
  ASSERT_EQ(0, removed_n); /* never inside the call */
  ASSERT(lock_env_wait(&e, &removed_n, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(removed_status);
  ASSERT_PTR_EQ(&a.w[0], removed_w);
  ASSERT_NULL(fleet_pool_worker_id(&a.w[0]));
  /* (A start on node b, the other client, may come after the removal's
   * answer on node a.) */
  wait_started(&e, from, ran, 20);
  ASSERT_EQ(on_w0, check_moved_off(&a, 0, from, ran, 20));
  ans = query(&e, &c, 'w', NULL);
  ASSERT_UEQ(3, ans.n);
  ASSERT_NULL(strstr(ans.text, "a/1@"));
  ans = query(&e, &c, 'j', NULL);
  ASSERT_UEQ(20, ans.n);
  ASSERT_NULL(strstr(ans.text, "@a/1#"));

  /* New dispatches never reach it; the worker numbers go on. */
  for (i = 20; i < 40; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_OK(dispatch(&e, &c, key, key));
  }
  for (i = from; i < test_nlog; i++)
    ASSERT(!(test_log[i].node == &a && test_log[i].worker == 0 &&
             test_log[i].kind == 's'));

  /* With a 1 ms shutdown TTL: b/1's jobs are stopped and handed over. */
  memset(ran, 0, sizeof(ran));
  for (i = 0; i < test_nlog; i++)
    if (test_log[i].node == &nb && test_log[i].worker == 0)
      ran[atoi(test_log[i].key + 1)] = test_log[i].kind == 's';
  for (on_w0 = i = 0; i < 40; i++)
    on_w0 += ran[i];
  from = test_nlog;
  ASSERT_OK(fleet_pool_worker_remove(&nb.w[0], on_removed));
  ASSERT(lock_env_wait(&e, &removed_n, 2, FLEET_TEST_WAIT_MS));
  ASSERT_OK(removed_status);
  ASSERT_PTR_EQ(&nb.w[0], removed_w);
  /* Every job it ran starts elsewhere (the pool places the orphans). */
  wait_started(&e, from, ran, 40);
  ASSERT_EQ(on_w0, check_moved_off(&nb, 0, from, ran, 40));
  ans = query(&e, &c, 'w', NULL);
  ASSERT_UEQ(2, ans.n);
  ans = query(&e, &c, 'j', NULL);
  ASSERT_UEQ(40, ans.n);
  /* All 40 run. Under load a node can lapse its 600 ms membership and
   * stop its jobs (LAPSED) until it rejoins: they run again then. */
  {
    uint64_t end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
    while (a.running + nb.running != 40 && lock_env_now() < end)
      lock_env_sleep(&e, 10);
  }
  ASSERT_EQ(40, a.running + nb.running);

  /* A removal the node's close overtakes hears FLEET_ECANCELED. */
  ASSERT_OK(fleet_pool_worker_remove(&a.w[1], on_removed));
  rec_close(&e, &a);
  ASSERT_EQ(3, removed_n);
  ASSERT_ERR(FLEET_ECANCELED, removed_status);
  rec_close(&e, &c);
  rec_close(&e, &nb);
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Node ids                                                                 */

/* Options whose errors the node's record hears, with a worker TTL far
 * longer than the waits of a test (`ttl_ms` unscaled; 0: 60 s). */
static fleet_pool_node_options_t ident_opts(uint32_t ttl_ms) {
  fleet_pool_node_options_t o = test_opts();

  o.worker_ttl_ms = (uint32_t)fleet_test_ms(ttl_ms != 0 ? ttl_ms : 60000);
  o.error_cb = rec_on_error;
  return o;
}

/* Waits for `n`'s error callback to hear FLEET_ECONFLICT naming `id`. */
static void wait_conflict(lock_env_t *e, node_rec_t *n, const char *id) {
  char want[64];

  ASSERT(lock_env_wait(e, &n->conflicts, 1, FLEET_TEST_WAIT_MS));
  ASSERT_ERR(FLEET_ECONFLICT, n->last_error);
  snprintf(want, sizeof(want), "pool node id \"%s\" is already in use", id);
  ASSERT_NOT_NULL(strstr(n->detail, want));
  ASSERT_STR_EQ("refused",
                fleet__pool_state_name(fleet__pool_of(&n->node)->state));
}

/* Two nodes with one id on one backend (on memory, two clients of one
 * store): the second, with a worker or client-only, is refused with
 * FLEET_ECONFLICT naming the id and takes no calls; the pool lists the
 * first node's worker only, which still gets and runs every job, its
 * dispatches answered. Closing a refused node leaves the id to the first;
 * closing the first frees it at once, long before its TTL. */
CONFORMANCE_IMPL(pool_ident_conflict) {
  fleet_pool_node_options_t oa = ident_opts(0), ob = ident_opts(0),
                            oc = ident_opts(0), od = ident_opts(0);
  node_rec_t a, b2, c2, obs, d;
  fleet_pool_worker_t w;
  lock_env_t e;
  answer_t q;
  uint64_t closed_at;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  rec_init(&a, &e.c1, "p", "X", 1, &oa);
  rec_init(&obs, &e.c1, "p", "obs", 0, NULL);
  wait_workers(&e, &obs, 1);
  ASSERT_STR_EQ("X", fleet_pool_node_id(&a.node));

  rec_init(&b2, &e.c2, "p", "X", 1, &ob);
  wait_conflict(&e, &b2, "X");
  rec_init(&c2, &e.c2, "p", "X", 0, &oc);
  wait_conflict(&e, &c2, "X");
  ASSERT_EQ(1, b2.errors);
  ASSERT_ERR(FLEET_ECONFLICT,
             fleet_pool_dispatch(&c2.node, "k", (fleet_bytes_t){"p", 1},
                                 never_status, NULL));
  ASSERT_ERR(FLEET_ECONFLICT, fleet_pool_workers(&b2.node, on_workers, &q));
  w.data = &b2;
  ASSERT_ERR(FLEET_ECONFLICT,
             fleet_pool_worker_add(&b2.node, &w, &rec_handler));
  q = query(&e, &obs, 'w', NULL);
  ASSERT_STR_EQ("X/1@X", q.text);

  /* The first node gets and runs every job; its dispatches are answered
   * (its event list is its own). */
  ASSERT_OK(dispatch(&e, &a, "k1", "p1"));
  ASSERT_OK(dispatch(&e, &obs, "k2", "p2"));
  ASSERT_OK(dispatch(&e, &a, "k3", "p3"));
  ASSERT_EQ(3, a.running);
  ASSERT_EQ(3, log_count('s', NULL));
  ASSERT_EQ(0, b2.running);
  ASSERT_EQ(0, a.errors);

  /* A refused node's close leaves the id alone. */
  rec_close(&e, &b2);
  rec_close(&e, &c2);
  ASSERT_OK(dispatch(&e, &a, "k4", "p4"));
  ASSERT_EQ(4, a.running);
  rec_init(&d, &e.c2, "p", "X", 1, &od);
  wait_conflict(&e, &d, "X");
  rec_close(&e, &d);
  ASSERT_EQ(0, a.errors);

  /* Closed: the id is free at once; the new node takes the jobs. */
  closed_at = lock_env_now();
  rec_close(&e, &a);
  od = ident_opts(0);
  rec_init(&d, &e.c2, "p", "X", 1, &od);
  wait_workers(&e, &obs, 1);
  ASSERT_LT(lock_env_now() - closed_at, fleet_test_ms(30000));
  ASSERT_OK(dispatch(&e, &d, "k5", "p5"));
  ASSERT_EQ(0, d.errors);
  /* (The jobs a left are placed on d by a rebalance of their own, which
   * a dispatch's answer does not wait for.) */
  ASSERT(lock_env_wait(&e, &d.running, 5, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(5, d.running);
  rec_close(&e, &d);
  rec_close(&e, &obs);
  lock_env_close(&e);
}

/* A node whose lease ran out while its loop was stalled, and whose id
 * another instance took meanwhile, is refused when it wakes: its error
 * callback hears FLEET_ECONFLICT once (after FLEET_ESTALE for the lapse),
 * its job stops (LOST), it takes no more calls, and its close leaves the
 * other's id alone. The other frees it by leaving with its own nonce. */
CONFORMANCE_IMPL(pool_ident_taken) {
  fleet_pool_node_options_t oa = ident_opts(300), od = ident_opts(0);
  static const char *const take[] = {"X", "other", "60000", "60000", "0", "0"};
  static const char *const give[] = {"X", "other"};
  node_rec_t a, obs, d;
  lock_env_t e;
  raw_t r;
  int i;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  rec_init(&a, &e.c1, "p", "X", 1, &oa);
  rec_init(&obs, &e.c2, "p", "obs", 0, NULL);
  wait_workers(&e, &obs, 1);
  ASSERT_OK(dispatch(&e, &obs, "k1", "p1"));
  ASSERT_EQ(1, a.running);
  /* The whole loop stalls past the worker TTL: the lease runs out on the
   * server's clock. Then, before the node runs again, another instance
   * claims the id (the call goes out first). */
  uv_sleep((unsigned)(oa.worker_ttl_ms + fleet_test_ms(200)));
  r = raw_op(&e, &obs, FLEET__OP_POOL_JOIN, take, 6);
  ASSERT_UEQ(1, r.nelem);
  wait_conflict(&e, &a, "X");
  ASSERT_EQ(1, a.conflicts);
  ASSERT_LE(a.errors, 2);
  ASSERT_EQ(0, a.running);
  for (i = 0; i < test_nlog; i++)
    if (test_log[i].kind == 'x')
      ASSERT_EQ(FLEET_POOL_STOP_LOST, test_log[i].reason);
  ASSERT_EQ(1, log_count('x', "k1"));
  ASSERT_ERR(FLEET_ECONFLICT,
             fleet_pool_dispatch(&a.node, "k2", (fleet_bytes_t){"p", 1},
                                 never_status, NULL));
  rec_close(&e, &a);
  /* The id is still the other instance's. */
  rec_init(&d, &e.c2, "p", "X", 1, &od);
  wait_conflict(&e, &d, "X");
  rec_close(&e, &d);
  /* It held the id only (no worker): 0, not a member; -1 would be a
   * refusal. */
  ASSERT_EQ(0, raw_op(&e, &obs, FLEET__OP_POOL_LEAVE, give, 2).first);
  od = ident_opts(0);
  rec_init(&d, &e.c2, "p", "X", 1, &od);
  wait_workers(&e, &obs, 1);
  ASSERT_EQ(0, d.errors);
  rec_close(&e, &d);
  rec_close(&e, &obs);
  lock_env_close(&e);
}

/* A NULL or empty node id is made by fleet: distinct for two nodes,
 * without '/', readable, and the nodes work under them. */
CONFORMANCE_IMPL(pool_ident_generated) {
  fleet_pool_node_options_t oa = ident_opts(0), ob = ident_opts(0);
  node_rec_t a, c;
  lock_env_t e;
  answer_t q;
  char want[256];
  const char *ida, *idc;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  rec_init(&a, &e.c1, "p", NULL, 1, &oa);
  rec_init(&c, &e.c2, "p", "", 1, &ob);
  ida = fleet_pool_node_id(&a.node);
  idc = fleet_pool_node_id(&c.node);
  ASSERT_NOT_NULL(ida);
  ASSERT_NOT_NULL(idc);
  ASSERT_STR_NE(ida, idc);
  ASSERT_NULL(strchr(ida, '/'));
  ASSERT_GT(strlen(ida), 8);
  wait_workers(&e, &a, 2);
  q = query(&e, &a, 'w', NULL);
  snprintf(want, sizeof(want), "%s/1@%s*", ida, ida);
  ASSERT_NOT_NULL(strstr(q.text, want));
  snprintf(want, sizeof(want), "%s/1@%s", idc, idc);
  ASSERT_NOT_NULL(strstr(q.text, want));
  ASSERT_OK(dispatch(&e, &a, "k1", "p1"));
  ASSERT_OK(dispatch(&e, &c, "k2", "p2"));
  ASSERT_EQ(2, a.running + c.running);
  ASSERT_EQ(0, a.errors + c.errors);
  rec_close(&e, &a);
  rec_close(&e, &c);
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Requeues (pulse's ErrRequeue) and one worker's jobs                       */

/* The log entries of `kind` for `key`, in order, into `out` (at most
 * `max`). Returns how many. */
static int log_of(char kind, const char *key, ev_t *out, int max) {
  int i, n = 0;

  for (i = 0; i < test_nlog && n < max; i++)
    if (test_log[i].kind == kind && !strcmp(key, test_log[i].key))
      out[n++] = test_log[i];
  return n;
}

/* The state of `key` as fleet_pool_query_jobs() reads it, or -1 when it
 * is not in the pool. */
typedef struct {
  int done;
  int state;
  char worker[64];
  const char *key;
} state_answer_t;

static void on_state(fleet_client_t *c, int status,
                     const fleet_pool_job_status_t *jobs, size_t n, void *arg) {
  state_answer_t *a = arg;
  size_t i;

  (void)c;
  ASSERT_OK(status);
  a->state = -1;
  for (i = 0; i < n; i++)
    if (!strcmp(jobs[i].key.base, a->key)) {
      a->state = (int)jobs[i].state;
      snprintf(a->worker, sizeof(a->worker), "%s", jobs[i].worker_id);
    }
  a->done++;
}

static int job_state(lock_env_t *e, const char *key, char *worker) {
  state_answer_t a = {0};

  a.key = key;
  ASSERT_OK(fleet_pool_query_jobs(&e->c2, "p", on_state, &a));
  ASSERT(lock_env_wait(e, &a.done, 1, FLEET_TEST_WAIT_MS));
  if (worker != NULL)
    strcpy(worker, a.worker);
  return a.state;
}

/* Waits (bounded) until the pool tells `key` in state `want`; returns the
 * state it last told. The requeue a handler makes goes on its node's
 * client, the query on another: the query may pass it. */
static int wait_state(lock_env_t *e, const char *key, char *worker, int want) {
  uint64_t end = lock_env_now() + fleet_test_ms(FLEET_TEST_WAIT_MS);
  int st;

  while ((st = job_state(e, key, worker)) != want && lock_env_now() < end)
    lock_env_sleep(e, 2);
  return st;
}

/* A start handler requeues: the job waits without an owner (REQUEUED)
 * for the backoff, doubled per requeue in a row, and starts again with a
 * new token; the dispatcher waits on and hears the start that reported.
 * Past max_requeues in a row the job is dropped: the dispatcher and the
 * requeuing node's error callback hear FLEET_EATTEMPTS. A stop handler
 * requeues a stop the pool asked for: the job starts again after the
 * backoff instead of leaving the pool; a stop for any other reason cannot
 * be handed back. */
CONFORMANCE_IMPL(pool_requeue) {
  fleet_pool_node_options_t o = test_opts();
  uint64_t backoff = (uint64_t)fleet_test_ms(100);
  node_rec_t a, c;
  lock_env_t e;
  answer_t d = {0};
  ev_t s[8], q[8];
  char worker[64];
  int i, n;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  o.requeue_backoff_ms = (uint32_t)backoff;
  o.max_requeues = 2;
  o.ack_grace_ms = (uint32_t)fleet_test_ms(1000);
  o.error_cb = rec_on_error;
  rec_init(&a, &e.c1, "p", "a", 1, &o);
  rec_init(&c, &e.c2, "p", "c", 0, NULL);
  wait_workers(&e, &c, 1);
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_job_requeue(NULL));

  /* Two requeues, then a start that reports. */
  a.requeue_left = 2;
  ASSERT_OK(fleet_pool_dispatch(&c.node, "k1", (fleet_bytes_t){"p1", 2},
                                on_status, &d));
  ASSERT(lock_env_wait(&e, &test_nlog, 2, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(FLEET_POOL_JOB_REQUEUED,
            wait_state(&e, "k1", worker, FLEET_POOL_JOB_REQUEUED));
  ASSERT_STR_EQ("", worker);
  ASSERT(lock_env_wait(&e, &d.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(d.status);
  ASSERT_EQ(3, log_of('s', "k1", s, 8));
  ASSERT_EQ(2, log_of('q', "k1", q, 8));
  for (i = 1; i < 3; i++) {
    ASSERT_UGT(s[i].token, s[i - 1].token);
    /* The backoff, doubled for the second requeue (server clock; a ms
     * of rounding between the clocks allowed). */
    ASSERT_UGE(s[i].at - q[i - 1].at, (backoff << (i - 1)) - 2);
  }
  ASSERT_EQ(1, a.running);
  ASSERT_EQ(FLEET_POOL_JOB_RUNNING, job_state(&e, "k1", worker));
  ASSERT_STR_EQ(fleet_pool_worker_id(&a.w[0]), worker);
  ASSERT_EQ(0, a.errors);

  /* A start that reported ended the row: two more requeues are allowed
   * after it. Here every start requeues: the third requeue drops it. */
  a.requeue_left = 100;
  memset(&d, 0, sizeof(d));
  ASSERT_OK(fleet_pool_dispatch(&c.node, "k2", (fleet_bytes_t){"p2", 2},
                                on_status, &d));
  ASSERT(lock_env_wait(&e, &d.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_ERR(FLEET_EATTEMPTS, d.status);
  ASSERT_EQ(3, log_of('s', "k2", s, 8));
  ASSERT(lock_env_wait(&e, &a.errors, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(FLEET_EATTEMPTS, a.last_error);
  ASSERT_NOT_NULL(strstr(a.detail, "\"k2\""));
  ASSERT_EQ(-1, job_state(&e, "k2", NULL));
  a.requeue_left = 0;
  ASSERT_OK(dispatch(&e, &c, "k2", "p2")); /* the key is free again */
  ASSERT_EQ(2, a.running);

  /* A requested stop handed back: the job starts again. */
  n = test_nlog;
  a.requeue_in_stop = 1;
  ASSERT_OK(query(&e, &c, 'x', "k1").status);
  ASSERT(lock_env_wait(&e, &test_nlog, n + 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(FLEET_POOL_STOP_REQUESTED, test_log[n].reason);
  ASSERT(lock_env_wait(&e, &test_nlog, n + 2, FLEET_TEST_WAIT_MS));
  ASSERT_EQ('s', test_log[n + 1].kind);
  ASSERT_STR_EQ("k1", test_log[n + 1].key);
  ASSERT_UGE(test_log[n + 1].at - test_log[n].at, backoff - 2);
  ASSERT_UGT(test_log[n + 1].token, test_log[n].token);
  ASSERT_EQ(2, a.running);
  /* The next requested stop is not handed back: the job leaves. */
  ASSERT_OK(query(&e, &c, 'x', "k1").status);
  ASSERT(lock_env_wait(&e, &test_nlog, n + 3, FLEET_TEST_WAIT_MS));
  lock_env_sleep(&e, 50);
  ASSERT_EQ(-1, job_state(&e, "k1", NULL));

  /* A requeued job asked to stop leaves the pool at once (it has no
   * owner) and is not placed when its backoff ends. */
  n = test_nlog;
  a.requeue_left = 1;
  memset(&d, 0, sizeof(d));
  ASSERT_OK(fleet_pool_dispatch(&c.node, "k3", (fleet_bytes_t){"p3", 2},
                                on_status, &d));
  ASSERT(lock_env_wait(&e, &test_nlog, n + 2, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(FLEET_POOL_JOB_REQUEUED,
            wait_state(&e, "k3", NULL, FLEET_POOL_JOB_REQUEUED));
  ASSERT_OK(query(&e, &c, 'x', "k3").status);
  ASSERT_EQ(-1, job_state(&e, "k3", NULL));
  ASSERT(lock_env_wait(&e, &d.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_ERR(FLEET_ECANCELED, d.status); /* stopped before any start */
  ASSERT_EQ(1, log_of('s', "k3", s, 8));

  /* A stop at the node's close cannot be handed back (rec_stop checks
   * FLEET_EINVAL). */
  a.requeue_in_stop = 1;
  rec_close(&e, &a);
  rec_close(&e, &c);
  lock_env_close(&e);
}

static void on_query_jobs(fleet_client_t *cl, int status,
                          const fleet_pool_job_status_t *j, size_t n,
                          void *arg) {
  answer_t *a = arg;
  size_t i;

  (void)cl;
  a->done++;
  a->status = status;
  a->n = n;
  a->text[0] = '\0';
  for (i = 0; i < n; i++)
    snprintf(a->text + strlen(a->text), sizeof(a->text) - strlen(a->text),
             "%s%s@%s", i ? " " : "", (const char *)j[i].key.base,
             j[i].worker_id);
}

/* One worker's jobs (pulse's Worker.Jobs()), from a node and from a
 * client: exactly the jobs the pool's routing gave it, each with it as
 * owner; none for a worker that owns none or is not in the pool. */
CONFORMANCE_IMPL(pool_worker_jobs) {
  char big[FLEET__NAME_MAX + 2], key[16];
  node_rec_t a, nb, c;
  lock_env_t e;
  answer_t all, one;
  size_t total = 0;
  int i, k;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  memset(big, 'w', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  rec_init(&a, &e.c1, "p", "a", 2, NULL);
  rec_init(&nb, &e.c2, "p", "b", 1, NULL);
  rec_init(&c, &e.c2, "p", "c", 0, NULL);
  wait_workers(&e, &c, 3);
  ASSERT_ERR(FLEET_EINVAL,
             fleet_pool_worker_jobs(&c.node, NULL, on_jobs, &one));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_worker_jobs(&c.node, "", on_jobs, &one));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_worker_jobs(&c.node, "a/1", NULL, NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_pool_worker_jobs(&c.node, big, on_jobs, &one));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_query_worker_jobs(&e.c1, "p", NULL,
                                                        on_query_jobs, &one));
  ASSERT_ERR(FLEET_E2BIG, fleet_pool_query_worker_jobs(&e.c1, "p", big,
                                                       on_query_jobs, &one));
  for (i = 0; i < 12; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    ASSERT_OK(dispatch(&e, &c, key, "x"));
  }
  all = query(&e, &c, 'j', NULL);
  ASSERT_UEQ(12, all.n);
  for (k = 0; k < 3; k++) {
    fleet_pool_worker_t *w = k < 2 ? &a.w[k] : &nb.w[0];
    const char *id = fleet_pool_worker_id(w);
    char *at, *p;
    size_t mine = 0;

    memset(&one, 0, sizeof(one));
    ASSERT_OK(fleet_pool_worker_jobs(&c.node, id, on_jobs, &one));
    ASSERT(lock_env_wait(&e, &one.done, 1, FLEET_TEST_WAIT_MS));
    ASSERT_OK(one.status);
    /* Every job listed is owned by the worker, per the whole pool's list,
     * and the count matches the worker's own start count. */
    for (p = one.text; (at = strchr(p, '@')) != NULL; p = at + 1) {
      char *end = strchr(at, '#');
      ASSERT_NOT_NULL(end);
      ASSERT_EQ(0, strncmp(at + 1, id, (size_t)(end - at - 1)));
      ASSERT_UEQ(strlen(id), (size_t)(end - at - 1));
      mine++;
    }
    ASSERT_UEQ(one.n, mine);
    for (i = 0; i < test_nlog; i++)
      if (test_log[i].kind == 's' &&
          w == &test_log[i].node->w[0] + test_log[i].worker)
        mine--;
    ASSERT_UEQ(0, mine);
    total += one.n;

    memset(&one, 0, sizeof(one));
    ASSERT_OK(
        fleet_pool_query_worker_jobs(&e.c1, "p", id, on_query_jobs, &one));
    ASSERT(lock_env_wait(&e, &one.done, 1, FLEET_TEST_WAIT_MS));
    ASSERT_OK(one.status);
    for (p = one.text; (at = strchr(p, '@')) != NULL; p = at + 1)
      ASSERT_EQ(0, strncmp(at + 1, id, strlen(id)));
  }
  ASSERT_UEQ(12, total);
  memset(&one, 0, sizeof(one));
  ASSERT_OK(fleet_pool_worker_jobs(&c.node, "nobody/1", on_jobs, &one));
  ASSERT(lock_env_wait(&e, &one.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(one.status);
  ASSERT_UEQ(0, one.n);
  rec_close(&e, &a);
  rec_close(&e, &nb);
  rec_close(&e, &c);
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Events in the wake-up (src/pool/pool_events.c): a start and a dispatch
 * result also come in the message that wakes their node, which handles
 * them from it, once: the read that then takes them from the list skips
 * them. */

/* A chain of dispatches, each made from the callback of the one before:
 * each call takes the result before it from the node's list instead of a
 * read (pool_calls.c). */
typedef struct {
  node_rec_t *n;
  int left, done, failed;
  char key[16];
} chain_t;

static void chain_next(fleet_handle_t *h, int status, void *arg) {
  chain_t *c = arg;

  (void)h;
  if (status != 0)
    c->failed++;
  c->done++;
  if (c->left > 0) {
    snprintf(c->key, sizeof(c->key), "ch%d", --c->left);
    ASSERT_OK(fleet_pool_dispatch(&c->n->node, c->key, (fleet_bytes_t){"c", 1},
                                  chain_next, c));
  }
}

CONFORMANCE_IMPL(pool_wake_events) {
  static char big[1500];
  fleet_pool_node_options_t oa = test_opts(), oc = test_opts();
  node_rec_t a, c;
  lock_env_t e;
  answer_t q;
  int i;

  test_nlog = 0;
  lock_env_init(&e, b->url);
  /* Keep-alives (each followed by a read of the list) a minute apart: an
   * event left in a list would wait past its dispatch's deadline (twice
   * the ack grace) for the next read. */
  oa.worker_ttl_ms = oc.worker_ttl_ms = (uint32_t)fleet_test_ms(60000);
  rec_init(&a, &e.c1, "p", "a", 1, &oa);
  rec_init(&c, &e.c2, "p", "c", 0, &oc);
  wait_workers(&e, &c, 1);

  /* A start its handler fails at once: the dispatch hears the error, and
   * the job never starts again when the owner's read takes its event from
   * the list. A query through the owner's client comes back after that
   * read (one connection, in order). */
  a.start_status = FLEET_EBACKEND;
  for (i = 0; i < 5; i++) {
    char key[16];
    snprintf(key, sizeof(key), "f%d", i);
    ASSERT_ERR(FLEET_EBACKEND, dispatch(&e, &c, key, "x"));
  }
  a.start_status = 0;
  ASSERT_OK(dispatch(&e, &c, "ok", "x"));
  q = query(&e, &a, 'k', NULL);
  ASSERT_OK(q.status);
  ASSERT_EQ(1, q.n);
  ASSERT_EQ(5, log_count('s', NULL) - 1);
  for (i = 0; i < 5; i++) {
    char key[16];
    snprintf(key, sizeof(key), "f%d", i);
    ASSERT_EQ(1, log_count('s', key));
  }

  /* A start kept pending by its handler starts once too. */
  a.async = 1;
  {
    answer_t d = {0};
    ASSERT_OK(fleet_pool_dispatch(&c.node, "later", (fleet_bytes_t){"y", 1},
                                  on_status, &d));
    ASSERT(lock_env_wait(&e, &a.npending, 1, FLEET_TEST_WAIT_MS));
    q = query(&e, &a, 'k', NULL);
    ASSERT_EQ(1, log_count('s', "later"));
    ASSERT_EQ(1, a.npending);
    a.async = 0;
    a.running++;
    ASSERT_OK(fleet_pool_job_started(a.pending[0], 0));
    a.npending = 0;
    ASSERT(lock_env_wait(&e, &d.done, 1, FLEET_TEST_WAIT_MS));
    ASSERT_OK(d.status);
  }

  /* Payloads come as they went in: with NUL bytes (the message's last
   * field), and over the 1024 bytes a message carries (read from the
   * list). */
  ASSERT_OK(dispatch_bytes(&e, &c, "nul", "a\0b\0\0c", 6));
  ASSERT_EQ(6, a.payload_len);
  ASSERT_MEM_EQ("a\0b\0\0c", a.payload, 6);
  for (i = 0; i < (int)sizeof(big); i++)
    big[i] = (char)('a' + i % 26);
  ASSERT_OK(dispatch_bytes(&e, &c, "big", big, sizeof(big)));
  ASSERT_EQ(sizeof(big), a.payload_len);
  ASSERT_MEM_EQ(big, a.payload, sizeof(big));
  ASSERT_OK(dispatch_bytes(&e, &c, "empty", "", 0));
  ASSERT_EQ(0, a.payload_len);
  q = query(&e, &a, 'k', NULL);
  ASSERT_EQ(5, q.n);
  ASSERT_EQ(1, log_count('s', "nul"));
  ASSERT_EQ(1, log_count('s', "big"));
  ASSERT_EQ(1, log_count('s', "empty"));
  ASSERT_EQ(5, a.running);

  /* Twenty dispatches in a chain, then one more: none waits past its
   * answer (a result left in the list would keep the next from waking
   * the node). */
  {
    chain_t ch = {&c, 19, 0, 0, "ch19"};
    ASSERT_OK(fleet_pool_dispatch(&c.node, ch.key, (fleet_bytes_t){"c", 1},
                                  chain_next, &ch));
    ASSERT(lock_env_wait(&e, &ch.done, 20, FLEET_TEST_WAIT_MS));
    ASSERT_EQ(0, ch.failed);
    ASSERT_OK(dispatch(&e, &c, "after", "x"));
    ASSERT_EQ(26, a.running);
    for (i = 0; i < 20; i++) {
      char key[16];
      snprintf(key, sizeof(key), "ch%d", i);
      ASSERT_EQ(1, log_count('s', key));
    }
  }

  rec_close(&e, &c);
  rec_close(&e, &a);
  lock_env_close(&e);
}
