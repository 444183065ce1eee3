/* test_fixture.c -- tests of the redis-server fixture that integration and
 * conformance tests rely on. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

/* Runs `cmd` and checks that the reply is the status or string `want`. */
static void fixture_expect(fleet_test_redis_t *r, const char *cmd,
                           const char *want) {
  redisReply *reply;

  reply = fleet_test_redis_cmd(r, cmd);
  ASSERT_NOT_NULL(reply);
  if (reply->type != REDIS_REPLY_STATUS && reply->type != REDIS_REPLY_STRING)
    fleet_test__fail(__FILE__, __LINE__, "%s: reply type %d (%s)", cmd,
                     reply->type, reply->str != NULL ? reply->str : "");
  ASSERT_STR_EQ(reply->str, want);
  freeReplyObject(reply);
}

/* Runs `cmd` and checks that the reply is nil. */
static void fixture_expect_nil(fleet_test_redis_t *r, const char *cmd) {
  redisReply *reply;

  reply = fleet_test_redis_cmd(r, cmd);
  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(reply->type, REDIS_REPLY_NIL);
  freeReplyObject(reply);
}

/* Checks that `CONFIG GET name` gives `want`. */
static void fixture_expect_config(fleet_test_redis_t *r, const char *name,
                                  const char *want) {
  redisReply *reply;

  reply = fleet_test_redis_cmd(r, "CONFIG GET %s", name);
  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(reply->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(reply->elements, 2);
  ASSERT_STR_EQ(reply->element[1]->str, want);
  freeReplyObject(reply);
}

TEST_IMPL(fixture_redis_basic) {
  static const char value[] = {'a', '\0', 'b', '\n', '\xff'};
  const char *argv[3];
  size_t argvlen[3];
  char want[64];
  char dir[PATH_MAX];
  char real[PATH_MAX];
  char log[PATH_MAX + 16];
  struct stat st;
  fleet_test_redis_t *r;
  redisReply *reply;
  const char *tmp;

  r = fleet_test_redis_start_or_skip(NULL);
  ASSERT_GT(fleet_test_redis_port(r), 0);
  ASSERT_LT(fleet_test_redis_port(r), 65536);
  ASSERT_GT(fleet_test_redis_pid(r), 0);
  snprintf(want, sizeof(want), "redis://127.0.0.1:%d",
           fleet_test_redis_port(r));
  ASSERT_STR_EQ(fleet_test_redis_url(r), want);

  /* The directory is private, under $TMPDIR, and holds the log. */
  snprintf(dir, sizeof(dir), "%s", fleet_test_redis_dir(r));
  tmp = getenv("TMPDIR");
  if (tmp != NULL && tmp[0] != '\0')
    ASSERT_EQ(strncmp(dir, tmp, strlen(tmp)), 0);
  snprintf(log, sizeof(log), "%s/redis.log", dir);
  ASSERT_EQ(stat(log, &st), 0);
  /* Redis reports the directory with symlinks resolved. */
  ASSERT_NOT_NULL(realpath(dir, real));
  fixture_expect_config(r, "dir", real);
  fixture_expect_config(r, "bind", "127.0.0.1");
  fixture_expect_config(r, "save", "");
  fixture_expect_config(r, "appendonly", "no");

  fixture_expect(r, "PING", "PONG");
  fixture_expect(r, "SET k v", "OK");
  fixture_expect(r, "GET k", "v");

  /* Binary-safe arguments. */
  argv[0] = "SET";
  argv[1] = "bin";
  argv[2] = value;
  argvlen[0] = 3;
  argvlen[1] = 3;
  argvlen[2] = sizeof(value);
  reply = fleet_test_redis_cmd_argv(r, 3, argv, argvlen);
  ASSERT_NOT_NULL(reply);
  freeReplyObject(reply);
  reply = fleet_test_redis_cmd(r, "GET %b", "bin", (size_t)3);
  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(reply->type, REDIS_REPLY_STRING);
  ASSERT_EQ(reply->len, sizeof(value));
  ASSERT_MEM_EQ(reply->str, value, sizeof(value));
  freeReplyObject(reply);

  /* An error reply is a reply. */
  reply = fleet_test_redis_cmd(r, "NOSUCHCOMMAND");
  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(reply->type, REDIS_REPLY_ERROR);
  freeReplyObject(reply);

  /* Stopped: no reply, the directory stays; freed: it is gone. */
  ASSERT_EQ(fleet_test_redis_stop(r), 0);
  ASSERT_EQ(fleet_test_redis_pid(r), 0);
  ASSERT_NULL(fleet_test_redis_cmd(r, "PING"));
  ASSERT_EQ(stat(dir, &st), 0);
  ASSERT_EQ(fleet_test_redis_stop(r), 0);
  ASSERT_EQ(fleet_test_redis_kill(r), 0);
  fleet_test_redis_free(r);
  ASSERT_EQ(stat(dir, &st), -1);
  ASSERT_EQ(errno, ENOENT);
  fleet_test_redis_free(NULL);
  return 0;
}

TEST_IMPL(fixture_redis_restart_aof) {
  const char *const aof[] = {"--appendonly", "yes", "--appendfsync", "always",
                             NULL};
  fleet_test_redis_t *r;
  pid_t pid;
  int port;

  r = fleet_test_redis_start_or_skip(aof);
  fixture_expect_config(r, "appendonly", "yes");
  port = fleet_test_redis_port(r);
  pid = fleet_test_redis_pid(r);

  /* A clean stop flushes the appendonly file; a restart reloads it on the
   * same port. */
  fixture_expect(r, "SET k1 v1", "OK");
  ASSERT_EQ(fleet_test_redis_stop(r), 0);
  ASSERT_EQ(fleet_test_redis_restart(r), 0);
  ASSERT_EQ(fleet_test_redis_port(r), port);
  ASSERT_NE(fleet_test_redis_pid(r), pid);
  fixture_expect(r, "GET k1", "v1");

  /* With appendfsync always, a crash loses nothing either. */
  fixture_expect(r, "SET k2 v2", "OK");
  ASSERT_EQ(fleet_test_redis_kill(r), 0);
  ASSERT_EQ(fleet_test_redis_pid(r), 0);
  ASSERT_EQ(fleet_test_redis_restart(r), 0);
  fixture_expect(r, "GET k2", "v2");

  /* Restarting a running server works too. */
  ASSERT_EQ(fleet_test_redis_restart(r), 0);
  fixture_expect(r, "GET k1", "v1");
  fleet_test_redis_free(r);

  /* Without appendonly, a restart starts empty. */
  r = fleet_test_redis_start_or_skip(NULL);
  fixture_expect(r, "SET k v", "OK");
  ASSERT_EQ(fleet_test_redis_restart(r), 0);
  fixture_expect_nil(r, "GET k");
  fleet_test_redis_free(r);
  return 0;
}

TEST_IMPL(fixture_redis_auth) {
  const char *const args[] = {"--requirepass", "s3cret", NULL};
  fleet_test_redis_t *r;
  redisContext *c;
  redisReply *reply;

  r = fleet_test_redis_start_or_skip(args);
  /* The fixture's own connection authenticates. */
  fixture_expect(r, "PING", "PONG");

  /* Anyone else must. */
  c = redisConnect("127.0.0.1", fleet_test_redis_port(r));
  ASSERT_NOT_NULL(c);
  ASSERT_EQ(c->err, 0);
  reply = redisCommand(c, "PING");
  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(reply->type, REDIS_REPLY_ERROR);
  ASSERT_EQ(strncmp(reply->str, "NOAUTH", 6), 0);
  freeReplyObject(reply);
  reply = redisCommand(c, "AUTH s3cret");
  ASSERT_NOT_NULL(reply);
  ASSERT_STR_EQ(reply->str, "OK");
  freeReplyObject(reply);
  redisFree(c);

  /* A restart keeps the arguments, password included. */
  ASSERT_EQ(fleet_test_redis_restart(r), 0);
  fixture_expect(r, "PING", "PONG");
  fleet_test_redis_free(r);
  return 0;
}

TEST_IMPL(fixture_redis_pause) {
  struct timeval tv;
  fleet_test_redis_t *r;
  redisContext *c;
  redisReply *reply;
  uint64_t start;

  r = fleet_test_redis_start_or_skip(NULL);
  ASSERT_EQ(fleet_test_redis_pause(r), 0);
  ASSERT_EQ(fleet_test_redis_pause(r), 0);

  /* The kernel still accepts connections, but nothing is answered. */
  c = redisConnect("127.0.0.1", fleet_test_redis_port(r));
  ASSERT_NOT_NULL(c);
  ASSERT_EQ(c->err, 0);
  tv.tv_sec = 0;
  tv.tv_usec = 200000;
  ASSERT_EQ(redisSetTimeout(c, tv), REDIS_OK);
  start = uv_hrtime();
  reply = redisCommand(c, "PING");
  ASSERT_NULL(reply);
  ASSERT_GE(uv_hrtime() - start, 150000000);
  redisFree(c);

  /* Resumed, it answers again. */
  ASSERT_EQ(fleet_test_redis_resume(r), 0);
  ASSERT_EQ(fleet_test_redis_resume(r), 0);
  fixture_expect(r, "PING", "PONG");

  /* A paused server can still be stopped. */
  ASSERT_EQ(fleet_test_redis_pause(r), 0);
  ASSERT_EQ(fleet_test_redis_stop(r), 0);
  ASSERT_EQ(fleet_test_redis_pid(r), 0);
  ASSERT_EQ(fleet_test_redis_pause(r), -ESRCH);
  ASSERT_EQ(fleet_test_redis_resume(r), -ESRCH);
  fleet_test_redis_free(r);
  return 0;
}

TEST_IMPL(fixture_redis_two_servers) {
  fleet_test_redis_t *a;
  fleet_test_redis_t *b;

  a = fleet_test_redis_start_or_skip(NULL);
  b = fleet_test_redis_start_or_skip(NULL);
  ASSERT_NE(fleet_test_redis_port(a), fleet_test_redis_port(b));
  ASSERT_NE(fleet_test_redis_pid(a), fleet_test_redis_pid(b));
  ASSERT_STR_NE(fleet_test_redis_dir(a), fleet_test_redis_dir(b));
  fixture_expect(a, "SET k a", "OK");
  fixture_expect(b, "SET k b", "OK");
  fixture_expect(a, "GET k", "a");
  fixture_expect(b, "GET k", "b");

  /* Killing one leaves the other alone. */
  ASSERT_EQ(fleet_test_redis_kill(a), 0);
  fixture_expect(b, "GET k", "b");
  fleet_test_redis_free(a);
  fleet_test_redis_free(b);
  return 0;
}

TEST_IMPL(fixture_redis_port_taken) {
  struct sockaddr_in sin;
  fleet_test_redis_t *r;
  int one;
  int fd;

  r = fleet_test_redis_start_or_skip(NULL);
  ASSERT_EQ(fleet_test_redis_kill(r), 0);

  /* Something else takes the port while the server is down: it listens but
   * never answers, and the restart must not mistake it for the server. */
  fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  one = 1;
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
  memset(&sin, 0, sizeof(sin));
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sin.sin_port = htons((uint16_t)fleet_test_redis_port(r));
  ASSERT_EQ(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
  ASSERT_EQ(listen(fd, 8), 0);
  ASSERT_EQ(fleet_test_redis_restart(r), -ECHILD);
  ASSERT_EQ(fleet_test_redis_pid(r), 0);

  /* Once the port is free again, the restart works. */
  ASSERT_EQ(close(fd), 0);
  ASSERT_EQ(fleet_test_redis_restart(r), 0);
  fixture_expect(r, "PING", "PONG");
  fleet_test_redis_free(r);
  return 0;
}

TEST_IMPL(fixture_redis_not_found) {
  fleet_test_redis_t *r;
  char empty[PATH_MAX];
  const char *tmp;

  /* A PATH without redis-server: an empty directory of our own. */
  tmp = getenv("TMPDIR");
  snprintf(empty, sizeof(empty), "%s/fleet-empty-XXXXXX",
           tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
  ASSERT_NOT_NULL(mkdtemp(empty));
  ASSERT_EQ(setenv("PATH", empty, 1), 0);
  ASSERT_EQ(unsetenv("FLEET_REDIS_SERVER"), 0);

  ASSERT_EQ(unsetenv("FLEET_TEST_REQUIRE_REDIS"), 0);
  r = (fleet_test_redis_t *)&r;
  ASSERT_EQ(fleet_test_redis_start(&r, NULL), FLEET_TEST_REDIS_ENOTFOUND);
  ASSERT_NULL(r);

  /* When redis is required, a missing server is an error, not a skip. */
  ASSERT_EQ(setenv("FLEET_TEST_REQUIRE_REDIS", "1", 1), 0);
  ASSERT_EQ(fleet_test_redis_start(&r, NULL), -ENOENT);
  ASSERT_NULL(r);

  /* So is a FLEET_REDIS_SERVER that cannot be run. */
  ASSERT_EQ(unsetenv("FLEET_TEST_REQUIRE_REDIS"), 0);
  ASSERT_EQ(setenv("FLEET_REDIS_SERVER", empty, 1), 0);
  ASSERT_EQ(fleet_test_redis_start(&r, NULL), -ENOENT);
  ASSERT_NULL(r);

  ASSERT_EQ(rmdir(empty), 0);
  return 0;
}
