/* cron_registry.c -- the registry calls of the cron scheduler: define,
 * enable, remove, list and history (adapters/ops/cron.h). They work on an
 * initialized scheduler whether it was started or not. */
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

/* A new request the user waits for. */
static fleet__cron_req_t *req_new(fleet__cron_sched_t *s,
                                  fleet__req_reply_fn fn,
                                  fleet__req_cancel_fn cancel, void *data) {
  return (fleet__cron_req_t *)fleet__req_new(&s->base, fn, cancel, data);
}

static int req_send(fleet__cron_sched_t *s, fleet__cron_req_t *req,
                    fleet__op_t op, const fleet__key_t *tag) {
  fleet_bytes_t key = fleet__key_bytes(tag);

  return fleet__req_send(&req->base, op, &key, 1, s->args.argv, s->args.argc);
}

/* ------------------------------------------------------------------------ */
/* Status calls: define, enable, remove                                     */

static void on_status(fleet__req_t *r, int status,
                      const fleet__reply_t *reply) {
  fleet__cron_req_t *req = (fleet__cron_req_t *)r;
  fleet_status_cb cb = req->status_cb;
  void *data = r->user_data;
  fleet__handle_t *h = r->handle;

  (void)reply;
  fleet__req_done(r);
  cb(h->pub, status, data);
}

static void cancel_status(fleet__req_t *r, int status) {
  fleet__cron_req_t *req = (fleet__cron_req_t *)r;

  req->status_cb(r->handle->pub, status, r->user_data);
}

static int check_key(const char *key, size_t *len) {
  return fleet__str_check(key, FLEET_CRON_KEY_MAX, len);
}

int fleet_cron_define(fleet_cron_scheduler_t *sched,
                      const fleet_cron_def_t *def, fleet_cron_mode_t mode,
                      char *err_buf, size_t err_len, fleet_status_cb cb,
                      void *user_data) {
  static const char *const modes[] = {"upsert", "create", "update"};
  fleet__cron_sched_t *s = fleet__cron_of(sched);
  fleet__cron_req_t *req;
  fleet_cron_t *cron = NULL;
  const char *tz, *queue;
  size_t len;
  int err;

  if (err_buf != NULL && err_len > 0)
    err_buf[0] = '\0';
  if (s == NULL || def == NULL || cb == NULL || (unsigned)mode > 2)
    return FLEET_EINVAL;
  if ((err = fleet__handle_usable(&s->base)) != 0)
    return err;
  if ((err = check_key(def->key, &len)) != 0)
    return err;
  if ((err = fleet__str_check(def->expr, FLEET_CRON_EXPR_MAX, NULL)) != 0)
    return err;
  tz = def->tz != NULL ? def->tz : "";
  queue = def->queue != NULL ? def->queue : "";
  if (strlen(tz) > FLEET_CRON_EXPR_MAX || strlen(queue) > FLEET__NAME_MAX ||
      def->payload.len > FLEET_CRON_PAYLOAD_MAX ||
      def->metadata.len > FLEET_CRON_PAYLOAD_MAX)
    return FLEET_E2BIG;
  if ((def->payload.len > 0 && def->payload.base == NULL) ||
      (def->metadata.len > 0 && def->metadata.base == NULL) ||
      fleet_cron_catch_up_name((int)def->catch_up) == NULL ||
      def->catch_up_max > 1000)
    return FLEET_EINVAL;
  /* The expression and the zone are checked here, with the parser's
   * message, before anything is written. */
  err = fleet_cron_parse(def->expr, tz[0] != '\0' ? tz : NULL, &cron, err_buf,
                         err_len);
  fleet_cron_free(cron);
  if (err != 0)
    return err;
  req = req_new(s, on_status, cancel_status, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->status_cb = cb;
  err = fleet__args_begin(&s->args, 11, 2);
  if (err == 0) {
    fleet__args_bytes(&s->args, def->key, len);
    fleet__args_str(&s->args, modes[mode]);
    fleet__args_str(&s->args, def->expr);
    fleet__args_str(&s->args, tz);
    fleet__args_bytes(&s->args, def->payload.base, def->payload.len);
    fleet__args_str(&s->args, queue);
    fleet__args_str(&s->args, fleet_cron_catch_up_name((int)def->catch_up));
    fleet__args_u64(&s->args, def->catch_up_max ? def->catch_up_max : 10);
    fleet__args_u64(&s->args, def->catch_up_window_ms ? def->catch_up_window_ms
                                                      : 3600000);
    fleet__args_bytes(&s->args, def->metadata.base, def->metadata.len);
    fleet__args_str(&s->args, def->disabled ? "0" : "1");
    err = req_send(s, req, FLEET__OP_CRON_DEFINE, &s->reg);
  }
  if (err != 0)
    fleet__req_free(&req->base);
  return err;
}

static int key_call(fleet_cron_scheduler_t *sched, const char *key,
                    fleet__op_t op, const char *arg, fleet_status_cb cb,
                    void *user_data) {
  fleet__cron_sched_t *s = fleet__cron_of(sched);
  fleet__cron_req_t *req;
  size_t len;
  int err;

  if (s == NULL || cb == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__handle_usable(&s->base)) != 0)
    return err;
  if ((err = check_key(key, &len)) != 0)
    return err;
  req = req_new(s, on_status, cancel_status, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->status_cb = cb;
  err = fleet__args_begin(&s->args, 2, 0);
  if (err == 0) {
    fleet__args_bytes(&s->args, key, len);
    if (arg != NULL)
      fleet__args_str(&s->args, arg);
    err = req_send(s, req, op, &s->reg);
  }
  if (err != 0)
    fleet__req_free(&req->base);
  return err;
}

int fleet_cron_enable(fleet_cron_scheduler_t *sched, const char *key,
                      int enabled, fleet_status_cb cb, void *user_data) {
  return key_call(sched, key, FLEET__OP_CRON_SET, enabled ? "1" : "0", cb,
                  user_data);
}

int fleet_cron_remove(fleet_cron_scheduler_t *sched, const char *key,
                      fleet_status_cb cb, void *user_data) {
  return key_call(sched, key, FLEET__OP_CRON_REMOVE, NULL, cb, user_data);
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

static void on_list(fleet__req_t *r, int status, const fleet__reply_t *reply) {
  fleet__cron_req_t *req = (fleet__cron_req_t *)r;
  fleet_cron_list_cb cb = req->list_cb;
  void *data = r->user_data;
  fleet__handle_t *h = r->handle;
  int want_one = req->key != NULL;
  fleet__cron_def_t **defs = NULL;
  fleet_cron_def_t *views = NULL;
  size_t n = 0, i;
  int64_t now = 0;

  free(req->key);
  req->key = NULL;
  fleet__req_done(r);
  if (status == 0)
    status = list_read(reply, &defs, &n, &now);
  if (status == 0 && want_one && n == 0)
    status = FLEET_ENOTFOUND;
  if (status == 0 && n > 0 && (views = calloc(n, sizeof(*views))) == NULL)
    status = FLEET_ENOMEM;
  for (i = 0; status == 0 && i < n; i++)
    fleet__cron_def_view(defs[i], now, &views[i]);
  if (status != 0)
    cb((fleet_cron_scheduler_t *)h->pub, status, NULL, 0, data);
  else
    cb((fleet_cron_scheduler_t *)h->pub, 0, views, n, data);
  for (i = 0; i < n; i++)
    fleet__cron_def_unref(defs[i]);
  free(defs);
  free(views);
}

static void cancel_list(fleet__req_t *r, int status) {
  fleet__cron_req_t *req = (fleet__cron_req_t *)r;

  free(req->key);
  req->key = NULL;
  req->list_cb((fleet_cron_scheduler_t *)r->handle->pub, status, NULL, 0,
               r->user_data);
}

int fleet_cron_list(fleet_cron_scheduler_t *sched, const char *key,
                    fleet_cron_list_cb cb, void *user_data) {
  fleet__cron_sched_t *s = fleet__cron_of(sched);
  fleet__cron_req_t *req;
  size_t len = 0;
  int err;

  if (s == NULL || cb == NULL)
    return FLEET_EINVAL;
  if ((err = fleet__handle_usable(&s->base)) != 0)
    return err;
  if (key != NULL && (err = check_key(key, &len)) != 0)
    return err;
  req = req_new(s, on_list, cancel_list, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->list_cb = cb;
  if (key != NULL && (req->key = fleet__memdup(key, len)) == NULL) {
    fleet__req_free(&req->base);
    return FLEET_ENOMEM;
  }
  err = fleet__args_begin(&s->args, 1, 0);
  if (err == 0) {
    fleet__args_bytes(&s->args, key != NULL ? key : "", len);
    err = req_send(s, req, FLEET__OP_CRON_LIST, &s->reg);
  }
  if (err != 0) {
    free(req->key);
    req->key = NULL;
    fleet__req_free(&req->base);
  }
  return err;
}

/* ------------------------------------------------------------------------ */
/* History: the definition (for its target), then its log                   */

static void on_history_log(fleet__req_t *r, int status,
                           const fleet__reply_t *reply);

static void history_fail(fleet__cron_req_t *req, int status) {
  fleet_cron_history_cb cb = req->history_cb;
  void *data = req->base.user_data;
  fleet__handle_t *h = req->base.handle;

  free(req->key);
  req->key = NULL;
  fleet__req_done(&req->base);
  cb((fleet_cron_scheduler_t *)h->pub, status, NULL, 0, data);
}

static void on_history_def(fleet__req_t *r, int status,
                           const fleet__reply_t *reply) {
  fleet__cron_req_t *req = (fleet__cron_req_t *)r;
  fleet__cron_sched_t *s = (fleet__cron_sched_t *)r->handle;
  fleet__cron_def_t **defs = NULL;
  fleet__key_t tag = {0};
  size_t n = 0, i;
  int64_t now;

  if (status == 0)
    status = list_read(reply, &defs, &n, &now);
  if (status == 0 && n == 0)
    status = FLEET_ENOTFOUND;
  if (status == 0)
    status = fleet__cron_def_tag(s, defs[0]->key, defs[0]->key_len,
                                 defs[0]->queue, &tag);
  for (i = 0; i < n; i++)
    fleet__cron_def_unref(defs[i]);
  free(defs);
  if (status == 0 && s->base.closing)
    status = FLEET_ECANCELED;
  if (status == 0)
    status = fleet__args_begin(&s->args, 3, 1);
  if (status == 0) {
    r->on_reply = on_history_log;
    fleet__args_bytes(&s->args, s->ns, s->ns_len);
    fleet__args_str(&s->args, req->key);
    fleet__args_u64(&s->args, req->limit);
    status = req_send(s, req, FLEET__OP_CRON_HISTORY, &tag);
  }
  fleet__key_free(&tag);
  if (status != 0)
    history_fail(req, status);
}

static void on_history_log(fleet__req_t *r, int status,
                           const fleet__reply_t *reply) {
  fleet__cron_req_t *req = (fleet__cron_req_t *)r;
  fleet_cron_entry_t *e = NULL;
  char **strs = NULL;
  size_t n = 0, i;

  if (status == 0 &&
      (!fleet__reply_is_array(reply, 1) || (reply->nelem - 1) % 6 != 0))
    status = FLEET_EPROTO;
  if (status == 0)
    n = (reply->nelem - 1) / 6;
  if (status == 0 && n > 0 &&
      ((e = calloc(n, sizeof(*e))) == NULL ||
       (strs = calloc(2 * n, sizeof(*strs))) == NULL))
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
    strs[2 * i] = fleet__memdup(x[2].str, x[2].len);
    strs[2 * i + 1] = fleet__memdup(x[5].str, x[5].len);
    if (strs[2 * i] == NULL || strs[2 * i + 1] == NULL)
      status = FLEET_ENOMEM;
    e[i].node = strs[2 * i];
    e[i].outcome = strs[2 * i + 1];
  }
  if (status != 0) {
    history_fail(req, status);
  } else {
    fleet_cron_history_cb cb = req->history_cb;
    void *data = r->user_data;
    fleet__handle_t *h = r->handle;

    free(req->key);
    req->key = NULL;
    fleet__req_done(r);
    cb((fleet_cron_scheduler_t *)h->pub, 0, e, n, data);
  }
  for (i = 0; strs != NULL && i < 2 * n; i++)
    free(strs[i]);
  free(strs);
  free(e);
}

static void cancel_history(fleet__req_t *r, int status) {
  fleet__cron_req_t *req = (fleet__cron_req_t *)r;

  free(req->key);
  req->key = NULL;
  req->history_cb((fleet_cron_scheduler_t *)r->handle->pub, status, NULL, 0,
                  r->user_data);
}

int fleet_cron_history(fleet_cron_scheduler_t *sched, const char *key,
                       uint32_t limit, fleet_cron_history_cb cb,
                       void *user_data) {
  fleet__cron_sched_t *s = fleet__cron_of(sched);
  fleet__cron_req_t *req;
  size_t len;
  int err;

  if (s == NULL || cb == NULL || limit == 0 || limit > 1000)
    return FLEET_EINVAL;
  if ((err = fleet__handle_usable(&s->base)) != 0)
    return err;
  if ((err = check_key(key, &len)) != 0)
    return err;
  req = req_new(s, on_history_def, cancel_history, user_data);
  if (req == NULL)
    return FLEET_ENOMEM;
  req->history_cb = cb;
  req->limit = limit;
  if ((req->key = fleet__memdup(key, len)) == NULL) {
    fleet__req_free(&req->base);
    return FLEET_ENOMEM;
  }
  err = fleet__args_begin(&s->args, 1, 0);
  if (err == 0) {
    fleet__args_bytes(&s->args, key, len);
    err = req_send(s, req, FLEET__OP_CRON_LIST, &s->reg);
  }
  if (err != 0) {
    free(req->key);
    req->key = NULL;
    fleet__req_free(&req->base);
  }
  return err;
}
