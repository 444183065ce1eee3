/* test_store_clear.c -- fleet_store_clear() on both adapters (every key under
 * the prefix goes, in batches, and nothing else, even when the prefix holds
 * glob metacharacters), the SCAN op's glob matching on both adapters, and
 * the SCAN pattern the clear builds. */
#include "core/client.h"
#include "store/store_int.h"
#include "test_store_ctx.h"

/* The prefixes of the clear test. Each one's SCAN pattern, unescaped,
 * would also match keys of another one. */
static const char *const clear_prefixes[] = {"t*",   "tx",  "t",
                                             "t[x]", "t*a", "t?"};
#define CLEAR_NSTORES (sizeof(clear_prefixes) / sizeof(clear_prefixes[0]))

/* Three records indexed under agent=a, the last one with events: five
 * keys. (The append refreshes r3, which stays last in the index.) */
static void clear_fill(st_t *s) {
  fleet_bytes_t ev = {"e", 1};
  st_put_ix(s, "runs", "r1", "v", "agent", "a", 0);
  st_put_ix(s, "runs", "r2", "v", "agent", "a", 0);
  st_put_ix(s, "runs", "r3", "v", "agent", "a", 0);
  ASSERT_OK(st_append(s, "runs", sb("r3"), &ev, 1));
}

/* Asserts that the store still holds what clear_fill() wrote. */
static void clear_intact(st_t *s) {
  char *ids = st_list_all(s, "runs", "agent", "a", 10);
  ASSERT_STR_EQ("r1,r2,r3", ids);
  free(ids);
  ASSERT_OK(st_count(s, "runs", sb("r3")));
  ASSERT_EQ(1, s->n);
}

/* Every key of the Redis server, through raw SCAN calls. */
static size_t raw_keys(fleet_test_backend_t *b, char keys[][64], size_t cap) {
  char cursor[32] = "0";
  size_t n = 0, i;
  int rounds = 0;

  do {
    redisReply *r = fleet_test_redis_cmd(b->redis, "SCAN %s COUNT 100", cursor);
    ASSERT_NOT_NULL(r);
    ASSERT_EQ(REDIS_REPLY_ARRAY, r->type);
    snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
    for (i = 0; i < r->element[1]->elements; i++) {
      ASSERT_LT(n, cap);
      snprintf(keys[n++], 64, "%s", r->element[1]->element[i]->str);
    }
    freeReplyObject(r);
    ASSERT_LT(++rounds, 1000);
  } while (strcmp(cursor, "0") != 0);
  return n;
}

CONFORMANCE_IMPL(store_clear_prefix) {
  static char keys[256][64];
  fleet_store_options_t so;
  st_t s[CLEAR_NSTORES];
  client_ctx_t c;
  size_t i, n;

  ctx_init(&c, b->url, NULL);
  fleet_store_options_init(&so);
  for (i = 0; i < CLEAR_NSTORES; i++) {
    so.prefix = clear_prefixes[i];
    st_open(&s[i], &c.client, &so);
    clear_fill(&s[i]);
  }
  if (b->redis != NULL) {
    /* Keys fleet did not write: one under the prefix, one beside it. */
    freeReplyObject(fleet_test_redis_cmd(b->redis, "SET {t*:junk} x"));
    freeReplyObject(fleet_test_redis_cmd(b->redis, "SET {tx:junk} x"));
    freeReplyObject(fleet_test_redis_cmd(b->redis, "SET t*:x x"));
  }

  /* "t*" goes, with every key under it; the rest stays. */
  ASSERT_OK(st_clear(&s[0]));
  ASSERT_EQ(b->redis != NULL ? 6 : 5, s[0].n);
  ASSERT_ERR(FLEET_ENOTFOUND, st_get(&s[0], "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_count(&s[0], "runs", sb("r3")));
  {
    char *ids = st_list_all(&s[0], "runs", "agent", "a", 10);
    ASSERT_STR_EQ("", ids);
    free(ids);
  }
  for (i = 1; i < CLEAR_NSTORES; i++)
    clear_intact(&s[i]);
  ASSERT_OK(st_clear(&s[0]));
  ASSERT_EQ(0, s[0].n);

  /* "t[x]" goes; "tx" (which "{t[x]:*" unescaped matches) stays. */
  ASSERT_OK(st_clear(&s[3]));
  ASSERT_EQ(5, s[3].n);
  for (i = 1; i < CLEAR_NSTORES; i++)
    if (i != 3)
      clear_intact(&s[i]);

  if (b->redis != NULL) {
    /* Seen raw: nothing under the cleared prefixes, everything else. */
    n = raw_keys(b, keys, 256);
    ASSERT_EQ(4 * 5 + 2, n);
    for (i = 0; i < n; i++) {
      ASSERT(strncmp(keys[i], "{t*:", 4) != 0);
      ASSERT(strncmp(keys[i], "{t[x]:", 6) != 0);
    }
  }
  for (i = 0; i < CLEAR_NSTORES; i++)
    st_close(&s[i]);
  ctx_close(&c);
}

static void on_put_ok(fleet_handle_t *st, int status, void *arg) {
  ASSERT_OK(status);
  (*(int *)arg)++;
}

/* A clear of many keys takes several SCAN and UNLINK rounds. */
CONFORMANCE_IMPL(store_clear_many) {
  fleet_store_index_t ix = {"agent", {"a", 1}};
  fleet_store_put_options_t po = {&ix, 1, 0};
  fleet_store_options_t so;
  client_ctx_t c;
  st_t s, other;
  int done = 0, i;
  char id[16];

  ctx_init(&c, b->url, NULL);
  fleet_store_options_init(&so);
  so.prefix = "many";
  st_open(&s, &c.client, &so);
  so.prefix = "other";
  st_open(&other, &c.client, &so);
  clear_fill(&other);
  for (i = 0; i < 2500; i++) {
    snprintf(id, sizeof(id), "r%d", i);
    ASSERT_OK(fleet_store_put(&s.store, i % 2 ? "runs" : "sessions", sb(id),
                              sb("v"), &po, on_put_ok, &done));
  }
  ASSERT(fleet_test_wait_count(&c.loop, &done, 2500,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(st_clear(&s));
  /* 2500 records and two index sets. */
  ASSERT_EQ(2502, s.n);
  ASSERT_OK(st_clear(&s));
  ASSERT_EQ(0, s.n);
  clear_intact(&other);
  st_close(&other);
  st_close(&s);
  ctx_close(&c);
}

/* The SCAN op: the same reply shape and the same glob matching on both
 * adapters. */

typedef struct {
  int done;
  char cursor[32];
  char found[64][32];
  size_t n;
} scan_seen_t;

static void on_scan(void *arg, int status, const fleet__reply_t *r) {
  scan_seen_t *s = arg;
  size_t i, j;

  ASSERT_OK(status);
  ASSERT_EQ(FLEET__REPLY_ARRAY, r->type);
  ASSERT_EQ(2, r->nelem);
  ASSERT_EQ(FLEET__REPLY_STR, r->elem[0].type);
  ASSERT_LT(r->elem[0].len, sizeof(s->cursor));
  memcpy(s->cursor, r->elem[0].str, r->elem[0].len);
  s->cursor[r->elem[0].len] = '\0';
  ASSERT_EQ(FLEET__REPLY_ARRAY, r->elem[1].type);
  for (i = 0; i < r->elem[1].nelem; i++) {
    const fleet__reply_t *k = &r->elem[1].elem[i];
    ASSERT_EQ(FLEET__REPLY_STR, k->type);
    ASSERT_LT(k->len, 32);
    for (j = 0; j < s->n; j++)
      if (strlen(s->found[j]) == k->len &&
          memcmp(s->found[j], k->str, k->len) == 0)
        break;
    if (j == s->n) {
      ASSERT_LT(s->n, 64);
      memcpy(s->found[s->n], k->str, k->len);
      s->found[s->n++][k->len] = '\0';
    }
  }
  s->done = 1;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(a, b);
}

/* Scans with `pattern` to the end (COUNT 2, so in many steps) and returns
 * the prefixes of the keys found, sorted, as "p1 p2 ...". */
static const char *scan_prefixes(client_ctx_t *c, const char *pattern) {
  static char out[512];
  scan_seen_t s;
  size_t i, len = 0;
  int rounds = 0;

  memset(&s, 0, sizeof(s));
  strcpy(s.cursor, "0");
  do {
    fleet_bytes_t args[5] = {sb(s.cursor), sb("MATCH"), sb(pattern),
                             sb("COUNT"), sb("2")};
    s.done = 0;
    ASSERT_OK(fleet__backend_call(fleet__client_backend(&c->client),
                                  FLEET__OP_STORE_SCAN, NULL, 0, args, 5,
                                  on_scan, &s));
    ASSERT(fleet_test_run_until(&c->loop, fleet_test_flag_set, &s.done,
                                fleet_test_ms(FLEET_TEST_WAIT_MS)));
    ASSERT_LT(++rounds, 1000);
  } while (strcmp(s.cursor, "0") != 0);
  /* Keys look like "{<prefix>:c}:rec:1": keep the prefix. */
  for (i = 0; i < s.n; i++)
    *strstr(s.found[i], ":c}") = '\0';
  qsort(s.found, s.n, sizeof(s.found[0]), cmp_str);
  out[0] = '\0';
  for (i = 0; i < s.n; i++)
    len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s",
                            i > 0 ? " " : "", s.found[i] + 1);
  return out;
}

CONFORMANCE_IMPL(store_scan_glob) {
  static const char *const prefixes[] = {"a*",  "ab", "a?",  "a[",
                                         "a\\", "a]", "abc", "b"};
  fleet_store_options_t so;
  client_ctx_t c;
  size_t i;
  st_t s;

  ctx_init(&c, b->url, NULL);
  fleet_store_options_init(&so);
  for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
    so.prefix = prefixes[i];
    st_open(&s, &c.client, &so);
    ASSERT_OK(st_put(&s, "c", sb("1"), sb("v"), NULL));
    st_close(&s);
  }
  ASSERT_STR_EQ("a* a? a[ a\\ a] ab abc b", scan_prefixes(&c, "*"));
  ASSERT_STR_EQ("a*", scan_prefixes(&c, "{a\\*:*"));
  ASSERT_STR_EQ("a* a? a[ a\\ a] ab", scan_prefixes(&c, "{a?:*"));
  ASSERT_STR_EQ("a* a? a[ a\\ a] ab abc", scan_prefixes(&c, "{a*:*"));
  ASSERT_STR_EQ("a* a?", scan_prefixes(&c, "{a[*?]:*"));
  ASSERT_STR_EQ("a[ a\\ a] ab", scan_prefixes(&c, "{a[^*?]:*"));
  ASSERT_STR_EQ("ab", scan_prefixes(&c, "{a[a-c]:*"));
  ASSERT_STR_EQ("ab", scan_prefixes(&c, "{a[c-a]:*"));
  ASSERT_STR_EQ("a[", scan_prefixes(&c, "{a\\[:*"));
  ASSERT_STR_EQ("a\\", scan_prefixes(&c, "{a\\\\:*"));
  ASSERT_STR_EQ("a]", scan_prefixes(&c, "{a[\\]]:*"));
  ASSERT_STR_EQ("abc", scan_prefixes(&c, "{a*c:c}*"));
  ASSERT_STR_EQ("", scan_prefixes(&c, "{z*"));
  ctx_close(&c);
}

TEST_IMPL(store_scan_pattern) {
  fleet__key_t k = {NULL, 0, 0};
  static const char odd[] = "a*?[]\\b:c";

  ASSERT_OK(fleet__store_scan_pattern(&k, "fleet:store", 11));
  ASSERT_EQ(14, k.len);
  ASSERT_MEM_EQ("{fleet:store:*", k.base, 14);
  ASSERT_OK(fleet__store_scan_pattern(&k, odd, strlen(odd)));
  ASSERT_EQ(17, k.len);
  ASSERT_MEM_EQ("{a\\*\\?\\[\\]\\\\b:c:*", k.base, 17);
  fleet__key_free(&k);
  ASSERT_STR_EQ("scanning",
                fleet__store_clear_state_name(FLEET__STORE_CLEAR_SCANNING));
  ASSERT_STR_EQ("unlinking",
                fleet__store_clear_state_name(FLEET__STORE_CLEAR_UNLINKING));
  ASSERT_STR_EQ("done", fleet__store_clear_state_name(FLEET__STORE_CLEAR_DONE));
  ASSERT_STR_EQ("unknown",
                fleet__store_clear_state_name((fleet__store_clear_state_t)9));
  return 0;
}
