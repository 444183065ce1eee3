/* test_store_multi.c -- the store shared by several processes through one
 * Redis: each child writes its records, indexes and events; the parent sees
 * them all, listed once each. */
#include <sys/wait.h>
#include <unistd.h>

#include "test_store_ctx.h"

#define MULTI_CHILDREN 3
#define MULTI_RECORDS 40
#define MULTI_EVENTS 5

static void multi_on_done(fleet_handle_t *st, int status, void *arg) {
  int *left = arg;
  if (status != 0)
    _exit(10);
  (*left)--;
}

static void multi_on_count(fleet_store_t *st, int status, uint64_t n,
                           void *arg) {
  multi_on_done((fleet_handle_t *)st, status, arg);
}

/* Whether no write of a child is left: `*(int *)arg` reached 0. */
static int multi_all_done(void *arg) {
  return *(int *)arg <= 0;
}

/* The store has closed: its client may close now. */
static void multi_on_store_closed(fleet_handle_t *store) {
  fleet_client_close(store->data, NULL);
}

/* A child: its own loop, client and store; all its writes in flight at
 * once. Exits 0 when every write succeeded. */
static void multi_child(const char *url, int k) {
  fleet_store_index_t ix[2] = {{"agent", {"shared", 6}}, {"child", {NULL, 0}}};
  fleet_store_put_options_t po = {ix, 2, 0};
  fleet_bytes_t ev[MULTI_EVENTS];
  fleet_store_t store;
  fleet_client_t client;
  uv_loop_t loop;
  char id[MULTI_RECORDS][16], child[8];
  int i, left = 2 * MULTI_RECORDS, closed = 0;

  snprintf(child, sizeof(child), "c%d", k);
  ix[1].value = sb(child);
  for (i = 0; i < MULTI_EVENTS; i++)
    ev[i] = sb("event");
  if (uv_loop_init(&loop) != 0 ||
      fleet_client_init(&loop, &client, url, NULL) != 0 ||
      fleet_store_init(&client, &store,
                       &(fleet_store_options_t){"t", 0, 0, 0}) != 0)
    _exit(2);
  for (i = 0; i < MULTI_RECORDS; i++) {
    snprintf(id[i], sizeof(id[i]), "c%d-r%02d", k, i);
    /* In order on one connection: the put runs before the append. */
    if (fleet_store_put(&store, "runs", sb(id[i]), sb(id[i]), &po,
                        multi_on_done, &left) != 0 ||
        fleet_store_events_append(&store, "runs", sb(id[i]), ev, MULTI_EVENTS,
                                  multi_on_count, &left) != 0)
      _exit(3);
  }
  if (!fleet_test_run_until(&loop, multi_all_done, &left,
                            fleet_test_ms(FLEET_TEST_WAIT_MS)))
    _exit(4);
  store.data = &client;
  fleet_store_close(&store, multi_on_store_closed);
  uv_run(&loop, UV_RUN_DEFAULT);
  closed = uv_loop_close(&loop) == 0;
  _exit(closed ? 0 : 4);
}

TEST_IMPL(store_multiprocess) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  pid_t pids[MULTI_CHILDREN];
  client_ctx_t c;
  st_t s;
  char *ids, *p;
  int i, n, status;

  /* The children are forked before this process makes any loop. */
  for (i = 0; i < MULTI_CHILDREN; i++) {
    pids[i] = fork();
    ASSERT_GE(pids[i], 0);
    if (pids[i] == 0)
      multi_child(fleet_test_redis_url(r), i);
  }
  for (i = 0; i < MULTI_CHILDREN; i++) {
    ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(0, WEXITSTATUS(status));
  }

  ctx_init(&c, fleet_test_redis_url(r), NULL);
  st_open(&s, &c.client, &(fleet_store_options_t){"t", 0, 0, 0});
  ids = st_list_all(&s, "runs", "agent", "shared", 25);
  for (n = 0, p = ids; *p != '\0'; p++)
    n += *p == ',';
  ASSERT_EQ(MULTI_CHILDREN * MULTI_RECORDS - 1, n);
  /* Each id once: the list is sorted by expiry, not by id, so check each
   * expected id appears exactly once. */
  for (i = 0; i < MULTI_CHILDREN * MULTI_RECORDS; i++) {
    char id[16];
    char *at;
    snprintf(id, sizeof(id), "c%d-r%02d", i / MULTI_RECORDS, i % MULTI_RECORDS);
    at = strstr(ids, id);
    ASSERT_NOT_NULL(at);
    ASSERT_NULL(strstr(at + 1, id));
    ASSERT_OK(st_count(&s, "runs", sb(id)));
    ASSERT_EQ(MULTI_EVENTS, s.n);
  }
  free(ids);
  ids = st_list_all(&s, "runs", "child", "c1", 7);
  for (n = 0, p = ids; *p != '\0'; p++)
    n += *p == ',';
  ASSERT_EQ(MULTI_RECORDS - 1, n);
  free(ids);
  st_close(&s);
  ctx_close(&c);
  fleet_test_redis_free(r);
  return 0;
}
