/* cron_sched_def.c -- a cron scheduler's definitions as the registry
 * holds them: read from a CRON_LIST reply, shown to the user, ordered by
 * key, and the tag of their occurrences (docs/cron.md). */
#include <stdlib.h>
#include <string.h>

#include "cron_sched_int.h"

static const char *const catch_up_names[] =
    FLEET__NAMES(FLEET_CRON_CATCH_UP_MAP);

const char *fleet_cron_catch_up_name(int policy) {
  return policy >= 0 && (size_t)policy < FLEET__ARRAY_SIZE(catch_up_names)
             ? catch_up_names[policy]
             : NULL;
}

int fleet_cron_catch_up_parse(const char *name) {
  const char *n;
  int i;

  for (i = 0; name != NULL && (n = fleet_cron_catch_up_name(i)) != NULL; i++)
    if (strcmp(name, n) == 0)
      return i;
  return -1;
}

int fleet__cron_def_tag(fleet__cron_sched_t *s, const char *key, size_t key_len,
                        const char *queue, fleet__key_t *tag) {
  struct fleet__client_s *c = s->base.client;
  char *name;
  int err;

  if (queue != NULL && queue[0] != '\0')
    return fleet__key_build(tag, c->prefix, c->prefix_len, queue, strlen(queue),
                            NULL);
  if ((name = malloc(s->ns_len + 1 + key_len)) == NULL)
    return FLEET_ENOMEM;
  memcpy(name, s->ns, s->ns_len);
  name[s->ns_len] = ':';
  memcpy(name + s->ns_len + 1, key, key_len);
  err = fleet__key_build(tag, c->prefix, c->prefix_len, name,
                         s->ns_len + 1 + key_len, NULL);
  free(name);
  return err;
}

void fleet__cron_def_unref(fleet__cron_def_t *d) {
  if (d == NULL || --d->refs > 0)
    return;
  free(d->key);
  free(d->expr);
  free(d->tz);
  free(d->queue);
  free(d->pool);
  free(d->payload);
  free(d->meta);
  fleet_cron_free(d->cron);
  fleet__key_free(&d->tag);
  fleet__key_free(&d->occ_key);
  free(d);
}

static int reply_eq(const fleet__reply_t *r, const char *s) {
  size_t n = strlen(s);

  return r->type == FLEET__REPLY_STR && r->len == n &&
         memcmp(r->str, s, n) == 0;
}

/* A decimal integer in a string reply. */
static int reply_num(const fleet__reply_t *r, int64_t *out) {
  int64_t v = 0;
  size_t i = 0;
  int neg = 0;

  if (r->type == FLEET__REPLY_INT) {
    *out = r->integer;
    return 0;
  }
  if (r->type != FLEET__REPLY_STR || r->len == 0 || r->len > 19)
    return FLEET_EPROTO;
  if (r->str[0] == '-') {
    neg = 1;
    i = 1;
  }
  if (i == r->len)
    return FLEET_EPROTO;
  for (; i < r->len; i++) {
    if (r->str[i] < '0' || r->str[i] > '9')
      return FLEET_EPROTO;
    v = v * 10 + (r->str[i] - '0');
  }
  *out = neg ? -v : v;
  return 0;
}

fleet__cron_def_t *fleet__cron_def_parse(const fleet__reply_t *key,
                                         const fleet__reply_t *fields,
                                         const fleet__reply_t *last, int *err) {
  fleet__cron_def_t *d;
  size_t i;
  int64_t v;
  int bad = 0;

  *err = FLEET_EPROTO;
  if (key->type != FLEET__REPLY_STR || key->len == 0 ||
      fields->type != FLEET__REPLY_ARRAY || fields->nelem % 2 != 0)
    return NULL;
  if ((d = calloc(1, sizeof(*d))) == NULL) {
    *err = FLEET_ENOMEM;
    return NULL;
  }
  d->refs = 1;
  d->last_fire_ms = -1;
  d->next = -1;
  d->catch_up_max = 10;
  d->catch_up_window_ms = 3600000;
  d->key = fleet__memdup(key->str, key->len);
  d->key_len = key->len;
  for (i = 0; i + 1 < fields->nelem && !bad; i += 2) {
    const fleet__reply_t *f = &fields->elem[i], *val = &fields->elem[i + 1];
    char **dst = NULL;
    size_t *dst_len = NULL;

    if (val->type != FLEET__REPLY_STR) {
      bad = 1;
      break;
    }
    if (reply_eq(f, "expr"))
      dst = &d->expr;
    else if (reply_eq(f, "tz"))
      dst = &d->tz;
    else if (reply_eq(f, "queue"))
      dst = &d->queue;
    else if (reply_eq(f, "pool"))
      dst = &d->pool;
    else if (reply_eq(f, "payload"))
      dst = &d->payload, dst_len = &d->payload_len;
    else if (reply_eq(f, "meta"))
      dst = &d->meta, dst_len = &d->meta_len;
    else if (reply_eq(f, "catch_up")) {
      int p = 0;
      char name[16];

      if (val->len >= sizeof(name)) {
        bad = 1;
        break;
      }
      memcpy(name, val->str, val->len);
      name[val->len] = '\0';
      p = fleet_cron_catch_up_parse(name);
      if (p < 0)
        bad = 1;
      d->catch_up = p;
    } else if (reply_eq(f, "enabled")) {
      d->enabled = reply_eq(val, "1");
    } else {
      if (reply_num(val, &v) != 0) {
        bad = 1;
        break;
      }
      if (reply_eq(f, "catch_up_max"))
        d->catch_up_max = (uint32_t)v;
      else if (reply_eq(f, "catch_up_window"))
        d->catch_up_window_ms = (uint64_t)v;
      else if (reply_eq(f, "created"))
        d->created_ms = v;
      else if (reply_eq(f, "updated"))
        d->updated_ms = v;
      else if (reply_eq(f, "from"))
        d->from_ms = v;
      else if (reply_eq(f, "start"))
        d->start_ms = v;
      else if (reply_eq(f, "end"))
        d->end_ms = v;
      else if (reply_eq(f, "max_fires"))
        d->max_fires = (uint64_t)v;
      else if (reply_eq(f, "fired"))
        d->fired = (uint64_t)v;
      else if (reply_eq(f, "done"))
        d->done_ms = v;
    }
    if (dst != NULL) {
      free(*dst);
      *dst = fleet__memdup(val->str, val->len);
      if (*dst == NULL) {
        *err = FLEET_ENOMEM;
        bad = 1;
      }
      if (dst_len != NULL)
        *dst_len = val->len;
    }
  }
  if (!bad && last->type == FLEET__REPLY_STR && last->len > 0) {
    /* "<fire_ms>:<token>:<node>" */
    const char *p = last->str, *end = last->str + last->len;
    int64_t f = 0, t = 0;

    while (p < end && *p >= '0' && *p <= '9')
      f = f * 10 + (*p++ - '0');
    if (p < end && *p == ':')
      p++;
    while (p < end && *p >= '0' && *p <= '9')
      t = t * 10 + (*p++ - '0');
    d->last_fire_ms = f;
    d->last_token = (uint64_t)t;
  }
  if (!bad && (d->key == NULL || d->expr == NULL))
    bad = 1;
  if (!bad && d->tz == NULL && (d->tz = fleet__strdup("")) == NULL)
    bad = 1;
  if (!bad && d->queue == NULL && (d->queue = fleet__strdup("")) == NULL)
    bad = 1;
  if (!bad && d->pool == NULL && (d->pool = fleet__strdup("")) == NULL)
    bad = 1;
  if (bad) {
    fleet__cron_def_unref(d);
    return NULL;
  }
  *err = 0;
  return d;
}

void fleet__cron_def_view(const fleet__cron_def_t *d, int64_t now_ms,
                          fleet_cron_def_t *out) {
  fleet_cron_t *own = NULL;
  const fleet_cron_t *cron = d->cron;
  int64_t next;

  memset(out, 0, sizeof(*out));
  out->key = d->key;
  out->expr = d->expr;
  out->tz = d->tz;
  out->payload.base = d->payload != NULL ? d->payload : "";
  out->payload.len = d->payload_len;
  out->queue = d->queue[0] != '\0' ? d->queue : NULL;
  out->pool = d->pool[0] != '\0' ? d->pool : NULL;
  out->catch_up = (fleet_cron_catch_up_t)d->catch_up;
  out->catch_up_max = d->catch_up_max;
  out->catch_up_window_ms = d->catch_up_window_ms;
  out->metadata.base = d->meta != NULL ? d->meta : "";
  out->metadata.len = d->meta_len;
  out->disabled = !d->enabled;
  out->created_ms = d->created_ms;
  out->updated_ms = d->updated_ms;
  out->from_ms = d->from_ms;
  out->last_fire_ms = d->last_fire_ms;
  out->last_token = d->last_token;
  out->start_ms = d->start_ms;
  out->end_ms = d->end_ms;
  out->max_fires = d->max_fires;
  out->fires = d->fired;
  /* (At its limit it is finished: the hint of the count written after
   * the last fire says so before a later claim answers it.) */
  out->finished =
      d->done_ms > 0 || (d->max_fires > 0 && d->fired >= d->max_fires);
  out->not_started = d->start_ms > 0 && now_ms < d->start_ms;
  out->next_due_ms = -1;
  if (cron == NULL && fleet_cron_parse(d->expr, d->tz[0] != '\0' ? d->tz : NULL,
                                       &own, NULL, 0) == 0)
    cron = own;
  if (cron != NULL && !out->finished &&
      fleet__cron_def_next(d, cron, now_ms, &next) == 0)
    out->next_due_ms = d->enabled ? next : -1;
  else if (cron != NULL && !out->finished)
    out->finished = 1; /* no occurrence left before the end */
  fleet_cron_free(own);
}

int fleet__cron_def_next(const fleet__cron_def_t *d, const fleet_cron_t *cron,
                         int64_t after_ms, int64_t *next_ms) {
  int err;

  if (d->done_ms > 0)
    return FLEET_ENOTFOUND;
  if (d->start_ms > 0 && after_ms < d->start_ms - 1)
    after_ms = d->start_ms - 1;
  if ((err = fleet_cron_next(cron, after_ms, next_ms)) != 0)
    return err;
  return d->end_ms > 0 && *next_ms > d->end_ms ? FLEET_ENOTFOUND : 0;
}

int fleet__cron_def_cmp(const void *a, const void *b) {
  const fleet__cron_def_t *x = *(fleet__cron_def_t *const *)a;
  const fleet__cron_def_t *y = *(fleet__cron_def_t *const *)b;
  size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
  int c = memcmp(x->key, y->key, n);

  if (c != 0)
    return c;
  return x->key_len < y->key_len ? -1 : x->key_len > y->key_len;
}
