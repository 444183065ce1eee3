/* test_lock_env.h -- what the lock and leader tests share: two clients of one
 * backend on one loop, a recorder of each lock handle's callbacks, and
 * waiting on the loop with a bound. */
#ifndef FLEET_TEST_LOCK_ENV_H
#define FLEET_TEST_LOCK_ENV_H

#include <sys/types.h>

#include "test.h"

/* Two clients of the same backend (on memory, the second shares the
 * first's store) on one loop, both connected once lock_env_init returns. */
typedef struct {
  uv_loop_t loop;
  fleet_client_t c1;
  fleet_client_t c2;
  int closed;
  int pinged; /* pings answered while starting */
} lock_env_t;

/* What one lock handle's callbacks saw. The handle's data points here. */
typedef struct {
  fleet_lock_t lock;
  int acquired; /* acquire callbacks */
  int acq_status;
  uint64_t token;
  int released; /* release callbacks */
  int rel_status;
  int renewed; /* renew callbacks */
  int renew_status;
  int lost; /* lease-lost callbacks */
  int lost_status;
  uint64_t lost_token;
  int closed;
  int in_call;                   /* set around fleet calls */
  int ran_in_call;               /* a callback ran inside its call */
  uint64_t acquired_ms, lost_ms; /* lock_env_now() at the callbacks */
} lock_rec_t;

void lock_env_init(lock_env_t *e, const char *url);
/* Closes both clients and checks the loop closes cleanly. */
void lock_env_close(lock_env_t *e);

/* The monotonic clock in ms (the same clock fleet's deadlines use). */
uint64_t lock_env_now(void);

/* Runs the loop until `*counter` reaches `want` or `ms` (scaled by the
 * slack) pass; returns whether it did. */
int lock_env_wait(lock_env_t *e, const int *counter, int want, uint64_t ms);

/* Runs the loop for `ms` (not scaled). */
void lock_env_sleep(lock_env_t *e, uint64_t ms);

/* Inits `r`'s lock on `client` with the recorder's lost callback. */
int lock_rec_init(lock_rec_t *r, fleet_client_t *client, const char *name,
                  const char *owner, uint32_t ttl_ms,
                  fleet_lock_options_t *options);

/* Starts an acquire (asserting 0) and waits up to `ms` (scaled) for its
 * callback; returns its status. */
int lock_rec_acquire(lock_env_t *e, lock_rec_t *r, uint64_t wait_ms,
                     uint64_t ms);
/* Starts a release (asserting 0) and waits for its callback; returns its
 * status. */
int lock_rec_release(lock_env_t *e, lock_rec_t *r);
/* Starts a manual renew (asserting 0) and waits; returns its status. */
int lock_rec_renew(lock_env_t *e, lock_rec_t *r);
/* Closes the handle and waits for its close callback. */
void lock_rec_close(lock_env_t *e, lock_rec_t *r);

/* The callbacks the recorder uses, for tests that call fleet directly. */
void lock_rec_on_acquire(fleet_lock_t *lock, int status, uint64_t token,
                         void *arg);
void lock_rec_on_release(fleet_handle_t *lock, int status, void *arg);
void lock_rec_on_renew(fleet_handle_t *lock, int status, void *arg);
void lock_rec_on_lost(fleet_lock_t *lock, int status, uint64_t token);
void lock_rec_on_close(fleet_handle_t *lock);

/* The result of a synchronous-looking fleet_lock_query(). */
typedef struct {
  int status;
  int held;
  char owner[300];
  uint64_t token;
  int64_t ttl_ms;
  uint64_t fence;
} lock_info_t;

/* Queries `name` through `client` and waits for the answer. */
lock_info_t lock_env_query(lock_env_t *e, fleet_client_t *client,
                           const char *name);

/* ------------------------------------------------------------------------ */
/* Child processes                                                          */

/* Forks a child that runs `child(arg)` and then _exit(0)s; a failed
 * assertion in it aborts it. Call it before this process has a loop. */
pid_t lock_mp_fork(void (*child)(void *arg), void *arg);

/* Waits up to `ms` (scaled) for child `pid` to end and returns its wait
 * status; on timeout kills it (SIGKILL), reaps it and fails the test. */
int lock_mp_wait(pid_t pid, uint64_t ms);

/* Asserts that a wait status is a clean exit. */
void lock_mp_assert_exit0(int status);

/* Reads one line (without its newline) from `fd` into `buf`, waiting up to
 * `ms` (scaled). Returns 1, or 0 at end of file; fails the test on
 * timeout. */
int lock_mp_read_line(int fd, char *buf, size_t cap, uint64_t ms);

/* Writes all of `s` to `fd` (a line, for a pipe: atomic up to PIPE_BUF). */
void lock_mp_write(int fd, const char *s);

#endif /* FLEET_TEST_LOCK_ENV_H */
