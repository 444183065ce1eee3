/* http-queue.c -- fleet embedded in a small libuv HTTP server: POST /jobs
 * enqueues a job (the body is its payload), GET /jobs/<id> returns its
 * state, GET /metrics serves fleet_metrics_prometheus(), and a worker on
 * the same loop processes the jobs and logs each
 * completion callback.
 *
 *   http-queue [--url URL] [--prefix P] [--port N] [--queue Q]
 *              [--concurrency C] [--work-ms MS]
 *
 *   curl -d 'hello' 'http://127.0.0.1:8080/jobs?type=greet'
 *   curl http://127.0.0.1:8080/jobs/1
 *
 * One request per connection (the response closes it); requests are parsed
 * with http_parser. Stops on SIGINT or SIGTERM. */
#include <http_parser.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"

/* Largest request body and URL kept, in bytes. */
#define HQ_BODY_MAX (1024 * 1024)
#define HQ_URL_MAX 2048

typedef struct {
  uv_loop_t *loop;
  fleet_client_t client;
  fleet_queue_t queue;
  fleet_worker_t worker;
  uv_tcp_t server;
  uv_signal_t sigint, sigterm;
  uint64_t work_ms;
  int closing;
  int ready;
} hq_app_t;

/* One connection, alive while the socket is open or a fleet call made for
 * it is pending. */
typedef struct {
  uv_tcp_t tcp;
  hq_app_t *app;
  http_parser parser;
  char url[HQ_URL_MAX + 1];
  size_t url_len;
  char *body;
  size_t body_len;
  int refs; /* the socket, and a pending fleet call */
  int responded;
} hq_conn_t;

typedef struct {
  uv_write_t req;
  char *buf;
} hq_write_t;

static http_parser_settings hq_settings;

/* ------------------------------------------------------------------------ */
/* Connections                                                              */

static void hq_conn_unref(hq_conn_t *c) {
  if (--c->refs > 0)
    return;
  free(c->body);
  free(c);
}

static void hq_on_conn_closed(uv_handle_t *h) {
  hq_conn_unref(h->data);
}

static void hq_conn_close(hq_conn_t *c) {
  if (!uv_is_closing((uv_handle_t *)&c->tcp))
    uv_close((uv_handle_t *)&c->tcp, hq_on_conn_closed);
}

static void hq_on_written(uv_write_t *req, int status) {
  hq_write_t *w = (hq_write_t *)req;
  hq_conn_t *c = req->data;

  free(w->buf);
  free(w);
  hq_conn_close(c);
}

/* Sends a response with a JSON body and closes the connection. */
static void hq_respond(hq_conn_t *c, int code, const char *reason,
                       const char *json) {
  static const char fmt[] = "HTTP/1.1 %d %s\r\n"
                            "Content-Type: application/json\r\n"
                            "Content-Length: %zu\r\n"
                            "Connection: close\r\n\r\n%s";
  hq_write_t *w;
  uv_buf_t buf;
  int n;

  if (c->responded || uv_is_closing((uv_handle_t *)&c->tcp))
    return;
  c->responded = 1;
  n = snprintf(NULL, 0, fmt, code, reason, strlen(json), json);
  w = malloc(sizeof(*w));
  if (w == NULL || (w->buf = malloc((size_t)n + 1)) == NULL) {
    free(w);
    hq_conn_close(c);
    return;
  }
  snprintf(w->buf, (size_t)n + 1, fmt, code, reason, strlen(json), json);
  buf = uv_buf_init(w->buf, (unsigned)n);
  w->req.data = c;
  if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, hq_on_written) != 0) {
    free(w->buf);
    free(w);
    hq_conn_close(c);
  }
}

/* GET /metrics: the client's handles in the Prometheus text format
 * (fleet_metrics_prometheus()), then close. (issue 16, metrics) */
static void hq_respond_metrics(hq_conn_t *c) {
  static const char fmt[] = "HTTP/1.1 200 OK\r\n"
                            "Content-Type: text/plain; version=0.0.4\r\n"
                            "Content-Length: %zu\r\n"
                            "Connection: close\r\n\r\n";
  char *text = NULL;
  size_t len = 0, head;
  hq_write_t *w;
  uv_buf_t buf;

  if (c->responded || uv_is_closing((uv_handle_t *)&c->tcp))
    return;
  if (fleet_metrics_prometheus(&c->app->client, &text, &len) != 0) {
    hq_respond(c, 503, "Service Unavailable", "{\"error\":\"metrics\"}");
    return;
  }
  c->responded = 1;
  head = (size_t)snprintf(NULL, 0, fmt, len);
  w = malloc(sizeof(*w));
  if (w == NULL || (w->buf = malloc(head + len + 1)) == NULL) {
    free(w);
    fleet_metrics_free(text);
    hq_conn_close(c);
    return;
  }
  snprintf(w->buf, head + 1, fmt, len);
  memcpy(w->buf + head, text, len);
  fleet_metrics_free(text);
  buf = uv_buf_init(w->buf, (unsigned)(head + len));
  w->req.data = c;
  if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, hq_on_written) != 0) {
    free(w->buf);
    free(w);
    hq_conn_close(c);
  }
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

  if (status != 0 || r[0].status != 0) {
    snprintf(json, sizeof(json), "{\"error\":\"%s\"}",
             fleet_err_name(status != 0 ? status : r[0].status));
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

/* Routes a complete request. */
static void hq_route(hq_conn_t *c) {
  struct http_parser_url u;
  char type[FLEET_JOB_TYPE_MAX + 1] = "http", id[FLEET_JOB_ID_MAX + 1];
  const char *path, *query = NULL;
  size_t path_len, query_len = 0;
  fleet_job_spec_t spec;
  int err = FLEET_EINVAL;

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
  if (c->parser.method == HTTP_GET && path_len == 8 &&
      memcmp(path, "/metrics", 8) == 0) {
    hq_respond_metrics(c);
    return;
  }
  c->refs++; /* for the fleet call */
  if (c->parser.method == HTTP_POST && path_len == 5 &&
      memcmp(path, "/jobs", 5) == 0) {
    if (query != NULL && query_len > 5 && query_len - 5 <= FLEET_JOB_TYPE_MAX &&
        memcmp(query, "type=", 5) == 0) {
      memcpy(type, query + 5, query_len - 5);
      type[query_len - 5] = '\0';
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
    c->refs--;
    hq_respond(c, 404, "Not Found", "{\"error\":\"no such route\"}");
    return;
  }
  if (err != 0) {
    char json[64];
    c->refs--;
    snprintf(json, sizeof(json), "{\"error\":\"%s\"}", fleet_err_name(err));
    hq_respond(c, 400, "Bad Request", json);
  }
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                  */

static int hq_on_url(http_parser *p, const char *at, size_t len) {
  hq_conn_t *c = p->data;
  if (c->url_len + len > HQ_URL_MAX)
    return 1;
  memcpy(c->url + c->url_len, at, len);
  c->url_len += len;
  c->url[c->url_len] = '\0';
  return 0;
}

static int hq_on_body(http_parser *p, const char *at, size_t len) {
  hq_conn_t *c = p->data;
  char *b;

  if (c->body_len + len > HQ_BODY_MAX)
    return 1;
  b = realloc(c->body, c->body_len + len + 1);
  if (b == NULL)
    return 1;
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

  if (nread > 0 && !c->responded) {
    used =
        http_parser_execute(&c->parser, &hq_settings, buf->base, (size_t)nread);
    if (c->parser.http_errno != HPE_OK &&
        c->parser.http_errno != HPE_CB_message_complete) {
      hq_respond(c, 400, "Bad Request", "{\"error\":\"bad request\"}");
    } else if (used < (size_t)nread && !c->responded &&
               c->parser.http_errno == HPE_OK) {
      hq_respond(c, 400, "Bad Request", "{\"error\":\"bad request\"}");
    }
  } else if (nread < 0) {
    hq_conn_close(c);
  }
  free(buf->base);
}

static void hq_on_connection(uv_stream_t *server, int status) {
  hq_app_t *app = server->data;
  hq_conn_t *c;

  if (status != 0 || (c = calloc(1, sizeof(*c))) == NULL)
    return;
  c->app = app;
  c->refs = 1;
  uv_tcp_init(app->loop, &c->tcp);
  c->tcp.data = c;
  if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
    hq_conn_close(c);
    return;
  }
  http_parser_init(&c->parser, HTTP_REQUEST);
  c->parser.data = c;
  uv_read_start((uv_stream_t *)&c->tcp, hq_on_alloc, hq_on_read);
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

  printf("job %s (%s, %zu bytes): started, attempt %u\n", job->id, job->type,
         job->payload.len, (unsigned)job->attempts);
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
  printf("job %s: %s %s\n", job->id,
         action == FLEET_JOB_COMPLETE ? "completed"
         : action == FLEET_JOB_FAIL   ? "failed"
                                      : "released",
         status == 0 ? "(accepted)" : fleet_err_name(status));
  fflush(stdout);
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

static void hq_shutdown(hq_app_t *app) {
  if (app->closing++)
    return;
  uv_close((uv_handle_t *)&app->server, NULL);
  uv_close((uv_handle_t *)&app->sigint, NULL);
  uv_close((uv_handle_t *)&app->sigterm, NULL);
  if (fleet_worker_stop(&app->worker, 5000, hq_on_stopped, NULL) != 0)
    fleet_worker_close(&app->worker, hq_on_worker_closed);
}

static void hq_on_signal(uv_signal_t *s, int signum) {
  hq_shutdown(s->data);
}

static void hq_on_state(fleet_client_t *client, fleet_client_state_t state,
                        int status) {
  hq_app_t *app = client->data;
  if (state == FLEET_CLIENT_READY)
    app->ready = 1;
  if (state == FLEET_CLIENT_RECONNECTING && !app->ready) {
    fprintf(stderr, "http-queue: cannot reach the backend: %s: %s\n",
            fleet_strerror(status), fleet_client_last_error(client));
    hq_shutdown(app);
  }
}

static int hq_usage(void) {
  fprintf(stderr, "usage: http-queue [--url URL] [--prefix P] [--port N] "
                  "[--queue Q] [--concurrency C] [--work-ms MS]\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *url = "memory://", *prefix = "fleet", *queue = "http";
  long port = 8080, concurrency = 4, work_ms = 100;
  fleet_client_options_t co;
  fleet_worker_options_t wo;
  struct sockaddr_in addr;
  hq_app_t app;
  int i, err;

  for (i = 1; i < argc; i++) {
    if (i + 1 >= argc)
      return hq_usage();
    if (strcmp(argv[i], "--url") == 0)
      url = argv[++i];
    else if (strcmp(argv[i], "--prefix") == 0)
      prefix = argv[++i];
    else if (strcmp(argv[i], "--queue") == 0)
      queue = argv[++i];
    else if (strcmp(argv[i], "--port") == 0)
      port = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--concurrency") == 0)
      concurrency = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--work-ms") == 0)
      work_ms = strtol(argv[++i], NULL, 10);
    else
      return hq_usage();
  }
  if (port < 1 || port > 65535 || concurrency < 1 || concurrency > 10000 ||
      work_ms < 0)
    return hq_usage();

  memset(&app, 0, sizeof(app));
  app.loop = uv_default_loop();
  app.work_ms = (uint64_t)work_ms;
  http_parser_settings_init(&hq_settings);
  hq_settings.on_url = hq_on_url;
  hq_settings.on_body = hq_on_body;
  hq_settings.on_message_complete = hq_on_message_complete;

  fleet_client_options_init(&co);
  co.prefix = prefix;
  co.state_cb = hq_on_state;
  app.client.data = &app;
  if ((err = fleet_client_init(app.loop, &app.client, url, &co)) != 0) {
    fprintf(stderr, "http-queue: %s: %s\n", url, fleet_strerror(err));
    return 1;
  }
  fleet_worker_options_init(&wo);
  wo.concurrency = (uint32_t)concurrency;
  wo.handler = hq_handler;
  wo.done_cb = hq_done;
  app.queue.data = app.worker.data = &app;
  if ((err = fleet_queue_init(&app.client, &app.queue, queue, NULL)) != 0 ||
      (err = fleet_worker_init(&app.client, &app.worker, queue, &wo)) != 0 ||
      (err = fleet_worker_start(&app.worker)) != 0) {
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
    fprintf(stderr, "http-queue: port %ld: %s\n", port, uv_strerror(err));
    return 1;
  }
  uv_signal_init(app.loop, &app.sigint);
  uv_signal_init(app.loop, &app.sigterm);
  app.sigint.data = app.sigterm.data = &app;
  uv_signal_start(&app.sigint, hq_on_signal, SIGINT);
  uv_signal_start(&app.sigterm, hq_on_signal, SIGTERM);
  printf("http-queue: listening on http://127.0.0.1:%ld (queue %s on %s)\n",
         port, queue, url);
  fflush(stdout);
  uv_run(app.loop, UV_RUN_DEFAULT);
  uv_loop_close(app.loop);
  return app.ready ? 0 : 1;
}
