/* subs.c -- the subscriber list of the Redis and cluster backends. */
#include "subs.h"

#include <stdlib.h>

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
