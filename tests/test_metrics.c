/* test_metrics.c -- per-handle metrics on both adapters: the counters move
 * as jobs are enqueued, claimed, completed, failed and retried, and as a
 * lease is acquired, renewed and lost; the latency histogram's buckets sum
 * to its count; the Prometheus text parses line by line and says the same
 * as fleet_metrics_read(). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics_int.h"
#include "test_queue_util.h"

/* ------------------------------------------------------------------------ */
/* A checker of the Prometheus text exposition format (0.0.4)               */

/* A metric name: [a-zA-Z_:][a-zA-Z0-9_:]*; returns its length (0: none). */
static size_t prom_name(const char *p) {
  size_t n = 0;

  if (!(isalpha((unsigned char)p[0]) || p[0] == '_' || p[0] == ':'))
    return 0;
  while (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == ':')
    n++;
  return n;
}

#define PROM_FAMILIES 64

typedef struct {
  char name[128];
  char type[16];
} prom_family_t;

/* Checks every line of `text` and returns the number of samples. Each
 * sample belongs to a family declared by an earlier # TYPE (histogram
 * samples by their _bucket/_sum/_count suffix); labels are name="value"
 * with only \\, \" and \n escapes; values parse as numbers. Within one
 * histogram series the buckets are cumulative and end with le="+Inf",
 * whose count equals the _count that follows. */
static int prom_check(const char *text) {
  prom_family_t fam[PROM_FAMILIES];
  size_t nfam = 0, i;
  int samples = 0;
  double last_bucket = -1, inf_bucket = -1;
  const char *line = text;

  ASSERT(text[0] == '\0' || text[strlen(text) - 1] == '\n');
  while (*line != '\0') {
    const char *end = strchr(line, '\n');
    char buf[1024];
    size_t len = (size_t)(end - line), n;
    char *p, *num_end;
    double v;
    int is_bucket = 0, is_inf = 0, is_count = 0, found = 0;

    ASSERT_NOT_NULL(end);
    ASSERT_LT(len, sizeof(buf));
    memcpy(buf, line, len);
    buf[len] = '\0';
    line = end + 1;
    if (strncmp(buf, "# HELP ", 7) == 0) {
      n = prom_name(buf + 7);
      ASSERT_GT(n, 0);
      ASSERT_EQ(' ', buf[7 + n]);
      ASSERT_GT(strlen(buf + 8 + n), 0);
      continue;
    }
    if (strncmp(buf, "# TYPE ", 7) == 0) {
      n = prom_name(buf + 7);
      ASSERT_GT(n, 0);
      ASSERT(strcmp(buf + 8 + n, "counter") == 0 ||
             strcmp(buf + 8 + n, "gauge") == 0 ||
             strcmp(buf + 8 + n, "histogram") == 0);
      for (i = 0; i < nfam; i++)
        ASSERT(strlen(fam[i].name) != n ||
               strncmp(fam[i].name, buf + 7, n) != 0); /* declared once */
      ASSERT_LT(nfam, PROM_FAMILIES);
      memcpy(fam[nfam].name, buf + 7, n);
      fam[nfam].name[n] = '\0';
      strcpy(fam[nfam].type, buf + 8 + n);
      nfam++;
      continue;
    }
    ASSERT(buf[0] != '#');
    /* A sample: name{labels} value */
    n = prom_name(buf);
    ASSERT_GT(n, 0);
    for (i = 0; i < nfam && !found; i++) {
      size_t fl = strlen(fam[i].name);
      if (strcmp(fam[i].type, "histogram") != 0) {
        found = fl == n && strncmp(buf, fam[i].name, n) == 0;
      } else if (n > fl && strncmp(buf, fam[i].name, fl) == 0) {
        const char *suf = buf + fl;
        is_bucket = n - fl == 7 && strncmp(suf, "_bucket", 7) == 0;
        is_count = n - fl == 6 && strncmp(suf, "_count", 6) == 0;
        found = is_bucket || is_count ||
                (n - fl == 4 && strncmp(suf, "_sum", 4) == 0);
      }
    }
    ASSERT(found);
    p = buf + n;
    if (*p == '{') {
      p++;
      while (*p != '}') {
        size_t ln = prom_name(p);
        int le = ln == 2 && strncmp(p, "le", 2) == 0;
        const char *val;
        ASSERT_GT(ln, 0);
        p += ln;
        ASSERT_EQ('=', *p++);
        ASSERT_EQ('"', *p++);
        val = p;
        while (*p != '"') {
          ASSERT(*p != '\0' && *p != '\n');
          if (*p == '\\') {
            p++;
            ASSERT(*p == '\\' || *p == '"' || *p == 'n');
          }
          p++;
        }
        if (le) {
          ASSERT(is_bucket);
          if (strncmp(val, "+Inf\"", 5) == 0)
            is_inf = 1;
          else
            ASSERT(strtod(val, NULL) > 0);
        }
        p++;
        if (*p == ',')
          p++;
        else
          ASSERT_EQ('}', *p);
      }
      p++;
    }
    ASSERT_EQ(' ', *p++);
    v = strtod(p, &num_end);
    ASSERT(num_end != p && *num_end == '\0');
    ASSERT(v >= 0);
    if (is_bucket) {
      /* Cumulative within a series. */
      if (last_bucket >= 0)
        ASSERT(v >= last_bucket);
      last_bucket = is_inf ? -1 : v;
      if (is_inf)
        inf_bucket = v;
    }
    if (is_count) {
      ASSERT(inf_bucket == v);
      inf_bucket = -1;
    }
    samples++;
  }
  return samples;
}

/* The value of the sample line that starts with `prefix` (name and
 * labels, e.g. "fleet_jobs_completed_total{kind=\"queue\",name=\"q\"}"), or -1.
 */
static double prom_value(const char *text, const char *prefix) {
  size_t n = strlen(prefix);
  const char *p = text;

  while (p != NULL && *p != '\0') {
    if (strncmp(p, prefix, n) == 0 && p[n] == ' ')
      return strtod(p + n + 1, NULL);
    p = strchr(p, '\n');
    if (p != NULL)
      p++;
  }
  return -1;
}

static char *prom_render(fleet_client_t *c) {
  char *text = NULL;
  size_t len = 0;

  ASSERT_OK(fleet_metrics_prometheus(c, &text, &len));
  ASSERT_NOT_NULL(text);
  ASSERT_UEQ(strlen(text), len);
  prom_check(text);
  return text;
}

/* The buckets of a histogram sum to its count. */
static void hist_check(const fleet_histogram_t *h) {
  uint64_t sum = 0;
  unsigned i;

  for (i = 0; i <= FLEET_METRICS_BUCKETS; i++)
    sum += h->buckets[i];
  ASSERT_UEQ(h->count, sum);
}

/* ------------------------------------------------------------------------ */
/* Worker and queue                                                         */

typedef struct {
  qt_t t;
  fleet_worker_t w;
  int handled, settled, closed, closed2;
  fleet_job_t *held[4];
  int nheld;
} mt_t;

/* Jobs of type "ok" complete; "fail" fails every attempt; "once" fails
 * its first attempt only; "hold" stays with the test. */
static void mt_handler(fleet_worker_t *w, fleet_job_t *job) {
  mt_t *m = w->data;

  m->handled++;
  if (strcmp(job->type, "hold") == 0) {
    ASSERT_LT(m->nheld, 4);
    m->held[m->nheld++] = job;
  } else if (strcmp(job->type, "ok") == 0 ||
             (strcmp(job->type, "once") == 0 && job->attempts > 1)) {
    ASSERT_OK(fleet_job_complete(job));
  } else {
    ASSERT_OK(fleet_job_fail(job, "no", 2));
  }
}

static void mt_done(fleet_worker_t *w, fleet_job_t *job,
                    fleet_job_action_t action, int status) {
  mt_t *m = w->data;
  ASSERT_OK(status);
  m->settled++;
}

static void mt_on_close(fleet_handle_t *h) {
  mt_t *m = h->data;
  m->closed++;
}

static void mt_on_close2(fleet_handle_t *h) {
  mt_t *m = h->data;
  m->closed2++;
}

static void mt_open(mt_t *m, const char *url, const char *name) {
  fleet_worker_options_t o;

  memset(m, 0, sizeof(*m));
  qt_open(&m->t, url, name, NULL);
  fleet_worker_options_init(&o);
  o.done_cb = mt_done;
  o.poll_ms = 60000;
  m->w.data = m;
  ASSERT_OK(fleet_worker_init(&m->t.c.client, &m->w, name, &o));
}

static void mt_close(mt_t *m) {
  ASSERT_OK(fleet_worker_close(&m->w, mt_on_close));
  ASSERT(fleet_test_wait_count(&m->t.c.loop, &m->closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  qt_close(&m->t);
}

static void mt_add(mt_t *m, const char *type, uint32_t max_attempts) {
  fleet_job_spec_t spec;
  int st;

  fleet_job_spec_init(&spec, type, "x", 1);
  spec.max_attempts = max_attempts;
  spec.backoff = FLEET_BACKOFF_FIXED;
  spec.backoff_ms = 0; /* retried after 1 ms */
  ASSERT_OK(qt_enqueue(&m->t, &spec, 1, &st, NULL));
  ASSERT_OK(st);
}

CONFORMANCE_IMPL(metrics_worker_counters) {
  fleet_metrics_t qm, wm;
  char *text;
  mt_t m;

  mt_open(&m, b->url, "mq");
  /* Nothing yet: every counter at zero, the names set. */
  ASSERT_OK(fleet_metrics_read((fleet_handle_t *)&m.w, &wm));
  ASSERT_EQ(FLEET_HANDLE_WORKER, wm.type);
  ASSERT_UEQ(2, wm.name_len);
  ASSERT_MEM_EQ("mq", wm.name, 2);
  ASSERT_UEQ(0, wm.counters[FLEET_METRIC_JOBS_CLAIMED]);
  ASSERT_UEQ(0, wm.histograms[FLEET_METRIC_JOB_LATENCY].count);

  mt_add(&m, "ok", 3);
  mt_add(&m, "ok", 3);
  mt_add(&m, "ok", 3);
  mt_add(&m, "fail", 1); /* dead at once */
  mt_add(&m, "once", 3); /* fails, is retried, completes */
  ASSERT_OK(fleet_metrics_read((fleet_handle_t *)&m.t.q, &qm));
  ASSERT_EQ(FLEET_HANDLE_QUEUE, qm.type);
  ASSERT_UEQ(5, qm.counters[FLEET_METRIC_JOBS_ENQUEUED]);
  ASSERT_UEQ(0, qm.counters[FLEET_METRIC_JOBS_CLAIMED]);

  /* Each job waits 50 ms or more before its first claim. */
  qt_sleep(&m.t, 50);
  ASSERT_OK(fleet_worker_start(&m.w, mt_handler));
  /* 3 ok + 1 dead + 2 attempts of "once". */
  ASSERT(fleet_test_wait_count(&m.t.c.loop, &m.settled, 6,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(fleet_metrics_read((fleet_handle_t *)&m.w, &wm));
  ASSERT_UEQ(6, wm.counters[FLEET_METRIC_JOBS_CLAIMED]);
  ASSERT_UEQ(4, wm.counters[FLEET_METRIC_JOBS_COMPLETED]);
  ASSERT_UEQ(2, wm.counters[FLEET_METRIC_JOBS_FAILED]);
  ASSERT_UEQ(1, wm.counters[FLEET_METRIC_JOBS_RETRIED]);
  ASSERT_UEQ(0, wm.counters[FLEET_METRIC_JOBS_LOST]);
  ASSERT_UEQ(0, wm.counters[FLEET_METRIC_JOBS_ENQUEUED]);
  ASSERT_UEQ(4, wm.histograms[FLEET_METRIC_JOB_LATENCY].count);
  hist_check(&wm.histograms[FLEET_METRIC_JOB_LATENCY]);
  hist_check(&wm.histograms[FLEET_METRIC_CRON_LATENESS]);
  /* The wait from enqueue to claim: first attempts only. */
  ASSERT_UEQ(5, wm.histograms[FLEET_METRIC_JOB_WAIT].count);
  ASSERT_UGE(wm.histograms[FLEET_METRIC_JOB_WAIT].sum_us, 5 * 50000);
  ASSERT_UEQ(0, wm.histograms[FLEET_METRIC_JOB_WAIT].buckets[0]);
  hist_check(&wm.histograms[FLEET_METRIC_JOB_WAIT]);

  text = prom_render(&m.t.c.client);
  ASSERT(prom_value(text,
                    "fleet_jobs_enqueued_total{kind=\"queue\",name=\"mq\"}") ==
         5);
  /* The jobs' counters by type (the enqueues are not). */
  {
    static const struct {
      const char *series;
      double v;
    } want[] = {
        {"fleet_jobs_claimed_total{kind=\"queue\",name=\"mq\",type=\"ok\"}", 3},
        {"fleet_jobs_claimed_total{kind=\"queue\",name=\"mq\",type=\"fail\"}",
         1},
        {"fleet_jobs_claimed_total{kind=\"queue\",name=\"mq\",type=\"once\"}",
         2},
        {"fleet_jobs_completed_total{kind=\"queue\",name=\"mq\",type=\"ok\"}",
         3},
        {"fleet_jobs_completed_total{kind=\"queue\",name=\"mq\",type=\"once\"}",
         1},
        {"fleet_jobs_completed_total{kind=\"queue\",name=\"mq\",type=\"fail\"}",
         0},
        {"fleet_jobs_failed_total{kind=\"queue\",name=\"mq\",type=\"fail\"}",
         1},
        {"fleet_jobs_failed_total{kind=\"queue\",name=\"mq\",type=\"once\"}",
         1},
        {"fleet_jobs_retried_total{kind=\"queue\",name=\"mq\",type=\"once\"}",
         1},
        {"fleet_jobs_lost_total{kind=\"queue\",name=\"mq\",type=\"ok\"}", 0},
    };
    size_t k;

    for (k = 0; k < sizeof(want) / sizeof(want[0]); k++)
      ASSERT(prom_value(text, want[k].series) == want[k].v);
    ASSERT_NULL(strstr(text, "fleet_jobs_claimed_total{kind=\"queue\","
                             "name=\"mq\"} "));
  }
  ASSERT(prom_value(text, "fleet_job_claim_to_complete_seconds_count"
                          "{kind=\"queue\",name=\"mq\"}") == 4);
  ASSERT(prom_value(text, "fleet_job_wait_seconds_count"
                          "{kind=\"queue\",name=\"mq\"}") == 5);
  ASSERT(prom_value(text, "fleet_job_claim_to_complete_seconds_bucket"
                          "{kind=\"queue\",name=\"mq\",le=\"+Inf\"}") == 4);
  ASSERT(prom_value(text, "fleet_job_claim_to_complete_seconds_sum"
                          "{kind=\"queue\",name=\"mq\"}") >= 0);
  ASSERT(prom_value(text, "fleet_build_info{version=\"" FLEET_VERSION_STRING
                          "\"}") == 1);
  /* No lock, pool or cron handle: none of their families. */
  ASSERT_NULL(strstr(text, "fleet_lock_"));
  ASSERT_NULL(strstr(text, "fleet_cron_"));
  ASSERT_NULL(strstr(text, "fleet_pool_"));
  fleet_metrics_free(text);
  mt_close(&m);
}

/* A worker whose claim goes stale counts the recovery; a second worker on
 * the same queue is summed into the same series. */
/* The job types a worker counts apart are bounded: the first 16 distinct
 * ones, then "_other" for every job of another type. */
CONFORMANCE_IMPL(metrics_job_types_bounded) {
  char type[32], series[128];
  fleet_metrics_t wm;
  char *text;
  int i;
  mt_t m;

  mt_open(&m, b->url, "tq");
  for (i = 0; i < 18; i++) {
    snprintf(type, sizeof(type), "t%02d", i);
    mt_add(&m, type, 1); /* fails at once: dead */
  }
  ASSERT_OK(fleet_worker_start(&m.w, mt_handler));
  ASSERT(fleet_test_wait_count(&m.t.c.loop, &m.settled, 18,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(fleet_metrics_read((fleet_handle_t *)&m.w, &wm));
  ASSERT_UEQ(18, wm.counters[FLEET_METRIC_JOBS_CLAIMED]);
  text = prom_render(&m.t.c.client);
  /* Claimed in order: t00..t15 have their series, t16 and t17 none. */
  for (i = 0; i < 16; i++) {
    snprintf(series, sizeof(series),
             "fleet_jobs_claimed_total{kind=\"queue\",name=\"tq\","
             "type=\"t%02d\"}",
             i);
    ASSERT(prom_value(text, series) == 1);
  }
  ASSERT_NULL(strstr(text, "type=\"t16\""));
  ASSERT(prom_value(text, "fleet_jobs_claimed_total{kind=\"queue\","
                          "name=\"tq\",type=\"_other\"}") == 2);
  ASSERT(prom_value(text, "fleet_jobs_failed_total{kind=\"queue\","
                          "name=\"tq\",type=\"_other\"}") == 2);
  fleet_metrics_free(text);
  mt_close(&m);
}

CONFORMANCE_IMPL(metrics_worker_recovered) {
  fleet_worker_options_t o;
  fleet_worker_t w2;
  fleet_metrics_t wm;
  qt_job_t job;
  char *text;
  mt_t m;

  mt_open(&m, b->url, "rq");
  mt_add(&m, "ok", 3);
  /* Claimed by hand with a short TTL and never refreshed. */
  ASSERT_EQ(1, qt_claim(&m.t, 1, 200, &job));
  fleet_worker_options_init(&o);
  o.done_cb = mt_done;
  o.poll_ms = 60000;
  o.recover_ms = 50;
  w2.data = &m;
  ASSERT_OK(fleet_worker_init(&m.t.c.client, &w2, "rq", &o));
  ASSERT_OK(fleet_worker_start(&w2, mt_handler));
  ASSERT(fleet_test_wait_count(&m.t.c.loop, &m.settled, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(fleet_metrics_read((fleet_handle_t *)&w2, &wm));
  ASSERT_UEQ(1, wm.counters[FLEET_METRIC_JOBS_RECOVERED]);
  ASSERT_UEQ(1, wm.counters[FLEET_METRIC_JOBS_CLAIMED]);
  ASSERT_UEQ(1, wm.counters[FLEET_METRIC_JOBS_COMPLETED]);
  /* The idle first worker adds zeros to the same series. */
  text = prom_render(&m.t.c.client);
  ASSERT(prom_value(text,
                    "fleet_jobs_recovered_total{kind=\"queue\",name=\"rq\"}") ==
         1);
  ASSERT(prom_value(text, "fleet_jobs_completed_total{kind=\"queue\","
                          "name=\"rq\",type=\"ok\"}") == 1);
  /* One series for the two workers. */
  {
    const char *first =
        strstr(text, "fleet_jobs_completed_total{kind=\"queue\","
                     "name=\"rq\",type=\"ok\"}");
    ASSERT_NOT_NULL(first);
    ASSERT_NULL(strstr(first + 1, "fleet_jobs_completed_total{kind=\"queue\","
                                  "name=\"rq\",type=\"ok\"}"));
  }
  fleet_metrics_free(text);
  ASSERT_OK(fleet_close((fleet_handle_t *)&w2, mt_on_close2));
  ASSERT(fleet_test_wait_count(&m.t.c.loop, &m.closed2, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  mt_close(&m);
}

/* ------------------------------------------------------------------------ */
/* Lock                                                                     */

typedef struct {
  client_ctx_t c;
  fleet_lock_t lock;
  int acquired, renewed, lost, closed;
  int status;
} lt_t;

static void lt_on_acquire(fleet_lock_t *l, int status, uint64_t token,
                          void *ud) {
  lt_t *t = ud;
  t->status = status;
  t->acquired++;
}

static void lt_on_renew(fleet_handle_t *h, int status, void *ud) {
  lt_t *t = ud;
  t->status = status;
  t->renewed++;
}

static void lt_on_lost(fleet_lock_t *l, int status, uint64_t token) {
  lt_t *t = l->data;
  t->lost++;
}

static void lt_on_close(fleet_handle_t *h) {
  lt_t *t = h->data;
  t->closed++;
}

CONFORMANCE_IMPL(metrics_lock_counters) {
  fleet_lock_options_t o;
  fleet_metrics_t lm;
  char *text;
  lt_t t;

  memset(&t, 0, sizeof(t));
  ctx_init(&t.c, b->url, NULL);
  fleet_lock_options_init(&o);
  o.manual_renew = 1;
  o.lost_cb = lt_on_lost;
  t.lock.data = &t;
  /* A lease long enough that a loaded machine (CI runs 4 tests at once on
   * 2 cores) does not lose it before the renew below is confirmed: at 500
   * ms the renew once answered FLEET_ETIMEDOUT, the lease gone first. */
  ASSERT_OK(fleet_lock_init(&t.c.client, &t.lock, "ml", "me",
                            fleet_test_ms(2000), &o));
  ASSERT_OK(fleet_lock_acquire(&t.lock, 0, lt_on_acquire, &t));
  ASSERT(fleet_test_wait_count(&t.c.loop, &t.acquired, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(t.status);
  ASSERT_OK(fleet_lock_renew(&t.lock, lt_on_renew, &t));
  ASSERT(fleet_test_wait_count(&t.c.loop, &t.renewed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(t.status);
  ASSERT_OK(fleet_metrics_read((fleet_handle_t *)&t.lock, &lm));
  ASSERT_EQ(FLEET_HANDLE_LOCK, lm.type);
  ASSERT_MEM_EQ("ml", lm.name, lm.name_len);
  ASSERT_UEQ(1, lm.counters[FLEET_METRIC_LOCK_ACQUISITIONS]);
  ASSERT_UEQ(1, lm.counters[FLEET_METRIC_LOCK_RENEWALS]);
  ASSERT_UEQ(0, lm.counters[FLEET_METRIC_LOCK_LOSSES]);
  /* Not renewed again: the lease runs out and is lost. */
  ASSERT(fleet_test_wait_count(&t.c.loop, &t.lost, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(fleet_metrics_read((fleet_handle_t *)&t.lock, &lm));
  ASSERT_UEQ(1, lm.counters[FLEET_METRIC_LOCK_LOSSES]);
  text = prom_render(&t.c.client);
  ASSERT(prom_value(
             text,
             "fleet_lock_acquisitions_total{kind=\"lock\",name=\"ml\"}") == 1);
  ASSERT(prom_value(text,
                    "fleet_lock_renewals_total{kind=\"lock\",name=\"ml\"}") ==
         1);
  ASSERT(prom_value(text,
                    "fleet_lock_losses_total{kind=\"lock\",name=\"ml\"}") == 1);
  ASSERT_NULL(strstr(text, "fleet_jobs_"));
  fleet_metrics_free(text);
  ASSERT_OK(fleet_lock_close(&t.lock, lt_on_close));
  ASSERT(fleet_test_wait_count(&t.c.loop, &t.closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ctx_close(&t.c);
}

/* ------------------------------------------------------------------------ */
/* Units                                                                    */

TEST_IMPL(metrics_units) {
  fleet_metrics_t m;
  fleet__metrics_t blk;
  char out[64];
  unsigned i;

  /* Escaping of label values. */
  ASSERT_UEQ(10, fleet__prom_escape(out, sizeof(out), "a\"b\\c\nd", 7));
  ASSERT_STR_EQ("a\\\"b\\\\c\\nd", out);
  ASSERT_UEQ(3, fleet__prom_escape(out, sizeof(out), "abc", 3));
  ASSERT_STR_EQ("abc", out);
  /* Truncated, still terminated; the length needed is returned. */
  ASSERT_UEQ(4, fleet__prom_escape(out, 3, "a\\b", 3));
  ASSERT_UEQ(2, strlen(out));
  /* Buckets: 1 ms doubling, inclusive upper bounds, the last is open. */
  ASSERT_UEQ(1000, fleet_metrics_bucket_bound_us(0));
  ASSERT_UEQ(2000, fleet_metrics_bucket_bound_us(1));
  ASSERT_UEQ(UINT64_MAX, fleet_metrics_bucket_bound_us(FLEET_METRICS_BUCKETS));
  memset(&blk, 0, sizeof(blk));
  fleet__metrics_observe(&blk, FLEET_METRIC_JOB_LATENCY, 0);
  fleet__metrics_observe(&blk, FLEET_METRIC_JOB_LATENCY, 1000);
  fleet__metrics_observe(&blk, FLEET_METRIC_JOB_LATENCY, 1001);
  fleet__metrics_observe(&blk, FLEET_METRIC_JOB_LATENCY, UINT64_MAX / 2);
  ASSERT_UEQ(2, blk.histograms[FLEET_METRIC_JOB_LATENCY].buckets[0]);
  ASSERT_UEQ(1, blk.histograms[FLEET_METRIC_JOB_LATENCY].buckets[1]);
  ASSERT_UEQ(
      1,
      blk.histograms[FLEET_METRIC_JOB_LATENCY].buckets[FLEET_METRICS_BUCKETS]);
  ASSERT_UEQ(4, blk.histograms[FLEET_METRIC_JOB_LATENCY].count);
  hist_check(&blk.histograms[FLEET_METRIC_JOB_LATENCY]);
  for (i = 0; i < FLEET_METRIC_COUNTER_MAX; i++)
    ASSERT_NE(0, prom_name(fleet_metric_counter_name(i)) ==
                     strlen(fleet_metric_counter_name(i)));
  ASSERT_STR_EQ("unknown", fleet_metric_counter_name(FLEET_METRIC_COUNTER_MAX));
  ASSERT_STR_EQ("job_claim_to_complete_seconds",
                fleet_metric_histogram_name(FLEET_METRIC_JOB_LATENCY));
  ASSERT_ERR(FLEET_EINVAL, fleet_metrics_read(NULL, &m));
  ASSERT_ERR(FLEET_EINVAL, fleet_metrics_prometheus(NULL, NULL, NULL));
  return 0;
}

/* Label values are escaped in the exposition. */
TEST_IMPL(metrics_label_escape) {
  client_ctx_t c;
  fleet_queue_t q;
  fleet_handle_t *qh = (fleet_handle_t *)&q;
  char *text;
  int closed = 0;

  ctx_init(&c, "memory://", NULL);
  ASSERT_OK(fleet_queue_init(&c.client, &q, "we\"ird\\q\nx", NULL));
  q.data = &closed;
  text = prom_render(&c.client);
  ASSERT(prom_value(text, "fleet_jobs_enqueued_total"
                          "{kind=\"queue\",name=\"we\\\"ird\\\\q\\nx\"}") == 0);
  fleet_metrics_free(text);
  ASSERT_OK(fleet_close(qh, NULL));
  ctx_close(&c);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Leader: its lock counts into the leader                                  */

typedef struct {
  client_ctx_t c;
  fleet_leader_t ld;
  int elected, closed;
} ldt_t;

static void ldt_elected(fleet_leader_t *ld, uint64_t token) {
  ((ldt_t *)ld->data)->elected++;
}

static void ldt_demoted(fleet_leader_t *ld, int status) {
  (void)ld;
  (void)status;
}

static void ldt_on_close(fleet_handle_t *h) {
  ((ldt_t *)h->data)->closed++;
}

/* Whether the leader's renewals have been counted `*(int *)` times. */
typedef struct {
  ldt_t *t;
  uint64_t want;
} ldt_wait_t;

static int ldt_renewed(void *arg) {
  ldt_wait_t *w = arg;
  fleet_metrics_t m;

  ASSERT_OK(fleet_metrics_read((fleet_handle_t *)&w->t->ld, &m));
  return m.counters[FLEET_METRIC_LOCK_RENEWALS] >= w->want;
}

CONFORMANCE_IMPL(metrics_leader_counters) {
  fleet_leader_options_t o;
  fleet_metrics_t m;
  ldt_wait_t w;
  char *text;
  ldt_t t;

  memset(&t, 0, sizeof(t));
  ctx_init(&t.c, b->url, NULL);
  fleet_leader_options_init(&o);
  o.renew_interval_ms = 50;
  o.elected_cb = ldt_elected;
  o.demoted_cb = ldt_demoted;
  t.ld.data = &t;
  ASSERT_OK(fleet_leader_init(&t.c.client, &t.ld, "boss", "me", 5000, &o));
  ASSERT_OK(fleet_leader_campaign(&t.ld));
  ASSERT(fleet_test_wait_count(&t.c.loop, &t.elected, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  w.t = &t;
  w.want = 2;
  ASSERT(fleet_test_run_until(&t.c.loop, ldt_renewed, &w,
                              fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(fleet_metrics_read((fleet_handle_t *)&t.ld, &m));
  ASSERT_EQ(FLEET_HANDLE_LEADER, m.type);
  ASSERT_MEM_EQ("boss", m.name, m.name_len);
  ASSERT_UEQ(1, m.counters[FLEET_METRIC_LOCK_ACQUISITIONS]);
  ASSERT_UEQ(0, m.counters[FLEET_METRIC_LOCK_LOSSES]);
  text = prom_render(&t.c.client);
  ASSERT(prom_value(
             text,
             "fleet_lock_acquisitions_total{kind=\"leader\",name=\"boss\"}") ==
         1);
  ASSERT(prom_value(
             text,
             "fleet_lock_renewals_total{kind=\"leader\",name=\"boss\"}") >= 2);
  /* The leader's own lock is internal: not a series of its own. */
  ASSERT_NULL(strstr(text, "kind=\"lock\""));
  fleet_metrics_free(text);
  ASSERT_OK(fleet_leader_close(&t.ld, ldt_on_close));
  ASSERT(fleet_test_wait_count(&t.c.loop, &t.closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ctx_close(&t.c);
}

/* ------------------------------------------------------------------------ */
/* Cron scheduler: fires and lateness                                       */

typedef struct {
  client_ctx_t c;
  fleet_cron_scheduler_t s;
  int fired, done, status, closed;
  uint64_t late_us; /* the sum of dispatched_ms - fire_ms seen, in us */
} ct_t;

static void ct_on_fire(fleet_cron_scheduler_t *s, fleet_cron_fire_t *fire) {
  ct_t *t = s->data;

  ASSERT_GE(fire->dispatched_ms, fire->fire_ms);
  t->late_us += (uint64_t)(fire->dispatched_ms - fire->fire_ms) * 1000;
  t->fired++;
  ASSERT_OK(fleet_cron_complete(fire, NULL));
}

static void ct_on_status(fleet_handle_t *h, int status, void *arg) {
  ct_t *t = arg;
  t->status = status;
  t->done++;
}

static void ct_on_close(fleet_handle_t *h) {
  ((ct_t *)h->data)->closed++;
}

CONFORMANCE_IMPL(metrics_cron_counters) {
  fleet_cron_scheduler_options_t o;
  fleet_cron_def_t d;
  fleet_metrics_t m;
  char *text, line[128];
  ct_t t;

  memset(&t, 0, sizeof(t));
  ctx_init(&t.c, b->url, NULL);
  fleet_cron_scheduler_options_init(&o);
  o.check_ms = 200;
  t.s.data = &t;
  ASSERT_OK(fleet_cron_scheduler_init(&t.c.client, &t.s, "mns", "n1", &o));
  fleet_cron_def_init(&d);
  d.key = "every-second";
  d.expr = "* * * * * *";
  ASSERT_OK(fleet_cron_define(&t.s, &d, FLEET_CRON_UPSERT, NULL, 0,
                              ct_on_status, &t));
  ASSERT(fleet_test_wait_count(&t.c.loop, &t.done, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(t.status);
  ASSERT_OK(fleet_cron_scheduler_start(&t.s, ct_on_fire));
  ASSERT(fleet_test_wait_count(&t.c.loop, &t.fired, 2,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ASSERT_OK(fleet_metrics_read((fleet_handle_t *)&t.s, &m));
  ASSERT_EQ(FLEET_HANDLE_CRON_SCHEDULER, m.type);
  ASSERT_MEM_EQ("mns", m.name, m.name_len);
  /* Read inside no callback: every fire counted was delivered. */
  ASSERT_UEQ((uint64_t)t.fired, m.counters[FLEET_METRIC_CRON_FIRES]);
  ASSERT_UEQ((uint64_t)t.fired, m.histograms[FLEET_METRIC_CRON_LATENESS].count);
  ASSERT_UEQ(t.late_us, m.histograms[FLEET_METRIC_CRON_LATENESS].sum_us);
  hist_check(&m.histograms[FLEET_METRIC_CRON_LATENESS]);
  text = prom_render(&t.c.client);
  ASSERT(prom_value(
             text,
             "fleet_cron_fires_total{kind=\"cron\",cron_namespace=\"mns\"}") ==
         (double)t.fired);
  snprintf(line, sizeof(line), "%llu.%06llu",
           (unsigned long long)(t.late_us / 1000000),
           (unsigned long long)(t.late_us % 1000000));
  ASSERT(prom_value(text, "fleet_cron_lateness_seconds_sum"
                          "{kind=\"cron\",cron_namespace=\"mns\"}") ==
         strtod(line, NULL));
  fleet_metrics_free(text);
  ASSERT_OK(fleet_cron_scheduler_close(&t.s, ct_on_close));
  ASSERT(fleet_test_wait_count(&t.c.loop, &t.closed, 1,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ctx_close(&t.c);
}

/* ------------------------------------------------------------------------ */
/* Series: handles of one type and name are summed, others kept apart       */

static void sg_on_enqueue(fleet_queue_t *q, int status,
                          const fleet_enqueue_result_t *res, size_t n,
                          void *ud) {
  ASSERT_OK(status);
  *(int *)ud += (int)n;
}

static void sg_on_close(fleet_handle_t *h) {
  (*(int *)h->data)++;
}

TEST_IMPL(metrics_series_grouping) {
  static const char *const names[] = {"b", "a", "c", "a", "b", "a"};
  fleet_queue_t q[6];
  fleet_lock_t lock;
  fleet_job_spec_t spec;
  client_ctx_t c;
  char *text;
  int i, enq = 0, want = 0, closed = 0;

  ctx_init(&c, "memory://", NULL);
  /* A lock named "a" in the middle: its label differs, no mixing. */
  ASSERT_OK(fleet_lock_init(&c.client, &lock, "a", "me", 1000, NULL));
  lock.data = &closed;
  fleet_job_spec_init(&spec, "t", "x", 1);
  for (i = 0; i < 6; i++) {
    int k;
    q[i].data = &closed;
    ASSERT_OK(fleet_queue_init(&c.client, &q[i], names[i], NULL));
    for (k = 0; k <= i; k++) /* queue i enqueues i + 1 jobs */
      ASSERT_OK(fleet_queue_enqueue(&q[i], &spec, 1, sg_on_enqueue, &enq));
    want += i + 1;
  }
  ASSERT(fleet_test_wait_count(&c.loop, &enq, want,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  text = prom_render(&c.client);
  /* a: 2 + 4 + 6, b: 1 + 5, c: 3 */
  ASSERT(prom_value(text,
                    "fleet_jobs_enqueued_total{kind=\"queue\",name=\"a\"}") ==
         12);
  ASSERT(prom_value(text,
                    "fleet_jobs_enqueued_total{kind=\"queue\",name=\"b\"}") ==
         6);
  ASSERT(prom_value(text,
                    "fleet_jobs_enqueued_total{kind=\"queue\",name=\"c\"}") ==
         3);
  ASSERT(prom_value(
             text, "fleet_lock_acquisitions_total{kind=\"lock\",name=\"a\"}") ==
         0);
  /* Each series once. */
  ASSERT_NULL(strstr(
      strstr(text, "fleet_jobs_enqueued_total{kind=\"queue\",name=\"a\"}") + 1,
      "fleet_jobs_enqueued_total{kind=\"queue\",name=\"a\"}"));
  ASSERT_NULL(strstr(
      strstr(text, "fleet_jobs_enqueued_total{kind=\"queue\",name=\"b\"}") + 1,
      "fleet_jobs_enqueued_total{kind=\"queue\",name=\"b\"}"));
  /* fleet_build_info, 3 enqueued series, 1 for each of the 3 lock
   * families. */
  ASSERT_EQ(7, prom_check(text));
  fleet_metrics_free(text);
  for (i = 0; i < 6; i++)
    ASSERT_OK(fleet_queue_close(&q[i], sg_on_close));
  ASSERT_OK(fleet_lock_close(&lock, sg_on_close));
  ASSERT(fleet_test_wait_count(&c.loop, &closed, 7,
                               fleet_test_ms(FLEET_TEST_WAIT_MS)));
  ctx_close(&c);
  return 0;
}
