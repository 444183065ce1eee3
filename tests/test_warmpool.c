/* test_warmpool.c -- the warm pool on both adapters: bad input, fill to
 * the target and acquire/release from another node, the fingerprint
 * check, resize and drain, idle TTL reaping, puts under a stale token
 * refused, close handing the primary over and destroying unput creations,
 * borrow leases, creation on demand and fail fast, failures with their
 * shared backoff, and the health check. Resources are names in a table
 * shared by the nodes of a test (created, destroyed), so that a test can
 * count what exists against what the pool says. */
#include "test_lock_env.h"
#include "warmpool/warmpool_int.h"

#define RES_MAX 512
#define PENDING_MAX 64

/* Every resource a test's nodes created: id, alive, times handed out. */
typedef struct {
  char id[64];
  int alive;
  int handed;
  int destroys;
} res_t;

static res_t res[RES_MAX];
static int nres;

static res_t *res_find(const char *id) {
  int i;

  for (i = 0; i < nres; i++)
    if (strcmp(res[i].id, id) == 0)
      return &res[i];
  return NULL;
}

static int res_alive(void) {
  int i, n = 0;

  for (i = 0; i < nres; i++)
    n += res[i].alive;
  return n;
}

/* A node and what its callbacks saw. */
typedef struct {
  fleet_warmpool_t wp;
  int async;        /* creations wait in `pending` */
  int fail;         /* creations fail */
  int check_fail;   /* checks fail */
  int destroy_fail; /* this many destroys fail */
  int destroy_tries;
  fleet_warmpool_work_t *pending[PENDING_MAX];
  int npending;
  int created, destroyed, checks;
  int puts, refused, last_put;
  int elected, demoted;
  uint64_t token;
  int started, start_status;
  int with_check; /* its start gives a check handler */
  int closed;
  int errors;
  int last_error;   /* the status the error callback heard last */
  char detail[256]; /* and its detail */
} node_t;

static void on_create(fleet_warmpool_t *pool, fleet_warmpool_work_t *w) {
  node_t *n = pool->data;
  res_t *r;

  if (n->async) {
    ASSERT_LT(n->npending, PENDING_MAX);
    n->pending[n->npending++] = w;
    return;
  }
  if (n->fail) {
    ASSERT_OK(fleet_warmpool_work_done(w, FLEET_EBACKEND, "no capacity"));
    return;
  }
  ASSERT_LT(nres, RES_MAX);
  ASSERT_NULL(res_find(fleet_warmpool_work_id(w)));
  r = &res[nres++];
  snprintf(r->id, sizeof(r->id), "%s", fleet_warmpool_work_id(w));
  r->alive = 1;
  n->created++;
  ASSERT_OK(fleet_warmpool_work_done(w, 0, NULL));
}

/* Completes the oldest pending creation (made, then reported). */
static void complete_pending(node_t *n) {
  fleet_warmpool_work_t *w;
  res_t *r;

  ASSERT_GT(n->npending, 0);
  w = n->pending[0];
  memmove(n->pending, n->pending + 1,
          (size_t)(n->npending - 1) * sizeof(n->pending[0]));
  n->npending--;
  ASSERT_LT(nres, RES_MAX);
  r = &res[nres++];
  snprintf(r->id, sizeof(r->id), "%s", fleet_warmpool_work_id(w));
  r->alive = 1;
  n->created++;
  ASSERT_OK(fleet_warmpool_work_done(w, 0, NULL));
}

static void on_destroy(fleet_warmpool_t *pool, fleet_warmpool_work_t *w) {
  node_t *n = pool->data;
  res_t *r = res_find(fleet_warmpool_work_id(w));

  n->destroy_tries++;
  if (n->destroy_fail > 0) {
    n->destroy_fail--;
    ASSERT_OK(fleet_warmpool_work_done(w, FLEET_EBACKEND, "busy"));
    return;
  }
  /* A creation abandoned before it made anything is destroyed by id. */
  if (r != NULL) {
    r->alive = 0;
    r->destroys++;
  }
  n->destroyed++;
  ASSERT_OK(fleet_warmpool_work_done(w, 0, NULL));
}

static void on_check(fleet_warmpool_t *pool, fleet_warmpool_work_t *w) {
  node_t *n = pool->data;

  n->checks++;
  ASSERT_OK(fleet_warmpool_work_done(w, n->check_fail ? FLEET_EBACKEND : 0,
                                     "unhealthy"));
}

static void on_put(fleet_warmpool_t *pool, const char *id, uint64_t token,
                   int status) {
  node_t *n = pool->data;

  (void)id;
  (void)token;
  n->last_put = status;
  if (status == 0)
    n->puts++;
  else
    n->refused++;
}

static void on_primary(fleet_warmpool_t *pool, uint64_t token) {
  node_t *n = pool->data;

  if (token != 0) {
    n->elected++;
    n->token = token;
  } else {
    n->demoted++;
  }
}

static void on_error(fleet_handle_t *h, int status, const char *detail) {
  node_t *n = h->data;

  n->last_error = status;
  snprintf(n->detail, sizeof(n->detail), "%s", detail != NULL ? detail : "");
  n->errors++;
}

static void on_close(fleet_handle_t *h) {
  node_t *n = h->data;
  n->closed++;
}

static void on_start(fleet_handle_t *h, int status, void *arg) {
  node_t *n = h->data;

  (void)arg;
  n->start_status = status;
  n->started++;
}

static fleet_warmpool_options_t test_opts(uint32_t target) {
  fleet_warmpool_options_t o;

  fleet_warmpool_options_init(&o);
  o.target_idle = target;
  o.primary_ttl_ms = (uint32_t)fleet_test_ms(1000);
  o.reconcile_ms = (uint32_t)fleet_test_ms(50);
  o.warmup_timeout_ms = (uint32_t)fleet_test_ms(2000);
  o.backoff_base_ms = 1;
  o.backoff_max_ms = 1;
  o.definition = (fleet_bytes_t){"scratch-dir v1", 14};
  return o;
}

static void node_init(node_t *n, fleet_client_t *c, const char *owner,
                      const fleet_warmpool_options_t *o, int with_check) {
  fleet_warmpool_options_t oo;

  if (o != NULL)
    oo = *o;
  else
    fleet_warmpool_options_init(&oo);
  oo.put_cb = on_put;
  oo.primary_cb = on_primary;
  oo.error_cb = on_error;
  memset(n, 0, sizeof(*n));
  n->with_check = with_check;
  n->wp.data = n;
  ASSERT_OK(fleet_warmpool_init(c, &n->wp, "wp", owner, &oo));
}

static int node_start(lock_env_t *e, node_t *n) {
  fleet_warmpool_handlers_t h = {on_create, on_destroy, NULL};

  if (n->with_check)
    h.check_cb = on_check;
  ASSERT_OK(fleet_warmpool_start(&n->wp, &h, on_start, NULL));
  ASSERT(lock_env_wait(e, &n->started, 1, FLEET_TEST_WAIT_MS));
  return n->start_status;
}

/* A client-only node with options `o` otherwise, started: it acquires,
 * releases and drains (with the handlers its start gave) and never
 * campaigns. */
static void client_init(lock_env_t *e, node_t *n, fleet_client_t *c,
                        const char *owner, const fleet_warmpool_options_t *o) {
  fleet_warmpool_options_t oc = *o;

  oc.client_only = 1;
  node_init(n, c, owner, &oc, 0);
  ASSERT_OK(node_start(e, n));
}

static void node_close(lock_env_t *e, node_t *n) {
  ASSERT_OK(fleet_warmpool_close(&n->wp, on_close));
  ASSERT(lock_env_wait(e, &n->closed, 1, FLEET_TEST_WAIT_MS));
}

/* ------------------------------------------------------------------------ */
/* Synchronous-looking calls                                                */

typedef struct {
  int done;
  int status;
  char id[64];
  size_t drained;
  fleet_warmpool_snapshot_t s;
  char primary[64], last_error[128], fp[32];
} answer_t;

static void on_acquire(fleet_warmpool_t *pool, int status, const char *id,
                       void *arg) {
  answer_t *a = arg;

  (void)pool;
  a->status = status;
  if (status == 0) {
    ASSERT_NOT_NULL(id);
    snprintf(a->id, sizeof(a->id), "%s", id);
  } else {
    ASSERT_NULL(id);
  }
  a->done++;
}

static void on_status(fleet_handle_t *h, int status, void *arg) {
  answer_t *a = arg;

  (void)h;
  a->status = status;
  a->done++;
}

static void on_drain(fleet_warmpool_t *pool, int status, size_t n, void *arg) {
  answer_t *a = arg;

  (void)pool;
  a->status = status;
  a->drained = n;
  a->done++;
}

static void on_snapshot(fleet_warmpool_t *pool, int status,
                        const fleet_warmpool_snapshot_t *s, void *arg) {
  answer_t *a = arg;

  (void)pool;
  a->status = status;
  if (status == 0) {
    a->s = *s;
    snprintf(a->primary, sizeof(a->primary), "%s", s->primary);
    snprintf(a->last_error, sizeof(a->last_error), "%s", s->last_error);
    snprintf(a->fp, sizeof(a->fp), "%s", s->fingerprint);
  }
  a->done++;
}

static answer_t acquire(lock_env_t *e, node_t *n) {
  answer_t a;

  memset(&a, 0, sizeof(a));
  ASSERT_OK(fleet_warmpool_acquire(&n->wp, on_acquire, &a));
  ASSERT(lock_env_wait(e, &a.done, 1, FLEET_TEST_WAIT_MS));
  if (a.status == 0) {
    res_t *r = res_find(a.id);
    ASSERT_NOT_NULL(r);
    ASSERT(r->alive);
    r->handed++;
  }
  return a;
}

static int release(lock_env_t *e, node_t *n, const char *id, int flags) {
  answer_t a;

  memset(&a, 0, sizeof(a));
  ASSERT_OK(fleet_warmpool_release(&n->wp, id, flags, on_status, &a));
  ASSERT(lock_env_wait(e, &a.done, 1, FLEET_TEST_WAIT_MS));
  return a.status;
}

static int resize(lock_env_t *e, node_t *n, uint32_t target) {
  answer_t a;

  memset(&a, 0, sizeof(a));
  ASSERT_OK(fleet_warmpool_resize(&n->wp, target, on_status, &a));
  ASSERT(lock_env_wait(e, &a.done, 1, FLEET_TEST_WAIT_MS));
  return a.status;
}

static answer_t snap(lock_env_t *e, node_t *n) {
  answer_t a;

  memset(&a, 0, sizeof(a));
  ASSERT_OK(fleet_warmpool_snapshot(&n->wp, on_snapshot, &a));
  ASSERT(lock_env_wait(e, &a.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(a.status);
  /* The strings are in the answer itself (primary, last_error, fp). */
  a.s.primary = a.s.last_error = a.s.fingerprint = NULL;
  return a;
}

/* Polls the snapshot until idle == `idle` and the live resources number
 * `alive` (-1: any); returns whether it came within `ms` (scaled). */
static int wait_idle(lock_env_t *e, node_t *n, int64_t idle, int alive,
                     uint64_t ms) {
  uint64_t end = lock_env_now() + fleet_test_ms(ms);

  do {
    answer_t a = snap(e, n);
    if ((int64_t)a.s.idle == idle && (alive < 0 || res_alive() == alive))
      return 1;
    lock_env_sleep(e, 20);
  } while (lock_env_now() < end);
  return 0;
}

static int wait_primary(lock_env_t *e, node_t *n, uint64_t ms) {
  uint64_t end = lock_env_now() + fleet_test_ms(ms);

  while (!fleet_warmpool_is_primary(&n->wp)) {
    if (lock_env_now() >= end)
      return 0;
    lock_env_sleep(e, 10);
  }
  return 1;
}

static void test_begin(void) {
  memset(res, 0, sizeof(res));
  nres = 0;
}

/* ------------------------------------------------------------------------ */

CONFORMANCE_IMPL(warmpool_bad_input) {
  fleet_warmpool_handlers_t no_create = {NULL, on_destroy, on_check};
  fleet_warmpool_handlers_t no_destroy = {on_create, NULL, on_check};
  fleet_warmpool_handlers_t all = {on_create, on_destroy, on_check};
  fleet_warmpool_options_t o;
  answer_t q;
  fleet_warmpool_t wp;
  lock_env_t e;
  node_t a;
  char big[600];

  lock_env_init(&e, b->url);
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_init(NULL, &wp, "wp", "a", NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_init(&e.c1, NULL, "wp", "a", NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_init(&e.c1, &wp, "", "a", NULL));
  /* A NULL or empty owner id is made by fleet (warmpool_ident_generated). */
  ASSERT_NULL(fleet_warmpool_owner(NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_init(&e.c1, &wp, "wp", "a/b", NULL));
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  ASSERT_ERR(FLEET_E2BIG, fleet_warmpool_init(&e.c1, &wp, "wp", big, NULL));
  fleet_warmpool_options_init(&o);
  o.idle_ttl_ms = 1000;
  o.min_remaining_ms = 1000;
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_init(&e.c1, &wp, "wp", "a", &o));
  fleet_warmpool_options_init(&o);
  o.primary_ttl_ms = 50;
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_init(&e.c1, &wp, "wp", "a", &o));
  fleet_warmpool_options_init(&o);
  o.policy = (fleet_warmpool_policy_t)7;
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_init(&e.c1, &wp, "wp", "a", &o));
  /* Defaults: min remaining is half a short idle TTL. */
  fleet_warmpool_options_init(&o);
  o.idle_ttl_ms = 1000;
  o.min_remaining_ms = 0;
  ASSERT_OK(fleet_warmpool_init(&e.c1, &wp, "wp", "a", &o));
  ASSERT_EQ(500, fleet__warmpool_of(&wp)->opts.min_remaining_ms);
  ASSERT_EQ(16, strlen(fleet_warmpool_fingerprint(&wp)));
  ASSERT_STR_EQ("warmpool", fleet_handle_type_name(wp.type));
  ASSERT_OK(fleet_warmpool_close(&wp, NULL));
  ASSERT_ERR(FLEET_ECLOSING, fleet_warmpool_close(&wp, NULL));

  node_init(&a, &e.c1, "a", NULL, 0);
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_acquire(&a.wp, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_warmpool_release(&a.wp, "", 0, on_status, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_release(&a.wp, "x", 0, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_resize(&a.wp, 1, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_drain(&a.wp, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_snapshot(&a.wp, NULL, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_work_done(NULL, 0, NULL));
  /* A start without a required handler is refused and starts nothing. */
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_start(&a.wp, NULL, on_start, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_warmpool_start(&a.wp, &no_create, on_start, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_warmpool_start(&a.wp, &no_destroy, on_start, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_warmpool_start(NULL, &no_create, on_start, NULL));
  /* Before a start gave the handlers: no acquire, release or drain, which
   * run them; a snapshot works. */
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_acquire(&a.wp, on_acquire, NULL));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_warmpool_release(&a.wp, "x", 0, on_status, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_drain(&a.wp, on_drain, NULL));
  q = snap(&e, &a);
  ASSERT_OK(q.status);
  ASSERT_EQ(0, a.started);
  ASSERT_OK(node_start(&e, &a));
  ASSERT_ERR(FLEET_EALREADY, fleet_warmpool_start(&a.wp, &all, on_start, NULL));
  ASSERT_STR_EQ("healthy", fleet_warmpool_state_name(FLEET_WARMPOOL_HEALTHY));
  ASSERT_STR_EQ("unknown", fleet_warmpool_state_name(42));
  node_close(&e, &a);
  ASSERT_ERR(FLEET_EINVAL, fleet_warmpool_acquire(&a.wp, on_acquire, NULL));
  lock_env_close(&e);
}

/* Fill to the target; acquire from a client-only node on the other
 * client: distinct resources, the pool refills; release destroys what is
 * over the target and returns what is under it. */
CONFORMANCE_IMPL(warmpool_acquire_release) {
  fleet_warmpool_options_t o = test_opts(3), oc = test_opts(0);
  lock_env_t e;
  node_t a, c;
  answer_t q, x, y;

  test_begin();
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 0);
  ASSERT_OK(node_start(&e, &a));
  ASSERT(wait_primary(&e, &a, 3000));
  ASSERT_EQ(1, a.elected);
  ASSERT_STR_EQ("primary", fleet__warmpool_node_state_name(
                               fleet__warmpool_of(&a.wp)->state));
  ASSERT(wait_idle(&e, &a, 3, 3, 5000));
  q = snap(&e, &a);
  ASSERT_EQ(3, q.s.target);
  ASSERT_EQ(FLEET_WARMPOOL_HEALTHY, q.s.state);
  ASSERT_STR_EQ("a", q.primary);
  ASSERT_UEQ(a.token, q.s.primary_token);
  ASSERT_STR_EQ(fleet_warmpool_fingerprint(&a.wp), q.fp);
  ASSERT_EQ(3, a.puts);

  oc.client_only = 1;
  node_init(&c, &e.c2, "c", &oc, 0);
  ASSERT_STR_EQ("idle", fleet__warmpool_node_state_name(
                            fleet__warmpool_of(&c.wp)->state));
  ASSERT_OK(node_start(&e, &c));
  ASSERT_STR_EQ("client", fleet__warmpool_node_state_name(
                              fleet__warmpool_of(&c.wp)->state));
  x = acquire(&e, &c);
  ASSERT_OK(x.status);
  y = acquire(&e, &c);
  ASSERT_OK(y.status);
  ASSERT_STR_NE(x.id, y.id);
  /* The primary refills at once. */
  ASSERT(wait_idle(&e, &a, 3, 5, 5000));
  q = snap(&e, &c);
  ASSERT_EQ(2, q.s.borrowed);
  ASSERT_EQ(0, c.elected);
  /* The borrow records' hash is a hash table on Redis (its field "", not
   * counted above: docs/warmpool.md, the key schema). */
  if (b->redis != NULL) {
    redisReply *r =
        fleet_test_redis_cmd(b->redis, "OBJECT ENCODING {locktest:wp}:wp:who");

    ASSERT_STR_EQ("hashtable", r->str);
    freeReplyObject(r);
  }
  /* Idle is at its target: a release destroys. */
  ASSERT_OK(release(&e, &c, x.id, 0));
  ASSERT(!res_find(x.id)->alive);
  ASSERT_EQ(1, c.destroyed);
  /* A second release of the same id is refused. */
  ASSERT_ERR(FLEET_ESTALE, release(&e, &c, x.id, 0));
  /* Under the target (target raised), a release goes back to idle. */
  ASSERT_OK(resize(&e, &c, 4));
  ASSERT(wait_idle(&e, &a, 4, 5, 5000));
  ASSERT_OK(resize(&e, &c, 10));
  ASSERT_OK(release(&e, &c, y.id, 0));
  ASSERT(res_find(y.id)->alive);
  ASSERT_EQ(1, c.destroyed);
  ASSERT_OK(resize(&e, &c, 0));
  ASSERT(wait_idle(&e, &a, 0, 0, 5000));
  {
    int i;
    for (i = 0; i < nres; i++)
      ASSERT_LE(res[i].handed, 1);
  }
  node_close(&e, &c);
  node_close(&e, &a);
  lock_env_close(&e);
}

/* The releases a node makes in one loop phase go in one call, each
 * answered as if alone, in order: one under the target goes back to idle
 * and counts for the next, which finds idle at its target and is
 * destroyed; one with the destroy flag is destroyed; a second release of
 * an id and an id never borrowed are refused. */
CONFORMANCE_IMPL(warmpool_release_batched) {
  fleet_warmpool_options_t o = test_opts(4), oc = test_opts(0);
  uint64_t calls0, items0, calls, items;
  answer_t x[3], r[5];
  const char *ids[5];
  lock_env_t e;
  node_t a, c;
  int i;

  test_begin();
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 0);
  ASSERT_OK(node_start(&e, &a));
  ASSERT(wait_primary(&e, &a, 3000));
  ASSERT(wait_idle(&e, &a, 4, 4, 5000));
  /* No primary from now on: nothing refills idle. */
  node_close(&e, &a);
  oc.client_only = 1;
  node_init(&c, &e.c2, "c", &oc, 0);
  ASSERT_OK(node_start(&e, &c));
  for (i = 0; i < 3; i++) {
    x[i] = acquire(&e, &c);
    ASSERT_OK(x[i].status);
  }
  /* One idle entry left, and a target of 2: room for one. */
  ASSERT_OK(resize(&e, &c, 2));
  ids[0] = x[0].id;
  ids[1] = x[1].id;
  ids[2] = x[2].id;
  ids[3] = x[0].id;
  ids[4] = "never-borrowed";
  fleet__batch_stats(e.c2.internal_, &calls0, &items0);
  memset(r, 0, sizeof(r));
  for (i = 0; i < 5; i++)
    ASSERT_OK(fleet_warmpool_release(
        &c.wp, ids[i], i == 2 ? FLEET_WARMPOOL_RELEASE_DESTROY : 0, on_status,
        &r[i]));
  for (i = 0; i < 5; i++)
    ASSERT(lock_env_wait(&e, &r[i].done, 1, FLEET_TEST_WAIT_MS));
  fleet__batch_stats(e.c2.internal_, &calls, &items);
  /* The five in one call (the owner lease's renewal may take one more). */
  ASSERT_UGE(items - items0, 5);
  ASSERT_ULE(calls - calls0, 2);
  ASSERT_OK(r[0].status);
  ASSERT(res_find(x[0].id)->alive);
  ASSERT_OK(r[1].status);
  ASSERT(!res_find(x[1].id)->alive);
  ASSERT_OK(r[2].status);
  ASSERT(!res_find(x[2].id)->alive);
  ASSERT_ERR(FLEET_ESTALE, r[3].status);
  ASSERT_ERR(FLEET_ESTALE, r[4].status);
  ASSERT_EQ(2, c.destroyed);
  ASSERT_UEQ(2, snap(&e, &c).s.idle);
  /* A release still on the batcher when its node closes is answered
   * once, cancelled (or done, had its call gone out), and the node
   * closes. */
  x[0] = acquire(&e, &c);
  ASSERT_OK(x[0].status);
  memset(r, 0, sizeof(r));
  ASSERT_OK(fleet_warmpool_release(&c.wp, x[0].id, 0, on_status, &r[0]));
  node_close(&e, &c);
  ASSERT(lock_env_wait(&e, &r[0].done, 1, FLEET_TEST_WAIT_MS));
  lock_env_sleep(&e, 50);
  ASSERT_EQ(1, r[0].done);
  ASSERT(r[0].status == FLEET_ECANCELED || r[0].status == 0);
  lock_env_close(&e);
}

CONFORMANCE_IMPL(warmpool_fingerprint) {
  fleet_warmpool_options_t o = test_opts(0), o2 = test_opts(0);
  lock_env_t e;
  node_t a, x, y;
  char want[128];

  test_begin();
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 0);
  ASSERT_OK(node_start(&e, &a));
  o2.definition = (fleet_bytes_t){"scratch-dir v2", 14};
  node_init(&x, &e.c2, "x", &o2, 0);
  ASSERT_STR_NE(fleet_warmpool_fingerprint(&a.wp),
                fleet_warmpool_fingerprint(&x.wp));
  ASSERT_ERR(FLEET_ECONFLICT, node_start(&e, &x));
  snprintf(want, sizeof(want), "fingerprint %s differs from the pool's %s",
           fleet_warmpool_fingerprint(&x.wp),
           fleet_warmpool_fingerprint(&a.wp));
  ASSERT(strstr(fleet_client_last_error(&e.c2), want) != NULL);
  ASSERT_EQ(0, x.elected);
  /* Not started: a second start checks again (and fails again). */
  ASSERT_STR_EQ("idle", fleet__warmpool_node_state_name(
                            fleet__warmpool_of(&x.wp)->state));
  x.started = 0;
  ASSERT_ERR(FLEET_ECONFLICT, node_start(&e, &x));
  /* An option in the fingerprint differs too. */
  o2 = test_opts(0);
  o2.idle_ttl_ms = o.idle_ttl_ms + 1;
  node_init(&y, &e.c2, "y", &o2, 0);
  ASSERT_ERR(FLEET_ECONFLICT, node_start(&e, &y));
  node_close(&e, &y);
  /* The same definition and options agree. */
  node_init(&y, &e.c2, "y", &o, 0);
  ASSERT_OK(node_start(&e, &y));
  ASSERT_STR_EQ(fleet_warmpool_fingerprint(&a.wp),
                fleet_warmpool_fingerprint(&y.wp));
  node_close(&e, &x);
  node_close(&e, &y);
  node_close(&e, &a);
  lock_env_close(&e);
}

/* Resize 4 -> 1 -> 0 converges, destroying the surplus; resize(0) then
 * drain empties the pool; drain with a target keeps nothing it took. */
CONFORMANCE_IMPL(warmpool_resize_drain) {
  fleet_warmpool_options_t o = test_opts(4);
  lock_env_t e;
  node_t a, c;
  answer_t d, q;

  test_begin();
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 0);
  ASSERT_OK(node_start(&e, &a));
  ASSERT(wait_idle(&e, &a, 4, 4, 5000));
  client_init(&e, &c, &e.c2, "c", &o);
  ASSERT_OK(resize(&e, &c, 1));
  ASSERT(wait_idle(&e, &a, 1, 1, 5000));
  ASSERT_EQ(3, a.destroyed);
  ASSERT_OK(resize(&e, &c, 0));
  ASSERT(wait_idle(&e, &a, 0, 0, 5000));
  q = snap(&e, &c);
  ASSERT_EQ(0, q.s.target);
  ASSERT_EQ(FLEET_WARMPOOL_HEALTHY, q.s.state);
  ASSERT_OK(resize(&e, &c, 3));
  ASSERT(wait_idle(&e, &a, 3, 3, 5000));
  /* A drain with the target still 3 takes the 3 idle ones and destroys
   * them here, and the primary puts new ones. */
  memset(&d, 0, sizeof(d));
  ASSERT_OK(fleet_warmpool_drain(&c.wp, on_drain, &d));
  ASSERT(lock_env_wait(&e, &d.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(d.status);
  ASSERT_UEQ(3, d.drained);
  ASSERT_EQ(3, c.destroyed);
  ASSERT(wait_idle(&e, &a, 3, 3, 5000));
  /* Lower the target first, then drain: nothing comes back. */
  ASSERT_OK(resize(&e, &c, 0));
  memset(&d, 0, sizeof(d));
  ASSERT_OK(fleet_warmpool_drain(&c.wp, on_drain, &d));
  ASSERT(lock_env_wait(&e, &d.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(d.status);
  ASSERT_UGE(d.drained + (size_t)a.destroyed, 3);
  ASSERT(wait_idle(&e, &a, 0, 0, 5000));
  lock_env_sleep(&e, fleet_test_ms(200));
  ASSERT_EQ(0, res_alive());
  q = snap(&e, &c);
  ASSERT_EQ(0, q.s.destroying);
  ASSERT_EQ(0, q.s.creating);
  node_close(&e, &c);
  node_close(&e, &a);
  lock_env_close(&e);
}

/* Idle entries whose TTL ran out (or has less than the minimum left) are
 * reaped and replaced, never handed out. */
CONFORMANCE_IMPL(warmpool_idle_ttl) {
  fleet_warmpool_options_t o = test_opts(2);
  lock_env_t e;
  node_t a;
  char first[2][64];
  int i;

  test_begin();
  o.idle_ttl_ms = (uint32_t)fleet_test_ms(600);
  o.min_remaining_ms = (uint32_t)fleet_test_ms(200);
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 0);
  ASSERT_OK(node_start(&e, &a));
  ASSERT(wait_idle(&e, &a, 2, 2, 5000));
  ASSERT_EQ(2, nres);
  for (i = 0; i < 2; i++)
    snprintf(first[i], sizeof(first[i]), "%s", res[i].id);
  lock_env_sleep(&e, fleet_test_ms(600));
  /* Replaced: the first two are gone, two others are idle. */
  ASSERT(wait_idle(&e, &a, 2, 2, 5000));
  for (i = 0; i < 2; i++)
    ASSERT(!res_find(first[i])->alive);
  ASSERT_GE(nres, 4);
  /* What acquire returns has more than the minimum left: it was put less
   * than idle TTL - min remaining ago, so it is never one of the first. */
  {
    answer_t x = acquire(&e, &a);
    ASSERT_OK(x.status);
    ASSERT_STR_NE(first[0], x.id);
    ASSERT_STR_NE(first[1], x.id);
    ASSERT_OK(release(&e, &a, x.id, FLEET_WARMPOOL_RELEASE_DESTROY));
    ASSERT(!res_find(x.id)->alive);
  }
  node_close(&e, &a);
  lock_env_close(&e);
}

/* A primary that lost its lease while creations ran: their puts carry the
 * old token and are refused, the resources destroyed; the new primary
 * fills the pool. */
CONFORMANCE_IMPL(warmpool_stale_put) {
  fleet_warmpool_options_t o = test_opts(2);
  lock_env_t e;
  node_t a, c;
  answer_t done, q;
  int i;

  test_begin();
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 0);
  a.async = 1;
  ASSERT_OK(node_start(&e, &a));
  ASSERT(wait_primary(&e, &a, 3000));
  ASSERT(lock_env_wait(&e, &a.npending, 2, FLEET_TEST_WAIT_MS));
  q = snap(&e, &a);
  ASSERT_EQ(2, q.s.creating);
  /* c waits; a gives its lease up (as if it had lapsed). */
  node_init(&c, &e.c2, "c", &o, 0);
  ASSERT_OK(node_start(&e, &c));
  memset(&done, 0, sizeof(done));
  ASSERT_OK(fleet_leader_resign(&fleet__warmpool_of(&a.wp)->leader, on_status,
                                &done));
  ASSERT(lock_env_wait(&e, &done.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT(wait_primary(&e, &c, 3000));
  ASSERT_UGT(c.token, a.token);
  /* The old warm-ups can never be put: c does not wait for them, it
   * destroys their ids and fills the pool with its own. */
  ASSERT(wait_idle(&e, &c, 2, 2, 5000));
  ASSERT_EQ(2, c.puts);
  ASSERT_GE(c.destroyed, 2);
  q = snap(&e, &c);
  ASSERT_EQ(0, q.s.creating);
  for (i = 0; i < 2; i++)
    complete_pending(&a);
  ASSERT(lock_env_wait(&e, &a.refused, 2, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(FLEET_ESTALE, a.last_put);
  ASSERT_EQ(0, a.puts);
  ASSERT(lock_env_wait(&e, &a.destroyed, 2, FLEET_TEST_WAIT_MS));
  /* Nothing leaked: only c's two exist. */
  ASSERT(wait_idle(&e, &c, 2, 2, 5000));
  node_close(&e, &a);
  node_close(&e, &c);
  lock_env_close(&e);
}

/* Close gives the primary lease up (the other node takes over well within
 * its TTL) and destroys the creations it had not put. */
CONFORMANCE_IMPL(warmpool_close_handover) {
  fleet_warmpool_options_t o = test_opts(2);
  lock_env_t e;
  node_t a, c;
  uint64_t t0;

  test_begin();
  o.primary_ttl_ms = (uint32_t)fleet_test_ms(5000);
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 0);
  a.async = 1;
  ASSERT_OK(node_start(&e, &a));
  ASSERT(wait_primary(&e, &a, 3000));
  ASSERT(lock_env_wait(&e, &a.npending, 2, FLEET_TEST_WAIT_MS));
  node_init(&c, &e.c2, "c", &o, 0);
  ASSERT_OK(node_start(&e, &c));
  t0 = lock_env_now();
  ASSERT_OK(fleet_warmpool_close(&a.wp, on_close));
  ASSERT(wait_primary(&e, &c, 3000));
  ASSERT_LT(lock_env_now() - t0, fleet_test_ms(2500));
  /* a waits for its creations; they are destroyed, not put. */
  lock_env_sleep(&e, 50);
  ASSERT_EQ(0, a.closed);
  complete_pending(&a);
  complete_pending(&a);
  ASSERT(lock_env_wait(&e, &a.closed, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(0, a.puts);
  ASSERT_EQ(2, a.destroyed);
  ASSERT(wait_idle(&e, &c, 2, 2, 8000));
  node_close(&e, &c);
  lock_env_close(&e);
}

/* A borrower that keeps renewing keeps its resource past the lease; one
 * that stops (closed) loses it to the primary, which destroys it. */
CONFORMANCE_IMPL(warmpool_borrow_lease) {
  fleet_warmpool_options_t o = test_opts(2), oc;
  lock_env_t e;
  node_t a, c;
  answer_t x, y;
  uint64_t end;

  test_begin();
  o.borrow_lease_ms = (uint32_t)fleet_test_ms(300);
  oc = o;
  oc.client_only = 1;
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 0);
  ASSERT_OK(node_start(&e, &a));
  ASSERT(wait_idle(&e, &a, 2, 2, 5000));
  client_init(&e, &c, &e.c2, "c", &oc);
  x = acquire(&e, &c);
  ASSERT_OK(x.status);
  lock_env_sleep(&e, fleet_test_ms(900));
  ASSERT(res_find(x.id)->alive);
  ASSERT_EQ(1, snap(&e, &a).s.borrowed);
  y = acquire(&e, &c);
  ASSERT_OK(y.status);
  ASSERT_OK(release(&e, &c, x.id, FLEET_WARMPOOL_RELEASE_DESTROY));
  /* c dies (closes without releasing y): y is destroyed by the primary. */
  node_close(&e, &c);
  end = lock_env_now() + fleet_test_ms(5000);
  while (res_find(y.id)->alive && lock_env_now() < end)
    lock_env_sleep(&e, 20);
  ASSERT(!res_find(y.id)->alive);
  ASSERT_EQ(0, snap(&e, &a).s.borrowed);
  node_close(&e, &a);
  lock_env_close(&e);
}

/* No primary, nothing idle: direct create hands out a new resource made
 * here; fail fast says FLEET_ENOTFOUND. */
CONFORMANCE_IMPL(warmpool_direct_create) {
  fleet_warmpool_options_t o = test_opts(0);
  lock_env_t e;
  node_t c, f;
  answer_t x, q;

  test_begin();
  o.client_only = 1;
  lock_env_init(&e, b->url);
  client_init(&e, &c, &e.c1, "c", &o);
  x = acquire(&e, &c);
  ASSERT_OK(x.status);
  ASSERT_EQ(1, c.created);
  q = snap(&e, &c);
  ASSERT_EQ(1, q.s.borrowed);
  ASSERT_EQ(0, q.s.creating);
  ASSERT_EQ(FLEET_WARMPOOL_STOPPED, q.s.state);
  ASSERT_STR_EQ("", q.primary);
  ASSERT_OK(release(&e, &c, x.id, 0)); /* target 0: destroyed */
  ASSERT(!res_find(x.id)->alive);
  /* A failed creation on demand fails the acquire. */
  c.fail = 1;
  x = acquire(&e, &c);
  ASSERT_ERR(FLEET_EBACKEND, x.status);
  o.policy = FLEET_WARMPOOL_FAIL_FAST;
  client_init(&e, &f, &e.c2, "f", &o);
  x = acquire(&e, &f);
  ASSERT_ERR(FLEET_ENOTFOUND, x.status);
  ASSERT_EQ(0, f.created);
  node_close(&e, &f);
  node_close(&e, &c);
  lock_env_close(&e);
}

/* Failed creations: the count, backoff and last error are shared in the
 * backend; 3 in a row is degraded; a success resets them. */
CONFORMANCE_IMPL(warmpool_failures) {
  fleet_warmpool_options_t o = test_opts(2);
  lock_env_t e;
  node_t a;
  answer_t q;
  uint64_t end;

  test_begin();
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 0);
  a.fail = 1;
  ASSERT_OK(node_start(&e, &a));
  end = lock_env_now() + fleet_test_ms(5000);
  do {
    lock_env_sleep(&e, 20);
    q = snap(&e, &a);
  } while (q.s.failures < 3 && lock_env_now() < end);
  ASSERT_UGE(q.s.failures, 3);
  ASSERT_EQ(FLEET_WARMPOOL_DEGRADED, q.s.state);
  ASSERT_STR_EQ("no capacity", q.last_error);
  ASSERT_EQ(0, res_alive());
  a.fail = 0;
  ASSERT(wait_idle(&e, &a, 2, 2, 5000));
  q = snap(&e, &a);
  ASSERT_EQ(0, q.s.failures);
  ASSERT_EQ(0, q.s.backoff_ms);
  ASSERT_EQ(FLEET_WARMPOOL_HEALTHY, q.s.state);
  node_close(&e, &a);
  lock_env_close(&e);
}

/* A resource that fails its check is destroyed, never handed out. */
CONFORMANCE_IMPL(warmpool_check) {
  fleet_warmpool_options_t o = test_opts(5);
  lock_env_t e;
  node_t a;
  answer_t x;

  test_begin();
  o.policy = FLEET_WARMPOOL_FAIL_FAST;
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 1);
  ASSERT_OK(node_start(&e, &a));
  ASSERT(wait_idle(&e, &a, 5, 5, 5000));
  x = acquire(&e, &a);
  ASSERT_OK(x.status);
  ASSERT_EQ(1, a.checks);
  ASSERT_OK(release(&e, &a, x.id, 0));
  a.check_fail = 1;
  memset(&x, 0, sizeof(x));
  ASSERT_OK(fleet_warmpool_acquire(&a.wp, on_acquire, &x));
  ASSERT(lock_env_wait(&e, &x.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_ERR(FLEET_EBACKEND, x.status);
  ASSERT_GE(a.checks, 4);
  ASSERT(lock_env_wait(&e, &a.destroyed, 3, FLEET_TEST_WAIT_MS));
  node_close(&e, &a);
  lock_env_close(&e);
}

/* The primary does not wait for its interval: a resize wakes it, each put
 * starts the next creation (a rolling window of one here), an acquire
 * makes it refill, a drain's destroys are its own. */
CONFORMANCE_IMPL(warmpool_wake) {
  fleet_warmpool_options_t o = test_opts(0);
  lock_env_t e;
  node_t a, c;
  answer_t x;

  test_begin();
  o.reconcile_ms = 600000;
  o.warmup_concurrency = 1;
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 0);
  ASSERT_OK(node_start(&e, &a));
  ASSERT(wait_primary(&e, &a, 3000));
  client_init(&e, &c, &e.c2, "c", &o);
  ASSERT_OK(resize(&e, &c, 3));
  ASSERT(wait_idle(&e, &a, 3, 3, 3000));
  ASSERT_EQ(3, a.puts);
  x = acquire(&e, &c);
  ASSERT_OK(x.status);
  ASSERT(wait_idle(&e, &a, 3, 4, 3000));
  ASSERT_OK(resize(&e, &c, 1));
  ASSERT(wait_idle(&e, &a, 1, 2, 3000));
  ASSERT_OK(release(&e, &c, x.id, 0));
  ASSERT(wait_idle(&e, &a, 1, 1, 3000));
  node_close(&e, &c);
  node_close(&e, &a);
  lock_env_close(&e);
}

/* The snapshot's state through a pool's life: healthy while warming,
 * draining once the target is 0 with creations in flight (whose puts are
 * then refused: idle is at its target), healthy when empty, stopped when
 * no primary holds the lease. */
CONFORMANCE_IMPL(warmpool_states) {
  fleet_warmpool_options_t o = test_opts(2);
  lock_env_t e;
  node_t a, c;
  answer_t q;

  test_begin();
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 0);
  a.async = 1;
  ASSERT_OK(node_start(&e, &a));
  ASSERT(lock_env_wait(&e, &a.npending, 2, FLEET_TEST_WAIT_MS));
  node_init(&c, &e.c2, "c", &o, 0);
  q = snap(&e, &c);
  ASSERT_EQ(FLEET_WARMPOOL_HEALTHY, q.s.state);
  ASSERT_EQ(2, q.s.creating);
  ASSERT_EQ(0, q.s.idle);
  ASSERT_OK(resize(&e, &c, 0));
  q = snap(&e, &c);
  ASSERT_EQ(FLEET_WARMPOOL_DRAINING, q.s.state);
  complete_pending(&a);
  complete_pending(&a);
  ASSERT(lock_env_wait(&e, &a.refused, 2, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(FLEET_EALREADY, a.last_put);
  ASSERT(lock_env_wait(&e, &a.destroyed, 2, FLEET_TEST_WAIT_MS));
  ASSERT(wait_idle(&e, &c, 0, 0, 3000));
  q = snap(&e, &c);
  ASSERT_EQ(FLEET_WARMPOOL_HEALTHY, q.s.state);
  ASSERT_EQ(0, q.s.creating);
  node_close(&e, &a);
  q = snap(&e, &c);
  ASSERT_EQ(FLEET_WARMPOOL_STOPPED, q.s.state);
  ASSERT_STR_EQ("", q.primary);
  node_close(&e, &c);
  lock_env_close(&e);
}

/* A destroy that fails leaves its id claimed; once the claim runs out the
 * primary claims it again and destroys it. */
CONFORMANCE_IMPL(warmpool_destroy_retry) {
  fleet_warmpool_options_t o = test_opts(1);
  lock_env_t e;
  node_t a;
  answer_t q;
  uint64_t end;

  test_begin();
  o.warmup_timeout_ms = (uint32_t)fleet_test_ms(300);
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "a", &o, 0);
  ASSERT_OK(node_start(&e, &a));
  ASSERT(wait_idle(&e, &a, 1, 1, 5000));
  a.destroy_fail = 1;
  ASSERT_OK(resize(&e, &a, 0));
  ASSERT(lock_env_wait(&e, &a.destroy_tries, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(1, res_alive());
  ASSERT_GE(a.errors, 1);
  q = snap(&e, &a);
  ASSERT_EQ(1, q.s.destroying);
  end = lock_env_now() + fleet_test_ms(5000);
  while (res_alive() > 0 && lock_env_now() < end)
    lock_env_sleep(&e, 20);
  ASSERT_EQ(0, res_alive());
  ASSERT_EQ(2, a.destroy_tries);
  ASSERT(wait_idle(&e, &a, 0, 0, 3000));
  q = snap(&e, &a);
  ASSERT_EQ(0, q.s.destroying);
  node_close(&e, &a);
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Owner ids                                                                */

/* Two nodes under one owner id: the second start is refused with
 * FLEET_ECONFLICT naming the id, and so are its acquires and releases,
 * while the first keeps borrowing and releasing. A resource is the
 * borrowing instance's: once the first closed (its id free at once, long
 * before its lease's TTL), the second starts, but still cannot release
 * what the first borrowed, and nothing changed. */
CONFORMANCE_IMPL(warmpool_ident_conflict) {
  fleet_warmpool_options_t o = test_opts(2);
  lock_env_t e;
  node_t a, x;
  answer_t r1, r2, r3, q;
  char want[64];
  uint64_t closed_at;

  test_begin();
  /* A lease far longer than the waits below: an id free at once after a
   * close is not one that ran out. */
  o.primary_ttl_ms = (uint32_t)fleet_test_ms(60000);
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, "o", &o, 0);
  ASSERT_OK(node_start(&e, &a));
  ASSERT(wait_idle(&e, &a, 2, 2, 5000));
  r1 = acquire(&e, &a);
  ASSERT_OK(r1.status);
  r2 = acquire(&e, &a);
  ASSERT_OK(r2.status);

  node_init(&x, &e.c2, "o", &o, 0);
  ASSERT_STR_EQ("o", fleet_warmpool_owner(&x.wp));
  ASSERT_ERR(FLEET_ECONFLICT, node_start(&e, &x));
  snprintf(want, sizeof(want), "owner id \"o\" is already in use");
  ASSERT_NOT_NULL(strstr(fleet_client_last_error(&e.c2), want));
  ASSERT_EQ(0, x.elected);
  /* Its release of the first node's resource is refused: nothing moved. */
  ASSERT_ERR(FLEET_ECONFLICT, release(&e, &x, r1.id, 0));
  q = snap(&e, &a);
  ASSERT_EQ(2, q.s.borrowed);
  /* So is an acquire (no start needed for one). */
  memset(&r3, 0, sizeof(r3));
  ASSERT_OK(fleet_warmpool_acquire(&x.wp, on_acquire, &r3));
  ASSERT(lock_env_wait(&e, &r3.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_ERR(FLEET_ECONFLICT, r3.status);
  ASSERT_EQ(0, x.created);

  /* The first node goes on: it releases, acquires again and is primary. */
  ASSERT_OK(release(&e, &a, r1.id, 0));
  r3 = acquire(&e, &a);
  ASSERT_OK(r3.status);
  ASSERT_OK(release(&e, &a, r3.id, 0));
  ASSERT(fleet_warmpool_is_primary(&a.wp));
  ASSERT_EQ(0, a.errors);

  /* Closed: the id is free at once, not after the lease's TTL. */
  closed_at = lock_env_now();
  node_close(&e, &a);
  x.started = 0;
  ASSERT_OK(node_start(&e, &x));
  ASSERT_LT(lock_env_now() - closed_at, fleet_test_ms(30000));
  /* Still not the first instance's borrower. */
  ASSERT_ERR(FLEET_ESTALE, release(&e, &x, r2.id, 0));
  q = snap(&e, &x);
  ASSERT_EQ(1, q.s.borrowed);
  ASSERT(res_find(r2.id)->alive);
  node_close(&e, &x);
  lock_env_close(&e);
}

/* A NULL or empty owner id is made by fleet: unique per node, readable,
 * and a node started under it works. */
CONFORMANCE_IMPL(warmpool_ident_generated) {
  fleet_warmpool_options_t o = test_opts(0);
  lock_env_t e;
  node_t a, x;
  answer_t r;

  test_begin();
  o.policy = FLEET_WARMPOOL_DIRECT_CREATE;
  lock_env_init(&e, b->url);
  node_init(&a, &e.c1, NULL, &o, 0);
  node_init(&x, &e.c2, "", &o, 0);
  ASSERT_NOT_NULL(fleet_warmpool_owner(&a.wp));
  ASSERT_NOT_NULL(fleet_warmpool_owner(&x.wp));
  ASSERT_STR_NE(fleet_warmpool_owner(&a.wp), fleet_warmpool_owner(&x.wp));
  ASSERT_NULL(strchr(fleet_warmpool_owner(&a.wp), '/'));
  ASSERT_GT(strlen(fleet_warmpool_owner(&a.wp)), 8);
  ASSERT_OK(node_start(&e, &a));
  ASSERT_OK(node_start(&e, &x));
  /* A creation on demand is named after the made id. */
  r = acquire(&e, &x);
  ASSERT_OK(r.status);
  ASSERT(strncmp(r.id, fleet_warmpool_owner(&x.wp),
                 strlen(fleet_warmpool_owner(&x.wp))) == 0);
  ASSERT_OK(release(&e, &x, r.id, 0));
  node_close(&e, &a);
  node_close(&e, &x);
  lock_env_close(&e);
}
