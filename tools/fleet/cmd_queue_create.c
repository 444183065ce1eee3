/* cmd_queue_create.c -- `fleet queue create Q --partitions P`: records the
 * partition count of a queue (fleet_queue_partitions(); docs/queue.md,
 * "Partitioned queues"), and the read of that count that the other queue
 * verbs make first, so that they see a partitioned queue as one queue. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct {
  cli_qctx_t base;
  uint32_t want;
  char detail[96];
} create_t;

/* A conflict: the count recorded, read to say it. */
static void create_on_read(fleet_queue_t *q, int status, uint32_t n, void *ud) {
  create_t *c = ud;

  (void)q;
  if (status == 0)
    snprintf(c->detail, sizeof(c->detail),
             "the queue has %u partitions; the count never changes",
             (unsigned)n);
  cli_query_answered(&c->base.base, FLEET_ECONFLICT,
                     status == 0 ? c->detail : NULL);
}

static void create_on_count(fleet_queue_t *q, int status, uint32_t n,
                            void *ud) {
  create_t *c = ud;

  if (status == FLEET_ECONFLICT &&
      fleet_queue_partitions(q, 0, create_on_read, c) == 0)
    return;
  if (status == 0)
    cli_jadd(c->base.base.res, "partitions", cli_jint((int64_t)n));
  cli_query_answered(&c->base.base, status, NULL);
}

int cli_cmd_queue_create(cli_t *cli, int argc, char **argv) {
  const char *parts_s = cli_opt(&argc, argv, "--partitions");
  uint64_t parts = 1;
  create_t *c;
  int err;

  if (argc != 2)
    return cli_usage_error("queue", "%s takes a queue name and --partitions",
                           argv[0]);
  if (parts_s == NULL ||
      cli_parse_u64(parts_s, 1, FLEET_QUEUE_PARTITIONS_MAX, &parts) != 0)
    return cli_usage_error("queue", "--partitions: 1 to 256 (got %s)",
                           parts_s != NULL ? parts_s : "none");
  c = (create_t *)cli_qctx_open(cli, sizeof(create_t), argv[1], NULL, NULL,
                                cli_finish, NULL, &err);
  if (c == NULL)
    return cli_started(cli, argv[0], err);
  c->want = (uint32_t)parts;
  err =
      cli_query_sent(&c->base.base, fleet_queue_partitions(&c->base.q, c->want,
                                                           create_on_count, c));
  return cli_started(cli, argv[0], err);
}

/* ------------------------------------------------------------------------ */
/* The counts read                                                          */

/* The entry of `name`, or NULL. */
static cli_parts_t *parts_find(const cli_t *cli, const char *name) {
  cli_parts_t *e;

  for (e = cli->parts; e != NULL; e = e->next)
    if (strcmp(e->name, name) == 0)
      return e;
  return NULL;
}

/* Keeps the count `n` of `name`, read now, first in the list; the entry
 * read longest ago goes when there are more than CLI_PARTS_KEPT. */
void cli_queue_parts_keep(cli_t *cli, const char *name, uint32_t n) {
  cli_parts_t **pp, *e = NULL;
  size_t len = strlen(name);

  for (pp = &cli->parts; *pp != NULL; pp = &(*pp)->next)
    if (strcmp((*pp)->name, name) == 0) {
      e = *pp;
      *pp = e->next;
      cli->nparts--;
      break;
    }
  if (e == NULL && (e = malloc(sizeof(*e) + len + 1)) == NULL)
    return; /* Not kept: the queue is read as plain, and again. */
  memcpy(e->name, name, len + 1);
  e->n = n;
  e->read_ms = uv_now(cli->loop);
  e->next = cli->parts;
  cli->parts = e;
  if (++cli->nparts > CLI_PARTS_KEPT) {
    for (pp = &cli->parts; (*pp)->next != NULL; pp = &(*pp)->next)
      ;
    free(*pp);
    *pp = NULL;
    cli->nparts--;
  }
}

uint32_t cli_queue_parts(const cli_t *cli, const char *name) {
  const cli_parts_t *e = parts_find(cli, name);

  return e != NULL && e->n >= 2 ? e->n : 0;
}

uint64_t cli_queue_parts_age(const cli_t *cli, const char *name) {
  const cli_parts_t *e = parts_find(cli, name);
  uint64_t now = uv_now(cli->loop);

  return e == NULL ? UINT64_MAX : now > e->read_ms ? now - e->read_ms : 0;
}

void cli_queue_parts_free(cli_t *cli) {
  cli_parts_t *e, *next;

  for (e = cli->parts; e != NULL; e = next) {
    next = e->next;
    free(e);
  }
  cli->parts = NULL;
  cli->nparts = 0;
}

/* cli_q_queue_parts(): a read on a plain handle of the queue. */
static void parts_on_count(fleet_queue_t *q, int status, uint32_t n, void *ud) {
  cli_qctx_t *c = q->data;

  (void)ud;
  if (status == 0)
    cli_jadd(c->base.res, "partitions", cli_jint((int64_t)n));
  cli_query_answered(&c->base, status, NULL);
}

int cli_q_queue_parts(cli_t *cli, const char *name, cli_done_fn done,
                      void *arg) {
  int err;
  cli_qctx_t *c = cli_qctx_open_parts(cli, sizeof(*c), name, 1, NULL, NULL,
                                      done, arg, &err);

  if (c == NULL)
    return err;
  return cli_query_sent(&c->base,
                        fleet_queue_partitions(&c->q, 0, parts_on_count, NULL));
}

/* ------------------------------------------------------------------------ */
/* The read before a command                                                */

/* The blocking read of cli_queue_learn(). */
typedef struct {
  int done, status;
  uint32_t n;
} learn_t;

static void learn_on_count(fleet_queue_t *q, int status, uint32_t n, void *ud) {
  learn_t *l = ud;

  (void)q;
  l->status = status;
  l->n = n;
  l->done = 1;
}

static void learn_on_closed(fleet_handle_t *h) {
  ((learn_t *)h->data)->done = 1;
}

void cli_queue_learn(cli_t *cli, const char *name) {
  fleet_queue_t q;
  learn_t l = {0, 0, 0};

  /* A command run again once its queue is known (cli_queue_known()) runs
   * inside a callback, where the loop must not be run: the count was read
   * by its first run. */
  if (name == NULL || name[0] == '-' || cli->queue_known ||
      parts_find(cli, name) != NULL ||
      fleet_queue_init(&cli->client, &q, name, NULL) != 0)
    return;
  /* Before the command's loop runs: the loop is run here until the read
   * answered (the client's command timeout bounds it). */
  if (fleet_queue_partitions(&q, 0, learn_on_count, &l) == 0)
    while (!l.done && uv_run(cli->loop, UV_RUN_ONCE) != 0)
      ;
  if (l.done && l.status == 0)
    cli_queue_parts_keep(cli, name, l.n);
  l.done = 0;
  q.data = &l;
  if (fleet_queue_close(&q, learn_on_closed) == 0)
    while (!l.done && uv_run(cli->loop, UV_RUN_ONCE) != 0)
      ;
}
