/* dash_jobs.c -- the dashboard's routes of one job's verbs: POST
 * /api/job/delete, /api/job/run and /api/job/kill ?queue=Q&id=ID
 * (fleet_queue_delete_job(), fleet_queue_run_job(),
 * fleet_queue_kill_job() through the CLI's queries, cmd_queue_verbs.c).
 * The router (dash_routes.c) checks access, read-only mode, the header
 * and Origin of a change and ?queue and ?id, then calls one of these as
 * the `job` of its route. Their answers, the contract the page relies
 * on: 200 {"ok": true, "queue", "id", "was": the state the job was in};
 * 404 {"error": "no such job"}; 409 {"error": "job is running", ...} or
 * {"error": "job has finished", ...}; any other error as the router
 * answers it. */
#include <stdlib.h>
#include <string.h>

#include "dash_int.h"

/* A verb's request: the router's done function and its argument (the
 * connection). */
typedef struct {
  cli_done_fn done;
  dash_conn_t *c;
} dash_job_req_t;

/* Answers a refusal in the routes' contract: {"error": what, "detail"}. */
static void jobs_refuse(dash_conn_t *c, int code, const char *what,
                        const char *detail) {
  cli_json_t *o = cli_jobj();

  cli_jadd(o, "error", cli_jstr(what));
  if (detail != NULL)
    cli_jadd(o, "detail", cli_jstr(detail));
  if (o == NULL)
    dash_respond(c, code, "text/plain", what, strlen(what));
  else
    dash_respond_json(c, code, o);
  cli_jfree(o);
}

/* The verb's end: the contract's answer, then the router's done function,
 * which gives up the connection's reference (its own answer then comes
 * second, and is not sent, when this one was). */
static void jobs_done(cli_t *cli, int status, const char *detail,
                      cli_json_t *res, void *arg) {
  dash_job_req_t *r = arg;
  cli_json_t *o = NULL;
  const cli_json_t *v;

  if (status == 0) {
    o = cli_jobj();
    cli_jadd(o, "ok", cli_jbool(1));
    if ((v = cli_jget(res, "queue")) != NULL)
      cli_jadd(o, "queue", cli_jcopy(v));
    if ((v = cli_jget(res, "id")) != NULL)
      cli_jadd(o, "id", cli_jcopy(v));
    if ((v = cli_jget(res, "was")) != NULL)
      cli_jadd(o, "was", cli_jcopy(v));
    if (o == NULL)
      status = FLEET_ENOMEM;
  } else if (status == FLEET_ENOTFOUND) {
    jobs_refuse(r->c, 404, "no such job", detail);
  } else if (status == FLEET_EBUSY) {
    jobs_refuse(r->c, 409, "job is running", detail);
  } else if (status == FLEET_EALREADY) {
    jobs_refuse(r->c, 409, "job has finished", detail);
  }
  cli_jfree(res);
  r->done(cli, status, detail, o, r->c);
  free(r);
}

/* Starts `verb` on job `id` of `queue`; `arg` is the connection. */
static int jobs_verb(cli_t *cli, const char *verb, const char *queue,
                     const char *id, cli_done_fn done, void *arg) {
  dash_job_req_t *r = malloc(sizeof(*r));
  int err;

  if (r == NULL)
    return FLEET_ENOMEM;
  r->done = done;
  r->c = arg;
  if ((err = cli_q_queue_job_verb(cli, queue, verb, id, jobs_done, r)) != 0)
    free(r);
  return err;
}

int dash_job_delete(cli_t *cli, const char *queue, const char *id,
                    cli_done_fn done, void *arg) {
  return jobs_verb(cli, "delete", queue, id, done, arg);
}

int dash_job_run(cli_t *cli, const char *queue, const char *id,
                 cli_done_fn done, void *arg) {
  return jobs_verb(cli, "run", queue, id, done, arg);
}

int dash_job_kill(cli_t *cli, const char *queue, const char *id,
                  cli_done_fn done, void *arg) {
  return jobs_verb(cli, "kill", queue, id, done, arg);
}
