/* queue_int.h -- what the queue's source files share: the handle's
 * internals, its requests, reply checks and input validation. The queue's
 * files include it, and the worker's (for the tag of its queue). */
#ifndef FLEET_SRC_QUEUE_INT_H
#define FLEET_SRC_QUEUE_INT_H

#include <string.h>

#include "core/client.h"
#include "core/handle.h"
#include "fleet/queue.h"
#include "core/args.h"
#include "core/keys.h"

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
  FLEET__QREQ_COMPLETE_CLAIM,
  FLEET__QREQ_RELEASE,
  FLEET__QREQ_FAIL,
  FLEET__QREQ_RECOVER,
  FLEET__QREQ_GET,
  FLEET__QREQ_CANCEL,
  FLEET__QREQ_COUNTS,
  FLEET__QREQ_LIST,
  FLEET__QREQ_PURGE
} fleet__qreq_kind_t;

/* The callback of fleet__queue_complete_claim(): the results of the
 * completions (as fleet_queue_batch_cb) and the claimed jobs (as
 * fleet_queue_claim_cb); with an error, NULLs and zeros. */
typedef void (*fleet__queue_complete_claim_cb)(fleet_queue_t *q, int status,
                                               const int *results, size_t n,
                                               fleet_job_t *jobs, size_t njobs,
                                               const fleet_claim_info_t *info,
                                               void *user_data);

/* The user callback of a request, by kind. */
typedef union {
  fleet_queue_enqueue_cb enqueue;
  fleet_queue_claim_cb claim;
  fleet_queue_batch_cb batch;
  fleet__queue_complete_claim_cb complete_claim;
  fleet_queue_fail_cb fail;
  fleet_queue_recover_cb recover;
  fleet_queue_get_cb get;
  fleet_status_cb status;
  fleet_queue_counts_cb counts;
  fleet_queue_list_cb list;
  fleet_queue_purge_cb purge;
} fleet__qreq_cb_t;

/* One call the user waits for (the request base first). */
typedef struct fleet__qreq_s {
  fleet__req_t base;
  fleet__qreq_kind_t kind;
  /* Claims or jobs sent, for the batch replies; the limit of a list. */
  size_t n;
  size_t max_jobs; /* a claim's, with the completions of complete_claim */
  /* Enqueues sent in one call: the next request of the call. */
  struct fleet__qreq_s *enq_next;
  /* Purge: which zset, and how many records were removed so far. */
  const char *purge_which;
  uint64_t purged;
  fleet__qreq_cb_t cb;
} fleet__qreq_t;

struct fleet__queue_s {
  fleet__handle_t base;
  char *name;
  fleet__key_t tag; /* "{prefix:name}", KEYS[1] of every op */
  fleet_queue_options_t opts;
  fleet__rng_t rng;   /* the jitter of failed jobs' backoff */
  fleet__args_t args; /* the arguments of the call being built */

  /* Enqueues made during one loop phase go out as one call at its end
   * (the check handle after I/O callbacks, the prepare handle before the
   * loop blocks): their requests, chained by enq_next, the jobs they
   * hold, and copies of their arguments (bytes in `enq_buf`, the length
   * of each of the 10 arguments per job in `enq_lens`). */
  fleet__phase_end_t enq_flush;
  fleet__qreq_t *enq_first, *enq_last;
  size_t enq_jobs;
  char *enq_buf;
  size_t enq_buf_len, enq_buf_cap;
  size_t *enq_lens;
  size_t enq_nargs, enq_lens_cap;

  /* A worker's internal queue parks its worker with each claim
   * (docs/queue.md, "Delivery to idle workers"): the worker's id and the
   * ms a job delivered to it is claimed for. park_len 0: no parking. */
  char park_id[24];
  size_t park_len;
  uint32_t park_ttl_ms;
  /* A delivery read as a claim's reply (fleet__queue_delivery_read). */
  fleet__reply_t *dl;
  size_t dl_cap;

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

/* The internals of `pub` if it can take a call; else NULL and `*err` is
 * FLEET_EINVAL (not an initialized queue) or FLEET_ECLOSING. */
struct fleet__queue_s *fleet__queue_usable(fleet_queue_t *pub, int *err);

/* The queue's tag, "{prefix:name}": KEYS[1] of every op. */
fleet_bytes_t fleet__queue_tag(const fleet_queue_t *pub);

/* A request of `kind` whose user callback `cancel` runs with an error and
 * nothing else; NULL when out of memory. */
fleet__qreq_t *fleet__qreq_new(struct fleet__queue_s *q,
                               fleet__qreq_kind_t kind,
                               fleet__req_cancel_fn cancel, void *user_data);

/* Sends `op` with KEYS[1] = the tag and the arguments built in `q->args`,
 * for `req`. Returns 0 (the reply comes to fleet__queue_claims_reply() or
 * fleet__queue_produce_reply()), or an error and `req` is given back. */
int fleet__queue_send(struct fleet__queue_s *q, fleet__op_t op,
                      fleet__qreq_t *req);

/* Finishes `req` and runs its user callback with `status` and nothing
 * else (its cancel hook); so for every enqueue that shared its call. */
void fleet__queue_deliver_error(fleet__qreq_t *req, int status);

/* ------------------------------------------------------------------------ */
/* Replies                                                                  */

/* Makes room for `len` more bytes of NUL-terminated copies in `q->strs`
 * (which may move). Returns 0 or FLEET_ENOMEM. */
int fleet__queue_strs_reserve(struct fleet__queue_s *q, size_t len);

/* Copies `b` plus a NUL into `q->strs` (room reserved) and returns it. */
const char *fleet__queue_strs_add(struct fleet__queue_s *q, fleet_bytes_t b);

/* Sends the enqueues made during this loop phase, as one call. */
void fleet__queue_enqueue_flush(struct fleet__queue_s *q);
/* The enqueue flush at the end of a phase: queue.c makes the pair,
 * fleet_queue_enqueue() arms it. */
void fleet__queue_on_enq_flush(fleet__phase_end_t *pe, int in_prepare);

/* Turn a successful reply into the user callback, for the claim ops
 * (queue_claim.c) and the producer ops (queue_produce.c). Each finishes
 * the request before it runs the callback (or re-sends it). */
void fleet__queue_claims_reply(fleet__qreq_t *req, const fleet__reply_t *reply);
void fleet__queue_produce_reply(fleet__qreq_t *req,
                                const fleet__reply_t *reply);

/* The result code of the batch ops (1, 2, 0, -1) as a fleet status, or
 * FLEET_EPROTO for anything else. */
int fleet__queue_batch_code(const fleet__reply_t *r);

/* ------------------------------------------------------------------------ */
/* The worker's round trip (queue_claim.c)                                  */

/* Claims up to `max_jobs` jobs as fleet_queue_claim() does, then completes
 * the `n` claims as fleet_queue_complete() does, in one call
 * (QUEUE_COMPLETE_CLAIM). The same arguments, checks and returns as
 * those two; `cb` runs once, as theirs do. On an error reply (the claim
 * raised before anything was written, or the call failed), the claims may
 * not have been completed. */
int fleet__queue_complete_claim(fleet_queue_t *q, const fleet_claim_t *claims,
                                size_t n, size_t max_jobs,
                                uint32_t claim_ttl_ms,
                                fleet__queue_complete_claim_cb cb,
                                void *user_data);

/* ------------------------------------------------------------------------ */
/* Validation                                                               */

/* Reads a delivery, the message a parked worker gets on its channel
 * "<tag>:jobs:w:<id>" (lib/queue_add.lua: queue_deliver), into `info` and
 * `*jobs` (`*n` of them, at most FLEET_QUEUE_BATCH_MAX), as a claim's
 * reply is read: they stay valid until the queue's next reply. Returns 0,
 * FLEET_EPROTO or FLEET_ENOMEM. */
int fleet__queue_delivery_read(fleet_queue_t *q, const char *msg, size_t len,
                               fleet_claim_info_t *info, fleet_job_t **jobs,
                               size_t *n);

/* Checks a batch of claims: n in range, each id valid. Returns 0,
 * FLEET_EINVAL or FLEET_E2BIG (an id too long). */
int fleet__queue_claims_ok(const fleet_claim_t *claims, size_t n);

/* Writes the decimal of `v` at `out` (at least 21 bytes), NUL-terminated;
 * returns its length. On the per-job paths instead of snprintf, whose
 * format parsing cost more than the rest of a job's token handling. */
static inline size_t fleet__queue_dec(char *out, uint64_t v) {
  char tmp[20], *p = tmp + sizeof(tmp);
  size_t len;

  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0);
  len = (size_t)(tmp + sizeof(tmp) - p);
  memcpy(out, p, len);
  out[len] = '\0';
  return len;
}

#endif /* FLEET_SRC_QUEUE_INT_H */
