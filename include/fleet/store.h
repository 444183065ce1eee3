/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/store.h -- the TTL record store: records in collections, indexes,
 * events lists, listing by index, clear and ping. */
#ifndef FLEET_STORE_H
#define FLEET_STORE_H

#include "fleet/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A store: binary-safe records in named collections under one key prefix,
 * each record expiring after its TTL unless an update refreshes it. A
 * record may be indexed under (index name, value) pairs and may own a list
 * of events; the record, its index entries and its events share one
 * expiry. Every operation is one atomic script on Redis (one op in
 * memory), so no reader sees half of an update. */
typedef struct fleet_store_s fleet_store_t;

/* Longest collection name, record id and index value, in bytes. */
#define FLEET_STORE_NAME_MAX 512
/* Longest index name, in bytes. */
#define FLEET_STORE_INDEX_NAME_MAX 128
/* Most (index name, value) pairs on one record. */
#define FLEET_STORE_INDEXES_MAX 16
/* Most records per list page, events per read and events per append. */
#define FLEET_STORE_BATCH_MAX 1000
/* Longest TTL: ten years, in milliseconds. */
#define FLEET_STORE_TTL_MAX_MS 315360000000ull
/* The default TTL: 24 hours. */
#define FLEET_STORE_DEFAULT_TTL_MS 86400000ull
/* The default largest value or event: 1 MiB. */
#define FLEET_STORE_DEFAULT_VALUE_MAX (1024u * 1024u)
/* The largest configurable value limit: Redis's largest bulk string. */
#define FLEET_STORE_VALUE_MAX_LIMIT (512u * 1024u * 1024u)
/* Largest events read offset. */
#define FLEET_STORE_OFFSET_MAX 2147483647u

typedef struct {
  /* Prefix of every key of the store; copied. Default (NULL):
   * "<client prefix>:store". 1 to 128 bytes, without '{' or '}'. Choose
   * one that no other fleet object name starts with: fleet_store_clear()
   * deletes every key that starts with "{<prefix>:". */
  const char *prefix;
  /* TTL of a record put without one. Default (0): 24 hours. At most
   * FLEET_STORE_TTL_MAX_MS. */
  uint64_t ttl_ms;
  /* Largest value or event, in bytes; larger ones are refused with
   * FLEET_E2BIG. Default (0): 1 MiB. At most FLEET_STORE_VALUE_MAX_LIMIT. */
  size_t max_value_bytes;
  /* When not 0, an events list keeps only its newest `max_events` events
   * (the oldest are dropped on append). Default 0: no cap. */
  uint32_t max_events;
} fleet_store_options_t;

/* One (index name, value) pair. The name is a NUL-terminated string of 1
 * to FLEET_STORE_INDEX_NAME_MAX bytes without ':'; the value is 1 to
 * FLEET_STORE_NAME_MAX bytes, binary-safe. */
typedef struct {
  const char *name;
  fleet_bytes_t value;
} fleet_store_index_t;

/* How fleet_store_put() writes a record; may be NULL for no indexes and the
 * store's TTL. */
typedef struct {
  /* The record's index entries: `nindexes` pairs, at most
   * FLEET_STORE_INDEXES_MAX. A pair given twice counts once. The new
   * version replaces the old one's entries. */
  const fleet_store_index_t *indexes;
  size_t nindexes;
  /* The record's TTL, kept with it: fleet_store_touch() without a TTL and
   * fleet_store_events_append() refresh its expiry to now + this TTL. 0:
   * the store's TTL. At most FLEET_STORE_TTL_MAX_MS. */
  uint64_t ttl_ms;
} fleet_store_put_options_t;

/* One record of a list page. */
typedef struct {
  fleet_bytes_t id;
  fleet_bytes_t value;
} fleet_store_item_t;

/* A handle (see fleet/common.h): a fleet_store_t * may be cast to
 * fleet_handle_t * and back. */
struct fleet_store_s {
  FLEET_HANDLE_FIELDS
};

/* Put, delete, exists, touch and ping complete with a fleet_status_cb
 * (fleet/common.h): `status` is 0 or a negative error (FLEET_ENOTFOUND
 * when the record does not exist). */

/* Completion of fleet_store_get(): the value and the time the record has
 * left to live, in ms (0 for a record without an expiry, which only a
 * writer other than fleet can make), valid when `status` is 0. `value`
 * points into the reply and is valid until the callback returns. */
typedef void (*fleet_store_get_cb)(fleet_store_t *store, int status,
                                   fleet_bytes_t value, uint64_t ttl_ms,
                                   void *user_data);

/* Completion of events append and count (the length of the events list)
 * and of clear (the number of keys deleted), valid when `status` is 0. */
typedef void (*fleet_store_count_cb)(fleet_store_t *store, int status,
                                     uint64_t n, void *user_data);

/* Completion of fleet_store_events_read(): `n` events, oldest first. The
 * array and the bytes it points to are valid until the callback returns. */
typedef void (*fleet_store_events_cb)(fleet_store_t *store, int status,
                                      const fleet_bytes_t *events, size_t n,
                                      void *user_data);

/* Completion of fleet_store_list(): `n` records, and the cursor of the next
 * page, empty (len 0) when the listing is complete. Everything is valid
 * until the callback returns: ask for the next page from the callback, or
 * copy the cursor. */
typedef void (*fleet_store_list_cb)(fleet_store_t *store, int status,
                                    const fleet_store_item_t *items, size_t n,
                                    fleet_bytes_t next_cursor, void *user_data);

/* Fills `options` with the defaults: every field 0. */
FLEET_EXTERN void fleet_store_options_init(fleet_store_options_t *options);

/* Initializes `store` on `client`. `options` may be NULL for the defaults;
 * it is copied, and a zeroed field means its default. The store must be
 * closed before its client: fleet_client_close() gives FLEET_EBUSY while
 * the store is open.
 *
 * Returns 0, FLEET_EINVAL (NULL argument, bad option), FLEET_ECLOSING (the
 * client is closing) or FLEET_ENOMEM; on error the store need not be
 * closed. */
FLEET_EXTERN int fleet_store_init(fleet_client_t *client, fleet_store_t *store,
                                  const fleet_store_options_t *options);

/* Closes `store`, as fleet_close() does: the callback of every pending call
 * runs once with FLEET_ECANCELED, then `close_cb` (which may be NULL) runs,
 * once no reply of the backend is due. All of this happens after this call
 * returns, never inside it. Calls made meanwhile give FLEET_ECLOSING. May
 * be called from any fleet callback. An operation already sent may still
 * take effect.
 *
 * Returns 0, FLEET_EINVAL (NULL or uninitialized store) or FLEET_ECLOSING
 * (already closing). */
FLEET_EXTERN int fleet_store_close(fleet_store_t *store,
                                   fleet_close_cb close_cb);

/* The key prefix of the store (valid until the close callback), or NULL
 * for a NULL or uninitialized store. */
FLEET_EXTERN const char *fleet_store_prefix(const fleet_store_t *store);

/* Every call below takes a callback and `user_data` for it. Unless stated
 * otherwise, a call returns 0 (then the callback runs exactly once, after
 * the call returns) or an error, and then the callback never runs and
 * nothing was written:
 *   FLEET_EINVAL    a NULL store or callback, a NULL or empty collection
 *                   name or id, a collection containing '}' (it would end
 *                   the key's hash tag), or another argument out of its
 *                   documented range;
 *   FLEET_E2BIG     a collection name, id, index name or index value
 *                   longer than its limit, or a value or event longer than
 *                   the store's max_value_bytes;
 *   FLEET_ECLOSING  the store or its client is closing;
 *   FLEET_ENOMEM.
 * The callback's status is 0 or: FLEET_ENOTFOUND where stated,
 * FLEET_EWRONGTYPE when a key of the store holds data of another type,
 * FLEET_EPROTO when it holds data fleet did not write, FLEET_ECANCELED when
 * the store was closed first, or a connection error of the client
 * (FLEET_ETIMEDOUT, FLEET_EUNAVAILABLE, FLEET_ECONNLOST: the operation may
 * have run). A collection is a NUL-terminated name of 1 to
 * FLEET_STORE_NAME_MAX bytes, as every fleet object name; ids, values and
 * events are binary-safe. fleet copies them all before the call returns. */

/* Creates or replaces record `id` of `collection` with `value` (0 bytes
 * allowed). Its expiry, its index entries and its events list are set to
 * now + TTL (the server's clock); index entries of the old version that the
 * new one lacks are removed. A new record (none existed) starts with no
 * events. */
FLEET_EXTERN int fleet_store_put(fleet_store_t *store, const char *collection,
                                 fleet_bytes_t id, fleet_bytes_t value,
                                 const fleet_store_put_options_t *options,
                                 fleet_status_cb cb, void *user_data);

/* Reads a record: its value and remaining TTL, or FLEET_ENOTFOUND. */
FLEET_EXTERN int fleet_store_get(fleet_store_t *store, const char *collection,
                                 fleet_bytes_t id, fleet_store_get_cb cb,
                                 void *user_data);

/* Deletes a record with its index entries and its events: 0, or
 * FLEET_ENOTFOUND when there was none. */
FLEET_EXTERN int fleet_store_delete(fleet_store_t *store,
                                    const char *collection, fleet_bytes_t id,
                                    fleet_status_cb cb, void *user_data);

/* Whether a record exists: 0, or FLEET_ENOTFOUND. */
FLEET_EXTERN int fleet_store_exists(fleet_store_t *store,
                                    const char *collection, fleet_bytes_t id,
                                    fleet_status_cb cb, void *user_data);

/* Sets the expiry of a record, its index entries and its events to now +
 * `ttl_ms`, which becomes the record's TTL; 0 keeps the record's TTL (the
 * one it was put with). The new expiry may be earlier than the old one.
 * Status 0, or FLEET_ENOTFOUND. `ttl_ms` is at most
 * FLEET_STORE_TTL_MAX_MS. */
FLEET_EXTERN int fleet_store_touch(fleet_store_t *store, const char *collection,
                                   fleet_bytes_t id, uint64_t ttl_ms,
                                   fleet_status_cb cb, void *user_data);

/* Appends `n` events (1 to FLEET_STORE_BATCH_MAX, each 0 bytes to the
 * store's max_value_bytes) to the events list of an existing record, at
 * once, then drops the oldest beyond the store's max_events, and refreshes
 * the expiry of the record, its index entries and its events to now + the
 * record's TTL. The callback gets the new length of the list, or
 * FLEET_ENOTFOUND when the record does not exist (nothing is appended). */
FLEET_EXTERN int
fleet_store_events_append(fleet_store_t *store, const char *collection,
                          fleet_bytes_t id, const fleet_bytes_t *events,
                          size_t n, fleet_store_count_cb cb, void *user_data);

/* Reads up to `limit` (1 to FLEET_STORE_BATCH_MAX) events of a record,
 * oldest first, skipping the first `offset` (at most
 * FLEET_STORE_OFFSET_MAX); past the end the page is empty. With a
 * max_events cap, offsets count from the oldest event still kept.
 * FLEET_ENOTFOUND when the record does not exist. Reading does not refresh
 * the TTL. */
FLEET_EXTERN int fleet_store_events_read(fleet_store_t *store,
                                         const char *collection,
                                         fleet_bytes_t id, uint64_t offset,
                                         size_t limit, fleet_store_events_cb cb,
                                         void *user_data);

/* The number of events of a record, or FLEET_ENOTFOUND. */
FLEET_EXTERN int fleet_store_events_count(fleet_store_t *store,
                                          const char *collection,
                                          fleet_bytes_t id,
                                          fleet_store_count_cb cb,
                                          void *user_data);

/* Lists the records of `collection` indexed under (`index`, `value`), up to
 * `limit` (1 to FLEET_STORE_BATCH_MAX) per page, ordered by expiry time
 * (with one TTL for all records: by time of last update), ties by id
 * bytes. Pass an empty `cursor` ({NULL, 0}) for the first page and the
 * callback's `next_cursor` for each next one; the listing is complete when
 * `next_cursor` is empty. A page may hold fewer than `limit` records
 * before the end.
 *
 * Across the pages of one listing: a record that exists and keeps its
 * index entry and its expiry for the whole listing is returned exactly
 * once; expired and deleted records are never returned (their entries are
 * pruned as the listing meets them); a record added or refreshed meanwhile
 * is returned if its new expiry sorts after the cursor (always true with
 * one TTL for all records, to the millisecond), so a refreshed record may
 * come twice. FLEET_EINVAL also for a malformed cursor (see docs/store.md
 * for its format). Listing does not refresh TTLs. */
FLEET_EXTERN int fleet_store_list(fleet_store_t *store, const char *collection,
                                  const char *index, fleet_bytes_t value,
                                  fleet_bytes_t cursor, size_t limit,
                                  fleet_store_list_cb cb, void *user_data);

/* Deletes every key whose name starts with "{<prefix>:", whoever wrote it,
 * with SCAN and UNLINK in batches (never KEYS), and nothing else. It is not
 * atomic: a key written under the prefix while it runs may survive; every
 * key that exists for the whole run is deleted. The callback gets the
 * number of keys deleted. On Redis Cluster it walks every master (never
 * the replicas), one after the other, and deletes with one UNLINK per
 * slot (docs/deploy.md, "Limits"). */
FLEET_EXTERN int fleet_store_clear(fleet_store_t *store,
                                   fleet_store_count_cb cb, void *user_data);

/* Checks that the backend answers: a round trip through the client.
 * Status 0 or a connection error. */
FLEET_EXTERN int fleet_store_ping(fleet_store_t *store, fleet_status_cb cb,
                                  void *user_data);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_STORE_H */
