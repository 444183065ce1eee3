/* dash_routes.c -- the dashboard's router: who is answered (Host, token,
 * the checks of a change; dash_access.c holds the rules), the API route
 * table, its calls and the HTTP code of each fleet error, the page and
 * the embedded assets. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "dash_int.h"

/* ------------------------------------------------------------------------ */
/* The API                                                                  */

/* A fleet error as JSON {error, detail}, with the HTTP code it maps to. */
static void api_error(dash_conn_t *c, int status, const char *detail) {
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
    dash_respond(c, code, "text/plain", "error", 5);
  else
    dash_respond_json(c, code, o);
  cli_jfree(o);
}

/* A query's end, for an API request. */
static void api_done(cli_t *cli, int status, const char *detail,
                     cli_json_t *res, void *arg) {
  dash_conn_t *c = arg;
  dash_t *d = c->d;

  (void)cli;
  if (status != 0)
    api_error(c, status, detail);
  else
    dash_respond_json(c, 200, res);
  cli_jfree(res);
  dash_conn_unref(c);
  dash_maybe_done(d);
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
        char ch = q[i], hex[3];

        if (o + 1 >= cap)
          return NULL;
        if (ch == '+') {
          ch = ' ';
        } else if (ch == '%') {
          if (i + 2 >= end || !isxdigit((unsigned char)q[i + 1]) ||
              !isxdigit((unsigned char)q[i + 2]))
            return NULL;
          memcpy(hex, q + i + 1, 2);
          hex[2] = '\0';
          ch = (char)strtol(hex, NULL, 16);
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

typedef struct dash_route_s dash_route_t;

/* The call that starts the query of route `r`: 0 when started
 * (api_done() answers), else an error answered at once. `q` is the query
 * string (`qlen` bytes), `queue` its ?queue=Q when the route needs one. */
typedef int (*dash_api_fn)(dash_conn_t *c, const dash_route_t *r, const char *q,
                           size_t qlen, const char *queue);

/* A call on one job of a queue (cli_q_queue_get, cli_q_queue_cancel). */
typedef int (*dash_job_fn)(cli_t *cli, const char *queue, const char *id,
                           cli_done_fn done, void *arg);

/* One API route: its path, whether it is a change (POST) or a read
 * (GET), whether it needs ?queue=Q, the call that starts its query, and
 * what that call uses: the listing of api_list(), the call on ?id=ID of
 * api_job(), the action of api_pause(). */
struct dash_route_s {
  const char *path;
  int post;
  int queue;
  dash_api_fn fn;
  cli_list_fn list;
  dash_job_fn job;
  const char *action;
};

static int api_overview(dash_conn_t *c, const dash_route_t *r, const char *q,
                        size_t qlen, const char *queue) {
  (void)r, (void)q, (void)qlen, (void)queue;
  dash_overview(c, 0);
  return 0;
}

/* Every object of a kind. */
static int api_list(dash_conn_t *c, const dash_route_t *r, const char *q,
                    size_t qlen, const char *queue) {
  (void)q, (void)qlen, (void)queue;
  return r->list(c->d->cli, api_done, c);
}

static int api_locks(dash_conn_t *c, const dash_route_t *r, const char *q,
                     size_t qlen, const char *queue) {
  char match[1024];

  (void)r, (void)queue;
  return cli_q_lock_ls(
      c->d->cli,
      query_param(q, qlen, "match", match, sizeof(match)) != NULL ? match : "*",
      api_done, c);
}

static int api_cron_history(dash_conn_t *c, const dash_route_t *r,
                            const char *q, size_t qlen, const char *queue) {
  char ns[256], key[1024], num[32];
  uint64_t limit = DASH_CRON_HISTORY_LIMIT;

  (void)r, (void)queue;
  if (query_param(q, qlen, "ns", ns, sizeof(ns)) == NULL ||
      query_param(q, qlen, "key", key, sizeof(key)) == NULL ||
      (query_param(q, qlen, "limit", num, sizeof(num)) != NULL &&
       cli_parse_u64(num, 1, 1000, &limit) != 0))
    return FLEET_EINVAL;
  return cli_q_cron_history(c->d->cli, ns, key, (uint32_t)limit, api_done, c);
}

static int api_jobs(dash_conn_t *c, const dash_route_t *r, const char *q,
                    size_t qlen, const char *queue) {
  char state_s[32], num[32];
  fleet_job_state_t state;
  uint64_t cursor = 0, limit = DASH_JOBS_LIMIT;

  (void)r;
  if (query_param(q, qlen, "state", state_s, sizeof(state_s)) == NULL ||
      cli_job_state(state_s, &state) != 0 ||
      (query_param(q, qlen, "cursor", num, sizeof(num)) != NULL &&
       cli_parse_u64(num, 0, CLI_CURSOR_MAX, &cursor) != 0) ||
      (query_param(q, qlen, "limit", num, sizeof(num)) != NULL &&
       cli_parse_u64(num, 1, 1000, &limit) != 0))
    return FLEET_EINVAL;
  return cli_q_queue_jobs(c->d->cli, queue, state, NULL, cursor, (size_t)limit,
                          api_done, c);
}

/* A queue's counts, limits, flow state and top groups. */
static int api_queue(dash_conn_t *c, const dash_route_t *r, const char *q,
                     size_t qlen, const char *queue) {
  (void)r, (void)q, (void)qlen;
  return cli_q_queue_info(c->d->cli, queue, DASH_GROUPS_READ, DASH_GROUPS_TOP,
                          api_done, c);
}

/* A call on one job: ?id=ID is required. */
static int api_job(dash_conn_t *c, const dash_route_t *r, const char *q,
                   size_t qlen, const char *queue) {
  char id[1024];

  if (query_param(q, qlen, "id", id, sizeof(id)) == NULL)
    return FLEET_EINVAL;
  return r->job(c->d->cli, queue, id, api_done, c);
}

static int api_retry(dash_conn_t *c, const dash_route_t *r, const char *q,
                     size_t qlen, const char *queue) {
  char id[1024];

  (void)r;
  return cli_q_queue_retry(
      c->d->cli, queue,
      query_param(q, qlen, "id", id, sizeof(id)) != NULL ? id : NULL, api_done,
      c);
}

/* Deletes a queue's kept dead or completed records (?state=). */
static int api_purge(dash_conn_t *c, const dash_route_t *r, const char *q,
                     size_t qlen, const char *queue) {
  char state_s[32];
  fleet_job_state_t state;

  (void)r;
  if (query_param(q, qlen, "state", state_s, sizeof(state_s)) == NULL ||
      cli_job_state(state_s, &state) != 0 ||
      (state != FLEET_JOB_DEAD && state != FLEET_JOB_COMPLETED))
    return FLEET_EINVAL;
  return cli_q_queue_purge(c->d->cli, queue, state, api_done, c);
}

static int api_pause(dash_conn_t *c, const dash_route_t *r, const char *q,
                     size_t qlen, const char *queue) {
  (void)q, (void)qlen;
  return cli_q_queue_pause(c->d->cli, queue, r->action, api_done, c);
}

static int api_history(dash_conn_t *c, const dash_route_t *r, const char *q,
                       size_t qlen, const char *queue) {
  (void)r;
  return dash_history(c, q, qlen, queue, api_done);
}

static int api_routes(dash_conn_t *c, const dash_route_t *r, const char *q,
                      size_t qlen, const char *queue);

/* Every API route. A change is a POST: route() refuses it in read-only
 * mode and checks its header and Origin before it gets here. */
static const dash_route_t dash_routes[] = {
    {"/api/overview", .fn = api_overview},
    {"/api/queues", .fn = api_list, .list = cli_q_queue_ls},
    {"/api/queue", .queue = 1, .fn = api_queue},
    {"/api/jobs", .queue = 1, .fn = api_jobs},
    {"/api/job", .queue = 1, .fn = api_job, .job = cli_q_queue_get},
    {"/api/locks", .fn = api_locks},
    {"/api/pools", .fn = api_list, .list = cli_q_pool_ls},
    {"/api/crons", .fn = api_list, .list = cli_q_cron_ls_all},
    {"/api/cron-history", .fn = api_cron_history},
    {"/api/warmpools", .fn = api_list, .list = cli_q_warmpool_ls},
    {"/api/history", .queue = 1, .fn = api_history},
    {"/api/workers", .fn = api_list, .list = cli_q_worker_ls_all},
    {"/api/routes", .fn = api_routes},
    {"/api/retry", .post = 1, .queue = 1, .fn = api_retry},
    {"/api/cancel", .post = 1, .queue = 1, .fn = api_job,
     .job = cli_q_queue_cancel},
    {"/api/purge", .post = 1, .queue = 1, .fn = api_purge},
    {"/api/job/delete", .post = 1, .queue = 1, .fn = api_job,
     .job = dash_job_delete},
    {"/api/job/run", .post = 1, .queue = 1, .fn = api_job, .job = dash_job_run},
    {"/api/job/kill", .post = 1, .queue = 1, .fn = api_job,
     .job = dash_job_kill},
    {"/api/pause", .post = 1, .queue = 1, .fn = api_pause, .action = "pause"},
    {"/api/resume", .post = 1, .queue = 1, .fn = api_pause, .action = "resume"},
    {NULL}};

static int api_routes(dash_conn_t *c, const dash_route_t *r, const char *q,
                      size_t qlen, const char *queue) {
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

/* ------------------------------------------------------------------------ */
/* A partitioned queue                                                      */

/* A route that names a queue runs on a handle of every partition of it
 * (cli_qctx_open() opens one of the count cli_queue_parts() knows): the
 * count is read first (cli_q_queue_parts()) unless it was read less than
 * DASH_PARTS_MAX_AGE_MS ago, so that a queue made partitioned while the
 * dashboard runs is one queue on the next refresh after that. */
#define DASH_PARTS_MAX_AGE_MS 5000

/* Starts the query of the route of `c` (c->route). */
static void route_run(dash_conn_t *c) {
  const dash_route_t *r = c->route;
  char queue[1024] = "";
  int err;

  if (r->queue)
    query_param(c->query, c->query_len, "queue", queue, sizeof(queue));
  c->refs++; /* for the query */
  if ((err = r->fn(c, r, c->query, c->query_len, queue)) != 0) {
    c->refs--;
    api_error(c, err, NULL);
  }
}

/* The count was read, and is kept; or not: when the backend did not
 * answer, the route answers so at once (its own query would wait as
 * long again); after another failure (a count fleet cannot read) the
 * route runs with the count known before (none: the queue's partition 0
 * alone), and its own query says what the backend answers. */
static void route_parts_read(cli_t *cli, int status, const char *detail,
                             cli_json_t *res, void *arg) {
  dash_conn_t *c = arg;
  dash_t *d = c->d;
  const cli_json_t *q = cli_jget(res, "queue"),
                   *n = cli_jget(res, "partitions");

  if (status == 0 && q != NULL && q->type == CLI_JSTR && n != NULL &&
      n->type == CLI_JINT)
    cli_queue_parts_keep(cli, q->str, (uint32_t)n->num);
  cli_jfree(res);
  if (!d->stopping && (status == FLEET_EUNAVAILABLE ||
                       status == FLEET_ETIMEDOUT || status == FLEET_ECONNLOST))
    api_error(c, status, detail);
  else if (!d->stopping)
    route_run(c);
  dash_conn_unref(c);
  dash_maybe_done(d);
}

/* Runs route `r` of `c` for ?queue=`queue` (NULL when it names none),
 * once the queue's partition count is known. */
static void route_start(dash_conn_t *c, const dash_route_t *r,
                        const char *queue) {
  c->route = r;
  if (queue != NULL &&
      cli_queue_parts_age(c->d->cli, queue) >= DASH_PARTS_MAX_AGE_MS) {
    c->refs++; /* for the read */
    if (cli_q_queue_parts(c->d->cli, queue, route_parts_read, c) == 0)
      return;
    c->refs--;
  }
  route_run(c);
}

/* ------------------------------------------------------------------------ */
/* Access and routing                                                       */

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
    dash_respond_text(c, 431, NULL, "a header is too long");
    return 0;
  }
  /* Host: the name the browser thinks it talks to. */
  v = dash_header(c, DASH_H_HOST, &len);
  if (c->hn[DASH_H_HOST] > 1 ||
      (v == NULL && (c->parser.http_major > 1 || c->parser.http_minor > 0))) {
    dash_respond_text(c, 400, NULL, "one Host header is required");
    return 0;
  }
  if (v != NULL && !dash_host_allowed(a, v, len)) {
    dash_respond_text(c, 421, NULL,
                      "this dashboard does not answer for this host name "
                      "(see fleet dash --allow-host)");
    return 0;
  }
  /* The token: a bearer header, the cookie, or the page's ?token=. */
  if (a->token_len > 0) {
    if (page && query_param(q, qlen, "token", token, sizeof(token)) != NULL) {
      if (!dash_token_equal(a, token, strlen(token))) {
        dash_respond_text(c, 401, need_token, "wrong token");
        return 0;
      }
      snprintf(extra, sizeof(extra),
               "Location: /\r\nSet-Cookie: %s=%s; HttpOnly; SameSite=Strict; "
               "Path=/\r\n",
               a->cookie, a->token);
      dash_respond_text(c, 303, extra, "logged in: see /");
      return 0;
    }
    v = dash_header(c, DASH_H_AUTH, &len);
    if (v == NULL || c->hn[DASH_H_AUTH] > 1 || !dash_bearer_ok(a, v, len)) {
      v = dash_header(c, DASH_H_COOKIE, &len);
      if (v == NULL || !dash_cookie_ok(a, v, len)) {
        dash_respond_text(
            c, 401, need_token,
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
      dash_respond_text(c, 403, NULL,
                        "read-only dashboard: nothing is changed");
      return 0;
    }
    v = dash_header(c, DASH_H_DASH, &len);
    if (v == NULL || len != 1 || v[0] != '1') {
      dash_respond_text(c, 403, NULL, "missing X-Fleet-Dash header");
      return 0;
    }
    v = dash_header(c, DASH_H_ORIGIN, &len);
    if (v != NULL &&
        (c->hn[DASH_H_ORIGIN] > 1 || !dash_origin_allowed(a, v, len))) {
      dash_respond_text(c, 403, NULL, "cross-origin request refused");
      return 0;
    }
  }
  return 1;
}

void dash_route(dash_conn_t *c) {
  const char *path = c->path, *q = c->query;
  size_t plen = c->path_len, qlen = c->query_len;
  char queue[1024];
  int get = c->parser.method == HTTP_GET, page;
  const dash_route_t *r;
  const cli_asset_t *a;

#define PATH_IS(s) (plen == sizeof(s) - 1 && memcmp(path, s, plen) == 0)
  page = PATH_IS("/") || PATH_IS("/index.html");
#undef PATH_IS
  if (!access_check(c, get && page, q, qlen))
    return;
  if (get && plen == 8 && memcmp(path, "/metrics", 8) == 0) {
    c->refs++; /* for the query */
    dash_metrics(c);
    return;
  }
  if (c->d->metrics_only) {
    dash_respond(c, 404, "text/plain", "not found", 9);
    return;
  }
  if (plen > 5 && memcmp(path, "/api/", 5) == 0) {
    for (r = dash_routes; r->path != NULL; r++)
      if (strlen(r->path) == plen && memcmp(r->path, path, plen) == 0)
        break;
    if (r->path == NULL) {
      static const char nf[] = "{\"error\":\"not found\","
                               "\"detail\":\"no such route (see "
                               "/api/routes)\"}";
      dash_respond(c, 404, "application/json", nf, sizeof(nf) - 1);
      return;
    }
    if (r->post ? c->parser.method != HTTP_POST : !get) {
      dash_respond(c, 405, "text/plain", "method not allowed", 18);
      return;
    }
    if (r->queue &&
        query_param(q, qlen, "queue", queue, sizeof(queue)) == NULL) {
      api_error(c, FLEET_EINVAL, "the queue parameter is required");
      return;
    }
    route_start(c, r, r->queue ? queue : NULL);
    return;
  }
  if (!get) {
    dash_respond(c, 405, "text/plain", "method not allowed", 18);
    return;
  }
  if (page) {
    c->refs++; /* for the overview */
    dash_overview(c, 1);
    return;
  }
  a = cli_asset_find(path, plen);
  if (a == NULL)
    dash_respond(c, 404, "text/plain", "not found", 9);
  else
    dash_respond(c, 200, a->type, a->data, a->len);
}
