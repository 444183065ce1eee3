/* store_record.c -- the store's record calls: put, get, delete, exists and
 * touch, each one backend op. */
#include "store_int.h"

/* Adds a value as the backend gets it: never a NULL base. */
static void store_args_value(fleet__store_t *s, fleet_bytes_t v) {
  fleet__args_bytes(&s->args, v.len > 0 ? v.base : "", v.len);
}

int fleet__store_value_check(const fleet__store_t *s, fleet_bytes_t v) {
  if (v.base == NULL && v.len > 0)
    return FLEET_EINVAL;
  return v.len > s->max_value ? FLEET_E2BIG : 0;
}

/* Get, delete, exists and touch: `call` on the record `id`, with `ttl_ms`
 * as its one other argument when not NULL (a touch's). */
static int store_record_call(fleet_store_t *store, const fleet__call_t *call,
                             const char *collection, fleet_bytes_t id,
                             const uint64_t *ttl_ms, fleet__fn_t cb,
                             void *user_data) {
  size_t nttl = ttl_ms != NULL;
  fleet__store_t *s;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  if (ttl_ms != NULL && *ttl_ms > FLEET_STORE_TTL_MAX_MS)
    return FLEET_EINVAL;
  if ((err = fleet__store_record_begin(s, collection, id, 1 + nttl, nttl)) != 0)
    return err;
  if (ttl_ms != NULL)
    fleet__args_u64(&s->args, *ttl_ms);
  return fleet__store_call(s, call, cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Put                                                                      */

static void store_on_put(fleet__req_t *req, int status,
                         const fleet__reply_t *reply) {
  int64_t n;

  if (status == 0 && fleet__reply_i64(reply, &n) != 0)
    status = FLEET_EPROTO;
  fleet__call_finish(req, status);
}

static const fleet__call_t store_put_call = {
    "store.put", FLEET__OP_STORE_PUT, store_on_put, fleet__call_fail_status};

int fleet_store_put(fleet_store_t *store, const char *collection,
                    fleet_bytes_t id, fleet_bytes_t value,
                    const fleet_store_put_options_t *options,
                    fleet_status_cb cb, void *user_data) {
  const fleet_store_index_t *ix = NULL;
  fleet__store_t *s;
  size_t n = 0, i;
  uint64_t ttl;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  ttl = s->ttl_ms;
  if (options != NULL) {
    ix = options->indexes;
    n = options->nindexes;
    if (options->ttl_ms != 0)
      ttl = options->ttl_ms;
    if (n > FLEET_STORE_INDEXES_MAX || (n > 0 && ix == NULL) ||
        ttl > FLEET_STORE_TTL_MAX_MS)
      return FLEET_EINVAL;
  }
  if ((err = fleet__store_record_begin(s, collection, id, 3 + 2 * n, 1)) != 0)
    return err;
  for (i = 0; i < n; i++)
    if ((err = fleet__store_index_check(ix[i].name, ix[i].value)) != 0)
      return err;
  if ((err = fleet__store_value_check(s, value)) != 0)
    return err;
  fleet__args_u64(&s->args, ttl);
  store_args_value(s, value);
  for (i = 0; i < n; i++) {
    fleet__args_str(&s->args, ix[i].name);
    fleet__args_bytes(&s->args, ix[i].value.base, ix[i].value.len);
  }
  return fleet__store_call(s, &store_put_call, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Get                                                                      */

/* Runs the fleet_store_get_cb of the done `req`. */
static void store_get_back(fleet__req_t *req, int status, fleet_bytes_t value,
                           uint64_t ttl_ms) {
  fleet_store_get_cb cb = (fleet_store_get_cb)req->cb;

  cb(fleet__store_pub(req), status, value, ttl_ms, req->user_data);
}

static void store_fail_get(fleet__req_t *req, int status) {
  store_get_back(req, status, (fleet_bytes_t){NULL, 0}, 0);
}

static void store_on_get(fleet__req_t *req, int status,
                         const fleet__reply_t *reply) {
  fleet_bytes_t value;
  int64_t ttl;

  if (status == 0 && reply->type == FLEET__REPLY_NIL)
    status = FLEET_ENOTFOUND;
  else if (status == 0 &&
           (!fleet__reply_is_array(reply, 2) || reply->nelem != 2 ||
            fleet__reply_bytes(&reply->elem[0], &value) != 0 ||
            fleet__reply_i64(&reply->elem[1], &ttl) != 0))
    status = FLEET_EPROTO;
  if (status != 0) {
    fleet__call_finish(req, status);
    return;
  }
  fleet__req_done(req);
  /* A record without an expiry (PTTL -1) was changed by someone else:
   * report no time left rather than a huge one. */
  store_get_back(req, 0, value, ttl > 0 ? (uint64_t)ttl : 0);
}

static const fleet__call_t store_get_call = {"store.get", FLEET__OP_STORE_GET,
                                             store_on_get, store_fail_get};

int fleet_store_get(fleet_store_t *store, const char *collection,
                    fleet_bytes_t id, fleet_store_get_cb cb, void *user_data) {
  return store_record_call(store, &store_get_call, collection, id, NULL,
                           (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* Delete, exists, touch                                                    */

/* Completes a call whose op replies 1 (done) or 0 (no record). */
static void store_on_flag(fleet__req_t *req, int status,
                          const fleet__reply_t *reply) {
  uint64_t flag;

  if (status == 0 && (fleet__reply_u64(reply, &flag) != 0 || flag > 1))
    status = FLEET_EPROTO;
  else if (status == 0 && flag == 0)
    status = FLEET_ENOTFOUND;
  fleet__call_finish(req, status);
}

static const fleet__call_t store_delete_call = {
    "store.delete", FLEET__OP_STORE_DEL, store_on_flag,
    fleet__call_fail_status};
static const fleet__call_t store_exists_call = {
    "store.exists", FLEET__OP_STORE_EXISTS, store_on_flag,
    fleet__call_fail_status};
static const fleet__call_t store_touch_call = {
    "store.touch", FLEET__OP_STORE_TOUCH, store_on_flag,
    fleet__call_fail_status};

int fleet_store_delete(fleet_store_t *store, const char *collection,
                       fleet_bytes_t id, fleet_status_cb cb, void *user_data) {
  return store_record_call(store, &store_delete_call, collection, id, NULL,
                           (fleet__fn_t)cb, user_data);
}

int fleet_store_exists(fleet_store_t *store, const char *collection,
                       fleet_bytes_t id, fleet_status_cb cb, void *user_data) {
  return store_record_call(store, &store_exists_call, collection, id, NULL,
                           (fleet__fn_t)cb, user_data);
}

int fleet_store_touch(fleet_store_t *store, const char *collection,
                      fleet_bytes_t id, uint64_t ttl_ms, fleet_status_cb cb,
                      void *user_data) {
  return store_record_call(store, &store_touch_call, collection, id, &ttl_ms,
                           (fleet__fn_t)cb, user_data);
}
