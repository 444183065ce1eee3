/* cron_sched.c -- the cron scheduler: a copy of the namespace's registry,
 * kept current through the change channel and a periodic revision check,
 * one timer armed for the earliest next occurrence of its enabled
 * definitions, and CRON_FIRE calls that claim occurrences by the server
 * clock (docs/cron.md).
 *
 * The definitions themselves (reading, viewing, their occurrences' tag)
 * are in cron_sched_def.c; the registry calls the user makes in
 * cron_registry.c.
 *
 * Every node sends every occurrence it sees come due; the script gives
 * each to one of them and the others hear "logged already". Between server
 * readings the node estimates the server's time from its loop clock; the
 * script, not the estimate, decides whether an occurrence is due. */
#include <stdlib.h>
#include <string.h>

#include "cron_sched_int.h"
#include "core/batcher.h"

/* The first delay after a failed fire or reload, in ms. */
#define CRON_BACKOFF_MIN_MS 50
#define CRON_BACKOFF_MAX_MS 5000
/* The most occurrences a definition enumerates in one pass. */
#define CRON_SCAN_MAX 200000
/* The most occurrences within the grace sent in one call. */
#define CRON_DUE_MAX 64
/* Claiming ahead: the burst model before anything was measured (a
 * burst's fixed ms, and ms per definition), the least burst that
 * measures the part per definition, and the margin of every lead (ms). */
#define CRON_BURST_FIXED_MS 2.0
#define CRON_BURST_DEF_MS 0.05
#define CRON_BURST_MIN_DEFS 64
#define CRON_LEAD_MARGIN_MS 2.0

struct fleet__cron_fire_s {
  fleet_cron_fire_t pub;
  /* On the scheduler's fires once given to the user; before, while it is
   * claimed ahead of its time, on its held ones (by fire_ms). */
  fleet__list_t node;
  fleet__cron_sched_t *s;
  fleet__key_t tag;
  char *key, *queue, *pool;
  size_t key_len;
  void *payload;
  /* Held: its definition's creation, and the uv_hrtime() by which the
   * server's clock is at its fire time. */
  int64_t created_ms;
  uint64_t due;
};

/* What an occurrence is told to the user with: a definition's copy, kept
 * by a pool dispatch until the pool has answered. */
typedef struct {
  char *key;
  size_t key_len;
  char *queue, *pool; /* NULL: none */
  void *payload;
  size_t payload_len;
  fleet__key_t tag;
} cron_what_t;

/* A pool job dispatched for an occurrence, waiting for the pool's answer.
 * The scheduler may close first: `s` is then NULL and the answer only
 * frees it. */
typedef struct {
  fleet__list_t node; /* on the scheduler's dispatches */
  fleet__cron_sched_t *s;
  cron_what_t what;
  int64_t fire_ms, dispatched;
  uint64_t token;
} cron_dispatch_t;

typedef fleet__cron_req_t cron_req_t;

static fleet__cron_sched_t *sched_of(const fleet_cron_scheduler_t *s) {
  return (fleet__cron_sched_t *)fleet__handle_of(s,
                                                 FLEET_HANDLE_CRON_SCHEDULER);
}

int fleet__cron_call(fleet__cron_sched_t *s, const fleet__call_t *call,
                     const fleet__key_t *tag, fleet__fn_t cb, void *user_data) {
  fleet_bytes_t key = fleet__key_bytes(tag);

  return fleet__call(&s->base, call, cb, user_data, &key, 1, s->args.argv,
                     s->args.argc);
}

/* The server time now, as the scheduler estimates it. */
static int64_t sched_now(const fleet__cron_sched_t *s) {
  return s->srv_ms + (int64_t)(uv_now(s->base.loop) - s->srv_at);
}

/* A server reading: `server_ms` now. It also bounds how far the
 * server's clock is behind uv_hrtime(): the server read it before its
 * answer came, so by no more than uv_hrtime() now minus server_ms (the
 * smallest such bound of the last 10 s is kept, for occurrences claimed
 * ahead: each is handed out when uv_hrtime() passes its fire time plus
 * that bound, so never before its time by the server's clock). */
static void sched_set_clock(fleet__cron_sched_t *s, int64_t server_ms) {
  uint64_t hr = uv_hrtime();
  int64_t off = (int64_t)hr - server_ms * 1000000;

  s->srv_ms = server_ms;
  s->srv_at = uv_now(s->base.loop);
  s->have_clock = 1;
  if (!s->have_off || off < s->off || hr - s->off_at > 10000000000u) {
    s->off = off;
    s->off_at = hr;
    s->have_off = 1;
  }
}

/* ------------------------------------------------------------------------ */
/* Definitions                                                              */

/* The definition of `key` in the copy, or NULL. */
static fleet__cron_def_t *def_find(fleet__cron_sched_t *s, const char *key,
                                   size_t len) {
  fleet__cron_def_t probe, *pp = &probe, **hit;

  if (s->ndefs == 0)
    return NULL;
  probe.key = (char *)key;
  probe.key_len = len;
  hit = bsearch(&pp, s->defs, s->ndefs, sizeof(*s->defs), fleet__cron_def_cmp);
  return hit != NULL ? *hit : NULL;
}

static void def_drop(fleet__cron_def_t *d) {
  d->gone = 1;
  fleet__cron_def_unref(d);
}

/* The next occurrence of `d` after its cursor within its bounds, or -1
 * (none, finished, or its expression does not parse here). */
static void def_next(fleet__cron_def_t *d) {
  if (d->cron == NULL ||
      fleet__cron_def_next(d, d->cron, d->cursor, &d->next) != 0)
    d->next = -1;
}

/* ------------------------------------------------------------------------ */
/* The timer                                                                */

static void sched_on_timer(uv_timer_t *t);

static int def_live(const fleet__cron_def_t *d) {
  return d->enabled && d->cron != NULL && d->next >= 0 && !d->busy &&
         (d->pool[0] == '\0' || d->pool_node != NULL);
}

/* Whether the occurrences of `d` are claimed ahead of their time: a
 * callback definition's (a queue's job and a pool's dispatch are made
 * when the occurrence is claimed). */
static int def_ahead(const fleet__cron_def_t *d) {
  return d->queue[0] == '\0' && d->pool[0] == '\0';
}

/* When the timer claims the next occurrence of `d` (server ms): a callback
 * definition's the lead before its time; not before a backoff ends. */
static int64_t def_claim_at(const fleet__cron_sched_t *s,
                            const fleet__cron_def_t *d) {
  int64_t at = def_ahead(d) ? d->next - s->lead : d->next;

  return at > d->retry_at ? at : d->retry_at;
}

/* Sets the lead: how long, by the burst model, the claims of the callback
 * definitions due first (with those due up to claim_ahead_ms after them)
 * will take, with a margin; at most claim_ahead_ms. A scan of all the
 * definitions, as sched_arm() makes. */
static void sched_lead(fleet__cron_sched_t *s) {
  int64_t first = -1, lim;
  size_t i, n = 0;
  double ms;

  s->lead = 0;
  if (s->opts.claim_ahead_ms == 0)
    return;
  for (i = 0; i < s->ndefs; i++) {
    const fleet__cron_def_t *d = s->defs[i];

    if (def_live(d) && def_ahead(d) && (first < 0 || d->next < first))
      first = d->next;
  }
  if (first < 0)
    return;
  lim = first + (int64_t)s->opts.claim_ahead_ms;
  for (i = 0; i < s->ndefs; i++)
    if (def_live(s->defs[i]) && def_ahead(s->defs[i]) &&
        s->defs[i]->next <= lim)
      n++;
  ms = CRON_LEAD_MARGIN_MS +
       1.5 * (s->burst_fixed_ms + (double)n * s->burst_def_ms);
  s->lead = ms < (double)s->opts.claim_ahead_ms ? (int64_t)ms
                                                : s->opts.claim_ahead_ms;
}

/* Arms the one timer for `at` (server ms). */
static void sched_arm_at(fleet__cron_sched_t *s, int64_t at) {
  int64_t now = sched_now(s);

  s->armed_at = at;
  uv_timer_start(&s->timer, sched_on_timer, (uint64_t)(at > now ? at - now : 0),
                 0);
}

/* Arms the one timer for the earliest definition: a scan of all of them
 * (and the lead's), after a reload, after each timer run and when a burst
 * of claims is answered. */
static void sched_arm(fleet__cron_sched_t *s) {
  int64_t first = -1;
  size_t i;

  if (!s->started || s->base.closing || !s->have_clock)
    return;
  sched_lead(s);
  for (i = 0; i < s->ndefs; i++) {
    fleet__cron_def_t *d = s->defs[i];

    if (def_live(d) && (first < 0 || def_claim_at(s, d) < first))
      first = def_claim_at(s, d);
  }
  if (first < 0) {
    s->armed_at = -1;
    uv_timer_stop(&s->timer);
    return;
  }
  sched_arm_at(s, first);
}

/* A definition is live again (its fire call was answered): the timer
 * stays where it is unless this one is due earlier. The timer is always
 * armed no later than the earliest live definition, so no scan is needed
 * (10 000 definitions due at once answer 10 000 times; the callback
 * definitions' fires are answered in bursts, and the burst's end arms the
 * timer with one scan, sched_burst_end()). */
static void sched_arm_def(fleet__cron_sched_t *s, const fleet__cron_def_t *d) {
  if (!s->started || s->base.closing || !s->have_clock || d == NULL ||
      !def_live(d))
    return;
  if (s->armed_at < 0 || def_claim_at(s, d) < s->armed_at)
    sched_arm_at(s, def_claim_at(s, d));
}

/* The last fire of a burst of claims was answered: the burst model learns
 * how long it took (its fixed part from bursts of a few definitions, its
 * part per definition from larger ones), and the timer is armed for what
 * comes next. */
static void sched_burst_end(fleet__cron_sched_t *s) {
  double ms = (double)(uv_now(s->base.loop) - s->burst_t0), per;

  if (s->burst_n < CRON_BURST_MIN_DEFS) {
    s->burst_fixed_ms = 0.5 * s->burst_fixed_ms + 0.5 * ms;
  } else {
    per = (ms - s->burst_fixed_ms) / (double)s->burst_n;
    s->burst_def_ms = 0.5 * s->burst_def_ms + 0.5 * (per > 0 ? per : 0);
  }
  sched_arm(s);
}

/* ------------------------------------------------------------------------ */
/* Fires                                                                    */

static void fire_free(fleet__cron_fire_t *f) {
  fleet__key_free(&f->tag);
  free(f->key);
  free(f->queue);
  free(f->pool);
  free(f->payload);
  free(f);
}

static void what_free(cron_what_t *w) {
  free(w->key);
  free(w->queue);
  free(w->pool);
  free(w->payload);
  fleet__key_free(&w->tag);
}

/* Copies what the user is told about an occurrence of `d` into `w`.
 * Returns 0 or FLEET_ENOMEM (then `w` holds nothing). */
static int what_copy(const fleet__cron_def_t *d, cron_what_t *w) {
  memset(w, 0, sizeof(*w));
  w->key = fleet__memdup(d->key, d->key_len);
  w->key_len = d->key_len;
  w->queue = d->queue[0] != '\0' ? fleet__strdup(d->queue) : NULL;
  w->pool = d->pool[0] != '\0' ? fleet__strdup(d->pool) : NULL;
  w->payload =
      fleet__memdup(d->payload != NULL ? d->payload : "", d->payload_len);
  w->payload_len = d->payload_len;
  w->tag.base = malloc(d->tag.len);
  if (w->key == NULL || w->payload == NULL || w->tag.base == NULL ||
      (d->queue[0] != '\0' && w->queue == NULL) ||
      (d->pool[0] != '\0' && w->pool == NULL)) {
    what_free(w);
    return FLEET_ENOMEM;
  }
  memcpy(w->tag.base, d->tag.base, d->tag.len);
  w->tag.len = w->tag.cap = d->tag.len;
  return 0;
}

/* A small ring of the latest occurrences. */
typedef struct {
  int64_t *t;
  size_t cap, n, head; /* head: the oldest */
  uint64_t dropped;
} ring_t;

static void ring_push(ring_t *r, int64_t t) {
  if (r->cap == 0) {
    r->dropped++;
    return;
  }
  if (r->n < r->cap) {
    r->t[(r->head + r->n++) % r->cap] = t;
    return;
  }
  r->t[r->head] = t;
  r->head = (r->head + 1) % r->cap;
  r->dropped++;
}

static int64_t ring_at(const ring_t *r, size_t i) {
  return r->t[(r->head + i) % r->cap];
}

/* After a failure to send or a failed fire: not before a backoff. */
static void def_backoff(fleet__cron_sched_t *s, fleet__cron_def_t *d,
                        int64_t now, int err) {
  d->retry_at = now + (int64_t)fleet__backoff_delay(
                          CRON_BACKOFF_MIN_MS, CRON_BACKOFF_MAX_MS, 20,
                          d->failures++, fleet__rng_next(&s->rng));
  fleet__handle_error(&s->base, err);
}

/* Sends a call of the scheduler's own on the registry, with the arguments
 * built in s->args (`err`: the error building them gave, if any); nobody
 * waits for it, and a failure to send reaches the error callback. Returns
 * 0 or the error. */
static int sched_send(fleet__cron_sched_t *s, const fleet__call_t *call,
                      int err) {
  if (err == 0)
    err = fleet__cron_call(s, call, &s->reg, NULL, NULL);
  if (err != 0)
    fleet__handle_error(&s->base, err);
  return err;
}

/* A call of the scheduler's own that nobody waits for, on the batcher, so
 * that those made in one loop phase share one call: a completion
 * (CRON_COMPLETE, on the occurrences' tag) or a "last fired" hint
 * (CRON_MARK, on the registry's). It owns copies of its arguments and
 * holds the handle until it is answered, so that a completion made right
 * before the scheduler closes is still recorded. */
#define CRON_QUIET_ARGS 5
typedef struct {
  fleet__batch_item_t item;
  fleet__cron_sched_t *s;
  fleet__key_t tag; /* a completion's occurrences' tag */
  fleet_bytes_t args[CRON_QUIET_ARGS];
  char *buf; /* the arguments' bytes */
} cron_quiet_t;

static void quiet_done(fleet__batch_item_t *it, int status,
                       const fleet__reply_t *head, const fleet__reply_t *elem,
                       uint64_t sent) {
  cron_quiet_t *q = FLEET__CONTAINER_OF(it, cron_quiet_t, item);
  fleet__cron_sched_t *s = q->s;
  int64_t v;

  (void)head;
  (void)sent;
  /* A completion of an entry fleet did not write (-2). */
  if (status == 0 && it->kind->op == FLEET__OP_CRON_COMPLETE &&
      (fleet__reply_i64(&elem[0], &v) != 0 || v == -2))
    status = FLEET_EPROTO;
  if (status != 0 && status != FLEET_ECANCELED && !s->base.closing)
    fleet__handle_error(&s->base, status);
  fleet__key_free(&q->tag);
  free(q->buf);
  free(q);
  fleet__handle_unhold(&s->base);
}

static void complete_fill_group(fleet__batch_item_t *it, fleet_bytes_t *keys,
                                fleet_bytes_t *args) {
  cron_quiet_t *q = FLEET__CONTAINER_OF(it, cron_quiet_t, item);

  (void)keys;
  args[0] = (fleet_bytes_t){q->s->ns, q->s->ns_len};
}

static void complete_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                          fleet_bytes_t *args) {
  cron_quiet_t *q = FLEET__CONTAINER_OF(it, cron_quiet_t, item);

  keys[0] = fleet__key_bytes(&q->tag);
  memcpy(args, q->args, 4 * sizeof(*args));
}

static const fleet__batch_kind_t complete_kind = {
    .op = FLEET__OP_CRON_COMPLETE,
    .group_args = 1,
    .item_keys = 1,
    .item_args = 4,
    .max_items = 256,
    .fill_group = complete_fill_group,
    .fill = complete_fill,
    .done = quiet_done,
};

static void mark_fill_group(fleet__batch_item_t *it, fleet_bytes_t *keys,
                            fleet_bytes_t *args) {
  cron_quiet_t *q = FLEET__CONTAINER_OF(it, cron_quiet_t, item);

  keys[0] = fleet__key_bytes(&q->s->reg);
  args[0] = (fleet_bytes_t){q->s->node, q->s->node_len};
}

static void mark_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                      fleet_bytes_t *args) {
  cron_quiet_t *q = FLEET__CONTAINER_OF(it, cron_quiet_t, item);

  (void)keys;
  memcpy(args, q->args, 5 * sizeof(*args));
}

static const fleet__batch_kind_t mark_kind = {
    .op = FLEET__OP_CRON_MARK,
    .group_keys = 1,
    .group_args = 1,
    .item_args = 5,
    .max_items = 256,
    .fill_group = mark_fill_group,
    .fill = mark_fill,
    .done = quiet_done,
};

/* Puts a quiet call of `kind` with the `n` arguments `args` (copied) on
 * the batcher; `tag` (copied) for a completion, else NULL. Returns 0 or
 * FLEET_ENOMEM. */
static int sched_quiet(fleet__cron_sched_t *s, const fleet__batch_kind_t *kind,
                       const fleet__key_t *tag, const fleet_bytes_t *args,
                       size_t n) {
  cron_quiet_t *q = calloc(1, sizeof(*q));
  size_t len = 0, i;
  char *p;
  int err;

  for (i = 0; i < n; i++)
    len += args[i].len;
  if (q == NULL || (q->buf = malloc(len > 0 ? len : 1)) == NULL) {
    free(q);
    return FLEET_ENOMEM;
  }
  for (i = 0, p = q->buf; i < n; p += args[i].len, i++) {
    if (args[i].len > 0)
      memcpy(p, args[i].base, args[i].len);
    q->args[i] = (fleet_bytes_t){p, args[i].len};
  }
  if (tag != NULL) {
    if ((q->tag.base = malloc(tag->len)) == NULL) {
      free(q->buf);
      free(q);
      return FLEET_ENOMEM;
    }
    memcpy(q->tag.base, tag->base, tag->len);
    q->tag.len = q->tag.cap = tag->len;
  }
  q->s = s;
  if ((err = fleet__batch_now(s->base.client, &q->item, kind, s)) != 0) {
    fleet__key_free(&q->tag);
    free(q->buf);
    free(q);
    return err;
  }
  fleet__handle_hold(&s->base);
  return 0;
}

void fleet__cron_mark(fleet__cron_sched_t *s, fleet__cron_def_t *d,
                      int64_t fire_ms, uint64_t token, uint64_t fired,
                      int done) {
  char num[3][24];
  fleet_bytes_t args[5];
  int err;

  /* Fires are counted only against a limit (fleet_cron_def_t.fires):
   * without one, the count a fire call answers is that call's, and
   * cron_mark.lua would read the definition's record for nothing. */
  if (d->max_fires == 0)
    fired = 0;
  if (fire_ms >= 0)
    snprintf(num[0], sizeof(num[0]), "%lld", (long long)fire_ms);
  else
    num[0][0] = '\0';
  snprintf(num[1], sizeof(num[1]), "%llu", (unsigned long long)token);
  snprintf(num[2], sizeof(num[2]), "%llu", (unsigned long long)fired);
  args[0] = (fleet_bytes_t){d->key, d->key_len};
  args[1] = (fleet_bytes_t){num[0], strlen(num[0])};
  args[2] = (fleet_bytes_t){num[1], strlen(num[1])};
  args[3] = (fleet_bytes_t){num[2], strlen(num[2])};
  args[4] = (fleet_bytes_t){done ? "1" : "", done ? 1u : 0u};
  if ((err = sched_quiet(s, &mark_kind, NULL, args, 5)) != 0)
    fleet__handle_error(&s->base, err);
}

/* A fire of the occurrence `fire_ms` with `token`, not given to the user
 * yet; it takes what `w` holds (w is empty after). NULL (w freed, the
 * error told) when out of memory. */
static fleet__cron_fire_t *fire_make(fleet__cron_sched_t *s, cron_what_t *w,
                                     int64_t fire_ms, uint64_t token) {
  fleet__cron_fire_t *f = calloc(1, sizeof(*f));

  if (f == NULL) {
    what_free(w);
    fleet__handle_error(&s->base, FLEET_ENOMEM);
    return NULL;
  }
  f->s = s;
  f->key = w->key;
  f->key_len = w->key_len;
  f->queue = w->queue;
  f->pool = w->pool;
  f->payload = w->payload;
  f->tag = w->tag;
  f->pub.key = f->key;
  f->pub.fire_ms = fire_ms;
  f->pub.token = token;
  f->pub.payload.base = f->payload;
  f->pub.payload.len = w->payload_len;
  f->pub.queue = f->queue;
  f->pub.pool = f->pool;
  f->pub.internal_ = f;
  fleet__list_init(&f->node);
  memset(w, 0, sizeof(*w));
  return f;
}

/* Gives the fire `f` to the user, handed out at `dispatched` (server
 * ms). */
static void fire_hand(fleet__cron_sched_t *s, fleet__cron_fire_t *f,
                      int64_t dispatched) {
  int64_t fire_ms = f->pub.fire_ms;

  fleet__metrics_add(s->base.metrics, FLEET_METRIC_CRON_FIRES, 1); /* metrics */
  fleet__metrics_observe(
      s->base.metrics, FLEET_METRIC_CRON_LATENESS,
      dispatched > fire_ms ? (uint64_t)(dispatched - fire_ms) * 1000 : 0);
  f->pub.dispatched_ms = dispatched;
  fleet__list_insert_head(&s->fires, &f->node);
  s->cb(s->pub, &f->pub);
}

/* Hands one fired occurrence to the user; the fire takes what `w` holds
 * (w is empty after). */
static void sched_deliver(fleet__cron_sched_t *s, cron_what_t *w,
                          int64_t fire_ms, int64_t dispatched, uint64_t token) {
  fleet__cron_fire_t *f = fire_make(s, w, fire_ms, token);

  if (f != NULL)
    fire_hand(s, f, dispatched);
}

/* A fire of the occurrence `fire_ms` of `d` with `token`, not given to
 * the user yet; NULL (the error told) when out of memory. */
static fleet__cron_fire_t *def_fire_make(fleet__cron_sched_t *s,
                                         const fleet__cron_def_t *d,
                                         int64_t fire_ms, uint64_t token) {
  cron_what_t w;

  if (what_copy(d, &w) != 0) {
    fleet__handle_error(&s->base, FLEET_ENOMEM);
    return NULL;
  }
  return fire_make(s, &w, fire_ms, token);
}

/* Hands one fired occurrence of `d` to the user. */
static void def_deliver(fleet__cron_sched_t *s, fleet__cron_def_t *d,
                        int64_t fire_ms, int64_t dispatched, uint64_t token) {
  fleet__cron_fire_t *f = def_fire_make(s, d, fire_ms, token);

  if (f != NULL)
    fire_hand(s, f, dispatched);
}

/* Records the outcome of an occurrence of `key` (occurrences' tag `tag`)
 * in its log entry (cron_complete, on the batcher): `outcome` "dispatched"
 * for a pool job the pool accepted. Nobody waits for the answer. Returns 0
 * or an error. */
static int sched_record(fleet__cron_sched_t *s, const fleet__key_t *tag,
                        const char *key, size_t key_len, int64_t fire_ms,
                        uint64_t token, const char *outcome) {
  char num[2][24];
  fleet_bytes_t args[4];

  snprintf(num[0], sizeof(num[0]), "%lld", (long long)fire_ms);
  snprintf(num[1], sizeof(num[1]), "%llu", (unsigned long long)token);
  args[0] = (fleet_bytes_t){key, key_len};
  args[1] = (fleet_bytes_t){num[0], strlen(num[0])};
  args[2] = (fleet_bytes_t){num[1], strlen(num[1])};
  args[3] = (fleet_bytes_t){outcome, strlen(outcome)};
  return sched_quiet(s, &complete_kind, tag, args, 4);
}

/* ------------------------------------------------------------------------ */
/* Occurrences claimed ahead                                                */

static void sched_on_hold(uv_timer_t *t);

/* Arms the hold timer for the first occurrence held: in loop ms rounded
 * up, so that it runs no earlier than its `due` (the loop's clock is never
 * ahead of uv_hrtime()). */
static void hold_arm(fleet__cron_sched_t *s) {
  fleet__list_t *n = fleet__list_first(&s->held);
  uint64_t due, now;

  if (n == NULL || s->base.closing) {
    uv_timer_stop(&s->hold_timer);
    return;
  }
  due = (FLEET__LIST_DATA(n, fleet__cron_fire_t, node)->due + 999999) / 1000000;
  now = uv_now(s->base.loop);
  uv_timer_start(&s->hold_timer, sched_on_hold, due > now ? due - now : 0, 0);
}

/* Holds the occurrence `fire_ms` of `d`, claimed ahead with `token`,
 * until its time by the server's clock (sched_set_clock()'s bound). */
static void def_hold(fleet__cron_sched_t *s, fleet__cron_def_t *d,
                     int64_t fire_ms, uint64_t token) {
  fleet__cron_fire_t *h = def_fire_make(s, d, fire_ms, token);
  fleet__list_t *p;

  if (h == NULL)
    return;
  h->created_ms = d->created_ms;
  h->due = (uint64_t)(fire_ms * 1000000 + s->off);
  /* By fire time, from the last (claims are answered in fire order, and
   * those of one instant come last): each waits for its own due, so one
   * of an instant may wait for the one before it, by a few us. */
  for (p = s->held.prev;
       p != &s->held &&
       FLEET__LIST_DATA(p, fleet__cron_fire_t, node)->pub.fire_ms > fire_ms;
       p = p->prev)
    ;
  fleet__list_insert_head(p, &h->node);
  if (s->held.next == &h->node)
    hold_arm(s);
}

/* Records that the occurrence held by `h` (off the held list) was not
 * handed out, with `why`, and frees `h`. */
static void held_drop(fleet__cron_sched_t *s, fleet__cron_fire_t *h,
                      const char *why) {
  int err = sched_record(s, &h->tag, h->key, h->key_len, h->pub.fire_ms,
                         h->pub.token, why);

  if (err != 0 && !s->base.closing)
    fleet__handle_error(&s->base, err);
  fire_free(h);
}

/* The time of the occurrence held by `h` has come (uv_hrtime() `hr`): it
 * goes to the user if its definition, as the scheduler's copy now has it,
 * still has it (the same definition, enabled, a callback one, its
 * expression's occurrence); else its log entry says why not. */
static void held_deliver(fleet__cron_sched_t *s, fleet__cron_fire_t *h,
                         uint64_t hr) {
  fleet__cron_def_t *d = def_find(s, h->key, h->key_len);
  int64_t fire_ms = h->pub.fire_ms, t;

  if (d == NULL || !d->enabled || d->cron == NULL || !def_ahead(d) ||
      d->created_ms != h->created_ms ||
      fleet_cron_next(d->cron, fire_ms - 1, &t) != 0 || t != fire_ms) {
    held_drop(s, h, "failed: the definition changed before its time");
    return;
  }
  fire_hand(s, h, fire_ms + (int64_t)((hr - h->due) / 1000000));
}

static void sched_on_hold(uv_timer_t *t) {
  fleet__cron_sched_t *s =
      FLEET__CONTAINER_OF(t, fleet__cron_sched_t, hold_timer);
  uint64_t hr = uv_hrtime();
  fleet__list_t *n;

  /* A fire callback may close the handle: the close takes the rest. */
  while (!s->base.closing && (n = fleet__list_first(&s->held)) != NULL) {
    fleet__cron_fire_t *h = FLEET__LIST_DATA(n, fleet__cron_fire_t, node);

    if (h->due > hr)
      break;
    fleet__list_remove(&h->node);
    held_deliver(s, h, hr);
  }
  hold_arm(s);
}

/* ------------------------------------------------------------------------ */
/* Pool dispatches                                                          */

static void dispatch_free(cron_dispatch_t *x) {
  what_free(&x->what);
  free(x);
}

/* Whether a dispatch that failed with `status` may be tried again later
 * (the pool, or the way to it, was not there), rather than failed. */
static int dispatch_transient(int status) {
  return status == FLEET_EUNAVAILABLE || status == FLEET_ECONNLOST ||
         status == FLEET_ECANCELED || status == FLEET_ECLOSING ||
         status == FLEET_EBUSY || status == FLEET_ENOTFOUND ||
         status == FLEET_ECONFLICT;
}

/* The pool answered a dispatch. Accepted (started, or admitted and still
 * starting), or refused as a duplicate (the pool holds the key: an earlier
 * dispatch of this occurrence got through): the entry becomes
 * "dispatched" and the user hears of the fire. A transient failure leaves
 * the entry pending, for a later fire call to hand out again
 * (redispatch_ms); any other (the start failed) ends the occurrence as
 * "failed: <error>". */
static void sched_on_dispatched(fleet_handle_t *h, int status, void *arg) {
  cron_dispatch_t *x = arg;
  fleet__cron_sched_t *s = x->s;
  char outcome[64];
  int err;

  (void)h;
  if (s == NULL) {
    dispatch_free(x);
    return;
  }
  fleet__list_remove(&x->node);
  if (s->base.closing) {
    dispatch_free(x);
    return;
  }
  if (status == 0 || status == FLEET_EEXIST || status == FLEET_ETIMEDOUT) {
    err = sched_record(s, &x->what.tag, x->what.key, x->what.key_len,
                       x->fire_ms, x->token, "dispatched");
    if (err != 0)
      fleet__handle_error(&s->base, err);
    sched_deliver(s, &x->what, x->fire_ms, x->dispatched, x->token);
  } else if (dispatch_transient(status)) {
    fleet__handle_error(&s->base, status);
  } else {
    snprintf(outcome, sizeof(outcome), "failed: %s", fleet_err_name(status));
    err = sched_record(s, &x->what.tag, x->what.key, x->what.key_len,
                       x->fire_ms, x->token, outcome);
    fleet__handle_error(&s->base, err != 0 ? err : status);
  }
  dispatch_free(x);
}

/* Dispatches the pool job "<key>@<fire_ms>" of a claimed occurrence of
 * `d`. A failure to send is reported, and the occurrence stays pending. */
static void def_dispatch(fleet__cron_sched_t *s, fleet__cron_def_t *d,
                         int64_t fire_ms, int64_t dispatched, uint64_t token) {
  char job[FLEET_CRON_KEY_MAX + 32];
  cron_dispatch_t *x;
  fleet_bytes_t payload;
  int err = FLEET_ENOMEM;

  if (d->pool_node == NULL) {
    fleet__handle_error(&s->base, FLEET_ENOTFOUND);
    return;
  }
  snprintf(job, sizeof(job), "%s@%lld", d->key, (long long)fire_ms);
  if ((x = calloc(1, sizeof(*x))) != NULL &&
      (err = what_copy(d, &x->what)) == 0) {
    x->s = s;
    x->fire_ms = fire_ms;
    x->dispatched = dispatched;
    x->token = token;
    payload.base = x->what.payload;
    payload.len = x->what.payload_len;
    err =
        fleet_pool_dispatch(d->pool_node, job, payload, sched_on_dispatched, x);
  }
  if (err != 0) {
    if (x != NULL)
      dispatch_free(x);
    fleet__handle_error(&s->base, err);
    return;
  }
  fleet__list_insert_head(&s->dispatches, &x->node);
}

/* What a CRON_FIRE answered: the server's time, the fires counted, how
 * many occurrences it settled (`done`: it answers each in order and stops
 * at the first that is not due by its clock), whether the definition is
 * finished (its limit reached, or past its end), and those it fired with
 * their tokens. */
typedef struct {
  int64_t now;
  int64_t count;
  int finished;
  size_t done;
  int64_t *fired;
  uint64_t *tokens;
  size_t nfired;
  /* A pool definition's pending occurrences handed out again. */
  int64_t again[8];
  uint64_t again_tokens[8];
  size_t nagain;
} fire_result_t;

/* Reads the statuses and tokens of the `n` occurrences `times` from
 * reply->elem[at..] into `res` (its `now` and `count` set already; free
 * res->fired and res->tokens after). Returns 0 or FLEET_ENOMEM. */
static int fire_read_occ(const fleet__reply_t *reply, size_t at,
                         const int64_t *times, size_t n, fire_result_t *res) {
  int64_t v[2];
  size_t i;

  if (n > 0 && ((res->fired = malloc(n * sizeof(*res->fired))) == NULL ||
                (res->tokens = malloc(n * sizeof(*res->tokens))) == NULL))
    return FLEET_ENOMEM;
  for (i = 0; i < n; i++) {
    if (fleet__reply_i64(&reply->elem[at + 2 * i], &v[0]) != 0 ||
        fleet__reply_i64(&reply->elem[at + 1 + 2 * i], &v[1]) != 0)
      break;
    if (v[0] < 0)
      break; /* not due by the server clock: this and the later ones */
    res->done = i + 1;
    if (v[0] == 3)
      res->finished = 1;
    if (v[0] == 1) {
      res->fired[res->nfired] = times[i];
      res->tokens[res->nfired++] = (uint64_t)v[1];
    }
  }
  return 0;
}

/* Reads cron_fire_many's answer for a definition sent one occurrence
 * without a fire limit, one integer `reply`: the token (> 0) when it
 * fired, else 0, -1, -2 or -3 for the statuses 0, -1, 2 and 3 (no count:
 * none is kept without a limit). Returns 0, FLEET_EPROTO or FLEET_ENOMEM. */
static int fire_read_one(const fleet__reply_t *reply, const int64_t *times,
                         size_t n, fire_result_t *res) {
  int64_t v;

  if (n != 1 || fleet__reply_i64(reply, &v) != 0 || v < -3)
    return FLEET_EPROTO;
  if ((res->fired = malloc(sizeof(*res->fired))) == NULL ||
      (res->tokens = malloc(sizeof(*res->tokens))) == NULL)
    return FLEET_ENOMEM;
  if (v == -1)
    return 0; /* not due by the server clock */
  res->done = 1;
  if (v == -3)
    res->finished = 1;
  if (v > 0) {
    res->fired[0] = times[0];
    res->tokens[res->nfired++] = (uint64_t)v;
  }
  return 0;
}

/* Reads the answer to a fire call for the `n` occurrences `times` into
 * `res` (free res->fired and res->tokens after). Returns 0, FLEET_EPROTO
 * or FLEET_ENOMEM. */
static int fire_read(const fleet__reply_t *reply, const int64_t *times,
                     size_t n, fire_result_t *res) {
  int64_t v[2];
  size_t i;
  int err;

  if (!fleet__reply_is_array(reply, 2 + 2 * n) ||
      fleet__reply_i64(&reply->elem[0], &res->now) != 0 ||
      fleet__reply_i64(&reply->elem[1], &res->count) != 0)
    return FLEET_EPROTO;
  if ((err = fire_read_occ(reply, 2, times, n, res)) != 0)
    return err;
  for (i = 2 + 2 * n; i + 1 < reply->nelem && res->nagain < 8; i += 2) {
    if (fleet__reply_i64(&reply->elem[i], &v[0]) != 0 ||
        fleet__reply_i64(&reply->elem[i + 1], &v[1]) != 0)
      return FLEET_EPROTO;
    res->again[res->nagain] = v[0];
    res->again_tokens[res->nagain++] = (uint64_t)v[1];
  }
  return 0;
}

/* The definition that the answer to a fire call of `d` settles: `d` while
 * it is in the copy. After a reload, the definition's new object waited
 * for this call (def_adopt) and takes over what it settles if its target
 * is the same; NULL when there is none. */
static fleet__cron_def_t *fire_target(fleet__cron_sched_t *s,
                                      fleet__cron_def_t *d) {
  fleet__cron_def_t *cur;

  if (!d->gone)
    return d;
  if (s->base.closing || (cur = def_find(s, d->key, d->key_len)) == NULL ||
      !cur->busy)
    return NULL;
  cur->busy = 0;
  return strcmp(cur->queue, d->queue) == 0 ? cur : NULL;
}

/* A fire call of `tgt` for `times` was answered with `res`: its cursor
 * moves past what was settled, and it remembers the latest fire. */
static void def_settle(fleet__cron_def_t *tgt, const int64_t *times,
                       const fire_result_t *res) {
  tgt->failures = 0;
  tgt->retry_at = 0;
  if (res->done > 0 && times[res->done - 1] > tgt->cursor)
    tgt->cursor = times[res->done - 1];
  /* (Fires are counted only against a limit: fleet__cron_mark.) */
  if (tgt->max_fires > 0 && (uint64_t)res->count > tgt->fired)
    tgt->fired = (uint64_t)res->count;
  if (res->finished && tgt->done_ms == 0)
    tgt->done_ms = res->now;
  def_next(tgt);
  if (res->nfired > 0 && res->tokens[res->nfired - 1] > tgt->last_token) {
    tgt->last_token = res->tokens[res->nfired - 1];
    tgt->last_fire_ms = res->fired[res->nfired - 1];
  }
}

/* Tells what a fire call of `d` fired: the registry's "last fired" hint,
 * then each occurrence to the user, unless the handle closes meanwhile. */
static void fire_tell(fleet__cron_sched_t *s, fleet__cron_def_t *d,
                      const fire_result_t *res) {
  size_t i;

  if ((res->nfired > 0 || res->finished) && !s->base.closing)
    fleet__cron_mark(s, d, res->nfired > 0 ? res->fired[res->nfired - 1] : -1,
                     res->nfired > 0 ? res->tokens[res->nfired - 1] : 0,
                     (uint64_t)res->count, res->finished);
  for (i = 0; i < res->nfired && !s->base.closing; i++) {
    if (d->pool[0] != '\0')
      def_dispatch(s, d, res->fired[i], res->now, res->tokens[i]);
    else if (res->fired[i] > res->now)
      def_hold(s, d, res->fired[i], res->tokens[i]);
    else
      def_deliver(s, d, res->fired[i], res->now, res->tokens[i]);
  }
  for (i = 0; i < res->nagain && !s->base.closing; i++)
    def_dispatch(s, d, res->again[i], res->now, res->again_tokens[i]);
}

/* A fire call of `d` for the `n` occurrences `times` was answered with
 * `status` and, when 0, `res`: the state is settled first, then the fired
 * occurrences are delivered (a fire callback may close the handle). Frees
 * `times`, what `res` holds and the call's reference to `d`. */
static void fire_answered(fleet__cron_sched_t *s, fleet__cron_def_t *d,
                          int64_t *times, size_t n, int status,
                          fire_result_t *res) {
  fleet__cron_def_t *tgt;

  d->busy = 0;
  tgt = fire_target(s, d);
  if (status == 0) {
    sched_set_clock(s, res->now);
    if (tgt != NULL)
      def_settle(tgt, times, res);
    fire_tell(s, d, res);
  } else if (!s->base.closing && tgt != NULL && status != FLEET_ECANCELED) {
    def_backoff(s, tgt, sched_now(s), status);
  }
  (void)n;
  free(res->fired);
  free(res->tokens);
  free(times);
  /* A callback definition's fire was one of a burst of claims, whose end
   * arms the timer (sched_burst_end()). */
  if (!def_ahead(d))
    sched_arm_def(s, tgt);
  fleet__cron_def_unref(d);
}

/* The answer to a fire call of one definition. */
static void sched_on_fire(fleet__req_t *r, int status,
                          const fleet__reply_t *reply) {
  cron_req_t *req = (cron_req_t *)r;
  fleet__cron_sched_t *s = (fleet__cron_sched_t *)r->handle;
  fire_result_t res = {0};

  fleet__req_done(r);
  if (status == 0)
    status = fire_read(reply, req->times, req->ntimes, &res);
  fire_answered(s, req->def, req->times, req->ntimes, status, &res);
}

static const fleet__call_t sched_fire_call = {"cron.fire", FLEET__OP_CRON_FIRE,
                                              sched_on_fire, NULL};

/* The occurrences of a definition that came due, oldest first: those
 * later than the grace (`late`: the latest catch_up_max of them) and
 * those within it (`due`). */
typedef struct {
  int64_t from; /* where the scan started: the cursor or the window */
  ring_t late;
  int64_t due[CRON_DUE_MAX];
  size_t ndue;
} fire_scan_t;

/* Enumerates the occurrences of `d` after its cursor up to `upto` (`now`,
 * or later for a claim ahead), within the catch-up window: nothing older
 * than it is fired or logged. Returns 0 or FLEET_ENOMEM; free sc->late.t
 * after. */
static int def_scan(const fleet__cron_sched_t *s, const fleet__cron_def_t *d,
                    int64_t now, int64_t upto, fire_scan_t *sc) {
  int64_t late_bound = now - (int64_t)s->opts.grace_ms;
  int64_t win_lo = late_bound - (int64_t)d->catch_up_window_ms;
  uint32_t scans = 0;
  int64_t t;

  memset(&sc->late, 0, sizeof(sc->late));
  sc->ndue = 0;
  sc->from = d->cursor > win_lo ? d->cursor : win_lo;
  sc->late.cap = d->catch_up_max;
  sc->late.t = calloc(sc->late.cap > 0 ? sc->late.cap : 1, sizeof(int64_t));
  if (sc->late.t == NULL)
    return FLEET_ENOMEM;
  t = sc->from;
  while (scans++ < CRON_SCAN_MAX && sc->ndue < CRON_DUE_MAX) {
    if (fleet__cron_def_next(d, d->cron, t, &t) != 0 || t > upto)
      break;
    if (t < late_bound)
      ring_push(&sc->late, t);
    else
      sc->due[sc->ndue++] = t;
  }
  return 0;
}

/* Lays a scan out as the occurrences of one call, oldest first, with what
 * the script does with each: 'f' fire, 'm' log as missed. Which late ones
 * fire: SKIP none, LATEST the latest when nothing is due within the
 * grace, ALL every one kept. */
static void fire_plan(const fleet__cron_def_t *d, const fire_scan_t *sc,
                      int64_t *times, char *acts) {
  size_t nlate = sc->late.n, i;

  for (i = 0; i < nlate; i++) {
    times[i] = ring_at(&sc->late, i);
    if (d->catch_up == FLEET_CRON_CATCH_UP_ALL)
      acts[i] = 'f';
    else if (d->catch_up == FLEET_CRON_CATCH_UP_LATEST && sc->ndue == 0 &&
             i + 1 == nlate)
      acts[i] = 'f';
    else
      acts[i] = 'm';
  }
  for (i = 0; i < sc->ndue; i++) {
    times[nlate + i] = sc->due[i];
    acts[nlate + i] = 'f';
  }
}

/* Sends one CRON_FIRE of `d` for the `n` occurrences `times` with their
 * `acts`. On success the call owns `times` and `d` is busy until its
 * answer. Returns 0 or an error. */
static int def_send_fire(fleet__cron_sched_t *s, fleet__cron_def_t *d,
                         int64_t *times, const char *acts, size_t n) {
  cron_req_t *req;
  fleet_bytes_t tag = fleet__key_bytes(&d->tag);
  size_t i;
  int err;

  if ((err = fleet__args_begin(&s->args, 14 + 2 * n, 9 + n)) != 0)
    return err;
  fleet__args_bytes(&s->args, s->ns, s->ns_len);
  fleet__args_bytes(&s->args, d->key, d->key_len);
  fleet__args_bytes(&s->args, s->node, s->node_len);
  fleet__args_u64(&s->args, s->opts.keep_count);
  fleet__args_u64(&s->args, s->opts.keep_age_ms);
  fleet__args_u64(&s->args, d->last_token);
  fleet__args_str(&s->args, d->queue[0] != '\0'  ? "1"
                            : d->pool[0] != '\0' ? "p"
                                                 : "");
  fleet__args_bytes(&s->args, d->payload != NULL ? d->payload : "",
                    d->payload_len);
  fleet__args_u64(&s->args, d->max_fires);
  fleet__args_i64(&s->args, d->created_ms);
  fleet__args_i64(&s->args, d->start_ms);
  fleet__args_i64(&s->args, d->end_ms);
  fleet__args_u64(&s->args, d->pool[0] != '\0' ? s->opts.redispatch_ms : 0);
  fleet__args_u64(&s->args, n);
  for (i = 0; i < n; i++) {
    fleet__args_i64(&s->args, times[i]);
    fleet__args_bytes(&s->args, &acts[i], 1);
  }
  req = (cron_req_t *)fleet__call_new(&s->base, &sched_fire_call, NULL, NULL);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->def = d;
  req->times = times;
  req->ntimes = n;
  if ((err = fleet__call_send(&req->base, &tag, 1, s->args.argv,
                              s->args.argc)) != 0)
    return err;
  d->refs++;
  d->busy = 1;
  return 0;
}

/* A fire of a callback definition sent with the others that came due in
 * the same loop phase: one CRON_FIRE_MANY per batch (the batcher; on a
 * Redis Cluster, per slot). It holds the handle until it is answered or
 * the handle closes. */
typedef struct {
  fleet__batch_item_t item;
  fleet__list_t node; /* on the scheduler's batched fires */
  fleet__cron_sched_t *s;
  fleet__cron_def_t *def;
  int64_t *times;
  size_t ntimes;
  char *occ; /* "<fire_ms><act>" joined by ',' */
  /* "<min_token>", or "<min_token>:<max_fires>:<gen>:<start>:<end>" */
  char bounds[5 * 21];
} cron_batch_t;

static void batch_free(cron_batch_t *b) {
  free(b->occ);
  free(b);
}

static void batch_fill_group(fleet__batch_item_t *it, fleet_bytes_t *keys,
                             fleet_bytes_t *args) {
  cron_batch_t *b = FLEET__CONTAINER_OF(it, cron_batch_t, item);

  (void)keys;
  args[0] = (fleet_bytes_t){b->s->node, b->s->node_len};
  args[1] = (fleet_bytes_t){b->s->keep_s, strlen(b->s->keep_s)};
  args[2] = (fleet_bytes_t){b->s->age_s, strlen(b->s->age_s)};
  args[3] = (fleet_bytes_t){b->s->ahead_s, strlen(b->s->ahead_s)};
}

static void batch_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                       fleet_bytes_t *args) {
  cron_batch_t *b = FLEET__CONTAINER_OF(it, cron_batch_t, item);

  keys[0] = fleet__key_bytes(&b->def->occ_key);
  args[0] = (fleet_bytes_t){b->occ, strlen(b->occ)};
  args[1] = (fleet_bytes_t){b->bounds, strlen(b->bounds)};
}

static void batch_done(fleet__batch_item_t *it, int status,
                       const fleet__reply_t *head, const fleet__reply_t *elem,
                       uint64_t sent);

static const fleet__batch_kind_t batch_kind = {
    .op = FLEET__OP_CRON_FIRE_MANY,
    .group_args = 4,
    .item_keys = 1,
    .item_args = 2,
    .reply_head = 1,
    .item_reply = 1,
    .max_items = 256,
    .fill_group = batch_fill_group,
    .fill = batch_fill,
    .done = batch_done,
};

static void batch_done(fleet__batch_item_t *it, int status,
                       const fleet__reply_t *head, const fleet__reply_t *elem,
                       uint64_t sent) {
  cron_batch_t *b = FLEET__CONTAINER_OF(it, cron_batch_t, item);
  fleet__cron_sched_t *s = b->s;
  fire_result_t res = {0};
  int last;

  (void)sent;
  /* Off the list first: a fire callback may close the handle. */
  fleet__list_remove(&b->node);
  if (status == 0 && fleet__reply_i64(&head[0], &res.now) != 0)
    status = FLEET_EPROTO;
  else if (status == 0 && elem[0].type == FLEET__REPLY_INT)
    status = fire_read_one(&elem[0], b->times, b->ntimes, &res);
  else if (status == 0 &&
           (!fleet__reply_is_array(&elem[0], 1 + 2 * b->ntimes) ||
            fleet__reply_i64(&elem[0].elem[0], &res.count) != 0))
    status = FLEET_EPROTO;
  else if (status == 0)
    status = fire_read_occ(&elem[0], 1, b->times, b->ntimes, &res);
  last = s->burst_left > 0 && --s->burst_left == 0;
  fire_answered(s, b->def, b->times, b->ntimes, status, &res);
  if (last)
    sched_burst_end(s);
  batch_free(b);
  fleet__handle_unhold(&s->base);
}

/* Builds d->occ_key, "<tag>:cron:<ns>:<key>:occ", the key a batched fire
 * names (cron_fire_many.lua). Returns 0 or FLEET_ENOMEM. */
static int def_occ_key(fleet__cron_sched_t *s, fleet__cron_def_t *d) {
  size_t len = d->tag.len + 6 + s->ns_len + 1 + d->key_len + 4;
  char *p = malloc(len + 1);

  if (p == NULL)
    return FLEET_ENOMEM;
  memcpy(p, d->tag.base, d->tag.len);
  memcpy(p + d->tag.len, ":cron:", 6);
  memcpy(p + d->tag.len + 6, s->ns, s->ns_len);
  p[d->tag.len + 6 + s->ns_len] = ':';
  memcpy(p + d->tag.len + 7 + s->ns_len, d->key, d->key_len);
  memcpy(p + len - 4, ":occ", 5);
  free(d->occ_key.base);
  d->occ_key.base = p;
  d->occ_key.len = len;
  d->occ_key.cap = len + 1;
  return 0;
}

/* Sends one fire of the callback definition `d` for the `n` occurrences
 * `times` with their `acts` on the batcher. On success the fire owns
 * `times` and `d` is busy until its answer. Returns 0 or an error. */
static int def_batch_fire(fleet__cron_sched_t *s, fleet__cron_def_t *d,
                          int64_t *times, const char *acts, size_t n) {
  cron_batch_t *b = calloc(1, sizeof(*b));
  size_t i, len = 0;
  int err;

  if (b == NULL || (d->occ_key.len == 0 && def_occ_key(s, d) != 0) ||
      (b->occ = malloc(n * 22 + 1)) == NULL) {
    free(b);
    return FLEET_ENOMEM;
  }
  for (i = 0; i < n; i++)
    len += (size_t)snprintf(b->occ + len, 23, "%s%lld%c", i > 0 ? "," : "",
                            (long long)times[i], acts[i]);
  if (d->max_fires == 0 && d->start_ms == 0 && d->end_ms == 0)
    snprintf(b->bounds, sizeof(b->bounds), "%llu",
             (unsigned long long)d->last_token);
  else
    snprintf(b->bounds, sizeof(b->bounds), "%llu:%llu:%lld:%lld:%lld",
             (unsigned long long)d->last_token,
             (unsigned long long)d->max_fires, (long long)d->created_ms,
             (long long)d->start_ms, (long long)d->end_ms);
  b->s = s;
  b->def = d;
  b->times = times;
  b->ntimes = n;
  fleet__list_insert_tail(&s->batched, &b->node);
  if ((err = fleet__batch_now(s->base.client, &b->item, &batch_kind, s)) != 0) {
    fleet__list_remove(&b->node);
    free(b->occ);
    free(b);
    return err;
  }
  fleet__handle_hold(&s->base);
  d->refs++;
  d->busy = 1;
  return 0;
}

/* Sends the occurrences of `d` that come due by `upto` (`now`, or later
 * for a claim ahead): those within the grace to fire, the later-than-grace
 * ones by the catch-up policy. A failure to send waits for a backoff. */
static void def_fire(fleet__cron_sched_t *s, fleet__cron_def_t *d, int64_t now,
                     int64_t upto) {
  int64_t *times = NULL;
  char *acts = NULL;
  fire_scan_t sc;
  size_t n;
  int err;

  if ((err = def_scan(s, d, now, upto, &sc)) != 0) {
    def_backoff(s, d, now, err);
    return;
  }
  n = sc.late.n + sc.ndue;
  if (n == 0) {
    /* Nothing came due in the window: what is older than it is passed
     * over for good. */
    free(sc.late.t);
    if (sc.from > d->cursor)
      d->cursor = sc.from;
    def_next(d);
    return;
  }
  times = malloc(n * sizeof(*times));
  acts = malloc(n);
  err = times != NULL && acts != NULL ? 0 : FLEET_ENOMEM;
  if (err == 0) {
    fire_plan(d, &sc, times, acts);
    /* A callback definition's claims go in bursts, on the batcher. */
    if (def_ahead(d))
      err = def_batch_fire(s, d, times, acts, n);
    else
      err = def_send_fire(s, d, times, acts, n);
  }
  free(sc.late.t);
  free(acts);
  if (err != 0) {
    free(times);
    def_backoff(s, d, now, err);
  }
}

/* The timer: every definition whose claim time has come is sent (a
 * callback definition's occurrences up to the lead ahead, on the batcher:
 * one burst of claims, which the burst model times). */
static void sched_on_timer(uv_timer_t *t) {
  fleet__cron_sched_t *s = FLEET__CONTAINER_OF(t, fleet__cron_sched_t, timer);
  int64_t now = sched_now(s);
  size_t i, sent = 0;

  s->armed_at = -1;
  if (s->base.closing)
    return;
  sched_lead(s);
  for (i = 0; i < s->ndefs; i++) {
    fleet__cron_def_t *d = s->defs[i];

    if (!def_live(d) || def_claim_at(s, d) > now)
      continue;
    def_fire(s, d, now, def_ahead(d) ? now + s->lead : now);
    if (def_ahead(d) && d->busy)
      sent++;
  }
  if (sent > 0) {
    if (s->burst_left == 0) {
      s->burst_t0 = uv_now(s->base.loop);
      s->burst_n = 0;
    }
    s->burst_n += sent;
    s->burst_left += sent;
  }
  sched_arm(s);
}

int fleet_cron_complete(fleet_cron_fire_t *fire, const char *error) {
  fleet__cron_fire_t *f;
  fleet__cron_sched_t *s;
  char *outcome;
  size_t len;
  int err;

  if (fire == NULL || (f = fire->internal_) == NULL)
    return FLEET_EINVAL;
  s = f->s;
  if ((err = fleet__handle_usable(&s->base)) != 0)
    return err;
  len = error != NULL ? strlen(error) + 8 : 9;
  if (error != NULL && len > 1024 + 8)
    len = 1024 + 8;
  if ((outcome = malloc(len + 1)) == NULL)
    return FLEET_ENOMEM;
  if (error != NULL)
    snprintf(outcome, len + 1, "failed: %s", error);
  else
    snprintf(outcome, len + 1, "completed");
  err = sched_record(s, &f->tag, f->key, strlen(f->key), f->pub.fire_ms,
                     f->pub.token, outcome);
  free(outcome);
  if (err != 0)
    return err;
  fire->internal_ = NULL;
  fleet__list_remove(&f->node);
  fire_free(f);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The registry copy                                                        */

static void sched_reload(fleet__cron_sched_t *s);

/* The node given for the pool `name`, or NULL. */
static fleet_pool_node_t *sched_pool_node(const fleet__cron_sched_t *s,
                                          const char *name) {
  size_t i;

  for (i = 0; i < s->npools; i++)
    if (strcmp(s->pools[i].name, name) == 0)
      return s->pools[i].node;
  return NULL;
}

/* Takes a loaded definition into the copy, keeping what the old one knew
 * (the cursor, the parsed expression) when it still applies. */
static void def_adopt(fleet__cron_sched_t *s, fleet__cron_def_t *d,
                      fleet__cron_def_t *old, int64_t now) {
  const char *tz = d->tz[0] != '\0' ? d->tz : NULL;
  char err[128];

  if (old != NULL && old->cron != NULL && strcmp(old->expr, d->expr) == 0 &&
      strcmp(old->tz, d->tz) == 0) {
    d->cron = old->cron;
    old->cron = NULL;
  } else if (fleet_cron_parse(d->expr, tz, &d->cron, err, sizeof(err)) != 0) {
    /* Another node accepted it (its tzdata, its version): this one cannot
     * run it. */
    d->cron = NULL;
    if (d->enabled)
      fleet__handle_error(&s->base, FLEET_ECONFLICT);
  }
  if (fleet__cron_def_tag(s, d->key, d->key_len, d->queue, &d->tag) != 0) {
    fleet_cron_free(d->cron);
    d->cron = NULL;
    fleet__handle_error(&s->base, FLEET_ENOMEM);
  }
  if (d->pool[0] != '\0') {
    d->pool_node = sched_pool_node(s, d->pool);
    /* Not fired here: some node with the pool must (docs/cron.md). */
    if (d->pool_node == NULL && d->enabled)
      fleet__handle_error(&s->base, FLEET_ENOTFOUND);
  }
  d->cursor = d->last_fire_ms;
  if (old != NULL && old->cursor > d->cursor &&
      strcmp(old->queue, d->queue) == 0)
    d->cursor = old->cursor;
  if (d->from_ms > d->cursor)
    d->cursor = d->from_ms;
  if (old != NULL && old->created_ms == d->created_ms && old->fired > d->fired)
    d->fired = old->fired;
  if (old != NULL) {
    if (old->last_token > d->last_token) {
      d->last_token = old->last_token;
      d->last_fire_ms = old->last_fire_ms;
    }
    d->retry_at = old->retry_at;
    d->failures = old->failures;
    /* A fire call of the old one is still out: wait for it. */
    d->busy = old->busy;
  }
  (void)now;
  def_next(d);
}

/* A loaded registry replaces the copy. A definition whose fire call is
 * still out stays busy in the new copy until that call is answered
 * (sched_on_fire finds it by key). */
static void sched_on_list(fleet__req_t *r, int status,
                          const fleet__reply_t *reply) {
  fleet__cron_sched_t *s = (fleet__cron_sched_t *)r->handle;
  fleet__cron_def_t **defs = NULL;
  size_t n = 0, i, cap;
  int64_t rev = 0, now = 0;

  fleet__req_done(r);
  s->loading = 0;
  if (s->base.closing)
    return;
  if (status == 0 &&
      (!fleet__reply_is_array(reply, 2) || (reply->nelem - 2) % 3 != 0 ||
       fleet__reply_i64(&reply->elem[0], &rev) != 0 ||
       fleet__reply_i64(&reply->elem[1], &now) != 0))
    status = FLEET_EPROTO;
  cap = status == 0 ? (reply->nelem - 2) / 3 : 0;
  if (status == 0 && cap > 0 && (defs = calloc(cap, sizeof(*defs))) == NULL)
    status = FLEET_ENOMEM;
  for (i = 0; status == 0 && i < cap; i++) {
    const fleet__reply_t *e = &reply->elem[2 + 3 * i];
    fleet__cron_def_t *d = fleet__cron_def_parse(&e[0], &e[1], &e[2], &status);

    if (d != NULL) {
      defs[n++] = d;
    } else if (status == FLEET_EPROTO) {
      /* A definition fleet did not write: reported, left in place, and
       * not run; the others are. */
      fleet__handle_error(&s->base, status);
      status = 0;
    }
  }
  if (status != 0) {
    for (i = 0; i < n; i++)
      fleet__cron_def_unref(defs[i]);
    free(defs);
    fleet__handle_error(&s->base, status);
    /* The check timer tries again. */
    s->have_rev = 0;
    return;
  }
  sched_set_clock(s, now);
  if (n > 1)
    qsort(defs, n, sizeof(*defs), fleet__cron_def_cmp);
  for (i = 0; i < n; i++)
    def_adopt(s, defs[i], def_find(s, defs[i]->key, defs[i]->key_len), now);
  for (i = 0; i < s->ndefs; i++)
    def_drop(s->defs[i]);
  free(s->defs);
  s->defs = defs;
  s->ndefs = n;
  s->defs_cap = n;
  s->rev = (uint64_t)rev;
  s->have_rev = 1;
  if (s->reload_again) {
    s->reload_again = 0;
    sched_reload(s);
  }
  sched_arm(s);
}

static const fleet__call_t sched_load_call = {"cron.load", FLEET__OP_CRON_LIST,
                                              sched_on_list, NULL};

static void sched_reload(fleet__cron_sched_t *s) {
  int err;

  if (s->base.closing)
    return;
  if (s->loading) {
    s->reload_again = 1;
    return;
  }
  err = fleet__args_begin(&s->args, 1, 0);
  if (err == 0)
    fleet__args_str(&s->args, "");
  if (sched_send(s, &sched_load_call, err) == 0)
    s->loading = 1;
}

static void sched_on_rev(fleet__req_t *r, int status,
                         const fleet__reply_t *reply) {
  fleet__cron_sched_t *s = (fleet__cron_sched_t *)r->handle;
  int64_t rev, now;

  fleet__req_done(r);
  if (s->base.closing)
    return;
  if (status == 0 && (!fleet__reply_is_array(reply, 2) ||
                      fleet__reply_i64(&reply->elem[0], &rev) != 0 ||
                      fleet__reply_i64(&reply->elem[1], &now) != 0))
    status = FLEET_EPROTO;
  if (status != 0) {
    fleet__handle_error(&s->base, status);
    return;
  }
  sched_set_clock(s, now);
  if (!s->have_rev || (uint64_t)rev != s->rev)
    sched_reload(s);
  else if (s->armed_at < 0)
    sched_arm(s);
}

static const fleet__call_t sched_rev_call = {"cron.rev", FLEET__OP_CRON_REV,
                                             sched_on_rev, NULL};

static void sched_on_check(uv_timer_t *t) {
  fleet__cron_sched_t *s = FLEET__CONTAINER_OF(t, fleet__cron_sched_t, check);

  if (!s->base.closing && !s->loading)
    (void)sched_send(s, &sched_rev_call, fleet__args_begin(&s->args, 0, 0));
}

static void sched_on_message(void *arg, int status, const char *payload,
                             size_t len) {
  fleet__cron_sched_t *s = arg;
  uint64_t rev = 0;
  size_t i;

  if (s->base.closing)
    return;
  if (status == 0 && len > 0 && len <= 19) {
    for (i = 0; i < len && payload[i] >= '0' && payload[i] <= '9'; i++)
      rev = rev * 10 + (uint64_t)(payload[i] - '0');
    if (i == len && s->have_rev && rev == s->rev)
      return;
  }
  /* A new revision, or the subscription (re)started: reload. */
  sched_reload(s);
}

/* ------------------------------------------------------------------------ */
/* Init, start, close                                                       */

void fleet_cron_scheduler_options_init(fleet_cron_scheduler_options_t *o) {
  if (o == NULL)
    return;
  memset(o, 0, sizeof(*o));
  o->keep_count = 100;
  o->keep_age_ms = 7ull * 24 * 3600 * 1000;
  o->grace_ms = 5000;
  o->check_ms = 1000;
  o->redispatch_ms = 30000;
  o->claim_ahead_ms = 1000;
}

/* The close, at once: the timers close (the base ends the subscription
 * after this). */
static void sched_close_hook(fleet__handle_t *h) {
  fleet__cron_sched_t *s = (fleet__cron_sched_t *)h;

  fleet__handle_uv_close(h, (uv_handle_t *)&s->timer);
  fleet__handle_uv_close(h, (uv_handle_t *)&s->check);
  fleet__handle_uv_close(h, (uv_handle_t *)&s->hold_timer);
  fleet__reg_stop(&s->entry);
  /* The occurrences claimed ahead and not due yet are not handed out: their
   * log entries say so (the completion holds the handle until answered). */
  FLEET__LIST_FOREACH (n, next, &s->held) {
    fleet__cron_fire_t *x = FLEET__LIST_DATA(n, fleet__cron_fire_t, node);
    fleet__list_remove(&x->node);
    held_drop(s, x, "failed: the scheduler closed before its time");
  }
  /* The batched fires not answered yet are forgotten: what the server
   * claimed for this node stays in the log, as with a call cut off. */
  FLEET__LIST_FOREACH (n, next, &s->batched) {
    cron_batch_t *b = FLEET__LIST_DATA(n, cron_batch_t, node);
    fleet__list_remove(&b->node);
    fleet__batch_remove(h->client, &b->item);
    b->def->busy = 0;
    fleet__cron_def_unref(b->def);
    free(b->times);
    batch_free(b);
    fleet__handle_unhold(h);
  }
}

static void sched_free(fleet__handle_t *h) {
  fleet__cron_sched_t *s = (fleet__cron_sched_t *)h;
  size_t i;

  FLEET__LIST_FOREACH (n, next, &s->fires) {
    fleet__cron_fire_t *f = FLEET__LIST_DATA(n, fleet__cron_fire_t, node);
    f->pub.internal_ = NULL;
    fire_free(f);
  }
  /* The pool answers them later: each answer frees its own. */
  FLEET__LIST_FOREACH (n, next, &s->dispatches) {
    cron_dispatch_t *x = FLEET__LIST_DATA(n, cron_dispatch_t, node);
    fleet__list_remove(&x->node);
    x->s = NULL;
  }
  for (i = 0; i < s->npools; i++)
    free(s->pools[i].name);
  free(s->pools);
  for (i = 0; i < s->ndefs; i++)
    def_drop(s->defs[i]);
  free(s->defs);
  fleet__key_free(&s->reg);
  fleet__key_free(&s->chan);
  fleet__args_free(&s->args);
  free(s->ns);
  free(s->node);
  free(s);
}

static const fleet__handle_vt_t sched_vt = {
    .type = FLEET_HANDLE_CRON_SCHEDULER,
    .req_size = sizeof(cron_req_t),
    .close = sched_close_hook,
    .free = sched_free,
};

int fleet_cron_scheduler_init(fleet_client_t *client,
                              fleet_cron_scheduler_t *sched, const char *ns,
                              const char *node_id,
                              const fleet_cron_scheduler_options_t *options) {
  fleet__cron_sched_t *s;
  struct fleet__client_s *c;
  size_t ns_len, node_len;
  int err;

  if (sched == NULL)
    return FLEET_EINVAL;
  sched->internal_ = NULL;
  if ((err = fleet__str_check(ns, FLEET_CRON_NAMESPACE_MAX, &ns_len)) != 0 ||
      (err = fleet__str_check(node_id, FLEET_CRON_NODE_ID_MAX, &node_len)) != 0)
    return err;
  if (strchr(ns, ':') != NULL)
    return FLEET_EINVAL;
  if (options != NULL &&
      (options->keep_count == 0 || options->claim_ahead_ms > 60000))
    return FLEET_EINVAL;
  if (client == NULL || !fleet__client_usable(client))
    return client == NULL ? FLEET_EINVAL : FLEET_ECLOSING;
  if ((s = calloc(1, sizeof(*s))) == NULL)
    return FLEET_ENOMEM;
  fleet__list_init(&s->fires);
  fleet__list_init(&s->dispatches);
  fleet__list_init(&s->batched);
  fleet__list_init(&s->held);
  err =
      fleet__handle_init(&s->base, &sched_vt, client, (fleet_handle_t *)sched);
  if (err != 0) {
    free(s);
    return err;
  }
  s->pub = sched;
  if (options != NULL)
    s->opts = *options;
  else
    fleet_cron_scheduler_options_init(&s->opts);
  if (s->opts.check_ms == 0)
    s->opts.check_ms = 1000;
  if (s->opts.redispatch_ms == 0)
    s->opts.redispatch_ms = 30000;
  snprintf(s->ahead_s, sizeof(s->ahead_s), "%lu",
           (unsigned long)s->opts.claim_ahead_ms);
  snprintf(s->keep_s, sizeof(s->keep_s), "%lu",
           (unsigned long)s->opts.keep_count);
  snprintf(s->age_s, sizeof(s->age_s), "%llu",
           (unsigned long long)s->opts.keep_age_ms);
  s->burst_fixed_ms = CRON_BURST_FIXED_MS;
  s->burst_def_ms = CRON_BURST_DEF_MS;
  s->base.error_cb = s->opts.error_cb;
  s->ns = fleet__memdup(ns, ns_len);
  s->ns_len = ns_len;
  s->base.mblock.name = s->ns; /* metrics */
  s->base.mblock.name_len = ns_len;
  s->node = fleet__memdup(node_id, node_len);
  s->node_len = node_len;
  fleet__rng_seed(&s->rng, (uint64_t)(uintptr_t)s ^ uv_hrtime());
  c = s->base.client;
  if (s->ns == NULL || s->node == NULL ||
      fleet__key_build(&s->reg, c->prefix, c->prefix_len, ns, ns_len, NULL) !=
          0 ||
      fleet__key_build(&s->chan, c->prefix, c->prefix_len, ns, ns_len,
                       "cron:changed") != 0) {
    fleet__handle_abort(&s->base);
    sched_free(&s->base);
    sched->internal_ = NULL;
    return FLEET_ENOMEM;
  }
  s->armed_at = -1;
  fleet__handle_timer_init(&s->base, &s->timer);
  fleet__handle_timer_init(&s->base, &s->check);
  fleet__handle_timer_init(&s->base, &s->hold_timer);
  return 0;
}

int fleet_cron_scheduler_start(fleet_cron_scheduler_t *sched,
                               fleet_cron_fire_cb cb) {
  fleet__cron_sched_t *s = sched_of(sched);
  int err;

  if (s == NULL || cb == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__handle_usable(&s->base)) != 0)
    return err;
  if (s->started)
    return FLEET_EALREADY;
  s->started = 1;
  s->cb = cb;
  /* The subscription's first "live" notice loads the registry; the check
   * timer loads it too when that does not come. */
  err = fleet__handle_subscribe(&s->base, s->chan.base, s->chan.len,
                                sched_on_message, s, &s->sub);
  if (err != 0)
    fleet__handle_error(&s->base, err);
  uv_timer_start(&s->check, sched_on_check, 0, s->opts.check_ms);
  fleet__reg_start(&s->entry, &s->base, "cron", s->node, s->node_len, s->ns,
                   s->ns_len, s->opts.check_ms, NULL);
  return 0;
}

int fleet_cron_scheduler_add_pool(fleet_cron_scheduler_t *sched,
                                  const char *pool, fleet_pool_node_t *node) {
  fleet__cron_sched_t *s = sched_of(sched);
  fleet__cron_pool_t *p;
  size_t i;
  int err;

  if (s == NULL || pool == NULL || node == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__str_check(pool, FLEET__NAME_MAX, NULL)) != 0)
    return err;
  if ((err = fleet__handle_usable(&s->base)) != 0)
    return err;
  if (sched_pool_node(s, pool) != NULL)
    return FLEET_EEXIST;
  p = realloc(s->pools, (s->npools + 1) * sizeof(*p));
  if (p == NULL)
    return FLEET_ENOMEM;
  s->pools = p;
  if ((p[s->npools].name = fleet__strdup(pool)) == NULL)
    return FLEET_ENOMEM;
  p[s->npools++].node = node;
  /* The definitions of that pool run from now on. */
  for (i = 0; i < s->ndefs; i++)
    if (strcmp(s->defs[i]->pool, pool) == 0)
      s->defs[i]->pool_node = node;
  sched_arm(s);
  return 0;
}

int fleet_cron_scheduler_close(fleet_cron_scheduler_t *sched,
                               fleet_close_cb cb) {
  return fleet__handle_close_of(sched, FLEET_HANDLE_CRON_SCHEDULER, cb);
}
