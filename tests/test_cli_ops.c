/* test_cli_ops.c -- the `fleet` CLI as an operator meets it, against a
 * real redis-server: options anywhere (after the noun and verb, as
 * --opt=V, "--" ending them, unknown ones refused), a refused connection
 * failing at once, one clear line for the common mistakes (not a Redis
 * server, a missing or wrong password, an unknown scheme), unknown queues
 * refused with nothing written, attempts and times that agree between
 * verbs, current and lifetime counts, and colours only on a terminal. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

/* The keys under the prefix "qt" (the CLI's writes show here). */
static long long ops_keys(fleet_test_redis_t *redis) {
  redisReply *r = fleet_test_redis_cmd(redis, "KEYS {qt:*");
  long long n;

  ASSERT_NOT_NULL(r);
  ASSERT_EQ(REDIS_REPLY_ARRAY, r->type);
  n = (long long)r->elements;
  freeReplyObject(r);
  return n;
}

/* Runs `fleet args` and asserts the exit code `status` and one line on
 * stderr holding `want`. */
static void ops_fails(cli_run_t *r, const char *const *args, int status,
                      const char *want) {
  cli_run(r, args);
  if (r->status != status || cli_lines(r->err) != 1 ||
      strstr(r->err, want) == NULL)
    fprintf(stderr, "exit %d, stderr: %s(wanted exit %d and \"%s\")\n",
            r->status, r->err, status, want);
  ASSERT_EQ(status, r->status);
  ASSERT_EQ(1, cli_lines(r->err));
  ASSERT_NOT_NULL(strstr(r->err, want));
}

/* Whether `s` begins with `prefix`. */
static int ops_starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Whether `s` holds a UTC ISO-8601 time with milliseconds and a Z. */
static int ops_has_iso(const char *s) {
  regex_t re;
  int found;

  ASSERT_OK(regcomp(&re,
                    "20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:"
                    "[0-5][0-9]\\.[0-9][0-9][0-9]Z",
                    REG_NOSUB));
  found = regexec(&re, s, 0, NULL, 0) == 0;
  regfree(&re);
  return found;
}

/* ------------------------------------------------------------------------ */
/* Options anywhere                                                         */

TEST_IMPL(cli_options_anywhere) {
  fleet_test_redis_t *redis;
  char url_eq[128];
  const char *url;
  cli_run_t *r = calloc(1, sizeof(*r));
  qt_t t;

  ASSERT_NOT_NULL(r);
  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  snprintf(url_eq, sizeof(url_eq), "--url=%s", url);
  qt_open(&t, url, "mail", NULL);
  qt_add(&t, "send", "to-alice", NULL);
  qt_add(&t, "send", "to-bob", NULL);

  /* The global options after the noun and the verb, as --opt=V. */
  cli_run(r, ARGS("queue", "ls", "--json", url_eq, "--prefix=qt"));
  ASSERT_EQ(0, r->status);
  ASSERT(ops_starts(r->out, "[{\"queue\":\"mail\",\"pending\":2,"));
  cli_run(r, ARGS("queue", "stats", "mail", "--url", url, "--prefix", "qt",
                  "--timeout-ms=3000", "--json"));
  ASSERT_EQ(0, r->status);
  ASSERT(ops_starts(r->out, "{\"queue\":\"mail\",\"pending\":2,"));
  /* A verb's options before its arguments and as --opt=V. */
  cli_run(r, ARGS("queue", "jobs", "--state=pending", "--limit=1", "mail",
                  url_eq, "--prefix=qt"));
  ASSERT_EQ(0, r->status);
  ASSERT_NOT_NULL(strstr(r->out, "to-alice"));
  ASSERT_NULL(strstr(r->out, "to-bob"));
  ASSERT_NOT_NULL(strstr(r->out, "next page: --cursor 1"));
  /* "--" ends the options: a payload that looks like one. */
  cli_run(r, ARGS(url_eq, "--prefix=qt", "--json", "queue", "add", "mail",
                  "--type=odd", "--", "--not-an-option"));
  ASSERT_EQ(0, r->status);
  cli_run(r, ARGS("--url", url, "--prefix", "qt", "--json", "queue", "list",
                  "mail", "--type", "odd"));
  ASSERT_EQ(0, r->status);
  ASSERT_NOT_NULL(strstr(r->out, "\"total\":1,"));
  cli_run(r, ARGS("--url", url, "--prefix", "qt", "--json", "queue", "jobs",
                  "mail", "--state", "pending"));
  ASSERT_NOT_NULL(strstr(r->out, "\"payload\":\"--not-an-option\""));
  /* Other nouns: lock ls --match=, cron ls --ns=, after the verb. */
  cli_run(r, ARGS("lock", "ls", "--match=none*", url_eq, "--json"));
  ASSERT_EQ(0, r->status);
  ASSERT_STR_EQ("[]\n", r->out);
  cli_run(r, ARGS("cron", "ls", "--ns=none", url_eq, "--json"));
  ASSERT_EQ(0, r->status);
  ASSERT_NOT_NULL(strstr(r->out, "\"namespace\":\"none\""));
  /* --help and --version anywhere. */
  cli_run(r, ARGS("queue", "jobs", "mail", "--help"));
  ASSERT_EQ(0, r->status);
  ASSERT_NOT_NULL(strstr(r->out, "usage: fleet queue"));
  cli_run(r, ARGS("queue", "ls", "--version"));
  ASSERT_EQ(0, r->status);
  ASSERT_EQ(0, strncmp(r->out, "fleet ", 6));

  /* Bad options: exit 2, one line that names the option, nothing run. */
  ops_fails(r, ARGS(url_eq, "queue", "ls", "--bogus"), 2,
            "unknown option --bogus");
  ops_fails(r, ARGS(url_eq, "queue", "jobs", "mail", "--frob=1"), 2,
            "unknown option --frob=1");
  ops_fails(r, ARGS(url_eq, "queue", "stats", "mail", "-x"), 2,
            "unknown option -x");
  ops_fails(r, ARGS(url_eq, "queue", "jobs", "mail", "--state"), 2,
            "--state needs a value");
  ops_fails(r,
            ARGS(url_eq, "queue", "jobs", "mail", "--state", "dead",
                 "--state=pending"),
            2, "--state given twice");
  ops_fails(r, ARGS(url_eq, "queue", "retry", "mail", "--all-dead=yes"), 2,
            "--all-dead takes no value");
  ops_fails(r, ARGS(url_eq, "queue", "limit", "mail", "--rate"), 2,
            "--rate needs a value");
  ops_fails(r, ARGS(url_eq, "store", "ls", "c", "i", "v", "--nope"), 2,
            "unknown option --nope");
  ops_fails(r, ARGS(url_eq, "watch", "queue", "mail", "--nope"), 2,
            "unknown option --nope");
  ops_fails(r, ARGS("--bogus", "queue", "ls"), 2, "unknown option --bogus");
  ops_fails(r, ARGS("queue", "ls", "--url"), 2, "--url needs a value");
  /* Nothing was added by any of them. */
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(3, t.counts.pending);

  qt_close(&t);
  fleet_test_redis_free(redis);
  free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Failing fast, and the messages of the common mistakes                    */

/* A child process that answers every connection on 127.0.0.1:`*port` with
 * an HTTP error, as a web server would, for up to 30 s. */
static pid_t ops_http_server(int *port) {
  struct sockaddr_in a;
  socklen_t len = sizeof(a);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  pid_t pid;

  ASSERT_GE(fd, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_OK(bind(fd, (struct sockaddr *)&a, sizeof(a)));
  ASSERT_OK(listen(fd, 16));
  ASSERT_OK(getsockname(fd, (struct sockaddr *)&a, &len));
  *port = ntohs(a.sin_port);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    static const char resp[] = "HTTP/1.1 400 Bad Request\r\n"
                               "Content-Length: 0\r\n\r\n";
    int i, c;

    char buf[4096];

    alarm(30);
    /* As a web server: the request, the answer, then the close once the
     * client is done sending. */
    for (i = 0; i < 100 && (c = accept(fd, NULL, NULL)) >= 0; i++) {
      if (read(c, buf, sizeof(buf)) > 0 &&
          write(c, resp, sizeof(resp) - 1) > 0) {
        shutdown(c, SHUT_WR);
        while (read(c, buf, sizeof(buf)) > 0)
          ;
      }
      close(c);
    }
    _exit(0);
  }
  close(fd);
  return pid;
}

TEST_IMPL(cli_fail_fast) {
  static const char *const pw[] = {"--requirepass", "s3cret", NULL};
  fleet_test_redis_t *redis;
  char url[128], sock[128];
  cli_run_t *r = calloc(1, sizeof(*r));
  uint64_t t0, ms;
  int port, st;
  pid_t http;

  ASSERT_NOT_NULL(r);
  cli_required();
  /* A port nobody listens on: exit 1 at once, with a one-line cause,
   * although each call may take a minute. */
  snprintf(url, sizeof(url), "redis://127.0.0.1:%d", fleet_test_free_port());
  t0 = uv_hrtime();
  cli_run(r, ARGS("--url", url, "--timeout-ms", "60000", "queue", "ls"));
  ms = (uv_hrtime() - t0) / 1000000;
  ASSERT_EQ(1, r->status);
  ASSERT_EQ(1, cli_lines(r->err));
  ASSERT_NOT_NULL(strstr(r->err, "cannot reach the backend at"));
  ASSERT_NOT_NULL(strstr(r->err, "FLEET_ECONNREFUSED"));
  ASSERT_LT(ms, fleet_test_ms(1000));
  /* The same for every verb, and for a missing unix socket. */
  t0 = uv_hrtime();
  cli_run(
      r, ARGS("queue", "stats", "mail", "--url", url, "--timeout-ms", "60000"));
  ASSERT_EQ(1, r->status);
  ASSERT_EQ(1, cli_lines(r->err));
  ASSERT_NOT_NULL(strstr(r->err, "FLEET_ECONNREFUSED"));
  snprintf(sock, sizeof(sock), "unix:///nonexistent/fleet-%d.sock",
           (int)getpid());
  cli_run(r, ARGS("--url", sock, "--timeout-ms", "60000", "queue", "ls"));
  ASSERT_EQ(1, r->status);
  ASSERT_EQ(1, cli_lines(r->err));
  ASSERT_NOT_NULL(strstr(r->err, "no such file or directory"));
  snprintf(url, sizeof(url), "redis+cluster://127.0.0.1:%d,127.0.0.1:%d",
           fleet_test_free_port(), fleet_test_free_port());
  ops_fails(r,
            ARGS("--url", url, "--timeout-ms", "60000", "queue", "stats", "q"),
            1, "connection refused");
  snprintf(url, sizeof(url), "redis+sentinel://127.0.0.1:%d/m",
           fleet_test_free_port());
  ops_fails(r, ARGS("--url", url, "--timeout-ms", "60000", "queue", "ls"), 1,
            "connection refused");
  ASSERT_LT((uv_hrtime() - t0) / 1000000, fleet_test_ms(1000));

  /* Not a Redis server: an HTTP port. */
  http = ops_http_server(&port);
  snprintf(url, sizeof(url), "redis://127.0.0.1:%d", port);
  t0 = uv_hrtime();
  ops_fails(r, ARGS("--url", url, "--timeout-ms", "60000", "queue", "ls"), 1,
            "not a Redis server");
  ASSERT_NOT_NULL(strstr(r->err, "FLEET_EPROTO"));
  ASSERT_LT((uv_hrtime() - t0) / 1000000, fleet_test_ms(1000));
  kill(http, SIGKILL);
  ASSERT_EQ(http, waitpid(http, &st, 0));

  /* An unsupported scheme names the supported ones. */
  ops_fails(r, ARGS("--url", "http://127.0.0.1:1", "queue", "ls"), 1,
            "unknown scheme (fleet takes redis://, rediss://");

  /* A password wanted, and a wrong one: what to do, never the password. */
  redis = fleet_test_redis_start_or_skip(pw);
  ops_fails(
      r, ARGS("--url", fleet_test_redis_url(redis), "queue", "stats", "x"), 1,
      "authentication required: add the password to the URL, e.g. "
      "redis://:PASSWORD@host:port, or set FLEET_URL");
  snprintf(url, sizeof(url), "redis://:hunter2@127.0.0.1:%d",
           fleet_test_redis_port(redis));
  ops_fails(r, ARGS("--url", url, "queue", "ls"), 1,
            "authentication failed: wrong user name or password");
  ASSERT_NULL(strstr(r->err, "hunter2"));
  snprintf(url, sizeof(url), "redis://:s3cret@127.0.0.1:%d",
           fleet_test_redis_port(redis));
  cli_run(r, ARGS("--url", url, "queue", "ls"));
  ASSERT_EQ(0, r->status);

  /* A server that accepts and never answers still gets the timeout. */
  ASSERT_OK(fleet_test_redis_pause(redis));
  t0 = uv_hrtime();
  cli_run(r, ARGS("--url", url, "--timeout-ms", "300", "queue", "ls"));
  ms = (uv_hrtime() - t0) / 1000000;
  ASSERT_OK(fleet_test_redis_resume(redis));
  ASSERT_EQ(1, r->status);
  ASSERT_EQ(1, cli_lines(r->err));
  ASSERT_NOT_NULL(strstr(r->err, "FLEET_ETIMEDOUT"));
  ASSERT_GE(ms, 250);
  fleet_test_redis_free(redis);
  free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Unknown queues                                                           */

TEST_IMPL(cli_unknown_queue) {
  static const char *const verbs[][6] = {
      {"stats", "nosuch", NULL},
      {"jobs", "nosuch", "--state", "pending", NULL},
      {"list", "nosuch", "--type", "t", NULL},
      {"get", "nosuch", "1", NULL},
      {"cancel", "nosuch", "1", NULL},
      {"retry", "nosuch", "--all-dead", NULL},
      {"purge", "nosuch", "--state", "dead", NULL},
      {"pause", "nosuch", NULL},
      {"resume", "nosuch", NULL},
      {"limit", "nosuch", "--rate", "10/1s", NULL},
      {"hold", "nosuch", "--for", "5s", NULL},
      {"weight", "nosuch", "g", "5", NULL}};
  fleet_test_redis_t *redis;
  const char *url, *argv[16];
  cli_run_t *r = calloc(1, sizeof(*r));
  size_t i, k, n;

  ASSERT_NOT_NULL(r);
  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
    n = 0;
    argv[n++] = "--url";
    argv[n++] = url;
    argv[n++] = "--prefix";
    argv[n++] = "qt";
    argv[n++] = "queue";
    for (k = 0; verbs[i][k] != NULL; k++)
      argv[n++] = verbs[i][k];
    argv[n] = NULL;
    ops_fails(r, argv, 1, "no such queue: nosuch");
    ASSERT_EQ(0, strncmp(r->err, "fleet: queue ", 13));
    ASSERT_STR_EQ("", r->out);
    ASSERT_EQ(0, ops_keys(redis));
  }
  ops_fails(r, ARGS("--url", url, "--prefix", "qt", "watch", "queue", "nosuch"),
            1, "no such queue: nosuch");

  /* pause --create makes it: paused, and listed. */
  cli_run_ok(r, url, "qt", ARGS("queue", "pause", "nosuch", "--create"));
  ASSERT_NOT_NULL(strstr(r->out, "paused: true"));
  cli_run_ok(r, url, "qt", ARGS("--json", "queue", "ls"));
  ASSERT_NOT_NULL(strstr(r->out, "{\"queue\":\"nosuch\","));
  ASSERT_NOT_NULL(strstr(r->out, "\"paused\":true}"));
  cli_run_ok(r, url, "qt", ARGS("queue", "stats", "nosuch"));
  cli_run_ok(r, url, "qt", ARGS("queue", "resume", "nosuch"));
  ASSERT_EQ(0, ops_keys(redis));
  /* Another prefix does not see it: the name is checked under it. */
  cli_run_ok(r, url, "qt", ARGS("queue", "add", "real", "x"));
  ops_fails(r,
            ARGS("--url", url, "--prefix", "other", "queue", "stats", "real"),
            1, "no such queue: real");
  cli_run_ok(r, url, "qt", ARGS("queue", "stats", "real"));
  fleet_test_redis_free(redis);
  free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Counts and times                                                         */

/* The number that follows `key` in `s` (a JSON member or "KEY: n"). */
static long long ops_num(const char *s, const char *key) {
  const char *p = strstr(s, key);

  ASSERT_NOT_NULL(p);
  return strtoll(p + strlen(key), NULL, 10);
}

TEST_IMPL(cli_counts_times) {
  fleet_test_redis_t *redis;
  fleet_queue_options_t o;
  fleet_claim_t c;
  qt_job_t job;
  char pat[FLEET_JOB_ID_MAX + 64], done_id[FLEET_JOB_ID_MAX + 1],
      dead_id[FLEET_JOB_ID_MAX + 1];
  const char *url, *row;
  cli_run_t *r = calloc(1, sizeof(*r));
  int i;
  qt_t t;

  ASSERT_NOT_NULL(r);
  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  fleet_queue_options_init(&o);
  o.keep_completed = 100;
  qt_open(&t, url, "work", &o);
  /* One completed at its first attempt, one dead after its 3, one
   * pending. */
  qt_add(&t, "a", "done", done_id);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  c = qt_claim_of(&job);
  ASSERT_OK(qt_complete(&t, &c, 1, NULL));
  qt_add(&t, "a", "dies", dead_id);
  for (i = 0; i < 3; i++) {
    ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
    ASSERT_STR_EQ(dead_id, job.id);
    c = qt_claim_of(&job);
    ASSERT_OK(qt_fail(&t, &c, "boom"));
    /* A failed attempt waits for its backoff: due at once instead. */
    if (i < 2) {
      redisReply *z =
          fleet_test_redis_cmd(redis, "ZADD {qt:work}:delayed 0 %s", dead_id);

      ASSERT_NOT_NULL(z);
      freeReplyObject(z);
    }
  }
  ASSERT_EQ(1, t.dead);
  qt_add(&t, "a", "waits", NULL);

  /* attempts: the same in jobs and get, completed and dead. */
  cli_run_ok(r, url, "qt",
             ARGS("--json", "queue", "jobs", "work", "--state", "completed"));
  snprintf(pat, sizeof(pat),
           "{\"id\":\"%s\",\"type\":\"a\",\"attempts\":", done_id);
  ASSERT_EQ(1, ops_num(r->out, pat));
  cli_run_ok(r, url, "qt", ARGS("--json", "queue", "get", "work", done_id));
  ASSERT_EQ(1, ops_num(r->out, "\"attempts\":"));
  cli_run_ok(r, url, "qt",
             ARGS("--json", "queue", "jobs", "work", "--state", "dead"));
  snprintf(pat, sizeof(pat),
           "{\"id\":\"%s\",\"type\":\"a\",\"attempts\":", dead_id);
  ASSERT_EQ(3, ops_num(r->out, pat));
  cli_run_ok(r, url, "qt", ARGS("--json", "queue", "get", "work", dead_id));
  ASSERT_EQ(3, ops_num(r->out, "\"attempts\":"));

  /* Times: the numbers stay, each with its ISO twin; text shows ISO
   * only, and pending jobs their age. */
  cli_run_ok(r, url, "qt", ARGS("--json", "queue", "get", "work", done_id));
  ASSERT_NOT_NULL(strstr(r->out, "\"created_ms\":"));
  ASSERT_NOT_NULL(strstr(r->out, "\"created\":\"20"));
  ASSERT_NOT_NULL(strstr(r->out, "\"finished\":\"20"));
  ASSERT_NOT_NULL(strstr(r->out, "\"run_at_ms\":0,\"run_at\":null"));
  cli_run_ok(r, url, "qt", ARGS("queue", "get", "work", done_id));
  ASSERT(ops_has_iso(r->out));
  ASSERT_NULL(strstr(r->out, "created_ms"));
  ASSERT_NOT_NULL(strstr(r->out, "\ncreated:"));
  cli_run_ok(r, url, "qt",
             ARGS("queue", "jobs", "work", "--state", "completed"));
  ASSERT_NOT_NULL(strstr(r->out, "FINISHED"));
  ASSERT(ops_has_iso(r->out));
  cli_run_ok(r, url, "qt",
             ARGS("--json", "queue", "jobs", "work", "--state", "pending"));
  ASSERT_GE(ops_num(r->out, "\"age_ms\":"), 0);
  ASSERT(ops_has_iso(r->out));
  cli_run_ok(r, url, "qt", ARGS("queue", "jobs", "work", "--state", "pending"));
  ASSERT_NOT_NULL(strstr(r->out, " AGE "));
  row = strstr(r->out, "\n");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "s "));
  ASSERT(ops_has_iso(row));

  /* Counts: after the dead list is purged, dead is 0 now and 1 ever. */
  cli_run_ok(r, url, "qt", ARGS("queue", "purge", "work", "--state", "dead"));
  cli_run_ok(r, url, "qt", ARGS("--json", "queue", "ls"));
  ASSERT_EQ(0, ops_num(r->out, "\"dead_now\":"));
  ASSERT_EQ(1, ops_num(r->out, "\"dead_ever\":"));
  ASSERT_EQ(1, ops_num(r->out, "\"dead\":")); /* lifetime, as before */
  ASSERT_EQ(0, ops_num(r->out, "\"dead_kept\":"));
  ASSERT_EQ(1, ops_num(r->out, "\"completed_now\":"));
  ASSERT_EQ(1, ops_num(r->out, "\"completed_ever\":"));
  cli_run_ok(r, url, "qt", ARGS("queue", "ls"));
  ASSERT_EQ(0, strncmp(r->out,
                       "QUEUE  PENDING  DELAYED  RUNNING  COMPLETED  DEAD  "
                       "WAITING_CHILDREN  PAUSED  COMPLETED-EVER  DEAD-EVER\n",
                       100));
  ASSERT_NOT_NULL(strstr(r->out, "\nwork   1        0        0        1       "
                                 "   0     0                 false   1       "
                                 "        1\n"));
  cli_run_ok(r, url, "qt", ARGS("queue", "stats", "work"));
  ASSERT_NOT_NULL(strstr(r->out, "\ndead:             0\n"));
  ASSERT_NOT_NULL(strstr(r->out, "\ndead_ever:        1\n"));
  ASSERT_NOT_NULL(strstr(r->out, "\ncompleted:        1\n"));

  qt_close(&t);
  fleet_test_redis_free(redis);
  free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Colours                                                                  */

/* Runs `fleet args` on a pseudo-terminal, with NO_COLOR set to
 * `no_color` (NULL: unset); its output into `out`. */
static void ops_pty_run(const char *const *args, const char *no_color,
                        char *out, size_t cap) {
  const char *argv[32];
  size_t n = 0, got = 0;
  uint64_t t0;
  int master, st;
  ssize_t k;
  pid_t pid;

  argv[n++] = "fleet";
  while (args[n - 1] != NULL && n < 31) {
    argv[n] = args[n - 1];
    n++;
  }
  argv[n] = NULL;
  pid = forkpty(&master, NULL, NULL, NULL);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    unsetenv("FLEET_URL");
    unsetenv("NO_COLOR");
    setenv("TERM", "xterm", 1);
    if (no_color != NULL)
      setenv("NO_COLOR", no_color, 1);
    execv(FLEET_CLI_PATH, (char *const *)argv);
    _exit(127);
  }
  t0 = uv_hrtime();
  for (;;) {
    struct pollfd pfd = {master, POLLIN, 0};

    ASSERT(uv_hrtime() - t0 < fleet_test_ms(10000) * 1000000ULL);
    if (poll(&pfd, 1, 50) == 1) {
      k = read(master, out + got, cap - 1 - got);
      if (k <= 0)
        break; /* EIO once the child is gone */
      got += (size_t)k;
      if (got + 1 >= cap)
        break;
    } else if (waitpid(pid, &st, WNOHANG) == pid) {
      pid = 0;
      break;
    }
  }
  out[got] = '\0';
  if (pid != 0)
    ASSERT_EQ(pid, waitpid(pid, &st, 0));
  close(master);
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(0, WEXITSTATUS(st));
}

TEST_IMPL(cli_colours) {
  fleet_test_redis_t *redis;
  char *out = malloc(65536);
  char id[FLEET_JOB_ID_MAX + 1];
  const char *url;
  cli_run_t *r = calloc(1, sizeof(*r));
  qt_t t;

  ASSERT_NOT_NULL(out);
  ASSERT_NOT_NULL(r);
  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  qt_open(&t, url, "mail", NULL);
  qt_add(&t, "send", "x", id);

  /* A terminal: the header bold, a count of pending jobs coloured. */
  ops_pty_run(ARGS("--url", url, "--prefix", "qt", "queue", "ls"), NULL, out,
              65536);
  ASSERT_NOT_NULL(strstr(out, "\033[1mQUEUE"));
  ASSERT_NOT_NULL(strstr(out, "\033[36m1"));
  ops_pty_run(ARGS("--url", url, "--prefix", "qt", "queue", "get", "mail", id),
              NULL, out, 65536);
  ASSERT_NOT_NULL(strstr(out, "\033[36mpending\033[0m"));
  /* NO_COLOR, --json, or not a terminal: no escape at all. */
  ops_pty_run(ARGS("--url", url, "--prefix", "qt", "queue", "ls"), "1", out,
              65536);
  ASSERT_NOT_NULL(strstr(out, "QUEUE"));
  ASSERT_NULL(strchr(out, '\033'));
  ops_pty_run(ARGS("--url", url, "--prefix", "qt", "--json", "queue", "ls"),
              NULL, out, 65536);
  ASSERT_NULL(strchr(out, '\033'));
  cli_run_ok(r, url, "qt", ARGS("queue", "ls"));
  ASSERT_NULL(strchr(r->out, '\033'));
  cli_run_ok(r, url, "qt", ARGS("queue", "get", "mail", id));
  ASSERT_NULL(strchr(r->out, '\033'));

  qt_close(&t);
  fleet_test_redis_free(redis);
  free(r);
  free(out);
  return 0;
}
