/* keyspace_list.c -- list commands of the memory keyspace. A list is a ring
 * buffer of blobs: pushes and pops at either end and LINDEX are O(1). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memory/keyspace_int.h"

static const fleet_bytes_t ks_nil = {NULL, 0};

/* The slot of element `i` (0 is the head). */
static fleet__ks_blob_t **ks_list_slot(fleet__ks_list_t *l, size_t i) {
  return &l->items[(l->head + i) & (l->cap - 1)];
}

/* Makes room for `extra` more elements. Returns 0 or FLEET_ENOMEM. */
static int ks_list_reserve(fleet__ks_list_t *l, size_t extra) {
  fleet__ks_blob_t **items;
  size_t cap = l->cap > 0 ? l->cap : 8;
  size_t i;

  if (extra > SIZE_MAX / 2 - l->len)
    return FLEET_ENOMEM;
  if (l->len + extra <= l->cap)
    return 0;
  while (cap < l->len + extra)
    cap *= 2;
  items = malloc(cap * sizeof(*items));
  if (items == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < l->len; i++)
    items[i] = *ks_list_slot(l, i);
  free(l->items);
  l->items = items;
  l->head = 0;
  l->cap = cap;
  return 0;
}

/* Pushes `n` values to the tail (or the head, each in turn, when
 * `head`). */
static int64_t ks_push(fleet__ks_t *ks, fleet_bytes_t key,
                       const fleet_bytes_t *values, size_t n, int head) {
  fleet__dict_entry_t *e;
  fleet__ks_list_t *l;
  fleet__ks_blob_t *b;
  size_t i;
  int rc;

  if (n == 0)
    return FLEET_EBACKEND;
  rc = fleet__ks_find_or_create(ks, key, FLEET__KS_LIST, &e);
  if (rc < 0)
    return rc;
  l = &fleet__ks_obj(e)->u.list;
  for (i = 0; i < n; i++) {
    b = ks_list_reserve(l, 1) == 0
            ? fleet__ks_blob_new(values[i].base, values[i].len)
            : NULL;
    if (b == NULL) {
      fleet__ks_drop_if_empty(ks, e);
      return FLEET_ENOMEM;
    }
    if (head) {
      l->head = (l->head - 1) & (l->cap - 1);
      l->items[l->head] = b;
    } else {
      *ks_list_slot(l, l->len) = b;
    }
    l->len++;
  }
  return (int64_t)l->len;
}

int64_t fleet__ks_rpush(fleet__ks_t *ks, fleet_bytes_t key,
                        const fleet_bytes_t *values, size_t n) {
  return ks_push(ks, key, values, n, 0);
}

int64_t fleet__ks_lpush(fleet__ks_t *ks, fleet_bytes_t key,
                        const fleet_bytes_t *values, size_t n) {
  return ks_push(ks, key, values, n, 1);
}

int64_t fleet__ks_lrange(fleet__ks_t *ks, fleet_bytes_t key, int64_t start,
                         int64_t stop, fleet_bytes_t **out) {
  fleet__dict_entry_t *e;
  fleet__ks_list_t *l = NULL;
  fleet_bytes_t *items;
  size_t first = 0, n = 0, i;
  const fleet__ks_blob_t *b;
  int rc = fleet__ks_find(ks, key, FLEET__KS_LIST, &e);

  if (rc < 0)
    return rc;
  if (rc > 0) {
    l = &fleet__ks_obj(e)->u.list;
    n = fleet__ks_range(l->len, start, stop, &first);
  }
  items = fleet__ks_scratch_array(ks, n, sizeof(*items));
  if (items == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < n; i++) {
    b = *ks_list_slot(l, first + i);
    if (fleet__ks_copy_out(ks, b->data, b->len, &items[i]) != 0)
      return FLEET_ENOMEM;
  }
  *out = items;
  return (int64_t)n;
}

int64_t fleet__ks_llen(fleet__ks_t *ks, fleet_bytes_t key) {
  return fleet__ks_len(ks, key, FLEET__KS_LIST);
}

int fleet__ks_ltrim(fleet__ks_t *ks, fleet_bytes_t key, int64_t start,
                    int64_t stop) {
  fleet__dict_entry_t *e;
  fleet__ks_list_t *l;
  size_t first = 0, keep, i;
  int rc = fleet__ks_find(ks, key, FLEET__KS_LIST, &e);

  if (rc <= 0)
    return rc;
  l = &fleet__ks_obj(e)->u.list;
  keep = fleet__ks_range(l->len, start, stop, &first);
  /* Only the items removed are visited: a claim trims a few from the head
   * of a list that may hold millions. */
  for (i = 0; i < first; i++)
    free(*ks_list_slot(l, i));
  for (i = first + keep; i < l->len; i++)
    free(*ks_list_slot(l, i));
  l->head = (l->head + first) & (l->cap - 1);
  l->len = keep;
  fleet__ks_drop_if_empty(ks, e);
  return 0;
}

int fleet__ks_lindex(fleet__ks_t *ks, fleet_bytes_t key, int64_t index,
                     fleet_bytes_t *out) {
  fleet__dict_entry_t *e;
  fleet__ks_list_t *l;
  const fleet__ks_blob_t *b;
  int rc = fleet__ks_find(ks, key, FLEET__KS_LIST, &e);

  *out = ks_nil;
  if (rc <= 0)
    return rc;
  l = &fleet__ks_obj(e)->u.list;
  if (index < 0)
    index += (int64_t)l->len;
  if (index < 0 || index >= (int64_t)l->len)
    return 0;
  b = *ks_list_slot(l, (size_t)index);
  rc = fleet__ks_copy_out(ks, b->data, b->len, out);
  return rc < 0 ? rc : 1;
}

int64_t fleet__ks_lpos(fleet__ks_t *ks, fleet_bytes_t key,
                       fleet_bytes_t value) {
  fleet__dict_entry_t *e;
  fleet__ks_list_t *l;
  fleet__ks_blob_t *b;
  size_t i;
  int rc = fleet__ks_find(ks, key, FLEET__KS_LIST, &e);

  if (rc < 0)
    return rc;
  if (rc == 0)
    return -1;
  l = &fleet__ks_obj(e)->u.list;
  for (i = 0; i < l->len; i++) {
    b = *ks_list_slot(l, i);
    if (b->len == value.len &&
        (value.len == 0 || memcmp(b->data, value.base, value.len) == 0))
      return (int64_t)i;
  }
  return -1;
}

int64_t fleet__ks_lrem(fleet__ks_t *ks, fleet_bytes_t key, int64_t count,
                       fleet_bytes_t value) {
  fleet__dict_entry_t *e;
  fleet__ks_list_t *l;
  fleet__ks_blob_t *b;
  size_t i, kept = 0, limit;
  int64_t removed = 0;
  int rc = fleet__ks_find(ks, key, FLEET__KS_LIST, &e);

  if (rc <= 0)
    return rc;
  l = &fleet__ks_obj(e)->u.list;
  limit = count == 0 ? SIZE_MAX : (size_t)(count < 0 ? -count : count);
  /* Compacts the survivors towards the head (or the tail for a negative
   * count, which removes from the tail first). */
  for (i = 0; i < l->len; i++) {
    size_t at = count < 0 ? l->len - 1 - i : i;
    b = *ks_list_slot(l, at);
    if ((size_t)removed < limit && b->len == value.len &&
        (value.len == 0 || memcmp(b->data, value.base, value.len) == 0)) {
      free(b);
      removed++;
      continue;
    }
    *ks_list_slot(l, count < 0 ? l->len - 1 - kept : kept) = b;
    kept++;
  }
  if (count < 0)
    l->head = (l->head + (l->len - kept)) & (l->cap - 1);
  l->len = kept;
  fleet__ks_drop_if_empty(ks, e);
  return removed;
}
