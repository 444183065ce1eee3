/* command.h -- the Redis commands that scripts may call on the memory
 * backend: one table, each command parsing its arguments and replying as
 * Redis does, over the keyspace. */
#ifndef FLEET_MEMORY_COMMAND_H
#define FLEET_MEMORY_COMMAND_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "memory/keyspace.h"

/* What a command runs against. The keyspace's clock is already set for the
 * op (fleet__ks_begin()). */
typedef struct {
  fleet__ks_t *ks;
  /* The store clock when the op started: microseconds since the Unix
   * epoch, never going backwards. What TIME returns. */
  uint64_t now_us;
  /* PUBLISH: queues `payload` (copied) for every current subscriber of
   * `channel`, delivered on a later loop iteration. Returns the number of
   * subscribed clients, or FLEET_ENOMEM. */
  int64_t (*publish)(void *publisher, fleet_bytes_t channel,
                     fleet_bytes_t payload);
  void *publisher;
  /* Where an error reply that needs formatting is written. */
  char err[96];
} fleet__mem_env_t;

/* Runs the command argv[0] (any case) with its arguments. On success it
 * pushes the reply onto `L` as redis.call converts a reply for a script
 * (integer -> number, bulk -> string, nil -> false, array -> table,
 * status -> {ok = text}) and returns NULL. On failure it pushes nothing and
 * returns the text of the error reply Redis would send ("WRONGTYPE ...",
 * "ERR syntax error"), valid until the next command. An unknown command or
 * an option that the keyspace does not implement is such an error, never
 * silently ignored. Like any Lua API call, it may raise a Lua error when
 * Lua runs out of memory. */
const char *fleet__mem_command(fleet__mem_env_t *env, lua_State *L,
                               const fleet_bytes_t *argv, size_t argc);

/* Whether `name` (NUL-terminated, any case) is a command of the table. */
int fleet__mem_command_known(const char *name);

#endif /* FLEET_MEMORY_COMMAND_H */
