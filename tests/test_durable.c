/* test_durable.c -- the durability option (wait_replicas): job-state
 * calls and lock grants answer once the replicas have the write, and say so
 * when they do not. A master and one replica, both started here. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_queue_util.h"

/* qt_open() with the durability option. */
static void dur_open(qt_t *t, const char *url, uint32_t replicas,
                     uint32_t timeout_ms) {
  fleet_client_options_t o;

  memset(t, 0, sizeof(*t));
  fleet_client_options_init(&o);
  o.prefix = "dur";
  o.reconnect_initial_ms = 20;
  o.reconnect_max_ms = 200;
  o.wait_replicas = replicas;
  o.wait_timeout_ms = timeout_ms;
  o.command_timeout_ms = (uint32_t)fleet_test_ms(5000);
  ctx_init(&t->c, url, &o);
  t->q.data = t;
  ASSERT_OK(fleet_queue_init(&t->c.client, &t->q, "jobs", NULL));
}

/* Enqueues one job; returns the callback's status. */
static int dur_add(qt_t *t, const char *payload) {
  fleet_job_spec_t s;
  int st = 1;
  int status;

  fleet_job_spec_init(&s, "t", payload, strlen(payload));
  status = qt_enqueue(t, &s, 1, &st, NULL);
  if (status == 0)
    ASSERT_OK(st);
  return status;
}

static void dur_wait_link_up(fleet_test_redis_t *replica) {
  int i;

  for (i = 0; i < 500; i++) {
    redisReply *r = fleet_test_redis_cmd(replica, "INFO replication");
    int up = r != NULL && r->type == REDIS_REPLY_STRING &&
             strstr(r->str, "master_link_status:up") != NULL;
    if (r != NULL)
      freeReplyObject(r);
    if (up)
      return;
    usleep(20000);
  }
  ASSERT(0 && "the replica never synced");
}

/* With one replica: enqueue, claim and complete succeed with
 * wait_replicas 1 (also after SCRIPT FLUSH, when the op is resent as
 * EVAL behind its first WAIT); a paused replica, or asking for two, gives
 * FLEET_ETIMEDOUT with the count in the detail, and the write is on the
 * master all the same. */
TEST_IMPL(durable_wait_replicas) {
  fleet_test_redis_t *master, *replica;
  const char *args[] = {"--replicaof", "127.0.0.1", NULL, NULL};
  char port[16];
  qt_t t, two;
  qt_job_t jobs[4];
  fleet_claim_t claim;
  int results[1];
  const char *why;

  master = fleet_test_redis_start_or_skip(NULL);
  snprintf(port, sizeof(port), "%d", fleet_test_redis_port(master));
  args[2] = port;
  replica = fleet_test_redis_start_or_skip(args);
  dur_wait_link_up(replica);

  dur_open(&t, fleet_test_redis_url(master), 1, (uint32_t)fleet_test_ms(500));
  ASSERT_OK(dur_add(&t, "a"));
  ASSERT_EQ(1, qt_claim(&t, 1, 60000, jobs));
  claim = qt_claim_of(&jobs[0]);
  ASSERT_OK(qt_complete(&t, &claim, 1, results));
  ASSERT_OK(results[0]);

  /* NOSCRIPT: the EVALSHA is resent as EVAL; its first WAIT is skipped. */
  fleet_test_redis_ok(master, "SCRIPT FLUSH");
  ASSERT_OK(dur_add(&t, "b"));
  ASSERT_OK(qt_counts(&t));
  ASSERT_EQ(1, t.counts.pending);
  ASSERT_EQ(1, t.counts.completed);

  /* Two replicas asked, one there. */
  dur_open(&two, fleet_test_redis_url(master), 2, (uint32_t)fleet_test_ms(200));
  ASSERT_ERR(FLEET_ETIMEDOUT, dur_add(&two, "c"));
  why = fleet_client_last_error(&two.c.client);
  fprintf(stderr, "%s\n", why);
  ASSERT_NOT_NULL(strstr(why, "1 of 2 replicas"));
  /* Calls that do not change a job's state do not wait. */
  ASSERT_OK(qt_counts(&two));
  ASSERT_EQ(2, two.counts.pending); /* "c" is on the master */
  qt_close(&two);

  /* The replica stops answering: nothing acknowledges. */
  ASSERT_OK(fleet_test_redis_pause(replica));
  ASSERT_ERR(FLEET_ETIMEDOUT, dur_add(&t, "d"));
  why = fleet_client_last_error(&t.c.client);
  fprintf(stderr, "%s\n", why);
  ASSERT_NOT_NULL(strstr(why, "0 of 1 replicas"));
  ASSERT_OK(fleet_test_redis_resume(replica));
  ASSERT_OK(dur_add(&t, "e"));
  ASSERT_STR_EQ("", fleet_client_last_error(&t.c.client));
  qt_close(&t);
  fleet_test_redis_free(replica);
  fleet_test_redis_free(master);
  return 0;
}

typedef struct {
  int done;
  int status;
  uint64_t token;
} dur_lock_t;

static void dur_on_acquire(fleet_lock_t *lock, int status, uint64_t token,
                           void *arg) {
  dur_lock_t *d = arg;

  (void)lock;
  d->status = status;
  d->token = token;
  d->done = 1;
}

static void dur_on_lock_closed(fleet_handle_t *h) {
  *(int *)h->data = 1;
}

/* Takes lock `name` once (try-once) on `t`'s client; returns the status
 * and sets *token. */
static int dur_lock(client_ctx_t *t, fleet_lock_t *lock, const char *name,
                    uint64_t *token) {
  dur_lock_t d;

  memset(&d, 0, sizeof(d));
  ASSERT_OK(fleet_lock_init(&t->client, lock, name, "me", 60000, NULL));
  ASSERT_OK(fleet_lock_acquire(lock, 0, dur_on_acquire, &d));
  ASSERT(fleet_test_run_until(&t->loop, fleet_test_flag_set, &d.done,
                              fleet_test_ms(10000)));
  *token = d.token;
  return d.status;
}

static void dur_lock_close(client_ctx_t *t, fleet_lock_t *lock) {
  int closed = 0;

  lock->data = &closed;
  ASSERT_OK(fleet_lock_close(lock, dur_on_lock_closed));
  ASSERT(fleet_test_run_until(&t->loop, fleet_test_flag_set, &closed,
                              fleet_test_ms(10000)));
}

/* Lock grants wait for the replicas too: with the replica in sync the
 * grant succeeds and the replica has the lease when the callback runs;
 * with its link cut the grant fails with FLEET_ETIMEDOUT ("0 of 1
 * replicas"), and the lease is on the master all the same. */
TEST_IMPL(durable_lock_grant) {
  const char *margs[] = {FLEET_TEST_REPL_USER_ARGS, NULL};
  const char *args[] = {FLEET_TEST_REPL_USER_ARGS, "--replicaof", "127.0.0.1",
                        NULL, NULL};
  fleet_test_redis_t *master, *replica;
  fleet_client_options_t o;
  fleet_lock_t a, b;
  client_ctx_t t;
  redisReply *r;
  uint64_t token;
  char port[16];

  master = fleet_test_redis_start_or_skip(margs);
  snprintf(port, sizeof(port), "%d", fleet_test_redis_port(master));
  args[sizeof(args) / sizeof(args[0]) - 2] = port;
  replica = fleet_test_redis_start_or_skip(args);
  dur_wait_link_up(replica);
  fleet_client_options_init(&o);
  o.prefix = "dur";
  o.wait_replicas = 1;
  o.wait_timeout_ms = (uint32_t)fleet_test_ms(300);
  o.command_timeout_ms = (uint32_t)fleet_test_ms(5000);
  ctx_init(&t, fleet_test_redis_url(master), &o);

  ASSERT_OK(dur_lock(&t, &a, "a", &token));
  r = fleet_test_redis_cmd(replica, "GET {dur:a}:lock");
  ASSERT_NOT_NULL(r);
  ASSERT_EQ(REDIS_REPLY_STRING, r->type);
  ASSERT_NOT_NULL(strstr(r->str, ":me"));
  freeReplyObject(r);

  fleet_test_redis_cut_replicas(master);
  ASSERT_ERR(FLEET_ETIMEDOUT, dur_lock(&t, &b, "b", &token));
  fprintf(stderr, "%s\n", fleet_client_last_error(&t.client));
  ASSERT_NOT_NULL(
      strstr(fleet_client_last_error(&t.client), "0 of 1 replicas"));
  r = fleet_test_redis_cmd(master, "EXISTS {dur:b}:lock");
  ASSERT_NOT_NULL(r);
  ASSERT_EQ(1, r->integer);
  freeReplyObject(r);
  dur_lock_close(&t, &a);
  dur_lock_close(&t, &b);
  ctx_close(&t);
  fleet_test_redis_free(replica);
  fleet_test_redis_free(master);
  return 0;
}

/* memory:// has no replicas to wait for. */
TEST_IMPL(durable_memory_refused) {
  uv_loop_t loop;
  fleet_client_t c;
  fleet_client_options_t o;

  ASSERT_OK(uv_loop_init(&loop));
  fleet_client_options_init(&o);
  o.wait_replicas = 1;
  ASSERT_ERR(FLEET_EINVAL, fleet_client_init(&loop, &c, "memory://", &o));
  fleet_test_loop_close(&loop);
  return 0;
}

/* The URL's wait_replicas and wait_timeout_ms, on a master without a
 * replica: a job-state call fails with FLEET_ETIMEDOUT and is on the
 * master all the same; wait_replicas=0 waits for nothing; a non-zero
 * client option wins over the URL's. */
TEST_IMPL(durable_url_options) {
  fleet_test_redis_t *master;
  char url[256];
  qt_t t;

  master = fleet_test_redis_start_or_skip(NULL);
  snprintf(url, sizeof(url), "%s/0?wait_replicas=1&wait_timeout_ms=%llu",
           fleet_test_redis_url(master),
           (unsigned long long)fleet_test_ms(100));
  dur_open(&t, url, 0, 0);
  ASSERT_ERR(FLEET_ETIMEDOUT, dur_add(&t, "a"));
  ASSERT_NOT_NULL(
      strstr(fleet_client_last_error(&t.c.client), "0 of 1 replicas"));
  ASSERT_OK(qt_counts(&t));
  ASSERT_EQ(1, t.counts.pending); /* applied: WAIT undoes nothing */
  qt_close(&t);

  snprintf(url, sizeof(url), "%s/0?wait_replicas=0",
           fleet_test_redis_url(master));
  dur_open(&t, url, 0, 0);
  ASSERT_OK(dur_add(&t, "b"));
  qt_close(&t);

  /* The options win: 2 replicas asked, not the URL's 5. */
  snprintf(url, sizeof(url), "%s/0?wait_replicas=5&wait_timeout_ms=60000",
           fleet_test_redis_url(master));
  dur_open(&t, url, 2, (uint32_t)fleet_test_ms(100));
  ASSERT_ERR(FLEET_ETIMEDOUT, dur_add(&t, "c"));
  ASSERT_NOT_NULL(
      strstr(fleet_client_last_error(&t.c.client), "0 of 2 replicas"));
  qt_close(&t);
  fleet_test_redis_free(master);
  return 0;
}

/* memory:// refuses the durability URL options. */
TEST_IMPL(durable_url_memory_refused) {
  uv_loop_t loop;
  fleet_client_t c;
  char why[160];

  ASSERT_OK(uv_loop_init(&loop));
  ASSERT_ERR(FLEET_EBADURL,
             fleet_client_init(&loop, &c, "memory://?wait_replicas=1", NULL));
  ASSERT_ERR(FLEET_EBADURL, fleet_client_url_check("memory://?wait_replicas=0",
                                                   why, sizeof(why)));
  ASSERT_NOT_NULL(strstr(why, "no replicas"));
  fleet_test_loop_close(&loop);
  return 0;
}
