/* test_tools_output.c -- what the tools (fleet, fleet-demo, http-queue)
 * print, run as a user runs them: a hostile queue name never reaches the
 * terminal raw, a backend that cannot be reached is one line on stderr
 * with its cause and the password hidden, the URL comes from FLEET_URL
 * (then REDIS_URL) without --url, tls_verify=0 is warned about, and the
 * URL's wait_replicas is honoured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"

/* tests/CMakeLists.txt passes the programs' paths when they are built. */
#ifndef FLEET_CLI_PATH
#define FLEET_CLI_PATH "/nonexistent"
#endif
#ifndef FLEET_DEMO_PATH
#define FLEET_DEMO_PATH "/nonexistent"
#endif
#ifndef FLEET_HTTP_QUEUE_PATH
#define FLEET_HTTP_QUEUE_PATH "/nonexistent"
#endif

/* A queue name a hostile writer might choose: it clears the screen, moves
 * the cursor, breaks the line and rings the bell when printed raw. */
#define TOOLS_HOSTILE "evil\x1b[2J\r\n\x07q"

/* What one run printed, and how it ended (status -1: killed, it hung). */
typedef cli_run_t tools_run_t;

static void tools_skip_unless(const char *path) {
  if (access(path, X_OK) != 0)
    fleet_test_skip("the tool is not built");
}

/* Runs `path` with `args` (argv[0] first, NULL ended) to its end, with
 * FLEET_URL and REDIS_URL unset, or `env_name` set to `env_value`. It is
 * killed if it runs for 20 s (scaled by the slack). */
static void tools_run(tools_run_t *r, const char *path, const char *env_name,
                      const char *env_value, const char *const *args) {
  cli_reap_within(cli_spawn_prog(path, args, env_name, env_value, "tools"),
                  "tools", r, fleet_test_ms(20000));
  fprintf(stderr, "%s -> %d\n  out: %.300s\n  err: %s", args[1], r->status,
          r->out, r->err);
}

#define ARGV(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

/* None of the hostile name's control bytes was printed raw. */
static void tools_inert(const char *s) {
  ASSERT_NULL(strchr(s, '\x1b'));
  ASSERT_NULL(strchr(s, '\r'));
  ASSERT_NULL(strchr(s, '\x07'));
  ASSERT_NULL(strstr(s, "evil\n")); /* the '\n' inside the name */
}

/* fleet_escape_text(): control bytes, C1 controls and bytes that are not
 * UTF-8 become \xNN; the rest is kept; whole units only, snprintf's
 * length. */
TEST_IMPL(tools_escape_text) {
  static const struct {
    const char *in;
    size_t len;
    const char *want;
  } cases[] = {
      {"plain text, \\ kept", 18, "plain text, \\ kept"},
      {"a\x1b[2Jb\r\n\x07\x7f", 10, "a\\x1b[2Jb\\x0d\\x0a\\x07\\x7f"},
      {"nul\0x", 5, "nul\\x00x"},
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
       "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
      {"c1 \xc2\x9b"
       "2J",
       7, "c1 \\xc2\\x9b2J"},
      {"bad \xff\xc3 \xed\xa0\x80 \xc0\xaf", 13,
       "bad \\xff\\xc3 \\xed\\xa0\\x80 \\xc0\\xaf"},
      {"cut \xe2\x82", 6, "cut \\xe2\\x82"},
  };
  char out[128];
  size_t i, n;

  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    n = fleet_escape_text(cases[i].in, cases[i].len, out, sizeof(out));
    ASSERT_STR_EQ(out, cases[i].want);
    ASSERT_UEQ(n, strlen(cases[i].want));
  }
  /* Whole units: "a\x1b" in 4 bytes is "a" (the escape does not fit),
   * and the length is that of the whole. */
  memset(out, 'Z', sizeof(out));
  ASSERT_UEQ(5, fleet_escape_text("a\x1b", 2, out, 4));
  ASSERT_STR_EQ(out, "a");
  ASSERT_UEQ(5, fleet_escape_text("a\x1b", 2, out, 6));
  ASSERT_STR_EQ(out, "a\\x1b");
  ASSERT_UEQ(5, fleet_escape_text("\xc3\xa9\xc3\xa9x", 5, out, 4));
  ASSERT_STR_EQ(out, "\xc3\xa9");
  ASSERT_UEQ(3, fleet_escape_text("abc", 3, NULL, 0));
  ASSERT_UEQ(0, fleet_escape_text(NULL, 0, out, sizeof(out)));
  ASSERT_STR_EQ(out, "");
  /* fleet_escape_print(): the formatted line, escaped, then '\n'. */
  {
    FILE *f = tmpfile();

    ASSERT_NOT_NULL(f);
    ASSERT_OK(fleet_escape_print(f, "q %s: %d", "evil\x1b[2J\r\n", 7));
    rewind(f);
    n = fread(out, 1, sizeof(out) - 1, f);
    out[n] = '\0';
    ASSERT_STR_EQ(out, "q evil\\x1b[2J\\x0d\\x0a: 7\n");
    fclose(f);
  }
  return 0;
}

/* fleet_url_from_env(): FLEET_URL, then REDIS_URL, an empty one unset. */
TEST_IMPL(tools_url_from_env) {
  unsetenv("FLEET_URL");
  unsetenv("REDIS_URL");
  ASSERT_NULL(fleet_url_from_env());
  setenv("REDIS_URL", "redis://r:1", 1);
  ASSERT_STR_EQ(fleet_url_from_env(), "redis://r:1");
  setenv("FLEET_URL", "", 1);
  ASSERT_STR_EQ(fleet_url_from_env(), "redis://r:1");
  setenv("FLEET_URL", "redis://f:2", 1);
  ASSERT_STR_EQ(fleet_url_from_env(), "redis://f:2");
  unsetenv("FLEET_URL");
  unsetenv("REDIS_URL");
  return 0;
}

/* A hostile queue name through `fleet`: queue add, the jobs page (table
 * and footer), one watch frame, JSON, and the error paths; the raw bytes
 * never appear, the escape does. */
TEST_IMPL(tools_cli_hostile_name) {
  fleet_test_redis_t *redis;
  char badurl[256];
  const char *url;
  tools_run_t r;

  tools_skip_unless(FLEET_CLI_PATH);
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", url, "queue", "add", TOOLS_HOSTILE,
                 "pay\x1b]0;title\x07load", "--type", "t\x1b[1m"));
  ASSERT_EQ(0, r.status);
  tools_inert(r.out);
  ASSERT_NOT_NULL(strstr(r.out, "evil\\x1b[2J\\x0d\\x0a\\x07q"));

  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", url, "queue", "jobs", TOOLS_HOSTILE,
                 "--state", "pending"));
  ASSERT_EQ(0, r.status);
  tools_inert(r.out);
  /* The footer names the queue, escaped; the table the payload. */
  ASSERT_NOT_NULL(
      strstr(r.out, "1 pending job(s) in evil\\x1b[2J\\x0d\\x0a\\x07q\n"));
  ASSERT_NOT_NULL(strstr(r.out, "pay\\x1b]0;title\\x07load"));
  ASSERT_NOT_NULL(strstr(r.out, "t\\x1b[1m"));

  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", url, "watch", "queue", TOOLS_HOSTILE,
                 "--count", "1"));
  ASSERT_EQ(0, r.status);
  tools_inert(r.out);
  ASSERT_NOT_NULL(strstr(r.out, "queue evil\\x1b[2J\\x0d\\x0a\\x07q\n"));

  tools_run(
      &r, FLEET_CLI_PATH, NULL, NULL,
      ARGV("fleet", "--url", url, "--json", "queue", "stats", TOOLS_HOSTILE));
  ASSERT_EQ(0, r.status);
  tools_inert(r.out);
  ASSERT_NOT_NULL(strstr(r.out, "evil\\u001b[2J\\u000d\\u000a\\u0007q"));

  /* Errors: a job that is not there, a hostile verb, a hostile option in
   * a URL: one line each, inert. */
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", url, "queue", "get", TOOLS_HOSTILE,
                 "no\x1b[2Jsuch"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  tools_inert(r.err);
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", url, "queue", TOOLS_HOSTILE, "x"));
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  tools_inert(r.err);
  ASSERT_NOT_NULL(strstr(r.err, "\\x1b"));
  snprintf(badurl, sizeof(badurl), "%s/0?%s=1", url, TOOLS_HOSTILE);
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", badurl, "queue", "ls"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  tools_inert(r.err);
  ASSERT_NOT_NULL(strstr(r.err, "unknown option \"evil\\x1b[2J"));
  fleet_test_redis_stop(redis);
  return 0;
}

/* Starts a server that wants a password; `bad` gets a URL with a wrong
 * one, `refused` one of a port where nothing listens. */
static fleet_test_redis_t *tools_auth_server(char *bad, char *refused,
                                             size_t cap) {
  static const char *const args[] = {"--requirepass", "rightpw", NULL};
  fleet_test_redis_t *redis = fleet_test_redis_start_or_skip(args);
  int port = fleet_test_free_port();

  ASSERT_GT(port, 0);
  snprintf(bad, cap, "redis://:wr0ng%%23pw@127.0.0.1:%d",
           fleet_test_redis_port(redis));
  snprintf(refused, cap, "redis://:wr0ngpw@127.0.0.1:%d", port);
  return redis;
}

/* A failed connection: exactly one line on stderr that says so, with the
 * cause, the URL shown, and no password. */
static void tools_one_line(const tools_run_t *r, const char *cause) {
  ASSERT_EQ(1, r->status);
  ASSERT_EQ(1, cli_lines(r->err));
  ASSERT_NOT_NULL(strstr(r->err, "cannot reach the backend"));
  ASSERT_NOT_NULL(strstr(r->err, "redis://:***@127.0.0.1:"));
  ASSERT_NOT_NULL(strstr(r->err, cause));
  ASSERT_NULL(strstr(r->err, "wr0ng"));
  ASSERT_NULL(strstr(r->out, "wr0ng"));
}

TEST_IMPL(tools_cli_one_line) {
  fleet_test_redis_t *redis;
  char bad[128], refused[128], url[256];
  tools_run_t r;

  tools_skip_unless(FLEET_CLI_PATH);
  redis = tools_auth_server(bad, refused, sizeof(bad));
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", bad, "queue", "ls"));
  tools_one_line(&r, "FLEET_EAUTH");
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", refused, "--timeout-ms", "300", "queue",
                 "stats", "q"));
  tools_one_line(&r, "FLEET_ECONNREFUSED");
  /* The same from the environment, without --url. */
  tools_run(&r, FLEET_CLI_PATH, "FLEET_URL", bad, ARGV("fleet", "queue", "ls"));
  tools_one_line(&r, "FLEET_EAUTH");
  tools_run(&r, FLEET_CLI_PATH, "REDIS_URL", bad, ARGV("fleet", "queue", "ls"));
  tools_one_line(&r, "FLEET_EAUTH");
  snprintf(url, sizeof(url), "redis://:rightpw@127.0.0.1:%d",
           fleet_test_redis_port(redis));
  tools_run(&r, FLEET_CLI_PATH, "FLEET_URL", url,
            ARGV("fleet", "--json", "queue", "ls"));
  ASSERT_EQ(0, r.status);
  ASSERT_STR_EQ("[]\n", r.out);
  /* tls_verify=0: one warning line, then the failure's one line (nothing
   * speaks TLS on that port). */
  snprintf(url, sizeof(url), "rediss://:wr0ngpw@127.0.0.1:%d/0?tls_verify=0",
           fleet_test_redis_port(redis));
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", url, "--timeout-ms", "300", "queue", "ls"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(2, cli_lines(r.err));
  ASSERT_EQ(0,
            strncmp(r.err, "fleet: warn: TLS to rediss://:***@127.0.0.1:", 44));
  ASSERT_NOT_NULL(strstr(r.err, "(tls_verify=0): the server's certificate "
                                "is not checked"));
  ASSERT_NULL(strstr(r.err, "wr0ng"));
  /* A '#' in the password: refused, one line, not printed. */
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url",
                 "redis+sentinel://h/m?sentinel_password=ab#cd", "queue",
                 "ls"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "sentinel_password holds an unescaped '#'"));
  ASSERT_NULL(strstr(r.err, "cd"));
  fleet_test_redis_stop(redis);
  return 0;
}

TEST_IMPL(tools_demo_one_line) {
  fleet_test_redis_t *redis;
  char bad[128], refused[128], url[256];
  tools_run_t r;

  tools_skip_unless(FLEET_DEMO_PATH);
  redis = tools_auth_server(bad, refused, sizeof(bad));
  tools_run(&r, FLEET_DEMO_PATH, NULL, NULL,
            ARGV("fleet-demo", "--url", bad, "enqueue", "--queue", "q",
                 "--count", "3"));
  tools_one_line(&r, "FLEET_EAUTH");
  tools_run(&r, FLEET_DEMO_PATH, NULL, NULL,
            ARGV("fleet-demo", "--url", refused, "stats", "--queue", "q"));
  tools_one_line(&r, "FLEET_ECONNREFUSED");
  tools_run(&r, FLEET_DEMO_PATH, "FLEET_URL", bad,
            ARGV("fleet-demo", "stats", "--queue", "q"));
  tools_one_line(&r, "FLEET_EAUTH");
  /* The long-running commands too: their handles' background errors are
   * that same line, and the command ends. */
  tools_run(&r, FLEET_DEMO_PATH, "FLEET_URL", bad,
            ARGV("fleet-demo", "worker", "--queue", "q", "--concurrency", "1",
                 "--work-ms", "1"));
  tools_one_line(&r, "FLEET_EAUTH");
  tools_run(&r, FLEET_DEMO_PATH, "FLEET_URL", bad,
            ARGV("fleet-demo", "cron", "run"));
  tools_one_line(&r, "FLEET_EAUTH");
  tools_run(&r, FLEET_DEMO_PATH, "FLEET_URL", bad,
            ARGV("fleet-demo", "pool", "ticker", "--pool", "p", "--name", "t",
                 "--period-ms", "100"));
  tools_one_line(&r, "FLEET_EAUTH");
  /* FLEET_URL is where the jobs go (not memory://). */
  snprintf(url, sizeof(url), "redis://:rightpw@127.0.0.1:%d",
           fleet_test_redis_port(redis));
  tools_run(&r, FLEET_DEMO_PATH, "FLEET_URL", url,
            ARGV("fleet-demo", "enqueue", "--queue", "envq", "--count", "2"));
  ASSERT_EQ(0, r.status);
  tools_run(&r, FLEET_DEMO_PATH, "FLEET_URL", url,
            ARGV("fleet-demo", "stats", "--queue", "envq"));
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "\"pending\":2"));
  fleet_test_redis_stop(redis);
  return 0;
}

TEST_IMPL(tools_http_queue_one_line) {
  fleet_test_redis_t *redis;
  char bad[128], refused[128], port[16];
  tools_run_t r;

  tools_skip_unless(FLEET_HTTP_QUEUE_PATH);
  redis = tools_auth_server(bad, refused, sizeof(bad));
  snprintf(port, sizeof(port), "%d", fleet_test_free_port());
  tools_run(&r, FLEET_HTTP_QUEUE_PATH, NULL, NULL,
            ARGV("http-queue", "--url", bad, "--port", port));
  tools_one_line(&r, "FLEET_EAUTH");
  tools_run(&r, FLEET_HTTP_QUEUE_PATH, NULL, NULL,
            ARGV("http-queue", "--url", refused, "--port", port));
  tools_one_line(&r, "FLEET_ECONNREFUSED");
  tools_run(&r, FLEET_HTTP_QUEUE_PATH, "FLEET_URL", bad,
            ARGV("http-queue", "--port", port));
  tools_one_line(&r, "FLEET_EAUTH");
  fleet_test_redis_stop(redis);
  return 0;
}

/* The URL's wait_replicas through the CLI, on a server without replicas:
 * an enqueue that no replica acknowledges fails (one line, exit 1) and
 * is on the master all the same; wait_replicas=0 succeeds; bad values
 * are refused before anything is written. */
TEST_IMPL(tools_cli_wait_replicas) {
  fleet_test_redis_t *redis;
  char url[256];
  tools_run_t r;

  tools_skip_unless(FLEET_CLI_PATH);
  redis = fleet_test_redis_start_or_skip(NULL);
  snprintf(url, sizeof(url), "%s/0?wait_replicas=1&wait_timeout_ms=%llu",
           fleet_test_redis_url(redis), (unsigned long long)fleet_test_ms(100));
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", url, "queue", "add", "w", "x"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "FLEET_ETIMEDOUT"));
  ASSERT_NOT_NULL(strstr(r.err, "0 of 1 replicas"));
  snprintf(url, sizeof(url), "%s/0?wait_replicas=0",
           fleet_test_redis_url(redis));
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", url, "queue", "add", "w", "y"));
  ASSERT_EQ(0, r.status);
  /* Both jobs are there: WAIT undoes nothing. */
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", url, "--json", "queue", "stats", "w"));
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "\"pending\":2"));
  {
    static const char *const bads[] = {"wait_replicas=-1", "wait_replicas=x",
                                       "wait_replicas=1&wait_replicas=1",
                                       "wait_timeout_ms=0"};
    size_t i;

    for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
      snprintf(url, sizeof(url), "%s/0?%s", fleet_test_redis_url(redis),
               bads[i]);
      tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
                ARGV("fleet", "--url", url, "queue", "add", "w", "z"));
      ASSERT_EQ(1, r.status);
      ASSERT_EQ(1, cli_lines(r.err));
      ASSERT_NOT_NULL(strstr(r.err, "FLEET_EBADURL (option wait_"));
    }
  }
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", url, "--json", "queue", "stats", "w"));
  ASSERT_EQ(1, r.status); /* the last URL is refused: nothing written */
  snprintf(url, sizeof(url), "%s", fleet_test_redis_url(redis));
  tools_run(&r, FLEET_CLI_PATH, NULL, NULL,
            ARGV("fleet", "--url", url, "--json", "queue", "stats", "w"));
  ASSERT_NOT_NULL(strstr(r.out, "\"pending\":2"));
  fleet_test_redis_stop(redis);
  return 0;
}
