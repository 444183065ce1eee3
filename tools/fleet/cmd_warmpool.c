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

typedef struct {
  cli_t *cli;
  cli_done_fn done;
  void *arg;
  fleet_warmpool_t pool;
  cli_json_t *res;
  int status;
  char *detail;
  int answer;
} wctx_t;

/* Never called: the node is not started and acquires nothing. */
static void wp_unused(fleet_warmpool_t *pool, fleet_warmpool_work_t *work) {
  fleet_warmpool_work_done(work, FLEET_ECANCELED, "fleet-cli reads only");
  (void)pool;
}

static void wctx_closed(fleet_handle_t *h) {
  wctx_t *w = h->data;

  if (w->answer) {
    w->cli->inflight--;
    w->done(w->cli, w->status, w->detail, w->status == 0 ? w->res : NULL,
            w->arg);
    if (w->status != 0)
      cli_jfree(w->res);
  } else {
    cli_jfree(w->res);
  }
  free(w->detail);
  free(w);
}

static void on_snapshot(fleet_warmpool_t *pool, int status,
                        const fleet_warmpool_snapshot_t *s, void *user_data) {
  wctx_t *w = user_data;
  cli_json_t *o = w->res;
  const char *d;

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
    if (o == NULL || o->num == -1)
      status = FLEET_ENOMEM;
  } else {
    d = fleet_client_last_error(&w->cli->client);
    w->detail = d != NULL && d[0] != '\0' ? strdup(d) : NULL;
  }
  w->status = status;
  fleet_warmpool_close(&w->pool, wctx_closed);
}

int cli_q_warmpool_snapshot(cli_t *cli, const char *name, cli_done_fn done,
                            void *arg) {
  fleet_warmpool_callbacks_t cbs;
  fleet_warmpool_options_t o;
  wctx_t *w = calloc(1, sizeof(*w));
  int err;

  if (w == NULL)
    return FLEET_ENOMEM;
  w->cli = cli;
  w->done = done;
  w->arg = arg;
  memset(&cbs, 0, sizeof(cbs));
  cbs.create = wp_unused;
  cbs.destroy = wp_unused;
  fleet_warmpool_options_init(&o);
  o.client_only = 1;
  /* `idle` counts the entries not expired yet (the snapshot counts those
   * with at least min_remaining_ms left; a node's own count may be lower,
   * as it hands out only those with its min_remaining_ms left). */
  o.min_remaining_ms = 1;
  err = fleet_warmpool_init(&cli->client, &w->pool, name, WARMPOOL_OWNER, &cbs,
                            &o);
  if (err != 0) {
    free(w);
    return err;
  }
  w->pool.data = w;
  w->res = cli_jobj();
  cli_jadd(w->res, "pool", cli_jstr(name));
  if (w->res == NULL || w->res->num == -1)
    err = FLEET_ENOMEM;
  else
    err = fleet_warmpool_snapshot(&w->pool, on_snapshot, w);
  if (err != 0) {
    fleet_warmpool_close(&w->pool, wctx_closed);
    return err;
  }
  w->answer = 1;
  cli->inflight++;
  return 0;
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

  if (verb == NULL || cli_is_help(verb) || (argc > 2 && cli_is_help(argv[2]))) {
    fputs(warmpool_usage, verb == NULL ? stderr : stdout);
    return verb == NULL ? 2 : CLI_DONE;
  }
  if (strcmp(verb, "snapshot") == 0 && argc == 3) {
    err = cli_q_warmpool_snapshot(cli, argv[2], cli_finish, NULL);
  } else {
    fleet_escape_print(
        stderr, "fleet warmpool: bad usage of %s (see fleet warmpool --help)",
        verb);
    return 2;
  }
  if (err != 0) {
    cli_error(cli, verb, err, NULL);
    return 1;
  }
  return 0;
}
