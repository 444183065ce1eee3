/* test_worker_delivery.c -- delivery to idle workers (docs/queue.md,
 * "Delivery to idle workers") on both adapters: a worker whose claim found
 * nothing is parked, and the next enqueue onto the empty queue claims the
 * job for it and publishes it on the worker's channel. Checked: a delivered
 * claim's short deadline and its first heartbeat, re-parking, the room of
 * a delivery, a delivery nobody reads (recovered at its deadline), a parked
 * worker without a subscriber (the job stays pending), a pause (it unparks
 * every worker), a stopping worker (it unparks itself; a delivery that
 * reaches it anyway is handed back), the reading of a delivery message,
 * and (on one Redis) publishing without error replies. */
#include "queue/queue_int.h"
#include "queue/worker_int.h"
#include "test_queue_util.h"

/* What a test's worker saw. */
typedef struct {
  qt_t t;
  fleet_worker_t w;
  int handled, completed, other, lost, closed;
  int hold; /* keep jobs until the test finishes them */
  fleet_job_t *held[8];
  uint64_t deadline[8], handled_at[8];
  char payload[8][16]; /* of each job handled, NUL-terminated */
} dt_t;

/* The wall clock in unix ms: the backend's clock, to a few ms (the
 * memory backend follows the wall clock; the test's redis-server runs on
 * this machine). A handler cannot ask the backend: that runs the loop. */
static uint64_t dt_wall_ms(void) {
  uv_timeval64_t tv;

  ASSERT_OK(uv_gettimeofday(&tv));
  return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

static void dt_handler(fleet_worker_t *w, fleet_job_t *job) {
  dt_t *dt = w->data;

  if (dt->handled < 8) {
    dt->deadline[dt->handled] = job->deadline_ms;
    dt->handled_at[dt->handled] = dt_wall_ms();
    dt->held[dt->handled] = job;
    ASSERT_LT(job->payload.len, sizeof(dt->payload[0]));
    memcpy(dt->payload[dt->handled], job->payload.base, job->payload.len);
    dt->payload[dt->handled][job->payload.len] = '\0';
  }
  dt->handled++;
  if (!dt->hold)
    ASSERT_OK(fleet_job_complete(job));
}

static void dt_done(fleet_worker_t *w, fleet_job_t *job,
                    fleet_job_action_t action, int status) {
  dt_t *dt = w->data;

  if (action == FLEET_JOB_COMPLETE && status == 0)
    dt->completed++;
  else
    dt->other++;
}

static void dt_lost(fleet_worker_t *w, fleet_job_t *job, int status) {
  dt_t *dt = w->data;
  dt->lost++;
}

static void dt_on_close(fleet_handle_t *w) {
  dt_t *dt = w->data;
  dt->closed++;
}

static void dt_open(dt_t *dt, fleet_test_backend_t *b, const char *name,
                    uint32_t concurrency, uint32_t claim_ttl_ms,
                    uint32_t heartbeat_ms) {
  fleet_worker_options_t o;

  memset(dt, 0, sizeof(*dt));
  fleet_worker_options_init(&o);
  o.done_cb = dt_done;
  o.lost_cb = dt_lost;
  o.poll_ms = 60000; /* nothing may depend on polling */
  o.recover_ms = 50;
  o.concurrency = concurrency;
  o.claim_ttl_ms = claim_ttl_ms;
  o.heartbeat_ms = heartbeat_ms;
  o.queue.keep_completed = 100; /* the tests read finished jobs */
  qt_open(&dt->t, b->url, name, NULL);
  dt->w.data = dt;
  ASSERT_OK(fleet_worker_init(&dt->t.c.client, &dt->w, name, &o));
}

static void dt_until(dt_t *dt, const int *counter, int want) {
  ASSERT(fleet_test_wait_count(&dt->t.c.loop, counter, want,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

/* Whether dt's worker has the reply of a claim that found its queue empty,
 * the claim that parked it: no claim in flight, no job thought pending. */
static int dt_parked_cond(void *arg) {
  dt_t *dt = arg;
  const struct fleet__worker_s *w =
      (const struct fleet__worker_s *)dt->w.internal_;

  return w->claims_in_flight == 0 && !w->maybe_pending;
}

/* After its start, lets dt's worker make its first claim, which parks it
 * (and its subscription become live): a fixed wait, then until the claim's
 * reply came, however slow the machine. */
static void dt_parked(dt_t *dt) {
  qt_sleep(&dt->t, fleet_test_ms(150));
  ASSERT(fleet_test_run_until(&dt->t.c.loop, dt_parked_cond, dt,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

static void dt_close(dt_t *dt) {
  ASSERT_OK(fleet_worker_close(&dt->w, dt_on_close));
  dt_until(dt, &dt->closed, 1);
  qt_close(&dt->t);
}

/* A subscription of the test on a channel: the messages it got. */
typedef struct {
  fleet__sub_t *sub;
  int live, messages;
  char last[512];
  size_t last_len;
} dsub_t;

static void dsub_on_message(void *arg, int status, const char *payload,
                            size_t len) {
  dsub_t *s = arg;

  if (payload == NULL) {
    s->live++;
    return;
  }
  s->messages++;
  ASSERT_LE(len, sizeof(s->last));
  memcpy(s->last, payload, len);
  s->last_len = len;
}

/* The delivery channel of worker id `wid` on queue `name` (prefix "qt"). */
static void dsub_channel(char *out, size_t cap, const char *name,
                         const char *wid) {
  ASSERT_LT((size_t)snprintf(out, cap, "{qt:%s}:jobs:w:%s", name, wid), cap);
}

static void dsub_open(dsub_t *s, qt_t *t, const char *name, const char *wid) {
  fleet__backend_t *be = fleet__client_backend(&t->c.client);
  char chan[128];

  memset(s, 0, sizeof(*s));
  dsub_channel(chan, sizeof(chan), name, wid);
  ASSERT_OK(
      be->vt->subscribe(be, chan, strlen(chan), dsub_on_message, s, &s->sub));
  ASSERT(fleet_test_wait_count(&t->c.loop, &s->live, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
}

static void dsub_close(dsub_t *s, qt_t *t) {
  fleet__backend_t *be = fleet__client_backend(&t->c.client);
  be->vt->unsubscribe(be, s->sub);
}

/* Parks worker id `wid` with `room` and a delivery TTL of `ttl_ms`, as a
 * worker's claim does: a claim of `room` jobs on the test's queue handle
 * with its park fields set, which must find the queue empty. */
static void park(qt_t *t, const char *wid, size_t room, uint32_t ttl_ms) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)t->q.internal_;
  qt_job_t jobs[1];

  ASSERT_LT(strlen(wid), sizeof(q->park_id));
  strcpy(q->park_id, wid);
  q->park_len = strlen(wid);
  q->park_ttl_ms = ttl_ms;
  ASSERT_EQ(0, qt_claim(t, room, 60000, jobs));
  q->park_len = 0;
}

static uint64_t dt_fence;

/* A parked worker gets the job an enqueue makes, claimed for it with the
 * short delivery deadline; its first heartbeat gives the claim the whole
 * claim TTL, so a job held past that deadline still completes; its
 * completion parks it again, so the next job is delivered too. */
CONFORMANCE_IMPL(worker_delivery) {
  char id[FLEET_JOB_ID_MAX + 1];
  fleet_job_info_t info;
  uint64_t t0;
  dt_t dt;

  /* Claim TTL 60 s, heartbeat 200 ms: a delivery lasts 600 ms (three
   * heartbeats) until its first heartbeat, at 200 ms. */
  dt_open(&dt, b, "dlv", 4, 60000, 200);
  dt.hold = 1;
  ASSERT_OK(fleet_worker_start(&dt.w, dt_handler));
  dt_parked(&dt); /* its first claim, which parks it */
  t0 = qt_now_ms(&dt.t);
  qt_add(&dt.t, "t", "x", id);
  dt_until(&dt, &dt.handled, 1);
  ASSERT_STR_EQ(id, dt.held[0]->id);
  /* Delivered: the deadline is the enqueue's time + 600 ms, not + 60 s. */
  ASSERT_UGE(dt.deadline[0], t0 + 600);
  ASSERT_ULE(dt.deadline[0], dt.handled_at[0] + 600 + 50);
  dt_fence = dt.held[0]->token;
  /* Held past the delivery deadline (and a recovery every 50 ms): the
   * heartbeat kept it. */
  qt_sleep(&dt.t, 1500);
  ASSERT_EQ(0, dt.lost);
  ASSERT_OK(qt_counts(&dt.t));
  ASSERT_UEQ(1, dt.t.counts.running);
  ASSERT_OK(fleet_job_complete(dt.held[0]));
  dt_until(&dt, &dt.completed, 1);
  ASSERT_OK(qt_get(&dt.t, id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(1, info.attempts);
  /* Parked again by the completion's call: the next job is delivered. */
  qt_sleep(&dt.t, 100);
  t0 = qt_now_ms(&dt.t);
  qt_add(&dt.t, "t", "y", NULL);
  dt_until(&dt, &dt.handled, 2);
  ASSERT_ULE(dt.deadline[1], dt.handled_at[1] + 600 + 50);
  ASSERT_UGT(dt.held[1]->token, dt_fence);
  ASSERT_OK(fleet_job_complete(dt.held[1]));
  dt_until(&dt, &dt.completed, 2);
  ASSERT_EQ(0, dt.other);
  ASSERT_EQ(0, dt.lost);
  dt_close(&dt);
}

/* A delivery takes no more jobs than the worker's room: of 6 jobs enqueued
 * at once onto an empty queue, a parked worker of concurrency 2 gets 2;
 * the rest are pending, and claimed as it finishes. Never more than 2 run
 * at once. */
CONFORMANCE_IMPL(worker_delivery_room) {
  fleet_job_spec_t specs[6];
  dt_t dt;
  int i;

  dt_open(&dt, b, "room", 2, 60000, 200);
  dt.hold = 1;
  ASSERT_OK(fleet_worker_start(&dt.w, dt_handler));
  dt_parked(&dt);
  for (i = 0; i < 6; i++)
    fleet_job_spec_init(&specs[i], "t", "x", 1);
  ASSERT_OK(qt_enqueue(&dt.t, specs, 6, NULL, NULL));
  dt_until(&dt, &dt.handled, 2);
  qt_sleep(&dt.t, 100);
  ASSERT_EQ(2, dt.handled);
  ASSERT_OK(qt_counts(&dt.t));
  ASSERT_UEQ(4, dt.t.counts.pending);
  ASSERT_UEQ(2, dt.t.counts.running);
  for (i = 0; i < 6; i++) {
    dt_until(&dt, &dt.handled, i + 1);
    ASSERT_LE(dt.handled - dt.completed, 2);
    ASSERT_OK(fleet_job_complete(dt.held[i]));
    dt_until(&dt, &dt.completed, i + 1);
  }
  ASSERT_EQ(6, dt.completed);
  ASSERT_EQ(0, dt.other);
  ASSERT_OK(qt_counts(&dt.t));
  ASSERT_UEQ(0, dt.t.counts.pending + dt.t.counts.running);
  dt_close(&dt);
}

static void dt_on_stop(fleet_handle_t *w, int status, void *user_data) {
  int *stopped = user_data;
  ASSERT_OK(status);
  (*stopped)++;
}

/* A stopping worker unparks itself: an enqueue during the stop leaves its
 * job pending. A delivery that still reaches it (here: the test parks it
 * again) is handed back, never given to the handler, and runs once the
 * worker starts again. */
CONFORMANCE_IMPL(worker_delivery_stopping) {
  struct fleet__queue_s *wq;
  char wid[24];
  int stopped = 0;
  dsub_t s;
  dt_t dt;

  dt_open(&dt, b, "dstop", 4, 60000, 200);
  dt.hold = 1;
  ASSERT_OK(fleet_worker_start(&dt.w, dt_handler));
  dt_parked(&dt);
  qt_add(&dt.t, "t", "held", NULL); /* delivered: keeps the stop waiting */
  dt_until(&dt, &dt.handled, 1);
  wq = (struct fleet__queue_s *)((struct fleet__worker_s *)dt.w.internal_)
           ->queue.internal_;
  ASSERT_EQ(16, (int)strlen(wq->park_id));
  strcpy(wid, wq->park_id);
  dsub_open(&s, &dt.t, "dstop", wid); /* sees what is delivered to it */
  ASSERT_OK(fleet_worker_stop(&dt.w, 60000, dt_on_stop, &stopped));
  qt_sleep(&dt.t, 100);
  qt_add(&dt.t, "t", "a", NULL);
  qt_sleep(&dt.t, 100);
  ASSERT_EQ(0, s.messages); /* unparked: nothing delivered */
  ASSERT_EQ(1, dt.handled);
  ASSERT_OK(qt_counts(&dt.t));
  ASSERT_UEQ(1, dt.t.counts.pending);
  ASSERT_UEQ(1, dt.t.counts.running);
  /* Parked again behind its back, with the pending job claimed away so
   * that the queue is empty: the next job is delivered to it, and handed
   * back. */
  {
    qt_job_t jobs[1];
    fleet_claim_t c;
    int res[1];
    ASSERT_EQ(1, qt_claim(&dt.t, 1, 60000, jobs));
    park(&dt.t, wid, 5, 1000);
    c = qt_claim_of(&jobs[0]);
    ASSERT_OK(qt_complete(&dt.t, &c, 1, res));
  }
  qt_add(&dt.t, "t", "b", NULL);
  qt_sleep(&dt.t, 200);
  ASSERT_EQ(1, s.messages); /* delivered... */
  ASSERT_EQ(1, dt.handled); /* ...and not run */
  ASSERT_OK(qt_counts(&dt.t));
  ASSERT_UEQ(1, dt.t.counts.pending); /* released: pending again */
  ASSERT_UEQ(1, dt.t.counts.running); /* the held job */
  ASSERT_EQ(0, stopped);
  ASSERT_OK(fleet_job_complete(dt.held[0]));
  dt_until(&dt, &stopped, 1);
  /* Started again, it runs the handed-back job. */
  dt.hold = 0;
  ASSERT_OK(fleet_worker_start(&dt.w, dt_handler));
  dt_until(&dt, &dt.handled, 2);
  dt_until(&dt, &dt.completed, 2);
  ASSERT_STR_EQ("b", dt.payload[1]);
  ASSERT_OK(qt_counts(&dt.t));
  ASSERT_UEQ(0, dt.t.counts.pending + dt.t.counts.running);
  ASSERT_EQ(0, dt.other);
  dsub_close(&s, &dt.t);
  dt_close(&dt);
}

/* A delivery whose worker never takes it (it got the message and died):
 * the job is claimed for that worker until the delivery deadline, then
 * recovered like any expired claim, and another worker runs it. */
CONFORMANCE_IMPL(worker_delivery_lost) {
  char id[FLEET_JOB_ID_MAX + 1];
  fleet_job_info_t info;
  fleet_claim_info_t ci;
  fleet_job_t *jobs;
  size_t n;
  dsub_t s;
  dt_t dt;

  dt_open(&dt, b, "dlost", 2, 60000, 200);
  dsub_open(&s, &dt.t, "dlost", "ghost");
  park(&dt.t, "ghost", 5, 300);
  qt_add(&dt.t, "t", "x", id);
  ASSERT(fleet_test_wait_count(&dt.t.c.loop, &s.messages, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(qt_counts(&dt.t));
  ASSERT_UEQ(0, dt.t.counts.pending);
  ASSERT_UEQ(1, dt.t.counts.running);
  /* The message is the job, claimed for 300 ms. */
  ASSERT_OK(
      fleet__queue_delivery_read(&dt.t.q, s.last, s.last_len, &ci, &jobs, &n));
  ASSERT_EQ(1, (int)n);
  ASSERT_STR_EQ(id, jobs[0].id);
  ASSERT_EQ(1, (int)jobs[0].attempts);
  ASSERT_UEQ(1, jobs[0].payload.len);
  ASSERT_MEM_EQ("x", jobs[0].payload.base, 1);
  ASSERT_UEQ(300, ci.deadline_ms - ci.now_ms);
  ASSERT_UGT(jobs[0].token, 0);
  /* Nobody takes it: recovered after 300 ms, run by the worker. */
  ASSERT_OK(fleet_worker_start(&dt.w, dt_handler));
  dt_until(&dt, &dt.completed, 1);
  ASSERT_OK(qt_get(&dt.t, id, &info, NULL, 0, NULL, 0));
  ASSERT_EQ(2, info.attempts); /* the lost delivery counted */
  ASSERT_EQ(1, s.messages);
  dsub_close(&s, &dt.t);
  dt_close(&dt);
}

static void dt_on_paused(fleet_queue_t *q, int status, int paused,
                         void *user_data) {
  ASSERT_OK(status);
}

/* A parked worker nobody listens for (its process went, its subscription
 * with it): the enqueue's delivery reaches no one, so the job stays
 * pending and the worker is unparked; a later subscriber on its channel
 * gets nothing. A pause unparks every worker too. */
CONFORMANCE_IMPL(worker_delivery_unheard) {
  qt_job_t jobs[4];
  dsub_t s;
  qt_t t;

  qt_open(&t, b->url, "unheard", NULL);
  park(&t, "gone", 5, 1000);
  qt_add(&t, "t", "x", NULL);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.pending);
  ASSERT_UEQ(0, t.counts.running);
  dsub_open(&s, &t, "unheard", "gone");
  qt_add(&t, "t", "y", NULL); /* (onto a non-empty queue anyway) */
  ASSERT_EQ(2, qt_claim(&t, 4, 60000, jobs));
  qt_add(&t, "t", "z", NULL); /* onto the empty queue: "gone" is unparked */
  qt_sleep(&t, 100);
  ASSERT_EQ(0, s.messages);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.pending);
  ASSERT_EQ(1, qt_claim(&t, 4, 60000, jobs));
  /* Parked, listening, then the queue paused: no delivery. */
  park(&t, "gone", 5, 1000);
  ASSERT_OK(fleet_queue_pause(&t.q, dt_on_paused, &t));
  qt_sleep(&t, 50);
  qt_add(&t, "t", "p", NULL);
  qt_sleep(&t, 100);
  ASSERT_EQ(0, s.messages);
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(1, t.counts.pending);
  /* And while listening and parked, it is delivered. */
  ASSERT_OK(fleet_queue_resume(&t.q, dt_on_paused, &t));
  qt_sleep(&t, 50);
  ASSERT_EQ(1, qt_claim(&t, 4, 60000, jobs));
  park(&t, "gone", 5, 1000);
  qt_add(&t, "t", "q", NULL);
  ASSERT(fleet_test_wait_count(&t.c.loop, &s.messages, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(qt_counts(&t));
  ASSERT_UEQ(0, t.counts.pending);
  ASSERT_UEQ(5, t.counts.running); /* the 4 the test claimed, and it */
  dsub_close(&s, &t);
  qt_close(&t);
}

/* Appends `n` bytes to a message being built. */
static void msg_put(char *buf, size_t *len, const char *p, size_t n) {
  ASSERT_LE(*len + n, 256);
  memcpy(buf + *len, p, n);
  *len += n;
}

/* Appends one job, "<#id>\0<id><#record>\0<record><token>\0". */
static void msg_job(char *buf, size_t *len, const char *id, const char *rec,
                    size_t rec_len, const char *token) {
  char num[24];

  snprintf(num, sizeof(num), "%zu", strlen(id));
  msg_put(buf, len, num, strlen(num) + 1);
  msg_put(buf, len, id, strlen(id));
  snprintf(num, sizeof(num), "%zu", rec_len);
  msg_put(buf, len, num, strlen(num) + 1);
  msg_put(buf, len, rec, rec_len);
  msg_put(buf, len, token, strlen(token) + 1);
}

/* The reading of a delivery message: what a well-formed one gives, and
 * FLEET_EPROTO for every malformed one. */
TEST_IMPL(worker_delivery_message) {
  /* Records: "<attempts>\0<max>\0<created>\0<type>\0<payload>". */
  static const char rec_a[] = "2\0"
                              "4\0"
                              "7\0"
                              "t\0"
                              "p";
  static const char rec_b[] = "\0\0"
                              "1\0"
                              "u\0";
  static const char rec_3parts[] = "\0\0"
                                   "1\0"
                                   "u";
  static const char rec_notype[] = "\0\0"
                                   "1\0"
                                   "\0p";
  char buf[256];
  size_t len, i, n;
  fleet_claim_info_t ci;
  fleet_job_t *jobs;
  qt_t t;
  struct {
    const char *head; /* "<now>\0<deadline>\0", with its length */
    size_t head_len;
    const char *rec, *token;
    size_t rec_len;
    size_t cut; /* bytes cut off the end */
  } bad[] = {
      {"5\0"
       "9\0",
       4, NULL, NULL, 0, 0}, /* no job */
      {"5\0"
       "9",
       3, NULL, NULL, 0, 0}, /* deadline unended */
      {"x\0"
       "9\0",
       4, rec_a, "3", 9, 0}, /* now not a number */
      {"5\0"
       "9\0",
       4, rec_a, "x", 9, 0}, /* token not a number */
      {"5\0"
       "9\0",
       4, rec_a, "0", 9, 0}, /* token 0 */
      {"5\0"
       "9\0",
       4, rec_a, "3", 9, 1}, /* token unended */
      {"5\0"
       "9\0",
       4, rec_a, "3", 9, 3}, /* record cut short */
      {"5\0"
       "9\0",
       4, rec_3parts, "3", 5, 0}, /* 3 separators */
      {"5\0"
       "9\0",
       4, rec_notype, "3", 6, 0}, /* empty type */
  };

  qt_open(&t, "memory://", "msg", NULL);
  len = 0;
  msg_put(buf, &len,
          "5\0"
          "9\0",
          4);
  msg_job(buf, &len, "a", rec_a, sizeof(rec_a) - 1, "3");
  msg_job(buf, &len, "bc", rec_b, sizeof(rec_b) - 1, "4");
  ASSERT_OK(fleet__queue_delivery_read(&t.q, buf, len, &ci, &jobs, &n));
  ASSERT_EQ(2, (int)n);
  ASSERT_UEQ(5, ci.now_ms);
  ASSERT_UEQ(9, ci.deadline_ms);
  ASSERT_STR_EQ("a", jobs[0].id);
  ASSERT_EQ(3, (int)jobs[0].attempts); /* the record's 2, + 1 */
  ASSERT_EQ(4, (int)jobs[0].max_attempts);
  ASSERT_STR_EQ("t", jobs[0].type);
  ASSERT_UEQ(1, jobs[0].payload.len);
  ASSERT_MEM_EQ("p", jobs[0].payload.base, 1);
  ASSERT_UEQ(3, jobs[0].token);
  ASSERT_STR_EQ("bc", jobs[1].id);
  ASSERT_EQ(1, (int)jobs[1].attempts);
  ASSERT_EQ(3, (int)jobs[1].max_attempts);
  ASSERT_STR_EQ("u", jobs[1].type);
  ASSERT_UEQ(0, jobs[1].payload.len);
  ASSERT_UEQ(4, jobs[1].token);
  ASSERT_ERR(FLEET_EPROTO,
             fleet__queue_delivery_read(&t.q, "", 0, &ci, &jobs, &n));
  /* A delivery's tokens follow one another (lib/queue_add.lua): a gap is
   * refused. */
  len = 0;
  msg_put(buf, &len, "5\0009\0", 4);
  msg_job(buf, &len, "a", rec_a, sizeof(rec_a) - 1, "3");
  msg_job(buf, &len, "bc", rec_b, sizeof(rec_b) - 1, "5");
  ASSERT_ERR(FLEET_EPROTO,
             fleet__queue_delivery_read(&t.q, buf, len, &ci, &jobs, &n));
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    len = 0;
    msg_put(buf, &len, bad[i].head, bad[i].head_len);
    if (bad[i].rec != NULL)
      msg_job(buf, &len, "a", bad[i].rec, bad[i].rec_len, bad[i].token);
    len -= bad[i].cut;
    ASSERT_ERR(FLEET_EPROTO,
               fleet__queue_delivery_read(&t.q, buf, len, &ci, &jobs, &n));
  }
  qt_close(&t);
  return 0;
}

/* The value of `field` ("name:value" lines) in an INFO reply of `r`: the
 * number it starts with (0 for "calls=...", as in commandstats), or -1
 * when the reply has no such field. */
static long long info_field(fleet_test_redis_t *r, const char *section,
                            const char *field) {
  redisReply *reply = fleet_test_redis_cmd(r, "INFO %s", section);
  const char *at;
  long long v = -1;

  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(REDIS_REPLY_STRING, reply->type);
  at = strstr(reply->str, field);
  if (at != NULL && at[strlen(field)] == ':')
    v = strtoll(at + strlen(field) + 1, NULL, 10);
  freeReplyObject(reply);
  return v;
}

/* On one Redis, the scripts publish (a delivery, a wake-up, a pause) with
 * PUBLISH without asking whether this is a cluster: the library's copies
 * are fixed at build time (lib/wake.lua). Asking (CLUSTER MYID) was an
 * error reply per publishing call, which an operator sees grow in Redis's
 * error statistics. */
TEST_IMPL(worker_delivery_no_error_replies) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  fleet_test_backend_t b;
  long long errors0;
  dt_t dt;
  int i;

  memset(&b, 0, sizeof(b));
  snprintf(b.url, sizeof(b.url), "%s", fleet_test_redis_url(r));
  b.redis = r;
  dt_open(&dt, &b, "noerr", 2, 60000, 200);
  ASSERT_OK(fleet_worker_start(&dt.w, dt_handler));
  dt_parked(&dt);
  errors0 = info_field(r, "stats", "total_error_replies");
  ASSERT_GE(errors0, 0);
  for (i = 0; i < 3; i++) {
    qt_add(&dt.t, "t", "x", NULL);
    dt_until(&dt, &dt.completed, i + 1);
    qt_sleep(&dt.t, 50); /* parked again by the completion */
  }
  /* Paused (which unparks), a job added, resumed (which wakes). */
  ASSERT_OK(fleet_queue_pause(&dt.t.q, dt_on_paused, NULL));
  qt_sleep(&dt.t, 50);
  qt_add(&dt.t, "t", "x", NULL);
  qt_sleep(&dt.t, 50);
  ASSERT_EQ(3, dt.completed);
  ASSERT_OK(fleet_queue_resume(&dt.t.q, dt_on_paused, NULL));
  dt_until(&dt, &dt.completed, 4);
  ASSERT_EQ(0, dt.other);
  /* The jobs went by delivery and wake-up: the scripts did publish. */
  ASSERT_NE(-1, info_field(r, "commandstats", "cmdstat_publish"));
  ASSERT_EQ(-1, info_field(r, "commandstats", "cmdstat_cluster|myid"));
  ASSERT_EQ(errors0, info_field(r, "stats", "total_error_replies"));
  dt_close(&dt);
  fleet_test_redis_free(r);
  return 0;
}
