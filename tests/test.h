/* test.h -- assertions, TEST_IMPL/CONFORMANCE_IMPL and the loop-close check
 * that every fleet test is built from. */
#ifndef FLEET_TEST_H
#define FLEET_TEST_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "fleet.h"
#include "redis_fixture.h"

/* The exit code of a skipped test (the automake convention). */
#define FLEET_TEST_SKIP 77

/* The line a skipped test writes to stderr before it exits; the runner shows
 * the rest of the line as the reason. */
#define FLEET_TEST_SKIP_MARKER "fleet-test-skip: "

/* ------------------------------------------------------------------------ */
/* Defining tests                                                           */

/* Defines the test `name`: a function that returns 0 on success. A failed
 * assertion aborts the process, which the runner reports as a failure. The
 * test is listed in test-list.h with TEST_DECLARE and TEST_ENTRY. */
#define TEST_IMPL(name)                                                        \
  int run_test_##name(void);                                                   \
  int run_test_##name(void)

/* The backend a conformance test runs against. */
typedef struct {
  /* "memory" or "redis". */
  const char *kind;
  /* The URL to give fleet_client_init(): "memory://" or
   * "redis://127.0.0.1:PORT". */
  char url[256];
  /* The private redis-server of this test, or NULL on memory. Owned by the
   * harness: the body may stop, restart or pause it but must not free it. */
  fleet_test_redis_t *redis;
  /* The private cluster of a name_cluster variant, else NULL. */
  struct fleet_test_cluster_s *cluster;
} fleet_test_backend_t;

/* Defines a conformance test: one body, run once per adapter as the two
 * tests `name_memory` and `name_redis`. The redis variant starts a private
 * redis-server before the body (skipping when none is installed) and frees
 * it after. Listed with CONFORMANCE_DECLARE and CONFORMANCE_ENTRY. Use as:
 *
 *   CONFORMANCE_IMPL(lock_basic) {
 *     ... b->url ...
 *   }
 */
#define CONFORMANCE_IMPL(name)                                                 \
  static void conformance_##name(fleet_test_backend_t *b);                     \
  TEST_IMPL(name##_memory) {                                                   \
    return fleet_test_conformance_run("memory", conformance_##name);           \
  }                                                                            \
  TEST_IMPL(name##_redis) {                                                    \
    return fleet_test_conformance_run("redis", conformance_##name);            \
  }                                                                            \
  TEST_IMPL(name##_cluster) {                                                  \
    return fleet_test_conformance_run("cluster", conformance_##name);          \
  }                                                                            \
  TEST_IMPL(name##_acl) {                                                      \
    return fleet_test_conformance_run("acl", conformance_##name);              \
  }                                                                            \
  TEST_IMPL(name##_acl_cluster) {                                              \
    return fleet_test_conformance_run("acl_cluster", conformance_##name);      \
  }                                                                            \
  static void conformance_##name(fleet_test_backend_t *b)

/* A third variant, name_cluster, runs the body on a private 3-master /
 * 3-replica Redis Cluster (tests/cluster_fixture.h; b->redis is NULL,
 * b->cluster set); it is listed only for the conformance tests that
 * test-list.h names with CLUSTER_ENTRY. */

/* A fourth variant, name_acl, runs the body of the redis variant as the
 * least-privilege ACL user of docs/deploy.md (fleet_test_redis_acl_user(),
 * with the prefixes fleet_test_acl_prefixes; b->kind is "redis", b->redis
 * the server, which the body's own commands reach as the default user);
 * it is listed only for the tests that tests/test-list-acl.h names. The
 * fifth, name_acl_cluster, runs the cluster body so, with the user made on
 * every node with the cluster's additions (FLEET_TEST_ACL_COMMANDS_CLUSTER).
 */

/* Runs `body` against the backend `kind` ("memory", "redis", "cluster",
 * "acl" or "acl_cluster"),
 * setting up
 * and tearing down the backend around it. Returns 0; failures abort. */
int fleet_test_conformance_run(const char *kind,
                               void (*body)(fleet_test_backend_t *b));

/* Ends the test as skipped: writes FLEET_TEST_SKIP_MARKER and the formatted
 * reason to stderr and exits with FLEET_TEST_SKIP. Redis servers that the
 * test started are killed on the way out. */
_Noreturn void fleet_test_skip(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------------------ */
/* Assertions                                                               */

/* Every assertion prints what failed with file:line to stderr and calls
 * abort(). Each operand is evaluated exactly once. */

#define ASSERT(expr)                                                           \
  do {                                                                         \
    if (!(expr))                                                               \
      fleet_test__fail(__FILE__, __LINE__, "assertion failed: %s", #expr);     \
  } while (0)

/* Integer comparisons. The signed forms compare as intmax_t, the ASSERT_U*
 * forms as uintmax_t (use them for values above INT64_MAX). */
#define ASSERT_EQ(a, b) FLEET_TEST__CMP(intmax_t, PRIdMAX, a, ==, b, #a, #b)
#define ASSERT_NE(a, b) FLEET_TEST__CMP(intmax_t, PRIdMAX, a, !=, b, #a, #b)
#define ASSERT_LT(a, b) FLEET_TEST__CMP(intmax_t, PRIdMAX, a, <, b, #a, #b)
#define ASSERT_LE(a, b) FLEET_TEST__CMP(intmax_t, PRIdMAX, a, <=, b, #a, #b)
#define ASSERT_GT(a, b) FLEET_TEST__CMP(intmax_t, PRIdMAX, a, >, b, #a, #b)
#define ASSERT_GE(a, b) FLEET_TEST__CMP(intmax_t, PRIdMAX, a, >=, b, #a, #b)

#define ASSERT_UEQ(a, b) FLEET_TEST__CMP(uintmax_t, PRIuMAX, a, ==, b, #a, #b)
#define ASSERT_UNE(a, b) FLEET_TEST__CMP(uintmax_t, PRIuMAX, a, !=, b, #a, #b)
#define ASSERT_ULT(a, b) FLEET_TEST__CMP(uintmax_t, PRIuMAX, a, <, b, #a, #b)
#define ASSERT_ULE(a, b) FLEET_TEST__CMP(uintmax_t, PRIuMAX, a, <=, b, #a, #b)
#define ASSERT_UGT(a, b) FLEET_TEST__CMP(uintmax_t, PRIuMAX, a, >, b, #a, #b)
#define ASSERT_UGE(a, b) FLEET_TEST__CMP(uintmax_t, PRIuMAX, a, >=, b, #a, #b)

/* Pointer comparisons. */
#define ASSERT_PTR_EQ(a, b) FLEET_TEST__CMP(const void *, "p", a, ==, b, #a, #b)
#define ASSERT_PTR_NE(a, b) FLEET_TEST__CMP(const void *, "p", a, !=, b, #a, #b)
#define ASSERT_NULL(a)                                                         \
  FLEET_TEST__CMP(const void *, "p", a, ==, NULL, #a, "NULL")
#define ASSERT_NOT_NULL(a)                                                     \
  FLEET_TEST__CMP(const void *, "p", a, !=, NULL, #a, "NULL")

/* The comparisons above: `a_str` and `b_str` are the operands as written. */
#define FLEET_TEST__CMP(type, fmt, a, op, b, a_str, b_str)                     \
  do {                                                                         \
    type fleet_test_a_ = (type)(a);                                            \
    type fleet_test_b_ = (type)(b);                                            \
    if (!(fleet_test_a_ op fleet_test_b_))                                     \
      fleet_test__fail(__FILE__, __LINE__,                                     \
                       "assertion failed: %s %s %s (%" fmt " %s %" fmt ")",    \
                       a_str, #op, b_str, fleet_test_a_, #op, fleet_test_b_);  \
  } while (0)

/* NUL-terminated strings; NULL equals only NULL. */
#define ASSERT_STR_EQ(a, b)                                                    \
  fleet_test__str_cmp(__FILE__, __LINE__, #a, #b, (a), (b), 1)
#define ASSERT_STR_NE(a, b)                                                    \
  fleet_test__str_cmp(__FILE__, __LINE__, #a, #b, (a), (b), 0)

/* `len` bytes at `a` and `b`; a failure shows the first difference. */
#define ASSERT_MEM_EQ(a, b, len)                                               \
  fleet_test__mem_eq(__FILE__, __LINE__, #a, #b, (a), (b), (len))

/* fleet error codes, shown with their names: ASSERT_ERR(FLEET_EBADURL, rc).
 * ASSERT_OK(expr) expects 0. */
#define ASSERT_ERR(expected, expr)                                             \
  fleet_test__err_eq(__FILE__, __LINE__, #expr, (expected), (expr))
#define ASSERT_OK(expr) ASSERT_ERR(0, expr)

/* ------------------------------------------------------------------------ */
/* Loop check                                                               */

/* Runs `loop` until nothing is active, then asserts that uv_loop_close()
 * succeeds. On failure it prints every handle still on the loop
 * (uv_print_all_handles) and aborts. Every test that uses a loop ends with
 * it: a leftover handle is a failure. */
#define fleet_test_loop_close(loop)                                            \
  fleet_test__loop_close((loop), __FILE__, __LINE__)

/* ------------------------------------------------------------------------ */
/* Time                                                                     */

/* The environment variable that scales every timing window of the tests: a
 * positive number, 1 when unset. The runner reads it once, raises the
 * default when it runs more jobs than there are cores, and passes the value
 * it settled on to each test in the same variable. */
#define FLEET_TEST_SLACK_ENV "FLEET_TEST_SLACK"

/* Parses a slack value: a finite number in (0, 1000]. Returns it, or 0 when
 * `s` is not one. */
double fleet_test_parse_slack(const char *s);

/* The slack of this test process: FLEET_TEST_SLACK, read on the first call
 * (an invalid value fails the test). */
double fleet_test_slack(void);

/* Scales the window `ms` by the slack, rounding up. Use it for every bound
 * that time might overrun on a loaded machine: a wait that something
 * happens within `ms`, a deadline, a TTL that must outlive the work done
 * under it. Never use it to weaken a lower bound ("not before `ms`"): those
 * stay as they are. */
uint64_t fleet_test_ms(uint64_t ms);

/* Runs `loop` one iteration at a time until `done(arg)` returns nonzero or
 * `timeout_ms` pass (as given: scale it with fleet_test_ms() when it bounds
 * something that must happen). Returns 1 when `done` held, 0 on timeout. A
 * NULL `done` never holds: the call runs the loop for `timeout_ms`. The
 * timer it uses is closed before it returns. Every wait on a loop in the
 * tests goes through it. */
int fleet_test_run_until(uv_loop_t *loop, int (*done)(void *arg), void *arg,
                         uint64_t timeout_ms);

/* Runs `loop` for `ms` (not scaled), running whatever is due meanwhile. */
void fleet_test_sleep(uv_loop_t *loop, uint64_t ms);

/* A `done` for fleet_test_run_until(): `*(int *)arg` is nonzero. */
int fleet_test_flag_set(void *arg);

/* Runs `loop` until `*counter` reaches `want` or `timeout_ms` pass (as
 * given); returns whether it did. */
int fleet_test_wait_count(uv_loop_t *loop, const int *counter, int want,
                          uint64_t timeout_ms);

/* The window, before scaling, for something that should happen at once: a
 * reply, a callback, a close. Only a hang or a loaded machine takes it. */
#define FLEET_TEST_WAIT_MS 10000

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

/* Removes `path` and everything under it, without following symlinks.
 * Returns 0 or -errno; a missing path is not an error. */
int fleet_test_rmtree(const char *path);

/* The implementation of the macros above; call the macros instead. */
_Noreturn void fleet_test__fail(const char *file, int line, const char *fmt,
                                ...) __attribute__((format(printf, 3, 4)));
void fleet_test__str_cmp(const char *file, int line, const char *a_expr,
                         const char *b_expr, const char *a, const char *b,
                         int want_equal);
void fleet_test__mem_eq(const char *file, int line, const char *a_expr,
                        const char *b_expr, const void *a, const void *b,
                        size_t len);
void fleet_test__err_eq(const char *file, int line, const char *expr,
                        int expected, int actual);
void fleet_test__loop_close(uv_loop_t *loop, const char *file, int line);

#endif /* FLEET_TEST_H */
