/* queue_headers.c -- a job's headers (docs/queue.md, "Headers and
 * tracing"): the checks of fleet_job_spec_t.headers, their encoding for
 * the enqueue (the ext item "h", lib/queue_hdr.lua), the unpacking of the
 * stored form a claim or a get returns, and the lookups on the packed
 * form fleet_job_t.headers holds.
 *
 * Three forms of the same headers:
 * - given: fleet_header_t pairs of NUL-terminated strings;
 * - wire and stored: "<key>=<value>" items separated by "\t" (a key has
 *   no "=", a value no control character: neither a tab nor a NUL), sent
 *   as the value of the ext item "h" and stored after the created time
 *   of the job's record, "<created_ms>\t<headers>";
 * - packed: "<key>\0<value>\0" per header, what a claimed job and
 *   fleet_queue_get() hand out, so that each value is a C string without
 *   a copy. */
#include <string.h>

#include "queue_int.h"

/* Whether `c` may be in a header key: [A-Za-z0-9._-]. */
static int hdr_key_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

int fleet__queue_headers_ok(const fleet_header_t *h, size_t n, size_t *wire) {
  size_t i, j, klen, vlen, total = 0;

  if (n == 0) {
    *wire = 0;
    return 0;
  }
  if (h == NULL)
    return FLEET_EINVAL;
  if (n > FLEET_JOB_HEADERS_MAX)
    return FLEET_E2BIG;
  for (i = 0; i < n; i++) {
    if (h[i].key == NULL || h[i].key[0] == '\0' || h[i].value == NULL)
      return FLEET_EINVAL;
    klen = strnlen(h[i].key, FLEET_JOB_HEADER_KEY_MAX + 1);
    if (klen > FLEET_JOB_HEADER_KEY_MAX)
      return FLEET_E2BIG;
    for (j = 0; j < klen; j++)
      if (!hdr_key_char((unsigned char)h[i].key[j]))
        return FLEET_EINVAL;
    vlen = strnlen(h[i].value, FLEET_JOB_HEADER_VALUE_MAX + 1);
    if (vlen > FLEET_JOB_HEADER_VALUE_MAX)
      return FLEET_E2BIG;
    for (j = 0; j < vlen; j++) {
      unsigned char c = (unsigned char)h[i].value[j];
      if (c < 0x20 || c == 0x7f)
        return FLEET_EINVAL;
    }
    /* Each key once. */
    for (j = 0; j < i; j++)
      if (strcmp(h[j].key, h[i].key) == 0)
        return FLEET_EINVAL;
    total += klen + vlen + 2;
  }
  if (total > FLEET_JOB_HEADERS_BYTES_MAX)
    return FLEET_E2BIG;
  /* "<key>=<value>" items separated by "\t": one byte less than counted. */
  *wire = total - 1;
  return 0;
}

size_t fleet__queue_headers_wire(const fleet_header_t *h, size_t n, char *out) {
  char *p = out;
  size_t i, len;

  for (i = 0; i < n; i++) {
    if (i > 0)
      *p++ = '\t';
    len = strlen(h[i].key);
    memcpy(p, h[i].key, len);
    p += len;
    *p++ = '=';
    len = strlen(h[i].value);
    memcpy(p, h[i].value, len);
    p += len;
  }
  return (size_t)(p - out);
}

/* Unpacks stored headers: each "\t"-separated item becomes "<key>\0<value>
 * \0", the key running to its first "=" (an item without one, which fleet
 * does not write, is a key with an empty value; an empty item is
 * skipped), so that data fleet did not write is handed out rather than
 * refused. `out` has room for 2 * len + 2 bytes. Returns the bytes
 * written. */
size_t fleet__queue_headers_unpack(const char *src, size_t len, char *out) {
  const char *end = src + len, *item, *eq;
  char *p = out;
  size_t n;

  while (src < end) {
    item = memchr(src, '\t', (size_t)(end - src));
    if (item == NULL)
      item = end;
    n = (size_t)(item - src);
    if (n > 0) {
      eq = memchr(src, '=', n);
      if (eq == NULL) {
        memcpy(p, src, n);
        p += n;
        *p++ = '\0';
      } else {
        memcpy(p, src, n);
        p[eq - src] = '\0';
        p += n;
      }
      *p++ = '\0';
    }
    src = item + 1;
  }
  return (size_t)(p - out);
}

int fleet_headers_next(const char *headers, size_t len, size_t *cursor,
                       const char **key, const char **value) {
  const char *k, *v;
  size_t at;

  if (headers == NULL || cursor == NULL || *cursor >= len)
    return 0;
  at = *cursor;
  k = headers + at;
  v = memchr(k, '\0', len - at);
  if (v == NULL || (size_t)(++v - headers) >= len)
    return 0;
  at = (size_t)(v - headers) + strnlen(v, len - (size_t)(v - headers)) + 1;
  if (at > len)
    return 0;
  *cursor = at;
  if (key != NULL)
    *key = k;
  if (value != NULL)
    *value = v;
  return 1;
}

const char *fleet_headers_get(const char *headers, size_t len,
                              const char *key) {
  const char *k, *v;
  size_t cursor = 0;

  if (key == NULL)
    return NULL;
  while (fleet_headers_next(headers, len, &cursor, &k, &v))
    if (strcmp(k, key) == 0)
      return v;
  return NULL;
}

const char *fleet_job_header(const fleet_job_t *job, const char *key) {
  if (job == NULL)
    return NULL;
  return fleet_headers_get(job->headers, job->headers_len, key);
}

int fleet_job_header_next(const fleet_job_t *job, size_t *cursor,
                          const char **key, const char **value) {
  if (job == NULL)
    return 0;
  return fleet_headers_next(job->headers, job->headers_len, cursor, key, value);
}
