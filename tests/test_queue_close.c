/* test_queue_close.c -- queues and workers as handles of their client: the
 * client refuses to close while one is open, and every order of closing
 * them (from a close callback, from a handler, from a walk of the client's
 * handles) ends with everything freed and the loop empty; the worker's
 * error callback hears the calls the backend refuses. */
#include "test_queue_util.h"

/* A client, a queue and a worker on it, and what their callbacks saw. */
typedef struct {
  client_ctx_t c;
  fleet_queue_t q;
  fleet_worker_t w;
  int queue_closed, worker_closed;
  int handled, enqueued, walked, errors, last_error, busy_seen;
  int client_closing;
  int close_in_handler; /* close the worker from the handler */
} cl_t;

static void cl_client_closed(fleet_client_t *client) {
  cl_t *t = client->data;
  t->c.closed++;
}

/* Closes the client from a handle's close callback: refused while the
 * `other` handle is open, done (once) when it is closing or closed. */
static void cl_client_close(cl_t *t, void *other) {
  int err;

  if (t->client_closing)
    return;
  err = fleet_client_close(&t->c.client, cl_client_closed);
  if (fleet_is_closing(other)) {
    ASSERT_OK(err);
    t->client_closing = 1;
  } else {
    ASSERT_ERR(FLEET_EBUSY, err);
    t->busy_seen++;
  }
}

static void cl_on_queue_closed(fleet_handle_t *h) {
  cl_t *t = h->data;
  ASSERT_PTR_EQ(&t->q, h);
  t->queue_closed++;
  cl_client_close(t, &t->w);
}

static void cl_on_worker_closed(fleet_handle_t *h) {
  cl_t *t = h->data;
  ASSERT_PTR_EQ(&t->w, h);
  t->worker_closed++;
  cl_client_close(t, &t->q);
}

static void cl_handler(fleet_worker_t *w, fleet_job_t *job) {
  cl_t *t = w->data;

  t->handled++;
  if (t->close_in_handler) {
    ASSERT_OK(fleet_worker_close(w, cl_on_worker_closed));
    ASSERT_ERR(FLEET_EBUSY, fleet_client_close(&t->c.client, NULL));
  }
  ASSERT_OK(fleet_job_complete(job));
}

static void cl_on_error(fleet_handle_t *h, int status, const char *detail) {
  cl_t *t = h->data;

  ASSERT_EQ(FLEET_HANDLE_WORKER, h->type);
  ASSERT_NOT_NULL(detail);
  ASSERT_NE(0, status);
  t->errors++;
  t->last_error = status;
}

static void cl_on_enqueued(fleet_queue_t *q, int status,
                           const fleet_enqueue_result_t *r, size_t n,
                           void *ud) {
  cl_t *t = q->data;
  /* A call pending when its queue closes hears FLEET_ECANCELED. */
  if (status != FLEET_ECANCELED)
    ASSERT_OK(status);
  t->enqueued++;
}

/* Opens the client on `url` with `prefix`, a running worker of the queue
 * "cq" and, if `with_queue`, a queue handle of it. */
static void cl_open(cl_t *t, const char *url, const char *prefix,
                    int with_queue) {
  fleet_client_options_t co;
  fleet_worker_options_t o;

  memset(t, 0, sizeof(*t));
  fleet_client_options_init(&co);
  co.prefix = prefix;
  co.reconnect_initial_ms = 20;
  co.reconnect_max_ms = 200;
  ctx_init(&t->c, url, &co);
  t->c.client.data = t;
  t->q.data = t->w.data = t;
  if (with_queue)
    ASSERT_OK(fleet_queue_init(&t->c.client, &t->q, "cq", NULL));
  else
    t->queue_closed = 1;
  /* Zeroed options: every default. */
  memset(&o, 0, sizeof(o));
  o.error_cb = cl_on_error;
  ASSERT_OK(fleet_worker_init(&t->c.client, &t->w, "cq", &o));
  ASSERT_OK(fleet_worker_start(&t->w, cl_handler));
}

/* Enqueues one job; with `wait`, runs the loop until the worker had it. */
static void cl_job(cl_t *t, int wait) {
  int want = t->handled + 1;
  fleet_job_spec_t s;

  fleet_job_spec_init(&s, "t", "x", 1);
  ASSERT_OK(fleet_queue_enqueue(&t->q, &s, 1, cl_on_enqueued, NULL));
  while (wait && t->handled < want)
    uv_run(&t->c.loop, UV_RUN_ONCE);
}

/* Runs the loop until the client has closed; checks every close callback
 * ran once and the loop closes with nothing left on it. */
static void cl_finish(cl_t *t) {
  while (t->c.closed == 0)
    uv_run(&t->c.loop, UV_RUN_ONCE);
  ASSERT_EQ(1, t->queue_closed);
  ASSERT_EQ(1, t->worker_closed);
  ASSERT_EQ(1, t->c.closed);
  fleet_test_loop_close(&t->c.loop);
}

/* The client refuses to close while a queue or a worker is open, and
 * changes nothing: what is left goes on working. */
CONFORMANCE_IMPL(queue_client_busy) {
  cl_t t;

  cl_open(&t, b->url, "cl1", 1);
  ASSERT_ERR(FLEET_EBUSY, fleet_client_close(&t.c.client, cl_client_closed));
  cl_job(&t, 1);
  ASSERT_OK(fleet_worker_close(&t.w, cl_on_worker_closed));
  ASSERT_ERR(FLEET_EBUSY, fleet_client_close(&t.c.client, cl_client_closed));
  while (t.worker_closed == 0)
    uv_run(&t.c.loop, UV_RUN_ONCE);
  ASSERT_EQ(1, t.busy_seen); /* from the worker's close callback */
  cl_job(&t, 0);
  while (t.enqueued < 2)
    uv_run(&t.c.loop, UV_RUN_ONCE);
  ASSERT_OK(fleet_queue_close(&t.q, cl_on_queue_closed));
  cl_finish(&t);
}

/* Closes every handle the walk shows; the internal queue of the worker is
 * not shown. */
static void cl_walk_close(fleet_handle_t *h, void *arg) {
  cl_t *t = arg;

  t->walked++;
  ASSERT_OK(fleet_close(h, h->type == FLEET_HANDLE_QUEUE
                               ? cl_on_queue_closed
                               : cl_on_worker_closed));
}

static void cl_walk_count_closing(fleet_handle_t *h, void *arg) {
  cl_t *t = arg;

  ASSERT(fleet_is_closing(h));
  t->walked++;
}

/* Every order of closing, with calls in flight. */
CONFORMANCE_IMPL(queue_close_orders) {
  cl_t t;

  /* A worker alone, then the client from the worker's close callback. */
  cl_open(&t, b->url, "cl2", 0);
  ASSERT_OK(fleet_worker_close(&t.w, cl_on_worker_closed));
  ASSERT_ERR(FLEET_ECLOSING, fleet_worker_close(&t.w, cl_on_worker_closed));
  ASSERT_ERR(FLEET_ECLOSING, fleet_close((fleet_handle_t *)&t.w, NULL));
  cl_finish(&t);
  ASSERT_EQ(0, t.busy_seen);

  /* The client first (refused), then the handles with calls in flight; the
   * last close callback closes the client. */
  cl_open(&t, b->url, "cl3", 1);
  cl_job(&t, 0);
  ASSERT_ERR(FLEET_EBUSY, fleet_client_close(&t.c.client, cl_client_closed));
  ASSERT_OK(fleet_queue_close(&t.q, cl_on_queue_closed));
  ASSERT_OK(fleet_worker_close(&t.w, cl_on_worker_closed));
  cl_finish(&t);
  ASSERT_EQ(1, t.enqueued);

  /* The worker closed from its handler. */
  cl_open(&t, b->url, "cl4", 1);
  t.close_in_handler = 1;
  cl_job(&t, 1);
  while (t.worker_closed == 0)
    uv_run(&t.c.loop, UV_RUN_ONCE);
  ASSERT_OK(fleet_queue_close(&t.q, cl_on_queue_closed));
  cl_finish(&t);

  /* Everything closed from a walk of the client's handles. */
  cl_open(&t, b->url, "cl5", 1);
  cl_job(&t, 1);
  fleet_client_walk(&t.c.client, cl_walk_close, &t);
  ASSERT_EQ(2, t.walked);
  t.walked = 0;
  /* Closing ones are still shown until they have closed. */
  fleet_client_walk(&t.c.client, cl_walk_count_closing, &t);
  ASSERT_EQ(2, t.walked);
  cl_finish(&t);
}

/* A worker whose claims the server refuses (an ACL user without access to
 * the queue's keys) keeps running, retrying, and tells its error callback
 * each time. */
TEST_IMPL(worker_error_cb_acl) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_worker_stats_t st;
  redisReply *reply;
  char url[128];
  cl_t t;

  reply = fleet_test_redis_cmd(r, "ACL SETUSER u on >pw ~other:* +@all");
  ASSERT_NOT_NULL(reply);
  ASSERT_NE(REDIS_REPLY_ERROR, reply->type);
  freeReplyObject(reply);
  snprintf(url, sizeof(url), "redis://u:pw@127.0.0.1:%d",
           fleet_test_redis_port(r));
  cl_open(&t, url, "acl", 0);
  while (t.errors < 3)
    uv_run(&t.c.loop, UV_RUN_ONCE);
  /* A refusal (FLEET_EAUTH for NOPERM today), not a transient error. */
  ASSERT_NE(FLEET_ECONNLOST, t.last_error);
  ASSERT_NE(FLEET_EUNAVAILABLE, t.last_error);
  ASSERT_NE(FLEET_ETIMEDOUT, t.last_error);
  fleet_worker_stats(&t.w, &st);
  ASSERT_STR_EQ("running", st.state);
  ASSERT_EQ(t.last_error, st.last_error);
  ASSERT_UEQ(0, st.claimed);
  ASSERT_OK(fleet_worker_close(&t.w, cl_on_worker_closed));
  cl_finish(&t);
  fleet_test_redis_free(r);
  return 0;
}
