/* durable.h -- helpers of the durability option (WAIT after job-state
 * writes): which ops wait, and a converted reply kept across the WAIT. */
#ifndef FLEET_REDIS_DURABLE_H
#define FLEET_REDIS_DURABLE_H

#include "backend.h"

/* Whether `op` is followed by WAIT when the client asks for replicas: it
 * changes a job's state (enqueue, claim, complete and a worker's
 * complete+claim, fail, release) or grants a lease (a lock's or a
 * leader's acquire), so that a grant no replica has fails rather than
 * being lost, unknown to its holder, in a failover. */
int fleet__op_durable(fleet__op_t op);

/* A deep copy of `r` (strings included) in one allocation; NULL when out
 * of memory. Free with free(). */
fleet__reply_t *fleet__reply_clone(const fleet__reply_t *r);

#endif /* FLEET_REDIS_DURABLE_H */
