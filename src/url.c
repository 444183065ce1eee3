/* url.c -- parsing of backend URLs (redis://, unix://, memory://). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int url_hex(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Decodes %XX escapes of [s, s+len) into a new NUL-terminated string.
 * Returns 0, FLEET_EBADURL on a bad escape or an escaped NUL, or
 * FLEET_ENOMEM. */
static int url_decode(const char *s, size_t len, char **out) {
  char *d = malloc(len + 1);
  size_t i, n = 0;

  if (d == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < len; i++) {
    if (s[i] == '%') {
      int hi = i + 2 < len ? url_hex(s[i + 1]) : -1;
      int lo = i + 2 < len ? url_hex(s[i + 2]) : -1;
      if (hi < 0 || lo < 0 || (hi | lo) == 0) {
        free(d);
        return FLEET_EBADURL;
      }
      d[n++] = (char)(hi * 16 + lo);
      i += 2;
    } else {
      d[n++] = s[i];
    }
  }
  d[n] = '\0';
  *out = d;
  return 0;
}

/* Parses a decimal number in [s, s+len) that must lie in [min, max]. */
static int url_number(const char *s, size_t len, long min, long max,
                      long *out) {
  long v = 0;
  size_t i;

  if (len == 0 || len > 10)
    return FLEET_EBADURL;
  for (i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return FLEET_EBADURL;
    v = v * 10 + (s[i] - '0');
  }
  if (v < min || v > max)
    return FLEET_EBADURL;
  *out = v;
  return 0;
}

static int url_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

/* user:password before the '@' of a redis:// URL. The password is required
 * (AUTH needs one); the user name is optional. */
static int url_userinfo(const char *s, size_t len, fleet__url_t *u) {
  const char *colon = memchr(s, ':', len);
  int err;

  if (colon == NULL)
    return FLEET_EBADURL;
  if (colon > s) {
    err = url_decode(s, (size_t)(colon - s), &u->user);
    if (err != 0)
      return err;
  }
  return url_decode(colon + 1, len - (size_t)(colon - s) - 1, &u->password);
}

/* host[:port] or [v6]:port. */
static int url_hostport(const char *s, size_t len, fleet__url_t *u) {
  const char *host = s, *rest;
  size_t hlen, i;
  long port = 6379;

  if (len > 0 && s[0] == '[') {
    const char *close = memchr(s, ']', len);
    if (close == NULL || close == s + 1)
      return FLEET_EBADURL;
    host = s + 1;
    hlen = (size_t)(close - host);
    for (i = 0; i < hlen; i++)
      if (!((host[i] >= '0' && host[i] <= '9') ||
            (host[i] >= 'a' && host[i] <= 'f') ||
            (host[i] >= 'A' && host[i] <= 'F') || host[i] == ':' ||
            host[i] == '.' || host[i] == '%'))
        return FLEET_EBADURL;
    rest = close + 1;
  } else {
    const char *colon = memchr(s, ':', len);
    hlen = colon != NULL ? (size_t)(colon - s) : len;
    for (i = 0; i < hlen; i++)
      if (!url_host_char(s[i]))
        return FLEET_EBADURL;
    rest = s + hlen;
  }
  if (hlen == 0)
    return FLEET_EBADURL;
  if (rest < s + len) {
    if (*rest != ':' ||
        url_number(rest + 1, (size_t)(s + len - rest - 1), 1, 65535, &port))
      return FLEET_EBADURL;
  }
  u->host = fleet__memdup(host, hlen);
  if (u->host == NULL)
    return FLEET_ENOMEM;
  u->port = (uint16_t)port;
  return 0;
}

static int url_parse_redis(const char *s, fleet__url_t *u) {
  const char *slash = strchr(s, '/');
  const char *end = slash != NULL ? slash : s + strlen(s);
  const char *at = NULL, *p;
  long db = 0;
  int err;

  /* The last '@' of the authority ends the user info, so that a password
   * may contain a literal '@'. */
  for (p = s; p < end; p++)
    if (*p == '@')
      at = p;
  if (at != NULL) {
    err = url_userinfo(s, (size_t)(at - s), u);
    if (err != 0)
      return err;
    s = at + 1;
  }
  err = url_hostport(s, (size_t)(end - s), u);
  if (err != 0)
    return err;
  if (slash != NULL && slash[1] != '\0') {
    if (url_number(slash + 1, strlen(slash + 1), 0, INT_MAX, &db))
      return FLEET_EBADURL;
  }
  u->db = (int)db;
  return 0;
}

/* unix:///path[?db=N][&user=U][&password=P] */
static int url_parse_unix(const char *s, fleet__url_t *u) {
  const char *q = strchr(s, '?');
  size_t plen = q != NULL ? (size_t)(q - s) : strlen(s);
  int err;

  if (plen < 2 || s[0] != '/')
    return FLEET_EBADURL;
  err = url_decode(s, plen, &u->path);
  if (err != 0)
    return err;
  while (q != NULL) {
    const char *name = q + 1;
    const char *amp = strchr(name, '&');
    const char *eq = strchr(name, '=');
    size_t vlen;
    long db;

    if (eq == NULL || (amp != NULL && eq > amp))
      return FLEET_EBADURL;
    vlen = amp != NULL ? (size_t)(amp - eq - 1) : strlen(eq + 1);
    if (eq - name == 2 && memcmp(name, "db", 2) == 0) {
      if (url_number(eq + 1, vlen, 0, INT_MAX, &db))
        return FLEET_EBADURL;
      u->db = (int)db;
    } else if (eq - name == 4 && memcmp(name, "user", 4) == 0 &&
               u->user == NULL) {
      err = url_decode(eq + 1, vlen, &u->user);
    } else if (eq - name == 8 && memcmp(name, "password", 8) == 0 &&
               u->password == NULL) {
      err = url_decode(eq + 1, vlen, &u->password);
    } else {
      return FLEET_EBADURL;
    }
    if (err != 0)
      return err;
    q = amp;
  }
  return 0;
}

int fleet__url_parse(const char *text, fleet__url_t *out) {
  size_t len;
  int err;

  memset(out, 0, sizeof(*out));
  if (text == NULL)
    return FLEET_EBADURL;
  len = strlen(text);
  if (len == 0 || len > FLEET__URL_MAX)
    return FLEET_EBADURL;
  if (strcmp(text, "memory://") == 0) {
    out->scheme = FLEET__URL_MEMORY;
    return 0;
  }
  if (strncmp(text, "redis://", 8) == 0) {
    out->scheme = FLEET__URL_REDIS;
    err = url_parse_redis(text + 8, out);
  } else if (strncmp(text, "unix://", 7) == 0) {
    out->scheme = FLEET__URL_UNIX;
    err = url_parse_unix(text + 7, out);
  } else {
    err = FLEET_EBADURL;
  }
  if (err != 0)
    fleet__url_free(out);
  return err;
}

void fleet__url_free(fleet__url_t *url) {
  free(url->host);
  free(url->path);
  free(url->user);
  free(url->password);
  url->host = url->path = url->user = url->password = NULL;
}
