/* store.c -- the store handle on the handle base: options, init and close,
 * the count callback shape its calls share, names and keys, ping. The
 * other store files call into this one, never the other way round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/client.h"
#include "store_int.h"

/* ------------------------------------------------------------------------ */
/* Options and lifecycle                                                    */

void fleet_store_options_init(fleet_store_options_t *o) {
  memset(o, 0, sizeof(*o));
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

/* The base's free hook: the last step of closing, before the close
 * callback. */
static void store_free(fleet__handle_t *h) {
  fleet__store_t *s = (fleet__store_t *)h;

  fleet__key_free(&s->pattern);
  fleet__key_free(&s->tag);
  fleet__args_free(&s->keys);
  fleet__args_free(&s->args);
  free(s->events_out);
  free(s->items_out);
  fleet__key_free(&s->cursor_out);
  free(s->prefix);
  free(s);
}

/* The store starts nothing in the background and owes no callback outside
 * of its requests: the base's cancellation and the free hook are all its
 * close needs. */
static const fleet__handle_vt_t store_vt = {
    FLEET_HANDLE_STORE, sizeof(fleet__store_req_t), NULL, NULL, store_free};

int fleet_store_init(fleet_client_t *client, fleet_store_t *store,
                     const fleet_store_options_t *options) {
  fleet_store_options_t o;
  fleet__store_t *s;
  int err;

  if ((err = fleet__handle_init_begin(store, client)) != 0)
    return err;
  fleet_store_options_init(&o);
  if (options != NULL)
    o = *options;
  if (o.ttl_ms == 0)
    o.ttl_ms = FLEET_STORE_DEFAULT_TTL_MS;
  if (o.max_value_bytes == 0)
    o.max_value_bytes = FLEET_STORE_DEFAULT_VALUE_MAX;
  if ((o.prefix != NULL && !store_prefix_valid(o.prefix)) ||
      o.ttl_ms > FLEET_STORE_TTL_MAX_MS ||
      o.max_value_bytes > FLEET_STORE_VALUE_MAX_LIMIT ||
      o.max_events > INT32_MAX)
    return FLEET_EINVAL;

  s = calloc(1, sizeof(*s));
  if (s == NULL)
    return FLEET_ENOMEM;
  err =
      fleet__handle_init(&s->base, &store_vt, client, (fleet_handle_t *)store);
  if (err != 0) {
    free(s);
    return err;
  }
  s->ttl_ms = o.ttl_ms;
  s->max_value = o.max_value_bytes;
  s->max_events = o.max_events;
  s->prefix = store_prefix_dup(client, o.prefix);
  if (s->prefix == NULL) {
    err = FLEET_ENOMEM;
  } else if (!store_prefix_valid(s->prefix)) {
    /* The default prefix adds ":store" to the client's, which may make it
     * too long. */
    err = FLEET_EINVAL;
  } else {
    s->prefix_len = strlen(s->prefix);
    err = fleet__store_scan_pattern(&s->pattern, s->prefix, s->prefix_len);
  }
  if (err != 0) {
    fleet__handle_abort(&s->base);
    fleet__key_free(&s->pattern);
    free(s->prefix);
    free(s);
  }
  return err;
}

int fleet_store_close(fleet_store_t *store, fleet_close_cb close_cb) {
  return fleet__handle_close_of(store, FLEET_HANDLE_STORE, close_cb);
}

const char *fleet_store_prefix(const fleet_store_t *store) {
  fleet__handle_t *h = fleet__handle_of(store, FLEET_HANDLE_STORE);

  return h != NULL ? ((fleet__store_t *)h)->prefix : NULL;
}

/* ------------------------------------------------------------------------ */
/* The count shape                                                          */

void fleet__store_count_back(fleet__req_t *req, int status, uint64_t n) {
  fleet_store_count_cb cb = (fleet_store_count_cb)req->cb;

  cb(fleet__store_pub(req), status, n, req->user_data);
}

void fleet__store_fail_count(fleet__req_t *req, int status) {
  fleet__store_count_back(req, status, 0);
}

/* ------------------------------------------------------------------------ */
/* Names and keys                                                           */

int fleet__store_index_check(const char *name, fleet_bytes_t value) {
  int err = fleet__str_check(name, FLEET_STORE_INDEX_NAME_MAX, NULL);

  if (err == 0 && strchr(name, ':') != NULL)
    err = FLEET_EINVAL;
  return err != 0 ? err : fleet__bytes_check(value, FLEET_STORE_NAME_MAX);
}

int fleet__store_buf_add(fleet__key_t *key, const void *p, size_t len) {
  if (fleet__grow((void **)&key->base, &key->cap, key->len + len, 1) != 0)
    return FLEET_ENOMEM;
  if (len > 0)
    memcpy(key->base + key->len, p, len);
  key->len += len;
  return 0;
}

int fleet__store_tag(fleet__store_t *s, const char *collection) {
  size_t len;
  int err = fleet__str_check(collection, FLEET_STORE_NAME_MAX, &len);

  if (err == 0 && strchr(collection, '}') != NULL)
    err = FLEET_EINVAL;
  if (err != 0)
    return err;
  return fleet__key_build(&s->tag, s->prefix, s->prefix_len, collection, len,
                          NULL);
}

int fleet__store_record_begin(fleet__store_t *s, const char *collection,
                              fleet_bytes_t id, size_t nargs, size_t nnums) {
  int err = fleet__store_tag(s, collection);

  if (err == 0)
    err = fleet__bytes_check(id, FLEET_STORE_NAME_MAX);
  if (err == 0)
    err = fleet__args_begin(&s->args, nargs, nnums);
  if (err == 0)
    fleet__args_bytes(&s->args, id.base, id.len);
  return err;
}

int fleet__store_scan_pattern(fleet__key_t *out, const char *prefix,
                              size_t len) {
  size_t i;
  int err;

  out->len = 0;
  err = fleet__store_buf_add(out, "{", 1);
  for (i = 0; err == 0 && i < len; i++) {
    if (strchr("*?[]\\", prefix[i]) != NULL)
      err = fleet__store_buf_add(out, "\\", 1);
    if (err == 0)
      err = fleet__store_buf_add(out, &prefix[i], 1);
  }
  if (err == 0)
    err = fleet__store_buf_add(out, ":*", 2);
  return err;
}

/* ------------------------------------------------------------------------ */
/* Ping                                                                     */

static void store_on_ping(fleet__req_t *req, int status,
                          const fleet__reply_t *reply) {
  if (status == 0 && reply->type != FLEET__REPLY_STATUS)
    status = FLEET_EPROTO;
  fleet__call_finish(req, status);
}

static const fleet__call_t store_ping_call = {
    "store.ping", FLEET__OP_PING, store_on_ping, fleet__call_fail_status};

int fleet_store_ping(fleet_store_t *store, fleet_status_cb cb,
                     void *user_data) {
  fleet__store_t *s;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  return fleet__call(&s->base, &store_ping_call, (fleet__fn_t)cb, user_data,
                     NULL, 0, NULL, 0);
}
