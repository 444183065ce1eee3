/* redis.c -- the Redis backend: ops as EVALSHA calls (or plain commands)
 * on one pipelined connection, pub/sub on a second one opened on first
 * use. */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "redis/cluster.h"
#include "redis/conn.h"
#include "redis/durable.h"
#include "redis/reply.h"
#include "redis/subs.h"
#include "redis/sentinel.h"

typedef struct {
  fleet__backend_t base;
  uv_loop_t *loop;
  const fleet__url_t *url;
  fleet__backend_config_t config;
  const fleet__backend_events_t *events;
  void *owner;
  const fleet__script_t *scripts[FLEET__OP_COUNT];

  fleet__rconn_t main;
  fleet__rconn_t *sub; /* NULL until the first subscribe */
  /* redis[s]+sentinel://: finds the master, whose address is `url` then
   * (sentinel.c); it counts among conns_open. NULL otherwise. */
  fleet__sentinel_t *sentinel;
  int conns_open;
  int closing;

  fleet__sub_t *subs;
  int dispatching; /* > 0 while message callbacks run */
  int subs_dead;   /* unsubscribed entries waiting to be freed */

  fleet__rreq_t *free_reqs;
  fleet__reply_scratch_t scratch;
} redis_backend_t;

static const fleet__rconn_events_t redis_main_events;
static const fleet__rconn_events_t redis_sub_events;

/* ------------------------------------------------------------------------ */
/* Op requests                                                              */

static fleet__rreq_t *redis_req_get(redis_backend_t *be) {
  fleet__rreq_t *req = be->free_reqs;
  if (req != NULL) {
    be->free_reqs = req->next;
    req->next = NULL;
    req->deadline = 0;
    return req;
  }
  return calloc(1, sizeof(*req));
}

/* Largest buffer a pooled request keeps: a rare large command (a 1 MiB
 * value) should not pin its memory for the life of the client. */
#define REDIS_REQ_KEEP (64 * 1024)

static void redis_req_put(redis_backend_t *be, fleet__rreq_t *req) {
  if (req->cap > REDIS_REQ_KEEP) {
    free(req->buf);
    req->buf = NULL;
    req->cap = req->len = 0;
  }
  req->next = be->free_reqs;
  be->free_reqs = req;
}

/* Rewrites an EVALSHA request as EVAL with the script body, keeping its
 * keys and args, after the server answered NOSCRIPT (a restart, a
 * SCRIPT FLUSH, a failover). EVAL also caches the script again. */
int fleet__redis_req_to_eval(fleet__rreq_t *req) {
  fleet__rreq_t tmp;
  size_t tail_len = req->len - req->script_tail;
  size_t argc = 0, i;
  int err;

  /* The element count is the first line: "*<argc>\r\n". */
  for (i = 1; i < req->len && req->buf[i] != '\r'; i++)
    argc = argc * 10 + (size_t)(req->buf[i] - '0');
  memset(&tmp, 0, sizeof(tmp));
  err = fleet__rreq_begin(&tmp, argc);
  if (err == 0)
    err = fleet__rreq_arg(&tmp, "EVAL", 4);
  if (err == 0)
    err = fleet__rreq_arg(&tmp, req->script->body, req->script->len);
  if (err == 0 && tmp.len + tail_len > tmp.cap) {
    char *p = realloc(tmp.buf, tmp.len + tail_len);
    err = p != NULL ? 0 : FLEET_ENOMEM;
    if (p != NULL) {
      tmp.buf = p;
      tmp.cap = tmp.len + tail_len;
    }
  }
  if (err != 0) {
    free(tmp.buf);
    return err;
  }
  memcpy(tmp.buf + tmp.len, req->buf + req->script_tail, tail_len);
  tmp.len += tail_len;
  free(req->buf);
  req->buf = tmp.buf;
  req->cap = tmp.cap;
  req->len = tmp.len;
  req->script = NULL; /* an EVAL cannot answer NOSCRIPT */
  return 0;
}

/* Sets the detail for a completion with `status`: "" on success, the
 * server's text for an error reply (or one inside an array), what the
 * connection said for its own errors. */
static void redis_set_detail(redis_backend_t *be, const fleet__rconn_t *c,
                             int status, const redisReply *reply) {
  const redisReply *err;

  if (status == 0) {
    be->base.detail[0] = '\0';
    return;
  }
  if (reply == NULL) {
    fleet__backend_set_detail_bytes(&be->base, c->detail, strlen(c->detail));
    return;
  }
  err = fleet__redis_reply_first_error(reply);
  if (err != NULL)
    fleet__backend_set_detail_bytes(&be->base, err->str, err->len);
  else if (status == FLEET_EPROTO)
    fleet__backend_set_detail(&be->base, "unexpected reply of type %d",
                              reply->type);
  else
    fleet__backend_set_detail(&be->base, "%s", fleet_strerror(status));
}

static void redis_on_op_reply(fleet__rconn_t *c, fleet__rreq_t *req, int status,
                              redisReply *reply) {
  redis_backend_t *be = c->owner;
  fleet__reply_cb cb = req->cb;
  void *arg = req->arg;
  const fleet__reply_t *r = NULL;

  if (status == 0 && req->script != NULL && fleet__redis_is_noscript(reply)) {
    if (be->events->log != NULL) { /* the logging hook */
      char msg[160];
      snprintf(msg, sizeof(msg),
               "script %s not in the server's cache (NOSCRIPT): reloading",
               req->script->name);
      be->events->log(be->owner, FLEET_LOG_INFO, msg);
    }
    status = fleet__redis_req_to_eval(req);
    if (status == 0 && !be->closing) {
      fleet__rconn_send(c, req);
      return;
    }
  }
  redis_req_put(be, req);
  if (status == 0)
    status = fleet__redis_reply_convert(&be->scratch, reply, &r);
  if (status == FLEET_EREADONLY && be->sentinel != NULL && !be->closing)
    fleet__sentinel_refresh(be->sentinel); /* the master moved? */
  redis_set_detail(be, c, status, reply);
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
  fleet__rreq_t *req = redis_req_get(be);
  char n[16], ms[16];
  int nl, ml;

  if (req == NULL)
    return FLEET_ENOMEM;
  nl = snprintf(n, sizeof(n), "%u", (unsigned)be->config.wait_replicas);
  ml = snprintf(ms, sizeof(ms), "%u", (unsigned)be->config.wait_timeout_ms);
  if (fleet__rreq_begin(req, 3) != 0 || fleet__rreq_arg(req, "WAIT", 4) != 0 ||
      fleet__rreq_arg(req, n, (size_t)nl) != 0 ||
      fleet__rreq_arg(req, ms, (size_t)ml) != 0) {
    redis_req_put(be, req);
    return FLEET_ENOMEM;
  }
  req->script = NULL;
  req->arg = d;
  req->on_reply = redis_on_wait_reply;
  fleet__rconn_send(&be->main, req);
  return 0;
}

/* Runs the op's callback with its outcome and frees `d`. */
static void redis_durable_finish(redis_backend_t *be, redis_durable_t *d,
                                 int status) {
  if (status == 0)
    be->base.detail[0] = '\0';
  d->cb(d->arg, status, status == 0 ? d->copy : NULL);
  free(d->copy);
  free(d);
}

/* The op's reply: kept until its WAIT answers. */
static void redis_on_durable_op(fleet__rconn_t *c, fleet__rreq_t *req,
                                int status, redisReply *reply) {
  redis_backend_t *be = c->owner;
  redis_durable_t *d = req->arg;
  const fleet__reply_t *r = NULL;

  if (status == 0 && req->script != NULL && fleet__redis_is_noscript(reply) &&
      !d->no_wait) {
    status = fleet__redis_req_to_eval(req);
    if (status == 0 && !be->closing) {
      /* The WAIT queued already answers before the resent op: it is
       * skipped, and a new one follows the op. */
      fleet__rconn_send(c, req);
      d->skip_waits++;
      if (redis_send_wait(be, d) != 0)
        d->no_wait = 1;
      return;
    }
  }
  redis_req_put(be, req);
  if (status == 0)
    status = fleet__redis_reply_convert(&be->scratch, reply, &r);
  redis_set_detail(be, c, status, reply);
  if (status == 0 && d->no_wait) {
    /* No WAIT could be queued: the write is not known to be replicated. */
    status = FLEET_ENOMEM;
    fleet__backend_set_detail(&be->base, "out of memory for WAIT");
  }
  if (status == 0) {
    d->copy = fleet__reply_clone(r);
    if (d->copy == NULL) {
      status = FLEET_ENOMEM;
      fleet__backend_set_detail(&be->base, "out of memory");
    }
  }
  if (d->no_wait && d->skip_waits == 0) {
    redis_durable_finish(be, d, status);
    return;
  }
  memcpy(d->detail, be->base.detail, sizeof(d->detail));
  d->status = status;
  d->op_done = 1;
}

static void redis_on_wait_reply(fleet__rconn_t *c, fleet__rreq_t *req,
                                int status, redisReply *reply) {
  redis_backend_t *be = c->owner;
  redis_durable_t *d = req->arg;
  int st;

  redis_req_put(be, req);
  if (d->skip_waits > 0) {
    d->skip_waits--;
    if (d->skip_waits == 0 && d->no_wait && d->op_done)
      redis_durable_finish(be, d, d->status);
    return;
  }
  st = d->op_done ? d->status : FLEET_EPROTO;
  memcpy(be->base.detail, d->detail, sizeof(d->detail));
  if (st == 0 && status != 0) {
    st = status;
    fleet__backend_set_detail(&be->base, "WAIT: %s", c->detail);
  } else if (st == 0 && reply->type == REDIS_REPLY_ERROR) {
    st = fleet__reply_error_code(reply->str, reply->len);
    fleet__backend_set_detail(&be->base, "WAIT: %.*s", (int)reply->len,
                              reply->str);
  } else if (st == 0 && reply->type != REDIS_REPLY_INTEGER) {
    st = FLEET_EPROTO;
    fleet__backend_set_detail(&be->base, "WAIT: unexpected reply of type %d",
                              reply->type);
  } else if (st == 0 && reply->integer < (long long)be->config.wait_replicas) {
    st = FLEET_ETIMEDOUT;
    fleet__backend_set_detail(
        &be->base,
        "WAIT: %lld of %u replicas acknowledged the write within %u ms; it "
        "is done on the master, but a failover may lose it",
        (long long)reply->integer, (unsigned)be->config.wait_replicas,
        (unsigned)be->config.wait_timeout_ms);
  }
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
  const fleet__script_t *script;
  const char *command;
  fleet__rreq_t *req;
  char numkeys[24];
  size_t i;
  int err, fenced;

  if (be->closing)
    return FLEET_ECLOSING;
  if ((unsigned)op >= FLEET__OP_COUNT || cb == NULL)
    return FLEET_EINVAL;
  script = be->scripts[op];
  command = fleet__op_command(op);
  if (script == NULL && command == NULL)
    return FLEET_EINVAL;
  req = redis_req_get(be);
  if (req == NULL)
    return FLEET_ENOMEM;
  /* A fenced op's epoch is appended by the connection when it writes it. */
  fenced = script != NULL && fleet__op_fenced(op);
  if (script != NULL) {
    int n = snprintf(numkeys, sizeof(numkeys), "%zu", nkeys);
    err = fleet__rreq_begin(req, 3 + nkeys + nargs + (size_t)fenced);
    if (err == 0)
      err = fleet__rreq_arg(req, "EVALSHA", 7);
    if (err == 0)
      err = fleet__rreq_arg(req, script->sha1, 40);
    req->script_tail = req->len;
    if (err == 0)
      err = fleet__rreq_arg(req, numkeys, (size_t)n);
  } else {
    err = fleet__rreq_begin(req, 1 + nkeys + nargs);
    if (err == 0)
      err = fleet__rreq_arg(req, command, strlen(command));
  }
  for (i = 0; err == 0 && i < nkeys; i++)
    err = fleet__rreq_arg(req, keys[i].base, keys[i].len);
  for (i = 0; err == 0 && i < nargs; i++)
    err = fleet__rreq_arg(req, args[i].base, args[i].len);
  if (err != 0) {
    redis_req_put(be, req);
    return err;
  }
  req->script = script;
  req->fenced = fenced;
  req->cb = cb;
  req->arg = arg;
  req->on_reply = redis_on_op_reply;
  if (be->config.wait_replicas > 0 && fleet__op_durable(op))
    return redis_send_durable(be, req);
  fleet__rconn_send(&be->main, req);
  return 0;
}

int fleet__redis_set_epoch(fleet__backend_t *base, const char *epoch) {
  redis_backend_t *be = (redis_backend_t *)base;
  size_t len = strlen(epoch);

  if (len == 0 || len > 20)
    return FLEET_EINVAL;
  fleet__rconn_set_fence(&be->main, epoch);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Pub/sub                                                                  */

static void redis_sub_free_dead(redis_backend_t *be) {
  fleet__subs_free_dead(&be->subs, be->dispatching, &be->subs_dead);
}

static int redis_channel_used(redis_backend_t *be, const char *ch, size_t len,
                              const fleet__sub_t *except) {
  fleet__sub_t *s;
  for (s = be->subs; s != NULL; s = s->next)
    if (s != except && s->cb != NULL && s->len == len &&
        memcmp(s->channel, ch, len) == 0)
      return 1;
  return 0;
}

/* Confirmation of SUBSCRIBE: the subscribers of that channel learn that
 * it is live from now on (they may have missed earlier messages). */
static void redis_on_subscribed(fleet__rconn_t *c, fleet__rreq_t *req,
                                int status, redisReply *reply) {
  redis_backend_t *be = c->owner;
  const redisReply *ch;
  fleet__sub_t *s;

  redis_req_put(be, req);
  if (status != 0 || reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
      reply->element[1]->type != REDIS_REPLY_STRING)
    return;
  ch = reply->element[1];
  be->dispatching++;
  for (s = be->subs; s != NULL && !be->closing; s = s->next) {
    if (s->cb != NULL && !s->active && s->len == ch->len &&
        memcmp(s->channel, ch->str, ch->len) == 0) {
      s->active = 1;
      s->cb(s->arg, FLEET_ECONNLOST, NULL, 0);
    }
  }
  be->dispatching--;
  redis_sub_free_dead(be);
}

static void redis_on_unsubscribed(fleet__rconn_t *c, fleet__rreq_t *req,
                                  int status, redisReply *reply) {
  redis_req_put(c->owner, req);
}

static int redis_sub_send(redis_backend_t *be, const char *verb, const char *ch,
                          size_t len, fleet__rreq_cb on_reply) {
  fleet__rreq_t *req = redis_req_get(be);

  if (req == NULL)
    return FLEET_ENOMEM;
  if (fleet__rreq_begin(req, 2) != 0 ||
      fleet__rreq_arg(req, verb, strlen(verb)) != 0 ||
      fleet__rreq_arg(req, ch, len) != 0) {
    redis_req_put(be, req);
    return FLEET_ENOMEM;
  }
  req->script = NULL;
  req->on_reply = on_reply;
  fleet__rconn_send(be->sub, req);
  return 0;
}

static void redis_on_push(fleet__rconn_t *c, redisReply *reply) {
  redis_backend_t *be = c->owner;
  const redisReply *ch = reply->element[1], *msg = reply->element[2];
  fleet__sub_t *s;

  if (ch->type != REDIS_REPLY_STRING || msg->type != REDIS_REPLY_STRING)
    return;
  be->dispatching++;
  for (s = be->subs; s != NULL && !be->closing; s = s->next)
    if (s->cb != NULL && s->active && s->len == ch->len &&
        memcmp(s->channel, ch->str, ch->len) == 0)
      s->cb(s->arg, 0, msg->str, msg->len);
  be->dispatching--;
  redis_sub_free_dead(be);
}

/* Whether `s` is the first live subscriber of its channel. */
static int redis_sub_first(redis_backend_t *be, const fleet__sub_t *s) {
  const fleet__sub_t *t;
  for (t = be->subs; t != s; t = t->next)
    if (t->cb != NULL && t->len == s->len &&
        memcmp(t->channel, s->channel, s->len) == 0)
      return 0;
  return 1;
}

/* The subscriber connection broke (every subscription is inactive until
 * confirmed again) or became ready (subscribe each channel once). */
static void redis_on_sub_state(fleet__rconn_t *c, int ready, int status) {
  redis_backend_t *be = c->owner;
  fleet__sub_t *s;

  if (!ready && be->sentinel != NULL && !be->closing)
    fleet__sentinel_refresh(be->sentinel);
  for (s = be->subs; s != NULL; s = s->next) {
    if (!ready)
      s->active = 0;
    else if (s->cb != NULL && redis_sub_first(be, s))
      redis_sub_send(be, "SUBSCRIBE", s->channel, s->len, redis_on_subscribed);
  }
}

static void redis_on_conn_closed(fleet__rconn_t *c);

static int redis_subscribe(fleet__backend_t *base, const char *channel,
                           size_t len, fleet__message_cb cb, void *arg,
                           fleet__sub_t **out) {
  redis_backend_t *be = (redis_backend_t *)base;
  fleet__sub_t *s;
  int err;

  if (be->closing)
    return FLEET_ECLOSING;
  if (channel == NULL || len == 0 || cb == NULL || out == NULL)
    return FLEET_EINVAL;
  if ((s = fleet__subs_new(channel, len, cb, arg)) == NULL)
    return FLEET_ENOMEM;
  if (be->sub == NULL) {
    be->sub = calloc(1, sizeof(*be->sub));
    if (be->sub == NULL) {
      free(s->channel);
      free(s);
      return FLEET_ENOMEM;
    }
    err = fleet__rconn_open(be->sub, be->loop, be, be->url, &be->config,
                            &redis_sub_events, 1, NULL, 0);
    if (err != 0) {
      free(be->sub);
      be->sub = NULL;
      free(s->channel);
      free(s);
      return err;
    }
    be->sub->check_master = be->sentinel != NULL;
    be->conns_open++;
  }
  s->next = be->subs;
  be->subs = s;
  if (be->sub->state == FLEET__RCONN_READY) {
    /* The subscriber hears when the server confirms; until then it is not
     * active. Otherwise the next ready subscribes it. */
    err = redis_sub_send(be, "SUBSCRIBE", channel, len, redis_on_subscribed);
    if (err != 0) {
      s->cb = NULL;
      be->subs_dead++;
      redis_sub_free_dead(be);
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
  s->cb = NULL;
  be->subs_dead++;
  if (!be->closing && be->sub != NULL && be->sub->state == FLEET__RCONN_READY &&
      !redis_channel_used(be, s->channel, s->len, s))
    redis_sub_send(be, "UNSUBSCRIBE", s->channel, s->len,
                   redis_on_unsubscribed);
  redis_sub_free_dead(be);
}

/* ------------------------------------------------------------------------ */
/* Lifecycle                                                                */

static void redis_on_main_state(fleet__rconn_t *c, int ready, int status) {
  redis_backend_t *be = c->owner;

  if (!ready && be->sentinel != NULL && !be->closing)
    fleet__sentinel_refresh(be->sentinel);

  fleet__backend_set_detail_bytes(&be->base, c->cause,
                                  status != 0 ? strlen(c->cause) : 0);
  be->events->state(be->owner,
                    ready ? FLEET__BACKEND_READY : FLEET__BACKEND_RECONNECTING,
                    status);
}

/* One of the connections (or the sentinel) finished closing. */
static void redis_part_closed(redis_backend_t *be) {
  if (--be->conns_open > 0)
    return;
  fleet__sentinel_free(be->sentinel);
  be->sentinel = NULL;
  while (be->subs != NULL) {
    fleet__sub_t *s = be->subs;
    be->subs = s->next;
    free(s->channel);
    free(s);
  }
  while (be->free_reqs != NULL) {
    fleet__rreq_t *req = be->free_reqs;
    be->free_reqs = req->next;
    free(req->buf);
    free(req);
  }
  free(be->sub);
  fleet__reply_scratch_free(&be->scratch);
  be->events->closed(be->owner);
  free(be);
}

static void redis_on_conn_closed(fleet__rconn_t *c) {
  redis_part_closed(c->owner);
}

/* Sentinel: the master moved (or is known at last): the connections go
 * there. */
static void redis_on_master(void *owner) {
  redis_backend_t *be = owner;

  if (be->closing)
    return;
  /* Requests written from now on carry the new master's epoch, those
   * queued before the change included. */
  fleet__rconn_set_fence(&be->main, fleet__sentinel_epoch(be->sentinel));
  fleet__rconn_kick(&be->main, "the sentinels named a new master");
  if (be->sub != NULL)
    fleet__rconn_kick(be->sub, "the sentinels named a new master");
}

/* Sentinel: no sentinel answers; the requests waiting say why. */
static void redis_on_sentinel_trouble(void *owner, const char *why) {
  redis_backend_t *be = owner;

  if (be->closing)
    return;
  fleet__rconn_note(&be->main, why);
  if (be->sub != NULL)
    fleet__rconn_note(be->sub, why);
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

const fleet__script_t *fleet__redis_find_script(const char *name, int sharded) {
  const fleet__script_t *t = sharded ? fleet__scripts_sharded : fleet__scripts;
  size_t i;
  for (i = 0; i < fleet__nscripts; i++)
    if (strcmp(t[i].name, name) == 0)
      return &t[i];
  return NULL;
}

int fleet__redis_op_implemented(fleet__op_t op) {
  if ((unsigned)op >= FLEET__OP_COUNT)
    return 0;
  return fleet__op_command(op) != NULL ||
         fleet__redis_find_script(fleet__op_name(op), 0) != NULL;
}

static int redis_open(uv_loop_t *loop, const fleet__url_t *url,
                      const fleet__backend_config_t *config,
                      const fleet__backend_events_t *events, void *owner,
                      fleet__backend_t **out) {
  redis_backend_t *be;
  size_t i;
  int err;

  if (url->scheme != FLEET__URL_REDIS && url->scheme != FLEET__URL_UNIX &&
      url->scheme != FLEET__URL_SENTINEL)
    return FLEET_EINVAL;
  be = calloc(1, sizeof(*be));
  if (be == NULL)
    return FLEET_ENOMEM;
  be->base.vt = &fleet__redis_backend;
  be->loop = loop;
  be->url = url;
  be->config = *config;
  be->events = events;
  be->owner = owner;
  for (i = 0; i < FLEET__OP_COUNT; i++)
    if (fleet__op_command((fleet__op_t)i) == NULL)
      be->scripts[i] =
          fleet__redis_find_script(fleet__op_name((fleet__op_t)i), 0);
  if (url->scheme == FLEET__URL_SENTINEL) {
    err = fleet__sentinel_new(&be->sentinel, loop, url, &be->config,
                              &redis_sentinel_events, be);
    if (err != 0) {
      free(be);
      return err;
    }
    be->url = fleet__sentinel_node(be->sentinel);
  }
  err =
      fleet__rconn_open(&be->main, loop, be, be->url, &be->config,
                        &redis_main_events, 0, fleet__scripts, fleet__nscripts);
  if (err != 0) {
    fleet__sentinel_free(be->sentinel);
    free(be);
    return err;
  }
  be->conns_open = 1;
  if (be->sentinel != NULL) {
    be->main.check_master = 1;
    be->conns_open++;
    fleet__sentinel_start(be->sentinel);
  }
  *out = &be->base;
  return 0;
}

static void redis_close(fleet__backend_t *base) {
  redis_backend_t *be = (redis_backend_t *)base;

  if (be->closing)
    return;
  be->closing = 1;
  if (be->sentinel != NULL)
    fleet__sentinel_close(be->sentinel);
  if (be->sub != NULL)
    fleet__rconn_close(be->sub);
  fleet__rconn_close(&be->main);
}

static void redis_flush(fleet__backend_t *base) {
  redis_backend_t *be = (redis_backend_t *)base;

  if (!be->closing)
    fleet__rconn_flush(&be->main);
}

const fleet__backend_vtable_t fleet__redis_backend = {
    redis_open,        redis_call,  redis_subscribe,
    redis_unsubscribe, redis_close, redis_flush};
