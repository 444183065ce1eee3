/* cmd_cron.c -- `fleet cron ls|history`: the definitions of a cron
 * namespace (expression, zone, enabled, next due, last fired) and the
 * dispatch log of one definition, read through the library's public
 * registry calls (fleet_cron_list(), fleet_cron_history()) on a scheduler
 * handle that is initialized but never started: it sends nothing of its
 * own, fires nothing, and is closed once the answer is in. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "map.h"

#define CRON_DEFAULT_NS "cron"
#define CRON_NODE_ID "fleet-cli"
#define CRON_LS_MAX 10000

static const char cron_usage[] =
    "usage: fleet cron <verb>\n"
    "  ls [--ns NS]                      the definitions of namespace NS\n"
    "                                    (default \"" CRON_DEFAULT_NS
    "\"): expression, zone,\n"
    "                                    enabled, next due, last fired\n"
    "  history KEY [--ns NS] [--limit N] the newest N (1..1000, default "
    "20)\n"
    "                                    occurrences of definition KEY\n";

/* A Unix ms time as "YYYY-MM-DDTHH:MM:SS.mmmZ", or JSON null when < 0. */
static cli_json_t *cron_jtime(int64_t ms) {
  char buf[96];
  struct tm tm;
  time_t t;

  if (ms < 0)
    return cli_jnull();
  t = (time_t)(ms / 1000);
  if (gmtime_r(&t, &tm) == NULL)
    return cli_jnull();
  snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
           tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
           tm.tm_sec, (int)(ms % 1000));
  return cli_jstr(buf);
}

static const char *catch_up_name(fleet_cron_catch_up_t c) {
  switch (c) {
#define CRON_CU_CASE(name, str)                                                \
  case FLEET_CRON_CATCH_UP_##name:                                             \
    return str;
    FLEET_CRON_CATCH_UP_MAP(CRON_CU_CASE)
#undef CRON_CU_CASE
    default:
      return "unknown";
  }
}

/* One query on a scheduler handle of its own. */
typedef struct {
  cli_t *cli;
  cli_done_fn done;
  void *arg;
  fleet_cron_scheduler_t sched;
  cli_json_t *res;
  int status;
  char *detail;
  int answer; /* whether `done` runs (not when the call failed at once) */
} cctx_t;

static void cctx_closed(fleet_handle_t *h) {
  cctx_t *c = h->data;

  if (c->answer) {
    c->cli->inflight--;
    c->done(c->cli, c->status, c->detail, c->status == 0 ? c->res : NULL,
            c->arg);
    if (c->status != 0)
      cli_jfree(c->res);
  } else {
    cli_jfree(c->res);
  }
  free(c->detail);
  free(c);
}

static void cctx_end(cctx_t *c, int status) {
  const char *d;

  if (status != 0 && c->status == 0) {
    d = fleet_client_last_error(&c->cli->client);
    c->status = status;
    c->detail = d != NULL && d[0] != '\0' ? strdup(d) : NULL;
  }
  if (c->status == 0 && (c->res == NULL || c->res->num == -1))
    c->status = FLEET_ENOMEM;
  fleet_cron_scheduler_close(&c->sched, cctx_closed);
}

static cctx_t *cctx_new(cli_t *cli, const char *ns, cli_done_fn done, void *arg,
                        int *err) {
  fleet_cron_scheduler_options_t o;
  cctx_t *c = calloc(1, sizeof(*c));

  if (c == NULL) {
    *err = FLEET_ENOMEM;
    return NULL;
  }
  c->cli = cli;
  c->done = done;
  c->arg = arg;
  fleet_cron_scheduler_options_init(&o);
  *err =
      fleet_cron_scheduler_init(&cli->client, &c->sched, ns, CRON_NODE_ID, &o);
  if (*err != 0) {
    free(c);
    return NULL;
  }
  c->sched.data = c;
  return c;
}

/* A call that failed at once: the handle still closes, without answer. */
static int cctx_fail(cctx_t *c, int err) {
  c->answer = 0;
  fleet_cron_scheduler_close(&c->sched, cctx_closed);
  return err;
}

/* ls ----------------------------------------------------------------- */

static void on_list(fleet_cron_scheduler_t *sched, int status,
                    const fleet_cron_def_t *defs, size_t n, void *user_data) {
  cctx_t *c = user_data;
  cli_json_t *arr, *o;
  size_t i;

  (void)sched;
  if (status == 0) {
    arr = cli_jadd(c->res, "definitions", cli_jarr());
    cli_jadd(c->res, "count", cli_jint((int64_t)n));
    for (i = 0; i < n; i++) {
      const fleet_cron_def_t *d = &defs[i];

      o = cli_jadd(arr, NULL, cli_jobj());
      cli_jadd(o, "key", cli_jstr(d->key));
      cli_jadd(o, "expr", cli_jstr(d->expr));
      cli_jadd(o, "tz",
               cli_jstr(d->tz != NULL && d->tz[0] != '\0' ? d->tz : "UTC"));
      cli_jadd(o, "enabled", cli_jbool(!d->disabled));
      cli_jadd(o, "queue",
               d->queue != NULL && d->queue[0] != '\0' ? cli_jstr(d->queue)
                                                       : cli_jnull());
      cli_jadd(o, "catch_up", cli_jstr(catch_up_name(d->catch_up)));
      cli_jadd(o, "next_due", cron_jtime(d->next_due_ms));
      cli_jadd(o, "next_due_ms", cli_jint(d->next_due_ms));
      cli_jadd(o, "last_fired", cron_jtime(d->last_fire_ms));
      cli_jadd(o, "last_fire_ms", cli_jint(d->last_fire_ms));
      cli_jadd(o, "last_token", cli_jint((int64_t)d->last_token));
      cli_jadd(o, "created", cron_jtime(d->created_ms));
      cli_jadd(o, "updated", cron_jtime(d->updated_ms));
    }
  }
  cctx_end(c, status);
}

int cli_q_cron_ls(cli_t *cli, const char *ns, cli_done_fn done, void *arg) {
  cctx_t *c;
  int err;

  if ((c = cctx_new(cli, ns, done, arg, &err)) == NULL)
    return err;
  c->res = cli_jobj();
  cli_jadd(c->res, "namespace", cli_jstr(ns));
  if (c->res == NULL)
    return cctx_fail(c, FLEET_ENOMEM);
  if ((err = fleet_cron_list(&c->sched, NULL, on_list, c)) != 0)
    return cctx_fail(c, err);
  c->answer = 1;
  cli->inflight++;
  return 0;
}

int cli_q_cron_ls_all(cli_t *cli, cli_done_fn done, void *arg) {
  return cli_scan_map(cli, FLEET_OBJECT_CRON, "*", CRON_LS_MAX, cli_q_cron_ls,
                      done, arg);
}

/* history ------------------------------------------------------------ */

static void on_history(fleet_cron_scheduler_t *sched, int status,
                       const fleet_cron_entry_t *e, size_t n, void *user_data) {
  cctx_t *c = user_data;
  cli_json_t *arr, *o;
  size_t i;

  (void)sched;
  if (status == 0) {
    arr = cli_jadd(c->res, "entries", cli_jarr());
    for (i = 0; i < n; i++) {
      o = cli_jadd(arr, NULL, cli_jobj());
      cli_jadd(o, "fire_time", cron_jtime(e[i].fire_ms));
      cli_jadd(o, "fire_ms", cli_jint(e[i].fire_ms));
      cli_jadd(o, "node",
               e[i].node != NULL && e[i].node[0] != '\0' ? cli_jstr(e[i].node)
                                                         : cli_jnull());
      cli_jadd(o, "token", cli_jint((int64_t)e[i].token));
      cli_jadd(o, "dispatched",
               e[i].dispatched_ms > 0 ? cron_jtime(e[i].dispatched_ms)
                                      : cli_jnull());
      cli_jadd(o, "dispatched_ms", cli_jint(e[i].dispatched_ms));
      cli_jadd(o, "finished",
               e[i].finished_ms > 0 ? cron_jtime(e[i].finished_ms)
                                    : cli_jnull());
      cli_jadd(o, "outcome",
               cli_jstr(e[i].outcome != NULL ? e[i].outcome : "unknown"));
    }
  }
  cctx_end(c, status);
}

int cli_q_cron_history(cli_t *cli, const char *ns, const char *key,
                       uint32_t limit, cli_done_fn done, void *arg) {
  cctx_t *c;
  int err;

  if ((c = cctx_new(cli, ns, done, arg, &err)) == NULL)
    return err;
  c->res = cli_jobj();
  cli_jadd(c->res, "namespace", cli_jstr(ns));
  cli_jadd(c->res, "key", cli_jstr(key));
  if (c->res == NULL)
    return cctx_fail(c, FLEET_ENOMEM);
  if ((err = fleet_cron_history(&c->sched, key, limit, on_history, c)) != 0)
    return cctx_fail(c, err);
  c->answer = 1;
  cli->inflight++;
  return 0;
}

/* The command ---------------------------------------------------------- */

static const char *const ls_cols[] = {
    "key", "expr", "tz", "enabled", "next_due", "last_fired", "queue", NULL};
static const char *const hist_cols[] = {"fire_time",  "node",    "token",
                                        "dispatched", "outcome", NULL};

static void ls_done(cli_t *cli, int status, const char *detail, cli_json_t *res,
                    void *arg) {
  cli_json_t *defs;

  (void)arg;
  if (status != 0 || cli->json) {
    cli_finish(cli, status, detail, res, NULL);
    return;
  }
  defs = cli_jget(res, "definitions");
  fleet_escape_print(stdout, "namespace %s: %zu definition(s)",
                     cli_jget(res, "namespace")->str, defs->n);
  if (defs->n > 0)
    cli_table(stdout, defs, ls_cols);
  cli_jfree(res);
  cli_finish(cli, 0, NULL, NULL, NULL);
}

static void history_done(cli_t *cli, int status, const char *detail,
                         cli_json_t *res, void *arg) {
  cli_json_t *ents;

  (void)arg;
  if (status != 0 || cli->json) {
    cli_finish(cli, status, detail, res, NULL);
    return;
  }
  ents = cli_jget(res, "entries");
  fleet_escape_print(stdout, "cron %s in namespace %s: %zu entr%s",
                     cli_jget(res, "key")->str, cli_jget(res, "namespace")->str,
                     ents->n, ents->n == 1 ? "y" : "ies");
  if (ents->n > 0)
    cli_table(stdout, ents, hist_cols);
  cli_jfree(res);
  cli_finish(cli, 0, NULL, NULL, NULL);
}

int cli_cmd_cron(cli_t *cli, int argc, char **argv) {
  const char *verb = argc > 1 ? argv[1] : NULL;
  const char *ns, *lim;
  uint64_t limit = 20;
  int err;

  if (verb == NULL || cli_is_help(verb) || (argc > 2 && cli_is_help(argv[2]))) {
    fputs(cron_usage, verb == NULL ? stderr : stdout);
    return verb == NULL ? 2 : CLI_DONE;
  }
  ns = cli_opt(&argc, argv, "--ns");
  if (ns == NULL)
    ns = CRON_DEFAULT_NS;
  if (strcmp(verb, "ls") == 0 && argc == 2) {
    err = cli_q_cron_ls(cli, ns, ls_done, NULL);
  } else if (strcmp(verb, "history") == 0) {
    lim = cli_opt(&argc, argv, "--limit");
    if (lim != NULL && cli_parse_u64(lim, 1, 1000, &limit) != 0) {
      fleet_escape_print(stderr, "fleet cron: --limit: not in 1..1000: %s",
                         lim);
      return 2;
    }
    if (argc != 3) {
      fprintf(stderr, "fleet cron: bad usage of history (see fleet cron "
                      "--help)\n");
      return 2;
    }
    err = cli_q_cron_history(cli, ns, argv[2], (uint32_t)limit, history_done,
                             NULL);
  } else {
    fleet_escape_print(
        stderr, "fleet cron: bad usage of %s (see fleet cron --help)", verb);
    return 2;
  }
  if (err != 0) {
    cli_error(cli, verb, err, NULL);
    return 1;
  }
  return 0;
}
