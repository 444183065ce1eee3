/* SPDX-License-Identifier: Apache-2.0 */
/* fleet/cron.h -- cron: expressions and time zones (pure, no client), and
 * a scheduler that fires every occurrence of a shared definition exactly
 * once across the nodes of a namespace. docs/cron.md has the syntax, the
 * time-zone and DST rules, the guarantees and the key schema. */
#ifndef FLEET_CRON_H
#define FLEET_CRON_H

#include <stddef.h>
#include <stdint.h>

#include "fleet/common.h"
#include "fleet/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Expressions and time zones (pure; no client, no loop) ---- */

/* A parsed expression bound to its time zone: immutable once parsed, may
 * be shared by any number of schedulers; freed with fleet_cron_free(). */
typedef struct fleet_cron_s fleet_cron_t;

/* Parses `expr` (5 fields, 6 with seconds first, or an @-macro) in the
 * IANA time zone `tz` ("Europe/Berlin"; NULL or "UTC" for UTC), read from
 * the system's TZif files. On success *out is set and 0 returned. On error
 * *out is NULL, FLEET_EINVAL (bad expression, an expression that never
 * fires, an unknown or malformed zone) or FLEET_ENOMEM is returned, and
 * when err is not NULL it receives a one-line message naming the field and
 * the 1-based position, or the zone and the reason (NUL-terminated,
 * truncated to err_len). The zone file is read here, once (a small
 * blocking read); $TZDIR replaces /usr/share/zoneinfo when set. */
FLEET_EXTERN int fleet_cron_parse(const char *expr, const char *tz,
                                  fleet_cron_t **out, char *err,
                                  size_t err_len);

/* The first fire time strictly after `after_ms` (Unix ms, UTC) in
 * *next_ms, a whole second. Local times skipped by a DST change do not
 * fire; a repeated local time fires once, unless the second, minute or
 * hour field starts with '*' (docs/cron.md). Returns 0, FLEET_EINVAL for a
 * NULL argument, or FLEET_ENOTFOUND when there is no fire time up to
 * 9999-12-31 (an expression that never fires, such as "0 0 30 2 *", is
 * refused by fleet_cron_parse()). */
FLEET_EXTERN int fleet_cron_next(const fleet_cron_t *cron, int64_t after_ms,
                                 int64_t *next_ms);

/* Frees a parsed expression; NULL is a no-op. */
FLEET_EXTERN void fleet_cron_free(fleet_cron_t *cron);

/* The expression and the zone name as given to fleet_cron_parse() ("UTC"
 * when tz was NULL); valid until the expression is freed. */
FLEET_EXTERN const char *fleet_cron_expr(const fleet_cron_t *cron);
FLEET_EXTERN const char *fleet_cron_zone(const fleet_cron_t *cron);

/* Writes `ms` (Unix ms, UTC) as ISO 8601 UTC into buf:
 * "2026-03-29T01:00:00Z", or "2026-03-29T01:00:00.250Z" when ms is not a
 * whole second. Returns the length, or FLEET_EINVAL when buf is too small
 * (26 bytes always suffice for years 0 to 9999) or the year is outside
 * 0..9999. */
FLEET_EXTERN int fleet_cron_format_time(int64_t ms, char *buf, size_t len);

/* Parses an ISO 8601 time with a zone designator,
 * "YYYY-MM-DDTHH:MM[:SS[.fff]]" followed by "Z" or "+HH:MM"/"-HH:MM" ('T'
 * may be a space), into Unix ms. Returns 0 or FLEET_EINVAL. */
FLEET_EXTERN int fleet_cron_parse_time(const char *text, int64_t *ms);

/* ---- The scheduler ---- */

/* A scheduler node: a handle on a client that runs the enabled definitions
 * of a namespace (a shared registry in the backend) and fires each of
 * their occurrences exactly once across all the nodes of the namespace.
 * It keeps one timer, armed for the next occurrence of all its
 * definitions; "now" is always the server's clock (TIME). */
typedef struct fleet_cron_scheduler_s {
  FLEET_HANDLE_FIELDS
} fleet_cron_scheduler_t;

/* The longest key, namespace and node id, in bytes. A namespace has no
 * ':'; a key and a node id have no NUL. */
#define FLEET_CRON_KEY_MAX 256
#define FLEET_CRON_NAMESPACE_MAX 128
#define FLEET_CRON_NODE_ID_MAX 128
/* The longest expression and zone name, in bytes. */
#define FLEET_CRON_EXPR_MAX 256
/* The largest payload and metadata, in bytes. */
#define FLEET_CRON_PAYLOAD_MAX (64 * 1024)

/* What a definition does with the occurrences that came due while no node
 * ran (or all were more than grace_ms late): see docs/cron.md.
 * SKIP logs them as missed, LATEST fires the latest and logs the others as
 * missed, ALL fires them oldest first, at most catch_up_max of them within
 * catch_up_window_ms, and logs the others as missed. */
#define FLEET_CRON_CATCH_UP_MAP(XX)                                            \
  XX(SKIP, "skip")                                                             \
  XX(LATEST, "latest")                                                         \
  XX(ALL, "all")

typedef enum {
#define FLEET__CRON_CATCH_UP_ENUM(name, str) FLEET_CRON_CATCH_UP_##name,
  FLEET_CRON_CATCH_UP_MAP(FLEET__CRON_CATCH_UP_ENUM)
#undef FLEET__CRON_CATCH_UP_ENUM
} fleet_cron_catch_up_t;

/* The name of a policy ("latest"), or NULL when out of range; and the
 * policy of a name (-1 when unknown). */
FLEET_EXTERN const char *fleet_cron_catch_up_name(int policy);
FLEET_EXTERN int fleet_cron_catch_up_parse(const char *name);

/* A definition, as given to fleet_cron_define() (copied) and as read back
 * (owned by fleet, valid until the callback returns). */
typedef struct {
  const char *key;  /* 1..FLEET_CRON_KEY_MAX bytes */
  const char *expr; /* checked with fleet_cron_parse() */
  const char *tz;   /* IANA zone; NULL or "" for UTC */
  fleet_bytes_t payload;
  /* A fleet queue (its name on the same client prefix) that gets the job
   * "<key>@<fire_ms>" (type <key>, the payload) of each occurrence, in
   * the call that claims it; NULL or "" for a callback definition. */
  const char *queue;
  fleet_cron_catch_up_t catch_up; /* default SKIP */
  uint32_t catch_up_max;          /* 0: 10; at most 1000 */
  uint64_t catch_up_window_ms;    /* 0: one hour */
  fleet_bytes_t metadata;         /* opaque, for the user */
  int disabled;
  /* Read back only (0 when defining): */
  int64_t created_ms, updated_ms;
  /* No occurrence at or before it is fired or caught up: the creation,
   * or the last change of expression, zone, target, or re-enabling. */
  int64_t from_ms;
  int64_t last_fire_ms; /* the registry's last fired, -1: none known */
  uint64_t last_token;
  int64_t next_due_ms; /* the next occurrence after the server's now; -1:
                          none (never again, finished, or the expression
                          does not parse here) */
  /* Optional bounds, set when defining and read back (docs/cron.md,
   * "Start, end and a fire limit"): no occurrence before start_ms or after
   * end_ms fires (Unix ms; 0: no bound; end_ms, when set, not before
   * start_ms), and none once max_fires occurrences have fired (0: no
   * limit). The count is kept by the claiming script, so that exactly
   * max_fires fire across all the nodes; it counts the fires made while
   * the definition has a limit, from its creation, and survives updates
   * (remove and define again to start over). A definition that reached its
   * limit stays in the registry, finished: it fires nothing more until an
   * update raises or removes the limit. A definition with a limit cannot change
   * its target. */
  int64_t start_ms, end_ms;
  uint64_t max_fires;
  /* Read back only: the fires counted while a limit was set (the
   * registry's hint, written after each fire), and whether the definition is
   * finished (its limit reached, or no occurrence left before its end). */
  uint64_t fires;
  int finished;
  /* A worker pool (its name on the same client prefix) that gets the
   * keyed job "<key>@<fire_ms>" with the payload for each occurrence,
   * dispatched by the node that claimed it through the pool node given to
   * fleet_cron_scheduler_add_pool() (docs/cron.md, "Pool-targeted
   * definitions"); NULL or "" for none. Not together with `queue`. */
  const char *pool;
  /* Read back only: whether the definition has not started yet (a
   * start_ms after the server's time when it was read; it fires nothing
   * before then). */
  int not_started;
} fleet_cron_def_t;

/* Fills a definition with the defaults (zeroes). */
FLEET_EXTERN void fleet_cron_def_init(fleet_cron_def_t *def);

/* One occurrence given to the fire callback: owned by fleet, valid until
 * it is completed (fleet_cron_complete()) or the scheduler has closed. */
typedef struct fleet_cron_fire_s {
  const char *key;
  int64_t fire_ms;       /* the scheduled time, Unix ms UTC */
  int64_t dispatched_ms; /* when it was handed out (server clock) */
  uint64_t token;        /* strictly increasing per definition */
  fleet_bytes_t payload;
  const char *queue; /* NULL, or the queue that got the job */
  const char *pool;  /* NULL, or the pool that accepted the job */
  /* Private. */
  void *internal_;
} fleet_cron_fire_t;

/* An occurrence fired: do the work, then call fleet_cron_complete() (for
 * a queue definition the job is enqueued already, for a pool definition
 * the pool accepted its job already, and the callback runs after that;
 * completing them is optional). */
typedef void (*fleet_cron_fire_cb)(fleet_cron_scheduler_t *sched,
                                   fleet_cron_fire_t *fire);

typedef struct {
  /* The dispatch log keeps at most this many entries per definition
   * (default 100, at least 1), none older than keep_age_ms (default 7
   * days; 0: no age bound). */
  uint32_t keep_count;
  uint64_t keep_age_ms;
  /* An occurrence up to this late is fired as usual; older ones that
   * nobody fired follow the definition's catch-up policy. Default 5000. */
  uint32_t grace_ms;
  /* The period of the revision check that backs up the change channel.
   * Default 1000 ms. */
  uint32_t check_ms;
  /* Optional: background failures (fires, reloads, completions, pool
   * dispatches), which the scheduler retries. */
  fleet_error_cb error_cb;
  /* A pool definition's occurrence claimed but not recorded as dispatched
   * this long (a node died, or the dispatch failed) is dispatched again by
   * the next node that fires the definition. Default 30000 ms. */
  uint32_t redispatch_ms;
  /* The most a callback definition's occurrence is claimed ahead of its
   * time, so that a burst of occurrences due together is claimed by the
   * time they are due; each is handed to the fire callback at its time
   * (never before, by the server's clock). The scheduler claims only as
   * far ahead as it measured a burst of that size to take (a few ms for
   * one occurrence). 0: claimed when due. Default 1000, at most 60000
   * (docs/cron.md, "Claiming ahead"). */
  uint32_t claim_ahead_ms;
} fleet_cron_scheduler_options_t;

FLEET_EXTERN void
fleet_cron_scheduler_options_init(fleet_cron_scheduler_options_t *o);

/* Initializes `sched`, the node `node_id` of namespace `ns` on `client`.
 * Sends nothing: registry calls work at once, fleet_cron_scheduler_start()
 * starts firing. Returns 0, FLEET_EINVAL, FLEET_E2BIG, FLEET_ECLOSING or
 * FLEET_ENOMEM. */
FLEET_EXTERN int
fleet_cron_scheduler_init(fleet_client_t *client, fleet_cron_scheduler_t *sched,
                          const char *ns, const char *node_id,
                          const fleet_cron_scheduler_options_t *options);

/* Loads the registry, follows its changes and fires occurrences through
 * `cb` until closed. Returns 0, FLEET_EINVAL, FLEET_EALREADY or
 * FLEET_ECLOSING. */
FLEET_EXTERN int fleet_cron_scheduler_start(fleet_cron_scheduler_t *sched,
                                            fleet_cron_fire_cb cb);

/* Lets the scheduler fire the definitions that target the worker pool
 * `pool`: their jobs are dispatched through `node` (a node of that pool on
 * any client; client-only is enough). A scheduler fires no occurrence of
 * a pool definition whose pool has no node here (its error callback hears
 * FLEET_ENOTFOUND once per load). Does not take ownership of `node`, which
 * must stay open until the scheduler has closed; `pool` is copied. Call it
 * before or after fleet_cron_scheduler_start(). Returns 0, FLEET_EINVAL
 * (NULL argument), FLEET_EEXIST (a node for `pool` was given already),
 * FLEET_ECLOSING or FLEET_ENOMEM. */
FLEET_EXTERN int fleet_cron_scheduler_add_pool(fleet_cron_scheduler_t *sched,
                                               const char *pool,
                                               fleet_pool_node_t *node);

/* Closes the scheduler; fires not completed yet become invalid (their log
 * entries stay "dispatched"), and so does an occurrence whose claim is
 * answered after the close: it is logged "dispatched" but not delivered
 * (no fire callback runs from the close call on). */
FLEET_EXTERN int fleet_cron_scheduler_close(fleet_cron_scheduler_t *sched,
                                            fleet_close_cb cb);

/* Reports the outcome of a fire: `error` NULL for completed, else the
 * reason of the failure ("failed: <error>" in the log). The fire is
 * invalid once this returns. The log entry is updated only if it still
 * holds the fire's token. Returns 0, FLEET_EINVAL or FLEET_ECLOSING. */
FLEET_EXTERN int fleet_cron_complete(fleet_cron_fire_t *fire,
                                     const char *error);

/* How a definition is written. */
typedef enum {
  FLEET_CRON_UPSERT = 0, /* create or replace */
  FLEET_CRON_CREATE,     /* FLEET_EEXIST when the key exists */
  FLEET_CRON_UPDATE      /* FLEET_ENOTFOUND when it does not */
} fleet_cron_mode_t;

/* Writes a definition to the registry; every running scheduler of the
 * namespace follows within a second. The expression and zone are checked
 * here: a bad one returns FLEET_EINVAL at once, with the parse error in
 * `err` (may be NULL), and so do negative bounds or an end_ms before
 * start_ms ("end before start" in `err`). Then `cb` gets 0, FLEET_EEXIST,
 * FLEET_ENOTFOUND, FLEET_ECONFLICT (a new target for a definition with a
 * fire limit) or a backend error. */
FLEET_EXTERN int fleet_cron_define(fleet_cron_scheduler_t *sched,
                                   const fleet_cron_def_t *def,
                                   fleet_cron_mode_t mode, char *err,
                                   size_t err_len, fleet_status_cb cb,
                                   void *user_data);

/* Enables or disables a definition (FLEET_ENOTFOUND when missing). */
FLEET_EXTERN int fleet_cron_enable(fleet_cron_scheduler_t *sched,
                                   const char *key, int enabled,
                                   fleet_status_cb cb, void *user_data);

/* Removes a definition (FLEET_ENOTFOUND when missing). Its log stays
 * until it ages out; defining the key again never fires what it holds. */
FLEET_EXTERN int fleet_cron_remove(fleet_cron_scheduler_t *sched,
                                   const char *key, fleet_status_cb cb,
                                   void *user_data);

/* The definitions of the namespace (`key` NULL), or the one of `key`
 * (FLEET_ENOTFOUND when missing): `defs` valid until the callback
 * returns, with last fired and next due filled in. */
typedef void (*fleet_cron_list_cb)(fleet_cron_scheduler_t *sched, int status,
                                   const fleet_cron_def_t *defs, size_t n,
                                   void *user_data);
FLEET_EXTERN int fleet_cron_list(fleet_cron_scheduler_t *sched, const char *key,
                                 fleet_cron_list_cb cb, void *user_data);

/* One entry of a dispatch log. */
typedef struct {
  int64_t fire_ms;
  uint64_t token; /* 0 for a missed occurrence */
  const char *node;
  int64_t dispatched_ms;
  int64_t finished_ms; /* 0 while dispatched */
  /* "dispatched", "completed", "failed: <reason>" or "missed" */
  const char *outcome;
} fleet_cron_entry_t;

/* The newest `limit` (1..1000) entries of a definition's dispatch log,
 * newest first (the definition must exist: its target names the log's
 * place). */
typedef void (*fleet_cron_history_cb)(fleet_cron_scheduler_t *sched, int status,
                                      const fleet_cron_entry_t *entries,
                                      size_t n, void *user_data);
FLEET_EXTERN int fleet_cron_history(fleet_cron_scheduler_t *sched,
                                    const char *key, uint32_t limit,
                                    fleet_cron_history_cb cb, void *user_data);

/* Completion of fleet_cron_trigger(): when `status` is 0, the occurrence
 * fired (`fire_ms`, the server's time of the trigger, never a whole second,
 * so that it is never one of the expression's) and its fencing token. */
typedef void (*fleet_cron_trigger_cb)(fleet_cron_scheduler_t *sched, int status,
                                      int64_t fire_ms, uint64_t token,
                                      void *user_data);

/* Fires the queue definition `key` now, once, outside its schedule (an
 * operator's "run now"): the same claim as a scheduled occurrence (one
 * call that logs the occurrence with a new fencing token and enqueues its
 * job "<key>@<fire_ms>" in the definition's queue; exactly once whatever
 * the nodes do), at the server's time, which shows in fleet_cron_history()
 * with this scheduler's node id and outcome "dispatched". The schedule is
 * untouched: an occurrence due before the trigger still fires. A trigger
 * counts towards the definition's fire limit, and fires a disabled
 * definition too. `sched` need not be started.
 *
 * Only a queue definition can be triggered: the fire of a callback or pool
 * definition is run by the scheduler node that claims it, which a trigger
 * made elsewhere would not reach (FLEET_EINVAL in `cb`).
 *
 * Returns 0 (then `cb` runs once), or FLEET_EINVAL (NULL sched or cb, bad
 * key), FLEET_ECLOSING or FLEET_ENOMEM. `cb` gets 0, FLEET_ENOTFOUND (no
 * such definition), FLEET_EINVAL (not a queue definition, or before its
 * start time), FLEET_EALREADY (finished: past its end or at its fire
 * limit), FLEET_EEXIST (an occurrence at that millisecond is logged
 * already: another trigger in the same millisecond) or a backend error. */
FLEET_EXTERN int fleet_cron_trigger(fleet_cron_scheduler_t *sched,
                                    const char *key, fleet_cron_trigger_cb cb,
                                    void *user_data);

#ifdef __cplusplus
}
#endif

#endif /* FLEET_CRON_H */
