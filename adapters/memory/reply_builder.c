/* reply_builder.c -- how a memory op writes its reply, and how the reply
 * becomes a fleet__reply_t tree at delivery.
 *
 * Each value is encoded as one type byte and one 64-bit word (the integer,
 * the string length or the array length), followed for strings by the
 * bytes and a NUL. Values come in pre-order, so the tree is rebuilt in one
 * recursive pass that lays each array's children out contiguously. */
#include <stdlib.h>
#include <string.h>

#include "memory/reply_builder.h"

#define RB_HEADER (1 + sizeof(uint64_t))
#define RB_MIN_CAP 256

void fleet__rb_init(fleet__rb_t *rb) {
  memset(rb, 0, sizeof(*rb));
  rb->due = 1;
}

void fleet__rb_reset(fleet__rb_t *rb) {
  rb->len = 0;
  rb->nvalues = 0;
  rb->due = 1;
  rb->err = 0;
}

void fleet__rb_trim(fleet__rb_t *rb, size_t max_bytes) {
  if (rb->cap + rb->nodes_cap * sizeof(*rb->nodes) > max_bytes ||
      max_bytes == 0) {
    free(rb->buf);
    free(rb->nodes);
    fleet__rb_init(rb);
    return;
  }
  fleet__rb_reset(rb);
}

/* Appends the header of one value with room for `extra` more bytes, and
 * returns where those go, or NULL after setting the error. */
static char *rb_append(fleet__rb_t *rb, fleet__reply_type_t type, uint64_t word,
                       size_t extra) {
  size_t need, cap;
  char *p;

  if (rb->err != 0)
    return NULL;
  if (rb->due == 0) {
    rb->err = FLEET_EPROTO;
    return NULL;
  }
  if (extra > SIZE_MAX / 2 - RB_HEADER - rb->len) {
    rb->err = FLEET_ENOMEM;
    return NULL;
  }
  need = rb->len + RB_HEADER + extra;
  if (need > rb->cap) {
    cap = rb->cap > 0 ? rb->cap : RB_MIN_CAP;
    while (cap < need)
      cap *= 2;
    p = realloc(rb->buf, cap);
    if (p == NULL) {
      rb->err = FLEET_ENOMEM;
      return NULL;
    }
    rb->buf = p;
    rb->cap = cap;
  }
  p = rb->buf + rb->len;
  *p = (char)type;
  memcpy(p + 1, &word, sizeof(word));
  rb->len = need;
  rb->nvalues++;
  rb->due--;
  return p + RB_HEADER;
}

int fleet__rb_nil(fleet__rb_t *rb) {
  rb_append(rb, FLEET__REPLY_NIL, 0, 0);
  return rb->err;
}

int fleet__rb_int(fleet__rb_t *rb, int64_t v) {
  uint64_t word;

  memcpy(&word, &v, sizeof(word));
  rb_append(rb, FLEET__REPLY_INT, word, 0);
  return rb->err;
}

/* A string or status value: the bytes then a NUL, which the tree does not
 * promise but which costs nothing. */
static int rb_text(fleet__rb_t *rb, fleet__reply_type_t type, const void *p,
                   size_t len) {
  char *dst = rb_append(rb, type, len, len + 1);

  if (dst != NULL) {
    if (len > 0)
      memcpy(dst, p, len);
    dst[len] = '\0';
  }
  return rb->err;
}

int fleet__rb_str(fleet__rb_t *rb, const void *p, size_t len) {
  return rb_text(rb, FLEET__REPLY_STR, p, len);
}

int fleet__rb_bytes(fleet__rb_t *rb, fleet_bytes_t b) {
  if (b.base == NULL)
    return fleet__rb_nil(rb);
  return rb_text(rb, FLEET__REPLY_STR, b.base, b.len);
}

int fleet__rb_status(fleet__rb_t *rb, const char *s) {
  return rb_text(rb, FLEET__REPLY_STATUS, s, strlen(s));
}

int fleet__rb_array(fleet__rb_t *rb, size_t n) {
  if (rb_append(rb, FLEET__REPLY_ARRAY, n, 0) != NULL) {
    if (n > SIZE_MAX / sizeof(fleet__reply_t) - rb->due)
      rb->err = FLEET_ENOMEM;
    else
      rb->due += n;
  }
  return rb->err;
}

/* Decodes the value at `p` into `node`, taking its children's nodes from
 * `*next`, and returns the position after the value and its children. */
static const char *rb_decode(fleet__rb_t *rb, const char *p,
                             fleet__reply_t *node, size_t *next) {
  uint64_t word;
  size_t i;

  memset(node, 0, sizeof(*node));
  node->type = (fleet__reply_type_t)(unsigned char)*p;
  memcpy(&word, p + 1, sizeof(word));
  p += RB_HEADER;
  switch (node->type) {
    case FLEET__REPLY_INT:
      memcpy(&node->integer, &word, sizeof(word));
      break;
    case FLEET__REPLY_STR:
    case FLEET__REPLY_STATUS:
      node->str = p;
      node->len = (size_t)word;
      p += node->len + 1;
      break;
    case FLEET__REPLY_ARRAY:
      node->nelem = (size_t)word;
      if (node->nelem > 0) {
        fleet__reply_t *elem = &rb->nodes[*next];
        *next += node->nelem;
        node->elem = elem;
        for (i = 0; i < node->nelem; i++)
          p = rb_decode(rb, p, &elem[i], next);
      }
      break;
    default:
      break;
  }
  return p;
}

int fleet__rb_check(const fleet__rb_t *rb) {
  if (rb->err != 0)
    return rb->err;
  return rb->due != 0 ? FLEET_EPROTO : 0;
}

int fleet__rb_build(fleet__rb_t *rb, const fleet__reply_t **out) {
  fleet__reply_t *nodes;
  size_t next = 1;
  int rc = fleet__rb_check(rb);

  if (rc != 0)
    return rc;
  if (rb->nvalues > rb->nodes_cap) {
    nodes = realloc(rb->nodes, rb->nvalues * sizeof(*nodes));
    if (nodes == NULL)
      return FLEET_ENOMEM;
    rb->nodes = nodes;
    rb->nodes_cap = rb->nvalues;
  }
  rb_decode(rb, rb->buf, &rb->nodes[0], &next);
  *out = &rb->nodes[0];
  return 0;
}
