/* test_lock_env.c -- the helpers of test_lock_env.h: two clients on a loop,
 * lock callback recorders and bounded waits. No tests of its own. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_lock_env.h"

static void env_on_close(fleet_client_t *c) {
  lock_env_t *e = c->data;
  e->closed++;
}

static void env_on_ping(fleet_client_t *client, int status, void *arg) {
  lock_env_t *e = client->data;

  (void)arg;
  ASSERT_OK(status);
  e->pinged++;
}

void lock_env_init(lock_env_t *e, const char *url) {
  fleet_client_options_t o;

  memset(e, 0, sizeof(*e));
  ASSERT_OK(uv_loop_init(&e->loop));
  fleet_client_options_init(&o);
  o.prefix = "locktest";
  o.reconnect_initial_ms = 20;
  o.reconnect_max_ms = 200;
  e->c1.data = e;
  e->c2.data = e;
  ASSERT_OK(fleet_client_init(&e->loop, &e->c1, url, &o));
  if (strncmp(url, "memory:", 7) == 0)
    o.memory_peer = &e->c1;
  ASSERT_OK(fleet_client_init(&e->loop, &e->c2, url, &o));
  /* Connected (and, on a cluster, the slot map read) before the test's
   * first lease: otherwise a short TTL can run out while the first acquire
   * waits for the connection, and the grant comes back too late to use. */
  ASSERT_OK(fleet_client_ping(&e->c1, env_on_ping, NULL));
  ASSERT_OK(fleet_client_ping(&e->c2, env_on_ping, NULL));
  ASSERT(lock_env_wait(e, &e->pinged, 2, FLEET_TEST_WAIT_MS));
}

void lock_env_close(lock_env_t *e) {
  ASSERT_OK(fleet_client_close(&e->c2, env_on_close));
  ASSERT_OK(fleet_client_close(&e->c1, env_on_close));
  fleet_test_loop_close(&e->loop);
  ASSERT_EQ(2, e->closed);
}

uint64_t lock_env_now(void) {
  return uv_hrtime() / 1000000;
}

int lock_env_wait(lock_env_t *e, const int *counter, int want, uint64_t ms) {
  return fleet_test_wait_count(&e->loop, counter, want, fleet_test_ms(ms));
}

void lock_env_sleep(lock_env_t *e, uint64_t ms) {
  fleet_test_sleep(&e->loop, ms);
}

void lock_rec_on_acquire(fleet_lock_t *lock, int status, uint64_t token,
                         void *arg) {
  lock_rec_t *r = lock->data;

  if (r->in_call)
    r->ran_in_call = 1;
  r->acquired++;
  r->acq_status = status;
  r->token = token;
  r->acquired_ms = lock_env_now();
}

void lock_rec_on_release(fleet_handle_t *lock_h, int status, void *arg) {
  fleet_lock_t *lock = (fleet_lock_t *)lock_h;
  lock_rec_t *r = lock->data;

  if (r->in_call)
    r->ran_in_call = 1;
  r->released++;
  r->rel_status = status;
}

void lock_rec_on_renew(fleet_handle_t *lock_h, int status, void *arg) {
  fleet_lock_t *lock = (fleet_lock_t *)lock_h;
  lock_rec_t *r = lock->data;

  if (r->in_call)
    r->ran_in_call = 1;
  r->renewed++;
  r->renew_status = status;
}

void lock_rec_on_lost(fleet_lock_t *lock, int status, uint64_t token) {
  lock_rec_t *r = lock->data;

  r->lost++;
  r->lost_status = status;
  r->lost_token = token;
  r->lost_ms = lock_env_now();
  /* Lost means not held, at once. */
  ASSERT(!fleet_lock_held(lock));
}

void lock_rec_on_close(fleet_handle_t *lock) {
  lock_rec_t *r = lock->data;

  if (r->in_call)
    r->ran_in_call = 1;
  r->closed++;
  ASSERT_NULL(lock->internal_);
}

int lock_rec_init(lock_rec_t *r, fleet_client_t *client, const char *name,
                  const char *owner, uint32_t ttl_ms,
                  fleet_lock_options_t *options) {
  fleet_lock_options_t o;

  memset(r, 0, sizeof(*r));
  if (options == NULL) {
    fleet_lock_options_init(&o);
    options = &o;
  }
  options->lost_cb = lock_rec_on_lost;
  r->lock.data = r;
  return fleet_lock_init(client, &r->lock, name, owner, ttl_ms, options);
}

int lock_rec_acquire(lock_env_t *e, lock_rec_t *r, uint64_t wait_ms,
                     uint64_t ms) {
  int before = r->acquired;

  r->in_call = 1;
  ASSERT_OK(fleet_lock_acquire(&r->lock, wait_ms, lock_rec_on_acquire, r));
  r->in_call = 0;
  ASSERT(lock_env_wait(e, &r->acquired, before + 1, ms));
  ASSERT_EQ(0, r->ran_in_call);
  return r->acq_status;
}

int lock_rec_release(lock_env_t *e, lock_rec_t *r) {
  int before = r->released;

  r->in_call = 1;
  ASSERT_OK(fleet_lock_release(&r->lock, lock_rec_on_release, r));
  r->in_call = 0;
  ASSERT(!fleet_lock_held(&r->lock));
  ASSERT(lock_env_wait(e, &r->released, before + 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(0, r->ran_in_call);
  return r->rel_status;
}

int lock_rec_renew(lock_env_t *e, lock_rec_t *r) {
  int before = r->renewed;

  r->in_call = 1;
  ASSERT_OK(fleet_lock_renew(&r->lock, lock_rec_on_renew, r));
  r->in_call = 0;
  ASSERT(lock_env_wait(e, &r->renewed, before + 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(0, r->ran_in_call);
  return r->renew_status;
}

void lock_rec_close(lock_env_t *e, lock_rec_t *r) {
  r->in_call = 1;
  ASSERT_OK(fleet_lock_close(&r->lock, lock_rec_on_close));
  r->in_call = 0;
  ASSERT_ERR(FLEET_ECLOSING, fleet_lock_close(&r->lock, lock_rec_on_close));
  ASSERT(lock_env_wait(e, &r->closed, 1, FLEET_TEST_WAIT_MS));
  ASSERT_EQ(0, r->ran_in_call);
}

typedef struct {
  lock_info_t info;
  int done;
} env_query_t;

static void env_on_query(fleet_client_t *client, int status,
                         const fleet_lock_info_t *info, void *arg) {
  env_query_t *q = arg;

  q->done = 1;
  q->info.status = status;
  if (status != 0) {
    ASSERT_NULL(info);
    return;
  }
  q->info.held = info->held;
  q->info.token = info->token;
  q->info.ttl_ms = info->ttl_ms;
  q->info.fence = info->fence;
  if (info->held) {
    ASSERT_NOT_NULL(info->owner);
    ASSERT_EQ(strlen(info->owner), info->owner_len);
    ASSERT_LT(info->owner_len, sizeof(q->info.owner));
    memcpy(q->info.owner, info->owner, info->owner_len + 1);
  } else {
    ASSERT_NULL(info->owner);
    ASSERT_EQ(0, info->token);
  }
}

lock_info_t lock_env_query(lock_env_t *e, fleet_client_t *client,
                           const char *name) {
  env_query_t q;

  memset(&q, 0, sizeof(q));
  ASSERT_OK(fleet_lock_query(client, name, env_on_query, &q));
  ASSERT_EQ(0, q.done);
  ASSERT(lock_env_wait(e, &q.done, 1, FLEET_TEST_WAIT_MS));
  return q.info;
}

/* ------------------------------------------------------------------------ */
/* Child processes                                                          */

pid_t lock_mp_fork(void (*child)(void *arg), void *arg) {
  pid_t pid;

  fflush(stdout);
  fflush(stderr);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    child(arg);
    _exit(0);
  }
  return pid;
}

int lock_mp_wait(pid_t pid, uint64_t ms) {
  uint64_t end = lock_env_now() + fleet_test_ms(ms);
  int status = 0;
  pid_t got;

  for (;;) {
    got = waitpid(pid, &status, WNOHANG);
    if (got == pid)
      return status;
    ASSERT(got == 0 || errno == EINTR);
    if (lock_env_now() >= end)
      break;
    usleep(5000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  fleet_test__fail(__FILE__, __LINE__, "child %d did not end in %" PRIu64 " ms",
                   (int)pid, fleet_test_ms(ms));
}

void lock_mp_assert_exit0(int status) {
  if (WIFSIGNALED(status))
    fleet_test__fail(__FILE__, __LINE__, "child killed by signal %d",
                     WTERMSIG(status));
  ASSERT(WIFEXITED(status));
  ASSERT_EQ(0, WEXITSTATUS(status));
}

int lock_mp_read_line(int fd, char *buf, size_t cap, uint64_t ms) {
  uint64_t end = lock_env_now() + fleet_test_ms(ms);
  struct pollfd p;
  size_t n = 0;
  ssize_t got;

  for (;;) {
    uint64_t now = lock_env_now();
    ASSERT(now < end);
    p.fd = fd;
    p.events = POLLIN;
    if (poll(&p, 1, (int)(end - now)) <= 0)
      continue;
    got = read(fd, buf + n, 1);
    if (got < 0 && errno == EINTR)
      continue;
    ASSERT_GE(got, 0);
    if (got == 0)
      return 0;
    if (buf[n] == '\n') {
      buf[n] = '\0';
      return 1;
    }
    ASSERT_LT(++n, cap);
  }
}

void lock_mp_write(int fd, const char *s) {
  size_t len = strlen(s);
  ASSERT_EQ((ssize_t)len, write(fd, s, len));
}
