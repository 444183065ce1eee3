/* url.c -- parsing of backend URLs: redis://, rediss://, redis+cluster://,
 * redis+sentinel:// (each with a TLS twin "rediss+..."), unix://, memory://.
 * Refusals say in out->error what is wrong without quoting secrets. */
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
      int hi = i + 2 < len ? fleet__hex_digit(s[i + 1]) : -1;
      int lo = i + 2 < len ? fleet__hex_digit(s[i + 2]) : -1;
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

/* Records why the URL is refused; returns FLEET_EBADURL. */
static int url_err(fleet__url_t *u, const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(u->error, sizeof(u->error), fmt, ap);
  va_end(ap);
  return FLEET_EBADURL;
}

/* url_decode() with the refusal worded for `what` ("the password"). */
static int url_decode_named(fleet__url_t *u, const char *s, size_t len,
                            const char *what, char **out) {
  int err = url_decode(s, len, out);

  if (err == FLEET_EBADURL)
    return url_err(u, "%s has a bad %%-escape (or an escaped NUL)", what);
  return err;
}

static int url_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

/* user:password before the '@'. The password is required (AUTH needs one);
 * the user name is optional. */
static int url_userinfo(const char *s, size_t len, fleet__url_t *u) {
  const char *colon = memchr(s, ':', len);
  int err;

  if (colon == NULL)
    return url_err(u, "the user info before '@' needs a ':' and a password "
                      "(\"user:password@\" or \":password@\")");
  if (colon > s) {
    err =
        url_decode_named(u, s, (size_t)(colon - s), "the user name", &u->user);
    if (err != 0)
      return err;
  }
  return url_decode_named(u, colon + 1, len - (size_t)(colon - s) - 1,
                          "the password", &u->password);
}

/* host[:port] or [v6]:port, the `index`th of the list (for messages). */
static int url_hostport(const char *s, size_t len, uint16_t default_port,
                        size_t index, fleet__url_host_t *out, fleet__url_t *u) {
  const char *host = s, *rest;
  size_t hlen, i;
  long port = default_port;

  if (len > 0 && s[0] == '[') {
    const char *close = memchr(s, ']', len);
    if (close == NULL || close == s + 1)
      return url_err(u, "host %zu: an IPv6 literal needs a closing ']'",
                     index + 1);
    host = s + 1;
    hlen = (size_t)(close - host);
    for (i = 0; i < hlen; i++)
      if (!((host[i] >= '0' && host[i] <= '9') ||
            (host[i] >= 'a' && host[i] <= 'f') ||
            (host[i] >= 'A' && host[i] <= 'F') || host[i] == ':' ||
            host[i] == '.' || host[i] == '%'))
        return url_err(u, "host %zu: bad character in an IPv6 literal",
                       index + 1);
    rest = close + 1;
  } else {
    const char *colon = memchr(s, ':', len);
    hlen = colon != NULL ? (size_t)(colon - s) : len;
    for (i = 0; i < hlen; i++)
      if (!url_host_char(s[i]))
        return url_err(u,
                       "host %zu: bad character in the host name (a "
                       "password with '/', '?' or '#' must be %%-escaped)",
                       index + 1);
    rest = s + hlen;
  }
  if (hlen == 0)
    return url_err(u, "host %zu is empty", index + 1);
  if (rest < s + len) {
    if (*rest != ':' ||
        url_number(rest + 1, (size_t)(s + len - rest - 1), 1, 65535, &port))
      return url_err(u, "host %zu: the port must be a number in 1..65535",
                     index + 1);
  }
  out->host = fleet__memdup(host, hlen);
  if (out->host == NULL)
    return FLEET_ENOMEM;
  out->port = (uint16_t)port;
  return 0;
}

/* The comma-separated host list in [s, s+len). */
static int url_hosts(const char *s, size_t len, uint16_t default_port,
                     fleet__url_t *u) {
  size_t n = 1, i;
  const char *p = s, *end = s + len;
  int err;

  for (i = 0; i < len; i++)
    if (s[i] == ',')
      n++;
  if (len == 0)
    return url_err(u, "no host");
  if (n > FLEET__URL_HOSTS_MAX)
    return url_err(u, "more than %d hosts", FLEET__URL_HOSTS_MAX);
  if (n > 1 && u->scheme == FLEET__URL_REDIS)
    return url_err(u, "redis:// and rediss:// take one host; use "
                      "redis+cluster:// or redis+sentinel:// for several");
  u->hosts = calloc(n, sizeof(*u->hosts));
  if (u->hosts == NULL)
    return FLEET_ENOMEM;
  for (i = 0; i < n; i++) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *hend = comma != NULL ? comma : end;
    err = url_hostport(p, (size_t)(hend - p), default_port, i, &u->hosts[i], u);
    if (err != 0)
      return err;
    u->nhosts++;
    p = hend + 1;
  }
  u->host = u->hosts[0].host;
  u->port = u->hosts[0].port;
  return 0;
}

/* One name=value query option of a network URL. */
static int url_option(const char *name, size_t nlen, const char *value,
                      size_t vlen, fleet__url_t *u) {
  static const struct {
    const char *name;
    size_t offset; /* of the char * in fleet__url_t */
    int sentinel;  /* 1: sentinel schemes only; 0: TLS schemes only */
  } strings[] = {
      {"tls_ca_file", offsetof(fleet__url_t, tls_opts.ca_file), 0},
      {"tls_ca_dir", offsetof(fleet__url_t, tls_opts.ca_dir), 0},
      {"tls_cert", offsetof(fleet__url_t, tls_opts.cert), 0},
      {"tls_key", offsetof(fleet__url_t, tls_opts.key), 0},
      {"tls_server_name", offsetof(fleet__url_t, tls_opts.server_name), 0},
      {"sentinel_user", offsetof(fleet__url_t, sentinel_user), 1},
      {"sentinel_password", offsetof(fleet__url_t, sentinel_password), 1},
  };
  char what[48];
  size_t i;

  if (nlen == 10 && memcmp(name, "tls_verify", 10) == 0) {
    if (!u->tls)
      return url_err(u, "option tls_verify needs a TLS scheme (rediss://, "
                        "rediss+cluster://, rediss+sentinel://)");
    if (vlen != 1 || (value[0] != '0' && value[0] != '1'))
      return url_err(u, "option tls_verify must be 0 or 1");
    u->tls_opts.verify = value[0] - '0';
    return 0;
  }
  for (i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
    char **field;
    if (strlen(strings[i].name) != nlen ||
        memcmp(strings[i].name, name, nlen) != 0)
      continue;
    if (strings[i].sentinel && u->scheme != FLEET__URL_SENTINEL)
      return url_err(u,
                     "option %s needs a sentinel scheme "
                     "(redis+sentinel:// or rediss+sentinel://)",
                     strings[i].name);
    if (!strings[i].sentinel && !u->tls)
      return url_err(u,
                     "option %s needs a TLS scheme (rediss://, "
                     "rediss+cluster://, rediss+sentinel://)",
                     strings[i].name);
    field = (char **)(void *)((char *)u + strings[i].offset);
    if (*field != NULL)
      return url_err(u, "option %s is given twice", strings[i].name);
    if (vlen == 0)
      return url_err(u, "option %s is empty", strings[i].name);
    snprintf(what, sizeof(what), "option %s", strings[i].name);
    return url_decode_named(u, value, vlen, what, field);
  }
  return url_err(u, "unknown option \"%.*s\"", (int)(nlen > 40 ? 40 : nlen),
                 name);
}

/* The query after '?': name=value pairs joined by '&'. */
static int url_query(const char *q, fleet__url_t *u) {
  while (*q != '\0') {
    size_t plen = strcspn(q, "&");
    const char *eq = memchr(q, '=', plen);
    int err;

    if (plen == 0)
      return url_err(u, "an empty query option");
    if (eq == NULL || eq == q)
      return url_err(u, "query options are name=value pairs");
    err =
        url_option(q, (size_t)(eq - q), eq + 1, plen - (size_t)(eq - q) - 1, u);
    if (err != 0)
      return err;
    q += plen;
    if (*q == '&')
      q++;
  }
  if ((u->tls_opts.cert == NULL) != (u->tls_opts.key == NULL))
    return url_err(u, "options tls_cert and tls_key go together");
  return 0;
}

/* A database number path segment in [s, s+len). */
static int url_db(const char *s, size_t len, fleet__url_t *u) {
  long db;

  if (url_number(s, len, 0, INT_MAX, &db))
    return url_err(u, "the database must be a number in 0..%d", INT_MAX);
  u->db = (int)db;
  return 0;
}

/* Everything after "<scheme>://" of the network schemes. */
static int url_parse_net(const char *s, fleet__url_t *u) {
  size_t alen = strcspn(s, "/?#");
  const char *at = NULL, *p, *hosts, *path, *query;
  size_t plen;
  int err;

  /* The last '@' of the authority ends the user info, so that a password
   * may contain a literal '@' (but '/', '?' and '#' must be escaped). */
  for (p = s; p < s + alen; p++)
    if (*p == '@')
      at = p;
  hosts = s;
  if (at == NULL && u->scheme != FLEET__URL_SENTINEL && s[alen] == '/' &&
      memchr(s, '@', strcspn(s, "?#")))
    return url_err(u, "an '@' after the host: a password holding '/', '?' "
                      "or '#' must have them %%-escaped");
  if (at != NULL) {
    err = url_userinfo(s, (size_t)(at - s), u);
    if (err != 0)
      return err;
    hosts = at + 1;
  }
  if (s[alen] == '#')
    return url_err(u, "a URL fragment ('#') is not allowed");
  err = url_hosts(hosts, (size_t)(s + alen - hosts),
                  u->scheme == FLEET__URL_SENTINEL ? 26379 : 6379, u);
  if (err != 0)
    return err;
  path = s + alen;
  plen = strcspn(path, "?#");
  query = path[plen] == '?' ? path + plen + 1 : NULL;
  if (path[plen] == '#' || (query != NULL && strchr(query, '#') != NULL))
    return url_err(u, "a URL fragment ('#') is not allowed");
  if (plen > 0) { /* skip the leading '/' */
    path++;
    plen--;
  }
  switch (u->scheme) {
    case FLEET__URL_CLUSTER:
      if (plen > 0)
        return url_err(u, "a cluster URL takes no database (a cluster has "
                          "only database 0)");
      break;
    case FLEET__URL_SENTINEL: {
      const char *slash = memchr(path, '/', plen);
      size_t nlen = slash != NULL ? (size_t)(slash - path) : plen;
      if (nlen == 0)
        return url_err(u, "a sentinel URL needs the master's name: "
                          "redis+sentinel://host:port/<master-name>[/db]");
      err = url_decode_named(u, path, nlen, "the master name", &u->master_name);
      if (err != 0)
        return err;
      if (slash != NULL && slash + 1 < path + plen) {
        err = url_db(slash + 1, (size_t)(path + plen - slash - 1), u);
        if (err != 0)
          return err;
      }
      break;
    }
    default:
      if (plen > 0) {
        err = url_db(path, plen, u);
        if (err != 0)
          return err;
      }
      break;
  }
  return query != NULL ? url_query(query, u) : 0;
}

/* unix:///path[?db=N][&user=U][&password=P] */
static int url_parse_unix(const char *s, fleet__url_t *u) {
  const char *q = strchr(s, '?');
  size_t plen = q != NULL ? (size_t)(q - s) : strlen(s);
  int err;

  if (plen < 2 || s[0] != '/')
    return url_err(u, "unix:// needs an absolute socket path "
                      "(unix:///path/to/redis.sock)");
  err = url_decode_named(u, s, plen, "the socket path", &u->path);
  if (err != 0)
    return err;
  while (q != NULL) {
    const char *name = q + 1;
    const char *amp = strchr(name, '&');
    const char *eq = strchr(name, '=');
    size_t vlen;

    if (eq == NULL || (amp != NULL && eq > amp))
      return url_err(u, "query options are name=value pairs");
    vlen = amp != NULL ? (size_t)(amp - eq - 1) : strlen(eq + 1);
    if (eq - name == 2 && memcmp(name, "db", 2) == 0) {
      err = url_db(eq + 1, vlen, u);
    } else if (eq - name == 4 && memcmp(name, "user", 4) == 0 &&
               u->user == NULL) {
      err = url_decode_named(u, eq + 1, vlen, "the user name", &u->user);
    } else if (eq - name == 8 && memcmp(name, "password", 8) == 0 &&
               u->password == NULL) {
      err = url_decode_named(u, eq + 1, vlen, "the password", &u->password);
    } else {
      return url_err(u, "unix:// takes the options db, user and password, "
                        "each once");
    }
    if (err != 0)
      return err;
    q = amp;
  }
  return 0;
}

static const struct {
  const char *prefix;
  fleet__url_scheme_t scheme;
  int tls;
} url_schemes[] = {
    {"redis://", FLEET__URL_REDIS, 0},
    {"rediss://", FLEET__URL_REDIS, 1},
    {"redis+cluster://", FLEET__URL_CLUSTER, 0},
    {"rediss+cluster://", FLEET__URL_CLUSTER, 1},
    {"redis+sentinel://", FLEET__URL_SENTINEL, 0},
    {"rediss+sentinel://", FLEET__URL_SENTINEL, 1},
};

int fleet__url_parse(const char *text, fleet__url_t *out) {
  char error[FLEET__URL_ERROR_MAX];
  size_t len, i;
  int err;

  memset(out, 0, sizeof(*out));
  if (text == NULL)
    return url_err(out, "no URL");
  len = strlen(text);
  if (len == 0)
    return url_err(out, "the URL is empty");
  if (len > FLEET__URL_MAX)
    return url_err(out, "the URL is longer than %d bytes", FLEET__URL_MAX);
  if (strcmp(text, "memory://") == 0) {
    out->scheme = FLEET__URL_MEMORY;
    return 0;
  }
  err = -1;
  for (i = 0; i < sizeof(url_schemes) / sizeof(url_schemes[0]); i++) {
    size_t plen = strlen(url_schemes[i].prefix);
    if (strncmp(text, url_schemes[i].prefix, plen) == 0) {
      out->scheme = url_schemes[i].scheme;
      out->tls = url_schemes[i].tls;
      out->tls_opts.verify = 1;
      err = url_parse_net(text + plen, out);
      break;
    }
  }
  if (err == -1) {
    if (strncmp(text, "unix://", 7) == 0) {
      out->scheme = FLEET__URL_UNIX;
      err = url_parse_unix(text + 7, out);
    } else if (strncmp(text, "memory://", 9) == 0) {
      err = url_err(out, "memory:// takes nothing after the scheme");
    } else {
      err = url_err(out, "unknown scheme (fleet takes redis://, rediss://, "
                         "redis[s]+cluster://, redis[s]+sentinel://, "
                         "unix://, memory://)");
    }
  }
  if (err != 0) {
    memcpy(error, out->error, sizeof(error));
    fleet__url_free(out);
    memcpy(out->error, error, sizeof(error));
    if (err == FLEET_ENOMEM)
      snprintf(out->error, sizeof(out->error), "out of memory");
  }
  return err;
}

static void url_tls_free(fleet__url_tls_t *t) {
  free(t->ca_file);
  free(t->ca_dir);
  free(t->cert);
  free(t->key);
  free(t->server_name);
  t->ca_file = t->ca_dir = t->cert = t->key = t->server_name = NULL;
}

void fleet__url_free(fleet__url_t *url) {
  size_t i;

  for (i = 0; i < url->nhosts; i++)
    free(url->hosts[i].host);
  free(url->hosts);
  url->hosts = NULL;
  url->nhosts = 0;
  url->host = NULL;
  free(url->path);
  free(url->user);
  free(url->password);
  free(url->master_name);
  free(url->sentinel_user);
  free(url->sentinel_password);
  url->path = url->user = url->password = NULL;
  url->master_name = url->sentinel_user = url->sentinel_password = NULL;
  url_tls_free(&url->tls_opts);
}

/* Copies a string that may be NULL; returns 0 or FLEET_ENOMEM. */
static int url_copy(const char *s, char **out) {
  *out = NULL;
  if (s == NULL)
    return 0;
  *out = fleet__strdup(s);
  return *out != NULL ? 0 : FLEET_ENOMEM;
}

int fleet__url_node(const fleet__url_t *base, const char *host, uint16_t port,
                    int sentinel, fleet__url_t *out) {
  const fleet__url_tls_t *t = &base->tls_opts;
  int err = 0;

  memset(out, 0, sizeof(*out));
  out->scheme = FLEET__URL_REDIS;
  out->tls = base->tls;
  out->tls_opts.verify = t->verify;
  out->hosts = calloc(1, sizeof(*out->hosts));
  if (out->hosts == NULL)
    return FLEET_ENOMEM;
  out->nhosts = 1;
  err |= url_copy(host, &out->hosts[0].host);
  out->hosts[0].port = port;
  out->host = out->hosts[0].host;
  out->port = port;
  err |= url_copy(sentinel ? base->sentinel_user : base->user, &out->user);
  err |= url_copy(sentinel ? base->sentinel_password : base->password,
                  &out->password);
  out->db = sentinel ? 0 : base->db;
  err |= url_copy(t->ca_file, &out->tls_opts.ca_file);
  err |= url_copy(t->ca_dir, &out->tls_opts.ca_dir);
  err |= url_copy(t->cert, &out->tls_opts.cert);
  err |= url_copy(t->key, &out->tls_opts.key);
  err |= url_copy(t->server_name, &out->tls_opts.server_name);
  if (err != 0 || out->host == NULL) {
    fleet__url_free(out);
    return FLEET_ENOMEM;
  }
  return 0;
}
