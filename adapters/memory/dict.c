/* dict.c -- a binary-safe hash table with chaining, the building block of
 * the memory keyspace.
 *
 * The table holds a power of two of buckets. It doubles when it holds as
 * many entries as buckets and shrinks when less than an eighth is used, all
 * at once (no incremental rehashing): the scan cursor below stays correct
 * across such resizes, which is what the keyspace scan relies on. */
#include <stdlib.h>
#include <string.h>

#include "memory/dict.h"

#define DICT_MIN_SIZE 4

/* A fast 64-bit hash of a byte string: eight bytes at a time, then a final
 * avalanche. It needs no seed: the store only holds fleet's own keys. */
static uint64_t dict_hash(const void *key, size_t len) {
  const unsigned char *p = key;
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)len;
  uint64_t w;

  while (len >= 8) {
    memcpy(&w, p, 8);
    h ^= w;
    h *= 0x9fb21c651e98df25ULL;
    h ^= h >> 29;
    p += 8;
    len -= 8;
  }
  w = 0;
  if (len > 0)
    memcpy(&w, p, len);
  h ^= w;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

static uint64_t dict_rev(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((v & 0x0f0f0f0f0f0f0f0fULL) << 4);
  v = ((v >> 8) & 0x00ff00ff00ff00ffULL) | ((v & 0x00ff00ff00ff00ffULL) << 8);
  v = ((v >> 16) & 0x0000ffff0000ffffULL) | ((v & 0x0000ffff0000ffffULL) << 16);
  return (v >> 32) | (v << 32);
}

/* Moves every entry into a new table of `size` buckets. Returns 0, or
 * -1 when out of memory (and then the old table is kept). */
static int dict_resize(fleet__dict_t *d, size_t size) {
  fleet__dict_entry_t **table = calloc(size, sizeof(*table));
  size_t i;

  if (table == NULL)
    return -1;
  for (i = 0; i < d->size; i++) {
    fleet__dict_entry_t *e = d->table[i];
    while (e != NULL) {
      fleet__dict_entry_t *next = e->next;
      size_t b = (size_t)(e->hash & (size - 1));
      e->next = table[b];
      table[b] = e;
      e = next;
    }
  }
  free(d->table);
  d->table = table;
  d->size = size;
  return 0;
}

void fleet__dict_init(fleet__dict_t *d) {
  d->table = NULL;
  d->size = 0;
  d->used = 0;
}

void fleet__dict_clear(fleet__dict_t *d, void (*free_val)(void *val)) {
  size_t i;

  for (i = 0; i < d->size; i++) {
    fleet__dict_entry_t *e = d->table[i];
    while (e != NULL) {
      fleet__dict_entry_t *next = e->next;
      if (free_val != NULL)
        free_val(e->val);
      free(e);
      e = next;
    }
  }
  free(d->table);
  fleet__dict_init(d);
}

fleet__dict_entry_t *fleet__dict_find(const fleet__dict_t *d, const void *key,
                                      size_t len) {
  fleet__dict_entry_t *e;
  uint64_t h;

  if (d->used == 0)
    return NULL;
  h = dict_hash(key, len);
  for (e = d->table[h & (d->size - 1)]; e != NULL; e = e->next) {
    if (e->hash == h && e->len == len &&
        (len == 0 || memcmp(e->key, key, len) == 0))
      return e;
  }
  return NULL;
}

fleet__dict_entry_t *fleet__dict_add(fleet__dict_t *d, const void *key,
                                     size_t len, int *created) {
  fleet__dict_entry_t *e = fleet__dict_find(d, key, len);
  size_t b;

  if (created != NULL)
    *created = e == NULL;
  if (e != NULL)
    return e;
  /* A failed grow is not fatal once a table exists: chains get longer. */
  if (d->size == 0) {
    if (dict_resize(d, DICT_MIN_SIZE) != 0)
      return NULL;
  } else if (d->used >= d->size) {
    dict_resize(d, d->size * 2);
  }
  e = malloc(sizeof(*e) + len + 1);
  if (e == NULL)
    return NULL;
  e->hash = dict_hash(key, len);
  e->val = NULL;
  e->len = len;
  if (len > 0)
    memcpy(e->key, key, len);
  e->key[len] = '\0';
  b = (size_t)(e->hash & (d->size - 1));
  e->next = d->table[b];
  d->table[b] = e;
  d->used++;
  return e;
}

void fleet__dict_delete(fleet__dict_t *d, fleet__dict_entry_t *e) {
  fleet__dict_entry_t **link = &d->table[e->hash & (d->size - 1)];
  size_t size;

  while (*link != e)
    link = &(*link)->next;
  *link = e->next;
  free(e);
  d->used--;
  if (d->size > DICT_MIN_SIZE && d->used < d->size / 8) {
    size = DICT_MIN_SIZE;
    while (size < d->used * 2)
      size *= 2;
    dict_resize(d, size);
  }
}

/* This is Redis's dictScan() for a single table. The cursor's low bits
 * select the bucket; it is incremented from its high bits down, so that
 * the buckets still to visit in a table of 2^n buckets are exactly the
 * ones their entries map to in a table of 2^(n+1) or 2^(n-1) buckets. */
uint64_t fleet__dict_scan(const fleet__dict_t *d, uint64_t cursor,
                          fleet__dict_scan_cb fn, void *arg) {
  uint64_t mask;
  fleet__dict_entry_t *e;

  if (d->used == 0)
    return 0;
  mask = d->size - 1;
  e = d->table[cursor & mask];
  while (e != NULL) {
    fleet__dict_entry_t *next = e->next;
    fn(e, arg);
    e = next;
  }
  cursor |= ~mask;
  cursor = dict_rev(cursor);
  cursor++;
  return dict_rev(cursor);
}
