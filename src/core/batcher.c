/* batcher.c -- the per-client periodic batcher (see batcher.h): one timer
 * per client, one call per kind and group for every item that is due. */
#include <stdlib.h>
#include <string.h>

#include "batcher.h"
#include "client.h"
#include "phase_end.h"

struct fleet__batch_call_s {
  fleet__batch_call_t *next; /* the pool, or the calls being built */
  struct fleet__batcher_s *b;
  const fleet__batch_kind_t *kind;
  const void *group;
  uint32_t hslot; /* the hash slot of its items' keys, on a sharded backend */
  uint64_t sent;  /* loop ms */
  size_t n;
  fleet__batch_item_t *items[FLEET__BATCH_MAX]; /* NULL: forgotten */
};

struct fleet__batcher_s {
  struct fleet__client_s *client;
  uv_timer_t timer;
  /* The end of the loop phase, for items due now (handle.h). */
  fleet__phase_end_t now;
  int closes_left;
  uint64_t due;        /* loop ms the timer is armed for; 0 when stopped */
  fleet__list_t sched; /* the items scheduled */
  fleet__batch_call_t *pool;
  void (*closed)(struct fleet__client_s *c);
  /* Call arguments, reused: the backend copies them. */
  fleet_bytes_t *keys, *args;
  size_t keys_cap, args_cap;
  uint64_t calls, items; /* statistics */
  uint64_t once;         /* calls that carried their items' args once */
};

static void batcher_on_timer(uv_timer_t *timer);
static void batcher_on_now(fleet__phase_end_t *pe, int in_prepare);

static struct fleet__batcher_s *batcher_get(struct fleet__client_s *c) {
  struct fleet__batcher_s *b = c->batcher;

  if (b != NULL)
    return b;
  b = calloc(1, sizeof(*b));
  if (b == NULL)
    return NULL;
  b->client = c;
  fleet__list_init(&b->sched);
  uv_timer_init(c->loop, &b->timer);
  fleet__phase_end_init(&b->now, c->loop, batcher_on_now);
  c->batcher = b;
  return b;
}

/* ------------------------------------------------------------------------ */
/* The schedule                                                             */

/* Arms the timer for `at` (loop ms), or stops it for 0. A time already
 * past waits 1 ms, so that the timer never runs twice in one pass of the
 * loop's timers. */
static void batcher_arm_at(struct fleet__batcher_s *b, uint64_t at) {
  uint64_t now = uv_now(b->client->loop);

  b->due = at;
  if (at == 0) {
    uv_timer_stop(&b->timer);
    return;
  }
  uv_timer_start(&b->timer, batcher_on_timer, at > now ? at - now : 1, 0);
}

/* Arms the timer for the earliest item without a call in flight. O(items):
 * it runs once per tick and per reply, not per item. */
static void batcher_arm(struct fleet__batcher_s *b) {
  uint64_t at = 0;

  FLEET__LIST_FOREACH (n, next, &b->sched) {
    fleet__batch_item_t *it = FLEET__LIST_DATA(n, fleet__batch_item_t, node);
    if (it->call == NULL && !it->now && (at == 0 || it->due < at))
      at = it->due;
  }
  batcher_arm_at(b, at);
}

/* Puts `it` on the schedule (or keeps it there) with its kind and group.
 * At the tail: the items of a call go in the order they were scheduled
 * (the pool's dispatches are admitted in the order they were made). */
static void batcher_link(struct fleet__batcher_s *b, fleet__batch_item_t *it,
                         const fleet__batch_kind_t *kind, const void *group) {
  it->kind = kind;
  it->group = group;
  if (!it->linked) {
    fleet__list_insert_tail(&b->sched, &it->node);
    it->linked = 1;
  }
}

int fleet__batch_now(struct fleet__client_s *c, fleet__batch_item_t *it,
                     const fleet__batch_kind_t *kind, const void *group) {
  struct fleet__batcher_s *b = batcher_get(c);

  if (b == NULL)
    return FLEET_ENOMEM;
  batcher_link(b, it, kind, group);
  it->due = uv_now(c->loop);
  it->window = 0;
  it->now = 1;
  fleet__phase_end_arm(&b->now);
  return 0;
}

int fleet__batch_add(struct fleet__client_s *c, fleet__batch_item_t *it,
                     const fleet__batch_kind_t *kind, const void *group,
                     uint64_t due, uint64_t window) {
  struct fleet__batcher_s *b = batcher_get(c);

  if (b == NULL)
    return FLEET_ENOMEM;
  it->now = 0;
  batcher_link(b, it, kind, group);
  it->due = due;
  it->window = window;
  /* The timer stays armed for an earlier item; a later one is found when
   * it fires. */
  if (it->call == NULL && (b->due == 0 || due < b->due))
    batcher_arm_at(b, due);
  return 0;
}

/* Takes `it` off the schedule. */
static void batcher_unlink(fleet__batch_item_t *it) {
  if (!it->linked)
    return;
  fleet__list_remove(&it->node);
  it->linked = 0;
}

void fleet__batch_remove(struct fleet__client_s *c, fleet__batch_item_t *it) {
  if (it->call != NULL) {
    it->call->items[it->slot] = NULL;
    it->call = NULL;
  }
  /* A timer left armed for this item finds nothing due and re-arms. */
  if (c->batcher != NULL)
    batcher_unlink(it);
}

void fleet__batch_stats(const struct fleet__client_s *c, uint64_t *calls,
                        uint64_t *items) {
  *calls = c->batcher != NULL ? c->batcher->calls : 0;
  *items = c->batcher != NULL ? c->batcher->items : 0;
}

uint64_t fleet__batch_once(const struct fleet__client_s *c) {
  return c->batcher != NULL ? c->batcher->once : 0;
}

/* ------------------------------------------------------------------------ */
/* Calls                                                                    */

static fleet__batch_call_t *batcher_call_get(struct fleet__batcher_s *b,
                                             fleet__batch_item_t *first,
                                             uint32_t hslot, uint64_t now) {
  fleet__batch_call_t *call = b->pool;

  if (call != NULL)
    b->pool = call->next;
  else if ((call = malloc(sizeof(*call))) == NULL)
    return NULL;
  call->next = NULL;
  call->b = b;
  call->kind = first->kind;
  call->group = first->group;
  call->hslot = hslot;
  call->sent = now;
  call->n = 0;
  return call;
}

static void batcher_call_put(struct fleet__batcher_s *b,
                             fleet__batch_call_t *call) {
  call->next = b->pool;
  b->pool = call;
}

/* Tells every item still in `call` its result. Results may run user
 * callbacks that remove other items of the call: those read as NULL. */
static void batcher_call_results(fleet__batch_call_t *call, int status,
                                 const fleet__reply_t *reply) {
  const fleet__batch_kind_t *kind = call->kind;
  size_t i;

  size_t per = kind->item_reply != 0 ? kind->item_reply : 1;

  if (status == 0 && (reply->type != FLEET__REPLY_ARRAY ||
                      reply->nelem != kind->reply_head + call->n * per))
    status = FLEET_EPROTO;
  for (i = 0; i < call->n; i++) {
    fleet__batch_item_t *it = call->items[i];
    if (it == NULL)
      continue;
    call->items[i] = NULL;
    it->call = NULL;
    batcher_unlink(it);
    kind->done(it, status, status == 0 ? reply->elem : NULL,
               status == 0 ? &reply->elem[kind->reply_head + i * per] : NULL,
               call->sent);
  }
}

static void batcher_on_reply(void *arg, int status,
                             const fleet__reply_t *reply) {
  fleet__batch_call_t *call = arg;
  struct fleet__batcher_s *b = call->b;

  batcher_call_results(call, status, reply);
  batcher_call_put(b, call);
  if (b->closed == NULL)
    batcher_arm(b);
}

/* Grows the argument vectors to hold `nkeys` and `nargs`. */
static int batcher_reserve(struct fleet__batcher_s *b, size_t nkeys,
                           size_t nargs) {
  fleet_bytes_t *p;

  if (nkeys > b->keys_cap) {
    if ((p = realloc(b->keys, nkeys * sizeof(*p))) == NULL)
      return FLEET_ENOMEM;
    b->keys = p;
    b->keys_cap = nkeys;
  }
  if (nargs > b->args_cap) {
    if ((p = realloc(b->args, nargs * sizeof(*p))) == NULL)
      return FLEET_ENOMEM;
    b->args = p;
    b->args_cap = nargs;
  }
  return 0;
}

/* Whether the `n` items' args, filled from `args` on, `per` each, are all
 * the first item's bytes. */
static int batcher_args_same(const fleet_bytes_t *args, size_t per, size_t n) {
  size_t i, j;

  for (i = 1; i < n; i++)
    for (j = 0; j < per; j++) {
      const fleet_bytes_t *a = &args[j], *o = &args[i * per + j];

      if (a->len != o->len ||
          (a->len > 0 && memcmp(a->base, o->base, a->len) != 0))
        return 0;
    }
  return 1;
}

/* Sends `call`. On a synchronous error its items hear it as a failed call
 * (they are rescheduled by their `done`). */
static void batcher_send(struct fleet__batcher_s *b,
                         fleet__batch_call_t *call) {
  const fleet__batch_kind_t *k = call->kind;
  size_t nkeys = k->group_keys + call->n * k->item_keys;
  size_t nargs = k->group_args + call->n * k->item_args, i;
  int err = batcher_reserve(b, nkeys, nargs), once = 0;

  if (err == 0) {
    if (k->fill_group != NULL)
      k->fill_group(call->items[0], b->keys, b->args);
    for (i = 0; i < call->n; i++)
      k->fill(call->items[i], b->keys + k->group_keys + i * k->item_keys,
              b->args + k->group_args + i * k->item_args);
    if (k->args_once && call->n > 1 &&
        batcher_args_same(b->args + k->group_args, k->item_args, call->n)) {
      nargs = k->group_args + k->item_args;
      once = 1;
    }
    err = b->client->closing
              ? FLEET_ECLOSING
              : fleet__backend_call(b->client->be, k->op, b->keys, nkeys,
                                    b->args, nargs, batcher_on_reply, call);
  }
  if (err == 0) {
    b->calls++;
    b->items += call->n;
    b->once += (uint64_t)once;
    return;
  }
  batcher_call_results(call, err, NULL);
  batcher_call_put(b, call);
}

/* The hash slot of `it`'s first key when the backend is sharded (Redis
 * Cluster: the keys of one call must share a slot), else 0. Items whose
 * keys are only the group's share the group's slot. */
static int batcher_item_slot(struct fleet__batcher_s *b,
                             fleet__batch_item_t *it, uint32_t *out) {
  const fleet__batch_kind_t *k = it->kind;

  *out = 0;
  if (!b->client->be->sharded || k->item_keys == 0)
    return 0;
  if (batcher_reserve(b, k->item_keys, k->item_args) != 0)
    return FLEET_ENOMEM;
  k->fill(it, b->keys, b->args);
  *out = fleet__key_slot(b->keys[0].base, b->keys[0].len);
  return 0;
}

/* Finds the call being built for `it`'s kind, group and slot, or starts
 * one. NULL when out of memory. */
static fleet__batch_call_t *batcher_call_for(struct fleet__batcher_s *b,
                                             fleet__batch_call_t **open,
                                             fleet__batch_item_t *it,
                                             uint64_t now) {
  fleet__batch_call_t *call;
  uint32_t hslot;

  if (batcher_item_slot(b, it, &hslot) != 0)
    return NULL;
  for (call = *open; call != NULL; call = call->next)
    if (call->kind == it->kind && call->group == it->group &&
        call->hslot == hslot)
      return call;
  call = batcher_call_get(b, it, hslot, now);
  if (call != NULL) {
    call->next = *open;
    *open = call;
  }
  return call;
}

/* Takes `call` off the list of calls being built. */
static void batcher_call_close(fleet__batch_call_t **open,
                               fleet__batch_call_t *call) {
  fleet__batch_call_t **p = open;

  while (*p != call)
    p = &(*p)->next;
  *p = call->next;
  call->next = NULL;
}

/* A tick: every item due now or by `now` (or within its window) joins
 * the call of its kind and group; a full call is set aside and a new one
 * started. All go out once the schedule has been walked. */
static void batcher_tick(struct fleet__batcher_s *b) {
  uint64_t now = uv_now(b->client->loop);
  fleet__batch_call_t *open = NULL, *full = NULL, *call;
  FLEET__LIST_FOREACH (n, next, &b->sched) {
    fleet__batch_item_t *it = FLEET__LIST_DATA(n, fleet__batch_item_t, node);
    if (it->call != NULL || (!it->now && it->due > now + it->window))
      continue;
    if ((call = batcher_call_for(b, &open, it, now)) == NULL)
      break; /* out of memory: the rest wait for the next tick */
    /* Off the schedule while its call is out, so that the walks of the
     * schedule (batcher_arm at each reply, the next tick) pass only the
     * items that wait: 10 000 cron fires in flight made each reply walk
     * all of them. */
    batcher_unlink(it);
    it->call = call;
    it->now = 0;
    it->slot = call->n;
    call->items[call->n++] = it;
    if (call->n == it->kind->max_items) {
      batcher_call_close(&open, call);
      call->next = full;
      full = call;
    }
  }
  /* Sending may run `done` callbacks (a synchronous failure), which may
   * add or remove items: the schedule is not walked any more from here. */
  while (open != NULL || full != NULL) {
    fleet__batch_call_t **from = full != NULL ? &full : &open;
    call = *from;
    *from = call->next;
    call->next = NULL;
    batcher_send(b, call);
  }
}

static void batcher_on_timer(uv_timer_t *timer) {
  struct fleet__batcher_s *b =
      FLEET__CONTAINER_OF(timer, struct fleet__batcher_s, timer);

  b->due = 0;
  batcher_tick(b);
  batcher_arm(b);
}

/* The end of a loop phase with items due now: they go out, and the
 * backend writes them at once (the prepare phase is the last before the
 * loop blocks). */
static void batcher_now(struct fleet__batcher_s *b) {
  fleet__backend_t *be = b->client->be;

  fleet__phase_end_disarm(&b->now);
  batcher_tick(b);
  batcher_arm(b);
  if (be->vt->flush != NULL && !b->client->closing)
    be->vt->flush(be);
}

static void batcher_on_now(fleet__phase_end_t *pe, int in_prepare) {
  (void)in_prepare;
  batcher_now(FLEET__CONTAINER_OF(pe, struct fleet__batcher_s, now));
}

/* ------------------------------------------------------------------------ */
/* Close                                                                    */

static void batcher_on_closed(uv_handle_t *handle) {
  struct fleet__batcher_s *b = handle->data;

  if (--b->closes_left == 0)
    b->closed(b->client);
}

void fleet__batcher_close(struct fleet__client_s *c,
                          void (*closed)(struct fleet__client_s *c)) {
  struct fleet__batcher_s *b = c->batcher;

  if (b == NULL) {
    closed(c);
    return;
  }
  /* Items due now (a closing handle's release) hear FLEET_ECLOSING, so
   * that nothing waits for a phase end that will not come. */
  if (fleet__phase_end_armed(&b->now))
    batcher_now(b);
  b->closed = closed;
  b->closes_left = 3;
  b->timer.data = b->now.check.data = b->now.prepare.data = b;
  uv_close((uv_handle_t *)&b->timer, batcher_on_closed);
  uv_close((uv_handle_t *)&b->now.check, batcher_on_closed);
  uv_close((uv_handle_t *)&b->now.prepare, batcher_on_closed);
}

void fleet__batcher_free(struct fleet__client_s *c) {
  struct fleet__batcher_s *b = c->batcher;
  fleet__batch_call_t *call;

  if (b == NULL)
    return;
  while ((call = b->pool) != NULL) {
    b->pool = call->next;
    free(call);
  }
  free(b->keys);
  free(b->args);
  free(b);
  c->batcher = NULL;
}
