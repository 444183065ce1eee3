/* ops_queue.h -- the memory implementations of the queue ops, XX(ID, function)
 * as in FLEET__MEM_OP_IMPLS (adapters/memory/ops.h). */
#ifndef FLEET_MEMORY_OPS_QUEUE_H
#define FLEET_MEMORY_OPS_QUEUE_H

#define FLEET__MEM_OPS_QUEUE(XX)

#endif /* FLEET_MEMORY_OPS_QUEUE_H */
