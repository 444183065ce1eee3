/* cmd_queue_flow.c -- flow control in `fleet queue`: stats (the counts
 * with the limits, what flow control holds now and the groups), limit,
 * hold and weight; their queries, which the dashboard shares (cli.h), on
 * fleet_queue_limits(), fleet_queue_set_limits(), fleet_queue_hold(),
 * fleet_queue_set_group_weight() and fleet_queue_groups(). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Groups `queue stats` reads at most, FLEET_QUEUE_BATCH_MAX a page. */
#define FLOW_GROUPS_MAX 10000

/* ------------------------------------------------------------------------ */
/* Limits and flow                                                          */

/* Adds {"limits": {...}, "flow": {...}} to `res`. */
static void flow_add(cli_json_t *res, const fleet_queue_limits_t *l,
                     const fleet_queue_flow_t *f) {
  cli_json_t *o = cli_jadd(res, "limits", cli_jobj());

  cli_jadd(o, "rate_max", cli_jint(l->rate_max));
  cli_jadd(o, "rate_ms", cli_jint(l->rate_ms));
  cli_jadd(o, "group_rate_max", cli_jint(l->group_rate_max));
  cli_jadd(o, "group_rate_ms", cli_jint(l->group_rate_ms));
  cli_jadd(o, "concurrency", cli_jint(l->concurrency));
  cli_jadd(o, "group_concurrency", cli_jint(l->group_concurrency));
  cli_jadd(
      o, "group_turn",
      cli_jint(l->group_turn != 0 ? l->group_turn : FLEET_GROUP_TURN_DEFAULT));
  o = cli_jadd(res, "flow", cli_jobj());
  cli_jadd(o, "rate_used", cli_jint((int64_t)f->rate_used));
  cli_jadd(o, "running", cli_jint((int64_t)f->running));
  cli_jadd(o, "groups", cli_jint((int64_t)f->groups));
  cli_jadd_time(o, "held_until_ms", (int64_t)f->held_until_ms);
}

static void on_limits(fleet_queue_t *q, int status,
                      const fleet_queue_limits_t *l,
                      const fleet_queue_flow_t *f, void *ud) {
  cli_qctx_t *c = q->data;

  (void)ud;
  if (status == 0)
    flow_add(c->base.res, l, f);
  cli_query_answered(&c->base, status, NULL);
}

/* A change's status: nothing to add to the result. */
static void on_changed(fleet_handle_t *h, int status, void *ud) {
  cli_qctx_t *c = h->data;

  (void)ud;
  cli_query_answered(&c->base, status, NULL);
}

int cli_q_queue_limits(cli_t *cli, const char *queue, cli_done_fn done,
                       void *arg) {
  int err;
  cli_qctx_t *c =
      cli_qctx_open(cli, sizeof(*c), queue, NULL, NULL, done, arg, &err);

  if (c != NULL)
    err = cli_query_sent(&c->base, fleet_queue_limits(&c->q, on_limits, NULL));
  return err;
}

int cli_q_queue_set_limits(cli_t *cli, const char *queue,
                           const fleet_queue_limits_t *l, cli_done_fn done,
                           void *arg) {
  int err;
  cli_qctx_t *c =
      cli_qctx_open(cli, sizeof(*c), queue, NULL, NULL, done, arg, &err);

  if (c == NULL)
    return err;
  /* The change, then the limits read back: one connection answers them
   * in this order. */
  err = fleet_queue_set_limits(&c->q, l, on_changed, NULL);
  if (err == 0) {
    cli_query_sent(&c->base, 0);
    err = fleet_queue_limits(&c->q, on_limits, NULL);
  }
  return cli_query_sent(&c->base, err);
}

int cli_q_queue_hold(cli_t *cli, const char *queue, const char *group,
                     uint32_t ms, cli_done_fn done, void *arg) {
  int err;
  cli_qctx_t *c =
      cli_qctx_open(cli, sizeof(*c), queue, "group", group, done, arg, &err);

  if (c == NULL)
    return err;
  cli_jadd(c->base.res, "held_ms", cli_jint(ms));
  return cli_query_sent(&c->base,
                        fleet_queue_hold(&c->q, group, ms, on_changed, NULL));
}

int cli_q_queue_weight(cli_t *cli, const char *queue, const char *group,
                       uint32_t weight, cli_done_fn done, void *arg) {
  int err;
  cli_qctx_t *c =
      cli_qctx_open(cli, sizeof(*c), queue, "group", group, done, arg, &err);

  if (c == NULL)
    return err;
  cli_jadd(c->base.res, "weight", cli_jint(weight));
  return cli_query_sent(&c->base, fleet_queue_set_group_weight(
                                      &c->q, group, weight, on_changed, NULL));
}

/* ------------------------------------------------------------------------ */
/* Info: counts, limits, groups                                             */

typedef struct {
  cli_qctx_t qc;
  cli_json_t *groups; /* the groups read so far */
  uint64_t total;
  size_t max, top, read, asked;
  char after[FLEET_JOB_GROUP_MAX + 1];
} info_ctx_t;

/* Asks for the next page of groups, after c->after. */
static int info_page(info_ctx_t *c);

static void on_groups(fleet_queue_t *q, int status,
                      const fleet_queue_group_t *g, size_t n, uint64_t total,
                      void *ud) {
  info_ctx_t *c = q->data;
  cli_json_t *o;
  size_t i;

  (void)ud;
  if (status == 0) {
    c->total = total;
    for (i = 0; i < n && c->read < c->max; i++, c->read++) {
      o = cli_jadd(c->groups, NULL, cli_jobj());
      cli_jadd(o, "group", cli_jstr(g[i].name));
      cli_jadd(o, "pending", cli_jint((int64_t)g[i].pending));
      cli_jadd(o, "running", cli_jint((int64_t)g[i].running));
      cli_jadd(o, "rate_used", cli_jint((int64_t)g[i].rate_used));
      cli_jadd(o, "weight", cli_jint(g[i].weight));
      cli_jadd_time(o, "held_until_ms", (int64_t)g[i].held_until_ms);
    }
    /* A full page may have a next one; sent before this answer counts,
     * so that the query does not end in between. */
    if (n > 0 && n == c->asked && c->read < c->max && c->read < total) {
      snprintf(c->after, sizeof(c->after), "%s", g[n - 1].name);
      cli_query_sent(&c->qc.base, info_page(c));
    }
  }
  cli_query_answered(&c->qc.base, status, NULL);
}

static int info_page(info_ctx_t *c) {
  c->asked = c->max - c->read < FLEET_QUEUE_BATCH_MAX ? c->max - c->read
                                                      : FLEET_QUEUE_BATCH_MAX;
  return fleet_queue_groups(&c->qc.q, c->after, c->asked, on_groups, NULL);
}

/* Most pending first, then by name. */
static int info_cmp(const void *a, const void *b) {
  const cli_json_t *x = *(cli_json_t *const *)a, *y = *(cli_json_t *const *)b;
  int64_t px = cli_jget(x, "pending")->num, py = cli_jget(y, "pending")->num;

  if (px != py)
    return px > py ? -1 : 1;
  return strcmp(cli_jget(x, "group")->str, cli_jget(y, "group")->str);
}

/* Keeps the `top` elements of `arr` with the most pending jobs, most
 * first. */
static void info_keep_top(cli_json_t *arr, size_t top) {
  cli_json_t **v, *e;
  size_t i, n = arr->n;

  if (n == 0 || (v = malloc(n * sizeof(*v))) == NULL) {
    if (n > 0)
      arr->num = -1;
    return;
  }
  for (i = 0, e = arr->first; e != NULL; e = e->next)
    v[i++] = e;
  qsort(v, n, sizeof(*v), info_cmp);
  arr->first = arr->last = NULL;
  arr->n = 0;
  for (i = 0; i < n; i++) {
    v[i]->next = NULL;
    if (i >= top) {
      cli_jfree(v[i]);
      continue;
    }
    if (arr->last != NULL)
      arr->last->next = v[i];
    else
      arr->first = v[i];
    arr->last = v[i];
    arr->n++;
  }
  free(v);
}

/* The groups join the result once every page is in. */
static void info_finish(cli_query_t *q) {
  info_ctx_t *c = (info_ctx_t *)q;

  if (q->status == 0 && q->res != NULL && c->groups != NULL) {
    if (c->groups->num == -1)
      q->res->num = -1;
    if (c->top > 0)
      info_keep_top(c->groups, c->top);
    cli_jadd(q->res, "groups_total", cli_jint((int64_t)c->total));
    cli_jadd(q->res, "groups_read", cli_jint((int64_t)c->read));
    cli_jadd(q->res, "groups", c->groups);
    c->groups = NULL;
  } else if (q->res != NULL && c->groups == NULL) {
    q->res->num = -1;
  }
  cli_jfree(c->groups);
  c->groups = NULL;
}

int cli_q_queue_info(cli_t *cli, const char *queue, size_t groups_max,
                     size_t top, cli_done_fn done, void *arg) {
  return cli_q_queue_info_parts(cli, queue, cli_queue_parts(cli, queue),
                                groups_max, top, done, arg);
}

int cli_q_queue_info_parts(cli_t *cli, const char *queue, uint32_t parts,
                           size_t groups_max, size_t top, cli_done_fn done,
                           void *arg) {
  int err;
  info_ctx_t *c = (info_ctx_t *)cli_qctx_open_parts(
      cli, sizeof(*c), queue, parts, NULL, NULL, done, arg, &err);

  if (c == NULL)
    return err;
  c->qc.base.finish = info_finish;
  c->groups = cli_jarr();
  c->max = groups_max;
  c->top = top;
  /* Counts, paused, limits, groups: the replies come in this order, and
   * the members with them. */
  err = fleet_queue_counts(&c->qc.q, cli_q_on_counts, NULL);
  if (err == 0) {
    cli_query_sent(&c->qc.base, 0);
    err = fleet_queue_paused(&c->qc.q, cli_q_on_paused, NULL);
  }
  if (err == 0) {
    cli_query_sent(&c->qc.base, 0);
    err = fleet_queue_limits(&c->qc.q, on_limits, NULL);
  }
  if (err == 0 && groups_max > 0) {
    cli_query_sent(&c->qc.base, 0);
    err = info_page(c);
  }
  return cli_query_sent(&c->qc.base, err);
}

/* ------------------------------------------------------------------------ */
/* Printing                                                                 */

/* A duration in ms as the largest unit that holds it whole: "2m", "1s",
 * "500ms". */
static void flow_dur(char *buf, size_t cap, int64_t ms) {
  if (ms > 0 && ms % 3600000 == 0)
    snprintf(buf, cap, "%lldh", (long long)(ms / 3600000));
  else if (ms > 0 && ms % 60000 == 0)
    snprintf(buf, cap, "%lldm", (long long)(ms / 60000));
  else if (ms > 0 && ms % 1000 == 0)
    snprintf(buf, cap, "%llds", (long long)(ms / 1000));
  else
    snprintf(buf, cap, "%lldms", (long long)ms);
}

static int64_t flow_num(const cli_json_t *o, const char *key) {
  const cli_json_t *v = cli_jget(o, key);

  return v != NULL ? v->num : 0;
}

/* The limits and the flow of `res` as "key: value" lines. */
static void print_limits(const cli_json_t *res) {
  const cli_json_t *l = cli_jget(res, "limits"), *f = cli_jget(res, "flow");
  cli_json_t *kv = cli_jobj();
  char line[160], dur[32];

  if (flow_num(l, "rate_max") > 0) {
    flow_dur(dur, sizeof(dur), flow_num(l, "rate_ms"));
    snprintf(line, sizeof(line), "%lld/%s (%lld in the window)",
             (long long)flow_num(l, "rate_max"), dur,
             (long long)flow_num(f, "rate_used"));
  } else {
    snprintf(line, sizeof(line), "none");
  }
  cli_jadd(kv, "rate", cli_jstr(line));
  if (flow_num(l, "group_rate_max") > 0) {
    flow_dur(dur, sizeof(dur), flow_num(l, "group_rate_ms"));
    snprintf(line, sizeof(line), "%lld/%s per group",
             (long long)flow_num(l, "group_rate_max"), dur);
  } else {
    snprintf(line, sizeof(line), "none");
  }
  cli_jadd(kv, "group rate", cli_jstr(line));
  if (flow_num(l, "concurrency") > 0)
    snprintf(line, sizeof(line), "%lld (%lld running)",
             (long long)flow_num(l, "concurrency"),
             (long long)flow_num(f, "running"));
  else
    snprintf(line, sizeof(line), "none (%lld running)",
             (long long)flow_num(f, "running"));
  cli_jadd(kv, "concurrency", cli_jstr(line));
  if (flow_num(l, "group_concurrency") > 0)
    snprintf(line, sizeof(line), "%lld per group",
             (long long)flow_num(l, "group_concurrency"));
  else
    snprintf(line, sizeof(line), "none");
  cli_jadd(kv, "group concurrency", cli_jstr(line));
  snprintf(line, sizeof(line), "%lld jobs per group",
           (long long)flow_num(l, "group_turn"));
  cli_jadd(kv, "group turn", cli_jstr(line));
  cli_time_iso(flow_num(f, "held_until_ms"), line, sizeof(line));
  cli_jadd(kv, "held until", cli_jstr(line[0] != '\0' ? line : "not held"));
  snprintf(line, sizeof(line), "%lld with pending jobs",
           (long long)flow_num(f, "groups"));
  cli_jadd(kv, "groups", cli_jstr(line));
  if (kv != NULL && kv->num != -1)
    cli_kv(stdout, kv);
  else
    fprintf(stderr, "fleet: out of memory\n");
  cli_jfree(kv);
}

static const char *const group_cols[] = {
    "group", "pending", "running", "rate_used", "weight", "held_until", NULL};

/* `queue stats`: the counts, the limits, then the groups. */
static void print_info(const cli_json_t *res) {
  /* What is in each state now ("completed" and "dead": the JSON's
   * completed_now and dead_now), then the lifetime counters, labelled. */
  static const char *const lines[][2] = {
      {"queue", "queue"},
      {"pending", "pending"},
      {"delayed", "delayed"},
      {"running", "running"},
      {"completed", "completed_now"},
      {"dead", "dead_now"},
      {"waiting_children", "waiting_children"},
      {"paused", "paused"},
      {"completed_ever", "completed_ever"},
      {"dead_ever", "dead_ever"}};
  const cli_json_t *m, *groups = cli_jget(res, "groups");
  cli_json_t *kv = cli_jobj(), *rows = cli_jcopy(groups), *row;
  size_t i;

  for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
    if ((m = cli_jget(res, lines[i][1])) != NULL)
      cli_jadd(kv, lines[i][0], cli_jcopy(m));
  /* A group not held: an empty cell rather than null. */
  for (row = rows != NULL ? rows->first : NULL; row != NULL; row = row->next) {
    cli_json_t *h = cli_jget(row, "held_until");

    if (h != NULL && h->type == CLI_JNULL && (h->str = strdup("")) != NULL)
      h->type = CLI_JSTR;
  }
  if (kv == NULL || kv->num == -1 || rows == NULL || rows->num == -1) {
    fprintf(stderr, "fleet: out of memory\n");
  } else {
    cli_kv(stdout, kv);
    fputc('\n', stdout);
    print_limits(res);
    if (flow_num(res, "groups_total") > 0) {
      fputc('\n', stdout);
      cli_table(stdout, rows, group_cols);
      if (flow_num(res, "groups_read") < flow_num(res, "groups_total"))
        fleet_escape_print(stdout,
                           "%lld group(s); the first %lld by name "
                           "shown",
                           (long long)flow_num(res, "groups_total"),
                           (long long)flow_num(res, "groups_read"));
      else
        fleet_escape_print(stdout, "%lld group(s)",
                           (long long)flow_num(res, "groups_total"));
    }
  }
  cli_jfree(kv);
  cli_jfree(rows);
}

static const cli_view_t info_view = {NULL, print_info};
static const cli_view_t limits_view = {NULL, print_limits};

/* ------------------------------------------------------------------------ */
/* The verbs                                                                */

static int usage_error(const char *fmt, const char *arg) {
  return cli_usage_error("queue", fmt, arg);
}

/* An option's usage error: "<opt>: <what> (got <arg>)". */
static int opt_error(const char *opt, const char *what, const char *arg) {
  char fmt[256];

  snprintf(fmt, sizeof(fmt), "%s: %s (got %%s)", opt, what);
  return usage_error(fmt, arg);
}

/* A duration: a whole number and a unit, ms, s, m or h, from 1 ms to
 * FLEET_LIMIT_WINDOW_MAX_MS (24 h). Returns 0 or -1. */
static int parse_ms(const char *s, uint32_t *out) {
  static const struct {
    const char *unit;
    uint64_t ms;
  } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
  uint64_t v = 0;
  size_t i;

  if (*s < '0' || *s > '9')
    return -1;
  for (; *s >= '0' && *s <= '9'; s++) {
    if (v > FLEET_LIMIT_WINDOW_MAX_MS)
      return -1;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
    if (strcmp(s, units[i].unit) == 0) {
      v *= units[i].ms;
      if (v == 0 || v > FLEET_LIMIT_WINDOW_MAX_MS)
        return -1;
      *out = (uint32_t)v;
      return 0;
    }
  return -1;
}

#define DUR_WHAT "a duration from 1ms to 24h: a whole number and ms, s, m or h"

/* A rate of `opt`, "MAX/DURATION". Returns 0, or 2 after a usage error. */
static int parse_rate(const char *opt, const char *s, uint32_t *max,
                      uint32_t *ms) {
  const char *slash = strchr(s, '/');
  char num[24];
  uint64_t v;

  if (slash == NULL)
    return opt_error(opt, "MAX/DURATION, e.g. 100/1s", s);
  if ((size_t)(slash - s) >= sizeof(num))
    return opt_error(opt, "the max is a whole number from 1 to 1000000", s);
  memcpy(num, s, (size_t)(slash - s));
  num[slash - s] = '\0';
  if (cli_parse_u64(num, 1, FLEET_LIMIT_RATE_MAX, &v) != 0)
    return opt_error(opt, "the max is a whole number from 1 to 1000000", s);
  if (parse_ms(slash + 1, ms) != 0)
    return opt_error(opt, "after the '/', " DUR_WHAT, s);
  *max = (uint32_t)v;
  return 0;
}

/* A concurrency limit of `opt`. Returns 0, or 2 after a usage error. */
static int parse_count(const char *opt, const char *s, uint32_t *out) {
  uint64_t v;

  if (cli_parse_u64(s, 1, FLEET_LIMIT_RATE_MAX, &v) != 0)
    return opt_error(opt,
                     "a whole number from 1 to 1000000 (leave the option "
                     "out for no limit)",
                     s);
  *out = (uint32_t)v;
  return 0;
}

/* --group-turn: 1 to FLEET_QUEUE_BATCH_MAX jobs. Returns 0, or 2 after
 * a usage error. */
static int parse_turn(const char *s, uint32_t *out) {
  uint64_t v;

  if (cli_parse_u64(s, 1, FLEET_QUEUE_BATCH_MAX, &v) != 0)
    return opt_error("--group-turn", "a whole number of jobs from 1 to 1000",
                     s);
  *out = (uint32_t)v;
  return 0;
}

/* A group name: 1 to FLEET_JOB_GROUP_MAX bytes. Returns 0, or 2 after a
 * usage error. */
static int check_group(const char *g) {
  if (g[0] == '\0' || strlen(g) > FLEET_JOB_GROUP_MAX)
    return usage_error("a group name is 1 to 128 bytes (got \"%s\")", g);
  return 0;
}

static int cmd_limit(cli_t *cli, int argc, char **argv) {
  const char *rate = NULL, *grate = NULL, *conc = NULL, *gconc = NULL;
  const char *gturn = NULL;
  int clear = 0, any, rc;
  const cli_optdef_t opts[] = {CLI_OPT("--rate", &rate),
                               CLI_OPT("--group-rate", &grate),
                               CLI_OPT("--concurrency", &conc),
                               CLI_OPT("--group-concurrency", &gconc),
                               CLI_OPT("--group-turn", &gturn),
                               CLI_FLAG("--clear", &clear),
                               CLI_OPT_END};
  fleet_queue_limits_t l;

  if ((rc = cli_opts("queue", &argc, argv, opts)) != 0)
    return rc;
  if (argc > 2)
    return usage_error("unexpected argument %s", argv[2]);
  if (argc != 2)
    return usage_error("%s takes a queue name", "limit");
  any = rate != NULL || grate != NULL || conc != NULL || gconc != NULL ||
        gturn != NULL;
  if (clear && any)
    return usage_error("%s: --clear takes no other option", "limit");
  memset(&l, 0, sizeof(l));
  if ((rate != NULL &&
       (rc = parse_rate("--rate", rate, &l.rate_max, &l.rate_ms)) != 0) ||
      (grate != NULL &&
       (rc = parse_rate("--group-rate", grate, &l.group_rate_max,
                        &l.group_rate_ms)) != 0) ||
      (conc != NULL &&
       (rc = parse_count("--concurrency", conc, &l.concurrency)) != 0) ||
      (gconc != NULL && (rc = parse_count("--group-concurrency", gconc,
                                          &l.group_concurrency)) != 0) ||
      (gturn != NULL && (rc = parse_turn(gturn, &l.group_turn)) != 0))
    return rc;
  if (!cli_queue_known(cli, argv[1], 0))
    return 0;
  if (clear || any)
    rc = cli_q_queue_set_limits(cli, argv[1], clear ? NULL : &l, cli_finish,
                                (void *)&limits_view);
  else
    rc = cli_q_queue_limits(cli, argv[1], cli_finish, (void *)&limits_view);
  return cli_started(cli, "limit", rc);
}

static int cmd_hold(cli_t *cli, int argc, char **argv) {
  const char *dur = NULL, *group = NULL;
  const cli_optdef_t opts[] = {CLI_OPT("--for", &dur),
                               CLI_OPT("--group", &group), CLI_OPT_END};
  uint32_t ms;
  int rc;

  if ((rc = cli_opts("queue", &argc, argv, opts)) != 0)
    return rc;
  if (argc > 2)
    return usage_error("unexpected argument %s", argv[2]);
  if (argc != 2)
    return usage_error("%s takes a queue name", "hold");
  if (dur == NULL)
    return usage_error("%s takes --for DURATION, e.g. --for 5s", "hold");
  if (parse_ms(dur, &ms) != 0)
    return opt_error("--for", DUR_WHAT, dur);
  if (group != NULL && (rc = check_group(group)) != 0)
    return rc;
  if (!cli_queue_known(cli, argv[1], 0))
    return 0;
  return cli_started(
      cli, "hold", cli_q_queue_hold(cli, argv[1], group, ms, cli_finish, NULL));
}

static int cmd_weight(cli_t *cli, int argc, char **argv) {
  uint64_t w;
  int rc;

  if ((rc = cli_opts("queue", &argc, argv, NULL)) != 0)
    return rc;
  if (argc != 4)
    return usage_error("%s takes a queue name, a group and a weight", "weight");
  if ((rc = check_group(argv[2])) != 0)
    return rc;
  if (cli_parse_u64(argv[3], 1, FLEET_GROUP_WEIGHT_MAX, &w) != 0)
    return usage_error("weight: a whole number from 1 to 1000 (got %s)",
                       argv[3]);
  if (!cli_queue_known(cli, argv[1], 0))
    return 0;
  return cli_started(
      cli, "weight",
      cli_q_queue_weight(cli, argv[1], argv[2], (uint32_t)w, cli_finish, NULL));
}

int cli_cmd_queue_flow(cli_t *cli, int argc, char **argv) {
  int rc;

  if (strcmp(argv[0], "limit") == 0)
    return cmd_limit(cli, argc, argv);
  if (strcmp(argv[0], "hold") == 0)
    return cmd_hold(cli, argc, argv);
  if (strcmp(argv[0], "weight") == 0)
    return cmd_weight(cli, argc, argv);
  if ((rc = cli_opts("queue", &argc, argv, NULL)) != 0)
    return rc;
  if (argc != 2)
    return usage_error("%s takes a queue name", argv[0]);
  if (!cli_queue_known(cli, argv[1], 0))
    return 0;
  return cli_started(cli, argv[0],
                     cli_q_queue_info(cli, argv[1], FLOW_GROUPS_MAX, 0,
                                      cli_finish, (void *)&info_view));
}
