/* store_events.c -- the store's events calls: append, read and count. */
#include "store_int.h"

/* Completes a call whose op replies with a count. */
static void store_on_count(fleet__req_t *req, int status,
                           const fleet__reply_t *reply) {
  uint64_t n;

  if (status == 0 && fleet__reply_u64(reply, &n) != 0)
    status = FLEET_EPROTO;
  fleet__req_done(req);
  fleet__store_count_back(req, status, status == 0 ? n : 0);
}

static const fleet__call_t store_append_call = {
    "store.events_append", FLEET__OP_STORE_APPEND, store_on_count,
    fleet__store_fail_count};
static const fleet__call_t store_count_call = {
    "store.events_count", FLEET__OP_STORE_COUNT, store_on_count,
    fleet__store_fail_count};

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
  return fleet__store_call(s, &store_append_call, (fleet__fn_t)cb, user_data);
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
  return fleet__store_call(s, &store_count_call, (fleet__fn_t)cb, user_data);
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

/* Runs the fleet_store_events_cb of the done `req`. */
static void store_events_back(fleet__req_t *req, int status,
                              const fleet_bytes_t *events, size_t n) {
  fleet_store_events_cb cb = (fleet_store_events_cb)req->cb;

  cb(fleet__store_pub(req), status, events, n, req->user_data);
}

static void store_fail_events(fleet__req_t *req, int status) {
  store_events_back(req, status, NULL, 0);
}

static void store_on_read(fleet__req_t *req, int status,
                          const fleet__reply_t *reply) {
  fleet__store_t *s = fleet__store_of(req);

  if (status == 0)
    status = store_take_events(s, reply);
  if (status != 0) {
    fleet__call_finish(req, status);
    return;
  }
  fleet__req_done(req);
  store_events_back(req, 0, s->events_out, reply->nelem);
}

static const fleet__call_t store_read_call = {"store.events_read",
                                              FLEET__OP_STORE_READ,
                                              store_on_read, store_fail_events};

int fleet_store_events_read(fleet_store_t *store, const char *collection,
                            fleet_bytes_t id, uint64_t offset, size_t limit,
                            fleet_store_events_cb cb, void *user_data) {
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
  return fleet__store_call(s, &store_read_call, (fleet__fn_t)cb, user_data);
}
