/* reader.c -- the hiredis reply reader of a connection, with its reply
 * objects in an arena that the connection owns and reuses.
 *
 * hiredis's own reply objects cost a malloc per element and one more per
 * string, and as many frees, for every reply. A fleet reader installs
 * reply object functions (through compat.h) that build the same redisReply
 * trees in an arena instead: nodes, element vectors and strings are carved
 * from one block, and the arena is emptied once the reply is dispatched. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "redis/reader.h"

/* The first block, and the most that emptying keeps: a rare large reply
 * (a 1 MiB value) should not pin its memory for the life of the client. */
#define READER_FIRST_BLOCK (16 * 1024)
#define READER_KEEP (1024 * 1024)

struct fleet__rarena_block_s {
  fleet__rarena_block_t *next;
  size_t cap;
  size_t used;
  char data[];
};

static fleet__rarena_block_t *reader_block_new(size_t cap) {
  fleet__rarena_block_t *b;

  if (cap > SIZE_MAX - sizeof(*b))
    return NULL;
  b = malloc(sizeof(*b) + cap);
  if (b == NULL)
    return NULL;
  b->next = NULL;
  b->cap = cap;
  b->used = 0;
  return b;
}

/* Padding that aligns `used` bytes into `b` to `align` (a power of two). */
static size_t reader_pad(const fleet__rarena_block_t *b, size_t align) {
  uintptr_t at = (uintptr_t)(b->data + b->used);
  return (size_t)(-at & (align - 1));
}

/* `size` bytes aligned to `align`, from the newest block or from a new one
 * at least twice its size. NULL when out of memory. */
static void *reader_alloc(fleet__rarena_t *a, size_t size, size_t align) {
  fleet__rarena_block_t *b = a->blocks;
  size_t pad, cap;
  void *p;

  if (size > SIZE_MAX / 4)
    return NULL;
  if (b == NULL || size + align > b->cap - b->used) {
    cap = b != NULL ? b->cap * 2 : READER_FIRST_BLOCK;
    while (cap < size + align)
      cap *= 2;
    b = reader_block_new(cap);
    if (b == NULL)
      return NULL;
    b->next = a->blocks;
    a->blocks = b;
  }
  pad = reader_pad(b, align);
  p = b->data + b->used + pad;
  b->used += pad + size;
  return p;
}

void fleet__rarena_reset(fleet__rarena_t *a) {
  fleet__rarena_block_t *b = a->blocks;
  size_t total = 0;

  if (b == NULL)
    return;
  if (b->next == NULL && b->cap <= READER_KEEP) {
    b->used = 0;
    return;
  }
  /* The last reply outgrew the block: one block that holds all it needed
   * replaces them (allocated lazily if that fails, or if it is too big). */
  for (; b != NULL; b = b->next)
    total += b->cap;
  fleet__rarena_free(a);
  if (total <= READER_KEEP)
    a->blocks = reader_block_new(total);
}

void fleet__rarena_free(fleet__rarena_t *a) {
  while (a->blocks != NULL) {
    fleet__rarena_block_t *b = a->blocks;
    a->blocks = b->next;
    free(b);
  }
}

/* ------------------------------------------------------------------------ */
/* Reply object functions                                                   */

/* A zeroed node of `type`, linked into its parent array as hiredis's own
 * functions do. */
static redisReply *reader_node(const redisReadTask *t, int type) {
  redisReply *r = reader_alloc(t->privdata, sizeof(*r), _Alignof(redisReply));

  if (r == NULL)
    return NULL;
  memset(r, 0, sizeof(*r));
  r->type = type;
  if (t->parent != NULL) {
    redisReply *parent = t->parent->obj;
    parent->element[t->idx] = r;
  }
  return r;
}

void *fleet__reader_string(const redisReadTask *t, char *s, size_t len) {
  char *copy;
  redisReply *r;

  if (len == SIZE_MAX)
    return NULL;
  copy = reader_alloc(t->privdata, len + 1, 1);
  if (copy == NULL || (r = reader_node(t, t->type)) == NULL)
    return NULL;
  memcpy(copy, s, len);
  copy[len] = '\0';
  r->str = copy;
  r->len = len;
  return r;
}

void *fleet__reader_array(const redisReadTask *t, size_t n) {
  redisReply **element = NULL;
  redisReply *r;

  if (n > SIZE_MAX / sizeof(*element))
    return NULL;
  if (n > 0) {
    element =
        reader_alloc(t->privdata, n * sizeof(*element), _Alignof(redisReply *));
    if (element == NULL)
      return NULL;
  }
  r = reader_node(t, t->type);
  if (r == NULL)
    return NULL;
  r->elements = n;
  r->element = element;
  return r;
}

void *fleet__reader_integer(const redisReadTask *t, long long v) {
  redisReply *r = reader_node(t, t->type);

  if (r != NULL)
    r->integer = v;
  return r;
}

/* The task's type is that of the string or array the server announced as
 * missing ("$-1", "*-1"). */
void *fleet__reader_nil(const redisReadTask *t) {
  return reader_node(t, REDIS_REPLY_NIL);
}

redisReader *fleet__reader_create(fleet__rarena_t *a) {
  static redisReplyObjectFunctions fns = FLEET__READER_FUNCTIONS;
  redisReader *r = redisReaderCreateWithFunctions(&fns);

  if (r == NULL)
    return NULL;
  r->privdata = a;
  fleet__reader_setup(r);
  return r;
}
