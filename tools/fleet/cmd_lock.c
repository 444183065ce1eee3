/* cmd_lock.c -- `fleet lock get|ls` and `fleet leader get`: the server's
 * view of leases (a leader election is the lock of its name). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "map.h"

/* Locks `lock ls` lists at most. */
#define LOCK_LS_MAX 10000

static const char lock_usage[] =
    "usage: fleet lock <verb>\n"
    "  get NAME               who holds the lock, its token and TTL\n"
    "  ls [--match PATTERN]   every lock (a glob on the name; SCAN, never "
    "KEYS)\n";
static const char leader_usage[] =
    "usage: fleet leader get NAME   who leads the election NAME\n";

typedef struct {
  cli_t *cli;
  cli_done_fn done;
  void *arg;
  char *name;
} lctx_t;

static void on_query(fleet_client_t *client, int status,
                     const fleet_lock_info_t *info, void *ud) {
  lctx_t *l = ud;
  cli_json_t *o = NULL;
  const char *detail = NULL;

  (void)client;
  l->cli->inflight--;
  if (status == 0) {
    o = cli_jobj();
    cli_jadd(o, "name", cli_jstr(l->name));
    cli_jadd(o, "held", cli_jbool(info->held));
    cli_jadd(o, "owner",
             info->held ? cli_jbytes(info->owner, info->owner_len)
                        : cli_jnull());
    cli_jadd(o, "token", cli_jint((int64_t)info->token));
    cli_jadd(o, "ttl_ms", cli_jint(info->ttl_ms));
    cli_jadd(o, "fence", cli_jint((int64_t)info->fence));
    if (o == NULL || o->num == -1) {
      cli_jfree(o);
      o = NULL;
      status = FLEET_ENOMEM;
    }
  } else {
    detail = fleet_client_last_error(&l->cli->client);
  }
  l->done(l->cli, status, detail, o, l->arg);
  free(l->name);
  free(l);
}

int cli_q_lock_get(cli_t *cli, const char *name, cli_done_fn done, void *arg) {
  lctx_t *l = calloc(1, sizeof(*l));
  int err;

  if (l == NULL || (l->name = strdup(name)) == NULL) {
    free(l);
    return FLEET_ENOMEM;
  }
  l->cli = cli;
  l->done = done;
  l->arg = arg;
  err = fleet_lock_query(&cli->client, name, on_query, l);
  if (err != 0) {
    free(l->name);
    free(l);
    return err;
  }
  cli->inflight++;
  return 0;
}

int cli_q_lock_ls(cli_t *cli, const char *glob, cli_done_fn done, void *arg) {
  return cli_scan_map(cli, FLEET_OBJECT_LOCK, glob, LOCK_LS_MAX, cli_q_lock_get,
                      done, arg);
}

static const char *const lock_cols[] = {"name",   "held",  "owner", "token",
                                        "ttl_ms", "fence", NULL};

int cli_cmd_lock(cli_t *cli, int argc, char **argv) {
  const char *verb = argc > 1 ? argv[1] : NULL;
  const char *match;
  int err;

  if (verb == NULL || cli_is_help(verb) || (argc > 2 && cli_is_help(argv[2]))) {
    fputs(lock_usage, verb == NULL ? stderr : stdout);
    return verb == NULL ? 2 : CLI_DONE;
  }
  argc--, argv++;
  if (strcmp(verb, "get") == 0 && argc == 2) {
    err = cli_q_lock_get(cli, argv[1], cli_finish, NULL);
  } else if (strcmp(verb, "ls") == 0) {
    match = cli_opt(&argc, argv, "--match");
    if (argc != 1) {
      fprintf(stderr, "fleet lock: ls takes only --match (see fleet lock "
                      "--help)\n");
      return 2;
    }
    err = cli_q_lock_ls(cli, match != NULL ? match : "*", cli_finish,
                        (void *)lock_cols);
  } else {
    fleet_escape_print(
        stderr, "fleet lock: bad usage of %s (see fleet lock --help)", verb);
    return 2;
  }
  if (err != 0) {
    cli_error(cli, verb, err, NULL);
    return 1;
  }
  return 0;
}

/* `leader get`: the lock's view, named for an election. */
static void leader_done(cli_t *cli, int status, const char *detail,
                        cli_json_t *res, void *arg) {
  cli_json_t *o = NULL;

  (void)arg;
  if (status == 0) {
    int held = (int)cli_jget(res, "held")->num;

    o = cli_jobj();
    cli_jadd(o, "election", cli_jstr(cli_jget(res, "name")->str));
    cli_jadd(o, "leader",
             held ? cli_jstr(cli_jget(res, "owner")->str) : cli_jnull());
    cli_jadd(o, "token", cli_jint(cli_jget(res, "token")->num));
    cli_jadd(o, "ttl_ms", cli_jint(held ? cli_jget(res, "ttl_ms")->num : 0));
    cli_jfree(res);
  }
  cli_finish(cli, status, detail, o, NULL);
}

int cli_cmd_leader(cli_t *cli, int argc, char **argv) {
  int err;

  if (argc > 1 &&
      (cli_is_help(argv[1]) || (argc > 2 && cli_is_help(argv[2])))) {
    fputs(leader_usage, stdout);
    return CLI_DONE;
  }
  if (argc != 3 || strcmp(argv[1], "get") != 0) {
    fputs(leader_usage, stderr);
    return 2;
  }
  err = cli_q_lock_get(cli, argv[2], leader_done, NULL);
  if (err != 0) {
    cli_error(cli, "get", err, NULL);
    return 1;
  }
  return 0;
}
