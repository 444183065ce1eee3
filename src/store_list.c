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
  return fleet__store_bytes_valid(*id, FLEET_STORE_NAME_MAX) ? 0 : FLEET_EINVAL;
}

/* Builds the next page's cursor into s->cursor_out from the reply's score
 * and id. Returns 0, FLEET_EPROTO (out of range) or FLEET_ENOMEM. */
static int store_cursor_build(struct fleet__store_s *s, int64_t score,
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

/* Checks the reply {next score, next id, {id, value, ...}}. */
static int store_list_reply_ok(const fleet__reply_t *r) {
  const fleet__reply_t *items;
  size_t i;

  if (!fleet__store_reply_array(r, 3) || r->elem[0].type != FLEET__REPLY_INT ||
      r->elem[0].integer < -1 || r->elem[1].type != FLEET__REPLY_STR ||
      !fleet__store_reply_array(&r->elem[2], SIZE_MAX))
    return 0;
  items = &r->elem[2];
  if (items->nelem % 2 != 0 || items->nelem / 2 > FLEET_STORE_BATCH_MAX)
    return 0;
  for (i = 0; i < items->nelem; i++)
    if (items->elem[i].type != FLEET__REPLY_STR)
      return 0;
  return 1;
}

static void store_on_list(fleet__store_req_t *req, int status,
                          const fleet__reply_t *reply) {
  struct fleet__store_s *s = req->store;
  fleet_store_list_cb cb = req->cb.list;
  void *user_data = req->user_data;
  fleet_bytes_t next = {NULL, 0};
  const fleet__reply_t *items;
  size_t i, n;

  if (status == 0 && !store_list_reply_ok(reply))
    status = FLEET_EPROTO;
  if (status == 0 && reply->elem[0].integer >= 0) {
    status = store_cursor_build(s, reply->elem[0].integer, &reply->elem[1]);
    next = fleet__key_bytes(&s->cursor_out);
  }
  if (status != 0) {
    fleet__store_finish(req, status);
    return;
  }
  items = &reply->elem[2];
  n = items->nelem / 2;
  for (i = 0; i < n; i++) {
    s->items_out[i].id = fleet__store_reply_bytes(&items->elem[2 * i]);
    s->items_out[i].value = fleet__store_reply_bytes(&items->elem[2 * i + 1]);
  }
  fleet__store_req_done(req);
  cb(s->pub, 0, s->items_out, n, next, user_data);
}

int fleet_store_list(fleet_store_t *store, fleet_bytes_t collection,
                     fleet_bytes_t index, fleet_bytes_t value,
                     fleet_bytes_t cursor, size_t limit, fleet_store_list_cb cb,
                     void *user_data) {
  fleet_bytes_t score = {"", 0}, cid = {"", 0};
  fleet_store_index_t ix;
  struct fleet__store_s *s;
  fleet__store_req_t *req;
  int err;

  if ((s = fleet__store_enter(store, cb != NULL, &err)) == NULL)
    return err;
  ix.name = index;
  ix.value = value;
  if (!fleet__store_collection_valid(collection) ||
      !fleet__store_index_valid(&ix) || limit == 0 ||
      limit > FLEET_STORE_BATCH_MAX)
    return FLEET_EINVAL;
  if (cursor.len > 0 && (err = store_cursor_parse(cursor, &score, &cid)) != 0)
    return err;
  if ((err = fleet__store_base(s, collection)) != 0 ||
      (err = fleet__store_key(s, &s->idx[0], "idx:", index, &value)) != 0)
    return err;
  s->keys[0] = fleet__key_bytes(&s->idx[0]);
  s->args[0] = fleet__key_bytes(&s->base);
  s->args[1] = fleet__store_num(s, 0, limit);
  s->args[2] = score;
  s->args[3] = cid;
  req = fleet__store_req_get(s, FLEET__STORE_CB_LIST, user_data, store_on_list);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->cb.list = cb;
  return fleet__store_send(req, FLEET__OP_STORE_LIST, s->keys, 1, s->args, 4);
}
