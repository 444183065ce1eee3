/* test_harness.c -- tests of the test harness itself: assertion messages,
 * the loop-close check, skipping and the conformance backends. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

/* ------------------------------------------------------------------------ */
/* Running a failing snippet in a child                                     */

#define HARNESS_OUTPUT_MAX 8192

/* Runs `fn` in a forked child with its stdout and stderr on a pipe. Stores
 * what it wrote (NUL-terminated, truncated to `size`) into `out` and returns
 * its wait status. */
static int harness_run_child(void (*fn)(void), char *out, size_t size) {
  struct rlimit no_core;
  size_t len;
  ssize_t n;
  int fds[2];
  int status;
  pid_t pid;

  ASSERT_EQ(pipe(fds), 0);
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    /* The abort() is expected: no core file for it. */
    no_core.rlim_cur = 0;
    no_core.rlim_max = 0;
    setrlimit(RLIMIT_CORE, &no_core);
    close(fds[0]);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[1]);
    fn();
    _exit(0);
  }
  close(fds[1]);
  len = 0;
  for (;;) {
    n = read(fds[0], out + len, size - 1 - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    len += (size_t)n;
    if (len == size - 1)
      break;
  }
  out[len] = '\0';
  close(fds[0]);
  while (waitpid(pid, &status, 0) == -1)
    ASSERT_EQ(errno, EINTR);
  return status;
}

/* Runs `fn`, which must abort, and checks that its output names this file
 * and contains `want`. */
static void harness_expect_abort(void (*fn)(void), const char *want) {
  char out[HARNESS_OUTPUT_MAX];
  int status;

  status = harness_run_child(fn, out, sizeof(out));
  fprintf(stderr, "child wrote: %s", out);
  ASSERT(WIFSIGNALED(status));
  ASSERT_EQ(WTERMSIG(status), SIGABRT);
  ASSERT_NOT_NULL(strstr(out, __FILE__ ":"));
  ASSERT_NOT_NULL(strstr(out, want));
}

/* ------------------------------------------------------------------------ */
/* Loop check                                                               */

static void harness_timer_close_cb(uv_timer_t *timer) {
  (*(int *)timer->data)++;
  uv_close((uv_handle_t *)timer, NULL);
}

TEST_IMPL(harness_loop_close_ok) {
  uv_loop_t loop;
  uv_timer_t timer;
  int fired;

  fired = 0;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  ASSERT_EQ(uv_timer_init(&loop, &timer), 0);
  timer.data = &fired;
  ASSERT_EQ(uv_timer_start(&timer, harness_timer_close_cb, 1, 0), 0);
  fleet_test_loop_close(&loop);
  ASSERT_EQ(fired, 1);
  return 0;
}

/* Leaves an inactive timer open, which the check must catch. */
static void harness_leave_timer(void) {
  uv_loop_t loop;
  uv_timer_t timer;

  ASSERT_EQ(uv_loop_init(&loop), 0);
  ASSERT_EQ(uv_timer_init(&loop, &timer), 0);
  fleet_test_loop_close(&loop);
}

TEST_IMPL(harness_loop_close_leftover) {
  harness_expect_abort(harness_leave_timer, "timer");
  harness_expect_abort(harness_leave_timer, "uv_loop_close() failed");
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Assertion messages                                                       */

static void harness_fail_assert(void) {
  int zero = 0;
  ASSERT(zero > 1);
}

static void harness_fail_eq(void) {
  ASSERT_EQ(1 + 1, 3);
}

static void harness_fail_lt(void) {
  ASSERT_LT(-5, -7);
}

static void harness_fail_uge(void) {
  ASSERT_UGE(3, UINT64_MAX);
}

static void harness_fail_str(void) {
  ASSERT_STR_EQ("abc", "abd");
}

static void harness_fail_str_null(void) {
  const char *none = NULL;
  ASSERT_STR_EQ(none, "x");
}

static void harness_fail_mem(void) {
  ASSERT_MEM_EQ("ab\x01z", "ab\x02z", 4);
}

static void harness_fail_null(void) {
  static int x;
  ASSERT_NULL(&x);
}

static void harness_fail_err(void) {
  ASSERT_ERR(FLEET_EBADURL, FLEET_EINVAL);
}

static void harness_fail_ok(void) {
  ASSERT_OK(FLEET_ETIMEDOUT);
}

TEST_IMPL(harness_assert_messages) {
  int n;

  harness_expect_abort(harness_fail_assert, "assertion failed: zero > 1");
  harness_expect_abort(harness_fail_eq, "1 + 1 == 3 (2 == 3)");
  harness_expect_abort(harness_fail_lt, "-5 < -7 (-5 < -7)");
  harness_expect_abort(harness_fail_uge, "(3 >= 18446744073709551615)");
  harness_expect_abort(harness_fail_str, "(\"abc\" != \"abd\")");
  harness_expect_abort(harness_fail_str_null, "(\"(null)\" != \"x\")");
  harness_expect_abort(harness_fail_mem, "differ from offset 2");
  harness_expect_abort(harness_fail_mem, " 01 7a");
  harness_expect_abort(harness_fail_null, "assertion failed: &x == NULL");
  harness_expect_abort(harness_fail_err,
                       "FLEET_EINVAL (-1), expected FLEET_EBADURL (-20)");
  harness_expect_abort(harness_fail_ok,
                       "gave FLEET_ETIMEDOUT (-4), expected 0 (0)");

  /* Passing assertions evaluate each operand once and return. */
  n = 0;
  ASSERT_EQ(++n, 1);
  ASSERT_EQ(n, 1);
  ASSERT_UEQ(UINT64_MAX, UINT64_MAX);
  ASSERT_STR_EQ(NULL, NULL);
  ASSERT_STR_NE("a", NULL);
  ASSERT_MEM_EQ("same", "same", 4);
  ASSERT_OK(0);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Skipping                                                                 */

static void harness_skip_child(void) {
  fleet_test_skip("no %s here", "redis");
}

TEST_IMPL(harness_skip) {
  char out[HARNESS_OUTPUT_MAX];
  int status;

  status = harness_run_child(harness_skip_child, out, sizeof(out));
  ASSERT(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), FLEET_TEST_SKIP);
  ASSERT_STR_EQ(out, FLEET_TEST_SKIP_MARKER "no redis here\n");
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Conformance backends                                                     */

CONFORMANCE_IMPL(harness_backend) {
  char want[64];
  redisReply *reply;

  if (strcmp(b->kind, "memory") == 0) {
    ASSERT_STR_EQ(b->url, "memory://");
    ASSERT_NULL(b->redis);
    return;
  }
  ASSERT_STR_EQ(b->kind, "redis");
  ASSERT_NOT_NULL(b->redis);
  snprintf(want, sizeof(want), "redis://127.0.0.1:%d",
           fleet_test_redis_port(b->redis));
  ASSERT_STR_EQ(b->url, want);
  ASSERT_STR_EQ(b->url, fleet_test_redis_url(b->redis));
  reply = fleet_test_redis_cmd(b->redis, "PING");
  ASSERT_NOT_NULL(reply);
  ASSERT_STR_EQ(reply->str, "PONG");
  freeReplyObject(reply);
}
