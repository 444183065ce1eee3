/* ops/cron.h -- the backend ops of the cron scheduler, XX(ID, name,
 * command) as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV and
 * reply. (None yet.) */
#ifndef FLEET_OPS_CRON_H
#define FLEET_OPS_CRON_H

#define FLEET__OPS_CRON(XX)

#endif /* FLEET_OPS_CRON_H */
