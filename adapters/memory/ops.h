/* ops.h -- the memory backend's ops: the C twin of each Lua script, what an
 * op may use (keyspace, clock, publish), and the table that maps each
 * fleet__op_t to its function. */
#ifndef FLEET_MEMORY_OPS_H
#define FLEET_MEMORY_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "memory/keyspace.h"
#include "memory/reply_builder.h"

/* What an op runs against. The keyspace's clock is already set to
 * `now_us / 1000` and stays there for the whole op. */
typedef struct fleet__mem_ctx_s {
  fleet__ks_t *ks;
  /* The store clock when the op started: microseconds since the Unix
   * epoch, never going backwards. What TIME returns inside a script. */
  uint64_t now_us;
  /* Use fleet__mem_publish(). */
  int64_t (*publish)(void *publisher, fleet_bytes_t channel,
                     fleet_bytes_t payload);
  void *publisher;
} fleet__mem_ctx_t;

/* PUBLISH channel payload: queues `payload` (copied) for every current
 * subscriber of `channel` on the store, delivered on a later loop
 * iteration. Returns the number of subscribers, or FLEET_ENOMEM. */
static inline int64_t fleet__mem_publish(fleet__mem_ctx_t *ctx,
                                         fleet_bytes_t channel,
                                         fleet_bytes_t payload) {
  return ctx->publish(ctx->publisher, channel, payload);
}

/* An op: the same KEYS, ARGV and reply as its Lua script (see
 * FLEET__OP_MAP in backend.h). It runs to completion at once against
 * `ctx`, writes one reply to `out` and returns 0, or returns a negative
 * fleet error instead of a reply: the code that the Redis adapter would
 * derive from the script's error reply (a script's
 * redis.error_reply('FLEET_ESTALE ...') is `return FLEET_ESTALE;` here). A
 * reply left incomplete gives FLEET_EPROTO; a failed keyspace or builder
 * call may simply be returned. Strings from the keyspace stay valid until
 * the op returns. */
typedef int fleet__mem_op_fn(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                             size_t nkeys, const fleet_bytes_t *args,
                             size_t nargs, fleet__rb_t *out);

/* The ops implemented in memory, XX(ID, function): one line per op, in the
 * ops_<primitive>.h list next to the ops_<primitive>.c that holds the
 * functions. An op of FLEET__OP_MAP missing here fails when called. */
#define FLEET__MEM_OPS_CORE(XX)                                                \
  XX(PING, fleet__mem_op_ping)                                                 \
  XX(TIME, fleet__mem_op_time)                                                 \
  XX(PUBLISH, fleet__mem_op_publish)

#include "memory/ops_lock.h"
#include "memory/ops_queue.h"
#include "memory/ops_store.h"

#define FLEET__MEM_OP_IMPLS(XX)                                                \
  FLEET__MEM_OPS_CORE(XX)                                                      \
  FLEET__MEM_OPS_LOCK(XX)                                                      \
  FLEET__MEM_OPS_QUEUE(XX)                                                     \
  FLEET__MEM_OPS_STORE(XX)

#define FLEET__MEM_OP_DECLARE(id, fn) fleet__mem_op_fn fn;
FLEET__MEM_OP_IMPLS(FLEET__MEM_OP_DECLARE)
#undef FLEET__MEM_OP_DECLARE

/* Whether `op` has a memory implementation (0 for an op out of range). */
int fleet__memory_op_implemented(fleet__op_t op);

/* Runs `op` against `ctx` with a reset `out`. Returns 0 when `out` holds a
 * complete reply, the op's error, FLEET_EPROTO for an incomplete reply,
 * FLEET_EINVAL for an op out of range, or FLEET_EBACKEND for an op with no
 * memory implementation. */
int fleet__mem_op_run(fleet__mem_ctx_t *ctx, fleet__op_t op,
                      const fleet_bytes_t *keys, size_t nkeys,
                      const fleet_bytes_t *args, size_t nargs,
                      fleet__rb_t *out);

#endif /* FLEET_MEMORY_OPS_H */
