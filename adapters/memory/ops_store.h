/* ops_store.h -- the memory implementations of the store ops, XX(ID, function)
 * as in FLEET__MEM_OP_IMPLS (adapters/memory/ops.h). */
#ifndef FLEET_MEMORY_OPS_STORE_H
#define FLEET_MEMORY_OPS_STORE_H

#define FLEET__MEM_OPS_STORE(XX)

#endif /* FLEET_MEMORY_OPS_STORE_H */
