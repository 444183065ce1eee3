/* cmd_store.c -- `fleet store get|ls`: records of a store (the default
 * store prefix "<prefix>:store", as fleet_store_init() without options;
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
    "INDEX=VALUE\n";

typedef struct {
  cli_t *cli;
  cli_done_fn done;
  void *arg;
  fleet_store_t store;
  cli_json_t *res;
  int status;
  char *detail;
} sctx_t;

static void sctx_closed(fleet_handle_t *h) {
  sctx_t *s = h->data;

  s->cli->inflight--;
  if (s->status == 0 && (s->res == NULL || s->res->num == -1))
    s->status = FLEET_ENOMEM;
  if (s->status != 0) {
    cli_jfree(s->res);
    s->res = NULL;
  }
  s->done(s->cli, s->status, s->detail, s->res, s->arg);
  free(s->detail);
  free(s);
}

static void sctx_answer(sctx_t *s, int status) {
  if (status != 0) {
    const char *d = fleet_client_last_error(&s->cli->client);

    s->status = status;
    s->detail = d != NULL && d[0] != '\0' ? strdup(d) : NULL;
  }
  fleet_store_close(&s->store, sctx_closed);
}

static sctx_t *sctx_open(cli_t *cli, cli_done_fn done, void *arg, int *err) {
  fleet_store_options_t o;
  sctx_t *s = calloc(1, sizeof(*s));

  if (s == NULL) {
    *err = FLEET_ENOMEM;
    return NULL;
  }
  fleet_store_options_init(&o);
  o.prefix = cli->store_prefix;
  *err = fleet_store_init(&cli->client, &s->store, &o);
  if (*err != 0) {
    free(s);
    return NULL;
  }
  s->store.data = s;
  s->cli = cli;
  s->done = done;
  s->arg = arg;
  s->res = cli_jobj();
  cli->inflight++;
  return s;
}

static void on_get(fleet_store_t *st, int status, fleet_bytes_t value,
                   uint64_t ttl_ms, void *ud) {
  sctx_t *s = ud;

  (void)st;
  if (status == 0) {
    cli_jadd(s->res, "value", cli_jbytes(value.base, value.len));
    cli_jadd(s->res, "ttl_ms", cli_jint((int64_t)ttl_ms));
  }
  sctx_answer(s, status);
}

int cli_q_store_get(cli_t *cli, const char *coll, const char *id,
                    cli_done_fn done, void *arg) {
  fleet_bytes_t b = {id, strlen(id)};
  sctx_t *s;
  int err;

  if ((s = sctx_open(cli, done, arg, &err)) == NULL)
    return err;
  cli_jadd(s->res, "collection", cli_jstr(coll));
  cli_jadd(s->res, "id", cli_jstr(id));
  err = fleet_store_get(&s->store, coll, b, on_get, s);
  if (err != 0) {
    s->status = err;
    fleet_store_close(&s->store, sctx_closed);
  }
  return 0;
}

static void on_list(fleet_store_t *st, int status,
                    const fleet_store_item_t *items, size_t n,
                    fleet_bytes_t next, void *ud) {
  sctx_t *s = ud;
  cli_json_t *arr, *o;
  size_t i;

  (void)st;
  if (status == 0) {
    arr = cli_jadd(s->res, "records", cli_jarr());
    for (i = 0; i < n; i++) {
      o = cli_jadd(arr, NULL, cli_jobj());
      cli_jadd(o, "id", cli_jbytes(items[i].id.base, items[i].id.len));
      cli_jadd(o, "value", cli_jbytes(items[i].value.base, items[i].value.len));
    }
    cli_jadd(s->res, "more", cli_jbool(next.len > 0));
  }
  sctx_answer(s, status);
}

int cli_q_store_ls(cli_t *cli, const char *coll, const char *index,
                   const char *value, size_t limit, cli_done_fn done,
                   void *arg) {
  fleet_bytes_t v = {value, strlen(value)}, none = {NULL, 0};
  sctx_t *s;
  int err;

  if ((s = sctx_open(cli, done, arg, &err)) == NULL)
    return err;
  cli_jadd(s->res, "collection", cli_jstr(coll));
  cli_jadd(s->res, "index", cli_jstr(index));
  cli_jadd(s->res, "value", cli_jstr(value));
  err = fleet_store_list(&s->store, coll, index, v, none, limit, on_list, s);
  if (err != 0) {
    s->status = err;
    fleet_store_close(&s->store, sctx_closed);
  }
  return 0;
}

static const char *const rec_cols[] = {"id", "value", NULL};

static void ls_done(cli_t *cli, int status, const char *detail, cli_json_t *res,
                    void *arg) {
  (void)arg;
  if (status != 0 || cli->json) {
    cli_finish(cli, status, detail, res, NULL);
    return;
  }
  cli_table(stdout, cli_jget(res, "records"), rec_cols);
  if (cli_jget(res, "more")->num)
    printf("(more records: raise --limit)\n");
  cli_jfree(res);
  cli_finish(cli, 0, NULL, NULL, NULL);
}

int cli_cmd_store(cli_t *cli, int argc, char **argv) {
  const char *verb = argc > 1 ? argv[1] : NULL;
  const char *limit_s;
  uint64_t limit = STORE_LS_LIMIT;
  int err;

  if (verb == NULL || cli_is_help(verb) || (argc > 2 && cli_is_help(argv[2]))) {
    fputs(store_usage, verb == NULL ? stderr : stdout);
    return verb == NULL ? 2 : CLI_DONE;
  }
  argc--, argv++;
  cli->store_prefix = cli_opt(&argc, argv, "--store-prefix");
  limit_s = cli_opt(&argc, argv, "--limit");
  if (limit_s != NULL && cli_parse_u64(limit_s, 1, 1000, &limit) != 0) {
    fleet_escape_print(stderr, "fleet store: --limit: 1 to 1000 (got %s)",
                       limit_s);
    return 2;
  }
  if (strcmp(verb, "get") == 0 && argc == 3) {
    err = cli_q_store_get(cli, argv[1], argv[2], cli_finish, NULL);
  } else if (strcmp(verb, "ls") == 0 && argc == 4) {
    err = cli_q_store_ls(cli, argv[1], argv[2], argv[3], (size_t)limit, ls_done,
                         NULL);
  } else {
    fleet_escape_print(
        stderr, "fleet store: bad usage of %s (see fleet store --help)", verb);
    return 2;
  }
  if (err != 0) {
    cli_error(cli, verb, err, NULL);
    return 1;
  }
  return 0;
}
