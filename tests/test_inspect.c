/* test_inspect.c -- reading objects from a client without joining them, on
 * both adapters: fleet_pool_query_workers() and fleet_pool_query_jobs()
 * (workers in creation order, each job's owner, token and state) and
 * fleet_client_scan_names() (the names of one kind of object, by glob, up
 * to a maximum). Bad input is refused with nothing sent, and a call in
 * flight when its client closes is answered FLEET_ECANCELED. */
#include "test_lock_env.h"

#define INSPECT_NAMES_MAX 8

/* What one query saw. */
typedef struct {
  int done;
  int status;
  uint64_t rev;
  size_t n;
  char ids[INSPECT_NAMES_MAX][64];
  char nodes[INSPECT_NAMES_MAX][64];
  uint64_t created[INSPECT_NAMES_MAX];
  uint64_t tokens[INSPECT_NAMES_MAX];
  int states[INSPECT_NAMES_MAX];
} inspect_answer_t;

static void never_workers(fleet_client_t *c, int status, uint64_t rev,
                          const fleet_pool_worker_info_t *w, size_t n,
                          void *arg) {
  fleet_test__fail(__FILE__, __LINE__, "a refused call called back");
}

static void never_jobs(fleet_client_t *c, int status,
                       const fleet_pool_job_status_t *j, size_t n, void *arg) {
  fleet_test__fail(__FILE__, __LINE__, "a refused call called back");
}

static void never_names(fleet_client_t *c, int status, const char *const *names,
                        size_t n, void *arg) {
  fleet_test__fail(__FILE__, __LINE__, "a refused call called back");
}

static void on_workers(fleet_client_t *c, int status, uint64_t rev,
                       const fleet_pool_worker_info_t *w, size_t n, void *arg) {
  inspect_answer_t *a = arg;
  size_t i;

  a->done++;
  a->status = status;
  a->rev = rev;
  a->n = n;
  if (status != 0)
    ASSERT_NULL(w);
  ASSERT_LE(n, INSPECT_NAMES_MAX);
  for (i = 0; i < n; i++) {
    ASSERT_EQ(0, w[i].local);
    snprintf(a->ids[i], sizeof(a->ids[i]), "%s", w[i].id);
    snprintf(a->nodes[i], sizeof(a->nodes[i]), "%s", w[i].node_id);
    a->created[i] = w[i].created;
  }
}

static void on_jobs(fleet_client_t *c, int status,
                    const fleet_pool_job_status_t *j, size_t n, void *arg) {
  inspect_answer_t *a = arg;
  size_t i;

  a->done++;
  a->status = status;
  a->n = n;
  if (status != 0)
    ASSERT_NULL(j);
  ASSERT_LE(n, INSPECT_NAMES_MAX);
  /* Sorted by key here, so that the checks need no search. */
  for (i = 0; i < n; i++) {
    size_t k = 0, m;

    for (m = 0; m < n; m++)
      if (j[m].key.len < j[i].key.len ||
          (j[m].key.len == j[i].key.len &&
           memcmp(j[m].key.base, j[i].key.base, j[i].key.len) < 0))
        k++;
    snprintf(a->ids[k], sizeof(a->ids[k]), "%.*s", (int)j[i].key.len,
             (const char *)j[i].key.base);
    snprintf(a->nodes[k], sizeof(a->nodes[k]), "%s", j[i].worker_id);
    a->tokens[k] = j[i].token;
    a->states[k] = j[i].state;
  }
}

static void on_names(fleet_client_t *c, int status, const char *const *names,
                     size_t n, void *arg) {
  inspect_answer_t *a = arg;
  size_t i;

  a->done++;
  a->status = status;
  a->n = n;
  if (status != 0)
    ASSERT_NULL(names);
  ASSERT_LE(n, INSPECT_NAMES_MAX);
  for (i = 0; i < n; i++)
    snprintf(a->ids[i], sizeof(a->ids[i]), "%s", names[i]);
}

static inspect_answer_t query_workers(lock_env_t *e, fleet_client_t *c,
                                      const char *pool) {
  inspect_answer_t a = {0};

  ASSERT_OK(fleet_pool_query_workers(c, pool, on_workers, &a));
  ASSERT_EQ(0, a.done); /* never inside the call */
  ASSERT(lock_env_wait(e, &a.done, 1, FLEET_TEST_WAIT_MS));
  return a;
}

static inspect_answer_t query_jobs(lock_env_t *e, fleet_client_t *c,
                                   const char *pool) {
  inspect_answer_t a = {0};

  ASSERT_OK(fleet_pool_query_jobs(c, pool, on_jobs, &a));
  ASSERT_EQ(0, a.done);
  ASSERT(lock_env_wait(e, &a.done, 1, FLEET_TEST_WAIT_MS));
  return a;
}

static inspect_answer_t scan(lock_env_t *e, fleet_object_kind_t kind,
                             const char *glob, size_t max) {
  inspect_answer_t a = {0};

  ASSERT_OK(fleet_client_scan_names(&e->c2, kind, glob, max, on_names, &a));
  ASSERT_EQ(0, a.done);
  ASSERT(lock_env_wait(e, &a.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(a.status);
  return a;
}

static void on_ping(fleet_client_t *c, int status, void *arg) {
  ASSERT_OK(status);
  (*(int *)arg)++;
}

/* Waits for a round trip on `c`: on a cluster, a walk needs the slot map,
 * which the client reads once connected. */
static void wait_ready(lock_env_t *e, fleet_client_t *c) {
  int done = 0;

  ASSERT_OK(fleet_client_ping(c, on_ping, &done));
  ASSERT(lock_env_wait(e, &done, 1, FLEET_TEST_WAIT_MS));
}

/* A third client on the backend of `e`, closed by the test itself. */
static void third_client(lock_env_t *e, const char *url, fleet_client_t *c) {
  fleet_client_options_t o;

  fleet_client_options_init(&o);
  o.prefix = "locktest";
  if (strncmp(url, "memory:", 7) == 0)
    o.memory_peer = &e->c1;
  ASSERT_OK(fleet_client_init(&e->loop, c, url, &o));
}

static void on_third_closed(fleet_client_t *c) {
  *(int *)c->data = 1;
}

/* ------------------------------------------------------------------------ */
/* Pools                                                                    */

/* The pool's workers: every start waits in `pending` until the test
 * reports it. */
typedef struct {
  fleet_pool_node_t node;
  fleet_pool_worker_t w[2];
  fleet_pool_job_t *pending[4];
  int npending;
  int closed;
} inspect_node_t;

static void node_start(fleet_pool_worker_t *w, fleet_pool_job_t *job) {
  inspect_node_t *n = w->data;

  ASSERT_LT(n->npending, 4);
  n->pending[n->npending++] = job;
}

static void node_stop(fleet_pool_worker_t *w, fleet_pool_job_t *job,
                      fleet_pool_stop_reason_t reason) {
  inspect_node_t *n = w->data;
  int i;

  for (i = 0; i < n->npending; i++)
    if (n->pending[i] == job)
      n->pending[i] = n->pending[--n->npending];
}

static const fleet_pool_handler_t node_handler = {.start_cb = node_start,
                                                  .stop_cb = node_stop};

static void node_on_close(fleet_handle_t *h) {
  inspect_node_t *n = h->data;
  n->closed++;
}

static void on_dispatched(fleet_handle_t *h, int status, void *arg) {
  int *done = arg;

  ASSERT_OK(status);
  (*done)++;
}

CONFORMANCE_IMPL(pool_query) {
  char big[FLEET_POOL_KEY_MAX + 2];
  fleet_pool_node_options_t o;
  inspect_answer_t a, c1, c2;
  inspect_node_t n;
  fleet_client_t third;
  lock_env_t e;
  int dispatched = 0, third_closed = 0, i;

  lock_env_init(&e, b->url);
  memset(big, 'p', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';

  /* Bad input is refused and nothing is sent: a call that had gone out
   * would be cancelled at the close, and the callbacks abort. */
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_query_workers(NULL, "p", on_workers, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_query_workers(&e.c1, "p", NULL, 0));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_pool_query_workers(&e.c1, NULL, never_workers, 0));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_pool_query_workers(&e.c1, "", never_workers, 0));
  ASSERT_ERR(FLEET_E2BIG,
             fleet_pool_query_workers(&e.c1, big, never_workers, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_query_jobs(NULL, "p", on_jobs, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_query_jobs(&e.c1, "p", NULL, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_query_jobs(&e.c1, NULL, never_jobs, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_query_jobs(&e.c1, "", never_jobs, 0));
  ASSERT_ERR(FLEET_E2BIG, fleet_pool_query_jobs(&e.c1, big, never_jobs, 0));
  ASSERT_STR_EQ("orphaned", fleet_pool_job_state_name(FLEET_POOL_JOB_ORPHANED));
  ASSERT_STR_EQ("starting", fleet_pool_job_state_name(FLEET_POOL_JOB_STARTING));
  ASSERT_STR_EQ("unknown", fleet_pool_job_state_name(99));
  ASSERT_STR_EQ("unknown", fleet_pool_job_state_name(-1));

  /* A pool nobody used: no worker, no job, revision 0. */
  a = query_workers(&e, &e.c2, "p");
  ASSERT_OK(a.status);
  ASSERT_EQ(0, a.n);
  ASSERT_UEQ(0, a.rev);
  a = query_jobs(&e, &e.c2, "p");
  ASSERT_OK(a.status);
  ASSERT_EQ(0, a.n);

  /* A node with two workers; the other client reads it. */
  memset(&n, 0, sizeof(n));
  fleet_pool_node_options_init(&o);
  o.worker_ttl_ms = (uint32_t)fleet_test_ms(3000);
  n.node.data = &n;
  ASSERT_OK(fleet_pool_node_init(&e.c1, &n.node, "p", "node-1", &o));
  for (i = 0; i < 2; i++) {
    n.w[i].data = &n;
    ASSERT_OK(fleet_pool_worker_add(&n.node, &n.w[i], &node_handler));
  }
  for (i = 0; i < 200; i++) {
    a = query_workers(&e, &e.c2, "p");
    ASSERT_OK(a.status);
    if (a.n == 2)
      break;
    lock_env_sleep(&e, 10);
  }
  ASSERT_EQ(2, a.n);
  ASSERT_UGT(a.rev, 0);
  ASSERT_STR_EQ(fleet_pool_worker_id(&n.w[0]), a.ids[0]);
  ASSERT_STR_EQ(fleet_pool_worker_id(&n.w[1]), a.ids[1]);
  ASSERT_STR_EQ("node-1", a.nodes[0]);
  ASSERT_STR_EQ("node-1", a.nodes[1]);
  ASSERT_UGT(a.created[1], a.created[0]);

  /* Two jobs, starting until their starts report, then running. */
  ASSERT_OK(fleet_pool_dispatch(&n.node, "job-a", (fleet_bytes_t){"x", 1},
                                on_dispatched, &dispatched));
  ASSERT_OK(fleet_pool_dispatch(&n.node, "job-b", (fleet_bytes_t){"y", 1},
                                on_dispatched, &dispatched));
  ASSERT(lock_env_wait(&e, &n.npending, 2, FLEET_TEST_WAIT_MS));
  c1 = query_jobs(&e, &e.c2, "p");
  ASSERT_OK(c1.status);
  ASSERT_EQ(2, c1.n);
  ASSERT_STR_EQ("job-a", c1.ids[0]);
  ASSERT_STR_EQ("job-b", c1.ids[1]);
  for (i = 0; i < 2; i++) {
    ASSERT_EQ(FLEET_POOL_JOB_STARTING, c1.states[i]);
    ASSERT(strcmp(c1.nodes[i], a.ids[0]) == 0 ||
           strcmp(c1.nodes[i], a.ids[1]) == 0);
    ASSERT_UGT(c1.tokens[i], 0);
  }
  ASSERT_UNE(c1.tokens[0], c1.tokens[1]);
  while (n.npending > 0) {
    fleet_pool_job_t *job = n.pending[--n.npending];
    fleet_bytes_t key = fleet_pool_job_key(job);
    int k = key.len == 5 && memcmp(key.base, "job-b", 5) == 0;

    ASSERT_UEQ(c1.tokens[k], fleet_pool_job_token(job));
    ASSERT_OK(fleet_pool_job_started(job, 0));
  }
  ASSERT(lock_env_wait(&e, &dispatched, 2, FLEET_TEST_WAIT_MS));
  c2 = query_jobs(&e, &e.c2, "p");
  ASSERT_OK(c2.status);
  ASSERT_EQ(2, c2.n);
  for (i = 0; i < 2; i++) {
    ASSERT_EQ(FLEET_POOL_JOB_RUNNING, c2.states[i]);
    ASSERT_STR_EQ(c1.nodes[i], c2.nodes[i]);
    ASSERT_UEQ(c1.tokens[i], c2.tokens[i]);
  }

  /* Queries in flight when their client closes are cancelled. */
  third_client(&e, b->url, &third);
  third.data = &third_closed;
  memset(&c1, 0, sizeof(c1));
  memset(&c2, 0, sizeof(c2));
  ASSERT_OK(fleet_pool_query_workers(&third, "p", on_workers, &c1));
  ASSERT_OK(fleet_pool_query_jobs(&third, "p", on_jobs, &c2));
  ASSERT_OK(fleet_client_close(&third, on_third_closed));
  ASSERT_ERR(FLEET_ECLOSING,
             fleet_pool_query_workers(&third, "p", never_workers, 0));
  ASSERT_ERR(FLEET_ECLOSING, fleet_pool_query_jobs(&third, "p", never_jobs, 0));
  ASSERT(lock_env_wait(&e, &third_closed, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(1, c1.done);
  ASSERT_ERR(FLEET_ECANCELED, c1.status);
  ASSERT_EQ(1, c2.done);
  ASSERT_ERR(FLEET_ECANCELED, c2.status);

  ASSERT_OK(fleet_pool_node_close(&n.node, node_on_close));
  ASSERT(lock_env_wait(&e, &n.closed, 1, FLEET_TEST_WAIT_MS));
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Names                                                                    */

static void on_enqueued(fleet_queue_t *q, int status,
                        const fleet_enqueue_result_t *results, size_t n,
                        void *arg) {
  ASSERT_OK(status);
  (*(int *)arg)++;
}

static void on_handle_closed(fleet_handle_t *h) {
  (*(int *)h->data)++;
}

CONFORMANCE_IMPL(client_scan_names) {
  char big[FLEET_SCAN_GLOB_MAX + 2];
  fleet_pool_node_options_t o;
  fleet_job_spec_t spec;
  fleet_pool_node_t node;
  fleet_pool_worker_t w;
  fleet_queue_t q;
  fleet_client_t third;
  lock_rec_t l1, l2, l3;
  inspect_answer_t a;
  lock_env_t e;
  int enqueued = 0, closed = 0, third_closed = 0, i;

  lock_env_init(&e, b->url);
  memset(big, '*', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';

  /* Bad input is refused and nothing is sent. */
  ASSERT_ERR(FLEET_EINVAL, fleet_client_scan_names(NULL, FLEET_OBJECT_LOCK,
                                                   NULL, 10, never_names, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_client_scan_names(&e.c1, FLEET_OBJECT_LOCK,
                                                   NULL, 10, NULL, 0));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_client_scan_names(&e.c1, (fleet_object_kind_t)99, NULL, 10,
                                     never_names, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_client_scan_names(&e.c1, FLEET_OBJECT_LOCK,
                                                   NULL, 0, never_names, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_client_scan_names(&e.c1, FLEET_OBJECT_LOCK, "",
                                                   10, never_names, 0));
  ASSERT_ERR(FLEET_E2BIG, fleet_client_scan_names(&e.c1, FLEET_OBJECT_LOCK, big,
                                                  10, never_names, 0));
  ASSERT_STR_EQ("warmpool", fleet_object_kind_name(FLEET_OBJECT_WARMPOOL));
  ASSERT_STR_EQ("unknown", fleet_object_kind_name(99));

  /* Nothing yet. */
  wait_ready(&e, &e.c2);
  a = scan(&e, FLEET_OBJECT_LOCK, NULL, 10);
  ASSERT_EQ(0, a.n);

  /* Three locks (one with a glob character in its name), a queue with a
   * job, a pool with a worker. */
  ASSERT_OK(lock_rec_init(&l1, &e.c1, "beta", "o", 5000, NULL));
  ASSERT_OK(lock_rec_init(&l2, &e.c1, "alpha", "o", 5000, NULL));
  ASSERT_OK(lock_rec_init(&l3, &e.c1, "a*z", "o", 5000, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &l1, 0, 5000));
  ASSERT_OK(lock_rec_acquire(&e, &l2, 0, 5000));
  ASSERT_OK(lock_rec_acquire(&e, &l3, 0, 5000));
  q.data = &closed;
  ASSERT_OK(fleet_queue_init(&e.c1, &q, "jobs", NULL));
  fleet_job_spec_init(&spec, "t", "p", 1);
  ASSERT_OK(fleet_queue_enqueue(&q, &spec, 1, on_enqueued, &enqueued));
  ASSERT(lock_env_wait(&e, &enqueued, 1, FLEET_TEST_WAIT_MS));
  fleet_pool_node_options_init(&o);
  o.worker_ttl_ms = (uint32_t)fleet_test_ms(3000);
  node.data = &closed;
  ASSERT_OK(fleet_pool_node_init(&e.c1, &node, "workers", "n", &o));
  w.data = NULL; /* nothing is dispatched: no start */
  ASSERT_OK(fleet_pool_worker_add(&node, &w, &node_handler));
  for (i = 0; i < 200; i++) {
    a = scan(&e, FLEET_OBJECT_POOL, NULL, 10);
    if (a.n > 0)
      break;
    lock_env_sleep(&e, 10);
  }

  /* Each kind finds its own objects, sorted. */
  ASSERT_EQ(1, a.n);
  ASSERT_STR_EQ("workers", a.ids[0]);
  a = scan(&e, FLEET_OBJECT_LOCK, NULL, 10);
  ASSERT_EQ(3, a.n);
  ASSERT_STR_EQ("a*z", a.ids[0]);
  ASSERT_STR_EQ("alpha", a.ids[1]);
  ASSERT_STR_EQ("beta", a.ids[2]);
  a = scan(&e, FLEET_OBJECT_QUEUE, "*", 10);
  ASSERT_EQ(1, a.n);
  ASSERT_STR_EQ("jobs", a.ids[0]);
  a = scan(&e, FLEET_OBJECT_CRON, NULL, 10);
  ASSERT_EQ(0, a.n);
  a = scan(&e, FLEET_OBJECT_WARMPOOL, NULL, 10);
  ASSERT_EQ(0, a.n);

  /* A glob, an escaped glob character, and the maximum. */
  a = scan(&e, FLEET_OBJECT_LOCK, "a*", 10);
  ASSERT_EQ(2, a.n);
  ASSERT_STR_EQ("a*z", a.ids[0]);
  ASSERT_STR_EQ("alpha", a.ids[1]);
  a = scan(&e, FLEET_OBJECT_LOCK, "a\\*z", 10);
  ASSERT_EQ(1, a.n);
  ASSERT_STR_EQ("a*z", a.ids[0]);
  a = scan(&e, FLEET_OBJECT_LOCK, NULL, 2);
  ASSERT_EQ(2, a.n);

  /* A walk in flight when its client closes is cancelled. */
  third_client(&e, b->url, &third);
  third.data = &third_closed;
  wait_ready(&e, &third);
  memset(&a, 0, sizeof(a));
  ASSERT_OK(fleet_client_scan_names(&third, FLEET_OBJECT_LOCK, NULL, 10,
                                    on_names, &a));
  ASSERT_OK(fleet_client_close(&third, on_third_closed));
  ASSERT_ERR(FLEET_ECLOSING, fleet_client_scan_names(&third, FLEET_OBJECT_LOCK,
                                                     NULL, 10, never_names, 0));
  ASSERT(lock_env_wait(&e, &third_closed, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(1, a.done);
  ASSERT_ERR(FLEET_ECANCELED, a.status);

  lock_rec_close(&e, &l1);
  lock_rec_close(&e, &l2);
  lock_rec_close(&e, &l3);
  ASSERT_OK(fleet_queue_close(&q, on_handle_closed));
  ASSERT_OK(fleet_pool_node_close(&node, on_handle_closed));
  ASSERT(lock_env_wait(&e, &closed, 2, FLEET_TEST_WAIT_MS));
  lock_env_close(&e);
}
