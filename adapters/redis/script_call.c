/* script_call.c -- the Redis core of the three front-ends
 * (script_call.h). */
#include "redis/script_call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest buffer a pooled request keeps. */
#define RCORE_REQ_KEEP (64 * 1024)

const fleet__script_t *fleet__rcall_find_script(const char *name, int sharded) {
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
         fleet__rcall_find_script(fleet__op_name(op), 0) != NULL;
}

void fleet__rcore_init(fleet__rcore_t *core, const fleet__backend_vtable_t *vt,
                       uv_loop_t *loop, const fleet__backend_config_t *config,
                       const fleet__backend_events_t *events, void *owner,
                       int sharded, size_t req_size) {
  size_t i;

  *core = (fleet__rcore_t){.base.vt = vt,
                           .loop = loop,
                           .config = *config,
                           .events = events,
                           .owner = owner,
                           .req_size = req_size};
  for (i = 0; i < FLEET__OP_COUNT; i++)
    if (fleet__op_command((fleet__op_t)i) == NULL)
      core->scripts[i] =
          fleet__rcall_find_script(fleet__op_name((fleet__op_t)i), sharded);
  fleet__freelist_init(&core->free_reqs, 0);
  fleet__subs_init(&core->subs, core);
}

int fleet__rcore_close(fleet__rcore_t *core) {
  if (core->closing)
    return 0;
  core->closing = 1;
  core->subs.closing = 1;
  return 1;
}

int fleet__rcore_call_check(const fleet__rcore_t *core, fleet__reply_cb cb) {
  if (core->closing)
    return FLEET_ECLOSING;
  return cb == NULL ? FLEET_EINVAL : 0;
}

int fleet__rcore_subscribe_check(const fleet__rcore_t *core,
                                 const char *channel, size_t len,
                                 fleet__message_cb cb, fleet__sub_t **out) {
  if (core->closing)
    return FLEET_ECLOSING;
  if (channel == NULL || len == 0 || cb == NULL || out == NULL)
    return FLEET_EINVAL;
  return 0;
}

void fleet__rcore_subscribed(fleet__rcore_t *core, const void *where,
                             int status, const redisReply *reply) {
  const redisReply *ch;

  if (status != 0 || reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
      reply->element[1]->type != REDIS_REPLY_STRING)
    return;
  ch = reply->element[1];
  fleet__subs_live(&core->subs, where, ch->str, ch->len);
}

void fleet__rcore_message(fleet__rcore_t *core, const void *where,
                          const redisReply *reply) {
  const redisReply *ch = reply->element[1], *msg = reply->element[2];

  if (ch->type != REDIS_REPLY_STRING || msg->type != REDIS_REPLY_STRING)
    return;
  fleet__subs_message(&core->subs, where, ch->str, ch->len, msg->str, msg->len);
}

void fleet__rcore_free(fleet__rcore_t *core) {
  fleet__rreq_t *req;

  while ((req = FLEET__FREELIST_TAKE(&core->free_reqs, fleet__rreq_t,
                                     free_node)) != NULL) {
    free(req->buf);
    free(req);
  }
  fleet__subs_free(&core->subs);
  fleet__reply_scratch_free(&core->scratch);
}

int fleet__rcore_head(const fleet__rcore_t *core, fleet__op_t op, size_t nkeys,
                      fleet__rcall_head_t *h) {
  const char *command;
  int n;

  if ((unsigned)op >= FLEET__OP_COUNT)
    return FLEET_EINVAL;
  h->script = core->scripts[op];
  if (h->script == NULL) {
    command = fleet__op_command(op);
    if (command == NULL)
      return FLEET_EINVAL;
    h->fenced = 0;
    h->argc = 1;
    h->argv[0].base = command;
    h->argv[0].len = strlen(command);
    return 0;
  }
  n = snprintf(h->numkeys, sizeof(h->numkeys), "%zu", nkeys);
  h->fenced = fleet__op_fenced(op);
  h->argc = 3;
  if (core->functions && h->script->fname != NULL) {
    h->argv[0].base = "FCALL";
    h->argv[0].len = 5;
    h->argv[1].base = h->script->fname;
    h->argv[1].len = FLEET__SCRIPT_FNAME_LEN;
  } else {
    h->argv[0].base = "EVALSHA";
    h->argv[0].len = 7;
    h->argv[1].base = h->script->sha1;
    h->argv[1].len = 40;
  }
  h->argv[2].base = h->numkeys;
  h->argv[2].len = (size_t)n;
  return 0;
}

fleet__rreq_t *fleet__rcore_req_get(fleet__rcore_t *core) {
  fleet__rreq_t *req =
      FLEET__FREELIST_TAKE(&core->free_reqs, fleet__rreq_t, free_node);

  if (req == NULL)
    return calloc(1, core->req_size);
  req->next = NULL;
  req->deadline = 0;
  req->script = NULL;
  return req;
}

void fleet__rcore_req_put(fleet__rcore_t *core, fleet__rreq_t *req) {
  if (req->cap > RCORE_REQ_KEEP) {
    free(req->buf);
    req->buf = NULL;
    req->cap = req->len = 0;
  }
  (void)fleet__freelist_put(&core->free_reqs, &req->free_node);
}

/* Appends the `n` words of `argv` to `req`. */
static int rcore_args(fleet__rreq_t *req, const fleet_bytes_t *argv, size_t n) {
  size_t i;
  int err = 0;

  for (i = 0; err == 0 && i < n; i++)
    err = fleet__rreq_arg(req, argv[i].base, argv[i].len);
  return err;
}

int fleet__rcore_build(fleet__rcore_t *core, fleet__op_t op,
                       const fleet_bytes_t *keys, size_t nkeys,
                       const fleet_bytes_t *args, size_t nargs,
                       fleet__reply_cb cb, void *arg, fleet__rreq_t **out) {
  fleet__rcall_head_t h;
  fleet__rreq_t *req;
  int err = fleet__rcore_head(core, op, nkeys, &h);

  if (err != 0)
    return err;
  if ((req = fleet__rcore_req_get(core)) == NULL)
    return FLEET_ENOMEM;
  /* A fenced op's epoch is appended by the connection when it writes it. */
  err = fleet__rreq_begin(req, h.argc + nkeys + nargs + (size_t)h.fenced);
  if (err == 0)
    err = rcore_args(req, h.argv, h.argc - 1);
  /* Where EVAL's tail starts, after NOSCRIPT: the numkeys argument. */
  req->script_tail = req->len;
  if (err == 0)
    err = rcore_args(req, &h.argv[h.argc - 1], 1);
  if (err == 0)
    err = rcore_args(req, keys, nkeys);
  if (err == 0)
    err = rcore_args(req, args, nargs);
  if (err != 0) {
    fleet__rcore_req_put(core, req);
    return err;
  }
  req->script = h.script;
  req->fenced = h.fenced;
  req->cb = cb;
  req->arg = arg;
  *out = req;
  return 0;
}

fleet__rreq_t *fleet__rcore_command(fleet__rcore_t *core, size_t argc,
                                    const fleet_bytes_t *argv) {
  fleet__rreq_t *req = fleet__rcore_req_get(core);

  if (req == NULL)
    return NULL;
  if (fleet__rreq_begin(req, argc) != 0 || rcore_args(req, argv, argc) != 0) {
    fleet__rcore_req_put(core, req);
    return NULL;
  }
  return req;
}

fleet__rreq_t *fleet__rcore_wait(fleet__rcore_t *core) {
  char n[16], ms[16];
  fleet_bytes_t argv[3];

  argv[0].base = "WAIT";
  argv[0].len = 4;
  argv[1].base = n;
  argv[1].len = (size_t)snprintf(n, sizeof(n), "%u",
                                 (unsigned)core->config.wait_replicas);
  argv[2].base = ms;
  argv[2].len = (size_t)snprintf(ms, sizeof(ms), "%u",
                                 (unsigned)core->config.wait_timeout_ms);
  return fleet__rcore_command(core, 3, argv);
}

int fleet__rcore_noscript(fleet__rcore_t *core, const fleet__script_t *script,
                          const redisReply *reply) {
  char msg[FLEET__DETAIL_MAX];
  int fcall;

  if (script == NULL)
    return 0;
  fcall = fleet__redis_is_fcall_refused(reply);
  if (!fcall && !fleet__redis_is_noscript(reply))
    return 0;
  if (fcall)
    core->functions = 0;
  if (core->events->log != NULL) { /* the logging hook */
    if (fcall)
      snprintf(msg, sizeof(msg),
               "function of script %s refused (%.*s): sent as EVAL, and "
               "EVALSHA until the libraries load again",
               script->name, (int)(reply->len > 120 ? 120 : reply->len),
               reply->str);
    else
      snprintf(msg, sizeof(msg),
               "script %s not in the server's cache (NOSCRIPT): reloading",
               script->name);
    core->events->log(core->owner, FLEET_LOG_INFO, msg);
  }
  return 1;
}

int fleet__rcore_to_eval(fleet__rreq_t *req) {
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

void fleet__rcore_set_detail(fleet__rcore_t *core, const char *conn_detail,
                             int status, const redisReply *reply) {
  fleet__backend_t *base = &core->base;
  const redisReply *err;

  if (status == 0)
    base->detail[0] = '\0';
  else if (reply == NULL)
    fleet__backend_set_detail_bytes(base, conn_detail, strlen(conn_detail));
  else if ((err = fleet__redis_reply_first_error(reply)) != NULL)
    fleet__backend_set_detail_bytes(base, err->str, err->len);
  else if (status == FLEET_EPROTO)
    fleet__backend_set_detail(base, "unexpected reply of type %d", reply->type);
  else
    fleet__backend_set_detail(base, "%s", fleet_strerror(status));
}

int fleet__rcore_outcome(fleet__rcore_t *core, const char *conn_detail,
                         int status, const redisReply *reply,
                         const fleet__reply_t **out) {
  *out = NULL;
  if (status == 0)
    status = fleet__redis_reply_convert(&core->scratch, reply, out);
  fleet__rcore_set_detail(core, conn_detail, status, reply);
  return status;
}

int fleet__rcore_wait_outcome(fleet__rcore_t *core, const char *conn_detail,
                              int status, const redisReply *reply) {
  fleet__backend_t *base = &core->base;
  unsigned want = (unsigned)core->config.wait_replicas;

  if (status != 0) {
    fleet__backend_set_detail(base, "WAIT: %s", conn_detail);
    return status;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    fleet__backend_set_detail(base, "WAIT: %.*s", (int)reply->len, reply->str);
    return fleet__reply_error_code(reply->str, reply->len);
  }
  if (reply->type != REDIS_REPLY_INTEGER) {
    fleet__backend_set_detail(base, "WAIT: unexpected reply of type %d",
                              reply->type);
    return FLEET_EPROTO;
  }
  if (reply->integer < (long long)want) {
    fleet__backend_set_detail(
        base,
        "WAIT: %lld of %u replicas acknowledged the write within %u ms; it "
        "is done on the master, but a failover may lose it",
        (long long)reply->integer, want,
        (unsigned)core->config.wait_timeout_ms);
    return FLEET_ETIMEDOUT;
  }
  base->detail[0] = '\0';
  return 0;
}
