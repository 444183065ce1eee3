/* client_ctx.h -- a client on its own loop, with counters of what its
 * callbacks saw; shared by the client and Redis tests. */
#ifndef FLEET_TEST_CLIENT_CTX_H
#define FLEET_TEST_CLIENT_CTX_H

#include "test.h"

/* What a test saw happen to one client. */
typedef struct {
  uv_loop_t loop;
  fleet_client_t client;
  int states[8];   /* count per fleet_client_state_t */
  int last_status; /* status of the last RECONNECTING */
  int closed;      /* close callbacks */
  int pings_ok, pings_err, pings_canceled;
  int last_ping_status;
  /* fleet_client_last_error() as the last ping callback saw it. */
  char last_ping_detail[256];
  int in_call;     /* set while a fleet call is on the stack */
  int ran_in_call; /* a callback ran inside its call */
  int close_in_cb; /* close the client from the next ping callback */
  int pings_seen;  /* ping callbacks before ctx_ping()'s ping */
  uint64_t time_us;
} client_ctx_t;

/* Initializes the loop and the client (options may be NULL for the
 * defaults; its state_cb is replaced by the recorder). */
void ctx_init(client_ctx_t *t, const char *url, fleet_client_options_t *opts);

/* Closes the client, checks the loop closes cleanly and the close callback
 * ran once. */
void ctx_close(client_ctx_t *t);

/* The close callback ctx_close() uses. */
void ctx_on_close(fleet_client_t *c);

/* A ping callback that counts outcomes. */
void ctx_on_ping(fleet_client_t *c, int status, void *arg);

/* Pings once and runs the loop until the reply; returns its status. */
int ctx_ping(client_ctx_t *t);

/* A time callback that records the clock in `time_us`. */
void ctx_on_time(fleet_client_t *c, int status, uint64_t us, void *arg);

/* Asks the backend for its clock and runs the loop until the reply; returns
 * it in microseconds (also left in `time_us`). */
uint64_t ctx_time(client_ctx_t *t);

/* Runs the loop until the client reports `state` (counting from now) or
 * `ms` (scaled by the slack) pass; returns whether it did. */
int ctx_wait_state(client_ctx_t *t, fleet_client_state_t state, uint64_t ms);

#endif /* FLEET_TEST_CLIENT_CTX_H */
