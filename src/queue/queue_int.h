/* queue_int.h -- what the queue's source files share: the handle's
 * internals, its requests and the helpers of its calls (queue.c), and
 * what the worker uses of its queue (the tag, parking, the complete-and-
 * claim round trip, deliveries). The queue's files include it, and the
 * worker's. */
#ifndef FLEET_SRC_QUEUE_INT_H
#define FLEET_SRC_QUEUE_INT_H

#include <string.h>

#include "core/client.h"
#include "core/handle.h"
#include "fleet/queue.h"
#include "core/args.h"
#include "core/keys.h"

/* The callback of fleet__queue_complete_claim(): the results of the
 * completions (as fleet_queue_batch_cb) and the claimed jobs (as
 * fleet_queue_claim_cb); with an error, NULLs and zeros. */
typedef void (*fleet__queue_complete_claim_cb)(fleet_queue_t *q, int status,
                                               const int *results, size_t n,
                                               fleet_job_t *jobs, size_t njobs,
                                               const fleet_claim_info_t *info,
                                               void *user_data);

/* One call the user waits for (the request base first). Its descriptor
 * (base.call, a static fleet__call_t next to the public call) says which
 * op it sends and how its reply is read; its user callback is base.cb.
 * A reader runs base.cb as the call's fail hook does, right after
 * fleet__req_done(): the request is then back in its handle's pool,
 * untouched until the next call, which can only come from the callback. */
typedef struct fleet__qreq_s {
  fleet__req_t base;
  /* Claims or jobs sent, for the batch replies; the limit of a list. */
  size_t n;
  size_t max_jobs; /* a claim's, with the completions of complete_claim */
  /* Enqueues sent in one call: the next request of the call. */
  struct fleet__qreq_s *enq_next;
  /* A call of rounds (purge, retry): its string argument, whether it
   * goes on while a round does a full batch, and the total so far. */
  const char *round_arg;
  int rounds;
  uint64_t total;
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
   * loop blocks; both made by the first enqueue): their requests, chained
   * by enq_next, the jobs they hold, and copies of their arguments (bytes
   * in `enq_buf`, the length of each of the 10 arguments per job in
   * `enq_lens`). */
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
  /* The token arguments of completions with results (queue_claim.c). */
  char *rbuf;
  size_t rbuf_cap;

  /* Events (queue_events.c): the subscription, its channel "<tag>:events",
   * the lease timer (made by the first start), the callback, and the one
   * job followed (NULL: all). */
  fleet__sub_t *ev_sub;
  fleet__key_t ev_channel;
  uv_timer_t ev_timer;
  int ev_timer_on;
  fleet_queue_event_cb ev_cb;
  void *ev_ud;
  char *ev_job;
  size_t ev_job_len;

  /* A partitioned queue (queue_parts.c): its `nparts` (2 or more) child
   * handles, one per partition, the turn of round-robin placements and
   * claims, the options given (for the children), fleet_queue_open()'s
   * callback, and the events' callback. nparts 0: a plain queue. */
  uint32_t nparts;
  fleet_queue_t **parts;
  uint32_t qp_rr;
  fleet_queue_options_t given;
  fleet_queue_partitions_cb qp_open_cb;
  void *qp_open_ud;
  fleet_queue_event_cb qp_ev_cb;
  void *qp_ev_ud;
};

/* ------------------------------------------------------------------------ */
/* Calls (queue.c)                                                          */

/* The entry of a public queue call (fleet__call_enter()): the internals
 * of `pub` if it can take a call, else NULL and `*err` is FLEET_EINVAL
 * (not an initialized queue, or `need_cb` and no callback) or
 * FLEET_ECLOSING. */
static inline struct fleet__queue_s *fleet__queue_enter(fleet_queue_t *pub,
                                                        int need_cb, int *err) {
  return (struct fleet__queue_s *)fleet__call_enter(pub, FLEET_HANDLE_QUEUE,
                                                    need_cb, err);
}

/* The queue's tag, "{prefix:name}": KEYS[1] of every op. */
fleet_bytes_t fleet__queue_tag(const fleet_queue_t *pub);

/* A request of `call` whose answer goes to `cb` (cast to fleet__fn_t)
 * with `user_data`; NULL when out of memory. */
static inline fleet__qreq_t *fleet__queue_new(struct fleet__queue_s *q,
                                              const fleet__call_t *call,
                                              fleet__fn_t cb, void *user_data) {
  return (fleet__qreq_t *)fleet__call_new(&q->base, call, cb, user_data);
}

/* Sends the op of `req`'s call with KEYS[1] = the tag and the arguments
 * built in `q->args`. Returns 0 (the reply goes to the call's `read`), or
 * an error: then `req` is given back and no callback runs. */
int fleet__queue_send(struct fleet__queue_s *q, fleet__qreq_t *req);

/* The same for a later round of a call (or the first of a shared call,
 * which has others to tell): on error `req` is left as it was, for the
 * caller to finish. */
int fleet__queue_send_next(struct fleet__queue_s *q, fleet__qreq_t *req);

/* fleet__queue_new() and fleet__queue_send() in one: returns 0 or an
 * error, and then nothing is left behind and no callback runs. */
int fleet__queue_call(struct fleet__queue_s *q, const fleet__call_t *call,
                      fleet__fn_t cb, void *user_data);

/* A whole call on `pub` whose arguments need no check: the entry, then
 * the arguments `str` (left out when NULL) and the `n` numbers `nums`,
 * then fleet__queue_call(). Returns 0 or an error, as the public call
 * does. */
int fleet__queue_call_args(fleet_queue_t *pub, const fleet__call_t *call,
                           fleet__fn_t cb, void *user_data, const char *str,
                           const uint64_t *nums, size_t n);

/* ------------------------------------------------------------------------ */
/* Replies                                                                  */

/* Checks one job spec by fleet_queue_enqueue()'s rules. Returns 0,
 * FLEET_EINVAL or FLEET_E2BIG. */
int fleet__queue_spec_ok(const fleet_job_spec_t *s);

/* Headers (queue_headers.c; docs/queue.md, "Headers and tracing"). Checks
 * `n` headers by fleet_job_spec_t's rules and sets `*wire` to the bytes
 * of their wire form ("<key>=<value>" items separated by "\t"). Returns
 * 0, FLEET_EINVAL or FLEET_E2BIG. */
int fleet__queue_headers_ok(const fleet_header_t *h, size_t n, size_t *wire);

/* Writes the wire form of `n` checked headers to `out` (room for what
 * fleet__queue_headers_ok() said). Returns the bytes written. */
size_t fleet__queue_headers_wire(const fleet_header_t *h, size_t n, char *out);

/* Unpacks `len` bytes of stored headers (the wire form) into the packed
 * form of fleet_job_t.headers, "<key>\0<value>\0" per header, at `out`
 * (room for 2 * len + 2 bytes). Returns the bytes written. */
size_t fleet__queue_headers_unpack(const char *src, size_t len, char *out);

/* The attempt history (queue_errs.c; docs/queue.md, "Attempt history"):
 * the number of entries of its stored form (`len` bytes at `s`), 0 when
 * there are none or fleet cannot read one of them. */
size_t fleet__queue_errs_count(const char *s, size_t len);

/* Encodes `n` checked specs as QUEUE_ENQUEUE takes them (12 arguments
 * each) into the enqueue buffers, after sending the enqueues waiting in
 * them: argument i is q->enq_lens[i] bytes, one after the other from
 * q->enq_buf. Returns 0 or FLEET_ENOMEM. Call fleet__queue_specs_reset()
 * once the arguments were sent (or on error). */
int fleet__queue_specs_encode(struct fleet__queue_s *q,
                              const fleet_job_spec_t *const *specs, size_t n);
void fleet__queue_specs_reset(struct fleet__queue_s *q);

/* Makes room for `len` more bytes of NUL-terminated copies in `q->strs`
 * (which may move). Returns 0 or FLEET_ENOMEM. */
int fleet__queue_strs_reserve(struct fleet__queue_s *q, size_t len);

/* Copies `b` plus a NUL into `q->strs` (room reserved) and returns it. */
const char *fleet__queue_strs_add(struct fleet__queue_s *q, fleet_bytes_t b);

/* Copies the `n` string replies r->elem[first ..] (r an array that has
 * them) to `q->strs` (emptied first) and points q->ids[0 .. n - 1] at
 * them. Returns 0, FLEET_EPROTO (an element is not a string) or
 * FLEET_ENOMEM. */
int fleet__queue_reply_ids(struct fleet__queue_s *q, const fleet__reply_t *r,
                           size_t first, size_t n);

/* The reader of a call whose reply is 1 and whose callback is a
 * fleet_status_cb (cancel, the flow limits' set, hold and weight). */
void fleet__queue_status_reply(fleet__req_t *base, int status,
                               const fleet__reply_t *r);

/* Sends `call` on `pub`, whose only argument is job `id` (checked: a
 * string of 1 to FLEET_JOB_ID_MAX bytes). Returns 0 or an error, as the
 * public call does (queue_produce.c). */
int fleet__queue_id_call(fleet_queue_t *pub, const char *id,
                         const fleet__call_t *call, fleet__fn_t cb,
                         void *user_data);

/* The state name the scripts write, as an enum. Returns 0 or
 * FLEET_EPROTO (queue_produce.c). */
int fleet__queue_parse_state(fleet_bytes_t b, fleet_job_state_t *out);

/* Reads a reply of two numbers, {a, b}. Returns 0 or FLEET_EPROTO. */
int fleet__queue_read_pair(const fleet__reply_t *r, uint64_t *a, uint64_t *b);

/* ------------------------------------------------------------------------ */
/* The worker's round trip (queue_claim.c)                                  */

/* Claims up to `max_jobs` jobs as fleet_queue_claim() does, then completes
 * the `n` claims as fleet_queue_complete_results() does (`results` NULL:
 * none), in one call
 * (QUEUE_COMPLETE_CLAIM). The same arguments, checks and returns as
 * those two; `cb` runs once, as theirs do. On an error reply (the claim
 * raised before anything was written, or the call failed), the claims may
 * not have been completed. */
int fleet__queue_complete_claim(fleet_queue_t *q, const fleet_claim_t *claims,
                                const fleet_bytes_t *results, size_t n,
                                size_t max_jobs, uint32_t claim_ttl_ms,
                                fleet__queue_complete_claim_cb cb,
                                void *user_data);

/* fleet_queue_release(), and in the same call holds the claims of the
 * queue (`group` 0) or of each released job's group (1) for `hold_ms` (0:
 * no hold): fleet_job_rate_limit(). */
int fleet__queue_release_hold(fleet_queue_t *q, const fleet_claim_t *claims,
                              size_t n, uint32_t hold_ms, int group,
                              fleet_queue_batch_cb cb, void *user_data);

/* ------------------------------------------------------------------------ */
/* Deliveries (queue_claim.c)                                              */

/* Reads a delivery, the message a parked worker gets on its channel
 * "<tag>:jobs:w:<id>" (lib/queue_add.lua: queue_deliver), into `info` and
 * `*jobs` (`*n` of them, at most FLEET_QUEUE_BATCH_MAX), as a claim's
 * reply is read: they stay valid until the queue's next reply. Returns 0,
 * FLEET_EPROTO or FLEET_ENOMEM. */
int fleet__queue_delivery_read(fleet_queue_t *q, const char *msg, size_t len,
                               fleet_claim_info_t *info, fleet_job_t **jobs,
                               size_t *n);

/* ------------------------------------------------------------------------ */
/* Numbers                                                                  */

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

/* ------------------------------------------------------------------------ */
/* The calls of one queue, and partitioned queues                           */

/* Whether `pub` is a handle of a partitioned queue (queue_parts.c). */
static inline int fleet__qp_is(const fleet_queue_t *pub) {
  const struct fleet__queue_s *q =
      (const struct fleet__queue_s *)fleet__handle_of(pub, FLEET_HANDLE_QUEUE);
  return q != NULL && q->nparts > 1;
}

/* The public calls are defined in queue_parts.c: a call of a plain handle
 * goes to the one of these that has its name with "fleet__", with the
 * same arguments and returns (queue.c, queue_produce.c, queue_claim.c,
 * queue_admin.c, queue_flow.c, queue_deps.c, queue_events.c); a
 * partitioned handle's is sent to its partitions' plain handles through
 * these too. */
int fleet__queue_init(fleet_client_t *client, fleet_queue_t *q,
                      const char *name, const fleet_queue_options_t *options);
/* Undoes fleet__queue_init() of `pub` (nothing sent yet): no callback. */
void fleet__queue_abort(fleet_queue_t *pub);

/* The fan-out of a partitioned handle's calls (queue_parts.c), with the
 * arguments and returns of the public calls they stand for. */
int fleet__qp_enqueue(fleet_queue_t *pub, const fleet_job_spec_t *specs,
                      size_t n, fleet_queue_enqueue_cb cb, void *user_data);
int fleet__qp_claim(fleet_queue_t *pub, size_t max_jobs, uint32_t ttl_ms,
                    fleet_queue_claim_cb cb, void *user_data);
/* `kind`: 0 complete, 1 complete with results, 2 refresh, 3 release. */
int fleet__qp_claims(fleet_queue_t *pub, int kind, const fleet_claim_t *claims,
                     const fleet_bytes_t *results, size_t n, uint32_t ttl_ms,
                     fleet_queue_batch_cb cb, void *user_data);
/* What fleet__qp_one() and fleet__qp_all() do. */
enum {
  FLEET__QP_FAIL = 10,
  FLEET__QP_PROGRESS,
  FLEET__QP_GET,
  FLEET__QP_CANCEL,
  FLEET__QP_CANCEL_JOB,
  FLEET__QP_CHILDREN,
  FLEET__QP_RETRY,
  FLEET__QP_COUNTS,
  FLEET__QP_PURGE,
  FLEET__QP_RECOVER,
  FLEET__QP_PAUSE,
  FLEET__QP_SET_LIMITS,
  FLEET__QP_HOLD,
  FLEET__QP_WEIGHT,
  FLEET__QP_LIMITS,
  FLEET__QP_LIST,
  FLEET__QP_JOBS,
  FLEET__QP_GROUPS,
  FLEET__QP_JOB_DELETE,
  FLEET__QP_JOB_RUN,
  FLEET__QP_JOB_KILL,
  FLEET__QP_HISTORY,
  FLEET__QP_SAMPLE,
  FLEET__QP_REMOVE
};

/* A call about one job (`id`, or `claim`'s), sent to its partition:
 * FLEET__QP_FAIL (data: the error), PROGRESS (num: the percent, data),
 * GET, CANCEL, CANCEL_JOB (num: the grace), CHILDREN, RETRY, JOB_DELETE,
 * JOB_RUN, JOB_KILL. */
/* One job's verb on one plain queue (queue_verbs.c): `what` is
 * FLEET__QP_JOB_DELETE, JOB_RUN or JOB_KILL. */
int fleet__queue_job_verb(fleet_queue_t *q, int what, const char *id,
                          fleet_queue_job_verb_cb cb, void *user_data);
int fleet__qp_one(fleet_queue_t *pub, int what, const char *id,
                  const fleet_claim_t *claim, const void *data, size_t len,
                  uint32_t num, fleet__fn_t cb, void *user_data);
/* A call sent to every partition, whose answers are added up: COUNTS,
 * PURGE (arg: the state), RECOVER, RETRY (of every dead job), PAUSE (arg:
 * 0 pause, 1 resume, 2 status), SET_LIMITS (ptr), HOLD and WEIGHT (str:
 * the group, a: the ms or weight), LIMITS, LIST (str: the type), JOBS
 * (arg: the state, str: a group or NULL, a: the cursor, b: payload_max),
 * GROUPS (str: after), HISTORY (arg: the resolution, a and b: from_ms
 * and to_ms as int64_t), SAMPLE (a: the depth, FLEET_HIST_NO_SAMPLE or
 * any other: each partition records its own), with `limit` where the
 * call has one. */
int fleet__qp_all(fleet_queue_t *pub, int what, int arg, const void *ptr,
                  const char *str, uint64_t a, uint64_t b, size_t limit,
                  fleet__fn_t cb, void *user_data);
/* fleet_queue_remove() of a partitioned queue: every partition checked
 * (without force), then removed, then the partition record deleted. */
int fleet__qp_remove(fleet_queue_t *pub, int force, fleet_queue_remove_cb cb,
                     void *user_data);
/* Removes the one queue of plain handle `q` (queue_verbs.c). */
int fleet__queue_remove(fleet_queue_t *q, int force, fleet_queue_remove_cb cb,
                        void *user_data);
/* Deletes the partition record of the queue of plain handle `pub`
 * (queue_parts_api.c): the callback gets 1 when there was one, else 0. */
int fleet__queue_parts_drop(fleet_queue_t *pub, fleet_queue_partitions_cb cb,
                            void *user_data);
int fleet__qp_events_start(fleet_queue_t *pub, const char *job_id,
                           fleet_queue_event_cb cb, void *user_data);
int fleet__qp_events_stop(fleet_queue_t *pub);
/* A queue's history and the readers' sample on one plain queue
 * (queue_history.c). */
int fleet__queue_history(fleet_queue_t *pub, fleet_hist_res_t res,
                         int64_t from_ms, int64_t to_ms,
                         fleet_queue_history_cb cb, void *user_data);
int fleet__queue_sample(fleet_queue_t *pub, uint64_t depth,
                        fleet_queue_sample_cb cb, void *user_data);
int fleet__queue_enqueue(fleet_queue_t *q, const fleet_job_spec_t *specs,
                         size_t n, fleet_queue_enqueue_cb cb, void *user_data);
int fleet__queue_get(fleet_queue_t *q, const char *id, fleet_queue_get_cb cb,
                     void *user_data);
int fleet__queue_cancel(fleet_queue_t *q, const char *id, fleet_status_cb cb,
                        void *user_data);
int fleet__queue_cancel_job(fleet_queue_t *q, const char *id, uint32_t grace_ms,
                            fleet_queue_cancel_cb cb, void *user_data);
int fleet__queue_counts(fleet_queue_t *q, fleet_queue_counts_cb cb,
                        void *user_data);
int fleet__queue_list(fleet_queue_t *q, const char *type, size_t limit,
                      fleet_queue_list_cb cb, void *user_data);
int fleet__queue_purge(fleet_queue_t *q, fleet_job_state_t which,
                       fleet_queue_purge_cb cb, void *user_data);
int fleet__queue_claim(fleet_queue_t *q, size_t max_jobs, uint32_t claim_ttl_ms,
                       fleet_queue_claim_cb cb, void *user_data);
int fleet__queue_refresh(fleet_queue_t *q, const fleet_claim_t *claims,
                         size_t n, uint32_t claim_ttl_ms,
                         fleet_queue_batch_cb cb, void *user_data);
int fleet__queue_complete(fleet_queue_t *q, const fleet_claim_t *claims,
                          size_t n, fleet_queue_batch_cb cb, void *user_data);
int fleet__queue_complete_results(fleet_queue_t *q, const fleet_claim_t *claims,
                                  const fleet_bytes_t *results, size_t n,
                                  fleet_queue_batch_cb cb, void *user_data);
int fleet__queue_release(fleet_queue_t *q, const fleet_claim_t *claims,
                         size_t n, fleet_queue_batch_cb cb, void *user_data);
int fleet__queue_progress(fleet_queue_t *q, const fleet_claim_t *claim,
                          uint32_t pct, const void *data, size_t len,
                          fleet_status_cb cb, void *user_data);
int fleet__queue_fail(fleet_queue_t *q, const fleet_claim_t *claim,
                      const void *error, size_t error_len,
                      fleet_queue_fail_cb cb, void *user_data);
int fleet__queue_recover(fleet_queue_t *q, fleet_queue_recover_cb cb,
                         void *user_data);
int fleet__queue_jobs(fleet_queue_t *q, fleet_job_state_t state,
                      uint64_t cursor, size_t limit, size_t payload_max,
                      fleet_queue_jobs_cb cb, void *user_data);
int fleet__queue_group_jobs(fleet_queue_t *q, const char *group,
                            uint64_t cursor, size_t limit, size_t payload_max,
                            fleet_queue_jobs_cb cb, void *user_data);
int fleet__queue_retry(fleet_queue_t *q, const char *id,
                       fleet_queue_retry_cb cb, void *user_data);
int fleet__queue_pause(fleet_queue_t *q, fleet_queue_paused_cb cb,
                       void *user_data);
int fleet__queue_resume(fleet_queue_t *q, fleet_queue_paused_cb cb,
                        void *user_data);
int fleet__queue_paused(fleet_queue_t *q, fleet_queue_paused_cb cb,
                        void *user_data);
int fleet__queue_set_limits(fleet_queue_t *q,
                            const fleet_queue_limits_t *limits,
                            fleet_status_cb cb, void *user_data);
int fleet__queue_limits(fleet_queue_t *q, fleet_queue_limits_cb cb,
                        void *user_data);
int fleet__queue_hold(fleet_queue_t *q, const char *group, uint32_t wait_ms,
                      fleet_status_cb cb, void *user_data);
int fleet__queue_set_group_weight(fleet_queue_t *q, const char *group,
                                  uint32_t weight, fleet_status_cb cb,
                                  void *user_data);
int fleet__queue_groups(fleet_queue_t *q, const char *after, size_t limit,
                        fleet_queue_groups_cb cb, void *user_data);
int fleet__queue_add_flow(fleet_queue_t *q, const fleet_flow_spec_t *flow,
                          fleet_queue_flow_cb cb, void *user_data);
int fleet__queue_children(fleet_queue_t *q, const char *id,
                          fleet_queue_children_cb cb, void *user_data);
int fleet__queue_events_start(fleet_queue_t *q, const char *job_id,
                              fleet_queue_event_cb cb, void *user_data);
int fleet__queue_events_stop(fleet_queue_t *q);

#endif /* FLEET_SRC_QUEUE_INT_H */
