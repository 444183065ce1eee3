/* cli.h -- what the files of the fleet CLI share: the program's context
 * and what every command does with it (cli_util.c), a small JSON tree
 * (every query builds one; the CLI prints it as JSON or as a table, the
 * dashboard serves it), and the queries themselves, which are
 * asynchronous so that the dashboard can run them on its loop.
 *
 * One file per noun: cmd_queue.c (its flow control in
 * cmd_queue_flow.c), cmd_lock.c (lock and leader),
 * cmd_pool.c, cmd_store.c, cmd_watch.c, cmd_cron.c, cmd_warmpool.c,
 * dash.c. A new noun adds its cmd_<noun>.c and one line in main.c's
 * table; its queries keep their state in a cli_query_t (query.c), its
 * verb uses the helpers of cli_util.c (cli_noun_help(), cli_started(),
 * cli_finish() with a cli_view_t). */
#ifndef FLEET_CLI_H
#define FLEET_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fleet.h"

/* ------------------------------------------------------------------------ */
/* JSON                                                                     */

typedef enum {
  CLI_JNULL,
  CLI_JBOOL,
  CLI_JINT,
  CLI_JSTR,
  CLI_JARR,
  CLI_JOBJ
} cli_jtype_t;

typedef struct cli_json_s {
  cli_jtype_t type;
  char *key; /* a member of an object: its name */
  char *str; /* CLI_JSTR: NUL-terminated copy (may hold NULs: see len) */
  size_t len;
  int64_t num; /* CLI_JINT, CLI_JBOOL */
  struct cli_json_s *first, *last, *next;
  size_t n; /* children */
} cli_json_t;

/* Constructors; NULL only when out of memory (every add accepts NULL and
 * then marks the tree as incomplete, which cli_json_write() reports). */
cli_json_t *cli_jobj(void);
cli_json_t *cli_jarr(void);
cli_json_t *cli_jstr(const char *s);
cli_json_t *cli_jbytes(const void *p, size_t len);
cli_json_t *cli_jint(int64_t v);
cli_json_t *cli_jbool(int v);
cli_json_t *cli_jnull(void);
/* Adds `child` to an object under `key` (copied), or to an array (key
 * NULL). Returns `child`. */
cli_json_t *cli_jadd(cli_json_t *parent, const char *key, cli_json_t *child);
/* A deep copy of `j`, or NULL when out of memory. */
cli_json_t *cli_jcopy(const cli_json_t *j);
/* The member `key` of an object, or NULL. */
cli_json_t *cli_jget(const cli_json_t *obj, const char *key);
void cli_jfree(cli_json_t *j);

/* A growing buffer. */
typedef struct {
  char *p;
  size_t len, cap;
  int oom;
} cli_buf_t;

void cli_buf_add(cli_buf_t *b, const void *p, size_t len);
void cli_buf_str(cli_buf_t *b, const char *s);
void cli_buf_printf(cli_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cli_buf_free(cli_buf_t *b);
/* Appends `len` bytes of `s` made inert by fleet_escape_text() (control
 * bytes as \xNN): how every name, id, payload and message the CLI did not
 * write itself reaches a terminal. */
void cli_buf_esc(cli_buf_t *b, const char *s, size_t len);
/* Appends `j` as JSON text (compact). */
void cli_json_write(cli_buf_t *b, const cli_json_t *j);
/* Appends `s` as a JSON string literal, quotes included. */
void cli_json_quote(cli_buf_t *b, const char *s, size_t len);

/* Prints an array of objects as a table with the given columns (NULL
 * ended): a header of their names in capitals, then one row per element.
 * Long values are cut, control characters escaped. */
void cli_table(FILE *out, const cli_json_t *arr, const char *const *cols);
/* Prints an object as "key: value" lines (nested values as JSON). */
void cli_kv(FILE *out, const cli_json_t *obj);
/* The same without the member `skip` (NULL: none), which its caller
 * prints in a form of its own. */
void cli_kv_but(FILE *out, const cli_json_t *obj, const char *skip);

/* ------------------------------------------------------------------------ */
/* The program                                                              */

typedef struct cli_s cli_t;

/* A command: argv[0] is the noun. Returns 0 once it has started (it ends
 * by calling cli_finish()), CLI_DONE when it is done without starting
 * anything (--help), or an exit code (after printing why). */
#define CLI_DONE (-1)
typedef int (*cli_cmd_fn)(cli_t *cli, int argc, char **argv);

/* A query's end: status 0 and the result (which the callee owns and must
 * free), or an error, a one-line detail (may be NULL) and no result. */
typedef void (*cli_done_fn)(cli_t *cli, int status, const char *detail,
                            cli_json_t *result, void *arg);

struct cli_s {
  uv_loop_t *loop;
  fleet_client_t client;
  int client_open;
  const char *url;
  char *url_shown; /* the URL as fleet_redact_url() shows it */
  /* The client was ready once; before that, the first connection failure
   * (its status and the backend's words), which an error line reports
   * instead of the command's own. */
  int ready;
  int conn_status;
  char *conn_detail;
  const char *prefix;
  const char *store_prefix; /* fleet store --store-prefix, or NULL */
  char what[64];            /* "queue retry": errors name the command */
  int json;
  int exit_code;
  /* Queries in flight (their handles close before they end). */
  int inflight;
  /* The counts of a queue (cli_q_on_counts()) are followed by
   * fleet_queue_sample(): the oldest pending job's age joins the result
   * ("oldest_pending_ms", null when none) and the queue's history gets its
   * minute's depth and wait sample. Set by the readers that run on
   * (`fleet dash`, `fleet metrics`). */
  int sample_history;
  /* The noun's command and its words as main() got them (a copy, which
   * cli_opts() leaves alone), so that cli_queue_known() can run the
   * command again once it knows the queue exists; and whether it does. */
  cli_cmd_fn noun_fn;
  int noun_argc;
  char **noun_argv;
  int queue_known;
  /* The partition counts of queues as they were read, most recent
   * first (cmd_queue_create.c): the queue the command names, read before
   * it runs (cli_queue_learn()), and those the dashboard and the exporter
   * read as they run (cli_q_queue_parts()). */
  struct cli_parts_s *parts;
  size_t nparts;
};

/* A queue's partition count as it was read: `n` (1 for a plain queue),
 * at the loop time `read_ms` (uv_now()). */
typedef struct cli_parts_s {
  struct cli_parts_s *next;
  uint32_t n;
  uint64_t read_ms;
  char name[];
} cli_parts_t;

/* Prints "fleet: <what>: <error name> (<detail>)" on stderr, on one line;
 * `detail` may be NULL. When the backend was never reached, the line says
 * so instead, with the cause: "fleet: <what>: cannot reach the backend at
 * <URL>: <error name> (<detail>)". Never prints a URL unredacted; the line
 * is escaped (fleet_escape_print()). */
void cli_error(cli_t *cli, const char *what, int status, const char *detail);

/* How cli_finish() prints a result that is not printed as JSON: a table
 * of the array with the columns `cols` (NULL ended), or else the lines
 * `print` writes on stdout. */
typedef struct {
  const char *const *cols;
  void (*print)(const cli_json_t *result);
} cli_view_t;

/* Closes the client, unless a query is still in flight (the last one to
 * end calls cli_finish(), which closes it). */
void cli_close_client(cli_t *cli);
/* Ends the command: prints `result` (or the error), sets the exit code
 * and closes the client. Used as a cli_done_fn by the commands; `arg` is
 * the view (const cli_view_t *) of the result, or NULL to print an object
 * as key/value lines. With --json, the result is printed as JSON
 * whatever the view. Takes `result`. */
void cli_finish(cli_t *cli, int status, const char *detail, cli_json_t *result,
                void *arg);

/* Whether `s` is "--help" or "-h". */
int cli_is_help(const char *s);
/* A noun's usage when it is asked for: for `fleet <noun>` alone it is
 * printed on stderr and the return is 2 (bad usage); for a --help or -h
 * as the verb or the word after it, on stdout and the return is
 * CLI_DONE. Returns 0 otherwise (the verb is argv[1]). */
int cli_noun_help(int argc, char **argv, const char *usage);
/* Prints "fleet <noun>: <fmt with arg> (see fleet <noun> --help)" on
 * stderr, escaped, on one line; returns 2, the exit code of bad usage. */
int cli_usage_error(const char *noun, const char *fmt, const char *arg);
/* What a noun returns once its query was asked to start: 0 when it
 * started (err 0: it ends by calling its done function), else 1 after
 * cli_error() said why for `verb`. */
int cli_started(cli_t *cli, const char *verb, int err);
/* One option of a verb, for cli_opts(): its name ("--state"), and where
 * it goes: `value` for an option that takes a value (left NULL when the
 * option is absent), else `flag`, set to 1 when it is given. A table is
 * written with CLI_OPT(), CLI_FLAG() and ends with CLI_OPT_END. An
 * option that may be given again and again is taken out first with
 * cli_opt() in a loop. */
typedef struct {
  const char *name;
  const char **value;
  int *flag;
} cli_optdef_t;

/* Parses the options of a verb (argv[0] is the verb or the noun) out of
 * argv[1..*argc-1], wherever they are: "--name VALUE" and "--name=VALUE"
 * for the options of `defs` that take a value, "--name" for the flags.
 * "--" ends the options: the words after it are arguments, whatever they
 * look like. A word that begins with "--", or with '-' and a letter, is
 * an option: one not in `defs` (NULL: none) is refused, as is a missing
 * value, a value given to a flag, and an option given twice. Returns 0,
 * with the arguments left in argv[1..*argc-1] in their order (argv[*argc]
 * NULL); or 2 after one line on stderr that names the option
 * (cli_usage_error() for `noun`). A verb parsed with cli_opt() calls it
 * last with `defs` NULL, to refuse the options it does not know. */
int cli_opts(const char *noun, int *argc, char **argv,
             const cli_optdef_t *defs);
/* The rows of a cli_optdef_t table: an option with a value (`ptr` a
 * const char **), a flag (`ptr` an int *), the end. */
#define CLI_OPT(name, ptr)                                                     \
  { (name), (ptr), NULL }
#define CLI_FLAG(name, ptr)                                                    \
  { (name), NULL, (ptr) }
#define CLI_OPT_END                                                            \
  { NULL, NULL, NULL }
/* Older helpers, kept for the verbs that use them: finds "--name VALUE"
 * (or "--name=VALUE") in argv, before any "--", removes it, and returns
 * VALUE (NULL if absent); cli_opt_flag() for a flag without value. */
const char *cli_opt(int *argc, char **argv, const char *name);
int cli_opt_flag(int *argc, char **argv, const char *name);

/* A Unix time in ms as UTC ISO-8601 with milliseconds and a Z
 * ("2026-11-27T10:00:00.000Z") into `buf` (24 bytes and the NUL fit);
 * "" for 0 or less (no such time). Returns `buf`. Every time the CLI
 * prints goes through here. */
const char *cli_time_iso(int64_t ms, char *buf, size_t len);
/* The local clock, Unix ms (the ages of jobs are counted from it). */
int64_t cli_now_ms(void);
/* A duration in ms in its two largest units, "45s", "3m12s", "2h5m",
 * "4d3h" ("0s" below a second), into `buf`. Returns `buf`. */
const char *cli_duration(int64_t ms, char *buf, size_t len);

/* Colours (cli_util.c): on when stdout is a terminal, NO_COLOR is unset
 * or empty, TERM is not "dumb", and the output is not JSON. Decided once,
 * by cli_colour_init(). */
void cli_colour_init(int json);
int cli_colour_on(void);
/* The SGR sequence of a job state's colour ("dead" red, "running"
 * yellow, ...), or NULL for a word that is no state or when colours are
 * off. */
const char *cli_colour_of(const char *state);
/* The sequences that start bold text and end any colour ("" when off). */
const char *cli_bold(void);
const char *cli_reset(void);
/* Adds the point in time `ms` (Unix ms) to the object `o` twice: as the
 * number `key_ms` ("created_ms"), and as its UTC ISO-8601 string under
 * the same name without "_ms" ("created"), null for 0 (no such time).
 * cli_kv() prints the string alone. */
void cli_jadd_time(cli_json_t *o, const char *key_ms, int64_t ms);
/* Runs a command again once its queue is known: returns 1 when the verb
 * may go on at once (`create` is set, or this run follows the check), or
 * 0 after it started reading the counts of `queue`: then the verb returns
 * 0 too, and the check ends the command with "no such queue: <queue>"
 * (exit 1, nothing written) when the queue does not exist, or else runs
 * the command again from its words (cli->noun_argv). A queue exists when
 * `fleet queue ls` lists it: it has a job in some state, a finished one
 * counted, or it is paused. */
int cli_queue_known(cli_t *cli, const char *queue, int create);
/* Parses a decimal in [min, max]; returns 0 or -1. */
int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* The nouns (one file each). */
int cli_cmd_queue(cli_t *cli, int argc, char **argv);
int cli_cmd_lock(cli_t *cli, int argc, char **argv);
int cli_cmd_leader(cli_t *cli, int argc, char **argv);
int cli_cmd_pool(cli_t *cli, int argc, char **argv);
int cli_cmd_store(cli_t *cli, int argc, char **argv);
int cli_cmd_watch(cli_t *cli, int argc, char **argv);
int cli_cmd_cron(cli_t *cli, int argc, char **argv);
int cli_cmd_warmpool(cli_t *cli, int argc, char **argv);
int cli_cmd_dash(cli_t *cli, int argc, char **argv);
int cli_cmd_metrics(cli_t *cli, int argc, char **argv);
int cli_cmd_worker(cli_t *cli, int argc, char **argv);

/* ------------------------------------------------------------------------ */
/* A query's bookkeeping (query.c)                                          */

typedef struct cli_query_s cli_query_t;

/* What every query keeps from its start to its end. The context of each
 * query begins with one, so that the context is freed as its query. */
struct cli_query_s {
  cli_t *cli;
  cli_done_fn done;
  void *arg;
  cli_json_t *res; /* the result being built (NULL: none, out of memory) */
  int status;      /* the first error, or 0 */
  char *detail;    /* its one-line detail, or NULL */
  int calls;       /* the calls sent and not answered yet */
  /* The handle the query made for itself (NULL: none): it is closed once
   * no call is pending, and the query ends when it is closed. */
  fleet_handle_t *handle;
  /* Runs once before the context is freed, whether the query answers or
   * not (NULL: nothing to do): puts the last touches on `res`, or frees
   * what was kept for them when `status` says the query failed. */
  void (*finish)(cli_query_t *q);
};

/* A zeroed context of `size` bytes (a struct that begins with a
 * cli_query_t) that will answer done(..., arg), counted in cli->inflight;
 * NULL when out of memory. */
void *cli_query_new(size_t size, cli_t *cli, cli_done_fn done, void *arg);
/* After the init of the handle `h` that the query makes for itself
 * (`err`: what the init returned). Returns 0: the query runs on `h`
 * (h->data is `q`) and its result begins as {key: name}; or `err`: the
 * query is freed (cli_query_free()). */
int cli_query_open(cli_query_t *q, fleet_handle_t *h, int err, const char *key,
                   const char *name);
/* Records `status` when it is the query's first error, with `detail`
 * (copied; NULL or "" for none). Does nothing for status 0. */
void cli_query_fail(cli_query_t *q, int status, const char *detail);
/* After a call of the query was sent (err 0: counted as pending) or could
 * not be (err: recorded, without detail). Returns what the query's start
 * returns: 0 when the query will answer (a call is pending, or its handle
 * closes first), or `err` when nothing was sent and it has no handle: then
 * it is freed and `done` never runs. */
int cli_query_sent(cli_query_t *q, int err);
/* A call's answer: records its error, with `detail` (NULL: the client's
 * fleet_client_last_error(), which is valid only in the call's callback),
 * and after the last pending call ends the query (see cli_query_end()),
 * once its handle is closed when it has one. */
void cli_query_answered(cli_query_t *q, int status, const char *detail);
/* Ends the query: `finish` runs; then `done`, with the result, which is
 * FLEET_ENOMEM when it is incomplete, or with the first error; then the
 * context is freed. */
void cli_query_end(cli_query_t *q);
/* The close callback of a query's handle: ends the query h->data. */
void cli_query_closed(fleet_handle_t *h);
/* Frees a query without answering: one that did not start, because of
 * `err`, or one whose answer another query gives (err 0). `finish` runs
 * (with `status` err), `done` never does. */
void cli_query_free(cli_query_t *q, int err);

/* ------------------------------------------------------------------------ */
/* Queries (shared by the commands and the dashboard)                       */

/* Every query returns 0 (then `done` runs once, later) or an error (then
 * it never runs). */

/* A listing of every object of a kind (cli_q_queue_ls, ...). */
typedef int (*cli_list_fn)(cli_t *cli, cli_done_fn done, void *arg);

/* Queue: ls (every queue with its counts and paused flag), stats (one),
 * jobs (a page), get, add, retry (id NULL: all dead), cancel, purge,
 * pause, resume. */
int cli_q_queue_ls(cli_t *cli, cli_done_fn done, void *arg);
int cli_q_queue_stats(cli_t *cli, const char *queue, cli_done_fn done,
                      void *arg);
int cli_q_queue_jobs(cli_t *cli, const char *queue, fleet_job_state_t state,
                     const char *group, uint64_t cursor, size_t limit,
                     cli_done_fn done, void *arg);
int cli_q_queue_get(cli_t *cli, const char *queue, const char *id,
                    cli_done_fn done, void *arg);
/* list: the ids of the queued jobs of `type` (fleet_queue_list()), up to
 * `limit`; the result holds "type", "total" and "ids". */
int cli_q_queue_list(cli_t *cli, const char *queue, const char *type,
                     size_t limit, cli_done_fn done, void *arg);
/* add: one job of `type` with `payload` and `nh` headers (`h`); the
 * result holds its "id". */
int cli_q_queue_add(cli_t *cli, const char *queue, const char *type,
                    const char *payload, const fleet_header_t *h, size_t nh,
                    cli_done_fn done, void *arg);
/* Headers (cmd_queue_headers.c). Collects the --header KEY=VALUE options
 * of argv (removing them) into `h` (room for FLEET_JOB_HEADERS_MAX), each
 * key and value copied into `buf` (`cap` bytes). Returns NULL, or the
 * value of the option it refuses (no "=", one too many, no room). */
const char *cli_header_opts(int *argc, char **argv, fleet_header_t *h,
                            size_t *n, char *buf, size_t cap);
/* Adds "headers": {key: value, ...} of packed headers (fleet_job_info_t's)
 * to `res`. */
void cli_headers_json(cli_json_t *res, const char *headers, size_t len);
/* The attempt history (cmd_queue_errs.c; docs/queue.md, "Attempt
 * history"): adds "errors", an array of {"attempt", "time_ms", "time",
 * "error"} oldest first ([] for none), of `info` to `res`. */
void cli_errors_json(cli_json_t *res, const fleet_job_info_t *info);
/* The view of `queue get`'s result: its members as key/value lines, then
 * a line per failed attempt, "attempt N at <time>: <error>" (escaped). */
extern const cli_view_t cli_get_view;
int cli_q_queue_retry(cli_t *cli, const char *queue, const char *id,
                      cli_done_fn done, void *arg);
/* cancel: a pending or delayed job is deleted; a running one is asked to
 * stop, with `grace_ms` (0: the default) to finish (fleet_queue_cancel_job);
 * the result holds "result": "deleted" or "cancel requested". */
int cli_q_queue_cancel_job(cli_t *cli, const char *queue, const char *id,
                           uint32_t grace_ms, cli_done_fn done, void *arg);
/* The same with the default grace (the dashboard's button). */
int cli_q_queue_cancel(cli_t *cli, const char *queue, const char *id,
                       cli_done_fn done, void *arg);
int cli_q_queue_purge(cli_t *cli, const char *queue, fleet_job_state_t state,
                      cli_done_fn done, void *arg);
/* action: "pause" or "resume". */
int cli_q_queue_pause(cli_t *cli, const char *queue, const char *action,
                      cli_done_fn done, void *arg);

/* Locks (a leader election is the lock of its name): one, every lock
 * whose name matches `glob`, every lock. */
int cli_q_lock_get(cli_t *cli, const char *name, cli_done_fn done, void *arg);
int cli_q_lock_ls(cli_t *cli, const char *glob, cli_done_fn done, void *arg);
int cli_q_lock_ls_all(cli_t *cli, cli_done_fn done, void *arg);

/* Pools: the workers and jobs of one; every pool with its counts. */
int cli_q_pool_status(cli_t *cli, const char *pool, cli_done_fn done,
                      void *arg);
int cli_q_pool_ls(cli_t *cli, cli_done_fn done, void *arg);

/* Store: one record; the records of an index value (first page of up to
 * `limit`). */
int cli_q_store_get(cli_t *cli, const char *coll, const char *id,
                    cli_done_fn done, void *arg);
int cli_q_store_ls(cli_t *cli, const char *coll, const char *index,
                   const char *value, size_t limit, cli_done_fn done,
                   void *arg);
/* Cron (cmd_cron.c): the definitions of namespace `ns`; of every
 * namespace (an array of the former); the newest `limit` entries of the
 * dispatch log of definition `key`. */
int cli_q_cron_ls(cli_t *cli, const char *ns, cli_done_fn done, void *arg);
int cli_q_cron_ls_all(cli_t *cli, cli_done_fn done, void *arg);
int cli_q_cron_history(cli_t *cli, const char *ns, const char *key,
                       uint32_t limit, cli_done_fn done, void *arg);

/* Warm pools (cmd_warmpool.c): one pool's snapshot; every pool's. */
int cli_q_warmpool_snapshot(cli_t *cli, const char *name, cli_done_fn done,
                            void *arg);
int cli_q_warmpool_ls(cli_t *cli, cli_done_fn done, void *arg);

/* Metrics (cmd_metrics.c): every queue, lock, pool, cron definition and
 * warm pool as Prometheus text (docs/metrics.md, "The exporter"), the
 * result a JSON string. A part that cannot be read is left out and
 * fleet_up says 0; the query fails only when none could start. */
int cli_q_metrics(cli_t *cli, cli_done_fn done, void *arg);
/* Workers (cmd_worker.c): every entry of the process registry,
 * {"workers": [...]}. */
int cli_q_worker_ls_all(cli_t *cli, cli_done_fn done, void *arg);

/* ------------------------------------------------------------------------ */
/* Queries on a queue handle (cmd_queue.c; flow control: cmd_queue_flow.c)  */

/* A page's cursor, at most: a partitioned queue's holds its partition's
 * cursor times 256 (fleet_queue_jobs()); 2^53 - 1, which the page's
 * script reads exactly. */
#define CLI_CURSOR_MAX ((1ULL << 53) - 1)

/* The context of a query on a queue handle of its own (closed before the
 * query ends); a query that keeps more begins its context with one. */
typedef struct {
  cli_query_t base;
  fleet_queue_t q;
} cli_qctx_t;

/* A zeroed context of `size` bytes (a struct that begins with a
 * cli_qctx_t) for a query on the queue `name`, whose result begins with
 * {"queue": name} and, when `key` is not NULL, {key: val} (val NULL:
 * null). NULL (with *err) when it cannot. */
cli_qctx_t *cli_qctx_open(cli_t *cli, size_t size, const char *name,
                          const char *key, const char *val, cli_done_fn done,
                          void *arg, int *err);
/* The same with a handle of `parts` partitions (0 or 1: a plain handle of
 * `name`), whatever the count read. cli_qctx_open() passes
 * cli_queue_parts(cli, name). */
cli_qctx_t *cli_qctx_open_parts(cli_t *cli, size_t size, const char *name,
                                uint32_t parts, const char *key,
                                const char *val, cli_done_fn done, void *arg,
                                int *err);
/* Replies of a query's queue handle: the counts ("pending", ...,
 * "dead_kept") and the paused flag ("paused") added to its result. */
void cli_q_on_counts(fleet_queue_t *q, int status,
                     const fleet_queue_counts_t *n, void *ud);
void cli_q_on_paused(fleet_queue_t *q, int status, int paused, void *ud);

/* Flow control (cmd_queue_flow.c). info: what `queue stats` shows: the
 * counts, the paused flag, "limits" and "flow" (fleet_queue_limits()),
 * "groups_total" and "groups": up to `groups_max` groups read in name
 * order (fleet_queue_groups(), page after page; "groups_read" counts
 * them), and of those the `top` with the most pending jobs, most first
 * (0: all of them, in name order). limits: "limits" and
 * "flow" alone. set_limits: sets them (`l` NULL: clears them), then reads
 * them back as `limits` does. hold: holds the claims of the queue
 * (`group` NULL) or of a group for `ms`. weight: a group's weight. */
int cli_q_queue_info(cli_t *cli, const char *queue, size_t groups_max,
                     size_t top, cli_done_fn done, void *arg);
/* info on a handle of `parts` partitions (cli_qctx_open_parts()). */
int cli_q_queue_info_parts(cli_t *cli, const char *queue, uint32_t parts,
                           size_t groups_max, size_t top, cli_done_fn done,
                           void *arg);
int cli_q_queue_limits(cli_t *cli, const char *queue, cli_done_fn done,
                       void *arg);
int cli_q_queue_set_limits(cli_t *cli, const char *queue,
                           const fleet_queue_limits_t *l, cli_done_fn done,
                           void *arg);
int cli_q_queue_hold(cli_t *cli, const char *queue, const char *group,
                     uint32_t ms, cli_done_fn done, void *arg);
int cli_q_queue_weight(cli_t *cli, const char *queue, const char *group,
                       uint32_t weight, cli_done_fn done, void *arg);
/* The verbs stats, limit, hold and weight of `fleet queue` (argv[0] is
 * the verb); a cli_cmd_fn. */
int cli_cmd_queue_flow(cli_t *cli, int argc, char **argv);
/* `fleet queue events Q [--job ID] [--count N]` (cmd_queue_events.c):
 * argv[0] is the verb. */
int cli_cmd_queue_events(cli_t *cli, int argc, char **argv);
/* `fleet queue create Q --partitions P` (cmd_queue_create.c). */
int cli_cmd_queue_create(cli_t *cli, int argc, char **argv);
/* Reads the partition count of the queue `name` into the cli (the loop
 * runs until it answers: call it before the command starts its queries,
 * never from a callback); a failed read leaves the queue plain, for the
 * command to fail on its own. cli_queue_parts() is the count last read
 * for `name` (0: plain, or never read), for the options of the queue
 * handles the queries open (cli_qctx_open()). */
void cli_queue_learn(cli_t *cli, const char *name);
uint32_t cli_queue_parts(const cli_t *cli, const char *name);
/* The query that reads the partition count of `name` as the loop runs
 * (fleet_queue_partitions() on a plain handle), for the readers that run
 * on (the dashboard, the exporter): its result is {"queue",
 * "partitions"}. cli_queue_parts_keep() keeps a count read for
 * cli_queue_parts() (the CLI_PARTS_KEPT read last: the one read longest
 * ago goes first), and cli_queue_parts_age() is how long ago, in ms, the
 * count of `name` was kept (UINT64_MAX: never). */
#define CLI_PARTS_KEPT 1024
int cli_q_queue_parts(cli_t *cli, const char *name, cli_done_fn done,
                      void *arg);
void cli_queue_parts_keep(cli_t *cli, const char *name, uint32_t n);
uint64_t cli_queue_parts_age(const cli_t *cli, const char *name);
/* Frees the counts kept (at exit). */
void cli_queue_parts_free(cli_t *cli);

/* One job's verbs and removing a queue (cmd_queue_verbs.c). job_verb:
 * `verb` "delete", "run" or "kill" on job `id`; its result {"queue",
 * "id", "action": the verb, "was": the state the job was in}. remove:
 * fleet_queue_remove(); its result {"queue", "removed": true, "keys",
 * "jobs"}. Refusals carry a one-line detail in the user's terms. */
int cli_q_queue_job_verb(cli_t *cli, const char *queue, const char *verb,
                         const char *id, cli_done_fn done, void *arg);
int cli_q_queue_remove(cli_t *cli, const char *queue, int force,
                       cli_done_fn done, void *arg);
/* The verbs delete, run, kill and remove of `fleet queue` (argv[0] is the
 * verb); a cli_cmd_fn. */
int cli_cmd_queue_verbs(cli_t *cli, int argc, char **argv);
/* `fleet cron enable|disable|trigger|remove KEY` (cmd_cron_admin.c):
 * whether `verb` is one of them, and the verb with argv[0] the verb, in
 * namespace `ns`. */
int cli_cron_admin_verb(const char *verb);
int cli_cmd_cron_admin(cli_t *cli, const char *ns, int argc, char **argv);
/* `fleet store delete|events COLLECTION ID` (cmd_store_admin.c), the same
 * way (--store-prefix is parsed already). */
int cli_store_admin_verb(const char *verb);
int cli_cmd_store_admin(cli_t *cli, int argc, char **argv);
/* `fleet queue history Q [--days N | --minutes N]`
 * (cmd_queue_history.c): argv[0] is the verb. cli_q_queue_history() is
 * its query, shared with the dashboard's /api/history: the last `count`
 * points of `queue` at resolution `res`, the current one included, as
 * {"queue", "res": "minute"|"day", "points": [{"t": ISO-8601 UTC, "processed",
 * "failed", "depth" (null: not sampled), "wait_ms" (null)}]}, oldest first.
 * It returns FLEET_EINVAL for a count of 0 or above what is kept. */
int cli_cmd_queue_history(cli_t *cli, int argc, char **argv);
int cli_q_queue_history(cli_t *cli, const char *queue, fleet_hist_res_t res,
                        uint64_t count, cli_done_fn done, void *arg);
/* Writes `ms` (unix ms) as "YYYY-MM-DDTHH:MM:SSZ" into `buf`. */
void cli_time_iso_utc(int64_t ms, char *buf, size_t len);

/* The state names of a queue ("pending", ...) back to the enum: 0 or -1. */
int cli_job_state(const char *s, fleet_job_state_t *out);

#endif /* FLEET_CLI_H */
