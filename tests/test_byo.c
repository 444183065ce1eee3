/* test_byo.c -- fleet over the program's own hiredis async context
 * (fleet_client_init_hiredis()), against a real redis-server, with the
 * hiredis the build links (Debian 12: 0.14.1; 1.x is not installable
 * here, so these tests have run on 0.14.1 only). */
#include <stdio.h>
#include <string.h>

#include <hiredis/adapters/libuv.h>
#include <hiredis/async.h>

#include "fleet.h"
#include "fleet/hiredis.h"
#include "redis_fixture.h"
#include "test.h"

/* The program: its loop, its server, its own contexts. */
typedef struct {
  uv_loop_t loop;
  fleet_test_redis_t *redis;
  redisAsyncContext *ac;
  fleet_client_t client;
  int client_closed;
  int ready;
  int lost_status; /* the status of the last RECONNECTING */
} byo_t;

static redisAsyncContext *byo_connect(byo_t *b) {
  redisAsyncContext *ac =
      redisAsyncConnect("127.0.0.1", fleet_test_redis_port(b->redis));
  ASSERT_NOT_NULL(ac);
  ASSERT_EQ(0, ac->err);
  ASSERT_EQ(REDIS_OK, redisLibuvAttach(ac, &b->loop));
  return ac;
}

static void byo_on_state(fleet_client_t *c, fleet_client_state_t st,
                         int status) {
  byo_t *b = c->data;
  if (st == FLEET_CLIENT_READY)
    b->ready++;
  if (st == FLEET_CLIENT_RECONNECTING)
    b->lost_status = status;
}

static void byo_open(byo_t *b) {
  fleet_client_options_t o;

  memset(b, 0, sizeof(*b));
  ASSERT_OK(uv_loop_init(&b->loop));
  b->redis = fleet_test_redis_start_or_skip(NULL);
  b->ac = byo_connect(b);
  fleet_client_options_init(&o);
  o.prefix = "byo";
  o.state_cb = byo_on_state;
  b->client.data = b;
  ASSERT_OK(fleet_client_init_hiredis(&b->loop, &b->client, b->ac, NULL, &o));
}

static void byo_on_client_closed(fleet_client_t *c) {
  byo_t *b = c->data;
  b->client_closed = 1;
}

static void byo_close_client(byo_t *b) {
  ASSERT_OK(fleet_client_close(&b->client, byo_on_client_closed));
  ASSERT(fleet_test_run_until(&b->loop, fleet_test_flag_set, &b->client_closed,
                              fleet_test_ms(5000)));
}

/* A reply on the program's context, kept as text. */
typedef struct {
  int done;
  int null_reply;
  char text[64];
} prog_reply_t;

static void prog_on_reply(redisAsyncContext *ac, void *r, void *priv) {
  prog_reply_t *p = priv;
  redisReply *reply = r;

  (void)ac;
  p->done = 1;
  if (reply == NULL) {
    p->null_reply = 1;
    return;
  }
  if (reply->type == REDIS_REPLY_STATUS || reply->type == REDIS_REPLY_STRING)
    snprintf(p->text, sizeof(p->text), "%.*s", (int)reply->len, reply->str);
}

/* The program uses its context itself: PING answers PONG. */
static void prog_ping(byo_t *b, redisAsyncContext *ac) {
  prog_reply_t p;

  memset(&p, 0, sizeof(p));
  ASSERT_EQ(REDIS_OK, redisAsyncCommand(ac, prog_on_reply, &p, "PING"));
  ASSERT(fleet_test_run_until(&b->loop, fleet_test_flag_set, &p.done,
                              fleet_test_ms(5000)));
  ASSERT_EQ(0, p.null_reply);
  ASSERT_STR_EQ("PONG", p.text);
}

static void byo_finish(byo_t *b) {
  /* The program frees its own context; hiredis lets go of every record
   * fleet left with it (ASan checks that nothing leaks). */
  if (b->ac != NULL)
    redisAsyncFree(b->ac);
  fleet_test_sleep(&b->loop, 50);
  fleet_test_loop_close(&b->loop);
  fleet_test_redis_free(b->redis);
}

/* The number of channels with a subscriber on the server. */
static long long server_channels(byo_t *b) {
  redisReply *r = fleet_test_redis_cmd(b->redis, "PUBSUB CHANNELS *");
  long long n;

  ASSERT_NOT_NULL(r);
  ASSERT_EQ(REDIS_REPLY_ARRAY, r->type);
  n = (long long)r->elements;
  freeReplyObject(r);
  return n;
}

/* ------------------------------------------------------------------------ */
/* Queue and worker                                                         */

typedef struct {
  byo_t *b;
  int handled;
  int settled;
  char seen[8][8];
  int enq_status;
  int enq_done;
  int counts_done;
  int counts_status;
  fleet_queue_counts_t counts;
  int closed;
} qstate_t;

static void q_handler(fleet_worker_t *w, fleet_job_t *job) {
  qstate_t *s = w->data;
  if (s->handled < 8)
    snprintf(s->seen[s->handled], sizeof(s->seen[0]), "%.*s",
             (int)job->payload.len, (const char *)job->payload.base);
  s->handled++;
  ASSERT_OK(fleet_job_complete(job));
}

static void q_done(fleet_worker_t *w, fleet_job_t *job,
                   fleet_job_action_t action, int status) {
  qstate_t *s = w->data;
  (void)job;
  (void)action;
  ASSERT_OK(status);
  s->settled++;
}

static void q_on_enqueued(fleet_queue_t *q, int status,
                          const fleet_enqueue_result_t *results, size_t n,
                          void *user_data) {
  qstate_t *s = user_data;
  (void)q;
  (void)results;
  (void)n;
  s->enq_status = status;
  s->enq_done++;
}

static void q_on_counts(fleet_queue_t *q, int status,
                        const fleet_queue_counts_t *counts, void *user_data) {
  qstate_t *s = user_data;
  (void)q;
  s->counts_status = status;
  if (status == 0)
    s->counts = *counts;
  s->counts_done = 1;
}

static void q_on_closed(fleet_handle_t *h) {
  qstate_t *s = h->data;
  s->closed++;
}

static int q_enq_done(void *arg) {
  return ((qstate_t *)arg)->enq_done >= 1;
}

static int q_channels_up(void *arg) {
  return server_channels(arg) > 0;
}

/* A worker on the program's context gets jobs as they are enqueued: its
 * fallback poll is ten minutes, so only wake-ups (pub/sub on the
 * connection fleet opened from the context's address) bring them in time.
 * The program's own commands on the context work meanwhile; a SCRIPT
 * FLUSH is survived (EVALSHA gets NOSCRIPT, the op goes again as EVAL);
 * closing the client leaves the context open, and fleet's own pub/sub
 * connection gone. */
TEST_IMPL(byo_queue_worker) {
  byo_t b;
  qstate_t s;
  fleet_queue_t q;
  fleet_worker_t w;
  fleet_worker_options_t wo;
  fleet_job_spec_t spec;
  char payload[8];
  int i;

  byo_open(&b);
  memset(&s, 0, sizeof(s));
  s.b = &b;
  ASSERT(fleet_test_run_until(&b.loop, fleet_test_flag_set, &b.ready,
                              fleet_test_ms(5000)));

  fleet_worker_options_init(&wo);
  wo.done_cb = q_done;
  wo.poll_ms = 600000;
  w.data = &s;
  ASSERT_OK(fleet_worker_init(&b.client, &w, "jobs", &wo));
  ASSERT_OK(fleet_worker_start(&w, q_handler));
  q.data = &s;
  ASSERT_OK(fleet_queue_init(&b.client, &q, "jobs", NULL));

  /* The worker's subscription reaches the server, and its first claim
   * (which finds nothing) is long done. */
  ASSERT(fleet_test_run_until(&b.loop, q_channels_up, &b, fleet_test_ms(5000)));
  fleet_test_sleep(&b.loop, 200);
  ASSERT_EQ(0, s.handled);

  for (i = 0; i < 5; i++) {
    if (i == 3) {
      /* The scripts leave the server's cache. */
      redisReply *r = fleet_test_redis_cmd(b.redis, "SCRIPT FLUSH");
      ASSERT_NOT_NULL(r);
      freeReplyObject(r);
    }
    snprintf(payload, sizeof(payload), "j%d", i);
    fleet_job_spec_init(&spec, "t", payload, strlen(payload));
    s.enq_done = 0;
    ASSERT_OK(fleet_queue_enqueue(&q, &spec, 1, q_on_enqueued, &s));
    ASSERT(fleet_test_run_until(&b.loop, q_enq_done, &s, fleet_test_ms(5000)));
    ASSERT_OK(s.enq_status);
    /* Each job is handled before the next is enqueued: a wake-up each. */
    ASSERT(fleet_test_wait_count(&b.loop, &s.settled, i + 1,
                                 fleet_test_ms(10000)));
    ASSERT_EQ(i + 1, s.handled);
  }
  ASSERT_EQ(5, s.settled);
  for (i = 0; i < 5; i++) {
    snprintf(payload, sizeof(payload), "j%d", i);
    ASSERT_STR_EQ(payload, s.seen[i]);
  }
  prog_ping(&b, b.ac);

  ASSERT_OK(fleet_queue_counts(&q, q_on_counts, &s));
  ASSERT(fleet_test_run_until(&b.loop, fleet_test_flag_set, &s.counts_done,
                              fleet_test_ms(5000)));
  ASSERT_OK(s.counts_status);
  ASSERT_UEQ(5, s.counts.completed);
  ASSERT_UEQ(0, s.counts.pending);

  ASSERT_OK(fleet_worker_close(&w, q_on_closed));
  ASSERT_OK(fleet_queue_close(&q, q_on_closed));
  ASSERT(fleet_test_wait_count(&b.loop, &s.closed, 2, fleet_test_ms(5000)));
  byo_close_client(&b);

  /* The program's context is open and usable; fleet's subscriber
   * connection is gone. */
  prog_ping(&b, b.ac);
  fleet_test_sleep(&b.loop, 50);
  ASSERT_EQ(0, server_channels(&b));
  byo_finish(&b);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Lock, with the program's subscriber context                              */

typedef struct {
  int done;
  int status;
  uint64_t token;
  uint64_t at;
} lstate_t;

static void l_on_acquire(fleet_lock_t *lock, int status, uint64_t token,
                         void *user_data) {
  lstate_t *s = user_data;
  s->done = 1;
  s->status = status;
  s->token = token;
  s->at =
      uv_now(fleet_client_loop(fleet_handle_client((fleet_handle_t *)lock)));
}

static void l_on_status(fleet_handle_t *h, int status, void *user_data) {
  lstate_t *s = user_data;
  (void)h;
  s->done = 1;
  s->status = status;
}

static int closed_count;
static void l_on_closed(fleet_handle_t *h) {
  (void)h;
  closed_count++;
}

/* Two lock handles on a client over the program's context, pub/sub on a
 * subscriber context the program hands in: the first takes the lease,
 * the second waits and gets it after the release with a greater token;
 * the program's subscriber context stays the program's (its channels
 * are given back at close). */
TEST_IMPL(byo_lock) {
  byo_t b;
  redisAsyncContext *sub;
  fleet_client_options_t o;
  fleet_lock_t l1, l2;
  lstate_t a1, a2, rel;
  uint64_t released_at;

  memset(&b, 0, sizeof(b));
  ASSERT_OK(uv_loop_init(&b.loop));
  b.redis = fleet_test_redis_start_or_skip(NULL);
  b.ac = byo_connect(&b);
  sub = byo_connect(&b);
  fleet_client_options_init(&o);
  o.prefix = "byo";
  o.state_cb = byo_on_state;
  b.client.data = &b;
  /* The same context twice is refused. */
  ASSERT_ERR(FLEET_EINVAL,
             fleet_client_init_hiredis(&b.loop, &b.client, b.ac, b.ac, &o));
  ASSERT_OK(fleet_client_init_hiredis(&b.loop, &b.client, b.ac, sub, &o));

  ASSERT_OK(fleet_lock_init(&b.client, &l1, "res", "one", 30000, NULL));
  ASSERT_OK(fleet_lock_init(&b.client, &l2, "res", "two", 30000, NULL));
  memset(&a1, 0, sizeof(a1));
  memset(&a2, 0, sizeof(a2));
  memset(&rel, 0, sizeof(rel));
  ASSERT_OK(fleet_lock_acquire(&l1, 0, l_on_acquire, &a1));
  ASSERT(fleet_test_run_until(&b.loop, fleet_test_flag_set, &a1.done,
                              fleet_test_ms(5000)));
  ASSERT_OK(a1.status);
  ASSERT_UGT(a1.token, 0);
  ASSERT(fleet_lock_held(&l1));

  ASSERT_OK(fleet_lock_acquire(&l2, fleet_test_ms(20000), l_on_acquire, &a2));
  fleet_test_sleep(&b.loop, 300);
  ASSERT_EQ(0, a2.done); /* held by l1 */
  ASSERT_GT(server_channels(&b), 0);

  ASSERT_OK(fleet_lock_release(&l1, l_on_status, &rel));
  ASSERT(fleet_test_run_until(&b.loop, fleet_test_flag_set, &rel.done,
                              fleet_test_ms(5000)));
  ASSERT_OK(rel.status);
  released_at = uv_now(&b.loop);
  ASSERT(fleet_test_run_until(&b.loop, fleet_test_flag_set, &a2.done,
                              fleet_test_ms(10000)));
  ASSERT_OK(a2.status);
  ASSERT_UGT(a2.token, a1.token);
  ASSERT_UGE(a2.at, released_at);
  ASSERT(fleet_lock_held(&l2));

  closed_count = 0;
  ASSERT_OK(fleet_lock_close(&l1, l_on_closed));
  ASSERT_OK(fleet_lock_close(&l2, l_on_closed));
  ASSERT(fleet_test_wait_count(&b.loop, &closed_count, 2, fleet_test_ms(5000)));
  byo_close_client(&b);

  /* Both of the program's contexts are still open: the command context
   * answers, and the subscriber context gave its channels back. */
  prog_ping(&b, b.ac);
  fleet_test_sleep(&b.loop, 100);
  ASSERT_EQ(0, server_channels(&b));
  ASSERT_EQ(0, sub->err);
  redisAsyncFree(sub);
  byo_finish(&b);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The program closes its context under fleet                               */

typedef struct {
  int done;
  int status;
} pstate_t;

static void p_on_ping(fleet_client_t *c, int status, void *user_data) {
  pstate_t *p = user_data;
  (void)c;
  p->done++;
  p->status = status;
}

/* A ping is on its way (the server is paused) when the program frees its
 * context: the ping fails with FLEET_ECONNLOST, the client reports
 * RECONNECTING with it, later calls fail at once, and the client closes
 * cleanly. */
TEST_IMPL(byo_context_freed) {
  byo_t b;
  pstate_t p;
  redisAsyncContext *ac;

  byo_open(&b);
  ASSERT(fleet_test_run_until(&b.loop, fleet_test_flag_set, &b.ready,
                              fleet_test_ms(5000)));
  memset(&p, 0, sizeof(p));
  ASSERT_OK(fleet_client_ping(&b.client, p_on_ping, &p));
  ASSERT(fleet_test_run_until(&b.loop, fleet_test_flag_set, &p.done,
                              fleet_test_ms(5000)));
  ASSERT_OK(p.status);

  ASSERT_OK(fleet_test_redis_pause(b.redis));
  memset(&p, 0, sizeof(p));
  ASSERT_OK(fleet_client_ping(&b.client, p_on_ping, &p));
  fleet_test_sleep(&b.loop, 100); /* written, not answered */
  ASSERT_EQ(0, p.done);
  ac = b.ac;
  b.ac = NULL;
  redisAsyncFree(ac);
  ASSERT(fleet_test_run_until(&b.loop, fleet_test_flag_set, &p.done,
                              fleet_test_ms(5000)));
  ASSERT_EQ(1, p.done);
  ASSERT_ERR(FLEET_ECONNLOST, p.status);
  ASSERT_EQ(FLEET_ECONNLOST, b.lost_status);
  ASSERT_EQ(FLEET_CLIENT_RECONNECTING, fleet_client_state(&b.client));
  ASSERT_NOT_NULL(strstr(fleet_client_last_error(&b.client), "hiredis"));
  ASSERT_OK(fleet_test_redis_resume(b.redis));

  memset(&p, 0, sizeof(p));
  ASSERT_ERR(FLEET_ECONNLOST, fleet_client_ping(&b.client, p_on_ping, &p));
  byo_close_client(&b);
  ASSERT_EQ(0, p.done);
  byo_finish(&b);
  return 0;
}

/* The client closes while a ping waits on a paused server: the ping hears
 * FLEET_ECANCELED once, the reply that comes after the server resumes is
 * dropped, and the program's context goes on working. */
TEST_IMPL(byo_close_pending) {
  byo_t b;
  pstate_t p;

  byo_open(&b);
  ASSERT(fleet_test_run_until(&b.loop, fleet_test_flag_set, &b.ready,
                              fleet_test_ms(5000)));
  ASSERT_OK(fleet_test_redis_pause(b.redis));
  memset(&p, 0, sizeof(p));
  ASSERT_OK(fleet_client_ping(&b.client, p_on_ping, &p));
  fleet_test_sleep(&b.loop, 50);
  byo_close_client(&b);
  ASSERT_EQ(1, p.done);
  ASSERT_ERR(FLEET_ECANCELED, p.status);
  ASSERT_OK(fleet_test_redis_resume(b.redis));
  prog_ping(&b, b.ac); /* after the dropped reply of fleet's ping */
  ASSERT_EQ(1, p.done);
  byo_finish(&b);
  return 0;
}

/* What fleet_client_init_hiredis() refuses. */
TEST_IMPL(byo_init_refused) {
  byo_t b;
  fleet_client_options_t o;
  redisAsyncContext *subbed;

  memset(&b, 0, sizeof(b));
  ASSERT_OK(uv_loop_init(&b.loop));
  b.redis = fleet_test_redis_start_or_skip(NULL);
  b.ac = byo_connect(&b);
  ASSERT_ERR(FLEET_EINVAL,
             fleet_client_init_hiredis(&b.loop, &b.client, NULL, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_client_init_hiredis(NULL, &b.client, b.ac, NULL, NULL));
  fleet_client_options_init(&o);
  o.wait_replicas = 1;
  ASSERT_ERR(FLEET_EINVAL,
             fleet_client_init_hiredis(&b.loop, &b.client, b.ac, NULL, &o));
  /* A context in subscriber mode cannot carry commands. */
  subbed = byo_connect(&b);
  ASSERT_EQ(REDIS_OK, redisAsyncCommand(subbed, NULL, NULL, "SUBSCRIBE x"));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_client_init_hiredis(&b.loop, &b.client, subbed, NULL, NULL));
  ASSERT_NULL(b.client.internal_);
  redisAsyncFree(subbed);
  byo_finish(&b);
  return 0;
}

/* fleet's own pub/sub connection is killed by the server: fleet does not
 * reopen it (no channel is subscribed afterwards), ops on the program's
 * context go on, a worker still gets its jobs by its poll, and everything
 * closes cleanly. */
TEST_IMPL(byo_sub_killed) {
  byo_t b;
  qstate_t s;
  fleet_queue_t q;
  fleet_worker_t w;
  fleet_worker_options_t wo;
  fleet_job_spec_t spec;
  pstate_t p;
  redisReply *r;

  byo_open(&b);
  memset(&s, 0, sizeof(s));
  s.b = &b;
  fleet_worker_options_init(&wo);
  wo.done_cb = q_done;
  wo.poll_ms = 200;
  w.data = &s;
  ASSERT_OK(fleet_worker_init(&b.client, &w, "jobs", &wo));
  ASSERT_OK(fleet_worker_start(&w, q_handler));
  q.data = &s;
  ASSERT_OK(fleet_queue_init(&b.client, &q, "jobs", NULL));
  ASSERT(fleet_test_run_until(&b.loop, q_channels_up, &b, fleet_test_ms(5000)));

  r = fleet_test_redis_cmd(b.redis, "CLIENT KILL TYPE pubsub");
  ASSERT_NOT_NULL(r);
  ASSERT_EQ(REDIS_REPLY_INTEGER, r->type);
  ASSERT_EQ(1, r->integer);
  freeReplyObject(r);
  fleet_test_sleep(&b.loop, 300);
  ASSERT_EQ(0, server_channels(&b));

  memset(&p, 0, sizeof(p));
  ASSERT_OK(fleet_client_ping(&b.client, p_on_ping, &p));
  ASSERT(fleet_test_run_until(&b.loop, fleet_test_flag_set, &p.done,
                              fleet_test_ms(5000)));
  ASSERT_OK(p.status);

  fleet_job_spec_init(&spec, "t", "late", 4);
  ASSERT_OK(fleet_queue_enqueue(&q, &spec, 1, q_on_enqueued, &s));
  ASSERT(fleet_test_wait_count(&b.loop, &s.settled, 1, fleet_test_ms(10000)));
  ASSERT_STR_EQ("late", s.seen[0]);
  ASSERT_EQ(0, server_channels(&b)); /* not reopened */

  ASSERT_OK(fleet_worker_close(&w, q_on_closed));
  ASSERT_OK(fleet_queue_close(&q, q_on_closed));
  ASSERT(fleet_test_wait_count(&b.loop, &s.closed, 2, fleet_test_ms(5000)));
  byo_close_client(&b);
  prog_ping(&b, b.ac);
  byo_finish(&b);
  return 0;
}
