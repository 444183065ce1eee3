/* store_clear.c -- fleet_store_clear(): every key under the store's prefix
 * deleted with SCAN and UNLINK in batches, as a state machine over those
 * two command ops. */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* Keys SCAN examines per call (a hint), so also about the most UNLINK
 * deletes per call. */
#define STORE_SCAN_COUNT "1000"

static const char *const store_clear_state_names[] = {
#define XX(name, str) str,
    FLEET__STORE_CLEAR_STATE_MAP(XX)
#undef XX
};

const char *fleet__store_clear_state_name(fleet__store_clear_state_t state) {
  if ((size_t)state >= FLEET__ARRAY_SIZE(store_clear_state_names))
    return "unknown";
  return store_clear_state_names[state];
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

/* Sends the next SCAN, from the request's cursor. */
static int store_clear_scan(fleet__store_req_t *req) {
  struct fleet__store_s *s = req->store;

  s->args[0].base = req->scan_cursor;
  s->args[0].len = req->scan_cursor_len;
  s->args[1] = (fleet_bytes_t){"MATCH", 5};
  s->args[2] = fleet__key_bytes(&s->pattern);
  s->args[3] = (fleet_bytes_t){"COUNT", 5};
  s->args[4] = (fleet_bytes_t){STORE_SCAN_COUNT, sizeof(STORE_SCAN_COUNT) - 1};
  return fleet__store_send(req, FLEET__OP_STORE_SCAN, NULL, 0, s->args, 5);
}

/* The one place a clear changes state. Entering SCANNING sends the next
 * SCAN; UNLINKING sends UNLINK for the `nkeys` keys in s->unlink_keys;
 * DONE completes the request: with `status` when it is an error, else with
 * the number of keys deleted. A send that fails enters DONE with its
 * error. */
static void store_clear_set_state(fleet__store_req_t *req,
                                  fleet__store_clear_state_t state, int status,
                                  size_t nkeys) {
  struct fleet__store_s *s = req->store;
  fleet_store_count_cb cb;
  uint64_t cleared;
  void *user_data;

  req->clear_state = state;
  if (state == FLEET__STORE_CLEAR_SCANNING)
    status = store_clear_scan(req);
  else if (state == FLEET__STORE_CLEAR_UNLINKING)
    status = fleet__store_send(req, FLEET__OP_STORE_UNLINK, s->unlink_keys,
                               nkeys, NULL, 0);
  if (state != FLEET__STORE_CLEAR_DONE && status == 0)
    return;
  req->clear_state = FLEET__STORE_CLEAR_DONE;
  if (status != 0) {
    fleet__store_finish(req, status);
    return;
  }
  cb = req->cb.count;
  user_data = req->user_data;
  cleared = req->cleared;
  fleet__store_req_done(req);
  cb(s->pub, 0, cleared, user_data);
}

/* Takes the cursor and the keys of a SCAN reply {cursor, {key, ...}} into
 * the request and s->unlink_keys. Returns the number of keys, FLEET_EPROTO
 * for another shape or FLEET_ENOMEM. */
static int64_t store_clear_take_scan(fleet__store_req_t *req,
                                     const fleet__reply_t *r) {
  struct fleet__store_s *s = req->store;
  const fleet__reply_t *cur, *keys;
  size_t i;

  if (!fleet__store_reply_array(r, 2) || r->elem[0].type != FLEET__REPLY_STR ||
      !fleet__store_reply_array(&r->elem[1], SIZE_MAX))
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
  if (keys->nelem > s->unlink_cap) {
    fleet_bytes_t *p = realloc(s->unlink_keys, keys->nelem * sizeof(*p));
    if (p == NULL)
      return FLEET_ENOMEM;
    s->unlink_keys = p;
    s->unlink_cap = keys->nelem;
  }
  for (i = 0; i < keys->nelem; i++) {
    if (keys->elem[i].type != FLEET__REPLY_STR)
      return FLEET_EPROTO;
    s->unlink_keys[i] = fleet__store_reply_bytes(&keys->elem[i]);
  }
  return (int64_t)keys->nelem;
}

/* Whether the scan is complete: the last SCAN returned cursor "0". */
static int store_clear_scan_done(const fleet__store_req_t *req) {
  return req->scan_cursor_len == 1 && req->scan_cursor[0] == '0';
}

/* A reply to the op the clear's state sent. */
static void store_clear_on_reply(fleet__store_req_t *req, int status,
                                 const fleet__reply_t *reply) {
  int64_t n;

  if (status != 0) {
    store_clear_set_state(req, FLEET__STORE_CLEAR_DONE, status, 0);
    return;
  }
  switch (req->clear_state) {
    case FLEET__STORE_CLEAR_SCANNING:
      n = store_clear_take_scan(req, reply);
      if (n < 0)
        store_clear_set_state(req, FLEET__STORE_CLEAR_DONE, (int)n, 0);
      else if (n > 0)
        store_clear_set_state(req, FLEET__STORE_CLEAR_UNLINKING, 0, (size_t)n);
      else
        store_clear_set_state(req,
                              store_clear_scan_done(req)
                                  ? FLEET__STORE_CLEAR_DONE
                                  : FLEET__STORE_CLEAR_SCANNING,
                              0, 0);
      break;
    case FLEET__STORE_CLEAR_UNLINKING:
      if (!fleet__store_reply_is(reply, FLEET__REPLY_INT) ||
          reply->integer < 0) {
        store_clear_set_state(req, FLEET__STORE_CLEAR_DONE, FLEET_EPROTO, 0);
        break;
      }
      req->cleared += (uint64_t)reply->integer;
      store_clear_set_state(req,
                            store_clear_scan_done(req)
                                ? FLEET__STORE_CLEAR_DONE
                                : FLEET__STORE_CLEAR_SCANNING,
                            0, 0);
      break;
    case FLEET__STORE_CLEAR_DONE:
      /* Nothing is in flight once done: no reply can come here. */
      break;
  }
}

int fleet_store_clear(fleet_store_t *store, fleet_store_count_cb cb,
                      void *user_data) {
  struct fleet__store_s *s;
  fleet__store_req_t *req;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  err = fleet__store_scan_pattern(&s->pattern, s->prefix, s->prefix_len);
  if (err != 0)
    return err;
  req = fleet__store_req_get(s, FLEET__STORE_CB_COUNT, user_data,
                             store_clear_on_reply);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->cb.count = cb;
  req->clear_state = FLEET__STORE_CLEAR_SCANNING;
  req->scan_cursor[0] = '0';
  req->scan_cursor_len = 1;
  /* The first SCAN is sent here, so that its failure is this call's. */
  return store_clear_scan(req);
}
