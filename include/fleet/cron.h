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
 * *out is NULL, FLEET_EINVAL (bad expression, an expression that never
 * fires, an unknown or malformed zone) or FLEET_ENOMEM is returned, and
 * when err is not NULL it receives a one-line message naming the field and
 * the 1-based position, or the zone and the reason (NUL-terminated,
 * truncated to err_len). The zone file is read here, once (a small
 * blocking read); $TZDIR replaces /usr/share/zoneinfo when set. */
FLEET_EXTERN int fleet_cron_parse(const char *expr, const char *tz,
                                  fleet_cron_t **out, char *err,
                                  size_t err_len);

/* The first fire time strictly after `after_ms` (Unix ms, UTC) in
 * *next_ms, a whole second. Local times skipped by a DST change do not
 * fire; a repeated local time fires once, unless the second, minute or
 * hour field starts with '*' (docs/cron.md). Returns 0, FLEET_EINVAL for a
 * NULL argument, or FLEET_ENOTFOUND when there is no fire time up to
 * 9999-12-31 (an expression that never fires, such as "0 0 30 2 *", is
 * refused by fleet_cron_parse()). */
FLEET_EXTERN int fleet_cron_next(const fleet_cron_t *cron, int64_t after_ms,
                                 int64_t *next_ms);

/* Frees a parsed expression; NULL is a no-op. */
FLEET_EXTERN void fleet_cron_free(fleet_cron_t *cron);

/* The expression and the zone name as given to fleet_cron_parse() ("UTC"
 * when tz was NULL); valid until the expression is freed. */
FLEET_EXTERN const char *fleet_cron_expr(const fleet_cron_t *cron);
FLEET_EXTERN const char *fleet_cron_zone(const fleet_cron_t *cron);

/* Writes `ms` (Unix ms, UTC) as ISO 8601 UTC into buf:
 * "2026-03-29T01:00:00Z", or "2026-03-29T01:00:00.250Z" when ms is not a
 * whole second. Returns the length, or FLEET_EINVAL when buf is too small
 * (26 bytes always suffice for years 0 to 9999) or the year is outside
 * 0..9999. */
FLEET_EXTERN int fleet_cron_format_time(int64_t ms, char *buf, size_t len);

/* Parses an ISO 8601 time with a zone designator,
 * "YYYY-MM-DDTHH:MM[:SS[.fff]]" followed by "Z" or "+HH:MM"/"-HH:MM" ('T'
 * may be a space), into Unix ms. Returns 0 or FLEET_EINVAL. */
FLEET_EXTERN int fleet_cron_parse_time(const char *text, int64_t *ms);

/* ---- The scheduler ---- */

#ifdef __cplusplus
}
#endif

#endif /* FLEET_CRON_H */
