/* test_lock.c -- the lock handle on both adapters: bad input, acquire and
 * release with fencing tokens, queries, waiting (wake-up on release, on
 * expiry, timeout), auto-renewal and its batching, loss and stale
 * releases, close, and calls from inside callbacks. */
#include "lock/lock_int.h"
#include "test_lock_env.h"

/* The state of a recorded handle, by name. */
static const char *lock_state(const lock_rec_t *r) {
  return fleet__lock_state_name(((fleet__lock_t *)r->lock.internal_)->state);
}

/* ------------------------------------------------------------------------ */
/* Bad input                                                                */

static void never_query_cb(fleet_client_t *client, int status,
                           const fleet_lock_info_t *info, void *arg) {
  fleet_test__fail(__FILE__, __LINE__, "a refused query called back");
}

CONFORMANCE_IMPL(lock_bad_input) {
  char name[FLEET__NAME_MAX + 2], owner[FLEET_LOCK_OWNER_MAX + 2];
  fleet_lock_options_t o;
  fleet_lock_t l;
  lock_env_t e;
  lock_info_t info;
  lock_rec_t r;

  lock_env_init(&e, b->url);
  memset(name, 'n', sizeof(name) - 1);
  name[sizeof(name) - 1] = '\0';
  memset(owner, 'o', sizeof(owner) - 1);
  owner[sizeof(owner) - 1] = '\0';

  ASSERT_ERR(FLEET_EINVAL, fleet_lock_init(NULL, &l, "x", "o", 1000, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_init(&e.c1, NULL, "x", "o", 1000, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_init(&e.c1, &l, NULL, "o", 1000, NULL));
  ASSERT_NULL(l.internal_);
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_init(&e.c1, &l, "", "o", 1000, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_init(&e.c1, &l, "x", NULL, 1000, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_init(&e.c1, &l, "x", "", 1000, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_init(&e.c1, &l, "x", "o", 0, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_init(&e.c1, &l, "x", "o",
                                           FLEET_LOCK_TTL_MIN_MS - 1, NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_lock_init(&e.c1, &l, name, "o", 1000, NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_lock_init(&e.c1, &l, "x", owner, 1000, NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_lock_query(&e.c1, name, never_query_cb, 0));
  fleet_lock_options_init(&o);
  o.safety_margin_ms = 1000;
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_init(&e.c1, &l, "x", "o", 1000, &o));
  fleet_lock_options_init(&o);
  o.renew_interval_ms = 900; /* the default margin is 111 ms */
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_init(&e.c1, &l, "x", "o", 1000, &o));
  ASSERT_NULL(l.internal_);
  /* The longest name and owner are fine. */
  name[FLEET__NAME_MAX] = '\0';
  owner[FLEET_LOCK_OWNER_MAX] = '\0';
  ASSERT_OK(fleet_lock_init(&e.c1, &l, name, owner, 1000, NULL));
  ASSERT_OK(fleet_lock_close(&l, NULL));

  ASSERT_OK(lock_rec_init(&r, &e.c1, "x", "o", 1000, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_acquire(NULL, 0, lock_rec_on_acquire, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_acquire(&r.lock, 0, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_release(&r.lock, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_renew(&r.lock, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_close(NULL, NULL));
  /* No lease yet: nothing to release or renew. */
  ASSERT_ERR(FLEET_ESTALE, fleet_lock_release(&r.lock, lock_rec_on_release, 0));
  ASSERT_ERR(FLEET_ESTALE, fleet_lock_renew(&r.lock, lock_rec_on_renew, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_query(NULL, "x", NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_query(&e.c1, "x", NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_lock_query(&e.c1, "", never_query_cb, NULL));
  ASSERT_EQ(0, fleet_lock_held(NULL));
  ASSERT_EQ(0, fleet_lock_token(NULL));
  ASSERT_EQ(0, fleet_lock_remaining_ms(&r.lock));

  /* Nothing was written by any of it. */
  info = lock_env_query(&e, &e.c2, "x");
  ASSERT_OK(info.status);
  ASSERT_EQ(0, info.held);
  ASSERT_EQ(0, info.fence);

  /* One acquire at a time. */
  ASSERT_OK(fleet_lock_acquire(&r.lock, 0, lock_rec_on_acquire, NULL));
  ASSERT_ERR(FLEET_EALREADY,
             fleet_lock_acquire(&r.lock, 0, lock_rec_on_acquire, NULL));
  ASSERT_ERR(FLEET_EALREADY,
             fleet_lock_release(&r.lock, lock_rec_on_release, NULL));
  ASSERT(lock_env_wait(&e, &r.acquired, 1, 5000));
  ASSERT_OK(r.acq_status);
  ASSERT_ERR(FLEET_EALREADY,
             fleet_lock_acquire(&r.lock, 0, lock_rec_on_acquire, NULL));
  lock_rec_close(&e, &r);
  ASSERT_EQ(0, r.lost);
  ASSERT_ERR(FLEET_EINVAL,
             fleet_lock_acquire(&r.lock, 0, lock_rec_on_acquire, NULL));

  /* A closing client takes no new handles. */
  ASSERT_OK(fleet_client_close(&e.c2, NULL));
  ASSERT_ERR(FLEET_ECLOSING, fleet_lock_init(&e.c2, &l, "x", "o", 1000, NULL));
  ASSERT_ERR(FLEET_ECLOSING, fleet_lock_query(&e.c2, "x", never_query_cb, 0));
  ASSERT_OK(fleet_client_close(&e.c1, NULL));
  fleet_test_loop_close(&e.loop);
}

/* ------------------------------------------------------------------------ */
/* Acquire, release, tokens, query                                          */

CONFORMANCE_IMPL(lock_acquire_release) {
  /* The TTL, and the most that may pass between the acquire and a check of
   * what is left of the lease. */
  const uint32_t ttl = (uint32_t)fleet_test_ms(5000);
  const uint32_t lag = (uint32_t)fleet_test_ms(1000);
  lock_rec_t a, c;
  lock_env_t e;
  lock_info_t info;
  uint64_t prev;
  int i;

  lock_env_init(&e, b->url);
  ASSERT_OK(lock_rec_init(&a, &e.c1, "res", "alpha", ttl, NULL));
  ASSERT_OK(lock_rec_init(&c, &e.c2, "res", "beta", ttl, NULL));

  ASSERT_STR_EQ("idle", lock_state(&a));
  ASSERT_OK(lock_rec_acquire(&e, &a, 0, 5000));
  ASSERT_STR_EQ("held", lock_state(&a));
  ASSERT_UGE(a.token, 1);
  ASSERT_UEQ(a.token, fleet_lock_token(&a.lock));
  ASSERT(fleet_lock_held(&a.lock));
  ASSERT_UGT(fleet_lock_remaining_ms(&a.lock), ttl - lag);
  ASSERT_ULE(fleet_lock_remaining_ms(&a.lock), ttl);

  /* Held by another: try-once fails fast. */
  ASSERT_ERR(FLEET_EBUSY, lock_rec_acquire(&e, &c, 0, 5000));
  ASSERT(!fleet_lock_held(&c.lock));

  info = lock_env_query(&e, &e.c2, "res");
  ASSERT_OK(info.status);
  ASSERT_EQ(1, info.held);
  ASSERT_STR_EQ("alpha", info.owner);
  ASSERT_UEQ(a.token, info.token);
  ASSERT_GT(info.ttl_ms, ttl - lag);
  ASSERT_LE(info.ttl_ms, ttl);
  ASSERT_UGE(info.fence, a.token);

  ASSERT_OK(lock_rec_release(&e, &a));
  ASSERT_STR_EQ("idle", lock_state(&a));
  ASSERT(!fleet_lock_held(&a.lock));
  ASSERT_EQ(0, fleet_lock_remaining_ms(&a.lock));
  /* Released already: nothing left to release. */
  ASSERT_ERR(FLEET_ESTALE, fleet_lock_release(&a.lock, lock_rec_on_release, 0));
  info = lock_env_query(&e, &e.c1, "res");
  ASSERT_EQ(0, info.held);
  ASSERT_UGE(info.fence, a.token);

  /* Every acquisition gets a token above all before. */
  prev = a.token;
  for (i = 0; i < 20; i++) {
    lock_rec_t *h = i % 2 ? &a : &c;
    ASSERT_OK(lock_rec_acquire(&e, h, 0, 5000));
    ASSERT_UGT(h->token, prev);
    prev = h->token;
    ASSERT_OK(lock_rec_release(&e, h));
  }
  ASSERT_EQ(0, a.lost + c.lost);
  lock_rec_close(&e, &a);
  lock_rec_close(&e, &c);
  lock_env_close(&e);
}

CONFORMANCE_IMPL(lock_query) {
  char owner[FLEET_LOCK_OWNER_MAX + 1];
  lock_rec_t a, w;
  lock_env_t e;
  lock_info_t info;

  lock_env_init(&e, b->url);
  info = lock_env_query(&e, &e.c1, "q");
  ASSERT_OK(info.status);
  ASSERT_EQ(0, info.held);
  ASSERT_EQ(0, info.token);
  ASSERT_EQ(0, info.fence);

  /* An owner id of the longest size, with the separator in it. */
  memset(owner, 'z', sizeof(owner) - 1);
  owner[sizeof(owner) - 1] = '\0';
  memcpy(owner, "12:x*", 5);
  ASSERT_OK(lock_rec_init(&a, &e.c1, "q", owner, 3000, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &a, 0, 5000));
  info = lock_env_query(&e, &e.c2, "q");
  ASSERT_EQ(1, info.held);
  ASSERT_STR_EQ(owner, info.owner);
  ASSERT_UEQ(a.token, info.token);
  ASSERT_UEQ(a.token, info.fence);

  /* A waiter marks the lease; the query still reads it right. */
  ASSERT_OK(lock_rec_init(&w, &e.c2, "q", "waiter", 3000, NULL));
  ASSERT_OK(fleet_lock_acquire(&w.lock, 5000, lock_rec_on_acquire, NULL));
  lock_env_sleep(&e, 100);
  ASSERT_EQ(0, w.acquired);
  info = lock_env_query(&e, &e.c2, "q");
  ASSERT_EQ(1, info.held);
  ASSERT_STR_EQ(owner, info.owner);
  ASSERT_UEQ(a.token, info.token);
  ASSERT_UGT(info.fence, a.token);

  ASSERT_OK(lock_rec_release(&e, &a));
  ASSERT(lock_env_wait(&e, &w.acquired, 1, 5000));
  ASSERT_OK(w.acq_status);
  info = lock_env_query(&e, &e.c1, "q");
  ASSERT_STR_EQ("waiter", info.owner);
  ASSERT_UEQ(w.token, info.token);
  lock_rec_close(&e, &a);
  lock_rec_close(&e, &w);
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Waiting                                                                  */

/* Whether the lock of the recorder `arg` is waiting for a release. */
static int lock_is_waiting(void *arg) {
  return strcmp(lock_state(arg), "waiting") == 0;
}

/* A waiter wakes on the release message, long before its fallback timer
 * (20 s) or the holder's TTL (10 s) would have made it retry. All three
 * windows are scaled alike, so the wakeup bound stays well below both. */
CONFORMANCE_IMPL(lock_wait_wakeup) {
  fleet_lock_options_t o;
  lock_rec_t a, w;
  lock_env_t e;
  uint64_t t0;

  lock_env_init(&e, b->url);
  ASSERT_OK(lock_rec_init(&a, &e.c1, "wake", "holder",
                          (uint32_t)fleet_test_ms(10000), NULL));
  fleet_lock_options_init(&o);
  o.retry_max_ms = (uint32_t)fleet_test_ms(20000);
  ASSERT_OK(lock_rec_init(&w, &e.c2, "wake", "waiter",
                          (uint32_t)fleet_test_ms(10000), &o));
  ASSERT_OK(lock_rec_acquire(&e, &a, 0, 5000));
  ASSERT_OK(fleet_lock_acquire(&w.lock, fleet_test_ms(15000),
                               lock_rec_on_acquire, NULL));
  ASSERT(fleet_test_run_until(&e.loop, lock_is_waiting, &w,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(0, w.acquired);
  t0 = lock_env_now();
  ASSERT_OK(lock_rec_release(&e, &a));
  ASSERT(lock_env_wait(&e, &w.acquired, 1, 5000));
  ASSERT_OK(w.acq_status);
  ASSERT_LT(w.acquired_ms - t0, fleet_test_ms(2000));
  ASSERT_UGT(w.token, a.token);
  ASSERT(fleet_lock_held(&w.lock));
  lock_rec_close(&e, &a);
  lock_rec_close(&e, &w);
  lock_env_close(&e);
}

/* A wait that runs out gives FLEET_ETIMEDOUT, and waiting does not hammer
 * the backend: every attempt takes a token from the fence, and only a few
 * were taken in the wait. */
CONFORMANCE_IMPL(lock_wait_timeout) {
  lock_rec_t a, w;
  lock_env_t e;
  lock_info_t info;
  uint64_t t0;

  lock_env_init(&e, b->url);
  ASSERT_OK(lock_rec_init(&a, &e.c1, "busy", "holder", 5000, NULL));
  ASSERT_OK(lock_rec_init(&w, &e.c2, "busy", "waiter", 5000, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &a, 0, 5000));
  t0 = lock_env_now();
  ASSERT_ERR(FLEET_ETIMEDOUT, lock_rec_acquire(&e, &w, 400, 5000));
  ASSERT_GE(w.acquired_ms - t0, 350);
  ASSERT_LT(w.acquired_ms - t0, fleet_test_ms(3000));
  ASSERT(!fleet_lock_held(&w.lock));
  info = lock_env_query(&e, &e.c1, "busy");
  ASSERT_UEQ(a.token, info.token);
  ASSERT_ULE(info.fence - a.token, 4);
  /* The handle can try again. */
  ASSERT_OK(lock_rec_release(&e, &a));
  ASSERT_OK(lock_rec_acquire(&e, &w, 400, 5000));
  lock_rec_close(&e, &a);
  lock_rec_close(&e, &w);
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Expiry, loss, stale tokens                                               */

typedef struct {
  lock_rec_t *holder;
  int holder_lost_first;
  int holder_held;
} takeover_check_t;

/* The taker's acquire callback: at this moment the old holder must know
 * it lost the lease. */
static void on_takeover(fleet_lock_t *lock, int status, uint64_t token,
                        void *arg) {
  takeover_check_t *t = arg;

  t->holder_lost_first = t->holder->lost;
  t->holder_held = fleet_lock_held(&t->holder->lock);
  lock_rec_on_acquire(lock, status, token, NULL);
}

/* A holder that does not renew loses its lease at its local deadline,
 * before the server expires it; a waiter takes it over when the TTL runs
 * out (no release is published), with a greater token; the old holder's
 * renew and release are then refused and change nothing. */
CONFORMANCE_IMPL(lock_expiry_takeover) {
  /* Scaled: the local deadline's margin is a share of the TTL, and it must
   * cover a late timer on a loaded machine. */
  const uint32_t ttl = (uint32_t)fleet_test_ms(300);
  fleet_lock_options_t o;
  takeover_check_t check;
  lock_rec_t a, w;
  lock_env_t e;
  lock_info_t info;

  lock_env_init(&e, b->url);
  fleet_lock_options_init(&o);
  o.manual_renew = 1;
  ASSERT_OK(lock_rec_init(&a, &e.c1, "exp", "holder", ttl, &o));
  fleet_lock_options_init(&o);
  o.retry_max_ms = 20000;
  ASSERT_OK(lock_rec_init(&w, &e.c2, "exp", "taker", ttl, &o));
  ASSERT_OK(lock_rec_acquire(&e, &a, 0, 5000));
  memset(&check, 0, sizeof(check));
  check.holder = &a;
  ASSERT_OK(fleet_lock_acquire(&w.lock, 10000, on_takeover, &check));
  ASSERT(lock_env_wait(&e, &w.acquired, 1, 5000));
  ASSERT_OK(w.acq_status);
  ASSERT_UGT(w.token, a.token);
  ASSERT_EQ(1, check.holder_lost_first);
  ASSERT_EQ(0, check.holder_held);
  ASSERT_ERR(FLEET_ETIMEDOUT, a.lost_status);
  ASSERT_UEQ(a.token, a.lost_token);
  ASSERT_STR_EQ("lost", lock_state(&a));
  /* Lost locally before the server could hand the lease over: at least
   * the TTL passed before the takeover, and less before the loss. */
  ASSERT_GE(w.acquired_ms - a.acquired_ms, ttl - 10);
  ASSERT_LT(a.lost_ms - a.acquired_ms, ttl);
  ASSERT_LE(a.lost_ms, w.acquired_ms);

  ASSERT_ERR(FLEET_ESTALE, fleet_lock_renew(&a.lock, lock_rec_on_renew, 0));
  ASSERT_ERR(FLEET_ESTALE, lock_rec_release(&e, &a));
  info = lock_env_query(&e, &e.c1, "exp");
  ASSERT_EQ(1, info.held);
  ASSERT_STR_EQ("taker", info.owner);
  ASSERT_UEQ(w.token, info.token);
  ASSERT(fleet_lock_held(&w.lock));
  ASSERT_EQ(1, a.lost);
  ASSERT_EQ(0, w.lost);
  ASSERT_OK(lock_rec_release(&e, &w));
  lock_rec_close(&e, &a);
  lock_rec_close(&e, &w);
  lock_env_close(&e);
}

/* A manual renew extends the lease; after the lease is lost, a renew is
 * refused at once. */
CONFORMANCE_IMPL(lock_manual_renew) {
  const uint32_t ttl = (uint32_t)fleet_test_ms(300);
  fleet_lock_options_t o;
  lock_rec_t a;
  lock_env_t e;
  int i;

  lock_env_init(&e, b->url);
  fleet_lock_options_init(&o);
  o.manual_renew = 1;
  ASSERT_OK(lock_rec_init(&a, &e.c1, "man", "holder", ttl, &o));
  ASSERT_OK(lock_rec_acquire(&e, &a, 0, 5000));
  /* Six renewals a third of the TTL apart: twice the TTL in all. */
  for (i = 0; i < 6; i++) {
    lock_env_sleep(&e, ttl / 3);
    ASSERT_OK(lock_rec_renew(&e, &a));
    ASSERT(fleet_lock_held(&a.lock));
    ASSERT_UGT(fleet_lock_remaining_ms(&a.lock), ttl / 2);
  }
  ASSERT_EQ(0, a.lost);
  ASSERT(lock_env_wait(&e, &a.lost, 1, 2000));
  ASSERT_ERR(FLEET_ETIMEDOUT, a.lost_status);
  ASSERT_ERR(FLEET_ESTALE, fleet_lock_renew(&a.lock, lock_rec_on_renew, 0));
  lock_rec_close(&e, &a);
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Auto-renewal                                                             */

#define BATCH_LOCKS 10

/* Calls per batch of the locks "<stem><i>" (i < n) and `extra` (or NULL):
 * one on a single server; on a cluster, where a batch splits by hash
 * slot, one per distinct slot of their tags "{locktest:<name>}". */
static uint64_t lock_batch_calls(const fleet_test_backend_t *b,
                                 const char *stem, int n, const char *extra) {
  static unsigned char seen[16384];
  char tag[64];
  uint64_t calls = 0;
  int i;

  if (b->cluster == NULL)
    return 1;
  memset(seen, 0, sizeof(seen));
  for (i = 0; i <= n; i++) {
    uint16_t slot;
    if (i == n && extra == NULL)
      break;
    if (i == n)
      snprintf(tag, sizeof(tag), "{locktest:%s}", extra);
    else
      snprintf(tag, sizeof(tag), "{locktest:%s%d}", stem, i);
    slot = fleet__key_slot(tag, strlen(tag));
    calls += !seen[slot];
    seen[slot] = 1;
  }
  return calls;
}

/* Leases outlive their TTL several times over while renewed, and all the
 * leases of one client due together are renewed by one call per tick. */
CONFORMANCE_IMPL(lock_auto_renew) {
  /* Scaled, so that a renew tick delayed by load still comes in time. */
  const uint32_t ttl = (uint32_t)fleet_test_ms(300);
  lock_rec_t a, other, many[BATCH_LOCKS];
  uint64_t batches0, leases0, batches, leases;
  lock_env_t e;
  lock_info_t info;
  char name[32];
  int i, acquired = 0;

  lock_env_init(&e, b->url);
  ASSERT_OK(lock_rec_init(&a, &e.c1, "renew", "holder", ttl, NULL));
  ASSERT_OK(lock_rec_init(&other, &e.c2, "renew", "other", ttl, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &a, 0, 5000));
  lock_env_sleep(&e, 4 * ttl);
  ASSERT_EQ(0, a.lost);
  ASSERT(fleet_lock_held(&a.lock));
  info = lock_env_query(&e, &e.c2, "renew");
  ASSERT_UEQ(a.token, info.token);
  ASSERT_GT(info.ttl_ms, ttl / 3);
  ASSERT_ERR(FLEET_EBUSY, lock_rec_acquire(&e, &other, 0, 5000));

  for (i = 0; i < BATCH_LOCKS; i++) {
    snprintf(name, sizeof(name), "batch-%d", i);
    ASSERT_OK(lock_rec_init(&many[i], &e.c2, name, "batcher", ttl, NULL));
    ASSERT_OK(fleet_lock_acquire(&many[i].lock, 0, lock_rec_on_acquire, 0));
  }
  for (i = 0; i < BATCH_LOCKS; i++) {
    ASSERT(lock_env_wait(&e, &many[i].acquired, 1, 5000));
    ASSERT_OK(many[i].acq_status);
  }
  fleet__batch_stats(e.c2.internal_, &batches0, &leases0);
  lock_env_sleep(&e, ttl * 8 / 3);
  fleet__batch_stats(e.c2.internal_, &batches, &leases);
  ASSERT_UGE(batches - batches0,
             3 * lock_batch_calls(b, "batch-", BATCH_LOCKS, NULL));
  ASSERT_UEQ((uint64_t)BATCH_LOCKS * (batches - batches0),
             (leases - leases0) *
                 lock_batch_calls(b, "batch-", BATCH_LOCKS, NULL));
  for (i = 0; i < BATCH_LOCKS; i++) {
    ASSERT_EQ(0, many[i].lost);
    acquired += fleet_lock_held(&many[i].lock);
    lock_rec_close(&e, &many[i]);
  }
  ASSERT_EQ(BATCH_LOCKS, acquired);
  ASSERT_EQ(0, a.lost);
  lock_rec_close(&e, &a);
  lock_rec_close(&e, &other);
  lock_env_close(&e);
}

/* A holder keeps renewing a lease that carries a waiter's mark ("*" in
 * front: lock_acquire.lua writes it when another client waits): with a
 * short TTL and auto-renew, A still holds after three TTLs while B waits,
 * and B has not acquired; once A releases, B gets it. (lock_renew.lua
 * that forgot the mark would let the lease run out under A.) */
CONFORMANCE_IMPL(lock_renew_waited) {
  const uint32_t ttl = (uint32_t)fleet_test_ms(300);
  lock_rec_t a, waiter;
  lock_env_t e;
  lock_info_t info;

  lock_env_init(&e, b->url);
  ASSERT_OK(lock_rec_init(&a, &e.c1, "waited", "holder", ttl, NULL));
  ASSERT_OK(lock_rec_init(&waiter, &e.c2, "waited", "waiter", ttl, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &a, 0, 5000));
  ASSERT_OK(fleet_lock_acquire(&waiter.lock, FLEET_LOCK_WAIT_FOREVER,
                               lock_rec_on_acquire, NULL));
  lock_env_sleep(&e, 3 * ttl + ttl / 2);
  ASSERT_EQ(0, a.lost);
  ASSERT(fleet_lock_held(&a.lock));
  ASSERT_EQ(0, waiter.acquired);
  info = lock_env_query(&e, &e.c2, "waited");
  ASSERT_EQ(1, info.held);
  ASSERT_UEQ(a.token, info.token);
  ASSERT_STR_EQ("holder", info.owner);
  ASSERT_OK(lock_rec_release(&e, &a));
  ASSERT(lock_env_wait(&e, &waiter.acquired, 1, 5000));
  ASSERT_OK(waiter.acq_status);
  ASSERT_UGT(waiter.token, a.token);
  lock_rec_close(&e, &a);
  lock_rec_close(&e, &waiter);
  lock_env_close(&e);
}

/* Acquires issued in one loop iteration go out as one call, each lock
 * with its own result (granted, or busy within the same call), and so do
 * releases. Waiters woken by one batch of releases all get the lease. */
CONFORMANCE_IMPL(lock_batch) {
  const uint32_t ttl = (uint32_t)fleet_test_ms(10000);
  lock_rec_t many[BATCH_LOCKS], busy, holder, waiters[BATCH_LOCKS];
  uint64_t calls0, items0, calls, items, prev = 0;
  lock_env_t e;
  char name[32];
  int i;

  lock_env_init(&e, b->url);
  ASSERT_OK(lock_rec_init(&holder, &e.c1, "nb-busy", "holder", ttl, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &holder, 0, 5000));
  ASSERT_OK(lock_rec_init(&busy, &e.c2, "nb-busy", "other", ttl, NULL));
  for (i = 0; i < BATCH_LOCKS; i++) {
    snprintf(name, sizeof(name), "nb-%d", i);
    ASSERT_OK(lock_rec_init(&many[i], &e.c2, name, "many", ttl, NULL));
    ASSERT_OK(lock_rec_init(&waiters[i], &e.c1, name, "waiter", ttl, NULL));
  }

  fleet__batch_stats(e.c2.internal_, &calls0, &items0);
  for (i = 0; i < BATCH_LOCKS; i++)
    ASSERT_OK(fleet_lock_acquire(&many[i].lock, 0, lock_rec_on_acquire, 0));
  ASSERT_OK(fleet_lock_acquire(&busy.lock, 0, lock_rec_on_acquire, 0));
  ASSERT(lock_env_wait(&e, &busy.acquired, 1, 5000));
  for (i = 0; i < BATCH_LOCKS; i++) {
    ASSERT(lock_env_wait(&e, &many[i].acquired, 1, 5000));
    ASSERT_OK(many[i].acq_status);
    ASSERT_UGT(many[i].token, 0);
    ASSERT(fleet_lock_held(&many[i].lock));
  }
  ASSERT_ERR(FLEET_EBUSY, busy.acq_status);
  fleet__batch_stats(e.c2.internal_, &calls, &items);
  ASSERT_UEQ(lock_batch_calls(b, "nb-", BATCH_LOCKS, "nb-busy"),
             calls - calls0);
  ASSERT_UEQ(BATCH_LOCKS + 1, items - items0);

  /* Waiters on another client mark the leases; one batch of releases
   * wakes them all. */
  for (i = 0; i < BATCH_LOCKS; i++)
    ASSERT_OK(fleet_lock_acquire(&waiters[i].lock, FLEET_LOCK_WAIT_FOREVER,
                                 lock_rec_on_acquire, 0));
  lock_env_sleep(&e, 50);
  for (i = 0; i < BATCH_LOCKS; i++)
    ASSERT_EQ(0, waiters[i].acquired);
  fleet__batch_stats(e.c2.internal_, &calls0, &items0);
  for (i = 0; i < BATCH_LOCKS; i++)
    ASSERT_OK(fleet_lock_release(&many[i].lock, lock_rec_on_release, 0));
  for (i = 0; i < BATCH_LOCKS; i++) {
    ASSERT(lock_env_wait(&e, &many[i].released, 1, 5000));
    ASSERT_OK(many[i].rel_status);
    ASSERT(lock_env_wait(&e, &waiters[i].acquired, 1, 5000));
    ASSERT_OK(waiters[i].acq_status);
    ASSERT_UGT(waiters[i].token, many[i].token);
  }
  fleet__batch_stats(e.c2.internal_, &calls, &items);
  ASSERT_UEQ(lock_batch_calls(b, "nb-", BATCH_LOCKS, NULL), calls - calls0);
  ASSERT_UEQ(BATCH_LOCKS, items - items0);

  /* Tokens stay strictly increasing per name through batches. */
  for (i = 0; i < BATCH_LOCKS; i++)
    ASSERT_OK(fleet_lock_release(&waiters[i].lock, lock_rec_on_release, 0));
  for (i = 0; i < BATCH_LOCKS; i++)
    ASSERT(lock_env_wait(&e, &waiters[i].released, 1, 5000));
  for (i = 0; i < 3; i++) {
    ASSERT_OK(lock_rec_acquire(&e, &many[0], 0, 5000));
    ASSERT_UGT(many[0].token, i == 0 ? waiters[0].token : prev);
    prev = many[0].token;
    ASSERT_OK(lock_rec_release(&e, &many[0]));
  }
  for (i = 0; i < BATCH_LOCKS; i++) {
    ASSERT_EQ(0, many[i].lost + waiters[i].lost);
    lock_rec_close(&e, &many[i]);
    lock_rec_close(&e, &waiters[i]);
  }
  lock_rec_close(&e, &busy);
  lock_rec_close(&e, &holder);
  lock_env_close(&e);
}

/* The calls of a batch of the locks "<stem><i>" (i < n) that carry two
 * locks or more: one on a single server; on a cluster, one per slot that
 * holds two or more of their tags. */
static uint64_t lock_batch_multi(const fleet_test_backend_t *b,
                                 const char *stem, int n) {
  static unsigned char seen[16384];
  char tag[64];
  uint64_t calls = 0;
  int i;

  if (b->cluster == NULL)
    return n > 1;
  memset(seen, 0, sizeof(seen));
  for (i = 0; i < n; i++) {
    uint16_t slot;
    snprintf(tag, sizeof(tag), "{locktest:%s%d}", stem, i);
    slot = fleet__key_slot(tag, strlen(tag));
    calls += seen[slot] == 1;
    if (seen[slot] < 2)
      seen[slot]++;
  }
  return calls;
}

typedef struct {
  int done, status;
  int64_t v[4];
} lock_raw_t;

static void lock_on_raw(void *arg, int status, const fleet__reply_t *reply) {
  lock_raw_t *r = arg;
  size_t i;

  r->status = status;
  if (status == 0) {
    ASSERT_EQ(FLEET__REPLY_ARRAY, reply->type);
    ASSERT_UEQ(4, reply->nelem);
    for (i = 0; i < 4; i++)
      r->v[i] = reply->elem[i].integer;
  }
  r->done = 1;
}

/* LOCK_ACQUIRE itself on two leases of one slot with the `argc` strings
 * `a` (the adapter appends the epoch). */
static lock_raw_t lock_raw_acquire(lock_env_t *e, const char *const *a,
                                   size_t argc) {
  fleet_bytes_t keys[2] = {{"{locktest:raw}1", 15}, {"{locktest:raw}2", 15}};
  fleet_bytes_t args[6];
  lock_raw_t r;
  size_t i;

  for (i = 0; i < argc; i++) {
    args[i].base = a[i];
    args[i].len = strlen(a[i]);
  }
  memset(&r, 0, sizeof(r));
  ASSERT_OK(fleet__backend_call(fleet__client_backend(&e->c1),
                                FLEET__OP_LOCK_ACQUIRE, keys, 2, args, argc,
                                lock_on_raw, &r));
  ASSERT(lock_env_wait(e, &r.done, 1, 5000));
  return r;
}

/* Acquires of one owner and TTL that share a call send the owner, the TTL
 * and the mark once (lock_acquire.lua's short form), and every lease is
 * what it would be sent one by one; handles whose TTLs differ send them
 * per lock, each lease with its own TTL. The script itself takes either
 * form and refuses an ARGV of another length, writing nothing. */
CONFORMANCE_IMPL(lock_batch_once) {
  const uint32_t ttl_a = 20000, ttl_b = 60000;
  static const char *const shortf[] = {"raw", "30000", "0"};
  static const char *const bad[] = {"raw", "30000", "0", "raw", "30000"};
  lock_rec_t same[BATCH_LOCKS], mixed[BATCH_LOCKS];
  uint64_t once0, once, calls0, items0, calls, items;
  lock_env_t e;
  lock_info_t info;
  lock_raw_t r;
  char name[32];
  int i;

  lock_env_init(&e, b->url);
  for (i = 0; i < BATCH_LOCKS; i++) {
    snprintf(name, sizeof(name), "once-%d", i);
    ASSERT_OK(lock_rec_init(&same[i], &e.c2, name, "same", ttl_a, NULL));
    snprintf(name, sizeof(name), "mixed-%d", i);
    ASSERT_OK(lock_rec_init(&mixed[i], &e.c2, name, "same",
                            i % 2 ? ttl_b : ttl_a, NULL));
  }

  once0 = fleet__batch_once(e.c2.internal_);
  fleet__batch_stats(e.c2.internal_, &calls0, &items0);
  for (i = 0; i < BATCH_LOCKS; i++)
    ASSERT_OK(fleet_lock_acquire(&same[i].lock, 0, lock_rec_on_acquire, 0));
  for (i = 0; i < BATCH_LOCKS; i++) {
    ASSERT(lock_env_wait(&e, &same[i].acquired, 1, 5000));
    ASSERT_OK(same[i].acq_status);
    ASSERT_UGT(same[i].token, 0);
  }
  once = fleet__batch_once(e.c2.internal_);
  fleet__batch_stats(e.c2.internal_, &calls, &items);
  ASSERT_UEQ(lock_batch_calls(b, "once-", BATCH_LOCKS, NULL), calls - calls0);
  ASSERT_UEQ(lock_batch_multi(b, "once-", BATCH_LOCKS), once - once0);
  if (b->cluster == NULL)
    ASSERT_UEQ(1, once - once0);
  for (i = 0; i < BATCH_LOCKS; i++) {
    snprintf(name, sizeof(name), "once-%d", i);
    info = lock_env_query(&e, &e.c1, name);
    ASSERT_EQ(1, info.held);
    ASSERT_STR_EQ("same", info.owner);
    ASSERT_UEQ(same[i].token, info.token);
    ASSERT_GT(info.ttl_ms, ttl_a / 2);
    ASSERT_LE(info.ttl_ms, ttl_a);
  }

  /* Two TTLs in one call: each lock carries its own. */
  once0 = fleet__batch_once(e.c2.internal_);
  for (i = 0; i < BATCH_LOCKS; i++)
    ASSERT_OK(fleet_lock_acquire(&mixed[i].lock, 0, lock_rec_on_acquire, 0));
  for (i = 0; i < BATCH_LOCKS; i++) {
    ASSERT(lock_env_wait(&e, &mixed[i].acquired, 1, 5000));
    ASSERT_OK(mixed[i].acq_status);
  }
  if (b->cluster == NULL)
    ASSERT_UEQ(once0, fleet__batch_once(e.c2.internal_));
  for (i = 0; i < BATCH_LOCKS; i++) {
    uint32_t ttl = i % 2 ? ttl_b : ttl_a;
    snprintf(name, sizeof(name), "mixed-%d", i);
    info = lock_env_query(&e, &e.c1, name);
    ASSERT_EQ(1, info.held);
    ASSERT_UEQ(mixed[i].token, info.token);
    ASSERT_GT(info.ttl_ms, ttl * 2 / 3);
    ASSERT_LE(info.ttl_ms, ttl);
  }

  /* The script: an ARGV of neither form is refused, nothing written; the
   * short form takes both leases; again, both are busy with their TTL. */
  r = lock_raw_acquire(&e, bad, 5);
  ASSERT_ERR(FLEET_EINVAL, r.status);
  r = lock_raw_acquire(&e, shortf, 3);
  ASSERT_OK(r.status);
  ASSERT_GT(r.v[0], 0);
  ASSERT_GT(r.v[2], 0);
  ASSERT_EQ(0, r.v[1] + r.v[3]);
  r = lock_raw_acquire(&e, shortf, 3);
  ASSERT_OK(r.status);
  ASSERT_EQ(0, r.v[0] + r.v[2]);
  ASSERT_GT(r.v[1], 15000);
  ASSERT_GT(r.v[3], 15000);

  for (i = 0; i < BATCH_LOCKS; i++) {
    lock_rec_close(&e, &same[i]);
    lock_rec_close(&e, &mixed[i]);
  }
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Close                                                                    */

static void close_in_acquire_cb(fleet_lock_t *lock, int status, uint64_t token,
                                void *arg) {
  lock_rec_on_acquire(lock, status, token, arg);
  ASSERT_OK(fleet_lock_close(lock, lock_rec_on_close));
  ASSERT_ERR(FLEET_ECLOSING, fleet_lock_release(lock, lock_rec_on_release, 0));
}

/* Closing cancels a wait, gives a held lease back, releases a lease granted
 * to an attempt still in flight, and works from inside a callback. */
CONFORMANCE_IMPL(lock_close) {
  lock_rec_t a, w, c, d, f;
  lock_env_t e;

  lock_env_init(&e, b->url);
  ASSERT_OK(lock_rec_init(&a, &e.c1, "cl", "holder", 5000, NULL));
  ASSERT_OK(lock_rec_init(&w, &e.c2, "cl", "waiter", 5000, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &a, 0, 5000));

  /* A waiter: its acquire completes with FLEET_ECANCELED, after close. */
  ASSERT_OK(fleet_lock_acquire(&w.lock, FLEET_LOCK_WAIT_FOREVER,
                               lock_rec_on_acquire, NULL));
  lock_env_sleep(&e, 100);
  w.in_call = 1;
  ASSERT_OK(fleet_lock_close(&w.lock, lock_rec_on_close));
  w.in_call = 0;
  ASSERT(lock_env_wait(&e, &w.closed, 1, 5000));
  ASSERT_EQ(0, w.ran_in_call);
  ASSERT_EQ(1, w.acquired);
  ASSERT_ERR(FLEET_ECANCELED, w.acq_status);
  ASSERT(fleet_lock_held(&a.lock));

  /* A holder: closing releases the lease for others at once. */
  lock_rec_close(&e, &a);
  ASSERT_EQ(0, a.lost);
  ASSERT_OK(lock_rec_init(&c, &e.c2, "cl", "second", 5000, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &c, 0, 5000));
  ASSERT_UGT(c.token, a.token);

  /* An attempt in flight when closing: the grant is given back. */
  lock_rec_close(&e, &c);
  ASSERT_OK(lock_rec_init(&d, &e.c1, "cl", "third", 5000, NULL));
  ASSERT_OK(fleet_lock_acquire(&d.lock, 0, lock_rec_on_acquire, NULL));
  ASSERT_OK(fleet_lock_close(&d.lock, lock_rec_on_close));
  ASSERT(lock_env_wait(&e, &d.closed, 1, 5000));
  ASSERT_ERR(FLEET_ECANCELED, d.acq_status);
  ASSERT_OK(lock_rec_init(&f, &e.c2, "cl", "fourth", 5000, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &f, 0, 5000));

  /* Closing from inside the acquire callback. */
  lock_rec_close(&e, &f);
  ASSERT_OK(lock_rec_init(&d, &e.c1, "cl", "fifth", 5000, NULL));
  ASSERT_OK(fleet_lock_acquire(&d.lock, 0, close_in_acquire_cb, NULL));
  ASSERT(lock_env_wait(&e, &d.closed, 1, 5000));
  ASSERT_OK(d.acq_status);
  ASSERT_OK(lock_rec_init(&f, &e.c2, "cl", "sixth", 5000, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &f, 0, 5000));
  lock_rec_close(&e, &f);
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Calls from inside callbacks                                              */

#define CHAIN_ROUNDS 100

typedef struct {
  lock_rec_t rec;
  int rounds;
  uint64_t last;
  int done;
} chain_t;

static void chain_on_release(fleet_handle_t *lock_h, int status, void *arg);

static void chain_on_acquire(fleet_lock_t *lock, int status, uint64_t token,
                             void *arg) {
  chain_t *ch = arg;

  ASSERT_OK(status);
  ASSERT_UGT(token, ch->last);
  ASSERT(fleet_lock_held(lock));
  ch->last = token;
  ASSERT_OK(fleet_lock_release(lock, chain_on_release, ch));
  ASSERT(!fleet_lock_held(lock));
}

static void chain_on_release(fleet_handle_t *lock_h, int status, void *arg) {
  fleet_lock_t *lock = (fleet_lock_t *)lock_h;
  chain_t *ch = arg;

  ASSERT_OK(status);
  if (++ch->rounds == CHAIN_ROUNDS) {
    ASSERT_OK(fleet_lock_close(lock, lock_rec_on_close));
    ch->done = 1;
    return;
  }
  ASSERT_OK(
      fleet_lock_acquire(lock, fleet_test_ms(1000), chain_on_acquire, ch));
}

/* Acquire, release and close called from inside each other's callbacks,
 * on two handles contending for one name. */
CONFORMANCE_IMPL(lock_callback_chain) {
  chain_t x, y;
  lock_env_t e;

  lock_env_init(&e, b->url);
  memset(&x, 0, sizeof(x));
  memset(&y, 0, sizeof(y));
  ASSERT_OK(lock_rec_init(&x.rec, &e.c1, "chain", "x",
                          (uint32_t)fleet_test_ms(2000), NULL));
  ASSERT_OK(lock_rec_init(&y.rec, &e.c2, "chain", "y",
                          (uint32_t)fleet_test_ms(2000), NULL));
  ASSERT_OK(fleet_lock_acquire(&x.rec.lock, fleet_test_ms(1000),
                               chain_on_acquire, &x));
  ASSERT_OK(fleet_lock_acquire(&y.rec.lock, fleet_test_ms(1000),
                               chain_on_acquire, &y));
  ASSERT(lock_env_wait(&e, &x.rec.closed, 1, 20000));
  ASSERT(lock_env_wait(&e, &y.rec.closed, 1, 20000));
  ASSERT_EQ(CHAIN_ROUNDS, x.rounds);
  ASSERT_EQ(CHAIN_ROUNDS, y.rounds);
  ASSERT_EQ(0, x.rec.lost + y.rec.lost);
  lock_env_close(&e);
}
