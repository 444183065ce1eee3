/* test-list-acl.h -- the least-privilege tests, included by test-list.h:
 * the conformance tests that also run as the ACL user of docs/deploy.md
 * (as name_acl: the redis body, connected as that user; chosen so that
 * every primitive and every command of the list is used) and the tests of
 * test_acl.c. */
#ifndef FLEET_TEST_LIST_ACL_H
#define FLEET_TEST_LIST_ACL_H

/* clang-format off */
#define FLEET_ACL_CONFORMANCE(XX)                                              \
  XX(client_ping_time)                                                         \
  XX(lock_acquire_release)                                                     \
  XX(lock_query)                                                               \
  XX(lock_wait_wakeup)                                                         \
  XX(lock_auto_renew)                                                          \
  XX(lock_batch)                                                               \
  XX(leader_elect_resign)                                                      \
  XX(queue_enqueue_get)                                                        \
  XX(queue_delayed)                                                            \
  XX(queue_unique)                                                             \
  XX(queue_unique_until_done)                                                  \
  XX(queue_cancel_list_purge)                                                  \
  XX(queue_cancel_running)                                                     \
  XX(queue_recover)                                                            \
  XX(queue_events)                                                             \
  XX(queue_admin_jobs)                                                         \
  XX(queue_admin_retry)                                                        \
  XX(queue_admin_pause)                                                        \
  XX(queue_verbs_kill)                                                         \
  XX(queue_verbs_remove)                                                       \
  XX(queue_history)                                                            \
  XX(queue_flow_groups)                                                        \
  XX(queue_flow_worker)                                                        \
  XX(worker_basic)                                                             \
  XX(worker_wakeup)                                                            \
  XX(worker_fail_retry)                                                        \
  XX(worker_heartbeat)                                                         \
  XX(worker_delivery)                                                          \
  XX(workers_registry)                                                         \
  XX(pool_dispatch_basic)                                                      \
  XX(pool_wake_events)                                                         \
  XX(pool_rebalance)                                                           \
  XX(pool_schedule)                                                            \
  XX(pool_shutdown)                                                            \
  XX(pool_worker_remove)                                                       \
  XX(pool_ticker_basic)                                                        \
  XX(cron_registry)                                                            \
  XX(cron_fire_once)                                                           \
  XX(cron_queue_target)                                                        \
  XX(cron_follow_change)                                                       \
  XX(warmpool_acquire_release)                                                 \
  XX(warmpool_resize_drain)                                                    \
  XX(warmpool_borrow_lease)                                                    \
  XX(warmpool_failures)                                                        \
  XX(warmpool_wake)                                                            \
  XX(store_records)                                                            \
  XX(store_events)                                                             \
  XX(store_index_consistency)                                                  \
  XX(store_list_pages)                                                         \
  XX(store_ttl_touch)                                                          \
  XX(store_clear_many)

/* The same on a 3-master / 3-replica cluster (as name_acl_cluster; a
 * cluster each, so few): sharded wake-ups, the slot map, a clear that
 * scans every master. */
#define FLEET_ACL_CLUSTER_CONFORMANCE(XX)                                      \
  XX(lock_wait_wakeup)                                                         \
  XX(worker_delivery)                                                          \
  XX(store_clear_many)

/* XX(name, timeout in seconds) */
#define FLEET_ACL_TESTS(XX)                                                    \
  XX(acl_docs, 10)                                                             \
  XX(acl_commands_used, 10)                                                    \
  XX(acl_select_wait, 30)                                                      \
  XX(acl_denied, 30)                                                           \
  XX(acl_functions_denied, 30)                                                 \
  XX(acl_cli, 60)
/* clang-format on */

#define FLEET_ACL_DECLARE_C(name) TEST_DECLARE(name##_acl)
#define FLEET_ACL_ENTRY_C(name) TEST_ENTRY_TIMEOUT(name##_acl, 60)
#define FLEET_ACL_DECLARE_CC(name) TEST_DECLARE(name##_acl_cluster)
#define FLEET_ACL_ENTRY_CC(name) TEST_ENTRY_TIMEOUT(name##_acl_cluster, 90)
#define FLEET_ACL_DECLARE_T(name, seconds) TEST_DECLARE(name)
#define FLEET_ACL_ENTRY_T(name, seconds) TEST_ENTRY_TIMEOUT(name, seconds)

#endif /* FLEET_TEST_LIST_ACL_H */
