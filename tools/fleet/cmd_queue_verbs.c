/* cmd_queue_verbs.c -- `fleet queue delete|run|kill Q ID` and `fleet queue
 * remove Q [--force]`: one job's verbs and removing a queue
 * (fleet_queue_delete_job(), fleet_queue_run_job(), fleet_queue_kill_job(),
 * fleet_queue_remove()), each a query the dashboard's routes share
 * (dash_jobs.c), and one line of outcome. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* A verb's query: the queue handle, and the verb for the error's words. */
typedef struct {
  cli_qctx_t base;
  const char *verb;
  char detail[FLEET_JOB_ID_MAX + 160];
} verb_ctx_t;

static verb_ctx_t *verb_of(fleet_queue_t *q) {
  return (verb_ctx_t *)q->data;
}

/* The one-line detail of a refusal, in the user's terms. */
static const char *verb_detail(verb_ctx_t *c, int status, const char *id) {
  const char *q = fleet_queue_name(&c->base.q);

  if (status == FLEET_ENOTFOUND)
    snprintf(c->detail, sizeof(c->detail), "no job %s in queue %s", id, q);
  else if (status == FLEET_EBUSY && strcmp(c->verb, "run") == 0)
    snprintf(c->detail, sizeof(c->detail),
             "job %s is running or waits for its children", id);
  else if (status == FLEET_EBUSY)
    snprintf(c->detail, sizeof(c->detail),
             "job %s is running: stop it with fleet queue cancel %s %s", id, q,
             id);
  else if (status == FLEET_EALREADY)
    snprintf(c->detail, sizeof(c->detail), "job %s has finished", id);
  else
    return NULL;
  return c->detail;
}

static void on_verb(fleet_queue_t *q, int status, fleet_job_state_t was,
                    void *ud) {
  verb_ctx_t *c = verb_of(q);
  const cli_json_t *idj = cli_jget(c->base.base.res, "id");
  const char *id = idj != NULL ? idj->str : "?";

  (void)ud;
  if (status == 0) {
    cli_jadd(c->base.base.res, "action", cli_jstr(c->verb));
    cli_jadd(c->base.base.res, "was", cli_jstr(fleet_job_state_name(was)));
  }
  cli_query_answered(&c->base.base, status,
                     status != 0 ? verb_detail(c, status, id) : NULL);
}

int cli_q_queue_job_verb(cli_t *cli, const char *queue, const char *verb,
                         const char *id, cli_done_fn done, void *arg) {
  int (*fn)(fleet_queue_t *, const char *, fleet_queue_job_verb_cb, void *);
  verb_ctx_t *c;
  int err;

  if (strcmp(verb, "delete") == 0)
    fn = fleet_queue_delete_job;
  else if (strcmp(verb, "run") == 0)
    fn = fleet_queue_run_job;
  else if (strcmp(verb, "kill") == 0)
    fn = fleet_queue_kill_job;
  else
    return FLEET_EINVAL;
  c = (verb_ctx_t *)cli_qctx_open(cli, sizeof(*c), queue, "id", id, done, arg,
                                  &err);
  if (c == NULL)
    return err;
  c->verb = verb;
  return cli_query_sent(&c->base.base, fn(&c->base.q, id, on_verb, NULL));
}

static void on_remove(fleet_queue_t *q, int status, uint64_t keys,
                      uint64_t jobs, void *ud) {
  verb_ctx_t *c = verb_of(q);

  (void)ud;
  if (status == 0) {
    cli_jadd(c->base.base.res, "removed", cli_jbool(1));
    cli_jadd(c->base.base.res, "keys", cli_jint((int64_t)keys));
    cli_jadd(c->base.base.res, "jobs", cli_jint((int64_t)jobs));
  } else if (status == FLEET_ENOTFOUND) {
    snprintf(c->detail, sizeof(c->detail), "no queue %s", fleet_queue_name(q));
  } else if (status == FLEET_EBUSY) {
    snprintf(c->detail, sizeof(c->detail),
             "queue %s has jobs pending, delayed, running or waiting: "
             "remove it with --force",
             fleet_queue_name(q));
  }
  cli_query_answered(
      &c->base.base, status,
      status == FLEET_ENOTFOUND || status == FLEET_EBUSY ? c->detail : NULL);
}

int cli_q_queue_remove(cli_t *cli, const char *queue, int force,
                       cli_done_fn done, void *arg) {
  verb_ctx_t *c;
  int err;

  c = (verb_ctx_t *)cli_qctx_open(cli, sizeof(*c), queue, NULL, NULL, done, arg,
                                  &err);
  if (c == NULL)
    return err;
  c->verb = "remove";
  return cli_query_sent(&c->base.base,
                        fleet_queue_remove(&c->base.q, force, on_remove, NULL));
}

/* ------------------------------------------------------------------------ */
/* The verbs                                                                */

/* One line: what was done to the job, and the state it was in. */
static void print_verb(const cli_json_t *res) {
  const char *action = cli_jget(res, "action")->str;
  const char *was = cli_jget(res, "was")->str;
  const char *id = cli_jget(res, "id")->str;
  const char *q = cli_jget(res, "queue")->str;

  if (strcmp(action, "run") == 0 && strcmp(was, "pending") == 0)
    fleet_escape_print(stdout,
                       "job %s of queue %s is pending already: "
                       "nothing to do",
                       id, q);
  else if (strcmp(action, "run") == 0)
    fleet_escape_print(stdout, "job %s of queue %s runs now (it was %s)", id, q,
                       was);
  else if (strcmp(action, "kill") == 0)
    fleet_escape_print(stdout,
                       "killed job %s of queue %s (it was %s): dead, "
                       "error \"killed\"",
                       id, q, was);
  else
    fleet_escape_print(stdout, "deleted job %s of queue %s (it was %s)", id, q,
                       was);
}

static void print_remove(const cli_json_t *res) {
  fleet_escape_print(
      stdout, "removed queue %s: %lld keys, %lld unfinished job(s)",
      cli_jget(res, "queue")->str, (long long)cli_jget(res, "keys")->num,
      (long long)cli_jget(res, "jobs")->num);
}

static const cli_view_t verb_view = {NULL, print_verb};
static const cli_view_t remove_view = {NULL, print_remove};

int cli_cmd_queue_verbs(cli_t *cli, int argc, char **argv) {
  const char *verb = argv[0];
  int force, err;

  if (strcmp(verb, "remove") == 0) {
    force = cli_opt_flag(&argc, argv, "--force");
    if (argc != 2)
      return cli_usage_error("queue", "%s takes a queue name [--force]", verb);
    err = cli_q_queue_remove(cli, argv[1], force, cli_finish,
                             (void *)&remove_view);
  } else {
    if (argc != 3)
      return cli_usage_error("queue", "%s takes a queue name and a job id",
                             verb);
    err = cli_q_queue_job_verb(cli, argv[1], verb, argv[2], cli_finish,
                               (void *)&verb_view);
  }
  return cli_started(cli, verb, err);
}
