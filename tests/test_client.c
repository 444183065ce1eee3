/* test_client.c -- the client handle on both adapters: lifecycle, ping,
 * time, cancellation on close, bad input. */
#include <sys/time.h>

#include "client_ctx.h"

/* ------------------------------------------------------------------------ */
/* Conformance                                                              */

CONFORMANCE_IMPL(client_ping_time) {
  client_ctx_t t;
  struct timeval tv;
  int64_t local_us, diff;

  ctx_init(&t, b->url, NULL);
  ASSERT_EQ(FLEET_CLIENT_CONNECTING, fleet_client_state(&t.client));
  ASSERT_PTR_EQ(&t.loop, fleet_client_loop(&t.client));
  ASSERT_STR_EQ("fleet", fleet_client_prefix(&t.client));
  ASSERT_OK(ctx_ping(&t));
  ASSERT_EQ(1, t.states[FLEET_CLIENT_READY]);
  ASSERT_EQ(FLEET_CLIENT_READY, fleet_client_state(&t.client));

  ctx_time(&t);
  gettimeofday(&tv, NULL);
  local_us = (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
  diff = local_us - (int64_t)t.time_us;
  /* The backend runs on this machine: its clock agrees within a second. */
  ASSERT_LT(diff < 0 ? -diff : diff, 1000000);
  ctx_close(&t);
  ASSERT_EQ(FLEET_CLIENT_CLOSED, fleet_client_state(&t.client));
  ASSERT_EQ(0, t.states[FLEET_CLIENT_RECONNECTING]);
}

/* Closing with 1000 commands pending runs 1000 cancelled callbacks, each
 * once, all before the close callback. */
CONFORMANCE_IMPL(client_close_cancels_pending) {
  client_ctx_t t;
  int i;

  ctx_init(&t, b->url, NULL);
  ASSERT_OK(ctx_ping(&t));
  for (i = 0; i < 1000; i++)
    ASSERT_OK(fleet_client_ping(&t.client, ctx_on_ping, NULL));
  ASSERT_OK(fleet_client_close(&t.client, ctx_on_close));
  ASSERT_ERR(FLEET_ECLOSING, fleet_client_close(&t.client, ctx_on_close));
  ASSERT_ERR(FLEET_ECLOSING, fleet_client_ping(&t.client, ctx_on_ping, NULL));
  ASSERT_EQ(1, t.pings_ok); /* nothing ran inside close */
  fleet_test_loop_close(&t.loop);
  ASSERT_EQ(1, t.closed);
  ASSERT_EQ(1000, t.pings_canceled);
  ASSERT_EQ(1, t.pings_ok);
  ASSERT_EQ(0, t.pings_err);
}

/* Closing before the connection is ready cancels what waits for it. */
CONFORMANCE_IMPL(client_close_while_connecting) {
  client_ctx_t t;
  int i;

  ctx_init(&t, b->url, NULL);
  for (i = 0; i < 10; i++)
    ASSERT_OK(fleet_client_ping(&t.client, ctx_on_ping, NULL));
  ctx_close(&t);
  ASSERT_EQ(10, t.pings_canceled);
  ASSERT_EQ(0, t.states[FLEET_CLIENT_READY]);
}

/* A client may be closed from inside one of its callbacks; the rest of the
 * pending commands are cancelled, and the close callback runs once. */
CONFORMANCE_IMPL(client_close_inside_callback) {
  client_ctx_t t;
  int i;

  ctx_init(&t, b->url, NULL);
  ASSERT_OK(ctx_ping(&t));
  t.close_in_cb = 1;
  for (i = 0; i < 20; i++)
    ASSERT_OK(fleet_client_ping(&t.client, ctx_on_ping, NULL));
  fleet_test_loop_close(&t.loop);
  ASSERT_EQ(1, t.closed);
  ASSERT_EQ(21, t.pings_ok + t.pings_canceled);
  ASSERT_GE(t.pings_canceled, 1);
  ASSERT_EQ(0, t.pings_err);
}

/* Whether all 10000 pings of client_pipeline_10000 were answered. */
static int pings_answered(void *arg) {
  client_ctx_t *t = arg;
  return t->pings_ok + t->pings_err >= 10000;
}

/* Many commands in flight at once come back in order, all answered. */
CONFORMANCE_IMPL(client_pipeline_10000) {
  client_ctx_t t;
  int i;

  ctx_init(&t, b->url, NULL);
  for (i = 0; i < 10000; i++)
    ASSERT_OK(fleet_client_ping(&t.client, ctx_on_ping, NULL));
  ASSERT(fleet_test_run_until(&t.loop, pings_answered, &t,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(10000, t.pings_ok);
  ctx_close(&t);
}

static void never_called_ping(fleet_client_t *c, int status, void *arg) {
  ASSERT(0 && "callback of a refused call ran");
}

static void never_called_time(fleet_client_t *c, int status, uint64_t us,
                              void *arg) {
  ASSERT(0 && "callback of a refused call ran");
}

/* Bad input is refused at the boundary, and the callback never runs. */
CONFORMANCE_IMPL(client_bad_input) {
  static const char *const prefixes[] = {"", "a{b", "a}b"};
  fleet_client_options_t o;
  uv_loop_t loop;
  fleet_client_t c;
  char big[200];
  size_t i;

  ASSERT_OK(uv_loop_init(&loop));
  fleet_client_options_init(&o);
  ASSERT_ERR(FLEET_EINVAL, fleet_client_init(NULL, &c, b->url, &o));
  ASSERT_ERR(FLEET_EINVAL, fleet_client_init(&loop, NULL, b->url, &o));
  ASSERT_ERR(FLEET_EBADURL, fleet_client_init(&loop, &c, NULL, &o));
  ASSERT_ERR(FLEET_EBADURL, fleet_client_init(&loop, &c, "redis//x", &o));
  ASSERT_ERR(FLEET_EBADURL, fleet_client_init(&loop, &c, "memory://x", &o));
  for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
    o.prefix = prefixes[i];
    ASSERT_ERR(FLEET_EINVAL, fleet_client_init(&loop, &c, b->url, &o));
  }
  memset(big, 'p', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  o.prefix = big;
  ASSERT_ERR(FLEET_EINVAL, fleet_client_init(&loop, &c, b->url, &o));
  fleet_client_options_init(&o);
  o.reconnect_jitter_pct = 101;
  ASSERT_ERR(FLEET_EINVAL, fleet_client_init(&loop, &c, b->url, &o));
  fleet_client_options_init(&o);
  o.reconnect_initial_ms = 1000;
  o.reconnect_max_ms = 10;
  ASSERT_ERR(FLEET_EINVAL, fleet_client_init(&loop, &c, b->url, &o));
  /* A memory peer must be an open memory client. */
  fleet_client_options_init(&o);
  c.internal_ = NULL;
  o.memory_peer = &c;
  ASSERT_ERR(FLEET_EINVAL, fleet_client_init(&loop, &c, b->url, &o));

  /* A zeroed options struct means the defaults. */
  memset(&o, 0, sizeof(o));
  ASSERT_OK(fleet_client_init(&loop, &c, b->url, &o));
  ASSERT_STR_EQ("fleet", fleet_client_prefix(&c));
  ASSERT_ERR(FLEET_EINVAL, fleet_client_ping(&c, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_client_time(&c, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_client_ping(NULL, never_called_ping, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_client_time(NULL, never_called_time, NULL));
  ASSERT_OK(fleet_client_close(&c, NULL));
  ASSERT_ERR(FLEET_ECLOSING, fleet_client_ping(&c, never_called_ping, NULL));
  ASSERT_ERR(FLEET_ECLOSING, fleet_client_time(&c, never_called_time, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_client_close(NULL, NULL));
  fleet_test_loop_close(&loop);
  /* After the close callback the handle is dead. */
  ASSERT_ERR(FLEET_EINVAL, fleet_client_ping(&c, never_called_ping, NULL));
  ASSERT_EQ(FLEET_CLIENT_CLOSED, fleet_client_state(&c));
}

/* Two clients on two loops never meet; two on one loop each run alone. */
CONFORMANCE_IMPL(client_two_clients) {
  client_ctx_t a, c;

  ctx_init(&a, b->url, NULL);
  ctx_init(&c, b->url, NULL);
  ASSERT_OK(ctx_ping(&a));
  ASSERT_OK(ctx_ping(&c));
  ctx_close(&a);
  ASSERT_OK(ctx_ping(&c));
  ctx_close(&c);
}
