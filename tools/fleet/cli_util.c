/* cli_util.c -- what every command of the fleet CLI shares (cli.h): its
 * one-line error, its options and usage, and how it ends (the result
 * printed, the exit code, the client closed). main.c runs the commands;
 * the nouns' files and the dashboard call these. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

/* Whether a command's `status` says that no connection could be made. */
static int cli_connection_error(int status) {
  return status == FLEET_EAUTH || status == FLEET_EUNAVAILABLE ||
         status == FLEET_ECONNREFUSED || status == FLEET_ECONNLOST ||
         status == FLEET_ETIMEDOUT || status == FLEET_ERESOLVE ||
         status == FLEET_ETLS || status == FLEET_ENOPERM ||
         status == FLEET_EBADDB;
}

/* What to tell the user for a failure to reach the backend whose cause
 * they can fix, or NULL: a server that wants a password, a wrong
 * password, something that is not a Redis server. */
static const char *cli_reach_hint(int status, const char *detail) {
  if (status == FLEET_EAUTH && detail != NULL && strstr(detail, "NOAUTH"))
    return "authentication required: add the password to the URL, e.g. "
           "redis://:PASSWORD@host:port, or set FLEET_URL";
  if (status == FLEET_EAUTH && detail != NULL && strstr(detail, "WRONGPASS"))
    return "authentication failed: wrong user name or password in the URL";
  if (status == FLEET_EPROTO)
    return "not a Redis server: what answers does not speak the Redis "
           "protocol (check the host and port)";
  return NULL;
}

void cli_error(cli_t *cli, const char *what, int status, const char *detail) {
  const char *name, *reach = "", *hint = NULL;
  size_t nl;

  if (cli != NULL && cli->what[0] != '\0')
    what = cli->what;
  /* The backend was never reached: that is the one thing to say, with
   * the cause of the first failed attempt (a command that failed for
   * want of a connection may tell it before the state callback does:
   * then the client's last error still holds the cause). */
  if (cli != NULL && !cli->ready &&
      (cli_connection_error(status) || status == FLEET_EPROTO)) {
    if (cli->conn_status != 0) {
      status = cli->conn_status;
      detail = cli->conn_detail;
    } else if (fleet_client_last_error(&cli->client)[0] != '\0') {
      detail = fleet_client_last_error(&cli->client);
    }
    reach = "cannot reach the backend at ";
    hint = cli_reach_hint(status, detail);
  }
  name = fleet_err_name(status);
  nl = strlen(name);
  /* A script's error text starts with the code's name: said once. */
  if (detail != NULL && strncmp(detail, name, nl) == 0 && detail[nl] == ' ')
    detail += nl + 1;
  if (detail == NULL || detail[0] == '\0')
    detail = fleet_strerror(status);
  if (hint != NULL)
    fleet_escape_print(stderr, "fleet: %s: %s%s: %s (%s: %s)", what, reach,
                       cli->url_shown, hint, name, detail);
  else if (reach[0] != '\0')
    fleet_escape_print(stderr, "fleet: %s: %s%s: %s (%s)", what, reach,
                       cli->url_shown, name, detail);
  else
    fleet_escape_print(stderr, "fleet: %s: %s (%s)", what, name, detail);
}

int cli_is_help(const char *s) {
  return s != NULL && (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0);
}

int cli_noun_help(int argc, char **argv, const char *usage) {
  int i;

  if (argc < 2) {
    fputs(usage, stderr);
    return 2;
  }
  for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (cli_is_help(argv[i])) {
      fputs(usage, stdout);
      return CLI_DONE;
    }
  return 0;
}

int cli_usage_error(const char *noun, const char *fmt, const char *arg) {
  char msg[512];

  snprintf(msg, sizeof(msg), fmt, arg);
  fleet_escape_print(stderr, "fleet %s: %s (see fleet %s --help)", noun, msg,
                     noun);
  return 2;
}

int cli_started(cli_t *cli, const char *verb, int err) {
  if (err == 0)
    return 0;
  cli_error(cli, verb, err, NULL);
  return 1;
}

static void cli_opt_remove(int *argc, char **argv, int i, int n) {
  int k;

  for (k = i; k + n <= *argc; k++)
    argv[k] = argv[k + n];
  *argc -= n;
}

const char *cli_opt(int *argc, char **argv, const char *name) {
  size_t len = strlen(name);
  const char *v;
  int i;

  for (i = 1; i < *argc; i++) {
    if (strcmp(argv[i], "--") == 0)
      return NULL;
    if (strncmp(argv[i], name, len) != 0)
      continue;
    if (argv[i][len] == '=') {
      v = argv[i] + len + 1;
      cli_opt_remove(argc, argv, i, 1);
      return v;
    }
    if (argv[i][len] == '\0' && i + 1 < *argc) {
      v = argv[i + 1];
      cli_opt_remove(argc, argv, i, 2);
      return v;
    }
  }
  return NULL;
}

int cli_opt_flag(int *argc, char **argv, const char *name) {
  int i;

  for (i = 1; i < *argc; i++) {
    if (strcmp(argv[i], "--") == 0)
      return 0;
    if (strcmp(argv[i], name) == 0) {
      cli_opt_remove(argc, argv, i, 1);
      return 1;
    }
  }
  return 0;
}

/* Whether the word `s` is an option: "--name" (not "--" alone) or '-'
 * and a letter; "-", "-5" and "-1.5" are arguments. */
static int cli_is_option(const char *s) {
  if (s[0] != '-')
    return 0;
  if (s[1] == '-')
    return s[2] != '\0';
  return (s[1] >= 'a' && s[1] <= 'z') || (s[1] >= 'A' && s[1] <= 'Z');
}

int cli_opts(const char *noun, int *argc, char **argv,
             const cli_optdef_t *defs) {
  const cli_optdef_t *d;
  const char *eq, *val;
  size_t nlen;
  int i, out = 1, ended = 0;

  for (i = 1; i < *argc; i++) {
    const char *w = argv[i];

    if (!ended && strcmp(w, "--") == 0) {
      ended = 1;
      continue;
    }
    if (ended || !cli_is_option(w)) {
      argv[out++] = argv[i];
      continue;
    }
    eq = strchr(w, '=');
    nlen = eq != NULL ? (size_t)(eq - w) : strlen(w);
    for (d = defs; d != NULL && d->name != NULL; d++)
      if (strlen(d->name) == nlen && strncmp(d->name, w, nlen) == 0)
        break;
    if (d == NULL || d->name == NULL)
      return cli_usage_error(noun, "unknown option %s", w);
    if (d->value == NULL) {
      if (eq != NULL)
        return cli_usage_error(noun, "%s takes no value", d->name);
      if (*d->flag)
        return cli_usage_error(noun, "%s given twice", d->name);
      *d->flag = 1;
      continue;
    }
    if (eq != NULL) {
      val = eq + 1;
    } else if (i + 1 < *argc) {
      val = argv[++i];
    } else {
      return cli_usage_error(noun, "%s needs a value", d->name);
    }
    if (*d->value != NULL)
      return cli_usage_error(noun, "%s given twice", d->name);
    *d->value = val;
  }
  *argc = out;
  argv[out] = NULL;
  return 0;
}

const char *cli_time_iso(int64_t ms, char *buf, size_t len) {
  struct tm tm;
  time_t t = (time_t)(ms / 1000);

  if (len > 0)
    buf[0] = '\0';
  if (ms > 0 && gmtime_r(&t, &tm) != NULL)
    snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (int)(ms % 1000));
  return buf;
}

int64_t cli_now_ms(void) {
  uv_timeval64_t tv;

  if (uv_gettimeofday(&tv) != 0)
    return 0;
  return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

const char *cli_duration(int64_t ms, char *buf, size_t len) {
  static const struct {
    const char *unit;
    int64_t ms;
  } units[] = {{"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}};
  size_t u;
  int64_t hi, lo;

  if (ms < 1000) {
    snprintf(buf, len, "0s");
    return buf;
  }
  for (u = 0; ms < units[u].ms; u++)
    ;
  hi = ms / units[u].ms;
  lo = u + 1 < 4 ? ms % units[u].ms / units[u + 1].ms : 0;
  if (lo > 0)
    snprintf(buf, len, "%lld%s%lld%s", (long long)hi, units[u].unit,
             (long long)lo, units[u + 1].unit);
  else
    snprintf(buf, len, "%lld%s", (long long)hi, units[u].unit);
  return buf;
}

void cli_jadd_time(cli_json_t *o, const char *key_ms, int64_t ms) {
  char key[64], iso[32];
  size_t n = strlen(key_ms);

  cli_jadd(o, key_ms, cli_jint(ms));
  if (n > 3 && n - 3 < sizeof(key) && strcmp(key_ms + n - 3, "_ms") == 0) {
    memcpy(key, key_ms, n - 3);
    key[n - 3] = '\0';
    cli_jadd(o, key,
             ms > 0 ? cli_jstr(cli_time_iso(ms, iso, sizeof(iso)))
                    : cli_jnull());
  }
}

int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out) {
  uint64_t v = 0;

  if (s == NULL || *s == '\0')
    return -1;
  for (; *s != '\0'; s++) {
    if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
      return -1;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  if (v < min || v > max)
    return -1;
  *out = v;
  return 0;
}

int cli_job_state(const char *s, fleet_job_state_t *out) {
  int i;

  for (i = FLEET_JOB_PENDING; i <= FLEET_JOB_WAITING_CHILDREN; i++)
    if (s != NULL &&
        strcmp(s, fleet_job_state_name((fleet_job_state_t)i)) == 0) {
      *out = (fleet_job_state_t)i;
      return 0;
    }
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Ending a command                                                         */

void cli_close_client(cli_t *cli) {
  if (cli->client_open && cli->inflight == 0) {
    cli->client_open = 0;
    fleet_client_close(&cli->client, NULL);
  }
}

void cli_finish(cli_t *cli, int status, const char *detail, cli_json_t *result,
                void *arg) {
  const cli_view_t *view = arg;
  cli_buf_t b = {0};

  if (status != 0) {
    cli_error(cli, "error", status, detail);
    cli->exit_code = 1;
  } else if (result != NULL && (cli->json || result->num == -1 ||
                                (view == NULL && result->type != CLI_JOBJ))) {
    cli_json_write(&b, result);
    if (b.oom) {
      fprintf(stderr, "fleet: out of memory\n");
      cli->exit_code = 1;
    } else {
      printf("%s\n", b.p);
    }
    cli_buf_free(&b);
  } else if (result != NULL && view != NULL && view->print != NULL) {
    view->print(result);
  } else if (result != NULL && view != NULL) {
    cli_table(stdout, result, view->cols);
  } else if (result != NULL) {
    cli_kv(stdout, result);
  }
  cli_jfree(result);
  fflush(stdout);
  cli_close_client(cli);
}

/* ------------------------------------------------------------------------ */
/* Colours                                                                  */

static int cli_colours;

void cli_colour_init(int json) {
  const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

  cli_colours = !json && isatty(STDOUT_FILENO) && (no == NULL || *no == '\0') &&
                (term == NULL || strcmp(term, "dumb") != 0);
}

int cli_colour_on(void) {
  return cli_colours;
}

const char *cli_colour_of(const char *state) {
  static const struct {
    const char *state, *sgr;
  } colours[] = {{"dead", "\033[31m"},
                 {"running", "\033[33m"},
                 {"pending", "\033[36m"},
                 {"delayed", "\033[34m"},
                 {"completed", "\033[32m"},
                 {"waiting-children", "\033[35m"},
                 {"waiting_children", "\033[35m"}};
  size_t i;

  if (!cli_colours || state == NULL)
    return NULL;
  for (i = 0; i < sizeof(colours) / sizeof(colours[0]); i++)
    if (strcmp(state, colours[i].state) == 0)
      return colours[i].sgr;
  return NULL;
}

const char *cli_bold(void) {
  return cli_colours ? "\033[1m" : "";
}

const char *cli_reset(void) {
  return cli_colours ? "\033[0m" : "";
}
