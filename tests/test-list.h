/* test-list.h -- every test of fleet-tests, declared once and listed once
 * with its timeout. Included by runner.c only.
 *
 * To add a test written with TEST_IMPL(name): add TEST_DECLARE(name) to the
 * declarations and TEST_ENTRY(name) (or TEST_ENTRY_TIMEOUT(name, seconds)) to
 * the list, both under the heading of its file. For CONFORMANCE_IMPL(name),
 * use CONFORMANCE_DECLARE(name) and CONFORMANCE_ENTRY(name) (or
 * CONFORMANCE_ENTRY_TIMEOUT): they stand for the two tests name_memory and
 * name_redis. */
#ifndef FLEET_TEST_LIST_H
#define FLEET_TEST_LIST_H

/* The timeout of a test listed without one, in seconds. */
#define FLEET_TEST_DEFAULT_TIMEOUT 30

typedef struct {
  const char *name;
  int (*main)(void);
  unsigned timeout; /* seconds */
} fleet_test_entry_t;

#define TEST_DECLARE(name) int run_test_##name(void);
#define CONFORMANCE_DECLARE(name)                                              \
  TEST_DECLARE(name##_memory)                                                  \
  TEST_DECLARE(name##_redis)

/* clang-format off */
#define TEST_LIST_START static const fleet_test_entry_t fleet_test_list[] = {
#define TEST_LIST_END };
/* clang-format on */

#define TEST_ENTRY_TIMEOUT(name, seconds) {#name, run_test_##name, (seconds)},
#define TEST_ENTRY(name) TEST_ENTRY_TIMEOUT(name, FLEET_TEST_DEFAULT_TIMEOUT)
#define CONFORMANCE_ENTRY_TIMEOUT(name, seconds)                               \
  TEST_ENTRY_TIMEOUT(name##_memory, seconds)                                   \
  TEST_ENTRY_TIMEOUT(name##_redis, seconds)
#define CONFORMANCE_ENTRY(name)                                                \
  CONFORMANCE_ENTRY_TIMEOUT(name, FLEET_TEST_DEFAULT_TIMEOUT)

/* clang-format off */

/* test_harness.c */
TEST_DECLARE(harness_loop_close_ok)
TEST_DECLARE(harness_loop_close_leftover)
TEST_DECLARE(harness_assert_messages)
TEST_DECLARE(harness_skip)
CONFORMANCE_DECLARE(harness_backend)

/* test_backend.c */
TEST_DECLARE(backend_ops_complete)
CONFORMANCE_DECLARE(backend_pubsub)
TEST_DECLARE(backend_memory_peers)

/* test_client.c */
CONFORMANCE_DECLARE(client_ping_time)
CONFORMANCE_DECLARE(client_close_cancels_pending)
CONFORMANCE_DECLARE(client_close_while_connecting)
CONFORMANCE_DECLARE(client_close_inside_callback)
CONFORMANCE_DECLARE(client_pipeline_10000)
CONFORMANCE_DECLARE(client_bad_input)
CONFORMANCE_DECLARE(client_two_clients)

/* test_fixture.c */
TEST_DECLARE(fixture_redis_basic)
TEST_DECLARE(fixture_redis_restart_aof)
TEST_DECLARE(fixture_redis_auth)
TEST_DECLARE(fixture_redis_pause)
TEST_DECLARE(fixture_redis_two_servers)
TEST_DECLARE(fixture_redis_port_taken)
TEST_DECLARE(fixture_redis_not_found)

/* test_redis.c */
TEST_DECLARE(redis_refused)
TEST_DECLARE(redis_unavailable_command)
TEST_DECLARE(redis_command_timeout)
TEST_DECLARE(redis_inflight_connlost)
TEST_DECLARE(redis_reconnect_after_restart)
TEST_DECLARE(redis_noscript_recovery)
TEST_DECLARE(redis_auth_password)
TEST_DECLARE(redis_auth_acl_user)
TEST_DECLARE(redis_unix_and_hostname)

/* test_unit.c */
TEST_DECLARE(unit_version)
TEST_DECLARE(unit_errors_map)
TEST_DECLARE(unit_errors_unknown)
TEST_DECLARE(unit_url_parse_good)
TEST_DECLARE(unit_url_parse_bad)
TEST_DECLARE(unit_url_free_zeroed)
TEST_DECLARE(unit_backoff_bounds)
TEST_DECLARE(unit_backoff_growth)
TEST_DECLARE(unit_backoff_jitter_spread)
TEST_DECLARE(unit_backoff_no_overflow)
TEST_DECLARE(unit_rng_seeds)
TEST_DECLARE(unit_rng_bits)
TEST_DECLARE(unit_alloc_dup)
TEST_DECLARE(unit_client_state_name)
TEST_DECLARE(unit_op_name)
TEST_DECLARE(unit_reply_error_code)
TEST_DECLARE(unit_keys)

TEST_LIST_START
  /* test_harness.c */
  TEST_ENTRY(harness_loop_close_ok)
  TEST_ENTRY(harness_loop_close_leftover)
  TEST_ENTRY(harness_assert_messages)
  TEST_ENTRY(harness_skip)
  CONFORMANCE_ENTRY(harness_backend)

  /* test_backend.c */
  TEST_ENTRY(backend_ops_complete)
  CONFORMANCE_ENTRY(backend_pubsub)
  TEST_ENTRY(backend_memory_peers)

  /* test_client.c */
  CONFORMANCE_ENTRY(client_ping_time)
  CONFORMANCE_ENTRY(client_close_cancels_pending)
  CONFORMANCE_ENTRY(client_close_while_connecting)
  CONFORMANCE_ENTRY(client_close_inside_callback)
  CONFORMANCE_ENTRY(client_pipeline_10000)
  CONFORMANCE_ENTRY(client_bad_input)
  CONFORMANCE_ENTRY(client_two_clients)

  /* test_fixture.c */
  TEST_ENTRY(fixture_redis_basic)
  TEST_ENTRY_TIMEOUT(fixture_redis_restart_aof, 60)
  TEST_ENTRY(fixture_redis_auth)
  TEST_ENTRY(fixture_redis_pause)
  TEST_ENTRY(fixture_redis_two_servers)
  TEST_ENTRY(fixture_redis_port_taken)
  TEST_ENTRY(fixture_redis_not_found)

  /* test_redis.c */
  TEST_ENTRY(redis_refused)
  TEST_ENTRY(redis_unavailable_command)
  TEST_ENTRY(redis_command_timeout)
  TEST_ENTRY(redis_inflight_connlost)
  TEST_ENTRY(redis_reconnect_after_restart)
  TEST_ENTRY(redis_noscript_recovery)
  TEST_ENTRY(redis_auth_password)
  TEST_ENTRY(redis_auth_acl_user)
  TEST_ENTRY(redis_unix_and_hostname)

  /* test_unit.c */
  TEST_ENTRY(unit_version)
  TEST_ENTRY(unit_errors_map)
  TEST_ENTRY(unit_errors_unknown)
  TEST_ENTRY(unit_url_parse_good)
  TEST_ENTRY(unit_url_parse_bad)
  TEST_ENTRY(unit_url_free_zeroed)
  TEST_ENTRY(unit_backoff_bounds)
  TEST_ENTRY(unit_backoff_growth)
  TEST_ENTRY(unit_backoff_jitter_spread)
  TEST_ENTRY(unit_backoff_no_overflow)
  TEST_ENTRY(unit_rng_seeds)
  TEST_ENTRY(unit_rng_bits)
  TEST_ENTRY(unit_alloc_dup)
  TEST_ENTRY(unit_client_state_name)
  TEST_ENTRY(unit_op_name)
  TEST_ENTRY(unit_reply_error_code)
  TEST_ENTRY(unit_keys)
TEST_LIST_END

/* clang-format on */

#endif /* FLEET_TEST_LIST_H */
