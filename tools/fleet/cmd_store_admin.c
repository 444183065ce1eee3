/* cmd_store_admin.c -- `fleet store delete COLLECTION ID` and `fleet store
 * events COLLECTION ID [--count N]`: a record deleted with its index
 * entries and events (fleet_store_delete()), and the newest N events of a
 * record, oldest first (fleet_store_events_count(), then
 * fleet_store_events_read() from the offset that leaves N). A record that
 * does not exist is one line and exit 1. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define STORE_EVENTS_COUNT 20

/* A query on a store handle of its own (closed before the query ends),
 * whose result begins with {"collection", "id"}. */
typedef struct {
  cli_query_t base;
  fleet_store_t store;
  char *coll, *id;
  uint64_t want; /* events: how many of the newest */
} sadmin_t;

static void sadmin_finish(cli_query_t *q) {
  sadmin_t *s = (sadmin_t *)q;

  free(s->coll);
  free(s->id);
}

/* Opens the store (cli->store_prefix) for a query on record `id` of
 * `coll`. NULL (with *err) when it cannot. */
static sadmin_t *sadmin_open(cli_t *cli, const char *coll, const char *id,
                             cli_done_fn done, void *arg, int *err) {
  fleet_store_options_t o;
  sadmin_t *s = cli_query_new(sizeof(*s), cli, done, arg);

  if (s == NULL) {
    *err = FLEET_ENOMEM;
    return NULL;
  }
  s->base.finish = sadmin_finish;
  s->coll = strdup(coll);
  s->id = strdup(id);
  if (s->coll == NULL || s->id == NULL) {
    cli_query_free(&s->base, FLEET_ENOMEM);
    *err = FLEET_ENOMEM;
    return NULL;
  }
  fleet_store_options_init(&o);
  o.prefix = cli->store_prefix;
  *err = cli_query_open(&s->base, (fleet_handle_t *)&s->store,
                        fleet_store_init(&cli->client, &s->store, &o),
                        "collection", coll);
  if (*err != 0)
    return NULL;
  cli_jadd(s->base.res, "id", cli_jstr(id));
  return s;
}

/* A call's answer: FLEET_ENOTFOUND names the record. */
static void sadmin_answered(sadmin_t *s, int status) {
  char detail[1200];

  if (status == FLEET_ENOTFOUND) {
    snprintf(detail, sizeof(detail), "no record \"%s\" in collection \"%s\"",
             s->id, s->coll);
    cli_query_answered(&s->base, status, detail);
    return;
  }
  cli_query_answered(&s->base, status, NULL);
}

static fleet_bytes_t sadmin_id(const sadmin_t *s) {
  return (fleet_bytes_t){s->id, strlen(s->id)};
}

/* delete ------------------------------------------------------------- */

static void on_deleted(fleet_handle_t *h, int status, void *ud) {
  sadmin_t *s = ud;

  (void)h;
  if (status == 0)
    cli_jadd(s->base.res, "deleted", cli_jbool(1));
  sadmin_answered(s, status);
}

static int store_delete(cli_t *cli, const char *coll, const char *id,
                        cli_done_fn done, void *arg) {
  int err;
  sadmin_t *s = sadmin_open(cli, coll, id, done, arg, &err);

  if (s == NULL)
    return err;
  return cli_query_sent(
      &s->base,
      fleet_store_delete(&s->store, s->coll, sadmin_id(s), on_deleted, s));
}

/* events ------------------------------------------------------------- */

static void on_events(fleet_store_t *st, int status,
                      const fleet_bytes_t *events, size_t n, void *ud) {
  sadmin_t *s = ud;
  cli_json_t *arr;
  size_t i;

  (void)st;
  if (status == 0) {
    arr = cli_jadd(s->base.res, "events", cli_jarr());
    for (i = 0; i < n; i++)
      cli_jadd(arr, NULL, cli_jbytes(events[i].base, events[i].len));
  }
  sadmin_answered(s, status);
}

/* The length of the list: the read starts where the newest `want`
 * begin. */
static void on_events_count(fleet_store_t *st, int status, uint64_t total,
                            void *ud) {
  sadmin_t *s = ud;
  uint64_t offset = total > s->want ? total - s->want : 0;

  (void)st;
  if (status == 0) {
    cli_jadd(s->base.res, "total", cli_jint((int64_t)total));
    cli_jadd(s->base.res, "offset", cli_jint((int64_t)offset));
    if (offset > FLEET_STORE_OFFSET_MAX)
      offset = FLEET_STORE_OFFSET_MAX;
    cli_query_sent(&s->base, fleet_store_events_read(
                                 &s->store, s->coll, sadmin_id(s), offset,
                                 (size_t)s->want, on_events, s));
  }
  sadmin_answered(s, status);
}

static int store_events(cli_t *cli, const char *coll, const char *id,
                        uint64_t count, cli_done_fn done, void *arg) {
  int err;
  sadmin_t *s = sadmin_open(cli, coll, id, done, arg, &err);

  if (s == NULL)
    return err;
  s->want = count;
  return cli_query_sent(&s->base, fleet_store_events_count(&s->store, s->coll,
                                                           sadmin_id(s),
                                                           on_events_count, s));
}

/* The command ---------------------------------------------------------- */

static void print_deleted(const cli_json_t *res) {
  fleet_escape_print(stdout, "deleted record %s of collection %s",
                     cli_jget(res, "id")->str,
                     cli_jget(res, "collection")->str);
}

/* "N of M event(s) of record ID in collection C, oldest first", then one
 * event a line, numbered from the first of the list. */
static void print_events(const cli_json_t *res) {
  const cli_json_t *ev = cli_jget(res, "events"), *e;
  int64_t at = cli_jget(res, "offset")->num;
  cli_buf_t b = {0};

  fleet_escape_print(stdout,
                     "%zu of %lld event(s) of record %s in collection %s, "
                     "oldest first",
                     ev->n, (long long)cli_jget(res, "total")->num,
                     cli_jget(res, "id")->str,
                     cli_jget(res, "collection")->str);
  for (e = ev->first; e != NULL; e = e->next, at++) {
    b.len = 0;
    cli_buf_printf(&b, "%lld: ", (long long)at);
    cli_buf_esc(&b, e->str, e->len);
    if (!b.oom)
      printf("%.*s\n", (int)b.len, b.p);
  }
  cli_buf_free(&b);
}

static const cli_view_t deleted_view = {NULL, print_deleted};
static const cli_view_t events_view = {NULL, print_events};

int cli_store_admin_verb(const char *verb) {
  return strcmp(verb, "delete") == 0 || strcmp(verb, "events") == 0;
}

int cli_cmd_store_admin(cli_t *cli, int argc, char **argv) {
  const char *count_s = cli_opt(&argc, argv, "--count");
  uint64_t count = STORE_EVENTS_COUNT;

  if (count_s != NULL &&
      (strcmp(argv[0], "events") != 0 ||
       cli_parse_u64(count_s, 1, FLEET_STORE_BATCH_MAX, &count) != 0)) {
    fleet_escape_print(stderr, "fleet store %s: --count: 1 to %u (got %s)",
                       argv[0], (unsigned)FLEET_STORE_BATCH_MAX, count_s);
    return 2;
  }
  if (argc != 3)
    return cli_usage_error("store", "%s takes COLLECTION ID", argv[0]);
  if (strcmp(argv[0], "delete") == 0)
    return cli_started(
        cli, argv[0],
        store_delete(cli, argv[1], argv[2], cli_finish, (void *)&deleted_view));
  return cli_started(cli, argv[0],
                     store_events(cli, argv[1], argv[2], count, cli_finish,
                                  (void *)&events_view));
}
