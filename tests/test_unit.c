/* test_unit.c -- unit tests of the pure helpers: version, errors, URLs,
 * backoff, the PRNG, allocation, state and op names, error-reply mapping,
 * transient errors, the error detail. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "core/internal.h"
#include "core/keys.h"
#include "test.h"

/* ------------------------------------------------------------------------ */
/* Version and errors                                                       */

TEST_IMPL(unit_version) {
  ASSERT_UEQ(fleet_version(), FLEET_VERSION_HEX);
  ASSERT_STR_EQ(fleet_version_string(), FLEET_VERSION_STRING);
  return 0;
}

typedef struct {
  int code;
  const char *name;
  const char *msg;
} unit_error_t;

#define UNIT_ERROR_ROW(name, value, msg) {value, "FLEET_" #name, msg},
static const unit_error_t unit_errors[] = {FLEET_ERRNO_MAP(UNIT_ERROR_ROW)};
#undef UNIT_ERROR_ROW

#define UNIT_NERRORS (sizeof(unit_errors) / sizeof(unit_errors[0]))

TEST_IMPL(unit_errors_map) {
  size_t i;
  size_t j;

  for (i = 0; i < UNIT_NERRORS; i++) {
    ASSERT_LT(unit_errors[i].code, 0);
    ASSERT_STR_EQ(fleet_err_name(unit_errors[i].code), unit_errors[i].name);
    ASSERT_STR_EQ(fleet_strerror(unit_errors[i].code), unit_errors[i].msg);
    ASSERT_GT(strlen(unit_errors[i].msg), 0);
    for (j = 0; j < i; j++) {
      ASSERT_NE(unit_errors[i].code, unit_errors[j].code);
      ASSERT_STR_NE(unit_errors[i].msg, unit_errors[j].msg);
    }
  }
  return 0;
}

TEST_IMPL(unit_errors_unknown) {
  int unknown[] = {1, 42, INT_MAX, -1000, INT_MIN, 0};
  size_t i;

  /* The last entry becomes one below the lowest code: where the next code
   * would be appended. */
  for (i = 0; i < UNIT_NERRORS; i++) {
    if (unit_errors[i].code - 1 < unknown[5])
      unknown[5] = unit_errors[i].code - 1;
  }
  for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
    ASSERT_STR_EQ(fleet_strerror(unknown[i]), "unknown error");
    ASSERT_STR_EQ(fleet_err_name(unknown[i]), "FLEET_EUNKNOWN");
  }
  ASSERT_STR_EQ(fleet_strerror(0), "success");
  ASSERT_STR_EQ(fleet_err_name(0), "FLEET_OK");
  return 0;
}

/* ------------------------------------------------------------------------ */
/* URLs                                                                     */

typedef struct {
  const char *text;
  fleet__url_scheme_t scheme;
  const char *host; /* REDIS only */
  int port;         /* REDIS only */
  const char *path; /* UNIX only */
  const char *user;
  const char *password;
  int db;
} unit_url_t;

static const unit_url_t unit_good_urls[] = {
    {"redis://localhost", FLEET__URL_REDIS, "localhost", 6379, NULL, NULL, NULL,
     0},
    {"redis://127.0.0.1:6380/3", FLEET__URL_REDIS, "127.0.0.1", 6380, NULL,
     NULL, NULL, 3},
    {"redis://:pass@h", FLEET__URL_REDIS, "h", 6379, NULL, NULL, "pass", 0},
    {"redis://user:pa%40ss@h:1/2", FLEET__URL_REDIS, "h", 1, NULL, "user",
     "pa@ss", 2},
    {"redis://[::1]:7000", FLEET__URL_REDIS, "::1", 7000, NULL, NULL, NULL, 0},
    {"redis://h:65535/15", FLEET__URL_REDIS, "h", 65535, NULL, NULL, NULL, 15},
    {"unix:///tmp/r.sock", FLEET__URL_UNIX, NULL, 0, "/tmp/r.sock", NULL, NULL,
     0},
    {"unix:///tmp/r.sock?db=4", FLEET__URL_UNIX, NULL, 0, "/tmp/r.sock", NULL,
     NULL, 4},
    {"memory://", FLEET__URL_MEMORY, NULL, 0, NULL, NULL, NULL, 0},
};

TEST_IMPL(unit_url_parse_good) {
  const unit_url_t *c;
  fleet__url_t url;
  size_t i;

  for (i = 0; i < sizeof(unit_good_urls) / sizeof(unit_good_urls[0]); i++) {
    c = &unit_good_urls[i];
    fprintf(stderr, "parsing %s\n", c->text);
    ASSERT_OK(fleet__url_parse(c->text, &url));
    ASSERT_EQ(url.scheme, c->scheme);
    ASSERT_STR_EQ(url.host, c->host);
    if (c->scheme == FLEET__URL_REDIS)
      ASSERT_EQ(url.port, c->port);
    ASSERT_STR_EQ(url.path, c->path);
    ASSERT_STR_EQ(url.user, c->user);
    ASSERT_STR_EQ(url.password, c->password);
    ASSERT_EQ(url.db, c->db);
    fleet__url_free(&url);
  }
  return 0;
}

static const char *const unit_bad_urls[] = {
    "",
    "http://x",
    "redis://",
    "redis://h:0",
    "redis://h:65536",
    "redis://h:12x",
    "redis://h/abc",
    "redis://h/-1",
    "redis://[::1",
    "unix://",
    "unix://relative",
    "memory://x",
    "redis://h/1?x",
    "redis://h1,h2",
    "rediss://h?tls_bogus=1",
    "redis://h?tls_ca_file=/ca.pem",
    "rediss://h?tls_verify=2",
    "rediss://h?tls_cert=/c.pem",
    "rediss://h?tls_ca_file=/a&tls_ca_file=/b",
    "rediss://h?tls_ca_file=",
    "rediss://h?&",
    "redis+cluster://h:7000/1",
    "redis+cluster://h:7000,",
    "redis+cluster://h:7000,h:0",
    "redis+sentinel://h:26379",
    "redis+sentinel://h:26379/",
    "redis+sentinel://h/m/x",
    "redis://h?sentinel_password=x",
    "redis://h#frag",
    "redis+sentinel://h/m?sentinel_user=a&sentinel_user=b",
    "redis+cluster+tls://h",
    /* A repeated option, of every kind. */
    "rediss://h?tls_verify=1&tls_verify=0",
    "unix:///s?db=1&db=2",
    "unix:///s?password=a&password=b",
    "redis://h?wait_replicas=1&wait_replicas=1",
    /* Bad durability options. */
    "redis://h?wait_replicas=-1",
    "redis://h?wait_replicas=x",
    "redis://h?wait_replicas=",
    "redis://h?wait_replicas=1001",
    "redis://h?wait_timeout_ms=0",
    "redis://h?wait_timeout_ms=1.5",
    "memory://?wait_replicas=1",
    "memory://?wait_replicas=0",
    /* Bad functions options. */
    "redis://h?functions=2",
    "redis://h?functions=",
    "redis://h?functions=1&functions=0",
    "memory://?functions=0",
    /* Options of another scheme. */
    "redis://h?db=1",
    "redis://h?password=x",
    "unix:///s?tls_verify=0",
    /* A '#' anywhere. */
    "unix:///s?password=ab#cd",
    "unix:///s#x",
    "redis://:ab#cd@h",
    "rediss://u:ab#cd@h:6380/0",
    "redis+sentinel://h/m?sentinel_password=ab#cd",
    "rediss+cluster://:a#b@h1,h2",
};

/* Parses `text`, which must be refused, into a struct full of garbage, and
 * checks that it comes back zeroed with nothing allocated. */
static void unit_url_refused(const char *text) {
  fleet__url_t url;

  memset(&url, 0x5a, sizeof(url));
  ASSERT_ERR(FLEET_EBADURL, fleet__url_parse(text, &url));
  ASSERT_NULL(url.host);
  ASSERT_NULL(url.path);
  ASSERT_NULL(url.user);
  ASSERT_NULL(url.password);
  fleet__url_free(&url);
}

TEST_IMPL(unit_url_parse_bad) {
  char *longest;
  size_t i;

  for (i = 0; i < sizeof(unit_bad_urls) / sizeof(unit_bad_urls[0]); i++) {
    fprintf(stderr, "parsing \"%s\"\n", unit_bad_urls[i]);
    unit_url_refused(unit_bad_urls[i]);
  }

  /* One byte longer than FLEET__URL_MAX, and otherwise valid. */
  longest = malloc(FLEET__URL_MAX + 2);
  ASSERT_NOT_NULL(longest);
  strcpy(longest, "redis://");
  memset(longest + 8, 'a', FLEET__URL_MAX + 1 - 8);
  longest[FLEET__URL_MAX + 1] = '\0';
  ASSERT_EQ(strlen(longest), FLEET__URL_MAX + 1);
  fprintf(stderr, "parsing a URL of %zu bytes\n", strlen(longest));
  unit_url_refused(longest);
  free(longest);
  return 0;
}

/* The schemes of issue 15: host lists, TLS options, sentinel parts. */
TEST_IMPL(unit_url_parse_topologies) {
  fleet__url_t u, n;

  ASSERT_OK(fleet__url_parse(
      "rediss://app:s%3Fcret@db.example:6380/2?tls_ca_file=/etc/ca%20x.pem"
      "&tls_cert=/c.pem&tls_key=/k.pem&tls_server_name=redis.internal"
      "&tls_verify=0&tls_ca_dir=/etc/ssl/certs",
      &u));
  ASSERT_EQ(u.scheme, FLEET__URL_REDIS);
  ASSERT_EQ(u.tls, 1);
  ASSERT_EQ(u.nhosts, 1);
  ASSERT_STR_EQ(u.host, "db.example");
  ASSERT_EQ(u.port, 6380);
  ASSERT_STR_EQ(u.user, "app");
  ASSERT_STR_EQ(u.password, "s?cret");
  ASSERT_EQ(u.db, 2);
  ASSERT_STR_EQ(u.tls_opts.ca_file, "/etc/ca x.pem");
  ASSERT_STR_EQ(u.tls_opts.ca_dir, "/etc/ssl/certs");
  ASSERT_STR_EQ(u.tls_opts.cert, "/c.pem");
  ASSERT_STR_EQ(u.tls_opts.key, "/k.pem");
  ASSERT_STR_EQ(u.tls_opts.server_name, "redis.internal");
  ASSERT_EQ(u.tls_opts.verify, 0);
  ASSERT_STR_EQ(u.error, "");

  /* A node met through this URL keeps TLS and the data credentials. */
  ASSERT_OK(fleet__url_node(&u, "10.0.0.7", 7001, 0, &n));
  ASSERT_EQ(n.scheme, FLEET__URL_REDIS);
  ASSERT_EQ(n.tls, 1);
  ASSERT_STR_EQ(n.host, "10.0.0.7");
  ASSERT_EQ(n.port, 7001);
  ASSERT_STR_EQ(n.password, "s?cret");
  ASSERT_EQ(n.db, 2);
  ASSERT_STR_EQ(n.tls_opts.server_name, "redis.internal");
  ASSERT_EQ(n.tls_opts.verify, 0);
  fleet__url_free(&n);
  fleet__url_free(&u);

  /* Verification is on unless turned off. */
  ASSERT_OK(fleet__url_parse("rediss://h", &u));
  ASSERT_EQ(u.tls, 1);
  ASSERT_EQ(u.tls_opts.verify, 1);
  ASSERT_EQ(u.port, 6379);
  fleet__url_free(&u);

  ASSERT_OK(fleet__url_parse("redis+cluster://:pw@a:7000,[::1]:7001,c", &u));
  ASSERT_EQ(u.scheme, FLEET__URL_CLUSTER);
  ASSERT_EQ(u.tls, 0);
  ASSERT_EQ(u.nhosts, 3);
  ASSERT_STR_EQ(u.hosts[0].host, "a");
  ASSERT_EQ(u.hosts[0].port, 7000);
  ASSERT_STR_EQ(u.hosts[1].host, "::1");
  ASSERT_EQ(u.hosts[1].port, 7001);
  ASSERT_STR_EQ(u.hosts[2].host, "c");
  ASSERT_EQ(u.hosts[2].port, 6379);
  ASSERT_STR_EQ(u.host, "a");
  ASSERT_STR_EQ(u.password, "pw");
  ASSERT_EQ(u.db, 0);
  fleet__url_free(&u);

  ASSERT_OK(fleet__url_parse("rediss+cluster://a:1/?tls_ca_file=/ca", &u));
  ASSERT_EQ(u.scheme, FLEET__URL_CLUSTER);
  ASSERT_EQ(u.tls, 1);
  ASSERT_STR_EQ(u.tls_opts.ca_file, "/ca");
  fleet__url_free(&u);

  ASSERT_OK(
      fleet__url_parse("redis+sentinel://u:p@s1,s2:26380,s3:26381/my%2Fmaster/3"
                       "?sentinel_user=su&sentinel_password=sp",
                       &u));
  ASSERT_EQ(u.scheme, FLEET__URL_SENTINEL);
  ASSERT_EQ(u.nhosts, 3);
  ASSERT_EQ(u.hosts[0].port, 26379);
  ASSERT_EQ(u.hosts[1].port, 26380);
  ASSERT_STR_EQ(u.hosts[2].host, "s3");
  ASSERT_STR_EQ(u.master_name, "my/master");
  ASSERT_EQ(u.db, 3);
  ASSERT_STR_EQ(u.user, "u");
  ASSERT_STR_EQ(u.password, "p");
  ASSERT_STR_EQ(u.sentinel_user, "su");
  ASSERT_STR_EQ(u.sentinel_password, "sp");
  /* A sentinel node gets the sentinel credentials and db 0. */
  ASSERT_OK(fleet__url_node(&u, "s2", 26380, 1, &n));
  ASSERT_STR_EQ(n.user, "su");
  ASSERT_STR_EQ(n.password, "sp");
  ASSERT_EQ(n.db, 0);
  ASSERT_EQ(n.tls, 0);
  fleet__url_free(&n);
  fleet__url_free(&u);

  ASSERT_OK(fleet__url_parse("redis+sentinel://s/m@x", &u));
  ASSERT_STR_EQ(u.master_name, "m@x");
  ASSERT_STR_EQ(u.host, "s");
  ASSERT_NULL(u.password);
  fleet__url_free(&u);

  /* functions: 1 unless the URL says 0, on every Redis scheme. */
  ASSERT_OK(fleet__url_parse("redis://h", &u));
  ASSERT_EQ(u.functions, 1);
  fleet__url_free(&u);
  ASSERT_OK(fleet__url_parse("redis+cluster://a,b?functions=0", &u));
  ASSERT_EQ(u.functions, 0);
  fleet__url_free(&u);
  ASSERT_OK(fleet__url_parse("unix:///r.sock?functions=0&db=1", &u));
  ASSERT_EQ(u.functions, 0);
  fleet__url_free(&u);
  ASSERT_OK(fleet__url_parse("rediss+sentinel://s/m?functions=1", &u));
  ASSERT_EQ(u.functions, 1);
  fleet__url_free(&u);

  /* The durability options, on every Redis scheme; 0 when absent. */
  ASSERT_OK(fleet__url_parse("redis://h:1/0?wait_replicas=1&"
                             "wait_timeout_ms=200",
                             &u));
  ASSERT_EQ(u.wait_replicas, 1);
  ASSERT_EQ(u.wait_timeout_ms, 200);
  fleet__url_free(&u);
  ASSERT_OK(fleet__url_parse("redis+cluster://a,b?wait_replicas=2", &u));
  ASSERT_EQ(u.wait_replicas, 2);
  ASSERT_EQ(u.wait_timeout_ms, 0);
  fleet__url_free(&u);
  ASSERT_OK(fleet__url_parse("rediss+sentinel://s/m/1?wait_timeout_ms=50&"
                             "sentinel_password=x&wait_replicas=0",
                             &u));
  ASSERT_EQ(u.wait_replicas, 0);
  ASSERT_EQ(u.wait_timeout_ms, 50);
  ASSERT_STR_EQ(u.sentinel_password, "x");
  fleet__url_free(&u);
  ASSERT_OK(fleet__url_parse("unix:///r.sock?wait_replicas=3&db=2&user=u&"
                             "password=p%23q",
                             &u));
  ASSERT_EQ(u.wait_replicas, 3);
  ASSERT_EQ(u.db, 2);
  ASSERT_STR_EQ(u.user, "u");
  ASSERT_STR_EQ(u.password, "p#q"); /* '#' written %23 */
  fleet__url_free(&u);
  ASSERT_OK(fleet__url_parse("redis://h", &u));
  ASSERT_EQ(u.wait_replicas, 0);
  ASSERT_EQ(u.wait_timeout_ms, 0);
  fleet__url_free(&u);

  ASSERT_OK(fleet__url_parse("rediss+sentinel://s/m", &u));
  ASSERT_EQ(u.scheme, FLEET__URL_SENTINEL);
  ASSERT_EQ(u.tls, 1);
  ASSERT_EQ(u.db, 0);
  ASSERT_NULL(u.sentinel_password);
  fleet__url_free(&u);
  return 0;
}

/* Refusals say what is wrong, and never quote the password. */
TEST_IMPL(unit_url_errors_explain) {
  static const struct {
    const char *text;
    const char *words;
  } cases[] = {
      {"redis://:hunter2@h:99999", "port"},
      {"rediss://:hunter2@h?tls_cert=/c", "tls_key"},
      {"redis://:hunter2@h?tls_ca_file=/ca", "TLS scheme"},
      {"redis+sentinel://:hunter2@h", "master"},
      {"redis+cluster://:hunter2@h/2", "database"},
      {"redis://:hunter2@a,b", "one host"},
      {"redis://:hunter%zz@h", "password"},
      {"redis://:hunter2@h?hunter2=hunter2", "unknown option"},
      {"redis+sentinel://:x@h/m?sentinel_password=hunter%2", "sentinel_pass"},
      {"foo://:hunter2@h", "unknown scheme"},
      {"redis://:hunter2/x@h", "escaped"},
      /* An unescaped '#' in a password, anywhere: refused, saying where,
       * never quoting the password. */
      {"redis://:hunter2#x@h", "user info"},
      {"rediss://u:hunter#2@h/1?tls_verify=0", "%23"},
      {"redis+sentinel://:x@h/m?sentinel_password=hunter#2", "option "
                                                             "sentinel_"
                                                             "password"},
      {"rediss+sentinel://h/m?sentinel_password=hunter#2&sentinel_user=u",
       "unescaped '#'"},
      {"redis+cluster://:hunt#er2@h1,h2", "user info"},
      {"unix:///run/r.sock?db=1&password=hunter#2", "option password"},
      {"unix:///run/r.sock?password=hunter2&db=1#", "option db"},
      {"redis://h/0#hunter2", "fragment"},
      /* A repeated option is named. */
      {"rediss://:hunter2@h?tls_verify=1&tls_verify=0", "option tls_verify "
                                                        "is given twice"},
      {"redis://:hunter2@h?wait_replicas=1&wait_replicas=2",
       "option wait_replicas is given twice"},
      {"unix:///s?password=hunter2&password=hunter2", "option password is "
                                                      "given twice"},
      /* Durability options: numbers in range, not on memory://. */
      {"redis://:hunter2@h?wait_replicas=-1", "wait_replicas must be a "
                                              "number in 0..1000"},
      {"redis://:hunter2@h?wait_timeout_ms=soon", "wait_timeout_ms must be"},
      {"memory://?wait_replicas=1", "no replicas"},
      {"redis://:hunter2@h?db=2", "unix://"},
  };
  fleet__url_t u;
  char why[FLEET__URL_ERROR_MAX];
  size_t i;

  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    ASSERT_ERR(FLEET_EBADURL, fleet__url_parse(cases[i].text, &u));
    fprintf(stderr, "%s -> %s\n", cases[i].words, u.error);
    ASSERT_NOT_NULL(strstr(u.error, cases[i].words));
    if (strstr(cases[i].text, "hunter2=") == NULL)
      ASSERT_NULL(strstr(u.error, "hunter"));
    ASSERT_NULL(u.hosts);
    ASSERT_NULL(u.password);
    ASSERT_NULL(u.tls_opts.cert);
    ASSERT_NULL(u.master_name);
    fleet__url_free(&u);

    /* The public check says the same. */
    ASSERT_ERR(FLEET_EBADURL,
               fleet_client_url_check(cases[i].text, why, sizeof(why)));
    ASSERT_STR_EQ(why, u.error);
  }
  ASSERT_OK(fleet_client_url_check("rediss+cluster://a,b", why, sizeof(why)));
  ASSERT_STR_EQ(why, "");
  ASSERT_ERR(FLEET_EBADURL, fleet_client_url_check(NULL, NULL, 0));
  return 0;
}

TEST_IMPL(unit_url_free_zeroed) {
  fleet__url_t url;

  memset(&url, 0, sizeof(url));
  fleet__url_free(&url);
  fleet__url_free(&url);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Backoff                                                                  */

/* min(max_ms, initial_ms * 2^attempt), computed without overflow. */
static uint64_t unit_backoff_base(uint32_t initial_ms, uint32_t max_ms,
                                  uint32_t attempt) {
  uint64_t base;
  uint32_t i;

  base = initial_ms;
  for (i = 0; i < attempt && base != 0 && base < max_ms; i++)
    base *= 2;
  return base < max_ms ? base : max_ms;
}

/* Checks one delay against the bounds that src/common/backoff.h
 * documents: with i = max(initial_ms, 1) and m = max(max_ms, i), the
 * delay lies in
 * [base - base * jitter_pct / 100, base], base = min(m, i * 2^attempt). */
static void unit_backoff_check(uint32_t initial_ms, uint32_t max_ms,
                               uint32_t jitter_pct, uint32_t attempt,
                               uint32_t rnd) {
  uint32_t i = initial_ms > 0 ? initial_ms : 1;
  uint32_t m = max_ms > i ? max_ms : i;
  uint64_t base;
  uint64_t lo;
  uint64_t hi;
  uint64_t d;

  base = unit_backoff_base(i, m, attempt);
  lo = base - base * jitter_pct / 100;
  hi = base;
  if (lo < 1)
    lo = 1;
  if (hi < 1)
    hi = 1;
  d = fleet__backoff_delay(initial_ms, max_ms, jitter_pct, attempt, rnd);
  if (d < lo || d > hi)
    fleet_test__fail(__FILE__, __LINE__,
                     "fleet__backoff_delay(%" PRIu32 ", %" PRIu32 ", %" PRIu32
                     ", %" PRIu32 ", %" PRIu32 ") = %" PRIu64
                     ", not in [%" PRIu64 ", %" PRIu64 "]",
                     initial_ms, max_ms, jitter_pct, attempt, rnd, d, lo, hi);
}

/* A fixed sequence of 32-bit values (an LCG), so that the backoff tests do
 * not depend on fleet__rng. */
static uint32_t unit_lcg(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return *state;
}

TEST_IMPL(unit_backoff_bounds) {
  static const uint32_t initials[] = {0, 1, 3, 100, 1000, 65536, UINT32_MAX};
  static const uint32_t maxes[] = {0, 50, 100, 5000, 60000, UINT32_MAX};
  static const uint32_t jitters[] = {0, 1, 20, 50, 99, 100};
  static const uint32_t rnds[] = {0, 1, 0x7fffffffu, 0x80000000u, UINT32_MAX};
  uint32_t lcg;
  size_t i;
  size_t m;
  size_t j;
  size_t k;
  uint32_t a;

  lcg = 1;
  for (i = 0; i < sizeof(initials) / sizeof(initials[0]); i++) {
    for (m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
      for (j = 0; j < sizeof(jitters) / sizeof(jitters[0]); j++) {
        for (a = 0; a <= 100; a++) {
          for (k = 0; k < sizeof(rnds) / sizeof(rnds[0]); k++)
            unit_backoff_check(initials[i], maxes[m], jitters[j], a, rnds[k]);
          for (k = 0; k < 8; k++)
            unit_backoff_check(initials[i], maxes[m], jitters[j], a,
                               unit_lcg(&lcg));
        }
        unit_backoff_check(initials[i], maxes[m], jitters[j], 1000, 7);
        unit_backoff_check(initials[i], maxes[m], jitters[j], UINT32_MAX, 7);
      }
    }
  }
  return 0;
}

TEST_IMPL(unit_backoff_growth) {
  static const uint64_t want[] = {100, 200, 400, 800, 1600, 3200, 5000, 5000};
  uint64_t prev;
  uint64_t d;
  uint32_t a;

  /* Without jitter the delay is exact: it doubles up to the cap. */
  for (a = 0; a < sizeof(want) / sizeof(want[0]); a++)
    ASSERT_UEQ(fleet__backoff_delay(100, 5000, 0, a, 12345), want[a]);

  /* It never shrinks as attempts go on. */
  prev = 0;
  for (a = 0; a < 64; a++) {
    d = fleet__backoff_delay(1, UINT32_MAX, 0, a, 0);
    ASSERT_UGE(d, prev);
    prev = d;
  }
  ASSERT_UEQ(prev, UINT32_MAX);
  return 0;
}

TEST_IMPL(unit_backoff_jitter_spread) {
  uint64_t lo;
  uint64_t hi;
  uint64_t d;
  uint32_t lcg;
  int i;

  /* With 50 % jitter on a 1000 ms delay, `rnd` must actually move the
   * result across most of [500, 1000]. */
  lcg = 7;
  lo = UINT64_MAX;
  hi = 0;
  for (i = 0; i < 1000; i++) {
    d = fleet__backoff_delay(1000, 60000, 50, 0, unit_lcg(&lcg));
    lo = d < lo ? d : lo;
    hi = d > hi ? d : hi;
  }
  ASSERT_ULE(lo, 600);
  ASSERT_UGE(hi, 900);
  return 0;
}

TEST_IMPL(unit_backoff_no_overflow) {
  uint64_t d;

  d = fleet__backoff_delay(100, 5000, 20, 100, UINT32_MAX);
  ASSERT_UGE(d, 4000);
  ASSERT_ULE(d, 5000);
  d = fleet__backoff_delay(UINT32_MAX, UINT32_MAX, 0, 100, 0);
  ASSERT_UEQ(d, UINT32_MAX);
  d = fleet__backoff_delay(3, UINT32_MAX, 0, 100, 0);
  ASSERT_UEQ(d, UINT32_MAX);
  d = fleet__backoff_delay(100, 5000, 0, UINT32_MAX, 0);
  ASSERT_UEQ(d, 5000);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* PRNG                                                                     */

#define UNIT_RNG_RUN 8

static void unit_rng_run(uint64_t seed, uint32_t out[UNIT_RNG_RUN]) {
  fleet__rng_t rng;
  int i;

  fleet__rng_seed(&rng, seed);
  for (i = 0; i < UNIT_RNG_RUN; i++)
    out[i] = fleet__rng_next(&rng);
}

TEST_IMPL(unit_rng_seeds) {
  static const uint64_t seeds[] = {0,          1,
                                   2,          3,
                                   42,         0xffffffffu,
                                   1ull << 32, 0x8000000000000000ull,
                                   UINT64_MAX, 0x0123456789abcdefull};
  uint32_t runs[sizeof(seeds) / sizeof(seeds[0])][UNIT_RNG_RUN];
  uint32_t again[UNIT_RNG_RUN];
  size_t i;
  size_t j;
  int distinct;

  for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
    unit_rng_run(seeds[i], runs[i]);
    /* The same seed gives the same sequence. */
    unit_rng_run(seeds[i], again);
    ASSERT_MEM_EQ(runs[i], again, sizeof(again));
    /* Every seed, 0 included, gives a sequence that moves. */
    distinct = 0;
    for (j = 1; j < UNIT_RNG_RUN; j++)
      distinct += runs[i][j] != runs[i][0];
    ASSERT_GT(distinct, 0);
    /* Different seeds give different sequences. */
    for (j = 0; j < i; j++)
      ASSERT_NE(memcmp(runs[i], runs[j], sizeof(runs[i])), 0);
  }
  return 0;
}

TEST_IMPL(unit_rng_bits) {
  enum { N = 20000 };
  unsigned ones[32];
  fleet__rng_t rng;
  uint32_t v;
  int i;
  int b;

  /* Each bit is set about half of the time: 45..55 % of 20000 draws is more
   * than 14 standard deviations wide, so a sound generator never fails. */
  memset(ones, 0, sizeof(ones));
  fleet__rng_seed(&rng, 12345);
  for (i = 0; i < N; i++) {
    v = fleet__rng_next(&rng);
    for (b = 0; b < 32; b++)
      ones[b] += (v >> b) & 1;
  }
  for (b = 0; b < 32; b++) {
    ASSERT_GE(ones[b], N * 45 / 100);
    ASSERT_LE(ones[b], N * 55 / 100);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Allocation helpers                                                       */

TEST_IMPL(unit_alloc_dup) {
  static const char bytes[] = {'a', '\0', 'b'};
  const char *text = "fleet";
  char *p;

  p = fleet__strdup(text);
  ASSERT_NOT_NULL(p);
  ASSERT_PTR_NE(p, text);
  ASSERT_STR_EQ(p, "fleet");
  free(p);
  ASSERT_NULL(fleet__strdup(NULL));

  p = fleet__memdup(bytes, sizeof(bytes));
  ASSERT_NOT_NULL(p);
  ASSERT_MEM_EQ(p, bytes, sizeof(bytes));
  ASSERT_EQ(p[sizeof(bytes)], '\0');
  free(p);

  p = fleet__memdup(bytes, 0);
  ASSERT_NOT_NULL(p);
  ASSERT_EQ(p[0], '\0');
  free(p);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Names and error replies                                                  */

TEST_IMPL(unit_client_state_name) {
#define UNIT_STATE_CHECK(name, str)                                            \
  ASSERT_STR_EQ(fleet_client_state_name(FLEET_CLIENT_##name), str);
  FLEET_CLIENT_STATE_MAP(UNIT_STATE_CHECK)
#undef UNIT_STATE_CHECK
  ASSERT_NOT_NULL(fleet_client_state_name((fleet_client_state_t)99));
  return 0;
}

TEST_IMPL(unit_op_name) {
#define UNIT_OP_CHECK(id, name, command)                                       \
  ASSERT_STR_EQ(fleet__op_name(FLEET__OP_##id), name);                         \
  ASSERT_STR_EQ(fleet__op_command(FLEET__OP_##id), command);
  FLEET__OP_MAP(UNIT_OP_CHECK)
#undef UNIT_OP_CHECK
  ASSERT_NULL(fleet__op_name(FLEET__OP_COUNT));
  ASSERT_NULL(fleet__op_name((fleet__op_t)(FLEET__OP_COUNT + 5)));
  ASSERT_NULL(fleet__op_name((fleet__op_t)-1));
  ASSERT_NULL(fleet__op_command(FLEET__OP_COUNT));
  return 0;
}

/* The fenced ops, which the build lists from the scripts whose header says
 * "A fenced op": exactly those that grant fencing tokens. */
TEST_IMPL(unit_op_fenced) {
  static const fleet__op_t fenced[] = {
      FLEET__OP_LOCK_ACQUIRE,  FLEET__OP_QUEUE_ENQUEUE,
      FLEET__OP_QUEUE_CLAIM,   FLEET__OP_QUEUE_COMPLETE_CLAIM,
      FLEET__OP_CRON_FIRE,     FLEET__OP_CRON_FIRE_MANY,
      FLEET__OP_POOL_DISPATCH, FLEET__OP_POOL_JOIN,
      FLEET__OP_POOL_MOVE,     FLEET__OP_POOL_STOPPED};
  size_t i, n = 0;
  int op;

  for (i = 0; i < sizeof(fenced) / sizeof(fenced[0]); i++)
    ASSERT(fleet__op_fenced(fenced[i]));
  for (op = 0; op < FLEET__OP_COUNT; op++)
    n += (size_t)fleet__op_fenced((fleet__op_t)op);
  ASSERT_EQ(n, sizeof(fenced) / sizeof(fenced[0]));
  ASSERT(!fleet__op_fenced(FLEET__OP_COUNT));
  return 0;
}

/* fleet__reply_error_code() on a NUL-terminated text. */
static int unit_reply_code(const char *text) {
  return fleet__reply_error_code(text, strlen(text));
}

TEST_IMPL(unit_reply_error_code) {
  static const char unterminated[] = {'W', 'R', 'O', 'N', 'G', 'T',
                                      'Y', 'P', 'E', ' ', 'x'};
  char text[128];
  size_t i;

  ASSERT_ERR(FLEET_EWRONGTYPE,
             unit_reply_code("WRONGTYPE Operation against a key holding the "
                             "wrong kind of value"));
  ASSERT_ERR(FLEET_EAUTH, unit_reply_code("NOAUTH Authentication required."));
  ASSERT_ERR(FLEET_EAUTH,
             unit_reply_code("WRONGPASS invalid username-password pair or "
                             "user is disabled."));
  ASSERT_ERR(FLEET_ESTALE, unit_reply_code("FLEET_ESTALE token 7 is stale"));
  ASSERT_ERR(FLEET_EBUSY, unit_reply_code("FLEET_EBUSY"));
  ASSERT_ERR(FLEET_EBACKEND, unit_reply_code("ERR unknown command 'X'"));
  ASSERT_ERR(FLEET_EBACKEND, unit_reply_code("FLEET_ESTALEX token 7"));
  ASSERT_ERR(FLEET_EBACKEND, unit_reply_code(""));
  ASSERT_ERR(FLEET_EWRONGTYPE,
             fleet__reply_error_code(unterminated, sizeof(unterminated)));
  /* Only `len` bytes count. */
  ASSERT_ERR(FLEET_EBUSY, fleet__reply_error_code("FLEET_EBUSYxyz", 11));

  /* The server's codes that users must tell apart. */
  ASSERT_ERR(FLEET_ENOPERM,
             unit_reply_code("NOPERM this user has no permissions to access "
                             "one of the keys used as arguments"));
  ASSERT_ERR(FLEET_EREDIRECT, unit_reply_code("MOVED 3999 127.0.0.1:6381"));
  ASSERT_ERR(FLEET_EREDIRECT, unit_reply_code("ASK 3999 127.0.0.1:6381"));
  ASSERT_ERR(FLEET_ECROSSSLOT,
             unit_reply_code("CROSSSLOT Keys in request don't hash to the "
                             "same slot"));
  ASSERT_ERR(FLEET_ECROSSSLOT,
             unit_reply_code("ERR Script attempted to access a non local key "
                             "in a cluster node"));
  ASSERT_ERR(FLEET_EOOM,
             unit_reply_code("OOM command not allowed when used memory > "
                             "'maxmemory'."));
  ASSERT_ERR(FLEET_EREADONLY,
             unit_reply_code("READONLY You can't write against a read only "
                             "replica."));
  ASSERT_ERR(FLEET_ESCRIPTBUSY,
             unit_reply_code("BUSY Redis is busy running a script. You can "
                             "only call SCRIPT KILL or SHUTDOWN NOSAVE."));
  ASSERT_ERR(FLEET_EBADDB, unit_reply_code("ERR DB index is out of range"));
  ASSERT_ERR(FLEET_EBADDB, unit_reply_code("ERR invalid DB index"));
  ASSERT_ERR(FLEET_EUNAVAILABLE,
             unit_reply_code("LOADING Redis is loading the dataset in "
                             "memory"));
  ASSERT_ERR(FLEET_EUNAVAILABLE, unit_reply_code("TRYAGAIN Multiple keys"));
  ASSERT_ERR(FLEET_EUNAVAILABLE, unit_reply_code("CLUSTERDOWN Hash slot"));
  ASSERT_ERR(FLEET_EUNAVAILABLE, unit_reply_code("MASTERDOWN Link down"));
  ASSERT_ERR(FLEET_EUNAVAILABLE,
             unit_reply_code("ERR max number of clients reached"));
  /* A code is a whole first word. */
  ASSERT_ERR(FLEET_EBACKEND,
             unit_reply_code("BUSYKEY Target key name already exists."));
  ASSERT_ERR(FLEET_EBACKEND,
             unit_reply_code("BUSYGROUP Consumer Group name already exists"));
  ASSERT_ERR(FLEET_EBACKEND, unit_reply_code("ASKING is not an error"));
  ASSERT_ERR(FLEET_ESCRIPTBUSY, unit_reply_code("BUSY"));

  /* Refusals of a command inside a script, as Redis 7.0 words them (these
   * texts were read from a redis-server 7.0.15). */
  ASSERT_ERR(FLEET_ENOPERM,
             unit_reply_code("ERR The user executing the script can't run "
                             "this command or subcommand script: 08ff1a5b, "
                             "on @user_script:1."));
  ASSERT_ERR(FLEET_ENOPERM,
             unit_reply_code("ERR The user executing the script can't access "
                             "at least one of the keys mentioned in the "
                             "command arguments script: a2e69d92, on "
                             "@user_script:1."));
  ASSERT_ERR(FLEET_EWRONGTYPE,
             unit_reply_code("WRONGTYPE Operation against a key holding the "
                             "wrong kind of value script: 2f1a, on "
                             "@user_script:1."));
  ASSERT_ERR(FLEET_EOOM,
             unit_reply_code("OOM command not allowed when used memory > "
                             "'maxmemory'. script: e957f7af, on "
                             "@user_script:1."));
  ASSERT_ERR(FLEET_EUNAVAILABLE,
             unit_reply_code("ERR Script attempted to execute a command while "
                             "the cluster is down script: 1c2d, on "
                             "@user_script:1."));
  ASSERT_ERR(FLEET_EUNAVAILABLE,
             unit_reply_code("ERR Script attempted to execute a write command "
                             "while the cluster is down and readonly"));
  ASSERT_ERR(FLEET_ECROSSSLOT,
             unit_reply_code("ERR Script attempted to access keys that do not "
                             "hash to the same slot script: 1c2d, on "
                             "@user_script:1."));
  /* As Redis 7.2 words an ACL denial inside a script. */
  ASSERT_ERR(FLEET_ENOPERM,
             unit_reply_code("NOPERM User u has no permissions to run the "
                             "'hset' command script: 1c2d, on "
                             "@user_script:1."));
  /* As Redis 6 wraps them: the code behind the script's context. */
  ASSERT_ERR(FLEET_ENOPERM,
             unit_reply_code("ERR Error running script (call to f_1c2d): "
                             "@user_script:1: @user_script: 1: The user "
                             "executing the script can't run this command or "
                             "subcommand"));
  ASSERT_ERR(FLEET_EOOM,
             unit_reply_code("ERR Error running script (call to f_1c2d): "
                             "@user_script:1: @user_script: 1: -OOM command "
                             "not allowed when used memory > 'maxmemory'."));
  ASSERT_ERR(FLEET_EREADONLY,
             unit_reply_code("ERR Error running script (call to f_1c2d): "
                             "@user_script:1: @user_script: 1: -READONLY You "
                             "can't write against a read only replica."));
  ASSERT_ERR(FLEET_EWRONGTYPE,
             unit_reply_code("ERR Error running script (call to f_1c2d): "
                             "@user_script:1: WRONGTYPE Operation against a "
                             "key holding the wrong kind of value"));
  ASSERT_ERR(FLEET_ENOPERM,
             unit_reply_code("ERR Error running script (call to f_1c2d): "
                             "@user_script:1: NOPERM this user has no "
                             "permissions"));
  ASSERT_ERR(FLEET_ESTALE,
             unit_reply_code("ERR Error running script (call to f_1c2d): "
                             "@user_script:1: user_script:1: FLEET_ESTALE "
                             "token 7"));
  /* A script's own error() text stays unknown, and so does a wrapper
   * without the context it should have. */
  ASSERT_ERR(FLEET_EBACKEND,
             unit_reply_code("ERR user_script:1: boom script: 8290, on "
                             "@user_script:1."));
  ASSERT_ERR(FLEET_EBACKEND,
             unit_reply_code("ERR Error running script (call to f_1c2d): "
                             "@user_script:1: boom"));
  ASSERT_ERR(FLEET_EBACKEND, unit_reply_code("ERR Error running script"));
  ASSERT_ERR(FLEET_EBACKEND,
             unit_reply_code("ERR Error running script (call to f_1c2d): "
                             "@user_script"));

  /* Every fleet error name, as the first word of a script error. */
  for (i = 0; i < UNIT_NERRORS; i++) {
    snprintf(text, sizeof(text), "%s from a script", unit_errors[i].name);
    ASSERT_ERR(unit_errors[i].code, unit_reply_code(text));
  }
  return 0;
}

/* Which errors a background retry loop treats as passing by themselves. */
TEST_IMPL(unit_status_transient) {
  static const int transient[] = {
      FLEET_ECONNLOST,   FLEET_ECONNREFUSED, FLEET_ERESOLVE,
      FLEET_ETIMEDOUT,   FLEET_EUNAVAILABLE, FLEET_EREADONLY,
      FLEET_ESCRIPTBUSY, FLEET_EREDIRECT,    FLEET_EOOM};
  size_t i, j;

  for (i = 0; i < UNIT_NERRORS; i++) {
    int want = 0;
    for (j = 0; j < sizeof(transient) / sizeof(transient[0]); j++)
      want |= transient[j] == unit_errors[i].code;
    if (fleet__status_transient(unit_errors[i].code) != want)
      fleet_test__fail(__FILE__, __LINE__, "%s: transient should be %d",
                       unit_errors[i].name, want);
  }
  ASSERT_EQ(0, fleet__status_transient(0));
  ASSERT_EQ(0, fleet__status_transient(-1000));
  return 0;
}

/* The error detail is truncated to its buffer, always terminated, and kept
 * on one line. */
TEST_IMPL(unit_backend_detail) {
  fleet__backend_t be;
  char big[2 * FLEET__DETAIL_MAX];

  memset(&be, 0, sizeof(be));
  memset(big, 'x', sizeof(big));
  fleet__backend_set_detail_bytes(&be, big, sizeof(big));
  ASSERT_EQ(FLEET__DETAIL_MAX - 1, strlen(be.detail));
  fleet__backend_set_detail_bytes(&be, "OOM a\r\nb", 8);
  ASSERT_STR_EQ("OOM a  b", be.detail);
  fleet__backend_set_detail(&be, "%.*s", (int)sizeof(big), big);
  ASSERT_EQ(FLEET__DETAIL_MAX - 1, strlen(be.detail));
  fleet__backend_set_detail(&be, "connect %s: %s", "h:1", "refused");
  ASSERT_STR_EQ("connect h:1: refused", be.detail);
  fleet__backend_set_detail_bytes(&be, "", 0);
  ASSERT_STR_EQ("", be.detail);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                     */

TEST_IMPL(unit_keys) {
  fleet__key_t k = {NULL, 0, 0};
  static const char bin[] = {'a', '\0', 'b'};
  static char longest[FLEET__NAME_MAX + 2];
  size_t len = 0;

  ASSERT_OK(fleet__key_build(&k, "fleet", 5, "jobs", 4, "pending"));
  ASSERT_EQ(20, k.len);
  ASSERT_MEM_EQ("{fleet:jobs}:pending", k.base, 20);
  ASSERT_OK(fleet__key_build(&k, "p", 1, bin, sizeof(bin), NULL));
  ASSERT_EQ(7, k.len);
  ASSERT_MEM_EQ("{p:a\0b}", k.base, 7);
  /* One rule for every name: 1 to max bytes; too long is FLEET_E2BIG. */
  ASSERT_OK(fleet__str_check("x", FLEET__NAME_MAX, &len));
  ASSERT_EQ(1, len);
  ASSERT_ERR(FLEET_EINVAL, fleet__str_check("", FLEET__NAME_MAX, &len));
  ASSERT_ERR(FLEET_EINVAL, fleet__str_check(NULL, FLEET__NAME_MAX, &len));
  memset(longest, 'n', FLEET__NAME_MAX);
  ASSERT_OK(fleet__str_check(longest, FLEET__NAME_MAX, &len));
  ASSERT_EQ(FLEET__NAME_MAX, len);
  longest[FLEET__NAME_MAX] = 'n';
  ASSERT_ERR(FLEET_E2BIG, fleet__str_check(longest, FLEET__NAME_MAX, &len));
  ASSERT_OK(fleet__bytes_check((fleet_bytes_t){"ab", 2}, 2));
  ASSERT_ERR(FLEET_E2BIG, fleet__bytes_check((fleet_bytes_t){"abc", 3}, 2));
  ASSERT_ERR(FLEET_EINVAL, fleet__bytes_check((fleet_bytes_t){NULL, 0}, 2));
  fleet__key_free(&k);
  ASSERT_NULL(k.base);
  return 0;
}
