/* client.c -- the client handle: URL and options, the backend it drives,
 * its state machine, ping and time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batcher.h"
#include "fleet/hiredis.h"
#include "client.h"
#include "handle.h"
#include "keys.h"
#include "log.h"

/* A pending ping or time request. */
struct fleet__creq_s {
  fleet__creq_t *next;
  struct fleet__client_s *client;
  fleet__fn_t cb; /* a fleet_client_ping_cb or fleet_client_time_cb */
  void *user_data;
};

FLEET__NAME_FN(fleet_client_state_name, fleet_client_state_t,
               FLEET_CLIENT_STATE_MAP)

void fleet_client_options_init(fleet_client_options_t *o) {
  memset(o, 0, sizeof(*o));
  o->prefix = "fleet";
  o->connect_timeout_ms = 5000;
  o->command_timeout_ms = 5000;
  o->reconnect_initial_ms = 100;
  o->reconnect_max_ms = 5000;
  o->reconnect_jitter_pct = 20;
}

/* Tells the logging hook about a state change. */
static void client_log_state(struct fleet__client_s *c,
                             fleet_client_state_t state, int status) {
  if (c->log_cb == NULL)
    return;
  if (state == FLEET_CLIENT_READY) {
    fleet__log(c, FLEET_LOG_INFO, "%s %s",
               c->log_was_ready ? "reconnected to" : "connected to",
               c->log_url);
    c->log_was_ready = 1;
  } else if (state == FLEET_CLIENT_RECONNECTING) {
    fleet__log(c, FLEET_LOG_WARN,
               "connection to %s lost, reconnecting: %s (%s)", c->log_url,
               fleet_strerror(status), c->be != NULL ? c->be->detail : "");
  }
}

/* Every state change goes through here; a repeated state is reported only
 * when it carries news (a new error while reconnecting). */
static void client_set_state(struct fleet__client_s *c,
                             fleet_client_state_t state, int status) {
  if (state == c->state && status == 0)
    return;
  c->state = state;
  client_log_state(c, state, status);
  if (c->state_cb != NULL)
    c->state_cb(c->pub, state, status);
}

static void client_on_backend_state(void *owner, fleet__backend_state_t st,
                                    int status) {
  struct fleet__client_s *c = owner;

  if (c->closing)
    return;
  switch (st) {
    case FLEET__BACKEND_CONNECTING:
      client_set_state(c, FLEET_CLIENT_CONNECTING, status);
      break;
    case FLEET__BACKEND_READY:
      client_set_state(c, FLEET_CLIENT_READY, 0);
      break;
    case FLEET__BACKEND_RECONNECTING:
      client_set_state(c, FLEET_CLIENT_RECONNECTING, status);
      break;
    case FLEET__BACKEND_CLOSED:
      break; /* reported by client_on_backend_closed */
  }
}

static void client_free(struct fleet__client_s *c) {
  while (c->free_reqs != NULL) {
    fleet__creq_t *r = c->free_reqs;
    c->free_reqs = r->next;
    free(r);
  }
  fleet__batcher_free(c);
  fleet__url_free(&c->url);
  free(c->log_url);
  free(c->prefix);
  free(c);
}

void fleet__client_maybe_closed(struct fleet__client_s *c) {
  fleet_client_t *pub = c->pub;
  fleet_client_close_cb close_cb = c->close_cb;

  if (!c->closing || c->closes_left > 0 || !fleet__list_empty(&c->handles))
    return;
  c->state = FLEET_CLIENT_CLOSED;
  if (c->state_cb != NULL)
    c->state_cb(pub, FLEET_CLIENT_CLOSED, 0);
  pub->internal_ = NULL;
  client_free(c);
  if (close_cb != NULL)
    close_cb(pub);
}

/* The backend or the batcher's timer has closed. */
static void client_on_part_closed(struct fleet__client_s *c) {
  c->closes_left--;
  fleet__client_maybe_closed(c);
}

static void client_on_backend_closed(void *owner) {
  client_on_part_closed(owner);
}

static void client_on_backend_log(void *owner, int level, const char *msg) {
  struct fleet__client_s *c = owner;

  if (!c->closing)
    fleet__log(c, (fleet_log_level_t)level, "%s", msg);
}

static const fleet__backend_events_t client_backend_events = {
    client_on_backend_state, client_on_backend_closed, client_on_backend_log};

static int client_check_options(const fleet_client_options_t *o) {
  size_t len;

  if (o->prefix == NULL)
    return FLEET_EINVAL;
  len = strlen(o->prefix);
  if (len == 0 || len > FLEET__PREFIX_MAX || strchr(o->prefix, '{') ||
      strchr(o->prefix, '}'))
    return FLEET_EINVAL;
  if (o->reconnect_jitter_pct > 100)
    return FLEET_EINVAL;
  if (o->reconnect_initial_ms != 0 && o->reconnect_max_ms != 0 &&
      o->reconnect_initial_ms > o->reconnect_max_ms)
    return FLEET_EINVAL;
  return 0;
}

/* Checks `options` (NULL for the defaults) into `o`, zeros meaning the
 * defaults. */
static int client_options(const fleet_client_options_t *options,
                          fleet_client_options_t *o) {
  fleet_client_options_t defaults;

  fleet_client_options_init(&defaults);
  *o = options != NULL ? *options : defaults;
  /* Zero means "the default", so a zeroed options struct works. */
  if (o->prefix == NULL)
    o->prefix = defaults.prefix;
  if (o->connect_timeout_ms == 0)
    o->connect_timeout_ms = defaults.connect_timeout_ms;
  if (o->command_timeout_ms == 0)
    o->command_timeout_ms = defaults.command_timeout_ms;
  if (o->reconnect_initial_ms == 0)
    o->reconnect_initial_ms = defaults.reconnect_initial_ms;
  if (o->reconnect_max_ms == 0)
    o->reconnect_max_ms = o->reconnect_initial_ms > defaults.reconnect_max_ms
                              ? o->reconnect_initial_ms
                              : defaults.reconnect_max_ms;
  return client_check_options(o);
}

/* Fills in what every client has from `o`; `log_url` is the URL as the
 * logging hook shows it (redacted here). 0 or FLEET_ENOMEM. */
static int client_setup(struct fleet__client_s *c, uv_loop_t *loop,
                        fleet_client_t *client, const fleet_client_options_t *o,
                        const char *log_url) {
  fleet__list_init(&c->handles);
  c->prefix = fleet__strdup(o->prefix);
  if (c->prefix == NULL)
    return FLEET_ENOMEM;
  c->prefix_len = strlen(c->prefix);
  c->pub = client;
  c->loop = loop;
  c->state_cb = o->state_cb;
  if (o->log_cb != NULL) {
    size_t n = fleet_redact_url(log_url, NULL, 0) + 1;
    if ((c->log_url = malloc(n)) == NULL)
      return FLEET_ENOMEM;
    fleet_redact_url(log_url, c->log_url, n);
    c->log_cb = o->log_cb;
    c->log_data = o->log_data;
  }
  c->state = FLEET_CLIENT_CONNECTING;
  c->config.connect_timeout_ms = o->connect_timeout_ms;
  c->config.command_timeout_ms = o->command_timeout_ms;
  c->config.reconnect_initial_ms = o->reconnect_initial_ms;
  c->config.reconnect_max_ms = o->reconnect_max_ms;
  c->config.reconnect_jitter_pct = o->reconnect_jitter_pct;
  c->config.fail_fast = o->fail_fast != 0;
  c->config.functions = c->url.functions;
  c->config.max_reply_bytes = o->max_reply_bytes;
  /* The options win over the URL's wait_replicas and wait_timeout_ms; a
   * zero in the options means "as the URL says", and then the default. */
  c->config.wait_replicas =
      o->wait_replicas != 0 ? o->wait_replicas : c->url.wait_replicas;
  c->config.wait_timeout_ms = o->wait_timeout_ms != 0 ? o->wait_timeout_ms
                              : c->url.wait_timeout_ms != 0
                                  ? c->url.wait_timeout_ms
                                  : 1000;
  return 0;
}

/* Warnings about the URL, told to the logging hook as the client opens. */
static void client_log_url_warnings(struct fleet__client_s *c) {
  if (c->url.tls && !c->url.tls_opts.verify)
    fleet__log(c, FLEET_LOG_WARN,
               "TLS to %s is not verified (tls_verify=0): the server's "
               "certificate is not checked, so anyone on the network path "
               "can pose as the server and read the password and the data",
               c->log_url);
}

int fleet_client_init(uv_loop_t *loop, fleet_client_t *client, const char *url,
                      const fleet_client_options_t *options) {
  fleet_client_options_t o;
  struct fleet__client_s *c;
  int memory, err;

  if (loop == NULL || client == NULL)
    return FLEET_EINVAL;
  client->internal_ = NULL;
  if (url == NULL)
    return FLEET_EBADURL;
  err = client_options(options, &o);
  if (err != 0)
    return err;

  c = calloc(1, sizeof(*c));
  if (c == NULL)
    return FLEET_ENOMEM;
  err = fleet__url_parse(url, &c->url);
  if (err != 0) {
    free(c);
    return err;
  }
  memory = c->url.scheme == FLEET__URL_MEMORY;
  if (o.memory_peer != NULL) {
    /* A peer whose URL is not memory:// has another backend (a client of
     * fleet_client_init_hiredis() has a zeroed URL, scheme REDIS). */
    struct fleet__client_s *peer = o.memory_peer->internal_;
    if (!memory || peer == NULL || peer->closing || peer->loop != loop ||
        peer->url.scheme != FLEET__URL_MEMORY) {
      client_free(c);
      return FLEET_EINVAL;
    }
    c->config.memory_peer = peer->be;
  }
  if (o.wait_replicas > 0 && memory) {
    client_free(c);
    return FLEET_EINVAL; /* no replicas to wait for */
  }
  err = client_setup(c, loop, client, &o, url);
  if (err == 0)
    err = fleet__backend_open(loop, &c->url, &c->config, &client_backend_events,
                              c, &c->be);
  if (err != 0) {
    client_free(c);
    return err;
  }
  client->internal_ = c;
  client_log_url_warnings(c);
  return 0;
}

int fleet_client_init_hiredis(uv_loop_t *loop, fleet_client_t *client,
                              struct redisAsyncContext *ac,
                              struct redisAsyncContext *sub_ac,
                              const fleet_client_options_t *options) {
  fleet_client_options_t o;
  struct fleet__client_s *c;
  int err;

  if (loop == NULL || client == NULL)
    return FLEET_EINVAL;
  client->internal_ = NULL;
  if (ac == NULL)
    return FLEET_EINVAL;
  err = client_options(options, &o);
  if (err != 0)
    return err;
  if (o.memory_peer != NULL || o.wait_replicas > 0)
    return FLEET_EINVAL;
  c = calloc(1, sizeof(*c));
  if (c == NULL)
    return FLEET_ENOMEM;
  err = client_setup(c, loop, client, &o, "the program's hiredis connection");
  if (err == 0)
    err = fleet__backend_open_hiredis(loop, ac, sub_ac, &c->config,
                                      &client_backend_events, c, &c->be);
  if (err != 0) {
    client_free(c);
    return err;
  }
  client->internal_ = c;
  return 0;
}

int fleet_client_url_check(const char *url, char *why, size_t why_size) {
  fleet__url_t u;
  int err = fleet__url_parse(url, &u);

  if (why != NULL && why_size > 0)
    snprintf(why, why_size, "%s", err != 0 ? u.error : "");
  fleet__url_free(&u);
  return err;
}

const char *fleet_url_from_env(void) {
  static const char *const names[] = {"FLEET_URL", "REDIS_URL"};
  size_t i;

  for (i = 0; i < FLEET__ARRAY_SIZE(names); i++) {
    const char *v = getenv(names[i]);
    if (v != NULL && v[0] != '\0')
      return v;
  }
  return NULL;
}

int fleet_client_close(fleet_client_t *client, fleet_client_close_cb close_cb) {
  struct fleet__client_s *c;

  if (client == NULL || client->internal_ == NULL)
    return FLEET_EINVAL;
  c = client->internal_;
  if (c->closing)
    return FLEET_ECLOSING;
  /* A handle's own handles (a worker's queue) close with it. */
  FLEET__LIST_FOREACH (n, next, &c->handles) {
    fleet__handle_t *h = FLEET__LIST_DATA(n, fleet__handle_t, node);
    if (!h->closing && !h->internal)
      return FLEET_EBUSY;
  }
  c->closing = 1;
  c->close_cb = close_cb;
  c->closes_left = 2;
  c->be->vt->close(c->be);
  fleet__batcher_close(c, client_on_part_closed);
  return 0;
}

void fleet_client_walk(fleet_client_t *client, fleet_walk_cb cb, void *arg) {
  if (client == NULL || client->internal_ == NULL || cb == NULL)
    return;
  /* The callback may close the handle it is given (it stays on the list
   * until its close callback) or make new ones (at the head, not seen). */
  FLEET__LIST_FOREACH (n, next, &client->internal_->handles) {
    fleet__handle_t *h = FLEET__LIST_DATA(n, fleet__handle_t, node);
    if (!h->internal)
      cb(h->pub, arg);
  }
}

const char *fleet_client_last_error(const fleet_client_t *client) {
  if (client == NULL || client->internal_ == NULL)
    return "";
  return client->internal_->be->detail;
}

fleet_client_state_t fleet_client_state(const fleet_client_t *client) {
  if (client == NULL || client->internal_ == NULL)
    return FLEET_CLIENT_CLOSED;
  return client->internal_->state;
}

uv_loop_t *fleet_client_loop(const fleet_client_t *client) {
  return client != NULL && client->internal_ != NULL ? client->internal_->loop
                                                     : NULL;
}

const char *fleet_client_prefix(const fleet_client_t *client) {
  return client != NULL && client->internal_ != NULL ? client->internal_->prefix
                                                     : NULL;
}

/* ------------------------------------------------------------------------ */
/* Ping and time                                                            */

static fleet__creq_t *client_req_get(struct fleet__client_s *c) {
  fleet__creq_t *r = c->free_reqs;
  if (r != NULL) {
    c->free_reqs = r->next;
    return r;
  }
  return malloc(sizeof(*r));
}

static void client_req_put(fleet__creq_t *r) {
  r->next = r->client->free_reqs;
  r->client->free_reqs = r;
}

static void client_on_ping(void *arg, int status, const fleet__reply_t *reply) {
  fleet__creq_t *r = arg;
  fleet_client_ping_cb cb = (fleet_client_ping_cb)r->cb;
  void *user_data = r->user_data;
  fleet_client_t *pub = r->client->pub;

  if (status == 0 && reply->type != FLEET__REPLY_STATUS)
    status = FLEET_EPROTO;
  client_req_put(r);
  cb(pub, status, user_data);
}

static void client_on_time(void *arg, int status, const fleet__reply_t *reply) {
  fleet__creq_t *r = arg;
  fleet_client_time_cb cb = (fleet_client_time_cb)r->cb;
  void *user_data = r->user_data;
  fleet_client_t *pub = r->client->pub;
  uint64_t us = 0;

  if (status == 0) {
    if (reply->type == FLEET__REPLY_ARRAY && reply->nelem == 2 &&
        reply->elem[0].type == FLEET__REPLY_INT &&
        reply->elem[1].type == FLEET__REPLY_INT &&
        reply->elem[0].integer >= 0 && reply->elem[1].integer >= 0)
      us = (uint64_t)reply->elem[0].integer * 1000000u +
           (uint64_t)reply->elem[1].integer;
    else
      status = FLEET_EPROTO;
  }
  client_req_put(r);
  cb(pub, status, us, user_data);
}

/* Sends `op` (no keys, no arguments) for the client, whose reply goes to
 * `done` with a request that holds `cb` and `user_data`. */
static int client_call(fleet_client_t *client, fleet__op_t op,
                       fleet__reply_cb done, fleet__fn_t cb, void *user_data) {
  struct fleet__client_s *c;
  fleet__creq_t *r;
  int err;

  if (client == NULL || client->internal_ == NULL || cb == NULL)
    return FLEET_EINVAL;
  c = client->internal_;
  if (c->closing)
    return FLEET_ECLOSING;
  r = client_req_get(c);
  if (r == NULL)
    return FLEET_ENOMEM;
  r->client = c;
  r->cb = cb;
  r->user_data = user_data;
  err = fleet__backend_call(c->be, op, NULL, 0, NULL, 0, done, r);
  if (err != 0)
    client_req_put(r);
  return err;
}

int fleet_client_ping(fleet_client_t *client, fleet_client_ping_cb cb,
                      void *user_data) {
  return client_call(client, FLEET__OP_PING, client_on_ping, (fleet__fn_t)cb,
                     user_data);
}

int fleet_client_time(fleet_client_t *client, fleet_client_time_cb cb,
                      void *user_data) {
  return client_call(client, FLEET__OP_TIME, client_on_time, (fleet__fn_t)cb,
                     user_data);
}

int fleet__client_tag_call(fleet_client_t *client, const char *name,
                           fleet__op_t op, fleet__reply_cb on_reply,
                           void *arg) {
  return fleet__client_tag_call_args(client, name, op, NULL, 0, on_reply, arg);
}

int fleet__client_tag_call_args(fleet_client_t *client, const char *name,
                                fleet__op_t op, const fleet_bytes_t *args,
                                size_t nargs, fleet__reply_cb on_reply,
                                void *arg) {
  struct fleet__client_s *c;
  fleet__key_t tag = {0};
  fleet_bytes_t key;
  size_t len;
  int err;

  if (client == NULL || (c = client->internal_) == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__str_check(name, FLEET__NAME_MAX, &len)) != 0)
    return err;
  if (c->closing)
    return FLEET_ECLOSING;
  if (fleet__key_build(&tag, c->prefix, c->prefix_len, name, len, NULL) != 0)
    return FLEET_ENOMEM;
  key = fleet__key_bytes(&tag);
  err = fleet__backend_call(c->be, op, &key, 1, args, nargs, on_reply, arg);
  fleet__key_free(&tag);
  return err;
}
