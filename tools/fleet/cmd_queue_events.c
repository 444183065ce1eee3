/* cmd_queue_events.c -- `fleet queue events Q [--job ID] [--count N]`: the
 * events of a queue, or of one job, as they happen (fleet_queue_events_start),
 * one line each, until --count N events were printed, SIGINT or SIGTERM. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct {
  cli_t *cli;
  fleet_queue_t q;
  uv_signal_t sigint, sigterm;
  uint64_t count, shown;
  int handles; /* open: the queue and the two signals */
  int stopping, live, status;
} events_t;

static void events_closed(events_t *e) {
  if (--e->handles == 0) {
    cli_finish(e->cli, e->status, NULL, NULL, NULL);
    free(e);
  }
}

static void events_on_signal_closed(uv_handle_t *h) {
  events_closed(h->data);
}

static void events_on_queue_closed(fleet_handle_t *h) {
  events_closed(h->data);
}

static void events_stop(events_t *e) {
  if (e->stopping)
    return;
  e->stopping = 1;
  fflush(stdout);
  uv_close((uv_handle_t *)&e->sigint, events_on_signal_closed);
  uv_close((uv_handle_t *)&e->sigterm, events_on_signal_closed);
  fleet_queue_close(&e->q, events_on_queue_closed);
}

static void events_signal(uv_signal_t *s, int signum) {
  (void)signum;
  events_stop(s->data);
}

/* One event: a line "<time_ms> <type> <id> <value> <data>" (escaped), or
 * with --json an object. The notice that the subscription is live goes
 * to stderr: the first says that events now flow, a later one that some
 * may have been missed. */
static void events_on_event(fleet_queue_t *q, int status,
                            const fleet_queue_event_t *ev, void *ud) {
  events_t *e = ud;
  cli_json_t *o;
  cli_buf_t b = {0};

  (void)q;
  if (e->stopping)
    return;
  if (ev == NULL) {
    fprintf(stderr,
            e->live++ == 0
                ? "fleet: listening to the events of queue %s\n"
                : "fleet: reconnected to the events of queue %s: some may "
                  "have been missed (fleet queue get shows a job's state)\n",
            fleet_queue_name(&e->q));
    (void)status;
    return;
  }
  if (e->cli->json) {
    o = cli_jobj();
    cli_jadd(o, "type", cli_jstr(fleet_event_type_name(ev->type)));
    cli_jadd(o, "id", cli_jbytes(ev->id, ev->id_len));
    cli_jadd_time(o, "time_ms", (int64_t)ev->time_ms);
    cli_jadd(o, "value", cli_jint(ev->value));
    cli_jadd(o, "data", cli_jbytes(ev->data.base, ev->data.len));
    cli_json_write(&b, o);
    printf("%s\n", b.p != NULL ? b.p : "null");
    cli_buf_free(&b);
    cli_jfree(o);
  } else {
    char when[32];

    fleet_escape_print(stdout, "%s %s %.*s %u %.*s",
                       cli_time_iso((int64_t)ev->time_ms, when, sizeof(when)),
                       fleet_event_type_name(ev->type), (int)ev->id_len, ev->id,
                       (unsigned)ev->value, (int)ev->data.len,
                       (const char *)ev->data.base);
  }
  fflush(stdout);
  if (e->count > 0 && ++e->shown >= e->count)
    events_stop(e);
}

int cli_cmd_queue_events(cli_t *cli, int argc, char **argv) {
  const char *count_s = NULL, *job = NULL;
  const cli_optdef_t opts[] = {CLI_OPT("--count", &count_s),
                               CLI_OPT("--job", &job), CLI_OPT_END};
  fleet_queue_options_t qo;
  events_t *e;
  int err;

  if ((err = cli_opts("queue", &argc, argv, opts)) != 0)
    return err;
  if (argc != 2)
    return cli_usage_error("queue", "%s takes a queue name", argv[0]);
  if (job != NULL && (job[0] == '\0' || strlen(job) > FLEET_JOB_ID_MAX))
    return cli_usage_error("queue", "--job: an id of 1 to 256 bytes (got %s)",
                           job);
  if ((e = calloc(1, sizeof(*e))) == NULL)
    return cli_started(cli, "events", FLEET_ENOMEM);
  if (count_s != NULL && cli_parse_u64(count_s, 1, 1000000000, &e->count)) {
    free(e);
    return cli_usage_error("queue", "--count: 1 or more (got %s)", count_s);
  }
  e->cli = cli;
  fleet_queue_options_init(&qo);
  qo.partitions = cli_queue_parts(cli, argv[1]);
  if ((err = fleet_queue_init(&cli->client, &e->q, argv[1], &qo)) != 0) {
    free(e);
    return cli_started(cli, "events", err);
  }
  e->q.data = e;
  e->handles = 3;
  uv_signal_init(cli->loop, &e->sigint);
  uv_signal_init(cli->loop, &e->sigterm);
  e->sigint.data = e->sigterm.data = e;
  uv_signal_start(&e->sigint, events_signal, SIGINT);
  uv_signal_start(&e->sigterm, events_signal, SIGTERM);
  err = fleet_queue_events_start(&e->q, job, events_on_event, e);
  if (err != 0) {
    e->status = err;
    events_stop(e);
  }
  return 0;
}
