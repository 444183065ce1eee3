/* store_events.c -- the store's events calls: append, read and count. */
#include "store_int.h"

/* Completes a request whose op replies with a count. */
static void store_on_count(fleet__store_req_t *req, int status,
                           const fleet__reply_t *reply) {
  fleet_store_t *pub = req->store->pub;
  fleet_store_count_cb cb = req->cb.count;
  void *user_data = req->user_data;
  uint64_t n;

  if (status == 0 &&
      (!fleet__store_reply_is(reply, FLEET__REPLY_INT) || reply->integer < 0))
    status = FLEET_EPROTO;
  if (status != 0) {
    fleet__store_finish(req, status);
    return;
  }
  n = (uint64_t)reply->integer;
  fleet__store_req_done(req);
  cb(pub, 0, n, user_data);
}

static int store_call_count(struct fleet__store_s *s, fleet__op_t op,
                            size_t nargs, fleet_store_count_cb cb,
                            void *user_data) {
  fleet__store_req_t *req =
      fleet__store_req_get(s, FLEET__STORE_CB_COUNT, user_data, store_on_count);

  if (req == NULL)
    return FLEET_ENOMEM;
  req->cb.count = cb;
  return fleet__store_send(req, op, s->keys, 2, s->args, nargs);
}

int fleet_store_events_append(fleet_store_t *store, fleet_bytes_t collection,
                              fleet_bytes_t id, const fleet_bytes_t *events,
                              size_t n, fleet_store_count_cb cb,
                              void *user_data) {
  struct fleet__store_s *s;
  size_t i;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  if (events == NULL || n == 0 || n > FLEET_STORE_BATCH_MAX)
    return FLEET_EINVAL;
  if ((err = fleet__store_record_keys(s, collection, id)) != 0)
    return err;
  for (i = 0; i < n; i++) {
    if ((err = fleet__store_value_check(s, events[i])) != 0)
      return err;
    s->args[3 + i] = events[i];
    if (events[i].len == 0)
      s->args[3 + i].base = "";
  }
  s->args[0] = fleet__key_bytes(&s->base);
  s->args[1] = id;
  s->args[2] = fleet__store_num(s, 0, s->max_events);
  return store_call_count(s, FLEET__OP_STORE_APPEND, 3 + n, cb, user_data);
}

int fleet_store_events_count(fleet_store_t *store, fleet_bytes_t collection,
                             fleet_bytes_t id, fleet_store_count_cb cb,
                             void *user_data) {
  struct fleet__store_s *s;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  if ((err = fleet__store_record_keys(s, collection, id)) != 0)
    return err;
  return store_call_count(s, FLEET__OP_STORE_COUNT, 0, cb, user_data);
}

static void store_on_read(fleet__store_req_t *req, int status,
                          const fleet__reply_t *reply) {
  struct fleet__store_s *s = req->store;
  fleet_store_events_cb cb = req->cb.events;
  void *user_data = req->user_data;
  size_t i;

  if (status == 0 && (!fleet__store_reply_array(reply, SIZE_MAX) ||
                      reply->nelem > FLEET_STORE_BATCH_MAX))
    status = FLEET_EPROTO;
  for (i = 0; status == 0 && i < reply->nelem; i++) {
    if (reply->elem[i].type != FLEET__REPLY_STR)
      status = FLEET_EPROTO;
    else
      s->events_out[i] = fleet__store_reply_bytes(&reply->elem[i]);
  }
  if (status != 0) {
    fleet__store_finish(req, status);
    return;
  }
  fleet__store_req_done(req);
  cb(s->pub, 0, s->events_out, reply->nelem, user_data);
}

int fleet_store_events_read(fleet_store_t *store, fleet_bytes_t collection,
                            fleet_bytes_t id, uint64_t offset, size_t limit,
                            fleet_store_events_cb cb, void *user_data) {
  struct fleet__store_s *s;
  fleet__store_req_t *req;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  if (offset > FLEET_STORE_OFFSET_MAX || limit == 0 ||
      limit > FLEET_STORE_BATCH_MAX)
    return FLEET_EINVAL;
  if ((err = fleet__store_record_keys(s, collection, id)) != 0)
    return err;
  s->args[0] = fleet__store_num(s, 0, offset);
  s->args[1] = fleet__store_num(s, 1, limit);
  req =
      fleet__store_req_get(s, FLEET__STORE_CB_EVENTS, user_data, store_on_read);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->cb.events = cb;
  return fleet__store_send(req, FLEET__OP_STORE_READ, s->keys, 2, s->args, 2);
}
