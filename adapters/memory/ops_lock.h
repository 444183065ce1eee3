/* ops_lock.h -- the memory implementations of the lock ops, XX(ID, function)
 * as in FLEET__MEM_OP_IMPLS (adapters/memory/ops.h). */
#ifndef FLEET_MEMORY_OPS_LOCK_H
#define FLEET_MEMORY_OPS_LOCK_H

#define FLEET__MEM_OPS_LOCK(XX)

#endif /* FLEET_MEMORY_OPS_LOCK_H */
