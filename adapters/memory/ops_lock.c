/* ops_lock.c -- the memory twins of the lock scripts
 * (adapters/redis/lua/lock_*.lua); KEYS, ARGV and replies are documented in
 * adapters/ops/lock.h. */
#include <string.h>

#include "memory/ops.h"

/* The mark a waiter puts in front of a busy lease. */
#define LOCK_MARK '*'

static int lock_eq(fleet_bytes_t a, fleet_bytes_t b) {
  return a.len == b.len && (a.len == 0 || memcmp(a.base, b.base, a.len) == 0);
}

/* Whether `cur` is `value` with the waiter mark in front: Lua's
 * cur == '*' .. value. */
static int lock_eq_marked(fleet_bytes_t cur, fleet_bytes_t value) {
  const char *p = cur.base;
  return cur.len == value.len + 1 && p[0] == LOCK_MARK &&
         (value.len == 0 || memcmp(p + 1, value.base, value.len) == 0);
}

/* `a`, then `sep` (if not NUL), then `b`, in scratch space: Lua's
 * a .. sep .. b. */
static int lock_cat(fleet__ks_t *ks, fleet_bytes_t a, char sep, fleet_bytes_t b,
                    fleet_bytes_t *out) {
  size_t len = a.len + (sep != '\0') + b.len;
  char *p = fleet__ks_scratch(ks, len + 1);
  char *q = p;

  if (p == NULL)
    return FLEET_ENOMEM;
  if (a.len > 0)
    memcpy(q, a.base, a.len);
  q += a.len;
  if (sep != '\0')
    *q++ = sep;
  if (b.len > 0)
    memcpy(q, b.base, b.len);
  p[len] = '\0';
  out->base = p;
  out->len = len;
  return 0;
}

/* An integer argument as Redis parses one for PX and PEXPIRE; a malformed
 * one is the command's error. */
static int lock_arg_int(fleet_bytes_t b, int64_t *out) {
  return fleet__ks_parse_int(b, out) == 0 ? 0 : FLEET_EBACKEND;
}

/* LOCK_ACQUIRE (lock_acquire.lua). */
int fleet__mem_op_lock_acquire(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                               size_t nkeys, const fleet_bytes_t *args,
                               size_t nargs, fleet__rb_t *out) {
  static const fleet_bytes_t mark = {"*", 1};
  fleet__ks_t *ks = ctx->ks;
  fleet_bytes_t tok, value, cur;
  int64_t token, px;
  int rc;

  if (nkeys != 2 || nargs != 3)
    return FLEET_EBACKEND;
  rc = fleet__ks_incr(ks, keys[1], &token);
  if (rc < 0)
    return rc;
  /* SET checks its PX before it looks at the key. */
  if (lock_arg_int(args[1], &px) != 0 || px <= 0)
    return FLEET_EBACKEND;
  rc = fleet__ks_fmt_int(ks, token, &tok);
  if (rc == 0)
    rc = lock_cat(ks, tok, ':', args[0], &value);
  if (rc == 0)
    rc = fleet__ks_set(ks, keys[0], value, px, FLEET__KS_SET_NX);
  if (rc < 0)
    return rc;
  if (rc == 1)
    return fleet__rb_int(out, token);
  rc = fleet__ks_get(ks, keys[0], &cur);
  if (rc < 0)
    return rc;
  if (lock_eq(args[2], fleet__ks_cstr("1")) &&
      (cur.len == 0 || ((const char *)cur.base)[0] != LOCK_MARK)) {
    rc = lock_cat(ks, mark, '\0', cur, &cur);
    if (rc == 0)
      rc = fleet__ks_set(ks, keys[0], cur, 0, FLEET__KS_SET_KEEPTTL);
    if (rc < 0)
      return rc;
  }
  fleet__rb_array(out, 2);
  fleet__rb_bytes(out, cur);
  return fleet__rb_int(out, fleet__ks_pttl(ks, keys[0]));
}

/* LOCK_RELEASE (lock_release.lua). */
int fleet__mem_op_lock_release(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                               size_t nkeys, const fleet_bytes_t *args,
                               size_t nargs, fleet__rb_t *out) {
  fleet__ks_t *ks = ctx->ks;
  fleet_bytes_t cur;
  int64_t n;
  int rc;

  if (nkeys != 1 || nargs != 2)
    return FLEET_EBACKEND;
  rc = fleet__ks_get(ks, keys[0], &cur);
  if (rc < 0)
    return rc;
  if (rc == 1 && lock_eq(cur, args[0])) {
    n = fleet__ks_del(ks, keys, 1);
    return n < 0 ? (int)n : fleet__rb_int(out, 0);
  }
  if (rc == 1 && lock_eq_marked(cur, args[0])) {
    n = fleet__ks_del(ks, keys, 1);
    if (n >= 0)
      n = fleet__mem_publish(ctx, args[1], args[0]);
    return n < 0 ? (int)n : fleet__rb_int(out, 1);
  }
  return FLEET_ESTALE;
}

/* LOCK_RENEW (lock_renew.lua). A key of another type reads as -1, as the
 * script's redis.pcall() makes it. */
int fleet__mem_op_lock_renew(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                             size_t nkeys, const fleet_bytes_t *args,
                             size_t nargs, fleet__rb_t *out) {
  fleet__ks_t *ks = ctx->ks;
  fleet_bytes_t cur;
  int64_t ms;
  size_t i;
  int rc;

  if (nargs < 2 * nkeys)
    return FLEET_EBACKEND;
  fleet__rb_array(out, nkeys);
  for (i = 0; i < nkeys; i++) {
    rc = fleet__ks_get(ks, keys[i], &cur);
    if (rc == FLEET_EWRONGTYPE) {
      fleet__rb_int(out, -1);
      continue;
    }
    if (rc < 0)
      return rc;
    if (rc == 1 &&
        (lock_eq(cur, args[2 * i]) || lock_eq_marked(cur, args[2 * i]))) {
      if (lock_arg_int(args[2 * i + 1], &ms) != 0)
        return FLEET_EBACKEND;
      rc = fleet__ks_pexpire(ks, keys[i], ms);
      if (rc < 0)
        return rc;
      fleet__rb_int(out, 1);
    } else {
      fleet__rb_int(out, 0);
    }
  }
  return fleet__rb_check(out);
}

/* LOCK_QUERY (lock_query.lua). */
int fleet__mem_op_lock_query(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                             size_t nkeys, const fleet_bytes_t *args,
                             size_t nargs, fleet__rb_t *out) {
  fleet__ks_t *ks = ctx->ks;
  fleet_bytes_t cur, fence;
  int rc;

  if (nkeys != 2)
    return FLEET_EBACKEND;
  rc = fleet__ks_get(ks, keys[0], &cur);
  if (rc < 0)
    return rc;
  if (rc == 0)
    cur = fleet__ks_cstr("");
  rc = fleet__ks_get(ks, keys[1], &fence);
  if (rc < 0)
    return rc;
  if (rc == 0)
    fence = fleet__ks_cstr("0");
  fleet__rb_array(out, 3);
  fleet__rb_bytes(out, cur);
  fleet__rb_int(out, fleet__ks_pttl(ks, keys[0]));
  return fleet__rb_bytes(out, fence);
}
