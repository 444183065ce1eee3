/* test_dash.c -- `fleet dash`, the web dashboard, against a real
 * redis-server with known contents (a password-protected one: the banner
 * and the page show the URL redacted): its JSON API and actions over HTTP,
 * and the page in a real headless Chromium (Debian's `chromium`), whose
 * DOM must show the queues, counts, locks, pools, crons (and a cron's
 * history) and warm pools, and whose screenshot is kept as a test
 * artifact. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

#ifndef FLEET_TEST_ARTIFACTS
#define FLEET_TEST_ARTIFACTS "/tmp"
#endif

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

#define DASH_PASSWORD "dash-s3cret"
#define DASH_HOSTILE_GROUP "<img src=x onerror=alert(1)>"

typedef struct {
  fleet_test_redis_t *redis;
  char url[256]; /* with the password */
  qt_t mail, later;
  char dead[FLEET_JOB_ID_MAX + 1];
  char pending[FLEET_JOB_ID_MAX + 1];
  pid_t pid;
  int port;
  char banner[1024];
  cli_wp_t *wp;
} dash_env_t;

static void redis_ok(fleet_test_redis_t *redis, const char *cmd) {
  redisReply *r = fleet_test_redis_cmd(redis, cmd);

  ASSERT_NOT_NULL(r);
  ASSERT_NE(REDIS_REPLY_ERROR, r->type);
  freeReplyObject(r);
}

/* Known contents: queue "mail" with 3 pending jobs (1 in group
 * DASH_HOSTILE_GROUP, 2 in "acme"), 1 dead one and flow limits (100/1s,
 * concurrency 5), queue
 * "later" with 2 delayed, a held lock, a pool with one worker, the crons
 * of cli_fixture_crons() ("tick" fired twice: a failure, then a success),
 * the warm pool "sandboxes" with 2 idle and its primary "wp-node" alive.
 * Then the dashboard on a free port. */
static void dash_setup(dash_env_t *e) {
  static const char *const extra[] = {"--requirepass", DASH_PASSWORD, NULL};
  char id[FLEET_JOB_ID_MAX + 1], out[1024];
  fleet_job_spec_t s;
  cli_run_t r;
  fleet_claim_t c;
  qt_job_t job;
  uint64_t t0;
  const char *p;
  int st;

  memset(e, 0, sizeof(*e));
  e->redis = fleet_test_redis_start_or_skip(extra);
  snprintf(e->url, sizeof(e->url), "redis://:%s@127.0.0.1:%d", DASH_PASSWORD,
           fleet_test_redis_port(e->redis));
  qt_open(&e->mail, e->url, "mail", NULL);
  fleet_job_spec_init(&s, "send", "to-dan", 6);
  s.max_attempts = 1;
  ASSERT_OK(qt_enqueue(&e->mail, &s, 1, &st, NULL));
  ASSERT_EQ(1, qt_claim(&e->mail, 1, 60000, &job));
  c = qt_claim_of(&job);
  ASSERT_OK(qt_fail(&e->mail, &c, "mailbox full"));
  strcpy(e->dead, job.id);
  /* The pending ones in groups: to-ann in one whose name is markup (the
   * page must show it as text), to-bo and to-cy in "acme". */
  fleet_job_spec_init(&s, "send", "to-ann", 6);
  s.group = DASH_HOSTILE_GROUP;
  ASSERT_OK(qt_enqueue(&e->mail, &s, 1, &st, &e->pending));
  fleet_job_spec_init(&s, "send", "to-bo", 5);
  s.group = "acme";
  ASSERT_OK(qt_enqueue(&e->mail, &s, 1, &st, &id));
  fleet_job_spec_init(&s, "send", "to-cy", 5);
  s.group = "acme";
  ASSERT_OK(qt_enqueue(&e->mail, &s, 1, &st, &id));
  cli_run_ok(
      &r, e->url, "qt",
      ARGS("queue", "limit", "mail", "--rate", "100/1s", "--concurrency", "5"));
  qt_open(&e->later, e->url, "later", NULL);
  fleet_job_spec_init(&s, "report", "weekly", 6);
  s.delay_ms = 3600000;
  ASSERT_OK(qt_enqueue(&e->later, &s, 1, &st, NULL));
  ASSERT_OK(qt_enqueue(&e->later, &s, 1, &st, NULL));
  redis_ok(e->redis, "SET {qt:nightly-import}:lock 9:host-a PX 600000");
  redis_ok(e->redis, "SET {qt:nightly-import}:fence 9");
  redis_ok(e->redis, "ZADD {qt:render}:workers 1 n1/1");
  redis_ok(e->redis, "HSET {qt:render}:wnode n1/1 n1");
  redis_ok(e->redis, "SET {qt:render}:rev 2");
  redis_ok(e->redis, "HSET {qt:render}:jobs frame-1 3:r:n1/1");
  cli_fixture_crons(e->url, "qt", 2);
  e->wp = cli_fixture_warmpool(e->url, "qt", "sandboxes", 2);

  /* The page's test hooks (#probe=, #click=, #confirm=) on. */
  setenv("FLEET_DASH_TEST_HOOKS", "1", 1);
  e->pid = cli_spawn(ARGS("--url", e->url, "--prefix", "qt", "dash", "--listen",
                          "127.0.0.1:0", "--read-timeout-ms", "1000"),
                     "dash");
  unsetenv("FLEET_DASH_TEST_HOOKS");
  t0 = uv_hrtime();
  do {
    usleep(20000);
    cli_read_out("dash", out, sizeof(out));
  } while (strchr(out, '\n') == NULL &&
           uv_hrtime() - t0 < fleet_test_ms(5000) * 1000000ULL);
  p = strstr(out, "fleet dash: http://127.0.0.1:");
  ASSERT_NOT_NULL(p);
  e->port = atoi(p + strlen("fleet dash: http://127.0.0.1:"));
  ASSERT(e->port > 0);
  snprintf(e->banner, sizeof(e->banner), "%s", out);
}

static void dash_teardown(dash_env_t *e) {
  cli_run_t r;

  ASSERT_OK(kill(e->pid, SIGINT));
  cli_reap(e->pid, "dash", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_NULL(strstr(r.out, DASH_PASSWORD));
  ASSERT_NULL(strstr(r.err, DASH_PASSWORD));
  cli_fixture_warmpool_close(e->wp);
  qt_close(&e->later);
  qt_close(&e->mail);
  fleet_test_redis_stop(e->redis);
}

static const char *body_of(const char *resp) {
  const char *p = strstr(resp, "\r\n\r\n");

  ASSERT_NOT_NULL(p);
  return p + 4;
}

/* A connection that sends nothing is closed by the server after its read
 * timeout (1 s here): read() sees the end, well before our own bound. */
static void idle_connection_closed(int port) {
  struct timeval tv = {(time_t)(fleet_test_ms(10000) / 1000), 0};
  struct sockaddr_in a;
  uint64_t t0 = uv_hrtime();
  char c;
  int fd = socket(AF_INET, SOCK_STREAM, 0);

  ASSERT_GE(fd, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_OK(connect(fd, (struct sockaddr *)&a, sizeof(a)));
  ASSERT_OK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
  ASSERT_EQ(0, read(fd, &c, 1));
  ASSERT(uv_hrtime() - t0 >= 900 * 1000000ULL);
  close(fd);
}

TEST_IMPL(dash_api) {
  static char resp[262144];
  fleet_job_info_t info;
  char path[512];
  qt_job_t job;
  dash_env_t e;

  cli_required();
  dash_setup(&e);
  /* The banner shows the URL without its password. */
  ASSERT_NOT_NULL(strstr(e.banner, "redis://:***@127.0.0.1:"));
  ASSERT_NULL(strstr(e.banner, DASH_PASSWORD));

  ASSERT_EQ(200,
            cli_http(e.port, "GET", "/api/queues", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "Content-Type: application/json"));
  ASSERT_NOT_NULL(strstr(body_of(resp), "{\"queue\":\"later\",\"pending\":0,"
                                        "\"delayed\":2,"));
  ASSERT_NOT_NULL(strstr(body_of(resp), "{\"queue\":\"mail\",\"pending\":3,"
                                        "\"delayed\":0,\"running\":0,"
                                        "\"completed\":0,\"dead\":1,"));
  /* A queue's flow: limits, state and groups, most pending first. */
  ASSERT_EQ(200, cli_http(e.port, "GET", "/api/queue?queue=mail", NULL, resp,
                          sizeof(resp)));
  ASSERT_NOT_NULL(strstr(body_of(resp), "{\"queue\":\"mail\",\"pending\":3,"));
  ASSERT_NOT_NULL(strstr(resp,
                         "\"limits\":{\"rate_max\":100,\"rate_ms\":1000,"
                         "\"group_rate_max\":0,\"group_rate_ms\":0,"
                         "\"concurrency\":5,\"group_concurrency\":0,"
                         "\"group_turn\":10},"
                         "\"flow\":{\"rate_used\":0,\"running\":0,"
                         "\"groups\":2,\"held_until_ms\":0,"
                         "\"held_until\":null},"
                         "\"groups_total\":2,\"groups_read\":2,"
                         "\"groups\":[{\"group\":\"acme\",\"pending\":2,"));
  ASSERT_NOT_NULL(strstr(resp, "},{\"group\":\"\\u003cimg src=x "
                               "onerror=alert(1)>\",\"pending\":1,"));
  ASSERT_EQ(400,
            cli_http(e.port, "GET", "/api/queue", NULL, resp, sizeof(resp)));
  ASSERT_EQ(200, cli_http(e.port, "GET", "/api/jobs?queue=mail&state=dead",
                          NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"last_error\":\"mailbox full\""));
  ASSERT_EQ(200,
            cli_http(e.port, "GET", "/api/locks", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"name\":\"nightly-import\",\"held\":true,"
                               "\"owner\":\"host-a\""));
  /* The overview, with the server's first throughput sample (taken at
   * start) of every queue's completed counter. */
  ASSERT_EQ(200,
            cli_http(e.port, "GET", "/api/overview", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"history\":[{\"t\":"));
  ASSERT_NOT_NULL(strstr(resp, "\"c\":{\"later\":0,\"mail\":0}"));
  /* ... with each queue's depth, and the backend's state: answering,
   * last seen so now (UTC ISO-8601). */
  ASSERT_NOT_NULL(strstr(resp, "\"p\":{\"later\":0,\"mail\":3}"));
  ASSERT_NOT_NULL(strstr(resp, "\"backend\":{\"ok\":true,\"last_ok\":\"20"));
  ASSERT_NOT_NULL(strstr(resp, "\"down_since\":null,\"reason\":null}"));
  ASSERT_NULL(strstr(resp, "\"error\""));
  /* An unknown API route: 404, whatever the method; a known one without
   * its queue: 400. */
  ASSERT_EQ(404,
            cli_http(e.port, "GET", "/api/nope", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "Content-Type: application/json"));
  ASSERT_NOT_NULL(strstr(body_of(resp), "{\"error\":\"not found\""));
  ASSERT_EQ(404, cli_http(e.port, "POST", "/api/nope", "X-Fleet-Dash: 1\r\n",
                          resp, sizeof(resp)));
  ASSERT_EQ(404, cli_http(e.port, "GET", "/api/jobs/x?queue=mail", NULL, resp,
                          sizeof(resp)));
  ASSERT_EQ(400, cli_http(e.port, "GET", "/api/job", NULL, resp, sizeof(resp)));
  ASSERT_EQ(200,
            cli_http(e.port, "GET", "/api/pools", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"pool\":\"render\""));
  /* Crons, a cron's history, warm pools; the overview has them too. */
  ASSERT_EQ(200,
            cli_http(e.port, "GET", "/api/crons", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(body_of(resp), "{\"namespace\":\"cron\","
                                        "\"definitions\":[{\"key\":"
                                        "\"nightly\",\"expr\":\"30 2 * * *\""));
  ASSERT_NOT_NULL(strstr(resp, "{\"key\":\"tick\",\"expr\":\"* * * * * *\""));
  ASSERT_NOT_NULL(strstr(resp, "\"last_token\":2,"));
  ASSERT_NOT_NULL(strstr(resp, "{\"namespace\":\"other\",\"definitions\":"
                               "[{\"key\":\"hourly\""));
  /* A definition's bounds and state: "capped" starts in 2030 (at most 3
   * fires), "ended" ended in 2000. */
  ASSERT_NOT_NULL(strstr(resp, "{\"key\":\"capped\","));
  ASSERT_NOT_NULL(strstr(strstr(resp, "{\"key\":\"capped\","),
                         "\"start\":\"2030-01-01T00:00:00.000Z\",\"end\":"
                         "\"2031-06-01T00:00:00.000Z\",\"max_fires\":3,"
                         "\"fires\":0,\"finished\":false,\"not_started\":true,"
                         "\"state\":\"not started\","));
  ASSERT_NOT_NULL(strstr(resp, "{\"key\":\"ended\","));
  ASSERT_NOT_NULL(strstr(strstr(resp, "{\"key\":\"ended\","),
                         "\"start\":null,\"end\":\"2000-01-01T00:00:00.000Z\","
                         "\"max_fires\":null,\"fires\":0,\"finished\":true,"
                         "\"not_started\":false,\"state\":\"finished\","));
  ASSERT_NOT_NULL(strstr(strstr(resp, "{\"key\":\"tick\","),
                         "\"not_started\":false,\"state\":\"active\","));
  ASSERT_EQ(200, cli_http(e.port, "GET", "/api/cron-history?ns=cron&key=tick",
                          NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"node\":\"cli-node\",\"token\":2,"));
  ASSERT_NOT_NULL(strstr(resp, "\"outcome\":\"failed: boom\"}]}"));
  ASSERT_EQ(200, cli_http(e.port, "GET",
                          "/api/cron-history?ns=cron&key=tick&limit=1", NULL,
                          resp, sizeof(resp)));
  ASSERT_NULL(strstr(resp, "\"token\":1,"));
  ASSERT_EQ(400, cli_http(e.port, "GET", "/api/cron-history?ns=cron", NULL,
                          resp, sizeof(resp)));
  ASSERT_EQ(404, cli_http(e.port, "GET", "/api/cron-history?ns=cron&key=nope",
                          NULL, resp, sizeof(resp)));
  ASSERT_EQ(
      200, cli_http(e.port, "GET", "/api/warmpools", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(body_of(resp),
                         "[{\"pool\":\"sandboxes\",\"state\":"
                         "\"healthy\",\"idle\":2,\"target\":2,"));
  ASSERT_NOT_NULL(strstr(resp, "\"primary\":\"wp-node\""));
  ASSERT_EQ(200,
            cli_http(e.port, "GET", "/api/overview", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"crons\":[{\"namespace\":\"cron\""));
  ASSERT_NOT_NULL(strstr(resp, "\"warmpools\":[{\"pool\":\"sandboxes\""));

  /* The page: the embedded HTML with the overview inlined; assets. */
  ASSERT_EQ(200, cli_http(e.port, "GET", "/", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "Content-Type: text/html"));
  ASSERT_NOT_NULL(strstr(resp, "<script id=\"fleet-initial\" type=\""
                               "application/json\">{\"url\":"
                               "\"redis://:***@127.0.0.1:"));
  ASSERT_NOT_NULL(strstr(resp, "\"read_only\":false,"));
  ASSERT_NULL(strstr(resp, DASH_PASSWORD));
  ASSERT_EQ(200, cli_http(e.port, "GET", "/app.js", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "function drawChart"));
  ASSERT_EQ(404, cli_http(e.port, "GET", "/nope", NULL, resp, sizeof(resp)));

  /* Actions: POST only, with the dashboard's header. */
  snprintf(path, sizeof(path), "/api/retry?queue=mail&id=%s", e.dead);
  ASSERT_EQ(405, cli_http(e.port, "GET", path, NULL, resp, sizeof(resp)));
  ASSERT_EQ(403, cli_http(e.port, "POST", path, NULL, resp, sizeof(resp)));
  ASSERT_OK(qt_get(&e.mail, e.dead, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_EQ(200, cli_http(e.port, "POST", path, "X-Fleet-Dash: 1\r\n", resp,
                          sizeof(resp)));
  ASSERT_OK(qt_get(&e.mail, e.dead, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  ASSERT_EQ(409, cli_http(e.port, "POST", path, "X-Fleet-Dash: 1\r\n", resp,
                          sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"error\":\"FLEET_EBUSY\""));
  snprintf(path, sizeof(path), "/api/cancel?queue=mail&id=%s", e.pending);
  ASSERT_EQ(200, cli_http(e.port, "POST", path, "X-Fleet-Dash: 1\r\n", resp,
                          sizeof(resp)));
  ASSERT_ERR(FLEET_ENOTFOUND,
             qt_get(&e.mail, e.pending, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(404, cli_http(e.port, "POST", path, "X-Fleet-Dash: 1\r\n", resp,
                          sizeof(resp)));
  ASSERT_EQ(400, cli_http(e.port, "GET", "/api/jobs?queue=mail&state=x", NULL,
                          resp, sizeof(resp)));
  ASSERT_EQ(200, cli_http(e.port, "POST", "/api/pause?queue=mail",
                          "X-Fleet-Dash: 1\r\n", resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"paused\":true"));
  ASSERT_EQ(0, qt_claim(&e.mail, 1, 60000, &job));
  ASSERT_EQ(200, cli_http(e.port, "POST", "/api/resume?queue=mail",
                          "X-Fleet-Dash: 1\r\n", resp, sizeof(resp)));
  /* A running job's cancel: requested; its holder's completion then ends
   * it as cancelled. */
  ASSERT_EQ(1, qt_claim(&e.mail, 1, 60000, &job));
  snprintf(path, sizeof(path), "/api/cancel?queue=mail&id=%s", job.id);
  ASSERT_EQ(200, cli_http(e.port, "POST", path, "X-Fleet-Dash: 1\r\n", resp,
                          sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"result\":\"cancel requested\""));
  ASSERT_OK(qt_get(&e.mail, job.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_RUNNING, info.state);
  {
    fleet_claim_t c = qt_claim_of(&job);
    int res[1];
    ASSERT_OK(qt_complete(&e.mail, &c, 1, res));
    ASSERT_ERR(FLEET_ECANCELED, res[0]);
  }
  ASSERT_OK(qt_get(&e.mail, job.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  /* Purge: only dead or completed; the dead list empties, while the
   * lifetime count stays (the page shows both, labelled). */
  ASSERT_EQ(400, cli_http(e.port, "POST", "/api/purge?queue=mail&state=pending",
                          "X-Fleet-Dash: 1\r\n", resp, sizeof(resp)));
  ASSERT_EQ(400, cli_http(e.port, "POST", "/api/purge?queue=mail",
                          "X-Fleet-Dash: 1\r\n", resp, sizeof(resp)));
  ASSERT_EQ(405, cli_http(e.port, "GET", "/api/purge?queue=mail&state=dead",
                          NULL, resp, sizeof(resp)));
  ASSERT_OK(qt_get(&e.mail, job.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(200, cli_http(e.port, "POST", "/api/purge?queue=mail&state=dead",
                          "X-Fleet-Dash: 1\r\n", resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"removed\":1"));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&e.mail, job.id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(200,
            cli_http(e.port, "GET", "/api/queues", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"dead\":2,\"completed_kept\":0,"
                               "\"dead_kept\":0,"));
  idle_connection_closed(e.port);
  dash_teardown(&e);
  return 0;
}

/* Runs chromium headless on the dashboard's page (with the fragment
 * `frag`, "" for none) with `what` ("--dump-dom" or "--screenshot=FILE");
 * its stdout into `r`, the page's console messages into r->err. */
static void chromium_run(const char *chromium, int port, const char *frag,
                         const char *what, cli_run_t *r) {
  char url[700];

  snprintf(url, sizeof(url), "http://127.0.0.1:%d/%s", port, frag);
  cli_chromium_run(chromium, url, what, r);
}

/* A screenshot of the page (with the fragment `frag`) into `name` under
 * the test artifacts: a PNG of some size. */
static void screenshot(const char *chromium, int port, const char *frag,
                       const char *name) {
  char shot[1024], arg[1100];
  unsigned char magic[8];
  static cli_run_t r;
  struct stat sb;
  FILE *f;

  mkdir(FLEET_TEST_ARTIFACTS, 0755);
  snprintf(shot, sizeof(shot), "%s/%s", FLEET_TEST_ARTIFACTS, name);
  unlink(shot);
  snprintf(arg, sizeof(arg), "--screenshot=%s", shot);
  chromium_run(chromium, port, frag, arg, &r);
  ASSERT_EQ(0, r.status);
  ASSERT_OK(stat(shot, &sb));
  ASSERT(sb.st_size > 10000);
  f = fopen(shot, "rb");
  ASSERT_NOT_NULL(f);
  ASSERT_EQ(8, fread(magic, 1, 8, f));
  fclose(f);
  ASSERT_EQ(0, memcmp(magic, "\x89PNG\r\n\x1a\n", 8));
  fprintf(stderr, "# screenshot: %s\n", shot);
}

TEST_IMPL(dash_chromium) {
  const char *chromium = cli_chromium_path();
  static cli_run_t r;
  dash_env_t e;
  const char *row;

  cli_required();
  if (chromium == NULL)
    fleet_test_skip("chromium is not installed (apt-get install chromium)");
  dash_setup(&e);

  /* The DOM after the page ran: queue names, their counts, the lock, the
   * pool, the redacted URL. */
  chromium_run(chromium, e.port, "", "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  row = strstr(r.out, "<tr data-queue=\"mail\"");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "<td class=\"q-name\">mail</td>"));
  ASSERT_NOT_NULL(strstr(row, "data-state=\"pending\" data-count=\"3\""));
  ASSERT_NOT_NULL(strstr(row, "data-state=\"dead\" data-count=\"1\""));
  row = strstr(r.out, "<tr data-queue=\"later\"");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "data-state=\"delayed\" data-count=\"2\""));
  ASSERT_NOT_NULL(strstr(r.out, "<tr data-lock=\"nightly-import\">"));
  ASSERT_NOT_NULL(strstr(r.out, "host-a"));
  ASSERT_NOT_NULL(strstr(r.out, "data-pool=\"render\""));
  ASSERT_NOT_NULL(strstr(r.out, "redis://:***@127.0.0.1:"));
  ASSERT_NULL(strstr(r.out, DASH_PASSWORD));
  /* Current and lifetime counts, each labelled; the charts, one per
   * measure, with a UTC time axis. */
  ASSERT_NOT_NULL(strstr(r.out, ">Dead now</th>"));
  ASSERT_NOT_NULL(strstr(r.out, ">Dead (lifetime)</th>"));
  row = strstr(r.out, "<tr data-queue=\"mail\"");
  ASSERT_NOT_NULL(strstr(row, "data-state=\"dead-lifetime\" data-count=\"1\""));
  ASSERT_NOT_NULL(strstr(r.out, "<figure class=\"chart\" "
                                "data-metric=\"processed\">"));
  ASSERT_NOT_NULL(strstr(r.out, "data-metric=\"failed\""));
  ASSERT_NOT_NULL(strstr(r.out, "data-metric=\"depth\""));
  ASSERT_NOT_NULL(strstr(r.out, "data-metric=\"wait\""));
  ASSERT_NOT_NULL(strstr(r.out, "<text x=\""));
  ASSERT_NOT_NULL(strstr(r.out, "data-tick=\"20"));
  ASSERT_NOT_NULL(strstr(r.out, ">UTC</text>"));
  ASSERT_NOT_NULL(strstr(r.out, "<path d=\"M"));
  ASSERT_NOT_NULL(strstr(r.out, "data-series=\"mail\""));
  /* The header's time is UTC ISO-8601; no outage, no banner. */
  ASSERT_NOT_NULL(strstr(r.out, "<span id=\"updated\" class=\"muted\">"
                                "updated 20"));
  ASSERT_NOT_NULL(strstr(r.out, "<div id=\"outage\" role=\"alert\" hidden"));
  /* The page's policy lets it run: nothing refused, no script error (the
   * console stays silent); the chart's legend has its colours. */
  ASSERT_EQ(0, strlen(r.err));
  ASSERT_NOT_NULL(strstr(r.out, "class=\"swatch\" style=\"background: rgb("));
  /* Read-write: each queue has its pause button. */
  ASSERT_NOT_NULL(strstr(r.out, "<button data-action=\"pause\">Pause"));
  /* Crons with next due and last fired; the warm pool's snapshot. */
  row = strstr(r.out, "<tr data-cron=\"cron/tick\"");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "<td class=\"expr\">* * * * * *</td>"));
  ASSERT_NOT_NULL(strstr(row, "<td data-next=\"20"));
  ASSERT_NOT_NULL(strstr(row, "<td data-last=\"20"));
  row = strstr(r.out, "<tr data-cron=\"cron/nightly\"");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "<td>Europe/Berlin</td>"));
  ASSERT_NOT_NULL(strstr(row, "<td class=\"paused\">disabled</td>"));
  ASSERT_NOT_NULL(strstr(row, "<td data-next=\"\">-</td>"));
  ASSERT_NOT_NULL(strstr(r.out, "<tr data-cron=\"other/hourly\""));
  /* Start, end, fires against the limit and the state, marked. */
  ASSERT_NOT_NULL(strstr(r.out, "<tr data-cron=\"cron/tick\" "
                                "data-state=\"active\" class=\"\">"));
  row = strstr(r.out, "<tr data-cron=\"timed/capped\" data-state=\"not "
                      "started\" class=\"not-started\">");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "<td data-start=\"2030-01-01T00:00:00.000Z\">"
                              "2030-01-01T00:00:00Z</td><td data-end=\""
                              "2031-06-01T00:00:00.000Z\">2031-06-01T00:00:00Z"
                              "</td><td class=\"num\" data-fires=\"0\">0 / 3"
                              "</td><td class=\"state not-started\">not started"
                              "</td>"));
  row = strstr(r.out, "<tr data-cron=\"timed/ended\" data-state=\"finished\" "
                      "class=\"finished\">");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "<td data-start=\"\">-</td><td data-end=\""
                              "2000-01-01T00:00:00.000Z\">2000-01-01T00:00:00Z"
                              "</td><td class=\"num\" data-fires=\"0\">-</td>"
                              "<td class=\"state finished\">finished</td>"));
  row = strstr(r.out, "<tr data-warmpool=\"sandboxes\">");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "<td class=\"\">healthy</td>"));
  ASSERT_NOT_NULL(strstr(row, "data-idle=\"2\">2</td>"));
  ASSERT_NOT_NULL(strstr(row, "<td>wp-node</td>"));
  /* The history view of a definition, opened by its link. */
  ASSERT_NULL(strstr(r.out, "<tr data-fire="));
  chromium_run(chromium, e.port, "#cron=cron&key=tick", "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(
      strstr(r.out, "<span id=\"cron-history-key\">cron/tick</span>"));
  row = strstr(r.out, "<tr data-fire=");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "<td>cli-node</td><td class=\"num\">2</td>"));
  ASSERT_NOT_NULL(strstr(row, "<td class=\"\">completed</td>"));
  ASSERT_NOT_NULL(strstr(row, "<td class=\"err\">failed: boom</td>"));
  ASSERT(strstr(row, "completed") < strstr(row, "failed: boom"));
  /* A queue's empty completed tab says why it may be empty (completed
   * jobs are not kept by default). */
  chromium_run(chromium, e.port, "#queue=mail&state=completed", "--dump-dom",
               &r);
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "<span id=\"jobs-queue\">mail</span>"));
  ASSERT_NOT_NULL(strstr(r.out, ">0 of 0 completed job(s) (completion history "
                                "is off unless keep_completed is set)</span>"));
  ASSERT_NOT_NULL(strstr(r.out, "<button data-action=\"purge\">Purge "
                                "completed</button>"));
  /* The queue's flow above its jobs: the limits, and the groups most
   * pending first, the markup group's name as text. */
  chromium_run(chromium, e.port, "#queue=mail&state=pending", "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(0, strlen(r.err));
  ASSERT_NOT_NULL(strstr(r.out, "<span data-limit=\"rate\">Rate <strong>"
                                "100/1s (0 in the window)</strong></span>"));
  ASSERT_NOT_NULL(strstr(r.out, "<span data-limit=\"concurrency\">"
                                "Concurrency <strong>5 (0 running)</strong>"));
  row = strstr(r.out, "<tr data-group=\"acme\">");
  ASSERT_NOT_NULL(row);
  ASSERT_NOT_NULL(strstr(row, "<td class=\"num\" data-pending=\"2\">2</td>"));
  ASSERT_NOT_NULL(strstr(row, "<td>&lt;img src=x onerror=alert(1)&gt;</td>"));
  ASSERT_NULL(strstr(r.out, "<img src=\"x\""));
  /* The dead tab: the job with its Retry button, and Retry all. */
  chromium_run(chromium, e.port, "#queue=mail&state=dead", "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(0, strlen(r.err));
  ASSERT_NOT_NULL(strstr(r.out, "<tr data-job="));
  ASSERT_NOT_NULL(
      strstr(r.out, "<button data-action=\"retry\">Retry</button>"));
  ASSERT_NOT_NULL(
      strstr(r.out, "<button data-action=\"retry\">Retry all dead</button>"));
  /* The running tab: a running job has its Cancel button. */
  {
    /* (A client of its own: e.mail's loop stood still while chromium
     * ran.) */
    qt_job_t job;
    qt_t q;
    qt_open(&q, e.url, "mail", NULL);
    ASSERT_EQ(1, qt_claim(&q, 1, 60000, &job));
    qt_close(&q);
    chromium_run(chromium, e.port, "#queue=mail&state=running", "--dump-dom",
                 &r);
    ASSERT_EQ(0, r.status);
    row = strstr(r.out, "<tr data-job=");
    ASSERT_NOT_NULL(row);
    ASSERT_NOT_NULL(
        strstr(row, "<button data-action=\"cancel\">Cancel</button>"));
  }

  /* The screenshot, kept under the build directory. */
  screenshot(chromium, e.port, "#cron=cron&key=tick", "dash.png");
  dash_teardown(&e);
  return 0;
}

/* How many times `needle` occurs in `hay`. */
static int count_of(const char *hay, const char *needle) {
  int n = 0;

  for (; (hay = strstr(hay, needle)) != NULL; hay += strlen(needle))
    n++;
  return n;
}

/* The id of the first "<tr data-job=ID" at or after `from`, into `id`. */
static const char *row_id(const char *from, char *id, size_t cap) {
  const char *p = strstr(from, "<tr data-job=\"");
  size_t n;

  ASSERT_NOT_NULL(p);
  p += strlen("<tr data-job=\"");
  n = strcspn(p, "\"");
  ASSERT(n > 0 && n < cap);
  memcpy(id, p, n);
  id[n] = '\0';
  return p + n;
}

/* The page's jobs: a job's detail pane (a JSON payload pretty-printed, as
 * text), the pages of a state, a search that finds nothing, the
 * confirmation every change asks for (nothing is sent until it is
 * confirmed), purge, and the requests of delete, kill and run now; then
 * the layout 420 px wide (the test hook's measure: nothing but the
 * boxes that scroll reaches past 420 px), and its screenshot. */
TEST_IMPL(dash_chromium_jobs) {
  static const char json[] = "{\"to\":\"<b>eve</b>\",\"n\":[1,2]}";
  const char *chromium = cli_chromium_path();
  char frag[512], jid[FLEET_JOB_ID_MAX + 1], k1[FLEET_JOB_ID_MAX + 1];
  char k2[FLEET_JOB_ID_MAX + 1], later[FLEET_JOB_ID_MAX + 1];
  char ids[8][FLEET_JOB_ID_MAX + 1], want[512];
  static char resp[65536];
  static cli_run_t r;
  fleet_job_info_t info;
  fleet_job_spec_t s;
  const char *p;
  long right;
  int st, i, j, n = 0;
  dash_env_t e;
  qt_t q;

  cli_required();
  if (chromium == NULL)
    fleet_test_skip("chromium is not installed (apt-get install chromium)");
  dash_setup(&e);
  /* Three more pending jobs with JSON payloads: 6 pending in all. (A
   * client of its own: e.mail's loop stands still while chromium runs.) */
  qt_open(&q, e.url, "mail", NULL);
  fleet_job_spec_init(&s, "send", json, strlen(json));
  ASSERT_OK(qt_enqueue(&q, &s, 1, &st, &jid));
  ASSERT_OK(qt_enqueue(&q, &s, 1, &st, &k1));
  ASSERT_OK(qt_enqueue(&q, &s, 1, &st, &k2));
  qt_close(&q);

  /* The detail pane: every field, the payload pretty-printed as text. */
  snprintf(frag, sizeof(frag), "#queue=mail&state=pending&job=%s", jid);
  chromium_run(chromium, e.port, frag, "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(0, strlen(r.err));
  snprintf(want, sizeof(want), "<span id=\"job-id\">%s</span>", jid);
  ASSERT_NOT_NULL(strstr(r.out, want));
  ASSERT_NOT_NULL(strstr(r.out, "<div id=\"job-view\">"));
  ASSERT_NOT_NULL(strstr(r.out, "<dd data-state=\"pending\">pending</dd>"));
  ASSERT_NOT_NULL(strstr(r.out, "<dt>Type</dt><dd>send</dd>"));
  ASSERT_NOT_NULL(strstr(r.out, "<dd data-attempts=\"0\">0 of "));
  ASSERT_NOT_NULL(strstr(r.out, "<dt>Created</dt><dd>20"));
  ASSERT_NOT_NULL(strstr(r.out, "<pre id=\"job-payload\" class=\"blob\" "
                                "data-json=\"1\">{\n  \"to\": \"&lt;b&gt;eve"
                                "&lt;/b&gt;\",\n  \"n\": [\n    1,\n    2\n"
                                "  ]\n}</pre>"));
  ASSERT_NULL(strstr(r.out, "<b>eve"));
  ASSERT_NOT_NULL(strstr(r.out, "<pre id=\"job-result\" class=\"blob muted\" "
                                "data-json=\"0\">none kept</pre>"));
  p = strstr(r.out, "<div id=\"job-actions\">");
  ASSERT_NOT_NULL(p);
  ASSERT_NOT_NULL(strstr(p, "<button data-action=\"kill\">Kill</button>"));
  ASSERT_NOT_NULL(strstr(p, "<button data-action=\"delete\">Delete</button>"));
  /* A job that failed twice: its attempts, oldest first, each with its
   * time and error, as text. */
  {
    char rid[1][FLEET_JOB_ID_MAX + 1];
    fleet_claim_t c;
    qt_job_t job;
    int k;

    qt_open(&q, e.url, "retries", NULL);
    fleet_job_spec_init(&s, "send", "x", 1);
    s.max_attempts = 2;
    s.backoff = FLEET_BACKOFF_FIXED;
    s.backoff_ms = 1;
    s.backoff_jitter_pct = 0;
    ASSERT_OK(qt_enqueue(&q, &s, 1, &st, rid));
    ASSERT_EQ(1, qt_claim(&q, 1, 60000, &job));
    c = qt_claim_of(&job);
    ASSERT_OK(qt_fail(&q, &c, "first <i>try</i>"));
    for (k = 0, n = 0; k < 200 && n == 0; k++) {
      n = qt_claim(&q, 1, 60000, &job);
      if (n == 0)
        qt_sleep(&q, 5);
    }
    ASSERT_EQ(1, n);
    n = 0;
    c = qt_claim_of(&job);
    ASSERT_OK(qt_fail(&q, &c, "second\nline"));
    ASSERT_EQ(1, q.dead);
    qt_close(&q);
    snprintf(frag, sizeof(frag), "#queue=retries&state=dead&job=%s", rid[0]);
    chromium_run(chromium, e.port, frag, "--dump-dom", &r);
    ASSERT_EQ(0, r.status);
    ASSERT_EQ(0, strlen(r.err));
    p = strstr(r.out, "<ol id=\"job-errors\"><li data-attempt=\"1\">"
                      "<span class=\"when\">attempt 1 at 20");
    ASSERT_NOT_NULL(p);
    p = strstr(p, "Z</span><pre class=\"blob\">first &lt;i&gt;try&lt;/i&gt;"
                  "</pre></li><li data-attempt=\"2\"><span class=\"when\">"
                  "attempt 2 at 20");
    ASSERT_NOT_NULL(p);
    ASSERT_NOT_NULL(strstr(p, "Z</span><pre class=\"blob\">second\nline"
                              "</pre></li></ol>"));
    ASSERT_NULL(strstr(r.out, "<i>try"));
    ASSERT_NULL(strstr(r.out, "last one only"));
    /* The last error is the history's last: not told twice. */
    p = strstr(r.out, "<pre id=\"job-error\"");
    ASSERT_NOT_NULL(p);
    ASSERT(strstr(p, "hidden") != NULL && strstr(p, "hidden") < strchr(p, '>'));
    cli_chromium_window = "1280,1700";
    screenshot(chromium, e.port, frag, "dash-attempts.png");
    cli_chromium_window = "1280,1000";
  }
  /* A job that is not there: said so. */
  chromium_run(chromium, e.port, "#queue=mail&state=pending&job=nosuch",
               "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "<dd class=\"\" data-state=\"none\">no job "
                                "nosuch in mail</dd>"));
  ASSERT_NOT_NULL(strstr(r.out, "<input id=\"job-search-id\""));

  /* Pages of 4: the first, then the next from its cursor; together every
   * pending job once. */
  chromium_run(chromium, e.port, "#queue=mail&state=pending&limit=4",
               "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(4, count_of(r.out, "<tr data-job="));
  ASSERT_NOT_NULL(strstr(r.out, ">4 of 6 pending job(s)</span>"));
  ASSERT_NOT_NULL(strstr(r.out, "<button id=\"page-next\">Next page</button>"));
  ASSERT_NOT_NULL(strstr(r.out, "<button id=\"page-prev\" disabled=\"\">"));
  for (p = r.out; n < 4; n++)
    p = row_id(p, ids[n], sizeof(ids[n]));
  ASSERT_EQ(200, cli_http(e.port, "GET",
                          "/api/jobs?queue=mail&state=pending&limit=4", NULL,
                          resp, sizeof(resp)));
  p = strstr(resp, "\"next_cursor\":");
  ASSERT_NOT_NULL(p);
  ASSERT(atoi(p + strlen("\"next_cursor\":")) > 0);
  snprintf(frag, sizeof(frag), "#queue=mail&state=pending&limit=4&cursor=%d",
           atoi(p + strlen("\"next_cursor\":")));
  chromium_run(chromium, e.port, frag, "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(2, count_of(r.out, "<tr data-job="));
  ASSERT_NOT_NULL(strstr(r.out, ">2 of 6 pending job(s) (from cursor "));
  ASSERT_NOT_NULL(
      strstr(r.out, "<button id=\"page-prev\">Previous page</button>"));
  for (p = r.out; n < 6; n++)
    p = row_id(p, ids[n], sizeof(ids[n]));
  for (i = 0; i < 6; i++)
    for (j = i + 1; j < 6; j++)
      ASSERT_NE(0, strcmp(ids[i], ids[j]));

  /* A change asks first: the dialog is open, nothing was sent, the dead
   * job is still dead. */
  chromium_run(chromium, e.port, "#queue=mail&state=dead&click=retry&probe=1",
               "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "<div id=\"confirm\" role=\"dialog\" "
                                "aria-modal=\"true\" "
                                "aria-labelledby=\"confirm-text\">"));
  ASSERT_NOT_NULL(strstr(r.out, "<p id=\"confirm-text\">Retry every dead job "
                                "of mail?</p>"));
  ASSERT_NOT_NULL(strstr(r.out, "request GET /api/jobs?queue=mail"));
  ASSERT_NULL(strstr(r.out, "request POST"));
  qt_open(&q, e.url, "mail", NULL);
  ASSERT_OK(qt_get(&q, e.dead, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  qt_close(&q);
  /* Confirmed: purge empties the dead list. */
  chromium_run(chromium, e.port,
               "#queue=mail&state=dead&click=purge&confirm=1&probe=1",
               "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "<div id=\"confirm\" role=\"dialog\" "
                                "aria-modal=\"true\" "
                                "aria-labelledby=\"confirm-text\" hidden"));
  ASSERT_NOT_NULL(strstr(r.out, "request POST /api/purge?state=dead&amp;"
                                "queue=mail -&gt; 200"));
  qt_open(&q, e.url, "mail", NULL);
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&q, e.dead, &info, NULL, 0, NULL, 0));
  qt_close(&q);
  /* Delete and kill (from a job's pane) and run now (a delayed job's
   * row) send their requests (POST /api/job/...) once confirmed. */
  snprintf(frag, sizeof(frag),
           "#queue=mail&state=pending&job=%s&click=delete&confirm=1&probe=1",
           k1);
  chromium_run(chromium, e.port, frag, "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  snprintf(want, sizeof(want),
           "request POST /api/job/delete?queue=mail&amp;id=%s -&gt; ", k1);
  ASSERT_NOT_NULL(strstr(r.out, want));
  snprintf(frag, sizeof(frag),
           "#queue=mail&state=pending&job=%s&click=kill&confirm=1&probe=1", k2);
  chromium_run(chromium, e.port, frag, "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  snprintf(want, sizeof(want),
           "request POST /api/job/kill?queue=mail&amp;id=%s -&gt; ", k2);
  ASSERT_NOT_NULL(strstr(r.out, want));
  chromium_run(chromium, e.port,
               "#queue=later&state=delayed&click=run&confirm=1&probe=1",
               "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  /* The first delayed row's job was run: it answered 200 and the list,
   * read again, no longer holds it (the other delayed job is left). */
  {
    const char *sent =
        strstr(r.out, "request POST /api/job/run?queue=later&amp;id=");

    ASSERT_NOT_NULL(sent);
    sent += strlen("request POST /api/job/run?queue=later&amp;id=");
    snprintf(later, sizeof(later), "%.*s", (int)strspn(sent, "0123456789"),
             sent);
    ASSERT(later[0] != '\0');
    snprintf(want, sizeof(want), "%s -&gt; 200", later);
    ASSERT_NOT_NULL(strstr(sent, want) == sent ? sent : NULL);
    snprintf(want, sizeof(want), "<tr data-job=\"%s\"", later);
    ASSERT_NULL(strstr(r.out, want));
    ASSERT_EQ(1, count_of(r.out, "<tr data-job="));
  }

  /* 420 px wide: nothing but the boxes that scroll reaches past it. */
  cli_chromium_window = "420,1400";
  snprintf(frag, sizeof(frag), "#queue=mail&state=pending&job=%s&probe=420",
           jid);
  chromium_run(chromium, e.port, frag, "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  p = strstr(r.out, "<pre id=\"probe\">");
  ASSERT_NOT_NULL(p);
  ASSERT_NOT_NULL(strstr(p, "\nwidth=420\n"));
  p = strstr(p, "\nright=");
  ASSERT_NOT_NULL(p);
  right = strtol(p + strlen("\nright="), NULL, 10);
  fprintf(stderr, "# narrow: right edge %ld px of 420\n", right);
  ASSERT(right > 300 && right <= 420);
  ASSERT_NOT_NULL(strstr(p, "\noverflow=no\nwide=\n"));
  snprintf(frag, sizeof(frag), "#queue=mail&state=pending&job=%s", jid);
  screenshot(chromium, e.port, frag, "dash-narrow.png");
  cli_chromium_window = "1280,1000";
  dash_teardown(&e);
  return 0;
}

/* The dashboard of a backend that stopped answering: the page says so at
 * its top (since when, why), every count and section is "unknown" (never
 * "no queue"), the header keeps the time of the last successful update,
 * and the API answers 503 with the error instead of empty lists. */
TEST_IMPL(dash_chromium_outage) {
  const char *chromium = cli_chromium_path();
  char url[256], out[1024], last_ok[64], want[128];
  static char resp[65536];
  static cli_run_t r;
  fleet_test_redis_t *redis;
  fleet_job_spec_t s;
  cli_run_t done;
  uint64_t t0;
  const char *p;
  pid_t pid;
  int port, st;
  qt_t q;

  cli_required();
  if (chromium == NULL)
    fleet_test_skip("chromium is not installed (apt-get install chromium)");
  redis = fleet_test_redis_start_or_skip(NULL);
  snprintf(url, sizeof(url), "redis://127.0.0.1:%d",
           fleet_test_redis_port(redis));
  qt_open(&q, url, "mail", NULL);
  fleet_job_spec_init(&s, "send", "to-dan", 6);
  ASSERT_OK(qt_enqueue(&q, &s, 1, &st, NULL));
  qt_close(&q);
  /* A short call timeout: against no server each query ends within 1 s.
   * With the default 5 s, some fetch of the page's polls was always in
   * flight and headless Chromium's virtual time, which waits for them,
   * could stall for good. */
  pid = cli_spawn(ARGS("--url", url, "--prefix", "qt", "--timeout-ms", "1000",
                       "dash", "--listen", "127.0.0.1:0"),
                  "dash-outage");
  t0 = uv_hrtime();
  do {
    usleep(20000);
    cli_read_out("dash-outage", out, sizeof(out));
  } while (strchr(out, '\n') == NULL &&
           uv_hrtime() - t0 < fleet_test_ms(5000) * 1000000ULL);
  p = strstr(out, "fleet dash: http://127.0.0.1:");
  ASSERT_NOT_NULL(p);
  port = atoi(p + strlen("fleet dash: http://127.0.0.1:"));
  /* Healthy first: the last success is known. */
  ASSERT_EQ(200,
            cli_http(port, "GET", "/api/overview", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"queue\":\"mail\",\"pending\":1,"));
  ASSERT_EQ(0, fleet_test_redis_stop(redis));

  ASSERT_EQ(503,
            cli_http(port, "GET", "/api/overview", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"queues\":null,\"locks\":null,"));
  ASSERT_NOT_NULL(strstr(resp, "\"backend\":{\"ok\":false,\"last_ok\":\"20"));
  ASSERT_NOT_NULL(strstr(resp, "\"error\":\"FLEET_E"));
  p = strstr(resp, "\"last_ok\":\"");
  ASSERT_NOT_NULL(p);
  p += strlen("\"last_ok\":\"");
  ASSERT(strcspn(p, "\"") < sizeof(last_ok));
  snprintf(last_ok, sizeof(last_ok), "%.*s", (int)strcspn(p, "\""), p);
  ASSERT_EQ('Z', last_ok[strlen(last_ok) - 1]);
  ASSERT_NOT_NULL(strstr(resp, "\"down_since\":\"20"));
  ASSERT(strcmp(last_ok, strstr(resp, "\"down_since\":\"") +
                             strlen("\"down_since\":\"")) < 0);
  ASSERT_EQ(503,
            cli_http(port, "GET", "/api/queues", NULL, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"error\":\"FLEET_E"));

  chromium_run(chromium, port, "", "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  p = strstr(r.out, "<body>");
  ASSERT_NOT_NULL(p);
  /* The banner is the page's first element. */
  ASSERT_NOT_NULL(strstr(p, "<body>\n<div id=\"outage\" role=\"alert\">Redis "
                            "unreachable since 20"));
  ASSERT_NOT_NULL(strstr(p, "Z: FLEET_E"));
  ASSERT_NOT_NULL(strstr(p, "connection refused</div>"));
  snprintf(want, sizeof(want), "updated %s</span>", last_ok);
  ASSERT_NOT_NULL(strstr(p, want));
  /* The queue the server sampled before: each count unknown. */
  ASSERT_NOT_NULL(strstr(p, "<tr data-queue=\"mail\"><td class=\"q-name\">"
                            "mail</td><td class=\"unknown\" data-state=\""
                            "pending\">unknown</td>"));
  ASSERT_NOT_NULL(strstr(p, "<td class=\"unknown\" data-state=\"dead\">"
                            "unknown</td>"));
  ASSERT_NULL(strstr(p, "data-count="));
  ASSERT_NOT_NULL(strstr(p, "unknown: the locks could not be read"));
  ASSERT_NOT_NULL(strstr(p, "unknown: the crons could not be read"));
  ASSERT_NOT_NULL(strstr(p, "unknown: the warm pools could not be read"));
  ASSERT_NOT_NULL(strstr(p, "unknown: the pools could not be read"));
  ASSERT_NOT_NULL(strstr(p, ">unknown</text>"));
  ASSERT_NULL(strstr(p, "no queue under this prefix"));
  ASSERT_NULL(strstr(p, ">no lock<"));
  ASSERT_NULL(strstr(p, ">no cron<"));
  screenshot(chromium, port, "", "dash-outage.png");

  /* Stopped with queries in flight against no server: it ends once they
   * time out (5 s), well within the bound. */
  ASSERT_OK(kill(pid, SIGINT));
  cli_reap_within(pid, "dash-outage", &done, fleet_test_ms(30000));
  ASSERT_EQ(0, done.status);
  return 0;
}
