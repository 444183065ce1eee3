/* ops_store.h -- the memory implementations of the store ops, XX(ID, function)
 * as in FLEET__MEM_OP_IMPLS (adapters/memory/ops.h). */
#ifndef FLEET_MEMORY_OPS_STORE_H
#define FLEET_MEMORY_OPS_STORE_H

#define FLEET__MEM_OPS_STORE(XX)                                               \
  XX(STORE_PUT, fleet__mem_op_store_put)                                       \
  XX(STORE_GET, fleet__mem_op_store_get)                                       \
  XX(STORE_DEL, fleet__mem_op_store_del)                                       \
  XX(STORE_EXISTS, fleet__mem_op_store_exists)                                 \
  XX(STORE_TOUCH, fleet__mem_op_store_touch)                                   \
  XX(STORE_APPEND, fleet__mem_op_store_append)                                 \
  XX(STORE_READ, fleet__mem_op_store_read)                                     \
  XX(STORE_COUNT, fleet__mem_op_store_count)                                   \
  XX(STORE_LIST, fleet__mem_op_store_list)                                     \
  XX(STORE_SCAN, fleet__mem_op_store_scan)                                     \
  XX(STORE_UNLINK, fleet__mem_op_store_unlink)

#endif /* FLEET_MEMORY_OPS_STORE_H */
