/* ops_core.c -- the memory op table, the op runner, and the core ops PING,
 * TIME (adapters/redis/lua/time.lua) and PUBLISH. */
#include "memory/ops.h"

static fleet__mem_op_fn *const ops_table[FLEET__OP_COUNT] = {
#define OPS_ENTRY(id, fn) [FLEET__OP_##id] = fn,
    FLEET__MEM_OP_IMPLS(OPS_ENTRY)
#undef OPS_ENTRY
};

int fleet__memory_op_implemented(fleet__op_t op) {
  return (unsigned)op < FLEET__OP_COUNT && ops_table[op] != NULL;
}

int fleet__mem_op_run(fleet__mem_ctx_t *ctx, fleet__op_t op,
                      const fleet_bytes_t *keys, size_t nkeys,
                      const fleet_bytes_t *args, size_t nargs,
                      fleet__rb_t *out) {
  int rc;

  if ((unsigned)op >= FLEET__OP_COUNT)
    return FLEET_EINVAL;
  if (ops_table[op] == NULL)
    return FLEET_EBACKEND;
  fleet__rb_reset(out);
  rc = ops_table[op](ctx, keys, nkeys, args, nargs, out);
  return rc < 0 ? rc : fleet__rb_check(out);
}

/* PING. KEYS: none. ARGV: none. Reply: status "PONG". */
int fleet__mem_op_ping(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                       size_t nkeys, const fleet_bytes_t *args, size_t nargs,
                       fleet__rb_t *out) {
  return fleet__rb_status(out, "PONG");
}

/* TIME. KEYS: none. ARGV: none. Reply: {seconds, microseconds}. */
int fleet__mem_op_time(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                       size_t nkeys, const fleet_bytes_t *args, size_t nargs,
                       fleet__rb_t *out) {
  fleet__rb_array(out, 2);
  fleet__rb_int(out, (int64_t)(ctx->now_us / 1000000));
  return fleet__rb_int(out, (int64_t)(ctx->now_us % 1000000));
}

/* PUBLISH. KEYS: none. ARGV: channel, payload. Reply: the number of
 * subscribers. */
int fleet__mem_op_publish(fleet__mem_ctx_t *ctx, const fleet_bytes_t *keys,
                          size_t nkeys, const fleet_bytes_t *args, size_t nargs,
                          fleet__rb_t *out) {
  int64_t n;

  if (nkeys != 0 || nargs != 2)
    return FLEET_EBACKEND;
  n = fleet__mem_publish(ctx, args[0], args[1]);
  return n < 0 ? (int)n : fleet__rb_int(out, n);
}
