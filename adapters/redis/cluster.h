/* cluster.h -- the Redis Cluster front-end: a slot map, one pipelined
 * connection per master, routing by the slot of each op's hash tag; the
 * Redis core (script_call.h) does the rest. */
#ifndef FLEET_REDIS_CLUSTER_H
#define FLEET_REDIS_CLUSTER_H

#include "backend.h"
#include "redis/conn.h"

/* Opens the cluster backend on the seed nodes of `url`; the arguments are
 * those of the vtable's open. */
int fleet__cluster_open(uv_loop_t *loop, const fleet__url_t *url,
                        const fleet__backend_config_t *config,
                        const fleet__backend_events_t *events, void *owner,
                        fleet__backend_t **out);

#endif /* FLEET_REDIS_CLUSTER_H */
