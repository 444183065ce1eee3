/* store_record.c -- the store's record calls: put, get, delete, exists and
 * touch, each one backend op. */
#include <string.h>

#include "store_int.h"

/* A value as the backend gets it: never a NULL base. */
static fleet_bytes_t store_value(fleet_bytes_t v) {
  if (v.len == 0)
    v.base = "";
  return v;
}

/* Checks a value or an event against the store's limit: 0, FLEET_EINVAL
 * (NULL bytes with a length) or FLEET_E2BIG. */
int fleet__store_value_check(const struct fleet__store_s *s, fleet_bytes_t v) {
  if (v.base == NULL && v.len > 0)
    return FLEET_EINVAL;
  return v.len > s->max_value ? FLEET_E2BIG : 0;
}

/* Completes a request whose op replies 1 (done) or 0 (no record). */
static void store_on_flag(fleet__store_req_t *req, int status,
                          const fleet__reply_t *reply) {
  if (status == 0) {
    if (!fleet__store_reply_is(reply, FLEET__REPLY_INT) ||
        (reply->integer != 0 && reply->integer != 1))
      status = FLEET_EPROTO;
    else if (reply->integer == 0)
      status = FLEET_ENOTFOUND;
  }
  fleet__store_finish(req, status);
}

/* Gets a request completed by store_on_flag (or `on_reply`) and sends `op`
 * with the keys and arguments built in the store's scratch space. */
static int store_call_done(struct fleet__store_s *s, fleet__op_t op,
                           size_t nkeys, size_t nargs,
                           fleet__store_reply_fn on_reply, fleet_store_cb cb,
                           void *user_data) {
  fleet__store_req_t *req =
      fleet__store_req_get(s, FLEET__STORE_CB_DONE, user_data, on_reply);

  if (req == NULL)
    return FLEET_ENOMEM;
  req->cb.done = cb;
  return fleet__store_send(req, op, s->keys, nkeys, s->args, nargs);
}

/* ------------------------------------------------------------------------ */
/* Put                                                                      */

static void store_on_put(fleet__store_req_t *req, int status,
                         const fleet__reply_t *reply) {
  if (status == 0 && !fleet__store_reply_is(reply, FLEET__REPLY_INT))
    status = FLEET_EPROTO;
  fleet__store_finish(req, status);
}

int fleet_store_put(fleet_store_t *store, fleet_bytes_t collection,
                    fleet_bytes_t id, fleet_bytes_t value,
                    const fleet_store_put_options_t *options, fleet_store_cb cb,
                    void *user_data) {
  const fleet_store_index_t *ix = NULL;
  struct fleet__store_s *s;
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
  if ((err = fleet__store_record_keys(s, collection, id)) != 0)
    return err;
  for (i = 0; i < n; i++) {
    if (!fleet__store_index_valid(&ix[i]))
      return FLEET_EINVAL;
    err = fleet__store_key(s, &s->idx[i], "idx:", ix[i].name, &ix[i].value);
    if (err != 0)
      return err;
    s->keys[2 + i] = fleet__key_bytes(&s->idx[i]);
  }
  if ((err = fleet__store_value_check(s, value)) != 0)
    return err;
  s->args[0] = fleet__key_bytes(&s->base);
  s->args[1] = id;
  s->args[2] = fleet__store_num(s, 0, ttl);
  s->args[3] = store_value(value);
  return store_call_done(s, FLEET__OP_STORE_PUT, 2 + n, 4, store_on_put, cb,
                         user_data);
}

/* ------------------------------------------------------------------------ */
/* Get                                                                      */

static void store_on_get(fleet__store_req_t *req, int status,
                         const fleet__reply_t *reply) {
  fleet_store_t *pub = req->store->pub;
  fleet_store_get_cb cb = req->cb.get;
  void *user_data = req->user_data;
  const fleet__reply_t *v, *ttl;

  if (status == 0 && fleet__store_reply_is(reply, FLEET__REPLY_NIL))
    status = FLEET_ENOTFOUND;
  else if (status == 0 && !(fleet__store_reply_array(reply, 2) &&
                            reply->elem[0].type == FLEET__REPLY_STR &&
                            reply->elem[1].type == FLEET__REPLY_INT))
    status = FLEET_EPROTO;
  if (status != 0) {
    fleet__store_finish(req, status);
    return;
  }
  v = &reply->elem[0];
  ttl = &reply->elem[1];
  fleet__store_req_done(req);
  /* A record without an expiry (PTTL -1) was changed by someone else:
   * report no time left rather than a huge one. */
  cb(pub, 0, fleet__store_reply_bytes(v),
     ttl->integer > 0 ? (uint64_t)ttl->integer : 0, user_data);
}

int fleet_store_get(fleet_store_t *store, fleet_bytes_t collection,
                    fleet_bytes_t id, fleet_store_get_cb cb, void *user_data) {
  struct fleet__store_s *s;
  fleet__store_req_t *req;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  if ((err = fleet__store_record_keys(s, collection, id)) != 0)
    return err;
  req = fleet__store_req_get(s, FLEET__STORE_CB_GET, user_data, store_on_get);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->cb.get = cb;
  return fleet__store_send(req, FLEET__OP_STORE_GET, s->keys, 1, NULL, 0);
}

/* ------------------------------------------------------------------------ */
/* Delete, exists, touch                                                    */

int fleet_store_delete(fleet_store_t *store, fleet_bytes_t collection,
                       fleet_bytes_t id, fleet_store_cb cb, void *user_data) {
  struct fleet__store_s *s;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  if ((err = fleet__store_record_keys(s, collection, id)) != 0)
    return err;
  s->args[0] = fleet__key_bytes(&s->base);
  s->args[1] = id;
  return store_call_done(s, FLEET__OP_STORE_DEL, 2, 2, store_on_flag, cb,
                         user_data);
}

int fleet_store_exists(fleet_store_t *store, fleet_bytes_t collection,
                       fleet_bytes_t id, fleet_store_cb cb, void *user_data) {
  struct fleet__store_s *s;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  if ((err = fleet__store_record_keys(s, collection, id)) != 0)
    return err;
  return store_call_done(s, FLEET__OP_STORE_EXISTS, 1, 0, store_on_flag, cb,
                         user_data);
}

int fleet_store_touch(fleet_store_t *store, fleet_bytes_t collection,
                      fleet_bytes_t id, uint64_t ttl_ms, fleet_store_cb cb,
                      void *user_data) {
  struct fleet__store_s *s;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  if (ttl_ms > FLEET_STORE_TTL_MAX_MS)
    return FLEET_EINVAL;
  if ((err = fleet__store_record_keys(s, collection, id)) != 0)
    return err;
  s->args[0] = fleet__key_bytes(&s->base);
  s->args[1] = id;
  s->args[2] = fleet__store_num(s, 0, ttl_ms);
  return store_call_done(s, FLEET__OP_STORE_TOUCH, 2, 3, store_on_flag, cb,
                         user_data);
}
