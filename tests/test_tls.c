/* test_tls.c -- rediss:// against a redis-server with a TLS port, using a
 * test CA made at test time by the openssl command: connect and run ops
 * (pub/sub included), a wrong CA and a wrong name refused with FLEET_ETLS
 * and OpenSSL's reason, client-certificate authentication, reconnect over
 * TLS after a server restart.
 *
 * The server also listens on a plaintext loopback port, which only the
 * fixture uses (its readiness probe and control connection speak plain
 * RESP); fleet connects to the TLS port only. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/client.h"
#include "client_ctx.h"
#include "test_tls_util.h"

typedef struct {
  char dir[PATH_MAX]; /* the CA, the certificates and keys */
  char args[16][PATH_MAX + 32];
  const char *argv[20];
  int tls_port;
  fleet_test_redis_t *redis;
} tls_env_t;

/* Starts the server with a TLS port; `auth_clients` is "no" or "yes". */
static void tls_env_init(tls_env_t *e, const char *auth_clients) {
  const char *tmp = getenv("TMPDIR");
  size_t n = 0, i;

  memset(e, 0, sizeof(*e));
  /* A server refusing a client certificate closes the connection while
   * fleet may still write: libuv's write(2) would raise SIGPIPE, which
   * programs using fleet ignore (docs/deploy.md). */
  signal(SIGPIPE, SIG_IGN);
  if (system("openssl version >/dev/null 2>&1") != 0)
    fleet_test_skip("the openssl command is not installed");
  snprintf(e->dir, sizeof(e->dir), "%s/fleet-tls-XXXXXX",
           tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
  ASSERT_NOT_NULL(mkdtemp(e->dir));
  fleet_test_tls_certs(e->dir);
  e->tls_port = fleet_test_free_port();
  ASSERT_GT(e->tls_port, 0);
  snprintf(e->args[n++], sizeof(e->args[0]), "--tls-port");
  snprintf(e->args[n++], sizeof(e->args[0]), "%d", e->tls_port);
  snprintf(e->args[n++], sizeof(e->args[0]), "--tls-cert-file");
  snprintf(e->args[n++], sizeof(e->args[0]), "%s/server.crt", e->dir);
  snprintf(e->args[n++], sizeof(e->args[0]), "--tls-key-file");
  snprintf(e->args[n++], sizeof(e->args[0]), "%s/server.key", e->dir);
  snprintf(e->args[n++], sizeof(e->args[0]), "--tls-ca-cert-file");
  snprintf(e->args[n++], sizeof(e->args[0]), "%s/ca.crt", e->dir);
  snprintf(e->args[n++], sizeof(e->args[0]), "--tls-auth-clients");
  snprintf(e->args[n++], sizeof(e->args[0]), "%s", auth_clients);
  for (i = 0; i < n; i++)
    e->argv[i] = e->args[i];
  e->argv[n] = NULL;
  e->redis = fleet_test_redis_start_or_skip(e->argv);
}

static void tls_env_free(tls_env_t *e) {
  fleet_test_redis_free(e->redis);
  fleet_test_rmtree(e->dir);
}

/* "rediss://127.0.0.1:<tls port>?<query>" with "%D" in the query replaced
 * by the certificate directory. */
static void tls_url(const tls_env_t *e, char *buf, size_t size,
                    const char *query) {
  size_t off;
  const char *p;

  off = (size_t)snprintf(buf, size, "rediss://127.0.0.1:%d", e->tls_port);
  if (query == NULL)
    return;
  off += (size_t)snprintf(buf + off, size - off, "?");
  for (p = query; *p != '\0' && off + 1 < size; p++) {
    if (p[0] == '%' && p[1] == 'D') {
      off += (size_t)snprintf(buf + off, size - off, "%s", e->dir);
      p++;
    } else {
      buf[off++] = *p;
      buf[off] = '\0';
    }
  }
  ASSERT_LT(off + 1, size);
}

/* Opens a client on `url` that retries quickly. */
static void tls_ctx_init(client_ctx_t *t, const char *url) {
  fleet_client_options_t o;

  fleet_client_options_init(&o);
  o.reconnect_initial_ms = 20;
  o.reconnect_max_ms = 200;
  o.connect_timeout_ms = (uint32_t)fleet_test_ms(3000);
  o.command_timeout_ms = (uint32_t)fleet_test_ms(3000);
  ctx_init(t, url, &o);
}

/* Pings a client whose connections must fail with FLEET_ETLS; returns the
 * detail (copied into `why`). */
static void tls_expect_refused(const char *url, const char *words, char *why,
                               size_t size) {
  client_ctx_t t;

  tls_ctx_init(&t, url);
  ASSERT_ERR(FLEET_ETLS, ctx_ping(&t));
  snprintf(why, size, "%s", fleet_client_last_error(&t.client));
  fprintf(stderr, "%s -> %s\n", url, why);
  ASSERT_NOT_NULL(strstr(why, words));
  ASSERT_EQ(0, t.states[FLEET_CLIENT_READY]);
  /* The state callback heard it too: non-transient, but it still
   * retries (the server's certificate may be fixed). */
  ASSERT(t.states[FLEET_CLIENT_RECONNECTING] > 0 ||
         ctx_wait_state(&t, FLEET_CLIENT_RECONNECTING, 2000));
  ASSERT_EQ(FLEET_ETLS, t.last_status);
  ctx_close(&t);
}

/* ------------------------------------------------------------------------ */
/* Pub/sub through the backend, as test_backend.c does                      */

typedef struct {
  int active;
  int messages;
  char *last;
  size_t last_len;
} tls_sub_t;

static void tls_on_message(void *arg, int status, const char *payload,
                           size_t len) {
  tls_sub_t *s = arg;

  if (status == FLEET_ECONNLOST) {
    s->active++;
    return;
  }
  ASSERT_OK(status);
  free(s->last);
  s->last = malloc(len + 1);
  ASSERT_NOT_NULL(s->last);
  memcpy(s->last, payload, len);
  s->last_len = len;
  s->messages++;
}

static int64_t tls_published;

static void tls_on_published(void *arg, int status, const fleet__reply_t *r) {
  ASSERT_OK(status);
  ASSERT_EQ(FLEET__REPLY_INT, r->type);
  tls_published = r->integer;
  *(int *)arg = 1;
}

static int64_t tls_publish(client_ctx_t *t, const char *payload, size_t len) {
  fleet_bytes_t args[2] = {{"chan", 4}, {payload, len}};
  int done = 0;

  ASSERT_OK(fleet__backend_call(fleet__client_backend(&t->client),
                                FLEET__OP_PUBLISH, NULL, 0, args, 2,
                                tls_on_published, &done));
  ASSERT(fleet_test_run_until(&t->loop, fleet_test_flag_set, &done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  return tls_published;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */

/* Ping, the server's clock, pub/sub (the subscriber connection is TLS
 * too), a 3 MiB message each way (many TLS records and reads), and a
 * reconnect over TLS after the server was killed and restarted. */
TEST_IMPL(tls_connect_and_ops) {
  tls_env_t e;
  client_ctx_t t;
  fleet__backend_t *be;
  fleet__sub_t *sub;
  tls_sub_t s;
  char url[2 * PATH_MAX];
  size_t big_len = 3u << 20, i;
  char *big;

  tls_env_init(&e, "no");
  tls_url(&e, url, sizeof(url), "tls_ca_file=%D/ca.crt");
  tls_ctx_init(&t, url);
  ASSERT_OK(ctx_ping(&t));
  ASSERT_EQ(1, t.states[FLEET_CLIENT_READY]);
  ASSERT_GT(ctx_time(&t), 0);

  memset(&s, 0, sizeof(s));
  be = fleet__client_backend(&t.client);
  ASSERT_OK(be->vt->subscribe(be, "chan", 4, tls_on_message, &s, &sub));
  ASSERT(fleet_test_wait_count(&t.loop, &s.active, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(1, tls_publish(&t, "hello", 5));
  ASSERT(fleet_test_wait_count(&t.loop, &s.messages, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(5, s.last_len);
  ASSERT_MEM_EQ("hello", s.last, 5);

  big = malloc(big_len);
  ASSERT_NOT_NULL(big);
  for (i = 0; i < big_len; i++)
    big[i] = (char)(i * 7 + (i >> 12));
  ASSERT_EQ(1, tls_publish(&t, big, big_len));
  ASSERT(fleet_test_wait_count(&t.loop, &s.messages, 2,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(big_len, s.last_len);
  ASSERT_MEM_EQ(big, s.last, big_len);

  /* The server dies and comes back: both connections handshake again. */
  ASSERT_OK(fleet_test_redis_kill(e.redis));
  ASSERT_OK(fleet_test_redis_restart(e.redis));
  ASSERT(fleet_test_wait_count(&t.loop, &s.active, 2,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  while (tls_publish(&t, "again", 5) != 1)
    ;
  ASSERT(fleet_test_wait_count(&t.loop, &s.messages, 3,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_MEM_EQ("again", s.last, 5);
  ASSERT_OK(ctx_ping(&t));
  ASSERT_GE(t.states[FLEET_CLIENT_READY], 2);

  be->vt->unsubscribe(be, sub);
  ctx_close(&t);
  free(s.last);
  free(big);
  tls_env_free(&e);
  return 0;
}

/* A CA that did not sign the server's certificate, the system's CAs (which
 * know nothing of the test CA), a name the certificate does not carry, a
 * CA file that does not exist: each FLEET_ETLS with the reason. With
 * verification off, or the right name, the same server is accepted. */
TEST_IMPL(tls_verification_refusals) {
  tls_env_t e;
  client_ctx_t t;
  char url[2 * PATH_MAX], why[FLEET__DETAIL_MAX];

  tls_env_init(&e, "no");
  tls_url(&e, url, sizeof(url), "tls_ca_file=%D/other.crt");
  tls_expect_refused(url, "certificate verification failed for 127.0.0.1", why,
                     sizeof(why));
  tls_url(&e, url, sizeof(url), NULL);
  tls_expect_refused(url, "certificate verification failed", why, sizeof(why));
  tls_url(&e, url, sizeof(url),
          "tls_ca_file=%D/ca.crt&tls_server_name=db.example.com");
  tls_expect_refused(url, "hostname mismatch", why, sizeof(why));
  ASSERT_NOT_NULL(strstr(why, "db.example.com"));
  tls_url(&e, url, sizeof(url), "tls_ca_file=%D/missing.crt");
  tls_expect_refused(url, "tls_ca_file", why, sizeof(why));
  ASSERT_NOT_NULL(strstr(why, "No such file"));
  tls_url(&e, url, sizeof(url),
          "tls_ca_file=%D/ca.crt&tls_cert=%D/client.crt&tls_key=%D/ca.key");
  tls_expect_refused(url, "tls_key", why, sizeof(why));

  tls_url(&e, url, sizeof(url), "tls_ca_dir=%D&tls_verify=0");
  tls_ctx_init(&t, url);
  ASSERT_OK(ctx_ping(&t));
  ctx_close(&t);
  tls_url(&e, url, sizeof(url),
          "tls_ca_file=%D/ca.crt&tls_server_name=localhost");
  tls_ctx_init(&t, url);
  ASSERT_OK(ctx_ping(&t));
  ctx_close(&t);
  tls_env_free(&e);
  return 0;
}

/* tls-auth-clients yes: a client with a certificate signed by the CA gets
 * in; one without is refused by the server, and fleet reports the
 * server's alert as FLEET_ETLS. */
TEST_IMPL(tls_client_certificate) {
  tls_env_t e;
  client_ctx_t t;
  char url[2 * PATH_MAX], why[FLEET__DETAIL_MAX];

  tls_env_init(&e, "yes");
  tls_url(&e, url, sizeof(url),
          "tls_ca_file=%D/ca.crt&tls_cert=%D/client.crt&tls_key=%D/"
          "client.key");
  tls_ctx_init(&t, url);
  ASSERT_OK(ctx_ping(&t));
  ASSERT_GT(ctx_time(&t), 0);
  ctx_close(&t);

  tls_url(&e, url, sizeof(url), "tls_ca_file=%D/ca.crt");
  tls_expect_refused(url, "certificate required", why, sizeof(why));
  tls_env_free(&e);
  return 0;
}

/* TLS against a plaintext port fails in the TLS handshake (the server
 * answers garbage, or drops the connection, and the detail says so);
 * plaintext against the TLS port never gets ready. */
TEST_IMPL(tls_protocol_mismatch) {
  tls_env_t e;
  client_ctx_t t;
  char url[2 * PATH_MAX];
  int status;

  tls_env_init(&e, "no");
  snprintf(url, sizeof(url), "rediss://127.0.0.1:%d?tls_ca_file=%s/ca.crt",
           fleet_test_redis_port(e.redis), e.dir);
  tls_ctx_init(&t, url);
  status = ctx_ping(&t);
  fprintf(stderr, "TLS to the plain port: %s: %s\n", fleet_err_name(status),
          fleet_client_last_error(&t.client));
  ASSERT(status == FLEET_ETLS || status == FLEET_EUNAVAILABLE);
  ASSERT_NOT_NULL(strstr(fleet_client_last_error(&t.client), "TLS"));
  ASSERT_EQ(0, t.states[FLEET_CLIENT_READY]);
  ctx_close(&t);

  snprintf(url, sizeof(url), "redis://127.0.0.1:%d", e.tls_port);
  tls_ctx_init(&t, url);
  status = ctx_ping(&t);
  fprintf(stderr, "plain to the TLS port: %s: %s\n", fleet_err_name(status),
          fleet_client_last_error(&t.client));
  ASSERT_NE(0, status);
  ASSERT_EQ(0, t.states[FLEET_CLIENT_READY]);
  ctx_close(&t);
  tls_env_free(&e);
  return 0;
}
