/* keyspace.c -- the memory keyspace's core: keys and their values, expiry
 * (lazy on every access plus an incremental sweep), generic key commands,
 * scan, scratch space and argument parsing. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/util.h"
#include "memory/keyspace_int.h"

/* Buckets the sweep visits per op, and expired keys it deletes per bucket
 * at most (a bucket rarely holds more than two keys). */
#define KS_SWEEP_BUCKETS 16
#define KS_SWEEP_BATCH 32

/* Scratch chunks: the first one's size, and the largest one kept from one
 * op to the next. */
#define KS_SCRATCH_MIN 4096
#define KS_SCRATCH_KEEP (256 * 1024)

typedef struct ks_chunk_s {
  struct ks_chunk_s *next;
  size_t used;
  size_t cap;
  max_align_t data[];
} ks_chunk_t;

struct fleet__ks_s {
  fleet__dict_t keys; /* Key -> fleet__ks_obj_t. */
  int64_t now_ms;
  size_t nexpires; /* Keys with an expiry; the sweep skips when 0. */
  uint64_t sweep_cursor;
  ks_chunk_t *scratch; /* Newest first. */
};

static const char *const ks_type_names[] = {
#define XX(name, str) str,
    FLEET__KS_TYPE_MAP(XX)
#undef XX
};

/* ------------------------------------------------------------------------ */
/* Values                                                                   */

fleet__ks_blob_t *fleet__ks_blob_new(const void *p, size_t len) {
  fleet__ks_blob_t *b = malloc(sizeof(*b) + len + 1);

  if (b == NULL)
    return NULL;
  b->len = len;
  if (len > 0)
    memcpy(b->data, p, len);
  b->data[len] = '\0';
  return b;
}

/* A new empty value of `type`, or NULL when out of memory. */
static fleet__ks_obj_t *ks_obj_new(fleet__ks_type_t type) {
  fleet__ks_obj_t *o = malloc(sizeof(*o));

  if (o == NULL)
    return NULL;
  o->type = type;
  o->expire_ms = -1;
  switch (type) {
    case FLEET__KS_HASH:
      fleet__dict_init(&o->u.hash);
      break;
    case FLEET__KS_SET:
      fleet__dict_init(&o->u.set);
      break;
    case FLEET__KS_LIST:
      memset(&o->u.list, 0, sizeof(o->u.list));
      break;
    case FLEET__KS_ZSET:
      if (fleet__zset_init(&o->u.zset) != 0) {
        free(o);
        return NULL;
      }
      break;
    default:
      o->u.str = NULL;
      break;
  }
  return o;
}

static void ks_obj_free(fleet__ks_obj_t *o) {
  fleet__ks_list_t *l = &o->u.list;
  size_t i;

  switch (o->type) {
    case FLEET__KS_HASH:
      fleet__dict_clear(&o->u.hash, free);
      break;
    case FLEET__KS_SET:
      fleet__dict_clear(&o->u.set, NULL);
      break;
    case FLEET__KS_LIST:
      for (i = 0; i < l->len; i++)
        free(l->items[(l->head + i) & (l->cap - 1)]);
      free(l->items);
      break;
    case FLEET__KS_ZSET:
      fleet__zset_destroy(&o->u.zset);
      break;
    default:
      free(o->u.str);
      break;
  }
  free(o);
}

/* For fleet__dict_clear(). */
static void ks_obj_free_cb(void *val) {
  ks_obj_free(val);
}

void fleet__ks_set_expire(fleet__ks_t *ks, fleet__ks_obj_t *o, int64_t at_ms) {
  if (o->expire_ms >= 0)
    ks->nexpires--;
  o->expire_ms = at_ms;
  if (at_ms >= 0)
    ks->nexpires++;
}

/* Redis deletes a key once the clock is past its expiry, so a key whose
 * expiry is now still exists (with a PTTL of 0). */
static int ks_expired(const fleet__ks_t *ks, const fleet__ks_obj_t *o) {
  return o->expire_ms >= 0 && ks->now_ms > o->expire_ms;
}

/* ------------------------------------------------------------------------ */
/* Lookups                                                                  */

fleet__dict_entry_t *fleet__ks_lookup(fleet__ks_t *ks, fleet_bytes_t key) {
  fleet__dict_entry_t *e = fleet__dict_find(&ks->keys, key.base, key.len);

  if (e != NULL && ks_expired(ks, fleet__ks_obj(e))) {
    fleet__ks_remove(ks, e);
    return NULL;
  }
  return e;
}

int fleet__ks_find(fleet__ks_t *ks, fleet_bytes_t key, fleet__ks_type_t type,
                   fleet__dict_entry_t **out) {
  fleet__dict_entry_t *e = fleet__ks_lookup(ks, key);

  *out = e;
  if (e == NULL)
    return 0;
  return fleet__ks_obj(e)->type == type ? 1 : FLEET_EWRONGTYPE;
}

int fleet__ks_find_or_create(fleet__ks_t *ks, fleet_bytes_t key,
                             fleet__ks_type_t type, fleet__dict_entry_t **out) {
  int rc = fleet__ks_find(ks, key, type, out);
  fleet__ks_obj_t *o;

  if (rc != 0)
    return rc < 0 ? rc : 0;
  o = ks_obj_new(type);
  if (o == NULL)
    return FLEET_ENOMEM;
  *out = fleet__dict_add(&ks->keys, key.base, key.len, NULL);
  if (*out == NULL) {
    ks_obj_free(o);
    return FLEET_ENOMEM;
  }
  (*out)->val = o;
  return 0;
}

void fleet__ks_remove(fleet__ks_t *ks, fleet__dict_entry_t *e) {
  fleet__ks_obj_t *o = fleet__ks_obj(e);

  fleet__ks_set_expire(ks, o, -1);
  ks_obj_free(o);
  fleet__dict_delete(&ks->keys, e);
}

/* The number of elements of `o` (a string counts as one). */
static size_t ks_obj_len(const fleet__ks_obj_t *o) {
  switch (o->type) {
    case FLEET__KS_HASH:
      return o->u.hash.used;
    case FLEET__KS_SET:
      return o->u.set.used;
    case FLEET__KS_LIST:
      return o->u.list.len;
    case FLEET__KS_ZSET:
      return o->u.zset.length;
    default:
      return o->u.str != NULL;
  }
}

void fleet__ks_drop_if_empty(fleet__ks_t *ks, fleet__dict_entry_t *e) {
  if (ks_obj_len(fleet__ks_obj(e)) == 0)
    fleet__ks_remove(ks, e);
}

int64_t fleet__ks_len(fleet__ks_t *ks, fleet_bytes_t key,
                      fleet__ks_type_t type) {
  fleet__dict_entry_t *e;
  int rc = fleet__ks_find(ks, key, type, &e);

  if (rc <= 0)
    return rc;
  return (int64_t)ks_obj_len(fleet__ks_obj(e));
}

/* ------------------------------------------------------------------------ */
/* Scratch space                                                            */

void *fleet__ks_scratch(fleet__ks_t *ks, size_t size) {
  const size_t align = sizeof(max_align_t);
  ks_chunk_t *c = ks->scratch;
  size_t cap;
  char *p;

  if (size > SIZE_MAX / 2)
    return NULL;
  size = size == 0 ? align : (size + align - 1) / align * align;
  if (c == NULL || c->cap - c->used < size) {
    cap = c != NULL ? c->cap * 2 : KS_SCRATCH_MIN;
    if (cap < size)
      cap = size;
    c = malloc(sizeof(*c) + cap);
    if (c == NULL)
      return NULL;
    c->used = 0;
    c->cap = cap;
    c->next = ks->scratch;
    ks->scratch = c;
  }
  p = (char *)c->data + c->used;
  c->used += size;
  return p;
}

/* Frees the scratch space of the previous op, keeping the newest chunk for
 * the next one unless it grew large. */
static void ks_scratch_reset(fleet__ks_t *ks) {
  ks_chunk_t *c = ks->scratch;

  if (c == NULL)
    return;
  ks->scratch = NULL;
  if (c->cap <= KS_SCRATCH_KEEP) {
    ks->scratch = c;
    c->used = 0;
    c = c->next;
    ks->scratch->next = NULL;
  }
  while (c != NULL) {
    ks_chunk_t *next = c->next;
    free(c);
    c = next;
  }
}

void *fleet__ks_scratch_array(fleet__ks_t *ks, size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size)
    return NULL;
  return fleet__ks_scratch(ks, n * size);
}

int fleet__ks_copy_out(fleet__ks_t *ks, const void *p, size_t len,
                       fleet_bytes_t *out) {
  char *copy = len < SIZE_MAX ? fleet__ks_scratch(ks, len + 1) : NULL;

  if (copy == NULL)
    return FLEET_ENOMEM;
  if (len > 0)
    memcpy(copy, p, len);
  copy[len] = '\0';
  out->base = copy;
  out->len = len;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Lifecycle and expiry                                                     */

fleet__ks_t *fleet__ks_new(void) {
  fleet__ks_t *ks = calloc(1, sizeof(*ks));

  if (ks == NULL)
    return NULL;
  fleet__dict_init(&ks->keys);
  return ks;
}

void fleet__ks_free(fleet__ks_t *ks) {
  fleet__dict_clear(&ks->keys, ks_obj_free_cb);
  ks_scratch_reset(ks);
  free(ks->scratch);
  free(ks);
}

typedef struct {
  fleet__ks_t *ks;
  fleet__dict_entry_t *expired[KS_SWEEP_BATCH];
  size_t n;
} ks_sweep_t;

static void ks_sweep_visit(fleet__dict_entry_t *e, void *arg) {
  ks_sweep_t *s = arg;

  if (s->n < KS_SWEEP_BATCH && ks_expired(s->ks, fleet__ks_obj(e)))
    s->expired[s->n++] = e;
}

/* Visits a few buckets from where the last sweep stopped and deletes the
 * expired keys there. The dict may not change during a scan step, so the
 * keys are collected first; the cursor survives the resizes this causes. */
static void ks_sweep(fleet__ks_t *ks) {
  ks_sweep_t s;
  size_t i, j;

  s.ks = ks;
  for (i = 0; i < KS_SWEEP_BUCKETS && ks->nexpires > 0; i++) {
    s.n = 0;
    ks->sweep_cursor =
        fleet__dict_scan(&ks->keys, ks->sweep_cursor, ks_sweep_visit, &s);
    for (j = 0; j < s.n; j++)
      fleet__ks_remove(ks, s.expired[j]);
  }
}

void fleet__ks_begin(fleet__ks_t *ks, int64_t now_ms) {
  ks->now_ms = now_ms;
  ks_scratch_reset(ks);
  ks_sweep(ks);
}

int64_t fleet__ks_now(const fleet__ks_t *ks) {
  return ks->now_ms;
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                */

size_t fleet__ks_format_int(int64_t v, char *buf) {
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  char tmp[20];
  size_t n = 0, len = 0;

  do {
    tmp[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0)
    buf[len++] = '-';
  while (n > 0)
    buf[len++] = tmp[--n];
  return len;
}

int fleet__ks_parse_int(fleet_bytes_t b, int64_t *out) {
  const unsigned char *p = b.base;
  uint64_t v = 0;
  size_t i = 0;
  int neg = 0;

  if (b.len == 0 || b.len > 20)
    return FLEET_EBACKEND;
  if (b.len == 1 && p[0] == '0') {
    *out = 0;
    return 0;
  }
  if (p[0] == '-') {
    neg = 1;
    i = 1;
  }
  if (i == b.len || p[i] < '1' || p[i] > '9')
    return FLEET_EBACKEND;
  for (; i < b.len; i++) {
    unsigned d = (unsigned)(p[i] - '0');
    if (p[i] < '0' || p[i] > '9' || v > (UINT64_MAX - d) / 10)
      return FLEET_EBACKEND;
    v = v * 10 + d;
  }
  if (neg) {
    if (v > (uint64_t)INT64_MAX + 1)
      return FLEET_EBACKEND;
    *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
  } else {
    if (v > (uint64_t)INT64_MAX)
      return FLEET_EBACKEND;
    *out = (int64_t)v;
  }
  return 0;
}

int fleet__ks_parse_double(fleet_bytes_t b, double *out) {
  char buf[256];
  char *end;
  double v;

  int64_t i;

  if (b.len == 0 || b.len >= sizeof(buf))
    return FLEET_EBACKEND;
  /* Most scores are integers that a double holds exactly, which strtod
   * would give too; "-0" is left to strtod for its sign. */
  if (b.len <= 15 && fleet__ks_parse_int(b, &i) == 0 && i != 0) {
    *out = (double)i;
    return 0;
  }
  memcpy(buf, b.base, b.len);
  buf[b.len] = '\0';
  if (isspace((unsigned char)buf[0]))
    return FLEET_EBACKEND;
  errno = 0;
  v = strtod(buf, &end);
  /* Like Redis: trailing bytes, NaN and overflow or underflow are errors. */
  if (end != buf + b.len || isnan(v) ||
      (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)))
    return FLEET_EBACKEND;
  *out = v;
  return 0;
}

int fleet__ks_add_int(fleet_bytes_t b, int64_t by, int64_t *sum) {
  int64_t v;

  if (fleet__ks_parse_int(b, &v) != 0)
    return FLEET_EBACKEND;
  if ((by > 0 && v > INT64_MAX - by) || (by < 0 && v < INT64_MIN - by))
    return FLEET_EBACKEND;
  *sum = v + by;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                     */

int64_t fleet__ks_del(fleet__ks_t *ks, const fleet_bytes_t *keys, size_t n) {
  int64_t count = 0;
  size_t i;

  if (n == 0)
    return FLEET_EBACKEND;
  for (i = 0; i < n; i++) {
    fleet__dict_entry_t *e = fleet__ks_lookup(ks, keys[i]);
    if (e != NULL) {
      fleet__ks_remove(ks, e);
      count++;
    }
  }
  return count;
}

int64_t fleet__ks_exists(fleet__ks_t *ks, const fleet_bytes_t *keys, size_t n) {
  int64_t count = 0;
  size_t i;

  if (n == 0)
    return FLEET_EBACKEND;
  for (i = 0; i < n; i++)
    count += fleet__ks_lookup(ks, keys[i]) != NULL;
  return count;
}

fleet__ks_type_t fleet__ks_type(fleet__ks_t *ks, fleet_bytes_t key) {
  fleet__dict_entry_t *e = fleet__ks_lookup(ks, key);

  return e != NULL ? fleet__ks_obj(e)->type : FLEET__KS_NONE;
}

const char *fleet__ks_type_name(fleet__ks_type_t type) {
  if ((size_t)type >= FLEET__ARRAY_SIZE(ks_type_names))
    return "none";
  return ks_type_names[type];
}

int fleet__ks_pexpire(fleet__ks_t *ks, fleet_bytes_t key, int64_t ms) {
  /* Redis refuses an expiry time that overflows. */
  if ((ms > 0 && ks->now_ms > INT64_MAX - ms) ||
      (ms < 0 && ks->now_ms < INT64_MIN - ms))
    return FLEET_EBACKEND;
  return fleet__ks_pexpireat(ks, key, ks->now_ms + ms);
}

int fleet__ks_pexpireat(fleet__ks_t *ks, fleet_bytes_t key, int64_t at_ms) {
  fleet__dict_entry_t *e = fleet__ks_lookup(ks, key);

  if (e == NULL)
    return 0;
  if (at_ms <= ks->now_ms)
    fleet__ks_remove(ks, e);
  else
    fleet__ks_set_expire(ks, fleet__ks_obj(e), at_ms);
  return 1;
}

int64_t fleet__ks_pttl(fleet__ks_t *ks, fleet_bytes_t key) {
  fleet__dict_entry_t *e = fleet__ks_lookup(ks, key);
  fleet__ks_obj_t *o;

  if (e == NULL)
    return -2;
  o = fleet__ks_obj(e);
  if (o->expire_ms < 0)
    return -1;
  return o->expire_ms - ks->now_ms;
}

/* ------------------------------------------------------------------------ */
/* Scan                                                                     */

typedef struct {
  fleet__ks_t *ks;
  fleet_bytes_t prefix;
  fleet_bytes_t *keys; /* In scratch space; grown by doubling. */
  size_t n;
  size_t cap;
  size_t examined;
  int err;
} ks_scan_t;

static void ks_scan_visit(fleet__dict_entry_t *e, void *arg) {
  ks_scan_t *s = arg;
  fleet_bytes_t *grown;

  s->examined++;
  if (s->err != 0 || ks_expired(s->ks, fleet__ks_obj(e)) ||
      e->len < s->prefix.len ||
      (s->prefix.len > 0 && memcmp(e->key, s->prefix.base, s->prefix.len)))
    return;
  if (s->n == s->cap) {
    s->cap = s->cap > 0 ? s->cap * 2 : 16;
    grown = fleet__ks_scratch_array(s->ks, s->cap, sizeof(*grown));
    if (grown == NULL) {
      s->err = FLEET_ENOMEM;
      return;
    }
    if (s->n > 0)
      memcpy(grown, s->keys, s->n * sizeof(*grown));
    s->keys = grown;
  }
  s->err = fleet__ks_copy_out(s->ks, e->key, e->len, &s->keys[s->n]);
  if (s->err == 0)
    s->n++;
}

/* Expired keys are skipped, not deleted: the dict may not change during a
 * scan step. Like Redis, a call visits at most ten empty buckets per key it
 * is asked to examine, so that a sparse table does not make it slow. */
int64_t fleet__ks_scan(fleet__ks_t *ks, uint64_t cursor, fleet_bytes_t prefix,
                       size_t count, uint64_t *next, fleet_bytes_t **keys) {
  ks_scan_t s;
  size_t visits = 0;

  memset(&s, 0, sizeof(s));
  s.ks = ks;
  s.prefix = prefix;
  if (count == 0)
    count = 1;
  do {
    cursor = fleet__dict_scan(&ks->keys, cursor, ks_scan_visit, &s);
    visits++;
  } while (cursor != 0 && s.examined < count && visits / 10 < count);
  if (s.err == 0 && s.keys == NULL)
    s.keys = fleet__ks_scratch_array(ks, 0, sizeof(*s.keys));
  if (s.err != 0 || s.keys == NULL)
    return FLEET_ENOMEM;
  *next = cursor;
  *keys = s.keys;
  return (int64_t)s.n;
}

size_t fleet__ks_range(size_t len, int64_t start, int64_t stop, size_t *first) {
  int64_t n = (int64_t)len;

  if (start < 0)
    start = start < -n ? 0 : start + n;
  if (stop < 0)
    stop += n;
  if (stop >= n)
    stop = n - 1;
  if (start > stop || start >= n)
    return 0;
  *first = (size_t)start;
  return (size_t)(stop - start + 1);
}

int64_t fleet__ks_remove_items(fleet__ks_t *ks, fleet_bytes_t key,
                               fleet__ks_type_t type,
                               const fleet_bytes_t *items, size_t n,
                               int (*remove_one)(fleet__ks_obj_t *o,
                                                 fleet_bytes_t item)) {
  fleet__dict_entry_t *e;
  int64_t count = 0;
  size_t i;
  int rc;

  if (n == 0)
    return FLEET_EBACKEND;
  rc = fleet__ks_find(ks, key, type, &e);
  if (rc <= 0)
    return rc;
  for (i = 0; i < n; i++)
    count += remove_one(fleet__ks_obj(e), items[i]);
  fleet__ks_drop_if_empty(ks, e);
  return count;
}
