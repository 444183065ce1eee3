/* test_store_events.c -- the store's events lists on both adapters: append
 * (one or many, binary), read with offset and limit, count, the cap, and
 * their life with the record. */
#include "core/client.h"
#include "test_store_ctx.h"

static void open_events(client_ctx_t *c, st_t *s, fleet_test_backend_t *b,
                        uint32_t max_events) {
  fleet_store_options_t so;

  ctx_init(c, b->url, NULL);
  fleet_store_options_init(&so);
  so.prefix = "t";
  so.max_events = max_events;
  st_open(s, &c->client, &so);
}

static void on_orphan(void *arg, int status, const fleet__reply_t *r) {
  ASSERT_OK(status);
  ASSERT_EQ(FLEET__REPLY_INT, r->type);
  ASSERT_EQ(1, r->integer);
  *(int *)arg = 1;
}

CONFORMANCE_IMPL(store_events) {
  static const char bin[] = {'b', '\0', 'n'};
  fleet_bytes_t batch[3] = {{bin, sizeof(bin)}, {NULL, 0}, {"e4", 2}};
  fleet_bytes_t e1 = {"e1", 2};
  client_ctx_t c;
  st_t s;

  open_events(&c, &s, b, 0);
  /* No record, no events: nothing is created. */
  ASSERT_ERR(FLEET_ENOTFOUND, st_append(&s, "runs", sb("r1"), &e1, 1));
  ASSERT_ERR(FLEET_ENOTFOUND, st_exists(&s, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_count(&s, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_read(&s, "runs", sb("r1"), 0, 10));

  ASSERT_OK(st_put(&s, "runs", sb("r1"), sb("v"), NULL));
  ASSERT_OK(st_count(&s, "runs", sb("r1")));
  ASSERT_EQ(0, s.n);
  ASSERT_OK(st_read(&s, "runs", sb("r1"), 0, 10));
  ASSERT_EQ(0, s.nevents);
  ASSERT_OK(st_append(&s, "runs", sb("r1"), &e1, 1));
  ASSERT_EQ(1, s.n);
  ASSERT_OK(st_append(&s, "runs", sb("r1"), batch, 3));
  ASSERT_EQ(4, s.n);
  ASSERT_OK(st_count(&s, "runs", sb("r1")));
  ASSERT_EQ(4, s.n);

  /* Oldest first, binary-safe, pages by offset and limit. */
  ASSERT_OK(st_read(&s, "runs", sb("r1"), 0, 10));
  ASSERT_EQ(4, s.nevents);
  ASSERT_MEM_EQ("e1", s.events[0].base, 2);
  ASSERT_EQ(sizeof(bin), s.events[1].len);
  ASSERT_MEM_EQ(bin, s.events[1].base, sizeof(bin));
  ASSERT_EQ(0, s.events[2].len);
  ASSERT_MEM_EQ("e4", s.events[3].base, 2);
  ASSERT_OK(st_read(&s, "runs", sb("r1"), 1, 2));
  ASSERT_EQ(2, s.nevents);
  ASSERT_EQ(sizeof(bin), s.events[0].len);
  ASSERT_EQ(0, s.events[1].len);
  ASSERT_OK(st_read(&s, "runs", sb("r1"), 3, 5));
  ASSERT_EQ(1, s.nevents);
  ASSERT_MEM_EQ("e4", s.events[0].base, 2);
  ASSERT_OK(st_read(&s, "runs", sb("r1"), 4, 5));
  ASSERT_EQ(0, s.nevents);
  ASSERT_OK(st_read(&s, "runs", sb("r1"), FLEET_STORE_OFFSET_MAX, 5));
  ASSERT_EQ(0, s.nevents);

  /* Replacing the record keeps its events; deleting it drops them, and a
   * record put again starts with none. */
  ASSERT_OK(st_put(&s, "runs", sb("r1"), sb("v2"), NULL));
  ASSERT_OK(st_count(&s, "runs", sb("r1")));
  ASSERT_EQ(4, s.n);
  ASSERT_OK(st_delete(&s, "runs", sb("r1")));
  ASSERT_ERR(FLEET_ENOTFOUND, st_count(&s, "runs", sb("r1")));
  ASSERT_OK(st_put(&s, "runs", sb("r1"), sb("v3"), NULL));
  ASSERT_OK(st_count(&s, "runs", sb("r1")));
  ASSERT_EQ(0, s.n);
  if (b->redis != NULL) {
    redisReply *r =
        fleet_test_redis_cmd(b->redis, "EXISTS %s", "{t:runs}:ev:r1");
    ASSERT_NOT_NULL(r);
    ASSERT_EQ(0, r->integer);
    freeReplyObject(r);
  }

  /* An events list left without its record (here made by unlinking the
   * record key behind the store's back) is dropped when the record is
   * created. */
  ASSERT_OK(st_put(&s, "runs", sb("orphan"), sb("v"), NULL));
  ASSERT_OK(st_append(&s, "runs", sb("orphan"), &e1, 1));
  {
    fleet_bytes_t key = sb("{t:runs}:rec:orphan");
    int done = 0;
    ASSERT_OK(fleet__backend_call(fleet__client_backend(&c.client),
                                  FLEET__OP_STORE_UNLINK, &key, 1, NULL, 0,
                                  on_orphan, &done));
    ASSERT(fleet_test_run_until(&c.loop, fleet_test_flag_set, &done,
                                fleet_test_ms(FLEET_TEST_WAIT_MS)));
  }
  ASSERT_OK(st_put(&s, "runs", sb("orphan"), sb("v"), NULL));
  ASSERT_OK(st_count(&s, "runs", sb("orphan")));
  ASSERT_EQ(0, s.n);
  st_close(&s);
  ctx_close(&c);
}

/* With max_events, an events list keeps only the newest. */
CONFORMANCE_IMPL(store_events_cap) {
  fleet_bytes_t ev[FLEET_STORE_BATCH_MAX];
  char text[FLEET_STORE_BATCH_MAX][8];
  client_ctx_t c;
  size_t i;
  st_t s;

  for (i = 0; i < FLEET_STORE_BATCH_MAX; i++) {
    ev[i].len = (size_t)snprintf(text[i], sizeof(text[i]), "e%zu", i);
    ev[i].base = text[i];
  }
  open_events(&c, &s, b, 3);
  ASSERT_OK(st_put(&s, "runs", sb("r1"), sb("v"), NULL));
  ASSERT_OK(st_append(&s, "runs", sb("r1"), ev, 2));
  ASSERT_EQ(2, s.n);
  ASSERT_OK(st_append(&s, "runs", sb("r1"), ev + 2, 3));
  ASSERT_EQ(3, s.n);
  ASSERT_OK(st_read(&s, "runs", sb("r1"), 0, 10));
  ASSERT_EQ(3, s.nevents);
  ASSERT_MEM_EQ("e2", s.events[0].base, 2);
  ASSERT_MEM_EQ("e4", s.events[2].base, 2);
  /* A whole batch larger than the cap. */
  ASSERT_OK(st_append(&s, "runs", sb("r1"), ev, FLEET_STORE_BATCH_MAX));
  ASSERT_EQ(3, s.n);
  ASSERT_OK(st_read(&s, "runs", sb("r1"), 0, 10));
  ASSERT_EQ(3, s.nevents);
  ASSERT_MEM_EQ("e997", s.events[0].base, 4);
  ASSERT_MEM_EQ("e999", s.events[2].base, 4);
  st_close(&s);

  /* Without a cap, a batch of the largest size, read back in full. */
  st_open(&s, &c.client, &(fleet_store_options_t){"t", 0, 0, 0});
  ASSERT_OK(st_put(&s, "runs", sb("r2"), sb("v"), NULL));
  ASSERT_OK(st_append(&s, "runs", sb("r2"), ev, FLEET_STORE_BATCH_MAX));
  ASSERT_EQ(FLEET_STORE_BATCH_MAX, s.n);
  ASSERT_OK(st_read(&s, "runs", sb("r2"), 0, FLEET_STORE_BATCH_MAX));
  ASSERT_EQ(FLEET_STORE_BATCH_MAX, s.nevents);
  for (i = 0; i < FLEET_STORE_BATCH_MAX; i++) {
    ASSERT_EQ(ev[i].len, s.events[i].len);
    ASSERT_MEM_EQ(ev[i].base, s.events[i].base, ev[i].len);
  }
  st_close(&s);
  ctx_close(&c);
}
