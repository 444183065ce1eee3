/* test_log.c -- the client's logging hook: a reconnect after a Redis
 * restart, a script reloaded after NOSCRIPT, a lost lease and a recovered
 * claim are each told as one line; a password (in the URL or as the
 * client's own) never appears in any message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "test_queue_util.h"

#define LG_MAX 128

/* Every message the hook heard, in order. */
typedef struct {
  int n;
  fleet_log_level_t level[LG_MAX];
  char msg[LG_MAX][FLEET__LOG_MAX];
} lg_t;

static void lg_cb(fleet_log_level_t level, const char *message, void *data) {
  lg_t *l = data;

  ASSERT_NOT_NULL(message);
  ASSERT_NULL(strchr(message, '\n'));
  ASSERT_LT(strlen(message), FLEET__LOG_MAX);
  if (getenv("FLEET_TEST_LOG_ECHO") != NULL) /* to see them while debugging */
    fprintf(stderr, "log %s: %s\n", fleet_log_level_name(level), message);
  if (l->n == LG_MAX)
    return;
  l->level[l->n] = level;
  strcpy(l->msg[l->n], message);
  l->n++;
}

/* The index of the first message at `level` from `from` on that contains
 * `needle`, or -1. */
static int lg_find(const lg_t *l, int from, fleet_log_level_t level,
                   const char *needle) {
  int i;

  for (i = from; i < l->n; i++)
    if (l->level[i] == level && strstr(l->msg[i], needle) != NULL)
      return i;
  return -1;
}

typedef struct {
  const lg_t *l;
  fleet_log_level_t level;
  const char *needle;
} lg_wait_t;

static int lg_has(void *arg) {
  lg_wait_t *w = arg;
  return lg_find(w->l, 0, w->level, w->needle) >= 0;
}

static void lg_wait(uv_loop_t *loop, const lg_t *l, fleet_log_level_t level,
                    const char *needle) {
  lg_wait_t w = {l, level, needle};
  ASSERT(fleet_test_run_until(loop, lg_has, &w,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

/* No message carries `secret`. */
static void lg_no_secret(const lg_t *l, const char *secret) {
  int i;

  for (i = 0; i < l->n; i++)
    ASSERT_NULL(strstr(l->msg[i], secret));
}

static void lg_client_cmd(client_ctx_t *c, lg_t *l, const char *url,
                          uint32_t command_timeout_ms) {
  fleet_client_options_t o;

  memset(l, 0, sizeof(*l));
  fleet_client_options_init(&o);
  o.reconnect_initial_ms = 20;
  o.reconnect_max_ms = 200;
  o.log_cb = lg_cb;
  o.log_data = l;
  o.command_timeout_ms = command_timeout_ms;
  ctx_init(c, url, &o);
}

static void lg_client(client_ctx_t *c, lg_t *l, const char *url) {
  lg_client_cmd(c, l, url, 0);
}

static void count_close(fleet_handle_t *h) {
  (*(int *)h->data)++;
}

static void on_enqueue(fleet_queue_t *q, int status,
                       const fleet_enqueue_result_t *res, size_t n, void *ud) {
  ASSERT_OK(status);
  (*(int *)ud)++;
}

/* ------------------------------------------------------------------------ */

TEST_IMPL(log_redact) {
  char s[FLEET__LOG_MAX];

  strcpy(s, "connected to redis://user:hunter22@127.0.0.1:6379/2 now");
  fleet__redact(s, sizeof(s), NULL);
  ASSERT_STR_EQ("connected to redis://user:***@127.0.0.1:6379/2 now", s);
  /* No user, a password with '@' and ':' in it, two URLs. */
  strcpy(s, "a redis://:p@ss:w@h:1 b rediss://u:x@[::1]:2/0?x=y");
  fleet__redact(s, sizeof(s), NULL);
  ASSERT_STR_EQ("a redis://:***@h:1 b rediss://u:***@[::1]:2/0?x=y", s);
  /* A user without a password, no userinfo at all: unchanged. */
  strcpy(s, "redis://user@h:1 unix:///tmp/r.sock redis://h");
  fleet__redact(s, sizeof(s), NULL);
  ASSERT_STR_EQ("redis://user@h:1 unix:///tmp/r.sock redis://h", s);
  /* The client's own password, wherever it is. */
  strcpy(s, "ERR invalid password 'sekrit99' (sekrit99)");
  fleet__redact(s, sizeof(s), "sekrit99");
  ASSERT_STR_EQ("ERR invalid password '***' (***)", s);
  /* Short passwords are only taken out of URLs. */
  strcpy(s, "a b redis://:a@h");
  fleet__redact(s, sizeof(s), "a");
  ASSERT_STR_EQ("a b redis://:***@h", s);
  /* Truncation keeps the terminator. */
  strcpy(s, "redis://:longpassword@host");
  fleet__redact(s, 12, NULL);
  ASSERT_STR_EQ("redis://:**", s);
  ASSERT_STR_EQ("warn", fleet_log_level_name(FLEET_LOG_WARN));
  ASSERT_STR_EQ("unknown", fleet_log_level_name((fleet_log_level_t)42));
  return 0;
}

/* A client on a password-protected Redis that restarts: connected, lost,
 * reconnected; NOSCRIPT after a SCRIPT FLUSH is told; the password is in
 * no message. */
TEST_IMPL(log_reconnect_redis) {
  static const char *const args[] = {"--requirepass", "pw-Zq81xk", NULL};
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(args);
  fleet_queue_t q;
  fleet_job_spec_t spec;
  client_ctx_t c;
  char url[256];
  lg_t l;
  int i, closed = 0, enq = 0;

  snprintf(url, sizeof(url), "redis://:pw-Zq81xk@127.0.0.1:%d",
           fleet_test_redis_port(r));
  lg_client(&c, &l, url);
  ASSERT_OK(ctx_ping(&c));
  lg_wait(&c.loop, &l, FLEET_LOG_INFO, "connected to redis://:***@127.0.0.1:");
  ASSERT_EQ(-1, lg_find(&l, 0, FLEET_LOG_INFO, "reconnected"));

  ASSERT_OK(fleet_test_redis_restart(r));
  lg_wait(&c.loop, &l, FLEET_LOG_WARN, "lost, reconnecting");
  lg_wait(&c.loop, &l, FLEET_LOG_INFO, "reconnected to redis://:***@");
  ASSERT_GT(lg_find(&l, 0, FLEET_LOG_INFO, "reconnected"),
            lg_find(&l, 0, FLEET_LOG_WARN, "lost, reconnecting"));
  ASSERT_OK(ctx_ping(&c));

  /* The server forgets the functions and the scripts: the next call (an
   * FCALL) is sent again as EVAL, the one after it (an EVALSHA) too, and
   * the hook hears each. */
  fleet_test_redis_ok(r, "FUNCTION FLUSH");
  q.data = &closed;
  ASSERT_OK(fleet_queue_init(&c.client, &q, "lq", NULL));
  fleet_job_spec_init(&spec, "t", "x", 1);
  ASSERT_OK(fleet_queue_enqueue(&q, &spec, 1, on_enqueue, &enq));
  ASSERT(fleet_test_wait_count(&c.loop, &enq, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_LE(0, lg_find(&l, 0, FLEET_LOG_INFO,
                       "function of script queue_enqueue refused (ERR "
                       "Function not found)"));
  fleet_test_redis_ok(r, "SCRIPT FLUSH");
  ASSERT_OK(fleet_queue_enqueue(&q, &spec, 1, on_enqueue, &enq));
  ASSERT(fleet_test_wait_count(&c.loop, &enq, 2,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_LE(0, lg_find(&l, 0, FLEET_LOG_INFO,
                       "script queue_enqueue not in the server's cache "
                       "(NOSCRIPT)"));
  ASSERT_OK(fleet_queue_close(&q, count_close));
  ASSERT(fleet_test_wait_count(&c.loop, &closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ctx_close(&c);

  lg_no_secret(&l, "pw-Zq81xk");
  lg_no_secret(&l, "Zq81");
  for (i = 0; i < l.n; i++)
    ASSERT_NULL(strstr(l.msg[i], "\r"));
  return 0;
}

/* A lock whose lease runs out logs the loss (both adapters). */
static void on_acquire(fleet_lock_t *lk, int status, uint64_t token, void *ud) {
  ASSERT_OK(status);
  (*(int *)ud)++;
}

static void on_lost(fleet_lock_t *lk, int status, uint64_t token) {
  (*(int *)lk->data)++;
}

CONFORMANCE_IMPL(log_lost_lease) {
  fleet_lock_options_t o;
  fleet_lock_t lock;
  client_ctx_t c;
  lg_t l;
  int acquired = 0, lost = 0, closed = 0;

  lg_client(&c, &l, b->url);
  /* Connected before the lease starts: a first acquire that waits for the
   * connection on a loaded machine can see its grant come back after the
   * lease ran out (CI, beside chromium). */
  ASSERT_OK(ctx_ping(&c));
  fleet_lock_options_init(&o);
  o.manual_renew = 1;
  o.lost_cb = on_lost;
  lock.data = &lost;
  /* Long enough for the grant to come back on a loaded machine: a grant
   * that arrives after its lease ran out is given back (FLEET_ETIMEDOUT). */
  ASSERT_OK(fleet_lock_init(&c.client, &lock, "lease-x", "me",
                            fleet_test_ms(500), &o));
  ASSERT_OK(fleet_lock_acquire(&lock, 0, on_acquire, &acquired));
  ASSERT(fleet_test_wait_count(&c.loop, &acquired, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_EQ(-1, lg_find(&l, 0, FLEET_LOG_WARN, "lease lost"));
  ASSERT(fleet_test_wait_count(&c.loop, &lost, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_LE(0, lg_find(&l, 0, FLEET_LOG_WARN, "lock lease-x: lease lost"));
  lock.data = &closed;
  ASSERT_OK(fleet_lock_close(&lock, count_close));
  ASSERT(fleet_test_wait_count(&c.loop, &closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ctx_close(&c);
}

/* A claim left to go stale is recovered by a worker, which logs it. */
static void w_handler(fleet_worker_t *w, fleet_job_t *job) {
  ASSERT_OK(fleet_job_complete(job));
  (*(int *)w->data)++;
}

static void on_claim(fleet_queue_t *q, int status, fleet_job_t *jobs, size_t n,
                     const fleet_claim_info_t *info, void *ud) {
  ASSERT_OK(status);
  ASSERT_UEQ(1, n);
  (*(int *)ud)++;
}

CONFORMANCE_IMPL(log_recovered_claim) {
  fleet_worker_options_t o;
  fleet_worker_t w;
  fleet_queue_t q;
  fleet_job_spec_t spec;
  client_ctx_t c;
  lg_t l;
  int enq = 0, claimed = 0, handled = 0, closed = 0;

  lg_client(&c, &l, b->url);
  ASSERT_OK(fleet_queue_init(&c.client, &q, "recq", NULL));
  fleet_job_spec_init(&spec, "t", "x", 1);
  ASSERT_OK(fleet_queue_enqueue(&q, &spec, 1, on_enqueue, &enq));
  ASSERT(fleet_test_wait_count(&c.loop, &enq, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(fleet_queue_claim(&q, 1, 150, on_claim, &claimed));
  ASSERT(fleet_test_wait_count(&c.loop, &claimed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  fleet_worker_options_init(&o);
  o.poll_ms = 60000;
  o.recover_ms = 50;
  w.data = &handled;
  ASSERT_OK(fleet_worker_init(&c.client, &w, "recq", &o));
  ASSERT_OK(fleet_worker_start(&w, w_handler));
  ASSERT(fleet_test_wait_count(&c.loop, &handled, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_LE(0, lg_find(&l, 0, FLEET_LOG_WARN,
                       "queue recq: recovered 1 stale claims (1 requeued, "
                       "0 dead)"));
  w.data = &closed;
  q.data = &closed;
  ASSERT_OK(fleet_worker_close(&w, count_close));
  ASSERT_OK(fleet_queue_close(&q, count_close));
  ASSERT(fleet_test_wait_count(&c.loop, &closed, 2,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ctx_close(&c);
}

/* A background error reaches the hook at level error, with the handle. */
CONFORMANCE_IMPL(log_background_error) {
  fleet_lock_options_t o;
  fleet_lock_t lock;
  client_ctx_t c;
  lg_t l;
  int acquired = 0, closed = 0;

  if (b->redis == NULL) {
    /* The memory backend cannot fail a renewal; the redis variant
     * stops the server under a held lease. */
    lg_client(&c, &l, b->url);
    ctx_close(&c);
    ASSERT_EQ(0, l.n);
    return;
  }
  /* Renewals time out long before the lease ends. */
  lg_client_cmd(&c, &l, b->url, 300);
  /* Connected first: on a loaded machine the connection can take longer
   * than the 300 ms a call may wait (a few tries, bounded). */
  for (int tries = 0; tries < 20 && ctx_ping(&c) != 0; tries++)
    ;
  fleet_lock_options_init(&o);
  o.renew_interval_ms = 100;
  lock.data = &closed;
  ASSERT_OK(fleet_lock_init(&c.client, &lock, "bg-lock", "me", 60000, &o));
  ASSERT_OK(fleet_lock_acquire(&lock, 0, on_acquire, &acquired));
  ASSERT(fleet_test_wait_count(&c.loop, &acquired, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(fleet_test_redis_pause(b->redis));
  lg_wait(&c.loop, &l, FLEET_LOG_ERROR, "lock bg-lock: ");
  ASSERT_LE(0,
            lg_find(&l, 0, FLEET_LOG_ERROR, fleet_strerror(FLEET_ETIMEDOUT)));
  ASSERT_OK(fleet_test_redis_resume(b->redis));
  ASSERT_OK(fleet_lock_close(&lock, count_close));
  ASSERT(fleet_test_wait_count(&c.loop, &closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ctx_close(&c);
}

/* tls_verify=0 is warned about through the hook as the client opens
 * (before fleet_client_init() returns), the URL's secrets hidden; a
 * sentinel password in a query option is hidden in every message. */
TEST_IMPL(log_tls_verify_warning) {
  fleet_client_options_t o;
  fleet_client_t client;
  uv_loop_t loop;
  lg_t l;
  int i;

  memset(&l, 0, sizeof(l));
  ASSERT_OK(uv_loop_init(&loop));
  fleet_client_options_init(&o);
  o.log_cb = lg_cb;
  o.log_data = &l;
  o.connect_timeout_ms = 100;
  ASSERT_OK(fleet_client_init(&loop, &client,
                              "rediss+sentinel://:pw-Zq81xk@127.0.0.1:1/m?"
                              "tls_verify=0&sentinel_password=spw-Qx77",
                              &o));
  ASSERT_EQ(1, l.n);
  ASSERT_EQ(FLEET_LOG_WARN, l.level[0]);
  ASSERT_NOT_NULL(strstr(l.msg[0], "(tls_verify=0): the server's "
                                   "certificate is not checked"));
  ASSERT_NOT_NULL(strstr(l.msg[0], "sentinel_password=***"));
  ASSERT_OK(fleet_client_close(&client, NULL));
  ASSERT_OK(uv_run(&loop, UV_RUN_DEFAULT));
  for (i = 0; i < l.n; i++) {
    ASSERT_NULL(strstr(l.msg[i], "Zq81"));
    ASSERT_NULL(strstr(l.msg[i], "Qx77"));
  }
  /* With verification on: no warning. */
  l.n = 0;
  ASSERT_OK(fleet_client_init(&loop, &client, "rediss://127.0.0.1:1", &o));
  ASSERT_EQ(0, l.n);
  ASSERT_OK(fleet_client_close(&client, NULL));
  ASSERT_OK(uv_run(&loop, UV_RUN_DEFAULT));
  fleet_test_loop_close(&loop);
  return 0;
}
