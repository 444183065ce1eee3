/* test_cron.c -- the cron scheduler on both adapters: bad input refused
 * with a clear error; the registry (define, update, enable, disable,
 * remove, list, created/updated times); two schedulers of one namespace
 * firing a 1-second definition, each occurrence exactly once, tokens
 * strictly increasing, outcomes in the dispatch log; a queue-targeted
 * definition enqueueing "<key>@<fire_ms>"; a change made through one
 * scheduler followed by the other; the three catch-up policies after no
 * scheduler ran; an occurrence in the log never fired again; and a
 * scheduler closed from inside its fire callback. */
#include "backend.h"
#include "core/client.h"
#include "cron/cron_sched_int.h"
#include "test_lock_env.h"

#define REC_MAX 512

typedef struct {
  char key[64];
  int64_t fire_ms;
  uint64_t token;
  int node;
} rec_t;

/* What the schedulers of a test fired. */
typedef struct {
  rec_t r[REC_MAX];
  int n;
  const char *fail_key; /* complete fires of this key as failed */
} fired_t;

typedef struct {
  fleet_cron_scheduler_t s;
  int node;
  fired_t *log;
  int closed;
  int errors, last_error; /* with on_pool_sched_error */
} node_t;

static void on_fire(fleet_cron_scheduler_t *s, fleet_cron_fire_t *fire) {
  node_t *n = s->data;
  rec_t *r;

  ASSERT_LT(n->log->n, REC_MAX);
  r = &n->log->r[n->log->n++];
  snprintf(r->key, sizeof(r->key), "%s", fire->key);
  r->fire_ms = fire->fire_ms;
  r->token = fire->token;
  r->node = n->node;
  ASSERT_GE(fire->dispatched_ms, fire->fire_ms);
  ASSERT_OK(fleet_cron_complete(
      fire, n->log->fail_key != NULL && strcmp(fire->key, n->log->fail_key) == 0
                ? "boom"
                : NULL));
}

static void on_closed(fleet_handle_t *h) {
  ((node_t *)h->data)->closed = 1;
}

/* Starts node "node<id>" of namespace "ns" on `c` with the options `o`. */
static void node_init_with(node_t *n, fleet_client_t *c, int id, fired_t *log,
                           const fleet_cron_scheduler_options_t *o) {
  char name[16];

  memset(n, 0, sizeof(*n));
  n->node = id;
  n->log = log;
  n->s.data = n;
  snprintf(name, sizeof(name), "node%d", id);
  ASSERT_OK(fleet_cron_scheduler_init(c, &n->s, "ns", name, o));
}

static void node_init(lock_env_t *e, node_t *n, fleet_client_t *c, int id,
                      fired_t *log, uint32_t grace_ms) {
  fleet_cron_scheduler_options_t o;

  (void)e;
  fleet_cron_scheduler_options_init(&o);
  o.grace_ms = grace_ms;
  o.check_ms = 200;
  node_init_with(n, c, id, log, &o);
}

static void node_close(lock_env_t *e, node_t *n) {
  ASSERT_OK(fleet_cron_scheduler_close(&n->s, on_closed));
  ASSERT(lock_env_wait(e, &n->closed, 1, FLEET_TEST_WAIT_MS));
}

/* ---- synchronous-looking calls ---- */

typedef struct {
  int done, status;
  fleet_cron_def_t defs[8];
  char keys[8][64], exprs[8][64], pools[8][64];
  size_t n;
  fleet_cron_entry_t ent[64];
  char outcomes[64][64], nodes[64][16];
} call_t;

static void on_status(fleet_handle_t *h, int status, void *arg) {
  call_t *c = arg;

  (void)h;
  c->status = status;
  c->done = 1;
}

static void on_list(fleet_cron_scheduler_t *s, int status,
                    const fleet_cron_def_t *defs, size_t n, void *arg) {
  call_t *c = arg;
  size_t i;

  (void)s;
  c->status = status;
  c->n = n < 8 ? n : 8;
  for (i = 0; i < c->n; i++) {
    c->defs[i] = defs[i];
    snprintf(c->keys[i], 64, "%s", defs[i].key);
    snprintf(c->exprs[i], 64, "%s", defs[i].expr);
    c->defs[i].key = c->keys[i];
    c->defs[i].expr = c->exprs[i];
    c->defs[i].tz = NULL;
    c->defs[i].queue = NULL;
    snprintf(c->pools[i], 64, "%s", defs[i].pool != NULL ? defs[i].pool : "");
    c->defs[i].pool = defs[i].pool != NULL ? c->pools[i] : NULL;
    c->defs[i].payload.base = NULL;
    c->defs[i].metadata.base = NULL;
  }
  c->done = 1;
}

static void on_history(fleet_cron_scheduler_t *s, int status,
                       const fleet_cron_entry_t *e, size_t n, void *arg) {
  call_t *c = arg;
  size_t i;

  (void)s;
  c->status = status;
  c->n = n < 64 ? n : 64;
  for (i = 0; i < c->n; i++) {
    c->ent[i] = e[i];
    snprintf(c->outcomes[i], 64, "%s", e[i].outcome);
    snprintf(c->nodes[i], 16, "%s", e[i].node);
    c->ent[i].outcome = c->outcomes[i];
    c->ent[i].node = c->nodes[i];
  }
  c->done = 1;
}

static int c_define(lock_env_t *e, node_t *n, const char *key, const char *expr,
                    int policy, const char *queue, fleet_cron_mode_t mode) {
  fleet_cron_def_t d;
  call_t c = {0};

  fleet_cron_def_init(&d);
  d.key = key;
  d.expr = expr;
  d.queue = queue;
  d.catch_up = (fleet_cron_catch_up_t)policy;
  d.payload.base = "pl";
  d.payload.len = 2;
  ASSERT_OK(fleet_cron_define(&n->s, &d, mode, NULL, 0, on_status, &c));
  ASSERT(lock_env_wait(e, &c.done, 1, FLEET_TEST_WAIT_MS));
  return c.status;
}

static int c_enable(lock_env_t *e, node_t *n, const char *key, int on) {
  call_t c = {0};

  ASSERT_OK(fleet_cron_enable(&n->s, key, on, on_status, &c));
  ASSERT(lock_env_wait(e, &c.done, 1, FLEET_TEST_WAIT_MS));
  return c.status;
}

static int c_remove(lock_env_t *e, node_t *n, const char *key) {
  call_t c = {0};

  ASSERT_OK(fleet_cron_remove(&n->s, key, on_status, &c));
  ASSERT(lock_env_wait(e, &c.done, 1, FLEET_TEST_WAIT_MS));
  return c.status;
}

static void c_list(lock_env_t *e, node_t *n, const char *key, call_t *c) {
  memset(c, 0, sizeof(*c));
  ASSERT_OK(fleet_cron_list(&n->s, key, on_list, c));
  ASSERT(lock_env_wait(e, &c->done, 1, FLEET_TEST_WAIT_MS));
}

static void c_history(lock_env_t *e, node_t *n, const char *key, call_t *c) {
  memset(c, 0, sizeof(*c));
  ASSERT_OK(fleet_cron_history(&n->s, key, 64, on_history, c));
  ASSERT(lock_env_wait(e, &c->done, 1, FLEET_TEST_WAIT_MS));
}

static void never_status(fleet_handle_t *h, int status, void *arg) {
  (void)h;
  (void)status;
  (void)arg;
  ASSERT(0);
}

/* ------------------------------------------------------------------------ */

CONFORMANCE_IMPL(cron_bad_input) {
  lock_env_t e;
  node_t n;
  fired_t log = {0};
  fleet_cron_scheduler_t s;
  fleet_cron_def_t d;
  fleet_cron_fire_t fake;
  char err[128], big[400];

  lock_env_init(&e, b->url);
  ASSERT_ERR(FLEET_EINVAL,
             fleet_cron_scheduler_init(NULL, &s, "ns", "a", NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_cron_scheduler_init(&e.c1, NULL, "ns", "a", NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_scheduler_init(&e.c1, &s, "", "a", NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_cron_scheduler_init(&e.c1, &s, "a:b", "a", NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_cron_scheduler_init(&e.c1, &s, "ns", NULL, NULL));
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  ASSERT_ERR(FLEET_E2BIG, fleet_cron_scheduler_init(&e.c1, &s, big, "a", NULL));
  ASSERT_NULL(s.internal_);
  {
    fleet_cron_scheduler_options_t o;

    fleet_cron_scheduler_options_init(&o);
    ASSERT_EQ(1000, o.claim_ahead_ms);
    o.claim_ahead_ms = 60001;
    ASSERT_ERR(FLEET_EINVAL,
               fleet_cron_scheduler_init(&e.c1, &s, "ns", "a", &o));
    ASSERT_NULL(s.internal_);
  }

  node_init(&e, &n, &e.c1, 1, &log, 1000);
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_scheduler_start(&n.s, NULL));
  fleet_cron_def_init(&d);
  d.key = "k";
  d.expr = "* * * 13 *";
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_define(&n.s, &d, FLEET_CRON_UPSERT, err,
                                             sizeof(err), never_status, NULL));
  /* The parser's message names the field. */
  ASSERT(strstr(err, "month") != NULL);
  d.expr = "0 * * * *";
  d.tz = "Nowhere/Atlantis";
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_define(&n.s, &d, FLEET_CRON_UPSERT, err,
                                             sizeof(err), never_status, NULL));
  ASSERT(strstr(err, "Nowhere/Atlantis") != NULL);
  d.tz = NULL;
  d.catch_up = (fleet_cron_catch_up_t)7;
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_define(&n.s, &d, FLEET_CRON_UPSERT, NULL,
                                             0, never_status, NULL));
  d.catch_up = FLEET_CRON_CATCH_UP_ALL;
  d.catch_up_max = 1001;
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_define(&n.s, &d, FLEET_CRON_UPSERT, NULL,
                                             0, never_status, NULL));
  d.catch_up_max = 0;
  d.key = big;
  ASSERT_ERR(FLEET_E2BIG, fleet_cron_define(&n.s, &d, FLEET_CRON_UPSERT, NULL,
                                            0, never_status, NULL));
  d.key = "";
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_define(&n.s, &d, FLEET_CRON_UPSERT, NULL,
                                             0, never_status, NULL));
  d.key = "k";
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_define(&n.s, &d, FLEET_CRON_UPSERT, NULL,
                                             0, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_history(&n.s, "k", 0, on_history, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_cron_history(&n.s, "k", 1001, on_history, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_cron_enable(&n.s, NULL, 1, never_status, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_complete(NULL, NULL));
  memset(&fake, 0, sizeof(fake));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_complete(&fake, NULL));
  /* Missing keys are reported, not created. */
  ASSERT_ERR(FLEET_ENOTFOUND, c_enable(&e, &n, "missing", 1));
  ASSERT_ERR(FLEET_ENOTFOUND, c_remove(&e, &n, "missing"));
  ASSERT_ERR(FLEET_ENOTFOUND, c_define(&e, &n, "missing", "* * * * *", 0, NULL,
                                       FLEET_CRON_UPDATE));
  node_close(&e, &n);
  lock_env_close(&e);
}

CONFORMANCE_IMPL(cron_registry) {
  lock_env_t e;
  node_t n;
  fired_t log = {0};
  call_t c;

  lock_env_init(&e, b->url);
  node_init(&e, &n, &e.c1, 1, &log, 1000);
  ASSERT_OK(c_define(&e, &n, "a", "0 3 * * *", FLEET_CRON_CATCH_UP_LATEST, NULL,
                     FLEET_CRON_CREATE));
  ASSERT_ERR(FLEET_EEXIST,
             c_define(&e, &n, "a", "0 4 * * *", 0, NULL, FLEET_CRON_CREATE));
  ASSERT_OK(c_define(&e, &n, "b", "@every 5s", 0, "q", FLEET_CRON_UPSERT));
  c_list(&e, &n, NULL, &c);
  ASSERT_OK(c.status);
  ASSERT_EQ(2, c.n);
  ASSERT_STR_EQ("a", c.defs[0].key);
  ASSERT_STR_EQ("0 3 * * *", c.defs[0].expr);
  ASSERT_EQ(FLEET_CRON_CATCH_UP_LATEST, c.defs[0].catch_up);
  ASSERT_EQ(10, c.defs[0].catch_up_max);
  ASSERT_EQ(0, c.defs[0].disabled);
  ASSERT_GT(c.defs[0].created_ms, 0);
  ASSERT_EQ(c.defs[0].created_ms, c.defs[0].updated_ms);
  ASSERT_EQ(-1, c.defs[0].last_fire_ms);
  /* Next due: 03:00 UTC of some day, after the creation. */
  ASSERT_GT(c.defs[0].next_due_ms, c.defs[0].created_ms);
  ASSERT_EQ(3 * 3600000, c.defs[0].next_due_ms % 86400000);
  ASSERT_STR_EQ("b", c.defs[1].key);
  ASSERT_EQ(0, c.defs[1].next_due_ms % 5000);

  lock_env_sleep(&e, 5);
  ASSERT_OK(c_define(&e, &n, "a", "0 4 * * *", 0, NULL, FLEET_CRON_UPDATE));
  c_list(&e, &n, "a", &c);
  ASSERT_OK(c.status);
  ASSERT_EQ(1, c.n);
  ASSERT_STR_EQ("0 4 * * *", c.defs[0].expr);
  ASSERT_GT(c.defs[0].updated_ms, c.defs[0].created_ms);
  ASSERT_EQ(4 * 3600000, c.defs[0].next_due_ms % 86400000);

  ASSERT_OK(c_enable(&e, &n, "a", 0));
  c_list(&e, &n, "a", &c);
  ASSERT_EQ(1, c.defs[0].disabled);
  ASSERT_EQ(-1, c.defs[0].next_due_ms);
  ASSERT_OK(c_enable(&e, &n, "a", 1));
  c_list(&e, &n, "a", &c);
  ASSERT_EQ(0, c.defs[0].disabled);

  ASSERT_OK(c_remove(&e, &n, "a"));
  c_list(&e, &n, "a", &c);
  ASSERT_ERR(FLEET_ENOTFOUND, c.status);
  c_list(&e, &n, NULL, &c);
  ASSERT_EQ(1, c.n);
  c_history(&e, &n, "a", &c);
  ASSERT_ERR(FLEET_ENOTFOUND, c.status);
  c_history(&e, &n, "b", &c);
  ASSERT_OK(c.status);
  ASSERT_EQ(0, c.n);
  node_close(&e, &n);
  lock_env_close(&e);
}

/* The wall clock in ms: the server's clock on both backends here. */
static int64_t now_wall_ms(void) {
  uv_timeval64_t tv;

  ASSERT_OK(uv_gettimeofday(&tv));
  return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* Checks that the records of `key` in `log` are one per occurrence:
 * consecutive seconds, strictly increasing tokens. Returns how many. */
static int check_once(const fired_t *log, const char *key) {
  int64_t prev_fire = -1;
  uint64_t prev_tok = 0;
  int i, n = 0;

  for (i = 0; i < log->n; i++) {
    const rec_t *r = &log->r[i];

    if (strcmp(r->key, key) != 0)
      continue;
    if (prev_fire >= 0) {
      ASSERT_EQ(prev_fire + 1000, r->fire_ms);
      ASSERT_UGT(r->token, prev_tok);
    }
    ASSERT_EQ(0, r->fire_ms % 1000);
    prev_fire = r->fire_ms;
    prev_tok = r->token;
    n++;
  }
  return n;
}

/* Checks the dispatch log of `key` (read into `c`) against the callbacks'
 * records in `log`: each occurrence logged once (fire times one second
 * apart, newest first, none missed), by node1 or node2; every occurrence
 * a callback saw is in the log with the same node and token, with `done`
 * (its completion's outcome) or still "dispatched" when the close cut its
 * completion. What is not final is allowed only at the close of its node
 * (closing[k - 1]: when node k's close began; claimed no earlier than
 * `margin` ms before it), at most one per node: a completion cut, and a
 * claim answered while its node closed, which is logged but never
 * delivered ("dispatched", or the close's "failed: the scheduler closed
 * before its time" for one claimed ahead; newer than every occurrence that
 * node delivered). So a double fire, a lost fire and a fire the log does not
 * hold all fail. Returns how many entries were not delivered. */
static int check_history(const call_t *c, const fired_t *log, const char *key,
                         const char *done, const int64_t *closing,
                         int64_t margin) {
  int undelivered[2] = {0, 0}, cut[2] = {0, 0};
  int i, k, fired = 0, matched = 0;

  for (k = 0; k < log->n; k++)
    fired += strcmp(log->r[k].key, key) == 0;
  for (i = 0; i < (int)c->n; i++) {
    const fleet_cron_entry_t *ent = &c->ent[i];
    const rec_t *seen = NULL;
    int node;

    for (k = 0; k < log->n; k++)
      if (strcmp(log->r[k].key, key) == 0 &&
          log->r[k].fire_ms == ent->fire_ms) {
        ASSERT_NULL(seen); /* a callback per occurrence */
        seen = &log->r[k];
      }
    ASSERT(strcmp(ent->node, "node1") == 0 || strcmp(ent->node, "node2") == 0);
    node = ent->node[4] - '0';
    if (i > 0)
      ASSERT_EQ(c->ent[i - 1].fire_ms - 1000, ent->fire_ms);
    if (seen != NULL) {
      matched++;
      ASSERT_EQ(seen->node, node);
      ASSERT_UEQ(seen->token, ent->token);
      if (strcmp(ent->outcome, done) == 0) {
        ASSERT_GT(ent->finished_ms, 0);
        continue;
      }
      /* Delivered, its completion cut: only at the close of its node. */
      ASSERT_STR_EQ("dispatched", ent->outcome);
      ASSERT_GE(ent->dispatched_ms, closing[node - 1] - margin);
      ASSERT_LT(cut[node - 1]++, 1);
      continue;
    }
    /* Claimed, never delivered: only at the close of its node, after
     * every occurrence that node delivered ("dispatched", or claimed
     * ahead and not due yet when the close came). */
    if (strcmp(ent->outcome, "dispatched") != 0)
      ASSERT_STR_EQ("failed: the scheduler closed before its time",
                    ent->outcome);
    ASSERT_GE(ent->dispatched_ms, closing[node - 1] - margin);
    for (k = 0; k < log->n; k++)
      if (strcmp(log->r[k].key, key) == 0 && log->r[k].node == node)
        ASSERT_LT(log->r[k].fire_ms, ent->fire_ms);
    ASSERT_LT(undelivered[node - 1]++, 1);
  }
  ASSERT_EQ(fired, matched);
  return undelivered[0] + undelivered[1];
}

CONFORMANCE_IMPL(cron_fire_once) {
  lock_env_t e;
  node_t n1, n2;
  fired_t log = {0};
  call_t c;
  int64_t closing[2], margin;
  int seen1 = 0, seen2 = 0, i, fired;

  lock_env_init(&e, b->url);
  log.fail_key = "f";
  node_init(&e, &n1, &e.c1, 1, &log, 2000);
  node_init(&e, &n2, &e.c2, 2, &log, 2000);
  ASSERT_OK(c_define(&e, &n1, "s", "* * * * * *", 0, NULL, FLEET_CRON_UPSERT));
  ASSERT_OK(c_define(&e, &n1, "f", "* * * * * *", 0, NULL, FLEET_CRON_UPSERT));
  ASSERT_OK(fleet_cron_scheduler_start(&n1.s, on_fire));
  ASSERT_OK(fleet_cron_scheduler_start(&n2.s, on_fire));
  ASSERT_ERR(FLEET_EALREADY, fleet_cron_scheduler_start(&n2.s, on_fire));
  /* The close begins just as an occurrence falls due, so that a claim may
   * be answered while it runs (check_history() allows that case, and only
   * that one). A claim whose answer came in as the loop stopped is read
   * during the close: its server time is at most a moment before it. */
  lock_env_sleep(&e, 4000);
  lock_env_sleep(&e, (uint64_t)(1000 - now_wall_ms() % 1000) + 1);
  margin = (int64_t)fleet_test_ms(100);
  closing[0] = now_wall_ms();
  node_close(&e, &n1);
  closing[1] = now_wall_ms();
  node_close(&e, &n2);
  fired = check_once(&log, "s");
  ASSERT_GE(fired, 3);
  ASSERT_GE(check_once(&log, "f"), 3);
  for (i = 0; i < log.n; i++) {
    seen1 += log.r[i].node == 1;
    seen2 += log.r[i].node == 2;
  }
  ASSERT_EQ(log.n, seen1 + seen2);

  /* The log against what each node's callbacks saw (check_history()). */
  node_init(&e, &n1, &e.c1, 1, &log, 2000);
  c_history(&e, &n1, "s", &c);
  ASSERT_OK(c.status);
  ASSERT_EQ((int)c.n,
            fired + check_history(&c, &log, "s", "completed", closing, margin));
  c_history(&e, &n1, "f", &c);
  ASSERT_OK(c.status);
  ASSERT_EQ((int)c.n,
            check_once(&log, "f") +
                check_history(&c, &log, "f", "failed: boom", closing, margin));
  ASSERT_STR_EQ("failed: boom", c.ent[c.n - 1].outcome);
  c_list(&e, &n1, "s", &c);
  ASSERT_GT(c.defs[0].last_fire_ms, 0);
  ASSERT_UGE(c.defs[0].last_token, (uint64_t)fired);
  /* Fires are counted only while a limit is set. */
  ASSERT_UEQ(0, c.defs[0].fires);
  ASSERT(!c.defs[0].finished);
  node_close(&e, &n1);
  lock_env_close(&e);
}

/* Defines `key` every second with the bounds start, end and max fires
 * (and the target `queue`); returns the status, `err` the message. */
static int c_define_bounded(lock_env_t *e, node_t *n, const char *key,
                            int64_t start, int64_t end, uint64_t max,
                            const char *queue, char *err, size_t err_len) {
  fleet_cron_def_t d;
  call_t c = {0};
  int rc;

  fleet_cron_def_init(&d);
  d.key = key;
  d.expr = "* * * * * *";
  d.queue = queue;
  d.start_ms = start;
  d.end_ms = end;
  d.max_fires = max;
  rc = fleet_cron_define(&n->s, &d, FLEET_CRON_UPSERT, err, err_len, on_status,
                         &c);
  if (rc != 0)
    return rc;
  ASSERT(lock_env_wait(e, &c.done, 1, FLEET_TEST_WAIT_MS));
  return c.status;
}

static int count_key(const fired_t *log, const char *key) {
  int i, n = 0;

  for (i = 0; i < log->n; i++)
    n += strcmp(log->r[i].key, key) == 0;
  return n;
}

/* Start, end and a fire limit: two schedulers fire a limited definition
 * exactly max_fires times in all, none before its start or after its end;
 * the listing shows the count and finished; raising the limit lets it
 * fire again up to the new one; bad bounds and a new target for a limited
 * definition are refused with nothing written. */
CONFORMANCE_IMPL(cron_bounds) {
  lock_env_t e;
  node_t n1, n2;
  fired_t log = {0};
  call_t c;
  char err[128];
  int64_t t0, start, end;
  int i, k;

  lock_env_init(&e, b->url);
  node_init(&e, &n1, &e.c1, 1, &log, 2000);
  node_init(&e, &n2, &e.c2, 2, &log, 2000);
  /* Bad bounds: refused at once, with the reason. */
  ASSERT_ERR(FLEET_EINVAL, c_define_bounded(&e, &n1, "bad", 2000, 1000, 0, NULL,
                                            err, sizeof(err)));
  ASSERT_STR_EQ("end before start", err);
  ASSERT_ERR(FLEET_EINVAL, c_define_bounded(&e, &n1, "bad", -1, 0, 0, NULL, err,
                                            sizeof(err)));
  c_list(&e, &n1, NULL, &c);
  ASSERT_UEQ(0, c.n);

  t0 = now_wall_ms();
  start = t0 + 2000;
  end = t0 + 2500;
  ASSERT_OK(c_define_bounded(&e, &n1, "lim", 0, 0, 3, NULL, err, sizeof(err)));
  ASSERT_OK(
      c_define_bounded(&e, &n1, "late", start, 0, 0, NULL, err, sizeof(err)));
  ASSERT_OK(
      c_define_bounded(&e, &n1, "early", 0, end, 0, NULL, err, sizeof(err)));
  /* A limited definition keeps its target. */
  ASSERT_ERR(FLEET_ECONFLICT,
             c_define_bounded(&e, &n1, "lim", 0, 0, 3, "q", err, sizeof(err)));
  /* Not started while its start is ahead (read before it, by the clock
   * both backends share here); one without a start has started. */
  c_list(&e, &n1, "late", &c);
  ASSERT_OK(c.status);
  if (now_wall_ms() < start)
    ASSERT(c.defs[0].not_started);
  c_list(&e, &n1, "lim", &c);
  ASSERT(!c.defs[0].not_started);
  ASSERT_OK(fleet_cron_scheduler_start(&n1.s, on_fire));
  ASSERT_OK(fleet_cron_scheduler_start(&n2.s, on_fire));
  lock_env_sleep(&e, 5500);

  ASSERT_EQ(3, check_once(&log, "lim"));
  ASSERT_GE(check_once(&log, "late"), 2);
  ASSERT_GE(check_once(&log, "early"), 1);
  for (i = 0; i < log.n; i++) {
    if (strcmp(log.r[i].key, "late") == 0)
      ASSERT_GE(log.r[i].fire_ms, start);
    if (strcmp(log.r[i].key, "early") == 0)
      ASSERT_LE(log.r[i].fire_ms, end);
  }
  c_list(&e, &n1, "lim", &c);
  ASSERT_OK(c.status);
  ASSERT_UEQ(3, c.defs[0].max_fires);
  ASSERT_UEQ(3, c.defs[0].fires);
  ASSERT(c.defs[0].finished);
  ASSERT_EQ(-1, c.defs[0].next_due_ms);
  c_list(&e, &n1, "early", &c);
  ASSERT_EQ(end, c.defs[0].end_ms);
  ASSERT(c.defs[0].finished);
  ASSERT_EQ(-1, c.defs[0].next_due_ms);
  c_list(&e, &n1, "late", &c);
  ASSERT_EQ(start, c.defs[0].start_ms);
  ASSERT(!c.defs[0].finished);
  ASSERT(!c.defs[0].not_started);
  ASSERT_GT(c.defs[0].next_due_ms, 0);

  /* Raised to 5: two more fires, then finished again. */
  ASSERT_OK(c_define_bounded(&e, &n2, "lim", 0, 0, 5, NULL, err, sizeof(err)));
  lock_env_sleep(&e, 4000);
  node_close(&e, &n1);
  node_close(&e, &n2);
  ASSERT_EQ(5, count_key(&log, "lim"));
  for (i = 0; i < log.n; i++)
    for (k = i + 1; k < log.n; k++)
      if (strcmp(log.r[i].key, "lim") == 0 && strcmp(log.r[k].key, "lim") == 0)
        ASSERT_NE(log.r[i].fire_ms, log.r[k].fire_ms);
  node_init(&e, &n1, &e.c1, 1, &log, 2000);
  c_list(&e, &n1, "lim", &c);
  ASSERT_UEQ(5, c.defs[0].fires);
  ASSERT(c.defs[0].finished);
  /* Removed and defined again: the count starts over. */
  ASSERT_OK(c_remove(&e, &n1, "lim"));
  ASSERT_OK(c_define_bounded(&e, &n1, "lim", 0, 0, 1, NULL, err, sizeof(err)));
  ASSERT_OK(fleet_cron_scheduler_start(&n1.s, on_fire));
  /* Closed as soon as its one fire came: no later claim was answered
   * "finished", yet it reads finished (its count at its limit). */
  for (k = 0; k < 200 && count_key(&log, "lim") < 6; k++)
    lock_env_sleep(&e, 20);
  node_close(&e, &n1);
  ASSERT_EQ(6, count_key(&log, "lim"));
  node_init(&e, &n1, &e.c1, 1, &log, 2000);
  c_list(&e, &n1, "lim", &c);
  ASSERT_OK(c.status);
  ASSERT_UEQ(1, c.defs[0].fires);
  ASSERT(c.defs[0].finished);
  ASSERT_EQ(-1, c.defs[0].next_due_ms);
  node_close(&e, &n1);
  lock_env_close(&e);
}

typedef struct {
  int done, status;
  char type[32];
  char payload[32];
} get_t;

static void on_get(fleet_queue_t *q, int status, const fleet_job_info_t *info,
                   void *arg) {
  get_t *g = arg;

  (void)q;
  g->status = status;
  if (status == 0) {
    snprintf(g->type, sizeof(g->type), "%s", info->type);
    snprintf(g->payload, sizeof(g->payload), "%.*s", (int)info->payload.len,
             (const char *)info->payload.base);
  }
  g->done = 1;
}

static void on_queue_closed(fleet_handle_t *h) {
  *(int *)h->data = 1;
}

CONFORMANCE_IMPL(cron_queue_target) {
  lock_env_t e;
  node_t n;
  fired_t log = {0};
  fleet_queue_t q;
  get_t g = {0};
  char id[64];
  int qclosed = 0;

  lock_env_init(&e, b->url);
  node_init(&e, &n, &e.c1, 1, &log, 2000);
  ASSERT_OK(
      c_define(&e, &n, "job", "* * * * * *", 0, "work", FLEET_CRON_UPSERT));
  ASSERT_OK(fleet_cron_scheduler_start(&n.s, on_fire));
  ASSERT(lock_env_wait(&e, &log.n, 1, 3000));
  node_close(&e, &n);
  ASSERT_STR_EQ("job", log.r[0].key);
  ASSERT_OK(fleet_queue_init(&e.c2, &q, "work", NULL));
  q.data = &qclosed;
  snprintf(id, sizeof(id), "job@%" PRId64, log.r[0].fire_ms);
  ASSERT_OK(fleet_queue_get(&q, id, on_get, &g));
  ASSERT(lock_env_wait(&e, &g.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(g.status);
  ASSERT_STR_EQ("job", g.type);
  ASSERT_STR_EQ("pl", g.payload);
  ASSERT_OK(fleet_queue_close(&q, on_queue_closed));
  ASSERT(lock_env_wait(&e, &qclosed, 1, FLEET_TEST_WAIT_MS));
  lock_env_close(&e);
}

/* What a fleet_cron_trigger() answered. */
typedef struct {
  int done, status;
  int64_t fire_ms;
  uint64_t token;
} trig_t;

static void on_trigger(fleet_cron_scheduler_t *s, int status, int64_t fire_ms,
                       uint64_t token, void *arg) {
  trig_t *t = arg;

  (void)s;
  t->status = status;
  t->fire_ms = fire_ms;
  t->token = token;
  t->done = 1;
}

static int c_trigger(lock_env_t *e, node_t *n, const char *key, trig_t *t) {
  memset(t, 0, sizeof(*t));
  ASSERT_OK(fleet_cron_trigger(&n->s, key, on_trigger, t));
  ASSERT(lock_env_wait(e, &t->done, 1, FLEET_TEST_WAIT_MS));
  return t->status;
}

/* fleet_cron_trigger(): a queue definition fires now, once, through the
 * claim of a scheduled occurrence: its job "<key>@<fire_ms>" is in the
 * queue, the log holds the occurrence (off a whole second) with its token
 * and the triggering node; the schedule is untouched (a running scheduler
 * fires every second around a trigger, none logged as missed, tokens
 * increasing); a trigger counts towards the fire limit; unknown keys,
 * callback definitions and bad arguments are refused. */
CONFORMANCE_IMPL(cron_trigger) {
  lock_env_t e;
  node_t n, run;
  fired_t log = {0};
  fleet_queue_t q;
  get_t g = {0};
  trig_t t;
  call_t c;
  char id[64];
  int qclosed = 0, i, k, prev, fired, seen;

  lock_env_init(&e, b->url);
  node_init(&e, &n, &e.c1, 1, &log, 2000);
  ASSERT_OK(c_define(&e, &n, "far", "0 0 1 1 *", 0, "work", FLEET_CRON_UPSERT));
  ASSERT_OK(c_define(&e, &n, "cb", "0 0 1 1 *", 0, NULL, FLEET_CRON_UPSERT));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_trigger(&n.s, "far", NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_trigger(&n.s, "", on_trigger, &t));
  ASSERT_ERR(FLEET_ENOTFOUND, c_trigger(&e, &n, "nope", &t));
  ASSERT_ERR(FLEET_EINVAL, c_trigger(&e, &n, "cb", &t));

  /* The job is queued and the log holds it. */
  ASSERT_OK(c_trigger(&e, &n, "far", &t));
  ASSERT_NE(0, t.fire_ms % 1000);
  ASSERT_UGT(t.token, 0);
  ASSERT_OK(fleet_queue_init(&e.c2, &q, "work", NULL));
  q.data = &qclosed;
  snprintf(id, sizeof(id), "far@%" PRId64, t.fire_ms);
  ASSERT_OK(fleet_queue_get(&q, id, on_get, &g));
  ASSERT(lock_env_wait(&e, &g.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(g.status);
  ASSERT_STR_EQ("far", g.type);
  ASSERT_STR_EQ("pl", g.payload);
  c_history(&e, &n, "far", &c);
  ASSERT_OK(c.status);
  ASSERT_EQ(1, (int)c.n);
  ASSERT_EQ(t.fire_ms, c.ent[0].fire_ms);
  ASSERT_UEQ(t.token, c.ent[0].token);
  ASSERT_STR_EQ("node1", c.ent[0].node);
  ASSERT_STR_EQ("dispatched", c.ent[0].outcome);

  /* A limit of one fire: the trigger is it, and the listing says so
   * (its last fire, one fire, finished) as soon as the registry's record
   * of the fire, sent after it, is in. */
  ASSERT_OK(c_define_bounded(&e, &n, "lim", 0, 0, 1, "work", NULL, 0));
  ASSERT_OK(c_trigger(&e, &n, "lim", &t));
  for (i = 0; i < 50; i++) {
    c_list(&e, &n, "lim", &c);
    ASSERT_OK(c.status);
    ASSERT_EQ(1, (int)c.n);
    if (c.defs[0].fires == 1)
      break;
    lock_env_sleep(&e, 20);
  }
  ASSERT_UEQ(1, c.defs[0].fires);
  ASSERT_EQ(t.fire_ms, c.defs[0].last_fire_ms);
  ASSERT_UEQ(t.token, c.defs[0].last_token);
  ASSERT_EQ(1, c.defs[0].finished);
  /* (Two triggers in one millisecond are one occurrence: FLEET_EEXIST.) */
  lock_env_sleep(&e, 5);
  ASSERT_ERR(FLEET_EALREADY, c_trigger(&e, &n, "lim", &t));

  /* A running scheduler fires "every" each second; a trigger in between
   * takes nothing from the schedule. */
  ASSERT_OK(
      c_define(&e, &n, "every", "* * * * * *", 0, "work", FLEET_CRON_UPSERT));
  node_init(&e, &run, &e.c2, 2, &log, 2000);
  ASSERT_OK(fleet_cron_scheduler_start(&run.s, on_fire));
  ASSERT(lock_env_wait(&e, &log.n, 1, 5000));
  ASSERT_OK(c_trigger(&e, &n, "every", &t));
  fired = count_key(&log, "every");
  lock_env_sleep(&e, 2200);
  node_close(&e, &run);
  ASSERT_GT(count_key(&log, "every"), fired);
  fired = check_once(&log, "every");
  ASSERT_EQ(0, count_key(&log, "lim"));
  c_history(&e, &n, "every", &c);
  ASSERT_OK(c.status);
  /* Tokens go in claim order: the scheduled ones in fire time order, the
   * trigger's (claimed after the server time it took) among them, each
   * token once. */
  seen = 0;
  prev = -1;
  for (i = 0; i < (int)c.n; i++) {
    for (k = 0; k < i; k++)
      ASSERT(c.ent[k].token != c.ent[i].token);
    ASSERT(strcmp(c.ent[i].outcome, "missed") != 0);
    if (c.ent[i].fire_ms == t.fire_ms) {
      seen++;
      ASSERT_UEQ(t.token, c.ent[i].token);
      ASSERT_STR_EQ("node1", c.ent[i].node);
    } else {
      ASSERT_EQ(0, c.ent[i].fire_ms % 1000);
      ASSERT_STR_EQ("node2", c.ent[i].node);
      if (prev >= 0)
        ASSERT_UGT(c.ent[prev].token, c.ent[i].token);
      prev = i;
    }
    if (i > 0)
      ASSERT_LT(c.ent[i].fire_ms, c.ent[i - 1].fire_ms);
  }
  ASSERT_EQ(1, seen);
  ASSERT_GE((int)c.n, fired + 1);
  ASSERT_OK(fleet_queue_close(&q, on_queue_closed));
  ASSERT(lock_env_wait(&e, &qclosed, 1, FLEET_TEST_WAIT_MS));
  node_close(&e, &n);
  lock_env_close(&e);
}

/* A pool for cron_pool_target: the jobs its worker started. */
typedef struct {
  fleet_pool_node_t node;
  fleet_pool_worker_t w;
  char keys[64][64];
  int nkeys;
  int closed;
} cron_pool_t;

static void cpool_start(fleet_pool_worker_t *w, fleet_pool_job_t *job) {
  cron_pool_t *p = w->data;
  fleet_bytes_t pay = fleet_pool_job_payload(job);

  ASSERT_LT(p->nkeys, 64);
  ASSERT_EQ(2, pay.len);
  ASSERT_MEM_EQ("pl", pay.base, 2);
  snprintf(p->keys[p->nkeys++], 64, "%s", fleet_pool_job_key_str(job));
  ASSERT_OK(fleet_pool_job_started(job, 0));
}

static void cpool_stop(fleet_pool_worker_t *w, fleet_pool_job_t *job,
                       fleet_pool_stop_reason_t reason) {
  (void)w;
  (void)job;
  (void)reason;
}

static const fleet_pool_handler_t cpool_handler = {.start_cb = cpool_start,
                                                   .stop_cb = cpool_stop};

static void cpool_init(cron_pool_t *p, fleet_client_t *c, const char *id,
                       int worker) {
  fleet_pool_node_options_t o;

  memset(p, 0, sizeof(*p));
  fleet_pool_node_options_init(&o);
  o.client_only = !worker;
  p->node.data = p;
  ASSERT_OK(fleet_pool_node_init(c, &p->node, "pl", id, &o));
  if (worker) {
    p->w.data = p;
    ASSERT_OK(fleet_pool_worker_add(&p->node, &p->w, &cpool_handler));
  }
}

static void cpool_on_closed(fleet_handle_t *h) {
  ((cron_pool_t *)h->data)->closed = 1;
}

static void cpool_close(lock_env_t *e, cron_pool_t *p) {
  ASSERT_OK(fleet_pool_node_close(&p->node, cpool_on_closed));
  ASSERT(lock_env_wait(e, &p->closed, 1, FLEET_TEST_WAIT_MS));
}

static void on_pool_fire(fleet_cron_scheduler_t *s, fleet_cron_fire_t *fire) {
  ASSERT_NOT_NULL(fire->pool);
  ASSERT_STR_EQ("pl", fire->pool);
  ASSERT_NULL(fire->queue);
  on_fire(s, fire);
}

static void on_pool_sched_error(fleet_handle_t *h, int status,
                                const char *detail) {
  node_t *n = h->data;

  (void)detail;
  n->errors++;
  n->last_error = status;
}

/* A definition that targets a worker pool: each occurrence becomes the
 * pool job "<key>@<fire_ms>", started once. While the pool has no worker
 * the dispatches fail (transiently) and the occurrences stay "pending" in
 * the log; once a worker joins, the next fire calls hand them out again
 * and they start too. A dispatch of a key the cron dispatched already is
 * refused by the pool. Bad targets are refused. */
CONFORMANCE_IMPL(cron_pool_target) {
  fleet_cron_scheduler_options_t so;
  lock_env_t e;
  node_t n1;
  fired_t log = {0};
  call_t c;
  cron_pool_t disp, wrk;
  fleet_cron_def_t d;
  char err[128], key[64];
  call_t dup = {0};
  fleet_bytes_t pl = {.base = "pl", .len = 2};
  int i, k, pending = 0, first_pending = -1;

  lock_env_init(&e, b->url);
  node_init(&e, &n1, &e.c1, 1, &log, 2000);
  /* Bad input: two targets; a pool without a node. */
  fleet_cron_def_init(&d);
  d.key = "pj";
  d.expr = "* * * * * *";
  d.queue = "q";
  d.pool = "pl";
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_define(&n1.s, &d, FLEET_CRON_UPSERT, err,
                                             sizeof(err), never_status, NULL));
  ASSERT_STR_EQ("a queue and a pool: one target at most", err);
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_scheduler_add_pool(&n1.s, "pl", NULL));
  node_close(&e, &n1);

  /* A short re-dispatch age, so that the test sees it. */
  fleet_cron_scheduler_options_init(&so);
  so.grace_ms = 2000;
  so.check_ms = 200;
  so.redispatch_ms = 500;
  so.error_cb = on_pool_sched_error;
  memset(&n1, 0, sizeof(n1));
  n1.node = 1;
  n1.log = &log;
  n1.s.data = &n1;
  ASSERT_OK(fleet_cron_scheduler_init(&e.c1, &n1.s, "ns", "node1", &so));
  cpool_init(&disp, &e.c1, "disp", 0);
  ASSERT_OK(fleet_cron_scheduler_add_pool(&n1.s, "pl", &disp.node));
  ASSERT_ERR(FLEET_EEXIST,
             fleet_cron_scheduler_add_pool(&n1.s, "pl", &disp.node));
  d.queue = NULL;
  d.payload.base = "pl";
  d.payload.len = 2;
  c.done = 0;
  ASSERT_OK(fleet_cron_define(&n1.s, &d, FLEET_CRON_UPSERT, err, sizeof(err),
                              on_status, &c));
  ASSERT(lock_env_wait(&e, &c.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(c.status);
  c_list(&e, &n1, "pj", &c);
  ASSERT_STR_EQ("pl", c.defs[0].pool);
  ASSERT_NULL(c.defs[0].queue);

  /* No worker yet: claimed, not dispatched. */
  ASSERT_OK(fleet_cron_scheduler_start(&n1.s, on_pool_fire));
  lock_env_sleep(&e, 2300);
  ASSERT_EQ(0, log.n);
  ASSERT_GE(n1.errors, 1);
  c_history(&e, &n1, "pj", &c);
  ASSERT_GE(c.n, 1);
  for (i = 0; i < (int)c.n; i++) {
    ASSERT_STR_EQ("pending", c.ent[i].outcome);
    ASSERT_UGT(c.ent[i].token, 0);
  }
  first_pending = (int)c.n;

  /* A worker joins: the new occurrences start, and so do the pending. */
  cpool_init(&wrk, &e.c2, "wrk", 1);
  lock_env_sleep(&e, 3500);
  c_history(&e, &n1, "pj", &c);
  ASSERT_GE((int)c.n, first_pending + 2);
  for (i = 0; i < (int)c.n; i++) {
    snprintf(key, sizeof(key), "pj@%lld", (long long)c.ent[i].fire_ms);
    if (strcmp(c.ent[i].outcome, "pending") == 0) {
      /* Only the newest may still wait for the pool's answer. */
      ASSERT_LT(i, 2);
      pending++;
      continue;
    }
    ASSERT_STR_EQ("completed", c.ent[i].outcome);
    for (k = 0; k < wrk.nkeys; k++)
      if (strcmp(wrk.keys[k], key) == 0)
        break;
    if (k == wrk.nkeys)
      fleet_test__fail(__FILE__, __LINE__, "%s not started", key);
  }
  ASSERT_LE(pending, 2);
  /* Each job started once. */
  for (i = 0; i < wrk.nkeys; i++)
    for (k = i + 1; k < wrk.nkeys; k++)
      ASSERT(strcmp(wrk.keys[i], wrk.keys[k]) != 0);
  ASSERT_GE(wrk.nkeys, first_pending + 2);
  /* Every fire callback's job started, and no job without one. A job can
   * reach the worker (on c2) before its dispatch's answer reaches the
   * scheduler (on c1), and occurrences keep coming each second: compare
   * once both have caught up. */
  for (i = 0; i < 40 && log.n != wrk.nkeys; i++)
    lock_env_sleep(&e, 50);
  ASSERT_EQ(log.n, wrk.nkeys);
  /* The pool refuses the same occurrence again. */
  ASSERT_OK(fleet_pool_dispatch(&disp.node, wrk.keys[0], pl, on_status, &dup));
  ASSERT(lock_env_wait(&e, &dup.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_ERR(FLEET_EEXIST, dup.status);
  node_close(&e, &n1);
  cpool_close(&e, &wrk);
  cpool_close(&e, &disp);
  lock_env_close(&e);
}

CONFORMANCE_IMPL(cron_follow_change) {
  lock_env_t e;
  node_t n1, admin;
  fired_t log = {0}, none = {0};
  int before;

  lock_env_init(&e, b->url);
  node_init(&e, &n1, &e.c1, 1, &log, 2000);
  node_init(&e, &admin, &e.c2, 9, &none, 2000);
  ASSERT_OK(fleet_cron_scheduler_start(&n1.s, on_fire));
  lock_env_sleep(&e, 300);
  /* Defined through another handle: n1 fires it within ~ a second. */
  ASSERT_OK(
      c_define(&e, &admin, "new", "* * * * * *", 0, NULL, FLEET_CRON_UPSERT));
  ASSERT(lock_env_wait(&e, &log.n, 1, 2500));
  ASSERT_STR_EQ("new", log.r[0].key);
  /* Disabled: it stops. */
  ASSERT_OK(c_enable(&e, &admin, "new", 0));
  lock_env_sleep(&e, 300);
  before = count_key(&log, "new");
  lock_env_sleep(&e, 2200);
  ASSERT_EQ(before, count_key(&log, "new"));
  /* Enabled again: it resumes, without catching up the disabled time. */
  ASSERT_OK(c_enable(&e, &admin, "new", 1));
  ASSERT(lock_env_wait(&e, &log.n, before + 1, 2500));
  ASSERT_GT(log.r[log.n - 1].fire_ms, log.r[before - 1].fire_ms + 2000);
  /* Removed: it stops. */
  ASSERT_OK(c_remove(&e, &admin, "new"));
  lock_env_sleep(&e, 300);
  before = count_key(&log, "new");
  lock_env_sleep(&e, 2200);
  ASSERT_EQ(before, count_key(&log, "new"));
  ASSERT_EQ(0, none.n);
  node_close(&e, &n1);
  node_close(&e, &admin);
  lock_env_close(&e);
}

/* A definition of each policy, defined while no scheduler runs, then a
 * scheduler started after ~4 occurrences passed (grace 500 ms). */
CONFORMANCE_IMPL(cron_catch_up) {
  lock_env_t e;
  node_t n, admin;
  fired_t log = {0}, none = {0};
  call_t c;
  int64_t created, started;
  int i, missed, cnt;

  lock_env_init(&e, b->url);
  node_init(&e, &admin, &e.c2, 9, &none, 500);
  ASSERT_OK(c_define(&e, &admin, "skip", "* * * * * *",
                     FLEET_CRON_CATCH_UP_SKIP, NULL, FLEET_CRON_UPSERT));
  ASSERT_OK(c_define(&e, &admin, "latest", "* * * * * *",
                     FLEET_CRON_CATCH_UP_LATEST, NULL, FLEET_CRON_UPSERT));
  ASSERT_OK(c_define(&e, &admin, "all", "* * * * * *", FLEET_CRON_CATCH_UP_ALL,
                     NULL, FLEET_CRON_UPSERT));
  c_list(&e, &admin, "all", &c);
  created = c.defs[0].created_ms;
  lock_env_sleep(&e, 4300);
  node_init(&e, &n, &e.c1, 1, &log, 500);
  ASSERT_OK(fleet_cron_scheduler_start(&n.s, on_fire));
  /* Until "skip" fired its first occurrence (the first due after the
   * start): the catch-up of the others went out before it. */
  for (i = 0; i < 100 && count_key(&log, "skip") == 0; i++)
    lock_env_sleep(&e, fleet_test_ms(50));
  ASSERT_GT(count_key(&log, "skip"), 0);
  lock_env_sleep(&e, 200);
  node_close(&e, &n);
  c_list(&e, &admin, "all", &c);
  /* The server time when the scheduler started, roughly: the first fire
   * of "skip" is the first occurrence within the grace. */
  started = -1;
  for (i = 0; i < log.n; i++)
    if (strcmp(log.r[i].key, "skip") == 0 &&
        (started < 0 || log.r[i].fire_ms < started))
      started = log.r[i].fire_ms;
  ASSERT_GT(started, created + 3000);

  /* skip: nothing before `started` fired; the missed ones are logged. */
  c_history(&e, &admin, "skip", &c);
  for (i = 0, missed = 0; i < (int)c.n; i++) {
    if (strcmp(c.ent[i].outcome, "missed") == 0) {
      missed++;
      ASSERT_LT(c.ent[i].fire_ms, started);
      ASSERT_EQ(0, c.ent[i].token);
    }
  }
  ASSERT_GE(missed, 2);
  ASSERT_EQ(check_once(&log, "skip"), count_key(&log, "skip"));

  /* latest: exactly one of the missed ones fired, the latest. */
  c_history(&e, &admin, "latest", &c);
  for (i = 0, cnt = 0, missed = 0; i < (int)c.n; i++) {
    if (c.ent[i].fire_ms < started) {
      if (strcmp(c.ent[i].outcome, "missed") == 0)
        missed++;
      else
        cnt++;
    }
  }
  ASSERT_GE(missed + cnt, 2);
  ASSERT_LE(cnt, 1);

  /* all: every occurrence since the creation fired, once, in order. */
  cnt = check_once(&log, "all");
  ASSERT_EQ(cnt, count_key(&log, "all"));
  for (i = 0; i < log.n; i++)
    if (strcmp(log.r[i].key, "all") == 0) {
      ASSERT_LE(log.r[i].fire_ms, created + 1000);
      break;
    }
  c_history(&e, &admin, "all", &c);
  for (i = 0; i < (int)c.n; i++)
    ASSERT_STR_NE("missed", c.ent[i].outcome);
  node_close(&e, &admin);
  lock_env_close(&e);
}

/* An occurrence in the log is never fired again: a second scheduler that
 * lost the registry's "last fired" hint (redis only: deleted by hand)
 * catches up with policy ALL and fires nothing the first one fired. */
CONFORMANCE_IMPL(cron_log_dedup) {
  lock_env_t e;
  node_t n;
  fired_t log = {0};
  int i, j, first;
  redisReply *r;

  if (b->redis == NULL)
    fleet_test_skip("the hint is deleted with a Redis command");
  lock_env_init(&e, b->url);
  node_init(&e, &n, &e.c1, 1, &log, 300);
  ASSERT_OK(c_define(&e, &n, "d", "* * * * * *", FLEET_CRON_CATCH_UP_ALL, NULL,
                     FLEET_CRON_UPSERT));
  ASSERT_OK(fleet_cron_scheduler_start(&n.s, on_fire));
  ASSERT(lock_env_wait(&e, &log.n, 3, 5000));
  node_close(&e, &n);
  first = log.n;
  r = fleet_test_redis_cmd(b->redis, "HDEL {locktest:ns}:cron:last d");
  ASSERT_NOT_NULL(r);
  freeReplyObject(r);
  lock_env_sleep(&e, 1500);
  node_init(&e, &n, &e.c2, 2, &log, 300);
  ASSERT_OK(fleet_cron_scheduler_start(&n.s, on_fire));
  ASSERT(lock_env_wait(&e, &log.n, first + 2, 5000));
  node_close(&e, &n);
  for (i = 0; i < log.n; i++)
    for (j = i + 1; j < log.n; j++)
      ASSERT_NE(log.r[i].fire_ms, log.r[j].fire_ms);
  ASSERT_EQ(log.n, check_once(&log, "d"));
  lock_env_close(&e);
}

/* Closing inside the fire callback: the fire is completed first, the
 * close is deferred until the callback returns, no other fire follows. */
static int close_fires;

static void on_fire_close(fleet_cron_scheduler_t *s, fleet_cron_fire_t *fire) {
  node_t *n = s->data;

  close_fires++;
  ASSERT_OK(fleet_cron_complete(fire, NULL));
  ASSERT_OK(fleet_cron_scheduler_close(s, on_closed));
  ASSERT_ERR(FLEET_ECLOSING, fleet_cron_scheduler_close(s, on_closed));
  ASSERT_EQ(0, n->closed);
}

CONFORMANCE_IMPL(cron_close_in_fire) {
  lock_env_t e;
  node_t n;
  fired_t log = {0};
  call_t c;

  lock_env_init(&e, b->url);
  node_init(&e, &n, &e.c1, 1, &log, 2000);
  ASSERT_OK(c_define(&e, &n, "a", "* * * * * *", 0, NULL, FLEET_CRON_UPSERT));
  ASSERT_OK(c_define(&e, &n, "b", "* * * * * *", 0, NULL, FLEET_CRON_UPSERT));
  ASSERT_OK(fleet_cron_scheduler_start(&n.s, on_fire_close));
  ASSERT(lock_env_wait(&e, &n.closed, 1, 4000));
  lock_env_sleep(&e, 1200);
  ASSERT_EQ(1, close_fires);
  node_init(&e, &n, &e.c2, 2, &log, 2000);
  c_history(&e, &n, "a", &c);
  ASSERT_OK(c.status);
  node_close(&e, &n);
  lock_env_close(&e);
}

/* A definition fleet did not write (redis only: written by hand) is
 * reported to the error callback and left in place; the others run. */
static int foreign_errors;

static void on_sched_error(fleet_handle_t *h, int status, const char *detail) {
  (void)h;
  (void)detail;
  if (status == FLEET_EPROTO)
    foreign_errors++;
}

CONFORMANCE_IMPL(cron_foreign_data) {
  lock_env_t e;
  node_t n;
  fired_t log = {0};
  fleet_cron_scheduler_options_t o;
  redisReply *r;

  if (b->redis == NULL)
    fleet_test_skip("the foreign definition is written with Redis commands");
  lock_env_init(&e, b->url);
  fleet_cron_scheduler_options_init(&o);
  o.error_cb = on_sched_error;
  o.check_ms = 200;
  node_init_with(&n, &e.c1, 1, &log, &o);
  ASSERT_OK(
      c_define(&e, &n, "good", "* * * * * *", 0, NULL, FLEET_CRON_UPSERT));
  r = fleet_test_redis_cmd(b->redis, "HSET {locktest:ns}:cron:def:bad expr x "
                                     "catch_up sometimes created 1");
  ASSERT_NOT_NULL(r);
  freeReplyObject(r);
  r = fleet_test_redis_cmd(b->redis, "HSET {locktest:ns}:cron:defs bad 1");
  ASSERT_NOT_NULL(r);
  freeReplyObject(r);
  ASSERT_OK(fleet_cron_scheduler_start(&n.s, on_fire));
  ASSERT(lock_env_wait(&e, &log.n, 2, 4000));
  ASSERT_GE(foreign_errors, 1);
  ASSERT_EQ(log.n, count_key(&log, "good"));
  node_close(&e, &n);
  /* Left in place. */
  r = fleet_test_redis_cmd(b->redis, "HGET {locktest:ns}:cron:def:bad expr");
  ASSERT_NOT_NULL(r);
  ASSERT_EQ(REDIS_REPLY_STRING, r->type);
  freeReplyObject(r);
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* The claim itself: batched fires, the trim in batches, the floor         */

/* What a raw op answered, its integers flattened (nested arrays in order,
 * strings and nils as -9). With `fire` set (a CRON_FIRE_MANY), a
 * definition's answer given as one integer (one occurrence, no limit) is
 * flattened as the table it stands for: count, status, token. */
typedef struct {
  int done;
  int status;
  int fire;
  size_t n;
  int64_t v[256];
} raw_t;

static void raw_flatten(raw_t *f, const fleet__reply_t *r) {
  size_t i;

  if (r->type == FLEET__REPLY_ARRAY) {
    for (i = 0; i < r->nelem; i++)
      raw_flatten(f, &r->elem[i]);
    return;
  }
  if (f->n < 256)
    f->v[f->n++] = r->type == FLEET__REPLY_INT ? r->integer : -9;
}

/* Flattens one definition's integer answer of CRON_FIRE_MANY: the token
 * when it fired, else 0, -1, -2, -3 for the statuses 0, -1, 2, 3. */
static void raw_flatten_one(raw_t *f, int64_t v) {
  int64_t st = v > 0 ? 1 : v == 0 ? 0 : v == -1 ? -1 : -v;

  ASSERT_GE(v, -3);
  ASSERT_ULE(f->n + 3, 256);
  f->v[f->n++] = st == 1;
  f->v[f->n++] = st;
  f->v[f->n++] = st == 1 ? v : 0;
}

static void on_raw(void *arg, int status, const fleet__reply_t *reply) {
  raw_t *f = arg;
  size_t i;

  f->status = status;
  if (status == 0 && f->fire && reply->type == FLEET__REPLY_ARRAY) {
    for (i = 0; i < reply->nelem; i++)
      if (i > 0 && reply->elem[i].type == FLEET__REPLY_INT)
        raw_flatten_one(f, reply->elem[i].integer);
      else
        raw_flatten(f, &reply->elem[i]);
  } else if (status == 0) {
    raw_flatten(f, reply);
  }
  f->done = 1;
}

/* Runs `op` with the keys `k` and the strings `a` on `c`; the answer,
 * with its status. */
static raw_t raw_call(lock_env_t *e, fleet_client_t *c, fleet__op_t op,
                      const char *const *k, size_t nk, const char *const *a,
                      size_t na) {
  fleet_bytes_t keys[4], args[32];
  raw_t f;
  size_t i;

  ASSERT_ULE(nk, 4);
  ASSERT_ULE(na, 32);
  for (i = 0; i < nk; i++)
    keys[i] = (fleet_bytes_t){k[i], strlen(k[i])};
  for (i = 0; i < na; i++)
    args[i] = (fleet_bytes_t){a[i], strlen(a[i])};
  memset(&f, 0, sizeof(f));
  f.fire = op == FLEET__OP_CRON_FIRE_MANY;
  ASSERT_OK(fleet__backend_call(fleet__client_backend(c), op, keys, nk, args,
                                na, on_raw, &f));
  ASSERT(lock_env_wait(e, &f.done, 1, 5000));
  return f;
}

/* raw_call(), asserting it succeeds. */
static raw_t raw_op(lock_env_t *e, fleet_client_t *c, fleet__op_t op,
                    const char *const *k, size_t nk, const char *const *a,
                    size_t na) {
  raw_t f = raw_call(e, c, op, k, nk, a, na);

  ASSERT_OK(f.status);
  return f;
}

#define CT_TAG "{ct:claim}"

/* One CRON_FIRE_MANY from node `node` of two definitions "a" and "b" of
 * namespace "ns" (both under CT_TAG), keep_count 4, each sent `occ`;
 * returns the flattened answer: now, then per definition its count and
 * one status, token pair per occurrence. */
static raw_t ct_fire(lock_env_t *e, fleet_client_t *c, const char *node,
                     const char *occ_a, const char *occ_b) {
  const char *k[2] = {CT_TAG ":cron:ns:a:occ", CT_TAG ":cron:ns:b:occ"};
  const char *a[8] = {node, "4", "0", "0", occ_a, "0", occ_b, "0"};

  return raw_op(e, c, FLEET__OP_CRON_FIRE_MANY, k, 2, a, 8);
}

/* The dispatch log of definition `key`: its entries' count and top. */
static size_t ct_log(lock_env_t *e, const char *key, int64_t *top) {
  const char *k[1] = {CT_TAG};
  const char *a[3] = {"ns", key, "1000"};
  raw_t f = raw_op(e, &e->c1, FLEET__OP_CRON_HISTORY, k, 1, a, 3);

  *top = f.v[0];
  ASSERT_UEQ(0, (f.n - 1) % 6);
  return (f.n - 1) / 6;
}

/* Two definitions claimed in one call by two nodes: each occurrence goes
 * to exactly one, with increasing tokens; the log is trimmed in batches
 * (never past 1.5 x keep_count) and a trimmed occurrence sent again is
 * never fired again; an 'f' occurrence at or before the latest fire is
 * logged as missed. */
CONFORMANCE_IMPL(cron_claim_batched) {
  lock_env_t e;
  int64_t top, last_tok = 0;
  char occ[32];
  raw_t f, g;
  size_t n;
  int i;

  lock_env_init(&e, b->url);
  for (i = 1; i <= 12; i++) {
    snprintf(occ, sizeof(occ), "%df", 1000 * i);
    f = ct_fire(&e, &e.c1, "n1", occ, occ);
    g = ct_fire(&e, &e.c2, "n2", occ, occ);
    /* now, count, status, token (a), count, status, token (b). */
    ASSERT_UEQ(7, f.n);
    ASSERT_UEQ(7, g.n);
    ASSERT_EQ(1, f.v[2]);
    ASSERT_EQ(1, f.v[5]);
    ASSERT_EQ(0, g.v[2]);
    ASSERT_EQ(0, g.v[5]);
    ASSERT(f.v[3] > last_tok);
    last_tok = f.v[3];
    n = ct_log(&e, "a", &top);
    ASSERT_EQ(1000 * i, top);
    ASSERT_ULE(n, 6); /* keep_count 4, trimmed every 2 fires */
    ASSERT_UGE(n, (size_t)(i < 4 ? i : 4));
  }
  /* The oldest were trimmed: sent again, they are not fired. */
  f = ct_fire(&e, &e.c2, "n2", "1000f,2000f", "3000f");
  ASSERT_UEQ(9, f.n);
  ASSERT_EQ(0, f.v[2]);
  ASSERT_EQ(0, f.v[4]);
  ASSERT_EQ(0, f.v[6]);
  ASSERT_ULE(ct_log(&e, "a", &top), 6); /* and they are not logged */
  /* One not logged, at or before the latest fire: missed, no token. */
  f = ct_fire(&e, &e.c1, "n1", "11500f", "13000f");
  ASSERT_EQ(2, f.v[2]);
  ASSERT_EQ(0, f.v[3]);
  ASSERT_EQ(1, f.v[5]);
  ASSERT_EQ(12000, (ct_log(&e, "a", &top), top));
  ASSERT_EQ(13000, (ct_log(&e, "b", &top), top));
  /* Not due by the server clock. */
  f = ct_fire(&e, &e.c1, "n1", "99999999999999f", "14000f");
  ASSERT_EQ(-1, f.v[2]);
  ASSERT_EQ(1, f.v[5]);
  lock_env_close(&e);
}

/* One CRON_FIRE_MANY from node `node` of definition "s" (under CT_TAG)
 * with start `start` and end `end`, sent `occ`; returns the flattened
 * answer: now, count, then one status, token pair per occurrence. */
static raw_t ct_fire_window(lock_env_t *e, fleet_client_t *c, const char *node,
                            const char *start, const char *end,
                            const char *occ) {
  const char *k[1] = {CT_TAG ":cron:ns:s:occ"};
  char bounds[64];
  const char *a[6] = {node, "4", "0", "0", occ, bounds};

  snprintf(bounds, sizeof(bounds), "0:0:1:%s:%s", start, end);
  return raw_op(e, c, FLEET__OP_CRON_FIRE_MANY, k, 1, a, 6);
}

/* The start and end of a definition bound its fires, whatever the
 * decimals' lengths (the fire script compares them as decimal strings):
 * before the start nothing is logged, at the start it fires (once, on
 * one of two nodes), past the end the definition is finished; a time of
 * more digits than the server clock's is not due. */
CONFORMANCE_IMPL(cron_claim_window) {
  lock_env_t e;
  int64_t top;
  raw_t f;

  lock_env_init(&e, b->url);
  /* Before the start (fewer digits than the start, then as many). */
  f = ct_fire_window(&e, &e.c1, "n1", "50000", "0", "9000f");
  ASSERT_UEQ(4, f.n);
  ASSERT_EQ(0, f.v[2]);
  f = ct_fire_window(&e, &e.c1, "n1", "50000", "0", "49999f");
  ASSERT_EQ(0, f.v[2]);
  ASSERT_UEQ(0, ct_log(&e, "s", &top));
  /* At the start: fired once, the other node finds it logged. */
  f = ct_fire_window(&e, &e.c1, "n1", "50000", "0", "50000f");
  ASSERT_EQ(1, f.v[2]);
  ASSERT_GT(f.v[3], 0);
  f = ct_fire_window(&e, &e.c2, "n2", "50000", "0", "50000f");
  ASSERT_EQ(0, f.v[2]);
  ASSERT_EQ(50000, (ct_log(&e, "s", &top), top));
  /* Above the start by more digits, within the end: fired. */
  f = ct_fire_window(&e, &e.c2, "n2", "50000", "700000", "600000f");
  ASSERT_EQ(1, f.v[2]);
  /* Past the end: finished, not logged. */
  f = ct_fire_window(&e, &e.c1, "n1", "50000", "700000", "700001f");
  ASSERT_EQ(3, f.v[2]);
  ASSERT_UEQ(2, ct_log(&e, "s", &top));
  ASSERT_EQ(600000, top);
  /* More digits than the server clock: not due. */
  f = ct_fire_window(&e, &e.c1, "n1", "0", "0", "10000000000000f");
  ASSERT_EQ(-1, f.v[2]);
  /* Bounds of another form, or a key that is not a definition's S:occ:
   * refused, nothing logged. */
  {
    const char *k[1] = {CT_TAG ":cron:ns:s:occ"};
    const char *bad[1] = {CT_TAG ":cron:ns:s"};
    const char *a[6] = {"n1", "4", "0", "0", "700000f", "0:0:1:0"};
    size_t n0 = ct_log(&e, "s", &top);
    int64_t top0 = top;

    f = raw_call(&e, &e.c1, FLEET__OP_CRON_FIRE_MANY, k, 1, a, 6);
    ASSERT_ERR(FLEET_EPROTO, f.status);
    a[5] = "0:0:1:x:0";
    f = raw_call(&e, &e.c1, FLEET__OP_CRON_FIRE_MANY, k, 1, a, 6);
    ASSERT_ERR(FLEET_EPROTO, f.status);
    a[5] = "0"; /* the fast path checks the key too */
    f = raw_call(&e, &e.c1, FLEET__OP_CRON_FIRE_MANY, bad, 1, a, 6);
    ASSERT_ERR(FLEET_EPROTO, f.status);
    ASSERT_UEQ(n0, ct_log(&e, "s", &top));
    ASSERT_EQ(top0, top);
    /* The same occurrence with good bounds fires. */
    f = raw_op(&e, &e.c1, FLEET__OP_CRON_FIRE_MANY, k, 1, a, 6);
    ASSERT_EQ(1, f.v[2]);
    ASSERT_UEQ(n0 + 1, ct_log(&e, "s", &top));
    ASSERT_EQ(700000, top);
  }
  lock_env_close(&e);
}

/* One CRON_FIRE_MANY from node `node` of definition "h" (under CT_TAG)
 * with the claim-ahead bound `ahead`, sent the occurrence `at` (ms);
 * returns the flattened answer: now, count, status, token. */
static raw_t ct_fire_ahead(lock_env_t *e, fleet_client_t *c, const char *node,
                           const char *ahead, int64_t at) {
  const char *k[1] = {CT_TAG ":cron:ns:h:occ"};
  char occ[32];
  const char *a[6] = {node, "4", "0", ahead, occ, "0"};

  snprintf(occ, sizeof(occ), "%lldf", (long long)at);
  return raw_op(e, c, FLEET__OP_CRON_FIRE_MANY, k, 1, a, 6);
}

/* The fire script's bound on claims ahead: an occurrence up to ahead_ms
 * after the server's time fires (once, logged as dispatched at its fire
 * time), a later one is not due, and the bound is at most 60 s. */
CONFORMANCE_IMPL(cron_claim_ahead_bound) {
  const char *k[1] = {CT_TAG};
  const char *h[3] = {"ns", "h", "10"};
  /* The occurrence's distance ahead, and the bound: wide enough that the
   * calls' own time under load does not make it due or bring it within. */
  const int64_t d = 2000;
  lock_env_t e;
  int64_t t, top;
  raw_t f;

  lock_env_init(&e, b->url);
  t = now_wall_ms();
  /* Not claimed ahead: not due yet. Beyond the bound: not due. */
  ASSERT_EQ(-1, ct_fire_ahead(&e, &e.c1, "n1", "0", t + d).v[2]);
  ASSERT_EQ(-1, ct_fire_ahead(&e, &e.c1, "n1", "2500", t + 3 * d).v[2]);
  ASSERT_UEQ(0, ct_log(&e, "h", &top));
  /* Within the bound: fired once, logged at its time. */
  f = ct_fire_ahead(&e, &e.c1, "n1", "2500", t + d);
  ASSERT_LT(f.v[0], t + d); /* the server's time: before it */
  ASSERT_EQ(1, f.v[2]);
  ASSERT_GT(f.v[3], 0);
  ASSERT_EQ(0, ct_fire_ahead(&e, &e.c2, "n2", "2500", t + d).v[2]);
  f = raw_op(&e, &e.c1, FLEET__OP_CRON_HISTORY, k, 1, h, 3);
  ASSERT_UEQ(7, f.n); /* top, then fire, token, node, dispatched, ... */
  ASSERT_EQ(t + d, f.v[0]);
  ASSERT_EQ(t + d, f.v[1]);
  ASSERT_EQ(t + d, f.v[4]);
  /* The bound is at most 60 s; one that is not a number is 0. */
  ASSERT_EQ(-1, ct_fire_ahead(&e, &e.c1, "n1", "99999999", t + 120000).v[2]);
  ASSERT_EQ(-1, ct_fire_ahead(&e, &e.c1, "n1", "x", t + 30000).v[2]);
  ASSERT_EQ(1, ct_fire_ahead(&e, &e.c1, "n1", "99999999", t + 30000).v[2]);
  lock_env_close(&e);
}

/* The fire callback of cron_claim_ahead: records as on_fire does, and
 * counts the callbacks that came before their time by the wall clock (the
 * server's here). */
static int ahead_early;

static void on_fire_ahead(fleet_cron_scheduler_t *s, fleet_cron_fire_t *fire) {
  if (now_wall_ms() < fire->fire_ms)
    ahead_early++;
  on_fire(s, fire);
}

/* Waits until the wall clock reads `at` ms. */
static void sleep_until(lock_env_t *e, int64_t at) {
  int64_t now = now_wall_ms();

  if (at > now)
    lock_env_sleep(e, (uint64_t)(at - now));
}

/* A scheduler claims callback occurrences ahead (its lead pinned here to
 * claim_ahead_ms, 1200 ms, by a burst model that expects a second per
 * definition) and hands each out at its time, never before; one whose
 * definition is disabled after its claim is not handed out, nor one not
 * due yet when the scheduler closes: their log entries say why. */
CONFORMANCE_IMPL(cron_claim_ahead) {
  fleet_cron_scheduler_options_t o;
  lock_env_t e;
  node_t n, m;
  fired_t log = {0};
  call_t c;
  int64_t f0;
  int i;

  lock_env_init(&e, b->url);
  fleet_cron_scheduler_options_init(&o);
  o.check_ms = 200;
  o.claim_ahead_ms = 1200;
  node_init_with(&n, &e.c1, 1, &log, &o);
  ((fleet__cron_sched_t *)n.s.internal_)->burst_def_ms = 1000;
  ASSERT_OK(c_define(&e, &n, "a", "*/2 * * * * *", 0, NULL, FLEET_CRON_UPSERT));
  ASSERT_OK(c_define(&e, &n, "b", "*/2 * * * * *", 0, NULL, FLEET_CRON_UPSERT));
  ahead_early = 0;
  ASSERT_OK(fleet_cron_scheduler_start(&n.s, on_fire_ahead));
  ASSERT(lock_env_wait(&e, &log.n, 2, 5000));
  f0 = log.r[0].fire_ms;
  ASSERT_EQ(f0, log.r[1].fire_ms);
  /* The next ones are claimed at about f0 + 800: "b" is disabled after. */
  sleep_until(&e, f0 + 1400);
  ASSERT_OK(c_enable(&e, &n, "b", 0));
  ASSERT(lock_env_wait(&e, &log.n, 3, 4000));
  /* "a" at f0 + 4000 is claimed at about f0 + 2800: closed after. */
  sleep_until(&e, f0 + 3400);
  node_close(&e, &n);
  ASSERT_EQ(0, ahead_early);
  ASSERT_EQ(3, log.n);
  ASSERT_STR_EQ("a", log.r[2].key);
  ASSERT_EQ(f0 + 2000, log.r[2].fire_ms);
  for (i = 0; i < 2; i++)
    ASSERT(strcmp(log.r[i].key, "a") == 0 || strcmp(log.r[i].key, "b") == 0);

  node_init(&e, &m, &e.c2, 2, &log, 5000);
  c_history(&e, &m, "b", &c);
  ASSERT_OK(c.status);
  ASSERT_EQ(2, c.n);
  ASSERT_EQ(f0 + 2000, c.ent[0].fire_ms);
  ASSERT_STR_EQ("failed: the definition changed before its time",
                c.ent[0].outcome);
  ASSERT_EQ(f0 + 2000, c.ent[0].dispatched_ms);
  ASSERT_STR_EQ("completed", c.ent[1].outcome);
  c_history(&e, &m, "a", &c);
  ASSERT_OK(c.status);
  ASSERT_EQ(3, c.n);
  ASSERT_EQ(f0 + 4000, c.ent[0].fire_ms);
  ASSERT_STR_EQ("failed: the scheduler closed before its time",
                c.ent[0].outcome);
  ASSERT_STR_EQ("completed", c.ent[1].outcome);
  ASSERT_STR_EQ("completed", c.ent[2].outcome);
  node_close(&e, &m);
  lock_env_close(&e);
}

/* A definition last fired by an older fleet keeps its latest fire and
 * trim floor in the strings S:top and S:floor: they still hold. */
CONFORMANCE_IMPL(cron_claim_old_layout) {
  lock_env_t e;
  int64_t top;
  redisReply *r;
  raw_t f;

  if (b->redis == NULL)
    fleet_test_skip("the older layout is written with Redis commands");
  lock_env_init(&e, b->url);
  r = fleet_test_redis_cmd(b->redis,
                           "MSET " CT_TAG ":cron:ns:a:top 5000 " CT_TAG
                           ":cron:ns:a:floor 3000");
  ASSERT_NOT_NULL(r);
  freeReplyObject(r);
  ASSERT_EQ(5000, (ct_log(&e, "a", &top), top));
  /* At the floor: nothing; between floor and top: missed; above: fired. */
  f = ct_fire(&e, &e.c1, "n1", "3000f,4000f,6000f", "1000f");
  ASSERT_UEQ(11, f.n);
  ASSERT_EQ(0, f.v[2]);
  ASSERT_EQ(2, f.v[4]);
  ASSERT_EQ(1, f.v[6]);
  ASSERT_EQ(1, f.v[8]);
  ASSERT_EQ(6000, (ct_log(&e, "a", &top), top));
  /* From now on S:ent holds them: the floor too. */
  f = ct_fire(&e, &e.c2, "n2", "2000f,3000f", "1000f");
  ASSERT_UEQ(9, f.n);
  ASSERT_EQ(0, f.v[2]);
  ASSERT_EQ(0, f.v[4]);
  ASSERT_EQ(0, f.v[6]);
  lock_env_close(&e);
}
