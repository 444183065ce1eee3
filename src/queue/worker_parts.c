/* worker_parts.c -- the worker of a partitioned queue (docs/queue.md,
 * "Partitioned queues"): the worker itself works on partition 0 and makes
 * one sub-worker per other partition, each a plain worker of the one-slot
 * queue "<name>~<i>" with its own wake-ups, parking, deliveries,
 * heartbeats and recovery timer, and all of them members of one share of
 * the worker's concurrency (worker_share.c), so that the worker never
 * holds more than `concurrency` jobs and the partitions with jobs get the
 * room. Their claims, made in one loop iteration, go out in one write per
 * connection (one per shard on a Redis Cluster). The user sees one
 * worker: the sub-workers hand their jobs to the worker's handler with
 * the worker's handle (fleet__worker_pub()). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"
#include "worker_int.h"

/* A sub-worker's background failure, reported to the error callback of
 * the worker the user sees, with its handle. */
static void worker_sub_error(fleet_handle_t *h, int status,
                             const char *detail) {
  struct fleet__worker_s *sw = (struct fleet__worker_s *)h->internal_;
  struct fleet__worker_s *w = sw->parent;

  if (w->o.error_cb != NULL)
    w->o.error_cb(w->base.pub, status, detail);
}

/* Makes `w` (initialized, not started) a worker of `n` partitions.
 * Returns 0 or an error; on error the sub-workers made are closing, and
 * `w` is to be closed. */
static int worker_parts_make(struct fleet__worker_s *w, uint32_t n) {
  fleet_client_t *client = fleet_handle_client(w->base.pub);
  fleet_worker_options_t o;
  size_t len = w->base.mblock.name_len;
  fleet_worker_share_t *share;
  char name[FLEET__NAME_MAX + 6];
  int err;

  if (n < 2 || n > FLEET_QUEUE_PARTITIONS_MAX || w->o.share != NULL)
    return FLEET_EINVAL;
  if (len + 5 > FLEET__NAME_MAX)
    return FLEET_E2BIG;
  if ((w->subs = calloc(n - 1, sizeof(*w->subs))) == NULL)
    return FLEET_ENOMEM;
  if ((err = fleet__share_new_turns(w->o.concurrency, &share)) != 0)
    return err;
  w->own_share = share;
  w->o.share = share;
  w->o.weight = 1;
  fleet__share_join(w);
  o = w->o;
  o.queue.partitions = 0;
  memcpy(name, w->base.mblock.name, len);
  for (uint32_t p = 1; p < n; p++) {
    fleet_worker_t *sub = calloc(1, sizeof(*sub));
    struct fleet__worker_s *sw;

    if (sub == NULL)
      return FLEET_ENOMEM;
    snprintf(name + len, 6, "~%u", (unsigned)p);
    if ((err = fleet__worker_init(client, sub, name, &o)) != 0) {
      free(sub);
      return err;
    }
    sw = (struct fleet__worker_s *)sub->internal_;
    sw->parent = w;
    sw->base.error_cb = w->o.error_cb != NULL ? worker_sub_error : NULL;
    sw->id_sfx_len =
        (size_t)snprintf(sw->id_sfx, sizeof(sw->id_sfx), "~%u", (unsigned)p);
    fleet__handle_adopt(&w->base, &sw->base);
    w->subs[w->nsubs++] = sub;
  }
  return 0;
}

/* A stop of the worker or of a sub-worker is done. */
static void worker_parts_stopped(fleet_handle_t *h, int status, void *ud) {
  struct fleet__worker_s *w = ud;
  fleet_status_cb cb;

  (void)h;
  if (status != 0 && w->pstop_status == 0)
    w->pstop_status = status;
  if (--w->stop_wait > 0 || (cb = w->pstop_cb) == NULL)
    return;
  w->pstop_cb = NULL;
  cb(w->base.pub, w->pstop_status, w->pstop_data);
}

/* fleet_worker_open()'s read of the partition count. */
static void worker_opened(fleet_queue_t *q, int status, uint32_t n, void *ud) {
  struct fleet__worker_s *w = ud;
  uint32_t want = w->o.queue.partitions;

  (void)q;
  if (status == 0 && want >= 2 && want != n)
    status = FLEET_ECONFLICT;
  if (status == 0 && n >= 2)
    status = fleet__handle_usable(&w->base) != 0 ? FLEET_ECANCELED
                                                 : worker_parts_make(w, n);
  w->open_cb(fleet__worker_pub(w), status, status == 0 ? n : 0, w->open_data);
}

int fleet_worker_open(fleet_client_t *client, fleet_worker_t *pub,
                      const char *name, const fleet_worker_options_t *options,
                      fleet_worker_open_cb cb, void *user_data) {
  fleet_worker_options_t o;
  struct fleet__worker_s *w;
  int err;

  if (pub == NULL || options == NULL || cb == NULL ||
      options->queue.partitions > FLEET_QUEUE_PARTITIONS_MAX ||
      (options->queue.partitions >= 2 && options->share != NULL))
    return FLEET_EINVAL;
  o = *options;
  o.queue.partitions = 0;
  if ((err = fleet__worker_init(client, pub, name, &o)) != 0)
    return err;
  w = (struct fleet__worker_s *)pub->internal_;
  w->o.queue.partitions = options->queue.partitions;
  w->open_cb = cb;
  w->open_data = user_data;
  if ((err = fleet_queue_partitions(&w->queue, 0, worker_opened, w)) != 0)
    fleet_worker_close(pub, NULL);
  return err;
}

/* ------------------------------------------------------------------------ */
/* The public calls                                                         */

int fleet_worker_init(fleet_client_t *client, fleet_worker_t *pub,
                      const char *name, const fleet_worker_options_t *options) {
  fleet_worker_options_t o;
  uint32_t n;
  int err;

  if (pub != NULL)
    pub->internal_ = NULL;
  if (options == NULL || options->queue.partitions < 2)
    return fleet__worker_init(client, pub, name, options);
  o = *options;
  n = o.queue.partitions;
  if (n > FLEET_QUEUE_PARTITIONS_MAX || o.share != NULL)
    return FLEET_EINVAL;
  o.queue.partitions = 0;
  if ((err = fleet__worker_init(client, pub, name, &o)) != 0)
    return err;
  if ((err = worker_parts_make((struct fleet__worker_s *)pub->internal_, n)) !=
      0)
    fleet_worker_close(pub, NULL);
  return err;
}

int fleet_worker_start(fleet_worker_t *pub, fleet_worker_handler_cb handler) {
  struct fleet__worker_s *w;
  int err;

  if ((err = fleet__worker_start(pub, handler)) != 0)
    return err;
  w = (struct fleet__worker_s *)pub->internal_;
  for (uint32_t i = 0; i < w->nsubs && err == 0; i++)
    err = fleet__worker_start(w->subs[i], handler);
  return err;
}

int fleet_worker_stop(fleet_worker_t *pub, uint32_t timeout_ms,
                      fleet_status_cb cb, void *user_data) {
  struct fleet__worker_s *w =
      (struct fleet__worker_s *)fleet__handle_of(pub, FLEET_HANDLE_WORKER);
  int err;

  if (w == NULL || w->nsubs == 0)
    return fleet__worker_stop(pub, timeout_ms, cb, user_data);
  /* Each sub-worker stops too; the user hears once all did. */
  if ((err = fleet__worker_stop(pub, timeout_ms, worker_parts_stopped, w)) != 0)
    return err;
  w->pstop_cb = cb;
  w->pstop_data = user_data;
  w->pstop_status = 0;
  w->stop_wait = 1;
  for (uint32_t i = 0; i < w->nsubs; i++)
    if (fleet__worker_stop(w->subs[i], timeout_ms, worker_parts_stopped, w) ==
        0)
      w->stop_wait++;
  return 0;
}

void fleet_worker_stats(const fleet_worker_t *pub, fleet_worker_stats_t *out) {
  const struct fleet__worker_s *w =
      (const struct fleet__worker_s *)fleet__handle_of(pub,
                                                       FLEET_HANDLE_WORKER);
  fleet_worker_stats_t s;

  fleet__worker_stats(pub, out);
  for (uint32_t i = 0; w != NULL && i < w->nsubs; i++) {
    fleet__worker_stats(w->subs[i], &s);
    out->claimed += s.claimed;
    out->completed += s.completed;
    out->failed += s.failed;
    out->released += s.released;
    out->lost += s.lost;
    out->active += s.active;
    out->held += s.held;
    out->online = out->online && s.online;
    if (out->last_error == 0)
      out->last_error = s.last_error;
  }
}
