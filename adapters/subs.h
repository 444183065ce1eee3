/* subs.h -- the one subscriber list of the adapters: one entry per
 * subscribe() call of the backend interface (adapters/backend.h), the
 * fleet__sub_t the caller holds until it unsubscribes.
 *
 * A list is a fleet__subs_t in the backend; its entries are kept newest
 * first. Message callbacks run inside fleet__subs_enter() ...
 * fleet__subs_leave() (the dispatch loops below do so): an entry
 * unsubscribed meanwhile keeps its place with `cb` NULL until the last
 * callback returned, so that a callback may unsubscribe anyone, itself
 * included, and subscribe more (a new entry is not visited by the loop
 * that runs). An entry is freed when its last reference goes: the list
 * holds one, and an adapter may take more (the memory backend does, for
 * each message queued for it).
 *
 * The Redis front-ends (redis.c, cluster.c, byo.c) and the memory backend
 * all use it; `where` says, in each adapter's terms, where the entry is
 * subscribed. */
#ifndef FLEET_ADAPTERS_SUBS_H
#define FLEET_ADAPTERS_SUBS_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "common/list.h"

typedef struct fleet__subs_s fleet__subs_t;

struct fleet__sub_s {
  fleet__list_t node; /* on its list's `all` */
  fleet__subs_t *list;
  char *channel; /* a copy */
  size_t len;
  fleet__message_cb cb; /* NULL once unsubscribed */
  void *arg;
  /* The adapter's: where the channel is subscribed (cluster: its node;
   * byo: its channel record; memory: its channel's entry in the store),
   * NULL when nowhere. */
  void *where;
  /* The memory backend's: on the subscribers of its channel, every peer
   * backend's included. */
  fleet__list_t peers;
  unsigned refs;
  uint16_t slot; /* cluster: the channel's slot */
  int live;      /* heard that its channel is live (subscribed) */
};

struct fleet__subs_s {
  fleet__list_t all; /* the entries, newest first */
  void *owner;       /* the backend */
  int dispatching;   /* > 0 while message callbacks run */
  int dead;          /* unsubscribed entries waiting for the loop's end */
  int closing;       /* the backend closes: loops stop calling back */
};

/* Each entry `s` (a fleet__sub_t *, declared by the caller) of list `l`,
 * unsubscribed ones included. */
#define FLEET__SUBS_FOREACH(s, l)                                              \
  FLEET__LIST_FOREACH_DATA (s, &(l)->all, fleet__sub_t, node)

/* Makes `l` an empty list of backend `owner`. */
void fleet__subs_init(fleet__subs_t *l, void *owner);

/* A new entry of `l` for `channel` (copied) and its callback, with one
 * reference (the list's); NULL when out of memory. */
fleet__sub_t *fleet__subs_add(fleet__subs_t *l, const char *channel, size_t len,
                              fleet__message_cb cb, void *arg);

/* Unsubscribes `s` (nothing when it already is): its callback runs no
 * more; the list lets go of it now, or after the running loop. */
void fleet__subs_drop(fleet__subs_t *l, fleet__sub_t *s);

/* Takes one more reference to `s`, or gives one back (the last frees it). */
void fleet__sub_ref(fleet__sub_t *s);
void fleet__sub_unref(fleet__sub_t *s);

/* Around message callbacks: while entered, unsubscribed entries stay on the
 * list; the last leave lets go of them. */
void fleet__subs_enter(fleet__subs_t *l);
void fleet__subs_leave(fleet__subs_t *l);

/* Lets go of every entry (the backend is freed). */
void fleet__subs_free(fleet__subs_t *l);

/* Whether `s` is subscribed to `channel` (of `len` bytes) at `where`. */
int fleet__sub_is(const fleet__sub_t *s, const void *where, const char *channel,
                  size_t len);

/* Whether a subscribed entry other than `except` has `except`'s channel at
 * `where`: the channel must stay subscribed there. */
int fleet__subs_used(const fleet__subs_t *l, const void *where,
                     const fleet__sub_t *except);

/* Whether `s` is the first (newest) subscribed entry of its channel: the
 * one that subscribes the channel for all. */
int fleet__subs_first(const fleet__subs_t *l, const fleet__sub_t *s);

/* The server confirmed `channel` at `where`: each subscribed entry of it
 * not yet live becomes so and hears FLEET_ECONNLOST (it may have missed
 * messages before), so that it re-reads what it waits on. */
void fleet__subs_live(fleet__subs_t *l, const void *where, const char *channel,
                      size_t len);

/* A message on `channel` at `where`: every live entry of it hears it. */
void fleet__subs_message(fleet__subs_t *l, const void *where,
                         const char *channel, size_t len, const char *msg,
                         size_t msg_len);

#endif /* FLEET_ADAPTERS_SUBS_H */
