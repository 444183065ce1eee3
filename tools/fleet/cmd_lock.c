/* cmd_lock.c -- `fleet lock get|ls` and `fleet leader get`: the server's
 * view of leases (a leader election is the lock of its name). */
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

static void on_query(fleet_client_t *client, int status,
                     const fleet_lock_info_t *info, void *ud) {
  cli_query_t *q = ud;
  cli_json_t *o = q->res;

  (void)client;
  if (status == 0) {
    cli_jadd(o, "held", cli_jbool(info->held));
    cli_jadd(o, "owner",
             info->held ? cli_jbytes(info->owner, info->owner_len)
                        : cli_jnull());
    cli_jadd(o, "token", cli_jint((int64_t)info->token));
    cli_jadd(o, "ttl_ms", cli_jint(info->ttl_ms));
    cli_jadd(o, "fence", cli_jint((int64_t)info->fence));
  }
  cli_query_answered(q, status, NULL);
}

int cli_q_lock_get(cli_t *cli, const char *name, cli_done_fn done, void *arg) {
  cli_query_t *q = cli_query_new(sizeof(*q), cli, done, arg);

  if (q == NULL)
    return FLEET_ENOMEM;
  q->res = cli_jobj();
  cli_jadd(q->res, "name", cli_jstr(name));
  return cli_query_sent(q, fleet_lock_query(&cli->client, name, on_query, q));
}

int cli_q_lock_ls(cli_t *cli, const char *glob, cli_done_fn done, void *arg) {
  return cli_scan_map(cli, FLEET_OBJECT_LOCK, glob, LOCK_LS_MAX, cli_q_lock_get,
                      done, arg);
}

int cli_q_lock_ls_all(cli_t *cli, cli_done_fn done, void *arg) {
  return cli_q_lock_ls(cli, "*", done, arg);
}

static const char *const lock_cols[] = {"name",   "held",  "owner", "token",
                                        "ttl_ms", "fence", NULL};
static const cli_view_t lock_view = {lock_cols, NULL};

int cli_cmd_lock(cli_t *cli, int argc, char **argv) {
  const char *verb = argc > 1 ? argv[1] : NULL;
  const char *match = NULL;
  const cli_optdef_t ls_opts[] = {CLI_OPT("--match", &match), CLI_OPT_END};
  int err;

  if ((err = cli_noun_help(argc, argv, lock_usage)) != 0)
    return err;
  argc--, argv++;
  if ((err = cli_opts("lock", &argc, argv,
                      strcmp(verb, "ls") == 0 ? ls_opts : NULL)) != 0)
    return err;
  if (strcmp(verb, "get") == 0 && argc == 2) {
    err = cli_q_lock_get(cli, argv[1], cli_finish, NULL);
  } else if (strcmp(verb, "ls") == 0) {
    if (argc != 1)
      return cli_usage_error("lock", "%s takes only --match", verb);
    err = cli_q_lock_ls(cli, match != NULL ? match : "*", cli_finish,
                        (void *)&lock_view);
  } else {
    return cli_usage_error("lock", "bad usage of %s", verb);
  }
  return cli_started(cli, verb, err);
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

  if ((err = cli_noun_help(argc, argv, leader_usage)) != 0)
    return err;
  if ((err = cli_opts("leader", &argc, argv, NULL)) != 0)
    return err;
  if (argc != 3 || strcmp(argv[1], "get") != 0) {
    fputs(leader_usage, stderr);
    return 2;
  }
  return cli_started(cli, "get",
                     cli_q_lock_get(cli, argv[2], leader_done, NULL));
}
