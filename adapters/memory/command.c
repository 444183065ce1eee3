/* command.c -- the command table of the memory backend: every Redis command
 * fleet's scripts call, with Redis's arity, argument parsing, error text
 * and reply shape, run on the keyspace and replied onto a Lua stack.
 *
 * The table is the whole list: a script calling a command missing here
 * gets "ERR Unknown Redis command called from script", and a command form
 * the keyspace lacks (ZADD XX, SET GET, ZRANGE BYSCORE, ...) gets an error
 * that says so, so that a script change the keyspace does not follow fails
 * in the conformance and differential tests. Everything below follows
 * Redis 7.0. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "memory/command.h"
#include "memory/glob.h"

#define CMD_ERR_INT "ERR value is not an integer or out of range"
#define CMD_ERR_FLOAT "ERR value is not a valid float"
#define CMD_ERR_MINMAX "ERR min or max is not a float"
#define CMD_ERR_SYNTAX "ERR syntax error"
#define CMD_ERR_WRONGTYPE                                                      \
  "WRONGTYPE Operation against a key holding the wrong kind of value"
#define CMD_ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."

/* One call: the environment, the Lua stack replies go to, the arguments
 * (argv[0] is the command name). */
typedef struct cmd_s cmd_t;

typedef struct {
  fleet__mem_env_t *env;
  fleet__ks_t *ks;
  lua_State *L;
  const fleet_bytes_t *argv;
  size_t argc;
  const cmd_t *cmd; /* the command's row */
} cmd_call_t;

/* A command: pushes one reply and returns NULL, or returns an error. */
typedef const char *cmd_fn(cmd_call_t *c);

/* What the keyspace does for a command over "key item..." (HDEL, SADD,
 * ...) and one over "key..." (DEL, EXISTS): a count, or a negative error. */
typedef int64_t cmd_key_items_fn(fleet__ks_t *ks, fleet_bytes_t key,
                                 const fleet_bytes_t *items, size_t n);
typedef int64_t cmd_keys_fn(fleet__ks_t *ks, const fleet_bytes_t *keys,
                            size_t n);

struct cmd_s {
  const char *name;
  int arity; /* As Redis: argc exactly, or at least -arity when negative. */
  cmd_fn *fn;
  /* For the commands run by cmd_key_items() and cmd_keys(): what they
   * call. */
  cmd_key_items_fn *key_items;
  cmd_keys_fn *keys;
};

/* ------------------------------------------------------------------------ */
/* Replies and arguments                                                    */

/* The error for a keyspace failure `rc`; `msg` for FLEET_EBACKEND. */
static const char *cmd_ks_err(int64_t rc, const char *msg) {
  if (rc == FLEET_EWRONGTYPE)
    return CMD_ERR_WRONGTYPE;
  if (rc == FLEET_ENOMEM)
    return CMD_ERR_OOM;
  return msg;
}

static const char *cmd_unsupported(cmd_call_t *c) {
  snprintf(c->env->err, sizeof(c->env->err),
           "ERR fleet's memory keyspace lacks this form of '%.*s'",
           (int)(c->argv[0].len < 32 ? c->argv[0].len : 32),
           (const char *)c->argv[0].base);
  return c->env->err;
}

static const char *cmd_int(cmd_call_t *c, int64_t v) {
  lua_pushnumber(c->L, (lua_Number)v);
  return NULL;
}

/* A bulk string, or false for the keyspace's nil {NULL, 0}. */
static void cmd_push_bulk(lua_State *L, fleet_bytes_t b) {
  if (b.base == NULL)
    lua_pushboolean(L, 0);
  else
    lua_pushlstring(L, b.base, b.len);
}

static const char *cmd_status(cmd_call_t *c, const char *s) {
  lua_createtable(c->L, 0, 1);
  lua_pushstring(c->L, s);
  lua_setfield(c->L, -2, "ok");
  return NULL;
}

static const char *cmd_array(cmd_call_t *c, const fleet_bytes_t *items,
                             int64_t n) {
  int64_t i;

  lua_createtable(c->L, (int)n, 0);
  for (i = 0; i < n; i++) {
    cmd_push_bulk(c->L, items[i]);
    lua_rawseti(c->L, -2, (int)(i + 1));
  }
  return NULL;
}

/* A score as Redis 7.0 writes one: an integer in the exact range of
 * doubles without a fraction, else 17 significant digits. */
static void cmd_push_score(lua_State *L, double d) {
  char buf[32];
  int n;

  if (isinf(d))
    n = snprintf(buf, sizeof(buf), "%s", d > 0 ? "inf" : "-inf");
  else if (d > -4503599627370495.0 && d < 4503599627370496.0 &&
           d == (double)(int64_t)d)
    n = (int)fleet__ks_format_int((int64_t)d, buf);
  else
    n = snprintf(buf, sizeof(buf), "%.17g", d);
  lua_pushlstring(L, buf, (size_t)n);
}

static const char *cmd_zitems(cmd_call_t *c, const fleet__ks_zitem_t *items,
                              int64_t n, int withscores) {
  int64_t i;
  int k = 0;

  lua_createtable(c->L, (int)(withscores ? 2 * n : n), 0);
  for (i = 0; i < n; i++) {
    lua_pushlstring(c->L, items[i].member.base, items[i].member.len);
    lua_rawseti(c->L, -2, ++k);
    if (withscores) {
      cmd_push_score(c->L, items[i].score);
      lua_rawseti(c->L, -2, ++k);
    }
  }
  return NULL;
}

static int cmd_is(fleet_bytes_t b, const char *word) {
  size_t n = strlen(word);
  return b.len == n && strncasecmp(b.base, word, n) == 0;
}

/* A score bound of ZCOUNT, ZRANGEBYSCORE and ZREMRANGEBYSCORE: "(" in front
 * makes it exclusive, which for doubles is the next one inward. */
static int cmd_bound(fleet_bytes_t b, int is_max, double *out) {
  int exclusive = b.len > 0 && ((const char *)b.base)[0] == '(';
  fleet_bytes_t v = b;

  if (exclusive) {
    v.base = (const char *)b.base + 1;
    v.len--;
  }
  if (fleet__ks_parse_double(v, out) != 0)
    return -1;
  if (exclusive)
    *out = nextafter(*out, is_max ? -INFINITY : INFINITY);
  return 0;
}

static int cmd_bounds(cmd_call_t *c, double *min, double *max) {
  return cmd_bound(c->argv[2], 0, min) == 0 &&
                 cmd_bound(c->argv[3], 1, max) == 0
             ? 0
             : -1;
}

/* ------------------------------------------------------------------------ */
/* Server and keys                                                          */

static const char *cmd_ping(cmd_call_t *c) {
  if (c->argc > 2) {
    snprintf(c->env->err, sizeof(c->env->err),
             "ERR wrong number of arguments for 'ping' command");
    return c->env->err;
  }
  if (c->argc == 2) {
    cmd_push_bulk(c->L, c->argv[1]);
    return NULL;
  }
  return cmd_status(c, "PONG");
}

static const char *cmd_time(cmd_call_t *c) {
  char buf[24];

  lua_createtable(c->L, 2, 0);
  snprintf(buf, sizeof(buf), "%" PRIu64, c->env->now_us / 1000000);
  lua_pushstring(c->L, buf);
  lua_rawseti(c->L, -2, 1);
  snprintf(buf, sizeof(buf), "%" PRIu64, c->env->now_us % 1000000);
  lua_pushstring(c->L, buf);
  lua_rawseti(c->L, -2, 2);
  return NULL;
}

static const char *cmd_publish(cmd_call_t *c) {
  int64_t n = c->env->publish(c->env->publisher, c->argv[1], c->argv[2]);
  return n < 0 ? CMD_ERR_OOM : cmd_int(c, n);
}

/* "key...": the row's keyspace call, whose count is the reply. */
static const char *cmd_keys(cmd_call_t *c) {
  int64_t n = c->cmd->keys(c->ks, c->argv + 1, c->argc - 1);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_int(c, n);
}

/* "key item...": the row's keyspace call, whose count is the reply. */
static const char *cmd_key_items(cmd_call_t *c) {
  int64_t n = c->cmd->key_items(c->ks, c->argv[1], c->argv + 2, c->argc - 2);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_int(c, n);
}

static const char *cmd_type(cmd_call_t *c) {
  return cmd_status(c, fleet__ks_type_name(fleet__ks_type(c->ks, c->argv[1])));
}

static const char *cmd_pttl(cmd_call_t *c) {
  return cmd_int(c, fleet__ks_pttl(c->ks, c->argv[1]));
}

/* PEXPIRE and PEXPIREAT without the NX/XX/GT/LT options of Redis 7. */
static const char *cmd_expire(cmd_call_t *c, int at) {
  int64_t ms;
  int rc;

  if (c->argc != 3)
    return cmd_unsupported(c);
  if (fleet__ks_parse_int(c->argv[2], &ms) != 0)
    return CMD_ERR_INT;
  rc = at ? fleet__ks_pexpireat(c->ks, c->argv[1], ms)
          : fleet__ks_pexpire(c->ks, c->argv[1], ms);
  if (rc < 0) {
    snprintf(c->env->err, sizeof(c->env->err),
             "ERR invalid expire time in '%s' command",
             at ? "pexpireat" : "pexpire");
    return cmd_ks_err(rc, c->env->err);
  }
  return cmd_int(c, rc);
}

static const char *cmd_pexpire(cmd_call_t *c) {
  return cmd_expire(c, 0);
}

static const char *cmd_pexpireat(cmd_call_t *c) {
  return cmd_expire(c, 1);
}

/* SCAN cursor [MATCH pattern] [COUNT count]: the keyspace scans the keys
 * that start with the pattern's literal prefix, and the whole pattern
 * filters them. Reply {cursor, {key, ...}}, the cursor a string. */
static const char *cmd_scan(cmd_call_t *c) {
  fleet_bytes_t pattern = {"*", 1}, prefix, *found;
  uint64_t cursor = 0, next;
  int64_t count = 10, n, i, m = 0;
  char num[24], *buf;
  const char *s = c->argv[1].base;
  size_t j;

  if (c->argv[1].len == 0 || c->argv[1].len > 20)
    return "ERR invalid cursor";
  for (j = 0; j < c->argv[1].len; j++) {
    unsigned d = (unsigned)(s[j] - '0');
    if (d > 9 || cursor > (UINT64_MAX - d) / 10)
      return "ERR invalid cursor";
    cursor = cursor * 10 + d;
  }
  for (j = 2; j < c->argc; j += 2) {
    if (j + 1 >= c->argc)
      return CMD_ERR_SYNTAX;
    if (cmd_is(c->argv[j], "MATCH")) {
      pattern = c->argv[j + 1];
    } else if (cmd_is(c->argv[j], "COUNT")) {
      if (fleet__ks_parse_int(c->argv[j + 1], &count) != 0)
        return CMD_ERR_INT;
      if (count < 1)
        return CMD_ERR_SYNTAX;
    } else if (cmd_is(c->argv[j], "TYPE")) {
      return cmd_unsupported(c);
    } else {
      return CMD_ERR_SYNTAX;
    }
  }
  buf = fleet__ks_scratch(c->ks, pattern.len + 1);
  if (buf == NULL)
    return CMD_ERR_OOM;
  prefix.base = buf;
  prefix.len = fleet__glob_prefix(pattern.base, pattern.len, buf);
  n = fleet__ks_scan(c->ks, cursor, prefix, (size_t)count, &next, &found);
  if (n < 0)
    return cmd_ks_err(n, CMD_ERR_SYNTAX);
  for (i = 0; i < n; i++)
    if (fleet__glob_match(pattern.base, pattern.len, found[i].base,
                          found[i].len))
      found[m++] = found[i];
  lua_createtable(c->L, 2, 0);
  snprintf(num, sizeof(num), "%" PRIu64, next);
  lua_pushstring(c->L, num);
  lua_rawseti(c->L, -2, 1);
  cmd_array(c, found, m);
  lua_rawseti(c->L, -2, 2);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Strings                                                                  */

static const char *cmd_get(cmd_call_t *c) {
  fleet_bytes_t v;
  int rc = fleet__ks_get(c->ks, c->argv[1], &v);

  if (rc < 0)
    return cmd_ks_err(rc, CMD_ERR_SYNTAX);
  cmd_push_bulk(c->L, v);
  return NULL;
}

/* MGET key...: each value pushed as it is read (the keyspace's copy out
 * is reused by the next read); a key of another type reads as nil, as in
 * Redis. */
static const char *cmd_mget(cmd_call_t *c) {
  fleet_bytes_t v;
  size_t i;
  int rc;

  lua_createtable(c->L, (int)(c->argc - 1), 0);
  for (i = 1; i < c->argc; i++) {
    rc = fleet__ks_get(c->ks, c->argv[i], &v);
    if (rc == FLEET_EWRONGTYPE) {
      v.base = NULL;
      v.len = 0;
    } else if (rc < 0) {
      lua_pop(c->L, 1);
      return cmd_ks_err(rc, CMD_ERR_SYNTAX);
    }
    cmd_push_bulk(c->L, v);
    lua_rawseti(c->L, -2, (int)i);
  }
  return NULL;
}

/* SET key value [NX|XX] [PX ms|EX s] [KEEPTTL]; GET, EXAT and PXAT are not
 * in the keyspace. */
static const char *cmd_set(cmd_call_t *c) {
  int64_t px = 0, v;
  int flags = 0, expiry = 0, rc;
  size_t i;

  for (i = 3; i < c->argc; i++) {
    fleet_bytes_t a = c->argv[i];
    if (cmd_is(a, "NX") && !(flags & FLEET__KS_SET_XX)) {
      flags |= FLEET__KS_SET_NX;
    } else if (cmd_is(a, "XX") && !(flags & FLEET__KS_SET_NX)) {
      flags |= FLEET__KS_SET_XX;
    } else if (cmd_is(a, "KEEPTTL") && !expiry) {
      flags |= FLEET__KS_SET_KEEPTTL;
    } else if ((cmd_is(a, "PX") || cmd_is(a, "EX")) && !expiry &&
               !(flags & FLEET__KS_SET_KEEPTTL) && i + 1 < c->argc) {
      if (fleet__ks_parse_int(c->argv[i + 1], &v) != 0)
        return CMD_ERR_INT;
      if (v <= 0 || (cmd_is(a, "EX") && v > INT64_MAX / 1000))
        return "ERR invalid expire time in 'set' command";
      px = cmd_is(a, "EX") ? v * 1000 : v;
      expiry = 1;
      i++;
    } else if (cmd_is(a, "GET") || cmd_is(a, "EXAT") || cmd_is(a, "PXAT")) {
      return cmd_unsupported(c);
    } else {
      return CMD_ERR_SYNTAX;
    }
  }
  rc = fleet__ks_set(c->ks, c->argv[1], c->argv[2], px, flags);
  if (rc < 0)
    return cmd_ks_err(rc, "ERR invalid expire time in 'set' command");
  if (rc == 0) {
    lua_pushboolean(c->L, 0);
    return NULL;
  }
  return cmd_status(c, "OK");
}

static const char *cmd_incr(cmd_call_t *c) {
  int64_t v;
  int rc = fleet__ks_incr(c->ks, c->argv[1], &v);
  return rc < 0 ? cmd_ks_err(rc, CMD_ERR_INT) : cmd_int(c, v);
}

static const char *cmd_incrby(cmd_call_t *c) {
  int64_t by, v;
  int rc;

  if (fleet__ks_parse_int(c->argv[2], &by) != 0)
    return CMD_ERR_INT;
  rc = fleet__ks_incrby(c->ks, c->argv[1], by, &v);
  return rc < 0 ? cmd_ks_err(rc, CMD_ERR_INT) : cmd_int(c, v);
}

/* ------------------------------------------------------------------------ */
/* Hashes                                                                   */

static const char *cmd_hset(cmd_call_t *c) {
  int64_t n;

  if (c->argc % 2 != 0)
    return "ERR wrong number of arguments for 'hset' command";
  n = fleet__ks_hset(c->ks, c->argv[1], c->argv + 2, c->argc - 2);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_int(c, n);
}

/* HSETNX key field value: 1 when it set the field, 0 when it was there. */
static const char *cmd_hsetnx(cmd_call_t *c) {
  int64_t n;
  int rc = fleet__ks_hexists(c->ks, c->argv[1], c->argv[2]);

  if (rc < 0)
    return cmd_ks_err(rc, CMD_ERR_SYNTAX);
  if (rc > 0)
    return cmd_int(c, 0);
  n = fleet__ks_hset(c->ks, c->argv[1], c->argv + 2, 2);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_int(c, 1);
}

static const char *cmd_hget(cmd_call_t *c) {
  fleet_bytes_t v;
  int rc = fleet__ks_hget(c->ks, c->argv[1], c->argv[2], &v);

  if (rc < 0)
    return cmd_ks_err(rc, CMD_ERR_SYNTAX);
  cmd_push_bulk(c->L, rc > 0 ? v : (fleet_bytes_t){NULL, 0});
  return NULL;
}

static const char *cmd_hexists(cmd_call_t *c) {
  int rc = fleet__ks_hexists(c->ks, c->argv[1], c->argv[2]);
  return rc < 0 ? cmd_ks_err(rc, CMD_ERR_SYNTAX) : cmd_int(c, rc);
}

static const char *cmd_hlen(cmd_call_t *c) {
  int64_t n = fleet__ks_hlen(c->ks, c->argv[1]);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_int(c, n);
}

static const char *cmd_hgetall(cmd_call_t *c) {
  fleet_bytes_t *items;
  int64_t n = fleet__ks_hgetall(c->ks, c->argv[1], &items);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_array(c, items, n);
}

static const char *cmd_hmget(cmd_call_t *c) {
  fleet_bytes_t *items;
  int64_t n =
      fleet__ks_hmget(c->ks, c->argv[1], c->argv + 2, c->argc - 2, &items);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_array(c, items, n);
}

static const char *cmd_hincrby(cmd_call_t *c) {
  int64_t by, v;
  int rc;

  if (fleet__ks_parse_int(c->argv[3], &by) != 0)
    return CMD_ERR_INT;
  rc = fleet__ks_hincrby(c->ks, c->argv[1], c->argv[2], by, &v);
  return rc < 0 ? cmd_ks_err(rc, "ERR hash value is not an integer")
                : cmd_int(c, v);
}

/* ------------------------------------------------------------------------ */
/* Lists and sets                                                           */

static const char *cmd_lrem(cmd_call_t *c) {
  int64_t count, n;

  if (fleet__ks_parse_int(c->argv[2], &count) != 0)
    return CMD_ERR_INT;
  n = fleet__ks_lrem(c->ks, c->argv[1], count, c->argv[3]);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_int(c, n);
}

/* LPOS key element: the index, or nil. */
static const char *cmd_lpos(cmd_call_t *c) {
  int64_t n = fleet__ks_lpos(c->ks, c->argv[1], c->argv[2]);

  if (n < -1)
    return cmd_ks_err(n, CMD_ERR_SYNTAX);
  if (n == -1) {
    cmd_push_bulk(c->L, (fleet_bytes_t){NULL, 0});
    return NULL;
  }
  return cmd_int(c, n);
}

/* LPOP key [count]: the head element (nil for no list), or with a count
 * up to that many as an array (nil for no list), as Redis 7.0. */
static const char *cmd_lpop(cmd_call_t *c) {
  fleet_bytes_t *items;
  int64_t count = 1, n;
  int rc;

  if (c->argc > 3)
    return CMD_ERR_SYNTAX;
  if (c->argc == 3 &&
      (fleet__ks_parse_int(c->argv[2], &count) != 0 || count < 0))
    return CMD_ERR_INT;
  n = fleet__ks_llen(c->ks, c->argv[1]);
  if (n < 0)
    return cmd_ks_err(n, CMD_ERR_SYNTAX);
  if (n == 0) {
    cmd_push_bulk(c->L, (fleet_bytes_t){NULL, 0});
    return NULL;
  }
  n = count == 0 ? 0
                 : fleet__ks_lrange(c->ks, c->argv[1], 0, count - 1, &items);
  if (n < 0)
    return cmd_ks_err(n, CMD_ERR_SYNTAX);
  if (c->argc == 2) {
    cmd_push_bulk(c->L, items[0]);
  } else {
    cmd_array(c, items, n);
  }
  if (n > 0 && (rc = fleet__ks_ltrim(c->ks, c->argv[1], n, -1)) < 0) {
    lua_pop(c->L, 1);
    return cmd_ks_err(rc, CMD_ERR_SYNTAX);
  }
  return NULL;
}

static const char *cmd_llen(cmd_call_t *c) {
  int64_t n = fleet__ks_llen(c->ks, c->argv[1]);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_int(c, n);
}

static const char *cmd_lrange(cmd_call_t *c) {
  fleet_bytes_t *items;
  int64_t start, stop, n;

  if (fleet__ks_parse_int(c->argv[2], &start) != 0 ||
      fleet__ks_parse_int(c->argv[3], &stop) != 0)
    return CMD_ERR_INT;
  n = fleet__ks_lrange(c->ks, c->argv[1], start, stop, &items);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_array(c, items, n);
}

static const char *cmd_ltrim(cmd_call_t *c) {
  int64_t start, stop;
  int rc;

  if (fleet__ks_parse_int(c->argv[2], &start) != 0 ||
      fleet__ks_parse_int(c->argv[3], &stop) != 0)
    return CMD_ERR_INT;
  rc = fleet__ks_ltrim(c->ks, c->argv[1], start, stop);
  return rc < 0 ? cmd_ks_err(rc, CMD_ERR_SYNTAX) : cmd_status(c, "OK");
}

static const char *cmd_lindex(cmd_call_t *c) {
  fleet_bytes_t v;
  int64_t index;
  int rc;

  if (fleet__ks_parse_int(c->argv[2], &index) != 0)
    return CMD_ERR_INT;
  rc = fleet__ks_lindex(c->ks, c->argv[1], index, &v);
  if (rc < 0)
    return cmd_ks_err(rc, CMD_ERR_SYNTAX);
  cmd_push_bulk(c->L, rc > 0 ? v : (fleet_bytes_t){NULL, 0});
  return NULL;
}

static const char *cmd_smembers(cmd_call_t *c) {
  fleet_bytes_t *items;
  int64_t n = fleet__ks_smembers(c->ks, c->argv[1], &items);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_array(c, items, n);
}

/* ------------------------------------------------------------------------ */
/* Sorted sets                                                              */

/* ZADD key [NX|GT] score member [score member ...], without other
 * options, as Redis does them: every score is parsed before the first
 * member is added; with NX a member already there keeps its score (and is
 * not counted); with GT it takes the new score only when it is greater (a
 * new member is added). */
static const char *cmd_zadd(cmd_call_t *c) {
  static const char *const options[] = {"NX", "XX", "GT", "LT", "CH", "INCR"};
  size_t first = 2, n, i;
  double *scores, old;
  int64_t added = 0;
  int rc, nx = 0, gt = 0;

  if (c->argc > 2 && cmd_is(c->argv[2], "NX")) {
    nx = 1;
    first = 3;
  } else if (c->argc > 2 && cmd_is(c->argv[2], "GT")) {
    gt = 1;
    first = 3;
  }
  for (i = 0; i < FLEET__ARRAY_SIZE(options); i++)
    if (c->argc > first && cmd_is(c->argv[first], options[i]))
      return cmd_unsupported(c);
  if (c->argc <= first || (c->argc - first) % 2 != 0)
    return CMD_ERR_SYNTAX;
  n = (c->argc - first) / 2;
  scores = fleet__ks_scratch(c->ks, n * sizeof(*scores));
  if (scores == NULL)
    return CMD_ERR_OOM;
  for (i = 0; i < n; i++)
    if (fleet__ks_parse_double(c->argv[first + 2 * i], &scores[i]) != 0)
      return CMD_ERR_FLOAT;
  for (i = 0; i < n; i++) {
    if (nx || gt) {
      rc =
          fleet__ks_zscore(c->ks, c->argv[1], c->argv[first + 1 + 2 * i], &old);
      if (rc < 0)
        return cmd_ks_err(rc, CMD_ERR_FLOAT);
      if (rc > 0 && (nx || !(scores[i] > old)))
        continue;
    }
    rc = fleet__ks_zadd(c->ks, c->argv[1], scores[i],
                        c->argv[first + 1 + 2 * i]);
    if (rc < 0)
      return cmd_ks_err(rc, CMD_ERR_FLOAT);
    added += rc;
  }
  return cmd_int(c, added);
}

static const char *cmd_zcard(cmd_call_t *c) {
  int64_t n = fleet__ks_zcard(c->ks, c->argv[1]);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_int(c, n);
}

static const char *cmd_zscore(cmd_call_t *c) {
  double score;
  int rc = fleet__ks_zscore(c->ks, c->argv[1], c->argv[2], &score);

  if (rc < 0)
    return cmd_ks_err(rc, CMD_ERR_SYNTAX);
  if (rc == 0)
    lua_pushboolean(c->L, 0);
  else
    cmd_push_score(c->L, score);
  return NULL;
}

static const char *cmd_zrank(cmd_call_t *c) {
  int64_t rank;
  int rc = fleet__ks_zrank(c->ks, c->argv[1], c->argv[2], &rank);

  if (rc < 0)
    return cmd_ks_err(rc, CMD_ERR_SYNTAX);
  if (rc == 0) {
    lua_pushboolean(c->L, 0);
    return NULL;
  }
  return cmd_int(c, rank);
}

static const char *cmd_zcount(cmd_call_t *c) {
  double min, max;
  int64_t n;

  if (cmd_bounds(c, &min, &max) != 0)
    return CMD_ERR_MINMAX;
  n = fleet__ks_zcount(c->ks, c->argv[1], min, max);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_int(c, n);
}

/* ZRANGE key start stop [WITHSCORES]: by rank only. */
static const char *cmd_zrange(cmd_call_t *c) {
  fleet__ks_zitem_t *items;
  int64_t start, stop, n;
  int withscores = c->argc == 5 && cmd_is(c->argv[4], "WITHSCORES");

  if (c->argc > 5 || (c->argc == 5 && !withscores))
    return cmd_unsupported(c);
  if (fleet__ks_parse_int(c->argv[2], &start) != 0 ||
      fleet__ks_parse_int(c->argv[3], &stop) != 0)
    return CMD_ERR_INT;
  n = fleet__ks_zrange(c->ks, c->argv[1], start, stop, &items);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX)
               : cmd_zitems(c, items, n, withscores);
}

/* ZPOPMIN key [count]: the lowest-scored members with their scores,
 * pushed before they are removed. */
static const char *cmd_zpopmin(cmd_call_t *c) {
  fleet__ks_zitem_t *items;
  int64_t count = 1, n;

  if (c->argc > 3)
    return CMD_ERR_SYNTAX;
  if (c->argc == 3 &&
      (fleet__ks_parse_int(c->argv[2], &count) != 0 || count < 0))
    return "ERR value is out of range, must be positive";
  if (count == 0) {
    lua_createtable(c->L, 0, 0);
    return NULL;
  }
  n = fleet__ks_zrange(c->ks, c->argv[1], 0, count - 1, &items);
  if (n < 0)
    return cmd_ks_err(n, CMD_ERR_SYNTAX);
  cmd_zitems(c, items, n, 1);
  if (n > 0 &&
      (n = fleet__ks_zremrangebyrank(c->ks, c->argv[1], 0, n - 1)) < 0) {
    lua_pop(c->L, 1);
    return cmd_ks_err(n, CMD_ERR_SYNTAX);
  }
  return NULL;
}

/* ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]. */
static const char *cmd_zrangebyscore(cmd_call_t *c) {
  fleet__ks_zitem_t *items;
  int64_t offset = 0, count = -1, n;
  double min, max;
  int withscores = 0;
  size_t i;

  for (i = 4; i < c->argc; i++) {
    if (cmd_is(c->argv[i], "WITHSCORES")) {
      withscores = 1;
    } else if (cmd_is(c->argv[i], "LIMIT") && i + 2 < c->argc) {
      if (fleet__ks_parse_int(c->argv[i + 1], &offset) != 0 ||
          fleet__ks_parse_int(c->argv[i + 2], &count) != 0)
        return CMD_ERR_INT;
      i += 2;
    } else {
      return CMD_ERR_SYNTAX;
    }
  }
  if (cmd_bounds(c, &min, &max) != 0)
    return CMD_ERR_MINMAX;
  n = fleet__ks_zrangebyscore(c->ks, c->argv[1], min, max, offset, count,
                              &items);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX)
               : cmd_zitems(c, items, n, withscores);
}

static const char *cmd_zremrangebyrank(cmd_call_t *c) {
  int64_t start, stop, n;

  if (fleet__ks_parse_int(c->argv[2], &start) != 0 ||
      fleet__ks_parse_int(c->argv[3], &stop) != 0)
    return CMD_ERR_INT;
  n = fleet__ks_zremrangebyrank(c->ks, c->argv[1], start, stop);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_int(c, n);
}

static const char *cmd_zremrangebyscore(cmd_call_t *c) {
  double min, max;
  int64_t n;

  if (cmd_bounds(c, &min, &max) != 0)
    return CMD_ERR_MINMAX;
  n = fleet__ks_zremrangebyscore(c->ks, c->argv[1], min, max);
  return n < 0 ? cmd_ks_err(n, CMD_ERR_SYNTAX) : cmd_int(c, n);
}

/* ------------------------------------------------------------------------ */
/* The table                                                                */

/* Sorted by name, for the binary search. */
/* A row: a command of its own handler, one over "key item..." and one
 * over "key..." run by the keyspace call `ks`. */
#define CMD(name, arity, fn)                                                   \
  { name, arity, fn, NULL, NULL }
#define CMD_KEY_ITEMS(name, arity, ks)                                         \
  { name, arity, cmd_key_items, ks, NULL }
#define CMD_KEYS(name, arity, ks)                                              \
  { name, arity, cmd_keys, NULL, ks }

static const cmd_t command_table[] = {
    CMD_KEYS("DEL", -2, fleet__ks_del),
    CMD_KEYS("EXISTS", -2, fleet__ks_exists),
    CMD("GET", 2, cmd_get),
    CMD_KEY_ITEMS("HDEL", -3, fleet__ks_hdel),
    CMD("HEXISTS", 3, cmd_hexists),
    CMD("HGET", 3, cmd_hget),
    CMD("HGETALL", 2, cmd_hgetall),
    CMD("HINCRBY", 4, cmd_hincrby),
    CMD("HLEN", 2, cmd_hlen),
    CMD("HMGET", -3, cmd_hmget),
    CMD("HSET", -4, cmd_hset),
    CMD("HSETNX", 4, cmd_hsetnx),
    CMD("INCR", 2, cmd_incr),
    CMD("INCRBY", 3, cmd_incrby),
    CMD("LINDEX", 3, cmd_lindex),
    CMD("LLEN", 2, cmd_llen),
    CMD("LPOP", -2, cmd_lpop),
    CMD("LPOS", 3, cmd_lpos),
    CMD_KEY_ITEMS("LPUSH", -3, fleet__ks_lpush),
    CMD("LRANGE", 4, cmd_lrange),
    CMD("LREM", 4, cmd_lrem),
    CMD("LTRIM", 4, cmd_ltrim),
    CMD("MGET", -2, cmd_mget),
    CMD("PEXPIRE", -3, cmd_pexpire),
    CMD("PEXPIREAT", -3, cmd_pexpireat),
    CMD("PING", -1, cmd_ping),
    CMD("PTTL", 2, cmd_pttl),
    CMD("PUBLISH", 3, cmd_publish),
    CMD_KEY_ITEMS("RPUSH", -3, fleet__ks_rpush),
    CMD_KEY_ITEMS("SADD", -3, fleet__ks_sadd),
    CMD("SCAN", -2, cmd_scan),
    CMD("SET", -3, cmd_set),
    CMD("SMEMBERS", 2, cmd_smembers),
    CMD_KEY_ITEMS("SREM", -3, fleet__ks_srem),
    CMD("TIME", 1, cmd_time),
    CMD("TYPE", 2, cmd_type),
    CMD_KEYS("UNLINK", -2, fleet__ks_del),
    CMD("ZADD", -4, cmd_zadd),
    CMD("ZCARD", 2, cmd_zcard),
    CMD("ZCOUNT", 4, cmd_zcount),
    CMD("ZPOPMIN", -2, cmd_zpopmin),
    CMD("ZRANGE", -4, cmd_zrange),
    CMD("ZRANGEBYSCORE", -4, cmd_zrangebyscore),
    CMD("ZRANK", 3, cmd_zrank),
    CMD_KEY_ITEMS("ZREM", -3, fleet__ks_zrem),
    CMD("ZREMRANGEBYRANK", 4, cmd_zremrangebyrank),
    CMD("ZREMRANGEBYSCORE", 4, cmd_zremrangebyscore),
    CMD("ZSCORE", 3, cmd_zscore),
};

/* The command named by `p` (any case), or NULL. */
static const cmd_t *command_find(const char *p, size_t len) {
  char name[20];
  size_t lo = 0, hi = FLEET__ARRAY_SIZE(command_table), i;
  int d;

  if (len == 0 || len >= sizeof(name))
    return NULL;
  for (i = 0; i < len; i++)
    name[i] = p[i] >= 'a' && p[i] <= 'z' ? (char)(p[i] - 'a' + 'A') : p[i];
  name[len] = '\0';
  while (lo < hi) {
    i = (lo + hi) / 2;
    d = strcmp(name, command_table[i].name);
    if (d == 0)
      return &command_table[i];
    if (d < 0)
      hi = i;
    else
      lo = i + 1;
  }
  return NULL;
}

int fleet__mem_command_known(const char *name) {
  return command_find(name, strlen(name)) != NULL;
}

const char *fleet__mem_command(fleet__mem_env_t *env, lua_State *L,
                               const fleet_bytes_t *argv, size_t argc) {
  const cmd_t *cmd = command_find(argv[0].base, argv[0].len);
  cmd_call_t c;

  if (cmd == NULL)
    return "ERR Unknown Redis command called from script";
  if (cmd->arity > 0 ? argc != (size_t)cmd->arity
                     : argc < (size_t)-cmd->arity) {
    char lower[20];
    size_t i;
    for (i = 0; cmd->name[i] != '\0'; i++)
      lower[i] = (char)(cmd->name[i] - 'A' + 'a');
    lower[i] = '\0';
    snprintf(env->err, sizeof(env->err),
             "ERR wrong number of arguments for '%s' command", lower);
    return env->err;
  }
  c.env = env;
  c.ks = env->ks;
  c.L = L;
  c.argv = argv;
  c.argc = argc;
  c.cmd = cmd;
  return cmd->fn(&c);
}
