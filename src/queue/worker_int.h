/* worker_int.h -- what the worker's source files share: the worker state
 * machine, job slots, batches of claims in flight, and the functions the
 * lifecycle (worker.c) and the job side (worker_jobs.c) call in each
 * other, and the pools of slots and batches (worker_slots.c). Only the
 * worker's files include it (and tests of its internals). */
#ifndef FLEET_SRC_WORKER_INT_H
#define FLEET_SRC_WORKER_INT_H

#include "core/batcher.h"
#include "core/client.h"
#include "core/handle.h"
#include "core/keys.h"
#include "core/registry.h"
#include "fleet/queue.h"
#include "fleet/worker.h"

/* Claims in flight at once, at most. */
#define FLEET__WORKER_CLAIMS_MAX 2

/* The worker's states:
 *   IDLE      initialized, not started;
 *   RUNNING   claiming;
 *   STOPPING  claiming nothing, waiting for jobs up to the stop deadline;
 *   STOPPED   stopped; may be started again;
 *   CLOSING   handing everything back, waiting for handlers and handles.
 * Whether the backend answers (`online`) is tracked apart from these. */
#define FLEET__WORKER_STATE_MAP(XX)                                            \
  XX(IDLE, "idle")                                                             \
  XX(RUNNING, "running")                                                       \
  XX(STOPPING, "stopping")                                                     \
  XX(STOPPED, "stopped")                                                       \
  XX(CLOSING, "closing")

typedef enum {
#define FLEET__WORKER_STATE_ENUM(name, str) FLEET__WORKER_##name,
  FLEET__WORKER_STATE_MAP(FLEET__WORKER_STATE_ENUM)
#undef FLEET__WORKER_STATE_ENUM
} fleet__worker_state_t;

/* Why a job's claim is known to be gone. */
typedef enum {
  FLEET__WJOB_HELD,    /* as far as we know, still held */
  FLEET__WJOB_EXPIRED, /* no heartbeat confirmed before the local deadline */
  FLEET__WJOB_STALE,   /* the backend refused a heartbeat */
  FLEET__WJOB_HANDED   /* we released it (stop deadline, close) */
} fleet__wjob_claim_t;

/* A claimed job, from its claim until it settles. Slots are pooled and
 * never freed before the worker: a batch in flight may keep a pointer to
 * a slot. */
typedef struct fleet__wjob_s {
  fleet_job_t pub;
  struct fleet__worker_s *w;
  fleet__batch_item_t hb; /* the heartbeat, in the client's batcher */
  char token[24];         /* pub.token in decimal, for the heartbeat */
  size_t token_len;
  fleet__list_t node;  /* on the held list, or the free list */
  fleet__list_t qnode; /* on the send queue or the settle queue */
  fleet__wjob_claim_t claim;
  int with_handler; /* given to the handler and not yet finished */
  int queued;       /* finished, waiting to be sent */
  int sending;      /* its finish is in flight */
  int internal;     /* never given to the handler: no done callback */
  int lost_told;    /* the lost callback ran */
  int resent;       /* its finish is being sent again after a failure */
  int local_status; /* settles without a call, with this status */
  fleet_job_action_t action;
  uint32_t hold_ms; /* a release that holds claims (fleet_job_rate_limit) */
  int hold_group;   /* ... of the job's group */
  uint64_t local_deadline; /* loop ms */
  /* Asked to stop (fleet_job_on_cancel()): why, and who hears it. */
  fleet_job_cancel_t cancel;
  fleet_job_cancel_cb cancel_cb;
  void *cancel_arg;
  uint64_t run_local;  /* the run deadline in loop ms, 0: none */
  uint64_t claimed_ns; /* uv_hrtime() at the claim, for the metrics */
  /* The hooks (fleet_worker_options_t.before, .after): the before hook
   * ran and the after hook is due (`hooked`); uv_hrtime() right before
   * the handler and at its finish call. */
  int hooked;
  uint64_t started_ns;
  uint64_t finished_ns;
  char *buf; /* id, type, payload, error */
  size_t cap;
  const char *error;
  size_t error_len;
  /* A completion's result (fleet_job_complete_result()): `result` NULL
   * for none (an empty result points at a byte of its own). */
  char *result;
  size_t result_len;
  /* The id the job has in its partition's keys: pub.id, or the start of
   * it without a sub-worker's suffix (NUL-terminated after pub.id). */
  const char *wire_id;
  size_t wire_len;
} fleet__wjob_t;

/* What a batch call in flight is for. */
typedef enum {
  FLEET__WBATCH_COMPLETE,
  FLEET__WBATCH_RELEASE,
  FLEET__WBATCH_HANDBACK, /* releases of jobs the handler still has */
  FLEET__WBATCH_FAIL,
  FLEET__WBATCH_CLAIM
} fleet__wbatch_kind_t;

/* One call in flight and the jobs it is about. Pooled. */
typedef struct fleet__wbatch_s {
  fleet__list_t node; /* on the free list */
  struct fleet__worker_s *w;
  fleet__wbatch_kind_t kind;
  size_t n, cap;
  fleet__wjob_t **jobs;
  fleet_claim_t *claims;
  /* The results of a batch of completions, once one of its jobs has
   * one (`with_results`): one per claim, NULL base for none. */
  fleet_bytes_t *results;
  size_t results_cap;
  int with_results;
  uint64_t sent_at;  /* loop ms when sent */
  uint64_t wake_gen; /* claims: wake-ups seen when sent */
  /* A claim sent with completions (QUEUE_COMPLETE_CLAIM): their batch. */
  struct fleet__wbatch_s *with;
} fleet__wbatch_t;

struct fleet__worker_s {
  fleet__handle_t base;
  fleet__list_t share_node; /* on its share's members, while open */
  fleet_worker_options_t o;
  fleet_worker_handler_cb handler; /* given at start */
  uint32_t margin_ms; /* a claim counts as lost this long before its TTL */
  fleet__worker_state_t state;
  int online;
  uint32_t retry_attempt; /* failed calls in a row, for the backoff */
  fleet__rng_t rng;

  /* The queue the worker works on: an internal handle of the client,
   * which the worker holds itself for (fleet__handle_hold) until it has
   * closed. */
  fleet_queue_t queue;
  int queue_open; /* 1 open, 0 closing, -1 closed */
  char ttl[16];   /* o.claim_ttl_ms in decimal, for the heartbeats */
  size_t ttl_len;
  fleet__sub_t *sub;
  fleet__key_t channel; /* "<tag>:jobs:wake" */
  /* Deliveries (docs/queue.md): the worker's own channel
   * "<tag>:jobs:w:<id>", its id in the queue's park_id. */
  fleet__sub_t *dsub;
  fleet__key_t dchannel;

  /* Handles: the flush (a check handle after I/O callbacks, a prepare
   * handle before the loop blocks: finishes and claims made during an
   * iteration go out together, at the end of its phase), and the timers.
   * Heartbeats go through the client's batcher. */
  fleet__phase_end_t flush;
  uv_timer_t poll_timer;    /* fallback poll, or the offline retry */
  uv_timer_t delay_timer;   /* the earliest delayed job comes due */
  uv_timer_t recover_timer; /* recovery of expired claims */
  uv_timer_t lease_timer;   /* the earliest local claim deadline */
  uv_timer_t stop_timer;    /* the stop deadline */
  uv_timer_t poke_timer;    /* 0 ms: no blocking poll after a callback ran
                               in the prepare flush */
  int in_prepare;           /* the flush runs in the prepare phase */
  int cb_in_prepare;        /* ... and ran a user callback */

  /* Jobs. */
  fleet__list_t held;      /* claimed, not settled (fleet__wjob_t) */
  fleet__list_t free_jobs; /* slots to reuse */
  fleet__list_t sendq;     /* finishes to send (fleet__wjob_t, qnode) */
  fleet__list_t settleq;   /* settle without a call (the same) */
  uint32_t active;         /* with the handler */
  uint32_t held_count;

  /* Calls in flight. */
  fleet__list_t free_batches; /* fleet__wbatch_t to reuse */
  int claims_in_flight;
  uint32_t claiming; /* jobs asked for by the claims in flight */
  int calls_in_flight;
  int recovering;

  /* Wake-ups. */
  int maybe_pending; /* a claim may find jobs */
  int last_full;     /* the last claim got all it asked for */
  int promote_due;   /* a delayed job is due: claim even without room */
  int probe;         /* the offline retry timer fired */
  uint64_t wake_gen;

  /* Stop and close. */
  int stop_expired;
  int stop_status;
  fleet_status_cb stop_cb;
  void *stop_data;
  int handback_pending; /* hand the handler's claims back */

  fleet_worker_stats_t stats;
  /* Its id (fleet_worker_id()) and its entry in the process registry
   * while it runs (core/registry.h). */
  char *ident;
  fleet__reg_t reg;
  /* worker.c's check that a stop or a close can go on
   * (fleet__worker_check_done()). */
  void (*check_done)(struct fleet__worker_s *w);

  /* A worker of a partitioned queue (docs/queue.md, "Partitioned
   * queues") is this worker, on partition 0, and one sub-worker per
   * other partition, `subs`, all of them members of `own_share`, a share
   * of the worker's concurrency. A sub-worker's `parent` is the worker
   * its user sees (handler, callbacks, fleet_job_worker()), and it hands
   * out the generated ids of its jobs with the suffix `id_sfx` ("~<i>"). A
   * stop of the worker waits for all of them (`stop_wait`); the user's
   * callback is `pstop_cb`. */
  struct fleet__worker_s *parent;
  fleet_worker_t **subs;
  uint32_t nsubs;
  fleet_worker_share_t *own_share;
  char id_sfx[6];
  size_t id_sfx_len;
  uint32_t stop_wait;
  int pstop_status;
  fleet_status_cb pstop_cb;
  void *pstop_data;
  /* fleet_worker_open()'s callback. */
  fleet_worker_open_cb open_cb;
  void *open_data;
};

/* ------------------------------------------------------------------------ */
/* Everywhere                                                               */

/* The public handle of `w`. */
static inline fleet_worker_t *fleet__worker_pub(struct fleet__worker_s *w) {
  if (w->parent != NULL)
    w = w->parent;
  return (fleet_worker_t *)w->base.pub;
}

/* Schedules a flush at the end of the current loop phase. */
static inline void fleet__worker_kick(struct fleet__worker_s *w) {
  if (!fleet__phase_end_closing(&w->flush))
    fleet__phase_end_arm(&w->flush);
}

/* A claim may find jobs: one goes out at the end of this phase. */
static inline void fleet__worker_wake(struct fleet__worker_s *w) {
  w->maybe_pending = 1;
  fleet__worker_kick(w);
}

/* ------------------------------------------------------------------------ */
/* Shares (worker_share.c)                                                  */

/* The budget of share `s`. */
uint32_t fleet__share_concurrency(const fleet_worker_share_t *s);

/* Joins the share of w->o.share (set), as init does. */
void fleet__share_join(struct fleet__worker_s *w);

/* Leaves it (no share: nothing), as close does. */
void fleet__share_leave(struct fleet__worker_s *w);

/* The jobs `w` may claim now under its share: all of `room` without a
 * share. */
uint32_t fleet__share_room(struct fleet__worker_s *w, uint32_t room);
/* A share whose free slots go to its members in turns, all of them to
 * one claim (share_room_turns() in worker_share.c): the share of the
 * partitions of one queue's worker. Returns what fleet_worker_share_new()
 * returns. */
int fleet__share_new_turns(uint32_t concurrency, fleet_worker_share_t **out);

/* Slots may have come free, or `w`'s queue may have run out of jobs: the
 * other workers of its share claim again if they may. */
void fleet__share_kick(struct fleet__worker_s *w);

/* Whether a transient error may be retried now: not once the stop deadline
 * passed or the worker is closing. */
static inline int fleet__worker_may_retry(const struct fleet__worker_s *w) {
  return w->state != FLEET__WORKER_CLOSING && !w->stop_expired;
}

/* Tells worker.c that the worker may have gone quiet (a call answered, a
 * job settled): a stop or a close that waited for it goes on. The job
 * code below calls up through the hook worker.c set at init, as a libuv
 * handle calls its owner back, so that no file of the worker calls one
 * that calls it. */
static inline void fleet__worker_check_done(struct fleet__worker_s *w) {
  w->check_done(w);
}

/* ------------------------------------------------------------------------ */
/* worker.c                                                                 */

/* The name of a state ("running"), for logs; never NULL. */
const char *fleet__worker_state_name(fleet__worker_state_t state);

/* ------------------------------------------------------------------------ */
/* worker_poll.c                                                            */

/* A call failed with `status` (not FLEET_ECANCELED): the backend is taken
 * as unreachable; a retry comes after a backoff. A call that succeeded
 * calls fleet__worker_online(). Neither reports to the error callback:
 * every failed call does that itself (fleet__handle_error()). */
void fleet__worker_offline(struct fleet__worker_s *w, int status);
void fleet__worker_online(struct fleet__worker_s *w);

/* Arms the poll timer as the fallback poll (online) or the retry of an
 * offline worker, or stops it (a worker neither running nor stopping). */
void fleet__worker_arm_poll(struct fleet__worker_s *w);

/* Arms the delay timer for a delayed job due at `at_ms` on the backend
 * clock, read when it was `now_ms`. */
void fleet__worker_arm_delay(struct fleet__worker_s *w, uint64_t now_ms,
                             uint64_t at_ms);

/* ------------------------------------------------------------------------ */
/* worker_jobs.c                                                            */

/* A delivery came on the worker's channel (docs/queue.md, "Delivery to
 * idle workers"): jobs an enqueue claimed for it while it was parked. */
void fleet__worker_delivered(struct fleet__worker_s *w, const char *msg,
                             size_t len);

/* A message on the wake channel that is not a wake-up: "cancel\0<id>\0
 * <token>" (queue_cancel.lua), whose job's handler, if this worker holds
 * that claim, is told. Returns 0 when the message is none of those (a
 * wake-up), else 1. */
int fleet__worker_message(struct fleet__worker_s *w, const char *msg,
                          size_t len);

/* Sends what the flush has: the finishes (when `finishes`), then the
 * claims (when `claims`). The first claim carries the completions, so
 * that a worker's completions and its next claim share one round trip;
 * with completions to send and room, it claims even when no job is known
 * to be pending. */
void fleet__worker_send(struct fleet__worker_s *w, int finishes, int claims);

/* Settles the jobs that need no call (their claim is gone). */
void fleet__worker_settle_local(struct fleet__worker_s *w);

/* Stops the heartbeats of every held claim (the worker stops or closes). */
void fleet__worker_heartbeats_stop(struct fleet__worker_s *w);

/* Hands the claims of the jobs with the handler back (stop deadline or
 * close): each gets the lost callback with FLEET_ECANCELED. */
void fleet__worker_hand_back(struct fleet__worker_s *w);

/* ------------------------------------------------------------------------ */
/* worker_slots.c                                                           */

/* A job slot, from the pool or new (NULL when out of memory), reset and
 * on no list. */
fleet__wjob_t *fleet__wjob_get(struct fleet__worker_s *w);

/* Puts a slot back in the pool: its heartbeat off the batcher. */
void fleet__wjob_put(struct fleet__worker_s *w, fleet__wjob_t *job);

/* Copies a claimed job into `job`'s buffer. Returns 0 or FLEET_ENOMEM. */
int fleet__wjob_copy(fleet__wjob_t *job, const fleet_job_t *src);

/* A batch of `kind`, from the pool or new (NULL when out of memory),
 * empty, sent now. */
fleet__wbatch_t *fleet__wbatch_get(struct fleet__worker_s *w,
                                   fleet__wbatch_kind_t kind);

/* Puts a batch back in the pool. */
void fleet__wbatch_put(fleet__wbatch_t *b);

/* Adds a job (and its claim) to a batch. Returns 0 or FLEET_ENOMEM. */
int fleet__wbatch_add(fleet__wbatch_t *b, fleet__wjob_t *job);

/* Frees every slot and batch (the worker is closed). */
void fleet__worker_free_jobs(struct fleet__worker_s *w);

/* ------------------------------------------------------------------------ */
/* The calls of one worker (worker.c)                                       */

/* fleet_worker_init(), fleet_worker_start(), fleet_worker_stop() and
 * fleet_worker_stats() of a worker of one queue: the public calls
 * (worker_parts.c) are these for a plain queue, and make, start, stop and
 * add up the sub-workers of a partitioned one. */
int fleet__worker_init(fleet_client_t *client, fleet_worker_t *pub,
                       const char *name, const fleet_worker_options_t *options);
int fleet__worker_start(fleet_worker_t *pub, fleet_worker_handler_cb handler);
int fleet__worker_stop(fleet_worker_t *pub, uint32_t timeout_ms,
                       fleet_status_cb cb, void *user_data);
void fleet__worker_stats(const fleet_worker_t *pub, fleet_worker_stats_t *out);

#endif /* FLEET_SRC_WORKER_INT_H */
