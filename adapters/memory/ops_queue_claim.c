/* ops_queue_claim.c -- the memory twins of the queue's claim scripts
 * (queue_claim, queue_refresh, queue_complete, queue_release, queue_fail,
 * queue_recover in adapters/redis/lua/), each making the same keyspace
 * calls, in the same order, as its script. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "memory/ops_queue_int.h"

#define MQ_NIL ((fleet_bytes_t){NULL, 0})

static int mq_eq(fleet_bytes_t a, fleet_bytes_t b) {
  return a.base != NULL && b.base != NULL && a.len == b.len &&
         memcmp(a.base, b.base, a.len) == 0;
}

/* HMGET of the job `id`'s fields `names` (n at most 8). */
static int64_t mq_job_fields(fleet__mq_t *q, fleet_bytes_t id,
                             const char *const *names, size_t n,
                             fleet_bytes_t *key, fleet_bytes_t **out) {
  fleet_bytes_t fields[8];
  size_t i;
  int rc;

  for (i = 0; i < n; i++)
    fields[i] = fleet__ks_cstr(names[i]);
  if ((rc = fleet__mq_job_key(q, id, key)) != 0)
    return rc;
  return fleet__ks_hmget(q->ks, *key, fields, n, out);
}

/* HMGET of the claims hash for `n` ids. */
static int64_t mq_claims_of(fleet__mq_t *q, const fleet_bytes_t *ids, size_t n,
                            fleet_bytes_t *claims, fleet_bytes_t **held) {
  int rc = fleet__mq_key(q, ":jobs:claims", MQ_NIL, claims);
  return rc != 0 ? rc : fleet__ks_hmget(q->ks, *claims, ids, n, held);
}

/* The token of a claims value, as the scripts' '^(%d+):' reads it: 1 and
 * `*token` set, or 0. */
static int mq_claim_token(fleet_bytes_t v, fleet_bytes_t *token) {
  const char *p = v.base;
  size_t i = 0;

  if (p == NULL)
    return 0;
  while (i < v.len && p[i] >= '0' && p[i] <= '9')
    i++;
  if (i == 0 || i == v.len || p[i] != ':')
    return 0;
  token->base = p;
  token->len = i;
  return 1;
}

/* The index of `id` among the first `n` of `ids`, or `n`. */
static size_t mq_find(const fleet_bytes_t *ids, size_t n, fleet_bytes_t id) {
  size_t i;
  for (i = 0; i < n; i++)
    if (mq_eq(ids[i], id))
      break;
  return i;
}

/* "<a>:<b>" into scratch space. */
static int mq_pair(fleet__mq_t *q, fleet_bytes_t a, fleet_bytes_t b,
                   fleet_bytes_t *out) {
  char *p = fleet__ks_scratch(q->ks, a.len + b.len + 2);

  if (p == NULL)
    return FLEET_ENOMEM;
  memcpy(p, a.base, a.len);
  p[a.len] = ':';
  memcpy(p + a.len + 1, b.base, b.len);
  out->base = p;
  out->len = a.len + b.len + 1;
  return 0;
}

/* SADD (add 1) or SREM (add 0) `id` to the set of its type. */
static int mq_by_type(fleet__mq_t *q, fleet_bytes_t type, fleet_bytes_t id,
                      int add) {
  fleet_bytes_t k;
  int64_t rc = fleet__mq_key(q, ":jobs:by_type:", type, &k);

  if (rc == 0)
    rc = add ? fleet__ks_sadd(q->ks, k, &id, 1)
             : fleet__ks_srem(q->ks, k, &id, 1);
  return rc < 0 ? (int)rc : 0;
}

/* ------------------------------------------------------------------------ */
/* QUEUE_CLAIM                                                              */

/* One claimed job, kept until the reply is written. */
typedef struct {
  fleet_bytes_t id, type, payload;
  int64_t attempt, max_attempts, token;
} mq_claimed_t;

/* Whether the record of job `key` exists: 1, 0 or an error. */
static int64_t mq_job_exists(fleet__mq_t *q, fleet_bytes_t key) {
  return fleet__ks_exists(q->ks, &key, 1);
}

/* Moves up to 1000 due delayed jobs to pending; sets `*was_empty` to
 * whether pending was empty before and `*promoted` to how many moved. As
 * the script, it reads every job before it writes: a record without a
 * readable order stays where it is and the op is FLEET_EPROTO. */
static int mq_promote(fleet__mq_t *q, fleet_bytes_t pending,
                      fleet_bytes_t delayed, int *was_empty, int *promoted) {
  static const char *const order_field[] = {"order"};
  fleet__ks_zitem_t *due;
  fleet_bytes_t *members, key, *f, state[2];
  int64_t n, i, *orders, rc;

  *was_empty = 1;
  *promoted = 0;
  n = fleet__ks_zrangebyscore(q->ks, delayed, -INFINITY, (double)q->now, 0,
                              1000, &due);
  if (n <= 0)
    return (int)n;
  members = fleet__ks_scratch(q->ks, (size_t)n * sizeof(*members));
  orders = fleet__ks_scratch(q->ks, (size_t)n * sizeof(*orders));
  if (members == NULL || orders == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < n; i++) {
    members[i] = due[i].member;
    orders[i] = -1; /* no record: dropped from delayed */
    if ((rc = mq_job_fields(q, due[i].member, order_field, 1, &key, &f)) < 0)
      return (int)rc;
    if (f[0].base == NULL) {
      if ((rc = mq_job_exists(q, key)) != 0)
        return rc < 0 ? (int)rc : FLEET_EPROTO;
      continue;
    }
    if ((rc = fleet__mq_int(f[0], &orders[i])) != 0)
      return (int)rc;
  }
  if ((rc = fleet__ks_zcard(q->ks, pending)) < 0)
    return (int)rc;
  *was_empty = rc == 0;
  for (i = 0; i < n; i++) {
    if (orders[i] < 0)
      continue;
    if ((rc = fleet__mq_job_key(q, due[i].member, &key)) != 0 ||
        (rc = fleet__ks_zadd(q->ks, pending, (double)orders[i],
                             due[i].member)) < 0)
      return (int)rc;
    state[0] = fleet__ks_cstr("state");
    state[1] = fleet__ks_cstr("pending");
    if ((rc = fleet__ks_hset(q->ks, key, state, 2)) < 0)
      return (int)rc;
    (*promoted)++;
  }
  rc = fleet__ks_zrem(q->ks, delayed, members, (size_t)n);
  return rc < 0 ? (int)rc : 0;
}

/* Records the claims of `c[0..n)`: the claims hash, the running zset, and
 * off their types' sets. */
static int mq_record_claims(fleet__mq_t *q, const mq_claimed_t *c, int64_t n,
                            int64_t deadline) {
  fleet_bytes_t claims, running, *fv, tok, att;
  int64_t i, rc;

  fv = fleet__ks_scratch(q->ks, (size_t)(2 * n) * sizeof(*fv));
  if (fv == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < n; i++) {
    fv[2 * i] = c[i].id;
    if ((rc = fleet__mq_istr(q, c[i].token, &tok)) != 0 ||
        (rc = fleet__mq_istr(q, c[i].attempt, &att)) != 0 ||
        (rc = mq_pair(q, tok, att, &fv[2 * i + 1])) != 0)
      return (int)rc;
  }
  if ((rc = fleet__mq_key(q, ":jobs:claims", MQ_NIL, &claims)) != 0 ||
      (rc = fleet__ks_hset(q->ks, claims, fv, (size_t)(2 * n))) < 0 ||
      (rc = fleet__mq_key(q, ":jobs:running", MQ_NIL, &running)) != 0)
    return (int)rc;
  for (i = 0; i < n; i++)
    if ((rc = fleet__ks_zadd(q->ks, running, (double)deadline, c[i].id)) < 0)
      return (int)rc;
  for (i = 0; i < n; i++)
    if ((rc = mq_by_type(q, c[i].type, c[i].id, 0)) != 0)
      return (int)rc;
  return 0;
}

/* Takes the first `n` pending jobs and claims each one that still has a
 * record; `*claimed` gets them and `*count` how many. */
static int mq_pop_claims(fleet__mq_t *q, fleet_bytes_t pending, int64_t n,
                         int64_t deadline, mq_claimed_t **claimed,
                         int64_t *count) {
  static const char *const names[] = {"type", "payload", "attempts",
                                      "max_attempts"};
  fleet__ks_zitem_t *popped;
  fleet_bytes_t fence, key, *f, *members;
  mq_claimed_t *c;
  int64_t k, i, token, rc;

  *count = 0;
  /* ZRANGE 0 n-1, then ZREMRANGEBYRANK 0 k-1. */
  k = fleet__ks_zrange(q->ks, pending, 0, n - 1, &popped);
  if (k <= 0)
    return (int)k;
  members = fleet__ks_scratch(q->ks, (size_t)k * sizeof(*members));
  if (members == NULL)
    return FLEET_ENOMEM;
  /* Every job is read and checked before anything is written. */
  for (i = 0; i < k; i++) {
    int64_t v;
    members[i] = popped[i].member;
    if ((rc = mq_job_fields(q, popped[i].member, names, 4, &key, &f)) < 0)
      return (int)rc;
    if (f[0].base == NULL) {
      if ((rc = mq_job_exists(q, key)) != 0)
        return rc < 0 ? (int)rc : FLEET_EPROTO;
      continue;
    }
    if ((rc = fleet__mq_int(f[2], &v)) != 0 ||
        (rc = fleet__mq_int(f[3], &v)) != 0)
      return (int)rc;
  }
  if ((rc = fleet__ks_zrem(q->ks, pending, members, (size_t)k)) < 0)
    return (int)rc;
  if ((rc = fleet__mq_key(q, ":fence", MQ_NIL, &fence)) != 0 ||
      (rc = fleet__ks_incrby(q->ks, fence, k, &token)) != 0)
    return (int)rc;
  token -= k;
  *claimed = c = fleet__ks_scratch(q->ks, (size_t)k * sizeof(*c));
  if (c == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < k; i++) {
    if ((rc = mq_job_fields(q, popped[i].member, names, 4, &key, &f)) < 0)
      return (int)rc;
    if (f[0].base == NULL)
      continue;
    c->id = popped[i].member;
    c->type = f[0];
    c->payload = f[1].base != NULL ? f[1] : fleet__ks_cstr("");
    c->token = ++token;
    if ((rc = fleet__mq_int(f[2], &c->attempt)) != 0 ||
        (rc = fleet__mq_int(f[3], &c->max_attempts)) != 0)
      return (int)rc;
    c->attempt++;
    c++;
  }
  *count = c - *claimed;
  return *count > 0 ? mq_record_claims(q, *claimed, *count, deadline) : 0;
}

int fleet__mem_op_queue_claim(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                              size_t nkeys, const fleet_bytes_t *args,
                              size_t nargs, fleet__rb_t *out) {
  fleet_bytes_t pending, delayed;
  mq_claimed_t *claimed = NULL;
  int64_t n, ttl, count = 0, left, i, rc;
  int was_empty, promoted;
  double next;
  fleet__mq_t q;

  if ((rc = fleet__mq_begin(&q, ctx, keys, nkeys)) != 0)
    return (int)rc;
  if (nargs != 2 || fleet__mq_arg(args[0], &n) != 0 ||
      fleet__mq_arg(args[1], &ttl) != 0)
    return FLEET_EBACKEND;
  if ((rc = fleet__mq_key(&q, ":jobs:pending", MQ_NIL, &pending)) != 0 ||
      (rc = fleet__mq_key(&q, ":jobs:delayed", MQ_NIL, &delayed)) != 0 ||
      (rc = mq_promote(&q, pending, delayed, &was_empty, &promoted)) != 0)
    return (int)rc;
  if (n > 0 &&
      (rc = mq_pop_claims(&q, pending, n, q.now + ttl, &claimed, &count)) != 0)
    return (int)rc;
  if ((left = fleet__ks_zcard(q.ks, pending)) < 0)
    return (int)left;
  if ((rc = fleet__mq_first_score(&q, delayed, &next)) < 0)
    return (int)rc;
  if (rc == 0)
    next = -1;
  if (promoted > 0 && was_empty && left > 0 && (rc = fleet__mq_wake(&q)) != 0)
    return (int)rc;
  fleet__rb_array(out, (size_t)(4 + 6 * count));
  fleet__rb_int(out, q.now);
  fleet__rb_int(out, q.now + ttl);
  fleet__rb_int(out, (int64_t)next);
  fleet__rb_int(out, left);
  for (i = 0; i < count; i++) {
    fleet__rb_bytes(out, claimed[i].id);
    fleet__rb_bytes(out, claimed[i].type);
    fleet__rb_bytes(out, claimed[i].payload);
    fleet__rb_int(out, claimed[i].attempt);
    fleet__rb_int(out, claimed[i].max_attempts);
    fleet__rb_int(out, claimed[i].token);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* QUEUE_REFRESH                                                            */

/* The ids of a batch op's (id, token) pairs starting at `args`, in scratch
 * space. */
static fleet_bytes_t *mq_batch_ids(fleet__mq_t *q, const fleet_bytes_t *args,
                                   size_t n) {
  fleet_bytes_t *ids = fleet__ks_scratch(q->ks, (n + 1) * sizeof(*ids));
  size_t i;

  if (ids != NULL)
    for (i = 0; i < n; i++)
      ids[i] = args[2 * i];
  return ids;
}

int fleet__mem_op_queue_refresh(fleet__mem_ctx_t *ctx,
                                const fleet_bytes_t *keys, size_t nkeys,
                                const fleet_bytes_t *args, size_t nargs,
                                fleet__rb_t *out) {
  fleet_bytes_t claims, running, *ids, *held, tok;
  int64_t ttl, rc;
  size_t i, n;
  char *ok;
  fleet__mq_t q;

  if ((rc = fleet__mq_begin(&q, ctx, keys, nkeys)) != 0)
    return (int)rc;
  if (nargs < 1 || fleet__mq_arg(args[0], &ttl) != 0)
    return FLEET_EBACKEND;
  n = (nargs - 1) / 2;
  ids = mq_batch_ids(&q, args + 1, n);
  ok = fleet__ks_scratch(q.ks, n + 1);
  if (ids == NULL || ok == NULL)
    return FLEET_ENOMEM;
  if (n > 0) {
    if ((rc = mq_claims_of(&q, ids, n, &claims, &held)) < 0 ||
        (rc = fleet__mq_key(&q, ":jobs:running", MQ_NIL, &running)) != 0)
      return (int)rc;
    for (i = 0; i < n; i++)
      ok[i] = mq_claim_token(held[i], &tok) && mq_eq(tok, args[2 + 2 * i]);
    for (i = 0; i < n; i++)
      if (ok[i] && (rc = fleet__ks_zadd(q.ks, running, (double)(q.now + ttl),
                                        ids[i])) < 0)
        return (int)rc;
  }
  fleet__rb_array(out, 2 + n);
  fleet__rb_int(out, q.now);
  fleet__rb_int(out, q.now + ttl);
  for (i = 0; i < n; i++)
    fleet__rb_int(out, ok[i]);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* QUEUE_COMPLETE                                                           */

/* A claim not held with `tok` and not held by another: `*res` gets 2 when
 * that claim ended (the job's token is `tok`, or its completion has it), 0
 * when stale. `f_token` is the job's token field. Returns 0 or a keyspace
 * error. */
static int mq_ended(fleet__mq_t *q, fleet_bytes_t id, fleet_bytes_t f_token,
                    fleet_bytes_t tok, signed char *res) {
  fleet_bytes_t k, d, dtok;
  int64_t rc;

  if ((rc = fleet__mq_key(q, ":jobs:done", MQ_NIL, &k)) != 0 ||
      (rc = fleet__ks_hget(q->ks, k, id, &d)) < 0)
    return (int)rc;
  *res = mq_eq(f_token, tok) ||
                 (rc == 1 && fleet__mq_done_token(d, &dtok) && mq_eq(dtok, tok))
             ? 2
             : 0;
  return 0;
}

/* The same for a claim of a batch op: `*res` also gets -1 when the job does
 * not exist. */
static int mq_not_held(fleet__mq_t *q, fleet_bytes_t id, fleet_bytes_t tok,
                       signed char *res) {
  static const char *const names[] = {"state", "token"};
  fleet_bytes_t key, *f;
  int64_t rc = mq_job_fields(q, id, names, 2, &key, &f);

  if (rc < 0)
    return (int)rc;
  if ((rc = mq_ended(q, id, f[1], tok, res)) != 0)
    return (int)rc;
  if (f[0].base == NULL)
    *res = -1;
  return 0;
}

/* Removes `n` settled claims from the claims hash and the running zset. */
static int mq_unclaim(fleet__mq_t *q, const fleet_bytes_t *ids, size_t n) {
  fleet_bytes_t k;
  int64_t rc;

  if ((rc = fleet__mq_key(q, ":jobs:claims", MQ_NIL, &k)) != 0 ||
      (rc = fleet__ks_hdel(q->ks, k, ids, n)) < 0 ||
      (rc = fleet__mq_key(q, ":jobs:running", MQ_NIL, &k)) != 0 ||
      (rc = fleet__ks_zrem(q->ks, k, ids, n)) < 0)
    return (int)rc;
  return 0;
}

/* HINCRBY stats `field` by `n`. */
static int mq_count(fleet__mq_t *q, const char *field, int64_t n) {
  fleet_bytes_t k;
  int64_t unused;
  int rc = fleet__mq_key(q, ":stats", MQ_NIL, &k);

  return rc != 0
             ? rc
             : fleet__ks_hincrby(q->ks, k, fleet__ks_cstr(field), n, &unused);
}

int fleet__mem_op_queue_complete(fleet__mem_ctx_t *ctx,
                                 const fleet_bytes_t *keys, size_t nkeys,
                                 const fleet_bytes_t *args, size_t nargs,
                                 fleet__rb_t *out) {
  fleet_bytes_t claims, k, *ids, *held, *done, *done_tok, *marks, *list, now_s,
      tok, att, mark;
  int64_t keep, keep_s, rc;
  size_t i, n, nd = 0;
  signed char *res;
  fleet__mq_t q;

  if ((rc = fleet__mq_begin(&q, ctx, keys, nkeys)) != 0)
    return (int)rc;
  if (nargs < 2 || fleet__mq_arg(args[0], &keep) != 0 ||
      fleet__mq_arg(args[1], &keep_s) != 0)
    return FLEET_EBACKEND;
  n = (nargs - 2) / 2;
  if (n == 0) {
    fleet__rb_array(out, 1);
    return fleet__rb_int(out, q.now);
  }
  ids = mq_batch_ids(&q, args + 2, n);
  res = fleet__ks_scratch(q.ks, n);
  done = fleet__ks_scratch(q.ks, n * sizeof(*done));
  done_tok = fleet__ks_scratch(q.ks, n * sizeof(*done_tok));
  marks = fleet__ks_scratch(q.ks, 2 * n * sizeof(*marks));
  list = fleet__ks_scratch(q.ks, n * sizeof(*list));
  if (ids == NULL || res == NULL || done == NULL || done_tok == NULL ||
      marks == NULL || list == NULL)
    return FLEET_ENOMEM;
  if ((rc = mq_claims_of(&q, ids, n, &claims, &held)) < 0 ||
      (rc = fleet__mq_istr(&q, q.now, &now_s)) != 0)
    return (int)rc;
  for (i = 0; i < n; i++) {
    fleet_bytes_t want = args[3 + 2 * i];
    size_t j = mq_find(done, nd, ids[i]);
    if (j < nd) {
      /* Completed a moment ago by this batch. */
      res[i] = mq_eq(done_tok[j], want) ? 2 : 0;
    } else if (fleet__mq_claim(held[i], &tok, &att) && mq_eq(tok, want)) {
      /* Marked "<now>:<token>:<attempt>", listed "<now>:<id>". */
      if ((rc = mq_pair(&q, now_s, want, &mark)) != 0 ||
          (rc = mq_pair(&q, mark, att, &marks[2 * nd + 1])) != 0 ||
          (rc = mq_pair(&q, now_s, ids[i], &list[nd])) != 0)
        return (int)rc;
      marks[2 * nd] = ids[i];
      done_tok[nd] = want;
      done[nd++] = ids[i];
      res[i] = 1;
    } else if (held[i].base != NULL) {
      res[i] = 0; /* held by another claim */
    } else if ((rc = mq_not_held(&q, ids[i], want, &res[i])) != 0) {
      return (int)rc;
    }
  }
  if (nd > 0) {
    if ((rc = fleet__mq_key(&q, ":jobs:done", MQ_NIL, &k)) != 0 ||
        (rc = fleet__ks_hset(q.ks, k, marks, 2 * nd)) < 0 ||
        (rc = mq_unclaim(&q, done, nd)) != 0 ||
        (rc = fleet__mq_key(&q, ":jobs:completed", MQ_NIL, &k)) != 0 ||
        (rc = fleet__ks_rpush(q.ks, k, list, nd)) < 0 ||
        (rc = mq_count(&q, "completed", (int64_t)nd)) != 0 ||
        (rc = fleet__mq_trim(&q, ":jobs:completed", keep, keep_s,
                             ":jobs:done")) != 0)
      return (int)rc;
  }
  fleet__rb_array(out, 1 + n);
  fleet__rb_int(out, q.now);
  for (i = 0; i < n; i++)
    fleet__rb_int(out, res[i]);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* QUEUE_RELEASE                                                            */

int fleet__mem_op_queue_release(fleet__mem_ctx_t *ctx,
                                const fleet_bytes_t *keys, size_t nkeys,
                                const fleet_bytes_t *args, size_t nargs,
                                fleet__rb_t *out) {
  static const char *const names[] = {"order", "type", "token"};
  static const char *const set[] = {"state", "token"};
  fleet_bytes_t pending, claims, key, *ids, *held, *f, *released, *rel_tok,
      v[2], tok;
  int64_t order, rc;
  size_t i, n, nrel = 0;
  signed char *res;
  int was_empty;
  fleet__mq_t q;

  if ((rc = fleet__mq_begin(&q, ctx, keys, nkeys)) != 0)
    return (int)rc;
  n = nargs / 2;
  if (n == 0) {
    fleet__rb_array(out, 1);
    return fleet__rb_int(out, q.now);
  }
  ids = mq_batch_ids(&q, args, n);
  res = fleet__ks_scratch(q.ks, n);
  released = fleet__ks_scratch(q.ks, n * sizeof(*released));
  rel_tok = fleet__ks_scratch(q.ks, n * sizeof(*rel_tok));
  if (ids == NULL || res == NULL || released == NULL || rel_tok == NULL)
    return FLEET_ENOMEM;
  if ((rc = fleet__mq_key(&q, ":jobs:pending", MQ_NIL, &pending)) != 0 ||
      (rc = fleet__ks_zcard(q.ks, pending)) < 0)
    return (int)rc;
  was_empty = rc == 0;
  if ((rc = mq_claims_of(&q, ids, n, &claims, &held)) < 0)
    return (int)rc;
  for (i = 0; i < n; i++) {
    fleet_bytes_t want = args[2 * i + 1];
    size_t k = mq_find(released, nrel, ids[i]);
    if ((rc = mq_job_fields(&q, ids[i], names, 3, &key, &f)) < 0)
      return (int)rc;
    if (k < nrel) {
      /* Released a moment ago by this batch. */
      res[i] = mq_eq(rel_tok[k], want) ? 2 : 0;
    } else if (f[1].base == NULL) {
      res[i] = -1;
    } else if (mq_claim_token(held[i], &tok) && mq_eq(tok, want)) {
      v[0] = fleet__ks_cstr("pending");
      v[1] = want;
      if ((rc = fleet__mq_hset(&q, key, set, v, 2)) < 0 ||
          (rc = fleet__mq_int(f[0], &order)) != 0 ||
          (rc = fleet__ks_zadd(q.ks, pending, (double)order, ids[i])) < 0 ||
          (rc = mq_by_type(&q, f[1], ids[i], 1)) != 0)
        return (int)rc;
      rel_tok[nrel] = want;
      released[nrel++] = ids[i];
      res[i] = 1;
    } else if (held[i].base != NULL) {
      res[i] = 0; /* held by another claim */
    } else if ((rc = mq_ended(&q, ids[i], f[2], want, &res[i])) != 0) {
      return (int)rc;
    }
  }
  if (nrel > 0) {
    if ((rc = mq_unclaim(&q, released, nrel)) != 0)
      return (int)rc;
    if (was_empty && (rc = fleet__mq_wake(&q)) != 0)
      return (int)rc;
  }
  fleet__rb_array(out, 1 + n);
  fleet__rb_int(out, q.now);
  for (i = 0; i < n; i++)
    fleet__rb_int(out, res[i]);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* QUEUE_FAIL                                                               */

/* Parses a backoff "<kind>:<base>:<max>:<jitter>" as queue_fail.lua does;
 * `*exp` is 1 for "exp", 0 for "fixed". Returns 0 or FLEET_EPROTO. */
static int mq_backoff_parse(fleet_bytes_t b, int *exp, int64_t num[3]) {
  const char *p = b.base, *end = p + b.len, *start;
  int i;

  if (p == NULL)
    return FLEET_EPROTO;
  for (start = p; p < end && *p != ':'; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
      return FLEET_EPROTO;
  if (p - start == 5 && memcmp(start, "fixed", 5) == 0)
    *exp = 0;
  else if (p - start == 3 && memcmp(start, "exp", 3) == 0)
    *exp = 1;
  else
    return FLEET_EPROTO;
  for (i = 0; i < 3; i++) {
    if (p == end || *p != ':')
      return FLEET_EPROTO;
    start = ++p;
    num[i] = 0;
    for (; p < end && *p >= '0' && *p <= '9' && p - start < 18; p++)
      num[i] = num[i] * 10 + (*p - '0');
    if (p == start || (p < end && *p >= '0' && *p <= '9'))
      return FLEET_EPROTO;
  }
  return p == end ? 0 : FLEET_EPROTO;
}

/* The retry delay of queue_fail.lua for the attempt that just failed. */
static int64_t mq_backoff_delay(int exp, const int64_t num[3], int64_t attempt,
                                int64_t rnd) {
  int64_t delay = num[0] < 1 ? 1 : num[0];
  int64_t cap = num[1], jitter = num[2], doublings;

  if (!exp || cap < delay)
    cap = delay;
  doublings = exp ? attempt - 1 : 0;
  while (doublings > 0 && delay < cap) {
    delay *= 2;
    doublings--;
  }
  if (delay > cap)
    delay = cap;
  if (jitter > 100)
    jitter = 100;
  jitter = delay / 100 * jitter + delay % 100 * jitter / 100;
  if (jitter > 0)
    delay -= rnd % (jitter + 1);
  return delay < 1 ? 1 : delay;
}

/* The dead branch of queue_fail.lua. */
static int mq_fail_dead(fleet__mq_t *q, fleet_bytes_t key, fleet_bytes_t id,
                        const fleet_bytes_t *args, fleet_bytes_t attempt,
                        int64_t keep, int64_t keep_s) {
  static const char *const set[] = {"state", "attempts", "token", "last_error",
                                    "finished_ms"};
  fleet_bytes_t v[5], l, entry;
  int64_t rc;

  v[0] = fleet__ks_cstr("dead");
  v[1] = attempt;
  v[2] = args[1];
  v[3] = args[2];
  if ((rc = fleet__mq_istr(q, q->now, &v[4])) != 0 ||
      (rc = fleet__mq_hset(q, key, set, v, 5)) < 0 ||
      (rc = mq_pair(q, v[4], id, &entry)) != 0 ||
      (rc = fleet__mq_key(q, ":jobs:dead", MQ_NIL, &l)) != 0 ||
      (rc = fleet__ks_rpush(q->ks, l, &entry, 1)) < 0 ||
      (rc = mq_count(q, "dead", 1)) != 0)
    return (int)rc;
  return fleet__mq_trim(q, ":jobs:dead", keep, keep_s, NULL);
}

/* The retry branch of queue_fail.lua. */
static int mq_fail_retry(fleet__mq_t *q, fleet_bytes_t key, fleet_bytes_t id,
                         const fleet_bytes_t *args, fleet_bytes_t attempt,
                         int64_t run_at, fleet_bytes_t type, fleet__rb_t *out) {
  static const char *const set[] = {"state", "attempts", "token", "last_error",
                                    "run_at_ms"};
  fleet_bytes_t v[5], delayed;
  double first;
  int64_t rc;
  int have_first;

  if ((rc = fleet__mq_key(q, ":jobs:delayed", MQ_NIL, &delayed)) != 0 ||
      (rc = fleet__mq_first_score(q, delayed, &first)) < 0)
    return (int)rc;
  have_first = rc == 1;
  v[0] = fleet__ks_cstr("delayed");
  v[1] = attempt;
  v[2] = args[1];
  v[3] = args[2];
  if ((rc = fleet__mq_istr(q, run_at, &v[4])) != 0 ||
      (rc = fleet__mq_hset(q, key, set, v, 5)) < 0 ||
      (rc = fleet__ks_zadd(q->ks, delayed, (double)run_at, id)) < 0 ||
      (rc = mq_by_type(q, type, id, 1)) != 0)
    return (int)rc;
  if ((!have_first || (double)run_at < first) && (rc = fleet__mq_wake(q)) != 0)
    return (int)rc;
  fleet__rb_array(out, 2);
  fleet__rb_int(out, 1);
  return fleet__rb_int(out, run_at);
}

int fleet__mem_op_queue_fail(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                             size_t nkeys, const fleet_bytes_t *args,
                             size_t nargs, fleet__rb_t *out) {
  static const char *const names[] = {"max_attempts", "backoff", "type",
                                      "token"};
  fleet_bytes_t key, claims, claim, *f, tok = MQ_NIL, att = MQ_NIL;
  int64_t rnd, keep, keep_s, max_attempts, attempt, num[3], rc;
  int exp, held, claimed;
  fleet__mq_t q;

  if ((rc = fleet__mq_begin(&q, ctx, keys, nkeys)) != 0)
    return (int)rc;
  if (nargs != 6 || fleet__mq_arg(args[3], &rnd) != 0 ||
      fleet__mq_arg(args[4], &keep) != 0 ||
      fleet__mq_arg(args[5], &keep_s) != 0)
    return FLEET_EBACKEND;
  if ((rc = fleet__mq_key(&q, ":jobs:claims", MQ_NIL, &claims)) != 0 ||
      (rc = fleet__ks_hget(q.ks, claims, args[0], &claim)) < 0)
    return (int)rc;
  claimed = rc == 1;
  held = claimed && fleet__mq_claim(claim, &tok, &att);
  if ((rc = mq_job_fields(&q, args[0], names, 4, &key, &f)) < 0)
    return (int)rc;
  if (f[2].base == NULL)
    return FLEET_ENOTFOUND;
  if (!held || !mq_eq(tok, args[1])) {
    signed char ended = 0;
    if (!claimed && (rc = mq_ended(&q, args[0], f[3], args[1], &ended)) != 0)
      return (int)rc;
    return ended == 2 ? FLEET_EALREADY : FLEET_ESTALE;
  }
  if ((rc = fleet__mq_int(f[0], &max_attempts)) != 0 ||
      (rc = mq_unclaim(&q, &args[0], 1)) != 0 ||
      (rc = fleet__mq_int(att, &attempt)) != 0)
    return (int)rc;
  if (attempt >= max_attempts) {
    if ((rc = mq_fail_dead(&q, key, args[0], args, att, keep, keep_s)) != 0)
      return (int)rc;
    fleet__rb_array(out, 2);
    fleet__rb_int(out, 0);
    return fleet__rb_int(out, 0);
  }
  if ((rc = mq_backoff_parse(f[1], &exp, num)) != 0)
    return (int)rc;
  return mq_fail_retry(&q, key, args[0], args, att,
                       q.now + mq_backoff_delay(exp, num, attempt, rnd), f[2],
                       out);
}

/* ------------------------------------------------------------------------ */
/* QUEUE_RECOVER                                                            */

/* Checks one expired claim before queue_recover.lua writes anything: 0
 * when it can be recovered or its job is gone, FLEET_EPROTO when the job
 * is there but fleet cannot read it (no type, no claim, a garbage
 * counter), which leaves it running. */
static int mq_recover_check(fleet__mq_t *q, fleet_bytes_t id,
                            fleet_bytes_t held) {
  static const char *const names[] = {"max_attempts", "order", "type"};
  fleet_bytes_t key, *f, tok, att;
  int64_t attempt, max_attempts, order, rc;

  if ((rc = mq_job_fields(q, id, names, 3, &key, &f)) < 0)
    return (int)rc;
  if (f[2].base == NULL) {
    if ((rc = mq_job_exists(q, key)) != 0)
      return rc < 0 ? (int)rc : FLEET_EPROTO;
    return 0;
  }
  if (!fleet__mq_claim(held, &tok, &att) ||
      (rc = fleet__mq_int(att, &attempt)) != 0 ||
      (rc = fleet__mq_int(f[0], &max_attempts)) != 0)
    return FLEET_EPROTO;
  if (attempt < max_attempts && fleet__mq_int(f[1], &order) != 0)
    return FLEET_EPROTO;
  return 0;
}

/* One expired claim of queue_recover.lua, with its claims value `held`:
 * re-queued (`*requeued`) or dead (`*dead`), or left alone when the claim
 * or the job is gone. */
static int mq_recover_one(fleet__mq_t *q, fleet_bytes_t id, fleet_bytes_t held,
                          fleet_bytes_t pending, int64_t *requeued,
                          int64_t *dead) {
  static const char *const names[] = {"max_attempts", "order", "type"};
  static const char *const set_dead[] = {"state", "attempts", "token",
                                         "last_error", "finished_ms"};
  static const char *const set_pending[] = {"state", "attempts", "token",
                                            "last_error"};
  fleet_bytes_t key, *f, v[5], tok, att, l, entry;
  int64_t attempt, max_attempts, order, rc;
  int claimed = fleet__mq_claim(held, &tok, &att);

  if ((rc = mq_job_fields(q, id, names, 3, &key, &f)) < 0)
    return (int)rc;
  if (!claimed || f[2].base == NULL)
    return 0;
  if ((rc = fleet__mq_int(att, &attempt)) != 0 ||
      (rc = fleet__mq_int(f[0], &max_attempts)) != 0)
    return (int)rc;
  v[1] = att;
  v[2] = fleet__ks_cstr("");
  v[3] = fleet__ks_cstr("claim expired");
  if (attempt >= max_attempts) {
    v[0] = fleet__ks_cstr("dead");
    if ((rc = fleet__mq_istr(q, q->now, &v[4])) != 0 ||
        (rc = fleet__mq_hset(q, key, set_dead, v, 5)) < 0 ||
        (rc = mq_pair(q, v[4], id, &entry)) != 0 ||
        (rc = fleet__mq_key(q, ":jobs:dead", MQ_NIL, &l)) != 0 ||
        (rc = fleet__ks_rpush(q->ks, l, &entry, 1)) < 0)
      return (int)rc;
    (*dead)++;
    return 0;
  }
  if ((rc = fleet__mq_int(f[1], &order)) != 0)
    return (int)rc;
  v[0] = fleet__ks_cstr("pending");
  if ((rc = fleet__mq_hset(q, key, set_pending, v, 4)) < 0 ||
      (rc = fleet__ks_zadd(q->ks, pending, (double)order, id)) < 0 ||
      (rc = mq_by_type(q, f[2], id, 1)) != 0)
    return (int)rc;
  (*requeued)++;
  return 0;
}

int fleet__mem_op_queue_recover(fleet__mem_ctx_t *ctx,
                                const fleet_bytes_t *keys, size_t nkeys,
                                const fleet_bytes_t *args, size_t nargs,
                                fleet__rb_t *out) {
  fleet__ks_zitem_t *expired;
  fleet_bytes_t pending, running, claims, *ids, *held;
  int64_t limit, keep, keep_s, n, i, requeued = 0, dead = 0, rc;
  double next;
  int was_empty;
  fleet__mq_t q;

  if ((rc = fleet__mq_begin(&q, ctx, keys, nkeys)) != 0)
    return (int)rc;
  if (nargs != 3 || fleet__mq_arg(args[0], &limit) != 0 ||
      fleet__mq_arg(args[1], &keep) != 0 ||
      fleet__mq_arg(args[2], &keep_s) != 0)
    return FLEET_EBACKEND;
  if ((rc = fleet__mq_key(&q, ":jobs:pending", MQ_NIL, &pending)) != 0 ||
      (rc = fleet__mq_key(&q, ":jobs:running", MQ_NIL, &running)) != 0)
    return (int)rc;
  n = fleet__ks_zrangebyscore(q.ks, running, -INFINITY, (double)q.now, 0, limit,
                              &expired);
  if (n < 0)
    return (int)n;
  if (n > 0) {
    ids = fleet__ks_scratch(q.ks, (size_t)n * sizeof(*ids));
    if (ids == NULL)
      return FLEET_ENOMEM;
    for (i = 0; i < n; i++)
      ids[i] = expired[i].member;
    if ((rc = mq_claims_of(&q, ids, (size_t)n, &claims, &held)) < 0)
      return (int)rc;
    for (i = 0; i < n; i++)
      if ((rc = mq_recover_check(&q, ids[i], held[i])) != 0)
        return (int)rc;
    if ((rc = fleet__ks_zcard(q.ks, pending)) < 0)
      return (int)rc;
    was_empty = rc == 0;
    for (i = 0; i < n; i++)
      if ((rc = mq_recover_one(&q, ids[i], held[i], pending, &requeued,
                               &dead)) != 0)
        return (int)rc;
    if ((rc = mq_unclaim(&q, ids, (size_t)n)) != 0)
      return (int)rc;
    if (dead > 0 &&
        ((rc = mq_count(&q, "dead", dead)) != 0 ||
         (rc = fleet__mq_trim(&q, ":jobs:dead", keep, keep_s, NULL)) != 0))
      return (int)rc;
    if (requeued > 0 && was_empty && (rc = fleet__mq_wake(&q)) != 0)
      return (int)rc;
  }
  if ((rc = fleet__mq_first_score(&q, running, &next)) < 0)
    return (int)rc;
  fleet__rb_array(out, 4);
  fleet__rb_int(out, q.now);
  fleet__rb_int(out, requeued);
  fleet__rb_int(out, dead);
  return fleet__rb_int(out, rc == 1 ? (int64_t)next : -1);
}
