/* dash_access.h -- who `fleet dash` answers: the Host names it serves
 * (against DNS rebinding), the origins it takes a change from (against
 * cross-site requests), and its optional token (a bearer header or a
 * cookie, compared in constant time). Pure checks on strings, no I/O: the
 * server (dash.c) calls them on each request. */
#ifndef FLEET_CLI_DASH_ACCESS_H
#define FLEET_CLI_DASH_ACCESS_H

#include <stddef.h>

#include <sys/socket.h>

/* Longest host name kept (an --allow-host NAME, a listen address). */
#define DASH_NAME_MAX 253
/* Most --allow-host names. */
#define DASH_ALLOW_MAX 16
/* Longest token. */
#define DASH_TOKEN_MAX 256

typedef struct {
  char name[DASH_NAME_MAX + 1]; /* lower case; an IPv6 address in [] */
  int port; /* DASH_PORT_LISTEN, DASH_PORT_ANY or the one port */
} dash_host_t;

/* The listen port, or no port in Host (the loopback names and the listen
 * address). */
#define DASH_PORT_LISTEN -2
/* Any port, or none (an --allow-host NAME without a port). */
#define DASH_PORT_ANY -1

typedef struct {
  dash_host_t hosts[DASH_ALLOW_MAX + 4]; /* loopback names, listen, allowed */
  size_t n;
  int port;                       /* the listen port */
  char token[DASH_TOKEN_MAX + 1]; /* "" when no token is required */
  size_t token_len;
  char cookie[32]; /* the cookie's name: "fleet_dash_<port>" */
} dash_access_t;

/* Sets up `a` for a dashboard listening on `listen_host` (an IP address
 * as given to --listen, without brackets) and `port`: the names localhost,
 * 127.0.0.1, [::1] and the listen address are allowed; no token. */
void dash_access_init(dash_access_t *a, const char *listen_host, int port);

/* Adds an --allow-host value: NAME (any port) or NAME:PORT (that port
 * only); NAME is a DNS name or an IP address ([...] for IPv6). Returns 0,
 * or -1 when it is malformed or there are too many (nothing added). */
int dash_access_allow(dash_access_t *a, const char *spec);

/* Requires `token` on every request. Returns 0, or -1 when it is empty,
 * longer than DASH_TOKEN_MAX or holds a byte other than a letter, a digit
 * or one of "-._~" (the bytes a URL and a cookie carry unescaped). */
int dash_access_set_token(dash_access_t *a, const char *token);

/* Whether a request's Host value (`len` bytes) names this dashboard. */
int dash_host_allowed(const dash_access_t *a, const char *host, size_t len);

/* Whether an Origin value is this dashboard's own origin: http or https,
 * and a host allowed as in dash_host_allowed() whose port (explicit, or
 * the scheme's default) is the listen port for the loopback names and the
 * listen address, the given port for an --allow-host NAME:PORT, any for an
 * --allow-host NAME. "null" and anything malformed are not. */
int dash_origin_allowed(const dash_access_t *a, const char *origin, size_t len);

/* Whether `got` (`len` bytes) is the token; in time that does not depend
 * on where `got` differs. 0 when no token is set. */
int dash_token_equal(const dash_access_t *a, const char *got, size_t len);

/* Whether an Authorization value is "Bearer <token>". */
int dash_bearer_ok(const dash_access_t *a, const char *value, size_t len);

/* Whether a Cookie value holds the dashboard's cookie with the token. */
int dash_cookie_ok(const dash_access_t *a, const char *value, size_t len);

/* Whether `sa` is a loopback address (127.0.0.0/8, ::1, or ::ffff:127.x). */
int dash_addr_loopback(const struct sockaddr *sa);

#endif /* FLEET_CLI_DASH_ACCESS_H */
