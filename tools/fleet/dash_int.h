/* dash_int.h -- the parts of `fleet dash` and what they share: the
 * dashboard and its connections. The calls run one way:
 *
 *   dash.c           the command: options, listening, signals, stop
 *   dash_routes.c    the router: access checks, the route table, the API
 *   dash_jobs.c      the routes of one job's verbs (delete, run, kill)
 *   dash_overview.c  the overview of every object, and the throughput
 *                    sampler whose history it carries
 *   dash_http.c      the HTTP server: connections, parsing and limits,
 *                    responses; it hands each complete request to the
 *                    router through dash_t.on_request
 *   dash_access.c    Host, Origin and token checks on strings
 *   assets.c         the embedded page, script and stylesheet, found
 *                    by their path
 *
 * Each file calls only the ones below it (dash_http.c reaches the router
 * and dash.c only through the hooks of dash_t). */
#ifndef FLEET_CLI_DASH_INT_H
#define FLEET_CLI_DASH_INT_H

#include <http_parser.h>

#include "cli.h"
#include "dash_access.h"

#define DASH_URL_MAX 4096
/* The overview's parts: queues, locks, pools, crons, warm pools. */
#define DASH_OV_PARTS 5
#define DASH_CRON_HISTORY_LIMIT 20
#define DASH_BODY_MAX 65536
#define DASH_JOBS_LIMIT 50
/* A queue's flow (/api/queue): the groups read at most, in name order, and
 * of those the ones shown, most pending first. */
#define DASH_GROUPS_READ 2000
#define DASH_GROUPS_TOP 20
/* The throughput chart: the counters of every queue are sampled every
 * DASH_SAMPLE_MS, and the last DASH_SAMPLES samples are kept. */
#define DASH_SAMPLE_MS 2000
#define DASH_SAMPLES 90

/* The request headers the dashboard reads (dash_http.c has the longest
 * value kept of each; a longer one is answered 431). */
enum {
  DASH_H_HOST,
  DASH_H_ORIGIN,
  DASH_H_AUTH,
  DASH_H_COOKIE,
  DASH_H_DASH,
  DASH_H_COUNT
};

typedef struct dash_s dash_t;
typedef struct dash_conn_s dash_conn_t;

/* One part of a connection's overview: the `arg` of the query that
 * makes it. */
typedef struct {
  dash_conn_t *c;
  int i;
} dash_ov_part_t;

/* One connection: one request, one response. */
struct dash_conn_s {
  uv_tcp_t tcp;
  uv_timer_t timer; /* closes a connection whose request does not come */
  dash_t *d;
  http_parser parser;
  char url[DASH_URL_MAX + 1];
  size_t url_len;
  /* The URL's path and query string (without "?"; "" when none), in
   * `url`: set when the request is complete. */
  const char *path, *query;
  size_t path_len, query_len;
  size_t body_len;
  /* The header field being read (its name, cut at 16 bytes), and the
   * values of those the dashboard reads (see dash_headers). */
  char field[16];
  size_t field_len;
  int in_value; /* the field's value is being read */
  int header;   /* the field read: DASH_H_*, or -1 */
  cli_buf_t hv[DASH_H_COUNT];
  int hn[DASH_H_COUNT]; /* how many times each came */
  int header_too_long;
  int refs; /* the socket, the timer, and a query in flight */
  int responded;
  int complete;
  int on_list;
  /* The overview of "/": its parts, as they come. */
  cli_json_t *ov[DASH_OV_PARTS];
  dash_ov_part_t ov_part[DASH_OV_PARTS];
  int ov_left, ov_status;
  char ov_detail[256]; /* the first failed part's error text */
  int page;            /* the overview is for the page, not /api/overview */
  const void *route;   /* the API route asked for (dash_routes.c) */
  void *prev, *next;   /* the dashboard's open connections */
};

/* The dashboard. */
struct dash_s {
  cli_t *cli;
  uint64_t read_timeout_ms;
  dash_access_t access; /* allowed hosts and origins, the token */
  int read_only;
  uv_tcp_t server;
  uv_timer_t sampler;
  int sampling; /* a sample is in flight */
  /* The samples, oldest first: [{"t": Unix ms, "c": {queue: completed},
   * "d": {queue: dead}, "p": {queue: pending}}]. */
  cli_json_t *history;
  /* The backend as the dashboard last saw it (Unix ms, 0 for never):
   * when every query of an overview or a sample last succeeded, and
   * since when they fail, with the first failure's text. */
  int64_t last_ok_ms, down_since_ms;
  char down_reason[256];
  int test_hooks; /* FLEET_DASH_TEST_HOOKS=1: the page's test hooks */
  uv_signal_t sigint, sigterm;
  dash_conn_t *conns;
  int handles;
  int stopping;
  /* Answers a complete request whose URL has a path (the router,
   * dash_route()). */
  void (*on_request)(dash_conn_t *c);
  /* Frees the dashboard once it is stopping and nothing is left open or
   * in flight (dash.c). */
  void (*on_stopped)(dash_t *d);
  /* `fleet metrics`: only GET /metrics is served (cmd_metrics.c). */
  int metrics_only;
};

/* dash_http.c ------------------------------------------------------------ */

/* The listener's connection callback: accepts, starts the read timer and
 * parses the request. */
void dash_on_connection(uv_stream_t *server, int status);
/* Drops a reference on `c` (the socket, the timer, a query in flight);
 * the last one frees it. */
void dash_conn_unref(dash_conn_t *c);
/* Closes the connection's socket and timer. */
void dash_conn_close(dash_conn_t *c);
/* Calls d->on_stopped when the dashboard is stopping and no handle and no
 * query is left. */
void dash_maybe_done(dash_t *d);
/* Stops the server on a signal (once): closes the listening socket, the
 * sampler when there is one, the signal handles and every connection,
 * saying "fleet <who>: stopping"; d->on_stopped runs when all is closed
 * and no query is left. */
void dash_stop(dash_t *d, const char *who, uv_timer_t *sampler);
/* The value of header `h` (NULL when it did not come). */
const char *dash_header(const dash_conn_t *c, int h, size_t *len);
/* Sends the response, and closes the connection after it. Only the first
 * response of a connection is sent. */
void dash_respond(dash_conn_t *c, int code, const char *type, const void *body,
                  size_t len);
/* A short plain-text answer: `text` and a newline, with `extra` (header
 * lines, each ended by CRLF; may be NULL) among its headers. */
void dash_respond_text(dash_conn_t *c, int code, const char *extra,
                       const char *text);
void dash_respond_json(dash_conn_t *c, int code, const cli_json_t *j);

/* dash_overview.c -------------------------------------------------------- */

/* Starts the overview's queries: for the page (`page`) or for
 * /api/overview. The caller holds a reference on `c` for it, which the
 * last part to come gives up. */
void dash_overview(dash_conn_t *c, int page);
/* The sampler's timer: samples every queue's counters into d->history. */
void dash_sample_tick(uv_timer_t *t);
/* Records the end of a query of the backend: `status` 0 (it answered) or
 * the error, with its text `detail` (may be NULL). Sets d->last_ok_ms, or
 * d->down_since_ms and d->down_reason at the first failure of an outage. */
void dash_backend_seen(dash_t *d, int status, const char *detail);

/* dash_jobs.c ------------------------------------------------------------ */

/* The routes POST /api/job/delete, /api/job/run and /api/job/kill: the
 * `job` of their route (dash_routes.c's api_job() calls them with ?queue
 * and ?id, `done` its answer and `arg` the connection). They answer in
 * the routes' contract (dash_jobs.c), then call `done`. Return 0, or an
 * error when nothing was started (`done` then never runs). */
int dash_job_delete(cli_t *cli, const char *queue, const char *id,
                    cli_done_fn done, void *arg);
int dash_job_run(cli_t *cli, const char *queue, const char *id,
                 cli_done_fn done, void *arg);
int dash_job_kill(cli_t *cli, const char *queue, const char *id,
                  cli_done_fn done, void *arg);

/* dash_history.c --------------------------------------------------------- */

/* GET /api/history?queue=Q&res=minute|day: starts the query of `queue`'s
 * history, which answers through `done` (with `c` as its argument).
 * Returns 0 or an error (FLEET_EINVAL: a `res` other than minute or day),
 * and then `done` never runs. */
int dash_history(dash_conn_t *c, const char *q, size_t qlen, const char *queue,
                 cli_done_fn done);

/* cmd_metrics.c ---------------------------------------------------------- */

/* GET /metrics: answers `c` with the Prometheus text of cli_q_metrics().
 * The caller holds a reference on `c` for it, which the answer gives
 * up. */
void dash_metrics(dash_conn_t *c);

/* dash_routes.c ---------------------------------------------------------- */

/* Answers the complete request of `c`: access, then the API route, the
 * page or an asset. */
void dash_route(dash_conn_t *c);

#endif /* FLEET_CLI_DASH_INT_H */
