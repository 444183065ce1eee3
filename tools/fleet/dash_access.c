/* dash_access.c -- see dash_access.h.
 *
 * Why Host: a page on a name the attacker controls can have that name
 * resolve to 127.0.0.1 after it loaded (DNS rebinding); its requests then
 * reach the dashboard from the page's own origin, so that no custom
 * header or same-origin rule stops them, but they carry the attacker's
 * name in Host. Only the names of this machine's loopback, the listen
 * address and the names the operator allowed are answered.
 *
 * Why Origin: a browser sends Origin with every cross-site POST; a change
 * whose Origin is not the dashboard's own is refused, whatever else the
 * request carries. A request without Origin (curl, scripts) is not from a
 * page of another site: browsers send Origin on every POST. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "dash_access.h"

/* ------------------------------------------------------------------------ */
/* Host names and ports                                                     */

static int access_name_byte(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
         (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
}

/* Splits an authority "name[:port]" (`len` bytes; "[v6]" keeps its
 * brackets) into its name and port (-1 when absent). Returns 0, or -1
 * when it is malformed: an empty name, a byte no host name holds, an
 * empty or out-of-range port. */
static int access_split(const char *s, size_t len, const char **name,
                        size_t *nlen, long *port) {
  size_t i = 0;

  if (len == 0)
    return -1;
  if (s[0] == '[') {
    while (i < len && s[i] != ']') {
      if (i > 0 &&
          !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
            (s[i] >= 'A' && s[i] <= 'F') || s[i] == ':' || s[i] == '.'))
        return -1;
      i++;
    }
    if (i == len || i < 2)
      return -1;
    i++;
  } else {
    while (i < len && s[i] != ':') {
      if (!access_name_byte(s[i]))
        return -1;
      i++;
    }
    if (i == 0)
      return -1;
  }
  *name = s;
  *nlen = i;
  *port = -1;
  if (i == len)
    return 0;
  if (s[i] != ':' || i + 1 == len || len - i - 1 > 5)
    return -1;
  for (*port = 0, i++; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    *port = *port * 10 + (s[i] - '0');
  }
  return *port <= 65535 ? 0 : -1;
}

static int access_add(dash_access_t *a, const char *name, size_t len,
                      int port) {
  size_t i;

  if (a->n == sizeof(a->hosts) / sizeof(a->hosts[0]) || len > DASH_NAME_MAX)
    return -1;
  for (i = 0; i < len; i++)
    a->hosts[a->n].name[i] =
        name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] + 32) : name[i];
  a->hosts[a->n].name[len] = '\0';
  a->hosts[a->n].port = port;
  a->n++;
  return 0;
}

void dash_access_init(dash_access_t *a, const char *listen_host, int port) {
  char v6[DASH_NAME_MAX + 1];

  memset(a, 0, sizeof(*a));
  a->port = port;
  snprintf(a->cookie, sizeof(a->cookie), "fleet_dash_%d", port);
  access_add(a, "localhost", 9, DASH_PORT_LISTEN);
  access_add(a, "127.0.0.1", 9, DASH_PORT_LISTEN);
  access_add(a, "[::1]", 5, DASH_PORT_LISTEN);
  if (strchr(listen_host, ':') != NULL) {
    snprintf(v6, sizeof(v6), "[%s]", listen_host);
    access_add(a, v6, strlen(v6), DASH_PORT_LISTEN);
  } else {
    access_add(a, listen_host, strlen(listen_host), DASH_PORT_LISTEN);
  }
}

int dash_access_allow(dash_access_t *a, const char *spec) {
  const char *name;
  size_t nlen;
  long port;

  if (a->n == sizeof(a->hosts) / sizeof(a->hosts[0]) ||
      access_split(spec, strlen(spec), &name, &nlen, &port) != 0 || port == 0)
    return -1;
  return access_add(a, name, nlen, port < 0 ? DASH_PORT_ANY : (int)port);
}

int dash_access_set_token(dash_access_t *a, const char *token) {
  size_t i, len = strlen(token);

  if (len == 0 || len > DASH_TOKEN_MAX)
    return -1;
  for (i = 0; i < len; i++)
    if (!access_name_byte(token[i]) && token[i] != '~')
      return -1;
  memcpy(a->token, token, len + 1);
  a->token_len = len;
  return 0;
}

/* Whether `name` with `port` (-1: none given; `dflt`: the port a missing
 * one means, -1 in Host where no port is fine) is allowed. */
static int access_match(const dash_access_t *a, const char *name, size_t nlen,
                        long port, long dflt) {
  size_t i;

  for (i = 0; i < a->n; i++) {
    const dash_host_t *h = &a->hosts[i];
    long want = port >= 0 ? port : dflt;

    if (strlen(h->name) != nlen || strncasecmp(h->name, name, nlen) != 0)
      continue;
    if (h->port == DASH_PORT_ANY ||
        (h->port == DASH_PORT_LISTEN && (want < 0 || want == a->port)) ||
        (h->port >= 0 && want == h->port))
      return 1;
  }
  return 0;
}

int dash_host_allowed(const dash_access_t *a, const char *host, size_t len) {
  const char *name;
  size_t nlen;
  long port;

  return access_split(host, len, &name, &nlen, &port) == 0 &&
         access_match(a, name, nlen, port, -1);
}

int dash_origin_allowed(const dash_access_t *a, const char *origin,
                        size_t len) {
  const char *name;
  size_t nlen, skip;
  long port, dflt;

  if (len > 7 && strncasecmp(origin, "http://", 7) == 0) {
    skip = 7;
    dflt = 80;
  } else if (len > 8 && strncasecmp(origin, "https://", 8) == 0) {
    skip = 8;
    dflt = 443;
  } else {
    return 0;
  }
  return access_split(origin + skip, len - skip, &name, &nlen, &port) == 0 &&
         access_match(a, name, nlen, port, dflt);
}

/* ------------------------------------------------------------------------ */
/* The token                                                                */

int dash_token_equal(const dash_access_t *a, const char *got, size_t len) {
  volatile unsigned char diff = len != a->token_len;
  size_t i;

  if (a->token_len == 0)
    return 0;
  /* As many steps as the token has bytes, whatever `got` holds. */
  for (i = 0; i < a->token_len; i++)
    diff |= (unsigned char)(a->token[i] ^ (i < len ? got[i] : 0));
  return diff == 0;
}

int dash_bearer_ok(const dash_access_t *a, const char *value, size_t len) {
  return len > 7 && strncasecmp(value, "Bearer ", 7) == 0 &&
         dash_token_equal(a, value + 7, len - 7);
}

int dash_cookie_ok(const dash_access_t *a, const char *value, size_t len) {
  size_t clen = strlen(a->cookie), i = 0, end;
  int ok = 0;

  /* "name=value; name=value": every pair of our name is tried. */
  while (i < len) {
    while (i < len && (value[i] == ' ' || value[i] == ';'))
      i++;
    for (end = i; end < len && value[end] != ';'; end++)
      ;
    if (end - i > clen && memcmp(value + i, a->cookie, clen) == 0 &&
        value[i + clen] == '=')
      ok |= dash_token_equal(a, value + i + clen + 1, end - i - clen - 1);
    i = end;
  }
  return ok;
}

int dash_addr_loopback(const struct sockaddr *sa) {
  if (sa->sa_family == AF_INET)
    return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) ==
           127;
  if (sa->sa_family == AF_INET6) {
    const struct in6_addr *in6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;

    return IN6_IS_ADDR_LOOPBACK(in6) ||
           (IN6_IS_ADDR_V4MAPPED(in6) && in6->s6_addr[12] == 127);
  }
  return 0;
}
