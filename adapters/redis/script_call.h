/* script_call.h -- the Redis core: what every Redis front-end does the
 * same way, whatever it routes to.
 *
 *   - An op becomes a command: "EVALSHA <sha1> <numkeys> keys... args..."
 *     for a script op (the plain or the sharded copy of the script,
 *     scripts.h), the op's command for the others (fleet__op_command()).
 *   - NOSCRIPT (a restart, a SCRIPT FLUSH, a failover) turns an EVALSHA
 *     into an EVAL of the script's body, told once to the log hook.
 *   - Requests (fleet__rreq_t, or a front-end's record that starts with
 *     one) come from a pool.
 *   - A reply becomes the op's outcome: converted (reply.c), with the
 *     backend's detail set, WAIT's answer included.
 *   - The subscriber list (adapters/subs.h), with its live notifications
 *     and its dispatch loop.
 *
 * The front-ends only route, each using this core: redis.c (one server,
 * or the master the sentinels name), cluster.c (the master of each slot)
 * and byo.c (the program's own hiredis context). None calls another. */
#ifndef FLEET_REDIS_SCRIPT_CALL_H
#define FLEET_REDIS_SCRIPT_CALL_H

#include "backend.h"
#include "common/freelist.h"
#include "redis/conn.h"
#include "redis/reply.h"
#include "subs.h"

/* The core's part of a front-end's backend, its first member: a
 * front-end's backend is a fleet__rcore_t followed by its routing state. */
typedef struct {
  fleet__backend_t base; /* first: what the vtable's calls get */
  uv_loop_t *loop;
  fleet__backend_config_t config;
  const fleet__backend_events_t *events;
  void *owner;
  int closing; /* close() was called */
  /* Each op's script (the sharded copies on a cluster), NULL for an op
   * that is a plain command. */
  const fleet__script_t *scripts[FLEET__OP_COUNT];
  /* The server has the scripts' function libraries (the connections set
   * it: fleet__rconn_t.functions; a front-end with the config's functions
   * starts with 1): a script op that has one is sent as FCALL, else as
   * EVALSHA. Cleared when an FCALL is refused unrun. */
  int functions;
  size_t req_size; /* a pooled request's size: a fleet__rreq_t first */
  fleet__freelist_t free_reqs;
  fleet__subs_t subs;
  fleet__reply_scratch_t scratch;
} fleet__rcore_t;

/* The command head of an op: "FCALL <name> <numkeys>" for a script op
 * with a function library while the server has them, "EVALSHA <sha1>
 * <numkeys>" for the other script ops, or the op's command. */
typedef struct {
  const fleet__script_t *script; /* NULL: a plain command */
  int fenced;  /* a fenced script op: an epoch argument follows */
  size_t argc; /* 3 or 1 */
  fleet_bytes_t argv[3];
  char numkeys[24];
} fleet__rcall_head_t;

/* The script of the op called `name` (`sharded`: the copy a cluster
 * runs), or NULL. */
const fleet__script_t *fleet__rcall_find_script(const char *name, int sharded);

/* Sets up `core` as the backend of vtable `vt` on `loop` for `owner`, with
 * a copy of `config`: the op scripts (`sharded` on a cluster), an empty
 * request pool of `req_size`-byte records and an empty subscriber list.
 * `events` must outlive it. */
void fleet__rcore_init(fleet__rcore_t *core, const fleet__backend_vtable_t *vt,
                       uv_loop_t *loop, const fleet__backend_config_t *config,
                       const fleet__backend_events_t *events, void *owner,
                       int sharded, size_t req_size);

/* Starts closing: from now on the subscriber list calls no one back.
 * Returns 1, or 0 when it had already started (nothing to do then). */
int fleet__rcore_close(fleet__rcore_t *core);

/* The checks of the vtable's call() before any routing: FLEET_ECLOSING
 * once closing, FLEET_EINVAL without a callback; else 0. */
int fleet__rcore_call_check(const fleet__rcore_t *core, fleet__reply_cb cb);

/* The checks of the vtable's subscribe(): FLEET_ECLOSING once closing,
 * FLEET_EINVAL for an empty channel, no callback or no `out`; else 0. */
int fleet__rcore_subscribe_check(const fleet__rcore_t *core,
                                 const char *channel, size_t len,
                                 fleet__message_cb cb, fleet__sub_t **out);

/* A (S)SUBSCRIBE answered with `status` and `reply` on the subscriber
 * connection at `where`: the subscribers of the channel it names hear
 * that it is live (fleet__subs_live()). */
void fleet__rcore_subscribed(fleet__rcore_t *core, const void *where,
                             int status, const redisReply *reply);

/* A published message (an array "message" or "smessage", channel,
 * payload) on the subscriber connection at `where`: its subscribers hear
 * it (fleet__subs_message()). */
void fleet__rcore_message(fleet__rcore_t *core, const void *where,
                          const redisReply *reply);

/* Frees what `core` holds: the pooled requests, the subscriber entries,
 * the reply storage. */
void fleet__rcore_free(fleet__rcore_t *core);

/* Fills `h` with the head of `op` called with `nkeys` keys. Returns 0, or
 * FLEET_EINVAL for an op the Redis backends do not implement. */
int fleet__rcore_head(const fleet__rcore_t *core, fleet__op_t op, size_t nkeys,
                      fleet__rcall_head_t *h);

/* A request from the pool (or new: `req_size` zeroed bytes) with no
 * deadline, no script and no next; NULL when out of memory. */
fleet__rreq_t *fleet__rcore_req_get(fleet__rcore_t *core);

/* Gives `req` back to the pool; a large buffer is freed, so that a rare
 * large command does not pin its memory for the life of the client. */
void fleet__rcore_req_put(fleet__rcore_t *core, fleet__rreq_t *req);

/* A pooled request holding op `op` with its keys and args, its callback
 * `cb`/`arg` set (not its on_reply nor its deadline). Returns 0,
 * FLEET_EINVAL (an op not implemented) or FLEET_ENOMEM. */
int fleet__rcore_build(fleet__rcore_t *core, fleet__op_t op,
                       const fleet_bytes_t *keys, size_t nkeys,
                       const fleet_bytes_t *args, size_t nargs,
                       fleet__reply_cb cb, void *arg, fleet__rreq_t **out);

/* A pooled request holding the command of `argc` words `argv`; NULL when
 * out of memory. */
fleet__rreq_t *fleet__rcore_command(fleet__rcore_t *core, size_t argc,
                                    const fleet_bytes_t *argv);

/* "WAIT <config.wait_replicas> <config.wait_timeout_ms>" as a pooled
 * request; NULL when out of memory. */
fleet__rreq_t *fleet__rcore_wait(fleet__rcore_t *core);

/* Whether `reply` says that the script call of `script` (NULL: not a
 * script call, then never) did not run for want of its code: NOSCRIPT
 * for an EVALSHA; for an FCALL, a function the server does not have (a
 * FUNCTION FLUSH, a server restarted without its data) or does not allow
 * (no FCALL: an older server, an ACL). The log hook hears it, and after
 * an FCALL the core goes back to EVALSHA until a connection loads the
 * libraries again (its next handshake). Then fleet__rcore_to_eval()
 * rewrites the request. */
int fleet__rcore_noscript(fleet__rcore_t *core, const fleet__script_t *script,
                          const redisReply *reply);

/* Rewrites an EVALSHA or FCALL request as EVAL with the script body,
 * keeping its keys and args (EVAL also caches the script again). 0 or
 * FLEET_ENOMEM. */
int fleet__rcore_to_eval(fleet__rreq_t *req);

/* Sets the backend's detail for an outcome `status`: "" on success, the
 * server's text for an error reply (or one inside an array), `conn_detail`
 * (what the connection said) for the connection's own errors. */
void fleet__rcore_set_detail(fleet__rcore_t *core, const char *conn_detail,
                             int status, const redisReply *reply);

/* The outcome of a request answered with `status` and `reply`: `reply`
 * converted into *out (valid until the next conversion) when status is 0,
 * and the detail set. Returns the op's status. */
int fleet__rcore_outcome(fleet__rcore_t *core, const char *conn_detail,
                         int status, const redisReply *reply,
                         const fleet__reply_t **out);

/* The outcome of a WAIT (fleet__rcore_wait()) answered with `status` and
 * `reply`: 0 when enough replicas acknowledged, FLEET_ETIMEDOUT when too
 * few did, else the error; the detail says which. */
int fleet__rcore_wait_outcome(fleet__rcore_t *core, const char *conn_detail,
                              int status, const redisReply *reply);

#endif /* FLEET_REDIS_SCRIPT_CALL_H */
