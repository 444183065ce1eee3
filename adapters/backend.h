/* backend.h -- the internal backend interface: one vtable, one op table.
 *
 * A primitive in src/ builds its keys and arguments, then calls one
 * operation (an "op") through fleet__backend_call(). Each op has the same
 * KEYS/ARGV and the same reply shape on every backend: it is a Lua script
 * in adapters/scripts/lua/<name>.lua (or a plain command), which Redis runs,
 * and which the memory backend runs in its own embedded Lua 5.1 whose
 * redis.call reaches a C keyspace (adapters/memory/command.c). Adding a
 * script op is adding its file (see FLEET__OP_MAP). */
#ifndef FLEET_BACKEND_H
#define FLEET_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "fleet.h"

/* ------------------------------------------------------------------------ */
/* Ops                                                                      */

/* XX(ID, name, command): the op FLEET__OP_<ID>. `name` appears in logs and
 * names the Lua script adapters/scripts/lua/<name>.lua; `command` is NULL
 * for a script op, or the Redis command that is the op (its KEYS then ARGV
 * follow it as arguments).
 *
 * One source per op: a script op is its file. The build lists every
 * script of adapters/scripts/lua in the generated header fleet_ops.h
 * (FLEET__OPS_SCRIPTS, written by cmake/embed_lua.cmake: store_put.lua is
 * FLEET__OP_STORE_PUT), and the script's header states its KEYS, ARGV and
 * reply, which docs/<primitive>.md shows (scripts/gen-op-docs.py). The
 * few ops that are a plain command are listed by hand in ops/commands.h,
 * with their contracts. Adding a script op is adding its file.
 *
 * How a script op receives its keys, one rule for every script: KEYS[1]
 * is the hash tag of the object the op works on, "{<prefix>:<name>}". The
 * script builds every key of that object as KEYS[1] .. ':' .. <part> (its
 * header lists the parts it touches) and touches no key outside the tags
 * it was given, so that a call runs on the one Redis Cluster slot of its
 * tag. An op that works on several objects at once (the renewal of many
 * leases) gets one tag per object as KEYS[1..n]. Nothing that names a key
 * travels in ARGV, with one exception: a SCAN MATCH pattern, which matches
 * keys but is not one. A command op takes its keys as its Redis command
 * does (UNLINK's in KEYS). What the scripts of one primitive share (its
 * key layout) is told in adapters/ops/<primitive>.h. */
#include "fleet_ops.h"
#include "ops/commands.h"

#define FLEET__OP_MAP(XX)                                                      \
  FLEET__OPS_COMMANDS(XX)                                                      \
  FLEET__OPS_SCRIPTS(XX)

typedef enum {
#define FLEET__OP_ENUM(id, name, command) FLEET__OP_##id,
  FLEET__OP_MAP(FLEET__OP_ENUM)
#undef FLEET__OP_ENUM
      FLEET__OP_COUNT
} fleet__op_t;

/* The op's name ("ping"), or NULL when out of range. */
const char *fleet__op_name(fleet__op_t op);

/* Fenced ops: those that grant fencing tokens (lib/fence.lua). Each takes
 * one ARGV more than the primitive passes, last (its script's header lists
 * it): the failover epoch, which the adapter appends, never the primitive. The
 * Redis adapters append it when the command is written to the socket, not when
 * it is built, so that a call queued before a failover and sent after the
 * master was found again carries the epoch of the master it reaches:
 *
 *   one Redis, the memory backend, a program's hiredis context: "0";
 *   Sentinel: the master's config-epoch, from the SENTINEL MASTER answer
 *     that gave the address the connection went to (sentinel.h);
 *   Redis Cluster: "c": the script reads the node's config epoch
 *     (cluster_my_epoch of CLUSTER INFO) itself, on its first grant.
 *
 * A promoted replica's epoch is greater than its old master's, and tokens
 * start at epoch * 2^32: a grant after a failover carries a token greater
 * than every token granted before it, even when the replica missed the
 * last grants (docs/deploy.md, "What survives which failure").
 *
 * A script is a fenced op when its header says "A fenced op": the build
 * lists those in FLEET__OPS_FENCED(XX), XX(ID) each, in fleet_ops.h.
 *
 * fleet__op_fenced() tells whether `op` is one. */
int fleet__op_fenced(fleet__op_t op);

/* The Redis command of a command op ("PING"), or NULL for a script op or
 * when out of range. */
const char *fleet__op_command(fleet__op_t op);

/* ------------------------------------------------------------------------ */
/* Replies                                                                  */

typedef enum {
  FLEET__REPLY_NIL,
  FLEET__REPLY_INT,
  FLEET__REPLY_STR,
  FLEET__REPLY_STATUS,
  FLEET__REPLY_ARRAY
} fleet__reply_type_t;

/* A reply, as a tree. It and everything it points to is owned by the
 * backend and valid until the reply callback returns. Error replies never
 * reach a primitive as replies: the backend turns them into a status code
 * (see fleet__reply_error_code()). */
typedef struct fleet__reply_s {
  fleet__reply_type_t type;
  int64_t integer;                   /* INT */
  const char *str;                   /* STR and STATUS; not NUL-terminated */
  size_t len;                        /* STR and STATUS */
  size_t nelem;                      /* ARRAY */
  const struct fleet__reply_s *elem; /* ARRAY: nelem contiguous children */
} fleet__reply_t;

/* The fleet error for an error reply's text. A script's own error whose
 * first word is a fleet error name ("FLEET_ESTALE token 7 is stale") gives
 * that code; otherwise the server's error code decides:
 *
 *   WRONGTYPE                            FLEET_EWRONGTYPE
 *   NOAUTH, WRONGPASS                    FLEET_EAUTH
 *   NOPERM, a script's ACL denial        FLEET_ENOPERM
 *   MOVED, ASK                           FLEET_EREDIRECT
 *   CROSSSLOT, a script's non local key  FLEET_ECROSSSLOT
 *   or keys in two slots
 *   OOM                                  FLEET_EOOM
 *   READONLY                             FLEET_EREADONLY
 *   BUSY (a script past its threshold)   FLEET_ESCRIPTBUSY
 *   SELECT of a missing database         FLEET_EBADDB
 *   LOADING, MASTERDOWN, TRYAGAIN,       FLEET_EUNAVAILABLE
 *   CLUSTERDOWN, NOREPLICAS, max clients,
 *   a script's "cluster is down"
 *
 * and anything else gives FLEET_EBACKEND. A refusal of a command that a
 * script called gives the same code as the command's own refusal,
 * whether the server passes its code on first (Redis 7: "OOM ...
 * script: <sha1>, ...") or behind the script's context (Redis 6: "ERR
 * Error running script (call to f_<sha1>): @user_script:1: OOM ...");
 * an ACL denial inside a script is FLEET_ENOPERM in either wording
 * ("NOPERM ..." from Redis 7.2, "ERR The user executing the script
 * can't ..." before). The one place that maps backend
 * error text to codes; the text itself reaches the user as the error
 * detail (fleet__backend_set_detail()). */
int fleet__reply_error_code(const char *text, size_t len);

/* Called once per op with 0 and the reply, or a negative error and NULL. */
typedef void (*fleet__reply_cb)(void *arg, int status,
                                const fleet__reply_t *reply);

/* Called for every message published on a subscribed channel, with status 0
 * and the payload. It is also called with status FLEET_ECONNLOST and a NULL
 * payload each time the subscription becomes live: first after subscribe,
 * then after every re-establishment following a break. Messages published
 * before that moment were not seen: the subscriber re-checks the state it
 * waits on. */
typedef void (*fleet__message_cb)(void *arg, int status, const char *payload,
                                  size_t len);

/* ------------------------------------------------------------------------ */
/* The backend object                                                       */

typedef struct fleet__backend_s fleet__backend_t;
/* A subscription, opaque to callers: every adapter keeps its entries in
 * the one subscriber list of adapters/subs.h. */
typedef struct fleet__sub_s fleet__sub_t;
struct fleet__url_s;

/* Connection states a backend reports; the client maps them onto
 * fleet_client_state_t. */
typedef enum {
  FLEET__BACKEND_CONNECTING,
  FLEET__BACKEND_READY,
  FLEET__BACKEND_RECONNECTING,
  FLEET__BACKEND_CLOSED
} fleet__backend_state_t;

/* What the owning client hears from its backend. */
typedef struct {
  /* A state change; `status` as for fleet_client_state_cb. */
  void (*state)(void *owner, fleet__backend_state_t state, int status);
  /* The backend has cancelled every pending op, closed every handle and
   * freed itself: the last call a backend makes. */
  void (*closed)(void *owner);
  /* Optional: a line for the client's logging hook (`level` is a
   * fleet_log_level_t), e.g. a script sent again after NOSCRIPT. */
  void (*log)(void *owner, int level, const char *message);
} fleet__backend_events_t;

struct redisAsyncContext;

/* Settings a backend gets from the client; copied at open. */
typedef struct {
  uint32_t connect_timeout_ms;
  uint32_t command_timeout_ms;
  uint32_t reconnect_initial_ms;
  uint32_t reconnect_max_ms;
  uint32_t reconnect_jitter_pct;
  /* fleet_client_options_t.fail_fast: a failed attempt before ready fails
   * the requests waiting for the connection, whatever the cause. */
  int fail_fast;
  /* The URL's functions option: load the scripts' function libraries
   * and call them with FCALL where the server allows (Redis 7). */
  int functions;
  /* Largest reply accepted, in bytes; 0 for FLEET_CLIENT_MAX_REPLY_DEFAULT. */
  uint64_t max_reply_bytes;
  /* memory:// only: the backend of a peer client whose store to share. */
  fleet__backend_t *memory_peer;
  /* Redis: the job-state ops (enqueue, claim, complete, fail, release)
   * are followed in the same pipeline by WAIT wait_replicas
   * wait_timeout_ms; fewer replicas is FLEET_ETIMEDOUT. 0: no WAIT. */
  uint32_t wait_replicas;
  uint32_t wait_timeout_ms;
  /* fleet__backend_open_hiredis() only: the program's hiredis context,
   * and its subscriber context or NULL. */
  struct redisAsyncContext *hiredis_ac;
  struct redisAsyncContext *hiredis_sub_ac;
} fleet__backend_config_t;

typedef struct {
  /* Allocates a backend and starts connecting. Returns 0 or a negative
   * error (and then nothing is left on the loop). */
  int (*open)(uv_loop_t *loop, const struct fleet__url_s *url,
              const fleet__backend_config_t *config,
              const fleet__backend_events_t *events, void *owner,
              fleet__backend_t **out);

  /* Runs `op`. Returns 0 and later calls `cb` exactly once (never inside this
   * call), or returns a negative error and never calls `cb`. `keys` and
   * `args` are copied before this returns. */
  int (*call)(fleet__backend_t *be, fleet__op_t op, const fleet_bytes_t *keys,
              size_t nkeys, const fleet_bytes_t *args, size_t nargs,
              fleet__reply_cb cb, void *arg);

  /* Subscribes to `channel` (copied); `cb` runs for each message until
   * unsubscribe. On Redis this opens the second connection on first use. */
  int (*subscribe)(fleet__backend_t *be, const char *channel, size_t len,
                   fleet__message_cb cb, void *arg, fleet__sub_t **out);

  /* Ends a subscription; its callback never runs after this returns. */
  void (*unsubscribe)(fleet__backend_t *be, fleet__sub_t *sub);

  /* Starts closing: every pending op's callback runs once with
   * FLEET_ECANCELED (after this returns), subscriptions end, handles close,
   * then events->closed runs. */
  void (*close)(fleet__backend_t *be);

  /* Optional: sends the calls issued so far in this loop iteration now,
   * for a caller that issues them from the iteration's last phase (a
   * prepare handle) and must not wait for the next one. NULL when calls
   * never wait (memory). */
  void (*flush)(fleet__backend_t *be);

  /* Optional, tests only: fleet__backend_set_epoch(). NULL when the
   * backend has no such setting. */
  int (*set_epoch)(fleet__backend_t *be, const char *epoch);
} fleet__backend_vtable_t;

/* Size of the error detail buffer, NUL included. */
#define FLEET__DETAIL_MAX 256

/* Every backend struct starts with this. */
struct fleet__backend_s {
  const fleet__backend_vtable_t *vt;
  /* What the last completion said, for fleet_client_last_error(): the
   * server's error text or the cause of a connection failure when the
   * status was an error, "" when it was 0. A backend sets it right before
   * it calls a reply callback or reports a state change; NUL-terminated. */
  char detail[FLEET__DETAIL_MAX];
  /* Set by a backend whose keys live on shards (Redis Cluster): the keys of
   * one call must then share a hash slot (fleet__key_slot()), and the
   * batcher splits its calls by the slot of each item's first key. */
  int sharded;
};

/* Number of hash slots of a Redis Cluster. */
#define FLEET__CLUSTER_SLOTS 16384

/* The Redis Cluster hash slot (0..16383) of a key: CRC16 of its hash tag,
 * the part between the first '{' and the next '}' when not empty, else of
 * the whole key. */
uint16_t fleet__key_slot(const void *key, size_t len);

/* Sets the detail from a printf format, truncated to fit. */
void fleet__backend_set_detail(fleet__backend_t *be, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Sets the detail to `len` bytes at `p` (not NUL-terminated), truncated to
 * fit; control characters become spaces so that it prints on one line. */
void fleet__backend_set_detail_bytes(fleet__backend_t *be, const void *p,
                                     size_t len);

/* ------------------------------------------------------------------------ */
/* Opening a backend                                                        */

/* Opens the backend that `url`'s scheme names (memory://, one Redis or
 * Sentinel, Redis Cluster) and starts connecting; the one place that
 * chooses an adapter. The arguments are those of the vtable's open. Returns
 * 0 or a negative error, and then nothing is left on the loop. */
int fleet__backend_open(uv_loop_t *loop, const struct fleet__url_s *url,
                        const fleet__backend_config_t *config,
                        const fleet__backend_events_t *events, void *owner,
                        fleet__backend_t **out);

/* Opens the backend over the program's hiredis context `ac` (and `sub_ac`
 * for pub/sub, or NULL for a connection of its own made on first
 * subscribe): fleet_client_init_hiredis(). Returns 0 or a negative error,
 * and then nothing is left on the loop. */
int fleet__backend_open_hiredis(uv_loop_t *loop, struct redisAsyncContext *ac,
                                struct redisAsyncContext *sub_ac,
                                const fleet__backend_config_t *config,
                                const fleet__backend_events_t *events,
                                void *owner, fleet__backend_t **out);

/* The adapters, for fleet__backend_open() and the tests. */
extern const fleet__backend_vtable_t fleet__redis_backend;
extern const fleet__backend_vtable_t fleet__cluster_backend;
extern const fleet__backend_vtable_t fleet__memory_backend;
/* Over the program's hiredis context: opened by
 * fleet__backend_open_hiredis() (its open reads config->hiredis_ac). */
extern const fleet__backend_vtable_t fleet__byo_backend;

/* Tests only: sets the failover epoch that `be` appends to fenced ops from
 * now on (see FLEET__OPS_FENCED), as a failover to a master of that epoch
 * would, so that a test runs lib/fence.lua's rules on either backend: the
 * memory backend (for every client of its store) and a single Redis (until
 * a Sentinel discovery sets it again). `epoch` is 1 to 20 characters, and
 * need not be a valid epoch. Returns 0, or FLEET_EINVAL for another
 * backend or a bad length. */
int fleet__backend_set_epoch(fleet__backend_t *be, const char *epoch);

/* Whether a backend implements `op` (a test checks every op on both). */
int fleet__redis_op_implemented(fleet__op_t op);
int fleet__memory_op_implemented(fleet__op_t op);

static inline int fleet__backend_call(fleet__backend_t *be, fleet__op_t op,
                                      const fleet_bytes_t *keys, size_t nkeys,
                                      const fleet_bytes_t *args, size_t nargs,
                                      fleet__reply_cb cb, void *arg) {
  return be->vt->call(be, op, keys, nkeys, args, nargs, cb, arg);
}

#endif /* FLEET_BACKEND_H */
