/* ops_store.c -- the memory twins of the store scripts
 * (adapters/redis/lua/store_*.lua) and of the commands SCAN and UNLINK;
 * KEYS, ARGV and replies are documented in adapters/ops/store.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "memory/ops.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

static const fleet_bytes_t store_empty = {"", 0};

/* Whether `key` is absent or holds `want`: the scripts' is(). */
static int store_is(fleet__ks_t *ks, fleet_bytes_t key, fleet__ks_type_t want) {
  fleet__ks_type_t t = fleet__ks_type(ks, key);
  return t == FLEET__KS_NONE || t == want;
}

/* `a`, then `mid`, then `b`, in scratch space: Lua's a .. mid .. b. */
static int store_cat(fleet__ks_t *ks, fleet_bytes_t a, const char *mid,
                     fleet_bytes_t b, fleet_bytes_t *out) {
  size_t mlen = strlen(mid), len = a.len + mlen + b.len;
  char *p = fleet__ks_scratch(ks, len + 1);

  if (p == NULL)
    return FLEET_ENOMEM;
  if (a.len > 0)
    memcpy(p, a.base, a.len);
  memcpy(p + a.len, mid, mlen);
  if (b.len > 0)
    memcpy(p + a.len + mlen, b.base, b.len);
  p[len] = '\0';
  out->base = p;
  out->len = len;
  return 0;
}

/* The bytes of `b` from offset `from` on: Lua's string.sub(b, from + 1). */
static fleet_bytes_t store_tail(fleet_bytes_t b, size_t from) {
  fleet_bytes_t t;
  t.base = (const char *)b.base + (from < b.len ? from : b.len);
  t.len = from < b.len ? b.len - from : 0;
  return t;
}

static int store_eq(fleet_bytes_t a, fleet_bytes_t b) {
  return a.len == b.len && (a.len == 0 || memcmp(a.base, b.base, a.len) == 0);
}

static int store_is_field(fleet_bytes_t f, const char *name) {
  return store_eq(f, fleet__ks_cstr(name));
}

/* The scripts' clock: TIME as milliseconds. */
static int64_t store_now_ms(const fleet__mem_ctx_t *ctx) {
  return (int64_t)(ctx->now_us / 1000);
}

/* Parses an integer argument; a malformed one makes the script fail on
 * arithmetic with nil, which the Redis adapter reports as FLEET_EBACKEND. */
static int store_arg_int(fleet_bytes_t b, int64_t *out) {
  return fleet__ks_parse_int(b, out) == 0 ? 0 : FLEET_EBACKEND;
}

/* Parses a record's stored TTL as the scripts do: 1 to 12 decimal digits
 * without a leading zero, at most FLEET_STORE_TTL_MAX_MS. Returns 0 or
 * FLEET_EPROTO. */
static int store_ttl_parse(fleet_bytes_t b, int64_t *out) {
  const char *p = b.base;
  int64_t v = 0;
  size_t i;

  if (p == NULL || b.len == 0 || b.len > 12 || p[0] == '0')
    return FLEET_EPROTO;
  for (i = 0; i < b.len; i++) {
    if (p[i] < '0' || p[i] > '9')
      return FLEET_EPROTO;
    v = v * 10 + (p[i] - '0');
  }
  if (v > (int64_t)FLEET_STORE_TTL_MAX_MS)
    return FLEET_EPROTO;
  *out = v;
  return 0;
}

/* A record as the scripts read it with HGETALL. */
typedef struct {
  int64_t nfields;        /* HGETALL items; 0 when there is no record. */
  fleet_bytes_t *idx;     /* Its index keys, from its "i:" fields... */
  fleet_bytes_t *ifields; /* ...and those fields. */
  size_t nidx;
  fleet_bytes_t ttl; /* Its "t" field; {NULL, 0} when absent. */
} store_rec_t;

/* Reads record `rec` of the collection whose base is `base`, and checks
 * that each of its index keys is a sorted set or absent. Returns 0,
 * FLEET_EWRONGTYPE or FLEET_ENOMEM. */
static int store_rec_load(fleet__ks_t *ks, fleet_bytes_t rec,
                          fleet_bytes_t base, store_rec_t *r) {
  fleet_bytes_t *fv, ipre;
  int64_t i;
  int err;

  memset(r, 0, sizeof(*r));
  r->nfields = fleet__ks_hgetall(ks, rec, &fv);
  if (r->nfields <= 0)
    return r->nfields < 0 ? (int)r->nfields : 0;
  err = store_cat(ks, base, "idx:", store_empty, &ipre);
  if (err != 0)
    return err;
  r->idx = fleet__ks_scratch(ks, (size_t)r->nfields * sizeof(*r->idx));
  r->ifields = fleet__ks_scratch(ks, (size_t)r->nfields * sizeof(*r->idx));
  if (r->idx == NULL || r->ifields == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i + 1 < r->nfields; i += 2) {
    fleet_bytes_t f = fv[i];
    if (store_is_field(f, "t")) {
      r->ttl = fv[i + 1];
    } else if (f.len >= 2 && memcmp(f.base, "i:", 2) == 0) {
      err = store_cat(ks, ipre, "", store_tail(f, 2), &r->idx[r->nidx]);
      if (err != 0)
        return err;
      if (!store_is(ks, r->idx[r->nidx], FLEET__KS_ZSET))
        return FLEET_EWRONGTYPE;
      r->ifields[r->nidx++] = f;
    }
  }
  return 0;
}

/* Adds `id` with score `exp` to index set `key` and makes the set expire
 * no earlier than `exp` (now + `ttl`). */
static int store_index_add(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t id,
                           int64_t exp, int64_t ttl) {
  int err = fleet__ks_zadd(ks, key, (double)exp, id);

  if (err < 0)
    return err;
  if (fleet__ks_pttl(ks, key) < ttl) {
    err = fleet__ks_pexpireat(ks, key, exp);
    if (err < 0)
      return err;
  }
  return 0;
}

/* Sets the expiry of record `rec`, its events `ev` and its index entries
 * to `exp` (now + `ttl`), as store_touch.lua and store_append.lua do. */
static int store_refresh(fleet__ks_t *ks, fleet_bytes_t rec, fleet_bytes_t ev,
                         const store_rec_t *r, fleet_bytes_t id, int64_t exp,
                         int64_t ttl) {
  size_t i;
  int err;

  if ((err = fleet__ks_pexpireat(ks, rec, exp)) < 0 ||
      (err = fleet__ks_pexpireat(ks, ev, exp)) < 0)
    return err;
  for (i = 0; i < r->nidx; i++) {
    err = store_index_add(ks, r->idx[i], id, exp, ttl);
    if (err != 0)
      return err;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Records                                                                  */

/* STORE_PUT: store_put.lua. */
int fleet__mem_op_store_put(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                            size_t nkeys, const fleet_bytes_t *args,
                            size_t nargs, fleet__rb_t *out) {
  fleet__ks_t *ks = ctx->ks;
  fleet_bytes_t rec, ev, id, *fields, *dropf;
  size_t i, j, nfields = 4, ndrop = 0, iprelen;
  int64_t ttl, now, exp;
  store_rec_t old;
  int err;

  if (nkeys < 2 || nargs != 4)
    return FLEET_EBACKEND;
  rec = keys[0];
  ev = keys[1];
  id = args[1];
  if ((err = store_arg_int(args[2], &ttl)) != 0)
    return err;
  /* Every check comes before the first write. */
  if ((err = store_rec_load(ks, rec, args[0], &old)) != 0)
    return err;
  fields = fleet__ks_scratch(ks, (4 + 2 * nkeys) * sizeof(*fields));
  dropf = fleet__ks_scratch(ks, (old.nidx + 1) * sizeof(*dropf));
  if (fields == NULL || dropf == NULL)
    return FLEET_ENOMEM;
  iprelen = args[0].len + 4;
  fields[0] = fleet__ks_cstr("v");
  fields[1] = args[3];
  fields[2] = fleet__ks_cstr("t");
  fields[3] = args[2];
  for (i = 2; i < nkeys; i++) {
    if (!store_is(ks, keys[i], FLEET__KS_ZSET))
      return FLEET_EWRONGTYPE;
    err = store_cat(ks, fleet__ks_cstr("i:"), "", store_tail(keys[i], iprelen),
                    &fields[nfields++]);
    if (err != 0)
      return err;
    fields[nfields++] = store_empty;
  }

  now = store_now_ms(ctx);
  exp = now + ttl;
  /* The old version's index entries that the new one lacks. */
  for (i = 0; i < old.nidx; i++) {
    for (j = 2; j < nkeys && !store_eq(old.idx[i], keys[j]); j++)
      ;
    if (j < nkeys)
      continue;
    if ((err = (int)fleet__ks_zrem(ks, old.idx[i], &id, 1)) < 0)
      return err;
    dropf[ndrop++] = old.ifields[i];
  }
  if (ndrop > 0 && (err = (int)fleet__ks_hdel(ks, rec, dropf, ndrop)) < 0)
    return err;
  if ((err = (int)fleet__ks_hset(ks, rec, fields, nfields)) < 0 ||
      (err = fleet__ks_pexpireat(ks, rec, exp)) < 0)
    return err;
  /* A new record starts with no events; an old one keeps its own. */
  err = old.nfields == 0 ? (int)fleet__ks_del(ks, &ev, 1)
                         : fleet__ks_pexpireat(ks, ev, exp);
  if (err < 0)
    return err;
  for (i = 2; i < nkeys; i++) {
    err = (int)fleet__ks_zremrangebyscore(ks, keys[i], -INFINITY,
                                          nextafter((double)now, -INFINITY));
    if (err < 0 || (err = store_index_add(ks, keys[i], id, exp, ttl)) != 0)
      return err;
  }
  return fleet__rb_int(out, old.nfields == 0 ? 1 : 0);
}

/* STORE_GET: store_get.lua. */
int fleet__mem_op_store_get(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                            size_t nkeys, const fleet_bytes_t *args,
                            size_t nargs, fleet__rb_t *out) {
  fleet_bytes_t v;
  int found;

  if (nkeys != 1 || nargs != 0)
    return FLEET_EBACKEND;
  found = fleet__ks_hget(ctx->ks, keys[0], fleet__ks_cstr("v"), &v);
  if (found < 0)
    return found;
  if (found == 0) {
    if (fleet__ks_exists(ctx->ks, keys, 1) == 1)
      return FLEET_EPROTO;
    return fleet__rb_nil(out);
  }
  fleet__rb_array(out, 2);
  fleet__rb_bytes(out, v);
  return fleet__rb_int(out, fleet__ks_pttl(ctx->ks, keys[0]));
}

/* STORE_DEL: store_del.lua. */
int fleet__mem_op_store_del(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                            size_t nkeys, const fleet_bytes_t *args,
                            size_t nargs, fleet__rb_t *out) {
  fleet__ks_t *ks = ctx->ks;
  store_rec_t r;
  size_t i;
  int err;

  if (nkeys != 2 || nargs != 2)
    return FLEET_EBACKEND;
  if ((err = store_rec_load(ks, keys[0], args[0], &r)) != 0)
    return err;
  if (r.nfields == 0)
    return fleet__rb_int(out, 0);
  for (i = 0; i < r.nidx; i++)
    if ((err = (int)fleet__ks_zrem(ks, r.idx[i], &args[1], 1)) < 0)
      return err;
  if ((err = (int)fleet__ks_del(ks, keys, 2)) < 0)
    return err;
  return fleet__rb_int(out, 1);
}

/* STORE_EXISTS: store_exists.lua. */
int fleet__mem_op_store_exists(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                               size_t nkeys, const fleet_bytes_t *args,
                               size_t nargs, fleet__rb_t *out) {
  fleet__ks_type_t t;

  if (nkeys != 1 || nargs != 0)
    return FLEET_EBACKEND;
  t = fleet__ks_type(ctx->ks, keys[0]);
  if (t == FLEET__KS_NONE)
    return fleet__rb_int(out, 0);
  if (t != FLEET__KS_HASH)
    return FLEET_EWRONGTYPE;
  return fleet__rb_int(out, 1);
}

/* STORE_TOUCH: store_touch.lua. */
int fleet__mem_op_store_touch(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                              size_t nkeys, const fleet_bytes_t *args,
                              size_t nargs, fleet__rb_t *out) {
  fleet__ks_t *ks = ctx->ks;
  fleet_bytes_t tv[2];
  int64_t ttl;
  store_rec_t r;
  int err;

  if (nkeys != 2 || nargs != 3)
    return FLEET_EBACKEND;
  if ((err = store_arg_int(args[2], &ttl)) != 0 ||
      (err = store_rec_load(ks, keys[0], args[0], &r)) != 0)
    return err;
  if (r.nfields == 0)
    return fleet__rb_int(out, 0);
  if (ttl == 0) {
    if ((err = store_ttl_parse(r.ttl, &ttl)) != 0)
      return err;
  } else {
    tv[0] = fleet__ks_cstr("t");
    tv[1] = args[2];
    if ((err = (int)fleet__ks_hset(ks, keys[0], tv, 2)) < 0)
      return err;
  }
  err = store_refresh(ks, keys[0], keys[1], &r, args[1],
                      store_now_ms(ctx) + ttl, ttl);
  return err != 0 ? err : fleet__rb_int(out, 1);
}

/* ------------------------------------------------------------------------ */
/* Events                                                                   */

/* STORE_APPEND: store_append.lua. */
int fleet__mem_op_store_append(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                               size_t nkeys, const fleet_bytes_t *args,
                               size_t nargs, fleet__rb_t *out) {
  fleet__ks_t *ks = ctx->ks;
  int64_t cap, ttl, n;
  store_rec_t r;
  int err;

  if (nkeys != 2 || nargs < 3)
    return FLEET_EBACKEND;
  if ((err = store_arg_int(args[2], &cap)) != 0)
    return err;
  if ((err = store_rec_load(ks, keys[0], args[0], &r)) != 0)
    return err;
  if (r.nfields == 0)
    return FLEET_ENOTFOUND;
  if ((err = store_ttl_parse(r.ttl, &ttl)) != 0)
    return err;
  /* The first write: RPUSH fails on an events key of another type. */
  n = fleet__ks_rpush(ks, keys[1], args + 3, nargs - 3);
  if (n < 0)
    return (int)n;
  if (cap > 0 && n > cap) {
    if ((err = fleet__ks_ltrim(ks, keys[1], -cap, -1)) < 0)
      return err;
    n = cap;
  }
  err = store_refresh(ks, keys[0], keys[1], &r, args[1],
                      store_now_ms(ctx) + ttl, ttl);
  return err != 0 ? err : fleet__rb_int(out, n);
}

/* The check that store_read.lua and store_count.lua start with: 0 when
 * `rec` is a record, else the op's error. */
static int store_need_record(fleet__ks_t *ks, fleet_bytes_t rec) {
  fleet__ks_type_t t = fleet__ks_type(ks, rec);

  if (t == FLEET__KS_NONE)
    return FLEET_ENOTFOUND;
  return t == FLEET__KS_HASH ? 0 : FLEET_EWRONGTYPE;
}

/* STORE_READ: store_read.lua. */
int fleet__mem_op_store_read(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                             size_t nkeys, const fleet_bytes_t *args,
                             size_t nargs, fleet__rb_t *out) {
  fleet_bytes_t *ev;
  int64_t offset, limit, n, i;
  int err;

  if (nkeys != 2 || nargs != 2)
    return FLEET_EBACKEND;
  if ((err = store_need_record(ctx->ks, keys[0])) != 0)
    return err;
  if ((err = store_arg_int(args[0], &offset)) != 0 ||
      (err = store_arg_int(args[1], &limit)) != 0)
    return err;
  n = fleet__ks_lrange(ctx->ks, keys[1], offset, offset + limit - 1, &ev);
  if (n < 0)
    return (int)n;
  fleet__rb_array(out, (size_t)n);
  for (i = 0; i < n; i++)
    fleet__rb_bytes(out, ev[i]);
  return fleet__rb_check(out);
}

/* STORE_COUNT: store_count.lua. */
int fleet__mem_op_store_count(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                              size_t nkeys, const fleet_bytes_t *args,
                              size_t nargs, fleet__rb_t *out) {
  int64_t n;
  int err;

  if (nkeys != 2 || nargs != 0)
    return FLEET_EBACKEND;
  if ((err = store_need_record(ctx->ks, keys[0])) != 0)
    return err;
  n = fleet__ks_llen(ctx->ks, keys[1]);
  return n < 0 ? (int)n : fleet__rb_int(out, n);
}

/* ------------------------------------------------------------------------ */
/* Listing                                                                  */

/* Whether member `a` sorts at or before `b` among equal scores: by bytes,
 * a prefix first, as Redis orders a sorted set. */
static int store_member_le(fleet_bytes_t a, fleet_bytes_t b) {
  size_t min = a.len < b.len ? a.len : b.len;
  int c = min > 0 ? memcmp(a.base, b.base, min) : 0;
  return c < 0 || (c == 0 && a.len <= b.len);
}

/* The number of entries of `idx` that sort at or before (score, id): the
 * rank store_list.lua starts the page at. */
static int64_t store_list_start(fleet__ks_t *ks, fleet_bytes_t idx,
                                double score, fleet_bytes_t id) {
  fleet__ks_zitem_t *tied;
  int64_t below, n, i, start;

  below = fleet__ks_zcount(ks, idx, -INFINITY, nextafter(score, -INFINITY));
  if (below < 0)
    return below;
  n = fleet__ks_zrangebyscore(ks, idx, score, score, 0, -1, &tied);
  if (n < 0)
    return n;
  start = below;
  for (i = 0; i < n && store_member_le(tied[i].member, id); i++)
    start++;
  return start;
}

/* STORE_LIST: store_list.lua. */
int fleet__mem_op_store_list(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                             size_t nkeys, const fleet_bytes_t *args,
                             size_t nargs, fleet__rb_t *out) {
  fleet__ks_t *ks = ctx->ks;
  fleet__ks_zitem_t *got;
  fleet_bytes_t idx, rec, v, *items;
  int64_t limit, now, start = 0, n, i, taken;
  size_t nitems = 0;
  double score;
  int err;

  if (nkeys != 1 || nargs != 4)
    return FLEET_EBACKEND;
  idx = keys[0];
  if ((err = store_arg_int(args[1], &limit)) != 0)
    return err;
  now = store_now_ms(ctx);
  n = fleet__ks_zremrangebyscore(ks, idx, -INFINITY,
                                 nextafter((double)now, -INFINITY));
  if (n < 0)
    return (int)n;
  if (args[2].len > 0) {
    if (fleet__ks_parse_double(args[2], &score) != 0)
      return FLEET_EBACKEND;
    start = store_list_start(ks, idx, score, args[3]);
    if (start < 0)
      return (int)start;
  }
  /* One entry more than the page tells whether more follow. */
  n = fleet__ks_zrange(ks, idx, start, start + limit, &got);
  if (n < 0)
    return (int)n;
  taken = n < limit ? n : limit;
  items = fleet__ks_scratch(ks, (size_t)(2 * taken + 1) * sizeof(*items));
  if (items == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < taken; i++) {
    if ((err = store_cat(ks, args[0], "rec:", got[i].member, &rec)) != 0)
      return err;
    err = fleet__ks_hget(ks, rec, fleet__ks_cstr("v"), &v);
    if (err < 0)
      return err;
    if (err == 1) {
      items[nitems++] = got[i].member;
      items[nitems++] = v;
    } else if ((err = (int)fleet__ks_zrem(ks, idx, &got[i].member, 1)) < 0) {
      return err;
    }
  }
  fleet__rb_array(out, 3);
  if (n > limit) {
    fleet__rb_int(out, (int64_t)floor(got[limit - 1].score));
    fleet__rb_bytes(out, got[limit - 1].member);
  } else {
    fleet__rb_int(out, -1);
    fleet__rb_bytes(out, store_empty);
  }
  fleet__rb_array(out, nitems);
  for (i = 0; i < (int64_t)nitems; i++)
    fleet__rb_bytes(out, items[i]);
  return fleet__rb_check(out);
}

/* ------------------------------------------------------------------------ */
/* SCAN and UNLINK                                                          */

/* Matches the one pattern element at `p` (not '*') against byte `c`, as
 * Redis's glob does: '?', a class "[...]" (with '^' negation, "a-z"
 * ranges and '\' escapes; unclosed, it runs to the end of the pattern), an
 * escaped byte "\x", or a byte. Sets `*adv` to the element's length and
 * returns whether it matches. */
static int store_glob_one(const unsigned char *p, size_t plen, unsigned char c,
                          size_t *adv) {
  size_t i = 1;
  int neg = 0, hit = 0;

  switch (p[0]) {
    case '?':
      *adv = 1;
      return 1;
    case '\\':
      if (plen >= 2) {
        *adv = 2;
        return p[1] == c;
      }
      *adv = 1;
      return c == '\\';
    case '[':
      if (i < plen && p[i] == '^') {
        neg = 1;
        i++;
      }
      while (i < plen && p[i] != ']') {
        if (p[i] == '\\' && i + 1 < plen) {
          hit |= p[i + 1] == c;
          i += 2;
        } else if (i + 2 < plen && p[i + 1] == '-') {
          unsigned char lo = p[i], hi = p[i + 2];
          if (lo > hi) {
            unsigned char tmp = lo;
            lo = hi;
            hi = tmp;
          }
          hit |= c >= lo && c <= hi;
          i += 3;
        } else {
          hit |= p[i] == c;
          i++;
        }
      }
      *adv = i < plen ? i + 1 : plen;
      return hit != neg;
    default:
      *adv = 1;
      return p[0] == c;
  }
}

/* Whether `s` matches the glob `p`. The last '*' met is the only
 * backtracking point, so the time is O(|p| * |s|) at worst. */
static int store_glob(const unsigned char *p, size_t plen,
                      const unsigned char *s, size_t slen) {
  size_t pi = 0, si = 0, star = SIZE_MAX, star_s = 0, adv;

  while (si < slen) {
    if (pi < plen && p[pi] == '*') {
      star = ++pi;
      star_s = si;
    } else if (pi < plen && store_glob_one(p + pi, plen - pi, s[si], &adv)) {
      pi += adv;
      si++;
    } else if (star != SIZE_MAX) {
      pi = star;
      si = ++star_s;
    } else {
      return 0;
    }
  }
  while (pi < plen && p[pi] == '*')
    pi++;
  return pi == plen;
}

/* The literal start of glob `p` (up to its first '*', '?' or '['), with
 * escapes resolved, in scratch space: every match starts with it. */
static int store_glob_prefix(fleet__ks_t *ks, fleet_bytes_t p,
                             fleet_bytes_t *out) {
  const char *s = p.base;
  char *buf = fleet__ks_scratch(ks, p.len + 1);
  size_t i, n = 0;

  if (buf == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < p.len; i++) {
    if (s[i] == '*' || s[i] == '?' || s[i] == '[')
      break;
    if (s[i] == '\\' && i + 1 < p.len)
      i++;
    buf[n++] = s[i];
  }
  out->base = buf;
  out->len = n;
  return 0;
}

/* Compares an argument with an upper-case option name, ignoring case. */
static int store_is_option(fleet_bytes_t b, const char *name) {
  const char *s = b.base;
  size_t i, len = strlen(name);

  if (b.len != len)
    return 0;
  for (i = 0; i < len; i++)
    if ((s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]) != name[i])
      return 0;
  return 1;
}

/* Parses a SCAN cursor: an unsigned 64-bit decimal. */
static int store_parse_cursor(fleet_bytes_t b, uint64_t *out) {
  const char *s = b.base;
  uint64_t v = 0;
  size_t i;

  if (b.len == 0 || b.len > 20)
    return FLEET_EBACKEND;
  for (i = 0; i < b.len; i++) {
    unsigned d = (unsigned)(s[i] - '0');
    if (d > 9 || v > (UINT64_MAX - d) / 10)
      return FLEET_EBACKEND;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* STORE_SCAN: SCAN cursor [MATCH pattern] [COUNT count]. Reply
 * {cursor, {key, ...}}, the cursor a decimal string. */
int fleet__mem_op_store_scan(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                             size_t nkeys, const fleet_bytes_t *args,
                             size_t nargs, fleet__rb_t *out) {
  fleet_bytes_t pattern = fleet__ks_cstr("*"), prefix, *found;
  uint64_t cursor, next;
  int64_t count = 10, n, i, m = 0;
  char num[24];
  size_t j;
  int err;

  if (nkeys != 0 || nargs == 0 || nargs % 2 == 0)
    return FLEET_EBACKEND;
  if (store_parse_cursor(args[0], &cursor) != 0)
    return FLEET_EBACKEND;
  for (j = 1; j < nargs; j += 2) {
    if (store_is_option(args[j], "MATCH")) {
      pattern = args[j + 1];
    } else if (store_is_option(args[j], "COUNT")) {
      if (fleet__ks_parse_int(args[j + 1], &count) != 0 || count < 1)
        return FLEET_EBACKEND;
    } else {
      return FLEET_EBACKEND;
    }
  }
  if ((err = store_glob_prefix(ctx->ks, pattern, &prefix)) != 0)
    return err;
  n = fleet__ks_scan(ctx->ks, cursor, prefix, (size_t)count, &next, &found);
  if (n < 0)
    return (int)n;
  for (i = 0; i < n; i++)
    if (store_glob(pattern.base, pattern.len, found[i].base, found[i].len))
      found[m++] = found[i];
  fleet__rb_array(out, 2);
  snprintf(num, sizeof(num), "%llu", (unsigned long long)next);
  fleet__rb_str(out, num, strlen(num));
  fleet__rb_array(out, (size_t)m);
  for (i = 0; i < m; i++)
    fleet__rb_bytes(out, found[i]);
  return fleet__rb_check(out);
}

/* STORE_UNLINK: UNLINK key [key ...]. Reply: the number deleted. */
int fleet__mem_op_store_unlink(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                               size_t nkeys, const fleet_bytes_t *args,
                               size_t nargs, fleet__rb_t *out) {
  int64_t n;

  if (nkeys == 0 || nargs != 0)
    return FLEET_EBACKEND;
  n = fleet__ks_del(ctx->ks, keys, nkeys);
  return n < 0 ? (int)n : fleet__rb_int(out, n);
}
