/* test_cli_deps.c -- flows (docs/queue.md, "Flows") in the tools: `fleet
 * queue get` of a flow's parent shows its state and its children (text
 * and JSON), as the dashboard's /api/job does, and the dashboard's job
 * view shows them in a real headless Chromium when one is installed;
 * `fleet queue stats`, `ls` and the dashboard's queues count waiting
 * parents, and `fleet queue jobs --state waiting-children` and /api/jobs
 * list them. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

typedef struct {
  int done, status;
  char parent[FLEET_JOB_ID_MAX + 1];
  char kids[2][FLEET_JOB_ID_MAX + 1];
} cd_flow_t;

static void cd_on_flow(fleet_queue_t *q, int status,
                       const fleet_flow_result_t *r, void *ud) {
  cd_flow_t *f = ud;

  f->done = 1;
  f->status = status;
  if (status == 0) {
    snprintf(f->parent, sizeof(f->parent), "%s", r->parent_id);
    snprintf(f->kids[0], sizeof(f->kids[0]), "%s", r->child_ids[0]);
    snprintf(f->kids[1], sizeof(f->kids[1]), "%s", r->child_ids[1]);
  }
}

/* The dashboard of `url` (prefix "qt") on a free port: its pid and port. */
static pid_t cd_dash(const char *url, int *port) {
  char out[1024];
  const char *p;
  uint64_t t0 = uv_hrtime();
  pid_t pid = cli_spawn(ARGS("--url", url, "--prefix", "qt", "dash", "--listen",
                             "127.0.0.1:0", "--read-timeout-ms", "1000"),
                        "cd-dash");

  do {
    usleep(20000);
    cli_read_out("cd-dash", out, sizeof(out));
  } while (strchr(out, '\n') == NULL &&
           uv_hrtime() - t0 < fleet_test_ms(5000) * 1000000ULL);
  p = strstr(out, "fleet dash: http://127.0.0.1:");
  ASSERT_NOT_NULL(p);
  *port = atoi(p + strlen("fleet dash: http://127.0.0.1:"));
  ASSERT(*port > 0);
  return pid;
}

TEST_IMPL(cli_queue_deps) {
  fleet_test_redis_t *redis;
  fleet_flow_child_t kids[2];
  fleet_flow_spec_t f;
  static char resp[65536];
  static cli_run_t r;
  const char *url, *chromium;
  char pat[1024], page[1024];
  qt_job_t job;
  fleet_claim_t c;
  cd_flow_t out;
  int res[1], port;
  pid_t dash;
  qt_t t;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  qt_open(&t, url, "cf", NULL);
  fleet_flow_spec_init(&f, "join", "p", 1);
  memset(kids, 0, sizeof(kids));
  fleet_job_spec_init(&kids[0].spec, "part", "a", 1);
  fleet_job_spec_init(&kids[1].spec, "part", "b", 1);
  kids[1].queue = "cf-other";
  f.children = kids;
  f.n_children = 2;
  memset(&out, 0, sizeof(out));
  ASSERT_OK(fleet_queue_add_flow(&t.q, &f, cd_on_flow, &out));
  ASSERT(fleet_test_run_until(&t.c.loop, fleet_test_flag_set, &out.done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(out.status);

  /* Waiting: the state, and both children waiting. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "get", "cf", out.parent));
  ASSERT_NOT_NULL(strstr(r.out, "waiting-children\n"));
  ASSERT_NOT_NULL(strstr(r.out, "children_waiting:"));
  cli_run_ok(&r, url, "qt", ARGS("--json", "queue", "get", "cf", out.parent));
  ASSERT_NOT_NULL(strstr(r.out, "\"state\":\"waiting-children\""));
  snprintf(pat, sizeof(pat),
           "\"children\":[{\"queue\":\"cf\",\"id\":\"%s\",\"state\":"
           "\"waiting\",\"result\":\"\"},{\"queue\":\"cf-other\",\"id\":"
           "\"%s\",\"state\":\"waiting\",\"result\":\"\"}],"
           "\"children_waiting\":2,\"fail_on_child_death\":true",
           out.kids[0], out.kids[1]);
  ASSERT_NOT_NULL(strstr(r.out, pat));

  /* Counted and listed as waiting: stats, ls, jobs. */
  cli_run_ok(&r, url, "qt", ARGS("--json", "queue", "stats", "cf"));
  ASSERT_NOT_NULL(strstr(r.out, "\"pending\":1,"));
  ASSERT_NOT_NULL(strstr(r.out, "\"waiting_children\":1"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", "cf"));
  ASSERT_NOT_NULL(strstr(r.out, "waiting_children: 1\n"));
  cli_run_ok(&r, url, "qt", ARGS("queue", "ls"));
  ASSERT_NOT_NULL(strstr(r.out, "WAITING_CHILDREN"));
  cli_run_ok(
      &r, url, "qt",
      ARGS("--json", "queue", "jobs", "cf", "--state", "waiting-children"));
  snprintf(pat, sizeof(pat),
           "\"total\":1,\"next_cursor\":0,\"jobs\":[{\"id\":\"%s\","
           "\"type\":\"join\"",
           out.parent);
  ASSERT_NOT_NULL(strstr(r.out, pat));
  cli_run_ok(&r, url, "qt",
             ARGS("queue", "jobs", "cf", "--state", "waiting-children"));
  ASSERT_NOT_NULL(strstr(r.out, "1 waiting-children job(s) in cf"));
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "queue", "jobs", "cf-other", "--state",
                  "waiting-children"));
  ASSERT_NOT_NULL(strstr(r.out, "\"total\":0,"));

  /* One child completed. */
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  ASSERT_STR_EQ(out.kids[0], job.id);
  c = qt_claim_of(&job);
  ASSERT_OK(qt_complete(&t, &c, 1, res));
  ASSERT_OK(res[0]);
  cli_run_ok(&r, url, "qt", ARGS("--json", "queue", "get", "cf", out.parent));
  snprintf(pat, sizeof(pat),
           "{\"queue\":\"cf\",\"id\":\"%s\",\"state\":\"completed\"",
           out.kids[0]);
  ASSERT_NOT_NULL(strstr(r.out, pat));
  ASSERT_NOT_NULL(strstr(r.out, "\"children_waiting\":1"));
  /* A job that is no parent shows no children. */
  cli_run_ok(&r, url, "qt",
             ARGS("--json", "queue", "get", "cf-other", out.kids[1]));
  ASSERT_NOT_NULL(strstr(r.out, "\"state\":\"pending\""));
  ASSERT_NULL(strstr(r.out, "children"));

  /* The dashboard: /api/job, then the job view in the page. */
  dash = cd_dash(url, &port);
  snprintf(page, sizeof(page), "/api/job?queue=cf&id=%s", out.parent);
  ASSERT_EQ(200, cli_http(port, "GET", page, NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"state\":\"waiting-children\""));
  ASSERT_NOT_NULL(strstr(resp, pat));
  ASSERT_EQ(200,
            cli_http(port, "GET", "/api/queues", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"waiting_children\":1"));
  snprintf(page, sizeof(page), "\"jobs\":[{\"id\":\"%s\"", out.parent);
  ASSERT_EQ(200,
            cli_http(port, "GET", "/api/jobs?queue=cf&state=waiting-children",
                     NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, page));
  chromium = cli_chromium_path();
  if (chromium != NULL) {
    snprintf(page, sizeof(page),
             "http://127.0.0.1:%d/#queue=cf&state=pending&job=%s", port,
             out.parent);
    cli_chromium_run(chromium, page, "--dump-dom", &r);
    ASSERT_EQ(0, r.status);
    ASSERT_NOT_NULL(strstr(r.out, "data-state=\"waiting-children\""));
    /* The queues' table counts the waiting parent. */
    ASSERT_NOT_NULL(strstr(r.out, "<td class=\"num\" "
                                  "data-state=\"waiting-children\" "
                                  "data-count=\"1\">"));
    snprintf(pat, sizeof(pat),
             "<tr data-child=\"%s\"><td>cf</td><td>%s</td><td "
             "data-state=\"completed\">completed</td>",
             out.kids[0], out.kids[0]);
    ASSERT_NOT_NULL(strstr(r.out, pat));
    snprintf(pat, sizeof(pat),
             "<tr data-child=\"%s\"><td>cf-other</td><td>%s</td><td "
             "data-state=\"waiting\">waiting</td>",
             out.kids[1], out.kids[1]);
    ASSERT_NOT_NULL(strstr(r.out, pat));
  }
  ASSERT_OK(kill(dash, SIGINT));
  cli_reap(dash, "cd-dash", &r);
  ASSERT_EQ(0, r.status);
  qt_close(&t);
  fleet_test_redis_stop(redis);
  return 0;
}
