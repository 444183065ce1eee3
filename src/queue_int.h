/* queue_int.h -- what the queue's source files share: the handle's
 * internals, its pooled requests, the argument builder, reply checks and
 * input validation. Only src/queue*.c include it. */
#ifndef FLEET_SRC_QUEUE_INT_H
#define FLEET_SRC_QUEUE_INT_H

#include "client.h"
#include "fleet/queue.h"
#include "args.h"
#include "keys.h"

/* Claims a queue op sends when it recovers, and records a purge deletes,
 * per round trip. */
#define FLEET__QUEUE_RECOVER_LIMIT 1000
#define FLEET__QUEUE_PURGE_LIMIT 1000

/* What a request is for; it decides how its reply is read. */
typedef enum {
  FLEET__QREQ_ENQUEUE,
  FLEET__QREQ_CLAIM,
  FLEET__QREQ_REFRESH,
  FLEET__QREQ_COMPLETE,
  FLEET__QREQ_RELEASE,
  FLEET__QREQ_FAIL,
  FLEET__QREQ_RECOVER,
  FLEET__QREQ_GET,
  FLEET__QREQ_CANCEL,
  FLEET__QREQ_COUNTS,
  FLEET__QREQ_LIST,
  FLEET__QREQ_PURGE
} fleet__qreq_kind_t;

/* The user callback of a request, by kind. */
typedef union {
  fleet_queue_enqueue_cb enqueue;
  fleet_queue_claim_cb claim;
  fleet_queue_batch_cb batch;
  fleet_queue_fail_cb fail;
  fleet_queue_recover_cb recover;
  fleet_queue_get_cb get;
  fleet_queue_status_cb status;
  fleet_queue_counts_cb counts;
  fleet_queue_list_cb list;
  fleet_queue_purge_cb purge;
} fleet__qreq_cb_t;

/* One call in flight: from the backend call until its reply. Pooled per
 * handle. */
typedef struct fleet__qreq_s {
  struct fleet__qreq_s *next;
  struct fleet__qreq_s *prev;
  struct fleet__queue_s *q;
  fleet__qreq_kind_t kind;
  /* The user heard FLEET_ECANCELED already: the reply is dropped. */
  int canceled;
  /* Claims or jobs sent, for the batch replies; the limit of a list. */
  size_t n;
  /* Purge: which zset, and how many records were removed so far. */
  const char *purge_which;
  uint64_t purged;
  fleet__qreq_cb_t cb;
  void *user_data;
} fleet__qreq_t;

struct fleet__queue_s {
  fleet_queue_t *pub;
  fleet_client_t *client;
  char *name;
  fleet__key_t tag; /* "{prefix:name}", KEYS[1] of every op */
  fleet_queue_options_t opts;
  fleet__rng_t rng; /* the jitter of failed jobs' backoff */

  fleet__qreq_t *live; /* requests whose user has not heard back */
  fleet__qreq_t *free_reqs;
  size_t outstanding; /* backend calls not yet answered */

  int closing;
  int cancel_done; /* the close's cancellation pass ran */
  fleet_queue_close_cb close_cb;
  uv_timer_t timer; /* defers the cancellation pass and the close */

  /* The argument vector of the call being built; numbers are formatted
   * into `nums`, reserved up front so that pointers into it stay valid. */
  fleet_bytes_t *argv;
  size_t argc, argv_cap;
  char *nums;
  size_t nums_len, nums_cap;

  /* What replies are turned into; reused, since reply callbacks never
   * nest. Strings handed out are NUL-terminated copies in `strs`. */
  int *results;
  size_t results_cap;
  fleet_job_t *jobs;
  size_t jobs_cap;
  fleet_enqueue_result_t *enq;
  size_t enq_cap;
  const char **ids;
  size_t ids_cap;
  char *strs;
  size_t strs_len, strs_cap;
};

/* ------------------------------------------------------------------------ */
/* Requests and calls (queue.c)                                             */

/* Checks that `q` can take a call: initialized and neither it nor its
 * client closing. Returns 0, FLEET_EINVAL or FLEET_ECLOSING. */
int fleet__queue_usable(fleet_queue_t *q);

/* Starts building the arguments of a call with room for `nargs` arguments
 * of which up to `nnums` are numbers. Returns 0 or FLEET_ENOMEM. */
int fleet__qargs_begin(struct fleet__queue_s *q, size_t nargs, size_t nnums);
void fleet__qargs_bytes(struct fleet__queue_s *q, const void *p, size_t len);
void fleet__qargs_str(struct fleet__queue_s *q, const char *s);
void fleet__qargs_u64(struct fleet__queue_s *q, uint64_t v);
void fleet__qargs_i64(struct fleet__queue_s *q, int64_t v);

/* A pooled request of `kind`, or NULL when out of memory. */
fleet__qreq_t *fleet__qreq_get(struct fleet__queue_s *q,
                               fleet__qreq_kind_t kind, void *user_data);

/* Sends `op` with KEYS[1] = the tag and the arguments built, for `req`.
 * Returns 0 (the reply comes to fleet__queue_on_reply_*), or an error and
 * `req` went back to the pool. */
int fleet__queue_send(struct fleet__queue_s *q, fleet__op_t op,
                      fleet__qreq_t *req);

/* Gives back a request whose reply was handled (or never came). */
void fleet__qreq_put(fleet__qreq_t *req);

/* ------------------------------------------------------------------------ */
/* Replies                                                                  */

/* Makes room for `len` more bytes of NUL-terminated copies in `q->strs`
 * (which may move). Returns 0 or FLEET_ENOMEM. */
int fleet__queue_strs_reserve(struct fleet__queue_s *q, size_t len);

/* Copies `b` plus a NUL into `q->strs` (room reserved) and returns it. */
const char *fleet__queue_strs_add(struct fleet__queue_s *q, fleet_bytes_t b);

/* Grows a scratch array to hold `n` items of `size` bytes. Returns 0 or
 * FLEET_ENOMEM. */
int fleet__queue_grow(void **arr, size_t *cap, size_t n, size_t size);

/* Turn a successful reply into the user callback, for the claim ops
 * (queue_claim.c) and the producer ops (queue_produce.c). Each gives the
 * request back before it runs the callback (or re-sends it). */
void fleet__queue_claims_reply(fleet__qreq_t *req, const fleet__reply_t *reply);
void fleet__queue_produce_reply(fleet__qreq_t *req,
                                const fleet__reply_t *reply);

/* Gives `req` back and runs its callback with `status` and nothing else. */
void fleet__queue_deliver_error(fleet__qreq_t *req, int status);

/* The result code of the batch ops (1, 2, 0, -1) as a fleet status, or
 * FLEET_EPROTO for anything else. */
int fleet__queue_batch_code(const fleet__reply_t *r);

/* ------------------------------------------------------------------------ */
/* Validation                                                               */

/* Whether `s` is a NUL-terminated string of 1 to `max` bytes; sets
 * `*len`. */
int fleet__queue_str_ok(const char *s, size_t max, size_t *len);

/* Checks a batch of claims: n in range, each id valid. Returns 0 or
 * FLEET_EINVAL. */
int fleet__queue_claims_ok(const fleet_claim_t *claims, size_t n);

#endif /* FLEET_SRC_QUEUE_INT_H */
