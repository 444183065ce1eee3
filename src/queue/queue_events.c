/* queue_events.c -- a queue handle's subscription to its queue's events
 * (docs/queue.md, "Progress and events"): the channel "<tag>:events", on
 * which the scripts publish (lib/queue_life.lua) only while a subscriber
 * holds the lease, the field `events` of the queue's limits hash. The
 * lease is taken when the subscription is live and renewed on a timer;
 * nobody gives it back: it runs out. */
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"

/* The lease, and how often it is renewed: a third of it, so that two
 * renewals may be lost before an event is. */
#define QUEUE_EVENTS_LEASE_MS 15000
#define QUEUE_EVENTS_RENEW_MS 5000

static const char *const queue_event_names[] = {
#define XX(name, str) str,
    FLEET_EVENT_TYPE_MAP(XX)
#undef XX
};

const char *fleet_event_type_name(fleet_event_type_t type) {
  return FLEET__NAME_AT(queue_event_names, type);
}

/* ------------------------------------------------------------------------ */
/* The lease                                                                */

/* The lease's reply: nobody waits for it; a failure reaches the error
 * callback. */
static void queue_events_on_lease(fleet__req_t *r, int status,
                                  const fleet__reply_t *reply) {
  fleet__handle_t *h = r->handle;

  (void)reply;
  fleet__req_done(r);
  if (status != 0 && status != FLEET_ECANCELED)
    fleet__handle_error(h, status);
}

static const fleet__call_t queue_events_lease_call = {
    "queue.events", FLEET__OP_QUEUE_EVENTS, queue_events_on_lease, NULL};

static void queue_events_lease(struct fleet__queue_s *q) {
  int err;

  if (q->ev_sub == NULL || q->base.closing)
    return;
  err = fleet__args_begin(&q->args, 1, 1);
  if (err == 0) {
    fleet__args_u64(&q->args, QUEUE_EVENTS_LEASE_MS);
    err = fleet__queue_call(q, &queue_events_lease_call, NULL, NULL);
  }
  if (err != 0)
    fleet__handle_error(&q->base, err);
}

static void queue_events_on_timer(uv_timer_t *timer) {
  queue_events_lease(
      FLEET__CONTAINER_OF(timer, struct fleet__queue_s, ev_timer));
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */

/* Reads one field of an event, up to its NUL, at `*p`; moves past it.
 * Returns 0 or FLEET_EPROTO. */
static int queue_event_field(const char **p, const char *end,
                             fleet_bytes_t *out) {
  const char *z = *p < end ? memchr(*p, '\0', (size_t)(end - *p)) : NULL;

  if (z == NULL)
    return FLEET_EPROTO;
  out->base = *p;
  out->len = (size_t)(z - *p);
  *p = z + 1;
  return 0;
}

/* A decimal field. Returns 0 or FLEET_EPROTO. */
static int queue_event_num(const char **p, const char *end, uint64_t *out) {
  fleet_bytes_t f;
  uint64_t v = 0;
  size_t i;

  if (queue_event_field(p, end, &f) != 0 || f.len == 0 || f.len > 19)
    return FLEET_EPROTO;
  for (i = 0; i < f.len; i++) {
    unsigned d = (unsigned)(((const char *)f.base)[i] - '0');
    if (d > 9)
      return FLEET_EPROTO;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* Reads the event at `*p` ("<kind>\0<id>\0<time_ms>\0<num>\0<#data>\0
 * <data>", lib/queue_life.lua) into `ev`; moves past it. Returns 0 or
 * FLEET_EPROTO. */
static int queue_event_read(const char **p, const char *end,
                            fleet_queue_event_t *ev) {
  fleet_bytes_t kind, id;
  uint64_t num, len;
  size_t t, ntypes = sizeof(queue_event_names) / sizeof(*queue_event_names);

  if (queue_event_field(p, end, &kind) != 0 ||
      queue_event_field(p, end, &id) != 0 || id.len == 0 ||
      queue_event_num(p, end, &ev->time_ms) != 0 ||
      queue_event_num(p, end, &num) != 0 || num > UINT32_MAX ||
      queue_event_num(p, end, &len) != 0 || len > (uint64_t)(end - *p))
    return FLEET_EPROTO;
  for (t = 0; t < ntypes; t++)
    if (strlen(queue_event_names[t]) == kind.len &&
        memcmp(queue_event_names[t], kind.base, kind.len) == 0)
      break;
  if (t == ntypes)
    return FLEET_EPROTO;
  ev->type = (fleet_event_type_t)t;
  ev->id = id.base; /* NUL-terminated: the field's end */
  ev->id_len = id.len;
  ev->value = (uint32_t)num;
  ev->data.base = *p;
  ev->data.len = (size_t)len;
  *p += len;
  return 0;
}

/* A message on the events channel (one or more events), or the notice
 * that the subscription is live: then the lease is taken at once. A
 * message fleet cannot read reaches the error callback. */
static void queue_events_on_message(void *arg, int status, const char *payload,
                                    size_t len) {
  struct fleet__queue_s *q = arg;
  const char *p = payload, *end = payload + len;
  fleet_queue_event_t ev;

  if (payload == NULL) {
    queue_events_lease(q);
    q->ev_cb((fleet_queue_t *)q->base.pub, status, NULL, q->ev_ud);
    return;
  }
  while (p < end && q->ev_sub != NULL) {
    memset(&ev, 0, sizeof(ev));
    if (queue_event_read(&p, end, &ev) != 0) {
      fleet__handle_error(&q->base, FLEET_EPROTO);
      return;
    }
    if (q->ev_job != NULL &&
        (ev.id_len != q->ev_job_len || memcmp(ev.id, q->ev_job, ev.id_len)))
      continue;
    q->ev_cb((fleet_queue_t *)q->base.pub, 0, &ev, q->ev_ud);
  }
}

/* ------------------------------------------------------------------------ */
/* Start and stop                                                           */

int fleet__queue_events_start(fleet_queue_t *pub, const char *job_id,
                              fleet_queue_event_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  size_t id_len = 0;
  char *job = NULL;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (job_id != NULL &&
      (err = fleet__str_check(job_id, FLEET_JOB_ID_MAX, &id_len)) != 0)
    return err;
  if (q->ev_sub != NULL)
    return FLEET_EALREADY;
  if (q->ev_channel.base == NULL &&
      fleet__key_build(&q->ev_channel, q->base.client->prefix,
                       q->base.client->prefix_len, q->name, strlen(q->name),
                       "events") != 0)
    return FLEET_ENOMEM;
  if (job_id != NULL && (job = fleet__memdup(job_id, id_len)) == NULL)
    return FLEET_ENOMEM;
  free(q->ev_job);
  q->ev_job = job;
  q->ev_job_len = id_len;
  q->ev_cb = cb;
  q->ev_ud = user_data;
  err = fleet__handle_subscribe(&q->base, q->ev_channel.base, q->ev_channel.len,
                                queue_events_on_message, q, &q->ev_sub);
  if (err != 0)
    return err;
  if (!q->ev_timer_on) {
    fleet__handle_timer_init(&q->base, &q->ev_timer);
    q->ev_timer_on = 1;
  }
  uv_timer_start(&q->ev_timer, queue_events_on_timer, QUEUE_EVENTS_RENEW_MS,
                 QUEUE_EVENTS_RENEW_MS);
  return 0;
}

int fleet__queue_events_stop(fleet_queue_t *pub) {
  struct fleet__queue_s *q =
      (struct fleet__queue_s *)fleet__handle_of(pub, FLEET_HANDLE_QUEUE);

  if (q == NULL)
    return FLEET_EINVAL;
  if (q->ev_sub == NULL)
    return FLEET_EALREADY;
  fleet__handle_unsubscribe(&q->base, &q->ev_sub);
  uv_timer_stop(&q->ev_timer);
  return 0;
}
