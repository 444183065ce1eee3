/* cron_expr.h -- internals of cron expressions: civil-time arithmetic and
 * time zones read from TZif files. Nothing here is public; the tests call
 * these functions directly (fleet-tests links the internal library). */
#ifndef FLEET_CRON_EXPR_H
#define FLEET_CRON_EXPR_H

#include <stddef.h>
#include <stdint.h>

#include "fleet.h"

/* ------------------------------------------------------------------------ */
/* Civil time (proleptic Gregorian, no leap seconds)                        */

/* Days since 1970-01-01 of y-m-d (m 1-12, d 1-31); valid for any year
 * that fits in an int. */
int64_t fleet__days_from_civil(int64_t y, int m, int d);

/* The inverse of fleet__days_from_civil(). */
void fleet__civil_from_days(int64_t days, int64_t *y, int *m, int *d);

/* Days in month m (1-12) of year y. */
int fleet__days_in_month(int64_t y, int m);

/* Day of the week of `days` since the epoch: 0 = Sunday ... 6 = Saturday. */
int fleet__weekday(int64_t days);

/* Floor division of a by b (b > 0). */
int64_t fleet__floor_div(int64_t a, int64_t b);

/* ------------------------------------------------------------------------ */
/* Time zones                                                               */

/* A time zone: the transitions of a TZif file (64-bit section) and the
 * POSIX TZ rule of its footer for instants after the last transition.
 * Immutable once loaded. */
typedef struct fleet__tz_s fleet__tz_t;

/* Loads the IANA zone `name` from $TZDIR (read once, here) or else
 * /usr/share/zoneinfo. "UTC" needs no file. Names with "..", a leading '/',
 * empty components or characters outside [A-Za-z0-9_+-./] are refused.
 * Returns 0, FLEET_EINVAL with a message in err, or FLEET_ENOMEM. */
int fleet__tz_load(const char *name, fleet__tz_t **out, char *err,
                   size_t err_len);

/* Parses the TZif data buf[0..len) (any version; v2+ uses the 64-bit
 * section and the footer). Refuses truncated or inconsistent data with
 * FLEET_EINVAL and a message. */
int fleet__tz_parse(const uint8_t *buf, size_t len, fleet__tz_t **out,
                    char *err, size_t err_len);

/* Parses a POSIX TZ string ("CET-1CEST,M3.5.0,M10.5.0/3") into a zone
 * without transitions. Returns 0 or FLEET_EINVAL / FLEET_ENOMEM. */
int fleet__tz_posix(const char *rule, fleet__tz_t **out, char *err,
                    size_t err_len);

void fleet__tz_free(fleet__tz_t *tz);

/* The UTC offset (seconds east of Greenwich) in effect at the UTC instant
 * `t` (seconds since the epoch). */
int32_t fleet__tz_offset(const fleet__tz_t *tz, int64_t t);

/* The first instant after `t` at which the offset changes, or INT64_MAX
 * when it never does again. Transitions that keep the offset (only the
 * abbreviation or the DST flag changes) may be reported too. */
int64_t fleet__tz_next_change(const fleet__tz_t *tz, int64_t t);

/* ------------------------------------------------------------------------ */
/* Expressions                                                              */

/* Whether the fields of `cron` (not @every) match the local civil time
 * `local` (seconds, counted like UTC). For the tests' brute-force check. */
int fleet__cron_matches(const fleet_cron_t *cron, int64_t local);

/* Whether `cron` fires at both occurrences of a repeated local time (its
 * second, minute or hour field starts with '*'). */
int fleet__cron_wildcard(const fleet_cron_t *cron);

/* The zone of `cron`. */
const fleet__tz_t *fleet__cron_tz(const fleet_cron_t *cron);

#endif /* FLEET_CRON_EXPR_H */
