/* queue_parts.c -- partitioned queues (docs/queue.md, "Partitioned
 * queues"). A queue of P partitions is P one-slot queues: partition 0 is
 * the queue itself, partition i (1 to P - 1) the queue "<name>~<i>", each
 * under its own hash tag, so that a Redis Cluster spreads them over its
 * shards. A handle of such a queue (fleet_queue_init() with
 * options.partitions P, or fleet_queue_open()) holds one plain child
 * handle per partition (made in queue_parts_api.c), and every public
 * call of the handle comes here: a job's call (complete, fail, get, cancel ...)
 * goes to the partition its id names, a batch is split by partition, and the
 * calls that see the whole queue (counts, listings, pause, limits, recovery) go
 * to every partition in one loop iteration (so in one write per shard) and
 * their answers are put together; removing the queue does that in up to
 * three steps (the check, the partitions, the record).
 *
 * Job ids say their partition: a given id is placed by its hash
 * (qp_hash() % P); a generated id (digits) of partition i >= 1 is
 * handed out as "<digits>~<i>", and one of partition 0 as it is. Given
 * ids of that form are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"

typedef struct qp_call_s qp_call_t;

/* One partition's part of a call. */
typedef struct {
  qp_call_t *c;
  uint32_t p;
  size_t first, n; /* its items: c->order[first .. first + n - 1] */
  uint64_t total;  /* a page of jobs: the partition's total */
} qp_slot_t;

/* A call of the partitioned handle, until every partition answered. */
struct qp_call_s {
  struct fleet__queue_s *q;
  fleet__fn_t cb;
  void *ud;
  uint32_t waiting, sent;
  int status;
  int kind; /* which call (QP_*), for the shared readers */
  size_t n; /* the items of the call (jobs, claims) */
  size_t *order;
  qp_slot_t *slots;
  char **blocks; /* copies of each partition's strings */
  /* What the answers add up to. */
  int *results;
  fleet_enqueue_result_t *enq;
  fleet_job_spec_t *specs;
  fleet_claim_t *claims;
  fleet_bytes_t *res_in;
  char *idbuf;
  fleet_job_t *jobs;
  size_t njobs, jobs_cap;
  fleet_claim_info_t info;
  fleet_queue_counts_t counts;
  fleet_recover_info_t rec;
  fleet_queue_limits_t limits;
  fleet_queue_flow_t flow;
  fleet_job_summary_t *sums;
  const char **ids;
  fleet_queue_group_t *groups;
  fleet_hist_point_t *hist; /* every partition's points, in turn */
  fleet_queue_sample_t sample;
  int arg; /* the argument of fleet__qp_all() */
  size_t nsums, limit;
  uint64_t total, next;
  uint32_t cur;
  int flag;
  int phase; /* a removal's step (qp_remove_next()) */
};

enum { QP_COMPLETE, QP_RESULTS, QP_REFRESH, QP_RELEASE };

enum { QP_PAUSE, QP_RESUME, QP_STATUS };

/* ------------------------------------------------------------------------ */
/* Ids                                                                      */

static uint32_t qp_hash(const void *s, size_t len) {
  const unsigned char *b = s;
  uint32_t h = 2166136261u;

  for (size_t i = 0; i < len; i++) {
    h ^= b[i];
    h *= 16777619u;
  }
  return h;
}

static int qp_digits(const char *s, size_t len) {
  if (len == 0)
    return 0;
  for (size_t i = 0; i < len; i++)
    if (s[i] < '0' || s[i] > '9')
      return 0;
  return 1;
}

/* Whether `id` is "<digits>~<digits>" (the digits after "~" at most 3):
 * then `*num_len` is the length of the first digits, `*part` the number
 * after "~". */
static int qp_decorated(const char *id, size_t len, size_t *num_len,
                        uint32_t *part) {
  const char *t = memchr(id, '~', len);
  size_t a, b;

  if (t == NULL)
    return 0;
  a = (size_t)(t - id);
  b = len - a - 1;
  if (!qp_digits(id, a) || b > 3 || !qp_digits(t + 1, b))
    return 0;
  *num_len = a;
  *part = 0;
  for (size_t i = 0; i < b; i++)
    *part = *part * 10 + (uint32_t)(t[1 + i] - '0');
  return 1;
}

/* The partition of the job `id` (`len` bytes), and the length of its id
 * inside that partition (`*plain_len`: the id cut before "~<i>"). */
static uint32_t qp_route(const struct fleet__queue_s *q, const char *id,
                         size_t len, size_t *plain_len) {
  size_t nl;
  uint32_t p;

  *plain_len = len;
  if (qp_decorated(id, len, &nl, &p) && p >= 1 && p < q->nparts) {
    *plain_len = nl;
    return p;
  }
  if (qp_digits(id, len))
    return 0;
  return qp_hash(id, len) % q->nparts;
}

/* The bytes of the id `id` of partition `p` as the handle hands it out,
 * its NUL included. */
static size_t qp_out_len(uint32_t p, const char *id, size_t len) {
  if (p == 0 || !qp_digits(id, len))
    return len + 1;
  return len + 2 + (p >= 100 ? 3 : p >= 10 ? 2 : 1);
}

/* Writes the id handed out at `out` (qp_out_len() bytes) and returns it. */
static char *qp_out(char *out, uint32_t p, const char *id, size_t len) {
  size_t k = len;

  memcpy(out, id, len);
  if (p != 0 && qp_digits(id, len)) {
    out[k++] = '~';
    if (p >= 100)
      out[k++] = (char)('0' + p / 100);
    if (p >= 10)
      out[k++] = (char)('0' + p / 10 % 10);
    out[k++] = (char)('0' + p % 10);
  }
  out[k] = '\0';
  return out;
}

/* The plain id of a single-job call, NUL-terminated in `buf` (at least
 * FLEET_JOB_ID_MAX + 1 bytes) when it had a partition suffix; an id too
 * long is passed on as it is, for the partition's call to refuse. */
static const char *qp_plain(const struct fleet__queue_s *q, const char *id,
                            char *buf, uint32_t *p) {
  size_t len = strlen(id), pl;

  *p = qp_route(q, id, len, &pl);
  if (pl == len || pl > FLEET_JOB_ID_MAX)
    return id;
  memcpy(buf, id, pl);
  buf[pl] = '\0';
  return buf;
}

/* ------------------------------------------------------------------------ */
/* Calls                                                                    */

static void qp_free(qp_call_t *c) {
  if (c->blocks != NULL)
    for (uint32_t p = 0; p < c->q->nparts; p++)
      free(c->blocks[p]);
  free(c->blocks);
  free(c->slots);
  free(c->order);
  free(c->results);
  free(c->enq);
  free(c->specs);
  free(c->claims);
  free(c->res_in);
  free(c->idbuf);
  free(c->jobs);
  free(c->sums);
  free(c->ids);
  free(c->groups);
  free(c->hist);
  free(c);
}

/* A call of `n` items; NULL when out of memory. */
static qp_call_t *qp_new(struct fleet__queue_s *q, fleet__fn_t cb, void *ud,
                         size_t n) {
  qp_call_t *c = calloc(1, sizeof(*c));

  if (c == NULL)
    return NULL;
  c->q = q;
  c->cb = cb;
  c->ud = ud;
  c->n = n;
  c->slots = calloc(q->nparts, sizeof(*c->slots));
  c->blocks = calloc(q->nparts, sizeof(*c->blocks));
  c->order = calloc(n + 1, sizeof(*c->order));
  if (c->slots == NULL || c->blocks == NULL || c->order == NULL) {
    qp_free(c);
    return NULL;
  }
  for (uint32_t p = 0; p < q->nparts; p++) {
    c->slots[p].c = c;
    c->slots[p].p = p;
  }
  return c;
}

static fleet_queue_t *qp_pub(const qp_call_t *c) {
  return (fleet_queue_t *)c->q->base.pub;
}

/* Counts a partition's call just made (`err` its return). */
static void qp_sent(qp_call_t *c, int err) {
  if (err == 0)
    c->sent++;
  else if (c->status == 0)
    c->status = err;
}

/* After the partitions' calls were made: 0 when one went out (the call
 * then ends once they all answered), else the error (and `c` is
 * freed). */
static int qp_go(qp_call_t *c) {
  int err = c->status;

  if (c->sent == 0) {
    qp_free(c);
    return err != 0 ? err : FLEET_EINVAL;
  }
  c->waiting = c->sent;
  return 0;
}

static void qp_finish(qp_call_t *c);

static int qp_remove_next(qp_call_t *c);

/* A partition answered with `status`: when it was the last, the call
 * ends (or a removal goes on to its next step). */
static void qp_part_done(qp_slot_t *s, int status) {
  qp_call_t *c = s->c;

  if (status != 0 && c->status == 0)
    c->status = status;
  if (--c->waiting == 0) {
    if (c->kind == FLEET__QP_REMOVE && qp_remove_next(c) == 0)
      return;
    qp_finish(c);
    qp_free(c);
  }
}

/* Groups the `n` items of `c` by partition (where[i]) into c->order and
 * the slots. */
static void qp_group(qp_call_t *c, const uint32_t *where) {
  size_t k = 0;

  for (uint32_t p = 0; p < c->q->nparts; p++) {
    c->slots[p].first = k;
    for (size_t i = 0; i < c->n; i++)
      if (where[i] == p)
        c->order[k++] = i;
    c->slots[p].n = k - c->slots[p].first;
  }
}

/* ------------------------------------------------------------------------ */
/* Enqueue                                                                  */

static void qp_enq_done(fleet_queue_t *sub, int status,
                        const fleet_enqueue_result_t *r, size_t n, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;
  size_t bytes = 0, j;
  char *p;

  (void)sub;
  if (status == 0 && n != s->n)
    status = FLEET_EPROTO;
  if (status == 0) {
    for (j = 0; j < n; j++)
      bytes += qp_out_len(s->p, r[j].id, r[j].id_len);
    if ((c->blocks[s->p] = malloc(bytes + 1)) == NULL)
      status = FLEET_ENOMEM;
  }
  if (status == 0) {
    p = c->blocks[s->p];
    for (j = 0; j < n; j++) {
      fleet_enqueue_result_t *e = &c->enq[c->order[s->first + j]];
      e->status = r[j].status;
      e->id = qp_out(p, s->p, r[j].id, r[j].id_len);
      e->id_len = strlen(e->id);
      p += e->id_len + 1;
    }
  }
  qp_part_done(s, status);
}

int fleet__qp_enqueue(fleet_queue_t *pub, const fleet_job_spec_t *specs,
                      size_t n, fleet_queue_enqueue_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  uint32_t *where;
  qp_call_t *c;
  size_t i, nl;
  uint32_t part;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (specs == NULL || n == 0 || n > FLEET_QUEUE_BATCH_MAX)
    return FLEET_EINVAL;
  for (i = 0; i < n; i++) {
    if ((err = fleet__queue_spec_ok(&specs[i])) != 0)
      return err;
    if (specs[i].id != NULL &&
        qp_decorated(specs[i].id, strlen(specs[i].id), &nl, &part))
      return FLEET_EINVAL; /* "<digits>~<digits>": fleet's */
  }
  if ((c = qp_new(q, (fleet__fn_t)cb, user_data, n)) == NULL)
    return FLEET_ENOMEM;
  where = calloc(n, sizeof(*where));
  c->specs = calloc(n, sizeof(*c->specs));
  c->enq = calloc(n, sizeof(*c->enq));
  if (where == NULL || c->specs == NULL || c->enq == NULL) {
    free(where);
    qp_free(c);
    return FLEET_ENOMEM;
  }
  /* Placement: by the id, else the unique key, else the group, else
   * round-robin. */
  for (i = 0; i < n; i++) {
    const fleet_job_spec_t *s = &specs[i];
    const char *by = s->id != NULL           ? s->id
                     : s->unique_key != NULL ? s->unique_key
                                             : s->group;

    where[i] = by != NULL ? qp_hash(by, strlen(by)) % q->nparts
                          : q->qp_rr++ % q->nparts;
  }
  qp_group(c, where);
  free(where);
  for (i = 0; i < n; i++)
    c->specs[i] = specs[c->order[i]];
  for (uint32_t p = 0; p < q->nparts; p++) {
    qp_slot_t *s = &c->slots[p];
    if (s->n > 0)
      qp_sent(c, fleet__queue_enqueue(q->parts[p], c->specs + s->first, s->n,
                                      qp_enq_done, s));
  }
  return qp_go(c);
}

/* ------------------------------------------------------------------------ */
/* Claim                                                                    */

static void qp_info_add(qp_call_t *c, const fleet_claim_info_t *in) {
  fleet_claim_info_t *o = &c->info;

#define QP_MIN_SET(f)                                                          \
  if (in->f != 0 && (o->f == 0 || in->f < o->f))                               \
  o->f = in->f
  if (in->now_ms > o->now_ms)
    o->now_ms = in->now_ms;
  QP_MIN_SET(deadline_ms);
  QP_MIN_SET(next_run_at_ms);
  QP_MIN_SET(retry_at_ms);
#undef QP_MIN_SET
  o->pending += in->pending;
}

static void qp_claim_done(fleet_queue_t *sub, int status, fleet_job_t *jobs,
                          size_t n, const fleet_claim_info_t *info, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;
  size_t bytes = 0, j;
  char *p;

  (void)sub;
  if (status == 0) {
    for (j = 0; j < n; j++)
      bytes += qp_out_len(s->p, jobs[j].id, jobs[j].id_len) + jobs[j].type_len +
               1 + jobs[j].payload.len +
               (jobs[j].group != NULL ? jobs[j].group_len + 1 : 0);
    if ((c->blocks[s->p] = malloc(bytes + 1)) == NULL ||
        fleet__grow((void **)&c->jobs, &c->jobs_cap, c->njobs + n,
                    sizeof(*c->jobs)) != 0)
      status = FLEET_ENOMEM;
  }
  if (status == 0) {
    qp_info_add(c, info);
    p = c->blocks[s->p];
    for (j = 0; j < n; j++) {
      fleet_job_t *o = &c->jobs[c->njobs++];
      *o = jobs[j];
      o->data = NULL;
      o->internal_ = NULL;
      o->id = qp_out(p, s->p, jobs[j].id, jobs[j].id_len);
      o->id_len = strlen(o->id);
      p += o->id_len + 1;
      memcpy(p, jobs[j].type, jobs[j].type_len);
      p[jobs[j].type_len] = '\0';
      o->type = p;
      p += jobs[j].type_len + 1;
      if (jobs[j].payload.len > 0)
        memcpy(p, jobs[j].payload.base, jobs[j].payload.len);
      o->payload.base = p;
      p += jobs[j].payload.len;
      if (jobs[j].group != NULL) {
        memcpy(p, jobs[j].group, jobs[j].group_len);
        p[jobs[j].group_len] = '\0';
        o->group = p;
        p += jobs[j].group_len + 1;
      }
    }
  }
  qp_part_done(s, status);
}

int fleet__qp_claim(fleet_queue_t *pub, size_t max_jobs, uint32_t ttl_ms,
                    fleet_queue_claim_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  qp_call_t *c;
  uint32_t start, np;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (max_jobs > FLEET_QUEUE_BATCH_MAX)
    return FLEET_EINVAL;
  if ((c = qp_new(q, (fleet__fn_t)cb, user_data, 0)) == NULL)
    return FLEET_ENOMEM;
  np = q->nparts;
  /* The jobs asked for are spread over the partitions, the first ones
   * (by a start that turns with each call) taking one more. */
  start = q->qp_rr++ % np;
  for (uint32_t k = 0; k < np; k++) {
    uint32_t p = (start + k) % np;
    size_t want = max_jobs / np + (k < max_jobs % np ? 1 : 0);
    if (max_jobs == 0 || want > 0)
      qp_sent(c, fleet__queue_claim(q->parts[p], want, ttl_ms, qp_claim_done,
                                    &c->slots[p]));
  }
  return qp_go(c);
}

/* ------------------------------------------------------------------------ */
/* Batches of claims                                                        */

static void qp_batch_done(fleet_queue_t *sub, int status, const int *results,
                          size_t n, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;

  (void)sub;
  if (status == 0 && n != s->n)
    status = FLEET_EPROTO;
  if (status == 0)
    for (size_t j = 0; j < n; j++)
      c->results[c->order[s->first + j]] = results[j];
  qp_part_done(s, status);
}

int fleet__qp_claims(fleet_queue_t *pub, int kind, const fleet_claim_t *claims,
                     const fleet_bytes_t *results, size_t n, uint32_t ttl_ms,
                     fleet_queue_batch_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  uint32_t *where;
  size_t *plen, i, bytes = 0;
  qp_call_t *c;
  char *p;
  int err;

  if ((q = fleet__queue_enter(pub, 1, &err)) == NULL)
    return err;
  if (claims == NULL || n == 0 || n > FLEET_QUEUE_BATCH_MAX)
    return FLEET_EINVAL;
  for (i = 0; i < n; i++)
    if (claims[i].id == NULL)
      return FLEET_EINVAL;
  if ((c = qp_new(q, (fleet__fn_t)cb, user_data, n)) == NULL)
    return FLEET_ENOMEM;
  c->kind = kind;
  where = calloc(n, sizeof(*where));
  plen = calloc(n, sizeof(*plen));
  c->results = calloc(n, sizeof(*c->results));
  c->claims = calloc(n, sizeof(*c->claims));
  if (results != NULL)
    c->res_in = calloc(n, sizeof(*c->res_in));
  if (where != NULL && plen != NULL)
    for (i = 0; i < n; i++) {
      where[i] = qp_route(q, claims[i].id, strlen(claims[i].id), &plen[i]);
      bytes += plen[i] + 1;
    }
  c->idbuf = malloc(bytes + 1);
  if (where == NULL || plen == NULL || c->results == NULL ||
      c->claims == NULL || c->idbuf == NULL ||
      (results != NULL && c->res_in == NULL)) {
    free(where);
    free(plen);
    qp_free(c);
    return FLEET_ENOMEM;
  }
  qp_group(c, where);
  p = c->idbuf;
  for (size_t k = 0; k < n; k++) {
    i = c->order[k];
    memcpy(p, claims[i].id, plen[i]);
    p[plen[i]] = '\0';
    c->claims[k].id = p;
    c->claims[k].token = claims[i].token;
    p += plen[i] + 1;
    if (results != NULL)
      c->res_in[k] = results[i];
  }
  free(where);
  free(plen);
  for (uint32_t part = 0; part < q->nparts; part++) {
    qp_slot_t *s = &c->slots[part];
    fleet_queue_t *sub = q->parts[part];
    const fleet_claim_t *cl = c->claims + s->first;
    if (s->n == 0)
      continue;
    switch (kind) {
      case QP_COMPLETE:
        err = fleet__queue_complete(sub, cl, s->n, qp_batch_done, s);
        break;
      case QP_RESULTS:
        err = fleet__queue_complete_results(
            sub, cl, c->res_in != NULL ? c->res_in + s->first : NULL, s->n,
            qp_batch_done, s);
        break;
      case QP_REFRESH:
        err = fleet__queue_refresh(sub, cl, s->n, ttl_ms, qp_batch_done, s);
        break;
      default:
        err = fleet__queue_release(sub, cl, s->n, qp_batch_done, s);
        break;
    }
    qp_sent(c, err);
  }
  return qp_go(c);
}

/* ------------------------------------------------------------------------ */
/* Calls about one job: to its partition                                    */

static void qp_fail_done(fleet_queue_t *sub, int status, int dead,
                         uint64_t retry_at, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;

  (void)sub;
  ((fleet_queue_fail_cb)c->cb)(qp_pub(c), status, dead, retry_at, c->ud);
  qp_free(c);
}

static void qp_status_one_done(fleet_handle_t *h, int status, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;

  (void)h;
  if (c->cb != NULL)
    ((fleet_status_cb)c->cb)((fleet_handle_t *)qp_pub(c), status, c->ud);
  qp_free(c);
}

static void qp_get_done(fleet_queue_t *sub, int status,
                        const fleet_job_info_t *info, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;

  (void)sub;
  ((fleet_queue_get_cb)c->cb)(qp_pub(c), status, info, c->ud);
  qp_free(c);
}

static void qp_cancel_done(fleet_queue_t *sub, int status,
                           fleet_cancel_result_t result, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;

  (void)sub;
  ((fleet_queue_cancel_cb)c->cb)(qp_pub(c), status, result, c->ud);
  qp_free(c);
}

static void qp_children_done(fleet_queue_t *sub, int status,
                             const fleet_flow_child_info_t *kids, size_t n,
                             size_t waiting, int fail_on_death, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;

  (void)sub;
  ((fleet_queue_children_cb)c->cb)(qp_pub(c), status, kids, n, waiting,
                                   fail_on_death, c->ud);
  qp_free(c);
}

static void qp_retry_done(fleet_queue_t *sub, int status, uint64_t retried,
                          void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;

  (void)sub;
  if (status == 0)
    c->total += retried;
  qp_part_done(s, status);
}

static void qp_verb_done(fleet_queue_t *sub, int status, fleet_job_state_t was,
                         void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;

  (void)sub;
  if (c->cb != NULL)
    ((fleet_queue_job_verb_cb)c->cb)(qp_pub(c), status, was, c->ud);
  qp_free(c);
}

int fleet__qp_one(fleet_queue_t *pub, int what, const char *id,
                  const fleet_claim_t *claim, const void *data, size_t len,
                  uint32_t num, fleet__fn_t cb, void *user_data) {
  char buf[FLEET_JOB_ID_MAX + 1];
  struct fleet__queue_s *q;
  fleet_claim_t cl;
  const char *plain;
  qp_call_t *c;
  uint32_t p;
  int err;

  if ((q = fleet__queue_enter(pub,
                              cb != NULL || what == FLEET__QP_PROGRESS ||
                                  what == FLEET__QP_CANCEL,
                              &err)) == NULL)
    return err;
  if (claim != NULL)
    id = claim->id;
  if (id == NULL)
    return FLEET_EINVAL;
  plain = qp_plain(q, id, buf, &p);
  if ((c = qp_new(q, cb, user_data, 0)) == NULL)
    return FLEET_ENOMEM;
  if (claim != NULL) {
    cl.id = plain;
    cl.token = claim->token;
  }
  switch (what) {
    case FLEET__QP_FAIL:
      err = fleet__queue_fail(q->parts[p], &cl, data, len, qp_fail_done,
                              &c->slots[p]);
      break;
    case FLEET__QP_PROGRESS:
      err = fleet__queue_progress(q->parts[p], &cl, num, data, len,
                                  qp_status_one_done, &c->slots[p]);
      break;
    case FLEET__QP_GET:
      err = fleet__queue_get(q->parts[p], plain, qp_get_done, &c->slots[p]);
      break;
    case FLEET__QP_CANCEL:
      err = fleet__queue_cancel(q->parts[p], plain, qp_status_one_done,
                                &c->slots[p]);
      break;
    case FLEET__QP_CANCEL_JOB:
      err = fleet__queue_cancel_job(q->parts[p], plain, num, qp_cancel_done,
                                    &c->slots[p]);
      break;
    case FLEET__QP_CHILDREN:
      err = fleet__queue_children(q->parts[p], plain, qp_children_done,
                                  &c->slots[p]);
      break;
    case FLEET__QP_JOB_DELETE:
    case FLEET__QP_JOB_RUN:
    case FLEET__QP_JOB_KILL:
      err = fleet__queue_job_verb(q->parts[p], what, plain, qp_verb_done,
                                  &c->slots[p]);
      break;
    default: /* FLEET__QP_RETRY */
      err = fleet__queue_retry(q->parts[p], plain, qp_retry_done, &c->slots[p]);
      if (err == 0) {
        c->kind = FLEET__QP_RETRY;
        c->sent = 1;
        c->waiting = 1;
      }
      break;
  }
  if (err != 0)
    qp_free(c);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Calls about the whole queue: to every partition                          */

static void qp_counts_done(fleet_queue_t *sub, int status,
                           const fleet_queue_counts_t *n, void *ud) {
  qp_slot_t *s = ud;
  fleet_queue_counts_t *o = &s->c->counts;

  (void)sub;
  if (status == 0) {
    o->pending += n->pending;
    o->delayed += n->delayed;
    o->running += n->running;
    o->completed += n->completed;
    o->dead += n->dead;
    o->completed_kept += n->completed_kept;
    o->dead_kept += n->dead_kept;
    o->waiting_children += n->waiting_children;
  }
  qp_part_done(s, status);
}

static void qp_purge_done(fleet_queue_t *sub, int status, uint64_t removed,
                          void *ud) {
  qp_slot_t *s = ud;

  (void)sub;
  if (status == 0)
    s->c->total += removed;
  qp_part_done(s, status);
}

static void qp_recover_done(fleet_queue_t *sub, int status,
                            const fleet_recover_info_t *in, void *ud) {
  qp_slot_t *s = ud;
  fleet_recover_info_t *o = &s->c->rec;

  (void)sub;
  if (status == 0) {
    if (in->now_ms > o->now_ms)
      o->now_ms = in->now_ms;
    o->requeued += in->requeued;
    o->dead += in->dead;
    if (in->next_deadline_ms != 0 &&
        (o->next_deadline_ms == 0 ||
         in->next_deadline_ms < o->next_deadline_ms))
      o->next_deadline_ms = in->next_deadline_ms;
  }
  qp_part_done(s, status);
}

static void qp_paused_done(fleet_queue_t *sub, int status, int paused,
                           void *ud) {
  qp_slot_t *s = ud;

  (void)sub;
  if (status == 0 && paused)
    s->c->flag = 1;
  qp_part_done(s, status);
}

static void qp_status_done(fleet_handle_t *h, int status, void *ud) {
  (void)h;
  qp_part_done(ud, status);
}

static void qp_limits_done(fleet_queue_t *sub, int status,
                           const fleet_queue_limits_t *limits,
                           const fleet_queue_flow_t *flow, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;

  (void)sub;
  if (status == 0) {
    if (s->p == 0)
      c->limits = *limits;
    c->flow.rate_used += flow->rate_used;
    c->flow.running += flow->running;
    c->flow.groups += flow->groups;
    if (flow->held_until_ms > c->flow.held_until_ms)
      c->flow.held_until_ms = flow->held_until_ms;
  }
  qp_part_done(s, status);
}

static void qp_list_done(fleet_queue_t *sub, int status, const char *const *ids,
                         size_t n, uint64_t total, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;
  size_t bytes = 0, j;
  char *p;

  (void)sub;
  if (status == 0) {
    c->total += total;
    for (j = 0; j < n; j++)
      bytes += qp_out_len(s->p, ids[j], strlen(ids[j]));
    if ((c->blocks[s->p] = malloc(bytes + 1)) == NULL)
      status = FLEET_ENOMEM;
  }
  if (status == 0) {
    p = c->blocks[s->p];
    for (j = 0; j < n && c->nsums < c->limit; j++) {
      c->ids[c->nsums++] = qp_out(p, s->p, ids[j], strlen(ids[j]));
      p += strlen(p) + 1;
    }
  }
  qp_part_done(s, status);
}

static void qp_jobs_done(fleet_queue_t *sub, int status,
                         const fleet_job_summary_t *jobs, size_t n,
                         uint64_t total, uint64_t next, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;
  size_t bytes = 0, j;
  char *p;

  (void)sub;
  if (status == 0) {
    c->total += total;
    s->total = total;
  }
  if (status == 0 && s->p == c->cur) {
    if (next > UINT64_MAX / 256)
      status = FLEET_EPROTO;
    else if (next != 0)
      c->next = next * 256 + s->p;
    else
      c->next = s->p + 1 < c->q->nparts ? s->p + 1 : 0;
    for (j = 0; j < n; j++)
      bytes += qp_out_len(s->p, jobs[j].id, strlen(jobs[j].id)) +
               strlen(jobs[j].type) + 1 + jobs[j].payload.len + 1 +
               jobs[j].last_error_len + 1 +
               (jobs[j].group != NULL ? strlen(jobs[j].group) + 1 : 0);
    if (status == 0 &&
        ((c->blocks[s->p] = malloc(bytes + 1)) == NULL ||
         (n > 0 && (c->sums = calloc(n, sizeof(*c->sums))) == NULL)))
      status = FLEET_ENOMEM;
    if (status == 0) {
      p = c->blocks[s->p];
      for (j = 0; j < n; j++) {
        fleet_job_summary_t *o = &c->sums[j];
        size_t l;
        *o = jobs[j];
        o->id = qp_out(p, s->p, jobs[j].id, strlen(jobs[j].id));
        p += strlen(p) + 1;
        l = strlen(jobs[j].type) + 1;
        o->type = memcpy(p, jobs[j].type, l);
        p += l;
        if (jobs[j].payload.len > 0)
          memcpy(p, jobs[j].payload.base, jobs[j].payload.len);
        p[jobs[j].payload.len] = '\0';
        o->payload.base = p;
        p += jobs[j].payload.len + 1;
        if (jobs[j].last_error_len > 0)
          memcpy(p, jobs[j].last_error, jobs[j].last_error_len);
        p[jobs[j].last_error_len] = '\0';
        o->last_error = p;
        p += jobs[j].last_error_len + 1;
        if (jobs[j].group != NULL) {
          l = strlen(jobs[j].group) + 1;
          o->group = memcpy(p, jobs[j].group, l);
          p += l;
        }
      }
      c->nsums = n;
    }
  }
  qp_part_done(s, status);
}

static int qp_group_cmp(const void *a, const void *b) {
  return strcmp(((const fleet_queue_group_t *)a)->name,
                ((const fleet_queue_group_t *)b)->name);
}

static void qp_groups_done(fleet_queue_t *sub, int status,
                           const fleet_queue_group_t *g, size_t n,
                           uint64_t total, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;
  size_t bytes = 0, j;
  fleet_queue_group_t *ng;
  char *p;

  (void)sub;
  if (status == 0) {
    c->total += total;
    for (j = 0; j < n; j++)
      bytes += strlen(g[j].name) + 1;
    ng = realloc(c->groups, (c->nsums + n + 1) * sizeof(*ng));
    if (ng == NULL || (c->blocks[s->p] = malloc(bytes + 1)) == NULL)
      status = FLEET_ENOMEM;
    if (ng != NULL)
      c->groups = ng;
  }
  if (status == 0) {
    p = c->blocks[s->p];
    for (j = 0; j < n; j++) {
      size_t l = strlen(g[j].name) + 1;
      c->groups[c->nsums] = g[j];
      c->groups[c->nsums++].name = memcpy(p, g[j].name, l);
      p += l;
    }
  }
  qp_part_done(s, status);
}

static void qp_hist_done(fleet_queue_t *sub, int status,
                         const fleet_hist_point_t *pts, size_t n, void *ud) {
  qp_slot_t *s = ud;
  qp_call_t *c = s->c;
  fleet_hist_point_t *h;

  (void)sub;
  if (status == 0 && n > 0) {
    if ((h = realloc(c->hist, (c->nsums + n) * sizeof(*h))) == NULL) {
      status = FLEET_ENOMEM;
    } else {
      c->hist = h;
      memcpy(h + c->nsums, pts, n * sizeof(*h));
      c->nsums += n;
    }
  }
  qp_part_done(s, status);
}

static int qp_hist_cmp(const void *a, const void *b) {
  int64_t x = ((const fleet_hist_point_t *)a)->t_ms;
  int64_t y = ((const fleet_hist_point_t *)b)->t_ms;

  return x < y ? -1 : x > y;
}

/* The partitions' points as one history: the points of one minute or day
 * added up (the depths that were sampled summed, -1 when none was; the
 * wait the longest), oldest first, at most the newest `max`. The
 * partitions' servers may disagree on the time (a cluster), so a point
 * that only some of them have is kept. */
static void qp_hist_merge(qp_call_t *c, size_t max) {
  size_t i, k;

  if (c->nsums == 0)
    return;
  qsort(c->hist, c->nsums, sizeof(*c->hist), qp_hist_cmp);
  for (i = 1, k = 0; i < c->nsums; i++) {
    fleet_hist_point_t *a = &c->hist[k], *b = &c->hist[i];
    if (a->t_ms == b->t_ms) {
      a->processed += b->processed;
      a->failed += b->failed;
      if (b->depth >= 0)
        a->depth = a->depth >= 0 ? a->depth + b->depth : b->depth;
      if (b->wait_ms > a->wait_ms)
        a->wait_ms = b->wait_ms;
    } else {
      c->hist[++k] = *b;
    }
  }
  c->nsums = k + 1;
  if (c->nsums > max) {
    memmove(c->hist, c->hist + (c->nsums - max), max * sizeof(*c->hist));
    c->nsums = max;
  }
}

static void qp_sample_done(fleet_queue_t *sub, int status,
                           const fleet_queue_sample_t *smp, void *ud) {
  qp_slot_t *s = ud;
  fleet_queue_sample_t *o = &s->c->sample;

  (void)sub;
  if (status == 0) {
    if (smp->now_ms > o->now_ms)
      o->now_ms = smp->now_ms;
    if (smp->oldest_ms > o->oldest_ms)
      o->oldest_ms = smp->oldest_ms;
    o->recorded = o->recorded || smp->recorded;
  }
  qp_part_done(s, status);
}

/* A sample that records: the partition's own depth first, then its
 * sample of it. */
static void qp_sample_counts(fleet_queue_t *sub, int status,
                             const fleet_queue_counts_t *n, void *ud) {
  if (status == 0)
    status = fleet__queue_sample(sub, n->pending + n->delayed + n->running,
                                 qp_sample_done, ud);
  if (status != 0)
    qp_part_done(ud, status);
}

int fleet__qp_all(fleet_queue_t *pub, int what, int arg, const void *ptr,
                  const char *str, uint64_t a, uint64_t b, size_t limit,
                  fleet__fn_t cb, void *user_data) {
  struct fleet__queue_s *q;
  qp_call_t *c;
  uint32_t p;
  int err;

  if ((q = fleet__queue_enter(pub,
                              cb != NULL || what == FLEET__QP_SET_LIMITS ||
                                  what == FLEET__QP_HOLD ||
                                  what == FLEET__QP_WEIGHT,
                              &err)) == NULL)
    return err;
  if ((c = qp_new(q, cb, user_data, 0)) == NULL)
    return FLEET_ENOMEM;
  c->kind = what;
  c->flag = 0;
  c->arg = arg;
  c->limit = limit;
  c->sample.oldest_ms = -1;
  if (what == FLEET__QP_JOBS) {
    /* The cursor: the partition's own cursor times 256, plus the
     * partition; 0 is the first page of partition 0. */
    c->cur = (uint32_t)(a % 256);
    if (c->cur >= q->nparts) {
      qp_free(c);
      return FLEET_EINVAL;
    }
  }
  if (what == FLEET__QP_LIST &&
      (limit == 0 || (c->ids = calloc(limit, sizeof(*c->ids))) == NULL)) {
    qp_free(c);
    return limit == 0 ? FLEET_EINVAL : FLEET_ENOMEM;
  }
  for (p = 0; p < q->nparts; p++) {
    fleet_queue_t *sub = q->parts[p];
    qp_slot_t *s = &c->slots[p];
    switch (what) {
      case FLEET__QP_COUNTS:
        err = fleet__queue_counts(sub, qp_counts_done, s);
        break;
      case FLEET__QP_PURGE:
        err = fleet__queue_purge(sub, (fleet_job_state_t)arg, qp_purge_done, s);
        break;
      case FLEET__QP_RECOVER:
        err = fleet__queue_recover(sub, qp_recover_done, s);
        break;
      case FLEET__QP_RETRY:
        err = fleet__queue_retry(sub, NULL, qp_retry_done, s);
        break;
      case FLEET__QP_PAUSE:
        err = arg == QP_PAUSE    ? fleet__queue_pause(sub, qp_paused_done, s)
              : arg == QP_RESUME ? fleet__queue_resume(sub, qp_paused_done, s)
                                 : fleet__queue_paused(sub, qp_paused_done, s);
        break;
      case FLEET__QP_SET_LIMITS:
        err = fleet__queue_set_limits(sub, ptr, qp_status_done, s);
        break;
      case FLEET__QP_HOLD:
        err = fleet__queue_hold(sub, str, (uint32_t)a, qp_status_done, s);
        break;
      case FLEET__QP_WEIGHT:
        err = fleet__queue_set_group_weight(sub, str, (uint32_t)a,
                                            qp_status_done, s);
        break;
      case FLEET__QP_LIMITS:
        err = fleet__queue_limits(sub, qp_limits_done, s);
        break;
      case FLEET__QP_LIST:
        err = fleet__queue_list(sub, str, limit, qp_list_done, s);
        break;
      case FLEET__QP_GROUPS:
        err = fleet__queue_groups(sub, str, limit, qp_groups_done, s);
        break;
      case FLEET__QP_HISTORY:
        err = fleet__queue_history(sub, (fleet_hist_res_t)arg, (int64_t)a,
                                   (int64_t)b, qp_hist_done, s);
        break;
      case FLEET__QP_SAMPLE:
        /* The depth is checked as the plain call checks it. */
        err = a == FLEET_HIST_NO_SAMPLE
                  ? fleet__queue_sample(sub, a, qp_sample_done, s)
              : a > (1ULL << 50)
                  ? FLEET_EINVAL
                  : fleet__queue_counts(sub, qp_sample_counts, s);
        break;
      default: /* FLEET__QP_JOBS: this page, and the totals of the others */
        if (str != NULL)
          err = fleet__queue_group_jobs(
              sub, str, p == c->cur ? a / 256 : 0, p == c->cur ? limit : 1,
              p == c->cur ? (size_t)b : 0, qp_jobs_done, s);
        else
          err = fleet__queue_jobs(sub, (fleet_job_state_t)arg,
                                  p == c->cur ? a / 256 : 0,
                                  p == c->cur ? limit : 1,
                                  p == c->cur ? (size_t)b : 0, qp_jobs_done, s);
        break;
    }
    qp_sent(c, err);
    if (err != 0 && c->sent == 0) {
      /* The first refused: a bad argument, refused by every partition
       * alike; nothing went out. */
      qp_free(c);
      return err;
    }
  }
  return qp_go(c);
}

/* ------------------------------------------------------------------------ */
/* Removing the queue                                                       */

/* The removal goes in three steps, each to every partition in one loop
 * iteration: without force, the counts (refused with FLEET_EBUSY if any
 * partition has jobs pending, delayed, running or waiting, before
 * anything is written); then each partition's removal (its script
 * refuses on its own, without force, a job come since); then, once all
 * of them went, the partition record, last, so that a removal stopped
 * part-way leaves the queue listed (fleet_client_scan_names() finds it
 * by its record) and can be made again. A partition with no keys (no
 * job ever placed there) answers FLEET_ENOTFOUND: nothing to remove. */
enum { QP_RM_CHECK, QP_RM_PARTS, QP_RM_RECORD };

/* A partition's removal: its keys add up in c->total, its jobs in
 * c->next; c->flag says that something was removed. */
static void qp_removed(fleet_queue_t *sub, int status, uint64_t keys,
                       uint64_t jobs, void *ud) {
  qp_slot_t *s = ud;

  (void)sub;
  if (status == 0) {
    s->c->total += keys;
    s->c->next += jobs;
    s->c->flag = 1;
  }
  qp_part_done(s, status == FLEET_ENOTFOUND ? 0 : status);
}

static void qp_dropped(fleet_queue_t *sub, int status, uint32_t had, void *ud) {
  qp_slot_t *s = ud;

  (void)sub;
  if (status == 0 && had) {
    s->c->total++;
    s->c->flag = 1;
  }
  qp_part_done(s, status);
}

/* Sends the removal's step `phase`: returns 0 when a call went out (the
 * call goes on), else 1 with c->status set (the call ends). */
static int qp_remove_send(qp_call_t *c, int phase) {
  uint32_t p;
  int err;

  c->phase = phase;
  c->sent = 0;
  for (p = 0; p < c->q->nparts; p++) {
    fleet_queue_t *sub = c->q->parts[p];
    qp_slot_t *s = &c->slots[p];
    if (phase == QP_RM_CHECK)
      err = fleet__queue_counts(sub, qp_counts_done, s);
    else if (phase == QP_RM_PARTS)
      err = fleet__queue_remove(sub, c->arg, qp_removed, s);
    else if (p == 0)
      err = fleet__queue_parts_drop(sub, qp_dropped, s);
    else
      continue;
    qp_sent(c, err);
    if (err != 0)
      break; /* the others not sent: what went out ends the call */
  }
  if (c->sent == 0)
    return 1;
  c->waiting = c->sent;
  return 0;
}

/* Every partition answered a step of the removal: the next one, or the
 * end (1). A handle closed between two steps ends the call with
 * FLEET_ECANCELED. */
static int qp_remove_next(qp_call_t *c) {
  const fleet_queue_counts_t *n = &c->counts;
  int end;

  if (c->status != 0)
    return 1;
  switch (c->phase) {
    case QP_RM_CHECK:
      if (n->pending + n->delayed + n->running + n->waiting_children > 0) {
        c->status = FLEET_EBUSY;
        return 1;
      }
      end = qp_remove_send(c, QP_RM_PARTS);
      break;
    case QP_RM_PARTS:
      end = qp_remove_send(c, QP_RM_RECORD);
      break;
    default:
      if (!c->flag)
        c->status = FLEET_ENOTFOUND; /* no partition and no record */
      return 1;
  }
  if (c->status == FLEET_ECLOSING)
    c->status = FLEET_ECANCELED;
  return end;
}

int fleet__qp_remove(fleet_queue_t *pub, int force, fleet_queue_remove_cb cb,
                     void *user_data) {
  struct fleet__queue_s *q;
  qp_call_t *c;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if ((c = qp_new(q, (fleet__fn_t)cb, user_data, 0)) == NULL)
    return FLEET_ENOMEM;
  c->kind = FLEET__QP_REMOVE;
  c->arg = force;
  if (qp_remove_send(c, force ? QP_RM_PARTS : QP_RM_CHECK) != 0) {
    /* Nothing went out: the first partition's refusal. */
    err = c->status;
    qp_free(c);
    return err;
  }
  return 0;
}

/* The user's callback of a call, once every partition answered. */
static void qp_finish(qp_call_t *c) {
  fleet_queue_t *pub = qp_pub(c);
  int st = c->status;
  size_t i, k;

  switch (c->kind) {
    case FLEET__QP_REMOVE:
      ((fleet_queue_remove_cb)c->cb)(pub, st, st ? 0 : c->total,
                                     st ? 0 : c->next, c->ud);
      return;
    case FLEET__QP_COUNTS:
      ((fleet_queue_counts_cb)c->cb)(pub, st, st ? NULL : &c->counts, c->ud);
      return;
    case FLEET__QP_PURGE:
      ((fleet_queue_purge_cb)c->cb)(pub, st, st ? 0 : c->total, c->ud);
      return;
    case FLEET__QP_RECOVER:
      ((fleet_queue_recover_cb)c->cb)(pub, st, st ? NULL : &c->rec, c->ud);
      return;
    case FLEET__QP_RETRY:
      ((fleet_queue_retry_cb)c->cb)(pub, st, st ? 0 : c->total, c->ud);
      return;
    case FLEET__QP_PAUSE:
      ((fleet_queue_paused_cb)c->cb)(pub, st, st ? 0 : c->flag, c->ud);
      return;
    case FLEET__QP_SET_LIMITS:
    case FLEET__QP_HOLD:
    case FLEET__QP_WEIGHT:
      if (c->cb != NULL)
        ((fleet_status_cb)c->cb)((fleet_handle_t *)pub, st, c->ud);
      return;
    case FLEET__QP_LIMITS:
      ((fleet_queue_limits_cb)c->cb)(pub, st, st ? NULL : &c->limits,
                                     st ? NULL : &c->flow, c->ud);
      return;
    case FLEET__QP_LIST:
      ((fleet_queue_list_cb)c->cb)(pub, st, st ? NULL : c->ids,
                                   st ? 0 : c->nsums, st ? 0 : c->total, c->ud);
      return;
    case FLEET__QP_JOBS:
      /* A next page that starts a partition (a cursor below 256) starts
       * the next partition that has jobs of the kind: none left, 0. */
      while (st == 0 && c->next > 0 && c->next < 256 &&
             c->slots[c->next].total == 0)
        c->next = c->next + 1 < c->q->nparts ? c->next + 1 : 0;
      ((fleet_queue_jobs_cb)c->cb)(pub, st, st ? NULL : c->sums,
                                   st ? 0 : c->nsums, st ? 0 : c->total,
                                   st ? 0 : c->next, c->ud);
      return;
    case FLEET__QP_GROUPS:
      /* One group may have jobs in several partitions: its entries are
       * added up, and the first `limit` names are kept. */
      if (st == 0 && c->nsums > 0) {
        qsort(c->groups, c->nsums, sizeof(*c->groups), qp_group_cmp);
        for (i = 1, k = 0; i < c->nsums; i++) {
          fleet_queue_group_t *a = &c->groups[k], *b = &c->groups[i];
          if (strcmp(a->name, b->name) == 0) {
            a->pending += b->pending;
            a->running += b->running;
            a->rate_used += b->rate_used;
            if (b->weight > a->weight)
              a->weight = b->weight;
            if (b->held_until_ms > a->held_until_ms)
              a->held_until_ms = b->held_until_ms;
          } else {
            c->groups[++k] = *b;
          }
        }
        c->nsums = k + 1 < c->limit ? k + 1 : c->limit;
      }
      ((fleet_queue_groups_cb)c->cb)(pub, st, st ? NULL : c->groups,
                                     st ? 0 : c->nsums, st ? 0 : c->total,
                                     c->ud);
      return;
    case FLEET__QP_HISTORY:
      if (st == 0)
        qp_hist_merge(c, c->arg == FLEET_HIST_DAY ? FLEET_HIST_DAYS_MAX
                                                  : FLEET_HIST_MINUTES_MAX);
      ((fleet_queue_history_cb)c->cb)(pub, st, st ? NULL : c->hist,
                                      st ? 0 : c->nsums, c->ud);
      return;
    case FLEET__QP_SAMPLE:
      ((fleet_queue_sample_cb)c->cb)(pub, st, st ? NULL : &c->sample, c->ud);
      return;
    default:
      break;
  }
  if (c->enq != NULL) {
    if (c->cb != NULL)
      ((fleet_queue_enqueue_cb)c->cb)(pub, st, st ? NULL : c->enq,
                                      st ? 0 : c->n, c->ud);
  } else if (c->claims != NULL) {
    if (c->cb != NULL)
      ((fleet_queue_batch_cb)c->cb)(pub, st, st ? NULL : c->results,
                                    st ? 0 : c->n, c->ud);
  } else {
    ((fleet_queue_claim_cb)c->cb)(pub, st, st ? NULL : c->jobs,
                                  st ? 0 : c->njobs, st ? NULL : &c->info,
                                  c->ud);
  }
}

/* ------------------------------------------------------------------------ */
/* Events                                                                   */

static void qp_event(fleet_queue_t *sub, int status,
                     const fleet_queue_event_t *ev, void *ud) {
  struct fleet__queue_s *q = ud;
  char buf[FLEET_JOB_ID_MAX + 8];
  fleet_queue_event_t e;
  uint32_t p = 0;

  for (uint32_t i = 0; i < q->nparts; i++)
    if (q->parts[i] == sub)
      p = i;
  /* The notices that a subscription is live: partition 0's stand for
   * all (each partition's subscription is its own). */
  if (ev == NULL && p != 0)
    return;
  if (ev != NULL) {
    e = *ev;
    if (ev->id_len <= FLEET_JOB_ID_MAX) {
      e.id = qp_out(buf, p, ev->id, ev->id_len);
      e.id_len = strlen(e.id);
    }
    ev = &e;
  }
  q->qp_ev_cb((fleet_queue_t *)q->base.pub, status, ev, q->qp_ev_ud);
}

int fleet__qp_events_start(fleet_queue_t *pub, const char *job_id,
                           fleet_queue_event_cb cb, void *user_data) {
  char buf[FLEET_JOB_ID_MAX + 1];
  struct fleet__queue_s *q;
  const char *plain = NULL;
  uint32_t p, one = UINT32_MAX;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (job_id != NULL) {
    plain = qp_plain(q, job_id, buf, &one);
  }
  q->qp_ev_cb = cb;
  q->qp_ev_ud = user_data;
  for (p = 0; p < q->nparts; p++) {
    if (one != UINT32_MAX && p != one)
      continue;
    if ((err = fleet__queue_events_start(q->parts[p], plain, qp_event, q)) !=
        0) {
      for (uint32_t k = 0; k < p; k++)
        fleet__queue_events_stop(q->parts[k]);
      return err;
    }
  }
  return 0;
}

int fleet__qp_events_stop(fleet_queue_t *pub) {
  struct fleet__queue_s *q;
  int err, any = FLEET_EALREADY;

  if ((q = fleet__queue_enter(pub, 0, &err)) == NULL)
    return err;
  for (uint32_t p = 0; p < q->nparts; p++)
    if (fleet__queue_events_stop(q->parts[p]) == 0)
      any = 0;
  return any;
}
