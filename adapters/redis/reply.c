/* reply.c -- the one place that turns hiredis replies into fleet replies
 * (error text becomes a code in adapters/scripts/errors.c). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "redis/reply.h"

int fleet__redis_is_noscript(const redisReply *r) {
  return r->type == REDIS_REPLY_ERROR && r->len >= 8 &&
         memcmp(r->str, "NOSCRIPT", 8) == 0;
}

/* Whether the `n` bytes at `s` hold "fcall" in any case. */
static int reply_names_fcall(const char *s, size_t n) {
  size_t i;

  for (i = 0; i + 5 <= n; i++)
    if (strncasecmp(s + i, "fcall", 5) == 0)
      return 1;
  return 0;
}

int fleet__redis_is_fcall_refused(const redisReply *r) {
  if (r->type != REDIS_REPLY_ERROR)
    return 0;
  if (r->len >= 22 && memcmp(r->str, "ERR Function not found", 22) == 0)
    return 1;
  return ((r->len >= 19 && memcmp(r->str, "ERR unknown command", 19) == 0) ||
          (r->len >= 6 && memcmp(r->str, "NOPERM", 6) == 0)) &&
         reply_names_fcall(r->str, r->len);
}

const redisReply *fleet__redis_reply_first_error(const redisReply *r) {
  size_t i;

  if (r->type == REDIS_REPLY_ERROR)
    return r;
  if (r->type == REDIS_REPLY_ARRAY || r->type == REDIS_REPLY_SET ||
      r->type == REDIS_REPLY_MAP || r->type == REDIS_REPLY_PUSH)
    for (i = 0; i < r->elements; i++) {
      const redisReply *e = fleet__redis_reply_first_error(r->element[i]);
      if (e != NULL)
        return e;
    }
  return NULL;
}

/* Nodes in the tree below and including `r`. */
static size_t reply_count(const redisReply *r) {
  size_t n = 1, i;

  if (r->type == REDIS_REPLY_ARRAY || r->type == REDIS_REPLY_SET ||
      r->type == REDIS_REPLY_MAP || r->type == REDIS_REPLY_PUSH)
    for (i = 0; i < r->elements; i++)
      n += reply_count(r->element[i]);
  return n;
}

/* Fills `out` from `r`; children go at *next, contiguous. Returns 0 or
 * FLEET_EPROTO for a reply fleet does not expect (an error inside an
 * array gives its own code). */
static int reply_fill(fleet__reply_t *out, const redisReply *r,
                      fleet__reply_t **next) {
  size_t i;
  int err;

  memset(out, 0, sizeof(*out));
  switch (r->type) {
    case REDIS_REPLY_NIL:
      out->type = FLEET__REPLY_NIL;
      return 0;
    case REDIS_REPLY_INTEGER:
    case REDIS_REPLY_BOOL:
      out->type = FLEET__REPLY_INT;
      out->integer = r->integer;
      return 0;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_DOUBLE:
      out->type = r->type == REDIS_REPLY_STATUS ? FLEET__REPLY_STATUS
                                                : FLEET__REPLY_STR;
      out->str = r->str;
      out->len = r->len;
      return 0;
    case REDIS_REPLY_ARRAY:
    case REDIS_REPLY_SET:
    case REDIS_REPLY_MAP:
    case REDIS_REPLY_PUSH: {
      fleet__reply_t *kids = *next;
      out->type = FLEET__REPLY_ARRAY;
      out->nelem = r->elements;
      out->elem = kids;
      *next += r->elements;
      for (i = 0; i < r->elements; i++) {
        err = reply_fill(&kids[i], r->element[i], next);
        if (err != 0)
          return err;
      }
      return 0;
    }
    case REDIS_REPLY_ERROR:
      return fleet__reply_error_code(r->str, r->len);
    default:
      return FLEET_EPROTO;
  }
}

int fleet__redis_reply_convert(fleet__reply_scratch_t *s, const redisReply *r,
                               const fleet__reply_t **out) {
  size_t n = reply_count(r);
  fleet__reply_t *next;

  if (n > s->cap) {
    size_t cap = s->cap > 0 ? s->cap : 16;
    fleet__reply_t *p;
    while (cap < n)
      cap *= 2;
    p = realloc(s->nodes, cap * sizeof(*p));
    if (p == NULL)
      return FLEET_ENOMEM;
    s->nodes = p;
    s->cap = cap;
  }
  next = s->nodes + 1;
  *out = s->nodes;
  return reply_fill(s->nodes, r, &next);
}

void fleet__reply_scratch_free(fleet__reply_scratch_t *s) {
  free(s->nodes);
  s->nodes = NULL;
  s->cap = 0;
}
