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

#endif /* FLEET_REDIS_COMPAT_H */
