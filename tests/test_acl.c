/* test_acl.c -- fleet as a least-privilege ACL user: the user that
 * docs/deploy.md tells operators to create (FLEET_TEST_ACL_COMMANDS and
 * one ~{P:* &{P:* pair per prefix) runs the library's handshake options
 * and the CLI, the page holds that very line, every command the scripts
 * call is in it, and what the user lacks comes back as FLEET_ENOPERM with
 * the server's text. The primitives themselves run as that user in the
 * _acl (one Redis) and _acl_cluster variants of their conformance tests
 * (tests/test-list-acl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scripts/scripts.h"
#include "backend.h"
#include "test_cli_util.h"
#include "test_queue_util.h"

/* tests/CMakeLists.txt passes the page's path. */
#ifndef FLEET_DEPLOY_DOC
#define FLEET_DEPLOY_DOC "docs/deploy.md"
#endif

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

/* The whole of a file, NUL-terminated; the caller frees it. */
static char *acl_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  char *buf;
  long n;

  ASSERT_NOT_NULL(f);
  ASSERT_OK(fseek(f, 0, SEEK_END));
  n = ftell(f);
  ASSERT_GT(n, 0);
  rewind(f);
  buf = malloc((size_t)n + 1);
  ASSERT_NOT_NULL(buf);
  ASSERT_EQ(n, (long)fread(buf, 1, (size_t)n, f));
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* docs/deploy.md gives operators the rules the tests run under: the one
 * Redis line (with the default prefix) and the Cluster additions. */
TEST_IMPL(acl_docs) {
  char *doc = acl_read_file(FLEET_DEPLOY_DOC);

  ASSERT_NOT_NULL(strstr(doc,
                         "ACL SETUSER fleet reset on >CHANGE-ME "
                         "~{fleet:* &{fleet:* " FLEET_TEST_ACL_COMMANDS "\n"));
  ASSERT_NOT_NULL(
      strstr(doc, "ACL SETUSER fleet " FLEET_TEST_ACL_COMMANDS_CLUSTER "\n"));
  free(doc);
  return 0;
}

/* Whether the rules `list` grant `command` ("+get" for "GET"). */
static int acl_listed(const char *list, const char *command) {
  char want[64];
  const char *p;
  size_t n, i;

  n = (size_t)snprintf(want, sizeof(want), "+%s", command);
  ASSERT_LT(n, sizeof(want));
  for (i = 1; i < n; i++)
    if (want[i] >= 'A' && want[i] <= 'Z')
      want[i] = (char)(want[i] - 'A' + 'a');
  for (p = strstr(list, want); p != NULL; p = strstr(p + 1, want))
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
      return 1;
  return 0;
}

/* Quoted upper-case words in the scripts that are not commands: options
 * of the commands and error codes the scripts look for. */
static const char *const acl_script_words[] = {
    "GT", "KEEPTTL", "LIMIT", "NX", "PX", "WITHSCORES", "WRONGTYPE", NULL};

/* The quoted upper-case word (2 to 63 letters or '_') that starts at `p`
 * (a quote) before `end`, copied to `word`; returns its length with the
 * quotes, or 0 when there is none. */
static size_t acl_quoted(const char *p, const char *end, char *word,
                         size_t size) {
  size_t n = 0;

  if (*p != '\'' && *p != '"')
    return 0;
  while (p + 1 + n < end && n < size - 1 &&
         ((p[1 + n] >= 'A' && p[1 + n] <= 'Z') || p[1 + n] == '_'))
    n++;
  if (n < 2 || p + 1 + n >= end || p[1 + n] != *p)
    return 0;
  memcpy(word, p + 1, n);
  word[n] = '\0';
  return n + 2;
}

/* Every command a script may call is in the list: each quoted upper-case
 * word of every embedded script (as the library sends it) is a command
 * the list grants (the cluster copies': the list with the cluster's
 * additions), a word of acl_script_words, or a fleet error name. CLUSTER
 * counts with its subcommand ("+cluster|info"), except CLUSTER MYID,
 * which lib/wake.lua calls only in a script file run by hand: the
 * library's copies set wake_sharded and never reach it. CLUSTER INFO
 * (lib/fence.lua) counts for the cluster only. Every command op
 * is listed too. */
TEST_IMPL(acl_commands_used) {
  const char *all = FLEET_TEST_ACL_COMMANDS " " FLEET_TEST_ACL_COMMANDS_CLUSTER;
  const fleet__script_t *sets[2] = {fleet__scripts, fleet__scripts_sharded};
  size_t s, i, k, seen = 0;
  int op;

  for (s = 0; s < 2; s++)
    for (i = 0; i < fleet__nscripts; i++) {
      const char *p = sets[s][i].body, *end = p + sets[s][i].len;
      const char *list = s == 0 ? FLEET_TEST_ACL_COMMANDS : all;

      for (; p < end; p++) {
        char word[64], sub[64], command[128];
        size_t n = acl_quoted(p, end, word, sizeof(word));

        if (n == 0)
          continue;
        p += n - 1;
        if (strncmp(word, "FLEET_", 6) == 0)
          continue;
        for (k = 0; acl_script_words[k] != NULL; k++)
          if (strcmp(word, acl_script_words[k]) == 0)
            break;
        if (acl_script_words[k] != NULL)
          continue;
        snprintf(command, sizeof(command), "%s", word);
        if (strcmp(word, "CLUSTER") == 0) {
          /* The subcommand: the next quoted word, after ", ". */
          const char *q = p + 1;
          size_t m;

          while (q < end && (*q == ',' || *q == ' '))
            q++;
          m = q < end ? acl_quoted(q, end, sub, sizeof(sub)) : 0;
          ASSERT_GT(m, 0);
          p = q + m - 1;
          if (strcmp(sub, "MYID") == 0)
            continue;
          snprintf(command, sizeof(command), "%s|%s", word, sub);
        }
        /* The plain copies' SPUBLISH sits in the branch that
         * wake_sharded (false there) skips, and lib/fence.lua's CLUSTER
         * INFO in the branch of the epoch "c", which only a cluster's
         * connections send. */
        if (!acl_listed(list, command) &&
            !(s == 0 && (strcmp(word, "SPUBLISH") == 0 ||
                         strcmp(command, "CLUSTER|INFO") == 0)))
          fleet_test__fail(__FILE__, __LINE__,
                           "script %s calls %s, which the ACL line of "
                           "docs/deploy.md lacks",
                           sets[s][i].name, command);
        seen++;
      }
    }
  ASSERT_GT(seen, 100);
  for (op = 0; op < FLEET__OP_COUNT; op++) {
    const char *command = fleet__op_command((fleet__op_t)op);
    if (command != NULL)
      ASSERT(acl_listed(FLEET_TEST_ACL_COMMANDS, command));
  }
  return 0;
}

/* A queue on a client with options `o`: qt_open_prefix() with client
 * options of the caller's. */
static void acl_qt_open(qt_t *t, const char *url, fleet_client_options_t *o) {
  memset(t, 0, sizeof(*t));
  ctx_init(&t->c, url, o);
  t->q.data = t;
  ASSERT_OK(fleet_queue_init(&t->c.client, &t->q, "mail", NULL));
}

/* The handshake and the options that add commands: SELECT of a database
 * from the URL, and WAIT after job-state calls (no replica here, so the
 * enqueue waits its timeout out: FLEET_ETIMEDOUT, not FLEET_ENOPERM). */
TEST_IMPL(acl_select_wait) {
  static const char *const prefixes[] = {"qt", NULL};
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_client_options_t o;
  char url[128], db_url[160];
  fleet_job_spec_t spec;
  redisReply *reply;
  qt_t t;
  int st = 1;

  fleet_test_redis_acl_user(r, "fleet", prefixes, NULL, url, sizeof(url));
  snprintf(db_url, sizeof(db_url), "%s/3", url);
  qt_open(&t, db_url, "mail", NULL);
  qt_add(&t, "send", "to-alice", NULL);
  ASSERT_OK(qt_counts(&t));
  ASSERT_EQ(1, t.counts.pending);
  qt_close(&t);
  reply = fleet_test_redis_cmd(r, "SELECT 3");
  ASSERT_NOT_NULL(reply);
  freeReplyObject(reply);
  reply = fleet_test_redis_cmd(r, "EXISTS {qt:mail}:pending");
  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(1, reply->integer);
  freeReplyObject(reply);

  fleet_client_options_init(&o);
  o.prefix = "qt";
  o.wait_replicas = 1;
  o.wait_timeout_ms = 50;
  acl_qt_open(&t, url, &o);
  fleet_job_spec_init(&spec, "send", "to-bob", 6);
  ASSERT_ERR(FLEET_ETIMEDOUT, qt_enqueue(&t, &spec, 1, &st, NULL));
  ASSERT_NOT_NULL(strstr(fleet_client_last_error(&t.c.client), "WAIT"));
  qt_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* The same user less one thing it needs: a command a script calls
 * (inside the script: Redis 7.0 words it "ERR The user executing the
 * script can't run this command"), the commands that run scripts, or the
 * keys of another prefix. Each is FLEET_ENOPERM with the server's text in
 * the detail, and no job is added. */
TEST_IMPL(acl_denied) {
  static const char *const prefixes[] = {"qt", NULL};
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_job_spec_t spec;
  redisReply *reply;
  char url[128];
  qt_t t;
  int st = 1;

  fleet_job_spec_init(&spec, "send", "to-bob", 6);
  fleet_test_redis_acl_user(r, "fleet", prefixes, "-hset", url, sizeof(url));
  qt_open(&t, url, "mail", NULL);
  ASSERT_ERR(FLEET_ENOPERM, qt_enqueue(&t, &spec, 1, &st, NULL));
  ASSERT_NOT_NULL(
      strstr(fleet_client_last_error(&t.c.client), "can't run this command"));
  qt_close(&t);

  fleet_test_redis_acl_user(r, "fleet", prefixes, "-evalsha -eval -fcall", url,
                            sizeof(url));
  qt_open(&t, url, "mail", NULL);
  ASSERT_ERR(FLEET_ENOPERM, qt_enqueue(&t, &spec, 1, &st, NULL));
  ASSERT_NOT_NULL(strstr(fleet_client_last_error(&t.c.client), "NOPERM"));
  qt_close(&t);

  fleet_test_redis_acl_user(r, "fleet", prefixes, NULL, url, sizeof(url));
  qt_open_prefix(&t, url, "other", "mail", NULL);
  ASSERT_ERR(FLEET_ENOPERM, qt_enqueue(&t, &spec, 1, &st, NULL));
  ASSERT_NOT_NULL(strstr(fleet_client_last_error(&t.c.client), "NOPERM"));
  qt_close(&t);

  /* No job was added. Redis does not undo a script that a refusal ends
   * halfway: the enqueue without HSET had drawn its sequence numbers
   * (which only leaves a gap in the generated ids). */
  reply = fleet_test_redis_cmd(r, "KEYS *");
  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(REDIS_REPLY_ARRAY, reply->type);
  ASSERT_EQ(1, reply->elements);
  ASSERT_STR_EQ("{qt:mail}:seq", reply->element[0]->str);
  freeReplyObject(reply);

  /* With the rights it needs, the same enqueue goes through. */
  qt_open(&t, url, "mail", NULL);
  ASSERT_OK(qt_enqueue(&t, &spec, 1, &st, NULL));
  ASSERT_OK(st);
  qt_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* The CLI as the same user: listings (SCAN), a queue's stats and jobs, a
 * pause (an admin script), locks. Without SCAN (a user made for programs
 * that never call fleet_store_clear()), the listings fail with
 * FLEET_ENOPERM and the rest still works. */
TEST_IMPL(acl_cli) {
  static const char *const prefixes[] = {"qt", NULL};
  fleet_test_redis_t *r;
  char url[128], id[FLEET_JOB_ID_MAX + 1];
  cli_run_t run;
  qt_t t;

  cli_required();
  r = fleet_test_redis_start_or_skip(NULL);
  fleet_test_redis_acl_user(r, "fleet", prefixes, NULL, url, sizeof(url));
  qt_open(&t, url, "mail", NULL);
  qt_add(&t, "send", "to-alice", id);
  qt_add(&t, "send", "to-carol", NULL);
  qt_close(&t);

  cli_run_ok(&run, url, "qt", ARGS("--json", "queue", "ls"));
  ASSERT_NOT_NULL(strstr(run.out, "{\"queue\":\"mail\",\"pending\":2,"));
  cli_run_ok(&run, url, "qt", ARGS("queue", "stats", "mail"));
  cli_run_ok(&run, url, "qt", ARGS("queue", "get", "mail", id));
  ASSERT_NOT_NULL(strstr(run.out, "to-alice"));
  cli_run_ok(&run, url, "qt", ARGS("queue", "pause", "mail"));
  cli_run_ok(&run, url, "qt", ARGS("--json", "queue", "stats", "mail"));
  ASSERT_NOT_NULL(strstr(run.out, "\"paused\":true"));
  cli_run_ok(&run, url, "qt", ARGS("queue", "resume", "mail"));
  cli_run_ok(&run, url, "qt", ARGS("--json", "lock", "ls"));
  ASSERT_STR_EQ("[]\n", run.out);
  cli_run_ok(&run, url, "qt", ARGS("--json", "lock", "get", "nobody"));

  fleet_test_redis_acl_user(r, "fleet", prefixes, "-scan", url, sizeof(url));
  cli_run(&run, ARGS("--url", url, "--prefix", "qt", "queue", "ls"));
  ASSERT_NE(0, run.status);
  ASSERT_NOT_NULL(strstr(run.err, "FLEET_ENOPERM"));
  cli_run_ok(&run, url, "qt", ARGS("queue", "stats", "mail"));
  fleet_test_redis_free(r);
  return 0;
}

/* A user that may not load functions (no FUNCTION LOAD), or may not call
 * them (no FCALL: the refusal is sent again as EVAL, then EVALSHA is
 * used), still runs every op: the scripts fall back to EVALSHA, and at
 * most one FCALL reached the server. */
TEST_IMPL(acl_functions_denied) {
  static const char *const prefixes[] = {"qt", NULL};
  static const char *const denied[] = {"-function|load", "-fcall"};
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  qt_job_t job;
  char url[128];
  size_t i;
  qt_t t;

  for (i = 0; i < 2; i++) {
    fleet_claim_t claim;
    redisReply *info;
    int res = 1;

    fleet_test_redis_ok(r, "FUNCTION FLUSH");
    fleet_test_redis_ok(r, "CONFIG RESETSTAT");
    fleet_test_redis_acl_user(r, "fleet", prefixes, denied[i], url,
                              sizeof(url));
    qt_open(&t, url, "mail", NULL);
    qt_add(&t, "send", "to-carol", NULL);
    ASSERT_EQ(1, qt_claim(&t, 1, 30000, &job));
    claim = qt_claim_of(&job);
    ASSERT_OK(qt_complete(&t, &claim, 1, &res));
    ASSERT_OK(res);
    ASSERT_OK(qt_counts(&t));
    ASSERT_UEQ(0, t.counts.pending);
    qt_close(&t);
    info = fleet_test_redis_cmd(r, "INFO commandstats");
    ASSERT_NOT_NULL(info);
    ASSERT_NOT_NULL(strstr(info->str, "cmdstat_evalsha:calls="));
    if (i == 0) {
      /* Only an op issued before the handshake said "no functions" may
       * have gone as FCALL (not found: the server has none). */
      const char *p = strstr(info->str, "cmdstat_fcall:calls=");
      ASSERT(p == NULL || strtol(p + 20, NULL, 10) <= 1);
    } else {
      /* The first FCALL was refused by the ACL before it ran (and sent
       * again as EVAL); no other followed. */
      ASSERT_NOT_NULL(strstr(info->str, "cmdstat_fcall:calls=0,"));
      ASSERT_NOT_NULL(strstr(info->str, "rejected_calls=1,"));
      ASSERT_NOT_NULL(strstr(info->str, "cmdstat_eval:calls=1,"));
    }
    freeReplyObject(info);
  }
  fleet_test_redis_free(r);
  return 0;
}
