/* dict.h -- a binary-safe hash table with chaining, the building block of
 * the memory keyspace (keys, hash fields, set and zset members). */
#ifndef FLEET_MEMORY_DICT_H
#define FLEET_MEMORY_DICT_H

#include <stddef.h>
#include <stdint.h>

typedef struct fleet__dict_entry_s fleet__dict_entry_t;

/* One entry. Entries are allocated one by one and never move, so a pointer
 * to an entry (or to its key bytes) stays valid until the entry is
 * deleted. */
struct fleet__dict_entry_s {
  fleet__dict_entry_t *next;
  uint64_t hash;
  void *val;  /* The caller's; the dict never reads or frees it. */
  size_t len; /* Key length in bytes. */
  char key[]; /* `len` bytes followed by a NUL. */
};

typedef struct {
  fleet__dict_entry_t **table;
  size_t size; /* Buckets: 0 or a power of two. */
  size_t used; /* Entries. */
} fleet__dict_t;

/* Called by fleet__dict_scan() for each entry of a visited bucket. It must
 * not add or delete entries. */
typedef void (*fleet__dict_scan_cb)(fleet__dict_entry_t *e, void *arg);

/* Initializes an empty dict; it allocates nothing until the first add. */
void fleet__dict_init(fleet__dict_t *d);

/* Frees every entry and the table, calling `free_val` (which may be NULL)
 * on each entry's value first. The dict is left empty and reusable. */
void fleet__dict_clear(fleet__dict_t *d, void (*free_val)(void *val));

/* The entry for `key`, or NULL. */
fleet__dict_entry_t *fleet__dict_find(const fleet__dict_t *d, const void *key,
                                      size_t len);

/* The entry for `key`, added with a NULL value if missing; `*created`
 * (which may be NULL) tells which. Returns NULL when out of memory, and
 * then nothing changed. */
fleet__dict_entry_t *fleet__dict_add(fleet__dict_t *d, const void *key,
                                     size_t len, int *created);

/* Unlinks and frees `e`, which must belong to `d`. The caller frees the
 * value first. The table may shrink. */
void fleet__dict_delete(fleet__dict_t *d, fleet__dict_entry_t *e);

/* Visits one bucket and returns the cursor of the next one, 0 when the
 * scan is complete; start with cursor 0. Cursors advance in reversed-bit
 * order (as Redis does), so that while the table grows or shrinks between
 * calls, every entry present for the whole scan is visited at least once;
 * after a shrink some may be visited twice. Without changes between calls
 * every entry is visited exactly once. */
uint64_t fleet__dict_scan(const fleet__dict_t *d, uint64_t cursor,
                          fleet__dict_scan_cb fn, void *arg);

#endif /* FLEET_MEMORY_DICT_H */
