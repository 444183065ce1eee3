/* keyspace.h -- a small Redis-like keyspace: the data behind the commands
 * of the memory backend's command table (command.c), which the Lua scripts
 * call. It holds what those commands need and nothing more.
 *
 * Conventions, the same for every function below:
 *
 * - Keys, fields, members and values are binary-safe fleet_bytes_t. The
 *   keyspace copies what it keeps.
 * - Each function behaves like the Redis command of the same name. A
 *   function returns a negative fleet error on failure: FLEET_EWRONGTYPE
 *   when the key holds another type, FLEET_ENOMEM when out of memory (a
 *   command may then be half done, as a Redis script would be), and
 *   FLEET_EBACKEND wherever Redis itself would reply with an error ("value
 *   is not an integer or out of range", "syntax error", ...), since that is
 *   what the Redis adapter turns such a reply into. Variadic commands
 *   (DEL, HDEL, SADD, ...) given no items are such an error.
 * - Otherwise a function returns what the Redis command returns when that
 *   is a count or a 0/1 flag. For a bulk reply it returns 1 (found) or
 *   0 (nil) and writes the value through `out`; for an array it returns the
 *   number of items and points `*out` at them.
 * - Returned strings and arrays are copies in the keyspace's scratch space:
 *   they stay valid, whatever the op does to the keyspace meanwhile, until
 *   the next fleet__ks_begin(). Returned strings are NUL-terminated (not
 *   counted in `len`). A nil item in an array is {NULL, 0}; an empty string
 *   has a non-NULL base.
 * - Like Redis, a hash, list, set or zset that becomes empty is deleted,
 *   and every access first deletes the key if it has expired. Time is the
 *   store clock given to fleet__ks_begin(), frozen for the whole op as it is
 *   for a Redis script. */
#ifndef FLEET_MEMORY_KEYSPACE_H
#define FLEET_MEMORY_KEYSPACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fleet.h"

typedef struct fleet__ks_s fleet__ks_t;

#define FLEET__KS_TYPE_MAP(XX)                                                 \
  XX(NONE, "none")                                                             \
  XX(STRING, "string")                                                         \
  XX(HASH, "hash")                                                             \
  XX(LIST, "list")                                                             \
  XX(SET, "set")                                                               \
  XX(ZSET, "zset")

typedef enum {
#define FLEET__KS_TYPE_ENUM(name, str) FLEET__KS_##name,
  FLEET__KS_TYPE_MAP(FLEET__KS_TYPE_ENUM)
#undef FLEET__KS_TYPE_ENUM
} fleet__ks_type_t;

/* A sorted set member with its score. */
typedef struct {
  fleet_bytes_t member;
  double score;
} fleet__ks_zitem_t;

/* The bytes of a NUL-terminated string, for literals ("owner"). */
static inline fleet_bytes_t fleet__ks_cstr(const char *s) {
  fleet_bytes_t b;
  b.base = s;
  b.len = strlen(s);
  return b;
}

/* ------------------------------------------------------------------------ */
/* Lifecycle, time, scratch space                                           */

/* A new, empty keyspace, or NULL when out of memory. */
fleet__ks_t *fleet__ks_new(void);

/* Frees the keyspace and everything in it. */
void fleet__ks_free(fleet__ks_t *ks);

/* Starts an op at `now_ms` (the store clock, in ms since the Unix epoch;
 * it must never go backwards): frees the previous op's scratch space and
 * deletes a few expired keys, so that expired keys never accessed again do
 * not pile up. */
void fleet__ks_begin(fleet__ks_t *ks, int64_t now_ms);

/* The time given to the last fleet__ks_begin(). */
int64_t fleet__ks_now(const fleet__ks_t *ks);

/* `size` bytes of scratch space, aligned for any type and valid until the
 * next fleet__ks_begin(), or NULL when out of memory. */
void *fleet__ks_scratch(fleet__ks_t *ks, size_t size);

/* Writes `v` in decimal to `buf` (room for 21 bytes), without a NUL, and
 * returns the length: what printf's "%" PRId64 writes, without printf. */
size_t fleet__ks_format_int(int64_t v, char *buf);

/* Parses a whole string as Redis parses an integer argument (optional '-',
 * decimal digits, no leading zero, no spaces, fits in 64 bits). Returns 0
 * or FLEET_EBACKEND. */
int fleet__ks_parse_int(fleet_bytes_t b, int64_t *out);

/* Parses a whole string as Redis parses a score ("1.5", "-inf", "+inf",
 * "1e3"; not NaN, no spaces, at most 255 bytes). Returns 0 or
 * FLEET_EBACKEND. */
int fleet__ks_parse_double(fleet_bytes_t b, double *out);

/* ------------------------------------------------------------------------ */
/* Keys                                                                     */

int64_t fleet__ks_del(fleet__ks_t *ks, const fleet_bytes_t *keys, size_t n);
/* Counts a key once per time it is named, as Redis does. */
int64_t fleet__ks_exists(fleet__ks_t *ks, const fleet_bytes_t *keys, size_t n);
fleet__ks_type_t fleet__ks_type(fleet__ks_t *ks, fleet_bytes_t key);
/* "none", "string", ... as Redis TYPE replies; never NULL. */
const char *fleet__ks_type_name(fleet__ks_type_t type);

/* Sets the expiry `ms` from now or at `at_ms`. Returns 1, or 0 when the key
 * does not exist. A time not in the future deletes the key (and returns
 * 1). */
int fleet__ks_pexpire(fleet__ks_t *ks, fleet_bytes_t key, int64_t ms);
int fleet__ks_pexpireat(fleet__ks_t *ks, fleet_bytes_t key, int64_t at_ms);
/* The time to live in ms, -1 when the key has no expiry, -2 when it does
 * not exist. The one function that cannot fail. */
int64_t fleet__ks_pttl(fleet__ks_t *ks, fleet_bytes_t key);

/* SCAN cursor MATCH prefix* COUNT count: examines about `count` keys (at
 * least 1) from `cursor` (0 to start), points `*keys` at those that start
 * with `prefix` and are not expired, and sets `*next` to the cursor of the
 * next call, 0 when the scan is complete. Returns the number of keys found,
 * which may be 0 before the end. Every key present for the whole scan is
 * returned at least once, whatever is added or deleted between calls; a key
 * may be returned more than once. See fleet__dict_scan() for how. */
int64_t fleet__ks_scan(fleet__ks_t *ks, uint64_t cursor, fleet_bytes_t prefix,
                       size_t count, uint64_t *next, fleet_bytes_t **keys);

/* ------------------------------------------------------------------------ */
/* Strings                                                                  */

#define FLEET__KS_SET_NX 1      /* Only if the key does not exist. */
#define FLEET__KS_SET_XX 2      /* Only if the key exists. */
#define FLEET__KS_SET_KEEPTTL 4 /* Keep the key's expiry. */

int fleet__ks_get(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t *out);
/* SET key value [PX px_ms] [NX|XX] [KEEPTTL]; px_ms 0 means no PX. Replaces
 * a key of any type. Returns 1 when set, 0 when NX or XX prevented it;
 * FLEET_EBACKEND for a negative px_ms, NX with XX, or PX with KEEPTTL. */
int fleet__ks_set(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t value,
                  int64_t px_ms, int flags);
/* Write the new value to `out`. The expiry is kept. */
int fleet__ks_incr(fleet__ks_t *ks, fleet_bytes_t key, int64_t *out);
int fleet__ks_incrby(fleet__ks_t *ks, fleet_bytes_t key, int64_t by,
                     int64_t *out);

/* ------------------------------------------------------------------------ */
/* Hashes                                                                   */

/* `fv` holds `n` items: field, value, field, value... Returns the number
 * of fields added; FLEET_EBACKEND when n is 0 or odd. */
int64_t fleet__ks_hset(fleet__ks_t *ks, fleet_bytes_t key,
                       const fleet_bytes_t *fv, size_t n);
int fleet__ks_hget(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t field,
                   fleet_bytes_t *out);
int64_t fleet__ks_hdel(fleet__ks_t *ks, fleet_bytes_t key,
                       const fleet_bytes_t *fields, size_t n);
/* Returns the number of items: field, value, field, value... */
int64_t fleet__ks_hgetall(fleet__ks_t *ks, fleet_bytes_t key,
                          fleet_bytes_t **out);
int fleet__ks_hincrby(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t field,
                      int64_t by, int64_t *out);
/* The number of fields (0 for a missing key). */
int64_t fleet__ks_hlen(fleet__ks_t *ks, fleet_bytes_t key);
int fleet__ks_hexists(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t field);
/* Returns n; missing fields are nil items. */
int64_t fleet__ks_hmget(fleet__ks_t *ks, fleet_bytes_t key,
                        const fleet_bytes_t *fields, size_t n,
                        fleet_bytes_t **out);

/* ------------------------------------------------------------------------ */
/* Lists                                                                    */

/* Push `n` values (at least 1) one by one; return the new length. */
int64_t fleet__ks_rpush(fleet__ks_t *ks, fleet_bytes_t key,
                        const fleet_bytes_t *values, size_t n);
/* The same at the head: each value in turn becomes element 0. */
int64_t fleet__ks_lpush(fleet__ks_t *ks, fleet_bytes_t key,
                        const fleet_bytes_t *values, size_t n);
/* Removes up to |count| elements equal to `value` (all when 0), from the
 * head (from the tail when negative); returns how many. */
int64_t fleet__ks_lrem(fleet__ks_t *ks, fleet_bytes_t key, int64_t count,
                       fleet_bytes_t value);
/* `start` and `stop` are inclusive; negative ones count from the end. */
int64_t fleet__ks_lrange(fleet__ks_t *ks, fleet_bytes_t key, int64_t start,
                         int64_t stop, fleet_bytes_t **out);
int64_t fleet__ks_llen(fleet__ks_t *ks, fleet_bytes_t key);
/* Returns 0. */
int fleet__ks_ltrim(fleet__ks_t *ks, fleet_bytes_t key, int64_t start,
                    int64_t stop);
int fleet__ks_lindex(fleet__ks_t *ks, fleet_bytes_t key, int64_t index,
                     fleet_bytes_t *out);
/* The index of the first element equal to `value`, from the head; -1 when
 * there is none (or no list), a negative error for a key of another
 * type. (LPOS without options.) */
int64_t fleet__ks_lpos(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t value);

/* ------------------------------------------------------------------------ */
/* Sets                                                                     */

int64_t fleet__ks_sadd(fleet__ks_t *ks, fleet_bytes_t key,
                       const fleet_bytes_t *members, size_t n);
int64_t fleet__ks_srem(fleet__ks_t *ks, fleet_bytes_t key,
                       const fleet_bytes_t *members, size_t n);
/* In no particular order. */
int64_t fleet__ks_smembers(fleet__ks_t *ks, fleet_bytes_t key,
                           fleet_bytes_t **out);

/* ------------------------------------------------------------------------ */
/* Sorted sets                                                              */

/* Ordered by score, then by member bytes. Inserting, removing and popping
 * are O(log n); ranges are O(log n) plus the items returned. Score bounds
 * are inclusive; use -INFINITY and INFINITY for open ends. */

/* ZADD key score member: returns 1 when added, 0 when the score was
 * updated; FLEET_EBACKEND for a NaN score. */
int fleet__ks_zadd(fleet__ks_t *ks, fleet_bytes_t key, double score,
                   fleet_bytes_t member);
int64_t fleet__ks_zrem(fleet__ks_t *ks, fleet_bytes_t key,
                       const fleet_bytes_t *members, size_t n);
int fleet__ks_zscore(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t member,
                     double *out);
int64_t fleet__ks_zcard(fleet__ks_t *ks, fleet_bytes_t key);
/* ZRANGEBYSCORE key min max LIMIT offset count; a negative count means no
 * limit. */
int64_t fleet__ks_zrangebyscore(fleet__ks_t *ks, fleet_bytes_t key, double min,
                                double max, int64_t offset, int64_t count,
                                fleet__ks_zitem_t **out);
/* ZRANGE key start stop: by rank, inclusive, negative from the end. */
int64_t fleet__ks_zrange(fleet__ks_t *ks, fleet_bytes_t key, int64_t start,
                         int64_t stop, fleet__ks_zitem_t **out);
/* ZRANK key member: returns 1 and writes the 0-based rank, or 0 when the
 * member or the key does not exist. */
int fleet__ks_zrank(fleet__ks_t *ks, fleet_bytes_t key, fleet_bytes_t member,
                    int64_t *out);
/* ZREMRANGEBYRANK key start stop: ranks as for fleet__ks_zrange(). */
int64_t fleet__ks_zremrangebyrank(fleet__ks_t *ks, fleet_bytes_t key,
                                  int64_t start, int64_t stop);
int64_t fleet__ks_zremrangebyscore(fleet__ks_t *ks, fleet_bytes_t key,
                                   double min, double max);
int64_t fleet__ks_zcount(fleet__ks_t *ks, fleet_bytes_t key, double min,
                         double max);

#endif /* FLEET_MEMORY_KEYSPACE_H */
