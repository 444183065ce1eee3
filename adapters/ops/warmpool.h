/* ops/warmpool.h -- the backend ops of the warm resource pool, XX(ID,
 * name, command) as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV
 * and reply. (None yet.) */
#ifndef FLEET_OPS_WARMPOOL_H
#define FLEET_OPS_WARMPOOL_H

#define FLEET__OPS_WARMPOOL(XX)

#endif /* FLEET_OPS_WARMPOOL_H */
