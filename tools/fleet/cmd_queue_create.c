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

  cli->queue_parts = 0;
  if (name == NULL || name[0] == '-' ||
      fleet_queue_init(&cli->client, &q, name, NULL) != 0)
    return;
  /* Before the command's loop runs: the loop is run here until the read
   * answered (the client's command timeout bounds it). */
  if (fleet_queue_partitions(&q, 0, learn_on_count, &l) == 0)
    while (!l.done && uv_run(cli->loop, UV_RUN_ONCE) != 0)
      ;
  if (l.done && l.status == 0 && l.n >= 2) {
    snprintf(cli->queue_parts_of, sizeof(cli->queue_parts_of), "%s", name);
    cli->queue_parts = strlen(name) < sizeof(cli->queue_parts_of) ? l.n : 0;
  }
  l.done = 0;
  q.data = &l;
  if (fleet_queue_close(&q, learn_on_closed) == 0)
    while (!l.done && uv_run(cli->loop, UV_RUN_ONCE) != 0)
      ;
}

uint32_t cli_queue_parts(const cli_t *cli, const char *name) {
  return cli->queue_parts >= 2 && strcmp(cli->queue_parts_of, name) == 0
             ? cli->queue_parts
             : 0;
}
