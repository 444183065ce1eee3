/* store_list.c -- listing the records under an index value, a page at a
 * time, with a cursor "<score>:<id>" that names the last entry seen. */
#include <stdio.h>
#include <string.h>

#include "store_int.h"

/* Most decimal digits of a cursor's score, an expiry time in ms since the
 * epoch (13 digits until the year 2286). */
#define STORE_SCORE_DIGITS_MAX 16

/* Splits cursor "<score>:<id>" into its score (1 to 16 decimal digits)
 * and id (1 to FLEET_STORE_NAME_MAX bytes). Returns 0 or FLEET_EINVAL. */
static int store_cursor_parse(fleet_bytes_t c, fleet_bytes_t *score,
                              fleet_bytes_t *id) {
  const char *p = c.base, *colon;
  size_t i, n;

  if (p == NULL)
    return FLEET_EINVAL;
  colon = memchr(p, ':', c.len);
  if (colon == NULL)
    return FLEET_EINVAL;
  n = (size_t)(colon - p);
  if (n == 0 || n > STORE_SCORE_DIGITS_MAX)
    return FLEET_EINVAL;
  for (i = 0; i < n; i++)
    if (p[i] < '0' || p[i] > '9')
      return FLEET_EINVAL;
  score->base = p;
  score->len = n;
  id->base = colon + 1;
  id->len = c.len - n - 1;
  /* A cursor is opaque to the user: any malformed one is FLEET_EINVAL. */
  return fleet__bytes_check(*id, FLEET_STORE_NAME_MAX) == 0 ? 0 : FLEET_EINVAL;
}

/* Builds the next page's cursor into s->cursor_out from the reply's score
 * and id. Returns 0, FLEET_EPROTO (out of range) or FLEET_ENOMEM. */
static int store_cursor_build(fleet__store_t *s, int64_t score,
                              const fleet__reply_t *id) {
  fleet__key_t *k = &s->cursor_out;
  char num[24];
  int n;

  if (score >= 10000000000000000LL || id->len == 0 ||
      id->len > FLEET_STORE_NAME_MAX)
    return FLEET_EPROTO;
  n = snprintf(num, sizeof(num), "%lld:", (long long)score);
  k->len = 0;
  if (fleet__store_buf_add(k, num, (size_t)n) != 0 ||
      fleet__store_buf_add(k, id->str, id->len) != 0)
    return FLEET_ENOMEM;
  return 0;
}

/* Takes a reply {next score, next id, {id, value, ...}} into
 * s->items_out and, unless the listing is complete (score -1), the next
 * cursor into s->cursor_out. Returns the number of items, FLEET_EPROTO or
 * FLEET_ENOMEM. */
static int64_t store_take_list(fleet__store_t *s, const fleet__reply_t *r) {
  const fleet__reply_t *items;
  int64_t score;
  size_t i, n;
  int err;

  if (!fleet__reply_is_array(r, 3) || r->nelem != 3 ||
      fleet__reply_i64(&r->elem[0], &score) != 0 || score < -1 ||
      r->elem[1].type != FLEET__REPLY_STR ||
      !fleet__reply_is_array(&r->elem[2], 0))
    return FLEET_EPROTO;
  items = &r->elem[2];
  n = items->nelem / 2;
  if (items->nelem % 2 != 0 || n > FLEET_STORE_BATCH_MAX)
    return FLEET_EPROTO;
  if (fleet__grow((void **)&s->items_out, &s->items_cap, n,
                  sizeof(*s->items_out)) != 0)
    return FLEET_ENOMEM;
  for (i = 0; i < n; i++)
    if (fleet__reply_bytes(&items->elem[2 * i], &s->items_out[i].id) != 0 ||
        fleet__reply_bytes(&items->elem[2 * i + 1], &s->items_out[i].value) !=
            0)
      return FLEET_EPROTO;
  s->cursor_out.len = 0;
  if (score >= 0 && (err = store_cursor_build(s, score, &r->elem[1])) != 0)
    return err;
  return (int64_t)n;
}

/* Runs the fleet_store_list_cb of the done `req`. */
static void store_list_back(fleet__req_t *req, int status,
                            const fleet_store_item_t *items, size_t n,
                            fleet_bytes_t cursor) {
  fleet_store_list_cb cb = (fleet_store_list_cb)req->cb;

  cb(fleet__store_pub(req), status, items, n, cursor, req->user_data);
}

static void store_fail_list(fleet__req_t *req, int status) {
  store_list_back(req, status, NULL, 0, (fleet_bytes_t){NULL, 0});
}

static void store_on_list(fleet__req_t *req, int status,
                          const fleet__reply_t *reply) {
  fleet__store_t *s = fleet__store_of(req);
  int64_t n = status;

  if (status == 0)
    n = store_take_list(s, reply);
  if (n < 0) {
    fleet__call_finish(req, (int)n);
    return;
  }
  fleet__req_done(req);
  store_list_back(req, 0, s->items_out, (size_t)n,
                  fleet__key_bytes(&s->cursor_out));
}

static const fleet__call_t store_list_call = {
    "store.list", FLEET__OP_STORE_LIST, store_on_list, store_fail_list};

int fleet_store_list(fleet_store_t *store, const char *collection,
                     const char *index, fleet_bytes_t value,
                     fleet_bytes_t cursor, size_t limit, fleet_store_list_cb cb,
                     void *user_data) {
  fleet_bytes_t score = {"", 0}, cid = {"", 0};
  fleet__store_t *s;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  if (limit == 0 || limit > FLEET_STORE_BATCH_MAX)
    return FLEET_EINVAL;
  if ((err = fleet__store_tag(s, collection)) != 0 ||
      (err = fleet__store_index_check(index, value)) != 0)
    return err;
  if (cursor.len > 0 && (err = store_cursor_parse(cursor, &score, &cid)) != 0)
    return err;
  if ((err = fleet__args_begin(&s->args, 5, 1)) != 0)
    return err;
  fleet__args_str(&s->args, index);
  fleet__args_bytes(&s->args, value.base, value.len);
  fleet__args_u64(&s->args, limit);
  fleet__args_bytes(&s->args, score.base, score.len);
  fleet__args_bytes(&s->args, cid.base, cid.len);
  return fleet__store_call(s, &store_list_call, (fleet__fn_t)cb, user_data);
}
