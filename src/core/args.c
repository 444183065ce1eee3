/* args.c -- the name rule, the argument builder and the reply readers
 * every primitive shares (see args.h). */
#include <stdlib.h>
#include <string.h>

#include "args.h"

int fleet__str_check(const char *s, size_t max, size_t *len) {
  size_t n;

  if (s == NULL || s[0] == '\0')
    return FLEET_EINVAL;
  n = strnlen(s, max + 1);
  if (n > max)
    return FLEET_E2BIG;
  if (len != NULL)
    *len = n;
  return 0;
}

int fleet__bytes_check(fleet_bytes_t b, size_t max) {
  if (b.base == NULL || b.len == 0)
    return FLEET_EINVAL;
  return b.len > max ? FLEET_E2BIG : 0;
}

int fleet__grow(void **arr, size_t *cap, size_t n, size_t size) {
  size_t want = *cap > 0 ? *cap : 16;
  void *p;

  if (n <= *cap)
    return 0;
  while (want < n)
    want *= 2;
  p = realloc(*arr, want * size);
  if (p == NULL)
    return FLEET_ENOMEM;
  *arr = p;
  *cap = want;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                */

/* The most bytes one formatted number takes: 20 digits and a sign. */
#define ARGS_NUM_MAX 21

int fleet__args_begin(fleet__args_t *a, size_t nargs, size_t nnums) {
  if (fleet__grow((void **)&a->argv, &a->argv_cap, nargs, sizeof(*a->argv)) !=
          0 ||
      fleet__grow((void **)&a->nums, &a->nums_cap, nnums * ARGS_NUM_MAX, 1) !=
          0)
    return FLEET_ENOMEM;
  a->argc = 0;
  a->nums_len = 0;
  return 0;
}

void fleet__args_bytes(fleet__args_t *a, const void *p, size_t len) {
  a->argv[a->argc].base = p;
  a->argv[a->argc].len = len;
  a->argc++;
}

void fleet__args_str(fleet__args_t *a, const char *s) {
  fleet__args_bytes(a, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

/* Formats `v` after an optional '-' into the number storage and adds it
 * as one argument. */
static void args_number(fleet__args_t *a, int negative, uint64_t v) {
  char tmp[ARGS_NUM_MAX], *p = tmp + sizeof(tmp);
  char *out = a->nums + a->nums_len;
  size_t len;

  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0);
  if (negative)
    *--p = '-';
  len = (size_t)(tmp + sizeof(tmp) - p);
  memcpy(out, p, len);
  a->nums_len += len;
  fleet__args_bytes(a, out, len);
}

void fleet__args_u64(fleet__args_t *a, uint64_t v) {
  args_number(a, 0, v);
}

void fleet__args_i64(fleet__args_t *a, int64_t v) {
  args_number(a, v < 0, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}

void fleet__args_free(fleet__args_t *a) {
  free(a->argv);
  free(a->nums);
  memset(a, 0, sizeof(*a));
}

/* ------------------------------------------------------------------------ */
/* Replies                                                                  */

int fleet__reply_u64(const fleet__reply_t *r, uint64_t *out) {
  if (r->type != FLEET__REPLY_INT || r->integer < 0)
    return FLEET_EPROTO;
  *out = (uint64_t)r->integer;
  return 0;
}

int fleet__reply_i64(const fleet__reply_t *r, int64_t *out) {
  if (r->type != FLEET__REPLY_INT)
    return FLEET_EPROTO;
  *out = r->integer;
  return 0;
}

int fleet__reply_bytes(const fleet__reply_t *r, fleet_bytes_t *out) {
  if (r->type != FLEET__REPLY_STR)
    return FLEET_EPROTO;
  out->base = r->str;
  out->len = r->len;
  return 0;
}

int fleet__reply_u64_str(const fleet__reply_t *r, uint64_t *out) {
  uint64_t v = 0;
  size_t i;

  if (r->type != FLEET__REPLY_STR || r->len == 0 || r->len > 20)
    return FLEET_EPROTO;
  for (i = 0; i < r->len; i++) {
    unsigned d = (unsigned)(r->str[i] - '0');
    if (d > 9 || v > (UINT64_MAX - d) / 10)
      return FLEET_EPROTO;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}
