/* zset.c -- a sorted set: a skiplist with spans (for ranks) ordered by
 * score then member bytes, plus a dict from member to node. The skiplist is
 * Redis's (t_zset.c), rewritten; insert, remove and rank lookups are
 * O(log n) expected. */
#include <stdlib.h>
#include <string.h>

#include "memory/zset.h"

#define ZSET_MAX_LEVEL 32

/* Compares (score, ele) with node `n` as Redis orders a sorted set: by
 * score, then by member bytes, a prefix first. */
static int zset_cmp(double score, const char *ele, size_t len,
                    const fleet__zset_node_t *n) {
  size_t min = len < n->len ? len : n->len;
  int c;

  if (score != n->score)
    return score < n->score ? -1 : 1;
  c = min > 0 ? memcmp(ele, n->ele, min) : 0;
  if (c != 0)
    return c;
  return len < n->len ? -1 : len > n->len ? 1 : 0;
}

/* Whether node `a` sorts before node `b`. */
static int zset_less(const fleet__zset_node_t *a, const fleet__zset_node_t *b) {
  return zset_cmp(a->score, a->ele, a->len, b) < 0;
}

/* A random node height: each level above the first with odds 1/4. */
static int zset_random_height(fleet__zset_t *z) {
  int height = 1;

  while (height < ZSET_MAX_LEVEL && (fleet__rng_next(&z->rng) & 3) == 0)
    height++;
  return height;
}

/* A node of `height` levels, unlinked, or NULL when out of memory. */
static fleet__zset_node_t *zset_node_new(int height) {
  fleet__zset_node_t *n;
  int i;

  n = malloc(sizeof(*n) + (size_t)height * sizeof(n->level[0]));
  if (n == NULL)
    return NULL;
  n->ele = NULL;
  n->len = 0;
  n->score = 0;
  n->height = height;
  n->backward = NULL;
  for (i = 0; i < height; i++) {
    n->level[i].forward = NULL;
    n->level[i].span = 0;
  }
  return n;
}

/* Links `node` (its score and member set) into the skiplist. */
static void zset_link(fleet__zset_t *z, fleet__zset_node_t *node) {
  fleet__zset_node_t *update[ZSET_MAX_LEVEL];
  size_t rank[ZSET_MAX_LEVEL];
  fleet__zset_node_t *x = z->header;
  int i;

  for (i = z->level - 1; i >= 0; i--) {
    rank[i] = i == z->level - 1 ? 0 : rank[i + 1];
    while (x->level[i].forward != NULL &&
           zset_less(x->level[i].forward, node)) {
      rank[i] += x->level[i].span;
      x = x->level[i].forward;
    }
    update[i] = x;
  }
  if (node->height > z->level) {
    for (i = z->level; i < node->height; i++) {
      rank[i] = 0;
      update[i] = z->header;
      update[i]->level[i].span = z->length;
    }
    z->level = node->height;
  }
  for (i = 0; i < node->height; i++) {
    node->level[i].forward = update[i]->level[i].forward;
    update[i]->level[i].forward = node;
    node->level[i].span = update[i]->level[i].span - (rank[0] - rank[i]);
    update[i]->level[i].span = (rank[0] - rank[i]) + 1;
  }
  for (i = node->height; i < z->level; i++)
    update[i]->level[i].span++;
  node->backward = update[0] == z->header ? NULL : update[0];
  if (node->level[0].forward != NULL)
    node->level[0].forward->backward = node;
  else
    z->tail = node;
  z->length++;
}

/* Unlinks `node` from the skiplist without freeing it. */
static void zset_unlink(fleet__zset_t *z, fleet__zset_node_t *node) {
  fleet__zset_node_t *update[ZSET_MAX_LEVEL];
  fleet__zset_node_t *x = z->header;
  int i;

  for (i = z->level - 1; i >= 0; i--) {
    while (x->level[i].forward != NULL && zset_less(x->level[i].forward, node))
      x = x->level[i].forward;
    update[i] = x;
  }
  for (i = 0; i < z->level; i++) {
    if (update[i]->level[i].forward == node) {
      update[i]->level[i].span += node->level[i].span - 1;
      update[i]->level[i].forward = node->level[i].forward;
    } else {
      update[i]->level[i].span--;
    }
  }
  if (node->level[0].forward != NULL)
    node->level[0].forward->backward = node->backward;
  else
    z->tail = node->backward;
  while (z->level > 1 && z->header->level[z->level - 1].forward == NULL)
    z->level--;
  z->length--;
}

int fleet__zset_init(fleet__zset_t *z) {
  fleet__dict_init(&z->dict);
  fleet__rng_seed(&z->rng, (uint64_t)(uintptr_t)z);
  z->header = zset_node_new(ZSET_MAX_LEVEL);
  if (z->header == NULL)
    return FLEET_ENOMEM;
  z->tail = NULL;
  z->length = 0;
  z->level = 1;
  return 0;
}

void fleet__zset_destroy(fleet__zset_t *z) {
  fleet__zset_node_t *n = z->header;

  while (n != NULL) {
    fleet__zset_node_t *next = n->level[0].forward;
    free(n);
    n = next;
  }
  z->header = NULL;
  fleet__dict_clear(&z->dict, NULL);
}

int fleet__zset_add(fleet__zset_t *z, double score, const void *ele,
                    size_t len) {
  fleet__dict_entry_t *e;
  fleet__zset_node_t *node;
  int created;

  e = fleet__dict_add(&z->dict, ele, len, &created);
  if (e == NULL)
    return FLEET_ENOMEM;
  if (!created) {
    node = e->val;
    if (node->score != score) {
      zset_unlink(z, node);
      node->score = score;
      zset_link(z, node);
    }
    return 0;
  }
  node = zset_node_new(zset_random_height(z));
  if (node == NULL) {
    fleet__dict_delete(&z->dict, e);
    return FLEET_ENOMEM;
  }
  node->ele = e->key;
  node->len = e->len;
  node->score = score;
  e->val = node;
  zset_link(z, node);
  return 1;
}

int fleet__zset_remove(fleet__zset_t *z, const void *ele, size_t len) {
  fleet__dict_entry_t *e = fleet__dict_find(&z->dict, ele, len);
  fleet__zset_node_t *node;

  if (e == NULL)
    return 0;
  node = e->val;
  zset_unlink(z, node);
  free(node);
  fleet__dict_delete(&z->dict, e);
  return 1;
}

const fleet__zset_node_t *fleet__zset_find(const fleet__zset_t *z,
                                           const void *ele, size_t len) {
  fleet__dict_entry_t *e = fleet__dict_find(&z->dict, ele, len);
  return e != NULL ? e->val : NULL;
}

const fleet__zset_node_t *fleet__zset_at(const fleet__zset_t *z, size_t rank) {
  const fleet__zset_node_t *x = z->header;
  size_t traversed = 0;
  int i;

  if (rank >= z->length)
    return NULL;
  /* Spans count nodes from the header, which is rank 0 here; the node at
   * 0-based `rank` is therefore rank + 1 nodes away. */
  rank++;
  for (i = z->level - 1; i >= 0; i--) {
    while (x->level[i].forward != NULL &&
           traversed + x->level[i].span <= rank) {
      traversed += x->level[i].span;
      x = x->level[i].forward;
    }
    if (traversed == rank)
      return x;
  }
  return NULL;
}

size_t fleet__zset_count_below(const fleet__zset_t *z, double score,
                               int inclusive) {
  const fleet__zset_node_t *x = z->header;
  size_t rank = 0;
  int i;

  for (i = z->level - 1; i >= 0; i--) {
    while (x->level[i].forward != NULL &&
           (x->level[i].forward->score < score ||
            (inclusive && x->level[i].forward->score == score))) {
      rank += x->level[i].span;
      x = x->level[i].forward;
    }
  }
  return rank;
}
