/* queue_flow.c -- flow control's calls: setting and reading a queue's
 * limits, holding its claims, a group's weight and the list of groups
 * (the ops QUEUE_LIMITS and QUEUE_GROUPS: queue_limits.lua and
 * queue_groups.lua; the claim scripts apply the limits, see
 * lib/queue_claim.lua and docs/queue.md, "Flow control"), each with its
 * descriptor, reply reader and fail hook. */
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"

/* ------------------------------------------------------------------------ */
/* Set, hold, weight: a status                                              */

static const fleet__call_t flow_set_call = {
    "queue.set_limits", FLEET__OP_QUEUE_LIMITS, fleet__queue_status_reply,
    fleet__call_fail_status};

/* Whether a rate pair (max per window) is one fleet takes: both 0, or a
 * max and a window in range. */
static int flow_rate_ok(uint32_t max, uint32_t ms) {
  if (max == 0 && ms == 0)
    return 1;
  return max > 0 && ms > 0 && max <= FLEET_LIMIT_RATE_MAX &&
         ms <= FLEET_LIMIT_WINDOW_MAX_MS;
}

int fleet__queue_set_limits(fleet_queue_t *pub,
                            const fleet_queue_limits_t *limits,
                            fleet_status_cb cb, void *user_data) {
  struct fleet__queue_s *q;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (limits == NULL)
    return fleet__queue_call_args(pub, &flow_set_call, (fleet__fn_t)cb,
                                  user_data, "clear", NULL, 0);
  if (!flow_rate_ok(limits->rate_max, limits->rate_ms) ||
      !flow_rate_ok(limits->group_rate_max, limits->group_rate_ms) ||
      limits->concurrency > FLEET_LIMIT_RATE_MAX ||
      limits->group_concurrency > FLEET_LIMIT_RATE_MAX ||
      limits->group_turn > FLEET_QUEUE_BATCH_MAX)
    return FLEET_EINVAL;
  {
    uint64_t v[7] = {limits->rate_max,       limits->rate_ms,
                     limits->group_rate_max, limits->group_rate_ms,
                     limits->concurrency,    limits->group_concurrency,
                     limits->group_turn};
    return fleet__queue_call_args(pub, &flow_set_call, (fleet__fn_t)cb,
                                  user_data, "set", v, 7);
  }
}

/* Sends QUEUE_LIMITS with `action` and the strings a, b (b may be NULL). */
static int flow_call(fleet_queue_t *pub, const fleet__call_t *call,
                     fleet__fn_t cb, void *user_data, const char *action,
                     const char *a, const char *b) {
  struct fleet__queue_s *q;
  int err;

  if ((q = fleet__queue_enter(pub, cb != NULL, &err)) == NULL)
    return err;
  if (fleet__args_begin(&q->args, 3, 0) != 0)
    return FLEET_ENOMEM;
  fleet__args_str(&q->args, action);
  fleet__args_str(&q->args, a);
  if (b != NULL)
    fleet__args_str(&q->args, b);
  return fleet__queue_call(q, call, cb, user_data);
}

int fleet__queue_hold(fleet_queue_t *pub, const char *group, uint32_t wait_ms,
                      fleet_status_cb cb, void *user_data) {
  char ms[24];
  int err;

  if (pub == NULL || cb == NULL || wait_ms == 0 ||
      wait_ms > FLEET_LIMIT_WINDOW_MAX_MS)
    return FLEET_EINVAL;
  if (group != NULL &&
      (err = fleet__str_check(group, FLEET_JOB_GROUP_MAX, NULL)) != 0)
    return err;
  fleet__queue_dec(ms, wait_ms);
  return flow_call(pub, &flow_set_call, (fleet__fn_t)cb, user_data, "hold", ms,
                   group != NULL ? group : "");
}

int fleet__queue_set_group_weight(fleet_queue_t *pub, const char *group,
                                  uint32_t weight, fleet_status_cb cb,
                                  void *user_data) {
  char w[24];
  int err;

  if (pub == NULL || cb == NULL || weight == 0 ||
      weight > FLEET_GROUP_WEIGHT_MAX)
    return FLEET_EINVAL;
  if ((err = fleet__str_check(group, FLEET_JOB_GROUP_MAX, NULL)) != 0)
    return err;
  fleet__queue_dec(w, weight);
  return flow_call(pub, &flow_set_call, (fleet__fn_t)cb, user_data, "weight",
                   group, w);
}

/* ------------------------------------------------------------------------ */
/* Reading the limits                                                       */

static void flow_limits_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_limits_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                   NULL, NULL, req->user_data);
}

/* {rate_max, rate_ms, grate_max, grate_ms, conc, gconc, gturn, rate_used,
 * running, groups, held_until_ms}. */
static void flow_limits_reply(fleet__req_t *base, int status,
                              const fleet__reply_t *r) {
  fleet_queue_limits_t limits;
  fleet_queue_flow_t flow;
  uint64_t v[11];
  size_t i;
  int rc = 0;

  if (fleet__call_failed(base, status))
    return;
  if (r->type != FLEET__REPLY_ARRAY || r->nelem != 11)
    rc = FLEET_EPROTO;
  for (i = 0; rc == 0 && i < 11; i++)
    if (fleet__reply_u64(&r->elem[i], &v[i]) != 0 ||
        (i < 7 && v[i] > UINT32_MAX))
      rc = FLEET_EPROTO;
  if (!fleet__call_done(base, rc))
    return;
  limits.rate_max = (uint32_t)v[0];
  limits.rate_ms = (uint32_t)v[1];
  limits.group_rate_max = (uint32_t)v[2];
  limits.group_rate_ms = (uint32_t)v[3];
  limits.concurrency = (uint32_t)v[4];
  limits.group_concurrency = (uint32_t)v[5];
  limits.group_turn = (uint32_t)v[6];
  flow.rate_used = v[7];
  flow.running = v[8];
  flow.groups = v[9];
  flow.held_until_ms = v[10];
  ((fleet_queue_limits_cb)base->cb)((fleet_queue_t *)base->handle->pub, 0,
                                    &limits, &flow, base->user_data);
}

static const fleet__call_t flow_limits_call = {
    "queue.limits", FLEET__OP_QUEUE_LIMITS, flow_limits_reply,
    flow_limits_cb_fail};

int fleet__queue_limits(fleet_queue_t *pub, fleet_queue_limits_cb cb,
                        void *user_data) {
  return fleet__queue_call_args(pub, &flow_limits_call, (fleet__fn_t)cb,
                                user_data, "get", NULL, 0);
}

/* ------------------------------------------------------------------------ */
/* Groups                                                                   */

#define FLOW_GROUP_FIELDS 6

static void flow_groups_cb_fail(fleet__req_t *req, int status) {
  ((fleet_queue_groups_cb)req->cb)((fleet_queue_t *)req->handle->pub, status,
                                   NULL, 0, 0, req->user_data);
}

/* {total, then name, pending, running, rate_used, weight, held_until_ms
 * per group}: the names copied into the queue's string buffer so that
 * each is NUL-terminated. */
static void flow_groups_reply(fleet__req_t *base, int status,
                              const fleet__reply_t *r) {
  struct fleet__queue_s *q = (struct fleet__queue_s *)base->handle;
  fleet_queue_group_t *groups = NULL;
  fleet_bytes_t name;
  uint64_t total, v[5];
  size_t n = 0, i, k, bytes = 0;
  int rc = 0;

  if (fleet__call_failed(base, status))
    return;
  if (r->type != FLEET__REPLY_ARRAY || r->nelem < 1 ||
      (r->nelem - 1) % FLOW_GROUP_FIELDS != 0 ||
      fleet__reply_u64(&r->elem[0], &total) != 0)
    rc = FLEET_EPROTO;
  if (rc == 0) {
    n = (r->nelem - 1) / FLOW_GROUP_FIELDS;
    for (i = 0; rc == 0 && i < n; i++) {
      const fleet__reply_t *e = &r->elem[1 + i * FLOW_GROUP_FIELDS];
      if (fleet__reply_bytes(&e[0], &name) != 0 ||
          name.len > FLEET_JOB_GROUP_MAX)
        rc = FLEET_EPROTO;
      bytes += name.len + 1;
      for (k = 0; rc == 0 && k < 5; k++)
        if (fleet__reply_u64(&e[1 + k], &v[k]) != 0)
          rc = FLEET_EPROTO;
      if (rc == 0 && (v[3] == 0 || v[3] > FLEET_GROUP_WEIGHT_MAX))
        rc = FLEET_EPROTO;
    }
  }
  q->strs_len = 0;
  if (rc == 0 && n > 0 &&
      ((groups = calloc(n, sizeof(*groups))) == NULL ||
       fleet__queue_strs_reserve(q, bytes) != 0))
    rc = FLEET_ENOMEM;
  if (!fleet__call_done(base, rc)) {
    free(groups);
    return;
  }
  for (i = 0; i < n; i++) {
    const fleet__reply_t *e = &r->elem[1 + i * FLOW_GROUP_FIELDS];
    fleet__reply_bytes(&e[0], &name);
    for (k = 0; k < 5; k++)
      fleet__reply_u64(&e[1 + k], &v[k]);
    groups[i].name = fleet__queue_strs_add(q, name);
    groups[i].pending = v[0];
    groups[i].running = v[1];
    groups[i].rate_used = v[2];
    groups[i].weight = (uint32_t)v[3];
    groups[i].held_until_ms = v[4];
  }
  ((fleet_queue_groups_cb)base->cb)((fleet_queue_t *)base->handle->pub, 0,
                                    groups, n, total, base->user_data);
  free(groups);
}

static const fleet__call_t flow_groups_call = {
    "queue.groups", FLEET__OP_QUEUE_GROUPS, flow_groups_reply,
    flow_groups_cb_fail};

int fleet__queue_groups(fleet_queue_t *pub, const char *after, size_t limit,
                        fleet_queue_groups_cb cb, void *user_data) {
  char lim[24];
  int err;

  if (pub == NULL || cb == NULL || limit == 0 || limit > FLEET_QUEUE_BATCH_MAX)
    return FLEET_EINVAL;
  if (after != NULL && after[0] != '\0' &&
      (err = fleet__str_check(after, FLEET_JOB_GROUP_MAX, NULL)) != 0)
    return err;
  fleet__queue_dec(lim, limit);
  return flow_call(pub, &flow_groups_call, (fleet__fn_t)cb, user_data,
                   after != NULL ? after : "", lim, NULL);
}
