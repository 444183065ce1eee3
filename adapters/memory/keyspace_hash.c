/* keyspace_hash.c -- hash and set commands of the memory keyspace; both are
 * dicts (a set's entries have no value). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "memory/keyspace_int.h"

static const fleet_bytes_t ks_nil = {NULL, 0};

typedef struct {
  fleet__ks_t *ks;
  fleet_bytes_t *out;
  size_t n;
  int with_values;
  int err;
} ks_collect_t;

static void ks_collect_visit(fleet__dict_entry_t *e, void *arg) {
  ks_collect_t *c = arg;
  const fleet__ks_blob_t *b = e->val;

  if (c->err == 0)
    c->err = fleet__ks_copy_out(c->ks, e->key, e->len, &c->out[c->n++]);
  if (c->err == 0 && c->with_values)
    c->err = fleet__ks_copy_out(c->ks, b->data, b->len, &c->out[c->n++]);
}

/* Copies every key of the hash or set at `key` (a hash's followed by its
 * value) into a scratch array. Returns the number of items, or a negative
 * error. */
static int64_t ks_collect(fleet__ks_t *ks, fleet_bytes_t key,
                          fleet__ks_type_t type, fleet_bytes_t **out) {
  int with_values = type == FLEET__KS_HASH;
  fleet__dict_entry_t *e;
  const fleet__dict_t *d = NULL;
  ks_collect_t c;
  uint64_t cursor = 0;
  size_t n;
  int rc = fleet__ks_find(ks, key, type, &e);

  if (rc < 0)
    return rc;
  if (rc > 0)
    d = type == FLEET__KS_HASH ? &fleet__ks_obj(e)->u.hash
                               : &fleet__ks_obj(e)->u.set;
  n = d != NULL ? d->used * (with_values ? 2 : 1) : 0;

  c.ks = ks;
  c.out = fleet__ks_scratch_array(ks, n, sizeof(*c.out));
  c.n = 0;
  c.with_values = with_values;
  c.err = c.out == NULL ? FLEET_ENOMEM : 0;
  if (d != NULL) {
    do {
      cursor = fleet__dict_scan(d, cursor, ks_collect_visit, &c);
    } while (cursor != 0 && c.err == 0);
  }
  if (c.err != 0)
    return c.err;
  *out = c.out;
  return (int64_t)c.n;
}

/* ------------------------------------------------------------------------ */
/* Hashes                                                                   */

int64_t fleet__ks_hset(fleet__ks_t *ks, fleet_bytes_t key,
                       const fleet_bytes_t *fv, size_t n) {
  fleet__dict_entry_t *e, *f;
  fleet__ks_blob_t *b;
  int64_t added = 0;
  size_t i;
  int created;
  int rc;

  if (n == 0 || n % 2 != 0)
    return FLEET_EBACKEND;
  rc = fleet__ks_find_or_create(ks, key, FLEET__KS_HASH, &e);
  if (rc < 0)
    return rc;
  for (i = 0; i < n; i += 2) {
    b = fleet__ks_blob_new(fv[i + 1].base, fv[i + 1].len);
    f = b != NULL ? fleet__dict_add(&fleet__ks_obj(e)->u.hash, fv[i].base,
                                    fv[i].len, &created)
                  : NULL;
    if (f == NULL) {
      free(b);
      fleet__ks_drop_if_empty(ks, e);
      return FLEET_ENOMEM;
    }
    free(f->val);
    f->val = b;
    added += created;
  }
  return added;
}

int fleet__ks_hget(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t field,
                   fleet_bytes_t *out) {
  fleet__dict_entry_t *e, *f = NULL;
  fleet__ks_blob_t *b;
  int rc = fleet__ks_find(ks, key, FLEET__KS_HASH, &e);

  *out = ks_nil;
  if (rc > 0)
    f = fleet__dict_find(&fleet__ks_obj(e)->u.hash, field.base, field.len);
  if (f == NULL)
    return rc < 0 ? rc : 0;
  b = f->val;
  rc = fleet__ks_copy_out(ks, b->data, b->len, out);
  return rc < 0 ? rc : 1;
}

/* HDEL and SREM: removes one field of a hash (and frees its value) or one
 * member of a set. Returns 1 when it was there, else 0. */
static int ks_dict_remove_one(fleet__ks_obj_t *o, fleet_bytes_t item) {
  int hash = o->type == FLEET__KS_HASH;
  fleet__dict_t *d = hash ? &o->u.hash : &o->u.set;
  fleet__dict_entry_t *f = fleet__dict_find(d, item.base, item.len);

  if (f == NULL)
    return 0;
  if (hash)
    free(f->val);
  fleet__dict_delete(d, f);
  return 1;
}

int64_t fleet__ks_hdel(fleet__ks_t *ks, fleet_bytes_t key,
                       const fleet_bytes_t *fields, size_t n) {
  return fleet__ks_remove_items(ks, key, FLEET__KS_HASH, fields, n,
                                ks_dict_remove_one);
}

int64_t fleet__ks_hgetall(fleet__ks_t *ks, fleet_bytes_t key,
                          fleet_bytes_t **out) {
  return ks_collect(ks, key, FLEET__KS_HASH, out);
}

int fleet__ks_hincrby(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t field,
                      int64_t by, int64_t *out) {
  fleet__dict_entry_t *e, *f;
  fleet__dict_t *d;
  fleet__ks_blob_t *b;
  fleet_bytes_t cur = fleet__ks_cstr("0");
  char buf[24];
  int64_t sum;
  int created;
  int rc = fleet__ks_find_or_create(ks, key, FLEET__KS_HASH, &e);

  if (rc < 0)
    return rc;
  d = &fleet__ks_obj(e)->u.hash;
  f = fleet__dict_add(d, field.base, field.len, &created);
  if (f == NULL) {
    fleet__ks_drop_if_empty(ks, e);
    return FLEET_ENOMEM;
  }
  if (!created) {
    b = f->val;
    cur.base = b->data;
    cur.len = b->len;
  }
  rc = fleet__ks_add_int(cur, by, &sum);
  b = rc == 0 ? fleet__ks_blob_new(
                    buf, (size_t)snprintf(buf, sizeof(buf), "%" PRId64, sum))
              : NULL;
  if (b == NULL) {
    /* A field created above has no value yet: take it out again. */
    if (created) {
      fleet__dict_delete(d, f);
      fleet__ks_drop_if_empty(ks, e);
    }
    return rc < 0 ? rc : FLEET_ENOMEM;
  }
  free(f->val);
  f->val = b;
  *out = sum;
  return 0;
}

int64_t fleet__ks_hlen(fleet__ks_t *ks, fleet_bytes_t key) {
  return fleet__ks_len(ks, key, FLEET__KS_HASH);
}

int fleet__ks_hexists(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t field) {
  fleet__dict_entry_t *e;
  int rc = fleet__ks_find(ks, key, FLEET__KS_HASH, &e);

  if (rc <= 0)
    return rc;
  return fleet__dict_find(&fleet__ks_obj(e)->u.hash, field.base, field.len) !=
         NULL;
}

int64_t fleet__ks_hmget(fleet__ks_t *ks, fleet_bytes_t key,
                        const fleet_bytes_t *fields, size_t n,
                        fleet_bytes_t **out) {
  fleet__dict_entry_t *e, *f;
  fleet_bytes_t *vals;
  fleet__ks_blob_t *b;
  size_t i;
  int rc;

  if (n == 0)
    return FLEET_EBACKEND;
  rc = fleet__ks_find(ks, key, FLEET__KS_HASH, &e);
  if (rc < 0)
    return rc;
  vals = fleet__ks_scratch_array(ks, n, sizeof(*vals));
  if (vals == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < n; i++) {
    vals[i] = ks_nil;
    f = rc > 0 ? fleet__dict_find(&fleet__ks_obj(e)->u.hash, fields[i].base,
                                  fields[i].len)
               : NULL;
    if (f == NULL)
      continue;
    b = f->val;
    if (fleet__ks_copy_out(ks, b->data, b->len, &vals[i]) != 0)
      return FLEET_ENOMEM;
  }
  *out = vals;
  return (int64_t)n;
}

/* ------------------------------------------------------------------------ */
/* Sets                                                                     */

int64_t fleet__ks_sadd(fleet__ks_t *ks, fleet_bytes_t key,
                       const fleet_bytes_t *members, size_t n) {
  fleet__dict_entry_t *e;
  int64_t added = 0;
  size_t i;
  int created;
  int rc;

  if (n == 0)
    return FLEET_EBACKEND;
  rc = fleet__ks_find_or_create(ks, key, FLEET__KS_SET, &e);
  if (rc < 0)
    return rc;
  for (i = 0; i < n; i++) {
    if (fleet__dict_add(&fleet__ks_obj(e)->u.set, members[i].base,
                        members[i].len, &created) == NULL) {
      fleet__ks_drop_if_empty(ks, e);
      return FLEET_ENOMEM;
    }
    added += created;
  }
  return added;
}

int64_t fleet__ks_srem(fleet__ks_t *ks, fleet_bytes_t key,
                       const fleet_bytes_t *members, size_t n) {
  return fleet__ks_remove_items(ks, key, FLEET__KS_SET, members, n,
                                ks_dict_remove_one);
}

int64_t fleet__ks_smembers(fleet__ks_t *ks, fleet_bytes_t key,
                           fleet_bytes_t **out) {
  return ks_collect(ks, key, FLEET__KS_SET, out);
}
