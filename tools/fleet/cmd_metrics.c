/* cmd_metrics.c -- `fleet metrics`: a Prometheus exporter of what the
 * backend holds (docs/metrics.md, "The exporter"): the jobs of every
 * queue by state, its lifetime counters, its oldest pending job's age,
 * its paused flag and its busiest groups; every lock, pool, cron
 * definition and warm pool. The text is made by cli_q_metrics() from the
 * listings the CLI and the dashboard use, and served on GET /metrics by
 * `fleet metrics --listen ADDR` (the dashboard's HTTP server and access
 * checks, dash_http.c and dash_routes.c, with only that route) and by
 * `fleet dash`; `fleet metrics --once` prints it.
 *
 * A partitioned queue is one queue, its partitions added up (see
 * metrics_queues()).
 *
 * Labels: every object is `name`, a cron definition `cron_namespace` and
 * `name`, a state `state`, a queue's group `group`. Cardinality: one
 * series per object and state, and per queue at most METRICS_GROUPS_TOP
 * groups (the most pending of the first METRICS_GROUPS_READ in name
 * order). A lock's holder is not a label: it changes at each
 * acquisition (`fleet lock get NAME` shows it). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dash_int.h"
#include "map.h"

#define METRICS_QUEUES_MAX 10000
#define METRICS_GROUPS_READ 1000
#define METRICS_GROUPS_TOP 20
#define METRICS_PARTS 5
#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"

static const char metrics_usage[] =
    "usage: fleet metrics [--listen HOST:PORT] [--once] [--read-timeout-ms "
    "MS]\n"
    "                     [--allow-host NAME[:PORT]]... [--token TOKEN]\n"
    "  serves the backend's queues, locks, pools, crons and warm pools as\n"
    "  Prometheus metrics on GET /metrics (default 127.0.0.1:9469; port 0\n"
    "  picks a free one, printed on the first line of output). Each scrape\n"
    "  also records the queues' minute samples of depth and wait for\n"
    "  `fleet queue history`. Stops on Ctrl-C.\n"
    "  --once           print the metrics once on stdout and exit\n"
    "  --allow-host N   also answer requests for the name N (besides "
    "localhost,\n"
    "                   127.0.0.1, [::1] and the listen address); "
    "repeatable\n"
    "  --token TOKEN    require \"Authorization: Bearer TOKEN\" (better:\n"
    "                   FLEET_METRICS_TOKEN, which ps does not show)\n";

/* ------------------------------------------------------------------------ */
/* The query                                                                */

typedef struct metrics_s metrics_t;

typedef struct {
  metrics_t *m;
  int i;
} metrics_part_t;

struct metrics_s {
  cli_t *cli;
  cli_done_fn done;
  void *arg;
  int left; /* parts in flight, and the start */
  int failed;
  cli_json_t *parts[METRICS_PARTS];
  metrics_part_t part[METRICS_PARTS];
};

/* A queue's counts, paused flag, oldest pending age and busiest groups:
 * `item` is "<partitions>:<name>" (mq_on_reads()). */
static int metrics_queue(cli_t *cli, const char *item, cli_done_fn done,
                         void *arg) {
  char *end;
  unsigned long parts = strtoul(item, &end, 10);

  if (*end != ':')
    return FLEET_EINVAL;
  return cli_q_queue_info_parts(cli, end + 1, (uint32_t)parts,
                                METRICS_GROUPS_READ, METRICS_GROUPS_TOP, done,
                                arg);
}

/* A partitioned queue is one queue of the metrics, as in `fleet queue
 * ls` (docs/queue.md, "Partitioned queues"): the names found are read
 * for the partition count of the queue each belongs to ("<q>~<i>" is
 * partition i of <q> when <q> has more than i partitions), and the queues
 * are then read once each, a partitioned one on a handle of every
 * partition: the count goes with the name, as "<count>:<name>". */
typedef struct {
  cli_done_fn done;
  void *arg;
} mq_t;

/* One name's read: the name, and the length of the queue's name it may
 * be a partition of (its own length when it has no "~<digits>"). */
typedef struct {
  cli_done_fn done;
  void *arg;
  size_t base_len;
  char name[];
} mq_read_t;

/* The partition index of `name` ("<q>~<digits>", 1 to 255), with the
 * length of <q>; 0 when it is none. */
static unsigned mq_index(const char *name, size_t *base_len) {
  const char *t = strrchr(name, '~');
  size_t n = t != NULL ? strlen(t + 1) : 0;

  *base_len = strlen(name);
  if (t == NULL || t == name || n == 0 || n > 3 ||
      strspn(t + 1, "0123456789") != n || t[1] == '0' || atoi(t + 1) > 255)
    return 0;
  *base_len = (size_t)(t - name);
  return (unsigned)atoi(t + 1);
}

static void mq_read_done(cli_t *cli, int status, const char *detail,
                         cli_json_t *res, void *arg) {
  mq_read_t *r = arg;

  if (status == 0)
    cli_jadd(res, "name", cli_jstr(r->name));
  r->done(cli, status, detail, res, r->arg);
  free(r);
}

static int mq_read(cli_t *cli, const char *name, cli_done_fn done, void *arg) {
  size_t len = strlen(name), base_len;
  mq_read_t *r = malloc(sizeof(*r) + len + 1);
  char *base;
  int err;

  if (r == NULL)
    return FLEET_ENOMEM;
  memcpy(r->name, name, len + 1);
  r->done = done;
  r->arg = arg;
  mq_index(name, &base_len);
  if ((base = strndup(name, base_len)) == NULL) {
    free(r);
    return FLEET_ENOMEM;
  }
  err = cli_q_queue_parts(cli, base, mq_read_done, r);
  free(base);
  if (err != 0)
    free(r);
  return err;
}

/* Whether the item `v` ("<count>:<name>") is of the name `s`. */
static int mq_is(const cli_json_t *v, const char *s, size_t len) {
  const char *name = strchr(v->str, ':');

  return name != NULL && v->len - (size_t)(name + 1 - v->str) == len &&
         memcmp(name + 1, s, len) == 0;
}

/* Whether the array `a` of items holds the name `s`: the last item
 * first (the names come sorted, so a queue's partitions come together,
 * after the queue's own name). */
static int mq_has(const cli_json_t *a, const char *s, size_t len) {
  const cli_json_t *v;

  if (a->last != NULL && mq_is(a->last, s, len))
    return 1;
  for (v = a->first; v != NULL; v = v->next)
    if (mq_is(v, s, len))
      return 1;
  return 0;
}

/* Every name's count is read: the queues, each once. */
static void mq_on_reads(cli_t *cli, int status, const char *detail,
                        cli_json_t *rows, void *arg) {
  mq_t m = *(mq_t *)arg;
  const cli_json_t *row, *name, *n;
  cli_json_t *names = NULL;
  cli_buf_t item = {0};
  unsigned i;
  size_t base_len;

  free(arg);
  if (status == 0 && (names = cli_jarr()) == NULL)
    status = FLEET_ENOMEM;
  for (row = status == 0 ? rows->first : NULL; row != NULL; row = row->next) {
    if ((name = cli_jget(row, "name")) == NULL || name->type != CLI_JSTR ||
        (n = cli_jget(row, "partitions")) == NULL)
      continue;
    i = mq_index(name->str, &base_len);
    if (i > 0 && (int64_t)i >= n->num)
      base_len = name->len; /* a queue of its own */
    /* (A name found is unique: only a partition's queue may be there.) */
    if (base_len < name->len && mq_has(names, name->str, base_len))
      continue;
    /* The count of the name's queue; a name kept as its own: plain. */
    cli_buf_printf(
        &item, "%u:", base_len == name->len && i > 0 ? 1u : (unsigned)n->num);
    cli_buf_add(&item, name->str, base_len);
    if (item.oom)
      break;
    cli_jadd(names, NULL, cli_jbytes(item.p, item.len));
    item.len = 0;
  }
  cli_jfree(rows);
  if (status == 0 && (names->num == -1 || item.oom))
    status = FLEET_ENOMEM;
  cli_buf_free(&item);
  if (status == 0)
    status = cli_map(cli, names, metrics_queue, m.done, m.arg);
  else
    cli_jfree(names);
  if (status != 0)
    m.done(cli, status, detail, NULL, m.arg);
}

static int metrics_queues(cli_t *cli, cli_done_fn done, void *arg) {
  mq_t *m = malloc(sizeof(*m));
  int err;

  if (m == NULL)
    return FLEET_ENOMEM;
  m->done = done;
  m->arg = arg;
  err = cli_scan_map(cli, FLEET_OBJECT_QUEUE, "*", METRICS_QUEUES_MAX, mq_read,
                     mq_on_reads, m);
  if (err != 0)
    free(m);
  return err;
}

static const cli_list_fn metrics_lists[METRICS_PARTS] = {
    metrics_queues, cli_q_lock_ls_all, cli_q_pool_ls, cli_q_cron_ls_all,
    cli_q_warmpool_ls};

/* The number `key` of `o` (an integer or a boolean), or `def`. */
static int64_t jnum(const cli_json_t *o, const char *key, int64_t def) {
  const cli_json_t *v = o != NULL ? cli_jget(o, key) : NULL;

  return v != NULL && (v->type == CLI_JINT || v->type == CLI_JBOOL) ? v->num
                                                                    : def;
}

static const char *jstr(const cli_json_t *o, const char *key) {
  const cli_json_t *v = o != NULL ? cli_jget(o, key) : NULL;

  return v != NULL && v->type == CLI_JSTR ? v->str : NULL;
}

/* A family's HELP and TYPE lines. */
static void fam(cli_buf_t *b, const char *name, const char *type,
                const char *help) {
  cli_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* `,label="value"` (or without the comma when `first`), escaped as the
 * text format wants. */
static void label(cli_buf_t *b, int first, const char *name, const char *v) {
  cli_buf_printf(b, "%s%s=\"", first ? "" : ",", name);
  for (; v != NULL && *v != '\0'; v++) {
    if (*v == '\\')
      cli_buf_str(b, "\\\\");
    else if (*v == '"')
      cli_buf_str(b, "\\\"");
    else if (*v == '\n')
      cli_buf_str(b, "\\n");
    else
      cli_buf_add(b, v, 1);
  }
  cli_buf_str(b, "\"");
}

/* One sample `metric{name="..."[,extra="..."]} value`. */
static void sample(cli_buf_t *b, const char *metric, const char *name,
                   const char *extra, const char *extra_v, int64_t v) {
  cli_buf_printf(b, "%s{", metric);
  label(b, 1, "name", name);
  if (extra != NULL)
    label(b, 0, extra, extra_v);
  cli_buf_printf(b, "} %lld\n", (long long)v);
}

static void render_queues(cli_buf_t *b, const cli_json_t *qs) {
  static const char *const states[][2] = {
      {"pending", "pending"}, {"delayed", "delayed"},
      {"running", "running"}, {"waiting_children", "waiting_children"},
      {"dead_kept", "dead"},  {"completed_kept", "completed"}};
  const cli_json_t *q, *g;
  const char *n;
  size_t i;
  int64_t age;

  fam(b, "fleet_queue_jobs", "gauge",
      "Jobs of the queue now in each state (dead and completed: the records "
      "kept).");
  for (q = qs->first; q != NULL; q = q->next)
    for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
      if ((n = jstr(q, "queue")) != NULL)
        sample(b, "fleet_queue_jobs", n, "state", states[i][1],
               jnum(q, states[i][0], 0));
  fam(b, "fleet_queue_completed_total", "counter",
      "Jobs of the queue ever completed.");
  for (q = qs->first; q != NULL; q = q->next)
    if ((n = jstr(q, "queue")) != NULL)
      sample(b, "fleet_queue_completed_total", n, NULL, NULL,
             jnum(q, "completed", 0));
  fam(b, "fleet_queue_dead_total", "counter",
      "Jobs of the queue that ever ended dead.");
  for (q = qs->first; q != NULL; q = q->next)
    if ((n = jstr(q, "queue")) != NULL)
      sample(b, "fleet_queue_dead_total", n, NULL, NULL, jnum(q, "dead", 0));
  fam(b, "fleet_queue_oldest_pending_age_seconds", "gauge",
      "Age of the queue's oldest pending job (0: none pending).");
  for (q = qs->first; q != NULL; q = q->next) {
    if ((n = jstr(q, "queue")) == NULL)
      continue;
    age = jnum(q, "oldest_pending_ms", 0);
    age = age > 0 ? age : 0;
    cli_buf_printf(b, "fleet_queue_oldest_pending_age_seconds{");
    label(b, 1, "name", n);
    cli_buf_printf(b, "} %lld.%03lld\n", (long long)(age / 1000),
                   (long long)(age % 1000));
  }
  fam(b, "fleet_queue_paused", "gauge", "1 when the queue is paused.");
  for (q = qs->first; q != NULL; q = q->next)
    if ((n = jstr(q, "queue")) != NULL)
      sample(b, "fleet_queue_paused", n, NULL, NULL, jnum(q, "paused", 0));
  fam(b, "fleet_queue_groups", "gauge", "Groups the queue knows of.");
  for (q = qs->first; q != NULL; q = q->next)
    if ((n = jstr(q, "queue")) != NULL)
      sample(b, "fleet_queue_groups", n, NULL, NULL,
             jnum(q, "groups_total", 0));
  fam(b, "fleet_queue_group_jobs", "gauge",
      "Jobs of the queue's busiest groups (at most 20 per queue) by state.");
  for (q = qs->first; q != NULL; q = q->next) {
    const cli_json_t *gs = cli_jget(q, "groups");

    if ((n = jstr(q, "queue")) == NULL || gs == NULL || gs->type != CLI_JARR)
      continue;
    for (g = gs->first; g != NULL; g = g->next) {
      const char *gn = jstr(g, "group");

      for (i = 0; i < 2 && gn != NULL; i++) {
        cli_buf_str(b, "fleet_queue_group_jobs{");
        label(b, 1, "name", n);
        label(b, 0, "group", gn);
        label(b, 0, "state", i == 0 ? "pending" : "running");
        cli_buf_printf(b, "} %lld\n",
                       (long long)jnum(g, i == 0 ? "pending" : "running", 0));
      }
    }
  }
}

static void render_locks(cli_buf_t *b, const cli_json_t *ls) {
  const cli_json_t *l;
  const char *n;

  fam(b, "fleet_lock_held", "gauge",
      "1 when the lock (or leader election) is held.");
  for (l = ls->first; l != NULL; l = l->next)
    if ((n = jstr(l, "name")) != NULL)
      sample(b, "fleet_lock_held", n, NULL, NULL, jnum(l, "held", 0));
  fam(b, "fleet_lock_fence", "gauge",
      "The lock's fencing token counter: grows by one per acquisition.");
  for (l = ls->first; l != NULL; l = l->next)
    if ((n = jstr(l, "name")) != NULL)
      sample(b, "fleet_lock_fence", n, NULL, NULL, jnum(l, "fence", 0));
}

static void render_pools(cli_buf_t *b, const cli_json_t *ps) {
  const cli_json_t *p;
  const char *n;

  fam(b, "fleet_pool_members", "gauge",
      "Workers that are members of the pool.");
  for (p = ps->first; p != NULL; p = p->next)
    if ((n = jstr(p, "pool")) != NULL)
      sample(b, "fleet_pool_members", n, NULL, NULL,
             jnum(p, "worker_count", 0));
  fam(b, "fleet_pool_jobs", "gauge", "Jobs assigned in the pool.");
  for (p = ps->first; p != NULL; p = p->next)
    if ((n = jstr(p, "pool")) != NULL)
      sample(b, "fleet_pool_jobs", n, NULL, NULL, jnum(p, "job_count", 0));
}

/* A cron definition's sample `metric{cron_namespace,name} value`. */
static void cron_sample(cli_buf_t *b, const char *metric, const char *ns,
                        const char *key, const char *v) {
  cli_buf_printf(b, "%s{", metric);
  label(b, 1, "cron_namespace", ns);
  label(b, 0, "name", key);
  cli_buf_printf(b, "} %s\n", v);
}

static void render_crons(cli_buf_t *b, const cli_json_t *cs, int64_t now_ms) {
  static const char *const names[] = {
      "fleet_cron_lag_seconds", "fleet_cron_last_fire_timestamp_seconds",
      "fleet_cron_fires_total", "fleet_cron_enabled"};
  static const char *const helps[] = {
      "How late the definition's next due fire is (now less its due time, "
      "0 when not due yet).",
      "When the definition last fired (0: never).",
      "Times the definition fired.", "1 when the definition is enabled."};
  const cli_json_t *c, *d, *defs;
  const char *ns, *key;
  char v[48];
  int64_t due, x;
  int k;

  for (k = 0; k < 4; k++) {
    fam(b, names[k], k == 2 ? "counter" : "gauge", helps[k]);
    for (c = cs->first; c != NULL; c = c->next) {
      defs = cli_jget(c, "definitions");
      if ((ns = jstr(c, "namespace")) == NULL || defs == NULL)
        continue;
      for (d = defs->first; d != NULL; d = d->next) {
        if ((key = jstr(d, "key")) == NULL)
          continue;
        if (k == 0) {
          due = jnum(d, "next_due_ms", 0);
          x = due > 0 && now_ms > due && jnum(d, "enabled", 0) &&
                      !jnum(d, "finished", 0)
                  ? now_ms - due
                  : 0;
          snprintf(v, sizeof(v), "%lld.%03lld", (long long)(x / 1000),
                   (long long)(x % 1000));
        } else if (k == 1) {
          x = jnum(d, "last_fire_ms", 0);
          x = x > 0 ? x : 0; /* (-1: never) */
          snprintf(v, sizeof(v), "%lld.%03lld", (long long)(x / 1000),
                   (long long)(x % 1000));
        } else {
          snprintf(v, sizeof(v), "%lld",
                   (long long)jnum(d, k == 2 ? "fires" : "enabled", 0));
        }
        cron_sample(b, names[k], ns, key, v);
      }
    }
  }
}

static void render_warmpools(cli_buf_t *b, const cli_json_t *ws) {
  static const char *const states[] = {"idle", "borrowed", "creating",
                                       "destroying"};
  const cli_json_t *w;
  const char *n;
  size_t i;

  fam(b, "fleet_warmpool_resources", "gauge",
      "Resources of the warm pool by state.");
  for (w = ws->first; w != NULL; w = w->next)
    for (i = 0; i < 4; i++)
      if ((n = jstr(w, "pool")) != NULL)
        sample(b, "fleet_warmpool_resources", n, "state", states[i],
               jnum(w, states[i], 0));
  fam(b, "fleet_warmpool_target", "gauge",
      "The warm pool's target of idle resources.");
  for (w = ws->first; w != NULL; w = w->next)
    if ((n = jstr(w, "pool")) != NULL && jnum(w, "target", -1) >= 0)
      sample(b, "fleet_warmpool_target", n, NULL, NULL, jnum(w, "target", 0));
}

static void metrics_render(metrics_t *m) {
  cli_buf_t b = {0};
  struct timespec ts;
  cli_json_t *res;
  int64_t now_ms;
  int i;

  clock_gettime(CLOCK_REALTIME, &ts);
  now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  fam(&b, "fleet_build_info", "gauge", "The fleet version of the exporter.");
  cli_buf_str(&b, "fleet_build_info{");
  label(&b, 1, "version", fleet_version_string());
  cli_buf_str(&b, "} 1\n");
  fam(&b, "fleet_up", "gauge",
      "1 when every part (queues, locks, pools, crons, warm pools) was read "
      "from the backend; a part that was not is left out.");
  cli_buf_printf(&b, "fleet_up %d\n", m->failed ? 0 : 1);
  if (m->parts[0] != NULL)
    render_queues(&b, m->parts[0]);
  if (m->parts[1] != NULL)
    render_locks(&b, m->parts[1]);
  if (m->parts[2] != NULL)
    render_pools(&b, m->parts[2]);
  if (m->parts[3] != NULL)
    render_crons(&b, m->parts[3], now_ms);
  if (m->parts[4] != NULL)
    render_warmpools(&b, m->parts[4]);
  for (i = 0; i < METRICS_PARTS; i++)
    cli_jfree(m->parts[i]);
  res = b.oom ? NULL : cli_jbytes(b.p, b.len);
  cli_buf_free(&b);
  if (res == NULL)
    m->done(m->cli, FLEET_ENOMEM, NULL, NULL, m->arg);
  else
    m->done(m->cli, 0, NULL, res, m->arg);
  free(m);
}

static void metrics_part_done(cli_t *cli, int status, const char *detail,
                              cli_json_t *res, void *arg) {
  metrics_part_t *p = arg;
  metrics_t *m = p->m;

  (void)cli, (void)detail;
  if (status != 0 || res == NULL || res->type != CLI_JARR) {
    m->failed = 1;
    cli_jfree(res);
  } else {
    m->parts[p->i] = res;
  }
  if (--m->left == 0)
    metrics_render(m);
}

int cli_q_metrics(cli_t *cli, cli_done_fn done, void *arg) {
  metrics_t *m = calloc(1, sizeof(*m));
  int i, err = 0, started = 0;

  if (m == NULL)
    return FLEET_ENOMEM;
  m->cli = cli;
  m->done = done;
  m->arg = arg;
  m->left = 1;
  for (i = 0; i < METRICS_PARTS; i++) {
    m->part[i].m = m;
    m->part[i].i = i;
    m->left++;
    if ((err = metrics_lists[i](cli, metrics_part_done, &m->part[i])) != 0) {
      m->left--;
      m->failed = 1;
    } else {
      started++;
    }
  }
  if (started == 0) {
    free(m);
    return err;
  }
  if (--m->left == 0)
    metrics_render(m);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* GET /metrics                                                             */

static void metrics_served(cli_t *cli, int status, const char *detail,
                           cli_json_t *res, void *arg) {
  dash_conn_t *c = arg;
  dash_t *d = c->d;

  (void)cli;
  if (status != 0)
    dash_respond_text(c, 503, NULL,
                      detail != NULL ? detail : fleet_strerror(status));
  else
    dash_respond(c, 200, METRICS_TYPE, res->str, res->len);
  cli_jfree(res);
  dash_conn_unref(c);
  dash_maybe_done(d);
}

void dash_metrics(dash_conn_t *c) {
  int err = cli_q_metrics(c->d->cli, metrics_served, c);

  if (err != 0) {
    dash_respond_text(c, 503, NULL, fleet_strerror(err));
    dash_conn_unref(c);
  }
}

/* ------------------------------------------------------------------------ */
/* The command                                                              */

static void metrics_printed(cli_t *cli, int status, const char *detail,
                            cli_json_t *res, void *arg) {
  (void)arg;
  if (status == 0) {
    fwrite(res->str, 1, res->len, stdout);
    cli_jfree(res);
    res = NULL;
  }
  cli_finish(cli, status, detail, res, NULL);
}

static void metrics_stopped(dash_t *d) {
  cli_finish(d->cli, 0, NULL, NULL, NULL);
  free(d);
}

static void metrics_signal(uv_signal_t *s, int signum) {
  dash_t *d = s->data;

  (void)signum;
  dash_stop(d, "metrics", NULL);
}

/* Parses HOST:PORT ([v6]:PORT) into `ss` and `host`. Returns 0 or -1. */
static int metrics_addr(const char *listen, struct sockaddr_storage *ss,
                        char *host, size_t cap, uint64_t *port) {
  const char *colon = strrchr(listen, ':');
  size_t n;

  if (colon == NULL || (size_t)(colon - listen) >= cap ||
      cli_parse_u64(colon + 1, 0, 65535, port) != 0)
    return -1;
  memcpy(host, listen, (size_t)(colon - listen));
  host[colon - listen] = '\0';
  n = strlen(host);
  if (n > 2 && host[0] == '[' && host[n - 1] == ']') {
    memmove(host, host + 1, n - 2);
    host[n - 2] = '\0';
  }
  memset(ss, 0, sizeof(*ss));
  if (uv_ip4_addr(host, (int)*port, (struct sockaddr_in *)ss) != 0 &&
      uv_ip6_addr(host, (int)*port, (struct sockaddr_in6 *)ss) != 0)
    return -1;
  return 0;
}

int cli_cmd_metrics(cli_t *cli, int argc, char **argv) {
  const char *listen = cli_opt(&argc, argv, "--listen");
  const char *timeout_s = cli_opt(&argc, argv, "--read-timeout-ms");
  const char *token = cli_opt(&argc, argv, "--token");
  const char *token_from = "--token", *allow[DASH_ALLOW_MAX + 1];
  int once = cli_opt_flag(&argc, argv, "--once"), n_allow = 0, i;
  struct sockaddr_storage ss;
  uint64_t read_timeout = 10000, port;
  int len = sizeof(ss), err;
  char host[256];
  dash_t *d;

  while (n_allow <= DASH_ALLOW_MAX &&
         (allow[n_allow] = cli_opt(&argc, argv, "--allow-host")) != NULL)
    n_allow++;
  if (argc > 1 && cli_is_help(argv[1])) {
    fputs(metrics_usage, stdout);
    return CLI_DONE;
  }
  if (argc != 1) {
    fputs(metrics_usage, stderr);
    return 2;
  }
  cli->sample_history = 1;
  if (once)
    return cli_started(cli, "metrics",
                       cli_q_metrics(cli, metrics_printed, NULL));
  if (timeout_s != NULL &&
      cli_parse_u64(timeout_s, 1, 3600000, &read_timeout) != 0)
    return cli_usage_error(
        "metrics", "--read-timeout-ms: 1 to 3600000 (got %s)", timeout_s);
  if (listen == NULL)
    listen = "127.0.0.1:9469";
  if (metrics_addr(listen, &ss, host, sizeof(host), &port) != 0)
    return cli_usage_error("metrics", "--listen wants IP:PORT (got %s)",
                           listen);
  if ((d = calloc(1, sizeof(*d))) == NULL)
    return 1;
  d->cli = cli;
  d->metrics_only = 1;
  d->read_only = 1;
  d->on_request = dash_route;
  d->on_stopped = metrics_stopped;
  d->read_timeout_ms = read_timeout;
  dash_access_init(&d->access, host, (int)port);
  for (i = 0; i < n_allow; i++) {
    if (i == DASH_ALLOW_MAX || dash_access_allow(&d->access, allow[i]) != 0) {
      free(d);
      return cli_usage_error("metrics",
                             "--allow-host wants NAME or NAME:PORT "
                             "(got %s)",
                             allow[i]);
    }
  }
  if (token == NULL && (token = getenv("FLEET_METRICS_TOKEN")) != NULL &&
      token[0] != '\0')
    token_from = "FLEET_METRICS_TOKEN";
  else if (token == NULL || token[0] == '\0')
    token = NULL;
  if (token != NULL && dash_access_set_token(&d->access, token) != 0) {
    free(d);
    return cli_usage_error("metrics",
                           "%s: letters, digits or \"-._~\" (for example: "
                           "openssl rand -hex 32)",
                           token_from);
  }
  if (token != NULL && strcmp(token_from, "--token") == 0)
    memset((char *)token, 'x', strlen(token));
  uv_tcp_init(cli->loop, &d->server);
  d->server.data = d;
  d->handles = 1;
  err = uv_tcp_bind(&d->server, (const struct sockaddr *)&ss, 0);
  if (err == 0)
    err = uv_listen((uv_stream_t *)&d->server, 128, dash_on_connection);
  if (err == 0)
    err = uv_tcp_getsockname(&d->server, (struct sockaddr *)&ss, &len);
  if (err != 0) {
    fprintf(stderr, "fleet metrics: cannot listen on %s: %s\n", listen,
            uv_strerror(err));
    d->stopping = 1;
    uv_close((uv_handle_t *)&d->server, NULL);
    free(d);
    return 1;
  }
  port = ss.ss_family == AF_INET6
             ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
             : ntohs(((struct sockaddr_in *)&ss)->sin_port);
  d->access.port = (int)port;
  snprintf(d->access.cookie, sizeof(d->access.cookie), "fleet_metrics_%u",
           (unsigned)port);
  uv_signal_init(cli->loop, &d->sigint);
  uv_signal_init(cli->loop, &d->sigterm);
  d->sigint.data = d->sigterm.data = d;
  d->handles += 2;
  uv_signal_start(&d->sigint, metrics_signal, SIGINT);
  uv_signal_start(&d->sigterm, metrics_signal, SIGTERM);
  if (!dash_addr_loopback((const struct sockaddr *)&ss) && token == NULL)
    fprintf(stderr,
            "fleet metrics: warning: listening on %s beyond loopback without "
            "a token: whoever reaches port %u can read the metrics (set "
            "FLEET_METRICS_TOKEN)\n",
            host, (unsigned)port);
  printf("fleet metrics: http://%s%s%s:%u/metrics (backend %s, prefix %s; "
         "%s%s)\n",
         ss.ss_family == AF_INET6 ? "[" : "", host,
         ss.ss_family == AF_INET6 ? "]" : "", (unsigned)port, cli->url_shown,
         cli->prefix, token != NULL ? "token required, from " : "no token",
         token != NULL ? token_from : "");
  fflush(stdout);
  return 0;
}
