/* support.c -- what the test.h macros call: failure reports, the loop-close
 * check, skipping, the conformance harness, the slack factor and bounded
 * waits on a loop, and a recursive remove. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_fixture.h"
#include "test.h"
#include "test_tls_util.h"

/* The most bytes ASSERT_MEM_EQ shows of each side from the first
 * difference. */
#define SUPPORT_MEM_SHOW 16

void fleet_test__fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;

  fflush(stdout);
  fprintf(stderr, "%s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  abort();
}

void fleet_test__str_cmp(const char *file, int line, const char *a_expr,
                         const char *b_expr, const char *a, const char *b,
                         int want_equal) {
  int equal;

  if (a != NULL && b != NULL)
    equal = strcmp(a, b) == 0;
  else
    equal = a == b;
  if (equal == want_equal)
    return;
  fleet_test__fail(file, line, "assertion failed: %s %s %s (\"%s\" %s \"%s\")",
                   a_expr, want_equal ? "==" : "!=", b_expr,
                   a != NULL ? a : "(null)",
                   want_equal ? "!=" : "==", b != NULL ? b : "(null)");
}

/* Writes up to SUPPORT_MEM_SHOW bytes of `p` from `from`, in hex. */
static void support_hex(const unsigned char *p, size_t from, size_t len) {
  size_t i;

  for (i = from; i < len && i < from + SUPPORT_MEM_SHOW; i++)
    fprintf(stderr, " %02x", p[i]);
  if (i < len)
    fprintf(stderr, " ...");
  fputc('\n', stderr);
}

void fleet_test__mem_eq(const char *file, int line, const char *a_expr,
                        const char *b_expr, const void *a, const void *b,
                        size_t len) {
  const unsigned char *pa = a;
  const unsigned char *pb = b;
  size_t i;

  if (a == NULL || b == NULL)
    fleet_test__fail(file, line, "assertion failed: %s == %s (NULL pointer)",
                     a_expr, b_expr);
  for (i = 0; i < len && pa[i] == pb[i]; i++)
    ;
  if (i == len)
    return;
  fflush(stdout);
  fprintf(stderr,
          "%s:%d: assertion failed: %s == %s (%zu bytes differ from "
          "offset %zu)\n",
          file, line, a_expr, b_expr, len, i);
  fprintf(stderr, "  %s:", a_expr);
  support_hex(pa, i, len);
  fprintf(stderr, "  %s:", b_expr);
  support_hex(pb, i, len);
  fflush(stderr);
  abort();
}

/* fleet_err_name(), except that 0 reads as "0". */
static const char *support_err_name(int err) {
  return err == 0 ? "0" : fleet_err_name(err);
}

void fleet_test__err_eq(const char *file, int line, const char *expr,
                        int expected, int actual) {
  if (expected == actual)
    return;
  fleet_test__fail(file, line,
                   "assertion failed: %s gave %s (%d), expected "
                   "%s (%d)",
                   expr, support_err_name(actual), actual,
                   support_err_name(expected), expected);
}

void fleet_test__loop_close(uv_loop_t *loop, const char *file, int line) {
  int rc;

  uv_run(loop, UV_RUN_DEFAULT);
  rc = uv_loop_close(loop);
  if (rc == 0)
    return;
  fflush(stdout);
  fprintf(stderr, "%s:%d: uv_loop_close() failed with %s; handles left:\n",
          file, line, uv_err_name(rc));
  uv_print_all_handles(loop, stderr);
  fflush(stderr);
  abort();
}

void fleet_test_skip(const char *fmt, ...) {
  va_list ap;

  fflush(stdout);
  fputs(FLEET_TEST_SKIP_MARKER, stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  exit(FLEET_TEST_SKIP);
}

double fleet_test_parse_slack(const char *s) {
  char *end;
  double v;

  errno = 0;
  v = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v <= 0 ||
      v > 1000)
    return 0;
  return v;
}

double fleet_test_slack(void) {
  static double slack;
  const char *env;

  if (slack > 0)
    return slack;
  env = getenv(FLEET_TEST_SLACK_ENV);
  if (env == NULL || env[0] == '\0') {
    slack = 1;
    return slack;
  }
  slack = fleet_test_parse_slack(env);
  if (slack == 0)
    fleet_test__fail(__FILE__, __LINE__, "%s=%s is not a number in (0, 1000]",
                     FLEET_TEST_SLACK_ENV, env);
  return slack;
}

uint64_t fleet_test_ms(uint64_t ms) {
  double scaled = (double)ms * fleet_test_slack();
  uint64_t r = (uint64_t)scaled;

  return (double)r < scaled ? r + 1 : r;
}

static void support_on_timer(uv_timer_t *timer) {
  *(int *)timer->data = 1;
}

int fleet_test_run_until(uv_loop_t *loop, int (*done)(void *arg), void *arg,
                         uint64_t timeout_ms) {
  uv_timer_t timer;
  int expired = 0;
  int ok;

  ASSERT_OK(uv_timer_init(loop, &timer));
  timer.data = &expired;
  /* The loop's clock may be stale after a long callback: count from now. */
  uv_update_time(loop);
  ASSERT_OK(uv_timer_start(&timer, support_on_timer, timeout_ms, 0));
  for (;;) {
    ok = done != NULL && done(arg);
    if (ok || expired)
      break;
    uv_run(loop, UV_RUN_ONCE);
  }
  uv_close((uv_handle_t *)&timer, NULL);
  uv_run(loop, UV_RUN_NOWAIT);
  return ok;
}

void fleet_test_sleep(uv_loop_t *loop, uint64_t ms) {
  fleet_test_run_until(loop, NULL, NULL, ms);
}

int fleet_test_flag_set(void *arg) {
  return *(int *)arg != 0;
}

/* What fleet_test_wait_count() waits for. */
typedef struct {
  const int *counter;
  int want;
} support_count_t;

static int support_count_reached(void *arg) {
  support_count_t *c = arg;
  return *c->counter >= c->want;
}

int fleet_test_wait_count(uv_loop_t *loop, const int *counter, int want,
                          uint64_t timeout_ms) {
  support_count_t c;

  c.counter = counter;
  c.want = want;
  return fleet_test_run_until(loop, support_count_reached, &c, timeout_ms);
}

int fleet_test_conformance_run(const char *kind,
                               void (*body)(fleet_test_backend_t *b)) {
  fleet_test_backend_t b;

  memset(&b, 0, sizeof(b));
  b.kind = kind;
  if (strcmp(kind, "memory") == 0) {
    snprintf(b.url, sizeof(b.url), "memory://");
    body(&b);
    return 0;
  }
  if (strcmp(kind, "acl_cluster") == 0) {
    const char *seeds;
    char unused[128];
    int i;

    b.kind = "cluster";
    b.cluster = fleet_test_cluster_start_or_skip();
    for (i = 0; i < FLEET_TEST_CLUSTER_NODES; i++)
      fleet_test_redis_acl_user(fleet_test_cluster_node(b.cluster, i), "fleet",
                                fleet_test_acl_prefixes,
                                FLEET_TEST_ACL_COMMANDS_CLUSTER, unused,
                                sizeof(unused));
    seeds = strstr(fleet_test_cluster_url(b.cluster), "://");
    ASSERT_NOT_NULL(seeds);
    snprintf(b.url, sizeof(b.url), "redis+cluster://fleet:pw@%s", seeds + 3);
    body(&b);
    fleet_test_cluster_free(b.cluster);
    return 0;
  }
  if (strcmp(kind, "cluster") == 0) {
    b.cluster = fleet_test_cluster_start_or_skip();
    snprintf(b.url, sizeof(b.url), "%s", fleet_test_cluster_url(b.cluster));
    body(&b);
    fleet_test_cluster_free(b.cluster);
    return 0;
  }
  if (strcmp(kind, "acl") == 0) {
    b.kind = "redis";
    b.redis = fleet_test_redis_start_or_skip(NULL);
    fleet_test_redis_acl_user(b.redis, "fleet", fleet_test_acl_prefixes, NULL,
                              b.url, sizeof(b.url));
    body(&b);
    fleet_test_redis_free(b.redis);
    return 0;
  }
  ASSERT_STR_EQ(kind, "redis");
  if (fleet_test_tls_wanted()) {
    /* The same bodies over TLS (tests/test_tls_util.c). */
    char dir[PATH_MAX];
    signal(SIGPIPE, SIG_IGN);
    b.redis =
        fleet_test_tls_redis_start(dir, sizeof(dir), b.url, sizeof(b.url));
    body(&b);
    fleet_test_redis_free(b.redis);
    fleet_test_rmtree(dir);
    return 0;
  }
  b.redis = fleet_test_redis_start_or_skip(NULL);
  snprintf(b.url, sizeof(b.url), "%s", fleet_test_redis_url(b.redis));
  body(&b);
  fleet_test_redis_free(b.redis);
  return 0;
}

/* nftw() callback of fleet_test_rmtree(): children come before their
 * directory (FTW_DEPTH), so each entry is empty when it is removed. */
static int support_rmtree_entry(const char *path, const struct stat *st,
                                int type, struct FTW *ftw) {
  if (remove(path) != 0 && errno != ENOENT)
    return -errno;
  return 0;
}

int fleet_test_rmtree(const char *path) {
  int rc;

  rc = nftw(path, support_rmtree_entry, 16, FTW_DEPTH | FTW_PHYS);
  if (rc == -1)
    return errno == ENOENT ? 0 : -errno;
  return rc;
}
