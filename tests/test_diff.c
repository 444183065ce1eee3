/* test_diff.c -- differential tests: random sequences of every op run
 * through the op layer on a memory client and on a Redis client in
 * lockstep (fixed seeds). Every reply must be the same, and so must the
 * whole keyspace at checkpoints: for each key its TYPE, its value read with
 * the type's read command, and its PTTL. Times (timestamps, TTLs) are
 * compared within a tolerance, since the two clocks differ by the time
 * between the two calls. */
#include <stdlib.h>

#include <hiredis/hiredis.h>

#include "core/client.h"
#include "memory/script.h"
#include "redis_fixture.h"
#include "test_store_ctx.h"

/* Numbers of at least this many digits are times, equal within
 * DIFF_TOLERANCE (ms, or us for TIME's second item). */
#define DIFF_TIME_DIGITS 5
#define DIFF_TOLERANCE 5000
#define DIFF_MAX_ARGS 64
#define DIFF_MAX_ITEMS 4096
#define DIFF_LINE 512

typedef struct {
  client_ctx_t mem, red;
  fleet_test_redis_t *srv;
  uint64_t rng;
  /* Claims (id, token) and lock values seen, to present them again. */
  char held[64][2][32];
  int nheld;
  char lease[6][48];
  int steps;
} diff_t;

/* A reply flattened into lines, one per value: "i:<n>", "s:<bytes>",
 * "+<status>", "nil", "[<n>" for an array of n. */
typedef struct {
  char (*line)[DIFF_LINE];
  size_t n;
  int status;
  int done;
} diff_reply_t;

static uint32_t diff_rand(diff_t *d, uint32_t n) {
  d->rng ^= d->rng << 13;
  d->rng ^= d->rng >> 7;
  d->rng ^= d->rng << 17;
  return (uint32_t)(d->rng % n);
}

static void diff_add(diff_reply_t *r, const char *fmt, const char *p,
                     size_t len) {
  ASSERT_ULT(r->n, DIFF_MAX_ITEMS);
  snprintf(r->line[r->n++], DIFF_LINE, fmt, (int)len, p);
}

static void diff_flatten(diff_reply_t *r, const fleet__reply_t *v) {
  char num[32];
  size_t i;

  switch (v->type) {
    case FLEET__REPLY_NIL:
      diff_add(r, "nil%.*s", "", 0);
      break;
    case FLEET__REPLY_INT:
      snprintf(num, sizeof(num), "%lld", (long long)v->integer);
      diff_add(r, "i:%.*s", num, strlen(num));
      break;
    case FLEET__REPLY_STR:
      diff_add(r, "s:%.*s", v->str, v->len);
      break;
    case FLEET__REPLY_STATUS:
      diff_add(r, "+%.*s", v->str, v->len);
      break;
    case FLEET__REPLY_ARRAY:
      snprintf(num, sizeof(num), "%zu", v->nelem);
      diff_add(r, "[%.*s", num, strlen(num));
      for (i = 0; i < v->nelem; i++)
        diff_flatten(r, &v->elem[i]);
      break;
  }
}

static void diff_on_reply(void *arg, int status, const fleet__reply_t *reply) {
  diff_reply_t *r = arg;

  r->status = status;
  if (status == 0)
    diff_flatten(r, reply);
  r->done = 1;
}

static void diff_reply_init(diff_reply_t *r) {
  r->line = calloc(DIFF_MAX_ITEMS, sizeof(*r->line));
  ASSERT_NOT_NULL(r->line);
  r->n = 0;
  r->status = 0;
  r->done = 0;
}

/* Whether two lines are equal, digit runs of DIFF_TIME_DIGITS or more
 * within the tolerance. */
static int diff_line_eq(const char *a, const char *b) {
  while (*a != '\0' && *b != '\0') {
    if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
      char *ea, *eb;
      unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
      if (ea - a >= DIFF_TIME_DIGITS && eb - b >= DIFF_TIME_DIGITS) {
        if ((x > y ? x - y : y - x) > DIFF_TOLERANCE)
          return 0;
      } else if (x != y || ea - a != eb - b) {
        return 0;
      }
      a = ea;
      b = eb;
    } else if (*a++ != *b++) {
      return 0;
    }
  }
  return *a == *b;
}

static int diff_cmp_line(const void *x, const void *y) {
  return strcmp(x, y);
}

/* Runs `op` on both clients and checks the replies match; `unordered`
 * sorts the lines after the first `unordered - 1` (replies in no
 * particular order). Returns the memory reply (the caller frees it). */
static diff_reply_t diff_op(diff_t *d, fleet__op_t op, const char *const *keys,
                            size_t nkeys, const char *const *args, size_t nargs,
                            size_t unordered) {
  fleet_bytes_t k[DIFF_MAX_ARGS], a[DIFF_MAX_ARGS];
  diff_reply_t m, r;
  client_ctx_t *c[2] = {&d->mem, &d->red};
  diff_reply_t *out[2] = {&m, &r};
  size_t i;
  int s;

  ASSERT_ULE(nkeys, DIFF_MAX_ARGS);
  ASSERT_ULE(nargs, DIFF_MAX_ARGS);
  for (i = 0; i < nkeys; i++)
    k[i] = sb(keys[i]);
  for (i = 0; i < nargs; i++)
    a[i] = sb(args[i]);
  for (s = 0; s < 2; s++) {
    diff_reply_init(out[s]);
    ASSERT_OK(fleet__backend_call(fleet__client_backend(&c[s]->client), op, k,
                                  nkeys, a, nargs, diff_on_reply, out[s]));
    while (!out[s]->done)
      uv_run(&c[s]->loop, UV_RUN_ONCE);
    if (unordered > 0 && out[s]->n >= unordered)
      qsort(out[s]->line + unordered - 1, out[s]->n - (unordered - 1),
            DIFF_LINE, diff_cmp_line);
  }
  if (m.status != r.status)
    fleet_test__fail(__FILE__, __LINE__, "step %d, op %s: memory %s, redis %s",
                     d->steps, fleet__op_name(op), fleet_err_name(m.status),
                     fleet_err_name(r.status));
  for (i = 0; i < m.n || i < r.n; i++)
    if (i >= m.n || i >= r.n ||
        (op != FLEET__OP_TIME && !diff_line_eq(m.line[i], r.line[i])))
      fleet_test__fail(__FILE__, __LINE__,
                       "step %d, op %s, item %zu: memory '%s', redis '%s'",
                       d->steps, fleet__op_name(op), i,
                       i < m.n ? m.line[i] : "(none)",
                       i < r.n ? r.line[i] : "(none)");
  free(r.line);
  return m;
}

/* ------------------------------------------------------------------------ */
/* Keyspace dumps                                                           */

/* Runs a command on the memory store, or on the server. */
static void diff_cmd(diff_t *d, int redis, diff_reply_t *out, size_t argc,
                     const char *const *argv) {
  fleet_bytes_t a[8];
  fleet__rb_t rb;
  const fleet__reply_t *tree;
  redisReply *top, *rr;
  size_t i;

  out->n = 0;
  if (redis) {
    top = rr =
        fleet_test_redis_cmd_argv(d->srv, (int)argc, (const char **)argv, NULL);
    ASSERT_NOT_NULL(rr);
    if (rr->type == REDIS_REPLY_ARRAY && rr->elements == 2 &&
        rr->element[1]->type == REDIS_REPLY_ARRAY) {
      diff_add(out, "%.*s", rr->element[0]->str, rr->element[0]->len);
      rr = rr->element[1];
    }
    for (i = 0; rr->type == REDIS_REPLY_ARRAY && i < rr->elements; i++)
      diff_add(out, "%.*s", rr->element[i]->str, rr->element[i]->len);
    if (rr->type == REDIS_REPLY_INTEGER)
      snprintf(out->line[out->n++], DIFF_LINE, "%lld", rr->integer);
    else if (rr->type == REDIS_REPLY_STRING || rr->type == REDIS_REPLY_STATUS)
      diff_add(out, "%.*s", rr->str, rr->len);
    freeReplyObject(top);
    return;
  }
  for (i = 0; i < argc; i++)
    a[i] = sb(argv[i]);
  fleet__rb_init(&rb);
  ASSERT_OK(fleet__memory_command(fleet__client_backend(&d->mem.client), a,
                                  argc, &rb));
  ASSERT_OK(fleet__rb_build(&rb, &tree));
  if (tree->type == FLEET__REPLY_ARRAY && tree->nelem == 2 &&
      tree->elem[1].type == FLEET__REPLY_ARRAY) {
    diff_add(out, "%.*s", tree->elem[0].str, tree->elem[0].len);
    tree = &tree->elem[1];
  }
  for (i = 0; tree->type == FLEET__REPLY_ARRAY && i < tree->nelem; i++)
    diff_add(out, "%.*s", tree->elem[i].str, tree->elem[i].len);
  if (tree->type == FLEET__REPLY_INT)
    snprintf(out->line[out->n++], DIFF_LINE, "%lld", (long long)tree->integer);
  else if (tree->type != FLEET__REPLY_ARRAY)
    diff_add(out, "%.*s", tree->str, tree->len);
  fleet__rb_trim(&rb, 0);
}

/* Joins the items of `v` in pairs "a=b" and sorts them. */
static void diff_pairs_sorted(diff_reply_t *v) {
  char pair[DIFF_LINE];
  size_t j;

  for (j = 0; j + 1 < v->n; j += 2) {
    snprintf(pair, sizeof(pair), "%.200s=%.200s", v->line[j], v->line[j + 1]);
    memcpy(v->line[j / 2], pair, sizeof(pair));
  }
  v->n /= 2;
  qsort(v->line, v->n, DIFF_LINE, diff_cmp_line);
}

/* The keyspace as sorted lines "key type value... ttl pttl": hash fields,
 * set members and zset members (member=score) sorted, lists in order. */
static void diff_dump(diff_t *d, int redis, diff_reply_t *out) {
  diff_reply_t keys, v;
  char cursor[32] = "0", *line;
  size_t i, j;

  diff_reply_init(&keys);
  diff_reply_init(&v);
  out->n = 0;
  do {
    const char *scan[] = {"SCAN", cursor, "COUNT", "1000"};
    diff_cmd(d, redis, &v, 4, scan);
    snprintf(cursor, sizeof(cursor), "%s", v.line[0]);
    for (i = 1; i < v.n; i++)
      snprintf(keys.line[keys.n++], DIFF_LINE, "%s", v.line[i]);
  } while (strcmp(cursor, "0") != 0);
  qsort(keys.line, keys.n, DIFF_LINE, diff_cmp_line);
  for (i = 0; i < keys.n; i++) {
    const char *key = keys.line[i];
    const char *type[] = {"TYPE", key};
    const char *pttl[] = {"PTTL", key};
    char t[16];
    int sorted = 0;

    diff_cmd(d, redis, &v, 2, type);
    snprintf(t, sizeof(t), "%s", v.line[0]);
    if (strcmp(t, "string") == 0) {
      const char *get[] = {"GET", key};
      diff_cmd(d, redis, &v, 2, get);
    } else if (strcmp(t, "hash") == 0) {
      const char *get[] = {"HGETALL", key};
      diff_cmd(d, redis, &v, 2, get);
      diff_pairs_sorted(&v);
    } else if (strcmp(t, "list") == 0) {
      const char *get[] = {"LRANGE", key, "0", "-1"};
      diff_cmd(d, redis, &v, 4, get);
    } else if (strcmp(t, "set") == 0) {
      const char *get[] = {"SMEMBERS", key};
      diff_cmd(d, redis, &v, 2, get);
      sorted = 1;
    } else {
      const char *get[] = {"ZRANGE", key, "0", "-1", "WITHSCORES"};
      ASSERT_STR_EQ(t, "zset");
      diff_cmd(d, redis, &v, 5, get);
      /* By member: members whose scores are times may tie on one side
       * only. The order of scores is the keyspace's own business. */
      diff_pairs_sorted(&v);
    }
    if (sorted)
      qsort(v.line, v.n, DIFF_LINE, diff_cmp_line);
    line = out->line[out->n++];
    snprintf(line, DIFF_LINE, "%.100s %s", key, t);
    for (j = 0; j < v.n; j++)
      snprintf(line + strlen(line), DIFF_LINE - strlen(line), " %s", v.line[j]);
    diff_cmd(d, redis, &v, 2, pttl);
    snprintf(line + strlen(line), DIFF_LINE - strlen(line), " ttl %s",
             v.line[0]);
  }
  free(keys.line);
  free(v.line);
}

static void diff_check_keyspace(diff_t *d) {
  diff_reply_t m, r;
  size_t i;

  diff_reply_init(&m);
  diff_reply_init(&r);
  diff_dump(d, 0, &m);
  diff_dump(d, 1, &r);
  for (i = 0; i < m.n || i < r.n; i++)
    if (i >= m.n || i >= r.n || !diff_line_eq(m.line[i], r.line[i]))
      fleet_test__fail(__FILE__, __LINE__,
                       "step %d, key %zu: memory '%s', redis '%s'", d->steps, i,
                       i < m.n ? m.line[i] : "(none)",
                       i < r.n ? r.line[i] : "(none)");
  ASSERT_GT(m.n, 0);
  free(m.line);
  free(r.line);
}

static void diff_init(diff_t *d, uint64_t seed) {
  memset(d, 0, sizeof(*d));
  d->srv = fleet_test_redis_start_or_skip(NULL);
  d->rng = seed;
  ctx_init(&d->mem, "memory://", NULL);
  ctx_init(&d->red, fleet_test_redis_url(d->srv), NULL);
}

static void diff_done(diff_t *d) {
  diff_check_keyspace(d);
  ctx_close(&d->mem);
  ctx_close(&d->red);
  fleet_test_redis_free(d->srv);
}

/* Runs an op whose reply the step does not need. */
static void diff_run(diff_t *d, fleet__op_t op, const char *const *keys,
                     size_t nkeys, const char *const *args, size_t nargs) {
  diff_reply_t m = diff_op(d, op, keys, nkeys, args, nargs, 0);
  free(m.line);
}

/* The core ops, mixed into every sequence. */
static void diff_core(diff_t *d) {
  const char *const pub[] = {"{t}:chan", "hello"};

  switch (diff_rand(d, 3)) {
    case 0:
      diff_run(d, FLEET__OP_PING, NULL, 0, NULL, 0);
      break;
    case 1:
      diff_run(d, FLEET__OP_TIME, NULL, 0, NULL, 0);
      break;
    default:
      diff_run(d, FLEET__OP_PUBLISH, NULL, 0, pub, 2);
      break;
  }
}

/* ------------------------------------------------------------------------ */
/* Locks                                                                    */

/* One lock op on 1 to 4 of the locks; acquires and releases on several
 * at once carry per-lock arguments and get per-lock results. The last two
 * locks hold data fleet did not write (see diff_lock_foreign()). */
static void diff_lock_step(diff_t *d) {
  static const char *const tags[] = {"{t:a}", "{t:b}",       "{t:c}",
                                     "{t:d}", "{t:w:rec:x}", "{t:v:rec:x}"};
  static const char *const owners[] = {"o1", "o2"};
  uint32_t i = diff_rand(d, 6), n = 1 + diff_rand(d, 4);
  const char *keys[4], *args[12];
  char ttl[16];
  diff_reply_t m;
  uint32_t j;

  snprintf(ttl, sizeof(ttl), "%u", 100000 + diff_rand(d, 3) * 100000);
  for (j = 0; j < n; j++)
    keys[j] = tags[(i + j) % 6];
  switch (diff_rand(d, 5)) {
    case 0:
    case 1:
      for (j = 0; j < n; j++) {
        args[3 * j] = owners[diff_rand(d, 2)];
        args[3 * j + 1] = ttl;
        args[3 * j + 2] = diff_rand(d, 2) ? "1" : "0";
      }
      m = diff_op(d, FLEET__OP_LOCK_ACQUIRE, keys, n, args, 3 * n, 0);
      /* "[2n", then "i:<token or 0>", "i:<pttl>" per lock. */
      for (j = 0; j < n && m.n == 1 + 2 * n; j++)
        if (strcmp(m.line[1 + 2 * j], "i:0") != 0)
          snprintf(d->lease[(i + j) % 6], sizeof(d->lease[0]), "%s:%s",
                   m.line[1 + 2 * j] + 2, args[3 * j]);
      free(m.line);
      break;
    case 2:
      for (j = 0; j < n; j++)
        args[j] = diff_rand(d, 4) ? d->lease[(i + j) % 6] : "1:o9";
      diff_run(d, FLEET__OP_LOCK_RELEASE, keys, n, args, n);
      break;
    case 3:
      for (j = 0; j < n; j++) {
        args[2 * j] = d->lease[(i + j) % 6];
        args[2 * j + 1] = ttl;
      }
      diff_run(d, FLEET__OP_LOCK_RENEW, keys, n, args, 2 * n);
      break;
    default:
      diff_run(d, FLEET__OP_LOCK_QUERY, keys, 1, NULL, 0);
      break;
  }
}

/* Data fleet did not write under two locks' keys, made with a store op
 * given a crafted tag: the record "x}:lock" of tag "{t:w" is the hash
 * "{t:w:rec:x}:lock", the lease of the lock tagged "{t:w:rec:x}"; likewise
 * the fence of "{t:v:rec:x}". */
static void diff_lock_foreign(diff_t *d) {
  const char *const w = "{t:w", *const v = "{t:v";
  const char *const wargs[] = {"x}:lock", "900000", "junk"};
  const char *const vargs[] = {"x}:fence", "900000", "junk"};

  diff_run(d, FLEET__OP_STORE_PUT, &w, 1, wargs, 3);
  diff_run(d, FLEET__OP_STORE_PUT, &v, 1, vargs, 3);
}

TEST_IMPL(diff_lock_ops) {
  diff_t d;

  diff_init(&d, 0x9e3779b97f4a7c15ull);
  diff_lock_foreign(&d);
  for (d.steps = 0; d.steps < 600; d.steps++) {
    if (diff_rand(&d, 10) == 0)
      diff_core(&d);
    diff_lock_step(&d);
    if (d.steps % 100 == 99)
      diff_check_keyspace(&d);
  }
  diff_done(&d);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Queues                                                                   */

#define Q_TAG "{t:q}"

static const char *diff_job_id(diff_t *d, char *buf, size_t len) {
  snprintf(buf, len, "%u", 1 + diff_rand(d, 40));
  return buf;
}

/* Appends the claims (id, token) of a QUEUE_CLAIM reply's lines. */
static void diff_keep_claims(diff_t *d, const diff_reply_t *m) {
  unsigned long long token0;
  size_t i, k, count, stride;

  /* "[n", now, deadline, next, left, retry, token0, count, stride, runs,
   * then id, record[, group] per job, the k-th's token token0 + k. */
  if (m->n < 10 || sscanf(m->line[6] + 2, "%llu", &token0) != 1 ||
      sscanf(m->line[7] + 2, "%zu", &count) != 1 ||
      sscanf(m->line[8] + 2, "%zu", &stride) != 1)
    return;
  for (i = 10, k = 1; k <= count && i + 1 < m->n && d->nheld < 64;
       i += stride, k++) {
    snprintf(d->held[d->nheld][0], 32, "%s", m->line[i] + 2);
    snprintf(d->held[d->nheld][1], 32, "%llu", token0 + k);
    d->nheld++;
  }
}

/* Fills args with up to 4 (id, token) pairs of held claims (or stale
 * ones), after `at`; returns the new count. */
static size_t diff_pairs(diff_t *d, const char **args, size_t at) {
  uint32_t n = d->nheld > 0 ? 1 + diff_rand(d, 4) : 0, j;

  for (j = 0; j < n; j++) {
    int h = (int)diff_rand(d, (uint32_t)d->nheld);
    args[at++] = d->held[h][0];
    args[at++] = diff_rand(d, 6) ? d->held[h][1] : "999";
  }
  return at;
}

static void diff_enqueue(diff_t *d) {
  static const char *const types[] = {"a", "b", "c"};
  static const char *const prios[] = {"-2", "0", "0", "3"};
  static const char *const uniques[] = {"", "", "", "", "u1", "u2"};
  static const char *const groups[] = {"", "", "g1", "g2", "g3"};
  char nbuf[8], ids[4][16], pay[4][16], att[4][4];
  const char *keys[1] = {Q_TAG}, *args[1 + 48];
  uint32_t n = 1 + diff_rand(d, 4), i;

  snprintf(nbuf, sizeof(nbuf), "%u", n);
  args[0] = nbuf;
  for (i = 0; i < n; i++) {
    const char **a = args + 1 + 12 * i;
    snprintf(ids[i], sizeof(ids[i]), "u%u", diff_rand(d, 30));
    snprintf(pay[i], sizeof(pay[i]), "p%u", diff_rand(d, 1000));
    snprintf(att[i], sizeof(att[i]), "%u", 1 + diff_rand(d, 3));
    a[0] = diff_rand(d, 4) == 0 ? ids[i] : "";
    a[1] = types[diff_rand(d, 3)];
    a[2] = pay[i];
    a[3] = prios[diff_rand(d, 4)];
    a[4] = "0";
    a[5] = diff_rand(d, 6) == 0 ? "600000" : "0";
    a[6] = att[i];
    a[7] = diff_rand(d, 2) ? "fixed:60000:60000:0" : "exp:100000:900000:50";
    a[8] = uniques[diff_rand(d, 6)];
    a[9] = "600000";
    a[10] = groups[diff_rand(d, 5)];
    /* Some with a timeout (long: it never passes during the run, so that
     * both sides see the same), whose claims carry the mark and run
     * deadlines (lib/queue_stop.lua); the cancels below meet running
     * jobs. */
    a[11] = diff_rand(d, 4) == 0 ? "t=600000" : "";
  }
  diff_run(d, FLEET__OP_QUEUE_ENQUEUE, keys, 1, args, 1 + 12 * n);
}

static void diff_queue_step(diff_t *d) {
  static const char *const types[] = {"a", "b", "c", "zz"};
  const char *keys[1] = {Q_TAG}, *args[16];
  char nbuf[8], idbuf[16], rnd[16];
  diff_reply_t m;
  size_t n;

  switch (diff_rand(d, 16)) {
    case 0:
    case 1:
    case 2:
      diff_enqueue(d);
      break;
    case 3:
    case 4:
      snprintf(nbuf, sizeof(nbuf), "%u", diff_rand(d, 5));
      args[0] = nbuf;
      args[1] = diff_rand(d, 5) == 0 ? "1" : "600000";
      m = diff_op(d, FLEET__OP_QUEUE_CLAIM, keys, 1, args, 2, 0);
      diff_keep_claims(d, &m);
      free(m.line);
      break;
    case 5:
      args[0] = "600000";
      n = diff_pairs(d, args, 1);
      diff_run(d, FLEET__OP_QUEUE_REFRESH, keys, 1, args, n);
      break;
    case 6:
      args[0] = "3";
      args[1] = diff_rand(d, 2) ? "0" : "3600";
      n = diff_pairs(d, args, 2);
      diff_run(d, FLEET__OP_QUEUE_COMPLETE, keys, 1, args, n);
      break;
    case 7:
      if (diff_rand(d, 2)) {
        /* Sometimes with a hold of the queue or of the jobs' groups. */
        args[0] = diff_rand(d, 4) == 0 ? "600000" : "0";
        args[1] = diff_rand(d, 2) ? "1" : "0";
        n = diff_pairs(d, args, 2);
        diff_run(d, FLEET__OP_QUEUE_RELEASE, keys, 1, args, n);
        break;
      }
      /* A worker's round trip: a claim, then completions. */
      snprintf(nbuf, sizeof(nbuf), "%u", diff_rand(d, 3));
      args[0] = nbuf;
      args[1] = "600000";
      args[2] = "3";
      args[3] = diff_rand(d, 2) ? "0" : "3600";
      n = diff_pairs(d, args, 4);
      diff_run(d, FLEET__OP_QUEUE_COMPLETE_CLAIM, keys, 1, args, n);
      break;
    case 8:
      if (diff_pairs(d, args, 0) == 0)
        break;
      snprintf(rnd, sizeof(rnd), "%u", diff_rand(d, 100000));
      args[2] = "boom";
      args[3] = rnd;
      args[4] = "2";
      args[5] = "0";
      diff_run(d, FLEET__OP_QUEUE_FAIL, keys, 1, args, 6);
      break;
    case 9:
      /* Claims with a 1 ms TTL have expired on both sides by now. */
      uv_sleep(3);
      args[0] = "10";
      args[1] = "2";
      args[2] = "0";
      diff_run(d, FLEET__OP_QUEUE_RECOVER, keys, 1, args, 3);
      break;
    case 10:
      args[0] = diff_rand(d, 3) ? diff_job_id(d, idbuf, sizeof(idbuf)) : "u3";
      /* Often a claimed job: a cancel of a running one marks its claim,
       * which the refreshes, finishes and recoveries then meet. */
      if (d->nheld > 0 && diff_rand(d, 2))
        args[0] = d->held[diff_rand(d, (uint32_t)d->nheld)][0];
      {
        /* A read, a cancel, or one of the job verbs (queue_job_*.lua),
         * which refuse a running job. */
        static const int ops[] = {
            FLEET__OP_QUEUE_GET,        FLEET__OP_QUEUE_CANCEL,
            FLEET__OP_QUEUE_GET,        FLEET__OP_QUEUE_CANCEL,
            FLEET__OP_QUEUE_JOB_DELETE, FLEET__OP_QUEUE_JOB_RUN,
            FLEET__OP_QUEUE_JOB_KILL};

        diff_run(d, ops[diff_rand(d, 7)], keys, 1, args, 1);
      }
      break;
    case 11:
      diff_run(d, FLEET__OP_QUEUE_COUNTS, keys, 1, NULL, 0);
      break;
    case 12:
      /* SMEMBERS has no order: the ids are compared as a set. */
      args[0] = types[diff_rand(d, 4)];
      args[1] = "1000";
      m = diff_op(d, FLEET__OP_QUEUE_LIST, keys, 1, args, 2, 3);
      free(m.line);
      break;
    case 13:
      /* Flow limits: small enough to bind, wide windows so that both
       * sides see the same. */
      switch (diff_rand(d, 6)) {
        case 0:
          args[0] = "set";
          args[1] = diff_rand(d, 2) ? "5" : "0";
          args[2] = args[1][0] == '0' ? "0" : "600000";
          args[3] = diff_rand(d, 2) ? "2" : "0";
          args[4] = args[3][0] == '0' ? "0" : "600000";
          args[5] = diff_rand(d, 2) ? "6" : "0";
          args[6] = diff_rand(d, 2) ? "2" : "0";
          diff_run(d, FLEET__OP_QUEUE_LIMITS, keys, 1, args, 7);
          break;
        case 1:
          args[0] = "clear";
          diff_run(d, FLEET__OP_QUEUE_LIMITS, keys, 1, args, 1);
          break;
        case 2:
          args[0] = "hold";
          args[1] = diff_rand(d, 2) ? "1" : "600000";
          args[2] = diff_rand(d, 2) ? "" : "g2";
          diff_run(d, FLEET__OP_QUEUE_LIMITS, keys, 1, args, 3);
          /* A hold of 1 ms has ended on both sides before the next claim
           * (else a claim within that ms on one side only differs). */
          if (strcmp(args[1], "1") == 0)
            uv_sleep(3);
          break;
        case 3:
          args[0] = "weight";
          args[1] = diff_rand(d, 2) ? "g1" : "g3";
          args[2] = diff_rand(d, 2) ? "1" : "3";
          diff_run(d, FLEET__OP_QUEUE_LIMITS, keys, 1, args, 3);
          break;
        default:
          args[0] = "get";
          diff_run(d, FLEET__OP_QUEUE_LIMITS, keys, 1, args, 1);
          break;
      }
      break;
    case 14:
      args[0] = diff_rand(d, 2) ? "" : "g1";
      args[1] = "10";
      diff_run(d, FLEET__OP_QUEUE_GROUPS, keys, 1, args, 2);
      break;
    default:
      args[0] = diff_rand(d, 5) == 0 ? "bogus"
                : diff_rand(d, 2)    ? "dead"
                                     : "completed";
      args[1] = "2";
      diff_run(d, FLEET__OP_QUEUE_PURGE, keys, 1, args, 2);
      break;
  }
}

TEST_IMPL(diff_queue_ops) {
  diff_t d;

  diff_init(&d, 0x2545f4914f6cdd1dull);
  for (d.steps = 0; d.steps < 1200; d.steps++) {
    if (diff_rand(&d, 20) == 0)
      diff_core(&d);
    diff_queue_step(&d);
    if (d.steps % 150 == 149)
      diff_check_keyspace(&d);
  }
  diff_done(&d);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Stores                                                                   */

#define S_TAG "{t:s}"

static void diff_store_step(diff_t *d) {
  /* Index entries; rarely one whose key is also the record key of "r0"
   * under the tag S_TAG ":idx:size:r", which then holds a hash. */
  static const char *const entries[][2] = {
      {"color", "red"}, {"color", "blue"}, {"size", "1"}, {"size", "r:rec:r0"}};
  char id[8], val[16], ttl[16], rec[40], ev[40];
  const char *tag = S_TAG, *args[12], *keys[2] = {rec, ev};
  uint32_t n, j, e, prev = 4;
  diff_reply_t m;

  if (diff_rand(d, 8) == 0)
    tag = S_TAG ":idx:size:r";
  snprintf(id, sizeof(id), "r%u", diff_rand(d, 6));
  snprintf(val, sizeof(val), "v%u", diff_rand(d, 1000));
  snprintf(ttl, sizeof(ttl), "%u", 100000 * (1 + diff_rand(d, 5)));
  args[0] = id;
  /* Expiry times order index entries: writes that set them are a few ms
   * apart, so that both sides see them in the same order. */
  uv_sleep(2);
  switch (diff_rand(d, 12)) {
    case 0:
    case 1:
      args[1] = ttl;
      args[2] = val;
      n = diff_rand(d, 3);
      for (j = 0; j < n; j++) {
        e = diff_rand(d, diff_rand(d, 8) == 0 ? 4 : 3);
        if (e == prev)
          break;
        args[3 + 2 * j] = entries[e][0];
        args[4 + 2 * j] = entries[e][1];
        prev = e;
      }
      diff_run(d, FLEET__OP_STORE_PUT, &tag, 1, args, 3 + 2 * j);
      break;
    case 2:
      diff_run(d, FLEET__OP_STORE_GET, &tag, 1, args, 1);
      break;
    case 3:
      diff_run(d, FLEET__OP_STORE_DEL, &tag, 1, args, 1);
      break;
    case 4:
      diff_run(d, FLEET__OP_STORE_EXISTS, &tag, 1, args, 1);
      break;
    case 5:
      args[1] = diff_rand(d, 2) ? "0" : ttl;
      diff_run(d, FLEET__OP_STORE_TOUCH, &tag, 1, args, 2);
      break;
    case 6:
      args[1] = diff_rand(d, 2) ? "0" : "3";
      n = 1 + diff_rand(d, 3);
      for (j = 0; j < n; j++)
        args[2 + j] = val;
      diff_run(d, FLEET__OP_STORE_APPEND, &tag, 1, args, 2 + n);
      break;
    case 7:
      args[1] = diff_rand(d, 2) ? "0" : "1";
      args[2] = "10";
      diff_run(d, FLEET__OP_STORE_READ, &tag, 1, args, 3);
      break;
    case 8:
      diff_run(d, FLEET__OP_STORE_COUNT, &tag, 1, args, 1);
      break;
    case 9:
      e = diff_rand(d, 3);
      args[0] = entries[e][0];
      args[1] = entries[e][1];
      args[2] = "2";
      args[3] = diff_rand(d, 2) ? "" : "0";
      args[4] = "r3";
      diff_run(d, FLEET__OP_STORE_LIST, &tag, 1, args, 5);
      break;
    case 10:
      /* SCAN's order differs: the keys are compared as a set. */
      args[0] = "0";
      args[1] = "MATCH";
      args[2] = S_TAG ":rec:*";
      args[3] = "COUNT";
      args[4] = "1000";
      m = diff_op(d, FLEET__OP_STORE_SCAN, NULL, 0, args, 5, 4);
      free(m.line);
      break;
    default:
      snprintf(rec, sizeof(rec), "%s:rec:%s", tag, id);
      snprintf(ev, sizeof(ev), "%s:ev:%s", tag, id);
      diff_run(d, FLEET__OP_STORE_UNLINK, keys, 1 + diff_rand(d, 2), NULL, 0);
      break;
  }
}

TEST_IMPL(diff_store_ops) {
  diff_t d;

  diff_init(&d, 0xd1b54a32d192ed03ull);
  for (d.steps = 0; d.steps < 1000; d.steps++) {
    if (diff_rand(&d, 20) == 0)
      diff_core(&d);
    diff_store_step(&d);
    if (d.steps % 125 == 124)
      diff_check_keyspace(&d);
  }
  diff_done(&d);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* MGET and ZPOPMIN (the warm pool's acquire and release)                   */

/* Runs one command on both sides and checks that the replies agree. */
static void diff_both(diff_t *d, size_t argc, const char *const *argv) {
  diff_reply_t m, r;
  size_t i;

  diff_reply_init(&m);
  diff_reply_init(&r);
  diff_cmd(d, 0, &m, argc, argv);
  diff_cmd(d, 1, &r, argc, argv);
  if (m.n != r.n)
    fleet_test__fail(__FILE__, __LINE__,
                     "step %d: %s: %zu items on memory, %zu on Redis", d->steps,
                     argv[0], m.n, r.n);
  for (i = 0; i < m.n; i++)
    if (strcmp(m.line[i], r.line[i]) != 0)
      fleet_test__fail(__FILE__, __LINE__,
                       "step %d: %s item %zu: '%s' on memory, '%s' on Redis",
                       d->steps, argv[0], i, m.line[i], r.line[i]);
  free(m.line);
  free(r.line);
}

/* Random SET, ZADD (with and without NX, and with GT: a member's score
 * only raised), MGET (with missing keys and a key of another type) and
 * ZPOPMIN (with and without a count, on an empty set too), replies and
 * keyspace compared. */
TEST_IMPL(diff_mget_zpopmin) {
  static const char *const skeys[] = {"{t:m}:s0", "{t:m}:s1", "{t:m}:s2"};
  const char *const hset[] = {"HSET", "{t:m}:h", "f", "v"};
  char score[16], member[16], score2[16], member2[16], value[16], count[8];
  diff_t d;

  diff_init(&d, 0x9e3779b97f4a7c15ull);
  diff_both(&d, 4, hset);
  for (d.steps = 0; d.steps < 600; d.steps++) {
    switch (diff_rand(&d, 6)) {
      case 0: {
        const char *argv[] = {"SET", skeys[diff_rand(&d, 3)], value};
        snprintf(value, sizeof(value), "v%u", diff_rand(&d, 100));
        diff_both(&d, 3, argv);
        break;
      }
      case 1: {
        const char *argv[] = {"MGET",   skeys[0],     "{t:m}:h",
                              skeys[2], "{t:m}:none", skeys[1]};
        diff_both(&d, 6, argv);
        break;
      }
      case 2: {
        const char *argv[] = {"ZPOPMIN", "{t:m}:z", count};
        snprintf(count, sizeof(count), "%u", diff_rand(&d, 4));
        diff_both(&d, diff_rand(&d, 2) == 0 ? 2 : 3, argv);
        break;
      }
      case 3: {
        const char *argv[] = {"ZADD", "{t:m}:z", "NX", score, member};
        snprintf(score, sizeof(score), "%u", diff_rand(&d, 50));
        snprintf(member, sizeof(member), "m%u", diff_rand(&d, 30));
        diff_both(&d, 5, argv);
        break;
      }
      default: {
        const char *argv[] = {"ZADD", "{t:m}:z", score, member};
        const char *gt[] = {"ZADD", "{t:m}:z", "GT",   score,
                            member, score2,    member2};
        snprintf(score, sizeof(score), "%u", diff_rand(&d, 50));
        snprintf(member, sizeof(member), "m%u", diff_rand(&d, 30));
        snprintf(score2, sizeof(score2), "%u", diff_rand(&d, 50));
        snprintf(member2, sizeof(member2), "m%u", diff_rand(&d, 30));
        if (diff_rand(&d, 2) == 0)
          diff_both(&d, 4, argv);
        else
          diff_both(&d, diff_rand(&d, 2) == 0 ? 5 : 7, gt);
        break;
      }
    }
    if (d.steps % 100 == 99)
      diff_check_keyspace(&d);
  }
  diff_done(&d);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Pools                                                                    */

#define P_TAG "{t:p}"

/* One pool op with arguments drawn from three nodes of two workers each,
 * eight keys and small tokens, so that stale tokens, stale revisions and
 * every job state come up. Tokens are drawn near the last one issued. The
 * worker TTL is long: no node lapses in the run, and none is reaped on one side
 * only. */
static void diff_pool_step(diff_t *d, char *rev, uint64_t *token) {
  static const char *const nodes[] = {"n1", "n2", "n3"};
  static const char *const workers[] = {"n1/1", "n1/2", "n2/1",
                                        "n2/2", "n3/1", "n3/2"};
  static const char *const statuses[] = {"0", "0", "-12"};
  const char *const tag = P_TAG;
  uint32_t n = diff_rand(d, 3), w = diff_rand(d, 6);
  /* Each node's instance nonce; now and then another instance's, which
   * its id lease refuses. */
  const char *nonce = diff_rand(d, 16) ? "i1" : "i2";
  char key[8], tok[16], tok2[16];
  const char *args[16];
  diff_reply_t m;

  snprintf(key, sizeof(key), "k%u", diff_rand(d, 8));
  snprintf(tok, sizeof(tok), "%" PRIu64, *token - diff_rand(d, 6));
  snprintf(tok2, sizeof(tok2), "%" PRIu64, *token - diff_rand(d, 6));
  switch (diff_rand(d, 16)) {
    case 0:
      /* Its workers, and a job it re-asserts now and then. */
      args[0] = nodes[n];
      args[1] = nonce;
      args[2] = "900000";
      args[3] = "900000";
      args[4] = diff_rand(d, 2) ? "0" : "1";
      args[5] = "2";
      args[6] = workers[2 * n];
      args[7] = workers[2 * n + 1];
      args[8] = key;
      args[9] = workers[2 * n + diff_rand(d, 2)];
      args[10] = "payload";
      m = diff_op(d, FLEET__OP_POOL_JOIN, &tag, 1, args,
                  diff_rand(d, 4) ? 8 : 11, 0);
      if (m.n >= 2 && m.line[1][0] == 'i')
        snprintf(rev, 16, "%s", m.line[1] + 2);
      free(m.line);
      break;
    case 1:
      args[0] = nodes[n];
      args[1] = nonce;
      args[2] = "900000";
      args[3] = diff_rand(d, 8) ? "0" : "1";
      args[4] = diff_rand(d, 4) ? "1" : "0";
      diff_run(d, FLEET__OP_POOL_KEEPALIVE, &tag, 1, args, 5);
      break;
    case 2:
      m = diff_op(d, FLEET__OP_POOL_MEMBERS, &tag, 1, NULL, 0, 0);
      if (m.n >= 2 && m.line[1][0] == 'i')
        snprintf(rev, 16, "%s", m.line[1] + 2);
      free(m.line);
      break;
    case 3:
    case 4:
      /* The dispatching node, and now and then a start result it takes
       * from its list (pool_events.c, "Events in the wake-up"). */
      args[0] = nodes[n];
      args[1] = nonce;
      args[2] = diff_rand(d, 3) ? "0" : tok;
      args[3] = key;
      args[4] = "payload";
      args[5] = diff_rand(d, 4) ? rev : "0";
      args[6] = workers[w];
      args[7] = nodes[diff_rand(d, 3)];
      args[8] = diff_rand(d, 4) ? "0" : "3";
      m = diff_op(d, FLEET__OP_POOL_DISPATCH, &tag, 1, args, 9, 0);
      if (m.n == 5 && strcmp(m.line[3], "i:1") == 0)
        *token = strtoull(m.line[4] + 2, NULL, 10);
      free(m.line);
      break;
    case 5:
      args[0] = key;
      args[1] = workers[w];
      args[2] = tok;
      args[3] = statuses[diff_rand(d, 3)];
      /* Now and then with the start it takes from its node's list. */
      args[4] = nodes[w / 2];
      args[5] = nonce;
      args[6] = tok;
      diff_run(d, FLEET__OP_POOL_STARTED, &tag, 1, args,
               diff_rand(d, 3) ? 4 : 7);
      break;
    case 6:
      args[0] = nodes[n];
      args[1] = diff_rand(d, 2) ? "2" : "50";
      args[2] = nonce;
      diff_run(d, FLEET__OP_POOL_EVENTS, &tag, 1, args, 3);
      break;
    case 7:
      args[0] = key;
      args[1] = "note";
      diff_run(d, FLEET__OP_POOL_NOTIFY, &tag, 1, args, 2);
      break;
    case 8:
      args[0] = key;
      if (diff_rand(d, 3) == 0) {
        /* A requeue from a start or a stop; its backoff (over 5 digits)
         * keeps the due times within the tolerance. */
        args[1] = workers[w];
        args[2] = tok;
        args[3] = diff_rand(d, 2) ? "s" : "x";
        args[4] = "2";
        args[5] = "900000";
        diff_run(d, FLEET__OP_POOL_REQUEUE, &tag, 1, args, 6);
      } else {
        diff_run(d, FLEET__OP_POOL_STOP, &tag, 1, args, 1);
      }
      break;
    case 9:
      args[0] = key;
      args[1] = workers[w];
      args[2] = tok;
      args[3] = "-5";
      diff_run(d, FLEET__OP_POOL_STOPPED, &tag, 1, args, 4);
      break;
    case 10:
      args[0] = rev;
      args[1] = key;
      args[2] = tok;
      args[3] = workers[w];
      snprintf(key, sizeof(key), "k%u", diff_rand(d, 8));
      args[4] = key;
      args[5] = tok2;
      args[6] = workers[diff_rand(d, 6)];
      diff_run(d, FLEET__OP_POOL_MOVE, &tag, 1, args, 7);
      break;
    case 11:
      /* Every job, or one worker's (a set: in no particular order). */
      args[0] = workers[w];
      m = diff_rand(d, 2)
              ? diff_op(d, FLEET__OP_POOL_JOBS, &tag, 1, NULL, 0, 2)
              : diff_op(d, FLEET__OP_POOL_WORKER_JOBS, &tag, 1, args, 1, 2);
      free(m.line);
      break;
    case 12:
      if (diff_rand(d, 2)) {
        args[0] = key;
        diff_run(d, FLEET__OP_POOL_PAYLOAD, &tag, 1, args, 1);
      } else {
        args[0] = nodes[n];
        args[1] = nonce;
        diff_run(d, FLEET__OP_POOL_LEAVE, &tag, 1, args, 2);
      }
      break;
    case 13:
      /* A ticker whose period (over 5 digits, so within the tolerance)
       * is long: a claim gets a tick only when the ticker is new. */
      args[0] = diff_rand(d, 2) ? "t1" : "t2";
      args[1] = "900000";
      args[2] = "c1";
      args[3] = "900000";
      args[4] = "900000";
      args[5] = diff_rand(d, 2) ? "0" : "1";
      if (diff_rand(d, 8) == 0)
        diff_run(d, FLEET__OP_POOL_TICK_STOP, &tag, 1, args, 2);
      else if (diff_rand(d, 4) == 0) {
        args[6] = args[0];
        args[7] = "c1";
        args[8] = "1";
        diff_run(d, FLEET__OP_POOL_TICK_ACK, &tag, 1, args + 6, 3);
      } else
        diff_run(d, FLEET__OP_POOL_TICK, &tag, 1, args, 6);
      break;
    case 14: {
      /* A plan: its stop list comes from a set, in no particular order. */
      static const char *const modes[] = {"", "", "a", "r"};
      static const char *const counts[] = {"0", "1", "2"};
      static const char *const keys[] = {"k0", "k1", "k2", "k3"};
      uint32_t ns = diff_rand(d, 3), nx = diff_rand(d, 2), j;

      args[0] = "s";
      args[1] = modes[diff_rand(d, 4)];
      args[2] = counts[ns];
      for (j = 0; j < ns + nx; j++)
        args[3 + j] = keys[diff_rand(d, 4)];
      m = diff_op(d, FLEET__OP_POOL_PLAN, &tag, 1, args, 3 + ns + nx, 2);
      free(m.line);
      break;
    }
    case 15:
      /* A worker's removal: drain or forget. */
      args[0] = nodes[n];
      args[1] = workers[2 * n + diff_rand(d, 2)];
      args[2] = diff_rand(d, 2) ? "d" : "f";
      args[3] = nonce;
      if (diff_rand(d, 3) == 0)
        diff_run(d, FLEET__OP_POOL_WORKER_REMOVE, &tag, 1, args, 4);
      else if (diff_rand(d, 10) == 0)
        diff_run(d, FLEET__OP_POOL_SHUTDOWN, &tag, 1, NULL, 0);
      else if (diff_rand(d, 3) == 0)
        diff_run(d, FLEET__OP_POOL_RESET, &tag, 1, NULL, 0);
      break;
    default:
      break;
  }
}

TEST_IMPL(diff_pool_ops) {
  char rev[16] = "0";
  const char *const seed[] = {"SET", P_TAG ":fence", "1000"};
  uint64_t token = 1000;
  diff_reply_t v;
  diff_t d;

  diff_init(&d, 0x2545f4914f6cdd1dull);
  /* One fence on both sides: a missing one starts at each side's clock. */
  diff_reply_init(&v);
  diff_cmd(&d, 0, &v, 3, seed);
  diff_cmd(&d, 1, &v, 3, seed);
  free(v.line);
  for (d.steps = 0; d.steps < 1000; d.steps++) {
    if (diff_rand(&d, 20) == 0)
      diff_core(&d);
    diff_pool_step(&d, rev, &token);
    if (d.steps % 125 == 124)
      diff_check_keyspace(&d);
  }
  diff_done(&d);
  return 0;
}

/* Runs one command on both sides and checks that the replies match. */
static void diff_cmd_both(diff_t *d, size_t argc, const char *const *argv) {
  diff_reply_t m, r;
  size_t i;

  diff_reply_init(&m);
  diff_reply_init(&r);
  diff_cmd(d, 0, &m, argc, argv);
  diff_cmd(d, 1, &r, argc, argv);
  for (i = 0; i < m.n || i < r.n; i++)
    if (i >= m.n || i >= r.n || strcmp(m.line[i], r.line[i]) != 0)
      fleet_test__fail(__FILE__, __LINE__,
                       "%s, step %d, line %zu: memory '%s', redis '%s'",
                       argv[0], d->steps, i, i < m.n ? m.line[i] : "(none)",
                       i < r.n ? r.line[i] : "(none)");
  free(m.line);
  free(r.line);
}

/* Pushes `n` items on both sides ("RPUSH" or "LPUSH"), at most six per
 * command (diff_cmd takes eight arguments). */
static void diff_push(diff_t *d, const char *cmd, const char *key, size_t n) {
  char items[6][24];
  const char *argv[8];
  size_t i, k;

  argv[0] = cmd;
  argv[1] = key;
  for (i = 0; i < n; i += k) {
    for (k = 0; k < 6 && i + k < n; k++) {
      snprintf(items[k], sizeof(items[k]), "%c%zu", cmd[0], i + k);
      argv[2 + k] = items[k];
    }
    diff_cmd_both(d, 2 + k, argv);
  }
}

/* LTRIM over lists of several lengths and every kind of range (inside,
 * negative, past either end, empty), each followed by pushes at both ends
 * that wrap the memory list's ring around its moved head: the list, its
 * length and the whole keyspace must be the same as on Redis. */
TEST_IMPL(diff_list_trim) {
  static const char *const ranges[][2] = {
      {"0", "-1"},     {"1", "-1"}, {"0", "0"},   {"2", "3"},  {"-3", "-1"},
      {"-100", "100"}, {"5", "2"},  {"3", "-3"},  {"0", "-2"}, {"10", "20"},
      {"-1", "-1"},    {"-2", "1"}, {"30", "-1"}, {"0", "-30"}};
  static const size_t lens[] = {0, 1, 5, 17, 40};
  const char *const key = "{t}:list";
  const char *const del[] = {"DEL", key};
  const char *const range[] = {"LRANGE", key, "0", "-1"};
  const char *const len[] = {"LLEN", key};
  size_t l, r;
  diff_t d;

  diff_init(&d, 0x9e3779b97f4a7c15ull);
  for (l = 0; l < FLEET__ARRAY_SIZE(lens); l++) {
    for (r = 0; r < FLEET__ARRAY_SIZE(ranges); r++, d.steps++) {
      const char *const trim[] = {"LTRIM", key, ranges[r][0], ranges[r][1]};

      diff_cmd_both(&d, 2, del);
      diff_push(&d, "RPUSH", key, lens[l]);
      diff_cmd_both(&d, 4, trim);
      diff_cmd_both(&d, 4, range);
      diff_cmd_both(&d, 2, len);
      diff_push(&d, "RPUSH", key, 9);
      diff_push(&d, "LPUSH", key, 7);
      diff_cmd_both(&d, 4, range);
      diff_cmd_both(&d, 2, len);
    }
  }
  diff_done(&d);
  return 0;
}
