/* queue_verbs.c -- one job's verbs for tools, and removing a queue:
 * fleet__queue_job_verb(), behind fleet_queue_delete_job(),
 * fleet_queue_run_job() and fleet_queue_kill_job() of queue_parts_api.c
 * (the ops QUEUE_JOB_DELETE, QUEUE_JOB_RUN and QUEUE_JOB_KILL, whose
 * scripts share lib/queue_verbs.lua), fleet__queue_remove(), behind
 * fleet_queue_remove() of one partition (QUEUE_REMOVE), and
 * fleet__queue_parts_drop(), the deletion of a partitioned queue's count
 * record once its partitions went (QUEUE_PARTITIONS, mode "drop"), each
 * with its descriptor, reply reader and fail hook. The scripts' table is in
 * docs/queue.md. */
#include "queue_int.h"

/* ------------------------------------------------------------------------ */
/* Delete, run, kill                                                        */

/* The fail hook of a fleet_queue_job_verb_cb. */
static void verb_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_job_verb_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                     FLEET_JOB_PENDING, req->user_data);
}

/* The reply: the state the job was in, by name. */
static void verb_reply(fleet__req_t *base, int status,
                       const fleet__reply_t *r) {
  fleet_job_state_t was;
  fleet_bytes_t b;

  if (fleet__call_failed(base, status) ||
      fleet__call_failed(base, fleet__reply_bytes(r, &b) != 0 ||
                                       fleet__queue_parse_state(b, &was) != 0
                                   ? FLEET_EPROTO
                                   : 0))
    return;
  fleet__req_done(base);
  ((fleet_queue_job_verb_cb)base->cb)((fleet_queue_t *)base->handle->pub, 0,
                                      was, base->user_data);
}

static const fleet__call_t verb_delete_call = {
    "queue.delete_job", FLEET__OP_QUEUE_JOB_DELETE, verb_reply, verb_cb_fail};
static const fleet__call_t verb_run_call = {
    "queue.run_job", FLEET__OP_QUEUE_JOB_RUN, verb_reply, verb_cb_fail};
static const fleet__call_t verb_kill_call = {
    "queue.kill_job", FLEET__OP_QUEUE_JOB_KILL, verb_reply, verb_cb_fail};

int fleet__queue_job_verb(fleet_queue_t *q, int what, const char *id,
                          fleet_queue_job_verb_cb cb, void *user_data) {
  const fleet__call_t *call = what == FLEET__QP_JOB_DELETE ? &verb_delete_call
                              : what == FLEET__QP_JOB_RUN  ? &verb_run_call
                                                           : &verb_kill_call;

  return fleet__queue_id_call(q, id, call, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Remove                                                                   */

/* The fail hook of a fleet_queue_remove_cb. */
static void remove_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_remove_cb)req->cb)((fleet_queue_t *)req->handle->pub, status, 0,
                                   0, req->user_data);
}

/* {keys deleted, jobs}. */
static void remove_reply(fleet__req_t *base, int status,
                         const fleet__reply_t *r) {
  uint64_t keys, jobs;

  if (fleet__call_failed(base, status) ||
      fleet__call_failed(base, fleet__queue_read_pair(r, &keys, &jobs)))
    return;
  fleet__req_done(base);
  ((fleet_queue_remove_cb)base->cb)((fleet_queue_t *)base->handle->pub, 0, keys,
                                    jobs, base->user_data);
}

static const fleet__call_t remove_call = {
    "queue.remove", FLEET__OP_QUEUE_REMOVE, remove_reply, remove_cb_fail};

int fleet__queue_remove(fleet_queue_t *q, int force, fleet_queue_remove_cb cb,
                        void *user_data) {
  if (force != 0 && force != 1)
    return FLEET_EINVAL;
  return fleet__queue_call_args(q, &remove_call, (fleet__fn_t)cb, user_data,
                                force ? "1" : "0", NULL, 0);
}

/* The fail hook of a fleet_queue_partitions_cb. */
static void remove_drop_fail(fleet__req_t *req, int status) {
  ((fleet_queue_partitions_cb)req->cb)((fleet_queue_t *)req->handle->pub,
                                       status, 0, req->user_data);
}

/* The record's deletion (the script's mode "drop"): the callback gets
 * 1 when a record was deleted, else 0. */
static void remove_drop_reply(fleet__req_t *base, int status,
                              const fleet__reply_t *r) {
  if (fleet__call_failed(base, status))
    return;
  if (r->type != FLEET__REPLY_INT || r->integer < 0 || r->integer > 1) {
    fleet__call_finish(base, FLEET_EPROTO);
    return;
  }
  fleet__req_done(base);
  ((fleet_queue_partitions_cb)base->cb)((fleet_queue_t *)base->handle->pub, 0,
                                        (uint32_t)r->integer, base->user_data);
}

static const fleet__call_t remove_drop_call = {
    "queue.partitions_drop", FLEET__OP_QUEUE_PARTITIONS, remove_drop_reply,
    remove_drop_fail};

int fleet__queue_parts_drop(fleet_queue_t *pub, fleet_queue_partitions_cb cb,
                            void *user_data) {
  return fleet__queue_call_args(pub, &remove_drop_call, (fleet__fn_t)cb,
                                user_data, "drop", NULL, 0);
}
