/* test_lock_redis.c -- lock behaviour that needs a real redis-server in
 * this process: keys fleet did not write, renewals refused by the server,
 * and a server that restarts or goes away while leases are held. */
#include "core/batcher.h"
#include "test_lock_env.h"

/* Runs a command that must not fail. */
static void lr_cmd(fleet_test_redis_t *r, const char *cmd) {
  redisReply *reply = fleet_test_redis_cmd(r, cmd);

  ASSERT_NOT_NULL(reply);
  if (reply->type == REDIS_REPLY_ERROR)
    fleet_test__fail(__FILE__, __LINE__, "%s: %s", cmd, reply->str);
  freeReplyObject(reply);
}

/* Whether key `key` holds the string `want`. */
static int lr_get_is(fleet_test_redis_t *r, const char *key, const char *want) {
  redisReply *reply = fleet_test_redis_cmd(r, "GET %s", key);
  int same;

  ASSERT_NOT_NULL(reply);
  same = reply->type == REDIS_REPLY_STRING && strcmp(reply->str, want) == 0;
  freeReplyObject(reply);
  return same;
}

/* Data under a lock's keys that fleet did not write gives errors, never a
 * crash, and refused releases change nothing. */
TEST_IMPL(lock_foreign_data_redis) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  lock_rec_t a;
  lock_env_t e;
  lock_info_t info;

  lock_env_init(&e, fleet_test_redis_url(r));
  /* The lease key holds a hash. */
  lr_cmd(r, "HSET {locktest:w}:lock f v");
  ASSERT_OK(lock_rec_init(&a, &e.c1, "w", "me", 1000, NULL));
  ASSERT_ERR(FLEET_EWRONGTYPE, lock_rec_acquire(&e, &a, 0, 5000));
  ASSERT_ERR(FLEET_EWRONGTYPE, lock_env_query(&e, &e.c1, "w").status);
  lock_rec_close(&e, &a);

  /* The lease key holds a string fleet did not write: busy, and the query
   * cannot read it. */
  lr_cmd(r, "SET {locktest:g}:lock garbage");
  ASSERT_OK(lock_rec_init(&a, &e.c1, "g", "me", 1000, NULL));
  ASSERT_ERR(FLEET_EBUSY, lock_rec_acquire(&e, &a, 0, 5000));
  ASSERT_ERR(FLEET_ETIMEDOUT, lock_rec_acquire(&e, &a, 100, 5000));
  ASSERT_ERR(FLEET_EPROTO, lock_env_query(&e, &e.c1, "g").status);
  lock_rec_close(&e, &a);
  ASSERT(lr_get_is(r, "{locktest:g}:lock", "*garbage"));

  /* The fence is not a number, or not a string. */
  lr_cmd(r, "SET {locktest:f}:fence abc");
  ASSERT_OK(lock_rec_init(&a, &e.c1, "f", "me", 1000, NULL));
  ASSERT_ERR(FLEET_EPROTO, lock_rec_acquire(&e, &a, 0, 5000));
  ASSERT_ERR(FLEET_EPROTO, lock_env_query(&e, &e.c1, "f").status);
  lock_rec_close(&e, &a);
  lr_cmd(r, "RPUSH {locktest:h}:fence x");
  ASSERT_OK(lock_rec_init(&a, &e.c1, "h", "me", 1000, NULL));
  ASSERT_ERR(FLEET_EWRONGTYPE, lock_rec_acquire(&e, &a, 0, 5000));
  ASSERT_ERR(FLEET_EWRONGTYPE, lock_env_query(&e, &e.c1, "h").status);
  lock_rec_close(&e, &a);

  /* A held lease overwritten by someone else: the release is refused and
   * the other value stays. */
  ASSERT_OK(lock_rec_init(&a, &e.c1, "o", "me", 5000, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &a, 0, 5000));
  lr_cmd(r, "SET {locktest:o}:lock 999:intruder");
  ASSERT_ERR(FLEET_ESTALE, lock_rec_release(&e, &a));
  ASSERT(lr_get_is(r, "{locktest:o}:lock", "999:intruder"));
  info = lock_env_query(&e, &e.c2, "o");
  ASSERT_STR_EQ("intruder", info.owner);
  ASSERT_UEQ(999, info.token);
  lock_rec_close(&e, &a);
  lock_env_close(&e);
  fleet_test_redis_free(r);
  return 0;
}

/* The locks of one batched call get their own results: a free lock is
 * granted, a busy one refused, foreign data under a third and a fourth
 * refused with their codes, all in one acquire call; then a release, a
 * stale release and a release of a lease overwritten with another type
 * share one release call. */
TEST_IMPL(lock_batch_results_redis) {
  static const char *const names[] = {"free", "busy", "hash", "fence"};
  static const int want[] = {0, FLEET_EBUSY, FLEET_EWRONGTYPE, FLEET_EPROTO};
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  uint64_t calls0, items0, calls, items;
  lock_rec_t a[4], holder, s1, s2;
  lock_env_t e;
  int i;

  lock_env_init(&e, fleet_test_redis_url(r));
  ASSERT_OK(lock_rec_init(&holder, &e.c1, "busy", "holder", 5000, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &holder, 0, 5000));
  lr_cmd(r, "HSET {locktest:hash}:lock f v");
  lr_cmd(r, "SET {locktest:fence}:fence abc");
  for (i = 0; i < 4; i++)
    ASSERT_OK(lock_rec_init(&a[i], &e.c2, names[i], "me", 5000, NULL));
  fleet__batch_stats(e.c2.internal_, &calls0, &items0);
  for (i = 0; i < 4; i++)
    ASSERT_OK(fleet_lock_acquire(&a[i].lock, 0, lock_rec_on_acquire, 0));
  for (i = 0; i < 4; i++) {
    ASSERT(lock_env_wait(&e, &a[i].acquired, 1, 5000));
    ASSERT_ERR(want[i], a[i].acq_status);
  }
  fleet__batch_stats(e.c2.internal_, &calls, &items);
  ASSERT_UEQ(1, calls - calls0);
  ASSERT_UEQ(4, items - items0);
  ASSERT(lr_get_is(r, "{locktest:fence}:fence", "abc"));

  /* Two more held leases, then overwritten: one by another owner's value,
   * one with another type. */
  ASSERT_OK(lock_rec_init(&s1, &e.c2, "stale", "me", 5000, NULL));
  ASSERT_OK(lock_rec_init(&s2, &e.c2, "typed", "me", 5000, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &s1, 0, 5000));
  ASSERT_OK(lock_rec_acquire(&e, &s2, 0, 5000));
  lr_cmd(r, "SET {locktest:stale}:lock 999:intruder");
  lr_cmd(r, "DEL {locktest:typed}:lock");
  lr_cmd(r, "RPUSH {locktest:typed}:lock x");
  fleet__batch_stats(e.c2.internal_, &calls0, &items0);
  ASSERT_OK(fleet_lock_release(&a[0].lock, lock_rec_on_release, 0));
  ASSERT_OK(fleet_lock_release(&s1.lock, lock_rec_on_release, 0));
  ASSERT_OK(fleet_lock_release(&s2.lock, lock_rec_on_release, 0));
  ASSERT(lock_env_wait(&e, &a[0].released, 1, 5000));
  ASSERT(lock_env_wait(&e, &s1.released, 1, 5000));
  ASSERT(lock_env_wait(&e, &s2.released, 1, 5000));
  ASSERT_OK(a[0].rel_status);
  ASSERT_ERR(FLEET_ESTALE, s1.rel_status);
  ASSERT_ERR(FLEET_EWRONGTYPE, s2.rel_status);
  fleet__batch_stats(e.c2.internal_, &calls, &items);
  ASSERT_UEQ(1, calls - calls0);
  ASSERT_UEQ(3, items - items0);
  ASSERT(lr_get_is(r, "{locktest:stale}:lock", "999:intruder"));
  ASSERT_EQ(0, lock_env_query(&e, &e.c1, "free").held);

  for (i = 0; i < 4; i++)
    lock_rec_close(&e, &a[i]);
  lock_rec_close(&e, &s1);
  lock_rec_close(&e, &s2);
  lock_rec_close(&e, &holder);
  lock_env_close(&e);
  fleet_test_redis_free(r);
  return 0;
}

/* Renewals the server refuses report the lease lost: deleted or taken
 * (FLEET_ESTALE), overwritten with another type (FLEET_EWRONGTYPE); a
 * manual renew hears the same after the lost callback. */
TEST_IMPL(lock_renew_refused_redis) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  /* Scaled, so that a renewal delayed by load still comes before the local
   * deadline. */
  const uint32_t ttl = (uint32_t)fleet_test_ms(600);
  fleet_lock_options_t o;
  lock_rec_t a, c, m;
  lock_env_t e;

  lock_env_init(&e, fleet_test_redis_url(r));
  ASSERT_OK(lock_rec_init(&a, &e.c1, "gone", "me", ttl, NULL));
  ASSERT_OK(lock_rec_init(&c, &e.c1, "typed", "me", ttl, NULL));
  fleet_lock_options_init(&o);
  o.manual_renew = 1;
  ASSERT_OK(lock_rec_init(&m, &e.c1, "manual", "me", 5000, &o));
  ASSERT_OK(lock_rec_acquire(&e, &a, 0, 5000));
  ASSERT_OK(lock_rec_acquire(&e, &c, 0, 5000));
  ASSERT_OK(lock_rec_acquire(&e, &m, 0, 5000));

  lr_cmd(r, "DEL {locktest:gone}:lock");
  lr_cmd(r, "DEL {locktest:typed}:lock");
  lr_cmd(r, "HSET {locktest:typed}:lock f v");
  ASSERT(lock_env_wait(&e, &a.lost, 1, 2000));
  ASSERT(lock_env_wait(&e, &c.lost, 1, 2000));
  ASSERT_ERR(FLEET_ESTALE, a.lost_status);
  ASSERT_ERR(FLEET_EWRONGTYPE, c.lost_status);
  /* Refused well before the local deadline would have passed. */
  ASSERT_LT(a.lost_ms - a.acquired_ms, ttl * 5 / 6);

  lr_cmd(r, "SET {locktest:manual}:lock 1:other");
  ASSERT_ERR(FLEET_ESTALE, lock_rec_renew(&e, &m));
  ASSERT_EQ(1, m.lost);
  ASSERT_ERR(FLEET_ESTALE, m.lost_status);
  ASSERT(lr_get_is(r, "{locktest:manual}:lock", "1:other"));
  lock_rec_close(&e, &a);
  lock_rec_close(&e, &c);
  lock_rec_close(&e, &m);
  lock_env_close(&e);
  fleet_test_redis_free(r);
  return 0;
}

typedef struct {
  lock_rec_t *holder;
  int holder_held; /* the holder believed it held when this one got it */
} restart_check_t;

static void on_restart_taken(fleet_lock_t *lock, int status, uint64_t token,
                             void *arg) {
  restart_check_t *t = arg;

  t->holder_held = fleet_lock_held(&t->holder->lock);
  lock_rec_on_acquire(lock, status, token, NULL);
}

/* A server restarted with persistence (appendfsync always): a lease that
 * survives the restart keeps being renewed; a lease whose server stays
 * away longer than its TTL is reported lost before the server is back, and
 * the next holder gets a greater token (the fence was persisted). A waiter
 * never gets the lease while the holder still believes it holds it. */
TEST_IMPL(lock_redis_restart) {
  static const char *const aof[] = {"--appendonly", "yes", "--appendfsync",
                                    "always", NULL};
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(aof);
  /* Scaled: the restart must take well under it even on a loaded
   * machine, and the loss is checked against it. */
  const uint32_t ttl = (uint32_t)fleet_test_ms(1500);
  restart_check_t check;
  uint64_t t_kill;
  lock_rec_t a, w;
  lock_env_t e;
  lock_info_t info;

  lock_env_init(&e, fleet_test_redis_url(r));
  ASSERT_OK(lock_rec_init(&a, &e.c1, "rs", "holder", ttl, NULL));
  ASSERT_OK(lock_rec_init(&w, &e.c2, "rs", "waiter", ttl, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &a, 0, 5000));
  memset(&check, 0, sizeof(check));
  check.holder = &a;
  ASSERT_OK(fleet_lock_acquire(&w.lock, FLEET_LOCK_WAIT_FOREVER,
                               on_restart_taken, &check));
  lock_env_sleep(&e, 200);

  /* A quick restart: the lease comes back from the append-only file and
   * its renewals go on. */
  ASSERT_OK(fleet_test_redis_restart(r));
  lock_env_sleep(&e, ttl * 5 / 3);
  if (a.lost == 0) {
    ASSERT(fleet_lock_held(&a.lock));
    ASSERT_EQ(0, w.acquired);
    info = lock_env_query(&e, &e.c1, "rs");
    ASSERT_STR_EQ("holder", info.owner);
    ASSERT_UEQ(a.token, info.token);
  }

  /* The server stays away for longer than the TTL: the holder reports the
   * loss on its own, while the server is down. */
  if (a.lost == 0) {
    t_kill = lock_env_now();
    ASSERT_OK(fleet_test_redis_kill(r));
    ASSERT(lock_env_wait(&e, &a.lost, 1, 3000));
    ASSERT_ERR(FLEET_ETIMEDOUT, a.lost_status);
    ASSERT_LT(a.lost_ms - t_kill, ttl);
    lock_env_sleep(&e, ttl + 100);
    ASSERT_OK(fleet_test_redis_restart(r));
  }
  ASSERT(lock_env_wait(&e, &w.acquired, 1, 10000));
  ASSERT_OK(w.acq_status);
  ASSERT_EQ(0, check.holder_held);
  ASSERT_UGT(w.token, a.token);
  ASSERT_LE(a.lost_ms, w.acquired_ms);
  ASSERT_ERR(FLEET_ESTALE, lock_rec_release(&e, &a));
  ASSERT_OK(lock_rec_release(&e, &w));
  lock_rec_close(&e, &a);
  lock_rec_close(&e, &w);
  lock_env_close(&e);
  fleet_test_redis_free(r);
  return 0;
}
