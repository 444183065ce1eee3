/* log.c -- the client's logging hook and the redaction of its messages. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "log.h"

static const char *const log_level_names[] = {
#define XX(name, str) str,
    FLEET_LOG_LEVEL_MAP(XX)
#undef XX
};

const char *fleet_log_level_name(fleet_log_level_t level) {
  if ((size_t)level >= FLEET__ARRAY_SIZE(log_level_names))
    return "unknown";
  return log_level_names[level];
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
  char msg[FLEET__LOG_MAX];
  va_list ap;
  size_t i;

  if (c == NULL || c->log_cb == NULL)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  /* One line: control characters (a server's text) become spaces. */
  for (i = 0; msg[i] != '\0'; i++)
    if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
      msg[i] = ' ';
  fleet__redact(msg, sizeof(msg), c->url.password);
  c->log_cb(level, msg, c->log_data);
}
