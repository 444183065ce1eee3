/* query.c -- the bookkeeping every query of the CLI and the dashboard
 * shares (cli_query_t in cli.h): whom to answer, the result being built,
 * the first error with its detail, the calls still pending, and the
 * handle of its own that closes before it ends. The nouns' files keep
 * only what their calls send and how their replies read. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void *cli_query_new(size_t size, cli_t *cli, cli_done_fn done, void *arg) {
  cli_query_t *q = calloc(1, size);

  if (q == NULL)
    return NULL;
  q->cli = cli;
  q->done = done;
  q->arg = arg;
  cli->inflight++;
  return q;
}

void cli_query_fail(cli_query_t *q, int status, const char *detail) {
  if (status == 0 || q->status != 0)
    return;
  q->status = status;
  q->detail = detail != NULL && detail[0] != '\0' ? strdup(detail) : NULL;
}

/* Frees the context and what it still holds. */
static void query_release(cli_query_t *q) {
  cli_jfree(q->res);
  free(q->detail);
  free(q);
}

void cli_query_free(cli_query_t *q, int err) {
  cli_query_fail(q, err, NULL);
  if (q->finish != NULL)
    q->finish(q);
  q->cli->inflight--;
  query_release(q);
}

int cli_query_open(cli_query_t *q, fleet_handle_t *h, int err, const char *key,
                   const char *name) {
  if (err != 0) {
    cli_query_free(q, err);
    return err;
  }
  q->handle = h;
  h->data = q;
  q->res = cli_jobj();
  cli_jadd(q->res, key, cli_jstr(name));
  return 0;
}

void cli_query_end(cli_query_t *q) {
  cli_t *cli = q->cli;

  if (q->finish != NULL)
    q->finish(q);
  if (q->status == 0 && (q->res == NULL || q->res->num == -1))
    q->status = FLEET_ENOMEM;
  if (q->status != 0) {
    cli_jfree(q->res);
    q->res = NULL;
  }
  /* Not in flight any more when `done` runs: a command that ends in it
   * closes the client (cli_finish()). */
  cli->inflight--;
  /* The result is the callee's from here on. */
  q->done(cli, q->status, q->detail, q->res, q->arg);
  q->res = NULL;
  query_release(q);
}

void cli_query_closed(fleet_handle_t *h) {
  cli_query_end(h->data);
}

/* Nothing is pending any more: the query ends, once its handle (if it
 * has one) is closed. */
static void query_last(cli_query_t *q) {
  if (q->handle != NULL)
    fleet_close(q->handle, cli_query_closed);
  else
    cli_query_end(q);
}

int cli_query_sent(cli_query_t *q, int err) {
  if (err == 0) {
    q->calls++;
    return 0;
  }
  if (q->calls == 0 && q->handle == NULL) {
    cli_query_free(q, err);
    return err;
  }
  /* A pending call's answer ends the query, or else its handle's close. */
  cli_query_fail(q, err, NULL);
  if (q->calls == 0)
    query_last(q);
  return 0;
}

void cli_query_answered(cli_query_t *q, int status, const char *detail) {
  cli_query_fail(q, status,
                 detail != NULL ? detail
                                : fleet_client_last_error(&q->cli->client));
  if (--q->calls == 0)
    query_last(q);
}
