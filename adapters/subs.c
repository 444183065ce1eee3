/* subs.c -- the one subscriber list of the adapters (subs.h). */
#include "subs.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

void fleet__subs_init(fleet__subs_t *l, void *owner) {
  memset(l, 0, sizeof(*l));
  fleet__list_init(&l->all);
  l->owner = owner;
}

fleet__sub_t *fleet__subs_add(fleet__subs_t *l, const char *channel, size_t len,
                              fleet__message_cb cb, void *arg) {
  fleet__sub_t *s = calloc(1, sizeof(*s));

  if (s == NULL || (s->channel = fleet__memdup(channel, len)) == NULL) {
    free(s);
    return NULL;
  }
  s->list = l;
  s->len = len;
  s->cb = cb;
  s->arg = arg;
  s->refs = 1;
  fleet__list_init(&s->peers);
  fleet__list_insert_head(&l->all, &s->node);
  return s;
}

void fleet__sub_ref(fleet__sub_t *s) {
  s->refs++;
}

void fleet__sub_unref(fleet__sub_t *s) {
  if (--s->refs > 0)
    return;
  free(s->channel);
  free(s);
}

/* Takes `s` off the list and drops the list's reference. */
static void subs_let_go(fleet__sub_t *s) {
  fleet__list_remove(&s->node);
  fleet__sub_unref(s);
}

void fleet__subs_drop(fleet__subs_t *l, fleet__sub_t *s) {
  if (s == NULL || s->cb == NULL)
    return;
  s->cb = NULL;
  if (l->dispatching > 0)
    l->dead++;
  else
    subs_let_go(s);
}

void fleet__subs_enter(fleet__subs_t *l) {
  l->dispatching++;
}

void fleet__subs_leave(fleet__subs_t *l) {
  fleet__sub_t *s;

  if (--l->dispatching > 0 || l->dead == 0)
    return;
  FLEET__SUBS_FOREACH(s, l) {
    if (s->cb == NULL)
      subs_let_go(s);
  }
  l->dead = 0;
}

void fleet__subs_free(fleet__subs_t *l) {
  fleet__sub_t *s;

  FLEET__SUBS_FOREACH(s, l) {
    subs_let_go(s);
  }
  l->dead = 0;
}

int fleet__sub_is(const fleet__sub_t *s, const void *where, const char *channel,
                  size_t len) {
  return s->cb != NULL && s->where == where && s->len == len &&
         memcmp(s->channel, channel, len) == 0;
}

int fleet__subs_used(const fleet__subs_t *l, const void *where,
                     const fleet__sub_t *except) {
  const fleet__list_t *n;

  for (n = l->all.next; n != &l->all; n = n->next) {
    const fleet__sub_t *t = FLEET__LIST_DATA(n, fleet__sub_t, node);
    if (t != except && fleet__sub_is(t, where, except->channel, except->len))
      return 1;
  }
  return 0;
}

int fleet__subs_first(const fleet__subs_t *l, const fleet__sub_t *s) {
  const fleet__list_t *n;

  for (n = l->all.next; n != &s->node; n = n->next) {
    const fleet__sub_t *t = FLEET__LIST_DATA(n, fleet__sub_t, node);
    if (fleet__sub_is(t, s->where, s->channel, s->len))
      return 0;
  }
  return 1;
}

/* The dispatch loop: without a message (`live` 0) it tells the entries of
 * the channel that are not yet live that they are (status
 * FLEET_ECONNLOST), else the live ones hear the message. It stops when the
 * backend starts closing. */
static void subs_dispatch(fleet__subs_t *l, const void *where,
                          const char *channel, size_t len, int live,
                          const char *msg, size_t msg_len) {
  fleet__sub_t *s;

  fleet__subs_enter(l);
  FLEET__SUBS_FOREACH(s, l) {
    if (l->closing)
      break;
    if (s->live != live || !fleet__sub_is(s, where, channel, len))
      continue;
    s->live = 1;
    s->cb(s->arg, live ? 0 : FLEET_ECONNLOST, msg, msg_len);
  }
  fleet__subs_leave(l);
}

void fleet__subs_live(fleet__subs_t *l, const void *where, const char *channel,
                      size_t len) {
  subs_dispatch(l, where, channel, len, 0, NULL, 0);
}

void fleet__subs_message(fleet__subs_t *l, const void *where,
                         const char *channel, size_t len, const char *msg,
                         size_t msg_len) {
  subs_dispatch(l, where, channel, len, 1, msg, msg_len);
}
