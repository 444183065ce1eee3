/* reader.h -- the hiredis reply reader of a connection, with its reply
 * objects in an arena that the connection owns and reuses. */
#ifndef FLEET_REDIS_READER_H
#define FLEET_REDIS_READER_H

#include <stddef.h>

#include "redis/compat.h"

typedef struct fleet__rarena_block_s fleet__rarena_block_t;

/* Memory for the replies of one reader: blocks, the newest first, of which
 * allocations take from the newest. Replies are built one at a time, so the
 * arena holds at most one reply (possibly incomplete) and is emptied once
 * that reply has been dispatched. Emptying keeps a single block sized for
 * everything the last reply needed, so that parsing allocates nothing once
 * the arena has grown to the largest reply seen (up to a bound, above
 * which it lets the memory go). */
typedef struct {
  fleet__rarena_block_t *blocks;
} fleet__rarena_t;

/* Creates a reader that builds redisReply trees in `a`: they must never be
 * given to freeReplyObject(), and are valid until fleet__rarena_reset(). The
 * reader does not take ownership of `a`. Returns NULL when out of memory. */
redisReader *fleet__reader_create(fleet__rarena_t *a);

/* Forgets every reply in `a`: call it once the reply a reader returned has
 * been dispatched, or once the reader that built them is freed. */
void fleet__rarena_reset(fleet__rarena_t *a);

/* Frees the memory of `a`, which is then empty and may be used again. */
void fleet__rarena_free(fleet__rarena_t *a);

#endif /* FLEET_REDIS_READER_H */
