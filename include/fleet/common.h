/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/common.h -- what every public header shares: the export marker,
 * byte strings, the client type and the handle base. Self-contained. */
#ifndef FLEET_COMMON_H
#define FLEET_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the public API. The library is built with hidden visibility, so
 * only what carries this marker is exported from libfleet.so. */
#if defined(FLEET_BUILDING) && defined(__GNUC__)
#define FLEET_EXTERN __attribute__((visibility("default")))
#else
#define FLEET_EXTERN /* nothing */
#endif

/* A binary-safe byte string. fleet does not take ownership of `base`; it
 * copies what it keeps. */
typedef struct {
  const void *base;
  size_t len;
} fleet_bytes_t;

typedef struct fleet_client_s fleet_client_t;

/* The kinds of handle a client carries. */
#define FLEET_HANDLE_TYPE_MAP(XX)                                              \
  XX(LOCK, "lock")                                                             \
  XX(LEADER, "leader")                                                         \
  XX(QUEUE, "queue")                                                           \
  XX(WORKER, "worker")                                                         \
  XX(STORE, "store")                                                           \
  XX(POOL_NODE, "pool_node")                                                   \
  XX(POOL_TICKER, "pool_ticker")                                               \
  XX(POOL_SCHEDULE, "pool_schedule")                                           \
  XX(CRON_SCHEDULER, "cron_scheduler")                                         \
  XX(WARMPOOL, "warmpool")

typedef enum {
  FLEET_HANDLE_UNKNOWN = 0,
#define FLEET__HANDLE_TYPE_ENUM(name, str) FLEET_HANDLE_##name,
  FLEET_HANDLE_TYPE_MAP(FLEET__HANDLE_TYPE_ENUM)
#undef FLEET__HANDLE_TYPE_ENUM
      FLEET_HANDLE_TYPE_MAX
} fleet_handle_type_t;

/* The fields every handle starts with, as libuv's UV_HANDLE_FIELDS: a
 * pointer to any handle (fleet_lock_t *, fleet_queue_t *, ...) may be cast
 * to fleet_handle_t * and back. */
#define FLEET_HANDLE_FIELDS                                                    \
  /* For the user; fleet never reads or writes it. */                          \
  void *data;                                                                  \
  /* Read-only: set by the handle's init, FLEET_HANDLE_UNKNOWN before. */      \
  fleet_handle_type_t type;                                                    \
  /* Private. */                                                               \
  struct fleet__handle_s *internal_;

/* Any handle. */
typedef struct fleet_handle_s {
  FLEET_HANDLE_FIELDS
} fleet_handle_t;

/* Called once when a handle has finished closing: every callback it owed
 * has run and nothing of it is left on the loop. The memory of the handle
 * may be freed or reused from here on. */
typedef void (*fleet_close_cb)(fleet_handle_t *handle);

/* Completion of a call that reports only a status (a release, a resign,
 * a cancel, a put, a stop): `status` is 0 or a negative error. Cast
 * `handle` back to the type of the handle the call was made on. */
typedef void (*fleet_status_cb)(fleet_handle_t *handle, int status,
                                void *user_data);

/* The error callback of a handle that works in the background (lock
 * renewals, leader campaigns, worker claims and heartbeats): it hears each
 * failure that no request of the user reports, with its code and the
 * backend's text for it (`detail`, NUL-terminated, "" when there is none;
 * valid until the callback returns). The handle goes on working: it
 * retries what may pass by itself. */
typedef void (*fleet_error_cb)(fleet_handle_t *handle, int status,
                               const char *detail);

/* The name of a handle type ("lock"); never NULL ("unknown" when out of
 * range). */
FLEET_EXTERN const char *fleet_handle_type_name(fleet_handle_type_t type);

/* Closes any handle, as the close function of its type does (see
 * fleet_lock_close(), fleet_queue_close(), ...): pending calls complete
 * with FLEET_ECANCELED, then `close_cb` (may be NULL) runs, never inside
 * this call. May be called from any fleet callback.
 *
 * Returns 0, FLEET_EINVAL (NULL or not initialized) or FLEET_ECLOSING
 * (already closing). */
FLEET_EXTERN int fleet_close(fleet_handle_t *handle, fleet_close_cb close_cb);

/* Whether `handle` is closing or closed (1), or open (0). */
FLEET_EXTERN int fleet_is_closing(const fleet_handle_t *handle);

/* The client a handle was made on (NULL once closed). */
FLEET_EXTERN fleet_client_t *fleet_handle_client(const fleet_handle_t *handle);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_COMMON_H */
