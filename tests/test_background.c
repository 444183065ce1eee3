/* test_background.c -- handles that work in the background (lock
 * renewals, leader campaigns) report each failure to their error callback
 * with its code and the server's text, and go on working. */
#include <string.h>

#include "redis_fixture.h"
#include "test.h"

/* What the error callbacks saw. */
typedef struct {
  uv_loop_t loop;
  fleet_client_t client;
  int errors;
  int last_status;
  char last_detail[256];
  int acquired, acquire_status;
  int lost, lost_status;
  int elected;
  int closed;
  int pinged;
} bg_env_t;

static void bg_on_error(fleet_handle_t *h, int status, const char *detail) {
  bg_env_t *e = h->data;

  ASSERT_NOT_NULL(detail);
  e->errors++;
  e->last_status = status;
  snprintf(e->last_detail, sizeof(e->last_detail), "%s", detail);
}

static void bg_on_acquired(fleet_lock_t *lock, int status, uint64_t token,
                           void *arg) {
  bg_env_t *e = lock->data;

  e->acquired++;
  e->acquire_status = status;
}

static void bg_on_lost(fleet_lock_t *lock, int status, uint64_t token) {
  bg_env_t *e = lock->data;

  e->lost++;
  e->lost_status = status;
}

static void bg_on_closed(fleet_handle_t *h) {
  bg_env_t *e = h->data;

  e->closed++;
  ASSERT_OK(fleet_client_close(&e->client, NULL));
}

static void bg_on_ping(fleet_client_t *client, int status, void *arg) {
  bg_env_t *e = arg;

  ASSERT_OK(status);
  e->pinged++;
}

/* Connects as the ACL user "bg", who may touch every key for now, and
 * waits for the connection: a lease that starts while the client still
 * connects can run out before its grant comes back on a loaded machine. */
static void bg_init(bg_env_t *e, fleet_test_redis_t *r) {
  char url[128];

  memset(e, 0, sizeof(*e));
  fleet_test_redis_ok(r, "ACL SETUSER bg on >pw ~* &* +@all");
  snprintf(url, sizeof(url), "redis://bg:pw@127.0.0.1:%d",
           fleet_test_redis_port(r));
  ASSERT_OK(uv_loop_init(&e->loop));
  ASSERT_OK(fleet_client_init(&e->loop, &e->client, url, NULL));
  ASSERT_OK(fleet_client_ping(&e->client, bg_on_ping, e));
  ASSERT(fleet_test_wait_count(&e->loop, &e->pinged, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

static void bg_finish(bg_env_t *e) {
  uv_run(&e->loop, UV_RUN_DEFAULT);
  ASSERT_EQ(1, e->closed);
  fleet_test_loop_close(&e->loop);
}

/* A held lease whose renewals are refused (the user lost its rights to
 * the key): every failed renewal reaches the error callback with
 * FLEET_ENOPERM and the server's NOPERM text, and the lease is reported
 * lost once its local validity runs out. */
TEST_IMPL(background_lock_renewal_error) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  uint32_t ttl = (uint32_t)fleet_test_ms(600);
  fleet_lock_options_t o;
  fleet_lock_t lock;
  bg_env_t e;

  bg_init(&e, r);
  fleet_lock_options_init(&o);
  o.error_cb = bg_on_error;
  o.lost_cb = bg_on_lost;
  ASSERT_OK(fleet_lock_init(&e.client, &lock, "bg", "me", ttl, &o));
  lock.data = &e;
  ASSERT_OK(fleet_lock_acquire(&lock, 0, bg_on_acquired, NULL));
  ASSERT(fleet_test_wait_count(&e.loop, &e.acquired, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(e.acquire_status);

  fleet_test_redis_ok(r, "ACL SETUSER bg resetkeys ~other:*");
  ASSERT(fleet_test_wait_count(&e.loop, &e.lost, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_ERR(FLEET_ETIMEDOUT, e.lost_status);
  ASSERT_GE(e.errors, 1);
  ASSERT_ERR(FLEET_ENOPERM, e.last_status);
  ASSERT_NOT_NULL(strstr(e.last_detail, "NOPERM"));

  ASSERT_OK(fleet_lock_close(&lock, bg_on_closed));
  bg_finish(&e);
  fleet_test_redis_free(r);
  return 0;
}

static void bg_on_elected(fleet_leader_t *leader, uint64_t token) {
  bg_env_t *e = leader->data;
  e->elected++;
}

static void bg_on_demoted(fleet_leader_t *leader, int status) {}

/* A campaign that cannot reach the election's keys: each failed attempt
 * reaches the error callback, and the campaign goes on: once the rights
 * come back, the candidate is elected without being told to again. */
TEST_IMPL(background_leader_campaign_error) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_leader_options_t o;
  fleet_leader_t leader;
  bg_env_t e;

  bg_init(&e, r);
  fleet_test_redis_ok(r, "ACL SETUSER bg resetkeys ~other:*");
  fleet_leader_options_init(&o);
  o.retry_max_ms = 50;
  o.elected_cb = bg_on_elected;
  o.demoted_cb = bg_on_demoted;
  o.error_cb = bg_on_error;
  ASSERT_OK(fleet_leader_init(&e.client, &leader, "bg", "me", 1000, &o));
  leader.data = &e;
  ASSERT_OK(fleet_leader_campaign(&leader));
  ASSERT(fleet_test_wait_count(&e.loop, &e.errors, 3,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_ERR(FLEET_ENOPERM, e.last_status);
  ASSERT_NOT_NULL(strstr(e.last_detail, "NOPERM"));
  ASSERT_EQ(0, e.elected);

  fleet_test_redis_ok(r, "ACL SETUSER bg resetkeys ~*");
  ASSERT(fleet_test_wait_count(&e.loop, &e.elected, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT(fleet_leader_is_leader(&leader));

  ASSERT_OK(fleet_leader_close(&leader, bg_on_closed));
  bg_finish(&e);
  fleet_test_redis_free(r);
  return 0;
}
