/* queue_claim.c -- the claim side of the queue: claim, refresh (the
 * heartbeat), complete, release, fail and recover, each with its
 * descriptor, reply reader and fail hook, and the checks of their input
 * and of their replies; the worker's complete-and-claim round trip, which
 * reads its reply with the readers of both; deliveries, read as claims. */
#include <stdio.h>
#include <string.h>

#include "queue_int.h"

/* Claims a recovery moves per round trip, at most. */
#define QUEUE_RECOVER_LIMIT 1000

/* Checks a batch of claims: n in range, each id valid. Returns 0,
 * FLEET_EINVAL or FLEET_E2BIG (an id too long). */
static int queue_claims_ok(const fleet_claim_t *claims, size_t n) {
  size_t i;
  int err;

  if (claims == NULL || n == 0 || n > FLEET_QUEUE_BATCH_MAX)
    return FLEET_EINVAL;
  for (i = 0; i < n; i++) {
    if ((err = fleet__str_check(claims[i].id, FLEET_JOB_ID_MAX, NULL)) != 0)
      return err;
    if (claims[i].token == 0)
      return FLEET_EINVAL;
  }
  return 0;
}

/* Checks the results of a completion (NULL: none) and makes room in
 * `q->rbuf` for the token arguments that carry them (queue_claims_args).
 * Returns 0, FLEET_EINVAL, FLEET_E2BIG or FLEET_ENOMEM. */
static int queue_results_ok(struct fleet__queue_s *q,
                            const fleet_bytes_t *results, size_t n) {
  size_t i, bytes = 0;

  for (i = 0; results != NULL && i < n; i++) {
    if (results[i].base == NULL && results[i].len > 0)
      return FLEET_EINVAL;
    if (results[i].len > FLEET_JOB_RESULT_MAX)
      return FLEET_E2BIG;
    if (results[i].base != NULL)
      bytes += 2 * 22 + results[i].len;
  }
  if (bytes > 0 && fleet__grow((void **)&q->rbuf, &q->rbuf_cap, bytes, 1) != 0)
    return FLEET_ENOMEM;
  return 0;
}

/* Builds the claims of a batch op: id, token per claim. A claim with a
 * result (`results` not NULL, its base not NULL) sends as its token
 * "<token>\0<ttl_ms>\0<result>" (lib/queue_life.lua: res_split), built in
 * the room queue_results_ok() made; the others cost nothing more. */
static void queue_claims_args(struct fleet__queue_s *q,
                              const fleet_claim_t *claims,
                              const fleet_bytes_t *results, size_t n) {
  uint64_t ttl_ms = (uint64_t)q->opts.keep_result_s * 1000;
  char *p = q->rbuf, *start;

  for (size_t i = 0; i < n; i++) {
    fleet__args_str(&q->args, claims[i].id);
    if (results == NULL || results[i].base == NULL) {
      fleet__args_u64(&q->args, claims[i].token);
      continue;
    }
    start = p;
    p += fleet__queue_dec(p, claims[i].token) + 1;
    p += fleet__queue_dec(p, ttl_ms) + 1;
    if (results[i].len > 0)
      memcpy(p, results[i].base, results[i].len);
    p += results[i].len;
    fleet__args_bytes(&q->args, start, (size_t)(p - start));
  }
}

/* The result code of the batch ops (1, 2, 0, -1; 3 and 4, the claim
 * ended as its job's cancel or run deadline said: lib/queue_stop.lua) as a
 * fleet status, or FLEET_EPROTO for anything else. */
static int queue_batch_code(long long v) {
  switch (v) {
    case 1:
      return 0;
    case 2:
      return FLEET_EALREADY;
    case 0:
      return FLEET_ESTALE;
    case -1:
      return FLEET_ENOTFOUND;
    case 3:
      return FLEET_ECANCELED;
    case 4:
      return FLEET_ETIMEDOUT;
    default:
      return FLEET_EPROTO;
  }
}

/* ------------------------------------------------------------------------ */
/* Claim                                                                    */

/* Reads a decimal field of a job record, [p, end): `dflt` when empty.
 * Returns 0 or FLEET_EPROTO. */
static int queue_rec_u32(const char *p, const char *end, uint32_t dflt,
                         uint32_t *out) {
  uint64_t v = 0;

  if (p == end) {
    *out = dflt;
    return 0;
  }
  for (; p < end; p++) {
    if (*p < '0' || *p > '9' || v > UINT32_MAX)
      return FLEET_EPROTO;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  if (v > UINT32_MAX)
    return FLEET_EPROTO;
  *out = (uint32_t)v;
  return 0;
}

/* Reads one claimed job (id, record, and with `stride` 3 the group element,
 * from `e`; its fencing token is `token`) into `job`, its strings not yet
 * copied (the group's too, in `group`): the record is
 * "<attempts>\0<max_attempts>\0 <created_ms>\0<type>\0<payload>"
 * (docs/queue.md), split here so that the script returns it as it is. The
 * created field of a job with headers goes on with "\t<headers>", their
 * stored form, which job->headers and headers_len are left pointing at.
 * Returns 0 or FLEET_EPROTO. */
static int queue_read_job(const fleet__reply_t *e, size_t stride,
                          uint64_t token, fleet_job_t *job, fleet_bytes_t *id,
                          fleet_bytes_t *type, fleet_bytes_t *group) {
  const char *sep[4], *p, *end;
  fleet_bytes_t rec;
  uint32_t attempts;
  int i;

  group->base = NULL;
  group->len = 0;
  job->token = token;
  if (fleet__reply_bytes(&e[0], id) != 0 || id->len == 0 ||
      fleet__reply_bytes(&e[1], &rec) != 0 ||
      (stride == 3 && fleet__reply_bytes(&e[2], group) != 0))
    return FLEET_EPROTO;
  /* A job with a run deadline has it after a NUL in the group element
   * (lib/queue_stop.lua). */
  p = group->len > 0 ? memchr(group->base, '\0', group->len) : NULL;
  job->run_deadline_ms = 0;
  if (p != NULL) {
    end = (const char *)group->base + group->len;
    if (end - p < 2 || end - p > 20)
      return FLEET_EPROTO;
    for (i = 1; p + i < end; i++) {
      if (p[i] < '0' || p[i] > '9')
        return FLEET_EPROTO;
      job->run_deadline_ms = job->run_deadline_ms * 10 + (uint64_t)(p[i] - '0');
    }
    group->len = (size_t)(p - (const char *)group->base);
  }
  if (group->len > FLEET_JOB_GROUP_MAX)
    return FLEET_EPROTO;
  p = rec.base;
  end = p + rec.len;
  for (i = 0; i < 4; i++) {
    sep[i] = p < end ? memchr(p, '\0', (size_t)(end - p)) : NULL;
    if (sep[i] == NULL)
      return FLEET_EPROTO;
    p = sep[i] + 1;
  }
  if (queue_rec_u32(rec.base, sep[0], 0, &attempts) != 0 ||
      attempts == UINT32_MAX ||
      queue_rec_u32(sep[0] + 1, sep[1], 3, &job->max_attempts) != 0 ||
      sep[3] == sep[2] + 1)
    return FLEET_EPROTO;
  job->attempts = attempts + 1;
  /* The enqueue time (the metrics' wait), before the headers if any: an
   * unreadable one is 0. */
  job->created_ms = 0;
  for (p = sep[1] + 1;
       p < sep[2] && *p >= '0' && *p <= '9' && job->created_ms < (1ULL << 50);
       p++)
    job->created_ms = job->created_ms * 10 + (uint64_t)(*p - '0');
  if (p != sep[2] && *p != '\t')
    job->created_ms = 0;
  p = memchr(sep[1] + 1, '\t', (size_t)(sep[2] - (sep[1] + 1)));
  if (p != NULL) {
    job->headers = p + 1;
    job->headers_len = (size_t)(sep[2] - (p + 1));
  }
  type->base = sep[2] + 1;
  type->len = (size_t)(sep[3] - (sep[2] + 1));
  job->payload.base = sep[3] + 1;
  job->payload.len = (size_t)(end - (sep[3] + 1));
  return 0;
}

/* Whether the entry `e` of a claim or recovery reply is a job moved
 * aside, {id, reason, 0}. */
static int queue_is_moved(const fleet__reply_t *e) {
  return e[2].type == FLEET__REPLY_INT && e[2].integer == 0;
}

/* Reports each job a claim or a recovery moved aside (docs/queue.md,
 * "Jobs fleet cannot read"), the entries {id, reason, 0} of `r` from
 * element `from` on, through the queue's error callback: FLEET_EPROTO with
 * the detail "job <id> moved to dead: <reason>". Runs after the user
 * callback of the call; stops when the queue closes. */
static void queue_report_moved(struct fleet__queue_s *q,
                               const fleet__reply_t *r, size_t from) {
  const size_t stride = 3;
  fleet__backend_t *be = fleet__handle_backend(&q->base);
  char text[FLEET__DETAIL_MAX];
  fleet_bytes_t id, why;
  size_t i;
  int len;

  for (i = from; i + stride <= r->nelem && !q->base.closing; i += stride) {
    const fleet__reply_t *e = &r->elem[i];
    if (!queue_is_moved(e) || fleet__reply_bytes(&e[0], &id) != 0 ||
        fleet__reply_bytes(&e[1], &why) != 0)
      continue;
    len = snprintf(text, sizeof(text), "job %.*s moved to dead: %.*s",
                   (int)(id.len > 128 ? 128 : id.len), (const char *)id.base,
                   (int)why.len, (const char *)why.base);
    if (len < 0)
      continue;
    fleet__backend_set_detail_bytes(
        be, text, (size_t)len < sizeof(text) ? (size_t)len : sizeof(text) - 1);
    fleet__handle_error(&q->base, FLEET_EPROTO);
  }
}

/* Takes the next group of a claim reply's runs, "<n>\0<group>" per run
 * joined by NULs, at `*p` (before `end`): `*left` counts the jobs left of
 * the run in `g`. Returns 0 or FLEET_EPROTO. */
static int queue_run_next(const char **p, const char *end, uint64_t *left,
                          fleet_bytes_t *g) {
  const char *s = *p, *z;
  uint64_t v = 0;

  while (*left == 0) {
    if (s >= end)
      return FLEET_EPROTO;
    for (v = 0; s < end && *s != '\0'; s++) {
      if (*s < '0' || *s > '9' || v > FLEET_QUEUE_BATCH_MAX)
        return FLEET_EPROTO;
      v = v * 10 + (uint64_t)(*s - '0');
    }
    if (s == end || v == 0)
      return FLEET_EPROTO;
    s++;
    z = memchr(s, '\0', (size_t)(end - s));
    g->base = s;
    g->len = (size_t)((z != NULL ? z : end) - s);
    s = z != NULL ? z + 1 : end;
    *left = v;
  }
  (*left)--;
  *p = s;
  return 0;
}

/* Reads a claim reply, {now_ms, deadline_ms, next_run_at_ms, pending_left,
 * retry_at (0, -1 or a time), token0, count, stride (2 or 3), runs, then
 * per job claimed (count of them, at most `max`) its id, record, and with
 * stride 3 its group element, its token being token0 + its rank from 1
 * (with stride 2, runs gives the groups: "<n>\0<group>" per run of n jobs
 * in order, joined by NULs; '': none), then id, reason, 0 per job moved
 * aside (only when `moved` is set: a delivery has none)}
 * (adapters/scripts/lua/queue_claim.lua), into `info` and `q->jobs`
 * (`*n` of them, their strings copied); `*tail` (when not NULL) gets the
 * index of the first entry moved aside. Returns 0, FLEET_EPROTO or
 * FLEET_ENOMEM. */
static int queue_claim_read(struct fleet__queue_s *q, const fleet__reply_t *r,
                            size_t max, int moved, fleet_claim_info_t *info,
                            size_t *n, size_t *tail) {
  fleet_bytes_t id, type, group, runs, rg = {NULL, 0};
  uint64_t token0, count, stride, left = 0;
  const char *rp;
  size_t i, end, bytes = 0;
  int rc = 0;

  if (!fleet__reply_is_array(r, 9) ||
      fleet__reply_u64(&r->elem[0], &info->now_ms) != 0 ||
      fleet__reply_u64(&r->elem[1], &info->deadline_ms) != 0 ||
      r->elem[2].type != FLEET__REPLY_INT || r->elem[2].integer < -1 ||
      fleet__reply_u64(&r->elem[3], &info->pending) != 0 ||
      r->elem[4].type != FLEET__REPLY_INT || r->elem[4].integer < -1 ||
      fleet__reply_u64(&r->elem[5], &token0) != 0 ||
      fleet__reply_u64(&r->elem[6], &count) != 0 ||
      fleet__reply_u64(&r->elem[7], &stride) != 0 ||
      fleet__reply_bytes(&r->elem[8], &runs) != 0 ||
      (stride != 2 && stride != 3) || count > max ||
      (stride == 3 && runs.len > 0) || token0 > UINT64_MAX - count ||
      count * stride > r->nelem - 9)
    return FLEET_EPROTO;
  end = 9 + (size_t)(count * stride);
  rp = runs.base;
  if (moved ? (r->nelem - end) % 3 != 0 : r->nelem != end)
    return FLEET_EPROTO;
  if (tail != NULL)
    *tail = end;
  info->next_run_at_ms =
      r->elem[2].integer < 0 ? 0 : (uint64_t)r->elem[2].integer;
  info->retry_at_ms = r->elem[4].integer < 0 ? FLEET_CLAIM_WAIT_SLOT
                                             : (uint64_t)r->elem[4].integer;
  if (fleet__grow((void **)&q->jobs, &q->jobs_cap, (size_t)count + 1,
                  sizeof(*q->jobs)) != 0)
    return FLEET_ENOMEM;
  *n = 0;
  for (i = 0; rc == 0 && i < count; i++) {
    const fleet__reply_t *e = &r->elem[9 + stride * i];
    fleet_job_t *job = &q->jobs[*n];
    memset(job, 0, sizeof(*job));
    rc = queue_read_job(e, (size_t)stride, token0 + i + 1, job, &id, &type,
                        &group);
    if (rc == 0 && runs.len > 0) {
      rc = queue_run_next(&rp, (const char *)runs.base + runs.len, &left, &rg);
      group = rg;
      if (group.len > FLEET_JOB_GROUP_MAX)
        rc = FLEET_EPROTO;
    }
    /* In the reply until copied below. */
    job->id = id.base;
    job->id_len = id.len;
    job->type = type.base;
    job->type_len = type.len;
    job->group = group.len > 0 ? group.base : NULL;
    job->group_len = group.len;
    bytes += id.len + type.len + group.len + 5 + 2 * job->headers_len;
    (*n)++;
  }
  /* Every run is for the jobs claimed. */
  if (rc == 0 && runs.len > 0 &&
      (left != 0 || rp != (const char *)runs.base + runs.len))
    rc = FLEET_EPROTO;
  q->strs_len = 0;
  if (rc == 0 && fleet__queue_strs_reserve(q, bytes) != 0)
    rc = FLEET_ENOMEM;
  if (rc != 0)
    return rc;
  for (i = 0; i < *n; i++) {
    fleet_job_t *job = &q->jobs[i];
    id.base = job->id;
    id.len = job->id_len;
    type.base = job->type;
    type.len = job->type_len;
    job->id = fleet__queue_strs_add(q, id);
    job->type = fleet__queue_strs_add(q, type);
    if (job->group != NULL) {
      group.base = job->group;
      group.len = job->group_len;
      job->group = fleet__queue_strs_add(q, group);
    }
    if (job->headers_len > 0) {
      /* Unpacked (queue_headers.c) into the strings. */
      char *to = q->strs + q->strs_len;
      job->headers_len =
          fleet__queue_headers_unpack(job->headers, job->headers_len, to);
      job->headers = job->headers_len > 0 ? to : NULL;
      q->strs_len += job->headers_len;
    }
    job->deadline_ms = info->deadline_ms;
  }
  return 0;
}

/* The fail hook of a fleet_queue_claim_cb. */
static void queue_claim_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_claim_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                  NULL, 0, NULL, req->user_data);
}

static void queue_claim_reply(fleet__req_t *base, int status,
                              const fleet__reply_t *r) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)base->handle;
  size_t max = ((fleet__qreq_t *)base)->max_jobs, n, tail = 0;
  fleet_claim_info_t info;

  if (fleet__call_failed(base, status) ||
      fleet__call_failed(base,
                         queue_claim_read(q, r, max, 1, &info, &n, &tail)))
    return;
  fleet__req_done(base);
  ((fleet_queue_claim_cb)base->cb)((fleet_queue_t *)q->base.pub, 0,
                                   n > 0 ? q->jobs : NULL, n, &info,
                                   base->user_data);
  queue_report_moved(q, r, tail);
}

static const fleet__call_t queue_claim_call = {
    "queue.claim", FLEET__OP_QUEUE_CLAIM, queue_claim_reply,
    queue_claim_cb_fail};

/* Sends a claim, or a complete-and-claim (`call`) of the `n` claims: the
 * one entry of both, with the checks of both. */
static int queue_claim_send(fleet_queue_t *pub, const fleet__call_t *call,
                            const fleet_claim_t *claims,
                            const fleet_bytes_t *results, size_t n,
                            size_t max_jobs, uint32_t claim_ttl_ms,
                            fleet__fn_t cb, void *user_data) {
  int completes = call->op == FLEET__OP_QUEUE_COMPLETE_CLAIM;
  struct fleet__queue_s *q;
  fleet__qreq_t *req;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (max_jobs > FLEET_QUEUE_BATCH_MAX || claim_ttl_ms == 0)
    return FLEET_EINVAL;
  if (completes && ((err = queue_claims_ok(claims, n)) != 0 ||
                    (err = queue_results_ok(q, results, n)) != 0))
    return err;
  if (fleet__args_begin(&q->args, 6 + 2 * n, 6 + n) != 0 ||
      (req = fleet__queue_new(q, call, cb, user_data)) == NULL)
    return FLEET_ENOMEM;
  fleet__args_u64(&q->args, max_jobs);
  fleet__args_u64(&q->args, claim_ttl_ms);
  if (completes) {
    fleet__args_u64(&q->args, q->opts.keep_completed);
    fleet__args_u64(&q->args, q->opts.keep_completed_s);
  }
  /* A claim names its parked worker only if it has one. */
  if (completes || q->park_len > 0) {
    fleet__args_bytes(&q->args, q->park_id, q->park_len);
    fleet__args_u64(&q->args, q->park_ttl_ms);
  }
  queue_claims_args(q, claims, results, n);
  req->n = n;
  req->max_jobs = max_jobs;
  return fleet__queue_send(q, req);
}

int fleet__queue_claim(fleet_queue_t *pub, size_t max_jobs,
                       uint32_t claim_ttl_ms, fleet_queue_claim_cb cb,
                       void *user_data) {
  return queue_claim_send(pub, &queue_claim_call, NULL, NULL, 0, max_jobs,
                          claim_ttl_ms, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Refresh, complete, release                                               */

/* Reads the reply of a batch op into `q->results`: refresh (`head` 2):
 * {now_ms, deadline_ms, then 1 or 0 per claim}; release (`head` 1):
 * {now_ms, then a result code per claim}; complete (`head` 1): {now_ms,
 * the codes as a string, a character per claim: '1', '2', '0', '-', '3',
 * '4' for 1, 2, 0, -1, 3, 4}. Returns 0, FLEET_EPROTO or FLEET_ENOMEM. */
static int queue_batch_read(struct fleet__queue_s *q, const fleet__reply_t *r,
                            size_t head, size_t n) {
  size_t i;
  int code;

  if (r->type != FLEET__REPLY_ARRAY)
    return FLEET_EPROTO;
  if (fleet__grow((void **)&q->results, &q->results_cap, n,
                  sizeof(*q->results)) != 0)
    return FLEET_ENOMEM;
  /* A completion's codes come as one string, a character per claim
   * (queue_complete.lua). */
  if (head == 1 && r->nelem == 2 && r->elem[1].type == FLEET__REPLY_STR) {
    if (r->elem[1].len != n)
      return FLEET_EPROTO;
    for (i = 0; i < n; i++) {
      char c = r->elem[1].str[i];
      code = c == '-'               ? queue_batch_code(-1)
             : c >= '0' && c <= '9' ? queue_batch_code(c - '0')
                                    : FLEET_EPROTO;
      if (code == FLEET_EPROTO)
        return FLEET_EPROTO;
      q->results[i] = code;
    }
    return 0;
  }
  if (r->nelem != head + n)
    return FLEET_EPROTO;
  for (i = 0; i < n; i++) {
    const fleet__reply_t *e = &r->elem[head + i];
    code = e->type == FLEET__REPLY_INT ? queue_batch_code(e->integer)
                                       : FLEET_EPROTO;
    /* A refresh answers 1, 0, or 2: held, its job cancelled. */
    if (head == 2 && code == FLEET_EALREADY)
      code = FLEET_ECANCELED;
    else if (code == FLEET_EPROTO ||
             (head == 2 && e->integer != 0 && e->integer != 1))
      return FLEET_EPROTO;
    q->results[i] = code;
  }
  return 0;
}

/* The fail hook of a fleet_queue_batch_cb. */
static void queue_batch_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_batch_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                  NULL, 0, req->user_data);
}

/* Reads the reply of a batch op whose head is `head` numbers long. */
static void queue_batch_reply(fleet__req_t *base, int status,
                              const fleet__reply_t *r, size_t head) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)base->handle;
  fleet_queue_batch_cb cb = (fleet_queue_batch_cb)base->cb;
  void *ud = base->user_data;
  size_t n = ((fleet__qreq_t *)base)->n;

  if (fleet__call_failed(base, status) ||
      fleet__call_failed(base, queue_batch_read(q, r, head, n)))
    return;
  fleet__req_done(base);
  cb((fleet_queue_t *)q->base.pub, 0, q->results, n, ud);
}

static void queue_refresh_reply(fleet__req_t *base, int status,
                                const fleet__reply_t *r) {
  queue_batch_reply(base, status, r, 2);
}

static void queue_finish_reply(fleet__req_t *base, int status,
                               const fleet__reply_t *r) {
  queue_batch_reply(base, status, r, 1);
}

static const fleet__call_t queue_refresh_call = {
    "queue.refresh", FLEET__OP_QUEUE_REFRESH, queue_refresh_reply,
    queue_batch_cb_fail};
static const fleet__call_t queue_complete_call = {
    "queue.complete", FLEET__OP_QUEUE_COMPLETE, queue_finish_reply,
    queue_batch_cb_fail};
static const fleet__call_t queue_release_call = {
    "queue.release", FLEET__OP_QUEUE_RELEASE, queue_finish_reply,
    queue_batch_cb_fail};

/* Sends a batch call: `head` numbers first, then id, token per claim
 * (with the results of a completion, NULL for none). */
static int queue_batch_call(struct fleet__queue_s *q, const fleet__call_t *call,
                            const fleet_claim_t *claims,
                            const fleet_bytes_t *results, size_t n,
                            const uint64_t *head, size_t nhead,
                            fleet_queue_batch_cb cb, void *user_data) {
  fleet__qreq_t *req;
  size_t i;
  int err;

  if ((err = queue_claims_ok(claims, n)) != 0 ||
      (err = queue_results_ok(q, results, n)) != 0)
    return err;
  if (fleet__args_begin(&q->args, nhead + 2 * n, nhead + n) != 0 ||
      (req = fleet__queue_new(q, call, (fleet__fn_t)cb, user_data)) == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < nhead; i++)
    fleet__args_u64(&q->args, head[i]);
  queue_claims_args(q, claims, results, n);
  req->n = n;
  return fleet__queue_send(q, req);
}

int fleet__queue_refresh(fleet_queue_t *pub, const fleet_claim_t *claims,
                         size_t n, uint32_t claim_ttl_ms,
                         fleet_queue_batch_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  uint64_t ttl = claim_ttl_ms;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (claim_ttl_ms == 0)
    return FLEET_EINVAL;
  return queue_batch_call(q, &queue_refresh_call, claims, NULL, n, &ttl, 1, cb,
                          user_data);
}

int fleet__queue_complete(fleet_queue_t *pub, const fleet_claim_t *claims,
                          size_t n, fleet_queue_batch_cb cb, void *user_data) {
  return fleet__queue_complete_results(pub, claims, NULL, n, cb, user_data);
}

int fleet__queue_complete_results(fleet_queue_t *pub,
                                  const fleet_claim_t *claims,
                                  const fleet_bytes_t *results, size_t n,
                                  fleet_queue_batch_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  uint64_t head[2];
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  head[0] = q->opts.keep_completed;
  head[1] = q->opts.keep_completed_s;
  return queue_batch_call(q, &queue_complete_call, claims, results, n, head, 2,
                          cb, user_data);
}

int fleet__queue_release(fleet_queue_t *pub, const fleet_claim_t *claims,
                         size_t n, fleet_queue_batch_cb cb, void *user_data) {
  return fleet__queue_release_hold(pub, claims, n, 0, 0, cb, user_data);
}

int fleet__queue_release_hold(fleet_queue_t *pub, const fleet_claim_t *claims,
                              size_t n, uint32_t hold_ms, int group,
                              fleet_queue_batch_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  uint64_t head[2];
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  head[0] = hold_ms;
  head[1] = group != 0;
  return queue_batch_call(q, &queue_release_call, claims, NULL, n, head, 2, cb,
                          user_data);
}

/* ------------------------------------------------------------------------ */
/* Complete and claim in one call                                           */

static void queue_complete_claim_fail(fleet__req_t *req, int status) {
  ((fleet__queue_complete_claim_cb)req->cb)((fleet_queue_t *)req->handle->pub,
                                            status, NULL, 0, NULL, 0, NULL,
                                            req->user_data);
}

/* {claim reply, complete reply}. */
static void queue_complete_claim_reply(fleet__req_t *base, int status,
                                       const fleet__reply_t *r) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)base->handle;
  fleet__qreq_t *req = (fleet__qreq_t *)base;
  fleet_claim_info_t info;
  size_t njobs = 0, tail = 0;
  int rc = FLEET_EPROTO;

  if (fleet__call_failed(base, status))
    return;
  if (r->type == FLEET__REPLY_ARRAY && r->nelem == 2) {
    rc = queue_claim_read(q, &r->elem[0], req->max_jobs, 1, &info, &njobs,
                          &tail);
    if (rc == 0)
      rc = queue_batch_read(q, &r->elem[1], 1, req->n);
  }
  if (fleet__call_failed(base, rc))
    return;
  fleet__req_done(base);
  ((fleet__queue_complete_claim_cb)base->cb)(
      (fleet_queue_t *)q->base.pub, 0, q->results, req->n,
      njobs > 0 ? q->jobs : NULL, njobs, &info, base->user_data);
  queue_report_moved(q, &r->elem[0], tail);
}

static const fleet__call_t queue_complete_claim_call = {
    "queue.complete_claim", FLEET__OP_QUEUE_COMPLETE_CLAIM,
    queue_complete_claim_reply, queue_complete_claim_fail};

int fleet__queue_complete_claim(fleet_queue_t *pub, const fleet_claim_t *claims,
                                const fleet_bytes_t *results, size_t n,
                                size_t max_jobs, uint32_t claim_ttl_ms,
                                fleet__queue_complete_claim_cb cb,
                                void *user_data) {
  return queue_claim_send(pub, &queue_complete_claim_call, claims, results, n,
                          max_jobs, claim_ttl_ms, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Fail                                                                     */

/* The fail hook of a fleet_queue_fail_cb. */
static void queue_fail_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_fail_cb)req->cb)((fleet_queue_t *)req->handle->pub, status, 0,
                                 0, req->user_data);
}

/* {1, run_at_ms} or {0, 0}. */
static void queue_fail_reply(fleet__req_t *base, int status,
                             const fleet__reply_t *r) {
  fleet_queue_t *pub = (fleet_queue_t *)base->handle->pub;
  uint64_t retry, at;

  if (fleet__call_failed(base, status))
    return;
  if (fleet__queue_read_pair(r, &retry, &at) != 0 || retry > 1) {
    fleet__call_finish(base, FLEET_EPROTO);
    return;
  }
  fleet__req_done(base);
  ((fleet_queue_fail_cb)base->cb)(pub, 0, retry == 0, at, base->user_data);
}

static const fleet__call_t queue_fail_call = {
    "queue.fail", FLEET__OP_QUEUE_FAIL, queue_fail_reply, queue_fail_cb_fail};

int fleet__queue_fail(fleet_queue_t *pub, const fleet_claim_t *claim,
                      const void *error, size_t error_len,
                      fleet_queue_fail_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (error == NULL && error_len > 0)
    return FLEET_EINVAL;
  if ((err = queue_claims_ok(claim, 1)) != 0)
    return err;
  if (error_len > FLEET_JOB_ERROR_MAX)
    return FLEET_E2BIG;
  if (fleet__args_begin(&q->args, 6, 4) != 0)
    return FLEET_ENOMEM;
  queue_claims_args(q, claim, NULL, 1);
  fleet__args_bytes(&q->args, error_len > 0 ? error : "", error_len);
  fleet__args_u64(&q->args, fleet__rng_next(&q->rng));
  fleet__args_u64(&q->args, q->opts.keep_dead);
  fleet__args_u64(&q->args, q->opts.keep_dead_s);
  return fleet__queue_call(q, &queue_fail_call, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Progress                                                                 */

static const fleet__call_t queue_progress_call = {
    "queue.progress", FLEET__OP_QUEUE_PROGRESS, fleet__queue_status_reply,
    fleet__call_fail_status};

int fleet__queue_progress(fleet_queue_t *pub, const fleet_claim_t *claim,
                          uint32_t pct, const void *data, size_t len,
                          fleet_status_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (pct > 100 || (data == NULL && len > 0))
    return FLEET_EINVAL;
  if ((err = queue_claims_ok(claim, 1)) != 0)
    return err;
  if (len > FLEET_JOB_PROGRESS_MAX)
    return FLEET_E2BIG;
  if (fleet__args_begin(&q->args, 5, 3) != 0)
    return FLEET_ENOMEM;
  queue_claims_args(q, claim, NULL, 1);
  fleet__args_u64(&q->args, pct);
  fleet__args_bytes(&q->args, len > 0 ? data : "", len);
  fleet__args_u64(&q->args, (uint64_t)q->opts.keep_result_s * 1000);
  return fleet__queue_call(q, &queue_progress_call, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Recover                                                                  */

/* The fail hook of a fleet_queue_recover_cb. */
static void queue_recover_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_recover_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                    NULL, req->user_data);
}

/* {now_ms, requeued, dead, next_deadline_ms, then id, reason, 0 per job
 * moved aside}. */
static void queue_recover_reply(fleet__req_t *base, int status,
                                const fleet__reply_t *r) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)base->handle;
  fleet_recover_info_t info;

  if (fleet__call_failed(base, status))
    return;
  if (!fleet__reply_is_array(r, 4) || (r->nelem - 4) % 3 != 0 ||
      fleet__reply_u64(&r->elem[0], &info.now_ms) != 0 ||
      fleet__reply_u64(&r->elem[1], &info.requeued) != 0 ||
      fleet__reply_u64(&r->elem[2], &info.dead) != 0 ||
      r->elem[3].type != FLEET__REPLY_INT || r->elem[3].integer < -1) {
    fleet__call_finish(base, FLEET_EPROTO);
    return;
  }
  info.next_deadline_ms =
      r->elem[3].integer < 0 ? 0 : (uint64_t)r->elem[3].integer;
  fleet__req_done(base);
  ((fleet_queue_recover_cb)base->cb)((fleet_queue_t *)q->base.pub, 0, &info,
                                     base->user_data);
  queue_report_moved(q, r, 4);
}

static const fleet__call_t queue_recover_call = {
    "queue.recover", FLEET__OP_QUEUE_RECOVER, queue_recover_reply,
    queue_recover_cb_fail};

int fleet__queue_recover(fleet_queue_t *pub, fleet_queue_recover_cb cb,
                         void *user_data) {
  struct fleet__queue_s *q;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (fleet__args_begin(&q->args, 3, 3) != 0)
    return FLEET_ENOMEM;
  fleet__args_u64(&q->args, QUEUE_RECOVER_LIMIT);
  fleet__args_u64(&q->args, q->opts.keep_dead);
  fleet__args_u64(&q->args, q->opts.keep_dead_s);
  return fleet__queue_call(q, &queue_recover_call, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Deliveries                                                               */

/* Reads a decimal number of a delivery at `*p` up to its NUL, which it
 * skips. Returns 0 or FLEET_EPROTO. */
static int queue_delivery_num(const char **p, const char *end, uint64_t *out) {
  const char *s = *p;
  uint64_t v = 0;

  if (s == end || *s == '\0')
    return FLEET_EPROTO;
  for (; s < end && *s != '\0'; s++) {
    unsigned d = (unsigned)(*s - '0');
    if (d > 9 || v > (UINT64_MAX - d) / 10)
      return FLEET_EPROTO;
    v = v * 10 + d;
  }
  if (s == end)
    return FLEET_EPROTO;
  *p = s + 1;
  *out = v;
  return 0;
}

/* Reads a length-prefixed string of a delivery, "<len>\0<bytes>", into
 * the reply element `e`. Returns 0 or FLEET_EPROTO. */
static int queue_delivery_str(const char **p, const char *end,
                              fleet__reply_t *e) {
  uint64_t len;

  if (queue_delivery_num(p, end, &len) != 0 || len > (uint64_t)(end - *p))
    return FLEET_EPROTO;
  e->type = FLEET__REPLY_STR;
  e->str = *p;
  e->len = (size_t)len;
  *p += len;
  return 0;
}

int fleet__queue_delivery_read(fleet_queue_t *pub, const char *msg, size_t len,
                               fleet_claim_info_t *info, fleet_job_t **jobs,
                               size_t *n) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)pub->internal_;
  const char *p = msg, *end = msg + len;
  fleet__reply_t *e, top;
  size_t nelem = 9;
  uint64_t v = 0, token0 = 0;
  int rc = 0;

  /* The message as the reply of a claim: {now, deadline, -1, 0, 0, token0,
   * count, 2, '', then id, record per job (a delivered job has no group)},
   * in the queue's reused `dl` array; the claim's reader checks and copies
   * it. A delivery's tokens are consecutive (lib/queue_add.lua). */
  memset(&top, 0, sizeof(top));
  if (fleet__grow((void **)&q->dl, &q->dl_cap, 9 + 4 * 2, sizeof(*q->dl)) != 0)
    return FLEET_ENOMEM;
  e = q->dl;
  memset(e, 0, 9 * sizeof(*e));
  for (int i = 0; i < 8; i++)
    e[i].type = FLEET__REPLY_INT;
  e[8].type = FLEET__REPLY_STR;
  e[8].str = "";
  if (queue_delivery_num(&p, end, &v) != 0 || v > INT64_MAX)
    rc = FLEET_EPROTO;
  e[0].integer = (int64_t)v;
  if (rc == 0 && (queue_delivery_num(&p, end, &v) != 0 || v > INT64_MAX))
    rc = FLEET_EPROTO;
  e[1].integer = (int64_t)v;
  e[2].integer = -1;
  e[7].integer = 2;
  while (rc == 0 && p < end) {
    size_t k = (nelem - 9) / 2; /* the jobs read */
    if (k >= FLEET_QUEUE_BATCH_MAX ||
        fleet__grow((void **)&q->dl, &q->dl_cap, nelem + 2, sizeof(*e)) != 0) {
      rc = k >= FLEET_QUEUE_BATCH_MAX ? FLEET_EPROTO : FLEET_ENOMEM;
      break;
    }
    e = q->dl;
    memset(&e[nelem], 0, 2 * sizeof(*e));
    if (queue_delivery_str(&p, end, &e[nelem]) != 0 ||
        queue_delivery_str(&p, end, &e[nelem + 1]) != 0 ||
        queue_delivery_num(&p, end, &v) != 0 || v == 0 || v > INT64_MAX ||
        (k > 0 && v != token0 + k + 1)) {
      rc = FLEET_EPROTO;
      break;
    }
    if (k == 0)
      token0 = v - 1;
    nelem += 2;
  }
  if (rc == 0 && nelem == 9)
    rc = FLEET_EPROTO; /* a delivery has jobs */
  if (rc == 0) {
    e[5].integer = (int64_t)token0;
    e[6].integer = (int64_t)((nelem - 9) / 2);
    top.type = FLEET__REPLY_ARRAY;
    top.nelem = nelem;
    top.elem = e;
    rc = queue_claim_read(q, &top, FLEET_QUEUE_BATCH_MAX, 0, info, n, NULL);
  }
  if (rc == 0)
    *jobs = q->jobs;
  return rc;
}
