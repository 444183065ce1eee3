/* test_errors.c -- errors that say what happened: the codes of the server's
 * refusals, the error detail, fail-fast causes and the reply limit, against
 * real redis-servers and a fake one on loopback. */
#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client_ctx.h"

/* ------------------------------------------------------------------------ */
/* A try-once lock, with the detail as its callback saw it                  */

typedef struct {
  int done;
  int status;
  char detail[300];
} errors_try_t;

static void errors_on_acquire(fleet_lock_t *lock, int status, uint64_t token,
                              void *arg) {
  errors_try_t *r = arg;
  fleet_client_t *client = lock->data;

  r->done = 1;
  r->status = status;
  snprintf(r->detail, sizeof(r->detail), "%s", fleet_client_last_error(client));
}

static int errors_lock_closed;

static void errors_on_lock_closed(fleet_handle_t *lock) {
  errors_lock_closed = 1;
}

/* Tries once to take the lock "errors" and returns the status; the detail
 * read inside the callback goes to `detail`. */
static int errors_try_lock(client_ctx_t *t, char *detail, size_t size) {
  fleet_lock_t lock;
  errors_try_t r;

  memset(&r, 0, sizeof(r));
  ASSERT_OK(fleet_lock_init(&t->client, &lock, "errors", "me", 10000, NULL));
  lock.data = &t->client;
  ASSERT_OK(fleet_lock_acquire(&lock, 0, errors_on_acquire, &r));
  ASSERT(fleet_test_wait_count(&t->loop, &r.done, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  errors_lock_closed = 0;
  ASSERT_OK(fleet_lock_close(&lock, errors_on_lock_closed));
  ASSERT(fleet_test_wait_count(&t->loop, &errors_lock_closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  snprintf(detail, size, "%s", r.detail);
  return r.status;
}

/* ------------------------------------------------------------------------ */
/* The server's refusals                                                    */

/* An ACL user without access to fleet's keys: FLEET_ENOPERM with the
 * server's NOPERM text, where it used to be FLEET_EAUTH. The detail is ""
 * after a success and is replaced by each completion. */
TEST_IMPL(errors_noperm_detail) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  client_ctx_t t;
  char url[128], detail[300];

  fleet_test_redis_ok(r, "ACL SETUSER bob on >pw ~other:* &* +@all");
  snprintf(url, sizeof(url), "redis://bob:pw@127.0.0.1:%d",
           fleet_test_redis_port(r));
  ctx_init(&t, url, NULL);
  ASSERT_STR_EQ("", fleet_client_last_error(&t.client));
  ASSERT_OK(ctx_ping(&t));
  ASSERT_STR_EQ("", fleet_client_last_error(&t.client));
  ASSERT_ERR(FLEET_ENOPERM, errors_try_lock(&t, detail, sizeof(detail)));
  ASSERT_NOT_NULL(strstr(detail, "NOPERM"));
  ASSERT_NOT_NULL(strstr(fleet_client_last_error(&t.client), "NOPERM"));
  ASSERT_OK(ctx_ping(&t));
  ASSERT_STR_EQ("", fleet_client_last_error(&t.client));
  ctx_close(&t);
  ASSERT_STR_EQ("", fleet_client_last_error(&t.client));
  fleet_test_redis_free(r);
  return 0;
}

/* The ACL denies what a script does, not the call itself: the user may
 * run EVALSHA on the lock's tag, but not touch the keys the script builds
 * from it, or not run a command the script calls. Redis 7.0 words both
 * as "ERR The user executing the script can't ...": FLEET_ENOPERM (it
 * was FLEET_EBACKEND), with the server's text as the detail. */
TEST_IMPL(errors_noperm_script) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  redisReply *reply;
  client_ctx_t t;
  char url[128], detail[300];

  /* The tag is a key the user may name; {fleet:errors}:fence is not. */
  fleet_test_redis_ok(r, "ACL SETUSER carol on >pw ~{fleet:errors} &* +@all");
  snprintf(url, sizeof(url), "redis://carol:pw@127.0.0.1:%d",
           fleet_test_redis_port(r));
  ctx_init(&t, url, NULL);
  ASSERT_OK(ctx_ping(&t));
  ASSERT_ERR(FLEET_ENOPERM, errors_try_lock(&t, detail, sizeof(detail)));
  ASSERT_NOT_NULL(strstr(detail, "can't access at least one of the keys"));

  /* Every key, but not INCR, which the script calls. */
  fleet_test_redis_ok(r, "ACL SETUSER carol resetkeys ~{fleet:* -incr");
  ASSERT_ERR(FLEET_ENOPERM, errors_try_lock(&t, detail, sizeof(detail)));
  ASSERT_NOT_NULL(strstr(detail, "can't run this command"));

  /* Nothing was written, and with the rights back the lock is taken. */
  reply = fleet_test_redis_cmd(r, "EXISTS {fleet:errors}:lock "
                                  "{fleet:errors}:fence");
  ASSERT_NOT_NULL(reply);
  ASSERT_EQ(REDIS_REPLY_INTEGER, reply->type);
  ASSERT_EQ(0, reply->integer);
  freeReplyObject(reply);
  fleet_test_redis_ok(r, "ACL SETUSER carol +incr");
  ASSERT_OK(errors_try_lock(&t, detail, sizeof(detail)));
  ctx_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* maxmemory reached under noeviction: FLEET_EOOM, not FLEET_EBACKEND. */
TEST_IMPL(errors_oom) {
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(NULL);
  client_ctx_t t;
  char detail[300];

  ctx_init(&t, fleet_test_redis_url(r), NULL);
  ASSERT_OK(ctx_ping(&t));
  fleet_test_redis_ok(r, "CONFIG SET maxmemory-policy noeviction");
  fleet_test_redis_ok(r, "CONFIG SET maxmemory 1");
  ASSERT_ERR(FLEET_EOOM, errors_try_lock(&t, detail, sizeof(detail)));
  ASSERT_NOT_NULL(strstr(detail, "OOM"));
  fleet_test_redis_ok(r, "CONFIG SET maxmemory 0");
  ASSERT_OK(errors_try_lock(&t, detail, sizeof(detail)));
  ctx_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* A replica (of a primary that is not there) refuses writes:
 * FLEET_EREADONLY, not FLEET_EUNAVAILABLE. */
TEST_IMPL(errors_readonly) {
  char port[16];
  const char *args[] = {"--replicaof", "127.0.0.1", port, NULL};
  fleet_test_redis_t *r;
  client_ctx_t t;
  char detail[300];

  snprintf(port, sizeof(port), "%d", fleet_test_free_port());
  r = fleet_test_redis_start_or_skip(args);
  ctx_init(&t, fleet_test_redis_url(r), NULL);
  ASSERT_OK(ctx_ping(&t));
  ASSERT_ERR(FLEET_EREADONLY, errors_try_lock(&t, detail, sizeof(detail)));
  ASSERT_NOT_NULL(strstr(detail, "READONLY"));
  ctx_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* Polls the server with PING until it answers BUSY (`busy` 1) or not
 * (`busy` 0); the runner's timeout bounds a hang. */
static void errors_wait_busy(fleet_test_redis_t *r, int busy) {
  for (;;) {
    redisReply *reply = fleet_test_redis_cmd(r, "PING");
    int is_busy;

    ASSERT_NOT_NULL(reply);
    is_busy = reply->type == REDIS_REPLY_ERROR &&
              strncmp(reply->str, "BUSY ", 5) == 0;
    freeReplyObject(reply);
    if (is_busy == busy)
      return;
    usleep(10 * 1000);
  }
}

/* A script past busy-reply-threshold on another connection:
 * FLEET_ESCRIPTBUSY, not FLEET_EUNAVAILABLE; SCRIPT KILL ends it. */
TEST_IMPL(errors_script_busy) {
  static const char *const args[] = {"--busy-reply-threshold", "50", NULL};
  static const char eval[] = "*3\r\n$4\r\nEVAL\r\n$16\r\nwhile 1 do end\r\n"
                             "\r\n$1\r\n0\r\n";
  fleet_test_redis_t *r = fleet_test_redis_start_or_skip(args);
  struct sockaddr_in sa;
  client_ctx_t t;
  char detail[300];
  int fd;

  ctx_init(&t, fleet_test_redis_url(r), NULL);
  ASSERT_OK(ctx_ping(&t));
  fleet_test_redis_ok(r, "PING"); /* opens the fixture's own connection */
  fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  memset(&sa, 0, sizeof(sa));
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons((uint16_t)fleet_test_redis_port(r));
  ASSERT_OK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
  ASSERT_EQ((ssize_t)sizeof(eval) - 1, write(fd, eval, sizeof(eval) - 1));
  errors_wait_busy(r, 1);
  ASSERT_ERR(FLEET_ESCRIPTBUSY, errors_try_lock(&t, detail, sizeof(detail)));
  ASSERT_NOT_NULL(strstr(detail, "BUSY"));
  fleet_test_redis_ok(r, "SCRIPT KILL");
  close(fd);
  /* The script stops at its next hook, a moment after the reply. */
  errors_wait_busy(r, 0);
  ASSERT_OK(errors_try_lock(&t, detail, sizeof(detail)));
  ctx_close(&t);
  fleet_test_redis_free(r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Connection causes                                                        */

/* Nothing listens: the state callback's detail and the detail of a command
 * that waited in vain both name the refused connect. */
TEST_IMPL(errors_refused_detail) {
  fleet_client_options_t o;
  client_ctx_t t;
  char url[64], want[64];

  snprintf(want, sizeof(want), "connect 127.0.0.1:%d: connection refused",
           fleet_test_free_port());
  snprintf(url, sizeof(url), "redis://%s", want + 8);
  *strrchr(url, ':') = '\0';
  fleet_client_options_init(&o);
  o.command_timeout_ms = 300;
  o.reconnect_initial_ms = 20;
  ctx_init(&t, url, &o);
  ASSERT(ctx_wait_state(&t, FLEET_CLIENT_RECONNECTING, 2500));
  ASSERT_STR_EQ(want, fleet_client_last_error(&t.client));
  ASSERT_ERR(FLEET_EUNAVAILABLE, ctx_ping(&t));
  /* As the callback saw it: a reconnect attempt failing after the
   * callback, in the same loop iteration, rewrites the client's detail. */
  ASSERT_NOT_NULL(strstr(t.last_ping_detail, want));
  ASSERT_NOT_NULL(strstr(t.last_ping_detail, "not connected within"));
  ctx_close(&t);
  return 0;
}

/* A fake server on loopback. */
typedef enum {
  FAKE_CLOSE,   /* closes each connection at once */
  FAKE_GARBAGE, /* answers the first bytes with text that is not RESP */
  FAKE_BULK,    /* announces a 1 GB string, then sends bytes of it */
  FAKE_ARRAY    /* announces a huge array, then sends 1 KiB strings */
} fake_mode_t;

#define FAKE_CHUNK (64 * 1024)
#define FAKE_MAX_CONNS 64

typedef struct fake_s fake_t;

typedef struct {
  uv_tcp_t tcp;
  uv_timer_t timer;
  fake_t *fake;
  int open; /* handles still to close: tcp and timer */
  int started;
} fake_conn_t;

struct fake_s {
  uv_tcp_t server;
  fake_mode_t mode;
  int port;
  fake_conn_t *conns[FAKE_MAX_CONNS];
  size_t nconns;
  uint64_t sent;
};

static char fake_chunk[FAKE_CHUNK];
static char fake_rbuf[4096];

static void fake_on_closed(uv_handle_t *h) {
  fake_conn_t *fc = h->data;
  fc->open--; /* fake_close frees it */
}

static void fake_conn_close(fake_conn_t *fc) {
  if (!uv_is_closing((uv_handle_t *)&fc->tcp)) {
    uv_close((uv_handle_t *)&fc->tcp, fake_on_closed);
    uv_close((uv_handle_t *)&fc->timer, fake_on_closed);
  }
}

static void fake_on_write(uv_write_t *w, int status) {
  free(w);
}

static void fake_write(fake_conn_t *fc, const char *p, size_t len) {
  uv_write_t *w = malloc(sizeof(*w));
  uv_buf_t b = uv_buf_init((char *)p, (unsigned)len);

  ASSERT_NOT_NULL(w);
  if (uv_write(w, (uv_stream_t *)&fc->tcp, &b, 1, fake_on_write) != 0)
    free(w);
  else
    fc->fake->sent += len;
}

/* Keeps a few chunks queued: the test's own memory must stay flat. */
static void fake_on_timer(uv_timer_t *timer) {
  fake_conn_t *fc = timer->data;

  if (uv_stream_get_write_queue_size((uv_stream_t *)&fc->tcp) < 4 * FAKE_CHUNK)
    fake_write(fc, fake_chunk, sizeof(fake_chunk));
}

static void fake_on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  buf->base = fake_rbuf;
  buf->len = sizeof(fake_rbuf);
}

static void fake_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  fake_conn_t *fc = s->data;
  static const char garbage[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
  static const char bulk[] = "$1000000000\r\n";
  static const char array[] = "*1000000\r\n";

  if (nread < 0) {
    fake_conn_close(fc);
    return;
  }
  if (nread == 0 || fc->started)
    return;
  fc->started = 1;
  switch (fc->fake->mode) {
    case FAKE_GARBAGE:
      fake_write(fc, garbage, sizeof(garbage) - 1);
      break;
    case FAKE_BULK:
      fake_write(fc, bulk, sizeof(bulk) - 1);
      uv_timer_start(&fc->timer, fake_on_timer, 1, 1);
      break;
    case FAKE_ARRAY:
      fake_write(fc, array, sizeof(array) - 1);
      uv_timer_start(&fc->timer, fake_on_timer, 1, 1);
      break;
    case FAKE_CLOSE:
      break;
  }
}

static void fake_on_connection(uv_stream_t *server, int status) {
  fake_t *f = server->data;
  fake_conn_t *fc;

  ASSERT_OK(status);
  ASSERT_LT(f->nconns, FAKE_MAX_CONNS);
  fc = calloc(1, sizeof(*fc));
  ASSERT_NOT_NULL(fc);
  fc->fake = f;
  fc->open = 2;
  f->conns[f->nconns++] = fc;
  ASSERT_OK(uv_tcp_init(server->loop, &fc->tcp));
  ASSERT_OK(uv_timer_init(server->loop, &fc->timer));
  fc->tcp.data = fc->timer.data = fc;
  ASSERT_OK(uv_accept(server, (uv_stream_t *)&fc->tcp));
  if (f->mode == FAKE_CLOSE)
    fake_conn_close(fc);
  else
    ASSERT_OK(
        uv_read_start((uv_stream_t *)&fc->tcp, fake_on_alloc, fake_on_read));
}

static void fake_start(fake_t *f, uv_loop_t *loop, fake_mode_t mode) {
  struct sockaddr_in sa;
  int len = sizeof(sa);
  size_t i;

  memset(f, 0, sizeof(*f));
  f->mode = mode;
  if (mode == FAKE_ARRAY) {
    /* "$1015\r\n" + 1015 bytes + "\r\n": 1 KiB per element. */
    for (i = 0; i + 1024 <= FAKE_CHUNK; i += 1024) {
      memcpy(fake_chunk + i, "$1015\r\n", 7);
      memset(fake_chunk + i + 7, 'v', 1015);
      memcpy(fake_chunk + i + 1022, "\r\n", 2);
    }
  } else {
    memset(fake_chunk, 'v', sizeof(fake_chunk));
  }
  ASSERT_OK(uv_tcp_init(loop, &f->server));
  f->server.data = f;
  ASSERT_OK(uv_ip4_addr("127.0.0.1", 0, &sa));
  ASSERT_OK(uv_tcp_bind(&f->server, (struct sockaddr *)&sa, 0));
  ASSERT_OK(uv_tcp_getsockname(&f->server, (struct sockaddr *)&sa, &len));
  f->port = ntohs(sa.sin_port);
  ASSERT_OK(uv_listen((uv_stream_t *)&f->server, 16, fake_on_connection));
}

/* Closes the server and its connections and runs the loop until they are
 * closed. */
static void fake_close(fake_t *f, uv_loop_t *loop) {
  size_t i;

  uv_close((uv_handle_t *)&f->server, NULL);
  for (i = 0; i < f->nconns; i++)
    fake_conn_close(f->conns[i]);
  uv_run(loop, UV_RUN_NOWAIT);
  for (i = 0; i < f->nconns; i++) {
    while (f->conns[i]->open > 0)
      uv_run(loop, UV_RUN_ONCE);
    free(f->conns[i]);
  }
}

static long errors_maxrss_kib(void) {
  struct rusage ru;
  ASSERT_OK(getrusage(RUSAGE_SELF, &ru));
  return ru.ru_maxrss;
}

/* Pings a client of the fake server in `mode` (command timeout 5 s) and
 * checks that it fails within 2 s with `want` and a detail containing
 * `words`. */

/* Whether the ping of a fake-server test has been answered. */
static int errors_pinged(void *arg) {
  client_ctx_t *t = arg;
  return t->pings_err + t->pings_ok > 0;
}

static void errors_fake_case(fake_mode_t mode, int want, const char *words) {
  fleet_client_options_t o;
  client_ctx_t t;
  fake_t f;
  char url[64];
  uint64_t start;
  long rss;

  /* The fake server may close while fleet still writes its handshake:
   * libuv's write(2) would raise SIGPIPE, which docs/deploy.md tells a
   * program to ignore. */
  signal(SIGPIPE, SIG_IGN);
  fleet_client_options_init(&o);
  o.reconnect_initial_ms = 20;
  o.max_reply_bytes = 1024 * 1024;
  memset(&t, 0, sizeof(t));
  ASSERT_OK(uv_loop_init(&t.loop));
  fake_start(&f, &t.loop, mode);
  snprintf(url, sizeof(url), "redis://127.0.0.1:%d", f.port);
  /* ctx_init initializes the loop: start the client on the same loop. */
  o.state_cb = NULL;
  t.client.data = &t;
  ASSERT_OK(fleet_client_init(&t.loop, &t.client, url, &o));
  rss = errors_maxrss_kib();
  start = uv_now(&t.loop);
  t.in_call = 1;
  ASSERT_OK(fleet_client_ping(&t.client, ctx_on_ping, &t));
  t.in_call = 0;
  ASSERT(fleet_test_run_until(&t.loop, errors_pinged, &t,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_ERR(want, t.last_ping_status);
  ASSERT_LT(uv_now(&t.loop) - start, fleet_test_ms(2000));
  if (strstr(fleet_client_last_error(&t.client), words) == NULL)
    fleet_test__fail(__FILE__, __LINE__, "detail \"%s\" lacks \"%s\"",
                     fleet_client_last_error(&t.client), words);
  /* The client buffered at most about its limit of the reply. */
  ASSERT_LT(errors_maxrss_kib() - rss, 48 * 1024);
  ASSERT_OK(fleet_client_close(&t.client, NULL));
  while (fleet_client_loop(&t.client) != NULL)
    uv_run(&t.loop, UV_RUN_ONCE);
  fake_close(&f, &t.loop);
  fleet_test_loop_close(&t.loop);
}

/* A server that closes each connection at once: the command waiting for
 * it fails at once, not after the command timeout. */
TEST_IMPL(errors_fake_close) {
  errors_fake_case(FAKE_CLOSE, FLEET_EUNAVAILABLE, "during the handshake");
  return 0;
}

/* A server that does not speak RESP: FLEET_EPROTO at once. */
TEST_IMPL(errors_fake_garbage) {
  errors_fake_case(FAKE_GARBAGE, FLEET_EPROTO, "protocol error");
  return 0;
}

/* A server that announces a 1 GB string and sends it: FLEET_EREPLY2BIG as
 * soon as the length is read, with bounded memory. */
TEST_IMPL(errors_fake_bulk) {
  errors_fake_case(FAKE_BULK, FLEET_EREPLY2BIG, "max_reply_bytes");
  return 0;
}

/* A huge array of small strings: no single length is too big, but the
 * bytes received of the reply are. */
TEST_IMPL(errors_fake_array) {
  errors_fake_case(FAKE_ARRAY, FLEET_EREPLY2BIG, "exceeds max_reply_bytes");
  return 0;
}
