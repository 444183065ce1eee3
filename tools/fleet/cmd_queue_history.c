/* cmd_queue_history.c -- `fleet queue history Q [--days N | --minutes N]`:
 * a queue's history, kept in the backend (fleet_queue_history(),
 * docs/metrics.md "Queue history"): the jobs processed and failed per
 * day or per minute, and per minute the depth and wait the readers
 * sampled. The query cli_q_queue_history() also serves the dashboard's
 * /api/history. */
#include <string.h>
#include <time.h>

#include "cli.h"

/* Days shown by default. */
#define HISTORY_DAYS 7

typedef struct {
  cli_qctx_t qc;
  fleet_hist_res_t res;
} history_t;

void cli_time_iso_utc(int64_t ms, char *buf, size_t len) {
  time_t s = (time_t)(ms / 1000);
  struct tm tm;

  if (gmtime_r(&s, &tm) == NULL ||
      strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
    snprintf(buf, len, "%lld", (long long)ms);
}

static void history_on_points(fleet_queue_t *q, int status,
                              const fleet_hist_point_t *pts, size_t n,
                              void *ud) {
  history_t *h = q->data;
  cli_json_t *arr, *o;
  char t[32];
  size_t i;

  (void)ud;
  if (status == 0) {
    arr = cli_jadd(h->qc.base.res, "points", cli_jarr());
    for (i = 0; i < n; i++) {
      o = cli_jadd(arr, NULL, cli_jobj());
      cli_time_iso_utc(pts[i].t_ms, t, sizeof(t));
      cli_jadd(o, "t", cli_jstr(t));
      cli_jadd(o, "processed", cli_jint((int64_t)pts[i].processed));
      cli_jadd(o, "failed", cli_jint((int64_t)pts[i].failed));
      cli_jadd(o, "depth",
               pts[i].depth < 0 ? cli_jnull() : cli_jint(pts[i].depth));
      cli_jadd(o, "wait_ms",
               pts[i].wait_ms < 0 ? cli_jnull() : cli_jint(pts[i].wait_ms));
    }
  }
  cli_query_answered(&h->qc.base, status, NULL);
}

int cli_q_queue_history(cli_t *cli, const char *queue, fleet_hist_res_t res,
                        uint64_t count, cli_done_fn done, void *arg) {
  int64_t step = res == FLEET_HIST_DAY ? 86400000 : 60000;
  history_t *h;
  int err;

  if (count == 0 || count > (res == FLEET_HIST_DAY ? FLEET_HIST_DAYS_MAX
                                                   : FLEET_HIST_MINUTES_MAX))
    return FLEET_EINVAL;
  h = (history_t *)cli_qctx_open(cli, sizeof(history_t), queue, "res",
                                 res == FLEET_HIST_DAY ? "day" : "minute", done,
                                 arg, &err);
  if (h == NULL)
    return err;
  h->res = res;
  /* The last `count` points, the current one included. */
  err = fleet_queue_history(&h->qc.q, res, -(int64_t)(count - 1) * step, 0,
                            history_on_points, NULL);
  return cli_query_sent(&h->qc.base, err);
}

/* The points as a table; per minute with the samples (null where none
 * was taken). */
static void history_print(const cli_json_t *res) {
  static const char *const cols[] = {"t",     "processed", "failed",
                                     "depth", "wait_ms",   NULL};
  static const char *const day_cols[] = {"t", "processed", "failed", NULL};
  const cli_json_t *pts = cli_jget(res, "points");
  const cli_json_t *r = cli_jget(res, "res");
  int day = r != NULL && r->type == CLI_JSTR && strcmp(r->str, "day") == 0;

  if (pts != NULL)
    cli_table(stdout, pts, day ? day_cols : cols);
}

static const cli_view_t history_view = {NULL, history_print};

int cli_cmd_queue_history(cli_t *cli, int argc, char **argv) {
  const char *days_s, *minutes_s;
  uint64_t n = HISTORY_DAYS;
  fleet_hist_res_t res = FLEET_HIST_DAY;

  days_s = cli_opt(&argc, argv, "--days");
  minutes_s = cli_opt(&argc, argv, "--minutes");
  if (argc != 2)
    return cli_usage_error("queue", "history takes a queue name%s", "");
  if (days_s != NULL && minutes_s != NULL)
    return cli_usage_error("queue", "history: --days or --minutes, not both%s",
                           "");
  if (days_s != NULL && cli_parse_u64(days_s, 1, 32, &n) != 0)
    return cli_usage_error("queue", "history: --days: 1 to 32 (got %s)",
                           days_s);
  if (minutes_s != NULL) {
    res = FLEET_HIST_MINUTE;
    if (cli_parse_u64(minutes_s, 1, FLEET_HIST_MINUTES_MAX, &n) != 0)
      return cli_usage_error("queue", "history: --minutes: 1 to 1500 (got %s)",
                             minutes_s);
  }
  return cli_started(cli, "history",
                     cli_q_queue_history(cli, argv[1], res, n, cli_finish,
                                         (void *)&history_view));
}
