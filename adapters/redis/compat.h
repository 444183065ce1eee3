/* compat.h -- the one place that hides differences between hiredis 0.14
 * (Debian 12) and hiredis 1.x, or Redict's fork hiredict 1.x through its
 * hiredis shims (`sh scripts/test.sh --hiredis1` builds and tests fleet
 * on that).
 * fleet uses the reply reader, and the async context of a connection the
 * user brings (adapters/redis/byo.c). */
#ifndef FLEET_REDIS_COMPAT_H
#define FLEET_REDIS_COMPAT_H

#include <stdint.h>

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

/* hiredict's shims (1.3) miss a few of hiredis's names: a flag (spelt
 * REDIS_DICONNECTING there) and the connection types, an enum. */
#ifdef HIREDICT_MAJOR
#ifndef REDIS_DISCONNECTING
#define REDIS_DISCONNECTING REDICT_DISCONNECTING
#endif
#ifndef REDIS_CONN_TCP
#define REDIS_CONN_TCP REDICT_CONN_TCP
#define REDIS_CONN_UNIX REDICT_CONN_UNIX
#endif
#endif

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

/* The reply object functions a fleet reader installs (adapters/redis/
 * reader.c). 0.14 passes the size of an array as an int, negative when the
 * server announced more than INT_MAX elements; 1.x passes a size_t and adds
 * RESP3 doubles and booleans, which fleet builds as the text the server
 * sent and as an integer. fleet__reader_array() takes SIZE_MAX for an
 * array too large to build. FLEET__READER_FUNCTIONS initializes the table
 * of the version at hand; freeObject is NULL because the arena frees. */
void *fleet__reader_string(const redisReadTask *t, char *s, size_t len);
void *fleet__reader_array(const redisReadTask *t, size_t n);
void *fleet__reader_integer(const redisReadTask *t, long long v);
void *fleet__reader_nil(const redisReadTask *t);

#if HIREDIS_MAJOR >= 1
static inline void *fleet__reader_double(const redisReadTask *t, double d,
                                         char *s, size_t len) {
  (void)d;
  return fleet__reader_string(t, s, len);
}

static inline void *fleet__reader_bool(const redisReadTask *t, int b) {
  return fleet__reader_integer(t, b);
}

#define FLEET__READER_FUNCTIONS                                                \
  {                                                                            \
    fleet__reader_string, fleet__reader_array, fleet__reader_integer,          \
        fleet__reader_double, fleet__reader_nil, fleet__reader_bool, NULL      \
  }
#else
static inline void *fleet__reader_array_int(const redisReadTask *t, int n) {
  return fleet__reader_array(t, n < 0 ? SIZE_MAX : (size_t)n);
}

#define FLEET__READER_FUNCTIONS                                                \
  {                                                                            \
    fleet__reader_string, fleet__reader_array_int, fleet__reader_integer,      \
        fleet__reader_nil, NULL                                                \
  }
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
