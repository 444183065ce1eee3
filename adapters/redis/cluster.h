/* cluster.h -- the Redis Cluster client: a slot map, one pipelined
 * connection per master, routing by the slot of each op's hash tag. */
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

/* Shared with redis.c: the script of an op (`sharded`: the copy the
 * cluster adapter runs, scripts.h), and the EVALSHA -> EVAL
 * rewrite after NOSCRIPT (0 or FLEET_ENOMEM). */
const fleet__script_t *fleet__redis_find_script(const char *name, int sharded);
int fleet__redis_req_to_eval(fleet__rreq_t *req);

#endif /* FLEET_REDIS_CLUSTER_H */
