/* ops/store.h -- the backend ops of the store primitive, XX(ID, name, command)
 * as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV and reply. */
#ifndef FLEET_OPS_STORE_H
#define FLEET_OPS_STORE_H

#define FLEET__OPS_STORE(XX)

#endif /* FLEET_OPS_STORE_H */
