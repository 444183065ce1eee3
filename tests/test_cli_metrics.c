/* test_cli_metrics.c -- `fleet metrics` (the Prometheus exporter: its
 * text, checked by promtool when Debian's prometheus package is
 * installed, its pending gauge against `fleet queue stats`, its HTTP
 * server), `fleet queue history` and the dashboard's /metrics and
 * /api/history routes, against a real redis-server with known contents. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

static void redis_ok(fleet_test_redis_t *redis, const char *cmd) {
  redisReply *r = fleet_test_redis_cmd(redis, cmd);

  ASSERT_NOT_NULL(r);
  ASSERT_NE(REDIS_REPLY_ERROR, r->type);
  freeReplyObject(r);
}

/* Known contents: queue "mail" with 4 pending jobs (one in group "acme"),
 * 2 jobs completed in one call and 1 failed (dead);
 * queue "idle", empty but for a completed job; a held lock, a pool with a
 * member, and the cron definitions of cli_fixture_crons(). */
static void metrics_fill(const char *url, fleet_test_redis_t *redis) {
  fleet_claim_t claims[3];
  fleet_job_spec_t s;
  qt_job_t jobs[3];
  int res[3], st, i;
  qt_t t;

  qt_open_prefix(&t, url, "qt", "mail", NULL);
  fleet_job_spec_init(&s, "send", "to-bob", 6);
  s.max_attempts = 1;
  for (i = 0; i < 3; i++)
    ASSERT_OK(qt_enqueue(&t, &s, 1, &st, NULL));
  ASSERT_EQ(3, qt_claim(&t, 3, 60000, jobs));
  for (i = 0; i < 3; i++)
    claims[i] = qt_claim_of(&jobs[i]);
  ASSERT_OK(qt_complete(&t, claims, 2, res));
  ASSERT_OK(qt_fail(&t, &claims[2], "smtp said no"));
  ASSERT_EQ(1, t.dead);
  for (i = 0; i < 3; i++)
    qt_add(&t, "send", "to-ann", NULL);
  fleet_job_spec_init(&s, "send", "to-cy", 5);
  s.group = "acme";
  ASSERT_OK(qt_enqueue(&t, &s, 1, &st, NULL));
  qt_close(&t);
  qt_open_prefix(&t, url, "qt", "idle", NULL);
  qt_add(&t, "send", "x", NULL);
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  claims[0] = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, claims, 1, res));
  qt_close(&t);
  redis_ok(redis, "SET {qt:nightly-import}:lock 9:host-a PX 600000");
  redis_ok(redis, "SET {qt:nightly-import}:fence 9");
  redis_ok(redis, "ZADD {qt:render}:workers 1 n1/1");
  redis_ok(redis, "HSET {qt:render}:wnode n1/1 n1");
  redis_ok(redis, "SET {qt:render}:rev 2");
  cli_fixture_crons(url, "qt", 2);
}

/* The value of the sample line that begins with `series` (its name and
 * labels) in `text`; fails when there is none. */
static long long metric_value(const char *text, const char *series) {
  size_t n = strlen(series);
  const char *p = text;

  while ((p = strstr(p, series)) != NULL) {
    if ((p == text || p[-1] == '\n') && p[n] == ' ')
      return atoll(p + n + 1);
    p += n;
  }
  fleet_test__fail(__FILE__, __LINE__, "no sample %s", series);
  return -1;
}

/* The number after "\"key\":" in `json`. */
static long long json_num(const char *json, const char *key) {
  char pat[64];
  const char *p;

  snprintf(pat, sizeof(pat), "\"%s\":", key);
  p = strstr(json, pat);
  ASSERT_NOT_NULL(p);
  return atoll(p + strlen(pat));
}

/* Runs promtool check metrics on `text` (skipped when promtool is not
 * installed: Debian's prometheus package has it). */
static void promtool_check(const char *text) {
  char path[] = "/tmp/fleet-metrics-XXXXXX", cmd[256];
  FILE *f;
  int fd, rc;

  if (system("command -v promtool >/dev/null 2>&1") != 0) {
    fprintf(stderr, "# promtool not found (apt-get install prometheus): "
                    "the exposition is not checked by it\n");
    return;
  }
  fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  f = fdopen(fd, "w");
  ASSERT_NOT_NULL(f);
  ASSERT_EQ(strlen(text), fwrite(text, 1, strlen(text), f));
  ASSERT_OK(fclose(f));
  snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 1>&2", path);
  rc = system(cmd);
  unlink(path);
  ASSERT_EQ(0, rc);
}

TEST_IMPL(cli_metrics) {
  static char resp[262144];
  fleet_test_redis_t *redis;
  const char *url, *body;
  char series[256];
  cli_run_t r, stats;
  pid_t pid;
  int port;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  metrics_fill(url, redis);

  /* --once: the text, valid for promtool, whose pending gauge is what
   * `queue stats` says. */
  cli_run_ok(&r, url, "qt", ARGS("metrics", "--once"));
  promtool_check(r.out);
  cli_run_ok(&stats, url, "qt", ARGS("--json", "queue", "stats", "mail"));
  ASSERT_EQ(json_num(stats.out, "pending"),
            metric_value(r.out, "fleet_queue_jobs{name=\"mail\","
                                "state=\"pending\"}"));
  ASSERT_EQ(4, metric_value(r.out, "fleet_queue_jobs{name=\"mail\","
                                   "state=\"pending\"}"));
  ASSERT_EQ(json_num(stats.out, "dead_kept"),
            metric_value(r.out, "fleet_queue_jobs{name=\"mail\","
                                "state=\"dead\"}"));
  ASSERT_EQ(1, metric_value(r.out, "fleet_queue_dead_total{name=\"mail\"}"));
  ASSERT_EQ(2,
            metric_value(r.out, "fleet_queue_completed_total{name=\"mail\"}"));
  ASSERT_EQ(0, metric_value(r.out, "fleet_queue_jobs{name=\"idle\","
                                   "state=\"pending\"}"));
  ASSERT_EQ(0, metric_value(r.out, "fleet_queue_oldest_pending_age_seconds{"
                                   "name=\"idle\"}"));
  ASSERT_EQ(0, metric_value(r.out, "fleet_queue_paused{name=\"mail\"}"));
  ASSERT_EQ(1, metric_value(r.out, "fleet_queue_groups{name=\"mail\"}"));
  ASSERT_EQ(1, metric_value(r.out, "fleet_queue_group_jobs{name=\"mail\","
                                   "group=\"acme\",state=\"pending\"}"));
  ASSERT_EQ(1, metric_value(r.out, "fleet_lock_held{name=\"nightly-import\"}"));
  ASSERT_EQ(1, metric_value(r.out, "fleet_pool_members{name=\"render\"}"));
  ASSERT_EQ(1, metric_value(r.out, "fleet_up"));
  snprintf(series, sizeof(series), "fleet_build_info{version=\"%s\"}",
           fleet_version_string());
  ASSERT_EQ(1, metric_value(r.out, series));
  ASSERT_EQ(0, metric_value(r.out, "fleet_cron_enabled{cron_namespace="
                                   "\"cron\",name=\"nightly\"}"));
  ASSERT_EQ(1, metric_value(r.out, "fleet_cron_enabled{cron_namespace="
                                   "\"cron\",name=\"tick\"}"));
  ASSERT_NOT_NULL(strstr(r.out, "fleet_cron_lag_seconds{cron_namespace="
                                "\"cron\",name=\"tick\"} "));

  /* The scrape recorded this minute's depth (pending + delayed + running)
   * for `queue history`, and the completions are counted. */
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "queue", "history", "mail", "--minutes", "2"));
  ASSERT_NOT_NULL(strstr(r.out, "{\"queue\":\"mail\",\"res\":\"minute\","
                                "\"points\":[{\"t\":\""));
  ASSERT_NOT_NULL(strstr(r.out, "\"depth\":4,"));
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "queue", "history", "mail", "--days", "1"));
  ASSERT_NOT_NULL(strstr(r.out, "T00:00:00Z\",\"processed\":3,\"failed\":1,"
                                "\"depth\":null,\"wait_ms\":null}]}"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "history", "mail", "--days", "3"));
  ASSERT_EQ(0, strncmp(r.out, "T ", 2));
  ASSERT_EQ(4, cli_lines(r.out));
  cli_run(&r, ARGS("--url", url, "queue", "history", "mail", "--minutes", "0"));
  ASSERT_EQ(2, r.status);
  cli_run(&r, ARGS("--url", url, "queue", "history", "mail", "--days", "1",
                   "--minutes", "1"));
  ASSERT_EQ(2, r.status);

  /* The server: /metrics only, the dashboard's host checks. */
  port = cli_spawn_server(ARGS("--url", url, "--prefix", "qt", "metrics",
                               "--listen", "127.0.0.1:0"),
                          "metrics", "fleet metrics:", &pid);
  ASSERT_EQ(200, cli_http(port, "GET", "/metrics", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(
      strstr(resp, "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
  body = strstr(resp, "\r\n\r\n");
  ASSERT_NOT_NULL(body);
  ASSERT_EQ(4, metric_value(body + 4, "fleet_queue_jobs{name=\"mail\","
                                      "state=\"pending\"}"));
  ASSERT_EQ(404,
            cli_http(port, "GET", "/api/queues", NULL, resp, sizeof(resp)));
  ASSERT_EQ(404, cli_http(port, "GET", "/", NULL, resp, sizeof(resp)));
  ASSERT_EQ(400, cli_http(port, "GET", "/metrics", "Host: evil.example\r\n",
                          resp, sizeof(resp)));
  cli_stop_server(pid, "metrics");

  /* Bad usage. */
  cli_run(&r, ARGS("--url", url, "metrics", "--listen", "nohost"));
  ASSERT_EQ(2, r.status);
  cli_run(&r, ARGS("--url", url, "metrics", "extra"));
  ASSERT_EQ(2, r.status);

  /* An unreachable backend: fleet_up 0 and no queue series. */
  cli_run(&r, ARGS("--url", "redis://127.0.0.1:1", "--timeout-ms", "500",
                   "metrics", "--once"));
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(0, metric_value(r.out, "fleet_up"));
  ASSERT_NULL(strstr(r.out, "fleet_queue_jobs{"));
  promtool_check(r.out);
  fleet_test_redis_stop(redis);
  return 0;
}

TEST_IMPL(dash_history_metrics) {
  static char resp[262144];
  fleet_test_redis_t *redis;
  const char *url, *p;
  pid_t pid;
  int port, n;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  metrics_fill(url, redis);
  port = cli_spawn_server(
      ARGS("--url", url, "--prefix", "qt", "dash", "--listen", "127.0.0.1:0"),
      "dash-hist", "fleet dash:", &pid);

  ASSERT_EQ(200, cli_http(port, "GET", "/metrics", NULL, resp, sizeof(resp)));
  ASSERT_EQ(4, metric_value(strstr(resp, "\r\n\r\n") + 4,
                            "fleet_queue_jobs{name=\"mail\","
                            "state=\"pending\"}"));
  promtool_check(strstr(resp, "\r\n\r\n") + 4);

  ASSERT_EQ(200, cli_http(port, "GET", "/api/history?queue=mail&res=day", NULL,
                          resp, sizeof(resp)));
  p = strstr(resp, "\r\n\r\n{\"queue\":\"mail\",\"res\":\"day\",\"points\":[");
  ASSERT_NOT_NULL(p);
  for (n = 0; (p = strstr(p + 1, "{\"t\":\"")) != NULL; n++)
    ;
  ASSERT_EQ(32, n);
  ASSERT_NOT_NULL(strstr(resp, "T00:00:00Z\",\"processed\":3,\"failed\":1,"
                               "\"depth\":null,\"wait_ms\":null}]}"));
  ASSERT_EQ(200, cli_http(port, "GET", "/api/history?queue=mail", NULL, resp,
                          sizeof(resp)));
  p = strstr(resp, "\r\n\r\n{\"queue\":\"mail\",\"res\":\"minute\",");
  ASSERT_NOT_NULL(p);
  for (n = 0; (p = strstr(p + 1, "{\"t\":\"")) != NULL; n++)
    ;
  ASSERT_EQ(1500, n);
  ASSERT_EQ(200, cli_http(port, "GET", "/api/history?queue=mail&res=minute",
                          NULL, resp, sizeof(resp)));
  ASSERT_EQ(400, cli_http(port, "GET", "/api/history?queue=mail&res=hour", NULL,
                          resp, sizeof(resp)));
  ASSERT_EQ(400,
            cli_http(port, "GET", "/api/history", NULL, resp, sizeof(resp)));
  cli_stop_server(pid, "dash-hist");
  fleet_test_redis_stop(redis);
  return 0;
}
