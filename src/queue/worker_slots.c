/* worker_slots.c -- the worker's pools: job slots (a claimed job, copied,
 * from its claim until it settles) and batches (one call in flight and
 * the jobs it is about). Neither is freed before the worker. */
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"
#include "worker_int.h"

fleet__wjob_t *fleet__wjob_get(struct fleet__worker_s *w) {
  fleet__list_t *n = fleet__list_first(&w->free_jobs);
  fleet__wjob_t *job;

  if (n != NULL) {
    fleet__list_remove(n);
    job = FLEET__LIST_DATA(n, fleet__wjob_t, node);
  } else {
    job = calloc(1, sizeof(*job));
    if (job == NULL)
      return NULL;
    job->w = w;
  }
  fleet__list_init(&job->node);
  fleet__list_init(&job->qnode);
  job->claim = FLEET__WJOB_HELD;
  job->with_handler = job->queued = job->sending = job->internal = 0;
  job->lost_told = job->resent = job->hooked = 0;
  job->local_status = 0;
  job->cancel = FLEET_JOB_CANCEL_NONE;
  job->cancel_cb = NULL;
  job->cancel_arg = NULL;
  job->run_local = 0;
  job->error = NULL;
  job->error_len = 0;
  job->result = NULL;
  job->result_len = 0;
  return job;
}

void fleet__wjob_put(struct fleet__worker_s *w, fleet__wjob_t *job) {
  fleet__batch_remove(w->base.client, &job->hb);
  free((char *)job->error);
  job->error = NULL;
  free(job->result);
  job->result = NULL;
  fleet__list_insert_head(&w->free_jobs, &job->node);
}

/* Copies a claimed job into `job`'s buffer: id, type and group (each
 * NUL-terminated), the packed headers, then the payload. Returns 0 or
 * FLEET_ENOMEM. */
int fleet__wjob_copy(fleet__wjob_t *job, const fleet_job_t *src) {
  struct fleet__worker_s *w = job->w;
  size_t sfx = 0, need;
  char *p;

  /* A sub-worker's generated ids (digits) go out with its suffix. */
  if (w->id_sfx_len > 0 && src->id_len > 0 &&
      strspn(src->id, "0123456789") == src->id_len)
    sfx = w->id_sfx_len;
  need = src->id_len * 2 + sfx + src->type_len + src->group_len +
         src->headers_len + src->payload.len + 4;

  if (fleet__grow((void **)&job->buf, &job->cap, need, 1) != 0)
    return FLEET_ENOMEM;
  p = job->buf;
  job->pub = *src;
  job->pub.data = NULL;
  job->pub.hook_data = NULL;
  job->pub.internal_ = job;
  job->hold_ms = 0; /* (a slot reused: no hold from its last job) */
  job->hold_group = 0;
  job->token_len = fleet__queue_dec(job->token, src->token);
  memcpy(p, src->id, src->id_len + 1);
  job->pub.id = p;
  job->wire_id = p;
  job->wire_len = src->id_len;
  if (sfx > 0) {
    memcpy(p + src->id_len, w->id_sfx, sfx + 1);
    job->pub.id_len = src->id_len + sfx;
    p += job->pub.id_len + 1;
    memcpy(p, src->id, src->id_len + 1);
    job->wire_id = p;
  }
  p += src->id_len + 1;
  memcpy(p, src->type, src->type_len + 1);
  job->pub.type = p;
  p += src->type_len + 1;
  if (src->group != NULL) {
    memcpy(p, src->group, src->group_len);
    p[src->group_len] = '\0';
    job->pub.group = p;
    p += src->group_len + 1;
  }
  if (src->headers_len > 0) {
    memcpy(p, src->headers, src->headers_len);
    job->pub.headers = p;
    p += src->headers_len;
  }
  if (src->payload.len > 0)
    memcpy(p, src->payload.base, src->payload.len);
  job->pub.payload.base = p;
  return 0;
}

fleet__wbatch_t *fleet__wbatch_get(struct fleet__worker_s *w,
                                   fleet__wbatch_kind_t kind) {
  fleet__list_t *n = fleet__list_first(&w->free_batches);
  fleet__wbatch_t *b;

  if (n != NULL) {
    fleet__list_remove(n);
    b = FLEET__LIST_DATA(n, fleet__wbatch_t, node);
  } else if ((b = calloc(1, sizeof(*b))) == NULL) {
    return NULL;
  }
  b->w = w;
  b->kind = kind;
  b->n = 0;
  b->sent_at = uv_now(w->base.loop);
  b->with = NULL;
  b->with_results = 0;
  return b;
}

void fleet__wbatch_put(fleet__wbatch_t *b) {
  fleet__list_insert_head(&b->w->free_batches, &b->node);
}

/* Adds a job (and its claim) to a batch. Returns 0 or FLEET_ENOMEM. */
int fleet__wbatch_add(fleet__wbatch_t *b, fleet__wjob_t *job) {
  size_t cap = b->cap, n = b->n + 1;

  /* The two arrays grow alike: b->cap is that of both once both grew. */
  if (n > b->cap &&
      (fleet__grow((void **)&b->jobs, &cap, n, sizeof(*b->jobs)) != 0 ||
       fleet__grow((void **)&b->claims, &b->cap, n, sizeof(*b->claims)) != 0))
    return FLEET_ENOMEM;
  b->jobs[b->n] = job;
  b->claims[b->n].id = job->wire_id;
  b->claims[b->n].token = job->pub.token;
  /* Results cost the batches of jobs without any nothing. */
  if (job->result != NULL || b->with_results) {
    if (fleet__grow((void **)&b->results, &b->results_cap, n,
                    sizeof(*b->results)) != 0)
      return FLEET_ENOMEM;
    if (!b->with_results)
      memset(b->results, 0, b->n * sizeof(*b->results));
    b->with_results = 1;
    b->results[b->n].base = job->result;
    b->results[b->n].len = job->result_len;
  }
  b->n++;
  return 0;
}

void fleet__worker_free_jobs(struct fleet__worker_s *w) {
  fleet__wjob_t *job;
  fleet__wbatch_t *b;

  FLEET__LIST_FOREACH (n, next, &w->free_jobs) {
    job = FLEET__LIST_DATA(n, fleet__wjob_t, node);
    free(job->buf);
    free(job);
  }
  FLEET__LIST_FOREACH_DATA (b, &w->free_batches, fleet__wbatch_t, node) {
    free(b->jobs);
    free(b->claims);
    free(b->results);
    free(b);
  }
}
