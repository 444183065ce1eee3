/* test_cli_admin.c -- `fleet cron enable|disable|trigger|remove` and
 * `fleet store delete|events` (tools/fleet/cmd_cron_admin.c,
 * cmd_store_admin.c), run as a user runs them against a real redis-server
 * whose contents the test writes through the library: each verb's output
 * and its effect, read back through the library; an unknown key or record
 * is one line and exit 1; bad usage exit 2. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

static void on_done(fleet_handle_t *h, int status, void *ud) {
  qt_t *t = ud;

  (void)h;
  t->status = status;
  t->done = 1;
}

/* Defines `key` in the namespace of `s` (on `t`'s client), with the queue
 * `queue` as its target, or none. */
static void define(qt_t *t, fleet_cron_scheduler_t *s, const char *key,
                   const char *expr, const char *queue) {
  fleet_cron_def_t d;

  fleet_cron_def_init(&d);
  d.key = key;
  d.expr = expr;
  d.queue = queue;
  d.payload.base = "p";
  d.payload.len = 1;
  t->done = 0;
  ASSERT_OK(fleet_cron_define(s, &d, FLEET_CRON_UPSERT, NULL, 0, on_done, t));
  qt_wait(t);
  ASSERT_OK(t->status);
}

/* The integer after `"name":` in `json`. */
static int64_t json_int(const char *json, const char *name) {
  char key[64];
  const char *p;

  snprintf(key, sizeof(key), "\"%s\":", name);
  p = strstr(json, key);
  ASSERT_NOT_NULL(p);
  return strtoll(p + strlen(key), NULL, 10);
}

static void on_sched_closed(fleet_handle_t *h) {
  *(int *)h->data = 1;
}

TEST_IMPL(cli_cron_admin) {
  fleet_test_redis_t *redis;
  fleet_cron_scheduler_options_t o;
  fleet_cron_scheduler_t s;
  fleet_job_info_t info;
  cli_run_t r;
  const char *url;
  char id[128], want[256];
  int64_t fire_ms, token;
  int closed = 0;
  qt_t t;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  qt_open(&t, url, "work", NULL);
  fleet_cron_scheduler_options_init(&o);
  ASSERT_OK(fleet_cron_scheduler_init(&t.c.client, &s, "cron", "test", &o));
  s.data = &closed;
  define(&t, &s, "nightly", "0 0 1 1 *", "work");
  define(&t, &s, "tick", "0 0 1 1 *", NULL);

  /* Disable, then enable: the listing follows. */
  cli_run_ok(&r, url, "qt", ARGS("cron", "disable", "nightly"));
  ASSERT_STR_EQ("cron nightly in namespace cron: disabled\n", r.out);
  cli_run_ok(&r, url, "qt", ARGS("--json", "cron", "ls"));
  ASSERT_NOT_NULL(strstr(r.out, "\"key\":\"nightly\",\"expr\":\"0 0 1 1 *\","
                                "\"tz\":\"UTC\",\"enabled\":false"));
  cli_run_ok(&r, url, "qt", ARGS("cron", "enable", "nightly"));
  ASSERT_STR_EQ("cron nightly in namespace cron: enabled\n", r.out);
  cli_run_ok(&r, url, "qt", ARGS("--json", "cron", "ls"));
  ASSERT_NOT_NULL(strstr(r.out, "\"key\":\"nightly\",\"expr\":\"0 0 1 1 *\","
                                "\"tz\":\"UTC\",\"enabled\":true"));

  /* Trigger: the job is in the queue, the occurrence in the log. */
  cli_run_ok(&r, url, "qt", ARGS("--json", "cron", "trigger", "nightly"));
  fire_ms = json_int(r.out, "fire_ms");
  token = json_int(r.out, "token");
  ASSERT_NE(0, fire_ms % 1000);
  ASSERT_GT(token, 0);
  snprintf(id, sizeof(id), "nightly@%" PRId64, fire_ms);
  snprintf(want, sizeof(want), "\"job\":\"%s\"", id);
  ASSERT_NOT_NULL(strstr(r.out, want));
  ASSERT_OK(qt_get(&t, id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  cli_run_ok(&r, url, "qt", ARGS("--json", "cron", "history", "nightly"));
  snprintf(want, sizeof(want),
           "\"fire_ms\":%" PRId64 ",\"node\":\"fleet-cli\",\"token\":%" PRId64,
           fire_ms, token);
  ASSERT_NOT_NULL(strstr(r.out, want));
  ASSERT_NOT_NULL(strstr(r.out, "\"outcome\":\"dispatched\""));
  cli_run_ok(&r, url, "qt", ARGS("cron", "trigger", "nightly"));
  ASSERT_EQ(1, cli_lines(r.out));
  ASSERT_EQ(
      0, strncmp(r.out, "cron nightly in namespace cron: triggered at ", 45));
  ASSERT_NOT_NULL(strstr(r.out, "Z, token "));

  /* Refused: a callback definition, an unknown key (here and in another
   * namespace), no key. */
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "cron", "trigger", "tick"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "fleet: cron trigger: FLEET_EINVAL (only a "
                                "queue definition can be triggered"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "cron", "disable", "nope"));
  ASSERT_EQ(1, r.status);
  ASSERT_STR_EQ("fleet: cron disable: FLEET_ENOTFOUND (no cron definition "
                "\"nope\" in namespace \"cron\")\n",
                r.err);
  ASSERT_STR_EQ("", r.out);
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "cron", "trigger", "nightly",
                   "--ns", "other"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "in namespace \"other\""));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "cron", "enable"));
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, cli_lines(r.err));

  /* Remove: gone from the listing; a second remove is refused. */
  cli_run_ok(&r, url, "qt", ARGS("cron", "remove", "nightly"));
  ASSERT_STR_EQ("cron nightly in namespace cron: removed\n", r.out);
  cli_run_ok(&r, url, "qt", ARGS("--json", "cron", "ls"));
  ASSERT_NULL(strstr(r.out, "\"nightly\""));
  ASSERT_NOT_NULL(strstr(r.out, "\"tick\""));
  cli_run(&r,
          ARGS("--url", url, "--prefix", "qt", "cron", "remove", "nightly"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "FLEET_ENOTFOUND"));

  ASSERT_OK(fleet_cron_scheduler_close(&s, on_sched_closed));
  while (!closed)
    uv_run(&t.c.loop, UV_RUN_ONCE);
  qt_close(&t);
  fleet_test_redis_stop(redis);
  fleet_test_redis_free(redis);
  return 0;
}

/* The store's calls on `t`'s loop. */
static void on_count(fleet_store_t *st, int status, uint64_t n, void *ud) {
  qt_t *t = ud;

  (void)st;
  (void)n;
  t->status = status;
  t->done = 1;
}

static void on_got(fleet_store_t *st, int status, fleet_bytes_t value,
                   uint64_t ttl_ms, void *ud) {
  qt_t *t = ud;

  (void)st;
  (void)value;
  (void)ttl_ms;
  t->status = status;
  t->done = 1;
}

static void on_store_closed(fleet_handle_t *h) {
  *(int *)h->data = 1;
}

TEST_IMPL(cli_store_admin) {
  static const char *const evs[] = {"e0", "e1", "e2", "e3", "\x1b[31mred"};
  fleet_test_redis_t *redis;
  fleet_store_t store;
  fleet_bytes_t events[5], id = {"u1", 2}, val = {"v", 1};
  cli_run_t r;
  const char *url;
  int i, closed = 0;
  qt_t t;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  qt_open(&t, url, "unused", NULL);
  ASSERT_OK(fleet_store_init(&t.c.client, &store, NULL));
  store.data = &closed;
  for (i = 0; i < 5; i++)
    events[i] = (fleet_bytes_t){evs[i], strlen(evs[i])};
  t.done = 0;
  ASSERT_OK(fleet_store_put(&store, "users", id, val, NULL,
                            (fleet_status_cb)on_done, &t));
  qt_wait(&t);
  ASSERT_OK(t.status);
  t.done = 0;
  ASSERT_OK(
      fleet_store_events_append(&store, "users", id, events, 5, on_count, &t));
  qt_wait(&t);
  ASSERT_OK(t.status);

  /* The newest 3, oldest first, numbered from the start of the list, the
   * control bytes escaped; all of them in JSON. */
  cli_run_ok(&r, url, "qt",
             ARGS("store", "events", "users", "u1", "--count", "3"));
  ASSERT_STR_EQ("3 of 5 event(s) of record u1 in collection users, oldest "
                "first\n2: e2\n3: e3\n4: \\x1b[31mred\n",
                r.out);
  cli_run_ok(&r, url, "qt", ARGS("--json", "store", "events", "users", "u1"));
  ASSERT_NOT_NULL(strstr(r.out, "\"total\":5,\"offset\":0,\"events\":[\"e0\","
                                "\"e1\",\"e2\",\"e3\",\"\\u001b[31mred\"]"));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "store", "events", "users",
                   "u1", "--count", "0"));
  ASSERT_EQ(2, r.status);
  ASSERT_STR_EQ("fleet store events: --count: 1 to 1000 (got 0)\n", r.err);

  /* Delete: the record is gone (read back through the library), and a
   * second delete or a read of its events is one line, exit 1. */
  cli_run_ok(&r, url, "qt", ARGS("store", "delete", "users", "u1"));
  ASSERT_STR_EQ("deleted record u1 of collection users\n", r.out);
  t.done = 0;
  ASSERT_OK(fleet_store_get(&store, "users", id, on_got, &t));
  qt_wait(&t);
  ASSERT_ERR(FLEET_ENOTFOUND, t.status);
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "store", "delete", "users",
                   "u1"));
  ASSERT_EQ(1, r.status);
  ASSERT_STR_EQ("fleet: store delete: FLEET_ENOTFOUND (no record \"u1\" in "
                "collection \"users\")\n",
                r.err);
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "store", "events", "users",
                   "u1"));
  ASSERT_EQ(1, r.status);
  ASSERT_EQ(1, cli_lines(r.err));
  ASSERT_NOT_NULL(strstr(r.err, "no record \"u1\""));
  cli_run(&r, ARGS("--url", url, "--prefix", "qt", "store", "delete", "users"));
  ASSERT_EQ(2, r.status);
  ASSERT_EQ(1, cli_lines(r.err));

  ASSERT_OK(fleet_store_close(&store, on_store_closed));
  while (!closed)
    uv_run(&t.c.loop, UV_RUN_ONCE);
  qt_close(&t);
  fleet_test_redis_stop(redis);
  fleet_test_redis_free(redis);
  return 0;
}
