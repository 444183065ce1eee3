/* test_queue_twin.c -- the memory twins against the Lua scripts: one random
 * sequence of queue calls (a fixed seed) runs on a memory client and on a
 * Redis client in lockstep, and every answer must be the same, times
 * aside. */
#include "test_queue_util.h"

#define TWIN_STEPS 1500
#define TWIN_HELD 64

/* The two sides. */
typedef struct {
  qt_t mem, red;
  uint64_t rng;
  /* Claims seen (the same on both sides when the test passes). */
  qt_job_t held[TWIN_HELD];
  int nheld;
  int next_user_id;
} twin_t;

static uint32_t twin_rand(twin_t *tw, uint32_t n) {
  tw->rng ^= tw->rng << 13;
  tw->rng ^= tw->rng >> 7;
  tw->rng ^= tw->rng << 17;
  return (uint32_t)(tw->rng % n);
}

static void twin_enqueue(twin_t *tw) {
  static const char *const types[] = {"a", "b", "c"};
  static const char *const uniques[] = {"u1", "u2", "u3", "u4"};
  char ids[8][FLEET_JOB_ID_MAX + 1], ids2[8][FLEET_JOB_ID_MAX + 1];
  char user[8][16], payload[8][16];
  fleet_job_spec_t specs[8];
  int st[8], st2[8];
  uint32_t n = 1 + twin_rand(tw, 8), i;

  for (i = 0; i < n; i++) {
    snprintf(payload[i], sizeof(payload[i]), "p%u", twin_rand(tw, 1000));
    fleet_job_spec_init(&specs[i], types[twin_rand(tw, 3)], payload[i],
                        strlen(payload[i]));
    specs[i].priority = (int)twin_rand(tw, 5) - 2;
    specs[i].max_attempts = 1 + twin_rand(tw, 3);
    specs[i].backoff = FLEET_BACKOFF_FIXED;
    specs[i].backoff_ms = 60000; /* a retry stays delayed */
    if (twin_rand(tw, 4) == 0) {
      /* Own ids, sometimes one that exists. */
      snprintf(user[i], sizeof(user[i]), "job-%u",
               twin_rand(tw, 4) == 0 ? 0 : tw->next_user_id++);
      specs[i].id = user[i];
    }
    if (twin_rand(tw, 5) == 0) {
      specs[i].unique_key = uniques[twin_rand(tw, 4)];
      specs[i].unique_ttl_ms = 600000;
    }
    if (twin_rand(tw, 6) == 0)
      specs[i].delay_ms = 600000;
  }
  ASSERT_OK(qt_enqueue(&tw->mem, specs, n, st, ids));
  ASSERT_OK(qt_enqueue(&tw->red, specs, n, st2, ids2));
  for (i = 0; i < n; i++) {
    ASSERT_ERR(st[i], st2[i]);
    ASSERT_STR_EQ(ids[i], ids2[i]);
  }
}

static void twin_claim(twin_t *tw) {
  qt_job_t a[8], b[8];
  uint32_t n = twin_rand(tw, 6), ttl = twin_rand(tw, 4) == 0 ? 1 : 600000;
  int ka, kb, i;

  ka = qt_claim(&tw->mem, n, ttl, a);
  kb = qt_claim(&tw->red, n, ttl, b);
  ASSERT_EQ(ka, kb);
  ASSERT_GE(ka, 0);
  ASSERT_UEQ(tw->mem.claim_info.pending, tw->red.claim_info.pending);
  ASSERT_EQ(tw->mem.claim_info.next_run_at_ms == 0,
            tw->red.claim_info.next_run_at_ms == 0);
  for (i = 0; i < ka; i++) {
    ASSERT_STR_EQ(a[i].id, b[i].id);
    ASSERT_STR_EQ(a[i].type, b[i].type);
    ASSERT_STR_EQ(a[i].payload, b[i].payload);
    ASSERT_EQ(a[i].attempts, b[i].attempts);
    ASSERT_EQ(a[i].max_attempts, b[i].max_attempts);
    ASSERT_UEQ(a[i].token, b[i].token);
    if (tw->nheld == TWIN_HELD) {
      memmove(tw->held, tw->held + 1, (TWIN_HELD - 1) * sizeof(tw->held[0]));
      tw->nheld--;
    }
    tw->held[tw->nheld++] = a[i];
  }
  /* Claims that expire at once: the next ones must not share their
   * deadline, or recovery (which goes by deadline, then id) could take
   * them in another order on each side. */
  if (ttl == 1)
    qt_sleep(&tw->mem, 2);
}

/* A batch of claims from those seen: some stale, some twice. */
static size_t twin_pick(twin_t *tw, fleet_claim_t *claims, size_t max) {
  size_t n = 0, want;

  if (tw->nheld == 0)
    return 0;
  want = 1 + twin_rand(tw, (uint32_t)max);
  while (n < want) {
    /* Mostly the newest claims, which are likely still held. */
    uint32_t k = twin_rand(tw, 3) == 0
                     ? twin_rand(tw, (uint32_t)tw->nheld)
                     : (uint32_t)tw->nheld - 1 -
                           twin_rand(tw, tw->nheld < 8 ? tw->nheld : 8);
    claims[n] = qt_claim_of(&tw->held[k]);
    if (n > 0 && twin_rand(tw, 4) == 0)
      claims[n] = claims[n - 1]; /* the same claim twice */
    if (twin_rand(tw, 8) == 0)
      claims[n].token += 1 + twin_rand(tw, 3);
    n++;
  }
  return n;
}

static void twin_batch(twin_t *tw, int which) {
  fleet_claim_t claims[6];
  int ra[6], rb[6], sa, sb;
  size_t n = twin_pick(tw, claims, 6), i;

  if (n == 0)
    return;
  if (which == 0) {
    sa = qt_complete(&tw->mem, claims, n, ra);
    sb = qt_complete(&tw->red, claims, n, rb);
  } else if (which == 1) {
    sa = qt_release(&tw->mem, claims, n, ra);
    sb = qt_release(&tw->red, claims, n, rb);
  } else {
    sa = qt_refresh(&tw->mem, claims, n, 600000, ra);
    sb = qt_refresh(&tw->red, claims, n, 600000, rb);
  }
  ASSERT_OK(sa);
  ASSERT_OK(sb);
  for (i = 0; i < n; i++)
    ASSERT_ERR(ra[i], rb[i]);
}

static void twin_fail(twin_t *tw) {
  fleet_claim_t claim;

  if (twin_pick(tw, &claim, 1) == 0)
    return;
  ASSERT_ERR(qt_fail(&tw->mem, &claim, "boom"),
             qt_fail(&tw->red, &claim, "boom"));
  ASSERT_EQ(tw->mem.dead, tw->red.dead);
}

static void twin_get(twin_t *tw) {
  char id[16], pa[64], pb[64], ea[64], eb[64];
  fleet_job_info_t a, b;
  int sa, sb;

  snprintf(id, sizeof(id), "%u", 1 + twin_rand(tw, 200));
  if (twin_rand(tw, 3) == 0)
    snprintf(id, sizeof(id), "job-%u", twin_rand(tw, 40));
  sa = qt_get(&tw->mem, id, &a, pa, sizeof(pa), ea, sizeof(ea));
  sb = qt_get(&tw->red, id, &b, pb, sizeof(pb), eb, sizeof(eb));
  ASSERT_ERR(sa, sb);
  if (sa != 0)
    return;
  ASSERT_EQ(a.state, b.state);
  ASSERT_EQ(a.attempts, b.attempts);
  ASSERT_EQ(a.max_attempts, b.max_attempts);
  ASSERT_EQ(a.priority, b.priority);
  ASSERT_UEQ(a.token, b.token);
  ASSERT_EQ(a.finished_ms == 0, b.finished_ms == 0);
  ASSERT_STR_EQ(pa, pb);
  ASSERT_STR_EQ(ea, eb);
  if (twin_rand(tw, 4) == 0)
    ASSERT_ERR(qt_cancel(&tw->mem, id), qt_cancel(&tw->red, id));
}

static int twin_cmp(const void *a, const void *b) {
  return strcmp(a, b);
}

static void twin_counts_list(twin_t *tw) {
  static const char *const types[] = {"a", "b", "c"};
  char la[64][FLEET_JOB_ID_MAX + 1], lb[64][FLEET_JOB_ID_MAX + 1];
  const char *type = types[twin_rand(tw, 3)];
  uint64_t ta, tb;
  size_t na, nb, i;

  ASSERT_OK(qt_counts(&tw->mem));
  ASSERT_OK(qt_counts(&tw->red));
  ASSERT_OK(memcmp(&tw->mem.counts, &tw->red.counts, sizeof(tw->mem.counts)));
  ASSERT_OK(qt_list(&tw->mem, type, 64, la, &na, &ta));
  ASSERT_OK(qt_list(&tw->red, type, 64, lb, &nb, &tb));
  ASSERT_UEQ(ta, tb);
  ASSERT_EQ(na, nb);
  if (ta > 64)
    return; /* a different subset of the same set */
  qsort(la, na, sizeof(la[0]), twin_cmp);
  qsort(lb, nb, sizeof(lb[0]), twin_cmp);
  for (i = 0; i < na; i++)
    ASSERT_STR_EQ(la[i], lb[i]);
}

static void twin_recover(twin_t *tw) {
  /* Claims made with a 1 ms TTL have expired on both sides. */
  qt_sleep(&tw->mem, 3);
  ASSERT_OK(qt_recover(&tw->mem));
  ASSERT_OK(qt_recover(&tw->red));
  ASSERT_UEQ(tw->mem.recover_info.requeued, tw->red.recover_info.requeued);
  ASSERT_UEQ(tw->mem.recover_info.dead, tw->red.recover_info.dead);
}

TEST_IMPL(queue_twin_differential) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_queue_options_t o;
  twin_t tw;
  int step;

  memset(&tw, 0, sizeof(tw));
  tw.rng = 0x2545f4914f6cdd1dULL;
  /* Small retention, so that trims happen. */
  fleet_queue_options_init(&o);
  o.keep_completed = 7;
  o.keep_dead = 5;
  qt_open(&tw.mem, "memory://", "twin", &o);
  qt_open(&tw.red, fleet_test_redis_url(r), "twin", &o);
  for (step = 0; step < TWIN_STEPS; step++) {
    switch (twin_rand(&tw, 10)) {
      case 0:
      case 1:
        twin_enqueue(&tw);
        break;
      case 2:
      case 3:
        twin_claim(&tw);
        break;
      case 4:
        twin_batch(&tw, 0);
        break;
      case 5:
        twin_batch(&tw, twin_rand(&tw, 2) + 1);
        break;
      case 6:
        twin_fail(&tw);
        break;
      case 7:
        twin_get(&tw);
        break;
      case 8:
        twin_counts_list(&tw);
        break;
      default:
        if (twin_rand(&tw, 4) == 0)
          twin_recover(&tw);
        else if (twin_rand(&tw, 8) == 0)
          ASSERT_UEQ((qt_purge(&tw.mem, FLEET_JOB_DEAD), tw.mem.removed),
                     (qt_purge(&tw.red, FLEET_JOB_DEAD), tw.red.removed));
        break;
    }
  }
  twin_counts_list(&tw);
  ASSERT_UGT(tw.mem.counts.completed, 10);
  ASSERT_UGT(tw.mem.counts.dead, 3);
  qt_close(&tw.mem);
  qt_close(&tw.red);
  fleet_test_redis_free(r);
  return 0;
}
