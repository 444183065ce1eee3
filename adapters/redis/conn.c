/* conn.c -- one Redis connection on a libuv loop: resolve, connect,
 * handshake, pipelined requests, timeouts, reconnect with backoff.
 *
 * The transport is libuv's own stream (uv_tcp_t or uv_pipe_t), so a refused
 * or failed connection is reported by libuv's connect callback like any
 * other error; hiredis is used only to parse replies. Commands are RESP
 * encoded by fleet__rreq_arg() from argv (user data is never formatted
 * into a command string) and written in batches: every command issued
 * during one loop iteration goes out in one write. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"
#include "common/errors.h"
#include "common/util.h"
#include "redis/conn.h"

#define CONN_RBUF_SIZE (64 * 1024)
#define CONN_EARLY_FLUSH 16

typedef struct fleet__rwrite_s {
  uv_write_t req;
  fleet__free_t free_node; /* on the connection's pool while unused */
  fleet__rconn_t *conn;
  char *buf;
  size_t cap;
} conn_write_t;

/* What to do once the stream handle (and any resolve) has finished. */
enum { CONN_AFTER_NOTHING, CONN_AFTER_NEXT_ADDR, CONN_AFTER_BACKOFF };

/* Gives `w` back to the connection's pool of write buffers. */
static void conn_write_put(fleet__rconn_t *c, conn_write_t *w) {
  (void)fleet__freelist_put(&c->free_writes, &w->free_node);
}

static void conn_connect(fleet__rconn_t *c);
static void conn_try_next_addr(fleet__rconn_t *c);
static void conn_fail(fleet__rconn_t *c, int status, int inflight_status,
                      const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void conn_fail_waiting(fleet__rconn_t *c, int status);
static void conn_arm_flush(fleet__rconn_t *c);
static int conn_handshake_preload(fleet__rconn_t *c);
static int conn_handshake_scripts(fleet__rconn_t *c, int with_lib);
static void conn_flush(fleet__rconn_t *c);
static void conn_write_failed(fleet__rconn_t *c, int uverr);
static void conn_write_out(fleet__rconn_t *c, conn_write_t *w, size_t total);
static void conn_tls_send(fleet__rconn_t *c);
static conn_write_t *conn_write_get(fleet__rconn_t *c, size_t size);
static const char *conn_target(const fleet__rconn_t *c, char *buf, size_t size);
static void conn_arm_command_timer(fleet__rconn_t *c);
static void conn_maybe_closed(fleet__rconn_t *c);

static const char *const conn_state_names[] = {
    FLEET__RCONN_STATE_MAP(FLEET__NAME_XX)};

const char *fleet__rconn_state_name(fleet__rconn_state_t state) {
  return FLEET__NAME_AT(conn_state_names, state);
}

/* Every state change goes through here. */
static void conn_set_state(fleet__rconn_t *c, fleet__rconn_state_t state) {
  c->state = state;
}

/* ------------------------------------------------------------------------ */
/* RESP encoding                                                            */

static int rreq_reserve(fleet__rreq_t *req, size_t extra) {
  size_t need = req->len + extra;
  char *p;

  if (need <= req->cap)
    return 0;
  if (need < 2 * req->cap)
    need = 2 * req->cap;
  if (need < 128)
    need = 128;
  p = realloc(req->buf, need);
  if (p == NULL)
    return FLEET_ENOMEM;
  req->buf = p;
  req->cap = need;
  return 0;
}

/* Writes `prefix`, the decimal `n` and CRLF at the end of the buffer, which
 * has room for it. */
static void rreq_put_len(fleet__rreq_t *req, char prefix, size_t n) {
  char *p = req->buf + req->len, *end;
  size_t m;

  *p++ = prefix;
  for (end = p + 1, m = n; m >= 10; m /= 10)
    end++;
  p = end;
  do {
    *--p = (char)('0' + n % 10);
    n /= 10;
  } while (n > 0);
  end[0] = '\r';
  end[1] = '\n';
  req->len = (size_t)(end + 2 - req->buf);
}

int fleet__rreq_begin(fleet__rreq_t *req, size_t argc) {
  req->len = 0;
  req->fenced = 0;
  if (rreq_reserve(req, 32) != 0)
    return FLEET_ENOMEM;
  rreq_put_len(req, '*', argc);
  return 0;
}

int fleet__rreq_arg(fleet__rreq_t *req, const void *p, size_t len) {
  if (rreq_reserve(req, len + 32) != 0)
    return FLEET_ENOMEM;
  rreq_put_len(req, '$', len);
  if (len > 0)
    memcpy(req->buf + req->len, p, len);
  req->len += len;
  req->buf[req->len++] = '\r';
  req->buf[req->len++] = '\n';
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Queues                                                                   */

static void q_push(fleet__rreq_t **head, fleet__rreq_t **tail,
                   fleet__rreq_t *req) {
  req->next = NULL;
  if (*tail != NULL)
    (*tail)->next = req;
  else
    *head = req;
  *tail = req;
}

static fleet__rreq_t *q_pop(fleet__rreq_t **head, fleet__rreq_t **tail) {
  fleet__rreq_t *req = *head;
  if (req != NULL) {
    *head = req->next;
    if (*head == NULL)
      *tail = NULL;
    req->next = NULL;
  }
  return req;
}

/* Detaches a whole queue and returns its head. */
static fleet__rreq_t *q_take(fleet__rreq_t **head, fleet__rreq_t **tail) {
  fleet__rreq_t *all = *head;
  *head = *tail = NULL;
  return all;
}

/* Runs the callback of every request of a detached list with `status`.
 * Callbacks may queue new requests: those go to the live queues, not to
 * this list. */
static void conn_fail_list(fleet__rconn_t *c, fleet__rreq_t *list, int status) {
  while (list != NULL) {
    fleet__rreq_t *req = list;
    list = req->next;
    req->next = NULL;
    req->on_reply(c, req, status, NULL);
  }
}

/* ------------------------------------------------------------------------ */
/* Handshake                                                                */

static fleet__rreq_t *conn_req_get(fleet__rconn_t *c) {
  fleet__rreq_t *req =
      FLEET__FREELIST_TAKE(&c->free_reqs, fleet__rreq_t, free_node);
  if (req != NULL) {
    req->next = NULL;
    return req;
  }
  return calloc(1, sizeof(*req));
}

static void conn_req_put(fleet__rconn_t *c, fleet__rreq_t *req) {
  (void)fleet__freelist_put(&c->free_reqs, &req->free_node);
}

static void conn_drop(fleet__rconn_t *c, int uverr);

static void conn_became_ready(fleet__rconn_t *c) {
  fleet__rreq_t *req;
  uint64_t now;

  if (c->tls_write_error != 0) {
    conn_drop(c, c->tls_write_error); /* see conn_write_failed() */
    return;
  }

  conn_set_state(c, FLEET__RCONN_READY);
  uv_timer_stop(&c->connect_timer);
  c->was_ready = 1;
  c->attempt = 0;
  c->last_error = 0;
  c->cause[0] = '\0';
  /* A request that waited for this connection gets a whole timeout once
   * sent: with the deadline it was issued with, a reply that takes longer
   * than what is left of it would read as a stalled server and drop the
   * connection that just came up (seen as a second reconnect after an
   * outage). Raising the early deadlines to one value keeps the queue in
   * deadline order. */
  now = uv_now(c->loop);
  while ((req = q_pop(&c->waiting, &c->waiting_tail)) != NULL) {
    if (req->deadline != 0 &&
        req->deadline < now + c->config->command_timeout_ms)
      req->deadline = now + c->config->command_timeout_ms;
    q_push(&c->unflushed, &c->unflushed_tail, req);
  }
  if (c->unflushed != NULL)
    conn_arm_flush(c);
  if (c->functions != NULL)
    *c->functions = c->npreload > 0 && !c->fn_failed;
  c->events->on_state(c, 1, 0);
}

/* The reply to AUTH, PING, SELECT, SCRIPT LOAD or FUNCTION LOAD. Any error
 * reply but FUNCTION LOAD's fails the attempt with its code (a wrong
 * password is FLEET_EAUTH, a bad database FLEET_EBADDB) and the server's
 * words; `req->arg` names the command. */
static void conn_on_handshake(fleet__rconn_t *c, fleet__rreq_t *req, int status,
                              redisReply *reply) {
  const char *command = req->arg;

  conn_req_put(c, req);
  if (status != 0)
    return; /* the attempt is being torn down already */
  if (strcmp(command, "FUNCTION") == 0) {
    /* A library the server has already (its name is its code's SHA1) is
     * as good as one loaded now. Any other error (a server before 7.0, an
     * ACL without FUNCTION LOAD) leaves the connection on EVALSHA, which
     * every server fleet supports runs. */
    if (reply->type == REDIS_REPLY_ERROR && !c->fn_failed &&
        !(reply->len > 7 && strstr(reply->str, "already exists") != NULL)) {
      c->fn_failed = 1;
      /* The scripts left to their libraries are loaded as scripts after
       * all, before the connection is ready. */
      if (conn_handshake_scripts(c, 1) != 0) {
        conn_fail(c, FLEET_ENOMEM, FLEET_ECONNLOST, "out of memory");
        return;
      }
      conn_arm_flush(c);
    }
  } else if (reply->type == REDIS_REPLY_ERROR) {
    conn_fail(c, fleet__reply_error_code(reply->str, reply->len),
              FLEET_ECONNLOST, "handshake %s: %.*s", command, (int)reply->len,
              reply->str);
    return;
  }
  if (strcmp(command, "ROLE") == 0 &&
      (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
       reply->element[0]->type != REDIS_REPLY_STRING ||
       reply->element[0]->len != 6 ||
       memcmp(reply->element[0]->str, "master", 6) != 0)) {
    char target[FLEET__DETAIL_MAX / 2];
    const redisReply *role =
        reply->type == REDIS_REPLY_ARRAY && reply->elements > 0
            ? reply->element[0]
            : NULL;
    conn_fail(c, FLEET_EREADONLY, FLEET_ECONNLOST,
              "handshake ROLE: %s is a %.*s, not the master",
              conn_target(c, target, sizeof(target)),
              role != NULL && role->type == REDIS_REPLY_STRING
                  ? (int)(role->len > 32 ? 32 : role->len)
                  : 7,
              role != NULL && role->type == REDIS_REPLY_STRING ? role->str
                                                               : "replica");
    return;
  }
  if ((strcmp(command, "AUTH") == 0 || strcmp(command, "PING") == 0) &&
      c->npreload > 0) {
    if (conn_handshake_preload(c) != 0) {
      conn_fail(c, FLEET_ENOMEM, FLEET_ECONNLOST, "out of memory");
      return;
    }
    conn_arm_flush(c);
  }
  if (--c->handshake_pending == 0)
    conn_became_ready(c);
}

/* Queues one handshake command of up to three arguments. */
static int conn_handshake_cmd(fleet__rconn_t *c, const char *a0, const char *a1,
                              size_t l1, const char *a2, size_t l2) {
  fleet__rreq_t *req = conn_req_get(c);
  size_t argc = a2 != NULL ? 3 : a1 != NULL ? 2 : 1;

  if (req == NULL || fleet__rreq_begin(req, argc) != 0 ||
      fleet__rreq_arg(req, a0, strlen(a0)) != 0 ||
      (a1 != NULL && fleet__rreq_arg(req, a1, l1) != 0) ||
      (a2 != NULL && fleet__rreq_arg(req, a2, l2) != 0)) {
    if (req != NULL)
      conn_req_put(c, req);
    return FLEET_ENOMEM;
  }
  req->on_reply = conn_on_handshake;
  req->arg = (void *)a0;
  req->deadline = 0;
  q_push(&c->unflushed, &c->unflushed_tail, req);
  c->handshake_pending++;
  return 0;
}

/* Queues the SCRIPT LOAD of the preloaded scripts that have a function
 * library (`with_lib`) or of the others. */
static int conn_handshake_scripts(fleet__rconn_t *c, int with_lib) {
  size_t i;
  int err = 0;

  for (i = 0; err == 0 && i < c->npreload; i++)
    if ((c->preload[i].lib != NULL) == with_lib)
      err = conn_handshake_cmd(c, "SCRIPT", "LOAD", 4, c->preload[i].body,
                               c->preload[i].len);
  return err;
}

/* Queues the loading of every preloaded script: where the owner asked for
 * functions, FUNCTION LOAD of each library and SCRIPT LOAD of the scripts
 * that have none (a refused FUNCTION LOAD queues the rest then); else
 * SCRIPT LOAD of every one. */
static int conn_handshake_preload(fleet__rconn_t *c) {
  size_t i;
  int err = conn_handshake_scripts(c, 0);

  if (err == 0 && c->functions == NULL)
    err = conn_handshake_scripts(c, 1);
  for (i = 0; err == 0 && c->functions != NULL && i < c->npreload; i++)
    if (c->preload[i].lib != NULL)
      err = conn_handshake_cmd(c, "FUNCTION", "LOAD", 4, c->preload[i].lib,
                               c->preload[i].lib_len);
  return err;
}

static void conn_start_handshake(fleet__rconn_t *c) {
  const fleet__url_t *u = c->url;
  char db[16];
  int err = 0;

  conn_set_state(c, FLEET__RCONN_HANDSHAKE);
  c->handshake_pending = 0;
  c->fn_failed = 0;
  if (u->password != NULL && u->user != NULL)
    err = conn_handshake_cmd(c, "AUTH", u->user, strlen(u->user), u->password,
                             strlen(u->password));
  else if (u->password != NULL)
    err = conn_handshake_cmd(c, "AUTH", u->password, strlen(u->password), NULL,
                             0);
  if (err == 0 && u->db != 0) {
    int n = snprintf(db, sizeof(db), "%d", u->db);
    err = conn_handshake_cmd(c, "SELECT", db, (size_t)n, NULL, 0);
  }
  if (err == 0 && c->check_master)
    err = conn_handshake_cmd(c, "ROLE", NULL, 0, NULL, 0);
  /* The scripts wait for AUTH's reply, or a PING's without a password:
   * Redis closes an unauthenticated connection that sends a bulk string
   * over 16 KB, so a wrong or missing password would read as a lost
   * connection ("connection reset by peer") instead of its NOAUTH or
   * WRONGPASS. */
  if (err == 0 && u->password == NULL && c->npreload > 0)
    err = conn_handshake_cmd(c, "PING", NULL, 0, NULL, 0);
  if (err != 0) {
    conn_fail(c, err, FLEET_ECONNLOST, "out of memory");
    return;
  }
  if (c->handshake_pending == 0)
    conn_became_ready(c);
  else
    conn_arm_flush(c);
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */

static void conn_on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  fleet__rconn_t *c = h->data;
  buf->base = c->rbuf;
  buf->len = CONN_RBUF_SIZE;
}

static int conn_word_is(const redisReply *r, const char *word) {
  size_t n = strlen(word);
  return r->type == REDIS_REPLY_STRING && r->len == n &&
         memcmp(r->str, word, n) == 0;
}

/* A published message: "message" (SUBSCRIBE) or "smessage" (SSUBSCRIBE),
 * channel, payload. */
static int conn_is_message(const redisReply *r) {
  return r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
         (conn_word_is(r->element[0], "message") ||
          conn_word_is(r->element[0], "smessage"));
}

/* A "sunsubscribe" that no SUNSUBSCRIBE of ours asked for: a Redis Cluster
 * node that lost the channel's slot (a resharding, a failover) tells its
 * shard subscribers so. It answers our own SUNSUBSCRIBE only when the
 * oldest request in flight is one for that very channel. */
static int conn_is_slot_lost(const fleet__rconn_t *c, const redisReply *r) {
  const fleet__rreq_t *head = c->inflight;
  const redisReply *ch;
  char want[64];
  int n;

  if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
      !conn_word_is(r->element[0], "sunsubscribe") ||
      r->element[1]->type != REDIS_REPLY_STRING)
    return 0;
  if (head == NULL)
    return 1;
  ch = r->element[1];
  n = snprintf(want, sizeof(want), "*2\r\n$12\r\nSUNSUBSCRIBE\r\n$%zu\r\n",
               ch->len);
  return !(head->len == (size_t)n + ch->len + 2 &&
           memcmp(head->buf, want, (size_t)n) == 0 &&
           memcmp(head->buf + n, ch->str, ch->len) == 0);
}

static void conn_dispatch(fleet__rconn_t *c, redisReply *reply) {
  fleet__rreq_t *req;

  if (c->subscriber &&
      (conn_is_message(reply) || conn_is_slot_lost(c, reply))) {
    c->events->on_push(c, reply);
    return;
  }
  req = q_pop(&c->inflight, &c->inflight_tail);
  if (req == NULL) {
    conn_fail(c, FLEET_EPROTO, FLEET_ECONNLOST,
              "protocol error: a reply no command waits for");
    return;
  }
  c->ninflight--;
  req->on_reply(c, req, 0, reply);
}

static int conn_live(const fleet__rconn_t *c) {
  return c->state == FLEET__RCONN_HANDSHAKE || c->state == FLEET__RCONN_READY;
}

/* The stream failed with the libuv error `uverr` (UV_EOF: the server
 * closed it) while reading or writing. During the handshake the server
 * took the connection and then dropped it: a server that does so (at its
 * client limit, in protected mode, speaking TLS, or no Redis at all) will
 * do it again, so the requests waiting for it fail now, with
 * FLEET_EUNAVAILABLE as they were never sent. */
static void conn_drop(fleet__rconn_t *c, int uverr) {
  int handshake = c->state == FLEET__RCONN_HANDSHAKE;
  const char *when = !handshake ? ""
                     : c->tls_handshaking
                         ? " during the TLS handshake (is the port a TLS port?)"
                         : " during the handshake";

  if (uverr == UV_EOF)
    conn_fail(c, FLEET_ECONNLOST, FLEET_ECONNLOST,
              "server closed the connection%s", when);
  else
    conn_fail(c, FLEET_ECONNLOST, FLEET_ECONNLOST, "connection lost%s: %s",
              when, uv_strerror(uverr));
  if (handshake)
    conn_fail_waiting(c, FLEET_EUNAVAILABLE);
}

/* Fails the connection when the reply being parsed is over the limit:
 * either the bytes received of it so far, or the length a bulk string
 * announces. Returns whether it did. */
static int conn_check_reply_size(fleet__rconn_t *c) {
  unsigned long long bulk = fleet__reader_pending_bulk(c->reader);

  if (bulk > c->max_reply) {
    conn_fail(c, FLEET_EREPLY2BIG, FLEET_ECONNLOST,
              "reply announces a string of %llu bytes; max_reply_bytes is "
              "%llu",
              bulk, (unsigned long long)c->max_reply);
    return 1;
  }
  if (c->reply_bytes > c->max_reply) {
    conn_fail(c, FLEET_EREPLY2BIG, FLEET_ECONNLOST,
              "reply exceeds max_reply_bytes (%llu bytes)",
              (unsigned long long)c->max_reply);
    return 1;
  }
  return 0;
}

/* Parses `nread` bytes of plaintext from the server and dispatches the
 * replies they complete. */
static void conn_process(fleet__rconn_t *c, const char *data, size_t nread) {
  if (redisReaderFeed(c->reader, data, nread) != REDIS_OK) {
    conn_fail(c, FLEET_ENOMEM, FLEET_ECONNLOST, "out of memory");
    return;
  }
  c->reply_bytes += (uint64_t)nread;
  /* A callback may break or close the connection: check after each reply
   * and leave the rest unread. */
  c->read_depth++;
  while (conn_live(c)) {
    void *reply = NULL;
    if (redisReaderGetReply(c->reader, &reply) != REDIS_OK) {
      conn_fail(c, FLEET_EPROTO, FLEET_ECONNLOST, "protocol error: %s",
                c->reader->errstr);
      break;
    }
    if (reply == NULL) {
      conn_check_reply_size(c);
      break;
    }
    /* What is left in the reader belongs to the next reply. */
    c->reply_bytes = (uint64_t)(c->reader->len - c->reader->pos);
    conn_dispatch(c, reply);
    fleet__rarena_reset(&c->arena);
    if (c->nunflushed >= CONN_EARLY_FLUSH && conn_live(c))
      conn_flush(c);
  }
  c->read_depth--;
}

static void conn_tls_read(fleet__rconn_t *c, const char *data, size_t n);

/* A write failed with the libuv error `uverr`. A TLS server that refuses
 * the client (no client certificate, a certificate it does not trust)
 * tells why in an alert and closes; our next write then fails (EPIPE)
 * before the alert is read. So during the handshake of a TLS connection
 * the failure waits for the read side, which either brings the alert (and
 * FLEET_ETLS with the server's reason) or fails too; the connect timer
 * bounds the wait. */
static void conn_write_failed(fleet__rconn_t *c, int uverr) {
  if (c->tls != NULL && c->state == FLEET__RCONN_HANDSHAKE) {
    if (c->tls_write_error == 0)
      c->tls_write_error = uverr;
    return;
  }
  conn_drop(c, uverr);
}

static void conn_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  fleet__rconn_t *c = s->data;

  if (nread < 0) {
    conn_drop(c, c->tls_write_error != 0 && nread == UV_EOF ? c->tls_write_error
                                                            : (int)nread);
    return;
  }
  if (nread == 0 || !conn_live(c))
    return;
  if (c->tls != NULL)
    conn_tls_read(c, buf->base, (size_t)nread);
  else
    conn_process(c, buf->base, (size_t)nread);
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */

static void conn_on_write(uv_write_t *wr, int status) {
  conn_write_t *w = FLEET__CONTAINER_OF(wr, conn_write_t, req);
  fleet__rconn_t *c = w->conn;

  conn_write_put(c, w);
  if (status < 0 && status != UV_ECANCELED && conn_live(c))
    conn_write_failed(c, status);
}

/* Writes every unflushed request and moves them in flight. The bytes are
 * gathered into one buffer and handed to the socket at once with
 * uv_try_write(); only what the socket does not take goes to a uv_write.
 * A write that completes at once thus costs one system call, where a
 * uv_write costs a loop iteration for its callback and an epoll_ctl() to
 * stop watching for writability afterwards. The buffer belongs to the
 * write, so a request may be reused as soon as its reply arrives whatever
 * the state of the write. */
static void conn_flush(fleet__rconn_t *c) {
  conn_write_t *w;
  fleet__rreq_t *req;
  size_t total = 0, off = 0;

  if (c->unflushed == NULL || !conn_live(c) || c->tls_handshaking)
    return;
  for (req = c->unflushed; req != NULL; req = req->next)
    total += req->len + (req->fenced ? c->fence_len : 0);
  w = conn_write_get(c, total);
  if (w == NULL)
    goto nomem;
  c->nunflushed = 0;
  while ((req = q_pop(&c->unflushed, &c->unflushed_tail)) != NULL) {
    memcpy(w->buf + off, req->buf, req->len);
    off += req->len;
    /* The epoch goes in now, not when the request was built: a grant
     * queued before a failover carries the epoch of the master it
     * reaches. */
    if (req->fenced) {
      memcpy(w->buf + off, c->fence, c->fence_len);
      off += c->fence_len;
    }
    q_push(&c->inflight, &c->inflight_tail, req);
    c->ninflight++;
  }
  if (c->tls != NULL) {
    /* The plaintext gathered is encrypted; the ciphertext goes out. */
    int err =
        fleet__tls_write(c->tls, w->buf, total, c->detail, sizeof(c->detail));
    conn_write_put(c, w);
    if (err != 0) {
      char why[FLEET__DETAIL_MAX];
      memcpy(why, c->detail, sizeof(why));
      conn_fail(c, err, FLEET_ECONNLOST, "TLS: %s", why);
      return;
    }
    conn_tls_send(c);
    return;
  }
  conn_write_out(c, w, total);
  return;
nomem:
  conn_fail(c, FLEET_ENOMEM, FLEET_ECONNLOST, "out of memory");
}

/* Writes `total` bytes of w->buf to the stream; `w` goes back to the pool
 * when the write is done. */
static void conn_write_out(fleet__rconn_t *c, conn_write_t *w, size_t total) {
  uv_buf_t b;
  int n;

  b = uv_buf_init(w->buf, (unsigned int)total);
  /* On UV_EAGAIN (the socket is full, or an earlier write still waits and
   * this one must follow it) or an error, uv_write takes all of it: it
   * reports an error from its callback, never from inside a flush. */
  n = uv_try_write(&c->s.stream, &b, 1);
  if (n < 0)
    n = 0;
  if ((size_t)n < total) {
    b = uv_buf_init(w->buf + n, (unsigned int)(total - (size_t)n));
    n = uv_write(&w->req, &c->s.stream, &b, 1, conn_on_write);
    if (n == 0)
      return;
  }
  conn_write_put(c, w);
  if (n < 0)
    conn_write_failed(c, n);
}

/* A write buffer of at least `size` bytes from the pool, or NULL. */
static conn_write_t *conn_write_get(fleet__rconn_t *c, size_t size) {
  conn_write_t *w =
      FLEET__FREELIST_TAKE(&c->free_writes, conn_write_t, free_node);

  if (w == NULL && (w = calloc(1, sizeof(*w))) == NULL)
    return NULL;
  w->conn = c;
  if (w->cap < size) {
    char *p = realloc(w->buf, size);
    if (p == NULL) {
      conn_write_put(c, w);
      return NULL;
    }
    w->buf = p;
    w->cap = size;
  }
  return w;
}

/* Sends the ciphertext TLS has ready (handshake records, encrypted
 * commands, alerts). */
static void conn_tls_send(fleet__rconn_t *c) {
  size_t n = fleet__tls_pending(c->tls);
  conn_write_t *w;

  if (n == 0 || c->tls_write_error != 0)
    return;
  w = conn_write_get(c, n);
  if (w == NULL) {
    conn_fail(c, FLEET_ENOMEM, FLEET_ECONNLOST, "out of memory");
    return;
  }
  n = fleet__tls_take(c->tls, w->buf, n);
  conn_write_out(c, w, n);
}

static void conn_flush_handles_stop(fleet__rconn_t *c) {
  if (c->flush_armed) {
    uv_check_stop(&c->flush_check);
    uv_prepare_stop(&c->flush_prepare);
    c->flush_armed = 0;
  }
}

static void conn_on_flush_check(uv_check_t *h) {
  fleet__rconn_t *c = h->data;
  conn_flush_handles_stop(c);
  conn_flush(c);
}

static void conn_on_flush_prepare(uv_prepare_t *h) {
  fleet__rconn_t *c = h->data;
  conn_flush_handles_stop(c);
  conn_flush(c);
}

void fleet__rconn_flush(fleet__rconn_t *c) {
  if (!c->flush_armed)
    return;
  conn_flush_handles_stop(c);
  conn_flush(c);
}

/* Requests issued from I/O callbacks are flushed by the check handle right
 * after the poll phase; those issued from timers or idle callbacks by the
 * prepare handle before the loop blocks. Either way, one write per loop
 * iteration. */
static void conn_arm_flush(fleet__rconn_t *c) {
  if (c->flush_armed)
    return;
  uv_check_start(&c->flush_check, conn_on_flush_check);
  uv_prepare_start(&c->flush_prepare, conn_on_flush_prepare);
  c->flush_armed = 1;
}

/* ------------------------------------------------------------------------ */
/* Timeouts                                                                 */

static uint64_t conn_earliest_deadline(const fleet__rconn_t *c) {
  const fleet__rreq_t *heads[3] = {c->waiting, c->unflushed, c->inflight};
  uint64_t best = 0;
  size_t i;

  for (i = 0; i < 3; i++) {
    const fleet__rreq_t *r;
    for (r = heads[i]; r != NULL; r = r->next) {
      if (r->deadline != 0) {
        if (best == 0 || r->deadline < best)
          best = r->deadline;
        break; /* queues are in deadline order but for handshake entries */
      }
    }
  }
  return best;
}

/* Fails the waiting requests whose deadline passed with
 * FLEET_EUNAVAILABLE: they were never sent. Their detail is why there is
 * no connection. */
static void conn_expire_waiting(fleet__rconn_t *c, uint64_t now) {
  fleet__rreq_t *keep = NULL, *keep_tail = NULL, *expired = NULL, **ep;
  fleet__rreq_t *req;

  ep = &expired;
  while ((req = q_pop(&c->waiting, &c->waiting_tail)) != NULL) {
    if (req->deadline != 0 && req->deadline <= now) {
      *ep = req;
      ep = &req->next;
    } else {
      q_push(&keep, &keep_tail, req);
    }
  }
  c->waiting = keep;
  c->waiting_tail = keep_tail;
  if (expired == NULL)
    return;
  snprintf(c->detail, sizeof(c->detail), "not connected within %u ms: %.200s",
           (unsigned)c->config->command_timeout_ms,
           c->cause[0] != '\0' ? c->cause : "still connecting");
  conn_fail_list(c, expired, FLEET_EUNAVAILABLE);
}

static int conn_head_expired(const fleet__rreq_t *head, uint64_t now) {
  return head != NULL && head->deadline != 0 && head->deadline <= now;
}

static void conn_on_command_timer(uv_timer_t *t) {
  fleet__rconn_t *c = t->data;
  uint64_t now = uv_now(c->loop);

  if (c->state == FLEET__RCONN_CLOSING)
    return;
  conn_expire_waiting(c, now);
  if (c->state == FLEET__RCONN_CLOSING)
    return;
  /* A reply overdue means the server or the path to it stalled: replies
   * come in order, so nothing behind it can arrive either. */
  if (conn_head_expired(c->inflight, now) ||
      conn_head_expired(c->unflushed, now))
    conn_fail(c, FLEET_ETIMEDOUT, FLEET_ETIMEDOUT, "no reply within %u ms",
              (unsigned)c->config->command_timeout_ms);
  if (c->state != FLEET__RCONN_CLOSING)
    conn_arm_command_timer(c);
}

static void conn_arm_command_timer(fleet__rconn_t *c) {
  uint64_t deadline, now;

  if (uv_is_active((uv_handle_t *)&c->command_timer))
    return;
  deadline = conn_earliest_deadline(c);
  if (deadline == 0)
    return;
  now = uv_now(c->loop);
  uv_timer_start(&c->command_timer, conn_on_command_timer,
                 deadline > now ? deadline - now : 0, 0);
}

void fleet__rconn_set_fence(fleet__rconn_t *c, const char *epoch) {
  size_t len = strlen(epoch);
  int n;

  if (len == 0 || len > 20)
    return;
  n = snprintf(c->fence, sizeof(c->fence), "$%zu\r\n%s\r\n", len, epoch);
  c->fence_len = (size_t)n;
}

void fleet__rconn_send(fleet__rconn_t *c, fleet__rreq_t *req) {
  if (req->deadline == 0)
    req->deadline = uv_now(c->loop) + c->config->command_timeout_ms;
  if (c->state == FLEET__RCONN_READY) {
    q_push(&c->unflushed, &c->unflushed_tail, req);
    c->nunflushed++;
    conn_arm_flush(c);
  } else {
    q_push(&c->waiting, &c->waiting_tail, req);
  }
  conn_arm_command_timer(c);
}

/* ------------------------------------------------------------------------ */
/* Connecting                                                               */

/* Continues after a teardown once the stream is closed and no resolve is
 * pending: only then may the embedded handles be used again. */
static void conn_teardown_done(fleet__rconn_t *c) {
  int after = c->after_teardown;

  if (c->stream_open || c->gai_active)
    return;
  c->after_teardown = CONN_AFTER_NOTHING;
  if (after == CONN_AFTER_NEXT_ADDR && c->state == FLEET__RCONN_CONNECTING)
    conn_try_next_addr(c);
  else if (after == CONN_AFTER_BACKOFF && c->state == FLEET__RCONN_BACKOFF)
    conn_connect(c);
}

static void conn_on_stream_closed(uv_handle_t *h) {
  fleet__rconn_t *c = h->data;

  c->stream_open = 0;
  c->handles--;
  if (c->state == FLEET__RCONN_CLOSING)
    conn_maybe_closed(c);
  else
    conn_teardown_done(c);
}

static void conn_close_stream(fleet__rconn_t *c, int after) {
  c->after_teardown = after;
  if (c->stream_open && !uv_is_closing(&c->s.handle))
    uv_close(&c->s.handle, conn_on_stream_closed);
}

/* Where the connection goes, for messages: "127.0.0.1:6379", "[::1]:6379"
 * or the socket path. */
static const char *conn_target(const fleet__rconn_t *c, char *buf,
                               size_t size) {
  const fleet__url_t *u = c->url;

  if (u->scheme == FLEET__URL_UNIX)
    return u->path;
  snprintf(buf, size, strchr(u->host, ':') != NULL ? "[%s]:%u" : "%s:%u",
           u->host, (unsigned)u->port);
  return buf;
}

static int conn_map_connect_error(int uverr) {
  switch (uverr) {
    case UV_ECONNREFUSED:
    case UV_ENOENT: /* no socket file: nothing listens there */
      return FLEET_ECONNREFUSED;
    case UV_ETIMEDOUT:
      return FLEET_ETIMEDOUT;
    case UV_ENOMEM:
      return FLEET_ENOMEM;
    default:
      return FLEET_EUNAVAILABLE;
  }
}

/* Fails the attempt after the libuv error `uverr` of a connect. */
static void conn_connect_failed(fleet__rconn_t *c, int uverr) {
  char target[FLEET__DETAIL_MAX / 2];

  c->last_error = conn_map_connect_error(uverr);
  conn_fail(c, c->last_error, FLEET_ECONNLOST, "connect %s: %s",
            conn_target(c, target, sizeof(target)), uv_strerror(uverr));
}

/* The TCP connection is up: start the TLS handshake (the Redis handshake
 * follows when it completes). */
static void conn_tls_start(fleet__rconn_t *c) {
  char target[FLEET__DETAIL_MAX / 2];
  char why[FLEET__DETAIL_MAX];
  int err;

  conn_set_state(c, FLEET__RCONN_HANDSHAKE);
  c->tls_handshaking = 1;
  c->tls_write_error = 0;
  err = fleet__tls_start(c->tls, why, sizeof(why));
  if (err == 0)
    err = fleet__tls_handshake(c->tls, why, sizeof(why));
  if (err < 0) {
    if (err == FLEET_ENOMEM)
      snprintf(why, sizeof(why), "out of memory");
    conn_fail(c, err, FLEET_ECONNLOST, "TLS with %s: %s",
              conn_target(c, target, sizeof(target)), why);
    return;
  }
  conn_tls_send(c);
}

/* Ciphertext from the server: drives the TLS handshake, then decrypts
 * and parses what it carries. */
static void conn_tls_read(fleet__rconn_t *c, const char *data, size_t n) {
  char target[FLEET__DETAIL_MAX / 2];
  char why[FLEET__DETAIL_MAX];
  ssize_t got;
  int r;

  if (fleet__tls_feed(c->tls, data, n) != 0) {
    conn_fail(c, FLEET_ENOMEM, FLEET_ECONNLOST, "out of memory");
    return;
  }
  if (c->tls_handshaking) {
    r = fleet__tls_handshake(c->tls, why, sizeof(why));
    conn_tls_send(c);
    if (r < 0) {
      conn_fail(c, r, FLEET_ECONNLOST, "TLS handshake with %s: %s",
                conn_target(c, target, sizeof(target)), why);
      return;
    }
    if (r == 0 || !conn_live(c))
      return;
    c->tls_handshaking = 0;
    conn_start_handshake(c);
  }
  /* The read buffer was consumed by the feed above: it takes plaintext. */
  c->read_depth++;
  while (conn_live(c)) {
    got = fleet__tls_read(c->tls, c->rbuf, CONN_RBUF_SIZE, why, sizeof(why));
    if (got == 0)
      break;
    if (got == FLEET_ECONNLOST) {
      conn_drop(c, UV_EOF);
      break;
    }
    if (got < 0) {
      conn_fail(c, (int)got, FLEET_ECONNLOST, "TLS with %s: %s",
                conn_target(c, target, sizeof(target)), why);
      break;
    }
    conn_process(c, c->rbuf, (size_t)got);
  }
  c->read_depth--;
  if (conn_live(c))
    conn_tls_send(c);
}

static void conn_on_connect(uv_connect_t *req, int status) {
  fleet__rconn_t *c = req->handle->data;

  if (status == UV_ECANCELED || c->state != FLEET__RCONN_CONNECTING)
    return; /* torn down already: the stream close drives what comes next */
  if (status < 0) {
    if (c->next_addr != NULL) {
      c->last_error = conn_map_connect_error(status);
      conn_close_stream(c, CONN_AFTER_NEXT_ADDR);
      return;
    }
    conn_connect_failed(c, status);
    return;
  }
  if (c->addrs != NULL) {
    uv_freeaddrinfo(c->addrs);
    c->addrs = c->next_addr = NULL;
  }
  if (c->url->scheme == FLEET__URL_REDIS)
    uv_tcp_nodelay(&c->s.tcp, 1);
  /* A fresh reader: what the last one held of a reply is forgotten. */
  redisReaderFree(c->reader);
  fleet__rarena_reset(&c->arena);
  c->reader = fleet__reader_create(&c->arena);
  c->reply_bytes = 0;
  if (c->reader == NULL) {
    conn_fail(c, FLEET_ENOMEM, FLEET_ECONNLOST, "out of memory");
    return;
  }
  status = uv_read_start(&c->s.stream, conn_on_alloc, conn_on_read);
  if (status != 0) {
    conn_fail(c, FLEET_EUNAVAILABLE, FLEET_ECONNLOST, "read: %s",
              uv_strerror(status));
    return;
  }
  if (c->url->tls)
    conn_tls_start(c);
  else
    conn_start_handshake(c);
}

/* Records that the stream handle was initialized: it must be closed, and
 * counts among the handles a close waits for. */
static void conn_stream_opened(fleet__rconn_t *c) {
  c->s.handle.data = c;
  c->stream_open = 1;
  c->handles++;
}

/* Connects the stream to `sa`. */
static void conn_connect_addr(fleet__rconn_t *c, const struct sockaddr *sa) {
  int err;

  conn_set_state(c, FLEET__RCONN_CONNECTING);
  err = uv_tcp_init(c->loop, &c->s.tcp);
  if (err != 0) {
    conn_fail(c, FLEET_ENOMEM, FLEET_ECONNLOST, "out of memory");
    return;
  }
  conn_stream_opened(c);
  err = uv_tcp_connect(&c->connect_req, &c->s.tcp, sa, conn_on_connect);
  if (err != 0)
    conn_connect_failed(c, err);
}

static void conn_try_next_addr(fleet__rconn_t *c) {
  struct addrinfo *ai = c->next_addr;

  if (ai == NULL) {
    conn_fail(c, FLEET_ERESOLVE, FLEET_ECONNLOST, "resolve %s: no address",
              c->url->host);
    return;
  }
  c->next_addr = ai->ai_next;
  conn_connect_addr(c, ai->ai_addr);
}

static void conn_on_resolved(uv_getaddrinfo_t *req, int status,
                             struct addrinfo *res) {
  fleet__rconn_t *c = req->data;

  c->gai_active = 0;
  if (c->state != FLEET__RCONN_RESOLVING) {
    /* Cancelled by a timeout or a close. */
    if (res != NULL)
      uv_freeaddrinfo(res);
    if (c->state == FLEET__RCONN_CLOSING)
      conn_maybe_closed(c);
    else
      conn_teardown_done(c);
    return;
  }
  if (status < 0) {
    conn_fail(c, status == UV_ENOMEM ? FLEET_ENOMEM : FLEET_ERESOLVE,
              FLEET_ECONNLOST, "resolve %s: %s", c->url->host,
              uv_strerror(status));
    return;
  }
  c->addrs = c->next_addr = res;
  conn_try_next_addr(c);
}

static void conn_on_connect_timer(uv_timer_t *t) {
  fleet__rconn_t *c = t->data;
  char target[FLEET__DETAIL_MAX / 2];

  if (c->state == FLEET__RCONN_BACKOFF) {
    /* The backoff delay is over; the last attempt's stream or resolve may
     * still be winding down. */
    c->after_teardown = CONN_AFTER_BACKOFF;
    conn_teardown_done(c);
    return;
  }
  conn_fail(c, FLEET_ETIMEDOUT, FLEET_ECONNLOST,
            "%s %s: no answer within %u ms",
            c->state != FLEET__RCONN_HANDSHAKE ? "connect"
            : c->tls_handshaking               ? "TLS handshake with"
                                               : "handshake with",
            conn_target(c, target, sizeof(target)),
            (unsigned)c->config->connect_timeout_ms);
}

/* Starts one connection attempt; the connect timer bounds all of it. */
static void conn_connect(fleet__rconn_t *c) {
  const fleet__url_t *u = c->url;
  union {
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
  } addr;
  int err;

  if (u->scheme != FLEET__URL_UNIX && u->host == NULL) {
    /* No address yet (the sentinels have not named the master): wait for
     * fleet__rconn_kick(). Requests wait until their deadline. */
    if (c->cause[0] == '\0')
      snprintf(c->cause, sizeof(c->cause), "no address to connect to yet");
    return;
  }
  uv_timer_start(&c->connect_timer, conn_on_connect_timer,
                 c->config->connect_timeout_ms, 0);
  if (u->scheme == FLEET__URL_UNIX) {
    conn_set_state(c, FLEET__RCONN_CONNECTING);
    err = uv_pipe_init(c->loop, &c->s.pipe, 0);
    if (err != 0) {
      conn_fail(c, FLEET_ENOMEM, FLEET_ECONNLOST, "out of memory");
      return;
    }
    conn_stream_opened(c);
    uv_pipe_connect(&c->connect_req, &c->s.pipe, u->path, conn_on_connect);
    return;
  }
  if (uv_ip4_addr(u->host, u->port, &addr.in4) == 0 ||
      uv_ip6_addr(u->host, u->port, &addr.in6) == 0) {
    conn_connect_addr(c, &addr.sa);
    return;
  }
  {
    struct addrinfo hints;
    char port[8];

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof(port), "%u", (unsigned)u->port);
    conn_set_state(c, FLEET__RCONN_RESOLVING);
    c->gai_req.data = c;
    err = uv_getaddrinfo(c->loop, &c->gai_req, conn_on_resolved, u->host, port,
                         &hints);
    if (err != 0) {
      conn_fail(c, FLEET_ERESOLVE, FLEET_ECONNLOST, "resolve %s: %s", u->host,
                uv_strerror(err));
      return;
    }
    c->gai_active = 1;
  }
}

/* Fails the requests waiting for a connection with `status` now, with the
 * cause of the last failure as their detail. */
static void conn_fail_waiting(fleet__rconn_t *c, int status) {
  if (c->state == FLEET__RCONN_CLOSING || c->waiting == NULL)
    return;
  snprintf(c->detail, sizeof(c->detail), "%s", c->cause);
  conn_fail_list(c, q_take(&c->waiting, &c->waiting_tail), status);
}

/* The attempt failed or the connection broke with `status`, for the reason
 * the format gives in words (kept as the cause). Requests in flight get
 * `inflight_status` (their command may have run), except that the oldest
 * gets `status` when it is its own reply that failed (over the limit, or
 * not RESP). Requests not yet written wait for the next connection, unless
 * the attempt failed before ready for a cause that will not pass by
 * itself, or with the client's fail_fast before the first ready: then
 * they fail at once with `status`. Then reconnect after a
 * backoff delay. Must not be called while closing. */
static void conn_fail(fleet__rconn_t *c, int status, int inflight_status,
                      const char *fmt, ...) {
  fleet__rreq_t *inflight, *req, *keep = NULL, *keep_tail = NULL;
  int before_ready = c->state != FLEET__RCONN_READY;
  int head_status = status == FLEET_EREPLY2BIG || status == FLEET_EPROTO
                        ? status
                        : inflight_status;
  uint64_t delay;
  va_list ap;

  if (c->state == FLEET__RCONN_CLOSING || c->state == FLEET__RCONN_BACKOFF)
    return;
  conn_set_state(c, FLEET__RCONN_BACKOFF);
  c->last_error = status;
  va_start(ap, fmt);
  vsnprintf(c->cause, sizeof(c->cause), fmt, ap);
  va_end(ap);
  memcpy(c->detail, c->cause, sizeof(c->detail));
  uv_timer_stop(&c->connect_timer);
  uv_timer_stop(&c->command_timer);
  conn_flush_handles_stop(c);
  if (c->addrs != NULL) {
    uv_freeaddrinfo(c->addrs);
    c->addrs = c->next_addr = NULL;
  }
  if (c->gai_active)
    uv_cancel((uv_req_t *)&c->gai_req);
  if (c->stream_open)
    uv_read_stop(&c->s.stream);

  /* Unwritten user requests go back to the front of the waiting queue, in
   * order; handshake requests are simply dropped. */
  while ((req = q_pop(&c->unflushed, &c->unflushed_tail)) != NULL) {
    if (req->on_reply == conn_on_handshake)
      conn_req_put(c, req);
    else
      q_push(&keep, &keep_tail, req);
  }
  if (keep != NULL) {
    keep_tail->next = c->waiting;
    if (c->waiting == NULL)
      c->waiting_tail = keep_tail;
    c->waiting = keep;
  }
  inflight = q_take(&c->inflight, &c->inflight_tail);
  c->ninflight = 0;

  delay = fleet__backoff_delay(
      c->config->reconnect_initial_ms, c->config->reconnect_max_ms,
      c->config->reconnect_jitter_pct, c->attempt++, fleet__rng_next(&c->rng));
  uv_timer_start(&c->connect_timer, conn_on_connect_timer, delay, 0);
  conn_close_stream(c, CONN_AFTER_NOTHING);

  /* From here on user code runs and may close the connection. */
  for (req = inflight; req != NULL;) {
    fleet__rreq_t *next = req->next;
    if (req->on_reply == conn_on_handshake) {
      conn_req_put(c, req);
    } else {
      req->next = NULL;
      req->on_reply(c, req, req == inflight ? head_status : inflight_status,
                    NULL);
    }
    req = next;
    if (c->state == FLEET__RCONN_CLOSING) {
      /* Whatever is left is cancelled by the close. */
      while (req != NULL) {
        next = req->next;
        if (req->on_reply == conn_on_handshake)
          conn_req_put(c, req);
        else
          q_push(&c->waiting, &c->waiting_tail, req);
        req = next;
      }
      return;
    }
  }
  /* A wrong password, a denied handshake command, garbage from the server:
   * none heals by waiting, so the commands waiting learn the cause now;
   * with fail_fast, so do they of any other cause until the first ready. */
  if (before_ready && (!fleet__status_transient(status) ||
                       (c->config->fail_fast && !c->was_ready)))
    conn_fail_waiting(c, status);
  if (c->state == FLEET__RCONN_CLOSING)
    return;
  conn_arm_command_timer(c);
  c->events->on_state(c, 0, status);
}

/* ------------------------------------------------------------------------ */
/* Open and close                                                           */

int fleet__rconn_open(fleet__rconn_t *c, uv_loop_t *loop, void *owner,
                      const fleet__url_t *url,
                      const fleet__backend_config_t *config,
                      const fleet__rconn_events_t *events, int subscriber,
                      const fleet__script_t *preload, size_t npreload) {
  memset(c, 0, sizeof(*c));
  c->owner = owner;
  c->loop = loop;
  c->url = url;
  c->config = config;
  c->events = events;
  c->subscriber = subscriber;
  c->preload = preload;
  c->npreload = npreload;
  fleet__rconn_set_fence(c, "0");
  c->max_reply = config->max_reply_bytes != 0 ? config->max_reply_bytes
                                              : FLEET_CLIENT_MAX_REPLY_DEFAULT;
  fleet__rng_seed(&c->rng, uv_hrtime() ^ (uint64_t)(uintptr_t)c);
  c->reader = fleet__reader_create(&c->arena);
  c->rbuf = malloc(CONN_RBUF_SIZE);
  if (url->tls)
    c->tls = fleet__tls_new(url);
  if (c->reader == NULL || c->rbuf == NULL || (url->tls && c->tls == NULL)) {
    if (c->reader != NULL)
      redisReaderFree(c->reader);
    free(c->rbuf);
    fleet__tls_free(c->tls);
    return FLEET_ENOMEM;
  }
  uv_timer_init(loop, &c->connect_timer);
  uv_timer_init(loop, &c->command_timer);
  uv_check_init(loop, &c->flush_check);
  uv_prepare_init(loop, &c->flush_prepare);
  c->connect_timer.data = c->command_timer.data = c;
  c->flush_check.data = c->flush_prepare.data = c;
  c->handles = 4;
  conn_set_state(c, FLEET__RCONN_BACKOFF);
  conn_connect(c);
  return 0;
}

void fleet__rconn_kick(fleet__rconn_t *c, const char *why) {
  switch (c->state) {
    case FLEET__RCONN_CLOSING:
      return;
    case FLEET__RCONN_BACKOFF:
      /* Waiting for an address or a backoff delay: try now. */
      uv_timer_start(&c->connect_timer, conn_on_connect_timer, 0, 0);
      return;
    default:
      conn_fail(c, FLEET_ECONNLOST, FLEET_ECONNLOST, "%s", why);
      return;
  }
}

void fleet__rconn_note(fleet__rconn_t *c, const char *why) {
  if (c->state == FLEET__RCONN_BACKOFF)
    snprintf(c->cause, sizeof(c->cause), "%s", why);
}

void fleet__rconn_fail_fast(fleet__rconn_t *c, int status, const char *why) {
  if (!c->config->fail_fast || c->was_ready || c->state == FLEET__RCONN_READY)
    return;
  snprintf(c->cause, sizeof(c->cause), "%s", why);
  conn_fail_waiting(c, status);
}

static void conn_on_handle_closed(uv_handle_t *h) {
  fleet__rconn_t *c = h->data;
  c->handles--;
  conn_maybe_closed(c);
}

/* Finishes closing once every handle and the resolver are done: cancels
 * what is left, frees the pools and tells the owner. */
static void conn_maybe_closed(fleet__rconn_t *c) {
  fleet__rreq_t *list, *req;
  conn_write_t *w;

  if (c->handles > 0 || c->gai_active || c->read_depth > 0)
    return;
  snprintf(c->detail, sizeof(c->detail), "canceled: the client is closing");
  list = q_take(&c->inflight, &c->inflight_tail);
  conn_fail_list(c, list, FLEET_ECANCELED);
  conn_fail_list(c, q_take(&c->unflushed, &c->unflushed_tail), FLEET_ECANCELED);
  conn_fail_list(c, q_take(&c->waiting, &c->waiting_tail), FLEET_ECANCELED);
  while ((req = FLEET__FREELIST_TAKE(&c->free_reqs, fleet__rreq_t,
                                     free_node)) != NULL) {
    free(req->buf);
    free(req);
  }
  while ((w = FLEET__FREELIST_TAKE(&c->free_writes, conn_write_t, free_node)) !=
         NULL) {
    free(w->buf);
    free(w);
  }
  if (c->addrs != NULL)
    uv_freeaddrinfo(c->addrs);
  c->addrs = NULL;
  redisReaderFree(c->reader);
  c->reader = NULL;
  fleet__rarena_free(&c->arena);
  free(c->rbuf);
  c->rbuf = NULL;
  fleet__tls_free(c->tls);
  c->tls = NULL;
  c->events->on_closed(c);
}

void fleet__rconn_close(fleet__rconn_t *c) {
  if (c->state == FLEET__RCONN_CLOSING)
    return;
  conn_set_state(c, FLEET__RCONN_CLOSING);
  if (c->addrs != NULL) {
    uv_freeaddrinfo(c->addrs);
    c->addrs = c->next_addr = NULL;
  }
  if (c->gai_active)
    uv_cancel((uv_req_t *)&c->gai_req);
  if (c->stream_open && !uv_is_closing(&c->s.handle))
    uv_close(&c->s.handle, conn_on_stream_closed);
  uv_close((uv_handle_t *)&c->connect_timer, conn_on_handle_closed);
  uv_close((uv_handle_t *)&c->command_timer, conn_on_handle_closed);
  uv_close((uv_handle_t *)&c->flush_check, conn_on_handle_closed);
  uv_close((uv_handle_t *)&c->flush_prepare, conn_on_handle_closed);
}
