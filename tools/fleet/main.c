/* main.c -- the fleet command-line tool: global options, the table of
 * nouns, and the client (cli_util.c has what the commands share).
 *
 *   fleet [--url U] [--prefix P] [--json] [--timeout-ms MS] <noun> <verb> ...
 *
 * The global options may also come after the noun and the verb, as
 * "--opt V" or "--opt=V"; a "--" ends the options (cli_globals(), and
 * cli_opts() for each verb's own).
 * Without --url the URL comes from the environment, FLEET_URL then
 * REDIS_URL (fleet_url_from_env(); default redis://127.0.0.1:6379), which
 * keeps a password out of `ps`. A
 * command runs on the libuv loop like any fleet program: it starts its
 * query, the query's callback prints the result, and the client closes.
 * Exit codes: 0 success, 1 the command failed (one line on stderr says
 * why), 2 bad usage. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define CLI_DEFAULT_URL "redis://127.0.0.1:6379"

static const char cli_usage[] =
    "usage: fleet [--url URL] [--prefix P] [--json] [--timeout-ms MS] <noun> "
    "<verb> [args]\n"
    "Options go before or after the noun and verb, as --opt V or --opt=V;\n"
    "-- ends them.\n"
    "\n"
    "  queue   ls | stats Q | jobs Q --state S [--limit N] [--cursor C] |\n"
    "          get Q ID | events Q [--job ID] [--count N] |\n"
    "          retry Q ID|--all-dead | cancel Q ID |\n"
    "          purge Q --state completed|dead |\n"
    "          pause Q [--create] | resume Q |\n"
    "          add Q PAYLOAD [--type T] | limit Q [--rate MAX/DUR ...] |\n"
    "          hold Q --for DUR [--group G] | weight Q G N |\n"
    "          history Q [--days N | --minutes N]\n"
    "  lock    get NAME | ls [--match PATTERN]\n"
    "  leader  get NAME\n"
    "  pool    status P | ls\n"
    "  store   get COLLECTION ID | ls COLLECTION INDEX VALUE [--limit N] |\n"
    "          delete COLLECTION ID | events COLLECTION ID [--count N]\n"
    "  cron    ls [--ns NS] | get KEY [--ns NS] |\n"
    "          history KEY [--ns NS] [--limit N] |\n"
    "          enable|disable|trigger|remove KEY [--ns NS]\n"
    "  warmpool snapshot P\n"
    "  worker  ls [--kind queue|pool|cron|warmpool]\n"
    "  watch   queue Q | pool P  [--count N] [--interval-ms MS]\n"
    "  dash    --listen 127.0.0.1:PORT [--read-only] [--allow-host NAME]\n"
    "          [--token T] (better: $FLEET_DASH_TOKEN)\n"
    "  metrics [--listen 127.0.0.1:PORT] [--once] [--allow-host NAME]\n"
    "          [--token T] (Prometheus text on GET /metrics)\n"
    "\n"
    "Global options:\n"
    "  --url URL        redis://[user:password@]host[:port][/db], "
    "unix:///path\n"
    "                   (default $FLEET_URL, else $REDIS_URL, else\n"
    "                   " CLI_DEFAULT_URL "); --url shows in `ps` with its\n"
    "                   password: prefer FLEET_URL for a URL with one\n"
    "  --prefix P       the key prefix of the fleet objects (default fleet)\n"
    "  --json           print JSON instead of tables\n"
    "  --timeout-ms MS  time allowed per backend call (default 5000)\n"
    "  --version        the version of fleet\n"
    "  --help           this text; `fleet <noun> --help` for a noun's verbs\n"
    "\n"
    "Times are UTC, ISO-8601 (2026-11-27T10:00:00.000Z). Colours on a\n"
    "terminal unless NO_COLOR is set. Exit codes: 0 done, 1 failed (one\n"
    "line on stderr says why), 2 bad usage.\n";

typedef struct {
  const char *noun;
  cli_cmd_fn fn;
} cli_noun_t;

/* One line per noun. */
static const cli_noun_t cli_nouns[] = {
    {"queue", cli_cmd_queue},   {"lock", cli_cmd_lock},
    {"leader", cli_cmd_leader}, {"pool", cli_cmd_pool},
    {"store", cli_cmd_store},   {"watch", cli_cmd_watch},
    {"cron", cli_cmd_cron},     {"warmpool", cli_cmd_warmpool},
    {"dash", cli_cmd_dash},     {"metrics", cli_cmd_metrics},
    {"worker", cli_cmd_worker}, {NULL, NULL}};

/* ------------------------------------------------------------------------ */
/* The client                                                               */

/* Remembers the first failure to reach the backend, for cli_error(). */
static void cli_on_state(fleet_client_t *client, fleet_client_state_t state,
                         int status) {
  cli_t *cli = client->data;

  if (state == FLEET_CLIENT_READY) {
    cli->ready = 1;
  } else if (state == FLEET_CLIENT_RECONNECTING && status != 0 && !cli->ready &&
             cli->conn_status == 0) {
    cli->conn_status = status;
    cli->conn_detail = strdup(fleet_client_last_error(client));
  }
}

/* The client's log while it opens (a tls_verify=0 warning): one line
 * each on stderr. Later messages are not printed: what goes wrong after
 * that reaches the command, which prints it once. */
static int cli_opening;

static void cli_on_log(fleet_log_level_t level, const char *msg, void *data) {
  (void)data;
  if (cli_opening && level <= FLEET_LOG_WARN)
    fleet_escape_print(stderr, "fleet: %s: %s", fleet_log_level_name(level),
                       msg);
}

/* ------------------------------------------------------------------------ */
/* main                                                                     */

/* The value of the global option `name` at argv[*i]: "--name=V", or
 * "--name V" (then *i moves past V). NULL when argv[*i] is not that
 * option; `*missing` is set when it is, without a value. */
static const char *cli_global_value(int argc, char **argv, int *i,
                                    const char *name, int *missing) {
  size_t n = strlen(name);

  if (strncmp(argv[*i], name, n) != 0)
    return NULL;
  if (argv[*i][n] == '=')
    return argv[*i] + n + 1;
  if (argv[*i][n] != '\0')
    return NULL;
  if (*i + 1 >= argc) {
    *missing = 1;
    return NULL;
  }
  return argv[++*i];
}

/* Takes the global options out of argv, wherever they are before a "--"
 * (before the noun, or after it among the verb's words), and leaves the
 * noun and the rest in argv[0..*argc-1]. Before the noun, any other
 * option is refused; after it, the noun's own options stay for it.
 * Returns -1 to go on, or the exit code (--help, --version, bad usage). */
static int cli_globals(cli_t *cli, int *argc, char **argv, uint64_t *timeout) {
  static const char *const valued[] = {"--url", "--prefix", "--timeout-ms",
                                       NULL};
  const char *v = NULL, *ms = NULL;
  int i, k, out = 0, noun = 0, ended = 0, missing = 0;

  for (i = 1; i < *argc; i++) {
    const char *w = argv[i];

    if (ended || (w[0] != '-' && (noun = 1)) || strcmp(w, "-") == 0) {
      argv[out++] = argv[i];
      continue;
    }
    if (strcmp(w, "--") == 0) {
      /* Before the noun there is nothing to end; after it, the verb
       * sees the "--" too. */
      ended = 1;
      if (noun)
        argv[out++] = argv[i];
      continue;
    }
    if (!noun && cli_is_help(w)) {
      fputs(cli_usage, stdout);
      return 0;
    }
    if (strcmp(w, "--version") == 0) {
      printf("fleet %s\n", fleet_version_string());
      return 0;
    }
    if (strcmp(w, "--json") == 0) {
      cli->json = 1;
      continue;
    }
    for (k = 0; valued[k] != NULL; k++)
      if ((v = cli_global_value(*argc, argv, &i, valued[k], &missing)) !=
              NULL ||
          missing)
        break;
    if (missing) {
      fleet_escape_print(stderr, "fleet: %s needs a value (see fleet --help)",
                         valued[k]);
      return 2;
    }
    if (v != NULL && k == 0)
      cli->url = v;
    else if (v != NULL && k == 1)
      cli->prefix = v;
    else if (v != NULL)
      ms = v;
    else if (noun)
      argv[out++] = argv[i];
    else {
      fleet_escape_print(stderr, "fleet: unknown option %s (see fleet --help)",
                         w);
      return 2;
    }
  }
  if (ms != NULL && cli_parse_u64(ms, 1, 3600000, timeout) != 0) {
    fleet_escape_print(stderr, "fleet: --timeout-ms: not a number of ms: %s",
                       ms);
    return 2;
  }
  if (cli->prefix[0] == '\0') {
    fleet_escape_print(stderr, "fleet: --prefix: an empty prefix");
    return 2;
  }
  *argc = out;
  argv[out] = NULL;
  return -1;
}

int main(int argc, char **argv) {
  fleet_client_options_t co;
  const cli_noun_t *n;
  uint64_t timeout = 5000;
  cli_t cli;
  int rc;

  /* A peer that closes (a web server on the port given) is an error
   * the command reports, not a signal that kills it silently. */
  signal(SIGPIPE, SIG_IGN);
  memset(&cli, 0, sizeof(cli));
  cli.loop = uv_default_loop();
  cli.url = fleet_url_from_env();
  if (cli.url == NULL)
    cli.url = CLI_DEFAULT_URL;
  cli.prefix = "fleet";

  /* Global options anywhere: argv is the noun and its words after. */
  if ((rc = cli_globals(&cli, &argc, argv, &timeout)) >= 0)
    return rc;
  if (argc == 0) {
    fputs(cli_usage, stderr);
    return 2;
  }
  for (n = cli_nouns; n->noun != NULL; n++)
    if (strcmp(n->noun, argv[0]) == 0)
      break;
  if (n->noun == NULL) {
    fleet_escape_print(stderr, "fleet: unknown command %s (see fleet --help)",
                       argv[0]);
    return 2;
  }
  cli_colour_init(cli.json);

  snprintf(cli.what, sizeof(cli.what), "%s%s%s", argv[0],
           argc > 1 && argv[1][0] != '-' ? " " : "",
           argc > 1 && argv[1][0] != '-' ? argv[1] : "");
  {
    size_t ulen = fleet_redact_url(cli.url, NULL, 0) + 1;

    if ((cli.url_shown = malloc(ulen)) == NULL)
      return 1;
    fleet_redact_url(cli.url, cli.url_shown, ulen);
  }
  fleet_client_options_init(&co);
  co.prefix = cli.prefix;
  co.command_timeout_ms = (uint32_t)timeout;
  co.connect_timeout_ms = (uint32_t)timeout;
  /* A one-shot command: a refused connection is the answer, at once. */
  co.fail_fast = 1;
  co.state_cb = cli_on_state;
  co.log_cb = cli_on_log;
  cli.client.data = &cli;
  /* A --help of a noun or verb needs no client: the noun prints it before
   * any query, and the client closes unused. */
  cli_opening = 1;
  rc = fleet_client_init(cli.loop, &cli.client, cli.url, &co);
  cli_opening = 0;
  if (rc != 0) {
    char why[256] = "";

    fleet_client_url_check(cli.url, why, sizeof(why));
    fleet_escape_print(stderr, "fleet: cannot use %s: %s (%s)", cli.url_shown,
                       fleet_err_name(rc),
                       why[0] != '\0' ? why : fleet_strerror(rc));
    free(cli.url_shown);
    return 1;
  }
  cli.client_open = 1;
  cli.noun_fn = n->fn;
  cli.noun_argc = argc;
  if ((cli.noun_argv = malloc(((size_t)argc + 1) * sizeof(char *))) == NULL) {
    rc = 1;
    fprintf(stderr, "fleet: out of memory\n");
  } else {
    memcpy(cli.noun_argv, argv, ((size_t)argc + 1) * sizeof(char *));
    rc = n->fn(&cli, argc, argv);
  }
  if (rc != 0) {
    cli.exit_code = rc == CLI_DONE ? 0 : rc;
    cli_close_client(&cli);
  }
  uv_run(cli.loop, UV_RUN_DEFAULT);
  if (cli.client_open) {
    /* Every query ended without closing (cannot happen): close now. */
    cli.inflight = 0;
    cli_close_client(&cli);
    uv_run(cli.loop, UV_RUN_DEFAULT);
  }
  uv_loop_close(cli.loop);
  cli_queue_parts_free(&cli);
  free(cli.url_shown);
  free(cli.conn_detail);
  free(cli.noun_argv);
  return cli.exit_code;
}
