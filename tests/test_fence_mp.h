/* test_fence_mp.h -- the failover-with-lag fencing check that the Redis
 * Cluster test (test_fence_mp.c) and the Sentinel test (test_sentinel.c)
 * share. */
#ifndef FLEET_TEST_FENCE_MP_H
#define FLEET_TEST_FENCE_MP_H

#include "redis_fixture.h"

/* How a deployment is failed over: `cut` cuts the replica of the master
 * that serves the test's keys (fleet_test_redis_cut_replicas()), `kill`
 * SIGKILLs that master and returns once the replica is promoted and
 * clients can find it. */
typedef struct {
  const char *url;
  /* The master that serves the lock's and the queue's keys, and the
   * replica that will take over; for the checks that the replica missed
   * the grants. */
  fleet_test_redis_t *master;
  fleet_test_redis_t *replica;
  void (*kill)(void *arg);
  void *arg;
  /* The queue's name: one whose tag "{fence:<name>}" the same master
   * serves as the lock's, "{fence:" FENCE_MP_LOCK "}". */
  const char *queue;
} fence_mp_env_t;

/* The key prefix and lock name the check uses. */
#define FENCE_MP_PREFIX "fence"
#define FENCE_MP_LOCK "fenced"

/* The check, in processes that record what they saw in a ledger (a pipe,
 * one line per event, with CLOCK_MONOTONIC times):
 *
 *   1. a process enqueues one job, and the replica gets it;
 *   2. the replica's link is cut;
 *   3. process 1 takes the lock and claims the job: the grants reach the
 *      master only (the replica is checked not to have them);
 *   4. the master is killed, the replica promoted;
 *   5. process 2 takes the same lock and claims the job again (its claim
 *      was lost with the master);
 *
 * and asserts from the ledgers: process 2's lock token and claim token
 * are strictly greater than process 1's, and process 1 was told it lost
 * the lease (its lost callback ran) after the kill. */
void fence_mp_run(const fence_mp_env_t *env);

#endif /* FLEET_TEST_FENCE_MP_H */
