/* pool_route.c -- routing: the pool's membership as a node read it last,
 * the owner a job key routes to over it, and the owner records of jobs.
 * The hash is a 64-bit hash of the key and the jump consistent hash that
 * maps it onto the workers in creation order: computed on the client (Lua
 * 5.1 has no 64-bit integers), over a membership that carries a revision,
 * which the scripts that assign jobs check. */
#include <stdlib.h>
#include <string.h>

#include "pool_int.h"

/* ------------------------------------------------------------------------ */
/* Membership                                                               */

void fleet__pool_members_clear(fleet__pool_t *p) {
  size_t i;

  for (i = 0; i < p->nmembers; i++) {
    free(p->member_ids[i]);
    free(p->member_nodes[i]);
  }
  p->nmembers = 0;
}

int fleet__pool_set_members(fleet__pool_t *p, const fleet__reply_t *r) {
  size_t i, n, cap = p->members_cap, cap2 = p->members_cap;
  int64_t rev;

  if (!fleet__reply_is_array(r, 1) || r->nelem % 3 != 1 ||
      fleet__reply_i64(&r->elem[0], &rev) != 0)
    return FLEET_EPROTO;
  for (i = 1; i < r->nelem; i++)
    if (r->elem[i].type != FLEET__REPLY_STR)
      return FLEET_EPROTO;
  n = r->nelem / 3;
  if (fleet__grow((void **)&p->member_ids, &cap, n, sizeof(char *)) != 0 ||
      fleet__grow((void **)&p->member_created, &cap2, n, sizeof(uint64_t)) !=
          0 ||
      fleet__grow((void **)&p->member_nodes, &p->members_cap, n,
                  sizeof(char *)) != 0)
    return FLEET_ENOMEM;
  fleet__pool_members_clear(p);
  for (i = 0; i < n; i++) {
    const fleet__reply_t *w = &r->elem[1 + 3 * i], *nd = &r->elem[2 + 3 * i];
    if (fleet__reply_u64_str(&r->elem[3 + 3 * i], &p->member_created[i]) != 0)
      return FLEET_EPROTO;
    p->member_ids[i] = fleet__memdup(w->str, w->len);
    p->member_nodes[i] = fleet__memdup(nd->str, nd->len);
    p->nmembers = i + 1;
    if (p->member_ids[i] == NULL || p->member_nodes[i] == NULL)
      return FLEET_ENOMEM;
  }
  p->rev = rev;
  return 0;
}

const char *fleet__pool_route(const fleet__pool_t *p, const char *key,
                              size_t len) {
  if (p->nmembers == 0)
    return NULL;
  return p->member_ids[fleet__jump_hash(fleet__key_hash(key, len),
                                        (uint32_t)p->nmembers)];
}

int fleet__pool_parse_owner(const fleet__reply_t *rec, fleet_bytes_t *token,
                            char *state, fleet_bytes_t *worker) {
  const char *s = rec->str, *end = rec->str + rec->len, *c;

  c = memchr(s, ':', rec->len);
  if (c == NULL || c == s || end - c < 3 || c[2] != ':')
    return -1;
  *token = (fleet_bytes_t){s, (size_t)(c - s)};
  *state = c[1];
  *worker = (fleet_bytes_t){c + 3, (size_t)(end - c - 3)};
  return 0;
}
