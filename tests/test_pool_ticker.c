/* test_pool_ticker.c -- pool tickers on both adapters: bad input, each
 * tick to exactly one of three nodes in sequence, a node that closes
 * while the others go on, stop for every node, and (on Redis) ticks that
 * survive errors and report what they missed. */
#include "pool/pool_int.h"
#include "test_lock_env.h"

#define TICKS_MAX 1024

/* What the tickers of one test saw. */
typedef struct {
  fleet_pool_ticker_t t[3];
  int per[3];     /* ticks per ticker */
  int stopped[3]; /* FLEET_ECANCELED callbacks */
  int after_stop; /* ticks after a stop callback */
  int errors;
  int total;
  int closed;
  uint64_t seq[TICKS_MAX];
  uint64_t at[TICKS_MAX];
  uint64_t missed;
} ticks_t;

static ticks_t *ticks_of(fleet_pool_ticker_t *t) {
  return t->data;
}

static void on_tick(fleet_pool_ticker_t *t, int status,
                    const fleet_pool_tick_t *tick) {
  ticks_t *k = ticks_of(t);
  int i = (int)(t - k->t);

  if (status != 0) {
    ASSERT_ERR(FLEET_ECANCELED, status);
    ASSERT_NULL(tick);
    k->stopped[i]++;
    return;
  }
  if (k->stopped[i])
    k->after_stop++;
  ASSERT_LT(k->total, TICKS_MAX);
  k->seq[k->total] = tick->seq;
  k->at[k->total] = tick->scheduled_ms;
  k->missed += tick->missed;
  k->total++;
  k->per[i]++;
}

static void on_tick_error(fleet_handle_t *h, int status, const char *detail) {
  ticks_of((fleet_pool_ticker_t *)h)->errors++;
}

static void on_ticker_close(fleet_handle_t *h) {
  ticks_of((fleet_pool_ticker_t *)h)->closed++;
}

/* Sequence numbers from `first` on, each exactly once, in order of
 * delivery (ticks are claimed in order), and due times one period or more
 * apart. */
static void check_seqs(const ticks_t *k, uint64_t first, uint32_t period) {
  int i;

  for (i = 0; i < k->total; i++) {
    ASSERT_UEQ(first + (uint64_t)i, k->seq[i]);
    if (i > 0)
      ASSERT_UGE(k->at[i] - k->at[i - 1], period);
  }
}

static void status_cb(fleet_handle_t *h, int status, void *arg) {
  int *s = arg;
  *s = status == 0 ? 1 : status;
}

CONFORMANCE_IMPL(pool_ticker_basic) {
  fleet_pool_ticker_options_t to;
  fleet_pool_node_t n1, n2;
  fleet_pool_node_options_t o;
  ticks_t k;
  lock_env_t e;
  int i, stopped = 0;

  lock_env_init(&e, b->url);
  memset(&k, 0, sizeof(k));
  fleet_pool_node_options_init(&o);
  o.client_only = 1;
  ASSERT_OK(fleet_pool_node_init(&e.c1, &n1, "p", "a", &o));
  ASSERT_OK(fleet_pool_node_init(&e.c2, &n2, "p", "b", &o));

  fleet_pool_ticker_options_init(&to);
  ASSERT_NULL(to.error_cb);
  to.error_cb = on_tick_error;
  ASSERT_ERR(FLEET_EINVAL,
             fleet_pool_ticker_init(NULL, &k.t[0], "t", 50, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_ticker_init(&n1, NULL, "t", 50, &to));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_ticker_init(&n1, &k.t[0], "", 50, &to));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_pool_ticker_init(&n1, &k.t[0], "t",
                                    FLEET_POOL_TICK_MIN_MS - 1, NULL));
  ASSERT_NULL(k.t[0].internal_);

  for (i = 0; i < 3; i++) {
    k.t[i].data = &k;
    ASSERT_OK(
        fleet_pool_ticker_init(i == 1 ? &n2 : &n1, &k.t[i], "t", 30, &to));
    ASSERT_STR_EQ("idle", fleet__pool_ticker_state_name(&k.t[i]));
  }
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_ticker_start(&k.t[0], NULL));
  for (i = 0; i < 3; i++)
    ASSERT_OK(fleet_pool_ticker_start(&k.t[i], on_tick));
  ASSERT_ERR(FLEET_EALREADY, fleet_pool_ticker_start(&k.t[0], on_tick));
  ASSERT_EQ(0, k.total);

  ASSERT(lock_env_wait(&e, &k.total, 15, FLEET_TEST_WAIT_MS));
  check_seqs(&k, 1, 30);

  /* One closes; the others get every later tick. */
  ASSERT_OK(fleet_pool_ticker_close(&k.t[2], on_ticker_close));
  ASSERT(lock_env_wait(&e, &k.closed, 1, FLEET_TEST_WAIT_MS));
  i = k.per[2];
  ASSERT(lock_env_wait(&e, &k.total, 25, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(i, k.per[2]);
  check_seqs(&k, 1, 30);

  /* End from one: both hear it, the ender before its callback. */
  ASSERT_OK(fleet_pool_ticker_end(&k.t[0], status_cb, &stopped));
  ASSERT(lock_env_wait(&e, &stopped, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(1, k.stopped[0]);
  ASSERT(lock_env_wait(&e, &k.stopped[1], 1, FLEET_TEST_WAIT_MS));
  lock_env_sleep(&e, 100);
  ASSERT_EQ(1, k.stopped[0]);
  ASSERT_EQ(1, k.stopped[1]);
  ASSERT_EQ(0, k.after_stop);
  ASSERT_STR_EQ("stopped", fleet__pool_ticker_state_name(&k.t[0]));
  ASSERT_ERR(FLEET_EALREADY, fleet_pool_ticker_end(&k.t[0], status_cb, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_ticker_end(&k.t[1], NULL, 0));
  check_seqs(&k, 1, 30);
  ASSERT_EQ(0, k.errors);

  ASSERT_OK(fleet_pool_ticker_close(&k.t[0], on_ticker_close));
  ASSERT_OK(fleet_pool_ticker_close(&k.t[1], on_ticker_close));
  ASSERT_OK(fleet_pool_node_close(&n1, NULL));
  ASSERT_OK(fleet_pool_node_close(&n2, NULL));
  ASSERT(lock_env_wait(&e, &k.closed, 3, FLEET_TEST_WAIT_MS));
  lock_env_close(&e);
}

/* Redis refuses writes for a while (OOM): every claim fails and the error
 * callback hears it, the ticker goes on, and the first tick after reports
 * the ticks it missed; sequence numbers go on without a gap. */
TEST_IMPL(pool_ticker_errors_redis) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_pool_ticker_options_t to;
  fleet_pool_node_options_t o;
  fleet_pool_node_t n;
  ticks_t k;
  lock_env_t e;
  int before;

  lock_env_init(&e, fleet_test_redis_url(r));
  memset(&k, 0, sizeof(k));
  fleet_pool_node_options_init(&o);
  o.client_only = 1;
  ASSERT_OK(fleet_pool_node_init(&e.c1, &n, "p", "a", &o));
  k.t[0].data = &k;
  fleet_pool_ticker_options_init(&to);
  to.error_cb = on_tick_error; /* the options' error callback hears claims */
  ASSERT_OK(fleet_pool_ticker_init(&n, &k.t[0], "t", 20, &to));
  ASSERT_OK(fleet_pool_ticker_start(&k.t[0], on_tick));
  ASSERT(lock_env_wait(&e, &k.total, 3, FLEET_TEST_WAIT_MS));

  fleet_test_redis_ok(r, "CONFIG SET maxmemory-policy noeviction");
  fleet_test_redis_ok(r, "CONFIG SET maxmemory 1");
  ASSERT(lock_env_wait(&e, &k.errors, 3, FLEET_TEST_WAIT_MS));
  before = k.total;
  lock_env_sleep(&e, 200);
  fleet_test_redis_ok(r, "CONFIG SET maxmemory 0");
  ASSERT(lock_env_wait(&e, &k.total, before + 3, FLEET_TEST_WAIT_MS));
  ASSERT_UGE(k.missed, 3);
  check_seqs(&k, 1, 20);

  ASSERT_OK(fleet_pool_ticker_close(&k.t[0], on_ticker_close));
  ASSERT_OK(fleet_pool_node_close(&n, NULL));
  ASSERT(lock_env_wait(&e, &k.closed, 1, FLEET_TEST_WAIT_MS));
  lock_env_close(&e);
  fleet_test_redis_free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Delivery leases                                                          */

static fleet_bytes_t sb(const char *s) {
  fleet_bytes_t b = {s, strlen(s)};
  return b;
}

/* The reply of one raw POOL_TICK. */
typedef struct {
  int done;
  int status;
  int64_t v[6];
} raw_tick_t;

static void on_raw_tick(void *arg, int status, const fleet__reply_t *reply) {
  raw_tick_t *t = arg;
  size_t i;

  t->status = status;
  if (status == 0) {
    ASSERT(fleet__reply_is_array(reply, 6));
    for (i = 0; i < 6; i++)
      ASSERT_OK(fleet__reply_i64(&reply->elem[i], &t->v[i]));
  }
  t->done = 1;
}

/* A claim of the tick of `name` by a claimer that will never acknowledge
 * it (a node that dies right after its claim), with a lease of `lease`
 * ms. Returns the seq it got. */
static int64_t ghost_claim(lock_env_t *e, fleet_pool_node_t *n,
                           const char *name, const char *period,
                           const char *lease) {
  fleet__pool_t *p = fleet__pool_of(n);
  fleet_bytes_t key = {p->tag.base, p->tag.len};
  fleet_bytes_t args[6] = {sb(name),  sb(period),      sb("ghost:1"),
                           sb(lease), sb("100000000"), sb("0")};
  raw_tick_t t;

  memset(&t, 0, sizeof(t));
  ASSERT_OK(fleet__backend_call(fleet__client_backend(&e->c1),
                                FLEET__OP_POOL_TICK, &key, 1, args, 6,
                                on_raw_tick, &t));
  ASSERT(fleet_test_run_until(&e->loop, fleet_test_flag_set, &t.done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(t.status);
  ASSERT_EQ(1, t.v[0]);
  ASSERT_EQ(0, t.v[5]);
  return t.v[1];
}

/* What the lease test's ticker saw, tick by tick. */
typedef struct {
  fleet_pool_ticker_t t;
  int total;
  uint64_t seq[TICKS_MAX];
  uint64_t missed[TICKS_MAX];
  int redelivered[TICKS_MAX];
  int closed;
} lease_rec_t;

static void on_lease_tick(fleet_pool_ticker_t *t, int status,
                          const fleet_pool_tick_t *tick) {
  lease_rec_t *k = t->data;

  ASSERT_OK(status);
  ASSERT_LT(k->total, TICKS_MAX);
  k->seq[k->total] = tick->seq;
  k->missed[k->total] = tick->missed;
  k->redelivered[k->total] = tick->redelivered;
  k->total++;
}

static void on_lease_close(fleet_handle_t *h) {
  ((lease_rec_t *)h->data)->closed++;
}

/* A tick claimed and never acknowledged is delivered again, flagged, once
 * its lease lapsed; the ticks a live ticker acknowledges are never
 * delivered again (it runs past several leases); and an unacknowledged
 * tick older than the horizon is counted as missed, not delivered. */
CONFORMANCE_IMPL(pool_ticker_lease) {
  fleet_pool_node_options_t o;
  fleet_pool_node_t n;
  lease_rec_t *k = calloc(2, sizeof(*k));
  lock_env_t e;
  int i;

  ASSERT_NOT_NULL(k);
  lock_env_init(&e, b->url);
  fleet_pool_node_options_init(&o);
  o.client_only = 1;
  o.worker_ttl_ms = 100; /* the ticker's lease */
  ASSERT_OK(fleet_pool_node_init(&e.c1, &n, "p", "a", &o));

  /* Redelivery: the ghost's tick 1 comes again, to the live ticker. */
  ASSERT_EQ(1, ghost_claim(&e, &n, "t", "30", "50"));
  lock_env_sleep(&e, 80); /* its lease lapses */
  k[0].t.data = &k[0];
  ASSERT_OK(fleet_pool_ticker_init(&n, &k[0].t, "t", 30, NULL));
  ASSERT_OK(fleet_pool_ticker_start(&k[0].t, on_lease_tick));
  ASSERT(lock_env_wait(&e, &k[0].total, 20, FLEET_TEST_WAIT_MS));
  lock_env_sleep(&e, 300); /* three leases: acknowledged ticks stay so */
  ASSERT_UEQ(1, k[0].seq[0]);
  ASSERT_EQ(1, k[0].redelivered[0]);
  for (i = 1; i < k[0].total; i++) {
    ASSERT_UEQ((uint64_t)i + 1, k[0].seq[i]);
    ASSERT_EQ(0, k[0].redelivered[i]);
  }

  /* Too old: the ghost's tick 1 of "u" lapsed past the horizon (2 leases
   * + 10 periods = 300 ms): it is missed, and tick 2 comes first. */
  ASSERT_EQ(1, ghost_claim(&e, &n, "u", "10", "1"));
  lock_env_sleep(&e, 450);
  k[1].t.data = &k[1];
  ASSERT_OK(fleet_pool_ticker_init(&n, &k[1].t, "u", 10, NULL));
  ASSERT_OK(fleet_pool_ticker_start(&k[1].t, on_lease_tick));
  ASSERT(lock_env_wait(&e, &k[1].total, 5, FLEET_TEST_WAIT_MS));
  ASSERT_UEQ(2, k[1].seq[0]);
  ASSERT_EQ(0, k[1].redelivered[0]);
  /* 1 given up + the ~44 due meanwhile, folded. */
  ASSERT_UGE(k[1].missed[0], 30);
  for (i = 1; i < k[1].total; i++) {
    ASSERT_UEQ((uint64_t)i + 2, k[1].seq[i]);
    ASSERT_EQ(0, k[1].redelivered[i]);
  }

  ASSERT_OK(fleet_pool_ticker_close(&k[0].t, on_lease_close));
  ASSERT_OK(fleet_pool_ticker_close(&k[1].t, on_lease_close));
  ASSERT_OK(fleet_pool_node_close(&n, NULL));
  ASSERT(lock_env_wait(&e, &k[1].closed, 1, FLEET_TEST_WAIT_MS));
  ASSERT(lock_env_wait(&e, &k[0].closed, 1, FLEET_TEST_WAIT_MS));
  lock_env_close(&e);
  free(k);
}
