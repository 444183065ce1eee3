/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/client.h -- the client handle: one connection to a backend. */
#ifndef FLEET_CLIENT_H
#define FLEET_CLIENT_H

#include "fleet/common.h"
#include "fleet/log.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The connection states a client reports through its state callback. */
#define FLEET_CLIENT_STATE_MAP(XX)                                             \
  XX(CONNECTING, "connecting")                                                 \
  XX(READY, "ready")                                                           \
  XX(RECONNECTING, "reconnecting")                                             \
  XX(CLOSED, "closed")

typedef enum {
#define FLEET__STATE_ENUM(name, str) FLEET_CLIENT_##name,
  FLEET_CLIENT_STATE_MAP(FLEET__STATE_ENUM)
#undef FLEET__STATE_ENUM
} fleet_client_state_t;

/* The name of a state ("ready"); never NULL. */
FLEET_EXTERN const char *fleet_client_state_name(fleet_client_state_t state);

/* Called on every state change. `status` is 0, or for RECONNECTING the error
 * that broke or refused the connection (FLEET_ECONNREFUSED, FLEET_EAUTH,
 * FLEET_ETIMEDOUT, ...). CLOSED is reported once, just before the close
 * callback. */
typedef void (*fleet_client_state_cb)(fleet_client_t *client,
                                      fleet_client_state_t state, int status);

/* Called once when a client has released everything it held. The memory of
 * the handle may be reused from here on. */
typedef void (*fleet_client_close_cb)(fleet_client_t *client);

/* Completion of fleet_client_ping(). `status` is 0 or a negative error. */
typedef void (*fleet_client_ping_cb)(fleet_client_t *client, int status,
                                     void *user_data);

/* Completion of fleet_client_time(): the backend's clock, in microseconds
 * since the Unix epoch (Redis `TIME`), valid when `status` is 0. */
typedef void (*fleet_client_time_cb)(fleet_client_t *client, int status,
                                     uint64_t unix_us, void *user_data);

/* The default reply limit: four job payloads at FLEET_JOB_PAYLOAD_MAX. */
#define FLEET_CLIENT_MAX_REPLY_DEFAULT (256u * 1024 * 1024)

typedef struct {
  /* Prefix of every key fleet writes; copied. Default "fleet". At most 128
   * bytes, and it may not contain '{' or '}'. */
  const char *prefix;
  /* Time allowed for one connection attempt, handshake included.
   * Default 5000 ms. */
  uint32_t connect_timeout_ms;
  /* Time allowed for a command from the moment it is issued until its reply,
   * waiting for a connection included. Default 5000 ms. A command still
   * waiting when a connection comes up is given this whole time again
   * from then (it may take up to twice this in all), so that a reply
   * that takes a moment on a fresh connection is not taken for a stalled
   * server. */
  uint32_t command_timeout_ms;
  /* Reconnect backoff: the first delay, the largest delay, and a random
   * jitter as a percentage of each delay (0..100). Defaults 100 ms,
   * 5000 ms, 20 %. */
  uint32_t reconnect_initial_ms;
  uint32_t reconnect_max_ms;
  uint32_t reconnect_jitter_pct;
  /* Largest reply accepted from the backend, in bytes. A larger reply
   * fails its command with FLEET_EREPLY2BIG and resets the connection (the
   * other commands in flight get FLEET_ECONNLOST) instead of being
   * buffered. Default (0): FLEET_CLIENT_MAX_REPLY_DEFAULT. Raise it for
   * stores whose value_max is above 64 MiB or for large batch reads. */
  uint64_t max_reply_bytes;
  /* Durability (Redis with replicas; see docs/deploy.md). With
   * wait_replicas N > 0, every queue call that changes a job's state
   * (enqueue, claim, complete, fail, release, and a worker's own), and
   * every lock acquire (a leader's campaign included), is followed, in
   * the same pipeline, by WAIT N wait_timeout_ms: its
   * callback runs once N replicas have the write. Fewer within the timeout
   * fails the call with FLEET_ETIMEDOUT, and the write may still have
   * been applied: it is done on the master (WAIT undoes nothing), where a
   * failover may lose it; fleet_client_last_error() says how many
   * replicas had it. wait_timeout_ms defaults to 1000 and should stay
   * below command_timeout_ms. Default 0: no wait, as Redis replication is
   * asynchronous. The URL may give both as query options
   * (?wait_replicas=N&wait_timeout_ms=MS); a non-zero value here wins over
   * the URL's, and 0 here means "as the URL says". memory:// has no
   * replicas and refuses N > 0 with FLEET_EINVAL (and the URL options
   * with FLEET_EBADURL). */
  uint32_t wait_replicas;
  uint32_t wait_timeout_ms;
  /* Optional state callback. */
  fleet_client_state_cb state_cb;
  /* memory:// only: share the in-process store of this open client (on the
   * same loop) instead of creating a private one. NULL by default. */
  fleet_client_t *memory_peer;
  /* Optional logging hook (see fleet/log.h): reconnects, script reloads,
   * recovered claims, lost leases and background errors of the client and
   * its handles, as one line each; `log_data` is passed back to it. */
  fleet_log_cb log_cb;
  void *log_data;
  /* Fail fast: until the client was first connected, when an attempt to
   * connect fails for a cause that may pass (a refused connection, a
   * host that does not resolve, a missing unix socket, the connect
   * timeout), the commands waiting for the connection fail at once with
   * its status (FLEET_ECONNREFUSED, FLEET_ERESOLVE, FLEET_ETIMEDOUT; the
   * state callback and fleet_client_last_error() tell the cause) instead
   * of waiting for the next attempt until their command timeout. The
   * client still reconnects as usual, and commands issued later wait for
   * it. Once it was connected, a lost connection is waited for as
   * without this option (a restart of the server is bridged).
   * Causes that cannot pass by waiting (a wrong password, a server that
   * does not speak RESP) fail the waiting commands at once whatever this
   * says. Meant for one-shot programs such as the fleet CLI. On a
   * cluster, the commands waiting for the first slot map fail once every
   * seed was asked for it in vain; with sentinels, once every sentinel
   * was asked for the master in vain (FLEET_EUNAVAILABLE). Default 0. */
  int fail_fast;
} fleet_client_options_t;

struct fleet_client_s {
  /* For the user; fleet never reads or writes it. */
  void *data;
  /* Private. */
  struct fleet__client_s *internal_;
};

/* Fills `options` with the defaults. */
FLEET_EXTERN void fleet_client_options_init(fleet_client_options_t *options);

/* Initializes `client` on `loop` and starts connecting to `url`:
 *   redis://[[user]:password@]host[:port][/db]   (port 6379, db 0)
 *   rediss://...                                  (the same, over TLS)
 *   redis+cluster://[[user]:password@]host:port[,host:port...]
 *   redis+sentinel://[[user]:password@]host:port[,host:port...]/master[/db]
 *                                                 (sentinel port 26379)
 *   rediss+cluster://..., rediss+sentinel://...   (TLS everywhere)
 *   unix:///path/to/redis.sock[?db=N]
 *   memory://
 * Every URL but memory:// takes query options after '?', joined by '&',
 * each at most once (a repeated option is refused): for the TLS schemes
 * tls_ca_file, tls_ca_dir, tls_cert, tls_key (cert and key together),
 * tls_server_name and tls_verify=0|1 (default 1; with 0 the client logs
 * a warning through log_cb, before this call returns); for sentinel URLs
 * sentinel_user and sentinel_password (the sentinels' own AUTH; the user
 * info before '@' is for the data nodes); for unix:// db, user and
 * password; for all of them wait_replicas=N (0..1000) and
 * wait_timeout_ms=MS (1..3600000), the durability options below, and
 * functions=0|1 (default 1): with 1, the scripts that have a Redis 7
 * function library are loaded as such at connect (FUNCTION LOAD) and
 * called with FCALL, which skips defining their code on every call; on a
 * server without functions (before 7.0, or an ACL without FUNCTION LOAD
 * or FCALL) they run as EVALSHA, as they do with 0. Values
 * are %-decoded; a password holding '/', '?' or '#' must escape them,
 * and a URL with an unescaped '#' anywhere is refused (fleet takes no
 * fragment) with an error that names where it is, never the password.
 * docs/deploy.md shows each topology. Host names are resolved on the
 * loop; IPv6 literals go in brackets ("redis://[::1]:6379").
 * fleet_client_url_check() says why a URL is refused. `options` may be
 * NULL for the defaults; it is copied. fleet does not take ownership of
 * `url`.
 *
 * Returns 0, FLEET_EINVAL (NULL loop or client, bad options), FLEET_EBADURL
 * or FLEET_ENOMEM. On error nothing is left on the loop and the close
 * callback must not be awaited. Commands may be issued at once: they wait for
 * the connection up to the command timeout. */
FLEET_EXTERN int fleet_client_init(uv_loop_t *loop, fleet_client_t *client,
                                   const char *url,
                                   const fleet_client_options_t *options);

/* Checks `url` as fleet_client_init() would, without connecting. Returns
 * 0, FLEET_EBADURL or FLEET_ENOMEM; when `why` is not NULL it receives
 * (truncated to `why_size` bytes, NUL included) what is wrong, in words that
 * never quote a password ("" when the URL is good). */
FLEET_EXTERN int fleet_client_url_check(const char *url, char *why,
                                        size_t why_size);

/* The backend URL the environment gives a program: $FLEET_URL, else
 * $REDIS_URL (the name many hosts and tools set), else NULL; an empty
 * variable counts as unset. fleet itself never reads the environment:
 * a program calls this where it has no URL of its own (the fleet tools
 * do when --url is absent). A URL in the environment stays out of `ps`,
 * where a --url argument shows with its password. The string belongs to
 * the environment: valid until the variable changes. */
FLEET_EXTERN const char *fleet_url_from_env(void);

/* Closes `client`: every pending command's callback runs once with
 * FLEET_ECANCELED, then the state callback reports CLOSED, then `close_cb`
 * (which may be NULL) runs. All of this happens after this call returns,
 * never inside it. May be called from any fleet callback.
 *
 * Every handle built on the client (locks, leaders, queues, workers,
 * stores) must be closed first, as uv_loop_close() wants its handles
 * closed: while one is open, this returns FLEET_EBUSY and changes nothing.
 * fleet_client_walk() finds them; close each with fleet_close(). The
 * client may then be closed at once, or from the last close callback.
 * Handles still closing when the client closes have their backend calls
 * cancelled, and their close callbacks run before the client's.
 *
 * Returns 0, FLEET_EINVAL, FLEET_EBUSY (a handle is open), or
 * FLEET_ECLOSING if the client is already closing. */
FLEET_EXTERN int fleet_client_close(fleet_client_t *client,
                                    fleet_client_close_cb close_cb);

/* Called by fleet_client_walk() for each handle. */
typedef void (*fleet_walk_cb)(fleet_handle_t *handle, void *arg);

/* Calls `cb` for every handle of `client` the user made that has not
 * finished closing (closing ones included: see fleet_is_closing()). Handles
 * fleet makes for itself (a worker's queue) are not shown. `cb` may close
 * the handle it is given; handles made inside `cb` are not visited. */
FLEET_EXTERN void fleet_client_walk(fleet_client_t *client, fleet_walk_cb cb,
                                    void *arg);

/* The current state. */
FLEET_EXTERN fleet_client_state_t
fleet_client_state(const fleet_client_t *client);

/* The loop the client runs on. */
FLEET_EXTERN uv_loop_t *fleet_client_loop(const fleet_client_t *client);

/* The key prefix in use (valid until the close callback). */
FLEET_EXTERN const char *fleet_client_prefix(const fleet_client_t *client);

/* The backend's own words for the most recent error reported on `client`:
 * the server's error text ("NOPERM this user has no permissions to access
 * one of the keys used as arguments") or the cause of a connection failure
 * ("connect 127.0.0.1:6391: connection refused"), truncated to a few
 * hundred bytes. Use it next to fleet_strerror() of the status.
 *
 * Every completion on the client sets it: to that text when it reports an
 * error from the backend (a command's callback, or the state callback with
 * a non-zero status), to "" when it succeeds. Returns "" when there is
 * nothing to say and for a NULL or closed client; never NULL. The string
 * is owned by the client and valid inside the callback that got the error
 * and until the next call on the client. */
FLEET_EXTERN const char *fleet_client_last_error(const fleet_client_t *client);

/* Sends a round trip to the backend. `cb` runs once, after this call
 * returns, with 0, FLEET_ETIMEDOUT, FLEET_EUNAVAILABLE, FLEET_ECONNLOST or
 * FLEET_ECANCELED.
 *
 * Returns 0, FLEET_EINVAL (NULL argument) or FLEET_ECLOSING; on error `cb`
 * never runs. */
FLEET_EXTERN int fleet_client_ping(fleet_client_t *client,
                                   fleet_client_ping_cb cb, void *user_data);

/* Reads the backend's clock (the clock every fleet deadline is computed
 * from). Same return codes and callback rules as fleet_client_ping(). */
FLEET_EXTERN int fleet_client_time(fleet_client_t *client,
                                   fleet_client_time_cb cb, void *user_data);

/* The kinds of object fleet_client_scan_names() finds, with their names. */
#define FLEET_OBJECT_KIND_MAP(XX)                                              \
  XX(LOCK, "lock")         /* a lock or a leader election */                   \
  XX(QUEUE, "queue")       /* a job queue */                                   \
  XX(POOL, "pool")         /* a worker pool */                                 \
  XX(CRON, "cron")         /* a cron registry */                               \
  XX(WARMPOOL, "warmpool") /* a warm resource pool */

typedef enum {
#define FLEET__OBJECT_KIND_ENUM(name, str) FLEET_OBJECT_##name,
  FLEET_OBJECT_KIND_MAP(FLEET__OBJECT_KIND_ENUM)
#undef FLEET__OBJECT_KIND_ENUM
} fleet_object_kind_t;

/* The name of a kind ("queue"); "unknown" when out of range. */
FLEET_EXTERN const char *fleet_object_kind_name(int kind);

/* The longest name glob fleet_client_scan_names() takes, in bytes. */
#define FLEET_SCAN_GLOB_MAX 1024

/* Completion of fleet_client_scan_names(): `status` 0 and the `n` names
 * found, sorted by their bytes, each once; or an error, NULL and 0. The
 * names (NUL-terminated) are valid until the callback returns. */
typedef void (*fleet_client_names_cb)(fleet_client_t *client, int status,
                                      const char *const *names, size_t n,
                                      void *user_data);

/* Finds the names of the objects of `kind` under the client's prefix whose
 * name matches `name_glob` (a Redis glob: '*', '?', '[...]', '\\' escapes;
 * NULL for every name), by the keys each kind of object always has. It
 * walks the keyspace with SCAN (never KEYS), on every master of a cluster,
 * one batch at a time: an object present from the start to the end of the
 * walk is found; one made or removed meanwhile may or may not be. The walk
 * stops at `max` names (then which `max` is not defined) or after 100000
 * SCAN calls. Read each object with its own calls afterwards (e.g.
 * fleet_lock_query(), fleet_pool_query_workers()).
 *
 * `cb` runs once, never inside this call: 0 and the names; a backend error
 * (FLEET_EUNAVAILABLE, FLEET_ETIMEDOUT, ... with fleet_client_last_error()
 * telling more); FLEET_EPROTO for a reply fleet cannot read;
 * FLEET_ECANCELED when the client closes first.
 *
 * Returns 0; FLEET_EINVAL (NULL client or callback, a kind out of range,
 * an empty `name_glob`, `max` 0); FLEET_E2BIG (`name_glob` longer than
 * FLEET_SCAN_GLOB_MAX); FLEET_ECLOSING (the client is closing);
 * FLEET_ENOMEM. On error nothing is sent and `cb` never runs. On a
 * cluster whose slot map the client has not read yet (a call right after
 * fleet_client_init()), the walk waits for the map, within the command
 * timeout. */
FLEET_EXTERN int fleet_client_scan_names(fleet_client_t *client,
                                         fleet_object_kind_t kind,
                                         const char *name_glob, size_t max,
                                         fleet_client_names_cb cb,
                                         void *user_data);

/* Copies `url` into `out` (at most `out_size` bytes, NUL included; nothing
 * is written when `out_size` is 0) with every secret replaced by "***", for
 * printing a backend URL in logs and error messages:
 *   - the password of "user:password@" (all the user info when it has no
 *     ':', as such a URL may hold a mistyped password), up to the last
 *     '@' of the URL, so that a password holding '@', '/', '?' or ':' is
 *     hidden whole;
 *   - the value of every query option (after the first '?' that follows
 *     the user info) named "password" or ending in "_password"
 *     ("sentinel_password"), names compared without case and after
 *     %-decoding.
 * Any URL is accepted, valid or not; a NULL `url` gives "". Returns the
 * length of the whole redacted URL (without the NUL), as snprintf() does:
 * a value >= `out_size` means `out` was truncated. Never fails. */
FLEET_EXTERN size_t fleet_redact_url(const char *url, char *out,
                                     size_t out_size);

/* ------------------------------------------------------------------------ */
/* The process registry (docs/registry.md)                                  */

/* Every running queue worker, pool node, cron scheduler and warm-pool node
 * is an entry of the registry of its client's prefix: it registers when
 * it starts (a pool node: when it joins), beats every 2 to 5 seconds (its
 * own heartbeat period held to those bounds; the beats of one client go
 * out in one call), is removed when it stops or closes, and expires on
 * its own three beats after its last one (a process that crashed). A
 * registry write that fails never stops the handle: it is logged once
 * through the client's log_cb. */

/* The most job ids an entry lists (jobs_held counts them all). */
#define FLEET_WORKER_JOBS_LISTED 20

/* One entry. Every string is NUL-terminated and valid until the callback
 * returns. */
typedef struct {
  /* "queue" (a queue worker), "pool" (a pool node), "cron" (a cron
   * scheduler) or "warmpool" (a warm-pool node). */
  const char *kind;
  /* Its identity: the pool node id, the cron scheduler's node id, the
   * warm-pool owner id, or a queue worker's own id
   * ("<host>-<pid>-<8 hex digits>", fleet_worker_id()). */
  const char *id;
  /* What it serves: the queue, pool, cron namespace or warm pool. */
  const char *name;
  /* The host name and process id of the process it runs in. */
  const char *host;
  int64_t pid;
  /* When it registered, and its last beat, in unix ms on the backend
   * clock; it expires at expires_ms unless it beats again. */
  int64_t started_ms;
  int64_t seen_ms;
  int64_t expires_ms;
  /* The jobs it held at its last beat, and the first
   * FLEET_WORKER_JOBS_LISTED of them (`njobs`): a queue worker's claimed
   * jobs by id, a pool node's running jobs by key. 0 for the others. */
  uint32_t jobs_held;
  const char *const *jobs;
  size_t njobs;
} fleet_worker_info_t;

/* Completion of fleet_workers_list(): `status` 0 and the `n` live entries,
 * sorted by kind, then name, then id; or an error, NULL and 0. */
typedef void (*fleet_workers_cb)(fleet_client_t *client, int status,
                                 const fleet_worker_info_t *workers, size_t n,
                                 void *user_data);

/* Lists the live entries of the registry under the client's prefix, in one
 * call (the registry is one slot of a cluster), at most 10000; removes the
 * expired ones it finds. An entry fleet cannot read is left out.
 *
 * `cb` runs once, never inside this call: 0 and the entries; a backend
 * error (FLEET_EUNAVAILABLE, FLEET_ETIMEDOUT, ...); FLEET_EPROTO for a
 * reply fleet cannot read; FLEET_ECANCELED when the client closes first.
 *
 * Returns 0, FLEET_EINVAL (NULL client or callback), FLEET_ECLOSING or
 * FLEET_ENOMEM; on error nothing is sent and `cb` never runs. */
FLEET_EXTERN int fleet_workers_list(fleet_client_t *client, fleet_workers_cb cb,
                                    void *user_data);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_CLIENT_H */
