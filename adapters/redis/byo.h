/* byo.h -- the backend over a hiredis async context the program owns
 * (fleet_client_init_hiredis(), include/fleet/hiredis.h). */
#ifndef FLEET_REDIS_BYO_H
#define FLEET_REDIS_BYO_H

#include "backend.h"

struct redisAsyncContext;

/* Opens the backend over `ac` (and `sub_ac` for pub/sub, or NULL for a
 * connection of its own made on first subscribe). Returns 0 or a negative
 * error, and then nothing is left on the loop. */
int fleet__byo_open(uv_loop_t *loop, struct redisAsyncContext *ac,
                    struct redisAsyncContext *sub_ac,
                    const fleet__backend_config_t *config,
                    const fleet__backend_events_t *events, void *owner,
                    fleet__backend_t **out);

extern const fleet__backend_vtable_t fleet__byo_backend;

#endif /* FLEET_REDIS_BYO_H */
