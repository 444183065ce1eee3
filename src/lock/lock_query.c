/* lock_query.c -- fleet_lock_query(): the server's view of any lease by
 * name, with the parsing of the lease value and the fence. */
#include <stdlib.h>
#include <string.h>

#include "core/args.h"
#include "lock_int.h"

/* A query in flight: the caller's callback and its data. */
typedef struct {
  fleet_client_t *client;
  fleet_lock_query_cb cb;
  void *data;
} lock_query_t;

/* Parses "<token>:<owner>" (after a "*" mark, if any). Returns 0 or
 * FLEET_EPROTO. */
static int lock_parse_value(const char *s, size_t len, uint64_t *token,
                            const char **owner, size_t *owner_len) {
  uint64_t t = 0;
  size_t i = 0;

  if (len > 0 && s[0] == '*')
    i = 1;
  if (i >= len || s[i] < '1' || s[i] > '9')
    return FLEET_EPROTO;
  for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
    if (t > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
      return FLEET_EPROTO;
    t = t * 10 + (uint64_t)(s[i] - '0');
  }
  if (i >= len || s[i] != ':')
    return FLEET_EPROTO;
  *token = t;
  *owner = s + i + 1;
  *owner_len = len - i - 1;
  return 0;
}

static void lock_on_query_reply(void *arg, int status,
                                const fleet__reply_t *reply) {
  lock_query_t *q = arg;
  fleet_client_t *client = q->client;
  fleet_lock_query_cb cb = q->cb;
  void *data = q->data;
  fleet_lock_info_t info;
  char *owner = NULL;
  const fleet__reply_t *e;

  memset(&info, 0, sizeof(info));
  free(q);
  if (status == 0 && (reply->type != FLEET__REPLY_ARRAY || reply->nelem != 3 ||
                      reply->elem[0].type != FLEET__REPLY_STR ||
                      reply->elem[1].type != FLEET__REPLY_INT ||
                      reply->elem[2].type != FLEET__REPLY_STR))
    status = FLEET_EPROTO;
  if (status == 0) {
    e = reply->elem;
    status = fleet__reply_u64_str(&e[2], &info.fence); /* the fence */
    if (status == 0 && e[0].len > 0) {
      info.held = 1;
      info.ttl_ms = e[1].integer;
      status = lock_parse_value(e[0].str, e[0].len, &info.token, &info.owner,
                                &info.owner_len);
    }
    if (status == 0 && info.held) {
      owner = fleet__memdup(info.owner, info.owner_len);
      status = owner != NULL ? 0 : FLEET_ENOMEM;
      info.owner = owner;
    }
  }
  cb(client, status, status == 0 ? &info : NULL, data);
  free(owner);
}

int fleet_lock_query(fleet_client_t *client, const char *name,
                     fleet_lock_query_cb cb, void *user_data) {
  lock_query_t *q;
  int err;

  if (cb == NULL)
    return FLEET_EINVAL;
  if ((q = malloc(sizeof(*q))) == NULL)
    return FLEET_ENOMEM;
  q->client = client;
  q->cb = cb;
  q->data = user_data;
  err = fleet__client_tag_call(client, name, FLEET__OP_LOCK_QUERY,
                               lock_on_query_reply, q);
  if (err != 0)
    free(q);
  return err;
}
