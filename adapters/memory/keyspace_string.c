/* keyspace_string.c -- string commands of the memory keyspace: GET, SET,
 * INCR, INCRBY. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "memory/keyspace_int.h"

int fleet__ks_get(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t *out) {
  fleet__dict_entry_t *e;
  fleet__ks_blob_t *b;
  int rc = fleet__ks_find(ks, key, FLEET__KS_STRING, &e);

  out->base = NULL;
  out->len = 0;
  if (rc <= 0)
    return rc;
  b = fleet__ks_obj(e)->u.str;
  rc = fleet__ks_copy_out(ks, b->data, b->len, out);
  return rc < 0 ? rc : 1;
}

/* A new value replaces the old one whatever its type: the old value is
 * freed and a fresh string value put in its place. */
int fleet__ks_set(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t value,
                  int64_t px_ms, int flags) {
  fleet__dict_entry_t *e;
  fleet__ks_obj_t *o;
  fleet__ks_blob_t *b;
  int64_t expire_ms = -1;

  if (px_ms < 0 || ((flags & FLEET__KS_SET_NX) && (flags & FLEET__KS_SET_XX)) ||
      (px_ms > 0 && (flags & FLEET__KS_SET_KEEPTTL)))
    return FLEET_EBACKEND;
  if (px_ms > 0) {
    if (fleet__ks_now(ks) > INT64_MAX - px_ms)
      return FLEET_EBACKEND;
    expire_ms = fleet__ks_now(ks) + px_ms;
  }
  e = fleet__ks_lookup(ks, key);
  if ((e != NULL && (flags & FLEET__KS_SET_NX)) ||
      (e == NULL && (flags & FLEET__KS_SET_XX)))
    return 0;
  if (e != NULL && (flags & FLEET__KS_SET_KEEPTTL))
    expire_ms = fleet__ks_obj(e)->expire_ms;
  b = fleet__ks_blob_new(value.base, value.len);
  if (b == NULL)
    return FLEET_ENOMEM;
  if (e != NULL)
    fleet__ks_remove(ks, e);
  if (fleet__ks_find_or_create(ks, key, FLEET__KS_STRING, &e) != 0) {
    free(b);
    return FLEET_ENOMEM;
  }
  o = fleet__ks_obj(e);
  o->u.str = b;
  fleet__ks_set_expire(ks, o, expire_ms);
  return 1;
}

int fleet__ks_incr(fleet__ks_t *ks, fleet_bytes_t key, int64_t *out) {
  return fleet__ks_incrby(ks, key, 1, out);
}

int fleet__ks_incrby(fleet__ks_t *ks, fleet_bytes_t key, int64_t by,
                     int64_t *out) {
  fleet__dict_entry_t *e;
  fleet__ks_obj_t *o;
  fleet__ks_blob_t *b;
  fleet_bytes_t cur = fleet__ks_cstr("0");
  char buf[24];
  int64_t sum;
  int rc = fleet__ks_find_or_create(ks, key, FLEET__KS_STRING, &e);

  if (rc < 0)
    return rc;
  o = fleet__ks_obj(e);
  if (o->u.str != NULL) {
    cur.base = o->u.str->data;
    cur.len = o->u.str->len;
  }
  /* Adding to "0" cannot fail, so a key created above is never left
   * empty by this error. */
  rc = fleet__ks_add_int(cur, by, &sum);
  if (rc < 0)
    return rc;
  b = fleet__ks_blob_new(buf,
                         (size_t)snprintf(buf, sizeof(buf), "%" PRId64, sum));
  if (b == NULL) {
    fleet__ks_drop_if_empty(ks, e);
    return FLEET_ENOMEM;
  }
  free(o->u.str);
  o->u.str = b;
  *out = sum;
  return 0;
}
