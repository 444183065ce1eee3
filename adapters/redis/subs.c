/* subs.c -- the subscriber list of the Redis and cluster backends. */
#include "subs.h"

#include <stdlib.h>

#include "common/util.h"

fleet__sub_t *fleet__subs_new(const char *channel, size_t len,
                              fleet__message_cb cb, void *arg) {
  fleet__sub_t *s = calloc(1, sizeof(*s));

  if (s == NULL || (s->channel = fleet__memdup(channel, len)) == NULL) {
    free(s);
    return NULL;
  }
  s->len = len;
  s->cb = cb;
  s->arg = arg;
  return s;
}

void fleet__subs_free_dead(fleet__sub_t **head, int dispatching, int *dead) {
  fleet__sub_t **pp = head;

  if (dispatching > 0 || *dead == 0)
    return;
  while (*pp != NULL) {
    fleet__sub_t *s = *pp;
    if (s->cb == NULL) {
      *pp = s->next;
      free(s->channel);
      free(s);
    } else {
      pp = &s->next;
    }
  }
  *dead = 0;
}
