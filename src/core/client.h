/* client.h -- the client's internals, for the primitives in src/. */
#ifndef FLEET_SRC_CLIENT_H
#define FLEET_SRC_CLIENT_H

#include "backend.h"
#include "common/list.h"
#include "internal.h"

/* Longest key prefix, in bytes. */
#define FLEET__PREFIX_MAX 128

typedef struct fleet__creq_s fleet__creq_t;

struct fleet__client_s {
  fleet_client_t *pub;
  uv_loop_t *loop;
  fleet__url_t url;
  char *prefix;
  size_t prefix_len;
  fleet_client_state_cb state_cb;
  fleet__backend_config_t config;
  fleet__backend_t *be;
  fleet_client_state_t state;
  int closing;
  fleet_client_close_cb close_cb;
  fleet__creq_t *free_reqs;
  /* The handles built on the client (src/core/handle.c): it refuses to close
   * while one is open, and finishes closing after the last has. */
  fleet__list_t handles;
  /* The periodic batcher (src/core/batcher.c); NULL until first used. */
  struct fleet__batcher_s *batcher;
  /* Closing: the backend and the batcher's timer still to close. */
  int closes_left;
  /* The logging hook (src/core/log.c) and the URL as messages show it, with
   * its password redacted (NULL without a hook). */
  fleet_log_cb log_cb;
  void *log_data;
  char *log_url;
  int log_was_ready; /* READY was reached once: the next is a reconnect */
};

/* The backend of an open client, for the primitives. */
static inline fleet__backend_t *fleet__client_backend(fleet_client_t *c) {
  return c->internal_->be;
}

/* Finishes closing `c` once its backend, its batcher and every handle
 * that was closing when the client's close was called have finished. */
void fleet__client_maybe_closed(struct fleet__client_s *c);

/* Whether `c` can take new work: initialized and not closing. */
static inline int fleet__client_usable(const fleet_client_t *c) {
  return c != NULL && c->internal_ != NULL && !c->internal_->closing;
}

/* A call made on a client rather than a handle (a query that reads an
 * object without opening it): checks `client` and the object's `name`
 * (the name rule), then sends `op` on the object's tag "{prefix:name}"
 * with no args. `on_reply` runs once with `arg`, never inside this call
 * (FLEET_ECANCELED when the client closes first). Returns 0, or
 * FLEET_EINVAL (no client), the name's error, FLEET_ECLOSING (the client
 * is closing), FLEET_ENOMEM or the backend's error: then nothing is sent
 * and `on_reply` never runs. */
int fleet__client_tag_call(fleet_client_t *client, const char *name,
                           fleet__op_t op, fleet__reply_cb on_reply, void *arg);
/* As fleet__client_tag_call(), with the `nargs` args `args` (copied by the
 * backend before this returns). */
int fleet__client_tag_call_args(fleet_client_t *client, const char *name,
                                fleet__op_t op, const fleet_bytes_t *args,
                                size_t nargs, fleet__reply_cb on_reply,
                                void *arg);

#endif /* FLEET_SRC_CLIENT_H */
