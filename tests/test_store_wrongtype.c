/* test_store_wrongtype.c -- data the store did not write under its keys, on
 * both adapters: keys of the wrong type give FLEET_EWRONGTYPE and change
 * nothing; on Redis, records with missing or garbage fields give
 * FLEET_EPROTO. Wrong types are made through the store's own ops called
 * with a crafted tag, whose keys are also keys of collection "runs": the
 * events list of record "1" under the tag "{t:runs}:rec:w" is the record
 * key of record "w:ev:1". So the same test runs on both backends. */
#include "core/client.h"
#include "test_store_ctx.h"

typedef struct {
  int done;
  int status;
  int64_t integer;
  size_t nelem;
} op_seen_t;

static void on_op(void *arg, int status, const fleet__reply_t *r) {
  op_seen_t *s = arg;
  s->done = 1;
  s->status = status;
  if (status == 0 && r->type == FLEET__REPLY_INT)
    s->integer = r->integer;
  if (status == 0 && r->type == FLEET__REPLY_ARRAY)
    s->nelem = r->nelem;
}

/* Runs one backend op and waits for it; returns its status. */
static int run_op(client_ctx_t *c, fleet__op_t op, const char *const *keys,
                  size_t nkeys, const char *const *args, size_t nargs,
                  op_seen_t *seen) {
  fleet_bytes_t k[4], a[4] = {{0}};
  size_t i;

  for (i = 0; i < nkeys; i++)
    k[i] = sb(keys[i]);
  for (i = 0; i < nargs; i++)
    a[i] = sb(args[i]);
  memset(seen, 0, sizeof(*seen));
  ASSERT_OK(fleet__backend_call(fleet__client_backend(&c->client), op, k, nkeys,
                                a, nargs, on_op, seen));
  ASSERT(fleet_test_run_until(&c->loop, fleet_test_flag_set, &seen->done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  return seen->status;
}

/* Makes "<tag>:rec:1" a hash by putting record "1" under `tag`. */
static void make_hash(client_ctx_t *c, const char *tag) {
  const char *const args[] = {"1", "60000", "v"};
  op_seen_t seen;
  ASSERT_OK(run_op(c, FLEET__OP_STORE_PUT, &tag, 1, args, 3, &seen));
}

/* Makes "<tag>:ev:1" a list by appending an event to record "1" under
 * `tag`. */
static void make_list(client_ctx_t *c, const char *tag) {
  const char *const args[] = {"1", "0", "e"};
  op_seen_t seen;
  make_hash(c, tag);
  ASSERT_OK(run_op(c, FLEET__OP_STORE_APPEND, &tag, 1, args, 3, &seen));
}

static void drop_key(client_ctx_t *c, const char *key) {
  const char *const keys[] = {key};
  op_seen_t seen;
  ASSERT_OK(run_op(c, FLEET__OP_STORE_UNLINK, keys, 1, NULL, 0, &seen));
}

/* The length of list "<tag>:ev:1", through the READ op of record "1". */
static size_t list_len(client_ctx_t *c, const char *tag) {
  const char *const args[] = {"1", "0", "100"};
  op_seen_t seen;
  ASSERT_OK(run_op(c, FLEET__OP_STORE_READ, &tag, 1, args, 3, &seen));
  return seen.nelem;
}

CONFORMANCE_IMPL(store_wrong_type) {
  fleet_store_index_t ok = {"agent", {"ok:rec:1", 8}};
  fleet_store_index_t bad = {"agent", {"bad:rec:1", 9}};
  fleet_store_put_options_t po = {&ok, 1, 0}, pb = {&bad, 1, 0};
  fleet_bytes_t ev = {"e", 1};
  fleet_store_options_t so;
  client_ctx_t c;
  st_t s;

  ctx_init(&c, b->url, NULL);
  fleet_store_options_init(&so);
  so.prefix = "t";
  st_open(&s, &c.client, &so);
  ASSERT_OK(st_put(&s, "runs", sb("x"), sb("v"), NULL));

  /* A record key holding a list. */
  make_list(&c, "{t:runs}:rec:w");
  ASSERT_ERR(FLEET_EWRONGTYPE, st_get(&s, "runs", sb("w:ev:1")));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_exists(&s, "runs", sb("w:ev:1")));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_put(&s, "runs", sb("w:ev:1"), sb("v"), &po));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_delete(&s, "runs", sb("w:ev:1")));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_touch(&s, "runs", sb("w:ev:1"), 0));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_append(&s, "runs", sb("w:ev:1"), &ev, 1));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_read(&s, "runs", sb("w:ev:1"), 0, 10));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_count(&s, "runs", sb("w:ev:1")));
  ASSERT_EQ(1, list_len(&c, "{t:runs}:rec:w"));
  /* The failed put wrote no index entry. */
  ASSERT_OK(
      st_list(&s, "runs", "agent", ok.value, (fleet_bytes_t){NULL, 0}, 10));
  ASSERT_EQ(0, s.nitems);

  /* An index key holding a hash: putting a record under it fails and
   * writes nothing; listing it fails. */
  make_hash(&c, "{t:runs}:idx:agent:bad");
  ASSERT_ERR(FLEET_EWRONGTYPE, st_put(&s, "runs", sb("r"), sb("v"), &pb));
  ASSERT_ERR(FLEET_ENOTFOUND, st_exists(&s, "runs", sb("r")));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_list(&s, "runs", "agent", bad.value,
                                       (fleet_bytes_t){NULL, 0}, 10));

  /* An existing record whose index key became a hash: every update fails
   * and leaves the record as it was. */
  ASSERT_OK(st_put(&s, "runs", sb("r3"), sb("old"), &po));
  drop_key(&c, "{t:runs}:idx:agent:ok:rec:1");
  make_hash(&c, "{t:runs}:idx:agent:ok");
  ASSERT_ERR(FLEET_EWRONGTYPE, st_touch(&s, "runs", sb("r3"), 0));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_delete(&s, "runs", sb("r3")));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_put(&s, "runs", sb("r3"), sb("new"), NULL));
  /* The same index entry again: the put's first write, the index's ZADD,
   * is what fails. */
  ASSERT_ERR(FLEET_EWRONGTYPE, st_put(&s, "runs", sb("r3"), sb("new"), &po));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_append(&s, "runs", sb("r3"), &ev, 1));
  ASSERT_OK(st_get(&s, "runs", sb("r3")));
  ASSERT_STR_EQ("old", s.value);
  ASSERT_OK(st_count(&s, "runs", sb("r3")));
  ASSERT_EQ(0, s.n);

  /* The same with events already there: the append's events are taken
   * back, the earlier ones stay. */
  {
    fleet_store_index_t e6 = {"agent", {"e6:rec:1", 8}};
    fleet_store_put_options_t p6 = {&e6, 1, 0};
    fleet_bytes_t two[2] = {{"a", 1}, {"b", 1}};
    ASSERT_OK(st_put(&s, "runs", sb("r6"), sb("v6"), &p6));
    ASSERT_OK(st_append(&s, "runs", sb("r6"), two, 2));
    drop_key(&c, "{t:runs}:idx:agent:e6:rec:1");
    make_hash(&c, "{t:runs}:idx:agent:e6");
    ASSERT_ERR(FLEET_EWRONGTYPE, st_append(&s, "runs", sb("r6"), two, 2));
    ASSERT_OK(st_count(&s, "runs", sb("r6")));
    ASSERT_EQ(2, s.n);
    ASSERT_ERR(FLEET_EWRONGTYPE, st_put(&s, "runs", sb("r6"), sb("x"), &p6));
    ASSERT_OK(st_get(&s, "runs", sb("r6")));
    ASSERT_STR_EQ("v6", s.value);
  }

  /* An events key holding a hash: what reads or writes events fails and
   * leaves the record as it was. (A put, which only moves the events'
   * expiry, does not look inside.) */
  ASSERT_OK(st_put(&s, "runs", sb("r4:rec:1"), sb("v"), NULL));
  make_hash(&c, "{t:runs}:ev:r4");
  ASSERT_OK(st_touch(&s, "runs", sb("r4:rec:1"), 60000));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_append(&s, "runs", sb("r4:rec:1"), &ev, 1));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_read(&s, "runs", sb("r4:rec:1"), 0, 10));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_count(&s, "runs", sb("r4:rec:1")));
  ASSERT_OK(st_get(&s, "runs", sb("r4:rec:1")));
  ASSERT_STR_EQ("v", s.value);
  ASSERT_GT(s.ttl_ms, 30000);

  /* A listed record's key holding a list. */
  {
    fleet_store_index_t q = {"agent", {"q", 1}};
    fleet_store_put_options_t pq = {&q, 1, 0};
    ASSERT_OK(st_put(&s, "runs", sb("r5:ev:1"), sb("v"), &pq));
    drop_key(&c, "{t:runs}:rec:r5:ev:1");
    make_list(&c, "{t:runs}:rec:r5");
    ASSERT_ERR(FLEET_EWRONGTYPE, st_list(&s, "runs", "agent", sb("q"),
                                         (fleet_bytes_t){NULL, 0}, 10));
  }
  st_close(&s);
  ctx_close(&c);
}

/* Records with missing or garbage fields, written raw on Redis. */
TEST_IMPL(store_redis_garbage) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_bytes_t ev = {"e", 1};
  fleet_store_options_t so;
  client_ctx_t c;
  st_t s;

  freeReplyObject(fleet_test_redis_cmd(r, "HSET {t:runs}:rec:g1 x y"));
  freeReplyObject(
      fleet_test_redis_cmd(r, "HSET {t:runs}:rec:g2 v val t 12abc"));
  freeReplyObject(fleet_test_redis_cmd(r, "HSET {t:runs}:rec:g3 v val"));
  freeReplyObject(fleet_test_redis_cmd(r, "SET {t:runs}:rec:g4 str"));
  freeReplyObject(fleet_test_redis_cmd(r, "HSET {t:runs}:rec:g5 v val t 0"));
  ctx_init(&c, fleet_test_redis_url(r), NULL);
  fleet_store_options_init(&so);
  so.prefix = "t";
  st_open(&s, &c.client, &so);

  /* No value. */
  ASSERT_ERR(FLEET_EPROTO, st_get(&s, "runs", sb("g1")));
  ASSERT_OK(st_exists(&s, "runs", sb("g1")));
  /* A bad or missing TTL, where the record's own TTL is needed. */
  ASSERT_ERR(FLEET_EPROTO, st_append(&s, "runs", sb("g2"), &ev, 1));
  ASSERT_ERR(FLEET_EPROTO, st_touch(&s, "runs", sb("g2"), 0));
  ASSERT_ERR(FLEET_EPROTO, st_append(&s, "runs", sb("g3"), &ev, 1));
  ASSERT_ERR(FLEET_EPROTO, st_touch(&s, "runs", sb("g5"), 0));
  ASSERT_OK(st_count(&s, "runs", sb("g2")));
  ASSERT_EQ(0, s.n);
  /* The value is still readable (no expiry: no time left is reported). */
  ASSERT_OK(st_get(&s, "runs", sb("g2")));
  ASSERT_STR_EQ("val", s.value);
  ASSERT_EQ(0, s.ttl_ms);
  /* A touch with a TTL repairs the record. */
  ASSERT_OK(st_touch(&s, "runs", sb("g2"), 60000));
  ASSERT_OK(st_append(&s, "runs", sb("g2"), &ev, 1));
  ASSERT_EQ(1, s.n);
  /* A string. */
  ASSERT_ERR(FLEET_EWRONGTYPE, st_get(&s, "runs", sb("g4")));
  ASSERT_ERR(FLEET_EWRONGTYPE, st_put(&s, "runs", sb("g4"), sb("v"), NULL));
  /* Replacing a record fleet did not write makes it one of fleet's. */
  ASSERT_OK(st_put(&s, "runs", sb("g1"), sb("fixed"), NULL));
  ASSERT_OK(st_get(&s, "runs", sb("g1")));
  ASSERT_STR_EQ("fixed", s.value);
  st_close(&s);
  ctx_close(&c);
  fleet_test_redis_free(r);
  return 0;
}
