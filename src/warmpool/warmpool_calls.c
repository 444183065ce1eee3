/* warmpool_calls.c -- the calls of any node of a warm pool: acquire (with
 * its check and its creation on demand), release, resize, drain, snapshot,
 * and the renewal of borrow leases through the client's batcher. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warmpool_int.h"

/* Checks that fail before an acquire gives up. */
#define WP_CHECK_TRIES 3
/* Ids one drain call takes. */
#define WP_DRAIN_MAX 1000

static void wp_on_reply(fleet__req_t *r, int status,
                        const fleet__reply_t *reply);

/* Runs a request's user callback with `status` and no results. */
static void wp_call_back(fleet__warmpool_t *wp, fleet__wp_req_t *req,
                         int status) {
  void *data = req->base.user_data;
  fleet_handle_t *h = wp->base.pub;

  switch (req->kind) {
    case FLEET__WP_REQ_ACQUIRE:
    case FLEET__WP_REQ_DIRECT:
      req->cb.acquire(wp->pub, status, NULL, data);
      break;
    case FLEET__WP_REQ_DRAIN:
      req->cb.drain(wp->pub, status, req->drained, data);
      break;
    case FLEET__WP_REQ_SNAPSHOT:
      req->cb.snapshot(wp->pub, status, NULL, data);
      break;
    default:
      req->cb.status(h, status, data);
      break;
  }
}

static void wp_cancel(fleet__req_t *r, int status) {
  fleet__wp_req_t *req = (fleet__wp_req_t *)r;
  fleet__warmpool_t *wp = (fleet__warmpool_t *)r->handle;
  FLEET__LIST_FOREACH (n, next, &wp->works) {
    fleet_warmpool_work_t *w = FLEET__LIST_DATA(n, fleet_warmpool_work_t, node);
    if (w->req == req)
      w->req = NULL;
  }
  wp_call_back(wp, req, status);
}

fleet__wp_req_t *fleet__wp_req(fleet__warmpool_t *wp, int kind,
                               void *user_data) {
  fleet__wp_req_t *req = (fleet__wp_req_t *)fleet__req_new(
      &wp->base, wp_on_reply, wp_cancel, user_data);
  if (req != NULL)
    req->kind = kind;
  return req;
}

fleet__wp_req_t *fleet__wp_req_args(fleet__warmpool_t *wp, int kind,
                                    void *user_data, size_t argc, size_t nint) {
  fleet__wp_req_t *req = fleet__wp_req(wp, kind, user_data);

  if (req != NULL && fleet__args_begin(&wp->args, argc, nint) != 0) {
    fleet__req_free(&req->base);
    req = NULL;
  }
  return req;
}

/* Finishes a request with an error. */
static void wp_fail(fleet__warmpool_t *wp, fleet__wp_req_t *req, int status) {
  fleet__req_done(&req->base);
  wp_call_back(wp, req, status);
}

/* ------------------------------------------------------------------------ */
/* Borrow leases                                                            */

static void wp_borrow_schedule(fleet__wp_borrow_t *b, uint64_t delay);

static void wp_borrow_free(fleet__wp_borrow_t *b) {
  fleet__warmpool_t *wp = b->wp;
  int had = b->item.linked || b->item.call != NULL;

  fleet__batch_remove(wp->base.client, &b->item);
  fleet__list_remove(&b->node);
  free(b);
  if (had)
    fleet__handle_unhold(&wp->base);
}

static void wp_renew_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                          fleet_bytes_t *args) {
  fleet__wp_borrow_t *b = FLEET__CONTAINER_OF(it, fleet__wp_borrow_t, item);
  fleet__warmpool_t *wp = b->wp;
  const char *lease = b == wp->own ? wp->own_ttl_str : wp->lease_str;

  keys[0] = fleet__key_bytes(&wp->tag);
  args[0] = (fleet_bytes_t){b->id, b->id_len};
  args[1] = (fleet_bytes_t){wp->owner, wp->owner_len};
  args[2] = (fleet_bytes_t){lease, strlen(lease)};
  args[3] = (fleet_bytes_t){wp->nonce, FLEET__NONCE_LEN};
}

static void wp_own_schedule(fleet__warmpool_t *wp, uint64_t delay);

/* The owner lease's renewal came back: 1 renewed, 2 it had run out (the
 * node was stopped past it) and was free, so it is this node's again,
 * -1 another live instance holds the id. */
static void wp_own_done(fleet__warmpool_t *wp, int status, int64_t res) {
  if (status != 0) {
    wp_own_schedule(wp, wp->opts.primary_ttl_ms / 10 + 1);
    fleet__handle_error(&wp->base, status);
    return;
  }
  if (res == -1) {
    fleet__wp_refuse(wp);
    return;
  }
  wp_own_schedule(wp, wp->opts.primary_ttl_ms / 3);
  if (res == 2) {
    fleet__backend_set_detail(fleet__handle_backend(&wp->base),
                              "warm pool %s: the lease of owner id \"%s\" "
                              "ran out; it was free and is held again",
                              wp->name, wp->owner);
    fleet__handle_error(&wp->base, FLEET_ESTALE);
  }
}

static void wp_renew_done(fleet__batch_item_t *it, int status,
                          const fleet__reply_t *head,
                          const fleet__reply_t *elem, uint64_t sent) {
  fleet__wp_borrow_t *b = FLEET__CONTAINER_OF(it, fleet__wp_borrow_t, item);
  fleet__warmpool_t *wp = b->wp;
  int64_t res = 0;

  (void)head;
  (void)sent;
  fleet__handle_unhold(&wp->base);
  if (status == 0 && fleet__reply_i64(elem, &res) != 0)
    status = FLEET_EPROTO;
  if (b == wp->own) {
    wp_own_done(wp, status, res);
    return;
  }
  if (status == 0 && res == -1) {
    /* Another live instance holds the owner id. */
    wp_borrow_free(b);
    fleet__wp_refuse(wp);
    return;
  }
  if (status != 0) {
    wp_borrow_schedule(b, wp->opts.borrow_lease_ms / 10 + 1);
    fleet__handle_error(&wp->base, status);
    return;
  }
  if (res != 1) {
    /* No longer ours: the lease ran out and the primary destroys it. */
    wp_borrow_free(b);
    fleet__handle_error(&wp->base, FLEET_ESTALE);
    return;
  }
  wp_borrow_schedule(b, wp->opts.borrow_lease_ms / 3);
}

static const fleet__batch_kind_t wp_renew_kind = {
    .op = FLEET__OP_WARMPOOL_RENEW,
    .item_keys = 1,
    .item_args = 4,
    .max_items = FLEET__BATCH_MAX,
    .fill = wp_renew_fill,
    .done = wp_renew_done,
};

static void wp_borrow_schedule(fleet__wp_borrow_t *b, uint64_t delay) {
  fleet__warmpool_t *wp = b->wp;

  if (!b->item.linked && b->item.call == NULL &&
      fleet__batch_add(wp->base.client, &b->item, &wp_renew_kind, NULL,
                       uv_now(wp->base.loop) + delay, delay / 4) == 0)
    fleet__handle_hold(&wp->base);
}

static void wp_own_schedule(fleet__warmpool_t *wp, uint64_t delay) {
  fleet__wp_borrow_t *b = wp->own;

  if (b != NULL && !b->item.linked && b->item.call == NULL &&
      fleet__batch_add(wp->base.client, &b->item, &wp_renew_kind, NULL,
                       uv_now(wp->base.loop) + delay, delay / 4) == 0)
    fleet__handle_hold(&wp->base);
}

void fleet__wp_own_start(fleet__warmpool_t *wp) {
  if (wp->own != NULL || wp->base.closing)
    return;
  if ((wp->own = calloc(1, sizeof(*wp->own) + 1)) == NULL) {
    fleet__handle_error(&wp->base, FLEET_ENOMEM);
    return;
  }
  wp->own->wp = wp;
  wp_own_schedule(wp, wp->opts.primary_ttl_ms / 3);
}

void fleet__wp_own_stop(fleet__warmpool_t *wp) {
  fleet__wp_borrow_t *b = wp->own;
  int had;

  if (b == NULL)
    return;
  had = b->item.linked || b->item.call != NULL;
  fleet__batch_remove(wp->base.client, &b->item);
  wp->own = NULL;
  free(b);
  if (had)
    fleet__handle_unhold(&wp->base);
}

void fleet__wp_borrow_add(fleet__warmpool_t *wp, const char *id, size_t len) {
  fleet__wp_borrow_t *b;

  if (wp->opts.borrow_lease_ms == 0 || wp->base.closing)
    return;
  if ((b = calloc(1, sizeof(*b) + len + 1)) == NULL) {
    fleet__handle_error(&wp->base, FLEET_ENOMEM);
    return;
  }
  b->wp = wp;
  b->id_len = len;
  memcpy(b->id, id, len);
  fleet__list_insert_head(&wp->borrows, &b->node);
  wp_borrow_schedule(b, wp->opts.borrow_lease_ms / 3);
}

void fleet__wp_borrow_drop(fleet__warmpool_t *wp, const char *id) {
  FLEET__LIST_FOREACH (n, next, &wp->borrows) {
    fleet__wp_borrow_t *b = FLEET__LIST_DATA(n, fleet__wp_borrow_t, node);
    if (strcmp(b->id, id) == 0) {
      wp_borrow_free(b);
      return;
    }
  }
}

void fleet__wp_borrow_clear(fleet__warmpool_t *wp) {
  fleet__list_t *n;

  while ((n = fleet__list_first(&wp->borrows)) != NULL)
    wp_borrow_free(FLEET__LIST_DATA(n, fleet__wp_borrow_t, node));
}

/* ------------------------------------------------------------------------ */
/* Acquire                                                                  */

static int wp_acquire_send(fleet__warmpool_t *wp, fleet__wp_req_t *req) {
  if (fleet__args_begin(&wp->args, 4, 2) != 0)
    return FLEET_ENOMEM;
  req->kind = FLEET__WP_REQ_ACQUIRE;
  fleet__args_u64(&wp->args, wp->opts.min_remaining_ms);
  fleet__args_u64(&wp->args, wp->opts.borrow_lease_ms);
  fleet__args_bytes(&wp->args, wp->owner, wp->owner_len);
  fleet__args_str(&wp->args, wp->nonce);
  return fleet__wp_send(wp, req, FLEET__OP_WARMPOOL_ACQUIRE);
}

/* The acquire got `id` (its lease renewed from now on when `lease`, else
 * already): the user hears it. */
static void wp_acquired(fleet__warmpool_t *wp, fleet__wp_req_t *req,
                        const char *id, int lease) {
  void *data = req->base.user_data;

  if (lease)
    fleet__wp_borrow_add(wp, id, strlen(id));
  fleet__req_done(&req->base);
  req->cb.acquire(wp->pub, 0, id, data);
}

static void wp_on_give_back(fleet__req_t *r, int status,
                            const fleet__reply_t *reply) {
  fleet__wp_req_t *req = (fleet__wp_req_t *)r;
  fleet__warmpool_t *wp = (fleet__warmpool_t *)r->handle;
  int64_t res = 0;

  fleet__req_done(r);
  if (status == 0 && fleet__reply_i64(reply, &res) != 0)
    status = FLEET_EPROTO;
  if (status != 0)
    fleet__handle_error(&wp->base, status);
  else if (res == 2)
    fleet__wp_destroy(wp, req->id, strlen(req->id), NULL);
}

/* Releases `id` for this node, nobody waiting (a failed check, an acquire
 * cancelled by close): destroyed here when it does not go back to idle. */
static void wp_give_back(fleet__warmpool_t *wp, const char *id, int destroy) {
  fleet__wp_req_t *req = fleet__wp_bg(wp, wp_on_give_back, NULL);
  int err = FLEET_ENOMEM;

  fleet__wp_borrow_drop(wp, id);
  if (req != NULL && fleet__args_begin(&wp->args, 6, 2) == 0) {
    snprintf(req->id, sizeof(req->id), "%s", id);
    fleet__args_str(&wp->args, id);
    fleet__args_bytes(&wp->args, wp->owner, wp->owner_len);
    fleet__args_u64(&wp->args, wp->opts.min_remaining_ms);
    fleet__args_str(&wp->args, destroy ? "1" : "0");
    fleet__args_u64(&wp->args, wp->opts.warmup_timeout_ms);
    fleet__args_str(&wp->args, wp->nonce);
    err = fleet__wp_send(wp, req, FLEET__OP_WARMPOOL_RELEASE);
    req = NULL;
  }
  if (req != NULL)
    fleet__req_free(&req->base);
  if (err != 0)
    fleet__handle_error(&wp->base, err);
}

void fleet__wp_check_done(fleet_warmpool_work_t *w, int status) {
  fleet__warmpool_t *wp = w->wp;
  fleet__wp_req_t *req = w->req;
  int err;

  if (req == NULL) {
    wp_give_back(wp, w->id, status != 0 || wp->base.closing);
    return;
  }
  if (status == 0) {
    wp_acquired(wp, req, w->id, 0);
    return;
  }
  wp_give_back(wp, w->id, 1);
  if (++req->tries >= WP_CHECK_TRIES) {
    wp_fail(wp, req, status);
    return;
  }
  if ((err = wp_acquire_send(wp, req)) != 0)
    wp_fail(wp, req, err);
}

static void wp_on_adopt(fleet__req_t *r, int status,
                        const fleet__reply_t *reply) {
  fleet__wp_req_t *bg = (fleet__wp_req_t *)r;
  fleet__warmpool_t *wp = (fleet__warmpool_t *)r->handle;
  fleet_warmpool_work_t *w = bg->work;
  fleet__wp_req_t *req = w->req;
  int64_t res = 0;

  fleet__req_done(r);
  if (status == 0 && fleet__reply_i64(reply, &res) != 0)
    status = FLEET_EPROTO;
  if (status == 0 && res == 1) {
    if (req != NULL)
      wp_acquired(wp, req, w->id, 1);
    else
      wp_give_back(wp, w->id, 1);
  } else {
    /* Too late (its deadline passed) or unknown: destroyed here. */
    fleet__wp_destroy(wp, w->id, strlen(w->id), NULL);
    if (status != 0)
      fleet__handle_error(&wp->base, status);
    if (req != NULL)
      wp_fail(wp, req, status != 0 ? status : FLEET_ETIMEDOUT);
  }
  fleet__wp_work_free(w);
}

void fleet__wp_direct_done(fleet_warmpool_work_t *w, int status) {
  fleet__warmpool_t *wp = w->wp;
  fleet__wp_req_t *bg;
  int err = FLEET_ENOMEM;

  if (status != 0) {
    if (w->req != NULL)
      wp_fail(wp, w->req, status);
    return;
  }
  bg = fleet__wp_bg(wp, wp_on_adopt, w);
  if (bg != NULL && fleet__args_begin(&wp->args, 6, 3) == 0) {
    fleet__args_str(&wp->args, w->id);
    fleet__args_bytes(&wp->args, wp->owner, wp->owner_len);
    fleet__args_u64(&wp->args, wp->opts.borrow_lease_ms);
    fleet__args_u64(&wp->args, wp->opts.idle_ttl_ms);
    fleet__args_u64(&wp->args, wp->opts.warmup_timeout_ms);
    fleet__args_str(&wp->args, wp->nonce);
    err = fleet__wp_send(wp, bg, FLEET__OP_WARMPOOL_ADOPT);
    bg = NULL;
  }
  if (bg != NULL)
    fleet__req_free(&bg->base);
  if (err != 0) {
    fleet__wp_destroy(wp, w->id, strlen(w->id), NULL);
    if (w->req != NULL)
      wp_fail(wp, w->req, err);
    fleet__wp_work_free(w);
  }
}

static void wp_reply_acquire(fleet__warmpool_t *wp, fleet__wp_req_t *req,
                             const fleet__reply_t *reply) {
  int64_t res = 0;
  fleet_bytes_t id;
  char buf[FLEET_WARMPOOL_ID_MAX + 1];
  int err;

  if (!fleet__reply_is_array(reply, 3) ||
      fleet__reply_i64(&reply->elem[0], &res) != 0 ||
      fleet__reply_bytes(&reply->elem[1], &id) != 0 ||
      id.len > FLEET_WARMPOOL_ID_MAX) {
    wp_fail(wp, req, FLEET_EPROTO);
    return;
  }
  if (res == 1) {
    memcpy(buf, id.base, id.len);
    buf[id.len] = '\0';
    if (wp->cbs.check == NULL) {
      wp_acquired(wp, req, buf, 1);
      return;
    }
    /* Its lease is renewed while the check runs, so that the primary does
     * not take it back meanwhile. */
    fleet__wp_borrow_add(wp, buf, id.len);
    if (fleet__wp_work_start(wp, FLEET__WP_CHECK, buf, id.len, req) != 0) {
      wp_give_back(wp, buf, 0);
      wp_fail(wp, req, FLEET_ENOMEM);
    }
    return;
  }
  if (wp->opts.policy == FLEET_WARMPOOL_FAIL_FAST) {
    wp_fail(wp, req, FLEET_ENOTFOUND);
    return;
  }
  if (fleet__args_begin(&wp->args, 3, 1) != 0) {
    wp_fail(wp, req, FLEET_ENOMEM);
    return;
  }
  req->kind = FLEET__WP_REQ_DIRECT;
  fleet__args_bytes(&wp->args, wp->owner, wp->owner_len);
  fleet__args_u64(&wp->args, wp->opts.warmup_timeout_ms);
  fleet__args_str(&wp->args, wp->nonce);
  if ((err = fleet__wp_send(wp, req, FLEET__OP_WARMPOOL_DIRECT)) != 0)
    wp_fail(wp, req, err);
}

static void wp_reply_direct(fleet__warmpool_t *wp, fleet__wp_req_t *req,
                            const fleet__reply_t *reply) {
  fleet_bytes_t id;
  char buf[FLEET_WARMPOOL_ID_MAX + 1];

  if (fleet__reply_bytes(reply, &id) != 0 || id.len > FLEET_WARMPOOL_ID_MAX) {
    wp_fail(wp, req, FLEET_EPROTO);
    return;
  }
  memcpy(buf, id.base, id.len);
  buf[id.len] = '\0';
  /* The request waits (live, cancelled by close) for the creation. */
  if (fleet__wp_work_start(wp, FLEET__WP_DIRECT, buf, id.len, req) != 0)
    wp_fail(wp, req, FLEET_ENOMEM);
}

int fleet_warmpool_acquire(fleet_warmpool_t *pool, fleet_warmpool_acquire_cb cb,
                           void *user_data) {
  fleet__warmpool_t *wp = fleet__warmpool_of(pool);
  fleet__wp_req_t *req;
  int err;

  if (wp == NULL || cb == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__handle_usable(&wp->base)) != 0)
    return err;
  if (wp->state == FLEET__WP_REFUSED)
    return FLEET_ECONFLICT;
  if ((req = fleet__wp_req(wp, FLEET__WP_REQ_ACQUIRE, user_data)) == NULL)
    return FLEET_ENOMEM;
  req->cb.acquire = cb;
  if ((err = wp_acquire_send(wp, req)) != 0)
    fleet__req_free(&req->base);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Release, resize, drain, snapshot                                         */

int fleet_warmpool_release(fleet_warmpool_t *pool, const char *id, int flags,
                           fleet_status_cb cb, void *user_data) {
  fleet__warmpool_t *wp = fleet__warmpool_of(pool);
  fleet__wp_req_t *req;
  size_t len;
  int err;

  if (wp == NULL || cb == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__str_check(id, FLEET_WARMPOOL_ID_MAX, &len)) != 0)
    return err;
  if ((err = fleet__handle_usable(&wp->base)) != 0)
    return err;
  if (wp->state == FLEET__WP_REFUSED)
    return FLEET_ECONFLICT;
  if ((req = fleet__wp_req_args(wp, FLEET__WP_REQ_RELEASE, user_data, 6, 2)) ==
      NULL)
    return FLEET_ENOMEM;
  req->cb.status = cb;
  memcpy(req->id, id, len + 1);
  fleet__args_bytes(&wp->args, id, len);
  fleet__args_bytes(&wp->args, wp->owner, wp->owner_len);
  fleet__args_u64(&wp->args, wp->opts.min_remaining_ms);
  fleet__args_str(&wp->args,
                  (flags & FLEET_WARMPOOL_RELEASE_DESTROY) ? "1" : "0");
  fleet__args_u64(&wp->args, wp->opts.warmup_timeout_ms);
  fleet__args_str(&wp->args, wp->nonce);
  if ((err = fleet__wp_send(wp, req, FLEET__OP_WARMPOOL_RELEASE)) != 0) {
    fleet__req_free(&req->base);
    return err;
  }
  fleet__wp_borrow_drop(wp, id);
  return 0;
}

int fleet_warmpool_resize(fleet_warmpool_t *pool, uint32_t target,
                          fleet_status_cb cb, void *user_data) {
  fleet__warmpool_t *wp = fleet__warmpool_of(pool);
  fleet__wp_req_t *req;
  int err;

  if (wp == NULL || cb == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__handle_usable(&wp->base)) != 0)
    return err;
  if ((req = fleet__wp_req_args(wp, FLEET__WP_REQ_RESIZE, user_data, 1, 1)) ==
      NULL)
    return FLEET_ENOMEM;
  req->cb.status = cb;
  fleet__args_u64(&wp->args, target);
  if ((err = fleet__wp_send(wp, req, FLEET__OP_WARMPOOL_RESIZE)) != 0)
    fleet__req_free(&req->base);
  return err;
}

void fleet__wp_drain_step(fleet__wp_req_t *req, int destroyed) {
  fleet__warmpool_t *wp = (fleet__warmpool_t *)req->base.handle;
  void *data = req->base.user_data;

  req->drained += destroyed != 0;
  if (--req->pending > 0)
    return;
  fleet__req_done(&req->base);
  req->cb.drain(wp->pub, 0, req->drained, data);
}

int fleet_warmpool_drain(fleet_warmpool_t *pool, fleet_warmpool_drain_cb cb,
                         void *user_data) {
  fleet__warmpool_t *wp = fleet__warmpool_of(pool);
  fleet__wp_req_t *req;
  int err;

  if (wp == NULL || cb == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__handle_usable(&wp->base)) != 0)
    return err;
  if ((req = fleet__wp_req_args(wp, FLEET__WP_REQ_DRAIN, user_data, 2, 2)) ==
      NULL)
    return FLEET_ENOMEM;
  req->cb.drain = cb;
  fleet__args_u64(&wp->args, wp->opts.warmup_timeout_ms);
  fleet__args_u64(&wp->args, WP_DRAIN_MAX);
  if ((err = fleet__wp_send(wp, req, FLEET__OP_WARMPOOL_DRAIN)) != 0)
    fleet__req_free(&req->base);
  return err;
}

static void wp_reply_drain(fleet__warmpool_t *wp, fleet__wp_req_t *req,
                           const fleet__reply_t *reply) {
  size_t i;

  if (!fleet__reply_is_array(reply, 0)) {
    wp_fail(wp, req, FLEET_EPROTO);
    return;
  }
  req->pending = 1 + reply->nelem;
  for (i = 0; i < reply->nelem; i++) {
    const fleet__reply_t *e = &reply->elem[i];
    if (e->type == FLEET__REPLY_STR && e->len <= FLEET_WARMPOOL_ID_MAX)
      fleet__wp_destroy(wp, e->str, e->len, req);
    else
      req->pending--;
  }
  fleet__wp_drain_step(req, 0);
}

int fleet_warmpool_snapshot(fleet_warmpool_t *pool,
                            fleet_warmpool_snapshot_cb cb, void *user_data) {
  fleet__warmpool_t *wp = fleet__warmpool_of(pool);
  fleet__wp_req_t *req;
  int err;

  if (wp == NULL || cb == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__handle_usable(&wp->base)) != 0)
    return err;
  if ((req = fleet__wp_req_args(wp, FLEET__WP_REQ_SNAPSHOT, user_data, 1, 1)) ==
      NULL)
    return FLEET_ENOMEM;
  req->cb.snapshot = cb;
  fleet__args_u64(&wp->args, wp->opts.min_remaining_ms);
  if ((err = fleet__wp_send(wp, req, FLEET__OP_WARMPOOL_SNAPSHOT)) != 0)
    fleet__req_free(&req->base);
  return err;
}

/* Copies a reply string into `buf` (truncated). */
static const char *wp_str(const fleet__reply_t *r, char *buf, size_t cap) {
  fleet_bytes_t b;

  if (fleet__reply_bytes(r, &b) != 0)
    b.len = 0;
  if (b.len >= cap)
    b.len = cap - 1;
  if (b.len > 0)
    memcpy(buf, b.base, b.len);
  buf[b.len] = '\0';
  return buf;
}

static void wp_reply_snapshot(fleet__warmpool_t *wp, fleet__wp_req_t *req,
                              const fleet__reply_t *reply) {
  fleet_warmpool_snapshot_t s;
  int64_t v[8];
  uint64_t idle_all = 0;
  char err[512], lease[FLEET_WARMPOOL_OWNER_MAX + 32], fp[40];
  char *colon;
  void *data = req->base.user_data;
  size_t i;

  memset(&s, 0, sizeof(s));
  if (!fleet__reply_is_array(reply, 12)) {
    wp_fail(wp, req, FLEET_EPROTO);
    return;
  }
  for (i = 0; i < 8; i++)
    if (fleet__reply_i64(&reply->elem[i], &v[i]) != 0) {
      wp_fail(wp, req, FLEET_EPROTO);
      return;
    }
  s.target = v[0];
  s.idle = (uint64_t)v[1];
  idle_all = (uint64_t)v[2];
  s.borrowed = (uint64_t)v[3];
  s.creating = (uint64_t)v[4];
  s.destroying = (uint64_t)v[5];
  s.failures = (uint64_t)v[6];
  s.backoff_ms = (uint64_t)v[7];
  s.last_error = wp_str(&reply->elem[8], err, sizeof(err));
  wp_str(&reply->elem[9], lease, sizeof(lease));
  (void)fleet__reply_i64(&reply->elem[10], &s.primary_ttl_ms);
  s.fingerprint = wp_str(&reply->elem[11], fp, sizeof(fp));
  s.primary = "";
  if ((colon = strchr(lease, ':')) != NULL) {
    *colon = '\0';
    s.primary_token = strtoull(lease, NULL, 10);
    s.primary = colon + 1;
  }
  if (s.primary_token == 0) {
    s.state = FLEET_WARMPOOL_STOPPED;
    s.primary_ttl_ms = 0;
  } else if (s.target == 0 && (idle_all > 0 || s.creating > 0))
    s.state = FLEET_WARMPOOL_DRAINING;
  else if (s.failures >= 3)
    s.state = FLEET_WARMPOOL_DEGRADED;
  else
    s.state = FLEET_WARMPOOL_HEALTHY;
  fleet__req_done(&req->base);
  req->cb.snapshot(wp->pub, 0, &s, data);
}

static void wp_reply_release(fleet__warmpool_t *wp, fleet__wp_req_t *req,
                             const fleet__reply_t *reply) {
  int64_t res = 0;
  void *data = req->base.user_data;

  if (fleet__reply_i64(reply, &res) != 0) {
    wp_fail(wp, req, FLEET_EPROTO);
    return;
  }
  if (res == 2)
    fleet__wp_destroy(wp, req->id, strlen(req->id), NULL);
  fleet__req_done(&req->base);
  req->cb.status(wp->base.pub, res == 0 ? FLEET_ESTALE : 0, data);
}

static void wp_on_reply(fleet__req_t *r, int status,
                        const fleet__reply_t *reply) {
  fleet__wp_req_t *req = (fleet__wp_req_t *)r;
  fleet__warmpool_t *wp = (fleet__warmpool_t *)r->handle;
  void *data = r->user_data;

  if (status != 0 && req->kind != FLEET__WP_REQ_START) {
    wp_fail(wp, req, status);
    return;
  }
  switch (req->kind) {
    case FLEET__WP_REQ_START:
      fleet__wp_start_reply(req, status, reply);
      break;
    case FLEET__WP_REQ_ACQUIRE:
      wp_reply_acquire(wp, req, reply);
      break;
    case FLEET__WP_REQ_DIRECT:
      wp_reply_direct(wp, req, reply);
      break;
    case FLEET__WP_REQ_RELEASE:
      wp_reply_release(wp, req, reply);
      break;
    case FLEET__WP_REQ_DRAIN:
      wp_reply_drain(wp, req, reply);
      break;
    case FLEET__WP_REQ_SNAPSHOT:
      wp_reply_snapshot(wp, req, reply);
      break;
    default:
      fleet__req_done(r);
      req->cb.status(wp->base.pub, 0, data);
      break;
  }
}
