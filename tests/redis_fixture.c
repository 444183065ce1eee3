/* redis_fixture.c -- starts, controls and cleans up the private redis-server
 * of a test. */
#include "redis_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

/* Fresh ports to try when a server exits at startup (its port was taken). */
#define REDIS_FIXTURE_START_TRIES 5
/* How long a server may take to answer PING, and to exit on SIGTERM. */
#define REDIS_FIXTURE_READY_MS 5000
#define REDIS_FIXTURE_STOP_MS 5000
/* Timeouts of the synchronous connection. */
#define REDIS_FIXTURE_CONNECT_MS 1000
#define REDIS_FIXTURE_PROBE_MS 200
#define REDIS_FIXTURE_CMD_MS 5000
/* Pause between two readiness or exit checks. */
#define REDIS_FIXTURE_POLL_MS 10
/* The most bytes of redis.log shown when a server fails to start. */
#define REDIS_FIXTURE_LOG_TAIL 4096

struct fleet_test_redis_s {
  pid_t pid;   /* 0 while not running */
  pid_t owner; /* the process that started it: only it cleans up */
  int port;
  int paused;
  char url[64];
  char dir[PATH_MAX];
  char log[PATH_MAX + 16];
  char server[PATH_MAX];
  char **extra; /* a NULL-terminated copy of extra_args */
  size_t nextra;
  const char *password; /* points into `extra`, or NULL */
  redisContext *ctx;    /* the cached connection of fleet_test_redis_cmd() */
  fleet_test_redis_t *next;
};

/* Every fixture not yet freed, so that the exit handler can kill them when a
 * test exits early (a skip, or a return without free). */
static fleet_test_redis_t *redis_fixture_live;
static int redis_fixture_atexit_set;

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */

static uint64_t redis_fixture_now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void redis_fixture_sleep_ms(unsigned ms) {
  struct timespec ts;

  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (long)(ms % 1000) * 1000000;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

static struct timeval redis_fixture_tv(unsigned ms) {
  struct timeval tv;

  tv.tv_sec = ms / 1000;
  tv.tv_usec = (long)(ms % 1000) * 1000;
  return tv;
}

/* waitpid() that retries on EINTR. */
static pid_t redis_fixture_waitpid(pid_t pid, int *status, int options) {
  pid_t rc;

  do
    rc = waitpid(pid, status, options);
  while (rc == -1 && errno == EINTR);
  return rc;
}

static void redis_fixture_disconnect(fleet_test_redis_t *r) {
  if (r->ctx != NULL) {
    redisFree(r->ctx);
    r->ctx = NULL;
  }
}

/* Writes the end of the server's log to stderr, to explain a failed start. */
static void redis_fixture_dump_log(const fleet_test_redis_t *r) {
  char buf[REDIS_FIXTURE_LOG_TAIL];
  ssize_t n;
  off_t size;
  int fd;

  fd = open(r->log, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  size = lseek(fd, 0, SEEK_END);
  if (size > (off_t)sizeof(buf))
    lseek(fd, size - (off_t)sizeof(buf), SEEK_SET);
  else
    lseek(fd, 0, SEEK_SET);
  n = read(fd, buf, sizeof(buf));
  close(fd);
  if (n > 0)
    fprintf(stderr, "--- end of %s ---\n%.*s--- end ---\n", r->log, (int)n,
            buf);
}

/* ------------------------------------------------------------------------ */
/* Finding the binary and a port                                            */

/* Whether `path` is an executable regular file. */
static int redis_fixture_is_executable(const char *path) {
  struct stat st;

  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Puts the path of redis-server into `r->server`: $FLEET_REDIS_SERVER, which
 * must then be executable, or the first redis-server on $PATH. Returns 0,
 * -ENOENT for a bad $FLEET_REDIS_SERVER, or FLEET_TEST_REDIS_ENOTFOUND. */
static int redis_fixture_find_server(fleet_test_redis_t *r) {
  const char *env;
  const char *p;
  const char *end;
  size_t len;

  env = getenv("FLEET_REDIS_SERVER");
  if (env != NULL && env[0] != '\0') {
    if (!redis_fixture_is_executable(env) || strlen(env) >= sizeof(r->server)) {
      fprintf(stderr, "FLEET_REDIS_SERVER=%s is not executable\n", env);
      return -ENOENT;
    }
    strcpy(r->server, env);
    return 0;
  }
  env = getenv("PATH");
  for (p = env != NULL ? env : ""; *p != '\0'; p = *end ? end + 1 : end) {
    end = strchr(p, ':');
    if (end == NULL)
      end = p + strlen(p);
    len = (size_t)(end - p);
    /* An empty PATH entry means the current directory. */
    if (snprintf(r->server, sizeof(r->server), "%.*s%sredis-server", (int)len,
                 p, len > 0 ? "/" : "") >= (int)sizeof(r->server))
      continue;
    if (redis_fixture_is_executable(r->server))
      return 0;
  }
  r->server[0] = '\0';
  return FLEET_TEST_REDIS_ENOTFOUND;
}

int fleet_test_free_port(void) {
  struct sockaddr_in sin;
  socklen_t len;
  int fd;
  int err;

  fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -errno;
  memset(&sin, 0, sizeof(sin));
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sin.sin_port = 0;
  len = sizeof(sin);
  if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
      getsockname(fd, (struct sockaddr *)&sin, &len) != 0) {
    err = -errno;
    close(fd);
    return err;
  }
  close(fd);
  return ntohs(sin.sin_port);
}

/* ------------------------------------------------------------------------ */
/* Starting and stopping                                                    */

/* Forks and execs the server on `r->port`. The child gets its own process
 * group (so that signals meant for the test never reach it) and dies with
 * the test process (PR_SET_PDEATHSIG). Returns 0 or -errno. */
static int redis_fixture_spawn(fleet_test_redis_t *r) {
  const char *fixed[] = {"--bind",       "127.0.0.1", "--save",      "",
                         "--appendonly", "no",        "--daemonize", "no"};
  const size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);
  const char **argv;
  char port[16];
  size_t n;
  size_t i;
  sigset_t none;
  pid_t parent;
  pid_t pid;
  int fd;

  argv = calloc(nfixed + r->nextra + 8, sizeof(*argv));
  if (argv == NULL)
    return -ENOMEM;
  snprintf(port, sizeof(port), "%d", r->port);
  n = 0;
  argv[n++] = r->server;
  argv[n++] = "--port";
  argv[n++] = port;
  argv[n++] = "--dir";
  argv[n++] = r->dir;
  argv[n++] = "--logfile";
  argv[n++] = r->log;
  for (i = 0; i < nfixed; i++)
    argv[n++] = fixed[i];
  for (i = 0; i < r->nextra; i++)
    argv[n++] = r->extra[i];
  argv[n] = NULL;

  fflush(stdout);
  fflush(stderr);
  parent = getpid();
  pid = fork();
  if (pid < 0) {
    free(argv);
    return -errno;
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* The test may have died before prctl() took effect. */
    if (getppid() != parent)
      _exit(127);
    fd = open("/dev/null", O_RDONLY);
    if (fd >= 0 && fd != STDIN_FILENO) {
      dup2(fd, STDIN_FILENO);
      close(fd);
    }
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    /* hiredis sockets are not close-on-exec; the server must not hold
     * them. */
    if (close_range(3, ~0U, 0) != 0)
      for (fd = 3; fd < 1024; fd++)
        close(fd);
    execv(r->server, (char *const *)argv);
    fprintf(stderr, "exec %s: %s\n", r->server, strerror(errno));
    _exit(127);
  }
  free(argv);
  /* Also done by the child; doing it here too closes the race with a signal
   * sent to the group before the child ran. */
  setpgid(pid, pid);
  r->pid = pid;
  r->paused = 0;
  return 0;
}

/* Opens a synchronous connection, authenticated when the server has a
 * password, whose commands time out after `cmd_ms`. Returns NULL on any
 * failure. */
static redisContext *redis_fixture_connect(const fleet_test_redis_t *r,
                                           unsigned connect_ms,
                                           unsigned cmd_ms) {
  redisContext *c;
  redisReply *reply;
  int ok;

  c = redisConnectWithTimeout("127.0.0.1", r->port,
                              redis_fixture_tv(connect_ms));
  if (c == NULL)
    return NULL;
  if (c->err != 0 || redisSetTimeout(c, redis_fixture_tv(cmd_ms)) != REDIS_OK) {
    redisFree(c);
    return NULL;
  }
  if (r->password == NULL)
    return c;
  reply = redisCommand(c, "AUTH %s", r->password);
  ok = reply != NULL && reply->type == REDIS_REPLY_STATUS;
  if (reply != NULL)
    freeReplyObject(reply);
  if (!ok) {
    redisFree(c);
    return NULL;
  }
  return c;
}

/* Whether `c` is connected to the server with process id `pid` and that
 * server answers PING (not LOADING). Another test's server may have taken
 * the port between fleet_test_free_port() and our bind(), so the pid
 * check matters. */
static int redis_fixture_is_ours(redisContext *c, pid_t pid) {
  redisReply *reply;
  char want[48];
  int ok;

  reply = redisCommand(c, "INFO server");
  snprintf(want, sizeof(want), "\nprocess_id:%ld\r", (long)pid);
  ok = reply != NULL && reply->type == REDIS_REPLY_STRING &&
       strstr(reply->str, want) != NULL;
  if (reply != NULL)
    freeReplyObject(reply);
  if (!ok)
    return 0;
  reply = redisCommand(c, "PING");
  ok = reply != NULL && reply->type == REDIS_REPLY_STATUS &&
       strcmp(reply->str, "PONG") == 0;
  if (reply != NULL)
    freeReplyObject(reply);
  return ok;
}

/* Waits until the spawned server answers PING. Returns 0 with the cached
 * connection open, -ECHILD if the server exited (it is then reaped), or
 * -ETIMEDOUT (the server is left running). */
static int redis_fixture_wait_ready(fleet_test_redis_t *r) {
  uint64_t deadline;
  redisContext *c;
  int status;

  deadline = redis_fixture_now_ms() + REDIS_FIXTURE_READY_MS;
  for (;;) {
    if (redis_fixture_waitpid(r->pid, &status, WNOHANG) == r->pid) {
      r->pid = 0;
      return -ECHILD;
    }
    /* Short timeouts: whatever listens on the port may never answer. */
    c = redis_fixture_connect(r, REDIS_FIXTURE_PROBE_MS,
                              REDIS_FIXTURE_PROBE_MS);
    if (c != NULL) {
      if (redis_fixture_is_ours(c, r->pid) &&
          redisSetTimeout(c, redis_fixture_tv(REDIS_FIXTURE_CMD_MS)) ==
              REDIS_OK) {
        r->ctx = c;
        return 0;
      }
      redisFree(c);
    }
    if (redis_fixture_now_ms() >= deadline)
      return -ETIMEDOUT;
    redis_fixture_sleep_ms(REDIS_FIXTURE_POLL_MS);
  }
}

/* Spawns the server on `r->port` and waits until it is ready; on failure
 * nothing is left running. Returns 0 or -errno. */
static int redis_fixture_start_once(fleet_test_redis_t *r) {
  int rc;

  rc = redis_fixture_spawn(r);
  if (rc != 0)
    return rc;
  rc = redis_fixture_wait_ready(r);
  if (rc != 0)
    fleet_test_redis_kill(r);
  return rc;
}

static void redis_fixture_unlink_live(fleet_test_redis_t *r) {
  fleet_test_redis_t **p;

  for (p = &redis_fixture_live; *p != NULL; p = &(*p)->next) {
    if (*p == r) {
      *p = r->next;
      return;
    }
  }
}

/* At exit, kills the servers this process started and removes their
 * directories. A forked copy of the test process leaves them alone. */
static void redis_fixture_atexit(void) {
  fleet_test_redis_t *r;

  for (r = redis_fixture_live; r != NULL; r = r->next) {
    if (r->owner != getpid())
      continue;
    fleet_test_redis_kill(r);
    fleet_test_rmtree(r->dir);
  }
}

static void redis_fixture_release(fleet_test_redis_t *r) {
  size_t i;

  if (r->dir[0] != '\0' && r->owner == getpid())
    fleet_test_rmtree(r->dir);
  for (i = 0; i < r->nextra; i++)
    free(r->extra[i]);
  free(r->extra);
  free(r);
}

/* Copies `extra_args` into `r` and finds the --requirepass among them.
 * Returns 0 or -ENOMEM. */
static int redis_fixture_copy_args(fleet_test_redis_t *r,
                                   const char *const *extra_args) {
  size_t n;
  size_t i;

  for (n = 0; extra_args != NULL && extra_args[n] != NULL; n++)
    ;
  r->extra = calloc(n + 1, sizeof(*r->extra));
  if (r->extra == NULL)
    return -ENOMEM;
  for (i = 0; i < n; i++) {
    r->extra[i] = strdup(extra_args[i]);
    if (r->extra[i] == NULL)
      return -ENOMEM;
    r->nextra = i + 1;
  }
  /* The last --requirepass wins, as in redis-server; "" means none. */
  for (i = 0; i + 1 < n; i++) {
    if (strcmp(r->extra[i], "--requirepass") == 0)
      r->password = r->extra[i + 1][0] != '\0' ? r->extra[i + 1] : NULL;
  }
  return 0;
}

int fleet_test_redis_start(fleet_test_redis_t **out,
                           const char *const *extra_args) {
  return fleet_test_redis_start_below(out, extra_args, 65535);
}

int fleet_test_redis_start_below(fleet_test_redis_t **out,
                                 const char *const *extra_args, int max_port) {
  fleet_test_redis_t *r;
  const char *tmp;
  const char *require;
  int tries;
  int rc;

  *out = NULL;
  r = calloc(1, sizeof(*r));
  if (r == NULL)
    return -ENOMEM;
  r->owner = getpid();
  rc = redis_fixture_find_server(r);
  if (rc == FLEET_TEST_REDIS_ENOTFOUND) {
    require = getenv("FLEET_TEST_REQUIRE_REDIS");
    if (require != NULL && strcmp(require, "1") == 0) {
      fprintf(stderr, "redis-server is not on PATH and "
                      "FLEET_TEST_REQUIRE_REDIS=1\n");
      rc = -ENOENT;
    }
  }
  if (rc == 0)
    rc = redis_fixture_copy_args(r, extra_args);
  if (rc != 0) {
    redis_fixture_release(r);
    return rc;
  }

  tmp = getenv("TMPDIR");
  if (tmp == NULL || tmp[0] == '\0')
    tmp = "/tmp";
  snprintf(r->dir, sizeof(r->dir), "%s/fleet-redis-XXXXXX", tmp);
  if (mkdtemp(r->dir) == NULL) {
    rc = -errno;
    r->dir[0] = '\0';
    redis_fixture_release(r);
    return rc;
  }
  snprintf(r->log, sizeof(r->log), "%s/redis.log", r->dir);

  /* A server that exits at once most likely lost its port to another
   * process: try again on a fresh one. */
  rc = -ECHILD;
  for (tries = 0; tries < REDIS_FIXTURE_START_TRIES && rc == -ECHILD; tries++) {
    int picks = 0;
    do
      rc = fleet_test_free_port();
    while (rc > max_port && ++picks < 1000);
    if (rc < 0)
      break;
    r->port = rc;
    snprintf(r->url, sizeof(r->url), "redis://127.0.0.1:%d", r->port);
    rc = redis_fixture_start_once(r);
  }
  if (rc != 0) {
    fprintf(stderr, "redis-server (%s) did not start: %s\n", r->server,
            strerror(-rc));
    redis_fixture_dump_log(r);
    redis_fixture_release(r);
    return rc;
  }

  r->next = redis_fixture_live;
  redis_fixture_live = r;
  if (!redis_fixture_atexit_set) {
    atexit(redis_fixture_atexit);
    redis_fixture_atexit_set = 1;
  }
  *out = r;
  return 0;
}

fleet_test_redis_t *
fleet_test_redis_start_or_skip(const char *const *extra_args) {
  fleet_test_redis_t *r;
  int rc;

  rc = fleet_test_redis_start(&r, extra_args);
  if (rc == FLEET_TEST_REDIS_ENOTFOUND)
    fleet_test_skip("redis-server is not installed");
  if (rc != 0)
    fleet_test__fail(__FILE__, __LINE__, "fleet_test_redis_start: %s",
                     strerror(-rc));
  return r;
}

const char *fleet_test_redis_url(const fleet_test_redis_t *r) {
  return r->url;
}

int fleet_test_redis_port(const fleet_test_redis_t *r) {
  return r->port;
}

pid_t fleet_test_redis_pid(const fleet_test_redis_t *r) {
  return r->pid;
}

const char *fleet_test_redis_dir(const fleet_test_redis_t *r) {
  return r->dir;
}

int fleet_test_redis_stop(fleet_test_redis_t *r) {
  uint64_t deadline;
  int status;

  redis_fixture_disconnect(r);
  if (r->pid == 0)
    return 0;
  kill(r->pid, SIGTERM);
  /* A stopped process keeps SIGTERM pending until it is continued. */
  if (r->paused)
    kill(r->pid, SIGCONT);
  r->paused = 0;
  deadline = redis_fixture_now_ms() + REDIS_FIXTURE_STOP_MS;
  while (redis_fixture_now_ms() < deadline) {
    if (redis_fixture_waitpid(r->pid, &status, WNOHANG) == r->pid) {
      r->pid = 0;
      return 0;
    }
    redis_fixture_sleep_ms(REDIS_FIXTURE_POLL_MS);
  }
  fleet_test_redis_kill(r);
  return -ETIMEDOUT;
}

int fleet_test_redis_kill(fleet_test_redis_t *r) {
  int status;

  redis_fixture_disconnect(r);
  if (r->pid == 0)
    return 0;
  kill(r->pid, SIGKILL);
  redis_fixture_waitpid(r->pid, &status, 0);
  r->pid = 0;
  r->paused = 0;
  return 0;
}

int fleet_test_redis_restart(fleet_test_redis_t *r) {
  int rc;

  fleet_test_redis_stop(r);
  rc = redis_fixture_start_once(r);
  if (rc != 0) {
    fprintf(stderr, "redis-server did not restart on port %d: %s\n", r->port,
            strerror(-rc));
    redis_fixture_dump_log(r);
  }
  return rc;
}

int fleet_test_redis_pause(fleet_test_redis_t *r) {
  int status;

  if (r->pid == 0)
    return -ESRCH;
  if (r->paused)
    return 0;
  kill(r->pid, SIGSTOP);
  if (redis_fixture_waitpid(r->pid, &status, WUNTRACED) != r->pid ||
      !WIFSTOPPED(status)) {
    /* It died on its own; it is reaped now. */
    r->pid = 0;
    return -ESRCH;
  }
  r->paused = 1;
  return 0;
}

int fleet_test_redis_resume(fleet_test_redis_t *r) {
  int status;

  if (r->pid == 0)
    return -ESRCH;
  if (!r->paused)
    return 0;
  kill(r->pid, SIGCONT);
  if (redis_fixture_waitpid(r->pid, &status, WCONTINUED) != r->pid ||
      !WIFCONTINUED(status)) {
    r->pid = 0;
    return -ESRCH;
  }
  r->paused = 0;
  return 0;
}

redisReply *fleet_test_redis_cmd(fleet_test_redis_t *r, const char *fmt, ...) {
  redisReply *reply;
  va_list ap;

  if (r->ctx == NULL)
    r->ctx = redis_fixture_connect(r, REDIS_FIXTURE_CONNECT_MS,
                                   REDIS_FIXTURE_CMD_MS);
  if (r->ctx == NULL)
    return NULL;
  va_start(ap, fmt);
  reply = redisvCommand(r->ctx, fmt, ap);
  va_end(ap);
  /* The connection is unusable after an I/O error or a timeout. */
  if (reply == NULL)
    redis_fixture_disconnect(r);
  return reply;
}

void fleet_test_redis_ok(fleet_test_redis_t *r, const char *cmd) {
  redisReply *reply = fleet_test_redis_cmd(r, cmd);

  ASSERT_NOT_NULL(reply);
  ASSERT(reply->type != REDIS_REPLY_ERROR);
  freeReplyObject(reply);
}

uint64_t fleet_test_redis_calls(fleet_test_redis_t *r) {
  redisReply *reply = fleet_test_redis_cmd(r, "INFO commandstats");
  const char *p;
  uint64_t n = 0;

  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(REDIS_REPLY_STRING, reply->type);
  for (p = reply->str; (p = strstr(p, "cmdstat_")) != NULL; p++) {
    const char *c = strstr(p, "calls=");

    ASSERT_NOT_NULL(c);
    if (strncmp(p, "cmdstat_info:", 13) != 0 &&
        strncmp(p, "cmdstat_config", 14) != 0)
      n += strtoull(c + 6, NULL, 10);
  }
  freeReplyObject(reply);
  return n;
}

uint64_t fleet_test_redis_command_calls(fleet_test_redis_t *r,
                                        const char *command) {
  redisReply *reply = fleet_test_redis_cmd(r, "INFO commandstats");
  char key[64];
  const char *p;
  uint64_t n;

  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(REDIS_REPLY_STRING, reply->type);
  snprintf(key, sizeof(key), "cmdstat_%s:calls=", command);
  p = strstr(reply->str, key);
  n = p != NULL ? strtoull(p + strlen(key), NULL, 10) : 0;
  freeReplyObject(reply);
  return n;
}

const char *const fleet_test_acl_prefixes[] = {"fleet", "locktest", "qt", "t",
                                               "many",  "other",    NULL};

/* Appends the space-separated words of `text` (a copy in `buf`, cut in
 * place) to argv; returns the new count. */
static int redis_fixture_words(char *buf, const char **argv, int argc,
                               int max) {
  char *save = NULL, *w;

  for (w = strtok_r(buf, " ", &save); w != NULL;
       w = strtok_r(NULL, " ", &save)) {
    ASSERT_LT(argc, max);
    argv[argc++] = w;
  }
  return argc;
}

void fleet_test_redis_acl_user(fleet_test_redis_t *r, const char *user,
                               const char *const *prefixes, const char *extra,
                               char *url, size_t size) {
  enum { MAX_ARGS = 128 };
  const char *argv[MAX_ARGS];
  char commands[] = FLEET_TEST_ACL_COMMANDS;
  char patterns[1024], more[512];
  redisReply *reply;
  size_t used = 0, i;
  int argc = 0;

  patterns[0] = '\0';
  for (i = 0; prefixes[i] != NULL; i++) {
    int n =
        snprintf(patterns + used, sizeof(patterns) - used, "%s~{%s:* &{%s:*",
                 used > 0 ? " " : "", prefixes[i], prefixes[i]);
    ASSERT(n > 0 && (size_t)n < sizeof(patterns) - used);
    used += (size_t)n;
  }
  snprintf(more, sizeof(more), "%s", extra != NULL ? extra : "");
  argv[argc++] = "ACL";
  argv[argc++] = "SETUSER";
  argv[argc++] = user;
  argv[argc++] = "reset";
  argv[argc++] = "on";
  argv[argc++] = ">pw";
  argc = redis_fixture_words(patterns, argv, argc, MAX_ARGS);
  argc = redis_fixture_words(commands, argv, argc, MAX_ARGS);
  argc = redis_fixture_words(more, argv, argc, MAX_ARGS);
  reply = fleet_test_redis_cmd_argv(r, argc, argv, NULL);
  ASSERT_NOT_NULL(reply);
  if (reply->type == REDIS_REPLY_ERROR)
    fleet_test__fail(__FILE__, __LINE__, "ACL SETUSER %s: %s", user,
                     reply->str);
  freeReplyObject(reply);
  snprintf(url, size, "redis://%s:pw@127.0.0.1:%d", user, r->port);
}

redisReply *fleet_test_redis_cmd_argv(fleet_test_redis_t *r, int argc,
                                      const char **argv,
                                      const size_t *argvlen) {
  redisReply *reply;

  if (r->ctx == NULL)
    r->ctx = redis_fixture_connect(r, REDIS_FIXTURE_CONNECT_MS,
                                   REDIS_FIXTURE_CMD_MS);
  if (r->ctx == NULL)
    return NULL;
  reply = redisCommandArgv(r->ctx, argc, argv, argvlen);
  if (reply == NULL)
    redis_fixture_disconnect(r);
  return reply;
}

void fleet_test_redis_free(fleet_test_redis_t *r) {
  if (r == NULL)
    return;
  fleet_test_redis_kill(r);
  redis_fixture_unlink_live(r);
  redis_fixture_release(r);
}

void fleet_test_redis_cut_replicas(fleet_test_redis_t *r) {
  fleet_test_redis_ok(r, "ACL SETUSER repl off");
  fleet_test_redis_ok(r, "CLIENT KILL USER repl");
}
