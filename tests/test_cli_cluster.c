/* test_cli_cluster.c -- cluster-wide listings and clear on a 3-master /
 * 3-replica Redis Cluster (tests/cluster_fixture.h): queues and locks
 * whose slots are on every master are all listed by `fleet queue ls` and
 * `fleet lock ls` (the walk spans the masters, and starts before the
 * client has read the slot map), the dashboard's /api/queues the same,
 * and fleet_store_clear() deletes the records of collections on every
 * master, whose replicas are not walked. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client_ctx.h"
#include "cluster_fixture.h"
#include "test.h"
#include "test_cli_util.h"
#include "test_queue_util.h"
#include "test_store_ctx.h"

#define ARGS(...)                                                              \
  (const char *const[]) {                                                      \
    __VA_ARGS__, NULL                                                          \
  }

/* Objects per master. */
#define PER_MASTER 2

/* Picks PER_MASTER names "<stem><n>" for each master (0..2) of `c`, by
 * the slot of their tag "{<prefix>:<name>}", into names[master][k]. */
static void names_on_every_master(fleet_test_cluster_t *c, const char *prefix,
                                  const char *stem,
                                  char names[3][PER_MASTER][32]) {
  int have[3] = {0, 0, 0}, n, owner;
  char tag[96];

  for (n = 0; n < 1000 && (have[0] < PER_MASTER || have[1] < PER_MASTER ||
                           have[2] < PER_MASTER);
       n++) {
    snprintf(tag, sizeof(tag), "{%s:%s%d}", prefix, stem, n);
    owner = fleet_test_cluster_owner(c, 0, fleet_test_cluster_keyslot(c, tag));
    ASSERT(owner >= 0 && owner < 3);
    if (have[owner] < PER_MASTER)
      snprintf(names[owner][have[owner]++], sizeof(names[0][0]), "%s%d", stem,
               n);
  }
  ASSERT(have[0] == PER_MASTER && have[1] == PER_MASTER &&
         have[2] == PER_MASTER);
}

/* The number of keys of node `i` that match `pattern` (SCAN). */
static long long keys_on(fleet_test_cluster_t *c, int i, const char *pattern) {
  fleet_test_redis_t *node = fleet_test_cluster_node(c, i);
  char cursor[32] = "0";
  long long n = 0;
  int calls = 0;
  redisReply *r;

  do {
    r = fleet_test_redis_cmd(node, "SCAN %s MATCH %s COUNT 1000", cursor,
                             pattern);
    ASSERT_NOT_NULL(r);
    ASSERT_EQ(REDIS_REPLY_ARRAY, r->type);
    snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
    n += (long long)r->element[1]->elements;
    freeReplyObject(r);
  } while (strcmp(cursor, "0") != 0 && ++calls < 10000);
  return n;
}

static void on_cleared(fleet_store_t *store, int status, uint64_t n,
                       void *arg) {
  st_t *s = arg;

  (void)store;
  s->status = status;
  s->n = n;
  s->calls++;
}

TEST_IMPL(cli_cluster_listings) {
  fleet_test_cluster_t *c = fleet_test_cluster_start_or_skip();
  const char *url = fleet_test_cluster_url(c);
  char queues[3][PER_MASTER][32], locks[3][PER_MASTER][32];
  char colls[3][PER_MASTER][32], out[4096], *p;
  fleet_store_options_t so;
  client_ctx_t ctx;
  cli_run_t r;
  qt_t t;
  st_t s;
  pid_t dash;
  int m, k, port, calls;
  uint64_t t0;

  cli_required();
  names_on_every_master(c, "qt", "queue", queues);
  names_on_every_master(c, "qt", "lock", locks);

  /* A job in each queue (through the library); a lock held on each lock
   * name (written on its master, as a holder writes it). */
  for (m = 0; m < 3; m++)
    for (k = 0; k < PER_MASTER; k++) {
      char id[FLEET_JOB_ID_MAX + 1];
      redisReply *rep;
      int owner;

      qt_open(&t, url, queues[m][k], NULL);
      qt_add(&t, "t", "p", id);
      qt_close(&t);
      snprintf(out, sizeof(out), "{qt:%s}", locks[m][k]);
      owner =
          fleet_test_cluster_owner(c, 0, fleet_test_cluster_keyslot(c, out));
      ASSERT_EQ(m, owner);
      rep = fleet_test_redis_cmd(fleet_test_cluster_node(c, m),
                                 "SET {qt:%s}:lock 9:host-a PX 600000",
                                 locks[m][k]);
      ASSERT_NOT_NULL(rep);
      freeReplyObject(rep);
      rep = fleet_test_redis_cmd(fleet_test_cluster_node(c, m),
                                 "SET {qt:%s}:fence 9", locks[m][k]);
      ASSERT_NOT_NULL(rep);
      freeReplyObject(rep);
    }

  /* `queue ls` and `lock ls` list every one, whichever node the client
   * was seeded with (a replica's keys are never counted twice). */
  for (m = 0; m < 4; m++) {
    char seed[256];

    if (m < 3)
      fleet_test_cluster_url_of(c, m == 2 ? 5 : m, seed, sizeof(seed));
    else
      snprintf(seed, sizeof(seed), "%s", url);
    cli_run_ok(&r, seed, "qt", ARGS("--json", "queue", "ls"));
    for (k = 0; k < 3 * PER_MASTER; k++) {
      char key[64];

      snprintf(key, sizeof(key), "\"queue\":\"%s\"",
               queues[k / PER_MASTER][k % PER_MASTER]);
      ASSERT(strstr(r.out, key) != NULL);
      ASSERT(strstr(strstr(r.out, key) + 1, key) == NULL);
    }
    cli_run_ok(&r, seed, "qt", ARGS("--json", "lock", "ls"));
    for (k = 0; k < 3 * PER_MASTER; k++) {
      char key[64];

      snprintf(key, sizeof(key), "\"name\":\"%s\"",
               locks[k / PER_MASTER][k % PER_MASTER]);
      ASSERT(strstr(r.out, key) != NULL);
      ASSERT(strstr(strstr(r.out, key) + 1, key) == NULL);
    }
  }
  cli_run_ok(&r, url, "qt", ARGS("queue", "ls"));
  ASSERT_EQ(1 + 3 * PER_MASTER, cli_lines(r.out));
  cli_run_ok(&r, url, "qt", ARGS("lock", "ls"));
  ASSERT_EQ(1 + 3 * PER_MASTER, cli_lines(r.out));

  /* The dashboard's listings walk the same way. */
  dash = cli_spawn(
      ARGS("--url", url, "--prefix", "qt", "dash", "--listen", "127.0.0.1:0"),
      "cc-dash");
  t0 = uv_hrtime();
  do {
    usleep(20000);
    cli_read_out("cc-dash", out, sizeof(out));
  } while (strchr(out, '\n') == NULL &&
           uv_hrtime() - t0 < fleet_test_ms(5000) * 1000000ULL);
  p = strstr(out, "fleet dash: http://127.0.0.1:");
  ASSERT_NOT_NULL(p);
  port = atoi(p + strlen("fleet dash: http://127.0.0.1:"));
  ASSERT_EQ(200,
            cli_http(port, "GET", "/api/queues", NULL, r.out, sizeof(r.out)));
  for (k = 0; k < 3 * PER_MASTER; k++) {
    char key[64];

    snprintf(key, sizeof(key), "\"queue\":\"%s\"",
             queues[k / PER_MASTER][k % PER_MASTER]);
    ASSERT(strstr(r.out, key) != NULL);
  }
  ASSERT_OK(kill(dash, SIGINT));
  cli_reap(dash, "cc-dash", &r);
  ASSERT_EQ(0, r.status);

  /* A store whose collections are on every master: clear deletes every
   * record, on every master, and counts each key once. */
  names_on_every_master(c, "st", "coll", colls);
  ctx_init(&ctx, url, NULL);
  fleet_store_options_init(&so);
  so.prefix = "st";
  st_open(&s, &ctx.client, &so);
  for (m = 0; m < 3; m++)
    for (k = 0; k < PER_MASTER; k++) {
      ASSERT_OK(st_put(&s, colls[m][k], sb("r1"), sb("v"), NULL));
      ASSERT_OK(st_put(&s, colls[m][k], sb("r2"), sb("v"), NULL));
    }
  for (m = 0; m < 3; m++)
    ASSERT_EQ(2 * PER_MASTER, keys_on(c, m, "{st:*"));
  calls = s.calls;
  ASSERT_OK(fleet_store_clear(&s.store, on_cleared, &s));
  ASSERT(fleet_test_wait_count(&ctx.loop, &s.calls, calls + 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(s.status);
  ASSERT_UEQ(3 * 2 * PER_MASTER, s.n);
  for (m = 0; m < 3; m++)
    ASSERT_EQ(0, keys_on(c, m, "{st:*"));
  st_close(&s);
  ctx_close(&ctx);

  fleet_test_cluster_free(c);
  return 0;
}
