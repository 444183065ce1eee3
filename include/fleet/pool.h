/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/pool.h -- the worker pool: nodes host workers; a long-running job,
 * named by a key, lives on exactly one worker, chosen by jump consistent
 * hashing of the key over the pool's workers in creation order. When a
 * node dies or leaves, its jobs start again on the others; when workers
 * join, only the jobs whose owner changed move. docs/pool.md has the
 * guarantees and the key schema. */
#ifndef FLEET_POOL_H
#define FLEET_POOL_H

#include "fleet/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A node of a pool: a handle. */
typedef struct fleet_pool_node_s {
  FLEET_HANDLE_FIELDS
} fleet_pool_node_t;

/* A worker, hosted by a node: memory the user owns, added with
 * fleet_pool_worker_add(); it lives until its node has closed, or until
 * its removal (fleet_pool_worker_remove) completed. */
typedef struct fleet_pool_worker_s {
  /* For the user; fleet never reads or writes it. */
  void *data;
  /* Private. */
  struct fleet__pool_worker_s *internal_;
} fleet_pool_worker_t;

/* A job a worker runs: owned by fleet, valid from the start callback until
 * the stop callback for it returns. */
typedef struct fleet_pool_job_s fleet_pool_job_t;

/* The longest job key and node id, in bytes (the name rule). */
#define FLEET_POOL_KEY_MAX 512
#define FLEET_POOL_NODE_ID_MAX 256
/* The largest payload, in bytes. */
#define FLEET_POOL_PAYLOAD_MAX (1024 * 1024)

/* Why a worker is told to stop a job. */
#define FLEET_POOL_STOP_REASON_MAP(XX)                                         \
  XX(REQUESTED, "requested") /* fleet_pool_stop_job() */                       \
  XX(MOVED, "moved")         /* its owner changed: it starts elsewhere */      \
  XX(LOST, "lost")           /* this node lost it (keep-alive lapsed, or a     \
                                newer owner holds it): it runs elsewhere */    \
  XX(CLOSE, "close")         /* the node is closing: it starts elsewhere */    \
  XX(SHUTDOWN, "shutdown")   /* the pool shut down */

typedef enum {
#define FLEET__POOL_STOP_ENUM(name, str) FLEET_POOL_STOP_##name,
  FLEET_POOL_STOP_REASON_MAP(FLEET__POOL_STOP_ENUM)
#undef FLEET__POOL_STOP_ENUM
} fleet_pool_stop_reason_t;

/* The name of a stop reason ("moved"); "unknown" when out of range. */
FLEET_EXTERN const char *fleet_pool_stop_reason_name(int reason);

/* A job was assigned to the worker: start it, then report with
 * fleet_pool_job_started() (inside the callback or later). */
typedef void (*fleet_pool_start_cb)(fleet_pool_worker_t *worker,
                                    fleet_pool_job_t *job);

/* The worker must stop the job now, for `reason`: the job is invalid once
 * this returns, and a start still in progress must not report any more
 * (cancel it here). After LOST, MOVED and CLOSE the job may already run
 * elsewhere: the worker must no longer act on it. Its token is refused by
 * the pool from then on. */
typedef void (*fleet_pool_stop_cb)(fleet_pool_worker_t *worker,
                                   fleet_pool_job_t *job,
                                   fleet_pool_stop_reason_t reason);

/* A notification for a running job (fleet_pool_notify()); `payload` is
 * valid until the callback returns. */
typedef void (*fleet_pool_notify_cb)(fleet_pool_worker_t *worker,
                                     fleet_pool_job_t *job,
                                     fleet_bytes_t payload);

/* A worker's handlers, copied by fleet_pool_worker_add(): the functions
 * that run its jobs. */
typedef struct {
  fleet_pool_start_cb start_cb;   /* required */
  fleet_pool_stop_cb stop_cb;     /* required */
  fleet_pool_notify_cb notify_cb; /* optional */
} fleet_pool_handler_t;

typedef struct {
  /* A node whose keep-alive has not reached the pool for this long, by
   * the server's clock, is removed and its jobs move. Default 30000 ms
   * (pulse's); at least 100 ms. Keep-alives go every third of it. */
  uint32_t worker_ttl_ms;
  /* How long past the worker TTL a moved job may take to start, and half
   * of how long a dispatch waits for its start (then FLEET_ETIMEDOUT).
   * Default 20000 ms (pulse's). */
  uint32_t ack_grace_ms;
  /* The most jobs the pool holds: a dispatch beyond it fails with
   * FLEET_EBUSY. Default 1000 (pulse's); FLEET_POOL_UNLIMITED for none. */
  uint32_t max_queued_jobs;
  /* How long the removal of a worker (fleet_pool_worker_remove) waits
   * for its jobs to move to other workers through the usual stop-then-
   * start; after it, the jobs left are stopped here and handed to the
   * pool at once. Default 120000 ms (pulse's). */
  uint32_t worker_shutdown_ttl_ms;
  /* Non-zero: the node hosts no workers; it dispatches, notifies, stops
   * and queries only. */
  int client_only;
  /* Optional: background failures (keep-alives, event reads, rebalancing);
   * the node retries them, except FLEET_ECONFLICT: its id is held by
   * another live node (see fleet_pool_node_init()), and FLEET_ESHUTDOWN:
   * the pool was shut down (see fleet_pool_shutdown()). It also hears
   * FLEET_EATTEMPTS when a job one of its workers requeued was dropped
   * (see fleet_pool_job_requeue()). */
  fleet_error_cb error_cb;
  /* How many times in a row a job may be requeued by the handlers of this
   * node's workers (fleet_pool_job_requeue()) before the next requeue
   * drops it; a start that reports ends the row. Default 5. */
  uint32_t max_requeues;
  /* How long a requeued job waits before it is started again, by the
   * server's clock: this for the first requeue in a row, doubled for
   * each one after it, at most 60000 ms (or this, when larger). Default
   * 1000 ms; at most 3600000. */
  uint32_t requeue_backoff_ms;
} fleet_pool_node_options_t;

#define FLEET_POOL_UNLIMITED UINT32_MAX

/* Fills `options` with the defaults. */
FLEET_EXTERN void fleet_pool_node_options_init(fleet_pool_node_options_t *o);

/* Initializes `node`, the node `node_id` of the pool `pool` on `client`,
 * and registers it with the client. `pool` follows the name rule (1 to 512
 * bytes); `node_id` is 1 to FLEET_POOL_NODE_ID_MAX bytes without '/', or
 * NULL or "" to let fleet make a unique one ("<host>-<pid>-<8 random hex
 * digits>", read it with fleet_pool_node_id()). Sends nothing now.
 *
 * A node id is a lease in the pool, held by one live node at a time: on
 * the next loop iteration the node claims it (with the workers added
 * meanwhile, and client-only nodes too) under a random nonce of its own,
 * renews it with each keep-alive (worker_ttl_ms) and gives it up when it
 * closes. A node killed without closing holds it until worker_ttl_ms ran
 * out. While another live node holds the id, the claim is refused: the
 * node's error callback hears FLEET_ECONFLICT once, with
 * fleet_client_last_error() naming the id, and the node is refused for
 * good: it never joins, every call on it returns FLEET_ECONFLICT, and it
 * should be closed (which leaves the other node's id alone). A node that
 * finds later that another node took its id (its lease ran out while it
 * was stopped, and the other claimed the free id) is refused the same
 * way, after its workers were told to stop each job (LOST) and its
 * waiting dispatches failed with FLEET_ECONFLICT. A lease that ran out
 * with nobody taking it is a lapse: the jobs stop (LOST) and the node
 * joins again, claiming its id anew; its error callback hears
 * FLEET_ESTALE when its keep-alive lapses. In a pool that was shut down
 * and not reset since (fleet_pool_shutdown(), fleet_pool_reset()), the
 * claim is refused too: the error callback hears FLEET_ESHUTDOWN once,
 * and every call on the node returns FLEET_ESHUTDOWN.
 *
 * Returns 0, FLEET_EINVAL, FLEET_E2BIG, FLEET_ECLOSING (the client is
 * closing) or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_pool_node_init(fleet_client_t *client,
                                      fleet_pool_node_t *node, const char *pool,
                                      const char *node_id,
                                      const fleet_pool_node_options_t *options);

/* The node's id (NUL-terminated, valid until the node has closed): the
 * one given to fleet_pool_node_init(), or the one fleet made. NULL when
 * `node` is NULL or not initialized. */
FLEET_EXTERN const char *fleet_pool_node_id(const fleet_pool_node_t *node);

/* Adds `worker` to `node` with the handlers of `handler` (`start_cb` and
 * `stop_cb` required) and joins the pool with it on the next loop
 * iteration, with every worker added meanwhile (jobs move once for all of
 * them). Its id is "<node_id>/<n>", n counting from 1. Returns 0 (the
 * worker's internal_ is set), or, with internal_ NULL, FLEET_EINVAL
 * (client-only node, NULL handler, a NULL `start_cb` or `stop_cb`),
 * FLEET_ECLOSING, FLEET_ESHUTDOWN (the pool shut down), FLEET_ECONFLICT
 * (the node was refused its id) or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_pool_worker_add(fleet_pool_node_t *node,
                                       fleet_pool_worker_t *worker,
                                       const fleet_pool_handler_t *handler);

/* Called once a worker's removal is done: status 0 (the worker is gone
 * and its memory is the user's again), FLEET_ECANCELED (the node closed
 * first), or the backend's error. */
typedef void (*fleet_pool_worker_cb)(fleet_pool_worker_t *worker, int status);

/* Removes `worker` from the pool (pulse's RemoveWorker): it takes no new
 * job, and each of its jobs moves to its owner among the other workers:
 * the worker is told to stop it (FLEET_POOL_STOP_MOVED), then the new
 * owner starts it. Jobs still here after worker_shutdown_ttl_ms are
 * stopped (MOVED) and handed to the pool at once. Then `cb` runs. Returns
 * 0, FLEET_EINVAL (NULL, not added, no cb), FLEET_EALREADY (being
 * removed) or FLEET_ECLOSING. */
FLEET_EXTERN int fleet_pool_worker_remove(fleet_pool_worker_t *worker,
                                          fleet_pool_worker_cb cb);

/* The worker's id (NUL-terminated), or NULL before it was added. */
FLEET_EXTERN const char *fleet_pool_worker_id(const fleet_pool_worker_t *w);

/* Job keys go in as C strings (the name rule: 1 to FLEET_POOL_KEY_MAX
 * bytes, no NUL) and come out as C strings too: every key fleet gives
 * back, as a `const char *` or as the `base` of a fleet_bytes_t (whose
 * `len` is its strlen), is NUL-terminated, so it may be passed as it is
 * wherever a key goes in (fleet_pool_stop_job(), fleet_pool_notify(),
 * ...) while it is valid. */

/* The job's key, as the C string it was dispatched with (valid as long as
 * the job); NULL when `job` is NULL. */
FLEET_EXTERN const char *fleet_pool_job_key_str(const fleet_pool_job_t *job);

/* The job's key and payload (valid as long as the job) and its fencing
 * token: every assignment of a job to an owner has a larger token than
 * the one before. The key's `base` is fleet_pool_job_key_str(). */
FLEET_EXTERN fleet_bytes_t fleet_pool_job_key(const fleet_pool_job_t *job);
FLEET_EXTERN fleet_bytes_t fleet_pool_job_payload(const fleet_pool_job_t *job);
FLEET_EXTERN uint64_t fleet_pool_job_token(const fleet_pool_job_t *job);

/* Reports the end of a job's start: 0 (it runs) or a negative error (it
 * failed: the job leaves the pool, and the dispatcher gets `status`).
 * Call it once per start, before the job's stop callback; after a failed
 * start the job is invalid once this returns. Returns 0,
 * FLEET_EINVAL (NULL, not an fleet error code) or FLEET_EALREADY
 * (reported already). If the pool gave the job to another owner in the
 * meantime, the stop callback follows with FLEET_POOL_STOP_LOST. */
FLEET_EXTERN int fleet_pool_job_started(fleet_pool_job_t *job, int status);

/* Hands the job back to the pool to be started again later (pulse's
 * ErrRequeue), from one of the worker's handlers:
 *
 * - in its start, in place of fleet_pool_job_started() (inside the start
 *   callback or later, before any report): the start did not happen and
 *   should be tried again;
 * - inside its stop callback, when the reason is FLEET_POOL_STOP_REQUESTED
 *   or FLEET_POOL_STOP_MOVED: the job is stopped here as usual, but instead
 *   of leaving the pool (REQUESTED) or starting at once on its new owner
 *   (MOVED), it is started again later.
 *
 * The job then waits in the pool without an owner (state
 * FLEET_POOL_JOB_REQUEUED) for the node's requeue_backoff_ms, doubled for
 * each requeue in a row, by the server's clock; then it is placed like any
 * job without an owner: on the worker its key routes to, which is this
 * one again unless the membership changed. A dispatcher still waiting
 * for the job's start waits on (up to its 2 x ack_grace_ms). The
 * requeues of a job are counted until one of its starts reports (either
 * way); the requeue after max_requeues in a row drops the job instead: it
 * leaves the pool, a waiting dispatcher gets FLEET_EATTEMPTS, and so does
 * this node's error callback, with fleet_client_last_error() naming the
 * key. A requeue that finds the job given to another owner meanwhile
 * changes nothing.
 *
 * After a requeue from the start, the job is invalid once this returns
 * (no stop callback follows); from a stop callback it is invalid once the
 * callback returns, as always. Returns 0, FLEET_EINVAL (NULL; a stop for
 * another reason: the job is not this node's to hand back) or
 * FLEET_EALREADY (its start reported already, or requeued already). */
FLEET_EXTERN int fleet_pool_job_requeue(fleet_pool_job_t *job);

/* Dispatches the job `key` (the name rule) with `payload` (up to
 * FLEET_POOL_PAYLOAD_MAX bytes, may be empty): admits it in one atomic
 * step and assigns it to its owner. `cb` runs once the owner's start has
 * reported: 0, or its error; FLEET_EEXIST when the key is in the pool
 * already; FLEET_EBUSY when the pool holds max_queued_jobs; FLEET_ENOTFOUND
 * when the pool has no worker; FLEET_ECANCELED when the job was stopped
 * before any start reported; FLEET_ETIMEDOUT when no start result came
 * within 2 x ack_grace_ms (the job stays admitted and may still start);
 * FLEET_EATTEMPTS when its owners requeued it more than their
 * max_requeues in a row (fleet_pool_job_requeue(): it was dropped);
 * FLEET_ESHUTDOWN when this node saw the pool shut down first. A job that
 * moves, or is requeued, before its start reported is answered by its
 * next owner's start. The dispatches of one client made in one loop
 * phase are admitted in one backend call, in the order they were made.
 * Returns 0, FLEET_EINVAL, FLEET_E2BIG, FLEET_ECLOSING, FLEET_ESHUTDOWN,
 * FLEET_ECONFLICT or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_pool_dispatch(fleet_pool_node_t *node, const char *key,
                                     fleet_bytes_t payload, fleet_status_cb cb,
                                     void *user_data);

/* Sends `payload` to the notify callback of the job's owner. `cb`: 0 sent;
 * FLEET_ENOTFOUND no such job; FLEET_EBUSY the job is between owners. */
FLEET_EXTERN int fleet_pool_notify(fleet_pool_node_t *node, const char *key,
                                   fleet_bytes_t payload, fleet_status_cb cb,
                                   void *user_data);

/* Asks the owner of the job to stop it; the job leaves the pool once its
 * owner has stopped it (or at once when it has none, or when its owner
 * leaves the pool or dies first: it is not started again elsewhere).
 * `cb`: 0, or FLEET_ENOTFOUND. */
FLEET_EXTERN int fleet_pool_stop_job(fleet_pool_node_t *node, const char *key,
                                     fleet_status_cb cb, void *user_data);

/* The pool's job keys (valid until the callback returns; each
 * NUL-terminated, see above). */
typedef void (*fleet_pool_keys_cb)(fleet_pool_node_t *node, int status,
                                   const fleet_bytes_t *keys, size_t n,
                                   void *user_data);
FLEET_EXTERN int fleet_pool_job_keys(fleet_pool_node_t *node,
                                     fleet_pool_keys_cb cb, void *user_data);

/* A job of the pool: its key (NUL-terminated), its owner ("" while it has
 * none) and the token of its assignment. */
typedef struct {
  fleet_bytes_t key;
  const char *worker_id;
  uint64_t token;
} fleet_pool_job_info_t;

typedef void (*fleet_pool_jobs_cb)(fleet_pool_node_t *node, int status,
                                   const fleet_pool_job_info_t *jobs, size_t n,
                                   void *user_data);
/* The pool's jobs with their owners (valid until the callback returns). */
FLEET_EXTERN int fleet_pool_jobs(fleet_pool_node_t *node, fleet_pool_jobs_cb cb,
                                 void *user_data);

/* The jobs the worker `worker_id` owns (pulse's Worker.Jobs()), any worker
 * of the pool, local or not (fleet_pool_worker_id() gives a local
 * worker's id): each with its key, owner and token, valid until the
 * callback returns; none when the worker owns no job or is not in the
 * pool. One round trip, reading the worker's own set of jobs (not every
 * job of the pool). Returns 0, FLEET_EINVAL (NULL node, callback or
 * worker id), FLEET_E2BIG (an id longer than FLEET_POOL_KEY_MAX),
 * FLEET_ECLOSING, FLEET_ESHUTDOWN, FLEET_ECONFLICT or FLEET_ENOMEM; `cb`
 * then never runs. */
FLEET_EXTERN int fleet_pool_worker_jobs(fleet_pool_node_t *node,
                                        const char *worker_id,
                                        fleet_pool_jobs_cb cb, void *user_data);

/* A job's payload; FLEET_ENOTFOUND when there is no such job. */
typedef void (*fleet_pool_payload_cb)(fleet_pool_node_t *node, int status,
                                      fleet_bytes_t payload, void *user_data);
FLEET_EXTERN int fleet_pool_get_payload(fleet_pool_node_t *node,
                                        const char *key,
                                        fleet_pool_payload_cb cb,
                                        void *user_data);

/* A worker of the pool, in creation order. */
typedef struct {
  const char *id;
  const char *node_id;
  uint64_t created; /* its creation sequence number in the pool */
  int local;        /* hosted by the node the query was made on */
} fleet_pool_worker_info_t;

typedef void (*fleet_pool_workers_cb)(fleet_pool_node_t *node, int status,
                                      const fleet_pool_worker_info_t *workers,
                                      size_t n, void *user_data);
/* The workers of the whole pool (the local ones have `local` set). */
FLEET_EXTERN int fleet_pool_workers(fleet_pool_node_t *node,
                                    fleet_pool_workers_cb cb, void *user_data);

/* Shuts the whole pool down (pulse's Shutdown): every node is told to stop
 * all its jobs (FLEET_POOL_STOP_SHUTDOWN), after which it takes no more
 * calls (FLEET_ESHUTDOWN) and should be closed; every key holding a job,
 * a payload or a member is removed. `cb` runs once that is done.
 *
 * The pool stays shut: a node that joins it afterwards (a new one, or a
 * node that joins again) is refused: its error callback hears
 * FLEET_ESHUTDOWN once, it takes no more calls (FLEET_ESHUTDOWN) and
 * should be closed. fleet_pool_reset() (or `fleet pool reset P`) opens the
 * pool again. */
FLEET_EXTERN int fleet_pool_shutdown(fleet_pool_node_t *node,
                                     fleet_status_cb cb, void *user_data);

/* ------------------------------------------------------------------------ */
/* Reading a pool from a client                                             */

/* The states of a job in a pool (docs/pool.md, the key schema). */
#define FLEET_POOL_JOB_STATE_MAP(XX)                                           \
  XX(STARTING, "starting") /* assigned: its owner's start has not reported */  \
  XX(RUNNING, "running")   /* its owner's start reported success */            \
  XX(MOVING, "moving")     /* its owner changed: stopping on the old one */    \
  XX(STOPPING, "stopping") /* fleet_pool_stop_job() was asked for it */        \
  XX(ORPHANED, "orphaned") /* no owner: the next rebalance places it */        \
  XX(REQUEUED, "requeued") /* requeued by its owner: placed after backoff */

typedef enum {
#define FLEET__POOL_JOB_STATE_ENUM(name, str) FLEET_POOL_JOB_##name,
  FLEET_POOL_JOB_STATE_MAP(FLEET__POOL_JOB_STATE_ENUM)
#undef FLEET__POOL_JOB_STATE_ENUM
} fleet_pool_job_state_t;

/* The name of a job state ("running"); "unknown" when out of range. */
FLEET_EXTERN const char *fleet_pool_job_state_name(int state);

/* A job of a pool as fleet_pool_query_jobs() reads it. */
typedef struct {
  /* Its key (NUL-terminated). */
  fleet_bytes_t key;
  /* Its owner's worker id, NUL-terminated; "" while it has none. */
  const char *worker_id;
  /* The token of its last assignment. */
  uint64_t token;
  fleet_pool_job_state_t state;
} fleet_pool_job_status_t;

/* Completion of fleet_pool_query_workers() on `client`: `status` 0, the
 * pool's membership revision (0 for a pool that has never had a member)
 * and its `n` workers in creation order (`local` is always 0); or an
 * error, 0, NULL and 0. */
typedef void (*fleet_pool_query_workers_cb)(
    fleet_client_t *client, int status, uint64_t revision,
    const fleet_pool_worker_info_t *workers, size_t n, void *user_data);

/* Completion of fleet_pool_query_jobs() on `client`: `status` 0 and the
 * pool's `n` jobs (in no set order); or an error, NULL and 0. */
typedef void (*fleet_pool_query_jobs_cb)(fleet_client_t *client, int status,
                                         const fleet_pool_job_status_t *jobs,
                                         size_t n, void *user_data);

/* Reads the workers of the pool `pool` (the name rule) from `client`
 * without joining it: for tools and dashboards (a node reads its own pool
 * with fleet_pool_workers()). A pool nobody has used has no worker. One
 * round trip; the membership is read at one instant. The strings of
 * `workers` are valid until the callback returns.
 *
 * `cb` runs once, never inside this call: 0 and the workers; a backend
 * error (FLEET_EUNAVAILABLE, FLEET_ETIMEDOUT, ...); FLEET_EWRONGTYPE or
 * FLEET_EPROTO for keys fleet did not write; FLEET_ECANCELED when the
 * client closes first.
 *
 * Returns 0; FLEET_EINVAL (NULL client or callback, NULL or empty pool
 * name); FLEET_E2BIG (a name longer than 512 bytes); FLEET_ECLOSING (the
 * client is closing); FLEET_ENOMEM. On error nothing is sent and `cb`
 * never runs. */
FLEET_EXTERN int fleet_pool_query_workers(fleet_client_t *client,
                                          const char *pool,
                                          fleet_pool_query_workers_cb cb,
                                          void *user_data);

/* Reads the jobs of the pool `pool` from `client` without joining it, with
 * each job's owner, token and state: as fleet_pool_query_workers() (same
 * return codes and callback rules). The keys and worker ids of `jobs` are
 * valid until the callback returns. */
FLEET_EXTERN int fleet_pool_query_jobs(fleet_client_t *client, const char *pool,
                                       fleet_pool_query_jobs_cb cb,
                                       void *user_data);

/* Reads the jobs that one worker of the pool `pool` owns, `worker_id`
 * (as fleet_pool_worker_jobs(), from a client): as fleet_pool_query_jobs()
 * (same callback rules), reading the worker's set of jobs only. Returns
 * 0, FLEET_EINVAL (also a NULL or empty worker id), FLEET_E2BIG (a name
 * or an id longer than 512 bytes), FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_pool_query_worker_jobs(fleet_client_t *client,
                                              const char *pool,
                                              const char *worker_id,
                                              fleet_pool_query_jobs_cb cb,
                                              void *user_data);

/* Completion of fleet_pool_reset(): 0 when the pool was shut down and is
 * open again, FLEET_EALREADY when it was not shut down (nothing changed),
 * or a backend error (FLEET_ECANCELED when the client closes first). */
typedef void (*fleet_pool_reset_cb)(fleet_client_t *client, int status,
                                    void *user_data);

/* Opens the pool `pool`, shut down by fleet_pool_shutdown(), to nodes
 * again: new nodes (and old ones, joining again) are admitted from then
 * on. Nothing else changes: the shutdown removed every job and member
 * already. One round trip; `cb` runs once, never inside this call.
 * Returns 0, FLEET_EINVAL (NULL client or callback, NULL or empty name),
 * FLEET_E2BIG, FLEET_ECLOSING or FLEET_ENOMEM; on error nothing is sent
 * and `cb` never runs. */
FLEET_EXTERN int fleet_pool_reset(fleet_client_t *client, const char *pool,
                                  fleet_pool_reset_cb cb, void *user_data);

/* ------------------------------------------------------------------------ */
/* Tickers                                                                  */

/* A ticker of a pool: a handle. Every node that runs a ticker of one name
 * shares it, and each tick goes to exactly one of them. */
typedef struct fleet_pool_ticker_s {
  FLEET_HANDLE_FIELDS
} fleet_pool_ticker_t;

/* One tick: its sequence number (1, 2, ... across the pool), the server
 * time it was due (ms since the Unix epoch), and how many ticks before it
 * were not delivered: came due while no node claimed them (folded into
 * this one), or were claimed by a node that never acknowledged them and
 * are now too old to deliver again.
 *
 * Each claimed tick carries a delivery lease of the node's worker TTL
 * (server clock) and is acknowledged once its callback returned. A tick
 * whose claimer did not acknowledge it in time (it died, paused, or its
 * loop stalled) is delivered again, to the next node that claims, with
 * `redelivered` set and its first sequence number and due time, unless it
 * was due more than 2 worker TTLs + 10 periods ago (then it is counted in
 * the next tick's `missed`). So a tick is delivered at least once, and
 * more than once only as a redelivery: docs/pool.md has the window. */
typedef struct {
  uint64_t seq;
  uint64_t scheduled_ms;
  uint64_t missed;
  int redelivered;
} fleet_pool_tick_t;

/* Called with status 0 and a tick (valid until the callback returns), or
 * once with FLEET_ECANCELED and NULL when the ticker was ended (by
 * fleet_pool_ticker_end() on any node): then no tick follows. */
typedef void (*fleet_pool_tick_cb)(fleet_pool_ticker_t *ticker, int status,
                                   const fleet_pool_tick_t *tick);

/* The shortest period, in ms. */
#define FLEET_POOL_TICK_MIN_MS 10

/* The options of a ticker. */
typedef struct {
  /* Optional: hears each failure of a claim; the ticker retries, with
   * backoff, forever. */
  fleet_error_cb error_cb;
} fleet_pool_ticker_options_t;

/* Fills `options` with the defaults (no error callback). */
FLEET_EXTERN void
fleet_pool_ticker_options_init(fleet_pool_ticker_options_t *options);

/* Initializes `ticker`, the ticker `name` (the name rule) of the pool of
 * `node`, ticking every `period_ms` (at least FLEET_POOL_TICK_MIN_MS; the
 * period of the first node that ticks rules), on the node's client. The
 * ticker does not need the node afterwards. `options` may be NULL for the
 * defaults; it is copied. Sends nothing. Returns 0, FLEET_EINVAL,
 * FLEET_E2BIG, FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int
fleet_pool_ticker_init(fleet_pool_node_t *node, fleet_pool_ticker_t *ticker,
                       const char *name, uint32_t period_ms,
                       const fleet_pool_ticker_options_t *options);

/* Starts taking part: `cb` gets each tick this node claims. Returns 0,
 * FLEET_EINVAL, FLEET_EALREADY (started already) or FLEET_ECLOSING. */
FLEET_EXTERN int fleet_pool_ticker_start(fleet_pool_ticker_t *ticker,
                                         fleet_pool_tick_cb cb);

/* Ends the ticker for every node, in shared state (unlike the close,
 * which is local): each node's tick callback gets FLEET_ECANCELED at its
 * next claim (within one period), this one's before `cb` runs. For 10
 * periods (at least 1 s), a ticker of that name started anew finds itself
 * ended. `cb` runs once, never inside this call: 0, the backend's error,
 * or FLEET_ECANCELED when the ticker closes first. Returns 0, FLEET_EINVAL
 * (NULL ticker or callback), FLEET_EALREADY (ended already), FLEET_ECLOSING
 * or FLEET_ENOMEM; on error `cb` never runs. */
FLEET_EXTERN int fleet_pool_ticker_end(fleet_pool_ticker_t *ticker,
                                       fleet_status_cb cb, void *user_data);

/* Closes the ticker on this node only: the others go on ticking. */
FLEET_EXTERN int fleet_pool_ticker_close(fleet_pool_ticker_t *ticker,
                                         fleet_close_cb cb);

/* ------------------------------------------------------------------------ */
/* Schedules                                                                */

/* A schedule of a pool: a handle. Every interval, one of the nodes that
 * run a schedule of one name is asked for a plan (jobs to start, jobs to
 * stop, or to stop every other job it started), which it applies through
 * dispatch and stop. */
typedef struct fleet_pool_schedule_s {
  FLEET_HANDLE_FIELDS
} fleet_pool_schedule_t;

/* A plan being written; valid until the plan callback returns. */
typedef struct fleet_pool_plan_s fleet_pool_plan_t;

/* What a plan callback returns to end the schedule on every node. */
#define FLEET_POOL_PLAN_STOP 1

/* Asks for a plan: fill it with the calls below and return 0, or return
 * FLEET_POOL_PLAN_STOP to end the schedule everywhere (its keys are
 * forgotten; the jobs it started keep running). `tick` says which
 * interval this is. */
typedef int (*fleet_pool_plan_cb)(fleet_pool_schedule_t *schedule,
                                  fleet_pool_plan_t *plan,
                                  const fleet_pool_tick_t *tick);

/* The plan starts the job `key` with `payload` (copied): it is dispatched
 * unless the key is in the pool already (then it counts as started). */
FLEET_EXTERN int fleet_pool_plan_start(fleet_pool_plan_t *plan, const char *key,
                                       fleet_bytes_t payload);
/* The plan stops the job `key`. */
FLEET_EXTERN int fleet_pool_plan_stop(fleet_pool_plan_t *plan, const char *key);
/* The plan stops every job the schedule started that it does not start. */
FLEET_EXTERN int fleet_pool_plan_stop_all(fleet_pool_plan_t *plan);

/* The options of a schedule. */
typedef struct {
  /* Optional: hears failed plans, dispatches (other than FLEET_EEXIST) and
   * stops. */
  fleet_error_cb error_cb;
} fleet_pool_schedule_options_t;

/* Fills `options` with the defaults (no error callback). */
FLEET_EXTERN void
fleet_pool_schedule_options_init(fleet_pool_schedule_options_t *options);

/* Initializes `schedule`, the schedule `name` (the name rule) of the pool
 * of `node`, planning every `interval_ms` (at least
 * FLEET_POOL_TICK_MIN_MS). Its dispatches and stops go through `node`,
 * which must stay open while the schedule is. `options` may be NULL for
 * the defaults; it is copied. Sends nothing. Returns 0, FLEET_EINVAL,
 * FLEET_E2BIG, FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_pool_schedule_init(
    fleet_pool_node_t *node, fleet_pool_schedule_t *schedule, const char *name,
    uint32_t interval_ms, const fleet_pool_schedule_options_t *options);

/* Starts taking part: `cb` plans the intervals this node gets. Returns 0,
 * FLEET_EINVAL, FLEET_EALREADY or FLEET_ECLOSING. */
FLEET_EXTERN int fleet_pool_schedule_start(fleet_pool_schedule_t *schedule,
                                           fleet_pool_plan_cb cb);

/* Closes the schedule on this node only. */
FLEET_EXTERN int fleet_pool_schedule_close(fleet_pool_schedule_t *schedule,
                                           fleet_close_cb cb);

/* Closes the node: its workers get FLEET_POOL_STOP_CLOSE for each job,
 * the node leaves the pool, and the other nodes start its jobs. Pending
 * calls complete with FLEET_ECANCELED; then `cb` runs. Returns 0,
 * FLEET_EINVAL or FLEET_ECLOSING. */
FLEET_EXTERN int fleet_pool_node_close(fleet_pool_node_t *node,
                                       fleet_close_cb cb);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_POOL_H */
