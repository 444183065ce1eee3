/* cron_expr.c -- cron expressions: the parser and fleet_cron_next().
 *
 * An expression is kept as bit sets, one per field, plus the day-of-month
 * and day-of-week specials (L, L-n, LW, nW, n#k, nL). The next fire time is
 * found in local civil time, one span of constant UTC offset at a time:
 * inside a span local time runs at the rate of UTC, so the first matching
 * local time in the span is the answer. Between spans the offset jumps:
 *
 *   - forward (a gap): the local times in the gap belong to no span and
 *     are never matched, so they are skipped;
 *   - backward (a fold): the local times of the fold occur twice. A
 *     "wildcard" expression (its second, minute or hour field starts with
 *     '*', as Vixie cron defines it) fires at both occurrences, since it
 *     describes a rate; any other expression fires at the first occurrence
 *     only, since it describes a time of day.
 *
 * docs/cron.md states these rules for users. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cron_expr.h"
#include "fleet.h"
#include "core/internal.h"

/* The last instant fleet_cron_next() returns: 9999-12-31T23:59:59Z. */
#define CRON_MAX_SECONDS INT64_C(253402300799)
/* Searches start no earlier than 0000-01-01T00:00:00Z. */
#define CRON_MIN_SECONDS INT64_C(-62167219200)
/* The longest @every period: 100 years of 365 days. */
#define CRON_EVERY_MAX (INT64_C(100) * 365 * 86400)

struct fleet_cron_s {
  uint64_t sec, min;  /* bits 0-59 */
  uint32_t hour;      /* bits 0-23 */
  uint32_t dom;       /* bits 1-31 */
  uint32_t dom_last;  /* bit n: the n-th day before the last (L-n; L = 0) */
  int dom_lw;         /* LW: the last weekday (Mon-Fri) of the month */
  uint32_t dom_w;     /* bit n: nW, the weekday nearest to day n */
  uint16_t month;     /* bits 1-12 */
  uint8_t dow;        /* bits 0-6, 0 = Sunday */
  uint8_t dow_nth[7]; /* per weekday, bit k-1: the k-th one of the month */
  uint8_t dow_lastw;  /* bit w: the last weekday w of the month (wL) */
  int dom_restricted, dow_restricted; /* Vixie: both restricted = OR */
  int wildcard;    /* fires at both occurrences of a repeated time */
  int64_t every_s; /* @every: the period in seconds, else 0 */
  fleet__tz_t *tz;
  char *expr;
  char *zone;
};

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

typedef struct {
  char *buf;
  size_t len;
} cron_err_t;

static int cron_fail(cron_err_t *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int cron_fail(cron_err_t *e, const char *fmt, ...) {
  va_list ap;

  if (e->buf != NULL && e->len > 0) {
    va_start(ap, fmt);
    vsnprintf(e->buf, e->len, fmt, ap);
    va_end(ap);
  }
  return FLEET_EINVAL;
}

/* ------------------------------------------------------------------------ */
/* Fields                                                                   */

enum { CRON_SEC, CRON_MIN, CRON_HOUR, CRON_DOM, CRON_MON, CRON_DOW };

typedef struct {
  const char *name;
  int min, max;
} cron_field_def_t;

static const cron_field_def_t cron_fields[] = {
    {"second", 0, 59},       {"minute", 0, 59}, {"hour", 0, 23},
    {"day-of-month", 1, 31}, {"month", 1, 12},  {"day-of-week", 0, 7},
};

static const char *const cron_month_names[] = {"JAN", "FEB", "MAR", "APR",
                                               "MAY", "JUN", "JUL", "AUG",
                                               "SEP", "OCT", "NOV", "DEC"};
static const char *const cron_day_names[] = {"SUN", "MON", "TUE", "WED",
                                             "THU", "FRI", "SAT"};

/* The parser's view of one field: its text, where it starts in the whole
 * expression (0-based), and the result. */
typedef struct {
  int kind;
  const char *text;
  size_t len;
  size_t pos;
  uint64_t bits;
  cron_err_t *err;
  fleet_cron_t *cron;
} cron_field_t;

static int cron_is_digit(char c) {
  return c >= '0' && c <= '9';
}

static int cron_is_alpha(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static char cron_upper(char c) {
  return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

static int cron_field_fail(cron_field_t *f, size_t at, const char *what) {
  return cron_fail(f->err, "%s field, position %zu: %s",
                   cron_fields[f->kind].name, f->pos + at + 1, what);
}

/* Reads a number or a name at f->text[*i] into *v, range-checked. */
static int cron_value(cron_field_t *f, size_t *i, int *v) {
  const cron_field_def_t *def = &cron_fields[f->kind];
  size_t start = *i;
  char msg[96];

  if (*i < f->len && cron_is_digit(f->text[*i])) {
    long x = 0;
    while (*i < f->len && cron_is_digit(f->text[*i])) {
      if (x < 1000)
        x = x * 10 + (f->text[*i] - '0');
      (*i)++;
    }
    if (x < def->min || x > def->max) {
      snprintf(msg, sizeof(msg), "%.*s is out of range (%d-%d)",
               (int)(*i - start), f->text + start, def->min, def->max);
      return cron_field_fail(f, start, msg);
    }
    *v = (int)x;
    return 0;
  }
  if (*i < f->len && cron_is_alpha(f->text[*i]) &&
      (f->kind == CRON_MON || f->kind == CRON_DOW)) {
    const char *const *names =
        f->kind == CRON_MON ? cron_month_names : cron_day_names;
    int n = f->kind == CRON_MON ? 12 : 7, k;
    while (*i < f->len && cron_is_alpha(f->text[*i]))
      (*i)++;
    /* "FRIL": the last Friday, a name then L. */
    if (f->kind == CRON_DOW && *i - start == 4 &&
        cron_upper(f->text[start + 3]) == 'L')
      (*i)--;
    if (*i - start == 3) {
      for (k = 0; k < n; k++) {
        if (cron_upper(f->text[start]) == names[k][0] &&
            cron_upper(f->text[start + 1]) == names[k][1] &&
            cron_upper(f->text[start + 2]) == names[k][2]) {
          *v = f->kind == CRON_MON ? k + 1 : k;
          return 0;
        }
      }
    }
    snprintf(msg, sizeof(msg), "unknown name '%.*s'", (int)(*i - start),
             f->text + start);
    return cron_field_fail(f, start, msg);
  }
  if (*i >= f->len)
    return cron_field_fail(f, *i, "a value is missing");
  snprintf(msg, sizeof(msg), "unexpected '%c'", f->text[*i]);
  return cron_field_fail(f, *i, msg);
}

/* Parses the day-of-month specials L, L-n and LW at f->text[*i]. */
static int cron_dom_last(cron_field_t *f, size_t *i, size_t end) {
  size_t start = *i;

  (*i)++;
  if (*i == end) {
    f->cron->dom_last |= 1u;
    return 0;
  }
  if (f->text[*i] == 'W' || f->text[*i] == 'w') {
    (*i)++;
    if (*i == end) {
      f->cron->dom_lw = 1;
      return 0;
    }
  } else if (f->text[*i] == '-' && *i + 1 < end &&
             cron_is_digit(f->text[*i + 1])) {
    int n = 0;
    (*i)++;
    while (*i < end && cron_is_digit(f->text[*i]) && n < 100)
      n = n * 10 + (f->text[(*i)++] - '0');
    if (*i == end) {
      if (n > 30)
        return cron_field_fail(f, start, "L-n wants n from 0 to 30");
      f->cron->dom_last |= 1u << n;
      return 0;
    }
  }
  return cron_field_fail(f, start, "L may only be L, L-n or LW");
}

/* Parses the day-of-week specials n#k and nL after the value v. */
static int cron_dow_special(cron_field_t *f, size_t *i, size_t end, int v) {
  size_t at = *i;
  int w = v % 7;

  if (f->text[*i] == '#') {
    (*i)++;
    if (*i + 1 != end || f->text[*i] < '1' || f->text[*i] > '5')
      return cron_field_fail(f, at, "# wants a week from 1 to 5 (MON#2)");
    f->cron->dow_nth[w] |= (uint8_t)(1u << (f->text[*i] - '1'));
    (*i)++;
    return 0;
  }
  (*i)++;
  if (*i != end)
    return cron_field_fail(f, at, "L after a weekday ends the item (5L)");
  f->cron->dow_lastw |= (uint8_t)(1u << w);
  return 0;
}

/* Parses one list item f->text[start..end). */
static int cron_item(cron_field_t *f, size_t start, size_t end) {
  const cron_field_def_t *def = &cron_fields[f->kind];
  size_t i = start;
  int lo, hi, step = 1, star = 0, range = 0, rc, v;

  if (start == end)
    return cron_field_fail(f, start, "empty list item");
  if (f->kind == CRON_DOM && (f->text[i] == 'L' || f->text[i] == 'l'))
    return cron_dom_last(f, &i, end);
  if (f->kind == CRON_DOW && end - start == 1 &&
      (f->text[i] == 'L' || f->text[i] == 'l'))
    return cron_field_fail(f, i,
                           "L alone is ambiguous; write 5L (the last "
                           "Friday)");
  if (f->text[i] == '*' || f->text[i] == '?') {
    if (f->text[i] == '?' && f->kind != CRON_DOM && f->kind != CRON_DOW)
      return cron_field_fail(f, i, "? is only for day-of-month/day-of-week");
    if (f->text[i] == '?' && end - start != 1)
      return cron_field_fail(f, i, "? stands alone");
    star = 1;
    lo = def->min;
    hi = def->max;
    i++;
  } else {
    if ((rc = cron_value(f, &i, &lo)) != 0)
      return rc;
    hi = lo;
    if (f->kind == CRON_DOW && i < end &&
        (f->text[i] == '#' || f->text[i] == 'L' || f->text[i] == 'l'))
      return cron_dow_special(f, &i, end, lo);
    if (f->kind == CRON_DOM && i < end &&
        (f->text[i] == 'W' || f->text[i] == 'w')) {
      /* nW: the weekday nearest to day n; W ends the item. */
      if (i + 1 != end)
        return cron_field_fail(f, i + 1, "W ends the item (15W)");
      f->cron->dom_w |= 1u << lo;
      return 0;
    }
    if (i < end && f->text[i] == '-') {
      size_t at = ++i;
      range = 1;
      if ((rc = cron_value(f, &i, &hi)) != 0)
        return rc;
      /* SAT-SUN: a weekday range may end on Sunday written as 0. */
      if (f->kind == CRON_DOW && hi == 0 && lo > 0)
        hi = 7;
      if (hi < lo)
        return cron_field_fail(f, at, "range ends before it starts");
    }
  }
  if (i < end && f->text[i] == '/') {
    size_t at = ++i;
    long s = 0;
    if (i == end || !cron_is_digit(f->text[i]))
      return cron_field_fail(f, at, "/ wants a step");
    while (i < end && cron_is_digit(f->text[i])) {
      if (s < 1000)
        s = s * 10 + (f->text[i] - '0');
      i++;
    }
    if (s < 1 || s > def->max - def->min + 1)
      return cron_field_fail(f, at, "step out of range");
    step = (int)s;
    if (!star && !range)
      hi = def->max; /* "a/n" = "a-max/n" */
  }
  if (i != end) {
    char msg[64];
    snprintf(msg, sizeof(msg), "unexpected '%c'", f->text[i]);
    return cron_field_fail(f, i, msg);
  }
  for (v = lo; v <= hi; v += step)
    f->bits |= UINT64_C(1) << (f->kind == CRON_DOW ? v % 7 : v);
  return 0;
}

/* Parses a whole field into f->bits (and the specials into f->cron). */
static int cron_field(cron_field_t *f) {
  size_t start = 0, i;
  int rc;

  for (i = 0; i <= f->len; i++) {
    if (i == f->len || f->text[i] == ',') {
      if ((rc = cron_item(f, start, i)) != 0)
        return rc;
      start = i + 1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* @every                                                                   */

static int cron_every(fleet_cron_t *c, const char *s, size_t pos,
                      cron_err_t *e) {
  const char *p = s;
  int64_t total = 0;
  int parts = 0;

  while (*p == ' ' || *p == '\t')
    p++;
  if (*p == '\0')
    return cron_fail(e, "@every, position %zu: a duration is missing",
                     pos + (size_t)(p - s) + 1);
  while (*p != '\0' && *p != ' ' && *p != '\t') {
    const char *at = p;
    int64_t n = 0, unit;
    if (!cron_is_digit(*p))
      return cron_fail(e, "@every, position %zu: expected a number",
                       pos + (size_t)(p - s) + 1);
    while (cron_is_digit(*p)) {
      if (n <= CRON_EVERY_MAX)
        n = n * 10 + (*p - '0');
      p++;
    }
    switch (*p) {
      case 'd':
        unit = 86400;
        break;
      case 'h':
        unit = 3600;
        break;
      case 'm':
        unit = 60;
        break;
      case 's':
        unit = 1;
        break;
      default:
        return cron_fail(e,
                         "@every, position %zu: expected a unit (d, h, m, s)",
                         pos + (size_t)(p - s) + 1);
    }
    p++;
    if (n > CRON_EVERY_MAX / unit || total + n * unit > CRON_EVERY_MAX)
      return cron_fail(e, "@every, position %zu: longer than 100 years",
                       pos + (size_t)(at - s) + 1);
    total += n * unit;
    parts++;
  }
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p != '\0')
    return cron_fail(e, "@every, position %zu: unexpected '%c'",
                     pos + (size_t)(p - s) + 1, *p);
  if (total < 1)
    return cron_fail(e, "@every, position %zu: the period must be at least 1s",
                     pos + 1);
  c->every_s = total;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                  */

static const struct {
  const char *name;
  const char *expr;
} cron_macros[] = {
    {"@yearly", "0 0 1 1 *"},  {"@annually", "0 0 1 1 *"},
    {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
    {"@daily", "0 0 * * *"},   {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

static int cron_match_ci(const char *a, size_t alen, const char *b) {
  size_t i;

  if (alen != strlen(b))
    return 0;
  for (i = 0; i < alen; i++)
    if (cron_upper(a[i]) != cron_upper(b[i]))
      return 0;
  return 1;
}

/* Whether the day-of-month or day-of-week field, parsed into c, restricts
 * the days: it does unless it allows every day and has no special. This
 * is croniter's reading (the field expanded to every value is "*"). */
static void cron_restrictions(fleet_cron_t *c) {
  int k, nth = 0;

  for (k = 0; k < 7; k++)
    nth |= c->dow_nth[k];
  c->dom_restricted = c->dom != 0xfffffffeu || c->dom_last != 0 ||
                      c->dom_lw != 0 || c->dom_w != 0;
  c->dow_restricted = c->dow != 0x7f || nth != 0 || c->dow_lastw != 0;
  if (!c->dom_restricted)
    c->dom_last = 0, c->dom_lw = 0, c->dom_w = 0;
}

/* Parses the fields of `text` (5 or 6, whitespace-separated); `pos` is
 * where text starts in the expression the user gave. */
static int cron_fields_parse(fleet_cron_t *c, const char *text, size_t pos,
                             cron_err_t *e) {
  cron_field_t f[6];
  size_t n = 0, i = 0, len = strlen(text), k;
  int first, rc;

  while (i < len) {
    while (i < len && (text[i] == ' ' || text[i] == '\t'))
      i++;
    if (i == len)
      break;
    if (n == 6)
      return cron_fail(e, "position %zu: too many fields (5 or 6 expected)",
                       pos + i + 1);
    memset(&f[n], 0, sizeof(f[n]));
    f[n].text = text + i;
    f[n].pos = pos + i;
    while (i < len && text[i] != ' ' && text[i] != '\t')
      i++;
    f[n].len = (size_t)(text + i - f[n].text);
    n++;
  }
  if (n != 5 && n != 6)
    return cron_fail(e,
                     "%zu field%s, expected 5 (minute hour day-of-month "
                     "month day-of-week) or 6 (seconds first)",
                     n, n == 1 ? "" : "s");
  first = n == 6 ? CRON_SEC : CRON_MIN;
  for (k = 0; k < n; k++) {
    f[k].kind = first + (int)k;
    f[k].err = e;
    f[k].cron = c;
    if ((rc = cron_field(&f[k])) != 0)
      return rc;
  }
  c->sec = n == 6 ? f[0].bits : 1;
  c->min = f[n - 5].bits;
  c->hour = (uint32_t)f[n - 4].bits;
  c->dom = (uint32_t)f[n - 3].bits;
  c->month = (uint16_t)f[n - 2].bits;
  c->dow = (uint8_t)f[n - 1].bits;
  c->wildcard = f[n - 5].text[0] == '*' || f[n - 4].text[0] == '*' ||
                (n == 6 && f[0].text[0] == '*');
  cron_restrictions(c);
  return 0;
}

static int cron_find(const fleet_cron_t *c, int64_t from, int64_t limit,
                     int64_t *found);

int fleet_cron_parse(const char *expr, const char *tz, fleet_cron_t **out,
                     char *err, size_t err_len) {
  cron_err_t e = {err, err_len};
  fleet_cron_t *c;
  const char *p;
  char tzerr[512];
  int64_t probe;
  int rc = 0;

  if (out != NULL)
    *out = NULL;
  if (err != NULL && err_len > 0)
    err[0] = '\0';
  if (expr == NULL || out == NULL)
    return cron_fail(&e, "no expression");
  if (tz == NULL)
    tz = "UTC";
  c = calloc(1, sizeof(*c));
  if (c == NULL)
    return FLEET_ENOMEM;
  c->expr = fleet__strdup(expr);
  c->zone = fleet__strdup(tz);
  if (c->expr == NULL || c->zone == NULL) {
    fleet_cron_free(c);
    return FLEET_ENOMEM;
  }
  p = expr;
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p == '@') {
    size_t k, n = strcspn(p, " \t");
    const char *macro = NULL;
    for (k = 0; k < FLEET__ARRAY_SIZE(cron_macros); k++)
      if (cron_match_ci(p, n, cron_macros[k].name))
        macro = cron_macros[k].expr;
    if (macro != NULL) {
      if (p[n + strspn(p + n, " \t")] != '\0')
        rc = cron_fail(&e, "position %zu: %.*s takes nothing after it",
                       (size_t)(p - expr) + n + strspn(p + n, " \t") + 1,
                       (int)n, p);
      else
        rc = cron_fields_parse(c, macro, 0, &e);
    } else if (cron_match_ci(p, n, "@every")) {
      rc = cron_every(c, p + n, (size_t)(p - expr) + n, &e);
    } else {
      rc = cron_fail(&e, "position %zu: unknown macro '%.*s'",
                     (size_t)(p - expr) + 1, (int)n, p);
    }
  } else {
    rc = cron_fields_parse(c, expr, 0, &e);
  }
  if (rc == 0) {
    rc = fleet__tz_load(tz, &c->tz, tzerr, sizeof(tzerr));
    if (rc == FLEET_EINVAL)
      cron_fail(&e, "%s", tzerr);
  }
  /* Days repeat every 400 years (146097 days, a whole number of weeks):
   * an expression that matches no day in 400 years never fires. */
  if (rc == 0 && c->every_s == 0 &&
      !cron_find(c, 0, fleet__days_from_civil(2370, 1, 1) * 86400, &probe))
    rc = cron_fail(&e, "the expression never fires (no such day)");
  if (rc != 0) {
    fleet_cron_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

void fleet_cron_free(fleet_cron_t *cron) {
  if (cron == NULL)
    return;
  fleet__tz_free(cron->tz);
  free(cron->expr);
  free(cron->zone);
  free(cron);
}

const char *fleet_cron_expr(const fleet_cron_t *cron) {
  return cron->expr;
}

const char *fleet_cron_zone(const fleet_cron_t *cron) {
  return cron->zone;
}

/* ------------------------------------------------------------------------ */
/* Matching in civil time                                                   */

/* Whether day d of a month of `dim` days (`days` since the epoch) is the
 * weekday nearest to a day n of c->dom_w (nW): n itself on Monday to
 * Friday; the Friday before a Saturday n, but Monday the 3rd for a
 * Saturday the 1st; the Monday after a Sunday n, but the Friday before for
 * a Sunday on the month's last day. Never in another month, and never in
 * a month without day n. The day chosen lies within two days of n. */
static int cron_nearest_weekday(const fleet_cron_t *c, int dim, int d,
                                int64_t days) {
  int n, t, wd;

  for (n = d - 2; n <= d + 2; n++) {
    if (n < 1 || n > dim || !(c->dom_w >> n & 1))
      continue;
    wd = fleet__weekday(days + (n - d));
    t = n;
    if (wd == 6)
      t = n == 1 ? 3 : n - 1;
    else if (wd == 0)
      t = n == dim ? n - 2 : n + 1;
    if (t == d)
      return 1;
  }
  return 0;
}

static int cron_day_matches(const fleet_cron_t *c, int64_t y, int m, int d,
                            int64_t days) {
  int dim = fleet__days_in_month(y, m);
  int wd = fleet__weekday(days);
  int dom_ok, dow_ok;

  dom_ok = (c->dom >> d & 1) || (c->dom_last >> (dim - d) & 1);
  if (!dom_ok && c->dom_lw) {
    /* The last Monday-to-Friday of the month. */
    int last_wd = fleet__weekday(days + dim - d);
    int lw = dim - (last_wd == 0 ? 2 : last_wd == 6 ? 1 : 0);
    dom_ok = d == lw;
  }
  if (!dom_ok && c->dom_w != 0)
    dom_ok = cron_nearest_weekday(c, dim, d, days);
  dow_ok = (c->dow >> wd & 1) || (c->dow_nth[wd] >> ((d - 1) / 7) & 1) ||
           ((c->dow_lastw >> wd & 1) && d + 7 > dim);
  if (c->dom_restricted && c->dow_restricted)
    return dom_ok || dow_ok;
  return dom_ok && dow_ok;
}

/* The lowest set bit of `bits` at or above `from`, or -1. */
static int cron_next_bit(uint64_t bits, int from) {
  if (from > 63)
    return -1;
  bits >>= from;
  return bits == 0 ? -1 : from + __builtin_ctzll(bits);
}

/* Finds the first local time (seconds, civil time counted like UTC) at or
 * after `from` and before `limit` that the fields match. Returns 1 and
 * sets *found, or 0 when there is none (or it would be after 9999). */
static int cron_find(const fleet_cron_t *c, int64_t from, int64_t limit,
                     int64_t *found) {
  int64_t days = fleet__floor_div(from, 86400), y;
  int64_t sod = from - days * 86400;
  int m, d, h = (int)(sod / 3600), mi = (int)(sod / 60 % 60),
            s = (int)(sod % 60), x;

  fleet__civil_from_days(days, &y, &m, &d);
  for (;;) {
    if (days * 86400 >= limit || y > 9999)
      return 0;
    if (!(c->month >> m & 1) || !cron_day_matches(c, y, m, d, days)) {
      /* The next day; from a month that never matches, its first day. */
      if (!(c->month >> m & 1)) {
        days += fleet__days_in_month(y, m) - d + 1;
      } else {
        days++;
      }
      fleet__civil_from_days(days, &y, &m, &d);
      h = mi = s = 0;
      continue;
    }
    /* Past the last hour, minute or second, the next one up moves on:
     * hour 24 and minute 60 have no bit, so they carry over. */
    if ((x = cron_next_bit(c->hour, h)) < 0) {
      days++;
      fleet__civil_from_days(days, &y, &m, &d);
      h = mi = s = 0;
      continue;
    }
    if (x != h)
      h = x, mi = s = 0;
    if ((x = cron_next_bit(c->min, mi)) < 0) {
      h++, mi = s = 0;
      continue;
    }
    if (x != mi)
      mi = x, s = 0;
    if ((x = cron_next_bit(c->sec, s)) < 0) {
      mi++, s = 0;
      continue;
    }
    s = x;
    *found = days * 86400 + h * 3600 + mi * 60 + s;
    return *found < limit;
  }
}

int fleet__cron_matches(const fleet_cron_t *c, int64_t local) {
  int64_t days = fleet__floor_div(local, 86400), y;
  int64_t sod = local - days * 86400;
  int m, d;

  fleet__civil_from_days(days, &y, &m, &d);
  return (c->month >> m & 1) && cron_day_matches(c, y, m, d, days) &&
         (c->hour >> (sod / 3600) & 1) && (c->min >> (sod / 60 % 60) & 1) &&
         (c->sec >> (sod % 60) & 1);
}

int fleet__cron_wildcard(const fleet_cron_t *c) {
  return c->wildcard;
}

const fleet__tz_t *fleet__cron_tz(const fleet_cron_t *c) {
  return c->tz;
}

/* ------------------------------------------------------------------------ */
/* The next fire time                                                       */

int fleet_cron_next(const fleet_cron_t *c, int64_t after_ms, int64_t *next_ms) {
  int64_t t, local;

  if (c == NULL || next_ms == NULL)
    return FLEET_EINVAL;
  if (c->every_s > 0) {
    int64_t period = c->every_s * 1000;
    int64_t k = fleet__floor_div(after_ms, period) + 1;
    if (k > CRON_MAX_SECONDS * 1000 / period)
      return FLEET_ENOTFOUND;
    *next_ms = k * period;
    return 0;
  }
  /* Fire times are whole seconds strictly after after_ms. */
  t = fleet__floor_div(after_ms, 1000) + 1;
  if (t < CRON_MIN_SECONDS)
    t = CRON_MIN_SECONDS;
  while (t <= CRON_MAX_SECONDS) {
    int32_t off = fleet__tz_offset(c->tz, t);
    int64_t change = fleet__tz_next_change(c->tz, t);
    int64_t limit = change == INT64_MAX ? INT64_MAX : change + off;

    local = t + off;
    while (cron_find(c, local, limit, &local)) {
      int64_t at = local - off;
      if (!c->wildcard) {
        /* A repeated local time fires at its first occurrence only: skip
         * it when it also existed under the offset of a day earlier. */
        int32_t before = fleet__tz_offset(c->tz, at - 86400);
        if (before > off && fleet__tz_offset(c->tz, local - before) == before &&
            local - before < at) {
          local++;
          continue;
        }
      }
      if (at > CRON_MAX_SECONDS)
        return FLEET_ENOTFOUND;
      *next_ms = at * 1000;
      return 0;
    }
    if (change == INT64_MAX)
      break;
    t = change;
  }
  return FLEET_ENOTFOUND;
}
