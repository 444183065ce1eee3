/* test_dash_parts.c -- `fleet dash` and `fleet metrics` on a partitioned
 * queue (docs/queue.md, "Partitioned queues"), against a real
 * redis-server: the queue is made partitioned after the dashboard
 * started, and the dashboard's view of it (counts, pages of jobs, one
 * job, the job verbs, pause and resume, purge, retry, the history, the
 * page and /metrics) must be of every partition, as one queue. */
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

#define DP_PARTS 4
#define DP_JOBS 40
#define DP_CHANGE "X-Fleet-Dash: 1\r\n"

static char dp_resp[1 << 20];

static const char *dp_body(void) {
  const char *p = strstr(dp_resp, "\r\n\r\n");

  ASSERT_NOT_NULL(p);
  return p + 4;
}

/* GET or POST `path`; returns the HTTP status. */
static int dp_http(int port, const char *method, const char *path) {
  return cli_http(port, method, path,
                  strcmp(method, "POST") == 0 ? DP_CHANGE : NULL, dp_resp,
                  sizeof(dp_resp));
}

/* The number after "\"key\":" in `json`, -1 when absent. */
static long long dp_num(const char *json, const char *key) {
  char pat[64];
  const char *p;

  snprintf(pat, sizeof(pat), "\"%s\":", key);
  p = strstr(json, pat);
  return p != NULL ? atoll(p + strlen(pat)) : -1;
}

/* The sum of every "\"key\":N" in `json`. */
static long long dp_sum(const char *json, const char *key) {
  char pat[64];
  const char *p = json;
  long long n = 0;

  snprintf(pat, sizeof(pat), "\"%s\":", key);
  while ((p = strstr(p, pat)) != NULL) {
    p += strlen(pat);
    n += atoll(p);
  }
  return n;
}

/* The partition a job id handed out says ("<digits>~<i>"; 0 without). */
static int dp_part(const char *id) {
  const char *t = strchr(id, '~');

  return t == NULL ? 0 : atoi(t + 1);
}

/* The state of job `id` of the partitioned handle `t`, or -1 when there
 * is no such job. */
static int dp_state(qt_t *t, const char *id) {
  fleet_job_info_t info;
  int err = qt_get(t, id, &info, NULL, 0, NULL, 0);

  if (err == FLEET_ENOTFOUND)
    return -1;
  ASSERT_OK(err);
  return (int)info.state;
}

/* Every page of the pending jobs of "pq" through /api/jobs (7 a page):
 * their ids into `ids`; returns how many. */
static int dp_walk(int port, char ids[][FLEET_JOB_ID_MAX + 1], int cap) {
  char path[256];
  const char *p;
  long long cursor = 0;
  int n = 0, pages;

  for (pages = 0; pages < 2 * DP_JOBS; pages++) {
    snprintf(path, sizeof(path),
             "/api/jobs?queue=pq&state=pending&limit=7&cursor=%lld", cursor);
    ASSERT_EQ(200, dp_http(port, "GET", path));
    ASSERT_EQ(DP_JOBS, dp_num(dp_body(), "total"));
    for (p = dp_body(); (p = strstr(p, "{\"id\":\"")) != NULL;) {
      p += strlen("{\"id\":\"");
      ASSERT(n < cap);
      snprintf(ids[n], sizeof(ids[0]), "%.*s", (int)strcspn(p, "\""), p);
      n++;
    }
    cursor = dp_num(dp_body(), "next_cursor");
    ASSERT(cursor >= 0);
    if (cursor == 0)
      break;
  }
  ASSERT_EQ(0, cursor);
  return n;
}

/* Whether partition `p` of "pq" is paused, as `fleet queue stats` of its
 * own queue says. */
static int dp_part_paused(const char *url, int p) {
  char name[16];
  cli_run_t r;

  snprintf(name, sizeof(name), "pq~%d", p);
  cli_run_ok(&r, url, "qt", ARGS("queue", "stats", name));
  return strstr(r.out, "paused:           true") != NULL;
}

/* What a history read saw: its points' processed, added up. */
typedef struct {
  int done, status;
  uint64_t processed;
} dp_hist_t;

static void dp_on_history(fleet_queue_t *q, int status,
                          const fleet_hist_point_t *pts, size_t n, void *ud) {
  dp_hist_t *h = ud;

  (void)q;
  h->status = status;
  for (size_t i = 0; i < n; i++)
    h->processed += pts[i].processed;
  h->done = 1;
}

TEST_IMPL(dash_parts) {
  static char ids[DP_JOBS][FLEET_JOB_ID_MAX + 1];
  static char seen[2 * DP_JOBS][FLEET_JOB_ID_MAX + 1];
  static cli_run_t r;
  const char *url, *in[DP_PARTS] = {NULL};
  char path[512];
  fleet_job_spec_t s[DP_JOBS];
  fleet_queue_options_t o;
  fleet_claim_t claims[6];
  qt_job_t jobs[6];
  fleet_test_redis_t *redis;
  int st[DP_JOBS], res[6], port, n, got, used[DP_PARTS] = {0}, nused = 0;
  long long processed;
  uint64_t t0;
  pid_t pid;
  qt_t t, p0;
  dp_hist_t h;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  port = cli_spawn_server(
      ARGS("--url", url, "--prefix", "qt", "dash", "--listen", "127.0.0.1:0"),
      "dash-parts", "fleet dash:", &pid);

  /* The dashboard reads "pq" while it is nothing yet (one partition). */
  ASSERT_EQ(200, dp_http(port, "GET", "/api/queue?queue=pq"));
  ASSERT_EQ(0, dp_num(dp_body(), "pending"));

  /* Then "pq" is made a queue of 4 partitions, and 40 jobs go round
   * the partitions, 10 each. */
  cli_run_ok(&r, url, "qt", ARGS("queue", "create", "pq", "--partitions", "4"));
  fleet_queue_options_init(&o);
  o.partitions = DP_PARTS;
  qt_open(&t, url, "pq", &o);
  for (int i = 0; i < DP_JOBS; i++)
    fleet_job_spec_init(&s[i], "t", "p", 1);
  ASSERT_OK(qt_enqueue(&t, s, DP_JOBS, st, ids));
  for (int i = 0; i < DP_JOBS; i++)
    if (in[dp_part(ids[i])] == NULL)
      in[dp_part(ids[i])] = ids[i];
  for (int p = 0; p < DP_PARTS; p++)
    ASSERT_NOT_NULL(in[p]);
  /* (Its client would see its loop stopped for seconds: closed, and
   * opened again after the wait.) */
  qt_close(&t);

  /* The dashboard reads the count again on a later refresh: its counts
   * are then every partition's. */
  t0 = uv_hrtime();
  do {
    ASSERT_EQ(200, dp_http(port, "GET", "/api/queue?queue=pq"));
    if (dp_num(dp_body(), "pending") == DP_JOBS)
      break;
    usleep(200000);
  } while (uv_hrtime() - t0 < fleet_test_ms(15000) * 1000000ULL);
  ASSERT_EQ(DP_JOBS, dp_num(dp_body(), "pending"));
  ASSERT_NOT_NULL(strstr(dp_body(), "\"paused\":false"));
  qt_open(&t, url, "pq", &o);
  /* The list of queues and the page: one row, no partition of its own. */
  ASSERT_EQ(200, dp_http(port, "GET", "/api/queues"));
  ASSERT_NOT_NULL(strstr(dp_body(), "{\"queue\":\"pq\",\"pending\":40,"));
  ASSERT_NULL(strstr(dp_body(), "\"pq~"));
  ASSERT_EQ(200, dp_http(port, "GET", "/"));
  ASSERT_NOT_NULL(strstr(dp_resp, "{\"queue\":\"pq\",\"pending\":40,"));
  ASSERT_NULL(strstr(dp_resp, "\"pq~"));

  /* The pages walk every partition: each job once. */
  n = dp_walk(port, seen, 2 * DP_JOBS);
  ASSERT_EQ(DP_JOBS, n);
  for (int i = 0; i < DP_JOBS; i++) {
    int found = 0;
    for (int j = 0; j < n; j++)
      found += strcmp(ids[i], seen[j]) == 0;
    ASSERT_EQ(1, found);
  }

  /* One job of partition 2, then its verbs: each reaches its partition. */
  snprintf(path, sizeof(path), "/api/job?queue=pq&id=%s", in[2]);
  ASSERT_EQ(200, dp_http(port, "GET", path));
  ASSERT_NOT_NULL(strstr(dp_body(), "\"state\":\"pending\""));
  snprintf(path, sizeof(path), "/api/job/kill?queue=pq&id=%s", in[2]);
  ASSERT_EQ(200, dp_http(port, "POST", path));
  ASSERT_NOT_NULL(strstr(dp_body(), "\"was\":\"pending\""));
  ASSERT_EQ(FLEET_JOB_DEAD, dp_state(&t, in[2]));
  snprintf(path, sizeof(path), "/api/job/run?queue=pq&id=%s", in[2]);
  ASSERT_EQ(200, dp_http(port, "POST", path));
  ASSERT_NOT_NULL(strstr(dp_body(), "\"was\":\"dead\""));
  ASSERT_EQ(FLEET_JOB_PENDING, dp_state(&t, in[2]));
  snprintf(path, sizeof(path), "/api/job/delete?queue=pq&id=%s", in[2]);
  ASSERT_EQ(200, dp_http(port, "POST", path));
  ASSERT_EQ(-1, dp_state(&t, in[2]));
  ASSERT_EQ(404, dp_http(port, "POST", path));
  snprintf(path, sizeof(path), "/api/cancel?queue=pq&id=%s", in[3]);
  ASSERT_EQ(200, dp_http(port, "POST", path));
  ASSERT_EQ(-1, dp_state(&t, in[3]));
  /* Retry of every dead job: those of partitions 1 and 0. */
  snprintf(path, sizeof(path), "/api/job/kill?queue=pq&id=%s", in[1]);
  ASSERT_EQ(200, dp_http(port, "POST", path));
  snprintf(path, sizeof(path), "/api/job/kill?queue=pq&id=%s", in[0]);
  ASSERT_EQ(200, dp_http(port, "POST", path));
  ASSERT_EQ(200, dp_http(port, "GET", "/api/queue?queue=pq"));
  ASSERT_EQ(2, dp_num(dp_body(), "dead_kept"));
  ASSERT_EQ(DP_JOBS - 4, dp_num(dp_body(), "pending"));
  ASSERT_EQ(200, dp_http(port, "POST", "/api/retry?queue=pq"));
  ASSERT_EQ(2, dp_num(dp_body(), "retried"));
  ASSERT_EQ(FLEET_JOB_PENDING, dp_state(&t, in[1]));
  ASSERT_EQ(FLEET_JOB_PENDING, dp_state(&t, in[0]));
  /* Purge: the dead records of every partition. */
  snprintf(path, sizeof(path), "/api/job/kill?queue=pq&id=%s", in[1]);
  ASSERT_EQ(200, dp_http(port, "POST", path));
  ASSERT_EQ(200, dp_http(port, "POST", "/api/purge?queue=pq&state=dead"));
  ASSERT_EQ(1, dp_num(dp_body(), "removed"));
  ASSERT_EQ(-1, dp_state(&t, in[1]));

  /* Pause and resume: every partition. */
  ASSERT_EQ(200, dp_http(port, "POST", "/api/pause?queue=pq"));
  ASSERT_NOT_NULL(strstr(dp_body(), "\"paused\":true"));
  for (int p = 1; p < DP_PARTS; p++)
    ASSERT(dp_part_paused(url, p));
  ASSERT_EQ(0, qt_claim(&t, 6, 60000, jobs));
  ASSERT_EQ(200, dp_http(port, "POST", "/api/resume?queue=pq"));
  for (int p = 1; p < DP_PARTS; p++)
    ASSERT(!dp_part_paused(url, p));

  /* 6 jobs completed, from several partitions: the history the dashboard
   * serves is every partition's, as `fleet queue history` says, and
   * partition 0's alone is less. */
  for (got = 0, n = 0; n < 10 && got < 6; n++)
    got += qt_claim(&t, 6 - (size_t)got, 60000, jobs + got);
  ASSERT_EQ(6, got);
  for (int i = 0; i < 6; i++) {
    claims[i] = qt_claim_of(&jobs[i]);
    if (!used[dp_part(jobs[i].id)]++)
      nused++;
  }
  ASSERT(nused >= 2);
  ASSERT_OK(qt_complete(&t, claims, 6, res));
  ASSERT_EQ(200, dp_http(port, "GET", "/api/history?queue=pq&res=minute"));
  processed = dp_sum(dp_body(), "processed");
  ASSERT(processed >= 6);
  cli_run_ok(&r, url, "qt",
             ARGS("queue", "history", "pq", "--minutes", "30", "--json"));
  ASSERT_EQ(processed, dp_sum(r.out, "processed"));
  /* Partition 0 alone (a plain handle of "pq"), and the others through
   * the dashboard (their queues have no count of their own). */
  qt_open(&p0, url, "pq", NULL);
  memset(&h, 0, sizeof(h));
  ASSERT_OK(
      fleet_queue_history(&p0.q, FLEET_HIST_MINUTE, 0, 0, dp_on_history, &h));
  ASSERT(fleet_test_run_until(&p0.c.loop, fleet_test_flag_set, &h.done,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(h.status);
  qt_close(&p0);
  ASSERT((long long)h.processed < processed);
  for (int p = 1; p < DP_PARTS; p++) {
    snprintf(path, sizeof(path), "/api/history?queue=pq~%d", p);
    ASSERT_EQ(200, dp_http(port, "GET", path));
    h.processed += (uint64_t)dp_sum(dp_body(), "processed");
  }
  ASSERT_EQ(processed, (long long)h.processed);

  /* The exporter: one queue, its partitions added up. */
  ASSERT_EQ(200, dp_http(port, "GET", "/metrics"));
  ASSERT_NOT_NULL(strstr(
      dp_body(), "fleet_queue_jobs{name=\"pq\",state=\"pending\"} 31\n"));
  ASSERT_NOT_NULL(strstr(dp_body(), "fleet_queue_completed_total{name=\"pq\"} "
                                    "6\n"));
  ASSERT_NULL(strstr(dp_body(), "name=\"pq~"));
  cli_run_ok(&r, url, "qt", ARGS("metrics", "--once"));
  ASSERT_NOT_NULL(
      strstr(r.out, "fleet_queue_jobs{name=\"pq\",state=\"pending\"} 31\n"));
  ASSERT_NULL(strstr(r.out, "name=\"pq~"));

  cli_stop_server(pid, "dash-parts");
  qt_close(&t);
  fleet_test_redis_stop(redis);
  return 0;
}

/* The page on a partitioned queue, in a real headless Chromium: the
 * queue is one row, and its dead jobs, all in partition 2, are shown
 * although the first page (partition 0's) is empty: the page passes over
 * it to the next cursor. The job pane of a job of partition 2 shows
 * it. */
TEST_IMPL(dash_chromium_parts) {
  const char *chromium = cli_chromium_path();
  char ids[8][FLEET_JOB_ID_MAX + 1], frag[512], want[512];
  const char *url, *dead = NULL;
  static cli_run_t r;
  fleet_job_spec_t s[8];
  fleet_queue_options_t o;
  fleet_test_redis_t *redis;
  int st[8], port;
  pid_t pid;
  qt_t t;

  cli_required();
  if (chromium == NULL)
    fleet_test_skip("chromium is not installed (apt-get install chromium)");
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  cli_run_ok(&r, url, "qt", ARGS("queue", "create", "pq", "--partitions", "4"));
  fleet_queue_options_init(&o);
  o.partitions = DP_PARTS;
  qt_open(&t, url, "pq", &o);
  for (int i = 0; i < 8; i++)
    fleet_job_spec_init(&s[i], "t", "p", 1);
  ASSERT_OK(qt_enqueue(&t, s, 8, st, ids));
  qt_close(&t);
  for (int i = 0; i < 8 && dead == NULL; i++)
    if (dp_part(ids[i]) == 2)
      dead = ids[i];
  ASSERT_NOT_NULL(dead);
  cli_run_ok(&r, url, "qt", ARGS("queue", "kill", "pq", dead));
  port = cli_spawn_server(
      ARGS("--url", url, "--prefix", "qt", "dash", "--listen", "127.0.0.1:0"),
      "dash-cparts", "fleet dash:", &pid);

  /* The dead jobs: the empty first page is passed over. */
  snprintf(frag, sizeof(frag), "http://127.0.0.1:%d/#queue=pq&state=dead",
           port);
  cli_chromium_run(chromium, frag, "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  snprintf(want, sizeof(want), "<tr data-job=\"%.256s\"", dead);
  ASSERT_NOT_NULL(strstr(r.out, want));
  ASSERT_NOT_NULL(strstr(r.out, "1 of 1 dead job(s) (from cursor 2)"));
  ASSERT_NULL(strstr(r.out, "pq~"));
  /* Its pane. */
  snprintf(frag, sizeof(frag),
           "http://127.0.0.1:%d/#queue=pq&state=dead&job=%.256s", port, dead);
  cli_chromium_run(chromium, frag, "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  snprintf(want, sizeof(want), "<span id=\"job-id\">%.256s</span>", dead);
  ASSERT_NOT_NULL(strstr(r.out, want));
  ASSERT_NOT_NULL(strstr(r.out, "<dd data-state=\"dead\">dead</dd>"));

  cli_stop_server(pid, "dash-cparts");
  fleet_test_redis_stop(redis);
  return 0;
}
