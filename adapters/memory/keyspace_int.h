/* keyspace_int.h -- what the keyspace_*.c files share: the value objects,
 * typed lookups and result copying. Only keyspace_*.c include it. */
#ifndef FLEET_MEMORY_KEYSPACE_INT_H
#define FLEET_MEMORY_KEYSPACE_INT_H

#include "memory/dict.h"
#include "memory/keyspace.h"
#include "memory/zset.h"

/* An immutable byte string: a string value, a hash field's value or a list
 * element. NUL-terminated. */
typedef struct {
  size_t len;
  char data[];
} fleet__ks_blob_t;

/* A list: a ring buffer of blobs, O(1) at both ends and by index. */
typedef struct {
  fleet__ks_blob_t **items;
  size_t head; /* Index in `items` of element 0. */
  size_t len;
  size_t cap; /* 0 or a power of two. */
} fleet__ks_list_t;

/* The value of a key. */
typedef struct {
  fleet__ks_type_t type;
  int64_t expire_ms; /* Absolute, on the store clock; -1 for none. */
  union {
    fleet__ks_blob_t *str;
    fleet__dict_t hash; /* Field -> fleet__ks_blob_t. */
    fleet__dict_t set;  /* Member -> NULL. */
    fleet__ks_list_t list;
    fleet__zset_t zset;
  } u;
} fleet__ks_obj_t;

static inline fleet__ks_obj_t *fleet__ks_obj(fleet__dict_entry_t *e) {
  return e->val;
}

/* A new blob holding a copy of `p`, or NULL when out of memory. */
fleet__ks_blob_t *fleet__ks_blob_new(const void *p, size_t len);

/* The live entry of `key`, or NULL: an expired key is deleted first. */
fleet__dict_entry_t *fleet__ks_lookup(fleet__ks_t *ks, fleet_bytes_t key);

/* Finds `key` expecting `type`. Returns 1 and sets `*out`, 0 when the key
 * does not exist, or FLEET_EWRONGTYPE. */
int fleet__ks_find(fleet__ks_t *ks, fleet_bytes_t key, fleet__ks_type_t type,
                   fleet__dict_entry_t **out);

/* Finds `key` expecting `type`, creating an empty value of that type when
 * missing. Returns 0, FLEET_EWRONGTYPE or FLEET_ENOMEM. A caller that then
 * fails to add anything calls fleet__ks_drop_if_empty(). */
int fleet__ks_find_or_create(fleet__ks_t *ks, fleet_bytes_t key,
                             fleet__ks_type_t type, fleet__dict_entry_t **out);

/* HLEN, LLEN and ZCARD: the number of elements of the value of `type` at
 * `key` (0 when there is none), or FLEET_EWRONGTYPE. */
int64_t fleet__ks_len(fleet__ks_t *ks, fleet_bytes_t key,
                      fleet__ks_type_t type);

/* HDEL, SREM and ZREM: removes each of the `n` items from the value of
 * `type` at `key` with `remove_one` (which returns 1 when the item was
 * there), and drops the key once it is empty. Returns how many were there,
 * or a negative error (FLEET_EBACKEND for no item). */
int64_t fleet__ks_remove_items(fleet__ks_t *ks, fleet_bytes_t key,
                               fleet__ks_type_t type,
                               const fleet_bytes_t *items, size_t n,
                               int (*remove_one)(fleet__ks_obj_t *o,
                                                 fleet_bytes_t item));

/* Clamps Redis's inclusive [start, stop] (negative from the end) to `len`
 * elements, as LRANGE, LTRIM, ZRANGE and ZREMRANGEBYRANK do. Returns the
 * number of elements in range, and the first in `*first`. */
size_t fleet__ks_range(size_t len, int64_t start, int64_t stop, size_t *first);

/* Sets the expiry of `o` to `at_ms`, or clears it when `at_ms` is -1. */
void fleet__ks_set_expire(fleet__ks_t *ks, fleet__ks_obj_t *o, int64_t at_ms);

/* Deletes a key and frees its value. */
void fleet__ks_remove(fleet__ks_t *ks, fleet__dict_entry_t *e);

/* Deletes a hash, list, set or zset key that has no elements left. */
void fleet__ks_drop_if_empty(fleet__ks_t *ks, fleet__dict_entry_t *e);

/* Copies `len` bytes (plus a NUL) into scratch space and describes them in
 * `*out`. Returns 0 or FLEET_ENOMEM. */
int fleet__ks_copy_out(fleet__ks_t *ks, const void *p, size_t len,
                       fleet_bytes_t *out);

/* An array of `n` items of `size` bytes in scratch space (a valid pointer
 * even for n == 0), or NULL when out of memory. */
void *fleet__ks_scratch_array(fleet__ks_t *ks, size_t n, size_t size);

/* Adds `by` to the integer written in `b`, as INCRBY and HINCRBY do.
 * Returns 0, or FLEET_EBACKEND when `b` is not an integer or the sum
 * overflows. */
int fleet__ks_add_int(fleet_bytes_t b, int64_t by, int64_t *sum);

#endif /* FLEET_MEMORY_KEYSPACE_INT_H */
