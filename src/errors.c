/* errors.c -- fleet_strerror(), fleet_err_name() and the version calls, all
 * generated from the FLEET_ERRNO_MAP table. */
#include "fleet.h"

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
