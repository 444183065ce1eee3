/* test_close.c -- a client knows its handles: it refuses to close while
 * any is left, fleet_client_walk() finds them, and no order of closes
 * reads freed memory or leaves the loop running (run under ASan). */
#include <string.h>

#include "test.h"

/* One client with its handles and what their callbacks saw. */
typedef struct {
  uv_loop_t loop;
  fleet_client_t client;
  fleet_lock_t a, b;
  fleet_leader_t la, lb;
  int acquired, acquire_status[2];
  int handles_closed;
  int client_closed;
  int walked;
  int elected;
  int client_closing; /* the test closed the client itself */
  int pinged;
} close_env_t;

static void env_on_client_closed(fleet_client_t *client) {
  close_env_t *e = client->data;

  /* Every handle has finished closing before its client. */
  ASSERT_EQ(e->walked, e->handles_closed);
  e->client_closed++;
}

/* A handle's close callback: the client closes from the last one, unless
 * the test closed it already. */
static void env_on_handle_closed(fleet_handle_t *h) {
  close_env_t *e = h->data;

  ASSERT_NULL(h->internal_);
  ASSERT(fleet_is_closing(h));
  e->handles_closed++;
  if (e->handles_closed == e->walked && !e->client_closing)
    ASSERT_OK(fleet_client_close(&e->client, env_on_client_closed));
}

static void env_on_ping(fleet_client_t *client, int status, void *arg) {
  close_env_t *e = arg;

  ASSERT_OK(status);
  e->pinged++;
}

/* The client, connected: a lease that starts while it still connects can
 * run out before its grant comes back on a loaded machine. */
static void env_init(close_env_t *e, const char *url) {
  memset(e, 0, sizeof(*e));
  ASSERT_OK(uv_loop_init(&e->loop));
  ASSERT_OK(fleet_client_init(&e->loop, &e->client, url, NULL));
  e->client.data = e;
  ASSERT_OK(fleet_client_ping(&e->client, env_on_ping, e));
  ASSERT(fleet_test_wait_count(&e->loop, &e->pinged, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

static void env_on_acquired(fleet_lock_t *lock, int status, uint64_t token,
                            void *arg) {
  close_env_t *e = lock->data;
  int *slot = arg;

  e->acquired++;
  *slot = status;
}

static int env_run_until(close_env_t *e, const int *counter, int want) {
  return fleet_test_wait_count(&e->loop, counter, want,
                               fleet_test_ms(FLEET_TEST_WAIT_MS));
}

static void env_finish(close_env_t *e) {
  uv_run(&e->loop, UV_RUN_DEFAULT);
  ASSERT_EQ(1, e->client_closed);
  fleet_test_loop_close(&e->loop);
}

/* The client refuses to close while a lock is open, and the lock goes on
 * working; it closes once the lock has. */
CONFORMANCE_IMPL(close_client_busy) {
  uint32_t ttl = (uint32_t)fleet_test_ms(300);
  close_env_t e;

  env_init(&e, b->url);
  ASSERT_OK(fleet_lock_init(&e.client, &e.a, "busy", "me", ttl, NULL));
  e.a.data = &e;
  ASSERT_OK(fleet_lock_acquire(&e.a, 0, env_on_acquired, &e.acquire_status[0]));
  ASSERT(env_run_until(&e, &e.acquired, 1));
  ASSERT_OK(e.acquire_status[0]);

  ASSERT_ERR(FLEET_EBUSY, fleet_client_close(&e.client, NULL));
  ASSERT_EQ(FLEET_CLIENT_READY, fleet_client_state(&e.client));
  /* Still renewed past twice its TTL: the client was left as it was. */
  fleet_test_sleep(&e.loop, 2 * ttl);
  ASSERT(fleet_lock_held(&e.a));

  /* Once the lock is closing, the client may close at once: the lock's
   * close callback still runs first. */
  e.walked = 1;
  ASSERT_OK(fleet_lock_close(&e.a, env_on_handle_closed));
  ASSERT_ERR(FLEET_ECLOSING, fleet_close((fleet_handle_t *)&e.a, NULL));
  e.client_closing = 1;
  ASSERT_OK(fleet_client_close(&e.client, env_on_client_closed));
  env_finish(&e);
  ASSERT_EQ(1, e.handles_closed);
}

/* Closing from inside the lock's own acquire callback: the client first
 * (refused), then the lock, then the client from the lock's close
 * callback. */
static void inside_on_acquired(fleet_lock_t *lock, int status, uint64_t token,
                               void *arg) {
  close_env_t *e = lock->data;

  e->acquired++;
  ASSERT_OK(status);
  ASSERT_ERR(FLEET_EBUSY, fleet_client_close(&e->client, NULL));
  ASSERT_OK(fleet_lock_close(lock, env_on_handle_closed));
}

CONFORMANCE_IMPL(close_inside_callback) {
  close_env_t e;

  env_init(&e, b->url);
  e.walked = 1;
  ASSERT_OK(fleet_lock_init(&e.client, &e.a, "inside", "me", 1000, NULL));
  e.a.data = &e;
  ASSERT_OK(fleet_lock_acquire(&e.a, 0, inside_on_acquired, NULL));
  env_finish(&e);
  ASSERT_EQ(1, e.acquired);
  ASSERT_EQ(1, e.handles_closed);
}

static void walk_count(fleet_handle_t *h, void *arg) {
  close_env_t *e = arg;
  e->walked++;
}

/* Closes every handle that is still open; closing ones are visited too. */
static void walk_close_open(fleet_handle_t *h, void *arg) {
  close_env_t *e = arg;

  if (fleet_is_closing(h))
    return;
  h->data = e;
  ASSERT_OK(fleet_close(h, env_on_handle_closed));
}

static void leader_on_elected(fleet_leader_t *leader, uint64_t token) {
  close_env_t *e = leader->data;
  e->elected++;
}

static void leader_on_demoted(fleet_leader_t *leader, int status) {}

/* Every kind of lock and leader handle, in every state: walked (the
 * leader's own lock is not shown) and closed from the walk; the pending
 * acquire hears FLEET_ECANCELED and the client closes from the last close
 * callback. */
CONFORMANCE_IMPL(close_walk_all) {
  fleet_leader_options_t lo;
  close_env_t e;

  env_init(&e, b->url);
  fleet_leader_options_init(&lo);
  lo.elected_cb = leader_on_elected;
  lo.demoted_cb = leader_on_demoted;
  ASSERT_OK(fleet_lock_init(&e.client, &e.a, "walk", "a", 1000, NULL));
  ASSERT_OK(fleet_lock_init(&e.client, &e.b, "walk", "b", 1000, NULL));
  e.a.data = e.b.data = &e;
  ASSERT_OK(fleet_leader_init(&e.client, &e.la, "walk-lead", "a", 1000, &lo));
  ASSERT_OK(fleet_leader_init(&e.client, &e.lb, "walk-lead", "b", 1000, &lo));
  e.la.data = e.lb.data = &e;
  ASSERT_EQ(FLEET_HANDLE_LOCK, e.a.type);
  ASSERT_EQ(FLEET_HANDLE_LEADER, e.la.type);
  ASSERT_STR_EQ("leader", fleet_handle_type_name(e.la.type));
  ASSERT(fleet_handle_client((fleet_handle_t *)&e.la) == &e.client);

  ASSERT_OK(fleet_lock_acquire(&e.a, 0, env_on_acquired, &e.acquire_status[0]));
  ASSERT(env_run_until(&e, &e.acquired, 1));
  ASSERT_OK(e.acquire_status[0]);
  /* b waits for a's lease; one leader leads, the other campaigns. */
  ASSERT_OK(
      fleet_lock_acquire(&e.b, 60000, env_on_acquired, &e.acquire_status[1]));
  ASSERT_OK(fleet_leader_campaign(&e.la));
  ASSERT_OK(fleet_leader_campaign(&e.lb));
  ASSERT(env_run_until(&e, &e.elected, 1));

  fleet_client_walk(&e.client, walk_count, &e);
  ASSERT_EQ(4, e.walked);
  /* While one handle is open, the client refuses. */
  ASSERT_OK(fleet_close((fleet_handle_t *)&e.a, NULL));
  ASSERT_ERR(FLEET_EBUSY, fleet_client_close(&e.client, NULL));
  e.walked = 3;
  fleet_client_walk(&e.client, walk_close_open, &e);
  env_finish(&e);
  ASSERT_EQ(3, e.handles_closed);
  ASSERT_EQ(2, e.acquired);
  ASSERT_ERR(FLEET_ECANCELED, e.acquire_status[1]);
}

/* Bad input to the generic calls. */
TEST_IMPL(close_bad_input) {
  fleet_lock_t never;

  memset(&never, 0, sizeof(never));
  ASSERT_ERR(FLEET_EINVAL, fleet_close(NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_close((fleet_handle_t *)&never, NULL));
  ASSERT(fleet_is_closing((fleet_handle_t *)&never));
  ASSERT_NULL(fleet_handle_client((fleet_handle_t *)&never));
  ASSERT_STR_EQ("unknown", fleet_handle_type_name(FLEET_HANDLE_TYPE_MAX));
  ASSERT_STR_EQ("lock", fleet_handle_type_name(FLEET_HANDLE_LOCK));
  fleet_client_walk(NULL, walk_count, NULL);
  return 0;
}
