/* test_pool_ticker.c -- pool tickers on both adapters: bad input, each
 * tick to exactly one of three nodes in sequence, a node that closes
 * while the others go on, stop for every node, and (on Redis) ticks that
 * survive errors and report what they missed. */
#include "pool_int.h"
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

  ASSERT_ERR(FLEET_EINVAL, fleet_pool_ticker_init(NULL, &k.t[0], "t", 50, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_ticker_init(&n1, NULL, "t", 50, 0));
  ASSERT_ERR(FLEET_EINVAL, fleet_pool_ticker_init(&n1, &k.t[0], "", 50, 0));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_pool_ticker_init(&n1, &k.t[0], "t",
                                    FLEET_POOL_TICK_MIN_MS - 1, NULL));
  ASSERT_NULL(k.t[0].internal_);

  for (i = 0; i < 3; i++) {
    k.t[i].data = &k;
    ASSERT_OK(fleet_pool_ticker_init(i == 1 ? &n2 : &n1, &k.t[i], "t", 30,
                                     on_tick_error));
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

  /* Stop from one: both hear it, the stopper before its callback. */
  ASSERT_OK(fleet_pool_ticker_stop(&k.t[0], status_cb, &stopped));
  ASSERT(lock_env_wait(&e, &stopped, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(1, k.stopped[0]);
  ASSERT(lock_env_wait(&e, &k.stopped[1], 1, FLEET_TEST_WAIT_MS));
  lock_env_sleep(&e, 100);
  ASSERT_EQ(1, k.stopped[0]);
  ASSERT_EQ(1, k.stopped[1]);
  ASSERT_EQ(0, k.after_stop);
  ASSERT_STR_EQ("stopped", fleet__pool_ticker_state_name(&k.t[0]));
  ASSERT_ERR(FLEET_EALREADY, fleet_pool_ticker_stop(&k.t[0], status_cb, 0));
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
  ASSERT_OK(fleet_pool_ticker_init(&n, &k.t[0], "t", 20, on_tick_error));
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
