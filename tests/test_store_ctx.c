/* test_store_ctx.c -- a store handle with synchronous wrappers around its
 * calls, for the store tests. */
#include "test_store_ctx.h"

static char *st_dup(const void *p, size_t len) {
  char *c = malloc(len + 1);
  ASSERT_NOT_NULL(c);
  if (len > 0)
    memcpy(c, p, len);
  c[len] = '\0';
  return c;
}

void st_reset(st_t *s) {
  size_t i;

  free(s->value);
  s->value = NULL;
  s->value_len = 0;
  for (i = 0; i < s->nevents; i++)
    free((void *)s->events[i].base);
  free(s->events);
  s->events = NULL;
  s->nevents = 0;
  for (i = 0; i < s->nitems; i++) {
    free((void *)s->items[i].id.base);
    free((void *)s->items[i].value.base);
  }
  free(s->items);
  s->items = NULL;
  s->nitems = 0;
  free(s->cursor);
  s->cursor = NULL;
  s->cursor_len = 0;
  s->ttl_ms = 0;
  s->n = 0;
}

void st_open(st_t *s, fleet_client_t *client,
             const fleet_store_options_t *options) {
  memset(s, 0, sizeof(*s));
  s->loop = fleet_client_loop(client);
  s->store.data = s;
  ASSERT_OK(fleet_store_init(client, &s->store, options));
}

static void st_on_close(fleet_handle_t *store) {
  st_t *s = store->data;
  s->closed++;
}

void st_close(st_t *s) {
  st_reset(s);
  ASSERT_OK(fleet_store_close(&s->store, st_on_close));
  ASSERT_EQ(0, s->closed);
  ASSERT(fleet_test_wait_count(s->loop, &s->closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(1, s->closed);
}

void st_sleep(uv_loop_t *loop, uint64_t ms) {
  fleet_test_sleep(loop, ms);
}

/* ------------------------------------------------------------------------ */
/* Callbacks                                                                */

/* Records a callback: once per call, never inside it. */
static st_t *st_seen(fleet_store_t *store, int status) {
  st_t *s = store->data;
  ASSERT_EQ(0, s->in_call);
  s->calls++;
  s->status = status;
  return s;
}

static void st_on_done(fleet_handle_t *store_h, int status, void *arg) {
  fleet_store_t *store = (fleet_store_t *)store_h;
  st_seen(store, status);
}

static void st_on_get(fleet_store_t *store, int status, fleet_bytes_t value,
                      uint64_t ttl_ms, void *arg) {
  st_t *s = st_seen(store, status);
  if (status != 0) {
    ASSERT_EQ(0, value.len);
    return;
  }
  s->value = st_dup(value.base, value.len);
  s->value_len = value.len;
  s->ttl_ms = ttl_ms;
}

static void st_on_count(fleet_store_t *store, int status, uint64_t n,
                        void *arg) {
  st_t *s = st_seen(store, status);
  s->n = n;
}

static void st_on_events(fleet_store_t *store, int status,
                         const fleet_bytes_t *events, size_t n, void *arg) {
  st_t *s = st_seen(store, status);
  size_t i;

  s->events = calloc(n + 1, sizeof(*s->events));
  ASSERT_NOT_NULL(s->events);
  for (i = 0; i < n; i++) {
    s->events[i].base = st_dup(events[i].base, events[i].len);
    s->events[i].len = events[i].len;
  }
  s->nevents = n;
}

static void st_on_list(fleet_store_t *store, int status,
                       const fleet_store_item_t *items, size_t n,
                       fleet_bytes_t next, void *arg) {
  st_t *s = st_seen(store, status);
  size_t i;

  s->items = calloc(n + 1, sizeof(*s->items));
  ASSERT_NOT_NULL(s->items);
  for (i = 0; i < n; i++) {
    s->items[i].id.base = st_dup(items[i].id.base, items[i].id.len);
    s->items[i].id.len = items[i].id.len;
    s->items[i].value.base = st_dup(items[i].value.base, items[i].value.len);
    s->items[i].value.len = items[i].value.len;
  }
  s->nitems = n;
  if (next.len > 0) {
    s->cursor = st_dup(next.base, next.len);
    s->cursor_len = next.len;
  }
}

/* ------------------------------------------------------------------------ */
/* Wrappers                                                                 */

/* Starts a call: forgets the last results and marks the stack. */
static int st_begin(st_t *s) {
  st_reset(s);
  s->in_call = 1;
  return s->calls;
}

/* Ends a call that returned `rc`, then waits for its callback. */
static int st_end(st_t *s, int before, int rc) {
  s->in_call = 0;
  ASSERT_OK(rc);
  ASSERT_EQ(before, s->calls);
  ASSERT(fleet_test_wait_count(s->loop, &s->calls, before + 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(before + 1, s->calls);
  return s->status;
}

int st_put(st_t *s, const char *coll, fleet_bytes_t id, fleet_bytes_t value,
           const fleet_store_put_options_t *o) {
  int before = st_begin(s);
  return st_end(
      s, before,
      fleet_store_put(&s->store, coll, id, value, o, st_on_done, NULL));
}

int st_get(st_t *s, const char *coll, fleet_bytes_t id) {
  int before = st_begin(s);
  return st_end(s, before,
                fleet_store_get(&s->store, coll, id, st_on_get, NULL));
}

int st_delete(st_t *s, const char *coll, fleet_bytes_t id) {
  int before = st_begin(s);
  return st_end(s, before,
                fleet_store_delete(&s->store, coll, id, st_on_done, NULL));
}

int st_exists(st_t *s, const char *coll, fleet_bytes_t id) {
  int before = st_begin(s);
  return st_end(s, before,
                fleet_store_exists(&s->store, coll, id, st_on_done, NULL));
}

int st_touch(st_t *s, const char *coll, fleet_bytes_t id, uint64_t ttl_ms) {
  int before = st_begin(s);
  return st_end(
      s, before,
      fleet_store_touch(&s->store, coll, id, ttl_ms, st_on_done, NULL));
}

int st_append(st_t *s, const char *coll, fleet_bytes_t id,
              const fleet_bytes_t *events, size_t n) {
  int before = st_begin(s);
  return st_end(s, before,
                fleet_store_events_append(&s->store, coll, id, events, n,
                                          st_on_count, NULL));
}

int st_read(st_t *s, const char *coll, fleet_bytes_t id, uint64_t offset,
            size_t limit) {
  int before = st_begin(s);
  return st_end(s, before,
                fleet_store_events_read(&s->store, coll, id, offset, limit,
                                        st_on_events, NULL));
}

int st_count(st_t *s, const char *coll, fleet_bytes_t id) {
  int before = st_begin(s);
  return st_end(
      s, before,
      fleet_store_events_count(&s->store, coll, id, st_on_count, NULL));
}

int st_list(st_t *s, const char *coll, const char *index, fleet_bytes_t value,
            fleet_bytes_t cursor, size_t limit) {
  /* The cursor may point into the last results, which st_begin frees. */
  char *copy = st_dup(cursor.base != NULL ? cursor.base : "", cursor.len);
  int before, rc;

  cursor.base = cursor.len > 0 ? copy : NULL;
  before = st_begin(s);
  rc = fleet_store_list(&s->store, coll, index, value, cursor, limit,
                        st_on_list, NULL);
  free(copy);
  return st_end(s, before, rc);
}

int st_clear(st_t *s) {
  int before = st_begin(s);
  return st_end(s, before, fleet_store_clear(&s->store, st_on_count, NULL));
}

int st_ping(st_t *s) {
  int before = st_begin(s);
  return st_end(s, before, fleet_store_ping(&s->store, st_on_done, NULL));
}

void st_put_ix(st_t *s, const char *coll, const char *id, const char *value,
               const char *index, const char *ivalue, uint64_t ttl_ms) {
  fleet_store_put_options_t o;
  fleet_store_index_t ix;

  memset(&o, 0, sizeof(o));
  if (index != NULL) {
    ix.name = index;
    ix.value = sb(ivalue);
    o.indexes = &ix;
    o.nindexes = 1;
  }
  o.ttl_ms = ttl_ms;
  ASSERT_OK(st_put(s, coll, sb(id), sb(value), &o));
}

char *st_list_all(st_t *s, const char *coll, const char *index,
                  const char *value, size_t limit) {
  fleet_bytes_t cursor = {NULL, 0};
  size_t len = 0, cap = 64, i;
  char *out = malloc(cap);
  int pages;

  ASSERT_NOT_NULL(out);
  out[0] = '\0';
  for (pages = 0; pages < 1000; pages++) {
    ASSERT_OK(st_list(s, coll, index, sb(value), cursor, limit));
    ASSERT_LE(s->nitems, limit);
    for (i = 0; i < s->nitems; i++) {
      while (len + s->items[i].id.len + 2 > cap) {
        cap *= 2;
        out = realloc(out, cap);
        ASSERT_NOT_NULL(out);
      }
      if (len > 0)
        out[len++] = ',';
      memcpy(out + len, s->items[i].id.base, s->items[i].id.len);
      len += s->items[i].id.len;
      out[len] = '\0';
    }
    if (s->cursor == NULL)
      return out;
    cursor.base = s->cursor;
    cursor.len = s->cursor_len;
  }
  fleet_test__fail(__FILE__, __LINE__, "listing did not end in 1000 pages");
}

size_t st_key(const st_t *s, char *buf, size_t cap, const char *coll,
              const char *part, const char *id) {
  int n = snprintf(buf, cap, "{%s:%s}:%s%s", fleet_store_prefix(&s->store),
                   coll, part, id);
  ASSERT_LT(n, (int)cap);
  return (size_t)n;
}
