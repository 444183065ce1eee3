/* cron_registry.c -- the registry calls of the cron scheduler: define,
 * enable, remove, list, history and trigger (the cron_*.lua scripts;
 * docs/cron.md has their table). They work on an initialized scheduler whether
 * it was started or not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cron_sched_int.h"

void fleet_cron_def_init(fleet_cron_def_t *def) {
  if (def != NULL) {
    memset(def, 0, sizeof(*def));
    def->last_fire_ms = -1;
    def->next_due_ms = -1;
  }
}

/* The entry of a registry call on `sched`; `ok` 0 refuses it with
 * FLEET_EINVAL (a callback or an argument missing). */
static fleet__cron_sched_t *reg_enter(fleet_cron_scheduler_t *sched, int ok,
                                      int *err) {
  return (fleet__cron_sched_t *)fleet__call_enter(
      sched, FLEET_HANDLE_CRON_SCHEDULER, ok, err);
}

static int check_key(const char *key, size_t *len) {
  return fleet__str_check(key, FLEET_CRON_KEY_MAX, len);
}

/* The entry of a call on the definition `key` (as reg_enter()), with the
 * scheduler's arguments begun for `nargs` and the key in as the first. */
static fleet__cron_sched_t *reg_enter_key(fleet_cron_scheduler_t *sched, int ok,
                                          const char *key, size_t nargs,
                                          int *err) {
  fleet__cron_sched_t *s = reg_enter(sched, ok, err);
  size_t len;

  if (s != NULL && (*err = check_key(key, &len)) == 0 &&
      (*err = fleet__args_begin(&s->args, nargs, 0)) == 0)
    fleet__args_bytes(&s->args, key, len);
  return *err == 0 ? s : NULL;
}

/* ------------------------------------------------------------------------ */
/* Status calls: define, enable, remove                                     */

/* Define, enable and remove answer a status. */
static void reg_on_status(fleet__req_t *r, int status,
                          const fleet__reply_t *reply) {
  (void)reply;
  fleet__call_finish(r, status);
}

static const fleet__call_t cron_define_call = {
    "cron.define", FLEET__OP_CRON_DEFINE, reg_on_status,
    fleet__call_fail_status};
static const fleet__call_t cron_enable_call = {
    "cron.enable", FLEET__OP_CRON_SET, reg_on_status, fleet__call_fail_status};
static const fleet__call_t cron_remove_call = {
    "cron.remove", FLEET__OP_CRON_REMOVE, reg_on_status,
    fleet__call_fail_status};

int fleet_cron_define(fleet_cron_scheduler_t *sched,
                      const fleet_cron_def_t *def, fleet_cron_mode_t mode,
                      char *err_buf, size_t err_len, fleet_status_cb cb,
                      void *user_data) {
  static const char *const modes[] = {"upsert", "create", "update"};
  fleet__cron_sched_t *s;
  fleet_cron_t *cron = NULL;
  const char *tz, *queue, *pool;
  size_t len;
  int err;

  if (err_buf != NULL && err_len > 0)
    err_buf[0] = '\0';
  s = reg_enter(sched, def != NULL && cb != NULL && (unsigned)mode <= 2, &err);
  if (s == NULL)
    return err;
  if ((err = check_key(def->key, &len)) != 0)
    return err;
  if ((err = fleet__str_check(def->expr, FLEET_CRON_EXPR_MAX, NULL)) != 0)
    return err;
  tz = def->tz != NULL ? def->tz : "";
  queue = def->queue != NULL ? def->queue : "";
  pool = def->pool != NULL ? def->pool : "";
  if (queue[0] != '\0' && pool[0] != '\0') {
    if (err_buf != NULL && err_len > 0)
      snprintf(err_buf, err_len, "a queue and a pool: one target at most");
    return FLEET_EINVAL;
  }
  if (strlen(tz) > FLEET_CRON_EXPR_MAX || strlen(queue) > FLEET__NAME_MAX ||
      strlen(pool) > FLEET__NAME_MAX ||
      def->payload.len > FLEET_CRON_PAYLOAD_MAX ||
      def->metadata.len > FLEET_CRON_PAYLOAD_MAX)
    return FLEET_E2BIG;
  if ((def->payload.len > 0 && def->payload.base == NULL) ||
      (def->metadata.len > 0 && def->metadata.base == NULL) ||
      fleet_cron_catch_up_name((int)def->catch_up) == NULL ||
      def->catch_up_max > 1000)
    return FLEET_EINVAL;
  if (def->start_ms < 0 || def->end_ms < 0 ||
      (def->end_ms > 0 && def->end_ms < def->start_ms) ||
      def->max_fires > (uint64_t)INT64_MAX) {
    if (err_buf != NULL && err_len > 0)
      snprintf(err_buf, err_len, "%s",
               def->end_ms > 0 && def->end_ms < def->start_ms
                   ? "end before start"
                   : "start, end or maximum fires out of range");
    return FLEET_EINVAL;
  }
  /* The expression and the zone are checked here, with the parser's
   * message, before anything is written. */
  err = fleet_cron_parse(def->expr, tz[0] != '\0' ? tz : NULL, &cron, err_buf,
                         err_len);
  fleet_cron_free(cron);
  if (err != 0)
    return err;
  if ((err = fleet__args_begin(&s->args, 15, 5)) != 0)
    return err;
  fleet__args_bytes(&s->args, def->key, len);
  fleet__args_str(&s->args, modes[mode]);
  fleet__args_str(&s->args, def->expr);
  fleet__args_str(&s->args, tz);
  fleet__args_bytes(&s->args, def->payload.base, def->payload.len);
  fleet__args_str(&s->args, queue);
  fleet__args_str(&s->args, fleet_cron_catch_up_name((int)def->catch_up));
  fleet__args_u64(&s->args, def->catch_up_max ? def->catch_up_max : 10);
  fleet__args_u64(&s->args,
                  def->catch_up_window_ms ? def->catch_up_window_ms : 3600000);
  fleet__args_bytes(&s->args, def->metadata.base, def->metadata.len);
  fleet__args_str(&s->args, def->disabled ? "0" : "1");
  fleet__args_i64(&s->args, def->start_ms);
  fleet__args_i64(&s->args, def->end_ms);
  fleet__args_u64(&s->args, def->max_fires);
  fleet__args_str(&s->args, pool);
  return fleet__cron_call(s, &cron_define_call, &s->reg, (fleet__fn_t)cb,
                          user_data);
}

/* A call on one definition: its key, then `arg` if not NULL. */
static int key_call(fleet_cron_scheduler_t *sched, const char *key,
                    const fleet__call_t *call, const char *arg,
                    fleet_status_cb cb, void *user_data) {
  fleet__cron_sched_t *s;
  int err;

  if ((s = reg_enter_key(sched, cb != NULL, key, 2, &err)) == NULL)
    return err;
  if (arg != NULL)
    fleet__args_str(&s->args, arg);
  return fleet__cron_call(s, call, &s->reg, (fleet__fn_t)cb, user_data);
}

int fleet_cron_enable(fleet_cron_scheduler_t *sched, const char *key,
                      int enabled, fleet_status_cb cb, void *user_data) {
  return key_call(sched, key, &cron_enable_call, enabled ? "1" : "0", cb,
                  user_data);
}

int fleet_cron_remove(fleet_cron_scheduler_t *sched, const char *key,
                      fleet_status_cb cb, void *user_data) {
  return key_call(sched, key, &cron_remove_call, NULL, cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* List                                                                     */

/* Reads a CRON_LIST reply into owned definitions, sorted by key. */
static int list_read(const fleet__reply_t *reply, fleet__cron_def_t ***out,
                     size_t *nout, int64_t *now) {
  fleet__cron_def_t **defs = NULL;
  size_t n = 0, cap, i;
  int err = 0;

  if (!fleet__reply_is_array(reply, 2) || (reply->nelem - 2) % 3 != 0 ||
      fleet__reply_i64(&reply->elem[1], now) != 0)
    return FLEET_EPROTO;
  cap = (reply->nelem - 2) / 3;
  if (cap > 0 && (defs = calloc(cap, sizeof(*defs))) == NULL)
    return FLEET_ENOMEM;
  for (i = 0; err == 0 && i < cap; i++) {
    const fleet__reply_t *e = &reply->elem[2 + 3 * i];
    fleet__cron_def_t *d = fleet__cron_def_parse(&e[0], &e[1], &e[2], &err);

    if (d != NULL)
      defs[n++] = d;
  }
  if (err != 0) {
    for (i = 0; i < n; i++)
      fleet__cron_def_unref(defs[i]);
    free(defs);
    return err;
  }
  if (n > 1)
    qsort(defs, n, sizeof(*defs), fleet__cron_def_cmp);
  *out = defs;
  *nout = n;
  return 0;
}

/* Ends a list call: its callback with `status` and the `n` definitions
 * `views` (none on error). The request is done first. */
static void reg_tell_list(fleet__req_t *r, int status,
                          const fleet_cron_def_t *views, size_t n) {
  fleet__req_done(r);
  ((fleet_cron_list_cb)r->cb)((fleet_cron_scheduler_t *)r->handle->pub, status,
                              status == 0 ? views : NULL, status == 0 ? n : 0,
                              r->user_data);
}

static void reg_fail_list(fleet__req_t *r, int status) {
  reg_tell_list(r, status, NULL, 0);
}

/* The answer to a list: every definition, or the one asked for (`one`:
 * FLEET_ENOTFOUND when it is not there). */
static void reg_answer_list(fleet__req_t *r, int status,
                            const fleet__reply_t *reply, int one) {
  fleet__cron_def_t **defs = NULL;
  fleet_cron_def_t *views = NULL;
  size_t n = 0, i;
  int64_t now = 0;

  if (status == 0)
    status = list_read(reply, &defs, &n, &now);
  if (status == 0 && one && n == 0)
    status = FLEET_ENOTFOUND;
  if (status == 0 && n > 0 && (views = calloc(n, sizeof(*views))) == NULL)
    status = FLEET_ENOMEM;
  for (i = 0; status == 0 && i < n; i++)
    fleet__cron_def_view(defs[i], now, &views[i]);
  reg_tell_list(r, status, views, n);
  for (i = 0; i < n; i++)
    fleet__cron_def_unref(defs[i]);
  free(defs);
  free(views);
}

static void reg_on_list(fleet__req_t *r, int status,
                        const fleet__reply_t *reply) {
  reg_answer_list(r, status, reply, 0);
}

static void reg_on_get(fleet__req_t *r, int status,
                       const fleet__reply_t *reply) {
  reg_answer_list(r, status, reply, 1);
}

static const fleet__call_t cron_list_call = {"cron.list", FLEET__OP_CRON_LIST,
                                             reg_on_list, reg_fail_list};
static const fleet__call_t cron_get_call = {"cron.get", FLEET__OP_CRON_LIST,
                                            reg_on_get, reg_fail_list};

int fleet_cron_list(fleet_cron_scheduler_t *sched, const char *key,
                    fleet_cron_list_cb cb, void *user_data) {
  fleet__cron_sched_t *s;
  size_t len = 0;
  int err;

  if ((s = reg_enter(sched, cb != NULL, &err)) == NULL)
    return err;
  if (key != NULL && (err = check_key(key, &len)) != 0)
    return err;
  if ((err = fleet__args_begin(&s->args, 1, 0)) != 0)
    return err;
  fleet__args_bytes(&s->args, key != NULL ? key : "", len);
  return fleet__cron_call(s, key != NULL ? &cron_get_call : &cron_list_call,
                          &s->reg, (fleet__fn_t)cb, user_data);
}

/* ------------------------------------------------------------------------ */
/* History: the definition (for its target), then its log                   */

/* Ends a history call: its callback with `status` and the `n` entries
 * `e` (none on error). The request is done first. */
static void reg_tell_history(fleet__req_t *r, int status,
                             const fleet_cron_entry_t *e, size_t n) {
  fleet__req_done(r);
  ((fleet_cron_history_cb)r->cb)((fleet_cron_scheduler_t *)r->handle->pub,
                                 status, status == 0 ? e : NULL,
                                 status == 0 ? n : 0, r->user_data);
}

static void reg_fail_history(fleet__req_t *r, int status) {
  reg_tell_history(r, status, NULL, 0);
}

/* The second answer: the log, six fields an entry. The entries' strings
 * are copies, freed once the callback has returned. */
static void reg_on_history_log(fleet__req_t *r, int status,
                               const fleet__reply_t *reply) {
  fleet_cron_entry_t *e = NULL;
  size_t n = 0, i;

  if (status == 0 &&
      (!fleet__reply_is_array(reply, 1) || (reply->nelem - 1) % 6 != 0))
    status = FLEET_EPROTO;
  if (status == 0)
    n = (reply->nelem - 1) / 6;
  if (status == 0 && n > 0 && (e = calloc(n, sizeof(*e))) == NULL)
    status = FLEET_ENOMEM;
  for (i = 0; status == 0 && i < n; i++) {
    const fleet__reply_t *x = &reply->elem[1 + 6 * i];
    int64_t tok;

    if (fleet__reply_i64(&x[0], &e[i].fire_ms) != 0 ||
        fleet__reply_i64(&x[1], &tok) != 0 || x[2].type != FLEET__REPLY_STR ||
        fleet__reply_i64(&x[3], &e[i].dispatched_ms) != 0 ||
        fleet__reply_i64(&x[4], &e[i].finished_ms) != 0 ||
        x[5].type != FLEET__REPLY_STR) {
      status = FLEET_EPROTO;
      break;
    }
    e[i].token = (uint64_t)tok;
    e[i].node = fleet__memdup(x[2].str, x[2].len);
    e[i].outcome = fleet__memdup(x[5].str, x[5].len);
    if (e[i].node == NULL || e[i].outcome == NULL)
      status = FLEET_ENOMEM;
  }
  reg_tell_history(r, status, e, n);
  for (i = 0; e != NULL && i < n; i++) {
    free((char *)e[i].node);
    free((char *)e[i].outcome);
  }
  free(e);
}

/* After a request's first answer (the definitions read) sent its second
 * call, or failed to: the definitions and the tag are let go, and a
 * failure ends the request. */
static void reg_second_sent(fleet__req_t *r, int status,
                            fleet__cron_def_t **defs, size_t n,
                            fleet__key_t *tag) {
  size_t i;

  for (i = 0; i < n; i++)
    fleet__cron_def_unref(defs[i]);
  free(defs);
  fleet__key_free(tag);
  if (status != 0)
    fleet__call_finish(r, status);
}

/* The first answer: the definition, whose target gives the tag of the
 * log; the same request then reads the log. */
static void reg_on_history_def(fleet__req_t *r, int status,
                               const fleet__reply_t *reply) {
  fleet__cron_req_t *req = (fleet__cron_req_t *)r;
  fleet__cron_sched_t *s = (fleet__cron_sched_t *)r->handle;
  fleet__cron_def_t **defs = NULL;
  fleet__key_t tag = {0};
  fleet_bytes_t key;
  size_t n = 0;
  int64_t now;

  if (status == 0)
    status = list_read(reply, &defs, &n, &now);
  if (status == 0 && n == 0)
    status = FLEET_ENOTFOUND;
  if (status == 0)
    status = fleet__cron_def_tag(s, defs[0]->key, defs[0]->key_len,
                                 defs[0]->queue, &tag);
  if (status == 0 && s->base.closing)
    status = FLEET_ECANCELED;
  if (status == 0)
    status = fleet__args_begin(&s->args, 3, 1);
  if (status == 0) {
    /* The key asked for: the only one read. */
    r->on_reply = reg_on_history_log;
    fleet__args_bytes(&s->args, s->ns, s->ns_len);
    fleet__args_bytes(&s->args, defs[0]->key, defs[0]->key_len);
    fleet__args_u64(&s->args, req->limit);
    key = fleet__key_bytes(&tag);
    status = fleet__req_send(r, FLEET__OP_CRON_HISTORY, &key, 1, s->args.argv,
                             s->args.argc);
  }
  reg_second_sent(r, status, defs, n, &tag);
}

static const fleet__call_t cron_history_call = {
    "cron.history", FLEET__OP_CRON_LIST, reg_on_history_def, reg_fail_history};

int fleet_cron_history(fleet_cron_scheduler_t *sched, const char *key,
                       uint32_t limit, fleet_cron_history_cb cb,
                       void *user_data) {
  fleet__cron_sched_t *s;
  fleet__req_t *req;
  fleet_bytes_t tag;
  int err;

  s = reg_enter_key(sched, cb != NULL && limit > 0 && limit <= 1000, key, 1,
                    &err);
  if (s == NULL)
    return err;
  req =
      fleet__call_new(&s->base, &cron_history_call, (fleet__fn_t)cb, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  ((fleet__cron_req_t *)req)->limit = limit;
  tag = fleet__key_bytes(&s->reg);
  return fleet__call_send(req, &tag, 1, s->args.argv, s->args.argc);
}

/* ------------------------------------------------------------------------ */
/* Trigger: the definition (its target and bounds), then one claim          */

/* Ends a trigger call: its callback with `status`, and the occurrence and
 * its token when `status` is 0. The request is done first. */
static void reg_tell_trigger(fleet__req_t *r, int status, int64_t fire_ms,
                             uint64_t token) {
  fleet__req_done(r);
  ((fleet_cron_trigger_cb)r->cb)((fleet_cron_scheduler_t *)r->handle->pub,
                                 status, status == 0 ? fire_ms : 0,
                                 status == 0 ? token : 0, r->user_data);
}

/* Drops the trigger's reference to its definition, if it holds one. */
static void reg_trigger_unref(fleet__req_t *r) {
  fleet__cron_req_t *req = (fleet__cron_req_t *)r;

  fleet__cron_def_unref(req->def);
  req->def = NULL;
}

static void reg_fail_trigger(fleet__req_t *r, int status) {
  reg_trigger_unref(r);
  reg_tell_trigger(r, status, 0, 0);
}

/* The second answer: cron_fire's {now, count, status, token} for the one
 * occurrence. A fire is recorded in the registry as a scheduler records
 * its own (its last-fired hint, and the count of fires against the
 * limit), so that listings show it at once. */
static void reg_on_trigger_fire(fleet__req_t *r, int status,
                                const fleet__reply_t *reply) {
  fleet__cron_req_t *req = (fleet__cron_req_t *)r;
  fleet__cron_sched_t *s = (fleet__cron_sched_t *)r->handle;
  int64_t st = 0, token = 0, count = 0;

  if (status == 0 && (!fleet__reply_is_array(reply, 4) ||
                      fleet__reply_i64(&reply->elem[1], &count) != 0 ||
                      fleet__reply_i64(&reply->elem[2], &st) != 0 ||
                      fleet__reply_i64(&reply->elem[3], &token) != 0))
    status = FLEET_EPROTO;
  if (status == 0 && st != 1)
    status = st == 3 ? FLEET_EALREADY : st == 0 ? FLEET_EEXIST : FLEET_EPROTO;
  if (status == 0 && req->def != NULL && !s->base.closing)
    fleet__cron_mark(
        s, req->def, req->at, (uint64_t)token, count > 0 ? (uint64_t)count : 0,
        req->def->max_fires > 0 && (uint64_t)count >= req->def->max_fires);
  reg_trigger_unref(r);
  reg_tell_trigger(r, status, req->at, (uint64_t)token);
}

/* The first answer: the definition. A queue definition's occurrence at
 * the server's time (moved off a whole second, which only the expression's
 * occurrences have) is claimed with the act 't' of cron_fire.lua, as the
 * scheduler claims its own, with its bounds and its fire limit. */
static void reg_on_trigger_def(fleet__req_t *r, int status,
                               const fleet__reply_t *reply) {
  fleet__cron_req_t *req = (fleet__cron_req_t *)r;
  fleet__cron_sched_t *s = (fleet__cron_sched_t *)r->handle;
  fleet__cron_def_t **defs = NULL, *d = NULL;
  fleet__key_t tag = {0};
  fleet_bytes_t key;
  size_t n = 0;
  int64_t now = 0;

  if (status == 0)
    status = list_read(reply, &defs, &n, &now);
  if (status == 0 && n == 0)
    status = FLEET_ENOTFOUND;
  if (status == 0) {
    d = defs[0];
    req->at = now % 1000 == 0 ? now - 1 : now;
    /* A callback or pool definition fires in the node that claims it;
     * nothing fires before the start. */
    if (d->queue[0] == '\0' || (d->start_ms > 0 && req->at < d->start_ms))
      status = FLEET_EINVAL;
  }
  if (status == 0) {
    /* Kept for the registry's record of the fire (reg_on_trigger_fire). */
    d->refs++;
    req->def = d;
  }
  if (status == 0)
    status = fleet__cron_def_tag(s, d->key, d->key_len, d->queue, &tag);
  if (status == 0 && s->base.closing)
    status = FLEET_ECANCELED;
  if (status == 0)
    status = fleet__args_begin(&s->args, 16, 10);
  if (status == 0) {
    r->on_reply = reg_on_trigger_fire;
    fleet__args_bytes(&s->args, s->ns, s->ns_len);
    fleet__args_bytes(&s->args, d->key, d->key_len);
    fleet__args_bytes(&s->args, s->node, s->node_len);
    fleet__args_u64(&s->args, s->opts.keep_count);
    fleet__args_u64(&s->args, s->opts.keep_age_ms);
    fleet__args_u64(&s->args, d->last_token);
    fleet__args_str(&s->args, "1");
    fleet__args_bytes(&s->args, d->payload != NULL ? d->payload : "",
                      d->payload_len);
    fleet__args_u64(&s->args, d->max_fires);
    fleet__args_i64(&s->args, d->created_ms);
    fleet__args_i64(&s->args, d->start_ms);
    fleet__args_i64(&s->args, d->end_ms);
    fleet__args_u64(&s->args, 0);
    fleet__args_u64(&s->args, 1);
    fleet__args_i64(&s->args, req->at);
    fleet__args_str(&s->args, "t");
    key = fleet__key_bytes(&tag);
    status = fleet__req_send(r, FLEET__OP_CRON_FIRE, &key, 1, s->args.argv,
                             s->args.argc);
  }
  reg_second_sent(r, status, defs, n, &tag);
}

static const fleet__call_t cron_trigger_call = {
    "cron.trigger", FLEET__OP_CRON_LIST, reg_on_trigger_def, reg_fail_trigger};

int fleet_cron_trigger(fleet_cron_scheduler_t *sched, const char *key,
                       fleet_cron_trigger_cb cb, void *user_data) {
  fleet__cron_sched_t *s;
  fleet__req_t *req;
  fleet_bytes_t tag;
  int err;

  if ((s = reg_enter_key(sched, cb != NULL, key, 1, &err)) == NULL)
    return err;
  req =
      fleet__call_new(&s->base, &cron_trigger_call, (fleet__fn_t)cb, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  tag = fleet__key_bytes(&s->reg);
  return fleet__call_send(req, &tag, 1, s->args.argv, s->args.argc);
}
