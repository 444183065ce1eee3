/* cluster_fixture.h -- a private Redis Cluster per test: 3 masters and 3
 * replicas on free loopback ports, each a fleet_test_redis_t, with the
 * controls that failover and resharding tests need. */
#ifndef FLEET_TEST_CLUSTER_FIXTURE_H
#define FLEET_TEST_CLUSTER_FIXTURE_H

#include <stdint.h>

#include "redis_fixture.h"

typedef struct fleet_test_cluster_s fleet_test_cluster_t;

/* Nodes of the fixture: 0..2 start as masters (slots 0-5460, 5461-10922,
 * 10923-16383), 3..5 as replicas of 0..2 in that order. */
#define FLEET_TEST_CLUSTER_NODES 6

/* Starts six redis-servers with --cluster-enabled yes, a node timeout
 * of 1 s, a replica validity factor of 0 (a replica whose link is down
 * may still be promoted) and replication through the "repl" user
 * (FLEET_TEST_REPL_USER_ARGS: fleet_test_redis_cut_replicas() cuts a
 * master's replica off), joins them (CLUSTER MEET), gives each master its slots
 * (CLUSTER ADDSLOTSRANGE) and each replica its master (CLUSTER REPLICATE),
 * and waits until every node reports cluster_state:ok and every replica's
 * link is up. Skips the test when no redis-server is installed (unless
 * FLEET_TEST_REQUIRE_REDIS=1) and aborts on any other failure. Torn down
 * by fleet_test_cluster_free(), or with the test process. */
fleet_test_cluster_t *fleet_test_cluster_start_or_skip(void);

/* "redis+cluster://127.0.0.1:P0,127.0.0.1:P1": two of the masters as seeds.
 * Valid until free. */
const char *fleet_test_cluster_url(const fleet_test_cluster_t *c);

/* "redis+cluster://127.0.0.1:P": node `i` alone as the seed. */
void fleet_test_cluster_url_of(const fleet_test_cluster_t *c, int i, char *buf,
                               size_t size);

/* Node `i` (0..FLEET_TEST_CLUSTER_NODES-1). */
fleet_test_redis_t *fleet_test_cluster_node(fleet_test_cluster_t *c, int i);

/* The index of the node that currently serves `slot` as master according
 * to node `asked` (CLUSTER SLOTS), or -1. */
int fleet_test_cluster_owner(fleet_test_cluster_t *c, int asked, unsigned slot);

/* The slot of a key, as Redis computes it (CLUSTER KEYSLOT on a live
 * node). */
unsigned fleet_test_cluster_keyslot(fleet_test_cluster_t *c, const char *key);

/* Kills master `i` (SIGKILL) and waits, up to `timeout_ms`, until its
 * replica has been promoted and the surviving nodes report
 * cluster_state:ok again. Returns the promoted node's index, or -1 on
 * timeout. */
int fleet_test_cluster_kill_master(fleet_test_cluster_t *c, int i,
                                   uint64_t timeout_ms);

/* Starts killed node `i` again (same port, directory and nodes.conf): it
 * rejoins as a replica of whoever took its slots. Waits up to
 * `timeout_ms` until its replication link is up. Returns 0 or -1. */
int fleet_test_cluster_restart_node(fleet_test_cluster_t *c, int i,
                                    uint64_t timeout_ms);

/* Promotes replica `i` with CLUSTER FAILOVER (the manual, lossless kind:
 * the master pauses its clients until the replica has caught up) and
 * waits, up to `timeout_ms`, until `i` is a master and every live node
 * reports cluster_state:ok. Returns 0, or -1 on timeout. */
int fleet_test_cluster_manual_failover(fleet_test_cluster_t *c, int i,
                                       uint64_t timeout_ms);

/* Moves `slot` from its master to master `to`, the way redis-cli
 * --cluster reshard does: SETSLOT IMPORTING on the target, MIGRATING on
 * the source, then MIGRATE of the slot's keys `batch` at a time with
 * `pause_ms` between batches (clients meanwhile see ASK redirects), then
 * SETSLOT NODE on every master. Returns the number of keys moved, or -1
 * on failure (with the reason on stderr). */
int fleet_test_cluster_move_slot(fleet_test_cluster_t *c, unsigned slot, int to,
                                 int batch, unsigned pause_ms);

/* Waits up to `timeout_ms` until node `i` counts at least `want` shard
 * subscribers of `channel` (PUBSUB SHARDNUMSUB). Returns the last count
 * seen. */
long long fleet_test_cluster_wait_shard_subs(fleet_test_cluster_t *c, int i,
                                             const char *channel,
                                             long long want,
                                             uint64_t timeout_ms);

/* Stops every node, removes their directories and frees `c`. */
void fleet_test_cluster_free(fleet_test_cluster_t *c);

#endif /* FLEET_TEST_CLUSTER_FIXTURE_H */
