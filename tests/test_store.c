/* test_store.c -- the store's records on both adapters: put, get, delete,
 * exists, binary and large values, bad input, close, ping, sharing. */
#include "core/client.h"
#include "test_store_ctx.h"

/* Opens a client on `b` (short timeouts) and a store "t" on it. */
static void open_both(client_ctx_t *c, st_t *s, fleet_test_backend_t *b,
                      fleet_store_options_t *so) {
  fleet_client_options_t o;
  fleet_store_options_t defaults;

  fleet_client_options_init(&o);
  o.command_timeout_ms = 2000;
  o.reconnect_initial_ms = 20;
  o.reconnect_max_ms = 200;
  ctx_init(c, b->url, &o);
  if (so == NULL) {
    fleet_store_options_init(&defaults);
    defaults.prefix = "t";
    so = &defaults;
  }
  st_open(s, &c->client, so);
}

CONFORMANCE_IMPL(store_records) {
  static const char coll[] = "c:x{y";
  static const char bin_id[] = {'i', '\0', 'd', ':', '}'};
  static const char bin_val[] = {'\0', 'v', '\0', '\xff', '\0'};
  fleet_bytes_t id = {bin_id, sizeof(bin_id)};
  fleet_bytes_t empty = {NULL, 0};
  client_ctx_t c;
  st_t s;

  open_both(&c, &s, b, NULL);
  ASSERT_STR_EQ("t", fleet_store_prefix(&s.store));
  ASSERT_ERR(FLEET_ENOTFOUND, st_get(&s, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_exists(&s, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_delete(&s, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_touch(&s, "runs", sb("r1"), 0));

  /* Create, read, replace, read. */
  ASSERT_OK(st_put(&s, "runs", sb("r1"), sb("one"), NULL));
  ASSERT_OK(st_get(&s, "runs", sb("r1")));
  ASSERT_STR_EQ("one", s.value);
  ASSERT_GT(s.ttl_ms, FLEET_STORE_DEFAULT_TTL_MS - 60000);
  ASSERT_LE(s.ttl_ms, FLEET_STORE_DEFAULT_TTL_MS);
  ASSERT_OK(st_exists(&s, "runs", sb("r1")));
  ASSERT_OK(st_put(&s, "runs", sb("r1"), sb("two"), NULL));
  ASSERT_OK(st_get(&s, "runs", sb("r1")));
  ASSERT_STR_EQ("two", s.value);
  /* Same id in another collection: another record. */
  ASSERT_ERR(FLEET_ENOTFOUND, st_get(&s, "sessions", sb("r1")));

  /* A collection name with ':' and '{', binary-safe ids and values, and
   * an empty value. */
  ASSERT_OK(
      st_put(&s, coll, id, (fleet_bytes_t){bin_val, sizeof(bin_val)}, NULL));
  ASSERT_OK(st_get(&s, coll, id));
  ASSERT_EQ(sizeof(bin_val), s.value_len);
  ASSERT_MEM_EQ(bin_val, s.value, sizeof(bin_val));
  ASSERT_ERR(FLEET_ENOTFOUND, st_get(&s, coll, sb("i")));
  ASSERT_OK(st_put(&s, "runs", sb("empty"), empty, NULL));
  ASSERT_OK(st_get(&s, "runs", sb("empty")));
  ASSERT_EQ(0, s.value_len);

  /* Delete. */
  ASSERT_OK(st_delete(&s, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_get(&s, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_delete(&s, "runs", sb("r1")));
  ASSERT_OK(st_delete(&s, coll, id));
  ASSERT_ERR(FLEET_ENOTFOUND, st_exists(&s, coll, id));
  if (b->redis != NULL) {
    redisReply *r =
        fleet_test_redis_cmd(b->redis, "EXISTS %s", "{t:runs}:rec:empty");
    ASSERT_NOT_NULL(r);
    ASSERT_EQ(1, r->integer);
    freeReplyObject(r);
  }
  st_close(&s);
  ctx_close(&c);
}

static void never_done(fleet_handle_t *st, int status, void *arg) {
  fleet_test__fail(__FILE__, __LINE__, "callback of a refused call ran");
}

static void never_get(fleet_store_t *st, int status, fleet_bytes_t v,
                      uint64_t ttl, void *arg) {
  fleet_test__fail(__FILE__, __LINE__, "callback of a refused call ran");
}

static void never_count(fleet_store_t *st, int status, uint64_t n, void *arg) {
  fleet_test__fail(__FILE__, __LINE__, "callback of a refused call ran");
}

static void never_events(fleet_store_t *st, int status, const fleet_bytes_t *ev,
                         size_t n, void *arg) {
  fleet_test__fail(__FILE__, __LINE__, "callback of a refused call ran");
}

static void never_list(fleet_store_t *st, int status,
                       const fleet_store_item_t *items, size_t n,
                       fleet_bytes_t next, void *arg) {
  fleet_test__fail(__FILE__, __LINE__, "callback of a refused call ran");
}

/* A 1 MiB value with NUL bytes round-trips; one byte more is refused. */
CONFORMANCE_IMPL(store_large_values) {
  size_t big = FLEET_STORE_DEFAULT_VALUE_MAX, i;
  char *v = malloc(big + 1);
  client_ctx_t c;
  st_t s;

  ASSERT_NOT_NULL(v);
  for (i = 0; i < big + 1; i++)
    v[i] = (char)(i * 7 % 251);
  open_both(&c, &s, b, NULL);
  ASSERT_OK(st_put(&s, "runs", sb("big"), (fleet_bytes_t){v, big}, NULL));
  ASSERT_OK(st_get(&s, "runs", sb("big")));
  ASSERT_EQ(big, s.value_len);
  ASSERT_MEM_EQ(v, s.value, big);
  ASSERT_ERR(FLEET_E2BIG, fleet_store_put(&s.store, "runs", sb("big"),
                                          (fleet_bytes_t){v, big + 1}, NULL,
                                          never_done, NULL));
  /* A 1 MiB event too. */
  ASSERT_OK(st_append(&s, "runs", sb("big"), &(fleet_bytes_t){v, big}, 1));
  ASSERT_OK(st_read(&s, "runs", sb("big"), 0, 1));
  ASSERT_EQ(1, s.nevents);
  ASSERT_EQ(big, s.events[0].len);
  ASSERT_MEM_EQ(v, s.events[0].base, big);
  ASSERT_OK(st_get(&s, "runs", sb("big")));
  ASSERT_MEM_EQ(v, s.value, big);
  free(v);
  st_close(&s);
  ctx_close(&c);
}

/* fleet_store_init() refuses bad options and leaves nothing to close. */
static void bad_init(fleet_client_t *client) {
  static char long_prefix[FLEET__PREFIX_MAX + 2];
  fleet_store_options_t o;
  fleet_store_t st;

  memset(long_prefix, 'p', sizeof(long_prefix) - 1);
  ASSERT_ERR(FLEET_EINVAL, fleet_store_init(NULL, &st, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_init(client, NULL, NULL));
  fleet_store_options_init(&o);
  o.prefix = "";
  ASSERT_ERR(FLEET_EINVAL, fleet_store_init(client, &st, &o));
  o.prefix = "a{b";
  ASSERT_ERR(FLEET_EINVAL, fleet_store_init(client, &st, &o));
  o.prefix = "a}b";
  ASSERT_ERR(FLEET_EINVAL, fleet_store_init(client, &st, &o));
  o.prefix = long_prefix;
  ASSERT_ERR(FLEET_EINVAL, fleet_store_init(client, &st, &o));
  long_prefix[FLEET__PREFIX_MAX] = '\0';
  ASSERT_OK(fleet_store_init(client, &st, &o));
  ASSERT_OK(fleet_store_close(&st, NULL));
  o.prefix = "t";
  o.ttl_ms = FLEET_STORE_TTL_MAX_MS + 1;
  ASSERT_ERR(FLEET_EINVAL, fleet_store_init(client, &st, &o));
  o.ttl_ms = 0;
  o.max_value_bytes = (size_t)FLEET_STORE_VALUE_MAX_LIMIT + 1;
  ASSERT_ERR(FLEET_EINVAL, fleet_store_init(client, &st, &o));
  o.max_value_bytes = 0;
  o.max_events = 0x80000000u;
  ASSERT_ERR(FLEET_EINVAL, fleet_store_init(client, &st, &o));
  ASSERT_NULL(fleet_store_prefix(NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_close(NULL, NULL));
}

/* Every call refuses bad input with a clear error, runs no callback and
 * writes nothing. */
CONFORMANCE_IMPL(store_bad_input) {
  static char long_name[FLEET_STORE_NAME_MAX + 1];
  static char long_coll[FLEET_STORE_NAME_MAX + 2];
  static char long_ix[FLEET_STORE_INDEX_NAME_MAX + 2];
  fleet_store_index_t ix[FLEET_STORE_INDEXES_MAX + 1];
  fleet_bytes_t ev[FLEET_STORE_BATCH_MAX + 1];
  fleet_store_put_options_t po;
  fleet_store_options_t so;
  fleet_store_t *st;
  fleet_bytes_t v101 = {long_name, 101}, none = {NULL, 0};
  client_ctx_t c;
  size_t i;
  st_t s;

  memset(long_name, 'n', sizeof(long_name));
  memset(long_coll, 'c', sizeof(long_coll) - 1);
  memset(long_ix, 'i', sizeof(long_ix) - 1);
  fleet_store_options_init(&so);
  so.prefix = "t";
  so.max_value_bytes = 100;
  open_both(&c, &s, b, &so);
  st = &s.store;
  bad_init(&c.client);

  /* The configured value limit, on values and on events. */
  ASSERT_OK(
      st_put(&s, "runs", sb("ok"), (fleet_bytes_t){long_name, 100}, NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_store_put(st, "runs", sb("x"), v101, NULL,
                                          never_done, NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_store_events_append(st, "runs", sb("ok"), &v101,
                                                    1, never_count, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_store_put(st, "runs", sb("x"), (fleet_bytes_t){NULL, 3},
                             NULL, never_done, NULL));

  /* Collections and ids: empty or NULL (FLEET_EINVAL), too long
   * (FLEET_E2BIG, as every fleet name), '}' in a collection. */
  ASSERT_ERR(FLEET_EINVAL,
             fleet_store_put(st, "", sb("x"), sb("v"), NULL, never_done, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_put(st, "runs", sb(""), sb("v"), NULL,
                                           never_done, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_put(st, NULL, sb("x"), sb("v"), NULL,
                                           never_done, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_get(st, "runs", none, never_get, NULL));
  ASSERT_ERR(FLEET_E2BIG,
             fleet_store_get(st, long_coll, sb("x"), never_get, NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_store_put(st, long_coll, sb("x"), sb("v"), NULL,
                                          never_done, NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_store_list(st, long_coll, "agent", sb("a"),
                                           none, 10, never_list, NULL));
  ASSERT_ERR(FLEET_E2BIG,
             fleet_store_delete(st, "runs",
                                (fleet_bytes_t){long_name, sizeof(long_name)},
                                never_done, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_store_exists(st, "a}b", sb("x"), never_done, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_store_touch(st, "", sb("x"), 0, never_done, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_store_touch(st, "runs", sb("ok"), FLEET_STORE_TTL_MAX_MS + 1,
                               never_done, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_store_events_count(st, "runs", sb(""), never_count, NULL));

  /* Callbacks and handles. */
  ASSERT_ERR(FLEET_EINVAL,
             fleet_store_put(st, "runs", sb("x"), sb("v"), NULL, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_store_get(NULL, "runs", sb("x"), never_get, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_clear(st, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_ping(st, NULL, NULL));

  /* Put options: indexes and TTL. */
  memset(&po, 0, sizeof(po));
  for (i = 0; i <= FLEET_STORE_INDEXES_MAX; i++) {
    ix[i].name = "agent";
    ix[i].value = sb("a");
  }
  po.indexes = ix;
  po.nindexes = FLEET_STORE_INDEXES_MAX + 1;
  ASSERT_ERR(FLEET_EINVAL, fleet_store_put(st, "runs", sb("x"), sb("v"), &po,
                                           never_done, NULL));
  po.nindexes = 1;
  po.indexes = NULL;
  ASSERT_ERR(FLEET_EINVAL, fleet_store_put(st, "runs", sb("x"), sb("v"), &po,
                                           never_done, NULL));
  po.indexes = ix;
  ix[0].name = "ag:ent";
  ASSERT_ERR(FLEET_EINVAL, fleet_store_put(st, "runs", sb("x"), sb("v"), &po,
                                           never_done, NULL));
  ix[0].name = "";
  ASSERT_ERR(FLEET_EINVAL, fleet_store_put(st, "runs", sb("x"), sb("v"), &po,
                                           never_done, NULL));
  ix[0].name = NULL;
  ASSERT_ERR(FLEET_EINVAL, fleet_store_put(st, "runs", sb("x"), sb("v"), &po,
                                           never_done, NULL));
  ix[0].name = long_ix;
  ASSERT_ERR(FLEET_E2BIG, fleet_store_put(st, "runs", sb("x"), sb("v"), &po,
                                          never_done, NULL));
  ix[0].name = "agent";
  ix[0].value = sb("");
  ASSERT_ERR(FLEET_EINVAL, fleet_store_put(st, "runs", sb("x"), sb("v"), &po,
                                           never_done, NULL));
  ix[0].value = (fleet_bytes_t){long_name, sizeof(long_name)};
  ASSERT_ERR(FLEET_E2BIG, fleet_store_put(st, "runs", sb("x"), sb("v"), &po,
                                          never_done, NULL));
  ix[0].value = sb("a");
  po.ttl_ms = FLEET_STORE_TTL_MAX_MS + 1;
  ASSERT_ERR(FLEET_EINVAL, fleet_store_put(st, "runs", sb("x"), sb("v"), &po,
                                           never_done, NULL));

  /* Events: counts and limits. */
  for (i = 0; i <= FLEET_STORE_BATCH_MAX; i++)
    ev[i] = sb("e");
  ASSERT_ERR(FLEET_EINVAL, fleet_store_events_append(st, "runs", sb("ok"), ev,
                                                     0, never_count, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_events_append(st, "runs", sb("ok"), NULL,
                                                     1, never_count, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_events_append(st, "runs", sb("ok"), ev,
                                                     FLEET_STORE_BATCH_MAX + 1,
                                                     never_count, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_events_read(st, "runs", sb("ok"), 0, 0,
                                                   never_events, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_events_read(st, "runs", sb("ok"), 0,
                                                   FLEET_STORE_BATCH_MAX + 1,
                                                   never_events, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_store_events_read(st, "runs", sb("ok"),
                                     (uint64_t)FLEET_STORE_OFFSET_MAX + 1, 1,
                                     never_events, NULL));

  /* Listing: index, limit, cursors. */
  ASSERT_ERR(FLEET_EINVAL, fleet_store_list(st, "runs", "a:b", sb("v"), none,
                                            10, never_list, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_list(st, "runs", NULL, sb("v"), none, 10,
                                            never_list, NULL));
  ASSERT_ERR(FLEET_E2BIG, fleet_store_list(st, "runs", long_ix, sb("v"), none,
                                           10, never_list, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_list(st, "runs", "agent", sb(""), none,
                                            10, never_list, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_list(st, "runs", "agent", sb("a"), none,
                                            0, never_list, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_store_list(st, "runs", "agent", sb("a"), none,
                              FLEET_STORE_BATCH_MAX + 1, never_list, NULL));
  {
    static const char *const bad[] = {
        "x", "12", ":x", "12:", "1a:x", "12345678901234567:x", "-1:x"};
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
      ASSERT_ERR(FLEET_EINVAL,
                 fleet_store_list(st, "runs", "agent", sb("a"), sb(bad[i]), 10,
                                  never_list, NULL));
  }

  /* Nothing of the refused calls was written: only "ok" exists. */
  ASSERT_OK(st_clear(&s));
  ASSERT_EQ(1, s.n);
  st_close(&s);
  ctx_close(&c);
}

/* What the close test saw of its calls. */
typedef struct {
  int canceled;
  int other;
  int expect; /* callbacks due before the close callback */
  st_t *s;
} close_seen_t;

static void on_canceled(fleet_handle_t *st_h, int status, void *arg) {
  fleet_store_t *st = (fleet_store_t *)st_h;
  close_seen_t *seen = arg;
  if (status == FLEET_ECANCELED)
    seen->canceled++;
  else
    seen->other++;
  /* A closing store refuses new calls, even from its callbacks. */
  ASSERT_ERR(FLEET_ECLOSING, fleet_store_ping(st, on_canceled, arg));
  ASSERT_ERR(FLEET_ECLOSING, fleet_store_close(st, NULL));
}

static void on_canceled_count(fleet_store_t *st, int status, uint64_t n,
                              void *arg) {
  on_canceled((fleet_handle_t *)st, status, arg);
}

static void on_close_seen(fleet_handle_t *st) {
  close_seen_t *seen = st->data;
  /* Every pending callback ran before the close callback. */
  ASSERT_EQ(seen->expect, seen->canceled + seen->other);
  seen->s->closed++;
}

/* From inside a put's callback: issues a ping, then closes the store; the
 * ping is cancelled. */
static void on_put_then_close(fleet_handle_t *st_h, int status, void *arg) {
  fleet_store_t *st = (fleet_store_t *)st_h;
  close_seen_t *seen = arg;
  ASSERT_OK(status);
  ASSERT_OK(fleet_store_ping(st, on_canceled, seen));
  ASSERT_OK(fleet_store_close(st, on_close_seen));
}

CONFORMANCE_IMPL(store_close) {
  close_seen_t seen;
  client_ctx_t c;
  st_t s;

  memset(&seen, 0, sizeof(seen));
  seen.s = &s;
  seen.expect = 4;
  open_both(&c, &s, b, NULL);
  ASSERT_OK(st_put(&s, "runs", sb("r1"), sb("v"), NULL));

  /* Four calls in flight, then close: each callback runs once, with
   * FLEET_ECANCELED, after the close call and before the close callback. */
  s.store.data = &seen;
  ASSERT_OK(fleet_store_ping(&s.store, on_canceled, &seen));
  ASSERT_OK(fleet_store_put(&s.store, "runs", sb("r2"), sb("v"), NULL,
                            on_canceled, &seen));
  ASSERT_OK(fleet_store_exists(&s.store, "runs", sb("r1"), on_canceled, &seen));
  ASSERT_OK(fleet_store_clear(&s.store, on_canceled_count, &seen));
  ASSERT_OK(fleet_store_close(&s.store, on_close_seen));
  ASSERT_EQ(0, seen.canceled + seen.other);
  ASSERT_ERR(FLEET_ECLOSING, fleet_store_close(&s.store, NULL));
  ASSERT_ERR(FLEET_ECLOSING, fleet_store_ping(&s.store, on_canceled, &seen));
  ASSERT(fleet_test_wait_count(&c.loop, &s.closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(4, seen.canceled);
  ASSERT_EQ(0, seen.other);
  ASSERT_EQ(1, s.closed);
  ASSERT_NULL(fleet_store_prefix(&s.store));
  ASSERT_ERR(FLEET_EINVAL, fleet_store_close(&s.store, NULL));

  /* Close from inside a callback. */
  memset(&seen, 0, sizeof(seen));
  seen.s = &s;
  seen.expect = 1;
  st_open(&s, &c.client, NULL);
  s.store.data = &seen;
  ASSERT_OK(fleet_store_put(&s.store, "runs", sb("r3"), sb("v"), NULL,
                            on_put_then_close, &seen));
  ASSERT(fleet_test_wait_count(&c.loop, &s.closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(1, seen.canceled);
  ASSERT_EQ(1, s.closed);

  /* A store cannot be opened on a closing client. */
  ASSERT_OK(fleet_client_close(&c.client, ctx_on_close));
  ASSERT_ERR(FLEET_ECLOSING, fleet_store_init(&c.client, &s.store, NULL));
  fleet_test_loop_close(&c.loop);
  ASSERT_EQ(1, c.closed);
}

/* Ping answers while the backend does, and fails while Redis is down. */
CONFORMANCE_IMPL(store_ping) {
  client_ctx_t c;
  st_t s;
  int rc;

  open_both(&c, &s, b, NULL);
  ASSERT_OK(st_ping(&s));
  if (b->redis != NULL) {
    ASSERT_OK(fleet_test_redis_stop(b->redis));
    rc = st_ping(&s);
    ASSERT(rc == FLEET_EUNAVAILABLE || rc == FLEET_ETIMEDOUT ||
           rc == FLEET_ECONNLOST);
    ASSERT_OK(fleet_test_redis_restart(b->redis));
    while (st_ping(&s) != 0)
      st_sleep(&c.loop, 50);
  }
  st_close(&s);
  ctx_close(&c);
}

/* Two clients of one backend (a memory peer, or the same Redis) see the
 * same records, indexes and events. */
CONFORMANCE_IMPL(store_two_clients) {
  fleet_client_options_t o;
  fleet_client_t other;
  fleet_store_options_t so;
  client_ctx_t c;
  st_t s1, s2;
  char *ids;

  open_both(&c, &s1, b, NULL);
  fleet_client_options_init(&o);
  if (b->redis == NULL)
    o.memory_peer = &c.client;
  ASSERT_OK(fleet_client_init(&c.loop, &other, b->url, &o));
  fleet_store_options_init(&so);
  so.prefix = "t";
  st_open(&s2, &other, &so);
  st_put_ix(&s1, "runs", "r1", "from-1", "agent", "a", 0);
  ASSERT_OK(st_append(&s1, "runs", sb("r1"), &(fleet_bytes_t){"e1", 2}, 1));
  ASSERT_OK(st_get(&s2, "runs", sb("r1")));
  ASSERT_STR_EQ("from-1", s2.value);
  ASSERT_OK(st_count(&s2, "runs", sb("r1")));
  ASSERT_EQ(1, s2.n);
  st_put_ix(&s2, "runs", "r2", "from-2", "agent", "a", 0);
  ids = st_list_all(&s1, "runs", "agent", "a", 10);
  ASSERT_STR_EQ("r1,r2", ids);
  free(ids);
  ASSERT_OK(st_delete(&s2, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_get(&s1, "runs", sb("r1")));
  st_close(&s2);
  ASSERT_OK(fleet_client_close(&other, NULL));
  st_close(&s1);
  ctx_close(&c);
}
