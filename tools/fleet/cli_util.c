/* cli_util.c -- what every command of the fleet CLI shares (cli.h): its
 * one-line error, its options and usage, and how it ends (the result
 * printed, the exit code, the client closed). main.c runs the commands;
 * the nouns' files and the dashboard call these. */
#include <stdlib.h>
#include <string.h>

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

void cli_error(cli_t *cli, const char *what, int status, const char *detail) {
  const char *name, *reach = "";
  size_t nl;

  if (cli != NULL && cli->what[0] != '\0')
    what = cli->what;
  /* The backend was never reached: that is the one thing to say, with
   * the cause of the first failed attempt (a command that failed for
   * want of a connection may tell it before the state callback does). */
  if (cli != NULL && !cli->ready && cli_connection_error(status)) {
    if (cli->conn_status != 0) {
      status = cli->conn_status;
      detail = cli->conn_detail;
    }
    reach = "cannot reach the backend at ";
  }
  name = fleet_err_name(status);
  nl = strlen(name);
  /* A script's error text starts with the code's name: said once. */
  if (detail != NULL && strncmp(detail, name, nl) == 0 && detail[nl] == ' ')
    detail += nl + 1;
  if (detail == NULL || detail[0] == '\0')
    detail = fleet_strerror(status);
  if (reach[0] != '\0')
    fleet_escape_print(stderr, "fleet: %s: %s%s: %s (%s)", what, reach,
                       cli->url_shown, name, detail);
  else
    fleet_escape_print(stderr, "fleet: %s: %s (%s)", what, name, detail);
}

int cli_is_help(const char *s) {
  return s != NULL && (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0);
}

int cli_noun_help(int argc, char **argv, const char *usage) {
  if (argc < 2) {
    fputs(usage, stderr);
    return 2;
  }
  if (cli_is_help(argv[1]) || (argc > 2 && cli_is_help(argv[2]))) {
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
