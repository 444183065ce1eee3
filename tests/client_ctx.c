/* client_ctx.c -- a client on its own loop, with counters of what its
 * callbacks saw. */
#include <stdio.h>
#include "client_ctx.h"

static void ctx_on_state(fleet_client_t *c, fleet_client_state_t state,
                         int status) {
  client_ctx_t *t = c->data;
  ASSERT_LT(state, 8);
  t->states[state]++;
  if (state == FLEET_CLIENT_RECONNECTING)
    t->last_status = status;
  if (state == FLEET_CLIENT_CLOSED)
    ASSERT_EQ(0, t->closed);
}

void ctx_on_close(fleet_client_t *c) {
  client_ctx_t *t = c->data;
  t->closed++;
  ASSERT_EQ(1, t->states[FLEET_CLIENT_CLOSED]);
}

void ctx_init(client_ctx_t *t, const char *url, fleet_client_options_t *opts) {
  fleet_client_options_t o;

  memset(t, 0, sizeof(*t));
  ASSERT_OK(uv_loop_init(&t->loop));
  if (opts == NULL) {
    fleet_client_options_init(&o);
    opts = &o;
  }
  opts->state_cb = ctx_on_state;
  t->client.data = t;
  ASSERT_OK(fleet_client_init(&t->loop, &t->client, url, opts));
}

void ctx_close(client_ctx_t *t) {
  ASSERT_OK(fleet_client_close(&t->client, ctx_on_close));
  fleet_test_loop_close(&t->loop);
  ASSERT_EQ(1, t->closed);
}

void ctx_on_ping(fleet_client_t *c, int status, void *arg) {
  client_ctx_t *t = c->data;

  if (t->in_call)
    t->ran_in_call = 1;
  t->last_ping_status = status;
  snprintf(t->last_ping_detail, sizeof(t->last_ping_detail), "%s",
           fleet_client_last_error(c));
  if (status == 0)
    t->pings_ok++;
  else if (status == FLEET_ECANCELED)
    t->pings_canceled++;
  else
    t->pings_err++;
  if (t->close_in_cb) {
    t->close_in_cb = 0;
    ASSERT_OK(fleet_client_close(c, ctx_on_close));
    ASSERT_ERR(FLEET_ECLOSING, fleet_client_ping(c, ctx_on_ping, NULL));
  }
}

/* Whether a ping callback ran since ctx_ping() counted `t->pings_seen`. */
static int ctx_pinged(void *arg) {
  client_ctx_t *t = arg;
  return t->pings_ok + t->pings_err + t->pings_canceled > t->pings_seen;
}

int ctx_ping(client_ctx_t *t) {
  t->pings_seen = t->pings_ok + t->pings_err + t->pings_canceled;
  t->in_call = 1;
  ASSERT_OK(fleet_client_ping(&t->client, ctx_on_ping, NULL));
  t->in_call = 0;
  ASSERT(fleet_test_run_until(&t->loop, ctx_pinged, t,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(t->pings_seen + 1, t->pings_ok + t->pings_err + t->pings_canceled);
  ASSERT_EQ(0, t->ran_in_call);
  return t->last_ping_status;
}

void ctx_on_time(fleet_client_t *c, int status, uint64_t us, void *arg) {
  client_ctx_t *t = c->data;
  ASSERT_OK(status);
  t->time_us = us;
}

/* Whether ctx_on_time() recorded a clock. */
static int ctx_timed(void *arg) {
  client_ctx_t *t = arg;
  return t->time_us != 0;
}

uint64_t ctx_time(client_ctx_t *t) {
  t->time_us = 0;
  ASSERT_OK(fleet_client_time(&t->client, ctx_on_time, NULL));
  ASSERT(fleet_test_run_until(&t->loop, ctx_timed, t,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  return t->time_us;
}

int ctx_wait_state(client_ctx_t *t, fleet_client_state_t state, uint64_t ms) {
  return fleet_test_wait_count(&t->loop, &t->states[state],
                               t->states[state] + 1, fleet_test_ms(ms));
}
