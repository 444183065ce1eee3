/* cluster.c -- the Redis Cluster backend.
 *
 * The client learns the slot map from any node (CLUSTER SLOTS), keeps one
 * pipelined connection per master it talks to (opened on first use, a
 * fleet__rconn_t each, scripts loaded in its handshake) and sends every op
 * to the master of the slot of its KEYS[1], the object's hash tag. Ops
 * without keys (PING, TIME) go to any master; PUBLISH goes by its channel.
 *
 * Redirections: MOVED updates that slot at once, asks for a new map and
 * sends the op to the named node; ASK sends ASKING and then the op to the
 * named node, once, without touching the map. An op is redirected at most
 * CLUSTER_MAX_REDIRECTS times. TRYAGAIN, CLUSTERDOWN, LOADING, READONLY and
 * MASTERDOWN (the command did not run) wait a little, the map is refreshed
 * and the op goes again, until its deadline, which stays the one it got
 * when first issued (the command timeout). An op is only ever handed to a
 * connection that is ready; until then it waits here ("pending"), so that
 * when a master dies the ops meant for it go to its successor once the new
 * map names it. An op already written when a connection breaks may have
 * run: it fails with FLEET_ECONNLOST as on a single server, and the map is
 * refreshed for what comes next.
 *
 * Subscriptions are sharded (SSUBSCRIBE) on a subscriber connection to
 * the master of the channel's slot (channels carry the object's tag, and
 * scripts publish with SPUBLISH on a cluster: lib/wake.lua); when the
 * node drops them (it lost the slot: a "sunsubscribe" it sends unasked),
 * when their connection breaks, or when a new map moves the slot, they
 * are subscribed where the slot now is, and their callbacks hear
 * FLEET_ECONNLOST when live again, as on a single server.
 *
 * This file routes only: building ops, NOSCRIPT, the request pool, reply
 * conversion and the subscriber list are the Redis core's
 * (script_call.h), as for the other front-ends. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/list.h"
#include "common/util.h"
#include "redis/durable.h"
#include "redis/script_call.h"

#define CLUSTER_MAX_REDIRECTS 8
#define CLUSTER_TICK_MS 25
#define CLUSTER_REFRESH_GAP_MS 100
#define CLUSTER_REFRESH_TIMEOUT_MS 1000
#define CLUSTER_SCAN_MAX 100 /* masters a SCAN goes over */

typedef struct cluster_backend_s cluster_backend_t;
typedef struct cluster_node_s cluster_node_t;

struct cluster_node_s {
  cluster_node_t *next;
  cluster_backend_t *be;
  char *host;
  uint16_t port;
  fleet__url_t url; /* fleet__url_node(): the seed URL's options, this node */
  fleet__rconn_t *conn; /* NULL until first used */
  fleet__rconn_t *sub;  /* NULL until a channel lives here */
  int master;           /* owns slots in the last map */
};

typedef struct cluster_req_s {
  fleet__rreq_t r; /* first: the connection and the core's pool use it */
  /* The routing part, zeroed for each use (cluster_req_init()). */
  fleet__list_t pending_node; /* on the backend's pending, while there */
  struct cluster_req_s *next; /* in a fan-out's list */
  uint16_t slot;
  int keyless;
  int script_op; /* a script (EVALSHA, or EVAL after NOSCRIPT) */
  int scan_idx;  /* a SCAN of master scan_idx (see cluster_scan()), or -1 */
  fleet__op_t op;
  int redirects;
  int asking;             /* send ASKING first, to `target` */
  cluster_node_t *target; /* set by MOVED or ASK; else the map decides */
  int refresh;            /* a map request, not an op */
  cluster_node_t *node;   /* where it was sent */
} cluster_req_t;

struct cluster_backend_s {
  fleet__rcore_t core; /* first: its base is the backend */
  const fleet__url_t *url;

  cluster_node_t *nodes;
  cluster_node_t *slots[FLEET__CLUSTER_SLOTS];
  int have_map;
  int ready;        /* READY reported and not broken since */
  int need_refresh; /* a new map is wanted */
  int refreshing;   /* a map request is out */
  uint64_t last_refresh;
  unsigned refresh_turn; /* rotates the node asked */
  uv_timer_t tick;
  int tick_armed;

  fleet__list_t pending; /* ops waiting for a ready master, oldest first */
  int conns_open;        /* rconns and the timer not yet closed */
  int closing;
  char scan_cursor[32]; /* the cursor a SCAN reply is given (cluster_scan) */
};

static const fleet__rconn_events_t cluster_main_events;
static const fleet__rconn_events_t cluster_sub_events;
static void cluster_dispatch(cluster_backend_t *be, cluster_req_t *req);
static void cluster_arm_tick(cluster_backend_t *be);
static void cluster_subs_place(cluster_backend_t *be);
static int cluster_masters(cluster_backend_t *be, cluster_node_t **out,
                           int cap);
static int cluster_scan_cursor(cluster_backend_t *be, int idx,
                               fleet__reply_t *r);

/* ------------------------------------------------------------------------ */
/* Nodes                                                                    */

static cluster_node_t *cluster_node_find(cluster_backend_t *be,
                                         const char *host, size_t hlen,
                                         uint16_t port) {
  cluster_node_t *n;

  for (n = be->nodes; n != NULL; n = n->next)
    if (n->port == port && strlen(n->host) == hlen &&
        memcmp(n->host, host, hlen) == 0)
      return n;
  return NULL;
}

/* The node at host:port, created when new. NULL when out of memory. */
static cluster_node_t *cluster_node_get(cluster_backend_t *be, const char *host,
                                        size_t hlen, uint16_t port) {
  cluster_node_t *n = cluster_node_find(be, host, hlen, port);

  if (n != NULL)
    return n;
  n = calloc(1, sizeof(*n));
  if (n == NULL || (n->host = fleet__memdup(host, hlen + 1)) == NULL) {
    free(n);
    return NULL;
  }
  n->host[hlen] = '\0';
  if (fleet__url_node(be->url, n->host, port, 0, &n->url) != 0) {
    free(n->host);
    free(n);
    return NULL;
  }
  n->be = be;
  n->port = port;
  n->next = be->nodes;
  be->nodes = n;
  return n;
}

/* Parses "host:port" (the last colon splits, for IPv6). A missing host
 * means `deflt`'s host (Redis 7 may send ":port"). */
static cluster_node_t *cluster_node_parse(cluster_backend_t *be, const char *s,
                                          size_t len, cluster_node_t *deflt) {
  size_t colon = len;
  long port = 0;
  size_t i;

  for (i = len; i > 0; i--)
    if (s[i - 1] == ':') {
      colon = i - 1;
      break;
    }
  if (colon == len || colon + 1 == len)
    return NULL;
  for (i = colon + 1; i < len; i++) {
    if (s[i] < '0' || s[i] > '9' || port > 65535)
      return NULL;
    port = port * 10 + (s[i] - '0');
  }
  if (port == 0 || port > 65535)
    return NULL;
  if (colon == 0) {
    if (deflt == NULL)
      return NULL;
    return cluster_node_get(be, deflt->host, strlen(deflt->host),
                            (uint16_t)port);
  }
  return cluster_node_get(be, s, colon, (uint16_t)port);
}

/* The node's op connection, opened on first use; NULL when out of memory. */
static fleet__rconn_t *cluster_node_conn(cluster_node_t *n) {
  cluster_backend_t *be = n->be;

  if (n->conn != NULL)
    return n->conn;
  n->conn = calloc(1, sizeof(*n->conn));
  if (n->conn == NULL)
    return NULL;
  if (fleet__rconn_open(n->conn, be->core.loop, n, &n->url, &be->core.config,
                        &cluster_main_events, 0, fleet__scripts_sharded,
                        fleet__nscripts) != 0) {
    free(n->conn);
    n->conn = NULL;
    return NULL;
  }
  fleet__rconn_set_fence(n->conn, "c");
  if (be->core.config.functions)
    n->conn->functions = &be->core.functions;
  be->conns_open++;
  return n->conn;
}

static int cluster_node_ready(const cluster_node_t *n) {
  return n->conn != NULL && n->conn->state == FLEET__RCONN_READY;
}

/* ------------------------------------------------------------------------ */
/* Requests                                                                 */

/* Sets the routing fields of a request from the core's pool. */
static cluster_req_t *cluster_req_init(fleet__rreq_t *rr) {
  cluster_req_t *req = (cluster_req_t *)rr;

  if (req == NULL)
    return NULL;
  memset((char *)req + offsetof(cluster_req_t, pending_node), 0,
         sizeof(*req) - offsetof(cluster_req_t, pending_node));
  req->scan_idx = -1;
  return req;
}

/* A pooled request holding the command `argv` (fleet__rcore_command()). */
static cluster_req_t *cluster_command(cluster_backend_t *be, size_t argc,
                                      const fleet_bytes_t *argv) {
  return cluster_req_init(fleet__rcore_command(&be->core, argc, argv));
}

static void cluster_req_put(cluster_backend_t *be, cluster_req_t *req) {
  fleet__rcore_req_put(&be->core, &req->r);
}

static void cluster_pending_push(cluster_backend_t *be, cluster_req_t *req) {
  fleet__list_insert_tail(&be->pending, &req->pending_node);
  cluster_arm_tick(be);
}

/* Takes the oldest pending op off the list `l`, or NULL. */
static cluster_req_t *cluster_pending_pop(fleet__list_t *l) {
  fleet__list_t *n = fleet__list_first(l);

  if (n == NULL)
    return NULL;
  fleet__list_remove(n);
  return FLEET__LIST_DATA(n, cluster_req_t, pending_node);
}

/* Moves every op of the list `from` to the end of `to`. */
static void cluster_pending_move(fleet__list_t *from, fleet__list_t *to) {
  cluster_req_t *req;

  while ((req = cluster_pending_pop(from)) != NULL)
    fleet__list_insert_tail(to, &req->pending_node);
}

/* ------------------------------------------------------------------------ */
/* SCAN over every master                                                   */

/* The masters of the map in a stable order (port, then host); returns how
 * many (at most `cap`). */
static int cluster_masters(cluster_backend_t *be, cluster_node_t **out,
                           int cap) {
  cluster_node_t *n;
  int count = 0, i, j;

  for (n = be->nodes; n != NULL && count < cap; n = n->next)
    if (n->master)
      out[count++] = n;
  for (i = 1; i < count; i++)
    for (j = i; j > 0; j--) {
      cluster_node_t *a = out[j - 1], *b = out[j];
      if (a->port < b->port ||
          (a->port == b->port && strcmp(a->host, b->host) <= 0))
        break;
      out[j - 1] = b;
      out[j] = a;
    }
  return count;
}

/* A SCAN reply {cursor, keys} from master `idx`: its cursor becomes the
 * cluster's, the node's cursor followed by two digits of the master's
 * index, and "0" only after the last master's scan is complete. A cursor
 * is thus all digits, as fleet's callers check, and the next SCAN with it
 * continues on the same master (cluster_call()). */
static int cluster_scan_cursor(cluster_backend_t *be, int idx,
                               fleet__reply_t *r) {
  cluster_node_t *masters[CLUSTER_SCAN_MAX];
  int count = cluster_masters(be, masters, CLUSTER_SCAN_MAX);
  fleet__reply_t *cur;
  int n;

  if (r->type != FLEET__REPLY_ARRAY || r->nelem != 2 ||
      r->elem[0].type != FLEET__REPLY_STR || r->elem[0].len > 20)
    return FLEET_EPROTO;
  cur = (fleet__reply_t *)&r->elem[0];
  if (cur->len == 1 && cur->str[0] == '0') {
    if (idx + 1 < count)
      n = snprintf(be->scan_cursor, sizeof(be->scan_cursor), "0%02d", idx + 1);
    else
      n = snprintf(be->scan_cursor, sizeof(be->scan_cursor), "0");
  } else {
    n = snprintf(be->scan_cursor, sizeof(be->scan_cursor), "%.*s%02d",
                 (int)cur->len, cur->str, idx);
  }
  cur->str = be->scan_cursor;
  cur->len = (size_t)n;
  return 0;
}

/* Splits a cluster SCAN cursor into the master's index and its own
 * cursor ("0" is the start: master 0, cursor 0). Returns the index, or -1
 * for a cursor that is not one of ours. */
static int cluster_scan_split(const fleet_bytes_t *c, size_t *node_len) {
  const char *p = c->base;
  size_t i;

  if (c->len == 1 && p[0] == '0') {
    *node_len = 1;
    return 0;
  }
  if (c->len < 3)
    return -1;
  for (i = 0; i < c->len; i++)
    if (p[i] < '0' || p[i] > '9')
      return -1;
  *node_len = c->len - 2;
  return (p[c->len - 2] - '0') * 10 + (p[c->len - 1] - '0');
}

/* Completes an op with `status` (and `reply` when 0). */
static void cluster_req_finish(cluster_backend_t *be, cluster_req_t *req,
                               const char *conn_detail, int status,
                               const redisReply *reply) {
  fleet__reply_cb cb = req->r.cb;
  void *arg = req->r.arg;
  const fleet__reply_t *r;
  int scan_idx = req->scan_idx;

  cluster_req_put(be, req);
  status = fleet__rcore_outcome(&be->core, conn_detail, status, reply, &r);
  if (status == 0 && scan_idx >= 0) {
    status = cluster_scan_cursor(be, scan_idx, (fleet__reply_t *)r);
    fleet__rcore_set_detail(&be->core, conn_detail, status, reply);
  }
  cb(arg, status, status == 0 ? r : NULL);
}

static int cluster_err_is(const redisReply *r, const char *word) {
  size_t n = strlen(word);
  return r->type == REDIS_REPLY_ERROR && r->len >= n &&
         memcmp(r->str, word, n) == 0 && (r->len == n || r->str[n] == ' ');
}

/* Asks for a new map soon (the tick sends the request). */
static void cluster_want_map(cluster_backend_t *be) {
  be->need_refresh = 1;
  cluster_arm_tick(be);
}

static void cluster_on_op_reply(fleet__rconn_t *c, fleet__rreq_t *rr,
                                int status, redisReply *reply);

static void cluster_on_asking(fleet__rconn_t *c, fleet__rreq_t *rr, int status,
                              redisReply *reply) {
  cluster_req_put(((cluster_node_t *)c->owner)->be, (cluster_req_t *)rr);
}

/* Writes `req` on the ready connection of `n`, ASKING first if asked. */
static void cluster_send_on(cluster_backend_t *be, cluster_node_t *n,
                            cluster_req_t *req) {
  if (req->asking) {
    static const fleet_bytes_t asking = {"ASKING", 6};
    cluster_req_t *ask = cluster_command(be, 1, &asking);
    if (ask != NULL) {
      ask->r.on_reply = cluster_on_asking;
      ask->r.deadline = req->r.deadline;
      fleet__rconn_send(n->conn, &ask->r);
    }
    req->asking = 0;
  }
  req->node = n;
  req->r.on_reply = cluster_on_op_reply;
  fleet__rconn_send(n->conn, &req->r);
}

/* The node an op goes to now, or NULL when the map does not say yet. */
static cluster_node_t *cluster_route(cluster_backend_t *be,
                                     const cluster_req_t *req) {
  cluster_node_t *n;

  if (req->target != NULL)
    return req->target;
  if (req->scan_idx >= 0) {
    cluster_node_t *masters[CLUSTER_SCAN_MAX];
    int count = cluster_masters(be, masters, CLUSTER_SCAN_MAX);
    return req->scan_idx < count ? masters[req->scan_idx] : NULL;
  }
  if (!req->keyless)
    return be->slots[req->slot];
  for (n = be->nodes; n != NULL; n = n->next)
    if (n->master && cluster_node_ready(n))
      return n;
  for (n = be->nodes; n != NULL; n = n->next)
    if (n->master)
      return n;
  return NULL;
}

/* Sends `req` to its node if that node's connection is ready, else keeps
 * it pending (and opens the connection). */
static void cluster_dispatch(cluster_backend_t *be, cluster_req_t *req) {
  cluster_node_t *n = cluster_route(be, req);

  if (n == NULL) {
    cluster_want_map(be);
    cluster_pending_push(be, req);
    return;
  }
  if (cluster_node_conn(n) == NULL) {
    cluster_req_finish(be, req, "out of memory", FLEET_ENOMEM, NULL);
    return;
  }
  if (n->conn->state != FLEET__RCONN_READY) {
    cluster_pending_push(be, req);
    return;
  }
  cluster_send_on(be, n, req);
}

/* Retries `req` later (after a new map), if its deadline allows. */
static void cluster_retry_later(cluster_backend_t *be, cluster_req_t *req) {
  req->target = NULL;
  req->asking = 0;
  cluster_want_map(be);
  cluster_pending_push(be, req);
}

/* ------------------------------------------------------------------------ */
/* Durability: WAIT after job-state ops (config.wait_replicas)              */

/* A job-state op that succeeded, waiting for its WAIT. */
typedef struct {
  fleet__reply_cb cb;
  void *arg;
  fleet__reply_t *copy; /* the op's reply */
} cluster_durable_t;

static void cluster_on_wait(fleet__rconn_t *c, fleet__rreq_t *rr, int status,
                            redisReply *reply) {
  cluster_node_t *node = c->owner;
  cluster_backend_t *be = node->be;
  cluster_durable_t *d = rr->arg;

  cluster_req_put(be, (cluster_req_t *)rr);
  status = fleet__rcore_wait_outcome(&be->core, c->detail, status, reply);
  d->cb(d->arg, status, status == 0 ? d->copy : NULL);
  free(d->copy);
  free(d);
}

/* The op of `req` succeeded on `c`'s node: its reply is kept, and WAIT
 * follows on the same connection (it covers every write made there
 * before it); the op's callback runs when WAIT answers. */
static void cluster_wait_after(cluster_backend_t *be, fleet__rconn_t *c,
                               cluster_req_t *req, const redisReply *reply) {
  const fleet__reply_t *r = NULL;
  cluster_durable_t *d = NULL;
  cluster_req_t *w = NULL;
  int status;

  status = fleet__redis_reply_convert(&be->core.scratch, reply, &r);
  if (status != 0) {
    cluster_req_finish(be, req, c->detail, 0, reply);
    return;
  }
  if ((d = calloc(1, sizeof(*d))) == NULL ||
      (d->copy = fleet__reply_clone(r)) == NULL ||
      (w = cluster_req_init(fleet__rcore_wait(&be->core))) == NULL) {
    if (d != NULL)
      free(d->copy);
    free(d);
    cluster_req_finish(be, req, "out of memory", FLEET_ENOMEM, NULL);
    return;
  }
  d->cb = req->r.cb;
  d->arg = req->r.arg;
  cluster_req_put(be, req);
  w->r.arg = d;
  w->r.on_reply = cluster_on_wait;
  /* WAIT blocks up to its timeout on the server. */
  w->r.deadline = uv_now(be->core.loop) + be->core.config.wait_timeout_ms +
                  be->core.config.command_timeout_ms;
  fleet__rconn_send(c, &w->r);
}

static void cluster_on_op_reply(fleet__rconn_t *c, fleet__rreq_t *rr,
                                int status, redisReply *reply) {
  cluster_node_t *node = c->owner;
  cluster_backend_t *be = node->be;
  cluster_req_t *req = (cluster_req_t *)rr;
  uint64_t now = uv_now(be->core.loop);

  if (be->core.closing) {
    cluster_req_finish(be, req, c->detail,
                       status != 0 ? status : FLEET_ECANCELED, NULL);
    return;
  }
  if (status != 0) {
    /* Never written (EUNAVAILABLE): it may go elsewhere. Written: it may
     * have run; the caller decides, as on a single server. */
    cluster_want_map(be);
    if (status == FLEET_EUNAVAILABLE && rr->deadline > now) {
      cluster_retry_later(be, req);
      return;
    }
    cluster_req_finish(be, req, c->detail, status, NULL);
    return;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    int moved = cluster_err_is(reply, "MOVED");
    int ask = cluster_err_is(reply, "ASK");

    /* ASK for a script: the slot is being migrated. The server decides on
     * the keys a call declares, and a script declares only its object's
     * tag, which is never a key itself: the source always answers ASK
     * while the slot migrates, whether the object's keys have moved or
     * not. Running the script on the target then could see half of them
     * (or none, and write keys a later MIGRATE overwrites). So a script
     * waits for the migration to end (MOVED, or the source serving again)
     * within its deadline; a plain command, whose keys are declared, follows
     * the ASK. */
    if (ask && req->script_op) {
      if (rr->deadline > now + CLUSTER_TICK_MS) {
        cluster_retry_later(be, req);
        return;
      }
      ask = 0; /* out of time: the caller hears the redirect */
    }
    if ((moved || ask) && req->redirects < CLUSTER_MAX_REDIRECTS) {
      /* "MOVED <slot> <host>:<port>" */
      const char *p = reply->str, *end = reply->str + reply->len, *sp;
      cluster_node_t *to = NULL;

      sp = memchr(p, ' ', (size_t)(end - p));
      if (sp != NULL)
        sp = memchr(sp + 1, ' ', (size_t)(end - sp - 1));
      if (sp != NULL)
        to = cluster_node_parse(be, sp + 1, (size_t)(end - sp - 1), node);
      if (to != NULL) {
        req->redirects++;
        if (moved) {
          if (!req->keyless)
            be->slots[req->slot] = to;
          to->master = 1;
          cluster_want_map(be);
          req->target = NULL;
        } else {
          req->target = to;
          req->asking = 1;
        }
        if (cluster_node_conn(to) == NULL) {
          cluster_req_finish(be, req, "out of memory", FLEET_ENOMEM, NULL);
          return;
        }
        if (ask && cluster_node_ready(to))
          cluster_send_on(be, to, req);
        else
          cluster_dispatch(be, req);
        return;
      }
    }
    if (fleet__rcore_noscript(&be->core, rr->script, reply)) {
      status = fleet__rcore_to_eval(rr);
      if (status != 0) {
        cluster_req_finish(be, req, "out of memory", status, NULL);
        return;
      }
      req->target = node;
      cluster_send_on(be, node, req);
      return;
    }
    /* The command did not run; the cluster is changing under it. */
    if ((cluster_err_is(reply, "TRYAGAIN") ||
         cluster_err_is(reply, "CLUSTERDOWN") ||
         cluster_err_is(reply, "LOADING") ||
         cluster_err_is(reply, "READONLY") ||
         cluster_err_is(reply, "MASTERDOWN")) &&
        rr->deadline > now + CLUSTER_TICK_MS) {
      cluster_retry_later(be, req);
      return;
    }
  }
  if (be->core.config.wait_replicas > 0 && fleet__op_durable(req->op) &&
      reply->type != REDIS_REPLY_ERROR) {
    cluster_wait_after(be, c, req, reply);
    return;
  }
  cluster_req_finish(be, req, c->detail, 0, reply);
}

/* ------------------------------------------------------------------------ */
/* The slot map                                                             */

static int cluster_reply_int(const redisReply *r, long long *out) {
  if (r->type != REDIS_REPLY_INTEGER)
    return -1;
  *out = r->integer;
  return 0;
}

/* Applies a CLUSTER SLOTS reply from `from`. Returns 0, or -1 when it is
 * not one (then nothing changed). */
static int cluster_apply_slots(cluster_backend_t *be, cluster_node_t *from,
                               const redisReply *reply) {
  cluster_node_t *n;
  size_t i;

  if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0)
    return -1;
  for (i = 0; i < reply->elements; i++) {
    const redisReply *e = reply->element[i];
    long long lo, hi, port;
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
        cluster_reply_int(e->element[0], &lo) != 0 ||
        cluster_reply_int(e->element[1], &hi) != 0 || lo < 0 || hi < lo ||
        hi >= FLEET__CLUSTER_SLOTS ||
        e->element[2]->type != REDIS_REPLY_ARRAY ||
        e->element[2]->elements < 2 ||
        e->element[2]->element[0]->type != REDIS_REPLY_STRING ||
        cluster_reply_int(e->element[2]->element[1], &port) != 0 || port <= 0 ||
        port > 65535)
      return -1;
  }
  for (n = be->nodes; n != NULL; n = n->next)
    n->master = 0;
  memset(be->slots, 0, sizeof(be->slots));
  for (i = 0; i < reply->elements; i++) {
    const redisReply *e = reply->element[i], *m = e->element[2];
    const redisReply *host = m->element[0];
    long long s;
    if (host->len == 0 || (host->len == 1 && host->str[0] == '?'))
      n = cluster_node_get(be, from->host, strlen(from->host),
                           (uint16_t)m->element[1]->integer);
    else
      n = cluster_node_get(be, host->str, host->len,
                           (uint16_t)m->element[1]->integer);
    if (n == NULL)
      continue; /* out of memory: those slots stay unknown */
    n->master = 1;
    for (s = e->element[0]->integer; s <= e->element[1]->integer; s++)
      be->slots[s] = n;
  }
  return 0;
}

/* fail_fast: before the first map, once every known node was asked for
 * one and none answered, the ops waiting for the map fail now with the
 * last cause (a copy: the callbacks may close the connection). */
static void cluster_fail_fast(cluster_backend_t *be, int status,
                              const char *cause) {
  char why[FLEET__DETAIL_MAX];
  const cluster_node_t *n;
  fleet__list_t list;
  cluster_req_t *req;
  unsigned count = 0;

  for (n = be->nodes; n != NULL; n = n->next)
    count++;
  if (!be->core.config.fail_fast || be->refresh_turn < count)
    return;
  snprintf(why, sizeof(why), "%s", cause);
  fleet__list_init(&list);
  cluster_pending_move(&be->pending, &list);
  while (!be->core.closing && (req = cluster_pending_pop(&list)) != NULL)
    cluster_req_finish(be, req, why, status, NULL);
  /* Closed by a callback: what is left is cancelled with the rest. */
  cluster_pending_move(&list, &be->pending);
}

static void cluster_on_map(fleet__rconn_t *c, fleet__rreq_t *rr, int status,
                           redisReply *reply) {
  cluster_node_t *node = c->owner;
  cluster_backend_t *be = node->be;

  cluster_req_put(be, (cluster_req_t *)rr);
  be->refreshing = 0;
  if (be->core.closing)
    return;
  if (status != 0 || cluster_apply_slots(be, node, reply) != 0) {
    if (status == 0 && reply->type == REDIS_REPLY_ERROR)
      snprintf(c->detail, sizeof(c->detail), "CLUSTER SLOTS: %.*s",
               (int)reply->len, reply->str);
    be->need_refresh = 1;
    be->refresh_turn++;
    if (!be->have_map) {
      fleet__backend_set_detail_bytes(&be->core.base, c->detail,
                                      strlen(c->detail));
      be->core.events->state(be->core.owner, FLEET__BACKEND_RECONNECTING,
                             status != 0 ? status : FLEET_EBACKEND);
      if (!be->core.closing)
        cluster_fail_fast(be, status != 0 ? status : FLEET_EBACKEND, c->detail);
    }
    if (be->core.closing)
      return;
    cluster_arm_tick(be);
    return;
  }
  be->have_map = 1;
  be->need_refresh = 0;
  cluster_subs_place(be);
  if (!be->ready) {
    be->ready = 1;
    be->core.base.detail[0] = '\0';
    be->core.events->state(be->core.owner, FLEET__BACKEND_READY, 0);
  }
  cluster_arm_tick(be);
}

/* Sends CLUSTER SLOTS to a node: a ready master if there is one, else the
 * next node in turn. */
static void cluster_refresh(cluster_backend_t *be) {
  static const fleet_bytes_t slots_argv[2] = {{"CLUSTER", 7}, {"SLOTS", 5}};
  cluster_node_t *n, *pick = NULL;
  cluster_req_t *req;
  unsigned count = 0, k;

  for (n = be->nodes; n != NULL; n = n->next) {
    count++;
    if (pick == NULL && cluster_node_ready(n))
      pick = n;
  }
  if (count == 0)
    return;
  if (pick == NULL || be->refresh_turn % 2 == 1) {
    k = be->refresh_turn % count;
    for (pick = be->nodes; k > 0; k--)
      pick = pick->next;
  }
  if (cluster_node_conn(pick) == NULL ||
      (req = cluster_command(be, 2, slots_argv)) == NULL)
    return;
  req->refresh = 1;
  req->r.on_reply = cluster_on_map;
  req->r.deadline = uv_now(be->core.loop) + CLUSTER_REFRESH_TIMEOUT_MS;
  be->refreshing = 1;
  be->last_refresh = uv_now(be->core.loop);
  fleet__rconn_send(pick->conn, &req->r);
}

/* The tick: expires pending ops past their deadline, asks for a map when
 * one is wanted, and sends pending ops whose master is ready. */
static void cluster_on_tick(uv_timer_t *t) {
  cluster_backend_t *be = t->data;
  uint64_t now = uv_now(be->core.loop);
  fleet__list_t list;
  cluster_req_t *req;

  be->tick_armed = 0;
  if (be->core.closing)
    return;
  if (be->need_refresh && !be->refreshing &&
      now >= be->last_refresh + CLUSTER_REFRESH_GAP_MS)
    cluster_refresh(be);
  fleet__list_init(&list);
  cluster_pending_move(&be->pending, &list);
  while (!be->core.closing && (req = cluster_pending_pop(&list)) != NULL) {
    if (req->r.deadline != 0 && req->r.deadline <= now) {
      char why[FLEET__DETAIL_MAX];
      snprintf(why, sizeof(why), "no master ready for slot %u within %u ms",
               (unsigned)req->slot,
               (unsigned)be->core.config.command_timeout_ms);
      cluster_req_finish(be, req, why, FLEET_EUNAVAILABLE, NULL);
      continue;
    }
    cluster_dispatch(be, req);
  }
  /* Closed by a callback: what is left is cancelled with the rest. */
  cluster_pending_move(&list, &be->pending);
  cluster_arm_tick(be);
}

static void cluster_arm_tick(cluster_backend_t *be) {
  if (be->tick_armed || be->core.closing)
    return;
  if (fleet__list_empty(&be->pending) && !(be->need_refresh && !be->refreshing))
    return;
  be->tick_armed = 1;
  uv_timer_start(&be->tick, cluster_on_tick, CLUSTER_TICK_MS, 0);
}

/* ------------------------------------------------------------------------ */
/* Ops                                                                      */

/* Builds the request of an op (not sent yet). Returns 0 or an error. */
static int cluster_req_build(cluster_backend_t *be, fleet__op_t op,
                             const fleet_bytes_t *keys, size_t nkeys,
                             const fleet_bytes_t *args, size_t nargs,
                             fleet__reply_cb cb, void *arg,
                             cluster_req_t **out) {
  fleet__rreq_t *rr;
  cluster_req_t *req;
  int err;

  err =
      fleet__rcore_build(&be->core, op, keys, nkeys, args, nargs, cb, arg, &rr);
  if (err != 0)
    return err;
  req = cluster_req_init(rr);
  req->script_op = rr->script != NULL;
  req->op = op;
  req->r.deadline = uv_now(be->core.loop) + be->core.config.command_timeout_ms;
  if (nkeys > 0) {
    req->slot = fleet__key_slot(keys[0].base, keys[0].len);
  } else if (op == FLEET__OP_PUBLISH && nargs > 0) {
    req->slot = fleet__key_slot(args[0].base, args[0].len);
  } else {
    req->keyless = 1;
    req->slot = 0;
  }
  *out = req;
  return 0;
}

/* A command over keys of several slots (UNLINK of a store's clear), sent
 * as one command per slot; the reply is the sum of theirs. */
typedef struct {
  cluster_backend_t *be;
  fleet__reply_cb cb;
  void *arg;
  size_t left;
  int status;
  int64_t sum;
  char detail[FLEET__DETAIL_MAX];
} cluster_fan_t;

static void cluster_fan_on_reply(void *arg, int status,
                                 const fleet__reply_t *r) {
  cluster_fan_t *f = arg;
  fleet__reply_t out;

  if (status == 0 && r->type != FLEET__REPLY_INT)
    status = FLEET_EPROTO;
  if (status != 0 && f->status == 0) {
    f->status = status;
    snprintf(f->detail, sizeof(f->detail), "%s", f->be->core.base.detail);
  } else if (status == 0) {
    f->sum += r->integer;
  }
  if (--f->left > 0)
    return;
  memset(&out, 0, sizeof(out));
  out.type = FLEET__REPLY_INT;
  out.integer = f->sum;
  status = f->status;
  snprintf(f->be->core.base.detail, sizeof(f->be->core.base.detail), "%s",
           status != 0 ? f->detail : "");
  f->cb(f->arg, status, status == 0 ? &out : NULL);
  free(f);
}

static int cluster_fan_out(cluster_backend_t *be, fleet__op_t op,
                           const fleet_bytes_t *keys, size_t nkeys,
                           fleet__reply_cb cb, void *arg) {
  cluster_req_t *reqs = NULL, *req;
  cluster_fan_t *f = calloc(1, sizeof(*f));
  fleet_bytes_t *group = malloc(nkeys * sizeof(*group));
  uint16_t *slots = malloc(nkeys * sizeof(*slots));
  unsigned char *taken = calloc(nkeys, 1);
  size_t i, j, n;
  int err = 0;

  if (f == NULL || group == NULL || slots == NULL || taken == NULL)
    err = FLEET_ENOMEM;
  for (i = 0; err == 0 && i < nkeys; i++)
    slots[i] = fleet__key_slot(keys[i].base, keys[i].len);
  for (i = 0; err == 0 && i < nkeys; i++) {
    if (taken[i])
      continue;
    for (j = i, n = 0; j < nkeys; j++)
      if (!taken[j] && slots[j] == slots[i]) {
        taken[j] = 1;
        group[n++] = keys[j];
      }
    err = cluster_req_build(be, op, group, n, NULL, 0, cluster_fan_on_reply, f,
                            &req);
    if (err == 0) {
      req->next = reqs;
      reqs = req;
      f->left++;
    }
  }
  free(group);
  free(slots);
  free(taken);
  if (err != 0) {
    while ((req = reqs) != NULL) {
      reqs = req->next;
      cluster_req_put(be, req);
    }
    free(f);
    return err;
  }
  f->be = be;
  f->cb = cb;
  f->arg = arg;
  while ((req = reqs) != NULL) {
    reqs = req->next;
    req->next = NULL;
    cluster_dispatch(be, req);
  }
  return 0;
}

/* Whether the keys do not all share the first one's slot. */
static int cluster_keys_span(const fleet_bytes_t *keys, size_t nkeys) {
  uint16_t first = fleet__key_slot(keys[0].base, keys[0].len);
  size_t i;

  for (i = 1; i < nkeys; i++)
    if (fleet__key_slot(keys[i].base, keys[i].len) != first)
      return 1;
  return 0;
}

/* SCAN on a cluster: each master in turn (cluster_masters() order; the
 * replicas are never scanned), with the cursor of cluster_scan_cursor(). */
static int cluster_scan(cluster_backend_t *be, fleet__op_t op,
                        const fleet_bytes_t *args, size_t nargs,
                        fleet__reply_cb cb, void *arg) {
  cluster_node_t *masters[CLUSTER_SCAN_MAX];
  fleet_bytes_t a[8];
  cluster_req_t *req;
  size_t node_len;
  int count, idx, err;

  if (nargs == 0 || nargs > FLEET__ARRAY_SIZE(a))
    return FLEET_EINVAL;
  idx = cluster_scan_split(&args[0], &node_len);
  if (idx < 0)
    return FLEET_EINVAL;
  /* Before the first map (a program that scans right after its client's
   * init, as the CLI does), the SCAN waits for it like any op: no master
   * is known yet, so cluster_dispatch() keeps it pending. */
  count = cluster_masters(be, masters, CLUSTER_SCAN_MAX);
  if (be->have_map && idx >= count)
    return FLEET_EUNAVAILABLE;
  memcpy(a, args, nargs * sizeof(*a));
  a[0].len = node_len;
  err = cluster_req_build(be, op, NULL, 0, a, nargs, cb, arg, &req);
  if (err != 0)
    return err;
  req->scan_idx = idx;
  cluster_dispatch(be, req);
  return 0;
}

static int cluster_call(fleet__backend_t *base, fleet__op_t op,
                        const fleet_bytes_t *keys, size_t nkeys,
                        const fleet_bytes_t *args, size_t nargs,
                        fleet__reply_cb cb, void *arg) {
  cluster_backend_t *be = (cluster_backend_t *)base;
  cluster_req_t *req;
  int err = fleet__rcore_call_check(&be->core, cb);

  if (err != 0)
    return err;
  if (op == FLEET__OP_STORE_SCAN)
    return cluster_scan(be, op, args, nargs, cb, arg);
  if (op == FLEET__OP_STORE_UNLINK && nkeys > 1 &&
      cluster_keys_span(keys, nkeys))
    return cluster_fan_out(be, op, keys, nkeys, cb, arg);
  err = cluster_req_build(be, op, keys, nkeys, args, nargs, cb, arg, &req);
  if (err != 0)
    return err;
  /* Never inside this call: the reply comes from a connection callback,
   * or from the tick for an op that must wait. */
  cluster_dispatch(be, req);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Pub/sub                                                                  */

static void cluster_on_subscribed(fleet__rconn_t *c, fleet__rreq_t *rr,
                                  int status, redisReply *reply) {
  cluster_node_t *node = c->owner;
  cluster_backend_t *be = node->be;
  fleet__sub_t *s;
  uint16_t slot = ((cluster_req_t *)rr)->slot;

  cluster_req_put(be, (cluster_req_t *)rr);
  if (status == 0 && reply->type == REDIS_REPLY_ERROR) {
    /* MOVED: the map was stale. Place the channel's subscribers again once
     * a new map says where. */
    FLEET__SUBS_FOREACH(s, &be->core.subs) {
      if (s->where == node && s->slot == slot && !s->live)
        s->where = NULL;
    }
    cluster_want_map(be);
    return;
  }
  fleet__rcore_subscribed(&be->core, node, status, reply);
}

static void cluster_on_unsubscribed(fleet__rconn_t *c, fleet__rreq_t *rr,
                                    int status, redisReply *reply) {
  cluster_req_put(((cluster_node_t *)c->owner)->be, (cluster_req_t *)rr);
}

static void cluster_sub_send(cluster_backend_t *be, cluster_node_t *n,
                             const char *verb, const fleet__sub_t *s,
                             fleet__rreq_cb on_reply) {
  fleet_bytes_t argv[2];
  cluster_req_t *req;

  argv[0].base = verb;
  argv[0].len = strlen(verb);
  argv[1].base = s->channel;
  argv[1].len = s->len;
  if ((req = cluster_command(be, 2, argv)) == NULL)
    return;
  req->r.on_reply = on_reply;
  req->slot = s->slot;
  fleet__rconn_send(n->sub, &req->r);
}

static int cluster_node_sub_open(cluster_backend_t *be, cluster_node_t *n) {
  if (n->sub != NULL)
    return 0;
  n->sub = calloc(1, sizeof(*n->sub));
  if (n->sub == NULL)
    return FLEET_ENOMEM;
  if (fleet__rconn_open(n->sub, be->core.loop, n, &n->url, &be->core.config,
                        &cluster_sub_events, 1, NULL, 0) != 0) {
    free(n->sub);
    n->sub = NULL;
    return FLEET_ENOMEM;
  }
  be->conns_open++;
  return 0;
}

/* Puts `s` on the master of its slot (if the map names one): subscribes
 * there now if that connection is ready, else when it becomes so. */
static void cluster_sub_place(cluster_backend_t *be, fleet__sub_t *s) {
  cluster_node_t *to = be->slots[s->slot];

  if (s->cb == NULL || to == s->where)
    return;
  if (s->where != NULL) {
    cluster_node_t *from = s->where;
    s->where = NULL;
    if (from->sub != NULL && from->sub->state == FLEET__RCONN_READY &&
        !fleet__subs_used(&be->core.subs, from, s))
      cluster_sub_send(be, from, "SUNSUBSCRIBE", s, cluster_on_unsubscribed);
  }
  s->live = 0;
  if (to == NULL || cluster_node_sub_open(be, to) != 0)
    return;
  s->where = to;
  if (to->sub->state == FLEET__RCONN_READY)
    cluster_sub_send(be, to, "SSUBSCRIBE", s, cluster_on_subscribed);
}

/* After a new map: every subscription goes where its slot now is. */
static void cluster_subs_place(cluster_backend_t *be) {
  fleet__sub_t *s;
  FLEET__SUBS_FOREACH(s, &be->core.subs) {
    cluster_sub_place(be, s);
  }
}

static void cluster_on_push(fleet__rconn_t *c, redisReply *reply) {
  cluster_node_t *node = c->owner;
  cluster_backend_t *be = node->be;
  const redisReply *ch = reply->element[1];
  fleet__sub_t *s;

  if (reply->element[0]->len == 12) {
    /* "sunsubscribe": this node no longer serves the channel's slot. Its
     * subscribers are placed again by the next map. */
    FLEET__SUBS_FOREACH(s, &be->core.subs) {
      if (s->where == node && s->len == ch->len &&
          memcmp(s->channel, ch->str, ch->len) == 0) {
        s->where = NULL;
        s->live = 0;
      }
    }
    cluster_want_map(be);
    return;
  }
  fleet__rcore_message(&be->core, node, reply);
}

/* A subscriber connection broke (its subscriptions are inactive until
 * confirmed again, and the map may have changed) or became ready
 * (subscribe what lives there). */
static void cluster_on_sub_state(fleet__rconn_t *c, int ready, int status) {
  cluster_node_t *node = c->owner;
  cluster_backend_t *be = node->be;
  fleet__sub_t *s;

  FLEET__SUBS_FOREACH(s, &be->core.subs) {
    if (s->where != node)
      continue;
    if (!ready)
      s->live = 0;
    else if (s->cb != NULL)
      cluster_sub_send(be, node, "SSUBSCRIBE", s, cluster_on_subscribed);
  }
  if (!ready)
    cluster_want_map(be);
}

static int cluster_subscribe(fleet__backend_t *base, const char *channel,
                             size_t len, fleet__message_cb cb, void *arg,
                             fleet__sub_t **out) {
  cluster_backend_t *be = (cluster_backend_t *)base;
  fleet__sub_t *s;
  int err = fleet__rcore_subscribe_check(&be->core, channel, len, cb, out);

  if (err != 0)
    return err;
  if ((s = fleet__subs_add(&be->core.subs, channel, len, cb, arg)) == NULL)
    return FLEET_ENOMEM;
  s->slot = fleet__key_slot(channel, len);
  /* Without a map yet, the first map places it. */
  cluster_sub_place(be, s);
  *out = s;
  return 0;
}

static void cluster_unsubscribe(fleet__backend_t *base, fleet__sub_t *s) {
  cluster_backend_t *be = (cluster_backend_t *)base;
  cluster_node_t *n;

  if (s == NULL || s->cb == NULL)
    return;
  n = s->where;
  if (!be->core.closing && n != NULL && n->sub != NULL &&
      n->sub->state == FLEET__RCONN_READY &&
      !fleet__subs_used(&be->core.subs, n, s))
    cluster_sub_send(be, n, "SUNSUBSCRIBE", s, cluster_on_unsubscribed);
  fleet__subs_drop(&be->core.subs, s);
}

/* ------------------------------------------------------------------------ */
/* Lifecycle                                                                */

/* An op connection became ready (pending ops may go) or broke (the map
 * may have changed: a failover, a resharding). */
static void cluster_on_main_state(fleet__rconn_t *c, int ready, int status) {
  cluster_node_t *node = c->owner;
  cluster_backend_t *be = node->be;

  if (ready) {
    cluster_arm_tick(be);
    if (!fleet__list_empty(&be->pending) && !be->tick_armed)
      cluster_arm_tick(be);
    return;
  }
  if (node->master && be->ready) {
    be->ready = 0;
    fleet__backend_set_detail_bytes(&be->core.base, c->cause, strlen(c->cause));
    be->core.events->state(be->core.owner, FLEET__BACKEND_RECONNECTING, status);
  }
  cluster_want_map(be);
}

static void cluster_free(cluster_backend_t *be) {
  while (be->nodes != NULL) {
    cluster_node_t *n = be->nodes;
    be->nodes = n->next;
    free(n->conn);
    free(n->sub);
    fleet__url_free(&n->url);
    free(n->host);
    free(n);
  }
  fleet__rcore_free(&be->core);
  be->core.events->closed(be->core.owner);
  free(be);
}

static void cluster_part_closed(cluster_backend_t *be) {
  if (--be->conns_open == 0)
    cluster_free(be);
}

static void cluster_on_conn_closed(fleet__rconn_t *c) {
  cluster_part_closed(((cluster_node_t *)c->owner)->be);
}

/* The timer closed (after cluster_close() returned): ops that never
 * reached a connection are cancelled now. */
static void cluster_on_tick_closed(uv_handle_t *h) {
  cluster_backend_t *be = h->data;
  cluster_req_t *req;

  while ((req = cluster_pending_pop(&be->pending)) != NULL) {
    cluster_req_finish(be, req, "canceled: the client is closing",
                       FLEET_ECANCELED, NULL);
  }
  cluster_part_closed(be);
}

static const fleet__rconn_events_t cluster_main_events = {
    cluster_on_main_state, NULL, cluster_on_conn_closed};
static const fleet__rconn_events_t cluster_sub_events = {
    cluster_on_sub_state, cluster_on_push, cluster_on_conn_closed};

/* Adds the seed nodes of `url`. */
static int cluster_add_seeds(cluster_backend_t *be, const fleet__url_t *url) {
  size_t i;

  for (i = 0; i < url->nhosts; i++)
    if (cluster_node_get(be, url->hosts[i].host, strlen(url->hosts[i].host),
                         url->hosts[i].port) == NULL)
      return FLEET_ENOMEM;
  return 0;
}

/* The vtable's open: the seed nodes of `url`. */
static int cluster_open(uv_loop_t *loop, const fleet__url_t *url,
                        const fleet__backend_config_t *config,
                        const fleet__backend_events_t *events, void *owner,
                        fleet__backend_t **out) {
  cluster_backend_t *be;
  int err;

  be = calloc(1, sizeof(*be));
  if (be == NULL)
    return FLEET_ENOMEM;
  fleet__list_init(&be->pending);
  fleet__rcore_init(&be->core, &fleet__cluster_backend, loop, config, events,
                    owner, 1, sizeof(cluster_req_t));
  /* As redis.c: FCALL until a node's handshake says otherwise. */
  be->core.functions = be->core.config.functions;
  be->core.base.sharded = 1;
  be->url = url;
  err = cluster_add_seeds(be, url);
  if (err != 0) {
    while (be->nodes != NULL) {
      cluster_node_t *n = be->nodes;
      be->nodes = n->next;
      fleet__url_free(&n->url);
      free(n->host);
      free(n);
    }
    free(be);
    return err;
  }
  uv_timer_init(loop, &be->tick);
  be->tick.data = be;
  be->conns_open = 1; /* the timer */
  be->need_refresh = 1;
  cluster_refresh(be);
  *out = &be->core.base;
  return 0;
}

static void cluster_close(fleet__backend_t *base) {
  cluster_backend_t *be = (cluster_backend_t *)base;
  cluster_node_t *n;

  if (!fleet__rcore_close(&be->core))
    return;
  /* Ops pending here never reached a connection: the timer's close
   * callback cancels them, so never inside this call. */
  uv_timer_stop(&be->tick);
  for (n = be->nodes; n != NULL; n = n->next) {
    if (n->conn != NULL)
      fleet__rconn_close(n->conn);
    if (n->sub != NULL)
      fleet__rconn_close(n->sub);
  }
  uv_close((uv_handle_t *)&be->tick, cluster_on_tick_closed);
}

static void cluster_flush(fleet__backend_t *base) {
  cluster_backend_t *be = (cluster_backend_t *)base;
  cluster_node_t *n;

  if (be->core.closing)
    return;
  for (n = be->nodes; n != NULL; n = n->next)
    if (n->conn != NULL)
      fleet__rconn_flush(n->conn);
}

const fleet__backend_vtable_t fleet__cluster_backend = {
    .open = cluster_open,
    .call = cluster_call,
    .subscribe = cluster_subscribe,
    .unsubscribe = cluster_unsubscribe,
    .close = cluster_close,
    .flush = cluster_flush,
};
