/* log.c -- the client's logging hook, the redaction of its messages, and
 * fleet_escape_text(), which makes any text inert for printing. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "log.h"

FLEET__NAME_FN(fleet_log_level_name, fleet_log_level_t, FLEET_LOG_LEVEL_MAP)

/* The length of the valid UTF-8 character at [s, s+n) that is not a C1
 * control, or 0 when its first byte must be escaped. */
static size_t escape_utf8_len(const unsigned char *s, size_t n) {
  uint32_t cp;
  size_t len, i;

  if (s[0] < 0x80)
    return s[0] >= 0x20 && s[0] != 0x7f ? 1 : 0;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    len = 2, cp = s[0] & 0x1fu;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    len = 3, cp = s[0] & 0x0fu;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    len = 4, cp = s[0] & 0x07u;
  else
    return 0;
  if (len > n)
    return 0;
  for (i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (s[i] & 0x3fu);
  }
  /* Overlong forms, surrogates, beyond U+10FFFF, and the C1 controls. */
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
      (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || cp < 0xa0)
    return 0;
  return len;
}

size_t fleet_escape_text(const void *text, size_t len, char *out,
                         size_t out_size) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *s = text;
  size_t i = 0, total = 0, written = 0;
  int full = 0; /* a unit did not fit: nothing more is written */

  while (i < len) {
    size_t n = escape_utf8_len(s + i, len - i);
    char esc[4];
    const char *unit = (const char *)s + i;
    size_t ulen = n;

    if (n == 0) {
      esc[0] = '\\';
      esc[1] = 'x';
      esc[2] = hex[s[i] >> 4];
      esc[3] = hex[s[i] & 15];
      unit = esc;
      ulen = 4;
      n = 1;
    }
    if (!full && out_size > 0 && written + ulen < out_size) {
      memcpy(out + written, unit, ulen);
      written += ulen;
    } else {
      full = 1;
    }
    total += ulen;
    i += n;
  }
  if (out_size > 0)
    out[written] = '\0';
  return total;
}

int fleet_escape_print(FILE *out, const char *fmt, ...) {
  char *raw, *esc;
  size_t n;
  va_list ap;
  int len;

  va_start(ap, fmt);
  len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (len < 0 || (raw = malloc((size_t)len + 1)) == NULL)
    return FLEET_ENOMEM;
  va_start(ap, fmt);
  vsnprintf(raw, (size_t)len + 1, fmt, ap);
  va_end(ap);
  n = fleet_escape_text(raw, (size_t)len, NULL, 0);
  if ((esc = malloc(n + 1)) == NULL) {
    free(raw);
    return FLEET_ENOMEM;
  }
  fleet_escape_text(raw, (size_t)len, esc, n + 1);
  fprintf(out, "%s\n", esc);
  free(esc);
  free(raw);
  return 0;
}

/* Appends `len` bytes to out[*at] within cap (one byte kept for the NUL). */
static void put(char *out, size_t cap, size_t *at, const char *p, size_t len) {
  if (*at + 1 >= cap)
    return;
  if (len > cap - 1 - *at)
    len = cap - 1 - *at;
  memcpy(out + *at, p, len);
  *at += len;
}

/* The length of the password of a URL whose authority starts at `p`
 * ("user:password@host..."), and where it starts; 0 when there is none.
 * The authority ends at the first '/', '?', '#' or blank; its userinfo at
 * the last '@' inside it. */
static size_t url_password(const char *p, size_t *start) {
  const char *end = p, *at = NULL, *colon;

  while (*end != '\0' && *end != '/' && *end != '?' && *end != '#' &&
         *end != ' ' && *end != '\t') {
    if (*end == '@')
      at = end;
    end++;
  }
  if (at == NULL)
    return 0;
  colon = memchr(p, ':', (size_t)(at - p));
  if (colon == NULL)
    return 0;
  *start = (size_t)(colon + 1 - p);
  return (size_t)(at - colon - 1);
}

void fleet__redact(char *s, size_t cap, const char *secret) {
  char out[FLEET__LOG_MAX * 2];
  /* A password shorter than 4 bytes is not searched for outside URLs: it
   * would mask ordinary words. */
  size_t secret_len = secret != NULL ? strlen(secret) : 0;
  size_t at = 0, i = 0, n = strlen(s);

  if (cap > sizeof(out))
    cap = sizeof(out);
  while (i < n) {
    if (i + 3 <= n && memcmp(s + i, "://", 3) == 0) {
      size_t start, plen;
      put(out, cap, &at, "://", 3);
      i += 3;
      plen = url_password(s + i, &start);
      if (plen > 0) {
        put(out, cap, &at, s + i, start);
        put(out, cap, &at, "***", 3);
        i += start + plen;
      }
      continue;
    }
    if (secret_len >= 4 && n - i >= secret_len &&
        memcmp(s + i, secret, secret_len) == 0) {
      put(out, cap, &at, "***", 3);
      i += secret_len;
      continue;
    }
    put(out, cap, &at, s + i, 1);
    i++;
  }
  out[at] = '\0';
  memcpy(s, out, at + 1);
}

void fleet__log(struct fleet__client_s *c, fleet_log_level_t level,
                const char *fmt, ...) {
  char raw[FLEET__LOG_MAX], msg[FLEET__LOG_MAX];
  va_list ap;

  if (c == NULL || c->log_cb == NULL)
    return;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof(raw), fmt, ap);
  va_end(ap);
  fleet__redact(raw, sizeof(raw), c->url.password);
  fleet__redact(raw, sizeof(raw), c->url.sentinel_password);
  /* One inert line: control bytes (a server's text, a name) escaped. */
  fleet_escape_text(raw, strlen(raw), msg, sizeof(msg));
  c->log_cb(level, msg, c->log_data);
}
