/* test_cron_expr.c -- cron expressions in UTC: the parser (valid and
 * invalid vectors with their messages), fleet_cron_next() vectors, @every,
 * the ISO 8601 helpers and `fleet-demo cron next`. Time zones and DST are
 * in test_cron_tz.c. */
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cron/cron_expr.h"
#include "test.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

static int64_t iso(const char *text) {
  int64_t ms = 0;

  if (fleet_cron_parse_time(text, &ms) != 0)
    fleet_test__fail(__FILE__, __LINE__, "bad time in the test: %s", text);
  return ms;
}

/* Checks that `expr` in `tz` fires, after `from`, at the space-separated
 * ISO times of `want` (then whatever follows). */
static void expect_next(const char *expr, const char *tz, const char *from,
                        const char *want) {
  fleet_cron_t *c;
  char err[256], got[4096] = "", one[32];
  int64_t at = iso(from);
  const char *p;
  int n = 1;

  for (p = want; *p != '\0'; p++)
    n += *p == ' ';
  if (fleet_cron_parse(expr, tz, &c, err, sizeof(err)) != 0)
    fleet_test__fail(__FILE__, __LINE__, "'%s' in %s: %s", expr,
                     tz ? tz : "UTC", err);
  while (n-- > 0) {
    ASSERT_OK(fleet_cron_next(c, at, &at));
    ASSERT_GE(fleet_cron_format_time(at, one, sizeof(one)), 0);
    if (got[0] != '\0')
      strcat(got, " ");
    strcat(got, one);
  }
  fleet_cron_free(c);
  if (strcmp(got, want) != 0)
    fleet_test__fail(__FILE__, __LINE__,
                     "'%s' in %s after %s:\n  want %s\n  got  %s", expr,
                     tz ? tz : "UTC", from, want, got);
}

/* Checks that `expr` is refused with exactly the message `want`. */
static void expect_error(const char *expr, const char *tz, const char *want) {
  fleet_cron_t *c = (fleet_cron_t *)&c;
  char err[256];

  memset(err, 'x', sizeof(err));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_parse(expr, tz, &c, err, sizeof(err)));
  ASSERT_NULL(c);
  if (strcmp(err, want) != 0)
    fleet_test__fail(__FILE__, __LINE__, "'%s':\n  want %s\n  got  %s", expr,
                     want, err);
}

/* ------------------------------------------------------------------------ */
/* The parser                                                               */

TEST_IMPL(cron_parse_valid) {
  static const char *const ok[] = {
      "* * * * *",
      "0 0 * * *",
      "  0   0\t* * *  ",
      "*/5 * * * *",
      "10-40/10 * * * *",
      "5/15 * * * *",
      "0,15,30,45 8-18 * * MON-FRI",
      "0 0 1 jan,Feb,MAR *",
      "0 0 ? * sun",
      "0 0 * * 7",
      "0 0 * * 0-7",
      "0 0 L * *",
      "0 0 L-3 * *",
      "0 0 LW * *",
      "0 0 15W * *",
      "0 0 1w,31W * *",
      "0 0 * * MON#2",
      "0 0 * * 5#5,1#1",
      "0 0 * * FRIL",
      "0 0 * * 5L",
      "*/10 * * * * *",
      "30 0 0 1 1 *",
      "@yearly",
      "@ANNUALLY",
      "@monthly",
      "@weekly",
      "@daily",
      "@midnight",
      " @hourly ",
      "@every 90s",
      "@every 1h30m",
      "@every 2d",
      "@every 1m1s",
  };
  char err[256];
  size_t i;

  for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    fleet_cron_t *c = NULL;
    int rc = fleet_cron_parse(ok[i], NULL, &c, err, sizeof(err));
    if (rc != 0)
      fleet_test__fail(__FILE__, __LINE__, "'%s' refused: %s", ok[i], err);
    ASSERT_STR_EQ(fleet_cron_expr(c), ok[i]);
    ASSERT_STR_EQ(fleet_cron_zone(c), "UTC");
    fleet_cron_free(c);
  }
  fleet_cron_free(NULL);
  return 0;
}

TEST_IMPL(cron_parse_invalid) {
  char small[8];
  fleet_cron_t *c;

  expect_error("", NULL,
               "0 fields, expected 5 (minute hour day-of-month month "
               "day-of-week) or 6 (seconds first)");
  expect_error("* * * *", NULL,
               "4 fields, expected 5 (minute hour day-of-month month "
               "day-of-week) or 6 (seconds first)");
  expect_error("0 0 0 1 1 * 2030", NULL,
               "position 13: too many fields (5 or 6 expected)");
  expect_error("60 * * * *", NULL,
               "minute field, position 1: 60 is out of range (0-59)");
  expect_error("0 24 * * *", NULL,
               "hour field, position 3: 24 is out of range (0-23)");
  expect_error("0 0 0 * *", NULL,
               "day-of-month field, position 5: 0 is out of range (1-31)");
  expect_error("0 0 32 * *", NULL,
               "day-of-month field, position 5: 32 is out of range (1-31)");
  expect_error("0 0 * 13 *", NULL,
               "month field, position 7: 13 is out of range (1-12)");
  expect_error("0 0 * * 8", NULL,
               "day-of-week field, position 9: 8 is out of range (0-7)");
  expect_error("60 0 0 * * *", NULL,
               "second field, position 1: 60 is out of range (0-59)");
  expect_error("0 0 * JANUARY *", NULL,
               "month field, position 7: unknown name 'JANUARY'");
  expect_error("0 0 * * MON-FUN", NULL,
               "day-of-week field, position 13: unknown name 'FUN'");
  expect_error("0 0 * MON *", NULL,
               "month field, position 7: unknown name 'MON'");
  expect_error("0 JAN * * *", NULL, "hour field, position 3: unexpected 'J'");
  expect_error("0 5-1 * * *", NULL,
               "hour field, position 5: range ends before it starts");
  expect_error("*/0 * * * *", NULL,
               "minute field, position 3: step out of range");
  expect_error("*/61 * * * *", NULL,
               "minute field, position 3: step out of range");
  expect_error("*/ * * * *", NULL, "minute field, position 3: / wants a step");
  expect_error("1,,2 * * * *", NULL,
               "minute field, position 3: empty list item");
  expect_error("1, * * * *", NULL, "minute field, position 3: empty list item");
  expect_error("? * * * *", NULL,
               "minute field, position 1: ? is only for "
               "day-of-month/day-of-week");
  expect_error("0 0 ?/2 * *", NULL,
               "day-of-month field, position 5: ? stands "
               "alone");
  expect_error("0 0 15WX * *", NULL,
               "day-of-month field, position 8: W ends the item (15W)");
  expect_error("0 0 1-5W * *", NULL,
               "day-of-month field, position 8: unexpected 'W'");
  expect_error("0 0 */2W * *", NULL,
               "day-of-month field, position 8: unexpected 'W'");
  expect_error("0 0 30W 2 *", NULL, "the expression never fires (no such day)");
  expect_error("0 0 32W * *", NULL,
               "day-of-month field, position 5: 32 is out of range (1-31)");
  expect_error("0 0 L-31 * *", NULL,
               "day-of-month field, position 5: L-n wants n from 0 to 30");
  expect_error("0 0 LX * *", NULL,
               "day-of-month field, position 5: L may only be L, L-n or LW");
  expect_error("0 0 * * MON#6", NULL,
               "day-of-week field, position 12: # wants a week from 1 to 5 "
               "(MON#2)");
  expect_error("0 0 * * MON#", NULL,
               "day-of-week field, position 12: # wants a week from 1 to 5 "
               "(MON#2)");
  expect_error("0 0 * * 5L2", NULL,
               "day-of-week field, position 10: L after a weekday ends the "
               "item (5L)");
  expect_error("0 0 * * L", NULL,
               "day-of-week field, position 9: L alone is ambiguous; write 5L "
               "(the last Friday)");
  expect_error("0 0 * * 1-", NULL,
               "day-of-week field, position 11: a value is missing");
  expect_error("0 0 30 2 *", NULL, "the expression never fires (no such day)");
  expect_error("0 0 31 4,6,9,11 *", NULL,
               "the expression never fires (no such day)");
  expect_error("@fortnightly", NULL,
               "position 1: unknown macro '@fortnightly'");
  expect_error("@daily 5", NULL, "position 8: @daily takes nothing after it");
  expect_error("@every", NULL, "@every, position 7: a duration is missing");
  expect_error("@every 0s", NULL,
               "@every, position 7: the period must be at least 1s");
  expect_error("@every 5", NULL,
               "@every, position 9: expected a unit (d, h, m, s)");
  expect_error("@every 1.5h", NULL,
               "@every, position 9: expected a unit (d, h, m, s)");
  expect_error("@every 5m x", NULL, "@every, position 11: unexpected 'x'");
  expect_error("@every 40000d", NULL,
               "@every, position 8: longer than 100 years");
  expect_error("0 0 * * *", "", "time zone '': not a zone name");
  expect_error("0 0 * * *", "/etc/passwd",
               "time zone '/etc/passwd': not a zone name");
  expect_error("0 0 * * *", "Europe/../../etc/passwd",
               "time zone 'Europe/../../etc/passwd': not a zone name");
  expect_error("0 0 * * *", "Europe//Berlin",
               "time zone 'Europe//Berlin': not a zone name");
  expect_error("0 0 * * *", "Europe/Berlin;rm",
               "time zone 'Europe/Berlin;rm': not a zone name");

  /* A short buffer gets a truncated, terminated message; NULL gets none. */
  ASSERT_ERR(FLEET_EINVAL,
             fleet_cron_parse("61 * * * *", NULL, &c, small, sizeof(small)));
  ASSERT_STR_EQ(small, "minute ");
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_parse("61 * * * *", NULL, &c, NULL, 0));
  ASSERT_NULL(c);
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_parse(NULL, NULL, &c, NULL, 0));
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Next                                                                     */

TEST_IMPL(cron_next_vectors) {
  /* Strictly after: a fire time equal to `from` is not returned. */
  expect_next("*/15 * * * *", NULL, "2026-03-29T00:45:00Z",
              "2026-03-29T01:00:00Z 2026-03-29T01:15:00Z");
  expect_next("*/15 * * * *", NULL, "2026-03-29T00:44:59.999Z",
              "2026-03-29T00:45:00Z");
  expect_next("10-40/10 9 * * *", NULL, "2026-01-01T09:20:00Z",
              "2026-01-01T09:30:00Z 2026-01-01T09:40:00Z "
              "2026-01-02T09:10:00Z");
  expect_next("5/20 * * * *", NULL, "2026-01-01T00:00:00Z",
              "2026-01-01T00:05:00Z 2026-01-01T00:25:00Z "
              "2026-01-01T00:45:00Z 2026-01-01T01:05:00Z");
  /* Year rollover. */
  expect_next("0 0 1 1 *", NULL, "2026-12-31T23:59:59Z",
              "2027-01-01T00:00:00Z 2028-01-01T00:00:00Z");
  expect_next("59 23 31 12 *", NULL, "2026-12-31T23:59:00Z",
              "2027-12-31T23:59:00Z");
  /* February 29: leap years only, 2100 is not one, 2000 was. */
  expect_next("0 12 29 2 *", NULL, "2025-01-01T00:00:00Z",
              "2028-02-29T12:00:00Z 2032-02-29T12:00:00Z");
  expect_next("0 0 29 2 *", NULL, "2096-03-01T00:00:00Z",
              "2104-02-29T00:00:00Z");
  expect_next("0 0 29 2 *", NULL, "1999-01-01T00:00:00Z",
              "2000-02-29T00:00:00Z");
  /* L: the last day, in leap and common years; L-n; LW. */
  expect_next("0 0 L * *", NULL, "2028-01-31T00:00:00Z",
              "2028-02-29T00:00:00Z 2028-03-31T00:00:00Z "
              "2028-04-30T00:00:00Z");
  expect_next("0 0 L 2 *", NULL, "2026-01-01T00:00:00Z",
              "2026-02-28T00:00:00Z 2027-02-28T00:00:00Z "
              "2028-02-29T00:00:00Z");
  expect_next("0 0 L-2 * *", NULL, "2026-01-01T00:00:00Z",
              "2026-01-29T00:00:00Z 2026-02-26T00:00:00Z");
  /* The last weekday: 2026-05-31 is a Sunday, 2026-01-31 a Saturday. */
  expect_next("0 0 LW * *", NULL, "2026-01-01T00:00:00Z",
              "2026-01-30T00:00:00Z 2026-02-27T00:00:00Z "
              "2026-03-31T00:00:00Z 2026-04-30T00:00:00Z "
              "2026-05-29T00:00:00Z");
  /* nW, the weekday nearest to day n, never in another month (hand
   * computed; croniter 1.3.5 refuses W). 2026-08-01 is a Saturday: 1W is
   * Monday the 3rd, not Friday July 31. */
  expect_next("0 0 1W * *", NULL, "2026-07-15T00:00:00Z",
              "2026-08-03T00:00:00Z 2026-09-01T00:00:00Z "
              "2026-10-01T00:00:00Z 2026-11-02T00:00:00Z");
  /* 2026-05-31 is a Sunday: 31W is Friday the 29th, not Monday June 1;
   * 2026-10-31 a Saturday: Friday the 30th; months of 30 days have no
   * 31W. */
  expect_next("0 0 31W * *", NULL, "2026-04-01T00:00:00Z",
              "2026-05-29T00:00:00Z 2026-07-31T00:00:00Z "
              "2026-08-31T00:00:00Z 2026-10-30T00:00:00Z "
              "2026-12-31T00:00:00Z");
  /* 2026-08-15 is a Saturday (Friday the 14th), 2026-11-15 a Sunday
   * (Monday the 16th). */
  expect_next("0 0 15W * *", NULL, "2026-07-20T00:00:00Z",
              "2026-08-14T00:00:00Z 2026-09-15T00:00:00Z "
              "2026-10-15T00:00:00Z 2026-11-16T00:00:00Z");
  expect_next("0 0 1W,15 * *", NULL, "2026-07-31T00:00:00Z",
              "2026-08-03T00:00:00Z 2026-08-15T00:00:00Z "
              "2026-09-01T00:00:00Z 2026-09-15T00:00:00Z");
  /* 2026-08-30 is a Sunday, not the month's last day: Monday the 31st. */
  expect_next("0 0 30W 8 *", NULL, "2026-01-01T00:00:00Z",
              "2026-08-31T00:00:00Z 2027-08-30T00:00:00Z");
  /* Vixie: nW with a restricted day-of-week fires on either. */
  expect_next("0 0 15W * SUN", NULL, "2026-08-08T00:00:00Z",
              "2026-08-09T00:00:00Z 2026-08-14T00:00:00Z "
              "2026-08-16T00:00:00Z");
  /* #: the second Monday; the fifth Friday skips months without one. */
  expect_next("0 9 * * MON#2", NULL, "2026-01-01T00:00:00Z",
              "2026-01-12T09:00:00Z 2026-02-09T09:00:00Z "
              "2026-03-09T09:00:00Z");
  expect_next("0 0 * * 5#5", NULL, "2026-01-01T00:00:00Z",
              "2026-01-30T00:00:00Z 2026-05-29T00:00:00Z "
              "2026-07-31T00:00:00Z");
  /* The last Friday of the month. */
  expect_next("0 0 * * FRIL", NULL, "2026-01-01T00:00:00Z",
              "2026-01-30T00:00:00Z 2026-02-27T00:00:00Z");
  expect_next("0 0 * * 5L", NULL, "2026-01-01T00:00:00Z",
              "2026-01-30T00:00:00Z 2026-02-27T00:00:00Z "
              "2026-03-27T00:00:00Z");
  /* 7 and 0 are Sunday; names are case-insensitive. */
  expect_next("0 0 * * 7", NULL, "2026-01-01T00:00:00Z",
              "2026-01-04T00:00:00Z 2026-01-11T00:00:00Z");
  expect_next("0 0 * * sun", NULL, "2026-01-01T00:00:00Z",
              "2026-01-04T00:00:00Z 2026-01-11T00:00:00Z");
  expect_next("0 0 1 jAn,jUL *", NULL, "2026-01-01T00:00:00Z",
              "2026-07-01T00:00:00Z 2027-01-01T00:00:00Z");
  expect_next("0 0 * * FRI-SUN", NULL, "2026-01-01T00:00:00Z",
              "2026-01-02T00:00:00Z 2026-01-03T00:00:00Z "
              "2026-01-04T00:00:00Z 2026-01-09T00:00:00Z");
  expect_next("0 0 * * 5-7", NULL, "2026-01-01T00:00:00Z",
              "2026-01-02T00:00:00Z 2026-01-03T00:00:00Z "
              "2026-01-04T00:00:00Z 2026-01-09T00:00:00Z");
  /* Vixie: day-of-month and day-of-week both restricted: either matches
   * (the 13th, and every Friday). */
  expect_next("0 0 13 * FRI", NULL, "2026-02-01T00:00:00Z",
              "2026-02-06T00:00:00Z 2026-02-13T00:00:00Z "
              "2026-02-20T00:00:00Z 2026-02-27T00:00:00Z "
              "2026-03-06T00:00:00Z 2026-03-13T00:00:00Z");
  /* One of them '*' or '?': the other alone decides. */
  expect_next("0 0 ? * FRI", NULL, "2026-02-01T00:00:00Z",
              "2026-02-06T00:00:00Z 2026-02-13T00:00:00Z");
  expect_next("0 0 13 * ?", NULL, "2026-02-01T00:00:00Z",
              "2026-02-13T00:00:00Z 2026-03-13T00:00:00Z");
  /* A step that covers every day is no restriction (croniter's reading). */
  expect_next("0 0 */1 * FRI", NULL, "2026-02-01T00:00:00Z",
              "2026-02-06T00:00:00Z 2026-02-13T00:00:00Z");
  /* A step that does not is one: the 1st, 3rd, ... or a Friday. */
  expect_next("0 0 */2 * FRI", NULL, "2026-02-01T00:00:00Z",
              "2026-02-03T00:00:00Z 2026-02-05T00:00:00Z "
              "2026-02-06T00:00:00Z 2026-02-07T00:00:00Z");
  /* 6 fields: seconds first. */
  expect_next("*/20 * * * * *", NULL, "2026-01-01T00:00:00Z",
              "2026-01-01T00:00:20Z 2026-01-01T00:00:40Z "
              "2026-01-01T00:01:00Z");
  expect_next("30 0 0 1 1 *", NULL, "2026-01-01T00:00:30Z",
              "2027-01-01T00:00:30Z");
  /* The macros. */
  expect_next("@yearly", NULL, "2026-06-01T00:00:00Z", "2027-01-01T00:00:00Z");
  expect_next("@annually", NULL, "2026-06-01T00:00:00Z",
              "2027-01-01T00:00:00Z");
  expect_next("@monthly", NULL, "2026-06-15T00:00:00Z", "2026-07-01T00:00:00Z");
  expect_next("@weekly", NULL, "2026-06-15T00:00:00Z", "2026-06-21T00:00:00Z");
  expect_next("@daily", NULL, "2026-06-15T00:00:00Z", "2026-06-16T00:00:00Z");
  expect_next("@midnight", NULL, "2026-06-15T12:00:00Z",
              "2026-06-16T00:00:00Z");
  expect_next("@hourly", NULL, "2026-06-15T12:00:00Z", "2026-06-15T13:00:00Z");
  /* Before the epoch. */
  expect_next("0 0 1 * *", NULL, "1969-12-15T00:00:00Z",
              "1970-01-01T00:00:00Z 1970-02-01T00:00:00Z");
  return 0;
}

TEST_IMPL(cron_next_end) {
  fleet_cron_t *c;
  int64_t at = 0;

  /* After 9999 nothing fires. */
  ASSERT_OK(fleet_cron_parse("0 0 1 1 *", NULL, &c, NULL, 0));
  ASSERT_OK(fleet_cron_next(c, iso("9998-06-01T00:00:00Z"), &at));
  ASSERT_EQ(at, iso("9999-01-01T00:00:00Z"));
  ASSERT_ERR(FLEET_ENOTFOUND, fleet_cron_next(c, at, &at));
  /* Far in the past: the search starts at year 0, at once. */
  ASSERT_OK(fleet_cron_next(c, INT64_MIN, &at));
  ASSERT_EQ(at, iso("0000-01-01T00:00:00Z"));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_next(NULL, 0, &at));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_next(c, 0, NULL));
  fleet_cron_free(c);
  return 0;
}

TEST_IMPL(cron_every) {
  fleet_cron_t *c, *d;
  int64_t a = 0, b = 0, k;

  expect_next("@every 90s", NULL, "2026-01-01T00:00:10Z",
              "2026-01-01T00:01:30Z 2026-01-01T00:03:00Z "
              "2026-01-01T00:04:30Z");
  expect_next("@every 1h30m", NULL, "2026-01-01T00:00:00Z",
              "2026-01-01T01:30:00Z 2026-01-01T03:00:00Z");
  expect_next("@every 7m", NULL, "1970-01-01T00:00:00Z",
              "1970-01-01T00:07:00Z 1970-01-01T00:14:00Z");
  /* Before the epoch the grid continues. */
  expect_next("@every 7m", NULL, "1969-12-31T23:50:00Z",
              "1969-12-31T23:53:00Z 1970-01-01T00:00:00Z");
  /* Aligned to the epoch whatever the start: two nodes that start at
   * different instants agree on every occurrence, and the zone plays no
   * part. */
  ASSERT_OK(fleet_cron_parse("@every 1h1m1s", NULL, &c, NULL, 0));
  ASSERT_OK(
      fleet_cron_parse("@every 1h1m1s", "Australia/Lord_Howe", &d, NULL, 0));
  ASSERT_OK(fleet_cron_next(c, 1234567, &a));
  ASSERT_OK(fleet_cron_next(d, 2345678, &b));
  for (k = 0; k < 1000; k++) {
    ASSERT_EQ(a % 3661000, 0);
    ASSERT_EQ(a, b);
    ASSERT_OK(fleet_cron_next(c, a, &a));
    ASSERT_OK(fleet_cron_next(d, b + 999, &b));
  }
  fleet_cron_free(c);
  fleet_cron_free(d);
  return 0;
}

/* Brute force: between two fire times no second matches the fields, and
 * each fire time does (fleet__cron_matches() reads the fields directly,
 * without the search of fleet_cron_next()). */
TEST_IMPL(cron_next_brute) {
  static const char *const exprs[] = {
      "*/7 3-5 * * *",  "0 0 L * MON",   "*/13 * * 2 * *", "0 0,12 */3 * 1#2",
      "0 0 * * 5L",     "17 */5 29 * *", "0 0 LW * 6",     "0 0 L-1 * 1L",
      "0 0 1W,31W * *", "0 0 15W * MON",
  };
  size_t i;

  for (i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
    fleet_cron_t *c;
    int64_t from = iso("2028-01-27T22:00:00Z") / 1000, at, t;
    const char *p;
    int k, fields = 1;
    for (p = exprs[i]; *p != '\0'; p++)
      fields += *p == ' ';
    ASSERT_OK(fleet_cron_parse(exprs[i], NULL, &c, NULL, 0));
    for (k = 0; k < 40; k++) {
      ASSERT_OK(fleet_cron_next(c, from * 1000, &at));
      at /= 1000;
      ASSERT_GT(at, from);
      ASSERT(fleet__cron_matches(c, at));
      /* Five fields fire at second 0 only: whole minutes suffice. */
      t = fields == 6 ? from + 1 : (fleet__floor_div(from, 60) + 1) * 60;
      for (; t < at; t += fields == 6 ? 1 : 60)
        if (fleet__cron_matches(c, t))
          fleet_test__fail(__FILE__, __LINE__, "'%s' skipped %" PRId64,
                           exprs[i], t);
      from = at;
    }
    fleet_cron_free(c);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* ISO 8601                                                                 */

TEST_IMPL(cron_iso) {
  char buf[32];
  int64_t ms;

  ASSERT_EQ(fleet_cron_format_time(0, buf, sizeof(buf)), 20);
  ASSERT_STR_EQ(buf, "1970-01-01T00:00:00Z");
  ASSERT_EQ(fleet_cron_format_time(-1, buf, sizeof(buf)), 24);
  ASSERT_STR_EQ(buf, "1969-12-31T23:59:59.999Z");
  ASSERT_GT(
      fleet_cron_format_time(iso("2026-03-29T01:00:00Z"), buf, sizeof(buf)), 0);
  ASSERT_STR_EQ(buf, "2026-03-29T01:00:00Z");
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_format_time(0, buf, 20));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_format_time(INT64_C(253402300800000), buf,
                                                  sizeof(buf)));

  ASSERT_OK(fleet_cron_parse_time("2026-03-29T01:00:00Z", &ms));
  ASSERT_EQ(ms, INT64_C(1774746000000));
  ASSERT_OK(fleet_cron_parse_time("2026-03-29 03:00:00+02:00", &ms));
  ASSERT_EQ(ms, INT64_C(1774746000000));
  ASSERT_OK(fleet_cron_parse_time("2026-03-28T20:00-0500", &ms));
  ASSERT_EQ(ms, INT64_C(1774746000000));
  ASSERT_OK(fleet_cron_parse_time("2026-03-29T01:00:00.25z", &ms));
  ASSERT_EQ(ms, INT64_C(1774746000250));
  ASSERT_OK(fleet_cron_parse_time("2024-02-29T00:00:00Z", &ms));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_parse_time("2026-03-29T01:00:00", &ms));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_parse_time("2025-02-29T00:00:00Z", &ms));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_parse_time("2026-13-01T00:00:00Z", &ms));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_parse_time("2026-01-01T24:00:00Z", &ms));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_parse_time("2026-01-01T00:00:00.Z", &ms));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_parse_time("2026-01-01T00:00:00Zx", &ms));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_parse_time("26-01-01T00:00:00Z", &ms));
  ASSERT_ERR(FLEET_EINVAL, fleet_cron_parse_time(NULL, &ms));
  return 0;
}

/* ------------------------------------------------------------------------ */
/* fleet-demo cron next                                                     */

#ifdef FLEET_DEMO_PATH
/* Runs fleet-demo with argv; its stdout and stderr go to `out` and `err`.
 * Returns its exit code. */
static int demo(char *const argv[], char *out, char *err, size_t cap) {
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char paths[2][512];
  char *bufs[2] = {out, err};
  int status, k;
  pid_t pid;

  for (k = 0; k < 2; k++)
    snprintf(paths[k], sizeof(paths[k]), "%s/cron-demo-%d.%d", tmp,
             (int)getpid(), k);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int o = open(paths[0], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(paths[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
      _exit(127);
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  for (k = 0; k < 2; k++) {
    int fd = open(paths[k], O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, bufs[k], cap - 1) : -1;
    bufs[k][n > 0 ? n : 0] = '\0';
    if (fd >= 0)
      close(fd);
    unlink(paths[k]);
  }
  ASSERT(WIFEXITED(status));
  return WEXITSTATUS(status);
}
#endif

TEST_IMPL(cron_demo_next) {
#ifndef FLEET_DEMO_PATH
  fleet_test_skip("examples are not built");
#else
  char out[4096], err[4096];
  char *next[] = {"fleet-demo",       "cron",       "next",
                  "--expr",           "30 1 * * *", "--tz",
                  "America/New_York", "--from",     "2026-10-31T12:00:00Z",
                  "--count",          "3",          NULL};
  char *bad[] = {"fleet-demo", "cron", "next", "--expr", "0 0 32 * *", NULL};
  char *bad_tz[] = {"fleet-demo",       "cron",   "next",
                    "--expr",           "@daily", "--tz",
                    "Nowhere/Atlantis", NULL};
  char *bad_from[] = {"fleet-demo", "cron",   "next",      "--expr",
                      "@daily",     "--from", "yesterday", NULL};
  char *now[] = {"fleet-demo", "cron", "next", "--expr", "@every 1s", NULL};
  char *sched[] = {"fleet-demo", "cron", "list", NULL};
  char *none[] = {"fleet-demo", "cron", NULL};
  int64_t ms;

  /* 1:30 in New York on the day clocks go back fires once (EDT). */
  ASSERT_EQ(demo(next, out, err, sizeof(out)), 0);
  ASSERT_STR_EQ(out, "2026-11-01T05:30:00Z\n2026-11-02T06:30:00Z\n"
                     "2026-11-03T06:30:00Z\n");
  ASSERT_STR_EQ(err, "");

  ASSERT_EQ(demo(bad, out, err, sizeof(out)), 2);
  ASSERT_STR_EQ(out, "");
  ASSERT_STR_EQ(err, "fleet-demo: cron next: day-of-month field, position 5: "
                     "32 is out of range (1-31)\n");
  ASSERT_EQ(demo(bad_tz, out, err, sizeof(out)), 2);
  ASSERT(strstr(err, "time zone 'Nowhere/Atlantis': unknown") != NULL);
  ASSERT_EQ(demo(bad_from, out, err, sizeof(out)), 2);
  ASSERT(strstr(err, "--from wants an ISO 8601 time") != NULL);

  /* Without --from: after now, one line. */
  ASSERT_EQ(demo(now, out, err, sizeof(out)), 0);
  ASSERT_EQ(strlen(out), 21);
  out[20] = '\0';
  ASSERT_OK(fleet_cron_parse_time(out, &ms));
  ASSERT_EQ(ms % 1000, 0);

  ASSERT_EQ(demo(none, out, err, sizeof(out)), 2);
  ASSERT_STR_EQ(err, "fleet-demo: cron: a command is required (next, ...)\n");

  /* The scheduler's verbs go to its own file (demo_cron_sched.c): an
   * empty registry lists as an empty JSON array. */
  ASSERT_EQ(demo(sched, out, err, sizeof(out)), 0);
  ASSERT_STR_EQ(out, "[]\n");
  return 0;
#endif
}
