/* zset.h -- a sorted set: a skiplist ordered by score then member bytes,
 * plus a dict from member to skiplist node, as in Redis. */
#ifndef FLEET_MEMORY_ZSET_H
#define FLEET_MEMORY_ZSET_H

#include <stddef.h>
#include <stdint.h>

#include "common/util.h"
#include "fleet.h"
#include "memory/dict.h"

typedef struct fleet__zset_node_s fleet__zset_node_t;

/* A member. `ele` points at the key bytes of the member's dict entry (NUL
 * terminated), so a member is stored once. */
struct fleet__zset_node_s {
  const char *ele;
  size_t len;
  double score;
  int height;
  fleet__zset_node_t *backward;
  struct {
    fleet__zset_node_t *forward;
    size_t span; /* Nodes crossed by following `forward`. */
  } level[];
};

typedef struct {
  fleet__dict_t dict; /* Member -> fleet__zset_node_t. */
  fleet__zset_node_t *header;
  fleet__zset_node_t *tail;
  size_t length;
  int level;
  fleet__rng_t rng; /* Draws node heights. */
} fleet__zset_t;

/* Initializes an empty set. Returns 0 or FLEET_ENOMEM. */
int fleet__zset_init(fleet__zset_t *z);

/* Frees every member and the skiplist. */
void fleet__zset_destroy(fleet__zset_t *z);

/* Adds `ele` with `score`, or moves it to `score`: O(log n). `score` must
 * not be NaN. Returns 1 when added, 0 when it was already a member, or
 * FLEET_ENOMEM (and then nothing changed). */
int fleet__zset_add(fleet__zset_t *z, double score, const void *ele,
                    size_t len);

/* Removes `ele`: O(log n). Returns 1 when it was a member, else 0. */
int fleet__zset_remove(fleet__zset_t *z, const void *ele, size_t len);

/* The node of `ele`, or NULL. */
const fleet__zset_node_t *fleet__zset_find(const fleet__zset_t *z,
                                           const void *ele, size_t len);

/* The node at 0-based `rank` (lowest score first), or NULL: O(log n). */
const fleet__zset_node_t *fleet__zset_at(const fleet__zset_t *z, size_t rank);

/* How many members score below `score` (or at most `score` when
 * `inclusive`): the rank of the first member past that bound. O(log n). */
size_t fleet__zset_count_below(const fleet__zset_t *z, double score,
                               int inclusive);

/* The next node in order, or NULL. */
static inline const fleet__zset_node_t *
fleet__zset_next(const fleet__zset_node_t *n) {
  return n->level[0].forward;
}

#endif /* FLEET_MEMORY_ZSET_H */
