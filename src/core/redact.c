/* redact.c -- fleet_redact_url(): a backend URL with its secrets replaced
 * by "***", for logs and error messages.
 *
 * The rules lean towards hiding too much: the user info runs to the last
 * '@' of the whole URL (a password may hold an unescaped '@', '/' or '?'
 * in a URL that is about to be refused, and that is exactly when it gets
 * printed), and user info without a ':' is hidden whole. Hiding part of a
 * host name in an odd URL costs a confusing log line; showing part of a
 * password costs the password. A secret query option runs to the next
 * '&' or the end of the URL, '#' included. */
#include <string.h>

#include "fleet.h"
#include "internal.h"

/* The redacted URL as it is written: `len` counts every byte, `out` gets
 * those that fit. */
typedef struct {
  char *out;
  size_t cap; /* bytes of `out` usable for text (out_size - 1) */
  size_t len;
} redact_buf_t;

static void redact_put(redact_buf_t *b, const char *s, size_t n) {
  if (b->len < b->cap) {
    size_t room = b->cap - b->len;
    memcpy(b->out + b->len, s, n < room ? n : room);
  }
  b->len += n;
}

/* Whether the query option name [s, s+n) names a secret: "password" or
 * "..._password", compared without case after %-decoding. */
static int redact_secret_name(const char *s, size_t n) {
  static const char suffix[] = "_password";
  char name[64];
  size_t i, len = 0;

  for (i = 0; i < n; i++) {
    char c = s[i];
    if (c == '%' && i + 2 < n && fleet__hex_digit(s[i + 1]) >= 0 &&
        fleet__hex_digit(s[i + 2]) >= 0) {
      c = (char)(fleet__hex_digit(s[i + 1]) * 16 + fleet__hex_digit(s[i + 2]));
      i += 2;
    }
    if (len == sizeof(name))
      return 0; /* longer than any name we hide */
    name[len++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  if (len == 8 && memcmp(name, "password", 8) == 0)
    return 1;
  return len >= sizeof(suffix) - 1 && memcmp(name + len - (sizeof(suffix) - 1),
                                             suffix, sizeof(suffix) - 1) == 0;
}

/* Writes the query string [q, end) with secret values hidden. An option
 * runs to the next '&' or the end, whatever it holds: fleet refuses a
 * '#' anywhere, so a '#' in a query is a password's byte, never the start
 * of a fragment that could be shown. */
static void redact_query(redact_buf_t *b, const char *q, const char *end) {
  while (q < end) {
    const char *amp = memchr(q, '&', (size_t)(end - q));
    const char *opt_end = amp != NULL ? amp : end;
    const char *eq = memchr(q, '=', (size_t)(opt_end - q));

    if (eq != NULL && redact_secret_name(q, (size_t)(eq - q))) {
      redact_put(b, q, (size_t)(eq + 1 - q));
      redact_put(b, "***", 3);
    } else {
      redact_put(b, q, (size_t)(opt_end - q));
    }
    q = opt_end;
    if (q < end) {
      redact_put(b, q, 1); /* the '&' */
      q++;
    }
  }
}

size_t fleet_redact_url(const char *url, char *out, size_t out_size) {
  redact_buf_t b = {out, out_size > 0 ? out_size - 1 : 0, 0};
  const char *end, *auth, *at, *p, *colon, *q;

  if (url == NULL)
    url = "";
  end = url + strlen(url);
  p = strstr(url, "://");
  auth = p != NULL ? p + 3 : url;
  at = NULL;
  for (p = auth; p < end; p++)
    if (*p == '@')
      at = p;
  if (at != NULL) {
    colon = memchr(auth, ':', (size_t)(at - auth));
    if (colon != NULL) {
      redact_put(&b, url, (size_t)(colon + 1 - url));
    } else {
      redact_put(&b, url, (size_t)(auth - url));
    }
    redact_put(&b, "***", 3);
    p = at;
  } else {
    p = url;
  }
  q = strchr(at != NULL ? at : auth, '?');
  if (q == NULL) {
    redact_put(&b, p, (size_t)(end - p));
  } else {
    redact_put(&b, p, (size_t)(q + 1 - p));
    redact_query(&b, q + 1, end);
  }
  if (out_size > 0)
    out[b.len < b.cap ? b.len : b.cap] = '\0';
  return b.len;
}
