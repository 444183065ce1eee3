/* test_cluster.c -- the Redis Cluster backend: hash slots, routing from a
 * seed that owns nothing of a queue, locks in many slots renewed in one
 * client, per-slot batches. Failover and resharding under load are in
 * test_cluster_mp.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "core/batcher.h"
#include "cluster_fixture.h"
#include "test.h"
#include "test_lock_env.h"
#include "test_queue_util.h"

/* fleet__key_slot() against values Redis documents or computes: CRC16 of
 * "123456789" is 0x31C3, and the hash-tag rules of the cluster spec. */
TEST_IMPL(cluster_slot_unit) {
  ASSERT_UEQ(0x31C3 & 16383, fleet__key_slot("123456789", 9));
  ASSERT_UEQ(12182, fleet__key_slot("foo", 3));
  ASSERT_UEQ(5061, fleet__key_slot("bar", 3));
  /* The tag decides: same slot as the bare tag content. */
  ASSERT_UEQ(fleet__key_slot("user1000", 8),
             fleet__key_slot("{user1000}.following", 20));
  ASSERT_UEQ(fleet__key_slot("user1000", 8),
             fleet__key_slot("{user1000}.followers", 20));
  /* An empty tag "{}" means the whole key is hashed. */
  ASSERT_UEQ(fleet__key_slot("foo{}{bar}", 10),
             fleet__key_slot("foo{}{bar}", 10));
  ASSERT_NE(fleet__key_slot("foo{}{bar}", 10), fleet__key_slot("bar", 3));
  /* Only the first '{' and the next '}' count. */
  ASSERT_UEQ(fleet__key_slot("{bar", 4), fleet__key_slot("foo{{bar}}zap", 13));
  ASSERT_UEQ(fleet__key_slot("bar", 3), fleet__key_slot("foo{bar}{zap}", 13));
  /* No closing brace: the whole key. */
  ASSERT_UEQ(fleet__key_slot("a{b", 3), fleet__key_slot("a{b", 3));
  ASSERT_NE(fleet__key_slot("a{b", 3), fleet__key_slot("b", 1));
  ASSERT_UEQ(0, fleet__key_slot("", 0));
  return 0;
}

/* ------------------------------------------------------------------------ */
/* A client seeded with a node that does not own the queue's slot          */

typedef struct {
  int handled, completed, failed;
} seed_counts_t;

static void seed_handler(fleet_worker_t *w, fleet_job_t *job) {
  seed_counts_t *n = w->data;
  n->handled++;
  ASSERT_OK(fleet_job_complete(job));
}

static void seed_done(fleet_worker_t *w, fleet_job_t *job,
                      fleet_job_action_t action, int status) {
  seed_counts_t *n = w->data;
  if (action == FLEET_JOB_COMPLETE && status == 0)
    n->completed++;
  else
    n->failed++;
}

static void seed_on_stopped(fleet_handle_t *w, int status, void *arg) {
  *(int *)arg = 1;
}

static void seed_on_closed(fleet_handle_t *w) {}

/* The first symptom: a worker pointed at a cluster node that does
 * not own its queue's slot claimed nothing, forever. Seeded with one such
 * master (and a dead address), the client finds the owner and processes
 * every job; the jobs' keys are on the owner and nowhere else. */
TEST_IMPL(cluster_foreign_seed) {
  enum { N = 300 };
  fleet_test_cluster_t *cl = fleet_test_cluster_start_or_skip();
  unsigned slot = fleet_test_cluster_keyslot(cl, "{seedtest:jobs}");
  int owner = fleet_test_cluster_owner(cl, 0, slot);
  int seed = (owner + 1) % 3, i, stopped = 0, dead;
  fleet_worker_options_t wo;
  fleet_job_spec_t specs[N];
  fleet_worker_t w;
  seed_counts_t n;
  redisReply *r;
  char url[128];
  qt_t t;

  ASSERT_GE(owner, 0);
  ASSERT_LT(owner, 3);
  /* A second seed where nothing listens: the client gets past it. It is
   * the first one asked (the last seed is asked first). */
  dead = fleet_test_free_port();
  ASSERT_GT(dead, 0);
  snprintf(url, sizeof(url), "redis+cluster://127.0.0.1:%d,127.0.0.1:%d",
           fleet_test_redis_port(fleet_test_cluster_node(cl, seed)), dead);
  qt_open_prefix(&t, url, "seedtest", "jobs", NULL);
  for (i = 0; i < N; i++)
    fleet_job_spec_init(&specs[i], "t", "x", 1);
  ASSERT_OK(qt_enqueue(&t, specs, N, NULL, NULL));

  memset(&n, 0, sizeof(n));
  fleet_worker_options_init(&wo);
  wo.concurrency = 16;
  wo.done_cb = seed_done;
  w.data = &n;
  ASSERT_OK(fleet_worker_init(&t.c.client, &w, "jobs", &wo));
  ASSERT_OK(fleet_worker_start(&w, seed_handler));
  ASSERT(
      fleet_test_wait_count(&t.c.loop, &n.completed, N, fleet_test_ms(20000)));
  ASSERT_EQ(N, n.handled);
  ASSERT_EQ(0, n.failed);
  /* Its wake-ups are sharded, on the owner: SSUBSCRIBE there, no plain
   * channel anywhere. Then a job enqueued on an idle worker is taken at
   * once, not at the next poll. */
  ASSERT_EQ(1, fleet_test_cluster_wait_shard_subs(cl, owner,
                                                  "{seedtest:jobs}:jobs:wake",
                                                  1, fleet_test_ms(5000)));
  for (i = 0; i < 3; i++) {
    r = fleet_test_redis_cmd(fleet_test_cluster_node(cl, i), "PUBSUB NUMPAT");
    ASSERT_NOT_NULL(r);
    ASSERT_EQ(0, r->integer);
    freeReplyObject(r);
    r = fleet_test_redis_cmd(fleet_test_cluster_node(cl, i), "PUBSUB CHANNELS");
    ASSERT_NOT_NULL(r);
    ASSERT_UEQ(0, r->elements);
    freeReplyObject(r);
  }
  ASSERT_OK(fleet_worker_stop(&w, 1000, seed_on_stopped, &stopped));
  ASSERT(fleet_test_wait_count(&t.c.loop, &stopped, 1, fleet_test_ms(5000)));
  fleet_worker_close(&w, seed_on_closed);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(N, t.counts.completed);
  ASSERT_UEQ(0, t.counts.pending + t.counts.running);

  /* Where the data is: on the owner of the slot only. */
  r = fleet_test_redis_cmd(fleet_test_cluster_node(cl, owner),
                           "CLUSTER COUNTKEYSINSLOT %u", slot);
  ASSERT_NOT_NULL(r);
  ASSERT_GT(r->integer, 0);
  freeReplyObject(r);
  r = fleet_test_redis_cmd(fleet_test_cluster_node(cl, seed), "DBSIZE");
  ASSERT_NOT_NULL(r);
  ASSERT_EQ(0, r->integer);
  freeReplyObject(r);
  qt_close(&t);
  fleet_test_cluster_free(cl);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Locks in many slots on one client                                       */

#define MANY_LOCKS 64

/* The second symptom: two leases in different slots on one client
 * were both reported lost after the first batched renewal (a hidden
 * CROSSSLOT). 64 leases spread over the three masters stay held through
 * many renewals, their TTLs are refreshed on the servers, and each tick's
 * renewals went out as one call per slot. */
TEST_IMPL(cluster_locks_many_slots) {
  const uint32_t ttl = (uint32_t)fleet_test_ms(400);
  static unsigned char slot_seen[16384];
  fleet_test_cluster_t *cl = fleet_test_cluster_start_or_skip();
  static lock_rec_t many[MANY_LOCKS];
  int per_master[3] = {0, 0, 0};
  uint64_t calls0, items0, calls, items, slots = 0;
  lock_env_t e;
  char name[32], tag[64];
  int i;

  lock_env_init(&e, fleet_test_cluster_url(cl));
  memset(slot_seen, 0, sizeof(slot_seen));
  for (i = 0; i < MANY_LOCKS; i++) {
    unsigned slot;
    int owner;
    snprintf(name, sizeof(name), "slotlock-%d", i);
    snprintf(tag, sizeof(tag), "{locktest:%s}", name);
    slot = fleet__key_slot(tag, strlen(tag));
    ASSERT_UEQ(fleet_test_cluster_keyslot(cl, tag), slot);
    owner = fleet_test_cluster_owner(cl, 0, slot);
    ASSERT_GE(owner, 0);
    ASSERT_LT(owner, 3);
    per_master[owner]++;
    slots += !slot_seen[slot];
    slot_seen[slot] = 1;
    ASSERT_OK(lock_rec_init(&many[i], &e.c2, name, "many", ttl, NULL));
    ASSERT_OK(fleet_lock_acquire(&many[i].lock, 0, lock_rec_on_acquire, 0));
  }
  /* Spread: every master holds some of them. */
  for (i = 0; i < 3; i++)
    ASSERT_GT(per_master[i], 0);
  for (i = 0; i < MANY_LOCKS; i++) {
    ASSERT(lock_env_wait(&e, &many[i].acquired, 1, 5000));
    ASSERT_OK(many[i].acq_status);
  }
  fleet__batch_stats(e.c2.internal_, &calls0, &items0);
  lock_env_sleep(&e, 5 * ttl);
  fleet__batch_stats(e.c2.internal_, &calls, &items);
  /* Several ticks renewed every lease, one call per slot each. */
  ASSERT_UGE(items - items0, 3 * (uint64_t)MANY_LOCKS);
  ASSERT_UEQ((items - items0) * slots, (calls - calls0) * MANY_LOCKS);
  for (i = 0; i < MANY_LOCKS; i++) {
    lock_info_t info;
    ASSERT_EQ(0, many[i].lost);
    ASSERT(fleet_lock_held(&many[i].lock));
    snprintf(name, sizeof(name), "slotlock-%d", i);
    info = lock_env_query(&e, &e.c1, name);
    ASSERT_OK(info.status);
    ASSERT_UEQ(many[i].token, info.token);
    ASSERT_GT(info.ttl_ms, 0);
  }
  for (i = 0; i < MANY_LOCKS; i++)
    lock_rec_close(&e, &many[i]);
  lock_env_close(&e);
  fleet_test_cluster_free(cl);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The durability option on a cluster                                      */

static void dur_open(qt_t *t, const char *url, uint32_t replicas,
                     uint32_t timeout_ms) {
  fleet_client_options_t o;

  memset(t, 0, sizeof(*t));
  fleet_client_options_init(&o);
  o.prefix = "cdur";
  o.wait_replicas = replicas;
  o.wait_timeout_ms = timeout_ms;
  o.command_timeout_ms = (uint32_t)fleet_test_ms(5000);
  ctx_init(&t->c, url, &o);
  t->q.data = t;
  ASSERT_OK(fleet_queue_init(&t->c.client, &t->q, "jobs", NULL));
}

static int dur_add(qt_t *t, const char *payload) {
  fleet_job_spec_t s;
  int st = 1, status;

  fleet_job_spec_init(&s, "t", payload, strlen(payload));
  status = qt_enqueue(t, &s, 1, &st, NULL);
  if (status == 0)
    ASSERT_OK(st);
  return status;
}

/* wait_replicas on a cluster: the WAIT goes to the master that ran the op
 * (after any redirect or NOSCRIPT resend). One replica per master: 1
 * succeeds, 2 is FLEET_ETIMEDOUT with the count in the detail, and so is
 * 1 while the replica is paused. */
TEST_IMPL(cluster_durable_wait) {
  fleet_test_cluster_t *cl = fleet_test_cluster_start_or_skip();
  unsigned slot = fleet_test_cluster_keyslot(cl, "{cdur:jobs}");
  int owner = fleet_test_cluster_owner(cl, 0, slot);
  fleet_claim_t claim;
  qt_job_t jobs[2];
  int results[1];
  const char *why;
  qt_t t, two;

  ASSERT_GE(owner, 0);
  ASSERT_LT(owner, 3);
  dur_open(&t, fleet_test_cluster_url(cl), 1, (uint32_t)fleet_test_ms(500));
  ASSERT_OK(dur_add(&t, "a"));
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  claim = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &claim, 1, results));
  ASSERT_OK(results[0]);
  /* NOSCRIPT on the owner: resent as EVAL, then WAIT. */
  fleet_test_redis_ok(fleet_test_cluster_node(cl, owner), "SCRIPT FLUSH");
  ASSERT_OK(dur_add(&t, "b"));
  ASSERT_STR_EQ("", fleet_client_last_error(&t.c.client));

  dur_open(&two, fleet_test_cluster_url(cl), 2, (uint32_t)fleet_test_ms(200));
  ASSERT_ERR(FLEET_ETIMEDOUT, dur_add(&two, "c"));
  why = fleet_client_last_error(&two.c.client);
  ASSERT_NOT_NULL(strstr(why, "1 of 2 replicas"));
  ASSERT_OK(qt_counts(&two));
  ASSERT_UEQ(2, two.counts.pending); /* "c" is on the master */
  qt_close(&two);

  ASSERT_OK(fleet_test_redis_pause(fleet_test_cluster_node(cl, owner + 3)));
  ASSERT_ERR(FLEET_ETIMEDOUT, dur_add(&t, "d"));
  why = fleet_client_last_error(&t.c.client);
  ASSERT_NOT_NULL(strstr(why, "0 of 1 replicas"));
  ASSERT_OK(fleet_test_redis_resume(fleet_test_cluster_node(cl, owner + 3)));
  ASSERT_OK(dur_add(&t, "e"));
  qt_close(&t);
  fleet_test_cluster_free(cl);
  return 0;
}
