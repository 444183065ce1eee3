/* ops_queue.c -- the memory twins of the queue's producer scripts
 * (queue_enqueue, queue_get, queue_cancel, queue_counts, queue_list,
 * queue_purge in adapters/redis/lua/) and the helpers every queue op
 * shares. Each op makes the same keyspace calls, in the same order, as its
 * script. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "memory/ops_queue_int.h"

/* The pending score of a job: (1000 - priority) * 2^42 + seq. */
#define MQ_ORDER_STEP 4398046511104LL

/* ------------------------------------------------------------------------ */
/* Shared helpers                                                           */

int fleet__mq_begin(fleet__mq_t *q, fleet__mem_ctx_t *ctx,
                    const fleet_bytes_t *keys, size_t nkeys) {
  if (nkeys != 1)
    return FLEET_EBACKEND;
  q->ctx = ctx;
  q->ks = ctx->ks;
  q->tag = keys[0];
  q->now = (int64_t)(ctx->now_us / 1000);
  return 0;
}

int fleet__mq_key(fleet__mq_t *q, const char *suffix, fleet_bytes_t extra,
                  fleet_bytes_t *out) {
  size_t slen = strlen(suffix);
  size_t len = q->tag.len + slen + extra.len;
  char *p = fleet__ks_scratch(q->ks, len + 1);

  if (p == NULL)
    return FLEET_ENOMEM;
  memcpy(p, q->tag.base, q->tag.len);
  memcpy(p + q->tag.len, suffix, slen);
  if (extra.len > 0)
    memcpy(p + q->tag.len + slen, extra.base, extra.len);
  p[len] = '\0';
  out->base = p;
  out->len = len;
  return 0;
}

int fleet__mq_int(fleet_bytes_t v, int64_t *out) {
  const char *p = v.base;
  size_t i = 0, digits;
  int64_t n = 0;
  int neg = 0;

  if (p == NULL)
    return FLEET_EPROTO;
  if (i < v.len && p[i] == '-') {
    neg = 1;
    i++;
  }
  digits = v.len - i;
  if (digits == 0 || digits > 18)
    return FLEET_EPROTO;
  for (; i < v.len; i++) {
    if (p[i] < '0' || p[i] > '9')
      return FLEET_EPROTO;
    n = n * 10 + (p[i] - '0');
  }
  *out = neg ? -n : n;
  return 0;
}

int fleet__mq_claim(fleet_bytes_t v, fleet_bytes_t *token,
                    fleet_bytes_t *attempt) {
  const char *p = v.base;
  size_t i = 0, colon;

  if (p == NULL)
    return 0;
  while (i < v.len && p[i] >= '0' && p[i] <= '9')
    i++;
  if (i == 0 || i == v.len || p[i] != ':')
    return 0;
  colon = i++;
  while (i < v.len && p[i] >= '0' && p[i] <= '9')
    i++;
  if (i != v.len || i == colon + 1)
    return 0;
  token->base = p;
  token->len = colon;
  attempt->base = p + colon + 1;
  attempt->len = v.len - colon - 1;
  return 1;
}

int fleet__mq_done_token(fleet_bytes_t v, fleet_bytes_t *token) {
  const char *p = v.base;
  size_t i = 0, start;

  if (p == NULL)
    return 0;
  while (i < v.len && p[i] >= '0' && p[i] <= '9')
    i++;
  if (i == 0 || i == v.len || p[i] != ':')
    return 0;
  start = ++i;
  while (i < v.len && p[i] >= '0' && p[i] <= '9')
    i++;
  if (i == start || i == v.len || p[i] != ':')
    return 0;
  token->base = p + start;
  token->len = i - start;
  return 1;
}

int fleet__mq_arg(fleet_bytes_t v, int64_t *out) {
  return fleet__ks_parse_int(v, out) == 0 ? 0 : FLEET_EBACKEND;
}

int fleet__mq_first_score(fleet__mq_t *q, fleet_bytes_t key, double *score) {
  fleet__ks_zitem_t *items;
  int64_t n = fleet__ks_zrange(q->ks, key, 0, 0, &items);

  if (n <= 0)
    return (int)n;
  *score = items[0].score;
  return 1;
}

int fleet__mq_entry(fleet_bytes_t e, int64_t *ms, fleet_bytes_t *id) {
  const char *p = e.base;
  size_t i = 0;
  int64_t v = 0;

  if (p == NULL)
    return 0;
  while (i < e.len && p[i] >= '0' && p[i] <= '9') {
    /* More digits than fit: later than any cutoff, as for Lua. */
    v = v > (INT64_MAX - 9) / 10 ? INT64_MAX : v * 10 + (p[i] - '0');
    i++;
  }
  if (i == 0 || i == e.len || p[i] != ':')
    return 0;
  *ms = v;
  id->base = p + i + 1;
  id->len = e.len - i - 1;
  return 1;
}

/* Deletes the job records named by the first `n` entries of the list `l`
 * (malformed entries name none) and their entries in the hash tag ..
 * `marks` (when not NULL), then drops those entries. */
static int mq_drop_head(fleet__mq_t *q, fleet_bytes_t l, int64_t n,
                        const char *marks) {
  fleet_bytes_t *items, *keys, *ids, mk;
  int64_t i, count, nkeys = 0, ms, rc;

  count = fleet__ks_lrange(q->ks, l, 0, n - 1, &items);
  if (count < 0)
    return (int)count;
  keys = fleet__ks_scratch(q->ks, (size_t)(count + 1) * sizeof(*keys));
  ids = fleet__ks_scratch(q->ks, (size_t)(count + 1) * sizeof(*ids));
  if (keys == NULL || ids == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < count; i++) {
    if (!fleet__mq_entry(items[i], &ms, &ids[nkeys]))
      continue;
    if ((rc = fleet__mq_job_key(q, ids[nkeys], &keys[nkeys])) != 0)
      return (int)rc;
    nkeys++;
  }
  if (nkeys > 0) {
    if ((rc = fleet__ks_del(q->ks, keys, (size_t)nkeys)) < 0)
      return (int)rc;
    if (marks != NULL &&
        ((rc = fleet__mq_key(q, marks, (fleet_bytes_t){NULL, 0}, &mk)) != 0 ||
         (rc = fleet__ks_hdel(q->ks, mk, ids, (size_t)nkeys)) < 0))
      return (int)rc;
  }
  return fleet__ks_ltrim(q->ks, l, n, -1);
}

int fleet__mq_trim(fleet__mq_t *q, const char *lsuffix, int64_t keep,
                   int64_t keep_s, const char *marks) {
  fleet_bytes_t l, head, *items, id;
  int64_t n = 0, i, count, excess, ms, cutoff;
  int rc;

  if ((rc = fleet__mq_key(q, lsuffix, (fleet_bytes_t){NULL, 0}, &l)) != 0)
    return rc;
  if (keep_s > 0) {
    cutoff = q->now - keep_s * 1000;
    rc = fleet__ks_lindex(q->ks, l, 0, &head);
    if (rc < 0)
      return rc;
    if (rc == 1 && fleet__mq_entry(head, &ms, &id) && ms <= cutoff) {
      count = fleet__ks_lrange(q->ks, l, 0, 999, &items);
      if (count < 0)
        return (int)count;
      for (i = 0; i < count; i++) {
        if (!fleet__mq_entry(items[i], &ms, &id) || ms > cutoff)
          break;
        n = i + 1;
      }
    }
  }
  excess = fleet__ks_llen(q->ks, l);
  if (excess < 0)
    return (int)excess;
  excess -= keep;
  if (excess > n)
    n = excess;
  if (n > 1000)
    n = 1000;
  return n > 0 ? mq_drop_head(q, l, n, marks) : 0;
}

int fleet__mq_wake(fleet__mq_t *q) {
  fleet_bytes_t chan;
  int64_t rc = fleet__mq_key(q, ":jobs:wake", (fleet_bytes_t){NULL, 0}, &chan);

  if (rc == 0)
    rc = fleet__mem_publish(q->ctx, chan, fleet__ks_cstr("wake"));
  return rc < 0 ? (int)rc : 0;
}

int64_t fleet__mq_hset(fleet__mq_t *q, fleet_bytes_t key,
                       const char *const *fields, const fleet_bytes_t *values,
                       size_t n) {
  fleet_bytes_t fv[32];
  size_t i;

  if (n > FLEET__ARRAY_SIZE(fv) / 2)
    return FLEET_EBACKEND;
  for (i = 0; i < n; i++) {
    fv[2 * i] = fleet__ks_cstr(fields[i]);
    fv[2 * i + 1] = values[i];
  }
  return fleet__ks_hset(q->ks, key, fv, 2 * n);
}

/* ------------------------------------------------------------------------ */
/* QUEUE_ENQUEUE                                                            */

/* One job of queue_enqueue.lua's loop: adds it unless its id exists or its
 * unique key is held, and writes {status, id} to the reply. */
static int mq_enqueue_one(fleet__mq_t *q, const fleet_bytes_t *a, int64_t seq,
                          int was_empty, int *have_earliest, double *earliest,
                          int *wake, fleet__rb_t *out) {
  static const char *const names[] = {
      "type",  "payload",    "attempts", "max_attempts", "priority", "backoff",
      "order", "created_ms", "state",    "run_at_ms",    "unique"};
  fleet_bytes_t id = a[0], key, ukey, v[11], by_type;
  int64_t prio, run_at, delay, ttl, due, rc;
  size_t nf;
  int status = 1;

  if (id.len == 0 && (rc = fleet__mq_istr(q, seq, &id)) != 0)
    return (int)rc;
  if ((rc = fleet__mq_job_key(q, id, &key)) != 0)
    return (int)rc;
  rc = fleet__ks_exists(q->ks, &key, 1);
  if (rc < 0)
    return (int)rc;
  if (rc == 1) {
    status = 0;
  } else if (a[8].len > 0) {
    if ((rc = fleet__mq_key(q, ":unique:", a[8], &ukey)) != 0 ||
        (rc = fleet__mq_arg(a[9], &ttl)) != 0)
      return (int)rc;
    rc = fleet__ks_set(q->ks, ukey, id, ttl, FLEET__KS_SET_NX);
    if (rc < 0)
      return (int)rc;
    if (rc == 0) {
      fleet_bytes_t holder;
      status = 0;
      rc = fleet__ks_get(q->ks, ukey, &holder);
      if (rc < 0)
        return (int)rc;
      if (rc == 1)
        id = holder;
    }
  }
  if (status == 1) {
    if ((rc = fleet__mq_arg(a[3], &prio)) != 0 ||
        (rc = fleet__mq_arg(a[4], &run_at)) != 0 ||
        (rc = fleet__mq_arg(a[5], &delay)) != 0)
      return (int)rc;
    due = q->now + delay;
    if (due > run_at)
      run_at = due;
    v[0] = a[1];
    v[1] = a[2];
    v[2] = fleet__ks_cstr("0");
    v[3] = a[6];
    v[4] = a[3];
    v[5] = a[7];
    if ((rc = fleet__mq_istr(q, (1000 - prio) * MQ_ORDER_STEP + seq, &v[6])) !=
            0 ||
        (rc = fleet__mq_istr(q, q->now, &v[7])) != 0)
      return (int)rc;
    nf = 8;
    if (run_at > q->now) {
      v[nf++] = fleet__ks_cstr("delayed");
      if ((rc = fleet__mq_istr(q, run_at, &v[nf++])) != 0 ||
          (rc = fleet__mq_key(q, ":jobs:delayed", (fleet_bytes_t){NULL, 0},
                              &ukey)) != 0 ||
          (rc = fleet__ks_zadd(q->ks, ukey, (double)run_at, id)) < 0)
        return (int)rc;
      if (!*have_earliest || (double)run_at < *earliest) {
        *have_earliest = 1;
        *earliest = (double)run_at;
        *wake = 1;
      }
    } else {
      v[nf++] = fleet__ks_cstr("pending");
      if ((rc = fleet__mq_key(q, ":jobs:pending", (fleet_bytes_t){NULL, 0},
                              &ukey)) != 0 ||
          (rc = fleet__ks_zadd(q->ks, ukey,
                               (double)((1000 - prio) * MQ_ORDER_STEP + seq),
                               id)) < 0)
        return (int)rc;
      if (was_empty)
        *wake = 1;
    }
    if (a[8].len > 0) {
      /* The names table has "unique" last; skip "run_at_ms" if unused. */
      const char *fields[11];
      memcpy(fields, names, sizeof(fields));
      fields[nf] = "unique";
      v[nf++] = a[8];
      rc = fleet__mq_hset(q, key, fields, v, nf);
    } else {
      rc = fleet__mq_hset(q, key, names, v, nf);
    }
    if (rc < 0)
      return (int)rc;
    if ((rc = fleet__mq_key(q, ":jobs:by_type:", a[1], &by_type)) != 0 ||
        (rc = fleet__ks_sadd(q->ks, by_type, &id, 1)) < 0)
      return (int)rc;
  }
  fleet__rb_int(out, status);
  return fleet__rb_bytes(out, id);
}

int fleet__mem_op_queue_enqueue(fleet__mem_ctx_t *ctx,
                                const fleet_bytes_t *keys, size_t nkeys,
                                const fleet_bytes_t *args, size_t nargs,
                                fleet__rb_t *out) {
  fleet_bytes_t pending, delayed, seqkey;
  int64_t n, i, seq, rc;
  int was_empty, have_earliest, wake = 0;
  double earliest = 0;
  fleet__mq_t q;

  if ((rc = fleet__mq_begin(&q, ctx, keys, nkeys)) != 0)
    return (int)rc;
  if (nargs < 1 || fleet__mq_arg(args[0], &n) != 0 || n < 0 ||
      (size_t)n > (nargs - 1) / 10)
    return FLEET_EBACKEND;
  if ((rc = fleet__mq_key(&q, ":jobs:pending", (fleet_bytes_t){NULL, 0},
                          &pending)) != 0 ||
      (rc = fleet__mq_key(&q, ":jobs:delayed", (fleet_bytes_t){NULL, 0},
                          &delayed)) != 0 ||
      (rc = fleet__mq_key(&q, ":seq", (fleet_bytes_t){NULL, 0}, &seqkey)) != 0)
    return (int)rc;
  if ((rc = fleet__ks_incrby(q.ks, seqkey, n, &seq)) != 0)
    return (int)rc;
  seq -= n;
  if ((rc = fleet__ks_zcard(q.ks, pending)) < 0)
    return (int)rc;
  was_empty = rc == 0;
  if ((rc = fleet__mq_first_score(&q, delayed, &earliest)) < 0)
    return (int)rc;
  have_earliest = rc == 1;
  fleet__rb_array(out, (size_t)(2 * n));
  for (i = 0; i < n; i++) {
    rc = mq_enqueue_one(&q, args + 1 + i * 10, ++seq, was_empty, &have_earliest,
                        &earliest, &wake, out);
    if (rc != 0)
      return (int)rc;
  }
  return wake ? fleet__mq_wake(&q) : 0;
}

/* ------------------------------------------------------------------------ */
/* QUEUE_GET                                                                */

/* Parses a done hash value "<finished_ms>:<token>:<attempt>" (the
 * scripts' '^(%d+):(%d+):(%d+)$', each read by int()). Returns 1, or 0 when
 * malformed. */
static int mq_done(fleet_bytes_t v, int64_t *ms, int64_t *token,
                   int64_t *attempt) {
  fleet_bytes_t part[3];
  const char *p = v.base, *end = p + v.len;
  int i;

  if (p == NULL)
    return 0;
  for (i = 0; i < 3; i++) {
    part[i].base = p;
    while (p < end && *p >= '0' && *p <= '9')
      p++;
    part[i].len = (size_t)(p - (const char *)part[i].base);
    if (part[i].len == 0 || (i < 2 && (p == end || *p++ != ':')))
      return 0;
  }
  return p == end && fleet__mq_int(part[0], ms) == 0 &&
         fleet__mq_int(part[1], token) == 0 &&
         fleet__mq_int(part[2], attempt) == 0;
}

/* queue_get.lua's int(): nil and "" read as 0. */
static int mq_get_int(fleet_bytes_t v, int64_t *out) {
  if (v.base == NULL || v.len == 0) {
    *out = 0;
    return 0;
  }
  return fleet__mq_int(v, out);
}

int fleet__mem_op_queue_get(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                            size_t nkeys, const fleet_bytes_t *args,
                            size_t nargs, fleet__rb_t *out) {
  static const char *const names[] = {
      "state",     "attempts",    "max_attempts", "priority",
      "type",      "payload",     "last_error",   "created_ms",
      "run_at_ms", "finished_ms", "token"};
  static const int ints[] = {1, 2, 3, 7, 8, 9, 10};
  fleet_bytes_t fields[11], key, *f, state, claims, claim, claim_token;
  fleet_bytes_t claim_attempt;
  int64_t v[11], rc;
  size_t i;
  fleet__mq_t q;

  if ((rc = fleet__mq_begin(&q, ctx, keys, nkeys)) != 0)
    return (int)rc;
  if (nargs != 1)
    return FLEET_EBACKEND;
  for (i = 0; i < 11; i++)
    fields[i] = fleet__ks_cstr(names[i]);
  if ((rc = fleet__mq_job_key(&q, args[0], &key)) != 0)
    return (int)rc;
  rc = fleet__ks_hmget(q.ks, key, fields, 11, &f);
  if (rc < 0)
    return (int)rc;
  if (f[0].base == NULL)
    return FLEET_ENOTFOUND;
  /* The script converts the fields in this order: run_at first. */
  if ((rc = mq_get_int(f[8], &v[8])) != 0)
    return (int)rc;
  for (i = 0; i < FLEET__ARRAY_SIZE(ints); i++)
    if ((rc = mq_get_int(f[ints[i]], &v[ints[i]])) != 0)
      return (int)rc;
  state = f[0];
  if ((rc = fleet__mq_key(&q, ":jobs:claims", (fleet_bytes_t){NULL, 0},
                          &claims)) != 0 ||
      (rc = fleet__ks_hget(q.ks, claims, args[0], &claim)) < 0)
    return (int)rc;
  if (rc == 1) {
    /* Claimed: running, with the claim's token and attempt. */
    if (!fleet__mq_claim(claim, &claim_token, &claim_attempt))
      return FLEET_EPROTO;
    if ((rc = fleet__mq_int(claim_attempt, &v[1])) != 0 ||
        (rc = fleet__mq_int(claim_token, &v[10])) != 0)
      return (int)rc;
    state = fleet__ks_cstr("running");
  } else if ((rc = fleet__mq_key(&q, ":jobs:done", (fleet_bytes_t){NULL, 0},
                                 &claims)) != 0 ||
             (rc = fleet__ks_hget(q.ks, claims, args[0], &claim)) < 0) {
    return (int)rc;
  } else if (rc == 1) {
    /* Completed: "<finished_ms>:<token>:<attempt>". */
    if (!mq_done(claim, &v[9], &v[10], &v[1]))
      return FLEET_EPROTO;
    state = fleet__ks_cstr("completed");
  } else if (state.len == 7 && memcmp(state.base, "delayed", 7) == 0 &&
             v[8] <= q.now) {
    state = fleet__ks_cstr("pending");
  }
  fleet__rb_array(out, 11);
  fleet__rb_bytes(out, state);
  fleet__rb_int(out, v[1]);
  fleet__rb_int(out, v[2]);
  fleet__rb_int(out, v[3]);
  fleet__rb_bytes(out, f[4].base != NULL ? f[4] : fleet__ks_cstr(""));
  fleet__rb_bytes(out, f[5].base != NULL ? f[5] : fleet__ks_cstr(""));
  fleet__rb_bytes(out, f[6]);
  fleet__rb_int(out, v[7]);
  fleet__rb_int(out, v[8]);
  fleet__rb_int(out, v[9]);
  return fleet__rb_int(out, v[10]);
}

/* ------------------------------------------------------------------------ */
/* QUEUE_CANCEL                                                             */

static int mq_is(fleet_bytes_t v, const char *s) {
  size_t len = strlen(s);
  return v.base != NULL && v.len == len && memcmp(v.base, s, len) == 0;
}

int fleet__mem_op_queue_cancel(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                               size_t nkeys, const fleet_bytes_t *args,
                               size_t nargs, fleet__rb_t *out) {
  fleet_bytes_t fields[3], key, k, *f, holder, id;
  int64_t rc;
  fleet__mq_t q;

  if ((rc = fleet__mq_begin(&q, ctx, keys, nkeys)) != 0)
    return (int)rc;
  if (nargs != 1)
    return FLEET_EBACKEND;
  id = args[0];
  fields[0] = fleet__ks_cstr("state");
  fields[1] = fleet__ks_cstr("unique");
  fields[2] = fleet__ks_cstr("type");
  if ((rc = fleet__mq_job_key(&q, id, &key)) != 0)
    return (int)rc;
  if ((rc = fleet__ks_hmget(q.ks, key, fields, 3, &f)) < 0)
    return (int)rc;
  if (f[0].base == NULL)
    return FLEET_ENOTFOUND;
  if ((rc = fleet__mq_key(&q, ":jobs:claims", (fleet_bytes_t){NULL, 0}, &k)) !=
          0 ||
      (rc = fleet__ks_hexists(q.ks, k, id)) < 0)
    return (int)rc;
  if (rc == 1)
    return FLEET_EBUSY;
  if ((rc = fleet__mq_key(&q, ":jobs:done", (fleet_bytes_t){NULL, 0}, &k)) !=
          0 ||
      (rc = fleet__ks_hexists(q.ks, k, id)) < 0)
    return (int)rc;
  if (rc == 1 || mq_is(f[0], "dead"))
    return FLEET_EALREADY;
  if ((rc = fleet__mq_key(&q, ":jobs:pending", (fleet_bytes_t){NULL, 0}, &k)) !=
          0 ||
      (rc = fleet__ks_zrem(q.ks, k, &id, 1)) < 0)
    return (int)rc;
  if ((rc = fleet__mq_key(&q, ":jobs:delayed", (fleet_bytes_t){NULL, 0}, &k)) !=
          0 ||
      (rc = fleet__ks_zrem(q.ks, k, &id, 1)) < 0)
    return (int)rc;
  if ((rc = fleet__mq_key(&q, ":jobs:by_type:",
                          f[2].base != NULL ? f[2] : fleet__ks_cstr(""), &k)) !=
          0 ||
      (rc = fleet__ks_srem(q.ks, k, &id, 1)) < 0)
    return (int)rc;
  if (f[1].base != NULL) {
    if ((rc = fleet__mq_key(&q, ":unique:", f[1], &k)) != 0 ||
        (rc = fleet__ks_get(q.ks, k, &holder)) < 0)
      return (int)rc;
    if (rc == 1 && holder.len == id.len &&
        memcmp(holder.base, id.base, id.len) == 0 &&
        (rc = fleet__ks_del(q.ks, &k, 1)) < 0)
      return (int)rc;
  }
  if ((rc = fleet__ks_del(q.ks, &key, 1)) < 0)
    return (int)rc;
  return fleet__rb_int(out, 1);
}

/* ------------------------------------------------------------------------ */
/* QUEUE_COUNTS                                                             */

/* queue_counts.lua's int(): nil reads as 0, else 1 to 18 digits. */
static int mq_counter(fleet_bytes_t v, int64_t *out) {
  if (v.base == NULL) {
    *out = 0;
    return 0;
  }
  if (v.len > 0 && ((const char *)v.base)[0] == '-')
    return FLEET_EPROTO;
  return fleet__mq_int(v, out);
}

int fleet__mem_op_queue_counts(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                               size_t nkeys, const fleet_bytes_t *args,
                               size_t nargs, fleet__rb_t *out) {
  static const char *const keys_[] = {":jobs:pending", ":jobs:running",
                                      ":jobs:completed", ":jobs:dead"};
  fleet_bytes_t delayed, stats, fields[2], *f, k;
  int64_t due, ndelayed, completed, dead, card[4], rc;
  size_t i;
  fleet__mq_t q;

  if ((rc = fleet__mq_begin(&q, ctx, keys, nkeys)) != 0)
    return (int)rc;
  if ((rc = fleet__mq_key(&q, ":jobs:delayed", (fleet_bytes_t){NULL, 0},
                          &delayed)) != 0 ||
      (rc = fleet__mq_key(&q, ":stats", (fleet_bytes_t){NULL, 0}, &stats)) != 0)
    return (int)rc;
  due = fleet__ks_zcount(q.ks, delayed, -INFINITY, (double)q.now);
  if (due < 0)
    return (int)due;
  fields[0] = fleet__ks_cstr("completed");
  fields[1] = fleet__ks_cstr("dead");
  if ((rc = fleet__ks_hmget(q.ks, stats, fields, 2, &f)) < 0)
    return (int)rc;
  for (i = 0; i < 4; i++) {
    if ((rc = fleet__mq_key(&q, keys_[i], (fleet_bytes_t){NULL, 0}, &k)) != 0)
      return (int)rc;
    card[i] = i < 2 ? fleet__ks_zcard(q.ks, k) : fleet__ks_llen(q.ks, k);
    if (card[i] < 0)
      return (int)card[i];
    if (i == 0 && (ndelayed = fleet__ks_zcard(q.ks, delayed)) < 0)
      return (int)ndelayed;
  }
  if ((rc = mq_counter(f[0], &completed)) != 0 ||
      (rc = mq_counter(f[1], &dead)) != 0)
    return (int)rc;
  fleet__rb_array(out, 7);
  fleet__rb_int(out, card[0] + due);
  fleet__rb_int(out, ndelayed - due);
  fleet__rb_int(out, card[1]);
  fleet__rb_int(out, completed);
  fleet__rb_int(out, dead);
  fleet__rb_int(out, card[2]);
  return fleet__rb_int(out, card[3]);
}

/* ------------------------------------------------------------------------ */
/* QUEUE_LIST                                                               */

int fleet__mem_op_queue_list(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                             size_t nkeys, const fleet_bytes_t *args,
                             size_t nargs, fleet__rb_t *out) {
  fleet_bytes_t k, *ids;
  int64_t n, limit, i, rc;
  fleet__mq_t q;

  if ((rc = fleet__mq_begin(&q, ctx, keys, nkeys)) != 0)
    return (int)rc;
  if (nargs != 2 || fleet__mq_arg(args[1], &limit) != 0)
    return FLEET_EBACKEND;
  if ((rc = fleet__mq_key(&q, ":jobs:by_type:", args[0], &k)) != 0)
    return (int)rc;
  if ((n = fleet__ks_smembers(q.ks, k, &ids)) < 0)
    return (int)n;
  if (limit > n)
    limit = n;
  if (limit < 0)
    limit = 0;
  fleet__rb_array(out, (size_t)(1 + limit));
  fleet__rb_int(out, n);
  for (i = 0; i < limit; i++)
    fleet__rb_bytes(out, ids[i]);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* QUEUE_PURGE                                                              */

int fleet__mem_op_queue_purge(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                              size_t nkeys, const fleet_bytes_t *args,
                              size_t nargs, fleet__rb_t *out) {
  fleet_bytes_t l, *items;
  int64_t limit, n, left, rc;
  fleet__mq_t q;

  if ((rc = fleet__mq_begin(&q, ctx, keys, nkeys)) != 0)
    return (int)rc;
  if (nargs != 2)
    return FLEET_EBACKEND;
  if (!mq_is(args[0], "completed") && !mq_is(args[0], "dead"))
    return FLEET_EINVAL;
  if (fleet__mq_arg(args[1], &limit) != 0)
    return FLEET_EBACKEND;
  if ((rc = fleet__mq_key(&q, ":jobs:", args[0], &l)) != 0)
    return (int)rc;
  n = fleet__ks_lrange(q.ks, l, 0, limit - 1, &items);
  if (n < 0)
    return (int)n;
  if (n > 0 &&
      (rc = mq_drop_head(
           &q, l, n, mq_is(args[0], "completed") ? ":jobs:done" : NULL)) != 0)
    return (int)rc;
  if ((left = fleet__ks_llen(q.ks, l)) < 0)
    return (int)left;
  fleet__rb_array(out, 2);
  fleet__rb_int(out, n);
  return fleet__rb_int(out, left);
}
