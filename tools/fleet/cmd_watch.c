/* cmd_watch.c -- `fleet watch queue Q | pool P`: a live view refreshed
 * every second (--interval-ms), until q is typed (on a terminal), SIGINT or
 * SIGTERM, or --count N views have been printed. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char watch_usage[] =
    "usage: fleet watch queue Q | pool P [--count N] [--interval-ms MS]\n"
    "  refreshes every second (MS); stops on q, Ctrl-C, or after N views\n";

typedef struct {
  cli_t *cli;
  int pool; /* else a queue */
  const char *name;
  uint64_t count, shown, interval_ms;
  uv_timer_t timer;
  uv_signal_t sigint, sigterm;
  uv_tty_t tty;
  int tty_open, tty_raw, clear;
  int stopping, busy, handles;
  int status;
  char *detail;
  /* The previous view's counters and monotonic time, for the rates. */
  int64_t last_completed, last_dead;
  uint64_t last_ms;
  int have_last;
  char in[64]; /* keys typed */
} watch_t;

static void watch_tick(uv_timer_t *t);

static void watch_handle_closed(uv_handle_t *h) {
  watch_t *w = h->data;

  if (--w->handles == 0) {
    cli_finish(w->cli, w->status, w->detail, NULL, NULL);
    free(w->detail);
    free(w);
  }
}

static void watch_stop(watch_t *w) {
  if (w->stopping)
    return;
  w->stopping = 1;
  if (w->busy)
    return; /* the query's end stops */
  if (w->tty_raw)
    uv_tty_set_mode(&w->tty, UV_TTY_MODE_NORMAL);
  uv_close((uv_handle_t *)&w->timer, watch_handle_closed);
  uv_close((uv_handle_t *)&w->sigint, watch_handle_closed);
  uv_close((uv_handle_t *)&w->sigterm, watch_handle_closed);
  if (w->tty_open)
    uv_close((uv_handle_t *)&w->tty, watch_handle_closed);
}

/* The jobs in each state now ("completed" and "dead": the kept ones),
 * then the rates, from the lifetime counters. */
static void print_queue(watch_t *w, const cli_json_t *r) {
  static const char *const keys[][2] = {{"pending", "pending"},
                                        {"delayed", "delayed"},
                                        {"running", "running"},
                                        {"completed", "completed_now"},
                                        {"dead", "dead_now"}};
  int64_t completed = cli_jget(r, "completed_ever")->num;
  int64_t dead = cli_jget(r, "dead_ever")->num;
  uint64_t now = uv_now(w->cli->loop);
  size_t i;

  fleet_escape_print(stdout, "queue %s%s", w->name,
                     cli_jget(r, "paused")->num ? "  (PAUSED)" : "");
  for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
    printf("  %-10s %lld\n", keys[i][0],
           (long long)cli_jget(r, keys[i][1])->num);
  if (w->have_last && now > w->last_ms) {
    double s = (double)(now - w->last_ms) / 1000.0;

    printf("  completed/s %.1f   dead/s %.1f\n",
           (double)(completed - w->last_completed) / s,
           (double)(dead - w->last_dead) / s);
  } else {
    printf("  completed/s -   dead/s -\n");
  }
  printf("  ever: completed %lld   dead %lld\n", (long long)completed,
         (long long)dead);
  w->last_completed = completed;
  w->last_dead = dead;
  w->last_ms = now;
  w->have_last = 1;
}

static void print_pool(watch_t *w, const cli_json_t *r) {
  static const char *const cols[] = {"worker", "node", "jobs", NULL};

  fleet_escape_print(stdout, "pool %s  revision %lld  workers %lld  jobs %lld",
                     w->name, (long long)cli_jget(r, "revision")->num,
                     (long long)cli_jget(r, "worker_count")->num,
                     (long long)cli_jget(r, "job_count")->num);
  cli_table(stdout, cli_jget(r, "workers"), cols);
}

static void watch_view(cli_t *cli, int status, const char *detail,
                       cli_json_t *r, void *arg) {
  watch_t *w = arg;
  cli_buf_t b = {0};

  w->busy = 0;
  if (status != 0) {
    w->status = status;
    w->detail = detail != NULL ? strdup(detail) : NULL;
    w->stopping = 0;
    watch_stop(w);
    return;
  }
  w->shown++;
  if (cli->json) {
    cli_json_write(&b, r);
    printf("%s\n", b.p != NULL ? b.p : "null");
    cli_buf_free(&b);
  } else {
    if (w->clear)
      printf("\033[H\033[2J");
    if (w->pool)
      print_pool(w, r);
    else
      print_queue(w, r);
    if (w->clear)
      printf("(q or Ctrl-C to quit)\n");
    else
      printf("\n");
  }
  fflush(stdout);
  cli_jfree(r);
  if (w->stopping || (w->count > 0 && w->shown >= w->count)) {
    w->stopping = 0;
    watch_stop(w);
    return;
  }
  uv_timer_start(&w->timer, watch_tick, w->interval_ms, 0);
}

static void watch_tick(uv_timer_t *t) {
  watch_t *w = t->data;
  int err;

  err = w->pool ? cli_q_pool_status(w->cli, w->name, watch_view, w)
                : cli_q_queue_stats(w->cli, w->name, watch_view, w);
  if (err != 0) {
    w->status = err;
    watch_stop(w);
    return;
  }
  w->busy = 1;
}

static void watch_signal(uv_signal_t *s, int signum) {
  (void)signum;
  watch_stop(s->data);
}

static void watch_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf) {
  watch_t *w = h->data;

  (void)size;
  *buf = uv_buf_init(w->in, sizeof(w->in));
}

static void watch_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  watch_t *w = s->data;
  ssize_t i;

  if (n < 0) {
    uv_read_stop(s);
    return;
  }
  for (i = 0; i < n; i++)
    if (buf->base[i] == 'q' || buf->base[i] == 'Q' || buf->base[i] == 3)
      watch_stop(w);
}

int cli_cmd_watch(cli_t *cli, int argc, char **argv) {
  const char *count_s = NULL, *interval_s = NULL;
  const cli_optdef_t opts[] = {CLI_OPT("--count", &count_s),
                               CLI_OPT("--interval-ms", &interval_s),
                               CLI_OPT_END};
  watch_t *w;
  int rc;

  if ((rc = cli_noun_help(argc, argv, watch_usage)) != 0)
    return rc;
  if ((rc = cli_opts("watch", &argc, argv, opts)) != 0)
    return rc;
  /* A partitioned queue is one queue (its count read first), and a queue
   * that does not exist is refused, as by `fleet queue`. */
  if (argc == 3 && strcmp(argv[1], "queue") == 0)
    cli_queue_learn(cli, argv[2]);
  if (argc == 3 && strcmp(argv[1], "queue") == 0 &&
      !cli_queue_known(cli, argv[2], 0))
    return 0;
  w = calloc(1, sizeof(*w));
  if (w == NULL)
    return 1;
  w->interval_ms = 1000;
  if (argc != 3 ||
      (strcmp(argv[1], "queue") != 0 && strcmp(argv[1], "pool") != 0) ||
      (count_s != NULL && cli_parse_u64(count_s, 1, 1000000, &w->count) != 0) ||
      (interval_s != NULL &&
       cli_parse_u64(interval_s, 10, 3600000, &w->interval_ms) != 0)) {
    free(w);
    fputs(watch_usage, stderr);
    return 2;
  }
  w->cli = cli;
  w->pool = strcmp(argv[1], "pool") == 0;
  w->name = argv[2];
  w->clear = !cli->json && isatty(STDOUT_FILENO);
  uv_timer_init(cli->loop, &w->timer);
  uv_signal_init(cli->loop, &w->sigint);
  uv_signal_init(cli->loop, &w->sigterm);
  w->timer.data = w->sigint.data = w->sigterm.data = w;
  w->handles = 3;
  uv_signal_start(&w->sigint, watch_signal, SIGINT);
  uv_signal_start(&w->sigterm, watch_signal, SIGTERM);
  if (isatty(STDIN_FILENO) && uv_tty_init(cli->loop, &w->tty, 0, 1) == 0) {
    w->tty_open = 1;
    w->handles++;
    w->tty.data = w;
    w->tty_raw = uv_tty_set_mode(&w->tty, UV_TTY_MODE_RAW) == 0;
    uv_read_start((uv_stream_t *)&w->tty, watch_alloc, watch_read);
  }
  uv_timer_start(&w->timer, watch_tick, 0, 0);
  return 0;
}
