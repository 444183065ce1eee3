/* cron_tz.c -- time zones for cron expressions: civil-time arithmetic, the
 * TZif reader (RFC 8536, versions 1 to 4) and POSIX TZ rules (the footer
 * that governs instants after the last transition).
 *
 * Nothing here touches the C library's time-zone machinery: no TZ
 * variable, no localtime(), no tzset(), no cache. A zone is read from its
 * file when an expression is parsed and owned by that expression. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cron_expr.h"
#include "fleet.h"

/* The largest TZif file read (real ones are under 4 KiB). */
#define CRON_TZ_MAX_FILE (1 << 20)
/* The most transitions and types accepted from one file. */
#define CRON_TZ_MAX_TIMES 65536
#define CRON_TZ_MAX_TYPES 256
/* Offsets beyond +-26 h are refused (RFC 8536 allows -25:59:59..25:59:59). */
#define CRON_TZ_MAX_OFFSET (26 * 3600)

/* ------------------------------------------------------------------------ */
/* Civil time                                                               */

int64_t fleet__floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;

  if ((a % b) != 0 && ((a < 0) != (b < 0)))
    q--;
  return q;
}

/* Days from 1970-01-01, by counting 400-year eras starting in March (the
 * leap day is then the last day of the shifted year). */
int64_t fleet__days_from_civil(int64_t y, int m, int d) {
  int64_t era, yoe, doy, doe;

  if (m <= 2)
    y--;
  era = fleet__floor_div(y, 400);
  yoe = y - era * 400;
  doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void fleet__civil_from_days(int64_t days, int64_t *y, int *m, int *d) {
  int64_t z = days + 719468;
  int64_t era = fleet__floor_div(z, 146097);
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int mm = (int)(mp < 10 ? mp + 3 : mp - 9);

  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = mm;
  *y = yoe + era * 400 + (mm <= 2);
}

static int cron_tz_leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int fleet__days_in_month(int64_t y, int m) {
  static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

  return m == 2 && cron_tz_leap(y) ? 29 : dim[m - 1];
}

int fleet__weekday(int64_t days) {
  /* 1970-01-01 was a Thursday. */
  return (int)(days - fleet__floor_div(days + 4, 7) * 7 + 4);
}

/* ------------------------------------------------------------------------ */
/* The zone                                                                 */

/* A POSIX TZ rule date: Jn (1-365, February 29 never counted), n (0-365)
 * or Mm.w.d (day d of week w of month m, w = 5 the last), at `time`
 * seconds of local time (may be negative or past 24 h in version 3). */
typedef struct {
  char kind; /* 'J', 'N' or 'M' */
  int n, m, w, d;
  int32_t time;
} cron_tz_date_t;

struct fleet__tz_s {
  size_t n;        /* transitions */
  int64_t *at;     /* their instants, ascending */
  int32_t *off;    /* the offset from each transition on */
  int32_t off0;    /* the offset before the first transition */
  int has_rule;    /* the footer holds a rule for after at[n-1] */
  int has_dst;     /* the rule has daylight saving time */
  int32_t std_off; /* seconds east of UTC */
  int32_t dst_off;
  cron_tz_date_t start, end;
};

static void cron_tz_err(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void cron_tz_err(char *err, size_t err_len, const char *fmt, ...) {
  va_list ap;

  if (err == NULL || err_len == 0)
    return;
  va_start(ap, fmt);
  vsnprintf(err, err_len, fmt, ap);
  va_end(ap);
}

void fleet__tz_free(fleet__tz_t *tz) {
  if (tz == NULL)
    return;
  free(tz->at);
  free(tz->off);
  free(tz);
}

/* The day (since the epoch) a rule date falls on in year y. */
static int64_t cron_tz_rule_day(const cron_tz_date_t *r, int64_t y) {
  int64_t jan1 = fleet__days_from_civil(y, 1, 1);
  int64_t first, day;
  int dim;

  switch (r->kind) {
    case 'J':
      return jan1 + r->n - 1 + (cron_tz_leap(y) && r->n >= 60 ? 1 : 0);
    case 'N':
      return jan1 + r->n;
    default:
      first = fleet__days_from_civil(y, r->m, 1);
      dim = fleet__days_in_month(y, r->m);
      day = first + (r->d - fleet__weekday(first) + 7) % 7 + (r->w - 1) * 7;
      while (day >= first + dim)
        day -= 7;
      return day;
  }
}

/* The instants DST starts and ends in year y under the rule. */
static int64_t cron_tz_rule_start(const fleet__tz_t *tz, int64_t y) {
  return cron_tz_rule_day(&tz->start, y) * 86400 + tz->start.time - tz->std_off;
}

static int64_t cron_tz_rule_end(const fleet__tz_t *tz, int64_t y) {
  return cron_tz_rule_day(&tz->end, y) * 86400 + tz->end.time - tz->dst_off;
}

static int64_t cron_tz_year_of(int64_t t) {
  int64_t y;
  int m, d;

  fleet__civil_from_days(fleet__floor_div(t, 86400), &y, &m, &d);
  return y;
}

static int32_t cron_tz_rule_offset(const fleet__tz_t *tz, int64_t t) {
  int64_t y, s, e;
  int dst;

  if (!tz->has_dst)
    return tz->std_off;
  y = cron_tz_year_of(t + tz->std_off);
  s = cron_tz_rule_start(tz, y);
  e = cron_tz_rule_end(tz, y);
  if (s < e)
    dst = t >= s && t < e;
  else
    dst = !(t >= e && t < s); /* southern hemisphere: DST over new year */
  return dst ? tz->dst_off : tz->std_off;
}

/* The last transition at or before `t`, for at[0] <= t < at[n - 1]: the
 * `lo` of at[lo] <= t < at[lo + 1]. */
static size_t cron_tz_find(const fleet__tz_t *tz, int64_t t) {
  size_t lo = 0, hi = tz->n - 1;

  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (tz->at[mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

int32_t fleet__tz_offset(const fleet__tz_t *tz, int64_t t) {
  if (tz->n == 0 || t >= tz->at[tz->n - 1]) {
    if (tz->has_rule)
      return cron_tz_rule_offset(tz, t);
    return tz->n == 0 ? tz->off0 : tz->off[tz->n - 1];
  }
  if (t < tz->at[0])
    return tz->off0;
  return tz->off[cron_tz_find(tz, t)];
}

int64_t fleet__tz_next_change(const fleet__tz_t *tz, int64_t t) {
  int64_t best = INT64_MAX, y;
  int k;

  if (tz->n > 0 && t < tz->at[tz->n - 1]) {
    /* The first transition after t. */
    if (tz->at[0] > t)
      return tz->at[0];
    return tz->at[cron_tz_find(tz, t) + 1];
  }
  if (!tz->has_rule || !tz->has_dst)
    return INT64_MAX;
  y = cron_tz_year_of(t);
  for (k = -1; k <= 1; k++) {
    int64_t s = cron_tz_rule_start(tz, y + k);
    int64_t e = cron_tz_rule_end(tz, y + k);
    if (s > t && s < best)
      best = s;
    if (e > t && e < best)
      best = e;
  }
  return best;
}

/* ------------------------------------------------------------------------ */
/* POSIX TZ rules                                                           */

/* Parses [+-]hh[:mm[:ss]] with hours up to max_h into *secs. */
static int cron_tz_posix_time(const char **pp, int max_h, int32_t *secs) {
  const char *p = *pp;
  int sign = 1, part = 0;
  int32_t v[3] = {0, 0, 0};

  if (*p == '+' || *p == '-')
    sign = *p++ == '-' ? -1 : 1;
  for (;;) {
    int digits = 0;
    int32_t x = 0;
    while (*p >= '0' && *p <= '9' && digits < 3) {
      x = x * 10 + (*p++ - '0');
      digits++;
    }
    if (digits == 0 || (part > 0 && digits != 2))
      return 0;
    v[part++] = x;
    if (*p != ':' || part == 3)
      break;
    p++;
  }
  if (v[0] > max_h || v[1] > 59 || v[2] > 59)
    return 0;
  *secs = sign * (v[0] * 3600 + v[1] * 60 + v[2]);
  *pp = p;
  return 1;
}

/* Parses a zone abbreviation: <...> or three or more letters. */
static int cron_tz_posix_name(const char **pp) {
  const char *p = *pp;
  size_t len = 0;

  if (*p == '<') {
    p++;
    while (*p != '\0' && *p != '>') {
      p++;
      len++;
    }
    if (*p != '>')
      return 0;
    p++;
  } else {
    while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')) {
      p++;
      len++;
    }
  }
  if (len < 3)
    return 0;
  *pp = p;
  return 1;
}

static int cron_tz_posix_date(const char **pp, cron_tz_date_t *r) {
  const char *p = *pp;
  char *end;
  long a, b, c;

  r->time = 7200;
  if (*p == 'M') {
    a = strtol(p + 1, &end, 10);
    if (end == p + 1 || *end != '.')
      return 0;
    p = end + 1;
    b = strtol(p, &end, 10);
    if (end == p || *end != '.')
      return 0;
    p = end + 1;
    c = strtol(p, &end, 10);
    if (end == p || a < 1 || a > 12 || b < 1 || b > 5 || c < 0 || c > 6)
      return 0;
    r->kind = 'M';
    r->m = (int)a;
    r->w = (int)b;
    r->d = (int)c;
  } else {
    int julian = *p == 'J';
    if (julian)
      p++;
    if (*p < '0' || *p > '9')
      return 0;
    a = strtol(p, &end, 10);
    if (julian ? a < 1 || a > 365 : a > 365)
      return 0;
    r->kind = julian ? 'J' : 'N';
    r->n = (int)a;
  }
  p = end;
  if (*p == '/') {
    p++;
    if (!cron_tz_posix_time(&p, 167, &r->time))
      return 0;
  }
  *pp = p;
  return 1;
}

/* Fills the rule fields of tz from a POSIX TZ string. */
static int cron_tz_posix_fill(fleet__tz_t *tz, const char *rule) {
  const char *p = rule;
  int32_t off;

  if (!cron_tz_posix_name(&p) || !cron_tz_posix_time(&p, 24, &off))
    return 0;
  tz->std_off = -off;
  tz->has_rule = 1;
  if (*p == '\0')
    return 1;
  if (!cron_tz_posix_name(&p))
    return 0;
  tz->has_dst = 1;
  tz->dst_off = tz->std_off + 3600;
  if (*p != ',' && *p != '\0') {
    if (!cron_tz_posix_time(&p, 24, &off))
      return 0;
    tz->dst_off = -off;
  }
  if (*p == '\0') {
    /* No dates: the US rules POSIX names as the default. */
    tz->start = (cron_tz_date_t){'M', 0, 3, 2, 0, 7200};
    tz->end = (cron_tz_date_t){'M', 0, 11, 1, 0, 7200};
    return 1;
  }
  if (*p++ != ',' || !cron_tz_posix_date(&p, &tz->start) || *p++ != ',' ||
      !cron_tz_posix_date(&p, &tz->end) || *p != '\0')
    return 0;
  return 1;
}

int fleet__tz_posix(const char *rule, fleet__tz_t **out, char *err,
                    size_t err_len) {
  fleet__tz_t *tz = calloc(1, sizeof(*tz));

  *out = NULL;
  if (tz == NULL)
    return FLEET_ENOMEM;
  if (!cron_tz_posix_fill(tz, rule)) {
    cron_tz_err(err, err_len, "bad POSIX TZ rule '%s'", rule);
    fleet__tz_free(tz);
    return FLEET_EINVAL;
  }
  tz->off0 = tz->std_off;
  *out = tz;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* TZif                                                                     */

static uint32_t cron_tz_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static int64_t cron_tz_be64(const uint8_t *p) {
  return (int64_t)((uint64_t)cron_tz_be32(p) << 32 | cron_tz_be32(p + 4));
}

/* The counts of one TZif header. */
typedef struct {
  uint32_t isut, isstd, leap, time, type, chars;
} cron_tz_counts_t;

/* Reads the header at buf[0..len): its version and counts, and the size of
 * the data block after it for time values of `tsize` bytes. */
static const char *cron_tz_header(const uint8_t *buf, size_t len, size_t tsize,
                                  char *version, cron_tz_counts_t *c,
                                  size_t *block) {
  if (len < 44)
    return "truncated header";
  if (memcmp(buf, "TZif", 4) != 0)
    return "not a TZif file";
  *version = (char)buf[4];
  c->isut = cron_tz_be32(buf + 20);
  c->isstd = cron_tz_be32(buf + 24);
  c->leap = cron_tz_be32(buf + 28);
  c->time = cron_tz_be32(buf + 32);
  c->type = cron_tz_be32(buf + 36);
  c->chars = cron_tz_be32(buf + 40);
  if (c->time > CRON_TZ_MAX_TIMES || c->type == 0 ||
      c->type > CRON_TZ_MAX_TYPES || c->chars > 65536 ||
      c->leap > CRON_TZ_MAX_TIMES || (c->isut != 0 && c->isut != c->type) ||
      (c->isstd != 0 && c->isstd != c->type))
    return "bad counts in header";
  /* Each count is bounded above, so this cannot overflow. */
  *block = (size_t)c->time * (tsize + 1) + (size_t)c->type * 6 + c->chars +
           (size_t)c->leap * (tsize + 4) + c->isstd + c->isut;
  if (len - 44 < *block)
    return "truncated data";
  return NULL;
}

static const char *cron_tz_data(fleet__tz_t *tz, const uint8_t *p, size_t tsize,
                                const cron_tz_counts_t *c) {
  const uint8_t *idx = p + (size_t)c->time * tsize;
  const uint8_t *types = idx + c->time;
  int32_t offs[CRON_TZ_MAX_TYPES];
  uint32_t i;

  if (c->leap != 0)
    return "leap-second zones (right/...) are not supported";
  for (i = 0; i < c->type; i++) {
    const uint8_t *t = types + (size_t)i * 6;
    offs[i] = (int32_t)cron_tz_be32(t);
    if (offs[i] <= -CRON_TZ_MAX_OFFSET || offs[i] >= CRON_TZ_MAX_OFFSET ||
        t[4] > 1 || t[5] >= c->chars)
      return "bad local time type";
  }
  tz->off0 = offs[0];
  tz->n = c->time;
  if (c->time == 0)
    return NULL;
  tz->at = malloc(sizeof(*tz->at) * c->time);
  tz->off = malloc(sizeof(*tz->off) * c->time);
  if (tz->at == NULL || tz->off == NULL)
    return "";
  for (i = 0; i < c->time; i++) {
    tz->at[i] = tsize == 8 ? cron_tz_be64(p + (size_t)i * 8)
                           : (int32_t)cron_tz_be32(p + (size_t)i * 4);
    if (idx[i] >= c->type)
      return "bad type index";
    if (i > 0 && tz->at[i] <= tz->at[i - 1])
      return "transitions out of order";
    tz->off[i] = offs[idx[i]];
  }
  return NULL;
}

int fleet__tz_parse(const uint8_t *buf, size_t len, fleet__tz_t **out,
                    char *err, size_t err_len) {
  fleet__tz_t *tz;
  cron_tz_counts_t c;
  const char *why;
  size_t block, tsize = 4;
  char version;

  *out = NULL;
  why = cron_tz_header(buf, len, 4, &version, &c, &block);
  if (why == NULL && version != 0) {
    /* Version 2 and later: skip the 32-bit block, use the 64-bit one. */
    buf += 44 + block;
    len -= 44 + block;
    tsize = 8;
    why = cron_tz_header(buf, len, 8, &version, &c, &block);
  }
  if (why != NULL) {
    cron_tz_err(err, err_len, "%s", why);
    return FLEET_EINVAL;
  }
  tz = calloc(1, sizeof(*tz));
  if (tz == NULL)
    return FLEET_ENOMEM;
  why = cron_tz_data(tz, buf + 44, tsize, &c);
  if (why == NULL && tsize == 8) {
    /* The footer: "\n<POSIX TZ string>\n", possibly empty. */
    const uint8_t *f = buf + 44 + block;
    size_t flen = len - 44 - block, end;
    char rule[128];

    if (flen < 2 || f[0] != '\n')
      why = "truncated footer";
    for (end = 1; why == NULL && end < flen && f[end] != '\n'; end++)
      ;
    if (why == NULL && (end >= flen || end - 1 >= sizeof(rule)))
      why = "bad footer";
    if (why == NULL && end > 1) {
      memcpy(rule, f + 1, end - 1);
      rule[end - 1] = '\0';
      if (!cron_tz_posix_fill(tz, rule))
        why = "bad POSIX TZ rule in footer";
    }
  }
  if (why != NULL) {
    fleet__tz_free(tz);
    if (why[0] == '\0')
      return FLEET_ENOMEM;
    cron_tz_err(err, err_len, "%s", why);
    return FLEET_EINVAL;
  }
  *out = tz;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Loading by name                                                          */

static int cron_tz_name_ok(const char *name) {
  const char *p = name;
  size_t comp = 0;

  if (*p == '\0' || *p == '/' || strlen(name) > 255)
    return 0;
  for (; *p != '\0'; p++) {
    char ch = *p;
    if (ch == '/') {
      if (comp == 0)
        return 0;
      comp = 0;
      continue;
    }
    if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
          (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '+' ||
          ch == '.'))
      return 0;
    /* No component may start with '.' ("..", ".hidden"). */
    if (ch == '.' && comp == 0)
      return 0;
    comp++;
  }
  return comp > 0;
}

int fleet__tz_load(const char *name, fleet__tz_t **out, char *err,
                   size_t err_len) {
  const char *dir = getenv("TZDIR");
  char path[1024], why[128];
  struct stat st;
  uint8_t *buf;
  ssize_t got;
  size_t have = 0;
  int fd, rc;

  *out = NULL;
  if (strcmp(name, "UTC") == 0)
    return fleet__tz_posix("UTC0", out, err, err_len);
  if (!cron_tz_name_ok(name)) {
    cron_tz_err(err, err_len, "time zone '%s': not a zone name", name);
    return FLEET_EINVAL;
  }
  if (dir == NULL || dir[0] == '\0')
    dir = "/usr/share/zoneinfo";
  if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
      sizeof(path)) {
    cron_tz_err(err, err_len, "time zone '%s': path too long", name);
    return FLEET_EINVAL;
  }
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    cron_tz_err(err, err_len, "time zone '%s': unknown (%s: %s)", name, path,
                strerror(errno));
    return FLEET_EINVAL;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size > CRON_TZ_MAX_FILE) {
    close(fd);
    cron_tz_err(err, err_len, "time zone '%s': %s is not a TZif file", name,
                path);
    return FLEET_EINVAL;
  }
  buf = malloc((size_t)st.st_size + 1);
  if (buf == NULL) {
    close(fd);
    return FLEET_ENOMEM;
  }
  while (have < (size_t)st.st_size) {
    got = read(fd, buf + have, (size_t)st.st_size - have);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    have += (size_t)got;
  }
  close(fd);
  rc = fleet__tz_parse(buf, have, out, why, sizeof(why));
  free(buf);
  if (rc == FLEET_EINVAL)
    cron_tz_err(err, err_len, "time zone '%s': %s: %s", name, path, why);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* ISO 8601                                                                 */

int fleet_cron_format_time(int64_t ms, char *buf, size_t len) {
  int64_t secs = fleet__floor_div(ms, 1000), days, y;
  int frac = (int)(ms - secs * 1000), m, d, n;
  int sod;

  days = fleet__floor_div(secs, 86400);
  sod = (int)(secs - days * 86400);
  fleet__civil_from_days(days, &y, &m, &d);
  if (buf == NULL || y < 0 || y > 9999)
    return FLEET_EINVAL;
  if (frac != 0)
    n = snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (int)y, m, d,
                 sod / 3600, sod / 60 % 60, sod % 60, frac);
  else
    n = snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", (int)y, m, d,
                 sod / 3600, sod / 60 % 60, sod % 60);
  if (n < 0 || (size_t)n >= len)
    return FLEET_EINVAL;
  return n;
}

/* Reads exactly `digits` digits at *p. */
static int cron_tz_digits(const char **p, int digits, int *out) {
  int v = 0, k;

  for (k = 0; k < digits; k++) {
    if ((*p)[k] < '0' || (*p)[k] > '9')
      return 0;
    v = v * 10 + ((*p)[k] - '0');
  }
  *p += digits;
  *out = v;
  return 1;
}

int fleet_cron_parse_time(const char *text, int64_t *ms) {
  const char *p = text;
  int y, mo, d, h, mi, s = 0, frac = 0, oh, om, sign;
  int64_t secs;

  if (text == NULL || ms == NULL)
    return FLEET_EINVAL;
  if (!cron_tz_digits(&p, 4, &y) || *p++ != '-' ||
      !cron_tz_digits(&p, 2, &mo) || *p++ != '-' ||
      !cron_tz_digits(&p, 2, &d) || (*p != 'T' && *p != 't' && *p != ' '))
    return FLEET_EINVAL;
  p++;
  if (!cron_tz_digits(&p, 2, &h) || *p++ != ':' || !cron_tz_digits(&p, 2, &mi))
    return FLEET_EINVAL;
  if (*p == ':') {
    p++;
    if (!cron_tz_digits(&p, 2, &s))
      return FLEET_EINVAL;
    if (*p == '.') {
      int scale = 100, digits = 0;
      p++;
      while (*p >= '0' && *p <= '9') {
        frac += (*p++ - '0') * scale;
        scale /= 10;
        digits++;
      }
      if (digits == 0)
        return FLEET_EINVAL;
    }
  }
  if (mo < 1 || mo > 12 || d < 1 || d > fleet__days_in_month(y, mo) || h > 23 ||
      mi > 59 || s > 59)
    return FLEET_EINVAL;
  secs = fleet__days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    sign = *p++ == '-' ? -1 : 1;
    if (!cron_tz_digits(&p, 2, &oh))
      return FLEET_EINVAL;
    if (*p == ':')
      p++;
    if (!cron_tz_digits(&p, 2, &om) || oh > 23 || om > 59)
      return FLEET_EINVAL;
    secs -= sign * (oh * 3600 + om * 60);
  } else {
    return FLEET_EINVAL;
  }
  if (*p != '\0')
    return FLEET_EINVAL;
  *ms = secs * 1000 + frac;
  return 0;
}
