/* scripts.h -- the Lua scripts embedded into the library at build time
 * (generated from the .lua files of adapters/scripts/lua by
 * cmake/embed_lua.cmake): the one script table both backends run. */
#ifndef FLEET_SCRIPTS_SCRIPTS_H
#define FLEET_SCRIPTS_SCRIPTS_H

#include <stddef.h>

typedef struct {
  const char *name; /* file name without ".lua"; the op name */
  const char *body;
  size_t len;
  const char *sha1; /* 40 lowercase hex digits */
  /* The same op as a Redis 7 function library (cmake/embed_lua.cmake,
   * embed_library): its code, which FUNCTION LOAD registers once, and
   * the name FCALL calls ("fleet_" and the SHA1 of the code, which is
   * also the library's name). NULL and 0 for a script that runs only as
   * EVALSHA. */
  const char *lib;
  size_t lib_len;
  const char *fname; /* FLEET__SCRIPT_FNAME_LEN characters */
} fleet__script_t;

/* The length of a function library's name: "fleet_" and 40 hex digits. */
#define FLEET__SCRIPT_FNAME_LEN 46

/* The scripts the Redis adapter (one Redis, Sentinel, a connection the
 * user brings) and the memory backend run; and, in the same order, those
 * the cluster adapter runs, which publish wake-ups with SPUBLISH where the
 * first publish with PUBLISH (lib/wake.lua). Both hold fleet__nscripts. */
extern const fleet__script_t fleet__scripts[];
extern const fleet__script_t fleet__scripts_sharded[];
extern const size_t fleet__nscripts;

#endif /* FLEET_SCRIPTS_SCRIPTS_H */
