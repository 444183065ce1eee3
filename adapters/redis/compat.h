/* compat.h -- the one place that hides differences between hiredis 0.14
 * (Debian 12) and hiredis 1.x. fleet uses only the reply reader. */
#ifndef FLEET_REDIS_COMPAT_H
#define FLEET_REDIS_COMPAT_H

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

/* hiredis 1.x knows RESP3 reply types; fleet speaks RESP2 and treats them,
 * should a server send them, like their RESP2 shapes or as unexpected. */
#ifndef REDIS_REPLY_DOUBLE
#define REDIS_REPLY_DOUBLE 7
#endif
#ifndef REDIS_REPLY_BOOL
#define REDIS_REPLY_BOOL 8
#endif
#ifndef REDIS_REPLY_MAP
#define REDIS_REPLY_MAP 9
#endif
#ifndef REDIS_REPLY_SET
#define REDIS_REPLY_SET 10
#endif
#ifndef REDIS_REPLY_PUSH
#define REDIS_REPLY_PUSH 12
#endif

/* The reader's maximum buffered input: hiredis 0.14 has no setter and keeps
 * 16 KiB of slack; both versions accept the field. */
static inline void fleet__reader_setup(redisReader *r) {
  r->maxbuf = 0; /* keep freed buffer space; fleet reads in 64 KiB chunks */
}

/* The reader's task being parsed: 0.14 keeps a fixed stack of tasks,
 * 1.x an array of pointers that grows with the nesting. */
static inline const redisReadTask *fleet__reader_task(const redisReader *r) {
  if (r->ridx < 0)
    return NULL;
#if HIREDIS_MAJOR >= 1
  return r->task[r->ridx];
#else
  return &r->rstack[r->ridx];
#endif
}

/* The length a bulk string announces ("$1000000000\r\n") while the reader
 * waits for its bytes, or 0. Both versions consume the type byte and leave
 * `pos` on the length until the whole string has arrived, so a reply can
 * be refused as soon as its length is known rather than once buffered. */
static inline unsigned long long
fleet__reader_pending_bulk(const redisReader *r) {
  const redisReadTask *t = fleet__reader_task(r);
  unsigned long long n = 0;
  size_t i;

  if (t == NULL || t->type != REDIS_REPLY_STRING || r->buf == NULL)
    return 0;
  for (i = r->pos; i < r->len && r->buf[i] >= '0' && r->buf[i] <= '9'; i++) {
    if (n > (~0ull - 9) / 10)
      return ~0ull;
    n = n * 10 + (unsigned long long)(r->buf[i] - '0');
  }
  return n;
}

#endif /* FLEET_REDIS_COMPAT_H */
