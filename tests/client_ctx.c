/* client_ctx.c -- a client on its own loop, with counters of what its
 * callbacks saw. */
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
  if (arg != NULL)
    uv_stop(&t->loop);
}

/* Pings once and runs the loop until the reply. */
int ctx_ping(client_ctx_t *t) {
  int before = t->pings_ok + t->pings_err + t->pings_canceled;
  t->in_call = 1;
  ASSERT_OK(fleet_client_ping(&t->client, ctx_on_ping, t));
  t->in_call = 0;
  uv_run(&t->loop, UV_RUN_DEFAULT);
  ASSERT_EQ(before + 1, t->pings_ok + t->pings_err + t->pings_canceled);
  ASSERT_EQ(0, t->ran_in_call);
  return t->last_ping_status;
}

void ctx_on_time(fleet_client_t *c, int status, uint64_t us, void *arg) {
  client_ctx_t *t = c->data;
  ASSERT_OK(status);
  t->time_us = us;
  uv_stop(&t->loop);
}

static void ctx_on_wait_timer(uv_timer_t *timer) {
  uv_stop(timer->loop);
}

int ctx_wait_state(client_ctx_t *t, fleet_client_state_t state, uint64_t ms) {
  int before = t->states[state];
  uv_timer_t timer;

  ASSERT_OK(uv_timer_init(&t->loop, &timer));
  ASSERT_OK(uv_timer_start(&timer, ctx_on_wait_timer, ms, 0));
  while (t->states[state] == before && uv_is_active((uv_handle_t *)&timer))
    uv_run(&t->loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&timer, NULL);
  uv_run(&t->loop, UV_RUN_NOWAIT);
  return t->states[state] > before;
}
