/* test_store_index.c -- the store's indexes on both adapters: entries follow
 * puts, replaces and deletes, expired and dangling entries are never
 * listed and are pruned, and pagination stays correct while records are
 * added, deleted and refreshed between pages. */
#include "core/client.h"
#include "test_store_ctx.h"

static void open_ix(client_ctx_t *c, st_t *s, fleet_test_backend_t *b) {
  fleet_store_options_t so;

  ctx_init(c, b->url, NULL);
  fleet_store_options_init(&so);
  so.prefix = "t";
  st_open(s, &c->client, &so);
}

/* ZCARD of a Redis key, raw. */
static long long raw_zcard(fleet_test_backend_t *b, const char *key) {
  redisReply *r = fleet_test_redis_cmd(b->redis, "ZCARD %s", key);
  long long n;

  ASSERT_NOT_NULL(r);
  ASSERT_EQ(REDIS_REPLY_INTEGER, r->type);
  n = r->integer;
  freeReplyObject(r);
  return n;
}

/* Asserts that the listing of (index, value) is exactly `want`. */
static void list_is(st_t *s, const char *coll, const char *index,
                    const char *value, const char *want) {
  char *ids = st_list_all(s, coll, index, value, 2);
  ASSERT_STR_EQ(want, ids);
  free(ids);
}

/* Puts `id` with the given index pairs ("name", "value", ...). */
static void put_pairs(st_t *s, const char *id, const char *const *pairs,
                      size_t npairs) {
  fleet_store_index_t ix[FLEET_STORE_INDEXES_MAX];
  fleet_store_put_options_t o;
  size_t i;

  memset(&o, 0, sizeof(o));
  for (i = 0; i < npairs; i++) {
    ix[i].name = pairs[2 * i];
    ix[i].value = sb(pairs[2 * i + 1]);
  }
  o.indexes = ix;
  o.nindexes = npairs;
  ASSERT_OK(st_put(s, "runs", sb(id), sb(id), &o));
}

CONFORMANCE_IMPL(store_index_consistency) {
  static const char *const r1[] = {"agent", "a", "session", "s1"};
  static const char *const r2[] = {"agent", "a", "session", "s2"};
  static const char *const r3[] = {"agent", "b"};
  static const char *const r4[] = {"agent", "c", "agent", "c"};
  static const char bin[] = {'x', '\0', 'y'};
  fleet_store_index_t bix = {"agent", {bin, sizeof(bin)}};
  fleet_store_put_options_t bo = {&bix, 1, 0};
  client_ctx_t c;
  st_t s;

  open_ix(&c, &s, b);
  list_is(&s, "runs", "agent", "a", "");
  put_pairs(&s, "r1", r1, 2);
  put_pairs(&s, "r2", r2, 2);
  put_pairs(&s, "r3", r3, 1);
  list_is(&s, "runs", "agent", "a", "r1,r2");
  list_is(&s, "runs", "session", "s1", "r1");
  list_is(&s, "runs", "agent", "b", "r3");
  /* Another collection has its own indexes. */
  list_is(&s, "sessions", "agent", "a", "");

  /* Delete removes the record's entries from every index. */
  ASSERT_OK(st_delete(&s, "runs", sb("r1")));
  list_is(&s, "runs", "agent", "a", "r2");
  list_is(&s, "runs", "session", "s1", "");
  if (b->redis != NULL) {
    ASSERT_EQ(1, raw_zcard(b, "{t:runs}:idx:agent:a"));
    ASSERT_EQ(0, raw_zcard(b, "{t:runs}:idx:session:s1"));
  }

  /* Replace moves the record to its new index entries only (and, a
   * millisecond later, after r3: the index is ordered by expiry). */
  st_sleep(&c.loop, 5);
  put_pairs(&s, "r2", r3, 1);
  list_is(&s, "runs", "agent", "a", "");
  list_is(&s, "runs", "session", "s2", "");
  list_is(&s, "runs", "agent", "b", "r3,r2");
  put_pairs(&s, "r3", NULL, 0);
  list_is(&s, "runs", "agent", "b", "r2");
  if (b->redis != NULL) {
    ASSERT_EQ(0, raw_zcard(b, "{t:runs}:idx:agent:a"));
    ASSERT_EQ(0, raw_zcard(b, "{t:runs}:idx:session:s2"));
    ASSERT_EQ(1, raw_zcard(b, "{t:runs}:idx:agent:b"));
  }

  /* A pair given twice counts once; values are binary-safe. */
  put_pairs(&s, "r4", r4, 2);
  list_is(&s, "runs", "agent", "c", "r4");
  ASSERT_OK(st_put(&s, "runs", sb("r5"), sb("v"), &bo));
  ASSERT_OK(
      st_list(&s, "runs", bix.name, bix.value, (fleet_bytes_t){NULL, 0}, 10));
  ASSERT_EQ(1, s.nitems);
  ASSERT_MEM_EQ("r5", s.items[0].id.base, 2);
  ASSERT_MEM_EQ("v", s.items[0].value.base, 1);
  list_is(&s, "runs", "agent", "x", "");
  st_close(&s);
  ctx_close(&c);
}

static void on_unlinked(void *arg, int status, const fleet__reply_t *r) {
  ASSERT_OK(status);
  ASSERT_EQ(FLEET__REPLY_INT, r->type);
  ASSERT_EQ(1, r->integer);
  *(int *)arg = 1;
}

/* Deletes a key behind the store's back, through the UNLINK op. */
static void unlink_key(client_ctx_t *c, const char *key) {
  fleet_bytes_t k = sb(key);
  int done = 0;

  ASSERT_OK(fleet__backend_call(fleet__client_backend(&c->client),
                                FLEET__OP_STORE_UNLINK, &k, 1, NULL, 0,
                                on_unlinked, &done));
  ASSERT(fleet_test_run_until(&c->loop, fleet_test_flag_set, &done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

/* Entries of expired records are never listed and are pruned; so are
 * entries whose record vanished some other way. */
CONFORMANCE_IMPL(store_index_expiry) {
  client_ctx_t c;
  st_t s;

  open_ix(&c, &s, b);
  st_put_ix(&s, "runs", "short1", "v", "agent", "a", 150);
  st_put_ix(&s, "runs", "long", "v", "agent", "a", 0);
  st_put_ix(&s, "runs", "short2", "v", "agent", "a", 150);
  list_is(&s, "runs", "agent", "a", "short1,short2,long");
  st_sleep(&c.loop, 450);
  list_is(&s, "runs", "agent", "a", "long");
  if (b->redis != NULL)
    ASSERT_EQ(1, raw_zcard(b, "{t:runs}:idx:agent:a"));

  /* The record goes without its index entry: the listing skips the entry
   * and removes it. */
  st_put_ix(&s, "runs", "gone", "v", "agent", "a", 0);
  unlink_key(&c, "{t:runs}:rec:gone");
  if (b->redis != NULL)
    ASSERT_EQ(2, raw_zcard(b, "{t:runs}:idx:agent:a"));
  list_is(&s, "runs", "agent", "a", "long");
  if (b->redis != NULL)
    ASSERT_EQ(1, raw_zcard(b, "{t:runs}:idx:agent:a"));
  st_close(&s);
  ctx_close(&c);
}

/* What a paginated listing saw of each record. */
#define PAGES_ORIG 30
#define PAGES_NEW_MAX 60

static int name_index(char names[][16], int n, const fleet_bytes_t *id) {
  int i;
  for (i = 0; i < n; i++)
    if (strlen(names[i]) == id->len && memcmp(names[i], id->base, id->len) == 0)
      return i;
  return -1;
}

static void on_put_count(fleet_handle_t *st, int status, void *arg) {
  ASSERT_OK(status);
  (*(int *)arg)++;
}

/* Pages through 30 records, 7 at a time, while adding 3 records, deleting
 * one not yet listed and (once) deleting the record the cursor names
 * between pages. The originals were put in one burst, so many share an
 * expiry to the millisecond and sort by id. */
CONFORMANCE_IMPL(store_list_pages) {
  fleet_store_index_t ix = {"agent", {"a", 1}};
  fleet_store_put_options_t po = {&ix, 1, 0};
  char names[PAGES_ORIG + PAGES_NEW_MAX][16];
  int seen[PAGES_ORIG + PAGES_NEW_MAX] = {0};
  int deleted[PAGES_ORIG] = {0};
  int nnames = PAGES_ORIG, done = 0, page, i, k, victim = PAGES_ORIG - 1;
  fleet_bytes_t cursor = {NULL, 0};
  char *cur = NULL;
  client_ctx_t c;
  st_t s;

  open_ix(&c, &s, b);
  for (i = 0; i < PAGES_ORIG; i++) {
    snprintf(names[i], sizeof(names[i]), "o%02d", i);
    ASSERT_OK(fleet_store_put(&s.store, "runs", sb(names[i]), sb(names[i]), &po,
                              on_put_count, &done));
  }
  ASSERT(fleet_test_wait_count(&c.loop, &done, PAGES_ORIG,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));

  for (page = 0; page < 40; page++) {
    ASSERT_OK(st_list(&s, "runs", "agent", sb("a"), cursor, 7));
    ASSERT_LE(s.nitems, 7);
    for (i = 0; i < (int)s.nitems; i++) {
      int at = name_index(names, nnames, &s.items[i].id);
      ASSERT_GE(at, 0);
      ASSERT_EQ(s.items[i].id.len, s.items[i].value.len);
      ASSERT_MEM_EQ(names[at], s.items[i].value.base, s.items[i].value.len);
      if (at < PAGES_ORIG)
        ASSERT_EQ(0, deleted[at]);
      seen[at]++;
    }
    free(cur);
    cur = NULL;
    if (s.cursor == NULL)
      break;
    cur = malloc(s.cursor_len);
    ASSERT_NOT_NULL(cur);
    memcpy(cur, s.cursor, s.cursor_len);
    cursor.base = cur;
    cursor.len = s.cursor_len;
    /* Between pages: new records (their ids sort after the originals', so
     * that a tie with the cursor's expiry still puts them after it)... */
    for (k = 0; k < 3 && nnames < PAGES_ORIG + PAGES_NEW_MAX; k++) {
      snprintf(names[nnames], sizeof(names[nnames]), "z%02d-%d", page, k);
      ASSERT_OK(st_put(&s, "runs", sb(names[nnames]), sb(names[nnames]), &po));
      nnames++;
    }
    /* ...one original not listed yet deleted... */
    while (victim >= 0 && seen[victim] > 0)
      victim--;
    if (victim >= 0) {
      ASSERT_OK(st_delete(&s, "runs", sb(names[victim])));
      deleted[victim] = 1;
      victim--;
    }
    /* ...and once, the record the cursor names. */
    if (page == 1) {
      fleet_bytes_t last = {memchr(cur, ':', cursor.len), 0};
      last.base = (const char *)last.base + 1;
      last.len = cursor.len - (size_t)((const char *)last.base - cur);
      ASSERT_OK(st_delete(&s, "runs", last));
    }
  }
  ASSERT_NULL(cur);
  ASSERT_LT(page, 40);
  for (i = 0; i < nnames; i++) {
    if (i < PAGES_ORIG && deleted[i])
      ASSERT_EQ(0, seen[i]);
    else
      ASSERT_EQ(1, seen[i]);
  }
  ASSERT_GT(nnames, PAGES_ORIG);
  st_close(&s);
  ctx_close(&c);
}

/* A record refreshed during a listing moves after the cursor: one already
 * listed comes again, one not yet listed comes once, and the cursor still
 * works when its own record moved. */
CONFORMANCE_IMPL(store_list_refreshed) {
  char *ids;
  client_ctx_t c;
  st_t s;
  int i;

  open_ix(&c, &s, b);
  for (i = 0; i < 10; i++) {
    char id[8];
    snprintf(id, sizeof(id), "a%d", i);
    st_put_ix(&s, "runs", id, "v", "agent", "a", 0);
  }
  ASSERT_OK(st_list(&s, "runs", "agent", sb("a"), (fleet_bytes_t){NULL, 0}, 4));
  ASSERT_EQ(4, s.nitems);
  ASSERT_MEM_EQ("a0", s.items[0].id.base, 2);
  ASSERT_MEM_EQ("a3", s.items[3].id.base, 2);
  ASSERT_NOT_NULL(s.cursor);
  {
    char cur[64];
    size_t len = s.cursor_len;
    memcpy(cur, s.cursor, len);
    /* Later than every expiry so far, to the millisecond. */
    st_sleep(&c.loop, 5);
    ASSERT_OK(st_touch(&s, "runs", sb("a1"), 0));
    ASSERT_OK(st_touch(&s, "runs", sb("a3"), 0));
    ASSERT_OK(st_touch(&s, "runs", sb("a5"), 0));
    ASSERT_OK(
        st_list(&s, "runs", "agent", sb("a"), (fleet_bytes_t){cur, len}, 100));
  }
  /* a2 sorts before the cursor (a3's old place): it is not listed
   * again. */
  ASSERT_EQ(8, s.nitems);
  ASSERT_NULL(s.cursor);
  {
    static const char *const want[] = {"a4", "a6", "a7", "a8",
                                       "a9", "a1", "a3", "a5"};
    for (i = 0; i < 8; i++) {
      ASSERT_EQ(2, s.items[i].id.len);
      ASSERT_MEM_EQ(want[i], s.items[i].id.base, 2);
    }
  }
  ids = st_list_all(&s, "runs", "agent", "a", 3);
  ASSERT_STR_EQ("a0,a2,a4,a6,a7,a8,a9,a1,a3,a5", ids);
  free(ids);

  /* The cursor's record moves before the cursor (a shorter TTL): the next
   * page starts right after the cursor's old place all the same. */
  for (i = 0; i < 5; i++) {
    char id[8];
    snprintf(id, sizeof(id), "b%d", i);
    st_put_ix(&s, "runs", id, "v", "agent", "b", 0);
  }
  ASSERT_OK(st_list(&s, "runs", "agent", sb("b"), (fleet_bytes_t){NULL, 0}, 2));
  ASSERT_EQ(2, s.nitems);
  ASSERT_MEM_EQ("b1", s.items[1].id.base, 2);
  {
    char cur[64];
    size_t len = s.cursor_len;
    memcpy(cur, s.cursor, len);
    ASSERT_OK(st_touch(&s, "runs", sb("b1"), 60000));
    ASSERT_OK(
        st_list(&s, "runs", "agent", sb("b"), (fleet_bytes_t){cur, len}, 100));
  }
  ASSERT_EQ(3, s.nitems);
  ASSERT_MEM_EQ("b2", s.items[0].id.base, 2);
  ASSERT_MEM_EQ("b4", s.items[2].id.base, 2);
  st_close(&s);
  ctx_close(&c);
}
