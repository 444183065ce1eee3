/* dash.c -- `fleet dash --listen HOST:PORT`: the web dashboard. A small
 * HTTP/1.1 server on the loop (http_parser; one request per connection)
 * serves the embedded page (assets/) and a JSON API the page fetches:
 *
 *   GET  /api/overview                  queues (counts), locks, pools,
 *                                       crons, warm pools, and
 *                                       the throughput samples the server
 *                                       took every 2 s (the last 3 min)
 *   GET  /api/queues                    every queue with its counts
 *   GET  /api/jobs?queue=Q&state=S[&cursor=C&limit=N]   a page of jobs
 *   GET  /api/job?queue=Q&id=ID         one job
 *   GET  /api/locks[?match=GLOB]        every lock (and leader election)
 *   GET  /api/pools                     every pool with its workers, jobs
 *   GET  /api/crons                     every cron namespace with its
 *                                       definitions (next due, last fired)
 *   GET  /api/cron-history?ns=NS&key=K[&limit=N]  a definition's dispatch
 *                                       log, newest first (default 20)
 *   GET  /api/warmpools                 every warm pool's snapshot
 *   POST /api/retry?queue=Q[&id=ID]     retry a dead job (no id: all dead)
 *   POST /api/cancel?queue=Q&id=ID      cancel a pending or delayed job
 *   POST /api/pause?queue=Q, /api/resume?queue=Q
 *   GET  /api/routes                    this table: [{method, path}]
 *
 * Who is answered (dash_access.c says why): a request whose Host is not
 * a loopback name, the listen address or an --allow-host name gets 421
 * (an HTTP/1.1 request without Host, 400; an HTTP/1.0 one is answered:
 * browsers always send Host). With a token (--token or FLEET_DASH_TOKEN)
 * every request must carry it, as "Authorization: Bearer T" or as the
 * cookie that "GET /?token=T" sets (303 to "/"), else 401. A request other
 * than GET is a change: refused (403) in --read-only mode, without the
 * header "X-Fleet-Dash: 1" (a cross-site form cannot set it) or with an
 * Origin other than the dashboard's own. Every response forbids framing
 * and sniffing, and its Content-Security-Policy allows only the page's
 * own script and stylesheet (the overview is inlined as JSON data, not as
 * script).
 *
 * The page ("/") comes with the overview inlined, so that it shows the
 * data as soon as it loads; it then refreshes every 2 s.
 * Stops on SIGINT or SIGTERM: closes the listener and every connection,
 * waits for the queries in flight, closes the client. */
#include <http_parser.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "cli.h"
#include "dash_access.h"

#define DASH_URL_MAX 4096
/* The overview's parts: queues, locks, pools, crons, warm pools. */
#define DASH_OV_PARTS 5
#define DASH_CRON_HISTORY_LIMIT 20
#define DASH_BODY_MAX 65536
#define DASH_JOBS_LIMIT 50
/* The throughput chart: the counters of every queue are sampled every
 * DASH_SAMPLE_MS, and the last DASH_SAMPLES samples are kept. */
#define DASH_SAMPLE_MS 2000
#define DASH_SAMPLES 90

static const char dash_usage[] =
    "usage: fleet dash [--listen HOST:PORT] [--read-timeout-ms MS] "
    "[--read-only]\n"
    "                  [--allow-host NAME[:PORT]]... [--token TOKEN]\n"
    "  serves the web dashboard (default 127.0.0.1:8080; port 0 picks a "
    "free one,\n"
    "  printed on the first line of output). A connection whose request "
    "does\n"
    "  not arrive within MS (10000) is closed. Stops on Ctrl-C.\n"
    "  --read-only      no button changes anything; every change is "
    "refused\n"
    "  --allow-host N   also answer requests for the name N (besides "
    "localhost,\n"
    "                   127.0.0.1, [::1] and the listen address); "
    "repeatable\n"
    "  --token TOKEN    require TOKEN on every request (better: "
    "FLEET_DASH_TOKEN,\n"
    "                   which ps does not show); open /?token=TOKEN once "
    "in the\n"
    "                   browser, or send Authorization: Bearer TOKEN\n";

/* The request headers the dashboard reads, and the longest value kept of
 * each (a longer one is answered 431). */
enum {
  DASH_H_HOST,
  DASH_H_ORIGIN,
  DASH_H_AUTH,
  DASH_H_COOKIE,
  DASH_H_DASH,
  DASH_H_COUNT
};

static const struct {
  const char *name;
  size_t max;
} dash_headers[DASH_H_COUNT] = {{"Host", 300},
                                {"Origin", 512},
                                {"Authorization", 512},
                                {"Cookie", 8192},
                                {"X-Fleet-Dash", 16}};

typedef struct dash_s dash_t;

typedef struct {
  uv_tcp_t tcp;
  uv_timer_t timer; /* closes a connection whose request does not come */
  dash_t *d;
  http_parser parser;
  char url[DASH_URL_MAX + 1];
  size_t url_len;
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
  int ov_left, ov_status;
  int page;          /* the overview is for the page, not /api/overview */
  void *prev, *next; /* the dashboard's open connections */
} dash_conn_t;

struct dash_s {
  cli_t *cli;
  uint64_t read_timeout_ms;
  dash_access_t access; /* allowed hosts and origins, the token */
  int read_only;
  uv_tcp_t server;
  uv_timer_t sampler;
  int sampling;        /* a sample is in flight */
  cli_json_t *history; /* [{"t": ms, "c": {queue: completed}, "d": {..}}] */
  uv_signal_t sigint, sigterm;
  dash_conn_t *conns;
  int handles;
  int stopping;
};

typedef struct {
  uv_write_t req;
  char *buf;
} dash_write_t;

/* ------------------------------------------------------------------------ */
/* Connections                                                              */

static void conn_unref(dash_conn_t *c) {
  int i;

  if (--c->refs > 0)
    return;
  for (i = 0; i < DASH_OV_PARTS; i++)
    cli_jfree(c->ov[i]);
  for (i = 0; i < DASH_H_COUNT; i++)
    cli_buf_free(&c->hv[i]);
  free(c);
}

static void conn_unlink(dash_conn_t *c) {
  dash_conn_t *prev = c->prev, *next = c->next;

  if (!c->on_list)
    return;
  c->on_list = 0;
  if (prev != NULL)
    prev->next = next;
  else
    c->d->conns = next;
  if (next != NULL)
    next->prev = prev;
}

static void dash_maybe_done(dash_t *d);

static void conn_closed(uv_handle_t *h) {
  dash_conn_t *c = h->data;
  dash_t *d = c->d;

  conn_unref(c);
  d->handles--;
  dash_maybe_done(d);
}

static void conn_close(dash_conn_t *c) {
  conn_unlink(c);
  if (!uv_is_closing((uv_handle_t *)&c->timer))
    uv_close((uv_handle_t *)&c->timer, conn_closed);
  if (!uv_is_closing((uv_handle_t *)&c->tcp))
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

/* The request did not arrive in time: the connection goes. */
static void conn_timeout(uv_timer_t *t) {
  conn_close(t->data);
}

static void on_written(uv_write_t *req, int status) {
  dash_write_t *w = (dash_write_t *)req;
  dash_conn_t *c = req->data;

  (void)status;
  free(w->buf);
  free(w);
  conn_close(c);
}

/* Sent with every response: no framing (clickjacking), no sniffing, no
 * referrer (the first URL may hold the token), and a policy that lets
 * the page load its own script, stylesheet and API and nothing else. */
static const char dash_security_headers[] =
    "X-Content-Type-Options: nosniff\r\n"
    "X-Frame-Options: DENY\r\n"
    "Content-Security-Policy: default-src 'self'; script-src 'self'; "
    "style-src 'self'; img-src 'self'; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'\r\n"
    "Referrer-Policy: no-referrer\r\n"
    "Cross-Origin-Resource-Policy: same-origin\r\n";

/* Sends the response, with `extra` (header lines, each ended by CRLF; may
 * be NULL) among its headers, and closes the connection after it. */
static void respond_ex(dash_conn_t *c, int code, const char *type,
                       const char *extra, const void *body, size_t len) {
  const char *reason = code == 200   ? "OK"
                       : code == 303 ? "See Other"
                       : code == 400 ? "Bad Request"
                       : code == 401 ? "Unauthorized"
                       : code == 403 ? "Forbidden"
                       : code == 404 ? "Not Found"
                       : code == 405 ? "Method Not Allowed"
                       : code == 409 ? "Conflict"
                       : code == 413 ? "Payload Too Large"
                       : code == 421 ? "Misdirected Request"
                       : code == 431 ? "Request Header Fields Too Large"
                       : code == 503 ? "Service Unavailable"
                                     : "Bad Gateway";
  cli_buf_t b = {0};
  dash_write_t *w;
  uv_buf_t buf;

  if (c->responded)
    return;
  c->responded = 1;
  if (uv_is_closing((uv_handle_t *)&c->tcp))
    return;
  cli_buf_printf(&b,
                 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
                 "Content-Length: %zu\r\nCache-Control: no-store\r\n"
                 "Connection: close\r\n",
                 code, reason, type, len);
  cli_buf_str(&b, dash_security_headers);
  if (extra != NULL)
    cli_buf_str(&b, extra);
  cli_buf_add(&b, "\r\n", 2);
  cli_buf_add(&b, body, len);
  w = malloc(sizeof(*w));
  if (b.oom || w == NULL) {
    free(w);
    cli_buf_free(&b);
    conn_close(c);
    return;
  }
  w->buf = b.p;
  w->req.data = c;
  buf = uv_buf_init(b.p, (unsigned)b.len);
  if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, on_written) != 0) {
    free(w->buf);
    free(w);
    conn_close(c);
  }
}

static void respond(dash_conn_t *c, int code, const char *type,
                    const void *body, size_t len) {
  respond_ex(c, code, type, NULL, body, len);
}

/* A short plain-text answer: `text` and a newline. */
static void respond_text(dash_conn_t *c, int code, const char *extra,
                         const char *text) {
  char body[256];
  int n = snprintf(body, sizeof(body), "%s\n", text);

  respond_ex(c, code, "text/plain; charset=utf-8", extra, body,
             n > 0 && (size_t)n < sizeof(body) ? (size_t)n : 0);
}

static void respond_json(dash_conn_t *c, int code, const cli_json_t *j) {
  cli_buf_t b = {0};

  cli_json_write(&b, j);
  if (b.oom)
    respond(c, 503, "text/plain", "out of memory", 13);
  else
    respond(c, code, "application/json", b.p, b.len);
  cli_buf_free(&b);
}

static void respond_error(dash_conn_t *c, int status, const char *detail) {
  int code = status == FLEET_ENOTFOUND                           ? 404
             : status == FLEET_EBUSY || status == FLEET_EALREADY ? 409
             : status == FLEET_EINVAL || status == FLEET_E2BIG   ? 400
             : status == FLEET_ETIMEDOUT || status == FLEET_EUNAVAILABLE ||
                     status == FLEET_ECONNLOST
                 ? 503
                 : 502;
  cli_json_t *o = cli_jobj();

  cli_jadd(o, "error", cli_jstr(fleet_err_name(status)));
  cli_jadd(o, "detail",
           cli_jstr(detail != NULL ? detail : fleet_strerror(status)));
  if (o == NULL)
    respond(c, code, "text/plain", "error", 5);
  else
    respond_json(c, code, o);
  cli_jfree(o);
}

/* A query's end, for an API request. */
static void api_done(cli_t *cli, int status, const char *detail,
                     cli_json_t *res, void *arg) {
  dash_conn_t *c = arg;

  dash_t *d = c->d;

  (void)cli;
  if (status != 0)
    respond_error(c, status, detail);
  else
    respond_json(c, 200, res);
  cli_jfree(res);
  conn_unref(c);
  dash_maybe_done(d);
}

/* ------------------------------------------------------------------------ */
/* The page and the overview                                                */

static const char page_marker[] = "/*FLEET_INITIAL*/null";

static void overview_send(dash_conn_t *c) {
  const cli_asset_t *a = cli_asset_find("/index.html", 11);
  const char *mark;
  cli_json_t *o = cli_jobj();
  cli_buf_t b = {0};
  static const char *const names[DASH_OV_PARTS] = {"queues", "locks", "pools",
                                                   "crons", "warmpools"};
  int i;

  cli_jadd(o, "url", cli_jstr(c->d->cli->url_shown));
  cli_jadd(o, "prefix", cli_jstr(c->d->cli->prefix));
  for (i = 0; i < DASH_OV_PARTS; i++) {
    cli_jadd(o, names[i], c->ov[i] != NULL ? c->ov[i] : cli_jarr());
    c->ov[i] = NULL;
  }
  cli_jadd(o, "read_only", cli_jbool(c->d->read_only));
  cli_jadd(o, "sample_ms", cli_jint(DASH_SAMPLE_MS));
  cli_jadd(o, "history", cli_jcopy(c->d->history));
  if (c->ov_status != 0)
    cli_jadd(o, "error", cli_jstr(fleet_err_name(c->ov_status)));
  if (!c->page) {
    respond_json(c, 200, o);
  } else if (a != NULL && (mark = memmem(a->data, a->len, page_marker,
                                         sizeof(page_marker) - 1)) != NULL) {
    cli_buf_add(&b, a->data, (size_t)(mark - (const char *)a->data));
    cli_json_write(&b, o);
    cli_buf_add(&b, mark + sizeof(page_marker) - 1,
                a->len - (size_t)(mark - (const char *)a->data) -
                    (sizeof(page_marker) - 1));
    if (b.oom)
      respond(c, 503, "text/plain", "out of memory", 13);
    else
      respond(c, 200, a->type, b.p, b.len);
  } else {
    respond(c, 404, "text/plain", "no page", 7);
  }
  cli_buf_free(&b);
  cli_jfree(o);
}

static void overview_part(dash_conn_t *c, int i, int status, cli_json_t *res) {
  c->ov[i] = res;
  if (status != 0 && c->ov_status == 0)
    c->ov_status = status;
  if (--c->ov_left == 0) {
    dash_t *d = c->d;

    overview_send(c);
    conn_unref(c);
    dash_maybe_done(d);
  }
}

static void ov_queues(cli_t *cli, int status, const char *detail,
                      cli_json_t *res, void *arg) {
  (void)cli, (void)detail;
  overview_part(arg, 0, status, res);
}

static void ov_locks(cli_t *cli, int status, const char *detail,
                     cli_json_t *res, void *arg) {
  (void)cli, (void)detail;
  overview_part(arg, 1, status, res);
}

static void ov_pools(cli_t *cli, int status, const char *detail,
                     cli_json_t *res, void *arg) {
  (void)cli, (void)detail;
  overview_part(arg, 2, status, res);
}

static void ov_crons(cli_t *cli, int status, const char *detail,
                     cli_json_t *res, void *arg) {
  (void)cli, (void)detail;
  overview_part(arg, 3, status, res);
}

static void ov_warmpools(cli_t *cli, int status, const char *detail,
                         cli_json_t *res, void *arg) {
  (void)cli, (void)detail;
  overview_part(arg, 4, status, res);
}

/* Starts the overview's queries: for the page (`page`) or for
 * /api/overview. The caller holds a reference on `c` for it, which the
 * last part to come gives up. */
static void overview(dash_conn_t *c, int page) {
  cli_t *cli = c->d->cli;

  c->page = page;
  c->ov_left = DASH_OV_PARTS + 1; /* the parts and the start */
  if (cli_q_queue_ls(cli, ov_queues, c) != 0)
    overview_part(c, 0, FLEET_ENOMEM, NULL);
  if (cli_q_lock_ls(cli, "*", ov_locks, c) != 0)
    overview_part(c, 1, FLEET_ENOMEM, NULL);
  if (cli_q_pool_ls(cli, ov_pools, c) != 0)
    overview_part(c, 2, FLEET_ENOMEM, NULL);
  if (cli_q_cron_ls_all(cli, ov_crons, c) != 0)
    overview_part(c, 3, FLEET_ENOMEM, NULL);
  if (cli_q_warmpool_ls(cli, ov_warmpools, c) != 0)
    overview_part(c, 4, FLEET_ENOMEM, NULL);
  if (--c->ov_left == 0) {
    overview_send(c);
    conn_unref(c);
  }
}

/* ------------------------------------------------------------------------ */
/* Routing                                                                  */

static int hexval(char ch) {
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

/* The URL-decoded value of `name` in the query string `q` (of length
 * `len`) into `out` (cap bytes); NULL when absent, malformed or too long. */
static const char *query_param(const char *q, size_t len, const char *name,
                               char *out, size_t cap) {
  size_t nl = strlen(name), i = 0, o;

  while (i < len) {
    size_t end = i;

    while (end < len && q[end] != '&')
      end++;
    if (end - i > nl && memcmp(q + i, name, nl) == 0 && q[i + nl] == '=') {
      for (i += nl + 1, o = 0; i < end; i++) {
        int hi, lo;
        char ch = q[i];

        if (o + 1 >= cap)
          return NULL;
        if (ch == '+') {
          ch = ' ';
        } else if (ch == '%') {
          if (i + 2 >= end + 0 + 1 || (hi = hexval(q[i + 1])) < 0 ||
              (lo = hexval(q[i + 2])) < 0)
            return NULL;
          ch = (char)(hi * 16 + lo);
          i += 2;
        }
        if (ch == '\0')
          return NULL;
        out[o++] = ch;
      }
      out[o] = '\0';
      return out;
    }
    i = end + 1;
  }
  return NULL;
}

/* One API route: its path, whether it is a change (POST) or a read
 * (GET), whether it needs ?queue=Q (then `queue` holds it), and the call
 * that starts its query: 0 when started (api_done() answers), else an
 * error answered at once. */
typedef int (*dash_api_fn)(dash_conn_t *c, const char *q, size_t qlen,
                           const char *queue);

typedef struct {
  const char *path;
  int post;
  int queue;
  dash_api_fn fn;
} dash_route_t;

static int api_overview(dash_conn_t *c, const char *q, size_t qlen,
                        const char *queue) {
  (void)q, (void)qlen, (void)queue;
  overview(c, 0);
  return 0;
}

static int api_queues(dash_conn_t *c, const char *q, size_t qlen,
                      const char *queue) {
  (void)q, (void)qlen, (void)queue;
  return cli_q_queue_ls(c->d->cli, api_done, c);
}

static int api_locks(dash_conn_t *c, const char *q, size_t qlen,
                     const char *queue) {
  char match[1024];

  (void)queue;
  return cli_q_lock_ls(
      c->d->cli,
      query_param(q, qlen, "match", match, sizeof(match)) != NULL ? match : "*",
      api_done, c);
}

static int api_pools(dash_conn_t *c, const char *q, size_t qlen,
                     const char *queue) {
  (void)q, (void)qlen, (void)queue;
  return cli_q_pool_ls(c->d->cli, api_done, c);
}

static int api_crons(dash_conn_t *c, const char *q, size_t qlen,
                     const char *queue) {
  (void)q, (void)qlen, (void)queue;
  return cli_q_cron_ls_all(c->d->cli, api_done, c);
}

static int api_warmpools(dash_conn_t *c, const char *q, size_t qlen,
                         const char *queue) {
  (void)q, (void)qlen, (void)queue;
  return cli_q_warmpool_ls(c->d->cli, api_done, c);
}

static int api_cron_history(dash_conn_t *c, const char *q, size_t qlen,
                            const char *queue) {
  char ns[256], key[1024], num[32];
  uint64_t limit = DASH_CRON_HISTORY_LIMIT;

  (void)queue;
  if (query_param(q, qlen, "ns", ns, sizeof(ns)) == NULL ||
      query_param(q, qlen, "key", key, sizeof(key)) == NULL ||
      (query_param(q, qlen, "limit", num, sizeof(num)) != NULL &&
       cli_parse_u64(num, 1, 1000, &limit) != 0))
    return FLEET_EINVAL;
  return cli_q_cron_history(c->d->cli, ns, key, (uint32_t)limit, api_done, c);
}

static int api_jobs(dash_conn_t *c, const char *q, size_t qlen,
                    const char *queue) {
  char state_s[32], num[32];
  fleet_job_state_t state;
  uint64_t cursor = 0, limit = DASH_JOBS_LIMIT;

  if (query_param(q, qlen, "state", state_s, sizeof(state_s)) == NULL ||
      cli_job_state(state_s, &state) != 0 ||
      (query_param(q, qlen, "cursor", num, sizeof(num)) != NULL &&
       cli_parse_u64(num, 0, UINT32_MAX, &cursor) != 0) ||
      (query_param(q, qlen, "limit", num, sizeof(num)) != NULL &&
       cli_parse_u64(num, 1, 1000, &limit) != 0))
    return FLEET_EINVAL;
  return cli_q_queue_jobs(c->d->cli, queue, state, cursor, (size_t)limit,
                          api_done, c);
}

static int api_job(dash_conn_t *c, const char *q, size_t qlen,
                   const char *queue) {
  char id[1024];

  if (query_param(q, qlen, "id", id, sizeof(id)) == NULL)
    return FLEET_EINVAL;
  return cli_q_queue_get(c->d->cli, queue, id, api_done, c);
}

static int api_cancel(dash_conn_t *c, const char *q, size_t qlen,
                      const char *queue) {
  char id[1024];

  if (query_param(q, qlen, "id", id, sizeof(id)) == NULL)
    return FLEET_EINVAL;
  return cli_q_queue_cancel(c->d->cli, queue, id, api_done, c);
}

static int api_retry(dash_conn_t *c, const char *q, size_t qlen,
                     const char *queue) {
  char id[1024];

  return cli_q_queue_retry(
      c->d->cli, queue,
      query_param(q, qlen, "id", id, sizeof(id)) != NULL ? id : NULL, api_done,
      c);
}

static int api_pause(dash_conn_t *c, const char *q, size_t qlen,
                     const char *queue) {
  (void)q, (void)qlen;
  return cli_q_queue_pause(c->d->cli, queue, "pause", api_done, c);
}

static int api_resume(dash_conn_t *c, const char *q, size_t qlen,
                      const char *queue) {
  (void)q, (void)qlen;
  return cli_q_queue_pause(c->d->cli, queue, "resume", api_done, c);
}

static int api_routes(dash_conn_t *c, const char *q, size_t qlen,
                      const char *queue);

/* Every API route. A change is a POST: route() refuses it in read-only
 * mode and checks its header and Origin before it gets here. */
static const dash_route_t dash_routes[] = {
    {"/api/overview", 0, 0, api_overview},
    {"/api/queues", 0, 0, api_queues},
    {"/api/jobs", 0, 1, api_jobs},
    {"/api/job", 0, 1, api_job},
    {"/api/locks", 0, 0, api_locks},
    {"/api/pools", 0, 0, api_pools},
    {"/api/crons", 0, 0, api_crons},
    {"/api/cron-history", 0, 0, api_cron_history},
    {"/api/warmpools", 0, 0, api_warmpools},
    {"/api/routes", 0, 0, api_routes},
    {"/api/retry", 1, 1, api_retry},
    {"/api/cancel", 1, 1, api_cancel},
    {"/api/pause", 1, 1, api_pause},
    {"/api/resume", 1, 1, api_resume},
    {NULL, 0, 0, NULL}};

static int api_routes(dash_conn_t *c, const char *q, size_t qlen,
                      const char *queue) {
  const dash_route_t *r;
  cli_json_t *a = cli_jarr(), *o;

  (void)q, (void)qlen, (void)queue;
  for (r = dash_routes; r->path != NULL; r++) {
    o = cli_jadd(a, NULL, cli_jobj());
    cli_jadd(o, "method", cli_jstr(r->post ? "POST" : "GET"));
    cli_jadd(o, "path", cli_jstr(r->path));
  }
  if (a == NULL)
    return FLEET_ENOMEM;
  api_done(c->d->cli, 0, NULL, a, c);
  return 0;
}

/* The value of header `h` (NULL when it did not come). */
static const char *header(const dash_conn_t *c, int h, size_t *len) {
  *len = c->hv[h].len;
  return c->hn[h] > 0 ? (c->hv[h].p != NULL ? c->hv[h].p : "") : NULL;
}

/* Whether the request is allowed to reach the routes; if not, answers it.
 * `page` tells a GET of the page, which may carry ?token=. */
static int access_check(dash_conn_t *c, int page, const char *q, size_t qlen) {
  static const char need_token[] =
      "WWW-Authenticate: Bearer realm=\"fleet dash\"\r\n";
  dash_access_t *a = &c->d->access;
  const char *v;
  char token[DASH_TOKEN_MAX + 2], extra[DASH_TOKEN_MAX + 160];
  size_t len;

  if (c->header_too_long) {
    respond_text(c, 431, NULL, "a header is too long");
    return 0;
  }
  /* Host: the name the browser thinks it talks to. */
  v = header(c, DASH_H_HOST, &len);
  if (c->hn[DASH_H_HOST] > 1 ||
      (v == NULL && (c->parser.http_major > 1 || c->parser.http_minor > 0))) {
    respond_text(c, 400, NULL, "one Host header is required");
    return 0;
  }
  if (v != NULL && !dash_host_allowed(a, v, len)) {
    respond_text(c, 421, NULL,
                 "this dashboard does not answer for this host name "
                 "(see fleet dash --allow-host)");
    return 0;
  }
  /* The token: a bearer header, the cookie, or the page's ?token=. */
  if (a->token_len > 0) {
    if (page && query_param(q, qlen, "token", token, sizeof(token)) != NULL) {
      if (!dash_token_equal(a, token, strlen(token))) {
        respond_text(c, 401, need_token, "wrong token");
        return 0;
      }
      snprintf(extra, sizeof(extra),
               "Location: /\r\nSet-Cookie: %s=%s; HttpOnly; SameSite=Strict; "
               "Path=/\r\n",
               a->cookie, a->token);
      respond_text(c, 303, extra, "logged in: see /");
      return 0;
    }
    v = header(c, DASH_H_AUTH, &len);
    if (v == NULL || c->hn[DASH_H_AUTH] > 1 || !dash_bearer_ok(a, v, len)) {
      v = header(c, DASH_H_COOKIE, &len);
      if (v == NULL || !dash_cookie_ok(a, v, len)) {
        respond_text(c, 401, need_token,
                     "a token is required: open /?token=TOKEN once, or send "
                     "Authorization: Bearer TOKEN");
        return 0;
      }
    }
  }
  /* A change: not in read-only mode, only with the dashboard's header,
   * and only from the dashboard's own origin. */
  if (c->parser.method != HTTP_GET) {
    if (c->d->read_only) {
      respond_text(c, 403, NULL, "read-only dashboard: nothing is changed");
      return 0;
    }
    v = header(c, DASH_H_DASH, &len);
    if (v == NULL || len != 1 || v[0] != '1') {
      respond_text(c, 403, NULL, "missing X-Fleet-Dash header");
      return 0;
    }
    v = header(c, DASH_H_ORIGIN, &len);
    if (v != NULL &&
        (c->hn[DASH_H_ORIGIN] > 1 || !dash_origin_allowed(a, v, len))) {
      respond_text(c, 403, NULL, "cross-origin request refused");
      return 0;
    }
  }
  return 1;
}

static void route(dash_conn_t *c) {
  struct http_parser_url u;
  const char *path, *q = "";
  size_t plen, qlen = 0;
  char queue[1024];
  int get = c->parser.method == HTTP_GET, page, err;
  const dash_route_t *r;
  const cli_asset_t *a;

  http_parser_url_init(&u);
  if (http_parser_parse_url(c->url, c->url_len, 0, &u) != 0 ||
      !(u.field_set & (1 << UF_PATH))) {
    respond(c, 400, "text/plain", "bad url", 7);
    return;
  }
  path = c->url + u.field_data[UF_PATH].off;
  plen = u.field_data[UF_PATH].len;
  if (u.field_set & (1 << UF_QUERY)) {
    q = c->url + u.field_data[UF_QUERY].off;
    qlen = u.field_data[UF_QUERY].len;
  }
#define PATH_IS(s) (plen == sizeof(s) - 1 && memcmp(path, s, plen) == 0)
  page = PATH_IS("/") || PATH_IS("/index.html");
#undef PATH_IS
  if (!access_check(c, get && page, q, qlen))
    return;
  if (plen > 5 && memcmp(path, "/api/", 5) == 0) {
    for (r = dash_routes; r->path != NULL; r++)
      if (strlen(r->path) == plen && memcmp(r->path, path, plen) == 0)
        break;
    if (r->path == NULL) {
      respond(c, 404, "text/plain", "not found", 9);
      return;
    }
    if (r->post ? c->parser.method != HTTP_POST : !get) {
      respond(c, 405, "text/plain", "method not allowed", 18);
      return;
    }
    if (r->queue &&
        query_param(q, qlen, "queue", queue, sizeof(queue)) == NULL) {
      respond_error(c, FLEET_EINVAL, "the queue parameter is required");
      return;
    }
    c->refs++; /* for the query */
    if ((err = r->fn(c, q, qlen, queue)) != 0) {
      c->refs--;
      respond_error(c, err, NULL);
    }
    return;
  }
  if (!get) {
    respond(c, 405, "text/plain", "method not allowed", 18);
    return;
  }
  if (page) {
    c->refs++; /* for the overview */
    overview(c, 1);
    return;
  }
  a = cli_asset_find(path, plen);
  if (a == NULL)
    respond(c, 404, "text/plain", "not found", 9);
  else
    respond(c, 200, a->type, a->data, a->len);
}

const cli_asset_t *cli_asset_find(const char *path, size_t len) {
  const cli_asset_t *a;

  for (a = cli_assets; a->path != NULL; a++)
    if (strlen(a->path) == len && memcmp(a->path, path, len) == 0)
      return a;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* HTTP parsing                                                             */

static int on_url(http_parser *p, const char *at, size_t len) {
  dash_conn_t *c = p->data;

  if (c->url_len + len > DASH_URL_MAX)
    return 1;
  memcpy(c->url + c->url_len, at, len);
  c->url_len += len;
  c->url[c->url_len] = '\0';
  return 0;
}

/* A header's name may come in pieces (a slow client): they are gathered
 * until its value begins; a name longer than any the dashboard reads is
 * kept cut, and matches none. */
static int on_header_field(http_parser *p, const char *at, size_t len) {
  dash_conn_t *c = p->data;
  size_t n;

  if (c->in_value) {
    c->in_value = 0;
    c->field_len = 0;
  }
  n = sizeof(c->field) - c->field_len;
  if (len < n)
    n = len;
  memcpy(c->field + c->field_len, at, n);
  c->field_len += n;
  return 0;
}

/* A value of a header the dashboard reads is kept (in pieces, too); the
 * values of a header sent twice are joined as HTTP joins them. */
static int on_header_value(http_parser *p, const char *at, size_t len) {
  dash_conn_t *c = p->data;
  int h;

  if (!c->in_value) {
    c->in_value = 1;
    c->header = -1;
    for (h = 0; h < DASH_H_COUNT; h++)
      if (c->field_len == strlen(dash_headers[h].name) &&
          strncasecmp(c->field, dash_headers[h].name, c->field_len) == 0)
        c->header = h;
    if (c->header < 0)
      return 0;
    if (c->hn[c->header]++ > 0)
      cli_buf_str(&c->hv[c->header], c->header == DASH_H_COOKIE ? "; " : ", ");
  }
  if (c->header < 0)
    return 0;
  if (c->hv[c->header].len + len > dash_headers[c->header].max) {
    c->header_too_long = 1;
    return 0;
  }
  cli_buf_add(&c->hv[c->header], at, len);
  if (c->hv[c->header].oom)
    c->header_too_long = 1;
  return 0;
}

static int on_body(http_parser *p, const char *at, size_t len) {
  dash_conn_t *c = p->data;

  (void)at;
  c->body_len += len;
  return c->body_len > DASH_BODY_MAX;
}

static int on_message_complete(http_parser *p) {
  dash_conn_t *c = p->data;

  c->complete = 1;
  return 1; /* one request per connection: stop parsing */
}

static http_parser_settings dash_settings = {.on_url = on_url,
                                             .on_header_field = on_header_field,
                                             .on_header_value = on_header_value,
                                             .on_body = on_body,
                                             .on_message_complete =
                                                 on_message_complete};

static void conn_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf) {
  (void)h;
  buf->base = malloc(size);
  buf->len = buf->base != NULL ? size : 0;
}

static void conn_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  dash_conn_t *c = s->data;
  size_t parsed;

  if (n < 0) {
    free(buf->base);
    conn_close(c);
    return;
  }
  if (n > 0 && !c->complete && !c->responded) {
    parsed =
        http_parser_execute(&c->parser, &dash_settings, buf->base, (size_t)n);
    if (c->complete) {
      uv_read_stop(s);
      uv_timer_stop(&c->timer);
      route(c);
    } else if (parsed != (size_t)n || HTTP_PARSER_ERRNO(&c->parser) != HPE_OK) {
      uv_read_stop(s);
      if (c->body_len > DASH_BODY_MAX)
        respond(c, 413, "text/plain", "body too large", 14);
      else
        respond(c, 400, "text/plain", "bad request", 11);
    }
  }
  free(buf->base);
}

static void on_connection(uv_stream_t *server, int status) {
  dash_t *d = server->data;
  dash_conn_t *c;

  if (status != 0 || d->stopping)
    return;
  c = calloc(1, sizeof(*c));
  if (c == NULL)
    return;
  c->d = d;
  c->refs = 2;
  uv_tcp_init(d->cli->loop, &c->tcp);
  uv_timer_init(d->cli->loop, &c->timer);
  c->tcp.data = c->timer.data = c;
  d->handles += 2;
  if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
    conn_close(c);
    return;
  }
  uv_timer_start(&c->timer, conn_timeout, d->read_timeout_ms, 0);
  c->next = d->conns;
  if (d->conns != NULL)
    d->conns->prev = c;
  d->conns = c;
  c->on_list = 1;
  http_parser_init(&c->parser, HTTP_REQUEST);
  c->parser.data = c;
  uv_read_start((uv_stream_t *)&c->tcp, conn_alloc, conn_read);
}

/* ------------------------------------------------------------------------ */
/* Throughput samples                                                       */

static void sample_tick(uv_timer_t *t);

static void sample_done(cli_t *cli, int status, const char *detail,
                        cli_json_t *queues, void *arg) {
  dash_t *d = arg;
  cli_json_t *s, *c, *dd, *old;
  const cli_json_t *q;

  (void)detail;
  d->sampling = 0;
  if (status == 0 && !d->stopping) {
    s = cli_jobj();
    cli_jadd(s, "t", cli_jint((int64_t)(uv_hrtime() / 1000000)));
    c = cli_jadd(s, "c", cli_jobj());
    dd = cli_jadd(s, "d", cli_jobj());
    for (q = queues->first; q != NULL; q = q->next) {
      cli_jadd(c, cli_jget(q, "queue")->str,
               cli_jint(cli_jget(q, "completed")->num));
      cli_jadd(dd, cli_jget(q, "queue")->str,
               cli_jint(cli_jget(q, "dead")->num));
    }
    if (s != NULL && s->num != -1 && c != NULL && c->num != -1 && dd != NULL &&
        dd->num != -1) {
      cli_jadd(d->history, NULL, s);
      if (d->history->n > DASH_SAMPLES) {
        old = d->history->first;
        d->history->first = old->next;
        d->history->n--;
        old->next = NULL;
        cli_jfree(old);
      }
    } else {
      cli_jfree(s);
    }
  }
  cli_jfree(queues);
  if (d->stopping)
    dash_maybe_done(d);
  else
    uv_timer_start(&d->sampler, sample_tick, DASH_SAMPLE_MS, 0);
  (void)cli;
}

static void sample_tick(uv_timer_t *t) {
  dash_t *d = t->data;

  if (d->stopping || d->sampling)
    return;
  if (cli_q_queue_ls(d->cli, sample_done, d) == 0)
    d->sampling = 1;
  else
    uv_timer_start(&d->sampler, sample_tick, DASH_SAMPLE_MS, 0);
}

/* ------------------------------------------------------------------------ */
/* Start and stop                                                           */

static void dash_maybe_done(dash_t *d) {
  if (d->stopping && d->handles == 0 && d->cli->inflight == 0) {
    cli_finish(d->cli, 0, NULL, NULL, NULL);
    cli_jfree(d->history);
    free(d);
  }
}

static void dash_handle_closed(uv_handle_t *h) {
  dash_t *d = h->data;

  d->handles--;
  dash_maybe_done(d);
}

static void dash_signal(uv_signal_t *s, int signum) {
  dash_t *d = s->data;

  (void)signum;
  if (d->stopping)
    return;
  d->stopping = 1;
  fprintf(stderr, "fleet dash: stopping\n");
  uv_close((uv_handle_t *)&d->server, dash_handle_closed);
  uv_close((uv_handle_t *)&d->sampler, dash_handle_closed);
  uv_close((uv_handle_t *)&d->sigint, dash_handle_closed);
  uv_close((uv_handle_t *)&d->sigterm, dash_handle_closed);
  while (d->conns != NULL)
    conn_close(d->conns);
  /* Queries in flight end on their own; the last handle or query to end
   * finishes (see cli_finish's check of inflight). */
  dash_maybe_done(d);
}

int cli_cmd_dash(cli_t *cli, int argc, char **argv) {
  const char *listen = cli_opt(&argc, argv, "--listen");
  const char *timeout_s = cli_opt(&argc, argv, "--read-timeout-ms");
  const char *token = cli_opt(&argc, argv, "--token");
  const char *token_from = "--token", *allow[DASH_ALLOW_MAX + 1];
  int read_only = cli_opt_flag(&argc, argv, "--read-only"), n_allow = 0, i;
  uint64_t read_timeout = 10000;
  const char *colon;
  struct sockaddr_storage ss;
  struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
  struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
  char host[256];
  uint64_t port;
  int len = sizeof(ss), err;
  dash_t *d;

  while (n_allow <= DASH_ALLOW_MAX &&
         (allow[n_allow] = cli_opt(&argc, argv, "--allow-host")) != NULL)
    n_allow++;
  if (argc > 1 && cli_is_help(argv[1])) {
    fputs(dash_usage, stdout);
    return CLI_DONE;
  }
  if (argc != 1) {
    fputs(dash_usage, stderr);
    return 2;
  }
  if (timeout_s != NULL &&
      cli_parse_u64(timeout_s, 1, 3600000, &read_timeout) != 0) {
    fprintf(stderr, "fleet dash: --read-timeout-ms: 1 to 3600000 (got %s)\n",
            timeout_s);
    return 2;
  }
  if (listen == NULL)
    listen = "127.0.0.1:8080";
  colon = strrchr(listen, ':');
  if (colon == NULL || (size_t)(colon - listen) >= sizeof(host) ||
      cli_parse_u64(colon + 1, 0, 65535, &port) != 0) {
    fprintf(stderr, "fleet dash: --listen wants HOST:PORT (got %s)\n", listen);
    return 2;
  }
  memcpy(host, listen, (size_t)(colon - listen));
  host[colon - listen] = '\0';
  if (host[0] == '[' && strlen(host) > 2 && host[strlen(host) - 1] == ']') {
    memmove(host, host + 1, strlen(host) - 2);
    host[strlen(host) - 2] = '\0';
  }
  memset(&ss, 0, sizeof(ss));
  if (uv_ip4_addr(host, (int)port, in4) != 0 &&
      uv_ip6_addr(host, (int)port, in6) != 0) {
    fprintf(stderr, "fleet dash: --listen: not an IP address: %s\n", host);
    return 2;
  }
  d = calloc(1, sizeof(*d));
  if (d == NULL)
    return 1;
  d->cli = cli;
  d->read_timeout_ms = read_timeout;
  d->read_only = read_only;
  /* The port is known once bound (port 0); the names are checked now. */
  dash_access_init(&d->access, host, (int)port);
  for (i = 0; i < n_allow; i++) {
    if (i == DASH_ALLOW_MAX || dash_access_allow(&d->access, allow[i]) != 0) {
      fprintf(stderr,
              "fleet dash: --allow-host wants NAME or NAME:PORT, at most "
              "%d of them (got %s)\n",
              DASH_ALLOW_MAX, allow[i]);
      free(d);
      return 2;
    }
  }
  if (token == NULL && (token = getenv("FLEET_DASH_TOKEN")) != NULL &&
      token[0] != '\0')
    token_from = "FLEET_DASH_TOKEN";
  else if (token == NULL || token[0] == '\0')
    token = NULL;
  if (token != NULL && dash_access_set_token(&d->access, token) != 0) {
    fprintf(stderr,
            "fleet dash: %s: 1 to %d letters, digits or \"-._~\" (for "
            "example: openssl rand -hex 32)\n",
            token_from, DASH_TOKEN_MAX);
    free(d);
    return 2;
  }
  /* Hides the token from ps from now on (it was visible until now). */
  if (token != NULL && strcmp(token_from, "--token") == 0)
    memset((char *)token, 'x', strlen(token));
  uv_tcp_init(cli->loop, &d->server);
  d->server.data = d;
  d->handles = 1;
  err = uv_tcp_bind(&d->server, (const struct sockaddr *)&ss, 0);
  if (err == 0)
    err = uv_listen((uv_stream_t *)&d->server, 128, on_connection);
  if (err == 0)
    err = uv_tcp_getsockname(&d->server, (struct sockaddr *)&ss, &len);
  if (err != 0) {
    fprintf(stderr, "fleet dash: cannot listen on %s: %s\n", listen,
            uv_strerror(err));
    d->stopping = 1;
    uv_close((uv_handle_t *)&d->server, NULL);
    free(d);
    return 1;
  }
  port =
      ss.ss_family == AF_INET6 ? ntohs(in6->sin6_port) : ntohs(in4->sin_port);
  d->access.port = (int)port;
  snprintf(d->access.cookie, sizeof(d->access.cookie), "fleet_dash_%u",
           (unsigned)port);
  d->history = cli_jarr();
  if (d->history == NULL) {
    d->stopping = 1;
    uv_close((uv_handle_t *)&d->server, NULL);
    free(d);
    return 1;
  }
  uv_timer_init(cli->loop, &d->sampler);
  uv_signal_init(cli->loop, &d->sigint);
  uv_signal_init(cli->loop, &d->sigterm);
  d->sampler.data = d->sigint.data = d->sigterm.data = d;
  d->handles += 3;
  uv_timer_start(&d->sampler, sample_tick, 0, 0);
  uv_signal_start(&d->sigint, dash_signal, SIGINT);
  uv_signal_start(&d->sigterm, dash_signal, SIGTERM);
  if (!dash_addr_loopback((const struct sockaddr *)&ss) && token == NULL)
    fprintf(stderr,
            "fleet dash: warning: listening on %s beyond loopback without a "
            "token: whoever reaches port %u can read every job%s (set "
            "FLEET_DASH_TOKEN)\n",
            host, (unsigned)port,
            read_only ? "" : " and pause, retry or cancel queues and jobs");
  printf("fleet dash: http://%s%s%s:%u/ (backend %s, prefix %s; %s, %s%s)\n",
         ss.ss_family == AF_INET6 ? "[" : "", host,
         ss.ss_family == AF_INET6 ? "]" : "", (unsigned)port, cli->url_shown,
         cli->prefix, read_only ? "read-only" : "read-write",
         token != NULL ? "token required, from " : "no token",
         token != NULL ? token_from : "");
  fflush(stdout);
  return 0;
}
