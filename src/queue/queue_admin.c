/* queue_admin.c -- the queue's administration calls, for tools: a page of
 * the jobs in one state, purging the kept records of finished jobs,
 * retrying dead jobs, pausing and resuming (the ops QUEUE_PURGE and
 * QUEUE_ADMIN_*: queue_purge.lua and queue_admin_*.lua, whose table is in
 * docs/queue.md), each with its descriptor, reply reader and fail hook. */
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"

/* ------------------------------------------------------------------------ */
/* Jobs                                                                     */

/* The fail hook of a fleet_queue_jobs_cb. */
static void admin_jobs_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_jobs_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                 NULL, 0, 0, 0, req->user_data);
}

#define ADMIN_JOB_FIELDS 9

/* {total, next cursor, then 9 per job}: copies the strings into one
 * buffer so that each is NUL-terminated, then runs the callback. */
static void admin_jobs_reply(fleet__req_t *base, int status,
                             const fleet__reply_t *r) {
  fleet_job_summary_t *jobs = NULL;
  uint64_t total, next, v;
  size_t n, i, k, bytes = 0;
  char *buf = NULL, *p;
  const fleet__reply_t *e;
  int err = 0;

  if (fleet__call_failed(base, status))
    return;
  if (r->type != FLEET__REPLY_ARRAY || r->nelem < 2 ||
      (r->nelem - 2) % ADMIN_JOB_FIELDS != 0 ||
      fleet__reply_u64(&r->elem[0], &total) != 0 ||
      fleet__reply_u64_str(&r->elem[1], &next) != 0) {
    fleet__call_finish(base, FLEET_EPROTO);
    return;
  }
  n = (r->nelem - 2) / ADMIN_JOB_FIELDS;
  for (i = 0; i < n && err == 0; i++) {
    e = &r->elem[2 + i * ADMIN_JOB_FIELDS];
    for (k = 0; k < ADMIN_JOB_FIELDS; k++) {
      if (k == 0 || k == 1 || k == 6 || k == 7 || k == 8) {
        if (e[k].type != FLEET__REPLY_STR)
          err = FLEET_EPROTO;
        else
          bytes += e[k].len + 1;
      } else if (fleet__reply_u64(&e[k], &v) != 0) {
        err = FLEET_EPROTO;
      }
    }
  }
  if (err == 0 && n > 0) {
    jobs = calloc(n, sizeof(*jobs));
    buf = malloc(bytes);
    if (jobs == NULL || buf == NULL)
      err = FLEET_ENOMEM;
  }
  if (err != 0) {
    free(jobs);
    free(buf);
    fleet__call_finish(base, err);
    return;
  }
  p = buf;
  for (i = 0; i < n; i++) {
    const char **strs[5];
    size_t idx[5] = {0, 1, 6, 7, 8};

    e = &r->elem[2 + i * ADMIN_JOB_FIELDS];
    strs[0] = &jobs[i].id;
    strs[1] = &jobs[i].type;
    strs[2] = (const char **)&jobs[i].payload.base;
    strs[3] = &jobs[i].last_error;
    strs[4] = &jobs[i].group;
    for (k = 0; k < 5; k++) {
      memcpy(p, e[idx[k]].str, e[idx[k]].len);
      p[e[idx[k]].len] = '\0';
      *strs[k] = p;
      p += e[idx[k]].len + 1;
    }
    if (e[8].len == 0)
      jobs[i].group = NULL;
    jobs[i].payload.len = e[6].len;
    jobs[i].last_error_len = e[7].len;
    fleet__reply_u64(&e[2], &v);
    jobs[i].attempts = (uint32_t)v;
    fleet__reply_u64(&e[3], &v);
    jobs[i].max_attempts = (uint32_t)v;
    fleet__reply_u64(&e[4], &jobs[i].created_ms);
    fleet__reply_u64(&e[5], &jobs[i].time_ms);
  }
  fleet__req_done(base);
  ((fleet_queue_jobs_cb)base->cb)((fleet_queue_t *)base->handle->pub, 0, jobs,
                                  n, total, next, base->user_data);
  free(jobs);
  free(buf);
}

static const fleet__call_t admin_jobs_call = {
    "queue.jobs", FLEET__OP_QUEUE_ADMIN_JOBS, admin_jobs_reply,
    admin_jobs_cb_fail};

/* A page of jobs in `state`, of `group` only (pending; NULL: all). */
static int admin_jobs(fleet_queue_t *pub, fleet_job_state_t state,
                      const char *group, uint64_t cursor, size_t limit,
                      size_t payload_max, fleet_queue_jobs_cb cb,
                      void *user_data) {
  struct fleet__queue_s *q;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (limit == 0 || limit > FLEET_QUEUE_BATCH_MAX || (int)state < 0 ||
      state > FLEET_JOB_WAITING_CHILDREN)
    return FLEET_EINVAL;
  if (group != NULL &&
      (err = fleet__str_check(group, FLEET_JOB_GROUP_MAX, NULL)) != 0)
    return err;
  if (payload_max > FLEET_JOB_PAYLOAD_MAX)
    payload_max = FLEET_JOB_PAYLOAD_MAX;
  if (fleet__args_begin(&q->args, 5, 3) != 0)
    return FLEET_ENOMEM;
  fleet__args_str(&q->args, fleet_job_state_name(state));
  fleet__args_u64(&q->args, cursor);
  fleet__args_u64(&q->args, limit);
  fleet__args_u64(&q->args, payload_max);
  if (group != NULL)
    fleet__args_str(&q->args, group);
  return fleet__queue_call(q, &admin_jobs_call, (fleet__fn_t)cb, user_data);
}

int fleet__queue_jobs(fleet_queue_t *pub, fleet_job_state_t state,
                      uint64_t cursor, size_t limit, size_t payload_max,
                      fleet_queue_jobs_cb cb, void *user_data) {
  return admin_jobs(pub, state, NULL, cursor, limit, payload_max, cb,
                    user_data);
}

int fleet__queue_group_jobs(fleet_queue_t *pub, const char *group,
                            uint64_t cursor, size_t limit, size_t payload_max,
                            fleet_queue_jobs_cb cb, void *user_data) {
  if (group == NULL)
    return FLEET_EINVAL;
  return admin_jobs(pub, FLEET_JOB_PENDING, group, cursor, limit, payload_max,
                    cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Purge and retry: calls of rounds                                         */

/* Records a purge removes, or dead jobs a retry puts back, per round
 * trip, at most. */
#define ADMIN_ROUND_LIMIT 1000

/* The fail hook of a purge or a retry, which tells how many records it
 * handled before the error. fleet_queue_purge_cb and fleet_queue_retry_cb
 * are the same function type. */
static void admin_count_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_purge_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                  ((fleet__qreq_t *)req)->total,
                                  req->user_data);
}

/* Sends one round of `req`: its string argument, then the limit. Returns
 * 0 or an error, `req` unchanged. */
static int admin_round_send(struct fleet__queue_s *q, fleet__qreq_t *req) {
  if (fleet__args_begin(&q->args, 2, 1) != 0)
    return FLEET_ENOMEM;
  fleet__args_str(&q->args, req->round_arg);
  fleet__args_u64(&q->args, ADMIN_ROUND_LIMIT);
  return fleet__queue_send_next(q, req);
}

/* {handled, left}: a call of rounds goes on while records are left and
 * each round handles a full batch, so that it ends even if other
 * processes keep finishing or failing jobs. */
static void admin_rounds_reply(fleet__req_t *base, int status,
                               const fleet__reply_t *r) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)base->handle;
  fleet__qreq_t *req = (fleet__qreq_t *)base;
  uint64_t done, left;

  if (fleet__call_failed(base, status) ||
      fleet__call_failed(base, fleet__queue_read_pair(r, &done, &left)))
    return;
  req->total += done;
  if (req->rounds && left > 0 && done == ADMIN_ROUND_LIMIT) {
    if ((status = admin_round_send(q, req)) != 0)
      fleet__call_finish(base, status);
    return;
  }
  done = req->total;
  fleet__req_done(base);
  ((fleet_queue_purge_cb)base->cb)((fleet_queue_t *)q->base.pub, 0, done,
                                   base->user_data);
}

static const fleet__call_t admin_purge_call = {
    "queue.purge", FLEET__OP_QUEUE_PURGE, admin_rounds_reply,
    admin_count_cb_fail};
static const fleet__call_t admin_retry_call = {
    "queue.retry", FLEET__OP_QUEUE_ADMIN_RETRY, admin_rounds_reply,
    admin_count_cb_fail};

/* Sends the first round of `call` with the string `arg` (kept for the
 * later rounds when `rounds` is set). */
static int admin_rounds_call(struct fleet__queue_s *q,
                             const fleet__call_t *call, const char *arg,
                             int rounds, fleet__fn_t cb, void *user_data) {
  fleet__qreq_t *req = fleet__queue_new(q, call, cb, user_data);
  int err;

  if (req == NULL)
    return FLEET_ENOMEM;
  req->round_arg = arg;
  req->rounds = rounds;
  if ((err = admin_round_send(q, req)) != 0)
    fleet__req_free(&req->base);
  return err;
}

int fleet__queue_purge(fleet_queue_t *pub, fleet_job_state_t which,
                       fleet_queue_purge_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (which != FLEET_JOB_COMPLETED && which != FLEET_JOB_DEAD)
    return FLEET_EINVAL;
  return admin_rounds_call(q, &admin_purge_call, fleet_job_state_name(which), 1,
                           (fleet__fn_t)cb, user_data);
}

/* A retry of one job (`id`) is one round; a retry of all (NULL) sends
 * "" for as many rounds as it takes. */
int fleet__queue_retry(fleet_queue_t *pub, const char *id,
                       fleet_queue_retry_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (id != NULL && (err = fleet__str_check(id, FLEET_JOB_ID_MAX, NULL)) != 0)
    return err;
  return admin_rounds_call(q, &admin_retry_call, id != NULL ? id : "",
                           id == NULL, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Pause                                                                    */

/* The fail hook of a fleet_queue_paused_cb. */
static void admin_paused_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_paused_cb)req->cb)((fleet_queue_t *)req->handle->pub, status, 0,
                                   req->user_data);
}

/* {paused, changed}. */
static void admin_pause_reply(fleet__req_t *base, int status,
                              const fleet__reply_t *r) {
  uint64_t paused, changed;

  if (fleet__call_failed(base, status))
    return;
  if (fleet__queue_read_pair(r, &paused, &changed) != 0 || paused > 1) {
    fleet__call_finish(base, FLEET_EPROTO);
    return;
  }
  fleet__req_done(base);
  ((fleet_queue_paused_cb)base->cb)((fleet_queue_t *)base->handle->pub, 0,
                                    (int)paused, base->user_data);
}

static const fleet__call_t admin_pause_call = {
    "queue.pause", FLEET__OP_QUEUE_ADMIN_PAUSE, admin_pause_reply,
    admin_paused_cb_fail};

/* Sends QUEUE_ADMIN_PAUSE with `action`: pause, resume or status. */
static int admin_pause(fleet_queue_t *q, const char *action,
                       fleet_queue_paused_cb cb, void *user_data) {
  return fleet__queue_call_args(q, &admin_pause_call, (fleet__fn_t)cb,
                                user_data, action, NULL, 0);
}

int fleet__queue_pause(fleet_queue_t *q, fleet_queue_paused_cb cb,
                       void *user_data) {
  return admin_pause(q, "pause", cb, user_data);
}

int fleet__queue_resume(fleet_queue_t *q, fleet_queue_paused_cb cb,
                        void *user_data) {
  return admin_pause(q, "resume", cb, user_data);
}

int fleet__queue_paused(fleet_queue_t *q, fleet_queue_paused_cb cb,
                        void *user_data) {
  return admin_pause(q, "status", cb, user_data);
}
