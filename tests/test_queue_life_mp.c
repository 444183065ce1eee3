/* test_queue_life_mp.c -- events across processes, on Redis, with the
 * real programs: a subscriber process (`fleet queue events --json`) records
 * every event it hears with the server's time, a worker process
 * (`fleet-demo worker --progress-steps K --result --ledger-times`) records
 * when each job started and when its completion was accepted, and a
 * producer process (`fleet-demo enqueue`) adds the jobs. From the records:
 * each job's K progress steps came in order, then its completion with the
 * result "done:<id>", within the time the worker held it. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"

#ifndef FLEET_DEMO_PATH
#define FLEET_DEMO_PATH "/nonexistent"
#endif

/* Jobs, and progress steps per job. */
#define LMP_JOBS 6
#define LMP_STEPS 4

/* What the records say of one job. */
typedef struct {
  char id[32];
  int steps;     /* progress events heard, in order */
  int completed; /* completed events heard */
  uint64_t first_ms, completed_ms;
  uint64_t start_ms, end_ms; /* the worker's ledger */
} lmp_job_t;

static lmp_job_t *lmp_find(lmp_job_t *jobs, int *n, const char *id) {
  for (int i = 0; i < *n; i++)
    if (strcmp(jobs[i].id, id) == 0)
      return &jobs[i];
  ASSERT_LT(*n, LMP_JOBS);
  ASSERT_LT(strlen(id), sizeof(jobs[0].id));
  memset(&jobs[*n], 0, sizeof(jobs[0]));
  snprintf(jobs[*n].id, sizeof(jobs[0].id), "%s", id);
  return &jobs[(*n)++];
}

/* The string member `key` of a JSON line (no escapes in what we read). */
static void lmp_str(const char *line, const char *key, char *out, size_t cap) {
  char k[32];
  const char *p, *e;

  snprintf(k, sizeof(k), "\"%s\":\"", key);
  p = strstr(line, k);
  ASSERT_NOT_NULL(p);
  p += strlen(k);
  e = strchr(p, '"');
  ASSERT_NOT_NULL(e);
  ASSERT_LT((size_t)(e - p), cap);
  memcpy(out, p, (size_t)(e - p));
  out[e - p] = '\0';
}

static uint64_t lmp_num(const char *line, const char *key) {
  char k[32];
  const char *p;

  snprintf(k, sizeof(k), "\"%s\":", key);
  p = strstr(line, k);
  ASSERT_NOT_NULL(p);
  return strtoull(p + strlen(k), NULL, 10);
}

static pid_t lmp_demo(const char *const *argv, const char *tag) {
  return cli_spawn_prog(FLEET_DEMO_PATH, argv, NULL, NULL, tag);
}

TEST_IMPL(queue_life_mp_events) {
  fleet_test_redis_t *r;
  char ledger[512], count[16], steps[16], njobs[16], wantd[64];
  char *out, *line, *save, *buf;
  lmp_job_t jobs[LMP_JOBS];
  cli_run_t *run;
  pid_t ev, worker, producer;
  uint64_t last_ms = 0, deadline;
  redisReply *lease;
  int n = 0, fd, lines = 0;
  FILE *f;

  cli_required();
  if (access(FLEET_DEMO_PATH, X_OK) != 0)
    fleet_test_skip("examples are not built");
  r = fleet_test_redis_start_or_skip(NULL);
  run = calloc(1, sizeof(*run));
  ASSERT_NOT_NULL(run);
  snprintf(ledger, sizeof(ledger), "%s/ledger-times", fleet_test_redis_dir(r));
  snprintf(count, sizeof(count), "%d", LMP_JOBS * (LMP_STEPS + 1));
  snprintf(steps, sizeof(steps), "%d", LMP_STEPS);
  snprintf(njobs, sizeof(njobs), "%d", LMP_JOBS);

  /* The subscriber first; it holds the lease once it listens. */
  {
    const char *args[] = {"--url",    fleet_test_redis_url(r),
                          "--prefix", "lmp",
                          "--json",   "queue",
                          "events",   "ev",
                          "--count",  count,
                          NULL};
    ev = cli_spawn(args, "lmp-events");
  }
  deadline = uv_hrtime() / 1000000 + fleet_test_ms(FLEET_TEST_WAIT_MS);
  for (;;) {
    lease = fleet_test_redis_cmd(r, "HGET {lmp:ev}:limits events");
    if (lease->type == REDIS_REPLY_STRING) {
      freeReplyObject(lease);
      break;
    }
    freeReplyObject(lease);
    ASSERT(uv_hrtime() / 1000000 < deadline);
    usleep(10000);
  }
  {
    const char *args[] = {FLEET_DEMO_PATH,
                          "--url",
                          fleet_test_redis_url(r),
                          "--prefix",
                          "lmp",
                          "worker",
                          "--queue",
                          "ev",
                          "--concurrency",
                          "2",
                          "--work-ms",
                          "40",
                          "--progress-steps",
                          steps,
                          "--result",
                          "--ledger-times",
                          ledger,
                          NULL};
    worker = lmp_demo(args, "lmp-worker");
  }
  {
    const char *args[] = {FLEET_DEMO_PATH, "--url", fleet_test_redis_url(r),
                          "--prefix",      "lmp",   "enqueue",
                          "--queue",       "ev",    "--count",
                          njobs,           NULL};
    producer = lmp_demo(args, "lmp-producer");
  }
  cli_reap_within(producer, "lmp-producer", run, 30000);
  ASSERT_EQ(0, run->status);
  /* The subscriber ends by itself after the events of every job. */
  cli_reap_within(ev, "lmp-events", run, 30000);
  ASSERT_EQ(0, run->status);
  out = strdup(run->out);
  ASSERT_NOT_NULL(out);
  ASSERT_EQ(0, kill(worker, SIGTERM));
  cli_reap_within(worker, "lmp-worker", run, 30000);
  ASSERT_EQ(0, run->status);

  /* The subscriber's record: per job, the steps in order, then the
   * completion with its result; the server's times never go back. */
  for (line = strtok_r(out, "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save)) {
    char type[32], id[32], data[64];
    uint64_t t = lmp_num(line, "time_ms"), v = lmp_num(line, "value");
    lmp_job_t *j;

    lmp_str(line, "type", type, sizeof(type));
    lmp_str(line, "id", id, sizeof(id));
    lmp_str(line, "data", data, sizeof(data));
    j = lmp_find(jobs, &n, id);
    ASSERT(t >= last_ms);
    last_ms = t;
    lines++;
    ASSERT_EQ(0, j->completed);
    if (strcmp(type, "progress") == 0) {
      j->steps++;
      ASSERT_UEQ(j->steps * 100 / LMP_STEPS, v);
      snprintf(wantd, sizeof(wantd), "%d/%d", j->steps, LMP_STEPS);
      ASSERT_STR_EQ(wantd, data);
      if (j->steps == 1)
        j->first_ms = t;
    } else {
      ASSERT_STR_EQ("completed", type);
      ASSERT_EQ(LMP_STEPS, j->steps);
      ASSERT_UEQ(1, v);
      snprintf(wantd, sizeof(wantd), "done:%s", id);
      ASSERT_STR_EQ(wantd, data);
      j->completed = 1;
      j->completed_ms = t;
    }
  }
  ASSERT_EQ(LMP_JOBS * (LMP_STEPS + 1), lines);
  ASSERT_EQ(LMP_JOBS, n);

  /* The worker's record: every job, and its events inside the time the
   * worker held it (one machine's clock: the server's TIME and the
   * worker's wall clock). */
  f = fopen(ledger, "r");
  ASSERT_NOT_NULL(f);
  buf = calloc(1, 4096);
  ASSERT_NOT_NULL(buf);
  fd = 0;
  while (fgets(buf, 4096, f) != NULL) {
    char id[32], group[16];
    unsigned long long s, e;
    lmp_job_t *j;

    ASSERT_EQ(4, sscanf(buf, "%31s %15s %llu %llu", id, group, &s, &e));
    j = lmp_find(jobs, &n, id);
    ASSERT_EQ(1, j->completed);
    ASSERT(j->first_ms >= s);
    ASSERT(j->completed_ms <= e);
    fd++;
  }
  fclose(f);
  ASSERT_EQ(LMP_JOBS, fd);
  ASSERT_EQ(LMP_JOBS, n);
  free(buf);
  free(out);
  free(run);
  fleet_test_redis_free(r);
  return 0;
}
