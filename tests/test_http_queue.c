/* test_http_queue.c -- examples/http-queue run as a user runs it, spoken to
 * over real sockets: 413 for a body over the limit, the job type validated
 * and %-decoded, idle connections closed after the read timeout, SIGINT and
 * SIGTERM closing open connections and exiting 0, cross-origin requests
 * and foreign Host names refused, and against a
 * redis-server with a password: one line per outage, the password never
 * printed. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "redis_fixture.h"
#include "test.h"

/* tests/CMakeLists.txt passes the program's path when it is built. */
#ifdef FLEET_HTTP_QUEUE_PATH
#define HQ_REQUIRED()
#else
#define FLEET_HTTP_QUEUE_PATH "/nonexistent"
#define HQ_REQUIRED() fleet_test_skip("examples/http-queue is not built")
#endif

/* The headers of a POST /jobs the server takes: its own host, a JSON
 * body. */
#define HQ_JSON "Host: 127.0.0.1\r\nContent-Type: application/json\r\n"

/* A running http-queue. */
typedef struct {
  pid_t pid;
  int port;
  char out_path[256];
  char err_path[256];
} hq_proc_t;

static void hq_read_file(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : -1;

  buf[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close(fd);
}

static void hq_nap(uint64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

static uint64_t hq_now_ms(void) {
  return uv_hrtime() / 1000000;
}

/* Waits up to `ms` until the file at `path` contains `what`. */
static int hq_wait_text(const char *path, const char *what, uint64_t ms) {
  char buf[16384];
  uint64_t end = hq_now_ms() + ms;

  do {
    hq_read_file(path, buf, sizeof(buf));
    if (strstr(buf, what) != NULL)
      return 1;
    hq_nap(10);
  } while (hq_now_ms() < end);
  return 0;
}

/* Starts http-queue with `args` (NULL-terminated, after the program name)
 * plus --port, and waits until it listens. */
static void hq_start(hq_proc_t *p, const char *tag, const char *const *args) {
  const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  char port[16], *argv[32];
  int i, n = 0;

  HQ_REQUIRED();
  p->port = fleet_test_free_port();
  ASSERT_GT(p->port, 0);
  snprintf(port, sizeof(port), "%d", p->port);
  snprintf(p->out_path, sizeof(p->out_path), "%s/hq-%d-%s.out", tmp,
           (int)getpid(), tag);
  snprintf(p->err_path, sizeof(p->err_path), "%s/hq-%d-%s.err", tmp,
           (int)getpid(), tag);
  argv[n++] = "http-queue";
  argv[n++] = "--port";
  argv[n++] = port;
  for (i = 0; args[i] != NULL && n < 31; i++)
    argv[n++] = (char *)args[i];
  argv[n] = NULL;
  p->pid = fork();
  ASSERT_GE(p->pid, 0);
  if (p->pid == 0) {
    int o = open(p->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(p->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
      _exit(127);
    execv(FLEET_HTTP_QUEUE_PATH, argv);
    _exit(127);
  }
  ASSERT(hq_wait_text(p->out_path, "listening on", fleet_test_ms(10000)));
}

/* Waits up to `ms` for the program to exit; returns its exit code, or 128 +
 * the signal, or -1 if it is still running (then it is killed). */
static int hq_wait_exit(hq_proc_t *p, uint64_t ms) {
  uint64_t end = hq_now_ms() + ms;
  int st;

  do {
    pid_t r = waitpid(p->pid, &st, WNOHANG);
    ASSERT_GE(r, 0);
    if (r == p->pid)
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    hq_nap(10);
  } while (hq_now_ms() < end);
  kill(p->pid, SIGKILL);
  waitpid(p->pid, &st, 0);
  return -1;
}

static void hq_stop(hq_proc_t *p) {
  ASSERT_EQ(0, kill(p->pid, SIGTERM));
  ASSERT_EQ(0, hq_wait_exit(p, fleet_test_ms(10000)));
  unlink(p->out_path);
  unlink(p->err_path);
}

/* A blocking connection to the program, with a receive timeout. */
static int hq_connect(const hq_proc_t *p) {
  struct sockaddr_in a;
  struct timeval tv;
  uint64_t ms = fleet_test_ms(15000);
  int fd = socket(AF_INET, SOCK_STREAM, 0);

  ASSERT_GE(fd, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)p->port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  tv.tv_sec = (time_t)(ms / 1000);
  tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
  ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
  ASSERT_EQ(0, connect(fd, (struct sockaddr *)&a, sizeof(a)));
  return fd;
}

static void hq_send(int fd, const char *s, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, s, len, MSG_NOSIGNAL);
    ASSERT_GT(n, 0);
    s += n;
    len -= (size_t)n;
  }
}

/* Reads until the server closes; returns the bytes read (-1 on a receive
 * timeout). A reset after the response counts as the close. */
static ssize_t hq_read_all(int fd, char *buf, size_t cap) {
  size_t len = 0;

  for (;;) {
    ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET))
      break;
    if (n < 0)
      return -1;
    len += (size_t)n;
    if (len == cap - 1)
      break;
  }
  buf[len] = '\0';
  return (ssize_t)len;
}

/* The status code of a response, or 0 when there is none. */
static int hq_status(const char *resp) {
  int code = 0;
  if (sscanf(resp, "HTTP/1.1 %d ", &code) != 1)
    return 0;
  return code;
}

/* Sends a whole request on a new connection and returns the status of the
 * response (the body into `resp` when not NULL). */
static int hq_request(const hq_proc_t *p, const char *req, size_t len,
                      char *resp, size_t cap) {
  char buf[4096];
  int fd = hq_connect(p);

  if (resp == NULL) {
    resp = buf;
    cap = sizeof(buf);
  }
  hq_send(fd, req, len);
  ASSERT_GE(hq_read_all(fd, resp, cap), 0);
  close(fd);
  return hq_status(resp);
}

/* POST /jobs<query> with `body_len` bytes of 'x' as a sized body. */
static int hq_post(const hq_proc_t *p, const char *query, size_t body_len) {
  char head[512], *req;
  size_t n;
  int code;

  n = (size_t)snprintf(head, sizeof(head),
                       "POST /jobs%s HTTP/1.1\r\n" HQ_JSON
                       "Content-Length: %zu\r\n\r\n",
                       query, body_len);
  req = malloc(n + body_len);
  ASSERT_NOT_NULL(req);
  memcpy(req, head, n);
  memset(req + n, 'x', body_len);
  code = hq_request(p, req, n + body_len, NULL, 0);
  free(req);
  return code;
}

/* POST /jobs, then shutdown(SHUT_WR) before reading: the status. */
static int hq_post_half_closed(const hq_proc_t *p) {
  static const char req[] =
      "POST /jobs HTTP/1.1\r\n" HQ_JSON "Content-Length: 3\r\n\r\nabc";
  char resp[4096];
  int fd = hq_connect(p);

  hq_send(fd, req, sizeof(req) - 1);
  ASSERT_EQ(0, shutdown(fd, SHUT_WR));
  ASSERT_GE(hq_read_all(fd, resp, sizeof(resp)), 0);
  close(fd);
  return hq_status(resp);
}

/* ------------------------------------------------------------------------ */
/* Limits and validation                                                    */

/* Runs http-queue with `argv` as given (argv[0] included) until it exits;
 * returns its exit code, its stderr in `err`. */
static int hq_run_args(const char *const *argv, char *err, size_t cap) {
  hq_proc_t p;
  int rc;

  HQ_REQUIRED();
  snprintf(p.out_path, sizeof(p.out_path), "%s/hq-%d-args.out",
           getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp", (int)getpid());
  snprintf(p.err_path, sizeof(p.err_path), "%s/hq-%d-args.err",
           getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp", (int)getpid());
  p.pid = fork();
  ASSERT_GE(p.pid, 0);
  if (p.pid == 0) {
    int o = open(p.out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(p.err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
      _exit(127);
    execv(FLEET_HTTP_QUEUE_PATH, (char *const *)argv);
    _exit(127);
  }
  rc = hq_wait_exit(&p, fleet_test_ms(10000));
  hq_read_file(p.err_path, err, cap);
  unlink(p.out_path);
  unlink(p.err_path);
  return rc;
}

/* A bad flag or value: one line on stderr that says what is wrong (the
 * flag, its range and what was given), exit 2, and nothing started. */
TEST_IMPL(http_queue_bad_flags) {
  static const struct {
    const char *argv[6];
    const char *line;
  } cases[] = {
      {{"http-queue", "--port", "0", NULL},
       "http-queue: --port: 1 to 65535 (got 0)\n"},
      {{"http-queue", "--port", "65536", NULL},
       "http-queue: --port: 1 to 65535 (got 65536)\n"},
      {{"http-queue", "--concurrency", "many", NULL},
       "http-queue: --concurrency: 1 to 10000 (got many)\n"},
      {{"http-queue", "--url", "memory://", "--work-ms", NULL},
       "http-queue: --work-ms needs a value\n"},
      {{"http-queue", "--prot", "8080", NULL},
       "http-queue: unknown flag '--prot' (--help lists them)\n"},
      {{"http-queue", "--port", "\x1b[2J", NULL},
       "http-queue: --port: 1 to 65535 (got \\x1b[2J)\n"},
  };
  char err[4096];
  size_t i;

  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    ASSERT_EQ(2, hq_run_args(cases[i].argv, err, sizeof(err)));
    ASSERT_STR_EQ(cases[i].line, err);
  }
  return 0;
}

TEST_IMPL(http_queue_oversize) {
  static const char *const args[] = {"--body-max", "1000", "--work-ms", "0",
                                     NULL};
  static const char head_only[] =
      "POST /jobs HTTP/1.1\r\n" HQ_JSON "Content-Length: 100000000\r\n\r\n";
  char resp[4096], chunked[4096];
  hq_proc_t p;
  size_t n;
  int i;

  hq_start(&p, "oversize", args);
  /* At the limit: accepted; one byte over, or far over, sent whole: 413. */
  ASSERT_EQ(201, hq_post(&p, "", 1000));
  ASSERT_EQ(413, hq_post(&p, "", 1001));
  ASSERT_EQ(413, hq_post(&p, "", 300000));
  /* The declared length decides before any body byte arrives: the 413
   * comes while the client has sent the headers only. */
  ASSERT_EQ(413, hq_request(&p, head_only, sizeof(head_only) - 1, resp,
                            sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "body over 1000 bytes"));
  /* A chunked body without a length: refused once it grows past it. */
  n = (size_t)snprintf(chunked, sizeof(chunked),
                       "POST /jobs HTTP/1.1\r\n" HQ_JSON
                       "Transfer-Encoding: chunked\r\n\r\n");
  for (i = 0; i < 3; i++) {
    n += (size_t)snprintf(chunked + n, sizeof(chunked) - n, "1f4\r\n");
    memset(chunked + n, 'y', 500);
    n += 500;
    n += (size_t)snprintf(chunked + n, sizeof(chunked) - n, "\r\n");
  }
  n += (size_t)snprintf(chunked + n, sizeof(chunked) - n, "0\r\n\r\n");
  ASSERT_EQ(413, hq_request(&p, chunked, n, NULL, 0));
  /* A chunked body under the limit is fine. */
  n = (size_t)snprintf(chunked, sizeof(chunked),
                       "POST /jobs HTTP/1.1\r\n" HQ_JSON
                       "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
                       "0\r\n\r\n");
  ASSERT_EQ(201, hq_request(&p, chunked, n, NULL, 0));
  /* A client that half-closes after its request still gets the answer. */
  ASSERT_EQ(201, hq_post_half_closed(&p));
  /* Only the three accepted jobs ran. */
  ASSERT(hq_wait_text(p.out_path, "job 3: completed", fleet_test_ms(5000)));
  hq_read_file(p.out_path, resp, sizeof(resp));
  ASSERT_NULL(strstr(resp, "job 4"));
  ASSERT_NOT_NULL(strstr(resp, "job 1 (http, 1000 bytes)"));
  ASSERT_NOT_NULL(strstr(resp, "job 2 (http, 5 bytes)"));
  hq_stop(&p);
  return 0;
}

TEST_IMPL(http_queue_type) {
  static const char *const args[] = {"--work-ms", "0", NULL};
  char q[512], out[16384], want[256];
  hq_proc_t p;

  hq_start(&p, "type", args);
  /* %-escapes are decoded: the worker sees "mail/send:v2". */
  ASSERT_EQ(201, hq_post(&p, "?type=mail%2Fsend%3Av2", 3));
  ASSERT(hq_wait_text(p.out_path, "job 1 (mail/send:v2, 3 bytes)",
                      fleet_test_ms(5000)));
  /* Other options around it are ignored. */
  ASSERT_EQ(201, hq_post(&p, "?a=1&type=resize&b=%zz", 1));
  ASSERT(
      hq_wait_text(p.out_path, "job 2 (resize, 1 bytes)", fleet_test_ms(5000)));
  /* Refused: empty, a space (escaped or as '+'), a control byte, an
   * escaped NUL, a bad or cut escape, a quote, 129 bytes. */
  ASSERT_EQ(400, hq_post(&p, "?type=", 1));
  ASSERT_EQ(400, hq_post(&p, "?type=a+b", 1));
  ASSERT_EQ(400, hq_post(&p, "?type=a%20b", 1));
  ASSERT_EQ(400, hq_post(&p, "?type=a%0Ab", 1));
  ASSERT_EQ(400, hq_post(&p, "?type=a%00b", 1));
  ASSERT_EQ(400, hq_post(&p, "?type=a%zzb", 1));
  ASSERT_EQ(400, hq_post(&p, "?type=ab%2", 1));
  ASSERT_EQ(400, hq_post(&p, "?type=a%22b", 1));
  snprintf(q, sizeof(q), "?type=%0129d", 0);
  ASSERT_EQ(400, hq_post(&p, q, 1));
  /* 128 bytes, some of them escaped, are fine. */
  snprintf(q, sizeof(q), "?type=%%41%0127d", 0);
  ASSERT_EQ(201, hq_post(&p, q, 1));
  snprintf(want, sizeof(want), "job 3 (A%0127d, 1 bytes)", 0);
  ASSERT(hq_wait_text(p.out_path, want, fleet_test_ms(5000)));
  /* No refused request made a job. */
  hq_nap(fleet_test_ms(100));
  hq_read_file(p.out_path, out, sizeof(out));
  ASSERT_NULL(strstr(out, "job 4"));
  hq_stop(&p);
  return 0;
}

/* POST /jobs with `headers` (each ended by CRLF) and a body of 2 bytes:
 * the status. */
static int hq_post_with(const hq_proc_t *p, const char *headers) {
  char req[1024];
  int n =
      snprintf(req, sizeof(req),
               "POST /jobs HTTP/1.1\r\n%sContent-Length: 2\r\n\r\n{}", headers);

  return hq_request(p, req, (size_t)n, NULL, 0);
}

/* What a web page of another site can send without a CORS preflight is
 * refused: a body that is not declared JSON (415), an Origin other than
 * the server's own (403), a Host that is not a name of this machine's
 * loopback (421: DNS rebinding). Only the accepted requests make jobs. */
TEST_IMPL(http_queue_cross_origin) {
  static const char *const args[] = {"--work-ms", "0", NULL};
  static const char *const simple[] = {"text/plain", "text/plain;charset=UTF-8",
                                       "application/x-www-form-urlencoded",
                                       "multipart/form-data; boundary=x",
                                       "application/jsonx"};
  char h[512], own[64], resp[4096], out[16384];
  hq_proc_t p;
  size_t i;
  int jobs = 0;

  hq_start(&p, "xorigin", args);
  /* The simple requests a page can make: refused, and without a type. */
  for (i = 0; i < sizeof(simple) / sizeof(simple[0]); i++) {
    snprintf(h, sizeof(h), "Host: 127.0.0.1\r\nContent-Type: %s\r\n",
             simple[i]);
    ASSERT_EQ(415, hq_post_with(&p, h));
  }
  ASSERT_EQ(415, hq_post_with(&p, "Host: 127.0.0.1\r\n"));
  /* JSON, with parameters or in another case: accepted. */
  ASSERT_EQ(201, hq_post_with(&p, HQ_JSON));
  ASSERT_EQ(201, hq_post_with(&p, "Host: 127.0.0.1\r\nContent-Type: "
                                  "Application/JSON; charset=utf-8\r\n"));
  jobs += 2;
  /* Origin: the server's own (each loopback name with its port) is
   * accepted; another site, another port, "null": 403. */
  snprintf(own, sizeof(own), "127.0.0.1:%d", p.port);
  snprintf(h, sizeof(h), HQ_JSON "Origin: http://%s\r\n", own);
  ASSERT_EQ(201, hq_post_with(&p, h));
  snprintf(h, sizeof(h), HQ_JSON "Origin: http://localhost:%d\r\n", p.port);
  ASSERT_EQ(201, hq_post_with(&p, h));
  jobs += 2;
  ASSERT_EQ(403, hq_post_with(&p, HQ_JSON "Origin: http://evil.example\r\n"));
  snprintf(h, sizeof(h), HQ_JSON "Origin: http://127.0.0.1:%d\r\n",
           p.port == 65535 ? 1 : p.port + 1);
  ASSERT_EQ(403, hq_post_with(&p, h));
  ASSERT_EQ(403, hq_post_with(&p, HQ_JSON "Origin: null\r\n"));
  snprintf(h, sizeof(h), HQ_JSON "Origin: https://%s.evil.example\r\n", own);
  ASSERT_EQ(403, hq_post_with(&p, h));
  /* Host: loopback names with the port or none; others 421, on every
   * route; an HTTP/1.1 request without Host 400, an HTTP/1.0 one is
   * answered. */
  snprintf(h, sizeof(h), "Host: %s\r\nContent-Type: application/json\r\n", own);
  ASSERT_EQ(201, hq_post_with(&p, h));
  ASSERT_EQ(201, hq_post_with(&p, "Host: LOCALHOST\r\nContent-Type: "
                                  "application/json\r\n"));
  jobs += 2;
  ASSERT_EQ(421, hq_post_with(&p, "Host: evil.example\r\nContent-Type: "
                                  "application/json\r\n"));
  snprintf(h, sizeof(h),
           "Host: evil.example:%d\r\nContent-Type: application/json\r\n",
           p.port);
  ASSERT_EQ(421, hq_post_with(&p, h));
  ASSERT_EQ(400, hq_post_with(&p, "Content-Type: application/json\r\n"));
  ASSERT_EQ(400, hq_post_with(&p, "Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n"
                                  "Content-Type: application/json\r\n"));
  snprintf(h, sizeof(h),
           "GET /metrics HTTP/1.1\r\nHost: rebound.example:%d"
           "\r\n\r\n",
           p.port);
  ASSERT_EQ(421, hq_request(&p, h, strlen(h), resp, sizeof(resp)));
  ASSERT_NULL(strstr(resp, "fleet_jobs_enqueued_total"));
  snprintf(h, sizeof(h), "GET /metrics HTTP/1.0\r\n\r\n");
  ASSERT_EQ(200, hq_request(&p, h, strlen(h), resp, sizeof(resp)));
  /* Exactly the accepted requests made jobs. */
  snprintf(h, sizeof(h), "job %d: completed", jobs);
  ASSERT(hq_wait_text(p.out_path, h, fleet_test_ms(5000)));
  hq_nap(fleet_test_ms(100));
  hq_read_file(p.out_path, out, sizeof(out));
  snprintf(h, sizeof(h), "job %d ", jobs + 1);
  ASSERT_NULL(strstr(out, h));
  hq_stop(&p);
  return 0;
}

/* GET /metrics: the Prometheus text of the program's handles, with the
 * jobs it enqueued and completed; the program still exits cleanly. */
TEST_IMPL(http_queue_metrics) {
  static const char *const args[] = {"--work-ms", "0", NULL};
  static const char get[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  static const char get_job[] =
      "GET /jobs/3 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  char resp[16384];
  hq_proc_t p;
  int i;

  hq_start(&p, "metrics", args);
  for (i = 0; i < 3; i++)
    ASSERT_EQ(201, hq_post(&p, "?type=m", 2));
  ASSERT(hq_wait_text(p.out_path, "job 3: completed", fleet_test_ms(5000)));
  ASSERT_EQ(200, hq_request(&p, get, sizeof(get) - 1, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "Content-Type: text/plain; version=0.0.4"));
  ASSERT_NOT_NULL(strstr(
      resp, "\nfleet_jobs_enqueued_total{kind=\"queue\",name=\"http\"} 3\n"));
  ASSERT_NOT_NULL(
      strstr(resp, "\nfleet_jobs_completed_total{kind=\"queue\",name=\"http\","
                   "type=\"m\"} 3\n"));
  ASSERT_NOT_NULL(strstr(resp, "# TYPE fleet_jobs_completed_total counter\n"));
  /* The program keeps completed jobs (the library keeps none by default):
   * a done job reads as completed. */
  ASSERT_EQ(200,
            hq_request(&p, get_job, sizeof(get_job) - 1, resp, sizeof(resp)));
  ASSERT_NOT_NULL(strstr(resp, "{\"state\":\"completed\","));
  hq_stop(&p);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Timeouts and signals                                                     */

TEST_IMPL(http_queue_idle_timeout) {
  uint64_t timeout = fleet_test_ms(400), t0, waited;
  char arg[32], resp[4096];
  const char *args[] = {"--read-timeout-ms", arg, NULL};
  static const char req[] =
      "POST /jobs HTTP/1.1\r\n" HQ_JSON "Content-Length: 2\r\n\r\nhi";
  hq_proc_t p;
  size_t i;
  int fd;

  snprintf(arg, sizeof(arg), "%" PRIu64, timeout);
  hq_start(&p, "idle", args);
  /* Nothing sent: closed without a word once the timeout has passed. */
  fd = hq_connect(&p);
  t0 = hq_now_ms();
  ASSERT_EQ(0, hq_read_all(fd, resp, sizeof(resp)));
  waited = hq_now_ms() - t0;
  close(fd);
  ASSERT_GE(waited, timeout - 5);
  ASSERT_LT(waited, timeout + fleet_test_ms(5000));
  /* Half a request, then silence: 408. */
  fd = hq_connect(&p);
  t0 = hq_now_ms();
  hq_send(fd, "POST /jo", 8);
  ASSERT_GT(hq_read_all(fd, resp, sizeof(resp)), 0);
  waited = hq_now_ms() - t0;
  close(fd);
  ASSERT_EQ(408, hq_status(resp));
  ASSERT_GE(waited, timeout - 5);
  /* A slow client that keeps sending is not idle: a request trickled in
   * over twice the timeout, a byte every quarter of it, is answered. */
  fd = hq_connect(&p);
  t0 = hq_now_ms();
  for (i = 0; i + 1 < sizeof(req); i += 6) {
    hq_send(fd, req + i, sizeof(req) - 1 - i < 6 ? sizeof(req) - 1 - i : 6);
    if (i < 60)
      hq_nap(timeout / 4);
  }
  ASSERT_GT(hq_read_all(fd, resp, sizeof(resp)), 0);
  close(fd);
  ASSERT_EQ(201, hq_status(resp));
  ASSERT_GE(hq_now_ms() - t0, 2 * timeout);
  hq_stop(&p);
  return 0;
}

/* Open connections in three states, then `sig`: the program closes them
 * and exits 0 at once, though its read timeout is a minute. */
static void hq_signal_case(int sig) {
  static const char *const args[] = {"--read-timeout-ms", "60000", NULL};
  char resp[4096], err[4096];
  hq_proc_t p;
  int fd[3], i, code;
  uint64_t t0;

  hq_start(&p, sig == SIGINT ? "sigint" : "sigterm", args);
  fd[0] = hq_connect(&p);
  fd[1] = hq_connect(&p);
  hq_send(fd[1], "POST /jobs HTTP/1.1\r\n", 21);
  fd[2] = hq_connect(&p);
  hq_send(fd[2], "POST /jobs HTTP/1.1\r\nContent-Length: 9\r\n\r\nabc", 46);
  /* One finished request first, so the three are surely accepted. */
  ASSERT_EQ(201, hq_post(&p, "", 1));
  t0 = hq_now_ms();
  ASSERT_EQ(0, kill(p.pid, sig));
  code = hq_wait_exit(&p, fleet_test_ms(10000));
  ASSERT_EQ(0, code);
  ASSERT_LT(hq_now_ms() - t0, fleet_test_ms(8000));
  for (i = 0; i < 3; i++) {
    ASSERT_EQ(0, hq_read_all(fd[i], resp, sizeof(resp)));
    close(fd[i]);
  }
  hq_read_file(p.err_path, err, sizeof(err));
  ASSERT_NOT_NULL(strstr(err, sig == SIGINT ? "SIGINT: closing 3 connection"
                                            : "SIGTERM: closing 3 connection"));
  unlink(p.out_path);
  unlink(p.err_path);
}

TEST_IMPL(http_queue_sigint) {
  hq_signal_case(SIGINT);
  hq_signal_case(SIGTERM);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The backend                                                              */

static int hq_count(const char *s, const char *what) {
  int n = 0;
  for (; (s = strstr(s, what)) != NULL; s += strlen(what))
    n++;
  return n;
}

/* Checks that every line of `err` is a backend line with the URL redacted,
 * that the lines alternate between an outage and "reachable again", first an
 * outage, last a recovery, and that there are at most two outages (each
 * failed request printing a line would give eight). Returns 0, or -1 after
 * printing `err`. */
static int hq_outages_alternate(const char *err) {
  static const char prefix[] = "http-queue: backend redis://:***@127.0.0.1:";
  const char *line = err, *nl, *back;
  int n = 0, up;

  for (; *line != '\0'; line = nl + 1, n++) {
    nl = strchr(line, '\n');
    if (nl == NULL || strncmp(line, prefix, sizeof(prefix) - 1) != 0)
      break;
    back = strstr(line, ": reachable again\n");
    up = back != NULL && back + strlen(": reachable again") == nl;
    if (up != (n % 2 == 1) || n >= 4)
      break;
  }
  if (*line == '\0' && n > 0 && n % 2 == 0)
    return 0;
  fprintf(stderr, "http-queue's stderr, line %d unexpected:\n%s", n + 1, err);
  return -1;
}

/* Posts on `n` connections at once and returns how many got `code`. */
static int hq_post_many(const hq_proc_t *p, int n, int code) {
  static const char req[] =
      "POST /jobs HTTP/1.1\r\n" HQ_JSON "Content-Length: 2\r\n\r\nhi";
  char resp[4096];
  int fd[8], i, got = 0;

  for (i = 0; i < n; i++) {
    fd[i] = hq_connect(p);
    hq_send(fd[i], req, sizeof(req) - 1);
  }
  for (i = 0; i < n; i++) {
    ASSERT_GT(hq_read_all(fd[i], resp, sizeof(resp)), 0);
    got += hq_status(resp) == code;
    close(fd[i]);
  }
  return got;
}

TEST_IMPL(http_queue_backend_error_once) {
  static const char *const redis_args[] = {"--requirepass", "s3cretpw", NULL};
  fleet_test_redis_t *redis;
  char url[256], out[16384], err[16384];
  const char *args[] = {"--url", url, "--work-ms", "0", NULL};
  hq_proc_t p, bad;

  HQ_REQUIRED();
  redis = fleet_test_redis_start_or_skip(redis_args);
  snprintf(url, sizeof(url), "redis://:s3cretpw@127.0.0.1:%d",
           fleet_test_redis_port(redis));
  hq_start(&p, "outage", args);
  ASSERT_EQ(3, hq_post_many(&p, 3, 201));
  /* The answer comes from Redis after the client's EOF: still sent. */
  ASSERT_EQ(201, hq_post_half_closed(&p));
  /* The backend goes away: every request fails with 503, and one line
   * says why. */
  ASSERT_EQ(0, fleet_test_redis_stop(redis));
  ASSERT_EQ(5, hq_post_many(&p, 5, 503));
  ASSERT_EQ(3, hq_post_many(&p, 3, 503));
  /* It comes back: one more line, and requests succeed. */
  ASSERT_EQ(0, fleet_test_redis_restart(redis));
  ASSERT(hq_wait_text(p.err_path, "reachable again", fleet_test_ms(15000)));
  ASSERT_EQ(2, hq_post_many(&p, 2, 201));
  hq_read_file(p.out_path, out, sizeof(out));
  hq_read_file(p.err_path, err, sizeof(err));
  /* One line when the outage starts and one when it ends, each showing the
   * URL redacted; the 8 requests that failed meanwhile print nothing. On a
   * loaded machine the client may lose its new connection once more (a
   * command that waited for the connection nearly its whole timeout is
   * sent with little time left, and its late reply ends the connection):
   * that is a second outage, reported the same way. So the lines alternate,
   * outage then recovery, starting with an outage and ending recovered. */
  ASSERT_EQ(0, hq_outages_alternate(err));
  ASSERT_NOT_NULL(strstr(out, "(queue http on redis://:***@127.0.0.1:"));
  ASSERT_NULL(strstr(out, "s3cretpw"));
  ASSERT_NULL(strstr(err, "s3cretpw"));
  hq_stop(&p);

  /* A wrong password at startup: one line, exit 1, and neither password
   * printed. */
  snprintf(url, sizeof(url), "redis://:wr0ngpw@127.0.0.1:%d",
           fleet_test_redis_port(redis));
  hq_start(&bad, "badauth", args);
  ASSERT_EQ(1, hq_wait_exit(&bad, fleet_test_ms(15000)));
  hq_read_file(bad.out_path, out, sizeof(out));
  hq_read_file(bad.err_path, err, sizeof(err));
  ASSERT_EQ(1, hq_count(err, "http-queue: backend redis://:***@127.0.0.1:"));
  ASSERT_NOT_NULL(strstr(err, "FLEET_EAUTH"));
  ASSERT_NULL(strstr(out, "wr0ngpw"));
  ASSERT_NULL(strstr(err, "wr0ngpw"));
  unlink(bad.out_path);
  unlink(bad.err_path);
  fleet_test_redis_free(redis);
  return 0;
}
