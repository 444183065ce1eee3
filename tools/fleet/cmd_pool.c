/* cmd_pool.c -- `fleet pool status|ls`: a pool's workers (with their node)
 * and its jobs (with their owner and state), read without joining it
 * (fleet_pool_query_workers(), fleet_pool_query_jobs()). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "map.h"

#define POOL_LS_MAX 10000

static const char pool_usage[] =
    "usage: fleet pool <verb>\n"
    "  status P   the workers of pool P (node, jobs) and its jobs (owner, "
    "state)\n"
    "  ls         every pool with its worker and job counts\n";

typedef struct {
  cli_t *cli;
  cli_done_fn done;
  void *arg;
  cli_json_t *res, *workers, *jobs;
  int calls;
  int status;
  char *detail;
} pctx_t;

static void pctx_answer(pctx_t *p, int status) {
  const cli_json_t *w, *j;
  int64_t n;

  if (status != 0 && p->status == 0) {
    const char *d = status == FLEET_EPROTO
                        ? "unexpected reply"
                        : fleet_client_last_error(&p->cli->client);

    p->status = status;
    p->detail = d != NULL && d[0] != '\0' ? strdup(d) : NULL;
  }
  if (--p->calls > 0)
    return;
  p->cli->inflight--;
  if (p->status == 0) {
    /* Each worker's job count. */
    for (w = p->workers->first; w != NULL; w = w->next) {
      n = 0;
      for (j = p->jobs->first; j != NULL; j = j->next)
        if (strcmp(cli_jget(j, "worker")->str, cli_jget(w, "worker")->str) == 0)
          n++;
      cli_jadd((cli_json_t *)w, "jobs", cli_jint(n));
    }
    cli_jadd(p->res, "worker_count", cli_jint((int64_t)p->workers->n));
    cli_jadd(p->res, "job_count", cli_jint((int64_t)p->jobs->n));
    cli_jadd(p->res, "workers", p->workers);
    cli_jadd(p->res, "jobs", p->jobs);
    if (p->res == NULL || p->res->num == -1)
      p->status = FLEET_ENOMEM;
  } else {
    cli_jfree(p->workers);
    cli_jfree(p->jobs);
  }
  if (p->status != 0) {
    cli_jfree(p->res);
    p->res = NULL;
  }
  p->done(p->cli, p->status, p->detail, p->res, p->arg);
  free(p->detail);
  free(p);
}

static void on_workers(fleet_client_t *client, int status, uint64_t revision,
                       const fleet_pool_worker_info_t *workers, size_t n,
                       void *arg) {
  pctx_t *p = arg;
  size_t i;
  cli_json_t *o;

  (void)client;
  if (status == 0) {
    cli_jadd(p->res, "revision", cli_jint((int64_t)revision));
    for (i = 0; i < n; i++) {
      o = cli_jadd(p->workers, NULL, cli_jobj());
      cli_jadd(o, "worker", cli_jstr(workers[i].id));
      cli_jadd(o, "node", cli_jstr(workers[i].node_id));
    }
  }
  pctx_answer(p, status);
}

static void on_jobs(fleet_client_t *client, int status,
                    const fleet_pool_job_status_t *jobs, size_t n, void *arg) {
  pctx_t *p = arg;
  char token[24];
  size_t i;
  cli_json_t *o;

  (void)client;
  for (i = 0; status == 0 && i < n; i++) {
    snprintf(token, sizeof(token), "%llu", (unsigned long long)jobs[i].token);
    o = cli_jadd(p->jobs, NULL, cli_jobj());
    cli_jadd(o, "key", cli_jbytes(jobs[i].key.base, jobs[i].key.len));
    cli_jadd(o, "token", cli_jstr(token));
    cli_jadd(o, "state", cli_jstr(fleet_pool_job_state_name(jobs[i].state)));
    cli_jadd(o, "worker", cli_jstr(jobs[i].worker_id));
  }
  pctx_answer(p, status);
}

int cli_q_pool_status(cli_t *cli, const char *pool, cli_done_fn done,
                      void *arg) {
  pctx_t *p = calloc(1, sizeof(*p));
  int err;

  if (p == NULL)
    return FLEET_ENOMEM;
  p->cli = cli;
  p->done = done;
  p->arg = arg;
  p->res = cli_jobj();
  p->workers = cli_jarr();
  p->jobs = cli_jarr();
  cli_jadd(p->res, "pool", cli_jstr(pool));
  if (p->res == NULL || p->workers == NULL || p->jobs == NULL) {
    cli_jfree(p->res);
    cli_jfree(p->workers);
    cli_jfree(p->jobs);
    free(p);
    return FLEET_ENOMEM;
  }
  cli->inflight++;
  p->calls = 1; /* the start, answered last */
  err = fleet_pool_query_workers(&cli->client, pool, on_workers, p);
  if (err == 0) {
    p->calls++;
    err = fleet_pool_query_jobs(&cli->client, pool, on_jobs, p);
    if (err == 0)
      p->calls++;
  }
  if (p->calls == 1) { /* nothing was sent */
    cli->inflight--;
    cli_jfree(p->res);
    cli_jfree(p->workers);
    cli_jfree(p->jobs);
    free(p);
    return err;
  }
  pctx_answer(p, err);
  return 0;
}

int cli_q_pool_ls(cli_t *cli, cli_done_fn done, void *arg) {
  return cli_scan_map(cli, FLEET_OBJECT_POOL, "*", POOL_LS_MAX,
                      cli_q_pool_status, done, arg);
}

static const char *const ls_cols[] = {"pool", "revision", "worker_count",
                                      "job_count", NULL};
static const char *const worker_cols[] = {"worker", "node", "jobs", NULL};
static const char *const job_cols[] = {"key", "state", "worker", "token", NULL};

static void status_done(cli_t *cli, int status, const char *detail,
                        cli_json_t *res, void *arg) {
  (void)arg;
  if (status != 0 || cli->json) {
    cli_finish(cli, status, detail, res, NULL);
    return;
  }
  fleet_escape_print(
      stdout, "pool %s, revision %lld: %lld worker(s), %lld job(s)",
      cli_jget(res, "pool")->str, (long long)cli_jget(res, "revision")->num,
      (long long)cli_jget(res, "worker_count")->num,
      (long long)cli_jget(res, "job_count")->num);
  cli_table(stdout, cli_jget(res, "workers"), worker_cols);
  if (cli_jget(res, "jobs")->n > 0) {
    printf("\n");
    cli_table(stdout, cli_jget(res, "jobs"), job_cols);
  }
  cli_jfree(res);
  cli_finish(cli, 0, NULL, NULL, NULL);
}

int cli_cmd_pool(cli_t *cli, int argc, char **argv) {
  const char *verb = argc > 1 ? argv[1] : NULL;
  int err;

  if (verb == NULL || cli_is_help(verb) || (argc > 2 && cli_is_help(argv[2]))) {
    fputs(pool_usage, verb == NULL ? stderr : stdout);
    return verb == NULL ? 2 : CLI_DONE;
  }
  if (strcmp(verb, "status") == 0 && argc == 3) {
    err = cli_q_pool_status(cli, argv[2], status_done, NULL);
  } else if (strcmp(verb, "ls") == 0 && argc == 2) {
    err = cli_q_pool_ls(cli, cli_finish, (void *)ls_cols);
  } else {
    fleet_escape_print(
        stderr, "fleet pool: bad usage of %s (see fleet pool --help)", verb);
    return 2;
  }
  if (err != 0) {
    cli_error(cli, verb, err, NULL);
    return 1;
  }
  return 0;
}
