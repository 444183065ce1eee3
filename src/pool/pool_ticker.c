/* pool_ticker.c -- a pool's ticker: every node that runs a ticker of one
 * name tries to claim each tick when it comes due, and POOL_TICK gives it
 * to exactly one of them, by the server clock.
 *
 * The ticker's state lives in the backend (T:tk:<name>: period, the
 * server time of the next tick, the last sequence number, and the claims
 * not acknowledged yet), so a node that dies or pauses costs no tick: the
 * others claim the next ones, and the tick it had claimed carries a
 * delivery lease (this ticker's claimer id, a deadline by the server
 * clock: the node's worker TTL). Once the tick callback returned, the
 * ticker acknowledges the tick (one POOL_TICK_ACK; should it fail, the
 * next claim carries the acknowledgement again). A claim found
 * unacknowledged past its deadline goes to the next claimer as a
 * redelivery (the tick's `redelivered` is set), or, when it was due more
 * than two leases and ten periods ago, is counted in the next tick's
 * `missed`. Ticks that came due while nobody claimed them are folded into
 * the next claim and counted (`missed`), never dropped silently. A tick is
 * a callback: nothing is lost to a busy reader. A failed claim is reported
 * to the error callback and retried with backoff, for as long as the
 * ticker runs: one Redis error never ends it.
 *
 * States: IDLE (not started), WAITING (the timer runs until the next
 * claim), CLAIMING (a claim is in flight), STOPPED (the ticker was ended
 * for every node, by fleet_pool_ticker_end() on any node). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_int.h"

/* The first delay after a failed claim, in ms. */
#define TICKER_BACKOFF_MIN_MS 20

#define TICKER_STATE_MAP(XX)                                                   \
  XX(IDLE, "idle")                                                             \
  XX(WAITING, "waiting")                                                       \
  XX(CLAIMING, "claiming")                                                     \
  XX(STOPPED, "stopped")

typedef enum {
#define XX(name, str) TICKER_##name,
  TICKER_STATE_MAP(XX)
#undef XX
} ticker_state_t;

static const char *const ticker_state_names[] = {
    TICKER_STATE_MAP(FLEET__NAME_XX)};

typedef struct {
  fleet__pool_child_t c; /* base, name, tag, args */
  fleet_pool_ticker_t *pub;
  ticker_state_t state;
  uint32_t period_ms;
  fleet_pool_tick_cb cb;
  uv_timer_t timer;
  uint32_t failures;
  fleet__rng_t rng;
  /* The delivery lease: who claims ("<node id>:<random>"), for how long,
   * and how old an unacknowledged tick may be to be delivered again. */
  char *claimer;
  size_t claimer_len;
  uint32_t lease_ms;
  uint64_t horizon_ms;
  /* The last tick delivered whose acknowledgement was not confirmed (0:
   * none), and whether its POOL_TICK_ACK is in flight. */
  uint64_t unacked;
  int ack_inflight;
  fleet__args_t ack_args;
} ticker_t;

const char *fleet__pool_ticker_state_name(const fleet_pool_ticker_t *t) {
  const ticker_t *tk =
      (const ticker_t *)fleet__handle_of(t, FLEET_HANDLE_POOL_TICKER);

  return tk == NULL ? "closed" : ticker_state_names[tk->state];
}

static void ticker_on_timer(uv_timer_t *timer);

/* The one place a ticker changes state. WAITING arms the timer for
 * `delay` ms; every other state stops it. */
static void ticker_set_state(ticker_t *tk, ticker_state_t state,
                             uint64_t delay) {
  tk->state = state;
  if (uv_is_closing((uv_handle_t *)&tk->timer))
    return;
  if (state == TICKER_WAITING)
    uv_timer_start(&tk->timer, ticker_on_timer, delay, 0);
  else
    uv_timer_stop(&tk->timer);
}

/* The ticker was stopped: its callback hears it once. */
static void ticker_stopped(ticker_t *tk) {
  if (tk->state == TICKER_STOPPED)
    return;
  ticker_set_state(tk, TICKER_STOPPED, 0);
  tk->cb(tk->pub, FLEET_ECANCELED, NULL);
}

static void ticker_on_claim(fleet__req_t *r, int status,
                            const fleet__reply_t *reply);
static void ticker_on_ack(fleet__req_t *r, int status,
                          const fleet__reply_t *reply);

/* The ticker's background calls: nobody waits for them. */
static const fleet__call_t ticker_claim_call = {
    "pool.ticker.claim", FLEET__OP_POOL_TICK, ticker_on_claim, NULL};
static const fleet__call_t ticker_ack_call = {
    "pool.ticker.ack", FLEET__OP_POOL_TICK_ACK, ticker_on_ack, NULL};

static void ticker_on_ack(fleet__req_t *r, int status,
                          const fleet__reply_t *reply) {
  ticker_t *tk = (ticker_t *)r->handle;
  uint64_t seq = (uint64_t)(uintptr_t)r->user_data;

  (void)reply;
  fleet__req_done(r);
  tk->ack_inflight = 0;
  if (status == 0 && tk->unacked == seq)
    tk->unacked = 0;
  else if (status != 0)
    fleet__handle_error(&tk->c.base, status);
}

/* Acknowledges the tick delivered last (tk->unacked), if it is not in
 * flight already: a request without a cancel hook, so that it goes out
 * from a closing ticker too. A failure leaves it to the next claim. */
static void ticker_ack(ticker_t *tk) {
  fleet_bytes_t key = fleet__key_bytes(&tk->c.tag);
  int err;

  if (tk->unacked == 0 || tk->ack_inflight)
    return;
  err = fleet__args_begin(&tk->ack_args, 3, 1);
  if (err == 0) {
    fleet__args_bytes(&tk->ack_args, tk->c.name, tk->c.name_len);
    fleet__args_bytes(&tk->ack_args, tk->claimer, tk->claimer_len);
    fleet__args_u64(&tk->ack_args, tk->unacked);
    err = fleet__call(&tk->c.base, &ticker_ack_call, NULL,
                      (void *)(uintptr_t)tk->unacked, &key, 1,
                      tk->ack_args.argv, tk->ack_args.argc);
  }
  if (err == 0) {
    tk->ack_inflight = 1;
    return;
  }
  fleet__handle_error(&tk->c.base, err);
}

/* Sends one claim; on failure, backs off. */
static void ticker_claim(ticker_t *tk) {
  fleet_bytes_t key = fleet__key_bytes(&tk->c.tag);
  int err = fleet__args_begin(&tk->c.args, 6, 4);

  if (err == 0) {
    fleet__args_bytes(&tk->c.args, tk->c.name, tk->c.name_len);
    fleet__args_u64(&tk->c.args, tk->period_ms);
    fleet__args_bytes(&tk->c.args, tk->claimer, tk->claimer_len);
    fleet__args_u64(&tk->c.args, tk->lease_ms);
    fleet__args_u64(&tk->c.args, tk->horizon_ms);
    fleet__args_u64(&tk->c.args, tk->unacked);
    /* The claim carries the acknowledgement again: it is confirmed with
     * the claim's reply. */
    err = fleet__call(&tk->c.base, &ticker_claim_call, NULL,
                      (void *)(uintptr_t)tk->unacked, &key, 1, tk->c.args.argv,
                      tk->c.args.argc);
  }
  if (err == 0) {
    ticker_set_state(tk, TICKER_CLAIMING, 0);
    return;
  }
  ticker_set_state(tk, TICKER_WAITING,
                   fleet__backoff_delay(TICKER_BACKOFF_MIN_MS, tk->period_ms,
                                        20, tk->failures++,
                                        fleet__rng_next(&tk->rng)));
  fleet__handle_error(&tk->c.base, err);
}

static void ticker_on_timer(uv_timer_t *timer) {
  ticker_t *tk = FLEET__CONTAINER_OF(timer, ticker_t, timer);

  if (tk->state == TICKER_WAITING && !tk->c.base.closing)
    ticker_claim(tk);
}

static void ticker_on_claim(fleet__req_t *r, int status,
                            const fleet__reply_t *reply) {
  ticker_t *tk = (ticker_t *)r->handle;
  uint64_t acked = (uint64_t)(uintptr_t)r->user_data;
  int64_t v[6];
  size_t i;

  fleet__req_done(r);
  if (status == 0 && acked != 0 && tk->unacked == acked)
    tk->unacked = 0;
  if (tk->c.base.closing || tk->state != TICKER_CLAIMING)
    return;
  if (status == 0 && !fleet__reply_is_array(reply, 6))
    status = FLEET_EPROTO;
  for (i = 0; status == 0 && i < 6; i++)
    if (fleet__reply_i64(&reply->elem[i], &v[i]) != 0 || (i > 0 && v[i] < 0))
      status = FLEET_EPROTO;
  if (status != 0) {
    ticker_set_state(tk, TICKER_WAITING,
                     fleet__backoff_delay(TICKER_BACKOFF_MIN_MS, tk->period_ms,
                                          20, tk->failures++,
                                          fleet__rng_next(&tk->rng)));
    fleet__handle_error(&tk->c.base, status);
    return;
  }
  tk->failures = 0;
  if (v[0] < 0) {
    ticker_stopped(tk);
    return;
  }
  /* One ms more: the server's next tick is due at, not before, that time. */
  ticker_set_state(tk, TICKER_WAITING, (uint64_t)v[4] + 1);
  if (v[0] == 1) {
    fleet_pool_tick_t tick = {(uint64_t)v[1], (uint64_t)v[2], (uint64_t)v[3],
                              v[5] != 0};
    tk->cb(tk->pub, 0, &tick);
    /* Acknowledged once the callback ran, even if it closed the ticker. */
    tk->unacked = tick.seq;
    ticker_ack(tk);
  }
}

/* ------------------------------------------------------------------------ */
/* End                                                                      */

static void ticker_on_stop(fleet__req_t *r, int status,
                           const fleet__reply_t *reply) {
  ticker_t *tk = (ticker_t *)r->handle;

  (void)reply;
  if (status == 0 && tk->state != TICKER_IDLE)
    ticker_stopped(tk);
  else if (status == 0)
    ticker_set_state(tk, TICKER_STOPPED, 0);
  fleet__call_finish(r, status);
}

static const fleet__call_t ticker_stop_call = {
    "pool.ticker.end", FLEET__OP_POOL_TICK_STOP, ticker_on_stop,
    fleet__call_fail_status};

int fleet_pool_ticker_end(fleet_pool_ticker_t *ticker, fleet_status_cb cb,
                          void *user_data) {
  int err;
  ticker_t *tk = (ticker_t *)fleet__call_enter(ticker, FLEET_HANDLE_POOL_TICKER,
                                               cb != NULL, &err);
  fleet_bytes_t key;
  uint64_t keep;

  if (tk == NULL)
    return err;
  if (tk->state == TICKER_STOPPED)
    return FLEET_EALREADY;
  keep = 10 * (uint64_t)tk->period_ms;
  if ((err = fleet__args_begin(&tk->c.args, 2, 1)) != 0)
    return err;
  key = fleet__key_bytes(&tk->c.tag);
  fleet__args_bytes(&tk->c.args, tk->c.name, tk->c.name_len);
  fleet__args_u64(&tk->c.args, keep < 1000 ? 1000 : keep);
  return fleet__call(&tk->c.base, &ticker_stop_call, (fleet__fn_t)cb, user_data,
                     &key, 1, tk->c.args.argv, tk->c.args.argc);
}

/* ------------------------------------------------------------------------ */
/* Init, start, close                                                       */

static void ticker_close_hook(fleet__handle_t *h) {
  ticker_t *tk = (ticker_t *)h;

  fleet__handle_uv_close(h, (uv_handle_t *)&tk->timer);
  /* A tick whose acknowledgement failed: once more, before leaving. */
  ticker_ack(tk);
}

static void ticker_free(fleet__handle_t *h) {
  ticker_t *tk = (ticker_t *)h;

  fleet__args_free(&tk->ack_args);
  free(tk->claimer);
  fleet__pool_child_free(&tk->c);
}

static const fleet__handle_vt_t ticker_vt = {
    .type = FLEET_HANDLE_POOL_TICKER,
    .req_size = sizeof(fleet__req_t),
    .close = ticker_close_hook,
    .free = ticker_free,
};

void fleet_pool_ticker_options_init(fleet_pool_ticker_options_t *options) {
  memset(options, 0, sizeof(*options));
}

int fleet_pool_ticker_init(fleet_pool_node_t *node, fleet_pool_ticker_t *ticker,
                           const char *name, uint32_t period_ms,
                           const fleet_pool_ticker_options_t *options) {
  fleet__pool_t *p = fleet__pool_of(node);
  fleet__pool_child_t *c;
  ticker_t *tk;
  int err =
      fleet__pool_child_init(node, (fleet_handle_t *)ticker, &ticker_vt,
                             sizeof(*tk), name, FLEET__NAME_MAX, period_ms,
                             options != NULL ? options->error_cb : NULL, &c);

  if (err != 0)
    return err;
  tk = (ticker_t *)c;
  tk->pub = ticker;
  tk->period_ms = period_ms;
  fleet__rng_seed(&tk->rng, (uint64_t)(uintptr_t)tk ^ uv_hrtime());
  tk->lease_ms = p->opts.worker_ttl_ms;
  tk->horizon_ms = 2 * (uint64_t)tk->lease_ms + 10 * (uint64_t)period_ms;
  tk->claimer = malloc(p->node_id_len + 18);
  if (tk->claimer == NULL) {
    fleet__pool_child_abort(&tk->c);
    return FLEET_ENOMEM;
  }
  tk->claimer_len = (size_t)snprintf(
      tk->claimer, p->node_id_len + 18, "%s:%08" PRIx32 "%08" PRIx32,
      p->node_id, fleet__rng_next(&tk->rng), fleet__rng_next(&tk->rng));
  fleet__handle_timer_init(&tk->c.base, &tk->timer);
  return 0;
}

int fleet_pool_ticker_start(fleet_pool_ticker_t *ticker,
                            fleet_pool_tick_cb cb) {
  int err;
  ticker_t *tk = (ticker_t *)fleet__call_enter(ticker, FLEET_HANDLE_POOL_TICKER,
                                               cb != NULL, &err);

  if (tk == NULL)
    return err;
  if (tk->state != TICKER_IDLE)
    return FLEET_EALREADY;
  tk->cb = cb;
  /* The first claim goes out from the timer: never inside this call. */
  ticker_set_state(tk, TICKER_WAITING, 0);
  return 0;
}

int fleet_pool_ticker_close(fleet_pool_ticker_t *ticker, fleet_close_cb cb) {
  return fleet__handle_close_of(ticker, FLEET_HANDLE_POOL_TICKER, cb);
}
