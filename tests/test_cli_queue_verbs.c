/* test_cli_queue_verbs.c -- one job's verbs and removing a queue in the
 * tools: `fleet queue delete|run|kill Q ID` and `fleet queue remove Q
 * [--force]` (one line each, exit 1 for an unknown job or queue), the
 * dashboard's POST /api/job/delete|run|kill (their answers, and the
 * guards of a change: read-only mode, the X-Fleet-Dash header, Origin);
 * and, across processes, `fleet queue kill|delete` racing a `fleet-demo
 * worker` that claims the same jobs: from the worker's ledger and the
 * CLI's exit codes, every job ended exactly one way. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

#ifndef FLEET_DEMO_PATH
#define FLEET_DEMO_PATH "/nonexistent"
#endif

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

/* Runs `fleet --url url --prefix qt args...` to its end. */
static void cv_run(cli_run_t *r, const char *url, const char *const *args) {
  const char *argv[32];
  size_t n = 0, i;

  argv[n++] = "--url";
  argv[n++] = url;
  argv[n++] = "--prefix";
  argv[n++] = "qt";
  for (i = 0; args[i] != NULL && n < 31; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  cli_run(r, argv);
}

/* A dashboard of `url` (prefix "qt") on a free port, with `extra` (an
 * option or NULL): its pid, and its port in `*port`. */
static pid_t cv_dash(const char *url, const char *extra, int *port) {
  char out[1024];
  const char *p;
  uint64_t t0 = uv_hrtime();
  const char *args[] = {"--url", url,        "--prefix",    "qt",
                        "dash",  "--listen", "127.0.0.1:0", "--read-timeout-ms",
                        "1000",  extra,      NULL};
  pid_t pid = cli_spawn(args, "cv-dash");

  do {
    usleep(20000);
    cli_read_out("cv-dash", out, sizeof(out));
  } while (strchr(out, '\n') == NULL &&
           uv_hrtime() - t0 < fleet_test_ms(5000) * 1000000ULL);
  p = strstr(out, "fleet dash: http://127.0.0.1:");
  ASSERT_NOT_NULL(p);
  *port = atoi(p + strlen("fleet dash: http://127.0.0.1:"));
  ASSERT(*port > 0);
  return pid;
}

static void cv_dash_stop(pid_t pid) {
  cli_run_t *r = calloc(1, sizeof(*r));

  ASSERT_NOT_NULL(r);
  ASSERT_OK(kill(pid, SIGINT));
  cli_reap(pid, "cv-dash", r);
  ASSERT_EQ(0, r->status);
  free(r);
}

/* The body of an HTTP response. */
static const char *cv_body(const char *resp) {
  const char *b = strstr(resp, "\r\n\r\n");

  ASSERT_NOT_NULL(b);
  return b + 4;
}

TEST_IMPL(cli_queue_verbs) {
  static const char dash_h[] = "X-Fleet-Dash: 1\r\n";
  fleet_test_redis_t *redis;
  static char resp[65536];
  static cli_run_t r;
  fleet_job_info_t info;
  char ids[4][FLEET_JOB_ID_MAX + 1], path[512], err[64];
  fleet_job_spec_t s;
  qt_job_t job;
  const char *url, *other;
  int port, st;
  pid_t dash;
  qt_t t;

  cli_required();
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  qt_open(&t, url, "cv", NULL);
  qt_add(&t, "x", "a", ids[0]);
  qt_add(&t, "x", "b", ids[1]);
  fleet_job_spec_init(&s, "x", "later", 5);
  s.delay_ms = 3600000;
  ASSERT_OK(qt_enqueue(&t, &s, 1, &st, &ids[2]));

  /* delete, kill, run: one line each. */
  cv_run(&r, url, ARGS("queue", "delete", "cv", ids[0]));
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(1, cli_lines(r.out));
  ASSERT_NOT_NULL(strstr(r.out, "deleted job"));
  ASSERT_NOT_NULL(strstr(r.out, "(it was pending)"));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, ids[0], &info, NULL, 0, NULL, 0));
  cv_run(&r, url, ARGS("queue", "kill", "cv", ids[1]));
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(1, cli_lines(r.out));
  ASSERT_NOT_NULL(strstr(r.out, "killed job"));
  ASSERT_OK(qt_get(&t, ids[1], &info, NULL, 0, err, sizeof(err)));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_STR_EQ("killed", err);
  cv_run(&r, url, ARGS("queue", "run", "cv", ids[2]));
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "runs now (it was delayed)"));
  cv_run(&r, url, ARGS("queue", "run", "cv", ids[2]));
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "pending already"));
  cv_run(&r, url, ARGS("--json", "queue", "run", "cv", ids[1]));
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "\"was\":\"dead\""));

  /* Unknown job: exit 1, one line on stderr; bad usage: exit 2. */
  cv_run(&r, url, ARGS("queue", "delete", "cv", "nope"));
  ASSERT_EQ(1, r.status);
  ASSERT_STR_EQ("", r.out);
  ASSERT_NOT_NULL(strstr(r.err, "no job nope in queue cv"));
  ASSERT_EQ(1, cli_lines(r.err));
  cv_run(&r, url, ARGS("queue", "kill", "cv"));
  ASSERT_EQ(2, r.status);
  /* Running: refused, with what to do instead. */
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, &job));
  cv_run(&r, url, ARGS("queue", "kill", "cv", job.id));
  ASSERT_EQ(1, r.status);
  ASSERT_NOT_NULL(strstr(r.err, "fleet queue cancel"));

  /* The dashboard's routes, on the other pending job. */
  other = strcmp(job.id, ids[1]) == 0 ? ids[2] : ids[1];
  dash = cv_dash(url, NULL, &port);
  snprintf(path, sizeof(path), "/api/job/kill?queue=cv&id=%s", job.id);
  ASSERT_EQ(409, cli_http(port, "POST", path, dash_h, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(cv_body(resp), "\"error\":\"job is running\""));
  ASSERT_EQ(404, cli_http(port, "POST", "/api/job/delete?queue=cv&id=nope",
                          dash_h, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(cv_body(resp), "{\"error\":\"no such job\""));
  snprintf(path, sizeof(path), "/api/job/kill?queue=cv&id=%s", other);
  ASSERT_EQ(200, cli_http(port, "POST", path, dash_h, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(cv_body(resp), "{\"ok\":true,"));
  ASSERT_NOT_NULL(strstr(cv_body(resp), "\"was\":\"pending\""));
  snprintf(path, sizeof(path), "/api/job/run?queue=cv&id=%s", other);
  ASSERT_EQ(200, cli_http(port, "POST", path, dash_h, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(cv_body(resp), "\"was\":\"dead\""));
  /* A change needs the header, a POST, the dashboard's origin and ?id. */
  snprintf(path, sizeof(path), "/api/job/delete?queue=cv&id=%s", other);
  ASSERT_EQ(403, cli_http(port, "POST", path, NULL, resp, sizeof(resp)));
  ASSERT_EQ(405, cli_http(port, "GET", path, dash_h, resp, sizeof(resp)));
  ASSERT_EQ(403, cli_http(port, "POST", path,
                          "X-Fleet-Dash: 1\r\nOrigin: http://evil.example\r\n",
                          resp, sizeof(resp)));
  ASSERT_EQ(400, cli_http(port, "POST", "/api/job/delete?queue=cv", dash_h,
                          resp, sizeof(resp)));
  ASSERT_EQ(FLEET_JOB_PENDING,
            (qt_get(&t, other, &info, NULL, 0, NULL, 0), info.state));
  ASSERT_EQ(200, cli_http(port, "POST", path, dash_h, resp, sizeof(resp)));
  ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, other, &info, NULL, 0, NULL, 0));
  cv_dash_stop(dash);
  /* Read-only: refused, nothing changed. */
  dash = cv_dash(url, "--read-only", &port);
  snprintf(path, sizeof(path), "/api/job/kill?queue=cv&id=%s", job.id);
  ASSERT_EQ(403, cli_http(port, "POST", path, dash_h, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(cv_body(resp), "read-only"));
  cv_dash_stop(dash);

  /* remove: refused with jobs left, then forced; gone from queue ls. */
  cv_run(&r, url, ARGS("queue", "remove", "cv"));
  ASSERT_EQ(1, r.status);
  ASSERT_NOT_NULL(strstr(r.err, "--force"));
  cv_run(&r, url, ARGS("queue", "ls"));
  ASSERT_NOT_NULL(strstr(r.out, "cv "));
  cv_run(&r, url, ARGS("queue", "remove", "cv", "--force"));
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(1, cli_lines(r.out));
  ASSERT_NOT_NULL(strstr(r.out, "removed queue cv:"));
  ASSERT_NOT_NULL(strstr(r.out, "1 unfinished job(s)"));
  cv_run(&r, url, ARGS("queue", "ls"));
  ASSERT_NULL(strstr(r.out, "cv "));
  cv_run(&r, url, ARGS("queue", "remove", "cv"));
  ASSERT_EQ(1, r.status);
  ASSERT_NOT_NULL(strstr(r.err, "no queue cv"));
  qt_close(&t);
  fleet_test_redis_free(redis);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Across processes                                                         */

/* Jobs, and CLI processes running at once. */
#define VMP_JOBS 120
#define VMP_PAR 6

typedef struct {
  char id[FLEET_JOB_ID_MAX + 1];
  int worker_done;     /* lines in the worker's ledger */
  uint64_t worker_end; /* when its completion was accepted (unix ms) */
  int cli_ok;          /* the CLI killed or deleted it */
  int cli_status;      /* the CLI's exit code */
  char cli_err[160];   /* its stderr */
  uint64_t cli_reaped; /* when the CLI had ended (unix ms) */
  int killed;          /* the verb was kill (else delete) */
  int was_completed;   /* the CLI deleted it once completed */
} vmp_job_t;

static uint64_t vmp_now_ms(void) {
  uv_timeval64_t tv;

  ASSERT_OK(uv_gettimeofday(&tv));
  return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

TEST_IMPL(queue_verbs_mp) {
  static vmp_job_t jobs[VMP_JOBS];
  static cli_run_t run;
  fleet_test_redis_t *redis;
  fleet_job_spec_t specs[VMP_JOBS];
  int st[VMP_JOBS], i, next = 0, running = 0, races = 0, deleted_done = 0;
  char ledger[512], line[256], tags[VMP_PAR][16];
  char(*ids)[FLEET_JOB_ID_MAX + 1];
  pid_t pids[VMP_PAR], worker;
  int slot_job[VMP_PAR];
  fleet_job_info_t info;
  uint64_t deadline;
  const char *url;
  FILE *f;
  qt_t t;

  cli_required();
  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("examples are not built");
  redis = fleet_test_redis_start_or_skip(NULL);
  url = fleet_test_redis_url(redis);
  snprintf(ledger, sizeof(ledger), "%s/vmp-ledger",
           fleet_test_redis_dir(redis));
  ids = calloc(VMP_JOBS, sizeof(*ids));
  ASSERT_NOT_NULL(ids);
  qt_open(&t, url, "vmp", NULL);
  for (i = 0; i < VMP_JOBS; i++)
    fleet_job_spec_init(&specs[i], "w", "x", 1);
  ASSERT_OK(qt_enqueue(&t, specs, VMP_JOBS, st, ids));
  for (i = 0; i < VMP_JOBS; i++) {
    ASSERT_OK(st[i]);
    snprintf(jobs[i].id, sizeof(jobs[i].id), "%s", ids[i]);
    jobs[i].killed = i % 2 == 0;
  }
  /* (This process runs no loop while the others run: its client goes.) */
  qt_close(&t);

  /* The worker claims from the head while the CLI kills or deletes the
   * same jobs from the tail, VMP_PAR processes at a time: they meet. */
  {
    const char *args[] = {FLEET_DEMO_PATH,
                          "--url",
                          url,
                          "--prefix",
                          "qt",
                          "worker",
                          "--queue",
                          "vmp",
                          "--concurrency",
                          "2",
                          "--work-ms",
                          "15",
                          "--ledger-times",
                          ledger,
                          NULL};
    worker = cli_spawn_prog(FLEET_DEMO_PATH, args, NULL, NULL, "vmp-worker");
  }
  for (i = 0; i < VMP_PAR; i++) {
    snprintf(tags[i], sizeof(tags[i]), "vmp-k%d", i);
    slot_job[i] = -1;
  }
  deadline = vmp_now_ms() + fleet_test_ms(60000);
  while (next < VMP_JOBS || running > 0) {
    ASSERT(vmp_now_ms() < deadline);
    for (i = 0; i < VMP_PAR; i++) {
      if (slot_job[i] >= 0) {
        vmp_job_t *j = &jobs[slot_job[i]];

        cli_reap(pids[i], tags[i], &run);
        j->cli_reaped = vmp_now_ms();
        j->cli_status = run.status;
        j->cli_ok = run.status == 0;
        j->was_completed = strstr(run.out, "(it was completed)") != NULL;
        snprintf(j->cli_err, sizeof(j->cli_err), "%.150s", run.err);
        slot_job[i] = -1;
        running--;
      }
      if (next < VMP_JOBS) {
        const char *args[] = {
            "--url",    url,
            "--prefix", "qt",
            "queue",    jobs[VMP_JOBS - 1 - next].killed ? "kill" : "delete",
            "vmp",      jobs[VMP_JOBS - 1 - next].id,
            NULL};
        pids[i] = cli_spawn(args, tags[i]);
        slot_job[i] = VMP_JOBS - 1 - next++;
        running++;
      }
    }
  }

  /* Everything ended: nothing pending or running. */
  qt_open(&t, url, "vmp", NULL);
  for (;;) {
    ASSERT_OK(qt_counts(&t));
    if (t.counts.pending == 0 && t.counts.running == 0)
      break;
    ASSERT(vmp_now_ms() < deadline);
    usleep(20000);
  }
  ASSERT_OK(kill(worker, SIGTERM));
  cli_reap_within(worker, "vmp-worker", &run, 30000);
  ASSERT_EQ(0, run.status);

  /* The worker's ledger: "<id> <group> <start_ms> <end_ms>". */
  f = fopen(ledger, "r");
  ASSERT_NOT_NULL(f);
  while (fgets(line, sizeof(line), f) != NULL) {
    char id[64], g[64];
    unsigned long long s0, e0;

    ASSERT_EQ(4, sscanf(line, "%63s %63s %llu %llu", id, g, &s0, &e0));
    for (i = 0; i < VMP_JOBS; i++)
      if (strcmp(jobs[i].id, id) == 0)
        break;
    ASSERT_LT(i, VMP_JOBS);
    jobs[i].worker_done++;
    jobs[i].worker_end = e0;
  }
  fclose(f);

  /* Each job ended one way: done once by the worker, or killed or deleted
   * by the CLI before it ran, never both, never neither; or done once,
   * then deleted as completed (the worker keeps completed jobs). The
   * CLI's refusals are of a job the worker held (running) or had
   * finished (completed, kept or gone). (The times cannot order a
   * refusal against the worker's record: the worker writes its line when
   * the reply of its completion comes, which may be after the CLI
   * ended.) */
  for (i = 0; i < VMP_JOBS; i++) {
    vmp_job_t *j = &jobs[i];
    int ways = j->worker_done + (j->cli_ok && !j->was_completed);

    if (ways != 1 || (j->was_completed && j->worker_done != 1))
      fprintf(stderr,
              "job %s: done %d times (last at %llu), cli exit %d at %llu: "
              "%s\n",
              j->id, j->worker_done, (unsigned long long)j->worker_end,
              j->cli_status, (unsigned long long)j->cli_reaped, j->cli_err);
    ASSERT_EQ(1, ways);
    if (j->was_completed) {
      ASSERT(!j->killed);
      ASSERT_EQ(1, j->worker_done);
      deleted_done++;
    } else if (j->cli_ok) {
      if (j->killed) {
        ASSERT_OK(qt_get(&t, j->id, &info, NULL, 0, NULL, 0));
        ASSERT_EQ(FLEET_JOB_DEAD, info.state);
      } else {
        ASSERT_ERR(FLEET_ENOTFOUND, qt_get(&t, j->id, &info, NULL, 0, NULL, 0));
      }
    } else {
      if (j->cli_status != 1 || (strstr(j->cli_err, "is running") == NULL &&
                                 strstr(j->cli_err, "no job") == NULL &&
                                 strstr(j->cli_err, "has finished") == NULL))
        fprintf(stderr, "job %s: cli exit %d: %s\n", j->id, j->cli_status,
                j->cli_err);
      ASSERT_EQ(1, j->cli_status);
      ASSERT(strstr(j->cli_err, "is running") != NULL ||
             strstr(j->cli_err, "no job") != NULL ||
             strstr(j->cli_err, "has finished") != NULL);
      races++;
    }
  }
  fprintf(stderr,
          "# %d of %d jobs: the CLI refused (the worker's); %d deleted once "
          "completed\n",
          races, VMP_JOBS, deleted_done);
  free(ids);
  qt_close(&t);
  fleet_test_redis_free(redis);
  return 0;
}
