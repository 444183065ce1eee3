/* redis.c -- the Redis front-end for one server, or the master that the
 * sentinels name: ops (built by the Redis core, script_call.h) on one
 * pipelined connection, pub/sub on a second one opened on first use. It
 * routes; the core builds, pools, converts and dispatches. */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "redis/conn.h"
#include "redis/durable.h"
#include "redis/script_call.h"
#include "redis/sentinel.h"

typedef struct {
  fleet__rcore_t core; /* first: its base is the backend */
  const fleet__url_t *url;

  fleet__rconn_t main;
  fleet__rconn_t *sub; /* NULL until the first subscribe */
  /* redis[s]+sentinel://: finds the master, whose address is `url` then
   * (sentinel.c); it counts among conns_open. NULL otherwise. */
  fleet__sentinel_t *sentinel;
  int conns_open;
  int closing;
} redis_backend_t;

static const fleet__rconn_events_t redis_main_events;
static const fleet__rconn_events_t redis_sub_events;

/* ------------------------------------------------------------------------ */
/* Op requests                                                              */

static void redis_on_op_reply(fleet__rconn_t *c, fleet__rreq_t *req, int status,
                              redisReply *reply) {
  redis_backend_t *be = c->owner;
  fleet__reply_cb cb = req->cb;
  void *arg = req->arg;
  const fleet__reply_t *r;

  if (status == 0 && fleet__rcore_noscript(&be->core, req->script, reply)) {
    status = fleet__rcore_to_eval(req);
    if (status == 0 && !be->core.closing) {
      fleet__rconn_send(c, req);
      return;
    }
  }
  fleet__rcore_req_put(&be->core, req);
  status = fleet__rcore_outcome(&be->core, c->detail, status, reply, &r);
  if (status == FLEET_EREADONLY && be->sentinel != NULL && !be->core.closing)
    fleet__sentinel_refresh(be->sentinel); /* the master moved? */
  cb(arg, status, status == 0 ? r : NULL);
}

/* ------------------------------------------------------------------------ */
/* Durability: WAIT after job-state ops (config.wait_replicas)              */

/* An op whose callback waits for the WAIT that follows it. */
typedef struct {
  fleet__reply_cb cb;
  void *arg;
  int op_done;
  int status;           /* the op's own outcome */
  fleet__reply_t *copy; /* its reply, kept for the callback */
  int skip_waits;       /* WAIT replies to ignore (the op was resent) */
  int no_wait;          /* no WAIT follows the op (out of memory) */
  char detail[FLEET__DETAIL_MAX];
} redis_durable_t;

static void redis_on_wait_reply(fleet__rconn_t *c, fleet__rreq_t *req,
                                int status, redisReply *reply);

/* Queues "WAIT <n> <timeout>" for `d`. */
static int redis_send_wait(redis_backend_t *be, redis_durable_t *d) {
  fleet__rreq_t *req = fleet__rcore_wait(&be->core);

  if (req == NULL)
    return FLEET_ENOMEM;
  req->arg = d;
  req->on_reply = redis_on_wait_reply;
  fleet__rconn_send(&be->main, req);
  return 0;
}

/* Runs the op's callback with its outcome and frees `d`. */
static void redis_durable_finish(redis_backend_t *be, redis_durable_t *d,
                                 int status) {
  if (status == 0)
    be->core.base.detail[0] = '\0';
  d->cb(d->arg, status, status == 0 ? d->copy : NULL);
  free(d->copy);
  free(d);
}

/* The op's reply: kept until its WAIT answers. */
static void redis_on_durable_op(fleet__rconn_t *c, fleet__rreq_t *req,
                                int status, redisReply *reply) {
  redis_backend_t *be = c->owner;
  redis_durable_t *d = req->arg;
  const fleet__reply_t *r;

  if (status == 0 && !d->no_wait &&
      fleet__rcore_noscript(&be->core, req->script, reply)) {
    status = fleet__rcore_to_eval(req);
    if (status == 0 && !be->core.closing) {
      /* The WAIT queued already answers before the resent op: it is
       * skipped, and a new one follows the op. */
      fleet__rconn_send(c, req);
      d->skip_waits++;
      if (redis_send_wait(be, d) != 0)
        d->no_wait = 1;
      return;
    }
  }
  fleet__rcore_req_put(&be->core, req);
  status = fleet__rcore_outcome(&be->core, c->detail, status, reply, &r);
  if (status == 0 && d->no_wait) {
    /* No WAIT could be queued: the write is not known to be replicated. */
    status = FLEET_ENOMEM;
    fleet__backend_set_detail(&be->core.base, "out of memory for WAIT");
  }
  if (status == 0) {
    d->copy = fleet__reply_clone(r);
    if (d->copy == NULL) {
      status = FLEET_ENOMEM;
      fleet__backend_set_detail(&be->core.base, "out of memory");
    }
  }
  if (d->no_wait && d->skip_waits == 0) {
    redis_durable_finish(be, d, status);
    return;
  }
  memcpy(d->detail, be->core.base.detail, sizeof(d->detail));
  d->status = status;
  d->op_done = 1;
}

static void redis_on_wait_reply(fleet__rconn_t *c, fleet__rreq_t *req,
                                int status, redisReply *reply) {
  redis_backend_t *be = c->owner;
  redis_durable_t *d = req->arg;
  int st;

  fleet__rcore_req_put(&be->core, req);
  if (d->skip_waits > 0) {
    d->skip_waits--;
    if (d->skip_waits == 0 && d->no_wait && d->op_done)
      redis_durable_finish(be, d, d->status);
    return;
  }
  st = d->op_done ? d->status : FLEET_EPROTO;
  memcpy(be->core.base.detail, d->detail, sizeof(d->detail));
  if (st == 0)
    st = fleet__rcore_wait_outcome(&be->core, c->detail, status, reply);
  redis_durable_finish(be, d, st);
}

/* Sends `req` (built, with cb and arg) and its WAIT. */
static int redis_send_durable(redis_backend_t *be, fleet__rreq_t *req) {
  redis_durable_t *d = calloc(1, sizeof(*d));

  if (d == NULL)
    return FLEET_ENOMEM;
  d->cb = req->cb;
  d->arg = req->arg;
  req->arg = d;
  req->on_reply = redis_on_durable_op;
  fleet__rconn_send(&be->main, req);
  if (redis_send_wait(be, d) != 0)
    d->no_wait = 1; /* the op is queued: it fails when its reply comes */
  return 0;
}

static int redis_call(fleet__backend_t *base, fleet__op_t op,
                      const fleet_bytes_t *keys, size_t nkeys,
                      const fleet_bytes_t *args, size_t nargs,
                      fleet__reply_cb cb, void *arg) {
  redis_backend_t *be = (redis_backend_t *)base;
  fleet__rreq_t *req;
  int err = fleet__rcore_call_check(&be->core, cb);

  if (err == 0)
    err = fleet__rcore_build(&be->core, op, keys, nkeys, args, nargs, cb, arg,
                             &req);
  if (err != 0)
    return err;
  req->on_reply = redis_on_op_reply;
  if (be->core.config.wait_replicas > 0 && fleet__op_durable(op))
    return redis_send_durable(be, req);
  fleet__rconn_send(&be->main, req);
  return 0;
}

/* Tests only (fleet__backend_set_epoch()). */
static int redis_set_epoch(fleet__backend_t *base, const char *epoch) {
  redis_backend_t *be = (redis_backend_t *)base;
  size_t len = strlen(epoch);

  if (len == 0 || len > 20)
    return FLEET_EINVAL;
  fleet__rconn_set_fence(&be->main, epoch);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Pub/sub                                                                  */

/* Confirmation of SUBSCRIBE: the subscribers of that channel learn that
 * it is live from now on (they may have missed earlier messages). */
static void redis_on_subscribed(fleet__rconn_t *c, fleet__rreq_t *req,
                                int status, redisReply *reply) {
  redis_backend_t *be = c->owner;

  fleet__rcore_req_put(&be->core, req);
  fleet__rcore_subscribed(&be->core, NULL, status, reply);
}

static void redis_on_unsubscribed(fleet__rconn_t *c, fleet__rreq_t *req,
                                  int status, redisReply *reply) {
  redis_backend_t *be = c->owner;

  fleet__rcore_req_put(&be->core, req);
}

static int redis_sub_send(redis_backend_t *be, const char *verb,
                          const fleet__sub_t *s, fleet__rreq_cb on_reply) {
  fleet__rreq_t *req;
  fleet_bytes_t argv[2];

  argv[0].base = verb;
  argv[0].len = strlen(verb);
  argv[1].base = s->channel;
  argv[1].len = s->len;
  if ((req = fleet__rcore_command(&be->core, 2, argv)) == NULL)
    return FLEET_ENOMEM;
  req->on_reply = on_reply;
  fleet__rconn_send(be->sub, req);
  return 0;
}

static void redis_on_push(fleet__rconn_t *c, redisReply *reply) {
  redis_backend_t *be = c->owner;

  fleet__rcore_message(&be->core, NULL, reply);
}

/* The subscriber connection broke (every subscription is inactive until
 * confirmed again) or became ready (subscribe each channel once). */
static void redis_on_sub_state(fleet__rconn_t *c, int ready, int status) {
  redis_backend_t *be = c->owner;
  fleet__sub_t *s;

  if (!ready && be->sentinel != NULL && !be->core.closing)
    fleet__sentinel_refresh(be->sentinel);
  FLEET__SUBS_FOREACH(s, &be->core.subs) {
    if (!ready)
      s->live = 0;
    else if (s->cb != NULL && fleet__subs_first(&be->core.subs, s))
      redis_sub_send(be, "SUBSCRIBE", s, redis_on_subscribed);
  }
}

static void redis_on_conn_closed(fleet__rconn_t *c);

static int redis_subscribe(fleet__backend_t *base, const char *channel,
                           size_t len, fleet__message_cb cb, void *arg,
                           fleet__sub_t **out) {
  redis_backend_t *be = (redis_backend_t *)base;
  fleet__sub_t *s;
  int err = fleet__rcore_subscribe_check(&be->core, channel, len, cb, out);

  if (err != 0)
    return err;
  if (be->sub == NULL) {
    be->sub = calloc(1, sizeof(*be->sub));
    if (be->sub == NULL)
      return FLEET_ENOMEM;
    err = fleet__rconn_open(be->sub, be->core.loop, be, be->url,
                            &be->core.config, &redis_sub_events, 1, NULL, 0);
    if (err != 0) {
      free(be->sub);
      be->sub = NULL;
      return err;
    }
    be->sub->check_master = be->sentinel != NULL;
    be->conns_open++;
  }
  if ((s = fleet__subs_add(&be->core.subs, channel, len, cb, arg)) == NULL)
    return FLEET_ENOMEM;
  if (be->sub->state == FLEET__RCONN_READY) {
    /* The subscriber hears when the server confirms; until then it is not
     * live. Otherwise the next ready subscribes it. */
    err = redis_sub_send(be, "SUBSCRIBE", s, redis_on_subscribed);
    if (err != 0) {
      fleet__subs_drop(&be->core.subs, s);
      return err;
    }
  }
  *out = s;
  return 0;
}

static void redis_unsubscribe(fleet__backend_t *base, fleet__sub_t *s) {
  redis_backend_t *be = (redis_backend_t *)base;

  if (s == NULL || s->cb == NULL)
    return;
  if (!be->core.closing && be->sub != NULL &&
      be->sub->state == FLEET__RCONN_READY &&
      !fleet__subs_used(&be->core.subs, NULL, s))
    redis_sub_send(be, "UNSUBSCRIBE", s, redis_on_unsubscribed);
  fleet__subs_drop(&be->core.subs, s);
}

/* ------------------------------------------------------------------------ */
/* Lifecycle                                                                */

static void redis_on_main_state(fleet__rconn_t *c, int ready, int status) {
  redis_backend_t *be = c->owner;

  if (!ready && be->sentinel != NULL && !be->core.closing)
    fleet__sentinel_refresh(be->sentinel);

  fleet__backend_set_detail_bytes(&be->core.base, c->cause,
                                  status != 0 ? strlen(c->cause) : 0);
  be->core.events->state(
      be->core.owner,
      ready ? FLEET__BACKEND_READY : FLEET__BACKEND_RECONNECTING, status);
}

/* One of the connections (or the sentinel) finished closing. */
static void redis_part_closed(redis_backend_t *be) {
  if (--be->conns_open > 0)
    return;
  fleet__sentinel_free(be->sentinel);
  be->sentinel = NULL;
  fleet__rcore_free(&be->core);
  free(be->sub);
  be->core.events->closed(be->core.owner);
  free(be);
}

static void redis_on_conn_closed(fleet__rconn_t *c) {
  redis_part_closed(c->owner);
}

/* Sentinel: the master moved (or is known at last): the connections go
 * there. */
static void redis_on_master(void *owner) {
  redis_backend_t *be = owner;

  if (be->core.closing)
    return;
  /* Requests written from now on carry the new master's epoch, those
   * queued before the change included. */
  fleet__rconn_set_fence(&be->main, fleet__sentinel_epoch(be->sentinel));
  fleet__rconn_kick(&be->main, "the sentinels named a new master");
  if (be->sub != NULL)
    fleet__rconn_kick(be->sub, "the sentinels named a new master");
}

/* Sentinel: no sentinel answers; the requests waiting say why (with
 * fail_fast, at once: every sentinel was asked in turn). */
static void redis_on_sentinel_trouble(void *owner, const char *why) {
  redis_backend_t *be = owner;

  if (be->core.closing)
    return;
  fleet__rconn_note(&be->main, why);
  if (be->sub != NULL)
    fleet__rconn_note(be->sub, why);
  fleet__rconn_fail_fast(&be->main, FLEET_EUNAVAILABLE, why);
  if (be->sub != NULL && !be->core.closing)
    fleet__rconn_fail_fast(be->sub, FLEET_EUNAVAILABLE, why);
}

static void redis_on_sentinel_closed(void *owner) {
  redis_part_closed(owner);
}

static const fleet__sentinel_events_t redis_sentinel_events = {
    redis_on_master, redis_on_sentinel_trouble, redis_on_sentinel_closed};

static const fleet__rconn_events_t redis_main_events = {
    redis_on_main_state, NULL, redis_on_conn_closed};
static const fleet__rconn_events_t redis_sub_events = {
    redis_on_sub_state, redis_on_push, redis_on_conn_closed};

static int redis_open(uv_loop_t *loop, const fleet__url_t *url,
                      const fleet__backend_config_t *config,
                      const fleet__backend_events_t *events, void *owner,
                      fleet__backend_t **out) {
  redis_backend_t *be;
  int err;

  if (url->scheme != FLEET__URL_REDIS && url->scheme != FLEET__URL_UNIX &&
      url->scheme != FLEET__URL_SENTINEL)
    return FLEET_EINVAL;
  be = calloc(1, sizeof(*be));
  if (be == NULL)
    return FLEET_ENOMEM;
  fleet__rcore_init(&be->core, &fleet__redis_backend, loop, config, events,
                    owner, 0, sizeof(fleet__rreq_t));
  be->url = url;
  if (url->scheme == FLEET__URL_SENTINEL) {
    err = fleet__sentinel_new(&be->sentinel, loop, url, &be->core.config,
                              &redis_sentinel_events, be);
    if (err != 0) {
      free(be);
      return err;
    }
    be->url = fleet__sentinel_node(be->sentinel);
  }
  err =
      fleet__rconn_open(&be->main, loop, be, be->url, &be->core.config,
                        &redis_main_events, 0, fleet__scripts, fleet__nscripts);
  if (err != 0) {
    fleet__sentinel_free(be->sentinel);
    free(be);
    return err;
  }
  be->conns_open = 1;
  /* Ops issued before the first handshake go as FCALL: a server without
   * the functions refuses them unrun, and they go again as EVAL. */
  be->core.functions = be->core.config.functions;
  if (be->core.config.functions)
    be->main.functions = &be->core.functions;
  if (be->sentinel != NULL) {
    be->main.check_master = 1;
    be->conns_open++;
    fleet__sentinel_start(be->sentinel);
  }
  *out = &be->core.base;
  return 0;
}

static void redis_close(fleet__backend_t *base) {
  redis_backend_t *be = (redis_backend_t *)base;

  if (!fleet__rcore_close(&be->core))
    return;
  if (be->sentinel != NULL)
    fleet__sentinel_close(be->sentinel);
  if (be->sub != NULL)
    fleet__rconn_close(be->sub);
  fleet__rconn_close(&be->main);
}

static void redis_flush(fleet__backend_t *base) {
  redis_backend_t *be = (redis_backend_t *)base;

  if (!be->core.closing)
    fleet__rconn_flush(&be->main);
}

const fleet__backend_vtable_t fleet__redis_backend = {
    redis_open,  redis_call,  redis_subscribe, redis_unsubscribe,
    redis_close, redis_flush, redis_set_epoch};
