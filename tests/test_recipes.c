/* test_recipes.c -- the redis-cli recipes of docs/queue.md run as written:
 * every fenced block whose info string is "sh fleet-recipe <where>" (where
 * "redis" or "cluster") is run with /bin/sh, its redis-cli pointed at a
 * private Redis or Redis Cluster and FLEET_LUA at the expanded scripts the
 * build writes (the files it installs), while a fleet worker waits on the
 * queue "emails"; each recipe enqueues one job of type "welcome", which
 * the worker must complete, woken by the recipe's own wake-up (its poll
 * is a minute away). */
#include <sys/wait.h>
#include <unistd.h>

#include "cluster_fixture.h"
#include "test_queue_util.h"

#define RECIPES_MAX 16

typedef struct {
  char where[16];
  char *text;
} recipe_t;

/* Reads the recipes of `path` into `out`; returns how many. */
static size_t recipes_read(const char *path, recipe_t *out) {
  static const char open_tag[] = "```sh fleet-recipe ";
  FILE *f = fopen(path, "r");
  char line[1024];
  size_t n = 0, len = 0, cap = 0;
  char *text = NULL;
  int in = 0;

  ASSERT_NOT_NULL(f);
  while (fgets(line, sizeof(line), f) != NULL) {
    size_t l = strlen(line);
    if (!in && strncmp(line, open_tag, sizeof(open_tag) - 1) == 0) {
      ASSERT_LT(n, RECIPES_MAX);
      snprintf(out[n].where, sizeof(out[n].where), "%.*s",
               (int)strcspn(line + sizeof(open_tag) - 1, " \n"),
               line + sizeof(open_tag) - 1);
      in = 1;
      len = 0;
      continue;
    }
    if (in && strncmp(line, "```", 3) == 0) {
      out[n++].text = text;
      text = NULL;
      cap = 0;
      in = 0;
      continue;
    }
    if (in) {
      if (len + l + 1 > cap) {
        cap = (len + l + 1) * 2;
        text = realloc(text, cap);
        ASSERT_NOT_NULL(text);
      }
      memcpy(text + len, line, l + 1);
      len += l;
    }
  }
  fclose(f);
  ASSERT(!in);
  return n;
}

/* What the worker did. */
typedef struct {
  qt_t t;
  fleet_worker_t w;
  int completed, errors;
  char last_payload[128];
} rw_t;

static void rw_handler(fleet_worker_t *w, fleet_job_t *job) {
  rw_t *r = w->data;
  ASSERT_STR_EQ("welcome", job->type);
  snprintf(r->last_payload, sizeof(r->last_payload), "%.*s",
           (int)job->payload.len, (const char *)job->payload.base);
  ASSERT_OK(fleet_job_complete(job));
}

static void rw_done(fleet_worker_t *w, fleet_job_t *job,
                    fleet_job_action_t action, int status) {
  rw_t *r = w->data;
  (void)job, (void)action;
  ASSERT_OK(status);
  r->completed++;
}

static void rw_error(fleet_handle_t *h, int status, const char *detail) {
  rw_t *r = h->data;
  r->errors++;
  fprintf(stderr, "# worker error: %s: %s\n", fleet_err_name(status), detail);
}

static void rw_closed(fleet_handle_t *h) {
  (void)h;
}

/* A server to ask how many clients listen on the wake channel, and the
 * command that asks. */
typedef struct {
  fleet_test_redis_t *node;
  const char *cmd;
} subs_t;

static int subs_ready(void *arg) {
  subs_t *s = arg;
  redisReply *r = fleet_test_redis_cmd(s->node, s->cmd);
  int ok = r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
           r->element[1]->type == REDIS_REPLY_INTEGER &&
           r->element[1]->integer > 0;
  freeReplyObject(r);
  return ok;
}

/* Runs `text` with /bin/sh, its redis-cli (a wrapper first in PATH) on
 * port `port`, and checks it exits 0 and printed no error reply. */
static void recipe_run(const char *text, int port) {
  char pre[1024], out_path[] = "/tmp/fleet-recipe-XXXXXX", buf[4096];
  FILE *f;
  pid_t pid;
  int fd, st;
  size_t n;

  fd = mkstemp(out_path);
  ASSERT_GE(fd, 0);
  snprintf(pre, sizeof(pre),
           "set -eu\n"
           "real=$(command -v redis-cli)\n"
           "d=$(mktemp -d)\n"
           "trap 'rm -rf \"$d\"' EXIT\n"
           "printf '#!/bin/sh\\nexec \"%%s\" -h 127.0.0.1 -p %d \"$@\"\\n' "
           "\"$real\" >\"$d/redis-cli\"\n"
           "chmod +x \"$d/redis-cli\"\n"
           "PATH=\"$d:$PATH\"\n"
           "FLEET_LUA='%s'\n",
           port, FLEET_LUA_EXPANDED_DIR);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    char *script = malloc(strlen(pre) + strlen(text) + 1);
    if (script == NULL)
      _exit(127);
    strcpy(script, pre);
    strcat(script, text);
    dup2(fd, 1);
    dup2(fd, 2);
    execl("/bin/sh", "sh", "-c", script, (char *)NULL);
    _exit(127);
  }
  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  f = fdopen(fd, "r");
  ASSERT_NOT_NULL(f);
  rewind(f);
  n = fread(buf, 1, sizeof(buf) - 1, f);
  buf[n] = '\0';
  fclose(f);
  unlink(out_path);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || strstr(buf, "ERR") != NULL ||
      strstr(buf, "(error)") != NULL || strstr(buf, "WRONGTYPE") != NULL)
    fleet_test__fail(__FILE__, __LINE__, "recipe failed (status %d): %s\n%s",
                     st, buf, text);
}

/* Runs the recipes for `where` against `url` (redis-cli on `port`) with a
 * worker waiting; `subs` tells when its subscription is live. Returns how
 * many ran. */
static int recipes_check(recipe_t *rs, size_t n, const char *where,
                         const char *url, int port, subs_t *subs) {
  fleet_worker_options_t wo;
  rw_t r;
  size_t i;
  int ran = 0;

  memset(&r, 0, sizeof(r));
  qt_open_prefix(&r.t, url, "fleet", "emails", NULL);
  fleet_worker_options_init(&wo);
  wo.done_cb = rw_done;
  wo.error_cb = rw_error;
  wo.poll_ms = 60000;
  ASSERT_OK(fleet_worker_init(&r.t.c.client, &r.w, "emails", &wo));
  r.w.data = &r;
  ASSERT_OK(fleet_worker_start(&r.w, rw_handler));
  ASSERT(fleet_test_run_until(&r.t.c.loop, subs_ready, subs,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  /* The worker's first claim has run (and parked it). */
  qt_sleep(&r.t, 100);
  for (i = 0; i < n; i++) {
    if (strcmp(rs[i].where, where) != 0)
      continue;
    recipe_run(rs[i].text, port);
    ran++;
    ASSERT(fleet_test_wait_count(&r.t.c.loop, &r.completed, ran,
                                 fleet_test_ms(FLEET_TEST_WAIT_MS)));
    ASSERT_NOT_NULL(strstr(r.last_payload, "@example.com"));
  }
  ASSERT_EQ(0, r.errors);
  ASSERT_OK(fleet_worker_close(&r.w, rw_closed));
  qt_close(&r.t);
  return ran;
}

TEST_IMPL(docs_queue_recipes) {
  recipe_t rs[RECIPES_MAX];
  fleet_test_redis_t *one;
  fleet_test_cluster_t *c;
  char cmd[128];
  subs_t subs;
  size_t n, i;
  int owner;

  if (system("command -v redis-cli >/dev/null 2>&1") != 0)
    fleet_test_skip("redis-cli is not installed");
  n = recipes_read(FLEET_DOCS_DIR "/queue.md", rs);
  /* The script and the keys written by hand, for each kind of server. */
  ASSERT_GE(n, 4);
  for (i = 0; i < n; i++)
    ASSERT(strcmp(rs[i].where, "redis") == 0 ||
           strcmp(rs[i].where, "cluster") == 0);

  one = fleet_test_redis_start_or_skip(NULL);
  subs.node = one;
  subs.cmd = "PUBSUB NUMSUB {fleet:emails}:jobs:wake";
  ASSERT_GE(recipes_check(rs, n, "redis", fleet_test_redis_url(one),
                          fleet_test_redis_port(one), &subs),
            2);
  fleet_test_redis_free(one);

  c = fleet_test_cluster_start_or_skip();
  owner = fleet_test_cluster_owner(
      c, 0, fleet_test_cluster_keyslot(c, "{fleet:emails}"));
  ASSERT_GE(owner, 0);
  snprintf(cmd, sizeof(cmd), "PUBSUB SHARDNUMSUB {fleet:emails}:jobs:wake");
  subs.node = fleet_test_cluster_node(c, owner);
  subs.cmd = cmd;
  /* redis-cli starts at a node that does not own the slot: -c follows. */
  ASSERT_GE(recipes_check(rs, n, "cluster", fleet_test_cluster_url(c),
                          fleet_test_redis_port(
                              fleet_test_cluster_node(c, (owner + 1) % 3)),
                          &subs),
            2);
  fleet_test_cluster_free(c);
  for (i = 0; i < n; i++)
    free(rs[i].text);
  return 0;
}
