/* cmd_cron_admin.c -- `fleet cron enable|disable|trigger|remove KEY`: the
 * verbs that change a cron namespace's registry, through the library's
 * public calls (fleet_cron_enable(), fleet_cron_trigger(),
 * fleet_cron_remove()) on a scheduler handle that is initialized but never
 * started, as `cron ls` reads it (cmd_cron.c). An unknown key is one line
 * and exit 1. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define CRON_ADMIN_NODE_ID "fleet-cli"

/* A Unix ms time as "YYYY-MM-DDTHH:MM:SS.mmmZ". */
static cli_json_t *admin_jtime(int64_t ms) {
  char buf[96];
  struct tm tm;
  time_t t = (time_t)(ms / 1000);

  if (ms < 0 || gmtime_r(&t, &tm) == NULL)
    return cli_jnull();
  snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
           tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
           tm.tm_sec, (int)(ms % 1000));
  return cli_jstr(buf);
}

/* One verb on one definition: the query on a scheduler handle of its own
 * (closed before the query ends), whose result is {"namespace", "key",
 * "action"} and what the call answered. */
typedef struct {
  cli_query_t base;
  fleet_cron_scheduler_t sched;
  char *ns, *key;
} admin_t;

static void admin_finish(cli_query_t *q) {
  admin_t *a = (admin_t *)q;

  free(a->ns);
  free(a->key);
}

/* The answer of a call on the definition: FLEET_ENOTFOUND says which key
 * of which namespace is missing. */
static void admin_answered(admin_t *a, int status) {
  char detail[512];

  if (status == FLEET_ENOTFOUND) {
    snprintf(detail, sizeof(detail),
             "no cron definition \"%s\" in namespace \"%s\"", a->key, a->ns);
    cli_query_answered(&a->base, status, detail);
    return;
  }
  cli_query_answered(&a->base, status, NULL);
}

static void on_status(fleet_handle_t *h, int status, void *ud) {
  (void)h;
  admin_answered(ud, status);
}

static void on_trigger(fleet_cron_scheduler_t *s, int status, int64_t fire_ms,
                       uint64_t token, void *ud) {
  admin_t *a = ud;
  char job[600];

  (void)s;
  if (status == 0) {
    snprintf(job, sizeof(job), "%s@%lld", a->key, (long long)fire_ms);
    cli_jadd(a->base.res, "fire_time", admin_jtime(fire_ms));
    cli_jadd(a->base.res, "fire_ms", cli_jint(fire_ms));
    cli_jadd(a->base.res, "token", cli_jint((int64_t)token));
    cli_jadd(a->base.res, "job", cli_jstr(job));
  } else if (status == FLEET_EINVAL) {
    cli_query_answered(&a->base, status,
                       "only a queue definition can be triggered, after its "
                       "start (a callback or pool definition fires in the "
                       "scheduler node that claims it)");
    return;
  } else if (status == FLEET_EALREADY) {
    cli_query_answered(&a->base, status,
                       "the definition is finished (past its end, or at its "
                       "fire limit)");
    return;
  }
  admin_answered(a, status);
}

/* Starts `action` ("enable", "disable", "trigger", "remove") on the
 * definition `key` of namespace `ns`. Returns 0 or an error (then `done`
 * never runs). */
static int admin_start(cli_t *cli, const char *ns, const char *key,
                       const char *action, cli_done_fn done, void *arg) {
  fleet_cron_scheduler_options_t o;
  admin_t *a = cli_query_new(sizeof(*a), cli, done, arg);
  int err;

  if (a == NULL)
    return FLEET_ENOMEM;
  a->base.finish = admin_finish;
  a->ns = strdup(ns);
  a->key = strdup(key);
  if (a->ns == NULL || a->key == NULL) {
    cli_query_free(&a->base, FLEET_ENOMEM);
    return FLEET_ENOMEM;
  }
  fleet_cron_scheduler_options_init(&o);
  err = cli_query_open(&a->base, (fleet_handle_t *)&a->sched,
                       fleet_cron_scheduler_init(&cli->client, &a->sched, ns,
                                                 CRON_ADMIN_NODE_ID, &o),
                       "namespace", ns);
  if (err != 0)
    return err;
  cli_jadd(a->base.res, "key", cli_jstr(key));
  cli_jadd(a->base.res, "action", cli_jstr(action));
  if (strcmp(action, "trigger") == 0)
    err = fleet_cron_trigger(&a->sched, key, on_trigger, a);
  else if (strcmp(action, "remove") == 0)
    err = fleet_cron_remove(&a->sched, key, on_status, a);
  else
    err = fleet_cron_enable(&a->sched, key, strcmp(action, "enable") == 0,
                            on_status, a);
  return cli_query_sent(&a->base, err);
}

/* "cron KEY in namespace NS: enabled", and for a trigger its occurrence
 * and job. */
static void print_admin(const cli_json_t *res) {
  const char *action = cli_jget(res, "action")->str;
  const cli_json_t *job = cli_jget(res, "job");

  if (job != NULL) {
    fleet_escape_print(stdout,
                       "cron %s in namespace %s: triggered at %s, token %lld, "
                       "job %s",
                       cli_jget(res, "key")->str,
                       cli_jget(res, "namespace")->str,
                       cli_jget(res, "fire_time")->str,
                       (long long)cli_jget(res, "token")->num, job->str);
    return;
  }
  fleet_escape_print(stdout, "cron %s in namespace %s: %s",
                     cli_jget(res, "key")->str, cli_jget(res, "namespace")->str,
                     strcmp(action, "enable") == 0    ? "enabled"
                     : strcmp(action, "disable") == 0 ? "disabled"
                                                      : "removed");
}

static const cli_view_t admin_view = {NULL, print_admin};

int cli_cron_admin_verb(const char *verb) {
  return strcmp(verb, "enable") == 0 || strcmp(verb, "disable") == 0 ||
         strcmp(verb, "trigger") == 0 || strcmp(verb, "remove") == 0;
}

int cli_cmd_cron_admin(cli_t *cli, const char *ns, int argc, char **argv) {
  if (argc != 2)
    return cli_usage_error("cron", "%s takes one KEY", argv[0]);
  return cli_started(
      cli, argv[0],
      admin_start(cli, ns, argv[1], argv[0], cli_finish, (void *)&admin_view));
}
