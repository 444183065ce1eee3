/* test_registry.c -- the process registry (docs/registry.md) on both
 * backends: a queue worker, a pool node, a cron scheduler and a warm-pool
 * node register once started, a worker's entry carries the ids of the
 * jobs it holds, a clean close removes an entry at once, an entry that
 * stops beating (its process died) expires after its TTL, and an entry
 * fleet cannot read is left out of the listing. */
#include <string.h>
#include <unistd.h>

#include "core/client.h"
#include "redis_fixture.h"
#include "test_lock_env.h"

typedef struct {
  int done;
  int status;
  size_t n;
  char kind[8][16], id[8][128], name[8][64], host[8][64], jobs[8][4][16];
  int64_t pid[8], started[8], seen[8], expires[8];
  uint32_t held[8];
  size_t njobs[8];
} reg_answer_t;

static void on_list(fleet_client_t *client, int status,
                    const fleet_worker_info_t *ws, size_t n, void *arg) {
  reg_answer_t *a = arg;
  size_t i, k;

  (void)client;
  a->status = status;
  a->n = n;
  for (i = 0; i < n && i < 8; i++) {
    snprintf(a->kind[i], sizeof(a->kind[i]), "%s", ws[i].kind);
    snprintf(a->id[i], sizeof(a->id[i]), "%s", ws[i].id);
    snprintf(a->name[i], sizeof(a->name[i]), "%s", ws[i].name);
    snprintf(a->host[i], sizeof(a->host[i]), "%s", ws[i].host);
    a->pid[i] = ws[i].pid;
    a->started[i] = ws[i].started_ms;
    a->seen[i] = ws[i].seen_ms;
    a->expires[i] = ws[i].expires_ms;
    a->held[i] = ws[i].jobs_held;
    a->njobs[i] = ws[i].njobs;
    for (k = 0; k < ws[i].njobs && k < 4; k++)
      snprintf(a->jobs[i][k], sizeof(a->jobs[i][k]), "%s", ws[i].jobs[k]);
  }
  a->done++;
}

static void never_list(fleet_client_t *client, int status,
                       const fleet_worker_info_t *ws, size_t n, void *arg) {
  (void)client, (void)status, (void)ws, (void)n, (void)arg;
  ASSERT(0);
}

/* The listing as client c2 (another client of the same store) reads it. */
static reg_answer_t list(lock_env_t *e) {
  reg_answer_t a;

  memset(&a, 0, sizeof(a));
  ASSERT_OK(fleet_workers_list(&e->c2, on_list, &a));
  ASSERT(lock_env_wait(e, &a.done, 1, FLEET_TEST_WAIT_MS));
  ASSERT_OK(a.status);
  return a;
}

/* The index of the entry of `kind`, or -1. */
static int find(const reg_answer_t *a, const char *kind) {
  size_t i;

  for (i = 0; i < a->n; i++)
    if (strcmp(a->kind[i], kind) == 0)
      return (int)i;
  return -1;
}

/* Lists until `want` entries are there (or the wait ends). */
static reg_answer_t list_until(lock_env_t *e, size_t want) {
  reg_answer_t a;
  int i;

  for (i = 0; i < 500; i++) {
    a = list(e);
    if (a.n == want)
      break;
    lock_env_sleep(e, 10);
  }
  return a;
}

/* ------------------------------------------------------------------------ */
/* The handles                                                              */

static fleet_job_t *held_jobs[4];
static int nheld;

static void hold_handler(fleet_worker_t *w, fleet_job_t *job) {
  (void)w;
  held_jobs[nheld++] = job;
}

static void pool_start(fleet_pool_worker_t *w, fleet_pool_job_t *job) {
  (void)w;
  ASSERT_OK(fleet_pool_job_started(job, 0));
}

static void pool_stop(fleet_pool_worker_t *w, fleet_pool_job_t *job,
                      fleet_pool_stop_reason_t reason) {
  (void)w, (void)job, (void)reason;
}

static const fleet_pool_handler_t pool_handler = {.start_cb = pool_start,
                                                  .stop_cb = pool_stop};

static void on_fire(fleet_cron_scheduler_t *s, fleet_cron_fire_t *fire) {
  (void)s, (void)fire;
}

static void wp_create(fleet_warmpool_t *p, fleet_warmpool_work_t *w) {
  (void)p;
  fleet_warmpool_work_done(w, 0, NULL);
}

static void wp_destroy(fleet_warmpool_t *p, fleet_warmpool_work_t *w) {
  (void)p;
  fleet_warmpool_work_done(w, 0, NULL);
}

static void on_started(fleet_handle_t *h, int status, void *arg) {
  (void)h;
  ASSERT_OK(status);
  (*(int *)arg)++;
}

static void on_closed(fleet_handle_t *h) {
  (*(int *)h->data)++;
}

static void on_enqueued(fleet_queue_t *q, int status,
                        const fleet_enqueue_result_t *results, size_t n,
                        void *arg) {
  (void)q, (void)results, (void)n;
  ASSERT_OK(status);
  (*(int *)arg)++;
}

static void on_beat(void *arg, int status, const fleet__reply_t *r) {
  (void)r;
  ASSERT_OK(status);
  (*(int *)arg)++;
}

/* Writes an entry as a beat of a process would, with `ttl` and `details`,
 * and never beats it again: a process that died. */
static void beat_once(lock_env_t *e, const char *member, size_t mlen,
                      const char *ttl, const char *details, size_t dlen) {
  char tag[160];
  fleet_bytes_t key = {tag, (size_t)snprintf(tag, sizeof(tag), "{%s:}",
                                             fleet_client_prefix(&e->c1))};
  fleet_bytes_t args[4] = {
      {member, mlen}, {ttl, strlen(ttl)}, {"", 0}, {details, dlen}};
  int beaten = 0;

  ASSERT_OK(fleet__backend_call(fleet__client_backend(&e->c1),
                                FLEET__OP_REGISTRY_BEAT, &key, 1, args, 4,
                                on_beat, &beaten));
  ASSERT(lock_env_wait(e, &beaten, 1, FLEET_TEST_WAIT_MS));
}

CONFORMANCE_IMPL(workers_registry) {
  static const char dead_member[] = "queue\0gone\0ghost";
  static const char dead_info[] = "queue\0ghost\0gone\0elsewhere\0"
                                  "777\0"
                                  "0";
  fleet_worker_options_t wo;
  fleet_pool_node_options_t po;
  fleet_cron_scheduler_options_t co;
  fleet_warmpool_options_t wpo;
  fleet_warmpool_handlers_t wph = {.create_cb = wp_create,
                                   .destroy_cb = wp_destroy};
  fleet_worker_t w;
  fleet_queue_t q;
  fleet_pool_node_t node;
  fleet_pool_worker_t pw;
  fleet_cron_scheduler_t sched;
  fleet_warmpool_t wp;
  fleet_job_spec_t specs[2];
  reg_answer_t a;
  lock_env_t e;
  int started = 0, enqueued = 0, closed = 0, i, k;
  char host[256];
  size_t hlen = sizeof(host);

  lock_env_init(&e, b->url);
  nheld = 0;
  ASSERT_OK(uv_os_gethostname(host, &hlen));

  /* Bad input is refused and nothing is sent. */
  ASSERT_ERR(FLEET_EINVAL, fleet_workers_list(NULL, never_list, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_workers_list(&e.c1, NULL, NULL));
  ASSERT_NULL(fleet_worker_id(NULL));

  /* Nothing runs yet. */
  a = list(&e);
  ASSERT_EQ(0, a.n);

  /* A worker registers when it starts, not at init. */
  fleet_worker_options_init(&wo);
  wo.claim_ttl_ms = 5000;
  wo.heartbeat_ms = 1000;
  wo.concurrency = 4;
  w.data = &closed;
  ASSERT_OK(fleet_worker_init(&e.c1, &w, "rq", &wo));
  ASSERT_NOT_NULL(fleet_worker_id(&w));
  ASSERT(strstr(fleet_worker_id(&w), "-") != NULL);
  lock_env_sleep(&e, 50);
  a = list(&e);
  ASSERT_EQ(0, a.n);
  ASSERT_OK(fleet_worker_start(&w, hold_handler));

  /* A pool node with a worker, a cron scheduler, a warm-pool node. */
  fleet_pool_node_options_init(&po);
  po.worker_ttl_ms = 6000;
  node.data = &closed;
  ASSERT_OK(fleet_pool_node_init(&e.c1, &node, "pp", "pnode", &po));
  pw.data = NULL;
  ASSERT_OK(fleet_pool_worker_add(&node, &pw, &pool_handler));
  fleet_cron_scheduler_options_init(&co);
  sched.data = &closed;
  ASSERT_OK(fleet_cron_scheduler_init(&e.c1, &sched, "ns1", "cnode", &co));
  ASSERT_OK(fleet_cron_scheduler_start(&sched, on_fire));
  fleet_warmpool_options_init(&wpo);
  wpo.target_idle = 0;
  wp.data = &closed;
  ASSERT_OK(fleet_warmpool_init(&e.c1, &wp, "wpool", "wowner", &wpo));
  ASSERT_OK(
      fleet_warmpool_start(&wp, &wph, (fleet_status_cb)on_started, &started));
  ASSERT(lock_env_wait(&e, &started, 1, FLEET_TEST_WAIT_MS));

  /* Four entries, each with its identity, what it serves and where it
   * runs; sorted by kind. */
  a = list_until(&e, 4);
  ASSERT_EQ(4, a.n);
  ASSERT_STR_EQ("cron", a.kind[0]);
  ASSERT_STR_EQ("pool", a.kind[1]);
  ASSERT_STR_EQ("queue", a.kind[2]);
  ASSERT_STR_EQ("warmpool", a.kind[3]);
  ASSERT_STR_EQ("cnode", a.id[0]);
  ASSERT_STR_EQ("ns1", a.name[0]);
  ASSERT_STR_EQ("pnode", a.id[1]);
  ASSERT_STR_EQ("pp", a.name[1]);
  ASSERT_STR_EQ(fleet_worker_id(&w), a.id[2]);
  ASSERT_STR_EQ("rq", a.name[2]);
  ASSERT_STR_EQ("wowner", a.id[3]);
  ASSERT_STR_EQ("wpool", a.name[3]);
  for (i = 0; i < 4; i++) {
    ASSERT_EQ((int64_t)getpid(), a.pid[i]);
    ASSERT(strncmp(a.host[i], host, sizeof(a.host[i]) - 1) == 0);
    ASSERT_GT(a.started[i], 0);
    ASSERT_LE(a.started[i], a.seen[i]);
    /* The TTL is three beat periods, a period 2 to 5 s. */
    ASSERT_GE(a.expires[i] - a.seen[i], 3 * 2000);
    ASSERT_LE(a.expires[i] - a.seen[i], 3 * 5000);
    ASSERT_EQ(0, a.held[i]);
  }
  /* The worker beats at its heartbeat (1 s), held to 2 s. */
  ASSERT_EQ(6000, a.expires[2] - a.seen[2]);

  /* The worker's entry lists the jobs it holds, by the next beat. */
  q.data = &closed;
  ASSERT_OK(fleet_queue_init(&e.c1, &q, "rq", NULL));
  fleet_job_spec_init(&specs[0], "t", "p", 1);
  fleet_job_spec_init(&specs[1], "t", "p", 1);
  specs[0].id = "job-a";
  specs[1].id = "job-b";
  ASSERT_OK(fleet_queue_enqueue(&q, specs, 2, on_enqueued, &enqueued));
  ASSERT(lock_env_wait(&e, &enqueued, 1, FLEET_TEST_WAIT_MS));
  ASSERT(lock_env_wait(&e, &nheld, 2, FLEET_TEST_WAIT_MS));
  for (k = 0; k < 600; k++) {
    a = list(&e);
    i = find(&a, "queue");
    ASSERT_GE(i, 0);
    if (a.held[i] == 2)
      break;
    lock_env_sleep(&e, 20);
  }
  ASSERT_EQ(2, a.held[i]);
  ASSERT_EQ(2, a.njobs[i]);
  ASSERT((strcmp(a.jobs[i][0], "job-a") == 0 &&
          strcmp(a.jobs[i][1], "job-b") == 0) ||
         (strcmp(a.jobs[i][0], "job-b") == 0 &&
          strcmp(a.jobs[i][1], "job-a") == 0));

  /* A pool node's entry lists the keys of the jobs its workers run. */
  started = 0;
  ASSERT_OK(fleet_pool_dispatch(&node, "key-1", (fleet_bytes_t){"x", 1},
                                (fleet_status_cb)on_started, &started));
  ASSERT(lock_env_wait(&e, &started, 1, FLEET_TEST_WAIT_MS));
  for (k = 0; k < 600; k++) {
    a = list(&e);
    i = find(&a, "pool");
    ASSERT_GE(i, 0);
    if (a.held[i] == 1)
      break;
    lock_env_sleep(&e, 20);
  }
  ASSERT_EQ(1, a.held[i]);
  ASSERT_EQ(1, a.njobs[i]);
  ASSERT_STR_EQ("key-1", a.jobs[i][0]);

  /* A clean close removes the entry at once: by the close callback. */
  ASSERT_OK(fleet_job_complete(held_jobs[0]));
  ASSERT_OK(fleet_job_complete(held_jobs[1]));
  ASSERT_OK(fleet_worker_close(&w, on_closed));
  ASSERT(lock_env_wait(&e, &closed, 1, FLEET_TEST_WAIT_MS));
  a = list(&e);
  ASSERT_EQ(3, a.n);
  ASSERT_EQ(-1, find(&a, "queue"));

  /* An entry that stops beating (its process died) is listed until its
   * TTL runs out, then left out and removed. One fleet cannot read is
   * left out, the others listed. */
  beat_once(&e, dead_member, sizeof(dead_member) - 1, "1000", dead_info,
            sizeof(dead_info) - 1);
  beat_once(&e, "pool\0bad\0x", 10, "60000", "junk", 4);
  a = list(&e);
  ASSERT_EQ(4, a.n);
  i = find(&a, "queue");
  ASSERT_GE(i, 0);
  ASSERT_STR_EQ("ghost", a.id[i]);
  ASSERT_STR_EQ("gone", a.name[i]);
  ASSERT_STR_EQ("elsewhere", a.host[i]);
  ASSERT_EQ(777, a.pid[i]);
  ASSERT_EQ(1000, a.expires[i] - a.seen[i]);
  lock_env_sleep(&e, 1100);
  a = list(&e);
  ASSERT_EQ(3, a.n);
  ASSERT_EQ(-1, find(&a, "queue"));

  /* Every other entry goes with its handle's close. */
  ASSERT_OK(fleet_queue_close(&q, on_closed));
  ASSERT_OK(fleet_pool_node_close(&node, on_closed));
  ASSERT_OK(fleet_cron_scheduler_close(&sched, on_closed));
  ASSERT_OK(fleet_warmpool_close(&wp, on_closed));
  ASSERT(lock_env_wait(&e, &closed, 5, FLEET_TEST_WAIT_MS));
  a = list(&e);
  ASSERT_EQ(0, a.n);
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* A registry write that fails                                              */

typedef struct {
  int beat_lines; /* "registry: beat of ..." warnings */
  int done;       /* jobs completed */
  int closed;
} denied_t;

static void denied_log(fleet_log_level_t level, const char *message,
                       void *data) {
  denied_t *d = data;

  if (level == FLEET_LOG_WARN && strstr(message, "registry: beat of") != NULL)
    d->beat_lines++;
}

static void denied_handler(fleet_worker_t *w, fleet_job_t *job) {
  (void)w;
  ASSERT_OK(fleet_job_complete(job));
}

static void denied_done(fleet_worker_t *w, fleet_job_t *job,
                        fleet_job_action_t action, int status) {
  denied_t *d = ((fleet_handle_t *)w)->data;

  (void)job, (void)action;
  ASSERT_OK(status);
  d->done++;
}

static void denied_closed(fleet_handle_t *h) {
  ((denied_t *)h->data)->closed++;
}

/* An ACL user that may use the queue's keys but not the registry's: the
 * worker processes every job all the same, and the failed beats are
 * logged once, not once per beat. */
TEST_IMPL(workers_registry_denied) {
  fleet_test_redis_t *redis = fleet_test_redis_start_or_skip(NULL);
  fleet_client_options_t co;
  fleet_worker_options_t wo;
  fleet_job_spec_t specs[3];
  fleet_client_t client;
  fleet_worker_t w;
  fleet_queue_t q;
  uv_loop_t loop;
  denied_t d;
  redisReply *rep;
  char url[128];
  int enqueued = 0, i;

  memset(&d, 0, sizeof(d));
  rep = fleet_test_redis_cmd(redis, "ACL SETUSER lim on >pw ~{qt:wq}* "
                                    "&{qt:wq}* +@all");
  ASSERT_NOT_NULL(rep);
  ASSERT_EQ(REDIS_REPLY_STATUS, rep->type);
  freeReplyObject(rep);
  snprintf(url, sizeof(url), "redis://lim:pw@127.0.0.1:%d",
           fleet_test_redis_port(redis));
  ASSERT_OK(uv_loop_init(&loop));
  fleet_client_options_init(&co);
  co.prefix = "qt";
  co.log_cb = denied_log;
  co.log_data = &d;
  ASSERT_OK(fleet_client_init(&loop, &client, url, &co));
  fleet_worker_options_init(&wo);
  wo.claim_ttl_ms = 5000;
  wo.heartbeat_ms = 1000;
  wo.done_cb = denied_done;
  w.data = &d;
  q.data = &d;
  ASSERT_OK(fleet_worker_init(&client, &w, "wq", &wo));
  ASSERT_OK(fleet_worker_start(&w, denied_handler));
  ASSERT_OK(fleet_queue_init(&client, &q, "wq", NULL));
  for (i = 0; i < 3; i++)
    fleet_job_spec_init(&specs[i], "t", "p", 1);
  ASSERT_OK(fleet_queue_enqueue(&q, specs, 3, on_enqueued, &enqueued));
  ASSERT(fleet_test_wait_count(&loop, &d.done, 3,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  /* Three beats at least (every 2 s): one line. */
  fleet_test_sleep(&loop, 4500);
  ASSERT_EQ(1, d.beat_lines);
  ASSERT_EQ(3, d.done);
  ASSERT_OK(fleet_worker_close(&w, denied_closed));
  ASSERT_OK(fleet_queue_close(&q, denied_closed));
  ASSERT(fleet_test_wait_count(&loop, &d.closed, 2,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(fleet_client_close(&client, NULL));
  ASSERT_OK(uv_run(&loop, UV_RUN_DEFAULT));
  ASSERT_OK(uv_loop_close(&loop));
  fleet_test_redis_free(redis);
  return 0;
}
