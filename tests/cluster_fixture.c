/* cluster_fixture.c -- a private 3-master / 3-replica Redis Cluster (see
 * cluster_fixture.h), built from six fleet_test_redis_t servers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster_fixture.h"
#include "test.h"

struct fleet_test_cluster_s {
  fleet_test_redis_t *node[FLEET_TEST_CLUSTER_NODES];
  char id[FLEET_TEST_CLUSTER_NODES][48];
  int dead[FLEET_TEST_CLUSTER_NODES];
  char url[256];
};

static uint64_t cluster_now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void cluster_sleep_ms(unsigned ms) {
  struct timespec ts;

  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (long)(ms % 1000) * 1000000;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* Runs a command on node `i`; aborts the test unless it succeeds. */
static redisReply *cluster_must(fleet_test_cluster_t *c, int i,
                                const char *what, redisReply *r) {
  if (r == NULL || r->type == REDIS_REPLY_ERROR)
    fleet_test__fail(__FILE__, __LINE__, "cluster node %d: %s: %s", i, what,
                     r == NULL ? "no reply" : r->str);
  return r;
}

/* Whether node `i` reports cluster_state:ok and knows `want` nodes that are
 * all connected (no handshake, no fail flags). */
static int cluster_node_settled(fleet_test_cluster_t *c, int i, int want) {
  redisReply *r = fleet_test_redis_cmd(c->node[i], "CLUSTER INFO");
  int ok = r != NULL && r->type == REDIS_REPLY_STRING &&
           strstr(r->str, "cluster_state:ok") != NULL;
  int known = 0;
  char *line;

  if (r != NULL)
    freeReplyObject(r);
  if (!ok)
    return 0;
  r = fleet_test_redis_cmd(c->node[i], "CLUSTER NODES");
  if (r == NULL || r->type != REDIS_REPLY_STRING) {
    if (r != NULL)
      freeReplyObject(r);
    return 0;
  }
  for (line = r->str; line != NULL && *line != '\0';) {
    char *nl = strchr(line, '\n');
    size_t len = nl != NULL ? (size_t)(nl - line) : strlen(line);
    char buf[512];
    snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
    if (len > 0) {
      if (strstr(buf, "handshake") != NULL || strstr(buf, "fail") != NULL ||
          strstr(buf, "noaddr") != NULL || strstr(buf, "disconnected") != NULL)
        ok = 0;
      else
        known++;
    }
    line = nl != NULL ? nl + 1 : NULL;
  }
  freeReplyObject(r);
  return ok && known == want;
}

/* Whether replica `i`'s link to its master is up. */
static int cluster_replica_linked(fleet_test_cluster_t *c, int i) {
  redisReply *r = fleet_test_redis_cmd(c->node[i], "INFO replication");
  int ok = r != NULL && r->type == REDIS_REPLY_STRING &&
           strstr(r->str, "master_link_status:up") != NULL;
  if (r != NULL)
    freeReplyObject(r);
  return ok;
}

fleet_test_cluster_t *fleet_test_cluster_start_or_skip(void) {
  static const char *const args[] = {"--cluster-enabled",
                                     "yes",
                                     "--cluster-node-timeout",
                                     "1000",
                                     "--cluster-replica-validity-factor",
                                     "0",
                                     FLEET_TEST_REPL_USER_ARGS,
                                     NULL};
  fleet_test_cluster_t *c = calloc(1, sizeof(*c));
  uint64_t deadline;
  int i, settled;

  ASSERT_NOT_NULL(c);
  for (i = 0; i < FLEET_TEST_CLUSTER_NODES; i++) {
    /* The cluster bus listens on port + 10000. */
    int rc = fleet_test_redis_start_below(&c->node[i], args, 55535);
    if (rc == FLEET_TEST_REDIS_ENOTFOUND)
      fleet_test_skip("redis-server is not installed");
    if (rc != 0)
      fleet_test__fail(__FILE__, __LINE__, "cluster node %d: %s", i,
                       strerror(-rc));
  }
  for (i = 0; i < FLEET_TEST_CLUSTER_NODES; i++) {
    redisReply *r = cluster_must(
        c, i, "CLUSTER MYID", fleet_test_redis_cmd(c->node[i], "CLUSTER MYID"));
    snprintf(c->id[i], sizeof(c->id[i]), "%s", r->str);
    freeReplyObject(r);
  }
  for (i = 1; i < FLEET_TEST_CLUSTER_NODES; i++)
    freeReplyObject(cluster_must(
        c, 0, "CLUSTER MEET",
        fleet_test_redis_cmd(c->node[0], "CLUSTER MEET 127.0.0.1 %d",
                             fleet_test_redis_port(c->node[i]))));
  freeReplyObject(cluster_must(
      c, 0, "ADDSLOTSRANGE",
      fleet_test_redis_cmd(c->node[0], "CLUSTER ADDSLOTSRANGE 0 5460")));
  freeReplyObject(cluster_must(
      c, 1, "ADDSLOTSRANGE",
      fleet_test_redis_cmd(c->node[1], "CLUSTER ADDSLOTSRANGE 5461 10922")));
  freeReplyObject(cluster_must(
      c, 2, "ADDSLOTSRANGE",
      fleet_test_redis_cmd(c->node[2], "CLUSTER ADDSLOTSRANGE 10923 16383")));

  /* A replica can only follow a master it knows: retry until gossip has
   * told it. */
  deadline = cluster_now_ms() + 20000;
  for (i = 3; i < FLEET_TEST_CLUSTER_NODES; i++) {
    for (;;) {
      redisReply *r = fleet_test_redis_cmd(c->node[i], "CLUSTER REPLICATE %s",
                                           c->id[i - 3]);
      int ok = r != NULL && r->type == REDIS_REPLY_STATUS;
      if (r != NULL)
        freeReplyObject(r);
      if (ok)
        break;
      if (cluster_now_ms() > deadline)
        fleet_test__fail(__FILE__, __LINE__,
                         "cluster node %d never learned its master", i);
      cluster_sleep_ms(50);
    }
  }
  for (;;) {
    settled = 1;
    for (i = 0; i < FLEET_TEST_CLUSTER_NODES && settled; i++)
      settled = cluster_node_settled(c, i, FLEET_TEST_CLUSTER_NODES) &&
                (i < 3 || cluster_replica_linked(c, i));
    if (settled)
      break;
    if (cluster_now_ms() > deadline)
      fleet_test__fail(__FILE__, __LINE__, "the cluster did not settle");
    cluster_sleep_ms(50);
  }
  snprintf(c->url, sizeof(c->url), "redis+cluster://127.0.0.1:%d,127.0.0.1:%d",
           fleet_test_redis_port(c->node[0]),
           fleet_test_redis_port(c->node[1]));
  return c;
}

const char *fleet_test_cluster_url(const fleet_test_cluster_t *c) {
  return c->url;
}

void fleet_test_cluster_url_of(const fleet_test_cluster_t *c, int i, char *buf,
                               size_t size) {
  snprintf(buf, size, "redis+cluster://127.0.0.1:%d",
           fleet_test_redis_port(c->node[i]));
}

fleet_test_redis_t *fleet_test_cluster_node(fleet_test_cluster_t *c, int i) {
  return c->node[i];
}

static int cluster_index_of_port(fleet_test_cluster_t *c, long long port) {
  int i;
  for (i = 0; i < FLEET_TEST_CLUSTER_NODES; i++)
    if (fleet_test_redis_port(c->node[i]) == port)
      return i;
  return -1;
}

int fleet_test_cluster_owner(fleet_test_cluster_t *c, int asked,
                             unsigned slot) {
  redisReply *r = fleet_test_redis_cmd(c->node[asked], "CLUSTER SLOTS");
  int owner = -1;
  size_t i;

  if (r == NULL)
    return -1;
  if (r->type == REDIS_REPLY_ARRAY)
    for (i = 0; i < r->elements; i++) {
      redisReply *e = r->element[i];
      if (e->elements >= 3 && (unsigned)e->element[0]->integer <= slot &&
          slot <= (unsigned)e->element[1]->integer)
        owner = cluster_index_of_port(c, e->element[2]->element[1]->integer);
    }
  freeReplyObject(r);
  return owner;
}

/* Any node that is alive. */
static int cluster_live(fleet_test_cluster_t *c) {
  int i;
  for (i = 0; i < FLEET_TEST_CLUSTER_NODES; i++)
    if (!c->dead[i])
      return i;
  return -1;
}

unsigned fleet_test_cluster_keyslot(fleet_test_cluster_t *c, const char *key) {
  int i = cluster_live(c);
  redisReply *r =
      cluster_must(c, i, "CLUSTER KEYSLOT",
                   fleet_test_redis_cmd(c->node[i], "CLUSTER KEYSLOT %s", key));
  unsigned slot = (unsigned)r->integer;
  freeReplyObject(r);
  return slot;
}

/* Waits until node `replica` is a master and every live node reports
 * cluster_state:ok; returns `replica`, or -1 at `deadline`. */
static int cluster_wait_promoted(fleet_test_cluster_t *c, int replica,
                                 uint64_t deadline) {
  int j, settled;

  for (;;) {
    redisReply *r = fleet_test_redis_cmd(c->node[replica], "ROLE");
    int promoted = r != NULL && r->type == REDIS_REPLY_ARRAY &&
                   r->elements > 0 &&
                   r->element[0]->type == REDIS_REPLY_STRING &&
                   strcmp(r->element[0]->str, "master") == 0;
    if (r != NULL)
      freeReplyObject(r);
    if (promoted) {
      settled = 1;
      for (j = 0; j < FLEET_TEST_CLUSTER_NODES && settled; j++) {
        if (c->dead[j])
          continue;
        r = fleet_test_redis_cmd(c->node[j], "CLUSTER INFO");
        settled = r != NULL && r->type == REDIS_REPLY_STRING &&
                  strstr(r->str, "cluster_state:ok") != NULL;
        if (r != NULL)
          freeReplyObject(r);
      }
      if (settled)
        return replica;
    }
    if (cluster_now_ms() > deadline)
      return -1;
    cluster_sleep_ms(50);
  }
}

int fleet_test_cluster_kill_master(fleet_test_cluster_t *c, int i,
                                   uint64_t timeout_ms) {
  ASSERT_EQ(fleet_test_redis_kill(c->node[i]), 0);
  c->dead[i] = 1;
  return cluster_wait_promoted(c, i < 3 ? i + 3 : i - 3,
                               cluster_now_ms() + timeout_ms);
}

int fleet_test_cluster_restart_node(fleet_test_cluster_t *c, int i,
                                    uint64_t timeout_ms) {
  uint64_t deadline = cluster_now_ms() + timeout_ms;

  if (fleet_test_redis_restart(c->node[i]) != 0)
    return -1;
  c->dead[i] = 0;
  while (!cluster_replica_linked(c, i)) {
    if (cluster_now_ms() > deadline)
      return -1;
    cluster_sleep_ms(50);
  }
  return 0;
}

int fleet_test_cluster_manual_failover(fleet_test_cluster_t *c, int i,
                                       uint64_t timeout_ms) {
  redisReply *r = fleet_test_redis_cmd(c->node[i], "CLUSTER FAILOVER");

  cluster_must(c, i, "CLUSTER FAILOVER", r);
  freeReplyObject(r);
  return cluster_wait_promoted(c, i, cluster_now_ms() + timeout_ms) == i ? 0
                                                                         : -1;
}

int fleet_test_cluster_move_slot(fleet_test_cluster_t *c, unsigned slot, int to,
                                 int batch, unsigned pause_ms) {
  int from = fleet_test_cluster_owner(c, to, slot);
  int moved = 0, i;
  redisReply *r;

  if (from < 0 || from == to) {
    fprintf(stderr, "move_slot: slot %u is on node %d\n", slot, from);
    return -1;
  }
  r = fleet_test_redis_cmd(c->node[to], "CLUSTER SETSLOT %u IMPORTING %s", slot,
                           c->id[from]);
  cluster_must(c, to, "SETSLOT IMPORTING", r);
  freeReplyObject(r);
  r = fleet_test_redis_cmd(c->node[from], "CLUSTER SETSLOT %u MIGRATING %s",
                           slot, c->id[to]);
  cluster_must(c, from, "SETSLOT MIGRATING", r);
  freeReplyObject(r);
  for (;;) {
    redisReply *keys = fleet_test_redis_cmd(
        c->node[from], "CLUSTER GETKEYSINSLOT %u %d", slot, batch);
    size_t k;
    cluster_must(c, from, "GETKEYSINSLOT", keys);
    if (keys->elements == 0) {
      freeReplyObject(keys);
      break;
    }
    {
      /* MIGRATE host port "" 0 timeout KEYS k1 k2 ... */
      size_t argc = 8 + keys->elements;
      const char **argv = calloc(argc, sizeof(*argv));
      size_t *lens = calloc(argc, sizeof(*lens));
      char port[16];
      ASSERT_NOT_NULL(argv);
      ASSERT_NOT_NULL(lens);
      snprintf(port, sizeof(port), "%d", fleet_test_redis_port(c->node[to]));
      argv[0] = "MIGRATE";
      argv[1] = "127.0.0.1";
      argv[2] = port;
      argv[3] = "";
      argv[4] = "0";
      argv[5] = "5000";
      argv[6] = "REPLACE";
      argv[7] = "KEYS";
      for (k = 0; k < keys->elements; k++)
        argv[8 + k] = keys->element[k]->str;
      for (k = 0; k < argc; k++)
        lens[k] = k < 8 ? strlen(argv[k]) : keys->element[k - 8]->len;
      r = fleet_test_redis_cmd_argv(c->node[from], (int)argc, argv, lens);
      cluster_must(c, from, "MIGRATE", r);
      freeReplyObject(r);
      moved += (int)keys->elements;
      free(argv);
      free(lens);
    }
    freeReplyObject(keys);
    if (pause_ms > 0)
      cluster_sleep_ms(pause_ms);
  }
  /* The target first, then the source, then the rest: as redis-cli. */
  r = fleet_test_redis_cmd(c->node[to], "CLUSTER SETSLOT %u NODE %s", slot,
                           c->id[to]);
  cluster_must(c, to, "SETSLOT NODE", r);
  freeReplyObject(r);
  for (i = 0; i < FLEET_TEST_CLUSTER_NODES; i++) {
    if (i == to || c->dead[i])
      continue;
    r = fleet_test_redis_cmd(c->node[i], "ROLE");
    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
        strcmp(r->element[0]->str, "master") == 0) {
      freeReplyObject(r);
      r = fleet_test_redis_cmd(c->node[i], "CLUSTER SETSLOT %u NODE %s", slot,
                               c->id[to]);
      cluster_must(c, i, "SETSLOT NODE", r);
    }
    if (r != NULL)
      freeReplyObject(r);
  }
  return moved;
}

long long fleet_test_cluster_wait_shard_subs(fleet_test_cluster_t *c, int i,
                                             const char *channel,
                                             long long want,
                                             uint64_t timeout_ms) {
  uint64_t deadline = cluster_now_ms() + timeout_ms;
  long long n = -1;

  for (;;) {
    redisReply *r =
        fleet_test_redis_cmd(c->node[i], "PUBSUB SHARDNUMSUB %s", channel);
    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_INTEGER)
      n = r->element[1]->integer;
    if (r != NULL)
      freeReplyObject(r);
    if (n >= want || cluster_now_ms() > deadline)
      return n;
    cluster_sleep_ms(20);
  }
}

void fleet_test_cluster_free(fleet_test_cluster_t *c) {
  int i;

  if (c == NULL)
    return;
  for (i = 0; i < FLEET_TEST_CLUSTER_NODES; i++)
    fleet_test_redis_free(c->node[i]);
  free(c);
}
