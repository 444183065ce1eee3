/* test_store_ttl.c -- the store's expiry on both adapters: records, events
 * and index entries expire together after a short TTL, and put, touch and
 * event appends push the expiry back. Sleeps are generous multiples of
 * the TTLs, so that a slow run cannot fail them. */
#include "test_store_ctx.h"

/* Opens a client on `b` and a store "t" whose TTL is `ttl_ms`. */
static void open_ttl(client_ctx_t *c, st_t *s, fleet_test_backend_t *b,
                     uint64_t ttl_ms) {
  fleet_store_options_t so;

  ctx_init(c, b->url, NULL);
  fleet_store_options_init(&so);
  so.prefix = "t";
  so.ttl_ms = ttl_ms;
  st_open(s, &c->client, &so);
}

/* Whether the Redis key exists (raw, through the fixture). */
static int raw_exists(fleet_test_backend_t *b, const char *key) {
  redisReply *r = fleet_test_redis_cmd(b->redis, "EXISTS %s", key);
  int n;

  ASSERT_NOT_NULL(r);
  ASSERT_EQ(REDIS_REPLY_INTEGER, r->type);
  n = (int)r->integer;
  freeReplyObject(r);
  return n;
}

/* A record, its events and its index entry all expire after the TTL. */
CONFORMANCE_IMPL(store_ttl_expiry) {
  fleet_bytes_t ev = {"e", 1};
  client_ctx_t c;
  st_t s;
  char *ids;

  open_ttl(&c, &s, b, 200);
  st_put_ix(&s, "runs", "r1", "v", "agent", "a", 0);
  ASSERT_OK(st_append(&s, "runs", sb("r1"), &ev, 1));
  ASSERT_OK(st_get(&s, "runs", sb("r1")));
  ASSERT_GT(s.ttl_ms, 0);
  ASSERT_LE(s.ttl_ms, 200);
  ids = st_list_all(&s, "runs", "agent", "a", 10);
  ASSERT_STR_EQ("r1", ids);
  free(ids);
  if (b->redis != NULL) {
    ASSERT_EQ(1, raw_exists(b, "{t:runs}:rec:r1"));
    ASSERT_EQ(1, raw_exists(b, "{t:runs}:ev:r1"));
    ASSERT_EQ(1, raw_exists(b, "{t:runs}:idx:agent:a"));
  }

  st_sleep(&c.loop, 500);
  ASSERT_ERR(FLEET_ENOTFOUND, st_get(&s, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_exists(&s, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_count(&s, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_read(&s, "runs", sb("r1"), 0, 10));
  ASSERT_ERR(FLEET_ENOTFOUND, st_touch(&s, "runs", sb("r1"), 0));
  ASSERT_ERR(FLEET_ENOTFOUND, st_append(&s, "runs", sb("r1"), &ev, 1));
  ids = st_list_all(&s, "runs", "agent", "a", 10);
  ASSERT_STR_EQ("", ids);
  free(ids);
  if (b->redis != NULL) {
    /* Every key expired on the server, the index set too. */
    ASSERT_EQ(0, raw_exists(b, "{t:runs}:rec:r1"));
    ASSERT_EQ(0, raw_exists(b, "{t:runs}:ev:r1"));
    ASSERT_EQ(0, raw_exists(b, "{t:runs}:idx:agent:a"));
  }
  /* Put again: a new record, with no events. */
  st_put_ix(&s, "runs", "r1", "v2", "agent", "a", 0);
  ASSERT_OK(st_count(&s, "runs", sb("r1")));
  ASSERT_EQ(0, s.n);
  st_close(&s);
  ctx_close(&c);
}

/* Replacing a record refreshes the expiry of the record, its events and
 * its index entries. */
CONFORMANCE_IMPL(store_ttl_refresh_put) {
  fleet_bytes_t ev = {"e", 1};
  client_ctx_t c;
  st_t s;
  char *ids;

  open_ttl(&c, &s, b, 400);
  st_put_ix(&s, "runs", "r1", "v1", "agent", "a", 0);
  ASSERT_OK(st_append(&s, "runs", sb("r1"), &ev, 1));
  st_sleep(&c.loop, 250);
  st_put_ix(&s, "runs", "r1", "v2", "agent", "a", 0);
  st_sleep(&c.loop, 250);
  /* 500 ms after the first put, 250 ms after the second. */
  ASSERT_OK(st_get(&s, "runs", sb("r1")));
  ASSERT_STR_EQ("v2", s.value);
  ASSERT_OK(st_count(&s, "runs", sb("r1")));
  ASSERT_EQ(1, s.n);
  ids = st_list_all(&s, "runs", "agent", "a", 10);
  ASSERT_STR_EQ("r1", ids);
  free(ids);
  st_sleep(&c.loop, 600);
  ASSERT_ERR(FLEET_ENOTFOUND, st_get(&s, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_count(&s, "runs", sb("r1")));
  ids = st_list_all(&s, "runs", "agent", "a", 10);
  ASSERT_STR_EQ("", ids);
  free(ids);
  st_close(&s);
  ctx_close(&c);
}

/* Appending an event refreshes the expiry of the record, its events and
 * its index entries, with the record's own TTL. */
CONFORMANCE_IMPL(store_ttl_refresh_append) {
  fleet_bytes_t ev = {"e", 1};
  client_ctx_t c;
  st_t s;
  char *ids;

  open_ttl(&c, &s, b, 400);
  st_put_ix(&s, "runs", "r1", "v", "agent", "a", 0);
  st_sleep(&c.loop, 250);
  ASSERT_OK(st_append(&s, "runs", sb("r1"), &ev, 1));
  st_sleep(&c.loop, 250);
  ASSERT_OK(st_exists(&s, "runs", sb("r1")));
  ASSERT_OK(st_count(&s, "runs", sb("r1")));
  ASSERT_EQ(1, s.n);
  ids = st_list_all(&s, "runs", "agent", "a", 10);
  ASSERT_STR_EQ("r1", ids);
  free(ids);
  st_sleep(&c.loop, 600);
  ASSERT_ERR(FLEET_ENOTFOUND, st_exists(&s, "runs", sb("r1")));

  /* A record put with its own long TTL keeps it on append, rather than
   * falling back to the store's short one. */
  {
    fleet_store_put_options_t po;
    memset(&po, 0, sizeof(po));
    po.ttl_ms = 60000;
    ASSERT_OK(st_put(&s, "runs", sb("r2"), sb("v"), &po));
    ASSERT_OK(st_append(&s, "runs", sb("r2"), &ev, 1));
    ASSERT_OK(st_get(&s, "runs", sb("r2")));
    ASSERT_GT(s.ttl_ms, 30000);
  }
  st_close(&s);
  ctx_close(&c);
}

/* Touch pushes the expiry back with the record's TTL, or sets a new TTL,
 * which may be shorter. */
CONFORMANCE_IMPL(store_ttl_touch) {
  client_ctx_t c;
  st_t s;
  char *ids;

  open_ttl(&c, &s, b, 400);
  st_put_ix(&s, "runs", "r1", "v", "agent", "a", 0);
  st_sleep(&c.loop, 250);
  ASSERT_OK(st_touch(&s, "runs", sb("r1"), 0));
  st_sleep(&c.loop, 250);
  ASSERT_OK(st_exists(&s, "runs", sb("r1")));
  ids = st_list_all(&s, "runs", "agent", "a", 10);
  ASSERT_STR_EQ("r1", ids);
  free(ids);

  /* A longer TTL, kept by the record for later refreshes. */
  ASSERT_OK(st_touch(&s, "runs", sb("r1"), 60000));
  ASSERT_OK(st_get(&s, "runs", sb("r1")));
  ASSERT_GT(s.ttl_ms, 30000);
  ASSERT_OK(st_touch(&s, "runs", sb("r1"), 0));
  ASSERT_OK(st_get(&s, "runs", sb("r1")));
  ASSERT_GT(s.ttl_ms, 30000);

  /* A shorter one: everything expires sooner, the index entry too. */
  ASSERT_OK(st_touch(&s, "runs", sb("r1"), 150));
  st_sleep(&c.loop, 450);
  ASSERT_ERR(FLEET_ENOTFOUND, st_exists(&s, "runs", sb("r1")));
  ids = st_list_all(&s, "runs", "agent", "a", 10);
  ASSERT_STR_EQ("", ids);
  free(ids);
  st_close(&s);
  ctx_close(&c);
}
