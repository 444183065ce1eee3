/* store_int.h -- the store's internals, shared by src/store*.c: the handle,
 * its pooled requests, key building and the reply checks. */
#ifndef FLEET_SRC_STORE_INT_H
#define FLEET_SRC_STORE_INT_H

#include "client.h"
#include "keys.h"

/* The callback type a request completes with. */
typedef enum {
  FLEET__STORE_CB_DONE,   /* fleet_store_cb */
  FLEET__STORE_CB_GET,    /* fleet_store_get_cb */
  FLEET__STORE_CB_COUNT,  /* fleet_store_count_cb */
  FLEET__STORE_CB_EVENTS, /* fleet_store_events_cb */
  FLEET__STORE_CB_LIST    /* fleet_store_list_cb */
} fleet__store_cb_type_t;

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

typedef struct fleet__store_req_s fleet__store_req_t;

/* Interprets the reply of the op a request sent, and completes the request
 * or sends its next op. `status` is 0 with a reply, or an error and NULL.
 * Runs only while the store is open. */
typedef void (*fleet__store_reply_fn)(fleet__store_req_t *req, int status,
                                      const fleet__reply_t *reply);

/* One call in progress. Pooled per store; on the pending list from the
 * call until its callback runs. */
struct fleet__store_req_s {
  fleet__store_req_t *prev;
  fleet__store_req_t *next;
  /* The store, or NULL once the store has closed while the request's op
   * was still with the backend: the reply then only frees the request. */
  struct fleet__store_s *store;
  fleet__store_reply_fn on_reply;
  fleet__store_cb_type_t cb_type;
  union {
    fleet_store_cb done;
    fleet_store_get_cb get;
    fleet_store_count_cb count;
    fleet_store_events_cb events;
    fleet_store_list_cb list;
  } cb;
  void *user_data;
  /* A clear's progress: its state, the SCAN cursor to continue from and
   * the number of keys deleted so far. */
  fleet__store_clear_state_t clear_state;
  char scan_cursor[24];
  size_t scan_cursor_len;
  uint64_t cleared;
};

struct fleet__store_s {
  fleet_store_t *pub;
  fleet_client_t *client;
  /* Never started: closing it defers the close work to a later loop
   * iteration. */
  uv_timer_t handle;
  char *prefix;
  size_t prefix_len;
  uint64_t ttl_ms;
  size_t max_value;
  uint32_t max_events;
  int closing;
  fleet_store_close_cb close_cb;
  fleet__store_req_t *pending;
  fleet__store_req_t *free_reqs;

  /* Scratch space for building one call; the backend copies keys and
   * arguments before its call returns. */
  fleet__key_t base; /* "{<prefix>:<collection>}:" */
  fleet__key_t rec;
  fleet__key_t ev;
  fleet__key_t idx[FLEET_STORE_INDEXES_MAX];
  fleet_bytes_t keys[2 + FLEET_STORE_INDEXES_MAX];
  fleet_bytes_t args[4 + FLEET_STORE_BATCH_MAX];
  char num[3][24];

  /* A clear's SCAN pattern, and the keys of its UNLINK. */
  fleet__key_t pattern;
  fleet_bytes_t *unlink_keys;
  size_t unlink_cap;

  /* Scratch space for delivering one reply. */
  fleet_bytes_t events_out[FLEET_STORE_BATCH_MAX];
  fleet_store_item_t items_out[FLEET_STORE_BATCH_MAX];
  fleet__key_t cursor_out;
};

/* ------------------------------------------------------------------------ */
/* Requests (store.c)                                                       */

/* Checks that `store` can take a call (`has_cb`: its callback is not
 * NULL). Returns the store's internals, or NULL with `*err` set to
 * FLEET_EINVAL (NULL store or callback) or FLEET_ECLOSING (the store or its
 * client is closing). */
struct fleet__store_s *fleet__store_enter(fleet_store_t *store, int has_cb,
                                          int *err);

/* A request for a call on `s`, from the pool or new, or NULL when out of
 * memory; the caller sets the callback member of req->cb that `type`
 * names. It is not pending until fleet__store_send() succeeds. */
fleet__store_req_t *fleet__store_req_get(struct fleet__store_s *s,
                                         fleet__store_cb_type_t type,
                                         void *user_data,
                                         fleet__store_reply_fn on_reply);

/* Sends `op` for `req`. A request that is not yet pending becomes pending
 * on success and goes back to the pool on failure. A pending one (a
 * clear's next step) stays pending either way, and on failure its caller
 * completes it. Returns 0 or the backend's error. */
int fleet__store_send(fleet__store_req_t *req, fleet__op_t op,
                      const fleet_bytes_t *keys, size_t nkeys,
                      const fleet_bytes_t *args, size_t nargs);

/* Completes `req` with `status` and empty results (nothing found, zero
 * counts): the request goes back to the pool, then its callback runs. */
void fleet__store_finish(fleet__store_req_t *req, int status);

/* Takes `req` off the pending list and back to the pool, before its
 * callback runs; the caller has copied what the callback needs. */
void fleet__store_req_done(fleet__store_req_t *req);

/* ------------------------------------------------------------------------ */
/* Validation and keys (store.c)                                            */

/* Whether `b` is a valid collection name: 1 to FLEET_STORE_NAME_MAX bytes
 * without '}'. */
int fleet__store_collection_valid(fleet_bytes_t b);

/* Whether `b` is 1 to `max` bytes. */
int fleet__store_bytes_valid(fleet_bytes_t b, size_t max);

/* Whether `ix` is a valid (index name, value) pair: a name of 1 to
 * FLEET_STORE_INDEX_NAME_MAX bytes without ':' (it would make index keys
 * ambiguous) and a value of 1 to FLEET_STORE_NAME_MAX bytes. */
int fleet__store_index_valid(const fleet_store_index_t *ix);

/* Appends `len` bytes to the buffer `key`, growing it. Returns 0 or
 * FLEET_ENOMEM. */
int fleet__store_buf_add(fleet__key_t *key, const void *p, size_t len);

/* Builds the base "{<prefix>:<collection>}:" into s->base. */
int fleet__store_base(struct fleet__store_s *s, fleet_bytes_t collection);

/* Builds <base><part><a>, or <base><part><a>:<b> when `b` is not NULL,
 * into `key`. s->base must be built. */
int fleet__store_key(struct fleet__store_s *s, fleet__key_t *key,
                     const char *part, fleet_bytes_t a, const fleet_bytes_t *b);

/* Builds the base, the record key and the events key of record `id` of
 * `collection` into s->keys[0..1], after validating both names. Returns 0,
 * FLEET_EINVAL or FLEET_ENOMEM. */
int fleet__store_record_keys(struct fleet__store_s *s, fleet_bytes_t collection,
                             fleet_bytes_t id);

/* Checks a value or an event against the store's limit (store_record.c):
 * 0, FLEET_EINVAL (NULL bytes with a length) or FLEET_E2BIG. */
int fleet__store_value_check(const struct fleet__store_s *s, fleet_bytes_t v);

/* Formats `v` in decimal into s->num[slot] and returns it as bytes. */
fleet_bytes_t fleet__store_num(struct fleet__store_s *s, int slot, uint64_t v);

/* ------------------------------------------------------------------------ */
/* Clear (store_clear.c)                                                    */

/* The name of a clear state ("scanning"); never NULL. */
const char *fleet__store_clear_state_name(fleet__store_clear_state_t state);

/* Builds into `out` the SCAN MATCH pattern of every key under `prefix`:
 * "{<prefix>:*" with each glob metacharacter of the prefix ('*', '?', '[',
 * ']', '\') escaped by a backslash. Returns 0 or FLEET_ENOMEM. */
int fleet__store_scan_pattern(fleet__key_t *out, const char *prefix,
                              size_t len);

/* ------------------------------------------------------------------------ */
/* Reply checks                                                             */

static inline int fleet__store_reply_is(const fleet__reply_t *r,
                                        fleet__reply_type_t type) {
  return r != NULL && r->type == type;
}

/* Whether `r` is an array of `n` elements (any `n` when `n` is SIZE_MAX). */
static inline int fleet__store_reply_array(const fleet__reply_t *r, size_t n) {
  return fleet__store_reply_is(r, FLEET__REPLY_ARRAY) &&
         (n == SIZE_MAX || r->nelem == n);
}

static inline fleet_bytes_t fleet__store_reply_bytes(const fleet__reply_t *r) {
  fleet_bytes_t b;
  b.base = r->str;
  b.len = r->len;
  return b;
}

#endif /* FLEET_SRC_STORE_INT_H */
