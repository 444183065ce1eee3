/* script.c -- the memory backend's Lua 5.1 script host: the sandbox, the
 * redis.* library, the reply conversions and the op runner. It builds with
 * Lua 5.1 or LuaJIT 2.1 (FLEET_LUA, CMakeLists.txt), which runs the same
 * Lua 5.1 code; with LuaJIT its compiler is on.
 *
 * One lua_State per store, shared by its peer clients. At creation every
 * script op's script (the text cmake/embed_lua.cmake embeds, --#include
 * expanded, the very text EVALSHA runs on Redis) is compiled once and kept
 * in the registry; a call sets KEYS and ARGV and runs it. A script that
 * has a function library (scripts.h, what FCALL runs on Redis 7) is
 * loaded as that instead: the library runs once, its function is kept,
 * and a call runs only the function with the keys and args, so that the
 * shared code the script includes is not defined again on every call. A
 * command op (PING, PUBLISH) runs its command straight from the table, and
 * its reply takes the same way back as a script's return value would.
 *
 * What a script sees, as on Redis 7.0:
 * - the base, table, string and math libraries, without loadfile, dofile,
 *   load, loadstring, getfenv, setfenv and print; no os, io, debug or
 *   package;
 * - redis.call, redis.pcall, redis.error_reply and redis.status_reply; any
 *   other redis.* field (setresp, sha1hex, log, ...) and the cjson, struct,
 *   cmsgpack and bit libraries, which fleet's scripts do not use, raise an
 *   error that names them;
 * - globals protected: a script runs in an environment of its own whose
 *   reads fall through to the globals and whose writes raise an error, as
 *   does reading a global that does not exist. Unlike Redis 7 (a patched
 *   Lua), rawset() on _G and the library tables can still change them:
 *   fleet's own scripts are the only ones that run here.
 *
 * Conversions, as Redis documents them. Redis to Lua (redis.call's
 * result): integer -> number, bulk -> string, nil -> false, array ->
 * table, status -> {ok = text}, error -> raised {err = text} (redis.call)
 * or returned (redis.pcall). Lua to Redis (a script's return value):
 * number -> integer, truncated; string -> bulk; true -> 1; false and nil
 * -> nil; a table with a string `err` -> error, with a string `ok` ->
 * status, else an array of its items up to the first nil. Numbers passed
 * to redis.call become "%.17g" text, as Redis 7.0 writes them. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "common/util.h"
#include "memory/command.h"
#include "memory/lua_pool.h"
#include "memory/script.h"
#include "scripts/scripts.h"

/* How deep a returned table may nest; Redis refuses deeper replies too. */
#define HOST_MAX_DEPTH 32

/* Text of a number argument: "%.17g" of a double fits. */
typedef char host_num_t[32];

struct fleet__mem_host_s {
  lua_State *L;
  fleet__lua_pool_t *pool; /* L's memory. */
  fleet__mem_env_t env;
  int fn[FLEET__OP_COUNT]; /* Registry refs of the compiled scripts. */
  /* 1 where fn[] is a function library's function (called with the keys
   * and the args), 0 where it is a script's chunk (KEYS and ARGV set). */
  unsigned char lib[FLEET__OP_COUNT];
  fleet__op_t loading; /* the op whose library is being loaded */
  int runner;          /* Registry ref of host_runner. */
  /* The failover epoch fenced ops get ("0": see fleet__mem_host_set_epoch). */
  char epoch[24];
  /* redis.call's arguments, kept between calls. */
  fleet_bytes_t *argv;
  host_num_t *num;
  size_t cap;
  /* The op being run, for host_runner. */
  fleet__op_t op;
  const fleet_bytes_t *keys;
  size_t nkeys;
  const fleet_bytes_t *args;
  size_t nargs;
  fleet__rb_t *out;
  int status;
};

/* The embedded script named like `op`, or NULL. */
static const fleet__script_t *host_script(fleet__op_t op) {
  const char *name = fleet__op_name(op);
  size_t i;

  for (i = 0; name != NULL && i < fleet__nscripts; i++)
    if (strcmp(fleet__scripts[i].name, name) == 0)
      return &fleet__scripts[i];
  return NULL;
}

int fleet__memory_op_implemented(fleet__op_t op) {
  const char *command;

  if ((unsigned)op >= FLEET__OP_COUNT)
    return 0;
  command = fleet__op_command(op);
  return command != NULL ? fleet__mem_command_known(command)
                         : host_script(op) != NULL;
}

/* ------------------------------------------------------------------------ */
/* Lua to reply                                                             */

/* Redis truncates a number to an integer with a C cast; out of range (and
 * NaN) it gives what x86 gives, without the undefined behaviour. */
static int64_t host_trunc(double d) {
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0)
    return (int64_t)d;
  return INT64_MIN;
}

/* Where host_runner keeps the strings "err" and "ok", so that the reply
 * walk does not intern them for every table. */
#define HOST_ERR_KEY 1
#define HOST_OK_KEY 2

/* The string field, named by the string at `key`, of the table at `idx`
 * (both absolute), read raw, or NULL. */
static const char *host_field(lua_State *L, int idx, int key, size_t *len) {
  const char *s = NULL;

  lua_pushvalue(L, key);
  lua_rawget(L, idx);
  if (lua_type(L, -1) == LUA_TSTRING)
    s = lua_tolstring(L, -1, len);
  lua_pop(L, 1);
  return s;
}

/* Writes the value at `idx` (absolute) to `out`, as Redis turns a script's
 * return value into a reply. Returns 0, a builder error, the code of an
 * error table at the top, or FLEET_EPROTO for one nested in an array or a
 * reply nested deeper than HOST_MAX_DEPTH. Strings stay on the Lua stack
 * only until this returns, so they are copied into `out`. */
static int host_reply(lua_State *L, int idx, int depth, fleet__rb_t *out) {
  const char *s;
  size_t len, n, i;
  int rc;

  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      return fleet__rb_int(out, host_trunc(lua_tonumber(L, idx)));
    case LUA_TSTRING:
      s = lua_tolstring(L, idx, &len);
      return fleet__rb_str(out, s, len);
    case LUA_TBOOLEAN:
      return lua_toboolean(L, idx) ? fleet__rb_int(out, 1) : fleet__rb_nil(out);
    case LUA_TTABLE:
      break;
    default:
      return fleet__rb_nil(out);
  }
  if (depth >= HOST_MAX_DEPTH || !lua_checkstack(L, 2))
    return FLEET_EPROTO;
  s = host_field(L, idx, HOST_ERR_KEY, &len);
  if (s != NULL)
    return depth > 0 ? FLEET_EPROTO : fleet__reply_error_code(s, len);
  s = host_field(L, idx, HOST_OK_KEY, &len);
  if (s != NULL)
    return fleet__rb_status(out, s);
  for (n = 0;; n++) {
    lua_rawgeti(L, idx, (int)n + 1);
    i = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (i)
      break;
  }
  rc = fleet__rb_array(out, n);
  for (i = 0; i < n && rc == 0; i++) {
    lua_rawgeti(L, idx, (int)i + 1);
    rc = host_reply(L, lua_gettop(L), depth + 1, out);
    lua_pop(L, 1);
  }
  return rc;
}

/* The code of the error value on top of the stack: an {err = text} table
 * raised by redis.call or error(), or a runtime error message, which Redis
 * wraps as "ERR user_script:...". Its text becomes the reply in `out`, a
 * single string, so that the caller can report it as Redis's error reply
 * would be (the backend's detail). */
static int host_error_code(lua_State *L, int lua_rc, fleet__rb_t *out) {
  const char *s = NULL;
  size_t len = 0;

  if (lua_rc == LUA_ERRMEM)
    return FLEET_ENOMEM;
  if (lua_type(L, -1) == LUA_TTABLE && lua_checkstack(L, 2)) {
    lua_pushliteral(L, "err");
    s = host_field(L, lua_gettop(L) - 1, lua_gettop(L), &len);
  } else if (lua_type(L, -1) == LUA_TSTRING) {
    s = lua_tolstring(L, -1, &len);
  }
  if (s == NULL)
    return FLEET_EBACKEND;
  fleet__rb_reset(out);
  (void)fleet__rb_str(out, s, len);
  return fleet__reply_error_code(s, len);
}

/* ------------------------------------------------------------------------ */
/* The redis library                                                        */

/* Pushes {err = msg}; raises it when `raise`. */
static int host_error(lua_State *L, int raise, const char *msg) {
  lua_createtable(L, 0, 1);
  lua_pushstring(L, msg);
  lua_setfield(L, -2, "err");
  return raise ? lua_error(L) : 1;
}

/* Room for `n` arguments. Returns 0 or -1 when out of memory. */
static int host_reserve(fleet__mem_host_t *h, size_t n) {
  fleet_bytes_t *argv;
  host_num_t *num;
  size_t cap = h->cap > 0 ? h->cap : 16;

  if (n <= h->cap)
    return 0;
  while (cap < n)
    cap *= 2;
  argv = realloc(h->argv, cap * sizeof(*argv));
  if (argv == NULL)
    return -1;
  h->argv = argv;
  num = realloc(h->num, cap * sizeof(*num));
  if (num == NULL)
    return -1;
  h->num = num;
  h->cap = cap;
  return 0;
}

/* Writes `d` to `buf` as "%.17g" does and returns the length. Integers
 * below 1e17 in magnitude, which "%.17g" writes in full without an
 * exponent, take the integer formatter; -0 keeps its sign through
 * printf. */
static size_t host_format_number(double d, char *buf) {
  if (d > -1e17 && d < 1e17 && d == (double)(int64_t)d &&
      (d != 0 || !signbit(d)))
    return fleet__ks_format_int((int64_t)d, buf);
  return (size_t)snprintf(buf, sizeof(host_num_t), "%.17g", d);
}

/* redis.call (raise) and redis.pcall: the arguments, strings or numbers,
 * as the command's argv; the reply converted, or the error. */
static int host_command(lua_State *L, int raise) {
  fleet__mem_host_t *h = lua_touserdata(L, lua_upvalueindex(1));
  int argc = lua_gettop(L), i;
  const char *err;

  if (argc == 0)
    return host_error(
        L, raise,
        "ERR Please specify at least one argument for this redis lib call");
  if (host_reserve(h, (size_t)argc) != 0)
    return host_error(L, raise, "OOM out of memory for redis lib arguments");
  for (i = 0; i < argc; i++) {
    switch (lua_type(L, i + 1)) {
      case LUA_TSTRING:
        h->argv[i].base = lua_tolstring(L, i + 1, &h->argv[i].len);
        break;
      case LUA_TNUMBER:
        h->argv[i].base = h->num[i];
        h->argv[i].len = host_format_number(lua_tonumber(L, i + 1), h->num[i]);
        break;
      default:
        return host_error(L, raise,
                          "ERR Lua redis lib command arguments must be strings "
                          "or integers");
    }
  }
  err = fleet__mem_command(&h->env, L, h->argv, (size_t)argc);
  return err != NULL ? host_error(L, raise, err) : 1;
}

static int host_call(lua_State *L) {
  return host_command(L, 1);
}

static int host_pcall(lua_State *L) {
  return host_command(L, 0);
}

/* redis.error_reply(text) and redis.status_reply(text): {err = text} and
 * {ok = text}. */
static int host_wrap(lua_State *L, const char *field) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING)
    return host_error(L, 0, "ERR wrong number or type of arguments");
  lua_createtable(L, 0, 1);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, field);
  return 1;
}

static int host_error_reply(lua_State *L) {
  return host_wrap(L, "err");
}

static int host_status_reply(lua_State *L) {
  return host_wrap(L, "ok");
}

/* __index of the redis table: a field fleet does not provide. */
static int host_redis_missing(lua_State *L) {
  return luaL_error(L, "redis.%s is not available in fleet's memory backend",
                    lua_tostring(L, 2));
}

/* __index of the globals: a global that does not exist. */
static int host_global_missing(lua_State *L) {
  static const char *const libs[] = {"cjson", "struct", "cmsgpack", "bit"};
  const char *name = lua_tostring(L, 2);
  size_t i;

  for (i = 0; name != NULL && i < FLEET__ARRAY_SIZE(libs); i++)
    if (strcmp(name, libs[i]) == 0)
      return luaL_error(L,
                        "the %s library is not available in fleet's "
                        "memory backend",
                        name);
  return luaL_error(L,
                    "Script attempted to access nonexistent global "
                    "variable '%s'",
                    name != NULL ? name : "?");
}

/* __newindex of a script's environment and of the globals. */
static int host_global_write(lua_State *L) {
  const char *name = lua_tostring(L, 2);
  return luaL_error(L, "Script attempted to create global variable '%s'",
                    name != NULL ? name : "?");
}

/* Sets a metatable on the table at the top: __index (the value at
 * `index`, absolute, or the function), __newindex host_global_write, and
 * __metatable so that scripts can neither read nor replace it. */
static void host_protect(lua_State *L, int index, lua_CFunction index_fn) {
  lua_createtable(L, 0, 3);
  if (index_fn != NULL)
    lua_pushcfunction(L, index_fn);
  else
    lua_pushvalue(L, index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, host_global_write);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
}

/* redis.register_function(name, fn) while a library loads: fn becomes
 * the loading op's function. */
static int host_register(lua_State *L) {
  fleet__mem_host_t *h = lua_touserdata(L, lua_upvalueindex(1));

  luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  if (h->fn[h->loading] != LUA_NOREF)
    return luaL_error(L, "a library registers one function");
  lua_pushvalue(L, 2);
  h->fn[h->loading] = luaL_ref(L, LUA_REGISTRYINDEX);
  h->lib[h->loading] = 1;
  return 0;
}

/* Compiles `script` into h->fn[op]: its function library, run once in
 * the environment at `lenv` (absolute), where it registers its function;
 * or, without one, its text, set to run in the environment at `env`. */
static int host_load(lua_State *L, fleet__mem_host_t *h, fleet__op_t op,
                     const fleet__script_t *script, int env, int lenv) {
  const char *text = script->body;
  size_t len = script->len;

  if (script->lib != NULL) {
    /* From the end of the "#!lua name=..." line, which Lua would not
     * read; its newline keeps the line numbers. */
    text = memchr(script->lib, '\n', script->lib_len);
    if (text == NULL)
      return FLEET_EPROTO;
    len = script->lib_len - (size_t)(text - script->lib);
  }
  lua_pushfstring(L, "@%s.lua", script->name);
  if (luaL_loadbuffer(L, text, len, lua_tostring(L, -1)) != 0)
    return FLEET_EPROTO;
  lua_pushvalue(L, script->lib != NULL ? lenv : env);
  lua_setfenv(L, -2);
  if (script->lib == NULL) {
    h->fn[op] = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);
    return 0;
  }
  h->loading = op;
  lua_call(L, 0, 0);
  lua_pop(L, 1);
  return h->fn[op] != LUA_NOREF ? 0 : FLEET_EPROTO;
}

/* ------------------------------------------------------------------------ */
/* Setup                                                                    */

/* Builds the sandbox, the redis table and the runner, and compiles every
 * script; run by lua_cpcall, so that running out of memory is an error.
 * Leaves the host's status FLEET_EPROTO when a script does not compile. */
static int host_runner(lua_State *L);

#ifdef FLEET_LUA_PROFILE
/* A profiling build (CMake FLEET_LUA_PROFILE): a count hook tallies the
 * Lua VM instructions each line of each script runs, and the process
 * writes them at exit, "<chunk> <line> <count>" per line, to the file
 * the environment variable FLEET_LUA_PROFILE names
 * (tests/bench/luaprof.py reads it). Chunk names are interned by Lua, so
 * the table keys on their address; it is one process's, as the loop that
 * runs the scripts is. */
#define PROF_SLOTS (1u << 16)

typedef struct {
  const char *chunk;
  int line;
  unsigned long long n;
} prof_line_t;

static prof_line_t prof_lines[PROF_SLOTS];
static FILE *prof_out;

static void prof_write(void) {
  size_t i;

  for (i = 0; i < PROF_SLOTS; i++)
    if (prof_lines[i].chunk != NULL)
      fprintf(prof_out, "%s %d %llu\n", prof_lines[i].chunk, prof_lines[i].line,
              prof_lines[i].n);
  fclose(prof_out);
}

static void prof_hook(lua_State *L, lua_Debug *ar) {
  size_t h, probes;

  if (lua_getinfo(L, "Sl", ar) == 0)
    return;
  h = ((uintptr_t)ar->source >> 4) * 2654435761u +
      (size_t)ar->currentline * 40503u;
  for (probes = 0; probes < PROF_SLOTS; probes++, h++) {
    prof_line_t *p = &prof_lines[h & (PROF_SLOTS - 1)];

    if (p->chunk == NULL) {
      p->chunk = ar->source;
      p->line = ar->currentline;
    }
    if (p->chunk == ar->source && p->line == ar->currentline) {
      p->n++;
      return;
    }
  }
}

/* Hooks state L when FLEET_LUA_PROFILE names a file (opened once). */
static void prof_attach(lua_State *L) {
  const char *path = getenv("FLEET_LUA_PROFILE");

  if (path == NULL || *path == '\0')
    return;
  if (prof_out == NULL) {
    if ((prof_out = fopen(path, "w")) == NULL)
      return;
    atexit(prof_write);
  }
  lua_sethook(L, prof_hook, LUA_MASKCOUNT, 1);
}
#endif

static int host_setup(lua_State *L) {
  static const char *const removed[] = {"loadfile",   "dofile",  "load",
                                        "loadstring", "getfenv", "setfenv",
                                        "print"};
  static const struct {
    const char *name;
    lua_CFunction open;
  } libs[] = {{"", luaopen_base},
              {LUA_TABLIBNAME, luaopen_table},
              {LUA_STRLIBNAME, luaopen_string},
              {LUA_MATHLIBNAME, luaopen_math}};
  fleet__mem_host_t *h = lua_touserdata(L, 1);
  const fleet__script_t *script;
  size_t i;
  int env, lenv, redis, op;

#ifdef FLEET_LUA_PROFILE
  prof_attach(L);
#endif
  for (i = 0; i < FLEET__ARRAY_SIZE(libs); i++) {
    lua_pushcfunction(L, libs[i].open);
    lua_pushstring(L, libs[i].name);
    lua_call(L, 1, 0);
  }
#ifdef LUA_JITLIBNAME
  /* LuaJIT: opening its jit library is what turns the compiler on (the
   * state starts interpreting only); the library itself is no global a
   * script may see. */
  lua_pushcfunction(L, luaopen_jit);
  lua_pushstring(L, LUA_JITLIBNAME);
  lua_call(L, 1, 0);
  lua_pushnil(L);
  lua_setfield(L, LUA_GLOBALSINDEX, LUA_JITLIBNAME);
#endif
  for (i = 0; i < FLEET__ARRAY_SIZE(removed); i++) {
    lua_pushnil(L);
    lua_setfield(L, LUA_GLOBALSINDEX, removed[i]);
  }

  lua_createtable(L, 0, 4);
  lua_pushlightuserdata(L, h);
  lua_pushcclosure(L, host_call, 1);
  lua_setfield(L, -2, "call");
  lua_pushlightuserdata(L, h);
  lua_pushcclosure(L, host_pcall, 1);
  lua_setfield(L, -2, "pcall");
  lua_pushcfunction(L, host_error_reply);
  lua_setfield(L, -2, "error_reply");
  lua_pushcfunction(L, host_status_reply);
  lua_setfield(L, -2, "status_reply");
  host_protect(L, 0, host_redis_missing);
  lua_setfield(L, LUA_GLOBALSINDEX, "redis");

  /* The globals, then the environment every script runs in. */
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  host_protect(L, 0, host_global_missing);
  lua_pop(L, 1);
  lua_newtable(L);
  host_protect(L, LUA_GLOBALSINDEX, NULL);
  env = lua_gettop(L);
  /* The function libraries' environment: a script's, whose `redis` also
   * has register_function. (Unlike Redis, their top level may read the
   * globals; the Redis tests load every library there: redis_functions.) */
  lua_getfield(L, LUA_GLOBALSINDEX, "redis");
  redis = lua_gettop(L);
  lua_createtable(L, 0, 1);
  lua_pushlightuserdata(L, h);
  lua_pushcclosure(L, host_register, 1);
  lua_setfield(L, -2, "register_function");
  host_protect(L, redis, NULL);
  lua_newtable(L);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "redis");
  host_protect(L, LUA_GLOBALSINDEX, NULL);
  lenv = lua_gettop(L);

  for (op = 0; op < FLEET__OP_COUNT; op++)
    h->fn[op] = LUA_NOREF;
  for (op = 0; op < FLEET__OP_COUNT; op++) {
    if (fleet__op_command((fleet__op_t)op) != NULL)
      continue;
    script = host_script((fleet__op_t)op);
    if (script == NULL)
      continue;
    h->status = host_load(L, h, (fleet__op_t)op, script, env, lenv);
    if (h->status != 0)
      return 0;
  }
  lua_pushlightuserdata(L, h);
  lua_pushcclosure(L, host_runner, 1);
  h->runner = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

int fleet__mem_host_new(fleet__ks_t *ks,
                        int64_t (*publish)(void *publisher,
                                           fleet_bytes_t channel,
                                           fleet_bytes_t payload),
                        void *publisher, fleet__mem_host_t **out) {
  fleet__mem_host_t *h = calloc(1, sizeof(*h));
  int rc;

  if (h == NULL)
    return FLEET_ENOMEM;
  h->env.ks = ks;
  strcpy(h->epoch, "0");
  h->env.publish = publish;
  h->env.publisher = publisher;
  h->pool = fleet__lua_pool_new();
  h->L = h->pool != NULL ? lua_newstate(fleet__lua_pool_alloc, h->pool) : NULL;
#ifdef LUA_JITLIBNAME
  /* A LuaJIT built without GC64 for a 64-bit target takes no allocator but
   * its own (Debian 12's amd64 build is GC64). */
  if (h->L == NULL && h->pool != NULL)
    h->L = luaL_newstate();
#endif
  if (h->L == NULL) {
    if (h->pool != NULL)
      fleet__lua_pool_free(h->pool);
    free(h);
    return FLEET_ENOMEM;
  }
  rc = lua_cpcall(h->L, host_setup, h);
  if (rc != 0 || h->status != 0) {
    fleet__mem_host_free(h);
    return rc == LUA_ERRMEM ? FLEET_ENOMEM : FLEET_EPROTO;
  }
  *out = h;
  return 0;
}

void fleet__mem_host_free(fleet__mem_host_t *h) {
  lua_close(h->L);
  fleet__lua_pool_free(h->pool);
  free(h->argv);
  free(h->num);
  free(h);
}

/* ------------------------------------------------------------------------ */
/* Running an op                                                            */

/* Pushes an array of the `n` strings of `v`, and `extra` (NULL: none)
 * after them. */
static void host_push_array(lua_State *L, const fleet_bytes_t *v, size_t n,
                            const char *extra) {
  size_t i;

  lua_createtable(L, (int)n + (extra != NULL), 0);
  for (i = 0; i < n; i++) {
    lua_pushlstring(L, v[i].base, v[i].len);
    lua_rawseti(L, -2, (int)i + 1);
  }
  if (extra != NULL) {
    lua_pushstring(L, extra);
    lua_rawseti(L, -2, (int)n + 1);
  }
}

/* Runs the host's current op under the lua_pcall of host_run and converts
 * its result into the host's `out`; any error is raised. The op
 * FLEET__OP_COUNT stands for a bare command, its argv in `keys`. */
static int host_runner(lua_State *L) {
  fleet__mem_host_t *h = lua_touserdata(L, lua_upvalueindex(1));
  const char *command =
      h->op == FLEET__OP_COUNT ? NULL : fleet__op_command(h->op);
  const char *err;
  size_t n = 0, i;

  lua_pushliteral(L, "err");
  lua_pushliteral(L, "ok");
  if (h->op == FLEET__OP_COUNT) {
    err = fleet__mem_command(&h->env, L, h->keys, h->nkeys);
    if (err != NULL)
      return host_error(L, 1, err);
  } else if (command != NULL) {
    if (host_reserve(h, 1 + h->nkeys + h->nargs) != 0)
      return host_error(L, 1, "OOM out of memory for command arguments");
    h->argv[n].base = command;
    h->argv[n++].len = strlen(command);
    for (i = 0; i < h->nkeys; i++)
      h->argv[n++] = h->keys[i];
    for (i = 0; i < h->nargs; i++)
      h->argv[n++] = h->args[i];
    err = fleet__mem_command(&h->env, L, h->argv, n);
    if (err != NULL)
      return host_error(L, 1, err);
  } else {
    /* The failover epoch of a fenced op (adapters/backend.h) ends ARGV. */
    const char *epoch = fleet__op_fenced(h->op) ? h->epoch : NULL;

    lua_rawgeti(L, LUA_REGISTRYINDEX, h->fn[h->op]);
    if (h->lib[h->op]) {
      host_push_array(L, h->keys, h->nkeys, NULL);
      host_push_array(L, h->args, h->nargs, epoch);
      lua_call(L, 2, 1);
    } else {
      lua_pushliteral(L, "KEYS");
      host_push_array(L, h->keys, h->nkeys, NULL);
      lua_rawset(L, LUA_GLOBALSINDEX);
      lua_pushliteral(L, "ARGV");
      host_push_array(L, h->args, h->nargs, epoch);
      lua_rawset(L, LUA_GLOBALSINDEX);
      lua_call(L, 0, 1);
    }
  }
  h->status = host_reply(L, lua_gettop(L), 0, h->out);
  return 0;
}

int fleet__mem_host_set_epoch(fleet__mem_host_t *h, const char *epoch) {
  size_t len = strlen(epoch);

  if (len == 0 || len >= sizeof(h->epoch))
    return FLEET_EINVAL;
  memcpy(h->epoch, epoch, len + 1);
  return 0;
}

int fleet__mem_host_has(const fleet__mem_host_t *h, fleet__op_t op) {
  if ((unsigned)op >= FLEET__OP_COUNT)
    return 0;
  if (fleet__op_command(op) != NULL)
    return fleet__memory_op_implemented(op);
  return h->fn[op] != LUA_NOREF;
}

/* Runs `op` (or FLEET__OP_COUNT, a bare command) through host_runner. */
static int host_run(fleet__mem_host_t *h, uint64_t now_us, fleet__op_t op,
                    const fleet_bytes_t *keys, size_t nkeys,
                    const fleet_bytes_t *args, size_t nargs, fleet__rb_t *out) {
  lua_State *L = h->L;
  int rc;

  h->env.now_us = now_us;
  h->op = op;
  h->keys = keys;
  h->nkeys = nkeys;
  h->args = args;
  h->nargs = nargs;
  h->out = out;
  h->status = 0;
  fleet__rb_reset(out);
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->runner);
  rc = lua_pcall(L, 0, 0, 0);
  if (rc != 0)
    h->status = host_error_code(L, rc, out);
  lua_settop(L, 0);
  return h->status != 0 ? h->status : fleet__rb_check(out);
}

int fleet__mem_host_run(fleet__mem_host_t *h, uint64_t now_us, fleet__op_t op,
                        const fleet_bytes_t *keys, size_t nkeys,
                        const fleet_bytes_t *args, size_t nargs,
                        fleet__rb_t *out) {
  if (!fleet__mem_host_has(h, op))
    return FLEET_EBACKEND;
  return host_run(h, now_us, op, keys, nkeys, args, nargs, out);
}

int fleet__mem_host_command(fleet__mem_host_t *h, uint64_t now_us,
                            const fleet_bytes_t *argv, size_t argc,
                            fleet__rb_t *out) {
  if (argc == 0)
    return FLEET_EINVAL;
  return host_run(h, now_us, FLEET__OP_COUNT, argv, argc, NULL, 0, out);
}
