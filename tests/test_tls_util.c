/* test_tls_util.c -- a test CA and certificates made by the openssl
 * command, and a TLS port for the conformance tests (FLEET_TEST_TLS=1). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_tls_util.h"

/* Runs a shell command line; aborts the test when it fails. */
static void tls_sh(const char *cmd) {
  int rc = system(cmd);

  if (rc != 0)
    fleet_test__fail(__FILE__, __LINE__, "command failed (%d): %s", rc, cmd);
}

void fleet_test_tls_certs(const char *dir) {
  char cmd[4 * PATH_MAX];
  const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

  snprintf(cmd, sizeof(cmd),
           "cd '%s' && "
           "openssl req -x509 -new %s -keyout ca.key -out ca.crt -days 2 "
           "-subj '/CN=fleet test CA' 2>/dev/null && "
           "openssl req -x509 -new %s -keyout other.key -out other.crt "
           "-days 2 -subj '/CN=fleet other CA' 2>/dev/null && "
           "openssl req -new %s -keyout server.key -out server.csr "
           "-subj '/CN=localhost' 2>/dev/null && "
           "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext && "
           "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key "
           "-CAcreateserial -out server.crt -days 2 -extfile san.ext "
           "2>/dev/null && "
           "openssl req -new %s -keyout client.key -out client.csr "
           "-subj '/CN=fleet client' 2>/dev/null && "
           "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key "
           "-CAcreateserial -out client.crt -days 2 2>/dev/null",
           dir, ec, ec, ec, ec);
  tls_sh(cmd);
}

int fleet_test_tls_wanted(void) {
  const char *env = getenv("FLEET_TEST_TLS");
  return env != NULL && strcmp(env, "1") == 0;
}

fleet_test_redis_t *fleet_test_tls_redis_start(char *dir, size_t dir_size,
                                               char *url, size_t url_size) {
  const char *tmp = getenv("TMPDIR");
  char args[10][PATH_MAX + 32];
  const char *argv[11];
  fleet_test_redis_t *r;
  int port, i;

  snprintf(dir, dir_size, "%s/fleet-tls-XXXXXX",
           tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
  ASSERT_NOT_NULL(mkdtemp(dir));
  fleet_test_tls_certs(dir);
  port = fleet_test_free_port();
  ASSERT_GT(port, 0);
  snprintf(args[0], sizeof(args[0]), "--tls-port");
  snprintf(args[1], sizeof(args[1]), "%d", port);
  snprintf(args[2], sizeof(args[2]), "--tls-cert-file");
  snprintf(args[3], sizeof(args[3]), "%s/server.crt", dir);
  snprintf(args[4], sizeof(args[4]), "--tls-key-file");
  snprintf(args[5], sizeof(args[5]), "%s/server.key", dir);
  snprintf(args[6], sizeof(args[6]), "--tls-ca-cert-file");
  snprintf(args[7], sizeof(args[7]), "%s/ca.crt", dir);
  snprintf(args[8], sizeof(args[8]), "--tls-auth-clients");
  snprintf(args[9], sizeof(args[9]), "no");
  for (i = 0; i < 10; i++)
    argv[i] = args[i];
  argv[10] = NULL;
  r = fleet_test_redis_start_or_skip(argv);
  ASSERT_LT(snprintf(url, url_size,
                     "rediss://127.0.0.1:%d?tls_ca_file=%s/ca.crt", port, dir),
            (int)url_size);
  return r;
}
