/* store_events.c -- the store's events calls: append, read and count. */
#include "store_int.h"

/* Completes a request whose op replies with a count. */
static void store_on_count(fleet__store_req_t *req, int status,
                           const fleet__reply_t *reply) {
  fleet_store_count_cb cb = req->cb.count;
  void *user_data = req->base.user_data;
  uint64_t n;

  if (status == 0 && fleet__reply_u64(reply, &n) != 0)
    status = FLEET_EPROTO;
  if (status != 0) {
    fleet__store_finish(req, status);
    return;
  }
  fleet__req_done(&req->base);
  cb(fleet__store_pub(req), 0, n, user_data);
}

static int store_call_count(fleet__store_t *s, fleet__op_t op,
                            fleet_store_count_cb cb, void *user_data) {
  fleet__store_req_t *req =
      fleet__store_req_new(s, FLEET__STORE_CB_COUNT, user_data, store_on_count);

  if (req == NULL)
    return FLEET_ENOMEM;
  req->cb.count = cb;
  return fleet__store_start(req, op);
}

int fleet_store_events_append(fleet_store_t *store, const char *collection,
                              fleet_bytes_t id, const fleet_bytes_t *events,
                              size_t n, fleet_store_count_cb cb,
                              void *user_data) {
  fleet__store_t *s;
  size_t i;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  if (events == NULL || n == 0 || n > FLEET_STORE_BATCH_MAX)
    return FLEET_EINVAL;
  for (i = 0; i < n; i++)
    if ((err = fleet__store_value_check(s, events[i])) != 0)
      return err;
  if ((err = fleet__store_record_begin(s, collection, id, 2 + n, 1)) != 0)
    return err;
  fleet__args_u64(&s->args, s->max_events);
  /* An empty event goes to the backend with a base that is not NULL. */
  for (i = 0; i < n; i++)
    fleet__args_bytes(&s->args, events[i].len > 0 ? events[i].base : "",
                      events[i].len);
  return store_call_count(s, FLEET__OP_STORE_APPEND, cb, user_data);
}

int fleet_store_events_count(fleet_store_t *store, const char *collection,
                             fleet_bytes_t id, fleet_store_count_cb cb,
                             void *user_data) {
  fleet__store_t *s;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  if ((err = fleet__store_record_begin(s, collection, id, 1, 0)) != 0)
    return err;
  return store_call_count(s, FLEET__OP_STORE_COUNT, cb, user_data);
}

/* Takes the events of a READ reply, an array of strings, into
 * s->events_out. Returns 0, FLEET_EPROTO or FLEET_ENOMEM. */
static int store_take_events(fleet__store_t *s, const fleet__reply_t *r) {
  size_t i;

  if (!fleet__reply_is_array(r, 0) || r->nelem > FLEET_STORE_BATCH_MAX)
    return FLEET_EPROTO;
  if (fleet__grow((void **)&s->events_out, &s->events_cap, r->nelem,
                  sizeof(*s->events_out)) != 0)
    return FLEET_ENOMEM;
  for (i = 0; i < r->nelem; i++)
    if (fleet__reply_bytes(&r->elem[i], &s->events_out[i]) != 0)
      return FLEET_EPROTO;
  return 0;
}

static void store_on_read(fleet__store_req_t *req, int status,
                          const fleet__reply_t *reply) {
  fleet__store_t *s = fleet__store_of(req);
  fleet_store_events_cb cb = req->cb.events;
  void *user_data = req->base.user_data;

  if (status == 0)
    status = store_take_events(s, reply);
  if (status != 0) {
    fleet__store_finish(req, status);
    return;
  }
  fleet__req_done(&req->base);
  cb(fleet__store_pub(req), 0, s->events_out, reply->nelem, user_data);
}

int fleet_store_events_read(fleet_store_t *store, const char *collection,
                            fleet_bytes_t id, uint64_t offset, size_t limit,
                            fleet_store_events_cb cb, void *user_data) {
  fleet__store_req_t *req;
  fleet__store_t *s;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  if (offset > FLEET_STORE_OFFSET_MAX || limit == 0 ||
      limit > FLEET_STORE_BATCH_MAX)
    return FLEET_EINVAL;
  if ((err = fleet__store_record_begin(s, collection, id, 3, 2)) != 0)
    return err;
  fleet__args_u64(&s->args, offset);
  fleet__args_u64(&s->args, limit);
  req =
      fleet__store_req_new(s, FLEET__STORE_CB_EVENTS, user_data, store_on_read);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->cb.events = cb;
  return fleet__store_start(req, FLEET__OP_STORE_READ);
}
