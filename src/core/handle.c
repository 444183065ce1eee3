/* handle.c -- the handle base and the request base: registration with the
 * client, close with deferred cancellation, pooled requests. See handle.h
 * for the rules. */
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "handle.h"
#include "keys.h"
#include "log.h"

#define HANDLE_TYPE_NAMES(XX) XX(UNKNOWN, "unknown") FLEET_HANDLE_TYPE_MAP(XX)
FLEET__NAME_FN(fleet_handle_type_name, fleet_handle_type_t, HANDLE_TYPE_NAMES)

/* ------------------------------------------------------------------------ */
/* Registration                                                             */

int fleet__handle_init(fleet__handle_t *h, const fleet__handle_vt_t *vt,
                       fleet_client_t *client, fleet_handle_t *pub) {
  if (client == NULL || client->internal_ == NULL)
    return FLEET_EINVAL;
  if (client->internal_->closing)
    return FLEET_ECLOSING;
  memset(h, 0, sizeof(*h));
  h->vt = vt;
  h->pub = pub;
  h->client = client->internal_;
  h->loop = h->client->loop;
  h->metrics = &h->mblock;
  fleet__list_init(&h->live);
  fleet__list_init(&h->pool);
  /* At the head: a walk that is under way does not see it. */
  fleet__list_insert_head(&h->client->handles, &h->node);
  pub->type = vt->type;
  pub->internal_ = h;
  return 0;
}

void fleet__handle_adopt(fleet__handle_t *parent, fleet__handle_t *child) {
  child->internal = 1;
  child->parent = parent;
}

void fleet__handle_abort(fleet__handle_t *h) {
  fleet__list_remove(&h->node);
  h->pub->internal_ = NULL;
  h->pub->type = FLEET_HANDLE_UNKNOWN;
}

fleet__handle_t *fleet__handle_of(const void *pub, fleet_handle_type_t type) {
  const fleet_handle_t *p = pub;

  if (p == NULL || p->internal_ == NULL || p->type != type)
    return NULL;
  return p->internal_;
}

int fleet__handle_usable(const fleet__handle_t *h) {
  if (h == NULL)
    return FLEET_EINVAL;
  if (h->closing || h->client->closing)
    return FLEET_ECLOSING;
  return 0;
}

fleet__backend_t *fleet__handle_backend(const fleet__handle_t *h) {
  return h->client->be;
}

fleet_client_t *fleet_handle_client(const fleet_handle_t *handle) {
  if (handle == NULL || handle->internal_ == NULL)
    return NULL;
  return handle->internal_->client->pub;
}

int fleet_is_closing(const fleet_handle_t *handle) {
  return handle == NULL || handle->internal_ == NULL ||
         handle->internal_->closing;
}

void fleet__handle_error(fleet__handle_t *h, int status) {
  if (!h->closing && h->client->log_cb != NULL)
    fleet__log(h->client, FLEET_LOG_ERROR, "%s %.*s: %s: %s",
               fleet_handle_type_name(h->vt->type), (int)h->metrics->name_len,
               h->metrics->name != NULL ? h->metrics->name : "",
               fleet_strerror(status), fleet_client_last_error(h->client->pub));
  if (h->error_cb == NULL || h->closing)
    return;
  h->error_cb(h->pub, status, fleet_client_last_error(h->client->pub));
}

/* ------------------------------------------------------------------------ */
/* Close                                                                    */

/* Frees the handle once the cancellation ran, no reply is due and nothing
 * holds it: it leaves the client first, so that the close callback may
 * close the client. */
static void handle_maybe_finish(fleet__handle_t *h) {
  struct fleet__client_s *c = h->client;
  fleet_handle_t *pub = h->pub;
  fleet_close_cb cb = h->close_cb;
  fleet__handle_t *parent = h->parent;

  if (!h->closing || !h->cancelled || h->outstanding > 0 || h->holds > 0)
    return;
  fleet__list_remove(&h->node);
  FLEET__LIST_FOREACH (n, next, &h->pool)
    free(FLEET__LIST_DATA(n, fleet__req_t, node));
  pub->internal_ = NULL;
  fleet__metrics_free(&h->mblock);
  h->vt->free(h);
  if (cb != NULL)
    cb(pub);
  /* A client closed while this handle was closing finishes now (not while
   * a parent is still open: the parent is on the client's list). */
  fleet__client_maybe_closed(c);
  /* The parent held since this child's close began may finish now. */
  if (parent != NULL)
    fleet__handle_unhold(parent);
}

/* The close's deferred step, on the loop iteration after the close call:
 * every request still waited for hears FLEET_ECANCELED. The defer timer is
 * closed by now, so the handle holds nothing of libuv's through it. */
static void handle_on_deferred(uv_handle_t *timer) {
  fleet__handle_t *h =
      FLEET__CONTAINER_OF((uv_timer_t *)timer, fleet__handle_t, defer);
  fleet__list_t *n;

  /* A callback run below may close other handles, never this one (it is
   * closing): `h` stays valid while the hold is on. */
  h->holds++;
  if (h->vt->closing != NULL)
    h->vt->closing(h);
  while ((n = fleet__list_first(&h->live)) != NULL) {
    fleet__req_t *req = FLEET__LIST_DATA(n, fleet__req_t, node);
    fleet__req_cancel_fn cancel = req->cancel;
    fleet__req_done(req);
    cancel(req, FLEET_ECANCELED);
  }
  h->cancelled = 1;
  h->holds--;
  handle_maybe_finish(h);
}

int fleet__handle_close(fleet__handle_t *h, fleet_close_cb close_cb) {
  if (h->closing)
    return FLEET_ECLOSING;
  h->closing = 1;
  h->close_cb = close_cb;
  if (h->parent != NULL)
    fleet__handle_hold(h->parent);
  if (h->vt->close != NULL)
    h->vt->close(h);
  for (size_t i = 0; i < FLEET__HANDLE_SUBS_MAX; i++)
    if (h->subs[i] != NULL)
      fleet__handle_unsubscribe(h, h->subs[i]);
  /* A timer that is never started: its close callback comes on the next
   * loop iteration, never inside this call. */
  uv_timer_init(h->loop, &h->defer);
  uv_close((uv_handle_t *)&h->defer, handle_on_deferred);
  return 0;
}

int fleet_close(fleet_handle_t *handle, fleet_close_cb close_cb) {
  if (handle == NULL || handle->internal_ == NULL)
    return FLEET_EINVAL;
  return fleet__handle_close(handle->internal_, close_cb);
}

void fleet__handle_hold(fleet__handle_t *h) {
  h->holds++;
}

void fleet__handle_unhold(fleet__handle_t *h) {
  h->holds--;
  handle_maybe_finish(h);
}

void fleet__handle_timer_init(fleet__handle_t *h, uv_timer_t *timer) {
  uv_timer_init(h->loop, timer);
}

void fleet__handle_uv_closed(uv_handle_t *uvh) {
  fleet__handle_unhold(uvh->data);
}

void fleet__handle_uv_close(fleet__handle_t *h, uv_handle_t *uvh) {
  fleet__handle_hold(h);
  uvh->data = h;
  uv_close(uvh, fleet__handle_uv_closed);
}

/* ------------------------------------------------------------------------ */
/* The end of the loop phase                                                */

void fleet__handle_phase_end_close(fleet__handle_t *h, fleet__phase_end_t *pe) {
  fleet__handle_uv_close(h, (uv_handle_t *)&pe->check);
  fleet__handle_uv_close(h, (uv_handle_t *)&pe->prepare);
}

/* ------------------------------------------------------------------------ */
/* Subscriptions                                                            */

int fleet__handle_subscribe(fleet__handle_t *h, const char *channel, size_t len,
                            fleet__message_cb cb, void *arg,
                            fleet__sub_t **slot) {
  fleet__backend_t *be = fleet__handle_backend(h);
  size_t i;
  int err;

  for (i = 0; i < FLEET__HANDLE_SUBS_MAX && h->subs[i] != NULL; i++)
    ;
  if (*slot != NULL || i == FLEET__HANDLE_SUBS_MAX)
    return FLEET_EINVAL;
  err = be->vt->subscribe(be, channel, len, cb, arg, slot);
  if (err == 0)
    h->subs[i] = slot;
  return err;
}

void fleet__handle_unsubscribe(fleet__handle_t *h, fleet__sub_t **slot) {
  fleet__backend_t *be = fleet__handle_backend(h);

  for (size_t i = 0; i < FLEET__HANDLE_SUBS_MAX; i++)
    if (h->subs[i] == slot)
      h->subs[i] = NULL;
  if (*slot != NULL) {
    be->vt->unsubscribe(be, *slot);
    *slot = NULL;
  }
}

/* ------------------------------------------------------------------------ */
/* Requests                                                                 */

/* Puts a request that is on no list back in its handle's pool. */
static void req_put(fleet__req_t *req) {
  fleet__list_insert_head(&req->handle->pool, &req->node);
}

fleet__req_t *fleet__req_new(fleet__handle_t *h, fleet__req_reply_fn on_reply,
                             fleet__req_cancel_fn cancel, void *user_data) {
  fleet__list_t *n = fleet__list_first(&h->pool);
  fleet__req_t *req;

  if (n != NULL) {
    fleet__list_remove(n);
    req = FLEET__LIST_DATA(n, fleet__req_t, node);
  } else if ((req = malloc(h->vt->req_size)) == NULL) {
    return NULL;
  }
  memset(req, 0, h->vt->req_size);
  fleet__list_init(&req->node);
  req->handle = h;
  req->on_reply = on_reply;
  req->cancel = cancel;
  req->user_data = user_data;
  if (cancel != NULL)
    fleet__list_insert_head(&h->live, &req->node);
  return req;
}

void fleet__req_free(fleet__req_t *req) {
  if (req->cancel != NULL && !req->done)
    fleet__list_remove(&req->node);
  req_put(req);
}

void fleet__req_done(fleet__req_t *req) {
  if (req->done)
    return;
  if (req->cancel != NULL)
    fleet__list_remove(&req->node);
  req->done = 1;
  if (!req->inflight)
    req_put(req);
}

/* Every reply comes here first: a request that is done (cancelled by a
 * close) only goes back to the pool. */
static void req_on_reply(void *arg, int status, const fleet__reply_t *reply) {
  fleet__req_t *req = arg;
  fleet__handle_t *h = req->handle;

  req->inflight = 0;
  h->outstanding--;
  if (req->done) {
    req_put(req);
  } else if (h->closing && req->cancel != NULL) {
    /* The handle is closing: the user hears FLEET_ECANCELED from the
     * deferred cancellation, whatever the reply said. */
  } else {
    /* The request may finish, or send again, from here. */
    h->holds++;
    req->on_reply(req, status, reply);
    h->holds--;
  }
  handle_maybe_finish(h);
}

int fleet__req_send(fleet__req_t *req, fleet__op_t op,
                    const fleet_bytes_t *keys, size_t nkeys,
                    const fleet_bytes_t *args, size_t nargs) {
  fleet__handle_t *h = req->handle;
  int err;

  if (h->client->closing)
    return FLEET_ECLOSING;
  err = fleet__backend_call(h->client->be, op, keys, nkeys, args, nargs,
                            req_on_reply, req);
  if (err != 0)
    return err;
  req->inflight = 1;
  h->outstanding++;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Calls                                                                    */

fleet__handle_t *fleet__call_enter(const void *pub, fleet_handle_type_t type,
                                   int need_cb, int *err) {
  fleet__handle_t *h = fleet__handle_of(pub, type);

  *err = h == NULL || !need_cb ? FLEET_EINVAL : fleet__handle_usable(h);
  return *err == 0 ? h : NULL;
}

fleet__req_t *fleet__call_new(fleet__handle_t *h, const fleet__call_t *call,
                              fleet__fn_t cb, void *user_data) {
  fleet__req_t *req = fleet__req_new(h, call->read, call->fail, user_data);

  if (req != NULL) {
    req->call = call;
    req->cb = cb;
  }
  return req;
}

int fleet__call_send(fleet__req_t *req, const fleet_bytes_t *keys, size_t nkeys,
                     const fleet_bytes_t *args, size_t nargs) {
  int err = fleet__req_send(req, req->call->op, keys, nkeys, args, nargs);

  if (err != 0)
    fleet__req_free(req);
  return err;
}

int fleet__call(fleet__handle_t *h, const fleet__call_t *call, fleet__fn_t cb,
                void *user_data, const fleet_bytes_t *keys, size_t nkeys,
                const fleet_bytes_t *args, size_t nargs) {
  fleet__req_t *req = fleet__call_new(h, call, cb, user_data);

  if (req == NULL)
    return FLEET_ENOMEM;
  return fleet__call_send(req, keys, nkeys, args, nargs);
}

void fleet__call_finish(fleet__req_t *req, int status) {
  fleet__req_cancel_fn fail = req->call->fail;

  fleet__req_done(req);
  if (fail != NULL)
    fail(req, status);
}

void fleet__call_fail_status(fleet__req_t *req, int status) {
  fleet_status_cb cb = (fleet_status_cb)req->cb;

  if (cb != NULL)
    cb(req->handle->pub, status, req->user_data);
}

/* ------------------------------------------------------------------------ */
/* Shared helpers of the primitives' calls and handles                      */

int fleet__call_failed(fleet__req_t *req, int status) {
  if (status == 0)
    return 0;
  fleet__call_finish(req, status);
  return 1;
}

int fleet__call_keyed(fleet__handle_t *h, const fleet__call_t *call,
                      fleet__fn_t cb, void *user_data, const fleet__key_t *key,
                      const fleet__args_t *args) {
  fleet_bytes_t k = fleet__key_bytes(key);

  return fleet__call(h, call, cb, user_data, &k, 1, args->argv, args->argc);
}

int fleet__handle_init_begin(void *pub, const fleet_client_t *client) {
  fleet_handle_t *h = pub;

  if (h == NULL)
    return FLEET_EINVAL;
  h->type = FLEET_HANDLE_UNKNOWN;
  h->internal_ = NULL;
  return client != NULL && client->internal_ != NULL ? 0 : FLEET_EINVAL;
}

int fleet__call_done(fleet__req_t *req, int status) {
  if (fleet__call_failed(req, status))
    return 0;
  fleet__req_done(req);
  return 1;
}

int fleet__handle_close_of(const void *pub, fleet_handle_type_t type,
                           fleet_close_cb close_cb) {
  fleet__handle_t *h = fleet__handle_of(pub, type);

  return h != NULL ? fleet__handle_close(h, close_cb) : FLEET_EINVAL;
}
