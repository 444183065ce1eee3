/* warmpool_works.c -- what every call of a warm pool node starts from:
 * the entry of its public calls, the calls nobody waits for, and the works
 * the node asks the user for (create, destroy, check), each followed by
 * its done hook once the user reports it. warmpool.c (the node) and
 * warmpool_calls.c (the calls) build on this file, which calls neither. */
#include <stdlib.h>
#include <string.h>

#include "warmpool_int.h"

/* ------------------------------------------------------------------------ */
/* Calls                                                                    */

fleet__warmpool_t *fleet__warmpool_enter(const fleet_warmpool_t *pool,
                                         fleet__fn_t cb, int needs,
                                         size_t nargs, size_t nnums, int *err) {
  fleet__warmpool_t *wp = (fleet__warmpool_t *)fleet__call_enter(
      pool, FLEET_HANDLE_WARMPOOL, cb != NULL, err);

  if (wp == NULL)
    return NULL;
  if ((needs & FLEET__WP_NOT_REFUSED) && wp->state == FLEET__WARMPOOL_REFUSED)
    *err = FLEET_ECONFLICT;
  else if ((needs & FLEET__WP_HANDLERS) && wp->h.create_cb == NULL)
    *err = FLEET_EINVAL;
  else if (fleet__args_begin(&wp->args, nargs, nnums) != 0)
    *err = FLEET_ENOMEM;
  return *err == 0 ? wp : NULL;
}

void fleet__warmpool_on_quiet(fleet__req_t *r, int status,
                              const fleet__reply_t *reply) {
  (void)reply;
  fleet__req_done(r);
  if (status != 0)
    fleet__handle_error(r->handle, status);
}

/* The node's calls whose reply only matters when it fails. */
static const fleet__call_t wp_destroyed_call = {"warmpool.destroyed",
                                                FLEET__OP_WARMPOOL_DESTROYED,
                                                fleet__warmpool_on_quiet, NULL};
static const fleet__call_t wp_fail_call = {
    "warmpool.fail", FLEET__OP_WARMPOOL_FAIL, fleet__warmpool_on_quiet, NULL};

void fleet__warmpool_quiet(fleet__warmpool_t *wp, const fleet__call_t *call) {
  int err = fleet__warmpool_call(wp, call, NULL, NULL);

  if (err != 0)
    fleet__handle_error(&wp->base, err);
}

/* ------------------------------------------------------------------------ */
/* Works                                                                    */

const char *fleet_warmpool_work_id(const fleet_warmpool_work_t *w) {
  return w != NULL ? w->id : NULL;
}

void fleet__warmpool_work_free(fleet_warmpool_work_t *w) {
  fleet__warmpool_t *wp = w->wp;

  fleet__list_remove(&w->node);
  free(w);
  fleet__handle_unhold(&wp->base);
}

int fleet__warmpool_work_start(fleet__warmpool_t *wp, int kind,
                               fleet__warmpool_work_done_fn done,
                               const char *id, size_t len,
                               fleet__warmpool_req_t *req) {
  fleet_warmpool_work_t *w = calloc(1, sizeof(*w) + len + 1);

  if (w == NULL)
    return FLEET_ENOMEM;
  w->wp = wp;
  w->kind = kind;
  w->done = done;
  w->req = req;
  w->token = wp->token;
  memcpy(w->id, id, len);
  fleet__list_insert_head(&wp->works, &w->node);
  fleet__handle_hold(&wp->base);
  if (kind == FLEET__WARMPOOL_CREATE)
    wp->h.create_cb(wp->pub, w);
  else if (kind == FLEET__WARMPOOL_DESTROY)
    wp->h.destroy_cb(wp->pub, w);
  else
    wp->h.check_cb(wp->pub, w);
  return 0;
}

int fleet_warmpool_work_done(fleet_warmpool_work_t *w, int status,
                             const char *detail) {
  if (w == NULL || w->reported)
    return FLEET_EINVAL;
  w->reported = 1;
  w->done(w, status, detail);
  return 0;
}

void fleet__warmpool_destroyed(fleet__warmpool_t *wp, const char *id) {
  if (fleet__args_begin(&wp->args, 1, 0) != 0)
    return;
  fleet__args_str(&wp->args, id);
  fleet__warmpool_quiet(wp, &wp_destroyed_call);
}

void fleet__warmpool_destroy_done(fleet_warmpool_work_t *w, int status,
                                  const char *detail) {
  fleet__warmpool_t *wp = w->wp;

  (void)detail;
  if (status == 0)
    fleet__warmpool_destroyed(wp, w->id);
  else
    /* Left claimed: once its claim runs out the primary tries again. */
    fleet__handle_error(&wp->base, status);
  fleet__warmpool_work_free(w);
}

int fleet__warmpool_destroy(fleet__warmpool_t *wp, const char *id, size_t len,
                            fleet__warmpool_work_done_fn done,
                            fleet__warmpool_req_t *req) {
  FLEET__LIST_FOREACH (n, next, &wp->works) {
    fleet_warmpool_work_t *w = FLEET__LIST_DATA(n, fleet_warmpool_work_t, node);
    if (w->kind == FLEET__WARMPOOL_DESTROY && strlen(w->id) == len &&
        memcmp(w->id, id, len) == 0)
      return 0;
  }
  if (fleet__warmpool_work_start(wp, FLEET__WARMPOOL_DESTROY,
                                 done != NULL ? done
                                              : fleet__warmpool_destroy_done,
                                 id, len, req) != 0) {
    fleet__handle_error(&wp->base, FLEET_ENOMEM);
    return 0;
  }
  return 1;
}

void fleet__warmpool_create_failed(fleet__warmpool_t *wp, const char *id,
                                   int status, const char *detail) {
  if (fleet__args_begin(&wp->args, 4, 2) != 0)
    return;
  fleet__args_str(&wp->args, id);
  fleet__args_str(&wp->args, detail != NULL ? detail : fleet_strerror(status));
  fleet__args_u64(&wp->args, wp->opts.backoff_base_ms);
  fleet__args_u64(&wp->args, wp->opts.backoff_max_ms);
  fleet__warmpool_quiet(wp, &wp_fail_call);
}
