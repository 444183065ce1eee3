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

unsigned int fleet_version(void) {
  return FLEET_VERSION_HEX;
}

const char *fleet_version_string(void) {
  return FLEET_VERSION_STRING;
}

const char *fleet_strerror(int err) {
  switch (err) {
    case 0:
      return "success";
#define XX(name, value, msg)                                                   \
  case FLEET_##name:                                                           \
    return msg;
      FLEET_ERRNO_MAP(XX)
#undef XX
  }
  return "unknown error";
}

const char *fleet_err_name(int err) {
  switch (err) {
    case 0:
      return "FLEET_OK";
#define XX(name, value, msg)                                                   \
  case FLEET_##name:                                                           \
    return "FLEET_" #name;
      FLEET_ERRNO_MAP(XX)
#undef XX
  }
  return "FLEET_EUNKNOWN";
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
