/* test_backend.c -- the internal backend interface on both adapters: every
 * op implemented twice, pub/sub with its liveness notices. */
#include "core/client.h"
#include "client_ctx.h"

TEST_IMPL(backend_ops_complete) {
  int op;

  for (op = 0; op < FLEET__OP_COUNT; op++) {
    ASSERT_NOT_NULL(fleet__op_name((fleet__op_t)op));
    if (!fleet__redis_op_implemented((fleet__op_t)op) ||
        !fleet__memory_op_implemented((fleet__op_t)op))
      fleet_test__fail(__FILE__, __LINE__, "op %s lacks an implementation",
                       fleet__op_name((fleet__op_t)op));
  }
  ASSERT(!fleet__redis_op_implemented(FLEET__OP_COUNT));
  ASSERT(!fleet__memory_op_implemented(FLEET__OP_COUNT));
  return 0;
}

/* What one subscription saw. */
typedef struct {
  int active; /* liveness notices (FLEET_ECONNLOST, NULL payload) */
  int messages;
  char last[64];
  size_t last_len;
} sub_seen_t;

static void on_message(void *arg, int status, const char *payload, size_t len) {
  sub_seen_t *s = arg;

  if (status == FLEET_ECONNLOST) {
    ASSERT_NULL(payload);
    s->active++;
    return;
  }
  ASSERT_OK(status);
  ASSERT_LE(len, sizeof(s->last));
  memcpy(s->last, payload, len);
  s->last_len = len;
  s->messages++;
}

static int64_t published;

static void on_published(void *arg, int status, const fleet__reply_t *r) {
  ASSERT_OK(status);
  ASSERT_EQ(FLEET__REPLY_INT, r->type);
  published = r->integer;
  *(int *)arg = 1;
}

/* Publishes on "chan" through `client` and waits for the reply; returns
 * the number of receiving clients. */
static int64_t publish_via(fleet_client_t *client, const char *payload,
                           size_t len) {
  fleet_bytes_t args[2] = {{"chan", 4}, {payload, len}};
  int done = 0;

  ASSERT_OK(fleet__backend_call(fleet__client_backend(client),
                                FLEET__OP_PUBLISH, NULL, 0, args, 2,
                                on_published, &done));
  ASSERT(fleet_test_run_until(fleet_client_loop(client), fleet_test_flag_set,
                              &done, fleet_test_ms(FLEET_TEST_WAIT_MS)));
  return published;
}

static int64_t publish(client_ctx_t *t, const char *payload, size_t len) {
  return publish_via(&t->client, payload, len);
}

/* Runs `t`'s loop until `*counter` reaches `want`. */
static void wait_for(client_ctx_t *t, const int *counter, int want) {
  ASSERT(fleet_test_wait_count(&t->loop, counter, want,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(want, *counter);
}

CONFORMANCE_IMPL(backend_pubsub) {
  static const char bin[] = {'h', 'i', '\0', 'x'};
  fleet_client_options_t o;
  client_ctx_t t;
  fleet__backend_t *be;
  fleet__sub_t *s1, *s2;
  sub_seen_t a, c;

  memset(&a, 0, sizeof(a));
  memset(&c, 0, sizeof(c));
  fleet_client_options_init(&o);
  o.reconnect_initial_ms = 20;
  o.reconnect_max_ms = 100;
  ctx_init(&t, b->url, &o);
  be = fleet__client_backend(&t.client);
  ASSERT_ERR(FLEET_EINVAL, be->vt->subscribe(be, "chan", 4, NULL, &a, &s1));
  ASSERT_OK(be->vt->subscribe(be, "chan", 4, on_message, &a, &s1));
  ASSERT_EQ(0, a.active); /* never inside the call */
  wait_for(&t, &a.active, 1);

  ASSERT_EQ(1, publish(&t, bin, sizeof(bin)));
  wait_for(&t, &a.messages, 1);
  ASSERT_EQ(sizeof(bin), a.last_len);
  ASSERT_MEM_EQ(bin, a.last, sizeof(bin));

  /* A second subscriber of the same channel: both hear each message. */
  ASSERT_OK(be->vt->subscribe(be, "chan", 4, on_message, &c, &s2));
  wait_for(&t, &c.active, 1);
  ASSERT_EQ(1, publish(&t, "two", 3)); /* one client, two subscribers */
  wait_for(&t, &c.messages, 1);
  wait_for(&t, &a.messages, 2);

  /* After unsubscribe, a callback never runs again. */
  be->vt->unsubscribe(be, s1);
  ASSERT_EQ(1, publish(&t, "three", 5));
  wait_for(&t, &c.messages, 2);
  ASSERT_EQ(2, a.messages);

  if (b->redis != NULL) {
    /* The subscriber connection breaks and comes back: the subscription is
     * live again, and says so. */
    ASSERT_OK(fleet_test_redis_kill(b->redis));
    ASSERT_OK(fleet_test_redis_restart(b->redis));
    wait_for(&t, &c.active, 2);
    while (publish(&t, "four", 4) != 1)
      ;
    wait_for(&t, &c.messages, 3);
    ASSERT_MEM_EQ("four", c.last, 4);
  }
  be->vt->unsubscribe(be, s2);
  /* On Redis the UNSUBSCRIBE travels on the other connection, so the
   * server may count the client a moment longer; the callback never runs
   * again either way. */
  while (publish(&t, "five", 4) != 0)
    ;
  ctx_close(&t);
  ASSERT_EQ(2, a.messages);
  ASSERT_EQ(b->redis != NULL ? 3 : 2, c.messages);
}

/* Two memory clients sharing one store see each other's messages; a
 * client of its own store does not. */
TEST_IMPL(backend_memory_peers) {
  fleet_client_options_t o;
  fleet_client_t lone, peer;
  client_ctx_t t;
  fleet__backend_t *be;
  fleet__sub_t *s;
  sub_seen_t a;
  uv_loop_t *loop;

  memset(&a, 0, sizeof(a));
  ctx_init(&t, "memory://", NULL);
  loop = &t.loop;
  be = fleet__client_backend(&t.client);
  ASSERT_OK(be->vt->subscribe(be, "chan", 4, on_message, &a, &s));
  wait_for(&t, &a.active, 1);

  /* A private store: nobody hears it. */
  ASSERT_OK(fleet_client_init(loop, &lone, "memory://", NULL));
  ASSERT_EQ(0, publish_via(&lone, "x", 1));
  ASSERT_OK(fleet_client_close(&lone, NULL));

  /* A peer shares the store. */
  fleet_client_options_init(&o);
  o.memory_peer = &t.client;
  ASSERT_OK(fleet_client_init(loop, &peer, "memory://", &o));
  ASSERT_EQ(1, publish_via(&peer, "peer", 4));
  wait_for(&t, &a.messages, 1);
  ASSERT_MEM_EQ("peer", a.last, 4);
  /* The peer may outlive the client it joined. */
  be->vt->unsubscribe(be, s);
  ASSERT_OK(fleet_client_close(&peer, NULL));
  ctx_close(&t);
  return 0;
}
