/* test-list-cluster.h -- the Redis Cluster tests, included by test-list.h:
 * the conformance tests that also run on a 3-master / 3-replica cluster
 * (as name_cluster; each starts its own cluster, so the set is chosen to
 * keep the suite's time modest) and the tests of test_cluster*.c. */
#ifndef FLEET_TEST_LIST_CLUSTER_H
#define FLEET_TEST_LIST_CLUSTER_H

/* clang-format off */
#define FLEET_CLUSTER_CONFORMANCE(XX)                                          \
  XX(client_ping_time)                                                         \
  XX(client_pipeline_10000)                                                    \
  XX(lock_acquire_release)                                                     \
  XX(lock_wait_wakeup)                                                         \
  XX(lock_auto_renew)                                                          \
  XX(lock_batch)                                                               \
  XX(lock_batch_once)                                                          \
  XX(leader_elect_resign)                                                      \
  XX(queue_enqueue_get)                                                        \
  XX(queue_priority_fifo)                                                      \
  XX(queue_delayed)                                                            \
  XX(queue_claim_tokens)                                                       \
  XX(queue_recover)                                                            \
  XX(queue_history)                                                            \
  XX(queue_events)                                                             \
  XX(queue_headers)                                                            \
  XX(queue_flow_group_limits)                                                  \
  XX(queue_flow_worker)                                                        \
  XX(queue_deps_run_after_children)                                            \
  XX(queue_deps_slots)                                                         \
  XX(queue_verbs_delete)                                                       \
  XX(queue_verbs_remove)                                                       \
  XX(queue_parts_remove)                                                       \
  XX(worker_basic)                                                             \
  XX(worker_wakeup)                                                            \
  XX(worker_heartbeat)                                                         \
  XX(worker_delivery)                                                          \
  XX(worker_delivery_unheard)                                                  \
  XX(worker_cancel_timeout)                                                    \
  XX(store_list_pages)                                                         \
  XX(store_clear_prefix)                                                       \
  XX(store_clear_many)                                                         \
  XX(store_scan_glob)                                                          \
  XX(store_ttl_touch)                                                          \
  XX(client_scan_names)                                                        \
  XX(workers_registry)                                                         \
  XX(pool_dispatch_basic)                                                      \
  XX(pool_wake_events)                                                         \
  XX(pool_rebalance)                                                           \
  XX(cron_fire_once)                                                           \
  XX(cron_claim_batched)                                                       \
  XX(cron_pool_target)

/* XX(name, timeout in seconds) */
#define FLEET_CLUSTER_TESTS(XX)                                                \
  XX(cluster_slot_unit, 10)                                                    \
  XX(cluster_foreign_seed, 60)                                                 \
  XX(cluster_locks_many_slots, 60)                                             \
  XX(cluster_durable_wait, 60)                                                 \
  XX(cluster_failover_mp, 300)                                                 \
  XX(cluster_failover_durable_mp, 300)                                         \
  XX(cluster_reshard_workers, 180)                                             \
  XX(cluster_manual_failover_mp, 180)                                          \
  XX(cluster_parts_mp, 300)                                                    \
  XX(fence_failover_cluster_mp, 180)                                          \
  XX(cli_cluster_listings, 120)
/* clang-format on */

#define FLEET_CLUSTER_DECLARE_C(name) TEST_DECLARE(name##_cluster)
#define FLEET_CLUSTER_ENTRY_C(name) TEST_ENTRY_TIMEOUT(name##_cluster, 90)
#define FLEET_CLUSTER_DECLARE_T(name, seconds) TEST_DECLARE(name)
#define FLEET_CLUSTER_ENTRY_T(name, seconds) TEST_ENTRY_TIMEOUT(name, seconds)

#endif /* FLEET_TEST_LIST_CLUSTER_H */
