/* leader_int.h -- what src/lock/leader.c shows the tests: the candidate's state
 * by name. */
#ifndef FLEET_SRC_LEADER_INT_H
#define FLEET_SRC_LEADER_INT_H

#include "fleet.h"

/* The state of `leader` ("idle", "campaigning", "leader", "resigning",
 * "closing"), or "closed" for a handle that is not initialized. */
const char *fleet__leader_state_name(const fleet_leader_t *leader);

#endif /* FLEET_SRC_LEADER_INT_H */
