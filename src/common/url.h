/* url.h -- parsing of backend URLs (url.c): the schemes fleet opens, hosts,
 * credentials, TLS and durability settings. A leaf: it includes nothing of
 * fleet's but the public header. */
#ifndef FLEET_COMMON_URL_H
#define FLEET_COMMON_URL_H

#include <stddef.h>
#include <stdint.h>

#include "fleet.h"

typedef enum {
  FLEET__URL_REDIS,   /* redis[s]://[[user]:pass@]host[:port][/db][?tls...] */
  FLEET__URL_UNIX,    /* unix:///path[?db=N&user=U&password=P] */
  FLEET__URL_MEMORY,  /* memory:// */
  FLEET__URL_CLUSTER, /* redis[s]+cluster://[auth@]h:p[,h:p...][?tls...] */
  FLEET__URL_SENTINEL /* redis[s]+sentinel://[auth@]h:p[,...]/name[/db][?..] */
} fleet__url_scheme_t;

/* Longest URL fleet accepts, in bytes. */
#define FLEET__URL_MAX 4096
/* Size of fleet__url_t.error, NUL included. */
#define FLEET__URL_ERROR_MAX 160
/* Most hosts in one URL (cluster seeds, sentinels). */
#define FLEET__URL_HOSTS_MAX 64
/* Largest wait_replicas and wait_timeout_ms a URL may give. */
#define FLEET__URL_WAIT_REPLICAS_MAX 1000
#define FLEET__URL_WAIT_TIMEOUT_MAX 3600000

typedef struct {
  char *host;    /* host name or IP literal, without brackets */
  uint16_t port; /* default 6379 (26379 for sentinels) */
} fleet__url_host_t;

/* TLS settings (rediss schemes); every string NULL when not given. */
typedef struct {
  char *ca_file;     /* tls_ca_file: PEM bundle of trusted CAs */
  char *ca_dir;      /* tls_ca_dir: OpenSSL hashed CA directory */
  char *cert;        /* tls_cert: client certificate (PEM) */
  char *key;         /* tls_key: its private key (PEM) */
  char *server_name; /* tls_server_name: SNI and name checked; else host */
  int verify;        /* tls_verify: 1 (default) checks the peer's chain */
} fleet__url_tls_t;

typedef struct fleet__url_s {
  fleet__url_scheme_t scheme;
  /* REDIS, CLUSTER, SENTINEL: the hosts in URL order (at least one; REDIS
   * exactly one). `host` and `port` repeat hosts[0] (do not free `host`
   * apart: it is hosts[0].host). */
  fleet__url_host_t *hosts;
  size_t nhosts;
  char *host;
  uint16_t port;
  char *path;     /* UNIX: socket path */
  char *user;     /* the data nodes' ACL user; NULL when absent */
  char *password; /* NULL when absent; percent-decoded */
  int db;         /* default 0; always 0 for CLUSTER */
  /* SENTINEL: the monitored master's name, and the credentials for the
   * sentinels themselves (query sentinel_user / sentinel_password). */
  char *master_name;
  char *sentinel_user;
  char *sentinel_password;
  /* rediss schemes: TLS on every connection (data nodes and sentinels). */
  int tls;
  fleet__url_tls_t tls_opts;
  /* Durability (query wait_replicas and wait_timeout_ms; every scheme but
   * memory://): 0 when not given. */
  uint32_t wait_replicas;
  uint32_t wait_timeout_ms;
  /* Query functions=0|1 (every scheme but memory://; default 1): whether
   * the scripts run as Redis 7 functions where the server allows. */
  int functions;
  /* After a refusal: what is wrong, in words that never quote a password
   * or other secret ("" after success). */
  char error[FLEET__URL_ERROR_MAX];
} fleet__url_t;

/* Parses `text` into `out` (zeroed first). Returns 0, FLEET_EBADURL with
 * nothing allocated and out->error set, or FLEET_ENOMEM. Release with
 * fleet__url_free(). */
int fleet__url_parse(const char *text, fleet__url_t *out);

/* Frees what fleet__url_parse() allocated; safe on a zeroed url. */
void fleet__url_free(fleet__url_t *url);

/* Builds in `out` a plain-REDIS url for one node `host`:`port` met through
 * `base` (a cluster node from the slot map, a master or sentinel named by a
 * sentinel): TLS settings copied; the data credentials and db copied, or
 * for `sentinel` != 0 the sentinel credentials and db 0. Returns 0 or
 * FLEET_ENOMEM (then `out` holds nothing). Free with fleet__url_free(). */
int fleet__url_node(const fleet__url_t *base, const char *host, uint16_t port,
                    int sentinel, fleet__url_t *out);

#endif /* FLEET_COMMON_URL_H */
