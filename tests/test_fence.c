/* test_fence.c -- the epoch rules of lib/fence.lua on both backends,
 * through the lock, a queue claim, a cron occurrence and a pool
 * assignment: epoch 0 counts as INCR always did, an epoch jump gives a
 * token above every earlier one, a lower epoch never lowers the counter,
 * and an epoch out of range or malformed is refused with nothing written.
 * The epoch a failover would bring is set on the backend directly
 * (fleet__backend_set_epoch()); the failovers themselves are in
 * test_fence_mp.c and test_sentinel.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "core/client.h"
#include "test_lock_env.h"

#define FENCE_2_32 4294967296ULL

static void fence_set(fleet_client_t *c, const char *epoch) {
  ASSERT_OK(fleet__backend_set_epoch(fleet__client_backend(c), epoch));
}

/* Takes and releases the lock; returns the token, or the acquire's error
 * as a negative number cast. */
static int fence_take(lock_env_t *e, lock_rec_t *r, uint64_t *token) {
  int st = lock_rec_acquire(e, r, 0, 5000);

  *token = r->token;
  if (st == 0)
    ASSERT_OK(lock_rec_release(e, r));
  return st;
}

typedef struct {
  int done;
  int status;
  size_t n;
  uint64_t token;
} fence_q_t;

static void fence_on_enqueue(fleet_queue_t *q, int status,
                             const fleet_enqueue_result_t *results, size_t n,
                             void *arg) {
  fence_q_t *f = arg;

  (void)q;
  (void)results;
  f->status = status;
  f->n = n;
  f->done++;
}

static void fence_on_claim(fleet_queue_t *q, int status, fleet_job_t *jobs,
                           size_t n, const fleet_claim_info_t *info,
                           void *arg) {
  fence_q_t *f = arg;

  (void)q;
  (void)info;
  f->status = status;
  f->n = n;
  f->token = n > 0 ? jobs[0].token : 0;
  f->done++;
}

/* Claims one job of `q`; returns its token. */
static uint64_t fence_claim(lock_env_t *e, fleet_queue_t *q) {
  fence_q_t f;

  memset(&f, 0, sizeof(f));
  ASSERT_OK(fleet_queue_claim(q, 1, 600000, fence_on_claim, &f));
  ASSERT(lock_env_wait(e, &f.done, 1, 5000));
  ASSERT_OK(f.status);
  ASSERT_UEQ(1, f.n);
  return f.token;
}

/* What a raw op answered: its status and its first four integers. */
typedef struct {
  int done;
  int status;
  size_t n;
  int64_t v[4];
} fence_raw_t;

static void fence_on_raw(void *arg, int status, const fleet__reply_t *reply) {
  fence_raw_t *f = arg;
  size_t i;

  f->status = status;
  if (status == 0) {
    ASSERT_EQ(FLEET__REPLY_ARRAY, reply->type);
    f->n = reply->nelem;
    for (i = 0; i < reply->nelem && i < 4; i++)
      f->v[i] = reply->elem[i].integer;
  }
  f->done = 1;
}

/* Runs `op` itself on `tag` with the `argc` strings `a`; asserts it
 * succeeds. */
static fence_raw_t fence_raw(lock_env_t *e, fleet__op_t op, const char *tag,
                             const char *const *a, size_t argc) {
  fleet_bytes_t key = {tag, strlen(tag)}, args[16];
  fence_raw_t f;
  size_t i;

  ASSERT_ULE(argc, 16);
  for (i = 0; i < argc; i++) {
    args[i].base = a[i];
    args[i].len = strlen(a[i]);
  }
  memset(&f, 0, sizeof(f));
  ASSERT_OK(fleet__backend_call(fleet__client_backend(&e->c1), op, &key, 1,
                                args, argc, fence_on_raw, &f));
  ASSERT(lock_env_wait(e, &f.done, 1, 5000));
  ASSERT_OK(f.status);
  return f;
}

/* Fires the occurrence at `fire_ms` (long past) of a cron definition with
 * the CRON_FIRE op itself, min_token `min`; returns its token. */
static int64_t fence_cron_fire(lock_env_t *e, int fire_ms, const char *min) {
  const char *a[16] = {"ns", "k", "node", "100", "0", min, "",   "",
                       "0",  "1", "0",    "0",   "0", "1", NULL, "f"};
  char at[24];
  fence_raw_t f;

  snprintf(at, sizeof(at), "%d", fire_ms);
  a[14] = at;
  f = fence_raw(e, FLEET__OP_CRON_FIRE, "{fence:cron}", a, 16);
  ASSERT_UEQ(4, f.n);
  ASSERT_EQ(1, f.v[2]); /* fired */
  return f.v[3];
}

/* Dispatches job `key` to worker x/1 of pool {fence:pool} (membership
 * revision `rev`); returns its token. */
static int64_t fence_pool_dispatch(lock_env_t *e, const char *key,
                                   const char *rev) {
  const char *a[9] = {"x", "i1", "0", key, "p", rev, "x/1", "x", "0"};
  fence_raw_t f = fence_raw(e, FLEET__OP_POOL_DISPATCH, "{fence:pool}", a, 9);

  ASSERT_UEQ(4, f.n);
  ASSERT_EQ(1, f.v[2]); /* admitted */
  return f.v[3];
}

static void fence_on_queue_closed(fleet_handle_t *h) {
  (*(int *)h->data)++;
}

CONFORMANCE_IMPL(fence_epochs) {
  fleet_job_spec_t specs[3];
  fleet_queue_t q;
  lock_info_t info;
  uint64_t t, top;
  lock_rec_t a;
  lock_env_t e;
  fence_q_t f;
  int i, closed = 0;

  lock_env_init(&e, b->url);
  ASSERT_OK(lock_rec_init(&a, &e.c1, "f", "alpha", 5000, NULL));

  /* Epoch 0 (one Redis, memory): INCR, from 1. */
  ASSERT_OK(fence_take(&e, &a, &t));
  ASSERT_UEQ(1, t);
  ASSERT_OK(fence_take(&e, &a, &t));
  ASSERT_UEQ(2, t);

  /* A failover to epoch 3: above everything before, then counting on. */
  fence_set(&e.c1, "3");
  ASSERT_OK(fence_take(&e, &a, &t));
  ASSERT_UEQ(3 * FENCE_2_32 + 1, t);
  ASSERT_OK(fence_take(&e, &a, &t));
  ASSERT_UEQ(3 * FENCE_2_32 + 2, t);

  /* A lower epoch (a stale master) never lowers the counter; nor does 0. */
  fence_set(&e.c1, "1");
  ASSERT_OK(fence_take(&e, &a, &t));
  ASSERT_UEQ(3 * FENCE_2_32 + 3, t);
  fence_set(&e.c1, "0");
  ASSERT_OK(fence_take(&e, &a, &t));
  ASSERT_UEQ(3 * FENCE_2_32 + 4, t);
  top = t;

  /* Out of range (tokens would pass 2^53) or malformed: refused, nothing
   * written. */
  fence_set(&e.c1, "2097152");
  ASSERT_ERR(FLEET_E2BIG, fence_take(&e, &a, &t));
  fence_set(&e.c1, "x1");
  ASSERT_ERR(FLEET_EPROTO, fence_take(&e, &a, &t));
  info = lock_env_query(&e, &e.c1, "f");
  ASSERT_OK(info.status);
  ASSERT_EQ(0, info.held);
  ASSERT_UEQ(top, info.fence);

  /* The largest epoch: exact tokens just below 2^53. */
  fence_set(&e.c1, "2097151");
  ASSERT_OK(fence_take(&e, &a, &t));
  ASSERT_UEQ(2097151 * FENCE_2_32 + 1, t);
  ASSERT_OK(fence_take(&e, &a, &t));
  ASSERT_UEQ(2097151 * FENCE_2_32 + 2, t);

  /* A queue's claims follow the same rules. */
  fence_set(&e.c1, "0");
  ASSERT_OK(fleet_queue_init(&e.c1, &q, "fq", NULL));
  q.data = &closed;
  for (i = 0; i < 3; i++)
    fleet_job_spec_init(&specs[i], "t", "x", 1);
  memset(&f, 0, sizeof(f));
  ASSERT_OK(fleet_queue_enqueue(&q, specs, 3, fence_on_enqueue, &f));
  ASSERT(lock_env_wait(&e, &f.done, 1, 5000));
  ASSERT_OK(f.status);
  ASSERT_UEQ(1, fence_claim(&e, &q));
  fence_set(&e.c1, "7");
  ASSERT_UEQ(7 * FENCE_2_32 + 1, fence_claim(&e, &q));
  fence_set(&e.c1, "6");
  ASSERT_UEQ(7 * FENCE_2_32 + 2, fence_claim(&e, &q));
  ASSERT_OK(fleet_queue_close(&q, fence_on_queue_closed));
  ASSERT(lock_env_wait(&e, &closed, 1, 5000));

  /* And a cron definition's occurrences, whose min_token (the last token
   * the node saw) is a floor that the epoch does not add to. */
  fence_set(&e.c1, "0");
  ASSERT_EQ(1, fence_cron_fire(&e, 1000, "0"));
  ASSERT_EQ(10, fence_cron_fire(&e, 2000, "9"));
  fence_set(&e.c1, "2");
  ASSERT_EQ(2 * (int64_t)FENCE_2_32 + 1, fence_cron_fire(&e, 3000, "10"));
  fence_set(&e.c1, "1");
  ASSERT_EQ(2 * (int64_t)FENCE_2_32 + 2, fence_cron_fire(&e, 4000, "0"));
  ASSERT_EQ(2 * (int64_t)FENCE_2_32 + 100,
            fence_cron_fire(&e, 5000, "8589934691"));

  /* And a pool's assignments, whose first token is the server clock in ms
   * (a pool that lost its data still grants above what it granted): after
   * an epoch jump they start above epoch * 2^32 plus the clock, and a
   * lower epoch never lowers them. */
  {
    static const char *const join[] = {"x", "fence-nonce", "60000", "60000",
                                       "0", "1",           "x/1"};
    int64_t p0, p1, p2, p3;
    char rev[24];

    fence_set(&e.c1, "0");
    snprintf(rev, sizeof(rev), "%" PRId64,
             fence_raw(&e, FLEET__OP_POOL_JOIN, "{fence:pool}", join, 7).v[0]);
    p0 = fence_pool_dispatch(&e, "j0", rev);
    ASSERT_GT(p0, 1000000000000LL); /* the clock seed, in ms since 1970 */
    ASSERT_EQ(p0 + 1, fence_pool_dispatch(&e, "j1", rev));
    fence_set(&e.c1, "3");
    p1 = fence_pool_dispatch(&e, "j2", rev);
    ASSERT_GT(p1, 3 * (int64_t)FENCE_2_32 + p0 - 1000);
    p2 = fence_pool_dispatch(&e, "j3", rev);
    ASSERT_GT(p2, p1);
    fence_set(&e.c1, "2");
    p3 = fence_pool_dispatch(&e, "j4", rev);
    ASSERT_GT(p3, p2);
  }

  ASSERT_EQ(0, a.lost);
  lock_rec_close(&e, &a);
  lock_env_close(&e);
}
