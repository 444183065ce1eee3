/* test_queue_poison.c -- jobs fleet cannot read, on both adapters
 * (docs/queue.md, "Jobs fleet cannot read"): a pending or due job without
 * a record, with a record of the wrong type, with garbage fields, with a
 * record that is not fleet's encoding, or with garbage options, and an
 * expired claim whose record went bad, are each moved to dead with a
 * reason by the claim or recovery that meets them, reported through the
 * error callback, and never block the good job behind them; a refused
 * claim changes nothing; a parked worker's entry fleet cannot read does
 * not fail an enqueue; a flow's child or parent moved aside ends its
 * flow as a dead child or parent would. The foreign data is written with raw
 * commands (on the memory backend through its command table). */
#include "core/client.h"
#include "memory/script.h"
#include "test_queue_util.h"

/* ------------------------------------------------------------------------ */
/* Raw commands on either backend                                           */

#define PZ_STRS 32

/* A raw command's reply: its type (FLEET__REPLY_*), its integer, and its
 * strings (a string reply's, or an array's elements), NUL-terminated and
 * cut to 255 bytes. */
typedef struct {
  int type;
  long long integer;
  size_t n;
  char s[PZ_STRS][256];
} pz_reply_t;

/* Runs a command of `argc` arguments (`lens` their lengths, NULL for
 * strlen) on the test's server, or on the memory store of `t`'s client. */
static void pz_cmdv(fleet_test_backend_t *b, qt_t *t, pz_reply_t *out, int argc,
                    const char **argv, const size_t *lens) {
  size_t i;

  memset(out, 0, sizeof(*out));
  if (b->redis != NULL) {
    redisReply *r = fleet_test_redis_cmd_argv(b->redis, argc, argv, lens);
    ASSERT_NOT_NULL(r);
    out->type = r->type == REDIS_REPLY_INTEGER ? FLEET__REPLY_INT
                : r->type == REDIS_REPLY_NIL   ? FLEET__REPLY_NIL
                : r->type == REDIS_REPLY_ARRAY ? FLEET__REPLY_ARRAY
                : r->type == REDIS_REPLY_ERROR ? -1
                                               : FLEET__REPLY_STR;
    out->integer = r->integer;
    if (r->type == REDIS_REPLY_ARRAY) {
      for (i = 0; i < r->elements && i < PZ_STRS; i++)
        snprintf(out->s[i], sizeof(out->s[i]), "%.*s", (int)r->element[i]->len,
                 r->element[i]->str);
      out->n = i;
    } else if (r->str != NULL) {
      snprintf(out->s[0], sizeof(out->s[0]), "%.*s", (int)r->len, r->str);
      out->n = 1;
    }
    freeReplyObject(r);
  } else {
    fleet_bytes_t a[8];
    const fleet__reply_t *tree;
    fleet__rb_t rb;
    ASSERT_LE(argc, 8);
    for (i = 0; i < (size_t)argc; i++) {
      a[i].base = argv[i];
      a[i].len = lens != NULL ? lens[i] : strlen(argv[i]);
    }
    fleet__rb_init(&rb);
    if (fleet__memory_command(fleet__client_backend(&t->c.client), a,
                              (size_t)argc, &rb) != 0 ||
        fleet__rb_build(&rb, &tree) != 0) {
      out->type = -1;
    } else {
      out->type = (int)tree->type;
      out->integer = tree->integer;
      if (tree->type == FLEET__REPLY_ARRAY) {
        for (i = 0; i < tree->nelem && i < PZ_STRS; i++)
          snprintf(out->s[i], sizeof(out->s[i]), "%.*s", (int)tree->elem[i].len,
                   tree->elem[i].str);
        out->n = i;
      } else if (tree->type == FLEET__REPLY_STR ||
                 tree->type == FLEET__REPLY_STATUS) {
        snprintf(out->s[0], sizeof(out->s[0]), "%.*s", (int)tree->len,
                 tree->str);
        out->n = 1;
      }
    }
    fleet__rb_trim(&rb, 0);
  }
}

/* The same with the NULL-terminated string arguments that follow. */
static pz_reply_t pz_cmd(fleet_test_backend_t *b, qt_t *t, ...) {
  const char *argv[8];
  pz_reply_t out;
  va_list ap;
  int argc = 0;

  va_start(ap, t);
  while (argc < 8 && (argv[argc] = va_arg(ap, const char *)) != NULL)
    argc++;
  va_end(ap);
  pz_cmdv(b, t, &out, argc, argv, NULL);
  ASSERT_NE(-1, out.type);
  return out;
}

/* Writes `len` bytes at `rec` as the record of job `id` in `hash`. */
static void pz_record(fleet_test_backend_t *b, qt_t *t, const char *hash,
                      const char *id, const char *rec, size_t len) {
  const char *argv[] = {"HSET", hash, id, rec};
  size_t lens[] = {4, strlen(hash), strlen(id), len};
  pz_reply_t r;

  pz_cmdv(b, t, &r, 4, argv, lens);
  ASSERT_EQ(FLEET__REPLY_INT, r.type);
}

/* Whether the list or zset reply `r` holds `s`. */
static int pz_has(const pz_reply_t *r, const char *s) {
  size_t i;
  for (i = 0; i < r->n; i++)
    if (strcmp(r->s[i], s) == 0)
      return 1;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* What the error callback heard                                            */

static int pz_errors;
static int pz_status;
static char pz_detail[512];

static void pz_on_error(fleet_handle_t *h, int status, const char *detail) {
  ASSERT_NOT_NULL(h);
  pz_errors++;
  pz_status = status;
  snprintf(pz_detail, sizeof(pz_detail), "%s", detail);
}

/* What pz_type() read. */
typedef struct {
  int done;
  char *out;
  size_t cap;
} pz_get_t;

static void pz_on_get(fleet_queue_t *q, int status,
                      const fleet_job_info_t *info, void *ud) {
  pz_get_t *g = ud;
  (void)q;
  ASSERT_OK(status);
  snprintf(g->out, g->cap, "%s", info->type);
  g->done = 1;
}

/* Reads the type of job `id` ("" for none) into `out`. */
static void pz_type(qt_t *t, const char *id, char *out, size_t cap) {
  pz_get_t g = {0, out, cap};
  ASSERT_OK(fleet_queue_get(&t->q, id, pz_on_get, &g));
  ASSERT(fleet_test_run_until(&t->c.loop, fleet_test_flag_set, &g.done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

/* What pz_listed() read. */
typedef struct {
  int done;
  const char *id;
  char *out;
  size_t cap;
} pz_jobs_t;

static void pz_on_jobs(fleet_queue_t *q, int status,
                       const fleet_job_summary_t *jobs, size_t n,
                       uint64_t total, uint64_t next, void *ud) {
  pz_jobs_t *j = ud;
  size_t i;
  (void)q, (void)total, (void)next;
  ASSERT_OK(status);
  for (i = 0; i < n; i++)
    if (strcmp(jobs[i].id, j->id) == 0)
      snprintf(j->out, j->cap, "%s", jobs[i].last_error);
  j->done = 1;
}

/* The last error the list of jobs in `state` (the page the CLI's `fleet
 * queue jobs` and the dashboard show) gives for job `id`, "" when it is
 * not listed. */
static void pz_listed(qt_t *t, fleet_job_state_t state, const char *id,
                      char *out, size_t cap) {
  pz_jobs_t j = {0, id, out, cap};
  out[0] = '\0';
  ASSERT_OK(fleet_queue_jobs(&t->q, state, 0, 100, 64, pz_on_jobs, &j));
  ASSERT(fleet_test_run_until(&t->c.loop, fleet_test_flag_set, &j.done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

/* Claims one job at a time (up to three claims) until the good job
 * `good` comes, completes it, and checks what became of the job `id`
 * that sat before it: moved to dead with a reason holding `why`, heard
 * by the error callback and listed with it among the dead jobs, gone
 * from pending and delayed. `type` is the
 * type of its record afterwards ("" for none). */
static void pz_check(fleet_test_backend_t *b, qt_t *t, const char *good,
                     const char *id, const char *why, const char *type) {
  fleet_job_info_t info;
  qt_job_t job;
  fleet_claim_t c;
  pz_reply_t r;
  char err[256], want[300];
  int errors = pz_errors, got = 0, tries;
  uint64_t dead;

  ASSERT_OK(qt_counts(t));
  dead = t->counts.dead;
  for (tries = 0; tries < 3 && !got; tries++) {
    int n = qt_claim(t, 1, 60000, &job);
    ASSERT_GE(n, 0);
    if (n == 1) {
      ASSERT_STR_EQ(good, job.id);
      got = 1;
    }
  }
  ASSERT(got);
  c = qt_claim_of(&job);
  ASSERT_OK(qt_complete(t, &c, 1, NULL));
  /* Heard once, as FLEET_EPROTO naming the job and what is wrong. */
  ASSERT_EQ(errors + 1, pz_errors);
  ASSERT_ERR(FLEET_EPROTO, pz_status);
  snprintf(want, sizeof(want), "job %s moved to dead: ", id);
  ASSERT_EQ(0, strncmp(pz_detail, want, strlen(want)));
  ASSERT_NOT_NULL(strstr(pz_detail, why));
  /* Dead, with the reason as its last error. */
  ASSERT_OK(qt_get(t, id, &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_NOT_NULL(strstr(err, why));
  pz_type(t, id, err, sizeof(err));
  ASSERT_STR_EQ(type, err);
  pz_listed(t, FLEET_JOB_DEAD, id, err, sizeof(err));
  ASSERT_NOT_NULL(strstr(err, why));
  ASSERT_OK(qt_counts(t));
  ASSERT_UEQ(dead + 1, t->counts.dead);
  ASSERT_UEQ(0, t->counts.pending);
  ASSERT_UEQ(0, t->counts.delayed);
  r = pz_cmd(b, t, "LRANGE", "{qt:a}:dead", "0", "-1", NULL);
  ASSERT(pz_has(&r, id));
  r = pz_cmd(b, t, "LRANGE", "{qt:a}:pending", "0", "-1", NULL);
  ASSERT(!pz_has(&r, id));
  r = pz_cmd(b, t, "ZRANGE", "{qt:a}:delayed", "0", "-1", NULL);
  ASSERT(!pz_has(&r, id));
}

CONFORMANCE_IMPL(queue_poison) {
  static const char good_rec[] = "\0\0001\0t\0x";
  static const char json[] = "{\"type\":\"t\",\"payload\":\"x\"}";
  fleet_queue_options_t o;
  fleet_job_info_t info;
  fleet_claim_t c;
  qt_job_t jobs[2];
  pz_reply_t r, seq;
  char good[FLEET_JOB_ID_MAX + 1], payload[64];
  qt_t t;

  fleet_queue_options_init(&o);
  o.error_cb = pz_on_error;
  pz_errors = 0;
  qt_open(&t, b->url, "a", &o);

  /* A pending id without a record: its new record has the malformed
   * type and no payload. */
  pz_cmd(b, &t, "RPUSH", "{qt:a}:pending", "ghost", NULL);
  qt_add(&t, "t", "x", good);
  pz_check(b, &t, good, "ghost", "no record for id", "fleet:malformed");

  /* A record that is not fleet's encoding (JSON): kept as the payload. */
  pz_record(b, &t, "{qt:a}:jobs", "json-1", json, strlen(json));
  pz_cmd(b, &t, "RPUSH", "{qt:a}:pending", "json-1", NULL);
  qt_add(&t, "t", "x", good);
  /* Listed while pending, with what is wrong as its error. */
  pz_listed(&t, FLEET_JOB_PENDING, "json-1", payload, sizeof(payload));
  ASSERT_NOT_NULL(strstr(payload, "malformed record"));
  pz_check(b, &t, good, "json-1", "malformed record: not the 5 fields",
           "fleet:malformed");
  ASSERT_OK(qt_get(&t, "json-1", &info, payload, sizeof(payload), NULL, 0));
  ASSERT_EQ(strlen(json), info.payload.len);
  ASSERT_MEM_EQ(json, payload, strlen(json));

  /* Garbage fields: attempts, max_attempts, an empty type. */
  pz_record(b, &t, "{qt:a}:jobs", "garb-1", "zz\0\0001\0t\0x", 9);
  pz_cmd(b, &t, "RPUSH", "{qt:a}:pending", "garb-1", NULL);
  qt_add(&t, "t", "x", good);
  pz_check(b, &t, good, "garb-1", "field attempts", "fleet:malformed");
  pz_record(b, &t, "{qt:a}:jobs", "garb-2", "\0-1\0001\0t\0x", 9);
  pz_cmd(b, &t, "RPUSH", "{qt:a}:pending", "garb-2", NULL);
  qt_add(&t, "t", "x", good);
  pz_check(b, &t, good, "garb-2", "field max_attempts", "fleet:malformed");
  pz_record(b, &t, "{qt:a}:jobs", "garb-3", "\0\0001\0\0x", 6);
  pz_cmd(b, &t, "RPUSH", "{qt:a}:pending", "garb-3", NULL);
  qt_add(&t, "t", "x", good);
  pz_check(b, &t, good, "garb-3", "field type is empty", "fleet:malformed");

  /* A record in a key of the wrong type (a string where the chunk hash
   * of generated id 999999 would be): it stays; the job has no record. */
  pz_cmd(b, &t, "SET", "{qt:a}:recs:999", "not a hash", NULL);
  pz_cmd(b, &t, "RPUSH", "{qt:a}:pending", "999999", NULL);
  qt_add(&t, "t", "x", good);
  pz_check(b, &t, good, "999999",
           "malformed record: {qt:a}:recs:999 is a string, not a hash", "");
  r = pz_cmd(b, &t, "GET", "{qt:a}:recs:999", NULL);
  ASSERT_STR_EQ("not a hash", r.s[0]);

  /* Due delayed jobs: a malformed record, no record, garbage options
   * (the record, readable, keeps its type). */
  pz_record(b, &t, "{qt:a}:jobs", "due-1", "\0\0001", 4);
  pz_cmd(b, &t, "ZADD", "{qt:a}:delayed", "1", "due-1", NULL);
  qt_add(&t, "t", "x", good);
  pz_check(b, &t, good, "due-1", "malformed record", "fleet:malformed");
  pz_cmd(b, &t, "ZADD", "{qt:a}:delayed", "1", "due-2", NULL);
  qt_add(&t, "t", "x", good);
  pz_check(b, &t, good, "due-2", "no record for id", "fleet:malformed");
  pz_record(b, &t, "{qt:a}:jobs", "due-3", good_rec, sizeof(good_rec) - 1);
  pz_cmd(b, &t, "HSET", "{qt:a}:opts", "due-3", "zz", NULL);
  pz_cmd(b, &t, "ZADD", "{qt:a}:delayed", "1", "due-3", NULL);
  qt_add(&t, "t", "x", good);
  pz_check(b, &t, good, "due-3", "malformed options", "t");
  r = pz_cmd(b, &t, "HEXISTS", "{qt:a}:opts", "due-3", NULL);
  ASSERT_EQ(0, r.integer);

  /* Recovery: two expired claims, one whose record went bad. The good one
   * is requeued, the bad one moved aside, in the same call. */
  qt_add(&t, "t", "x", good);
  qt_add(&t, "t", "x", NULL);
  ASSERT_EQ(2, qt_claim(&t, 2, 1, jobs));
  ASSERT_STR_EQ(good, jobs[0].id);
  pz_record(b, &t, "{qt:a}:recs:0", jobs[1].id, "zz", 2);
  qt_sleep(&t, 20);
  pz_errors = 0;
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.requeued);
  ASSERT_EQ(1, pz_errors);
  ASSERT_ERR(FLEET_EPROTO, pz_status);
  ASSERT_NOT_NULL(strstr(pz_detail, jobs[1].id));
  ASSERT_NOT_NULL(strstr(pz_detail, "malformed record"));
  ASSERT_OK(qt_get(&t, jobs[1].id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_EQ(1, qt_claim(&t, 2, 60000, jobs));
  ASSERT_STR_EQ(good, jobs[0].id);
  c = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));

  /* A refused claim changes nothing: with the pending list of the wrong
   * type, a due job stays delayed and the sequence stays. */
  pz_record(b, &t, "{qt:a}:jobs", "due-4", good_rec, sizeof(good_rec) - 1);
  pz_cmd(b, &t, "ZADD", "{qt:a}:delayed", "1", "due-4", NULL);
  pz_cmd(b, &t, "SET", "{qt:a}:pending", "not a list", NULL);
  seq = pz_cmd(b, &t, "GET", "{qt:a}:seq", NULL);
  pz_errors = 0;
  ASSERT_ERR(FLEET_EWRONGTYPE, qt_claim(&t, 1, 60000, jobs));
  r = pz_cmd(b, &t, "ZSCORE", "{qt:a}:delayed", "due-4", NULL);
  ASSERT_STR_EQ("1", r.s[0]);
  r = pz_cmd(b, &t, "GET", "{qt:a}:seq", NULL);
  ASSERT_STR_EQ(seq.s[0], r.s[0]);
  ASSERT_EQ(0, pz_errors);
  pz_cmd(b, &t, "DEL", "{qt:a}:pending", NULL);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  ASSERT_STR_EQ("due-4", jobs[0].id);

  /* A parked worker's entry fleet cannot read: an enqueue onto the empty
   * queue succeeds (its job stays pending) and drops the entry. */
  pz_cmd(b, &t, "HSET", "{qt:a}:parked", "w1", "garbage", NULL);
  qt_add(&t, "t", "x", good);
  r = pz_cmd(b, &t, "HEXISTS", "{qt:a}:parked", "w1", NULL);
  ASSERT_EQ(0, r.integer);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  ASSERT_STR_EQ(good, jobs[0].id);
  qt_close(&t);
}

/* A job holding its unique key until it ends (docs/queue.md, "Unique
 * jobs") whose record went bad: the claim that moves it aside releases
 * the key, and its entry and the queue's flag go with it. */
CONFORMANCE_IMPL(queue_unique_poison) {
  char ids[1][FLEET_JOB_ID_MAX + 1], good[FLEET_JOB_ID_MAX + 1];
  fleet_queue_options_t o;
  fleet_job_spec_t s;
  pz_reply_t r;
  int st;
  qt_t t;

  fleet_queue_options_init(&o);
  o.error_cb = pz_on_error;
  pz_errors = 0;
  qt_open(&t, b->url, "a", &o);
  fleet_job_spec_init(&s, "t", "x", 1);
  s.id = "u-1";
  s.unique_key = "k";
  s.unique_until_done = 1;
  ASSERT_OK(qt_enqueue(&t, &s, 1, &st, ids));
  ASSERT_OK(st);
  r = pz_cmd(b, &t, "HGET", "{qt:a}:uniq", "u-1", NULL);
  ASSERT_STR_EQ("k", r.s[0]);
  r = pz_cmd(b, &t, "HEXISTS", "{qt:a}:limits", "uniq", NULL);
  ASSERT_EQ(1, r.integer);
  r = pz_cmd(b, &t, "PTTL", "{qt:a}:unique:k", NULL);
  ASSERT_EQ(-1, r.integer); /* no TTL bound */
  pz_record(b, &t, "{qt:a}:jobs", "u-1", "zz\0\0001\0t\0x", 9);
  qt_add(&t, "t", "x", good);
  pz_check(b, &t, good, "u-1", "field attempts", "fleet:malformed");
  r = pz_cmd(b, &t, "EXISTS", "{qt:a}:unique:k", "{qt:a}:uniq", NULL);
  ASSERT_EQ(0, r.integer);
  r = pz_cmd(b, &t, "HEXISTS", "{qt:a}:limits", "uniq", NULL);
  ASSERT_EQ(0, r.integer);
  s.id = "u-2";
  ASSERT_OK(qt_enqueue(&t, &s, 1, &st, ids));
  ASSERT_OK(st);
  qt_close(&t);
}

/* ------------------------------------------------------------------------ */
/* A flow's job moved aside                                                 */

/* What pzf_add() got. */
typedef struct {
  int done, status;
  char parent[FLEET_JOB_ID_MAX + 1];
} pzf_out_t;

static void pzf_on_flow(fleet_queue_t *q, int status,
                        const fleet_flow_result_t *r, void *ud) {
  pzf_out_t *o = ud;
  (void)q;
  o->done = 1;
  o->status = status;
  if (status == 0)
    snprintf(o->parent, sizeof(o->parent), "%s", r->parent_id);
}

/* Adds a flow of parent "p<n>" and children "k<n>a", "k<n>b" (given ids,
 * whose records are in {qt:pf}:jobs) to `t`; `ignore`: its
 * ignore_child_death. */
static void pzf_add(qt_t *t, int n, int ignore) {
  char pid[16], ka[16], kb[16];
  fleet_flow_child_t kids[2];
  fleet_flow_spec_t f;
  pzf_out_t o;

  snprintf(pid, sizeof(pid), "p%d", n);
  snprintf(ka, sizeof(ka), "k%da", n);
  snprintf(kb, sizeof(kb), "k%db", n);
  fleet_flow_spec_init(&f, "parent", "p", 1);
  f.parent.id = pid;
  memset(kids, 0, sizeof(kids));
  fleet_job_spec_init(&kids[0].spec, "child", "c", 1);
  fleet_job_spec_init(&kids[1].spec, "child", "c", 1);
  kids[0].spec.id = ka;
  kids[1].spec.id = kb;
  f.children = kids;
  f.n_children = 2;
  f.ignore_child_death = ignore;
  memset(&o, 0, sizeof(o));
  ASSERT_OK(fleet_queue_add_flow(&t->q, &f, pzf_on_flow, &o));
  ASSERT(fleet_test_run_until(&t->c.loop, fleet_test_flag_set, &o.done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(o.status);
  ASSERT_STR_EQ(pid, o.parent);
}

/* The state of job `id` of `t`, and its last error into `err`. */
static fleet_job_state_t pzf_state(qt_t *t, const char *id, char *err,
                                   size_t cap) {
  fleet_job_info_t info;

  ASSERT_OK(qt_get(t, id, &info, NULL, 0, err, cap));
  return info.state;
}

/* What pzf_flow_gone() heard. */
typedef struct {
  int done, status;
} pzf_kids_t;

static void pzf_on_children(fleet_queue_t *q, int status,
                            const fleet_flow_child_info_t *kids, size_t n,
                            size_t waiting, int fail, void *ud) {
  pzf_kids_t *k = ud;
  (void)q, (void)kids, (void)n, (void)waiting, (void)fail;
  k->done = 1;
  k->status = status;
}

/* The status fleet_queue_children() gives for parent `id`. */
static int pzf_children(qt_t *t, const char *id) {
  pzf_kids_t k = {0, 0};

  ASSERT_OK(fleet_queue_children(&t->q, id, pzf_on_children, &k));
  ASSERT(fleet_test_run_until(&t->c.loop, fleet_test_flag_set, &k.done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  return k.status;
}

/* A child moved aside by a claim or a recovery is a dead child for its
 * parent (it dies, or with ignore_child_death runs once the others ended),
 * and a parent moved aside takes its flow's state with it: no parent waits
 * for ever. */
CONFORMANCE_IMPL(queue_poison_flow) {
  fleet_queue_options_t o;
  fleet_claim_t c;
  qt_job_t jobs[4];
  pz_reply_t r;
  char err[256];
  qt_t t;

  fleet_queue_options_init(&o);
  o.error_cb = pz_on_error;
  pz_errors = 0;
  qt_open(&t, b->url, "pf", &o);

  /* A pending child whose record went bad, met by a claim: the parent
   * dies at once, naming the child; the other child is claimed. */
  pzf_add(&t, 1, 0);
  pz_record(b, &t, "{qt:pf}:jobs", "k1a", "zz", 2);
  ASSERT_EQ(1, qt_claim(&t, 4, 60000, jobs));
  ASSERT_STR_EQ("k1b", jobs[0].id);
  ASSERT_EQ(1, pz_errors);
  ASSERT_NOT_NULL(strstr(pz_detail, "k1a"));
  ASSERT_EQ(FLEET_JOB_DEAD, pzf_state(&t, "k1a", err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_DEAD, pzf_state(&t, "p1", err, sizeof(err)));
  ASSERT_NOT_NULL(strstr(err, "child k1a died"));
  ASSERT_ERR(FLEET_ENOTFOUND, pzf_children(&t, "p1"));
  c = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  ASSERT_EQ(0, qt_claim(&t, 4, 60000, jobs));

  /* With ignore_child_death, it counts as ended: the parent runs once the
   * other child completed. */
  pzf_add(&t, 2, 1);
  pz_record(b, &t, "{qt:pf}:jobs", "k2a", "zz", 2);
  ASSERT_EQ(1, qt_claim(&t, 4, 60000, jobs));
  ASSERT_STR_EQ("k2b", jobs[0].id);
  ASSERT_EQ(FLEET_JOB_WAITING_CHILDREN, pzf_state(&t, "p2", NULL, 0));
  c = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  ASSERT_EQ(FLEET_JOB_PENDING, pzf_state(&t, "p2", NULL, 0));

  /* A released parent whose record went bad: moved aside, its flow's
   * state goes with it. */
  ASSERT_OK(pzf_children(&t, "p2"));
  pz_record(b, &t, "{qt:pf}:jobs", "p2", "zz", 2);
  ASSERT_EQ(0, qt_claim(&t, 4, 60000, jobs));
  ASSERT_EQ(FLEET_JOB_DEAD, pzf_state(&t, "p2", err, sizeof(err)));
  ASSERT_NOT_NULL(strstr(err, "malformed record"));
  ASSERT_ERR(FLEET_ENOTFOUND, pzf_children(&t, "p2"));

  /* A running child whose record went bad, met by a recovery: the other
   * child is requeued, the parent dies. */
  pzf_add(&t, 3, 0);
  ASSERT_EQ(2, qt_claim(&t, 4, 1, jobs));
  pz_record(b, &t, "{qt:pf}:jobs", "k3a", "zz", 2);
  qt_sleep(&t, 20);
  pz_errors = 0;
  ASSERT_OK(qt_recover(&t));
  ASSERT_UEQ(1, t.recover_info.requeued);
  ASSERT_EQ(1, pz_errors);
  ASSERT_EQ(FLEET_JOB_DEAD, pzf_state(&t, "p3", err, sizeof(err)));
  ASSERT_NOT_NULL(strstr(err, "child k3a died"));
  ASSERT_EQ(1, qt_claim(&t, 4, 60000, jobs));
  ASSERT_STR_EQ("k3b", jobs[0].id);
  c = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));

  /* No flow is left: the queue's flow keys and its gate went. */
  r = pz_cmd(b, &t, "EXISTS", "{qt:pf}:parent", "{qt:pf}:deps", NULL);
  ASSERT_EQ(0, r.integer);
  r = pz_cmd(b, &t, "HEXISTS", "{qt:pf}:limits", "deps", NULL);
  ASSERT_EQ(0, r.integer);
  qt_close(&t);
}

/* ------------------------------------------------------------------------ */
/* A worker goes on past a poison pill                                      */

typedef struct {
  qt_t t;
  fleet_worker_t w;
  int completed, errors, eproto;
  char ids[4][FLEET_JOB_ID_MAX + 1];
  char detail[512];
  int grouped; /* each job's payload names its group ("-": none) */
} pzw_t;

static void pzw_handler(fleet_worker_t *w, fleet_job_t *job) {
  pzw_t *p = w->data;
  ASSERT_STR_EQ("t", job->type);
  if (p->completed < 4)
    snprintf(p->ids[p->completed], sizeof(p->ids[0]), "%s", job->id);
  if (p->grouped) {
    if (job->payload.len == 1 && *(const char *)job->payload.base == '-') {
      ASSERT_NULL(job->group);
    } else {
      ASSERT_NOT_NULL(job->group);
      ASSERT_EQ(job->payload.len, job->group_len);
      ASSERT_MEM_EQ(job->payload.base, job->group, job->group_len);
    }
  }
  ASSERT_OK(fleet_job_complete(job));
}

static void pzw_done(fleet_worker_t *w, fleet_job_t *job,
                     fleet_job_action_t action, int status) {
  pzw_t *p = w->data;
  (void)job;
  ASSERT_EQ(FLEET_JOB_COMPLETE, action);
  ASSERT_OK(status);
  p->completed++;
}

static void pzw_error(fleet_handle_t *h, int status, const char *detail) {
  pzw_t *p = h->data;
  ASSERT_EQ(FLEET_HANDLE_WORKER, h->type);
  p->errors++;
  if (status == FLEET_EPROTO) {
    p->eproto++;
    snprintf(p->detail, sizeof(p->detail), "%s", detail);
  }
}

static void pzw_closed(fleet_handle_t *h) {
  (void)h;
}

/* Runs a worker of `concurrency` on queue `name` of `p` until it
 * completed `completed` jobs and its error callback heard `eproto`
 * FLEET_EPROTO, and no other error. */
static void pzw_run(pzw_t *p, const char *name, uint32_t concurrency,
                    int completed, int eproto) {
  fleet_worker_options_t wo;

  fleet_worker_options_init(&wo);
  wo.concurrency = concurrency;
  wo.done_cb = pzw_done;
  wo.error_cb = pzw_error;
  ASSERT_OK(fleet_worker_init(&p->t.c.client, &p->w, name, &wo));
  p->w.data = p;
  ASSERT_OK(fleet_worker_start(&p->w, pzw_handler));
  ASSERT(fleet_test_wait_count(&p->t.c.loop, &p->completed, completed,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT(fleet_test_wait_count(&p->t.c.loop, &p->eproto, eproto,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(eproto, p->errors);
}

/* Checks the queue's dead and completed counts, then closes the worker
 * and the queue of `p`. */
static void pzw_end(pzw_t *p, uint64_t dead, uint64_t completed) {
  ASSERT_OK(qt_counts(&p->t));
  ASSERT_UEQ(dead, p->t.counts.dead);
  ASSERT_UEQ(completed, p->t.counts.completed);
  ASSERT_OK(fleet_worker_close(&p->w, pzw_closed));
  qt_close(&p->t);
}

/* A worker of concurrency 1 with a job without a record at the head of
 * the queue, and a delayed job with a malformed record due: it runs the
 * two good jobs behind them, and its error callback hears both, with
 * the handle of the worker. */
CONFORMANCE_IMPL(worker_poison) {
  char good[2][FLEET_JOB_ID_MAX + 1];
  pzw_t p;

  memset(&p, 0, sizeof(p));
  qt_open(&p.t, b->url, "a", NULL);
  pz_cmd(b, &p.t, "RPUSH", "{qt:a}:pending", "ghost", NULL);
  pz_record(b, &p.t, "{qt:a}:jobs", "due-1", "x", 1);
  pz_cmd(b, &p.t, "ZADD", "{qt:a}:delayed", "1", "due-1", NULL);
  qt_add(&p.t, "t", "x", good[0]);
  qt_add(&p.t, "t", "y", good[1]);
  pzw_run(&p, "a", 1, 2, 2);
  ASSERT_STR_EQ(good[0], p.ids[0]);
  ASSERT_STR_EQ(good[1], p.ids[1]);
  ASSERT_NOT_NULL(strstr(p.detail, "moved to dead"));
  pzw_end(&p, 2, 2);
}

/* A job without a record in a group's pending list, between jobs of
 * several groups (and one without a group) that one claim takes: the
 * claim moves it aside and hands out the others, each with its own group
 * (the claim's reply gives the groups once per run of jobs: the run with
 * the job moved aside counts one job fewer). */
CONFORMANCE_IMPL(worker_poison_group) {
  static const char *const groups[] = {"g1", "g1", "g2", "g2", NULL};
  static const char *const pays[] = {"g1", "g1", "g2", "g2", "-"};
  fleet_job_spec_t specs[5];
  pzw_t p;
  int i;

  memset(&p, 0, sizeof(p));
  p.grouped = 1;
  qt_open(&p.t, b->url, "pg", NULL);
  for (i = 0; i < 5; i++) {
    fleet_job_spec_init(&specs[i], "t", pays[i], strlen(pays[i]));
    specs[i].group = groups[i];
  }
  ASSERT_OK(qt_enqueue(&p.t, specs, 5, NULL, NULL));
  pz_cmd(b, &p.t, "LPUSH", "{qt:pg}:gp:g2", "ghost", NULL);
  pzw_run(&p, "pg", 8, 5, 1);
  ASSERT_NOT_NULL(strstr(p.detail, "ghost"));
  pzw_end(&p, 1, 5);
}

static void pz_hist_history(fleet_queue_t *q, int status,
                            const fleet_hist_point_t *pts, size_t n, void *ud) {
  qt_t *t = q->data;
  size_t *got = ud;

  (void)pts;
  t->done = 1;
  t->status = status;
  *got = n;
}

static void pz_hist_sample(fleet_queue_t *q, int status,
                           const fleet_queue_sample_t *s, void *ud) {
  qt_t *t = q->data;

  (void)s, (void)ud;
  t->done = 1;
  t->status = status;
}

/* The history's keys written by someone else (a string where a hash is,
 * a field that is no number): completions and failures go on and write
 * everything but that count, the history reads those points as empty,
 * and the readers' sample takes none. */
CONFORMANCE_IMPL(queue_poison_history) {
  char key[64], id[FLEET_JOB_ID_MAX + 1];
  fleet_claim_t claims[2];
  qt_job_t jobs[2];
  uint64_t now, m, d;
  size_t got = 0;
  int res[1], i;
  qt_t t;

  qt_open(&t, b->url, "a", NULL);
  now = qt_now_ms(&t);
  m = now / 60000;
  d = now / 86400000;
  /* This minute and day and the next ones: the calls below may cross. */
  for (i = 0; i < 2; i++) {
    snprintf(key, sizeof(key), "{qt:a}:hist:m:%llu",
             (unsigned long long)(m + (uint64_t)i));
    pz_cmd(b, &t, "SET", key, "foreign", NULL);
    snprintf(key, sizeof(key), "{qt:a}:hist:d:%llu",
             (unsigned long long)(d + (uint64_t)i));
    pz_cmd(b, &t, "HSET", key, "c", "not-a-number", NULL);
  }
  qt_add(&t, "t", "x", id);
  qt_add(&t, "t", "y", NULL);
  ASSERT_EQ(2, qt_claim(&t, 2, 60000, jobs));
  claims[0] = qt_claim_of(&jobs[0]);
  claims[1] = qt_claim_of(&jobs[1]);
  ASSERT_OK(qt_complete(&t, &claims[0], 1, res));
  ASSERT_OK(res[0]);
  ASSERT_OK(qt_fail(&t, &claims[1], "boom"));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.completed);
  ASSERT_UEQ(0, t.counts.running);
  ASSERT_UEQ(1, t.counts.delayed + t.counts.pending);

  t.done = 0;
  ASSERT_OK(fleet_queue_history(&t.q, FLEET_HIST_MINUTE, -120000, 0,
                                pz_hist_history, &got));
  qt_wait(&t);
  ASSERT_OK(t.status);
  ASSERT_UGE(got, 2);
  t.done = 0;
  ASSERT_OK(
      fleet_queue_history(&t.q, FLEET_HIST_DAY, 0, 0, pz_hist_history, &got));
  qt_wait(&t);
  ASSERT_OK(t.status);
  t.done = 0;
  ASSERT_OK(fleet_queue_sample(&t.q, 1, pz_hist_sample, NULL));
  qt_wait(&t);
  ASSERT_OK(t.status);
  qt_close(&t);
}
