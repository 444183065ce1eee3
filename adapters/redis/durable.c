/* durable.c -- see durable.h. */
#include <stdlib.h>
#include <string.h>

#include "redis/durable.h"

int fleet__op_durable(fleet__op_t op) {
  switch (op) {
    case FLEET__OP_QUEUE_ENQUEUE:
    case FLEET__OP_QUEUE_CLAIM:
    case FLEET__OP_QUEUE_COMPLETE:
    case FLEET__OP_QUEUE_COMPLETE_CLAIM:
    case FLEET__OP_QUEUE_FAIL:
    case FLEET__OP_QUEUE_RELEASE:
    case FLEET__OP_LOCK_ACQUIRE:
      return 1;
    default:
      return 0;
  }
}

/* Nodes and string bytes of the tree under `r` (children only). */
static void reply_measure(const fleet__reply_t *r, size_t *nodes,
                          size_t *bytes) {
  size_t i;

  if (r->type == FLEET__REPLY_STR || r->type == FLEET__REPLY_STATUS)
    *bytes += r->len;
  if (r->type == FLEET__REPLY_ARRAY) {
    *nodes += r->nelem;
    for (i = 0; i < r->nelem; i++)
      reply_measure(&r->elem[i], nodes, bytes);
  }
}

/* Copies the children of `src` into `dst` (a node already copied):
 * nodes are taken from *next, string bytes from *text. */
static void reply_fill(fleet__reply_t *dst, const fleet__reply_t *src,
                       fleet__reply_t **next, char **text) {
  size_t i;

  if ((src->type == FLEET__REPLY_STR || src->type == FLEET__REPLY_STATUS) &&
      src->len > 0) {
    memcpy(*text, src->str, src->len);
    dst->str = *text;
    *text += src->len;
  }
  if (src->type == FLEET__REPLY_ARRAY) {
    fleet__reply_t *kids = *next;
    *next += src->nelem;
    dst->elem = kids;
    for (i = 0; i < src->nelem; i++) {
      kids[i] = src->elem[i];
      reply_fill(&kids[i], &src->elem[i], next, text);
    }
  }
}

fleet__reply_t *fleet__reply_clone(const fleet__reply_t *r) {
  size_t nodes = 1, bytes = 0;
  fleet__reply_t *copy, *next;
  char *text;

  reply_measure(r, &nodes, &bytes);
  copy = malloc(nodes * sizeof(*copy) + bytes + 1);
  if (copy == NULL)
    return NULL;
  copy[0] = *r;
  next = copy + 1;
  text = (char *)(copy + nodes);
  reply_fill(&copy[0], r, &next, &text);
  return copy;
}
