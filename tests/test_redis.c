/* test_redis.c -- the Redis adapter against a real redis-server: refused
 * connections, timeouts, reconnects, scripts, authentication. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/client.h"
#include "client_ctx.h"
#include "test_queue_util.h"
#include "redis/reader.h"
#include "scripts/scripts.h"

static void redis_ok(fleet_test_redis_t *r, const char *cmd) {
  redisReply *reply = fleet_test_redis_cmd(r, cmd);
  ASSERT_NOT_NULL(reply);
  ASSERT(reply->type != REDIS_REPLY_ERROR);
  freeReplyObject(reply);
}

/* A refused connection is reported at once, well within the connect
 * timeout, and the client keeps retrying until closed. */
TEST_IMPL(redis_refused) {
  fleet_client_options_t o;
  client_ctx_t t;
  char url[64];
  uint64_t start;

  snprintf(url, sizeof(url), "redis://127.0.0.1:%d", fleet_test_free_port());
  fleet_client_options_init(&o);
  o.connect_timeout_ms = 3000;
  o.reconnect_initial_ms = 20;
  ctx_init(&t, url, &o);
  start = uv_now(&t.loop);
  ASSERT(ctx_wait_state(&t, FLEET_CLIENT_RECONNECTING, 2500));
  ASSERT_ERR(FLEET_ECONNREFUSED, t.last_status);
  ASSERT_LT(uv_now(&t.loop) - start, fleet_test_ms(1000));
  /* It retries with backoff: more failed attempts follow. */
  ASSERT(ctx_wait_state(&t, FLEET_CLIENT_RECONNECTING, 2500));
  ASSERT_EQ(0, t.states[FLEET_CLIENT_READY]);
  ctx_close(&t);
  return 0;
}

/* A command issued while nothing listens waits for a connection up to the
 * command timeout, then fails with FLEET_EUNAVAILABLE. */
TEST_IMPL(redis_unavailable_command) {
  fleet_client_options_t o;
  client_ctx_t t;
  char url[64];
  uint64_t start;

  snprintf(url, sizeof(url), "redis://127.0.0.1:%d", fleet_test_free_port());
  fleet_client_options_init(&o);
  o.command_timeout_ms = 300;
  o.reconnect_initial_ms = 20;
  ctx_init(&t, url, &o);
  start = uv_now(&t.loop);
  ASSERT_ERR(FLEET_EUNAVAILABLE, ctx_ping(&t));
  ASSERT_GE(uv_now(&t.loop) - start, 250);
  ASSERT_LT(uv_now(&t.loop) - start, fleet_test_ms(2000));
  ctx_close(&t);
  return 0;
}

/* With fail_fast, the commands waiting for a refused connection fail at
 * once with its cause (not after the command timeout, which is a minute
 * here: the test's own timeout is shorter), on redis://, on a missing unix
 * socket, on a cluster and sentinels that all refuse; the client goes on
 * reconnecting, and a command issued once the server is up succeeds. */
TEST_IMPL(redis_fail_fast) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_client_options_t o;
  client_ctx_t t;
  char url[128];

  fleet_client_options_init(&o);
  o.command_timeout_ms = 60000;
  o.reconnect_initial_ms = 20;
  o.reconnect_max_ms = 50;
  o.fail_fast = 1;
  ASSERT_OK(fleet_test_redis_kill(r));
  ctx_init(&t, fleet_test_redis_url(r), &o);
  ASSERT_ERR(FLEET_ECONNREFUSED, ctx_ping(&t));
  ASSERT_NOT_NULL(strstr(t.last_ping_detail, "connection refused"));
  ASSERT_EQ(0, t.states[FLEET_CLIENT_READY]);
  /* The client still reconnects once the server is back. */
  ASSERT_OK(fleet_test_redis_restart(r));
  ASSERT(ctx_wait_state(&t, FLEET_CLIENT_READY, 5000));
  ASSERT_OK(ctx_ping(&t));
  /* Once it was connected, an outage is waited for as without the
   * option: a command issued while the server is down, across failed
   * attempts, succeeds once the server is back. */
  ASSERT_OK(fleet_test_redis_kill(r));
  ASSERT(ctx_wait_state(&t, FLEET_CLIENT_RECONNECTING, 3000));
  ASSERT_OK(fleet_client_ping(&t.client, ctx_on_ping, NULL));
  ASSERT(ctx_wait_state(&t, FLEET_CLIENT_RECONNECTING, 3000));
  ASSERT_EQ(1, t.pings_err);
  ASSERT_OK(fleet_test_redis_restart(r));
  ASSERT(fleet_test_wait_count(&t.loop, &t.pings_ok, 2, fleet_test_ms(5000)));
  ASSERT_EQ(1, t.pings_err);
  ctx_close(&t);

  snprintf(url, sizeof(url), "unix:///nonexistent/fleet-%d.sock",
           (int)getpid());
  ctx_init(&t, url, &o);
  ASSERT_ERR(FLEET_ECONNREFUSED, ctx_ping(&t));
  ASSERT_NOT_NULL(strstr(t.last_ping_detail, "no such file"));
  ctx_close(&t);

  /* A cluster whose seeds all refuse: once each was asked for the slot
   * map; sentinels that all refuse: once each was asked for the master. */
  snprintf(url, sizeof(url), "redis+cluster://127.0.0.1:%d,127.0.0.1:%d",
           fleet_test_free_port(), fleet_test_free_port());
  ctx_init(&t, url, &o);
  ASSERT_ERR(FLEET_ECONNREFUSED, ctx_ping(&t));
  ASSERT_NOT_NULL(strstr(t.last_ping_detail, "connection refused"));
  ctx_close(&t);
  snprintf(url, sizeof(url), "redis+sentinel://127.0.0.1:%d,127.0.0.1:%d/m",
           fleet_test_free_port(), fleet_test_free_port());
  ctx_init(&t, url, &o);
  ASSERT_ERR(FLEET_EUNAVAILABLE, ctx_ping(&t));
  ASSERT_NOT_NULL(strstr(t.last_ping_detail, "connection refused"));
  ctx_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* A server that stops answering (SIGSTOP) gives FLEET_ETIMEDOUT within the
 * command timeout; once it resumes, the client reconnects by itself. */
TEST_IMPL(redis_command_timeout) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_client_options_t o;
  client_ctx_t t;
  uint64_t start;
  int tries;

  fleet_client_options_init(&o);
  o.command_timeout_ms = 300;
  o.connect_timeout_ms = 300;
  o.reconnect_initial_ms = 20;
  o.reconnect_max_ms = 100;
  ctx_init(&t, fleet_test_redis_url(r), &o);
  /* The test starts from a client that has answered a ping. On a loaded
   * machine (CI runs 4 tests at once on 2 cores) the first connect or
   * ping may outlast these 300 ms timeouts, which the client survives by
   * reconnecting: a few tries, each bounded. */
  for (tries = 0; tries < 5 && ctx_ping(&t) != 0; tries++)
    if (fleet_client_state(&t.client) != FLEET_CLIENT_READY)
      ASSERT(ctx_wait_state(&t, FLEET_CLIENT_READY, 5000));
  ASSERT_LT(tries, 5);
  ASSERT_OK(fleet_test_redis_pause(r));
  start = uv_now(&t.loop);
  ASSERT_ERR(FLEET_ETIMEDOUT, ctx_ping(&t));
  ASSERT_GE(uv_now(&t.loop) - start, 250);
  ASSERT_LT(uv_now(&t.loop) - start, fleet_test_ms(1500));
  ASSERT_GE(t.states[FLEET_CLIENT_RECONNECTING], 1);
  ASSERT_OK(fleet_test_redis_resume(r));
  ASSERT(ctx_wait_state(&t, FLEET_CLIENT_READY, 5000));
  ASSERT_OK(ctx_ping(&t));
  ctx_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* Commands in flight when the connection breaks fail with
 * FLEET_ECONNLOST (they may have run). */
TEST_IMPL(redis_inflight_connlost) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_client_options_t o;
  client_ctx_t t;
  int i;

  fleet_client_options_init(&o);
  o.reconnect_initial_ms = 20;
  ctx_init(&t, fleet_test_redis_url(r), &o);
  ASSERT_OK(ctx_ping(&t));
  ASSERT_OK(fleet_test_redis_pause(r));
  for (i = 0; i < 10; i++)
    ASSERT_OK(fleet_client_ping(&t.client, ctx_on_ping, NULL));
  /* Let the pings be written, then kill the paused server. */
  for (i = 0; i < 5; i++)
    uv_run(&t.loop, UV_RUN_NOWAIT);
  ASSERT_OK(fleet_test_redis_kill(r));
  ASSERT(ctx_wait_state(&t, FLEET_CLIENT_RECONNECTING, 3000));
  ASSERT_EQ(10, t.pings_err);
  ASSERT_ERR(FLEET_ECONNLOST, t.last_ping_status);
  ctx_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* Redis killed and restarted: the client reconnects by itself and commands
 * work again. */
TEST_IMPL(redis_reconnect_after_restart) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_client_options_t o;
  client_ctx_t t;

  fleet_client_options_init(&o);
  o.reconnect_initial_ms = 20;
  o.reconnect_max_ms = 200;
  ctx_init(&t, fleet_test_redis_url(r), &o);
  ASSERT_OK(ctx_ping(&t));
  ASSERT_OK(fleet_test_redis_kill(r));
  ASSERT(ctx_wait_state(&t, FLEET_CLIENT_RECONNECTING, 3000));
  /* Let a few attempts fail before the server comes back. */
  ASSERT(ctx_wait_state(&t, FLEET_CLIENT_RECONNECTING, 3000));
  ASSERT_ERR(FLEET_ECONNREFUSED, t.last_status);
  ASSERT_OK(fleet_test_redis_restart(r));
  ASSERT(ctx_wait_state(&t, FLEET_CLIENT_READY, 5000));
  ASSERT_EQ(2, t.states[FLEET_CLIENT_READY]);
  ASSERT_OK(ctx_ping(&t));
  ctx_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* After SCRIPT FLUSH, an EVALSHA answers NOSCRIPT: the op is sent again
 * with the script body, succeeds, and the script is cached again. */
TEST_IMPL(redis_noscript_recovery) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  redisReply *reply;
  client_ctx_t t;
  int i;

  ctx_init(&t, fleet_test_redis_url(r), NULL);
  ASSERT_UGT(ctx_time(&t), 0);
  for (i = 0; i < 3; i++) {
    redis_ok(r, "SCRIPT FLUSH");
    ASSERT_UGT(ctx_time(&t), 0);
  }
  /* The NOSCRIPT path really ran: the server saw failed EVALSHAs and EVALs
   * that loaded the script again. */
  reply = fleet_test_redis_cmd(r, "INFO commandstats");
  ASSERT_NOT_NULL(reply);
  ASSERT_NOT_NULL(strstr(reply->str, "cmdstat_eval:calls=3"));
  freeReplyObject(reply);
  ctx_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* AUTH with a password from the URL; a wrong one gives FLEET_EAUTH, both
 * to the state callback and to the commands waiting. */
TEST_IMPL(redis_auth_password) {
  static const char *const args[] = {"--requirepass", "s3cr:t@", NULL};
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(args);
  fleet_client_options_t o;
  client_ctx_t t;
  char url[128];
  int i;

  snprintf(url, sizeof(url), "redis://:s3cr%%3At%%40@127.0.0.1:%d",
           fleet_test_redis_port(r));
  ctx_init(&t, url, NULL);
  ASSERT_OK(ctx_ping(&t));
  ctx_close(&t);

  snprintf(url, sizeof(url), "redis://:wrong@127.0.0.1:%d",
           fleet_test_redis_port(r));
  fleet_client_options_init(&o);
  o.reconnect_initial_ms = 50;
  ctx_init(&t, url, &o);
  ASSERT_ERR(FLEET_EAUTH, ctx_ping(&t));
  ASSERT_ERR(FLEET_EAUTH, t.last_status);
  ASSERT_EQ(0, t.states[FLEET_CLIENT_READY]);
  ctx_close(&t);

  /* No password at all: the handshake's PING answers NOAUTH before any
   * script is sent (a script's bulk over 16 KB would make Redis drop the
   * unauthenticated connection instead): FLEET_EAUTH, every time. */
  for (i = 0; i < 5; i++) {
    ctx_init(&t, fleet_test_redis_url(r), &o);
    ASSERT_ERR(FLEET_EAUTH, ctx_ping(&t));
    ASSERT_NOT_NULL(strstr(t.last_ping_detail, "NOAUTH"));
    ctx_close(&t);
  }
  fleet_test_redis_free(r);
  return 0;
}

/* AUTH as an ACL user, and SELECT of the database from the URL. */
TEST_IMPL(redis_auth_acl_user) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_client_options_t o;
  client_ctx_t t;
  char url[128];

  redis_ok(r, "ACL SETUSER alice on >pw ~* &* +@all");
  snprintf(url, sizeof(url), "redis://alice:pw@127.0.0.1:%d/3",
           fleet_test_redis_port(r));
  ctx_init(&t, url, NULL);
  ASSERT_OK(ctx_ping(&t));
  ctx_close(&t);

  snprintf(url, sizeof(url), "redis://alice:nope@127.0.0.1:%d",
           fleet_test_redis_port(r));
  fleet_client_options_init(&o);
  o.reconnect_initial_ms = 50;
  ctx_init(&t, url, &o);
  ASSERT_ERR(FLEET_EAUTH, ctx_ping(&t));
  ASSERT_ERR(FLEET_EAUTH, t.last_status);
  ctx_close(&t);

  /* A database the server does not have fails the handshake, and the
   * commands waiting for it, at once and with the server's words. */
  snprintf(url, sizeof(url), "redis://alice:pw@127.0.0.1:%d/999",
           fleet_test_redis_port(r));
  ctx_init(&t, url, &o);
  ASSERT_ERR(FLEET_EBADDB, ctx_ping(&t));
  ASSERT_NOT_NULL(strstr(fleet_client_last_error(&t.client), "SELECT"));
  ASSERT_NOT_NULL(strstr(fleet_client_last_error(&t.client), "DB index"));
  ASSERT(ctx_wait_state(&t, FLEET_CLIENT_RECONNECTING, 3000));
  ASSERT_ERR(FLEET_EBADDB, t.last_status);
  ctx_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* unix:// sockets, and host names resolved on the loop ("localhost" may
 * resolve to ::1 first, where nothing listens: the next address is tried). */
TEST_IMPL(redis_unix_and_hostname) {
  char sock[512], arg[600], url[640];
  const char *args[] = {"--unixsocket", NULL, NULL};
  fleet_test_redis_t *r;
  client_ctx_t t;

  snprintf(sock, sizeof(sock), "/tmp/fleet-test-%d.sock", (int)getpid());
  snprintf(arg, sizeof(arg), "%s", sock);
  args[1] = arg;
  r = fleet_test_redis_start_or_skip(args);
  snprintf(url, sizeof(url), "unix://%s?db=2", sock);
  ctx_init(&t, url, NULL);
  ASSERT_OK(ctx_ping(&t));
  ctx_close(&t);

  snprintf(url, sizeof(url), "redis://localhost:%d", fleet_test_redis_port(r));
  ctx_init(&t, url, NULL);
  ASSERT_OK(ctx_ping(&t));
  ctx_close(&t);
  fleet_test_redis_free(r);
  unlink(sock);
  return 0;
}

/* Every embedded script's SHA1 is the one Redis computes for its body (the
 * handshake loads each body), so EVALSHA never falls back to EVAL in
 * normal running; includes expanded at build time are hashed as sent. The
 * same holds for the cluster adapter's copies, which differ only in how
 * they publish. */
TEST_IMPL(redis_script_shas) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  client_ctx_t t;
  char url[160];
  size_t i;

  /* Without functions, the handshake loads every script (with them, it
   * loads the libraries of those that have one instead). */
  snprintf(url, sizeof(url), "%s?functions=0", fleet_test_redis_url(r));
  ctx_init(&t, url, NULL);
  ASSERT_OK(ctx_ping(&t));
  ASSERT_GT(fleet__nscripts, 1);
  for (i = 0; i < fleet__nscripts; i++) {
    redisReply *reply =
        fleet_test_redis_cmd(r, "SCRIPT EXISTS %s", fleet__scripts[i].sha1);
    ASSERT_NOT_NULL(reply);
    ASSERT_EQ(REDIS_REPLY_ARRAY, reply->type);
    if (reply->element[0]->integer != 1)
      fleet_test__fail(__FILE__, __LINE__, "script %s: SHA1 %s unknown",
                       fleet__scripts[i].name, fleet__scripts[i].sha1);
    freeReplyObject(reply);
    ASSERT_NULL(strstr(fleet__scripts[i].body, "\n--#include "));
  }
  /* The cluster adapter's copies, loaded by hand (this is one Redis): the
   * same SHA1 as Redis computes, and each copy fixed to its way of
   * publishing (lib/wake.lua), where the script publishes at all. */
  for (i = 0; i < fleet__nscripts; i++) {
    const fleet__script_t *p = &fleet__scripts[i];
    const fleet__script_t *s = &fleet__scripts_sharded[i];
    redisReply *reply =
        fleet_test_redis_cmd(r, "SCRIPT LOAD %b", s->body, s->len);
    ASSERT_NOT_NULL(reply);
    ASSERT_EQ(REDIS_REPLY_STRING, reply->type);
    ASSERT_STR_EQ(s->sha1, reply->str);
    freeReplyObject(reply);
    ASSERT_STR_EQ(p->name, s->name);
    ASSERT_NULL(strstr(p->body, "local wake_sharded\n"));
    ASSERT_NULL(strstr(s->body, "local wake_sharded\n"));
    if (strstr(p->body, "publish_wake(") != NULL) {
      ASSERT_NOT_NULL(strstr(p->body, "local wake_sharded = false\n"));
      ASSERT_NOT_NULL(strstr(s->body, "local wake_sharded = true\n"));
      ASSERT(strcmp(p->sha1, s->sha1) != 0);
    } else {
      ASSERT_STR_EQ(p->sha1, s->sha1);
    }
  }
  ctx_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* How many libraries named fleet_* the server has. */
static size_t redis_fleet_libraries(fleet_test_redis_t *r) {
  redisReply *reply =
      fleet_test_redis_cmd(r, "FUNCTION LIST LIBRARYNAME fleet_*");
  size_t n;

  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(REDIS_REPLY_ARRAY, reply->type);
  n = reply->elements;
  freeReplyObject(reply);
  return n;
}

/* The scripts as Redis 7 functions (scripts.h, docs/deploy.md): every
 * library, the cluster's copies included, loads under its own name; the
 * handshake loads them and the ops run as FCALL; after a FUNCTION FLUSH
 * the op is sent again as EVAL and EVALSHA follows, until a reconnect
 * loads the libraries again; with ?functions=0 nothing is loaded. */
TEST_IMPL(redis_functions) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  size_t i, nlib = 0;
  char url[160];
  qt_t t;

  for (i = 0; i < fleet__nscripts; i++) {
    const fleet__script_t *v[2] = {&fleet__scripts[i],
                                   &fleet__scripts_sharded[i]};
    size_t k;
    for (k = 0; k < 2; k++) {
      redisReply *reply;
      if (v[k]->lib == NULL) {
        ASSERT_NULL(v[k]->fname);
        continue;
      }
      ASSERT_UEQ(46, strlen(v[k]->fname));
      ASSERT_NOT_NULL(strstr(v[k]->lib, v[k]->fname));
      reply = fleet_test_redis_cmd(r, "FUNCTION LOAD REPLACE %b", v[k]->lib,
                                   v[k]->lib_len);
      ASSERT_NOT_NULL(reply);
      if (reply->type != REDIS_REPLY_STRING)
        fleet_test__fail(__FILE__, __LINE__, "library of %s: %s", v[k]->name,
                         reply->str);
      ASSERT_STR_EQ(v[k]->fname, reply->str);
      freeReplyObject(reply);
    }
    nlib += fleet__scripts[i].lib != NULL;
  }
  /* The queue's hot scripts are among them. */
  for (i = 0; i < fleet__nscripts; i++)
    if (strcmp(fleet__scripts[i].name, "queue_complete_claim") == 0 ||
        strcmp(fleet__scripts[i].name, "queue_enqueue") == 0)
      ASSERT_NOT_NULL(fleet__scripts[i].lib);
  ASSERT_GT(nlib, 20);

  redis_ok(r, "FUNCTION FLUSH");
  redis_ok(r, "CONFIG RESETSTAT");
  qt_open(&t, fleet_test_redis_url(r), "fn", NULL);
  qt_add(&t, "a", "1", NULL);
  ASSERT_UEQ(nlib, redis_fleet_libraries(r));
  ASSERT_EQ(1, fleet_test_redis_command_calls(r, "fcall"));
  ASSERT_EQ(0, fleet_test_redis_command_calls(r, "evalsha"));

  /* The functions are gone: the op goes again as EVAL, then EVALSHA. */
  redis_ok(r, "FUNCTION FLUSH");
  qt_add(&t, "a", "2", NULL);
  ASSERT_EQ(2, fleet_test_redis_command_calls(r, "fcall"));
  ASSERT_EQ(1, fleet_test_redis_command_calls(r, "eval"));
  qt_add(&t, "a", "3", NULL);
  ASSERT_EQ(2, fleet_test_redis_command_calls(r, "fcall"));
  ASSERT_EQ(1, fleet_test_redis_command_calls(r, "evalsha"));

  /* A reconnect loads them again, and FCALL comes back. */
  redis_ok(r, "CLIENT KILL TYPE normal SKIPME yes");
  ASSERT(ctx_wait_state(&t.c, FLEET_CLIENT_READY, 5000));
  qt_add(&t, "a", "4", NULL);
  ASSERT_UEQ(nlib, redis_fleet_libraries(r));
  ASSERT_EQ(3, fleet_test_redis_command_calls(r, "fcall"));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(4, t.counts.pending);
  qt_close(&t);

  /* functions=0: no library is loaded, every script is an EVALSHA. */
  redis_ok(r, "FUNCTION FLUSH");
  redis_ok(r, "CONFIG RESETSTAT");
  snprintf(url, sizeof(url), "%s?functions=0", fleet_test_redis_url(r));
  qt_open(&t, url, "fn", NULL);
  qt_add(&t, "a", "5", NULL);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(5, t.counts.pending);
  qt_close(&t);
  ASSERT_UEQ(0, redis_fleet_libraries(r));
  ASSERT_EQ(0, fleet_test_redis_command_calls(r, "fcall"));
  ASSERT_EQ(2, fleet_test_redis_command_calls(r, "evalsha"));
  fleet_test_redis_free(r);
  return 0;
}

/* Feeds `len` bytes to `rd` one at a time, so that the reply arrives in
 * pieces, and returns the reply, which must be complete at the last byte
 * and not before. */
static redisReply *reader_parse(redisReader *rd, const char *p, size_t len) {
  void *reply = NULL;
  size_t i;

  for (i = 0; i < len; i++) {
    ASSERT_NULL(reply);
    ASSERT_OK(redisReaderFeed(rd, p + i, 1));
    ASSERT_OK(redisReaderGetReply(rd, &reply));
  }
  ASSERT_NOT_NULL(reply);
  return reply;
}

static void reader_check_nested(redisReader *rd) {
  static const char resp[] = "*3\r\n:42\r\n+OK\r\n*3\r\n$3\r\nabc\r\n$-1\r\n"
                             "*0\r\n";
  redisReply *r = reader_parse(rd, resp, sizeof(resp) - 1), *in;

  ASSERT_EQ(REDIS_REPLY_ARRAY, r->type);
  ASSERT_EQ(3, r->elements);
  ASSERT_EQ(REDIS_REPLY_INTEGER, r->element[0]->type);
  ASSERT_EQ(42, r->element[0]->integer);
  ASSERT_EQ(REDIS_REPLY_STATUS, r->element[1]->type);
  ASSERT_STR_EQ("OK", r->element[1]->str);
  in = r->element[2];
  ASSERT_EQ(REDIS_REPLY_ARRAY, in->type);
  ASSERT_EQ(3, in->elements);
  ASSERT_EQ(REDIS_REPLY_STRING, in->element[0]->type);
  ASSERT_EQ(3, in->element[0]->len);
  ASSERT_STR_EQ("abc", in->element[0]->str);
  ASSERT_EQ(REDIS_REPLY_NIL, in->element[1]->type);
  ASSERT_EQ(REDIS_REPLY_ARRAY, in->element[2]->type);
  ASSERT_EQ(0, in->element[2]->elements);
}

/* A connection's reader builds every RESP2 shape in its arena, replies
 * that arrive in pieces included, and the arena serves reply after reply
 * across resets: after strings and arrays larger than its first block, and
 * after a reader that was freed with a reply half parsed. */
TEST_IMPL(redis_reader_arena) {
  fleet__rarena_t arena = {NULL};
  redisReader *rd = fleet__reader_create(&arena);
  redisReply *r;
  char *big;
  size_t n = 100000, i, len;

  ASSERT_NOT_NULL(rd);
  r = reader_parse(rd, "$-1\r\n", 5);
  ASSERT_EQ(REDIS_REPLY_NIL, r->type);
  fleet__rarena_reset(&arena);
  r = reader_parse(rd, "*-1\r\n", 5);
  ASSERT_EQ(REDIS_REPLY_NIL, r->type);
  fleet__rarena_reset(&arena);
  r = reader_parse(rd, "-ERR boom\r\n", 11);
  ASSERT_EQ(REDIS_REPLY_ERROR, r->type);
  ASSERT_MEM_EQ("ERR boom", r->str, r->len);
  fleet__rarena_reset(&arena);
  reader_check_nested(rd);
  fleet__rarena_reset(&arena);

  /* A string of 100000 bytes, then an array of 20000 integers. */
  big = malloc(n + 32);
  ASSERT_NOT_NULL(big);
  len = (size_t)snprintf(big, 32, "$%zu\r\n", n);
  memset(big + len, 'x', n);
  memcpy(big + len + n, "\r\n", 2);
  r = reader_parse(rd, big, len + n + 2);
  ASSERT_EQ(REDIS_REPLY_STRING, r->type);
  ASSERT_EQ(n, r->len);
  ASSERT_EQ('x', r->str[n - 1]);
  ASSERT_EQ('\0', r->str[n]);
  fleet__rarena_reset(&arena);
  free(big);
  big = malloc(20000 * 8 + 16);
  ASSERT_NOT_NULL(big);
  len = (size_t)sprintf(big, "*20000\r\n");
  for (i = 0; i < 20000; i++)
    len += (size_t)sprintf(big + len, ":%zu\r\n", i % 1000);
  ASSERT_OK(redisReaderFeed(rd, big, len));
  ASSERT_OK(redisReaderGetReply(rd, (void **)&r));
  ASSERT_NOT_NULL(r);
  ASSERT_EQ(20000, r->elements);
  for (i = 0; i < 20000; i++)
    ASSERT_EQ((long long)(i % 1000), r->element[i]->integer);
  fleet__rarena_reset(&arena);
  free(big);
  reader_check_nested(rd);
  fleet__rarena_reset(&arena);

  /* A reader freed in the middle of a reply, as on a broken connection:
   * the next reader parses from a clean arena. */
  ASSERT_OK(redisReaderFeed(rd, "*2\r\n:1\r\n", 8));
  ASSERT_OK(redisReaderGetReply(rd, (void **)&r));
  ASSERT_NULL(r);
  redisReaderFree(rd);
  fleet__rarena_reset(&arena);
  rd = fleet__reader_create(&arena);
  ASSERT_NOT_NULL(rd);
  reader_check_nested(rd);
  redisReaderFree(rd);
  fleet__rarena_free(&arena);
  return 0;
}

/* What each op of redis_large_writes_in_order expects, and whether its
 * reply came with that shape. */
typedef struct {
  fleet__reply_type_t want;
  int *done;
} write_order_t;

static void on_ordered_reply(void *arg, int status, const fleet__reply_t *r) {
  write_order_t *w = arg;

  ASSERT_OK(status);
  ASSERT_EQ(w->want, r->type);
  (*w->done)++;
}

/* Commands far larger than the socket takes at once are written partly at
 * once and partly by a queued write; commands issued while that write is
 * pending go out after it, so that every reply reaches its own command. */
TEST_IMPL(redis_large_writes_in_order) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  static const fleet__op_t ops[] = {FLEET__OP_PUBLISH, FLEET__OP_TIME,
                                    FLEET__OP_PUBLISH, FLEET__OP_PING};
  static const fleet__reply_type_t want[] = {
      FLEET__REPLY_INT, FLEET__REPLY_ARRAY, FLEET__REPLY_INT,
      FLEET__REPLY_STATUS};
  write_order_t w[4];
  size_t big = 16 * 1024 * 1024, i;
  fleet_bytes_t args[2];
  client_ctx_t t;
  char *payload;
  int done = 0;

  payload = malloc(big);
  ASSERT_NOT_NULL(payload);
  memset(payload, 'p', big);
  args[0].base = "chan";
  args[0].len = 4;
  args[1].base = payload;
  args[1].len = big;
  ctx_init(&t, fleet_test_redis_url(r), NULL);
  ASSERT_OK(ctx_ping(&t));
  for (i = 0; i < 4; i++) {
    w[i].want = want[i];
    w[i].done = &done;
    ASSERT_OK(fleet__backend_call(
        fleet__client_backend(&t.client), ops[i], NULL, 0, args,
        ops[i] == FLEET__OP_PUBLISH ? 2 : 0, on_ordered_reply, &w[i]));
    /* Each op goes out on its own flush, the big ones partly queued. */
    uv_run(&t.loop, UV_RUN_NOWAIT);
  }
  ASSERT(fleet_test_wait_count(&t.loop, &done, 4,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  free(payload);
  ctx_close(&t);
  fleet_test_redis_free(r);
  return 0;
}
