/* SPDX-License-Identifier: Apache-2.0 */
/* fleet.h -- umbrella header: version, error map, common types. */
#ifndef FLEET_H
#define FLEET_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "fleet/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_VERSION_MAJOR 0
#define FLEET_VERSION_MINOR 3
#define FLEET_VERSION_PATCH 0
#define FLEET_VERSION_STRING "0.3.0"
#define FLEET_VERSION_HEX                                                      \
  ((FLEET_VERSION_MAJOR << 16) | (FLEET_VERSION_MINOR << 8) |                  \
   FLEET_VERSION_PATCH)

/* The version of the library actually linked, as FLEET_VERSION_HEX and as a
 * string. Compare with the macros to detect a header/library mismatch. */
FLEET_EXTERN unsigned int fleet_version(void);
FLEET_EXTERN const char *fleet_version_string(void);

/* Every error fleet reports: XX(name, value, message). Values are negative
 * and stable; new codes are only ever appended. */
#define FLEET_ERRNO_MAP(XX)                                                    \
  XX(EINVAL, -1, "invalid argument")                                           \
  XX(ENOMEM, -2, "out of memory")                                              \
  XX(EUNAVAILABLE, -3, "backend unavailable")                                  \
  XX(ETIMEDOUT, -4, "operation timed out")                                     \
  XX(ECANCELED, -5, "operation canceled")                                      \
  XX(ECONNREFUSED, -6, "connection refused")                                   \
  XX(ECONNLOST, -7,                                                            \
     "connection lost before the reply; the command may have "                 \
     "run")                                                                    \
  XX(EAUTH, -8, "authentication failed")                                       \
  XX(EPROTO, -9, "unexpected reply from the backend")                          \
  XX(EWRONGTYPE, -10, "key holds data of the wrong type")                      \
  XX(ENOTFOUND, -11, "not found")                                              \
  XX(EEXIST, -12, "already exists")                                            \
  XX(ESTALE, -13, "lease lost or stale fencing token")                         \
  XX(E2BIG, -14, "value too large")                                            \
  XX(EBUSY, -15, "held by another owner")                                      \
  XX(EALREADY, -16, "already done")                                            \
  XX(EBACKEND, -17, "the backend reported an error")                           \
  XX(ECLOSING, -18, "handle is closing")                                       \
  XX(ERESOLVE, -19, "host name could not be resolved")                         \
  XX(EBADURL, -20, "malformed URL")                                            \
  XX(ENOPERM, -21, "the backend's access control denied the command")          \
  XX(EREDIRECT, -22, "the key is served by another cluster node")              \
  XX(ECROSSSLOT, -23, "the keys of one command span cluster slots")            \
  XX(EOOM, -24, "the backend is out of memory")                                \
  XX(EREADONLY, -25, "the backend is a read-only replica")                     \
  XX(ESCRIPTBUSY, -26, "the backend is busy running a script")                 \
  XX(EBADDB, -27, "the backend has no such database")                          \
  XX(EREPLY2BIG, -28, "reply larger than the client's max_reply_bytes")        \
  XX(ECONFLICT, -29,                                                           \
     "the id is in use by a live node, or nodes disagree about a shared "      \
     "definition")                                                             \
  XX(ETLS, -30, "TLS handshake or certificate verification failed")            \
  XX(ESHUTDOWN, -31, "the pool was shut down and has not been reset")          \
  XX(EATTEMPTS, -32, "given up after the most attempts allowed")

typedef enum {
#define FLEET__ERRNO_ENUM(name, value, msg) FLEET_##name = (value),
  FLEET_ERRNO_MAP(FLEET__ERRNO_ENUM)
#undef FLEET__ERRNO_ENUM
} fleet_errno_t;

/* The message for an error code ("invalid argument"); never NULL. 0 gives
 * "success", unknown codes "unknown error". */
FLEET_EXTERN const char *fleet_strerror(int err);

/* The symbolic name of an error code ("FLEET_EINVAL"); never NULL. 0 gives
 * "FLEET_OK", unknown codes "FLEET_EUNKNOWN". */
FLEET_EXTERN const char *fleet_err_name(int err);

#ifdef __cplusplus
}
#endif

#include "fleet/client.h"
#include "fleet/cron.h"
#include "fleet/lock.h"
#include "fleet/log.h"
#include "fleet/metrics.h"
#include "fleet/pool.h"
#include "fleet/leader.h"
#include "fleet/queue.h"
#include "fleet/store.h"
#include "fleet/warmpool.h"
#include "fleet/worker.h"

#endif /* FLEET_H */
