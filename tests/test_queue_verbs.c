/* test_queue_verbs.c -- one job's verbs and removing a queue
 * (src/queue/queue_verbs.c): fleet_queue_delete_job(), fleet_queue_run_job(),
 * fleet_queue_kill_job() and fleet_queue_remove(), on both backends: what
 * each does in each state, the counts before and after, and, where the
 * test has a Redis of its own, that no key of the queue still names a
 * deleted job. */
#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "test.h"
#include "test_queue_util.h"

typedef struct {
  qt_t *t;
  int status;
  fleet_job_state_t was;
  uint64_t keys, jobs;
  int flow_done, flow_status;
  char parent[FLEET_JOB_ID_MAX + 1];
  char kids[2][FLEET_JOB_ID_MAX + 1];
} vb_t;

static void vb_on_verb(fleet_queue_t *q, int status, fleet_job_state_t was,
                       void *ud) {
  vb_t *v = ud;

  (void)q;
  v->status = status;
  v->was = was;
  v->t->done = 1;
}

static void vb_on_remove(fleet_queue_t *q, int status, uint64_t keys,
                         uint64_t jobs, void *ud) {
  vb_t *v = ud;

  (void)q;
  v->status = status;
  v->keys = keys;
  v->jobs = jobs;
  v->t->done = 1;
}

typedef int (*vb_fn)(fleet_queue_t *, const char *, fleet_queue_job_verb_cb,
                     void *);

/* Runs verb `fn` on job `id`; returns the callback's status. */
static int vb_do(vb_t *v, vb_fn fn, const char *id) {
  int rc;

  v->t->done = 0;
  v->was = (fleet_job_state_t)-1;
  if ((rc = fn(&v->t->q, id, vb_on_verb, v)) != 0)
    return rc;
  qt_wait(v->t);
  return v->status;
}

static int vb_remove(vb_t *v, int force) {
  int rc;

  v->t->done = 0;
  if ((rc = fleet_queue_remove(&v->t->q, force, vb_on_remove, v)) != 0)
    return rc;
  qt_wait(v->t);
  return v->status;
}

static void vb_on_flow(fleet_queue_t *q, int status,
                       const fleet_flow_result_t *r, void *ud) {
  vb_t *v = ud;

  (void)q;
  v->flow_status = status;
  if (status == 0) {
    snprintf(v->parent, sizeof(v->parent), "%s", r->parent_id);
    snprintf(v->kids[0], sizeof(v->kids[0]), "%s", r->child_ids[0]);
    if (r->n_children > 1)
      snprintf(v->kids[1], sizeof(v->kids[1]), "%s", r->child_ids[1]);
  }
  v->flow_done = 1;
}

/* Adds a flow of a parent and two children on the queue. */
static void vb_flow(vb_t *v) {
  fleet_flow_child_t kids[2];
  fleet_flow_spec_t f;

  fleet_flow_spec_init(&f, "parent", "p", 1);
  memset(kids, 0, sizeof(kids));
  fleet_job_spec_init(&kids[0].spec, "kid", "k0", 2);
  fleet_job_spec_init(&kids[1].spec, "kid", "k1", 2);
  f.children = kids;
  f.n_children = 2;
  v->flow_done = 0;
  ASSERT_OK(fleet_queue_add_flow(&v->t->q, &f, vb_on_flow, v));
  ASSERT(fleet_test_run_until(&v->t->c.loop, fleet_test_flag_set, &v->flow_done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(v->flow_status);
}

static fleet_job_state_t vb_state(qt_t *t, const char *id) {
  fleet_job_info_t info;

  ASSERT_OK(qt_get(t, id, &info, NULL, 0, NULL, 0));
  return info.state;
}

/* With a Redis of the test's own: asserts that no key of queue `name`
 * (prefix "qt") holds job `id`, as a field, an element or a member, and
 * that no key is named after it. */
static void vb_no_trace(fleet_test_backend_t *b, const char *name,
                        const char *id) {
  redisReply *keys, *r;
  char pat[128];
  size_t i;

  if (b->redis == NULL)
    return;
  snprintf(pat, sizeof(pat), "{qt:%s}*", name);
  keys = fleet_test_redis_cmd(b->redis, "KEYS %s", pat);
  ASSERT_NOT_NULL(keys);
  ASSERT_EQ(REDIS_REPLY_ARRAY, keys->type);
  for (i = 0; i < keys->elements; i++) {
    const char *k = keys->element[i]->str;
    const char *ty;

    /* (The history's hashes are named after minutes and days, whose
     * digits may hold a job id's.) */
    if (strstr(k, "}:hist:") != NULL)
      continue;
    ASSERT_NULL(strstr(k + strlen(pat) - 1, id));
    r = fleet_test_redis_cmd(b->redis, "TYPE %s", k);
    ty = r->str;
    if (strcmp(ty, "hash") == 0) {
      redisReply *h = fleet_test_redis_cmd(b->redis, "HEXISTS %s %s", k, id);
      if (h->integer != 0)
        fprintf(stderr, "job %s left in %s\n", id, k);
      ASSERT_EQ(0, h->integer);
      freeReplyObject(h);
    } else if (strcmp(ty, "list") == 0) {
      redisReply *h = fleet_test_redis_cmd(b->redis, "LPOS %s %s", k, id);
      if (h->type != REDIS_REPLY_NIL)
        fprintf(stderr, "job %s left in %s\n", id, k);
      ASSERT_EQ(REDIS_REPLY_NIL, h->type);
      freeReplyObject(h);
    } else if (strcmp(ty, "zset") == 0) {
      redisReply *h = fleet_test_redis_cmd(b->redis, "ZSCORE %s %s", k, id);
      if (h->type != REDIS_REPLY_NIL)
        fprintf(stderr, "job %s left in %s\n", id, k);
      ASSERT_EQ(REDIS_REPLY_NIL, h->type);
      freeReplyObject(h);
    }
    freeReplyObject(r);
  }
  freeReplyObject(keys);
}

/* Fails a fresh claim of the next pending job until it is dead. */
static void vb_make_dead(qt_t *t, char *id) {
  fleet_job_spec_t s;
  fleet_claim_t c;
  qt_job_t job;
  int st;
  char ids[1][FLEET_JOB_ID_MAX + 1];

  fleet_job_spec_init(&s, "d", "dead", 4);
  s.max_attempts = 1;
  ASSERT_OK(qt_enqueue(t, &s, 1, &st, ids));
  ASSERT_EQ(1, qt_claim(t, 1, 60000, &job));
  ASSERT_STR_EQ(ids[0], job.id);
  c = qt_claim_of(&job);
  ASSERT_OK(qt_fail(t, &c, "broke"));
  ASSERT_EQ(1, t->dead);
  strcpy(id, job.id);
}

CONFORMANCE_IMPL(queue_verbs_delete) {
  char p[FLEET_JOB_ID_MAX + 1], d[FLEET_JOB_ID_MAX + 1];
  char dead[FLEET_JOB_ID_MAX + 1], done[FLEET_JOB_ID_MAX + 1];
  char ids[2][FLEET_JOB_ID_MAX + 1];
  fleet_queue_options_t o;
  fleet_job_spec_t s[2];
  fleet_bytes_t res = {"result", 6};
  fleet_claim_t c;
  qt_job_t job;
  int st[2];
  vb_t v;
  qt_t t;

  memset(&v, 0, sizeof(v));
  v.t = &t;
  fleet_queue_options_init(&o);
  o.keep_completed = 100;
  qt_open(&t, b->url, "verbs-delete", &o);

  /* Refused before anything is sent. */
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_delete_job(&t.q, NULL, vb_on_verb, &v));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_delete_job(&t.q, "", vb_on_verb, &v));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_delete_job(&t.q, "1", NULL, &v));
  ASSERT_ERR(FLEET_ENOTFOUND, vb_do(&v, fleet_queue_delete_job, "nope"));

  /* Completed (kept, with a result), then dead. */
  qt_add(&t, "x", "c", done);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  c = qt_claim_of(&job);
  ASSERT_OK(qt_complete_results(&t, &c, &res, 1, NULL));
  vb_make_dead(&t, dead);

  /* Pending with a unique key held until done and a progress, and
   * delayed. */
  fleet_job_spec_init(&s[0], "x", "p", 1);
  s[0].unique_key = "u1";
  s[0].unique_until_done = 1;
  fleet_job_spec_init(&s[1], "x", "d", 1);
  s[1].delay_ms = 3600000;
  ASSERT_OK(qt_enqueue(&t, s, 2, st, ids));
  ASSERT_OK(st[0]);
  strcpy(p, ids[0]);
  strcpy(d, ids[1]);

  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.pending);
  ASSERT_UEQ(1, t.counts.delayed);
  ASSERT_UEQ(1, t.counts.completed);
  ASSERT_UEQ(1, t.counts.completed_kept);
  ASSERT_UEQ(1, t.counts.dead);
  ASSERT_UEQ(1, t.counts.dead_kept);

  ASSERT_OK(vb_do(&v, fleet_queue_delete_job, p));
  ASSERT_EQ(FLEET_JOB_PENDING, v.was);
  ASSERT_OK(vb_do(&v, fleet_queue_delete_job, d));
  ASSERT_EQ(FLEET_JOB_DELAYED, v.was);
  ASSERT_OK(vb_do(&v, fleet_queue_delete_job, dead));
  ASSERT_EQ(FLEET_JOB_DEAD, v.was);
  ASSERT_OK(vb_do(&v, fleet_queue_delete_job, done));
  ASSERT_EQ(FLEET_JOB_COMPLETED, v.was);
  /* Gone, every one, and again: no such job. */
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, p, NULL, NULL, 0, NULL, 0));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, d, NULL, NULL, 0, NULL, 0));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, dead, NULL, NULL, 0, NULL, 0));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, done, NULL, NULL, 0, NULL, 0));
  ASSERT_ERR(FLEET_ENOTFOUND, vb_do(&v, fleet_queue_delete_job, done));
  /* The counts: nothing queued or kept; the lifetime counters stay. */
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.pending);
  ASSERT_UEQ(0, t.counts.delayed);
  ASSERT_UEQ(1, t.counts.completed);
  ASSERT_UEQ(0, t.counts.completed_kept);
  ASSERT_UEQ(1, t.counts.dead);
  ASSERT_UEQ(0, t.counts.dead_kept);
  vb_no_trace(b, "verbs-delete", p);
  vb_no_trace(b, "verbs-delete", d);
  vb_no_trace(b, "verbs-delete", dead);
  vb_no_trace(b, "verbs-delete", done);
  /* The unique key went with its job. */
  ASSERT_OK(qt_enqueue(&t, s, 1, st, ids));
  ASSERT_OK(st[0]);

  /* Running: refused, nothing changes. */
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  ASSERT_ERR(FLEET_EBUSY, vb_do(&v, fleet_queue_delete_job, job.id));
  ASSERT_EQ(FLEET_JOB_RUNNING, vb_state(&t, job.id));
  c = qt_claim_of(&job);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));

  /* A flow's waiting parent: the waiting count goes; a child: it counts
   * as dead for its parent, which dies (a child's death fails it). */
  vb_flow(&v);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.waiting_children);
  ASSERT_OK(vb_do(&v, fleet_queue_delete_job, v.kids[0]));
  ASSERT_EQ(FLEET_JOB_PENDING, v.was);
  ASSERT_EQ(FLEET_JOB_DEAD, vb_state(&t, v.parent));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.waiting_children);
  vb_flow(&v);
  ASSERT_OK(vb_do(&v, fleet_queue_delete_job, v.parent));
  ASSERT_EQ(FLEET_JOB_WAITING_CHILDREN, v.was);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.waiting_children);
  vb_no_trace(b, "verbs-delete", v.parent);
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_verbs_run) {
  char p[FLEET_JOB_ID_MAX + 1], dead[FLEET_JOB_ID_MAX + 1];
  char ids[3][FLEET_JOB_ID_MAX + 1];
  char err[64];
  fleet_job_info_t info;
  fleet_job_spec_t s[3];
  fleet_claim_t c;
  qt_job_t job;
  int st[3];
  vb_t v;
  qt_t t;

  memset(&v, 0, sizeof(v));
  v.t = &t;
  qt_open(&t, b->url, "verbs-run", NULL);
  ASSERT_ERR(FLEET_ENOTFOUND, vb_do(&v, fleet_queue_run_job, "nope"));
  vb_make_dead(&t, dead);
  qt_add(&t, "x", "p", p);
  /* Delayed an hour: of priority 0, of priority 5, of a group. */
  fleet_job_spec_init(&s[0], "x", "d0", 2);
  fleet_job_spec_init(&s[1], "x", "d5", 2);
  s[1].priority = 5;
  fleet_job_spec_init(&s[2], "x", "dg", 2);
  s[2].group = "g1";
  s[0].delay_ms = s[1].delay_ms = s[2].delay_ms = 3600000;
  ASSERT_OK(qt_enqueue(&t, s, 3, st, ids));

  /* Pending: nothing to do. */
  ASSERT_OK(vb_do(&v, fleet_queue_run_job, p));
  ASSERT_EQ(FLEET_JOB_PENDING, v.was);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.pending);
  ASSERT_UEQ(3, t.counts.delayed);

  /* Delayed jobs run now, in their order and group. */
  ASSERT_OK(vb_do(&v, fleet_queue_run_job, ids[0]));
  ASSERT_EQ(FLEET_JOB_DELAYED, v.was);
  ASSERT_OK(vb_do(&v, fleet_queue_run_job, ids[1]));
  ASSERT_OK(vb_do(&v, fleet_queue_run_job, ids[2]));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(4, t.counts.pending);
  ASSERT_UEQ(0, t.counts.delayed);
  ASSERT_EQ(FLEET_JOB_PENDING, vb_state(&t, ids[2]));
  ASSERT_STR_EQ("g1", t.get_group);

  /* Dead: as a retry of one job, its attempts reset, its error kept. */
  ASSERT_OK(vb_do(&v, fleet_queue_run_job, dead));
  ASSERT_EQ(FLEET_JOB_DEAD, v.was);
  ASSERT_OK(qt_get(&t, dead, &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  ASSERT_EQ(0, info.attempts);
  ASSERT_STR_EQ("broke", err);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(5, t.counts.pending);
  ASSERT_UEQ(0, t.counts.dead_kept);
  ASSERT_UEQ(1, t.counts.dead);

  /* All five are claimed: the priority 5 first. */
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  ASSERT_STR_EQ(ids[1], job.id);
  ASSERT_ERR(FLEET_EBUSY, vb_do(&v, fleet_queue_run_job, job.id));
  c = qt_claim_of(&job);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  ASSERT_ERR(FLEET_ENOTFOUND, vb_do(&v, fleet_queue_run_job, job.id));
  {
    qt_job_t jobs[4];
    int n = qt_claim(&t, 4, 60000, jobs), i, seen = 0;

    ASSERT_EQ(4, n);
    for (i = 0; i < n; i++) {
      if (strcmp(jobs[i].id, ids[2]) == 0) {
        ASSERT_STR_EQ("g1", jobs[i].group);
        seen++;
      }
      if (strcmp(jobs[i].id, dead) == 0) {
        ASSERT_EQ(1, jobs[i].attempts);
        seen++;
      }
    }
    ASSERT_EQ(2, seen);
  }
  qt_close(&t);
}

CONFORMANCE_IMPL(queue_verbs_kill) {
  char p[FLEET_JOB_ID_MAX + 1];
  char ids[2][FLEET_JOB_ID_MAX + 1];
  char err[64];
  fleet_job_info_t info;
  fleet_job_spec_t s[2];
  qt_job_t job;
  int st[2];
  vb_t v;
  qt_t t;

  memset(&v, 0, sizeof(v));
  v.t = &t;
  qt_open(&t, b->url, "verbs-kill", NULL);
  ASSERT_ERR(FLEET_ENOTFOUND, vb_do(&v, fleet_queue_kill_job, "nope"));
  qt_add(&t, "x", "p", p);
  /* A delayed job of a group with a unique key held until done. */
  fleet_job_spec_init(&s[0], "x", "d", 1);
  s[0].delay_ms = 3600000;
  s[0].group = "g2";
  s[0].unique_key = "k";
  s[0].unique_until_done = 1;
  ASSERT_OK(qt_enqueue(&t, s, 1, st, ids));
  ASSERT_OK(st[0]);

  ASSERT_OK(vb_do(&v, fleet_queue_kill_job, p));
  ASSERT_EQ(FLEET_JOB_PENDING, v.was);
  ASSERT_OK(vb_do(&v, fleet_queue_kill_job, ids[0]));
  ASSERT_EQ(FLEET_JOB_DELAYED, v.was);
  ASSERT_OK(qt_get(&t, p, &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_STR_EQ("killed", err);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.pending);
  ASSERT_UEQ(0, t.counts.delayed);
  ASSERT_UEQ(2, t.counts.dead);
  ASSERT_UEQ(2, t.counts.dead_kept);
  ASSERT_ERR(FLEET_EALREADY, vb_do(&v, fleet_queue_kill_job, p));
  /* Its unique key went: another job takes it. */
  fleet_job_spec_init(&s[1], "x", "again", 5);
  s[1].unique_key = "k";
  s[1].unique_until_done = 1;
  ASSERT_OK(qt_enqueue(&t, &s[1], 1, st, &ids[1]));
  ASSERT_OK(st[0]);
  ASSERT_OK(vb_do(&v, fleet_queue_delete_job, ids[1]));

  /* Run again, the killed job of the group comes back in its group. */
  ASSERT_OK(vb_do(&v, fleet_queue_run_job, ids[0]));
  ASSERT_EQ(FLEET_JOB_DEAD, v.was);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  ASSERT_STR_EQ(ids[0], job.id);
  ASSERT_STR_EQ("g2", job.group);
  ASSERT_ERR(FLEET_EBUSY, vb_do(&v, fleet_queue_kill_job, job.id));
  ASSERT_EQ(FLEET_JOB_RUNNING, vb_state(&t, job.id));

  /* A completed job of which only its result is kept (no completed-job
   * history): delete forgets the result. */
  {
    fleet_bytes_t res = {"r", 1};
    fleet_claim_t c;

    qt_add(&t, "x", "done", p);
    ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
    ASSERT_STR_EQ(p, job.id);
    c = qt_claim_of(&job);
    ASSERT_OK(qt_complete_results(&t, &c, &res, 1, NULL));
    ASSERT_EQ(FLEET_JOB_COMPLETED, vb_state(&t, p));
    ASSERT_ERR(FLEET_EALREADY, vb_do(&v, fleet_queue_kill_job, p));
    ASSERT_OK(vb_do(&v, fleet_queue_delete_job, p));
    ASSERT_EQ(FLEET_JOB_COMPLETED, v.was);
    ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, p, NULL, NULL, 0, NULL, 0));
    vb_no_trace(b, "verbs-kill", p);
  }

  /* A flow's child killed: its parent dies. */
  vb_flow(&v);
  ASSERT_OK(vb_do(&v, fleet_queue_kill_job, v.kids[1]));
  ASSERT_EQ(FLEET_JOB_DEAD, vb_state(&t, v.parent));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.waiting_children);
  qt_close(&t);
}

static void vb_on_names(fleet_client_t *client, int status,
                        const char *const *names, size_t n, void *ud) {
  vb_t *v = ud;
  size_t i;

  (void)client;
  v->status = status;
  v->keys = 0;
  for (i = 0; i < n; i++)
    if (strcmp(names[i], "verbs-remove") == 0)
      v->keys = 1;
  v->t->done = 1;
}

/* Whether fleet_client_scan_names() finds the queue. */
static int vb_listed(vb_t *v) {
  v->t->done = 0;
  ASSERT_OK(fleet_client_scan_names(&v->t->c.client, FLEET_OBJECT_QUEUE, "*",
                                    100, vb_on_names, v));
  qt_wait(v->t);
  ASSERT_OK(v->status);
  return (int)v->keys;
}

CONFORMANCE_IMPL(queue_verbs_remove) {
  char dead[FLEET_JOB_ID_MAX + 1], p[FLEET_JOB_ID_MAX + 1];
  fleet_job_spec_t s;
  fleet_claim_t c;
  qt_job_t job, job2;
  int r, st;
  char id[1][FLEET_JOB_ID_MAX + 1];
  fleet_queue_t q2; /* closed by qt_close()'s run of the loop */
  vb_t v;
  qt_t t;

  memset(&v, 0, sizeof(v));
  v.t = &t;
  qt_open(&t, b->url, "verbs-remove", NULL);
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_remove(&t.q, 2, vb_on_remove, &v));
  ASSERT_ERR(FLEET_EINVAL, fleet_queue_remove(&t.q, 1, NULL, &v));
  ASSERT_ERR(FLEET_ENOTFOUND, vb_remove(&v, 0));

  /* Jobs left: refused without force, nothing written. */
  vb_make_dead(&t, dead);
  qt_add(&t, "x", "p", p);
  fleet_job_spec_init(&s, "x", "d", 1);
  s.delay_ms = 3600000;
  s.group = "g";
  s.unique_key = "uk";
  s.unique_ttl_ms = 3600000; /* a dedupe window: its key has a TTL */
  ASSERT_OK(qt_enqueue(&t, &s, 1, &st, id));
  qt_add(&t, "x", "r", id[0]);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job2));
  ASSERT_ERR(FLEET_EBUSY, vb_remove(&v, 0));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.pending);
  ASSERT_UEQ(1, t.counts.delayed);
  ASSERT_UEQ(2, t.counts.running);
  ASSERT_UEQ(1, t.counts.dead_kept);
  ASSERT(vb_listed(&v));

  /* Forced: gone, and the claims held find it so. */
  ASSERT_OK(vb_remove(&v, 1));
  ASSERT_UEQ(3, v.jobs);
  ASSERT(v.keys > 5);
  ASSERT(!vb_listed(&v));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, dead, NULL, NULL, 0, NULL, 0));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, job.id, NULL, NULL, 0, NULL, 0));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.running);
  ASSERT_UEQ(0, t.counts.dead);
  ASSERT_UEQ(0, t.counts.delayed);
  c = qt_claim_of(&job);
  ASSERT_OK(qt_refresh(&t, &c, 1, 60000, &r));
  ASSERT_EQ(FLEET_ESTALE, r);
  ASSERT_OK(qt_complete(&t, &c, 1, &r));
  ASSERT_EQ(FLEET_ENOTFOUND, r);
  if (b->redis != NULL) {
    redisReply *k = fleet_test_redis_cmd(b->redis, "KEYS {qt:verbs-remove}*");

    /* The fencing counter alone stays. */
    if (k->elements != 1)
      fprintf(stderr, "left: %s\n", k->element[0]->str);
    ASSERT_EQ(1, (int)k->elements);
    ASSERT_STR_EQ("{qt:verbs-remove}:fence", k->element[0]->str);
    freeReplyObject(k);
  }
  ASSERT_ERR(FLEET_ENOTFOUND, vb_remove(&v, 1));

  /* Made again by an enqueue: the unique key is free, and a claim's token
   * is above every token given before. */
  ASSERT_OK(qt_enqueue(&t, &s, 1, &st, id));
  ASSERT_OK(st);
  qt_add(&t, "x", "again", p);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  ASSERT(job.token > job2.token);
  c = qt_claim_of(&job);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  /* Only finished and delayed jobs... the delayed one blocks; deleted, an
   * unforced remove goes through. */
  ASSERT_ERR(FLEET_EBUSY, vb_remove(&v, 0));
  ASSERT_OK(vb_do(&v, fleet_queue_delete_job, id[0]));
  ASSERT_OK(vb_remove(&v, 0));
  ASSERT_UEQ(0, v.jobs);
  ASSERT(!vb_listed(&v));

  /* Children of a parent in another queue (one slot but on a cluster):
   * forced out with their queue, they count as dead for it, and it
   * dies. */
  if (b->cluster == NULL) {
    fleet_flow_child_t kids[1];
    fleet_flow_spec_t f;

    ASSERT_OK(fleet_queue_init(&t.c.client, &q2, "verbs-remove-kids", NULL));
    fleet_flow_spec_init(&f, "parent", "p", 1);
    memset(kids, 0, sizeof(kids));
    kids[0].queue = "verbs-remove-kids";
    fleet_job_spec_init(&kids[0].spec, "kid", "k", 1);
    f.children = kids;
    f.n_children = 1;
    v.flow_done = 0;
    ASSERT_OK(fleet_queue_add_flow(&t.q, &f, vb_on_flow, &v));
    ASSERT(fleet_test_run_until(&t.c.loop, fleet_test_flag_set, &v.flow_done,
                                fleet_test_ms(FLEET_TEST_WAIT_MS)));
    ASSERT_OK(v.flow_status);
    ASSERT_EQ(FLEET_JOB_WAITING_CHILDREN, vb_state(&t, v.parent));
    t.done = 0;
    ASSERT_OK(fleet_queue_remove(&q2, 1, vb_on_remove, &v));
    qt_wait(&t);
    ASSERT_OK(v.status);
    ASSERT_UEQ(1, v.jobs);
    ASSERT_EQ(FLEET_JOB_DEAD, vb_state(&t, v.parent));
    ASSERT_OK(qt_counts(&t));
    ASSERT_UEQ(0, t.counts.waiting_children);
    ASSERT_OK(fleet_queue_close(&q2, NULL));
  }
  qt_close(&t);
}

/* A fix met on the way: purging dead jobs drops their own result
 * retentions (T:rttl) as trimming them does, and the flag `rttl` of
 * T:limits with the last one (it makes every completion read T:rttl). */
CONFORMANCE_IMPL(queue_verbs_purge_rttl) {
  char dead[FLEET_JOB_ID_MAX + 1];
  char ids[1][FLEET_JOB_ID_MAX + 1];
  fleet_job_spec_t s;
  fleet_claim_t c;
  qt_job_t job;
  int st;
  qt_t t;

  qt_open(&t, b->url, "verbs-rttl", NULL);
  fleet_job_spec_init(&s, "x", "r", 1);
  s.result_ttl_ms = 60000;
  s.max_attempts = 1;
  ASSERT_OK(qt_enqueue(&t, &s, 1, &st, ids));
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  c = qt_claim_of(&job);
  ASSERT_OK(qt_fail(&t, &c, "broke"));
  ASSERT_EQ(1, t.dead);
  strcpy(dead, job.id);
  if (b->redis != NULL) {
    redisReply *r =
        fleet_test_redis_cmd(b->redis, "HEXISTS {qt:verbs-rttl}:rttl %s", dead);

    ASSERT_EQ(1, r->integer);
    freeReplyObject(r);
  }
  ASSERT_OK(qt_purge(&t, FLEET_JOB_DEAD));
  ASSERT_UEQ(1, t.removed);
  vb_no_trace(b, "verbs-rttl", dead);
  if (b->redis != NULL) {
    redisReply *r =
        fleet_test_redis_cmd(b->redis, "HEXISTS {qt:verbs-rttl}:limits rttl");

    ASSERT_EQ(0, r->integer);
    freeReplyObject(r);
  }
  qt_close(&t);
}
