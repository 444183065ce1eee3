/* ops/lock.h -- the backend ops of the lock primitive, XX(ID, name, command)
 * as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV and reply. */
#ifndef FLEET_OPS_LOCK_H
#define FLEET_OPS_LOCK_H

#define FLEET__OPS_LOCK(XX)

#endif /* FLEET_OPS_LOCK_H */
