/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/log.h -- the logging hook of a client (fleet_client_options_t's
 * log_cb): what fleet does in the background, told as one line of text. */
#ifndef FLEET_LOG_H
#define FLEET_LOG_H

#include "fleet/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The levels of a log message, most severe first. */
#define FLEET_LOG_LEVEL_MAP(XX)                                                \
  XX(ERROR, "error")                                                           \
  XX(WARN, "warn")                                                             \
  XX(INFO, "info")                                                             \
  XX(DEBUG, "debug")

typedef enum {
#define FLEET__LOG_LEVEL_ENUM(name, str) FLEET_LOG_##name,
  FLEET_LOG_LEVEL_MAP(FLEET__LOG_LEVEL_ENUM)
#undef FLEET__LOG_LEVEL_ENUM
} fleet_log_level_t;

/* Hears one message: `message` is one NUL-terminated line without a
 * trailing newline, valid until the callback returns; `data` is the
 * client option log_data. Passwords never appear in it: URLs are shown
 * as redis://user:***@host:port, and the client's own password is
 * replaced by *** wherever it would appear. The callback runs on the
 * loop; it must not close the client from inside. */
typedef void (*fleet_log_cb)(fleet_log_level_t level, const char *message,
                             void *data);

/* The name of a level ("warn"); never NULL. */
FLEET_EXTERN const char *fleet_log_level_name(fleet_log_level_t level);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_LOG_H */
