/* test_lock_with.c -- fleet_with_lock() on both adapters: the work runs
 * with the lease's token, asynchronously, and the lease is released when
 * it says done; a busy lease reports FLEET_EBUSY without running the work;
 * the work's own error is reported once; a lost lease reaches the lost
 * callback and fleet_with_lock_lost() (its renewal stopped, on both
 * backends; its key deleted, on Redis) and is the run's error; bad input
 * is refused with no callback. */
#include "test_lock_env.h"

/* What one run's callbacks saw. */
typedef struct {
  lock_env_t *e;
  int ran, lost, done;
  uint64_t token;
  int lost_status, done_status;
  int lost_seen;   /* fleet_with_lock_lost() inside the lost callback */
  int lost_in_run; /* fleet_with_lock_lost() inside the run callback */
  int finish_now;  /* call fleet_with_lock_done() from the run callback */
  int result;      /* what the work passes to fleet_with_lock_done() */
  int in_call;     /* set around fleet_with_lock() */
  int ran_in_call; /* a callback ran inside fleet_with_lock() */
  fleet_with_lock_t *run;
} wl_rec_t;

static void wl_run(fleet_with_lock_t *run, uint64_t token, void *arg) {
  wl_rec_t *r = arg;

  r->ran_in_call |= r->in_call;
  r->ran++;
  r->token = token;
  r->run = run;
  ASSERT_UEQ(token, fleet_with_lock_token(run));
  r->lost_in_run = fleet_with_lock_lost(run);
  if (r->finish_now) {
    ASSERT_OK(fleet_with_lock_done(run, r->result));
    ASSERT_ERR(FLEET_EALREADY, fleet_with_lock_done(run, 0));
    ASSERT_ERR(FLEET_ECANCELED, fleet_with_lock_lost(run));
  }
}

static void wl_lost(fleet_with_lock_t *run, int status, void *arg) {
  wl_rec_t *r = arg;

  r->lost++;
  r->lost_status = status;
  r->lost_seen = fleet_with_lock_lost(run);
}

static void wl_done(fleet_client_t *client, int status, void *arg) {
  wl_rec_t *r = arg;

  ASSERT_NOT_NULL(client);
  r->ran_in_call |= r->in_call;
  r->done++;
  r->done_status = status;
}

/* Starts a run of the lease `name` (owner "w") and asserts it started. */
static void wl_start(wl_rec_t *r, fleet_client_t *c, const char *name,
                     uint32_t ttl, const fleet_with_lock_options_t *o) {
  r->in_call = 1;
  ASSERT_OK(fleet_with_lock(c, name, "w", ttl, o, wl_run, wl_done, r));
  r->in_call = 0;
}

static void never_run(fleet_with_lock_t *run, uint64_t token, void *arg) {
  (void)run;
  (void)token;
  (void)arg;
  ASSERT(0);
}

static void never_done(fleet_client_t *client, int status, void *arg) {
  (void)client;
  (void)status;
  (void)arg;
  ASSERT(0);
}

CONFORMANCE_IMPL(with_lock_run) {
  const uint32_t ttl = (uint32_t)fleet_test_ms(2000);
  fleet_with_lock_options_t o;
  wl_rec_t a = {0}, b2 = {0}, busy = {0}, fail = {0};
  lock_rec_t holder;
  lock_info_t info;
  lock_env_t e;

  lock_env_init(&e, b->url);
  /* Bad input: refused at once, no callback, nothing left on the loop. */
  ASSERT_ERR(FLEET_EINVAL, fleet_with_lock(NULL, "x", "w", ttl, NULL, never_run,
                                           never_done, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_with_lock(&e.c1, "x", "w", ttl, NULL, NULL,
                                           never_done, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_with_lock(&e.c1, "x", "w", ttl, NULL,
                                           never_run, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_with_lock(&e.c1, "", "w", ttl, NULL, never_run,
                                           never_done, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_with_lock(&e.c1, "x", "w", 1, NULL, never_run,
                                           never_done, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_with_lock_done(NULL, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_with_lock_lost(NULL));
  ASSERT_UEQ(0, fleet_with_lock_token(NULL));

  /* The work runs with the token and ends later: the lease is held until
   * then, and released after. */
  wl_start(&a, &e.c1, "wl", ttl, NULL);
  ASSERT(lock_env_wait(&e, &a.ran, 1, 5000));
  ASSERT_UGT(a.token, 0);
  ASSERT_EQ(0, a.lost_in_run);
  info = lock_env_query(&e, &e.c2, "wl");
  ASSERT(info.held);
  ASSERT_UEQ(a.token, info.token);
  ASSERT_STR_EQ("w", info.owner);
  lock_env_sleep(&e, 50);
  ASSERT_EQ(0, fleet_with_lock_lost(a.run));
  ASSERT_EQ(0, a.done);
  ASSERT_ERR(FLEET_EINVAL, fleet_with_lock_done(a.run, 1));
  ASSERT_OK(fleet_with_lock_done(a.run, 0));
  ASSERT_EQ(0, a.done); /* never inside the call */
  ASSERT(lock_env_wait(&e, &a.done, 1, 5000));
  ASSERT_OK(a.done_status);
  ASSERT_EQ(0, a.lost);
  ASSERT_EQ(0, a.ran_in_call);
  info = lock_env_query(&e, &e.c2, "wl");
  ASSERT_EQ(0, info.held);

  /* Done from the run callback; the next run's token is greater. */
  b2.finish_now = 1;
  wl_start(&b2, &e.c2, "wl", ttl, NULL);
  ASSERT(lock_env_wait(&e, &b2.done, 1, 5000));
  ASSERT_EQ(1, b2.ran);
  ASSERT_UGT(b2.token, a.token);
  ASSERT_OK(b2.done_status);

  /* Busy, try once: FLEET_EBUSY, the work never runs. */
  ASSERT_OK(lock_rec_init(&holder, &e.c2, "wl", "other", ttl, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &holder, 0, 5000));
  wl_start(&busy, &e.c1, "wl", ttl, NULL);
  ASSERT(lock_env_wait(&e, &busy.done, 1, 5000));
  ASSERT_EQ(0, busy.ran);
  ASSERT_ERR(FLEET_EBUSY, busy.done_status);
  /* Waiting: it runs once the holder lets go; the work's error is the
   * run's, reported once, and the lease is released all the same. */
  fleet_with_lock_options_init(&o);
  o.wait_ms = 5000;
  fail.finish_now = 1;
  fail.result = FLEET_ECONFLICT;
  wl_start(&fail, &e.c1, "wl", ttl, &o);
  lock_env_sleep(&e, 100);
  ASSERT_EQ(0, fail.ran);
  ASSERT_OK(lock_rec_release(&e, &holder));
  ASSERT(lock_env_wait(&e, &fail.done, 1, 5000));
  ASSERT_EQ(1, fail.ran);
  ASSERT_ERR(FLEET_ECONFLICT, fail.done_status);
  info = lock_env_query(&e, &e.c2, "wl");
  ASSERT_EQ(0, info.held);
  lock_env_sleep(&e, 50);
  ASSERT_EQ(1, fail.done);
  lock_rec_close(&e, &holder);
  lock_env_close(&e);
}

/* The renewal stopped (manual renewal, never renewed): the lease runs
 * out, the lost callback runs once with FLEET_ETIMEDOUT, polling sees it,
 * another owner takes the lease, and the run ends with that error. On
 * Redis also: the key deleted under a renewing run, FLEET_ESTALE at the
 * next renewal. */
CONFORMANCE_IMPL(with_lock_lost) {
  const uint32_t ttl = (uint32_t)fleet_test_ms(300);
  fleet_with_lock_options_t o;
  fleet_lock_options_t lo;
  wl_rec_t a = {0}, d = {0};
  lock_rec_t next;
  lock_env_t e;
  redisReply *rep;

  lock_env_init(&e, b->url);
  fleet_lock_options_init(&lo);
  lo.manual_renew = 1;
  fleet_with_lock_options_init(&o);
  o.lock_options = &lo;
  o.lost_cb = wl_lost;
  wl_start(&a, &e.c1, "wlost", ttl, &o);
  ASSERT(lock_env_wait(&e, &a.ran, 1, 5000));
  ASSERT_EQ(0, fleet_with_lock_lost(a.run));
  ASSERT(lock_env_wait(&e, &a.lost, 1, 3000));
  ASSERT_ERR(FLEET_ETIMEDOUT, a.lost_status);
  ASSERT_ERR(FLEET_ETIMEDOUT, a.lost_seen);
  ASSERT_ERR(FLEET_ETIMEDOUT, fleet_with_lock_lost(a.run));
  ASSERT_OK(lock_rec_init(&next, &e.c2, "wlost", "next", ttl * 10, NULL));
  ASSERT_OK(lock_rec_acquire(&e, &next, 5000, 5000));
  ASSERT_UGT(next.token, a.token);
  /* The work notices late and ends: the loss is the run's error; the
   * release finds another holder and changes nothing. */
  ASSERT_OK(fleet_with_lock_done(a.run, 0));
  ASSERT(lock_env_wait(&e, &a.done, 1, 5000));
  ASSERT_ERR(FLEET_ETIMEDOUT, a.done_status);
  ASSERT_EQ(1, a.lost);
  ASSERT(fleet_lock_held(&next.lock));
  ASSERT(lock_env_query(&e, &e.c1, "wlost").held);
  lock_rec_close(&e, &next);

  if (b->redis != NULL) {
    /* Renewing every ttl / 3: the key deleted behind its back. */
    fleet_with_lock_options_init(&o);
    o.lost_cb = wl_lost;
    wl_start(&d, &e.c1, "wdel", ttl, &o);
    ASSERT(lock_env_wait(&e, &d.ran, 1, 5000));
    rep = fleet_test_redis_cmd(b->redis, "DEL {locktest:wdel}:lock");
    ASSERT_NOT_NULL(rep);
    ASSERT_EQ(1, (int)rep->integer);
    freeReplyObject(rep);
    ASSERT(lock_env_wait(&e, &d.lost, 1, 3000));
    ASSERT_ERR(FLEET_ESTALE, d.lost_status);
    ASSERT_ERR(FLEET_ESTALE, fleet_with_lock_lost(d.run));
    ASSERT_OK(fleet_with_lock_done(d.run, 0));
    ASSERT(lock_env_wait(&e, &d.done, 1, 5000));
    ASSERT_ERR(FLEET_ESTALE, d.done_status);
    ASSERT_EQ(1, d.lost);
  }
  lock_env_close(&e);
}
