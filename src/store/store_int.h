/* store_int.h -- the store's internals, shared by src/store/: the handle,
 * its requests, names and keys. store.c is the hub the other files call
 * (it calls none of them); each public call's descriptor, reader and fail
 * hook sit next to it in the file that owns it. */
#ifndef FLEET_SRC_STORE_INT_H
#define FLEET_SRC_STORE_INT_H

#include "core/args.h"
#include "core/handle.h"
#include "core/keys.h"

/* The states of a clear: a SCAN is in flight, an UNLINK is in flight, or
 * the clear has finished (its callback ran or is about to). */
#define FLEET__STORE_CLEAR_STATE_MAP(XX)                                       \
  XX(SCANNING, "scanning")                                                     \
  XX(UNLINKING, "unlinking")                                                   \
  XX(DONE, "done")

typedef enum {
#define FLEET__STORE_CLEAR_ENUM(name, str) FLEET__STORE_CLEAR_##name,
  FLEET__STORE_CLEAR_STATE_MAP(FLEET__STORE_CLEAR_ENUM)
#undef FLEET__STORE_CLEAR_ENUM
} fleet__store_clear_state_t;

/* One call the user waits for, on the request base: a call of the store
 * (store_*_call, each next to its public function) stores its callback in
 * base.cb. Only a clear keeps more. */
typedef struct fleet__store_req_s {
  fleet__req_t base;
  /* A clear's progress: its state, the SCAN cursor to continue from and
   * the number of keys deleted so far. */
  fleet__store_clear_state_t clear_state;
  char scan_cursor[24];
  size_t scan_cursor_len;
  uint64_t cleared;
} fleet__store_req_t;

typedef struct fleet__store_s {
  fleet__handle_t base;
  char *prefix;
  size_t prefix_len;
  uint64_t ttl_ms;
  size_t max_value;
  uint32_t max_events;
  /* A clear's SCAN MATCH pattern, built at init. */
  fleet__key_t pattern;

  /* Storage for building one call, reused by every call of the store:
   * the backend copies keys and arguments before its call returns. Every
   * script op of the store gets one key, the collection's tag; a clear's
   * UNLINK gets the keys its SCAN found. */
  fleet__key_t tag; /* "{<prefix>:<collection>}" */
  fleet__args_t keys;
  fleet__args_t args;

  /* Storage for delivering one reply, grown to the largest one seen. */
  fleet_bytes_t *events_out;
  size_t events_cap;
  fleet_store_item_t *items_out;
  size_t items_cap;
  fleet__key_t cursor_out;
} fleet__store_t;

/* ------------------------------------------------------------------------ */
/* Calls (store.c)                                                          */

/* The store of the public `store` if it can take a call (`has_cb`: its
 * callback is not NULL); else NULL with `*err` set to FLEET_EINVAL (NULL
 * or uninitialized store, NULL callback) or FLEET_ECLOSING (the store or
 * its client is closing). */
static inline fleet__store_t *fleet__store_enter(fleet_store_t *store,
                                                 int has_cb, int *err) {
  return (fleet__store_t *)fleet__call_enter(store, FLEET_HANDLE_STORE, has_cb,
                                             err);
}

/* Sends `call` of `s` with s->tag as its one key and the arguments built
 * in s->args; its answer goes to `cb` (a callback of the call's type).
 * Returns 0, or an error and nothing is left behind (fleet__call()). */
static inline int fleet__store_call(fleet__store_t *s,
                                    const fleet__call_t *call, fleet__fn_t cb,
                                    void *user_data) {
  return fleet__call_keyed(&s->base, call, cb, user_data, &s->tag, &s->args);
}

/* The store a request belongs to, and its public handle. */
static inline fleet__store_t *fleet__store_of(const fleet__req_t *req) {
  return (fleet__store_t *)req->handle;
}

static inline fleet_store_t *fleet__store_pub(const fleet__req_t *req) {
  return (fleet_store_t *)req->handle->pub;
}

/* Runs the fleet_store_count_cb of `req` with `status` and the count `n`
 * (fleet__store_fail_count(): 0), the request being done: the one
 * callback shape the events calls and the clear share. */
void fleet__store_count_back(fleet__req_t *req, int status, uint64_t n);

/* The `fail` of every call whose callback is a fleet_store_count_cb. */
void fleet__store_fail_count(fleet__req_t *req, int status);

/* ------------------------------------------------------------------------ */
/* Names and keys (store.c)                                                 */

/* Checks an (index name, value) pair: a name of 1 to
 * FLEET_STORE_INDEX_NAME_MAX bytes without ':' (it would make index keys
 * ambiguous) and a value of 1 to FLEET_STORE_NAME_MAX bytes. Returns 0,
 * FLEET_EINVAL or FLEET_E2BIG. */
int fleet__store_index_check(const char *name, fleet_bytes_t value);

/* Appends `len` bytes to the buffer `key`, growing it. Returns 0 or
 * FLEET_ENOMEM. */
int fleet__store_buf_add(fleet__key_t *key, const void *p, size_t len);

/* Checks `collection` (fleet__str_check()'s rule, and no '}', which would
 * end the hash tag) and builds the tag "{<prefix>:<collection>}" into
 * s->tag. Returns 0, FLEET_EINVAL, FLEET_E2BIG or FLEET_ENOMEM. */
int fleet__store_tag(fleet__store_t *s, const char *collection);

/* Checks `collection` and `id`, builds the tag and starts the call's
 * `nargs` arguments (at least 1, up to `nnums` of them numbers) in s->args
 * with `id`; the caller adds the rest. Returns 0, FLEET_EINVAL,
 * FLEET_E2BIG or FLEET_ENOMEM. */
int fleet__store_record_begin(fleet__store_t *s, const char *collection,
                              fleet_bytes_t id, size_t nargs, size_t nnums);

/* Checks a value or an event against the store's limit (store_record.c):
 * 0, FLEET_EINVAL (NULL bytes with a length) or FLEET_E2BIG. */
int fleet__store_value_check(const fleet__store_t *s, fleet_bytes_t v);

/* Builds into `out` the SCAN MATCH pattern of every key under `prefix`:
 * "{<prefix>:*" with each glob metacharacter of the prefix ('*', '?', '[',
 * ']', '\') escaped by a backslash: a clear's (store_clear.c). Returns 0
 * or FLEET_ENOMEM. */
int fleet__store_scan_pattern(fleet__key_t *out, const char *prefix,
                              size_t len);

/* ------------------------------------------------------------------------ */
/* Clear (store_clear.c)                                                    */

/* The name of a clear state ("scanning"); never NULL. */
const char *fleet__store_clear_state_name(fleet__store_clear_state_t state);

#endif /* FLEET_SRC_STORE_INT_H */
