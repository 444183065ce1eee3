/* test_fence.c -- the epoch rules of lib/fence.lua on both backends,
 * through the lock and a queue claim: epoch 0 counts as INCR always did,
 * an epoch jump gives a token above every earlier one, a lower epoch
 * never lowers the counter, and an epoch out of range or malformed is
 * refused with nothing written. The epoch a failover would bring is set
 * on the backend directly (fleet__backend_set_epoch()); the failovers
 * themselves are in test_fence_mp.c and test_sentinel.c. */
#include <stdio.h>
#include <string.h>

#include "client.h"
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

  ASSERT_EQ(0, a.lost);
  lock_rec_close(&e, &a);
  lock_env_close(&e);
}
