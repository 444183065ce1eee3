/* cmd_warmpool.c -- `fleet warmpool snapshot P`: a warm pool's state and
 * counts, read with the library's public fleet_warmpool_snapshot() on a
 * node handle that is initialized but never started (it does not
 * campaign, create, or store a fingerprint; its create and destroy
 * callbacks are never called), closed once the answer is in. "idle" is
 * every idle resource not expired yet. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "map.h"

#define WARMPOOL_OWNER "fleet-cli"
#define WARMPOOL_LS_MAX 10000

static const char warmpool_usage[] =
    "usage: fleet warmpool <verb>\n"
    "  snapshot P   the state of warm pool P: idle, target, borrowed,\n"
    "               creating, primary and its token, failures, backoff,\n"
    "               last error\n";

/* A query on a warm pool handle of its own (closed before the query
 * ends). */
typedef struct {
  cli_query_t base;
  fleet_warmpool_t pool;
} wctx_t;

static void on_snapshot(fleet_warmpool_t *pool, int status,
                        const fleet_warmpool_snapshot_t *s, void *user_data) {
  wctx_t *w = user_data;
  cli_json_t *o = w->base.res;

  (void)pool;
  if (status == 0) {
    cli_jadd(o, "state", cli_jstr(fleet_warmpool_state_name((int)s->state)));
    cli_jadd(o, "idle", cli_jint((int64_t)s->idle));
    cli_jadd(o, "target", s->target < 0 ? cli_jnull() : cli_jint(s->target));
    cli_jadd(o, "borrowed", cli_jint((int64_t)s->borrowed));
    cli_jadd(o, "creating", cli_jint((int64_t)s->creating));
    cli_jadd(o, "destroying", cli_jint((int64_t)s->destroying));
    cli_jadd(o, "primary",
             s->primary != NULL && s->primary[0] != '\0' ? cli_jstr(s->primary)
                                                         : cli_jnull());
    cli_jadd(o, "primary_token", cli_jint((int64_t)s->primary_token));
    cli_jadd(o, "primary_ttl_ms", cli_jint(s->primary_ttl_ms));
    cli_jadd(o, "failures", cli_jint((int64_t)s->failures));
    cli_jadd(o, "backoff_ms", cli_jint((int64_t)s->backoff_ms));
    cli_jadd(o, "last_error",
             s->last_error != NULL && s->last_error[0] != '\0'
                 ? cli_jstr(s->last_error)
                 : cli_jnull());
    cli_jadd(o, "fingerprint",
             s->fingerprint != NULL && s->fingerprint[0]
                 ? cli_jstr(s->fingerprint)
                 : cli_jnull());
  }
  cli_query_answered(&w->base, status, NULL);
}

int cli_q_warmpool_snapshot(cli_t *cli, const char *name, cli_done_fn done,
                            void *arg) {
  fleet_warmpool_options_t o;
  wctx_t *w = cli_query_new(sizeof(*w), cli, done, arg);
  int err;

  fleet_warmpool_options_init(&o);
  o.client_only = 1;
  /* `idle` counts the entries not expired yet (the snapshot counts those
   * with at least min_remaining_ms left; a node's own count may be lower,
   * as it hands out only those with its min_remaining_ms left). */
  o.min_remaining_ms = 1;
  err = w == NULL
            ? FLEET_ENOMEM
            : cli_query_open(&w->base, (fleet_handle_t *)&w->pool,
                             fleet_warmpool_init(&cli->client, &w->pool, name,
                                                 WARMPOOL_OWNER, &o),
                             "pool", name);
  if (err != 0)
    return err;
  return cli_query_sent(&w->base,
                        fleet_warmpool_snapshot(&w->pool, on_snapshot, w));
}

/* Every pool: the names of the pools with a meta hash (written by the
 * first node that starts). */
int cli_q_warmpool_ls(cli_t *cli, cli_done_fn done, void *arg) {
  return cli_scan_map(cli, FLEET_OBJECT_WARMPOOL, "*", WARMPOOL_LS_MAX,
                      cli_q_warmpool_snapshot, done, arg);
}

int cli_cmd_warmpool(cli_t *cli, int argc, char **argv) {
  const char *verb = argc > 1 ? argv[1] : NULL;
  int err;

  if ((err = cli_noun_help(argc, argv, warmpool_usage)) != 0)
    return err;
  if ((err = cli_opts("warmpool", &argc, argv, NULL)) != 0)
    return err;
  if (strcmp(verb, "snapshot") != 0 || argc != 3)
    return cli_usage_error("warmpool", "bad usage of %s", verb);
  return cli_started(cli, verb,
                     cli_q_warmpool_snapshot(cli, argv[2], cli_finish, NULL));
}
