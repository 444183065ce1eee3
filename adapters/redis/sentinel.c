/* sentinel.c -- finding and following a Sentinel-monitored master (see
 * sentinel.h). One "link" at a time talks to one sentinel: a connection
 * for SENTINEL queries and a subscriber connection for +switch-master.
 * When a query fails there (the sentinel is down, does not know the
 * master, or answers an error) the link is closed and the next sentinel of
 * the URL is tried; after a whole round of failures the next round waits a
 * backoff delay. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"
#include "common/util.h"
#include "redis/conn.h"
#include "redis/sentinel.h"

typedef struct sentinel_link_s {
  fleet__sentinel_t *s;
  fleet__url_t url; /* this sentinel, with the sentinel credentials */
  fleet__rconn_t query;
  fleet__rconn_t sub;
  int open; /* connections not yet closed */
  int dead; /* closing */
  struct sentinel_link_s *next;
} sentinel_link_t;

struct fleet__sentinel_s {
  uv_loop_t *loop;
  const fleet__url_t *url;
  const fleet__backend_config_t *config;
  const fleet__sentinel_events_t *events;
  void *owner;
  fleet__url_t node;      /* the master; host NULL until known */
  char epoch[24];         /* its config-epoch, in decimal: the fencing epoch */
  sentinel_link_t *link;  /* the live link, or NULL */
  sentinel_link_t *links; /* every link not yet freed */
  size_t host;            /* the sentinel the next link goes to */
  uint32_t failures;      /* failed queries since the last answer */
  int asking;             /* a query is in flight on the live link */
  int again;              /* refresh asked while one was in flight */
  int started, closing, timer_open;
  uv_timer_t retry;
  fleet__rng_t rng;
  char why[FLEET__DETAIL_MAX];
};

static const fleet__rconn_events_t sentinel_query_events;
static const fleet__rconn_events_t sentinel_sub_events;
static void sentinel_ask(fleet__sentinel_t *s);

/* "host:port" of a link's sentinel, for messages. */
static const char *sentinel_name(const sentinel_link_t *l, char *buf,
                                 size_t size) {
  snprintf(buf, size, strchr(l->url.host, ':') != NULL ? "[%s]:%u" : "%s:%u",
           l->url.host, (unsigned)l->url.port);
  return buf;
}

static void sentinel_maybe_closed(fleet__sentinel_t *s) {
  if (s->closing && s->links == NULL && !s->timer_open)
    s->events->on_closed(s->owner);
}

static void sentinel_on_conn_closed(fleet__rconn_t *c) {
  sentinel_link_t *l = c->owner, **pp;
  fleet__sentinel_t *s = l->s;

  if (--l->open > 0)
    return;
  for (pp = &s->links; *pp != NULL; pp = &(*pp)->next) {
    if (*pp == l) {
      *pp = l->next;
      break;
    }
  }
  fleet__url_free(&l->url);
  free(l);
  sentinel_maybe_closed(s);
}

/* Starts closing a link; it is freed once both connections closed. */
static void sentinel_link_drop(sentinel_link_t *l) {
  fleet__sentinel_t *s = l->s;

  if (l->dead)
    return;
  l->dead = 1;
  if (s->link == l) {
    s->link = NULL;
    s->asking = 0;
  }
  fleet__rconn_close(&l->query);
  fleet__rconn_close(&l->sub);
}

/* Opens a link to sentinel number s->host. Returns 0 or FLEET_ENOMEM. */
static int sentinel_link_open(fleet__sentinel_t *s) {
  const fleet__url_host_t *h = &s->url->hosts[s->host % s->url->nhosts];
  sentinel_link_t *l = calloc(1, sizeof(*l));

  if (l == NULL)
    return FLEET_ENOMEM;
  l->s = s;
  if (fleet__url_node(s->url, h->host, h->port, 1, &l->url) != 0) {
    free(l);
    return FLEET_ENOMEM;
  }
  if (fleet__rconn_open(&l->query, s->loop, l, &l->url, s->config,
                        &sentinel_query_events, 0, NULL, 0) != 0) {
    fleet__url_free(&l->url);
    free(l);
    return FLEET_ENOMEM;
  }
  l->open = 1;
  l->next = s->links;
  s->links = l;
  s->link = l;
  if (fleet__rconn_open(&l->sub, s->loop, l, &l->url, s->config,
                        &sentinel_sub_events, 1, NULL, 0) != 0) {
    /* Only the query connection to close. */
    l->dead = 1;
    s->link = NULL;
    fleet__rconn_close(&l->query);
    return FLEET_ENOMEM;
  }
  l->open = 2;
  return 0;
}

static void sentinel_on_retry(uv_timer_t *t) {
  sentinel_ask(t->data);
}

/* The live link failed to answer, for the reason in s->why: move on to the
 * next sentinel, at once within a round, after a backoff delay between
 * rounds. */
static void sentinel_failed(fleet__sentinel_t *s) {
  uint64_t delay = 0;
  size_t n = s->url->nhosts;

  if (s->link != NULL)
    sentinel_link_drop(s->link);
  s->asking = 0;
  s->failures++;
  s->host = (s->host + 1) % n;
  if (s->failures >= n) {
    s->events->on_trouble(s->owner, s->why);
    if (s->failures % n == 0)
      delay = fleet__backoff_delay(
          s->config->reconnect_initial_ms, s->config->reconnect_max_ms,
          s->config->reconnect_jitter_pct, (uint32_t)(s->failures / n - 1),
          fleet__rng_next(&s->rng));
  }
  uv_timer_start(&s->retry, sentinel_on_retry, delay, 0);
}

/* Puts host:port into the node url and `epoch` (decimal, at most 20
 * digits) beside it; tells the owner when either changed. */
static void sentinel_set_master(fleet__sentinel_t *s, const char *host,
                                size_t hlen, long port, const char *epoch,
                                size_t elen) {
  char *h;

  if (s->node.host != NULL && strlen(s->node.host) == hlen &&
      memcmp(s->node.host, host, hlen) == 0 && s->node.port == port &&
      strlen(s->epoch) == elen && memcmp(s->epoch, epoch, elen) == 0)
    return;
  h = fleet__memdup(host, hlen);
  if (h == NULL)
    return; /* kept the old address; the next refresh tries again */
  free(s->node.hosts[0].host);
  s->node.hosts[0].host = s->node.host = h;
  s->node.hosts[0].port = s->node.port = (uint16_t)port;
  memcpy(s->epoch, epoch, elen);
  s->epoch[elen] = '\0';
  s->events->on_master(s->owner);
}

/* Parses a decimal port in [p, p+len); 0 when it is not one. */
static long sentinel_port(const char *p, size_t len) {
  long v = 0;
  size_t i;

  if (len == 0 || len > 5)
    return 0;
  for (i = 0; i < len; i++) {
    if (p[i] < '0' || p[i] > '9')
      return 0;
    v = v * 10 + (p[i] - '0');
  }
  return v <= 65535 ? v : 0;
}

static void sentinel_req_free(fleet__rreq_t *req) {
  free(req->buf);
  free(req);
}

/* The value of field `name` in the flat field, value array of a SENTINEL
 * MASTER answer; NULL when absent or not a string. */
static const redisReply *sentinel_field(const redisReply *r, const char *name) {
  size_t i, len = strlen(name);

  for (i = 0; i + 1 < r->elements; i += 2) {
    const redisReply *k = r->element[i], *v = r->element[i + 1];
    if (k->type == REDIS_REPLY_STRING && k->len == len &&
        memcmp(k->str, name, len) == 0)
      return v->type == REDIS_REPLY_STRING ? v : NULL;
  }
  return NULL;
}

/* Whether `r` is a decimal of 1 to 20 digits. */
static int sentinel_decimal(const redisReply *r) {
  size_t i;

  if (r == NULL || r->len == 0 || r->len > 20)
    return 0;
  for (i = 0; i < r->len; i++)
    if (r->str[i] < '0' || r->str[i] > '9')
      return 0;
  return 1;
}

/* Whether the comma-separated list [p, p+len) holds `flag`. */
static int sentinel_has_flag(const char *p, size_t len, const char *flag) {
  size_t fl = strlen(flag), i = 0;

  while (i < len) {
    size_t j = i;
    while (j < len && p[j] != ',')
      j++;
    if (j - i == fl && memcmp(p + i, flag, fl) == 0)
      return 1;
    i = j + 1;
  }
  return 0;
}

/* How long to wait before asking again while a failover is in progress. */
#define SENTINEL_FAILOVER_POLL_MS 100

/* The answer to SENTINEL MASTER <name>: the master's fields as a flat
 * array of name, value (ip, port, flags, config-epoch among them), or an
 * error ("No such master" for a name the sentinel does not know).
 *
 * The address and its config-epoch come from one answer, so that the
 * fencing epoch of a connection is the one Sentinel gave with the address
 * it went to. While a failover is in progress the pair may be torn:
 * Sentinel sets the config-epoch of the promoted replica as soon as it is
 * promoted, but names it as the master only when the failover ends. Such
 * an answer is not used: the sentinel is asked again a moment later, and
 * the address and epoch in use stay those of the last complete answer. */
static void sentinel_on_addr(fleet__rconn_t *c, fleet__rreq_t *req, int status,
                             redisReply *reply) {
  sentinel_link_t *l = c->owner;
  fleet__sentinel_t *s = l->s;
  const redisReply *ip = NULL, *pt = NULL, *ep = NULL, *fl = NULL;
  char name[64];
  long port = 0;

  sentinel_req_free(req);
  if (l != s->link || s->closing)
    return; /* an old link's query, cancelled or overtaken */
  s->asking = 0;
  sentinel_name(l, name, sizeof(name));
  if (status == 0 && reply->type == REDIS_REPLY_ARRAY) {
    ip = sentinel_field(reply, "ip");
    pt = sentinel_field(reply, "port");
    ep = sentinel_field(reply, "config-epoch");
    fl = sentinel_field(reply, "flags");
    if (pt != NULL)
      port = sentinel_port(pt->str, pt->len);
  }
  if (status != 0) {
    snprintf(s->why, sizeof(s->why), "sentinel %s: %.150s", name, c->detail);
  } else if (reply->type == REDIS_REPLY_ERROR &&
             (reply->len < 18 ||
              memcmp(reply->str, "ERR No such master", 18))) {
    snprintf(s->why, sizeof(s->why), "sentinel %s: %.*s", name, (int)reply->len,
             reply->str);
  } else if (reply->type != REDIS_REPLY_ARRAY || ip == NULL || ip->len == 0 ||
             port == 0) {
    snprintf(s->why, sizeof(s->why),
             "sentinel %s does not know a master named \"%s\"", name,
             s->url->master_name);
  } else if (!sentinel_decimal(ep)) {
    snprintf(s->why, sizeof(s->why),
             "sentinel %s gave no config-epoch for \"%s\"", name,
             s->url->master_name);
  } else if (fl != NULL &&
             sentinel_has_flag(fl->str, fl->len, "failover_in_progress")) {
    s->failures = 0;
    uv_timer_start(&s->retry, sentinel_on_retry, SENTINEL_FAILOVER_POLL_MS, 0);
    return;
  } else {
    s->failures = 0;
    s->why[0] = '\0';
    sentinel_set_master(s, ip->str, ip->len, port, ep->str, ep->len);
    if (s->again && !s->closing) {
      s->again = 0;
      sentinel_ask(s);
    }
    return;
  }
  sentinel_failed(s);
}

static void sentinel_ask(fleet__sentinel_t *s) {
  static const char verb[] = "MASTER";
  const char *name = s->url->master_name;
  fleet__rreq_t *req;

  if (s->closing || !s->started)
    return;
  if (s->asking) {
    s->again = 1;
    return;
  }
  if (uv_is_active((uv_handle_t *)&s->retry))
    return; /* the retry asks */
  if (s->link == NULL && sentinel_link_open(s) != 0) {
    snprintf(s->why, sizeof(s->why), "out of memory");
    sentinel_failed(s);
    return;
  }
  req = calloc(1, sizeof(*req));
  if (req == NULL || fleet__rreq_begin(req, 3) != 0 ||
      fleet__rreq_arg(req, "SENTINEL", 8) != 0 ||
      fleet__rreq_arg(req, verb, sizeof(verb) - 1) != 0 ||
      fleet__rreq_arg(req, name, strlen(name)) != 0) {
    if (req != NULL)
      sentinel_req_free(req);
    snprintf(s->why, sizeof(s->why), "out of memory");
    sentinel_failed(s);
    return;
  }
  req->on_reply = sentinel_on_addr;
  s->asking = 1;
  s->again = 0;
  fleet__rconn_send(&s->link->query, req);
}

/* The query connection: an attempt failing or a connection breaking means
 * this sentinel cannot be relied on now; the next one is asked. */
static void sentinel_on_query_state(fleet__rconn_t *c, int ready, int status) {
  sentinel_link_t *l = c->owner;
  fleet__sentinel_t *s = l->s;
  char name[64];

  if (ready || l != s->link || s->closing)
    return;
  snprintf(s->why, sizeof(s->why), "sentinel %s: %.150s",
           sentinel_name(l, name, sizeof(name)), c->cause);
  sentinel_failed(s);
}

static void sentinel_on_subscribed(fleet__rconn_t *c, fleet__rreq_t *req,
                                   int status, redisReply *reply) {
  sentinel_req_free(req);
}

/* Sends "SUBSCRIBE <channel>" (one channel per request: each gets its
 * own confirmation). */
static void sentinel_subscribe(fleet__rconn_t *c, const char *channel) {
  fleet__rreq_t *req = calloc(1, sizeof(*req));

  if (req == NULL || fleet__rreq_begin(req, 2) != 0 ||
      fleet__rreq_arg(req, "SUBSCRIBE", 9) != 0 ||
      fleet__rreq_arg(req, channel, strlen(channel)) != 0) {
    if (req != NULL)
      sentinel_req_free(req);
    return;
  }
  req->on_reply = sentinel_on_subscribed;
  fleet__rconn_send(c, req);
}

/* The subscriber connection is (again) ready: subscribe, and ask, since a
 * switch may have gone unheard while it was down. */
static void sentinel_on_sub_state(fleet__rconn_t *c, int ready, int status) {
  sentinel_link_t *l = c->owner;
  fleet__sentinel_t *s = l->s;

  if (!ready || l->dead || s->closing)
    return;
  sentinel_subscribe(c, "+switch-master");
  sentinel_subscribe(c, "+promoted-slave");
  sentinel_ask(s);
}

/* Whether [p, p+len) is the NUL-terminated `word`. */
static int sentinel_is(const char *p, size_t len, const char *word) {
  return strlen(word) == len && memcmp(p, word, len) == 0;
}

/* +switch-master "<name> <old-ip> <old-port> <new-ip> <new-port>", sent
 * when a failover ends; and +promoted-slave "slave <ip:port> <ip> <port> @
 * <name> <master-ip> <master-port>", sent as soon as the chosen replica
 * reports itself a master. Either makes the sentinel be asked at once,
 * and again every SENTINEL_FAILOVER_POLL_MS until the failover ended:
 * the address these messages carry is never used alone, since the
 * connection must go there with the config-epoch Sentinel gives with it
 * (sentinel_on_addr()). The ROLE check of the handshake confirms the new
 * master. */
static void sentinel_on_push(fleet__rconn_t *c, redisReply *reply) {
  sentinel_link_t *l = c->owner;
  fleet__sentinel_t *s = l->s;
  const redisReply *ch = reply->element[1], *msg = reply->element[2];
  const char *f[8], *p, *end, *name = s->url->master_name;
  size_t flen[8], n = 0;

  if (l->dead || s->closing || msg->type != REDIS_REPLY_STRING ||
      ch->type != REDIS_REPLY_STRING)
    return;
  p = msg->str;
  end = msg->str + msg->len;
  while (p < end && n < 8) {
    const char *sp = memchr(p, ' ', (size_t)(end - p));
    f[n] = p;
    flen[n] = (size_t)((sp != NULL ? sp : end) - p);
    n++;
    p = sp != NULL ? sp + 1 : end;
  }
  if (sentinel_is(ch->str, ch->len, "+switch-master")) {
    if (n != 5 || !sentinel_is(f[0], flen[0], name))
      return;
    sentinel_ask(s);
  } else if (sentinel_is(ch->str, ch->len, "+promoted-slave")) {
    if (n != 8 || !sentinel_is(f[0], flen[0], "slave") ||
        !sentinel_is(f[4], flen[4], "@") || !sentinel_is(f[5], flen[5], name))
      return;
    sentinel_ask(s);
  }
}

static const fleet__rconn_events_t sentinel_query_events = {
    sentinel_on_query_state, NULL, sentinel_on_conn_closed};
static const fleet__rconn_events_t sentinel_sub_events = {
    sentinel_on_sub_state, sentinel_on_push, sentinel_on_conn_closed};

int fleet__sentinel_new(fleet__sentinel_t **out, uv_loop_t *loop,
                        const fleet__url_t *url,
                        const fleet__backend_config_t *config,
                        const fleet__sentinel_events_t *events, void *owner) {
  fleet__sentinel_t *s = calloc(1, sizeof(*s));

  *out = NULL;
  if (s == NULL)
    return FLEET_ENOMEM;
  /* A placeholder host, then none: the url is complete but for that. */
  if (fleet__url_node(url, "-", 0, 0, &s->node) != 0) {
    free(s);
    return FLEET_ENOMEM;
  }
  free(s->node.hosts[0].host);
  s->node.hosts[0].host = s->node.host = NULL;
  strcpy(s->epoch, "0");
  s->loop = loop;
  s->url = url;
  s->config = config;
  s->events = events;
  s->owner = owner;
  fleet__rng_seed(&s->rng, uv_hrtime() ^ (uint64_t)(uintptr_t)s);
  *out = s;
  return 0;
}

void fleet__sentinel_start(fleet__sentinel_t *s) {
  uv_timer_init(s->loop, &s->retry);
  s->retry.data = s;
  s->timer_open = 1;
  s->started = 1;
  sentinel_ask(s);
}

const fleet__url_t *fleet__sentinel_node(const fleet__sentinel_t *s) {
  return &s->node;
}

const char *fleet__sentinel_epoch(const fleet__sentinel_t *s) {
  return s->epoch;
}

void fleet__sentinel_refresh(fleet__sentinel_t *s) {
  sentinel_ask(s);
}

static void sentinel_on_timer_closed(uv_handle_t *h) {
  fleet__sentinel_t *s = h->data;

  s->timer_open = 0;
  sentinel_maybe_closed(s);
}

void fleet__sentinel_close(fleet__sentinel_t *s) {
  sentinel_link_t *l;

  if (s->closing)
    return;
  s->closing = 1;
  for (l = s->links; l != NULL; l = l->next)
    sentinel_link_drop(l);
  if (s->timer_open)
    uv_close((uv_handle_t *)&s->retry, sentinel_on_timer_closed);
  else
    sentinel_maybe_closed(s);
}

void fleet__sentinel_free(fleet__sentinel_t *s) {
  if (s == NULL)
    return;
  fleet__url_free(&s->node);
  free(s);
}
