/* queue_parts_api.c -- the public calls of a queue handle (docs/queue.md,
 * "Partitioned queues"): each goes to the plain queue's call
 * (fleet__queue_*) for a handle of one partition, or to the fan-out of
 * queue_parts.c for a partitioned one; and the partition count's record,
 * fleet_queue_open() and the making of a partitioned handle's children. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"

/* ------------------------------------------------------------------------ */
/* Setting up, the partition record, opening                               */

static void qp_part_closed(fleet_handle_t *h) {
  free(h);
}

static int qp_setup(struct fleet__queue_s *q, uint32_t n,
                    const fleet_queue_options_t *given) {
  fleet_client_t *client = fleet_handle_client(q->base.pub);
  fleet_queue_options_t o;
  size_t len = strlen(q->name);
  fleet_queue_t **parts;
  char *name;
  uint32_t p;
  int err = 0;

  if (n < 2 || n > FLEET_QUEUE_PARTITIONS_MAX)
    return FLEET_EINVAL;
  if (len + 5 > FLEET__NAME_MAX)
    return FLEET_E2BIG;
  if (given != NULL)
    o = *given;
  else
    memset(&o, 0, sizeof(o));
  o.partitions = 1;
  parts = calloc(n, sizeof(*parts));
  name = malloc(len + 6);
  if (parts == NULL || name == NULL) {
    free(parts);
    free(name);
    return FLEET_ENOMEM;
  }
  for (p = 0; p < n && err == 0; p++) {
    memcpy(name, q->name, len);
    if (p == 0)
      name[len] = '\0';
    else
      snprintf(name + len, 6, "~%u", (unsigned)p);
    if ((parts[p] = malloc(sizeof(*parts[p]))) == NULL)
      err = FLEET_ENOMEM;
    else if ((err = fleet__queue_init(client, parts[p], name, &o)) != 0) {
      free(parts[p]);
      parts[p] = NULL;
    }
  }
  free(name);
  if (err != 0) {
    for (p = 0; p < n; p++)
      if (parts[p] != NULL)
        fleet_queue_close(parts[p], qp_part_closed);
    free(parts);
    return err;
  }
  for (p = 0; p < n; p++)
    fleet__handle_adopt(&q->base, parts[p]->internal_);
  q->parts = parts;
  q->nparts = n;
  /* Round-robin starts anywhere: producers that enqueue a job or two and
   * exit (the CLI, scripts) would else all fill partition 0. */
  q->qp_rr = (uint32_t)(uv_hrtime() / 1000);
  return 0;
}

/* The partition count's call. */
static void qp_count_fail(fleet__req_t *req, int status) {
  ((fleet_queue_partitions_cb)req->cb)((fleet_queue_t *)req->handle->pub,
                                       status, 0, req->user_data);
}

static void qp_count_reply(fleet__req_t *base, int status,
                           const fleet__reply_t *r) {
  if (fleet__call_failed(base, status))
    return;
  if (r->type != FLEET__REPLY_INT || r->integer < 1 ||
      r->integer > FLEET_QUEUE_PARTITIONS_MAX) {
    fleet__call_finish(base, FLEET_EPROTO);
    return;
  }
  fleet__req_done(base);
  ((fleet_queue_partitions_cb)base->cb)((fleet_queue_t *)base->handle->pub, 0,
                                        (uint32_t)r->integer, base->user_data);
}

static const fleet__call_t qp_count_call = {"queue.partitions",
                                            FLEET__OP_QUEUE_PARTITIONS,
                                            qp_count_reply, qp_count_fail};

int fleet_queue_partitions(fleet_queue_t *pub, uint32_t partitions,
                           fleet_queue_partitions_cb cb, void *user_data) {
  uint64_t n = partitions;

  if (cb == NULL || partitions > FLEET_QUEUE_PARTITIONS_MAX)
    return FLEET_EINVAL;
  return fleet__queue_call_args(pub, &qp_count_call, (fleet__fn_t)cb, user_data,
                                NULL, &n, 1);
}

/* fleet_queue_open()'s read of the count. */
static void qp_opened(fleet_queue_t *pub, int status, uint32_t n, void *ud) {
  struct fleet__queue_s *q =
      (struct fleet__queue_s *)fleet__handle_of(pub, FLEET_HANDLE_QUEUE);
  fleet_queue_partitions_cb cb = q->qp_open_cb;

  (void)ud;
  if (status == 0 && q->given.partitions >= 2 && q->given.partitions != n)
    status = FLEET_ECONFLICT;
  if (status == 0 && n >= 2)
    status = fleet__handle_usable(&q->base) != 0 ? FLEET_ECANCELED
                                                 : qp_setup(q, n, &q->given);
  cb(pub, status, status == 0 ? n : 0, q->qp_open_ud);
}

int fleet_queue_open(fleet_client_t *client, fleet_queue_t *pub,
                     const char *name, const fleet_queue_options_t *options,
                     fleet_queue_partitions_cb cb, void *user_data) {
  fleet_queue_options_t o;
  struct fleet__queue_s *q;
  int err;

  if (cb == NULL || pub == NULL)
    return FLEET_EINVAL;
  if (options != NULL)
    o = *options;
  else
    fleet_queue_options_init(&o);
  if (o.partitions > FLEET_QUEUE_PARTITIONS_MAX)
    return FLEET_EINVAL;
  o.partitions = 0;
  if ((err = fleet_queue_init(client, pub, name, &o)) != 0)
    return err;
  q = (struct fleet__queue_s *)pub->internal_;
  q->given.partitions = options != NULL ? options->partitions : 0;
  q->qp_open_cb = cb;
  q->qp_open_ud = user_data;
  if ((err = fleet_queue_partitions(pub, 0, qp_opened, NULL)) != 0) {
    fleet__queue_abort(pub);
    return err;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The public calls                                                         */

int fleet_queue_init(fleet_client_t *client, fleet_queue_t *pub,
                     const char *name, const fleet_queue_options_t *options) {
  uint32_t n = options != NULL ? options->partitions : 0;
  int err;

  if (n > FLEET_QUEUE_PARTITIONS_MAX) {
    if (pub != NULL)
      pub->internal_ = NULL;
    return FLEET_EINVAL;
  }
  if ((err = fleet__queue_init(client, pub, name, options)) != 0 || n < 2)
    return err;
  if ((err = qp_setup((struct fleet__queue_s *)pub->internal_, n, options)) !=
      0)
    fleet__queue_abort(pub);
  return err;
}

int fleet_queue_enqueue(fleet_queue_t *q, const fleet_job_spec_t *specs,
                        size_t n, fleet_queue_enqueue_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_enqueue(q, specs, n, cb, user_data);
  return fleet__qp_enqueue(q, specs, n, cb, user_data);
}

int fleet_queue_get(fleet_queue_t *q, const char *id, fleet_queue_get_cb cb,
                    void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_get(q, id, cb, user_data);
  return fleet__qp_one(q, FLEET__QP_GET, id, NULL, NULL, 0, 0, (fleet__fn_t)cb,
                       user_data);
}

int fleet_queue_cancel(fleet_queue_t *q, const char *id, fleet_status_cb cb,
                       void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_cancel(q, id, cb, user_data);
  return fleet__qp_one(q, FLEET__QP_CANCEL, id, NULL, NULL, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_cancel_job(fleet_queue_t *q, const char *id, uint32_t grace_ms,
                           fleet_queue_cancel_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_cancel_job(q, id, grace_ms, cb, user_data);
  return fleet__qp_one(q, FLEET__QP_CANCEL_JOB, id, NULL, NULL, 0, grace_ms,
                       (fleet__fn_t)cb, user_data);
}

/* On a partitioned queue the verb goes to the job's partition
 * (queue_parts.c), whose answer reaches `cb` with this handle. */
static int job_verb(fleet_queue_t *q, int what, const char *id,
                    fleet_queue_job_verb_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_job_verb(q, what, id, cb, user_data);
  return fleet__qp_one(q, what, id, NULL, NULL, 0, 0, (fleet__fn_t)cb,
                       user_data);
}

int fleet_queue_delete_job(fleet_queue_t *q, const char *id,
                           fleet_queue_job_verb_cb cb, void *user_data) {
  return job_verb(q, FLEET__QP_JOB_DELETE, id, cb, user_data);
}

int fleet_queue_run_job(fleet_queue_t *q, const char *id,
                        fleet_queue_job_verb_cb cb, void *user_data) {
  return job_verb(q, FLEET__QP_JOB_RUN, id, cb, user_data);
}

int fleet_queue_kill_job(fleet_queue_t *q, const char *id,
                         fleet_queue_job_verb_cb cb, void *user_data) {
  return job_verb(q, FLEET__QP_JOB_KILL, id, cb, user_data);
}

int fleet_queue_remove(fleet_queue_t *q, int force, fleet_queue_remove_cb cb,
                       void *user_data) {
  if (force != 0 && force != 1)
    return FLEET_EINVAL;
  if (!fleet__qp_is(q))
    return fleet__queue_remove(q, force, cb, user_data);
  return fleet__qp_remove(q, force, cb, user_data);
}

int fleet_queue_counts(fleet_queue_t *q, fleet_queue_counts_cb cb,
                       void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_counts(q, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_COUNTS, 0, NULL, NULL, 0, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

/* A partitioned queue's history is its partitions' added up, minute by
 * minute (queue_parts.c); its sample is each partition's own. */
int fleet_queue_history(fleet_queue_t *q, fleet_hist_res_t res, int64_t from_ms,
                        int64_t to_ms, fleet_queue_history_cb cb,
                        void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_history(q, res, from_ms, to_ms, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_HISTORY, (int)res, NULL, NULL,
                       (uint64_t)from_ms, (uint64_t)to_ms, 0, (fleet__fn_t)cb,
                       user_data);
}

int fleet_queue_sample(fleet_queue_t *q, uint64_t depth,
                       fleet_queue_sample_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_sample(q, depth, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_SAMPLE, 0, NULL, NULL, depth, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_list(fleet_queue_t *q, const char *type, size_t limit,
                     fleet_queue_list_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_list(q, type, limit, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_LIST, 0, NULL, type, 0, 0, limit,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_purge(fleet_queue_t *q, fleet_job_state_t which,
                      fleet_queue_purge_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_purge(q, which, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_PURGE, (int)which, NULL, NULL, 0, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_claim(fleet_queue_t *q, size_t max_jobs, uint32_t claim_ttl_ms,
                      fleet_queue_claim_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_claim(q, max_jobs, claim_ttl_ms, cb, user_data);
  return fleet__qp_claim(q, max_jobs, claim_ttl_ms, cb, user_data);
}

int fleet_queue_refresh(fleet_queue_t *q, const fleet_claim_t *claims, size_t n,
                        uint32_t claim_ttl_ms, fleet_queue_batch_cb cb,
                        void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_refresh(q, claims, n, claim_ttl_ms, cb, user_data);
  return fleet__qp_claims(q, 2, claims, NULL, n, claim_ttl_ms, cb, user_data);
}

int fleet_queue_complete(fleet_queue_t *q, const fleet_claim_t *claims,
                         size_t n, fleet_queue_batch_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_complete(q, claims, n, cb, user_data);
  return fleet__qp_claims(q, 0, claims, NULL, n, 0, cb, user_data);
}

int fleet_queue_complete_results(fleet_queue_t *q, const fleet_claim_t *claims,
                                 const fleet_bytes_t *results, size_t n,
                                 fleet_queue_batch_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_complete_results(q, claims, results, n, cb, user_data);
  return fleet__qp_claims(q, 1, claims, results, n, 0, cb, user_data);
}

int fleet_queue_release(fleet_queue_t *q, const fleet_claim_t *claims, size_t n,
                        fleet_queue_batch_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_release(q, claims, n, cb, user_data);
  return fleet__qp_claims(q, 3, claims, NULL, n, 0, cb, user_data);
}

int fleet_queue_progress(fleet_queue_t *q, const fleet_claim_t *claim,
                         uint32_t pct, const void *data, size_t len,
                         fleet_status_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_progress(q, claim, pct, data, len, cb, user_data);
  return fleet__qp_one(q, FLEET__QP_PROGRESS, NULL, claim, data, len, pct,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_fail(fleet_queue_t *q, const fleet_claim_t *claim,
                     const void *error, size_t error_len,
                     fleet_queue_fail_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_fail(q, claim, error, error_len, cb, user_data);
  return fleet__qp_one(q, FLEET__QP_FAIL, NULL, claim, error, error_len, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_recover(fleet_queue_t *q, fleet_queue_recover_cb cb,
                        void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_recover(q, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_RECOVER, 0, NULL, NULL, 0, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_jobs(fleet_queue_t *q, fleet_job_state_t state, uint64_t cursor,
                     size_t limit, size_t payload_max, fleet_queue_jobs_cb cb,
                     void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_jobs(q, state, cursor, limit, payload_max, cb,
                             user_data);
  return fleet__qp_all(q, FLEET__QP_JOBS, (int)state, NULL, NULL, cursor,
                       payload_max, limit, (fleet__fn_t)cb, user_data);
}

int fleet_queue_group_jobs(fleet_queue_t *q, const char *group, uint64_t cursor,
                           size_t limit, size_t payload_max,
                           fleet_queue_jobs_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_group_jobs(q, group, cursor, limit, payload_max, cb,
                                   user_data);
  return fleet__qp_all(q, FLEET__QP_JOBS, 0, NULL, group, cursor, payload_max,
                       limit, (fleet__fn_t)cb, user_data);
}

int fleet_queue_retry(fleet_queue_t *q, const char *id, fleet_queue_retry_cb cb,
                      void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_retry(q, id, cb, user_data);
  return id != NULL ? fleet__qp_one(q, FLEET__QP_RETRY, id, NULL, NULL, 0, 0,
                                    (fleet__fn_t)cb, user_data)
                    : fleet__qp_all(q, FLEET__QP_RETRY, 0, NULL, NULL, 0, 0, 0,
                                    (fleet__fn_t)cb, user_data);
}

int fleet_queue_pause(fleet_queue_t *q, fleet_queue_paused_cb cb,
                      void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_pause(q, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_PAUSE, 0, NULL, NULL, 0, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_resume(fleet_queue_t *q, fleet_queue_paused_cb cb,
                       void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_resume(q, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_PAUSE, 1, NULL, NULL, 0, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_paused(fleet_queue_t *q, fleet_queue_paused_cb cb,
                       void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_paused(q, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_PAUSE, 2, NULL, NULL, 0, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_set_limits(fleet_queue_t *q, const fleet_queue_limits_t *limits,
                           fleet_status_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_set_limits(q, limits, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_SET_LIMITS, 0, limits, NULL, 0, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_limits(fleet_queue_t *q, fleet_queue_limits_cb cb,
                       void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_limits(q, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_LIMITS, 0, NULL, NULL, 0, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_hold(fleet_queue_t *q, const char *group, uint32_t wait_ms,
                     fleet_status_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_hold(q, group, wait_ms, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_HOLD, 0, NULL, group, wait_ms, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_set_group_weight(fleet_queue_t *q, const char *group,
                                 uint32_t weight, fleet_status_cb cb,
                                 void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_set_group_weight(q, group, weight, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_WEIGHT, 0, NULL, group, weight, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_groups(fleet_queue_t *q, const char *after, size_t limit,
                       fleet_queue_groups_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_groups(q, after, limit, cb, user_data);
  return fleet__qp_all(q, FLEET__QP_GROUPS, 0, NULL, after, 0, 0, limit,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_add_flow(fleet_queue_t *q, const fleet_flow_spec_t *flow,
                         fleet_queue_flow_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_add_flow(q, flow, cb, user_data);
  return FLEET_EINVAL /* a flow does not span partitions */;
}

int fleet_queue_children(fleet_queue_t *q, const char *id,
                         fleet_queue_children_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_children(q, id, cb, user_data);
  return fleet__qp_one(q, FLEET__QP_CHILDREN, id, NULL, NULL, 0, 0,
                       (fleet__fn_t)cb, user_data);
}

int fleet_queue_events_start(fleet_queue_t *q, const char *job_id,
                             fleet_queue_event_cb cb, void *user_data) {
  if (!fleet__qp_is(q))
    return fleet__queue_events_start(q, job_id, cb, user_data);
  return fleet__qp_events_start(q, job_id, cb, user_data);
}

int fleet_queue_events_stop(fleet_queue_t *q) {
  if (!fleet__qp_is(q))
    return fleet__queue_events_stop(q);
  return fleet__qp_events_stop(q);
}
