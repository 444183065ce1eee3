/* keyspace_zset.c -- sorted set commands of the memory keyspace, over the
 * skiplist of zset.c. Ranges find their first member by rank, in
 * O(log n), whatever the offset. */
#include <math.h>

#include "memory/keyspace_int.h"

/* Copies `n` members from `node` on into a scratch array. */
static int64_t ks_zcopy(fleet__ks_t *ks, const fleet__zset_node_t *node,
                        size_t n, fleet__ks_zitem_t **out) {
  fleet__ks_zitem_t *items = fleet__ks_scratch_array(ks, n, sizeof(*items));
  size_t i;

  if (items == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < n; i++, node = fleet__zset_next(node)) {
    if (fleet__ks_copy_out(ks, node->ele, node->len, &items[i].member) != 0)
      return FLEET_ENOMEM;
    items[i].score = node->score;
  }
  *out = items;
  return (int64_t)n;
}

/* The ranks [*first, *first + return value) of the members scoring in
 * [min, max]. */
static size_t ks_zscore_range(const fleet__zset_t *z, double min, double max,
                              size_t *first) {
  size_t end = fleet__zset_count_below(z, max, 1);

  *first = fleet__zset_count_below(z, min, 0);
  return end > *first ? end - *first : 0;
}

int fleet__ks_zadd(fleet__ks_t *ks, fleet_bytes_t key, double score,
                   fleet_bytes_t member) {
  fleet__dict_entry_t *e;
  int rc;

  if (isnan(score))
    return FLEET_EBACKEND;
  rc = fleet__ks_find_or_create(ks, key, FLEET__KS_ZSET, &e);
  if (rc < 0)
    return rc;
  rc = fleet__zset_add(&fleet__ks_obj(e)->u.zset, score, member.base,
                       member.len);
  if (rc < 0)
    fleet__ks_drop_if_empty(ks, e);
  return rc;
}

/* ZREM: removes one member. Returns 1 when it was there, else 0. */
static int ks_zset_remove_one(fleet__ks_obj_t *o, fleet_bytes_t member) {
  return fleet__zset_remove(&o->u.zset, member.base, member.len);
}

int64_t fleet__ks_zrem(fleet__ks_t *ks, fleet_bytes_t key,
                       const fleet_bytes_t *members, size_t n) {
  return fleet__ks_remove_items(ks, key, FLEET__KS_ZSET, members, n,
                                ks_zset_remove_one);
}

int fleet__ks_zscore(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t member,
                     double *out) {
  fleet__dict_entry_t *e;
  const fleet__zset_node_t *node;
  int rc = fleet__ks_find(ks, key, FLEET__KS_ZSET, &e);

  if (rc <= 0)
    return rc;
  node = fleet__zset_find(&fleet__ks_obj(e)->u.zset, member.base, member.len);
  if (node == NULL)
    return 0;
  *out = node->score;
  return 1;
}

int64_t fleet__ks_zcard(fleet__ks_t *ks, fleet_bytes_t key) {
  return fleet__ks_len(ks, key, FLEET__KS_ZSET);
}

int64_t fleet__ks_zrangebyscore(fleet__ks_t *ks, fleet_bytes_t key, double min,
                                double max, int64_t offset, int64_t count,
                                fleet__ks_zitem_t **out) {
  fleet__dict_entry_t *e;
  const fleet__zset_t *z = NULL;
  size_t first = 0, n = 0;
  int rc = fleet__ks_find(ks, key, FLEET__KS_ZSET, &e);

  if (rc < 0)
    return rc;
  /* Like Redis, a negative offset gives an empty range. */
  if (rc > 0 && offset >= 0) {
    z = &fleet__ks_obj(e)->u.zset;
    n = ks_zscore_range(z, min, max, &first);
    if ((uint64_t)offset >= n) {
      n = 0;
    } else {
      first += (size_t)offset;
      n -= (size_t)offset;
      if (count >= 0 && (uint64_t)count < n)
        n = (size_t)count;
    }
  }
  return ks_zcopy(ks, n > 0 ? fleet__zset_at(z, first) : NULL, n, out);
}

int64_t fleet__ks_zrange(fleet__ks_t *ks, fleet_bytes_t key, int64_t start,
                         int64_t stop, fleet__ks_zitem_t **out) {
  fleet__dict_entry_t *e;
  const fleet__zset_t *z = NULL;
  size_t first = 0, n = 0;
  int rc = fleet__ks_find(ks, key, FLEET__KS_ZSET, &e);

  if (rc < 0)
    return rc;
  if (rc > 0) {
    z = &fleet__ks_obj(e)->u.zset;
    n = fleet__ks_range(z->length, start, stop, &first);
  }
  return ks_zcopy(ks, n > 0 ? fleet__zset_at(z, first) : NULL, n, out);
}

int64_t fleet__ks_zremrangebyscore(fleet__ks_t *ks, fleet_bytes_t key,
                                   double min, double max) {
  fleet__dict_entry_t *e;
  fleet__zset_t *z;
  const fleet__zset_node_t *node, *next;
  size_t first, n, i;
  int rc = fleet__ks_find(ks, key, FLEET__KS_ZSET, &e);

  if (rc <= 0)
    return rc;
  z = &fleet__ks_obj(e)->u.zset;
  n = ks_zscore_range(z, min, max, &first);
  node = n > 0 ? fleet__zset_at(z, first) : NULL;
  for (i = 0; i < n; i++, node = next) {
    next = fleet__zset_next(node);
    fleet__zset_remove(z, node->ele, node->len);
  }
  fleet__ks_drop_if_empty(ks, e);
  return (int64_t)n;
}

int64_t fleet__ks_zcount(fleet__ks_t *ks, fleet_bytes_t key, double min,
                         double max) {
  fleet__dict_entry_t *e;
  size_t first;
  int rc = fleet__ks_find(ks, key, FLEET__KS_ZSET, &e);

  if (rc <= 0)
    return rc;
  return (int64_t)ks_zscore_range(&fleet__ks_obj(e)->u.zset, min, max, &first);
}

/* The members scoring like `member` sort by bytes after the first of that
 * score: the rank is found by walking them from there. */
int fleet__ks_zrank(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t member,
                    int64_t *out) {
  fleet__dict_entry_t *e;
  const fleet__zset_t *z;
  const fleet__zset_node_t *target, *node;
  size_t rank;
  int rc = fleet__ks_find(ks, key, FLEET__KS_ZSET, &e);

  if (rc <= 0)
    return rc;
  z = &fleet__ks_obj(e)->u.zset;
  target = fleet__zset_find(z, member.base, member.len);
  if (target == NULL)
    return 0;
  rank = fleet__zset_count_below(z, target->score, 0);
  for (node = fleet__zset_at(z, rank); node != target;
       node = fleet__zset_next(node))
    rank++;
  *out = (int64_t)rank;
  return 1;
}

int64_t fleet__ks_zremrangebyrank(fleet__ks_t *ks, fleet_bytes_t key,
                                  int64_t start, int64_t stop) {
  fleet__dict_entry_t *e;
  fleet__zset_t *z;
  const fleet__zset_node_t *node, *next;
  size_t first = 0, n, i;
  int rc = fleet__ks_find(ks, key, FLEET__KS_ZSET, &e);

  if (rc <= 0)
    return rc;
  z = &fleet__ks_obj(e)->u.zset;
  n = fleet__ks_range(z->length, start, stop, &first);
  if (n == 0)
    return 0;
  node = fleet__zset_at(z, first);
  for (i = 0; i < n; i++, node = next) {
    next = fleet__zset_next(node);
    fleet__zset_remove(z, node->ele, node->len);
  }
  fleet__ks_drop_if_empty(ks, e);
  return (int64_t)n;
}
