/* dash_overview.c -- the dashboard's overview: every queue, lock, pool,
 * cron and warm pool at once (five listings in parallel, one answer, or
 * the page with the answer inlined), and the throughput sampler that keeps
 * the last DASH_SAMPLES counters of every queue for its chart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "assets.h"
#include "dash_int.h"

static const char page_marker[] = "/*FLEET_INITIAL*/null";

/* The overview's parts: their names in it, and the listings that make
 * them (dash_ov_part_t.i is the index). */
static const struct {
  const char *name;
  cli_list_fn list;
} ov_parts[DASH_OV_PARTS] = {{"queues", cli_q_queue_ls},
                             {"locks", cli_q_lock_ls_all},
                             {"pools", cli_q_pool_ls},
                             {"crons", cli_q_cron_ls_all},
                             {"warmpools", cli_q_warmpool_ls}};

/* The wall clock, Unix ms. */
static int64_t wall_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A Unix ms time as "YYYY-MM-DDTHH:MM:SSZ" (UTC), or JSON null for 0. */
static cli_json_t *iso_time(int64_t ms) {
  char buf[32];
  time_t t = (time_t)(ms / 1000);
  struct tm tm;

  if (ms <= 0 || gmtime_r(&t, &tm) == NULL)
    return cli_jnull();
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return cli_jstr(buf);
}

void dash_backend_seen(dash_t *d, int status, const char *detail) {
  if (status == 0) {
    d->last_ok_ms = wall_ms();
    d->down_since_ms = 0;
    d->down_reason[0] = '\0';
  } else if (d->down_since_ms == 0) {
    d->down_since_ms = wall_ms();
    snprintf(d->down_reason, sizeof(d->down_reason), "%s: %s",
             fleet_err_name(status),
             detail != NULL && detail[0] != '\0' ? detail
                                                 : fleet_strerror(status));
  }
}

/* The backend's state for the page: {"ok", "last_ok", "down_since",
 * "reason"}, the times as UTC ISO-8601 (null when none). */
static cli_json_t *backend_state(const dash_t *d) {
  cli_json_t *b = cli_jobj();

  cli_jadd(b, "ok", cli_jbool(d->down_since_ms == 0));
  cli_jadd(b, "last_ok", iso_time(d->last_ok_ms));
  cli_jadd(b, "down_since", iso_time(d->down_since_ms));
  cli_jadd(b, "reason",
           d->down_since_ms != 0 ? cli_jstr(d->down_reason) : cli_jnull());
  return b;
}

/* The overview: every part (null for one whose query failed: unknown,
 * never empty), the backend's state, and, when a part failed, "error" and
 * "detail"; for /api/overview, 503 then. */
static void overview_send(dash_conn_t *c) {
  const cli_asset_t *a = cli_asset_find("/index.html", 11);
  const char *mark;
  cli_json_t *o = cli_jobj();
  cli_buf_t b = {0};
  int i;

  cli_jadd(o, "url", cli_jstr(c->d->cli->url_shown));
  cli_jadd(o, "prefix", cli_jstr(c->d->cli->prefix));
  for (i = 0; i < DASH_OV_PARTS; i++) {
    cli_jadd(o, ov_parts[i].name, c->ov[i] != NULL ? c->ov[i] : cli_jnull());
    c->ov[i] = NULL;
  }
  cli_jadd(o, "read_only", cli_jbool(c->d->read_only));
  cli_jadd(o, "sample_ms", cli_jint(DASH_SAMPLE_MS));
  cli_jadd(o, "history", cli_jcopy(c->d->history));
  dash_backend_seen(c->d, c->ov_status, c->ov_detail);
  cli_jadd(o, "backend", backend_state(c->d));
  cli_jadd(o, "now", iso_time(wall_ms()));
  if (c->d->test_hooks)
    cli_jadd(o, "test_hooks", cli_jbool(1));
  if (c->ov_status != 0) {
    cli_jadd(o, "error", cli_jstr(fleet_err_name(c->ov_status)));
    cli_jadd(o, "detail",
             cli_jstr(c->ov_detail[0] != '\0' ? c->ov_detail
                                              : fleet_strerror(c->ov_status)));
  }
  if (!c->page) {
    dash_respond_json(c, c->ov_status != 0 ? 503 : 200, o);
  } else if (a != NULL && (mark = memmem(a->data, a->len, page_marker,
                                         sizeof(page_marker) - 1)) != NULL) {
    cli_buf_add(&b, a->data, (size_t)(mark - (const char *)a->data));
    cli_json_write(&b, o);
    cli_buf_add(&b, mark + sizeof(page_marker) - 1,
                a->len - (size_t)(mark - (const char *)a->data) -
                    (sizeof(page_marker) - 1));
    if (b.oom)
      dash_respond(c, 503, "text/plain", "out of memory", 13);
    else
      dash_respond(c, 200, a->type, b.p, b.len);
  } else {
    dash_respond(c, 404, "text/plain", "no page", 7);
  }
  cli_buf_free(&b);
  cli_jfree(o);
}

/* One part fewer to wait for (a part, or the start): after the last, the
 * overview is sent and the start's reference on `c` is given up. */
static void overview_less(dash_conn_t *c) {
  dash_t *d = c->d;

  if (--c->ov_left > 0)
    return;
  overview_send(c);
  dash_conn_unref(c);
  dash_maybe_done(d);
}

/* A part's query ended (`arg` is its dash_ov_part_t). */
static void overview_part(cli_t *cli, int status, const char *detail,
                          cli_json_t *res, void *arg) {
  dash_ov_part_t *part = arg;
  dash_conn_t *c = part->c;

  (void)cli;
  c->ov[part->i] = status == 0 ? res : NULL;
  if (status != 0)
    cli_jfree(res);
  if (status != 0 && c->ov_status == 0) {
    c->ov_status = status;
    snprintf(c->ov_detail, sizeof(c->ov_detail), "%s",
             detail != NULL ? detail : "");
  }
  overview_less(c);
}

void dash_overview(dash_conn_t *c, int page) {
  int i;

  c->page = page;
  c->ov_left = DASH_OV_PARTS + 1; /* the parts and the start */
  for (i = 0; i < DASH_OV_PARTS; i++) {
    c->ov_part[i].c = c;
    c->ov_part[i].i = i;
    if (ov_parts[i].list(c->d->cli, overview_part, &c->ov_part[i]) != 0)
      overview_part(c->d->cli, FLEET_ENOMEM, NULL, NULL, &c->ov_part[i]);
  }
  overview_less(c);
}

/* ------------------------------------------------------------------------ */
/* Throughput samples                                                       */

static void sample_done(cli_t *cli, int status, const char *detail,
                        cli_json_t *queues, void *arg) {
  dash_t *d = arg;
  cli_json_t *s, *c, *dd, *p, *old;
  const cli_json_t *q;

  d->sampling = 0;
  if (!d->stopping)
    dash_backend_seen(d, status, detail);
  if (status == 0 && !d->stopping) {
    s = cli_jobj();
    cli_jadd(s, "t", cli_jint(wall_ms()));
    c = cli_jadd(s, "c", cli_jobj());
    dd = cli_jadd(s, "d", cli_jobj());
    p = cli_jadd(s, "p", cli_jobj());
    for (q = queues->first; q != NULL; q = q->next) {
      cli_jadd(c, cli_jget(q, "queue")->str,
               cli_jint(cli_jget(q, "completed")->num));
      cli_jadd(dd, cli_jget(q, "queue")->str,
               cli_jint(cli_jget(q, "dead")->num));
      cli_jadd(p, cli_jget(q, "queue")->str,
               cli_jint(cli_jget(q, "pending")->num));
    }
    if (s != NULL && s->num != -1 && c != NULL && c->num != -1 && dd != NULL &&
        dd->num != -1 && p != NULL && p->num != -1) {
      cli_jadd(d->history, NULL, s);
      if (d->history->n > DASH_SAMPLES) {
        old = d->history->first;
        d->history->first = old->next;
        d->history->n--;
        old->next = NULL;
        cli_jfree(old);
      }
    } else {
      cli_jfree(s);
    }
  }
  cli_jfree(queues);
  if (d->stopping)
    dash_maybe_done(d);
  else
    uv_timer_start(&d->sampler, dash_sample_tick, DASH_SAMPLE_MS, 0);
  (void)cli;
}

void dash_sample_tick(uv_timer_t *t) {
  dash_t *d = t->data;

  if (d->stopping || d->sampling)
    return;
  if (cli_q_queue_ls(d->cli, sample_done, d) == 0)
    d->sampling = 1;
  else
    uv_timer_start(&d->sampler, dash_sample_tick, DASH_SAMPLE_MS, 0);
}
