/* metrics.c -- per-handle counters and histograms (the block lives in the
 * handle base, see metrics_int.h) and their Prometheus text exposition. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "handle.h"

/* Each metric's name and help line, by the order of its map. */
typedef struct {
  const char *name;
  const char *help;
} metric_text_t;

#define METRIC_TEXT(name, str, help) {str, help},
static const metric_text_t counter_text[] = {
    FLEET_METRIC_COUNTER_MAP(METRIC_TEXT)};
static const metric_text_t histogram_text[] = {
    FLEET_METRIC_HISTOGRAM_MAP(METRIC_TEXT)};
#undef METRIC_TEXT

#define TYPE_BIT(t) (1u << FLEET_HANDLE_##t)

/* The handle types each counter and histogram applies to. */
static const unsigned counter_types[FLEET_METRIC_COUNTER_MAX] = {
    [FLEET_METRIC_JOBS_ENQUEUED] = TYPE_BIT(QUEUE),
    [FLEET_METRIC_JOBS_CLAIMED] = TYPE_BIT(WORKER),
    [FLEET_METRIC_JOBS_COMPLETED] = TYPE_BIT(WORKER),
    [FLEET_METRIC_JOBS_FAILED] = TYPE_BIT(WORKER),
    [FLEET_METRIC_JOBS_RETRIED] = TYPE_BIT(WORKER),
    [FLEET_METRIC_JOBS_RECOVERED] = TYPE_BIT(WORKER),
    [FLEET_METRIC_JOBS_LOST] = TYPE_BIT(WORKER),
    [FLEET_METRIC_LOCK_ACQUISITIONS] = TYPE_BIT(LOCK) | TYPE_BIT(LEADER),
    [FLEET_METRIC_LOCK_RENEWALS] = TYPE_BIT(LOCK) | TYPE_BIT(LEADER),
    [FLEET_METRIC_LOCK_LOSSES] = TYPE_BIT(LOCK) | TYPE_BIT(LEADER),
    [FLEET_METRIC_POOL_DISPATCHES] = TYPE_BIT(POOL_NODE),
    [FLEET_METRIC_CRON_FIRES] = TYPE_BIT(CRON_SCHEDULER),
};
static const unsigned histogram_types[FLEET_METRIC_HISTOGRAM_MAX] = {
    [FLEET_METRIC_JOB_LATENCY] = TYPE_BIT(WORKER),
    [FLEET_METRIC_CRON_LATENESS] = TYPE_BIT(CRON_SCHEDULER),
    [FLEET_METRIC_JOB_WAIT] = TYPE_BIT(WORKER),
};

/* The labels of a handle's series (docs/metrics.md, "Labels"): `kind`,
 * its type as the tools name it (a worker's series is its queue's), and
 * its name under `name`, but a cron scheduler's under `cron_namespace`
 * (Prometheus keeps `namespace` for its targets). */
static const char *kind_label(fleet_handle_type_t t) {
  switch (t) {
    case FLEET_HANDLE_QUEUE:
    case FLEET_HANDLE_WORKER:
      return "queue";
    case FLEET_HANDLE_LOCK:
      return "lock";
    case FLEET_HANDLE_LEADER:
      return "leader";
    case FLEET_HANDLE_POOL_NODE:
      return "pool";
    case FLEET_HANDLE_CRON_SCHEDULER:
      return "cron";
    default:
      return "other";
  }
}

static const char *name_label(fleet_handle_type_t t) {
  return t == FLEET_HANDLE_CRON_SCHEDULER ? "cron_namespace" : "name";
}

const char *fleet_metric_counter_name(fleet_metric_counter_t m) {
  return (unsigned)m < FLEET_METRIC_COUNTER_MAX ? counter_text[m].name
                                                : "unknown";
}

const char *fleet_metric_histogram_name(fleet_metric_histogram_t m) {
  return (unsigned)m < FLEET_METRIC_HISTOGRAM_MAX ? histogram_text[m].name
                                                  : "unknown";
}

uint64_t fleet_metrics_bucket_bound_us(unsigned i) {
  return i < FLEET_METRICS_BUCKETS ? (uint64_t)1000 << i : UINT64_MAX;
}

void fleet__metrics_observe(fleet__metrics_t *m, fleet_metric_histogram_t hg,
                            uint64_t us) {
  fleet_histogram_t *h;
  unsigned i = 0;

  if (m == NULL)
    return;
  h = &m->histograms[hg];
  while (i < FLEET_METRICS_BUCKETS && us > fleet_metrics_bucket_bound_us(i))
    i++;
  h->buckets[i]++;
  h->count++;
  h->sum_us += us;
}

void fleet__metrics_add_type(fleet__metrics_t *m, fleet_metric_counter_t c,
                             const char *type, size_t len, uint64_t n) {
  size_t i;

  if (m == NULL)
    return;
  m->counters[c] += n;
  if (m->types == NULL &&
      (m->types = calloc(FLEET__METRICS_TYPES + 1, sizeof(*m->types))) == NULL)
    return;
  for (i = 0; i < m->ntypes; i++)
    if (m->types[i].len == len && memcmp(m->types[i].name, type, len) == 0)
      break;
  if (i == m->ntypes) {
    if (m->ntypes < FLEET__METRICS_TYPES && len > 0 &&
        len <= FLEET__METRICS_TYPE_MAX) {
      memcpy(m->types[i].name, type, len);
      m->types[i].len = len;
      m->ntypes++;
    } else {
      i = FLEET__METRICS_TYPES;
    }
  }
  m->types[i].counters[c] += n;
}

void fleet__metrics_free(fleet__metrics_t *m) {
  free(m->types);
  m->types = NULL;
  m->ntypes = 0;
}

void fleet__metrics_name_from_tag(fleet__metrics_t *m, const char *tag,
                                  size_t tag_len, size_t prefix_len) {
  /* "{" prefix ":" name "}" */
  if (tag_len < prefix_len + 3)
    return;
  m->name = tag + prefix_len + 2;
  m->name_len = tag_len - prefix_len - 3;
}

int fleet_metrics_read(const fleet_handle_t *handle, fleet_metrics_t *out) {
  const fleet__handle_t *h;

  if (handle == NULL || out == NULL || handle->internal_ == NULL)
    return FLEET_EINVAL;
  h = handle->internal_;
  memset(out, 0, sizeof(*out));
  out->type = handle->type;
  out->name = h->mblock.name != NULL ? h->mblock.name : "";
  out->name_len = h->mblock.name_len;
  memcpy(out->counters, h->mblock.counters, sizeof(out->counters));
  memcpy(out->histograms, h->mblock.histograms, sizeof(out->histograms));
  return 0;
}

size_t fleet__prom_escape(char *out, size_t cap, const char *v, size_t len) {
  size_t need = 0, i;

  for (i = 0; i < len; i++) {
    char pair[2] = {'\\', 0};
    size_t k = 2;
    switch (v[i]) {
      case '\\':
        pair[1] = '\\';
        break;
      case '"':
        pair[1] = '"';
        break;
      case '\n':
        pair[1] = 'n';
        break;
      default:
        pair[0] = v[i];
        k = 1;
    }
    if (need + k < cap)
      memcpy(out + need, pair, k);
    need += k;
  }
  if (cap > 0)
    out[need < cap ? need : cap - 1] = '\0';
  return need;
}

/* ------------------------------------------------------------------------ */
/* Exposition                                                               */

typedef struct {
  char *p;
  size_t len, cap;
  int err;
} buf_t;

static void buf_reserve(buf_t *b, size_t more) {
  size_t cap;
  char *p;

  if (b->err != 0 || b->len + more + 1 <= b->cap)
    return;
  cap = b->cap > 0 ? b->cap : 1024;
  while (cap < b->len + more + 1)
    cap *= 2;
  if ((p = realloc(b->p, cap)) == NULL) {
    b->err = FLEET_ENOMEM;
    return;
  }
  b->p = p;
  b->cap = cap;
}

static void buf_printf(buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void buf_printf(buf_t *b, const char *fmt, ...) {
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->err = FLEET_ENOMEM;
    return;
  }
  buf_reserve(b, (size_t)n);
  if (b->err != 0)
    return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* Appends `{kind="...",name="escaped name"` (without the closing
 * brace). */
static void buf_label(buf_t *b, const fleet__metrics_t *m,
                      fleet_handle_type_t t) {
  size_t n = fleet__prom_escape(NULL, 0, m->name, m->name_len);

  buf_printf(b, "{kind=\"%s\",%s=\"", kind_label(t), name_label(t));
  buf_reserve(b, n);
  if (b->err != 0)
    return;
  fleet__prom_escape(b->p + b->len, n + 1, m->name, m->name_len);
  b->len += n;
  buf_printf(b, "\"");
}

/* The handles shown, as fleet_client_walk() would. */
typedef struct {
  const fleet__handle_t **h;
  size_t n, cap;
  int err;
} hlist_t;

static void collect(fleet_handle_t *handle, void *arg) {
  hlist_t *l = arg;

  if (l->err != 0)
    return;
  if (l->n == l->cap) {
    size_t cap = l->cap > 0 ? 2 * l->cap : 16;
    const fleet__handle_t **p = realloc(l->h, cap * sizeof(*p));
    if (p == NULL) {
      l->err = FLEET_ENOMEM;
      return;
    }
    l->h = p;
    l->cap = cap;
  }
  l->h[l->n++] = handle->internal_;
}

/* Orders handles by kind, then name: the handles of one series are
 * neighbours among those a family applies to. */
static int series_cmp(const void *pa, const void *pb) {
  const fleet__handle_t *a = *(const fleet__handle_t *const *)pa;
  const fleet__handle_t *b = *(const fleet__handle_t *const *)pb;
  size_t n = a->mblock.name_len < b->mblock.name_len ? a->mblock.name_len
                                                     : b->mblock.name_len;
  int r = strcmp(kind_label(a->vt->type), kind_label(b->vt->type));

  if (r == 0 && n > 0)
    r = memcmp(a->mblock.name, b->mblock.name, n);
  if (r == 0)
    r = a->mblock.name_len < b->mblock.name_len
            ? -1
            : a->mblock.name_len > b->mblock.name_len;
  return r;
}

static int same_series(const fleet__handle_t *a, const fleet__handle_t *b) {
  return series_cmp(&a, &b) == 0;
}

/* The next handle from `i` on that `types` applies to, or l->n. */
static size_t next_of(const hlist_t *l, size_t i, unsigned types) {
  while (i < l->n && !(types & (1u << l->h[i]->vt->type)))
    i++;
  return i;
}

/* Handles [i, *end) of `types` (others skipped) form one series. */
static size_t series_end(const hlist_t *l, size_t i, unsigned types) {
  size_t j = next_of(l, i + 1, types);

  while (j < l->n && same_series(l->h[i], l->h[j]))
    j = next_of(l, j + 1, types);
  return j;
}

/* The counters a worker counts by job type. */
static int counter_typed(fleet_metric_counter_t c) {
  return c == FLEET_METRIC_JOBS_CLAIMED || c == FLEET_METRIC_JOBS_COMPLETED ||
         c == FLEET_METRIC_JOBS_FAILED || c == FLEET_METRIC_JOBS_RETRIED ||
         c == FLEET_METRIC_JOBS_LOST;
}

/* One job type's sum over the handles of a series. */
typedef struct {
  const char *name;
  size_t len;
  uint64_t v;
} typed_t;

/* The series of counter `c` by job type over the handles [i, end) of one
 * series: one line per type any of them saw, summed over them, then the
 * "other" slot when it counted. */
static void render_typed(buf_t *b, const hlist_t *l, size_t i, size_t end,
                         unsigned types, fleet_metric_counter_t c) {
  const fleet__metrics_t *mj;
  typed_t *acc = NULL, *p;
  size_t na = 0, cap = 0, j, k, x, n;
  uint64_t other = 0;
  char *esc;

  for (j = i; j < end && b->err == 0; j = next_of(l, j + 1, types)) {
    mj = &l->h[j]->mblock;
    for (k = 0; mj->types != NULL && k < mj->ntypes; k++) {
      const fleet__metrics_type_t *t = &mj->types[k];

      for (x = 0; x < na; x++)
        if (acc[x].len == t->len && memcmp(acc[x].name, t->name, t->len) == 0)
          break;
      if (x == na) {
        if (na == cap) {
          cap = cap > 0 ? 2 * cap : 16;
          if ((p = realloc(acc, cap * sizeof(*acc))) == NULL) {
            b->err = FLEET_ENOMEM;
            break;
          }
          acc = p;
        }
        acc[na].name = t->name;
        acc[na].len = t->len;
        acc[na++].v = 0;
      }
      acc[x].v += t->counters[c];
    }
    if (mj->types != NULL)
      other += mj->types[FLEET__METRICS_TYPES].counters[c];
  }
  for (x = 0; x < na && b->err == 0; x++) {
    n = fleet__prom_escape(NULL, 0, acc[x].name, acc[x].len);
    if ((esc = malloc(n + 1)) == NULL) {
      b->err = FLEET_ENOMEM;
      break;
    }
    fleet__prom_escape(esc, n + 1, acc[x].name, acc[x].len);
    buf_printf(b, "fleet_%s", counter_text[c].name);
    buf_label(b, &l->h[i]->mblock, l->h[i]->vt->type);
    buf_printf(b, ",type=\"%s\"} %llu\n", esc, (unsigned long long)acc[x].v);
    free(esc);
  }
  if (other > 0 && b->err == 0) {
    buf_printf(b, "fleet_%s", counter_text[c].name);
    buf_label(b, &l->h[i]->mblock, l->h[i]->vt->type);
    buf_printf(b, ",type=\"%s\"} %llu\n", FLEET__METRICS_TYPE_OTHER,
               (unsigned long long)other);
  }
  free(acc);
}

static void render_counter(buf_t *b, const hlist_t *l,
                           fleet_metric_counter_t c) {
  unsigned types = counter_types[c];
  size_t i, j, end;
  int any = 0;

  for (i = next_of(l, 0, types); i < l->n; i = end) {
    uint64_t v = 0;
    end = series_end(l, i, types);
    for (j = i; j < end; j = next_of(l, j + 1, types))
      v += l->h[j]->mblock.counters[c];
    if (!any) {
      buf_printf(b, "# HELP fleet_%s %s\n# TYPE fleet_%s counter\n",
                 counter_text[c].name, counter_text[c].help,
                 counter_text[c].name);
      any = 1;
    }
    if (counter_typed(c)) {
      render_typed(b, l, i, end, types, c);
      continue;
    }
    buf_printf(b, "fleet_%s", counter_text[c].name);
    buf_label(b, &l->h[i]->mblock, l->h[i]->vt->type);
    buf_printf(b, "} %llu\n", (unsigned long long)v);
  }
}

static void render_histogram(buf_t *b, const hlist_t *l,
                             fleet_metric_histogram_t hg) {
  unsigned types = histogram_types[hg];
  const char *name = histogram_text[hg].name;
  size_t i, j, k, end;
  int any = 0;

  for (i = next_of(l, 0, types); i < l->n; i = end) {
    fleet_histogram_t sum;
    uint64_t cum = 0;
    const fleet__metrics_t *m = &l->h[i]->mblock;
    fleet_handle_type_t t = l->h[i]->vt->type;

    end = series_end(l, i, types);
    memset(&sum, 0, sizeof(sum));
    for (j = i; j < end; j = next_of(l, j + 1, types)) {
      const fleet_histogram_t *h = &l->h[j]->mblock.histograms[hg];
      sum.count += h->count;
      sum.sum_us += h->sum_us;
      for (k = 0; k <= FLEET_METRICS_BUCKETS; k++)
        sum.buckets[k] += h->buckets[k];
    }
    if (!any) {
      buf_printf(b, "# HELP fleet_%s %s\n# TYPE fleet_%s histogram\n", name,
                 histogram_text[hg].help, name);
      any = 1;
    }
    for (k = 0; k <= FLEET_METRICS_BUCKETS; k++) {
      uint64_t bound = fleet_metrics_bucket_bound_us((unsigned)k);
      cum += sum.buckets[k];
      buf_printf(b, "fleet_%s_bucket", name);
      buf_label(b, m, t);
      if (k < FLEET_METRICS_BUCKETS)
        buf_printf(b, ",le=\"%llu.%03llu\"} %llu\n",
                   (unsigned long long)(bound / 1000000),
                   (unsigned long long)(bound % 1000000 / 1000),
                   (unsigned long long)cum);
      else
        buf_printf(b, ",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    }
    buf_printf(b, "fleet_%s_sum", name);
    buf_label(b, m, t);
    buf_printf(b, "} %llu.%06llu\n", (unsigned long long)(sum.sum_us / 1000000),
               (unsigned long long)(sum.sum_us % 1000000));
    buf_printf(b, "fleet_%s_count", name);
    buf_label(b, m, t);
    buf_printf(b, "} %llu\n", (unsigned long long)sum.count);
  }
}

int fleet_metrics_prometheus(fleet_client_t *client, char **text, size_t *len) {
  hlist_t l = {0};
  buf_t b = {0};
  unsigned i;

  if (client == NULL || client->internal_ == NULL || text == NULL)
    return FLEET_EINVAL;
  fleet_client_walk(client, collect, &l);
  if (l.err != 0) {
    free(l.h);
    return l.err;
  }
  if (l.n > 1)
    qsort(l.h, l.n, sizeof(*l.h), series_cmp);
  buf_reserve(&b, 0);
  buf_printf(&b,
             "# HELP fleet_build_info The fleet library version.\n"
             "# TYPE fleet_build_info gauge\n"
             "fleet_build_info{version=\"%s\"} 1\n",
             fleet_version_string());
  for (i = 0; i < FLEET_METRIC_COUNTER_MAX; i++)
    render_counter(&b, &l, (fleet_metric_counter_t)i);
  for (i = 0; i < FLEET_METRIC_HISTOGRAM_MAX; i++)
    render_histogram(&b, &l, (fleet_metric_histogram_t)i);
  free(l.h);
  if (b.err != 0) {
    free(b.p);
    return b.err;
  }
  b.p[b.len] = '\0';
  *text = b.p;
  if (len != NULL)
    *len = b.len;
  return 0;
}

void fleet_metrics_free(char *text) {
  free(text);
}
