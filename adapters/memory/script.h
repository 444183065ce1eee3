/* script.h -- the script host of the memory backend: an embedded Lua 5.1
 * that runs the very Lua scripts the Redis adapter sends to Redis, with
 * redis.call reaching the keyspace through the command table. */
#ifndef FLEET_MEMORY_SCRIPT_H
#define FLEET_MEMORY_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "memory/keyspace.h"
#include "memory/reply_builder.h"

typedef struct fleet__mem_host_s fleet__mem_host_t;

/* Makes a host over `ks` (not owned) with every script compiled once.
 * `publish` and `publisher` are what PUBLISH calls (see fleet__mem_env_t).
 * Returns 0, FLEET_ENOMEM, or FLEET_EPROTO when an embedded script does
 * not compile. */
int fleet__mem_host_new(fleet__ks_t *ks,
                        int64_t (*publish)(void *publisher,
                                           fleet_bytes_t channel,
                                           fleet_bytes_t payload),
                        void *publisher, fleet__mem_host_t **out);

/* Frees the host and its Lua state. */
void fleet__mem_host_free(fleet__mem_host_t *h);

/* Runs `op` now: its script with KEYS and ARGV set, or its command with
 * the keys, then the args, as arguments; the keyspace clock must already
 * be set (fleet__ks_begin()), and `now_us` is what TIME returns. Writes the
 * reply to `out` (reset first) as Redis converts a script's return value
 * and returns 0, or returns the code of the error reply Redis would give
 * (fleet__reply_error_code()), FLEET_EPROTO for an error inside an array
 * or a reply nested too deep, FLEET_ENOMEM, or FLEET_EBACKEND for an op
 * the host lacks. */
int fleet__mem_host_run(fleet__mem_host_t *h, uint64_t now_us, fleet__op_t op,
                        const fleet_bytes_t *keys, size_t nkeys,
                        const fleet_bytes_t *args, size_t nargs,
                        fleet__rb_t *out);

/* Runs one command of the command table (argv[0] names it) as a command
 * op runs, with the same reply and error rules; for tests that compare a
 * memory keyspace with a Redis one. */
int fleet__mem_host_command(fleet__mem_host_t *h, uint64_t now_us,
                            const fleet_bytes_t *argv, size_t argc,
                            fleet__rb_t *out);

/* fleet__mem_host_command() on the store of `be`, a memory backend, at its
 * store clock: the reply is in `out` when this returns. */
int fleet__memory_command(fleet__backend_t *be, const fleet_bytes_t *argv,
                          size_t argc, fleet__rb_t *out);

/* Sets the failover epoch that fenced ops get from now on (a decimal, or
 * anything else to check how the scripts refuse it; 1 to 23 characters):
 * "0" at first, since one store never fails over. For tests that run the
 * epoch rules of lib/fence.lua on this backend as on Redis. Returns 0 or
 * FLEET_EINVAL. */
int fleet__mem_host_set_epoch(fleet__mem_host_t *h, const char *epoch);

/* Whether the host has `op`: a script op whose script is embedded, or a
 * command op whose command is in the table. */
int fleet__mem_host_has(const fleet__mem_host_t *h, fleet__op_t op);

#endif /* FLEET_MEMORY_SCRIPT_H */
