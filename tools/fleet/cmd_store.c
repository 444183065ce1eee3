/* cmd_store.c -- `fleet store get|ls|delete|events`: records of a store (the
 * default store prefix "<prefix>:store", as fleet_store_init() without options;
 * --store-prefix for another). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define STORE_LS_LIMIT 100

static const char store_usage[] =
    "usage: fleet store <verb> [--store-prefix SP]\n"
    "  get COLLECTION ID                 one record: value and TTL\n"
    "  ls COLLECTION INDEX VALUE [--limit N]\n"
    "                                    the records indexed under "
    "INDEX=VALUE\n"
    "  delete COLLECTION ID              deletes a record, its index entries "
    "and\n"
    "                                    its events\n"
    "  events COLLECTION ID [--count N]  the newest N (1..1000, default 20)\n"
    "                                    events of a record, oldest first\n";

/* A query on a store handle of its own (closed before the query ends). */
typedef struct {
  cli_query_t base;
  fleet_store_t store;
} sctx_t;

/* Opens the store (cli->store_prefix) for a query on collection `coll`,
 * whose result begins with {"collection": coll}. NULL (with *err) when it
 * cannot. */
static sctx_t *sctx_open(cli_t *cli, const char *coll, cli_done_fn done,
                         void *arg, int *err) {
  fleet_store_options_t o;
  sctx_t *s = cli_query_new(sizeof(*s), cli, done, arg);

  fleet_store_options_init(&o);
  o.prefix = cli->store_prefix;
  *err = s == NULL
             ? FLEET_ENOMEM
             : cli_query_open(&s->base, (fleet_handle_t *)&s->store,
                              fleet_store_init(&cli->client, &s->store, &o),
                              "collection", coll);
  return *err == 0 ? s : NULL;
}

static void on_get(fleet_store_t *st, int status, fleet_bytes_t value,
                   uint64_t ttl_ms, void *ud) {
  sctx_t *s = ud;

  (void)st;
  if (status == 0) {
    cli_jadd(s->base.res, "value", cli_jbytes(value.base, value.len));
    cli_jadd(s->base.res, "ttl_ms", cli_jint((int64_t)ttl_ms));
  }
  cli_query_answered(&s->base, status, NULL);
}

int cli_q_store_get(cli_t *cli, const char *coll, const char *id,
                    cli_done_fn done, void *arg) {
  fleet_bytes_t b = {id, strlen(id)};
  int err;
  sctx_t *s = sctx_open(cli, coll, done, arg, &err);

  if (s == NULL)
    return err;
  cli_jadd(s->base.res, "id", cli_jstr(id));
  return cli_query_sent(&s->base,
                        fleet_store_get(&s->store, coll, b, on_get, s));
}

static void on_list(fleet_store_t *st, int status,
                    const fleet_store_item_t *items, size_t n,
                    fleet_bytes_t next, void *ud) {
  sctx_t *s = ud;
  cli_json_t *arr, *o;
  size_t i;

  (void)st;
  if (status == 0) {
    arr = cli_jadd(s->base.res, "records", cli_jarr());
    for (i = 0; i < n; i++) {
      o = cli_jadd(arr, NULL, cli_jobj());
      cli_jadd(o, "id", cli_jbytes(items[i].id.base, items[i].id.len));
      cli_jadd(o, "value", cli_jbytes(items[i].value.base, items[i].value.len));
    }
    cli_jadd(s->base.res, "more", cli_jbool(next.len > 0));
  }
  cli_query_answered(&s->base, status, NULL);
}

int cli_q_store_ls(cli_t *cli, const char *coll, const char *index,
                   const char *value, size_t limit, cli_done_fn done,
                   void *arg) {
  fleet_bytes_t v = {value, strlen(value)}, none = {NULL, 0};
  int err;
  sctx_t *s = sctx_open(cli, coll, done, arg, &err);

  if (s == NULL)
    return err;
  cli_jadd(s->base.res, "index", cli_jstr(index));
  cli_jadd(s->base.res, "value", cli_jstr(value));
  return cli_query_sent(&s->base, fleet_store_list(&s->store, coll, index, v,
                                                   none, limit, on_list, s));
}

static const char *const rec_cols[] = {"id", "value", NULL};

/* Prints the records of `ls` as a table, and whether there are more. */
static void print_records(const cli_json_t *res) {
  cli_table(stdout, cli_jget(res, "records"), rec_cols);
  if (cli_jget(res, "more")->num)
    printf("(more records: raise --limit)\n");
}

static const cli_view_t ls_view = {NULL, print_records};

int cli_cmd_store(cli_t *cli, int argc, char **argv) {
  const char *verb = argc > 1 ? argv[1] : NULL;
  const char *limit_s = NULL;
  const cli_optdef_t get_opts[] = {
      CLI_OPT("--store-prefix", &cli->store_prefix), CLI_OPT_END};
  const cli_optdef_t ls_opts[] = {CLI_OPT("--store-prefix", &cli->store_prefix),
                                  CLI_OPT("--limit", &limit_s), CLI_OPT_END};
  uint64_t limit = STORE_LS_LIMIT;
  int err;

  if ((err = cli_noun_help(argc, argv, store_usage)) != 0)
    return err;
  argc--, argv++;
  if (cli_store_admin_verb(verb)) {
    cli->store_prefix = cli_opt(&argc, argv, "--store-prefix");
    return cli_cmd_store_admin(cli, argc, argv);
  }
  if ((err = cli_opts("store", &argc, argv,
                      strcmp(verb, "ls") == 0 ? ls_opts : get_opts)) != 0)
    return err;
  if (limit_s != NULL && cli_parse_u64(limit_s, 1, 1000, &limit) != 0)
    return cli_usage_error("store", "--limit: 1 to 1000 (got %s)", limit_s);
  if (strcmp(verb, "get") == 0 && argc == 3)
    err = cli_q_store_get(cli, argv[1], argv[2], cli_finish, NULL);
  else if (strcmp(verb, "ls") == 0 && argc == 4)
    err = cli_q_store_ls(cli, argv[1], argv[2], argv[3], (size_t)limit,
                         cli_finish, (void *)&ls_view);
  else
    return cli_usage_error("store", "bad usage of %s", verb);
  return cli_started(cli, verb, err);
}
