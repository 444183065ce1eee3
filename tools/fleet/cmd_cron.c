/* cmd_cron.c -- `fleet cron ls|get|history|enable|disable|remove`: the
 * definitions of a cron namespace (expression, zone, enabled, next due,
 * last fired, start, end, fire limit, fires, state), one of them, the
 * dispatch log of one definition, and the changes to one, through the
 * library's public registry calls (fleet_cron_list(), fleet_cron_history(),
 * fleet_cron_enable(), fleet_cron_remove()) on a scheduler handle that is
 * initialized but never started: it sends nothing of its own, fires
 * nothing, and is closed once the answer is in. */
#include <stdlib.h>
#include <string.h>

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
    "                                    enabled, next due, last fired,\n"
    "                                    fires, fire limit, start, end,\n"
    "                                    state (active, not started or\n"
    "                                    finished)\n"
    "  get KEY [--ns NS]                 definition KEY, a field a line\n"
    "  history KEY [--ns NS] [--limit N] the newest N (1..1000, default "
    "20)\n"
    "                                    occurrences of definition KEY\n"
    "  enable KEY [--ns NS]              the schedule of KEY runs again\n"
    "  disable KEY [--ns NS]             no occurrence of KEY fires\n"
    "  trigger KEY [--ns NS]             fires queue definition KEY now, "
    "once\n"
    "  remove KEY [--ns NS]              deletes definition KEY\n";

/* A Unix ms time as "YYYY-MM-DDTHH:MM:SS.mmmZ", or JSON null when < 0. */
static cli_json_t *cron_jtime(int64_t ms) {
  char buf[32];

  return ms > 0 ? cli_jstr(cli_time_iso(ms, buf, sizeof(buf))) : cli_jnull();
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

/* A query on a scheduler handle of its own (closed before the query
 * ends). */
typedef struct {
  cli_query_t base;
  fleet_cron_scheduler_t sched;
} cctx_t;

/* Opens a scheduler of namespace `ns` for a query whose result begins
 * with {"namespace": ns}. NULL (with *err) when it cannot. */
static cctx_t *cctx_open(cli_t *cli, const char *ns, cli_done_fn done,
                         void *arg, int *err) {
  fleet_cron_scheduler_options_t o;
  cctx_t *c = cli_query_new(sizeof(*c), cli, done, arg);

  fleet_cron_scheduler_options_init(&o);
  *err = c == NULL
             ? FLEET_ENOMEM
             : cli_query_open(&c->base, (fleet_handle_t *)&c->sched,
                              fleet_cron_scheduler_init(&cli->client, &c->sched,
                                                        ns, CRON_NODE_ID, &o),
                              "namespace", ns);
  return *err == 0 ? c : NULL;
}

/* The state of definition `d`: "finished" (past its end or at its fire
 * limit), "not started" (its start ahead) or "active". */
static const char *def_state(const fleet_cron_def_t *d) {
  if (d->finished)
    return "finished";
  return d->not_started ? "not started" : "active";
}

/* Adds the fields of definition `d` to object `o`. */
static void def_json(cli_json_t *o, const fleet_cron_def_t *d) {
  cli_jadd(o, "key", cli_jstr(d->key));
  cli_jadd(o, "expr", cli_jstr(d->expr));
  cli_jadd(o, "tz",
           cli_jstr(d->tz != NULL && d->tz[0] != '\0' ? d->tz : "UTC"));
  cli_jadd(o, "enabled", cli_jbool(!d->disabled));
  cli_jadd(o, "queue",
           d->queue != NULL && d->queue[0] != '\0' ? cli_jstr(d->queue)
                                                   : cli_jnull());
  cli_jadd(o, "pool",
           d->pool != NULL && d->pool[0] != '\0' ? cli_jstr(d->pool)
                                                 : cli_jnull());
  cli_jadd(o, "catch_up", cli_jstr(catch_up_name(d->catch_up)));
  cli_jadd(o, "next_due", cron_jtime(d->next_due_ms));
  cli_jadd(o, "next_due_ms", cli_jint(d->next_due_ms));
  cli_jadd(o, "last_fired", cron_jtime(d->last_fire_ms));
  cli_jadd(o, "last_fire_ms", cli_jint(d->last_fire_ms));
  cli_jadd(o, "last_token", cli_jint((int64_t)d->last_token));
  cli_jadd(o, "start", d->start_ms > 0 ? cron_jtime(d->start_ms) : cli_jnull());
  cli_jadd(o, "end", d->end_ms > 0 ? cron_jtime(d->end_ms) : cli_jnull());
  cli_jadd(o, "max_fires",
           d->max_fires > 0 ? cli_jint((int64_t)d->max_fires) : cli_jnull());
  cli_jadd(o, "fires", cli_jint((int64_t)d->fires));
  cli_jadd(o, "finished", cli_jbool(d->finished));
  cli_jadd(o, "not_started", cli_jbool(d->not_started));
  cli_jadd(o, "state", cli_jstr(def_state(d)));
  cli_jadd(o, "created", cron_jtime(d->created_ms));
  cli_jadd(o, "updated", cron_jtime(d->updated_ms));
}

/* ls ----------------------------------------------------------------- */

static void on_list(fleet_cron_scheduler_t *sched, int status,
                    const fleet_cron_def_t *defs, size_t n, void *user_data) {
  cctx_t *c = user_data;
  cli_json_t *arr;
  size_t i;

  (void)sched;
  if (status == 0) {
    arr = cli_jadd(c->base.res, "definitions", cli_jarr());
    cli_jadd(c->base.res, "count", cli_jint((int64_t)n));
    for (i = 0; i < n; i++)
      def_json(cli_jadd(arr, NULL, cli_jobj()), &defs[i]);
  }
  cli_query_answered(&c->base, status, NULL);
}

int cli_q_cron_ls(cli_t *cli, const char *ns, cli_done_fn done, void *arg) {
  int err;
  cctx_t *c = cctx_open(cli, ns, done, arg, &err);

  if (c != NULL)
    err =
        cli_query_sent(&c->base, fleet_cron_list(&c->sched, NULL, on_list, c));
  return err;
}

int cli_q_cron_ls_all(cli_t *cli, cli_done_fn done, void *arg) {
  return cli_scan_map(cli, FLEET_OBJECT_CRON, "*", CRON_LS_MAX, cli_q_cron_ls,
                      done, arg);
}

/* get ---------------------------------------------------------------- */

static void on_get(fleet_cron_scheduler_t *sched, int status,
                   const fleet_cron_def_t *defs, size_t n, void *user_data) {
  cctx_t *c = user_data;

  (void)sched;
  if (status == 0 && n == 1)
    def_json(c->base.res, &defs[0]);
  cli_query_answered(&c->base, status == 0 && n != 1 ? FLEET_EPROTO : status,
                     NULL);
}

/* Definition `key` of namespace `ns`: {"namespace": ns, then its fields as
 * `ls` gives them}; FLEET_ENOTFOUND when it is not defined. */
static int cron_q_get(cli_t *cli, const char *ns, const char *key,
                      cli_done_fn done, void *arg) {
  int err;
  cctx_t *c = cctx_open(cli, ns, done, arg, &err);

  if (c != NULL)
    err = cli_query_sent(&c->base, fleet_cron_list(&c->sched, key, on_get, c));
  return err;
}

/* history ------------------------------------------------------------ */

static void on_history(fleet_cron_scheduler_t *sched, int status,
                       const fleet_cron_entry_t *e, size_t n, void *user_data) {
  cctx_t *c = user_data;
  cli_json_t *arr, *o;
  size_t i;

  (void)sched;
  if (status == 0) {
    arr = cli_jadd(c->base.res, "entries", cli_jarr());
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
  cli_query_answered(&c->base, status, NULL);
}

int cli_q_cron_history(cli_t *cli, const char *ns, const char *key,
                       uint32_t limit, cli_done_fn done, void *arg) {
  int err;
  cctx_t *c = cctx_open(cli, ns, done, arg, &err);

  if (c == NULL)
    return err;
  cli_jadd(c->base.res, "key", cli_jstr(key));
  return cli_query_sent(
      &c->base, fleet_cron_history(&c->sched, key, limit, on_history, c));
}

/* The command ---------------------------------------------------------- */

static const char *const ls_cols[] = {
    "key",  "expr",  "tz",        "enabled", "next_due", "last_fired", "queue",
    "pool", "fires", "max_fires", "start",   "end",      "state",      NULL};
static const char *const hist_cols[] = {"fire_time",  "node",    "token",
                                        "dispatched", "outcome", NULL};

/* Prints the definitions of a namespace: a count, then a table. */
static void print_defs(const cli_json_t *res) {
  const cli_json_t *defs = cli_jget(res, "definitions");

  fleet_escape_print(stdout, "namespace %s: %zu definition(s)",
                     cli_jget(res, "namespace")->str, defs->n);
  if (defs->n > 0)
    cli_table(stdout, defs, ls_cols);
}

/* Prints a dispatch log: a count, then a table. */
static void print_history(const cli_json_t *res) {
  const cli_json_t *ents = cli_jget(res, "entries");

  fleet_escape_print(stdout, "cron %s in namespace %s: %zu entr%s",
                     cli_jget(res, "key")->str, cli_jget(res, "namespace")->str,
                     ents->n, ents->n == 1 ? "y" : "ies");
  if (ents->n > 0)
    cli_table(stdout, ents, hist_cols);
}

static const cli_view_t ls_view = {NULL, print_defs};
static const cli_view_t history_view = {NULL, print_history};

int cli_cmd_cron(cli_t *cli, int argc, char **argv) {
  const char *verb = argc > 1 ? argv[1] : NULL;
  const char *ns = NULL, *lim = NULL;
  const cli_optdef_t ls_opts[] = {CLI_OPT("--ns", &ns), CLI_OPT_END};
  const cli_optdef_t history_opts[] = {CLI_OPT("--ns", &ns),
                                       CLI_OPT("--limit", &lim), CLI_OPT_END};
  uint64_t limit = 20;
  int err;

  if ((err = cli_noun_help(argc, argv, cron_usage)) != 0)
    return err;
  if (strcmp(verb, "ls") == 0) {
    if ((err = cli_opts("cron", &argc, argv, ls_opts)) != 0)
      return err;
    if (argc != 2)
      return cli_usage_error("cron", "ls takes no argument: %s", argv[2]);
    err = cli_q_cron_ls(cli, ns != NULL ? ns : CRON_DEFAULT_NS, cli_finish,
                        (void *)&ls_view);
  } else if (strcmp(verb, "get") == 0) {
    if ((err = cli_opts("cron", &argc, argv, ls_opts)) != 0)
      return err;
    if (argc != 3)
      return cli_usage_error("cron", "%s takes a cron key", verb);
    err = cron_q_get(cli, ns != NULL ? ns : CRON_DEFAULT_NS, argv[2],
                     cli_finish, NULL);
  } else if (strcmp(verb, "history") == 0) {
    if ((err = cli_opts("cron", &argc, argv, history_opts)) != 0)
      return err;
    if (lim != NULL && cli_parse_u64(lim, 1, 1000, &limit) != 0)
      return cli_usage_error("cron", "--limit: 1 to 1000 (got %s)", lim);
    if (argc != 3)
      return cli_usage_error("cron", "%s takes a cron key", verb);
    err =
        cli_q_cron_history(cli, ns != NULL ? ns : CRON_DEFAULT_NS, argv[2],
                           (uint32_t)limit, cli_finish, (void *)&history_view);
  } else if (cli_cron_admin_verb(verb)) {
    if ((err = cli_opts("cron", &argc, argv, ls_opts)) != 0)
      return err;
    return cli_cmd_cron_admin(cli, ns != NULL ? ns : CRON_DEFAULT_NS, argc - 1,
                              argv + 1);
  } else {
    return cli_usage_error("cron", "unknown verb %s", verb);
  }
  return cli_started(cli, verb, err);
}
