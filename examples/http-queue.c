/* http-queue.c -- fleet embedded in a small libuv HTTP server: POST /jobs
 * enqueues a job (the body is its payload), GET /jobs/<id> returns its
 * state, GET /metrics serves fleet_metrics_prometheus(), and a worker on
 * the same loop processes the jobs and logs each
 * completion callback. The worker keeps the last 1000 completed jobs (for
 * an hour; the library keeps none by default, see docs/queue.md), so that
 * GET /jobs/<id> answers "completed" rather than 404 once a job is done.
 *
 *   http-queue [--url URL] [--prefix P] [--port N] [--queue Q]
 *              [--concurrency C] [--work-ms MS] [--body-max BYTES]
 *              [--read-timeout-ms MS]
 *
 *   curl -H 'Content-Type: application/json' -d '{"to":"ann"}' \
 *        'http://127.0.0.1:8080/jobs?type=greet'
 *   curl http://127.0.0.1:8080/jobs/1
 *
 * One request per connection (the response closes it); requests are parsed
 * with http_parser. What a server facing a network needs:
 *
 *   - a body over --body-max (default 1 MiB) gets 413, as soon as its
 *     Content-Length says so, and a URL over 2 KiB gets 414;
 *   - the job type (?type=, default "http") is %-decoded ('+' is a space)
 *     and must then be 1 to FLEET_JOB_TYPE_MAX letters, digits or "-_.:/",
 *     else 400;
 *   - a connection that sends nothing for --read-timeout-ms (default 10 s)
 *     is closed (with 408 if it had begun a request); after the response
 *     the rest of the request is read and dropped, for at most that long
 *     again, so that the client reads the response rather than a reset;
 *   - SIGINT or SIGTERM closes the listener and every connection, stops
 *     the worker (running jobs get 5 s) and exits 0;
 *   - a backend outage is printed once, when it starts, and once more when
 *     the backend is back; the requests it fails get 503 and print nothing;
 *   - the backend URL is printed with its password replaced by "***"
 *     (fleet_redact_url()); without --url it comes from FLEET_URL, then
 *     REDIS_URL (fleet_url_from_env()), then memory://: a --url shows in
 *     `ps` with its password, the environment does not;
 *   - a bad flag or value is one line on stderr naming it (and the range,
 *     for a number), then exit 2; --help prints the usage;
 *   - a backend never reached is one line on stderr, then exit 1; job ids,
 *     types and server messages are printed inert (fleet_escape_text());
 *   - only a Host of 127.0.0.1, localhost or [::1] (with the port, or
 *     none) is answered, else 421: a page whose DNS name was rebound to
 *     127.0.0.1 cannot use the server (an HTTP/1.1 request without Host
 *     gets 400);
 *   - POST /jobs wants "Content-Type: application/json" (else 415), which
 *     a page of another site cannot send without asking first (CORS
 *     preflight, which this server never grants), and an Origin, when
 *     sent, must be the server's own (else 403): no web page the
 *     operator visits can enqueue jobs. */
#include <errno.h>
#include <http_parser.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fleet.h"

/* Longest request URL kept, in bytes. */
#define HQ_URL_MAX 2048
/* Longest value kept of the headers read (Host, Origin, Content-Type);
 * a longer one is answered 431. */
#define HQ_HEADER_MAX 255

typedef struct hq_conn_s hq_conn_t;

typedef struct {
  uv_loop_t *loop;
  fleet_client_t client;
  fleet_queue_t queue;
  fleet_worker_t worker;
  uv_tcp_t server;
  uv_signal_t sigint, sigterm;
  http_parser_settings settings;
  uint64_t work_ms;
  uint64_t read_timeout_ms;
  uint64_t body_max;
  int port;
  char url_shown[512]; /* the backend URL, redacted */
  hq_conn_t *conns;    /* the open connections */
  int closing;
  int ready;        /* the backend was reached at least once */
  int failed;       /* it was not reached before shutdown */
  int backend_down; /* an outage was reported and has not ended */
} hq_app_t;

/* One connection, alive while its socket or timer is open or a fleet call
 * made for it is pending. */
struct hq_conn_s {
  uv_tcp_t tcp;
  uv_timer_t timer; /* the read timeout */
  uv_shutdown_t shutdown;
  hq_app_t *app;
  hq_conn_t *prev, *next; /* in app->conns while open */
  http_parser parser;
  char url[HQ_URL_MAX + 1];
  size_t url_len;
  char *body;
  size_t body_len;
  /* The headers read: the field's name while it comes (in pieces), and
   * the values of Host, Origin and Content-Type. */
  char field[16];
  size_t field_len;
  int in_value, header; /* header: HQ_H_*, or -1 */
  char hv[3][HQ_HEADER_MAX + 1];
  size_t hv_len[3];
  int hn[3]; /* how many times each came */
  int header_too_long;
  int refs;    /* the socket, the timer, a pending fleet call */
  int started; /* bytes of a request arrived */
  int routed;  /* the request is complete and being answered */
  int responded;
  int eof; /* the client sent EOF after its request */
  int closed;
};

typedef struct {
  uv_write_t req;
  char *buf;
} hq_write_t;

enum { HQ_H_HOST, HQ_H_ORIGIN, HQ_H_TYPE };
static const char *const hq_header_names[] = {"Host", "Origin", "Content-Type"};

/* ------------------------------------------------------------------------ */
/* Printing                                                                 */

/* ------------------------------------------------------------------------ */
/* Backend errors                                                           */

/* Reports a backend error, once per outage: the requests and background
 * calls that fail while it lasts print nothing. */
static void hq_backend_error(hq_app_t *app, int status, const char *detail) {
  if (app->backend_down)
    return;
  app->backend_down = 1;
  /* Never reached at all: the one line says so, and that it exits. */
  fleet_escape_print(stderr, "http-queue: backend %s: %s%s%s (%s)%s",
                     app->url_shown, fleet_strerror(status),
                     detail != NULL && *detail != '\0' ? ": " : "",
                     detail != NULL ? detail : "", fleet_err_name(status),
                     app->ready ? "" : "; cannot reach the backend, exiting");
}

static void hq_backend_ok(hq_app_t *app) {
  if (!app->backend_down)
    return;
  app->backend_down = 0;
  fleet_escape_print(stderr, "http-queue: backend %s: reachable again",
                     app->url_shown);
}

/* Whether `status`, the result of a request's fleet call, tells of the
 * backend rather than of the request. */
static int hq_backend_status(int status) {
  return status != 0 && status != FLEET_ENOTFOUND && status != FLEET_EINVAL;
}

/* ------------------------------------------------------------------------ */
/* Connections                                                              */

static void hq_conn_unref(hq_conn_t *c) {
  if (--c->refs > 0)
    return;
  free(c->body);
  free(c);
}

static void hq_on_conn_handle_closed(uv_handle_t *h) {
  hq_conn_unref(h->data);
}

/* Closes the socket and the timer; the connection is freed once they are
 * closed and no fleet call made for it is pending. */
static void hq_conn_close(hq_conn_t *c) {
  hq_app_t *app = c->app;

  if (c->closed)
    return;
  c->closed = 1;
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    app->conns = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
  uv_close((uv_handle_t *)&c->tcp, hq_on_conn_handle_closed);
  uv_close((uv_handle_t *)&c->timer, hq_on_conn_handle_closed);
}

static void hq_on_timeout(uv_timer_t *t);

/* (Re)starts the read timeout. */
static void hq_conn_arm(hq_conn_t *c) {
  uv_timer_start(&c->timer, hq_on_timeout, c->app->read_timeout_ms, 0);
}

static void hq_on_shutdown(uv_shutdown_t *req, int status) {
  hq_conn_t *c = req->data;

  /* The client now has the whole response; what it still sends is read
   * and dropped until it closes or the timeout ends the wait. */
  if (status != 0 || c->eof)
    hq_conn_close(c);
  hq_conn_unref(c);
}

static void hq_on_written(uv_write_t *req, int status) {
  hq_write_t *w = (hq_write_t *)req;
  hq_conn_t *c = req->data;

  free(w->buf);
  free(w);
  if (status != 0 || c->closed) {
    hq_conn_close(c);
  } else {
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, hq_on_shutdown) == 0)
      c->refs++;
    else
      hq_conn_close(c);
  }
  hq_conn_unref(c);
}

/* Sends a response: the head (code, reason, content type, length) and
 * `body`; the connection closes after it. */
static void hq_send(hq_conn_t *c, int code, const char *reason,
                    const char *type, const char *body, size_t body_len) {
  static const char fmt[] = "HTTP/1.1 %d %s\r\n"
                            "Content-Type: %s\r\n"
                            "Content-Length: %zu\r\n"
                            "Connection: close\r\n\r\n";
  hq_write_t *w;
  uv_buf_t buf;
  int n;

  if (c->responded || c->closed)
    return;
  c->responded = 1;
  hq_conn_arm(c); /* bounds the write and the wait for the client's close */
  n = snprintf(NULL, 0, fmt, code, reason, type, body_len);
  w = malloc(sizeof(*w));
  if (w == NULL || (w->buf = malloc((size_t)n + body_len + 1)) == NULL) {
    free(w);
    hq_conn_close(c);
    return;
  }
  snprintf(w->buf, (size_t)n + 1, fmt, code, reason, type, body_len);
  memcpy(w->buf + n, body, body_len);
  buf = uv_buf_init(w->buf, (unsigned)((size_t)n + body_len));
  w->req.data = c;
  if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, hq_on_written) != 0) {
    free(w->buf);
    free(w);
    hq_conn_close(c);
    return;
  }
  c->refs++; /* for the write */
}

/* Sends a response with a JSON body; the connection closes after it. */
static void hq_respond(hq_conn_t *c, int code, const char *reason,
                       const char *json) {
  hq_send(c, code, reason, "application/json", json, strlen(json));
}

static void hq_on_timeout(uv_timer_t *t) {
  hq_conn_t *c = t->data;

  if (c->started && !c->responded)
    hq_respond(c, 408, "Request Timeout", "{\"error\":\"request timeout\"}");
  else
    hq_conn_close(c);
}

/* GET /metrics: the client's handles in the Prometheus text format
 * (fleet_metrics_prometheus()), then close. */
static void hq_respond_metrics(hq_conn_t *c) {
  char *text = NULL;
  size_t len = 0;

  if (fleet_metrics_prometheus(&c->app->client, &text, &len) != 0) {
    hq_respond(c, 503, "Service Unavailable", "{\"error\":\"metrics\"}");
    return;
  }
  hq_send(c, 200, "OK", "text/plain; version=0.0.4", text, len);
  fleet_metrics_free(text);
}

/* Writes `s` (len bytes) as a JSON string into `out` (cap bytes). */
static void hq_json_str(char *out, size_t cap, const char *s, size_t len) {
  size_t i, o = 0;

  out[o++] = '"';
  for (i = 0; i < len && o + 8 < cap; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '"' || ch == '\\') {
      out[o++] = '\\';
      out[o++] = (char)ch;
    } else if (ch < 32) {
      o += (size_t)snprintf(out + o, cap - o, "\\u%04x", ch);
    } else {
      out[o++] = (char)ch;
    }
  }
  out[o++] = '"';
  out[o] = '\0';
}

/* ------------------------------------------------------------------------ */
/* Routes                                                                   */

static void hq_on_enqueued(fleet_queue_t *q, int status,
                           const fleet_enqueue_result_t *r, size_t n,
                           void *arg) {
  hq_conn_t *c = arg;
  char id[2 * FLEET_JOB_ID_MAX + 8], json[sizeof(id) + 16];

  if (status == 0)
    status = r[0].status;
  if (status != 0) {
    if (hq_backend_status(status) && status != FLEET_ECANCELED)
      hq_backend_error(c->app, status,
                       fleet_client_last_error(&c->app->client));
    snprintf(json, sizeof(json), "{\"error\":\"%s\"}", fleet_err_name(status));
    hq_respond(c, 503, "Service Unavailable", json);
  } else {
    hq_json_str(id, sizeof(id), r[0].id, r[0].id_len);
    snprintf(json, sizeof(json), "{\"id\":%s}", id);
    hq_respond(c, 201, "Created", json);
  }
  hq_conn_unref(c);
}

static void hq_on_got(fleet_queue_t *q, int status,
                      const fleet_job_info_t *info, void *arg) {
  hq_conn_t *c = arg;
  char err[256], json[512];

  if (status == FLEET_ENOTFOUND) {
    hq_respond(c, 404, "Not Found", "{\"error\":\"FLEET_ENOTFOUND\"}");
  } else if (status != 0) {
    if (status != FLEET_ECANCELED)
      hq_backend_error(c->app, status,
                       fleet_client_last_error(&c->app->client));
    snprintf(json, sizeof(json), "{\"error\":\"%s\"}", fleet_err_name(status));
    hq_respond(c, 503, "Service Unavailable", json);
  } else {
    if (info->last_error != NULL)
      hq_json_str(err, sizeof(err), info->last_error, info->last_error_len);
    else
      strcpy(err, "null");
    snprintf(json, sizeof(json),
             "{\"state\":\"%s\",\"attempts\":%u,\"max_attempts\":%u,"
             "\"last_error\":%s}",
             fleet_job_state_name(info->state), (unsigned)info->attempts,
             (unsigned)info->max_attempts, err);
    hq_respond(c, 200, "OK", json);
  }
  hq_conn_unref(c);
}

static int hq_hex(char ch) {
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

/* The job type from the query string [q, q+len): the value of "type=",
 * %-decoded with '+' as a space, into `type` (FLEET_JOB_TYPE_MAX + 1
 * bytes). Keeps `type` when the query has no type. Returns 0, or -1 when
 * the value is badly escaped, empty, too long or holds a byte other than a
 * letter, a digit or one of "-_.:/". */
static int hq_query_type(const char *q, size_t len, char *type) {
  const char *end = q + len, *amp, *v;
  size_t n = 0;

  for (; q < end; q = amp + 1) {
    amp = memchr(q, '&', (size_t)(end - q));
    if (amp == NULL)
      amp = end;
    if ((size_t)(amp - q) < 5 || memcmp(q, "type=", 5) != 0)
      continue;
    for (v = q + 5, n = 0; v < amp; v++, n++) {
      char ch = *v;
      if (ch == '+') {
        ch = ' ';
      } else if (ch == '%') {
        if (amp - v < 3 || hq_hex(v[1]) < 0 || hq_hex(v[2]) < 0)
          return -1;
        ch = (char)(hq_hex(v[1]) * 16 + hq_hex(v[2]));
        v += 2;
      }
      if (n == FLEET_JOB_TYPE_MAX ||
          !((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
            (ch >= '0' && ch <= '9') || strchr("-_.:/", ch) != NULL) ||
          ch == '\0')
        return -1;
      type[n] = ch;
    }
    if (n == 0)
      return -1;
    type[n] = '\0';
  }
  return 0;
}

/* Whether `s` (`len` bytes) is "NAME" or "NAME:PORT" with NAME 127.0.0.1,
 * localhost or [::1] (in any case) and PORT the server's; `need_port`:
 * the port must be there (an Origin, unless it is 80), else it may be
 * left out (a Host). */
static int hq_own_host(const hq_app_t *app, const char *s, size_t len,
                       int need_port) {
  static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
  char port[8];
  size_t i, n, plen;

  plen = (size_t)snprintf(port, sizeof(port), ":%d", app->port);
  for (i = 0; i < 3; i++) {
    n = strlen(names[i]);
    if (len >= n && strncasecmp(s, names[i], n) == 0 &&
        ((len == n && (!need_port || app->port == 80)) ||
         (len == n + plen && memcmp(s + n, port, plen) == 0)))
      return 1;
  }
  return 0;
}

/* Whether a Content-Type value is application/json, with or without
 * parameters ("; charset=utf-8"). */
static int hq_json_type(const char *s, size_t len) {
  return len >= 16 && strncasecmp(s, "application/json", 16) == 0 &&
         (len == 16 || s[16] == ';' || s[16] == ' ');
}

/* Routes a complete request. */
static void hq_route(hq_conn_t *c) {
  struct http_parser_url u;
  char type[FLEET_JOB_TYPE_MAX + 1] = "http", id[FLEET_JOB_ID_MAX + 1];
  const char *path, *query = NULL;
  size_t path_len, query_len = 0;
  fleet_job_spec_t spec;
  int err = FLEET_EINVAL;

  c->routed = 1;
  uv_timer_stop(&c->timer); /* the backend's turn: its timeouts apply */
  http_parser_url_init(&u);
  if (http_parser_parse_url(c->url, c->url_len, 0, &u) != 0 ||
      !(u.field_set & (1 << UF_PATH))) {
    hq_respond(c, 400, "Bad Request", "{\"error\":\"bad URL\"}");
    return;
  }
  path = c->url + u.field_data[UF_PATH].off;
  path_len = u.field_data[UF_PATH].len;
  if (u.field_set & (1 << UF_QUERY)) {
    query = c->url + u.field_data[UF_QUERY].off;
    query_len = u.field_data[UF_QUERY].len;
  }
  if (c->header_too_long) {
    hq_respond(c, 431, "Request Header Fields Too Large",
               "{\"error\":\"header too long\"}");
    return;
  }
  if (c->hn[HQ_H_HOST] > 1 ||
      (c->hn[HQ_H_HOST] == 0 &&
       (c->parser.http_major > 1 || c->parser.http_minor > 0))) {
    hq_respond(c, 400, "Bad Request", "{\"error\":\"one Host is required\"}");
    return;
  }
  if (c->hn[HQ_H_HOST] == 1 &&
      !hq_own_host(c->app, c->hv[HQ_H_HOST], c->hv_len[HQ_H_HOST], 0)) {
    hq_respond(c, 421, "Misdirected Request",
               "{\"error\":\"not a host name of this server\"}");
    return;
  }
  if (c->parser.method == HTTP_GET && path_len == 8 &&
      memcmp(path, "/metrics", 8) == 0) {
    hq_respond_metrics(c);
    return;
  }
  if (c->parser.method == HTTP_POST && path_len == 5 &&
      memcmp(path, "/jobs", 5) == 0) {
    if (c->hn[HQ_H_ORIGIN] > 0 &&
        (c->hn[HQ_H_ORIGIN] > 1 || c->hv_len[HQ_H_ORIGIN] < 7 ||
         strncasecmp(c->hv[HQ_H_ORIGIN], "http://", 7) != 0 ||
         !hq_own_host(c->app, c->hv[HQ_H_ORIGIN] + 7,
                      c->hv_len[HQ_H_ORIGIN] - 7, 1))) {
      hq_respond(c, 403, "Forbidden",
                 "{\"error\":\"cross-origin request refused\"}");
      return;
    }
    if (!hq_json_type(c->hv[HQ_H_TYPE], c->hv_len[HQ_H_TYPE])) {
      hq_respond(c, 415, "Unsupported Media Type",
                 "{\"error\":\"Content-Type must be application/json\"}");
      return;
    }
    if (query != NULL && hq_query_type(query, query_len, type) != 0) {
      hq_respond(c, 400, "Bad Request",
                 "{\"error\":\"bad type: 1 to 128 letters, digits or "
                 "-_.:/ after %-decoding\"}");
      return;
    }
    fleet_job_spec_init(&spec, type, c->body, c->body_len);
    err = fleet_queue_enqueue(&c->app->queue, &spec, 1, hq_on_enqueued, c);
  } else if (c->parser.method == HTTP_GET && path_len > 6 &&
             path_len - 6 <= FLEET_JOB_ID_MAX &&
             memcmp(path, "/jobs/", 6) == 0) {
    memcpy(id, path + 6, path_len - 6);
    id[path_len - 6] = '\0';
    err = fleet_queue_get(&c->app->queue, id, hq_on_got, c);
  } else {
    hq_respond(c, 404, "Not Found", "{\"error\":\"no such route\"}");
    return;
  }
  if (err == 0) {
    c->refs++; /* for the fleet call */
  } else {
    char json[64];
    snprintf(json, sizeof(json), "{\"error\":\"%s\"}", fleet_err_name(err));
    hq_respond(c, 400, "Bad Request", json);
  }
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                  */

static int hq_on_url(http_parser *p, const char *at, size_t len) {
  hq_conn_t *c = p->data;
  if (c->url_len + len > HQ_URL_MAX) {
    hq_respond(c, 414, "URI Too Long", "{\"error\":\"URL too long\"}");
    return 1;
  }
  memcpy(c->url + c->url_len, at, len);
  c->url_len += len;
  c->url[c->url_len] = '\0';
  return 0;
}

/* A header's name may come in pieces: gathered until its value begins
 * (cut at 16 bytes, longer than any name read). */
static int hq_on_header_field(http_parser *p, const char *at, size_t len) {
  hq_conn_t *c = p->data;
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

/* The value of Host, Origin or Content-Type is kept (in pieces too). */
static int hq_on_header_value(http_parser *p, const char *at, size_t len) {
  hq_conn_t *c = p->data;
  int h;

  if (!c->in_value) {
    c->in_value = 1;
    c->header = -1;
    for (h = 0; h < 3; h++)
      if (c->field_len == strlen(hq_header_names[h]) &&
          strncasecmp(c->field, hq_header_names[h], c->field_len) == 0)
        c->header = h;
    if (c->header >= 0)
      c->hn[c->header]++;
  }
  if (c->header < 0)
    return 0;
  if (c->hv_len[c->header] + len > HQ_HEADER_MAX) {
    c->header_too_long = 1;
    return 0;
  }
  memcpy(c->hv[c->header] + c->hv_len[c->header], at, len);
  c->hv_len[c->header] += len;
  c->hv[c->header][c->hv_len[c->header]] = '\0';
  return 0;
}

static void hq_too_large(hq_conn_t *c) {
  char json[96];

  snprintf(json, sizeof(json), "{\"error\":\"body over %" PRIu64 " bytes\"}",
           c->app->body_max);
  hq_respond(c, 413, "Payload Too Large", json);
}

/* A declared Content-Length over the limit is refused before any of the
 * body is read. */
static int hq_on_headers_complete(http_parser *p) {
  hq_conn_t *c = p->data;

  if (!(p->flags & F_CHUNKED) && p->content_length != ULLONG_MAX &&
      p->content_length > c->app->body_max) {
    hq_too_large(c);
    http_parser_pause(p, 1);
  }
  return 0;
}

static int hq_on_body(http_parser *p, const char *at, size_t len) {
  hq_conn_t *c = p->data;
  char *b;

  if (c->body_len + len > c->app->body_max) {
    hq_too_large(c); /* a chunked body that grew too large */
    return 1;
  }
  b = realloc(c->body, c->body_len + len + 1);
  if (b == NULL) {
    hq_respond(c, 503, "Service Unavailable", "{\"error\":\"FLEET_ENOMEM\"}");
    return 1;
  }
  memcpy(b + c->body_len, at, len);
  c->body = b;
  c->body_len += len;
  return 0;
}

static int hq_on_message_complete(http_parser *p) {
  hq_route(p->data);
  return 1; /* one request per connection */
}

static void hq_on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  buf->base = malloc(hint);
  buf->len = buf->base != NULL ? hint : 0;
}

static void hq_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  hq_conn_t *c = s->data;
  size_t used;

  if (nread < 0) {
    /* A client that half-closes after its request still gets the answer;
     * the socket closes once it is written. */
    if (nread == UV_EOF && c->routed && !c->responded) {
      c->eof = 1;
      uv_read_stop(s);
    } else {
      hq_conn_close(c);
    }
  } else if (nread > 0 && !c->responded && !c->routed) {
    c->started = 1;
    hq_conn_arm(c);
    used = http_parser_execute(&c->parser, &c->app->settings, buf->base,
                               (size_t)nread);
    if (c->parser.http_errno != HPE_OK &&
        c->parser.http_errno != HPE_CB_message_complete) {
      hq_respond(c, 400, "Bad Request", "{\"error\":\"bad request\"}");
    } else if (used < (size_t)nread && !c->routed) {
      hq_respond(c, 400, "Bad Request", "{\"error\":\"bad request\"}");
    }
  }
  free(buf->base);
}

static void hq_on_connection(uv_stream_t *server, int status) {
  hq_app_t *app = server->data;
  hq_conn_t *c;

  if (status != 0 || (c = calloc(1, sizeof(*c))) == NULL)
    return;
  c->app = app;
  c->refs = 2; /* the socket and the timer */
  uv_tcp_init(app->loop, &c->tcp);
  uv_timer_init(app->loop, &c->timer);
  c->tcp.data = c->timer.data = c;
  c->next = app->conns;
  if (app->conns != NULL)
    app->conns->prev = c;
  app->conns = c;
  if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
    hq_conn_close(c);
    return;
  }
  http_parser_init(&c->parser, HTTP_REQUEST);
  c->parser.data = c;
  hq_conn_arm(c);
  if (uv_read_start((uv_stream_t *)&c->tcp, hq_on_alloc, hq_on_read) != 0)
    hq_conn_close(c);
}

/* ------------------------------------------------------------------------ */
/* The worker                                                               */

typedef struct {
  uv_timer_t timer;
  fleet_job_t *job;
} hq_work_t;

static void hq_on_work_closed(uv_handle_t *h) {
  free(h->data);
}

static void hq_on_work(uv_timer_t *t) {
  hq_work_t *work = t->data;
  fleet_job_complete(work->job);
  uv_close((uv_handle_t *)t, hq_on_work_closed);
}

static void hq_handler(fleet_worker_t *w, fleet_job_t *job) {
  hq_app_t *app = w->data;
  hq_work_t *work = malloc(sizeof(*work));

  fleet_escape_print(stdout, "job %s (%s, %zu bytes): started, attempt %u",
                     job->id, job->type, job->payload.len,
                     (unsigned)job->attempts);
  if (work == NULL) {
    fleet_job_release(job);
    return;
  }
  work->job = job;
  work->timer.data = work;
  uv_timer_init(app->loop, &work->timer);
  uv_timer_start(&work->timer, hq_on_work, app->work_ms, 0);
}

static void hq_done(fleet_worker_t *w, fleet_job_t *job,
                    fleet_job_action_t action, int status) {
  fleet_escape_print(stdout, "job %s: %s %s", job->id,
                     action == FLEET_JOB_COMPLETE ? "completed"
                     : action == FLEET_JOB_FAIL   ? "failed"
                                                  : "released",
                     status == 0 ? "(accepted)" : fleet_err_name(status));
  fflush(stdout);
}

/* The worker's failed background calls: claims retried while the backend
 * is away are part of the outage already reported. */
static void hq_on_worker_error(fleet_handle_t *w, int status,
                               const char *detail) {
  hq_app_t *app = w->data;
  if (!app->closing)
    hq_backend_error(app, status, detail);
}

/* ------------------------------------------------------------------------ */
/* Start and stop                                                           */

static void hq_on_queue_closed(fleet_handle_t *q) {
  hq_app_t *app = q->data;
  fleet_client_close(&app->client, NULL);
}

static void hq_on_worker_closed(fleet_handle_t *w) {
  hq_app_t *app = w->data;
  fleet_queue_close(&app->queue, hq_on_queue_closed);
}

static void hq_on_stopped(fleet_handle_t *w_h, int status, void *user_data) {
  fleet_worker_t *w = (fleet_worker_t *)w_h;
  fleet_worker_close(w, hq_on_worker_closed);
}

/* Closes the listener and every connection, then the worker, the queue and
 * the client; uv_run() returns once all of them are closed. */
static void hq_shutdown(hq_app_t *app) {
  if (app->closing++)
    return;
  uv_close((uv_handle_t *)&app->server, NULL);
  uv_close((uv_handle_t *)&app->sigint, NULL);
  uv_close((uv_handle_t *)&app->sigterm, NULL);
  while (app->conns != NULL)
    hq_conn_close(app->conns);
  if (fleet_worker_stop(&app->worker, 5000, hq_on_stopped, NULL) != 0)
    fleet_worker_close(&app->worker, hq_on_worker_closed);
}

static void hq_on_signal(uv_signal_t *s, int signum) {
  hq_app_t *app = s->data;
  hq_conn_t *c;
  size_t n = 0;

  for (c = app->conns; c != NULL; c = c->next)
    n++;
  fprintf(stderr, "http-queue: %s: closing %zu connection(s) and exiting\n",
          signum == SIGINT ? "SIGINT" : "SIGTERM", n);
  hq_shutdown(app);
}

static void hq_on_state(fleet_client_t *client, fleet_client_state_t state,
                        int status) {
  hq_app_t *app = client->data;

  if (state == FLEET_CLIENT_READY) {
    app->ready = 1;
    hq_backend_ok(app);
  } else if (state == FLEET_CLIENT_RECONNECTING && status != 0 &&
             !app->closing) {
    hq_backend_error(app, status, fleet_client_last_error(client));
    if (!app->ready) {
      app->failed = 1;
      hq_shutdown(app);
    }
  }
}

static const char hq_usage_text[] =
    "usage: http-queue [--url URL] [--prefix P] [--port N] [--queue Q] "
    "[--concurrency C] [--work-ms MS] [--body-max BYTES] "
    "[--read-timeout-ms MS]\n";

/* The integer flags and their ranges. */
static const struct {
  const char *flag;
  long long min, max;
} hq_ints[] = {
    {"--port", 1, 65535},
    {"--concurrency", 1, 10000},
    {"--work-ms", 0, 86400000},
    {"--body-max", 0, 64LL * 1024 * 1024},
    {"--read-timeout-ms", 1, 86400000},
};

/* Parses `s` as an integer in [min, max] into *out; 0, or -1 after one
 * line that names the flag, the range and what was given. */
static int hq_int(const char *flag, const char *s, long long min, long long max,
                  long long *out) {
  char *end;
  long long v;

  errno = 0;
  v = strtoll(s, &end, 10);
  if (end == s || *end != '\0' || errno != 0 || v < min || v > max) {
    fleet_escape_print(stderr, "http-queue: %s: %lld to %lld (got %s)", flag,
                       min, max, s);
    return -1;
  }
  *out = v;
  return 0;
}

/* The client's log while it opens (a tls_verify=0 warning), one line
 * each; outages are printed by hq_backend_error(). */
static int hq_opening;

static void hq_on_log(fleet_log_level_t level, const char *msg, void *data) {
  (void)data;
  if (hq_opening && level <= FLEET_LOG_WARN)
    fleet_escape_print(stderr, "http-queue: %s: %s",
                       fleet_log_level_name(level), msg);
}

int main(int argc, char **argv) {
  const char *url = NULL, *prefix = "fleet", *queue = "http";
  long long port = 8080, concurrency = 4, work_ms = 100;
  long long body_max = 1024 * 1024, read_timeout_ms = 10000;
  fleet_client_options_t co;
  fleet_worker_options_t wo;
  struct sockaddr_in addr;
  hq_app_t app;
  int i, err;

  for (i = 1; i < argc; i++) {
    const char *flag = argv[i], *v;
    long long *const nums[] = {&port, &concurrency, &work_ms, &body_max,
                               &read_timeout_ms};
    size_t k;

    if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) {
      fputs(hq_usage_text, stdout);
      return 0;
    }
    if (strcmp(flag, "--url") != 0 && strcmp(flag, "--prefix") != 0 &&
        strcmp(flag, "--queue") != 0) {
      for (k = 0; k < sizeof(hq_ints) / sizeof(hq_ints[0]); k++)
        if (strcmp(flag, hq_ints[k].flag) == 0)
          break;
      if (k == sizeof(hq_ints) / sizeof(hq_ints[0])) {
        fleet_escape_print(
            stderr, "http-queue: unknown flag '%s' (--help lists them)", flag);
        return 2;
      }
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "http-queue: %s needs a value\n", flag);
      return 2;
    }
    v = argv[++i];
    if (strcmp(flag, "--url") == 0)
      url = v;
    else if (strcmp(flag, "--prefix") == 0)
      prefix = v;
    else if (strcmp(flag, "--queue") == 0)
      queue = v;
    else if (hq_int(flag, v, hq_ints[k].min, hq_ints[k].max, nums[k]) != 0)
      return 2;
  }
  /* Without --url: FLEET_URL, then REDIS_URL, then memory://. */
  if (url == NULL)
    url = fleet_url_from_env();
  if (url == NULL)
    url = "memory://";

  memset(&app, 0, sizeof(app));
  app.loop = uv_default_loop();
  app.work_ms = (uint64_t)work_ms;
  app.body_max = (uint64_t)body_max;
  app.read_timeout_ms = (uint64_t)read_timeout_ms;
  app.port = (int)port;
  fleet_redact_url(url, app.url_shown, sizeof(app.url_shown));
  http_parser_settings_init(&app.settings);
  app.settings.on_url = hq_on_url;
  app.settings.on_header_field = hq_on_header_field;
  app.settings.on_header_value = hq_on_header_value;
  app.settings.on_headers_complete = hq_on_headers_complete;
  app.settings.on_body = hq_on_body;
  app.settings.on_message_complete = hq_on_message_complete;

  fleet_client_options_init(&co);
  co.prefix = prefix;
  co.state_cb = hq_on_state;
  co.log_cb = hq_on_log;
  app.client.data = &app;
  hq_opening = 1;
  err = fleet_client_init(app.loop, &app.client, url, &co);
  hq_opening = 0;
  if (err != 0) {
    char why[256] = "";

    fleet_client_url_check(url, why, sizeof(why));
    fleet_escape_print(stderr, "http-queue: %s: %s%s%s", app.url_shown,
                       fleet_strerror(err), why[0] != '\0' ? ": " : "", why);
    return 1;
  }
  fleet_worker_options_init(&wo);
  wo.concurrency = (uint32_t)concurrency;
  wo.done_cb = hq_done;
  wo.error_cb = hq_on_worker_error;
  wo.queue.keep_completed = 1000; /* GET /jobs/<id> shows completed jobs */
  app.queue.data = app.worker.data = &app;
  if ((err = fleet_queue_init(&app.client, &app.queue, queue, NULL)) != 0 ||
      (err = fleet_worker_init(&app.client, &app.worker, queue, &wo)) != 0 ||
      (err = fleet_worker_start(&app.worker, hq_handler)) != 0) {
    fprintf(stderr, "http-queue: %s\n", fleet_strerror(err));
    return 1;
  }

  uv_tcp_init(app.loop, &app.server);
  app.server.data = &app;
  uv_ip4_addr("127.0.0.1", (int)port, &addr);
  if ((err = uv_tcp_bind(&app.server, (const struct sockaddr *)&addr, 0)) !=
          0 ||
      (err = uv_listen((uv_stream_t *)&app.server, 128, hq_on_connection)) !=
          0) {
    fprintf(stderr, "http-queue: port %lld: %s\n", port, uv_strerror(err));
    return 1;
  }
  uv_signal_init(app.loop, &app.sigint);
  uv_signal_init(app.loop, &app.sigterm);
  app.sigint.data = app.sigterm.data = &app;
  uv_signal_start(&app.sigint, hq_on_signal, SIGINT);
  uv_signal_start(&app.sigterm, hq_on_signal, SIGTERM);
  fleet_escape_print(
      stdout, "http-queue: listening on http://127.0.0.1:%lld (queue %s on %s)",
      port, queue, app.url_shown);
  fflush(stdout);
  uv_run(app.loop, UV_RUN_DEFAULT);
  uv_loop_close(app.loop);
  return app.failed ? 1 : 0;
}
