/* store_clear.c -- fleet_store_clear(): every key under the store's prefix
 * deleted with SCAN and UNLINK in batches, as a state machine over those
 * two command ops. */
#include <string.h>

#include "store_int.h"

/* Keys SCAN examines per call (a hint), so also about the most UNLINK
 * deletes per call. */
#define STORE_SCAN_COUNT "1000"

FLEET__NAME_FN(fleet__store_clear_state_name, fleet__store_clear_state_t,
               FLEET__STORE_CLEAR_STATE_MAP)

/* Sends the next SCAN, from the request's cursor. Its MATCH pattern is not
 * a key: the one exception to the rule of backend.h. */
static int store_clear_scan(fleet__store_req_t *req) {
  fleet__store_t *s = fleet__store_of(&req->base);
  int err;

  if ((err = fleet__args_begin(&s->args, 5, 0)) != 0)
    return err;
  fleet__args_bytes(&s->args, req->scan_cursor, req->scan_cursor_len);
  fleet__args_str(&s->args, "MATCH");
  fleet__args_bytes(&s->args, s->pattern.base, s->pattern.len);
  fleet__args_str(&s->args, "COUNT");
  fleet__args_str(&s->args, STORE_SCAN_COUNT);
  return fleet__req_send(&req->base, FLEET__OP_STORE_SCAN, NULL, 0,
                         s->args.argv, s->args.argc);
}

/* The one place a clear changes state. Entering SCANNING sends the next
 * SCAN; UNLINKING sends UNLINK for the keys the last SCAN gave, taken into
 * s->keys; DONE finishes the request: with `status` when it is an error,
 * else with the number of keys deleted. A send that fails enters DONE with
 * its error. */
static void store_clear_set_state(fleet__store_req_t *req,
                                  fleet__store_clear_state_t state,
                                  int status) {
  fleet__store_t *s = fleet__store_of(&req->base);

  req->clear_state = state;
  if (state == FLEET__STORE_CLEAR_SCANNING)
    status = store_clear_scan(req);
  else if (state == FLEET__STORE_CLEAR_UNLINKING)
    status = fleet__req_send(&req->base, FLEET__OP_STORE_UNLINK, s->keys.argv,
                             s->keys.argc, NULL, 0);
  if (state != FLEET__STORE_CLEAR_DONE && status == 0)
    return;
  req->clear_state = FLEET__STORE_CLEAR_DONE;
  fleet__req_done(&req->base);
  fleet__store_count_back(&req->base, status, status == 0 ? req->cleared : 0);
}

/* Takes the cursor and the keys of a SCAN reply {cursor, {key, ...}} into
 * the request and s->keys, for UNLINK. Returns the number of keys,
 * FLEET_EPROTO for another shape or FLEET_ENOMEM. */
static int64_t store_clear_take_scan(fleet__store_req_t *req,
                                     const fleet__reply_t *r) {
  fleet__store_t *s = fleet__store_of(&req->base);
  const fleet__reply_t *cur, *keys;
  fleet_bytes_t key;
  size_t i;

  if (!fleet__reply_is_array(r, 2) || r->nelem != 2 ||
      r->elem[0].type != FLEET__REPLY_STR ||
      !fleet__reply_is_array(&r->elem[1], 0))
    return FLEET_EPROTO;
  cur = &r->elem[0];
  keys = &r->elem[1];
  if (cur->len == 0 || cur->len >= sizeof(req->scan_cursor))
    return FLEET_EPROTO;
  for (i = 0; i < cur->len; i++)
    if (cur->str[i] < '0' || cur->str[i] > '9')
      return FLEET_EPROTO;
  memcpy(req->scan_cursor, cur->str, cur->len);
  req->scan_cursor_len = cur->len;
  if (fleet__args_begin(&s->keys, keys->nelem, 0) != 0)
    return FLEET_ENOMEM;
  for (i = 0; i < keys->nelem; i++) {
    if (fleet__reply_bytes(&keys->elem[i], &key) != 0)
      return FLEET_EPROTO;
    fleet__args_bytes(&s->keys, key.base, key.len);
  }
  return (int64_t)keys->nelem;
}

/* The state after the keys of the last SCAN are gone: DONE once the scan
 * is complete (the last SCAN returned cursor "0"), else SCANNING. */
static fleet__store_clear_state_t
store_clear_next(const fleet__store_req_t *req) {
  return req->scan_cursor_len == 1 && req->scan_cursor[0] == '0'
             ? FLEET__STORE_CLEAR_DONE
             : FLEET__STORE_CLEAR_SCANNING;
}

/* A reply to the op the clear's state sent: SCANNING or UNLINKING (nothing
 * is in flight once DONE). */
static void store_clear_on_reply(fleet__req_t *r, int status,
                                 const fleet__reply_t *reply) {
  fleet__store_req_t *req = (fleet__store_req_t *)r;
  fleet__store_clear_state_t next = FLEET__STORE_CLEAR_DONE;
  uint64_t unlinked;
  int64_t n;

  if (status == 0 && req->clear_state == FLEET__STORE_CLEAR_SCANNING) {
    n = store_clear_take_scan(req, reply);
    if (n < 0)
      status = (int)n;
    else
      next = n > 0 ? FLEET__STORE_CLEAR_UNLINKING : store_clear_next(req);
  } else if (status == 0) {
    if (fleet__reply_u64(reply, &unlinked) != 0) {
      status = FLEET_EPROTO;
    } else {
      req->cleared += unlinked;
      next = store_clear_next(req);
    }
  }
  store_clear_set_state(req, next, status);
}

/* A clear starts with a SCAN; its later SCANs and UNLINKs go out from
 * store_clear_set_state(). */
static const fleet__call_t store_clear_call = {
    "store.clear", FLEET__OP_STORE_SCAN, store_clear_on_reply,
    fleet__store_fail_count};

int fleet_store_clear(fleet_store_t *store, fleet_store_count_cb cb,
                      void *user_data) {
  fleet__store_req_t *req;
  fleet__store_t *s;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  req = (fleet__store_req_t *)fleet__call_new(&s->base, &store_clear_call,
                                              (fleet__fn_t)cb, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->clear_state = FLEET__STORE_CLEAR_SCANNING;
  req->scan_cursor[0] = '0';
  req->scan_cursor_len = 1;
  /* The first SCAN is sent here, so that its failure is this call's. */
  if ((err = store_clear_scan(req)) != 0)
    fleet__req_free(&req->base);
  return err;
}
