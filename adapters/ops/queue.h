/* ops/queue.h -- the backend ops of the queue primitive, XX(ID, name, command)
 * as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV and reply. */
#ifndef FLEET_OPS_QUEUE_H
#define FLEET_OPS_QUEUE_H

#define FLEET__OPS_QUEUE(XX)

#endif /* FLEET_OPS_QUEUE_H */
