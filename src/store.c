/* store.c -- the store handle: options, init and close, the pool of
 * requests and reply dispatch, names and keys, ping. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

static void store_call_empty(fleet_store_t *pub, fleet__store_cb_type_t type,
                             const fleet__store_req_t *req, int status);

/* ------------------------------------------------------------------------ */
/* Options and lifecycle                                                    */

void fleet_store_options_init(fleet_store_options_t *o) {
  memset(o, 0, sizeof(*o));
  o->ttl_ms = FLEET_STORE_DEFAULT_TTL_MS;
  o->max_value_bytes = FLEET_STORE_DEFAULT_VALUE_MAX;
}

/* Whether `p` is a valid store prefix: 1 to FLEET__PREFIX_MAX bytes, no
 * '{' or '}' (they would move the keys' hash tag). */
static int store_prefix_valid(const char *p) {
  size_t len = strlen(p);
  return len > 0 && len <= FLEET__PREFIX_MAX && strchr(p, '{') == NULL &&
         strchr(p, '}') == NULL;
}

/* Copies the prefix: the option's, or "<client prefix>:store". */
static char *store_prefix_dup(fleet_client_t *client, const char *prefix) {
  const char *cp;
  size_t len;
  char *p;

  if (prefix != NULL)
    return fleet__strdup(prefix);
  cp = fleet_client_prefix(client);
  len = strlen(cp) + sizeof(":store");
  p = malloc(len);
  if (p != NULL)
    snprintf(p, len, "%s:store", cp);
  return p;
}

int fleet_store_init(fleet_client_t *client, fleet_store_t *store,
                     const fleet_store_options_t *options) {
  fleet_store_options_t o;
  struct fleet__store_s *s;

  if (client == NULL || store == NULL || client->internal_ == NULL)
    return FLEET_EINVAL;
  store->internal_ = NULL;
  if (!fleet__client_usable(client))
    return FLEET_ECLOSING;
  fleet_store_options_init(&o);
  if (options != NULL) {
    o.prefix = options->prefix;
    if (options->ttl_ms != 0)
      o.ttl_ms = options->ttl_ms;
    if (options->max_value_bytes != 0)
      o.max_value_bytes = options->max_value_bytes;
    o.max_events = options->max_events;
  }
  if ((o.prefix != NULL && !store_prefix_valid(o.prefix)) ||
      o.ttl_ms > FLEET_STORE_TTL_MAX_MS ||
      o.max_value_bytes > FLEET_STORE_VALUE_MAX_LIMIT ||
      o.max_events > INT32_MAX)
    return FLEET_EINVAL;

  s = calloc(1, sizeof(*s));
  if (s == NULL)
    return FLEET_ENOMEM;
  s->prefix = store_prefix_dup(client, o.prefix);
  if (s->prefix == NULL) {
    free(s);
    return FLEET_ENOMEM;
  }
  /* The default prefix adds ":store" to the client's, which may make it
   * too long. */
  if (!store_prefix_valid(s->prefix)) {
    free(s->prefix);
    free(s);
    return FLEET_EINVAL;
  }
  s->prefix_len = strlen(s->prefix);
  s->pub = store;
  s->client = client;
  s->ttl_ms = o.ttl_ms;
  s->max_value = o.max_value_bytes;
  s->max_events = o.max_events;
  if (uv_timer_init(fleet_client_loop(client), &s->handle) != 0) {
    free(s->prefix);
    free(s);
    return FLEET_ENOMEM;
  }
  store->internal_ = s;
  return 0;
}

static void store_free(struct fleet__store_s *s) {
  size_t i;

  while (s->free_reqs != NULL) {
    fleet__store_req_t *req = s->free_reqs;
    s->free_reqs = req->next;
    free(req);
  }
  fleet__key_free(&s->base);
  fleet__key_free(&s->rec);
  fleet__key_free(&s->ev);
  for (i = 0; i < FLEET_STORE_INDEXES_MAX; i++)
    fleet__key_free(&s->idx[i]);
  fleet__key_free(&s->cursor_out);
  fleet__key_free(&s->pattern);
  free(s->unlink_keys);
  free(s->prefix);
  free(s);
}

/* The second half of closing, on a later loop iteration: every request
 * still pending completes with FLEET_ECANCELED (one whose op is still with
 * the backend is left for the reply to free), then the store is freed and
 * the close callback runs. */
static void store_on_closed(uv_handle_t *handle) {
  struct fleet__store_s *s =
      FLEET__CONTAINER_OF((uv_timer_t *)handle, struct fleet__store_s, handle);
  fleet_store_t *pub = s->pub;
  fleet_store_close_cb close_cb = s->close_cb;

  /* Every pending request has an op with the backend, whose reply will
   * free it: it must outlive the store. Calls made from the callbacks
   * give FLEET_ECLOSING, so the list only shrinks. */
  while (s->pending != NULL) {
    fleet__store_req_t *req = s->pending;
    s->pending = req->next;
    if (s->pending != NULL)
      s->pending->prev = NULL;
    req->store = NULL;
    store_call_empty(pub, req->cb_type, req, FLEET_ECANCELED);
  }
  pub->internal_ = NULL;
  store_free(s);
  if (close_cb != NULL)
    close_cb(pub);
}

int fleet_store_close(fleet_store_t *store, fleet_store_close_cb close_cb) {
  struct fleet__store_s *s;

  if (store == NULL || store->internal_ == NULL)
    return FLEET_EINVAL;
  s = store->internal_;
  if (s->closing)
    return FLEET_ECLOSING;
  s->closing = 1;
  s->close_cb = close_cb;
  uv_close((uv_handle_t *)&s->handle, store_on_closed);
  return 0;
}

const char *fleet_store_prefix(const fleet_store_t *store) {
  return store != NULL && store->internal_ != NULL ? store->internal_->prefix
                                                   : NULL;
}

/* ------------------------------------------------------------------------ */
/* Requests                                                                 */

struct fleet__store_s *fleet__store_enter(fleet_store_t *store, int has_cb,
                                          int *err) {
  struct fleet__store_s *s;

  if (store == NULL || store->internal_ == NULL || !has_cb) {
    *err = FLEET_EINVAL;
    return NULL;
  }
  s = store->internal_;
  if (s->closing || !fleet__client_usable(s->client)) {
    *err = FLEET_ECLOSING;
    return NULL;
  }
  *err = 0;
  return s;
}

fleet__store_req_t *fleet__store_req_get(struct fleet__store_s *s,
                                         fleet__store_cb_type_t type,
                                         void *user_data,
                                         fleet__store_reply_fn on_reply) {
  fleet__store_req_t *req = s->free_reqs;

  if (req != NULL)
    s->free_reqs = req->next;
  else if ((req = malloc(sizeof(*req))) == NULL)
    return NULL;
  memset(req, 0, sizeof(*req));
  req->store = s;
  req->cb_type = type;
  req->on_reply = on_reply;
  req->user_data = user_data;
  return req;
}

static int store_req_pending(const fleet__store_req_t *req) {
  return req->prev != NULL || req->store->pending == req;
}

static void store_req_put(fleet__store_req_t *req) {
  struct fleet__store_s *s = req->store;
  req->prev = NULL;
  req->next = s->free_reqs;
  s->free_reqs = req;
}

void fleet__store_req_done(fleet__store_req_t *req) {
  struct fleet__store_s *s = req->store;

  if (req->prev != NULL)
    req->prev->next = req->next;
  else
    s->pending = req->next;
  if (req->next != NULL)
    req->next->prev = req->prev;
  store_req_put(req);
}

/* A backend reply: a request orphaned by close is freed, a request of a
 * closing store is cancelled, any other goes to its op's handler. */
static void store_on_reply(void *arg, int status, const fleet__reply_t *reply) {
  fleet__store_req_t *req = arg;

  if (req->store == NULL) {
    free(req);
    return;
  }
  if (req->store->closing) {
    fleet__store_finish(req, FLEET_ECANCELED);
    return;
  }
  req->on_reply(req, status, reply);
}

int fleet__store_send(fleet__store_req_t *req, fleet__op_t op,
                      const fleet_bytes_t *keys, size_t nkeys,
                      const fleet_bytes_t *args, size_t nargs) {
  struct fleet__store_s *s = req->store;
  int err;

  err = fleet__backend_call(fleet__client_backend(s->client), op, keys, nkeys,
                            args, nargs, store_on_reply, req);
  if (store_req_pending(req))
    return err;
  if (err != 0) {
    store_req_put(req);
    return err;
  }
  req->prev = NULL;
  req->next = s->pending;
  if (s->pending != NULL)
    s->pending->prev = req;
  s->pending = req;
  return 0;
}

/* Runs the callback of a request of type `type` with `status` and empty
 * results. */
static void store_call_empty(fleet_store_t *pub, fleet__store_cb_type_t type,
                             const fleet__store_req_t *req, int status) {
  fleet_bytes_t none = {NULL, 0};
  void *ud = req->user_data;

  switch (type) {
    case FLEET__STORE_CB_DONE:
      req->cb.done(pub, status, ud);
      break;
    case FLEET__STORE_CB_GET:
      req->cb.get(pub, status, none, 0, ud);
      break;
    case FLEET__STORE_CB_COUNT:
      req->cb.count(pub, status, 0, ud);
      break;
    case FLEET__STORE_CB_EVENTS:
      req->cb.events(pub, status, NULL, 0, ud);
      break;
    case FLEET__STORE_CB_LIST:
      req->cb.list(pub, status, NULL, 0, none, ud);
      break;
  }
}

void fleet__store_finish(fleet__store_req_t *req, int status) {
  fleet__store_req_t copy = *req;
  fleet_store_t *pub = req->store->pub;

  fleet__store_req_done(req);
  store_call_empty(pub, copy.cb_type, &copy, status);
}

/* ------------------------------------------------------------------------ */
/* Names and keys                                                           */

int fleet__store_bytes_valid(fleet_bytes_t b, size_t max) {
  return b.base != NULL && b.len > 0 && b.len <= max;
}

int fleet__store_collection_valid(fleet_bytes_t b) {
  return fleet__store_bytes_valid(b, FLEET_STORE_NAME_MAX) &&
         memchr(b.base, '}', b.len) == NULL;
}

int fleet__store_index_valid(const fleet_store_index_t *ix) {
  return fleet__store_bytes_valid(ix->name, FLEET_STORE_INDEX_NAME_MAX) &&
         memchr(ix->name.base, ':', ix->name.len) == NULL &&
         fleet__store_bytes_valid(ix->value, FLEET_STORE_NAME_MAX);
}

int fleet__store_buf_add(fleet__key_t *key, const void *p, size_t len) {
  if (key->len + len > key->cap) {
    size_t cap = key->cap > 0 ? key->cap : 64;
    char *grown;
    while (cap < key->len + len)
      cap *= 2;
    grown = realloc(key->base, cap);
    if (grown == NULL)
      return FLEET_ENOMEM;
    key->base = grown;
    key->cap = cap;
  }
  if (len > 0)
    memcpy(key->base + key->len, p, len);
  key->len += len;
  return 0;
}

int fleet__store_base(struct fleet__store_s *s, fleet_bytes_t collection) {
  int err = fleet__key_build(&s->base, s->prefix, s->prefix_len,
                             collection.base, collection.len, NULL);
  return err != 0 ? err : fleet__store_buf_add(&s->base, ":", 1);
}

int fleet__store_key(struct fleet__store_s *s, fleet__key_t *key,
                     const char *part, fleet_bytes_t a,
                     const fleet_bytes_t *b) {
  int err;

  key->len = 0;
  err = fleet__store_buf_add(key, s->base.base, s->base.len);
  if (err == 0)
    err = fleet__store_buf_add(key, part, strlen(part));
  if (err == 0)
    err = fleet__store_buf_add(key, a.base, a.len);
  if (err == 0 && b != NULL)
    err = fleet__store_buf_add(key, ":", 1);
  if (err == 0 && b != NULL)
    err = fleet__store_buf_add(key, b->base, b->len);
  return err;
}

int fleet__store_record_keys(struct fleet__store_s *s, fleet_bytes_t collection,
                             fleet_bytes_t id) {
  int err;

  if (!fleet__store_collection_valid(collection) ||
      !fleet__store_bytes_valid(id, FLEET_STORE_NAME_MAX))
    return FLEET_EINVAL;
  err = fleet__store_base(s, collection);
  if (err == 0)
    err = fleet__store_key(s, &s->rec, "rec:", id, NULL);
  if (err == 0)
    err = fleet__store_key(s, &s->ev, "ev:", id, NULL);
  if (err != 0)
    return err;
  s->keys[0] = fleet__key_bytes(&s->rec);
  s->keys[1] = fleet__key_bytes(&s->ev);
  return 0;
}

fleet_bytes_t fleet__store_num(struct fleet__store_s *s, int slot, uint64_t v) {
  fleet_bytes_t b;
  int n = snprintf(s->num[slot], sizeof(s->num[slot]), "%llu",
                   (unsigned long long)v);
  b.base = s->num[slot];
  b.len = (size_t)n;
  return b;
}

/* ------------------------------------------------------------------------ */
/* Ping                                                                     */

static void store_on_ping(fleet__store_req_t *req, int status,
                          const fleet__reply_t *reply) {
  if (status == 0 && !fleet__store_reply_is(reply, FLEET__REPLY_STATUS))
    status = FLEET_EPROTO;
  fleet__store_finish(req, status);
}

int fleet_store_ping(fleet_store_t *store, fleet_store_cb cb, void *user_data) {
  struct fleet__store_s *s;
  fleet__store_req_t *req;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  req = fleet__store_req_get(s, FLEET__STORE_CB_DONE, user_data, store_on_ping);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->cb.done = cb;
  return fleet__store_send(req, FLEET__OP_PING, NULL, 0, NULL, 0);
}
