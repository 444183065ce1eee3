/* fleet/cron.h -- cron: expressions and time zones (pure, no client), and
 * a scheduler that fires every occurrence of a shared definition exactly
 * once across the nodes of a namespace. docs/cron.md has the syntax, the
 * time-zone and DST rules, the guarantees and the key schema. */
#ifndef FLEET_CRON_H
#define FLEET_CRON_H

#include <stddef.h>
#include <stdint.h>

#include "fleet/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Expressions and time zones (pure; no client, no loop) ---- */

/* A parsed expression bound to its time zone: immutable once parsed, may
 * be shared by any number of schedulers; freed with fleet_cron_free(). */
typedef struct fleet_cron_s fleet_cron_t;

/* Parses `expr` (5 fields, 6 with seconds first, or an @-macro) in the
 * IANA time zone `tz` ("Europe/Berlin"; NULL or "UTC" for UTC), read from
 * the system's TZif files. On success *out is set and 0 returned. On error
 * *out is NULL, FLEET_EINVAL (bad expression or unknown zone) or
 * FLEET_ENOMEM is returned, and when err is not NULL it receives a one-line
 * message naming the field and the position (NUL-terminated, truncated to
 * err_len). */
FLEET_EXTERN int fleet_cron_parse(const char *expr, const char *tz,
                                  fleet_cron_t **out, char *err,
                                  size_t err_len);

/* The first fire time strictly after `after_ms` (Unix ms, UTC) in
 * *next_ms. Returns 0, or FLEET_ENOTFOUND when the expression never fires
 * again (e.g. "0 0 30 2 *"). */
FLEET_EXTERN int fleet_cron_next(const fleet_cron_t *cron, int64_t after_ms,
                                 int64_t *next_ms);

/* Frees a parsed expression; NULL is a no-op. */
FLEET_EXTERN void fleet_cron_free(fleet_cron_t *cron);

/* ---- The scheduler ---- */

#ifdef __cplusplus
}
#endif

#endif /* FLEET_CRON_H */
