/* warmpool.c -- a node of a warm pool: init, the definition check at
 * start, the primary (a leader election named after the pool), its
 * reconcile and creations, the borrow and owner leases, close. The works
 * it asks the user for are warmpool_works.c's.
 *
 * The primary reconciles in one fenced script (reap, shrink, claim what is
 * to be destroyed, reserve creations up to the free warm-up slots); each
 * creation is put as soon as it is ready, with the token it was reserved
 * under, and the next reconcile follows at once, so warm-ups roll instead
 * of waiting for the slowest of a batch. The lease is renewed by the
 * lock's batcher item, independent of how long the warm-ups take.
 *
 * Identity: the owner id is a lease, T:wp:own:<owner>, holding the random
 * nonce of the node instance that started under it, with primary_ttl_ms.
 * The start claims it (refused with FLEET_ECONFLICT while another live
 * instance holds it), the borrow leases' batch kind renews it while the
 * node is started, and the close gives it up. Every write under the owner
 * id (acquire, release, creations on demand) presents the nonce and is
 * refused while another instance holds the id; a borrow records the
 * instance (T:wp:who holds "<expiry>:<owner>/<nonce>"), so only the one that
 * borrowed a resource releases or renews it. A started node that finds
 * its id held by another instance (its lease ran out while it was
 * stopped, and the other started) is refused for good: REFUSED. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "warmpool_int.h"

/* Entries moved per kind by one reconcile. */
#define WP_MAX_MOVED 100
/* Puts sent for one resource while the answer is lost to a transient
 * error. */
#define WP_PUT_TRIES 5

fleet__warmpool_t *fleet__warmpool_of(const fleet_warmpool_t *pool) {
  return (fleet__warmpool_t *)fleet__handle_of(pool, FLEET_HANDLE_WARMPOOL);
}

FLEET__NAME_FN(fleet_warmpool_state_name, int, FLEET_WARMPOOL_STATE_MAP)
FLEET__NAME_FN(fleet__warmpool_node_state_name, fleet__warmpool_node_state_t,
               FLEET__WARMPOOL_NODE_STATE_MAP)

static void wp_on_timer(uv_timer_t *t);
static void wp_reconcile(fleet__warmpool_t *wp);

/* The one place a node changes state. */
static void wp_set_state(fleet__warmpool_t *wp,
                         fleet__warmpool_node_state_t state) {
  if (wp->state == FLEET__WARMPOOL_PRIMARY &&
      state != FLEET__WARMPOOL_PRIMARY && wp->timer_open)
    uv_timer_stop(&wp->timer);
  if (state == FLEET__WARMPOOL_PRIMARY &&
      wp->state != FLEET__WARMPOOL_PRIMARY && wp->timer_open)
    uv_timer_start(&wp->timer, wp_on_timer, wp->opts.reconcile_ms,
                   wp->opts.reconcile_ms);
  wp->state = state;
}

/* The node's lease on its owner id given up at close. */
static const fleet__call_t wp_leave_call = {
    "warmpool.leave", FLEET__OP_WARMPOOL_LEAVE, fleet__warmpool_on_quiet, NULL};

/* ------------------------------------------------------------------------ */
/* The primary's creations                                                  */

static void wp_on_put(fleet__req_t *r, int status, const fleet__reply_t *reply);

/* A created resource is put with the token it was reserved under; the
 * call's user data is the creation's work. */
static const fleet__call_t wp_put_call = {
    "warmpool.put", FLEET__OP_WARMPOOL_PUT, wp_on_put, NULL};

/* Sends the put of a created resource. Returns 0 or the error of the
 * send. */
static int wp_put_send(fleet__warmpool_t *wp, fleet_warmpool_work_t *w) {
  if (fleet__args_begin(&wp->args, 6, 4) != 0)
    return FLEET_ENOMEM;
  fleet__args_str(&wp->args, w->id);
  fleet__args_u64(&wp->args, w->token);
  fleet__args_bytes(&wp->args, wp->owner, wp->owner_len);
  fleet__args_u64(&wp->args, wp->opts.idle_ttl_ms);
  fleet__args_u64(&wp->args, wp->opts.min_remaining_ms);
  fleet__args_u64(&wp->args, wp->opts.warmup_timeout_ms);
  return fleet__warmpool_call(wp, &wp_put_call, NULL, w);
}

static void wp_on_put(fleet__req_t *r, int status,
                      const fleet__reply_t *reply) {
  fleet__warmpool_t *wp = (fleet__warmpool_t *)r->handle;
  fleet_warmpool_work_t *w = r->user_data;
  int64_t res = 0;

  fleet__req_done(r);
  if (status == 0 && fleet__reply_i64(reply, &res) != 0)
    status = FLEET_EPROTO;
  /* A put that may not have run is sent again: a put of an id already
   * idle answers "put", so a repeat is harmless, and the resource must not
   * be left unknown (its reservation may be gone already). */
  if (status != 0 && fleet__status_transient(status) &&
      ++w->tries < WP_PUT_TRIES && wp_put_send(wp, w) == 0) {
    fleet__handle_error(&wp->base, status);
    return;
  }
  if (status != 0) {
    /* Still unknown: if it is reserved, the reservation ends at its
     * deadline and the primary of then destroys the id. */
    fleet__handle_error(&wp->base, status);
  } else {
    int st = res == 1    ? 0
             : res == 0  ? FLEET_ETIMEDOUT
             : res == -1 ? FLEET_ESTALE
                         : FLEET_EALREADY;
    if (wp->opts.put_cb != NULL)
      wp->opts.put_cb(wp->pub, w->id, w->token, st);
    if (st != 0)
      fleet__warmpool_destroy(wp, w->id, strlen(w->id), NULL, NULL);
  }
  fleet__warmpool_work_free(w);
  wp_reconcile(wp);
}

/* The report of one of the primary's creations: put when created (unless
 * the node closes: then destroyed), recorded for the backoff when not. */
static void wp_create_done(fleet_warmpool_work_t *w, int status,
                           const char *detail) {
  fleet__warmpool_t *wp = w->wp;
  int err;

  wp->creating--;
  if (status == 0 && !wp->base.closing) {
    if ((err = wp_put_send(wp, w)) == 0)
      return; /* the work ends with the put's reply */
    fleet__handle_error(&wp->base, err);
    fleet__warmpool_destroy(wp, w->id, strlen(w->id), NULL, NULL);
  } else if (status == 0) {
    /* Closing: what was created here and not put is destroyed. */
    fleet__warmpool_destroy(wp, w->id, strlen(w->id), NULL, NULL);
  } else {
    fleet__warmpool_create_failed(wp, w->id, status, detail);
  }
  fleet__warmpool_work_free(w);
  wp_reconcile(wp);
}

/* Starts the primary's creation of `id`, counted in wp->creating until
 * it is reported. Returns 0 or FLEET_ENOMEM. */
static int wp_create_start(fleet__warmpool_t *wp, const char *id, size_t len) {
  int err;

  wp->creating++;
  err = fleet__warmpool_work_start(wp, FLEET__WARMPOOL_CREATE, wp_create_done,
                                   id, len, NULL);
  if (err != 0)
    wp->creating--;
  return err;
}

/* ------------------------------------------------------------------------ */
/* The primary                                                              */

static void wp_on_reconcile(fleet__req_t *r, int status,
                            const fleet__reply_t *reply) {
  fleet__warmpool_t *wp = (fleet__warmpool_t *)r->handle;
  int64_t res = 0, nd = 0, nc = 0;
  size_t i;

  fleet__req_done(r);
  wp->rec_inflight = 0;
  if (status == 0 &&
      (!fleet__reply_is_array(reply, 1) ||
       fleet__reply_i64(&reply->elem[0], &res) != 0 ||
       (res == 1 && (!fleet__reply_is_array(reply, 6) ||
                     fleet__reply_i64(&reply->elem[1], &nd) != 0 ||
                     fleet__reply_i64(&reply->elem[2], &nc) != 0 || nd < 0 ||
                     nc < 0 || reply->nelem != 6 + (size_t)(nd + nc)))))
    status = FLEET_EPROTO;
  if (status != 0) {
    fleet__handle_error(&wp->base, status);
    return;
  }
  if (res != 1)
    return; /* the lease moved on: the leader hears it */
  for (i = 0; i < (size_t)nd; i++) {
    const fleet__reply_t *e = &reply->elem[6 + i];
    if (e->type == FLEET__REPLY_STR && !wp->base.closing)
      fleet__warmpool_destroy(wp, e->str, e->len, NULL, NULL);
  }
  for (i = 0; i < (size_t)nc; i++) {
    const fleet__reply_t *e = &reply->elem[6 + (size_t)nd + i];
    char id[FLEET_WARMPOOL_ID_MAX + 1];
    if (e->type != FLEET__REPLY_STR || e->len > FLEET_WARMPOOL_ID_MAX)
      continue;
    memcpy(id, e->str, e->len);
    id[e->len] = '\0';
    if (wp->state != FLEET__WARMPOOL_PRIMARY ||
        wp_create_start(wp, id, e->len) != 0)
      fleet__warmpool_destroyed(wp, id); /* gives the reservation back */
  }
  if (wp->rec_again) {
    wp->rec_again = 0;
    wp_reconcile(wp);
  }
}

static const fleet__call_t wp_reconcile_call = {
    "warmpool.reconcile", FLEET__OP_WARMPOOL_RECONCILE, wp_on_reconcile, NULL};

static void wp_reconcile(fleet__warmpool_t *wp) {
  uint32_t conc = wp->opts.warmup_concurrency;
  int err;

  if (wp->state != FLEET__WARMPOOL_PRIMARY)
    return;
  if (wp->rec_inflight) {
    wp->rec_again = 1;
    return;
  }
  if (fleet__args_begin(&wp->args, 7, 6) != 0) {
    fleet__handle_error(&wp->base, FLEET_ENOMEM);
    return;
  }
  fleet__args_u64(&wp->args, wp->token);
  fleet__args_bytes(&wp->args, wp->owner, wp->owner_len);
  fleet__args_u64(&wp->args, wp->opts.min_remaining_ms);
  fleet__args_u64(&wp->args, wp->opts.warmup_timeout_ms);
  fleet__args_u64(&wp->args, WP_MAX_MOVED);
  fleet__args_u64(&wp->args, conc > wp->creating ? conc - wp->creating : 0);
  fleet__args_u64(&wp->args, wp->opts.warmup_timeout_ms);
  err = fleet__warmpool_call(wp, &wp_reconcile_call, NULL, NULL);
  if (err != 0) {
    fleet__handle_error(&wp->base, err);
    return;
  }
  wp->rec_inflight = 1;
  wp->rec_again = 0;
}

static void wp_on_timer(uv_timer_t *t) {
  wp_reconcile(t->data);
}

static void wp_on_wake(void *arg, int status, const char *payload, size_t len) {
  (void)status;
  (void)payload;
  (void)len;
  wp_reconcile(arg);
}

static void wp_on_elected(fleet_leader_t *leader, uint64_t token) {
  fleet__warmpool_t *wp = leader->data;

  if (wp->state != FLEET__WARMPOOL_CANDIDATE)
    return;
  wp->token = token;
  wp_set_state(wp, FLEET__WARMPOOL_PRIMARY);
  if (wp->opts.primary_cb != NULL)
    wp->opts.primary_cb(wp->pub, token);
  wp_reconcile(wp);
}

static void wp_on_demoted(fleet_leader_t *leader, int status) {
  fleet__warmpool_t *wp = leader->data;

  if (wp->state != FLEET__WARMPOOL_PRIMARY)
    return;
  /* The leader campaigns again by itself. */
  wp_set_state(wp, FLEET__WARMPOOL_CANDIDATE);
  if (status != 0)
    fleet__handle_error(&wp->base, status);
  if (wp->opts.primary_cb != NULL)
    wp->opts.primary_cb(wp->pub, 0);
}

static void wp_on_leader_error(fleet_handle_t *h, int status,
                               const char *detail) {
  fleet__warmpool_t *wp = ((fleet_leader_t *)h)->data;

  (void)detail;
  fleet__handle_error(&wp->base, status);
}

/* Campaigns for primary: the candidate is made once (a start that failed
 * to campaign keeps it for the next start) and closes with the node. */
static int wp_campaign(fleet__warmpool_t *wp) {
  fleet_leader_options_t lo;
  int err;

  if (!wp->leader_open) {
    fleet_leader_options_init(&lo);
    lo.elected_cb = wp_on_elected;
    lo.demoted_cb = wp_on_demoted;
    lo.error_cb = wp_on_leader_error;
    err = fleet_leader_init(wp->base.client->pub, &wp->leader, wp->name,
                            wp->owner, wp->opts.primary_ttl_ms, &lo);
    if (err != 0)
      return err;
    fleet__handle_adopt(&wp->base, wp->leader.internal_);
    wp->leader.data = wp;
    wp->leader_open = 1;
  }
  /* Resizes, acquires and releases wake the primary at once. */
  if (wp->sub == NULL) {
    err = fleet__handle_subscribe(&wp->base, wp->wake.base, wp->wake.len,
                                  wp_on_wake, wp, &wp->sub);
    if (err != 0) {
      wp->sub = NULL;
      fleet__handle_error(&wp->base, err);
    }
  }
  err = fleet_leader_campaign(&wp->leader);
  if (err == 0)
    wp_set_state(wp, FLEET__WARMPOOL_CANDIDATE);
  return err;
}

int fleet_warmpool_is_primary(const fleet_warmpool_t *pool) {
  const fleet__warmpool_t *wp = fleet__warmpool_of(pool);

  return wp != NULL && wp->leader_open &&
         wp->state == FLEET__WARMPOOL_PRIMARY &&
         fleet_leader_is_leader(&wp->leader);
}

const char *fleet_warmpool_fingerprint(const fleet_warmpool_t *pool) {
  const fleet__warmpool_t *wp = fleet__warmpool_of(pool);
  return wp != NULL ? wp->fp : NULL;
}

/* ------------------------------------------------------------------------ */
/* Leases: the resources this node borrowed and its owner id              */

static void wp_refuse(fleet__warmpool_t *wp);

static void wp_borrow_schedule(fleet__warmpool_borrow_t *b, uint64_t delay);

static void wp_borrow_free(fleet__warmpool_borrow_t *b) {
  fleet__warmpool_t *wp = b->wp;
  int had = b->item.linked || b->item.call != NULL;

  fleet__batch_remove(wp->base.client, &b->item);
  fleet__list_remove(&b->node);
  free(b);
  if (had)
    fleet__handle_unhold(&wp->base);
}

static void wp_renew_fill(fleet__batch_item_t *it, fleet_bytes_t *keys,
                          fleet_bytes_t *args) {
  fleet__warmpool_borrow_t *b =
      FLEET__CONTAINER_OF(it, fleet__warmpool_borrow_t, item);
  fleet__warmpool_t *wp = b->wp;
  const char *lease = b == wp->own ? wp->own_ttl_str : wp->lease_str;

  keys[0] = fleet__key_bytes(&wp->tag);
  args[0] = (fleet_bytes_t){b->id, b->id_len};
  args[1] = (fleet_bytes_t){wp->owner, wp->owner_len};
  args[2] = (fleet_bytes_t){lease, strlen(lease)};
  args[3] = (fleet_bytes_t){wp->nonce, FLEET__NONCE_LEN};
}

/* The owner lease's renewal (an item like the borrows', off their list),
 * if the node holds one. */
static void wp_own_schedule(fleet__warmpool_t *wp, uint64_t delay) {
  if (wp->own != NULL)
    wp_borrow_schedule(wp->own, delay);
}

/* The owner lease's renewal came back: 1 renewed, 2 it had run out (the
 * node was stopped past it) and was free, so it is this node's again,
 * -1 another live instance holds the id. */
static void wp_own_done(fleet__warmpool_t *wp, int status, int64_t res) {
  if (status != 0) {
    wp_own_schedule(wp, wp->opts.primary_ttl_ms / 10 + 1);
    fleet__handle_error(&wp->base, status);
    return;
  }
  if (res == -1) {
    wp_refuse(wp);
    return;
  }
  wp_own_schedule(wp, wp->opts.primary_ttl_ms / 3);
  if (res == 2) {
    fleet__backend_set_detail(fleet__handle_backend(&wp->base),
                              "warm pool %s: the lease of owner id \"%s\" "
                              "ran out; it was free and is held again",
                              wp->name, wp->owner);
    fleet__handle_error(&wp->base, FLEET_ESTALE);
  }
}

static void wp_renew_done(fleet__batch_item_t *it, int status,
                          const fleet__reply_t *head,
                          const fleet__reply_t *elem, uint64_t sent) {
  fleet__warmpool_borrow_t *b =
      FLEET__CONTAINER_OF(it, fleet__warmpool_borrow_t, item);
  fleet__warmpool_t *wp = b->wp;
  int64_t res = 0;

  (void)head;
  (void)sent;
  fleet__handle_unhold(&wp->base);
  if (status == 0 && fleet__reply_i64(elem, &res) != 0)
    status = FLEET_EPROTO;
  if (b == wp->own) {
    wp_own_done(wp, status, res);
    return;
  }
  if (status == 0 && res == -1) {
    /* Another live instance holds the owner id. */
    wp_borrow_free(b);
    wp_refuse(wp);
    return;
  }
  if (status != 0) {
    wp_borrow_schedule(b, wp->opts.borrow_lease_ms / 10 + 1);
    fleet__handle_error(&wp->base, status);
    return;
  }
  if (res != 1) {
    /* No longer ours: the lease ran out and the primary destroys it. */
    wp_borrow_free(b);
    fleet__handle_error(&wp->base, FLEET_ESTALE);
    return;
  }
  wp_borrow_schedule(b, wp->opts.borrow_lease_ms / 3);
}

static const fleet__batch_kind_t wp_renew_kind = {
    .op = FLEET__OP_WARMPOOL_RENEW,
    .item_keys = 1,
    .item_args = 4,
    .max_items = FLEET__BATCH_MAX,
    .fill = wp_renew_fill,
    .done = wp_renew_done,
};

static void wp_borrow_schedule(fleet__warmpool_borrow_t *b, uint64_t delay) {
  fleet__warmpool_t *wp = b->wp;

  if (!b->item.linked && b->item.call == NULL &&
      fleet__batch_add(wp->base.client, &b->item, &wp_renew_kind, NULL,
                       uv_now(wp->base.loop) + delay, delay / 4) == 0)
    fleet__handle_hold(&wp->base);
}

static void wp_own_start(fleet__warmpool_t *wp) {
  if (wp->own != NULL || wp->base.closing)
    return;
  if ((wp->own = calloc(1, sizeof(*wp->own) + 1)) == NULL) {
    fleet__handle_error(&wp->base, FLEET_ENOMEM);
    return;
  }
  wp->own->wp = wp;
  fleet__list_init(&wp->own->node);
  wp_own_schedule(wp, wp->opts.primary_ttl_ms / 3);
}

static void wp_own_stop(fleet__warmpool_t *wp) {
  fleet__warmpool_borrow_t *b = wp->own;

  wp->own = NULL;
  if (b != NULL)
    wp_borrow_free(b);
}

void fleet__warmpool_borrow_add(fleet__warmpool_t *wp, const char *id,
                                size_t len) {
  fleet__warmpool_borrow_t *b;

  if (wp->opts.borrow_lease_ms == 0 || wp->base.closing)
    return;
  if ((b = calloc(1, sizeof(*b) + len + 1)) == NULL) {
    fleet__handle_error(&wp->base, FLEET_ENOMEM);
    return;
  }
  b->wp = wp;
  b->id_len = len;
  memcpy(b->id, id, len);
  fleet__list_insert_head(&wp->borrows, &b->node);
  wp_borrow_schedule(b, wp->opts.borrow_lease_ms / 3);
}

void fleet__warmpool_borrow_drop(fleet__warmpool_t *wp, const char *id) {
  FLEET__LIST_FOREACH (n, next, &wp->borrows) {
    fleet__warmpool_borrow_t *b =
        FLEET__LIST_DATA(n, fleet__warmpool_borrow_t, node);
    if (strcmp(b->id, id) == 0) {
      wp_borrow_free(b);
      return;
    }
  }
}

static void wp_borrow_clear(fleet__warmpool_t *wp) {
  fleet__list_t *n;

  while ((n = fleet__list_first(&wp->borrows)) != NULL)
    wp_borrow_free(FLEET__LIST_DATA(n, fleet__warmpool_borrow_t, node));
}

/* ------------------------------------------------------------------------ */
/* Identity                                                                 */

/* Another live instance took this node's owner id: the node stops acting
 * under it for good. */
static void wp_refuse(fleet__warmpool_t *wp) {
  fleet__warmpool_node_state_t was = wp->state;

  if (wp->base.closing || wp->state == FLEET__WARMPOOL_REFUSED)
    return;
  wp_set_state(wp, FLEET__WARMPOOL_REFUSED);
  wp->claimed = 0;
  wp_own_stop(wp);
  wp_borrow_clear(wp);
  fleet__reg_stop(&wp->reg);
  /* A candidate stops campaigning for good; a primary gives its lease up,
   * which its fencing token guards (a newer primary's is left alone). */
  if (wp->leader_open) {
    wp->leader_open = 0;
    fleet_leader_close(&wp->leader, NULL);
  }
  fleet__backend_set_detail(fleet__handle_backend(&wp->base),
                            "warm pool %s: owner id \"%s\" is already in "
                            "use by a live node",
                            wp->name, wp->owner);
  fleet__handle_error(&wp->base, FLEET_ECONFLICT);
  if (was == FLEET__WARMPOOL_PRIMARY && wp->opts.primary_cb != NULL &&
      !wp->base.closing)
    wp->opts.primary_cb(wp->pub, 0);
}

const char *fleet_warmpool_owner(const fleet_warmpool_t *pool) {
  const fleet__warmpool_t *wp = fleet__warmpool_of(pool);
  return wp != NULL ? wp->owner : NULL;
}

/* ------------------------------------------------------------------------ */
/* Start                                                                    */

static void wp_on_start(fleet__req_t *req, int status,
                        const fleet__reply_t *reply) {
  fleet__warmpool_t *wp = (fleet__warmpool_t *)req->handle;
  int64_t ok = 0;
  fleet_bytes_t stored = {"", 0};
  fleet_status_cb cb = (fleet_status_cb)req->cb;
  void *data = req->user_data;

  fleet__req_done(req);
  if (status == 0 && (reply == NULL || !fleet__reply_is_array(reply, 2) ||
                      fleet__reply_i64(&reply->elem[0], &ok) != 0 ||
                      fleet__reply_bytes(&reply->elem[1], &stored) != 0))
    status = FLEET_EPROTO;
  if (status == FLEET_ECONFLICT)
    fleet__backend_set_detail(fleet__handle_backend(&wp->base),
                              "warm pool %s: owner id \"%s\" is already in "
                              "use by a live node",
                              wp->name, wp->owner);
  if (status == 0 && ok != 1) {
    fleet__backend_set_detail(fleet__handle_backend(&wp->base),
                              "warm pool %s: this node's definition "
                              "fingerprint %s differs from the pool's %.*s",
                              wp->name, wp->fp, (int)stored.len,
                              (const char *)stored.base);
    status = FLEET_ECONFLICT;
  }
  if (status == 0) {
    /* The owner id is this instance's while the node is started. */
    wp->claimed = 1;
    wp_own_start(wp);
  }
  if (status == 0 && wp->opts.client_only)
    wp_set_state(wp, FLEET__WARMPOOL_CLIENT);
  else if (status == 0)
    status = wp_campaign(wp);
  if (status == 0 && !wp->opts.client_only)
    fleet__reg_start(&wp->reg, &wp->base, "warmpool", wp->owner, wp->owner_len,
                     wp->name, strlen(wp->name), wp->opts.reconcile_ms, NULL);
  if (status != 0)
    /* Not started: it may be started again. */
    wp_set_state(wp, FLEET__WARMPOOL_IDLE);
  cb(wp->base.pub, status, data);
}

static const fleet__call_t wp_start_call = {
    "warmpool.start", FLEET__OP_WARMPOOL_START, wp_on_start,
    fleet__call_fail_status};

int fleet_warmpool_start(fleet_warmpool_t *pool,
                         const fleet_warmpool_handlers_t *handlers,
                         fleet_status_cb cb, void *user_data) {
  fleet__warmpool_t *wp;
  int err;

  if (handlers == NULL || handlers->create_cb == NULL ||
      handlers->destroy_cb == NULL)
    return FLEET_EINVAL;
  if ((wp = fleet__warmpool_enter(pool, (fleet__fn_t)cb, FLEET__WP_NOT_REFUSED,
                                  5, 1, &err)) == NULL)
    return err;
  if (wp->state != FLEET__WARMPOOL_IDLE)
    return FLEET_EALREADY;
  fleet__args_bytes(&wp->args, wp->fp, 16);
  /* A client-only node writes no first target: the nodes that campaign
   * set it. */
  if (wp->opts.client_only)
    fleet__args_str(&wp->args, "");
  else
    fleet__args_u64(&wp->args, wp->opts.target_idle);
  fleet__args_bytes(&wp->args, wp->owner, wp->owner_len);
  fleet__args_str(&wp->args, wp->nonce);
  fleet__args_str(&wp->args, wp->own_ttl_str);
  if ((err = fleet__warmpool_call(wp, &wp_start_call, (fleet__fn_t)cb,
                                  user_data)) != 0)
    return err;
  /* The works asked for from now on go to these handlers. */
  wp->h = *handlers;
  wp_set_state(wp, FLEET__WARMPOOL_STARTING);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Init and close                                                           */

/* The options of fleet_warmpool_options_init(): the defaults of the
 * fields left 0. */
static const fleet_warmpool_options_t wp_defaults = {
    .idle_ttl_ms = 24u * 3600u * 1000u,
    .min_remaining_ms = 60000,
    .warmup_concurrency = 4,
    .warmup_timeout_ms = 60000,
    .primary_ttl_ms = 10000,
    .reconcile_ms = 1000,
    .backoff_base_ms = 500,
    .backoff_max_ms = 30000,
};

void fleet_warmpool_options_init(fleet_warmpool_options_t *o) {
  if (o != NULL)
    *o = wp_defaults;
}

/* The options with defaults filled in; FLEET_EINVAL when they do not
 * hold together. */
static int wp_options(const fleet_warmpool_options_t *in,
                      fleet_warmpool_options_t *o) {
  const fleet_warmpool_options_t *d = &wp_defaults;

  if (in == NULL) {
    *o = *d;
    return 0;
  }
  *o = *in;
  /* A field left 0 takes its default. */
#define WP_DEFAULT(field)                                                      \
  do {                                                                         \
    if (o->field == 0)                                                         \
      o->field = d->field;                                                     \
  } while (0)
  WP_DEFAULT(idle_ttl_ms);
  if (o->min_remaining_ms == 0)
    o->min_remaining_ms = o->idle_ttl_ms / 2 < d->min_remaining_ms
                              ? o->idle_ttl_ms / 2
                              : d->min_remaining_ms;
  WP_DEFAULT(warmup_concurrency);
  WP_DEFAULT(warmup_timeout_ms);
  WP_DEFAULT(primary_ttl_ms);
  WP_DEFAULT(reconcile_ms);
  WP_DEFAULT(backoff_base_ms);
  WP_DEFAULT(backoff_max_ms);
#undef WP_DEFAULT
  if (o->min_remaining_ms >= o->idle_ttl_ms || o->primary_ttl_ms < 100 ||
      (o->policy != FLEET_WARMPOOL_DIRECT_CREATE &&
       o->policy != FLEET_WARMPOOL_FAIL_FAST) ||
      (o->definition.len > 0 && o->definition.base == NULL))
    return FLEET_EINVAL;
  return 0;
}

/* The fingerprint: a hash of the definition and the options every node
 * must agree on. */
static void wp_fingerprint(fleet__warmpool_t *wp) {
  char head[160];
  int n =
      snprintf(head, sizeof(head),
               "fleet-warmpool/1 ttl=%" PRIu32 " minrem=%" PRIu32
               " warmup=%" PRIu32 " primary=%" PRIu32 " lease=%" PRIu32 " def=",
               wp->opts.idle_ttl_ms, wp->opts.min_remaining_ms,
               wp->opts.warmup_timeout_ms, wp->opts.primary_ttl_ms,
               wp->opts.borrow_lease_ms);
  size_t len = (size_t)n + wp->opts.definition.len;
  char *buf = malloc(len + 1);
  uint64_t h;

  if (buf == NULL) {
    h = fleet__key_hash(head, (size_t)n);
  } else {
    memcpy(buf, head, (size_t)n);
    if (wp->opts.definition.len > 0)
      memcpy(buf + n, wp->opts.definition.base, wp->opts.definition.len);
    h = fleet__key_hash(buf, len);
    free(buf);
  }
  snprintf(wp->fp, sizeof(wp->fp), "%016" PRIx64, h);
  wp->opts.definition.base = NULL;
  wp->opts.definition.len = 0;
}

static void wp_free(fleet__handle_t *h) {
  fleet__warmpool_t *wp = (fleet__warmpool_t *)h;

  fleet__args_free(&wp->args);
  fleet__key_free(&wp->tag);
  fleet__key_free(&wp->wake);
  free(wp->name);
  free(wp->owner);
  free(wp);
}

/* The close: stop reconciling, give the lease up, stop renewing borrow
 * leases (the base ends the wake-up subscription). Works still running
 * end when the user reports them. */
static void wp_close(fleet__handle_t *h) {
  fleet__warmpool_t *wp = (fleet__warmpool_t *)h;

  wp_set_state(wp, FLEET__WARMPOOL_CLOSING);
  if (wp->timer_open) {
    wp->timer_open = 0;
    fleet__handle_uv_close(h, (uv_handle_t *)&wp->timer);
  }
  if (wp->leader_open) {
    wp->leader_open = 0;
    fleet_leader_close(&wp->leader, NULL); /* held open: an adopted child */
  }
  wp_borrow_clear(wp);
  wp_own_stop(wp);
  fleet__reg_stop(&wp->reg);
  /* The owner id is free at once (the script checks the nonce). */
  if (wp->claimed && fleet__args_begin(&wp->args, 2, 0) == 0) {
    fleet__args_bytes(&wp->args, wp->owner, wp->owner_len);
    fleet__args_str(&wp->args, wp->nonce);
    fleet__warmpool_quiet(wp, &wp_leave_call);
  }
}

static const fleet__handle_vt_t wp_vt = {FLEET_HANDLE_WARMPOOL,
                                         sizeof(fleet__warmpool_req_t),
                                         wp_close, NULL, wp_free};

int fleet_warmpool_init(fleet_client_t *client, fleet_warmpool_t *pool,
                        const char *name, const char *owner,
                        const fleet_warmpool_options_t *options) {
  struct fleet__client_s *c;
  fleet__warmpool_t *wp = NULL;
  size_t name_len, owner_len;
  char *made = NULL;
  int err;

  if ((err = fleet__handle_init_begin(pool, client)) != 0)
    return err;
  if ((err = fleet__str_check(name, FLEET__NAME_MAX, &name_len)) != 0)
    return err;
  if (owner == NULL || owner[0] == '\0') {
    /* Left to fleet: a unique id. */
    if ((made = fleet__ident_make()) == NULL)
      return FLEET_ENOMEM;
    owner = made;
  }
  err = fleet__str_check(owner, FLEET_WARMPOOL_OWNER_MAX, &owner_len);
  if (err == 0 && strchr(owner, '/') != NULL)
    err = FLEET_EINVAL;
  if (err == 0 && (wp = calloc(1, sizeof(*wp))) == NULL)
    err = FLEET_ENOMEM;
  if (err == 0) {
    fleet__list_init(&wp->works);
    fleet__list_init(&wp->borrows);
  }
  if (err == 0 && (err = wp_options(options, &wp->opts)) != 0)
    free(wp);
  if (err != 0) {
    free(made);
    return err;
  }
  wp->owner_len = owner_len;
  snprintf(wp->lease_str, sizeof(wp->lease_str), "%" PRIu32,
           wp->opts.borrow_lease_ms);
  snprintf(wp->own_ttl_str, sizeof(wp->own_ttl_str), "%" PRIu32,
           wp->opts.primary_ttl_ms);
  snprintf(wp->minrem_str, sizeof(wp->minrem_str), "%" PRIu32,
           wp->opts.min_remaining_ms);
  snprintf(wp->claim_str, sizeof(wp->claim_str), "%" PRIu32,
           wp->opts.warmup_timeout_ms);
  fleet__ident_nonce(wp->nonce);
  wp_fingerprint(wp);
  err = fleet__handle_init(&wp->base, &wp_vt, client, (fleet_handle_t *)pool);
  if (err != 0) {
    free(wp);
    free(made);
    return err;
  }
  c = wp->base.client;
  wp->pub = pool;
  wp->base.error_cb = wp->opts.error_cb;
  wp->name = fleet__strdup(name);
  wp->owner = made != NULL ? made : fleet__strdup(owner);
  if (wp->name == NULL || wp->owner == NULL ||
      fleet__key_build(&wp->tag, c->prefix, c->prefix_len, name, name_len,
                       NULL) != 0 ||
      fleet__key_build(&wp->wake, c->prefix, c->prefix_len, name, name_len,
                       "wp:wake") != 0) {
    fleet__handle_abort(&wp->base);
    wp_free(&wp->base);
    pool->internal_ = NULL;
    return FLEET_ENOMEM;
  }
  wp->base.mblock.name = wp->name; /* metrics, log */
  wp->base.mblock.name_len = name_len;
  fleet__handle_timer_init(&wp->base, &wp->timer);
  wp->timer.data = wp;
  wp->timer_open = 1;
  return 0;
}

int fleet_warmpool_close(fleet_warmpool_t *pool, fleet_close_cb close_cb) {
  return fleet__handle_close_of(pool, FLEET_HANDLE_WARMPOOL, close_cb);
}
