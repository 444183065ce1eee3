/* test_queue_deps.c -- flows (docs/queue.md, "Flows"): a parent waits,
 * unclaimable, until its children ended, in its queue or another; it
 * then runs and reads their states and results; a child's death kills it
 * (or counts, with ignore_child_death); bad flows are refused with
 * nothing written; waiting parents are counted and listed; on a Redis
 * Cluster, a child's queue must share the parent queue's slot. */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "test_queue_util.h"

/* What a flow call and a children call handed back. */
typedef struct {
  int done, status;
  char parent[FLEET_JOB_ID_MAX + 1];
  char kids[8][FLEET_JOB_ID_MAX + 1];
  char existing[FLEET_JOB_ID_MAX + 1];
  size_t n, waiting;
  int fail;
  char queue[8][64];
  fleet_job_state_t state[8];
  char result[8][64];
} deps_out_t;

static void deps_on_flow(fleet_queue_t *q, int status,
                         const fleet_flow_result_t *r, void *ud) {
  deps_out_t *o = ud;
  size_t i;

  o->done = 1;
  o->status = status;
  o->existing[0] = o->parent[0] = '\0';
  if (status == FLEET_EEXIST) {
    snprintf(o->existing, sizeof(o->existing), "%s", r->existing_id);
    return;
  }
  if (status != 0) {
    ASSERT_NULL(r);
    return;
  }
  ASSERT_NULL(r->existing_id);
  snprintf(o->parent, sizeof(o->parent), "%s", r->parent_id);
  o->n = r->n_children;
  for (i = 0; i < r->n_children && i < 8; i++)
    snprintf(o->kids[i], sizeof(o->kids[i]), "%s", r->child_ids[i]);
}

/* Adds `f` on `t` and waits; returns the callback's status. */
static int deps_add(qt_t *t, const fleet_flow_spec_t *f, deps_out_t *o) {
  int rc;

  memset(o, 0, sizeof(*o));
  rc = fleet_queue_add_flow(&t->q, f, deps_on_flow, o);
  if (rc != 0)
    return rc;
  ASSERT(fleet_test_run_until(&t->c.loop, fleet_test_flag_set, &o->done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  return o->status;
}

static void deps_on_children(fleet_queue_t *q, int status,
                             const fleet_flow_child_info_t *kids, size_t n,
                             size_t waiting, int fail, void *ud) {
  deps_out_t *o = ud;
  size_t i;

  o->done = 1;
  o->status = status;
  o->n = n;
  o->waiting = waiting;
  o->fail = fail;
  for (i = 0; i < n && i < 8; i++) {
    snprintf(o->queue[i], sizeof(o->queue[i]), "%s", kids[i].queue);
    snprintf(o->kids[i], sizeof(o->kids[i]), "%s", kids[i].id);
    o->state[i] = kids[i].state;
    ASSERT_LT(kids[i].result.len, sizeof(o->result[i]));
    memcpy(o->result[i], kids[i].result.base, kids[i].result.len);
    o->result[i][kids[i].result.len] = '\0';
  }
}

/* Reads the children of parent `id` of `t`; returns the status. */
static int deps_children(qt_t *t, const char *id, deps_out_t *o) {
  int rc;

  memset(o, 0, sizeof(*o));
  rc = fleet_queue_children(&t->q, id, deps_on_children, o);
  if (rc != 0)
    return rc;
  ASSERT(fleet_test_run_until(&t->c.loop, fleet_test_flag_set, &o->done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  return o->status;
}

/* A name for a second queue that shares `name`'s Redis Cluster slot under
 * the tests' prefix "qt" (any name would do elsewhere). */
static void deps_same_slot(const char *name, char *out, size_t cap) {
  char tag[128], other[128];
  uint16_t slot;
  int i;

  snprintf(tag, sizeof(tag), "{qt:%s}", name);
  slot = fleet__key_slot(tag, strlen(tag));
  for (i = 0; i < 1000000; i++) {
    snprintf(other, sizeof(other), "{qt:%s-o%d}", name, i);
    if (fleet__key_slot(other, strlen(other)) == slot) {
      snprintf(out, cap, "%s-o%d", name, i);
      return;
    }
  }
  ASSERT(0);
}

/* A second queue on the client of a qt_t (the memory backend's store is
 * the client's): calls on it run the qt_t's loop. */
typedef struct {
  fleet_queue_t q;
  qt_t *t;
  int done, status, closed;
  size_t n;
  qt_job_t job;
  fleet_job_state_t state;
} deps_q2_t;

static void deps_q2_on_claim(fleet_queue_t *q, int status, fleet_job_t *jobs,
                             size_t n, const fleet_claim_info_t *info,
                             void *ud) {
  deps_q2_t *u = ud;

  u->done = 1;
  u->status = status;
  u->n = n;
  if (n > 0) {
    snprintf(u->job.id, sizeof(u->job.id), "%s", jobs[0].id);
    u->job.token = jobs[0].token;
  }
}

static void deps_q2_on_batch(fleet_queue_t *q, int status, const int *results,
                             size_t n, void *ud) {
  deps_q2_t *u = ud;

  u->done = 1;
  u->status = status == 0 ? results[0] : status;
}

static void deps_q2_on_get(fleet_queue_t *q, int status,
                           const fleet_job_info_t *info, void *ud) {
  deps_q2_t *u = ud;

  u->done = 1;
  u->status = status;
  if (status == 0)
    u->state = info->state;
}

static void deps_q2_on_close(fleet_handle_t *h) {
  deps_q2_t *u = h->data;
  u->closed = 1;
}

static void deps_q2_wait(deps_q2_t *u) {
  ASSERT(fleet_test_run_until(&u->t->c.loop, fleet_test_flag_set, &u->done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  u->done = 0;
}

static void deps_q2_open(deps_q2_t *u, qt_t *t, const char *name) {
  memset(u, 0, sizeof(*u));
  u->t = t;
  u->q.data = u;
  ASSERT_OK(fleet_queue_init(&t->c.client, &u->q, name, NULL));
}

static void deps_q2_close(deps_q2_t *u) {
  ASSERT_OK(fleet_queue_close(&u->q, deps_q2_on_close));
  ASSERT(fleet_test_run_until(&u->t->c.loop, fleet_test_flag_set, &u->closed,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

/* Claims up to 8 jobs of `u`: returns how many; u->job is the first. */
static size_t deps_q2_claim(deps_q2_t *u) {
  ASSERT_OK(fleet_queue_claim(&u->q, 8, 60000, deps_q2_on_claim, u));
  deps_q2_wait(u);
  ASSERT_OK(u->status);
  return u->n;
}

static void deps_q2_complete(deps_q2_t *u) {
  fleet_claim_t c = qt_claim_of(&u->job);

  ASSERT_OK(fleet_queue_complete(&u->q, &c, 1, deps_q2_on_batch, u));
  deps_q2_wait(u);
  ASSERT_OK(u->status);
}

static fleet_job_state_t deps_q2_state(deps_q2_t *u, const char *id) {
  ASSERT_OK(fleet_queue_get(&u->q, id, deps_q2_on_get, u));
  deps_q2_wait(u);
  ASSERT_OK(u->status);
  return u->state;
}

/* Claims every job claimable in `t` into `jobs` (at most 8). */
static int deps_claim_all(qt_t *t, qt_job_t *jobs) {
  return qt_claim(t, 8, 60000, jobs);
}

static void deps_complete(qt_t *t, const qt_job_t *job) {
  fleet_claim_t c = qt_claim_of(job);
  int res[1];

  ASSERT_OK(qt_complete(t, &c, 1, res));
  ASSERT_OK(res[0]);
}

/* The state of job `id` of `t`. */
static fleet_job_state_t deps_state(qt_t *t, const char *id) {
  fleet_job_info_t info;

  ASSERT_OK(qt_get(t, id, &info, NULL, 0, NULL, 0));
  return info.state;
}

CONFORMANCE_IMPL(queue_deps_run_after_children) {
  fleet_flow_child_t kids[3];
  fleet_flow_spec_t f;
  deps_out_t o, c;
  qt_job_t jobs[8];
  char other[64];
  deps_q2_t u;
  qt_t t;
  int i;

  deps_same_slot("dp", other, sizeof(other));
  qt_open(&t, b->url, "dp", NULL);
  deps_q2_open(&u, &t, other);
  fleet_flow_spec_init(&f, "parent", "p", 1);
  f.parent.priority = 5;
  for (i = 0; i < 3; i++) {
    memset(&kids[i], 0, sizeof(kids[i]));
    fleet_job_spec_init(&kids[i].spec, "child", "c", 1);
  }
  kids[2].queue = other; /* one child in another queue */
  f.children = kids;
  f.n_children = 3;
  f.parent.max_attempts = 2;
  f.parent.backoff = FLEET_BACKOFF_FIXED;
  ASSERT_OK(deps_add(&t, &f, &o));
  ASSERT_UEQ(3, o.n);
  ASSERT_EQ(FLEET_JOB_WAITING_CHILDREN, deps_state(&t, o.parent));
  {
    /* The parent was written as an enqueue writes a job: its options. */
    fleet_job_info_t info;
    ASSERT_OK(qt_get(&t, o.parent, &info, NULL, 0, NULL, 0));
    ASSERT_EQ(5, info.priority);
    ASSERT_EQ(2, info.max_attempts);
  }
  ASSERT_STR_EQ("waiting-children",
                fleet_job_state_name(FLEET_JOB_WAITING_CHILDREN));
  ASSERT_EQ(FLEET_JOB_PENDING, deps_q2_state(&u, o.kids[2]));

  ASSERT_OK(deps_children(&t, o.parent, &c));
  ASSERT_UEQ(3, c.n);
  ASSERT_UEQ(3, c.waiting);
  ASSERT_EQ(1, c.fail);
  ASSERT_STR_EQ("dp", c.queue[0]);
  ASSERT_STR_EQ(other, c.queue[2]);
  for (i = 0; i < 3; i++) {
    ASSERT_STR_EQ(o.kids[i], c.kids[i]);
    ASSERT_EQ(FLEET_JOB_PENDING, c.state[i]);
  }

  /* The parent's queue hands out its two children, never the parent. */
  ASSERT_EQ(2, deps_claim_all(&t, jobs));
  ASSERT_STR_EQ("child", jobs[0].type);
  ASSERT_STR_EQ("child", jobs[1].type);
  {
    /* Both in one call: counted together for their parent. */
    fleet_claim_t two[2] = {qt_claim_of(&jobs[0]), qt_claim_of(&jobs[1])};
    int res[2];
    ASSERT_OK(qt_complete(&t, two, 2, res));
    ASSERT_OK(res[0]);
    ASSERT_OK(res[1]);
  }
  ASSERT_EQ(0, deps_claim_all(&t, jobs));
  ASSERT_EQ(FLEET_JOB_WAITING_CHILDREN, deps_state(&t, o.parent));
  ASSERT_OK(deps_children(&t, o.parent, &c));
  ASSERT_UEQ(1, c.waiting);
  ASSERT_EQ(FLEET_JOB_COMPLETED, c.state[0]);
  ASSERT_EQ(FLEET_JOB_PENDING, c.state[2]);

  /* The last child, in the other queue, releases the parent. */
  ASSERT_UEQ(1, deps_q2_claim(&u));
  ASSERT_STR_EQ(o.kids[2], u.job.id);
  deps_q2_complete(&u);
  ASSERT_EQ(FLEET_JOB_PENDING, deps_state(&t, o.parent));
  ASSERT_OK(deps_children(&t, o.parent, &c));
  ASSERT_UEQ(0, c.waiting);
  for (i = 0; i < 3; i++)
    ASSERT_EQ(FLEET_JOB_COMPLETED, c.state[i]);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.pending);

  ASSERT_EQ(1, deps_claim_all(&t, jobs));
  ASSERT_STR_EQ(o.parent, jobs[0].id);
  ASSERT_STR_EQ("parent", jobs[0].type);
  deps_complete(&t, &jobs[0]);
  /* The flow's state goes with the parent. */
  ASSERT_ERR(FLEET_ENOTFOUND, deps_children(&t, o.parent, &c));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(3, t.counts.completed);
  ASSERT_UEQ(0, t.counts.pending + t.counts.running);
  deps_q2_close(&u);
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_deps_child_dies) {
  fleet_flow_child_t kids[2];
  fleet_flow_spec_t f;
  fleet_job_info_t info;
  fleet_claim_t claim;
  deps_out_t o, c;
  qt_job_t jobs[8];
  char err[128];
  qt_t t;
  int i;

  qt_open(&t, b->url, "dd", NULL);
  fleet_flow_spec_init(&f, "parent", "p", 1);
  for (i = 0; i < 2; i++) {
    memset(&kids[i], 0, sizeof(kids[i]));
    fleet_job_spec_init(&kids[i].spec, "child", "c", 1);
    kids[i].spec.max_attempts = 1;
  }
  f.children = kids;
  f.n_children = 2;

  /* A child dead after its attempts kills the parent at once. */
  ASSERT_OK(deps_add(&t, &f, &o));
  ASSERT_EQ(2, deps_claim_all(&t, jobs));
  claim = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_fail(&t, &claim, "boom"));
  ASSERT_EQ(1, t.dead);
  ASSERT_OK(qt_get(&t, o.parent, &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_NOT_NULL(strstr(err, "died"));
  ASSERT_NOT_NULL(strstr(err, jobs[0].id));
  ASSERT_ERR(FLEET_ENOTFOUND, deps_children(&t, o.parent, &c));
  /* The other child ends unseen; the parent stays dead. */
  deps_complete(&t, &jobs[1]);
  ASSERT_EQ(FLEET_JOB_DEAD, deps_state(&t, o.parent));
  ASSERT_EQ(0, deps_claim_all(&t, jobs));

  /* With ignore_child_death, a dead child counts as ended. */
  f.ignore_child_death = 1;
  ASSERT_OK(deps_add(&t, &f, &o));
  ASSERT_EQ(2, deps_claim_all(&t, jobs));
  claim = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_fail(&t, &claim, "boom"));
  ASSERT_EQ(FLEET_JOB_WAITING_CHILDREN, deps_state(&t, o.parent));
  deps_complete(&t, &jobs[1]);
  ASSERT_OK(deps_children(&t, o.parent, &c));
  ASSERT_EQ(0, c.fail);
  ASSERT_EQ(FLEET_JOB_DEAD, c.state[0]);
  ASSERT_EQ(FLEET_JOB_COMPLETED, c.state[1]);
  ASSERT_EQ(1, deps_claim_all(&t, jobs));
  ASSERT_STR_EQ(o.parent, jobs[0].id);
  deps_complete(&t, &jobs[0]);

  /* A claim that expires past its attempts (recovery) kills it too. */
  f.ignore_child_death = 0;
  ASSERT_OK(deps_add(&t, &f, &o));
  ASSERT_EQ(2, qt_claim(&t, 8, 1, jobs));
  qt_sleep(&t, 20);
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(2, t.recover_info.dead);
  ASSERT_EQ(FLEET_JOB_DEAD, deps_state(&t, o.parent));

  /* So does a cancelled child. */
  ASSERT_OK(deps_add(&t, &f, &o));
  ASSERT_OK(qt_cancel(&t, o.kids[1]));
  ASSERT_OK(qt_get(&t, o.parent, &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_NOT_NULL(strstr(err, o.kids[1]));
  ASSERT_EQ(1, deps_claim_all(&t, jobs));
  deps_complete(&t, &jobs[0]);

  /* A cancelled waiting parent takes its flow's state with it; its
   * children run as plain jobs. */
  ASSERT_OK(deps_add(&t, &f, &o));
  ASSERT_OK(qt_cancel(&t, o.parent));
  ASSERT_ERR(FLEET_ENOTFOUND, deps_children(&t, o.parent, &c));
  ASSERT_EQ(2, deps_claim_all(&t, jobs));
  deps_complete(&t, &jobs[0]);
  deps_complete(&t, &jobs[1]);
  ASSERT_EQ(0, deps_claim_all(&t, jobs));
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_deps_refused) {
  fleet_flow_child_t kids[FLEET_FLOW_CHILDREN_MAX + 1];
  fleet_flow_spec_t f;
  fleet_job_info_t info;
  deps_out_t o;
  qt_job_t jobs[8];
  char id[FLEET_JOB_ID_MAX + 1];
  qt_t t;
  size_t i;

  qt_open(&t, b->url, "dr", NULL);
  for (i = 0; i < FLEET_FLOW_CHILDREN_MAX + 1; i++) {
    memset(&kids[i], 0, sizeof(kids[i]));
    fleet_job_spec_init(&kids[i].spec, "child", "c", 1);
  }
  fleet_flow_spec_init(&f, "parent", "p", 1);
  f.children = kids;

  /* No children, too many, no spec. */
  f.n_children = 0;
  ASSERT_ERR(FLEET_EINVAL, deps_add(&t, &f, &o));
  f.n_children = FLEET_FLOW_CHILDREN_MAX + 1;
  ASSERT_ERR(FLEET_EINVAL, deps_add(&t, &f, &o));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_add_flow(&t.q, NULL, deps_on_flow, &o));
  f.n_children = 2;
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_add_flow(&t.q, &f, NULL, &o));

  /* A cycle: a child with the parent's id, or an id twice. */
  f.parent.id = "p-1";
  kids[0].spec.id = "p-1";
  ASSERT_ERR(FLEET_EINVAL, deps_add(&t, &f, &o));
  kids[0].spec.id = "k-1";
  kids[1].spec.id = "k-1";
  ASSERT_ERR(FLEET_EINVAL, deps_add(&t, &f, &o));
  /* The same id in two queues is two jobs. */
  kids[1].queue = "dr-other";
  ASSERT_OK(deps_add(&t, &f, &o));
  ASSERT_STR_EQ("p-1", o.parent);
  ASSERT_STR_EQ("k-1", o.kids[0]);
  kids[1].queue = NULL;
  kids[1].spec.id = NULL;

  /* A parent delayed, unique or of a group; a unique child; a bad spec or
   * queue name. */
  f.parent.id = NULL;
  kids[0].spec.id = NULL;
  f.parent.delay_ms = 10;
  ASSERT_ERR(FLEET_EINVAL, deps_add(&t, &f, &o));
  f.parent.delay_ms = 0;
  f.parent.group = "g";
  ASSERT_ERR(FLEET_EINVAL, deps_add(&t, &f, &o));
  f.parent.group = NULL;
  f.parent.unique_key = "u";
  f.parent.unique_ttl_ms = 1000;
  ASSERT_ERR(FLEET_EINVAL, deps_add(&t, &f, &o));
  f.parent.unique_key = NULL;
  kids[1].spec.unique_key = "u";
  kids[1].spec.unique_ttl_ms = 1000;
  ASSERT_ERR(FLEET_EINVAL, deps_add(&t, &f, &o));
  kids[1].spec.unique_key = NULL;
  kids[1].spec.type = NULL;
  ASSERT_ERR(FLEET_EINVAL, deps_add(&t, &f, &o));
  kids[1].spec.type = "child";
  kids[1].queue = "";
  ASSERT_ERR(FLEET_EINVAL, deps_add(&t, &f, &o));
  kids[1].queue = NULL;

  /* A given id that exists: nothing written, in any queue. */
  qt_add(&t, "plain", "x", NULL);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(2, t.counts.pending); /* the flow's k-1, and "plain" */
  f.parent.id = "p-2";
  kids[1].spec.id = "k-1";
  ASSERT_ERR(FLEET_EEXIST, deps_add(&t, &f, &o));
  ASSERT_STR_EQ("k-1", o.existing);
  f.parent.id = "p-1";
  kids[1].spec.id = NULL;
  ASSERT_ERR(FLEET_EEXIST, deps_add(&t, &f, &o));
  ASSERT_STR_EQ("p-1", o.existing);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(2, t.counts.pending);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, "p-2", &info, NULL, 0, NULL, 0));
  ASSERT_ERR(FLEET_ENOTFOUND, deps_children(&t, "p-2", &o));
  ASSERT_ERR(FLEET_ENOTFOUND, deps_children(&t, "nope", &o));
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_children(&t.q, "", deps_on_children, &o));

  /* The jobs written are the first flow's and "plain". */
  ASSERT_EQ(2, deps_claim_all(&t, jobs));
  snprintf(id, sizeof(id), "%s", jobs[0].id);
  ASSERT(strcmp(id, "k-1") == 0 || strcmp(jobs[1].id, "k-1") == 0);
  qt_close(&t);
}

/* What deps_jobs() read: a page of fleet_queue_jobs(). */
typedef struct {
  int done, status;
  size_t n;
  uint64_t total, next;
  char ids[4][FLEET_JOB_ID_MAX + 1];
  char types[4][32];
} deps_page_t;

static void deps_on_jobs(fleet_queue_t *q, int status,
                         const fleet_job_summary_t *jobs, size_t n,
                         uint64_t total, uint64_t next, void *ud) {
  deps_page_t *p = ud;
  size_t i;
  (void)q;
  p->done = 1;
  p->status = status;
  p->n = n;
  p->total = total;
  p->next = next;
  for (i = 0; i < n && i < 4; i++) {
    snprintf(p->ids[i], sizeof(p->ids[i]), "%s", jobs[i].id);
    snprintf(p->types[i], sizeof(p->types[i]), "%s", jobs[i].type);
    ASSERT_UEQ(0, jobs[i].time_ms);
  }
}

/* A page of the waiting parents of `t` from `cursor`, `limit` at most. */
static void deps_jobs(qt_t *t, uint64_t cursor, size_t limit, deps_page_t *p) {
  memset(p, 0, sizeof(*p));
  ASSERT_OK(fleet_queue_jobs(&t->q, FLEET_JOB_WAITING_CHILDREN, cursor, limit,
                             64, deps_on_jobs, p));
  ASSERT(fleet_test_run_until(&t->c.loop, fleet_test_flag_set, &p->done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(p->status);
}

/* The number of waiting parents fleet_queue_counts() gives for `t`. */
static uint64_t deps_waiting(qt_t *t) {
  ASSERT_OK(qt_counts(t));
  return t->counts.waiting_children;
}

/* Waiting parents are counted (fleet_queue_counts(): waiting_children) and
 * listed (fleet_queue_jobs(FLEET_JOB_WAITING_CHILDREN), by id) until they
 * are released, die with a child or are cancelled. */
CONFORMANCE_IMPL(queue_deps_listed) {
  static const char *const pids[] = {"pa", "pb", "pc"};
  fleet_flow_child_t kids[3];
  fleet_flow_spec_t f;
  fleet_claim_t claim;
  deps_page_t p;
  deps_out_t made[3];
  qt_job_t jobs[8];
  qt_t t;
  int i;

  qt_open(&t, b->url, "dl", NULL);
  ASSERT_UEQ(0, deps_waiting(&t));
  for (i = 0; i < 3; i++) {
    memset(&kids[i], 0, sizeof(kids[i]));
    fleet_job_spec_init(&kids[i].spec, "child", "c", 1);
    kids[i].spec.max_attempts = 1;
  }
  /* Added in the order pc, pa, pb: listed by id all the same. */
  for (i = 0; i < 3; i++) {
    fleet_flow_spec_init(&f, "parent", "p", 1);
    f.parent.id = pids[(i + 2) % 3];
    f.children = kids;
    f.n_children = 1;
    ASSERT_OK(deps_add(&t, &f, &made[(i + 2) % 3]));
  }
  ASSERT_UEQ(3, deps_waiting(&t));
  ASSERT_UEQ(3, t.counts.pending); /* their children, not them */
  deps_jobs(&t, 0, 2, &p);
  ASSERT_UEQ(3, p.total);
  ASSERT_UEQ(2, p.n);
  ASSERT_STR_EQ("pa", p.ids[0]);
  ASSERT_STR_EQ("pb", p.ids[1]);
  ASSERT_STR_EQ("parent", p.types[0]);
  ASSERT_UEQ(2, p.next);
  deps_jobs(&t, p.next, 2, &p);
  ASSERT_UEQ(1, p.n);
  ASSERT_STR_EQ("pc", p.ids[0]);
  ASSERT_UEQ(0, p.next);

  /* pa's child dies: pa is dead, no longer waiting. */
  ASSERT_EQ(3, deps_claim_all(&t, jobs));
  for (i = 0; i < 3; i++)
    if (strcmp(jobs[i].id, made[0].kids[0]) == 0)
      break;
  ASSERT_LT(i, 3);
  claim = qt_claim_of(&jobs[i]);
  ASSERT_OK(qt_fail(&t, &claim, "boom"));
  ASSERT_EQ(FLEET_JOB_DEAD, deps_state(&t, "pa"));
  ASSERT_UEQ(2, deps_waiting(&t));

  /* pb is cancelled. */
  ASSERT_OK(qt_cancel(&t, "pb"));
  ASSERT_UEQ(1, deps_waiting(&t));
  deps_jobs(&t, 0, 4, &p);
  ASSERT_UEQ(1, p.total);
  ASSERT_STR_EQ("pc", p.ids[0]);

  /* pc's child completes: pc is pending, listed there, not here. */
  for (i = 0; i < 3; i++)
    if (strcmp(jobs[i].id, made[2].kids[0]) == 0)
      deps_complete(&t, &jobs[i]);
  ASSERT_UEQ(0, deps_waiting(&t));
  ASSERT_UEQ(1, t.counts.pending);
  deps_jobs(&t, 0, 4, &p);
  ASSERT_UEQ(0, p.total);
  ASSERT_UEQ(0, p.n);
  ASSERT_EQ(1, deps_claim_all(&t, jobs));
  ASSERT_STR_EQ("pc", jobs[0].id);
  deps_complete(&t, &jobs[0]);
  ASSERT_UEQ(0, deps_waiting(&t));
  /* A state past the last is refused. */
  ASSERT_ERR(FLEET_EINVAL,
             fleet_queue_jobs(
                 &t.q, (fleet_job_state_t)(FLEET_JOB_WAITING_CHILDREN + 1), 0,
                 4, 64, deps_on_jobs, &p));
  qt_close(&t);
}

/* On a Redis Cluster, a child's queue in another slot is refused before
 * anything is sent; one that shares the slot works (the first test). */
CONFORMANCE_IMPL(queue_deps_slots) {
  fleet_flow_child_t kid;
  fleet_flow_spec_t f;
  deps_out_t o;
  char other[64];
  const char *far = NULL;
  char name[64];
  qt_t t;
  int i;

  qt_open(&t, b->url, "ds", NULL);
  deps_same_slot("ds", other, sizeof(other));
  for (i = 0; far == NULL && i < 100; i++) {
    char tag[80];
    snprintf(name, sizeof(name), "ds-far%d", i);
    snprintf(tag, sizeof(tag), "{qt:%s}", name);
    if (fleet__key_slot(tag, strlen(tag)) !=
        fleet__key_slot("{qt:ds}", strlen("{qt:ds}")))
      far = name;
  }
  ASSERT_NOT_NULL(far);
  memset(&kid, 0, sizeof(kid));
  fleet_job_spec_init(&kid.spec, "child", "c", 1);
  fleet_flow_spec_init(&f, "parent", "p", 1);
  f.children = &kid;
  f.n_children = 1;
  kid.queue = far;
  if (b->cluster != NULL) {
    ASSERT_ERR(FLEET_ECROSSSLOT,
               fleet_queue_add_flow(&t.q, &f, deps_on_flow, &o));
  } else {
    ASSERT_OK(deps_add(&t, &f, &o));
  }
  kid.queue = other;
  ASSERT_OK(deps_add(&t, &f, &o));
  qt_close(&t);
}

/* A worker runs the children, then the parent, whose handler reads them
 * with fleet_job_children(). */
typedef struct {
  qt_t t;
  fleet_worker_t w;
  int closed, kids_done, parent_done, kids_at_parent;
  deps_out_t seen;
} deps_worker_t;

static void deps_on_job_children(fleet_queue_t *q, int status,
                                 const fleet_flow_child_info_t *kids, size_t n,
                                 size_t waiting, int fail, void *ud) {
  fleet_job_t *job = ud;
  deps_worker_t *dw = fleet_job_worker(job)->data;

  deps_on_children(q, status, kids, n, waiting, fail, &dw->seen);
  ASSERT_OK(fleet_job_complete(job));
}

static void deps_handler(fleet_worker_t *w, fleet_job_t *job) {
  deps_worker_t *dw = w->data;

  if (strcmp(job->type, "parent") == 0) {
    dw->kids_at_parent = dw->kids_done;
    ASSERT_OK(fleet_job_children(job, deps_on_job_children, job));
    return;
  }
  ASSERT_ERR(FLEET_EINVAL, fleet_job_children(NULL, deps_on_job_children, job));
  ASSERT_OK(fleet_job_complete(job));
}

static void deps_job_done(fleet_worker_t *w, fleet_job_t *job,
                          fleet_job_action_t action, int status) {
  deps_worker_t *dw = w->data;

  ASSERT_EQ(FLEET_JOB_COMPLETE, action);
  ASSERT_OK(status);
  if (strcmp(job->type, "parent") == 0)
    dw->parent_done++;
  else
    dw->kids_done++;
}

static void deps_worker_closed(fleet_handle_t *h) {
  deps_worker_t *dw = h->data;
  dw->closed = 1;
}

CONFORMANCE_IMPL(queue_deps_worker) {
  fleet_worker_options_t wo;
  fleet_flow_child_t kids[3];
  fleet_flow_spec_t f;
  deps_worker_t dw;
  deps_out_t o;
  int i;

  memset(&dw, 0, sizeof(dw));
  qt_open(&dw.t, b->url, "dw", NULL);
  fleet_worker_options_init(&wo);
  wo.concurrency = 4;
  wo.done_cb = deps_job_done;
  wo.poll_ms = 60000; /* woken, not polling */
  dw.w.data = &dw;
  ASSERT_OK(fleet_worker_init(&dw.t.c.client, &dw.w, "dw", &wo));
  ASSERT_OK(fleet_worker_start(&dw.w, deps_handler));
  fleet_flow_spec_init(&f, "parent", "p", 1);
  for (i = 0; i < 3; i++) {
    memset(&kids[i], 0, sizeof(kids[i]));
    fleet_job_spec_init(&kids[i].spec, "child", "c", 1);
  }
  f.children = kids;
  f.n_children = 3;
  ASSERT_OK(deps_add(&dw.t, &f, &o));
  ASSERT(fleet_test_wait_count(&dw.t.c.loop, &dw.parent_done, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(3, dw.kids_done);
  ASSERT_EQ(3, dw.kids_at_parent);
  ASSERT_OK(dw.seen.status);
  ASSERT_UEQ(3, dw.seen.n);
  ASSERT_UEQ(0, dw.seen.waiting);
  for (i = 0; i < 3; i++) {
    ASSERT_STR_EQ(o.kids[i], dw.seen.kids[i]);
    ASSERT_EQ(FLEET_JOB_COMPLETED, dw.seen.state[i]);
    ASSERT_STR_EQ("dw", dw.seen.queue[i]);
  }
  ASSERT_OK(fleet_worker_close(&dw.w, deps_worker_closed));
  ASSERT(fleet_test_wait_count(&dw.t.c.loop, &dw.closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  qt_close(&dw.t);
}
