/* dash.c -- `fleet dash --listen HOST:PORT`: the web dashboard. A small
 * HTTP/1.1 server on the loop (http_parser; one request per connection)
 * serves the embedded page (assets/) and a JSON API the page fetches:
 *
 *   GET  /api/overview                  queues (counts), locks, pools,
 *                                       crons, warm pools, the samples
 *                                       the server took every 2 s (the
 *                                       last 3 min) and the backend's
 *                                       state; 503 and null parts when a
 *                                       query failed
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
 *   POST /api/purge?queue=Q&state=dead|completed   delete the kept
 *                                       records of that state
 *   POST /api/pause?queue=Q, /api/resume?queue=Q
 *   GET  /api/routes                    this table: [{method, path}]
 *   any other /api/ path                404 {"error": "not found"}
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
 * A partitioned queue (docs/queue.md, "Partitioned queues") is one queue:
 * a route that names a queue reads its partition count first (kept 5 s,
 * dash_routes.c) and runs on a handle of every partition; the lists of
 * queues add a queue's partitions up into its row.
 *
 * The page ("/") comes with the overview inlined, so that it shows the
 * data as soon as it loads; it then refreshes every 2 s.
 * Stops on SIGINT or SIGTERM: closes the listener and every connection,
 * waits for the queries in flight, closes the client. dash_int.h names
 * the parts of the dashboard, one file each. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "dash_int.h"

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

/* Everything is closed and no query is in flight: the command ends. */
static void dash_stopped(dash_t *d) {
  cli_finish(d->cli, 0, NULL, NULL, NULL);
  cli_jfree(d->history);
  free(d);
}

static void dash_signal(uv_signal_t *s, int signum) {
  dash_t *d = s->data;

  (void)signum;
  dash_stop(d, "dash", &d->sampler);
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
  cli->sample_history = 1; /* the queues' history gets depth and wait */
  d->on_request = dash_route;
  d->on_stopped = dash_stopped;
  d->read_timeout_ms = read_timeout;
  d->read_only = read_only;
  d->test_hooks = getenv("FLEET_DASH_TEST_HOOKS") != NULL &&
                  strcmp(getenv("FLEET_DASH_TEST_HOOKS"), "1") == 0;
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
    err = uv_listen((uv_stream_t *)&d->server, 128, dash_on_connection);
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
  uv_timer_start(&d->sampler, dash_sample_tick, 0, 0);
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
