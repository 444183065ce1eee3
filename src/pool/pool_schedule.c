/* pool_schedule.c -- a pool's schedule, built on the pool ticker and the
 * node's public calls: each interval is a tick of the ticker
 * "schedule:<name>", so exactly one node plans it. The plan goes through
 * POOL_PLAN, which keeps the set of keys the schedule started and answers
 * which start keys are not in the pool yet (a key in the pool counts as
 * started, so a running key is never dispatched again) and which keys to
 * stop; the node then dispatches and stops them with fleet_pool_dispatch()
 * and fleet_pool_stop_job(). A plan that asks to stop the schedule resets
 * its keys and ends the ticker, which ends the schedule on every node.
 *
 * States: IDLE (not started), RUNNING (waiting for its intervals),
 * APPLYING (a plan's POOL_PLAN is in flight: an interval that comes
 * meanwhile is skipped), STOPPED (ended on every node). */
#include <stdlib.h>
#include <string.h>

#include "pool_int.h"

#define SCHED_PREFIX "schedule:"

#define SCHED_STATE_MAP(XX)                                                    \
  XX(IDLE, "idle")                                                             \
  XX(RUNNING, "running")                                                       \
  XX(APPLYING, "applying")                                                     \
  XX(STOPPED, "stopped")

typedef enum {
#define XX(name, str) SCHEDULE_##name,
  SCHED_STATE_MAP(XX)
#undef XX
} sched_state_t;

static const char *const sched_state_names[] = {
    SCHED_STATE_MAP(FLEET__NAME_XX)};

struct fleet_pool_plan_s {
  char **keys; /* start keys */
  fleet_bytes_t *payloads;
  size_t n, cap;
  char **stops;
  size_t nstop, stop_cap;
  int stop_all;
};

typedef struct {
  fleet__pool_child_t c; /* base, name, tag, args */
  fleet_pool_schedule_t *pub;
  sched_state_t state;
  fleet_pool_node_t *node;
  fleet_pool_ticker_t ticker;
  int ticker_open;
  fleet_pool_plan_cb cb;
  struct fleet_pool_plan_s plan;
} sched_t;

const char *fleet__pool_schedule_state_name(const fleet_pool_schedule_t *s) {
  const sched_t *sc =
      (const sched_t *)fleet__handle_of(s, FLEET_HANDLE_POOL_SCHEDULE);

  return sc == NULL ? "closed" : sched_state_names[sc->state];
}

/* The one place a schedule changes state. */
static void sched_set_state(sched_t *sc, sched_state_t state) {
  sc->state = state;
}

/* ------------------------------------------------------------------------ */
/* Plans                                                                    */

static void plan_clear(struct fleet_pool_plan_s *plan) {
  size_t i;

  for (i = 0; i < plan->n; i++) {
    free(plan->keys[i]);
    free((void *)plan->payloads[i].base);
  }
  for (i = 0; i < plan->nstop; i++)
    free(plan->stops[i]);
  plan->n = plan->nstop = 0;
  plan->stop_all = 0;
}

int fleet_pool_plan_start(fleet_pool_plan_t *plan, const char *key,
                          fleet_bytes_t payload) {
  size_t cap = plan != NULL ? plan->cap : 0, len;
  char *k, *p;
  int err;

  if (plan == NULL || (payload.len > 0 && payload.base == NULL))
    return FLEET_EINVAL;
  if ((err = fleet__str_check(key, FLEET_POOL_KEY_MAX, &len)) != 0)
    return err;
  if (payload.len > FLEET_POOL_PAYLOAD_MAX)
    return FLEET_E2BIG;
  if (fleet__grow((void **)&plan->keys, &cap, plan->n + 1, sizeof(char *)) !=
          0 ||
      fleet__grow((void **)&plan->payloads, &plan->cap, plan->n + 1,
                  sizeof(fleet_bytes_t)) != 0)
    return FLEET_ENOMEM;
  k = fleet__memdup(key, len);
  p = fleet__memdup(payload.base, payload.len);
  if (k == NULL || p == NULL) {
    free(k);
    free(p);
    return FLEET_ENOMEM;
  }
  plan->keys[plan->n] = k;
  plan->payloads[plan->n].base = p;
  plan->payloads[plan->n].len = payload.len;
  plan->n++;
  return 0;
}

int fleet_pool_plan_stop(fleet_pool_plan_t *plan, const char *key) {
  size_t len;
  char *k;
  int err;

  if (plan == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__str_check(key, FLEET_POOL_KEY_MAX, &len)) != 0)
    return err;
  if (fleet__grow((void **)&plan->stops, &plan->stop_cap, plan->nstop + 1,
                  sizeof(char *)) != 0 ||
      (k = fleet__memdup(key, len)) == NULL)
    return FLEET_ENOMEM;
  plan->stops[plan->nstop++] = k;
  return 0;
}

int fleet_pool_plan_stop_all(fleet_pool_plan_t *plan) {
  if (plan == NULL)
    return FLEET_EINVAL;
  plan->stop_all = 1;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Applying a plan                                                          */

/* A dispatch or a stop of the plan has answered. */
static void sched_on_call(fleet_handle_t *node, int status, void *arg) {
  sched_t *sc = arg;

  (void)node;
  if (status != 0 && status != FLEET_EEXIST && status != FLEET_ENOTFOUND &&
      status != FLEET_ECANCELED)
    fleet__handle_error(&sc->c.base, status);
  fleet__handle_unhold(&sc->c.base);
}

/* Issues one dispatch or stop; the schedule stays open until it answers. */
static void sched_issue(sched_t *sc, int err) {
  if (err == 0)
    fleet__handle_hold(&sc->c.base);
  else
    fleet__handle_error(&sc->c.base, err);
}

static void sched_on_plan(fleet__req_t *r, int status,
                          const fleet__reply_t *reply) {
  sched_t *sc = (sched_t *)r->handle;
  struct fleet_pool_plan_s *plan = &sc->plan;
  const fleet__reply_t *start, *stop;
  size_t i;

  fleet__req_done(r);
  if (sc->state == SCHEDULE_APPLYING)
    sched_set_state(sc, SCHEDULE_RUNNING);
  if (status == 0 && (!fleet__reply_is_array(reply, 2) ||
                      reply->elem[0].type != FLEET__REPLY_ARRAY ||
                      reply->elem[1].type != FLEET__REPLY_ARRAY))
    status = FLEET_EPROTO;
  if (status != 0 || sc->c.base.closing) {
    if (status != 0)
      fleet__handle_error(&sc->c.base, status);
    plan_clear(plan);
    return;
  }
  start = &reply->elem[0];
  stop = &reply->elem[1];
  for (i = 0; i < start->nelem; i++) {
    int64_t at;
    if (fleet__reply_i64(&start->elem[i], &at) != 0 || at < 1 ||
        (size_t)at > plan->n)
      continue;
    sched_issue(sc,
                fleet_pool_dispatch(sc->node, plan->keys[at - 1],
                                    plan->payloads[at - 1], sched_on_call, sc));
  }
  for (i = 0; i < stop->nelem; i++) {
    char *key;
    if (stop->elem[i].type != FLEET__REPLY_STR ||
        (key = fleet__memdup(stop->elem[i].str, stop->elem[i].len)) == NULL)
      continue;
    sched_issue(sc, fleet_pool_stop_job(sc->node, key, sched_on_call, sc));
    free(key);
  }
  plan_clear(plan);
}

static const fleet__call_t sched_plan_call = {
    "pool.schedule.plan", FLEET__OP_POOL_PLAN, sched_on_plan, NULL};

/* Sends POOL_PLAN for the plan written ("r": reset the keys). */
static int sched_send_plan(sched_t *sc, const char *mode) {
  struct fleet_pool_plan_s *plan = &sc->plan;
  fleet_bytes_t key = fleet__key_bytes(&sc->c.tag);
  size_t i;
  int err;

  err = fleet__args_begin(&sc->c.args, 3 + plan->n + plan->nstop, 1);
  if (err != 0)
    return err;
  fleet__args_bytes(&sc->c.args, sc->c.name, sc->c.name_len);
  fleet__args_str(&sc->c.args, mode);
  fleet__args_u64(&sc->c.args, plan->n);
  for (i = 0; i < plan->n; i++)
    fleet__args_str(&sc->c.args, plan->keys[i]);
  for (i = 0; i < plan->nstop; i++)
    fleet__args_str(&sc->c.args, plan->stops[i]);
  return fleet__call(&sc->c.base, &sched_plan_call, NULL, NULL, &key, 1,
                     sc->c.args.argv, sc->c.args.argc);
}

static void sched_on_ticker_stopped(fleet_handle_t *h, int status, void *arg) {
  sched_t *sc = arg;

  (void)h;
  if (status != 0)
    fleet__handle_error(&sc->c.base, status);
  fleet__handle_unhold(&sc->c.base);
}

/* An interval of the schedule came to this node (or it was stopped). */
static void sched_on_tick(fleet_pool_ticker_t *t, int status,
                          const fleet_pool_tick_t *tick) {
  sched_t *sc = t->data;
  int rc, err;

  if (status != 0) {
    sched_set_state(sc, SCHEDULE_STOPPED);
    return;
  }
  if (sc->state != SCHEDULE_RUNNING)
    return; /* the last plan is still being applied */
  plan_clear(&sc->plan);
  rc = sc->cb(sc->pub, &sc->plan, tick);
  if (sc->c.base.closing) {
    plan_clear(&sc->plan);
    return;
  }
  if (rc == FLEET_POOL_PLAN_STOP) {
    plan_clear(&sc->plan);
    err = sched_send_plan(sc, "r");
    if (err != 0)
      fleet__handle_error(&sc->c.base, err);
    err = fleet_pool_ticker_end(&sc->ticker, sched_on_ticker_stopped, sc);
    if (err == 0)
      fleet__handle_hold(&sc->c.base);
    else
      fleet__handle_error(&sc->c.base, err);
    return;
  }
  err = sched_send_plan(sc, sc->plan.stop_all ? "a" : "");
  if (err != 0) {
    plan_clear(&sc->plan);
    fleet__handle_error(&sc->c.base, err);
    return;
  }
  sched_set_state(sc, SCHEDULE_APPLYING);
}

static void sched_on_ticker_error(fleet_handle_t *h, int status,
                                  const char *detail) {
  sched_t *sc = h->data;

  (void)detail;
  fleet__handle_error(&sc->c.base, status);
}

/* ------------------------------------------------------------------------ */
/* Init, start, close                                                       */

/* The schedule, the ticker's parent, stays open until the ticker has
 * closed (fleet__handle_adopt()). */
static void sched_close(fleet__handle_t *h) {
  sched_t *sc = (sched_t *)h;

  if (sc->ticker_open)
    fleet_pool_ticker_close(&sc->ticker, NULL);
  sc->ticker_open = 0;
}

static void sched_free(fleet__handle_t *h) {
  sched_t *sc = (sched_t *)h;

  plan_clear(&sc->plan);
  free(sc->plan.keys);
  free(sc->plan.payloads);
  free(sc->plan.stops);
  fleet__pool_child_free(&sc->c);
}

static const fleet__handle_vt_t sched_vt = {
    .type = FLEET_HANDLE_POOL_SCHEDULE,
    .req_size = sizeof(fleet__req_t),
    .close = sched_close,
    .free = sched_free,
};

void fleet_pool_schedule_options_init(fleet_pool_schedule_options_t *options) {
  memset(options, 0, sizeof(*options));
}

int fleet_pool_schedule_init(fleet_pool_node_t *node,
                             fleet_pool_schedule_t *schedule, const char *name,
                             uint32_t interval_ms,
                             const fleet_pool_schedule_options_t *options) {
  char tname[FLEET__NAME_MAX + 1];
  fleet_pool_ticker_options_t to;
  fleet__pool_child_t *c;
  sched_t *sc;
  int err = fleet__pool_child_init(
      node, (fleet_handle_t *)schedule, &sched_vt, sizeof(*sc), name,
      FLEET__NAME_MAX - strlen(SCHED_PREFIX), interval_ms,
      options != NULL ? options->error_cb : NULL, &c);

  if (err != 0)
    return err;
  sc = (sched_t *)c;
  sc->pub = schedule;
  sc->node = node;
  snprintf(tname, sizeof(tname), SCHED_PREFIX "%s", name);
  fleet_pool_ticker_options_init(&to);
  to.error_cb = sched_on_ticker_error;
  err = fleet_pool_ticker_init(node, &sc->ticker, tname, interval_ms, &to);
  if (err != 0) {
    fleet__pool_child_abort(&sc->c);
    return err;
  }
  /* The schedule's own: closed with it, never shown by a walk. */
  fleet__handle_adopt(&sc->c.base, sc->ticker.internal_);
  sc->ticker.data = sc;
  sc->ticker_open = 1;
  return 0;
}

int fleet_pool_schedule_start(fleet_pool_schedule_t *schedule,
                              fleet_pool_plan_cb cb) {
  int err;
  sched_t *sc = (sched_t *)fleet__call_enter(
      schedule, FLEET_HANDLE_POOL_SCHEDULE, cb != NULL, &err);

  if (sc == NULL)
    return err;
  if (sc->state != SCHEDULE_IDLE)
    return FLEET_EALREADY;
  if ((err = fleet_pool_ticker_start(&sc->ticker, sched_on_tick)) != 0)
    return err;
  sc->cb = cb;
  sched_set_state(sc, SCHEDULE_RUNNING);
  return 0;
}

int fleet_pool_schedule_close(fleet_pool_schedule_t *schedule,
                              fleet_close_cb cb) {
  return fleet__handle_close_of(schedule, FLEET_HANDLE_POOL_SCHEDULE, cb);
}
