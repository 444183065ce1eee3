/* test_store_close.c -- the store as a handle of its client, on both
 * adapters: the client refuses to close under it, and every order of
 * closes (the client from the store's close callback, the store from its
 * own callbacks, with every kind of call pending, in the middle of a
 * clear, with replies still to come) runs each callback once. */
#include "test_store_ctx.h"

/* A store and the client it was made on, for close callbacks that go on
 * to close the client. The st_t comes first: the store's `data` points at
 * both. */
typedef struct {
  st_t s;
  client_ctx_t *c;
  int client_rc;      /* fleet_client_close() in the store's close callback */
  int client_closing; /* the test closed the client itself */
} owned_t;

static void owned_open(owned_t *t, client_ctx_t *c) {
  fleet_store_options_t so;

  memset(t, 0, sizeof(*t));
  fleet_store_options_init(&so);
  so.prefix = "t";
  st_open(&t->s, &c->client, &so);
  t->c = c;
  t->client_rc = 1;
}

/* The store has closed (always before its client): the client may close
 * now, unless the test closed it already. */
static void owned_on_closed(fleet_handle_t *store) {
  owned_t *t = store->data;

  t->s.closed++;
  ASSERT_EQ(0, t->c->closed);
  t->client_rc =
      t->client_closing ? 0 : fleet_client_close(&t->c->client, ctx_on_close);
}

static void count_walk(fleet_handle_t *handle, void *arg) {
  (*(int *)arg)++;
}

/* From inside a store callback, the client still refuses to close. */
static void busy_on_put(fleet_handle_t *st, int status, void *arg) {
  owned_t *t = arg;
  ASSERT_OK(status);
  ASSERT_ERR(FLEET_EBUSY, fleet_client_close(&t->c->client, ctx_on_close));
  t->s.calls++;
}

CONFORMANCE_IMPL(store_close_client_busy) {
  client_ctx_t c;
  owned_t t;
  int seen = 0;

  ctx_init(&c, b->url, NULL);
  owned_open(&t, &c);
  ASSERT_EQ(FLEET_HANDLE_STORE, t.s.store.type);
  ASSERT_PTR_EQ(&c.client, fleet_handle_client((fleet_handle_t *)&t.s.store));
  fleet_client_walk(&c.client, count_walk, &seen);
  ASSERT_EQ(1, seen);

  /* Refused, and nothing changes: the client and the store still work. */
  ASSERT_ERR(FLEET_EBUSY, fleet_client_close(&c.client, ctx_on_close));
  ASSERT_EQ(0, fleet_is_closing((fleet_handle_t *)&t.s.store));
  ASSERT_OK(ctx_ping(&c));
  ASSERT_OK(st_put(&t.s, "runs", sb("r1"), sb("v"), NULL));
  ASSERT_OK(st_get(&t.s, "runs", sb("r1")));
  ASSERT_STR_EQ("v", t.s.value);
  ASSERT_OK(fleet_store_put(&t.s.store, "runs", sb("r2"), sb("v"), NULL,
                            busy_on_put, &t));
  while (t.s.calls < 3)
    uv_run(&c.loop, UV_RUN_ONCE);
  st_reset(&t.s);

  /* Accepted once the store is closing: the store's close callback still
   * runs before the client's. The generic close closes a store as
   * fleet_store_close(). */
  ASSERT_OK(fleet_close((fleet_handle_t *)&t.s.store, owned_on_closed));
  ASSERT_EQ(1, fleet_is_closing((fleet_handle_t *)&t.s.store));
  t.client_closing = 1;
  ASSERT_OK(fleet_client_close(&c.client, ctx_on_close));
  fleet_test_loop_close(&c.loop);
  ASSERT_EQ(1, t.s.closed);
  ASSERT_OK(t.client_rc);
  ASSERT_EQ(1, c.closed);
}

/* ------------------------------------------------------------------------ */
/* Every kind of call pending at the close                                  */

/* The calls of the pending test, one callback counter each. */
enum { P_PUT, P_GET, P_EXISTS, P_COUNT, P_READ, P_LIST, P_CLEAR, P_PING, P_N };

typedef struct {
  owned_t t;
  int runs[P_N];
} pending_t;

/* Records one callback: FLEET_ECANCELED, once, and a closing store
 * refuses new calls from it. */
static void pending_seen(fleet_store_t *st, int status, int *runs) {
  ASSERT_ERR(FLEET_ECANCELED, status);
  ASSERT_EQ(0, *runs);
  (*runs)++;
  ASSERT_ERR(FLEET_ECLOSING, fleet_store_ping(st, busy_on_put, NULL));
  ASSERT_ERR(FLEET_ECLOSING, fleet_store_close(st, NULL));
}

static void pending_done(fleet_handle_t *st_h, int status, void *arg) {
  fleet_store_t *st = (fleet_store_t *)st_h;
  pending_seen(st, status, arg);
}

static void pending_get(fleet_store_t *st, int status, fleet_bytes_t v,
                        uint64_t ttl, void *arg) {
  ASSERT_EQ(0, v.len);
  pending_seen(st, status, arg);
}

static void pending_count(fleet_store_t *st, int status, uint64_t n,
                          void *arg) {
  ASSERT_EQ(0, n);
  pending_seen(st, status, arg);
}

static void pending_events(fleet_store_t *st, int status,
                           const fleet_bytes_t *ev, size_t n, void *arg) {
  ASSERT_EQ(0, n);
  pending_seen(st, status, arg);
}

static void pending_list(fleet_store_t *st, int status,
                         const fleet_store_item_t *items, size_t n,
                         fleet_bytes_t next, void *arg) {
  ASSERT_EQ(0, n);
  ASSERT_EQ(0, next.len);
  pending_seen(st, status, arg);
}

/* Every pending callback ran once before the close callback. */
static void pending_on_closed(fleet_handle_t *store) {
  pending_t *p = store->data;
  int i;

  for (i = 0; i < P_N; i++)
    ASSERT_EQ(1, p->runs[i]);
  owned_on_closed(store);
}

/* Sends one call of each kind, then closes the store. */
static void pending_start(pending_t *p) {
  fleet_store_t *st = &p->t.s.store;
  fleet_bytes_t none = {NULL, 0};
  int *r = p->runs;

  ASSERT_OK(fleet_store_put(st, "runs", sb("r2"), sb("v"), NULL, pending_done,
                            &r[P_PUT]));
  ASSERT_OK(fleet_store_get(st, "runs", sb("r1"), pending_get, &r[P_GET]));
  ASSERT_OK(
      fleet_store_exists(st, "runs", sb("r1"), pending_done, &r[P_EXISTS]));
  ASSERT_OK(fleet_store_events_count(st, "runs", sb("r1"), pending_count,
                                     &r[P_COUNT]));
  ASSERT_OK(fleet_store_events_read(st, "runs", sb("r1"), 0, 10, pending_events,
                                    &r[P_READ]));
  ASSERT_OK(fleet_store_list(st, "runs", "agent", sb("a"), none, 10,
                             pending_list, &r[P_LIST]));
  ASSERT_OK(fleet_store_clear(st, pending_count, &r[P_CLEAR]));
  ASSERT_OK(fleet_store_ping(st, pending_done, &r[P_PING]));
  ASSERT_OK(fleet_store_close(st, pending_on_closed));
}

CONFORMANCE_IMPL(store_close_pending) {
  client_ctx_t c;
  pending_t p;
  int i;

  ctx_init(&c, b->url, NULL);
  memset(&p, 0, sizeof(p));
  owned_open(&p.t, &c);
  st_put_ix(&p.t.s, "runs", "r1", "v", "agent", "a", 0);
  p.t.s.store.data = &p;
  pending_start(&p);
  for (i = 0; i < P_N; i++)
    ASSERT_EQ(0, p.runs[i]);
  fleet_test_loop_close(&c.loop);
  ASSERT_EQ(1, p.t.s.closed);
  ASSERT_OK(p.t.client_rc);
  ASSERT_EQ(1, c.closed);
  for (i = 0; i < P_N; i++)
    ASSERT_EQ(1, p.runs[i]);
}

/* With Redis paused, every call is in flight when the store closes: each
 * callback hears FLEET_ECANCELED at once, but the store stays open until
 * the replies came, which are dropped; closing the client meanwhile
 * cancels those calls, and the store's close callback runs first. */
TEST_IMPL(store_close_in_flight) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_client_options_t o;
  client_ctx_t c;
  pending_t p;
  int i;

  fleet_client_options_init(&o);
  o.command_timeout_ms = 30000;
  ctx_init(&c, fleet_test_redis_url(r), &o);
  memset(&p, 0, sizeof(p));
  owned_open(&p.t, &c);
  st_put_ix(&p.t.s, "runs", "r1", "v", "agent", "a", 0);
  p.t.s.store.data = &p;
  ASSERT_OK(fleet_test_redis_pause(r));
  pending_start(&p);
  st_sleep(&c.loop, 100);
  for (i = 0; i < P_N; i++)
    ASSERT_EQ(1, p.runs[i]);
  ASSERT_EQ(0, p.t.s.closed);
  p.t.client_closing = 1;
  ASSERT_OK(fleet_client_close(&c.client, ctx_on_close));
  ASSERT_OK(fleet_test_redis_resume(r));
  fleet_test_loop_close(&c.loop);
  ASSERT_EQ(1, p.t.s.closed);
  ASSERT_OK(p.t.client_rc);
  for (i = 0; i < P_N; i++)
    ASSERT_EQ(1, p.runs[i]);
  fleet_test_redis_free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* A clear in progress                                                      */

/* Records to fill: three rounds of a clear's SCAN COUNT. */
#define CLEAR_RECORDS 3000

typedef struct {
  owned_t t;
  int clear_runs;
  int clear_status;
  int puts;
} midclear_t;

static void midclear_on_put(fleet_handle_t *st, int status, void *arg) {
  ASSERT_OK(status);
  ((midclear_t *)arg)->puts++;
}

static void midclear_on_clear(fleet_store_t *st, int status, uint64_t n,
                              void *arg) {
  midclear_t *m = arg;
  m->clear_runs++;
  m->clear_status = status;
}

static void midclear_on_closed(fleet_handle_t *store) {
  ((midclear_t *)store->data)->t.s.closed++;
}

/* The ping sent after the clear's first SCAN is answered after that SCAN,
 * while the clear's next step is under way: close the store from here. */
static void midclear_on_ping(fleet_handle_t *st_h, int status, void *arg) {
  fleet_store_t *st = (fleet_store_t *)st_h;
  midclear_t *m = arg;
  ASSERT_OK(status);
  ASSERT_EQ(0, m->clear_runs);
  ASSERT_OK(fleet_store_close(st, midclear_on_closed));
}

CONFORMANCE_IMPL(store_close_mid_clear) {
  client_ctx_t c;
  midclear_t m;
  owned_t again;
  char id[16];
  int i;

  ctx_init(&c, b->url, NULL);
  memset(&m, 0, sizeof(m));
  owned_open(&m.t, &c);
  for (i = 0; i < CLEAR_RECORDS; i++) {
    snprintf(id, sizeof(id), "r%d", i);
    ASSERT_OK(fleet_store_put(&m.t.s.store, "runs", sb(id), sb("v"), NULL,
                              midclear_on_put, &m));
  }
  while (m.puts < CLEAR_RECORDS)
    uv_run(&c.loop, UV_RUN_ONCE);

  m.t.s.store.data = &m;
  ASSERT_OK(fleet_store_clear(&m.t.s.store, midclear_on_clear, &m));
  ASSERT_OK(fleet_store_ping(&m.t.s.store, midclear_on_ping, &m));
  while (m.t.s.closed == 0)
    uv_run(&c.loop, UV_RUN_ONCE);
  ASSERT_EQ(1, m.clear_runs);
  ASSERT_ERR(FLEET_ECANCELED, m.clear_status);

  /* The clear stopped at the close: records are left. */
  owned_open(&again, &c);
  ASSERT_OK(st_clear(&again.s));
  ASSERT_UGT(again.s.n, 0);
  ASSERT_ULT(again.s.n, CLEAR_RECORDS);
  st_close(&again.s);
  ctx_close(&c);
}
