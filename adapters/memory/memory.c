/* memory.c -- the in-process backend: the backend object, the store it may
 * share with peers (keyspace, clock, pub/sub channels), and deferred
 * delivery of state changes, op completions and messages.
 *
 * An op runs inside call(), so the store changes at once and in call
 * order; what the caller hears about it is queued as a record. Each
 * backend has one queue and one uv_idle_t, started only while the queue is
 * not empty, which delivers the records in order on the next loop
 * iterations. A record queued while the queue is being delivered waits for
 * the next iteration, so a callback never runs inside the call that caused
 * it and callbacks that issue more calls do not starve the loop.
 *
 * Closing only changes state: the delivery pass that follows cancels
 * what is left, and once the queue is empty it closes the handle; the close
 * callback tells the owner and frees the backend. Nothing is freed while a
 * delivery pass is on the stack. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "common/freelist.h"
#include "common/list.h"
#include "common/url.h"
#include "common/util.h"
#include "memory/dict.h"
#include "memory/script.h"
#include "subs.h"

/* Records kept for reuse per backend, and the largest builder buffers a
 * pooled record keeps. */
#define MEM_POOL_MAX 128
#define MEM_POOL_RB_MAX (64 * 1024)

typedef struct mem_backend_s mem_backend_t;

/* What backends opened as peers share. */
typedef struct {
  unsigned refs; /* Backends using it. */
  fleet__ks_t *ks;
  fleet__mem_host_t *host; /* Runs the ops over `ks`. */
  uint64_t wall0_us;       /* uv_gettimeofday() at creation. */
  uint64_t hr0_ns;         /* uv_hrtime() at creation. */
  /* Channel -> its subscribers (a fleet__list_t of fleet__sub_t, by their
   * `peers` node, oldest first), each peer backend's. */
  fleet__dict_t channels;
} mem_store_t;

typedef enum {
  MEM_REC_STATE,
  MEM_REC_REPLY,
  MEM_REC_MESSAGE,
  MEM_REC_ACTIVE /* a subscription is live: tell its subscriber */
} mem_rec_kind_t;

/* Something to deliver on a later loop iteration. */
typedef struct mem_rec_s {
  struct mem_rec_s *next;
  fleet__free_t free_node; /* on the backend's pool while unused */
  mem_rec_kind_t kind;
  int status; /* REPLY: the op's result. */
  union {
    fleet__backend_state_t state;
    struct {
      fleet__reply_cb cb;
      void *arg;
    } reply;
    fleet__sub_t *sub;
  } u;
  fleet__rb_t rb; /* REPLY: the reply. MESSAGE: the payload, one string. */
} mem_rec_t;

/* OPEN -> CLOSING (close() was called; the queue is being cancelled) ->
 * FINISHING (the handle is closing). */
typedef enum { MEM_OPEN, MEM_CLOSING, MEM_FINISHING } mem_state_t;

struct mem_backend_s {
  fleet__backend_t base;
  uv_loop_t *loop;
  mem_store_t *store;
  fleet__backend_events_t events;
  void *owner;
  mem_state_t state;
  uv_idle_t idle;
  mem_rec_t *head; /* The queue, oldest first. */
  mem_rec_t *tail;
  fleet__freelist_t pool; /* Records kept for reuse. */
  /* Every subscription not yet unsubscribed (adapters/subs.h). One lives
   * while the backend holds it and while messages for it are queued (a
   * reference each); its `where` is its channel's entry in the store, NULL
   * once it no longer receives. */
  fleet__subs_t subs;
};

static void mem_on_idle(uv_idle_t *handle);
static void mem_on_closed(uv_handle_t *handle);
static int64_t mem_publish(void *publisher, fleet_bytes_t channel,
                           fleet_bytes_t payload);

/* ------------------------------------------------------------------------ */
/* The store                                                                */

/* Makes a store with one user. Returns 0, FLEET_ENOMEM, FLEET_EPROTO when
 * the script host cannot compile a script, or FLEET_EUNAVAILABLE when the
 * wall clock cannot be read. */
static int mem_store_new(mem_store_t **out) {
  mem_store_t *s = calloc(1, sizeof(*s));
  uv_timeval64_t tv;
  int rc;

  if (s == NULL)
    return FLEET_ENOMEM;
  if (uv_gettimeofday(&tv) != 0) {
    free(s);
    return FLEET_EUNAVAILABLE;
  }
  s->ks = fleet__ks_new();
  if (s->ks == NULL) {
    free(s);
    return FLEET_ENOMEM;
  }
  rc = fleet__mem_host_new(s->ks, mem_publish, s, &s->host);
  if (rc != 0) {
    fleet__ks_free(s->ks);
    free(s);
    return rc;
  }
  s->refs = 1;
  s->wall0_us = (uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec;
  s->hr0_ns = uv_hrtime();
  fleet__dict_init(&s->channels);
  *out = s;
  return 0;
}

static void mem_store_unref(mem_store_t *s) {
  if (--s->refs > 0)
    return;
  fleet__mem_host_free(s->host);
  fleet__ks_free(s->ks);
  fleet__dict_clear(&s->channels, NULL);
  free(s);
}

/* The store clock: the wall clock at creation plus the monotonic time
 * since, so that it never goes backwards. */
static uint64_t mem_store_now_us(const mem_store_t *s) {
  return s->wall0_us + (uv_hrtime() - s->hr0_ns) / 1000;
}

/* ------------------------------------------------------------------------ */
/* Records and the queue                                                    */

/* A record from the pool or new, or NULL when out of memory. */
static mem_rec_t *mem_rec_get(mem_backend_t *be) {
  mem_rec_t *r = FLEET__FREELIST_TAKE(&be->pool, mem_rec_t, free_node);

  if (r == NULL) {
    r = malloc(sizeof(*r));
    if (r == NULL)
      return NULL;
    fleet__rb_init(&r->rb);
  }
  r->next = NULL;
  r->status = 0;
  return r;
}

static void mem_rec_put(mem_backend_t *be, mem_rec_t *r) {
  fleet__rb_trim(&r->rb, MEM_POOL_RB_MAX);
  if (fleet__freelist_put(&be->pool, &r->free_node))
    return;
  fleet__rb_trim(&r->rb, 0);
  free(r);
}

static void mem_enqueue(mem_backend_t *be, mem_rec_t *r) {
  if (be->tail != NULL)
    be->tail->next = r;
  else
    be->head = r;
  be->tail = r;
  uv_idle_start(&be->idle, mem_on_idle);
}

/* ------------------------------------------------------------------------ */
/* Subscriptions                                                            */

/* The backend of `sub`. */
static mem_backend_t *mem_sub_backend(const fleet__sub_t *sub) {
  return sub->list->owner;
}

/* Takes the channel entry `e` off the store when no one subscribes to it
 * any more. */
static void mem_channel_prune(mem_store_t *store, fleet__dict_entry_t *e) {
  fleet__list_t *subs = e->val;

  if (subs != NULL && !fleet__list_empty(subs))
    return;
  free(subs);
  fleet__dict_delete(&store->channels, e);
}

/* Takes `sub` off its channel, so that it receives nothing more; the
 * channel goes when its last subscriber does. */
static void mem_sub_detach(fleet__sub_t *sub) {
  fleet__dict_entry_t *e = sub->where;

  if (e == NULL)
    return;
  fleet__list_remove(&sub->peers);
  mem_channel_prune(mem_sub_backend(sub)->store, e);
  sub->where = NULL;
}

/* Whether `sub` is the first subscriber of its backend on its channel's
 * list `subs`: PUBLISH counts clients, as Redis counts connections. */
static int mem_first_of_backend(const fleet__list_t *subs,
                                const fleet__sub_t *sub) {
  const fleet__list_t *n;

  for (n = subs->next; n != &sub->peers; n = n->next)
    if (FLEET__LIST_DATA(n, fleet__sub_t, peers)->list == sub->list)
      return 0;
  return 1;
}

/* The publish hook of the script host (see fleet__mem_env_t): queues one
 * message record per subscriber, on the subscriber's backend. */
static int64_t mem_publish(void *publisher, fleet_bytes_t channel,
                           fleet_bytes_t payload) {
  mem_store_t *store = publisher;
  fleet__dict_entry_t *e;
  fleet__sub_t *sub;
  mem_rec_t *r;
  int64_t n = 0;

  e = fleet__dict_find(&store->channels, channel.base, channel.len);
  if (e == NULL)
    return 0;
  FLEET__LIST_FOREACH_DATA (sub, (fleet__list_t *)e->val, fleet__sub_t, peers) {
    mem_backend_t *be = mem_sub_backend(sub);
    r = mem_rec_get(be);
    if (r == NULL)
      return FLEET_ENOMEM;
    fleet__rb_reset(&r->rb);
    if (fleet__rb_str(&r->rb, payload.base, payload.len) != 0) {
      mem_rec_put(be, r);
      return FLEET_ENOMEM;
    }
    r->kind = MEM_REC_MESSAGE;
    r->u.sub = sub;
    fleet__sub_ref(sub);
    mem_enqueue(be, r);
    n += mem_first_of_backend(e->val, sub);
  }
  return n;
}

/* ------------------------------------------------------------------------ */
/* State and delivery                                                       */

/* The one place the backend changes state. */
static void mem_set_state(mem_backend_t *be, mem_state_t state) {
  fleet__sub_t *sub;

  be->state = state;
  switch (state) {
    case MEM_CLOSING:
      /* Subscriptions stop receiving now but stay valid for
       * unsubscribe() until the backend is freed. */
      FLEET__SUBS_FOREACH(sub, &be->subs) {
        mem_sub_detach(sub);
      }
      uv_idle_start(&be->idle, mem_on_idle);
      break;
    case MEM_FINISHING:
      uv_close((uv_handle_t *)&be->idle, mem_on_closed);
      break;
    default:
      break;
  }
}

/* Delivers one record. Once the backend is closing, a completion is
 * cancelled and anything else is dropped. */
static void mem_deliver(mem_backend_t *be, mem_rec_t *r) {
  const fleet__reply_t *reply = NULL;
  fleet__sub_t *sub;
  int status;

  switch (r->kind) {
    case MEM_REC_STATE:
      if (be->state == MEM_OPEN && be->events.state != NULL)
        be->events.state(be->owner, r->u.state, 0);
      break;
    case MEM_REC_REPLY:
      status = be->state == MEM_OPEN ? r->status : FLEET_ECANCELED;
      if (status == 0)
        status = fleet__rb_build(&r->rb, &reply);
      /* A script's error keeps its text, as Redis's error reply does. */
      if (status != 0 && status == r->status && fleet__rb_check(&r->rb) == 0 &&
          fleet__rb_build(&r->rb, &reply) == 0 &&
          reply->type == FLEET__REPLY_STR)
        fleet__backend_set_detail_bytes(&be->base, reply->str, reply->len);
      else
        fleet__backend_set_detail(&be->base, "%s",
                                  status != 0 ? fleet_strerror(status) : "");
      if (status != 0)
        reply = NULL;
      r->u.reply.cb(r->u.reply.arg, status, status == 0 ? reply : NULL);
      break;
    case MEM_REC_MESSAGE:
      sub = r->u.sub;
      if (sub->where != NULL) {
        /* A message that cannot be delivered is reported as possibly
         * missed, which is what the subscriber must handle anyway. */
        if (fleet__rb_build(&r->rb, &reply) == 0)
          sub->cb(sub->arg, 0, reply->str, reply->len);
        else
          sub->cb(sub->arg, FLEET_ECONNLOST, NULL, 0);
      }
      fleet__sub_unref(sub);
      break;
    case MEM_REC_ACTIVE:
      /* As on Redis, a subscriber hears when its subscription is live and
       * re-checks what it waits on. */
      sub = r->u.sub;
      if (sub->where != NULL)
        sub->cb(sub->arg, FLEET_ECONNLOST, NULL, 0);
      fleet__sub_unref(sub);
      break;
  }
}

/* Delivers the records queued before this pass began, in order. Records
 * queued meanwhile wait for the next loop iteration. */
static void mem_on_idle(uv_idle_t *handle) {
  mem_backend_t *be = FLEET__CONTAINER_OF(handle, mem_backend_t, idle);
  mem_rec_t *last = be->tail;
  mem_rec_t *r;
  int done = last == NULL;

  while (!done) {
    r = be->head;
    be->head = r->next;
    if (be->head == NULL)
      be->tail = NULL;
    done = r == last;
    mem_deliver(be, r);
    mem_rec_put(be, r);
  }
  if (be->head != NULL)
    return;
  if (be->state == MEM_CLOSING)
    mem_set_state(be, MEM_FINISHING);
  else
    uv_idle_stop(handle);
}

/* Frees the backend: its subscriptions, its pool and its share of the
 * store. The queue is empty by now. */
static void mem_free(mem_backend_t *be) {
  mem_rec_t *r;

  fleet__subs_free(&be->subs);
  while ((r = FLEET__FREELIST_TAKE(&be->pool, mem_rec_t, free_node)) != NULL) {
    fleet__rb_trim(&r->rb, 0);
    free(r);
  }
  mem_store_unref(be->store);
  free(be);
}

static void mem_on_closed(uv_handle_t *handle) {
  mem_backend_t *be =
      FLEET__CONTAINER_OF((uv_idle_t *)handle, mem_backend_t, idle);

  if (be->events.closed != NULL)
    be->events.closed(be->owner);
  mem_free(be);
}

/* ------------------------------------------------------------------------ */
/* The vtable                                                               */

/* Validates the config, shares the peer's store or makes one, and queues
 * CONNECTING and READY for the first delivery pass. The URL and the
 * timeouts play no part: ops finish at once. */
static int mem_open(uv_loop_t *loop, const struct fleet__url_s *url,
                    const fleet__backend_config_t *config,
                    const fleet__backend_events_t *events, void *owner,
                    fleet__backend_t **out) {
  mem_backend_t *be, *peer = NULL;
  mem_rec_t *connecting, *ready;
  int rc;

  if (loop == NULL || events == NULL || out == NULL ||
      (url != NULL && url->scheme != FLEET__URL_MEMORY))
    return FLEET_EINVAL;
  if (config != NULL && config->memory_peer != NULL) {
    if (config->memory_peer->vt != &fleet__memory_backend)
      return FLEET_EINVAL;
    peer = (mem_backend_t *)config->memory_peer;
    if (peer->loop != loop)
      return FLEET_EINVAL;
  }
  be = calloc(1, sizeof(*be));
  if (be == NULL)
    return FLEET_ENOMEM;
  fleet__subs_init(&be->subs, be);
  fleet__freelist_init(&be->pool, MEM_POOL_MAX);
  be->base.vt = &fleet__memory_backend;
  be->loop = loop;
  be->events = *events;
  be->owner = owner;
  be->state = MEM_OPEN;
  if (peer != NULL) {
    be->store = peer->store;
    be->store->refs++;
  } else {
    rc = mem_store_new(&be->store);
    if (rc != 0) {
      free(be);
      return rc;
    }
  }
  connecting = mem_rec_get(be);
  ready = mem_rec_get(be);
  if (connecting == NULL || ready == NULL) {
    free(connecting);
    free(ready);
    mem_store_unref(be->store);
    free(be);
    return FLEET_ENOMEM;
  }
  uv_idle_init(loop, &be->idle);
  connecting->kind = MEM_REC_STATE;
  connecting->u.state = FLEET__BACKEND_CONNECTING;
  mem_enqueue(be, connecting);
  ready->kind = MEM_REC_STATE;
  ready->u.state = FLEET__BACKEND_READY;
  mem_enqueue(be, ready);
  *out = &be->base;
  return 0;
}

/* Runs the op now, at the store clock, in the store's script host, and
 * queues its completion. */
static int mem_call(fleet__backend_t *base, fleet__op_t op,
                    const fleet_bytes_t *keys, size_t nkeys,
                    const fleet_bytes_t *args, size_t nargs, fleet__reply_cb cb,
                    void *arg) {
  mem_backend_t *be = (mem_backend_t *)base;
  mem_store_t *store;
  uint64_t now_us;
  mem_rec_t *r;

  if (be == NULL || cb == NULL || (unsigned)op >= FLEET__OP_COUNT ||
      (nkeys > 0 && keys == NULL) || (nargs > 0 && args == NULL))
    return FLEET_EINVAL;
  if (be->state != MEM_OPEN)
    return FLEET_ECLOSING;
  store = be->store;
  if (!fleet__mem_host_has(store->host, op))
    return FLEET_EBACKEND;
  r = mem_rec_get(be);
  if (r == NULL)
    return FLEET_ENOMEM;
  now_us = mem_store_now_us(store);
  fleet__ks_begin(store->ks, (int64_t)(now_us / 1000));
  r->kind = MEM_REC_REPLY;
  r->u.reply.cb = cb;
  r->u.reply.arg = arg;
  r->status = fleet__mem_host_run(store->host, now_us, op, keys, nkeys, args,
                                  nargs, &r->rb);
  mem_enqueue(be, r);
  return 0;
}

/* Tests only (fleet__backend_set_epoch()). */
static int mem_set_epoch(fleet__backend_t *base, const char *epoch) {
  mem_backend_t *be = (mem_backend_t *)base;

  return fleet__mem_host_set_epoch(be->store->host, epoch);
}

int fleet__memory_command(fleet__backend_t *base, const fleet_bytes_t *argv,
                          size_t argc, fleet__rb_t *out) {
  mem_backend_t *be = (mem_backend_t *)base;
  uint64_t now_us;

  if (be == NULL || be->base.vt != &fleet__memory_backend)
    return FLEET_EINVAL;
  now_us = mem_store_now_us(be->store);
  fleet__ks_begin(be->store->ks, (int64_t)(now_us / 1000));
  return fleet__mem_host_command(be->store->host, now_us, argv, argc, out);
}

static int mem_subscribe(fleet__backend_t *base, const char *channel,
                         size_t len, fleet__message_cb cb, void *arg,
                         fleet__sub_t **out) {
  mem_backend_t *be = (mem_backend_t *)base;
  fleet__dict_entry_t *e;
  fleet__sub_t *sub;
  mem_rec_t *r;

  if (be == NULL || (channel == NULL && len > 0) || cb == NULL || out == NULL)
    return FLEET_EINVAL;
  if (be->state != MEM_OPEN)
    return FLEET_ECLOSING;
  e = fleet__dict_add(&be->store->channels, channel, len, NULL);
  if (e == NULL)
    return FLEET_ENOMEM;
  if (e->val == NULL && (e->val = malloc(sizeof(fleet__list_t))) != NULL)
    fleet__list_init(e->val);
  sub =
      e->val != NULL ? fleet__subs_add(&be->subs, channel, len, cb, arg) : NULL;
  r = sub != NULL ? mem_rec_get(be) : NULL;
  if (r == NULL) {
    fleet__subs_drop(&be->subs, sub);
    mem_channel_prune(be->store, e);
    return FLEET_ENOMEM;
  }
  fleet__sub_ref(sub); /* the activation record's */
  sub->where = e;
  r->kind = MEM_REC_ACTIVE;
  r->u.sub = sub;
  mem_enqueue(be, r);
  /* Subscribers hear a message in the order they subscribed. */
  fleet__list_insert_tail(e->val, &sub->peers);
  *out = sub;
  return 0;
}

/* Valid until the backend is freed, closing or not. Messages already
 * queued for `sub` are dropped when their turn comes. */
static void mem_unsubscribe(fleet__backend_t *base, fleet__sub_t *sub) {
  mem_backend_t *be = (mem_backend_t *)base;

  if (be == NULL || sub == NULL)
    return;
  mem_sub_detach(sub);
  fleet__subs_drop(&be->subs, sub);
}

static void mem_close(fleet__backend_t *base) {
  mem_backend_t *be = (mem_backend_t *)base;

  if (be != NULL && be->state == MEM_OPEN)
    mem_set_state(be, MEM_CLOSING);
}

const fleet__backend_vtable_t fleet__memory_backend = {
    .open = mem_open,
    .call = mem_call,
    .subscribe = mem_subscribe,
    .unsubscribe = mem_unsubscribe,
    .close = mem_close,
    .set_epoch = mem_set_epoch,
};
