/* subs.h -- the subscriber list of the Redis and cluster backends: one
 * entry per fleet__backend_t subscribe() call, kept in a singly linked
 * list. An unsubscribed entry keeps its place (cb NULL) until no message
 * callback runs, so that a callback may unsubscribe anyone. */
#ifndef FLEET_REDIS_SUBS_H
#define FLEET_REDIS_SUBS_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

struct cluster_node_s;

struct fleet__sub_s {
  fleet__sub_t *next;
  char *channel;
  size_t len;
  uint16_t slot;               /* cluster: the channel's slot */
  struct cluster_node_s *node; /* cluster: where it is subscribed, or NULL */
  fleet__message_cb cb;        /* NULL once unsubscribed */
  void *arg;
  int active; /* the server confirmed the subscription */
};

/* A new entry for `channel` (copied) and its callback, not yet in a list;
 * NULL when out of memory. */
fleet__sub_t *fleet__subs_new(const char *channel, size_t len,
                              fleet__message_cb cb, void *arg);

/* Frees the unsubscribed entries of the list at *head, unless message
 * callbacks run (`dispatching` > 0) or none is waiting (*dead == 0);
 * then *dead is 0. */
void fleet__subs_free_dead(fleet__sub_t **head, int dispatching, int *dead);

#endif /* FLEET_REDIS_SUBS_H */
