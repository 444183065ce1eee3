/* test_leader.c -- leader election: bad input, election and resignation
 * on both adapters, demotion and re-election after a loss, close, and a
 * leader killed with SIGKILL replaced by another process within TTL + one
 * renewal period. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lock/leader_int.h"
#include "test_lock_env.h"

/* What one candidate saw. The handle's data points here. */
typedef struct {
  fleet_leader_t leader;
  int elected;
  uint64_t token;
  uint64_t elected_ms;
  int demoted;
  int demoted_status;
  int errors;
  int resigned;
  int resign_status;
  int closed;
} cand_t;

static void cand_on_elected(fleet_leader_t *leader, uint64_t token) {
  cand_t *c = leader->data;

  c->elected++;
  c->token = token;
  c->elected_ms = lock_env_now();
  ASSERT(fleet_leader_is_leader(leader));
  ASSERT_UEQ(token, fleet_leader_token(leader));
  ASSERT_STR_EQ("leader", fleet__leader_state_name(leader));
}

static void cand_on_demoted(fleet_leader_t *leader, int status) {
  cand_t *c = leader->data;

  c->demoted++;
  c->demoted_status = status;
  ASSERT(!fleet_leader_is_leader(leader));
}

static void cand_on_error(fleet_handle_t *leader, int status,
                          const char *detail) {
  cand_t *c = leader->data;
  c->errors++;
}

static void cand_on_resigned(fleet_handle_t *leader_h, int status, void *arg) {
  fleet_leader_t *leader = (fleet_leader_t *)leader_h;
  cand_t *c = leader->data;

  c->resigned++;
  c->resign_status = status;
}

static void cand_on_close(fleet_handle_t *leader) {
  cand_t *c = leader->data;

  c->closed++;
  ASSERT_NULL(leader->internal_);
}

/* Fills `o` with the defaults and the candidate's callbacks. */
static void cand_options(fleet_leader_options_t *o) {
  fleet_leader_options_init(o);
  o->elected_cb = cand_on_elected;
  o->demoted_cb = cand_on_demoted;
  o->error_cb = cand_on_error;
}

/* A candidate with a fallback retry of `retry_ms`. With 20 s, far longer
 * than any wait the tests allow, a quick hand-over proves the wake-up on
 * release. */
static int cand_init_retry(cand_t *c, fleet_client_t *client, const char *name,
                           const char *owner, uint32_t ttl_ms,
                           uint32_t retry_ms) {
  fleet_leader_options_t o;

  memset(c, 0, sizeof(*c));
  c->leader.data = c;
  cand_options(&o);
  o.retry_max_ms = retry_ms;
  return fleet_leader_init(client, &c->leader, name, owner, ttl_ms, &o);
}

static int cand_init(cand_t *c, fleet_client_t *client, const char *name,
                     const char *owner, uint32_t ttl_ms) {
  return cand_init_retry(c, client, name, owner, ttl_ms, 20000);
}

static void cand_close(lock_env_t *e, cand_t *c) {
  ASSERT_OK(fleet_leader_close(&c->leader, cand_on_close));
  ASSERT_ERR(FLEET_ECLOSING, fleet_leader_close(&c->leader, cand_on_close));
  ASSERT_EQ(0, c->closed);
  ASSERT(lock_env_wait(e, &c->closed, 1, 10000));
}

/* ------------------------------------------------------------------------ */
/* Conformance                                                              */

CONFORMANCE_IMPL(leader_bad_input) {
  fleet_leader_options_t o;
  fleet_leader_t l;
  lock_env_t e;
  cand_t c, d;

  lock_env_init(&e, b->url);
  cand_options(&o);
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_init(NULL, &l, "n", "o", 1000, &o));
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_init(&e.c1, NULL, "n", "o", 1000, &o));
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_init(&e.c1, &l, "", "o", 1000, &o));
  ASSERT_NULL(l.internal_);
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_init(&e.c1, &l, "n", NULL, 1000, &o));
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_init(&e.c1, &l, "n", "o", 0, &o));
  /* The options carry the required callbacks: NULL options, or options
   * without either required callback, are refused. */
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_init(&e.c1, &l, "n", "o", 1000, NULL));
  fleet_leader_options_init(&o); /* no callbacks at all */
  ASSERT_NULL(o.elected_cb);
  ASSERT_NULL(o.demoted_cb);
  ASSERT_NULL(o.error_cb);
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_init(&e.c1, &l, "n", "o", 1000, &o));
  cand_options(&o);
  o.elected_cb = NULL;
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_init(&e.c1, &l, "n", "o", 1000, &o));
  cand_options(&o);
  o.demoted_cb = NULL;
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_init(&e.c1, &l, "n", "o", 1000, &o));
  ASSERT_NULL(l.internal_);
  /* The lease timing is checked as a lock's. */
  memset(&o, 0xff, sizeof(o));
  o.elected_cb = cand_on_elected;
  o.demoted_cb = cand_on_demoted;
  o.error_cb = cand_on_error;
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_init(&e.c1, &l, "n", "o", 1000, &o));
  fleet_leader_options_init(&o); /* every field back to its default */
  ASSERT_EQ(0, o.renew_interval_ms);
  ASSERT_EQ(0, o.safety_margin_ms);
  ASSERT_EQ(0, o.retry_max_ms);
  /* Only the required callbacks: no error callback is fine. */
  o.elected_cb = cand_on_elected;
  o.demoted_cb = cand_on_demoted;
  memset(&d, 0, sizeof(d));
  d.leader.data = &d;
  ASSERT_OK(fleet_leader_init(&e.c1, &d.leader, "n", "o", 1000, &o));
  cand_close(&e, &d);
  cand_options(&o);
  o.safety_margin_ms = 1000;
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_init(&e.c1, &l, "n", "o", 1000, &o));
  o.safety_margin_ms = 0;
  o.renew_interval_ms = 5000;
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_init(&e.c1, &l, "n", "o", 1000, &o));
  ASSERT_NULL(l.internal_);

  ASSERT_OK(cand_init(&c, &e.c1, "n", "o", 1000));
  ASSERT_STR_EQ("idle", fleet__leader_state_name(&c.leader));
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_campaign(NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_resign(&c.leader, NULL, NULL));
  ASSERT_ERR(FLEET_EALREADY,
             fleet_leader_resign(&c.leader, cand_on_resigned, NULL));
  ASSERT_ERR(FLEET_EINVAL, fleet_leader_close(NULL, NULL));
  ASSERT_EQ(0, fleet_leader_is_leader(NULL));
  ASSERT_EQ(0, fleet_leader_is_leader(&c.leader));
  ASSERT_OK(fleet_leader_campaign(&c.leader));
  ASSERT_ERR(FLEET_EALREADY, fleet_leader_campaign(&c.leader));
  ASSERT_EQ(0, c.elected); /* never inside the call */
  ASSERT(lock_env_wait(&e, &c.elected, 1, 5000));
  ASSERT_ERR(FLEET_EALREADY, fleet_leader_campaign(&c.leader));
  cand_close(&e, &c);
  ASSERT_EQ(0, c.demoted); /* closing does not demote */
  ASSERT_STR_EQ("closed", fleet__leader_state_name(&c.leader));
  lock_env_close(&e);
}

/* Two candidates: one leads, the other waits; resigning hands over at once
 * (well before the TTL); tokens grow; the query names the leader; closing
 * a leader hands over too. */
/* Whether the candidate `arg` is campaigning. */
static int cand_is_campaigning(void *arg) {
  cand_t *c = arg;
  return strcmp(fleet__leader_state_name(&c->leader), "campaigning") == 0;
}

CONFORMANCE_IMPL(leader_elect_resign) {
  /* The TTL, and the handover bound that must stay well below it. */
  const uint32_t ttl = (uint32_t)fleet_test_ms(5000);
  const uint64_t handover = fleet_test_ms(2000);
  lock_info_t info;
  lock_env_t e;
  cand_t x, y;
  uint64_t t0;

  lock_env_init(&e, b->url);
  ASSERT_OK(cand_init(&x, &e.c1, "elect", "x", ttl));
  ASSERT_OK(cand_init(&y, &e.c2, "elect", "y", ttl));
  ASSERT_OK(fleet_leader_campaign(&x.leader));
  ASSERT(lock_env_wait(&e, &x.elected, 1, 5000));
  ASSERT_OK(fleet_leader_campaign(&y.leader));
  lock_env_sleep(&e, 200);
  ASSERT_EQ(0, y.elected);
  ASSERT(fleet_test_run_until(&e.loop, cand_is_campaigning, &y,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  info = lock_env_query(&e, &e.c2, "elect");
  ASSERT_STR_EQ("x", info.owner);
  ASSERT_UEQ(x.token, info.token);

  t0 = lock_env_now();
  ASSERT_OK(fleet_leader_resign(&x.leader, cand_on_resigned, NULL));
  ASSERT_ERR(FLEET_EALREADY,
             fleet_leader_resign(&x.leader, cand_on_resigned, NULL));
  ASSERT(!fleet_leader_is_leader(&x.leader));
  ASSERT(lock_env_wait(&e, &x.resigned, 1, 5000));
  ASSERT_OK(x.resign_status);
  ASSERT_EQ(1, x.demoted);
  ASSERT_OK(x.demoted_status);
  ASSERT(lock_env_wait(&e, &y.elected, 1, 5000));
  ASSERT_LT(y.elected_ms - t0, handover);
  ASSERT_UGT(y.token, x.token);
  ASSERT_STR_EQ("idle", fleet__leader_state_name(&x.leader));

  /* x campaigns again and takes over when y closes. */
  ASSERT_OK(fleet_leader_campaign(&x.leader));
  lock_env_sleep(&e, 200);
  ASSERT_EQ(1, x.elected);
  t0 = lock_env_now();
  cand_close(&e, &y);
  ASSERT(lock_env_wait(&e, &x.elected, 2, 5000));
  ASSERT_LT(x.elected_ms - t0, handover);
  ASSERT_UGT(x.token, y.token);
  ASSERT_EQ(0, y.demoted);
  ASSERT_EQ(0, x.errors + y.errors);
  cand_close(&e, &x);
  lock_env_close(&e);
}

static void resign_in_elected(fleet_leader_t *leader, uint64_t token) {
  cand_on_elected(leader, token);
  ASSERT_OK(fleet_leader_resign(leader, cand_on_resigned, NULL));
}

static void close_in_demoted(fleet_leader_t *leader, int status) {
  cand_on_demoted(leader, status);
  ASSERT_OK(fleet_leader_close(leader, cand_on_close));
}

/* Resign and close from inside the callbacks, and close while a resign is
 * still in progress (it completes with FLEET_ECANCELED). */
CONFORMANCE_IMPL(leader_callbacks) {
  fleet_leader_options_t o;
  lock_env_t e;
  cand_t x;

  lock_env_init(&e, b->url);
  memset(&x, 0, sizeof(x));
  x.leader.data = &x;
  cand_options(&o);
  o.elected_cb = resign_in_elected;
  o.demoted_cb = close_in_demoted;
  ASSERT_OK(fleet_leader_init(&e.c1, &x.leader, "cb", "x", 1000, &o));
  ASSERT_OK(fleet_leader_campaign(&x.leader));
  ASSERT(lock_env_wait(&e, &x.closed, 1, 5000));
  ASSERT_EQ(1, x.elected);
  ASSERT_EQ(1, x.demoted);
  ASSERT_OK(x.demoted_status);
  ASSERT_EQ(1, x.resigned);
  ASSERT_ERR(FLEET_ECANCELED, x.resign_status);

  /* Close while campaigning behind another leader. */
  ASSERT_OK(cand_init(&x, &e.c1, "cb2", "x", 1000));
  {
    cand_t y;
    ASSERT_OK(cand_init(&y, &e.c2, "cb2", "y", 1000));
    ASSERT_OK(fleet_leader_campaign(&y.leader));
    ASSERT(lock_env_wait(&e, &y.elected, 1, 5000));
    ASSERT_OK(fleet_leader_campaign(&x.leader));
    lock_env_sleep(&e, 50);
    cand_close(&e, &x);
    ASSERT_EQ(0, x.elected);
    ASSERT(fleet_leader_is_leader(&y.leader));
    cand_close(&e, &y);
  }
  lock_env_close(&e);
}

/* ------------------------------------------------------------------------ */
/* Redis                                                                    */

/* The election's lease deleted behind the leader's back: its renewal is
 * refused, it is demoted, campaigns again and is elected again with a
 * greater token. */
TEST_IMPL(leader_demoted_redis) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  redisReply *reply;
  lock_env_t e;
  uint64_t first;
  cand_t x;

  lock_env_init(&e, fleet_test_redis_url(r));
  ASSERT_OK(cand_init_retry(&x, &e.c1, "lost", "x", 600, 200));
  ASSERT_OK(fleet_leader_campaign(&x.leader));
  ASSERT(lock_env_wait(&e, &x.elected, 1, 5000));
  first = x.token;
  reply = fleet_test_redis_cmd(r, "DEL {locktest:lost}:lock");
  ASSERT_NOT_NULL(reply);
  freeReplyObject(reply);
  ASSERT(lock_env_wait(&e, &x.demoted, 1, 3000));
  ASSERT_ERR(FLEET_ESTALE, x.demoted_status);
  ASSERT(lock_env_wait(&e, &x.elected, 2, 3000));
  ASSERT_UGT(x.token, first);
  ASSERT(fleet_leader_is_leader(&x.leader));

  /* Keys of the wrong type: campaign attempts fail and are reported, and
   * the candidate keeps trying. */
  ASSERT_OK(fleet_leader_resign(&x.leader, cand_on_resigned, NULL));
  ASSERT(lock_env_wait(&e, &x.resigned, 1, 3000));
  reply = fleet_test_redis_cmd(r, "HSET {locktest:lost}:lock f v");
  ASSERT_NOT_NULL(reply);
  freeReplyObject(reply);
  ASSERT_OK(fleet_leader_campaign(&x.leader));
  ASSERT(lock_env_wait(&e, &x.errors, 2, 5000));
  ASSERT_EQ(2, x.elected);
  reply = fleet_test_redis_cmd(r, "DEL {locktest:lost}:lock");
  ASSERT_NOT_NULL(reply);
  freeReplyObject(reply);
  ASSERT(lock_env_wait(&e, &x.elected, 3, 5000));
  cand_close(&e, &x);
  lock_env_close(&e);
  fleet_test_redis_free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Failover across processes                                                */

#define FAILOVER_PROCS 3
#define FAILOVER_TTL 600

typedef struct {
  const char *url;
  int index;
  int events;  /* pipe: "E <index> <token> <ns>" and "D <index> <status>" */
  int control; /* pipe from the parent: EOF means resign and exit */
  int inherited[2 * FAILOVER_PROCS + 1]; /* other pipe ends, to close */
  int ninherited;
  uv_loop_t loop;
  fleet_client_t client;
  fleet_leader_t leader;
  uv_pipe_t ctl;
  int done;
} voter_t;

static void voter_on_elected(fleet_leader_t *leader, uint64_t token) {
  voter_t *v = leader->data;
  char line[96];

  snprintf(line, sizeof(line), "E %d %" PRIu64 " %" PRIu64 "\n", v->index,
           token, uv_hrtime());
  lock_mp_write(v->events, line);
}

static void voter_on_demoted(fleet_leader_t *leader, int status) {
  voter_t *v = leader->data;
  char line[64];

  snprintf(line, sizeof(line), "D %d %d\n", v->index, status);
  lock_mp_write(v->events, line);
}

static void voter_on_closed(fleet_handle_t *leader) {
  voter_t *v = leader->data;

  ASSERT_OK(fleet_client_close(&v->client, NULL));
}

static void voter_on_resigned(fleet_handle_t *leader_h, int status, void *arg) {
  fleet_leader_t *leader = (fleet_leader_t *)leader_h;
  ASSERT_OK(status);
  ASSERT_OK(fleet_leader_close(leader, voter_on_closed));
}

static void voter_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf) {
  static char byte[64];
  *buf = uv_buf_init(byte, sizeof(byte));
}

/* The parent closed the control pipe: resign and wind down. */
static void voter_on_control(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  voter_t *v = s->data;

  if (n >= 0 || v->done)
    return;
  v->done = 1;
  uv_close((uv_handle_t *)s, NULL);
  ASSERT_OK(fleet_leader_resign(&v->leader, voter_on_resigned, NULL));
}

static void voter_main(void *arg) {
  voter_t *v = arg;
  fleet_leader_options_t lo;
  fleet_client_options_t o;
  char owner[32];
  int i;

  /* Only the parent may hold the write ends of the control pipes, or the
   * voters would never see them end. */
  for (i = 0; i < v->ninherited; i++)
    close(v->inherited[i]);
  ASSERT_OK(uv_loop_init(&v->loop));
  fleet_client_options_init(&o);
  o.prefix = "locktest";
  ASSERT_OK(fleet_client_init(&v->loop, &v->client, v->url, &o));
  snprintf(owner, sizeof(owner), "voter-%d", v->index);
  v->leader.data = v;
  fleet_leader_options_init(&lo);
  lo.elected_cb = voter_on_elected;
  lo.demoted_cb = voter_on_demoted;
  ASSERT_OK(fleet_leader_init(&v->client, &v->leader, "primary", owner,
                              FAILOVER_TTL, &lo));
  ASSERT_OK(uv_pipe_init(&v->loop, &v->ctl, 0));
  ASSERT_OK(uv_pipe_open(&v->ctl, v->control));
  v->ctl.data = v;
  ASSERT_OK(
      uv_read_start((uv_stream_t *)&v->ctl, voter_alloc, voter_on_control));
  ASSERT_OK(fleet_leader_campaign(&v->leader));
  fleet_test_loop_close(&v->loop);
}

/* Reads events until an election; returns the elected index and sets its
 * token and time. Demotions before it are counted. */
static int failover_next_elected(int fd, uint64_t *token, uint64_t *ns,
                                 int *demotions) {
  char line[128];
  int index, status;

  for (;;) {
    ASSERT_EQ(1, lock_mp_read_line(fd, line, sizeof(line), 10000));
    if (sscanf(line, "D %d %d", &index, &status) == 2) {
      (*demotions)++;
      continue;
    }
    ASSERT_EQ(3, sscanf(line, "E %d %" SCNu64 " %" SCNu64, &index, token, ns));
    return index;
  }
}

/* Three processes campaign; the leader is killed with SIGKILL; another is
 * elected within TTL + one renewal interval (+ 1 s of slack for a loaded
 * machine), with a greater token. */
TEST_IMPL(leader_mp_failover) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  voter_t voters[FAILOVER_PROCS];
  pid_t pids[FAILOVER_PROCS];
  int events[2], control[FAILOVER_PROCS][2];
  uint64_t token, ns, token2, ns2, killed_ns;
  int j, k, first, second, demotions = 0, status;

  ASSERT_OK(pipe(events));
  for (k = 0; k < FAILOVER_PROCS; k++)
    ASSERT_OK(pipe(control[k]));
  for (k = 0; k < FAILOVER_PROCS; k++) {
    voter_t *v = &voters[k];
    memset(v, 0, sizeof(*v));
    v->url = fleet_test_redis_url(r);
    v->index = k;
    v->events = events[1];
    v->control = control[k][0];
    v->inherited[v->ninherited++] = events[0];
    for (j = 0; j < FAILOVER_PROCS; j++) {
      v->inherited[v->ninherited++] = control[j][1];
      if (j != k)
        v->inherited[v->ninherited++] = control[j][0];
    }
    pids[k] = lock_mp_fork(voter_main, v);
  }
  for (k = 0; k < FAILOVER_PROCS; k++)
    close(control[k][0]);
  close(events[1]);

  first = failover_next_elected(events[0], &token, &ns, &demotions);
  ASSERT(first >= 0 && first < FAILOVER_PROCS);
  /* Let the leader renew a few times with the others waiting. */
  usleep(1000 * 1000);
  killed_ns = uv_hrtime();
  ASSERT_OK(kill(pids[first], SIGKILL));
  second = failover_next_elected(events[0], &token2, &ns2, &demotions);
  ASSERT_NE(first, second);
  ASSERT_UGT(token2, token);
  ASSERT_ULT((ns2 - killed_ns) / 1000000,
             FAILOVER_TTL + FAILOVER_TTL / 3 + fleet_test_ms(1000));
  ASSERT_EQ(0, demotions);

  ASSERT_EQ(pids[first], waitpid(pids[first], &status, 0));
  ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  for (k = 0; k < FAILOVER_PROCS; k++) {
    close(control[k][1]);
    if (k != first)
      lock_mp_assert_exit0(lock_mp_wait(pids[k], 10000));
  }
  close(events[0]);
  fleet_test_redis_free(r);
  return 0;
}
