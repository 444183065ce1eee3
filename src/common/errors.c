/* errors.c -- fleet_strerror(), fleet_err_name() and the version calls, all
 * generated from the FLEET_ERRNO_MAP table, and the rule for which errors
 * may pass by themselves.
 *
 * Transient errors. A background loop (lease renewal, a worker's claim
 * loop, a leader's term) retries after an error that may pass without
 * anyone acting, and reports and stops on one that will not. Transient:
 *
 *   ECONNLOST, ECONNREFUSED, ERESOLVE, ETIMEDOUT, EUNAVAILABLE: the server
 *     or the path to it is down, restarting, loading or failing over.
 *   EREADONLY: the server we reach was demoted to a replica; a failover is
 *     in progress and the primary moves within seconds.
 *   ESCRIPTBUSY: a script runs past busy-reply-threshold; it ends or an
 *     operator kills it.
 *   EREDIRECT: the slot is migrating (ASK) or the slot map changed (MOVED);
 *     the request succeeds once routed to the new owner.
 *   EOOM: maxmemory with noeviction; memory comes back as keys expire and
 *     consumers drain queues. Giving up (dropping a lease, stopping a
 *     worker) would make things worse, and the error callback still tells
 *     the operator.
 *
 * Everything else needs a change of code, data or configuration first:
 * EAUTH, ENOPERM, EBADDB (the URL or the ACL), EPROTO and EREPLY2BIG (what
 * the server sends), ECROSSSLOT and EWRONGTYPE (the keys), and the errors
 * of the primitives themselves. */
#include "fleet.h"
#include "errors.h"
#include "util.h"

unsigned int fleet_version(void) {
  return FLEET_VERSION_HEX;
}

const char *fleet_version_string(void) {
  return FLEET_VERSION_STRING;
}

/* Every error's code, name and message, success first. */
static const struct {
  int code;
  const char *name;
  const char *msg;
} errors[] = {{0, "FLEET_OK", "success"},
#define XX(name, value, msg) {FLEET_##name, "FLEET_" #name, msg},
              FLEET_ERRNO_MAP(XX)
#undef XX
};

/* The entry of `err` in the table, or -1 when it is no fleet error. */
static int error_index(int err) {
  for (size_t i = 0; i < FLEET__ARRAY_SIZE(errors); i++)
    if (errors[i].code == err)
      return (int)i;
  return -1;
}

const char *fleet_strerror(int err) {
  int i = error_index(err);

  return i >= 0 ? errors[i].msg : "unknown error";
}

const char *fleet_err_name(int err) {
  int i = error_index(err);

  return i >= 0 ? errors[i].name : "FLEET_EUNKNOWN";
}

int fleet__status_transient(int status) {
  switch (status) {
    case FLEET_ECONNLOST:
    case FLEET_ECONNREFUSED:
    case FLEET_ERESOLVE:
    case FLEET_ETIMEDOUT:
    case FLEET_EUNAVAILABLE:
    case FLEET_EREADONLY:
    case FLEET_ESCRIPTBUSY:
    case FLEET_EREDIRECT:
    case FLEET_EOOM:
      return 1;
    default:
      return 0;
  }
}
