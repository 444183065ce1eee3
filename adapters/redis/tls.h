/* tls.h -- TLS for a Redis connection over fleet's own libuv stream.
 *
 * OpenSSL runs on memory BIOs: ciphertext read from the socket is fed in
 * with fleet__tls_feed(), plaintext comes out of fleet__tls_read();
 * plaintext to send goes in with fleet__tls_write() and the ciphertext to
 * hand to uv_write comes out of fleet__tls_take(). No socket, no thread
 * and no global state of fleet's: a fleet__tls_t belongs to one connection
 * and keeps its SSL_CTX (CA, client certificate) across reconnects, with a
 * fresh session per attempt. Failures return FLEET_ETLS (or FLEET_ENOMEM)
 * and write OpenSSL's reason into `err`. */
#ifndef FLEET_REDIS_TLS_H
#define FLEET_REDIS_TLS_H

#include <stddef.h>
#include <sys/types.h>

#include "common/url.h"

typedef struct fleet__tls_s fleet__tls_t;

/* A TLS state for connections to `url` (which must outlive it). NULL when
 * out of memory. Nothing is loaded until the first fleet__tls_start(). */
fleet__tls_t *fleet__tls_new(const fleet__url_t *url);
void fleet__tls_free(fleet__tls_t *t);

/* Begins a client session (dropping any earlier one): loads the context on
 * first use (CA file or directory, else the system's default paths; the
 * client certificate and key), sets the name to verify and send as SNI
 * (tls_server_name, else the URL's host; an IP literal is checked against
 * the certificate's IP addresses and sent without SNI). */
int fleet__tls_start(fleet__tls_t *t, char *err, size_t errlen);

/* Advances the handshake: 1 done, 0 needs more input, or FLEET_ETLS. */
int fleet__tls_handshake(fleet__tls_t *t, char *err, size_t errlen);

/* Ciphertext from the peer. 0 or FLEET_ENOMEM. */
int fleet__tls_feed(fleet__tls_t *t, const void *p, size_t n);

/* Plaintext received: up to `cap` bytes into `buf`. Returns the count, 0
 * when more input is needed, FLEET_ECONNLOST when the peer closed the
 * session (close_notify), or FLEET_ETLS. */
ssize_t fleet__tls_read(fleet__tls_t *t, void *buf, size_t cap, char *err,
                        size_t errlen);

/* Encrypts `n` bytes of plaintext. 0, FLEET_ETLS or FLEET_ENOMEM. */
int fleet__tls_write(fleet__tls_t *t, const void *p, size_t n, char *err,
                     size_t errlen);

/* Ciphertext waiting to be sent, and taking up to `cap` bytes of it. */
size_t fleet__tls_pending(const fleet__tls_t *t);
size_t fleet__tls_take(fleet__tls_t *t, void *buf, size_t cap);

#endif /* FLEET_REDIS_TLS_H */
