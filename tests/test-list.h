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

/* test_cluster*.c and the cluster variants (test-list-cluster.h) */
#include "test-list-cluster.h"
FLEET_CLUSTER_CONFORMANCE(FLEET_CLUSTER_DECLARE_C)
FLEET_CLUSTER_TESTS(FLEET_CLUSTER_DECLARE_T)

/* test_acl.c and the least-privilege variants (test-list-acl.h) */
#include "test-list-acl.h"
FLEET_ACL_CONFORMANCE(FLEET_ACL_DECLARE_C)
FLEET_ACL_CLUSTER_CONFORMANCE(FLEET_ACL_DECLARE_CC)
FLEET_ACL_TESTS(FLEET_ACL_DECLARE_T)

/* test_errors.c */
TEST_DECLARE(errors_noperm_detail)
TEST_DECLARE(errors_noperm_script)
TEST_DECLARE(errors_oom)
TEST_DECLARE(errors_readonly)
TEST_DECLARE(errors_script_busy)
TEST_DECLARE(errors_refused_detail)
TEST_DECLARE(errors_fake_close)
TEST_DECLARE(errors_fake_garbage)
TEST_DECLARE(errors_fake_bulk)
TEST_DECLARE(errors_fake_array)

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

/* test_close.c */
CONFORMANCE_DECLARE(close_client_busy)
CONFORMANCE_DECLARE(close_inside_callback)
CONFORMANCE_DECLARE(close_walk_all)
TEST_DECLARE(close_bad_input)

/* test_background.c */
TEST_DECLARE(background_lock_renewal_error)
TEST_DECLARE(background_leader_campaign_error)

/* test_client.c */
CONFORMANCE_DECLARE(client_ping_time)
CONFORMANCE_DECLARE(client_close_cancels_pending)
CONFORMANCE_DECLARE(client_close_while_connecting)
CONFORMANCE_DECLARE(client_close_inside_callback)
CONFORMANCE_DECLARE(client_pipeline_10000)
CONFORMANCE_DECLARE(client_bad_input)
CONFORMANCE_DECLARE(client_two_clients)

/* test_demo.c */
TEST_DECLARE(demo_errors)
TEST_DECLARE(demo_run_memory)
TEST_DECLARE(demo_worker_redis)
TEST_DECLARE(demo_unique_mp)
TEST_DECLARE(demo_ident_redis)
TEST_DECLARE(demo_ready_lines_redis)
TEST_DECLARE(demo_pool_requeue_redis)
TEST_DECLARE(demo_flow_mp_redis)

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
TEST_DECLARE(redis_fail_fast)
TEST_DECLARE(redis_command_timeout)
TEST_DECLARE(redis_inflight_connlost)
TEST_DECLARE(redis_reconnect_after_restart)
TEST_DECLARE(redis_noscript_recovery)
TEST_DECLARE(redis_auth_password)
TEST_DECLARE(redis_auth_acl_user)
TEST_DECLARE(redis_unix_and_hostname)
TEST_DECLARE(redis_script_shas)
TEST_DECLARE(redis_functions)
TEST_DECLARE(redis_reader_arena)
TEST_DECLARE(redis_large_writes_in_order)

/* test_unit.c */
TEST_DECLARE(unit_version)
TEST_DECLARE(unit_errors_map)
TEST_DECLARE(unit_errors_unknown)
TEST_DECLARE(unit_url_parse_good)
TEST_DECLARE(unit_url_parse_bad)
TEST_DECLARE(unit_url_free_zeroed)
TEST_DECLARE(unit_url_parse_topologies)
TEST_DECLARE(unit_url_errors_explain)
TEST_DECLARE(unit_backoff_bounds)
TEST_DECLARE(unit_backoff_growth)
TEST_DECLARE(unit_backoff_jitter_spread)
TEST_DECLARE(unit_backoff_no_overflow)
TEST_DECLARE(unit_rng_seeds)
TEST_DECLARE(unit_rng_bits)
TEST_DECLARE(unit_alloc_dup)
TEST_DECLARE(unit_client_state_name)
TEST_DECLARE(unit_op_name)
TEST_DECLARE(unit_op_fenced)
TEST_DECLARE(unit_reply_error_code)
TEST_DECLARE(unit_status_transient)
TEST_DECLARE(unit_backend_detail)
TEST_DECLARE(unit_keys)

/* test_queue.c */
CONFORMANCE_DECLARE(queue_enqueue_get)
CONFORMANCE_DECLARE(queue_bad_input)
CONFORMANCE_DECLARE(queue_priority_fifo)
CONFORMANCE_DECLARE(queue_delayed)
CONFORMANCE_DECLARE(queue_unique)
CONFORMANCE_DECLARE(queue_unique_until_done)
CONFORMANCE_DECLARE(queue_cancel_list_purge)
CONFORMANCE_DECLARE(queue_retention)
CONFORMANCE_DECLARE(queue_close_cancels)
CONFORMANCE_DECLARE(queue_foreign_data)
CONFORMANCE_DECLARE(queue_poison)
CONFORMANCE_DECLARE(queue_unique_poison)
CONFORMANCE_DECLARE(queue_poison_flow)
CONFORMANCE_DECLARE(queue_poison_history)
CONFORMANCE_DECLARE(worker_poison)
CONFORMANCE_DECLARE(worker_poison_group)
TEST_DECLARE(queue_redis_enqueue_phase)
/* test_queue_keep.c */
CONFORMANCE_DECLARE(queue_keep_default)
/* test_queue_history.c */
CONFORMANCE_DECLARE(queue_history)
/* test_queue_deps.c */
CONFORMANCE_DECLARE(queue_deps_run_after_children)
CONFORMANCE_DECLARE(queue_deps_child_dies)
CONFORMANCE_DECLARE(queue_deps_refused)
CONFORMANCE_DECLARE(queue_deps_listed)
CONFORMANCE_DECLARE(queue_deps_slots)
CONFORMANCE_DECLARE(queue_deps_worker)
/* test_queue_life.c */
CONFORMANCE_DECLARE(queue_result)
CONFORMANCE_DECLARE(queue_result_kept)
CONFORMANCE_DECLARE(queue_result_expire)
CONFORMANCE_DECLARE(queue_result_given_id)
TEST_DECLARE(queue_redis_result_given_cost)
CONFORMANCE_DECLARE(queue_progress)
CONFORMANCE_DECLARE(queue_events)
CONFORMANCE_DECLARE(worker_progress_result)
/* test_queue_headers.c */
CONFORMANCE_DECLARE(queue_headers)
CONFORMANCE_DECLARE(worker_hooks)
TEST_DECLARE(cli_queue_headers)
TEST_DECLARE(example_trace)
TEST_DECLARE(queue_redis_headers_cost)
/* test_queue_stop.c */
CONFORMANCE_DECLARE(queue_cancel_running)
CONFORMANCE_DECLARE(queue_cancel_grace)
CONFORMANCE_DECLARE(queue_timeout)
CONFORMANCE_DECLARE(worker_cancel_timeout)
/* test_queue_perf.c */
TEST_DECLARE(queue_redis_claim_fast_paths)
TEST_DECLARE(queue_redis_record_chunks)

/* test_queue_claims.c */
CONFORMANCE_DECLARE(queue_claim_tokens)
CONFORMANCE_DECLARE(queue_complete_repeat)
CONFORMANCE_DECLARE(queue_fail_backoff)
CONFORMANCE_DECLARE(queue_fail_jitter)
CONFORMANCE_DECLARE(queue_recover)
CONFORMANCE_DECLARE(queue_recover_mixed)
CONFORMANCE_DECLARE(queue_token_after_recover)

/* test_queue_flow.c */
CONFORMANCE_DECLARE(queue_flow_rate)
CONFORMANCE_DECLARE(queue_flow_concurrency)
CONFORMANCE_DECLARE(queue_flow_groups)
CONFORMANCE_DECLARE(queue_flow_group_lifecycle)
CONFORMANCE_DECLARE(queue_flow_group_limits)
CONFORMANCE_DECLARE(queue_flow_group_chunks)
CONFORMANCE_DECLARE(queue_flow_groups_drain)
CONFORMANCE_DECLARE(queue_flow_hold)
CONFORMANCE_DECLARE(queue_flow_rate_limit_job)
CONFORMANCE_DECLARE(queue_flow_worker)
CONFORMANCE_DECLARE(queue_flow_clear_wakes)
CONFORMANCE_DECLARE(queue_flow_group_heartbeat)
CONFORMANCE_DECLARE(queue_flow_bad_input)

/* test_queue_groups.c */
CONFORMANCE_DECLARE(queue_group_states)
/* test_worker_share.c */
CONFORMANCE_DECLARE(worker_share_weighted)
CONFORMANCE_DECLARE(worker_share_strict)
CONFORMANCE_DECLARE(worker_share_bad_input)

/* test_worker.c */
CONFORMANCE_DECLARE(worker_basic)
CONFORMANCE_DECLARE(worker_job_group)
CONFORMANCE_DECLARE(worker_wakeup)
CONFORMANCE_DECLARE(worker_delayed_on_time)
CONFORMANCE_DECLARE(worker_fail_retry)
CONFORMANCE_DECLARE(worker_heartbeat)
CONFORMANCE_DECLARE(worker_lost_stale)
CONFORMANCE_DECLARE(worker_stop_graceful)
CONFORMANCE_DECLARE(worker_close_in_handler)
CONFORMANCE_DECLARE(worker_bad_input)
CONFORMANCE_DECLARE(worker_delivery)
CONFORMANCE_DECLARE(worker_delivery_room)
CONFORMANCE_DECLARE(worker_delivery_stopping)
CONFORMANCE_DECLARE(worker_delivery_lost)
CONFORMANCE_DECLARE(worker_delivery_unheard)
TEST_DECLARE(worker_delivery_message)
TEST_DECLARE(worker_delivery_no_error_replies)
TEST_DECLARE(worker_redis_outage)
TEST_DECLARE(worker_redis_lease_timeout)

/* test_queue_close.c */
CONFORMANCE_DECLARE(queue_client_busy)
CONFORMANCE_DECLARE(queue_close_orders)
TEST_DECLARE(worker_error_cb_acl)
TEST_DECLARE(docs_queue_recipes)

/* test_queue_life_mp.c */
TEST_DECLARE(queue_life_mp_events)
/* test_queue_mp.c */
TEST_DECLARE(queue_mp_race)
TEST_DECLARE(queue_mp_kill)
TEST_DECLARE(queue_mp_restart)
TEST_DECLARE(queue_mp_delivery_stopped)
/* test_queue_stop_mp.c */
TEST_DECLARE(queue_stop_mp_cancel)
/* test_queue_flow_mp.c */
TEST_DECLARE(queue_flow_mp_rate)
TEST_DECLARE(queue_flow_mp_concurrency)
TEST_DECLARE(queue_flow_mp_fair)

/* test_diff.c */
TEST_DECLARE(diff_lock_ops)
TEST_DECLARE(diff_queue_ops)
TEST_DECLARE(diff_store_ops)
TEST_DECLARE(diff_mget_zpopmin)
TEST_DECLARE(diff_pool_ops)
TEST_DECLARE(diff_list_trim)

/* test_store*.c */
CONFORMANCE_DECLARE(store_records)
CONFORMANCE_DECLARE(store_large_values)
CONFORMANCE_DECLARE(store_bad_input)
CONFORMANCE_DECLARE(store_close)
CONFORMANCE_DECLARE(store_close_client_busy)
CONFORMANCE_DECLARE(store_close_pending)
TEST_DECLARE(store_close_in_flight)
CONFORMANCE_DECLARE(store_close_mid_clear)
CONFORMANCE_DECLARE(store_ping)
CONFORMANCE_DECLARE(store_two_clients)
CONFORMANCE_DECLARE(store_ttl_expiry)
CONFORMANCE_DECLARE(store_ttl_refresh_put)
CONFORMANCE_DECLARE(store_ttl_refresh_append)
CONFORMANCE_DECLARE(store_ttl_touch)
CONFORMANCE_DECLARE(store_events)
CONFORMANCE_DECLARE(store_events_cap)
CONFORMANCE_DECLARE(store_index_consistency)
CONFORMANCE_DECLARE(store_index_expiry)
CONFORMANCE_DECLARE(store_list_pages)
CONFORMANCE_DECLARE(store_list_refreshed)
CONFORMANCE_DECLARE(store_clear_prefix)
CONFORMANCE_DECLARE(store_clear_many)
CONFORMANCE_DECLARE(store_scan_glob)
TEST_DECLARE(store_scan_pattern)
CONFORMANCE_DECLARE(store_wrong_type)
TEST_DECLARE(store_redis_garbage)
TEST_DECLARE(store_multiprocess)

/* test_cron_expr.c */
TEST_DECLARE(cron_parse_valid)
TEST_DECLARE(cron_parse_invalid)
TEST_DECLARE(cron_next_vectors)
TEST_DECLARE(cron_next_end)
TEST_DECLARE(cron_next_brute)
TEST_DECLARE(cron_every)
TEST_DECLARE(cron_iso)
TEST_DECLARE(cron_demo_next)

/* test_cron_tz.c */
TEST_DECLARE(cron_dst_new_york)
TEST_DECLARE(cron_dst_london)
TEST_DECLARE(cron_dst_lord_howe)
TEST_DECLARE(cron_dst_other)
TEST_DECLARE(cron_tz_posix)
TEST_DECLARE(cron_tz_malformed)
TEST_DECLARE(cron_tz_v1)
TEST_DECLARE(cron_oracle)

/* test_pool.c */
TEST_DECLARE(pool_jump_hash)
CONFORMANCE_DECLARE(pool_bad_input)
CONFORMANCE_DECLARE(pool_dispatch_basic)
CONFORMANCE_DECLARE(pool_key_types)
CONFORMANCE_DECLARE(pool_dispatch_race)
CONFORMANCE_DECLARE(pool_dispatch_batch)
CONFORMANCE_DECLARE(pool_dispatch_timeout)
CONFORMANCE_DECLARE(pool_rebalance)
CONFORMANCE_DECLARE(pool_move_before_start)
CONFORMANCE_DECLARE(pool_failover)
CONFORMANCE_DECLARE(pool_shutdown)
CONFORMANCE_DECLARE(pool_requeue)
CONFORMANCE_DECLARE(pool_worker_jobs)
CONFORMANCE_DECLARE(pool_wake_events)
CONFORMANCE_DECLARE(pool_close_in_callback)
CONFORMANCE_DECLARE(pool_schedule)
CONFORMANCE_DECLARE(pool_schedule_first)
CONFORMANCE_DECLARE(pool_schedule_error)
CONFORMANCE_DECLARE(pool_rejoin_after_shutdown)
CONFORMANCE_DECLARE(pool_worker_forget)
CONFORMANCE_DECLARE(pool_worker_remove)
CONFORMANCE_DECLARE(pool_ident_conflict)
CONFORMANCE_DECLARE(pool_ident_taken)
CONFORMANCE_DECLARE(pool_ident_generated)
TEST_DECLARE(pool_flushdb_redis)

/* test_inspect.c */
CONFORMANCE_DECLARE(pool_query)
CONFORMANCE_DECLARE(client_scan_names)

/* test_registry.c */
CONFORMANCE_DECLARE(workers_registry)
TEST_DECLARE(workers_registry_denied)

/* test_pool_ticker.c */
CONFORMANCE_DECLARE(pool_ticker_basic)
CONFORMANCE_DECLARE(pool_ticker_lease)
TEST_DECLARE(pool_ticker_errors_redis)

/* test_warmpool.c */
CONFORMANCE_DECLARE(warmpool_bad_input)
CONFORMANCE_DECLARE(warmpool_acquire_release)
CONFORMANCE_DECLARE(warmpool_release_batched)
CONFORMANCE_DECLARE(warmpool_fingerprint)
CONFORMANCE_DECLARE(warmpool_resize_drain)
CONFORMANCE_DECLARE(warmpool_idle_ttl)
CONFORMANCE_DECLARE(warmpool_stale_put)
CONFORMANCE_DECLARE(warmpool_close_handover)
CONFORMANCE_DECLARE(warmpool_borrow_lease)
CONFORMANCE_DECLARE(warmpool_direct_create)
CONFORMANCE_DECLARE(warmpool_failures)
CONFORMANCE_DECLARE(warmpool_check)
CONFORMANCE_DECLARE(warmpool_wake)
CONFORMANCE_DECLARE(warmpool_states)
CONFORMANCE_DECLARE(warmpool_destroy_retry)
CONFORMANCE_DECLARE(warmpool_ident_conflict)
CONFORMANCE_DECLARE(warmpool_ident_generated)

/* test_warmpool_mp.c */
TEST_DECLARE(warmpool_mp_failover)
TEST_DECLARE(warmpool_mp_acquire)
TEST_DECLARE(warmpool_mp_borrower_killed)
TEST_DECLARE(warmpool_mp_redis_down)
TEST_DECLARE(warmpool_mp_idle_ttl)

/* test_ident_mp.c */
TEST_DECLARE(pool_mp_ident_crash)
TEST_DECLARE(warmpool_mp_ident_crash)

/* test_pool_mp.c */
TEST_DECLARE(pool_mp_chaos)
TEST_DECLARE(pool_mp_ticker)
TEST_DECLARE(pool_mp_flushdb)
TEST_DECLARE(pool_mp_schedule)
TEST_DECLARE(pool_mp_requeue)

/* test_lock.c */
CONFORMANCE_DECLARE(lock_bad_input)
CONFORMANCE_DECLARE(lock_acquire_release)
CONFORMANCE_DECLARE(lock_query)
/* test_fence.c */
CONFORMANCE_DECLARE(fence_epochs)
CONFORMANCE_DECLARE(lock_wait_wakeup)
CONFORMANCE_DECLARE(lock_wait_timeout)
CONFORMANCE_DECLARE(lock_expiry_takeover)
CONFORMANCE_DECLARE(lock_manual_renew)
CONFORMANCE_DECLARE(lock_auto_renew)
CONFORMANCE_DECLARE(lock_renew_waited)
CONFORMANCE_DECLARE(lock_batch)
CONFORMANCE_DECLARE(lock_batch_once)
CONFORMANCE_DECLARE(lock_close)
CONFORMANCE_DECLARE(lock_callback_chain)
/* test_lock_with.c */
CONFORMANCE_DECLARE(with_lock_run)
CONFORMANCE_DECLARE(with_lock_lost)

/* test_lock_redis.c */
TEST_DECLARE(lock_foreign_data_redis)
TEST_DECLARE(lock_batch_results_redis)
TEST_DECLARE(lock_renew_refused_redis)
TEST_DECLARE(lock_redis_restart)

/* test_lock_mp.c */
TEST_DECLARE(lock_mp_contention)
TEST_DECLARE(lock_mp_sigstop)

/* test_leader.c */
CONFORMANCE_DECLARE(leader_bad_input)
CONFORMANCE_DECLARE(leader_elect_resign)
CONFORMANCE_DECLARE(leader_callbacks)
TEST_DECLARE(leader_demoted_redis)
TEST_DECLARE(leader_mp_failover)

/* test_cron.c */
CONFORMANCE_DECLARE(cron_bad_input)
CONFORMANCE_DECLARE(cron_registry)
CONFORMANCE_DECLARE(cron_fire_once)
CONFORMANCE_DECLARE(cron_bounds)
CONFORMANCE_DECLARE(cron_queue_target)
CONFORMANCE_DECLARE(cron_trigger)
CONFORMANCE_DECLARE(cron_pool_target)
CONFORMANCE_DECLARE(cron_follow_change)
CONFORMANCE_DECLARE(cron_catch_up)
CONFORMANCE_DECLARE(cron_log_dedup)
CONFORMANCE_DECLARE(cron_close_in_fire)
CONFORMANCE_DECLARE(cron_foreign_data)
CONFORMANCE_DECLARE(cron_claim_batched)
CONFORMANCE_DECLARE(cron_claim_old_layout)
CONFORMANCE_DECLARE(cron_claim_window)
CONFORMANCE_DECLARE(cron_claim_ahead_bound)
CONFORMANCE_DECLARE(cron_claim_ahead)

/* test_cron_mp.c */
TEST_DECLARE(cron_mp_once)
TEST_DECLARE(cron_mp_aof_restart)
TEST_DECLARE(cron_mp_burst)
TEST_DECLARE(cron_mp_catch_up)
TEST_DECLARE(cron_mp_limit)
TEST_DECLARE(cron_mp_pool)
TEST_DECLARE(cron_mp_demo_input)

/* test_tls.c */
TEST_DECLARE(tls_connect_and_ops)
TEST_DECLARE(tls_verification_refusals)
TEST_DECLARE(tls_client_certificate)
TEST_DECLARE(tls_protocol_mismatch)

/* test_sentinel.c */
TEST_DECLARE(sentinel_failover_queue)
TEST_DECLARE(sentinel_failover_durable)
TEST_DECLARE(sentinel_fence_failover_mp)
TEST_DECLARE(sentinel_unknown_master)
TEST_DECLARE(sentinel_tls)

/* test_durable.c */
TEST_DECLARE(durable_wait_replicas)
TEST_DECLARE(durable_lock_grant)
TEST_DECLARE(durable_memory_refused)
TEST_DECLARE(durable_url_options)
TEST_DECLARE(durable_url_memory_refused)
/* test_byo.c */
TEST_DECLARE(byo_queue_worker)
TEST_DECLARE(byo_lock)
TEST_DECLARE(byo_context_freed)
TEST_DECLARE(byo_close_pending)
TEST_DECLARE(byo_init_refused)
TEST_DECLARE(byo_sub_killed)

/* test_cli_queue_admin.c */
CONFORMANCE_DECLARE(queue_admin_jobs)
CONFORMANCE_DECLARE(queue_admin_retry)
CONFORMANCE_DECLARE(queue_admin_pause)
CONFORMANCE_DECLARE(queue_admin_pause_worker)

/* test_queue_verbs.c */
CONFORMANCE_DECLARE(queue_verbs_delete)
CONFORMANCE_DECLARE(queue_verbs_run)
CONFORMANCE_DECLARE(queue_verbs_kill)
CONFORMANCE_DECLARE(queue_verbs_remove)
CONFORMANCE_DECLARE(queue_verbs_purge_rttl)
/* test_queue_errs.c */
CONFORMANCE_DECLARE(queue_errs_history)
CONFORMANCE_DECLARE(queue_errs_paths)
CONFORMANCE_DECLARE(queue_errs_gone)
/* test_cli_queue_verbs.c */
TEST_DECLARE(cli_queue_verbs)
TEST_DECLARE(queue_verbs_mp)
/* test_queue_parts.c */
CONFORMANCE_DECLARE(queue_parts_record)
CONFORMANCE_DECLARE(queue_parts_place)
CONFORMANCE_DECLARE(queue_parts_jobs)
CONFORMANCE_DECLARE(queue_parts_verbs)
CONFORMANCE_DECLARE(queue_parts_remove)
CONFORMANCE_DECLARE(queue_parts_remove_one)
CONFORMANCE_DECLARE(queue_parts_list)
CONFORMANCE_DECLARE(queue_parts_worker)
CONFORMANCE_DECLARE(queue_parts_turns)
CONFORMANCE_DECLARE(queue_parts_history)

/* test_cli.c */
TEST_DECLARE(cli_queue)
/* test_cli_parts.c */
TEST_DECLARE(cli_queue_parts)
TEST_DECLARE(cli_queue_deps)
/* test_cli_life.c */
TEST_DECLARE(cli_queue_life)
TEST_DECLARE(cli_lock_leader)
TEST_DECLARE(cli_pool_store)
TEST_DECLARE(cli_watch)
TEST_DECLARE(cli_errors)
TEST_DECLARE(cli_cron_warmpool)
/* test_cli_admin.c */
TEST_DECLARE(cli_cron_admin)
TEST_DECLARE(cli_store_admin)
/* test_cli_flow.c */
TEST_DECLARE(cli_queue_flow)
/* test_cli_metrics.c */
TEST_DECLARE(cli_metrics)
TEST_DECLARE(dash_history_metrics)
/* test_cli_workers.c */
TEST_DECLARE(cli_worker_ls)
/* test_cli_ops.c */
TEST_DECLARE(cli_options_anywhere)
TEST_DECLARE(cli_fail_fast)
TEST_DECLARE(cli_unknown_queue)
TEST_DECLARE(cli_counts_times)
TEST_DECLARE(cli_colours)

/* test_dash.c */
TEST_DECLARE(dash_api)
TEST_DECLARE(dash_chromium)
TEST_DECLARE(dash_chromium_jobs)
TEST_DECLARE(dash_chromium_outage)
/* test_dash_parts.c */
TEST_DECLARE(dash_parts)
TEST_DECLARE(dash_chromium_parts)
/* test_dash_access.c */
TEST_DECLARE(dash_host)
TEST_DECLARE(dash_origin)
TEST_DECLARE(dash_read_only)
TEST_DECLARE(dash_token)
TEST_DECLARE(dash_listen_warning)
TEST_DECLARE(dash_chromium_access)

/* test_metrics.c */
TEST_DECLARE(metrics_units)
TEST_DECLARE(metrics_label_escape)
TEST_DECLARE(metrics_series_grouping)
CONFORMANCE_DECLARE(metrics_worker_counters)
CONFORMANCE_DECLARE(metrics_worker_recovered)
CONFORMANCE_DECLARE(metrics_job_types_bounded)
CONFORMANCE_DECLARE(metrics_lock_counters)
CONFORMANCE_DECLARE(metrics_leader_counters)
CONFORMANCE_DECLARE(metrics_cron_counters)

/* test_log.c */
TEST_DECLARE(log_redact)
TEST_DECLARE(log_tls_verify_warning)
TEST_DECLARE(log_reconnect_redis)
CONFORMANCE_DECLARE(log_lost_lease)
CONFORMANCE_DECLARE(log_recovered_claim)
CONFORMANCE_DECLARE(log_background_error)

/* test_redact.c */
TEST_DECLARE(redact_userinfo)
TEST_DECLARE(redact_query)
TEST_DECLARE(redact_truncate)
TEST_DECLARE(redact_demo_bad_url)

/* test_tools_output.c */
TEST_DECLARE(tools_escape_text)
TEST_DECLARE(tools_url_from_env)
TEST_DECLARE(tools_cli_hostile_name)
TEST_DECLARE(tools_cli_one_line)
TEST_DECLARE(tools_demo_one_line)
TEST_DECLARE(tools_http_queue_one_line)
TEST_DECLARE(tools_cli_wait_replicas)

/* test_http_queue.c */
TEST_DECLARE(http_queue_bad_flags)
TEST_DECLARE(http_queue_oversize)
TEST_DECLARE(http_queue_type)
TEST_DECLARE(http_queue_cross_origin)
TEST_DECLARE(http_queue_metrics)
TEST_DECLARE(http_queue_idle_timeout)
TEST_DECLARE(http_queue_sigint)
TEST_DECLARE(http_queue_backend_error_once)

TEST_LIST_START
  /* test_errors.c */
  TEST_ENTRY(errors_noperm_detail)
  TEST_ENTRY(errors_noperm_script)
  TEST_ENTRY(errors_oom)
  TEST_ENTRY(errors_readonly)
  TEST_ENTRY(errors_script_busy)
  TEST_ENTRY(errors_refused_detail)
  TEST_ENTRY(errors_fake_close)
  TEST_ENTRY(errors_fake_garbage)
  TEST_ENTRY(errors_fake_bulk)
  TEST_ENTRY(errors_fake_array)

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

  /* test_close.c */
  CONFORMANCE_ENTRY(close_client_busy)
  CONFORMANCE_ENTRY(close_inside_callback)
  CONFORMANCE_ENTRY(close_walk_all)
  TEST_ENTRY(close_bad_input)

  /* test_background.c */
  TEST_ENTRY(background_lock_renewal_error)
  TEST_ENTRY(background_leader_campaign_error)

  /* test_client.c */
  CONFORMANCE_ENTRY(client_ping_time)
  CONFORMANCE_ENTRY(client_close_cancels_pending)
  CONFORMANCE_ENTRY(client_close_while_connecting)
  CONFORMANCE_ENTRY(client_close_inside_callback)
  CONFORMANCE_ENTRY(client_pipeline_10000)
  CONFORMANCE_ENTRY(client_bad_input)
  CONFORMANCE_ENTRY(client_two_clients)

  /* test_demo.c */
  TEST_ENTRY(demo_errors)
  TEST_ENTRY(demo_run_memory)
  TEST_ENTRY_TIMEOUT(demo_worker_redis, 60)
  TEST_ENTRY_TIMEOUT(demo_unique_mp, 60)
  TEST_ENTRY_TIMEOUT(demo_ident_redis, 60)
  TEST_ENTRY_TIMEOUT(demo_ready_lines_redis, 60)
  TEST_ENTRY_TIMEOUT(demo_pool_requeue_redis, 60)
  TEST_ENTRY_TIMEOUT(demo_flow_mp_redis, 60)

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
  TEST_ENTRY(redis_fail_fast)
  TEST_ENTRY(redis_command_timeout)
  TEST_ENTRY(redis_inflight_connlost)
  TEST_ENTRY(redis_reconnect_after_restart)
  TEST_ENTRY(redis_noscript_recovery)
  TEST_ENTRY(redis_auth_password)
  TEST_ENTRY(redis_auth_acl_user)
  TEST_ENTRY(redis_unix_and_hostname)
  TEST_ENTRY(redis_script_shas)
  TEST_ENTRY(redis_functions)
  TEST_ENTRY(redis_reader_arena)
  TEST_ENTRY(redis_large_writes_in_order)

  /* test_unit.c */
  TEST_ENTRY(unit_version)
  TEST_ENTRY(unit_errors_map)
  TEST_ENTRY(unit_errors_unknown)
  TEST_ENTRY(unit_url_parse_good)
  TEST_ENTRY(unit_url_parse_bad)
  TEST_ENTRY(unit_url_free_zeroed)
  TEST_ENTRY(unit_url_parse_topologies)
  TEST_ENTRY(unit_url_errors_explain)
  TEST_ENTRY(unit_backoff_bounds)
  TEST_ENTRY(unit_backoff_growth)
  TEST_ENTRY(unit_backoff_jitter_spread)
  TEST_ENTRY(unit_backoff_no_overflow)
  TEST_ENTRY(unit_rng_seeds)
  TEST_ENTRY(unit_rng_bits)
  TEST_ENTRY(unit_alloc_dup)
  TEST_ENTRY(unit_client_state_name)
  TEST_ENTRY(unit_op_name)
  TEST_ENTRY(unit_op_fenced)
  TEST_ENTRY(unit_reply_error_code)
  TEST_ENTRY(unit_status_transient)
  TEST_ENTRY(unit_backend_detail)
  TEST_ENTRY(unit_keys)

  /* test_queue.c */
  CONFORMANCE_ENTRY(queue_enqueue_get)
  CONFORMANCE_ENTRY(queue_bad_input)
  CONFORMANCE_ENTRY(queue_priority_fifo)
  CONFORMANCE_ENTRY(queue_delayed)
  CONFORMANCE_ENTRY(queue_unique)
  CONFORMANCE_ENTRY(queue_unique_until_done)
  CONFORMANCE_ENTRY(queue_cancel_list_purge)
  CONFORMANCE_ENTRY(queue_retention)
  CONFORMANCE_ENTRY(queue_close_cancels)
  CONFORMANCE_ENTRY(queue_foreign_data)
  CONFORMANCE_ENTRY(queue_poison)
  CONFORMANCE_ENTRY(queue_unique_poison)
  CONFORMANCE_ENTRY(queue_poison_flow)
  CONFORMANCE_ENTRY(queue_poison_history)
  CONFORMANCE_ENTRY(worker_poison)
  CONFORMANCE_ENTRY(worker_poison_group)
  TEST_ENTRY(queue_redis_enqueue_phase)
  CONFORMANCE_ENTRY(queue_keep_default)
  CONFORMANCE_ENTRY(queue_history)
  CONFORMANCE_ENTRY(queue_deps_run_after_children)
  CONFORMANCE_ENTRY(queue_deps_child_dies)
  CONFORMANCE_ENTRY(queue_deps_refused)
  CONFORMANCE_ENTRY(queue_deps_listed)
  CONFORMANCE_ENTRY(queue_deps_slots)
  CONFORMANCE_ENTRY(queue_deps_worker)
  CONFORMANCE_ENTRY(queue_result)
  CONFORMANCE_ENTRY(queue_result_kept)
  CONFORMANCE_ENTRY(queue_result_expire)
  CONFORMANCE_ENTRY(queue_result_given_id)
  TEST_ENTRY(queue_redis_result_given_cost)
  CONFORMANCE_ENTRY(queue_progress)
  CONFORMANCE_ENTRY(queue_events)
  CONFORMANCE_ENTRY(worker_progress_result)
  /* test_queue_headers.c */
  CONFORMANCE_ENTRY(queue_headers)
  CONFORMANCE_ENTRY(worker_hooks)
  TEST_ENTRY_TIMEOUT(cli_queue_headers, 60)
  TEST_ENTRY_TIMEOUT(example_trace, 60)
  TEST_ENTRY(queue_redis_headers_cost)
  /* test_queue_stop.c */
  CONFORMANCE_ENTRY(queue_cancel_running)
  CONFORMANCE_ENTRY(queue_cancel_grace)
  CONFORMANCE_ENTRY(queue_timeout)
  CONFORMANCE_ENTRY(worker_cancel_timeout)
  TEST_ENTRY(queue_redis_claim_fast_paths)
  TEST_ENTRY(queue_redis_record_chunks)

  /* test_queue_claims.c */
  CONFORMANCE_ENTRY(queue_claim_tokens)
  CONFORMANCE_ENTRY(queue_complete_repeat)
  CONFORMANCE_ENTRY(queue_fail_backoff)
  CONFORMANCE_ENTRY(queue_fail_jitter)
  CONFORMANCE_ENTRY(queue_recover)
  CONFORMANCE_ENTRY(queue_recover_mixed)
  CONFORMANCE_ENTRY(queue_token_after_recover)

  /* test_queue_flow.c */
  CONFORMANCE_ENTRY(queue_flow_rate)
  CONFORMANCE_ENTRY(queue_flow_concurrency)
  CONFORMANCE_ENTRY(queue_flow_groups)
  CONFORMANCE_ENTRY(queue_flow_group_lifecycle)
  CONFORMANCE_ENTRY(queue_flow_group_limits)
  CONFORMANCE_ENTRY(queue_flow_group_chunks)
  CONFORMANCE_ENTRY(queue_flow_groups_drain)
  CONFORMANCE_ENTRY(queue_flow_hold)
  CONFORMANCE_ENTRY(queue_flow_rate_limit_job)
  CONFORMANCE_ENTRY(queue_flow_worker)
  CONFORMANCE_ENTRY(queue_flow_clear_wakes)
  CONFORMANCE_ENTRY(queue_flow_group_heartbeat)
  CONFORMANCE_ENTRY(queue_flow_bad_input)

  /* test_worker.c */
  CONFORMANCE_ENTRY(queue_group_states)
  CONFORMANCE_ENTRY(worker_share_weighted)
  CONFORMANCE_ENTRY(worker_share_strict)
  CONFORMANCE_ENTRY(worker_share_bad_input)
  CONFORMANCE_ENTRY(worker_basic)
  CONFORMANCE_ENTRY(worker_job_group)
  CONFORMANCE_ENTRY(worker_wakeup)
  CONFORMANCE_ENTRY(worker_delayed_on_time)
  CONFORMANCE_ENTRY(worker_fail_retry)
  CONFORMANCE_ENTRY(worker_heartbeat)
  CONFORMANCE_ENTRY(worker_lost_stale)
  CONFORMANCE_ENTRY(worker_stop_graceful)
  CONFORMANCE_ENTRY(worker_close_in_handler)
  CONFORMANCE_ENTRY(worker_bad_input)
  /* test_worker_delivery.c */
  CONFORMANCE_ENTRY(worker_delivery)
  CONFORMANCE_ENTRY(worker_delivery_room)
  CONFORMANCE_ENTRY(worker_delivery_stopping)
  CONFORMANCE_ENTRY(worker_delivery_lost)
  CONFORMANCE_ENTRY(worker_delivery_unheard)
  TEST_ENTRY(worker_delivery_message)
  TEST_ENTRY(worker_delivery_no_error_replies)
  TEST_ENTRY(worker_redis_outage)
  TEST_ENTRY(worker_redis_lease_timeout)

  /* test_queue_close.c */
  CONFORMANCE_ENTRY(queue_client_busy)
  CONFORMANCE_ENTRY(queue_close_orders)
  TEST_ENTRY(worker_error_cb_acl)
  TEST_ENTRY_TIMEOUT(docs_queue_recipes, 120)

  /* test_queue_life_mp.c */
  TEST_ENTRY_TIMEOUT(queue_life_mp_events, 90)
  /* test_queue_mp.c */
  TEST_ENTRY_TIMEOUT(queue_mp_race, 90)
  TEST_ENTRY_TIMEOUT(queue_mp_kill, 60)
  TEST_ENTRY_TIMEOUT(queue_mp_restart, 60)
  TEST_ENTRY(queue_mp_delivery_stopped)
  /* test_queue_stop_mp.c */
  TEST_ENTRY_TIMEOUT(queue_stop_mp_cancel, 60)
  /* test_queue_flow_mp.c */
  TEST_ENTRY_TIMEOUT(queue_flow_mp_rate, 60)
  TEST_ENTRY_TIMEOUT(queue_flow_mp_concurrency, 60)
  TEST_ENTRY_TIMEOUT(queue_flow_mp_fair, 60)

  /* test_diff.c */
  TEST_ENTRY_TIMEOUT(diff_lock_ops, 120)
  TEST_ENTRY_TIMEOUT(diff_queue_ops, 120)
  TEST_ENTRY_TIMEOUT(diff_store_ops, 120)
  TEST_ENTRY_TIMEOUT(diff_mget_zpopmin, 120)
  TEST_ENTRY_TIMEOUT(diff_pool_ops, 120)
  TEST_ENTRY(diff_list_trim)

  /* test_store*.c */
  CONFORMANCE_ENTRY(store_records)
  CONFORMANCE_ENTRY(store_large_values)
  CONFORMANCE_ENTRY(store_bad_input)
  CONFORMANCE_ENTRY(store_close)
  CONFORMANCE_ENTRY(store_close_client_busy)
  CONFORMANCE_ENTRY(store_close_pending)
  TEST_ENTRY(store_close_in_flight)
  CONFORMANCE_ENTRY(store_close_mid_clear)
  CONFORMANCE_ENTRY(store_ping)
  CONFORMANCE_ENTRY(store_two_clients)
  CONFORMANCE_ENTRY(store_ttl_expiry)
  CONFORMANCE_ENTRY(store_ttl_refresh_put)
  CONFORMANCE_ENTRY(store_ttl_refresh_append)
  CONFORMANCE_ENTRY(store_ttl_touch)
  CONFORMANCE_ENTRY(store_events)
  CONFORMANCE_ENTRY(store_events_cap)
  CONFORMANCE_ENTRY(store_index_consistency)
  CONFORMANCE_ENTRY(store_index_expiry)
  CONFORMANCE_ENTRY(store_list_pages)
  CONFORMANCE_ENTRY(store_list_refreshed)
  CONFORMANCE_ENTRY(store_clear_prefix)
  CONFORMANCE_ENTRY(store_clear_many)
  CONFORMANCE_ENTRY(store_scan_glob)
  TEST_ENTRY(store_scan_pattern)
  CONFORMANCE_ENTRY(store_wrong_type)
  TEST_ENTRY(store_redis_garbage)
  TEST_ENTRY(store_multiprocess)
  /* test_pool.c */
  TEST_ENTRY(pool_jump_hash)
  CONFORMANCE_ENTRY(pool_bad_input)
  CONFORMANCE_ENTRY(pool_dispatch_basic)
  CONFORMANCE_ENTRY(pool_key_types)
  CONFORMANCE_ENTRY(pool_dispatch_race)
  CONFORMANCE_ENTRY(pool_dispatch_batch)
  CONFORMANCE_ENTRY(pool_dispatch_timeout)
  CONFORMANCE_ENTRY(pool_rebalance)
  CONFORMANCE_ENTRY(pool_move_before_start)
  CONFORMANCE_ENTRY(pool_failover)
  CONFORMANCE_ENTRY(pool_shutdown)
  CONFORMANCE_ENTRY(pool_requeue)
  CONFORMANCE_ENTRY(pool_worker_jobs)
  CONFORMANCE_ENTRY(pool_wake_events)
  CONFORMANCE_ENTRY(pool_close_in_callback)
  CONFORMANCE_ENTRY(pool_schedule)
  CONFORMANCE_ENTRY(pool_schedule_first)
  CONFORMANCE_ENTRY(pool_schedule_error)
  CONFORMANCE_ENTRY(pool_rejoin_after_shutdown)
  CONFORMANCE_ENTRY(pool_worker_forget)
  CONFORMANCE_ENTRY(pool_worker_remove)
  CONFORMANCE_ENTRY(pool_ident_conflict)
  CONFORMANCE_ENTRY(pool_ident_taken)
  CONFORMANCE_ENTRY(pool_ident_generated)
  TEST_ENTRY(pool_flushdb_redis)
  CONFORMANCE_ENTRY(pool_query)
  CONFORMANCE_ENTRY(client_scan_names)
  CONFORMANCE_ENTRY(workers_registry)
  TEST_ENTRY(workers_registry_denied)

  /* test_pool_ticker.c */
  CONFORMANCE_ENTRY(pool_ticker_basic)
  CONFORMANCE_ENTRY(pool_ticker_lease)
  TEST_ENTRY(pool_ticker_errors_redis)

  /* test_warmpool.c */
  CONFORMANCE_ENTRY(warmpool_bad_input)
  CONFORMANCE_ENTRY(warmpool_acquire_release)
  CONFORMANCE_ENTRY(warmpool_release_batched)
  CONFORMANCE_ENTRY(warmpool_fingerprint)
  CONFORMANCE_ENTRY(warmpool_resize_drain)
  CONFORMANCE_ENTRY(warmpool_idle_ttl)
  CONFORMANCE_ENTRY(warmpool_stale_put)
  CONFORMANCE_ENTRY(warmpool_close_handover)
  CONFORMANCE_ENTRY(warmpool_borrow_lease)
  CONFORMANCE_ENTRY(warmpool_direct_create)
  CONFORMANCE_ENTRY(warmpool_failures)
  CONFORMANCE_ENTRY(warmpool_check)
  CONFORMANCE_ENTRY(warmpool_wake)
  CONFORMANCE_ENTRY(warmpool_states)
  CONFORMANCE_ENTRY(warmpool_destroy_retry)
  CONFORMANCE_ENTRY(warmpool_ident_conflict)
  CONFORMANCE_ENTRY(warmpool_ident_generated)

  /* test_warmpool_mp.c */
  TEST_ENTRY_TIMEOUT(warmpool_mp_failover, 180)
  TEST_ENTRY_TIMEOUT(warmpool_mp_acquire, 120)
  TEST_ENTRY_TIMEOUT(warmpool_mp_borrower_killed, 60)
  TEST_ENTRY_TIMEOUT(warmpool_mp_redis_down, 60)
  TEST_ENTRY_TIMEOUT(warmpool_mp_idle_ttl, 60)

  /* test_ident_mp.c */
  TEST_ENTRY_TIMEOUT(pool_mp_ident_crash, 60)
  TEST_ENTRY_TIMEOUT(warmpool_mp_ident_crash, 60)

  /* test_pool_mp.c */
  TEST_ENTRY_TIMEOUT(pool_mp_chaos, 120)
  TEST_ENTRY_TIMEOUT(pool_mp_ticker, 60)
  TEST_ENTRY_TIMEOUT(pool_mp_flushdb, 60)
  TEST_ENTRY_TIMEOUT(pool_mp_schedule, 60)
  TEST_ENTRY_TIMEOUT(pool_mp_requeue, 60)

  /* test_lock.c */
  CONFORMANCE_ENTRY(lock_bad_input)
  CONFORMANCE_ENTRY(lock_acquire_release)
  CONFORMANCE_ENTRY(lock_query)
  /* test_fence.c */
  CONFORMANCE_ENTRY(fence_epochs)
  CONFORMANCE_ENTRY(lock_wait_wakeup)
  CONFORMANCE_ENTRY(lock_wait_timeout)
  CONFORMANCE_ENTRY(lock_expiry_takeover)
  CONFORMANCE_ENTRY(lock_manual_renew)
  CONFORMANCE_ENTRY(lock_auto_renew)
  CONFORMANCE_ENTRY(lock_renew_waited)
  CONFORMANCE_ENTRY(lock_batch)
  CONFORMANCE_ENTRY(lock_batch_once)
  CONFORMANCE_ENTRY(lock_close)
  CONFORMANCE_ENTRY(lock_callback_chain)
  /* test_lock_with.c */
  CONFORMANCE_ENTRY(with_lock_run)
  CONFORMANCE_ENTRY(with_lock_lost)

  /* test_lock_redis.c */
  TEST_ENTRY(lock_foreign_data_redis)
  TEST_ENTRY(lock_batch_results_redis)
  TEST_ENTRY(lock_renew_refused_redis)
  TEST_ENTRY_TIMEOUT(lock_redis_restart, 60)

  /* test_lock_mp.c */
  TEST_ENTRY_TIMEOUT(lock_mp_contention, 60)
  TEST_ENTRY(lock_mp_sigstop)

  /* test_leader.c */
  CONFORMANCE_ENTRY(leader_bad_input)
  CONFORMANCE_ENTRY(leader_elect_resign)
  CONFORMANCE_ENTRY(leader_callbacks)
  TEST_ENTRY(leader_demoted_redis)
  TEST_ENTRY(leader_mp_failover)
  /* test_cron_expr.c */
  TEST_ENTRY(cron_parse_valid)
  TEST_ENTRY(cron_parse_invalid)
  TEST_ENTRY(cron_next_vectors)
  TEST_ENTRY(cron_next_end)
  TEST_ENTRY(cron_next_brute)
  TEST_ENTRY(cron_every)
  TEST_ENTRY(cron_iso)
  TEST_ENTRY(cron_demo_next)

  /* test_cron_tz.c */
  TEST_ENTRY(cron_dst_new_york)
  TEST_ENTRY(cron_dst_london)
  TEST_ENTRY(cron_dst_lord_howe)
  TEST_ENTRY(cron_dst_other)
  TEST_ENTRY(cron_tz_posix)
  TEST_ENTRY(cron_tz_malformed)
  TEST_ENTRY(cron_tz_v1)
  TEST_ENTRY_TIMEOUT(cron_oracle, 180)

  /* test_cron.c */
  CONFORMANCE_ENTRY(cron_bad_input)
  CONFORMANCE_ENTRY(cron_registry)
  CONFORMANCE_ENTRY(cron_fire_once)
  CONFORMANCE_ENTRY(cron_bounds)
  CONFORMANCE_ENTRY(cron_queue_target)
  CONFORMANCE_ENTRY(cron_trigger)
  CONFORMANCE_ENTRY(cron_pool_target)
  CONFORMANCE_ENTRY(cron_follow_change)
  CONFORMANCE_ENTRY(cron_catch_up)
  CONFORMANCE_ENTRY(cron_log_dedup)
  CONFORMANCE_ENTRY(cron_close_in_fire)
  CONFORMANCE_ENTRY(cron_foreign_data)
  CONFORMANCE_ENTRY(cron_claim_batched)
  CONFORMANCE_ENTRY(cron_claim_old_layout)
  CONFORMANCE_ENTRY(cron_claim_window)
  CONFORMANCE_ENTRY(cron_claim_ahead_bound)
  CONFORMANCE_ENTRY(cron_claim_ahead)

  /* test_cron_mp.c */
  TEST_ENTRY_TIMEOUT(cron_mp_once, 90)
  TEST_ENTRY_TIMEOUT(cron_mp_aof_restart, 60)
  TEST_ENTRY_TIMEOUT(cron_mp_burst, 60)
  TEST_ENTRY_TIMEOUT(cron_mp_catch_up, 60)
  TEST_ENTRY_TIMEOUT(cron_mp_limit, 60)
  TEST_ENTRY_TIMEOUT(cron_mp_pool, 60)
  TEST_ENTRY(cron_mp_demo_input)


  /* test_cluster*.c and the cluster variants (test-list-cluster.h) */
  FLEET_CLUSTER_CONFORMANCE(FLEET_CLUSTER_ENTRY_C)
  FLEET_CLUSTER_TESTS(FLEET_CLUSTER_ENTRY_T)

  /* test_acl.c and the least-privilege variants (test-list-acl.h) */
  FLEET_ACL_CONFORMANCE(FLEET_ACL_ENTRY_C)
  FLEET_ACL_CLUSTER_CONFORMANCE(FLEET_ACL_ENTRY_CC)
  FLEET_ACL_TESTS(FLEET_ACL_ENTRY_T)

  /* test_tls.c */
  TEST_ENTRY(tls_connect_and_ops)
  TEST_ENTRY(tls_verification_refusals)
  TEST_ENTRY(tls_client_certificate)
  TEST_ENTRY(tls_protocol_mismatch)

  /* test_sentinel.c */
  TEST_ENTRY_TIMEOUT(sentinel_failover_queue, 120)
  TEST_ENTRY_TIMEOUT(sentinel_failover_durable, 120)
  TEST_ENTRY_TIMEOUT(sentinel_fence_failover_mp, 180)
  TEST_ENTRY_TIMEOUT(sentinel_unknown_master, 60)
  TEST_ENTRY_TIMEOUT(sentinel_tls, 90)

  /* test_durable.c */
  TEST_ENTRY(durable_wait_replicas)
  TEST_ENTRY_TIMEOUT(durable_lock_grant, 60)
  TEST_ENTRY(durable_memory_refused)
  TEST_ENTRY(durable_url_options)
  TEST_ENTRY(durable_url_memory_refused)
  /* test_byo.c */
  TEST_ENTRY(byo_queue_worker)
  TEST_ENTRY(byo_lock)
  TEST_ENTRY(byo_context_freed)
  TEST_ENTRY(byo_close_pending)
  TEST_ENTRY(byo_init_refused)
  TEST_ENTRY(byo_sub_killed)

  /* test_cli_queue_admin.c */
  CONFORMANCE_ENTRY(queue_admin_jobs)
  CONFORMANCE_ENTRY(queue_admin_retry)
  CONFORMANCE_ENTRY(queue_admin_pause)
  CONFORMANCE_ENTRY(queue_admin_pause_worker)
  /* test_queue_parts.c */
  CONFORMANCE_ENTRY(queue_parts_record)
  CONFORMANCE_ENTRY(queue_parts_place)
  CONFORMANCE_ENTRY(queue_parts_jobs)
  CONFORMANCE_ENTRY(queue_parts_verbs)
  CONFORMANCE_ENTRY(queue_parts_remove)
  CONFORMANCE_ENTRY(queue_parts_remove_one)
  CONFORMANCE_ENTRY(queue_parts_list)
  CONFORMANCE_ENTRY(queue_parts_worker)
  CONFORMANCE_ENTRY(queue_parts_turns)
  CONFORMANCE_ENTRY(queue_parts_history)

  /* test_queue_verbs.c */
  CONFORMANCE_ENTRY(queue_verbs_delete)
  CONFORMANCE_ENTRY(queue_verbs_run)
  CONFORMANCE_ENTRY(queue_verbs_kill)
  CONFORMANCE_ENTRY(queue_verbs_remove)
  CONFORMANCE_ENTRY(queue_verbs_purge_rttl)
  /* test_queue_errs.c */
  CONFORMANCE_ENTRY(queue_errs_history)
  CONFORMANCE_ENTRY(queue_errs_paths)
  CONFORMANCE_ENTRY(queue_errs_gone)
  /* test_cli_queue_verbs.c */
  TEST_ENTRY_TIMEOUT(cli_queue_verbs, 60)
  TEST_ENTRY_TIMEOUT(queue_verbs_mp, 120)

  /* test_cli.c */
  TEST_ENTRY_TIMEOUT(cli_queue, 60)
  /* test_cli_parts.c */
  TEST_ENTRY_TIMEOUT(cli_queue_parts, 60)
  TEST_ENTRY_TIMEOUT(cli_queue_deps, 60)
  TEST_ENTRY_TIMEOUT(cli_queue_life, 60)
  TEST_ENTRY_TIMEOUT(cli_lock_leader, 60)
  TEST_ENTRY_TIMEOUT(cli_pool_store, 60)
  TEST_ENTRY_TIMEOUT(cli_watch, 60)
  TEST_ENTRY_TIMEOUT(cli_errors, 60)
  TEST_ENTRY_TIMEOUT(cli_cron_warmpool, 60)
  /* test_cli_admin.c */
  TEST_ENTRY_TIMEOUT(cli_cron_admin, 60)
  TEST_ENTRY_TIMEOUT(cli_store_admin, 60)
  TEST_ENTRY_TIMEOUT(cli_worker_ls, 120)
  /* test_cli_flow.c */
  TEST_ENTRY_TIMEOUT(cli_queue_flow, 60)
  /* test_cli_metrics.c */
  TEST_ENTRY_TIMEOUT(cli_metrics, 60)
  TEST_ENTRY_TIMEOUT(dash_history_metrics, 60)
  /* test_cli_ops.c */
  TEST_ENTRY_TIMEOUT(cli_options_anywhere, 60)
  TEST_ENTRY_TIMEOUT(cli_fail_fast, 60)
  TEST_ENTRY_TIMEOUT(cli_unknown_queue, 60)
  TEST_ENTRY_TIMEOUT(cli_counts_times, 60)
  TEST_ENTRY_TIMEOUT(cli_colours, 60)

  /* test_dash.c */
  TEST_ENTRY_TIMEOUT(dash_api, 60)
  TEST_ENTRY_TIMEOUT(dash_chromium, 120)
  TEST_ENTRY_TIMEOUT(dash_chromium_jobs, 180)
  TEST_ENTRY_TIMEOUT(dash_chromium_outage, 180)
  /* test_dash_parts.c */
  TEST_ENTRY_TIMEOUT(dash_parts, 120)
  TEST_ENTRY_TIMEOUT(dash_chromium_parts, 180)
  /* test_dash_access.c */
  TEST_ENTRY_TIMEOUT(dash_host, 60)
  TEST_ENTRY_TIMEOUT(dash_origin, 60)
  TEST_ENTRY_TIMEOUT(dash_read_only, 60)
  TEST_ENTRY_TIMEOUT(dash_token, 60)
  TEST_ENTRY_TIMEOUT(dash_listen_warning, 60)
  TEST_ENTRY_TIMEOUT(dash_chromium_access, 120)

  /* test_metrics.c */
  TEST_ENTRY(metrics_units)
  TEST_ENTRY(metrics_label_escape)
  TEST_ENTRY(metrics_series_grouping)
  CONFORMANCE_ENTRY(metrics_worker_counters)
  CONFORMANCE_ENTRY(metrics_worker_recovered)
  CONFORMANCE_ENTRY(metrics_job_types_bounded)
  CONFORMANCE_ENTRY(metrics_lock_counters)
  CONFORMANCE_ENTRY(metrics_leader_counters)
  CONFORMANCE_ENTRY(metrics_cron_counters)

  /* test_log.c */
  TEST_ENTRY(log_redact)
  TEST_ENTRY(log_tls_verify_warning)
  TEST_ENTRY(log_reconnect_redis)
  CONFORMANCE_ENTRY(log_lost_lease)
  CONFORMANCE_ENTRY(log_recovered_claim)
  CONFORMANCE_ENTRY(log_background_error)

  /* test_redact.c */
  TEST_ENTRY(redact_userinfo)
  TEST_ENTRY(redact_query)
  TEST_ENTRY(redact_truncate)
  TEST_ENTRY(redact_demo_bad_url)

  /* test_tools_output.c */
  TEST_ENTRY(tools_escape_text)
  TEST_ENTRY(tools_url_from_env)
  TEST_ENTRY_TIMEOUT(tools_cli_hostile_name, 60)
  TEST_ENTRY_TIMEOUT(tools_cli_one_line, 90)
  TEST_ENTRY_TIMEOUT(tools_demo_one_line, 90)
  TEST_ENTRY_TIMEOUT(tools_http_queue_one_line, 90)
  TEST_ENTRY_TIMEOUT(tools_cli_wait_replicas, 60)

  /* test_http_queue.c */
  TEST_ENTRY(http_queue_bad_flags)
  TEST_ENTRY(http_queue_oversize)
  TEST_ENTRY(http_queue_type)
  TEST_ENTRY(http_queue_cross_origin)
  TEST_ENTRY(http_queue_metrics)
  TEST_ENTRY(http_queue_idle_timeout)
  TEST_ENTRY(http_queue_sigint)
  TEST_ENTRY_TIMEOUT(http_queue_backend_error_once, 90)
TEST_LIST_END

/* clang-format on */

#endif /* FLEET_TEST_LIST_H */
