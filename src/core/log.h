/* log.h -- the client's logging hook (fleet_client_options_t.log_cb) and
 * the redaction every message goes through. */
#ifndef FLEET_SRC_LOG_H
#define FLEET_SRC_LOG_H

#include <stddef.h>

#include "fleet/log.h"

struct fleet__client_s;

/* Longest message, NUL included; longer ones are truncated. */
#define FLEET__LOG_MAX 512

/* Formats a message and hands it, redacted, to the client's log_cb (if
 * any). Never calls back while the client is closed. */
void fleet__log(struct fleet__client_s *c, fleet_log_level_t level,
                const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Redacts the NUL-terminated `s` (in a buffer of `cap` bytes) in place:
 * the password of every "scheme://user:password@" becomes "***", and so
 * does every occurrence of `secret` (the client's password; NULL or ""
 * for none; only from 4 bytes on). Truncated to fit `cap`. */
void fleet__redact(char *s, size_t cap, const char *secret);

#endif /* FLEET_SRC_LOG_H */
