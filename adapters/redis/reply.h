/* reply.h -- hiredis replies to fleet replies, Redis errors to codes. */
#ifndef FLEET_REDIS_REPLY_H
#define FLEET_REDIS_REPLY_H

#include "backend.h"
#include "redis/compat.h"

/* Reusable node storage for converted replies, so that converting a reply
 * does not allocate once the storage has grown to the largest reply. */
typedef struct {
  fleet__reply_t *nodes;
  size_t cap;
} fleet__reply_scratch_t;

/* Converts `r` into a tree in `s`; `*out` points into `s` and is valid
 * until the next conversion. Strings point into `r`. Returns 0, the code of
 * an error reply, FLEET_EPROTO for a reply type fleet does not expect, or
 * FLEET_ENOMEM. */
int fleet__redis_reply_convert(fleet__reply_scratch_t *s, const redisReply *r,
                               const fleet__reply_t **out);

void fleet__reply_scratch_free(fleet__reply_scratch_t *s);

/* The first error reply in the tree of `r` (`r` itself included), or NULL:
 * the one whose code fleet__redis_reply_convert() returned. */
const redisReply *fleet__redis_reply_first_error(const redisReply *r);

/* Whether `r` is the NOSCRIPT error of an EVALSHA. */
int fleet__redis_is_noscript(const redisReply *r);

/* Whether `r` refuses an FCALL before it ran: the function is not on the
 * server ("ERR Function not found"), or FCALL is not a command there (an
 * unknown command before Redis 7.0) or not allowed (NOPERM naming it). */
int fleet__redis_is_fcall_refused(const redisReply *r);

#endif /* FLEET_REDIS_REPLY_H */
