/* freelist.h -- the one free list of the library: a LIFO stack of spare
 * objects kept for reuse, so that the hot path does not allocate (the
 * request pools of the adapters, their write records, the memory
 * backend's delivery records).
 *
 * Each pooled object embeds a fleet__free_t node; the list holds at most
 * `max` of them (0: no limit). The list never allocates nor frees: put
 * says when the list is full, and the owner frees the object then; at the
 * end the owner takes every object back and frees it.
 *
 *   fleet__freelist_t pool;
 *   fleet__freelist_init(&pool, 128);
 *   item_t *it = FLEET__FREELIST_TAKE(&pool, item_t, free_node);
 *   if (it == NULL) it = calloc(1, sizeof(*it));
 *   ...
 *   if (!fleet__freelist_put(&pool, &it->free_node)) free(it);
 *   while ((it = FLEET__FREELIST_TAKE(&pool, item_t, free_node)) != NULL)
 *     free(it);
 */
#ifndef FLEET_SRC_COMMON_FREELIST_H
#define FLEET_SRC_COMMON_FREELIST_H

#include <stddef.h>

typedef struct fleet__free_s fleet__free_t;
struct fleet__free_s {
  fleet__free_t *next;
};

typedef struct {
  fleet__free_t *head;
  size_t n;   /* objects on the list */
  size_t max; /* the most it keeps; 0: no limit */
} fleet__freelist_t;

/* Makes `fl` an empty list that keeps at most `max` objects (0: any
 * number). A zeroed list is an empty one without limit. */
static inline void fleet__freelist_init(fleet__freelist_t *fl, size_t max) {
  fl->head = NULL;
  fl->n = 0;
  fl->max = max;
}

/* Takes the object last put back, as a pointer to its node's owner
 * (`offset`: where the node sits in it), or NULL when the list is empty. */
static inline void *fleet__freelist_take(fleet__freelist_t *fl, size_t offset) {
  fleet__free_t *node = fl->head;

  if (node == NULL)
    return NULL;
  fl->head = node->next;
  fl->n--;
  node->next = NULL;
  return (char *)node - offset;
}

/* Puts the object of `node` on the list. Returns 1, or 0 when the list
 * is full: then the list did not take it and the caller frees it. */
static inline int fleet__freelist_put(fleet__freelist_t *fl,
                                      fleet__free_t *node) {
  if (fl->max != 0 && fl->n >= fl->max)
    return 0;
  node->next = fl->head;
  fl->head = node;
  fl->n++;
  return 1;
}

/* Takes an object of type `type`, whose node is its member `field`, or
 * NULL when the list is empty. */
#define FLEET__FREELIST_TAKE(fl, type, field)                                  \
  ((type *)fleet__freelist_take((fl), offsetof(type, field)))

#endif /* FLEET_SRC_COMMON_FREELIST_H */
