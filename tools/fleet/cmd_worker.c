/* cmd_worker.c -- `fleet worker ls [--kind K]`: the queue workers, pool
 * nodes, cron schedulers and warm-pool nodes that run under the prefix,
 * read from the process registry with the library's fleet_workers_list()
 * (one call), with the jobs each queue worker holds. The dashboard's GET
 * /api/workers serves the same query (cli_q_worker_ls_all). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const char worker_usage[] =
    "usage: fleet worker <verb>\n"
    "  ls [--kind K]   the running queue workers, pool nodes, cron\n"
    "                  schedulers and warm-pool nodes (K: queue, pool,\n"
    "                  cron or warmpool): id, kind, what it serves, host,\n"
    "                  pid, when it started and was last seen (UTC), and\n"
    "                  the jobs a queue worker holds or a pool node runs\n"
    "                  (how many, then the first ids or keys)\n";

static const char *const worker_kinds[] = {"queue", "pool", "cron", "warmpool",
                                           NULL};

/* A Unix ms time as "YYYY-MM-DDTHH:MM:SS.mmmZ", or JSON null when <= 0. */
static cli_json_t *worker_jtime(int64_t ms) {
  char buf[96];
  struct tm tm;
  time_t t;

  if (ms <= 0)
    return cli_jnull();
  t = (time_t)(ms / 1000);
  if (gmtime_r(&t, &tm) == NULL)
    return cli_jnull();
  snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
           tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
           tm.tm_sec, (int)(ms % 1000));
  return cli_jstr(buf);
}

/* The listing in flight: the kind asked for (NULL: every kind). */
typedef struct {
  cli_query_t base;
  char kind[16];
} wls_t;

static void on_workers(fleet_client_t *client, int status,
                       const fleet_worker_info_t *ws, size_t n, void *arg) {
  wls_t *l = arg;
  cli_json_t *arr, *o, *jobs;
  size_t i, k;

  (void)client;
  if (status == 0) {
    arr = cli_jadd(l->base.res, "workers", cli_jarr());
    for (i = 0; i < n; i++) {
      if (l->kind[0] != '\0' && strcmp(ws[i].kind, l->kind) != 0)
        continue;
      o = cli_jadd(arr, NULL, cli_jobj());
      cli_jadd(o, "id", cli_jstr(ws[i].id));
      cli_jadd(o, "kind", cli_jstr(ws[i].kind));
      cli_jadd(o, "name", cli_jstr(ws[i].name));
      cli_jadd(o, "host", cli_jstr(ws[i].host));
      cli_jadd(o, "pid", cli_jint(ws[i].pid));
      cli_jadd(o, "started", worker_jtime(ws[i].started_ms));
      cli_jadd(o, "seen", worker_jtime(ws[i].seen_ms));
      cli_jadd(o, "jobs_held", cli_jint((int64_t)ws[i].jobs_held));
      jobs = cli_jadd(o, "jobs", cli_jarr());
      for (k = 0; k < ws[i].njobs; k++)
        cli_jadd(jobs, NULL, cli_jstr(ws[i].jobs[k]));
    }
  }
  cli_query_answered(&l->base, status, NULL);
}

/* Every live entry of the registry, or those of `kind` (NULL: all):
 * {"workers": [{id, kind, name, host, pid, started, seen, jobs_held,
 * jobs}, ...]}. */
static int worker_ls(cli_t *cli, const char *kind, cli_done_fn done,
                     void *arg) {
  wls_t *l = cli_query_new(sizeof(*l), cli, done, arg);

  if (l == NULL || (l->base.res = cli_jobj()) == NULL) {
    if (l != NULL)
      cli_query_free(&l->base, FLEET_ENOMEM);
    return FLEET_ENOMEM;
  }
  if (kind != NULL)
    snprintf(l->kind, sizeof(l->kind), "%s", kind);
  return cli_query_sent(&l->base,
                        fleet_workers_list(&cli->client, on_workers, l));
}

int cli_q_worker_ls_all(cli_t *cli, cli_done_fn done, void *arg) {
  return worker_ls(cli, NULL, done, arg);
}

/* The table: one row per entry, JOBS as "<held>: <id>,<id>..." for a
 * queue worker (job ids) or a pool node (job keys), "-" for the others. */
static void print_workers(const cli_json_t *res) {
  static const char *const cols[] = {"id",      "kind", "name", "host", "pid",
                                     "started", "seen", "jobs", NULL};
  const cli_json_t *ws = cli_jget(res, "workers"), *w, *j;
  cli_json_t *rows = cli_jarr(), *row;

  for (w = ws != NULL ? ws->first : NULL; w != NULL; w = w->next) {
    cli_buf_t b = {0};
    const cli_json_t *c;

    row = cli_jadd(rows, NULL, cli_jobj());
    for (c = w->first; c != NULL; c = c->next)
      if (strcmp(c->key, "jobs") != 0 && strcmp(c->key, "jobs_held") != 0)
        cli_jadd(row, c->key, cli_jcopy(c));
    if (strcmp(cli_jget(w, "kind")->str, "queue") == 0 ||
        strcmp(cli_jget(w, "kind")->str, "pool") == 0) {
      cli_buf_printf(&b, "%lld", (long long)cli_jget(w, "jobs_held")->num);
      for (j = cli_jget(w, "jobs")->first; j != NULL; j = j->next) {
        cli_buf_str(&b, j == cli_jget(w, "jobs")->first ? ": " : ",");
        cli_buf_add(&b, j->str, j->len);
      }
      if (cli_jget(w, "jobs")->n < (size_t)cli_jget(w, "jobs_held")->num)
        cli_buf_str(&b, ",...");
      cli_jadd(row, "jobs", b.oom ? NULL : cli_jbytes(b.p, b.len));
      cli_buf_free(&b);
    }
  }
  cli_table(stdout, rows, cols);
  cli_jfree(rows);
}

static const cli_view_t worker_view = {NULL, print_workers};

int cli_cmd_worker(cli_t *cli, int argc, char **argv) {
  const char *verb = argc > 1 ? argv[1] : NULL;
  const char *kind;
  int err, k;

  if ((err = cli_noun_help(argc, argv, worker_usage)) != 0)
    return err;
  argc--, argv++;
  if (strcmp(verb, "ls") != 0)
    return cli_usage_error("worker", "bad usage of %s", verb);
  kind = cli_opt(&argc, argv, "--kind");
  if (argc != 1)
    return cli_usage_error("worker", "%s takes only --kind", verb);
  if (kind != NULL) {
    for (k = 0; worker_kinds[k] != NULL; k++)
      if (strcmp(worker_kinds[k], kind) == 0)
        break;
    if (worker_kinds[k] == NULL)
      return cli_usage_error(
          "worker", "unknown --kind %s (queue, pool, cron or warmpool)", kind);
  }
  return cli_started(cli, verb,
                     worker_ls(cli, kind, cli_finish, (void *)&worker_view));
}
