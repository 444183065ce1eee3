/* test_store_ctx.h -- a store handle with synchronous wrappers around its
 * calls, for the store tests: each wrapper makes one call, checks that the
 * callback does not run inside it, runs the loop until the callback ran
 * once, keeps copies of the results and returns the status. */
#ifndef FLEET_TEST_STORE_CTX_H
#define FLEET_TEST_STORE_CTX_H

#include "client_ctx.h"

/* The bytes of a C string (without its NUL). */
static inline fleet_bytes_t sb(const char *s) {
  fleet_bytes_t b;
  b.base = s;
  b.len = strlen(s);
  return b;
}

/* A store and what its last call gave. */
typedef struct {
  fleet_store_t store;
  uv_loop_t *loop;
  int in_call; /* set while a store call is on the stack */
  int calls;   /* callbacks run */
  int closed;  /* close callbacks run */
  int status;  /* of the last callback */
  char *value; /* get: a copy, NUL-terminated */
  size_t value_len;
  uint64_t ttl_ms;       /* get */
  uint64_t n;            /* append, count, clear */
  fleet_bytes_t *events; /* read: copies */
  size_t nevents;
  fleet_store_item_t *items; /* list: copies */
  size_t nitems;
  char *cursor; /* list: the next cursor, a copy; NULL when complete */
  size_t cursor_len;
} st_t;

/* Initializes the store on `client` (whose loop it runs); asserts
 * success. */
void st_open(st_t *s, fleet_client_t *client,
             const fleet_store_options_t *options);

/* Closes the store and runs the loop until its close callback ran. */
void st_close(st_t *s);

/* Frees the copies of the last results. */
void st_reset(st_t *s);

/* Runs `loop` for `ms` milliseconds (not scaled). */
void st_sleep(uv_loop_t *loop, uint64_t ms);

/* The wrappers. Each returns the callback's status; calls that return an
 * error themselves abort the test (use the API directly to test those). */
int st_put(st_t *s, const char *coll, fleet_bytes_t id, fleet_bytes_t value,
           const fleet_store_put_options_t *o);
int st_get(st_t *s, const char *coll, fleet_bytes_t id);
int st_delete(st_t *s, const char *coll, fleet_bytes_t id);
int st_exists(st_t *s, const char *coll, fleet_bytes_t id);
int st_touch(st_t *s, const char *coll, fleet_bytes_t id, uint64_t ttl_ms);
int st_append(st_t *s, const char *coll, fleet_bytes_t id,
              const fleet_bytes_t *events, size_t n);
int st_read(st_t *s, const char *coll, fleet_bytes_t id, uint64_t offset,
            size_t limit);
int st_count(st_t *s, const char *coll, fleet_bytes_t id);
int st_list(st_t *s, const char *coll, const char *index, fleet_bytes_t value,
            fleet_bytes_t cursor, size_t limit);
int st_clear(st_t *s);
int st_ping(st_t *s);

/* Puts record `id` of `coll` with value `value`, indexed under
 * (`index`, `ivalue`) when `index` is not NULL, with TTL `ttl_ms` (0: the
 * store's); asserts success. */
void st_put_ix(st_t *s, const char *coll, const char *id, const char *value,
               const char *index, const char *ivalue, uint64_t ttl_ms);

/* Lists every page of (`index`, `value`) with pages of `limit` and returns
 * the ids seen, in order, as one string "id1,id2,..." (malloc'd), asserting
 * each page succeeds; at most 1000 pages. */
char *st_list_all(st_t *s, const char *coll, const char *index,
                  const char *value, size_t limit);

/* The key <base><part><id> of the store's collection `coll`, as the store
 * builds it ("{<prefix>:<coll>}:<part><id>"), into `buf`; returns its
 * length. */
size_t st_key(const st_t *s, char *buf, size_t cap, const char *coll,
              const char *part, const char *id);

#endif /* FLEET_TEST_STORE_CTX_H */
