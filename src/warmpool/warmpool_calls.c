/* warmpool_calls.c -- the calls of any node of a warm pool: acquire (with
 * its check and its creation on demand), release, resize, drain and
 * snapshot, each with its descriptor, reader and fail hook. They are built
 * on the works of warmpool_works.c and the borrow leases of warmpool.c,
 * which call nothing here. */
#include <stdlib.h>
#include <string.h>

#include "warmpool_int.h"

/* Checks that fail before an acquire gives up. */
#define WP_CHECK_TRIES 3
/* Ids one drain call takes. */
#define WP_DRAIN_MAX 1000
/* What acquire and release need of the node: not refused, handlers. */
#define WP_NEEDS_ALL (FLEET__WP_NOT_REFUSED | FLEET__WP_HANDLERS)

static fleet_warmpool_t *wp_pub(const fleet__req_t *req) {
  return (fleet_warmpool_t *)req->handle->pub;
}

/* The works that wait for `req` (an acquire's creation or check, a
 * drain's destroys) no longer do: the call is over. */
static void wp_works_forget(fleet__req_t *req) {
  fleet__warmpool_t *wp = (fleet__warmpool_t *)req->handle;
  fleet__warmpool_req_t *call = (fleet__warmpool_req_t *)req;

  FLEET__LIST_FOREACH (n, next, &wp->works) {
    fleet_warmpool_work_t *w = FLEET__LIST_DATA(n, fleet_warmpool_work_t, node);
    if (w->req == call)
      w->req = NULL;
  }
}

/* ------------------------------------------------------------------------ */
/* Release                                                                  */

/* Releases, the user's and the node's own give-backs alike, go through
 * the client's batcher: those a node makes in one loop phase share one
 * WARMPOOL_RELEASE call, which carries the node's owner id, nonce and
 * options once and the id and destroy flag of each release, and answers
 * one code per release: 1 back to idle, 2 to be destroyed (here, at once),
 * 0 not this node's. */
static void wp_release_fill_group(fleet__batch_item_t *it, fleet_bytes_t *keys,
                                  fleet_bytes_t *args) {
  fleet__warmpool_req_t *req =
      FLEET__CONTAINER_OF(it, fleet__warmpool_req_t, item);
  fleet__warmpool_t *wp = (fleet__warmpool_t *)req->base.handle;

  keys[0] = fleet__key_bytes(&wp->tag);
  args[0] = (fleet_bytes_t){wp->owner, wp->owner_len};
  args[1] = (fleet_bytes_t){wp->minrem_str, strlen(wp->minrem_str)};
  args[2] = (fleet_bytes_t){wp->claim_str, strlen(wp->claim_str)};
  args[3] = (fleet_bytes_t){wp->nonce, strlen(wp->nonce)};
  args[4] = (fleet_bytes_t){wp->lease_str, strlen(wp->lease_str)};
}

static void wp_release_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                            fleet_bytes_t *args) {
  fleet__warmpool_req_t *req =
      FLEET__CONTAINER_OF(it, fleet__warmpool_req_t, item);

  (void)keys;
  args[0] = (fleet_bytes_t){req->id, strlen(req->id)};
  args[1] = (fleet_bytes_t){req->destroy ? "1" : "0", 1};
}

static void wp_release_done(fleet__batch_item_t *it, int status,
                            const fleet__reply_t *head,
                            const fleet__reply_t *elem, uint64_t sent);

static const fleet__batch_kind_t wp_release_kind = {
    .op = FLEET__OP_WARMPOOL_RELEASE,
    .group_keys = 1,
    .group_args = 5,
    .item_args = 2,
    .max_items = 128,
    .fill_group = wp_release_fill_group,
    .fill = wp_release_fill,
    .done = wp_release_done,
};

/* Takes a release off the batcher, when it is on it (a close cancels
 * it). */
static void wp_release_unbatch(fleet__warmpool_req_t *req) {
  if (req->batched) {
    req->batched = 0;
    fleet__batch_remove(req->base.handle->client, &req->item);
    fleet__handle_unhold(req->base.handle);
  }
}

/* Queues a release of `id` (`len` bytes) by this node, destroying it when
 * `destroy`: the user's `call`, or a give back that nobody waits for.
 * Returns 0, or an error and nothing is left behind. */
static int wp_release_send(fleet__warmpool_t *wp, const fleet__call_t *call,
                           fleet__fn_t cb, void *user_data, const char *id,
                           size_t len, int destroy) {
  fleet__warmpool_req_t *req;
  int err;

  if (wp->base.client->closing)
    return FLEET_ECLOSING;
  req =
      (fleet__warmpool_req_t *)fleet__call_new(&wp->base, call, cb, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  memcpy(req->id, id, len);
  req->id[len] = '\0';
  req->destroy = destroy;
  memset(&req->item, 0, sizeof(req->item));
  err = fleet__batch_now(wp->base.client, &req->item, &wp_release_kind, wp);
  if (err != 0) {
    fleet__req_free(&req->base);
    return err;
  }
  req->batched = 1;
  fleet__handle_hold(&wp->base);
  return 0;
}

/* Reads a release's code: `*res` 1 released, 2 released and to be
 * destroyed (here, at once), 0 not this node's. Returns `status` or
 * FLEET_EPROTO. */
static int wp_release_read(fleet__warmpool_req_t *req, int status,
                           const fleet__reply_t *elem, int64_t *res) {
  *res = 0;
  if (status == 0 && (fleet__reply_i64(elem, res) != 0 || *res < 0 || *res > 2))
    status = FLEET_EPROTO;
  if (status == 0 && *res == 2)
    fleet__warmpool_destroy((fleet__warmpool_t *)req->base.handle, req->id,
                            strlen(req->id), NULL, NULL);
  return status;
}

/* The user's release: its fail hook takes it off the batcher first (a
 * close cancels it there). */
static void wp_release_fail(fleet__req_t *r, int status) {
  wp_release_unbatch((fleet__warmpool_req_t *)r);
  fleet__call_fail_status(r, status);
}

static const fleet__call_t wp_release_call = {
    "warmpool.release", FLEET__OP_WARMPOOL_RELEASE, NULL, wp_release_fail};

/* A release of the node's own, nobody waiting. */
static const fleet__call_t wp_give_back_call = {
    "warmpool.give_back", FLEET__OP_WARMPOOL_RELEASE, NULL, NULL};

static void wp_release_done(fleet__batch_item_t *it, int status,
                            const fleet__reply_t *head,
                            const fleet__reply_t *elem, uint64_t sent) {
  fleet__warmpool_req_t *req =
      FLEET__CONTAINER_OF(it, fleet__warmpool_req_t, item);
  fleet__warmpool_t *wp = (fleet__warmpool_t *)req->base.handle;
  int64_t res;

  (void)head;
  (void)sent;
  req->batched = 0;
  if (req->base.call == &wp_give_back_call) {
    status = wp_release_read(req, status, elem, &res);
    fleet__req_done(&req->base);
    if (status != 0)
      fleet__handle_error(&wp->base, status);
  } else if (!wp->base.closing) {
    /* (A closing node's base cancels the user's release: it tells the
     * user, as for a reply that comes after the close.) */
    status = wp_release_read(req, status, elem, &res);
    fleet__call_finish(&req->base,
                       status == 0 && res == 0 ? FLEET_ESTALE : status);
  }
  fleet__handle_unhold(&wp->base);
}

/* Releases `id` for this node, nobody waiting (a failed check, an acquire
 * cancelled by close): destroyed here when it does not go back to idle. */
static void wp_give_back(fleet__warmpool_t *wp, const char *id, int destroy) {
  int err;

  fleet__warmpool_borrow_drop(wp, id);
  err = wp_release_send(wp, &wp_give_back_call, NULL, NULL, id, strlen(id),
                        destroy);
  if (err != 0)
    fleet__handle_error(&wp->base, err);
}

int fleet_warmpool_release(fleet_warmpool_t *pool, const char *id, int flags,
                           fleet_status_cb cb, void *user_data) {
  fleet__warmpool_t *wp;
  size_t len;
  int err;

  /* A bad id is refused first, by an open node or not. */
  if (fleet__warmpool_of(pool) == NULL || cb == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__str_check(id, FLEET_WARMPOOL_ID_MAX, &len)) != 0)
    return err;
  if ((wp = fleet__warmpool_enter(pool, (fleet__fn_t)cb, WP_NEEDS_ALL, 0, 0,
                                  &err)) == NULL)
    return err;
  err = wp_release_send(wp, &wp_release_call, (fleet__fn_t)cb, user_data, id,
                        len, (flags & FLEET_WARMPOOL_RELEASE_DESTROY) != 0);
  if (err == 0)
    fleet__warmpool_borrow_drop(wp, id);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Acquire                                                                  */

static void wp_acquire_back(fleet__req_t *req, int status, const char *id) {
  fleet_warmpool_acquire_cb cb = (fleet_warmpool_acquire_cb)req->cb;

  cb(wp_pub(req), status, id, req->user_data);
}

static void wp_fail_acquire(fleet__req_t *req, int status) {
  wp_works_forget(req);
  wp_acquire_back(req, status, NULL);
}

/* Adds an acquire's arguments to wp->args, begun for 4 of which 2 are
 * numbers. */
static void wp_acquire_args(fleet__warmpool_t *wp) {
  fleet__args_u64(&wp->args, wp->opts.min_remaining_ms);
  fleet__args_u64(&wp->args, wp->opts.borrow_lease_ms);
  fleet__args_bytes(&wp->args, wp->owner, wp->owner_len);
  fleet__args_str(&wp->args, wp->nonce);
}

/* The acquire got `id` (its lease renewed from now on when `lease`, else
 * already): the user hears it. */
static void wp_acquired(fleet__warmpool_t *wp, fleet__warmpool_req_t *req,
                        const char *id, int lease) {
  if (lease)
    fleet__warmpool_borrow_add(wp, id, strlen(id));
  fleet__req_done(&req->base);
  wp_acquire_back(&req->base, 0, id);
}

/* What follows the check of an acquired resource: the acquire gets it, or
 * it is given back (destroyed) and the acquire tries again, up to
 * WP_CHECK_TRIES checks. */
static void wp_check_done(fleet_warmpool_work_t *w, int status,
                          const char *detail) {
  fleet__warmpool_t *wp = w->wp;
  fleet__warmpool_req_t *req = w->req;
  int err;

  (void)detail;
  if (req == NULL) {
    wp_give_back(wp, w->id, status != 0 || wp->base.closing);
  } else if (status == 0) {
    wp_acquired(wp, req, w->id, 0);
  } else {
    wp_give_back(wp, w->id, 1);
    if (++req->tries >= WP_CHECK_TRIES) {
      fleet__call_finish(&req->base, status);
    } else if (fleet__args_begin(&wp->args, 4, 2) != 0) {
      fleet__call_finish(&req->base, FLEET_ENOMEM);
    } else {
      wp_acquire_args(wp);
      err = fleet__warmpool_send(wp, &req->base, FLEET__OP_WARMPOOL_ACQUIRE, 1);
      if (err != 0)
        fleet__call_finish(&req->base, err);
    }
  }
  fleet__warmpool_work_free(w);
}

static void wp_on_adopt(fleet__req_t *r, int status,
                        const fleet__reply_t *reply) {
  fleet__warmpool_t *wp = (fleet__warmpool_t *)r->handle;
  fleet_warmpool_work_t *w = r->user_data;
  fleet__warmpool_req_t *req = w->req;
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
    fleet__warmpool_destroy(wp, w->id, strlen(w->id), NULL, NULL);
    if (status != 0)
      fleet__handle_error(&wp->base, status);
    if (req != NULL)
      fleet__call_finish(&req->base, status != 0 ? status : FLEET_ETIMEDOUT);
  }
  fleet__warmpool_work_free(w);
}

/* A resource created on demand is adopted by the acquire that reserved
 * it; the call's user data is the creation's work. */
static const fleet__call_t wp_adopt_call = {
    "warmpool.adopt", FLEET__OP_WARMPOOL_ADOPT, wp_on_adopt, NULL};

/* What follows a creation on demand: adopted for its acquire when
 * created, recorded for the backoff when not. */
static void wp_direct_done(fleet_warmpool_work_t *w, int status,
                           const char *detail) {
  fleet__warmpool_t *wp = w->wp;
  int err = FLEET_ENOMEM;

  if (status != 0) {
    if (w->req != NULL)
      fleet__call_finish(&w->req->base, status);
    fleet__warmpool_create_failed(wp, w->id, status, detail);
    fleet__warmpool_work_free(w);
    return;
  }
  if (fleet__args_begin(&wp->args, 6, 3) == 0) {
    fleet__args_str(&wp->args, w->id);
    fleet__args_bytes(&wp->args, wp->owner, wp->owner_len);
    fleet__args_u64(&wp->args, wp->opts.borrow_lease_ms);
    fleet__args_u64(&wp->args, wp->opts.idle_ttl_ms);
    fleet__args_u64(&wp->args, wp->opts.warmup_timeout_ms);
    fleet__args_str(&wp->args, wp->nonce);
    err = fleet__warmpool_call(wp, &wp_adopt_call, NULL, w);
  }
  if (err != 0) {
    fleet__warmpool_destroy(wp, w->id, strlen(w->id), NULL, NULL);
    if (w->req != NULL)
      fleet__call_finish(&w->req->base, err);
    fleet__warmpool_work_free(w);
  }
}

/* Copies the id of a reply (at most FLEET_WARMPOOL_ID_MAX bytes) into
 * `buf`. Returns its length, or -1 for another reply. */
static int wp_reply_id(const fleet__reply_t *r, char *buf) {
  fleet_bytes_t id;

  if (fleet__reply_bytes(r, &id) != 0 || id.len > FLEET_WARMPOOL_ID_MAX)
    return -1;
  memcpy(buf, id.base, id.len);
  buf[id.len] = '\0';
  return (int)id.len;
}

/* The reply to an acquire's creation on demand: the id reserved for it,
 * whose creation the acquire waits for (live, cancelled by close). */
static void wp_on_direct(fleet__req_t *r, int status,
                         const fleet__reply_t *reply) {
  fleet__warmpool_t *wp = (fleet__warmpool_t *)r->handle;
  char buf[FLEET_WARMPOOL_ID_MAX + 1];
  int len = status == 0 ? wp_reply_id(reply, buf) : -1;

  if (len < 0)
    fleet__call_finish(r, status != 0 ? status : FLEET_EPROTO);
  else if (fleet__warmpool_work_start(wp, FLEET__WARMPOOL_CREATE,
                                      wp_direct_done, buf, (size_t)len,
                                      (fleet__warmpool_req_t *)r) != 0)
    fleet__call_finish(r, FLEET_ENOMEM);
}

/* An acquire found no idle resource: it fails, or reserves a creation on
 * demand (the request's next reply goes to wp_on_direct()). */
static void wp_acquire_direct(fleet__warmpool_t *wp, fleet__req_t *r) {
  int err;

  if (wp->opts.policy == FLEET_WARMPOOL_FAIL_FAST) {
    fleet__call_finish(r, FLEET_ENOTFOUND);
    return;
  }
  if (fleet__args_begin(&wp->args, 3, 1) != 0) {
    fleet__call_finish(r, FLEET_ENOMEM);
    return;
  }
  fleet__args_bytes(&wp->args, wp->owner, wp->owner_len);
  fleet__args_u64(&wp->args, wp->opts.warmup_timeout_ms);
  fleet__args_str(&wp->args, wp->nonce);
  r->on_reply = wp_on_direct;
  if ((err = fleet__warmpool_send(wp, r, FLEET__OP_WARMPOOL_DIRECT, 1)) != 0)
    fleet__call_finish(r, err);
}

static void wp_on_acquire(fleet__req_t *r, int status,
                          const fleet__reply_t *reply) {
  fleet__warmpool_t *wp = (fleet__warmpool_t *)r->handle;
  fleet__warmpool_req_t *req = (fleet__warmpool_req_t *)r;
  char buf[FLEET_WARMPOOL_ID_MAX + 1];
  int64_t res = 0;
  int len = -1;

  if (status == 0 && (!fleet__reply_is_array(reply, 3) ||
                      fleet__reply_i64(&reply->elem[0], &res) != 0 ||
                      (len = wp_reply_id(&reply->elem[1], buf)) < 0))
    status = FLEET_EPROTO;
  if (status != 0) {
    fleet__call_finish(r, status);
  } else if (res != 1) {
    wp_acquire_direct(wp, r);
  } else if (wp->h.check_cb == NULL) {
    wp_acquired(wp, req, buf, 1);
  } else {
    /* Its lease is renewed while the check runs, so that the primary does
     * not take it back meanwhile. */
    fleet__warmpool_borrow_add(wp, buf, (size_t)len);
    if (fleet__warmpool_work_start(wp, FLEET__WARMPOOL_CHECK, wp_check_done,
                                   buf, (size_t)len, req) != 0) {
      wp_give_back(wp, buf, 0);
      fleet__call_finish(r, FLEET_ENOMEM);
    }
  }
}

static const fleet__call_t wp_acquire_call = {"warmpool.acquire",
                                              FLEET__OP_WARMPOOL_ACQUIRE,
                                              wp_on_acquire, wp_fail_acquire};

int fleet_warmpool_acquire(fleet_warmpool_t *pool, fleet_warmpool_acquire_cb cb,
                           void *user_data) {
  fleet__warmpool_t *wp;
  int err;

  if ((wp = fleet__warmpool_enter(pool, (fleet__fn_t)cb, WP_NEEDS_ALL, 4, 2,
                                  &err)) == NULL)
    return err;
  wp_acquire_args(wp);
  return fleet__warmpool_call(wp, &wp_acquire_call, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Resize                                                                   */

static void wp_on_resize(fleet__req_t *req, int status,
                         const fleet__reply_t *reply) {
  (void)reply;
  fleet__call_finish(req, status);
}

static const fleet__call_t wp_resize_call = {
    "warmpool.resize", FLEET__OP_WARMPOOL_RESIZE, wp_on_resize,
    fleet__call_fail_status};

int fleet_warmpool_resize(fleet_warmpool_t *pool, uint32_t target,
                          fleet_status_cb cb, void *user_data) {
  fleet__warmpool_t *wp;
  int err;

  if ((wp = fleet__warmpool_enter(pool, (fleet__fn_t)cb, 0, 1, 1, &err)) ==
      NULL)
    return err;
  fleet__args_u64(&wp->args, target);
  return fleet__warmpool_call(wp, &wp_resize_call, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Drain                                                                    */

static void wp_drain_back(fleet__req_t *r, int status) {
  fleet__warmpool_req_t *req = (fleet__warmpool_req_t *)r;
  fleet_warmpool_drain_cb cb = (fleet_warmpool_drain_cb)r->cb;

  cb(wp_pub(r), status, req->drained, r->user_data);
}

static void wp_fail_drain(fleet__req_t *req, int status) {
  wp_works_forget(req);
  wp_drain_back(req, status);
}

/* One of the drain's destroys is over (`destroyed` when it succeeded);
 * the drain ends with its last. */
static void wp_drain_step(fleet__warmpool_req_t *req, int destroyed) {
  req->drained += destroyed != 0;
  if (--req->pending > 0)
    return;
  fleet__req_done(&req->base);
  wp_drain_back(&req->base, 0);
}

static void wp_drain_destroy_done(fleet_warmpool_work_t *w, int status,
                                  const char *detail) {
  fleet__warmpool_req_t *req = w->req;

  fleet__warmpool_destroy_done(w, status, detail);
  if (req != NULL)
    wp_drain_step(req, status == 0);
}

/* The reply: the ids taken from idle, each destroyed here. */
static void wp_on_drain(fleet__req_t *r, int status,
                        const fleet__reply_t *reply) {
  fleet__warmpool_t *wp = (fleet__warmpool_t *)r->handle;
  fleet__warmpool_req_t *req = (fleet__warmpool_req_t *)r;
  size_t i;

  if (status == 0 && !fleet__reply_is_array(reply, 0))
    status = FLEET_EPROTO;
  if (status != 0) {
    fleet__call_finish(r, status);
    return;
  }
  /* One more than the ids, so that the drain ends after the loop. */
  req->pending = 1 + reply->nelem;
  for (i = 0; i < reply->nelem; i++) {
    const fleet__reply_t *e = &reply->elem[i];
    if (e->type != FLEET__REPLY_STR || e->len > FLEET_WARMPOOL_ID_MAX ||
        !fleet__warmpool_destroy(wp, e->str, e->len, wp_drain_destroy_done,
                                 req))
      req->pending--;
  }
  wp_drain_step(req, 0);
}

static const fleet__call_t wp_drain_call = {
    "warmpool.drain", FLEET__OP_WARMPOOL_DRAIN, wp_on_drain, wp_fail_drain};

int fleet_warmpool_drain(fleet_warmpool_t *pool, fleet_warmpool_drain_cb cb,
                         void *user_data) {
  fleet__warmpool_t *wp;
  int err;

  if ((wp = fleet__warmpool_enter(pool, (fleet__fn_t)cb, FLEET__WP_HANDLERS, 2,
                                  2, &err)) == NULL)
    return err;
  fleet__args_u64(&wp->args, wp->opts.warmup_timeout_ms);
  fleet__args_u64(&wp->args, WP_DRAIN_MAX);
  return fleet__warmpool_call(wp, &wp_drain_call, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Snapshot                                                                 */

static void wp_snapshot_back(fleet__req_t *req, int status,
                             const fleet_warmpool_snapshot_t *s) {
  fleet_warmpool_snapshot_cb cb = (fleet_warmpool_snapshot_cb)req->cb;

  cb(wp_pub(req), status, s, req->user_data);
}

static void wp_fail_snapshot(fleet__req_t *req, int status) {
  wp_snapshot_back(req, status, NULL);
}

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

static void wp_on_snapshot(fleet__req_t *req, int status,
                           const fleet__reply_t *reply) {
  fleet_warmpool_snapshot_t s;
  int64_t v[8];
  uint64_t idle_all = 0;
  char err[512], lease[FLEET_WARMPOOL_OWNER_MAX + 32], fp[40];
  char *colon;
  size_t i;

  memset(&s, 0, sizeof(s));
  if (status == 0 && !fleet__reply_is_array(reply, 12))
    status = FLEET_EPROTO;
  for (i = 0; status == 0 && i < 8; i++)
    if (fleet__reply_i64(&reply->elem[i], &v[i]) != 0)
      status = FLEET_EPROTO;
  if (status != 0) {
    fleet__call_finish(req, status);
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
  fleet__req_done(req);
  wp_snapshot_back(req, 0, &s);
}

static const fleet__call_t wp_snapshot_call = {
    "warmpool.snapshot", FLEET__OP_WARMPOOL_SNAPSHOT, wp_on_snapshot,
    wp_fail_snapshot};

int fleet_warmpool_snapshot(fleet_warmpool_t *pool,
                            fleet_warmpool_snapshot_cb cb, void *user_data) {
  fleet__warmpool_t *wp;
  int err;

  if ((wp = fleet__warmpool_enter(pool, (fleet__fn_t)cb, 0, 1, 1, &err)) ==
      NULL)
    return err;
  fleet__args_u64(&wp->args, wp->opts.min_remaining_ms);
  return fleet__warmpool_call(wp, &wp_snapshot_call, (fleet__fn_t)cb,
                              user_data);
}
