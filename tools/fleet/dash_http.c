/* dash_http.c -- the dashboard's HTTP/1.1 server on the loop (http_parser;
 * one request per connection): connections and their read timeout, the
 * parsing of the request with its limits (URL, headers, body), and the
 * responses with the security headers every one carries. A complete
 * request, its URL split into path and query, goes to d->on_request (the
 * router). */
#include <stdlib.h>
#include <string.h>

#include "dash_int.h"

/* The request headers the dashboard reads, and the longest value kept of
 * each (a longer one is answered 431). */
static const struct {
  const char *name;
  size_t max;
} dash_headers[DASH_H_COUNT] = {{"Host", 300},
                                {"Origin", 512},
                                {"Authorization", 512},
                                {"Cookie", 8192},
                                {"X-Fleet-Dash", 16}};

typedef struct {
  uv_write_t req;
  char *buf;
} dash_write_t;

/* ------------------------------------------------------------------------ */
/* Connections and responses                                                */

void dash_conn_unref(dash_conn_t *c) {
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

static void conn_closed(uv_handle_t *h) {
  dash_conn_t *c = h->data;
  dash_t *d = c->d;

  dash_conn_unref(c);
  d->handles--;
  dash_maybe_done(d);
}

void dash_conn_close(dash_conn_t *c) {
  conn_unlink(c);
  if (!uv_is_closing((uv_handle_t *)&c->timer))
    uv_close((uv_handle_t *)&c->timer, conn_closed);
  if (!uv_is_closing((uv_handle_t *)&c->tcp))
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

/* The request did not arrive in time: the connection goes. */
static void conn_timeout(uv_timer_t *t) {
  dash_conn_close(t->data);
}

static void on_written(uv_write_t *req, int status) {
  dash_write_t *w = (dash_write_t *)req;
  dash_conn_t *c = req->data;

  (void)status;
  free(w->buf);
  free(w);
  dash_conn_close(c);
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
 * be NULL) among its headers, and closes the connection after it. Only the
 * first response of a connection is sent. */
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
    dash_conn_close(c);
    return;
  }
  w->buf = b.p;
  w->req.data = c;
  buf = uv_buf_init(b.p, (unsigned)b.len);
  if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, on_written) != 0) {
    free(w->buf);
    free(w);
    dash_conn_close(c);
  }
}

void dash_respond(dash_conn_t *c, int code, const char *type, const void *body,
                  size_t len) {
  respond_ex(c, code, type, NULL, body, len);
}

/* A short plain-text answer: `text` and a newline. */
void dash_respond_text(dash_conn_t *c, int code, const char *extra,
                       const char *text) {
  char body[256];
  int n = snprintf(body, sizeof(body), "%s\n", text);

  respond_ex(c, code, "text/plain; charset=utf-8", extra, body,
             n > 0 && (size_t)n < sizeof(body) ? (size_t)n : 0);
}

void dash_respond_json(dash_conn_t *c, int code, const cli_json_t *j) {
  cli_buf_t b = {0};

  cli_json_write(&b, j);
  if (b.oom)
    dash_respond(c, 503, "text/plain", "out of memory", 13);
  else
    dash_respond(c, code, "application/json", b.p, b.len);
  cli_buf_free(&b);
}

void dash_maybe_done(dash_t *d) {
  if (d->stopping && d->handles == 0 && d->cli->inflight == 0)
    d->on_stopped(d);
}

static void dash_handle_closed(uv_handle_t *h) {
  dash_t *d = h->data;

  d->handles--;
  dash_maybe_done(d);
}

void dash_stop(dash_t *d, const char *who, uv_timer_t *sampler) {
  if (d->stopping)
    return;
  d->stopping = 1;
  fprintf(stderr, "fleet %s: stopping\n", who);
  uv_close((uv_handle_t *)&d->server, dash_handle_closed);
  if (sampler != NULL)
    uv_close((uv_handle_t *)sampler, dash_handle_closed);
  uv_close((uv_handle_t *)&d->sigint, dash_handle_closed);
  uv_close((uv_handle_t *)&d->sigterm, dash_handle_closed);
  while (d->conns != NULL)
    dash_conn_close(d->conns);
  /* Queries in flight end on their own; the last handle or query to end
   * finishes (see cli_finish's check of inflight). */
  dash_maybe_done(d);
}

/* The value of header `h` (NULL when it did not come). */
const char *dash_header(const dash_conn_t *c, int h, size_t *len) {
  *len = c->hv[h].len;
  return c->hn[h] > 0 ? (c->hv[h].p != NULL ? c->hv[h].p : "") : NULL;
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

/* The complete request's URL into its path and query string; -1 when it
 * is malformed or has no path. */
static int conn_split_url(dash_conn_t *c) {
  struct http_parser_url u;

  http_parser_url_init(&u);
  if (http_parser_parse_url(c->url, c->url_len, 0, &u) != 0 ||
      !(u.field_set & (1 << UF_PATH)))
    return -1;
  c->path = c->url + u.field_data[UF_PATH].off;
  c->path_len = u.field_data[UF_PATH].len;
  c->query = "";
  c->query_len = 0;
  if (u.field_set & (1 << UF_QUERY)) {
    c->query = c->url + u.field_data[UF_QUERY].off;
    c->query_len = u.field_data[UF_QUERY].len;
  }
  return 0;
}

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
    dash_conn_close(c);
    return;
  }
  if (n > 0 && !c->complete && !c->responded) {
    parsed =
        http_parser_execute(&c->parser, &dash_settings, buf->base, (size_t)n);
    if (c->complete) {
      uv_read_stop(s);
      uv_timer_stop(&c->timer);
      if (conn_split_url(c) != 0)
        dash_respond(c, 400, "text/plain", "bad url", 7);
      else
        c->d->on_request(c);
    } else if (parsed != (size_t)n || HTTP_PARSER_ERRNO(&c->parser) != HPE_OK) {
      uv_read_stop(s);
      if (c->body_len > DASH_BODY_MAX)
        dash_respond(c, 413, "text/plain", "body too large", 14);
      else
        dash_respond(c, 400, "text/plain", "bad request", 11);
    }
  }
  free(buf->base);
}

void dash_on_connection(uv_stream_t *server, int status) {
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
    dash_conn_close(c);
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
