/* demo_warmpool.c -- fleet-demo's warm pool commands:
 *
 *   warmpool node --pool P --root DIR --target N [--idle-ttl-ms MS]
 *                 [--warmup-ms MS] [--reconcile-ms MS] [--primary-ttl-ms MS]
 *                 [--warmup-timeout-ms MS] [--borrow-lease-ms MS]
 *                 [--ledger FILE] [--fingerprint S] [--node-id ID]
 *   warmpool acquire --pool P --root DIR [--hold-ms MS] [--ledger FILE]
 *                 [--borrow-lease-ms MS] [--node-id ID]
 *   warmpool resize --pool P --target N
 *   warmpool drain --pool P --root DIR [--ledger FILE]
 *   warmpool snapshot --pool P          one JSON object
 *
 * The resource is a scratch directory DIR/<id>, made after --warmup-ms of
 * simulated preparation, holding a file "creator" that names the node that
 * made it; destroying it removes both. A node runs until SIGINT or
 * SIGTERM. The ledger gets one line per event, each one write with
 * O_APPEND: "<monotonic_ns> <event> <resource_id> <node_id> <token>" for
 * create, put, refused, acquire, release and destroy (token 0 where there
 * is none). The one-shot commands exit 0 on success, or 1 with one line on
 * stderr. Without --node-id, fleet makes a unique owner id. A node whose
 * owner id another live node holds (at its start, or later) exits 1 with
 * one line on stderr naming the id. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demo.h"

typedef struct demo_wp_s {
  demo_client_t c;
  const char *pool, *root, *ledger, *node_id, *fingerprint;
  int64_t target, idle_ttl_ms, warmup_ms, reconcile_ms, primary_ttl_ms;
  int64_t warmup_timeout_ms, borrow_lease_ms, hold_ms;
  int ledger_fd;
  char held[FLEET_WARMPOOL_ID_MAX + 1];
  uint64_t token;
  fleet_warmpool_t wp;
  uv_signal_t sigint, sigterm;
  uv_timer_t hold;
  int signals_open, hold_open;
  int status;
  struct demo_make_s *making;
  demo_live_t live;         /* node: the ready and progress lines */
  uint64_t created, failed; /* node: resources made, and failed to */
} demo_wp_t;

/* A creation waiting for --warmup-ms. */
typedef struct demo_make_s {
  uv_timer_t timer;
  fleet_warmpool_work_t *work;
  demo_wp_t *d;
} demo_make_t;

static void demo_wp_ledger(demo_wp_t *d, const char *event, const char *id,
                           uint64_t token) {
  char line[600];
  int len;

  if (d->ledger_fd < 0)
    return;
  len = snprintf(line, sizeof(line), "%" PRIu64 " %s %s %s %" PRIu64 "\n",
                 uv_hrtime(), event, id, d->node_id, token);
  if (len >= (int)sizeof(line))
    len = (int)sizeof(line) - 1;
  if (write(d->ledger_fd, line, (size_t)len) != len) {
    demo_fail("ledger write", FLEET_EBACKEND);
    d->status = 1;
  }
}

static void demo_wp_path(const demo_wp_t *d, const char *id, const char *file,
                         char *out, size_t cap) {
  snprintf(out, cap, "%s/%s%s%s", d->root, id, file ? "/" : "",
           file ? file : "");
}

/* Makes DIR/<id>/creator. Returns 0 or an errno. */
static int demo_wp_make(demo_wp_t *d, const char *id) {
  char dir[1024], file[1100];
  int fd;

  demo_wp_path(d, id, NULL, dir, sizeof(dir));
  demo_wp_path(d, id, "creator", file, sizeof(file));
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    return errno;
  fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return errno;
  if (write(fd, d->node_id, strlen(d->node_id)) < 0 || close(fd) != 0)
    return errno;
  return 0;
}

static void demo_make_closed(uv_handle_t *h) {
  free(h->data);
}

static void demo_make_ready(uv_timer_t *t) {
  demo_make_t *m = t->data;
  demo_wp_t *d = m->d;
  const char *id = fleet_warmpool_work_id(m->work);
  int err = demo_wp_make(d, id);

  if (err == 0) {
    d->created++;
    demo_wp_ledger(d, "create", id, d->token);
    fleet_warmpool_work_done(m->work, 0, NULL);
  } else {
    d->failed++;
    fleet_warmpool_work_done(m->work, FLEET_EBACKEND, strerror(err));
  }
  uv_close((uv_handle_t *)&m->timer, demo_make_closed);
}

static void demo_wp_create(fleet_warmpool_t *pool, fleet_warmpool_work_t *w) {
  demo_wp_t *d = pool->data;
  demo_make_t *m = calloc(1, sizeof(*m));

  if (m == NULL) {
    fleet_warmpool_work_done(w, FLEET_ENOMEM, "out of memory");
    return;
  }
  m->work = w;
  m->d = d;
  m->timer.data = m;
  uv_timer_init(d->c.loop, &m->timer);
  uv_timer_start(&m->timer, demo_make_ready, (uint64_t)d->warmup_ms, 0);
}

static void demo_wp_destroy(fleet_warmpool_t *pool, fleet_warmpool_work_t *w) {
  demo_wp_t *d = pool->data;
  const char *id = fleet_warmpool_work_id(w);
  char dir[1024], file[1100];

  demo_wp_path(d, id, NULL, dir, sizeof(dir));
  demo_wp_path(d, id, "creator", file, sizeof(file));
  if ((unlink(file) != 0 && errno != ENOENT) ||
      (rmdir(dir) != 0 && errno != ENOENT)) {
    fleet_warmpool_work_done(w, FLEET_EBACKEND, strerror(errno));
    return;
  }
  demo_wp_ledger(d, "destroy", id, 0);
  fleet_warmpool_work_done(w, 0, NULL);
}

static void demo_wp_put(fleet_warmpool_t *pool, const char *id, uint64_t token,
                        int status) {
  demo_wp_ledger(pool->data, status == 0 ? "put" : "refused", id, token);
}

static void demo_wp_primary(fleet_warmpool_t *pool, uint64_t token) {
  demo_wp_t *d = pool->data;

  if (token != 0)
    d->token = token;
  fleet_escape_print(stderr, "fleet-demo: warmpool: %s %s (token %" PRIu64 ")",
                     d->node_id,
                     token != 0 ? "is primary" : "is no longer primary",
                     token != 0 ? token : d->token);
}

static void demo_wp_finish(demo_wp_t *d, int status);

/* Background errors; another live node taking the owner id ends the
 * program, with one line (the detail names the pool and the id). */
static void demo_wp_error(fleet_handle_t *h, int status, const char *detail) {
  if (status == FLEET_ECONFLICT) {
    fleet_escape_print(stderr, "fleet-demo: %s", detail);
    demo_wp_finish(h->data, 1);
    return;
  }
  fleet_escape_print(stderr, "fleet-demo: warmpool: %s (%s)",
                     fleet_err_name(status), detail);
}

/* ------------------------------------------------------------------------ */
/* Setup and teardown                                                       */

static void demo_wp_closed(fleet_handle_t *h) {
  demo_wp_t *d = h->data;

  if (d->signals_open) {
    uv_close((uv_handle_t *)&d->sigint, NULL);
    uv_close((uv_handle_t *)&d->sigterm, NULL);
    d->signals_open = 0;
  }
  demo_client_close(&d->c);
}

static void demo_wp_finish(demo_wp_t *d, int status) {
  if (status != 0)
    d->status = status;
  if (d->hold_open) {
    uv_close((uv_handle_t *)&d->hold, NULL);
    d->hold_open = 0;
  }
  if (d->wp.internal_ != NULL && !fleet_is_closing((fleet_handle_t *)&d->wp))
    fleet_close((fleet_handle_t *)&d->wp, demo_wp_closed);
}

static void demo_wp_on_signal(uv_signal_t *s, int signum) {
  (void)signum;
  demo_wp_finish(s->data, 0);
}

static void demo_wp_unreachable(void *arg) {
  demo_wp_finish(arg, 1);
}

static int demo_wp_loop(demo_wp_t *d) {
  uv_run(d->c.loop, UV_RUN_DEFAULT);
  uv_loop_close(d->c.loop);
  if (d->ledger_fd >= 0)
    close(d->ledger_fd);
  return d->c.failed ? 1 : d->status;
}

static int demo_wp_flags(demo_wp_t *d, const demo_args_t *a, const char *cmd) {
  static const struct {
    const char *flag;
    size_t off;
    int64_t min, max;
  } nums[] = {
      {"--target", offsetof(demo_wp_t, target), 0, 100000},
      {"--idle-ttl-ms", offsetof(demo_wp_t, idle_ttl_ms), 100, 86400000},
      {"--warmup-ms", offsetof(demo_wp_t, warmup_ms), 0, 3600000},
      {"--reconcile-ms", offsetof(demo_wp_t, reconcile_ms), 1, 3600000},
      {"--primary-ttl-ms", offsetof(demo_wp_t, primary_ttl_ms), 100, 3600000},
      {"--warmup-timeout-ms", offsetof(demo_wp_t, warmup_timeout_ms), 1,
       3600000},
      {"--borrow-lease-ms", offsetof(demo_wp_t, borrow_lease_ms), 0, 3600000},
      {"--hold-ms", offsetof(demo_wp_t, hold_ms), 0, 3600000},
  };
  size_t k;
  int i, st;

  for (i = 1; i < a->argc; i++) {
    if (strcmp(cmd, "node") == 0 && (st = demo_live_flag(a, &i, &d->live))) {
      if (st < 0)
        return 2;
      continue;
    }
    if (demo_flag(a, &i, "--pool")) {
      d->pool = a->argv[i];
      continue;
    }
    if (demo_flag(a, &i, "--root")) {
      d->root = a->argv[i];
      continue;
    }
    if (demo_flag(a, &i, "--ledger")) {
      d->ledger = a->argv[i];
      continue;
    }
    if (demo_flag(a, &i, "--node-id")) {
      d->node_id = a->argv[i];
      continue;
    }
    if (demo_flag(a, &i, "--fingerprint")) {
      d->fingerprint = a->argv[i];
      continue;
    }
    for (k = 0; k < sizeof(nums) / sizeof(nums[0]); k++)
      if (demo_flag(a, &i, nums[k].flag)) {
        if (!demo_int(nums[k].flag, a->argv[i], nums[k].min, nums[k].max,
                      (int64_t *)((char *)d + nums[k].off)))
          return 2;
        break;
      }
    if (k == sizeof(nums) / sizeof(nums[0]))
      return demo_bad_flag(cmd, a->argv[i]);
  }
  if (d->pool == NULL) {
    fprintf(stderr, "fleet-demo: warmpool %s: --pool is required\n", cmd);
    return 2;
  }
  return 0;
}

/* The node's handlers, given at its start. */
static const fleet_warmpool_handlers_t demo_wp_handlers = {
    demo_wp_create, demo_wp_destroy, NULL};

static int demo_wp_open(demo_wp_t *d, const demo_args_t *a, int client_only) {
  fleet_warmpool_options_t o;
  int err;

  if (d->ledger != NULL &&
      (d->ledger_fd = open(d->ledger, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                           0644)) < 0) {
    perror("fleet-demo: warmpool: --ledger");
    return 1;
  }
  if (demo_client_open(&d->c, a) != 0)
    return 1;
  fleet_warmpool_options_init(&o);
  o.target_idle = (uint32_t)d->target;
  o.idle_ttl_ms = (uint32_t)d->idle_ttl_ms;
  o.min_remaining_ms = (uint32_t)(d->idle_ttl_ms / 4);
  o.reconcile_ms = (uint32_t)d->reconcile_ms;
  o.primary_ttl_ms = (uint32_t)d->primary_ttl_ms;
  o.warmup_timeout_ms = (uint32_t)d->warmup_timeout_ms;
  o.borrow_lease_ms = (uint32_t)d->borrow_lease_ms;
  o.client_only = client_only;
  o.backoff_max_ms = 2000;
  o.put_cb = demo_wp_put;
  o.primary_cb = demo_wp_primary;
  o.error_cb = demo_wp_error;
  if (d->fingerprint != NULL)
    o.definition = (fleet_bytes_t){d->fingerprint, strlen(d->fingerprint)};
  d->wp.data = d;
  /* Without --node-id, fleet makes one. */
  err = fleet_warmpool_init(&d->c.client, &d->wp, d->pool, d->node_id, &o);
  if (err != 0) {
    demo_fail("warmpool", err);
    demo_client_close(&d->c);
    return 1;
  }
  d->node_id = fleet_warmpool_owner(&d->wp);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                 */

/* The node's counts for its progress lines: resources made, and failed
 * to. */
static void demo_wp_counts(void *arg, uint64_t *done, uint64_t *failed) {
  demo_wp_t *d = arg;

  *done = d->created;
  *failed = d->failed;
}

static void demo_wp_on_started(fleet_handle_t *h, int status, void *arg) {
  demo_wp_t *d = arg;

  (void)h;
  if (status == 0) {
    demo_live_ready(&d->live, &d->c, demo_wp_counts, d,
                    "serving warm pool %s as node %s (target %" PRId64 ")",
                    d->pool, d->node_id, d->target);
  } else if (status == FLEET_ECONFLICT) {
    /* The detail names the pool and the owner id, or both fingerprints. */
    fleet_escape_print(stderr, "fleet-demo: %s",
                       fleet_client_last_error(&d->c.client));
    demo_wp_finish(d, 1);
  } else if (status != 0) {
    demo_fail_on(&d->c.client, "warmpool start", status);
    demo_wp_finish(d, 1);
  }
}

static int demo_wp_node(demo_wp_t *d) {
  int err;

  d->c.live = &d->live;
  uv_signal_init(d->c.loop, &d->sigint);
  uv_signal_init(d->c.loop, &d->sigterm);
  d->sigint.data = d->sigterm.data = d;
  uv_signal_start(&d->sigint, demo_wp_on_signal, SIGINT);
  uv_signal_start(&d->sigterm, demo_wp_on_signal, SIGTERM);
  d->signals_open = 1;
  if ((err = fleet_warmpool_start(&d->wp, &demo_wp_handlers, demo_wp_on_started,
                                  d)) != 0) {
    demo_fail("warmpool start", err);
    demo_wp_finish(d, 1);
  }
  return demo_wp_loop(d);
}

/* The start of a one-shot acquire or drain, a client-only node: the call
 * goes out at once with the handlers the start gave, and its own answer
 * ends the command. A failed start is only a warning: the call does not
 * depend on it (with other definition flags than the nodes', say, the
 * fingerprints differ, and an acquire or drain still works). */
static void demo_wp_on_client_started(fleet_handle_t *h, int status,
                                      void *arg) {
  demo_wp_t *d = arg;

  (void)h;
  if (status != 0)
    fleet_escape_print(stderr, "fleet-demo: warning: %s",
                       fleet_client_last_error(&d->c.client));
}

static void demo_wp_on_released(fleet_handle_t *h, int status, void *arg) {
  demo_wp_t *d = arg;

  (void)h;
  if (status != 0)
    demo_fail_on(&d->c.client, "release", status);
  else
    demo_wp_ledger(d, "release", d->held, 0);
  demo_wp_finish(d, status != 0);
}

static void demo_wp_release(uv_timer_t *t) {
  demo_wp_t *d = t->data;
  int err = fleet_warmpool_release(&d->wp, d->held, 0, demo_wp_on_released, d);

  if (err != 0) {
    demo_fail("release", err);
    demo_wp_finish(d, 1);
  }
}

static void demo_wp_on_acquired(fleet_warmpool_t *pool, int status,
                                const char *id, void *arg) {
  demo_wp_t *d = arg;

  (void)pool;
  if (status != 0) {
    demo_fail_on(&d->c.client, "acquire", status);
    demo_wp_finish(d, 1);
    return;
  }
  snprintf(d->held, sizeof(d->held), "%s", id);
  demo_wp_ledger(d, "acquire", id, 0);
  fleet_escape_print(stdout, "%s", id);
  fflush(stdout);
  uv_timer_init(d->c.loop, &d->hold);
  d->hold.data = d;
  d->hold_open = 1;
  uv_timer_start(&d->hold, demo_wp_release, (uint64_t)d->hold_ms, 0);
}

static void demo_wp_on_resized(fleet_handle_t *h, int status, void *arg) {
  demo_wp_t *d = arg;

  (void)h;
  if (status != 0)
    demo_fail_on(&d->c.client, "resize", status);
  demo_wp_finish(d, status != 0);
}

static void demo_wp_on_drained(fleet_warmpool_t *pool, int status, size_t n,
                               void *arg) {
  demo_wp_t *d = arg;

  (void)pool;
  if (status != 0)
    demo_fail_on(&d->c.client, "drain", status);
  else
    printf("%zu\n", n);
  demo_wp_finish(d, status != 0);
}

static void demo_wp_on_snapshot(fleet_warmpool_t *pool, int status,
                                const fleet_warmpool_snapshot_t *s, void *arg) {
  demo_wp_t *d = arg;

  (void)pool;
  if (status != 0) {
    demo_fail_on(&d->c.client, "snapshot", status);
    demo_wp_finish(d, 1);
    return;
  }
  printf("{\"state\":\"%s\",\"target\":%" PRId64 ",\"idle\":%" PRIu64
         ",\"borrowed\":%" PRIu64 ",\"creating\":%" PRIu64
         ",\"destroying\":%" PRIu64 ",\"failures\":%" PRIu64
         ",\"backoff_ms\":%" PRIu64 ",\"primary\":\"%s\",\"token\":%" PRIu64
         ",\"primary_ttl_ms\":%" PRId64 ",\"fingerprint\":\"%s\",",
         fleet_warmpool_state_name(s->state), s->target, s->idle, s->borrowed,
         s->creating, s->destroying, s->failures, s->backoff_ms, s->primary,
         s->primary_token, s->primary_ttl_ms, s->fingerprint);
  printf("\"last_error\":\"");
  {
    const char *p;
    for (p = s->last_error; *p; p++)
      if (*p == '"' || *p == '\\')
        printf("\\%c", *p);
      else if ((unsigned char)*p < 0x20)
        printf(" ");
      else
        putchar(*p);
  }
  printf("\"}\n");
  demo_wp_finish(d, 0);
}

int demo_warmpool(const demo_args_t *a) {
  static demo_wp_t d;
  const char *cmd = a->argc > 0 ? a->argv[0] : "";
  int rc, err = 0;
  int is_node = strcmp(cmd, "node") == 0;
  int needs_root =
      is_node || strcmp(cmd, "acquire") == 0 || strcmp(cmd, "drain") == 0;

  memset(&d, 0, sizeof(d));
  demo_live_init(&d.live, "warmpool node");
  d.ledger_fd = -1;
  d.target = -1;
  /* Short defaults: a failover and a resize show within seconds. */
  d.idle_ttl_ms = 60000;
  d.warmup_ms = 300;
  d.reconcile_ms = 200;
  d.primary_ttl_ms = 2000;
  d.warmup_timeout_ms = 10000;
  if (!is_node && strcmp(cmd, "acquire") != 0 && strcmp(cmd, "resize") != 0 &&
      strcmp(cmd, "drain") != 0 && strcmp(cmd, "snapshot") != 0) {
    fleet_escape_print(stderr, "fleet-demo: warmpool: unknown command '%s'",
                       cmd);
    return 2;
  }
  if ((rc = demo_wp_flags(&d, a, cmd)) != 0)
    return rc;
  if (needs_root && d.root == NULL) {
    fprintf(stderr, "fleet-demo: warmpool %s: --root is required\n", cmd);
    return 2;
  }
  if ((is_node || strcmp(cmd, "resize") == 0) && d.target < 0) {
    fprintf(stderr, "fleet-demo: warmpool %s: --target is required\n", cmd);
    return 2;
  }
  if (d.target < 0)
    d.target = 0;
  d.c.on_unreachable = demo_wp_unreachable;
  d.c.arg = &d;
  if (demo_wp_open(&d, a, !is_node) != 0)
    return 1;
  if (is_node)
    return demo_wp_node(&d);
  if (strcmp(cmd, "acquire") == 0 || strcmp(cmd, "drain") == 0)
    err = fleet_warmpool_start(&d.wp, &demo_wp_handlers,
                               demo_wp_on_client_started, &d);
  if (err != 0)
    ;
  else if (strcmp(cmd, "acquire") == 0)
    err = fleet_warmpool_acquire(&d.wp, demo_wp_on_acquired, &d);
  else if (strcmp(cmd, "resize") == 0)
    err = fleet_warmpool_resize(&d.wp, (uint32_t)d.target, demo_wp_on_resized,
                                &d);
  else if (strcmp(cmd, "drain") == 0)
    err = fleet_warmpool_drain(&d.wp, demo_wp_on_drained, &d);
  else
    err = fleet_warmpool_snapshot(&d.wp, demo_wp_on_snapshot, &d);
  if (err != 0) {
    demo_fail(cmd, err);
    demo_wp_finish(&d, 1);
  }
  return demo_wp_loop(&d);
}
