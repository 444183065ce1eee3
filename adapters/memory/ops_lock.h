/* ops_lock.h -- the memory implementations of the lock ops, XX(ID, function)
 * as in FLEET__MEM_OP_IMPLS (adapters/memory/ops.h). */
#ifndef FLEET_MEMORY_OPS_LOCK_H
#define FLEET_MEMORY_OPS_LOCK_H

#define FLEET__MEM_OPS_LOCK(XX)                                                \
  XX(LOCK_ACQUIRE, fleet__mem_op_lock_acquire)                                 \
  XX(LOCK_RELEASE, fleet__mem_op_lock_release)                                 \
  XX(LOCK_RENEW, fleet__mem_op_lock_renew)                                     \
  XX(LOCK_QUERY, fleet__mem_op_lock_query)

#endif /* FLEET_MEMORY_OPS_LOCK_H */
