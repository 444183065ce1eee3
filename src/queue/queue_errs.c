/* queue_errs.c -- a job's attempt history (docs/queue.md, "Attempt
 * history"), as fleet_queue_get() hands it out: the stored form that
 * lib/queue_errs.lua keeps in T:errs and queue_get.lua returns as is,
 * entries "<attempt>:<time_ms>:<len>:<error bytes>" one after the other,
 * oldest first; the check of a whole value and the iterator over it. */
#include "queue_int.h"

/* The digits at `*at` (1 to `max` of them, then ':') as a number, `*at`
 * moved past the ':'; -1 when there are none, too many, or no ':'. */
static int errs_num(const char *s, size_t len, size_t *at, size_t max,
                    uint64_t *out) {
  size_t i = *at, n = 0;
  uint64_t v = 0;

  while (i < len && s[i] >= '0' && s[i] <= '9' && n < max) {
    v = v * 10 + (uint64_t)(s[i] - '0');
    i++;
    n++;
  }
  if (n == 0 || i >= len || s[i] != ':')
    return -1;
  *at = i + 1;
  *out = v;
  return 0;
}

/* Reads the entry of `s` (`len` bytes) at `*at`: 0 and `*at` moved past
 * it, or -1 for one fleet cannot read. */
static int errs_entry(const char *s, size_t len, size_t *at, uint32_t *attempt,
                      uint64_t *time_ms, const char **err, size_t *err_len) {
  uint64_t a, t, n;
  size_t i = *at;

  if (errs_num(s, len, &i, 10, &a) != 0 || a > UINT32_MAX ||
      errs_num(s, len, &i, 18, &t) != 0 || errs_num(s, len, &i, 9, &n) != 0 ||
      n > len - i)
    return -1;
  *attempt = (uint32_t)a;
  *time_ms = t;
  *err = s + i;
  *err_len = (size_t)n;
  *at = i + (size_t)n;
  return 0;
}

size_t fleet__queue_errs_count(const char *s, size_t len) {
  size_t at = 0, n = 0, elen;
  const char *e;
  uint32_t a;
  uint64_t t;

  while (at < len) {
    if (errs_entry(s, len, &at, &a, &t, &e, &elen) != 0)
      return 0;
    n++;
  }
  return n;
}

int fleet_job_info_error_next(const fleet_job_info_t *info, size_t *cursor,
                              uint32_t *attempt, uint64_t *time_ms,
                              const char **err, size_t *err_len) {
  uint32_t a;
  uint64_t t;
  const char *e;
  size_t elen, at;

  if (info == NULL || cursor == NULL || info->errors == NULL ||
      *cursor >= info->errors_len)
    return 0;
  at = *cursor;
  if (errs_entry(info->errors, info->errors_len, &at, &a, &t, &e, &elen) != 0)
    return 0;
  *cursor = at;
  if (attempt != NULL)
    *attempt = a;
  if (time_ms != NULL)
    *time_ms = t;
  if (err != NULL)
    *err = e;
  if (err_len != NULL)
    *err_len = elen;
  return 1;
}
