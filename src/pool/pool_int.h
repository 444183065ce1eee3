/* pool_int.h -- the worker pool's internals, shared by its files. Calls
 * between them run one way, from the top: pool.c (the node's life: init,
 * workers, close), pool_member.c (join, keep-alives), pool_calls.c
 * (dispatch, notify, stop, queries, shutdown), pool_events.c (the event
 * list, the state, the dispatches waiting for their start result),
 * pool_rebalance.c, pool_worker.c (a worker's removal),
 * pool_jobs.c (the jobs a node's workers run), pool_route.c (membership,
 * routing). The ticker, the schedule (on the ticker and the node's public
 * calls) and the queries from a client stand beside them. */
#ifndef FLEET_SRC_POOL_INT_H
#define FLEET_SRC_POOL_INT_H

#include "common/hash.h"
#include "core/args.h"
#include "core/batcher.h"
#include "core/client.h"
#include "core/handle.h"
#include "core/keys.h"
#include "core/registry.h"

/* The states of a node. */
#define FLEET__POOL_STATE_MAP(XX)                                              \
  XX(IDLE, "idle")         /* not joined yet */                                \
  XX(JOINING, "joining")   /* a join is in flight */                           \
  XX(ACTIVE, "active")     /* in the pool, keeping itself alive */             \
  XX(SHUTDOWN, "shutdown") /* the pool shut down */                            \
  XX(REFUSED, "refused")   /* another live node holds the node id */           \
  XX(CLOSING, "closing")

typedef enum {
#define XX(name, str) FLEET__POOL_##name,
  FLEET__POOL_STATE_MAP(XX)
#undef XX
} fleet__pool_state_t;

const char *fleet__pool_state_name(fleet__pool_state_t state);

typedef struct fleet__pool_s fleet__pool_t;

/* The most starts handled from their wake-up messages whose events a read
 * has not taken yet (pool_events.c). */
#define FLEET__POOL_FAST_MAX 32

/* A background call of which one is in flight at a time, and one more
 * follows when it was asked for meanwhile (joins, event reads,
 * rebalances). */
typedef struct {
  int inflight;
  int again; /* asked for while one was in flight */
} fleet__pool_once_t;

/* Whether the call may go now; while one is in flight, it is asked for
 * again instead. */
static inline int fleet__pool_once_begin(fleet__pool_once_t *o) {
  o->again |= o->inflight;
  return !o->inflight;
}
typedef struct fleet__pool_worker_s fleet__pool_worker_t;

/* A job a local worker runs (the public fleet_pool_job_t). */
struct fleet_pool_job_s {
  fleet__list_t node; /* on the worker's jobs */
  fleet__pool_worker_t *worker;
  char *key; /* NUL-terminated copy */
  size_t key_len;
  char *payload;
  size_t payload_len;
  uint64_t token;
  int reported; /* fleet_pool_job_started() was called */
  /* In its stop callback: 1, or 2 for a stop the pool asked for
   * (requested, moved), where fleet_pool_job_requeue() may hand the job
   * back; `requeued`: it did. */
  int stopping;
  int requeued;
};

/* The steps of a worker's removal (pool_worker.c). */
enum {
  FLEET__POOL_WORKER_LIVE = 0,
  FLEET__POOL_WORKER_DRAINING, /* drain sent: its jobs move away */
  FLEET__POOL_WORKER_WAITING,  /* drained: waits for its jobs to go */
  FLEET__POOL_WORKER_FORGET,   /* forget in flight */
  FLEET__POOL_WORKER_RETRY     /* forget failed: sent again by the timer */
};

struct fleet__pool_worker_s {
  fleet__list_t node; /* on the node's workers, in creation order */
  fleet__pool_t *pool;
  fleet_pool_worker_t *pub;
  fleet_pool_handler_t handler;
  char *id;
  fleet__list_t jobs; /* the jobs it runs (struct fleet_pool_job_s) */
  /* Removal: its step, request and deadline (loop ms). */
  int removing;
  struct fleet__pool_req_s *remove_req;
  uint64_t remove_deadline;
};

/* A request of the node: a call the user waits for (dispatch, notify,
 * stop, queries, shutdown, a worker's removal), or the node's own
 * background call. What it is and how its replies are read is its call
 * (req->base.call, a fleet__call_t next to the code that sends it). */
typedef struct fleet__pool_req_s {
  fleet__req_t base;
  /* Dispatch: its key and payload (owned), token, deadline, retries, and
   * its place among the dispatches waiting for a start result. `members`:
   * the backend call in flight reads the membership first. */
  char *key;
  size_t key_len;
  char *payload;
  size_t payload_len;
  uint64_t token;
  uint64_t deadline;
  unsigned tries;
  int members;
  fleet__list_t wnode; /* on the node's waiting dispatches */
  int waiting;
  /* Dispatch: its admission on the client's batcher (`batched` while
   * queued or in flight, the node held meanwhile), and what it sends: the
   * chosen worker (owned), the revision and the node's job limit. */
  fleet__batch_item_t item;
  int batched;
  int unsent; /* queued on the batcher, counted in dispatch_queued */
  char *owner;
  char rev_s[24], max_s[24];
  /* The token of the event the call takes from the node's list (0: none;
   * pool_events.c, "Events in the wake-up"): a start report's start, or
   * the start result a call of dispatches takes (its first dispatch's,
   * with the token as the call sends it). */
  uint64_t take;
  char take_s[24];
  /* Background calls about a job: the worker and the token presented. */
  fleet__pool_worker_t *worker;
  /* A join that re-asserts jobs: what it sent, in order. */
  struct fleet__pool_claim_s *claims;
  size_t nclaims;
  /* A join: how many workers it registered (none: the id only). */
  uint32_t live;
  /* Start reports: what the call carries, in order (owned). */
  struct fleet__pool_report_s *reports;
  size_t nreports;
} fleet__pool_req_t;

/* A start report waiting to be sent (pool_jobs.c): the worker, the job's
 * key (owned), the token presented and the start's status. */
typedef struct fleet__pool_report_s {
  fleet__pool_worker_t *worker;
  char *key;
  size_t key_len;
  uint64_t token;
  int status;
} fleet__pool_report_t;

/* A local job a join re-asserts: its worker, key (owned) and token. */
typedef struct fleet__pool_claim_s {
  fleet__pool_worker_t *worker;
  char *key;
  size_t key_len;
  uint64_t token;
  const char *payload; /* the job's, until the join is sent */
  size_t payload_len;
} fleet__pool_claim_t;

struct fleet__pool_s {
  fleet__handle_t base;
  fleet_pool_node_t *pub;
  fleet__pool_state_t state;
  fleet_pool_node_options_t opts;
  char *node_id;
  size_t node_id_len;
  /* The instance nonce that the node's id lease (T:id:<node>) holds, and
   * whether a join was sent (the node may hold the lease: the close gives
   * it up). */
  char nonce[FLEET__NONCE_LEN + 1];
  int claimed;
  /* The last join registered workers: the node is a member of the pool,
   * and its keep-alive expects to find it there. */
  int member;
  fleet__key_t tag;  /* "{prefix:pool}" */
  fleet__key_t wake; /* the node's wake-up channel */
  char ttl_str[16], life_str[16];
  fleet__args_t args;

  fleet__list_t workers;   /* fleet__pool_worker_t, in creation order */
  uint32_t nworkers;       /* in the list, removing ones too */
  uint32_t worker_seq;     /* the last worker number given */
  uv_timer_t remove_timer; /* watches the workers being removed */

  fleet__sub_t *sub; /* the wake-up channel, owned by the base */

  /* Membership as last read: revision and workers in creation order. */
  int64_t rev; /* -1: never read */
  char **member_ids;
  char **member_nodes;
  uint64_t *member_created;
  size_t nmembers, members_cap;

  /* Keep-alive: the batcher item, the local validity and the lapse. */
  fleet__batch_item_t keepalive;
  uint64_t valid_until; /* loop ms */
  int lapsed;
  uv_timer_t lapse_timer;

  /* Joins, event reads and rebalances: one call at a time each, and one
   * more when asked for again meanwhile. */
  fleet__pool_once_t join;
  /* The next join re-asserts the local jobs: the pool forgot this node
   * while it was valid by its own clock (its data was lost). */
  int reassert;
  fleet__pool_once_t ev, bal;
  /* Start reports made while an event read is handled (`reporting`), sent
   * as one POOL_STARTED call when it ends. */
  fleet__pool_report_t *reports;
  size_t nreports, reports_cap;
  int reporting;
  /* Starts handled from their wake-up message (pool_events.c, "Events in
   * the wake-up") until the event read that takes them from the list:
   * their tokens and when (loop ms); and the largest start token handled
   * either way. */
  uint64_t fast_tokens[FLEET__POOL_FAST_MAX], fast_at[FLEET__POOL_FAST_MAX];
  size_t nfast;
  uint64_t start_max;
  /* Dispatches on the batcher not sent yet, and the token of a start
   * result handled from its wake-up that the next of their calls takes
   * from the node's list instead of a read (0: none). */
  size_t dispatch_queued;
  uint64_t take_result;

  /* Dispatches waiting for their start result, in deadline order. */
  fleet__list_t waiting; /* dispatches waiting, oldest first */
  uv_timer_t wait_timer;
  uv_timer_t join_timer; /* the workers added in one iteration join */
  /* Rebalances when the first requeued job this node knows of is due. */
  uv_timer_t requeue_timer;
  uint64_t requeue_at; /* loop ms it is armed for; 0: not armed */
  int timers_open;
  /* Its entry in the process registry while it has workers in the pool
   * (core/registry.h). */
  fleet__reg_t reg;
};

/* After the send of a call of `o`, which returned `err`: the call is in
 * flight, or the node's error callback hears `err`. */
static inline void fleet__pool_once_sent(fleet__pool_t *p,
                                         fleet__pool_once_t *o, int err) {
  if (err != 0) {
    fleet__handle_error(&p->base, err);
    return;
  }
  o->inflight = 1;
  o->again = 0;
}

/* The node of the public handle `node`, or NULL when it is not an
 * initialized node. */
static inline fleet__pool_t *fleet__pool_of(const fleet_pool_node_t *node) {
  return (fleet__pool_t *)fleet__handle_of(node, FLEET_HANDLE_POOL_NODE);
}

/* Whether the node takes a call: 0, FLEET_ECLOSING (the node or its
 * client is closing), FLEET_ESHUTDOWN (the pool shut down) or
 * FLEET_ECONFLICT (another live node holds its id). */
static inline int fleet__pool_usable(const fleet__pool_t *p) {
  int err = fleet__handle_usable(&p->base);

  if (err == 0 && p->state == FLEET__POOL_SHUTDOWN)
    err = FLEET_ESHUTDOWN;
  if (err == 0 && p->state == FLEET__POOL_REFUSED)
    err = FLEET_ECONFLICT;
  return err;
}

/* Sends `call` on the node's tag with the args built in p->args, for the
 * user callback `cb` (NULL for a background call). Returns 0 or an error
 * (nothing is sent, no callback runs). */
static inline int fleet__pool_call(fleet__pool_t *p, const fleet__call_t *call,
                                   fleet__fn_t cb, void *user_data) {
  fleet_bytes_t tag = fleet__key_bytes(&p->tag);

  return fleet__call(&p->base, call, cb, user_data, &tag, 1, p->args.argv,
                     p->args.argc);
}

/* What a ticker and a schedule, the handles made on a node, start with:
 * the base, the name, the node's tag and the args of their calls. */
typedef struct {
  fleet__handle_t base;
  char *name;
  size_t name_len;
  fleet__key_t tag;
  fleet__args_t args;
} fleet__pool_child_t;

/* pool.c */
/* Makes a handle on `node` (a ticker, a schedule): checks the node, `ms`
 * (at least FLEET_POOL_TICK_MIN_MS) and `name` (the name rule, at most
 * `max` bytes), then allocates `size` zeroed bytes that start with a
 * fleet__pool_child_t, registers its base (`vt`, `pub`, `error_cb`) on
 * the node's client and copies the name and the node's tag. Returns 0 and
 * the handle in `*out`, or FLEET_EINVAL, FLEET_E2BIG, FLEET_ECLOSING or
 * FLEET_ENOMEM (nothing left; pub's internal_ NULL). */
int fleet__pool_child_init(fleet_pool_node_t *node, fleet_handle_t *pub,
                           const fleet__handle_vt_t *vt, size_t size,
                           const char *name, size_t max, uint32_t ms,
                           fleet_error_cb error_cb, fleet__pool_child_t **out);
/* Undoes fleet__pool_child_init() for a handle whose init failed later
 * on: its `free` hook runs, nothing is called back. */
void fleet__pool_child_abort(fleet__pool_child_t *c);
/* Frees what fleet__pool_child_init() made, the struct too: the end of
 * the `free` hook of a child. */
void fleet__pool_child_free(fleet__pool_child_t *c);

/* pool_member.c */
/* Asks for a join with every local worker (on the next loop iteration). */
void fleet__pool_join(fleet__pool_t *p);

/* pool_events.c */
/* The one place a node changes state. Leaving ACTIVE stops the keep-alive
 * and the lapse timer (entering it is pool_member.c's). */
void fleet__pool_set_state(fleet__pool_t *p, fleet__pool_state_t state);
/* Takes the keep-alive off the batcher; its hold goes with it. */
void fleet__pool_keepalive_stop(fleet__pool_t *p);
/* Another live instance holds this node's id: the node stops acting under
 * it for good (REFUSED). May run user callbacks. */
void fleet__pool_refuse(fleet__pool_t *p);
/* Asks for the node's events to be read (now, or after the read in
 * flight). */
void fleet__pool_read_events(fleet__pool_t *p);
/* The message callback of the node's wake-up channel: reads the events. */
void fleet__pool_on_wake(void *arg, int status, const char *payload,
                         size_t len);
/* After a call that also took an event the node handled from its wake-up
 * out of its list (a start report's, a dispatch's: pool_events.c,
 * "Events in the wake-up"): `pair` points at the two reply elements of
 * the take, whether it took the event and whether events are left (NULL:
 * the call failed, or its reply has not that shape). The node reads its
 * list when events are left, and when the call failed. Returns whether
 * the event was taken. */
int fleet__pool_took(fleet__pool_t *p, const fleet__reply_t *pair);
/* A start result (r event) for a waiting dispatch. */
void fleet__pool_dispatch_result(fleet__pool_t *p, const fleet__reply_t *ev);
/* Fails every waiting dispatch with `status` (user callbacks run). */
void fleet__pool_wait_fail(fleet__pool_t *p, int status);

/* pool_rebalance.c */
/* Asks for a rebalance (now, or after the one in flight). */
void fleet__pool_rebalance(fleet__pool_t *p);
/* Asks for a rebalance in `ms` (loop clock), when a requeued job is due,
 * unless one is asked for sooner already. */
void fleet__pool_requeue_wait(fleet__pool_t *p, uint64_t ms);

/* pool_route.c */
/* Reads the membership from a POOL_MEMBERS reply. Returns 0, FLEET_EPROTO
 * or FLEET_ENOMEM. */
int fleet__pool_set_members(fleet__pool_t *p, const fleet__reply_t *r);
/* Forgets the membership read last (the arrays stay for the next read). */
void fleet__pool_members_clear(fleet__pool_t *p);
/* Splits an owner record "<token>:<state>:<worker>". Returns 0 or -1. */
int fleet__pool_parse_owner(const fleet__reply_t *rec, fleet_bytes_t *token,
                            char *state, fleet_bytes_t *worker);
/* The worker id that owns `key` under the membership read last, or NULL
 * when the pool has no worker. */
const char *fleet__pool_route(const fleet__pool_t *p, const char *key,
                              size_t len);

/* pool_jobs.c */

/* The first of the jobs `w` runs, or NULL when it runs none. */
static inline struct fleet_pool_job_s *
fleet__pool_first_job(const fleet__pool_worker_t *w) {
  fleet__list_t *n = fleet__list_first(&w->jobs);
  return n != NULL ? FLEET__LIST_DATA(n, struct fleet_pool_job_s, node) : NULL;
}
/* Handles one event for a local worker: s (start), x (stop), n
 * (notify). May run user callbacks. */
void fleet__pool_job_event(fleet__pool_t *p, const fleet__reply_t *ev);
/* Stops every local job with `reason` (user callbacks run). */
void fleet__pool_stop_all(fleet__pool_t *p, fleet_pool_stop_reason_t reason);
/* Stops one local job with `reason` (the user callback runs), then frees
 * it. */
void fleet__pool_stop_job(struct fleet_pool_job_s *job,
                          fleet_pool_stop_reason_t reason);
/* The pool shut down (the node's join was refused FLEET_ESHUTDOWN, or it
 * read the shutdown): every local job stops, waiting dispatches fail with
 * FLEET_ESHUTDOWN, and the node takes no more calls. May run user
 * callbacks. */
void fleet__pool_shut(fleet__pool_t *p);
void fleet__pool_job_free(struct fleet_pool_job_s *job);
/* Collects the start reports made until fleet__pool_reports_end(), to
 * send them as one call (an event read's starts). */
void fleet__pool_reports_begin(fleet__pool_t *p);
/* Sends the start reports collected since fleet__pool_reports_begin() in
 * one POOL_STARTED call, and ends the collection. Nothing runs user
 * callbacks here; a closing node drops them (its leave orphans its
 * jobs). */
void fleet__pool_reports_end(fleet__pool_t *p);
/* fleet__pool_reports_end(), the call also taking the start of token
 * `take` from the head of the node's event list (pool_started.lua), and
 * `call` reading its reply (with fleet__pool_started_read(), two extra
 * elements). Returns whether a call was sent. */
int fleet__pool_reports_end_take(fleet__pool_t *p, uint64_t take,
                                 const fleet__call_t *call);
/* Reads the reports of a start report call's reply, followed by `extra`
 * elements; the request is done after. */
void fleet__pool_started_read(fleet__req_t *r, int status,
                              const fleet__reply_t *reply, size_t extra);
/* Frees the start reports not sent (the node is freed). */
void fleet__pool_reports_free(fleet__pool_t *p);
/* The answer to a re-assertion of the local job `c`: `token` is its new
 * token, or 0 when another owner holds the key (the worker is told LOST).
 * A job that ended locally meanwhile is handed back to the pool. May run
 * user callbacks. */
void fleet__pool_reasserted(fleet__pool_t *p, const fleet__pool_claim_t *c,
                            uint64_t token);

/* pool_ticker.c: the state of a ticker, for logs and tests ("closed" once
 * it has closed). */
const char *fleet__pool_ticker_state_name(const fleet_pool_ticker_t *t);

/* pool_schedule.c: the state of a schedule ("closed" once closed). */
const char *fleet__pool_schedule_state_name(const fleet_pool_schedule_t *s);

/* pool_calls.c */
/* The call `call` on `node` for the callback `cb`, after the checks of
 * every call on a node (the node, the callback, the key, the payload, the
 * node's state): with the args `key` (the name rule) and then `payload`
 * when not NULL, or with no args. Returns 0 or an error (nothing sent). */
int fleet__pool_key_call(fleet_pool_node_t *node, const fleet__call_t *call,
                         const char *key, const fleet_bytes_t *payload,
                         fleet__fn_t cb, void *user_data);
int fleet__pool_plain_call(fleet_pool_node_t *node, const fleet__call_t *call,
                           fleet__fn_t cb, void *user_data);
/* The oldest dispatch waiting for its start, or NULL. */
static inline fleet__pool_req_t *fleet__pool_first_waiting(fleet__pool_t *p) {
  fleet__list_t *n = fleet__list_first(&p->waiting);
  return n != NULL ? FLEET__LIST_DATA(n, fleet__pool_req_t, wnode) : NULL;
}

/* Fails the waiting dispatches whose deadline passed, and arms the timer
 * for the next one. */
void fleet__pool_wait_check(fleet__pool_t *p);

#endif /* FLEET_SRC_POOL_INT_H */
