/* worker_jobs.c -- the worker's jobs: claims and the handler, finishing
 * (complete, fail, release) in batches, settling with the done callback,
 * heartbeats (through the client's batcher), local lease deadlines and
 * handing claims back. The slots and batches they use are pooled in
 * worker_slots.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"
#include "worker_int.h"
#include "core/log.h"

/* ------------------------------------------------------------------------ */
/* Held jobs and settling                                                   */

static void held_add(struct fleet__worker_s *w, fleet__wjob_t *job) {
  fleet__list_insert_head(&w->held, &job->node);
  w->held_count++;
}

static void held_remove(struct fleet__worker_s *w, fleet__wjob_t *job) {
  fleet__list_remove(&job->node);
  w->held_count--;
}

static void sendq_push(struct fleet__worker_s *w, fleet__wjob_t *job) {
  job->queued = 1;
  fleet__list_insert_tail(&w->sendq, &job->qnode);
}

static void settleq_push(struct fleet__worker_s *w, fleet__wjob_t *job,
                         int status) {
  job->local_status = status;
  fleet__list_insert_tail(&w->settleq, &job->qnode);
}

/* ------------------------------------------------------------------------ */
/* Hooks (fleet_worker_options_t.before and .after)                         */

static const char *const job_outcome_names[] = {
#define XX(name, str) str,
    FLEET_JOB_OUTCOME_MAP(XX)
#undef XX
};

const char *fleet_job_outcome_name(fleet_job_outcome_t outcome) {
  return FLEET__NAME_AT(job_outcome_names, outcome);
}

/* What the settling of `job` with `status` means for the after hook. A
 * finish the backend took ends as the action said, but a fail of a job
 * asked to stop, which the backend ends as the stop said; a cancelled
 * job's complete or release is answered FLEET_ECANCELED, as is a claim
 * handed back (then lost); anything else changed nothing. */
static fleet_job_outcome_t wjob_outcome(const fleet__wjob_t *job, int status) {
  if (status == 0 || status == FLEET_EALREADY) {
    if (job->action == FLEET_JOB_COMPLETE)
      return FLEET_JOB_OUTCOME_COMPLETED;
    if (job->action == FLEET_JOB_RELEASE)
      return FLEET_JOB_OUTCOME_RELEASED;
    if (job->cancel == FLEET_JOB_CANCEL_REQUESTED)
      return FLEET_JOB_OUTCOME_CANCELLED;
    if (job->cancel == FLEET_JOB_CANCEL_TIMEOUT)
      return FLEET_JOB_OUTCOME_TIMED_OUT;
    return FLEET_JOB_OUTCOME_FAILED;
  }
  if (status == FLEET_ETIMEDOUT)
    return FLEET_JOB_OUTCOME_TIMED_OUT;
  if (status == FLEET_ECANCELED && job->cancel == FLEET_JOB_CANCEL_REQUESTED &&
      job->claim != FLEET__WJOB_HANDED)
    return FLEET_JOB_OUTCOME_CANCELLED;
  return FLEET_JOB_OUTCOME_LOST;
}

/* Gives `job` to the handler, after the before hook when there is one. */
static void wjob_run(struct fleet__worker_s *w, fleet__wjob_t *job) {
  if (w->o.before != NULL || w->o.after != NULL) {
    job->hooked = 1;
    if (w->o.before != NULL)
      w->o.before(fleet__worker_pub(w), &job->pub, w->o.hook_arg);
    job->started_ns = job->finished_ns = uv_hrtime();
  }
  w->handler(fleet__worker_pub(w), &job->pub);
}

/* The job's finish has its answer: tell the user, free the slot. */
static void wjob_settle(struct fleet__worker_s *w, fleet__wjob_t *job,
                        int status) {
  held_remove(w, job);
  job->sending = job->queued = 0;
  /* A completion sent again whose first send landed finds the job gone
   * when no history is kept (docs/queue.md): accepted, as
   * FLEET_EALREADY says when it is. */
  if (status == FLEET_ENOTFOUND && job->resent &&
      job->action == FLEET_JOB_COMPLETE)
    status = FLEET_EALREADY;
  if (!job->internal) {
    if (status == 0 || status == FLEET_EALREADY) {
      if (job->action == FLEET_JOB_COMPLETE) {
        w->stats.completed++;
        fleet__metrics_add_type(w->base.metrics, FLEET_METRIC_JOBS_COMPLETED,
                                job->pub.type, job->pub.type_len, 1);
        fleet__metrics_observe(w->base.metrics, FLEET_METRIC_JOB_LATENCY,
                               (uv_hrtime() - job->claimed_ns) / 1000);
      } else if (job->action == FLEET_JOB_FAIL) {
        w->stats.failed++;
        fleet__metrics_add_type(w->base.metrics, FLEET_METRIC_JOBS_FAILED,
                                job->pub.type, job->pub.type_len, 1);
      } else
        w->stats.released++;
    }
    if (job->hooked) {
      job->hooked = 0;
      if (w->o.after != NULL)
        w->o.after(fleet__worker_pub(w), &job->pub, wjob_outcome(job, status),
                   status, job->finished_ns - job->started_ns, w->o.hook_arg);
    }
    if (w->o.done_cb != NULL)
      w->o.done_cb(fleet__worker_pub(w), &job->pub, job->action, status);
  }
  fleet__wjob_put(w, job);
}

void fleet__worker_settle_local(struct fleet__worker_s *w) {
  fleet__wjob_t *job;

  fleet__list_t *n;

  while ((n = fleet__list_first(&w->settleq)) != NULL) {
    fleet__list_remove(n);
    job = FLEET__LIST_DATA(n, fleet__wjob_t, qnode);
    wjob_settle(w, job, job->local_status);
  }
}

/* Tells the handler that `job`'s claim is lost, once. */
static void wjob_lost(struct fleet__worker_s *w, fleet__wjob_t *job,
                      int status) {
  if (!job->with_handler || job->lost_told)
    return;
  job->lost_told = 1;
  w->stats.lost++;
  fleet__metrics_add_type(w->base.metrics, FLEET_METRIC_JOBS_LOST,
                          job->pub.type, job->pub.type_len, 1);
  fleet__log(w->base.client, FLEET_LOG_WARN,
             "queue %.*s: claim of job %s lost: %s",
             (int)w->base.mblock.name_len, w->base.mblock.name, job->pub.id,
             fleet_strerror(status));
  if (w->o.lost_cb != NULL)
    w->o.lost_cb(fleet__worker_pub(w), &job->pub, status);
}

/* Tells the handler of `job` that it is asked to stop, once. */
static void wjob_stop(fleet__wjob_t *job, fleet_job_cancel_t why) {
  if (!job->with_handler || job->cancel != FLEET_JOB_CANCEL_NONE)
    return;
  job->cancel = why;
  if (job->cancel_cb != NULL)
    job->cancel_cb(&job->pub, why, job->cancel_arg);
}

int fleet__worker_message(struct fleet__worker_s *w, const char *msg,
                          size_t len) {
  static const char kind[] = "cancel";
  const char *id, *tok, *end = msg + len;
  fleet__wjob_t *job;

  if (len < sizeof(kind) || memcmp(msg, kind, sizeof(kind)) != 0)
    return 0;
  id = msg + sizeof(kind);
  tok = memchr(id, '\0', (size_t)(end - id));
  if (tok == NULL)
    return 1;
  tok++;
  FLEET__LIST_FOREACH_DATA (job, &w->held, fleet__wjob_t, node) {
    if (job->wire_len == (size_t)(tok - 1 - id) &&
        memcmp(job->wire_id, id, job->wire_len) == 0 &&
        job->token_len == (size_t)(end - tok) &&
        memcmp(job->token, tok, job->token_len) == 0) {
      wjob_stop(job, FLEET_JOB_CANCEL_REQUESTED);
      break;
    }
  }
  return 1;
}

int fleet_job_on_cancel(fleet_job_t *pub, fleet_job_cancel_cb cb, void *arg) {
  fleet__wjob_t *job = pub != NULL ? pub->internal_ : NULL;

  if (job == NULL || !job->with_handler)
    return FLEET_EINVAL;
  job->cancel_cb = cb;
  job->cancel_arg = arg;
  return 0;
}

fleet_job_cancel_t fleet_job_cancelled(const fleet_job_t *pub) {
  const fleet__wjob_t *job = pub != NULL ? pub->internal_ : NULL;

  return job != NULL ? job->cancel : FLEET_JOB_CANCEL_NONE;
}

/* ------------------------------------------------------------------------ */
/* Finishing                                                                */

/* The finish of every job of a batch failed with `status`: retry later
 * when it may heal (out of memory here is ours, and passes too), else
 * settle with it. Either way the error callback hears it. */
static void wbatch_failed(fleet__wbatch_t *b, int status) {
  struct fleet__worker_s *w = b->w;
  int retry = fleet__status_transient(status) || status == FLEET_ENOMEM;
  size_t i;

  if (status != FLEET_ECANCELED)
    fleet__handle_error(&w->base, status);
  if (retry)
    fleet__worker_offline(w, status);
  for (i = 0; i < b->n; i++) {
    fleet__wjob_t *job = b->jobs[i];
    job->sending = 0;
    if (retry && fleet__worker_may_retry(w)) {
      job->resent = 1;
      sendq_push(w, job);
    } else
      wjob_settle(w, job, status);
  }
}

static void worker_on_finished(fleet_queue_t *q, int status, const int *results,
                               size_t n, void *ud) {
  fleet__wbatch_t *b = ud;
  struct fleet__worker_s *w = b->w;
  size_t i;

  w->calls_in_flight--;
  if (status != 0) {
    wbatch_failed(b, status);
  } else {
    fleet__worker_online(w);
    for (i = 0; i < n; i++)
      wjob_settle(w, b->jobs[i], results[i]);
  }
  fleet__wbatch_put(b);
  fleet__worker_check_done(w);
}

static void worker_on_failed(fleet_queue_t *q, int status, int dead,
                             uint64_t retry_at_ms, void *ud) {
  fleet__wbatch_t *b = ud;
  struct fleet__worker_s *w = b->w;

  w->calls_in_flight--;
  if (status == 0 || status == FLEET_ESTALE || status == FLEET_EALREADY ||
      status == FLEET_ENOTFOUND) {
    fleet__worker_online(w);
    if (status == 0 && !dead && !b->jobs[0]->internal) /* metrics */
      fleet__metrics_add_type(w->base.metrics, FLEET_METRIC_JOBS_RETRIED,
                              b->jobs[0]->pub.type, b->jobs[0]->pub.type_len,
                              1);
    /* A retry is a delayed job: when it is the earliest one, the script
     * wakes the workers, whose claims then learn when it is due. */
    wjob_settle(w, b->jobs[0], status);
  } else {
    wbatch_failed(b, status);
  }
  fleet__wbatch_put(b);
  fleet__worker_check_done(w);
}

/* Sends one batch of completes or releases; on a synchronous error the
 * jobs go back to the send queue (or settle when the queue is closing). */
static void wbatch_send(struct fleet__worker_s *w, fleet__wbatch_t *b) {
  int err;

  if (b->kind == FLEET__WBATCH_COMPLETE)
    err = fleet_queue_complete_results(&w->queue, b->claims,
                                       b->with_results ? b->results : NULL,
                                       b->n, worker_on_finished, b);
  else if (b->kind == FLEET__WBATCH_FAIL)
    err = fleet_queue_fail(&w->queue, b->claims, b->jobs[0]->error,
                           b->jobs[0]->error_len, worker_on_failed, b);
  else
    /* (A release that holds claims goes in a batch of its own.) */
    err = fleet__queue_release_hold(&w->queue, b->claims, b->n,
                                    b->jobs[0]->hold_ms, b->jobs[0]->hold_group,
                                    worker_on_finished, b);
  if (err == 0) {
    w->calls_in_flight++;
    return;
  }
  wbatch_failed(b, err == FLEET_ECLOSING ? FLEET_ECANCELED : err);
  fleet__wbatch_put(b);
}

/* Sends the finishes queued, but the last batch of completions, which it
 * returns (NULL: none) for the claim to carry. */
static fleet__wbatch_t *worker_send_finishes(struct fleet__worker_s *w) {
  fleet__wbatch_t *complete = NULL, *release = NULL, *one, **slot;
  fleet__wjob_t *job;
  fleet__list_t list;

  /* The jobs queued now: those put back below wait for the next flush. */
  fleet__list_init(&list);
  FLEET__LIST_FOREACH (n, next, &w->sendq) {
    fleet__list_remove(n);
    fleet__list_insert_tail(&list, n);
  }
  FLEET__LIST_FOREACH_DATA (job, &list, fleet__wjob_t, qnode) {
    fleet__list_remove(&job->qnode);
    job->queued = 0;
    job->sending = 1;
    if (job->action == FLEET_JOB_FAIL || job->hold_ms > 0) {
      one = fleet__wbatch_get(w, job->action == FLEET_JOB_FAIL
                                     ? FLEET__WBATCH_FAIL
                                     : FLEET__WBATCH_RELEASE);
      if (one == NULL || fleet__wbatch_add(one, job) != 0) {
        if (one != NULL)
          fleet__wbatch_put(one);
        job->sending = 0;
        sendq_push(w, job);
        fleet__worker_offline(w, FLEET_ENOMEM);
        continue;
      }
      wbatch_send(w, one);
      continue;
    }
    slot = job->action == FLEET_JOB_COMPLETE ? &complete : &release;
    if (*slot == NULL)
      *slot = fleet__wbatch_get(w, job->action == FLEET_JOB_COMPLETE
                                       ? FLEET__WBATCH_COMPLETE
                                       : FLEET__WBATCH_RELEASE);
    if (*slot == NULL || fleet__wbatch_add(*slot, job) != 0) {
      job->sending = 0;
      sendq_push(w, job);
      fleet__worker_offline(w, FLEET_ENOMEM);
      continue;
    }
    if ((*slot)->n == FLEET_QUEUE_BATCH_MAX) {
      wbatch_send(w, *slot);
      *slot = NULL;
    }
  }
  if (release != NULL)
    wbatch_send(w, release);
  return complete;
}

/* Finishes a job given to the handler. */
static int wjob_finish(fleet_job_t *pub, fleet_job_action_t action,
                       const void *error, size_t error_len) {
  fleet__wjob_t *job;
  struct fleet__worker_s *w;

  if (pub == NULL || pub->internal_ == NULL)
    return FLEET_EINVAL;
  job = pub->internal_;
  w = job->w;
  if (!job->with_handler)
    return FLEET_EINVAL;
  if (action == FLEET_JOB_FAIL) {
    if (error == NULL && error_len > 0)
      return FLEET_EINVAL;
    if (error_len > FLEET_JOB_ERROR_MAX)
      return FLEET_E2BIG;
    if (error_len > 0) {
      char *copy = fleet__memdup(error, error_len);
      if (copy == NULL)
        return FLEET_ENOMEM;
      free((char *)job->error);
      job->error = copy;
    }
    job->error_len = error_len;
  }
  job->with_handler = 0;
  if (job->hooked)
    job->finished_ns = uv_hrtime();
  w->active--;
  fleet__share_kick(w); /* a slot of the share came free */
  job->action = action;
  if (job->claim == FLEET__WJOB_STALE)
    settleq_push(w, job, FLEET_ESTALE);
  else if (job->claim == FLEET__WJOB_HANDED)
    settleq_push(w, job, FLEET_ECANCELED);
  else
    sendq_push(w, job);
  fleet__worker_kick(w);
  return 0;
}

/* Finishes a job given to the handler with `action`, a release holding
 * the claims for `hold_ms` (0: none) of the queue or the job's group. */
static int wjob_finish_hold(fleet_job_t *pub, fleet_job_action_t action,
                            const void *error, size_t error_len,
                            uint32_t hold_ms, int hold_group) {
  fleet__wjob_t *job = pub != NULL ? pub->internal_ : NULL;
  int err;

  if (job == NULL || !job->with_handler)
    return FLEET_EINVAL;
  err = wjob_finish(pub, action, error, error_len);
  if (err == 0) {
    job->hold_ms = hold_ms;
    job->hold_group = hold_group;
  }
  return err;
}

int fleet_job_complete(fleet_job_t *job) {
  return wjob_finish_hold(job, FLEET_JOB_COMPLETE, NULL, 0, 0, 0);
}

int fleet_job_fail(fleet_job_t *job, const void *error, size_t error_len) {
  return wjob_finish_hold(job, FLEET_JOB_FAIL, error, error_len, 0, 0);
}

int fleet_job_complete_result(fleet_job_t *pub, const void *result,
                              size_t len) {
  fleet__wjob_t *job = pub != NULL ? pub->internal_ : NULL;
  char *copy;
  int err;

  if (job == NULL || !job->with_handler || (result == NULL && len > 0))
    return FLEET_EINVAL;
  if (len > FLEET_JOB_RESULT_MAX)
    return FLEET_E2BIG;
  /* (One byte more: an empty result is not NULL.) */
  if ((copy = malloc(len + 1)) == NULL)
    return FLEET_ENOMEM;
  if (len > 0)
    memcpy(copy, result, len);
  err = wjob_finish_hold(pub, FLEET_JOB_COMPLETE, NULL, 0, 0, 0);
  if (err != 0) {
    free(copy);
    return err;
  }
  free(job->result);
  job->result = copy;
  job->result_len = len;
  return 0;
}

/* The answer to a progress report of a handler's job: a refusal or a
 * failed call reaches the worker's error callback. */
static void worker_on_progress(fleet_handle_t *h, int status, void *ud) {
  struct fleet__worker_s *w = ud;

  (void)h;
  if (status != 0 && status != FLEET_ECANCELED)
    fleet__handle_error(&w->base, status);
}

int fleet_job_progress(fleet_job_t *pub, uint32_t pct, const void *data,
                       size_t len) {
  fleet__wjob_t *job = pub != NULL ? pub->internal_ : NULL;
  fleet_claim_t claim;

  if (job == NULL || !job->with_handler)
    return FLEET_EINVAL;
  claim.id = pub->internal_->wire_id;
  claim.token = pub->token;
  return fleet_queue_progress(&job->w->queue, &claim, pct, data, len,
                              worker_on_progress, job->w);
}

int fleet_job_release(fleet_job_t *job) {
  return wjob_finish_hold(job, FLEET_JOB_RELEASE, NULL, 0, 0, 0);
}

int fleet_job_rate_limit(fleet_job_t *job, uint32_t wait_ms, unsigned flags) {
  if (wait_ms == 0 || wait_ms > FLEET_LIMIT_WINDOW_MAX_MS ||
      (flags & ~FLEET_RATE_LIMIT_GROUP) != 0)
    return FLEET_EINVAL;
  return wjob_finish_hold(job, FLEET_JOB_RELEASE, NULL, 0, wait_ms,
                          (flags & FLEET_RATE_LIMIT_GROUP) != 0);
}

/* ------------------------------------------------------------------------ */
/* Local lease deadlines                                                    */

static void worker_on_lease(uv_timer_t *timer);

/* Arms the lease timer at the earliest local deadline of a held claim, or
 * stops it when there is none. */
static void worker_arm_lease(struct fleet__worker_s *w, uint64_t now) {
  uint64_t next = UINT64_MAX;
  fleet__wjob_t *job;

  if (uv_is_closing((uv_handle_t *)&w->lease_timer))
    return;
  FLEET__LIST_FOREACH_DATA (job, &w->held, fleet__wjob_t, node) {
    if (job->claim == FLEET__WJOB_HELD && job->local_deadline < next)
      next = job->local_deadline;
    /* (A run deadline, until the handler was told.) */
    if (job->run_local != 0 && job->with_handler &&
        job->cancel == FLEET_JOB_CANCEL_NONE && job->run_local < next)
      next = job->run_local;
  }
  if (next == UINT64_MAX)
    uv_timer_stop(&w->lease_timer);
  else
    uv_timer_start(&w->lease_timer, worker_on_lease,
                   next > now ? next - now : 0, 0);
}

static void worker_on_lease(uv_timer_t *timer) {
  struct fleet__worker_s *w =
      FLEET__CONTAINER_OF(timer, struct fleet__worker_s, lease_timer);
  uint64_t now = uv_now(w->base.loop);
  fleet__wjob_t *job;

  FLEET__LIST_FOREACH_DATA (job, &w->held, fleet__wjob_t, node) {
    if (job->claim == FLEET__WJOB_HELD && job->local_deadline <= now) {
      job->claim = FLEET__WJOB_EXPIRED;
      wjob_lost(w, job, FLEET_ETIMEDOUT);
    }
    if (job->run_local != 0 && job->run_local <= now)
      wjob_stop(job, FLEET_JOB_CANCEL_TIMEOUT);
  }
  worker_arm_lease(w, now);
}

/* ------------------------------------------------------------------------ */
/* Heartbeats                                                               */

/* A heartbeat is an item of the client's batcher: the held claims of a
 * worker (the group) that are due about together share one QUEUE_REFRESH
 * call, KEYS = {tag}, ARGV = {claim_ttl_ms, then id, token per claim},
 * whose reply is {now_ms, deadline_ms, then 1 (refreshed), 2 (held, its
 * job cancelled) or 0 (stale) per claim}. */
static void worker_hb_fill_group(fleet__batch_item_t *it, fleet_bytes_t *keys,
                                 fleet_bytes_t *args) {
  struct fleet__worker_s *w = FLEET__CONTAINER_OF(it, fleet__wjob_t, hb)->w;

  keys[0] = fleet__queue_tag(&w->queue);
  args[0].base = w->ttl;
  args[0].len = w->ttl_len;
}

static void worker_hb_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                           fleet_bytes_t *args) {
  fleet__wjob_t *job = FLEET__CONTAINER_OF(it, fleet__wjob_t, hb);

  args[0].base = job->wire_id;
  args[0].len = job->wire_len;
  args[1].base = job->token;
  args[1].len = job->token_len;
}

static void worker_hb_done(fleet__batch_item_t *it, int status,
                           const fleet__reply_t *head,
                           const fleet__reply_t *elem, uint64_t sent);

static const fleet__batch_kind_t worker_hb_kind = {
    .op = FLEET__OP_QUEUE_REFRESH,
    .group_keys = 1,
    .group_args = 1,
    .item_args = 2,
    .reply_head = 2,
    .max_items = FLEET__BATCH_MAX,
    .fill_group = worker_hb_fill_group,
    .fill = worker_hb_fill,
    .done = worker_hb_done,
};

/* Schedules the next heartbeat of `job` `period` ms after `from` (loop
 * ms): it may go a quarter period early to share a call with others. Out
 * of memory, the claim goes without: it is reported lost at its deadline. */
static void worker_hb_schedule_in(struct fleet__worker_s *w, fleet__wjob_t *job,
                                  uint64_t from, uint32_t period) {
  int err;

  /* A callback may have stopped or closed the worker meanwhile. */
  if (w->state == FLEET__WORKER_STOPPED || w->state == FLEET__WORKER_CLOSING)
    return;
  err = fleet__batch_add(w->base.client, &job->hb, &worker_hb_kind, w,
                         from + period, period / 4);
  if (err != 0)
    fleet__handle_error(&w->base, err);
}

/* The same, one heartbeat period after `from`. */
static void worker_hb_schedule(struct fleet__worker_s *w, fleet__wjob_t *job,
                               uint64_t from) {
  worker_hb_schedule_in(w, job, from, w->o.heartbeat_ms);
}

static void worker_hb_done(fleet__batch_item_t *it, int status,
                           const fleet__reply_t *head,
                           const fleet__reply_t *elem, uint64_t sent) {
  fleet__wjob_t *job = FLEET__CONTAINER_OF(it, fleet__wjob_t, hb);
  struct fleet__worker_s *w = job->w;

  if (status == 0 && (elem->type != FLEET__REPLY_INT || elem->integer < 0 ||
                      elem->integer > 2))
    status = FLEET_EPROTO;
  if (status != 0) {
    /* Try again next period; the lease timer tells the handler if the
     * claim runs out meanwhile. */
    worker_hb_schedule(w, job, uv_now(w->base.loop));
    fleet__worker_offline(w, status);
    fleet__handle_error(&w->base, status);
    return;
  }
  fleet__worker_online(w);
  if (elem->integer == 2) {
    /* Held, but its job was cancelled: the deadline stays where the
     * cancel's grace put it (a message missed is caught here). */
    worker_hb_schedule(w, job, sent);
    wjob_stop(job, FLEET_JOB_CANCEL_REQUESTED);
  } else if (elem->integer == 1) {
    job->local_deadline = sent + w->o.claim_ttl_ms - w->margin_ms;
    worker_hb_schedule(w, job, sent);
    worker_arm_lease(w, uv_now(w->base.loop));
  } else {
    job->claim = FLEET__WJOB_STALE;
    wjob_lost(w, job, FLEET_ESTALE);
  }
  fleet__worker_check_done(w);
}

/* ------------------------------------------------------------------------ */
/* Claims                                                                   */

/* Holds the `n` jobs claimed for the worker, each until `deadline` (loop
 * ms) with its first heartbeat `period` ms from now, and gives them to the
 * handler; those it cannot run go straight back: claimed while stopping,
 * or delivered (`delivered`) beyond the worker's room. The backend clock
 * read `server_now` at loop ms `at` or before: a job's run deadline is
 * timed from there, so that the handler is told at it or a little after
 * (a finish after it is the timeout's failure; the backend waits a grace
 * past it for one, lib/queue_stop.lua). For a job with one, `at` is read
 * again from the clock: the loop's time is that of its iteration's start,
 * which a busy iteration leaves behind, and a run deadline timed from it
 * would tell the handler early, before the backend's clock got there. */
static void worker_take(struct fleet__worker_s *w, const fleet_job_t *jobs,
                        size_t n, uint64_t deadline, uint32_t period,
                        int delivered, uint64_t server_now, uint64_t at) {
  uint64_t now = uv_now(w->base.loop);
  fleet__wjob_t *job;
  size_t i;
  int timed = 0; /* a job has a run deadline */
  int fresh = 0; /* `at` was read again */

  for (i = 0; i < n; i++) {
    job = fleet__wjob_get(w);
    if (job == NULL || fleet__wjob_copy(job, &jobs[i]) != 0) {
      /* Without a slot the claim cannot be held: it expires and is
       * recovered. */
      if (job != NULL)
        fleet__wjob_put(w, job);
      continue;
    }
    job->local_deadline = deadline;
    timed |= jobs[i].run_deadline_ms != 0;
    if (jobs[i].run_deadline_ms != 0 && !fresh) {
      uv_update_time(w->base.loop);
      if (uv_now(w->base.loop) > at)
        at = uv_now(w->base.loop);
      fresh = 1;
    }
    if (jobs[i].run_deadline_ms != 0)
      job->run_local = jobs[i].run_deadline_ms > server_now
                           ? at + (jobs[i].run_deadline_ms - server_now)
                           : at;
    held_add(w, job);
    worker_hb_schedule_in(w, job, now, period);
    w->stats.claimed++;
    job->claimed_ns = uv_hrtime(); /* metrics */
    fleet__metrics_add_type(w->base.metrics, FLEET_METRIC_JOBS_CLAIMED,
                            job->pub.type, job->pub.type_len, 1);
    /* The wait from enqueue to the first claim, on the backend clock. */
    if (jobs[i].attempts == 1 && jobs[i].created_ms > 0 &&
        server_now >= jobs[i].created_ms)
      fleet__metrics_observe(w->base.metrics, FLEET_METRIC_JOB_WAIT,
                             (server_now - jobs[i].created_ms) * 1000);
    if (w->state == FLEET__WORKER_RUNNING &&
        (!delivered || w->active < w->o.concurrency)) {
      job->with_handler = 1;
      w->active++;
      wjob_run(w, job);
    } else {
      /* Claimed while stopping, or delivered beyond the room (a claim
       * was in flight): hand it straight back. */
      job->internal = 1;
      job->action = FLEET_JOB_RELEASE;
      sendq_push(w, job);
    }
  }
  if (n > 0 && (timed || !uv_is_active((uv_handle_t *)&w->lease_timer)))
    worker_arm_lease(w, now);
  fleet__worker_kick(w);
}

void fleet__worker_delivered(struct fleet__worker_s *w, const char *msg,
                             size_t len) {
  fleet_claim_info_t info;
  fleet_job_t *jobs;
  size_t n;
  uint64_t ttl, now = uv_now(w->base.loop);
  uint32_t period;
  int err;

  if (w->state == FLEET__WORKER_STOPPED || w->state == FLEET__WORKER_CLOSING)
    return; /* (unsubscribed: not reached) */
  err = fleet__queue_delivery_read(&w->queue, msg, len, &info, &jobs, &n);
  if (err == 0 && info.deadline_ms <= info.now_ms)
    err = FLEET_EPROTO;
  if (err != 0) {
    /* The claims expire and are recovered. */
    fleet__handle_error(&w->base, err);
    return;
  }
  fleet__worker_online(w);
  /* The delivery parked this worker out: its next call claims, which
   * parks it again when nothing is pending. */
  w->maybe_pending = 1;
  /* A delivered claim lasts `ttl` (at most the claim TTL), counted from
   * now, less a tenth for the time the message took; its first heartbeat
   * comes halfway, and gives it the claim TTL. */
  ttl = info.deadline_ms - info.now_ms;
  period = w->o.heartbeat_ms;
  if (ttl / 2 < period)
    period = (uint32_t)(ttl / 2);
  worker_take(w, jobs, n, now + ttl - ttl / 10 - 1, period, 1, info.now_ms,
              now);
  fleet__worker_check_done(w);
}

static void worker_on_claimed(fleet_queue_t *q, int status, fleet_job_t *jobs,
                              size_t n, const fleet_claim_info_t *info,
                              void *ud) {
  fleet__wbatch_t *b = ud;
  struct fleet__worker_s *w = b->w;
  uint64_t deadline = b->sent_at + w->o.claim_ttl_ms - w->margin_ms;
  uint64_t wake_gen = b->wake_gen;
  size_t asked = b->n;

  w->claims_in_flight--;
  w->claiming -= (uint32_t)asked;
  fleet__wbatch_put(b);
  if (status != 0) {
    /* Whatever the error, claiming goes on after a backoff: a refusal
     * (permissions, a slot moved) may be fixed while the worker runs. */
    if (status != FLEET_ECANCELED) {
      fleet__handle_error(&w->base, status);
      fleet__worker_offline(w, status);
    }
    fleet__worker_check_done(w);
    return;
  }
  fleet__worker_online(w);
  if (info->next_run_at_ms > 0)
    fleet__worker_arm_delay(w, info->now_ms, info->next_run_at_ms);
  w->last_full = asked > 0 && n == asked;
  w->maybe_pending = info->pending > 0 || w->wake_gen != wake_gen;
  /* Held back by a flow limit (docs/queue.md, "Flow control"): the next
   * claim goes when the hold ends (the delay timer) or, for a concurrency
   * limit, when a finish publishes a wake-up. */
  if (info->retry_at_ms != 0) {
    w->maybe_pending = w->wake_gen != wake_gen;
    if (info->retry_at_ms != FLEET_CLAIM_WAIT_SLOT)
      fleet__worker_arm_delay(w, info->now_ms, info->retry_at_ms);
  }
  worker_take(w, jobs, n, deadline, w->o.heartbeat_ms, 0, info->now_ms,
              uv_now(w->base.loop));
  /* Slots asked for and not filled, or a queue that ran dry: the share's
   * other workers may claim them. */
  if (n < asked || !w->maybe_pending)
    fleet__share_kick(w);
  fleet__worker_check_done(w);
}

/* The reply of a claim that carried completions: each side is read as
 * its own call's would be. A refusal that is not transient came from the
 * claim before the script wrote anything (or the completions would meet
 * it too): the completions go again alone. */
static void worker_on_complete_claimed(fleet_queue_t *q, int status,
                                       const int *results, size_t n,
                                       fleet_job_t *jobs, size_t njobs,
                                       const fleet_claim_info_t *info,
                                       void *ud) {
  fleet__wbatch_t *b = ud, *done = b->with;
  struct fleet__worker_s *w = b->w;

  b->with = NULL;
  if (status == 0 || status == FLEET_ECANCELED ||
      fleet__status_transient(status)) {
    worker_on_finished(q, status, results, n, done);
  } else {
    w->calls_in_flight--;
    wbatch_send(w, done);
  }
  worker_on_claimed(q, status, jobs, njobs, info, b);
}

/* Sends the claims there is room for; the first carries `*complete` (a
 * batch of completions, or NULL), which is then NULL. */
static void worker_send_claims(struct fleet__worker_s *w,
                               fleet__wbatch_t **complete) {
  fleet__wbatch_t *b;
  uint32_t room, n;
  int err;

  while (w->claims_in_flight < FLEET__WORKER_CLAIMS_MAX) {
    room = w->o.concurrency - w->active - w->claiming;
    if (room > w->o.concurrency)
      room = 0;
    room = fleet__share_room(w, room);
    /* A claim rides along with completions when jobs may be pending
     * (the last claim left some, or a wake-up came since): it costs no
     * round trip. When none may be, the completions go alone, since a
     * claim would find nothing and cost the server its reads; the
     * enqueue that makes the pending set non-empty wakes the worker. */
    if (w->maybe_pending && room > 0 &&
        (w->claims_in_flight == 0 || w->last_full))
      n = room < w->o.claim_batch ? room : w->o.claim_batch;
    else if ((w->promote_due || w->probe) && w->claims_in_flight == 0)
      n = 0; /* no room, but a delayed job is due: just move it; or the
                backend is probed after a failure (a call must go out for
                the worker to learn it is back) */
    else
      return;
    b = fleet__wbatch_get(w, FLEET__WBATCH_CLAIM);
    if (b == NULL) {
      fleet__worker_offline(w, FLEET_ENOMEM);
      return;
    }
    b->n = n;
    b->wake_gen = w->wake_gen;
    if (*complete != NULL) {
      b->with = *complete;
      err = fleet__queue_complete_claim(
          &w->queue, b->with->claims,
          b->with->with_results ? b->with->results : NULL, b->with->n, n,
          w->o.claim_ttl_ms, worker_on_complete_claimed, b);
    } else {
      err = fleet_queue_claim(&w->queue, n, w->o.claim_ttl_ms,
                              worker_on_claimed, b);
    }
    if (err != 0) {
      fleet__wbatch_put(b);
      fleet__handle_error(&w->base, err);
      return;
    }
    if (b->with != NULL) {
      *complete = NULL;
      w->calls_in_flight++;
    }
    w->claims_in_flight++;
    w->claiming += n;
    w->promote_due = 0;
    if (n == 0)
      return;
  }
}

void fleet__worker_send(struct fleet__worker_s *w, int finishes, int claims) {
  fleet__wbatch_t *complete = finishes ? worker_send_finishes(w) : NULL;

  if (claims)
    worker_send_claims(w, &complete);
  if (complete != NULL)
    wbatch_send(w, complete);
}

/* ------------------------------------------------------------------------ */
/* Stop and hand-backs                                                      */

void fleet__worker_heartbeats_stop(struct fleet__worker_s *w) {
  fleet__wjob_t *job;

  FLEET__LIST_FOREACH_DATA (job, &w->held, fleet__wjob_t, node)
    fleet__batch_remove(w->base.client, &job->hb);
}

static void worker_on_handed(fleet_queue_t *q, int status, const int *results,
                             size_t n, void *ud) {
  fleet__wbatch_t *b = ud;
  struct fleet__worker_s *w = b->w;

  w->calls_in_flight--;
  if (status != 0 && status != FLEET_ECANCELED)
    fleet__handle_error(&w->base, status);
  fleet__wbatch_put(b);
  fleet__worker_check_done(w);
}

void fleet__worker_hand_back(struct fleet__worker_s *w) {
  fleet__wbatch_t *b = NULL;
  fleet__wjob_t *job;

  FLEET__LIST_FOREACH_DATA (job, &w->held, fleet__wjob_t, node) {
    if (!job->with_handler || job->claim == FLEET__WJOB_HANDED)
      continue;
    if (job->claim != FLEET__WJOB_STALE && b == NULL)
      b = fleet__wbatch_get(w, FLEET__WBATCH_HANDBACK);
    if (job->claim != FLEET__WJOB_STALE && b != NULL &&
        b->n < FLEET_QUEUE_BATCH_MAX)
      fleet__wbatch_add(b, job);
    job->claim = FLEET__WJOB_HANDED;
    fleet__batch_remove(w->base.client, &job->hb);
  }
  if (b != NULL) {
    if (b->n > 0 && fleet_queue_release(&w->queue, b->claims, b->n,
                                        worker_on_handed, b) == 0)
      w->calls_in_flight++;
    else
      fleet__wbatch_put(b);
  }
  /* Now tell the handlers; they may finish their jobs from the callback. */
  FLEET__LIST_FOREACH_DATA (job, &w->held, fleet__wjob_t, node)
    if (job->claim == FLEET__WJOB_HANDED)
      wjob_lost(w, job, FLEET_ECANCELED);
}

fleet_worker_t *fleet_job_worker(const fleet_job_t *job) {
  if (job == NULL || job->internal_ == NULL)
    return NULL;
  return fleet__worker_pub(job->internal_->w);
}
