/* byo.c -- the backend over the program's own hiredis async context.
 *
 * Ops go out with redisAsyncCommandArgv on the program's context `ac`
 * (EVALSHA, EVAL after NOSCRIPT); their replies come back through
 * hiredis's callbacks and are converted as the Redis backend converts
 * them (reply.c). Pub/sub runs on a second context in subscriber mode:
 * the program's `sub_ac`, or one this backend opens to the address of
 * `ac` on first subscribe.
 *
 * hiredis holds a pointer to a record of ours for every command it has not
 * answered and for every channel it is subscribed to, and may call back
 * long after the client closed (the program's context outlives it). So
 * records outlive the client: the backend counts them (`refs`) and frees
 * itself only once it reported closed and hiredis let go of all of them.
 * A NULL reply means the context is going away (its connection broke or
 * the program freed it): from then on the backend never touches it.
 *
 * Like the other front-ends it only routes: the command head of an op,
 * NOSCRIPT, reply conversion and the subscriber list are the Redis
 * core's (script_call.h). */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include <hiredis/adapters/libuv.h>
#include <hiredis/async.h>

#include "common/list.h"
#include "common/url.h"
#include "common/util.h"
#include "redis/script_call.h"

typedef struct byo_backend_s byo_backend_t;

/* One op. Owned by hiredis while `in_hiredis`, by the caller's callback
 * while `cb` is set; back to the backend's pool when neither holds it
 * (with its arrays and buffer, reused by the next op). */
typedef struct byo_op_s {
  fleet__list_t node;      /* on the pending list, while cb is set */
  fleet__free_t free_node; /* on the backend's pool while unused */
  byo_backend_t *be;
  const fleet__script_t *script;
  fleet__reply_cb cb;
  void *arg;
  int in_hiredis;
  int eval; /* resent as EVAL */
  int argc;
  const char **argv;
  size_t *argvlen;
  size_t argv_cap; /* entries argv and argvlen hold */
  char *blob;      /* the copied arguments */
  size_t blob_cap;
} byo_op_t;

/* A channel subscribed on the subscriber context (the `where` of its
 * subscribers); it stays subscribed until the client closes. */
typedef struct byo_chan_s {
  struct byo_chan_s *next;
  byo_backend_t *be;
  char *name;
  size_t len;
  int registered; /* hiredis holds it (SUBSCRIBE sent, not yet let go) */
  int live;       /* the server confirmed the subscription */
} byo_chan_t;

struct byo_backend_s {
  fleet__rcore_t core; /* first: its base is the backend */

  redisAsyncContext *ac;     /* NULL once gone */
  redisAsyncContext *sub_ac; /* NULL until opened, or once gone */
  int sub_own;               /* this backend opened sub_ac */
  int sub_tried;             /* an own subscriber context was opened once */
  /* Where an own subscriber context connects (copied from ac at open). */
  char *sub_host;
  int sub_port;
  char *sub_path;

  fleet__list_t pending; /* ops whose callback has not run */
  fleet__freelist_t free_ops;
  byo_chan_t *chans;

  uv_idle_t idle; /* deferred work: ready, live notices, close */
  int ready_reported;
  int closing;
  int closed;  /* events->closed ran */
  size_t refs; /* records hiredis holds */
};

static void byo_op_free(byo_op_t *op) {
  free(op->blob);
  free((void *)op->argv);
  free(op->argvlen);
  free(op);
}

static void byo_maybe_free(byo_backend_t *be) {
  byo_op_t *op;

  if (!be->closed || be->refs > 0)
    return;
  while ((op = FLEET__FREELIST_TAKE(&be->free_ops, byo_op_t, free_node)) !=
         NULL)
    byo_op_free(op);
  while (be->chans != NULL) {
    byo_chan_t *ch = be->chans;
    be->chans = ch->next;
    free(ch->name);
    free(ch);
  }
  fleet__rcore_free(&be->core);
  free(be->sub_host);
  free(be->sub_path);
  free(be);
}

static void byo_on_idle(uv_idle_t *t);

static void byo_defer(byo_backend_t *be) {
  if (!uv_is_closing((uv_handle_t *)&be->idle))
    (void)uv_idle_start(&be->idle, byo_on_idle);
}

/* ------------------------------------------------------------------------ */
/* Ops                                                                      */

/* Largest argument buffer a pooled op keeps. */
#define BYO_OP_KEEP (64 * 1024)

/* An op from the pool (or new) with room for `argc` arguments and `size`
 * bytes of them; NULL when out of memory. */
static byo_op_t *byo_op_get(byo_backend_t *be, size_t argc, size_t size) {
  byo_op_t *op = FLEET__FREELIST_TAKE(&be->free_ops, byo_op_t, free_node);

  if (op == NULL && (op = calloc(1, sizeof(*op))) == NULL)
    return NULL;
  op->be = be;
  op->in_hiredis = 0;
  op->eval = 0;
  op->cb = NULL;
  if (op->argv_cap < argc) {
    const char **argv = realloc((void *)op->argv, argc * sizeof(*argv));
    size_t *lens =
        argv != NULL ? realloc(op->argvlen, argc * sizeof(*lens)) : NULL;
    if (argv != NULL)
      op->argv = argv;
    if (lens != NULL) {
      op->argvlen = lens;
      op->argv_cap = argc;
    }
  }
  if (op->argv_cap >= argc && op->blob_cap < size) {
    char *blob = realloc(op->blob, size);
    if (blob != NULL) {
      op->blob = blob;
      op->blob_cap = size;
    }
  }
  if (op->argv_cap < argc || op->blob_cap < size) {
    byo_op_free(op);
    return NULL;
  }
  op->argc = (int)argc;
  return op;
}

/* Gives `op` back to its backend's pool. */
static void byo_op_put(byo_op_t *op) {
  if (op->blob_cap > BYO_OP_KEEP) {
    free(op->blob);
    op->blob = NULL;
    op->blob_cap = 0;
  }
  (void)fleet__freelist_put(&op->be->free_ops, &op->free_node);
}

/* The program's context is gone (or going): never touch it again. */
static void byo_ac_lost(byo_backend_t *be, const redisAsyncContext *ac) {
  if (be->ac == NULL)
    return;
  be->ac = NULL;
  if (be->core.closing)
    return;
  if (ac->err != 0)
    fleet__backend_set_detail(&be->core.base,
                              "the program's hiredis connection broke: %s",
                              ac->errstr);
  else
    fleet__backend_set_detail(&be->core.base,
                              "the program's hiredis connection was closed");
  be->core.events->state(be->core.owner, FLEET__BACKEND_RECONNECTING,
                         FLEET_ECONNLOST);
}

static int byo_send(byo_backend_t *be, byo_op_t *op);

static void byo_on_reply(redisAsyncContext *ac, void *r, void *priv) {
  byo_op_t *op = priv;
  byo_backend_t *be = op->be;
  const redisReply *reply = r;
  const fleet__reply_t *out = NULL;
  fleet__reply_cb cb;
  int status = 0;

  op->in_hiredis = 0;
  be->refs--;
  if (reply == NULL)
    byo_ac_lost(be, ac);
  if (op->cb == NULL || be->core.closing) {
    /* Cancelled by close: the close's idle callback runs its callback, if it
     * has not yet, and frees it. */
    if (op->cb == NULL)
      byo_op_put(op);
    byo_maybe_free(be);
    return;
  }
  if (reply == NULL) {
    status = FLEET_ECONNLOST;
  } else if (!op->eval && fleet__rcore_noscript(&be->core, op->script, reply)) {
    op->eval = 1;
    op->argv[0] = "EVAL";
    op->argvlen[0] = 4;
    op->argv[1] = op->script->body;
    op->argvlen[1] = op->script->len;
    status = byo_send(be, op);
    if (status == 0)
      return;
  } else {
    status = fleet__redis_reply_convert(&be->core.scratch, reply, &out);
  }
  fleet__list_remove(&op->node);
  cb = op->cb;
  if (status == 0 || reply != NULL) {
    fleet__rcore_set_detail(&be->core, "", status, reply);
  } else if (be->core.base.detail[0] == '\0') {
    fleet__backend_set_detail(&be->core.base,
                              "the program's hiredis connection is gone");
  }
  cb(op->arg, status, status == 0 ? out : NULL);
  byo_op_put(op);
  byo_maybe_free(be);
}

/* Hands `op` to hiredis. 0, or FLEET_ECONNLOST when the context is gone or
 * refuses commands (disconnecting). */
static int byo_send(byo_backend_t *be, byo_op_t *op) {
  if (be->ac == NULL)
    return FLEET_ECONNLOST;
  if (redisAsyncCommandArgv(be->ac, byo_on_reply, op, op->argc, op->argv,
                            op->argvlen) != REDIS_OK) {
    fleet__backend_set_detail(&be->core.base,
                              "the program's hiredis connection refused the "
                              "command (closing or broken)");
    return FLEET_ECONNLOST;
  }
  op->in_hiredis = 1;
  be->refs++;
  return 0;
}

static int byo_call(fleet__backend_t *base, fleet__op_t op,
                    const fleet_bytes_t *keys, size_t nkeys,
                    const fleet_bytes_t *args, size_t nargs, fleet__reply_cb cb,
                    void *arg) {
  byo_backend_t *be = (byo_backend_t *)base;
  fleet__rcall_head_t h;
  size_t i, total = 0, n = 0;
  byo_op_t *o;
  char *p;
  int err;

  if ((err = fleet__rcore_call_check(&be->core, cb)) != 0)
    return err;
  if (fleet__rcore_head(&be->core, op, nkeys, &h) != 0)
    return FLEET_EINVAL;
  if (be->ac == NULL) {
    fleet__backend_set_detail(&be->core.base,
                              "the program's hiredis connection is gone");
    return FLEET_ECONNLOST;
  }
  /* A fenced op gets the epoch "0": fleet cannot know whether the
   * program's connection follows a failover (adapters/backend.h). */
  for (i = 0; i < h.argc; i++)
    total += h.argv[i].len; /* the head too: numkeys lives in `h` */
  for (i = 0; i < nkeys; i++)
    total += keys[i].len;
  for (i = 0; i < nargs; i++)
    total += args[i].len;
  o = byo_op_get(be, h.argc + nkeys + nargs + (size_t)h.fenced, total + 1);
  if (o == NULL)
    return FLEET_ENOMEM;
  p = o->blob;
  for (i = 0; i < h.argc + nkeys + nargs; i++) {
    const fleet_bytes_t *b = i < h.argc           ? &h.argv[i]
                             : i < h.argc + nkeys ? &keys[i - h.argc]
                                                  : &args[i - h.argc - nkeys];
    if (b->len > 0)
      memcpy(p, b->base, b->len);
    o->argv[n] = p;
    o->argvlen[n++] = b->len;
    p += b->len;
  }
  if (h.fenced) {
    o->argv[n] = "0";
    o->argvlen[n++] = 1;
  }
  o->script = h.script;
  o->cb = cb;
  o->arg = arg;
  err = byo_send(be, o);
  if (err != 0) {
    byo_op_put(o);
    return err;
  }
  fleet__list_insert_head(&be->pending, &o->node);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Pub/sub                                                                  */

static void byo_sub_lost(byo_backend_t *be) {
  byo_chan_t *ch;
  fleet__sub_t *s;

  be->sub_ac = NULL;
  for (ch = be->chans; ch != NULL; ch = ch->next)
    ch->live = 0;
  FLEET__SUBS_FOREACH(s, &be->core.subs) {
    s->live = 0;
  }
}

/* Every reply of a channel's subscription: its confirmation, each message,
 * the confirmation of UNSUBSCRIBE (at close), or NULL when the context
 * goes away. */
static void byo_on_chan(redisAsyncContext *ac, void *r, void *priv) {
  byo_chan_t *ch = priv;
  byo_backend_t *be = ch->be;
  const redisReply *reply = r, *kind, *payload;
  fleet__sub_t *s;
  int confirm;

  if (reply == NULL) {
    if (ch->registered) {
      ch->registered = 0;
      be->refs--;
    }
    if (be->sub_ac == ac)
      byo_sub_lost(be);
    byo_maybe_free(be);
    return;
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 3 ||
      reply->element[0]->type != REDIS_REPLY_STRING)
    return;
  kind = reply->element[0];
  if (kind->len == 11 && strncasecmp(kind->str, "unsubscribe", 11) == 0) {
    /* hiredis lets go of the channel after this call. */
    if (ch->registered) {
      ch->registered = 0;
      be->refs--;
    }
    ch->live = 0;
    byo_maybe_free(be);
    return;
  }
  confirm = kind->len == 9 && strncasecmp(kind->str, "subscribe", 9) == 0;
  if (confirm)
    ch->live = 1;
  else if (!(kind->len == 7 && strncasecmp(kind->str, "message", 7) == 0))
    return;
  payload = reply->element[2];
  if (be->core.closing || (!confirm && payload->type != REDIS_REPLY_STRING))
    return;
  /* A confirmation tells every subscriber of the channel that it is live
   * (again); a message first tells those that have not heard it yet. */
  if (confirm) {
    FLEET__SUBS_FOREACH(s, &be->core.subs) {
      if (s->where == ch)
        s->live = 0;
    }
  }
  fleet__subs_live(&be->core.subs, ch, ch->name, ch->len);
  if (!confirm)
    fleet__subs_message(&be->core.subs, ch, ch->name, ch->len, payload->str,
                        payload->len);
}

static void byo_on_sub_connect(const redisAsyncContext *ac, int status) {
  byo_backend_t *be = ac->data;

  if (status != REDIS_OK && be != NULL && be->sub_ac == ac) {
    fleet__backend_set_detail(&be->core.base,
                              "pub/sub connection to the server failed: %s",
                              ac->errstr);
    byo_sub_lost(be); /* hiredis frees it */
  }
}

static void byo_on_sub_disconnect(const redisAsyncContext *ac, int status) {
  byo_backend_t *be = ac->data;

  (void)status;
  if (be != NULL && be->sub_ac == ac)
    byo_sub_lost(be);
}

/* Opens the backend's own subscriber context, once. */
static int byo_sub_open(byo_backend_t *be) {
  redisAsyncContext *sub;

  if (be->sub_tried) {
    fleet__backend_set_detail(&be->core.base,
                              "the pub/sub connection is gone (fleet does "
                              "not reconnect it)");
    return FLEET_ECONNLOST;
  }
  be->sub_tried = 1;
  if (be->sub_path != NULL)
    sub = redisAsyncConnectUnix(be->sub_path);
  else if (be->sub_host != NULL)
    sub = redisAsyncConnect(be->sub_host, be->sub_port);
  else {
    fleet__backend_set_detail(&be->core.base,
                              "the program's pub/sub connection is gone");
    return FLEET_ECONNLOST; /* the program's sub_ac: fleet has no address */
  }
  if (sub == NULL)
    return FLEET_ENOMEM;
  if (sub->err != 0) {
    fleet__backend_set_detail(&be->core.base, "pub/sub connection: %s",
                              sub->errstr);
    redisAsyncFree(sub);
    return FLEET_ECONNREFUSED;
  }
  if (redisLibuvAttach(sub, be->core.loop) != REDIS_OK) {
    redisAsyncFree(sub);
    return FLEET_ENOMEM;
  }
  sub->data = be;
  redisAsyncSetConnectCallback(sub, byo_on_sub_connect);
  redisAsyncSetDisconnectCallback(sub, byo_on_sub_disconnect);
  be->sub_ac = sub;
  be->sub_own = 1;
  return 0;
}

static byo_chan_t *byo_chan_get(byo_backend_t *be, const char *name,
                                size_t len) {
  byo_chan_t *ch;

  for (ch = be->chans; ch != NULL; ch = ch->next)
    if (ch->len == len && memcmp(ch->name, name, len) == 0)
      return ch;
  ch = calloc(1, sizeof(*ch));
  if (ch == NULL || (ch->name = fleet__memdup(name, len)) == NULL) {
    free(ch);
    return NULL;
  }
  ch->len = len;
  ch->be = be;
  ch->next = be->chans;
  be->chans = ch;
  return ch;
}

static int byo_subscribe(fleet__backend_t *base, const char *channel,
                         size_t len, fleet__message_cb cb, void *arg,
                         fleet__sub_t **out) {
  byo_backend_t *be = (byo_backend_t *)base;
  byo_chan_t *ch;
  fleet__sub_t *s;
  int err = fleet__rcore_subscribe_check(&be->core, channel, len, cb, out);

  if (err != 0)
    return err;
  if (be->sub_ac == NULL) {
    err = byo_sub_open(be);
    if (err != 0)
      return err;
  }
  ch = byo_chan_get(be, channel, len);
  s = ch != NULL ? fleet__subs_add(&be->core.subs, channel, len, cb, arg)
                 : NULL;
  if (s == NULL)
    return FLEET_ENOMEM;
  if (!ch->registered) {
    const char *argv[2] = {"SUBSCRIBE", ch->name};
    size_t argvlen[2] = {9, ch->len};
    if (redisAsyncCommandArgv(be->sub_ac, byo_on_chan, ch, 2, argv, argvlen) !=
        REDIS_OK) {
      fleet__subs_drop(&be->core.subs, s);
      fleet__backend_set_detail(&be->core.base,
                                "the pub/sub connection refused SUBSCRIBE");
      return FLEET_ECONNLOST;
    }
    ch->registered = 1;
    be->refs++;
  }
  s->where = ch;
  if (ch->live)
    byo_defer(be); /* tells it that the channel is live */
  *out = s;
  return 0;
}

static void byo_unsubscribe(fleet__backend_t *base, fleet__sub_t *s) {
  byo_backend_t *be = (byo_backend_t *)base;

  fleet__subs_drop(&be->core.subs, s);
}

/* ------------------------------------------------------------------------ */
/* Lifecycle                                                                */

static void byo_on_idle_closed(uv_handle_t *h) {
  byo_backend_t *be = h->data;

  be->closed = 1;
  be->core.events->closed(be->core.owner);
  byo_maybe_free(be);
}

static void byo_on_idle(uv_idle_t *t) {
  byo_backend_t *be = t->data;
  fleet__sub_t *s;
  int ran = 0;

  if (be->core.closing) {
    /* Every op still pending hears that it was cancelled; hiredis keeps
     * the records of those it has not answered and frees them later. */
    fleet__list_t *n;

    while ((n = fleet__list_first(&be->pending)) != NULL) {
      byo_op_t *op = FLEET__LIST_DATA(n, byo_op_t, node);
      fleet__reply_cb cb = op->cb;
      void *arg = op->arg;
      fleet__list_remove(&op->node);
      op->cb = NULL;
      /* Freed before the callback, which may free the program's context
       * (and then hiredis frees the ops it still holds). */
      if (!op->in_hiredis)
        byo_op_put(op);
      fleet__backend_set_detail(&be->core.base, "the client was closed");
      cb(arg, FLEET_ECANCELED, NULL);
    }
    uv_close((uv_handle_t *)&be->idle, byo_on_idle_closed);
    return;
  }
  if (!be->ready_reported) {
    be->ready_reported = 1;
    if (be->ac != NULL) {
      be->core.base.detail[0] = '\0';
      be->core.events->state(be->core.owner, FLEET__BACKEND_READY, 0);
      ran = 1;
    }
  }
  fleet__subs_enter(&be->core.subs);
  FLEET__SUBS_FOREACH(s, &be->core.subs) {
    const byo_chan_t *ch = s->where;
    if (be->core.closing)
      break;
    if (s->cb != NULL && !s->live && ch != NULL && ch->live) {
      s->live = 1;
      s->cb(s->arg, FLEET_ECONNLOST, NULL, 0);
      ran = 1;
    }
  }
  fleet__subs_leave(&be->core.subs);
  /* When a callback ran, the handle stays active for one more round
   * (which finds nothing to do): an active idle handle keeps this
   * iteration's poll from blocking, so that a UV_RUN_ONCE caller gets
   * control back after the callback. */
  if (!ran && !be->core.closing)
    uv_idle_stop(&be->idle);
}

static int byo_usable(const redisAsyncContext *ac) {
  return ac->err == 0 && (ac->c.flags & (REDIS_DISCONNECTING | REDIS_FREEING |
                                         REDIS_SUBSCRIBED)) == 0;
}

/* The vtable's open: over config->hiredis_ac (and hiredis_sub_ac for
 * pub/sub, or NULL for a connection of its own made on first subscribe);
 * there is no URL. */
static int byo_open(uv_loop_t *loop, const fleet__url_t *url,
                    const fleet__backend_config_t *config,
                    const fleet__backend_events_t *events, void *owner,
                    fleet__backend_t **out) {
  redisAsyncContext *ac = config->hiredis_ac, *sub_ac = config->hiredis_sub_ac;
  byo_backend_t *be;

  if (url != NULL || loop == NULL || ac == NULL || ac == sub_ac ||
      !byo_usable(ac) || (sub_ac != NULL && !byo_usable(sub_ac)) ||
      config->wait_replicas > 0)
    return FLEET_EINVAL;
  be = calloc(1, sizeof(*be));
  if (be == NULL)
    return FLEET_ENOMEM;
  fleet__list_init(&be->pending);
  fleet__rcore_init(&be->core, &fleet__byo_backend, loop, config, events, owner,
                    0, sizeof(fleet__rreq_t));
  be->ac = ac;
  be->sub_ac = sub_ac;
  if (sub_ac == NULL) {
    if (ac->c.connection_type == REDIS_CONN_UNIX &&
        ac->c.unix_sock.path != NULL)
      be->sub_path = fleet__strdup(ac->c.unix_sock.path);
    else if (ac->c.connection_type == REDIS_CONN_TCP && ac->c.tcp.host != NULL)
      be->sub_host = fleet__strdup(ac->c.tcp.host);
    be->sub_port = ac->c.tcp.port;
    if (be->sub_path == NULL && be->sub_host == NULL) {
      free(be);
      return FLEET_ENOMEM;
    }
  }
  uv_idle_init(loop, &be->idle);
  be->idle.data = be;
  byo_defer(be); /* reports READY from the loop */
  *out = &be->core.base;
  return 0;
}

static void byo_close(fleet__backend_t *base) {
  byo_backend_t *be = (byo_backend_t *)base;
  byo_chan_t *ch;

  if (!fleet__rcore_close(&be->core))
    return;
  if (be->sub_ac != NULL && be->sub_own) {
    redisAsyncContext *sub = be->sub_ac;
    be->sub_ac = NULL;
    sub->data = NULL;
    redisAsyncFree(sub); /* the channels' callbacks hear NULL */
  } else if (be->sub_ac != NULL) {
    /* The program's subscriber context: give its channels back. */
    for (ch = be->chans; ch != NULL; ch = ch->next) {
      const char *argv[2] = {"UNSUBSCRIBE", ch->name};
      size_t argvlen[2] = {11, ch->len};
      if (ch->registered)
        redisAsyncCommandArgv(be->sub_ac, NULL, NULL, 2, argv, argvlen);
    }
  }
  byo_defer(be);
}

const fleet__backend_vtable_t fleet__byo_backend = {
    .open = byo_open,
    .call = byo_call,
    .subscribe = byo_subscribe,
    .unsubscribe = byo_unsubscribe,
    .close = byo_close,
};
