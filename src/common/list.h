/* list.h -- the one intrusive doubly-linked list of the library (the idea
 * of libuv's src/queue.h, typed).
 *
 * A list is a fleet__list_t head; each element embeds a fleet__list_t node
 * and is found from it with FLEET__LIST_DATA(). The list is circular
 * through its head: an empty list's head points at itself, so insert and
 * remove never test for the ends. A node that is on no list is kept
 * initialized (pointing at itself): removing it again does nothing, and
 * fleet__list_linked() tells whether it is on a list. A zeroed node (fresh
 * from calloc) is on no list either, but must not be removed: its owner
 * tracks whether it is linked, or initializes it.
 *
 *   fleet__list_t pending;
 *   fleet__list_init(&pending);
 *   fleet__list_insert_tail(&pending, &item->node);
 *   FLEET__LIST_FOREACH(n, next, &pending) {
 *     item_t *it = FLEET__LIST_DATA(n, item_t, node);
 *     fleet__list_remove(&it->node); // safe: `next` was read first
 *   }
 */
#ifndef FLEET_SRC_COMMON_LIST_H
#define FLEET_SRC_COMMON_LIST_H

#include <stddef.h>

typedef struct fleet__list_s fleet__list_t;
struct fleet__list_s {
  fleet__list_t *prev, *next;
};

/* The element of type `type` whose member `field` is the node `node`. */
#define FLEET__LIST_DATA(node, type, field)                                    \
  ((type *)(void *)((char *)(node)-offsetof(type, field)))

/* Walks the list `head` front to back with `n` (a fleet__list_t *); `tmp`
 * holds the next node, so the body may remove (and free) `n`, but not the
 * node after it. */
#define FLEET__LIST_FOREACH(n, tmp, head)                                      \
  for (fleet__list_t *n = (head)->next, *tmp = n->next; n != (head);           \
       n = tmp, tmp = n->next)

/* Walks the list `head` front to back with `var`, a `type *` declared by
 * the caller, each element's node being its member `field`. As with
 * FLEET__LIST_FOREACH, the body may remove (and free) `var`. */
#define FLEET__LIST_FOREACH_DATA(var, head, type, field)                       \
  for (fleet__list_t *var##_n_ = (head)->next, *var##_next_ = var##_n_->next;  \
       var##_n_ != (head) &&                                                   \
       ((var) = FLEET__LIST_DATA(var##_n_, type, field), 1);                   \
       var##_n_ = var##_next_, var##_next_ = var##_n_->next)

/* Makes `l` an empty list, or a node that is on no list. */
static inline void fleet__list_init(fleet__list_t *l) {
  l->prev = l->next = l;
}

/* Whether the list `head` has no element. */
static inline int fleet__list_empty(const fleet__list_t *head) {
  return head->next == head;
}

/* Whether the node `n` is on a list (it was initialized, then inserted). */
static inline int fleet__list_linked(const fleet__list_t *n) {
  return n->next != n;
}

/* The first node of `head`, or NULL when the list is empty. */
static inline fleet__list_t *fleet__list_first(const fleet__list_t *head) {
  return head->next == head ? NULL : head->next;
}

/* Puts `n` first on `head`. */
static inline void fleet__list_insert_head(fleet__list_t *head,
                                           fleet__list_t *n) {
  n->next = head->next;
  n->prev = head;
  head->next->prev = n;
  head->next = n;
}

/* Puts `n` last on `head`. */
static inline void fleet__list_insert_tail(fleet__list_t *head,
                                           fleet__list_t *n) {
  /* After the last node, which is first after the node before it. */
  fleet__list_insert_head(head->prev, n);
}

/* Takes `n` off its list, if it is on one; `n` is then on no list. */
static inline void fleet__list_remove(fleet__list_t *n) {
  n->prev->next = n->next;
  n->next->prev = n->prev;
  fleet__list_init(n);
}

#endif /* FLEET_SRC_COMMON_LIST_H */
