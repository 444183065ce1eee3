/* cmd_pool.c -- `fleet pool status|ls|jobs|reset`: a pool's workers (with
 * their node) and its jobs (with their owner and state), or one worker's
 * jobs, read without joining it (fleet_pool_query_workers(),
 * fleet_pool_query_jobs(), fleet_pool_query_worker_jobs()); and the reset
 * that opens a shut-down pool again (fleet_pool_reset()). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "map.h"

#define POOL_LS_MAX 10000

static const char pool_usage[] =
    "usage: fleet pool <verb>\n"
    "  status P   the workers of pool P (node, jobs) and its jobs (owner, "
    "state)\n"
    "  ls         every pool with its worker and job counts\n"
    "  jobs P [--worker ID]\n"
    "             the jobs of pool P (key, state, owner, token), or only\n"
    "             those worker ID owns\n"
    "  reset P    open pool P, shut down, to nodes again\n";

/* A query of a pool's workers and jobs: two calls, joined at the end. */
typedef struct {
  cli_query_t base;
  cli_json_t *workers, *jobs;
} pctx_t;

/* Both calls answered: each worker's job count, then the workers and
 * the jobs go into the result. */
static void pctx_join(cli_query_t *q) {
  pctx_t *p = (pctx_t *)q;
  const cli_json_t *w, *j;
  int64_t n;

  if (q->status != 0) {
    cli_jfree(p->workers);
    cli_jfree(p->jobs);
    return;
  }
  for (w = p->workers->first; w != NULL; w = w->next) {
    n = 0;
    for (j = p->jobs->first; j != NULL; j = j->next)
      if (strcmp(cli_jget(j, "worker")->str, cli_jget(w, "worker")->str) == 0)
        n++;
    cli_jadd((cli_json_t *)w, "jobs", cli_jint(n));
  }
  cli_jadd(q->res, "worker_count", cli_jint((int64_t)p->workers->n));
  cli_jadd(q->res, "job_count", cli_jint((int64_t)p->jobs->n));
  cli_jadd(q->res, "workers", p->workers);
  cli_jadd(q->res, "jobs", p->jobs);
}

static void pctx_answer(pctx_t *p, int status) {
  cli_query_answered(&p->base, status,
                     status == FLEET_EPROTO ? "unexpected reply" : NULL);
}

static void on_workers(fleet_client_t *client, int status, uint64_t revision,
                       const fleet_pool_worker_info_t *workers, size_t n,
                       void *arg) {
  pctx_t *p = arg;
  size_t i;
  cli_json_t *o;

  (void)client;
  if (status == 0) {
    cli_jadd(p->base.res, "revision", cli_jint((int64_t)revision));
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
  pctx_t *p = cli_query_new(sizeof(*p), cli, done, arg);
  int err;

  if (p == NULL)
    return FLEET_ENOMEM;
  p->base.finish = pctx_join;
  p->base.res = cli_jobj();
  p->workers = cli_jarr();
  p->jobs = cli_jarr();
  cli_jadd(p->base.res, "pool", cli_jstr(pool));
  if (p->base.res == NULL || p->workers == NULL || p->jobs == NULL) {
    cli_query_free(&p->base, FLEET_ENOMEM);
    return FLEET_ENOMEM;
  }
  err = fleet_pool_query_workers(&cli->client, pool, on_workers, p);
  if (err == 0) {
    cli_query_sent(&p->base, 0);
    err = fleet_pool_query_jobs(&cli->client, pool, on_jobs, p);
  }
  return cli_query_sent(&p->base, err);
}

/* `pool jobs P [--worker ID]`: the jobs alone, as an array. */
static void jobs_finish(cli_query_t *q) {
  pctx_t *p = (pctx_t *)q;

  cli_jfree(q->res);
  q->res = q->status == 0 ? p->jobs : NULL;
  if (q->status != 0)
    cli_jfree(p->jobs);
}

static int cli_q_pool_jobs(cli_t *cli, const char *pool, const char *worker,
                           cli_done_fn done, void *arg) {
  pctx_t *p = cli_query_new(sizeof(*p), cli, done, arg);

  if (p == NULL)
    return FLEET_ENOMEM;
  p->base.finish = jobs_finish;
  p->base.res = cli_jobj();
  p->jobs = cli_jarr();
  if (p->base.res == NULL || p->jobs == NULL) {
    cli_jfree(p->jobs);
    cli_query_free(&p->base, FLEET_ENOMEM);
    return FLEET_ENOMEM;
  }
  return cli_query_sent(
      &p->base,
      worker != NULL
          ? fleet_pool_query_worker_jobs(&cli->client, pool, worker, on_jobs, p)
          : fleet_pool_query_jobs(&cli->client, pool, on_jobs, p));
}

static void on_reset(fleet_client_t *client, int status, void *arg) {
  cli_query_t *q = arg;

  (void)client;
  if (status == 0 || status == FLEET_EALREADY)
    cli_jadd(q->res, "reset", cli_jbool(status == 0));
  cli_query_answered(q, status == FLEET_EALREADY ? 0 : status, NULL);
}

/* `pool reset P`: {"pool": P, "reset": true}, or false when the pool was
 * not shut down (nothing changed; exit 0 all the same). */
static int cli_q_pool_reset(cli_t *cli, const char *pool, cli_done_fn done,
                            void *arg) {
  cli_query_t *q = cli_query_new(sizeof(*q), cli, done, arg);

  if (q == NULL)
    return FLEET_ENOMEM;
  q->res = cli_jobj();
  cli_jadd(q->res, "pool", cli_jstr(pool));
  return cli_query_sent(q, fleet_pool_reset(&cli->client, pool, on_reset, q));
}

int cli_q_pool_ls(cli_t *cli, cli_done_fn done, void *arg) {
  return cli_scan_map(cli, FLEET_OBJECT_POOL, "*", POOL_LS_MAX,
                      cli_q_pool_status, done, arg);
}

static const char *const ls_cols[] = {"pool", "revision", "worker_count",
                                      "job_count", NULL};
static const char *const worker_cols[] = {"worker", "node", "jobs", NULL};
static const char *const job_cols[] = {"key", "state", "worker", "token", NULL};

/* Prints a pool: a line of counts, its workers, then its jobs. */
static void print_status(const cli_json_t *res) {
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
}

static const cli_view_t ls_view = {ls_cols, NULL};
static const cli_view_t jobs_view = {job_cols, NULL};
static const cli_view_t status_view = {NULL, print_status};

int cli_cmd_pool(cli_t *cli, int argc, char **argv) {
  const char *verb = argc > 1 ? argv[1] : NULL;
  const char *worker = NULL;
  const cli_optdef_t jobs_opts[] = {CLI_OPT("--worker", &worker), CLI_OPT_END};
  int err;

  if ((err = cli_noun_help(argc, argv, pool_usage)) != 0)
    return err;
  if ((err = cli_opts("pool", &argc, argv,
                      strcmp(verb, "jobs") == 0 ? jobs_opts : NULL)) != 0)
    return err;
  if (strcmp(verb, "status") == 0 && argc == 3)
    err = cli_q_pool_status(cli, argv[2], cli_finish, (void *)&status_view);
  else if (strcmp(verb, "ls") == 0 && argc == 2)
    err = cli_q_pool_ls(cli, cli_finish, (void *)&ls_view);
  else if (strcmp(verb, "reset") == 0 && argc == 3)
    err = cli_q_pool_reset(cli, argv[2], cli_finish, NULL);
  else if (strcmp(verb, "jobs") == 0 && argc == 3)
    err = cli_q_pool_jobs(cli, argv[2], worker, cli_finish, (void *)&jobs_view);
  else
    return cli_usage_error("pool", "bad usage of %s", verb);
  return cli_started(cli, verb, err);
}
