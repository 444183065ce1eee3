/* scripts.h -- the Lua scripts embedded into the library at build time
 * (generated from the .lua files of adapters/redis/lua by
 * cmake/embed_lua.cmake). */
#ifndef FLEET_REDIS_SCRIPTS_H
#define FLEET_REDIS_SCRIPTS_H

#include <stddef.h>

typedef struct {
  const char *name; /* file name without ".lua"; the op name */
  const char *body;
  size_t len;
  const char *sha1; /* 40 lowercase hex digits */
} fleet__script_t;

extern const fleet__script_t fleet__scripts[];
extern const size_t fleet__nscripts;

#endif /* FLEET_REDIS_SCRIPTS_H */
