/* ops_queue.h -- the memory implementations of the queue ops, XX(ID, function)
 * as in FLEET__MEM_OP_IMPLS (adapters/memory/ops.h). */
#ifndef FLEET_MEMORY_OPS_QUEUE_H
#define FLEET_MEMORY_OPS_QUEUE_H

#define FLEET__MEM_OPS_QUEUE(XX)                                               \
  XX(QUEUE_ENQUEUE, fleet__mem_op_queue_enqueue)                               \
  XX(QUEUE_CLAIM, fleet__mem_op_queue_claim)                                   \
  XX(QUEUE_REFRESH, fleet__mem_op_queue_refresh)                               \
  XX(QUEUE_COMPLETE, fleet__mem_op_queue_complete)                             \
  XX(QUEUE_RELEASE, fleet__mem_op_queue_release)                               \
  XX(QUEUE_FAIL, fleet__mem_op_queue_fail)                                     \
  XX(QUEUE_RECOVER, fleet__mem_op_queue_recover)                               \
  XX(QUEUE_GET, fleet__mem_op_queue_get)                                       \
  XX(QUEUE_CANCEL, fleet__mem_op_queue_cancel)                                 \
  XX(QUEUE_COUNTS, fleet__mem_op_queue_counts)                                 \
  XX(QUEUE_LIST, fleet__mem_op_queue_list)                                     \
  XX(QUEUE_PURGE, fleet__mem_op_queue_purge)

#endif /* FLEET_MEMORY_OPS_QUEUE_H */
