/* tls.c -- OpenSSL on memory BIOs for a Redis connection (see tls.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "redis/tls.h"

#ifdef ERR_SYSTEM_ERROR /* OpenSSL 3 */
#define TLS_IS_SYSTEM_ERROR(e)                                                 \
  (ERR_SYSTEM_ERROR(e) || ERR_GET_LIB(e) == ERR_LIB_SYS)
#else
#define TLS_IS_SYSTEM_ERROR(e) (ERR_GET_LIB(e) == ERR_LIB_SYS)
#endif

struct fleet__tls_s {
  const fleet__url_t *url;
  SSL_CTX *ctx;
  SSL *ssl;
  BIO *rbio; /* ciphertext in (owned by ssl) */
  BIO *wbio; /* ciphertext out (owned by ssl) */
};

fleet__tls_t *fleet__tls_new(const fleet__url_t *url) {
  fleet__tls_t *t = calloc(1, sizeof(*t));

  if (t != NULL)
    t->url = url;
  return t;
}

static void tls_end(fleet__tls_t *t) {
  if (t->ssl != NULL)
    SSL_free(t->ssl); /* frees both BIOs */
  t->ssl = NULL;
  t->rbio = t->wbio = NULL;
}

void fleet__tls_free(fleet__tls_t *t) {
  if (t == NULL)
    return;
  tls_end(t);
  if (t->ctx != NULL)
    SSL_CTX_free(t->ctx);
  free(t);
}

/* Writes "<what>: <OpenSSL's reason>" into err, the reason being the
 * first error queued (the root cause: OpenSSL queues outward), and empties
 * OpenSSL's error queue (of this thread) so that nothing stale is reported
 * later. */
static int tls_error(char *err, size_t errlen, const char *what) {
  unsigned long e = ERR_get_error();
  const char *reason = NULL;

  if (e != 0) {
    if (TLS_IS_SYSTEM_ERROR(e))
      reason = strerror(ERR_GET_REASON(e));
    else
      reason = ERR_reason_error_string(e);
  }
  if (reason == NULL)
    reason = e != 0 ? "an unnamed OpenSSL error" : "no reason given";
  snprintf(err, errlen, "%s%s%s", what, what[0] != '\0' ? ": " : "", reason);
  ERR_clear_error();
  return FLEET_ETLS;
}

static int tls_load_ctx(fleet__tls_t *t, char *err, size_t errlen) {
  const fleet__url_tls_t *o = &t->url->tls_opts;
  char what[FLEET__URL_MAX < 512 ? FLEET__URL_MAX : 512];
  SSL_CTX *ctx;

  ERR_clear_error();
  ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == NULL)
    return tls_error(err, errlen, "TLS setup");
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  if (o->ca_file != NULL || o->ca_dir != NULL) {
    if (SSL_CTX_load_verify_locations(ctx, o->ca_file, o->ca_dir) != 1) {
      snprintf(what, sizeof(what), "TLS setup: cannot load %s %s",
               o->ca_file != NULL ? "tls_ca_file" : "tls_ca_dir",
               o->ca_file != NULL ? o->ca_file : o->ca_dir);
      goto fail;
    }
  } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
    snprintf(what, sizeof(what), "TLS setup: the system's CA paths");
    goto fail;
  }
  if (o->cert != NULL) {
    if (SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1) {
      snprintf(what, sizeof(what), "TLS setup: cannot load tls_cert %s",
               o->cert);
      goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, o->key, SSL_FILETYPE_PEM) != 1) {
      snprintf(what, sizeof(what), "TLS setup: cannot load tls_key %s", o->key);
      goto fail;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
      snprintf(what, sizeof(what),
               "TLS setup: tls_key does not match tls_cert");
      goto fail;
    }
  }
  SSL_CTX_set_verify(ctx, o->verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
  t->ctx = ctx;
  return 0;
fail:
  SSL_CTX_free(ctx);
  return tls_error(err, errlen, what);
}

/* Whether `host` is an IPv4 or IPv6 literal. */
static int tls_is_ip(const char *host) {
  ASN1_OCTET_STRING *ip = a2i_IPADDRESS(host);

  if (ip == NULL) {
    ERR_clear_error();
    return 0;
  }
  ASN1_OCTET_STRING_free(ip);
  return 1;
}

int fleet__tls_start(fleet__tls_t *t, char *err, size_t errlen) {
  const fleet__url_tls_t *o = &t->url->tls_opts;
  const char *name = o->server_name != NULL ? o->server_name : t->url->host;
  int r;

  tls_end(t);
  if (t->ctx == NULL) {
    r = tls_load_ctx(t, err, errlen);
    if (r != 0)
      return r;
  }
  ERR_clear_error();
  t->ssl = SSL_new(t->ctx);
  t->rbio = BIO_new(BIO_s_mem());
  t->wbio = BIO_new(BIO_s_mem());
  if (t->ssl == NULL || t->rbio == NULL || t->wbio == NULL) {
    if (t->rbio != NULL)
      BIO_free(t->rbio);
    if (t->wbio != NULL)
      BIO_free(t->wbio);
    t->rbio = t->wbio = NULL;
    tls_end(t);
    ERR_clear_error();
    return FLEET_ENOMEM;
  }
  /* An empty memory BIO reads as "retry", not as end of file. */
  BIO_set_mem_eof_return(t->rbio, -1);
  SSL_set_bio(t->ssl, t->rbio, t->wbio);
  SSL_set_connect_state(t->ssl);
  if (tls_is_ip(name)) {
    if (o->verify &&
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), name) != 1)
      return tls_error(err, errlen, "TLS setup: the IP address to verify");
  } else {
    if (SSL_set_tlsext_host_name(t->ssl, name) != 1)
      return tls_error(err, errlen, "TLS setup: the server name (SNI)");
    if (o->verify && SSL_set1_host(t->ssl, name) != 1)
      return tls_error(err, errlen, "TLS setup: the host name to verify");
  }
  return 0;
}

/* The reason a handshake or record operation failed, with the result of
 * the certificate check when that is what failed. */
static int tls_failed(fleet__tls_t *t, int ret, char *err, size_t errlen) {
  int e = SSL_get_error(t->ssl, ret);
  long v = SSL_get_verify_result(t->ssl);
  char what[256];

  if (v != X509_V_OK && !SSL_is_init_finished(t->ssl)) {
    const char *name = t->url->tls_opts.server_name != NULL
                           ? t->url->tls_opts.server_name
                           : t->url->host;
    snprintf(what, sizeof(what), "certificate verification failed for %s: %s",
             name, X509_verify_cert_error_string(v));
    ERR_clear_error();
    snprintf(err, errlen, "%s", what);
    return FLEET_ETLS;
  }
  if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
    snprintf(err, errlen, "the TLS session ended without close_notify");
    return FLEET_ETLS;
  }
  return tls_error(err, errlen, "");
}

int fleet__tls_handshake(fleet__tls_t *t, char *err, size_t errlen) {
  int r, e;

  ERR_clear_error();
  r = SSL_do_handshake(t->ssl);
  if (r == 1)
    return 1;
  e = SSL_get_error(t->ssl, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
    return 0;
  return tls_failed(t, r, err, errlen);
}

int fleet__tls_feed(fleet__tls_t *t, const void *p, size_t n) {
  while (n > 0) {
    int chunk = n > 1u << 30 ? 1 << 30 : (int)n;
    int w = BIO_write(t->rbio, p, chunk);
    if (w <= 0) {
      ERR_clear_error();
      return FLEET_ENOMEM;
    }
    p = (const char *)p + w;
    n -= (size_t)w;
  }
  return 0;
}

ssize_t fleet__tls_read(fleet__tls_t *t, void *buf, size_t cap, char *err,
                        size_t errlen) {
  size_t got = 0;
  int r, e;

  ERR_clear_error();
  r = SSL_read_ex(t->ssl, buf, cap, &got);
  if (r == 1)
    return (ssize_t)got;
  e = SSL_get_error(t->ssl, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
    return 0;
  if (e == SSL_ERROR_ZERO_RETURN) {
    snprintf(err, errlen, "the server closed the TLS session");
    return FLEET_ECONNLOST;
  }
  return tls_failed(t, r, err, errlen);
}

int fleet__tls_write(fleet__tls_t *t, const void *p, size_t n, char *err,
                     size_t errlen) {
  size_t done = 0;
  int r;

  if (n == 0)
    return 0;
  ERR_clear_error();
  r = SSL_write_ex(t->ssl, p, n, &done);
  if (r == 1 && done == n)
    return 0;
  if (r == 1) {
    snprintf(err, errlen, "TLS: a partial write (%zu of %zu bytes)", done, n);
    return FLEET_ETLS;
  }
  return tls_failed(t, r, err, errlen);
}

size_t fleet__tls_pending(const fleet__tls_t *t) {
  return t->wbio != NULL ? BIO_ctrl_pending(t->wbio) : 0;
}

size_t fleet__tls_take(fleet__tls_t *t, void *buf, size_t cap) {
  size_t got = 0;

  if (t->wbio == NULL || cap == 0)
    return 0;
  if (BIO_read_ex(t->wbio, buf, cap, &got) != 1) {
    ERR_clear_error();
    return 0;
  }
  return got;
}
