/* test_cli_util.c -- see test_cli_util.h. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "test.h"
#include "test_cli_util.h"

static const char *cli_tmp(void) {
  return getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
}

static void cli_read_file(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : -1;

  buf[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close(fd);
}

void cli_required(void) {
  if (access(FLEET_CLI_PATH, X_OK) != 0)
    fleet_test_skip("the fleet CLI is not built");
}

pid_t cli_spawn_prog(const char *path, const char *const *argv,
                     const char *env_name, const char *env_value,
                     const char *tag) {
  char out[512], err[512];
  pid_t pid;

  snprintf(out, sizeof(out), "%s/fleet-cli-%d-%s.out", cli_tmp(), (int)getpid(),
           tag);
  snprintf(err, sizeof(err), "%s/fleet-cli-%d-%s.err", cli_tmp(), (int)getpid(),
           tag);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int in = open("/dev/null", O_RDONLY);

    if (o < 0 || e < 0 || in < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
        dup2(in, 0) < 0)
      _exit(127);
    unsetenv("FLEET_URL");
    unsetenv("REDIS_URL");
    if (env_name != NULL)
      setenv(env_name, env_value, 1);
    execv(path, (char *const *)argv);
    _exit(127);
  }
  return pid;
}

pid_t cli_spawn(const char *const *args, const char *tag) {
  const char *argv[64];
  size_t n = 0;

  argv[n++] = "fleet";
  while (args[n - 1] != NULL && n < 63) {
    argv[n] = args[n - 1];
    n++;
  }
  argv[n] = NULL;
  return cli_spawn_prog(FLEET_CLI_PATH, argv, NULL, NULL, tag);
}

void cli_read_out(const char *tag, char *buf, size_t cap) {
  char path[512];

  snprintf(path, sizeof(path), "%s/fleet-cli-%d-%s.out", cli_tmp(),
           (int)getpid(), tag);
  cli_read_file(path, buf, cap);
}

void cli_reap(pid_t pid, const char *tag, cli_run_t *r) {
  cli_reap_within(pid, tag, r, 0);
}

void cli_reap_within(pid_t pid, const char *tag, cli_run_t *r,
                     uint64_t limit_ms) {
  uint64_t end = uv_hrtime() + limit_ms * 1000000ull;
  char path[512];
  int st;

  if (limit_ms == 0) {
    ASSERT_EQ(pid, waitpid(pid, &st, 0));
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  } else {
    for (;;) {
      pid_t w = waitpid(pid, &st, WNOHANG);

      ASSERT_GE(w, 0);
      if (w == pid) {
        r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        break;
      }
      if (uv_hrtime() > end) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        r->status = -1;
        break;
      }
      usleep(10000);
    }
  }
  snprintf(path, sizeof(path), "%s/fleet-cli-%d-%s.out", cli_tmp(),
           (int)getpid(), tag);
  cli_read_file(path, r->out, sizeof(r->out));
  unlink(path);
  snprintf(path, sizeof(path), "%s/fleet-cli-%d-%s.err", cli_tmp(),
           (int)getpid(), tag);
  cli_read_file(path, r->err, sizeof(r->err));
  unlink(path);
}

void cli_run(cli_run_t *r, const char *const *args) {
  cli_reap(cli_spawn(args, "run"), "run", r);
}

void cli_run_ok(cli_run_t *r, const char *url, const char *prefix,
                const char *const *args) {
  const char *argv[64];
  size_t n = 0, i;

  argv[n++] = "--url";
  argv[n++] = url;
  argv[n++] = "--prefix";
  argv[n++] = prefix;
  for (i = 0; args[i] != NULL && n < 63; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  cli_run(r, argv);
  if (r->status != 0)
    fprintf(stderr, "fleet %s %s: exit %d\nstdout: %s\nstderr: %s\n", args[0],
            args[1] != NULL ? args[1] : "", r->status, r->out, r->err);
  ASSERT_EQ(0, r->status);
}

int cli_lines(const char *s) {
  int n = 0;

  for (; *s != '\0'; s++)
    n += *s == '\n';
  return n;
}

int cli_spawn_server(const char *const *args, const char *tag, const char *what,
                     pid_t *pid) {
  char out[4096], pat[128];
  uint64_t t0 = uv_hrtime();
  const char *p;

  *pid = cli_spawn(args, tag);
  do {
    usleep(20000);
    cli_read_out(tag, out, sizeof(out));
  } while (strchr(out, '\n') == NULL &&
           uv_hrtime() - t0 < fleet_test_ms(5000) * 1000000ULL);
  snprintf(pat, sizeof(pat), "%s http://127.0.0.1:", what);
  p = strstr(out, pat);
  ASSERT_NOT_NULL(p);
  return atoi(p + strlen(pat));
}

void cli_stop_server(pid_t pid, const char *tag) {
  cli_run_t r;

  ASSERT_OK(kill(pid, SIGINT));
  cli_reap(pid, tag, &r);
  ASSERT_EQ(0, r.status);
}

int cli_http(int port, const char *method, const char *path, const char *extra,
             char *resp, size_t cap) {
  struct sockaddr_in a;
  char req[2048];
  size_t got = 0;
  ssize_t n;
  int fd = socket(AF_INET, SOCK_STREAM, 0), code = 0;

  ASSERT_GE(fd, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_OK(connect(fd, (struct sockaddr *)&a, sizeof(a)));
  n = snprintf(req, sizeof(req),
               "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Length: 0\r\n"
               "\r\n",
               method, path, extra != NULL ? extra : "");
  ASSERT_EQ(n, write(fd, req, (size_t)n));
  while (got + 1 < cap && (n = read(fd, resp + got, cap - 1 - got)) > 0)
    got += (size_t)n;
  resp[got] = '\0';
  close(fd);
  sscanf(resp, "HTTP/1.1 %d", &code);
  return code;
}

/* ------------------------------------------------------------------------ */
/* Headless Chromium                                                        */

const char *cli_chromium_path(void) {
  static const char *const paths[] = {"/usr/bin/chromium",
                                      "/usr/bin/chromium-browser", NULL};
  const char *env = getenv("FLEET_TEST_CHROMIUM");
  int i;

  if (env != NULL && access(env, X_OK) == 0)
    return env;
  for (i = 0; paths[i] != NULL; i++)
    if (access(paths[i], X_OK) == 0)
      return paths[i];
  return NULL;
}

static int cli_rm_entry(const char *path, const struct stat *sb, int type,
                        struct FTW *ftw) {
  (void)sb, (void)type, (void)ftw;
  remove(path);
  return 0;
}

const char *cli_chromium_window = "1280,1000";

void cli_chromium_run(const char *chromium, const char *url, const char *what,
                      cli_run_t *r) {
  static int runs;
  char dir[512], profile[600], out[600], log[600], window[64];
  static char text[262144];
  const char *line, *end;
  size_t got = 0;
  pid_t pid;
  int st;

  snprintf(dir, sizeof(dir), "%s/fleet-chromium-%d-%d", cli_tmp(),
           (int)getpid(), runs++);
  snprintf(profile, sizeof(profile), "--user-data-dir=%s", dir);
  snprintf(out, sizeof(out), "%s.out", dir);
  snprintf(log, sizeof(log), "%s.log", dir);
  snprintf(window, sizeof(window), "--window-size=%s", cli_chromium_window);
  /* Headless Chromium now and then never ends a run (its virtual time
   * stalls): such a run is killed after a bound and made once more, so
   * that the test fails on what the page shows, not on a hung browser. */
  for (int attempt = 0;; attempt++) {
    uint64_t until = uv_hrtime() + fleet_test_ms(90000) * 1000000ULL;
    pid_t w;

    pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int e = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

      if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
        _exit(127);
      execl(chromium, chromium, "--headless", "--disable-gpu", "--no-sandbox",
            "--no-first-run", "--disable-extensions", "--hide-scrollbars",
            window, "--virtual-time-budget=3000", "--enable-logging=stderr",
            "--v=0", profile, what, url, (char *)NULL);
      _exit(127);
    }
    while ((w = waitpid(pid, &st, WNOHANG)) == 0 && uv_hrtime() < until)
      usleep(20000);
    if (w == pid)
      break;
    kill(pid, SIGKILL);
    ASSERT_EQ(pid, waitpid(pid, &st, 0));
    fprintf(stderr, "# chromium did not finish %s within %llu ms%s\n", url,
            (unsigned long long)fleet_test_ms(90000),
            attempt == 0 ? ": run again" : "");
    ASSERT_EQ(0, attempt);
  }
  r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  cli_read_file(out, r->out, sizeof(r->out));
  cli_read_file(log, text, sizeof(text));
  r->err[0] = '\0';
  for (line = text; *line != '\0'; line = *end != '\0' ? end + 1 : end) {
    end = strchr(line, '\n');
    if (end == NULL)
      end = line + strlen(line);
    if (memmem(line, (size_t)(end - line), ":CONSOLE", 8) != NULL &&
        got + (size_t)(end - line) + 2 < sizeof(r->err)) {
      memcpy(r->err + got, line, (size_t)(end - line));
      got += (size_t)(end - line);
      r->err[got++] = '\n';
      r->err[got] = '\0';
    }
  }
  unlink(out);
  unlink(log);
  nftw(dir, cli_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------------------ */
/* Known contents for the cron and warm pool verbs                          */

typedef struct {
  uv_loop_t loop;
  fleet_client_t client;
  int done, status, fires, want, closed;
} cli_fx_t;

static void cli_fx_open(cli_fx_t *f, const char *url, const char *prefix) {
  fleet_client_options_t o;

  memset(f, 0, sizeof(*f));
  ASSERT_OK(uv_loop_init(&f->loop));
  fleet_client_options_init(&o);
  o.prefix = prefix;
  ASSERT_OK(fleet_client_init(&f->loop, &f->client, url, &o));
}

static void cli_fx_on_closed(fleet_handle_t *h) {
  cli_fx_t *f = h->data;

  f->closed = 1;
}

static void cli_fx_close(cli_fx_t *f) {
  ASSERT_OK(fleet_client_close(&f->client, NULL));
  ASSERT_OK(uv_run(&f->loop, UV_RUN_DEFAULT));
  ASSERT_OK(uv_loop_close(&f->loop));
}

static void cli_fx_status(fleet_handle_t *h, int status, void *ud) {
  cli_fx_t *f = ud;

  (void)h;
  f->status = status;
  f->done = 1;
}

static void cli_fx_wait(cli_fx_t *f) {
  ASSERT(fleet_test_run_until(&f->loop, fleet_test_flag_set, &f->done,
                              fleet_test_ms(10000)));
  f->done = 0;
}

static void cli_fx_define(cli_fx_t *f, fleet_cron_scheduler_t *s,
                          const char *key, const char *expr, const char *tz,
                          const char *queue, int disabled) {
  fleet_cron_def_t d;
  char err[256];

  memset(&d, 0, sizeof(d));
  d.key = key;
  d.expr = expr;
  d.tz = tz;
  d.queue = queue;
  d.disabled = disabled;
  ASSERT_OK(fleet_cron_define(s, &d, FLEET_CRON_UPSERT, err, sizeof(err),
                              cli_fx_status, f));
  cli_fx_wait(f);
  ASSERT_OK(f->status);
}

/* Defines `key` (`expr`, UTC) with the bounds start, end and max fires. */
static void cli_fx_define_bounded(cli_fx_t *f, fleet_cron_scheduler_t *s,
                                  const char *key, const char *expr,
                                  int64_t start, int64_t end, uint64_t max) {
  fleet_cron_def_t d;
  char err[256];

  fleet_cron_def_init(&d);
  d.key = key;
  d.expr = expr;
  d.start_ms = start;
  d.end_ms = end;
  d.max_fires = max;
  ASSERT_OK(fleet_cron_define(s, &d, FLEET_CRON_UPSERT, err, sizeof(err),
                              cli_fx_status, f));
  cli_fx_wait(f);
  ASSERT_OK(f->status);
}

static void cli_fx_fire(fleet_cron_scheduler_t *s, fleet_cron_fire_t *fire) {
  cli_fx_t *f = s->data;

  if (f->fires >= f->want) /* more than asked for: left "dispatched" */
    return;
  ASSERT_OK(fleet_cron_complete(fire, f->fires == 0 ? "boom" : NULL));
  if (++f->fires == f->want)
    f->done = 1;
}

void cli_fixture_crons(const char *url, const char *prefix, int fires) {
  fleet_cron_scheduler_options_t o;
  fleet_cron_scheduler_t s, other, bounded;
  cli_fx_t f;

  cli_fx_open(&f, url, prefix);
  fleet_cron_scheduler_options_init(&o);
  ASSERT_OK(fleet_cron_scheduler_init(&f.client, &s, "cron", "cli-node", &o));
  ASSERT_OK(
      fleet_cron_scheduler_init(&f.client, &other, "other", "cli-node", &o));
  ASSERT_OK(
      fleet_cron_scheduler_init(&f.client, &bounded, "timed", "cli-node", &o));
  s.data = other.data = bounded.data = &f;
  cli_fx_define(&f, &s, "nightly", "30 2 * * *", "Europe/Berlin", "jobs", 1);
  cli_fx_define(&f, &other, "hourly", "@hourly", NULL, NULL, 0);
  /* 2030-01-01 to 2031-06-01, at most 3 fires; and one that ended in
   * 2000 (never started, so never fired). */
  cli_fx_define_bounded(&f, &bounded, "capped", "0 0 1 1 *", 1893456000000,
                        1938038400000, 3);
  cli_fx_define_bounded(&f, &bounded, "ended", "* * * * *", 0, 946684800000, 0);
  cli_fx_define(&f, &s, "tick", "* * * * * *", NULL, NULL, 0);
  if (fires > 0) {
    f.want = fires;
    ASSERT_OK(fleet_cron_scheduler_start(&s, cli_fx_fire));
    ASSERT(fleet_test_run_until(&f.loop, fleet_test_flag_set, &f.done,
                                fleet_test_ms(5000 + 1000 * (uint64_t)fires)));
    f.done = 0;
  }
  ASSERT_OK(fleet_cron_scheduler_close(&s, cli_fx_on_closed));
  ASSERT(fleet_test_run_until(&f.loop, fleet_test_flag_set, &f.closed,
                              fleet_test_ms(10000)));
  f.closed = 0;
  ASSERT_OK(fleet_cron_scheduler_close(&other, cli_fx_on_closed));
  ASSERT(fleet_test_run_until(&f.loop, fleet_test_flag_set, &f.closed,
                              fleet_test_ms(10000)));
  f.closed = 0;
  ASSERT_OK(fleet_cron_scheduler_close(&bounded, cli_fx_on_closed));
  ASSERT(fleet_test_run_until(&f.loop, fleet_test_flag_set, &f.closed,
                              fleet_test_ms(10000)));
  cli_fx_close(&f);
}

struct cli_wp_s {
  cli_fx_t f;
  fleet_warmpool_t pool;
  int idle;
};

static void cli_wp_work(fleet_warmpool_t *pool, fleet_warmpool_work_t *w) {
  (void)pool;
  ASSERT_OK(fleet_warmpool_work_done(w, 0, NULL));
}

static void cli_wp_snap(fleet_warmpool_t *pool, int status,
                        const fleet_warmpool_snapshot_t *snap, void *ud) {
  cli_wp_t *w = ud;

  (void)pool;
  w->f.status = status;
  w->idle = status == 0 ? (int)snap->idle : -1;
  w->f.done = 1;
}

cli_wp_t *cli_fixture_warmpool(const char *url, const char *prefix,
                               const char *name, uint32_t target) {
  static const fleet_warmpool_handlers_t handlers = {cli_wp_work, cli_wp_work,
                                                     NULL};
  fleet_warmpool_options_t o;
  cli_wp_t *w = calloc(1, sizeof(*w));
  uint64_t t0;

  ASSERT_NOT_NULL(w);
  cli_fx_open(&w->f, url, prefix);
  fleet_warmpool_options_init(&o);
  o.target_idle = target;
  o.primary_ttl_ms = 60000;
  o.reconcile_ms = 100;
  ASSERT_OK(fleet_warmpool_init(&w->f.client, &w->pool, name, "wp-node", &o));
  w->pool.data = &w->f;
  ASSERT_OK(fleet_warmpool_start(&w->pool, &handlers, cli_fx_status, &w->f));
  cli_fx_wait(&w->f);
  ASSERT_OK(w->f.status);
  /* Until the primary has made the target (bounded). */
  t0 = uv_hrtime();
  for (;;) {
    ASSERT_OK(fleet_warmpool_snapshot(&w->pool, cli_wp_snap, w));
    cli_fx_wait(&w->f);
    ASSERT_OK(w->f.status);
    if (w->idle >= (int)target && fleet_warmpool_is_primary(&w->pool))
      break;
    ASSERT(uv_hrtime() - t0 < fleet_test_ms(10000) * 1000000ULL);
    uv_sleep(20);
    uv_run(&w->f.loop, UV_RUN_NOWAIT);
  }
  return w;
}

void cli_fixture_warmpool_close(cli_wp_t *w) {
  ASSERT_OK(fleet_warmpool_close(&w->pool, cli_fx_on_closed));
  ASSERT(fleet_test_run_until(&w->f.loop, fleet_test_flag_set, &w->f.closed,
                              fleet_test_ms(10000)));
  cli_fx_close(&w->f);
  free(w);
}
