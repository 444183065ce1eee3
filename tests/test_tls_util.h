/* test_tls_util.h -- TLS helpers of the tests: a test CA made at test
 * time by the openssl command, and a redis-server with a TLS port. */
#ifndef FLEET_TEST_TLS_UTIL_H
#define FLEET_TEST_TLS_UTIL_H

#include <stddef.h>

#include "test.h"

/* Makes, in `dir`: ca.crt/ca.key (the test CA), server.crt/key for
 * 127.0.0.1 and localhost, client.crt/key signed by the CA, and other.crt
 * (a second CA that signed nothing here). Aborts the test on failure. */
void fleet_test_tls_certs(const char *dir);

/* Whether FLEET_TEST_TLS=1: the Redis conformance tests then reach their
 * server over TLS. */
int fleet_test_tls_wanted(void);

/* Starts a redis-server that also listens with TLS (tls-auth-clients no),
 * its certificates in a new directory written to `dir` (remove it with
 * fleet_test_rmtree()); `url` gets the rediss:// URL of the TLS port. */
fleet_test_redis_t *fleet_test_tls_redis_start(char *dir, size_t dir_size,
                                               char *url, size_t url_size);

#endif /* FLEET_TEST_TLS_UTIL_H */
