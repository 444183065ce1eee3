/* url.c -- parsing of backend URLs: redis://, rediss://, redis+cluster://,
 * redis+sentinel:// (each with a TLS twin "rediss+..."), unix://, memory://.
 * Every scheme but memory:// takes query options from one table, each at
 * most once; a '#' anywhere is refused (fleet takes no fragment, and a
 * '#' in a password must be %23). Refusals say in out->error what is
 * wrong without quoting secrets. */
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "url.h"
#include "util.h"

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

/* A database number path segment in [s, s+len). */
static int url_db(const char *s, size_t len, fleet__url_t *u) {
  long db;

  if (url_number(s, len, 0, INT_MAX, &db))
    return url_err(u, "the database must be a number in 0..%d", INT_MAX);
  u->db = (int)db;
  return 0;
}

/* Which schemes take a query option. */
enum {
  URL_ON_TLS = 1,      /* the TLS schemes (rediss://, rediss+...://) */
  URL_ON_SENTINEL = 2, /* redis[s]+sentinel:// */
  URL_ON_UNIX = 4,     /* unix:// */
  URL_ON_REDIS = 8     /* every Redis scheme (all but memory://) */
};

/* How an option's value is read. */
typedef enum {
  URL_OPT_STRING, /* %-decoded into a char * */
  URL_OPT_BOOL,   /* 0 or 1 into an int */
  URL_OPT_DB,     /* a database number into an int */
  URL_OPT_U32     /* a number in [min, max] into a uint32_t */
} url_opt_kind_t;

/* The query options, each at most once in a URL. */
static const struct {
  const char *name;
  int on;               /* URL_ON_* */
  const char *on_words; /* the schemes that take it, for refusals */
  url_opt_kind_t kind;
  size_t offset; /* of the field in fleet__url_t */
  long min, max; /* URL_OPT_U32 */
} url_options[] = {
#define URL_TLS_WORDS                                                          \
  "a TLS scheme (rediss://, rediss+cluster://, "                               \
  "rediss+sentinel://)"
#define URL_SEN_WORDS                                                          \
  "a sentinel scheme (redis+sentinel:// or "                                   \
  "rediss+sentinel://)"
    {"tls_ca_file", URL_ON_TLS, URL_TLS_WORDS, URL_OPT_STRING,
     offsetof(fleet__url_t, tls_opts.ca_file), 0, 0},
    {"tls_ca_dir", URL_ON_TLS, URL_TLS_WORDS, URL_OPT_STRING,
     offsetof(fleet__url_t, tls_opts.ca_dir), 0, 0},
    {"tls_cert", URL_ON_TLS, URL_TLS_WORDS, URL_OPT_STRING,
     offsetof(fleet__url_t, tls_opts.cert), 0, 0},
    {"tls_key", URL_ON_TLS, URL_TLS_WORDS, URL_OPT_STRING,
     offsetof(fleet__url_t, tls_opts.key), 0, 0},
    {"tls_server_name", URL_ON_TLS, URL_TLS_WORDS, URL_OPT_STRING,
     offsetof(fleet__url_t, tls_opts.server_name), 0, 0},
    {"tls_verify", URL_ON_TLS, URL_TLS_WORDS, URL_OPT_BOOL,
     offsetof(fleet__url_t, tls_opts.verify), 0, 1},
    {"sentinel_user", URL_ON_SENTINEL, URL_SEN_WORDS, URL_OPT_STRING,
     offsetof(fleet__url_t, sentinel_user), 0, 0},
    {"sentinel_password", URL_ON_SENTINEL, URL_SEN_WORDS, URL_OPT_STRING,
     offsetof(fleet__url_t, sentinel_password), 0, 0},
    {"db", URL_ON_UNIX, "unix:// (other schemes take it as the path)",
     URL_OPT_DB, offsetof(fleet__url_t, db), 0, 0},
    {"user", URL_ON_UNIX, "unix:// (other schemes take it before '@')",
     URL_OPT_STRING, offsetof(fleet__url_t, user), 0, 0},
    {"password", URL_ON_UNIX, "unix:// (other schemes take it before '@')",
     URL_OPT_STRING, offsetof(fleet__url_t, password), 0, 0},
    {"wait_replicas", URL_ON_REDIS, "a Redis scheme", URL_OPT_U32,
     offsetof(fleet__url_t, wait_replicas), 0, FLEET__URL_WAIT_REPLICAS_MAX},
    {"wait_timeout_ms", URL_ON_REDIS, "a Redis scheme", URL_OPT_U32,
     offsetof(fleet__url_t, wait_timeout_ms), 1, FLEET__URL_WAIT_TIMEOUT_MAX},
    {"functions", URL_ON_REDIS, "a Redis scheme", URL_OPT_BOOL,
     offsetof(fleet__url_t, functions), 0, 1},
#undef URL_TLS_WORDS
#undef URL_SEN_WORDS
};

/* Which URL_ON_* bits the URL's scheme has. */
static int url_on(const fleet__url_t *u) {
  int on = URL_ON_REDIS;

  if (u->tls)
    on |= URL_ON_TLS;
  if (u->scheme == FLEET__URL_SENTINEL)
    on |= URL_ON_SENTINEL;
  if (u->scheme == FLEET__URL_UNIX)
    on |= URL_ON_UNIX;
  return on;
}

/* One name=value query option; `seen` has a bit per url_options[] entry
 * already given. */
static int url_option(const char *name, size_t nlen, const char *value,
                      size_t vlen, uint32_t *seen, fleet__url_t *u) {
  char what[48];
  size_t i;

  for (i = 0; i < FLEET__ARRAY_SIZE(url_options); i++) {
    const char *oname = url_options[i].name;
    void *field = (char *)u + url_options[i].offset;
    long v;

    if (strlen(oname) != nlen || memcmp(oname, name, nlen) != 0)
      continue;
    if (!(url_on(u) & url_options[i].on))
      return url_err(u, "option %s needs %s", oname, url_options[i].on_words);
    if (*seen & (1u << i))
      return url_err(u, "option %s is given twice", oname);
    *seen |= 1u << i;
    switch (url_options[i].kind) {
      case URL_OPT_STRING:
        if (vlen == 0)
          return url_err(u, "option %s is empty", oname);
        snprintf(what, sizeof(what), "option %s", oname);
        return url_decode_named(u, value, vlen, what, (char **)field);
      case URL_OPT_BOOL:
        if (vlen != 1 || (value[0] != '0' && value[0] != '1'))
          return url_err(u, "option %s must be 0 or 1", oname);
        *(int *)field = value[0] - '0';
        return 0;
      case URL_OPT_DB:
        return url_db(value, vlen, u);
      case URL_OPT_U32:
        if (url_number(value, vlen, url_options[i].min, url_options[i].max, &v))
          return url_err(u, "option %s must be a number in %ld..%ld", oname,
                         url_options[i].min, url_options[i].max);
        *(uint32_t *)field = (uint32_t)v;
        return 0;
    }
  }
  return url_err(u, "unknown option \"%.*s\"", (int)(nlen > 40 ? 40 : nlen),
                 name);
}

/* The query after '?': name=value pairs joined by '&'. */
static int url_query(const char *q, fleet__url_t *u) {
  uint32_t seen = 0;

  while (*q != '\0') {
    size_t plen = strcspn(q, "&");
    const char *eq = memchr(q, '=', plen);
    int err;

    if (plen == 0)
      return url_err(u, "an empty query option");
    if (eq == NULL || eq == q)
      return url_err(u, "query options are name=value pairs");
    err = url_option(q, (size_t)(eq - q), eq + 1, plen - (size_t)(eq - q) - 1,
                     &seen, u);
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

/* Everything after "<scheme>://" of the network schemes. */
static int url_parse_net(const char *s, fleet__url_t *u) {
  size_t alen = strcspn(s, "/?");
  const char *at = NULL, *p, *hosts, *path, *query;
  size_t plen;
  int err;

  /* The last '@' of the authority ends the user info, so that a password
   * may contain a literal '@' (but '/', '?' and '#' must be escaped; a URL
   * with a '#' never gets here). */
  for (p = s; p < s + alen; p++)
    if (*p == '@')
      at = p;
  hosts = s;
  if (at == NULL && u->scheme != FLEET__URL_SENTINEL && s[alen] == '/' &&
      memchr(s, '@', strcspn(s, "?")))
    return url_err(u, "an '@' after the host: a password holding '/', '?' "
                      "or '#' must have them %%-escaped");
  if (at != NULL) {
    err = url_userinfo(s, (size_t)(at - s), u);
    if (err != 0)
      return err;
    hosts = at + 1;
  }
  err = url_hosts(hosts, (size_t)(s + alen - hosts),
                  u->scheme == FLEET__URL_SENTINEL ? 26379 : 6379, u);
  if (err != 0)
    return err;
  path = s + alen;
  plen = strcspn(path, "?");
  query = path[plen] == '?' ? path + plen + 1 : NULL;
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

/* unix:///path[?db=N][&user=U][&password=P][&wait_...] */
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
  return q != NULL ? url_query(q + 1, u) : 0;
}

/* Refuses a URL holding a '#' (`s` is what follows "<scheme>://"): fleet
 * takes no fragment, and a '#' in a password or another value must be
 * written %23. The refusal says where the '#' is (the user info, or the
 * name of the option whose value holds it) without quoting the value,
 * which may be a secret. */
static int url_hash_error(const char *s, fleet__url_t *u) {
  const char *hash = strchr(s, '#');
  const char *at = u->scheme != FLEET__URL_UNIX ? strrchr(s, '@') : NULL;
  const char *q, *opt, *eq;

  /* The user info runs to the last '@', as in fleet_redact_url(). */
  if (at != NULL && hash < at)
    return url_err(u, "an unescaped '#' in the user info (user:password@): "
                      "write a '#' in a password as %%23");
  q = memchr(at != NULL ? at : s, '?', (size_t)(hash - (at != NULL ? at : s)));
  if (q != NULL) {
    for (opt = hash; opt > q + 1 && opt[-1] != '&'; opt--)
      ;
    eq = memchr(opt, '=', (size_t)(hash - opt));
    if (eq != NULL && eq > opt)
      return url_err(u,
                     "option %.*s holds an unescaped '#': write it as %%23 "
                     "(a URL takes no fragment)",
                     (int)(eq - opt > 40 ? 40 : eq - opt), opt);
  }
  return url_err(u, "a URL fragment ('#') is not allowed (write a '#' in a "
                    "name or value as %%23)");
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
  for (i = 0; i < FLEET__ARRAY_SIZE(url_schemes); i++) {
    size_t plen = strlen(url_schemes[i].prefix);
    if (strncmp(text, url_schemes[i].prefix, plen) == 0) {
      out->scheme = url_schemes[i].scheme;
      out->tls = url_schemes[i].tls;
      out->tls_opts.verify = 1;
      out->functions = 1;
      err = strchr(text, '#') != NULL ? url_hash_error(text + plen, out)
                                      : url_parse_net(text + plen, out);
      break;
    }
  }
  if (err == -1) {
    if (strncmp(text, "unix://", 7) == 0) {
      out->scheme = FLEET__URL_UNIX;
      out->functions = 1;
      err = strchr(text, '#') != NULL ? url_hash_error(text + 7, out)
                                      : url_parse_unix(text + 7, out);
    } else if (strncmp(text, "memory://", 9) == 0) {
      err = strstr(text, "wait_") != NULL
                ? url_err(out, "memory:// takes no options: it has no "
                               "replicas to wait for (wait_replicas)")
                : url_err(out, "memory:// takes nothing after the scheme");
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
