/* test_dash_access.c -- who `fleet dash` answers, against a real
 * redis-server holding a queue "mail" (one dead job, two pending ones):
 * the Host names (DNS rebinding), the Origin of a change, the headers that
 * forbid framing and sniffing on every response, --read-only (every change
 * route refused, the routes read from the server's own table), the token
 * (bearer header, the cookie that /?token= sets), the warning when the
 * dashboard listens beyond loopback without a token; and in headless
 * Chromium: the read-only page has no control that changes anything, a
 * page of another origin cannot frame the dashboard, and the token's
 * cookie lets the page in. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "redis_fixture.h"
#include "test.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

#define DA_TOKEN "0123456789abcdef0123456789abcdef"
#define DA_PAYLOAD "secret-payload"
#define DA_ROUTES_MAX 64
#define DA_STARTS(p, lit) (strncmp((p), (lit), sizeof(lit) - 1) == 0)

typedef struct {
  fleet_test_redis_t *redis;
  char url[256];
  qt_t mail;
  char dead[FLEET_JOB_ID_MAX + 1];
  char pending[FLEET_JOB_ID_MAX + 1];
  pid_t pid;
  int port;
  char ready[1024]; /* the dashboard's first line */
} da_env_t;

/* A redis-server with queue "mail" (prefix "qt"): one dead job and two
 * pending ones, each with DA_PAYLOAD as data. */
static void da_setup(da_env_t *e) {
  char id[FLEET_JOB_ID_MAX + 1];
  fleet_job_spec_t s;
  fleet_claim_t c;
  qt_job_t job;
  int st;

  memset(e, 0, sizeof(*e));
  e->redis = fleet_test_redis_start_or_skip(NULL);
  snprintf(e->url, sizeof(e->url), "redis://127.0.0.1:%d",
           fleet_test_redis_port(e->redis));
  qt_open(&e->mail, e->url, "mail", NULL);
  fleet_job_spec_init(&s, "send", DA_PAYLOAD, strlen(DA_PAYLOAD));
  s.max_attempts = 1;
  ASSERT_OK(qt_enqueue(&e->mail, &s, 1, &st, NULL));
  ASSERT_EQ(1, qt_claim(&e->mail, 1, 60000, &job));
  c = qt_claim_of(&job);
  ASSERT_OK(qt_fail(&e->mail, &c, "boom"));
  strcpy(e->dead, job.id);
  qt_add(&e->mail, "send", DA_PAYLOAD, e->pending);
  qt_add(&e->mail, "send", DA_PAYLOAD, id);
}

static void da_teardown(da_env_t *e) {
  qt_close(&e->mail);
  fleet_test_redis_stop(e->redis);
}

/* Starts the dashboard on `listen` with `extra` dash options (NULL
 * ended), FLEET_DASH_TOKEN set to `token` when not NULL; waits for its
 * first line and reads the port from it. */
static void da_start(da_env_t *e, const char *listen, const char *token,
                     const char *const *extra) {
  const char *args[32];
  const char *p, *colon;
  uint64_t t0;
  size_t n = 0;

  args[n++] = "--url";
  args[n++] = e->url;
  args[n++] = "--prefix";
  args[n++] = "qt";
  args[n++] = "dash";
  args[n++] = "--listen";
  args[n++] = listen;
  args[n++] = "--read-timeout-ms";
  args[n++] = "2000";
  while (extra != NULL && *extra != NULL && n < 31)
    args[n++] = *extra++;
  args[n] = NULL;
  if (token != NULL)
    ASSERT_OK(setenv("FLEET_DASH_TOKEN", token, 1));
  e->pid = cli_spawn(args, "dash");
  unsetenv("FLEET_DASH_TOKEN");
  t0 = uv_hrtime();
  do {
    usleep(20000);
    cli_read_out("dash", e->ready, sizeof(e->ready));
  } while (strchr(e->ready, '\n') == NULL &&
           uv_hrtime() - t0 < fleet_test_ms(5000) * 1000000ULL);
  p = strstr(e->ready, "/ (");
  ASSERT_NOT_NULL(strstr(e->ready, "fleet dash: http://"));
  ASSERT_NOT_NULL(p);
  for (colon = p; colon > e->ready && *colon != ':'; colon--)
    ;
  e->port = atoi(colon + 1);
  ASSERT(e->port > 0);
}

/* Stops the dashboard (SIGINT): it exits 0; its output into `r`. */
static void da_stop(da_env_t *e, cli_run_t *r) {
  ASSERT_OK(kill(e->pid, SIGINT));
  cli_reap(e->pid, "dash", r);
  ASSERT_EQ(0, r->status);
}

/* Sends `req` as is to the dashboard; the whole response into `resp`.
 * Returns its status code. */
static int da_raw(int port, const char *req, char *resp, size_t cap) {
  struct sockaddr_in a;
  size_t got = 0, len = strlen(req);
  ssize_t n;
  int fd = socket(AF_INET, SOCK_STREAM, 0), code = 0;

  ASSERT_GE(fd, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_OK(connect(fd, (struct sockaddr *)&a, sizeof(a)));
  ASSERT_EQ((ssize_t)len, write(fd, req, len));
  while (got + 1 < cap && (n = read(fd, resp + got, cap - 1 - got)) > 0)
    got += (size_t)n;
  resp[got] = '\0';
  close(fd);
  sscanf(resp, "HTTP/1.1 %d", &code);
  return code;
}

/* Sends `req` a byte at a time (1 ms apart, no coalescing); the response
 * into `resp`. Returns its status code. */
static int da_slow(int port, const char *req, char *resp, size_t cap) {
  struct sockaddr_in a;
  size_t got = 0, i;
  ssize_t n;
  int fd = socket(AF_INET, SOCK_STREAM, 0), code = 0, one = 1;

  ASSERT_GE(fd, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_OK(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
  ASSERT_OK(connect(fd, (struct sockaddr *)&a, sizeof(a)));
  for (i = 0; req[i] != '\0'; i++) {
    ASSERT_EQ(1, write(fd, req + i, 1));
    usleep(1000);
  }
  while (got + 1 < cap && (n = read(fd, resp + got, cap - 1 - got)) > 0)
    got += (size_t)n;
  resp[got] = '\0';
  close(fd);
  sscanf(resp, "HTTP/1.1 %d", &code);
  return code;
}

/* `method` `path` HTTP/1.1 with `headers` (each ended by CRLF: Host
 * included, or not). */
static int da_http(int port, const char *method, const char *path,
                   const char *headers, char *resp, size_t cap) {
  char req[16384];

  snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\n%sContent-Length: 0\r\n\r\n",
           method, path, headers);
  return da_raw(port, req, resp, cap);
}

/* The head of a response holds `line` (CRLF ended). */
static int da_has_header(const char *resp, const char *line) {
  const char *end = strstr(resp, "\r\n\r\n");
  const char *p = strstr(resp, line);

  return end != NULL && p != NULL && p < end;
}

/* A response forbids framing and sniffing, and has the page's policy. */
static void da_guarded(const char *resp) {
  ASSERT(da_has_header(resp, "\r\nX-Frame-Options: DENY\r\n"));
  ASSERT(da_has_header(resp, "\r\nX-Content-Type-Options: nosniff\r\n"));
  ASSERT(da_has_header(resp, "\r\nContent-Security-Policy: default-src "
                             "'self'; script-src 'self'; style-src 'self';"));
  ASSERT(da_has_header(resp, " frame-ancestors 'none'\r\n"));
  ASSERT(da_has_header(resp, "\r\nReferrer-Policy: no-referrer\r\n"));
}

/* The routes of the server's table (GET /api/routes, `auth` added to the
 * request): paths into `paths`, 1 in `post` for a change. Returns how
 * many. */
static int da_routes(int port, const char *auth, char paths[][64], int *post) {
  static char resp[65536];
  char headers[512];
  const char *p;
  int n = 0;

  snprintf(headers, sizeof(headers), "Host: 127.0.0.1\r\n%s", auth);
  ASSERT_EQ(200,
            da_http(port, "GET", "/api/routes", headers, resp, sizeof(resp)));
  for (p = strstr(resp, "{\"method\":\""); p != NULL && n < DA_ROUTES_MAX;
       p = strstr(p + 1, "{\"method\":\"")) {
    const char *path = strstr(p, "\"path\":\"");
    size_t len;

    ASSERT_NOT_NULL(path);
    path += 8;
    len = strcspn(path, "\"");
    ASSERT(len < 64);
    memcpy(paths[n], path, len);
    paths[n][len] = '\0';
    post[n] = strncmp(p + 11, "POST\"", 5) == 0;
    ASSERT(post[n] || strncmp(p + 11, "GET\"", 4) == 0);
    n++;
  }
  return n;
}

/* Whether queue "mail" is paused, as the dashboard says. */
static int da_paused(int port, const char *auth) {
  static char resp[65536];
  char headers[512];

  snprintf(headers, sizeof(headers), "Host: 127.0.0.1\r\n%s", auth);
  ASSERT_EQ(200,
            da_http(port, "GET", "/api/queues", headers, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "{\"queue\":\"mail\","));
  return strstr(resp, "\"paused\":true") != NULL;
}

/* Nothing changed: the dead job is dead, the pending one pending, the
 * queue active. */
static void da_unchanged(da_env_t *e, const char *auth) {
  fleet_job_info_t info;

  ASSERT_OK(qt_get(&e->mail, e->dead, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_DEAD, info.state);
  ASSERT_OK(qt_get(&e->mail, e->pending, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(FLEET_JOB_PENDING, info.state);
  ASSERT_EQ(0, da_paused(e->port, auth));
}

/* ------------------------------------------------------------------------ */
/* Host                                                                     */

TEST_IMPL(dash_host) {
  static const char *const allow[] = {"--allow-host", "dash.example",
                                      "--allow-host=Proxy.Example:8443", NULL};
  static const char *const bad[] = {"a b",  "x:", "x:99999",          "x:0",
                                    "[zz]", "",   "e\xc3\xa9.example"};
  static char resp[65536];
  char h[1024], path[FLEET_JOB_ID_MAX + 128];
  cli_run_t r;
  da_env_t e;
  size_t i;

  cli_required();
  da_setup(&e);
  da_start(&e, "127.0.0.1:0", NULL, allow);
  /* The loopback names and the listen address, with the port or none,
   * in any case; the allowed names. */
  {
    const char *const ok[] = {
        "127.0.0.1",         "127.0.0.1:%d",    "localhost",
        "LocalHost:%d",      "[::1]",           "[::1]:%d",
        "dash.example",      "dash.example:%d", "DASH.example:1234",
        "proxy.example:8443"};

    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
      char host[128];

      snprintf(host, sizeof(host), ok[i], e.port);
      snprintf(h, sizeof(h), "Host: %s\r\n", host);
      ASSERT_EQ(200, da_http(e.port, "GET", "/api/jobs?queue=mail&state=dead",
                             h, resp, sizeof(resp)));
      ASSERT_NOT_NULL(strstr(resp, DA_PAYLOAD));
    }
  }
  /* Another name (a rebound one, with the dashboard's port), another
   * port, an allowed name on a port not allowed, junk: 421, with a short
   * plain body, on the API, the page and its assets alike. */
  {
    const char *const no[] = {"evil.example",
                              "evil.example:%d",
                              "127.0.0.1:1",
                              "localhost:%d0",
                              "proxy.example",
                              "proxy.example:%d",
                              "127.0.0.1.evil.example:%d",
                              "127.0.0.1:",
                              "127.0.0.1:%d:1",
                              "[::1",
                              "::1",
                              "a b",
                              "localhost.:%d",
                              "[::2]:%d"};
    const char *const paths[] = {"/api/jobs?queue=mail&state=dead", "/",
                                 "/app.js", "/api/overview", "/nope"};
    size_t k;

    for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
      char host[128];

      snprintf(host, sizeof(host), no[i], e.port);
      snprintf(h, sizeof(h), "Host: %s\r\n", host);
      for (k = 0; k < sizeof(paths) / sizeof(paths[0]); k++) {
        ASSERT_EQ(421, da_http(e.port, "GET", paths[k], h, resp, sizeof(resp)));
        ASSERT(da_has_header(resp, "Content-Type: text/plain"));
        ASSERT_NOT_NULL(strstr(resp, "\r\n\r\nthis dashboard does not "
                                     "answer for this host name"));
        ASSERT_NULL(strstr(resp, DA_PAYLOAD));
        da_guarded(resp);
      }
    }
  }
  /* A rebound page's change, from its own origin: refused by its Host. */
  snprintf(path, sizeof(path), "/api/retry?queue=mail&id=%s", e.dead);
  snprintf(h, sizeof(h),
           "Host: evil.example:%d\r\nOrigin: http://evil.example:%d\r\n"
           "X-Fleet-Dash: 1\r\n",
           e.port, e.port);
  ASSERT_EQ(421, da_http(e.port, "POST", path, h, resp, sizeof(resp)));
  ASSERT_EQ(421, da_http(e.port, "POST", "/api/pause?queue=mail", h, resp,
                         sizeof(resp)));
  da_unchanged(&e, "");
  /* Without Host: HTTP/1.1 400, HTTP/1.0 answered (a browser always sends
   * Host); Host twice: 400. */
  ASSERT_EQ(400, da_http(e.port, "GET", "/api/queues", "", resp, sizeof(resp)));
  ASSERT_EQ(200, da_raw(e.port, "GET /api/queues HTTP/1.0\r\n\r\n", resp,
                        sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "{\"queue\":\"mail\","));
  ASSERT_EQ(400, da_http(e.port, "GET", "/api/queues",
                         "Host: 127.0.0.1\r\nHost: evil.example\r\n", resp,
                         sizeof(resp)));
  /* Header names in any case, and sent a byte at a time (the server
   * reads them in pieces): still read. */
  ASSERT_EQ(421, da_http(e.port, "GET", "/api/queues", "hOsT: evil.example\r\n",
                         resp, sizeof(resp)));
  ASSERT_EQ(421, da_slow(e.port,
                         "POST /api/pause?queue=mail HTTP/1.1\r\nHost: "
                         "evil.example\r\nX-Fleet-Dash: 1\r\n\r\n",
                         resp, sizeof(resp)));
  ASSERT_EQ(0, da_paused(e.port, ""));
  ASSERT_EQ(200, da_slow(e.port,
                         "POST /api/pause?queue=mail HTTP/1.1\r\nHost: "
                         "localhost\r\nX-Fleet-Dash: 1\r\n\r\n",
                         resp, sizeof(resp)));
  ASSERT_EQ(1, da_paused(e.port, ""));
  ASSERT_EQ(200, da_http(e.port, "POST", "/api/resume?queue=mail",
                         "Host: 127.0.0.1\r\nX-Fleet-Dash: 1\r\n", resp,
                         sizeof(resp)));
  /* Over the longest Host kept: 431. */
  memset(h, 'a', 400);
  memcpy(h, "Host: ", 6);
  memcpy(h + 400, "\r\n", 3);
  ASSERT_EQ(431, da_http(e.port, "GET", "/api/queues", h, resp, sizeof(resp)));
  da_stop(&e, &r);
  ASSERT_NULL(strstr(r.err, "warning"));

  /* Malformed --allow-host values: exit 2, nothing served. */
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    const char *args[] = {"--url",       e.url,          "dash", "--listen",
                          "127.0.0.1:0", "--allow-host", bad[i], NULL};

    cli_run(&r, args);
    ASSERT_EQ(2, r.status);
    ASSERT_NOT_NULL(strstr(r.err, "--allow-host wants NAME or NAME:PORT"));
    ASSERT_NULL(strstr(r.out, "fleet dash: http://"));
  }
  da_teardown(&e);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Origin, and the headers of every response                                */

TEST_IMPL(dash_origin) {
  static char resp[65536];
  char paths[DA_ROUTES_MAX][64], h[1024], path[FLEET_JOB_ID_MAX + 128];
  int post[DA_ROUTES_MAX], n, i, changes = 0;
  cli_run_t r;
  da_env_t e;

  cli_required();
  da_setup(&e);
  da_start(&e, "127.0.0.1:0", NULL, NULL);
  n = da_routes(e.port, "", paths, post);
  ASSERT_GE(n, 14);
  /* Every change route refuses a foreign Origin, "null", the dashboard's
   * name on another port or scheme-default port, and two Origins. */
  for (i = 0; i < n; i++) {
    const char *const foreign[] = {
        "Origin: http://evil.example\r\n",
        "Origin: null\r\n",
        "Origin: http://127.0.0.1:1\r\n",
        "Origin: https://localhost\r\n",
        "Origin: http://127.0.0.1\r\n",
        "Origin: file://\r\n",
        "Origin: http://127.0.0.1:%d.evil.example\r\n",
        "Origin: http://127.0.0.1:%d\r\nOrigin: http://evil.example\r\n"};
    size_t k;

    if (!post[i])
      continue;
    changes++;
    snprintf(path, sizeof(path), "%.63s?queue=mail&id=%s", paths[i], e.dead);
    for (k = 0; k < sizeof(foreign) / sizeof(foreign[0]); k++) {
      char o[256];

      snprintf(o, sizeof(o), foreign[k], e.port);
      snprintf(h, sizeof(h), "Host: 127.0.0.1:%d\r\nX-Fleet-Dash: 1\r\n%s",
               e.port, o);
      ASSERT_EQ(403, da_http(e.port, "POST", path, h, resp, sizeof(resp)));
      ASSERT_NOT_NULL(strstr(resp, "cross-origin request refused"));
      da_guarded(resp);
    }
    /* Without the dashboard's header, even from its own origin: 403. */
    snprintf(h, sizeof(h),
             "Host: 127.0.0.1:%d\r\nOrigin: http://127.0.0.1:%d"
             "\r\n",
             e.port, e.port);
    ASSERT_EQ(403, da_http(e.port, "POST", path, h, resp, sizeof(resp)));
    ASSERT_NOT_NULL(strstr(resp, "missing X-Fleet-Dash header"));
  }
  ASSERT_EQ(8, changes); /* retry, cancel, purge, job/delete|run|kill, pause,
                          resume */
  da_unchanged(&e, "");
  /* The dashboard's own origin (each loopback name with its port): taken;
   * no Origin at all (curl, scripts) with the header: taken. */
  snprintf(h, sizeof(h),
           "Host: 127.0.0.1:%d\r\nX-Fleet-Dash: 1\r\nOrigin: "
           "http://127.0.0.1:%d\r\n",
           e.port, e.port);
  ASSERT_EQ(200, da_http(e.port, "POST", "/api/pause?queue=mail", h, resp,
                         sizeof(resp)));
  da_guarded(resp);
  ASSERT_EQ(1, da_paused(e.port, ""));
  snprintf(h, sizeof(h),
           "Host: localhost:%d\r\nX-Fleet-Dash: 1\r\nOrigin: "
           "HTTP://LOCALHOST:%d\r\n",
           e.port, e.port);
  ASSERT_EQ(200, da_http(e.port, "POST", "/api/resume?queue=mail", h, resp,
                         sizeof(resp)));
  ASSERT_EQ(0, da_paused(e.port, ""));
  snprintf(path, sizeof(path), "/api/retry?queue=mail&id=%s", e.dead);
  ASSERT_EQ(200, da_http(e.port, "POST", path,
                         "Host: 127.0.0.1\r\nX-Fleet-Dash: 1\r\n", resp,
                         sizeof(resp)));

  /* The headers: on the page, its assets, a 404, every GET route (with
   * or without its parameters), a change and a refused one. */
  {
    const char *const pages[] = {"/",          "/index.html", "/app.js",
                                 "/style.css", "/nope",       "/api/nope"};
    size_t k;

    for (k = 0; k < sizeof(pages) / sizeof(pages[0]); k++) {
      da_http(e.port, "GET", pages[k], "Host: 127.0.0.1\r\n", resp,
              sizeof(resp));
      da_guarded(resp);
    }
    for (i = 0; i < n; i++) {
      snprintf(path, sizeof(path), "%s?queue=mail&state=dead&ns=cron&key=k",
               paths[i]);
      if (!post[i]) {
        da_http(e.port, "GET", path, "Host: 127.0.0.1\r\n", resp, sizeof(resp));
        da_guarded(resp);
        da_http(e.port, "GET", paths[i], "Host: 127.0.0.1\r\n", resp,
                sizeof(resp));
        da_guarded(resp);
      }
    }
  }
  /* The page has no inline script or style: its first overview is JSON
   * data (which the policy lets through: it is not run). */
  ASSERT_EQ(200, da_http(e.port, "GET", "/", "Host: 127.0.0.1\r\n", resp,
                         sizeof(resp)));
  {
    const char *p;
    int scripts = 0;

    for (p = strstr(resp, "<script"); p != NULL; p = strstr(p + 1, "<script")) {
      scripts++;
      ASSERT(DA_STARTS(p, "<script src=\"/app.js\"></script>") ||
             DA_STARTS(p, "<script id=\"fleet-initial\" type=\"application/"
                          "json\">{"));
    }
    ASSERT_EQ(2, scripts);
    ASSERT_NULL(strstr(resp, "<style"));
    ASSERT_NULL(strstr(resp, " style="));
    ASSERT_NULL(strstr(resp, " onclick="));
  }
  da_stop(&e, &r);
  da_teardown(&e);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Read-only                                                                */

TEST_IMPL(dash_read_only) {
  static const char *const ro[] = {"--read-only", NULL};
  static char resp[65536];
  char paths[DA_ROUTES_MAX][64], h[1024], path[FLEET_JOB_ID_MAX + 128];
  const char *const methods[] = {"POST", "PUT", "DELETE", "PATCH"};
  int post[DA_ROUTES_MAX], n, i, changes = 0;
  cli_run_t r;
  da_env_t e;
  size_t k;

  cli_required();
  da_setup(&e);
  da_start(&e, "127.0.0.1:0", NULL, ro);
  ASSERT_NOT_NULL(strstr(e.ready, "; read-only, no token)"));
  /* Every change route of the server's table, asked as the page asks (its
   * header, its origin) and by any other method: 403, nothing changed. */
  n = da_routes(e.port, "", paths, post);
  ASSERT_GE(n, 14);
  snprintf(h, sizeof(h),
           "Host: 127.0.0.1:%d\r\nX-Fleet-Dash: 1\r\nOrigin: "
           "http://127.0.0.1:%d\r\n",
           e.port, e.port);
  for (i = 0; i < n; i++) {
    changes += post[i];
    for (k = 0; k < sizeof(methods) / sizeof(methods[0]); k++) {
      snprintf(path, sizeof(path), "%.63s?queue=mail&id=%s", paths[i],
               post[i] ? e.dead : e.pending);
      ASSERT_EQ(403, da_http(e.port, methods[k], path, h, resp, sizeof(resp)));
      ASSERT_NOT_NULL(strstr(resp, "read-only dashboard"));
      da_guarded(resp);
      snprintf(path, sizeof(path), "%.63s?queue=mail&id=%s", paths[i],
               e.pending);
      ASSERT_EQ(403, da_http(e.port, methods[k], path, h, resp, sizeof(resp)));
    }
  }
  ASSERT_EQ(8, changes); /* retry, cancel, purge, job/delete|run|kill, pause,
                          resume */
  /* Paths outside the table too. */
  for (k = 0; k < sizeof(methods) / sizeof(methods[0]); k++) {
    ASSERT_EQ(403, da_http(e.port, methods[k], "/", h, resp, sizeof(resp)));
    ASSERT_EQ(403, da_http(e.port, methods[k], "/api/purge?queue=mail", h, resp,
                           sizeof(resp)));
  }
  da_unchanged(&e, "");
  /* Reads still work, and the page is told. */
  ASSERT_EQ(200, da_http(e.port, "GET", "/api/jobs?queue=mail&state=dead",
                         "Host: 127.0.0.1\r\n", resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, DA_PAYLOAD));
  ASSERT_EQ(200, da_http(e.port, "GET", "/", "Host: 127.0.0.1\r\n", resp,
                         sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"read_only\":true,"));
  ASSERT_EQ(200, da_http(e.port, "GET", "/api/overview", "Host: 127.0.0.1\r\n",
                         resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "\"read_only\":true,"));
  da_stop(&e, &r);
  da_teardown(&e);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The token                                                                */

TEST_IMPL(dash_token) {
  static char resp[65536];
  static const char *const locked[] = {"/",
                                       "/index.html",
                                       "/app.js",
                                       "/style.css",
                                       "/api/queues",
                                       "/api/overview",
                                       "/api/routes",
                                       "/nope",
                                       "/api/queues?token=" DA_TOKEN,
                                       "/app.js?token=" DA_TOKEN};
  static const char *const wrong[] = {
      "Authorization: Bearer 0123456789abcdef0123456789abcde\r\n",
      "Authorization: Bearer " DA_TOKEN "0\r\n",
      "Authorization: Bearer 1123456789abcdef0123456789abcdef\r\n",
      "Authorization: Bearer \r\n",
      "Authorization: Basic " DA_TOKEN "\r\n",
      "Authorization: " DA_TOKEN "\r\n",
      "Authorization: Bearer " DA_TOKEN "\r\nAuthorization: Bearer x\r\n",
      "Cookie: fleet_dash_1=" DA_TOKEN "\r\n",
      "Cookie: fleet_dash=" DA_TOKEN "\r\n",
      "Cookie: x" DA_TOKEN "\r\n"};
  char h[1024], cookie[512], path[FLEET_JOB_ID_MAX + 128], line[600];
  cli_run_t r;
  da_env_t e;
  size_t i;

  cli_required();
  da_setup(&e);
  da_start(&e, "127.0.0.1:0", DA_TOKEN, NULL);
  ASSERT_NOT_NULL(
      strstr(e.ready, "; read-write, token required, from FLEET_DASH_TOKEN)"));
  ASSERT_NULL(strstr(e.ready, DA_TOKEN));
  /* Without the token: 401 on everything, page, assets and API. */
  for (i = 0; i < sizeof(locked) / sizeof(locked[0]); i++) {
    ASSERT_EQ(401, da_http(e.port, "GET", locked[i], "Host: 127.0.0.1\r\n",
                           resp, sizeof(resp)));
    ASSERT(da_has_header(resp, "\r\nWWW-Authenticate: Bearer realm=\"fleet "
                               "dash\"\r\n"));
    ASSERT_NULL(strstr(resp, DA_PAYLOAD));
    ASSERT_NULL(strstr(resp, "function drawChart"));
    da_guarded(resp);
  }
  snprintf(h, sizeof(h), "Host: 127.0.0.1\r\nX-Fleet-Dash: 1\r\n");
  ASSERT_EQ(401, da_http(e.port, "POST", "/api/pause?queue=mail", h, resp,
                         sizeof(resp)));
  /* A wrong one: 401 as well. */
  for (i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
    snprintf(h, sizeof(h), "Host: 127.0.0.1\r\n%s", wrong[i]);
    ASSERT_EQ(401, da_http(e.port, "GET", "/api/jobs?queue=mail&state=dead", h,
                           resp, sizeof(resp)));
    ASSERT_NULL(strstr(resp, DA_PAYLOAD));
  }
  snprintf(h, sizeof(h), "Host: 127.0.0.1\r\nCookie: fleet_dash_%d=%s0\r\n",
           e.port, DA_TOKEN);
  ASSERT_EQ(401, da_http(e.port, "GET", "/api/queues", h, resp, sizeof(resp)));
  /* The bearer header (its scheme in any case). */
  ASSERT_EQ(200,
            da_http(e.port, "GET", "/api/jobs?queue=mail&state=dead",
                    "Host: 127.0.0.1\r\nAuthorization: Bearer " DA_TOKEN "\r\n",
                    resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, DA_PAYLOAD));
  ASSERT_EQ(200,
            da_http(e.port, "GET", "/app.js",
                    "Host: 127.0.0.1\r\nAuthorization: bearer " DA_TOKEN "\r\n",
                    resp, sizeof(resp)));
  /* The browser's way in: /?token=T sets the cookie and sends the page
   * to "/", which drops the token from the address; a wrong one: 401. */
  ASSERT_EQ(401, da_http(e.port, "GET", "/?token=0123", "Host: 127.0.0.1\r\n",
                         resp, sizeof(resp)));
  ASSERT_NULL(strstr(resp, "Set-Cookie"));
  ASSERT_EQ(303, da_http(e.port, "GET", "/?token=" DA_TOKEN,
                         "Host: 127.0.0.1\r\n", resp, sizeof(resp)));
  ASSERT(da_has_header(resp, "\r\nLocation: /\r\n"));
  snprintf(line, sizeof(line),
           "\r\nSet-Cookie: fleet_dash_%d=%s; HttpOnly; SameSite=Strict; "
           "Path=/\r\n",
           e.port, DA_TOKEN);
  ASSERT(da_has_header(resp, line));
  da_guarded(resp);
  ASSERT_EQ(303, da_http(e.port, "GET", "/index.html?a=1&token=" DA_TOKEN,
                         "Host: 127.0.0.1\r\n", resp, sizeof(resp)));
  /* The cookie, alone or among others, opens page, assets and API. */
  snprintf(cookie, sizeof(cookie), "fleet_dash_%d=%s", e.port, DA_TOKEN);
  for (i = 0; i < 5; i++) {
    snprintf(h, sizeof(h), "Host: 127.0.0.1\r\nCookie: %s%s%s\r\n",
             i % 2 ? "a=1; " : "", cookie, i > 1 ? "; b=2" : "");
    ASSERT_EQ(200, da_http(e.port, "GET",
                           i == 0   ? "/"
                           : i == 1 ? "/app.js"
                                    : "/api/jobs?queue=mail&state=dead",
                           h, resp, sizeof(resp)));
  }
  ASSERT_NOT_NULL(strstr(resp, DA_PAYLOAD));
  /* The token does not stand in for the change checks. */
  snprintf(h, sizeof(h),
           "Host: 127.0.0.1\r\nCookie: %s\r\nX-Fleet-Dash: 1\r\n"
           "Origin: http://evil.example\r\n",
           cookie);
  ASSERT_EQ(403, da_http(e.port, "POST", "/api/pause?queue=mail", h, resp,
                         sizeof(resp)));
  snprintf(h, sizeof(h), "Cookie: %s\r\n", cookie);
  da_unchanged(&e, h);
  snprintf(h, sizeof(h),
           "Host: 127.0.0.1\r\nCookie: %s\r\nX-Fleet-Dash: 1\r\n"
           "Origin: http://127.0.0.1:%d\r\n",
           cookie, e.port);
  snprintf(path, sizeof(path), "/api/cancel?queue=mail&id=%s", e.pending);
  ASSERT_EQ(200, da_http(e.port, "POST", path, h, resp, sizeof(resp)));
  da_stop(&e, &r);
  ASSERT_NULL(strstr(r.out, DA_TOKEN));
  ASSERT_NULL(strstr(r.err, DA_TOKEN));
  ASSERT_NULL(strstr(r.err, "warning"));

  /* --token: the same, and gone from the process's arguments (ps) once
   * read. */
  {
    static const char *const args[] = {"--token", "t0k-en_1.2~3", NULL};
    char cmdline[4096], proc[64];
    int fd;
    ssize_t got;

    da_start(&e, "127.0.0.1:0", DA_TOKEN, args);
    ASSERT_NOT_NULL(strstr(e.ready, "token required, from --token)"));
    snprintf(proc, sizeof(proc), "/proc/%d/cmdline", (int)e.pid);
    fd = open(proc, O_RDONLY);
    ASSERT_GE(fd, 0);
    got = read(fd, cmdline, sizeof(cmdline) - 1);
    close(fd);
    ASSERT_GT(got, 0);
    for (i = 0; i < (size_t)got; i++)
      if (cmdline[i] == '\0')
        cmdline[i] = ' ';
    cmdline[got] = '\0';
    ASSERT_NULL(strstr(cmdline, "t0k-en_1.2~3"));
    ASSERT_NOT_NULL(strstr(cmdline, "--token xxxxxxxxxxxx"));
    ASSERT_EQ(200, da_http(e.port, "GET", "/api/queues",
                           "Host: 127.0.0.1\r\nAuthorization: Bearer "
                           "t0k-en_1.2~3\r\n",
                           resp, sizeof(resp)));
    /* --token wins over the environment. */
    snprintf(h, sizeof(h), "Host: 127.0.0.1\r\nAuthorization: Bearer %s\r\n",
             DA_TOKEN);
    ASSERT_EQ(401,
              da_http(e.port, "GET", "/api/queues", h, resp, sizeof(resp)));
    da_stop(&e, &r);
  }
  /* A token a URL or a cookie cannot carry as is: exit 2. */
  {
    const char *args[] = {"--url",       e.url,     "dash", "--listen",
                          "127.0.0.1:0", "--token", "a b",  NULL};

    cli_run(&r, args);
    ASSERT_EQ(2, r.status);
    ASSERT_NOT_NULL(strstr(r.err, "--token: 1 to 256 letters, digits or"));
    args[6] = "a;b";
    cli_run(&r, args);
    ASSERT_EQ(2, r.status);
  }
  da_teardown(&e);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Listening beyond loopback                                                */

TEST_IMPL(dash_listen_warning) {
  static char resp[65536];
  char h[256];
  cli_run_t r;
  da_env_t e;

  cli_required();
  da_setup(&e);
  /* 0.0.0.0 without a token: one warning line; the dashboard still serves
   * (its listen address is one of its names). */
  da_start(&e, "0.0.0.0:0", NULL, NULL);
  ASSERT_NOT_NULL(strstr(e.ready, "fleet dash: http://0.0.0.0:"));
  snprintf(h, sizeof(h), "Host: 0.0.0.0:%d\r\n", e.port);
  ASSERT_EQ(200, da_http(e.port, "GET", "/api/queues", h, resp, sizeof(resp)));
  ASSERT_EQ(200, da_http(e.port, "GET", "/api/queues", "Host: localhost\r\n",
                         resp, sizeof(resp)));
  da_stop(&e, &r);
  ASSERT_NOT_NULL(strstr(r.err, "fleet dash: warning: listening on 0.0.0.0 "
                                "beyond loopback without a token"));
  ASSERT_EQ(2, cli_lines(r.err)); /* the warning, and "stopping" */
  /* With a token (from the environment): no warning. */
  da_start(&e, "0.0.0.0:0", DA_TOKEN, NULL);
  da_stop(&e, &r);
  ASSERT_NULL(strstr(r.err, "warning"));
  ASSERT_EQ(1, cli_lines(r.err));
  /* Read-only without a token: still warned (every job can be read). */
  {
    static const char *const ro[] = {"--read-only", NULL};

    da_start(&e, "0.0.0.0:0", NULL, ro);
    da_stop(&e, &r);
    ASSERT_NOT_NULL(strstr(r.err, "warning: listening on 0.0.0.0"));
  }
  da_teardown(&e);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* In the browser                                                           */

/* How many times `needle` occurs in `hay`. */
static int da_count(const char *hay, const char *needle) {
  int n = 0;

  for (; (hay = strstr(hay, needle)) != NULL; hay += strlen(needle))
    n++;
  return n;
}

TEST_IMPL(dash_chromium_access) {
  static const char *const ro[] = {"--read-only", NULL};
  const char *chromium = cli_chromium_path();
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char url[700], file[512];
  static cli_run_t r;
  cli_run_t stop;
  da_env_t e;
  FILE *f;

  cli_required();
  if (chromium == NULL)
    fleet_test_skip("chromium is not installed (apt-get install chromium)");
  da_setup(&e);

  /* Read-only: the queues are shown, no control that changes anything
   * (each has a data-action), not on the dead or pending tabs either. */
  da_start(&e, "127.0.0.1:0", NULL, ro);
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/", e.port);
  cli_chromium_run(chromium, url, "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(0, strlen(r.err));
  ASSERT_NOT_NULL(strstr(r.out, "<tr data-queue=\"mail\""));
  ASSERT_NOT_NULL(strstr(r.out, "<span id=\"mode\" class=\"paused\">"
                                "read-only</span>"));
  ASSERT_NULL(strstr(r.out, "data-action"));
  ASSERT_NULL(strstr(r.out, ">Pause<"));
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/#queue=mail&state=dead",
           e.port);
  cli_chromium_run(chromium, url, "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "<tr data-job="));
  ASSERT_NOT_NULL(strstr(r.out, DA_PAYLOAD));
  ASSERT_NULL(strstr(r.out, "data-action"));
  ASSERT_NULL(strstr(r.out, ">Retry"));
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/#queue=mail&state=pending",
           e.port);
  cli_chromium_run(chromium, url, "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "<tr data-job="));
  ASSERT_NULL(strstr(r.out, "data-action"));
  /* (The confirmation dialog has a Cancel button of its own, never
   * shown: no change is offered to confirm.) */
  ASSERT_EQ(1, da_count(r.out, ">Cancel<"));
  ASSERT_NOT_NULL(strstr(r.out, "<button id=\"confirm-cancel\">Cancel<"));

  /* A page of another origin framing the dashboard: Chromium refuses to
   * show it, and says why. */
  snprintf(file, sizeof(file), "%s/fleet-frame-%d.html", tmp, (int)getpid());
  f = fopen(file, "w");
  ASSERT_NOT_NULL(f);
  fprintf(f,
          "<!DOCTYPE html><html><body><p id=\"top\">another site</p>"
          "<iframe src=\"http://127.0.0.1:%d/\" width=\"800\" "
          "height=\"600\"></iframe></body></html>\n",
          e.port);
  fclose(f);
  snprintf(url, sizeof(url), "file://%s", file);
  cli_chromium_run(chromium, url, "--dump-dom", &r);
  unlink(file);
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "another site"));
  ASSERT_NOT_NULL(strstr(r.err, "violates the following Content Security "
                                "Policy directive: \"frame-ancestors "
                                "'none'\". The request has been blocked."));
  da_stop(&e, &stop);

  /* The token: without it the page is not served; opened once with
   * ?token=, the cookie lets the page and its API calls in (the jobs of
   * the fragment's tab are fetched after the page loaded). */
  da_start(&e, "127.0.0.1:0", DA_TOKEN, NULL);
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/#queue=mail&state=dead",
           e.port);
  cli_chromium_run(chromium, url, "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_NOT_NULL(strstr(r.out, "a token is required"));
  ASSERT_NULL(strstr(r.out, "data-queue"));
  snprintf(url, sizeof(url),
           "http://127.0.0.1:%d/?token=" DA_TOKEN "#queue=mail&state=dead",
           e.port);
  cli_chromium_run(chromium, url, "--dump-dom", &r);
  ASSERT_EQ(0, r.status);
  ASSERT_EQ(0, strlen(r.err));
  ASSERT_NOT_NULL(strstr(r.out, "<tr data-queue=\"mail\""));
  ASSERT_NOT_NULL(strstr(r.out, "<tr data-job="));
  ASSERT_NOT_NULL(strstr(r.out, DA_PAYLOAD));
  ASSERT_NOT_NULL(
      strstr(r.out, "<button data-action=\"retry\">Retry</button>"));
  da_stop(&e, &stop);
  da_teardown(&e);
  return 0;
}
